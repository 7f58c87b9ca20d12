"""Text output of the commands: `list`, and `compare` as Markdown (people) or JSON (CI)."""
from __future__ import annotations

import json
import math

from posenc_report import md


SCHEMA = "posenc-history-compare-1"
MAX_ROWS = 40                   # rows per Markdown table before the rest is summarised


def pct(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x * 100:+.1f} %"


def _ci(shift) -> str:
    if shift is None or math.isnan(shift.lo):
        return "—"
    return f"[{pct(shift.lo - 1)}, {pct(shift.hi - 1)}] ({shift.level * 100:.0f} %)"


def _p(x) -> str:
    return "—" if x is None else (f"{x:.2g}" if x >= 1e-4 else f"{x:.1e}")


def _value(row) -> tuple:
    if row.what == "time":
        return tuple("—" if v is None else md.num(v * 1e6, 4) + " µs" for v in (row.base, row.new))
    return tuple("—" if v is None else md.num(v, 4) for v in (row.base, row.new))


# --- list ----------------------------------------------------------------------------------------------------

def runs_table(runs: list) -> str:
    rows = [(str(i + 1), md.code(r["run_id"]), md.code((r["commit_sha"] or "unknown")[:12] + ("+dirty" if r["dirty"]
                                                                                               else "")),
             r["started"], md.cell(r["mode"]), md.code(r["selection"]), md.code(r["fingerprint"]),
             md.num(r["benchmarks"]), md.num(r["budget_rows"]), md.num(r["claims"]))
            for i, r in enumerate(runs)]
    return md.table(["#", "run id", "commit", "started (UTC)", "mode", "selection", "machine", "benchmarks",
                     "budget rows", "claims"], rows, ["r", "l", "l", "l", "l", "l", "l", "r", "r", "r"])


def runs_json(runs: list) -> str:
    keep = ("run_id", "commit_sha", "dirty", "started", "mode", "selection", "fingerprint", "source", "benchmarks",
            "budget_rows", "claims")
    return json.dumps({"runs": [{k: r[k] for k in keep} for r in runs]}, indent=2)


# --- compare: Markdown --------------------------------------------------------------------------------------------

def _run_line(label: str, r) -> str:
    return (f"- **{label}:** {md.icode(r.run_id)} — commit {md.icode(r.short_commit)}, started {r.started}, mode "
            f"{md.icode(r.mode)}, selection {md.icode(r.selection)}, machine {md.icode(r.fingerprint)}")


def _header(c) -> str:
    s = c.settings
    lines = ["# posenc history: compare", "", _run_line("BASE", c.base), _run_line("NEW", c.new), ""]
    if c.same_machine:
        lines.append("Same machine fingerprint: absolute times and in-run ratios are compared.")
    else:
        diffs = "; ".join(f"{k}: {md.icode(a)} → {md.icode(b)}" for k, a, b in c.machine_diffs) or "unrecorded"
        lines.append(f"**Different machines** ({diffs}): absolute times are not compared, only the in-run ratios.")
    if c.build_diffs:
        lines.append("Also differs: " + "; ".join(f"{k}: {md.icode(a)} → {md.icode(b)}" for k, a, b in c.build_diffs)
                     + ".")
    lines += [f"- {n}" for n in c.notes]
    lines += ["", f"Rule: a **regression** is a change with Mann–Whitney U p < {s.alpha:g}"
              + ("" if s.correction == "none" else f" after {'Holm' if s.correction == 'holm' else 'Benjamini–Hochberg'}"
                 " adjustment") + f", beyond ±{s.threshold * 100:g} % (NEW/BASE > {1 + s.threshold:g} or < "
              f"1/{1 + s.threshold:g}), in the bad direction (time up, ratio down). Gate: `{s.gate}`. Change = "
              "Hodges–Lehmann estimate of NEW/BASE − 1 over the repetitions, with its distribution-free interval.", ""]
    return "\n".join(lines)


def _summary(c) -> str:
    tested = c.gated_tests
    flagged = len(c.regressions) + len(c.improvements)
    share = f" ({flagged / tested * 100:.1f} % of {tested} gated comparisons)" if tested else ""
    expected = (f"; under no change about {c.settings.alpha * tested:.2g} would reach p < {c.settings.alpha:g} by "
                "chance" if tested and c.settings.correction == "none" else "")
    verdict = "❌ **REGRESSION**" if c.regressed else "✅ no regression"
    return (f"## Summary\n\n{verdict}: {md.plural(len(c.regressions), 'performance regression')}, "
            f"{md.plural(len(c.improvements), 'improvement')}{share}{expected}; "
            f"{md.plural(len(c.accuracy_regressions), 'accuracy regression')}.\n\n")


def _bench_table(rows: list, times: dict) -> str:
    out = []
    for r in rows[:MAX_ROWS]:
        what = f"÷ {r.kind}" if r.what == "ratio" else ("time (baseline)" if r.baseline else "time")
        base, new = _value(r)
        extra = ""
        if r.what == "ratio":
            k, b = times.get((r.file, r.name)), times.get((r.file, r.baseline))
            extra = f"kernel {pct(k.change) if k else '—'}, baseline {pct(b.change) if b else '—'}"
        out.append((md.code(r.name), md.cell(what), base, new, pct(r.change), _ci(r.shift), _p(r.q), extra or "—"))
    text = md.table(["benchmark", "quantity", "BASE", "NEW", "change", "interval", "p", "times moved"], out,
                    ["l", "l", "r", "r", "r", "l", "r", "l"])
    if len(rows) > MAX_ROWS:
        text += f"\n… and {len(rows) - MAX_ROWS} more (`--format json` lists all).\n"
    return text


