"""Tests of the DeBERTa report module (reports/posenc_report/schemes/deberta.py): its helpers, its figures without a
CLI and, where build/cli/posenc is built with DeBERTa, from the real CLI: the bucket curves' shape (identity to 128,
255 at 511, HF growing past it, the 2023 original clamped) and the exact-vs-float32 table
(python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report.schemes import deberta  # noqa: E402
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


class DebertaModule(unittest.TestCase):
    def test_buckets_by_rel(self):
        column = {"relative_positions": [[0], [1], [2]]}
        row = {"relative_positions": [[0, -1, -2]]}
        self.assertEqual(deberta.buckets_by_rel(column, row), [(-2, -2), (-1, -1), (0, 0), (1, 1), (2, 2)])

    def test_without_cli(self):
        out = deberta.figures(Ctx(None))
        self.assertEqual(len(out), 2)
        for img, cap in out:
            self.assertIn("not drawn: no --cli given", img)
            self.assertEqual(cap, "")

    @unittest.skipUnless(cli_has_scheme(CLI, "deberta"), "posenc CLI with DeBERTa not built")
    def test_from_cli(self):
        ctx = Ctx(str(CLI))
        (img, cap), (table, tcap) = deberta.figures(ctx)
        self.assertEqual(img, "IMG fig-deberta-buckets 2")
        hf, orig = (dict(s.rows) for s in ctx.renderer.plots[0].series)
        for r in range(-128, 129):
            self.assertEqual((hf[r], orig[r]), (r, r))
        self.assertEqual((hf[511], hf[-511], orig[511]), (255, -255, 255))
        self.assertGreater(hf[1500], 255)                    # HF: no clamp
        self.assertEqual((orig[1500], orig[-1500]), (255, -255))  # 2023: clamped
        self.assertTrue(all(hf[r] == -hf[-r] for r in range(1501)))
        rows = [line for line in table.splitlines() if line.startswith("| (") and line[3].isdigit()]
        self.assertEqual(len(rows), len(deberta.CONFIGS))
        self.assertIn("(b)", tcap)


if __name__ == "__main__":
    unittest.main()
