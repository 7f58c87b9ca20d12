#!/usr/bin/env bash
# Acceptance of the benchmark history (scripts/bench.sh + scripts/history.py) on a QUIET machine: nothing else
# running, or the timings are noise. About 10-15 minutes on the 2-core reference VM. Findings go to
# out/history-acceptance.md; the databases and runs to out/history-acceptance/ (never the default history).
#
#   scripts/history_acceptance.sh [--no-build] [--cp-runs N]
#
#   (a) A/A: two `bench.sh --quick` runs of the same commit; the share of gated comparisons flagged (goal <= 5 %)
#   (b) A/B: a third quick run with POSENC_SIMD=scalar (the portable loops); the regressions named must be
#       exactly the kernels whose own time rose by more than 50 %, each with p < 0.01
#   (c) change points: N >= 8 runs (default 8) of the sinusoidal tables and their baselines, the last half with
#       POSENC_SIMD=scalar; E-Divisive must put the step at the first portable run for every slowed kernel
#   (d) robustness: kill -9 during an import leaves no partial run and a re-import no duplicate; a damaged and a
#       foreign database give a clear one-line error (exit 2)
# Exit status: 0 when every part passed, 1 otherwise.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
work=$root/out/history-acceptance
md=$root/out/history-acceptance.md
build_flag=() cp_runs=8
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build_flag=(--no-build); shift ;;
    --cp-runs) [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$2" -ge 8 ] || { echo "history_acceptance.sh: error: --cp-runs needs an integer >= 8" >&2; exit 2; }
               cp_runs=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "history_acceptance.sh: error: unknown argument '$1' (accepted: --no-build, --cp-runs N, --help)" >&2; exit 2 ;;
  esac
done
[ -x "$py" ] && "$py" -c 'import numpy, scipy' 2>/dev/null \
  || { echo "history_acceptance.sh: error: $py cannot import numpy/scipy (install python3-numpy python3-scipy)" >&2; exit 2; }

rm -rf "$work"; mkdir -p "$work"
export POSENC_BENCH_OUT=$work/runs
unset POSENC_SIMD POSENC_DISABLE_AVX512 POSENC_HISTORY_DB
verdicts=()
hist() { "$py" "$root/scripts/history.py" "$@"; }
bench() { "$root/scripts/bench.sh" "${build_flag[@]}" "$@"; }
note() { printf '%s\n' "$*" >> "$md"; }
verdict() { verdicts+=("$1: $2"); note ""; note "**Verdict ($1): $2**"; echo "[acceptance] $1: $2"; }
next_second() { sleep 1; }     # run ids have one-second resolution
{
  echo "# Benchmark history: acceptance"
  echo
  echo "Written by \`scripts/history_acceptance.sh\` on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ), commit"
  echo "\`$(git -C "$root" rev-parse --short=12 HEAD)\`; CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'),"
  echo "$(nproc) logical CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)."
} > "$md"

# judge PART FILE: reads a `compare --format json` document; prints Markdown lines, exits 0 / 1 for the part's rule.
judge() { "$py" - "$@" <<'PY'
import json, sys
part, data = sys.argv[1], json.load(open(sys.argv[2]))
rows = data["comparisons"]
gated = [r for r in rows if r["gated"] and r["p"] is not None]
flagged = [r for r in gated if r["verdict"] in ("regression", "improvement")]
def line(r):
    what = f"÷ {r['kind']}" if r["quantity"] == "ratio" else "time"
    return f"| `{r['benchmark']}` | {what} | {r['change'] * 100:+.1f} % | {r['p']:.3g} | {r['verdict']} |"
print(f"- gated comparisons: {len(gated)}; flagged: {len(flagged)} ({len(flagged) / max(len(gated), 1) * 100:.1f} %)")
times = [r for r in rows if r["quantity"] == "time" and r["p"] is not None]
moved = [r for r in times if r["verdict"] in ("regression", "improvement")]
print(f"- absolute times (informational): {len(moved)} of {len(times)} moved significantly beyond the threshold")
print("\n| benchmark | quantity | change | p | verdict |\n|---|---|---:|---:|---|")
for r in sorted(rows, key=lambda r: (r["quantity"], r["benchmark"])):
    if r["p"] is not None:
        print(line(r))
if part == "aa":
    sys.exit(0 if len(flagged) <= 0.05 * len(gated) else 1)
# ab: the kernels whose own time rose by > 50 % must be exactly the gated regressions, each with p < 0.01
slowed = {r["benchmark"] for r in times if r["baseline"] is None and r["change"] is not None and r["change"] > 0.5}
named = {r["benchmark"] for r in gated if r["verdict"] == "regression"}
weak = {r["benchmark"] for r in gated if r["verdict"] == "regression" and not r["p"] < 0.01}
print(f"\n- kernels slowed by more than 50 % (their own times): {sorted(slowed) or 'none'}")
print(f"- kernels named as regressions: {sorted(named) or 'none'}")
ok = bool(slowed) and slowed == named and not weak
sys.exit(0 if ok else 1)
PY
}

section() { note ""; note "## $*"; echo "[acceptance] $*"; }

# --- (a) A/A -------------------------------------------------------------------------------------------------------
section "(a) A/A: two quick runs of the same commit"
aa=$work/quick.sqlite
for i in 1 2; do
  bench --quick --db "$aa" > "$work/aa-$i.log" 2>&1; rc=$?
  [ $rc -le 1 ] || { verdict "a" "FAIL (bench.sh exited $rc; log $work/aa-$i.log)"; break; }
  next_second
done
if hist compare previous latest --db "$aa" --format json > "$work/aa.json"; [ -s "$work/aa.json" ]; then
  judge aa "$work/aa.json" >> "$md" && verdict "a" "PASS (flagged share <= 5 %)" || verdict "a" "FAIL (more than 5 % flagged)"
else
  verdict "a" "FAIL (no comparison)"
fi

# --- (b) A/B -------------------------------------------------------------------------------------------------------
section "(b) A/B: POSENC_SIMD=scalar (the portable loops) against the A/A run"
POSENC_SIMD=scalar bench --quick --db "$aa" > "$work/ab.log" 2>&1
next_second
if hist compare previous latest --db "$aa" --format json > "$work/ab.json"; [ -s "$work/ab.json" ]; then
  judge ab "$work/ab.json" >> "$md" && verdict "b" "PASS (exactly the slowed kernels named, p < 0.01)" \
    || verdict "b" "FAIL (the regressions named differ from the slowed kernels, or p >= 0.01)"
else
  verdict "b" "FAIL (no comparison)"
fi
note ""; note "<details><summary>compare previous latest (Markdown)</summary>"; note ""
hist compare previous latest --db "$aa" >> "$md" 2>&1; note ""; note "</details>"

# --- (c) change points ---------------------------------------------------------------------------------------------
section "(c) change points: $cp_runs runs, the last $(( cp_runs / 2 )) with POSENC_SIMD=scalar"
cp=$work/changepoints.sqlite
filter='^sinusoidal/table/(exact_f32|stream_store)/'
step_run=""
for i in $(seq 1 "$cp_runs"); do
  if [ "$i" -gt $(( cp_runs - cp_runs / 2 )) ]; then export POSENC_SIMD=scalar; fi
  start=$(date +%s)
  bench --filter "$filter" --reps 5 --min-time 0.1 --db "$cp" > "$work/cp-$i.log" 2>&1
  note "- run $i: $(( $(date +%s) - start )) s${POSENC_SIMD:+, POSENC_SIMD=$POSENC_SIMD}"
  if [ "$i" -eq $(( cp_runs - cp_runs / 2 + 1 )) ]; then
    step_run=$(hist list --db "$cp" --format json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["run_id"])')
  fi
  next_second
done
unset POSENC_SIMD
hist changes --db "$cp" --format json > "$work/cp.json"
hist compare "$(hist list --db "$cp" --format json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["runs"][-1]["run_id"])')" latest \
  --db "$cp" --format json > "$work/cp-first-last.json"
STEP_RUN=$step_run "$py" - "$work/cp.json" "$work/cp-first-last.json" >> "$md" <<'PY'
import json, os, sys
series = json.load(open(sys.argv[1]))["series"]
first_last = json.load(open(sys.argv[2]))["comparisons"]
slowed = {r["benchmark"] for r in first_last if r["quantity"] == "time" and r["baseline"] is None
          and r["change"] is not None and r["change"] > 0.5}
step = os.environ["STEP_RUN"]
print(f"\n- first portable run: `{step}`; kernels slowed by > 50 % between the first and last run: {len(slowed)}")
print("\n| series | change points (first run after each) |\n|---|---|")
bad = []
for s in series:
    if s["what"] != "ratio":
        continue
    found = [c["run_id"] for c in s["change_points"]]
    print(f"| `{s['label']}` | {', '.join(f'`{r}`' for r in found) or '—'} |")
    if s["key"][1] in slowed and found != [step]:
        bad.append(s["label"])
print(f"\n- slowed kernels whose ratio series does not have exactly one change point at the first portable run: "
      f"{bad or 'none'}")
sys.exit(0 if slowed and not bad else 1)
PY
[ $? -eq 0 ] && verdict "c" "PASS (the step found at the first portable run)" || verdict "c" "FAIL"

# --- (d) robustness ------------------------------------------------------------------------------------------------
section "(d) kill -9 during an import; damaged and foreign databases"
kdb=$work/kill.sqlite
runs=("$work/runs"/*)
hist import "${runs[0]}" --db "$kdb" > /dev/null
counts() { "$py" - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(" ".join(f"{t}={c.execute(f'SELECT COUNT(*) FROM {t}').fetchone()[0]}" for t in
               ("runs", "files", "results", "samples", "ratios", "ratio_samples", "budget", "claims")),
      c.execute("PRAGMA integrity_check").fetchone()[0])
PY
}
before=$(counts "$kdb")
POSENC_HISTORY_TEST_PAUSE_AFTER_ROWS=30 "$py" "$root/scripts/history.py" import "${runs[1]}" --db "$kdb" \
  > /dev/null 2> "$work/kill.err" &
pid=$!
for _ in $(seq 1 100); do grep -q paused "$work/kill.err" && break; sleep 0.2; done
paused=$(grep -c paused "$work/kill.err")
kill -9 "$pid"; wait "$pid" 2>/dev/null
after=$(counts "$kdb")
reimport=$(hist import "${runs[1]}" --db "$kdb" 2>&1)
again=$(hist import "${runs[1]}" --db "$kdb" 2>&1)
final=$(counts "$kdb")
note "- paused mid-import (after 30 rows) and killed with SIGKILL: $([ "$paused" -ge 1 ] && echo yes || echo no)"
note "- before: \`$before\`"; note "- after the kill: \`$after\`"
note "- re-import: \`$reimport\`"; note "- again: \`$again\`"; note "- final: \`$final\`"
ok_d=1
[ "$paused" -ge 1 ] && [ "$before" = "$after" ] && [[ "$reimport" == imported:* ]] && [[ "$again" == "already imported"* ]] || ok_d=0
cp "$kdb" "$work/damaged.sqlite"
size=$(stat -c %s "$work/damaged.sqlite")
dd if=/dev/urandom of="$work/damaged.sqlite" bs=1 seek=$(( size / 2 )) count=4096 conv=notrunc status=none
dd if=/dev/zero of="$work/damaged.sqlite" bs=1 seek=0 count=100 conv=notrunc status=none
damaged=$(hist list --db "$work/damaged.sqlite" 2>&1); drc=$?
"$py" -c "import sqlite3; c = sqlite3.connect('$work/foreign.sqlite'); c.execute('CREATE TABLE t (a)'); c.commit()"
foreign=$(hist list --db "$work/foreign.sqlite" 2>&1); frc=$?
note "- damaged file (exit $drc): \`$damaged\`"; note "- foreign database (exit $frc): \`$foreign\`"
[ $drc -eq 2 ] && [ $frc -eq 2 ] && [ "$(printf '%s\n' "$damaged" | wc -l)" -eq 1 ] && [[ "$damaged" != *Traceback* ]] || ok_d=0
[ $ok_d -eq 1 ] && verdict "d" "PASS" || verdict "d" "FAIL"

section "Summary"
printf -- '- %s\n' "${verdicts[@]}" >> "$md"
echo "[acceptance] findings: $md"
for v in "${verdicts[@]}"; do [[ "$v" == *PASS* ]] || exit 1; done
exit 0
