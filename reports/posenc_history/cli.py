"""scripts/history.py: the command line of the history (subcommands import, import-git, list, compare, changes,
page). Exit status: 0 fine, 1 a regression (compare), 2 a usage error or an unusable database, each with one line
on stderr naming what was given and what is accepted."""
from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import sys
from pathlib import Path

from . import compare, importer, page, render, schema, store, trends
from .errors import HistoryError

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DB = ROOT / "out" / "history.sqlite"
DB_ENV = "POSENC_HISTORY_DB"
PROG = "history.py"


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2)."""

    def error(self, message):
        raise HistoryError(f"{message} (see {self.prog} --help)")


def _fraction(name: str, lo: float, hi: float):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number in ({lo:g}, {hi:g}), got '{text}'") from None
        if not lo < v < hi:
            raise argparse.ArgumentTypeError(f"must be in ({lo:g}, {hi:g}), got {text}")
        return v
    return parse


def _positive_int(name: str, minimum: int):
    def parse(text):
        if not re.fullmatch(r"\d+", text or "") or int(text) < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got '{text}'")
        return int(text)
    return parse


def _regex(text):
    try:
        return re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"'{text}' is not a regular expression: {e}") from None


def _common(p):
    p.add_argument("--db", type=Path, help=f"history file (default: ${DB_ENV} or {DEFAULT_DB.relative_to(ROOT)})")


def _import_parsers(sub) -> None:
    p = sub.add_parser("import", help="import a results directory (run.json, bench-*.json, accuracy.json, "
                                      "proofs-*.json)")
    p.add_argument("results", type=Path, metavar="RESULTS_DIR")
    p.add_argument("--mode", help="record this mode (default: run.json's)")
    _common(p)
    p = sub.add_parser("import-git", help="import every committed version of reports/latest/data/")
    p.add_argument("--repo", type=Path, default=Path("."), help="the posenc checkout (default: .)")
    p.add_argument("--path", default=importer.GIT_DATA_DIR, help=f"(default: {importer.GIT_DATA_DIR})")
    p.add_argument("--mode", help="record this mode (default: each run.json's)")
    _common(p)


def _compare_parser(sub) -> None:
    p = sub.add_parser("compare", help="BASE vs NEW: changes with intervals and U tests; exit 1 on a regression")
    p.add_argument("base", metavar="BASE", help="a run id, a commit prefix, latest or previous")
    p.add_argument("new", metavar="NEW", help="a run id, a commit prefix, latest or previous")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--threshold", type=_fraction("--threshold", 0.0, 10.0), default=compare.DEFAULT_THRESHOLD,
                   help=f"smallest relative change that counts (default {compare.DEFAULT_THRESHOLD:g})")
    p.add_argument("--alpha", type=_fraction("--alpha", 0.0, 1.0), default=compare.DEFAULT_ALPHA,
                   help=f"significance level of the U test (default {compare.DEFAULT_ALPHA:g})")
    p.add_argument("--correction", choices=compare.CORRECTIONS, default="none",
                   help="multiple-comparison adjustment across the gated comparisons (default none)")
    p.add_argument("--gate", choices=compare.GATES, default="auto",
                   help="which comparisons decide the exit status (default auto: ratios, and times of kernels "
                        "without a baseline)")
    p.add_argument("--allow-missing-base", action="store_true",
                   help="when BASE names no run (e.g. 'previous' on a first run), say so and exit 0")
    _common(p)


def _list_parser(sub) -> None:
    p = sub.add_parser("list", help="the runs, newest first")
    p.add_argument("--format", choices=("md", "json"), default="md")
    _common(p)


def _history_parsers(sub) -> None:
    p = sub.add_parser("changes", help="E-Divisive change points of every ratio and budget-row series (and, with "
                                       "--times, absolute-time series per machine)")
    p.add_argument("--filter", type=_regex, help="only series whose benchmark or row name matches")
    p.add_argument("--times", action="store_true", help="also each benchmark's absolute time, per machine fingerprint")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--min-size", type=_positive_int("--min-size", 2), default=trends.changepoints.DEFAULT_MIN_SIZE)
    p.add_argument("--sig", type=_fraction("--sig", 0.0, 1.0), default=trends.changepoints.DEFAULT_SIG)
    _common(p)
    p = sub.add_parser("page", help="write DIR/history.md and its SVG trend plots")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    _common(p)


def parser() -> Parser:
    ap = Parser(prog=PROG, description="posenc benchmark and accuracy history (SQLite): import runs, compare two, "
                                       "find change points, write the history page.")
    sub = ap.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")
    _import_parsers(sub)
    _list_parser(sub)
    _compare_parser(sub)
    _history_parsers(sub)
    return ap


def db_path(args) -> Path:
    return args.db or (Path(os.environ[DB_ENV]) if os.environ.get(DB_ENV) else DEFAULT_DB)


def cmd_import(args) -> int:
    conn = schema.open_db(db_path(args))
    status, _, run = importer.import_dir(conn, args.results, mode=args.mode)
    print(f"{status}: {run.run_id} ({len(run.benches)} benchmarks, {len(run.ratios)} ratios, {len(run.budget)} "
          f"budget rows, {len(run.claims)} claims) -> {db_path(args)}")
    return 0


def cmd_import_git(args) -> int:
    conn = schema.open_db(db_path(args))
    done = importer.import_git(conn, args.repo, mode=args.mode, path=args.path)
    for commit, status, run_id in done:
        print(f"{commit[:12]}: {status}" + (f": {run_id}" if run_id else ""))
    print(f"{sum(1 for _, s, _ in done if s == 'imported')} of {len(done)} committed versions of {args.path} "
          f"imported -> {db_path(args)}")
    return 0


def cmd_list(args) -> int:
    conn = schema.open_db(db_path(args), create=False)
    runs = store.list_runs(conn)
    if not runs:
        raise HistoryError(f"the history {db_path(args)} holds no runs yet; import one first")
    print(render.runs_json(runs) if args.format == "json" else render.runs_table(runs), end="")
    return 0


def cmd_compare(args) -> int:
    conn = schema.open_db(db_path(args), create=False)
    new_pk = store.resolve(conn, args.new)
    try:
        base_pk = store.resolve(conn, args.base, relative_to=new_pk)
    except HistoryError as e:
        if not args.allow_missing_base:
            raise
        print(f"nothing to compare: {e}")
        return 0
    settings = compare.Settings(alpha=args.alpha, threshold=args.threshold, correction=args.correction,
                                gate=args.gate)
    c = compare.compare(store.load_run(conn, base_pk), store.load_run(conn, new_pk), settings)
    print(render.compare_json(c) if args.format == "json" else render.compare_md(c))
    return 1 if c.regressed else 0


def cmd_changes(args) -> int:
    conn = schema.open_db(db_path(args), create=False)
    if not store.ordered(conn):
        raise HistoryError(f"the history {db_path(args)} holds no runs yet; import one first")
    keep = args.filter.search if args.filter else None
    series = [trends.detect(s, min_size=args.min_size, sig_level=args.sig) for s in trends.all_series(
        conn, times=args.times, name_filter=keep)]
    if args.format == "json":
        print(json.dumps({"series": [{"label": s.label, "what": s.what, "key": list(s.key), "runs": len(s.points),
                                      "change_points": s.change_points} for s in series]}, indent=2))
    else:
        print("# posenc history: change points\n\n" + page.what_changed_section(series))
    return 0


def cmd_page(args) -> int:
    conn = schema.open_db(db_path(args), create=False)
    args.out.mkdir(parents=True, exist_ok=True)
    text = page.build(conn, args.out, note="> Generated by `scripts/history.py page`; do not edit.\n\n")
    (args.out / "history.md").write_text(text.rstrip() + "\n", encoding="utf-8")
    print(f"wrote {args.out / 'history.md'}")
    return 0


COMMANDS = {"import": cmd_import, "import-git": cmd_import_git, "list": cmd_list, "compare": cmd_compare,
            "changes": cmd_changes, "page": cmd_page}


def main(argv=None) -> int:
    try:
        args = parser().parse_args(argv)
        if not args.command:
            raise HistoryError(f"a command is required: {', '.join(COMMANDS)} (see {PROG} --help)")
        return COMMANDS[args.command](args)
    except HistoryError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
        raise  # a defect of this program (e.g. a value it cannot store), not of the database: show the traceback
    except sqlite3.DatabaseError as e:
        print(f"{PROG}: error: the history database is damaged or unreadable ({e}); restore it from a copy or "
              "give another --db", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
