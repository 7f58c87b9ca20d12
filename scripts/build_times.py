#!/usr/bin/env python3
"""scripts/build_times.py — where a build's time went, per part, from Ninja's log (scripts/build.sh uses Ninja).

    build_times.py [BUILD_DIR] [--top N]

Sums each object's compile time (the last build of each output in BUILD_DIR/.ninja_log) by part: the library,
spec, oracles, the oracle self-tests, the budget table and checkers, the measuring harnesses, the claims, the
sweep, the CLI's per-scheme files and its core, the benchmarks; and lists the N slowest objects. Times are wall
seconds per object with the build's parallelism (two at once on two cores), so their sum is about cores x wall.
Python 3 standard library only.
"""
import sys
from pathlib import Path

PARTS = (  # (part, a substring of the object's path); the first match wins
    ("claims (posenc_properties)", "posenc_properties.dir/"),
    ("oracle self-tests", "posenc_oracle_tests.dir/"),
    ("oracles (posenc_reference)", "posenc_reference.dir/"),
    ("budget rows + checkers (posenc_verify)", "posenc_verify.dir/"),
    ("budget rows + checkers (posenc_verify)", "posenc_accuracy.dir/"),  # its name before 2026-11-28
    ("budget rows + checkers (posenc_verify)", "posenc_budget_rows.dir/"),
    ("measuring harnesses (posenc_test_support)", "posenc_test_support.dir/"),
    ("accuracy sweep", "posenc_accuracy_sweep.dir/"),
    ("API/misuse/config tests", "posenc_api_tests.dir/"),
    ("API/misuse/config tests", "posenc_rope_config_tests.dir/"),
    ("CLI per-scheme files", "posenc_cli.dir/schemes/"),
    ("CLI per-scheme files", "posenc_cli.dir/Unity/"),  # unity units of main.cpp and the scheme files
    ("CLI core", "posenc_cli_core.dir/"),
    ("CLI core", "posenc_cli.dir/"),
    ("CLI tests", "posenc_cli_tests.dir/"),
    ("library (lib/)", "lib/CMakeFiles/posenc.dir/"),
    ("spec", "posenc_spec.dir/"),
    ("benchmarks", "posenc_bench.dir/"),
)


def entries(log: Path):
    """The last build of each edge: {first output: seconds}. One edge with several outputs (a link whose post-build
    step writes test-discovery files) logs one line per output with the same start, end and command hash: counted
    once."""
    last, edges = {}, {}
    for line in log.read_text().splitlines()[1:]:
        start, end, _, out, cmd = line.split("\t")
        last[out] = (start, end, cmd)
    for out, (start, end, cmd) in last.items():
        key = (start, end, cmd)
        if key not in edges or out < edges[key][0]:
            edges[key] = (out, (int(end) - int(start)) / 1000.0)
    return dict(edges.values())


def main(argv):
    build = Path(argv[1]) if len(argv) > 1 and not argv[1].startswith("--") else Path("build")
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 10
    times = entries(build / ".ninja_log")
    parts = {}
    for out, t in times.items():
        part = next((p for p, key in PARTS if key in out), "links, test discovery, other" if not out.endswith(".o")
                    else "other objects")
        parts[part] = parts.get(part, 0.0) + t
    total = sum(parts.values())
    print(f"| part | seconds | share |\n|---|---:|---:|")
    for p, t in sorted(parts.items(), key=lambda x: -x[1]):
        print(f"| {p} | {t:.0f} | {100 * t / total:.0f} % |")
    print(f"| **sum** | **{total:.0f}** | |")
    print(f"\nslowest {top} objects:")
    for out, t in sorted(times.items(), key=lambda x: -x[1])[:top]:
        print(f"  {t:6.1f} s  {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
