"""Tests of the XLNet report module (reports/posenc_report/schemes/xlnet.py): the definition in Python against
hand-computed rows, the mirror of the backward direction and the score checks, its speed headline on fabricated
benchmark names of benchmarks/xlnet_bench.cpp, and its figures without a CLI, from a fake CLI (a Python script that
writes what `posenc index|table|scores xlnet --format json` write, computed from the definition), from CLIs that
ignore the direction, get the sign of the distance wrong or print the wrong shape and, where build/cli/posenc is
built with xlnet, from the real CLI (python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import math
import os
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report import bench, schemes, summary  # noqa: E402
from posenc_report.schemes import xlnet  # noqa: E402
from samples import FakeCliTest, bench_entry, cli_has_scheme, write_fake  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"

# The fake CLI: `index`, `table` and `scores xlnet` (schemes/xlnet/spec.cpp's defaults; --d-model, --attn-type,
# --direction and --clamp-len overrides; exact regime), JSON as cli/schemes/xlnet.cpp writes it: pos_seq klen ..
# -qlen + 1 (bi) or klen .. 0 (uni), negated backward, clamped; row c(i, j) = qlen - i + j; the scores scale ((q +
# r_w_bias).k + (q + r_r_bias).R[c] r) with zero biases and no token types, null where uni leaves an entry undefined.
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
assert scheme == "xlnet" and verb in ("index", "table", "scores"), args
opt, i = {}, 0
while i < len(rest):
    opt[rest[i]] = rest[i + 1]
    i += 2
assert opt.pop("--format") == "json"
spec = {"d_model": 768, "heads": 12, "d_head": 64, "attn_type": "bi", "direction": "forward", "clamp_len": -1,
        "same_length": False, "regime": "exact"}
for flag, key, conv in (("--d-model", "d_model", int), ("--attn-type", "attn_type", str),
                        ("--direction", "direction", str), ("--clamp-len", "clamp_len", int)):
    if flag in opt:
        spec[key] = conv(opt.pop(flag))
d = spec["d_model"]
sigma = -1 if spec["direction"] == "backward" else 1

def pos_seq(qlen, klen):
    last = -qlen + 1 if spec["attn_type"] == "bi" else 0
    out = [sigma * p for p in range(klen, last - 1, -1)]
    c = spec["clamp_len"]
    return [max(-c, min(c, p)) for p in out] if c > 0 else out

def row(p):
    w = [10000.0 ** (-2.0 * k / d) for k in range(d // 2)]
    return [math.sin(p * x) for x in w] + [math.cos(p * x) for x in w]

def index(i, j, qlen, klen):
    return qlen - i + j if spec["attn_type"] == "bi" or j <= klen - qlen + i else -1

if verb == "index":
    lq, lk = int(opt.pop("--query-length")), int(opt.pop("--key-length"))
    assert not opt, opt
    print(json.dumps({"scheme": scheme, "spec": spec, "note": "c(i, j)", "query_length": lq, "key_length": lk,
                      "indices": [[index(i, j, lq, lk) for j in range(lk)] for i in range(lq)]}))
elif verb == "table":
    lq, lk = int(opt.pop("--query-length")), int(opt.pop("--key-length"))
    assert opt.pop("--dtype") == "f64" and not opt, opt
    ps = pos_seq(lq, lk)
    print(json.dumps({"scheme": scheme, "spec": spec, "dtype": "f64", "note": "row c", "position": ps,
                      "table": [row(p) for p in ps]}))
else:
    (lq, dh), q = read_npy(opt.pop("--q"))
    (lk, _), k = read_npy(opt.pop("--k"))
    (dm, heads, dr), r = read_npy(opt.pop("--r"))
    assert not opt and dm == d and heads == 1 and dr == dh, opt
    spec.update(heads=1, d_head=dh)
    scale = 1.0 / math.sqrt(dh)
    ps = pos_seq(lq, lk)
    qs = [q[i * dh:(i + 1) * dh] for i in range(lq)]
    ks = [k[j * dh:(j + 1) * dh] for j in range(lk)]
    def p_row(c):
        t = row(ps[c])
        return [sum(t[m] * r[m * dh + e] for m in range(d)) for e in range(dh)]
    rows = [p_row(c) for c in range(len(ps))]
    scores = []
    for i in range(lq):
        out = []
        for j in range(lk):
            c = index(i, j, lq, lk)
            out.append(None if c < 0 else scale * (sum(a * b for a, b in zip(qs[i], ks[j]))
                                                    + sum(a * b for a, b in zip(qs[i], rows[c]))))
        scores.append(out)
    print(json.dumps({"scheme": scheme, "spec": spec, "note": "scores", "form": "blas", "shape": [1, lq, lk],
                      "scale": scale, "mask": "none", "scores": scores}))
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



class XlnetModuleTest(FakeCliTest):
    FAKE = FAKE

    def test_registered(self):
        self.assertIn("xlnet", schemes.registered())
        self.assertEqual(xlnet.SCHEME, "xlnet")
        self.assertEqual(xlnet.CLAIMS_LINK, "[claims](claims.md#scheme-xlnet)")
        self.assertTrue(callable(xlnet.figures))

    def test_headline_kernels(self):
        self.assertEqual([(h["family"], h["variant"], h["baseline"]) for h in xlnet.HEADLINE_KERNELS],
                         [("table", "exact_f32", "bandwidth"), ("scores", "blas_f32", "sgemm")])
        args = "heads:1/L:4096/head_dim:64/threads:1"
        data = {"benchmarks": [bench_entry("xlnet/table/exact_f32/L:8192/d:1024/threads:1", 4, 6e9),
                               bench_entry("xlnet/table/stream_store_f32/L:8192/d:1024/threads:1", 2, 12e9),
                               bench_entry(f"xlnet/scores/blas_f32/{args}", 40),
                               bench_entry(f"xlnet/scores/sgemm_f32/{args}", 10)]}
        head = summary.speed(bench.records("bench-xlnet", data), xlnet.HEADLINE_KERNELS)
        self.assertEqual([h["record"].name for h in head], ["xlnet/table/exact_f32/L:8192/d:1024/threads:1",
                                                           f"xlnet/scores/blas_f32/{args}"])
        self.assertAlmostEqual(head[0]["value"], 0.5)
        self.assertAlmostEqual(head[1]["value"], 0.25)

    def test_definition(self):
        self.assertEqual(xlnet.frequencies(4), [1.0, 0.01])
        self.assertEqual(xlnet.table_row(-2, 4), [math.sin(-2), math.sin(-0.02), math.cos(2), math.cos(0.02)])
        self.assertEqual(xlnet.fixed_query(4), xlnet.table_row(xlnet.T0, 4))
        # R(-p) is R(p) with its sin half negated
        self.assertEqual(xlnet.sin_negated(xlnet.table_row(3, 4)), xlnet.table_row(-3, 4))
        self.assertEqual(xlnet.sin_negated([1.0, 2.0, 3.0, 4.0]), [-1.0, -2.0, 3.0, 4.0])
        self.assertEqual(xlnet.middle_curve([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), {1: 4, 0: 5, -1: 6})
        table = {"position": [3, 2, 1, 0, -1], "table": [xlnet.table_row(p, 4) for p in (3, 2, 1, 0, -1)]}
        q = [1.0, 0.0, 0.0, 0.0]
        self.assertEqual(xlnet.via_table(table, q, 0.5, -1), (0.5 * math.sin(-1), 0.5 * math.sin(1)))

    def test_score_errors(self):
        # 3 queries, 3 keys (bi, no memory), q = R(T0): scale <q, R(sigma (i - j))>
        q = xlnet.fixed_query(4)
        for sigma in (1, -1):
            want = [[0.5 * sum(a * b for a, b in zip(q, xlnet.table_row(sigma * (i - j), 4))) for j in range(3)]
                    for i in range(3)]
            self.assertLess(xlnet.score_errors(want, q, 4, sigma, 0.5)[0], 1e-15)     # Python's sum vs fsum
            err, i, j = xlnet.score_errors(want, q, 4, -sigma, 0.5)      # the other direction: off wherever i != j
            self.assertGreater(err, 1e-3)
            self.assertNotEqual(i, j)

    def test_figures_without_a_cli(self):
        ctx = Ctx(None)
        out = xlnet.figures(ctx)
        self.assertEqual([img.split("`")[1] for img, _ in out],
                         ["table-xlnet-index", "table-xlnet-index", "fig-xlnet-score-direction"])
        for img, _ in out:
            self.assertIn("not drawn: no --cli given", img)
        self.assertEqual(out[2][1], "")
        self.assertEqual(ctx.figure_notes, [("figure data", "not drawn: no --cli given")])
        for img, _ in xlnet.figures(Ctx(str(REPO / "no" / "such" / "posenc"))):
            self.assertIn("could not run", img)

    def test_figures_from_a_cli_of_the_wrong_shape(self):
        bad = write_fake(self.tmp.name, "posenc-bad", "import json\nprint(json.dumps({'spec': {}, 'indices': "
                         "[[0]], 'scores': [[0.0] * 81] * 81, 'shape': [1, 81, 81], 'scale': 0.25, 'position': [1], "
                         "'table': [[0.0] * 16]}))\n")
        (a, acap), _, (img, cap) = xlnet.figures(Ctx(bad))
        self.assertIn("**the shape differ from the definition**", acap)
        self.assertEqual(table_rows(a), [["0 (3)", "0"]])
        self.assertIn("unexpected output of `posenc table xlnet --d-model 16 --query-length 81 --key-length 81 "
                      "--dtype f64`: expected \"table\": 162 rows of 16 numbers", img)
        self.assertEqual(cap, "")

    def test_a_cli_that_ignores_the_direction_is_caught(self):
        line = 'sigma = -1 if spec["direction"] == "backward" else 1'
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-nodir", FAKE.replace(line, "sigma = 1"))
        _, _, (img, cap) = xlnet.figures(Ctx(wrong))
        self.assertEqual(img, "IMG fig-xlnet-score-direction 3")
        for phrase in ("Σ_c |q_c R_c|: **no** (largest", ", backward at (", "peaking at δ = −12: **no**",
                       "holds to within 1.00e-12: **no**", "between the CLI's two matrices to 1.07: **no**",
                       "its negation backward: **no**", "exactly: **no**"):
            self.assertIn(phrase, cap)
        self.assertIn("The forward curve peaks at δ = 12 (the key 12 before the query): yes", cap)

    def test_a_cli_of_the_wrong_sign_is_caught(self):
        # the row of pos_seq read for delta = j - q_i (the key minus the query) instead of q_i - j
        line = "return qlen - i + j if"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-sign", FAKE.replace(line, "return qlen + i - j if"))
        (a, acap), _, (_, cap) = xlnet.figures(Ctx(wrong))
        self.assertIn("**24 differ from the definition**", acap)
        self.assertIn("Σ_c |q_c R_c|: **no**", cap)
        self.assertIn("The forward curve peaks at δ = 12 (the key 12 before the query): **no**", cap)

    def _check_figures(self, cli: str) -> list:
        ctx = Ctx(cli)
        (bi, bcap), (uni, ucap), (img, cap) = xlnet.figures(ctx)
        self.assertEqual(table_rows(bi)[0], ["0 (3)", "4", "5", "6", "7", "8", "9", "10"])
        self.assertEqual(table_rows(uni)[0], ["0 (3)", "4", "5", "6", "7", "·", "·", "·"])
        for c in (bcap, ucap):
            self.assertIn("every entry equals the definition's row", c)
        self.assertEqual(img, "IMG fig-xlnet-score-direction 3")
        (plot,) = ctx.renderer.plots
        fwd, bwd = dict(plot.series[0].rows), dict(plot.series[1].rows)
        self.assertEqual(sorted(fwd), list(range(-40, 41)))
        self.assertEqual((max(fwd, key=fwd.get), max(bwd, key=bwd.get)), (12, -12))
        self.assertAlmostEqual(fwd[12], 2.0, places=13)                  # scale |R(12)|^2 = 8 / 4
        for x in (-40, -12, 0, 5, 40):                                   # scale Σ_k cos((x ∓ 12) w_k)
            self.assertAlmostEqual(fwd[x], 0.25 * sum(math.cos((x - 12) * w) for w in xlnet.frequencies(16)),
                                   places=13)
            self.assertAlmostEqual(bwd[x], fwd[-x], places=13)
        self.assertGreater(abs(fwd[12] - fwd[-12]), 0.5)
        self.assertEqual([x for x, _ in plot.series[2].rows], [0, 0])
        for phrase in ("Σ_c |q_c R_c|: yes", "the CLI's scale is 1/√16: yes",
                       "The forward curve peaks at δ = 12 (the key 12 before the query): yes",
                       "score(12) = 2, score(−12) = 1.16", "peaking at δ = −12: yes", "holds to within 1.00e-12: yes",
                       "its negation backward: yes", "exactly: yes", "(XLNET-SCORES-1, XLNET-MIRROR-1, XLNET-DIR-1)"):
            self.assertIn(phrase, cap)
        self.assertNotIn("**no**", bcap + ucap + cap)
        return ctx.figure_notes

    def test_figures_from_a_fake_cli(self):
        notes = self._check_figures(self.fake)
        self.assertEqual(notes, [("figure data", "the posenc CLI (`posenc index xlnet`, `posenc scores xlnet` and "
                                  "`posenc table xlnet`, `--format json`; 6 invocations)")])

    @unittest.skipUnless(cli_has_scheme(CLI, "xlnet"), "posenc CLI not built with xlnet")
    def test_figures_from_the_cli(self):
        notes = self._check_figures(str(CLI))
        self.assertIn("6 invocations", notes[0][1])


if __name__ == "__main__":
    unittest.main()
