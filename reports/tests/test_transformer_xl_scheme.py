"""Tests of the Transformer-XL report module (reports/posenc_report/schemes/transformer_xl.py) and the helpers it
shares with xlnet.py and tener.py (reports/posenc_report/relative_figures.py): the definition in Python against
hand-computed rows, positions and float32 steps, its speed headline on fabricated benchmark names of
benchmarks/transformer_xl_bench.cpp, and its figures without a CLI, from a fake CLI (a Python script that writes what
`posenc index|table|scores transformer_xl --format json` write, computed from the definition), from CLIs that ignore
clamp_len, swap the sin and cos halves, clamp one row late or print the wrong shape and, where build/cli/posenc is
built with transformer_xl, from the real CLI (python3 -m unittest discover -s reports/tests)."""
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
from posenc_report.npy import read_npy  # noqa: E402
from posenc_report.schemes import transformer_xl as txl  # noqa: E402
from samples import FakeCliTest, bench_entry, cli_has_scheme, write_fake  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"

# The fake CLI: `index`, `table` and `scores transformer_xl` (schemes/transformer_xl/spec.cpp's defaults and the
# txl-wt103-base preset; --d-model, --clamp-len and --regime overrides), JSON as cli/schemes/transformer_xl.cpp writes
# it: the table's rows c = R(min(klen - 1 - c, clamp_len)) (exact: sin/cos in double; emulated: PositionalEmbedding's
# float32 steps), the scores scale ((q + u).k + (q + v).W_R R[c(i, j)]) with zero biases, null where j > q_i.
FAKE = r'''
import ast, json, math, struct, sys

def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]

def read_npy(path):
    data = open(path, "rb").read()
    n = struct.unpack("<H", data[8:10])[0]
    head = ast.literal_eval(data[10:10 + n].decode("latin1"))
    assert head["descr"] == "<f8" and not head["fortran_order"], head
    shape = head["shape"]
    return shape, list(struct.unpack("<%dd" % math.prod(shape), data[10 + n:]))

args = sys.argv[1:]
verb, scheme, rest = args[0], args[1], args[2:]
assert scheme == "transformer_xl" and verb in ("index", "table", "scores"), args
opt, i = {}, 0
while i < len(rest):
    opt[rest[i]] = rest[i + 1]
    i += 2
assert opt.pop("--format") == "json"
spec = {"d_model": 410, "heads": 10, "d_head": 41, "clamp_len": -1, "same_length": False, "mem_len": 0,
        "regime": "exact"}
if opt.pop("--preset", None) == "txl-wt103-base":
    spec.update(clamp_len=400, same_length=True, mem_len=640, regime="emulated")
for flag, key, conv in (("--d-model", "d_model", int), ("--clamp-len", "clamp_len", int), ("--regime", "regime", str)):
    if flag in opt:
        spec[key] = conv(opt.pop(flag))
d = spec["d_model"]
h = d // 2

def pos(delta):
    return min(delta, spec["clamp_len"]) if spec["clamp_len"] > 0 else delta

def row(p):
    if spec["regime"] == "emulated":
        out = []
        for c in range(d):
            w = f32(1.0 / f32(10000.0 ** f32(f32(2 * (c % h)) / d)))
            a = f32(f32(p) * w)
            out.append(f32(math.sin(a) if c < h else math.cos(a)))
        return out
    w = [10000.0 ** (-2.0 * k / d) for k in range(h)]
    return [math.sin(p * x) for x in w] + [math.cos(p * x) for x in w]

if verb == "index":
    lq, lk = int(opt.pop("--query-length")), int(opt.pop("--key-length"))
    assert not opt, opt
    idx = [[lk - 1 - (lk - lq + i - j) if j <= lk - lq + i else -1 for j in range(lk)] for i in range(lq)]
    print(json.dumps({"scheme": scheme, "spec": spec, "note": "c(i, j)", "query_length": lq, "key_length": lk,
                      "indices": idx}))
elif verb == "table":
    klen = int(opt.pop("--key-length"))
    assert opt.pop("--dtype") == "f64" and not opt, opt
    positions = [pos(klen - 1 - c) for c in range(klen)]
    print(json.dumps({"scheme": scheme, "spec": spec, "dtype": "f64", "note": "row c", "position": positions,
                      "table": [row(p) for p in positions]}))
else:
    (lq, dh), q = read_npy(opt.pop("--q"))
    (lk, _), k = read_npy(opt.pop("--k"))
    (_, dm), w = read_npy(opt.pop("--r-net"))
    assert not opt and dm == d, opt
    spec.update(heads=1, d_head=dh)
    scale = 1.0 / math.sqrt(dh)
    qs = [q[i * dh:(i + 1) * dh] for i in range(lq)]
    ks = [k[j * dh:(j + 1) * dh] for j in range(lk)]
    rows = {}
    def p_row(c):
        if c not in rows:
            r = row(pos(lk - 1 - c))
            rows[c] = [sum(w[e * d + m] * r[m] for m in range(d)) for e in range(dh)]
        return rows[c]
    scores = []
    for i in range(lq):
        qi = lk - lq + i
        scores.append([scale * (sum(a * b for a, b in zip(qs[i], ks[j]))
                                + sum(a * b for a, b in zip(qs[i], p_row(lk - 1 - (qi - j)))))
                       if j <= qi else None for j in range(lk)])
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
    """The body rows of every Markdown table in `markdown`, as lists of stripped cells."""
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith("| i (q_i)") and not line.startswith("| row c")
            and not line.startswith("| ---")]



class TransformerXlModuleTest(FakeCliTest):
    FAKE = FAKE

    def test_registered(self):
        self.assertIn("transformer_xl", schemes.registered())
        self.assertEqual(txl.SCHEME, "transformer_xl")
        self.assertEqual(txl.CLAIMS_LINK, "[claims](claims.md#scheme-transformer_xl)")
        self.assertTrue(callable(txl.figures))

    def test_headline_kernels(self):
        self.assertEqual([(h["family"], h["variant"], h["baseline"]) for h in txl.HEADLINE_KERNELS],
                         [("table", "exact_f32", "bandwidth"), ("scores", "blas_f32", "sgemm")])
        self.assertTrue(all(h["baseline"] in schemes.BASELINES and h["what"] for h in txl.HEADLINE_KERNELS))

    def test_headline_pairs_kernels_with_their_baselines(self):
        args = "heads:1/L:4096/head_dim:64/threads:1"
        data = {"benchmarks": [
            bench_entry("transformer_xl/table/exact_f32/L:8192/d:1024/threads:1", 4, 8e9),
            bench_entry("transformer_xl/table/stream_store_f32/L:8192/d:1024/threads:1", 2, 16e9),
            bench_entry(f"transformer_xl/scores/blas_f32/{args}", 30),
            bench_entry(f"transformer_xl/scores/sgemm_f32/{args}", 10),
        ]}
        head = summary.speed(bench.records("bench-transformer_xl", data), txl.HEADLINE_KERNELS)
        self.assertEqual([h["record"].name for h in head],
                         ["transformer_xl/table/exact_f32/L:8192/d:1024/threads:1",
                          f"transformer_xl/scores/blas_f32/{args}"])
        self.assertAlmostEqual(head[0]["value"], 0.5)
        self.assertAlmostEqual(head[1]["value"], 10 / 30)

    def test_definition(self):
        self.assertEqual([txl.position(x, -1) for x in (0, 5, 500)], [0, 5, 500])
        self.assertEqual([txl.position(x, 0) for x in (0, 5, 500)], [0, 5, 500])     # 0: no clamp either
        self.assertEqual([txl.position(x, 400) for x in (0, 399, 400, 401, 10 ** 6)], [0, 399, 400, 400, 400])
        self.assertEqual(txl.frequencies(4), [1.0, 0.01])
        self.assertEqual(txl.table_row(0, 4), [0.0, 0.0, 1.0, 1.0])
        self.assertEqual(txl.table_row(2, 4), [math.sin(2), math.sin(0.02), math.cos(2), math.cos(0.02)])
        self.assertEqual(txl.fixed_query(4), txl.table_row(txl.T0, 4))
        # emulated: inv_freq_0 = 1 exactly, so column 0 is sin(pos) rounded to float32
        self.assertEqual(txl.emulated_frequency(0, 410), 1.0)
        self.assertEqual(txl.emulated_entry(400, 0, 410), relative_figures.f32(math.sin(400)))
        self.assertEqual(txl.emulated_entry(0, 205, 410), 1.0)
        w = txl.emulated_frequency(100, 410)
        self.assertEqual(w, relative_figures.f32(w))
        self.assertLess(abs(w - 10000.0 ** (-200 / 410)), w * 2.0 ** -22)
        table = [txl.table_row(p, 4) for p in (3, 2, 2)]
        self.assertEqual(txl.table_deviation(table, [3, 2, 2], lambda p, c: txl.table_row(p, 4)[c]), (0.0, 0, 0))
        dev, c, col = txl.table_deviation(table, [3, 2, 1], lambda p, c: txl.table_row(p, 4)[c])
        self.assertEqual((c, col), (2, 2))                           # |cos 2 − cos 1| > |sin 2 − sin 1|
        self.assertAlmostEqual(dev, math.cos(1) - math.cos(2), places=15)

    def test_score_errors(self):
        # 2 queries after 1 memory key, q = R(T0), r_net = I: score = <q, R(pos(q_i - j))> / 2 (d_head 4), -inf above
        q = txl.fixed_query(4)
        want = [[0.5 * sum(a * b for a, b in zip(q, txl.table_row(txl.position(qi - j, 1), 4))) if j <= qi
                 else float("-inf") for j in range(3)] for qi in (1, 2)]
        self.assertEqual(txl.score_errors(want, q, 4, 1, 0.5), (0.0, 0, 0))
        self.assertEqual(txl.last_row_curve(want), {2: want[1][0], 1: want[1][1], 0: want[1][2]})
        self.assertEqual(txl.score_errors(want, q, 4, -1, 0.5)[1:], (1, 0))          # unclamped: delta 2 differs
        hole = [r[:] for r in want]
        hole[0][2] = 0.0                                                              # the junk entry not -inf
        self.assertEqual(txl.score_errors(hole, q, 4, 1, 0.5), (math.inf, 0, 2))
        off = [r[:] for r in want]
        off[1][1] *= 1 + 1e-9
        err, i, j = txl.score_errors(off, q, 4, 1, 0.5)
        self.assertEqual((i, j), (1, 1))
        self.assertGreater(err, txl.SCORE_TOL)

    def test_shared_helpers(self):
        rf = relative_figures
        self.assertEqual(rf.halves_row(1.0, [1.0, 0.5]), [math.sin(1), math.sin(0.5), math.cos(1), math.cos(0.5)])
        self.assertEqual(rf.dot_term([1.0, -2.0], [3.0, 4.0], 0.5), (-2.5, 5.5))
        self.assertEqual(rf.relative_error(1.0, (1.0, 2.0)), 0.0)
        self.assertEqual(rf.relative_error(1.5, (1.0, 2.0)), 0.25)
        self.assertEqual(rf.relative_error(float("-inf"), (float("-inf"), 0.0)), 0.0)
        self.assertEqual(rf.relative_error(0.0, (float("-inf"), 0.0)), math.inf)
        self.assertEqual(rf.relative_error(float("-inf"), (0.0, 1.0)), math.inf)
        self.assertEqual(rf.relative_error(1e-300, (0.0, 0.0)), math.inf)
        self.assertEqual((rf.f32(0.1), rf.ulp32(1.0), rf.ulp32(0.0)), (0.100000001490116119384765625, 2.0 ** -23,
                                                                      2.0 ** -149))
        self.assertEqual((rf.yes(True), rf.yes(False)), ("yes", "**no**"))
        path = os.path.join(self.tmp.name, "nd.npy")
        rf.write_npy_nd(path, (2, 1, 3), [0.5, -1.0, 2.0, 3.0, 4.0, 1e-300])
        with open(path, "rb") as f:
            data = f.read()
        self.assertEqual(read_npy(data), ((2, 1, 3), (0.5, -1.0, 2.0, 3.0, 4.0, 1e-300)))
        self.assertEqual((len(data) - len(data.split(b"\n", 1)[1])) % 64, 0)       # header padded to 64 bytes
        rf.write_npy_nd(path, (3,), [1.0, 2.0, 3.0])
        with open(path, "rb") as f:
            self.assertEqual(read_npy(f.read()), ((3,), (1.0, 2.0, 3.0)))
        with self.assertRaises(ValueError):
            rf.write_npy_nd(path, (2, 2), [1.0])

    def test_figures_without_a_cli(self):
        ctx = Ctx(None)
        out = txl.figures(ctx)
        self.assertEqual(len(out), 3)
        self.assertEqual([img.split("`")[1] for img, _ in out],
                         ["table-transformer_xl-index", "fig-transformer_xl-score-distance",
                          "table-transformer_xl-clamp"])
        for img, cap in out:
            self.assertIn("not drawn: no --cli given", img)
        self.assertTrue(out[0][1].startswith("(a) The row of R"))        # the index table keeps its caption
        self.assertEqual([cap for _, cap in out[1:]], ["", ""])
        self.assertEqual(ctx.renderer.plots, [])
        self.assertEqual(ctx.figure_notes, [("figure data", "not drawn: no --cli given")])
        ctx = Ctx(str(REPO / "no" / "such" / "posenc"))
        for img, _ in txl.figures(ctx):
            self.assertIn("could not run", img)
        self.assertIn("could not run", ctx.figure_notes[0][1])

    def test_figures_from_a_cli_of_the_wrong_shape(self):
        bad = write_fake(self.tmp.name, "posenc-bad", "import json\nprint(json.dumps({'spec': {}, 'indices': 3, "
                         "'scores': [[0.0]], 'shape': [1, 1, 1], 'scale': 0.25}))\n")
        (img, _), (simg, scap), (timg, tcap) = txl.figures(Ctx(bad))
        self.assertIn("not drawn", img)
        self.assertIn("unexpected output of `posenc scores transformer_xl --d-model 16 --q", simg)
        self.assertIn("4 rows of 96 numbers (shape [1, 4, 96])", simg)
        self.assertIn("not drawn", timg)
        self.assertEqual((scap, tcap), ("", ""))

    def test_a_cli_that_ignores_clamp_len_is_caught(self):
        line = "return min(delta, spec[\"clamp_len\"]) if spec[\"clamp_len\"] > 0 else delta"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-noclamp", FAKE.replace(line, "return delta"))
        _, (img, cap), (table, tcap) = txl.figures(Ctx(wrong))
        self.assertEqual(img, "IMG fig-transformer_xl-score-distance 3")
        self.assertIn("to within 1.00e-12 of scale Σ_c |q_c R_c|: **no** (largest", cap)
        self.assertIn("clamp_len 32 at (", cap)
        self.assertIn("and flat beyond it, every δ ≥ 32 reading the row of 32: **no**", cap)
        self.assertIn("up to δ = 32: yes", cap)
        self.assertIn("the same numbers: **no**", tcap)
        self.assertIn("min(klen − 1 − c, 400): **no**", tcap)
        self.assertEqual(table_rows(table)[1][1:3], ["404", "404"])

    def test_a_cli_that_swaps_the_halves_is_caught(self):
        line = "return [math.sin(p * x) for x in w] + [math.cos(p * x) for x in w]"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-swap", FAKE.replace(
            line, "return [math.cos(p * x) for x in w] + [math.sin(p * x) for x in w]"))
        _, (_, cap), _ = txl.figures(Ctx(wrong))
        self.assertIn("Σ_c |q_c R_c|: **no**", cap)
        self.assertIn("Without a clamp the curve peaks at δ = 20: **no**", cap)

    def test_a_cli_that_clamps_one_row_late_is_caught(self):
        # the emulated table of the preset with distances clamped at clamp_len + 1
        line = "positions = [pos(klen - 1 - c) for c in range(klen)]"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-late", FAKE.replace(
            line, "positions = [min(klen - 1 - c, spec['clamp_len'] + 1) for c in range(klen)]"))
        _, _, (table, cap) = txl.figures(Ctx(wrong))
        rows = table_rows(table)
        self.assertEqual([r[-1] for r in rows], ["yes", "yes", "yes", "yes", "yes", "no", "no", "no"])
        for phrase in ("the same numbers: **no**", "min(klen − 1 − c, 400): **no**",
                       "emulated here (inv_freq = RN32(1 / RN32(10000 ** RN32(2k / 410))), the angle RN32(pos "
                       "inv_freq), RN32(sin), RN32(cos)): **no**", "is a float32 number: yes"):
            self.assertIn(phrase, cap)

    def _check_figures(self, cli: str) -> list:
        ctx = Ctx(cli)
        (index, icap), (img, cap), (table, tcap) = txl.figures(ctx)
        # (a): the index matrix, unchanged
        self.assertEqual(table_rows(index)[0], ["0 (3)", "3", "4", "5", "6", "·", "·", "·"])
        self.assertIn("every entry equals the definition's row", icap)
        self.assertIn("`posenc index transformer_xl --query-length 4 --key-length 7 --format json`", icap)
        # (b): the last row's score against delta 0..95, with and without the clamp
        self.assertEqual(img, "IMG fig-transformer_xl-score-distance 3")
        (plot,) = ctx.renderer.plots
        free, clamped = dict(plot.series[0].rows), dict(plot.series[1].rows)
        self.assertEqual(sorted(free), list(range(96)))
        self.assertEqual(max(free, key=free.get), 20)
        self.assertAlmostEqual(free[20], 2.0, places=13)                 # scale |R(20)|^2 = 8 / 4
        for x in (0, 7, 33, 95):                                         # scale Σ_k cos((x − 20) w_k)
            self.assertAlmostEqual(free[x], 0.25 * sum(math.cos((x - 20) * w) for w in txl.frequencies(16)),
                                   places=13)
        self.assertTrue(all(abs(clamped[x] - free[x]) < 1e-13 for x in range(33)))
        self.assertTrue(all(abs(clamped[x] - free[32]) < 1e-13 for x in range(32, 96)))
        self.assertGreater(max(abs(free[x] - free[32]) for x in range(32, 96)), 0.5)
        self.assertEqual([x for x, _ in plot.series[2].rows], [32, 32])
        for phrase in ("Σ_c |q_c R_c|: yes", "the CLI's scale is 1/√16: yes", "peaks at δ = 20: yes (at δ = 20, 2;",
                       "up to δ = 32: yes", "reading the row of 32: yes", "(TXL-SCORES-1, TXL-TABLE-1)"):
            self.assertIn(phrase, cap)
        # (c): the preset's first 8 rows at klen 406: rows 0..5 at position 400, then 399, 398
        rows = table_rows(table)
        self.assertEqual([r[:3] for r in rows], [[str(c), str(405 - c), str(min(405 - c, 400))] for c in range(8)])
        self.assertEqual([r[-1] for r in rows], ["yes"] * 6 + ["no", "no"])
        self.assertEqual(float(rows[0][3]), float(f"{relative_figures.f32(math.sin(400)):.9g}"))
        for phrase in ("`txl-wt103-base` (d_model 410, clamp_len 400, emulated regime", "at klen = clamp_len + 6 = "
                       "406", "rows 0 .. 5 (distances 405 .. 400", "the same numbers: yes",
                       "row 6 (distance 399, below the clamp) differs from them: yes", "min(klen − 1 − c, 400): yes",
                       "is a float32 number: yes", "RN32(sin), RN32(cos)): yes", "(TXL-TABLE-1)"):
            self.assertIn(phrase, tcap)
        self.assertNotIn("**no**", icap + cap + tcap)
        return ctx.figure_notes

    def test_figures_from_a_fake_cli(self):
        notes = self._check_figures(self.fake)
        self.assertEqual(notes, [("figure data", "the posenc CLI (`posenc index transformer_xl`, `posenc scores "
                                  "transformer_xl` and `posenc table transformer_xl`, `--format json`; 5 "
                                  "invocations)")])

    @unittest.skipUnless(cli_has_scheme(CLI, "transformer_xl"), "posenc CLI not built with transformer_xl")
    def test_figures_from_the_cli(self):
        notes = self._check_figures(str(CLI))
        self.assertIn("5 invocations", notes[0][1])


if __name__ == "__main__":
    unittest.main()
