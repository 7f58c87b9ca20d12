"""claims.md: the claims ledger (one table per scheme), region coverage and consistency notes."""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

from . import md, methods

HELDOUT_FILE = "heldout.json"
ORACLE_KINDS = {
    "identity": "a law checked on the oracle at high precision and on the fast path within budget",
    "reference": "fast path against the MPFR oracle",
    "differential": "BLAS/batched path against the direct path (agreement, not correctness)",
}
_STATUS_ALIASES = {"pass": "passed", "ok": "passed", "fail": "failed", "skipped": "not run", "not_run": "not run",
                   "notrun": "not run", "": "not run"}


def status_of(claim: dict) -> str:
    s = str(claim.get("status") if claim.get("status") is not None else "not run").strip().lower()
    return _STATUS_ALIASES.get(s, s)


def exceeds(measured, bound) -> bool:
    return md.is_number(measured) and md.is_number(bound) and measured > bound


def error_vs_bound(claim: dict, table: bool = True) -> str:
    err, bound, metric = claim.get("max_error"), claim.get("bound"), claim.get("metric")
    if err is None and bound is None:
        return "—"
    if md.is_number(err) and md.is_number(bound):
        text = f"{md.num(err)} {'>' if err > bound else '≤'} {md.num(bound)}"
        if err > bound:
            text = "⚠ **" + text + "**"
    else:
        text = f"{md.num(err)} (bound {md.num(bound)})"
    if metric:
        text += f" {md.code(metric, table)}"
    if claim.get("budget_row"):
        text += ("<br>" if table else ", ") + f"row {md.code(claim['budget_row'], table)}"
    return text


def summarise(claims: list) -> dict:
    by_status = Counter(status_of(c) for c in claims)
    cases = sum(c["cases"] for c in claims if md.is_number(c.get("cases")))
    return {"claims": len(claims), "passed": by_status.get("passed", 0), "failed": by_status.get("failed", 0),
            "not_run": by_status.get("not run", 0),
            "other": sum(n for s, n in by_status.items() if s not in ("passed", "failed", "not run")),
            "cases": int(cases), "failed_ids": [c.get("id") for c in claims if status_of(c) == "failed"]}


def _status_cell(claim: dict) -> str:
    s = status_of(claim)
    return md.STATUS_MARK.get(s, f"⚠ {md.cell(s)}")


def worst_input_cell(value) -> str:
    """A worst input in a table cell: at most md.CLIP characters; the full text goes in long_inputs()."""
    short, clipped = md.clip(value)
    return md.code(short) + (" (full text below)" if clipped else "")


def long_inputs(records: list, what: str = "worst inputs") -> str:
    """One collapsed block with the full text of the worst inputs that worst_input_cell() shortened."""
    long = [r for r in records if md.clip(r.get("worst_input"))[1]]
    if not long:
        return ""
    body = "\n".join(f"**{md.cell(r.get('id'))}** ({len(str(r['worst_input']))} characters)\n\n"
                     + md.fenced(r["worst_input"]) for r in long)
    return "\n" + md.details(f"Full text of the {len(long)} {what} shortened above", body)


def _run_column(claims: list) -> bool:
    """Rows from files of different runs name their run."""
    return len({c.get("_run") for c in claims}) > 1


def _ledger(ctx, claims: list) -> str:
    rows, with_run = [], _run_column(claims)
    for c in claims:
        test = md.code(c.get("test"))
        link = ctx.test_link(c.get("test"))
        rows.append((f"**{md.cell(c.get('id'))}**", md.code(c.get("statement")), md.cell(c.get("source")),
                     md.cell(c.get("oracle")), test + (f"<br>{link}" if link else ""), md.num(c.get("cases")),
                     error_vs_bound(c), _status_cell(c), worst_input_cell(c.get("worst_input")))
                    + ((md.code(c.get("_run")),) if with_run else ()))
    return md.table(["id", "claim", "source", "oracle", "test", "cases", "max error vs bound", "status",
                     "worst input"] + (["run"] if with_run else []), rows,
                    ["l", "l", "l", "l", "l", "r", "l", "l", "l"] + (["l"] if with_run else [])) + long_inputs(claims)


def _regions(claims: list) -> str:
    rows, with_run = [], _run_column(claims)
    for c in claims:
        regions = c.get("regions") if isinstance(c.get("regions"), dict) else {}
        cases = c.get("cases") if md.is_number(c.get("cases")) and c.get("cases") > 0 else None
        parts = []
        for name, count in sorted(regions.items()):
            share = f" ({100.0 * count / cases:.1f}%)" if cases and md.is_number(count) else ""
            parts.append(f"{md.code(name)}: {md.num(count)}{share}")
        rows.append((md.cell(c.get("id")), md.num(c.get("cases")),
                     "<br>".join(parts) if parts else "*not classified*")
                    + ((md.code(c.get("_run")),) if with_run else ()))
    return md.table(["id", "cases", "region: cases hit (share)"] + (["run"] if with_run else []), rows,
                    ["l", "r", "l"] + (["l"] if with_run else []))


