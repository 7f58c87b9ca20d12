#!/usr/bin/env bash
# The main job: install what is missing, build, run the proofs at report-level case counts, the held-out vectors
# and long-context RoPE errors, the accuracy sweep and the headline benchmarks with their in-run baselines, record
# the run in the history (out/history.sqlite) and write reports/latest/. About 30 minutes on a 2-core machine,
# build included.
#
#   scripts/main.sh [--full | --long]
#
#   --full   also the reliability suite (fault scenarios, every bad input of every option, the whole test suite
#            under ASan+UBSan with coverage, TSan over the worker pool) and a fuzzing campaign (10^7 executions
#            per parser): about 1 h 45 min more
#   --long   --full with a longer campaign: 10x the property cases, a denser sweep, every benchmark with 10
#            repetitions, up to an hour / 10^8 executions per parser
#
# A run without --full shows on reliability.md the figures of the last --full run whose results were committed
# (reports/latest/data/reliability/), naming that run and its commit. Results (JSON) go to out/results/; the
# report generator turns them into reports/latest/; reports/latest/data/ keeps the compact results of the run
# (what `scripts/history.py import-git` reads). Exit status: 0 if every proof passed and every stage ran; 1
# otherwise (the report is written either way, and says what failed).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${POSENC_BUILD_DIR:-$root/build}
results=$root/out/results
mode=default
for arg in "$@"; do
  case "$arg" in
    --full) mode=full ;;
    --long) mode=long ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "main.sh: unknown argument '$arg' (accepted: --full, --long, --help)" >&2; exit 2 ;;
  esac
done

# Case counts and benchmark sets: why these suffice is in scripts/mutation/README.md (the planted bugs the
# properties catch at 300, 1000 and 3000 cases).
case $mode in
  long) cases=30000; sweep_flags=(--long); bench_set=all; bench_reps=10; bench_min_time=0.5; fuzz_seconds=3600
        fuzz_runs=100000000 ;;
  *)    cases=1000; sweep_flags=(); bench_set=main; bench_reps=5; bench_min_time=0.1; fuzz_seconds=1800
        fuzz_runs=10000000 ;;
esac
reliability=0; [ "$mode" != default ] && reliability=1
shards=$(nproc); [ "$shards" -gt 4 ] && shards=4
py_history=/usr/bin/python3   # Debian's, with numpy/scipy (the history's statistics); the rest needs only python3

