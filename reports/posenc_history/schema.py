"""The history database: its schema, forward migrations, and the checks made before any use.

Versioning: `PRAGMA user_version` holds the schema version; MIGRATIONS[v] takes a database from version v to
v + 1, each in its own transaction, so an interrupted upgrade leaves the previous version intact. A database is
refused (HistoryError, nothing written) when its version is newer than this code knows, when it holds tables
but is not a posenc history (no `meta` row application = posenc-history), or when SQLite cannot read it.
The tables are described in README.md ("Schema")."""
from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from .errors import HistoryError

APPLICATION = "posenc-history"

V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE machines (
  fingerprint TEXT PRIMARY KEY,          -- hash of `fields`
  fields      TEXT NOT NULL,             -- canonical JSON of the fields that make absolute times comparable
  cpu TEXT, logical_cpus INTEGER, memory_gib INTEGER, blas_version TEXT, blas_core TEXT,
  blas_threads INTEGER, omp_threads INTEGER);
CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  run_id      TEXT NOT NULL UNIQUE,
  commit_sha  TEXT,                      -- as recorded, without "+dirty"
  dirty       INTEGER NOT NULL DEFAULT 0,
  started     TEXT NOT NULL,             -- ISO 8601 UTC; runs are ordered by (started, id)
  mode        TEXT,                      -- default | long | bench | what `import --mode` said
  selection   TEXT NOT NULL DEFAULT 'all', -- all | set:<name> | filter:<regex>
  fingerprint TEXT REFERENCES machines(fingerprint),
  kernel TEXT, os TEXT, cpu_flags TEXT, compiler TEXT, compile_flags TEXT, build_type TEXT,
  environment TEXT,                      -- JSON: settings that change what runs (POSENC_DISABLE_AVX512, ...)
  source      TEXT NOT NULL,             -- results directory, or git:<commit>:<path>
  digest      TEXT NOT NULL,             -- sha256 of the imported files (name + bytes)
  run_json    TEXT);                     -- run.json as it was, or NULL
CREATE TABLE files (
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL REFERENCES runs(id),
  name TEXT NOT NULL,                    -- file stem: bench-auto, proofs-properties, accuracy
  kind TEXT NOT NULL,                    -- bench | proofs | accuracy
  fingerprint TEXT REFERENCES machines(fingerprint),
  program_run TEXT,                      -- the run id recorded in the file's own meta / context
  meta TEXT,                             -- JSON: meta block or benchmark context
  UNIQUE (run, name));
CREATE TABLE benchmarks (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,             -- the full name, e.g. sinusoidal/table/exact_f32/L:512/d:64/threads:1
  scheme TEXT, family TEXT, variant TEXT, dtype TEXT, threads INTEGER,
  args TEXT NOT NULL,                    -- key:value/key:value (dtype and threads included when named)
  baseline_kind TEXT);                   -- bandwidth | rmw | plainloop | sgemm for a baseline, NULL for a kernel
CREATE TABLE results (                   -- what the report shows for a benchmark of a file (posenc_report.bench)
  file INTEGER NOT NULL REFERENCES files(id),
  benchmark INTEGER NOT NULL REFERENCES benchmarks(id),
  seconds REAL, bytes_per_second REAL, items_per_second REAL, statistic TEXT,
  PRIMARY KEY (file, benchmark));
CREATE TABLE samples (                   -- every repetition (Google Benchmark run_type "iteration")
  file INTEGER NOT NULL REFERENCES files(id),
  benchmark INTEGER NOT NULL REFERENCES benchmarks(id),
  repetition INTEGER NOT NULL,
  real_time_s REAL, cpu_time_s REAL, iterations INTEGER, bytes_per_second REAL, items_per_second REAL,
  PRIMARY KEY (file, benchmark, repetition));
CREATE TABLE ratios (                    -- a kernel against one in-run baseline
  id INTEGER PRIMARY KEY,
  file INTEGER NOT NULL REFERENCES files(id),
  kernel INTEGER NOT NULL REFERENCES benchmarks(id),
  baseline INTEGER NOT NULL REFERENCES benchmarks(id),
  kind TEXT NOT NULL,
  value REAL,                            -- posenc_report.bench.ratio of the reported (median) records
  how TEXT,                              -- bytes/s | items/s | time
  UNIQUE (file, kernel, kind));
CREATE TABLE ratio_samples (             -- the same ratio per repetition index
  ratio INTEGER NOT NULL REFERENCES ratios(id),
  repetition INTEGER NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (ratio, repetition));
