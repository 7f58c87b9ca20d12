"""End-to-end tests of the report generator on fabricated inputs (python3 -m unittest discover -s reports/tests).

Covers: a full run (failing claim, exceeded budget row, repetitions with medians, fallback BLAS core),
missing inputs ("not run" sections), unreadable files, determinism, no gnuplot, the figure data path; the
per-scheme layout (two schemes in the overview, a scheme without a report module, the methods block once, the
run column only when runs differ), the scheme module registry, stale-output cleaning and shortened worst
inputs."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import samples  # noqa: E402
from posenc_report import bench, cli, md, runs, schemes  # noqa: E402

PAGES = ("index.md", "claims.md", "accuracy.md", "performance.md", "figures.md")
SIN = "sinusoidal/"
REPO = HERE.parent.parent

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

    def rewrite(self, path: Path, change) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data), encoding="utf-8")

    def schemes_table(self) -> str:
        index = self.read("index.md")
        return index[index.index("\n## Schemes"):index.index("\n## Project-wide")]

    def test_claims_page_says_what_bit_for_bit_is_against(self):
        results = samples.write(self.tmp / "results")
        self.assertEqual(generate(results, self.out), 0)
        self.assertNotIn("what bit for bit is against", self.read(SIN + "claims.md"))  # no emulation rows: no section

        def add_rows(data):
            data["budget"] += [
                {"id": "sinusoidal.table.emulated.bitwise", "scheme": "sinusoidal", "quantity": "emulated entry",
                 "dtype": "f32", "regime": "emulated", "domain": "all", "metric": "bitwise", "bound": 0.0,
                 "why": "every step RN32. Bit for bit against correctly rounded float32 steps; real libms differ.",
                 "measured_max": 0.0, "worst_input": None, "samples": 10},
                {"id": "sinusoidal.check.envelope", "scheme": "sinusoidal", "quantity": "a real table's entry",
                 "dtype": "f32", "regime": "emulated", "domain": "all", "metric": "envelope", "bound": 1.0,
                 "why": "a pow 2 ulp off", "measured_max": 0.5, "worst_input": None, "samples": 10},
                {"id": "sinusoidal.table.other.bitwise", "scheme": "sinusoidal", "quantity": "an integer",
                 "dtype": "i64", "regime": "exact", "domain": "all", "metric": "bitwise", "bound": 0.0,
                 "why": "integers", "measured_max": 0.0, "worst_input": None, "samples": 10}]
        self.rewrite(results / "accuracy.json", add_rows)
        self.assertEqual(generate(results, self.out), 0)
        claims = self.read(SIN + "claims.md")
        section = claims[claims.index("what bit for bit is against"):]
        section = section[:section.index("\n## ")] if "\n## " in section else section
        self.assertIn("`sinusoidal.table.emulated.bitwise`", section)
        self.assertIn("`sinusoidal.check.envelope`", section)
        self.assertNotIn("sinusoidal.table.other.bitwise", section)  # bitwise, but not an emulation's claim

    def test_full_run(self):
        results = samples.write(self.tmp / "results", broken_bench=True)
        self.assertEqual(generate(results, self.out, "--strict"), 0)
        for page in PAGES:
            for scheme in ("sinusoidal", "zeta"):
                self.assertTrue((self.out / scheme / page).is_file(), f"{scheme}/{page}")
        claims = self.read(SIN + "claims.md")
        self.assertIn("SIN-DIST-1", claims)
        self.assertIn("FAILED", claims)
        self.assertIn("marked passed but its max error", claims)          # SIN-BLAS-1 is inconsistent
        self.assertNotIn("ZETA-BUCKET-1", claims)                            # scoped to the scheme
        accuracy = self.read(SIN + "accuracy.md")
        self.assertIn("EXCEEDED", accuracy)
        self.assertIn("svg/accuracy-f32-vs-exact.svg", accuracy)
        perf = self.read(SIN + "performance.md")
        self.assertIn("fallback BLAS core (Prescott)", perf)
        self.assertIn("bench-broken.json", perf)
        self.assertNotIn("bias_f32", perf)
        # median of (1.0, 1.3, 0.95) x base time -> exactly the nominal 8 GB/s, not the mean's 7.38
        self.assertRegex(perf, r"`exact_f32` \| f32 \| 1 \| L:256 d:512 \| [^|]+ \| 8 \|")
        self.assertIn("9 claims, **7 passed**, ❌ **1 failed**, 1 not run", self.read("index.md")
                      .replace("Claims:** ", "").replace(" — ", " claims, **").replace(" passed, ", " passed**, "))
        self.assertIn("8 claims, **6 passed**, 1 failed, 1 not run", self.read(SIN + "index.md"))
        for svg in ("fig-pe-heatmap", "fig-dot-vs-k", "fig-dot-random-w", "fig-preset-frequencies"):
            self.assertTrue((self.out / "sinusoidal" / "svg" / f"{svg}.svg").is_file(), svg)
        self.assertFalse((self.out / "svg").exists())
        # the README link works from the scheme directory
        link = re.search(r"Input schemas: \[reports/README.md\]\(([^)]+)\)", self.read(SIN + "claims.md")).group(1)
        self.assertTrue((self.out / "sinusoidal" / link).resolve().samefile(REPO / "reports" / "README.md"))

    def test_heldout_section_on_its_schemes_claims_page(self):
        results = samples.write(self.tmp / "results")
        (results / "heldout.json").write_text(json.dumps({
            "schema": "posenc-heldout-1", "source": "properties/heldout/data/hf",
            "versions": {"transformers": "5.17.0", "torch": "2.11.0", "python": "3.12", "device": "cpu"},
            "records": [{"scheme": "sinusoidal", "file": "a.npy", "model": "fairseq", "what": "table", "ok": True,
                         "detail": "bit-identical"},
                        {"scheme": "sinusoidal", "file": "b.npy", "model": "t2t", "what": "table", "ok": False,
                         "detail": "3 over the bound"},
                        {"scheme": "zeta", "file": "c.json", "model": "hf-zeta", "what": "buckets", "ok": True,
                         "detail": "equal"},
                        {"scheme": "zeta", "file": "d.npy", "model": "zeta-orig", "what": "scores", "ok": True,
                         "detail": "within", "source": "properties/heldout/data/torch"}],
            "sources": {"properties/heldout/data/torch": {"torch": "1.13.1", "device": "cpu, 1 thread",
                                                          "code": "zeta/orig@0123abc"}}}), encoding="utf-8")
        self.assertEqual(generate(results, self.out), 0)
        claims = self.read(SIN + "claims.md")
        self.assertIn("## Held-out vectors from the real implementations", claims)
        self.assertIn("1 of 2 checks passed", claims)
        self.assertIn("3 over the bound", claims)
        self.assertNotIn("c.json", claims)                                   # scoped to the scheme
        self.assertNotIn("data/torch", claims)                               # only the sets its rows use
        zeta = self.read("zeta/claims.md")
        self.assertIn("c.json", zeta)
        self.assertIn("2 of 2 checks passed", zeta)
        self.assertIn("`properties/heldout/data/hf`: transformers 5.17.0, PyTorch 2.11.0", zeta)
        self.assertIn("`properties/heldout/data/torch`: code zeta/orig@0123abc, PyTorch 1.13.1", zeta)

    def test_index_has_a_row_per_scheme(self):
        results = samples.write(self.tmp / "results")
        generate(results, self.out)
        table = self.schemes_table()
        rows = [l for l in table.splitlines() if l.startswith("| [")]
        self.assertEqual(len(rows), 2, table)
        sin, zeta = rows
        self.assertTrue(sin.startswith("| [sinusoidal](sinusoidal/index.md) | 4: vaswani, marian, tensor2tensor, "
                                       "fairseq | 6/8 passed · ❌ **1 failed** (`SIN-DIST-1`) · ⏸ 1 not run |"), sin)
        self.assertIn("❌ `sinusoidal.shift.f32`: 0.7 / 0.5 (1.40)", sin)
        self.assertIn("memory limit (streaming store) — `table/exact_f32` L:262144 d:512", sin)
        self.assertTrue(zeta.startswith("| [zeta](zeta/index.md) | 2: zeta-small, mzeta | 1/1 passed | ⏸ not run |"), zeta)
        self.assertIn("**0.25×** memory limit (streaming store) — `bias/bias_f32` L:8192", zeta)
        self.assertIn("`sinusoidal.shift.f32`: 0.7 / 0.5 (1.40)", self.read(SIN + "index.md"))

    def test_run_column_only_when_runs_differ(self):
        results = samples.write(self.tmp / "results")
        generate(results, self.out)
        self.assertNotIn("| run |", self.schemes_table())
        self.assertNotIn("## Methods", self.read("zeta/claims.md"))
        # zeta's proofs come from another run: its row names both runs, its claims page prints its own methods
        self.rewrite(results / "proofs-zeta.json", lambda d: d["meta"].update(run_id="feedbeef0000@2025-02-02T00:00:00Z"))
        generate(results, self.out)
        table = self.schemes_table()
        self.assertIn("| run |", table)
        zeta = next(l for l in table.splitlines() if l.startswith("| [zeta]"))
        self.assertIn("`feedbeef0000@2025-02-02T00:00:00Z`", zeta)
        self.assertIn(f"`{samples.RUN_ID}`", zeta)                           # its benchmarks: the main run
        claims = self.read("zeta/claims.md")
        self.assertIn("## Methods", claims)
        self.assertIn("not the overview's run", claims)
        self.assertIn("feedbeef0000@2025-02-02T00:00:00Z", claims)
        self.assertNotIn("## Methods", self.read(SIN + "claims.md"))
        self.assertIn("Inputs from other runs than", self.read("index.md"))
        # a table mixing two runs names them: zeta's index page lists its files with their runs
        self.assertIn("## Methods", self.read("zeta/index.md"))
        # a file without run id (older producers) is told by its commit
        self.rewrite(results / "proofs-zeta.json", lambda d: d["meta"].pop("run_id"))
        generate(results, self.out)
        self.assertIn("`commit 0123456789ab (no run id)`", self.schemes_table())
        # two claims files of the same scheme from different runs: the ledger gets a run column
        self.rewrite(results / "proofs-zeta.json", lambda d: d.update(claims=d["claims"] + [
            {**d["claims"][0], "id": "ZETA-X", "scheme": "sinusoidal"}]))
        generate(results, self.out)
        ledger = self.read(SIN + "claims.md")
        self.assertRegex(ledger, r"\| worst input \| run \|")
        self.assertIn("(no run id)", ledger)
        self.assertIn("## Methods", ledger)

    def test_methods_block_once(self):
        results = samples.write(self.tmp / "results")
        generate(results, self.out)
        index = self.read("index.md")
        self.assertEqual(index.count("## Methods"), 1)
        for fact in (samples.RUN_ID, "Example CPU 9000", "23.5 GiB", "Debian GNU/Linux 12", "6.1.0-test",
                     "0.3.21+ds-4", "`Haswell` — dropped", "15,000 per property", "5, min time 0.3 s",
                     "3/6 proofs | 400 s", "**Failed stages:** `proofs:properties`", "-O3 -march=native",
                     "core Prescott (**FALLBACK core**", "avx512 (of avx512, avx2, scalar); baselines AVX3"):
            self.assertIn(fact, index)
        for scheme in ("sinusoidal", "zeta"):
            for page in PAGES:
                text = self.read(f"{scheme}/{page}")
                self.assertNotIn("## Methods", text, f"{scheme}/{page}")
                self.assertIn(f"Run `{samples.RUN_ID}` — methods: [../index.md#methods](../index.md#methods)",
                              text, f"{scheme}/{page}")
                self.assertIn("[All schemes](../index.md)", text)
        # without run.json the overview still has its methods block, from the programs' metas
        (results / "run.json").unlink()
        generate(results, self.out)
        index = self.read("index.md")
        self.assertEqual(index.count("## Methods"), 1)
        self.assertIn("No `run.json` in the results directory", index)
        self.assertIn(f"Run `{samples.RUN_ID}`", self.read(SIN + "claims.md"))

    def test_scheme_without_module(self):
        self.assertNotIn("zeta", schemes.registered())
        results = samples.write(self.tmp / "results")
        self.assertEqual(generate(results, self.out, "--strict"), 0)
        self.assertIn("No scheme figures module: `schemes/zeta/report.py` does not exist",
                      self.read("zeta/figures.md"))
        self.assertIn("ZETA-BUCKET-1", self.read("zeta/claims.md"))
        self.assertIn("bias_f32", self.read("zeta/performance.md"))
        self.assertIn("**Not run.** The accuracy harness", self.read("zeta/accuracy.md"))
        self.assertIn("Schemes without a report module** (generic pages, no figures of their own): `zeta`",
                      self.read("index.md"))
        # seen only in the results (not in schemes.json): still its pages and its row
        self.rewrite(results / "schemes.json", lambda d: d.update(schemes=d["schemes"][:1]))
        generate(results, self.out)
        self.assertIn("ZETA-BUCKET-1", self.read("zeta/claims.md"))
        self.assertIn("| [zeta](zeta/index.md) | *not in schemes.json* | 1/1 passed |", self.read("index.md"))

    def test_stale_output_is_cleaned(self):
        note = md.generated_note("README.md")
        self.out.mkdir()
        for name in ("claims.md", "accuracy.md", "index.md"):              # the earlier one-scheme layout
            (self.out / name).write_text(f"# old\n\n{note}\n")
        (self.out / "performance.md").write_text("# hand-written, not generated\n")
        (self.out / "svg").mkdir()
        (self.out / "svg" / "fig-old.svg").write_text("<svg/>")
        (self.out / "notes.txt").write_text("keep me")
        for d in ("oldscheme", "sinusoidal"):                              # a scheme that is gone, one that stays
            (self.out / d / "svg").mkdir(parents=True)
            (self.out / d / "index.md").write_text(f"# {d}\n\n{note}\n")
            (self.out / d / "claims.md").write_text(f"# {d}\n\n{note}\n")
            (self.out / d / "svg" / "stale-plot.svg").write_text("<svg/>")
        (self.out / "oldscheme" / "mine.txt").write_text("keep me too")
        (self.out / "sinusoidal" / "svg" / "notes.txt").write_text("not a plot: kept")
        (self.out / "gone").mkdir()
        (self.out / "gone" / "index.md").write_text(f"# gone\n\n{note}\n")
        (self.out / "own").mkdir()                                         # not generated: left alone
        (self.out / "own" / "index.md").write_text("# my notes\n")
        (self.out / "own" / "svg").mkdir()
        (self.out / "own" / "svg" / "mine.svg").write_text("<svg/>")
        results = samples.write(self.tmp / "results")
        generate(results, self.out)
        for stale in ("claims.md", "accuracy.md", "svg", "gone", "oldscheme/index.md", "oldscheme/claims.md",
                      "oldscheme/svg", "sinusoidal/svg/stale-plot.svg"):
            self.assertFalse((self.out / stale).exists(), stale)
        for kept in ("performance.md", "notes.txt", "oldscheme/mine.txt", "own/index.md", "own/svg/mine.svg",
                     "sinusoidal/svg/notes.txt",
                     "index.md", "sinusoidal/index.md", "sinusoidal/svg/fig-pe-heatmap.svg"):
            self.assertTrue((self.out / kept).exists(), kept)
        self.assertIn("# posenc report", self.read("index.md"))

    def test_worst_input_is_shortened(self):
        results = samples.write(self.tmp / "results")
        generate(results, self.out)
        claims = self.read(SIN + "claims.md")
        row = next(l for l in claims.splitlines() if l.startswith("| **SIN-CHECK-1**"))
        cell = row.removesuffix(" |").split(" | ")[8]
        self.assertNotIn("END_OF_WORST_INPUT", row)
        self.assertLessEqual(len(cell), md.CLIP + len("``") + len(" (full text below)"))
        self.assertIn("…` (full text below)", cell)
        details = claims[claims.index("<details>"):]
        self.assertIn("**SIN-CHECK-1**", details)
        self.assertIn(samples.LONG_WORST, details)                          # verbatim, in a code block
        self.assertIn("`p=48039 k=-17 d=64` |", claims)                     # short ones stay whole
        self.assertEqual(md.clip("x" * 10), ("x" * 10, False))
        self.assertEqual(md.clip("x" * 200, 120), ("x" * 119 + "…", True))

    def test_claims_link_to_their_tests(self):
        results = samples.write(self.tmp / "results")
        repo = self.tmp / "repo"
        (repo / "properties").mkdir(parents=True)
        (repo / "properties" / "a_comment.hpp").write_text(
            "// POSENC_PROPERTY(Sinusoidal, NormIsHalfDim, {...}) is how a claim is declared\n")
        (repo / "properties" / "sinusoidal_props.cpp").write_text(
            "#include <x>\n\nRC_GTEST_PROP(Sinusoidal, ShiftByKIsAFixedRotation, ()) {}\n"
            "POSENC_PROPERTY(Sinusoidal, NormIsHalfDim,\n    {.id = \"SIN-NORM-1\"}) {}\n")
        generate(results, self.out, "--repo", str(repo))
        claims = self.read(SIN + "claims.md")
        self.assertIn("[sinusoidal_props.cpp:3](../../repo/properties/sinusoidal_props.cpp#L3)", claims)
        self.assertIn("[sinusoidal_props.cpp:4](../../repo/properties/sinusoidal_props.cpp#L4)", claims)
        self.assertNotIn("a_comment.hpp", claims)

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
        self.assertIn("**Not run.** The accuracy harness", self.read(SIN + "accuracy.md"))
        self.assertIn("Accuracy budget:** not run", self.read(SIN + "index.md"))
        empty = self.tmp / "empty"
        empty.mkdir()
        # no schemes.json and no results: the schemes with a report module still get their pages
        self.assertEqual(generate(empty, self.out, "--strict"), 0)
        for page, what in (("claims.md", "The property suite"), ("performance.md", "The benchmark suite")):
            self.assertIn(f"**Not run.** {what}", self.read(SIN + page))
        self.assertIn("| [sinusoidal](sinusoidal/index.md) | *not in schemes.json* | ⏸ not run", self.read("index.md"))

    def test_unexpected_shapes_do_not_crash(self):
        results = self.tmp / "results"
        results.mkdir()
        (results / "proofs-x.json").write_text(json.dumps({"meta": "oops", "claims": [1, {"id": None}]}))
        (results / "accuracy.json").write_text(json.dumps({"budget": [{"bound": "x"}], "series": [{"points": 3}]}))
        (results / "bench-x.json").write_text(json.dumps({"context": None, "benchmarks": [{"name": "a"}, 5]}))
        (results / "run.json").write_text(json.dumps({"run_id": 5, "machine": [], "stages": "x", "failed": 3}))
        (results / "schemes.json").write_text(json.dumps({"schemes": [{"name": None}, 3, {"name": 7, "presets": 1}]}))
        self.assertEqual(generate(results, self.out, "--strict"), 0)
        (results / "run.json").write_text("{")
        (results / "schemes.json").write_text("[]")
        self.assertEqual(generate(results, self.out, "--strict"), 0)
        self.assertIn("unreadable", self.read("index.md"))

    def test_without_gnuplot(self):
        results = samples.write(self.tmp / "results")
        old = os.environ.get("PATH", "")
        os.environ["PATH"] = str(self.tmp)          # no gnuplot here
        try:
            self.assertEqual(generate(results, self.out, "--strict"), 0)
        finally:
            os.environ["PATH"] = old
        self.assertIn("not drawn: gnuplot not found", self.read(SIN + "figures.md"))

    def test_figures_from_figure_data(self):
        results = samples.write(self.tmp / "results", figures_file=False)
        generate(results, self.out)
        figures = self.read(SIN + "figures.md")
        self.assertEqual(figures.count("not drawn: figures-sinusoidal.json not found"), 7)  # 6 plots, methods row
        samples.write(results)
        generate(results, self.out)
        figures = self.read(SIN + "figures.md")
        self.assertIn("Data: SinusoidalPlan::table", figures)
        self.assertIn("`posenc_figures` (reports/figures, schemes/sinusoidal/figures.cpp)", figures)
        self.assertNotIn("not drawn:", figures)
        (results / "figures-sinusoidal.json").write_text('{"scheme": "sinusoidal", "error": "boom"}')
        generate(results, self.out)
        self.assertIn("not drawn: posenc_figures failed for sinusoidal: boom", self.read(SIN + "figures.md"))


class SchemeModuleTest(unittest.TestCase):
    def test_registry_discovers_modules(self):
        names = schemes.registered()
        self.assertIn("sinusoidal", names)
        modules, problems = schemes.discover()
        self.assertEqual(problems, [])
        for name, mod in modules.items():
            self.assertEqual(mod.SCHEME, name)
            self.assertTrue(schemes.module_path(name).is_file())
            self.assertTrue(callable(mod.figures))
        self.assertEqual(modules["sinusoidal"].HEADLINE_KERNELS[0]["variant"], "exact_f32")

    def test_registry_reports_broken_modules(self):
        good = "SCHEME = '{}'\ndef figures(ctx, data):\n    return []\n"
        heads = '{"headline_kernels": [{"family": "table", "variant": "exact_f32", "baseline": "%s"}]}'
        folders = {"good": (good.format("good"), heads % "bandwidth"),
                   "misnamed": (good.format("other"), heads % "bandwidth"),
                   "broken": ("import no_such_module_anywhere\n", heads % "bandwidth"),
                   "badhead": (good.format("badhead"), heads % "x"),
                   "nohead": (good.format("nohead"), None),
                   "nofigures": ("SCHEME = 'nofigures'\n", heads % "rmw")}
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            for name, (module, headline) in folders.items():
                (d / name).mkdir()
                (d / name / "report.py").write_text(module)
                if headline is not None:
                    (d / name / "headline.json").write_text(headline)
            (d / "_helper.py").write_text("raise RuntimeError('not a scheme module')\n")
            modules, problems = schemes.discover(d)
        self.assertEqual(sorted(modules), ["good"])
        self.assertEqual(modules["good"].HEADLINE_KERNELS[0]["baseline"], "bandwidth")
        self.assertEqual(sorted(w for w, _ in problems),
                         ["schemes/badhead/headline.json", "schemes/broken/report.py", "schemes/misnamed/report.py",
                          "schemes/nofigures/report.py", "schemes/nohead/headline.json"])

    def test_main_benchmark_set_holds_every_headline_kernel_and_its_baselines(self):
        sys.path.insert(0, str(REPO / "scripts"))
        import bench_set
        pattern = re.compile(bench_set.set_filter("main"))
        modules, _ = schemes.discover()
        self.assertGreaterEqual(len(modules), 13)
        for name, mod in modules.items():
            for h in mod.HEADLINE_KERNELS:
                variant = h["variant"].replace("*", "x")
                self.assertTrue(pattern.search(f"{name}/{h['family']}/{variant}/L:8/threads:1"), (name, h))
                self.assertTrue(pattern.search(f"{name}/{h['family']}/stream_store_f32/L:8/threads:1"), (name, h))
            self.assertFalse(pattern.search(f"{name}/no_such_family/exact_f32/L:8"))

    def test_every_scheme_has_a_module(self):
        names = sorted(p.name for p in (REPO / "schemes").iterdir() if (p / "spec.cpp").is_file())
        self.assertGreaterEqual(len(names), 13)
        for name in names:
            self.assertIn(name, schemes.registered(), f"add schemes/{name}/report.py")

    def test_run_labels(self):
        self.assertEqual(runs.of_meta({"run_id": "abc@t", "commit": "x"}), "abc@t")
        self.assertEqual(runs.of_meta({"run_id": "", "commit": "924e244b2385aaaa"}), "commit 924e244b2385 (no run id)")
        self.assertEqual(runs.of_bench({"posenc_commit": "924e244b2385+dirty"}), "commit 924e244b2385+dirty (no run id)")
        self.assertEqual(runs.of_meta({}), runs.UNKNOWN)
        self.assertFalse(runs.needs_column(["a"], "a"))
        self.assertTrue(runs.needs_column(["a"], "b"))
        self.assertTrue(runs.needs_column(["a", "b"], None))


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


class NumbersNearTheirBound(unittest.TestCase):
    """A measured maximum just below its bound must not print as the bound (0.49999 / 0.5 shown as 0.5 / 0.5
    reads as 'at the limit'), nor a ratio just below 1 as 1.00."""

    def test_ratio_and_measured_keep_the_digits_that_differ(self):
        from posenc_report import summary
        self.assertEqual(summary.ratio_text(0.99999117), "0.99999")
        self.assertEqual(summary.ratio_text(1.0), "1.00")
        self.assertNotEqual(summary.ratio_text(1.0000003), "1.00")
        self.assertEqual(summary.measured_text(0.4999999, 0.5), "0.4999999")
        self.assertEqual(summary.measured_text(0.25, 0.5), "0.25")


if __name__ == "__main__":
    unittest.main()
