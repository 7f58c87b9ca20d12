"""The main job's pieces that the report depends on: shard ledgers merged (scripts/merge_proofs.py), the compact
results kept beside the report (scripts/keep_results.py), and reliability.md when the run did not run the
reliability suite (the last --full run's figures, named as such, or a plain statement that there are none)."""
import importlib.util
import json
import sys
import tempfile
import unittest
from pathlib import Path

import samples

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "reports"))
from posenc_report import cli  # noqa: E402


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


merge_proofs = load_script("merge_proofs")
keep_results = load_script("keep_results")


def claim(cid, status, cases, rows, tests=("S.T",)):
    return {"id": cid, "status": status, "cases": cases, "tests": list(tests), "regions": {"r": cases},
            "budget_row": rows[0]["budget_row"] if rows else None, "rows": rows}


def row(rid, cases, err, bound=1.0, worst="w"):
    return {"budget_row": rid, "cases": cases, "max_error": err, "bound": bound, "worst_input": worst,
            "failures": [], "metric": "m"}


class MergeProofsTest(unittest.TestCase):
    def test_status_cases_rows_and_headline_merge(self):
        a = {"meta": {"program": "p"}, "claims": [
            claim("C-1", "passed", 10, [row("r.a", 10, 0.2, worst="a1"), row("r.b", 10, 0.1)]),
            claim("C-2", "not run", 0, []),
            claim("C-3", "passed", 5, [row("r.c", 5, 0.0)])]}
        b = {"meta": {"program": "p"}, "claims": [
            claim("C-1", "not run", 0, []),
            claim("C-2", "passed", 7, [row("r.d", 7, 0.3)]),
            claim("C-3", "failed", 4, [row("r.c", 4, 2.0, worst="c2"), row("r.e", 4, 0.5, bound=0.0)])]}
        out = merge_proofs.merge([a, b])
        by = {c["id"]: c for c in out["claims"]}
        self.assertEqual([c["id"] for c in out["claims"]], ["C-1", "C-2", "C-3"])
        self.assertEqual(out["meta"]["shards"], 2)
        self.assertEqual((by["C-1"]["status"], by["C-1"]["cases"]), ("passed", 10))
        self.assertEqual((by["C-2"]["status"], by["C-2"]["cases"], by["C-2"]["budget_row"]), ("passed", 7, "r.d"))
        c3 = by["C-3"]
        self.assertEqual((c3["status"], c3["cases"], c3["regions"]["r"]), ("failed", 9, 9))
        rows = {r["budget_row"]: r for r in c3["rows"]}
        self.assertEqual((rows["r.c"]["cases"], rows["r.c"]["max_error"], rows["r.c"]["worst_input"]), (9, 2.0, "c2"))
        # a positive error against bound 0 is the tightest row, as the C++ ledger chooses it
        self.assertEqual(c3["budget_row"], "r.e")


class KeepResultsTest(unittest.TestCase):
    def test_compact_copies_without_series_and_reliability_only_with_the_flag(self):
        with tempfile.TemporaryDirectory() as tmp:
            results, data = Path(tmp, "results"), Path(tmp, "data")
            samples.write(results)
            (results / "fuzz.json").write_text(json.dumps({"targets": []}))
            (data / "reliability").mkdir(parents=True)
            (data / "reliability" / "run.json").write_text(json.dumps({"run_id": "old"}))
            (data / "stale.json").write_text("{}")
            keep_results.main(["keep", str(results), str(data)])
            self.assertFalse((data / "stale.json").exists())
            self.assertTrue((data / "run.json").exists())
            acc = json.loads((data / "accuracy.json").read_text())
            self.assertIn("budget", acc)
            self.assertNotIn("series", acc)
            self.assertEqual(json.loads((data / "reliability" / "run.json").read_text())["run_id"], "old")
            keep_results.main(["keep", str(results), str(data), "--reliability"])
            self.assertTrue((data / "reliability" / "fuzz.json").exists())
            self.assertNotEqual(json.loads((data / "reliability" / "run.json").read_text()).get("run_id"), "old")


class ReliabilityOfAnEarlierRunTest(unittest.TestCase):
    def generate(self, results, out):
        import contextlib
        import io
        with contextlib.redirect_stderr(io.StringIO()):
            return cli.main(["--results", str(results), "--out", str(out)])

    def test_named_as_the_earlier_run_or_said_to_be_missing(self):
        with tempfile.TemporaryDirectory() as tmp:
            results, out = Path(tmp, "results"), Path(tmp, "out")
            samples.write(results)
            self.assertEqual(self.generate(results, out), 0)
            page = (out / "reliability.md").read_text()
            self.assertIn("did not run the reliability suite", page)
            self.assertIn("no earlier --full run", page)
            earlier = results / "earlier-reliability"
            earlier.mkdir()
            (earlier / "run.json").write_text(json.dumps({"run_id": "abc123@2026-01-01T00:00:00Z", "commit": "abc123",
                                                          "mode": "full", "started": "2026-01-01T00:00:00Z"}))
            (earlier / "fuzz.json").write_text(json.dumps({"targets": [{"name": "npy_fuzz", "executions": 10,
                                                                        "findings": 0}]}))
            self.assertEqual(self.generate(results, out), 0)
            page = (out / "reliability.md").read_text()
            self.assertIn("abc123@2026-01-01T00:00:00Z", page)
            self.assertIn("not this run's", page)
            self.assertIn("npy_fuzz", page)
            index = (out / "index.md").read_text()
            self.assertIn("from run `abc123@2026-01-01T00:00:00Z`, not this run", index)


if __name__ == "__main__":
    unittest.main()
