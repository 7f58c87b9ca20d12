"""Report module of XLNet's relative attention (Yang et al. 2019; HF modeling_xlnet.py): its speed headline; (a),
(b) the rows of the sinusoid table each score entry reads in a bi and a uni call with memory (the rel_shift_bnij
column), uni's undefined region marked; (c) the positional score term of a fixed query against the signed distance
delta = q_i - j in a bi call, forward and backward (bi_data's second half: pos_seq negated), the backward curve the
forward one mirrored.

Every number comes from figures-xlnet.json (schemes/xlnet/figures.cpp, run by posenc_figures); this module only
draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import Plot, Series
from ..relative_figures import index_figure, yes

SCHEME = "xlnet"

CLAIMS_LINK = "[claims](claims.md#scheme-xlnet)"


# ---- (c) forward and backward against the signed distance ----------------------------------------------------------

@figure("score_direction", "fig-xlnet-score-direction")
def _direction_curves(ctx, fig: dict, name: str) -> tuple:
    d, half, n, t0 = fig["d_model"], fig["half"], fig["length"], fig["t0"]
    lo, hi = fig["yrange"]
    series = [Series("forward (pos_seq = delta)", [tuple(p) for p in fig["forward"]], "lines lw 2"),
              Series("backward (pos_seq = -delta)", [tuple(p) for p in fig["backward"]], "lines lw 2 dt 2"),
              Series("delta = 0", [(0, lo), (0, hi)], "lines lw 1", dashed=True, colour="#000000")]
    plot = Plot(name=name, title=f"XLNet (bi) positional score term against the signed distance (d_model {d}, r = I, "
                                 f"q = R({t0}))",
                xlabel="signed distance delta = q_i - j (> 0: key before the query)",
                ylabel="scale <q, R(pos_seq)>", series=series, xrange=(-half, half), yrange=(lo, hi),
                key="below left horizontal")
    cap = (f"**(c) Score against the signed distance, forward and backward.** attn_type bi, d_model = d_head = {d}, "
           f"one head, r the identity (as [{d}, 1, {d}]: the positional keys are R itself), zero biases, every key "
           "zero (ac = 0), no token types, so the score of key j is scale ⟨q, R(pos)⟩ with pos = δ = q_i − j forward "
           f"and pos = −δ backward (bi_data's second half of the batch, −pos_seq), scale = 1/√{d}; q = R({t0}) (the "
           f"table row of distance {t0}, from the plan's forward table). The scores are XlnetPlan::scores in float64 "
           f"(`posenc scores xlnet --d-model {d} [--direction backward] --q <q in every row> --k <zeros> --r "
           f"<identity>` gives the same values), {n} × {n} (no memory); drawn is the middle row (q_i = {half}: δ = "
           f"{half} .. −{half}, both signs). That every entry of both matrices is scale Σ_c q_c R(±δ)_c, scale "
           f"1/√{d} by default, is a claim (XLNET-SCORES-1, held against the oracle). The forward curve peaks at "
           f"δ = {t0} (the key {t0} before the query): {yes(fig['peak_forward_at_t0'])}, and tells the two sides "
           f"apart (score({t0}) = {md.num(fig['score_t0'])}, score(−{t0}) = {md.num(fig['score_minus_t0'])}; "
           f"largest |score(δ) − score(−δ)| {md.num(fig['asymmetry'])}). The backward curve is the forward one "
           f"mirrored, peaking at δ = −{t0}: {yes(fig['peak_backward_at_minus_t0'])}; score_bwd(δ) = score_fwd(−δ) "
           f"between the plan's two matrices to {md.num(fig['mirror'])}: {yes(fig['mirror_ok'])}. That the backward "
           f"table (pos_seq {n} .. −{n - 1} negated) is the forward one with its sin half negated (R(−p) = R(p) with "
           "sin negated), bit for bit, and that the backward score is the forward one with the sin rows of r negated, "
           f"are claims (XLNET-TABLE-1, XLNET-MIRROR-1). See {CLAIMS_LINK} (XLNET-SCORES-1, "
           "XLNET-MIRROR-1, XLNET-DIR-1).")
    return ctx.renderer.image(plot, "XLNet score term against the signed distance, forward and backward"), cap


def _index(data: FigureData, attn: str) -> tuple:
    def what(lq, lk):
        return (f"({'a' if attn == 'bi' else 'b'}) attn_type {attn}: the row of the table (pos_seq klen .. "
                f"{'-qlen + 1' if attn == 'bi' else '0'}) each score entry reads, {lq} queries after {lk - lq} memory "
                "keys: c(i, j) = qlen - i + j. " + ("Every entry is defined (the first row, pos_seq = klen, is never "
                                                   "read)." if attn == "bi" else
                                                   "The marked entries (j > q_i) are rel_shift_bnij's junk (the next "
                                                   "row's values); posenc's scores hold -inf there."))
    return index_figure(data, f"index_{attn}", SCHEME, what, "XLNET-INDEX-1",
                        CLAIMS_LINK + " (XLNET-SHIFT-1, XLNET-INDEX-1)", f"XlnetPlan::indices (attn_type {attn})",
                        f"--attn-type {attn}")


def figures(ctx, data: FigureData) -> list:
    return [_index(data, "bi"), _index(data, "uni"), _direction_curves(ctx, data)]
