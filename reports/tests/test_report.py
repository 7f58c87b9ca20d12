"""End-to-end tests of the report generator on fabricated inputs (python3 -m unittest discover reports/tests).

Covers: a full run (failing claim, exceeded budget row, repetitions with medians, fallback BLAS core),
missing inputs ("not run" sections), unreadable files, determinism, no gnuplot, and the CLI data path."""
from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import samples  # noqa: E402
from posenc_report import bench, cli  # noqa: E402

PAGES = ("index.md", "claims.md", "accuracy.md", "performance.md", "figures.md")

FAKE_CLI = """#!{python}
import json, math, sys
args = sys.argv[1:]
if {fail}:
    sys.stderr.write("posenc: error: --preset: unknown value\\n"); sys.exit(2)
dim = int(args[args.index("--dim") + 1])
first, end = (int(x) for x in args[args.index("--positions") + 1].split(":"))
rows = []
for p in range(first, end):
    row = []
    for i in range(dim):
        w = 10000.0 ** (-2.0 * (i // 2) / dim)
        row.append(math.sin(p * w) if i % 2 == 0 else math.cos(p * w))
    rows.append(row)
print(json.dumps({{"spec": {{"dim": dim}}, "positions": list(range(first, end)), "dtype": "f64", "rows": rows}}))
"""


def generate(results: Path, out: Path, *extra) -> int:
    with contextlib.redirect_stderr(io.StringIO()):
        return cli.main(["--results", str(results), "--out", str(out), *extra])


class ReportTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)
        self.out = self.tmp / "out"

    def tearDown(self):
        self._tmp.cleanup()

    def read(self, page: str) -> str:
        return (self.out / page).read_text(encoding="utf-8")

    def test_full_run(self):
        results = samples.write(self.tmp / "results", broken_bench=True)
        self.assertEqual(generate(results, self.out, "--strict"), 0)
        for page in PAGES:
            text = self.read(page)
            first_section = text[text.index("\n## "):].split("\n## ")[1]
            self.assertTrue(first_section.startswith("Methods"), page)      # every page opens with methods
            self.assertIn("0123456789abcdef", first_section, page)
        claims = self.read("claims.md")
        self.assertIn("SIN-DIST-1", claims)
        self.assertIn("FAILED", claims)
        self.assertIn("marked passed but its max error", claims)          # SIN-BLAS-1 is inconsistent
        accuracy = self.read("accuracy.md")
        self.assertIn("EXCEEDED", accuracy)
        self.assertIn("svg/accuracy-f32-vs-exact.svg", accuracy)
        perf = self.read("performance.md")
        self.assertIn("fallback BLAS core (Prescott)", perf)
        self.assertIn("bench-broken.json", perf)
        # median of (1.0, 1.3, 0.95) x base time -> exactly the nominal 8 GB/s, not the mean's 7.38
        self.assertRegex(perf, r"`exact_f32` \| f32 \| 1 \| L:256 d:512 \| [^|]+ \| 8 \|")
        index = self.read("index.md")
        self.assertIn("8 claims, **6 passed**, 1 failed, 1 not run", index)
        for svg in ("fig-pe-heatmap", "fig-dot-vs-k", "fig-dot-random-w", "fig-preset-frequencies"):
            self.assertTrue((self.out / "svg" / f"{svg}.svg").is_file(), svg)

    def test_claims_link_to_their_tests(self):
        results = samples.write(self.tmp / "results")
        repo = self.tmp / "repo"
        (repo / "properties").mkdir(parents=True)
        (repo / "properties" / "sinusoidal_props.cpp").write_text(
            "#include <x>\n\nRC_GTEST_PROP(Sinusoidal, ShiftByKIsAFixedRotation, ()) {}\n")
        generate(results, self.out, "--repo", str(repo))
        self.assertIn("[sinusoidal_props.cpp:3](../repo/properties/sinusoidal_props.cpp#L3)", self.read("claims.md"))

    def test_deterministic(self):
        results = samples.write(self.tmp / "results")
        generate(results, self.out)
        first = {p: p.read_bytes() for p in sorted(self.out.rglob("*")) if p.is_file()}
        generate(results, self.out)
        second = {p: p.read_bytes() for p in sorted(self.out.rglob("*")) if p.is_file()}
        self.assertEqual(first, second)

    def test_missing_inputs_say_not_run(self):
        results = samples.write(self.tmp / "results", accuracy_file=False)
        self.assertEqual(generate(results, self.out, "--strict"), 0)
        self.assertIn("**Not run.** The accuracy harness", self.read("accuracy.md"))
        self.assertIn("Accuracy budget:** not run", self.read("index.md"))
        empty = self.tmp / "empty"
        empty.mkdir()
        self.assertEqual(generate(empty, self.out, "--strict"), 0)
        for page, what in (("claims.md", "The property suite"), ("performance.md", "The benchmark suite")):
            self.assertIn(f"**Not run.** {what}", self.read(page))

    def test_unexpected_shapes_do_not_crash(self):
        results = self.tmp / "results"
        results.mkdir()
        (results / "proofs-x.json").write_text(json.dumps({"meta": "oops", "claims": [1, {"id": None}]}))
        (results / "accuracy.json").write_text(json.dumps({"budget": [{"bound": "x"}], "series": [{"points": 3}]}))
        (results / "bench-x.json").write_text(json.dumps({"context": None, "benchmarks": [{"name": "a"}, 5]}))
        self.assertEqual(generate(results, self.out, "--strict"), 0)

    def test_without_gnuplot(self):
        results = samples.write(self.tmp / "results")
        old = os.environ.get("PATH", "")
        os.environ["PATH"] = str(self.tmp)          # no gnuplot here
        try:
            self.assertEqual(generate(results, self.out, "--strict"), 0)
        finally:
            os.environ["PATH"] = old
        self.assertIn("not drawn: gnuplot not found", self.read("figures.md"))

    def _fake_cli(self, fail: bool) -> Path:
        path = self.tmp / ("posenc-fail" if fail else "posenc")
        path.write_text(FAKE_CLI.format(python=sys.executable, fail=fail))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    def test_figures_from_cli(self):
        generate(self.tmp, self.out, "--cli", str(self._fake_cli(False)))
        self.assertIn("Data: the posenc CLI", self.read("figures.md"))
        generate(self.tmp, self.out, "--cli", str(self._fake_cli(True)))
        figures = self.read("figures.md")
        self.assertIn("Data: Python's math.sin/cos", figures)
        self.assertIn("unknown value", figures)


