"""Tests of the TENER report module (reports/posenc_report/schemes/tener.py): the definition in Python against
hand-computed rows (TENER's h − 1 denominator), the fixed queries, the asymmetry and the absolute encoding's closed
form, its speed headline on fabricated benchmark names of benchmarks/tener_bench.cpp, and its figures without a CLI,
from a fake CLI (a Python script that writes what `posenc index|scores tener --format json` and `posenc table
sinusoidal --preset marian --format json` write, computed from the definition), from CLIs that embed |j − i| (no
direction), use the paper's 2k/d frequencies, scale the scores, break the absolute table's symmetry or print the
wrong shape and, where build/cli/posenc is built with tener, from the real CLI (python3 -m unittest discover -s
reports/tests)."""
from __future__ import annotations

import math
import os
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report import bench, relative_figures, schemes, summary  # noqa: E402
from posenc_report.schemes import tener  # noqa: E402
from samples import FakeCliTest, bench_entry, cli_has_scheme, write_fake  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"

# The fake CLI: `index tener` (--key), `scores tener` (zero biases; exact regime, unscaled) as cli/schemes/tener.cpp
# writes them — rows L + j - i / L + i - j, scores (q + a).k + (q + b).R(j - i) + k.R(i - j) with R(t) = [sin | cos](t
# exp(-k ln(10000) / (h - 1))) — and `table sinusoidal --preset marian` (the paper's halves of 10000^(-2t/d), positions
# a:b, b exclusive) as cli/schemes/sinusoidal.cpp writes it.
FAKE = r'''
import ast, json, math, struct, sys

def read_npy(path):
    data = open(path, "rb").read()
    n = struct.unpack("<H", data[8:10])[0]
    head = ast.literal_eval(data[10:10 + n].decode("latin1"))
    assert head["descr"] == "<f8" and not head["fortran_order"], head
    shape = head["shape"]
    return shape, list(struct.unpack("<%dd" % math.prod(shape), data[10 + n:]))

args = sys.argv[1:]
verb, scheme, rest = args[0], args[1], args[2:]
assert (verb, scheme) in (("index", "tener"), ("scores", "tener"), ("table", "sinusoidal")), args
opt, i = {}, 0
while i < len(rest):
    if rest[i] == "--key":
        opt["--key"] = True
        i += 1
        continue
    opt[rest[i]] = rest[i + 1]
    i += 2
assert opt.pop("--format") == "json"

def tener_row(t, dh):
    h = dh // 2
    w = [math.exp(-k * math.log(10000.0) / (h - 1)) for k in range(h)]
    return [math.sin(t * x) for x in w] + [math.cos(t * x) for x in w] + [0.0] * (dh % 2)

spec = {"heads": 6, "d_head": 32, "scale": False, "init_size": 1200, "regime": "exact"}
if verb == "index":
    lq, lk = int(opt.pop("--query-length")), int(opt.pop("--key-length"))
    key = opt.pop("--key", False)
    assert not opt and lq == lk, opt
    f = (lambda i, j: lk + i - j) if key else (lambda i, j: lk + j - i)
    print(json.dumps({"scheme": scheme, "spec": spec, "note": "rows", "query_length": lq, "key_length": lk,
                      "indices": [[f(i, j) for j in range(lk)] for i in range(lq)]}))
elif verb == "scores":
    (n, dh), q = read_npy(opt.pop("--q"))
    (nk, _), k = read_npy(opt.pop("--k"))
    assert not opt and nk == n, opt
    spec.update(heads=1, d_head=dh)
    scale = 1.0
    qs = [q[i * dh:(i + 1) * dh] for i in range(n)]
    ks = [k[j * dh:(j + 1) * dh] for j in range(n)]
    def dot(a, b):
        return sum(x * y for x, y in zip(a, b))
    scores = [[scale * (dot(qs[i], ks[j]) + dot(qs[i], tener_row(j - i, dh)) + dot(ks[j], tener_row(i - j, dh)))
               for j in range(n)] for i in range(n)]
    print(json.dumps({"scheme": scheme, "spec": spec, "note": "scores", "form": "blas", "shape": [1, n, n],
                      "scale": scale, "mask": "none", "scores": scores}))
else:
    assert opt.pop("--preset") == "marian" and opt.pop("--dtype") == "f64"
    dim = int(opt.pop("--dim"))
    a, b = map(int, opt.pop("--positions").split(":"))
    assert not opt, opt
    w = [10000.0 ** (-2.0 * t / dim) for t in range(dim // 2)]
    def pe(p):
        return [math.sin(p * x) for x in w] + [math.cos(p * x) for x in w]
    print(json.dumps({"scheme": "sinusoidal", "spec": {"layout": "halves", "rule": "paper", "dim": dim,
                                                       "base": 10000.0, "regime": "exact"},
                      "dtype": "f64", "positions": list(range(a, b)), "rows": [pe(p) for p in range(a, b)]}))
'''


