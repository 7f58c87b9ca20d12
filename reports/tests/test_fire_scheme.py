"""Tests of the FIRE report module (reports/posenc_report/schemes/fire.py): its helpers and weight recipe (which also
wrote cli/tests/data/fire_*.json), its speed headline on fabricated benchmark names of benchmarks/fire_bench.cpp, and
its figures without a CLI, from a fake CLI (a Python script that writes what `posenc bias fire --format json` writes,
computed from the definition) and, where build/cli/posenc is built with FIRE (or POSENC_REPORT_TEST_CLI names a
posenc binary), from the real CLI (python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import json
import math
import os
import re
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report import bench, schemes, summary  # noqa: E402
from samples import FakeCliTest, bench_entry, cli_has_scheme  # noqa: E402
from posenc_report.schemes import fire  # noqa: E402

REPO = HERE.parent.parent
CLI = Path(os.environ.get("POSENC_REPORT_TEST_CLI", REPO / "build" / "cli" / "posenc"))
NAMES = ["IMG fig-fire-normalized-distance 5", "IMG fig-fire-bias-rows 4", "IMG fig-fire-cramming-deviation 2",
         "TABLE"]

# The fake CLI: `bias fire` from a flat state_dict (exact in float64 with log1p; cramming with every step rounded to
# float32 through struct, math.log rounded to float32), JSON as the real CLI writes it (null where masked).
FAKE = r'''
import json, math, struct, sys

def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]

args = sys.argv[1:]
verb, scheme, rest = args[0], args[1], args[2:]
opt = {}
i = 0
while i < len(rest):
    if "=" in rest[i]:
        k, v = rest[i].split("=", 1)
        i += 1
    else:
        k, v = rest[i], rest[i + 1]
        i += 2
    opt[k] = v
assert (verb, scheme) == ("bias", "fire"), args
w = json.load(open(opt["--weights"]))
regime = opt.get("--regime", "exact")
Lk = int(opt["--key-length"])
Lq = int(opt.get("--query-length", Lk))
causal = opt.get("--mask", "none") == "causal"
W1 = [r[0] for r in w["mlp.0.weight"]]
B1, W2, B2 = w["mlp.0.bias"], w["mlp.2.weight"], w["mlp.2.bias"]
H, K = len(B2), len(B1)
eps = 1e-6
cram = regime == "cramming"
if cram:
    c = abs(f32(w["c"]))
    thr = abs(f32(f32(w["L_multiplier"]) * f32(w["init_L"])))
    e = f32(eps)
    W1, B1, B2 = [f32(v) for v in W1], [f32(v) for v in B1], [f32(v) for v in B2]
    W2 = [[f32(v) for v in r] for r in W2]
    def lg(v):
        return f32(math.log(f32(f32(c * v) + 1.0)))
else:
    c, thr = abs(w["c"]), abs(w["L_multiplier"] * w["init_L"])

def row(q):
    if cram:
        den = f32(lg(max(float(q), thr)) + e)
        xs = [f32(lg(float(d)) / den) for d in range(Lk)]
    else:
        den = math.log1p(c * max(q, thr)) + eps
        xs = [math.log1p(c * d) / den for d in range(Lk)]
    out = []
    for x in xs:
        if cram:
            r = [max(f32(f32(x * W1[k]) + B1[k]), 0.0) for k in range(K)]
            vals = []
            for h in range(H):
                acc = 0.0
                for k in range(K):
                    acc = f32(r[k] * W2[h][k] + acc)
                vals.append(f32(acc + B2[h]))
        else:
            r = [max(W1[k] * x + B1[k], 0.0) for k in range(K)]
            vals = [sum(r[k] * W2[h][k] for k in range(K)) + B2[h] for h in range(H)]
        out.append(vals)
    return out  # [d][h]

rows = []
cache = {}
for i in range(Lq):
    q = Lk - Lq + i
    cache[q] = row(q)
for h in range(H):
    for i in range(Lq):
        q = Lk - Lq + i
        rows.append([None if causal and j > q else cache[q][abs(q - j)][h] for j in range(Lk)])
print(json.dumps({"scheme": "fire", "spec": {"heads": H, "mlp_width": K, "eps": eps, "regime": regime},
                  "weights": opt["--weights"], "shape": [H, Lq, Lk], "bias": rows}))
'''


class Renderer:
    def image(self, plot, alt):
        return f"IMG {plot.name} {len(plot.series)}"


class Ctx:
    def __init__(self, cli):
        self.cli, self.figure_notes, self.renderer = cli, [], Renderer()


class FireModuleTest(FakeCliTest):
    FAKE = FAKE

    def test_registered(self):
        self.assertIn("fire", schemes.registered())
        self.assertEqual(fire.SCHEME, "fire")
        self.assertEqual(schemes.discover()[1], [])

    def test_weight_recipe(self):
        w = fire.draw_weights(3, 5)
        self.assertEqual(list(w), ["mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias", "c", "init_L",
                                   "L_multiplier"])
        self.assertEqual([len(w["mlp.0.weight"]), len(w["mlp.0.weight"][0]), len(w["mlp.0.bias"]),
                          len(w["mlp.2.weight"]), len(w["mlp.2.weight"][0]), len(w["mlp.2.bias"])], [5, 1, 5, 3, 5, 3])
        values = [r[0] for r in w["mlp.0.weight"]] + w["mlp.0.bias"]
        self.assertTrue(all(-1 <= v <= 1 for v in values))
        self.assertTrue(all(abs(v) <= 1 / math.sqrt(5) for r in w["mlp.2.weight"] for v in r))
        self.assertTrue(all(abs(v) <= 1 / math.sqrt(5) for v in w["mlp.2.bias"]))
        every = values + [v for r in w["mlp.2.weight"] for v in r] + w["mlp.2.bias"] + [w["c"]]
        self.assertTrue(all(fire.float32(v) == v for v in every))
        self.assertEqual((w["c"], w["init_L"], w["L_multiplier"]), (fire.float32(0.1), 512, 1.0))
        self.assertIsInstance(w["init_L"], int)
        self.assertEqual(fire.draw_weights(3, 5), w)                   # seeded
        self.assertNotEqual(fire.draw_weights(3, 5, seed=1), w)
        self.assertEqual(fire.draw_weights(2, 4, init_L=8)["init_L"], 8)

    def test_fixtures_are_the_recipe(self):
        """cli/tests/data/fire_h4_w8.json and fire_h12_w32.json are exactly what the recipe writes."""
        for heads, width in ((4, 8), (12, 32)):
            path = REPO / "cli" / "tests" / "data" / f"fire_h{heads}_w{width}.json"
            self.assertEqual(path.read_text(), fire.weights_text(fire.draw_weights(heads, width)), path)
            self.assertEqual(json.loads(path.read_text()), fire.draw_weights(heads, width))

    def test_helpers(self):
        ident = fire.identity_weights()
        self.assertEqual(fire.mlp(ident, 0, 0.25), (0.25, 0.25))
        self.assertEqual(fire.normalized_distance(ident, 7, 0), 0.0)
        # rows at or below L = 512 share the normalizer ln(|c| 512 + 1) + eps
        c = fire.float32(0.1)
        want = math.log1p(c * 100) / (math.log1p(c * 512) + 1e-6)
        self.assertEqual(fire.normalized_distance(ident, 100, 100), want)
        self.assertEqual(fire.normalized_distance(ident, 512, 100), want)
        self.assertLess(fire.normalized_distance(ident, 513, 100), want)
        self.assertEqual(fire.normalized_distance({**ident, "c": -c}, 100, 100), want)
        self.assertEqual(fire.normalized_distance({**ident, "L_multiplier": -1.0}, 100, 100), want)
        self.assertEqual(fire.normalized_distance({**ident, "c": 0.0}, 9, 3), 0.0)
        w = {"mlp.0.weight": [[1.0], [-2.0]], "mlp.0.bias": [0.5, 1.0], "mlp.2.weight": [[2.0, -1.0]],
             "mlp.2.bias": [0.25], "c": 0.1, "init_L": 512, "L_multiplier": 1.0}
        # x = 1: ReLU(1.5) = 1.5, ReLU(-1) = 0 -> 0.25 + 3; S = 0.25 + 2 (1 + 0.5) + 1 (2 + 1)
        self.assertEqual(fire.mlp(w, 0, 1.0), (3.25, 6.25))
        self.assertEqual(fire.ulp32(1.0), 2.0 ** -23)
        self.assertEqual(fire.ulp32(-0.75), 2.0 ** -24)
        self.assertEqual(fire.ulp32(0.0), 2.0 ** -149)
        self.assertEqual(fire.x_text(0.5), "0.5")
        self.assertEqual(fire.x_text(1.0), "1")
        self.assertEqual(fire.x_text(1 - 2.5e-7), "1 − 2.50e-07")
        self.assertEqual(fire.widest_head({**w, "mlp.2.weight": [[0.0, 0.0], [2.0, -1.0]], "mlp.2.bias": [1.0, 0.0]}),
                         1)
        d = fire.plot_distances(4096)
        self.assertEqual(d[:64], list(range(1, 65)))
        self.assertEqual(d[-1], 4096)
        self.assertEqual(d, sorted(set(d)))

    def test_headline_pairs_kernels_with_their_baselines(self):
        data = {"benchmarks": [
            bench_entry("fire/bias/cramming_f32/heads:32/L:512/threads:1", 20, 1.6e9, 4e8),
            bench_entry("fire/bias/stream_store_f32/heads:32/L:512/threads:1", 2, 16e9),
            bench_entry("fire/bias/plainloop_f32/heads:32/L:512/threads:1", 400, 8e7, 2e7),
            bench_entry("fire/bias/cramming_f32/heads:32/L:4096/threads:1", 1000, 2e9),
            bench_entry("fire/bias/exact_f32/heads:32/L:4096/threads:1", 2000, 1e9),
            bench_entry("fire/bias/stream_store_f32/heads:32/L:4096/threads:1", 100, 20e9),
            bench_entry("fire/bias/store_f32/heads:32/L:4096/threads:1", 200, 10e9),
            bench_entry("fire/bias/exact_f64/heads:32/L:4096/threads:1", 3000, 1.4e9),
            bench_entry("fire/bias/stream_store_f64/heads:32/L:4096/threads:1", 200, 20e9),
            bench_entry("fire/scores/fused_cramming_causal_f32/heads:1/L:4096/head_dim:128/threads:1", 50),
            bench_entry("fire/scores/sgemm_f32/heads:1/L:4096/head_dim:128/threads:1", 40),
        ]}
        head = summary.speed(bench.records("bench-fire", data), fire.HEADLINE_KERNELS)
        self.assertEqual([h["record"].name for h in head],
                         ["fire/bias/cramming_f32/heads:32/L:4096/threads:1",
                          "fire/bias/cramming_f32/heads:32/L:512/threads:1",
                          "fire/scores/fused_cramming_causal_f32/heads:1/L:4096/head_dim:128/threads:1"])
        self.assertAlmostEqual(head[0]["value"], 0.1)          # vs stream_store_f32, not store_f32 or the f64 one
        self.assertEqual(head[0]["how"], "bytes/s")
        self.assertAlmostEqual(head[1]["value"], 20.0)         # plain loop at L:512, the one size it runs at
        self.assertEqual(head[1]["how"], "items/s")
        self.assertAlmostEqual(head[2]["value"], 40 / 50)      # sgemm time / fused time
        self.assertEqual(head[2]["how"], "time")

    def test_figures_without_a_cli(self):
        ctx = Ctx(None)
        out = fire.figures(ctx)
        self.assertEqual(len(out), 4)
        for img, _ in out:
            self.assertIn("not drawn: no --cli given", img)
        self.assertIn("not drawn", ctx.figure_notes[0][1])
        failing = Ctx(str(REPO / "no" / "such" / "posenc"))
        for img, _ in fire.figures(failing):
            self.assertIn("could not run", img)

    def test_figures_when_the_cli_fails(self):
        ctx = Ctx(sys.executable)       # `python bias fire ...`: no such script, exits non-zero
        for img, _ in fire.figures(ctx):
            self.assertIn("not drawn", img)

    def _check_figures(self, cli: str) -> list:
        ctx = Ctx(cli)
        out = fire.figures(ctx)
        self.assertEqual([("TABLE" if img.startswith("|") else img) for img, _ in out], NAMES, out)
        (_, xcap), (_, rows), (_, dev), (table, conv) = out
        self.assertNotIn("**no**", "".join(img + cap for img, cap in out))
        for what in ("x = 0 at d = 0: yes", "strictly increasing in d (claim FIRE-PSI-1): yes",
                     "every x in [0, 1) (claim FIRE-BOUNDED-1): yes",
                     "equal bit for bit at every common distance (claim FIRE-SHAPE-1): yes"):
            self.assertIn(what, xcap)
        m = re.search(r"evaluated here with math.log1p: ([0-9.e+-]+)\.", xcap)
        self.assertIsNotNone(m, xcap)
        self.assertLess(float(m.group(1)), 1e-14)
        self.assertIn("q = 64: 0.506; q = 256: 0.83; q = 512: 1 − 2.", xcap)
        self.assertIn("Head 0 of the 12-head", rows)
        self.assertIn("(equal bit for bit at every common distance: yes)", rows)
        m = re.search(r"relative to the scale S = .*?: ([0-9.e+-]+)\. Data", rows)
        self.assertIsNotNone(m, rows)
        self.assertLess(float(m.group(1)), 1e-14)
        m = re.search(r"b\(q, d = q\) for q = 512, 2048, 8192: (\S+), (\S+), (\S+) \(spread", rows)
        self.assertIsNotNone(m, rows)
        self.assertEqual(len({round(float(v), 5) for v in m.groups()}), 1)
        m = re.search(r"The scaled error is at most ([0-9.e+-]+) ulps of S", dev)
        self.assertIsNotNone(m, dev)
        self.assertLess(float(m.group(1)), 8)
        self.assertIn("Every cramming value is a float32 number: yes", dev)
        lines = table.splitlines()
        self.assertEqual(len(lines), 2 + 6)
        self.assertEqual(table.count("exact: yes; cramming: yes"), 5)
        self.assertIn("leaves the rest: yes", table)
        self.assertIn("mcleish7/arithmetic@55af9d5e", conv)
        self.assertIn("--key-length 24 --query-length 24 --mask none --dtype f64 --format json", conv)
        self.assertNotIn(str(Path(tempfile_root())), "".join(cap for _, cap in out))
        return ctx.figure_notes

    def test_figures_from_a_fake_cli(self):
        notes = self._check_figures(self.fake)
        self.assertIn("(`posenc bias fire --dtype f64`; 20 invocations)", notes[0][1])

    @unittest.skipUnless(cli_has_scheme(CLI, "fire"), "posenc CLI not built with FIRE")
    def test_figures_from_the_cli(self):
        notes = self._check_figures(str(CLI))
        self.assertIn("20 invocations", notes[0][1])


def tempfile_root() -> str:
    import tempfile
    return tempfile.gettempdir()


if __name__ == "__main__":
    unittest.main()
