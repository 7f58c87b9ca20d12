"""compare on fabricated runs, resolving run references, the command line's exit statuses and error lines, and
import-git from a throw-away repository."""
import contextlib
import io
import json
import subprocess
import unittest

from helpers import MACHINE, LONE, ROPE, STORE, TABLE, TempDir, write_run

from posenc_history import cli, compare, importer, schema, store
from posenc_history.errors import HistoryError


def run_cli(*argv) -> tuple:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


class Fixture(TempDir):
    def add(self, index, **kw):
        conn = schema.open_db(self.db)
        try:
            d, rid = write_run(self.tmp / f"r{index}", index, **kw)
            importer.import_dir(conn, d)
        finally:
            conn.close()
        return rid

    def compare(self, base, new, **settings):
        conn = schema.open_db(self.db, create=False)
        a, b = store.resolve(conn, base), store.resolve(conn, new)
        return compare.compare(store.load_run(conn, a), store.load_run(conn, b), compare.Settings(**settings))


class Compare(Fixture):
    def test_a_slower_kernel_is_a_regression_through_its_ratio(self):
        self.add(0)
        self.add(1, factors={TABLE: 1.5})
        c = self.compare("previous", "latest")
        self.assertTrue(c.same_machine)
        self.assertEqual([(r.what, r.name, r.kind) for r in c.regressions], [("ratio", TABLE, "bandwidth")])
        row = c.regressions[0]
        self.assertAlmostEqual(row.change, 1 / 1.5 - 1, delta=0.05)
        self.assertLess(row.shift.lo - 1, row.change)
        self.assertGreater(row.shift.hi - 1, row.change)
        time_row = next(r for r in c.rows if r.what == "time" and r.name == TABLE)
        self.assertEqual((time_row.gated, time_row.verdict), (False, "regression"))
        self.assertTrue(c.regressed)

    def test_a_faster_kernel_is_an_improvement_not_a_regression(self):
        self.add(0)
        self.add(1, factors={ROPE: 0.7})
        c = self.compare("previous", "latest")
        self.assertEqual(c.regressions, [])
        self.assertEqual([r.name for r in c.improvements], [ROPE])
        self.assertFalse(c.regressed)

    def test_machine_moving_everything_is_not_a_ratio_regression(self):
        self.add(0)
        self.add(1, factors={TABLE: 1.6, STORE: 1.6, ROPE: 1.6, "rope/apply/rmw_f32/T:32768/heads:32/head_dim:128/"
                             "threads:1": 1.6, LONE: 1.0})
        c = self.compare("previous", "latest")
        self.assertEqual(c.regressions, [])
        baseline = next(r for r in c.rows if r.name == STORE)
        self.assertEqual((baseline.gated, baseline.verdict), (False, "regression"))

    def test_kernel_without_baseline_gates_by_its_time(self):
        self.add(0)
        self.add(1, factors={LONE: 1.3})
        c = self.compare("previous", "latest")
        self.assertEqual([(r.what, r.name) for r in c.regressions], [("time", LONE)])

    def test_gate_times_takes_every_kernel_time(self):
        self.add(0)
        self.add(1, factors={TABLE: 1.6, STORE: 1.6})
        self.assertEqual(self.compare("previous", "latest").regressions, [])
        names = {r.name for r in self.compare("previous", "latest", gate="times").regressions}
        self.assertEqual(names, {TABLE})

    def test_other_machine_compares_only_ratios(self):
        self.add(0)
        self.add(1, machine={**MACHINE, "cpu": "Intel Xeon Platinum 8581C"}, factors={TABLE: 1.5})
        c = self.compare(store_ref(self, 0), "latest")
        self.assertFalse(c.same_machine)
        self.assertEqual(c.machine_diffs[0][0], "cpu")
        self.assertFalse(any(r.what == "time" for r in c.rows))
        self.assertEqual([r.name for r in c.regressions], [TABLE])

    def test_too_few_repetitions_are_named(self):
        self.add(0, reps=3)
        self.add(1, reps=3, factors={TABLE: 2.0})
        c = self.compare("previous", "latest")
        self.assertEqual(c.regressions, [])
        self.assertIn("with 3 vs 3 repetitions the smallest possible p-value is 0.1", " ".join(c.notes))

    def test_build_and_environment_differences_are_named(self):
        self.add(0)
        self.add(1, env={"POSENC_DISABLE_AVX512": "1"})
        c = self.compare("previous", "latest")
        self.assertIn(("environment POSENC_DISABLE_AVX512", None, "1"), c.build_diffs)
        self.assertTrue(c.same_machine)

    def test_budget_row_beyond_its_bound_and_failed_claim_are_regressions(self):
        self.add(0)
        self.add(1, measured=0.6, status="failed")
        c = self.compare("previous", "latest")
        row = next(b for b in c.budget if b["row_id"] == "sinusoidal.table.f32")
        self.assertEqual((row["base_fraction"], row["new_fraction"], row["verdict"]), (0.5, 1.2, "regression"))
        claim = next(x for x in c.claims if x["claim_id"] == "SIN-ROT-1")
        self.assertEqual((claim["base_status"], claim["new_status"], claim["verdict"]), ("passed", "failed",
                                                                                         "regression"))
        self.assertEqual(len(c.accuracy_regressions), 2)

    def test_claim_only_budget_rows_are_kept(self):
        self.add(0)
        conn = schema.open_db(self.db)
        run = store.load_run(conn, store.resolve(conn, "latest"))
        row = next(b for b in run.budget if b["row_id"] == "sinusoidal.shift.f32")
        self.assertEqual((row["measured"], row["bound"], row["measured_by"]), (0.2, 0.5, "claims"))