class BenchParsingTest(unittest.TestCase):
    def test_name_convention(self):
        self.assertEqual(bench.parse_name("sinusoidal/table/exact_f32/L:4096/d:512/threads:2/real_time"),
                         ("table", "exact_f32", {"L": "4096", "d": "512", "threads": "2"}))
        self.assertEqual(bench.parse_name("sinusoidal/sgemm/L:8/repeats:3"), ("sgemm", "", {"L": "8"}))
        self.assertEqual(bench.dtype_of("stream_store", {}), None)
        self.assertEqual(bench.dtype_of("emulated_f32", {}), "f32")
        self.assertEqual(bench.baseline_kind("table", "plainloop_f64"), "plainloop")
        self.assertEqual(bench.baseline_kind("table", "exact_f64"), None)

    def test_baseline_prefers_same_dtype(self):
        data = {"benchmarks": [
            {"name": n, "run_type": "iteration", "real_time": t, "time_unit": "ns", "bytes_per_second": b}
            for n, t, b in (("sinusoidal/table/exact_f32/L:4/d:8", 10, 50.0), ("sinusoidal/table/stream_store/L:4/d:8", 5, 100.0),
                            ("sinusoidal/table/stream_store_f32/L:4/d:8", 4, 200.0),
                            ("sinusoidal/table/stream_store_f64/L:4/d:8", 1, 400.0))]}
        recs = bench.records("f", data)
        kernel = recs[0]
        base = bench.find_baseline(kernel, recs, "bandwidth")
        self.assertEqual(base.variant, "stream_store_f32")
        self.assertEqual(bench.ratio(kernel, base, "bandwidth"), (0.25, "bytes/s"))


if __name__ == "__main__":
    unittest.main()
