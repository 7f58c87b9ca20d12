"""Report module of the rotary position embedding (rope): its speed headline, and figures of what a score sees —
⟨R(m)q, R(n)k⟩ against the distance n − m (relativity and the long-range decay), and the score error that
HF's and ggml's float32 arithmetic leaves at each distance in a 1M- and a 4K-token context (the precision loss a
porter of a long-context model meets), against posenc's exact regime; θ'_k / θ_k of every context-extension
scaling; the HF-vs-exact error of the cos/sin cache at every position up to 128k under Llama 3.1's and YaRN's
scalings; and (a table) the distances at which xPos' scale overflows float16 and float32.

Every number comes from figures-rope.json (schemes/rope/figures.cpp, run by posenc_figures); this module only draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import COLOURS, Plot, Series

SCHEME = "rope"

CLAIMS_LINK = "[claims](claims.md#scheme-rope)"
MARK_NAMES = {1024: "1k", 8192: "8k", 32768: "32k", 131072: "128k"}


def _points(pts: list) -> list:
    return [tuple(p) for p in pts]


@figure("score_vs_distance", "fig-rope-score-vs-distance")
def _score_vs_distance(ctx, fig: dict, name: str) -> tuple:
    """(a): the score of q = k against the distance, for two query positions: one curve (relativity)."""
    d = fig["head_dim"]
    series = [Series(f"query at {s['query']}, key at {s['query']} + d", _points(s["points"]), style)
              for s, style in zip(fig["series"], ("lines lw 3", "points pt 7 ps 0.4"))]
    m0, m1 = (s["query"] for s in fig["series"])
    plot = Plot(name=name, title=f"<R(m)q, R(m+d)q> against the distance d, d = {d}",
                xlabel="distance d (log scale)", ylabel="score", series=series, logx=2,
                key="inside top right")
    cap = (f"**(a) Relative position and long-range decay.** The score ⟨R(m)q, R(m+d)q⟩ of one random unit vector "
           f"q (float32 numbers, Python seed {fig['seed']}) with itself, hf-llama frequencies (θ_k = "
           f"10000^(−2k/{d})), exact regime: the curves for m = {m0} and m = {m1} coincide (largest difference "
           f"{md.num(fig['largest_difference'])}), since the score depends on d only (claim ROPE-REL-1), and its "
           f"envelope decays with d (Su et al. 2021, §3.4.3). Data: RopePlan::scores, f64 (`posenc scores rope "
           f"--regime exact` gives the same values). See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "RoPE score vs distance"), cap


@figure("score_error", "fig-rope-score-error-vs-distance")
def _score_error_vs_distance(ctx, fig: dict, name: str) -> tuple:
    """(b): |score(regime) − score(exact)| against the distance, query at the end of a 1M and a 4K context."""
    styles = {"hf": "linespoints pt 7 ps 0.4", "ggml": "linespoints pt 5 ps 0.4"}
    series, summary = [], []
    for c in fig["contexts"]:
        for s in c["series"]:
            series.append(Series(f"{s['regime']} float32, query at {c['query']} ({c['label']} context)",
                                 _points(s["points"]), styles[s["regime"]], dashed=c["label"] == "4K"))
            summary.append(f"{s['regime']} at {c['label']}: up to {md.num(s['largest'])}")
    plot = Plot(name=name,
                title="Score error of float32 RoPE vs the mathematics, query at the end of the context, "
                      f"d = {fig['head_dim']}",
                xlabel="distance n - m (log scale)", ylabel="|score - exact score| (log scale)", series=series,
                logx=2, logy=10, key="below left horizontal")
    seed_q, seed_k = fig["seeds"]
    cap = ("**(b) What float32 RoPE costs a long-context model.** |⟨R(n)q, R(m)k⟩ − exact| for one pair of random "
           f"unit vectors (float32 numbers, seeds {seed_q}, {seed_k}), query at position n, key at m = n − d, "
           "computed with HF's float32 steps (inv_freq and angle in float32: regime hf) and ggml's (θ by repeated "
           "float32 multiplication: regime ggml), against the exact rotation — " + "; ".join(summary) + ". The "
           "error is set by the absolute positions (the float32 angle p·θ_k carries ~ulp(p·θ_k)), so a 1M-token "
           "context (solid) sees it at every distance, a 4K one (dashed) far less. The reference is posenc's "
           "exact regime in f64 (within rope.score.f64.ratio of the mathematics, ~1e-15 here). Data: "
           "RopePlan::scores with f64 data (no sgemm rounding: the regime's rotation is the only difference; "
           "`posenc scores rope` gives the same values). See the emulated-vs-exact accuracy plot below for the "
           "cos/sin themselves.")
    return ctx.renderer.image(plot, "RoPE score error vs distance"), cap


# Figure (c): the styles of the Llama-3-like head's scalings (linear, ntk, dynamic, yarn, llama3) and of
# Phi-3.5-mini's LongRoPE (short, long), in the data's order.
SCALING_STYLES = ("lines lw 2", "lines lw 2", "lines lw 2 dt 2", "linespoints pt 7 ps 0.4", "linespoints pt 5 ps 0.4")
LONGROPE_STYLES = ("points pt 6 ps 0.6", "points pt 4 ps 0.6")


@figure("scaled_frequencies", "fig-rope-scaled-frequencies")
def _scaled_frequencies(ctx, fig: dict, name: str) -> tuple:
    """(c): theta'_k / theta_k of every scaling against the pair index k (1 = the frequency kept)."""
    series, notes, long_notes = [], [], []
    for s, style in zip(fig["series"], SCALING_STYLES):
        series.append(Series(s["label"], _points(s["points"]), style))
        if s["label"] in ("yarn", "llama3"):
            notes.append(f"{s['label']}: {s['pairs_kept']} pairs kept, {s['pairs_blended']} blended, "
                         f"{s['pairs_interpolated']} divided by 8, attention factor {md.num(s['attention_factor'])}")
    for s, style in zip(fig["longrope"], LONGROPE_STYLES):
        series.append(Series(s["label"], _points(s["points"]), style))
        long_notes.append(f"{s['factors']}: θ_k divided by {md.num(s['divided_first'])} (k = 0) to "
                          f"{md.num(s['divided_most'])}, attention factor {md.num(s['attention_factor'])}")
    d = fig["head_dim"]
    plot = Plot(name=name,
                title=f"Context extension: theta'_k / theta_k per pair (d = {d}, base 5e5, L0 = 8192, "
                      "factor 8; LongRoPE: Phi-3.5-mini)",
                xlabel="pair index k", ylabel="theta'_k / theta_k (log scale)", series=series, logy=2,
                key="below left horizontal")
    cap = ("**(c) What each scaling does to the frequencies.** θ′_k / θ_k against the pair index for a Llama-3-like "
           f"head (d = {d}, base 5·10⁵, pretraining context L0 = 8192) extended eight-fold, exact regime: "
           "linear divides every frequency by 8 (positions / 8); NTK and dynamic NTK (at L = 8 L0) raise the base, "
           "leaving the fastest pair and dividing the slowest by nearly 8; YaRN and Llama 3.1 keep the fast pairs "
           "(wavelength below L0/β or L0/high_freq_factor), divide the slow ones by 8 and blend between — "
           + "; ".join(notes) + ". LongRoPE divides each θ_k by a factor of its own, the model's: Phi-3.5-mini's "
           "published config (its own head: d = 96, so its points end at k = 47; base 10⁴, L0 = 4096, factor 32), "
           "the short factors while the length L ≤ L0 (HF at init) and the long ones beyond (here L = 128k) — "
           + "; ".join(long_notes) + ". Data: RopePlan::frequencies against those of the same spec unscaled, and "
           "RopePlan::interpolation (the weight of the interpolated frequency per pair) (`posenc freqs rope "
           f"--scaling ... --format json` and `posenc freqs rope --config {fig['longrope_config']} --seq-len "
           "0|131072 --format json` give the same values). See " + CLAIMS_LINK + " (ROPE-SCALE-1).")
    return ctx.renderer.image(plot, "RoPE scaled frequencies"), cap