def _consistency(ctx, claims: list) -> list:
    notes = []
    ids = Counter(c.get("id") for c in claims)
    for cid, n in sorted((k, v) for k, v in ids.items() if v > 1 and k is not None):
        programs = sorted({c["_program"] for c in claims if c.get("id") == cid})
        notes.append(f"claim id {md.icode(cid)} appears {n} times (in {', '.join(map(md.icode, programs))})")
    budget_ids = {r.get("id") for r in ctx.inputs.all.accuracy.budget}
    for c in claims:
        cid = md.icode(c.get("id"))
        if status_of(c) == "passed" and exceeds(c.get("max_error"), c.get("bound")):
            notes.append(f"{cid} is marked passed but its max error {md.num(c['max_error'])} exceeds its bound "
                         f"{md.num(c['bound'])}")
        if c.get("oracle") not in ORACLE_KINDS:
            notes.append(f"{cid} has oracle kind {md.icode(c.get('oracle'))}, not one of "
                         + ", ".join(map(md.icode, ORACLE_KINDS)))
        if budget_ids and c.get("budget_row") and c["budget_row"] not in budget_ids:
            notes.append(f"{cid} names budget row {md.icode(c['budget_row'])}, which accuracy.json does not list")
        if status_of(c) == "failed" and not c.get("worst_input"):
            notes.append(f"{cid} failed without a recorded worst input (counterexample)")
    return notes


def _emulation_section(claims: list, budget: list) -> str:
    """Which claims are bit for bit against correctly rounded steps, and which rows' envelopes admit real code.

    From the budget rows themselves: a bitwise row whose analysis says it holds against correctly rounded steps
    (verify/budget.hpp kCorrectlyRoundedSteps), and the rows of `posenc check` whose quantity is an envelope."""
    exact_steps = [r for r in budget if "bitwise" in str(r.get("id", ""))
                   and "correctly rounded float32 steps" in str(r.get("why") or "")]
    envelopes = [r for r in budget if ".check." in str(r.get("id", "")) and "envelope" in str(r.get("id", ""))]
    if not exact_steps and not envelopes:
        return ""
    users = defaultdict(list)
    for c in claims:
        if c.get("budget_row"):
            users[c["budget_row"]].append(str(c.get("id")))
    def item(r):
        ids = sorted(set(users.get(r.get("id"), [])))
        return (f"- {md.icode(r.get('id'))}: {md.cell(r.get('quantity'))}"
                + (f" (claims {', '.join(map(md.icode, ids))})" if ids else ""))
    text = ("An emulated regime reproduces the named implementation's float32 steps with each step correctly "
            "rounded, so its bit-for-bit claims hold against those steps, not against a particular libm or BLAS: "
            "real float32 pow/exp/sin/cos (torch 1.13, glibc's cosf) are 1–4 ulp off in 2–16 % of entries, and a "
            "BLAS sums in its own order. A real implementation's output is held instead to the envelope rows that "
            "`posenc check` applies: within it, the same convention with a different libm or summation order; "
            "outside it, a different convention or a bug.\n\n")
    if exact_steps:
        text += "**Bit for bit against correctly rounded steps:**\n\n" + "\n".join(map(item, exact_steps)) + "\n\n"
    if envelopes:
        text += "**Envelopes that admit real implementations (`posenc check`):**\n\n" + "\n".join(map(item, envelopes)) + "\n"
    return md.section("Emulations: what bit for bit is against", text)


