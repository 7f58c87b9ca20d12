"""Every scheme's figures, rendered from figure data (figures-<scheme>.json, written by posenc_figures from
schemes/<name>/figures.cpp): the shared fixture is the last committed run's (reports/latest/data/), or the directory
POSENC_FIGURES_DIR names (render_figures.py: the data of the program just built). Each module must draw every figure
from its data (no "not drawn"), and, without data, say so for every figure instead of raising."""
from __future__ import annotations

import os
import re
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from posenc_report import schemes  # noqa: E402
from posenc_report.figure_data import FigureData  # noqa: E402

REPO = HERE.parent.parent
FIXTURE = Path(os.environ.get("POSENC_FIGURES_DIR", REPO / "reports" / "latest" / "data"))


def with_figures() -> list:
    """Every scheme (a folder schemes/<name>/ with its spec.cpp): each has a figures.cpp (CMake requires it)."""
    return sorted(p.parent.name for p in (REPO / "schemes").glob("*/spec.cpp"))


class Renderer:
    def __init__(self):
        self.plots = []

    def image(self, plot, alt):
        self.plots.append(plot)
        return f"IMG {plot.name} {len(plot.series)}"


class Ctx:
    def __init__(self, scheme: str, results_dir):
        self.scheme, self.results_dir = scheme, results_dir
        self.figure_notes, self.renderer = [], Renderer()

    def figure_data(self) -> FigureData:
        return FigureData(self.results_dir, self.scheme)


def render(scheme: str, results_dir) -> tuple:
    ctx = Ctx(scheme, results_dir)
    return schemes.draw(schemes.discover()[0][scheme], ctx), ctx


class SchemeFigures(unittest.TestCase):
    def test_every_figure_is_drawn_from_the_data(self):
        names = with_figures()
        self.assertTrue(names, "no schemes/<name>/figures.cpp")
        for scheme in names:
            with self.subTest(scheme=scheme):
                self.assertTrue((FIXTURE / f"figures-{scheme}.json").exists(),
                                f"{FIXTURE}/figures-{scheme}.json: run scripts/main.sh (it writes and keeps it)")
                figs, ctx = render(scheme, FIXTURE)
                self.assertTrue(figs, f"{scheme}: no figures")
                for img, cap in figs:
                    self.assertNotIn("not drawn", img + cap, f"{scheme}: {img[:200]}")
                    self.assertTrue(cap.strip(), f"{scheme}: a figure without a caption")
                self.assertTrue(ctx.renderer.plots or any("|" in img for img, _ in figs), scheme)
                self.assertEqual(ctx.figure_notes[-1][0], "figure data")
                self.assertNotIn("not drawn", ctx.figure_notes[-1][1])

    def test_without_data_every_figure_says_why(self):
        with tempfile.TemporaryDirectory() as empty:
            for scheme in with_figures():
                with self.subTest(scheme=scheme):
                    figs, ctx = render(scheme, empty)
                    self.assertTrue(figs)
                    for img, cap in figs:
                        self.assertIn("not drawn", img, f"{scheme}: {img[:200]}")
                        self.assertIn(f"figures-{scheme}.json not found", img)
                        # the note names what is missing as what it is: a table ("tab..." ids) or a plot ("fig-...")
                        kind, name = re.match(r"\*\((plot|table) `([^`]+)`", img).groups()
                        self.assertEqual(kind == "table", name.startswith("tab"), f"{scheme}: {img[:200]}")
                    self.assertIn("not drawn", ctx.figure_notes[-1][1])

    def test_a_failed_producer_or_a_missing_figure_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "figures-zeta.json"
            path.write_text('{"scheme": "zeta", "error": "boom"}')
            self.assertIn("posenc_figures failed for zeta: boom", FigureData(d, "zeta").error)
            path.write_text('{"scheme": "zeta", "figures": {"a": {"x": 1}}}')
            data = FigureData(d, "zeta")
            self.assertEqual(data.get("a"), {"x": 1})
            self.assertIsNone(data.get("b"))
            self.assertIn('no figure "b"', data.error)
            path.write_text('{"scheme": "other", "figures": {}}')
            self.assertIn("not the figure data of zeta", FigureData(d, "zeta").error)
            path.write_text("{")
            self.assertIn("JSONDecodeError", FigureData(d, "zeta").error)


if __name__ == "__main__":
    unittest.main()
