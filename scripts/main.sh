#!/usr/bin/env bash
# The main job: install what is missing, build, run the proofs at report-level case counts, the accuracy
# sweep, the long-context RoPE cache errors, the benchmarks, the reliability suite (fault scenarios, a
# bad-input sweep of every option, the sanitizer suite with coverage) and a fuzzing campaign (10^7
# executions per parser), and write reports/latest/. About 2 hours on a 2-core machine with nothing else
# running (proofs ~20 min, benchmarks ~25, reliability ~50, fuzzing ~25); --long runs a longer campaign (30x the
# property cases, a denser accuracy sweep, more benchmark repetitions, up to an hour / 10^8 executions per
# parser).
#
# Results (JSON) go to out/results/; the report generator turns them into reports/latest/.
# Exit status: 0 if every proof passed and every stage ran; 1 otherwise (the report is written either way,
# and says what failed).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${POSENC_BUILD_DIR:-$root/build}
results=$root/out/results
long=0
for arg in "$@"; do
  case "$arg" in
    --long) long=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "main.sh: unknown argument '$arg' (accepted: --long, --help)" >&2; exit 2 ;;
  esac
done

if [ $long -eq 1 ]; then
  cases=100000; sweep_flags=(--long); bench_reps=10; bench_min_time=0.5; fuzz_seconds=3600; fuzz_runs=100000000
else
  # Fuzzing: 10^7 executions per target (the issue's target), with 30 minutes as a cap.
  # Property cases: 3000 per property (10x the ctest suite's 300). 15000 took 74 minutes for the 171 property tests
  # at c983597 (T5's fused scores alone 12) and grew with every scheme: the main job must fit in a working session.
  cases=3000; sweep_flags=(); bench_reps=5; bench_min_time=0.3; fuzz_seconds=1800; fuzz_runs=10000000
fi

started=$(date +%s)
stage_names=(); stage_starts=()
stage() {
  printf '\n[main %4ds] %s\n' $(( $(date +%s) - started )) "$*"
  stage_names+=("$*"); stage_starts+=("$(date +%s)")
}
failed=()
# Every program of this run gets the kernels posenc selects: an OPENBLAS_CORETYPE inherited from the
# environment (some machines force an older core) is recorded in run.json and then dropped.
inherited_coretype=${OPENBLAS_CORETYPE-}
unset OPENBLAS_CORETYPE

stage "1/9 dependencies"
"$root/scripts/install-deps.sh" || exit 1

stage "2/9 build (Release, $build)"
"$root/scripts/build.sh" || exit 1

rm -rf "$results"; mkdir -p "$results"
export POSENC_RESULTS_DIR=$results
export POSENC_COMMIT=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if ! git -C "$root" diff --quiet HEAD 2>/dev/null; then POSENC_COMMIT="$POSENC_COMMIT+dirty"; fi
# One id for everything this run writes: each program records it in its meta, so the report can tell
# files of this run from files of another one.
export POSENC_RUN_ID="$POSENC_COMMIT@$(date -u -d "@$started" +%Y-%m-%dT%H:%M:%SZ)"

stage "3/9 proofs: oracle self-tests, accuracy metric, sinusoidal claims (RapidCheck max_success=$cases)"
run_proof() {  # name, executable, extra args...
  local name=$1 exe=$2; shift 2
  echo "  - $name"
  if ! RC_PARAMS="max_success=$cases verbose_progress=0" "$exe" --gtest_brief=1 \
        --gtest_output="json:$results/gtest-$name.json" "$@" > "$results/log-$name.txt" 2>&1; then
    failed+=("proofs:$name")
    echo "    FAILED (see $results/log-$name.txt); tail:"; tail -n 20 "$results/log-$name.txt" | sed 's/^/    | /'
  else
    grep -E '^\[  (PASSED|FAILED)' "$results/log-$name.txt" | sed 's/^/    /'
  fi
}
# One program per part holds every scheme's tests (ctest runs them one by one, labelled <part>:<scheme>).
run_proof oracle "$build/reference/posenc_oracle_tests"
run_proof properties "$build/properties/posenc_properties"
# Held-out vectors: numbers the real implementations computed (properties/heldout/), held to posenc through its
# CLI; heldout.json feeds the schemes' claims pages.
echo "  - held-out vectors (properties/heldout/heldout_test.py)"
if python3 "$root/properties/heldout/heldout_test.py" "$build/cli/posenc" > "$results/log-heldout.txt" 2>&1; then
  tail -n 1 "$results/log-heldout.txt" | sed 's/^/    /'
