#!/usr/bin/env bash
# posenc on AArch64, under emulation: cross-builds the library, the oracles, the property suite and the CLI with
# Debian's g++-aarch64-linux-gnu and arm64 libraries (multiarch; scripts/install-deps.sh --aarch64), then runs the
# oracle and property entries of ctest under qemu-aarch64 once per vector length, so that every SIMD target Highway
# compiles for AArch64 runs: qemu's CPU "max" offers SVE2, SVE and NEON; 512-bit vectors give the sve2 target, 128-bit
# vectors sve2-128 and 256-bit ones sve256 (Highway's specialised targets). Each run holds the best target to the
# oracle (the claims) and every other target to the scalar loops' bytes (SIN-SIMD-1, ROPE-SIMD-1); the first also
# runs the claims on sve, neon and scalar by themselves (properties.Simd.*).
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
  -DPOSENC_BUILD_CLI=ON -DPOSENC_WERROR="$([ "${POSENC_WERROR:-0}" = 1 ] && echo ON || echo OFF)" \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" --target posenc_test_programs -j"$(nproc)"

cd "$build"
# One thread: qemu-user 7.2 (Debian 12) hangs in the clone() of a guest's second thread on this machine's kernel
# (std::thread, OpenMP and OpenBLAS's thread server alike; seen with a five-line program), so the emulated run is
# single-threaded (OMP_NUM_THREADS=1, OpenBLAS's serial build) and leaves out the tests that start threads; the
# threading claims run natively on x86-64. QEMU_SET_ENV reaches the guest only (qemu passes its environment on).
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
export QEMU_SET_ENV=LD_LIBRARY_PATH=/usr/lib/aarch64-linux-gnu/openblas-serial
threaded='Threads\.|Concurrent|ThreadSafe|SeveralThreads|MainJobPrograms|AccuracySweepSmoke'

status=0
first=1
for vl in ${POSENC_AARCH64_VLS:-64 16 32}; do
  export QEMU_CPU="max,sve-default-vector-length=$vl"
  echo "[aarch64] QEMU_CPU=$QEMU_CPU:"
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/cli/posenc" info | sed -n '/^SIMD/,/targets/p' || status=1
  labels='^(properties|oracle):'
  extra=()
  if [ $first = 0 ]; then extra=(-LE full); fi  # the per-target entries once; later runs change only the best target
  ctest --output-on-failure -j"$(nproc)" --timeout 1200 -L "$labels" "${extra[@]}" -E "$threaded" "$@" \
    || status=1
  first=0
done
echo "[aarch64] $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
