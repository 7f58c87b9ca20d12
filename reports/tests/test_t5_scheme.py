"""Tests of the T5 report module (reports/posenc_report/schemes/t5.py): its helpers, its figures without a CLI and,
where build/cli/posenc is built with T5, from the real CLI: the bucket curves' shape and the exact-vs-float32 table,
which must list the configurations where the regimes differ (T5-BUCKET-3) and no others
(python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report.schemes import t5  # noqa: E402
from samples import cli_has_scheme  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"


class Renderer:
    def __init__(self):
        self.plots = []

    def image(self, plot, alt):
        self.plots.append(plot)
        return f"IMG {plot.name} {len(plot.series)}"


class Ctx:
    def __init__(self, cli):
        self.cli, self.figure_notes, self.renderer = cli, [], Renderer()


class T5Module(unittest.TestCase):
    def test_buckets_by_r(self):
        d = {"buckets": [[0, 17, 18], [1, 0, 17], [2, 1, 0]]}
        self.assertEqual(t5.buckets_by_r(d, 3), [(-2, 2), (-1, 1), (0, 0), (1, 17), (2, 18)])

    def test_without_cli(self):
        out = t5.figures(Ctx(None))
        self.assertEqual(len(out), 2)
        for img, cap in out:
            self.assertIn("not drawn: no --cli given", img)
            self.assertEqual(cap, "")

    @unittest.skipUnless(cli_has_scheme(CLI, "t5"), "posenc CLI with T5 not built")
    def test_from_cli(self):
        ctx = Ctx(str(CLI))
        (img, cap), (table, tcap) = t5.figures(ctx)
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


if __name__ == "__main__":
    unittest.main()
