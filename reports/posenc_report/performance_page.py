"""performance.md: throughput vs size with the in-run baselines on the same plot, every kernel as a ratio to
its baselines, and the BLAS context of the run."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from . import bench, md, methods
from .gnuplot import Plot, Series

RATIO_KINDS = ("bandwidth", "rmw", "plainloop", "sgemm")
RATIO_HEAD = {"bandwidth": "÷ stream-store B/s", "rmw": "÷ RMW B/s", "plainloop": "× plain loop",
              "sgemm": "× sgemm"}
REPORTED = ("ratio_to_bandwidth", "ratio_to_plainloop", "ratio_to_sgemm")
SIZE_ARGS = ("L", "d", "threads", "dtype")

MATCHING_RULE = """\
Each kernel is compared only with baselines **from the same result file** (the same run), of the same
benchmark family (sgemm: any family), whose name arguments are **identical apart from `dtype`** (so the same
`L`, `d`, `threads`, …). A baseline that names a dtype (`stream_store_f32`, `dtype:f32`) must have the
kernel's dtype; a dtype-less baseline serves every dtype. Baselines are recognised by variant name:
`stream_store*` (memory limit of writing the same bytes), `rmw*` / `read_modify_write*` (memory limit of
in-place updates), `plainloop*` (the loop a user would write, `std::sin` per element), and family or variant
`sgemm` (BLAS sgemm of the same shape). Ratios:

* **÷ stream-store B/s** = kernel bytes/s ÷ baseline bytes/s — the fraction of the memory limit reached
  (1.0 = at the limit);
* **× plain loop** = kernel items/s ÷ plain-loop items/s, **× sgemm** = sgemm time ÷ kernel time —
  speed-ups (> 1: the kernel is faster).

When a counter is missing the ratio falls back to the time ratio of the two runs (marked †), which equals
the throughput ratio because matched runs do the same work. Repetitions: the median aggregate is used
(else the mean, else the median of the repetitions); `scripts/main.sh` runs the repetitions of all benchmarks
in random interleaved order (`--benchmark_enable_random_interleaving`), so that a kernel and its baselines
sample the same stretches of the machine's state (on a shared VM the memory baselines alone moved by up to 20 %
between runs taken minutes apart). Counters the benchmark reported itself
(`ratio_to_bandwidth`, `ratio_to_plainloop`) are shown next to the computed ones as a cross-check.
"""


# Hand-maintained profile notes per scheme (reports/profiles/<scheme>.md): what limits each kernel, measured with
# perf and small harnesses; no run of the main job can produce them (this VM has no hardware counters).
PROFILES_DIR = Path(__file__).resolve().parent.parent / "profiles"
PROFILE_LEAD = ("Not measured by this run: taken by hand with the commands named below, on the machine and commit "
                "they name (`reports/profiles/`). The ratios of this run are in the tables that follow.\n\n")


def _context_rows(name: str, ctx_json: dict, run: str | None = None) -> list:
    meta = methods.from_bench_context(ctx_json)
    fallback = methods.truthy(meta.get("blas_fallback"))
    core, best = meta.get("blas_core"), meta.get("blas_core_best")
    if fallback:
        verdict = (f"❌ **This run used a fallback BLAS core ({core or 'unknown'})**; the best core for this CPU is "
                   f"{best or 'not recorded'}. BLAS-backed numbers (shift via rot/gemm, sgemm baseline) are slower "
                   "than this machine can do.")
    elif fallback is False:
        verdict = f"✅ BLAS core {core or 'unknown'} is not a fallback" + (f" (best: {best})" if best else "") + "."
    else:
        verdict = f"BLAS core {core or '*not recorded*'}; whether it is a fallback was *not recorded*."
    host = []
    for key, label in (("num_cpus", "CPUs"), ("mhz_per_cpu", "MHz/CPU"), ("host_name", "host")):
        if ctx_json.get(key) is not None:
            host.append(f"{label} {ctx_json[key]}")
    if methods.truthy(ctx_json.get("cpu_scaling_enabled")):
        host.append("⚠ CPU frequency scaling was enabled")
    if str(ctx_json.get("library_build_type", "")).lower() == "debug":
        host.append("⚠ Google Benchmark library is a debug build")
    if isinstance(ctx_json.get("load_avg"), list) and ctx_json["load_avg"]:
        host.append("load avg " + " ".join(md.num(x) for x in ctx_json["load_avg"]))
    return [f"- {md.icode(name)}" + (f" (run {md.icode(run)})" if run else "") + f": {verdict} BLAS threads {meta.get('blas_threads', '*not recorded*')}, "
            f"OpenMP threads {meta.get('omp_threads', '*not recorded*')}." + (
                f" Host: {', '.join(host)}." if host else "")]


def _gbs(r):
    return r.bytes_per_second / 1e9 if r.bytes_per_second else None


def _ips(r):
    return r.items_per_second


def _other_args(r) -> str:
    return " ".join(f"{k}:{v}" for k, v in r.args.items() if k not in SIZE_ARGS)


def _plot_groups(recs: list) -> dict:
    """(dtype, threads) -> records of one family's plots; dtype-less runs join every dtype group."""
    groups = defaultdict(list)
    typed = sorted({r.dtype for r in recs if r.dtype})
    for r in recs:
        for dt in [r.dtype] if r.dtype else (typed or [None]):
            groups[(dt, r.threads)].append(r)
    return groups


