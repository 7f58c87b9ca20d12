"""Series over the history and their change points: a kernel's ratio to an in-run baseline across all runs
(the baseline cancels the machine, so ratios from different machines share one series), a benchmark's absolute
time on one machine fingerprint, a budget row's measured ÷ bound. Each point is one run: the median of the
run's per-repetition values, with a bootstrap 95 % band of that median (stats.median_band). Change points are
E-Divisive's on the log of the values (a step is a ratio, the same for a 10 µs and a 10 ms benchmark)."""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from . import changepoints, stats, store

KIND_TEXT = {"bandwidth": "streaming store", "rmw": "read-modify-write", "plainloop": "plain loop",
             "sgemm": "sgemm"}


@dataclass
class Series:
    label: str                        # what it is, for people
    what: str                         # ratio | time | budget
    key: tuple                        # (file, name, kind) | (file, name, fingerprint) | (row id,)
    points: list = field(default_factory=list)   # [{"run", "run_id", "commit", "started", "value", "lo", "hi"}]
    change_points: list = field(default_factory=list)   # [{"index", "run_id", "commit", "before", "after", "p"}]
    worse_when_larger: bool = False


def _commit(row) -> str:
    return (row["commit_sha"] or "unknown")[:7] + ("+dirty" if row["dirty"] else "")


def _point(row, value, band) -> dict:
    lo, hi = band if band else (None, None)
    return {"run": row["run"], "run_id": row["run_id"], "commit": _commit(row), "started": row["started"],
            "value": value, "lo": lo, "hi": hi}


def _from_samples(rows: list) -> list:
    out = []
    for row in rows:
        samples = [v for v in row["samples"] if v and v > 0]
        value = statistics.median(samples) if samples else row["value"]
        if value is None or not value > 0:
            continue
        out.append(_point(row, value, stats.median_band(samples)))
    return out


def ratio_series(conn, file: str, kernel: str, kind: str) -> Series:
    s = Series(f"{kernel} ÷ {KIND_TEXT.get(kind, kind)}", "ratio", (file, kernel, kind))
    s.points = _from_samples(store.ratio_series(conn, file, kernel, kind))
    return s


def time_series(conn, file: str, name: str, fingerprint_id: str) -> Series:
    s = Series(f"{name} time in s (machine {fingerprint_id})", "time", (file, name, fingerprint_id),
               worse_when_larger=True)
    s.points = _from_samples(store.time_series(conn, file, name, fingerprint_id))
    return s


def budget_series(conn, row_id: str) -> Series:
    s = Series(f"{row_id}: measured ÷ bound", "budget", (row_id,), worse_when_larger=True)
    for row in store.budget_series(conn, row_id):
        m, b = row["measured"], row["bound"]
        if isinstance(m, (int, float)) and isinstance(b, (int, float)) and b > 0:
            s.points.append(_point(row, m / b, None))
    return s


def detect(series: Series, min_size: int = changepoints.DEFAULT_MIN_SIZE,
           sig_level: float = changepoints.DEFAULT_SIG, permutations: int = changepoints.DEFAULT_PERMUTATIONS) -> Series:
    """Fill series.change_points (E-Divisive on log values; budget rows, which can be 0, on the values)."""
    values = np.array([p["value"] for p in series.points], dtype=float)
    if values.size < 2 * min_size:
        return series
    z = values if series.what == "budget" else np.log(values)
    res = changepoints.e_divisive(z, sig_level=sig_level, permutations=permutations, min_size=min_size)
    for (s, e), (s2, e2) in zip(changepoints.segments(values.size, res.change_points)[:-1],
                                changepoints.segments(values.size, res.change_points)[1:]):
        before, after = float(np.median(values[s:e])), float(np.median(values[s2:e2]))
        first = series.points[s2]
        series.change_points.append({"index": s2, "run_id": first["run_id"], "commit": first["commit"],
                                     "started": first["started"], "before": before, "after": after,
                                     "change": after / before - 1 if before else math.inf,
                                     "p": res.p_values.get(s2)})
    return series


def worse(series: Series, cp: dict) -> bool:
    return cp["after"] > cp["before"] if series.worse_when_larger else cp["after"] < cp["before"]


def all_series(conn, ratios: bool = True, budget: bool = True, times: bool = False, name_filter=None) -> list:
    """Every ratio series (across machines), budget row and, with `times`, absolute-time series (per machine)."""
    out = []
    if ratios:
        out += [ratio_series(conn, *k) for k in store.ratio_keys(conn) if not name_filter or name_filter(k[1])]
    if times:
        out += [time_series(conn, *k) for k in store.time_keys(conn) if not name_filter or name_filter(k[1])]
    if budget:
        out += [budget_series(conn, k) for k in store.budget_keys(conn) if not name_filter or name_filter(k)]
    return out


def what_changed(series_list: list) -> list:
    """[(first run after the change: {"run_id", "commit", "started"}, [(series, change point)])], oldest first."""
    by_run = defaultdict(list)
    runs = {}
    for s in series_list:
        for cp in s.change_points:
            by_run[cp["run_id"]].append((s, cp))
            runs[cp["run_id"]] = {"run_id": cp["run_id"], "commit": cp["commit"], "started": cp["started"]}
    order = sorted(by_run, key=lambda r: (runs[r]["started"], r))
    return [(runs[r], sorted(by_run[r], key=lambda x: x[0].label)) for r in order]
