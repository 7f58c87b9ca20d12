"""accuracy.md: the budget table (claimed vs measured, with each row's error analysis) and error-vs-position
plots per output type."""
from __future__ import annotations

import math
from collections import defaultdict

from . import claims_page, md, methods
from .gnuplot import Plot, Series

ZERO_AT = 0.25           # where position 0 is drawn on the log-x axis (labelled "0"; two octaves left of 1)


def headroom(bound, measured) -> str:
    if not (md.is_number(bound) and md.is_number(measured)):
        return "—"
    if measured == 0:
        return "∞"
    ratio = bound / measured
    # Rounded towards zero, so a row just over its bound never reads "1.00×".
    text = f"{math.floor(ratio * 100) / 100:.2f}×" if ratio < 10 else f"{ratio:.3g}×"
    return text if measured <= bound else f"❌ **{text}**"


def row_status(row: dict) -> str:
    measured, bound = row.get("measured_max"), row.get("bound")
    if not md.is_number(measured):
        return "not measured"
    if not md.is_number(bound):
        return "no bound"
    return "met" if measured <= bound else "EXCEEDED"


_STATUS_CELL = {"met": "✅ met", "EXCEEDED": "❌ **EXCEEDED**", "not measured": "⏸ not measured",
                "no bound": "⚠ no bound"}


def _budget_table(ctx, budget: list) -> str:
    users = defaultdict(list)
    for c in ctx.inputs.proofs.claims:
        if c.get("budget_row"):
            users[c["budget_row"]].append(str(c.get("id")))
    rows, with_run = [], len({run for r in budget for run in r.get("_runs") or [r.get("_run")]}) > 1
    for r in budget:
        rows.append((f"**{md.cell(r.get('id'))}**", md.cell(r.get("scheme")), md.cell(r.get("quantity")),
                     md.cell(r.get("dtype")), md.cell(r.get("regime")), md.code(r.get("domain")),
                     md.code(r.get("metric")), md.num(r.get("bound"), 4), md.num(r.get("measured_max"), 4),
                     headroom(r.get("bound"), r.get("measured_max")), _STATUS_CELL[row_status(r)],
                     claims_page.worst_input_cell(r.get("worst_input")), md.num(r.get("samples")),
                     md.cell(r.get("measured_by", "sweep")), ", ".join(sorted(set(users.get(r.get("id"), [])))) or "—")
                    + ((", ".join(md.code(x) for x in (r.get("_runs") or [r.get("_run")])),) if with_run else ()))
    return md.table(["row", "scheme", "quantity", "dtype", "regime", "domain", "metric", "bound (claimed)",
                     "measured max", "headroom", "status", "worst input", "samples", "measured by", "claims using it"]
                    + (["run"] if with_run else []), rows,
                    ["l", "l", "l", "l", "l", "l", "l", "r", "r", "r", "l", "l", "r", "l", "l"]
                    + (["l"] if with_run else [])) + claims_page.long_inputs(budget)


def _why(budget: list) -> str:
    items = [f"- **{md.cell(r.get('id'))}** — {md.cell(r.get('why')) if r.get('why') else '*no analysis given*'}"
             for r in budget]
    return "\n".join(items) + "\n"


def reference_of(series: dict) -> str:
    """What a series was measured against; absent means its own regime's oracle."""
    return str(series.get("reference") or series.get("regime") or "exact")


def _label(s: dict, schemes: set) -> str:
    parts = ([str(s.get("scheme"))] if len(schemes) > 1 else []) + [
        str(s.get("preset") or "?"), str(s.get("regime") or "?")]
    if s.get("dim") is not None:
        parts.append(f"d={s['dim']}")
    return " ".join(parts)


def x_of(series: dict) -> str:
    """The series' x quantity: "position" (tables, caches), "distance" (relative biases)."""
    return str(series.get("x") or "position")


def _points(s: dict, positive_only: bool) -> list:
    pts, key = [], x_of(s)
    for p in s.get("points") or []:
        if not isinstance(p, dict) or not md.is_number(p.get(key)) or not md.is_number(p.get("max_error")):
            continue
        x = ZERO_AT if p[key] == 0 else p[key]
        if x <= 0 or (positive_only and p["max_error"] <= 0):
            continue
        pts.append((x, p["max_error"]))
    return sorted(pts)


def position_tics(xmax: float) -> list:
    tics = [("0", ZERO_AT), ("1", 1)]
    e = 4
    while 2.0 ** e <= max(xmax, 16):
        tics.append((f"2^{{{e}}}", 2 ** e))
        e += 4
    return tics