@figure("long_context", "fig-rope-long-context-error")
def _long_context_error(ctx, fig: dict, name: str) -> tuple:
    """(d): max over pairs of |hf - exact| per position bucket at 0 .. 131071, two models scaled and unscaled."""
    series, rows, solid, colours = [], [], [], {}
    for s in fig["series"]:
        unscaled = s["scaling"] == "none"
        colour = colours.setdefault(s["model"], COLOURS[len(colours) % len(COLOURS)])
        # Points over a dashed line: where a scaling leaves the error as it is, the points sit on the line.
        series.append(Series(s["label"], _points(s["points"]), "lines lw 1.5" if unscaled else "points pt 7 ps 0.5",
                             dashed=unscaled, colour=colour))
        rows.append(f"{s['label']}: " + ", ".join(f"{MARK_NAMES.get(k, k)} {md.num(v)}" for k, v in s["below"]))
        if not unscaled:
            solid.append(f"{s['model']} ({md.cell(s['scaling'])}, factor {md.num(s['factor'])}, base "
                         f"{md.num(s['base'])}, d = {md.num(s['head_dim'])})")
    ulp = fig["ulp_f32_one"]
    series.append(Series("float32 ulp of 1 (2^-23)", [(1, ulp), (fig["top"], ulp)], "lines lw 1",
                         dashed=True, colour="#000000"))
    # What the scaling changes: the scaled series' largest error over the unscaled one's, per model, and the pair
    # where the largest error is made.
    changes = [f"{c['model']}: {md.cell(c['scaling'])} / unscaled = {c['ratio']:.4f} (attention factor "
               f"{md.num(c['attention_factor'])}; largest error at pair k = {c['pair']}, unscaled "
               f"k = {c['pair_unscaled']})" for c in fig["changes"]]
    plot = Plot(name=name, title="HF float32 RoPE cache vs the exact one: max over pairs of |hf - exact| per position",
                xrange=tuple(fig["xrange"]),
                xlabel="position p (log scale; each point: the largest error in a quarter-octave bucket, at its "
                       "last position)", ylabel="max over pairs |hf - exact| (log scale)", series=series, logx=2,
                logy=10, key="below left horizontal")
    first, last = fig["positions"]
    cap = (f"**(d) The float32 cache over a 128k context.** For every position p in {first} .. {last}, the largest "
           "|hf − exact| over the pairs (cos and sin) of the cos/sin cache, reduced to its maximum in each quarter-"
           "octave of positions; hf is HF's float32 steps each correctly rounded (posenc's emulation: inv_freq, "
           "the angle p·inv_freq and cos, sin in float32, times RN32(m) under YaRN), exact the mathematics (f64, "
           f"within ~2^-52). Points: the config fixtures ({fig['configs']}) " + " and ".join(solid) + "; "
           "dashed lines: the same head unscaled (same base and head_dim, `--scaling none`); dashed black: the float32 "
           "ulp of 1. The error is that of the float32 angle — p times inv_freq's rounding error (up to 2^-24 "
           "relative) plus half an ulp of the angle p·inv_freq — so it grows linearly with p, and is above "
           f"ulp(1) from p = {md.position(fig['above_ulp_from'])} on. Largest "
           "error below 1k, 8k, 32k and 128k positions — " + "; ".join(rows) + ". What the scaling changes (the "
           "largest errors over all positions, scaled / unscaled): " + ("; ".join(changes) or "no ratio recorded") +
           " — the largest error is made at a fast pair, whose frequency YaRN and Llama 3.1 keep, so only YaRN's "
           "attention factor m, which multiplies cos and sin, changes it. Data: RopePlan::cache, pairs form, f64, "
           "of every position in both regimes (`posenc table rope --config FILE | --head-dim 128 --base B "
           "--scaling none --regime hf|exact --form pairs --positions A:B --format npy --dtype f64` gives the same "
           "values). Figure (b) shows what this does to a score.")
    return ctx.renderer.image(plot, "RoPE hf vs exact cache error at 128k positions"), cap


