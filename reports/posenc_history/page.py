"""history.md: the runs, what changed (E-Divisive change points, each named by the first run after it and its
commit), and trend plots (SVG through posenc_report.gnuplot) of every scheme's headline kernels as ratios to
their in-run baselines and of every scheme's worst budget row as measured ÷ bound, one run per x position,
labelled by commit, with the noise band of each point and the change points marked."""
from __future__ import annotations

import re
from pathlib import Path

from posenc_report import bench, md, schemes, summary
from posenc_report.gnuplot import Plot, Renderer, Series as PlotSeries

from . import render, store, trends

TITLE = "posenc history: performance and accuracy over runs"
RECENT_RUNS = 20


def _records(run) -> list:
    """The latest run's benchmarks as posenc_report.bench.Record (for summary.speed, which picks headlines)."""
    return [bench.Record(file=b.file, name=b.name, family=b.family, variant=b.variant, args=b.args, dtype=b.dtype,
                         threads=b.threads, seconds=b.seconds, bytes_per_second=b.bytes_per_second,
                         items_per_second=b.items_per_second, statistic=b.statistic, baseline=b.baseline_kind,
                         scheme=b.scheme) for b in run.benches]


def headline_keys(run, modules: dict) -> list:
    """[(scheme, spec, (file, kernel, kind))] of every scheme's headline kernels in `run` (as summary.speed
    chooses them for the report's Schemes table: the best ratio at the largest size)."""
    recs = _records(run)
    out = []
    for name in sorted(modules):
        mine = [r for r in recs if r.scheme == name]
        for h in summary.speed(mine, modules[name].HEADLINE_KERNELS):
            if h["record"] is not None:
                out.append((name, h["spec"], (h["record"].file, h["record"].name, h["spec"]["baseline"])))
    return out


def worst_rows(run) -> list:
    """[(scheme, row id)]: per scheme, the budget row with the largest measured ÷ bound in `run`."""
    best = {}
    for b in run.budget:
        m, bound = b.get("measured"), b.get("bound")
        if not (isinstance(m, (int, float)) and isinstance(bound, (int, float)) and bound > 0):
            continue
        scheme = b.get("scheme") or "unspecified"
        if scheme not in best or m / bound > best[scheme][0]:
            best[scheme] = (m / bound, b["row_id"])
    return [(s, best[s][1]) for s in sorted(best)]


def _stem(text: str) -> str:
    return "history-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:120]


def plot(series: trends.Series, ylabel: str) -> Plot:
    pts = series.points
    xs = list(range(1, len(pts) + 1))
    band = [(x, p["lo"], p["hi"]) for x, p in zip(xs, pts) if p["lo"] is not None]
    lines = [PlotSeries("bootstrap 95 % band of the run's median", band, "filledcurves fs transparent solid 0.25 "
                        "noborder", using="1:2:3", colour="#56B4E9"),
             PlotSeries("median of the run's repetitions" if series.what != "budget" else "measured ÷ bound",
                        [(x, p["value"]) for x, p in zip(xs, pts)], "linespoints pt 7 ps 0.7 lw 1.5",
                        colour="#0072B2")]
    if series.what == "budget":
        lines.append(PlotSeries("bound", [(xs[0], 1.0), (xs[-1], 1.0)], "lines lw 1", dashed=True,
                                colour="#D55E00"))
    extra = ["set xtics rotate by -45 font ',9'", "set offsets 0.5, 0.5, 0, 0"]
    extra += [f"set arrow from {cp['index'] + 0.5}, graph 0 to {cp['index'] + 0.5}, graph 1 nohead dt 2 "
              "lc rgb '#CC79A7' lw 1.5" for cp in series.change_points]
    return Plot(name=_stem("-".join(map(str, series.key))), title=series.label, xlabel="run (commit)",
                ylabel=ylabel, series=lines, xtics=[(p["commit"], x) for x, p in zip(xs, pts)], extra=extra,
                size=(900, 420))


def _cp_text(series, cp) -> str:
    mark = "▼" if trends.worse(series, cp) else "▲"
    p = f", p = {cp['p']:.3g}" if cp.get("p") is not None else ""
    return (f"{mark} {md.icode(series.label)}: {md.num(cp['before'], 4)} → {md.num(cp['after'], 4)} "
            f"({render.pct(cp['change'])}{p})")


