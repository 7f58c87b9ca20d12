#!/usr/bin/env python3
"""Mutation campaign: how the defect-finding power of the property suite grows with the number of cases.

For each planted bug of mutants.json: apply it in a separate git worktree, rebuild posenc_properties, run the
mutant's suites at each case count (RC_PARAMS max_success) with several seeds, record caught / not caught, which
test caught it and the time, restore the file. README.md says what the numbers mean and which runs are skipped.
Standard library only.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
NICE = ["nice", "-n", "19"]
MAX_SIZE = 100  # RapidCheck's default max_size (the runs never set it)


def regular_cases(max_success):
    """Cases 0 .. n-1 of a run get size i % (max_size + 1) (RapidCheck src/detail/Testing.cpp sizeFor): the same
    size, and the same random split of the seed, at every max_success whose regular part is at least as long."""
    return max_success // (MAX_SIZE + 1) * (MAX_SIZE + 1)


def sh(cmd, cwd=None, timeout=None, env=None):
    """Runs cmd in its own process group; returns (rc, output, seconds); rc None on timeout."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, time.monotonic() - t0
    except BaseException:  # timeout, Ctrl-C: end the whole group (ninja's or the test's children too)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
        if sys.exc_info()[0] is subprocess.TimeoutExpired:
            return None, out, time.monotonic() - t0
        raise


class Worktree:
    def __init__(self, path, jobs):
        self.path, self.jobs = Path(path), jobs
        self.build = self.path / "build"
        self.exe = self.build / "properties" / "posenc_properties"

    def prepare(self, sync):
        if not (self.path / ".git").exists():
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(self.path), "HEAD"], check=True)
        elif sync:
            head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True,
                                  check=True).stdout.strip()
            subprocess.run(["git", "-C", str(self.path), "checkout", "--detach", head], check=True)
        # a mutant left behind by a killed run: tracked files back to the commit
        dirty = self.git("diff", "--name-only").split()
        if dirty:
            print(f"restoring files left modified in {self.path}: {dirty}", flush=True)
            self.git("checkout", "--", *dirty)
        if not (self.build / "build.ninja").exists():
            cmd = NICE + ["cmake", "-S", ".", "-B", "build", "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                          "-DPOSENC_BUILD_TESTS=ON", "-DPOSENC_BUILD_BENCHMARKS=OFF", "-DPOSENC_BUILD_CLI=ON"]
            if Path("/usr/bin/ccache").exists():
                cmd.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            rc, out, _ = sh(cmd, cwd=self.path)
            if rc != 0:
                sys.exit("configure failed:\n" + out[-4000:])

    def git(self, *args):
        return subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True,
                              check=True).stdout

    def commit(self):
        return self.git("rev-parse", "HEAD").strip()

    def make(self, timeout=7200):
        return sh(NICE + ["ninja", "-C", str(self.build), f"-j{self.jobs}", "posenc_properties"], timeout=timeout)


def apply(wt, m):
    f = wt.path / m["file"]
    text = f.read_text()
    n = text.count(m["original"])
    if n != 1:
        raise ValueError(f"{m['id']}: the original text occurs {n} times in {m['file']} (want exactly once)")
    f.write_text(text.replace(m["original"], m["replacement"]))


def restore(wt, m):
    wt.git("checkout", "--", m["file"])


FALSIFIED = re.compile(r"Falsifiable after (\d+) tests")