def store_ref(case, index):
    return f"{index:04d}abcdef01"


class References(Fixture):
    def test_latest_previous_commit_prefix_and_run_id(self):
        ids = [self.add(i) for i in range(3)]
        self.add(3, selection_set="other")
        conn = schema.open_db(self.db)
        rid = lambda pk: store.run_row(conn, pk)["run_id"]  # noqa: E731
        self.assertEqual(rid(store.resolve(conn, "latest")), "0003abcdef01@2026-11-04T10:00:00Z")
        latest_quick = store.resolve(conn, ids[2])
        self.assertEqual(rid(store.resolve(conn, "previous", relative_to=latest_quick)), ids[1])
        self.assertEqual(rid(store.resolve(conn, "0001ab")), ids[1])
        self.assertEqual(rid(store.resolve(conn, ids[0][:14])), ids[0])
        with self.assertRaisesRegex(HistoryError, "'previous': no run before .* selection 'set:other'"):
            store.resolve(conn, "previous")
        with self.assertRaisesRegex(HistoryError, "ambiguous"):
            store.resolve(conn, "000")
        with self.assertRaisesRegex(HistoryError, "no run matches 'zzz' \\(accepted: "):
            store.resolve(conn, "zzz")

    def test_empty_history(self):
        schema.open_db(self.db).close()
        with self.assertRaisesRegex(HistoryError, "holds no runs"):
            store.resolve(schema.open_db(self.db), "latest")


