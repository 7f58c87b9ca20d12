"""Sinusoidal tables for the figures: from the posenc CLI when one is given, else computed here in double
precision from the defining formulas (CONVENTIONS.md §2.1). The caller is told which source was used."""
from __future__ import annotations

import json
import math
import random
import subprocess

PRESETS = ("vaswani", "marian", "tensor2tensor", "fairseq")


def frequencies(preset: str, dim: int, base: float = 10000.0) -> list:
    """omega_k, k = 0..h-1: paper base^(-2k/d) (vaswani, marian); t2t base^(-k/max(h-1,1));
    fairseq base^(-k/(h-1))."""
    h = dim // 2
    if preset in ("vaswani", "marian"):
        return [base ** (-2.0 * k / dim) for k in range(h)]
    if preset == "tensor2tensor":
        return [base ** (-k / max(h - 1, 1)) for k in range(h)]
    if preset == "fairseq":
        if h < 2:
            raise ValueError("fairseq needs dim >= 4")
        return [base ** (-k / (h - 1)) for k in range(h)]
    raise ValueError(f"unknown preset {preset!r}")


def row(preset: str, dim: int, p: int) -> list:
    w = frequencies(preset, dim)
    h = len(w)
    out = [0.0] * dim
    for k, wk in enumerate(w):
        s, c = math.sin(p * wk), math.cos(p * wk)
        if preset == "vaswani":
            out[2 * k], out[2 * k + 1] = s, c
        else:
            out[k], out[h + k] = s, c
    return out


def python_table(preset: str, dim: int, first: int, count: int) -> list:
    return [row(preset, dim, p) for p in range(first, first + count)]


def cli_table(cli: str, preset: str, dim: int, first: int, count: int, timeout: float = 60.0) -> list:
    """Rows for positions first..first+count-1 from `posenc table ... --format json`; raises RuntimeError with
    a one-line reason if the CLI is missing, fails, or prints something unexpected."""
    cmd = [cli, "table", "sinusoidal", "--preset", preset, "--dim", str(dim),
           "--positions", f"{first}:{first + count}", "--dtype", "f64", "--format", "json"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"could not run {cli}: {e}") from e
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"`{' '.join(cmd[1:])}` exited {proc.returncode}: {msg}")
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"CLI output is not JSON: {e}") from e
    rows = data.get("rows") if isinstance(data, dict) else data
    positions = data.get("positions") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == dim for r in rows):
        raise RuntimeError(f"CLI JSON has no list of {dim}-element rows")
    if isinstance(positions, list) and len(positions) == len(rows):
        by_pos = dict(zip(positions, rows))
        missing = [p for p in range(first, first + count) if p not in by_pos]
        if missing:
            raise RuntimeError(f"CLI output lacks position {missing[0]}")
        rows = [by_pos[p] for p in range(first, first + count)]
    elif len(rows) < count:
        raise RuntimeError(f"CLI returned {len(rows)} rows, expected {count}")
    return [[float(x) for x in r] for r in rows[:count]]


class TableSource:
    """Tables for the figures, from the CLI if it works, else Python; `description` says which."""

    def __init__(self, cli: str | None):
        self.cli = cli
        self.cli_error = None if cli else "no --cli given"
        self._cache: dict = {}

    def table(self, preset: str, dim: int, first: int, count: int) -> list:
        key = (preset, dim, first, count)
        if key not in self._cache:
            rows = None
            if self.cli and self.cli_error is None:
                try:
                    rows = cli_table(self.cli, preset, dim, first, count)
                except RuntimeError as e:
                    self.cli_error = str(e)
            self._cache[key] = (rows, "cli") if rows is not None else (python_table(preset, dim, first, count),
                                                                      "python")
        return self._cache[key][0]

    def source_of(self, preset: str, dim: int, first: int, count: int) -> str:
        self.table(preset, dim, first, count)
        if self._cache[(preset, dim, first, count)][1] == "cli":
            return f"the posenc CLI (`posenc table sinusoidal --preset {preset} --dtype f64`)"
        reason = self.cli_error or "no CLI"
        return f"Python's math.sin/cos in double precision from the paper's formula ({reason})"


def dot(a: list, b: list) -> float:
    return math.fsum(x * y for x, y in zip(a, b))


def random_matrix(dim: int, seed: int) -> list:
    """dim×dim matrix with iid N(0, 1/dim) entries; Python's Mersenne Twister with a fixed seed, so the
    figure is the same on every run."""
    rng = random.Random(seed)
    sd = 1.0 / math.sqrt(dim)
    return [[rng.gauss(0.0, sd) for _ in range(dim)] for _ in range(dim)]


def bilinear(u: list, w: list, v: list) -> float:
    """u^T W v."""
    return math.fsum(ui * dot(wi, v) for ui, wi in zip(u, w))
