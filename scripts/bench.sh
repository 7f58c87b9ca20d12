#!/usr/bin/env bash
# Quick performance tracking: build only the benchmark program, run a set of benchmarks with repetitions in random
# interleaved order, keep the run in the history (out/history.sqlite) and print what moved since the previous
# comparable run (same selection, same machine fingerprint when there is one).
#
#   scripts/bench.sh [--quick | --set NAME | --filter REGEX] [--reps N] [--min-time S] [--db PATH] [--no-build]
#
#   --quick          the set "quick" (benchmarks/sets/quick.txt); a few minutes at most
#   --set NAME       benchmarks/sets/NAME.txt: one Google Benchmark --benchmark_filter regex (first line that is
#                    not a comment); without --set and --filter every benchmark runs
#   --filter REGEX   a --benchmark_filter regex of your own (names end in /real_time when filtered)
#   --reps N         repetitions per benchmark (default 5); --min-time S: seconds per repetition (default 0.3)
#   --db PATH        the history file (default $POSENC_HISTORY_DB or out/history.sqlite)
#   --no-build       use the posenc_bench already built in ${POSENC_BUILD_DIR:-build}
#
# Results go to out/bench/<run id>/ (bench-auto.json, run.json with mode "bench", log-bench.txt; $POSENC_BENCH_OUT
# names another parent directory). Exit status: 0, 1 when the comparison finds a regression or the benchmarks fail,
# 2 on usage errors.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${POSENC_BUILD_DIR:-$root/build}
py=/usr/bin/python3
set_name="" filter="" reps=5 min_time=0.3 db=() no_build=0

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "bench.sh: error: $*" >&2; exit 2; }
need() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (see bench.sh --help)"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) set_name=quick; shift ;;
    --set) need "$@"; set_name=$2; shift 2 ;;
    --filter) need "$@"; filter=$2; shift 2 ;;
    --reps) need "$@"; reps=$2; shift 2 ;;
    --min-time) need "$@"; min_time=$2; shift 2 ;;
    --db) need "$@"; db=(--db "$2"); shift 2 ;;
    --no-build) no_build=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (accepted: --quick, --set NAME, --filter REGEX, --reps N, --min-time S, --db PATH, --no-build, --help)" ;;
  esac
done

[[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "--reps must be a positive integer, got '$reps'"
[[ "$min_time" =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v t="$min_time" 'BEGIN { exit !(t + 0 > 0) }' \
  || die "--min-time must be a positive number of seconds, got '$min_time'"
[ -n "$set_name" ] && [ -n "$filter" ] && die "give either --set/--quick or --filter, not both (a set is a filter)"

# A set is one regex in benchmarks/sets/<name>.txt (the first line that is neither blank nor a comment; "@headline":
# the schemes' headline kernels), resolved by scripts/bench_set.py.
if [ -n "$set_name" ]; then
  filter=$(python3 "$root/scripts/bench_set.py" "$set_name" 2>&1) || die "${filter#bench_set.py: }"
  [ -n "$filter" ] || die "the set '$set_name' gives an empty filter"
fi

if [ $no_build -eq 0 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "[bench] no build in $build: configuring and building with scripts/build.sh"
    "$root/scripts/build.sh" || exit 1
  fi
  echo "[bench] building posenc_bench in $build"
  cmake --build "$build" --target posenc_bench -j"$(nproc)" > "$build/bench-build.log" 2>&1 \
    || { tail -n 30 "$build/bench-build.log"; echo "bench.sh: error: the build failed (log: $build/bench-build.log)" >&2; exit 1; }
fi
exe=$build/benchmarks/posenc_bench
[ -x "$exe" ] || die "no benchmark program at $exe (build it, or drop --no-build)"

# As in main.sh: every program gets the kernels posenc selects; an inherited OPENBLAS_CORETYPE is recorded, then
# dropped.
inherited_coretype=${OPENBLAS_CORETYPE-}
unset OPENBLAS_CORETYPE
started=$(date +%s)
export POSENC_COMMIT=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if ! git -C "$root" diff --quiet HEAD 2>/dev/null; then POSENC_COMMIT="$POSENC_COMMIT+dirty"; fi
export POSENC_RUN_ID="$POSENC_COMMIT@$(date -u -d "@$started" +%Y-%m-%dT%H:%M:%SZ)"
out=${POSENC_BENCH_OUT:-$root/out/bench}/$POSENC_RUN_ID
[ -e "$out" ] && die "$out exists already (two runs in the same second?); try again"
mkdir -p "$out"

echo "[bench] run $POSENC_RUN_ID: ${set_name:+set $set_name, }filter '${filter:-(all)}', $reps repetitions, min time ${min_time}s"
flags=(--benchmark_repetitions="$reps" --benchmark_min_time="$min_time" --benchmark_enable_random_interleaving=true
       --benchmark_report_aggregates_only=false --benchmark_format=console
       --benchmark_out="$out/bench-auto.json" --benchmark_out_format=json)
[ -n "$filter" ] && flags+=(--benchmark_filter="$filter")
failed=()
"$exe" "${flags[@]}" 2>&1 | tee "$out/log-bench.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed+=("bench")

RUN_STARTED=$started RUN_MODE=bench RUN_BENCH_REPS=$reps RUN_BENCH_MIN_TIME=$min_time RUN_SET=$set_name \
RUN_FILTER=$filter RUN_CORETYPE=$inherited_coretype RUN_FAILED="${failed[*]}" \
  "$py" "$root/scripts/run_json.py" "$out/run.json"

if [ ! -s "$out/bench-auto.json" ]; then
  echo "bench.sh: error: the benchmarks wrote no results (log: $out/log-bench.txt)" >&2
  exit 1
fi
"$py" "$root/scripts/history.py" import "$out" "${db[@]}" || exit $?
echo
"$py" "$root/scripts/history.py" compare previous "$POSENC_RUN_ID" --allow-missing-base "${db[@]}"
status=$?
[ ${#failed[@]} -eq 0 ] || { echo "bench.sh: the benchmark program failed (log: $out/log-bench.txt)" >&2; exit 1; }
exit $status
