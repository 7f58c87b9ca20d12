"""Report module of XLNet's relative attention (Yang et al. 2019; HF modeling_xlnet.py): its speed headline; (a),
(b) the rows of the sinusoid table each score entry reads in a bi and a uni call with memory (the rel_shift_bnij
column), uni's undefined region marked; (c) the positional score term of a fixed query against the signed distance
delta = q_i - j in a bi call, forward and backward (bi_data's second half: pos_seq negated), the backward curve the
forward one mirrored.

The index matrices, the scores and the tables come from the posenc CLI (`posenc index|scores|table xlnet --format
json`; the scores of .npy inputs written here: r the identity, zero biases and keys, one fixed query); the checks
against the definition (spec/include/posenc/xlnet_spec.hpp, CONVENTIONS.md §2.9: c(i, j) = qlen - i + j, uni: j <=
q_i only; R(pos) = [sin | cos](pos 10000^(-2k/d_model)) of pos = sigma delta) are computed here. Without a CLI the
figures are not drawn and the page says why."""
from __future__ import annotations

import math
import tempfile

from .. import md
from ..gnuplot import Plot, Series
from ..relative_figures import RelativeCli, dot_term, halves_row, index_figure, not_drawn, relative_error, yes

SCHEME = "xlnet"

# benchmarks/xlnet_bench.cpp (benchmarks/relative_bench.hpp): table/<variant>/L:<rows>/d:1024/threads:<n> and
# scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n> (a bi call: blas_f32 vs sgemm_f32; direct_f32 at L 512).
HEADLINE_KERNELS = (
    {"family": "table", "variant": "exact_f32", "baseline": "bandwidth",
     "what": "exact f32 table of a bi call at its largest size vs the streaming store of the same bytes"},
    {"family": "scores", "variant": "blas_f32", "baseline": "sgemm",
     "what": "XLNet bi scores (ac + rel_shift_bnij(bd)) vs sgemm of q k^T alone, same shape (sgemm time ÷ time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-xlnet)"
LQ, LK = 4, 7
BASE = 10000.0
# (c): d_model = d_head = D_MODEL, one head, r the identity as [d_model, 1, d_head] (the positional keys are R
# itself), zero biases, every key zero (ac = 0), no token types (no segment term): the score of key j is scale <q,
# R(sigma delta)>. A bi call of L = 2 HALF + 1 queries and keys (no memory; every query the same q); the middle row
# (q_i = HALF) sees delta = HALF .. -HALF. q = R(T0), the table row of distance T0 computed here: a query that looks
# for the key T0 back (a readable peak; the check computes <q, R> whatever q is).
D_MODEL, HALF, T0 = 16, 40, 12
L = 2 * HALF + 1
# (c): the CLI's float64 scores against scale Σ_c q_c R_c computed here (math.fsum) must agree to within SCORE_TOL of
# scale Σ_c |q_c R_c| (DESIGN.md §3: a sum of products is held relative to the sum of the magnitudes of its terms; a
# float64 dot product of 16 terms is off by well under 1e-14 of it).
SCORE_TOL = 1e-12


# ---- the definition, here in Python -------------------------------------------------------------------------

def frequencies(d_model: int) -> list:
    """w_k = 10000^(-2k/d_model), k < d_model / 2, in double (the exact regime's inv_freq)."""
    return [BASE ** (-2.0 * k / d_model) for k in range(d_model // 2)]


def table_row(pos: int, d_model: int) -> list:
    """R(pos) = [sin(pos w_k) | cos(pos w_k)] in double (pos of either sign)."""
    return halves_row(pos, frequencies(d_model))


def fixed_query(d_model: int) -> list:
    """q = R(T0)."""
    return table_row(T0, d_model)


def sin_negated(row: list) -> list:
    """The row with its sin half (the first d_model / 2 entries) negated: R(-pos) from R(pos)."""
    h = len(row) // 2
    return [-v for v in row[:h]] + list(row[h:])


def score_errors(rows: list, q: list, d_model: int, sigma: int, scale: float) -> tuple:
    """(largest relative_error, i, j) of a bi score matrix whose query rows are all q, whose keys are all zero and
    whose r is the identity: each score scale <q, R(sigma delta)>, delta = q_i - j, q_i = Lk − Lq + i."""
    lq, lk = len(rows), len(rows[0]) if rows else 0
    want, worst = {}, (0.0, 0, 0)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            delta = lk - lq + i - j
            if delta not in want:
                want[delta] = dot_term(q, table_row(sigma * delta, d_model), scale)
            err = relative_error(v, want[delta])
            if err > worst[0]:
                worst = (err, i, j)
    return worst


def middle_curve(rows: list) -> dict:
    """{delta: score} of the middle row of a square matrix (q_i = i = len // 2: delta = q_i − j of both signs)."""
    m = len(rows) // 2
    return {m - j: v for j, v in enumerate(rows[m])}


def via_table(table: dict, q: list, scale: float, pos: int) -> tuple:
    """dot_term of q with the CLI table's row whose "position" is pos (table: the JSON of `posenc table xlnet`)."""
    return dot_term(q, table["table"][table["position"].index(pos)], scale)


# ---- (c) forward and backward against the signed distance ----------------------------------------------------------

def _direction_curves(ctx, src: RelativeCli) -> tuple:
    name = "fig-xlnet-score-direction"
    d, q = D_MODEL, fixed_query(D_MODEL)
    inputs = (("--q", "q.npy", (L, d), q * L), ("--k", "k.npy", (L, d), [0.0] * (L * d)),
              ("--r", "r.npy", (d, 1, d), [1.0 if a == b else 0.0 for a in range(d) for b in range(d)]))
    geometry = ("--query-length", str(L), "--key-length", str(L))
    scale = 1 / math.sqrt(d)
    got, tables, worst, scales_ok = {}, {}, (0.0, None, 0, 0), True
    for direction, sigma in (("forward", 1), ("backward", -1)):
        flag = ("--direction", direction) if sigma < 0 else ()
        out = src.scores(("scores", SCHEME, "--d-model", str(d), *flag), inputs, L, L)
        targs = ("table", SCHEME, "--d-model", str(d), *flag, *geometry, "--dtype", "f64")
        t = src.table(targs, "position", 2 * L, d) if out else None
        if t is None:
            return not_drawn(name, src.error), ""
        scales_ok = scales_ok and abs(out["scale"] - scale) <= 1e-15 * scale
        err = score_errors(out["scores"], q, d, sigma, scale)
        if worst[1] is None or err[0] > worst[0]:
            worst = (err[0], direction, err[1], err[2])
        got[direction], tables[direction] = middle_curve(out["scores"]), t
    fwd, bwd = got["forward"], got["backward"]
    deltas = range(-HALF, HALF + 1)
    tf, tb = tables["forward"], tables["backward"]
    # pos_seq klen .. -qlen + 1 forward, negated backward (every -delta drawn is a row of the forward table)
    pos_ok = tf["position"] == list(range(L, -L, -1)) and tb["position"] == [-p for p in tf["position"]]
    mirror_table = all(b == sin_negated(f) for f, b in zip(tf["table"], tb["table"]))
    identity = max(relative_error(bwd[x], via_table(tf, q, scale, -x)) for x in deltas) if pos_ok else math.inf
    mirror = max(abs(bwd[x] - fwd[-x]) for x in deltas)
    mag = max(dot_term(q, table_row(x, d), scale)[1] for x in deltas)
    asym = max(abs(fwd[x] - fwd[-x]) for x in deltas)
    peak_f, peak_b = max(deltas, key=lambda x: fwd[x]), max(deltas, key=lambda x: bwd[x])
    lo = min(min(c.values()) for c in got.values())
    hi = max(max(c.values()) for c in got.values())
    pad = 0.05 * (hi - lo or 1)
    series = [Series("forward (pos_seq = delta)", sorted(fwd.items()), "lines lw 2"),
              Series("backward (pos_seq = -delta)", sorted(bwd.items()), "lines lw 2 dt 2"),
              Series("delta = 0", [(0, lo - pad), (0, hi + pad)], "lines lw 1", dashed=True, colour="#000000")]
    plot = Plot(name=name, title=f"XLNet (bi) positional score term against the signed distance (d_model {d}, r = I, "
                                 f"q = R({T0}))",
                xlabel="signed distance delta = q_i - j (> 0: key before the query)",
                ylabel="scale <q, R(pos_seq)>", series=series, xrange=(-HALF, HALF), yrange=(lo - pad, hi + pad),
                key="below left horizontal")
    cap = (f"**(c) Score against the signed distance, forward and backward.** attn_type bi, d_model = d_head = {d}, "
           f"one head, r the identity (as [{d}, 1, {d}]: the positional keys are R itself), zero biases, every key "
           "zero (ac = 0), no token types, so the score of key j is scale ⟨q, R(pos)⟩ with pos = δ = q_i − j forward "
           f"and pos = −δ backward (bi_data's second half of the batch, −pos_seq), scale = 1/√{d}; q = R({T0}) (the "
           f"table row of distance {T0}, computed here). The scores are the CLI's: `posenc scores xlnet --d-model {d} "
           "[--direction backward] --q <q in every row> --k <zeros> --r <identity> --format json`, float64, "
           f"{L} × {L} (no memory); drawn is the middle row (q_i = {HALF}: δ = {HALF} .. −{HALF}, both signs). Every "
           f"entry of both matrices equals scale Σ_c q_c R(±δ)_c computed here (math.sin / math.cos of pos "
           f"10000^(−2k/{d}), math.fsum) to within {md.num(SCORE_TOL)} of scale Σ_c |q_c R_c|: "
           f"{yes(worst[0] <= SCORE_TOL)} (largest {md.num(worst[0])} of it"
           + (f", {worst[1]} at ({worst[2]}, {worst[3]})" if worst[0] > 0 else "")
           + f"); the CLI's scale is 1/√{d}: {yes(scales_ok)}. The forward curve peaks at δ = {T0} (the key {T0} "
           f"before the query): {yes(peak_f == T0)}, and tells the two sides apart (score({T0}) = "
           f"{md.num(fwd[T0])}, score(−{T0}) = {md.num(fwd[-T0])}; largest |score(δ) − score(−δ)| "
           f"{md.num(asym)}). The backward curve is the forward one mirrored, peaking at δ = −{T0}: "
           f"{yes(peak_b == -T0)}; the identity score_bwd(δ) = scale ⟨q, R_fwd[row of −δ]⟩, with the row of −δ taken "
           f"from the CLI's forward table (`posenc table xlnet --d-model {d} --query-length {L} --key-length {L} "
           f"--dtype f64 --format json`), holds to within {md.num(SCORE_TOL)}: {yes(identity <= SCORE_TOL)} (largest "
           f"{md.num(identity)} of the terms' magnitude), and score_bwd(δ) = score_fwd(−δ) between the CLI's two "
           f"matrices to {md.num(mirror)}: {yes(mirror <= SCORE_TOL * mag)}. The tables' \"position\" is "
           f"{L} .. −{L - 1} forward and its negation backward: {yes(pos_ok)}; the backward table is the forward one "
           f"with its sin half negated (R(−p) = R(p) with sin negated), exactly: {yes(mirror_table)}. See "
           f"{CLAIMS_LINK} (XLNET-SCORES-1, XLNET-MIRROR-1, XLNET-DIR-1).")
    return ctx.renderer.image(plot, "XLNet score term against the signed distance, forward and backward"), cap


def figures(ctx) -> list:
    out = []
    with tempfile.TemporaryDirectory(prefix="posenc-report-xlnet.") as tmp:
        src = RelativeCli(ctx.cli, tmp)
        for attn in ("bi", "uni"):
            def want(i, j, attn=attn):
                qi = LK - LQ + i
                return LQ - i + j if attn == "bi" or j <= qi else None
            out.append(index_figure(
                ctx, SCHEME, ("--attn-type", attn), LQ, LK, want,
                f"({'a' if attn == 'bi' else 'b'}) attn_type {attn}: the row of the table (pos_seq klen .. "
                f"{'-qlen + 1' if attn == 'bi' else '0'}) each score entry reads, {LQ} queries after {LK - LQ} memory "
                "keys: c(i, j) = qlen - i + j. " + ("Every entry is defined (the first row, pos_seq = klen, is never "
                                                    "read)." if attn == "bi" else
                                                    "The marked entries (j > q_i) are rel_shift_bnij's junk (the next "
                                                    "row's values); posenc's scores hold -inf there."),
                CLAIMS_LINK + " (XLNET-SHIFT-1, XLNET-INDEX-1)", src))
        out.append(_direction_curves(ctx, src))
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc index xlnet`, `posenc scores xlnet` and `posenc "
                             f"table xlnet`, `--format json`; {src.calls} invocations)" if src.error is None
                             else f"not drawn: {md.cell(src.error)}"))
    return out