def error_plot(name: str, title: str, ylabel: str, group: list, bounds: list, logy: bool,
               xname: str = "position") -> Plot:
    schemes = {str(s.get("scheme")) for s in group}
    series = [Series(_label(s, schemes), _points(s, logy), "linespoints pt 7 ps 0.6") for s in group]
    xmax = max([x for s in series for x, _ in s.rows] + [16])
    ymax = max([y for s in series for _, y in s.rows] + [b for _, b in bounds] + [1e-300])
    for label, value in bounds:
        series.append(Series(label, [(ZERO_AT, value), (xmax * 1.5, value)], "lines lw 1.5", dashed=True,
                             colour="#888888"))
    return Plot(name=name, title=title, xlabel=f"{xname} (log scale; {xname} 0 drawn at 1/4)", ylabel=ylabel,
                series=series, logx=2, logy=10 if logy else None, xtics=position_tics(xmax),
                xrange=(ZERO_AT * 0.8, xmax * 1.5), yrange=None if logy else (0, ymax * 1.15))


def _metric_of(group: list) -> str:
    metrics = sorted({str(s.get("metric")) for s in group if s.get("metric")})
    return metrics[0] if len(metrics) == 1 else "error (metric per line; see table)"


def _bounds_for(group: list, budget: dict) -> list:
    """Horizontal lines for the budget rows a series names ("budget_row" or an inline "bound")."""
    out = []
    for s in group:
        row = budget.get(s.get("budget_row"))
        if row and md.is_number(row.get("bound")):
            out.append((f"bound {row['id']}", row["bound"]))
        elif md.is_number(s.get("bound")):
            out.append((f"bound ({_label(s, set())})", s["bound"]))
    return sorted(set(out), key=lambda b: (b[1], b[0]))


def plots(ctx, series: list, budget: list) -> list:
    """[(markdown image or note, caption)] — one kernel-error plot per dtype, and one 'differs from the exact
    value' plot per dtype for series measured against another regime's oracle (emulated vs exact)."""
    rows_by_id = {r.get("id"): r for r in budget}
    by_dtype = defaultdict(list)
    for s in series:  # one group per output type and x quantity (positions and distances do not share an axis)
        by_dtype[(str(s.get("dtype") or "unknown"), x_of(s))].append(s)
    out = []
    for dtype, xname in sorted(by_dtype):
        group = by_dtype[(dtype, xname)]
        suffix = "" if xname == "position" else f"-{xname}"
        own = [s for s in group if reference_of(s) == str(s.get("regime") or "exact")]
        other = [s for s in group if reference_of(s) != str(s.get("regime") or "exact")]
        if own:
            metric = _metric_of(own)
            plot = error_plot(f"accuracy-{dtype}{suffix}", f"{dtype}: max error against the oracle of the same regime",
                              f"max {metric}", own, _bounds_for(own, rows_by_id), logy=False, xname=xname)
            out.append((ctx.renderer.image(plot, f"{dtype} error vs {xname}"),
                        f"**{dtype}** output: maximum error per probed {xname}, one line per preset × regime, "
                        "each against the multiprecision oracle of its own regime (exact: the mathematical value; "
                        "emulated: the named implementation's rounding steps done exactly). Dashed lines: "
                        "budget bounds named by the series. Illustrates the accuracy claims of the budget rows "
                        f"for {dtype}."))
        if other:
            refs = sorted({reference_of(s) for s in other})
            plot = error_plot(f"accuracy-{dtype}{suffix}-vs-{'-'.join(refs)}",
                              f"{dtype}: emulated regimes measured against the {'/'.join(refs)} value",
                              f"max {_metric_of(other)} (log)", other, [], logy=True, xname=xname)
            out.append((ctx.renderer.image(plot, f"{dtype} emulated vs exact"),
                        f"**{dtype}**, emulated regimes against the {'/'.join(refs)} value: the distance between "
                        "what an implementation computes (its float32 frequency, angle or slope rounding) and the "
                        f"mathematical value. It is expected to grow with {xname} — this is the convention's "
                        "behaviour, not a kernel error. Points with zero error are not drawn on this log axis."))
    return out


def _series_table(series: list) -> str:
    rows, with_run = [], len({s.get("_run") for s in series}) > 1
    for s in series:
        pts = [p for p in s.get("points") or [] if isinstance(p, dict) and md.is_number(p.get("max_error"))]
        worst = max(pts, key=lambda p: p["max_error"], default=None)
        rows.append((md.cell(s.get("scheme")), md.cell(s.get("preset")), md.cell(s.get("regime")),
                     md.cell(reference_of(s)), md.cell(s.get("dtype")), md.num(s.get("dim")),
                     md.code(s.get("metric")), md.num(len(pts)),
                     md.num(worst["max_error"]) if worst else "—",
                     (md.position(worst.get(x_of(s))) + ("" if x_of(s) == "position" else f" ({x_of(s)})"))
                     if worst else "—")
                    + ((md.code(s.get("_run")),) if with_run else ()))
    return md.table(["scheme", "preset", "regime", "measured against", "dtype", "d", "metric", "positions",
                     "max error", "at position"] + (["run"] if with_run else []), rows,
                    ["l", "l", "l", "l", "l", "r", "l", "r", "r", "r"] + (["l"] if with_run else []))


