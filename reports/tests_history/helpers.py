"""Fabricated results directories in the documented schemas (reports/README.md) for the history's tests."""
from __future__ import annotations

import json
import math
import random
import sys
import tempfile
import unittest
from pathlib import Path

REPORTS = Path(__file__).resolve().parent.parent
ROOT = REPORTS.parent
sys.path.insert(0, str(REPORTS))

MACHINE = {"cpu": "AMD EPYC 9B45", "logical_cpus": 2, "memory": "24604244 kB", "kernel": "6.1.0-27-cloud-amd64",
           "os": "Debian GNU/Linux 12 (bookworm)", "openblas_package": "0.3.21+ds-4"}
TABLE = "sinusoidal/table/exact_f32/L:32768/d:4096/threads:1"
STORE = "sinusoidal/table/stream_store/L:32768/d:4096/threads:1"
ROPE = "rope/apply/exact_halves_f32/T:32768/heads:32/head_dim:128/threads:1"
RMW = "rope/apply/rmw_f32/T:32768/heads:32/head_dim:128/threads:1"
LONE = "learned/ids/arange/L:1048576"                  # a kernel without any in-run baseline
BASE_US = {TABLE: 40000.0, STORE: 22000.0, ROPE: 60000.0, RMW: 50000.0, LONE: 900.0}
BYTES = {TABLE: 2 ** 29, STORE: 2 ** 29, ROPE: 2 ** 30, RMW: 2 ** 30, LONE: 2 ** 23}


def bench_entries(name, us, reps, rng, cv=0.02, aggregates=True):
    out, times = [], []
    for i in range(reps):
        t = us * math.exp(rng.gauss(0.0, cv))
        times.append(t)
        out.append({"name": name, "run_name": name, "run_type": "iteration", "repetitions": reps,
                    "repetition_index": i, "threads": 1, "iterations": 10, "real_time": t, "cpu_time": t,
                    "time_unit": "us", "bytes_per_second": BYTES[name] / (t * 1e-6),
                    "items_per_second": BYTES[name] / 4 / (t * 1e-6)})
    if aggregates:
        med = sorted(times)[len(times) // 2]
        out.append({"name": name + "_median", "run_name": name, "run_type": "aggregate", "aggregate_name": "median",
                    "repetitions": reps, "threads": 1, "iterations": reps, "real_time": med, "cpu_time": med,
                    "time_unit": "us", "bytes_per_second": BYTES[name] / (med * 1e-6),
                    "items_per_second": BYTES[name] / 4 / (med * 1e-6)})
    return out


def bench_json(run_id, commit, rng, factors=None, reps=5, core="SkylakeX", date="2026-11-01T10:00:00Z", cv=0.02):
    factors = factors or {}
    entries = []
    for name, us in BASE_US.items():
        entries += bench_entries(name, us * factors.get(name, 1.0), reps, rng, cv)
    ctx = {"posenc_run_id": run_id, "posenc_commit": commit, "blas_core": core, "blas_config": "OpenBLAS 0.3.21",
           "blas_threads": "1", "omp_threads": "2", "num_cpus": 2, "date": date, "compiler": "GNU 12.2.0",
           "flags": "-O3 -march=native", "build_type": "Release"}
    return {"context": ctx, "benchmarks": entries}


def accuracy_json(run_id, measured=0.25):
    return {"meta": {"run_id": run_id, "program": "posenc_accuracy_sweep"}, "budget": [
        {"id": "sinusoidal.table.f32", "scheme": "sinusoidal", "quantity": "table entry", "dtype": "f32",
         "regime": "exact", "metric": "err_S", "bound": 0.5, "measured_max": measured, "samples": 1000},
        {"id": "rope.cache.exact.f32.scaled", "scheme": "rope", "bound": 1.0, "measured_max": 0.3}]}


def proofs_json(run_id, status="passed", err=0.2):
    return {"meta": {"run_id": run_id, "program": "posenc_properties"}, "claims": [
        {"id": "SIN-ROT-1", "scheme": "sinusoidal", "test": "Sinusoidal.Shift", "status": status, "cases": 3000,
         "budget_row": "sinusoidal.shift.f32", "bound": 0.5, "max_error": err, "worst_input": "p=1"},
        {"id": "ROPE-1", "scheme": "rope", "test": "Rope.Cache", "status": "passed", "cases": 3000}]}


def write_run(directory, index, factors=None, reps=5, seed=None, mode="bench", selection_set="quick", core="SkylakeX",
              machine=None, measured=0.25, status="passed", run_json=True, commit=None, cv=0.02, env=None):
    """A results directory of run number `index` (its date is day `index` + 1); returns (dir, run_id)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed if seed is not None else index)
    commit = commit or f"{index:04d}abcdef01"
    date = f"2026-11-{index + 1:02d}T10:00:00Z"
    run_id = f"{commit}@{date}"
    (directory / "bench-auto.json").write_text(json.dumps(bench_json(run_id, commit, rng, factors, reps, core, date,
                                                                      cv)))
    (directory / "accuracy.json").write_text(json.dumps(accuracy_json(run_id, measured)))
    (directory / "proofs-properties.json").write_text(json.dumps(proofs_json(run_id, status)))
    if run_json:
        run = {"run_id": run_id, "commit": commit, "started": date, "mode": mode, "set": selection_set,
               "machine": machine or MACHINE, "environment": env or {}}
        (directory / "run.json").write_text(json.dumps(run))
    return directory, run_id


class TempDir(unittest.TestCase):
    """A temporary directory per test (self.tmp) and a history path in it (self.db)."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="posenc-history-test-")
        self.tmp = Path(self._tmp.name)
        self.db = self.tmp / "history.sqlite"

    def tearDown(self):
        self._tmp.cleanup()
