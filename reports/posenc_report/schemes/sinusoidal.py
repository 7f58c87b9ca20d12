"""Report module of the sinusoidal scheme: its speed headline, and pictures that let a reader see the encoding
and its seed claims — the PE heatmap, PE(t)·PE(t+k) against k, the same through a random linear map, the
presets' frequencies.

The figures' tables come from the posenc CLI when one is given, else they are computed here in double precision
from the defining formulas (CONVENTIONS.md §2.1); the captions and ctx.figure_notes say which."""
from __future__ import annotations

import json
import functools
import math
import random
import subprocess

from .. import md
from ..gnuplot import DIVERGING_PALETTE, Plot, Series

SCHEME = "sinusoidal"

# The overview's "speed vs limit": the exact f32 table at its largest size (DRAM) against the streaming store
# of the same bytes — how close the kernel gets to the memory limit.
HEADLINE_KERNELS = (
    {"family": "table", "variant": "exact_f32", "baseline": "bandwidth",
     "what": "exact f32 table at its largest (DRAM) size vs the streaming store of the same bytes"},
)

# --- figure data: CLI or Python ----------------------------------------------------------------------------

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


@functools.lru_cache(maxsize=None)
def random_matrix(dim: int, seed: int) -> tuple:
    """dim×dim matrix with iid N(0, 1/dim) entries; Python's Mersenne Twister with a fixed seed, so the
    figure is the same on every run."""
    rng = random.Random(seed)
    sd = 1.0 / math.sqrt(dim)
    return tuple(tuple(rng.gauss(0.0, sd) for _ in range(dim)) for _ in range(dim))


@functools.lru_cache(maxsize=4096)
def _times(dim: int, seed: int, v: tuple) -> tuple:
    """W v for W = random_matrix(dim, seed), each entry a correctly rounded dot product (kept: the report's tests
    build the same figures many times in one process)."""
    return tuple(dot(wi, v) for wi in random_matrix(dim, seed))


def bilinear(u: list, seed: int, v: list) -> float:
    """u^T W v, W = random_matrix(len(u), seed)."""
    return math.fsum(ui * wv for ui, wv in zip(u, _times(len(u), seed, tuple(v))))


# --- the figures -------------------------------------------------------------------------------------

DIM = 128                 # the seed posts' heatmap: 50 positions x 128 dims
HEAT_POSITIONS = 50
TABLE_POSITIONS = 256     # positions 0..255 cover t ± 50 for the t values below
T_VALUES = (60, 120, 200)
K_RANGE = range(-50, 51)
W_SEEDS = (1, 2, 3)
W_T = 120
CLAIMS_LINK = "[claims](claims.md#scheme-sinusoidal)"


