#!/usr/bin/env bash
# posenc on AArch64, under emulation: cross-builds the library, the oracles, the property suite and the CLI with
# Debian's g++-aarch64-linux-gnu and arm64 libraries (multiarch; scripts/install-deps.sh --aarch64), then runs the
# oracle and property entries of ctest under qemu-aarch64 once per vector length, so that every SIMD target Highway
# compiles for AArch64 runs: qemu's CPU "max" offers SVE2, SVE and NEON; 512-bit vectors give the sve2 target, 128-bit
# vectors sve2-128 and 256-bit ones sve256 (Highway's specialised targets). Each run holds the best target to the
# oracle (the claims) and every other target to the scalar loops' bytes (SIN-SIMD-1, ROPE-SIMD-1); the first also
# runs the claims on sve, neon and scalar by themselves (properties.Simd.*), the others SIN-SIMD-1 and ROPE-SIMD-1.
#
# Correctness only: timings under emulation mean nothing. Not run here: the CLI's shell tests and the report's
# Python tests (they start the programs directly, and this machine has no binfmt_misc to hand them to qemu).
#
# Usage: scripts/aarch64.sh [extra ctest arguments, e.g. -R Rope]
# POSENC_AARCH64_BUILD_DIR (default build-aarch64/), POSENC_WERROR=1 as for the other commands,
# POSENC_AARCH64_VLS: the SVE vector lengths in bytes to run (default "64 16 32").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${POSENC_AARCH64_BUILD_DIR:-$root/build-aarch64}
"$root/scripts/install-deps.sh" --aarch64

echo "[aarch64] configuring and building in $build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DPOSENC_NATIVE=OFF -DPOSENC_BUILD_TESTS=ON -DPOSENC_BUILD_BENCHMARKS=OFF \
  -DPOSENC_BUILD_CLI=ON -DPOSENC_BUILD_PYTHON=OFF -DPOSENC_WERROR="$([ "${POSENC_WERROR:-0}" = 1 ] && echo ON || echo OFF)" \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" --target posenc_test_programs -j"$(nproc)"

cd "$build"
# One thread: qemu-user 7.2 (Debian 12) hangs in the clone() of a guest's second thread on this machine's kernel
# (std::thread, OpenMP and OpenBLAS's thread server alike; seen with a five-line program). So the entries run in two
# ctest processes, each pinned to one processor (taskset): the guest then sees one processor, and posenc's pool and
# OpenMP start no thread (their counts are capped at the processors); OpenBLAS's serial build is loaded instead of
# its thread server (QEMU_SET_ENV reaches the guest only). The tests that start threads themselves are left out;
# they and the threading claims run natively on x86-64.
export OMP_WAIT_POLICY=passive
export QEMU_SET_ENV=LD_LIBRARY_PATH=/usr/lib/aarch64-linux-gnu/openblas-serial
threaded='Threads\.|Concurrent|ThreadSafe|SeveralThreads|ThreadsAgree|MainJobPrograms|AccuracySweepSmoke'
# ctest on one processor, every second entry from `half` on (its own log; the other half runs beside it).
run_half() {
  local half=$1
  shift
  local rc=0
  taskset -c "$half" ctest --output-on-failure --timeout 1200 -I "$((half + 1)),,2" "$@" > "$build/ctest-half$half.log" 2>&1 \
    || rc=$?
  grep -E '^ *[0-9]+/[0-9]+ Test|tests passed|tests failed|Failed|Timeout' "$build/ctest-half$half.log" | tail -n 4
  return $rc
}
# The GoogleTest programs list their tests once here (under qemu), not in both ctest processes at once (each would
# rewrite the same lists).
QEMU_CPU=max ctest -N > /dev/null
status=0
first=1
for vl in ${POSENC_AARCH64_VLS:-64 16 32}; do
  export QEMU_CPU="max,sve-default-vector-length=$vl"
  echo "[aarch64] QEMU_CPU=$QEMU_CPU:"
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/cli/posenc" info | sed -n '/^SIMD/,/targets/p' || status=1
  labels='^(properties|oracle):'
  extra=()
  # The whole suite once (with the per-target entries properties.Simd.*); at the other vector lengths, which change
  # only the best target, the claims that hold every target to the scalar loops' bytes (SIN-SIMD-1, ROPE-SIMD-1).
  if [ $first = 0 ]; then extra=(-R 'EverySimdTarget'); fi
  args=(-L "$labels" "${extra[@]}" -E "$threaded" "$@")
  run_half 0 "${args[@]}" &
  pid0=$!
  run_half 1 "${args[@]}" || status=1
  wait $pid0 || status=1
  first=0
done
echo "[aarch64] $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