@figure("xpos_overflow", "table-rope-xpos-overflow", "table")
def _xpos_overflow(ctx, fig: dict, name: str) -> tuple:
    """(e): the first |p - c| where xPos' scale leaves the float16 and float32 ranges (a table, not a plot)."""
    rows = [[md.num(r["scale_base"]), r["side"] + (" (p < c)" if r["side"] == "query" else " (p > c)"),
             md.num(r["f16"]), md.num(r["f32"]), md.num(r["hf_inf"]),
             f"{md.num(r['closed_f16'])} / {md.num(r['closed_f32'])}", md.num(r["sequence_f16"]),
             md.num(r["sequence_f32"])] for r in fig["rows"]]
    table = md.table(["scale_base", "side", "d: exact > 65504 (f16)", "d: exact > FLT_MAX (f32)",
                      "d: hf (torchscale float32) inf", "closed form ⌈sb ln max / ln 3.5⌉ (f16 / f32)",
                      "sequence 2d where f16 breaks", "… where f32 breaks"], rows, ["r", "l", "r", "r", "r", "r", "r", "r"])
    centre = md.position(fig["center"])
    cap = ("**(e) Where xPos' scale overflows.** The first distance d = |p − c| from the centre at which the decay scale "
           "of pair 0 (ζ₀ = 2/7, the fastest-changing one) exceeds the float16 maximum and the float32 maximum: "
           "queries grow below the centre, keys above it (ζ^(±(p − c)/scale_base)). Found by bisection on "
           f"RopePlan::cache of head_dim 2 with xpos query|key, xpos_scale_base SB and xpos_center {centre} (exact: "
           "the f64 cache, the scale as |(cos, sin)|; hf: torchscale's float32 steps, the first position whose "
           "entries are inf/NaN; `posenc table rope --head-dim 2 --xpos query|key --xpos-scale-base SB "
           f"--xpos-center {centre}` gives the same values). torchscale centres positions at the middle of the "
           "sequence, so a sequence of 2d tokens reaches it: with its default scale_base 512, a float16 cache "
           "overflows from about 9k tokens and a float32 one from about 72k. The closed form agrees; see "
           + CLAIMS_LINK + " (ROPE-XPOS-2).")
    return table, cap


def figures(ctx, data: FigureData) -> list:
    return [_score_vs_distance(ctx, data), _score_error_vs_distance(ctx, data), _scaled_frequencies(ctx, data),
            _long_context_error(ctx, data), _xpos_overflow(ctx, data)]