def _heatmap(ctx, rows: list, source: str) -> tuple:
    heat = rows[:HEAT_POSITIONS]
    plot = Plot(name="fig-pe-heatmap", title=f"Sinusoidal PE (vaswani), {HEAT_POSITIONS} positions x {DIM} dims",
                xlabel="dimension i (interleaved: even = sin, odd = cos)", ylabel="position p",
                series=[Series("", heat, "image", matrix=True)], size=(800, 420),
                xrange=(-0.5, DIM - 0.5), yrange=(HEAT_POSITIONS - 0.5, -0.5),
                extra=[DIVERGING_PALETTE, "set cbrange [-1:1]", "set cblabel 'PE(p, i)'"], key="off")
    lo, hi = min(min(r) for r in heat), max(max(r) for r in heat)
    norm_err = max(abs(dot(r, r) - DIM / 2) for r in heat)
    cap = (f"**(a) The encoding.** PE(p, i) for p = 0..{HEAT_POSITIONS - 1}, d = {DIM} (paper frequencies, "
           f"interleaved sin/cos), the picture of seed 001. Claims illustrated: values in [−1, 1] (here "
           f"{lo:.6f} … {hi:.6f}); ‖PE(p)‖² = d/2 (largest |‖PE(p)‖² − {DIM // 2}| over these rows: "
           f"{md.num(norm_err)}); low dimensions oscillate fast, high dimensions barely move over 50 positions. "
           f"Data: {source}. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "PE heatmap"), cap


def _dot_vs_k(ctx, rows: list, source: str) -> tuple:
    w = frequencies("vaswani", DIM)
    closed = [(k, math.fsum(math.cos(k * wi) for wi in w)) for k in K_RANGE]
    series = [Series("closed form Σ cos(k ω_i)", closed, "lines lw 2", colour="#999999")]
    worst = 0.0
    # Different point shapes and sizes, so that all t stay visible where they coincide (which is the point).
    for t, style in zip(T_VALUES, ("points pt 6 ps 1.3", "points pt 2 ps 0.9", "points pt 1 ps 0.7")):
        pts = [(k, dot(rows[t], rows[t + k])) for k in K_RANGE]
        worst = max(worst, max(abs(y - c) for (_, y), (_, c) in zip(pts, closed)))
        series.append(Series(f"PE({t})·PE({t}+k)", pts, style))
    plot = Plot(name="fig-dot-vs-k", title=f"PE(t)·PE(t+k) against k, d = {DIM}", xlabel="offset k",
                ylabel="dot product", series=series, key="inside top right")
    cap = (f"**(b) Relative position through the dot product.** PE(t)·PE(t+k) for t = "
           f"{', '.join(map(str, T_VALUES))} lies on one curve, the closed form Σ cos(k·ω_i): the product depends "
           f"on k only, not on t, and is symmetric in k, so it cannot tell left from right (seed 003). Largest "
           f"deviation from the closed form over the points shown: {md.num(worst)}. Peak d/2 = {DIM // 2} at "
           f"k = 0 is ‖PE‖². Data: {source}. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "dot product vs k"), cap


def _bilinear_vs_k(ctx, rows: list, source: str) -> list:
    base = [(k, dot(rows[W_T], rows[W_T + k])) for k in K_RANGE]
    series = [Series(f"PE({W_T})·PE({W_T}+k)", base, "points pt 7 ps 0.6", colour="#0072B2")]
    colours = ("#009E73", "#D55E00", "#CC79A7")
    for seed, colour in zip(W_SEEDS, colours):
        pts = [(k, bilinear(rows[W_T], seed, rows[W_T + k])) for k in K_RANGE]
        series.append(Series(f"PE({W_T})ᵀ W_{seed} PE({W_T}+k)", pts, "points pt 5 ps 0.5", colour=colour))
    plot1 = Plot(name="fig-dot-random-w", title=f"Through a random linear map: PE_t^T W PE_(t+k), d = {DIM}",
                 xlabel="offset k", ylabel="value", series=series, key="inside top right")
    cap1 = (f"**(c) The pattern does not survive a random linear map.** Blue: PE(t)·PE(t+k) at t = {W_T}; "
            f"others: PE_tᵀ W PE_(t+k) with W of iid N(0, 1/d) entries ({len(W_SEEDS)} matrices, Python "
            f"random seeds {', '.join(map(str, W_SEEDS))}). The clean peak at k = 0 and the symmetric decay are "
            "gone — what attention sees is PE_tᵀ W_qᵀ W_k PE_(t+k), and the relative-position signal depends on "
            f"what W learns (seed 003, after TENER). Data: {source}.")
    seed = W_SEEDS[0]
    series2 = [Series(f"t = {t}", [(k, bilinear(rows[t], seed, rows[t + k])) for k in K_RANGE],
                      "linespoints pt 7 ps 0.4") for t in T_VALUES]
    plot2 = Plot(name="fig-random-w-vs-t", title=f"PE_t^T W_{seed} PE_(t+k) for several t", xlabel="offset k",
                 ylabel="value", series=series2, key="inside top right")
    cap2 = (f"**(c′) …and it depends on t again.** The same bilinear form with one W (seed {seed}) for t = "
            f"{', '.join(map(str, T_VALUES))}: unlike (b), the curves differ, so PE_tᵀ W PE_(t+k) is not a "
            f"function of k alone. Data: {source}.")
    return [(ctx.renderer.image(plot1, "dot product through random W"), cap1),
            (ctx.renderer.image(plot2, "random W for several t"), cap2)]


def _frequencies(ctx) -> tuple:
    series = []
    for preset, style in (("vaswani", "lines lw 3"), ("marian", "lines lw 1.5"), ("tensor2tensor", "lines lw 3"),
                          ("fairseq", "lines lw 1.5")):
        w = frequencies(preset, DIM)
        series.append(Series(preset, list(enumerate(w)), style, dashed=preset in ("marian", "fairseq")))
    plot = Plot(name="fig-preset-frequencies", title=f"Frequencies ω_k of the sinusoidal presets, d = {DIM}",
                xlabel="pair index k", ylabel="ω_k (rad / position, log scale)", series=series, logy=10,
                key="inside top right")
    h = DIM // 2
    cap = (f"**(d) The presets disagree on frequencies.** Paper (vaswani, marian): ω_k = 10000^(−2k/d), last "
           f"ω = 10000^(−{h - 1}/{h}) = {frequencies('vaswani', DIM)[-1]:.4g}; tensor2tensor and fairseq: "
           f"ω_k = 10000^(−k/(h−1)), last ω = 1e-4 exactly. Presets with the same frequencies (dashed over "
           "solid) differ only in layout (interleaved vs [sin|cos] halves) and first position (fairseq starts at "
           "padding_idx + 1). Computed in Python from the formulas of CONVENTIONS.md §2.1, so a reader can check "
           "the library's preset table against them.")
    return ctx.renderer.image(plot, "preset frequencies"), cap


def _frequency_ratio(ctx) -> tuple:
    series = []
    for d in (16, 128, 512):
        paper, t2t = frequencies("vaswani", d), frequencies("tensor2tensor", d)
        h = d // 2
        series.append(Series(f"d = {d}", [(k / (h - 1), b / a) for k, (a, b) in enumerate(zip(paper, t2t))],
                             "linespoints pt 7 ps 0.4"))
    plot = Plot(name="fig-preset-frequency-ratio", title="tensor2tensor / fairseq frequencies relative to the paper's",
                xlabel="relative pair index k / (h - 1)", ylabel="ω_k(t2t, fairseq) / ω_k(paper)", series=series,
                key="inside bottom left")
    cap = ("**(d′) How far apart.** ω_k(t2t) / ω_k(paper) = 10000^(−k/(h(h−1))): equal for the first pair, "
           "then falling to 10000^(−1/h) for the last ("
           + ", ".join(f"{10000.0 ** (-2.0 / d):.3g} at d = {d}" for d in (16, 128, 512)) + "). A model "
           "trained with one convention and served with the other sees every position at the wrong angle in all "
           "but the first pair — why the preset is part of the spec (DESIGN §2). Computed in Python.")
    return ctx.renderer.image(plot, "frequency ratio"), cap


def figures(ctx) -> list:
    src = TableSource(ctx.cli)
    rows = src.table("vaswani", DIM, 0, TABLE_POSITIONS)
    source = src.source_of("vaswani", DIM, 0, TABLE_POSITIONS)
    ctx.figure_notes += [
        ("figure data", md.cell(source) if src.cli and src.cli_error is None else
         f"Python (math.sin/cos, double): {md.cell(src.cli_error)}"),
        ("random W", f"iid N(0, 1/{DIM}), Python `random.Random(seed).gauss`, seeds {', '.join(map(str, W_SEEDS))}")]
    return [_heatmap(ctx, rows, source), _dot_vs_k(ctx, rows, source), *_bilinear_vs_k(ctx, rows, source),
            _frequencies(ctx), _frequency_ratio(ctx)]
