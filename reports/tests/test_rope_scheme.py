"""Tests of the RoPE report module's long-context figure (d) (reports/posenc_report/schemes/rope.py) on a small
fabricated rope-long-context.json, missing and unreadable, and of its producer scripts/rope_long_context.py (its
buckets and .npy reader; end to end where build/cli/posenc is built). python3 -m unittest discover -s reports/tests"""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(REPO / "scripts"))

import rope_long_context  # noqa: E402
from posenc_report.gnuplot import Renderer as SvgRenderer  # noqa: E402
from posenc_report.schemes import rope  # noqa: E402

CLI = REPO / "build" / "cli" / "posenc"


class Renderer:
    def __init__(self):
        self.plots = []

    def image(self, plot, alt):
        self.plots.append(plot)
        return f"IMG {plot.name} {len(plot.series)}"


class Inputs:
    def __init__(self, results_dir):
        self.results_dir = results_dir


class Ctx:
    def __init__(self, results_dir, renderer=None):
        self.cli, self.figure_notes, self.inputs = None, [], Inputs(results_dir)
        self.renderer = renderer or Renderer()


def bucket(lo, hi, err, pair=2):
    return {"lo": lo, "hi": hi, "max_abs_error": err, "at_position": hi, "at_pair": pair}


def series(label, scaling, scale, m=1.0):
    """Errors growing like p * 2^-24 (times `scale`), in four buckets; position 0 exact."""
    bks = [bucket(0, 0, 0.0)] + [bucket(lo, hi, scale * hi * 2.0 ** -24) for lo, hi in
                                 ((1, 1023), (1024, 8191), (8192, 32767), (32768, 131071))]
    return {"label": label, "scaling": scaling, "attention_factor": m, "pairs": 64,
            "spec": {"head_dim": 128, "base": 500000.0, "factor": 8.0 if scaling != "none" else 1.0},
            "max_abs_error_below": {str(k): scale * (k - 1) * 2.0 ** -24 for k in (1024, 8192, 32768, 131072)},
            "buckets": bks}


SAMPLE = {"schema": rope_long_context.SCHEMA,
          "meta": {"program": "scripts/rope_long_context.py", "commit": "0123456789ab", "run_id": "r1",
                   "posenc_commit": "0123456789ab", "date": "2025-01-01T12:00:00Z"},
          "series": [series("Model A (llama3)", "llama3", 1.0), series("Model A head unscaled", "none", 1.0),
                     series("Model B (yarn)", "yarn", 1.25, 1.25), series("Model B head unscaled", "none", 1.0)]}


class LongContextFigureTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def test_missing_input_says_not_run(self):
        img, cap = rope._long_context_error(Ctx(self.tmp))
        self.assertIn("not drawn: not run: rope-long-context.json is not in the results", img)
        self.assertEqual(cap, "")
        img, _ = rope._long_context_error(Ctx(None))
        self.assertIn("not run", img)

    def test_unreadable_input(self):
        for text in ("{not json", json.dumps({"series": []}), json.dumps({"series": [{"label": 1}]}), "[]"):
            (self.tmp / rope.LONG_CONTEXT_FILE).write_text(text)
            img, _ = rope._long_context_error(Ctx(self.tmp))
            self.assertIn("rope-long-context.json is unreadable", img)

    def test_figure_from_sample(self):
        (self.tmp / rope.LONG_CONTEXT_FILE).write_text(json.dumps(SAMPLE))
        ctx = Ctx(self.tmp)
        img, cap = rope._long_context_error(ctx)
        self.assertEqual(img, "IMG fig-rope-long-context-error 5")          # 4 series + the ulp line
        plot = ctx.renderer.plots[0]
        self.assertEqual((plot.logx, plot.logy, plot.xrange), (2, 10, (1, 131072)))
        a = plot.series[0]
        self.assertEqual([p for p, _ in a.rows], [1023, 8191, 32767, 131071])   # p = 0 (error 0) left out
        self.assertEqual(plot.series[0].colour, plot.series[1].colour)          # a model and its unscaled head
        self.assertNotEqual(plot.series[0].colour, plot.series[2].colour)
        self.assertTrue(plot.series[1].dashed and not plot.series[0].dashed)
        self.assertEqual(plot.series[-1].rows, [(1, 2.0 ** -23), (131071, 2.0 ** -23)])
        for what in ("hf is HF's float32 steps each correctly rounded (posenc's emulation",
                     "exact the mathematics", "float32 ulp of 1",
                     "Model A (llama3): 1k 6.10e-05, 8k 4.88e-04, 32k 0.00195, 128k 0.00781",
                     "Model B: yarn / unscaled = 1.2500 (attention factor 1.25",
                     "Model A: llama3 / unscaled = 1.0000", "from p = 1,023 on"):
            self.assertIn(what, cap)
        self.assertEqual(ctx.figure_notes[0][0], "long-context data")
        self.assertIn("commit 0123456789ab, run r1", ctx.figure_notes[0][1])

    @unittest.skipUnless(shutil.which("gnuplot"), "gnuplot not installed")
    def test_svg(self):
        (self.tmp / rope.LONG_CONTEXT_FILE).write_text(json.dumps(SAMPLE))
        ctx = Ctx(self.tmp, SvgRenderer(self.tmp / "out"))
        img, _ = rope._long_context_error(ctx)
        self.assertEqual(img, "![RoPE hf vs exact cache error at 128k positions](svg/fig-rope-long-context-error.svg)")
        svg = (self.tmp / "out" / "svg" / "fig-rope-long-context-error.svg").read_text()
        for text in ("Model B (yarn)", "float32 ulp of 1", "position p (log scale", "1.0e-07"):
            self.assertIn(text, svg)


