"""Nonparametric statistics for benchmark repetitions (numpy + scipy).

Benchmark times on a shared VM are skewed, heavy-tailed and sometimes bimodal, so nothing here assumes a normal
distribution (Hoefler & Belli 2015, "Scientific benchmarking of parallel computing systems", rules 5-6: report
medians with nonparametric confidence intervals, compare with rank tests).

* `shift`: the change between two samples on the log scale, i.e. a ratio: the Hodges-Lehmann estimate
  (median of all pairwise differences log y_j - log x_i) with its distribution-free confidence interval
  (Lehmann 1975 / Moses: order statistics of those differences at ranks taken from the exact null distribution
  of the Mann-Whitney U statistic), and the two-sided Mann-Whitney U p-value from `scipy.stats.mannwhitneyu`
  (the test Google Benchmark's tools/compare.py uses).
* `median_band`: a bootstrap percentile interval of a median (or of a ratio of two medians), the noise band of
  the history plots; seeded, so the output is deterministic.
* `holm`, `benjamini_hochberg`: adjusted p-values across many benchmarks.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats as sps

EXACT_LIMIT = 2500          # m*n up to which the U null distribution is computed exactly (else normal approx.)
EXACT_P_SIZE = 50           # sample sizes up to which the U test's p-value is exact (without ties)
BOOTSTRAP_SEED = 20261128
BOOTSTRAP_ROUNDS = 2000


@dataclass(frozen=True)
class Shift:
    """NEW relative to BASE: `ratio` = exp(HL estimate) (1.10: NEW 10 % larger), [lo, hi] its interval at the
    achieved confidence `level`, `p` the two-sided Mann-Whitney U p-value (None: too few samples)."""
    ratio: float
    lo: float
    hi: float
    level: float
    p: float | None
    n_base: int
    n_new: int

    @property
    def change(self) -> float:
        return self.ratio - 1.0


@lru_cache(maxsize=256)
def u_null_cdf(m: int, n: int) -> tuple:
    """P(U <= u) for u = 0..m*n under H0 (no ties), U = #{(i, j): x_i < y_j}, sample sizes m and n.

    Recurrence on the largest observation: it is a y with probability n/(m+n) (then it beats all m x's),
    else an x: p(m, n, u) = n/(m+n) p(m, n-1, u-m) + m/(m+n) p(m-1, n, u)."""
    table = {}
    for i in range(m + 1):
        for j in range(n + 1):
            if i == 0 or j == 0:
                table[i, j] = np.array([1.0])
                continue
            out = np.zeros(i * j + 1)
            a = table[i, j - 1]
            out[i:i + a.size] += j / (i + j) * a
            b = table[i - 1, j]
            out[:b.size] += i / (i + j) * b
            table[i, j] = out
    return tuple(np.cumsum(table[m, n]))


def _ci_rank(m: int, n: int, conf: float) -> tuple:
    """(k, achieved confidence): the interval [D_(k), D_(mn+1-k)] of the sorted pairwise differences."""
    alpha = 1.0 - conf
    if m * n <= EXACT_LIMIT:
        cdf = u_null_cdf(m, n)
        k = 0
        while k < len(cdf) and cdf[k] <= alpha / 2:
            k += 1
        k = max(k, 1)                              # the widest interval there is: [min, max]
        return k, 1.0 - 2.0 * cdf[k - 1] if k - 1 < len(cdf) else 0.0
    mu, sigma = m * n / 2.0, math.sqrt(m * n * (m + n + 1) / 12.0)
    k = max(1, int(math.floor(mu - sps.norm.ppf(1 - alpha / 2) * sigma)))
    return k, conf


def _method(x: np.ndarray, y: np.ndarray) -> str:
    """The exact null distribution when it is valid (no ties) and cheap; scipy's "auto" switches to the normal
    approximation from 8 samples on, whose p-values for complete separation are ~10x too large (10 vs 10:
    1.8e-4 instead of the exact 1.1e-5), which would make Holm's correction across hundreds of benchmarks
    unreachable."""
    both = np.concatenate([x, y])
    small = max(x.size, y.size) <= EXACT_P_SIZE
    return "exact" if small and np.unique(both).size == both.size else "asymptotic"


def shift(base, new, conf: float = 0.95) -> Shift | None:
    """The change from `base` to `new` (positive samples: times or ratios), as a ratio; None when a side is
    empty. With one sample on a side there is an estimate but no interval and no test."""
    x = np.log(np.asarray([v for v in base if v and v > 0], dtype=float))
    y = np.log(np.asarray([v for v in new if v and v > 0], dtype=float))
    if x.size == 0 or y.size == 0:
        return None
    d = np.sort((y[None, :] - x[:, None]).ravel())
    est = float(np.median(d))
    if x.size < 2 or y.size < 2:
        return Shift(math.exp(est), math.nan, math.nan, 0.0, None, int(x.size), int(y.size))
    k, level = _ci_rank(int(x.size), int(y.size), conf)
    lo, hi = d[k - 1], d[d.size - k]
    p = float(sps.mannwhitneyu(y, x, alternative="two-sided", method=_method(x, y)).pvalue)
    return Shift(math.exp(est), math.exp(lo), math.exp(hi), level, p, int(x.size), int(y.size))


def shift_batch(base: np.ndarray, new: np.ndarray) -> tuple:
    """(ratios, p-values) of `shift` for many comparisons at once: row i of `base` (k x m) against row i of
    `new` (k x n); the same estimator and test, vectorised (the synthetic suite runs thousands)."""
    x, y = np.log(np.asarray(base, dtype=float)), np.log(np.asarray(new, dtype=float))
    d = (y[:, None, :] - x[:, :, None]).reshape(x.shape[0], -1)
    ratios = np.exp(np.median(d, axis=1))
    exact = max(x.shape[1], y.shape[1]) <= EXACT_P_SIZE and all(
        np.unique(row).size == row.size for row in np.concatenate([x, y], axis=1))
    p = sps.mannwhitneyu(y, x, alternative="two-sided", axis=1, method="exact" if exact else "asymptotic").pvalue
    return ratios, np.asarray(p, dtype=float)


def median_band(samples, denominator=None, conf: float = 0.95, rounds: int = BOOTSTRAP_ROUNDS,
                seed: int = BOOTSTRAP_SEED) -> tuple | None:
    """(lo, hi): bootstrap percentile interval of median(samples), or of median(samples) / median(denominator)
    when given (each side resampled on its own). None with fewer than 2 samples on a side."""
    a = np.asarray([v for v in samples if v is not None], dtype=float)
    if a.size < 2:
        return None
    rng = np.random.Generator(np.random.PCG64(seed))
    stat = np.median(rng.choice(a, size=(rounds, a.size)), axis=1)
    if denominator is not None:
        b = np.asarray([v for v in denominator if v is not None], dtype=float)
        if b.size < 2:
            return None
        stat = stat / np.median(rng.choice(b, size=(rounds, b.size)), axis=1)
    q = (1.0 - conf) / 2.0
    return float(np.quantile(stat, q)), float(np.quantile(stat, 1.0 - q))


def holm(pvalues) -> list:
    """Holm's step-down adjusted p-values (family-wise error rate); None entries stay None."""
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    order = sorted(idx, key=lambda i: pvalues[i])
    out, running, m = list(pvalues), 0.0, len(idx)
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def benjamini_hochberg(pvalues) -> list:
    """Benjamini-Hochberg step-up adjusted p-values (q-values; false discovery rate); None entries stay None."""
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    order = sorted(idx, key=lambda i: pvalues[i], reverse=True)
    out, running, m = list(pvalues), 1.0, len(idx)
    for back, i in enumerate(order):
        rank = m - back
        running = min(running, pvalues[i] * m / rank)
        out[i] = min(1.0, running)
    return out


def adjust(pvalues, method: str) -> list:
    if method == "holm":
        return holm(pvalues)
    if method == "bh":
        return benjamini_hochberg(pvalues)
    return list(pvalues)


def min_attainable_p(m: int, n: int) -> float:
    """The smallest two-sided exact Mann-Whitney p-value with m and n samples: 2 / C(m+n, m)."""
    return min(1.0, 2.0 / math.comb(m + n, m))
