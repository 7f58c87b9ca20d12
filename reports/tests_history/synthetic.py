"""The synthetic statistics suite: how often `compare`'s rule (Mann-Whitney U p < alpha and the Hodges-Lehmann
change beyond the threshold) flags a benchmark, for known shifts under realistic noise.

Noise model: each repetition's time is T * exp(e), e ~ N(0, s^2) with s = sqrt(ln(1 + CV^2)) (lognormal with
coefficient of variation CV). The CVs, 2-15 %, span what posenc_bench's repetitions show on the 2-core VM
(e.g. 0.4 % for a cache-sized table kernel on a quiet machine, 5 % under a concurrent build, 21 % for a
5-microsecond streaming store under load). Scenarios:

* `shift`: BASE and NEW differ by a known factor (0 = an A/A comparison: every flag is a false alarm);
* `outliers`: 10 % of the repetitions 1.5x slower (interference), on both sides;
* `drift`: every run is also slowed by a run-wide factor exp(g), g ~ N(0, ln(1 + 0.2^2)) (the shared VM moving
  by ~20 % between runs, which within-run repetitions cannot see), applied to a kernel and its in-run
  baseline alike: the absolute time's false alarms next to the ratio's.

Run `/usr/bin/python3 reports/tests_history/synthetic.py` for the tables (the README quotes them)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from posenc_history import compare, stats  # noqa: E402

CVS = (0.02, 0.05, 0.10, 0.15)
SHIFTS = (0.0, 0.05, 0.10, 0.20)
TRIALS = 2000
SEED = 37


def _sigma(cv: float) -> float:
    return math.sqrt(math.log(1 + cv * cv))


def flagged(base, new, alpha=compare.DEFAULT_ALPHA, threshold=compare.DEFAULT_THRESHOLD, worse_up=True):
    """Boolean per row: `compare`'s regression verdict (significant, beyond the threshold, the bad way)."""
    ratio, p = stats.shift_batch(base, new)
    beyond = ratio > 1 + threshold if worse_up else ratio < 1 / (1 + threshold)
    return (p < alpha) & beyond


def noise(rng, cv, shape, outliers: float = 0.0):
    x = np.exp(rng.normal(0.0, _sigma(cv), shape))
    if outliers:
        x *= np.where(rng.random(shape) < outliers, 1.5, 1.0)
    return x


def detection(cv, shift, reps, trials=TRIALS, outliers=0.0, rng=None, **rule) -> float:
    """Share of `trials` comparisons (BASE vs NEW slower by `shift`) flagged as regressions."""
    rng = rng or np.random.default_rng(SEED)
    base = noise(rng, cv, (trials, reps), outliers)
    new = (1 + shift) * noise(rng, cv, (trials, reps), outliers)
    return float(flagged(base, new, **rule).mean())


def drift(cv, shift, reps, trials=TRIALS, drift_cv=0.20, rng=None, **rule) -> tuple:
    """(time flagged, ratio flagged): a kernel slowed by `shift` and its baseline not, both under a run-wide
    factor. Ratio per repetition = baseline time ÷ kernel time (a throughput ratio; smaller is worse)."""
    rng = rng or np.random.default_rng(SEED)
    run_b, run_n = (np.exp(rng.normal(0, _sigma(drift_cv), (trials, 1))) for _ in range(2))
    kb, kn = run_b * noise(rng, cv, (trials, reps)), run_n * (1 + shift) * noise(rng, cv, (trials, reps))
    bb, bn = run_b * noise(rng, cv, (trials, reps)), run_n * noise(rng, cv, (trials, reps))
    times = flagged(kb, kn, **rule).mean()
    ratios = flagged(bb / kb, bn / kn, worse_up=False, **rule).mean()
    return float(times), float(ratios)


def holm_detection(cv, shift, reps, m=500) -> float:
    """Detection of one changed comparison among m under Holm's correction (its first step: p < alpha / m)."""
    return detection(cv, shift, reps, alpha=compare.DEFAULT_ALPHA / m)


def table(reps: int, **kw) -> list:
    """[[cv, rate at each of SHIFTS]]."""
    rng = np.random.default_rng(SEED + reps)
    return [[cv] + [detection(cv, s, reps, rng=rng, **kw) for s in SHIFTS] for cv in CVS]


def markdown() -> str:
    out = []
    for reps in (5, 10):
        for label, kw in (("lognormal", {}), ("lognormal + 10 % outliers ×1.5", {"outliers": 0.1})):
            out.append(f"**{reps} repetitions, {label}** (α = {compare.DEFAULT_ALPHA:g}, threshold "
                       f"{compare.DEFAULT_THRESHOLD * 100:g} %; {TRIALS} trials per cell; shift 0 = false alarms)\n")
            out.append("| CV | " + " | ".join(f"shift {s * 100:g} %" for s in SHIFTS) + " |")
            out.append("|---:|" + "---:|" * len(SHIFTS))
            for row in table(reps, **kw):
                out.append(f"| {row[0] * 100:g} % | " + " | ".join(f"{v * 100:.1f} %" for v in row[1:]) + " |")
            out.append("")
    out.append("**Holm across 500 gated comparisons** (`--correction holm`; a single changed benchmark must reach "
               "p < α/500): detection of a 20 % shift, CV 5 %\n")
    out.append("| repetitions | detected | family-wise false alarm (bound) |\n|---:|---:|---:|")
    for reps in (5, 10):
        out.append(f"| {reps} | {holm_detection(0.05, 0.20, reps) * 100:.1f} % | ≤ {compare.DEFAULT_ALPHA * 100:g} % |")
    out.append("")
    out.append("**Run-wide drift (CV 20 % between runs), 5 repetitions, repetition CV 3 %:** flagged share\n")
    out.append("| kernel shift | absolute time | ratio to in-run baseline |\n|---:|---:|---:|")
    for s in (0.0, 0.20):
        t, r = drift(0.03, s, 5)
        out.append(f"| {s * 100:g} % | {t * 100:.1f} % | {r * 100:.1f} % |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(markdown())
