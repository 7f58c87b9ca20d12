"""Tests of the KERPLE report module (reports/posenc_report/schemes/kerple.py): its helpers, its speed headline on
fabricated benchmark names of benchmarks/kerple_bench.cpp, and its figures without a CLI, from a fake CLI (a
Python script that writes what `posenc bias kerple|alibi --format json` writes, computed from the definition) and,
where build/cli/posenc is built with KERPLE, from the real CLI (python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report import bench, schemes, summary  # noqa: E402
from samples import FakeCliTest, bench_entry, cli_has_scheme  # noqa: E402
from posenc_report.cli_data import CliData  # noqa: E402
from posenc_report.schemes import kerple  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"
NAMES = ["IMG fig-kerple-log-bias 6", "IMG fig-kerple-power-bias 5", "IMG fig-kerple-megatron-deviation 5", "TABLE"]

# The fake CLI: `bias kerple` (exact in float64 with log1p / pow, megatron with every step rounded to float32) and
# `bias alibi --variant relative` (power-of-two head counts), JSON as the real CLI writes it.
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
H, Lk = int(opt["--heads"]), int(opt["--key-length"])
Lq = int(opt.get("--query-length", Lk))
head = {"scheme": scheme}
if scheme == "kerple":
    kernel, regime = opt["--kernel"], opt["--regime"]
    bp = [float(x) for x in opt["--bias-p"].split(",")]
    ba = [float(x) for x in opt["--bias-a"].split(",")]
    bp, ba = (bp * H if len(bp) == 1 else bp), (ba * H if len(ba) == 1 else ba)
    meg = regime == "megatron"
    r = f32 if meg else (lambda x: x)
    eps = r(0.01)
    p = [max(r(x), eps) for x in bp]
    p = [min(x, 2.0) for x in p] if kernel == "power" else p
    a = [max(r(x), eps) for x in ba]
    def b(h, d):
        if d == 0:
            return -0.0
        if not meg:
            return -p[h] * math.log1p(a[h] * d) if kernel == "log" else -a[h] * d ** p[h]
        D = f32(float(d))
        if kernel == "log":
            return f32(-p[h] * f32(math.log(f32(1.0 + f32(a[h] * D)))))
        return f32(-(f32(D ** p[h]) * a[h]))
    head.update({"spec": {"heads": H, "kernel": kernel, "regime": regime}, "bias_p": bp, "bias_a": ba,
                 "p_effective": p, "a_effective": a,
                 "p_clamped_heads": [h for h in range(H) if p[h] != r(bp[h])],
                 "a_clamped_heads": [h for h in range(H) if a[h] != r(ba[h])]})
else:
    m = [2.0 ** (-8.0 * (h + 1) / H) for h in range(H)]
    def b(h, d):
        return -m[h] * d
rows = []
for h in range(H):
    for i in range(Lq):
        q = Lk - Lq + i
        rows.append([b(h, q - j if j <= q else 0) for j in range(Lk)])
head.update({"shape": [H, Lq, Lk], "bias": rows})
print(json.dumps(head))
'''


class Renderer:
    def image(self, plot, alt):
        return f"IMG {plot.name} {len(plot.series)}"


class Ctx:
    def __init__(self, cli):
        self.cli, self.figure_notes, self.renderer = cli, [], Renderer()



class KerpleModuleTest(FakeCliTest):
    FAKE = FAKE

    def test_registered(self):
        self.assertIn("kerple", schemes.registered())
        self.assertEqual(kerple.SCHEME, "kerple")
        self.assertEqual(schemes.discover()[1], [])

    def test_helpers(self):
        self.assertEqual(kerple.float32(0.5), 0.5)
        self.assertEqual([kerple.real_text(x) for x in (1.0, -1.0, 0.01, 1e6, 2.5, 1e-7)],
                         ["1", "-1", "0.01", "1000000", "2.5", "1e-07"])
        self.assertEqual(kerple.float32(0.01), 0.009999999776482582)
        # the clamp: exact doubles, megatron float32 values against float32 0.01; power p <= 2
        self.assertEqual(kerple.effective("log", "exact", -1.0, 0.005), (0.01, 0.01))
        self.assertEqual(kerple.effective("log", "exact", 7.0, 0.3), (7.0, 0.3))
        self.assertEqual(kerple.effective("power", "exact", 7.0, 0.3), (2.0, 0.3))
        self.assertEqual(kerple.effective("power", "megatron", 0.0, 0.3),
                         (kerple.float32(0.01), kerple.float32(0.3)))
        self.assertEqual(kerple.effective("log", "megatron", 0.0100001, 0.01)[0], kerple.float32(0.0100001))
        self.assertAlmostEqual(kerple.kerple_bias("log", 2.0, 1.0, math.e - 1), -2.0, places=15)
        self.assertEqual(kerple.kerple_bias("power", 2.0, 0.5, 3.0), -4.5)
        self.assertEqual(kerple.ulp32(1.0), 2.0 ** -23)
        self.assertEqual(kerple.ulp32(-1.5), 2.0 ** -23)
        self.assertEqual(kerple.ulp32(0.75), 2.0 ** -24)
        self.assertEqual(kerple.ulps32(1.0 + 2.0 ** -22, 1.0), 2.0)
        self.assertEqual(kerple.ulps32(-0.0, 0.0), 0.0)
        # the carried half ulp: ~1/(a d) ulps while a d is small, below one ulp for a d >= 1
        self.assertTrue(50 <= kerple.carried_half_ulp(1.0, 0.01, 1) <= 100)
        self.assertLessEqual(kerple.carried_half_ulp(1.0, 0.01, 1000), 1.0)
        self.assertTrue(kerple.non_increasing([0.0, -1.0, -1.0, -3.0]))
        self.assertFalse(kerple.non_increasing([0.0, -1.0, -0.5]))
        d = kerple.plot_distances(4096)
        self.assertEqual(d[:64], list(range(1, 65)))
        self.assertEqual(d[-1], 4096)
        self.assertEqual(d, sorted(set(d)))
        self.assertEqual(len([x for x in d if 2048 <= x < 4096]), 24)

    def test_cli_data_caches_and_fails_once(self):
        src = CliData(self.fake)
        args = ("bias", "alibi", "--heads", "2", "--key-length", "3", "--query-length", "1")
        first = src.run(args)
        self.assertEqual(src.run(args), first)
        self.assertEqual(src.calls, 1)
        self.assertEqual(src.bias_tensor(args, first, 2, 1, 3), [[[-0.125, -0.0625, 0.0]], [[-2 ** -7, -2 ** -8, 0.0]]])
        self.assertIsNone(src.bias_tensor(args, first, 2, 3, 3))
        self.assertIn("expected \"bias\" of shape [2, 3, 3]", src.error)
        self.assertIsNone(src.run(("bias", "alibi", "--heads", "4", "--key-length", "3")))   # failed: no more runs
        self.assertEqual(src.calls, 1)

    def test_headline_pairs_kernels_with_their_baselines(self):
        data = {"benchmarks": [
            bench_entry("kerple/bias/exact_log_f32/heads:32/L:512/threads:1", 1, 9e9),
            bench_entry("kerple/bias/stream_store_f32/heads:32/L:512/threads:1", 1, 10e9),
            bench_entry("kerple/bias/exact_log_f32/heads:32/L:4096/threads:1", 100, 6e9),
            bench_entry("kerple/bias/megatron_log_f32/heads:32/L:4096/threads:1", 120, 5e9),
            bench_entry("kerple/bias/stream_store_f32/heads:32/L:4096/threads:1", 90, 10e9),
            bench_entry("kerple/bias/store_f32/heads:32/L:4096/threads:1", 50, 20e9),
            bench_entry("kerple/bias/exact_log_f64/heads:32/L:4096/threads:1", 200, 12e9),
            bench_entry("kerple/bias/stream_store_f64/heads:32/L:4096/threads:1", 200, 40e9),
            bench_entry("kerple/scores/fused_exact_log_causal_f32/heads:1/L:4096/head_dim:128/threads:1", 12),
            bench_entry("kerple/scores/sgemm_f32/heads:1/L:4096/head_dim:128/threads:1", 10),
        ]}
        head = summary.speed(bench.records("bench-kerple", data), kerple.HEADLINE_KERNELS)
        self.assertEqual([h["record"].name for h in head],
                         ["kerple/bias/exact_log_f32/heads:32/L:4096/threads:1",
                          "kerple/scores/fused_exact_log_causal_f32/heads:1/L:4096/head_dim:128/threads:1"])
        self.assertAlmostEqual(head[0]["value"], 0.6)          # vs stream_store_f32, not store_f32 or the f64 one
        self.assertEqual(head[0]["how"], "bytes/s")
        self.assertAlmostEqual(head[1]["value"], 10 / 12)      # sgemm time / fused time
        self.assertEqual(head[1]["how"], "time")

    def test_figures_without_a_cli(self):
        ctx = Ctx(None)
        out = kerple.figures(ctx)
        self.assertEqual(len(out), 4)
        for img, _ in out:
            self.assertIn("not drawn: no --cli given", img)
        self.assertIn("not drawn", ctx.figure_notes[0][1])
        failing = Ctx(str(REPO / "no" / "such" / "posenc"))
        for img, _ in kerple.figures(failing):
            self.assertIn("could not run", img)

    def _check_figures(self, cli: str) -> list:
        ctx = Ctx(cli)
        out = kerple.figures(ctx)
        self.assertEqual([("TABLE" if img.startswith("|") else img) for img, _ in out], NAMES, out)
        (_, log), (_, power), (_, dev), (table, clamp) = out
        for cap in (log, power):
            self.assertIn("non-increasing in d (claim KERPLE-SHAPE-1): yes", cap)
            m = re.search(r"evaluated here in float64: ([0-9.e+-]+)\.", cap)
            self.assertIsNotNone(m, cap)
            self.assertLess(float(m.group(1)), 1e-12)
        self.assertIn("at d = 128, (1, 1): -4.86; (1, 0.1): -2.62", log)
        self.assertIn("against ALiBi's -8.", log.replace("−", "-"))
        self.assertIn("are equal bit for bit at every d (claim KERPLE-ALIBI-1)", power)
        self.assertIn("d = 0 is 0 in both: yes", dev)
        # (b): the log head with a = 0.01 loses tens of ulps at small d and is within the carried half ulp; the
        # power head stays near one rounding
        m = re.search(r"log, p = 1, a = 0\.01: largest ([0-9.]+) ulps at d = (\d+), at most ([0-9.e-]+) for d ≥ 1000",
                      dev)
        self.assertIsNotNone(m, dev)
        self.assertGreater(float(m.group(1)), 10)
        self.assertLess(int(m.group(2)), 100)
        self.assertLess(float(m.group(3)), 2)
        self.assertNotIn("above the carried half ulp", dev)
        self.assertEqual(dev.count("every d within the carried half ulp + 1"), 2)
        m = re.search(r"power, p = 0\.7, a = 0\.3: largest ([0-9.e-]+) ulps", dev)
        self.assertIsNotNone(m, dev)
        self.assertLessEqual(float(m.group(1)), 1.5)
        # (c): the clamp, as the rule computed here gives it
        lines = {ln.split(" | ")[0].strip("| "): ln for ln in table.splitlines()[2:]}
        self.assertEqual(len(lines), len(kerple.CLAMP_ROWS))
        self.assertIn("| **0.01**, **0.01** | **0.01**, **0.01** | **0.00999999978**, **0.00999999978** |",
                      lines["0.005"])
        self.assertIn("| 0.01, 0.01 | 0.01, 0.01 | 0.00999999978, 0.00999999978 |", lines["0.01"])
        self.assertIn("| 2.5, 100 | **2**, 100 | 2.5, 100 | **2**, 100 |", lines["2.5"])
        self.assertIn("| 0.0100001, 0.05 | 0.0100001, 0.05 | 0.0100001004, 0.0500000007 |", lines["0.0100001"])
        self.assertIn("--bias-p=-1,0,0.005,0.01,0.0100001,0.5,1,2,2.5,7 "
                      "--bias-a=-1,0,0.005,0.01,0.05,0.25,1,3,100,1000000", clamp)
        self.assertIn("gives the same value in every cell, and the same clamped heads: yes.", clamp)
        self.assertNotIn("**no**", "".join(c for _, c in out))
        return ctx.figure_notes

    def test_figures_from_a_fake_cli(self):
        notes = self._check_figures(self.fake)
        self.assertIn("(`posenc bias kerple --dtype f64`, `posenc bias alibi --dtype f64`; 11 invocations)",
                      notes[0][1])

    @unittest.skipUnless(cli_has_scheme(CLI, "kerple"), "posenc CLI not built with KERPLE")
    def test_figures_from_the_cli(self):
        notes = self._check_figures(str(CLI))
        self.assertIn("11 invocations", notes[0][1])


if __name__ == "__main__":
    unittest.main()
