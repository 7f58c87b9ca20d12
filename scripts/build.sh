#!/usr/bin/env bash
# Configures and builds posenc into build/ (Release). Used by test.sh and main.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${POSENC_BUILD_DIR:-$root/build}
mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DPOSENC_BUILD_TESTS=ON -DPOSENC_BUILD_BENCHMARKS=ON -DPOSENC_BUILD_CLI=ON "$@" > "$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)"