def _throughput_plot(name: str, title: str, recs: list, value, ylabel: str) -> Plot:
    lines = defaultdict(list)
    for r in recs:
        y, x = value(r), r.size
        if y and x:
            lines[(r.baseline is not None, r.label if r.baseline == "sgemm" else r.variant,
                   _other_args(r))].append((x, y))
    series = []
    for (is_base, variant, other), pts in sorted(lines.items()):
        title_ = (variant or "(no variant)") + (f" {other}" if other else "") + (" (baseline)" if is_base else "")
        series.append(Series(title_, sorted(pts), "linespoints pt 7 ps 0.6 lw 1.5", dashed=is_base))
    size_label = recs[0].size_label if recs else "size"
    return Plot(name=name, title=title, xlabel=f"{size_label} (log scale)", ylabel=ylabel + " (log scale)",
                series=series, logx=2, logy=10)


def _ratio_cells(r, pool) -> tuple:
    cells, used = [], {}
    for kind in RATIO_KINDS:
        base = bench.find_baseline(r, pool, kind)
        value, how = bench.ratio(r, base, kind)
        used[kind] = value
        cells.append("—" if value is None else f"{value:.3g}" + (" †" if how == "time" else ""))
    return cells, used


def _history_cell(history, r, cells) -> list:
    """The "vs previous run" column (only with --history): the change of each of the kernel's ratios."""
    if history is None:
        return []
    if r.baseline is not None:
        return ["—"]
    kinds = [k for k, c in zip(RATIO_KINDS, cells) if c != "—"]
    return [history.cell(r.file, r.name, kinds)]


def _table(recs: list, pool: list, history=None) -> str:
    """All runs of a family with their ratios; ratio columns no run of this family has are left out. With a
    history (report_hook.View), a last column gives each ratio's change since the previous comparable run."""
    rows = []
    for r in sorted(recs, key=lambda r: (r.baseline is not None, r.variant, r.dtype or "", r.threads,
                                         r.size or 0, _other_args(r))):
        cells, _ = _ratio_cells(r, pool) if r.baseline is None else (["—"] * len(RATIO_KINDS), None)
        reported = ", ".join(f"{k.removeprefix('ratio_to_')} {md.num(r.counters[k])}" for k in REPORTED
                             if k in r.counters)
        rows.append([md.code(r.variant + (" (baseline)" if r.baseline else "")), md.cell(r.dtype),
                     md.num(r.threads), md.cell(" ".join(f"{k}:{v}" for k, v in r.args.items()
                                                         if k not in ("threads", "dtype"))),
                     md.num(r.seconds * 1e6) if r.seconds else "—", md.num(_gbs(r)),
                     md.num(r.items_per_second), *cells, reported or "—", md.cell(r.statistic),
                     *_history_cell(history, r, cells)])
    headers = ["variant", "dtype", "threads", "args", "time/iter (µs)", "GB/s", "items/s",
               *(RATIO_HEAD[k] for k in RATIO_KINDS), "reported by benchmark", "statistic"]
    align = ["l", "l", "r", "l", "r", "r", "r", *("r" for _ in RATIO_KINDS), "l", "l"]
    if history is not None:
        headers.append("vs previous run")
        align.append("l")
    first = 7
    keep = [i for i in range(len(headers))
            if not (first <= i < first + len(RATIO_KINDS) or headers[i] == "reported by benchmark")
            or any(row[i] != "—" for row in rows)]
    return md.table([headers[i] for i in keep], [[row[i] for i in keep] for row in rows], [align[i] for i in keep])


