"""Tests of the T5 report module (reports/posenc_report/schemes/t5.py): its helpers (the bucket function of the
definition, the synthetic table and its .npy), its figures without a CLI, the bias-vs-distance figure from a fake CLI
(right, and wrong at one distance: flagged) and, where build/cli/posenc is built with T5 (or POSENC_REPORT_TEST_CLI
names one), from the real CLI: the bucket curves' shape, the exact-vs-float32 table, which must list the
configurations where the regimes differ (T5-BUCKET-3) and no others, the Python thresholds against the CLI's, and
every bias value against the definition (python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import os
import struct
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report.schemes import t5  # noqa: E402
from samples import FakeCliTest, cli_has_scheme  # noqa: E402

REPO = HERE.parent.parent
CLI = Path(os.environ.get("POSENC_REPORT_TEST_CLI", REPO / "build" / "cli" / "posenc"))

# The fake CLI: `index t5` (the spec only) and `bias t5` of a float32 .npy table, JSON as the real CLI writes it. Its
# buckets come from the presets' thresholds (as `posenc index t5` prints them), not from t5.bucket(). With
# POSENC_FAKE_T5_WRONG set, the decoder gives r = 3 (a later key) bucket 3 instead of 0.
FAKE = r'''
import ast, json, os, struct, sys

args = sys.argv[1:]
verb, scheme, rest = args[0], args[1], args[2:]
opt, i = {}, 0
while i < len(rest):
    opt[rest[i]] = rest[i + 1]
    i += 2
bi = opt["--preset"] == "t5-encoder"
spec = {"bidirectional": bi, "num_buckets": 32, "max_distance": 128, "heads": int(opt.get("--heads", "8")),
        "regime": "hf"}
if verb == "index":
    print(json.dumps({"scheme": "t5", "spec": spec}))
    sys.exit(0)
th = [12, 16, 23, 32, 46, 64, 91] if bi else [19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113]
n = 16 if bi else 32
me = n // 2

def bucket(r):
    base = n if bi and r > 0 else 0
    a = abs(r) if bi else max(-r, 0)
    if not bi and r == 3 and os.environ.get("POSENC_FAKE_T5_WRONG"):
        return 3
    return base + (a if a < me else min(me + sum(1 for t in th if a >= t), n - 1))

with open(opt["--table"], "rb") as f:
    data = f.read()
hlen = struct.unpack("<H", data[8:10])[0]
rows, heads = ast.literal_eval(data[10:10 + hlen].decode())["shape"]
vals = struct.unpack("<%df" % (rows * heads), data[10 + hlen:])
lk, lq = int(opt["--key-length"]), int(opt["--query-length"])
bias = [[vals[bucket(j - (lk - lq + i)) * heads + h] for j in range(lk)] for h in range(heads) for i in range(lq)]
print(json.dumps({"scheme": "t5", "spec": spec, "shape": [heads, lq, lk], "dtype": opt["--dtype"], "bias": bias}))
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


class T5Module(FakeCliTest):
    FAKE = FAKE

    def test_buckets_by_r(self):
        d = {"buckets": [[0, 17, 18], [1, 0, 17], [2, 1, 0]]}
        self.assertEqual(t5.buckets_by_r(d, 3), [(-2, 2), (-1, 1), (0, 0), (1, 17), (2, 18)])

    def test_bucket_definition(self):
        enc = [t5.bucket(r, 32, 128, True) for r in (0, 1, -1, 7, -7, 8, -8, 16, -16, 127, -127, 128, -128, 5000)]
        self.assertEqual(enc, [0, 17, 1, 23, 7, 24, 8, 26, 10, 31, 15, 31, 15, 31])
        self.assertNotIn(16, {t5.bucket(r, 32, 128, True) for r in range(-300, 301)})
        dec = [t5.bucket(r, 32, 128, False) for r in (0, 1, 300, -1, -15, -16, -19, -128, -5000)]
        self.assertEqual(dec, [0, 0, 0, 1, 15, 16, 17, 31, 31])
        self.assertEqual(t5.thresholds(32, 128, True), [12, 16, 23, 32, 46, 64, 91])
        self.assertEqual(t5.thresholds(32, 128, False), [19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113])
        self.assertEqual(t5.thresholds(32, 128, True, "exact"), [12, 16, 23, 32, 46, 64, 91])   # a = 16, 32, 64 exact
        # HF's float32 steps and the exact floor part where the real value is just below an integer (figure (b)).
        self.assertEqual(t5.thresholds(34, 27, True), [10, 11, 13, 14, 16, 19, 21, 24])
        self.assertEqual(t5.thresholds(34, 27, True, "exact"), [10, 11, 12, 14, 16, 18, 21, 24])
        self.assertEqual(t5.log_steps_exact(16, 8, 16, 128), 2)       # ln 2 / ln 16 * 8 = 2 exactly
        self.assertEqual(t5.log_steps_exact(15, 8, 16, 128), 1)
        self.assertEqual(t5.side(5, 32, True), (16, 16, 5))
        self.assertEqual(t5.side(5, 32, False), (0, 32, 0))

    def test_synthetic_table_and_npy(self):
        t = t5.synthetic_table(32, 4)
        self.assertEqual(t, t5.synthetic_table(32, 4))
        self.assertEqual((len(t), len(t[0])), (32, 4))
        self.assertTrue(all(t5.f32(v) == v for row in t for v in row))
        self.assertTrue(all(t[b][0] > t[b + 1][0] for b in range(31)))      # head 0 names the bucket
        path = os.path.join(self.tmp.name, "t.npy")
        t5.write_npy_f32(path, [[1.0, -2.0], [0.5, 0.25], [3.0, -1.0]])
        with open(path, "rb") as f:
            data = f.read()
        hlen = struct.unpack("<H", data[8:10])[0]
        self.assertEqual((data[:8], (10 + hlen) % 64), (b"\x93NUMPY\x01\x00", 0))
        self.assertIn("'shape': (3, 2)", data[10:10 + hlen].decode())
        self.assertEqual(struct.unpack("<6f", data[10 + hlen:]), (1.0, -2.0, 0.5, 0.25, 3.0, -1.0))

    def test_bias_mismatches(self):
        table = [[10.0, 11.0], [20.0, 21.0], [30.0, 31.0], [40.0, 41.0]]
        spec = {"num_buckets": 4, "max_distance": 3, "bidirectional": True, "regime": "hf"}
        # nb 4, bidirectional: n = 2, me = 1: r < 0 -> bucket 1, r = 0 -> 0, r > 0 -> 3. Two queries of three keys:
        # row 0 at position 1 (r = -1, 0, 1), row 1 at position 2 (r = -2, -1, 0).
        good = [[[20.0, 10.0, 40.0], [20.0, 20.0, 10.0]], [[21.0, 11.0, 41.0], [21.0, 21.0, 11.0]]]
        self.assertEqual(t5.bias_mismatches(good, table, spec, 2, 3), (12, []))
        bad = [[[20.0, 10.0, 40.0], [20.0, 20.0, 10.0]], [[21.0, 11.0, 31.0], [21.0, 21.0, 11.0]]]
        self.assertEqual(t5.bias_mismatches(bad, table, spec, 2, 3), (12, [(1, 0, 2, 31.0, 41.0)]))

    def test_bias_distance_from_fake_cli(self):
        ctx = Ctx(self.fake)
        src = t5.T5Cli(self.fake)
        img, cap = t5._bias_distance(ctx, src)
        self.assertIsNone(src.error)
        self.assertEqual(img, f"IMG fig-t5-bias-distance {t5.BIAS_HEADS}\n\nIMG fig-t5-bias-distance-decoder "
                              f"{t5.BIAS_HEADS}")
        n = 2 * t5.BIAS_HEADS * (t5.BIAS_SIDE + 1) * (2 * t5.BIAS_SIDE + 1)
        self.assertIn(f"every one of the {n:,} values equals it bit for bit: yes", cap)
        self.assertNotIn("**no**", cap)
        self.assertNotIn("differ**", cap)
        self.assertIn("every r ≥ 0 reads bucket 0 (table[0][h]) in every head: yes", cap)
        self.assertIn("head 0 takes 15 levels for r < 0 and 15 for r > 0", cap)    # encoder: 16 per side, nb/2 unused
        self.assertIn("head 0 takes 31 levels for r < 0 and 1 for r > 0", cap)     # decoder
        enc0, dec0 = ctx.renderer.plots[0].series[0], ctx.renderer.plots[1].series[0]
        table = t5.synthetic_table(32, t5.BIAS_HEADS)
        self.assertEqual(dict(enc0.rows)[-t5.BIAS_SIDE], table[15][0])
        self.assertEqual(dict(enc0.rows)[1], table[17][0])
        self.assertEqual(dict(dec0.rows)[t5.BIAS_SIDE], table[0][0])

    def test_wrong_cli_answer_is_flagged(self):
        os.environ["POSENC_FAKE_T5_WRONG"] = "1"
        try:
            img, cap = t5._bias_distance(Ctx(self.fake), t5.T5Cli(self.fake))
        finally:
            del os.environ["POSENC_FAKE_T5_WRONG"]
        # r = 3 in the decoder: query rows 0 .. BIAS_SIDE - 3 have a key 3 after them, in each head.
        wrong = t5.BIAS_HEADS * (t5.BIAS_SIDE - 2)
        self.assertIn(f"**{wrong} of the", cap)
        self.assertIn("values differ** (first: t5-decoder, head 0, row 0, key 152", cap)
        self.assertIn("every r ≥ 0 reads bucket 0 (table[0][h]) in every head: **no**", cap)

    def test_failing_cli(self):
        ctx = Ctx("/nonexistent/posenc")
        out = t5.figures(ctx)
        self.assertEqual(len(out), 3)
        for img, cap in out:
            self.assertIn("not drawn: could not run /nonexistent/posenc", img)
            self.assertEqual(cap, "")
        self.assertIn("not drawn", ctx.figure_notes[0][1])

    def test_without_cli(self):
        out = t5.figures(Ctx(None))
        self.assertEqual(len(out), 3)
        for img, cap in out:
            self.assertIn("not drawn: no --cli given", img)
            self.assertEqual(cap, "")

    @unittest.skipUnless(cli_has_scheme(CLI, "t5"), "posenc CLI with T5 not built")
    def test_from_cli(self):
        ctx = Ctx(str(CLI))
        (img, cap), (table, tcap), (bimg, bcap) = t5.figures(ctx)
        self.assertEqual(img, "IMG fig-t5-buckets 2")
        enc, dec = ctx.renderer.plots[0].series
        enc_pts, dec_pts = dict(enc.rows), dict(dec.rows)
        self.assertEqual((enc_pts[0], enc_pts[1], enc_pts[-1], enc_pts[16], enc_pts[-16]), (0, 17, 1, 26, 10))
        self.assertTrue(all(dec_pts[r] == 0 for r in range(0, 301)))       # the decoder: later keys share bucket 0
        self.assertNotIn(16, set(enc_pts.values()))                        # bucket nb/2 unused
        self.assertIn("thresholds [12, 16, 23, 32, 46, 64, 91]", cap)
        rows = {tuple(c.strip() for c in line.strip("|").split("|")[:2]): line for line in table.splitlines()
                if line.startswith("| (") and line[3].isdigit()}
        self.assertEqual(len(rows), 2 * len(t5.CONFIGS))
        differing = {k for k, line in rows.items() if not line.rstrip(" |").endswith("none")}
        self.assertEqual(differing, {("(34, 27)", "bidirectional"), ("(96, 81)", "bidirectional"),
                                     ("(19, 25)", "unidirectional"), ("(31, 532)", "unidirectional")})
        self.assertIn("(b)", tcap)
        # (c): every bias value of both presets equals table[bucket(r)][h] with the bucket computed here.
        self.assertEqual(bimg, f"IMG fig-t5-bias-distance {t5.BIAS_HEADS}\n\nIMG fig-t5-bias-distance-decoder "
                              f"{t5.BIAS_HEADS}")
        self.assertIn("bit for bit: yes", bcap)
        self.assertNotIn("**no**", bcap)
        # The Python bucket function against the CLI's thresholds, every configuration, both regimes.
        src = t5.T5Cli(str(CLI))
        for nb, mdist in t5.CONFIGS:
            for bi in (True, False):
                for regime in ("exact", "hf"):
                    d = src.index(("--bidirectional=" + str(bi).lower(), "--num-buckets", str(nb), "--max-distance",
                                   str(mdist), "--regime", regime), 2)
                    self.assertEqual(t5.thresholds(nb, mdist, bi, regime), d["thresholds"], (nb, mdist, bi, regime))


if __name__ == "__main__":
    unittest.main()