def run_tests(wt, filt, level, seed, timeout):
    """One run of posenc_properties; returns a dict: caught (True / False / None = timed out or no tests ran),
    failures [{test, after}] (after: RapidCheck's 'Falsifiable after N tests', None for other failures), seconds."""
    env = dict(os.environ, RC_PARAMS=f"max_success={level} seed={seed} verbose_progress=0 noshrink=1")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "gtest.json"
        rc, out, secs = sh(NICE + [str(wt.exe), "--threads=1", f"--gtest_filter={filt}",
                                   f"--gtest_output=json:{report}"], cwd=wt.path, timeout=timeout, env=env)
        res = {"level": level, "seed": seed, "seconds": round(secs, 1), "failures": [], "tests": 0}
        if rc is None:
            res["caught"] = None
            res["note"] = "timeout"
            return res
        if not report.exists():  # crashed (a mutant may read out of bounds): a failure the suite reports too
            res["caught"] = True
            res["failures"].append({"test": "(program ended: rc %s)" % rc, "after": None})
            res["tail"] = out[-1500:]
            return res
        data = json.loads(report.read_text())
    for suite in data.get("testsuites", []):
        for t in suite.get("testsuite", []):
            if t.get("result") == "SUPPRESSED" or t.get("status") == "NOTRUN":
                continue
            res["tests"] += 1
            msgs = [f.get("failure", "") for f in t.get("failures", [])]
            if msgs:
                mm = FALSIFIED.search("\n".join(msgs))
                res["failures"].append({"test": f"{suite['name']}.{t['name']}",
                                        "after": int(mm.group(1)) if mm else None,
                                        "message": "\n".join(msgs)[:600]})
    res["caught"] = bool(res["failures"]) or rc != 0 if res["tests"] else None
    if res["tests"] == 0:
        res["note"] = "no test matched the filter"
    return res


def implied_higher(res, level):
    """Whether a catch at `level` implies a catch at every higher level with the same seed: some failure is a plain
    test (no RapidCheck case) or a RapidCheck case inside the regular part of `level`, which higher levels repeat."""
    def implies(f):
        if f["after"] is not None:
            return f["after"] - 1 < regular_cases(level)
        # a plain (deterministic) test; not a crash (which case is unknown) nor RapidCheck giving up on discards
        return not f["test"].startswith("(") and "Gave up" not in f.get("message", "")
    return any(implies(f) for f in res["failures"])


def campaign(wt, m, levels, seeds, budget):
    """All (seed, level) outcomes of one applied mutant, lowest level first per seed."""
    runs, t0 = [], time.monotonic()
    for seed in seeds:
        implied_from = None
        for level in levels:
            if implied_from is not None:
                runs.append({"level": level, "seed": seed, "caught": True, "implied_by": implied_from, "seconds": 0})
                continue
            left = budget - (time.monotonic() - t0)
            if left <= 0:
                runs.append({"level": level, "seed": seed, "caught": None, "note": "mutant budget spent", "seconds": 0})
                continue
            r = run_tests(wt, m["filter"], level, seed, left)
            runs.append(r)
            print(f"  {m['id']} seed {seed} @ {level}: "
                  f"{'CAUGHT' if r['caught'] else 'undecided' if r['caught'] is None else 'survived'} "
                  f"({r['seconds']} s){' by ' + r['failures'][0]['test'] if r['failures'] else ''}", flush=True)
            if r["caught"] and implied_higher(r, level):
                implied_from = level
    return runs