def headline(recs: list) -> list:
    """Per kernel (family, variant, dtype, threads): its ratios at the largest size measured."""
    largest = {}
    for r in recs:
        if r.baseline is None and r.size:
            key = (r.file, r.family, r.variant, r.dtype, r.threads, _other_args(r))
            if key not in largest or r.size > largest[key].size:
                largest[key] = r
    out = []
    for key in sorted(largest, key=lambda k: tuple(str(x) for x in k)):
        r = largest[key]
        _, used = _ratio_cells(r, recs)
        out.append({"record": r, **used})
    return out


def _family_body(ctx, file: str, family: str, frecs: list, pool: list) -> str:
    history = ctx.shared.get("history")
    if all(r.baseline for r in frecs):
        return ("Baselines only; they are drawn (dashed) on the plots of the kernels they serve.\n\n"
                + _table(frecs, pool, history))
    # sgemm baselines live in their own family; draw them with the kernels whose shape they match.
    shapes = {r.match_args for r in frecs if r.baseline is None}
    guests = [b for b in pool if b.baseline == "sgemm" and b.family != family and b.match_args in shapes]
    body = ""
    for (dtype, threads), grecs in sorted(_plot_groups(frecs + guests).items(),
                                          key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if all(r.baseline for r in grecs):
            continue
        stem = f"perf-{file}-{family}-{dtype or 'any'}-t{threads}".replace("/", "_")
        what = f"{family}, {dtype or 'any dtype'}, {threads} thread{'s' if threads != 1 else ''}"
        images = [ctx.renderer.image(_throughput_plot(f"{stem}-{suffix}", f"{what}: {unit}", grecs, value, unit),
                                     f"{what} {unit}")
                  for suffix, value, unit in (("gbs", _gbs, "GB/s of output"), ("items", _ips, "items/s"))
                  if any(value(r) for r in grecs)]
        body += md.figure("\n".join(images),
                          f"**{what}:** throughput against size (GB/s of output; items/s); dashed lines are the "
                          "in-run baselines (memory limit, plain loop, sgemm), so each kernel is seen against "
                          "what the machine and a naive implementation do (DESIGN §5).")
    return body + _table(frecs, pool, history)


def build(ctx) -> tuple:
    files = ctx.inputs.bench
    sources = [(f.path.stem, methods.from_bench_context(f.data.get("context"))) for f in files if f.data]
    text = methods.header(ctx, f"Performance: {ctx.scheme}" if ctx.scheme else "Performance", sources)
    broken = [f for f in files if f.error]
    if broken:
        text += md.section("Unreadable benchmark results", "\n".join(
            f"- {md.icode(f.path.name)}: {md.cell(f.error)}" for f in broken))
    loaded = [f for f in files if f.data]
    if not loaded:
        why = ("no `bench-*.json` in the results directory" if not ctx.inputs.file_count("bench")
               else "no readable benchmark file" if files
               else f"no benchmark of scheme `{ctx.scheme}` (names `{ctx.scheme}/<family>/…`) in the benchmark files"
               if ctx.scheme else "no benchmark in the benchmark files")
        text += md.section("Benchmarks", md.not_run("The benchmark suite", why))
        return text, {"ran": False, "headline": [], "fallback": []}

    several = len({f.run for f in loaded}) > 1
    text += md.section("BLAS and machine context", "\n".join(
        row for f in loaded for row in _context_rows(f.path.stem, f.data.get("context") or {},
                                                     f.run if several else None)))
    text += md.section("How kernels are matched to baselines", MATCHING_RULE)
    history = ctx.shared.get("history")
    if history is not None or ctx.shared.get("history_note"):
        text += md.section("Change since the previous run", (history.summary if history is not None else
                                                             f"*{md.cell(ctx.shared['history_note'])}.*")
                           + " The history page: [history.md](../history.md).\n")
    profile = PROFILES_DIR / f"{ctx.scheme}.md" if ctx.scheme else None
    if profile and profile.is_file():
        text += md.section("Where the time goes (profiles taken by hand)", PROFILE_LEAD + profile.read_text().strip() + "\n")
    all_recs, fallback = [], []
    for f in loaded:
        recs = bench.records(f.path.stem, f.data)
        all_recs += recs
        if methods.truthy((f.data.get("context") or {}).get("blas_fallback")):
            fallback.append((f.path.stem, (f.data.get("context") or {}).get("blas_core")))
        if not recs:
            text += md.section(f"{f.path.stem}", md.not_run("This benchmark file", "it holds no successful runs"))
            continue
        by_family = defaultdict(list)
        for r in recs:
            by_family[r.family].append(r)
        for family, frecs in by_family.items():
            text += md.section(f"{f.path.stem}: family `{family}`", _family_body(ctx, f.path.stem, family, frecs,
                                                                                 recs))
    return text, {"ran": True, "headline": headline(all_recs), "fallback": fallback}
