"""E-Divisive against the published algorithm's behaviour: steps in mean are found where they are, a change in
spread alone is found (alpha = 1 sees the whole distribution, not only the mean: Matteson & James 2014, and the
examples of the `ecp` R package's e.divisive documentation: normal segments differing in mean, then in
variance), a series without a step gives none at the permutation test's level, the statistic is the paper's,
and the search is deterministic."""
import unittest
from itertools import combinations

import numpy as np

import helpers  # noqa: F401  (puts reports/ on sys.path)

from posenc_history import changepoints as cp


def energy_q(x, y):
    """Q(X, Y) = mn/(m+n) (2/(mn) sum|x-y| - 1/C(m,2) sum_{i<k}|x_i-x_k| - 1/C(n,2) sum_{j<k}|y_j-y_k|), directly."""
    m, n = len(x), len(y)
    between = sum(abs(a - b) for a in x for b in y) * 2 / (m * n)
    within_x = sum(abs(a - b) for a, b in combinations(x, 2)) / (m * (m - 1) / 2)
    within_y = sum(abs(a - b) for a, b in combinations(y, 2)) / (n * (n - 1) / 2)
    return m * n / (m + n) * (between - within_x - within_y)


class Statistic(unittest.TestCase):
    def test_best_split_is_the_papers_statistic(self):
        rng = np.random.default_rng(4)
        z = np.r_[rng.normal(0, 1, 9), rng.normal(2, 1, 7)]
        p = cp._prefix(cp._distances(z, 1.0))
        q, tau = cp.best_split(p, 0, z.size, 3)
        brute = max((energy_q(z[:t], z[t:k]), t) for t in range(3, z.size - 2) for k in range(t + 3, z.size + 1))
        self.assertAlmostEqual(q, brute[0], places=10)
        self.assertEqual(tau, brute[1])

    def test_arguments_are_checked(self):
        with self.assertRaises(ValueError):
            cp.e_divisive([1, 2, 3], min_size=1)
        with self.assertRaises(ValueError):
            cp.e_divisive([1, 2, 3], alpha=2.0)


class Detection(unittest.TestCase):
    def test_mean_step(self):
        rng = np.random.default_rng(10)
        z = np.r_[rng.normal(0, 1, 40), rng.normal(3, 1, 40)]
        self.assertEqual(cp.e_divisive(z).change_points, [40])

    def test_ecp_documentation_example_mean_then_variance(self):
        rng = np.random.default_rng(100)                  # ecp: c(rnorm(100), rnorm(100, 3), rnorm(100, 0, 2)), here 50 each
        z = np.r_[rng.normal(0, 1, 50), rng.normal(3, 1, 50), rng.normal(0, 2, 50)]
        found = cp.e_divisive(z, min_size=10).change_points
        self.assertEqual(len(found), 2)
        self.assertLessEqual(abs(found[0] - 50), 3)
        self.assertLessEqual(abs(found[1] - 100), 5)

    def test_change_in_spread_alone(self):
        rng = np.random.default_rng(7)
        z = np.r_[rng.normal(0, 1, 60), rng.normal(0, 5, 60)]
        found = cp.e_divisive(z, min_size=10).change_points
        self.assertEqual(len(found), 1)
        self.assertLessEqual(abs(found[0] - 60), 8)

    def test_no_step_rarely_gives_a_change_point(self):
        rng = np.random.default_rng(3)
        false = sum(bool(cp.e_divisive(rng.normal(0, 1, 20), permutations=99, seed=s).change_points)
                    for s in range(40))
        self.assertLessEqual(false, 6)                   # sig 0.05: ~2 expected of 40

    def test_eight_runs_with_the_last_four_slower(self):
        rng = np.random.default_rng(5)
        z = np.log(np.r_[rng.lognormal(0, 0.03, 4), 3.0 * rng.lognormal(0, 0.03, 4)])
        res = cp.e_divisive(z)
        self.assertEqual(res.change_points, [4])
        self.assertLess(res.p_values[4], 0.05)

    def test_six_runs_are_too_few_at_five_percent(self):
        z = [0.0, 0.01, -0.01, 1.0, 1.01, 0.99]            # C(6,3) = 20 arrangements: p >= 2/20 > 0.05
        self.assertEqual(cp.e_divisive(z).change_points, [])

    def test_two_steps_and_min_size(self):
        z = np.r_[np.zeros(10), np.ones(10) * 5, np.ones(10) * 2] + np.random.default_rng(1).normal(0, 0.1, 30)
        self.assertEqual(cp.e_divisive(z).change_points, [10, 20])
        self.assertEqual(cp.e_divisive(z, max_change_points=1).change_points, [10])
        found = cp.e_divisive(np.r_[np.zeros(12), 5.0, 5.0], min_size=3).change_points
        self.assertEqual(found, [])                       # a 2-point tail is below min_size

    def test_deterministic(self):
        rng = np.random.default_rng(9)
        z = np.r_[rng.normal(0, 1, 15), rng.normal(1.5, 1, 15)]
        self.assertEqual(cp.e_divisive(z), cp.e_divisive(z))

    def test_constant_series(self):
        self.assertEqual(cp.e_divisive([1.0] * 12).change_points, [])


if __name__ == "__main__":
    unittest.main()
