"""Writing runs into the history: one transaction per run (an interrupted import — an exception, kill -9, power
loss — leaves the database as it was: SQLite rolls the journal back on the next open), idempotent by run id.

`import_git` seeds a history from every committed version of reports/latest/data/ (the main job's compact
results: run.json, bench-*.json, accuracy.json, proofs-*.json — the file names of out/results/)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import parse, schema
from .errors import HistoryError
from .model import RunData

GIT_DATA_DIR = "reports/latest/data"
# Test hooks (documented in README.md, "Tests"): after this many inserted rows, raise / stop and wait to be killed.
FAIL_AFTER = "POSENC_HISTORY_TEST_FAIL_AFTER_ROWS"
PAUSE_AFTER = "POSENC_HISTORY_TEST_PAUSE_AFTER_ROWS"


class _Rows:
    """Counts inserted rows; fires the test hooks."""

    def __init__(self, conn):
        self.conn, self.count = conn, 0
        self.fail = int(os.environ.get(FAIL_AFTER, "0") or 0)
        self.pause = int(os.environ.get(PAUSE_AFTER, "0") or 0)

    def insert(self, sql: str, values: tuple) -> int:
        cur = self.conn.execute(sql, values)
        self.count += 1
        if self.fail and self.count == self.fail:
            raise RuntimeError(f"test hook {FAIL_AFTER}={self.fail}: failing mid-import")
        if self.pause and self.count == self.pause:
            print(f"posenc-history: paused after {self.count} rows (test hook {PAUSE_AFTER})", file=sys.stderr,
                  flush=True)
            time.sleep(600)
        return cur.lastrowid


def _json(obj) -> str | None:
    return None if obj is None else json.dumps(obj, sort_keys=True)


def _machine(rows: _Rows, fp: str | None, fields: dict) -> None:
    if fp is None:
        return
    rows.insert("INSERT OR IGNORE INTO machines (fingerprint, fields, cpu, logical_cpus, memory_gib, blas_version, "
                "blas_core, blas_threads, omp_threads) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (fp, _json(fields), fields.get("cpu"), fields.get("logical_cpus"), fields.get("memory_gib"),
                 fields.get("blas_version"), fields.get("blas_core"), fields.get("blas_threads"),
                 fields.get("omp_threads")))


def _run_row(rows: _Rows, run: RunData) -> int:
    return rows.insert(
        "INSERT INTO runs (run_id, commit_sha, dirty, started, mode, selection, fingerprint, kernel, os, cpu_flags, "
        "compiler, compile_flags, build_type, environment, source, digest, run_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (run.run_id, run.commit, int(run.dirty), run.started, run.mode, run.selection, run.fingerprint,
         run.kernel, run.os, run.cpu_flags, run.compiler, run.compile_flags, run.build_type,
         _json(run.environment), run.source, run.digest, _json(run.run_json)))


def _benchmark_id(rows: _Rows, b) -> int:
    rows.insert("INSERT OR IGNORE INTO benchmarks (name, scheme, family, variant, dtype, threads, args, "
                "baseline_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (b.name, b.scheme, b.family, b.variant, b.dtype, b.threads, b.args_text, b.baseline_kind))
    return rows.conn.execute("SELECT id FROM benchmarks WHERE name = ?", (b.name,)).fetchone()[0]


def _benches(rows: _Rows, run: RunData, file_ids: dict) -> dict:
    ids = {}
    for b in run.benches:
        bid = ids[b.file, b.name] = _benchmark_id(rows, b)
        fid = file_ids[b.file]
        rows.insert("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?)",
                    (fid, bid, b.seconds, b.bytes_per_second, b.items_per_second, b.statistic))
        for s in b.samples:
            rows.insert("INSERT OR IGNORE INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (fid, bid, s["repetition"], s["real_time_s"], s["cpu_time_s"], s["iterations"],
                         s["bytes_per_second"], s["items_per_second"]))
    return ids


def _ratios(rows: _Rows, run: RunData, file_ids: dict, bench_ids: dict) -> None:
    for r in run.ratios:
        rid = rows.insert("INSERT INTO ratios (file, kernel, baseline, kind, value, how) VALUES (?, ?, ?, ?, ?, ?)",
                          (file_ids[r.file], bench_ids[r.file, r.kernel], bench_ids[r.file, r.baseline], r.kind,
                           r.value, r.how))
        for rep, value in sorted(r.samples.items()):
            if value is not None:
                rows.insert("INSERT INTO ratio_samples VALUES (?, ?, ?)", (rid, rep, value))


def _accuracy(rows: _Rows, run: RunData, file_ids: dict) -> None:
    for b in run.budget:
        rows.insert("INSERT OR IGNORE INTO budget VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (file_ids.get(b["file"]), b["row_id"], b["scheme"], b["quantity"], b["dtype"], b["regime"],
                     b["metric"], b["bound"], b["measured"], b["worst_input"], b["samples"], b["measured_by"]))
    for c in run.claims:
        rows.insert("INSERT OR IGNORE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (file_ids.get(c["file"]), c["claim_id"], c["scheme"], c["test"], c["status"], c["cases"],
                     c["budget_row"], c["bound"], c["max_error"], c["worst_input"]))


def _files(rows: _Rows, run: RunData, pk: int) -> dict:
    ids = {}
    for f in run.files:
        _machine(rows, f.fingerprint, f.machine)
        ids[f.name] = rows.insert("INSERT INTO files (run, name, kind, fingerprint, program_run, meta) "
                                  "VALUES (?, ?, ?, ?, ?, ?)",
                                  (pk, f.name, f.kind, f.fingerprint, f.program_run, _json(f.meta)))
    return ids


def existing(conn, run_id: str) -> tuple | None:
    return conn.execute("SELECT id, digest FROM runs WHERE run_id = ?", (run_id,)).fetchone()


def store(conn, run: RunData) -> tuple:
    """("imported" | "already imported" | "already imported (different files)", runs.id)."""
    found = existing(conn, run.run_id)
    if found:
        same = found[1] == run.digest
        return ("already imported" if same else "already imported (its files differ now; kept the first)",
                found[0])
    with schema.transaction(conn):
        rows = _Rows(conn)
        _machine(rows, run.fingerprint, run.machine)
        pk = _run_row(rows, run)
        file_ids = _files(rows, run, pk)
        bench_ids = _benches(rows, run, file_ids)
        _ratios(rows, run, file_ids, bench_ids)
        _accuracy(rows, run, file_ids)
    return "imported", pk


def import_dir(conn, directory, mode: str | None = None) -> tuple:
    run = parse.parse(directory, mode=mode)
    status, pk = store(conn, run)
    return status, pk, run


# --- git ------------------------------------------------------------------------------------------------------

def _git(repo: Path, *args) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    except OSError as e:
        raise HistoryError(f"cannot run git: {e}") from None
    if proc.returncode != 0:
        raise HistoryError(f"git {' '.join(args[:2])} failed in {repo}: "
                           f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    return proc.stdout


def _extract(repo: Path, commit: str, path: str, into: Path) -> None:
    names = _git(repo, "ls-tree", "--name-only", f"{commit}:{path}").split()
    for name in names:
        blob = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}/{name}"], capture_output=True)
        if blob.returncode == 0:
            (into / name).write_bytes(blob.stdout)


def git_versions(repo: Path, path: str = GIT_DATA_DIR) -> list:
    """[(commit, ISO commit date)] of the commits that changed `path`, oldest first."""
    _git(repo, "rev-parse", "--git-dir")
    out = _git(repo, "log", "--reverse", "--format=%H %cI", "--", path)
    return [tuple(line.split(" ", 1)) for line in out.splitlines() if line.strip()]


def import_git(conn, repo, mode: str | None = None, path: str = GIT_DATA_DIR) -> list:
    """Import every committed version of `path`; [(commit, status, run_id)]."""
    repo = Path(repo)
    out = []
    for commit, date in git_versions(repo, path):
        with tempfile.TemporaryDirectory(prefix="posenc-history-git-") as tmp:
            try:
                _extract(repo, commit, path, Path(tmp))
                run = parse.parse(tmp, mode=mode, source=f"git:{commit[:12]}:{path}", started_fallback=date)
            except HistoryError as e:
                out.append((commit, f"skipped: {e}", None))
                continue
            status, _ = store(conn, run)
            out.append((commit, status, run.run_id))
    return out
