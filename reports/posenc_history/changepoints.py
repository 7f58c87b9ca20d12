"""E-Divisive change points (Matteson & James 2014, "A nonparametric approach for multiple change point
analysis of multivariate data", JASA 109(505)), univariate, with the energy distance's moment index alpha = 1.

For a segment split into X = Z[s:tau] (m points) and Y = Z[tau:kappa] (n points) the sample energy distance is

    E(X, Y) = 2/(mn) sum_ij |X_i - Y_j|^a - 1/C(m,2) sum_{i<k} |X_i - X_k|^a - 1/C(n,2) sum_{j<k} |Y_j - Y_k|^a

and the split statistic is Q(X, Y) = mn/(m+n) E(X, Y). As in the paper (and the `ecp` R package's e.divisive),
the best split of a segment maximises Q over tau and over the end kappa of Y (kappa <= the segment's end; the
shorter Y lets a segment holding two changes show the first one). Change points are found one at a time by
bisection: the segment whose best split has the largest Q gives the next candidate, which is kept when a
permutation test says it is significant: the observations are permuted within every current segment R times,
the best Q is recomputed, and p = (1 + #{Q_perm >= Q_obs}) / (R + 1). The search stops at the first candidate
with p > sig_level. Every block sum comes from a 2-D prefix sum of the distance matrix, so one search over a
segment of length L costs O(L^2).

Determinism: the permutations come from a seeded generator, so the same series gives the same answer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DEFAULT_SIG = 0.05
DEFAULT_PERMUTATIONS = 199
DEFAULT_MIN_SIZE = 3
SEED = 1306_4933            # arXiv:1306.4933, the paper


@dataclass
class Result:
    change_points: list                      # indices of the first observation after each change, sorted
    p_values: dict = field(default_factory=dict)   # change point -> permutation p-value
    order_found: list = field(default_factory=list)
    considered_last: tuple | None = None     # (index, p) of the first candidate that was not significant


def _prefix(d: np.ndarray) -> np.ndarray:
    p = np.zeros((d.shape[0] + 1, d.shape[1] + 1))
    p[1:, 1:] = d.cumsum(0).cumsum(1)
    return p


def _block(p, a1, a2, b1, b2):
    return p[a2, b2] - p[a1, b2] - p[a2, b1] + p[a1, b1]


def best_split(p: np.ndarray, s: int, e: int, min_size: int) -> tuple:
    """(Q, tau) of the best split of the segment [s, e) given the prefix sums `p` of the distance matrix;
    (-inf, None) when the segment is shorter than 2 * min_size."""
    taus = np.arange(s + min_size, e - min_size + 1)
    if taus.size == 0:
        return -np.inf, None
    kappas = np.arange(s + 2 * min_size, e + 1)
    t, k = np.meshgrid(taus, kappas, indexing="ij")
    valid = k - t >= min_size
    t, k = t[valid], k[valid]
    m, n = (t - s).astype(float), (k - t).astype(float)
    within_x = _block(p, s, t, s, t) / (m * (m - 1))        # sum over i != k, i.e. 2 sum_{i<k}, / (m (m-1))
    within_y = _block(p, t, k, t, k) / (n * (n - 1))
    between = 2.0 * _block(p, s, t, t, k) / (m * n)
    q = m * n / (m + n) * (between - within_x - within_y)
    i = int(np.argmax(q))
    return float(q[i]), int(t[i])


def _best_over(p, bounds, min_size) -> tuple:
    best = (-np.inf, None)
    for s, e in zip(bounds[:-1], bounds[1:]):
        cand = best_split(p, s, e, min_size)
        if cand[0] > best[0]:
            best = cand
    return best


def _distances(z: np.ndarray, alpha: float) -> np.ndarray:
    return np.abs(z[:, None] - z[None, :]) ** alpha


def _permutation_p(z, bounds, q_obs, min_size, alpha, permutations, sig, rng) -> float:
    """p-value of the best split (statistic q_obs) by permuting within the current segments. Stops early once
    the p-value can no longer reach `sig` (the decision is the same as after all permutations)."""
    above = 0
    limit = sig * (permutations + 1) - 1
    for r in range(permutations):
        perm = np.concatenate([s + rng.permutation(e - s) for s, e in zip(bounds[:-1], bounds[1:])])
        q, _ = _best_over(_prefix(_distances(z[perm], alpha)), bounds, min_size)
        above += q >= q_obs
        if above > limit:
            return (above + 1) / (r + 2)
    return (above + 1) / (permutations + 1)


def e_divisive(series, sig_level: float = DEFAULT_SIG, permutations: int = DEFAULT_PERMUTATIONS,
               min_size: int = DEFAULT_MIN_SIZE, alpha: float = 1.0, seed: int = SEED,
               max_change_points: int | None = None) -> Result:
    """The significant change points of `series` (a sequence of numbers)."""
    if min_size < 2:
        raise ValueError(f"min_size must be >= 2 (got {min_size}): the within-segment sums need two points")
    if not 0 < alpha < 2:
        raise ValueError(f"alpha must be in (0, 2) (got {alpha})")
    z = np.asarray(series, dtype=float)
    rng = np.random.Generator(np.random.PCG64(seed))
    result = Result([])
    p = _prefix(_distances(z, alpha))
    while max_change_points is None or len(result.change_points) < max_change_points:
        bounds = [0, *result.change_points, z.size]
        q_obs, tau = _best_over(p, bounds, min_size)
        if tau is None or not q_obs > 0:
            break
        pval = _permutation_p(z, bounds, q_obs, min_size, alpha, permutations, sig_level, rng)
        if pval > sig_level:
            result.considered_last = (tau, pval)
            break
        result.change_points = sorted([*result.change_points, tau])
        result.order_found.append(tau)
        result.p_values[tau] = pval
    return result


def segments(n: int, change_points) -> list:
    """[(start, end)] of the segments `change_points` cut 0..n into."""
    bounds = [0, *sorted(change_points), n]
    return list(zip(bounds[:-1], bounds[1:]))
