"""Report module of TENER's relative attention (Yan et al. 2019; fastnlp/TENER relative_transformer.py): its speed
headline; (a), (b) the rows of the signed sinusoid table the query term (_shift: t = j - i) and the key term
(_transpose_shift: t = i - j) of each score entry read; (c) TENER's score of a fixed query against the signed offset
j - i beside the absolute sinusoidal encoding's PE(p).PE(p + k): TENER's curve tells a key after the query from one
before it, the absolute one cannot (it is symmetric in k).

The index matrices, TENER's scores and the absolute table come from the posenc CLI (`posenc index|scores tener
--format json`, the scores of .npy inputs written here: zero keys and biases, fixed queries; `posenc table sinusoidal
--preset marian --format json`); the checks against the definition (spec/include/posenc/tener_spec.hpp,
CONVENTIONS.md §2.6: rows L + j - i and L + i - j; e = (q + r_w_bias).R(j - i) + k.R(i - j) + content, unscaled,
w_k = exp(-k ln(10000) / (h - 1))) and of the absolute one (sum_t cos(k w_t)) are computed here. Without a CLI the
figures are not drawn and the page says why."""
from __future__ import annotations

import math
import random
import tempfile

from .. import md
from ..gnuplot import Plot, Series
from ..relative_figures import (RelativeCli, dot_term, f32, halves_row, index_figure, not_drawn, relative_error,
                                yes)

SCHEME = "tener"

