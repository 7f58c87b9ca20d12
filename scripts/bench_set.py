#!/usr/bin/env python3
"""scripts/bench_set.py — the Google Benchmark filter of a benchmark set (benchmarks/sets/<name>.txt).

  scripts/bench_set.py NAME          prints the filter ("all": every benchmark, an empty filter)

A set file holds one regex: its first line that is neither blank nor a comment. The line `@headline` stands for the
headline kernels of every scheme, read from the scheme folders (schemes/<name>/headline.json: the benchmarks behind the
report's "speed vs limit"), each with the in-run baselines of its family (stream_store, store, rmw, plainloop, sgemm,
memcpy in f32 or i32): a scheme that lands with its headline.json is in the set with no edit here. Standard library
only. Exit status 2 for an unknown set."""
from __future__ import annotations

import fnmatch
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINES = "(stream_store|store|rmw|plainloop|sgemm|memcpy)(_f32|_i32)?"


def variant_regex(pattern: str) -> str:
    """A headline kernel's variant (an fnmatch pattern) as a regex fragment."""
    return fnmatch.translate(pattern).removeprefix("(?s:").removesuffix(r")\Z")


def headline_filter() -> str:
    parts = []
    for headline in sorted((ROOT / "schemes").glob("*/headline.json")):
        scheme, families = headline.parent.name, {}
        for h in json.loads(headline.read_text())["headline_kernels"]:
            variants = families.setdefault(h["family"], [])
            if h["variant"] not in variants:
                variants.append(h["variant"])
        for family in sorted(families):
            alternatives = "|".join([variant_regex(v) for v in families[family]] + [BASELINES])
            parts.append(f"{scheme}/{family}/({alternatives})/")
    return "^(" + "|".join(parts) + ")"


def set_filter(name: str) -> str:
    if name == "all":
        return ""
    path = ROOT / "benchmarks" / "sets" / f"{name}.txt"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in path.parent.glob("*.txt")))
        raise SystemExit(f"bench_set.py: no benchmark set '{name}' (no {path}; sets: {known or 'none'})")
    lines = [l.strip() for l in path.read_text().splitlines() if l.strip() and not l.lstrip().startswith("#")]
    if not lines:
        raise SystemExit(f"bench_set.py: {path} holds no filter line")
    return headline_filter() if lines[0] == "@headline" else lines[0]


def main(argv: list) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        print(set_filter(argv[0]))
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
