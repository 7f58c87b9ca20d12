"""<scheme>/index.md: one scheme in a few lines and numbers — its summary row, what was proved, the throughput
headline, headline figures — with links to its other pages."""
from __future__ import annotations

from . import md, methods, runs, summary

KIND_WORD = {"bandwidth": "memory limit", "rmw": "memory limit", "plainloop": "plain loop", "sgemm": "sgemm"}
PAGE_BLURBS = (
    ("claims.md", "Claims ledger", "every claim with its formula, source, oracle kind, cases, max error vs bound, "
                                   "status, worst input and region coverage"),
    ("accuracy.md", "Accuracy", "the budget table (claimed vs measured, headroom, why each bound holds) and "
                                "error-vs-position plots per dtype"),
    ("performance.md", "Performance", "throughput vs size with in-run baselines, every kernel as a ratio to "
                                      "them, and the BLAS core used"),
    ("figures.md", "Figures", "the scheme's own figures (from its report module) and the accuracy plots"),
)


def _inputs(ctx) -> str:
    rows = []
    for f in ctx.inputs.data_files():
        rows.append((md.code(f.path.name), md.code(f.run) if f.run else "—",
                     f"unreadable: {md.cell(f.error)}" if f.error else "read"))
    if not rows:
        return "*No result file holds anything of this scheme.*\n"
    return md.table(["file", "run", "status"], rows)


def _proved(ctx) -> str:
    lines = []
    c = ctx.summaries.get("claims.md", {})
    if c.get("ran"):
        lines.append(f"- **Claims:** {c['claims']} claims, **{c['passed']} passed**, {c['failed']} failed, "
                     f"{c['not_run']} not run" + (f", {c['other']} other" if c.get("other") else "")
                     + f"; {c['cases']:,} generated cases in total.")
        if c["failed_ids"]:
            lines.append("  - ❌ Failed: " + ", ".join(md.icode(i) for i in c["failed_ids"])
                         + " — see [claims](claims.md#failed-claims).")
    else:
        lines.append("- **Claims:** not run (no proof results for this scheme).")
    a = ctx.summaries.get("accuracy.md", {})
    if a.get("ran") and a.get("rows"):
        lines.append(f"- **Accuracy budget:** {a['met']} of {a['rows']} rows met"
                     + (f", ❌ {a['exceeded']} exceeded ({', '.join(map(md.icode, a['exceeded_ids']))})"
                        if a["exceeded"] else "")
                     + (f", {a['not_measured']} not measured" if a["not_measured"] else "") + ".")
        for (dtype, regime), r in sorted(a["worst_by_dtype"].items()):
            short, _ = md.clip(r.get("worst_input"))
            lines.append(f"  - largest measured {dtype} error ({regime} regime, any quantity): **{md.num(r['measured_max'])}** "
                         f"{md.icode(r.get('metric'))} (bound {md.num(r.get('bound'))}, row {md.icode(r.get('id'))}, "
                         f"worst input {md.icode(short)})")
    else:
        lines.append("- **Accuracy budget:** not run (no accuracy results for this scheme).")
    p = ctx.summaries.get("performance.md", {})
    if p.get("ran"):
        for name, core in p.get("fallback", []):
            lines.append(f"- ❌ **{name} ran on a fallback BLAS core ({core})** — BLAS-backed timings are not "
                         "representative; see [performance](performance.md#blas-and-machine-context).")
    else:
        lines.append("- **Performance:** not run (no benchmark results for this scheme).")
    return "\n".join(lines) + "\n"