# benchmarks/tener_bench.cpp (benchmarks/relative_bench.hpp): table/<variant>/L:<rows>/d:1024/threads:<n> and
# scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n> (blas_f32 vs sgemm_f32: three gemms against one;
# direct_f32 at L 512).
HEADLINE_KERNELS = (
    {"family": "table", "variant": "exact_f32", "baseline": "bandwidth",
     "what": "exact f32 table of a call at its largest size vs the streaming store of the same bytes"},
    {"family": "scores", "variant": "blas_f32", "baseline": "sgemm",
     "what": "TENER scores (content, _shift of the query term, _transpose_shift of the key term) vs sgemm of q k^T "
             "alone, same shape (sgemm time ÷ time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-tener)"
SIN_CLAIMS_LINK = "[sinusoidal claims](../sinusoidal/claims.md#scheme-sinusoidal)"
L = 5
BASE = 10000.0
# (c): d_head = D_HEAD, one head, zero biases, every key zero (equal contents: the content term and the key term
# k.R(i - j) vanish), so the score of query i and key j is q.R(j - i), unscaled (TENER's default). A call of
# SCORE_L = 2 HALF + 1 tokens, every query the same q; the middle row (i = HALF) sees j - i = -HALF .. HALF. Two
# queries: q = R(T0), the table row of offset +T0 computed here (a query that looks for the key T0 after it: a
# readable peak), and a seeded draw of N(0, 1) float32 numbers (a query that was not chosen for its curve).
D_HEAD, HALF, T0 = 16, 40, 6
SCORE_L = 2 * HALF + 1
SEED = 20260313             # Python's Mersenne Twister: the same random query on every run
# (c): the absolute encoding beside it: the marian preset (the [sin | cos] halves of 10000^(-2t/d), exact) of the same
# width, PE(p).PE(p + k) at p = HALF for k = -HALF .. HALF, from `posenc table sinusoidal` of positions 0 .. 2 HALF.
ABS_PRESET = "marian"
# (c): the CLI's float64 scores (and the absolute dot products) against the sums computed here (math.fsum) must agree
# to within TOL of the sum of the magnitudes of their terms (DESIGN.md §3; a float64 dot product of 16 terms is off by
# well under 1e-14 of it); a curve is symmetric when max |f(k) - f(-k)| is within TOL of its largest magnitude, and
# direction-aware when that maximum exceeds ASYM_MIN (TENER's scores here are O(1)).
TOL = 1e-12
ASYM_MIN = 1e-3


# ---- the definition, here in Python -------------------------------------------------------------------------

def frequencies(d_head: int) -> list:
    """TENER's w_k = exp(-k ln(10000) / (h - 1)), h = d_head // 2 pairs (the tensor2tensor / fairseq denominator)."""
    h = d_head // 2
    return [math.exp(-k * math.log(BASE) / (h - 1)) for k in range(h)]


def table_row(t: int, d_head: int) -> list:
    """R(t) = [sin(t w_k) | cos(t w_k)] in double, a zero column appended for an odd d_head."""
    return halves_row(t, frequencies(d_head)) + [0.0] * (d_head % 2)


def absolute_frequencies(dim: int) -> list:
    """The absolute (paper) encoding's w_t = 10000^(-2t/dim), t < dim / 2."""
    return [BASE ** (-2.0 * t / dim) for t in range(dim // 2)]


def queries(d_head: int) -> list:
    """[(label, q)]: q = R(T0) and q = d_head float32 numbers drawn N(0, 1) (seeded)."""
    rng = random.Random(SEED)
    return [(f"q = R({T0})", table_row(T0, d_head)),
            (f"q ~ N(0, 1) (seed {SEED})", [f32(rng.gauss(0.0, 1.0)) for _ in range(d_head)])]


def score_errors(rows: list, q: list, d_head: int) -> tuple:
    """(largest relative_error, i, j) of an unscaled score matrix whose query rows are all q and whose keys are all
    zero, zero biases: each score q.R(j − i) (the content term and k.R(i − j) vanish)."""
    want, worst = {}, (0.0, 0, 0)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            if j - i not in want:
                want[j - i] = dot_term(q, table_row(j - i, d_head), 1.0)
            err = relative_error(v, want[j - i])
            if err > worst[0]:
                worst = (err, i, j)
    return worst


def middle_curve(rows: list) -> dict:
    """{j − i: score} of the middle row of a square matrix (i = len // 2)."""
    m = len(rows) // 2
    return {j - m: v for j, v in enumerate(rows[m])}


def asymmetry(curve: dict) -> tuple:
    """(max |f(k) − f(−k)|, the k > 0 where it is largest) over the k of the curve with −k in it."""
    best = (0.0, 0)
    for k in sorted(curve):
        if k > 0 and -k in curve and abs(curve[k] - curve[-k]) > best[0]:
            best = (abs(curve[k] - curve[-k]), k)
    return best


def absolute_curve(rows: list, p: int) -> dict:
    """{k: PE(p).PE(p + k)} (math.fsum) for every p + k a row of `rows` (the table of positions 0, 1, ..)."""
    return {k - p: math.fsum(a * b for a, b in zip(rows[p], rows[k])) for k in range(len(rows))}


def closed_form(k: int, dim: int) -> tuple:
    """(Σ_t cos(k w_t), dim / 2): the absolute encoding's PE(p).PE(p + k) in the reals (sin a sin b + cos a cos b =
    cos(a − b): p cancels), and a bound on the sum of the magnitudes of its terms (|sin a sin b| + |cos a cos b| <= 1
    per pair), what its check is held relative to."""
    return math.fsum(math.cos(k * w) for w in absolute_frequencies(dim)), dim / 2


# ---- (c) TENER against the absolute encoding ---------------------------------------------------------------------

def _direction_curves(ctx, src: RelativeCli) -> tuple:
    name = "fig-tener-direction"
    d, n = D_HEAD, SCORE_L
    tener, worst, scales_ok = [], (0.0, "", 0, 0), True
    for tag, (label, q) in zip(("r", "n"), queries(d)):
        out = src.scores(("scores", SCHEME), (("--q", f"q-{tag}.npy", (n, d), q * n),
                                              ("--k", "k.npy", (n, d), [0.0] * (n * d))), n, n)
        if out is None:
            return not_drawn(name, src.error), ""
        scales_ok = scales_ok and out["scale"] == 1.0
        err = score_errors(out["scores"], q, d)
        if err[0] >= worst[0]:
            worst = (err[0], label, err[1], err[2])
        curve = middle_curve(out["scores"])
        mag = max(dot_term(q, table_row(t, d), 1.0)[1] for t in curve)
        tener.append((label, curve, asymmetry(curve), mag))
    args = ("table", "sinusoidal", "--preset", ABS_PRESET, "--dim", str(d), "--positions", f"0:{n}", "--dtype", "f64")
    t = src.table(args, "positions", n, d)
    if t is None:
        return not_drawn(name, src.error), ""
    pos_ok = t["positions"] == list(range(n))
    absolute = absolute_curve(t["rows"], HALF)
    abs_err = max(abs(v - closed_form(k, d)[0]) / closed_form(k, d)[1] for k, v in absolute.items())
    abs_asym, _ = asymmetry(absolute)
    abs_sym = abs_asym <= TOL * d / 2
    (ql, qc, (qa, _), qm), (nl, nc, (na, nk), nm) = tener
    series = [Series(f"TENER, q = R({T0})", sorted(qc.items()), "lines lw 2"),
              Series("TENER, q ~ N(0, 1)", sorted(nc.items()), "lines lw 2 dt 4"),
              Series("absolute: PE(p).PE(p + k)", sorted(absolute.items()), "lines lw 2 dt 2")]
    ys = [v for c in (qc, nc, absolute) for v in c.values()]
    lo, hi = min(ys), max(ys)
    pad = 0.05 * (hi - lo or 1)
    series.append(Series("offset 0", [(0, lo - pad), (0, hi + pad)], "lines lw 1", dashed=True, colour="#000000"))
    plot = Plot(name=name, title=f"TENER's score against the signed offset vs the absolute sinusoid's dot product "
                                 f"(d = {d})",
                xlabel="offset: j - i (TENER, key minus query) or k (absolute)",
                ylabel="score (unscaled) / dot product", series=series, xrange=(-HALF, HALF),
                yrange=(lo - pad, hi + pad), key="below left horizontal",
                extra=["set bmargin 7"])               # gnuplot's own margin puts the key over the x label here
    tener_ok = worst[0] <= TOL
    cap = (f"**(c) Direction: TENER against the absolute sinusoid.** TENER's score of a fixed query against the signed "
           f"offset j − i (key minus query), d_head = {d} (h = {d // 2} pairs, w_k = exp(−k ln 10000 / {d // 2 - 1})), "
           "one head, zero biases, every key zero (equal key contents: the content term and the key term k·R(i − j) "
           "vanish), so the score is q·R(j − i), unscaled (TENER's default), for two queries: q = R("
           f"{T0}) (the table row of offset +{T0}, computed here) and q drawn N(0, 1) in float32 (Python's random, "
           f"seed {SEED}). The scores are the CLI's: `posenc scores tener --q <q in every row> --k <zeros> --format "
           f"json`, float64, {n} × {n}; drawn is the middle row (i = {HALF}: j − i = −{HALF} .. {HALF}). Beside them, "
           f"the absolute encoding's PE(p)·PE(p + k) against k, p = {HALF} (`posenc table sinusoidal --preset "
           f"{ABS_PRESET} --dim {d} --positions 0:{n} --dtype f64 --format json`: [sin | cos] of p 10000^(−2t/{d})). "
           f"**TENER's curve is not symmetric**: for q = R({T0}), score(+{T0}) = {md.num(qc[T0])} but "
           f"score(−{T0}) = {md.num(qc[-T0])} (largest |score(k) − score(−k)| = {md.num(qa)}); for the random q, "
           f"largest {md.num(na)} (score(+{nk}) = {md.num(nc[nk])}, score(−{nk}) = {md.num(nc[-nk])}); both above "
           f"{md.num(ASYM_MIN)}: {yes(qa > ASYM_MIN and na > ASYM_MIN)}: sin is odd, R(−t) is R(t) with its sin half "
           "negated, so the query term sees the sign of the offset and can tell a key after the query from one "
           f"before it. **The absolute one is symmetric**: max |f(k) − f(−k)| = {md.num(abs_asym)}, within "
           f"{md.num(TOL)} of its largest magnitude d/2 = {md.num(d // 2)}: {yes(abs_sym)} (PE(p)·PE(p + k) = Σ_t "
           "cos(k w_t): distance-aware, direction-blind; p cancels). Checked here: every entry of both TENER matrices "
           "(not only the row drawn) equals (q + r_w_bias)·R(j − i) + k·R(i − j) with k = 0 and zero biases, "
           f"computed here (math.sin / math.cos of (j − i) w_k, math.fsum), to within {md.num(TOL)} of Σ_c |q_c "
           f"R_c|: {yes(tener_ok)} (largest {md.num(worst[0])} of it"
           + (f", {worst[1]} at ({worst[2]}, {worst[3]})" if worst[0] > 0 else "")
           + f"); the CLI's scale is 1 (unscaled): {yes(scales_ok)}; the absolute dot products equal Σ_t cos(k w_t) "
           f"computed here to within {md.num(TOL)} of d/2: {yes(abs_err <= TOL)} (largest {md.num(abs_err)} of it), "
           f"the table's positions are 0 .. {n - 1}: {yes(pos_ok)}. See {CLAIMS_LINK} (TENER-DIR-1, TENER-ODD-1, "
           f"TENER-SCORES-1) and the {SIN_CLAIMS_LINK} (SIN-DOT-1, SIN-DOT-2).")
    return ctx.renderer.image(plot, "TENER score against the signed offset beside the absolute sinusoid's dot "
                                    "product"), cap


def figures(ctx) -> list:
    out = []
    with tempfile.TemporaryDirectory(prefix="posenc-report-tener.") as tmp:
        src = RelativeCli(ctx.cli, tmp)
        for key in (False, True):
            out.append(index_figure(
                ctx, SCHEME, ("--key",) if key else (), L, L,
                (lambda i, j: L + i - j) if key else (lambda i, j: L + j - i),
                (f"({'b' if key else 'a'}) The row of the table (t = c - L, L = {L}) the "
                 + ("key term k_j . R(i - j) of each entry reads (_transpose_shift): L + i - j."
                    if key else "query term (q_i + r_w_bias) . R(j - i) of each entry reads (_shift): L + j - i.")
                 + " Every entry is defined; both signs of the distance occur, which is what lets TENER tell a key "
                   "before the query from one after it."),
                CLAIMS_LINK + " (TENER-SHIFT-1, TENER-DIR-1)", src))
        out.append(_direction_curves(ctx, src))
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc index tener`, `posenc scores tener` and `posenc "
                             f"table sinusoidal`, `--format json`; {src.calls} invocations)" if src.error is None
                             else f"not drawn: {md.cell(src.error)}"))
    return out
