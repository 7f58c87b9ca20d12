"""Report module of FIRE, functional interpolation for relative positions (Li et al. 2023, arXiv 2310.04418): its
speed headline, and figures of what the scheme computes — the normalized distance x = ln(|c| d + 1) / (ln(|c|
max(q, L) + 1) + eps) that every head's MLP reads, the bias of one trained-looking head for short and long queries,
what the reference's float32 arithmetic (the cramming regime) changes — and a table of where the one implementation
posenc follows (mcleish7/arithmetic's FIRE, schemes/fire/include/spec/posenc/fire_spec.hpp) differs from the paper,
each difference checked on the bias.

Every number comes from figures-fire.json (schemes/fire/figures.cpp, run by posenc_figures: FirePlan::bias of
weights drawn there as cli/tests/data/fire_*.json were, and the checks, scales and ulps); this module only draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import Plot, Series

SCHEME = "fire"

CLAIMS_LINK = "[claims](claims.md#scheme-fire)"

MAIN_NOTE = ("the weights are those of cli/tests/data/fire_h12_w32.json (c = float32(0.1), L_multiplier = 1, init_L = "
             "512, the MLP drawn as torch initialises nn.Linear; figures.cpp draws them again from the same seed, "
             "231004418, with CPython's generator)")


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _same(regime: str, key_length, query_length, weights: str = "fire_h12_w32.json") -> str:
    """The CLI call that gives the same values as the library call a caption names."""
    return (f"`posenc bias fire --regime {regime} --weights {weights} --key-length {key_length} --query-length "
            f"{query_length} --dtype f64` gives the same values")


def x_text(q: dict) -> str:
    """x at d = q for a caption: 3 digits, or 1 − (1 − x) when it rounds to 1 (x just below 1 stays visible)."""
    x = q["x_at_q"]
    return md.num(x) if md.num(x) != "1" or x == 1 else f"1 − {md.num(q['one_minus_x_at_q'])}"


def _points(pts: list) -> list:
    return [tuple(p) for p in pts]


# --- (a) the normalized distance ---------------------------------------------------------------------------------

@figure("normalized_distance", "fig-fire-normalized-distance")
def _normalized(ctx, fig: dict, name: str) -> tuple:
    thr, queries = fig["threshold"], fig["queries"]
    series = [Series(f"q = {q['q']}" + (" (<= L: the normalizer of L)" if q["at_or_below_threshold"] else ""),
                     _points(q["points"]), "lines lw 3" if q["at_or_below_threshold"] else "lines lw 2",
                     dashed=q["dashed"])
              for q in queries]
    plot = Plot(name=name, title="FIRE: the MLP's input x(q, d) against the distance d, one curve per query position q",
                xlabel="distance d = |q - j| (log scale)", ylabel="x = ln(|c| d + 1) / (ln(|c| max(q, L) + 1) + eps)",
                series=series, logx=2, key="below left horizontal", yrange=(0, 1.05))
    ends = "; ".join(f"q = {q['q']}: {x_text(q)}" for q in queries)
    cap = ("**(a) The normalized distance.** Every head's MLP reads one number per (query, key): x = ln(|c| d + 1) / "
           "(ln(|c| max(q, L) + 1) + eps), the log-compressed distance d = |q − j| divided by the log-compressed "
           f"query position, with the reference's initial c = 0.1, threshold L = |L_multiplier · init_L| = "
           f"{md.num(thr)} and eps = 10^−6 (exact regime, f64). Drawn for the queries at q = "
           f"{', '.join(str(q['q']) for q in queries)} over their keys j = 0 … q. Queries at or below L share L's "
           "normalizer, so their curves are one curve (the dashed ones end where the shorter query's keys end): a "
           "short context sees the distances it saw in training. A query beyond L divides by its own position: its "
           "whole past, however long, is mapped into [0, 1), and its farthest key gets x just below 1, as the "
           "farthest key at L does (x at d = q: " + ends + "). That is the paper's progressive interpolation: a "
           "longer context is a finer sampling of the same interval, not new distances the MLP never saw. The "
           "figure's numbers are the bias of a one-head, width-1 identity MLP (W1 = 1, b1 = 0, W2 = 1, b2 = 0: the "
           "bias is ReLU(x) = x). Checked on them (figures.cpp, every key of every row): x = 0 at d = 0: "
           + _yes(fig["zero_at_d0"]) + "; strictly increasing in d (claim FIRE-PSI-1): "
           + _yes(fig["strictly_increasing"]) + "; every x in [0, 1) (claim FIRE-BOUNDED-1): "
           + _yes(fig["in_unit_interval"]) + "; the queries at or below L equal bit for bit at every common distance "
           "(claim FIRE-SHAPE-1): " + _yes(fig["short_rows_equal"]) + "; largest relative difference from x "
           "evaluated in float64 with log1p: " + md.num(fig["worst_relative_difference"]) + ". Data: FirePlan::bias "
           "of the identity weights (exact regime, f64), key_length q + 1, query_length 1, for each q ("
           + _same("exact", "q + 1", 1, "identity.json") + f"). See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "FIRE normalized distance against the distance"), cap


# --- (b) the bias of one head for short and long queries -----------------------------------------------------------

@figure("bias_rows", "fig-fire-bias-rows")
def _rows(ctx, fig: dict, name: str) -> tuple:
    head, thr, queries, far = fig["head"], fig["threshold"], fig["queries"], fig["far"]
    series = [Series(f"q = {q['q']}" + (" (<= L)" if q["at_or_below_threshold"] else ""), _points(q["points"]),
                     "lines lw 2", dashed=q["dashed"]) for q in queries]
    plot = Plot(name=name, title=f"FIRE: the bias of head {head} against the distance d, one curve per query position",
                xlabel="distance d = |q - j| (log scale)", ylabel=f"bias b_{head}(q, d)", series=series, logx=2,
                key="below left horizontal")
    cap = (f"**(b) One head's bias for short and long queries.** Head {head} of the {fig['heads']}-head, "
           f"width-{fig['width']} weights (the head whose MLP spans the widest range over x ∈ [0, 1]; every head is "
           "b2 + Σ_k W2·ReLU(W1·x + b1), a piecewise-linear function of x with at most "
           f"{fig['width']} kinks) against the distance d, for the queries at q = "
           f"{', '.join(str(q['q']) for q in queries)} (exact regime, f64). The weights are as torch initialises "
           "them, not trained: the figure shows how FIRE turns any such function of x into a bias, not what a "
           f"trained model learns. Queries at or below L = {md.num(thr)} draw one curve (equal bit for bit at every "
           "common distance: " + _yes(fig["short_rows_equal"]) + "); beyond L each query's curve is the same "
           "function of x stretched over its own past, so that the bias at the farthest key is the same for every "
           f"long query: b(q, d = q) for q = {', '.join(str(f['q']) for f in far)}: "
           + ", ".join(md.num(f["bias_at_q"], 6) for f in far) + f" (spread {md.num(fig['far_spread'])}, which is "
           f"{md.num(fig['far_spread_over_scale'])} of the head's scale S at x = 1: x = l(q) / (l(q) + eps) moves by "
           "eps-sized amounts only). Largest difference from the bias evaluated in float64 from the weights "
           "(figures.cpp, exactly rounded sums), relative to the scale S = |b2| + Σ|W2|(|W1| x + |b1|): "
           f"{md.num(fig['worst_scaled_difference'])}. Data: FirePlan::bias (exact regime, f64), key_length q + 1, "
           f"query_length 1, for each q, head {head} (" + _same("exact", "q + 1", 1) + f"); {MAIN_NOTE}. "
           f"See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "FIRE bias of one head against the distance"), cap


# --- (c) cramming − exact ----------------------------------------------------------------------------------------

@figure("cramming_deviation", "fig-fire-cramming-deviation")
def _deviation(ctx, fig: dict, name: str) -> tuple:
    q = fig["q"]
    plot = Plot(name=name, title=f"FIRE cramming (float32 steps) minus exact bias, query at q = {q}, worst head",
                xlabel="distance d (log scale; d = 0 drawn at 1/2)",
                ylabel="max over heads |cramming - exact| / ulp32(S)",
                series=[Series("scaled error (S = |b2| + sum |W2| (|W1| x + |b1|))", _points(fig["points"]),
                               "points pt 7 ps 0.5"),
                        Series("0.5 ulp (one correct rounding of the sum)", [(0.5, 0.5), (q, 0.5)], "lines lw 1",
                               dashed=True, colour="#000000")],
                logx=2, key="below left horizontal")
    cap = ("**(c) What the reference's float32 arithmetic changes.** The bias of the cramming regime (posenc's "
           "emulation of mcleish7/arithmetic's float32 forward, each step correctly rounded: the float32 positions, "
           "|c D| + 1 and its log, the normalizer + eps, the quotient x, x·W1 + b1 rounded twice, the second Linear "
           "as a fused accumulation over k, + b2) against the exact bias of the same weights, rounded once to f64, "
           f"on the row of the query at q = {q} (all {fig['heads']} heads; the weights are float32 numbers, so the "
           "difference is the arithmetic alone). The error is scaled by ulp32 of the head's condition scale S = "
           "|b2| + Σ|W2|(|W1| x + |b1|), not of the bias: the MLP's sum cancels (random signs), and where the bias "
           "is near 0 its own ulp is tiny while the error of the float32 terms is not (the largest error in ulps of "
           f"the bias itself is {md.num(fig['max_bias_ulps'])} at d = {fig['max_bias_ulps_at']}). The scaled error "
           f"is at most {md.num(fig['max_scaled'])} ulps of S (at d = {fig['max_scaled_at']}), "
           f"{md.num(fig['mean_scaled'])} on average; {fig['distances_equal']} of {fig['distances']} "
           "distances are equal in every head. Real torch runs add their float32 log's own ulps and their BLAS's summation order on top: "
           "`posenc check fire` allows for both (--ulp, and any order unless --fixed-order; budget row "
           "fire.check.envelope). Every cramming value is a float32 number: " + _yes(fig["cramming_values_are_float32"])
           + f". Data: FirePlan::bias, f64, key_length {fig['key_length']}, query_length 1, in the regimes exact and "
           "cramming (" + _same("R", fig["key_length"], 1) + "); S and the ulps in float64 in figures.cpp; "
           f"{MAIN_NOTE}. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "FIRE cramming minus exact bias in ulps of the scale"), cap


# --- (d) the paper and the code ----------------------------------------------------------------------------------

@figure("conventions", "tab-fire-conventions", "table")
def _conventions(ctx, fig: dict, name: str) -> tuple:
    thr, n = fig["threshold"], fig["length"]

    def both(key):
        return f"exact: {_yes(fig['exact'][key])}; cramming: {_yes(fig['cramming'][key])}"

    rows = [
        ["the log transform", "ψ(x) = ln(c x + 1), c > 0", "ln(\\|c x\\| + 1) (torch.abs): a negative trained c acts "
         "as \\|c\\|", "c = −0.1 gives the bias of c = 0.1 bit for bit (claim FIRE-BIAS-2): " + both("abs_c")],
        ["the normalizer", "ψ(i − j) / ψ(max(L, i))", "… / (ψ(max(i, L)) + eps), eps = 10^−6: finite where ψ(max(i, "
         "L)) = 0 (c = 0 or L = i = 0)", "c = 0 gives x = 0 and the bias MLP(0) at every entry (equal to the d = 0 "
         "entry of c = 0.1, and in the exact regime to MLP(0) evaluated in float64): " + both("eps")],
        ["the threshold", "L, learned", "\\|L_multiplier · init_L\\|: init_L fixed (512), the multiplier trained, "
         "the product's absolute value", "L_multiplier = −1 gives the bias of +1 bit for bit (claim FIRE-BIAS-2): " +
         both("abs_l")],
        ["rows at or below the threshold", "max(L, i): every query i ≤ L uses ψ(L)", "the same, on the query's "
         "position (float32 in the reference)", f"every row i ≤ L = {thr} equals row 0 at the same distance, "
         "and every row above L differs from it somewhere (claim FIRE-SHAPE-1): " + both("thr")],
        ["keys after the query", "defined for the causal keys j ≤ i", "evaluated for every (i, j) as a function of "
         "\\|i − j\\|; the causal mask is applied outside the module", "b(i, i + k) = b(i, i − k) wherever both "
         "keys exist (mask none; claim FIRE-SHAPE-1): " + both("sym") + "; the causal mask writes −inf exactly at "
         "j > i and leaves "
         "the rest: " + _yes(fig["causal"])],
        ["training-mode positions", "—", "a sorted random subset of randperm(max_length) while training; positions "
         "0 … L − 1 in eval mode", "not modelled: posenc is the eval-mode forward, what a trained model runs"],
    ]
    table = md.table(["what", "the paper (Li et al. 2023)", "mcleish7/arithmetic's FIRE (posenc's definition)",
                      "checked on FirePlan::bias (figures.cpp)"], rows, ["l", "l", "l", "l"])
    cap = ("**(d) Where the code differs from the paper.** The paper's authors published no code; posenc follows "
           "the one implementation located, mcleish7/arithmetic@55af9d5e cramming/architectures/embeddings.py, class "
           "FIRE, forward in eval mode (schemes/fire/include/spec/posenc/fire_spec.hpp lists these differences; "
           "CONVENTIONS.md §2.15), and takes the code where the two differ: a model trained with that code was "
           "trained with these "
           f"choices. Each row is checked on the bias of a small model ({fig['heads']} heads, width {fig['width']}, "
           "weights drawn as torch initialises them, threshold L = init_L = "
           f"{thr} so that rows on both sides of it are in the {n} × {n} matrix), in both regimes, against a variant "
           f"of its weights. Data: FirePlan::bias, f64, key_length = query_length = {n}, of the base weights (the "
           f"recipe of (b), {fig['heads']} heads, width {fig['width']}, init_L = {thr}) and its copies with c = −c, "
           "L_multiplier = −1 and c = 0, in the regimes exact and cramming, and of the base weights with the causal "
           "mask (" + _same("R", n, n, "W") + f", and with --mask causal). See {CLAIMS_LINK}.")
    return table, cap


def figures(ctx, data: FigureData) -> list:
    return [_normalized(ctx, data), _rows(ctx, data), _deviation(ctx, data), _conventions(ctx, data)]
