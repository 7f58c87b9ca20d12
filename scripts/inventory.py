#!/usr/bin/env python3
"""scripts/inventory.py — what the project holds, counted, so a restructuring can show that nothing was lost.

  scripts/inventory.py [BUILD_DIR] [--json FILE] [--heldout] [--schemes] [--parts]

Counts, from a built tree (default build/): claims in the ledger (posenc_properties, no test run), budget rows
(`posenc budget`), ctest entries (all, and those the test command runs), benchmarks (posenc_bench, when built),
CLI commands (verb x scheme, from `posenc list`), and with --heldout the held-out checks (runs heldout_test.py, about
a minute); and lines of the tracked files per top-level tree. With --schemes, what each scheme's author wrote by
hand: the files of schemes/<name>/ (its public headers, API, spec and oracle, included), with their lines; with
--parts, those lines per part (PARTS: the scheme's essentials, then what each mode's driver needs of it). Standard
library only."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def claims(build: Path) -> int | None:
    exe = build / "properties" / "posenc_properties"
    if not exe.exists():
        return None
    with tempfile.TemporaryDirectory() as d:
        run([str(exe), "--gtest_filter=-*"], env={**os.environ, "POSENC_RESULTS_DIR": d})
        files = list(Path(d).glob("proofs-*.json"))
        return len(json.loads(files[0].read_text())["claims"]) if files else None


def ctest_entries(build: Path, *extra: str) -> int | None:
    m = re.search(r"Total Tests: (\d+)", run(["ctest", "-N", *extra], cwd=build).stdout)
    return int(m.group(1)) if m else None


def benchmarks(build: Path) -> int | None:
    exe = build / "benchmarks" / "posenc_bench"
    return len(run([str(exe), "--benchmark_list_tests"]).stdout.split()) if exe.exists() else None


def heldout_checks(cli: Path) -> str:
    out = run([sys.executable, str(ROOT / "properties/heldout/heldout_test.py"), str(cli),
               str(ROOT / "properties/heldout/data/hf")]).stdout
    m = re.search(r"(\d+) passed, (\d+) failed", out)
    return f"{m.group(1)} passed, {m.group(2)} failed" if m else "not run (no summary line)"


def lines_per_tree() -> dict:
    files = run(["git", "ls-files"], cwd=ROOT).stdout.split("\n")
    per = Counter()
    for f in files:
        path = ROOT / f
        if not f or f.startswith("reports/latest/") or not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            per[f.split("/")[0] if "/" in f else "."] += path.read_text().count("\n")
        except (UnicodeDecodeError, OSError):
            continue  # binary data (held-out vectors, .npy)
    return dict(sorted(per.items()))


def scheme_files() -> dict:
    """{scheme: [(path, lines)]}: the tracked files of schemes/<name>/ (its three public headers included)."""
    tracked = set(run(["git", "ls-files"], cwd=ROOT).stdout.split("\n"))
    out = {}
    for folder in sorted((ROOT / "schemes").iterdir()):
        if not (folder / "spec.cpp").is_file():
            continue
        n = folder.name
        paths = sorted(f for f in tracked if f.startswith(f"schemes/{n}/"))
        out[n] = [(f, (ROOT / f).read_text().count("\n")) for f in paths if f in tracked]
    return out


# A scheme file's part, by its path in the scheme's folder (first match): the essentials (spec, fast path, oracle
# and its self-tests, claims, budget rows, cases), then what each mode's driver needs from the scheme.
PARTS = (("essential: spec", r"^include/spec/|^spec\.cpp$|^config_test\.cpp$"),
         ("essential: fast path", r"^include/lib/|^fast\.cpp$"),
         ("essential: oracle", r"^include/oracle/|^oracle\.cpp$"),
         ("essential: oracle self-tests", r"^oracle_test\.cpp$"),
         ("essential: claims", r"^claims\.cpp$"),
         ("essential: budget", r"^budget\.(hpp|cpp)$"),
         ("essential: cases", r"^cases\.hpp$"),
         ("driver: cli", r"^cli\.cpp$|^cli_bases\.json$"),
         ("driver: benchmarks", r"^bench\.cpp$"),
         ("driver: sweep", r"^sweep\.cpp$"),
         ("driver: report", r"^figures\.cpp$|^report\.py$|^headline\.json$"),
         ("driver: check", r"^check\.(hpp|cpp)$"),
         ("driver: measuring (claims, sweep)", r"^measure\.|^generators\."),
         ("driver: misuse", r"^misuse_test\.cpp$"))


def scheme_parts(files: list, scheme: str) -> dict:
    """{part: lines} of one scheme's [(path, lines)] (PARTS; "other" for a file no part names)."""
    out = Counter()
    for path, n in files:
        rel = path.removeprefix(f"schemes/{scheme}/")
        part = next((name for name, pattern in PARTS if re.search(pattern, rel)), "other")
        out[part] += n
    return in_part_order(out)


def in_part_order(lines: Counter) -> dict:
    return {p: lines[p] for p in [name for name, _ in PARTS] + ["other"] if p in lines}


def main(argv: list) -> int:
    args = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or argv[i - 1] != "--json")]
    build = Path(args[0]) if args else ROOT / "build"
    cli = build / "cli" / "posenc"
    listing = json.loads(run([str(cli), "list", "--format", "json"]).stdout or "{}") if cli.exists() else {}
    budget = json.loads(run([str(cli), "budget", "--format", "json"]).stdout or "{}") if cli.exists() else {}
    lines = lines_per_tree()
    inv = {
        "claims": claims(build),
        "budget_rows": budget.get("count"),
        "ctest_entries": ctest_entries(build),
        "ctest_entries_test_command": ctest_entries(build, "-LE", "full|mainjob"),
        "benchmarks": benchmarks(build),
        "schemes": len(listing.get("schemes", [])),
        "cli_commands": sum(len(s["verbs"]) for s in listing.get("schemes", [])),
        "lines": {"total": sum(lines.values()), **lines},
    }
    if "--heldout" in argv:
        inv["heldout_checks"] = heldout_checks(cli)
    if "--schemes" in argv:
        per = scheme_files()
        inv["scheme_files"] = {n: {"files": len(fs), "lines": sum(l for _, l in fs)} for n, fs in per.items()}
    if "--parts" in argv:
        per = scheme_files()
        inv["scheme_parts"] = {n: scheme_parts(fs, n) for n, fs in per.items()}
        total = Counter()
        for parts in inv["scheme_parts"].values():
            total.update(parts)
        inv["scheme_parts_total"] = in_part_order(total)
    for k, v in inv.items():
        print(f"{k:28} {v}")
    if "--json" in argv:
        Path(argv[argv.index("--json") + 1]).write_text(json.dumps(inv, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
