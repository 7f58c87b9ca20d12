"""Report module of the rotary position embedding (rope): its speed headline, and figures of what a score sees —
⟨R(m)q, R(n)k⟩ against the distance n − m (relativity and the long-range decay), and the score error that
HF's and ggml's float32 arithmetic leaves at each distance in a 1M- and a 4K-token context (the precision loss a
porter of a long-context model meets), against posenc's exact regime; θ'_k / θ_k of every context-extension
scaling; the HF-vs-exact error of the cos/sin cache at every position up to 128k under Llama 3.1's and YaRN's
scalings; and (a table) the distances at which xPos' scale overflows float16 and float32.

Figures (a)-(c) come from the posenc CLI (`posenc scores rope`, f64 data: the regime's rotation is the only
difference between series; `posenc freqs rope`); without a CLI they are not drawn and the page says why. Figure
(d) reads rope-long-context.json from the results (scripts/rope_long_context.py, main job stage 5/9: it takes
~15 s, too long for report time); without it the page says "not run"."""
from __future__ import annotations

import json
import math
import os
import random
import struct
import subprocess
import tempfile
from pathlib import Path

from .. import md
from ..gnuplot import COLOURS, Plot, Series

SCHEME = "rope"

# benchmarks/rope_bench.cpp: apply/<variant>/T:/heads:/head_dim:/threads: (in place; baseline rmw_f32, the
# read-modify-write of the same bytes) and cache/<variant>/T:/w:/threads: (baseline stream_store_f32).
HEADLINE_KERNELS = (
    {"family": "apply", "variant": "exact_halves_f32", "baseline": "rmw",
     "what": "exact half-split f32 rotation at its largest (DRAM) size vs read-modify-write of the same bytes"},
    {"family": "cache", "variant": "exact_pairs_f32", "baseline": "bandwidth",
     "what": "exact f32 cos/sin cache (pairs form) at its largest (DRAM) size vs the streaming store"},
)

HEAD_DIM = 128
SEED = 20261124                      # Python's Mersenne Twister: the same q, k on every run
CONTEXT = (1 << 20) - 1              # the query's position for the error figure (a 1M-token context)
SHORT = 4095                         # ... and a 4K context, for comparison
CLAIMS_LINK = "[claims](claims.md#scheme-rope)"


