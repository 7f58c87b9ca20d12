#!/usr/bin/env bash
# Installs what posenc needs from Debian's archive, and nothing when everything is there already.
# Idempotent; needs root (or sudo) only when a package is missing.
set -euo pipefail

packages=(
  g++ cmake make pkg-config git             # toolchain (the compiler and cmake are usually there already)
  libopenblas-dev                           # cblas: rotations, Gram matrices (lib/)
  libboost-dev libmpfr-dev libgmp-dev       # Boost.Multiprecision with the MPFR backend (reference/)
  librapidcheck-dev libgtest-dev            # properties/ (RapidCheck + GoogleTest)
  libbenchmark-dev                          # benchmarks/
  nlohmann-json3-dev libcli11-dev           # JSON results and the command-line tool
  gnuplot-nox python3                       # reports/ (Markdown + SVG)
  clang libclang-rt-14-dev                  # fuzz/ (libFuzzer) — scripts/fuzz.sh
  gcovr                                     # line and branch coverage of the sanitizer suite — scripts/sanitize.sh
  python3-scipy python3-numpy               # benchmark history: Mann-Whitney U, bootstrap intervals (scripts/history.py)
  ccache                                    # compiler cache for developers' rebuilds (used when present)
  pybind11-dev python3-dev python3-pytest    # the Python module (python/: import posenc) and its tests
  libhwy-dev                                # Highway: the SIMD kernels, one source for every target, runtime dispatch (lib/src/core/)
)

# --aarch64: what scripts/aarch64.sh needs to cross-build and run under emulation (Debian's cross compiler, qemu-user,
# and the arm64 libraries through multiarch: dpkg --add-architecture arm64).
if [ "${1:-}" = --aarch64 ]; then
  packages=(
    g++-aarch64-linux-gnu qemu-user
    libopenblas-dev:arm64 libopenblas0-serial:arm64 libmpfr-dev:arm64 libgmp-dev:arm64 libgomp1:arm64
    librapidcheck-dev:arm64 libgtest-dev:arm64 libhwy-dev:arm64
  )
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "[deps] all ${#packages[@]} packages present"
  exit 0
fi

echo "[deps] installing: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "[deps] error: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
if [ "${1:-}" = --aarch64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
fi
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "[deps] done"
