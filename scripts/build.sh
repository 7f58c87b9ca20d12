#!/usr/bin/env bash
# Configures and builds posenc into build/ (Release). Used by test.sh and main.sh.
# Ninja when installed (it schedules the two cores better than make and logs each object's time in
# build/.ninja_log: scripts/build_times.py sums it per part); a build directory keeps the generator it was
# configured with. POSENC_WERROR=1 (CI) makes warnings errors. Extra arguments go to cmake's configure step.
# POSENC_BUILD_TARGET names what to build (default: everything); the test command builds posenc_test_programs, what
# ctest's entries outside the labels "full" and "mainjob" run (not the benchmark program nor the accuracy sweep).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${POSENC_BUILD_DIR:-$root/build}
mkdir -p "$build"
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DPOSENC_BUILD_TESTS=ON -DPOSENC_BUILD_BENCHMARKS=ON -DPOSENC_BUILD_CLI=ON \
  -DPOSENC_WERROR="$([ "${POSENC_WERROR:-0}" = 1 ] && echo ON || echo OFF)" "$@" > "$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
t0=$(date +%s)
set +e
cmake --build "$build" --target "${POSENC_BUILD_TARGET:-all}" -j"$(nproc)" 2>&1 | tee "$build/build.log"
rc=${PIPESTATUS[0]}
set -e
warnings=$(grep -c 'warning:' "$build/build.log" || true)
echo "[build] $(( $(date +%s) - t0 )) s, exit status $rc, $warnings compiler warning(s)"
exit "$rc"