CREATE TABLE budget (                    -- accuracy budget rows with the properties' measurements folded in
  file INTEGER NOT NULL REFERENCES files(id),
  row_id TEXT NOT NULL, scheme TEXT, quantity TEXT, dtype TEXT, regime TEXT, metric TEXT,
  bound REAL, measured REAL, worst_input TEXT, samples INTEGER, measured_by TEXT,
  PRIMARY KEY (file, row_id));
CREATE TABLE claims (
  file INTEGER NOT NULL REFERENCES files(id),
  claim_id TEXT NOT NULL, scheme TEXT, test TEXT, status TEXT, cases INTEGER,
  budget_row TEXT, bound REAL, max_error REAL, worst_input TEXT,
  PRIMARY KEY (file, claim_id));
CREATE INDEX runs_order ON runs (started, id);
CREATE INDEX files_run ON files (run);
CREATE INDEX samples_benchmark ON samples (benchmark);
CREATE INDEX ratios_kernel ON ratios (kernel);
"""

MIGRATIONS = [V1]           # MIGRATIONS[v]: version v -> v + 1
TABLES = ("meta", "machines", "runs", "files", "benchmarks", "results", "samples", "ratios", "ratio_samples",
          "budget", "claims")


def version() -> int:
    return len(MIGRATIONS)


def _connect(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(str(path), isolation_level=None)
    except sqlite3.Error as e:
        raise HistoryError(f"cannot open history database {path}: {e}") from None
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _user_tables(conn) -> list:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                        "ORDER BY name").fetchall()
    return [r[0] for r in rows]


def _check_owner(conn, path: Path, tables: list) -> None:
    if not tables:
        return
    owner = None
    if "meta" in tables:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
            owner = row[0] if row else None
        except sqlite3.Error:
            owner = None
    if owner != APPLICATION:
        shown = ", ".join(tables[:6]) + (", …" if len(tables) > 6 else "")
        raise HistoryError(f"{path} is an SQLite database but not a posenc history (it holds tables {shown}); "
                           "give a new or existing history file with --db")


def _check_version(conn, path: Path) -> int:
    v = conn.execute("PRAGMA user_version").fetchone()[0]
    if v > version():
        raise HistoryError(f"{path} has history schema version {v}, newer than this code reads (up to "
                           f"{version()}); use a newer posenc checkout, or another --db")
    return v


def migrate(conn, path: Path) -> None:
    """Apply the missing migrations, one transaction each; a failed one leaves the version before it."""
    v = _check_version(conn, path)
    for target in range(v, version()):
        try:
            with transaction(conn):
                for statement in _statements(MIGRATIONS[target]):
                    conn.execute(statement)
                if target == 0:
                    conn.execute("INSERT INTO meta (key, value) VALUES ('application', ?)", (APPLICATION,))
                conn.execute(f"PRAGMA user_version = {target + 1}")
        except sqlite3.Error as e:
            raise HistoryError(f"{path}: upgrading the history schema from version {target} to {target + 1} "
                               f"failed ({e}); the database was left at version {target}") from None


def _statements(script: str) -> list:
    """Split a migration script into statements (sqlite3.executescript would commit on its own)."""
    text = "\n".join(line.split("--", 1)[0] for line in script.splitlines())
    out, buf = [], ""
    for piece in text.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n;"):
                out.append(buf.strip())
            buf = ""
    if buf.strip(" \n;"):
        out.append(buf.strip())            # an unterminated tail: let SQLite report it
    return out


@contextlib.contextmanager
def transaction(conn):
    """BEGIN IMMEDIATE .. COMMIT; ROLLBACK on any exception (then re-raised)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def open_db(path, create: bool = True) -> sqlite3.Connection:
    """Open the history at `path` (a missing file is created only when `create`), upgrade its schema if it is
    older than this code's, and return the connection; HistoryError when it is not a usable history."""
    path = Path(path)
    if not path.exists():
        if not create:
            raise HistoryError(f"no history database at {path}; import a run first (history.py import DIR) "
                               "or give another --db / POSENC_HISTORY_DB")
        path.parent.mkdir(parents=True, exist_ok=True)
    elif path.is_dir():
        raise HistoryError(f"--db {path} is a directory; give the path of an SQLite file")
    conn = _connect(path)
    try:
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise HistoryError(f"{path} is a damaged SQLite database (quick_check: {check}); restore it from a "
                               "copy or start a new history with another --db")
        _check_owner(conn, path, _user_tables(conn))
        _check_version(conn, path)
        migrate(conn, path)
    except sqlite3.DatabaseError as e:
        conn.close()
        raise HistoryError(f"{path} is not a readable SQLite database ({e}); give another --db") from None
    except HistoryError:
        conn.close()
        raise
    return conn
