"""One scheme in one row — presets, claims passed/total, worst accuracy vs budget, speed vs limit, runs — for
the overview's "Schemes" table and the top of each scheme's page. Computed from the scheme's scoped inputs
(not from its pages), so the row is there even when one of its pages failed."""
from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from . import accuracy_page, bench, claims_page, md, runs

KIND_TEXT = {"bandwidth": "memory limit (streaming store)", "rmw": "memory limit (read-modify-write)",
             "plainloop": "plain loop", "sgemm": "sgemm"}
# A scheme without a report module: the best of every kernel against the first baseline kind found.
DEFAULT_HEADLINE = tuple({"family": "*", "variant": "*", "baseline": k, "what": f"any kernel vs {KIND_TEXT[k]}"}
                         for k in ("bandwidth", "rmw", "plainloop", "sgemm"))
MAX_IDS = 3


@dataclass
class SchemeRow:
    scheme: str
    presets: list | None                     # preset names from schemes.json; None: scheme not listed there
    claims: dict                             # claims_page.summarise() of the scheme's claims
    budget: list                             # budget rows with the properties' measurements folded in
    speed: list                              # [{"spec", "record", "value", "how"}] one per headline pattern
    runs: list                               # run labels of the files the scheme's numbers come from
    has_module: bool
    budget_stats: dict = field(default_factory=dict)


def records(inputs) -> list:
    return [r for f in inputs.bench if f.data is not None for r in bench.records(f.path.stem, f.data)]


def speed(recs: list, patterns) -> list:
    """Per headline pattern: among matching kernels that have a baseline of its kind, the best ratio at the
    largest size measured."""
    out = []
    for spec in patterns:
        kind = spec.get("baseline")
        found = []
        for r in recs:
            if r.baseline is not None or not r.size:
                continue
            if not (fnmatchcase(r.family, str(spec.get("family", "*")))
                    and fnmatchcase(r.variant, str(spec.get("variant", "*")))):
                continue
            if spec.get("dtype") and r.dtype != spec["dtype"]:
                continue
            value, how = bench.ratio(r, bench.find_baseline(r, recs, kind), kind)
            if value is not None:
                found.append((r, value, how))
        if not found:
            out.append({"spec": spec, "record": None, "value": None, "how": None})
            continue
        largest = max(r.size for r, _, _ in found)
        r, value, how = max((x for x in found if x[0].size == largest), key=lambda x: x[1])
        out.append({"spec": spec, "record": r, "value": value, "how": how})
    return out


def compute(ctx) -> SchemeRow:
    inp = ctx.inputs
    entry = inp.catalogue_entry(ctx.scheme)
    budget = accuracy_page.with_property_measurements(inp.accuracy.budget, inp.proofs.claims)
    recs = records(inp)
    if ctx.module is not None:
        head = speed(recs, ctx.module.HEADLINE_KERNELS)
    else:
        head = next(([h] for h in (speed(recs, [p])[0] for p in DEFAULT_HEADLINE) if h["record"] is not None),
                    [{"spec": DEFAULT_HEADLINE[0], "record": None, "value": None, "how": None}])
    return SchemeRow(scheme=ctx.scheme, presets=[p["name"] for p in entry["presets"]] if entry else None,
                     claims=claims_page.summarise(inp.proofs.claims), budget=budget, speed=head,
                     runs=inp.runs(), has_module=ctx.module is not None,
                     budget_stats=accuracy_page.summarise(budget, inp.accuracy.series))


def ratio_text(q: float) -> str:
    """measured ÷ bound, never rounded onto or across 1: 0.99999 shows as 0.99999, not 1.00."""
    text = f"{q:#.3g}" if q >= 1e-3 else f"{q:.2e}"
    if q != 1 and float(text) == 1 or (q > 1 and float(text) <= 1):
        for digits in range(4, 16):
            text = f"{q:.{digits}g}"
            if float(text) != 1:
                break
    return text