def _write_npy(path: str, rows: int, cols: int, values: list) -> None:
    """A little-endian float64 .npy (version 1.0) of shape (rows, cols)."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%dd" % len(values), *values))


def _float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def unit_vectors(count: int, dim: int, seed: int) -> list:
    """`count` vectors of float32 numbers, iid N(0, 1) entries scaled to norm ~1 (fixed seed)."""
    rng = random.Random(seed)
    return [[_float32(rng.gauss(0.0, 1.0) / math.sqrt(dim)) for _ in range(dim)] for _ in range(count)]


def distances(limit: int) -> list:
    """0, 1, 2, ..., 15, then 12 points per octave (16 * 2^(i/12), rounded) and `limit` itself (increasing)."""
    out = list(range(0, 16)) + [limit]
    i = 0
    while 16 * 2 ** (i / 12) < limit:
        out.append(int(round(16 * 2 ** (i / 12))))
        i += 1
    return sorted(set(d for d in out if d <= limit))


class ScoresSource:
    """Scores ⟨R(m)q, R(n)k⟩ from `posenc scores rope` (f64 data); `error` says why not, once it failed."""

    def __init__(self, cli: str | None):
        self.cli = cli
        self.error = None if cli else "no --cli given"

    def scores(self, preset: str, regime: str, q: list, q_pos: int, keys: list, k_pos: list) -> list | None:
        if self.error:
            return None
        with tempfile.TemporaryDirectory() as tmp:
            qf, kf = os.path.join(tmp, "q.npy"), os.path.join(tmp, "k.npy")
            _write_npy(qf, 1, len(q), q)
            _write_npy(kf, len(keys), len(q), [v for k in keys for v in k])
            cmd = [self.cli, "scores", "rope", "--preset", preset, "--head-dim", str(len(q)), "--regime", regime,
                   "--q", qf, "--k", kf, "--q-positions", str(q_pos), "--k-positions", ",".join(map(str, k_pos)),
                   "--format", "json"]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as e:
                self.error = f"could not run {self.cli}: {e}"
                return None
        if proc.returncode != 0:
            msg = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
            self.error = f"`posenc scores rope --preset {preset} --regime {regime}` exited {proc.returncode}: {msg}"
            return None
        try:
            row = json.loads(proc.stdout)["scores"][0]
            return [float(v) for v in row]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            self.error = f"unexpected `posenc scores` output: {e}"
            return None


def _not_drawn(name: str, why: str) -> str:
    return f"*(plot `{name}` not drawn: {md.cell(why)})*"


def _score_vs_distance(ctx, src: ScoresSource) -> tuple:
    """(a): the score of q = k against the distance, for two query positions: one curve (relativity)."""
    q = unit_vectors(1, HEAD_DIM, SEED)[0]
    ds = distances(1 << 16)
    series, worst = [], 0.0
    first = None
    for m, style in ((0, "lines lw 3"), (100000, "points pt 7 ps 0.4")):
        row = src.scores("hf-llama", "exact", q, m, [q] * len(ds), [m + d for d in ds])
        if row is None:
            return _not_drawn("fig-rope-score-vs-distance", src.error), ""
        pts = list(zip(ds, row))
        if first is None:
            first = row
        else:
            worst = max(abs(a - b) for a, b in zip(first, row))
        series.append(Series(f"query at {m}, key at {m} + d", pts, style))
    plot = Plot(name="fig-rope-score-vs-distance", title=f"<R(m)q, R(m+d)q> against the distance d, d = {HEAD_DIM}",
                xlabel="distance d (log scale)", ylabel="score", series=series, logx=2,
                key="inside top right")
    cap = (f"**(a) Relative position and long-range decay.** The score ⟨R(m)q, R(m+d)q⟩ of one random unit vector "
           f"q (float32 numbers, Python seed {SEED}) with itself, hf-llama frequencies (θ_k = 10000^(−2k/{HEAD_DIM})), "
           f"exact regime: the curves for m = 0 and m = 100000 coincide (largest difference {md.num(worst)}), since "
           f"the score depends on d only (claim ROPE-REL-1), and its envelope decays with d (Su et al. 2021, §3.4.3). "
           f"Data: `posenc scores rope --regime exact`, f64. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "RoPE score vs distance"), cap


def _score_error_vs_distance(ctx, src: ScoresSource) -> tuple:
    """(b): |score(regime) − score(exact)| against the distance, query at the end of a 1M and a 4K context."""
    rng_q, rng_k = unit_vectors(1, HEAD_DIM, SEED + 1)[0], unit_vectors(1, HEAD_DIM, SEED + 2)[0]
    series, summary = [], []
    for n, label in ((CONTEXT, "1M"), (SHORT, "4K")):
        ds = distances(n)
        k_pos = [n - d for d in ds]
        exact = src.scores("hf-llama", "exact", rng_q, n, [rng_k] * len(ds), k_pos)
        if exact is None:
            return _not_drawn("fig-rope-score-error-vs-distance", src.error), ""
        for preset, regime, style in (("hf-llama", "hf", "linespoints pt 7 ps 0.4"),
                                      ("ggml-neox", "ggml", "linespoints pt 5 ps 0.4")):
            got = src.scores(preset, regime, rng_q, n, [rng_k] * len(ds), k_pos)
            if got is None:
                return _not_drawn("fig-rope-score-error-vs-distance", src.error), ""
            errs = [(d, abs(a - b)) for d, a, b in zip(ds, got, exact)]
            series.append(Series(f"{regime} float32, query at {n} ({label} context)",
                                 [(d, e) for d, e in errs if e > 0], style, dashed=label == "4K"))
            summary.append(f"{regime} at {label}: up to {md.num(max(e for _, e in errs))}")
    plot = Plot(name="fig-rope-score-error-vs-distance",
                title=f"Score error of float32 RoPE vs the mathematics, query at the end of the context, d = {HEAD_DIM}",
                xlabel="distance n - m (log scale)", ylabel="|score - exact score| (log scale)", series=series,
                logx=2, logy=10, key="below left horizontal")
    cap = ("**(b) What float32 RoPE costs a long-context model.** |⟨R(n)q, R(m)k⟩ − exact| for one pair of random "
           f"unit vectors (float32 numbers, seeds {SEED + 1}, {SEED + 2}), query at position n, key at m = n − d, "
           "computed with HF's float32 steps (inv_freq and angle in float32: regime hf) and ggml's (θ by repeated "
           "float32 multiplication: regime ggml), against the exact rotation — " + "; ".join(summary) + ". The "
           "error is set by the absolute positions (the float32 angle p·θ_k carries ~ulp(p·θ_k)), so a 1M-token "
           "context (solid) sees it at every distance, a 4K one (dashed) far less. The reference is posenc's "
           "exact regime in f64 (within rope.score.f64.ratio of the mathematics, ~1e-15 here). Data: `posenc "
           "scores rope` with f64 data (no sgemm rounding: the regime's rotation is the only difference). See the "
           "emulated-vs-exact accuracy plot below for the cos/sin themselves.")
    return ctx.renderer.image(plot, "RoPE score error vs distance"), cap


# Figure (c): one Llama-3-like head (d = 128, theta 5e5, trained at L0 = 8192) extended 8x by each scaling ...
LLAMA_HEAD = ["--head-dim", str(HEAD_DIM), "--base", "500000"]
SCALINGS = (
    ("linear", LLAMA_HEAD + ["--scaling", "linear", "--factor", "8"], "lines lw 2"),
    ("ntk", LLAMA_HEAD + ["--scaling", "ntk", "--factor", "8"], "lines lw 2"),
    ("dynamic (L = 8 L0)", LLAMA_HEAD + ["--scaling", "dynamic", "--factor", "8", "--max-context", "8192",
                                         "--seq-len", "65536"], "lines lw 2 dt 2"),
    ("yarn", LLAMA_HEAD + ["--scaling", "yarn", "--factor", "8", "--original-context", "8192"],
     "linespoints pt 7 ps 0.4"),
    ("llama3", LLAMA_HEAD + ["--scaling", "llama3", "--factor", "8", "--original-context", "8192"],
     "linespoints pt 5 ps 0.4"),
)
# ... and LongRoPE, whose per-pair factors are a model's own: Phi-3.5-mini's published config (d = 96, 48 pairs,
# base 1e4, L0 = 4096, factor 32), its short factors (at init, L <= L0) and its long ones (L = 128k > L0).
REPO_ROOT = Path(__file__).resolve().parents[3]
PHI_CONFIG = "cli/tests/data/configs/phi-3.5-mini-instruct.json"
LONGROPE = (
    ("longrope short (Phi-3.5, L <= L0)", ["--seq-len", "0"], "points pt 6 ps 0.6"),
    ("longrope long (Phi-3.5, L = 128k)", ["--seq-len", "131072"], "points pt 4 ps 0.6"),
)


def _freqs(cli: str, args: list) -> tuple:
    """(json, None) of `posenc freqs rope ARGS --format json`, or (None, why)."""
    cmd = [cli, "freqs", "rope"] + args + ["--format", "json"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"could not run {cli}: {e}"
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        return None, f"`posenc freqs rope {' '.join(args)}` exited {proc.returncode}: {msg}"
    try:
        return json.loads(proc.stdout), None
    except ValueError as e:
        return None, f"unexpected `posenc freqs` output: {e}"


def _ratios(d: dict) -> list:
    """[(k, theta'_k / theta_k)] of a `posenc freqs rope` result."""
    return [(k, a / b) for k, (a, b) in enumerate(zip(d["frequencies"], d["unscaled_frequencies"]))]


def _scaled_frequencies(ctx) -> tuple:
    """(c): theta'_k / theta_k of every scaling against the pair index k (1 = the frequency kept)."""
    if not ctx.cli:
        return _not_drawn("fig-rope-scaled-frequencies", "no --cli given"), ""
    series, notes = [], []
    for label, args, style in SCALINGS:
        d, why = _freqs(ctx.cli, args)
        if d is None:
            return _not_drawn("fig-rope-scaled-frequencies", why), ""
        series.append(Series(label, _ratios(d), style))
        if label in ("yarn", "llama3"):
            notes.append(f"{label}: {d['pairs_kept']} pairs kept, {d['pairs_blended']} blended, "
                         f"{d['pairs_interpolated']} divided by 8, attention factor {md.num(d['attention_factor'])}")
    phi = REPO_ROOT / PHI_CONFIG
    long_notes = []
    for label, args, style in LONGROPE:
        d, why = _freqs(ctx.cli, ["--config", str(phi)] + args) if phi.is_file() else (None, f"{PHI_CONFIG} not found")
        if d is None:
            long_notes.append(f"{label} not drawn: {md.cell(why)}")
            continue
        ratio = _ratios(d)
        series.append(Series(label, ratio, style))
        long_notes.append(f"{d.get('longrope_factors', '?')}: θ_k divided by {md.num(1 / ratio[0][1])} (k = 0) to "
                          f"{md.num(1 / min(r for _, r in ratio))}, attention factor {md.num(d['attention_factor'])}")
    plot = Plot(name="fig-rope-scaled-frequencies",
                title=f"Context extension: theta'_k / theta_k per pair (d = {HEAD_DIM}, base 5e5, L0 = 8192, "
                      "factor 8; LongRoPE: Phi-3.5-mini)",
                xlabel="pair index k", ylabel="theta'_k / theta_k (log scale)", series=series, logy=2,
                key="below left horizontal")
    cap = ("**(c) What each scaling does to the frequencies.** θ′_k / θ_k against the pair index for a Llama-3-like "
           f"head (d = {HEAD_DIM}, base 5·10⁵, pretraining context L0 = 8192) extended eight-fold, exact regime: "
           "linear divides every frequency by 8 (positions / 8); NTK and dynamic NTK (at L = 8 L0) raise the base, "
           "leaving the fastest pair and dividing the slowest by nearly 8; YaRN and Llama 3.1 keep the fast pairs "
           "(wavelength below L0/β or L0/high_freq_factor), divide the slow ones by 8 and blend between — "
           + "; ".join(notes) + ". LongRoPE divides each θ_k by a factor of its own, the model's: Phi-3.5-mini's "
           "published config (its own head: d = 96, so its points end at k = 47; base 10⁴, L0 = 4096, factor 32), "
           "the short factors while the length L ≤ L0 (HF at init) and the long ones beyond (here L = 128k) — "
           + "; ".join(long_notes) + ". Data: `posenc freqs rope --scaling ... --format json` (its interpolation_weight "
           f"per pair) and `posenc freqs rope --config {PHI_CONFIG} --seq-len 0|131072 --format json`. See "
           + CLAIMS_LINK + " (ROPE-SCALE-1).")
    return ctx.renderer.image(plot, "RoPE scaled frequencies"), cap


# Figure (d): from the results, not the CLI (every position 0 .. 131071 in both regimes: ~15 s, so a main-job stage).
LONG_CONTEXT_FILE = "rope-long-context.json"
LONG_CONTEXT_STAGE = "main job stage 5/9, `scripts/rope_long_context.py`"
ULP_F32_ONE = 2.0 ** -23
MARK_NAMES = {"1024": "1k", "8192": "8k", "32768": "32k", "131072": "128k"}


def load_long_context(results_dir) -> tuple:
    """(data, None) of <results>/rope-long-context.json, or (None, why): "not run" when absent."""
    if results_dir is None:
        return None, "not run: no results directory"
    path = Path(results_dir) / LONG_CONTEXT_FILE
    if not path.is_file():
        return None, f"not run: {LONG_CONTEXT_FILE} is not in the results ({LONG_CONTEXT_STAGE})"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        series = data["series"]
        if not isinstance(series, list) or not series:
            raise ValueError("no series")
        for s in series:
            if not isinstance(s.get("label"), str) or not isinstance(s.get("buckets"), list):
                raise ValueError("a series without label or buckets")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        return None, f"{LONG_CONTEXT_FILE} is unreadable: {type(e).__name__}: {e}"
    return data, None


def _long_context_points(s: dict) -> list:
    """[(last position of the bucket, max |hf - exact|)] of one series, where both are > 0 (log axes)."""
    pts = []
    for b in s["buckets"]:
        if not isinstance(b, dict):
            continue
        hi, err = b.get("hi"), b.get("max_abs_error")
        if md.is_number(hi) and md.is_number(err) and hi > 0 and err > 0:
            pts.append((hi, err))
    return pts


def _largest(s: dict) -> tuple | None:
    """(error, pair) of the largest error of a series over all its buckets, or None."""
    best = None
    for b in s.get("buckets") or []:
        if isinstance(b, dict) and md.is_number(b.get("max_abs_error")):
            if best is None or b["max_abs_error"] > best[0]:
                best = (b["max_abs_error"], b.get("at_pair"))
    return best


def _long_context_error(ctx) -> tuple:
    """(d): max over pairs of |hf - exact| per position bucket at 0 .. 131071, two models scaled and unscaled."""
    name = "fig-rope-long-context-error"
    inputs = getattr(ctx, "inputs", None)
    data, why = load_long_context(getattr(inputs, "results_dir", None))
    if data is None:
        return _not_drawn(name, why), ""
    series, rows, models, solid, top, cross = [], [], [], [], 1, 1
    colours = {}
    for s in data["series"]:
        pts = _long_context_points(s)
        top = max([top] + [p for p, _ in pts])
        unscaled = s.get("scaling") == "none"
        model = s["label"].split(" (")[0].replace(" head unscaled", "")
        colour = colours.setdefault(model, COLOURS[len(colours) % len(COLOURS)])
        # Points over a dashed line: where a scaling leaves the error as it is, the points sit on the line.
        series.append(Series(s["label"], pts, "lines lw 1.5" if unscaled else "points pt 7 ps 0.5",
                             dashed=unscaled, colour=colour))
        last_below = max((p for p, e in pts if e <= ULP_F32_ONE), default=0)
        cross = max(cross, min((p for p, _ in pts if p > last_below), default=last_below))
        below = s.get("max_abs_error_below") if isinstance(s.get("max_abs_error_below"), dict) else {}
        rows.append(f"{s['label']}: " + ", ".join(f"{MARK_NAMES.get(k, k)} {md.num(v)}" for k, v in below.items()
                                                   if md.is_number(v)))
        models.append((model, unscaled, s))
        spec = s.get("spec") if isinstance(s.get("spec"), dict) else {}
        if not unscaled:
            solid.append(f"{model} ({md.cell(s.get('scaling'))}, factor {md.num(spec.get('factor'))}, base "
                         f"{md.num(spec.get('base'))}, d = {md.num(spec.get('head_dim'))})")
    series.append(Series("float32 ulp of 1 (2^-23)", [(1, ULP_F32_ONE), (top, ULP_F32_ONE)], "lines lw 1",
                         dashed=True, colour="#000000"))
    # What the scaling changes: the scaled series' largest error over the unscaled one's, per model, and the pair
    # where the largest error is made.
    changes = []
    for model, unscaled, s in models:
        if unscaled:
            continue
        plain = next((p for m, u, p in models if m == model and u), None)
        a = _largest(s)
        b = _largest(plain) if plain else None
        if a and b and b[0] > 0:
            changes.append(f"{model}: {md.cell(s.get('scaling'))} / unscaled = {a[0] / b[0]:.4f} (attention factor "
                           f"{md.num(s.get('attention_factor'))}; largest error at pair k = {a[1]}, unscaled "
                           f"k = {b[1]})")
    span = 1 << max(1, (int(top) - 1).bit_length())
    plot = Plot(name=name, title="HF float32 RoPE cache vs the exact one: max over pairs of |hf - exact| per position",
                xrange=(1, span),
                xlabel="position p (log scale; each point: the largest error in a quarter-octave bucket, at its "
                       "last position)", ylabel="max over pairs |hf - exact| (log scale)", series=series, logx=2,
                logy=10, key="below left horizontal")
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    ctx.figure_notes.append(("long-context data", f"`{LONG_CONTEXT_FILE}` ({md.cell(meta.get('program'))}, posenc "
                             f"commit {md.cell(meta.get('posenc_commit') or meta.get('commit'))}, run "
                             f"{md.cell(meta.get('run_id') or 'not recorded')}, {md.cell(meta.get('date'))})"))
    cap = ("**(d) The float32 cache over a 128k context.** For every position p in 0 .. 131071, the largest "
           "|hf − exact| over the pairs (cos and sin) of the cos/sin cache, reduced to its maximum in each quarter-"
           "octave of positions; hf is HF's float32 steps each correctly rounded (posenc's emulation: inv_freq, "
           "the angle p·inv_freq and cos, sin in float32, times RN32(m) under YaRN), exact the mathematics (f64, "
           "within ~2^-52). Points: the config fixtures (cli/tests/data/configs) " + " and ".join(solid) + "; "
           "dashed lines: the same head unscaled (same base and head_dim, `--scaling none`); dashed black: the float32 "
           "ulp of 1. The error is that of the float32 angle — p times inv_freq's rounding error (up to 2^-24 "
           "relative) plus half an ulp of the angle p·inv_freq — so it grows linearly with p, and is above "
           f"ulp(1) from p = {md.position(cross)} on. Largest "
           "error below 1k, 8k, 32k and 128k positions — " + "; ".join(rows) + ". What the scaling changes (the "
           "largest errors over all positions, scaled / unscaled): " + ("; ".join(changes) or "no ratio recorded") +
           " — the largest error is made at a fast pair, whose frequency YaRN and Llama 3.1 keep, so only YaRN's "
           "attention factor m, which multiplies cos and sin, changes it"
           f". Data: `{LONG_CONTEXT_FILE}` ({LONG_CONTEXT_STAGE}: `posenc table rope --config FILE | --head-dim "
           "128 --base B --scaling none --regime hf|exact --form pairs --positions A:B --format npy --dtype f64`). "
           "Figure (b) shows what this does to a score.")
    return ctx.renderer.image(plot, "RoPE hf vs exact cache error at 128k positions"), cap


# Table (e): where xPos' scale overflows, found by bisection on posenc's own caches (head_dim 2: pair 0 only,
# zeta_0 = 0.4 / 1.4 = 2/7, the fastest-changing scale of any head_dim).
XPOS_CENTER = 1 << 20
F16_MAX, F32_MAX = 65504.0, 3.4028234663852886e38


def _xpos_row(cli: str, side: str, sb: int, regime: str, dist: int) -> tuple:
    """(cos, sin) of pair 0 at distance `dist` from the centre on the growing side (queries below it, keys
    above), from `posenc table rope --xpos SIDE --format json` (None for a non-finite value), or raises."""
    p = XPOS_CENTER - dist if side == "query" else XPOS_CENTER + dist
    cmd = [cli, "table", "rope", "--head-dim", "2", "--regime", regime, "--xpos", side, "--xpos-scale-base", str(sb),
           "--xpos-center", str(XPOS_CENTER), "--positions", str(p), "--dtype", "f64" if regime == "exact" else "f32",
           "--format", "json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"`posenc table rope --xpos {side} --regime {regime}` exited {proc.returncode}: {msg}")
    row = json.loads(proc.stdout)["rows"][0]
    return row[0], row[1]


def _first_beyond(pred, hi: int) -> int:
    """The least d in [0, hi] with pred(d) (pred monotone in d), hi + 1 if none."""
    lo, top = 0, hi + 1
    while lo < top:
        mid = (lo + top) // 2
        if pred(mid):
            top = mid
        else:
            lo = mid + 1
    return lo


def _xpos_overflow(ctx) -> tuple:
    """(e): the first |p - c| where xPos' scale leaves the float16 and float32 ranges (a table, not a plot)."""
    if not ctx.cli:
        return _not_drawn("table-rope-xpos-overflow", "no --cli given"), ""
    rows = []
    try:
        for sb in (64, 512):
            reach = 553 * sb  # the spec's position range around the centre
            for side in ("query", "key"):
                def exact_over(limit):
                    return lambda d: math.hypot(*_xpos_row(ctx.cli, side, sb, "exact", d)) > limit
                hf_inf = lambda d: any(v is None for v in _xpos_row(ctx.cli, side, sb, "hf", d))
                f16, f32 = _first_beyond(exact_over(F16_MAX), reach), _first_beyond(exact_over(F32_MAX), reach)
                hf = _first_beyond(hf_inf, reach)
                closed = [math.ceil(sb * math.log(m) / math.log(3.5)) for m in (F16_MAX, F32_MAX)]
                rows.append([md.num(sb), side + (" (p < c)" if side == "query" else " (p > c)"), md.num(f16),
                             md.num(f32), md.num(hf), f"{md.num(closed[0])} / {md.num(closed[1])}",
                             md.num(2 * f16), md.num(2 * f32)])
    except (OSError, subprocess.TimeoutExpired, RuntimeError, ValueError, KeyError, IndexError, TypeError) as e:
        return _not_drawn("table-rope-xpos-overflow", str(e)), ""
    table = md.table(["scale_base", "side", "d: exact > 65504 (f16)", "d: exact > FLT_MAX (f32)",
                      "d: hf (torchscale float32) inf", "closed form ⌈sb ln max / ln 3.5⌉ (f16 / f32)",
                      "sequence 2d where f16 breaks", "… where f32 breaks"], rows, ["r", "l", "r", "r", "r", "r", "r", "r"])
    cap = ("**(e) Where xPos' scale overflows.** The first distance d = |p − c| from the centre at which the decay scale "
           "of pair 0 (ζ₀ = 2/7, the fastest-changing one) exceeds the float16 maximum and the float32 maximum: "
           "queries grow below the centre, keys above it (ζ^(±(p − c)/scale_base)). Found by bisection on "
           "`posenc table rope --head-dim 2 --xpos query|key --xpos-scale-base SB --xpos-center 2^20` (exact: the "
           "f64 cache, the scale as |(cos, sin)|; hf: torchscale's float32 steps, the first position whose entries "
           "are inf/NaN). torchscale centres positions at the middle of the sequence, so a sequence of 2d "
           "tokens reaches it: with its default scale_base 512, a float16 cache overflows from about 9k tokens and "
           "a float32 one from about 72k. The closed form agrees; see " + CLAIMS_LINK + " (ROPE-XPOS-2).")
    return table, cap


def figures(ctx) -> list:
    src = ScoresSource(ctx.cli)
    out = [_score_vs_distance(ctx, src), _score_error_vs_distance(ctx, src), _scaled_frequencies(ctx),
           _long_context_error(ctx), _xpos_overflow(ctx)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc scores rope`, f64 data)" if src.error is None
                             else f"not drawn: {md.cell(src.error)}"))
    return out