class Renderer:
    def __init__(self):
        self.plots = []

    def image(self, plot, alt):
        self.plots.append(plot)
        return f"IMG {plot.name} {len(plot.series)}"


class Ctx:
    def __init__(self, cli):
        self.cli, self.figure_notes, self.renderer = cli, [], Renderer()


def table_rows(markdown: str) -> list:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith("| i (q_i)") and not line.startswith("| ---")]



class TenerModuleTest(FakeCliTest):
    FAKE = FAKE

    def test_registered(self):
        self.assertIn("tener", schemes.registered())
        self.assertEqual(tener.SCHEME, "tener")
        self.assertEqual(tener.CLAIMS_LINK, "[claims](claims.md#scheme-tener)")
        self.assertTrue(callable(tener.figures))

    def test_headline_kernels(self):
        self.assertEqual([(h["family"], h["variant"], h["baseline"]) for h in tener.HEADLINE_KERNELS],
                         [("table", "exact_f32", "bandwidth"), ("scores", "blas_f32", "sgemm")])
        args = "heads:1/L:4096/head_dim:64/threads:1"
        data = {"benchmarks": [bench_entry("tener/table/exact_f32/L:8192/d:1024/threads:1", 4, 4e9),
                               bench_entry("tener/table/stream_store_f32/L:8192/d:1024/threads:1", 2, 16e9),
                               bench_entry(f"tener/scores/blas_f32/{args}", 50),
                               bench_entry(f"tener/scores/sgemm_f32/{args}", 10)]}
        head = summary.speed(bench.records("bench-tener", data), tener.HEADLINE_KERNELS)
        self.assertEqual([h["record"].name for h in head], ["tener/table/exact_f32/L:8192/d:1024/threads:1",
                                                           f"tener/scores/blas_f32/{args}"])
        self.assertAlmostEqual(head[0]["value"], 0.25)
        self.assertAlmostEqual(head[1]["value"], 0.2)

    def test_definition(self):
        # h = 2 pairs: w = (1, exp(-ln 10000)) = (1, 1e-4); h = 8: the last w is 1e-4 too (the h - 1 denominator)
        self.assertEqual(tener.frequencies(4)[0], 1.0)
        self.assertAlmostEqual(tener.frequencies(4)[1], 1e-4, places=18)
        self.assertAlmostEqual(tener.frequencies(16)[7], 1e-4, places=18)
        self.assertAlmostEqual(tener.frequencies(16)[1], 10000 ** (-1 / 7), places=15)
        w = tener.frequencies(4)
        self.assertEqual(tener.table_row(-2, 4), [math.sin(-2), math.sin(-2 * w[1]), math.cos(2), math.cos(2 * w[1])])
        self.assertEqual(tener.table_row(1, 5)[4], 0.0)                   # odd d_head: a zero column
        self.assertEqual(tener.absolute_frequencies(4), [1.0, 0.01])
        (l1, q1), (l2, q2) = tener.queries(16)
        self.assertEqual((l1, q1), ("q = R(6)", tener.table_row(6, 16)))
        self.assertEqual(l2, f"q ~ N(0, 1) (seed {tener.SEED})")
        self.assertEqual(q2, tener.queries(16)[1][1])                     # seeded: the same every time
        self.assertTrue(all(relative_figures.f32(v) == v for v in q2))
        self.assertEqual(tener.middle_curve([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), {-1: 4, 0: 5, 1: 6})
        self.assertEqual(tener.asymmetry({-2: 1.0, -1: 5.0, 0: 0.0, 1: 2.0, 2: 1.5}), (3.0, 1))
        self.assertEqual(tener.asymmetry({-1: 1.0, 0: 9.0, 1: 1.0}), (0.0, 0))
        # PE(p).PE(p + k) = Σ_t cos(k w_t): the rows of positions 0..4, p = 2
        rows = [tener.halves_row(p, tener.absolute_frequencies(4)) for p in range(5)]
        curve = tener.absolute_curve(rows, 2)
        self.assertEqual(sorted(curve), [-2, -1, 0, 1, 2])
        for k, v in curve.items():
            self.assertAlmostEqual(v, tener.closed_form(k, 4)[0], places=15)
        self.assertEqual(tener.closed_form(0, 4), (2.0, 2.0))

    def test_score_errors(self):
        q = tener.queries(8)[1][1]
        want = [[sum(a * b for a, b in zip(q, tener.table_row(j - i, 8))) for j in range(4)] for i in range(4)]
        self.assertLess(tener.score_errors(want, q, 8)[0], 1e-15)
        flipped = [[sum(a * b for a, b in zip(q, tener.table_row(i - j, 8))) for j in range(4)] for i in range(4)]
        err, i, j = tener.score_errors(flipped, q, 8)
        self.assertGreater(err, 1e-3)
        self.assertNotEqual(i, j)

    def test_figures_without_a_cli(self):
        ctx = Ctx(None)
        out = tener.figures(ctx)
        self.assertEqual([img.split("`")[1] for img, _ in out],
                         ["table-tener-index", "table-tener-index", "fig-tener-direction"])
        for img, _ in out:
            self.assertIn("not drawn: no --cli given", img)
        self.assertEqual(out[2][1], "")
        self.assertEqual(ctx.renderer.plots, [])
        self.assertEqual(ctx.figure_notes, [("figure data", "not drawn: no --cli given")])
        for img, _ in tener.figures(Ctx(str(REPO / "no" / "such" / "posenc"))):
            self.assertIn("could not run", img)

    def test_figures_from_a_cli_of_the_wrong_shape(self):
        bad = write_fake(self.tmp.name, "posenc-bad", "import json\nprint(json.dumps({'spec': {}, 'scores': "
                         "[[None] * 81] * 80, 'shape': [1, 81, 81], 'scale': 1.0}))\n")
        (a, _), _, (img, cap) = tener.figures(Ctx(bad))
        self.assertIn("not drawn", a)
        self.assertIn("unexpected output of `posenc scores tener --q", img)
        self.assertIn("81 rows of 81 numbers", img)
        self.assertEqual(cap, "")

    def test_a_cli_without_direction_is_caught(self):
        # R(|t|): a sinusoid of the distance only (what TENER's argument says the absolute encoding amounts to)
        line = "return [math.sin(t * x) for x in w]"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-abs", FAKE.replace(line, "return [math.sin(abs(t) * x) for x in w]"))
        _, _, (img, cap) = tener.figures(Ctx(wrong))
        self.assertEqual(img, "IMG fig-tener-direction 4")
        self.assertIn("both above 0.001: **no**", cap)
        self.assertIn("Σ_c |q_c R_c|: **no** (largest", cap)
        self.assertIn("The absolute one is symmetric**: max |f(k) − f(−k)| = ", cap)

    def test_a_cli_with_the_paper_frequencies_is_caught(self):
        # 10000^(-2k/d) instead of TENER's exp(-k ln(10000) / (h - 1))
        line = "w = [math.exp(-k * math.log(10000.0) / (h - 1)) for k in range(h)]"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-paper", FAKE.replace(
            line, "w = [10000.0 ** (-2.0 * k / dh) for k in range(h)]"))
        _, _, (_, cap) = tener.figures(Ctx(wrong))
        self.assertIn("Σ_c |q_c R_c|: **no**", cap)
        self.assertIn("both above 0.001: yes", cap)                      # still direction-aware, only wrong

    def test_a_cli_that_scales_the_scores_is_caught(self):
        line = "    scale = 1.0\n"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-scaled", FAKE.replace(line, "    scale = 1.0 / math.sqrt(dh)\n"))
        _, _, (_, cap) = tener.figures(Ctx(wrong))
        self.assertIn("the CLI's scale is 1 (unscaled): **no**", cap)
        self.assertIn("Σ_c |q_c R_c|: **no**", cap)

    def test_an_absolute_table_that_is_not_symmetric_is_caught(self):
        line = "return [math.sin(p * x) for x in w] + [math.cos(p * x) for x in w]"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-shift", FAKE.replace(
            line, "return [math.sin(p * x) for x in w] + [math.cos(1.01 * p * x) for x in w]"))
        _, _, (_, cap) = tener.figures(Ctx(wrong))
        self.assertIn("of its largest magnitude d/2 = 8: **no**", cap)
        self.assertIn("Σ_t cos(k w_t) computed here to within 1.00e-12 of d/2: **no**", cap)
        self.assertIn("Σ_c |q_c R_c|: yes", cap)                          # TENER's own numbers are right

    def _check_figures(self, cli: str) -> list:
        ctx = Ctx(cli)
        (qa, qcap), (ka, kcap), (img, cap) = tener.figures(ctx)
        self.assertEqual(table_rows(qa)[0], ["0 (0)", "5", "6", "7", "8", "9"])
        self.assertEqual(table_rows(ka)[0], ["0 (0)", "5", "4", "3", "2", "1"])
        for c in (qcap, kcap):
            self.assertIn("every entry equals the definition's row", c)
        self.assertEqual(img, "IMG fig-tener-direction 4")
        (plot,) = ctx.renderer.plots
        peaked, rnd, absolute = (dict(s.rows) for s in plot.series[:3])
        for c in (peaked, rnd, absolute):
            self.assertEqual(sorted(c), list(range(-40, 41)))
        # q = R(6): Σ_k cos((t − 6) w_k), 8 at t = 6; the absolute Σ_t cos(k w_t), 8 at k = 0 and symmetric
        self.assertEqual(max(peaked, key=peaked.get), 6)
        self.assertAlmostEqual(peaked[6], 8.0, places=13)
        for t in (-40, -6, 0, 17):
            self.assertAlmostEqual(peaked[t], sum(math.cos((t - 6) * w) for w in tener.frequencies(16)), places=13)
        self.assertGreater(peaked[6] - peaked[-6], 2.5)
        self.assertAlmostEqual(absolute[0], 8.0, places=14)
        self.assertTrue(all(abs(absolute[k] - absolute[-k]) < 1e-13 for k in range(41)))
        self.assertGreater(max(abs(rnd[k] - rnd[-k]) for k in range(41)), 1.0)
        self.assertEqual([x for x, _ in plot.series[3].rows], [0, 0])
        for phrase in ("for q = R(6), score(+6) = 8 but score(−6) = 5.47", "both above 0.001: yes",
                       "within 1.00e-12 of its largest magnitude d/2 = 8: yes", "Σ_c |q_c R_c|: yes",
                       "the CLI's scale is 1 (unscaled): yes", "computed here to within 1.00e-12 of d/2: yes",
                       "the table's positions are 0 .. 80: yes", "(TENER-DIR-1, TENER-ODD-1, TENER-SCORES-1)",
                       "[sinusoidal claims](../sinusoidal/claims.md#scheme-sinusoidal) (SIN-DOT-1, SIN-DOT-2)"):
            self.assertIn(phrase, cap)
        self.assertNotIn("**no**", qcap + kcap + cap)
        return ctx.figure_notes

    def test_figures_from_a_fake_cli(self):
        notes = self._check_figures(self.fake)
        self.assertEqual(notes, [("figure data", "the posenc CLI (`posenc index tener`, `posenc scores tener` and "
                                  "`posenc table sinusoidal`, `--format json`; 5 invocations)")])

    @unittest.skipUnless(cli_has_scheme(CLI, "tener"), "posenc CLI not built with tener")
    def test_figures_from_the_cli(self):
        notes = self._check_figures(str(CLI))
        self.assertIn("5 invocations", notes[0][1])


if __name__ == "__main__":
    unittest.main()