class CommandLine(Fixture):
    def test_exit_status_and_formats(self):
        self.add(0)
        self.add(1)
        rc, out, _ = run_cli("compare", "previous", "latest", "--db", self.db)
        self.assertEqual(rc, 0)
        self.assertIn("✅ no regression", out)
        self.add(2, factors={ROPE: 1.5})
        rc, out, _ = run_cli("compare", "previous", "latest", "--db", self.db, "--format", "json")
        self.assertEqual(rc, 1)
        data = json.loads(out)
        self.assertEqual(data["schema"], "posenc-history-compare-1")
        self.assertTrue(data["summary"]["regression"])
        reg = [c for c in data["comparisons"] if c["verdict"] == "regression" and c["gated"]]
        self.assertEqual([(c["benchmark"], c["kind"]) for c in reg], [(ROPE, "rmw")])
        self.assertLess(reg[0]["p"], 0.01)
        rc, out, _ = run_cli("compare", "previous", "latest", "--db", self.db, "--threshold", "0.6")
        self.assertEqual(rc, 0)

    def test_usage_errors_are_one_line_and_exit_2(self):
        self.add(0)
        cases = [("compare", "nope", "latest", "--db", self.db), ("compare", "latest", "--db", self.db),
                 ("compare", "previous", "latest", "--db", self.db), ("list", "--db", self.tmp / "missing.sqlite"),
                 ("import", self.tmp / "no-such-dir", "--db", self.db), ("compare", "a", "b", "--alpha", "1.5"),
                 ("frobnicate",), ()]
        for argv in cases:
            rc, out, err = run_cli(*argv)
            self.assertEqual(rc, 2, argv)
            self.assertEqual(len(err.strip().splitlines()), 1, (argv, err))
            self.assertTrue(err.startswith("history.py: error: "), err)
            self.assertNotIn("Traceback", err)

    def test_unreadable_or_empty_results(self):
        empty = self.tmp / "empty"
        empty.mkdir()
        broken = self.tmp / "broken"
        broken.mkdir()
        (broken / "bench-auto.json").write_text("{not json")
        bad_run = self.tmp / "bad-run"
        write_run(bad_run, 5)
        (bad_run / "run.json").write_text("[1, 2]")
        for d, words in ((empty, "holds none of run.json"), (broken, "nothing readable to import: bench-auto.json"),
                         (bad_run, "run.json: top level is list")):
            rc, _, err = run_cli("import", d, "--db", self.db)
            self.assertEqual(rc, 2, d)
            self.assertIn(words, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        rc, _, err = run_cli("list", "--db", self.db)
        self.assertEqual(rc, 2)
        self.assertIn("holds no runs yet", err)

    def test_allow_missing_base(self):
        self.add(0)
        rc, out, _ = run_cli("compare", "previous", "latest", "--db", self.db, "--allow-missing-base")
        self.assertEqual(rc, 0)
        self.assertIn("nothing to compare", out)

    def test_list_and_changes(self):
        for i in range(8):
            self.add(i, factors={TABLE: 1.0 if i < 4 else 2.0})
        rc, out, _ = run_cli("list", "--db", self.db, "--format", "json")
        runs = json.loads(out)["runs"]
        self.assertEqual([r["run_id"][:4] for r in runs], ["0007", "0006", "0005", "0004", "0003", "0002", "0001",
                                                           "0000"])
        rc, out, _ = run_cli("changes", "--db", self.db, "--filter", "exact_f32", "--format", "json")
        series = json.loads(out)["series"]
        self.assertEqual(len(series), 1)
        self.assertEqual([cp["run_id"][:4] for cp in series[0]["change_points"]], ["0004"])

    def test_environment_names_the_database(self):
        import os
        from unittest import mock
        self.add(0)
        with mock.patch.dict(os.environ, {cli.DB_ENV: str(self.db)}):
            rc, out, _ = run_cli("list")
        self.assertEqual(rc, 0)
        self.assertIn("0000abcdef01", out)


class ImportGit(TempDir):
    def git(self, *args):
        subprocess.run(["git", "-C", str(self.repo), *args], check=True, capture_output=True,
                       env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(self.tmp)})

    def test_every_committed_version_is_imported_once(self):
        self.repo = self.tmp / "repo"
        data = self.repo / importer.GIT_DATA_DIR
        self.repo.mkdir()
        self.git("init", "-q")
        ids = []
        for i in range(3):
            ids.append(write_run(data, i)[1])
            (self.repo / "other.txt").write_text(str(i))
            self.git("add", "-A")
            self.git("commit", "-q", "-m", f"run {i}")
        (self.repo / "other.txt").write_text("unrelated")
        self.git("commit", "-q", "-am", "unrelated")
        rc, out, err = run_cli("import-git", "--repo", self.repo, "--db", self.db)
        self.assertEqual(rc, 0, err)
        self.assertIn("3 of 3 committed versions", out)
        conn = schema.open_db(self.db)
        self.assertEqual([r["run_id"] for r in store.list_runs(conn)], ids[::-1])
        self.assertTrue(store.list_runs(conn)[0]["source"].startswith("git:"))
        rc, out, _ = run_cli("import-git", "--repo", self.repo, "--db", self.db)
        self.assertIn("0 of 3", out)

    def test_not_a_repository(self):
        rc, _, err = run_cli("import-git", "--repo", self.tmp, "--db", self.db)
        self.assertEqual(rc, 2)
        self.assertIn("git rev-parse", err)


if __name__ == "__main__":
    unittest.main()