class ProducerTest(unittest.TestCase):
    def test_buckets_cover_every_position_once(self):
        edges = rope_long_context.bucket_edges(131072)
        self.assertEqual(edges[:3], [(0, 1), (1, 2), (2, 3)])
        self.assertEqual(edges[-1][1], 131072)
        self.assertTrue(all(lo < hi for lo, hi in edges))
        self.assertTrue(all(a[1] == b[0] for a, b in zip(edges, edges[1:])))
        self.assertIn((8192, 9742), edges)           # octaves start a bucket
        self.assertEqual(len(rope_long_context.bucket_edges(100)), len({lo for lo, _ in edges if lo < 100}))

    def test_npy_reader(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "a.npy"
            rope._write_npy(str(path), 2, 3, [1.0, 2.0, 3.0, 4.0, 5.0, -6.5])
            rows, cols, data = rope_long_context.read_npy(str(path))
            self.assertEqual((rows, cols, list(data)), (2, 3, [1.0, 2.0, 3.0, 4.0, 5.0, -6.5]))
            path.write_bytes(path.read_bytes().replace(b"<f8", b"<f4"))
            with self.assertRaises(ValueError):
                rope_long_context.read_npy(str(path))

    @unittest.skipUnless(CLI.is_file(), "posenc CLI not built")
    def test_end_to_end_on_a_short_range(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            proc = subprocess.run([sys.executable, str(REPO / "scripts" / "rope_long_context.py"), str(CLI),
                                   "--out", str(out), "--end", "2048", "--chunk", "700"],
                                  capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            data = json.loads(out.read_text())
        self.assertEqual([s["scaling"] for s in data["series"]], ["llama3", "none", "yarn", "none"])
        for s in data["series"]:
            self.assertEqual(s["chunks"], [[0, 700], [700, 1400], [1400, 2048]])
            self.assertEqual(sum(b["hi"] - b["lo"] + 1 for b in s["buckets"]), 2048)
            # the float32 angle: above ulp(1) within the first 1k positions, below 2^-12 at 2k
            self.assertGreater(s["max_abs_error_below"]["1024"], 2.0 ** -23)
            self.assertLess(max(b["max_abs_error"] for b in s["buckets"]), 2.0 ** -12)
        llama, llama_plain, yarn, yarn_plain = data["series"]
        self.assertEqual(llama["buckets"], llama_plain["buckets"])     # llama3 keeps the pairs that matter here
        self.assertAlmostEqual(yarn["attention_factor"], 1.1386294361119891, places=12)


class XposOverflowTable(unittest.TestCase):
    def test_without_cli_not_drawn(self):
        text, cap = rope._xpos_overflow(Ctx(None))
        self.assertIn("not drawn", text)
        self.assertEqual(cap, "")

    def test_bisection(self):
        self.assertEqual(rope._first_beyond(lambda d: d >= 37, 100), 37)
        self.assertEqual(rope._first_beyond(lambda d: False, 100), 101)
        self.assertEqual(rope._first_beyond(lambda d: True, 100), 0)

    @unittest.skipUnless(CLI.is_file(), "posenc CLI not built")
    def test_table_from_cli(self):
        ctx = Ctx(None)
        ctx.cli = str(CLI)
        text, cap = rope._xpos_overflow(ctx)
        rows = [line for line in text.splitlines() if line.startswith("| 64 ") or line.startswith("| 512 ")]
        self.assertEqual(len(rows), 4, text)
        # ROPE-XPOS-2's figures: f16 567 / 4533, f32 4533 / 36261 (scale_base 64 / 512), both sides, both regimes
        for row in rows:
            cells = [c.strip() for c in row.strip("|").split("|")]
            want = ("567", "4,533", "4,533") if cells[0] == "64" else ("4,533", "36,261", "36,261")
            self.assertEqual(tuple(cells[2:5]), want, row)
        self.assertIn("(e)", cap)


if __name__ == "__main__":
    unittest.main()