def build(ctx) -> tuple:
    proofs = ctx.inputs.proofs
    # Grouped by scheme; within a scheme the producers' order (files sorted by name), which is deterministic.
    claims = sorted(proofs.claims, key=lambda c: str(c.get("scheme") or "unspecified"))
    summary = summarise(claims)
    text = methods.header(ctx, f"Claims ledger: {ctx.scheme}" if ctx.scheme else "Claims ledger", proofs.metas)
    broken = [f for f in proofs.files if f.error]
    if broken:
        text += md.section("Unreadable proof results", "\n".join(
            f"- {md.icode(f.path.name)}: {md.cell(f.error)}" for f in broken))
    if not claims:
        why = ("no `proofs-*.json` in the results directory" if not ctx.inputs.file_count("proofs")
               else f"the proof result files hold no claims of scheme `{ctx.scheme}`" if ctx.scheme
               else "the proof result files hold no claims")
        text += md.section("Claims", md.not_run("The property suite", why))
        return text, {**summary, "ran": False}

    text += md.section("Summary", _summary_table(claims) + "\n" + _oracle_legend())
    text += _emulation_section(claims, ctx.inputs.accuracy.budget)
    failed = [c for c in claims if status_of(c) == "failed"]
    if failed:
        rc_params = {label: meta.get("rc_params") for label, meta in proofs.metas}
        items = []
        for c in failed:
            short, clipped = md.clip(c.get("worst_input"))
            item = (f"- **{md.cell(c.get('id'))}** ({md.cell(c.get('scheme'))}): {md.icode(c.get('statement'))}; "
                    f"max error {error_vs_bound(c, table=False)}; worst input {md.icode(short)}"
                    + (" (full text below)." if clipped else "."))
            rc = rc_params.get(c["_program"])
            item += (f" Reproduce: `RC_PARAMS=\"{rc}\" {c['_program']} --gtest_filter={c.get('test')}`" if rc else
                     f" Test {md.icode(c.get('test'))} in {md.icode(c['_program'])}.")
            items.append(item)
        text += md.section("Failed claims", "\n".join(items) + "\n" + long_inputs(failed, "counterexamples"))

    by_scheme = defaultdict(list)
    for c in claims:
        by_scheme[str(c.get("scheme") or "unspecified")].append(c)
    for scheme, group in by_scheme.items():
        s = summarise(group)
        body = (f"{md.plural(s['claims'], 'claim')}: {s['passed']} passed, {s['failed']} failed, "
                f"{s['not_run']} not run; {s['cases']:,} cases.\n\n" + _ledger(ctx, group)
                + "\n**Region coverage** — how many generated cases fell in each hard region "
                  "(RC_CLASSIFY / RC_TAG counts):\n\n" + _regions(group))
        text += md.section(f"Scheme: {scheme}", body)

    heldout = _heldout(ctx)
    if heldout:
        text += md.section("Held-out vectors from the real implementations", heldout)
    notes = _consistency(ctx, claims)
    text += md.section("Consistency checks", "\n".join(f"- {n}" for n in notes) if notes
                       else "No inconsistencies found (unique ids, statuses agree with bounds, oracle kinds known, "
                            "budget rows exist).")
    return text, {**summary, "ran": True, "schemes": list(by_scheme)}


def _heldout(ctx) -> str:
    """heldout.json (properties/heldout/heldout_test.py): posenc held to numbers the real implementations
    computed; the rows of this page's scheme."""
    path = Path(ctx.inputs.results_dir) / HELDOUT_FILE
    if not path.exists():
        return ""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        records = [r for r in data.get("records", []) if not ctx.scheme or r.get("scheme") == ctx.scheme]
    except (OSError, ValueError, AttributeError) as e:
        return f"{md.icode(HELDOUT_FILE)} is unreadable: {md.cell(str(e))}\n"
    if not records:
        return ""
    ok = sum(1 for r in records if r.get("ok"))
    # Each record names its data set ("source"; absent: the file's default one) and each set its versions.
    sets = {data.get("source"): data.get("versions", {}), **data.get("sources", {})}
    used = list(dict.fromkeys(r.get("source") or data.get("source") for r in records))

    def describe(src):
        v = sets.get(src) or {}
        parts = [f"{k} {md.cell(v[k])}" for k in ("transformers", "code") if v.get(k)]
        parts += [f"PyTorch {md.cell(v.get('torch'))}", md.cell(v.get("device"))]
        return f"{md.icode(src)}: " + ", ".join(parts)
    intro = (f"Numbers the implementations' own code computed ({'; '.join(describe(s) for s in used)}; "
             f"see `properties/heldout/README.md`), held to posenc by ctest `heldout.*`: {ok} of "
             f"{len(records)} checks passed.\n\n")
    rows = [(md.code(r.get("file")), md.cell(r.get("model")), md.cell(r.get("what")),
             md.STATUS_MARK["passed" if r.get("ok") else "failed"], md.cell(r.get("detail"))) for r in records]
    return intro + md.table(["file", "implementation", "check", "status", "detail"], rows, ["l", "l", "l", "l", "l"])


def _summary_table(claims: list) -> str:
    groups = defaultdict(list)
    for c in claims:
        groups[str(c.get("scheme") or "unspecified")].append(c)
    rows = []
    for scheme, group in [*groups.items(), *([("**all**", claims)] if len(groups) > 1 else [])]:
        s = summarise(group)
        rows.append((scheme if scheme == "**all**" else f"[{scheme}](#{md.anchor('Scheme: ' + scheme)})",
                     md.num(s["claims"]), md.num(s["passed"]), md.num(s["failed"]), md.num(s["not_run"]),
                     md.num(s["cases"])))
    return md.table(["scheme", "claims", "passed", "failed", "not run", "cases"], rows,
                    ["l", "r", "r", "r", "r", "r"])


def _oracle_legend() -> str:
    return "Oracle kinds: " + "; ".join(f"**{k}** — {v}" for k, v in ORACLE_KINDS.items()) + ".\n"
