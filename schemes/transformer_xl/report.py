"""Report module of Transformer-XL's relative attention (Dai et al. 2019; kimiyoung/transformer-xl
mem_transformer.py): its speed headline; (a) the rows of the sinusoid table each score entry of a call with memory
reads (the rel_shift column), with the upper-right region the code's _rel_shift fills with junk marked — posenc's
scores hold -inf there; (b) the positional score term of a fixed query against the distance delta = q_i - j, with and
without clamp_len (flat beyond it); (c) the clamp of the txl-wt103-base preset: the first rows of its table (the
distances beyond clamp_len) are one row.

Every number comes from figures-transformer_xl.json (schemes/transformer_xl/figures.cpp, run by posenc_figures);
this module only draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import Plot, Series
from ..relative_figures import index_figure, yes

SCHEME = "transformer_xl"

CLAIMS_LINK = "[claims](claims.md#scheme-transformer_xl)"


# ---- (b) the score against the distance -----------------------------------------------------------------------

@figure("score_distance", "fig-transformer_xl-score-distance")
def _score_curves(ctx, fig: dict, name: str) -> tuple:
    d, klen, lq, clamp, t0 = fig["d_model"], fig["key_length"], fig["query_length"], fig["clamp_len"], fig["t0"]
    lo, hi = fig["yrange"]
    series = [Series("clamp_len none (-1)", [tuple(p) for p in fig["free"]], "lines lw 2"),
              Series(f"clamp_len = {clamp}", [tuple(p) for p in fig["clamped"]], "lines lw 2 dt 2"),
              Series(f"delta = {clamp} (clamp_len)", [(clamp, lo), (clamp, hi)], "lines lw 1", dashed=True,
                     colour="#000000")]
    plot = Plot(name=name, title=f"Transformer-XL positional score term against the distance (d_model {d}, r_net = I, "
                                 f"q = R({t0}))",
                xlabel="distance delta = q_i - j (how far back the key is)",
                ylabel="scale <q, R(pos(delta))>", series=series, xrange=(0, klen - 1), yrange=(lo, hi),
                key="below left horizontal")
    tol, mag = md.num(fig["tolerance"]), md.num(fig["magnitude"])
    cap = (f"**(b) Score against distance for a fixed query.** d_model = d_head = {d}, one head, r_net = W_R the "
           f"identity (the positional keys are R itself), u = v = 0 and every key zero (AC = 0), so the score of key "
           f"j is scale ⟨q, R(pos(δ))⟩, δ = q_i − j, scale = 1/√{d}; q = R({t0}) (the table row of distance {t0}, "
           f"from the plan's exact table: a query that looks for the key {t0} back). The scores are "
           f"TransformerXlPlan::scores in float64 (`posenc scores transformer_xl --d-model {d} [--clamp-len {clamp}] "
           "--q <q in every row> --k <zeros> --r-net <identity>` gives the same values), "
           f"{lq} queries after {klen - lq} memory keys; drawn is the last row (q_i = {klen - 1}: δ = 0 .. "
           f"{klen - 1}). Only δ ≥ 0 is embedded (keys after the query are rel_shift's junk, −inf). That every entry "
           "of both score matrices (the −inf ones exactly where j > q_i) is scale Σ_c q_c R(pos(δ))_c, scale "
           f"1/√{d} by default, is a claim (TXL-SCORES-1, held against the oracle). Without a clamp the curve peaks "
           f"at δ = {t0}: {yes(fig['peak_at_t0'])} (at δ = {fig['peak']}, {md.num(fig['peak_score'])}; scale · "
           f"d_model/2 = {md.num(fig['scale_half_d'])}). With clamp_len = {clamp} it is the unclamped curve up to "
           f"δ = {clamp}: {yes(fig['same_below_ok'])} (largest difference {md.num(fig['same_below'])}), and flat "
           f"beyond it, every δ ≥ {clamp} reading the row of {clamp}: {yes(fig['flat_ok'])} (largest difference "
           f"from the score at δ = {clamp}: {md.num(fig['flat'])}; both to within {tol} of the largest scale Σ_c "
           f"|q_c R_c|, {mag}), where the unclamped curve moves by up to {md.num(fig['moves'])}. See "
           f"{CLAIMS_LINK} (TXL-SCORES-1, TXL-TABLE-1).")
    return ctx.renderer.image(plot, "Transformer-XL score term against the distance"), cap


# ---- (c) the preset's clamp --------------------------------------------------------------------------------------

@figure("clamp", "table-transformer_xl-clamp", "table")
def _clamp_table(ctx, fig: dict, name: str) -> tuple:
    preset, d, clamp, klen, extra = fig["preset"], fig["d_model"], fig["clamp_len"], fig["key_length"], fig["extra"]
    h, shown, dev = d // 2, len(fig["rows"]), fig["from_exact"]
    rows = [[md.num(r["row"]), md.num(r["distance"]), md.num(r["position"]), *[md.num(v, 9) for v in r["values"]],
             "yes" if r["same_as_row0"] else "no"] for r in fig["rows"]]
    body = md.table(["row c", "distance klen − 1 − c", "position", "R[c][0] = sin(pos w_0)",
                     f"R[c][{h}] = cos(pos w_0)", "R[c][1] = sin(pos w_1)", f"R[c][{h + 1}] = cos(pos w_1)",
                     f"= row 0 (all {d} columns)"], rows, ["r", "r", "r", "r", "r", "r", "r", "l"])
    emulated = fig["regime"] == "emulated"
    cap = (f"**(c) The preset's clamp.** {md.code(preset, table=False)} (d_model {d}, clamp_len {clamp}, "
           f"{fig['regime']} regime: PositionalEmbedding's float32 steps) at klen = clamp_len + "
           f"{extra + 1} = {klen}: the first {shown} of its {klen} rows (TransformerXlPlan's table, f64: `posenc "
           f"table transformer_xl --preset {preset} --key-length {klen} --dtype f64` gives the same values; row c is "
           f"the distance klen − 1 − c, pos_seq descending). Compared: rows "
           f"0 .. {extra} (distances {klen - 1} .. {clamp}, every distance ≥ clamp_len) with row 0, all {d} columns: "
           f"the same numbers: {yes(fig['clamped_same'])}; row {extra + 1} (distance {clamp - 1}, below the clamp) "
           f"differs from them: {yes(fig['next_differs'])}. The \"position\" of every row is min(klen − 1 − c, "
           f"{clamp}) (transformer_xl_position). That every entry of the table "
           + (f"is the float32 number of PositionalEmbedding's steps (inv_freq = RN32(1 / RN32(10000 ** RN32(2k / "
              f"{d}))), the angle RN32(pos inv_freq), RN32(sin), RN32(cos)) within one float32 ulp"
              if emulated else "is the real sin / cos within the exact regime's bound")
           + " is a claim (TXL-TABLE-1, held against the oracle); from the real sin / cos (the exact regime's table, "
           f"in double) it is at most {md.num(dev['max'])} (row {dev['row']}, column {dev['column']}). So the model "
           f"sees every key more than {clamp} back at the same position term: beyond clamp_len a longer memory adds "
           f"keys but no new distances. See {CLAIMS_LINK} (TXL-TABLE-1).")
    return body, cap


def figures(ctx, data: FigureData) -> list:
    index = index_figure(
        data, "index", SCHEME,
        lambda lq, lk: f"(a) The row of R each score entry reads, {lq} queries after {lk - lq} memory keys: c(i, j) = "
        "klen - 1 - (q_i - j), the column _rel_shift moves to (i, j). The marked entries (j > q_i) are where "
        "_rel_shift leaves junk (a pad zero at j = q_i + 1, the next row's values beyond); posenc's scores hold -inf "
        "there.",
        "TXL-INDEX-1", CLAIMS_LINK + " (TXL-SHIFT-1, TXL-INDEX-1)", "TransformerXlPlan::indices", "")
    return [index, _score_curves(ctx, data), _clamp_table(ctx, data)]
