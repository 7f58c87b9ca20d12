"""Entry point: read --results, write the five pages and their SVGs into --out."""
from __future__ import annotations

import argparse
import shutil
import sys
import traceback
from pathlib import Path

from . import accuracy_page, claims_page, figures_page, index_page, inputs, md, methods, performance_page
from .context import Context
from .gnuplot import SVG_SUBDIR, Renderer

# Build order matters: figures reuse accuracy's plots, the index summarises every other page.
BUILDERS = (("claims.md", claims_page.build), ("accuracy.md", accuracy_page.build),
            ("performance.md", performance_page.build), ("figures.md", figures_page.build),
            ("index.md", index_page.build))


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="generate.py", description="posenc report: JSON results -> Markdown + SVG")
    ap.add_argument("--results", required=True, type=Path, help="directory with proofs-*.json, accuracy.json, "
                                                                "bench-*.json")
    ap.add_argument("--out", required=True, type=Path, help="output directory (e.g. reports/latest)")
    ap.add_argument("--cli", help="path to the posenc binary, used for the figures' data")
    ap.add_argument("--repo", type=Path, help="posenc checkout, to link claims to their test sources")
    ap.add_argument("--png", action="store_true", help="also write PNG copies of the plots (for previewing)")
    ap.add_argument("--strict", action="store_true", help="exit 1 if a page could not be generated")
    return ap.parse_args(argv)


def _clean(out: Path) -> None:
    """Remove what a previous run generated (pages and svg/), so stale plots cannot linger."""
    for name, _ in BUILDERS:
        (out / name).unlink(missing_ok=True)
    if (out / SVG_SUBDIR).is_dir():
        shutil.rmtree(out / SVG_SUBDIR)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.results.is_dir():
        print(f"generate.py: warning: results directory {args.results} does not exist; every page will say "
              "'not run'", file=sys.stderr)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    _clean(out)
    ctx = Context(inputs=inputs.load(args.results), out_dir=out, renderer=Renderer(out, png=args.png),
                  repo=args.repo, cli=args.cli)
    errors = []
    for name, build in BUILDERS:
        if name == "index.md":
            ctx.summaries["_errors"] = errors
        try:
            text, summary = build(ctx)
        except Exception as e:                        # one broken page must not take the others down
            traceback.print_exc()
            errors.append((name, f"{type(e).__name__}: {e}"))
            text, summary = (methods.header(ctx, name, []) + md.section(
                "Generator error", f"This page could not be generated: {md.code(f'{type(e).__name__}: {e}')}. "
                "The other pages are unaffected."), {})
        ctx.summaries[name] = summary
        (out / name).write_text(text.rstrip() + "\n", encoding="utf-8")
    for file, why in ctx.inputs.errors():
        print(f"generate.py: warning: {file}: {why}", file=sys.stderr)
    for plot, why in sorted(ctx.renderer.failures.items()):
        if why != "no data points":
            print(f"generate.py: warning: plot {plot}: {why}", file=sys.stderr)
    print(f"generate.py: wrote {', '.join(n for n, _ in BUILDERS)} to {out}", file=sys.stderr)
    return 1 if (errors and args.strict) else 0
