"""BASE vs NEW: what moved, by how much, and whether it is real.

Per benchmark (absolute time; only between files of the same machine fingerprint) and per kernel ÷ in-run
baseline ratio (always): the change as a ratio NEW/BASE with its Hodges-Lehmann estimate and distribution-free
confidence interval, and the two-sided Mann-Whitney U p-value on the repetitions (stats.shift). A change is
*significant* when its p-value (adjusted across the gated comparisons when --correction asks) is below alpha,
and *beyond the threshold* when NEW/BASE > 1 + t or < 1/(1 + t). A **regression** is significant, beyond the
threshold and in the bad direction (time up, ratio down). Budget rows: measured ÷ bound per row (a row that
goes from within its bound to beyond it is a regression); claims: any verdict change (passed -> failed is a
regression).

Which comparisons decide the exit status (`gate`): `auto` (default) takes every kernel ÷ baseline ratio —
the in-run baseline cancels the machine's state, which on a shared VM moves absolute times by tens of
percent between runs minutes apart — and the absolute time of kernels that have no baseline in one of the two
runs (same machine only); `times` takes the absolute time of every kernel (same machine only), `ratios` only the ratios, `all`
both. Baselines' own times are always shown (they say how much the machine moved) but never gate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import fingerprint, stats
from .model import RunData

GATES = ("auto", "times", "ratios", "all")
CORRECTIONS = ("none", "holm", "bh")
DEFAULT_ALPHA = 0.01
DEFAULT_THRESHOLD = 0.05
DEFAULT_CONF = 0.95


@dataclass
class Settings:
    alpha: float = DEFAULT_ALPHA
    threshold: float = DEFAULT_THRESHOLD
    correction: str = "none"
    gate: str = "auto"
    conf: float = DEFAULT_CONF


@dataclass
class Row:
    """One compared quantity (a benchmark's time or a kernel's ratio to a baseline)."""
    what: str                         # time | ratio
    file: str
    name: str                         # the benchmark (for a ratio: the kernel)
    kind: str | None = None           # ratio: bandwidth | rmw | plainloop | sgemm
    baseline: str | None = None       # ratio: the baseline benchmark; time: its baseline kind if it is one
    base: float | None = None         # BASE's reported value (median time in s, or ratio)
    new: float | None = None
    shift: stats.Shift | None = None
    q: float | None = None            # p-value after the correction (= p without one)
    gated: bool = False
    verdict: str = "no test"          # regression | improvement | unchanged | no test

    @property
    def worse_when_larger(self) -> bool:
        return self.what == "time"

    @property
    def change(self) -> float | None:
        return None if self.shift is None else self.shift.change


@dataclass
class Comparison:
    base: RunData
    new: RunData
    settings: Settings
    same_machine: bool
    machine_diffs: list               # [(field, base, new)]
    build_diffs: list                 # [(what, base, new)]
    rows: list = field(default_factory=list)
    budget: list = field(default_factory=list)
    claims: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def regressions(self) -> list:
        return [r for r in self.rows if r.gated and r.verdict == "regression"]

    @property
    def improvements(self) -> list:
        return [r for r in self.rows if r.gated and r.verdict == "improvement"]

    @property
    def accuracy_regressions(self) -> list:
        return ([b for b in self.budget if b["verdict"] == "regression"]
                + [c for c in self.claims if c["verdict"] == "regression"])

    @property
    def regressed(self) -> bool:
        return bool(self.regressions or self.accuracy_regressions)

    @property
    def gated_tests(self) -> int:
        return sum(1 for r in self.rows if r.gated and r.shift is not None and r.shift.p is not None)


# --- benchmarks --------------------------------------------------------------------------------------------

def _verdict(row: Row, s: Settings) -> str:
    if row.shift is None or row.q is None:
        return "no test"
    r = row.shift.ratio
    beyond = r > 1 + s.threshold or r < 1 / (1 + s.threshold)
    if row.q >= s.alpha or not beyond:
        return "unchanged"
    worse = r > 1 if row.worse_when_larger else r < 1
    return "regression" if worse else "improvement"


def _time_rows(base: RunData, new: RunData, s: Settings) -> tuple:
    """Time rows for benchmarks in both runs whose files share a machine fingerprint; notes for the others."""
    old = {(b.file, b.name): b for b in base.benches}
    kernels_with_ratio = {(r.file, r.kernel) for r in new.ratios} & {(r.file, r.kernel) for r in base.ratios}
    rows, skipped = [], set()
    for b in new.benches:
        a = old.get((b.file, b.name))
        if a is None:
            continue
        fa, fb = base.file(b.file), new.file(b.file)
        if fa is None or fb is None or fa.fingerprint != fb.fingerprint:
            skipped.add(b.file)
            continue
        row = Row("time", b.file, b.name, baseline=b.baseline_kind, base=a.seconds, new=b.seconds,
                  shift=stats.shift(a.times, b.times, s.conf))
        kernel = b.baseline_kind is None
        row.gated = kernel and (s.gate in ("times", "all") or (s.gate == "auto" and (b.file, b.name)
                                                                not in kernels_with_ratio))
        rows.append(row)
    notes = [f"`{f}`: the machine fingerprints differ, so its absolute times are not compared (ratios only)"
             for f in sorted(skipped)]
    return rows, notes


def _ratio_rows(base: RunData, new: RunData, s: Settings) -> list:
    old = {(r.file, r.kernel, r.kind): r for r in base.ratios}
    rows = []
    for r in new.ratios:
        a = old.get((r.file, r.kernel, r.kind))
        if a is None:
            continue
        rows.append(Row("ratio", r.file, r.kernel, kind=r.kind, baseline=r.baseline, base=a.value, new=r.value,
                        shift=stats.shift(a.values, r.values, s.conf), gated=s.gate in ("auto", "ratios", "all")))
    return rows


def _correct(rows: list, s: Settings) -> None:
    for group in ([r for r in rows if r.gated], [r for r in rows if not r.gated]):
        p = [r.shift.p if r.shift is not None else None for r in group]
        for r, q in zip(group, stats.adjust(p, s.correction)):
            r.q = q
            r.verdict = _verdict(r, s)


# --- accuracy ------------------------------------------------------------------------------------------------

def _fraction(row: dict):
    m, b = row.get("measured"), row.get("bound")
    return m / b if isinstance(m, (int, float)) and isinstance(b, (int, float)) and b > 0 else None


def _budget_verdict(qa, qb) -> str:
    if qa is None or qb is None:
        return "not measured"
    if qb > 1 >= qa:
        return "regression"
    if qa > 1 >= qb:
        return "fixed"
    if math.isclose(qa, qb, rel_tol=1e-12, abs_tol=0.0):
        return "unchanged"
    return "worse" if qb > qa else "better"


def compare_budget(base: RunData, new: RunData) -> list:
    old = {b["row_id"]: b for b in base.budget}
    out = []
    for b in sorted(new.budget, key=lambda x: x["row_id"]):
        a = old.get(b["row_id"])
        qa, qb = (_fraction(a) if a else None), _fraction(b)
        out.append({"row_id": b["row_id"], "scheme": b.get("scheme"), "metric": b.get("metric"),
                    "base_measured": a.get("measured") if a else None, "base_bound": a.get("bound") if a else None,
                    "new_measured": b.get("measured"), "new_bound": b.get("bound"), "base_fraction": qa,
                    "new_fraction": qb, "verdict": "new row" if a is None else _budget_verdict(qa, qb)})
    out += [{"row_id": k, "scheme": a.get("scheme"), "metric": a.get("metric"), "base_measured": a.get("measured"),
             "base_bound": a.get("bound"), "new_measured": None, "new_bound": None, "base_fraction": _fraction(a),
             "new_fraction": None, "verdict": "removed"}
            for k, a in sorted(old.items()) if k not in {b["row_id"] for b in new.budget}]
    return out


def _claim_verdict(a, b) -> str:
    if a is None:
        return "regression" if b == "failed" else "new claim"
    if a == b:
        return "unchanged"
    return "regression" if b == "failed" else "changed"


def compare_claims(base: RunData, new: RunData) -> list:
    old = {c["claim_id"]: c for c in base.claims}
    out = []
    for c in sorted(new.claims, key=lambda x: x["claim_id"]):
        a = old.get(c["claim_id"])
        out.append({"claim_id": c["claim_id"], "scheme": c.get("scheme"), "base_status": a["status"] if a else None,
                    "new_status": c.get("status"), "base_cases": a["cases"] if a else None,
                    "new_cases": c.get("cases"), "verdict": _claim_verdict(a["status"] if a else None,
                                                                           c.get("status"))})
    seen = {c["claim_id"] for c in new.claims}
    out += [{"claim_id": k, "scheme": a.get("scheme"), "base_status": a["status"], "new_status": None,
             "base_cases": a["cases"], "new_cases": None, "verdict": "removed"}
            for k, a in sorted(old.items()) if k not in seen]
    return out


# --- the whole comparison ---------------------------------------------------------------------------------------

BUILD_FIELDS = (("compiler", "compiler"), ("compile flags", "compile_flags"), ("build type", "build_type"),
                ("kernel", "kernel"), ("OS", "os"), ("CPU flags", "cpu_flags"), ("mode", "mode"),
                ("selection", "selection"))


def build_differences(base: RunData, new: RunData) -> list:
    out = [(label, getattr(base, attr), getattr(new, attr)) for label, attr in BUILD_FIELDS
           if getattr(base, attr) != getattr(new, attr)]
    for key in sorted(set(base.environment) | set(new.environment)):
        if base.environment.get(key) != new.environment.get(key):
            out.append((f"environment {key}", base.environment.get(key), new.environment.get(key)))
    return out


def _power_notes(rows: list, s: Settings) -> list:
    """Say when the repetitions are too few for any comparison to reach alpha (5 vs 5 is the least for 0.01)."""
    sizes = {(r.shift.n_base, r.shift.n_new) for r in rows if r.gated and r.shift is not None and r.shift.p is not None}
    weak = sorted((m, n) for m, n in sizes if stats.min_attainable_p(m, n) >= s.alpha)
    return [f"with {m} vs {n} repetitions the smallest possible p-value is {stats.min_attainable_p(m, n):.3g}, not "
            f"below alpha = {s.alpha:g}: those comparisons cannot be significant (use --reps 5 or more)"
            for m, n in weak]


def compare(base: RunData, new: RunData, settings: Settings | None = None) -> Comparison:
    s = settings or Settings()
    same = base.fingerprint is not None and base.fingerprint == new.fingerprint
    cmp = Comparison(base, new, s, same, fingerprint.differences(base.machine, new.machine),
                     build_differences(base, new))
    times, cmp.notes = _time_rows(base, new, s)
    cmp.rows = times + _ratio_rows(base, new, s)
    _correct(cmp.rows, s)
    cmp.notes += _power_notes(cmp.rows, s)
    cmp.budget, cmp.claims = compare_budget(base, new), compare_claims(base, new)
    if base.run_id == new.run_id:
        cmp.notes.append("BASE and NEW are the same run")
    return cmp
