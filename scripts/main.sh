#!/usr/bin/env bash
# The main job: install what is missing, build, run the proofs at report-level case counts, the accuracy
# sweep and the benchmarks, and write reports/latest/. About 20 minutes on a 2-core machine;
# --long runs a longer campaign (10x the property cases, a denser accuracy sweep, more benchmark repetitions).
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
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "main.sh: unknown argument '$arg' (accepted: --long, --help)" >&2; exit 2 ;;
  esac
done

if [ $long -eq 1 ]; then
  cases=100000; sweep_flags=(--long); bench_reps=10; bench_min_time=0.5
else
  cases=15000; sweep_flags=(); bench_reps=5; bench_min_time=0.3
fi

started=$(date +%s)
stage() { printf '\n[main %4ds] %s\n' $(( $(date +%s) - started )) "$*"; }
failed=()

stage "1/6 dependencies"
"$root/scripts/install-deps.sh" || exit 1

stage "2/6 build (Release, $build)"
"$root/scripts/build.sh" || exit 1

rm -rf "$results"; mkdir -p "$results"
export POSENC_RESULTS_DIR=$results
export POSENC_COMMIT=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if ! git -C "$root" diff --quiet HEAD 2>/dev/null; then POSENC_COMMIT="$POSENC_COMMIT+dirty"; fi

stage "3/6 proofs: oracle self-tests, accuracy metric, sinusoidal claims (RapidCheck max_success=$cases)"
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
"$build/cli/posenc" list --format json > "$results/schemes.json" || failed+=("schemes.json")

stage "4/6 accuracy sweep (fast path vs oracle over positions 0..2^40, every preset, regime, dtype)"
if ! "$build/properties/posenc_accuracy_sweep" "${sweep_flags[@]}" --out "$results/accuracy.json" 2>&1 \
      | tee "$results/log-accuracy.txt" | grep -E '^\[|budget|FAIL|exceed' ; then :; fi
[ -s "$results/accuracy.json" ] || failed+=("accuracy-sweep")

stage "5/6 benchmarks (repetitions $bench_reps, min time ${bench_min_time}s)"
# Primary run with the kernels posenc selects (OPENBLAS_CORETYPE unset: OpenBLAS detects the CPU, and
# select_blas_kernels re-executes with a better core if the detected one is a fallback) ...
bench=$build/benchmarks/posenc_bench
bench_flags=(--benchmark_repetitions=$bench_reps --benchmark_min_time=$bench_min_time
             --benchmark_report_aggregates_only=false --benchmark_format=console)
echo "  - all families, auto-selected BLAS kernels"
env -u OPENBLAS_CORETYPE "$bench" "${bench_flags[@]}" --benchmark_out="$results/bench-auto.json" \
  --benchmark_out_format=json > "$results/log-bench-auto.txt" 2>&1 || failed+=("bench:auto")
tail -n 3 "$results/log-bench-auto.txt" | sed 's/^/    | /'
# ... and the BLAS families once more under the AVX2 fallback core (what Debian's OpenBLAS 0.3.21 picks on
# CPUs it does not know, or what an environment forces), so the report can state the cost of a fallback.
echo "  - BLAS families under the Haswell (AVX2) fallback core"
OPENBLAS_CORETYPE=Haswell "$bench" "${bench_flags[@]}" --benchmark_filter='^[a-z0-9_]+/(sgemm|gram|shift/blas)' \
  --benchmark_out="$results/bench-fallback-haswell.json" --benchmark_out_format=json \
  > "$results/log-bench-fallback.txt" 2>&1 || failed+=("bench:fallback")

stage "6/6 report -> reports/latest/"
python3 "$root/reports/generate.py" --results "$results" --out "$root/reports/latest" \
  --cli "$build/cli/posenc" --repo "$root" || failed+=("report")

stage "done in $(( $(date +%s) - started )) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "[main] FAILED stages: ${failed[*]}"
  exit 1
fi
echo "[main] all stages passed; report: reports/latest/index.md"