started=$(date +%s)
stage_names=(); stage_starts=(); parts=()
n_stages=$((7 + 2 * reliability))
stage() {  # the last call ("done") is not numbered
  local name="$*"
  [ ${#stage_names[@]} -lt $n_stages ] && name="$(( ${#stage_names[@]} + 1 ))/$n_stages $name"
  printf '\n[main %4ds] %s\n' $(( $(date +%s) - started )) "$name"
  stage_names+=("$name"); stage_starts+=("$(date +%s)")
}
failed=()
# Every program of this run gets the kernels posenc selects: an OPENBLAS_CORETYPE inherited from the
# environment (some machines force an older core) is recorded in run.json and then dropped.
inherited_coretype=${OPENBLAS_CORETYPE-}
unset OPENBLAS_CORETYPE

# progress LABEL TOTAL REGEX UNIT PID LOG...: shows progress of the stage's process PID while it runs (a line
# redrawn in place on a terminal, a plain line per tenth in a log), then waits for PID and returns its status.
progress() {
  local label=$1 total=$2 regex=$3 unit=$4 pid=$5 expect=()
  shift 5
  [ -n "${EXPECT:-}" ] && expect=(--expect "$EXPECT")
  python3 "$root/scripts/progress.py" --label "$label" --total "$total" --pattern "$regex" --unit "$unit" \
    "${expect[@]}" --watch "$pid" "$@" &
  local mon=$! rc=0
  wait "$pid" || rc=$?
  wait "$mon" 2>/dev/null
  return $rc
}

stage "dependencies"
"$root/scripts/install-deps.sh" || exit 1

stage "build (Release, $build)"
"$root/scripts/build.sh" || exit 1

rm -rf "$results"; mkdir -p "$results"
export POSENC_RESULTS_DIR=$results
export POSENC_COMMIT=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if ! git -C "$root" diff --quiet HEAD 2>/dev/null; then POSENC_COMMIT="$POSENC_COMMIT+dirty"; fi
# One id for everything this run writes: each program records it in its meta, so the report can tell
# files of this run from files of another one.
export POSENC_RUN_ID="$POSENC_COMMIT@$(date -u -d "@$started" +%Y-%m-%dT%H:%M:%SZ)"

stage "proofs: oracle self-tests and every scheme's claims (RapidCheck max_success=$cases, $shards shards side by side)"
parts+=("proofs")
# run_sharded NAME EXE: the program's tests in $shards GoogleTest shards at once (one thread each), each shard's
# ledger in its own directory, merged into proofs-NAME.json (scripts/merge_proofs.py) when the program writes one.
run_sharded() {
  local name=$1 exe=$2 pids=() logs=() total i rc=0
  total=$("$exe" --gtest_list_tests | grep -c '^  ')
  for ((i = 0; i < shards; i++)); do
    mkdir -p "$results/shard-$name-$i"
    logs+=("$results/log-$name-$i.txt")
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i POSENC_RESULTS_DIR="$results/shard-$name-$i" \
      RC_PARAMS="max_success=$cases verbose_progress=0" "$exe" --threads=1 \
      --gtest_output="json:$results/shard-$name-$i/gtest.json" > "${logs[i]}" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < shards; i++)); do
    if [ $i -eq 0 ]; then
      progress "$name" "$total" '^\[ +(OK|FAILED) +\] ' tests "${pids[0]}" "${logs[@]}" || rc=1
    else
      wait "${pids[i]}" || rc=1
    fi
  done
  local ledgers=("$results"/shard-"$name"-*/proofs-*.json)
  if [ -e "${ledgers[0]}" ]; then
    python3 "$root/scripts/merge_proofs.py" "$results/proofs-$name.json" "${ledgers[@]}" || rc=1
  fi
  if [ $rc -ne 0 ]; then
    failed+=("proofs:$name")
    echo "    FAILED (see $results/log-$name-*.txt):"
    grep -h '^\[  FAILED  \]' "${logs[@]}" | sort -u | head -n 20 | sed 's/^/    | /'
  else
    echo "    $name: $total tests passed"
  fi
}
# --threads= is the properties program's option; the oracle self-tests run single-threaded anyway.
run_sharded properties "$build/properties/posenc_properties"
run_sharded oracle "$build/reference/posenc_oracle_tests"

stage "held-out vectors of the real implementations"
parts+=("held-out")
# Held-out vectors: numbers the real implementations computed (properties/heldout/), held to posenc through its
# CLI; heldout.json feeds the schemes' claims pages.
if python3 "$root/properties/heldout/heldout_test.py" "$build/cli/posenc" > "$results/log-heldout.txt" 2>&1; then
  tail -n 1 "$results/log-heldout.txt" | sed 's/^/    /'
else
  failed+=("proofs:heldout"); echo "    held-out FAILED (see $results/log-heldout.txt)"
  grep '^FAIL' "$results/log-heldout.txt" | head -n 5 | sed 's/^/    | /'
fi
"$build/cli/posenc" list --format json > "$results/schemes.json" || failed+=("schemes.json")

stage "accuracy sweep (fast path vs oracle over positions 0..2^40, every preset, regime, dtype)"
parts+=("sweep")
# One scheme per process, $shards at a time (one thread each; the slowest first, so the two cores finish
# together), each into accuracy-<scheme>.json, which the report merges.
sweep=$build/properties/posenc_accuracy_sweep
mapfile -t schemes < <("$build/cli/posenc" list --format json | python3 -c \
  'import json,sys; print("\n".join(s["name"] for s in json.load(sys.stdin)["schemes"]))')
