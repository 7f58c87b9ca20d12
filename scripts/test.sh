#!/usr/bin/env bash
# The test command: install what is missing, build, run the whole ctest suite (bounded case counts).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
echo "[test] building"
"$root/scripts/build.sh"
echo "[test] running ctest"
cd "${POSENC_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j2 --timeout 900