def summarize(results, levels):
    lines = ["# Mutation campaign", "",
             f"Worktree commit `{results['commit'][:12]}`, seeds {results['seeds']}, levels {levels} (RC_PARAMS "
             "max_success; noshrink=1). Cells: seeds that caught the mutant / seeds decided (`?` counts undecided "
             "runs). A catch at a lower level that RapidCheck's case order implies at the higher ones is counted "
             "there without a run (README.md).", ""]
    base = results.get("baseline", [])
    if base:
        lines.append("Baseline (unmutated): " + ", ".join(
            f"{b['level']} cases: {'PASS' if b['caught'] is False else 'FAIL' if b['caught'] else 'undecided'} "
            f"({b['seconds']} s)" for b in base))
        lines.append("")
    head = "| mutant | scheme | " + " | ".join(f"caught @{lv}" for lv in levels) + " | caught by | build s | test s |"
    lines += [head, "|" + "---|" * (len(levels) + 5)]
    per_level = {lv: [] for lv in levels}
    for r in results["mutants"]:
        cells = []
        for lv in levels:
            rr = [x for x in r.get("runs", []) if x["level"] == lv]
            dec = [x for x in rr if x["caught"] is not None]
            k = sum(1 for x in dec if x["caught"])
            und = len(rr) - len(dec)
            cells.append(f"{k}/{len(dec)}" + (f" ({und}?)" if und else "") if rr else "-")
            if dec:
                per_level[lv].append(k / len(dec))
        tests = {}
        for x in r.get("runs", []):
            for f in x.get("failures", [])[:1]:
                tests[f["test"]] = tests.get(f["test"], 0) + 1
        by = max(tests, key=tests.get) if tests else ("compile error" if r.get("status") == "compile_error" else "")
        secs = sum(x.get("seconds", 0) for x in r.get("runs", []))
        lines.append(f"| {r['id']} | {r['scheme']} | " + " | ".join(cells) +
                     f" | {by} | {r.get('build_seconds', 0):.0f} | {secs:.0f} |")
    lines += ["", "| level | mutants decided | mean fraction of seeds catching | caught by every seed | by any seed |",
              "|---|---|---|---|---|"]
    for lv in levels:
        v = per_level[lv]
        if v:
            lines.append(f"| {lv} | {len(v)} | {sum(v) / len(v):.2f} | {sum(1 for x in v if x == 1)}/{len(v)} | "
                         f"{sum(1 for x in v if x > 0)}/{len(v)} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--levels", default="300,1000,3000", help="case counts (max_success), ascending")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per level (1, 2, ... N)")
    ap.add_argument("--jobs", type=int, default=1, help="ninja parallelism of the rebuilds (default 1)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds of test runs per mutant (undecided after)")
    ap.add_argument("--worktree", default="/work/mutwork")
    ap.add_argument("--out", default=str(REPO / "out" / "mutation"))
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated runs")
    ap.add_argument("--check", action="store_true", help="only check that every original occurs exactly once")
    a = ap.parse_args()

    mutants = json.loads((HERE / "mutants.json").read_text())["mutants"]
    if a.only:
        want = a.only.split(",")
        unknown = set(want) - {m["id"] for m in mutants}
        if unknown:
            sys.exit(f"unknown mutant ids: {sorted(unknown)}")
        mutants = [m for m in mutants if m["id"] in want]
    levels = sorted(int(x) for x in a.levels.split(","))
    seeds = list(range(1, a.seeds + 1))

    if a.check:  # against the worktree's files (what is mutated), else this checkout's
        root = Path(a.worktree) if (Path(a.worktree) / ".git").exists() else REPO
        count = {m["id"]: (root / m["file"]).read_text().count(m["original"]) for m in mutants}
        bad = [f"{i}: {n} occurrences" for i, n in count.items() if n != 1]
        print("\n".join(bad) or f"{len(mutants)} mutants: every original occurs exactly once")
        sys.exit(1 if bad else 0)

    def on_term(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    wt = Worktree(a.worktree, a.jobs)
    wt.prepare(sync=False)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"commit": wt.commit(), "levels": levels, "seeds": seeds, "timeout": a.timeout, "mutants": []}

    def save():
        (out / "results.json").write_text(json.dumps(results, indent=1))
        (out / "summary.md").write_text(summarize(results, levels))

    rc, log, secs = wt.make()
    if rc != 0:
        sys.exit("the unmutated tree does not build:\n" + log[-4000:])
    print(f"unmutated build: {secs:.0f} s", flush=True)
    if not a.no_baseline:
        filt = ":".join(dict.fromkeys(p for m in mutants for p in m["filter"].split(":")))
        results["baseline"] = [run_tests(wt, filt, lv, seeds[0], None) for lv in levels]
        for b in results["baseline"]:
            print(f"baseline @ {b['level']}: caught={b['caught']} ({b['seconds']} s) {b['failures'][:3]}", flush=True)
        save()

    for m in mutants:
        entry = {k: m[k] for k in ("id", "scheme", "file", "description", "filter")}
        results["mutants"].append(entry)
        print(f"== {m['id']} ({m['file']})", flush=True)
        try:
            apply(wt, m)
            rc, log, secs = wt.make()
            entry["build_seconds"] = round(secs, 1)
            if rc != 0:
                entry["status"] = "compile_error" if rc is not None else "build_timeout"
                entry["build_log"] = log[-3000:]
                print(f"  {entry['status']}", flush=True)
                continue
            entry["status"] = "ran"
            entry["runs"] = campaign(wt, m, levels, seeds, a.timeout)
        except ValueError as e:
            entry["status"] = "bad_catalogue"
            entry["error"] = str(e)
            print(f"  {e}", flush=True)
        except KeyboardInterrupt:
            entry["status"] = "interrupted"
            raise
        finally:
            restore(wt, m)
            save()
    rc, _, _ = wt.make()  # leave the worktree's build unmutated
    save()
    print(f"wrote {out / 'results.json'} and {out / 'summary.md'}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted (the mutated file was restored)")
