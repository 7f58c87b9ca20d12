"""index.md: what this run proved, in a few lines and numbers, with links to the pages."""
from __future__ import annotations

from . import md, methods

PAGE_BLURBS = (
    ("claims.md", "Claims ledger", "every claim with its formula, source, oracle kind, cases, max error vs bound, "
                                   "status, worst input and region coverage"),
    ("accuracy.md", "Accuracy", "the budget table (claimed vs measured, headroom, why each bound holds) and "
                                "error-vs-position plots per dtype"),
    ("performance.md", "Performance", "throughput vs size with in-run baselines, every kernel as a ratio to "
                                      "them, and the BLAS core used"),
    ("figures.md", "Figures", "the PE heatmap, PE(t)·PE(t+k) vs k, the same through random linear maps, "
                              "preset frequencies"),
)


def _inputs(ctx) -> str:
    inp = ctx.inputs
    def names(files):
        return ", ".join(md.code(f.path.name) + (" (unreadable)" if f.error else "") for f in files) or "*none*"
    rows = [("proofs-*.json", names(inp.proofs.files)), ("accuracy*.json", names(inp.accuracy.files)),
            ("bench-*.json", names(inp.bench)),
            ("posenc CLI", md.code(ctx.cli) if ctx.cli else "*not given* (figures computed in Python)")]
    return md.table(["input", "files read"], [(md.code(a), b) for a, b in rows])


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
        lines.append("- **Claims:** not run (no proof results).")
    a = ctx.summaries.get("accuracy.md", {})
    if a.get("ran") and a.get("rows"):
        lines.append(f"- **Accuracy budget:** {a['met']} of {a['rows']} rows met"
                     + (f", ❌ {a['exceeded']} exceeded ({', '.join(map(md.icode, a['exceeded_ids']))})"
                        if a["exceeded"] else "")
                     + (f", {a['not_measured']} not measured" if a["not_measured"] else "") + ".")
        for (dtype, regime), r in sorted(a["worst_by_dtype"].items()):
            lines.append(f"  - largest measured {dtype} error ({regime} regime, any quantity): **{md.num(r['measured_max'])}** "
                         f"{md.icode(r.get('metric'))} (bound {md.num(r.get('bound'))}, row {md.icode(r.get('id'))}, "
                         f"worst input {md.icode(r.get('worst_input'))})")
    else:
        lines.append("- **Accuracy budget:** not run (no accuracy results).")
    p = ctx.summaries.get("performance.md", {})
    if p.get("ran"):
        for name, core in p.get("fallback", []):
            lines.append(f"- ❌ **{name} ran on a fallback BLAS core ({core})** — BLAS-backed timings are not "
                         "representative; see [performance](performance.md#blas-and-machine-context).")
    else:
        lines.append("- **Performance:** not run (no benchmark results).")
    return "\n".join(lines) + "\n"


def _throughput(ctx) -> str:
    head = ctx.summaries.get("performance.md", {}).get("headline") or []
    if not head:
        return ""
    def r(x):
        return "—" if x is None else f"{x:.3g}"
    rows = [(md.code(h["record"].label), md.cell(h["record"].dtype), md.num(h["record"].threads),
             md.cell(" ".join(f"{k}:{v}" for k, v in h["record"].args.items() if k not in ("threads", "dtype"))),
             r(h["bandwidth"] if h["bandwidth"] is not None else h["rmw"]), r(h["plainloop"]), r(h["sgemm"]))
            for h in head]
    return ("Each kernel at its largest size: fraction of the memory limit reached and speed-ups over the "
            "in-run baselines (matching rule on the [performance](performance.md) page).\n\n"
            + md.table(["kernel", "dtype", "threads", "args", "÷ memory limit", "× plain loop", "× sgemm"], rows,
                       ["l", "l", "r", "l", "r", "r", "r"]))


def build(ctx) -> tuple:
    metas = (ctx.inputs.proofs.metas + ctx.inputs.accuracy.metas
             + [(f.path.stem, methods.from_bench_context(f.data.get("context"))) for f in ctx.inputs.bench
                if f.data])
    text = methods.header(ctx, "posenc report", metas)
    text += md.section("What this run proved", _proved(ctx))
    throughput = _throughput(ctx)
    if throughput:
        text += md.section("Throughput headline", throughput)
    text += md.section("Pages", "\n".join(f"- [{title}]({name}) — {blurb}" for name, title, blurb in PAGE_BLURBS))
    figs = ctx.summaries.get("figures.md", {}).get("figures") or []
    if figs:
        text += md.section("Headline figures", "".join(md.figure(img, cap) for img, cap in figs[:2]))
    text += md.section("Inputs", _inputs(ctx))
    errors = ctx.summaries.get("_errors") or []
    if errors:
        text += md.section("Generator problems", "\n".join(f"- {md.icode(p)}: {md.cell(e)}" for p, e in errors))
    return text, {}