else
  failed+=("proofs:heldout"); echo "    FAILED (see $results/log-heldout.txt)"; grep '^FAIL' "$results/log-heldout.txt" | head -n 5 | sed 's/^/    | /'
fi
"$build/cli/posenc" list --format json > "$results/schemes.json" || failed+=("schemes.json")

stage "4/9 accuracy sweep (fast path vs oracle over positions 0..2^40, every preset, regime, dtype)"
if ! "$build/properties/posenc_accuracy_sweep" "${sweep_flags[@]}" --out "$results/accuracy.json" 2>&1 \
      | tee "$results/log-accuracy.txt" | grep -E '^\[|budget|FAIL|exceed' ; then :; fi
[ -s "$results/accuracy.json" ] || failed+=("accuracy-sweep")

stage "5/9 long-context RoPE: HF float32 vs exact cos/sin at every position 0..131071 (Llama 3.1, Qwen2.5 YaRN)"
# rope-long-context.json: max over pairs of |hf - exact| per position bucket, scaled and unscaled; the RoPE
# report's figure (d). ~15 s.
if python3 "$root/scripts/rope_long_context.py" "$build/cli/posenc" --out "$results/rope-long-context.json" \
     > "$results/log-rope-long-context.txt" 2>&1; then
  sed 's/^/    /' "$results/log-rope-long-context.txt"
else
  failed+=("rope-long-context"); echo "    FAILED (see $results/log-rope-long-context.txt)"
  tail -n 5 "$results/log-rope-long-context.txt" | sed 's/^/    | /'
fi

stage "6/9 benchmarks (repetitions $bench_reps, min time ${bench_min_time}s)"
# Primary run with the kernels posenc selects (OPENBLAS_CORETYPE unset: OpenBLAS detects the CPU, and
# select_blas_kernels re-executes with a better core if the detected one is a fallback) ...
bench=$build/benchmarks/posenc_bench
# Repetitions in random interleaved order: a kernel and its in-run baselines (RMW, stream store) then sample the
# same stretches of the machine's state instead of minutes apart (RoPE apply vs RMW moved by up to 20 % that way).
bench_flags=(--benchmark_repetitions=$bench_reps --benchmark_min_time=$bench_min_time
             --benchmark_enable_random_interleaving=true
             --benchmark_report_aggregates_only=false --benchmark_format=console)
echo "  - all families, auto-selected BLAS kernels"
"$bench" "${bench_flags[@]}" --benchmark_out="$results/bench-auto.json" \
  --benchmark_out_format=json > "$results/log-bench-auto.txt" 2>&1 || failed+=("bench:auto")
tail -n 3 "$results/log-bench-auto.txt" | sed 's/^/    | /'
# ... and the BLAS families once more under the AVX2 fallback core (what Debian's OpenBLAS 0.3.21 picks on
# CPUs it does not know, or what an environment forces), so the report can state the cost of a fallback.
echo "  - BLAS families under the Haswell (AVX2) fallback core"
OPENBLAS_CORETYPE=Haswell "$bench" "${bench_flags[@]}" --benchmark_filter='^[a-z0-9_]+/(sgemm|gram|shift/blas)' \
  --benchmark_out="$results/bench-fallback-haswell.json" --benchmark_out_format=json \
  > "$results/log-bench-fallback.txt" 2>&1 || failed+=("bench:fallback")