def _bench_sections(c) -> str:
    times = {(r.file, r.name): r for r in c.rows if r.what == "time"}
    text = ""
    key = lambda r: (r.q if r.q is not None else 1.0, r.name)  # noqa: E731
    for title, rows in (("Regressions", sorted(c.regressions, key=key)),
                        ("Improvements", sorted(c.improvements, key=key))):
        if rows:
            text += f"## {title}\n\n" + _bench_table(rows, times) + "\n"
    moved = [r for r in c.rows if not r.gated and r.verdict in ("regression", "improvement")]
    if moved:
        text += ("## Significant changes that do not gate\n\nBaselines' times (how much the machine moved) and "
                 "times of kernels whose ratios gate:\n\n" + _bench_table(sorted(moved, key=key), times) + "\n")
    untested = sum(1 for r in c.rows if r.verdict == "no test")
    unchanged = sum(1 for r in c.rows if r.verdict == "unchanged")
    text += (f"{md.plural(unchanged, 'comparison')} unchanged, {untested} without a test (fewer than 2 repetitions "
             "on a side); `--format json` lists every comparison.\n\n")
    return text


def _delta(a, b) -> str:
    return "—" if a is None or b is None else f"{b - a:+.3g}"


def _accuracy_sections(c) -> str:
    text = ""
    changed = [b for b in c.budget if b["verdict"] not in ("unchanged", "not measured")]
    if changed:
        rows = [(md.code(b["row_id"]), md.num(b["base_fraction"], 4), md.num(b["new_fraction"], 4),
                 _delta(b["base_fraction"], b["new_fraction"]), ("❌ " if b["verdict"] == "regression" else "")
                 + b["verdict"]) for b in changed[:MAX_ROWS]]
        text += ("## Accuracy budget: measured ÷ bound\n\n" + md.table(["row", "BASE", "NEW", "change", "verdict"],
                                                                        rows, ["l", "r", "r", "r", "l"]) + "\n")
    same = sum(1 for b in c.budget if b["verdict"] == "unchanged")
    text += f"{md.plural(same, 'budget row')} unchanged.\n\n" if c.budget else ""
    flips = [x for x in c.claims if x["verdict"] != "unchanged"]
    if flips:
        rows = [(md.code(x["claim_id"]), md.cell(x["base_status"]), md.cell(x["new_status"]),
                 ("❌ " if x["verdict"] == "regression" else "") + x["verdict"]) for x in flips[:MAX_ROWS]]
        text += "## Claims whose verdict changed\n\n" + md.table(["claim", "BASE", "NEW", "verdict"], rows) + "\n"
    elif c.claims:
        text += f"All {len(c.claims)} claims kept their verdict.\n\n"
    return text


def compare_md(c) -> str:
    return _header(c) + "\n" + _summary(c) + _bench_sections(c) + _accuracy_sections(c)


# --- compare: JSON ---------------------------------------------------------------------------------------------

def _num(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def _row_json(r) -> dict:
    s = r.shift
    return {"quantity": r.what, "file": r.file, "benchmark": r.name, "kind": r.kind, "baseline": r.baseline,
            "base": _num(r.base), "new": _num(r.new), "change": _num(r.change),
            "interval": None if s is None or math.isnan(s.lo) else [s.lo - 1, s.hi - 1],
            "interval_level": None if s is None else s.level, "p": None if s is None else s.p, "p_adjusted": r.q,
            "n_base": None if s is None else s.n_base, "n_new": None if s is None else s.n_new,
            "gated": r.gated, "verdict": r.verdict}


def _run_json(r) -> dict:
    return {"run_id": r.run_id, "commit": r.commit, "dirty": r.dirty, "started": r.started, "mode": r.mode,
            "selection": r.selection, "fingerprint": r.fingerprint}


def compare_json(c) -> str:
    s = c.settings
    out = {"schema": SCHEMA, "base": _run_json(c.base), "new": _run_json(c.new), "same_machine": c.same_machine,
           "machine_differences": [list(d) for d in c.machine_diffs],
           "build_differences": [list(d) for d in c.build_diffs], "notes": c.notes,
           "settings": {"alpha": s.alpha, "threshold": s.threshold, "correction": s.correction, "gate": s.gate,
                        "confidence": s.conf},
           "summary": {"gated_comparisons": c.gated_tests, "regressions": len(c.regressions),
                       "improvements": len(c.improvements), "accuracy_regressions": len(c.accuracy_regressions),
                       "flagged_share": (len(c.regressions) + len(c.improvements)) / c.gated_tests
                       if c.gated_tests else None, "regression": c.regressed},
           "comparisons": [_row_json(r) for r in c.rows], "budget": c.budget, "claims": c.claims}
    return json.dumps(out, indent=2, default=_num)

