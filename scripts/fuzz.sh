#!/usr/bin/env bash
# Fuzzing of every parser that reads user text or files (fuzz/*_fuzz.cpp, libFuzzer + ASan + UBSan, clang from
# Debian): position lists and numeric flags (positions_fuzz), the .npy reader (npy_fuzz), the JSON spec reader of
# --spec (spec_json_fuzz), the Hugging Face config.json reader of --config (hf_config_fuzz).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 30: the bounded run of .ci/run; the main job runs longer)
# The targets run at the same time (the machine's cores shared among them). POSENC_FUZZ_RUNS=N stops each after N executions.
# Each target starts from its committed corpus (fuzz/corpus/<target>/, read only) plus what earlier runs in this
# build directory found. A finding (crash, sanitizer report, broken invariant, timeout, out-of-memory) leaves its
# input in build-fuzz/findings/ and fails the script. With POSENC_RESULTS_DIR set, writes fuzz.json there:
# per target the executions, seconds, corpus size and findings.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
build=${POSENC_FUZZ_BUILD_DIR:-$root/build-fuzz}
"$root/scripts/install-deps.sh"
mkdir -p "$build/findings"
CXX=${POSENC_FUZZ_CXX:-clang++}
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -I"$root/cli" -I"$root/spec/include")
for d in "$root"/schemes/*/include/spec; do flags+=(-I"$d"); done   # the schemes' spec headers
declare -A sources=([positions_fuzz]="cli/args.cpp" [npy_fuzz]="cli/npy_reader.cpp"
                    [spec_json_fuzz]="schemes/sinusoidal/spec.cpp schemes/rope/spec.cpp"
                    [hf_config_fuzz]="spec/src/rope_config.cpp schemes/rope/spec.cpp")
targets=(positions_fuzz npy_fuzz spec_json_fuzz hf_config_fuzz)
for target in "${targets[@]}"; do
  echo "[fuzz] building $target"
  # shellcheck disable=SC2086
  "$CXX" "${flags[@]}" "$root/fuzz/$target.cpp" $(for s in ${sources[$target]}; do echo "$root/$s"; done) \
    -o "$build/$target"
done
# The targets run side by side (one core each); with POSENC_FUZZ_RUNS set, each stops after that many
# executions or SECONDS, whichever comes first.
runs_flag=()
[[ -n ${POSENC_FUZZ_RUNS:-} ]] && runs_flag=(-runs="$POSENC_FUZZ_RUNS")
declare -A pids
for target in "${targets[@]}"; do
  corpus="$build/corpus-${target%_fuzz}"
  mkdir -p "$corpus"
  echo "[fuzz] running $target for at most ${seconds}s${POSENC_FUZZ_RUNS:+ or $POSENC_FUZZ_RUNS executions}"
  "$build/$target" "$corpus" "$root/fuzz/corpus/${target%_fuzz}" -max_total_time="$seconds" "${runs_flag[@]}" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/findings/$target-" \
    >"$build/$target.log" 2>&1 &
  pids[$target]=$!
done
results=()
status=0
for target in "${targets[@]}"; do
  t0=$(date +%s)
  wait "${pids[$target]}"
  rc=$?
  corpus="$build/corpus-${target%_fuzz}"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/$target.log" | grep -o '[0-9]*$' || echo 0)
  # libFuzzer prints "Done N runs in T second(s)" when it ends by itself; a run stopped with SIGUSR1 ("exiting as
  # requested") prints only its stats: then T = executions / average executions per second.
  took=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$build/$target.log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' || true)
  if [[ -z $took ]]; then
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$build/$target.log" | grep -o '[0-9]*$' || true)
    [[ -n $rate && $rate -gt 0 && -n $execs ]] && took=$(( execs / rate ))
  fi
  took=${took:-$seconds}
  found=$(find "$build/findings" -name "$target-*" | wc -l)
  units=$(find "$corpus" -type f | wc -l)
  echo "[fuzz] $target: $execs executions in ${took:-$seconds}s, corpus $units inputs, exit status $rc, findings $found"
  if [[ $rc -ne 0 || $found -ne 0 ]]; then
    status=1
    tail -40 "$build/$target.log"
  fi
  results+=("{\"target\": \"$target\", \"executions\": ${execs:-0}, \"seconds\": ${took:-$seconds}, \"max_seconds\": $seconds, \"max_executions\": ${POSENC_FUZZ_RUNS:-null}, \"corpus_inputs\": $units, \"exit_status\": $rc, \"findings\": $found}")
done
if [[ -n ${POSENC_RESULTS_DIR:-} ]]; then
  mkdir -p "$POSENC_RESULTS_DIR"
  { echo "{\"schema\": \"posenc-fuzz-1\", \"compiler\": \"$("$CXX" --version | head -1)\", \"targets\": ["
    (IFS=,; echo "${results[*]}")
    echo "]}"; } >"$POSENC_RESULTS_DIR/fuzz.json"
fi
exit $status
