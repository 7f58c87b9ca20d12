"""The database: schema and migrations, refusing foreign / newer / damaged files, idempotent imports, one
transaction per run (an exception or SIGKILL mid-import leaves the database as it was)."""
import os
import signal
import sqlite3
import subprocess
import sys
import unittest
from unittest import mock

from helpers import ROOT, TempDir, write_run

from posenc_history import importer, schema, store
from posenc_history.errors import HistoryError

HISTORY = str(ROOT / "scripts" / "history.py")


def counts(db) -> dict:
    conn = sqlite3.connect(str(db))
    try:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in schema.TABLES}
    finally:
        conn.close()


class Schema(TempDir):
    def test_new_database_has_current_version_and_owner(self):
        conn = schema.open_db(self.db)
        self.assertEqual(conn.execute("PRAGMA user_version").fetchone()[0], schema.version())
        self.assertEqual(conn.execute("SELECT value FROM meta WHERE key='application'").fetchone()[0],
                         schema.APPLICATION)
        self.assertEqual(set(schema.TABLES) - set(schema._user_tables(conn)), set())

    def test_missing_database_is_not_created_for_reading(self):
        with self.assertRaisesRegex(HistoryError, "no history database"):
            schema.open_db(self.db, create=False)
        self.assertFalse(self.db.exists())

    def test_forward_migration_keeps_data(self):
        conn = schema.open_db(self.db)
        importer.import_dir(conn, write_run(self.tmp / "r0", 0)[0])
        conn.close()
        v2 = "ALTER TABLE runs ADD COLUMN note TEXT;"
        with mock.patch.object(schema, "MIGRATIONS", [*schema.MIGRATIONS, v2]):
            conn = schema.open_db(self.db)
            self.assertEqual(conn.execute("PRAGMA user_version").fetchone()[0], 2)
            self.assertEqual(conn.execute("SELECT COUNT(*), MAX(note) FROM runs").fetchone(), (1, None))

    def test_failed_migration_leaves_previous_version(self):
        schema.open_db(self.db).close()
        with mock.patch.object(schema, "MIGRATIONS", [*schema.MIGRATIONS, "CREATE TABLE x (a); NOT SQL;"]):
            with self.assertRaisesRegex(HistoryError, "from version 1 to 2 failed.*left at version 1"):
                schema.open_db(self.db)
        conn = sqlite3.connect(str(self.db))
        self.assertEqual(conn.execute("PRAGMA user_version").fetchone()[0], schema.version())
        self.assertIsNone(conn.execute("SELECT name FROM sqlite_master WHERE name='x'").fetchone())

    def test_newer_version_is_refused(self):
        schema.open_db(self.db).close()
        conn = sqlite3.connect(str(self.db))
        conn.execute(f"PRAGMA user_version = {schema.version() + 1}")
        conn.close()
        with self.assertRaisesRegex(HistoryError, "newer than this code reads"):
            schema.open_db(self.db)

    def test_foreign_database_is_refused_and_untouched(self):
        conn = sqlite3.connect(str(self.db))
        conn.execute("CREATE TABLE accounts (id INTEGER, balance REAL)")
        conn.execute("INSERT INTO accounts VALUES (1, 2.5)")
        conn.commit()
        conn.close()
        before = self.db.read_bytes()
        with self.assertRaisesRegex(HistoryError, "not a posenc history.*accounts"):
            schema.open_db(self.db)
        self.assertEqual(self.db.read_bytes(), before)

    def test_not_a_database_is_refused(self):
        self.db.write_bytes(b"this is not SQLite" * 100)
        with self.assertRaisesRegex(HistoryError, "not a readable SQLite database"):
            schema.open_db(self.db)

    def test_damaged_pages_are_refused(self):
        conn = schema.open_db(self.db)
        for i in range(3):
            importer.import_dir(conn, write_run(self.tmp / f"r{i}", i)[0])
        conn.close()
        data = bytearray(self.db.read_bytes())
        page = 4096
        for off in range(2 * page, len(data) - page, 3 * page):    # overwrite the middle of several pages
            data[off + 100:off + 900] = b"\xff" * 800
        self.db.write_bytes(bytes(data))
        with self.assertRaisesRegex(HistoryError, "damaged|not a readable"):
            schema.open_db(self.db)