stage "7/9 reliability: fault scenarios, bad inputs, sanitizers (ASan+UBSan with coverage, TSan)"
# faults.json: every fault scenario of cli/tests/fault_test.sh and its outcome; bad_inputs.json: every option of
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

stage "8/9 fuzzing: the parsers of user text and files (scripts/fuzz.sh: up to $fuzz_runs executions or $fuzz_seconds s per target)"
# fuzz.json (executions, corpus, findings per target) goes to $results; a finding fails the stage.
POSENC_FUZZ_RUNS=$fuzz_runs "$root/scripts/fuzz.sh" "$fuzz_seconds" > "$results/log-fuzz.txt" 2>&1 || failed+=("fuzz")
grep '^\[fuzz\] [a-z_]*:' "$results/log-fuzz.txt" | sed 's/^/    /'

stage "9/9 report -> reports/latest/"
# run.json: the run itself (id, mode, machine, stages) — the report's methods block is written once from it.
write_run_json() {
  local names starts
  names=$(printf '%s\n' "${stage_names[@]}"); starts=$(printf '%s\n' "${stage_starts[@]}")
  RUN_STAGE_NAMES=$names RUN_STAGE_STARTS=$starts RUN_FAILED="${failed[*]}" RUN_LONG=$long RUN_CASES=$cases \
  RUN_BENCH_REPS=$bench_reps RUN_BENCH_MIN_TIME=$bench_min_time RUN_STARTED=$started RUN_CORETYPE=$inherited_coretype \
  python3 - "$results/run.json" <<'PY'
import json, os, platform, subprocess, sys, time
env = os.environ
def first(path, key):
    try:
        for line in open(path, encoding="utf-8", errors="replace"):
            if line.startswith(key):
                return line.split(":", 1)[1].strip() if ":" in line else line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None
def pkg(name):
    try:
        return subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True).stdout or None
    except OSError:
        return None
mem = first("/proc/meminfo", "MemTotal")
names = [n for n in env["RUN_STAGE_NAMES"].split("\n") if n]
starts = [int(s) for s in env["RUN_STAGE_STARTS"].split("\n") if s]
now = int(time.time())
stages = [{"name": n, "seconds": (starts[i + 1] if i + 1 < len(starts) else now) - starts[i]}
          for i, n in enumerate(names)]
run = {
    "run_id": env["POSENC_RUN_ID"], "commit": env["POSENC_COMMIT"],
    "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(env["RUN_STARTED"]))),
    "seconds": now - int(env["RUN_STARTED"]),
    "mode": "long" if env["RUN_LONG"] == "1" else "default",
    "property_cases": int(env["RUN_CASES"]), "bench_repetitions": int(env["RUN_BENCH_REPS"]),
    "bench_min_time_s": float(env["RUN_BENCH_MIN_TIME"]),
    "machine": {"cpu": first("/proc/cpuinfo", "model name"), "logical_cpus": os.cpu_count(),
                "memory": mem, "kernel": platform.release(), "os": first("/etc/os-release", "PRETTY_NAME"),
                "openblas_package": pkg("libopenblas0-pthread"),
                "inherited_OPENBLAS_CORETYPE": env.get("RUN_CORETYPE") or None},
    "stages": stages, "failed": env["RUN_FAILED"].split(),
}
json.dump(run, open(sys.argv[1], "w"), indent=2)
PY
}
write_run_json
python3 "$root/reports/generate.py" --results "$results" --out "$root/reports/latest" \
  --cli "$build/cli/posenc" --repo "$root" || failed+=("report")

stage "done in $(( $(date +%s) - started )) s"
write_run_json
if [ ${#failed[@]} -gt 0 ]; then
  echo "[main] FAILED stages: ${failed[*]}"
  exit 1
fi
echo "[main] all stages passed; report: reports/latest/index.md"