def summarise(budget: list, series: list) -> dict:
    status = [row_status(r) for r in budget]
    worst = {}
    for r in budget:
        if md.is_number(r.get("measured_max")) and r.get("dtype"):
            key = (str(r["dtype"]), str(r.get("regime") or "exact"))
            if key not in worst or r["measured_max"] > worst[key]["measured_max"]:
                worst[key] = r
    return {"rows": len(budget), "met": status.count("met"), "exceeded": status.count("EXCEEDED"),
            "not_measured": status.count("not measured"), "no_bound": status.count("no bound"),
            "exceeded_ids": [r.get("id") for r, s in zip(budget, status) if s == "EXCEEDED"],
            "worst_by_dtype": worst, "series": len(series)}


def with_property_measurements(budget: list, claims: list) -> list:
    """Budget rows with the properties' measurements folded in.

    The sweep measures the table rows; the properties measure every row their claims cite (shift,
    composition, orthogonality, distinctness, oracle identities) and record them per claim under
    "rows". A row's measured max is the larger of the two; samples add up; `measured_by` says which, and
    `_runs` which runs' files contributed.
    """
    by_row = defaultdict(list)
    for c in claims:
        for r in c.get("rows") or []:
            if isinstance(r, dict) and r.get("budget_row"):
                by_row[r["budget_row"]].append((r, c.get("_run")))
    merged = []
    for row in budget:
        row = dict(row)
        sources = ["sweep"] if md.is_number(row.get("measured_max")) else []
        contributing = {row.get("_run")}
        for pr, run in by_row.get(row.get("id"), []):
            if not md.is_number(pr.get("max_error")):
                continue
            if "properties" not in sources:
                sources.append("properties")
            contributing.add(run)
            if not md.is_number(row.get("measured_max")) or pr["max_error"] > row["measured_max"]:
                row["measured_max"], row["worst_input"] = pr["max_error"], pr.get("worst_input")
            row["samples"] = (row.get("samples") if md.is_number(row.get("samples")) else 0) + (
                pr.get("cases") if md.is_number(pr.get("cases")) else 0)
        row["measured_by"] = " + ".join(sources) or "—"
        row["_runs"] = sorted(r for r in contributing if r)
        merged.append(row)
    return merged


def ratio_to_bound(row: dict) -> float | None:
    """measured ÷ bound (above 1: the row is exceeded); None when either is missing or the bound is not > 0."""
    m, b = row.get("measured_max"), row.get("bound")
    if md.is_number(m) and md.is_number(b) and b > 0:
        return m / b
    return None


def worst_row(budget: list) -> tuple:
    """(row, measured ÷ bound) of the budget row closest to (or furthest past) its bound; (None, None)."""
    best = (None, None)
    for r in budget:
        q = ratio_to_bound(r)
        if q is not None and (best[1] is None or q > best[1]):
            best = (r, q)
    return best


def _property_metas(ctx) -> list:
    """Metas of the proof files whose measurements were folded into the budget table."""
    files = {c.get("_file") for c in ctx.inputs.proofs.claims if c.get("rows")}
    return [(f.label, f.meta) for f in ctx.inputs.proofs.files if f.path.name in files and f.meta is not None]


def build(ctx) -> tuple:
    acc = ctx.inputs.accuracy
    text = methods.header(ctx, f"Accuracy: {ctx.scheme}, claimed vs measured" if ctx.scheme
                          else "Accuracy: claimed vs measured", acc.metas + _property_metas(ctx))
    broken = [f for f in acc.files if f.error]
    if broken:
        text += md.section("Unreadable accuracy results", "\n".join(
            f"- {md.icode(f.path.name)}: {md.cell(f.error)}" for f in broken))
    if not acc.budget and not acc.series:
        why = ("no `accuracy.json` in the results directory" if not ctx.inputs.file_count("accuracy")
               else f"the accuracy results hold no budget rows or series of scheme `{ctx.scheme}`" if ctx.scheme
               else "the file holds no budget or series")
        text += md.section("Accuracy budget", md.not_run("The accuracy harness", why))
        return text, {**summarise([], []), "ran": False, "figures": []}

    budget = with_property_measurements(acc.budget, ctx.inputs.proofs.claims)
    s = summarise(budget, acc.series)
    intro = (f"{md.plural(s['rows'], 'budget row')}: {s['met']} met, {s['exceeded']} exceeded, "
             f"{s['not_measured']} not measured. Errors are in units of the reference's ULP for the output type "
             "(`err`), or of ulp(max(|r|, S)) for quantities consumed additively (`err_S`); headroom = bound ÷ "
             "measured (below 1× means the claim is broken).\n\n")
    text += md.section("Budget: claimed vs measured",
                       (intro + _budget_table(ctx, budget)) if budget else md.not_run(
                           "The budget table", "accuracy results hold no 'budget' list"))
    if budget:
        text += md.section("Why each bound holds", _why(budget))
    figures = plots(ctx, acc.series, budget) if acc.series else []
    if figures:
        body = "".join(md.figure(img, cap) for img, cap in figures) + "\n" + _series_table(acc.series)
    else:
        body = md.not_run("Error-vs-position sweeps", "accuracy results hold no 'series' list")
    text += md.section("Error against position", body)
    return text, {**s, "ran": True, "figures": figures}
