"""Report module of the sinusoidal scheme: its speed headline, and pictures that let a reader see the encoding
and its seed claims — the PE heatmap, PE(t)·PE(t+k) against k, the same through a random linear map, the
presets' frequencies.

Every number comes from figures-sinusoidal.json (schemes/sinusoidal/figures.cpp, run by posenc_figures); this module
only draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure, not_drawn
from ..gnuplot import DIVERGING_PALETTE, Plot, Series

SCHEME = "sinusoidal"

CLAIMS_LINK = "[claims](claims.md#scheme-sinusoidal)"
# Where the rows come from (figures.cpp: SinusoidalPlan::table of vaswani, positions 0..255, f64).
SOURCE = ("SinusoidalPlan::table of vaswani, f64 (`posenc table sinusoidal --preset vaswani --dtype f64` gives the "
          "same rows)")


def _points(pts: list) -> list:
    return [tuple(p) for p in pts]


@figure("heatmap", "fig-pe-heatmap")
def _heatmap(ctx, fig: dict, name: str) -> tuple:
    n, dim = fig["positions"], fig["dim"]
    plot = Plot(name=name, title=f"Sinusoidal PE (vaswani), {n} positions x {dim} dims",
                xlabel="dimension i (interleaved: even = sin, odd = cos)", ylabel="position p",
                series=[Series("", fig["rows"], "image", matrix=True)], size=(800, 420),
                xrange=(-0.5, dim - 0.5), yrange=(n - 0.5, -0.5),
                extra=[DIVERGING_PALETTE, "set cbrange [-1:1]", "set cblabel 'PE(p, i)'"], key="off")
    cap = (f"**(a) The encoding.** PE(p, i) for p = 0..{n - 1}, d = {dim} (paper frequencies, "
           f"interleaved sin/cos), the picture of seed 001. Claims illustrated: values in [−1, 1] (here "
           f"{fig['min']:.6f} … {fig['max']:.6f}); ‖PE(p)‖² = d/2 (largest |‖PE(p)‖² − {dim // 2}| over these rows: "
           f"{md.num(fig['norm_error'])}); low dimensions oscillate fast, high dimensions barely move over 50 "
           f"positions. Data: {SOURCE}. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "PE heatmap"), cap


@figure("dot_vs_k", "fig-dot-vs-k")
def _dot_vs_k(ctx, fig: dict, name: str) -> tuple:
    series = [Series("closed form Σ cos(k ω_i)", _points(fig["closed"]), "lines lw 2", colour="#999999")]
    # Different point shapes and sizes, so that all t stay visible where they coincide (which is the point).
    for s, style in zip(fig["dots"], ("points pt 6 ps 1.3", "points pt 2 ps 0.9", "points pt 1 ps 0.7")):
        series.append(Series(f"PE({s['t']})·PE({s['t']}+k)", _points(s["points"]), style))
    plot = Plot(name=name, title=f"PE(t)·PE(t+k) against k, d = {fig['dim']}", xlabel="offset k",
                ylabel="dot product", series=series, key="inside top right")
    ts = ", ".join(str(s["t"]) for s in fig["dots"])
    cap = (f"**(b) Relative position through the dot product.** PE(t)·PE(t+k) for t = {ts} lies on one curve, the "
           "closed form Σ cos(k·ω_i): the product depends on k only, not on t, and is symmetric in k, so it cannot "
           "tell left from right (seed 003). Largest deviation from the closed form over the points shown: "
           f"{md.num(fig['largest_deviation'])}. Peak d/2 = {fig['half_dim']} at k = 0 is ‖PE‖². Data: {SOURCE}. "
           f"See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "dot product vs k"), cap


def _bilinear_vs_k(ctx, data: FigureData) -> list:
    fig, fig2 = data.get("dot_random_w"), data.get("random_w_vs_t")
    if fig is None or fig2 is None:
        return [(not_drawn("fig-dot-random-w", data.error), ""), (not_drawn("fig-random-w-vs-t", data.error), "")]
    t = fig["t"]
    series = [Series(f"PE({t})·PE({t}+k)", _points(fig["dot"]), "points pt 7 ps 0.6", colour="#0072B2")]
    for s, colour in zip(fig["seeds"], ("#009E73", "#D55E00", "#CC79A7")):
        series.append(Series(f"PE({t})ᵀ W_{s['seed']} PE({t}+k)", _points(s["points"]), "points pt 5 ps 0.5",
                             colour=colour))
    plot1 = Plot(name="fig-dot-random-w", title=f"Through a random linear map: PE_t^T W PE_(t+k), d = {fig['dim']}",
                 xlabel="offset k", ylabel="value", series=series, key="inside top right")
    seeds = ", ".join(str(s["seed"]) for s in fig["seeds"])
    cap1 = (f"**(c) The pattern does not survive a random linear map.** Blue: PE(t)·PE(t+k) at t = {t}; "
            f"others: PE_tᵀ W PE_(t+k) with W of iid N(0, 1/d) entries ({len(fig['seeds'])} matrices, Python "
            f"random seeds {seeds}). The clean peak at k = 0 and the symmetric decay are "
            "gone — what attention sees is PE_tᵀ W_qᵀ W_k PE_(t+k), and the relative-position signal depends on "
            f"what W learns (seed 003, after TENER). Data: {SOURCE}.")
    seed = fig2["seed"]
    series2 = [Series(f"t = {s['t']}", _points(s["points"]), "linespoints pt 7 ps 0.4") for s in fig2["series"]]
    plot2 = Plot(name="fig-random-w-vs-t", title=f"PE_t^T W_{seed} PE_(t+k) for several t", xlabel="offset k",
                 ylabel="value", series=series2, key="inside top right")
    cap2 = (f"**(c′) …and it depends on t again.** The same bilinear form with one W (seed {seed}) for t = "
            f"{', '.join(str(s['t']) for s in fig2['series'])}: unlike (b), the curves differ, so PE_tᵀ W PE_(t+k) "
            f"is not a function of k alone. Data: {SOURCE}.")
    return [(ctx.renderer.image(plot1, "dot product through random W"), cap1),
            (ctx.renderer.image(plot2, "random W for several t"), cap2)]


PRESET_STYLES = {"vaswani": "lines lw 3", "marian": "lines lw 1.5", "tensor2tensor": "lines lw 3",
                 "fairseq": "lines lw 1.5"}


@figure("preset_frequencies", "fig-preset-frequencies")
def _frequencies(ctx, fig: dict, name: str) -> tuple:
    series = [Series(p["preset"], _points(p["points"]), PRESET_STYLES[p["preset"]],
                     dashed=p["preset"] in ("marian", "fairseq")) for p in fig["presets"]]
    plot = Plot(name=name, title=f"Frequencies ω_k of the sinusoidal presets, d = {fig['dim']}",
                xlabel="pair index k", ylabel="ω_k (rad / position, log scale)", series=series, logy=10,
                key="inside top right")
    h = fig["pairs"]
    cap = (f"**(d) The presets disagree on frequencies.** Paper (vaswani, marian): ω_k = 10000^(−2k/d), last "
           f"ω = 10000^(−{h - 1}/{h}) = {fig['last_paper']:.4g}; tensor2tensor and fairseq: "
           f"ω_k = 10000^(−k/(h−1)), last ω = 1e-4 exactly. Presets with the same frequencies (dashed over "
           "solid) differ only in layout (interleaved vs [sin|cos] halves) and first position (fairseq starts at "
           "padding_idx + 1). Data: SinusoidalPlan::frequencies of each preset, exact regime (`posenc freqs "
           "sinusoidal --preset P` gives the same values); that they are the formulas of CONVENTIONS.md §2.1, "
           f"rounded once to double, is claim SIN-ACC-2 (against the oracle). See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "preset frequencies"), cap


@figure("frequency_ratio", "fig-preset-frequency-ratio")
def _frequency_ratio(ctx, fig: dict, name: str) -> tuple:
    series = [Series(f"d = {d['d']}", _points(d["points"]), "linespoints pt 7 ps 0.4") for d in fig["dims"]]
    plot = Plot(name=name, title="tensor2tensor / fairseq frequencies relative to the paper's",
                xlabel="relative pair index k / (h - 1)", ylabel="ω_k(t2t, fairseq) / ω_k(paper)", series=series,
                key="inside bottom left")
    cap = ("**(d′) How far apart.** ω_k(t2t) / ω_k(paper) = 10000^(−k/(h(h−1))): equal for the first pair, "
           "then falling to 10000^(−1/h) for the last ("
           + ", ".join(f"{d['last']:.3g} at d = {d['d']}" for d in fig["dims"]) + "). A model "
           "trained with one convention and served with the other sees every position at the wrong angle in all "
           "but the first pair — why the preset is part of the spec (DESIGN §2). Data: the presets' "
           "SinusoidalPlan::frequencies, as in (d).")
    return ctx.renderer.image(plot, "frequency ratio"), cap


def figures(ctx, data: FigureData) -> list:
    out = [_heatmap(ctx, data), _dot_vs_k(ctx, data), *_bilinear_vs_k(ctx, data), _frequencies(ctx, data),
           _frequency_ratio(ctx, data)]
    w = data.get("dot_random_w") if data.error is None else None
    if w is not None:
        ctx.figure_notes.append(("random W", f"iid N(0, 1/{w['dim']}), Python `random.Random(seed).gauss` (drawn "
                                 "in C++ with the same numbers: schemes/sinusoidal/figures.cpp), seeds "
                                 + ", ".join(str(s["seed"]) for s in w["seeds"])))
    return out