class Import(TempDir):
    def test_same_run_twice_is_already_imported(self):
        conn = schema.open_db(self.db)
        d, rid = write_run(self.tmp / "r0", 0)
        self.assertEqual(importer.import_dir(conn, d)[0], "imported")
        before = counts(self.db)
        self.assertEqual(importer.import_dir(conn, d)[0], "already imported")
        self.assertEqual(counts(self.db), before)
        self.assertEqual([r["run_id"] for r in store.list_runs(conn)], [rid])

    def test_same_run_id_with_other_files_keeps_the_first(self):
        conn = schema.open_db(self.db)
        importer.import_dir(conn, write_run(self.tmp / "r0", 0)[0])
        before = counts(self.db)
        status = importer.import_dir(conn, write_run(self.tmp / "r0", 0, seed=99)[0])[0]
        self.assertIn("differ", status)
        self.assertEqual(counts(self.db), before)

    def test_exception_mid_import_rolls_back_and_reimport_works(self):
        conn = schema.open_db(self.db)
        importer.import_dir(conn, write_run(self.tmp / "r0", 0)[0])
        before = counts(self.db)
        d, _ = write_run(self.tmp / "r1", 1)
        with mock.patch.dict(os.environ, {importer.FAIL_AFTER: "20"}):
            with self.assertRaisesRegex(RuntimeError, "test hook"):
                importer.import_dir(conn, d)
        self.assertEqual(counts(self.db), before)
        self.assertEqual(importer.import_dir(conn, d)[0], "imported")
        self.assertEqual(importer.import_dir(conn, d)[0], "already imported")
        self.assertEqual(len(store.list_runs(conn)), 2)

    def test_sigkill_mid_import_leaves_database_as_before(self):
        conn = schema.open_db(self.db)
        importer.import_dir(conn, write_run(self.tmp / "r0", 0)[0])
        conn.close()
        before = counts(self.db)
        d, rid = write_run(self.tmp / "r1", 1)
        env = {**os.environ, importer.PAUSE_AFTER: "25"}
        proc = subprocess.Popen([sys.executable, HISTORY, "import", str(d), "--db", str(self.db)], env=env,
                                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        try:
            line = proc.stderr.readline()
            self.assertIn("paused after 25 rows", line)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
            proc.stderr.close()
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        self.assertEqual(counts(self.db), before)         # the hot journal is rolled back on this open
        out = subprocess.run([sys.executable, HISTORY, "import", str(d), "--db", str(self.db)], capture_output=True,
                             text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(f"imported: {rid}", out.stdout)
        again = counts(self.db)
        out = subprocess.run([sys.executable, HISTORY, "import", str(d), "--db", str(self.db)], capture_output=True,
                             text=True)
        self.assertIn("already imported", out.stdout)
        self.assertEqual(counts(self.db), again)

    def test_every_repetition_and_ratio_sample_is_stored(self):
        conn = schema.open_db(self.db)
        _, pk, run = importer.import_dir(conn, write_run(self.tmp / "r0", 0, reps=7)[0])
        self.assertEqual(conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0], 7 * 5)
        loaded = store.load_run(conn, pk)
        table = next(b for b in loaded.benches if b.variant == "exact_f32")
        self.assertEqual(len(table.times), 7)
        kinds = {(r.kernel.split("/")[2], r.kind) for r in loaded.ratios}
        self.assertEqual(kinds, {("exact_f32", "bandwidth"), ("exact_halves_f32", "rmw")})
        self.assertTrue(all(len(r.samples) == 7 for r in loaded.ratios))
        self.assertEqual(loaded.benches, sorted(run.benches, key=lambda b: (b.file, b.name)))

    def test_no_transaction_left_open_after_imports(self):
        conn = schema.open_db(self.db)
        for i in range(3):
            importer.import_dir(conn, write_run(self.tmp / f"r{i}", i)[0])
        self.assertEqual(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0], 3)
        self.assertFalse(conn.in_transaction)


if __name__ == "__main__":
    unittest.main()