def _throughput(ctx) -> str:
    head = ctx.summaries.get("performance.md", {}).get("headline") or []
    if not head:
        return ""
    def r(x):
        return "—" if x is None else f"{x:.3g}"
    files = {h["record"].file for h in head}
    file_runs = {f.path.stem: f.run for f in ctx.inputs.bench}
    with_run = len({file_runs.get(f) for f in files}) > 1
    rows = [(md.code(h["record"].label), md.cell(h["record"].dtype), md.num(h["record"].threads),
             md.cell(" ".join(f"{k}:{v}" for k, v in h["record"].args.items() if k not in ("threads", "dtype"))),
             r(h["bandwidth"] if h["bandwidth"] is not None else h["rmw"]), r(h["plainloop"]), r(h["sgemm"]))
            + ((md.code(h["record"].file),) if len(files) > 1 else ())
            + ((md.code(file_runs.get(h["record"].file)),) if with_run else ())
            for h in head]
    headers = ["kernel", "dtype", "threads", "args", "÷ memory limit", "× plain loop", "× sgemm"]
    headers += (["file"] if len(files) > 1 else []) + (["run"] if with_run else [])
    history = ctx.shared.get("history")
    if history is not None:
        rows = [row + (_trend(history, h),) for row, h in zip(rows, head)]
        headers.append("trend vs previous run")
    return ("Each kernel at its largest size: fraction of the memory limit reached and speed-ups over the "
            "in-run baselines (matching rule on the [performance](performance.md) page)."
            + (" Trend: ▲/▼ only where the ratio changed significantly since the previous comparable run "
               "([history](../history.md))." if history is not None else "") + "\n\n"
            + md.table(headers, rows, ["l", "l", "r", "l", "r", "r", "r"] + ["l"] * (len(headers) - 7)))


def _trend(history, h) -> str:
    """Arrows for the headline kernel's ratios that moved significantly (report_hook.View.arrow)."""
    r = h["record"]
    marks = [f"{KIND_WORD[k]} {history.arrow(r.file, r.name, k)}" for k in KIND_WORD
             if h.get(k) is not None and history.arrow(r.file, r.name, k)]
    return "<br>".join(marks)


def _about(ctx) -> str:
    entry = ctx.inputs.catalogue_entry(ctx.scheme)
    if entry is None:
        return (f"*`{ctx.scheme}` is not listed in `schemes.json` (`posenc list --format json`)"
                + (": that file was not found*" if ctx.inputs.schemes_file is None else "*") + ".\n")
    text = (md.cell(entry["summary"]) + "\n\n") if entry.get("summary") else ""
    if entry["presets"]:
        text += "**Presets** (from `posenc list`):\n\n" + md.table(
            ["preset", "convention", "implementation", "pinned at"],
            [(md.code(p["name"]), md.cell(p["summary"]), md.cell(p["implementation"]), md.code(p["commit"]))
             for p in entry["presets"]])
    return text or "*No summary or presets recorded.*\n"


def build(ctx) -> tuple:
    inp = ctx.inputs
    metas = (inp.proofs.metas + inp.accuracy.metas
             + [(f.path.stem, methods.from_bench_context(f.data.get("context"))) for f in inp.bench if f.data])
    text = methods.header(ctx, f"{ctx.scheme} — posenc report", metas)
    try:
        row = summary.compute(ctx)
    except Exception as e:                                # the rest of the page still gets written
        row = f"{type(e).__name__}: {e}"
        ctx.problems.append((f"{ctx.scheme}/index.md", f"summary row: {row}"))
    text += md.section("Summary", summary.table([(ctx.scheme, row)], ctx.main_run) + "\n" + _about(ctx))
    text += md.section("What this run proved", _proved(ctx))
    throughput = _throughput(ctx)
    if throughput:
        text += md.section("Throughput headline", throughput)
    figs = ctx.summaries.get("figures.md", {}).get("figures") or []
    if figs:
        text += md.section("Headline figures", "".join(md.figure(img, cap) for img, cap in figs[:2]))
    text += md.section("Pages", "\n".join(f"- [{title}]({name}) — {blurb}" for name, title, blurb in PAGE_BLURBS)
                       + "\n- [All schemes](../index.md) — the overview, with the run's methods")
    text += md.section("Inputs", _inputs(ctx) + (
        f"\nThe overview's run is {md.icode(ctx.main_run)}.\n" if runs.needs_column(inp.runs(), ctx.main_run)
        and ctx.main_run else ""))
    errors = ctx.summaries.get("_errors") or []
    if errors:
        text += md.section("Generator problems", "\n".join(f"- {md.icode(p)}: {md.cell(e)}" for p, e in errors))
    return text, {"row": row}
