"""Report module of FIRE, functional interpolation for relative positions (Li et al. 2023, arXiv 2310.04418): its
speed headline, and figures of what the scheme computes — the normalized distance x = ln(|c| d + 1) / (ln(|c|
max(q, L) + 1) + eps) that every head's MLP reads, the bias of one trained-looking head for short and long queries,
what the reference's float32 arithmetic (the cramming regime) changes — and a table of where the one implementation
posenc follows (mcleish7/arithmetic's FIRE, spec/include/posenc/fire_spec.hpp) differs from the paper, each
difference checked on the CLI's numbers.

Every number comes from the posenc CLI (`posenc bias fire --dtype f64 --format json`); the weights are drawn here
(draw_weights: torch's default nn.Linear init from Python's random, seeded, rounded to float32 — the same recipe
that wrote cli/tests/data/fire_*.json) and written to a temporary JSON state_dict for --weights. The checks, scales
and ulp distances are computed here in float64. Without a CLI the figures are not drawn and the page says why."""
from __future__ import annotations

import json
import math
import os
import random
import struct
import tempfile

from .. import md
from ..cli_data import CliData, NEG_INF
from ..gnuplot import Plot, Series

SCHEME = "fire"

# benchmarks/fire_bench.cpp: bias/<variant>/heads:32/L:<L>/threads:<n> (the whole [H][L][L] matrix, width 32;
# variants cramming_f32, exact_f32, exact_f64; baselines stream_store_f32 — the DRAM write limit — store_f32 and
# plainloop_f32 — the per-entry loop of the definition, L:512 only — and their f64 forms) and
# scores/<variant>/heads:1/L:4096/head_dim:128/threads:<n> (fused_cramming_causal_f32 against sgemm_f32, q k^T of the
# same shape; bench.py recognises the baseline by the "sgemm" prefix of the variant, with the same arguments).
HEADLINE_KERNELS = (
    {"family": "bias", "variant": "cramming_f32", "baseline": "bandwidth",
     "what": "cramming (the reference's float32 steps) f32 bias matrix at its largest (DRAM) size vs the streaming "
             "store of the same bytes"},
    {"family": "bias", "variant": "cramming_f32", "baseline": "plainloop",
     "what": "cramming f32 bias matrix vs the plain per-entry loop of the definition (two log1p, a division and the "
             "MLP per entry; L:512, the one size it runs at)"},
    {"family": "scores", "variant": "fused_cramming_causal_f32", "baseline": "sgemm",
     "what": "scores with the causal cramming bias fused (bias rows, then a beta = 1 sgemm) vs sgemm of the same "
             "shape (sgemm time ÷ fused time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-fire)"
SEED = 231004418            # arXiv 2310.04418; cli/tests/data/README.md
INIT_C, INIT_L = 0.1, 512   # the reference's initial c and init_L (FIRE(init_c=0.1, init_L=512))
EPS = 1e-6                  # FIRE(eps=1e-6), the presets' eps

# (a) the normalized distance: one query row at each position (identity MLP: the bias is x itself).
X_QUERIES = (64, 256, 512, 1024, 4096)
# (b) one head of the 12-head width-32 weights at these query positions.
MAIN_HEADS, MAIN_WIDTH = 12, 32
ROW_QUERIES = (128, 512, 2048, 8192)
# (c) cramming − exact on the row of this query position, every head.
DEV_Q = 4096
# (d) the conventions, on a small model whose threshold lies inside the matrix: keys 0 .. CONV_L - 1, L = CONV_THR.
CONV_HEADS, CONV_WIDTH, CONV_THR, CONV_L = 4, 8, 8, 24


def float32(x: float) -> float:
    """x rounded to the nearest binary32 (ties to even), as a float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def draw_weights(heads: int, width: int, seed: int = SEED, c: float = INIT_C, L_multiplier: float = 1.0,
                 init_L=INIT_L) -> dict:
    """A FIRE state_dict as `{k: v.tolist() for k, v in fire.state_dict().items()}` gives it, in the module's key
    order: mlp.0 (Linear(1, width)) and mlp.2 (Linear(width, heads)) drawn as torch's default Linear init draws them,
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias, from random.Random(seed) in the order mlp.0.weight,
    mlp.0.bias, mlp.2.weight (row-major), mlp.2.bias; every float rounded to float32 (a float32 model's values);
    init_L as given (an int is what torch.tensor(512).tolist() gives)."""
    rng = random.Random(seed)
    bound2 = 1.0 / math.sqrt(width)

    def u(bound):
        return float32(rng.uniform(-bound, bound))

    w1 = [[u(1.0)] for _ in range(width)]
    b1 = [u(1.0) for _ in range(width)]
    w2 = [[u(bound2) for _ in range(width)] for _ in range(heads)]
    b2 = [u(bound2) for _ in range(heads)]
    return {"mlp.0.weight": w1, "mlp.0.bias": b1, "mlp.2.weight": w2, "mlp.2.bias": b2, "c": float32(c),
            "init_L": init_L, "L_multiplier": float32(L_multiplier)}


def weights_text(weights: dict) -> str:
    """The text json.dump writes for `weights` (what cli/tests/data/fire_*.json hold)."""
    return json.dumps(weights)


def identity_weights(c: float = INIT_C, init_L=INIT_L) -> dict:
    """One head, width 1, W1 = 1, b1 = 0, W2 = 1, b2 = 0: the bias is ReLU(x) = x (x >= 0), the MLP's input."""
    return {"mlp.0.weight": [[1.0]], "mlp.0.bias": [0.0], "mlp.2.weight": [[1.0]], "mlp.2.bias": [0.0],
            "c": float32(c), "init_L": init_L, "L_multiplier": 1.0}


def normalized_distance(weights: dict, q: int, d: int, eps: float = EPS) -> float:
    """x(q, d) of fire_spec.hpp in float64: ln(|c| d + 1) / (ln(|c| max(q, L) + 1) + eps), L = |L_mult init_L|."""
    c, thr = abs(weights["c"]), abs(weights["L_multiplier"] * weights["init_L"])
    return math.log1p(c * d) / (math.log1p(c * max(q, thr)) + eps)


def mlp(weights: dict, h: int, x: float) -> tuple:
    """(b_h(x), S_h(x)) in float64: the MLP's value b2 + sum_k W2 max(0, W1 x + b1) and its condition scale
    S = |b2| + sum_k |W2| (|W1| x + |b1|) (the scale the budget rows of fire_spec.hpp measure against)."""
    w1, b1, w2, b2 = weights["mlp.0.weight"], weights["mlp.0.bias"], weights["mlp.2.weight"], weights["mlp.2.bias"]
    terms = [w2[h][k] * max(0.0, w1[k][0] * x + b1[k]) for k in range(len(b1))]
    scale = abs(b2[h]) + math.fsum(abs(w2[h][k]) * (abs(w1[k][0]) * x + abs(b1[k])) for k in range(len(b1)))
    return math.fsum(terms) + b2[h], scale


def ulp32(x: float) -> float:
    """The spacing of binary32 numbers at |x|: 2^(max(floor(log2 |x|), −126) − 23); 2^−149 at 0."""
    if x == 0:
        return math.ldexp(1.0, -149)
    _, e = math.frexp(abs(x))
    return math.ldexp(1.0, max(e, -125) - 24)


def widest_head(weights: dict, steps: int = 64) -> int:
    """The head whose MLP spans the widest range of values over x in [0, 1] (the figure's most visible head)."""
    heads = len(weights["mlp.2.bias"])
    span = []
    for h in range(heads):
        v = [mlp(weights, h, i / steps)[0] for i in range(steps + 1)]
        span.append(max(v) - min(v))
    return max(range(heads), key=lambda h: span[h])


def x_text(x: float) -> str:
    """x in [0, 1] for a caption: 3 digits, or 1 − (1 − x) when it rounds to 1 (x just below 1 stays visible)."""
    return md.num(x) if md.num(x) != "1" or x == 1 else f"1 − {md.num(1 - x)}"


def plot_distances(limit: int, dense: int = 64, per_octave: int = 24) -> list:
    """1 .. dense, then `per_octave` points per octave (rounded) up to `limit`, and `limit` itself."""
    out = set(range(1, min(dense, limit) + 1)) | {limit}
    i = 0
    while dense * 2 ** (i / per_octave) < limit:
        out.add(int(round(dense * 2 ** (i / per_octave))))
        i += 1
    return sorted(d for d in out if 1 <= d <= limit)


class FireCli(CliData):
    """`posenc bias fire` as Python data, each call made once (cached); `error` says why not, once one failed
    (later calls then return None). The weights are state_dicts (draw_weights) written to JSON files in `directory`
    under the names given (the captions name them)."""

    def __init__(self, cli, directory: str, timeout: float = 120):
        super().__init__(cli, timeout)
        self.directory = directory

    def weights_file(self, name: str, weights: dict) -> str:
        path = os.path.join(self.directory, name)
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(weights_text(weights))
        return path

    def bias(self, name: str, weights: dict, regime: str, key_length: int, query_length: int | None = None,
             mask: str = "none") -> list | None:
        """bias[h][i][j] (float64; -inf where masked) of the weights, the last query_length of key_length keys."""
        heads = len(weights["mlp.2.bias"])
        lq = key_length if query_length is None else query_length
        args = ("bias", "fire", "--regime", regime, "--weights", self.weights_file(name, weights),
                "--key-length", str(key_length), "--query-length", str(lq), "--mask", mask, "--dtype", "f64")
        data = self.run(args)
        tensor = self.bias_tensor(args, data, heads, lq, key_length)
        if tensor is None:
            return None
        spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
        if spec.get("heads") != heads or spec.get("regime") != regime:
            self.fail(args, f"expected a spec with heads {heads} and regime {regime}")
            return None
        return tensor

    def by_distance(self, name: str, weights: dict, regime: str, q: int) -> list | None:
        """[h][d] for d = 0 .. q: the row of one query at position q (key_length q + 1, query_length 1; key j is at
        distance q − j)."""
        t = self.bias(name, weights, regime, q + 1, 1)
        return None if t is None else [list(reversed(h[0])) for h in t]


def _not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


def _cli(name: str, regime: str, key_length: int, query_length: int, mask: str = "none") -> str:
    return (f"`posenc bias fire --regime {regime} --weights {name} --key-length {key_length} --query-length "
            f"{query_length} --mask {mask} --dtype f64 --format json`")


MAIN_FILE = "fire_h12_w32.json"
MAIN_NOTE = ("fire_h12_w32.json is cli/tests/data/fire_h12_w32.json (draw_weights(12, 32): c = float32(0.1), "
             "L_multiplier = 1, init_L = 512, the MLP drawn as torch initialises nn.Linear)")


# --- (a) the normalized distance ---------------------------------------------------------------------------------

def _normalized(ctx, src: FireCli) -> tuple:
    name = "fig-fire-normalized-distance"
    w = identity_weights()
    rows = {}
    for q in X_QUERIES:
        r = src.by_distance("identity.json", w, "exact", q)
        if r is None:
            return _not_drawn(name, src.error), ""
        rows[q] = r[0]
    thr = abs(w["L_multiplier"] * w["init_L"])
    worst = max(abs(rows[q][d] - normalized_distance(w, q, d)) / max(normalized_distance(w, q, d), 1e-300)
                for q in X_QUERIES for d in range(1, q + 1))
    zero = all(rows[q][0] == 0 for q in X_QUERIES)
    increasing = all(rows[q][d + 1] > rows[q][d] for q in X_QUERIES for d in range(q))
    below_one = all(0 <= v < 1 for q in X_QUERIES for v in rows[q])
    short = [q for q in X_QUERIES if q <= thr]
    shared = all(rows[a][d] == rows[b][d] for a in short for b in short for d in range(min(a, b) + 1))
    series = [Series(f"q = {q}" + (" (<= L: the normalizer of L)" if q <= thr else ""),
                     [(d, rows[q][d]) for d in plot_distances(q)],
                     "lines lw 3" if q <= thr else "lines lw 2", dashed=q < max(short, default=0))
              for q in X_QUERIES]
    plot = Plot(name=name, title="FIRE: the MLP's input x(q, d) against the distance d, one curve per query position q",
                xlabel="distance d = |q - j| (log scale)", ylabel="x = ln(|c| d + 1) / (ln(|c| max(q, L) + 1) + eps)",
                series=series, logx=2, key="below left horizontal", yrange=(0, 1.05))
    ends = "; ".join(f"q = {q}: {x_text(rows[q][q])}" for q in X_QUERIES)
    cap = ("**(a) The normalized distance.** Every head's MLP reads one number per (query, key): x = ln(|c| d + 1) / "
           "(ln(|c| max(q, L) + 1) + eps), the log-compressed distance d = |q − j| divided by the log-compressed "
           f"query position, with the reference's initial c = 0.1, threshold L = |L_multiplier · init_L| = "
           f"{md.num(thr)} and eps = 10^−6 (exact regime, f64). Drawn for the queries at q = "
           f"{', '.join(str(q) for q in X_QUERIES)} over their keys j = 0 … q. Queries at or below L share L's "
           "normalizer, so their curves are one curve (the dashed ones end where the shorter query's keys end): a "
           "short context sees the distances it saw in training. A query beyond L divides by its own position: its "
           "whole past, however long, is mapped into [0, 1), and its farthest key gets x just below 1, as the "
           "farthest key at L does (x at d = q: " + ends + "). That is the paper's progressive interpolation: a "
           "longer context is a finer sampling of the same interval, not new distances the MLP never saw. The "
           "figure's numbers are `posenc bias fire` of a one-head, width-1 identity MLP (W1 = 1, b1 = 0, W2 = 1, "
           "b2 = 0: the bias is ReLU(x) = x). Checked on them: x = 0 at d = 0: " + ("yes" if zero else "**no**") +
           "; strictly increasing in d (claim FIRE-PSI-1): " + ("yes" if increasing else "**no**") + "; every x in [0, 1) (claim "
           "FIRE-BOUNDED-1): " + ("yes" if below_one else "**no**") + "; the queries at or below L equal bit for "
           "bit at every common distance (claim FIRE-SHAPE-1): " + ("yes" if shared else "**no**") +
           "; largest relative difference from x evaluated here with math.log1p: " + md.num(worst) + ". Data: " +
           _cli("identity.json", "exact", "q + 1", 1) + f" for each q. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "FIRE normalized distance against the distance"), cap


# --- (b) the bias of one head for short and long queries -----------------------------------------------------------

def _rows(ctx, src: FireCli, main: dict) -> tuple:
    name = "fig-fire-bias-rows"
    head = widest_head(main)
    rows = {}
    for q in ROW_QUERIES:
        r = src.by_distance(MAIN_FILE, main, "exact", q)
        if r is None:
            return _not_drawn(name, src.error), ""
        rows[q] = r[head]
    thr = abs(main["L_multiplier"] * main["init_L"])
    worst = 0.0
    for q in ROW_QUERIES:
        for d in plot_distances(q):
            value, scale = mlp(main, head, normalized_distance(main, q, d))
            worst = max(worst, abs(rows[q][d] - value) / scale)
    short = [q for q in ROW_QUERIES if q <= thr]
    shared = all(rows[a][d] == rows[b][d] for a in short for b in short for d in range(min(a, b) + 1))
    far = [q for q in ROW_QUERIES if q >= thr]
    far_values = [rows[q][q] for q in far]
    far_spread = max(far_values) - min(far_values)
    _, scale1 = mlp(main, head, 1.0)
    series = [Series(f"q = {q}" + (" (<= L)" if q <= thr else ""), [(d, rows[q][d]) for d in plot_distances(q)],
                     "lines lw 2", dashed=q < max(short, default=0)) for q in ROW_QUERIES]
    plot = Plot(name=name, title=f"FIRE: the bias of head {head} against the distance d, one curve per query position",
                xlabel="distance d = |q - j| (log scale)", ylabel=f"bias b_{head}(q, d)", series=series, logx=2,
                key="below left horizontal")
    cap = (f"**(b) One head's bias for short and long queries.** Head {head} of the 12-head, width-32 weights (the "
           "head whose MLP spans the widest range over x ∈ [0, 1]; every head is b2 + Σ_k W2·ReLU(W1·x + b1), a "
           "piecewise-linear function of x with at most 32 kinks) against the distance d, for the queries at q = "
           f"{', '.join(str(q) for q in ROW_QUERIES)} (exact regime, f64). The weights are as torch initialises "
           "them, not trained: the figure shows how FIRE turns any such function of x into a bias, not what a "
           f"trained model learns. Queries at or below L = {md.num(thr)} draw one curve (equal bit for bit at every "
           "common distance: " + ("yes" if shared else "**no**") + "); beyond L each query's curve is the same "
           "function of x stretched over its own past, so that the bias at the farthest key is the same for every "
           f"long query: b(q, d = q) for q = {', '.join(str(q) for q in far)}: "
           + ", ".join(md.num(v, 6) for v in far_values) + f" (spread {md.num(far_spread)}, which is "
           f"{md.num(far_spread / scale1)} of the head's scale S at x = 1: x = l(q) / (l(q) + eps) moves by "
           "eps-sized amounts only). Largest difference from the bias evaluated here in float64 from the weights, "
           f"relative to the scale S = |b2| + Σ|W2|(|W1| x + |b1|): {md.num(worst)}. Data: "
           + _cli(MAIN_FILE, "exact", "q + 1", 1) + f" for each q, head {head}; {MAIN_NOTE}. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "FIRE bias of one head against the distance"), cap


# --- (c) cramming − exact ----------------------------------------------------------------------------------------

def _deviation(ctx, src: FireCli, main: dict) -> tuple:
    name = "fig-fire-cramming-deviation"
    exact = src.by_distance(MAIN_FILE, main, "exact", DEV_Q)
    cram = src.by_distance(MAIN_FILE, main, "cramming", DEV_Q) if exact is not None else None
    if exact is None or cram is None:
        return _not_drawn(name, src.error), ""
    heads = len(main["mlp.2.bias"])
    dev, kernel = [], []
    for d in range(DEV_Q + 1):
        x = normalized_distance(main, DEV_Q, d)
        per_head = [abs(cram[h][d] - exact[h][d]) / ulp32(mlp(main, h, x)[1]) for h in range(heads)]
        dev.append(max(per_head))
        kernel.append(max(abs(cram[h][d] - exact[h][d]) / ulp32(exact[h][d]) if exact[h][d] != 0 else 0.0
                          for h in range(heads)))
    f32_ok = all(float32(v) == v for h in range(heads) for v in cram[h])
    d_max = max(range(DEV_Q + 1), key=lambda d: dev[d])
    k_max = max(range(DEV_Q + 1), key=lambda d: kernel[d])
    mean = math.fsum(dev) / len(dev)
    zeros = sum(1 for v in dev if v == 0)
    sample = [0] + plot_distances(DEV_Q)
    plot = Plot(name=name, title=f"FIRE cramming (float32 steps) minus exact bias, query at q = {DEV_Q}, worst head",
                xlabel="distance d (log scale; d = 0 drawn at 1/2)",
                ylabel="max over heads |cramming - exact| / ulp32(S)",
                series=[Series("scaled error (S = |b2| + sum |W2| (|W1| x + |b1|))",
                               [(d if d else 0.5, dev[d]) for d in sample], "points pt 7 ps 0.5"),
                        Series("0.5 ulp (one correct rounding of the sum)", [(0.5, 0.5), (DEV_Q, 0.5)], "lines lw 1",
                               dashed=True, colour="#000000")],
                logx=2, key="below left horizontal")
    cap = ("**(c) What the reference's float32 arithmetic changes.** The bias of the cramming regime (posenc's "
           "emulation of mcleish7/arithmetic's float32 forward, each step correctly rounded: the float32 positions, "
           "|c D| + 1 and its log, the normalizer + eps, the quotient x, x·W1 + b1 rounded twice, the second Linear "
           "as a fused accumulation over k, + b2) against the exact bias of the same weights, rounded once to f64, "
           f"on the row of the query at q = {DEV_Q} (all {heads} heads; the weights are float32 numbers, so the "
           "difference is the arithmetic alone). The error is scaled by ulp32 of the head's condition scale S = "
           "|b2| + Σ|W2|(|W1| x + |b1|), not of the bias: the MLP's sum cancels (random signs), and where the bias "
           "is near 0 its own ulp is tiny while the error of the float32 terms is not (the largest error in ulps of "
           f"the bias itself is {md.num(kernel[k_max])} at d = {k_max}). The scaled error is at most "
           f"{md.num(dev[d_max])} ulps of S (at d = {d_max}), {md.num(mean)} on average; {zeros} of {DEV_Q + 1} "
           "distances are equal in every head. Real torch runs add their float32 log's own ulps and their BLAS's summation order on top: "
           "`posenc check fire` allows for both (--ulp, and any order unless --fixed-order; budget row "
           "fire.check.envelope). Every cramming value is a float32 number: " + ("yes" if f32_ok else "**no**") +
           ". Data: " + _cli(MAIN_FILE, "R", DEV_Q + 1, 1) + f" for R = exact, cramming; {MAIN_NOTE}. "
           f"See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "FIRE cramming minus exact bias in ulps of the scale"), cap


# --- (d) the paper and the code ----------------------------------------------------------------------------------

def _equal(a: list, b: list) -> bool:
    """Bit-for-bit equality of two [h][i][j] tensors (-inf equal, +0 and -0 told apart)."""
    return all(struct.pack("<d", x) == struct.pack("<d", y)
               for ha, hb in zip(a, b) for ra, rb in zip(ha, hb) for x, y in zip(ra, rb)) and len(a) == len(b)


def _conventions(ctx, src: FireCli) -> tuple:
    name = "tab-fire-conventions"
    base = draw_weights(CONV_HEADS, CONV_WIDTH, init_L=CONV_THR)
    variants = {"base.json": base, "neg_c.json": {**base, "c": -base["c"]},
                "neg_lmult.json": {**base, "L_multiplier": -base["L_multiplier"]}, "c0.json": {**base, "c": 0.0}}
    got = {}
    for regime in ("exact", "cramming"):
        for file, w in variants.items():
            got[file, regime] = src.bias(file, w, regime, CONV_L)
            if got[file, regime] is None:
                return _not_drawn(name, src.error, "table"), ""
    causal = src.bias("base.json", base, "exact", CONV_L, mask="causal")
    if causal is None:
        return _not_drawn(name, src.error, "table"), ""
    n = CONV_L

    def yes(ok):
        return "yes" if ok else "**no**"

    res = {}
    for regime in ("exact", "cramming"):
        b = got["base.json", regime]
        c0 = got["c0.json", regime]
        res["abs_c", regime] = _equal(got["neg_c.json", regime], b)
        res["abs_l", regime] = _equal(got["neg_lmult.json", regime], b)
        flat = all(v == c0[h][0][0] for h in range(CONV_HEADS) for r in c0[h] for v in r)
        same_d0 = all(c0[h][0][0] == b[h][0][0] for h in range(CONV_HEADS))
        if regime == "exact":
            same_d0 = same_d0 and all(abs(c0[h][0][0] - mlp(base, h, 0.0)[0]) <= 1e-15 * mlp(base, h, 0.0)[1]
                                      for h in range(CONV_HEADS))
        res["eps", regime] = flat and same_d0
        res["sym", regime] = all(b[h][i][i + k] == b[h][i][i - k] for h in range(CONV_HEADS) for i in range(n)
                                 for k in range(1, n) if 0 <= i - k and i + k < n)
        short = [i for i in range(n) if i <= CONV_THR]
        res["thr", regime] = all(b[h][i][j] == b[h][0][abs(i - j)] for h in range(CONV_HEADS) for i in short
                                 for j in range(n)) and \
            all(any(b[h][i][j] != b[h][0][abs(i - j)] for h in range(CONV_HEADS) for j in range(i))
                for i in range(CONV_THR + 1, n))
    causal_ok = all((causal[h][i][j] == NEG_INF) == (j > i) and (j > i or causal[h][i][j] ==
                                                                  got["base.json", "exact"][h][i][j])
                    for h in range(CONV_HEADS) for i in range(n) for j in range(n))

    def both(key):
        return f"exact: {yes(res[key, 'exact'])}; cramming: {yes(res[key, 'cramming'])}"

    rows = [
        ["the log transform", "ψ(x) = ln(c x + 1), c > 0", "ln(\\|c x\\| + 1) (torch.abs): a negative trained c acts "
         "as \\|c\\|", "c = −0.1 gives the bias of c = 0.1 bit for bit (claim FIRE-BIAS-2): " + both("abs_c")],
        ["the normalizer", "ψ(i − j) / ψ(max(L, i))", "… / (ψ(max(i, L)) + eps), eps = 10^−6: finite where ψ(max(i, "
         "L)) = 0 (c = 0 or L = i = 0)", "c = 0 gives x = 0 and the bias MLP(0) at every entry (equal to the d = 0 "
         "entry of c = 0.1, and in the exact regime to MLP(0) computed here): " + both("eps")],
        ["the threshold", "L, learned", "\\|L_multiplier · init_L\\|: init_L fixed (512), the multiplier trained, "
         "the product's absolute value", "L_multiplier = −1 gives the bias of +1 bit for bit (claim FIRE-BIAS-2): " +
         both("abs_l")],
        ["rows at or below the threshold", "max(L, i): every query i ≤ L uses ψ(L)", "the same, on the query's "
         "position (float32 in the reference)", f"every row i ≤ L = {CONV_THR} equals row 0 at the same distance, "
         "and every row above L differs from it somewhere (claim FIRE-SHAPE-1): " + both("thr")],
        ["keys after the query", "defined for the causal keys j ≤ i", "evaluated for every (i, j) as a function of "
         "\\|i − j\\|; the causal mask is applied outside the module", "b(i, i + k) = b(i, i − k) wherever both "
         "keys exist (--mask none; claim FIRE-SHAPE-1): " + both("sym") + "; --mask causal writes −inf exactly at "
         "j > i and leaves "
         "the rest: " + yes(causal_ok)],
        ["training-mode positions", "—", "a sorted random subset of randperm(max_length) while training; positions "
         "0 … L − 1 in eval mode", "not modelled: posenc is the eval-mode forward, what a trained model runs"],
    ]
    table = md.table(["what", "the paper (Li et al. 2023)", "mcleish7/arithmetic's FIRE (posenc's definition)",
                      "checked on `posenc bias fire`"], rows, ["l", "l", "l", "l"])
    cap = ("**(d) Where the code differs from the paper.** The paper's authors published no code; posenc follows "
           "the one implementation located, mcleish7/arithmetic@55af9d5e cramming/architectures/embeddings.py, class "
           "FIRE, forward in eval mode (spec/include/posenc/fire_spec.hpp lists these differences; CONVENTIONS.md "
           "§2.15), and takes the code where the two differ: a model trained with that code was trained with these "
           "choices. Each row is checked on the CLI's numbers for a small model (4 heads, width 8, weights drawn as "
           f"torch initialises them, threshold L = init_L = {CONV_THR} so that rows on both sides of it are in the "
           f"{CONV_L} × {CONV_L} matrix), in both regimes, against a variant of its weights. Data: "
           + _cli("W", "R", CONV_L, CONV_L) + " for W = base.json (draw_weights(4, 8, init_L=8)) and its copies "
           "with c = −c (neg_c.json), L_multiplier = −1 (neg_lmult.json) and c = 0 (c0.json), R = exact, "
           f"cramming; and base.json with --mask causal. See {CLAIMS_LINK}.")
    return table, cap


def figures(ctx) -> list:
    with tempfile.TemporaryDirectory(prefix="posenc-report-fire.") as tmp:
        src = FireCli(ctx.cli, tmp)
        main = draw_weights(MAIN_HEADS, MAIN_WIDTH)
        out = [_normalized(ctx, src), _rows(ctx, src, main), _deviation(ctx, src, main), _conventions(ctx, src)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc bias fire --dtype f64`; "
                             f"{src.calls} invocations) on weights drawn here (draw_weights, the recipe of "
                             "cli/tests/data/fire_*.json); checks, scales and ulps in Python float64"
                             if src.error is None else f"not drawn: {md.cell(src.error)}"))
    return out