def measured_text(measured, bound) -> str:
    """A measured maximum beside its bound with enough digits that the two differ when they do."""
    digits = 4
    while (isinstance(measured, float) and isinstance(bound, (int, float)) and digits < 16
           and measured != bound and md.num(measured, digits) == md.num(bound, digits)):
        digits += 1
    return md.num(measured, digits)


def presets_cell(row: SchemeRow) -> str:
    if row.presets is None:
        return "*not in schemes.json*"
    return f"{len(row.presets)}: " + ", ".join(md.cell(p) for p in row.presets) if row.presets else "0"


def _ids(ids: list) -> str:
    shown = ", ".join(md.code(i) for i in ids[:MAX_IDS])
    return shown + (f", … (+{len(ids) - MAX_IDS})" if len(ids) > MAX_IDS else "")


def claims_cell(row: SchemeRow) -> str:
    c = row.claims
    if not c["claims"]:
        return "⏸ not run"
    parts = [f"{c['passed']}/{c['claims']} passed"]
    if c["failed"]:
        parts.append(f"❌ **{c['failed']} failed** ({_ids(c['failed_ids'])})")
    if c["not_run"]:
        parts.append(f"⏸ {c['not_run']} not run")
    if c["other"]:
        parts.append(f"⚠ {c['other']} other status")
    return " · ".join(parts)


def accuracy_cell(row: SchemeRow) -> str:
    if not row.budget:
        return "⏸ not run"
    worst, q = accuracy_page.worst_row(row.budget)
    if worst is None:
        return f"no row measured ({len(row.budget)} rows)"
    text = (f"{md.code(worst.get('id'))}: {measured_text(worst.get('measured_max'), worst.get('bound'))} / "
            f"{md.num(worst.get('bound'), 4)} "
            f"({ratio_text(q)})")
    s = row.budget_stats
    if q > 1:
        text = "❌ " + text + (f" · {s['exceeded']} rows exceeded" if s.get("exceeded", 0) > 1 else "")
    return text


def speed_cell(row: SchemeRow, several_files: bool = False) -> str:
    parts = []
    for h in row.speed:
        spec, r = h["spec"], h["record"]
        kind = spec.get("baseline")
        pattern = f"{spec.get('family', '*')}/{spec.get('variant', '*')}"
        if r is None:
            parts.append(f"⏸ no `{pattern}` run with a {KIND_TEXT.get(kind, kind)} baseline")
            continue
        args = " ".join(f"{k}:{v}" for k, v in r.args.items() if k not in ("threads", "dtype"))
        where = f", {r.file}" if several_files else ""
        parts.append(f"**{h['value']:.3g}×** {KIND_TEXT.get(kind, kind)}{' †' if h['how'] == 'time' else ''} — "
                     f"{md.code(r.label)} {md.cell(args)}, {md.plural(r.threads, 'thread')}{where}")
    return "<br>".join(parts)


HEADERS = ["scheme", "presets", "claims passed/total", "worst accuracy vs budget (measured / bound)",
           "speed vs limit (largest size)"]


def table(rows: list, main_run: str | None, link=None) -> str:
    """The Schemes table; `rows` are (scheme, SchemeRow or error text). A "run" column appears only when some
    scheme's numbers come from more than one run or from another run than `main_run`."""
    with_run = any(isinstance(r, SchemeRow) and runs.needs_column(r.runs, main_run) for _, r in rows)
    out = []
    for name, r in rows:
        first = f"[{md.cell(name)}]({link(name)})" if link else md.cell(name)
        if not isinstance(r, SchemeRow):
            cells = [first, f"⚠ generator error: {md.cell(r)}", "—", "—", "—"]
        else:
            several = len({h["record"].file for h in r.speed if h["record"] is not None}) > 1
            cells = [first, presets_cell(r), claims_cell(r), accuracy_cell(r), speed_cell(r, several)]
        if with_run:
            cells.append(runs.names(r.runs) if isinstance(r, SchemeRow) else "—")
        out.append(cells)
    return md.table(HEADERS + (["run"] if with_run else []), out, ["l"] * (len(HEADERS) + with_run))
