#!/usr/bin/env bash
# The test command: install what is missing, build, run the ctest suite (bounded case counts; the long sweeps
# labelled "full" are CI's and the main job's --full).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
echo "[test] building"
"$root/scripts/build.sh"
echo "[test] running ctest (all but the label \"full\": ctest -L full runs those, as CI does)"
cd "${POSENC_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j"$(nproc)" --timeout 900 -LE full
