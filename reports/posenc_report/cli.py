"""Entry point: read --results, write the overview and one directory of pages per scheme into --out:

    <out>/index.md                     overview: methods (once), the Schemes table, project-wide totals
    <out>/<scheme>/index.md            the scheme: summary row, what was proved, throughput, headline figures
    <out>/<scheme>/claims.md, accuracy.md, performance.md, figures.md, svg/
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from pathlib import Path

from . import (accuracy_page, claims_page, figures_page, index_page, inputs, md, methods, overview_page,
               performance_page, reliability_page, schemes, summary)
from .context import PAGES, Context
from .gnuplot import SVG_SUBDIR, Renderer

# Build order matters: figures reuse accuracy's plots, the scheme's index summarises its other pages.
BUILDERS = (("claims.md", claims_page.build), ("accuracy.md", accuracy_page.build),
            ("performance.md", performance_page.build), ("figures.md", figures_page.build),
            ("index.md", index_page.build))
SCHEME_PAGES = tuple(name for name, _ in PAGES)
# Top-level pages of this and the earlier (one-scheme) layout.
TOP_PAGES = ("index.md", "claims.md", "accuracy.md", "performance.md", "figures.md", reliability_page.PAGE,
             "history.md")
HISTORY_PAGE = "history.md"
PLOT_SUFFIXES = (".svg", ".png")
RESERVED = {SVG_SUBDIR, *TOP_PAGES}


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="generate.py", description="posenc report: JSON results -> Markdown + SVG")
    ap.add_argument("--results", required=True, type=Path, help="directory with run.json, schemes.json, "
                                                                "proofs-*.json, accuracy.json, bench-*.json")
    ap.add_argument("--out", required=True, type=Path, help="output directory (e.g. reports/latest)")
    ap.add_argument("--repo", type=Path, help="posenc checkout, to link claims to their test sources")
    ap.add_argument("--png", action="store_true", help="also write PNG copies of the plots (for previewing)")
    ap.add_argument("--strict", action="store_true", help="exit 1 if a page could not be generated")
    ap.add_argument("--history", type=Path, metavar="DB",
                    help="benchmark history (scripts/history.py): write history.md, compare with the previous run "
                         "(needs numpy and scipy; without them the history features are skipped with a note)")
    return ap.parse_args(argv)


def scheme_dir(name: str, taken=()) -> str:
    """Directory name of a scheme's pages: the name with anything but [A-Za-z0-9_.-] replaced, never hidden,
    never one of the generator's own file or directory names, and not one in `taken`."""
    d = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "_"
    d = f"scheme-{d}" if d in RESERVED else d
    base, n = d, 2
    while d in taken:
        d, n = f"{base}-{n}", n + 1
    return d


