"""Report module of NEZHA's functional relative positions (Wei et al. 2019; HF NezhaRelativePositionsEncoding): its
speed headline, the fixed table against its row r (the sinusoid of the shifted index r = clip(j − q_i, −K, K) + K, so
row K — distance 0 — is not sin 0 / cos 0), the relative score term of a fixed query against the offset u = j − q_i
(flat beyond ±K), HF's float32 table against the exact one, a small index matrix, and the preset side by side with
the exact regime.

Every number comes from figures-nezha.json (schemes/nezha/figures.cpp, run by posenc_figures); this module only
draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import Plot, Series

SCHEME = "nezha"

CLAIMS_LINK = "[claims](claims.md#scheme-nezha)"


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _points(pts: list) -> list:
    return [tuple(x) for x in pts]


# ---- (a) the table against r --------------------------------------------------------------------------------

@figure("table", "fig-nezha-table")
def _table_curves(ctx, fig: dict, name: str) -> tuple:
    k, depth, tl, preset = fig["k"], fig["depth"], fig["low_pair"], fig["preset"]
    w = md.num(fig["low_frequency"])
    c0, c1, c2, c3 = (col["c"] for col in fig["columns"])
    labels = [(f"c = {c0}: sin(r w_0), w_0 = 1", "lines lw 1"), (f"c = {c1}: cos(r w_0)", "lines lw 1 dt 2"),
              (f"c = {c2}: sin(r w_{tl}), w_{tl} = {w}", "lines lw 3"), (f"c = {c3}: cos(r w_{tl})", "lines lw 3 dt 2")]
    series = [Series(label, _points(col["points"]), style) for col, (label, style) in zip(fig["columns"], labels)]
    series.append(Series(f"r = K = {k} (distance 0)", [(k, -1.05), (k, 1.05)], "lines lw 1", dashed=True,
                         colour="#000000"))
    dev = fig["libm_difference"]
    plot = Plot(name=name, title=f"NEZHA table T[r][c] against its row r = 0..2K (K = {k}, depth {depth}, exact)",
                xlabel="table row r = clip(j - q_i, -K, K) + K", ylabel="T[r][c]", series=series,
                xrange=(0, 2 * k), yrange=(-1.1, 1.1), key="below left horizontal")
    cap = (f"**(a) The table is the sinusoid of the shifted index r.** Columns {c0}, {c1} (w_0 = 1) and {c2}, "
           f"{c3} (w_{tl} = 10000^(−{c2}/{depth}) = {w}) of the exact table of {md.code(preset, table=False)}'s shape "
           f"(K = {k}, depth {depth}) against r = 0..{2 * k}; the dashed line is r = K, the row of distance 0 "
           f"(j = q_i). Row 0 (distance −K, and every distance below it) is (0, 1, 0, 1, …): "
           f"{_yes(fig['row_0_is_0_1'])}; row K is (sin K, cos K, …) = ({md.num(fig['row_k'][0])}, "
           f"{md.num(fig['row_k'][1])}, …), not (0, 1, …): {_yes(not fig['row_k_is_0_1'])}. The rows of distances "
           f"±1 are not mirror images: T[K + 1][0] = sin {k + 1} = {md.num(fig['plus_1'])} and T[K − 1][0] = "
           f"sin {k - 1} = {md.num(fig['minus_1'])} (a sinusoid of the signed distance would give ±sin 1 = "
           f"±{md.num(fig['sin_1'])}): T[K + 1][0] ≠ −T[K − 1][0], not antisymmetric across the table: "
           f"{_yes(not fig['antisymmetric'])}. The largest difference of an entry from std::sin / std::cos of "
           f"r 10000^(−2t/depth) evaluated in double is {md.num(dev['max'])}, at r = {dev['r']}, c = {dev['c']}; that "
           "every entry is the real value rounded once is claim NEZHA-TABLE-1 (held against the MPFR oracle). Data: "
           f"nezha_table of the preset in the exact regime, f64 (`posenc table nezha --preset {preset} --regime exact "
           f"--dtype f64` gives the same values). See {CLAIMS_LINK} (NEZHA-TABLE-1).")
    return ctx.renderer.image(plot, "NEZHA table columns against the row r"), cap


# ---- (b) the relative score term against the offset ---------------------------------------------------------

QUERIES = (("row_k", "q = T[K] (row of distance 0)", "lines lw 2"),
           ("ones", "q = (1, ..., 1) / sqrt(depth)", "lines lw 2 dt 2"),
           ("e0", "q = e_0 (unit vector on column 0)", "lines lw 2 dt 4"))


@figure("score_offset", "fig-nezha-score-offset")
def _score_curves(ctx, fig: dict, name: str) -> tuple:
    k, depth, regime, preset = fig["k"], fig["depth"], fig["regime"], fig["preset"]
    lo, hi = fig["y_range"]
    series = [Series(label, _points(fig["curves"][key]), style) for key, label, style in QUERIES]
    for x in (-k, k):
        series.append(Series("u = -K, K (clipping)" if x < 0 else "", [(x, lo), (x, hi)], "lines lw 1",
                             dashed=True, colour="#000000"))
    plot = Plot(name=name, title=f"NEZHA relative score term q.T[r(u)] / sqrt(depth) against the offset u "
                                 f"(K = {k}, depth {depth}, {regime})",
                xlabel="offset u = j - q_i (key minus query)", ylabel="q.T[r(u)] / sqrt(depth)", series=series,
                xrange=(-2 * k, 2 * k), yrange=(lo, hi), key="below left horizontal")
    cap = (f"**(b) Score against offset for a fixed query.** The relative part q·T[r(u)] / √depth of the score "
           f"e(i, j) = (q_i·k_j + q_i·T[r(i, j)]) / √depth, against u = j − q_i in [−2K, 2K] (K = {k}, depth "
           f"{depth}, {md.code(preset, table=False)}'s {regime} table), for three fixed queries (the products summed "
           "over the columns in order). Every curve is flat beyond ±K (one table row each side: clipping): "
           f"{_yes(fig['flat_beyond_k'])}. q = T[K] gives Σ_t cos(clip(u) w_t) / √depth (the K cancels): largest "
           f"difference from that sum evaluated in double {md.num(fig['closed_form_difference'])}, symmetric in u to "
           f"{md.num(fig['symmetry'])}, highest at u = {fig['peak_u']} ({md.num(fig['peak'])}; √depth / 2 = "
           f"{md.num(fig['half_sqrt_depth'])}). A general query sees no symmetry: q = (1, …, 1)/√depth gives "
           f"{md.num(fig['ones_at_minus_1'])} at u = −1 and {md.num(fig['ones_at_1'])} at u = 1; q = e_0 reads "
           f"column 0, sin(clip(u) + K) / √depth, so at distance 0 it is sin {k} / √{depth} = "
           f"{md.num(fig['e0_at_0'])}, not 0. How close the table's entries are to the real sinusoid (hence these "
           "curves to their closed forms) is claims NEZHA-TABLE-1 and NEZHA-TABLE-2's. Data: nezha_table of the "
           f"preset, f64 (`posenc table nezha --preset {preset} --dtype f64` gives the same values), rows read at "
           f"NezhaPlan::index(u). See {CLAIMS_LINK} (NEZHA-SCORES-1).")
    return ctx.renderer.image(plot, "NEZHA relative score term against the offset"), cap


# ---- (c) HF's float32 table against the exact one -----------------------------------------------------------

@figure("hf_vs_exact", "fig-nezha-hf-vs-exact")
def _hf_vs_exact(ctx, fig: dict, name: str) -> tuple:
    k, depth, worst, zero_rows = fig["k"], fig["depth"], fig["largest"], fig["identical_rows"]
    series = [Series("max over columns |T_hf[r][c] - T_exact[r][c]|", _points(fig["differences"]),
                     "linespoints pt 7 ps 0.4"),
              Series("NEZHA-TABLE-2 envelope (max over columns)", _points(fig["envelope"]), "lines lw 1",
                     dashed=True)]
    plot = Plot(name=name, title=f"NEZHA: HF's float32 table against the exact one, per row (K = {k}, depth {depth})",
                xlabel="table row r", ylabel="max over columns |difference|", series=series, logy=10,
                xrange=(0, 2 * k), key="bottom right")
    zero_text = (f"row{'s' if len(zero_rows) > 1 else ''} {', '.join(str(r) for r in zero_rows[:8])}"
                 f"{' …' if len(zero_rows) > 8 else ''} {'are' if len(zero_rows) > 1 else 'is'} identical (left off "
                 "the log axis; row 0 is (0, 1, …) in both)" if zero_rows else "no row is identical")
    cap = (f"**(c) HF's float32 table vs the exact one.** For every row r, the largest difference over the {depth} "
           f"columns between HF's float32 steps (float32 frequencies from torch.exp, float32 angles r·w, sin/cos "
           f"rounded to float32) and the correctly rounded real sin/cos, for K = {k}, depth {depth}; the dashed "
           "curve is NEZHA-TABLE-2's envelope, ulp32(T)/2 + ulp32(a)/2 + r |w32 − w| (+ 2^−50 r w), largest over "
           f"the columns. The largest difference is **{md.num(worst['difference'])}** at r = {worst['r']}, "
           f"c = {worst['c']} ({md.num(worst['hf'], 9)} vs {md.num(worst['exact'], 9)}); it grows with r, the float32 "
           f"frequency's error carried by the position; {zero_text}. That every entry is within its envelope is "
           "claim NEZHA-TABLE-2 (held on the oracle). Every entry of HF's table is a float32 number: "
           f"{_yes(fig['float32_entries'])}; that it is the float32 number of HF's steps, each correctly rounded, is "
           "claim NEZHA-TABLE-1 (held against the oracle's emulation). A model trained with HF's table and a "
           "re-implementation with the exact one differ by this much in every relative key and value. Data: "
           "nezha_table of the preset in the hf and the exact regime, f64 (`posenc table nezha --preset "
           f"nezha-cn-base --regime hf|exact --dtype f64` gives the same values). See {CLAIMS_LINK} (NEZHA-TABLE-1, "
           "NEZHA-TABLE-2).")
    return ctx.renderer.image(plot, "NEZHA HF float32 table against the exact one"), cap


# ---- (d) index matrices ---------------------------------------------------------------------------------------

def _matrix_table(rows: list) -> str:
    lq, key_length = len(rows), len(rows[0])
    return md.table(["i (q_i)", *[f"j = {j}" for j in range(key_length)]],
                    [[f"{i} ({key_length - lq + i})", *[md.num(v) for v in r]] for i, r in enumerate(rows)],
                    ["l"] + ["r"] * key_length)


@figure("index", "table-nezha-index", "table")
def _index_matrices(ctx, fig: dict, name: str) -> tuple:
    a, c, sk, preset = fig["square"], fig["last"], fig["small_k"], fig["preset"]
    length, lq, big = len(a), len(c), fig["preset_length"]
    body = (f"K = {sk}, {length} × {length} (row i: the query at q_i; column j: the key):\n\n" + _matrix_table(a)
            + f"\nK = {sk}, query_length {lq}, key_length {length}:\n\n" + _matrix_table(c))
    cap = (f"**(d) The index matrix, small.** r(i, j) = clip(j − q_i, −K, K) + K with K = {sk} (NezhaPlan::indices "
           f"of {md.code(preset, table=False)} with max_relative_position {sk}; `posenc index nezha --preset "
           f"{preset} --max-relative-position {sk} --query-length {length} --key-length {length}` gives the same "
           f"matrix): the diagonal (distance 0) reads row K = {sk}, the keys after the query rows above it up to "
           f"2K = {2 * sk}, the keys before it rows below it down to 0 (HF: distance_mat = range_mat − "
           f"range_mat^T, key minus query). With query_length {lq} < key_length {length} the queries are the last "
           f"keys (q_i = Lk − Lq + i): its rows are the last {lq} rows of the square matrix: "
           f"{_yes(fig['last_rows_of_square'])} (HF NEZHA itself computes only query_length = key_length). The "
           f"{md.code(preset, table=False)} matrix at {big} × {big} (K = {fig['preset_k']}) reads "
           f"{md.num(fig['rows_read'])} rows ({md.num(fig['first_row_read'])}–{md.num(fig['last_row_read'])}) of its "
           f"{md.num(fig['table_rows'])} (2K + 1); that every entry of an index matrix is clip(j − q_i, −K, K) + K is "
           f"claim NEZHA-INDEX-1 (held against the oracle). See {CLAIMS_LINK} (NEZHA-INDEX-1).")
    return body, cap


# ---- (e) the preset --------------------------------------------------------------------------------------------

@figure("presets", "table-nezha-presets", "table")
def _preset_table(ctx, fig: dict, name: str) -> tuple:
    rows = [[md.code(r["label"]), md.num(r["k"]), md.num(r["depth"]), md.cell(r["regime"]), md.num(r["table_rows"]),
             f"{md.num(r['row_k'][0])}, {md.num(r['row_k'][1])}", md.num(r["libm_difference"]), f"1/√{r['depth']}"]
            for r in fig["rows"]]
    table = md.table(["preset", "K", "depth", "regime", "table rows (2K + 1)", "row K (distance 0): T[K][0], T[K][1]",
                      "largest difference from sin/cos in double", "scale"], rows,
                     ["l", "r", "r", "l", "r", "l", "r", "l"])
    spec, preset = fig["rows"][0], fig["preset"]
    cap = (f"**(e) The preset.** {md.code(preset, table=False)} is HF's NezhaConfig (max_relative_position = "
           f"{spec['k']}; the NezhaRelativePositionsEncoding class default is 127), depth = "
           f"hidden_size / num_attention_heads = {spec['depth']}, regime {spec['regime']} (HF's float32 table, what "
           "NEZHA checkpoints were trained with); beside it the same shape in the exact regime (the last but one "
           "column: each table's largest difference from std::sin / std::cos evaluated in double; for HF's steps "
           "that is figure (c)'s maximum). The table is the whole encoding: no trained position weights. It "
           "is Shaw et al.'s mechanism (see the shaw scheme) with the key-minus-query sign, clipping at ±K, no key·E "
           "term, and this fixed table as both the key table a^K (scores (q·k + q·T[r]) / √depth) and the value "
           "table a^V (output Σ_j α_ij (v_j + T[r])). The default f32 table of the preset (nezha_table into float; "
           f"`posenc table nezha --preset {preset} --dtype f32` writes the same) holds the f64 one's numbers (HF's "
           f"entries are float32 numbers): {_yes(fig['f32_holds_f64'])}. The benchmarks time the table (exact and "
           "HF steps, against the plain loop a user writes), the preset's causal scores and its attention output "
           "(`attend`, held against the scores family's sgemm of q k^T); see [performance](performance.md) and "
           f"{CLAIMS_LINK} (NEZHA-OUTPUT-1, NEZHA-REPRO-1, NEZHA-CHECK-1).")
    return table, cap


def figures(ctx, data: FigureData) -> list:
    return [_table_curves(ctx, data), _score_curves(ctx, data), _hf_vs_exact(ctx, data), _index_matrices(ctx, data),
            _preset_table(ctx, data)]
