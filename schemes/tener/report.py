"""Report module of TENER's relative attention (Yan et al. 2019; fastnlp/TENER relative_transformer.py): its speed
headline; (a), (b) the rows of the signed sinusoid table the query term (_shift: t = j - i) and the key term
(_transpose_shift: t = i - j) of each score entry read; (c) TENER's score of a fixed query against the signed offset
j - i beside the absolute sinusoidal encoding's PE(p).PE(p + k): TENER's curve tells a key after the query from one
before it, the absolute one cannot (it is symmetric in k).

Every number comes from figures-tener.json (schemes/tener/figures.cpp, run by posenc_figures); this module only
draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import Plot, Series
from ..relative_figures import index_figure, yes

SCHEME = "tener"

CLAIMS_LINK = "[claims](claims.md#scheme-tener)"
SIN_CLAIMS_LINK = "[sinusoidal claims](../sinusoidal/claims.md#scheme-sinusoidal)"


# ---- (c) TENER against the absolute encoding ---------------------------------------------------------------------

@figure("direction", "fig-tener-direction")
def _direction_curves(ctx, fig: dict, name: str) -> tuple:
    d, half, n, t0, seed = fig["d_head"], fig["half"], fig["length"], fig["t0"], fig["seed"]
    qr, qn = fig["tener"]
    qc, nc = dict(map(tuple, qr["points"])), dict(map(tuple, qn["points"]))
    qa, (na, nk) = qr["asymmetry"]["max"], (qn["asymmetry"]["max"], qn["asymmetry"]["at"])
    lo, hi = fig["yrange"]
    series = [Series(f"TENER, q = R({t0})", [tuple(p) for p in qr["points"]], "lines lw 2"),
              Series("TENER, q ~ N(0, 1)", [tuple(p) for p in qn["points"]], "lines lw 2 dt 4"),
              Series("absolute: PE(p).PE(p + k)", [tuple(p) for p in fig["absolute"]], "lines lw 2 dt 2"),
              Series("offset 0", [(0, lo), (0, hi)], "lines lw 1", dashed=True, colour="#000000")]
    plot = Plot(name=name, title=f"TENER's score against the signed offset vs the absolute sinusoid's dot product "
                                 f"(d = {d})",
                xlabel="offset: j - i (TENER, key minus query) or k (absolute)",
                ylabel="score (unscaled) / dot product", series=series, xrange=(-half, half),
                yrange=(lo, hi), key="below left horizontal",
                extra=["set bmargin 7"])               # gnuplot's own margin puts the key over the x label here
    cap = (f"**(c) Direction: TENER against the absolute sinusoid.** TENER's score of a fixed query against the signed "
           f"offset j − i (key minus query), d_head = {d} (h = {d // 2} pairs, w_k = exp(−k ln 10000 / {d // 2 - 1})), "
           "one head, zero biases, every key zero (equal key contents: the content term and the key term k·R(i − j) "
           "vanish), so the score is q·R(j − i), unscaled (TENER's default), for two queries: q = R("
           f"{t0}) (the table row of offset +{t0}, from the plan's exact table) and q drawn N(0, 1) in float32 "
           f"(Python's random, seed {seed}: its Mersenne Twister and gauss replayed in C++, the same numbers). The "
           f"scores are TenerPlan::scores in float64 (`posenc scores tener --q <q in every row> --k <zeros>` gives "
           f"the same values), {n} × {n}; drawn is the middle row (i = {half}: j − i = −{half} .. {half}). Beside "
           f"them, the absolute encoding's PE(p)·PE(p + k) against k, p = {half} (the marian preset's float64 table "
           f"of positions 0 .. {n - 1}, [sin | cos] of p 10000^(−2t/{d}), each dot product summed exactly and "
           f"rounded once; `posenc table sinusoidal --preset marian --dim {d} --positions 0:{n} --dtype f64` gives "
           f"the same table). **TENER's curve is not symmetric**: for q = R({t0}), score(+{t0}) = "
           f"{md.num(qc[t0])} but score(−{t0}) = {md.num(qc[-t0])} (largest |score(k) − score(−k)| = "
           f"{md.num(qa)}); for the random q, largest {md.num(na)} (score(+{nk}) = {md.num(nc[nk])}, score(−{nk}) = "
           f"{md.num(nc[-nk])}); both above {md.num(fig['asym_min'])}: {yes(fig['direction_aware'])}: sin is odd, "
           "R(−t) is R(t) with its sin half negated, so the query term sees the sign of the offset and can tell a key "
           "after the query from one before it. **The absolute one is symmetric**: max |f(k) − f(−k)| = "
           f"{md.num(fig['absolute_asymmetry'])}, within {md.num(fig['tolerance'])} of its largest magnitude d/2 = "
           f"{md.num(d // 2)}: {yes(fig['absolute_symmetric'])} (PE(p)·PE(p + k) = Σ_t cos(k w_t): distance-aware, "
           "direction-blind; p cancels). That every entry of both TENER matrices is (q + r_w_bias)·R(j − i) + "
           "k·R(i − j) (here with k = 0 and zero biases), unscaled by default, and that the absolute dot product is "
           "Σ_t cos(k w_t), are claims (TENER-SCORES-1, held against the oracle; TENER-SCALE-1; SIN-DOT-1). See "
           f"{CLAIMS_LINK} (TENER-DIR-1, TENER-ODD-1, TENER-SCORES-1) and the {SIN_CLAIMS_LINK} (SIN-DOT-1, "
           "SIN-DOT-2).")
    return ctx.renderer.image(plot, "TENER score against the signed offset beside the absolute sinusoid's dot "
                                    "product"), cap


def _index(data: FigureData, key: bool) -> tuple:
    def what(lq, lk):
        return (f"({'b' if key else 'a'}) The row of the table (t = c - L, L = {lk}) the "
                + ("key term k_j . R(i - j) of each entry reads (_transpose_shift): L + i - j."
                   if key else "query term (q_i + r_w_bias) . R(j - i) of each entry reads (_shift): L + j - i.")
                + " Every entry is defined; both signs of the distance occur, which is what lets TENER tell a key "
                  "before the query from one after it.")
    return index_figure(data, "index_key" if key else "index_query", SCHEME, what, "TENER-SHIFT-1",
                        CLAIMS_LINK + " (TENER-SHIFT-1, TENER-DIR-1)",
                        "TenerPlan::indices" + (" (key = true)" if key else ""), "--key" if key else "")


def figures(ctx, data: FigureData) -> list:
    return [_index(data, False), _index(data, True), _direction_curves(ctx, data)]