def _generated(path: Path) -> bool:
    """Whether `path` is a page this generator wrote (it carries the generated-file note near its top)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return md.GENERATED_MARK in f.read(4096)
    except OSError:
        return False


def _clean_plots(svg: Path) -> None:
    if svg.is_dir() and not svg.is_symlink():
        for f in svg.iterdir():
            if f.is_file() and f.suffix in PLOT_SUFFIXES:
                f.unlink()
        _rmdir_if_empty(svg)


def _rmdir_if_empty(d: Path) -> None:
    try:
        d.rmdir()
    except OSError:
        pass


def clean(out: Path) -> None:
    """Remove what earlier runs generated, in this layout or the earlier one-scheme layout, so stale pages and
    plots cannot linger: top-level pages that carry the generated-file note, top-level svg/ plots, and every
    subdirectory whose index.md carries the note (its pages that carry it and its svg/ plots; the directory
    itself if nothing else is left). Files the generator did not write are kept."""
    for name in TOP_PAGES:
        if (out / name).is_file() and _generated(out / name):
            (out / name).unlink()
    _clean_plots(out / SVG_SUBDIR)
    for d in sorted(p for p in out.iterdir() if p.is_dir() and not p.is_symlink() and p.name != SVG_SUBDIR):
        if not ((d / "index.md").is_file() and _generated(d / "index.md")):
            continue
        for name in SCHEME_PAGES:
            if (d / name).is_file() and _generated(d / name):
                (d / name).unlink()
        _clean_plots(d / SVG_SUBDIR)
        _rmdir_if_empty(d)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


def _error_page(ctx, name: str, why: str) -> str:
    return (methods.header(ctx, f"{ctx.scheme}: {name}" if ctx.scheme else name, []) + md.section(
        "Generator error", f"This page could not be generated: {md.code(why, table=False)}. The other pages are "
        "unaffected."))


def _history(args, out: Path, main_run, problems: list) -> dict:
    """shared["history"] (posenc_history.report_hook.View) and history.md, when --history is given. The history
    package needs numpy and scipy; without them, or with an unusable database, the report is written without its
    history features and history.md says why."""
    if not args.history:
        return {}
    note = md.generated_note(Path(os.path.relpath(Path(__file__).resolve().parent.parent / "README.md",
                                                  out.resolve())).as_posix()) + "\n\n"
    try:
        from posenc_history import report_hook
        from posenc_history.errors import HistoryError
    except ImportError as e:
        why = (f"history features skipped: the history package needs numpy and scipy, which {sys.executable} "
               f"cannot import ({e}); run the generator with /usr/bin/python3 (Debian python3-numpy, python3-scipy)")
        _write(out / HISTORY_PAGE, f"# posenc history\n\n{note}*{why}.*\n")
        return {"history_note": why}
    try:
        view = report_hook.attach(args.history, args.results, main_run)
        text = report_hook.history_page(args.history, out, Renderer(out, png=args.png), note)
    except HistoryError as e:
        why = f"history features skipped: {e}"
        _write(out / HISTORY_PAGE, f"# posenc history\n\n{note}*{why}.*\n")
        return {"history_note": why}
    except Exception as e:                       # a broken history must not take the report down
        traceback.print_exc()
        problems.append((HISTORY_PAGE, f"{type(e).__name__}: {e}"))
        return {"history_note": f"history features failed: {type(e).__name__}: {e}"}
    _write(out / HISTORY_PAGE, text)
    return {"history": view}


def build_scheme(ctx) -> list:
    """Write one scheme's pages; return [(page, error)] for those that failed."""
    errors = []
    for name, build in BUILDERS:
        if name == "index.md":
            ctx.summaries["_errors"] = errors
        try:
            text, result = build(ctx)
        except Exception as e:                        # one broken page must not take the others down
            traceback.print_exc()
            why = f"{type(e).__name__}: {e}"
            errors.append((name, why))
            ctx.problems.append((f"{ctx.scheme}/{name}", why))
            text, result = _error_page(ctx, name, why), {}
        ctx.summaries[name] = result
        _write(ctx.out_dir / name, text)
    return errors


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.results.is_dir():
        print(f"generate.py: warning: results directory {args.results} does not exist; every page will say "
              "'not run'", file=sys.stderr)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    clean(out)
    data = inputs.load(args.results)
    modules, module_problems = schemes.discover()
    main_run = data.main_run()
    problems, renderers = list(module_problems), []
    shared = _history(args, out, main_run, problems)
    if "history_note" in shared:
        print(f"generate.py: warning: {shared['history_note']}", file=sys.stderr)
    octx = Context(inputs=data, out_dir=out, renderer=None, repo=args.repo, main_run=main_run,
                   problems=problems, shared=shared)
    rows, dirs, failed = [], {}, False
    for name in data.scheme_names(modules):
        dirs[name] = scheme_dir(name, set(dirs.values()))
        renderer = Renderer(out / dirs[name], png=args.png)
        renderers.append((dirs[name], renderer))
        ctx = Context(inputs=data.scoped(name), out_dir=out / dirs[name], renderer=renderer, repo=args.repo,
                      scheme=name, module=modules.get(name), main_run=main_run, problems=problems,
                      shared=shared)
        failed |= bool(build_scheme(ctx))
        row = ctx.summaries.get("index.md", {}).get("row")
        if row is None:                                # the scheme's index failed: compute the row on its own
            try:
                row = summary.compute(ctx)
            except Exception as e:
                row = f"{type(e).__name__}: {e}"
        rows.append((name, row))
    try:  # the project-wide reliability page (sanitizers, coverage, fuzzing, faults, bad inputs)
        text, shared["reliability_line"] = reliability_page.build(octx)
    except Exception as e:
        traceback.print_exc()
        why = f"{type(e).__name__}: {e}"
        failed = True
        problems.append((reliability_page.PAGE, why))
        text = _error_page(octx, "reliability", why)
        shared["reliability_line"] = f"[Reliability]({reliability_page.PAGE}): generator error"
    _write(out / reliability_page.PAGE, text)
    try:
        text = overview_page.build(octx, rows, dirs)
    except Exception as e:
        traceback.print_exc()
        why = f"{type(e).__name__}: {e}"
        failed = True
        text = (f"# posenc report\n\n{md.generated_note(octx.readme_link)}\n\n" + md.section(
            "Generator error", f"The overview could not be generated: {md.code(why, table=False)}. The scheme "
            "pages are unaffected: " + ", ".join(f"[{n}]({d}/index.md)" for n, d in dirs.items()) + "."))
    _write(out / "index.md", text)
    for file, why in data.errors():
        print(f"generate.py: warning: {file}: {why}", file=sys.stderr)
    for where, why in module_problems:
        print(f"generate.py: warning: {where}: {why}", file=sys.stderr)
    for d, renderer in renderers:
        for plot, why in sorted(renderer.failures.items()):
            if why != "no data points":
                print(f"generate.py: warning: plot {d}/{plot}: {why}", file=sys.stderr)
    print(f"generate.py: wrote index.md and {len(dirs)} scheme directories "
          f"({', '.join(dirs.values()) or 'none'}) to {out}", file=sys.stderr)
    return 1 if (failed and args.strict) else 0
