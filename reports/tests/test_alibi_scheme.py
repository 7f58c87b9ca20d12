"""Tests of the ALiBi report module (reports/posenc_report/schemes/alibi.py): its helpers, its speed headline on
fabricated benchmark names of benchmarks/alibi_bench.cpp, and its figures without a CLI and, where
build/cli/posenc is built, from the real CLI (python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import math
import re
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report import bench, schemes, summary  # noqa: E402
from samples import FakeCliTest, bench_entry, cli_has_scheme  # noqa: E402
from posenc_report.schemes import alibi  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"
NAMES = ["IMG fig-alibi-slopes 6", "IMG fig-alibi-bias-rows 5", "TABLE", "IMG fig-alibi-slope-deviation 5"]


class Renderer:
    def image(self, plot, alt):
        return f"IMG {plot.name} {len(plot.series)}"


class Ctx:
    def __init__(self, cli):
        self.cli, self.figure_notes, self.renderer = cli, [], Renderer()




class AlibiModuleTest(unittest.TestCase):
    def test_registered(self):
        self.assertIn("alibi", schemes.registered())
        self.assertEqual(alibi.SCHEME, "alibi")

    def test_helpers(self):
        self.assertEqual([alibi.power_of_two_floor(n) for n in (1, 2, 3, 127, 128, 160)], [1, 2, 2, 64, 128, 128])
        self.assertEqual(alibi.covering_heads(160), [1, 3, 7, 15, 31, 63, 127, 160])
        self.assertEqual(alibi.covering_heads(128), [1, 3, 7, 15, 31, 63, 127, 128])
        self.assertEqual(alibi.slope_text(8.0, 2, 4), "2^-4")
        self.assertEqual(alibi.slope_text(8.0, 3, 16), "2^(-3/2)")
        self.assertIsNone(alibi.softmax([alibi.NEG_INF] * 3))
        p = alibi.softmax([0.0, math.log(3.0), alibi.NEG_INF])
        self.assertAlmostEqual(p[0], 0.25, places=15)
        self.assertEqual(p[2], 0.0)
        # rows differing by a constant: the same softmax; one fully masked row in both: left out
        a = [[[0.0, 1.0, 2.0], [alibi.NEG_INF] * 3]]
        b = [[[5.0, 6.0, 7.0], [alibi.NEG_INF] * 3]]
        worst, compared, skipped = alibi.softmax_difference(a, b)
        self.assertLess(worst, 1e-15)
        self.assertEqual((compared, skipped), (1, 1))
        self.assertEqual(alibi.softmax_difference(a, [[[0.0, 0.0, 0.0], [0.0] * 3]])[0], math.inf)

    def test_headline_pairs_kernels_with_their_baselines(self):
        data = {"benchmarks": [
            bench_entry("alibi/bias/exact_relative_f32/heads:32/L:512/threads:1", 1, 9e9),
            bench_entry("alibi/bias/stream_store_f32/heads:32/L:512/threads:1", 1, 10e9),
            bench_entry("alibi/bias/exact_relative_f32/heads:32/L:4096/threads:1", 100, 8e9),
            bench_entry("alibi/bias/stream_store_f32/heads:32/L:4096/threads:1", 90, 10e9),
            bench_entry("alibi/bias/store_f32/heads:32/L:4096/threads:1", 50, 20e9),
            bench_entry("alibi/bias/stream_store_f64/heads:32/L:4096/threads:1", 200, 40e9),
            bench_entry("alibi/scores/fused_exact_relative_causal_f32/heads:1/L:4096/head_dim:128/threads:1", 11),
            bench_entry("alibi/scores/sgemm_f32/heads:1/L:4096/head_dim:128/threads:1", 10),
        ]}
        head = summary.speed(bench.records("bench-alibi", data), alibi.HEADLINE_KERNELS)
        self.assertEqual([h["record"].name for h in head],
                         ["alibi/bias/exact_relative_f32/heads:32/L:4096/threads:1",
                          "alibi/scores/fused_exact_relative_causal_f32/heads:1/L:4096/head_dim:128/threads:1"])
        self.assertAlmostEqual(head[0]["value"], 0.8)          # vs stream_store_f32, not store_f32 or the f64 one
        self.assertEqual(head[0]["how"], "bytes/s")
        self.assertAlmostEqual(head[1]["value"], 10 / 11)      # sgemm time / fused time
        self.assertEqual(head[1]["how"], "time")

    def test_figures_without_a_cli(self):
        ctx = Ctx(None)
        out = alibi.figures(ctx)
        self.assertEqual(len(out), 4)
        for img, _ in out:
            self.assertIn("not drawn: no --cli given", img)
        self.assertIn("not drawn", ctx.figure_notes[0][1])
        failing = Ctx(str(REPO / "no" / "such" / "posenc"))
        for img, _ in alibi.figures(failing):
            self.assertIn("could not run", img)

    @unittest.skipUnless(CLI.is_file(), "posenc CLI not built")
    def test_figures_from_the_cli(self):
        ctx = Ctx(str(CLI))
        out = alibi.figures(ctx)
        self.assertEqual([("TABLE" if img.startswith("|") else img) for img, _ in out], NAMES)
        (_, slopes), (_, rows), (table, soft), (_, dev) = out
        self.assertIn("both rules hold bit for bit", slopes)
        self.assertIn("| 3 | 2 | 1/2, 2/2, 1/4 | 2^-4, 2^-8, 2^-2 | 0.0625, 0.00390625, 0.25 |", slopes)
        self.assertIn("(the CLI's doubles equal them)", slopes)
        self.assertIn("minus relative at j ≤ 10: constant 5", rows)
        self.assertIn("−inf (JSON null) at every j > 10, in every variant", rows)
        # (c): under the causal mask every variant has relative's softmax rows; without it symmetric does not
        lines = {ln.split(" | ")[0].strip("| `"): ln for ln in table.splitlines()[2:]}
        for v in alibi.VARIANTS:
            self.assertRegex(lines[v].split(" | ")[1], r": same$")
        self.assertIn("**differs**", lines["symmetric"].split(" | ")[2])
        self.assertIn("**differs**", lines["symmetric"].split(" | ")[3])
        self.assertRegex(table.splitlines()[-1], r"\| 0: same \| — \| — \|$")
        self.assertIn("over 480 rows (32 rows of padding queries", soft)
        # (d): BLOOM's largest deviation is where the oracle found it
        m = re.search(r"largest ([0-9.e-]+) at n = (\d+), h = (\d+) — as the MPFR oracle found", dev)
        self.assertIsNotNone(m, dev)
        self.assertAlmostEqual(float(m.group(1)), 6.75e-7, delta=0.01e-7)
        self.assertIn("checked here bit for bit against direct calls for 18 (regime, n) pairs", dev)
        calls = int(re.search(r"(\d+) invocations", ctx.figure_notes[0][1]).group(1))
        self.assertLess(calls, 200)


if __name__ == "__main__":
    unittest.main()