heavy_first=(xlnet sinusoidal transformer_xl learned tener)  # 113, 101, 42, 29, 14 s alone; the others < 6 s
ordered=($(printf '%s\n' "${heavy_first[@]}" "${schemes[@]}" | awk '!seen[$0]++' | grep -xF -f <(printf '%s\n' "${schemes[@]}")))
printf '%s\n' "${ordered[@]}" | SWEEP="$sweep" R="$results" OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
  xargs -P "$shards" -I{} sh -c '"$SWEEP" "$@" --scheme {} --out "$R/accuracy-{}.json" > "$R/log-accuracy-{}.txt" 2>&1' \
  sh "${sweep_flags[@]}" &
progress sweep "${#ordered[@]}" '^\[sweep\] ' schemes $! $(printf "$results/log-accuracy-%s.txt " "${ordered[@]}") \
  || failed+=("accuracy-sweep")
grep -hE 'budget|FAIL|exceed' "$results"/log-accuracy-*.txt | head -n 20 | sed 's/^/    /'

bench_filter_of() {  # the set's Google Benchmark filter (benchmarks/sets/NAME.txt; "all": every benchmark)
  python3 "$root/scripts/bench_set.py" "$1"
}
stage "benchmarks: set '$bench_set' (benchmarks/sets/), repetitions $bench_reps, min time ${bench_min_time}s, interleaved"
parts+=("benchmarks:$bench_set")
# Primary run with the kernels posenc selects (OPENBLAS_CORETYPE unset: OpenBLAS detects the CPU, and
# select_blas_kernels re-executes with a better core if the detected one is a fallback). Repetitions in random
# interleaved order: a kernel and its in-run baselines (RMW, stream store) then sample the same stretches of the
# machine's state instead of minutes apart (RoPE apply vs RMW moved by up to 20 % that way).
bench=$build/benchmarks/posenc_bench
filter=$(bench_filter_of "$bench_set")
bench_flags=(--benchmark_repetitions=$bench_reps --benchmark_min_time=$bench_min_time
             --benchmark_enable_random_interleaving=true --benchmark_filter="$filter"
             --benchmark_report_aggregates_only=false --benchmark_format=console)
n_bench=$("$bench" --benchmark_list_tests --benchmark_filter="$filter" | wc -l)
# Interleaved, a benchmark's results appear when its last repetition has run, mostly near the end: the estimate
# is the time this set took last time on this machine (out/bench-seconds-<set>.txt), when there is one.
last=$root/out/bench-seconds-$bench_set-$bench_reps.txt
t_bench=$(date +%s)
"$bench" "${bench_flags[@]}" --benchmark_out="$results/bench-auto.json" --benchmark_out_format=json \
  > "$results/log-bench-auto.txt" 2>&1 &
EXPECT=$(cat "$last" 2>/dev/null) progress benchmarks "$n_bench" '^[a-z0-9_]+/\S+_median +[0-9.]+ ' \
  "benchmarks reported" $! "$results/log-bench-auto.txt" && echo $(( $(date +%s) - t_bench )) > "$last" \
  || failed+=("bench:auto")
tail -n 3 "$results/log-bench-auto.txt" | sed 's/^/    | /'
# ... and the set's BLAS families once more under the AVX2 fallback core (what Debian's OpenBLAS 0.3.21 picks on
# CPUs it does not know, or what an environment forces), so the report can state the cost of a fallback.
OPENBLAS_CORETYPE=Haswell "$bench" "${bench_flags[@]}" \
  --benchmark_filter="$(bench_filter_of blas_fallback)" \
  --benchmark_out="$results/bench-fallback-haswell.json" --benchmark_out_format=json \
  > "$results/log-bench-fallback.txt" 2>&1 || failed+=("bench:fallback")

