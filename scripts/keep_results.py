#!/usr/bin/env python3
"""scripts/keep_results.py — the compact results of a main-job run, kept beside the committed report.

    keep_results.py RESULTS DATA [--reliability]

Copies into DATA (reports/latest/data/) what the history needs to remember the run (`scripts/history.py import-git`
reads every committed version of it): run.json, the claims ledgers proofs-*.json, the budget rows of accuracy*.json
(their per-position series, which only the report's plots need, are left out) and the benchmark files bench-*.json,
all as compact JSON, and the figure data figures-*.json (the report tests' shared fixture). Files of an earlier run in DATA are replaced. With --reliability (a --full or --long run) the
reliability suite's results go to DATA/reliability/ with a copy of run.json, replacing the earlier ones: a later run
without the suite shows them on reliability.md as that run's figures. Without it, DATA/reliability/ is kept as is.
Python 3 standard library only.
"""
import json
import shutil
import sys
from pathlib import Path

RELIABILITY = ("sanitize.json", "coverage.json", "fuzz.json", "faults.jsonl", "bad_inputs.json")


def compact(src: Path, dst: Path, drop=()):
    data = json.loads(src.read_text(encoding="utf-8"))
    for key in drop:
        data.pop(key, None)
    dst.write_text(json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")


def keep_run(results: Path, data: Path):
    for old in data.glob("*.json"):
        old.unlink()
    for pattern, drop in (("run.json", ()), ("proofs-*.json", ()), ("accuracy*.json", ("series",)),
                          ("bench-*.json", ()), ("figures-*.json", ())):
        for src in sorted(results.glob(pattern)):
            compact(src, data / src.name, drop)


def keep_reliability(results: Path, data: Path):
    rel = data / "reliability"
    if rel.exists():
        shutil.rmtree(rel)
    rel.mkdir(parents=True)
    for name in RELIABILITY:
        if (results / name).exists():
            shutil.copyfile(results / name, rel / name)
    compact(results / "run.json", rel / "run.json")


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    results, data = Path(argv[1]), Path(argv[2])
    data.mkdir(parents=True, exist_ok=True)
    keep_run(results, data)
    if "--reliability" in argv[3:]:
        keep_reliability(results, data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