def what_changed_section(series_list: list) -> str:
    groups = trends.what_changed(series_list)
    if not groups:
        return ("No change point: no series has a step that E-Divisive (permutation test, p < 0.05, at least "
                "3 runs on each side) finds significant.\n")
    out = []
    for run, items in groups:
        out.append(f"- **First run after the change: {md.icode(run['run_id'])}** (commit {md.icode(run['commit'])}, "
                   f"{run['started']}):\n" + "\n".join(f"  - {_cp_text(s, cp)}" for s, cp in items))
    return ("Each change point is named by the first run after it; ▼ worse, ▲ better (for ratios larger is "
            "better, for times and measured ÷ bound smaller is better). Values are the medians of the segments before "
            "and after.\n\n" + "\n".join(out) + "\n")


def _runs_section(conn) -> str:
    runs = store.list_runs(conn)
    shown = runs[:RECENT_RUNS]
    more = f"\n{len(runs) - len(shown)} older runs not listed (`history.py list` lists all).\n" if len(runs) > len(
        shown) else ""
    return render.runs_table(shown) + more


def _figure(renderer, series, ylabel, caption) -> str:
    if len(series.points) < 2:
        return f"*{md.icode(series.label)}: {len(series.points)} run(s) so far, nothing to plot yet.*\n\n"
    return md.figure(renderer.image(plot(series, ylabel), series.label), caption)


def _headlines(conn, renderer, run, modules) -> str:
    out = ""
    for scheme, spec, key in headline_keys(run, modules):
        s = trends.detect(trends.ratio_series(conn, *key))
        kind = trends.KIND_TEXT.get(key[2], key[2])
        out += _figure(renderer, s, f"kernel ÷ {kind} (larger is better)",
                       f"**{scheme}:** {md.cell(spec.get('what') or s.label)} — {md.icode(key[1])} ({md.icode(key[0])})"
                       f", one point per run (median of the per-repetition ratios), shaded: bootstrap 95 % band; "
                       "dashed verticals: change points.")
    return out or "*No headline kernel with a baseline in the latest run.*\n"


def _budget(conn, renderer, run) -> str:
    out = ""
    for scheme, row_id in worst_rows(run):
        s = trends.detect(trends.budget_series(conn, row_id))
        out += _figure(renderer, s, "measured ÷ bound (1 = at the bound)",
                       f"**{scheme}:** worst budget row of the latest run, {md.icode(row_id)}; dashed: the bound.")
    return out or "*No budget row measured in the latest run.*\n"


def build(conn, out_dir: Path, renderer: Renderer | None = None, note: str = "") -> str:
    """The Markdown of history.md (plots written by `renderer` under out_dir/svg/)."""
    renderer = renderer or Renderer(out_dir)
    keys = store.ordered(conn)
    text = f"# {TITLE}\n\n{note}"
    if not keys:
        return text + "*The history holds no runs yet.*\n"
    latest = store.load_run(conn, keys[-1])
    modules, _ = schemes.discover()
    series = [trends.detect(s) for s in trends.all_series(conn)]
    text += md.section("Runs (newest first)", _runs_section(conn))
    text += md.section("What changed", what_changed_section(series))
    text += md.section("Headline kernels: ratio to the in-run baseline", _headlines(conn, renderer, latest, modules))
    text += md.section("Worst budget row per scheme", _budget(conn, renderer, latest))
    text += md.section("How to read this", METHOD)
    return text


METHOD = """\
Every run of `scripts/main.sh` or `scripts/bench.sh` is imported into an SQLite history
(`scripts/history.py import`); `reports/posenc_history/README.md` documents the schema and the statistics.
A ratio is the kernel's throughput ÷ its in-run baseline's (memory limit, plain loop or sgemm of the same shape),
formed per repetition as the report forms it; because a kernel and its baseline share the machine's state, the
ratio series may mix machines, while absolute times are only compared on one machine fingerprint.
Change points: E-Divisive with means (Matteson & James 2014), energy statistic with alpha = 1 on the log of the
per-run medians, permutation test (199 permutations, p < 0.05), at least 3 runs between change points.
"""