if [ $reliability -eq 1 ]; then
  stage "reliability: fault scenarios, bad inputs, sanitizers (ASan+UBSan with coverage, TSan)"
  parts+=("reliability")
  # faults.jsonl: every fault scenario of cli/tests/fault_test.sh and its outcome; bad_inputs.json: every option of
  # every command given values it must refuse; sanitize.json + coverage.json from scripts/sanitize.sh.
  rm -f "$results/faults.jsonl"
  POSENC_TEST_RECORD="$results/faults.jsonl" bash "$root/cli/tests/fault_test.sh" "$build/cli/posenc" \
    "$build/cli/libposenc_fault_shim.so" > "$results/log-faults.txt" 2>&1 || failed+=("faults")
  tail -n 1 "$results/log-faults.txt" | sed 's/^/    faults: /'
  python3 "$root/cli/tests/bad_inputs.py" "$build/cli/posenc" --json "$results/bad_inputs.json" \
    > "$results/log-bad-inputs.txt" 2>&1 || failed+=("bad-inputs")
  tail -n 1 "$results/log-bad-inputs.txt" | sed 's/^/    bad inputs: /'
  POSENC_COVERAGE=1 "$root/scripts/sanitize.sh" > "$results/log-sanitize.txt" 2>&1 || failed+=("sanitizers")
  grep -E '^\[sanitize\] (asan|tsan)|lines:|branches:' "$results/log-sanitize.txt" | sed 's/^/    /'

  stage "fuzzing: the parsers of user text and files (scripts/fuzz.sh: up to $fuzz_runs executions or $fuzz_seconds s per target)"
  parts+=("fuzzing")
  # fuzz.json (executions, corpus, findings per target) goes to $results; a finding fails the stage.
  POSENC_FUZZ_RUNS=$fuzz_runs "$root/scripts/fuzz.sh" "$fuzz_seconds" > "$results/log-fuzz.txt" 2>&1 || failed+=("fuzz")
  grep '^\[fuzz\] [a-z_]*:' "$results/log-fuzz.txt" | sed 's/^/    /'
fi

stage "report -> reports/latest/, history -> out/history.sqlite"
# run.json: the run itself (id, mode, parts, machine, stages) — the report's methods block is written once from it.
write_run_json() {
  local names starts
  names=$(printf '%s\n' "${stage_names[@]}"); starts=$(printf '%s\n' "${stage_starts[@]}")
  RUN_STAGE_NAMES=$names RUN_STAGE_STARTS=$starts RUN_FAILED="${failed[*]}" RUN_MODE=$mode RUN_CASES=$cases \
  RUN_BENCH_REPS=$bench_reps RUN_BENCH_MIN_TIME=$bench_min_time RUN_SET=$bench_set RUN_FILTER=${filter:-} \
  RUN_PARTS="${parts[*]}" \
  RUN_STARTED=$started RUN_CORETYPE=$inherited_coretype python3 "$root/scripts/run_json.py" "$results/run.json"
}
write_run_json
# A run without the reliability suite shows the last --full run's figures, from the committed data, named as such.
data=$root/reports/latest/data
if [ $reliability -eq 0 ] && [ -d "$data/reliability" ]; then
  cp -r "$data/reliability" "$results/earlier-reliability"
fi
history_db=${POSENC_HISTORY_DB:-$root/out/history.sqlite}
history_args=()
if "$py_history" -c 'import numpy, scipy' 2>/dev/null; then
  "$py_history" "$root/scripts/history.py" import "$results" --mode "$mode" --db "$history_db" \
    | sed 's/^/    /' || failed+=("history")
  history_args=(--history "$history_db")
else
  echo "    history: skipped ($py_history has no numpy/scipy; scripts/install-deps.sh installs them)"
fi
# The figures' data (figures-<scheme>.json, posenc_figures): the report draws it and computes nothing itself.
"$build/reports/figures/posenc_figures" --out "$results" > "$results/log-figures.txt" 2>&1 || failed+=("figures")
"$py_history" "$root/reports/generate.py" --results "$results" --out "$root/reports/latest" \
  --repo "$root" "${history_args[@]}" || failed+=("report")
# The compact results of this run, committed with the report (what import-git reads to seed a history).
python3 "$root/scripts/keep_results.py" "$results" "$data" $([ $reliability -eq 1 ] && echo --reliability) \
  || failed+=("report-data")

stage "done in $(( $(date +%s) - started )) s"
write_run_json
cp "$results/run.json" "$data/run.json" 2>/dev/null
if [ ${#failed[@]} -gt 0 ]; then
  echo "[main] FAILED stages: ${failed[*]}"
  exit 1
fi
echo "[main] all stages passed; report: reports/latest/index.md"
