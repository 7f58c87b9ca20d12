"""Report module of KERPLE, kernelized relative positional biases (Chi et al. 2022): its speed headline, and figures
of the bias itself — −p ln(1 + a d) (log kernel) and −a d^p (power kernel) against the causal distance d for
several trained parameters, with ALiBi's line −m d (the power kernel at p = 1, a = m) for reference — of what the
reference's float32 arithmetic (the megatron regime) changes in it, and of the clamp every reference forward
applies to the trained parameters before use (p, a ≥ 0.01; power: p ≤ 2).

Every number comes from figures-kerple.json (schemes/kerple/figures.cpp, run by posenc_figures); this module only
draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure, not_drawn
from ..gnuplot import Plot, Series

SCHEME = "kerple"

CLAIMS_LINK = "[claims](claims.md#scheme-kerple)"
POWER_YMIN = -20.0          # (a′) is clipped here: p = 2, a = 0.01 reaches -163.84 at d = 128
CURVE_STYLES = ("linespoints pt 7 ps 0.4 lw 2", "linespoints pt 5 ps 0.4", "linespoints pt 9 ps 0.4",
                "linespoints pt 13 ps 0.4", "linespoints pt 11 ps 0.4")
DEVIATION_STYLES = ("points pt 7 ps 0.5", "points pt 5 ps 0.5", "points pt 9 ps 0.6")


def real_text(x: float) -> str:
    """The shortest text that reads back to the double x, without a trailing ".0" (1, 0.01, -1, 1000000)."""
    t = repr(float(x))
    return t[:-2] if t.endswith(".0") else t


def _points(rows: list) -> list:
    return [tuple(p) for p in rows]


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _params_text(heads: list) -> str:
    return ", ".join(f"({md.num(h['p'])}, {md.num(h['a'])})" for h in heads)


def _cli_text(kernel: str, regime: str, heads: list, limit: int) -> str:
    return (f"`posenc bias kerple --kernel {kernel} --regime {regime} --heads {len(heads)} "
            f"--bias-p={','.join(real_text(h['p']) for h in heads)} "
            f"--bias-a={','.join(real_text(h['a']) for h in heads)} --key-length {limit + 1} --query-length 1 "
            f"--dtype f64`")


# --- (a), (a′) bias against the distance ----------------------------------------------------------------------

def _curves(ctx, data: FigureData, kernel: str) -> tuple:
    name = f"fig-kerple-{kernel}-bias"
    fig = data.get(f"{kernel}_bias")
    if fig is None:
        return not_drawn(name, data.error), ""
    heads, alibi, L = fig["heads"], fig["alibi"], fig["length"]
    m, ah, an = alibi["m"], alibi["head"], alibi["heads"]
    series = [Series(f"p = {md.num(h['p'])}, a = {md.num(h['a'])}", _points(h["points"]), s)
              for h, s in zip(heads, CURVE_STYLES)]
    series.append(Series(f"ALiBi -m d, m = 2^-4 (head {ah} of {an})", _points(alibi["points"]),
                         "lines lw 2", dashed=True, colour="#000000"))
    at_end = "; ".join(f"({md.num(h['p'])}, {md.num(h['a'])}): {md.num(h['at_end'])}" for h in heads)
    common = (f"From the figure data: every curve is 0 at d = 0 and non-increasing in d (claim KERPLE-SHAPE-1): "
              f"{_yes(fig['shape_ok'])}; largest relative difference from −p ln(1 + a d) / −a d^p evaluated in "
              f"float64 (std::log1p, std::pow): {md.num(fig['worst_relative'])}. Data: KerplePlan::bias (exact "
              f"regime, f64) of one query row at position {L} (key_length {L + 1}: the key j is at distance d = "
              f"{L} − j), and AlibiPlan::bias of {an} heads, variant relative, head {ah} "
              f"({_cli_text(kernel, 'exact', heads, L)} and `posenc bias alibi --heads {an} --variant relative "
              f"--key-length {L + 1} --query-length 1 --dtype f64` give the same values). See {CLAIMS_LINK}.")
    if kernel == "log":
        plot = Plot(name=name, title="KERPLE log kernel: bias -p ln(1 + a d) against the distance d (exact regime)",
                    xlabel="distance d = i - j", ylabel="bias b(d)", series=series, key="below left horizontal")
        cap = ("**(a) The log kernel against the distance.** b(d) = −p ln(1 + a d) for d = 0 … "
               f"{L} and (p, a) = {_params_text(heads)} (exact regime, f64), with ALiBi's −m d for m = 2^−4 = "
               f"{md.num(m)} (dashed) for reference. p scales the whole curve; a sets where it bends: the bias is "
               "about −p a d (a line of slope −p a, as ALiBi's) while a d ≪ 1, and grows only logarithmically "
               "beyond, so the log kernel penalises distant keys far less than a line does: at d = "
               f"{L}, {at_end}, against ALiBi's {md.num(alibi['at_end'])}. " + common)
    else:
        plot = Plot(name=name, title="KERPLE power kernel: bias -a d^p against the distance d (exact regime)",
                    xlabel="distance d = i - j", ylabel="bias b(d)", series=series, key="below left horizontal",
                    yrange=(POWER_YMIN, 0.5))
        cap = ("**(a′) The power kernel against the distance.** b(d) = −a d^p for d = 0 … "
               f"{L} and (p, a) = {_params_text(heads)} (exact regime, f64), with ALiBi's −m d for m = 2^−4 "
               f"(dashed). p = 1 is ALiBi's line with the slope a: the head (1, {md.num(m)}) and ALiBi's head "
               f"{ah} of {an} (AlibiPlan, gpt-neox relative) are "
               + ("equal bit for bit at every d" if fig["alibi_equal"] else "**not equal**") + " (claim "
               "KERPLE-ALIBI-1). p < 1 bends the curve upwards (concave: like the log kernel, distant keys are "
               "penalised less than by a line), p > 1 downwards (convex: the penalty accelerates; p = 2 makes the "
               f"softmax weights Gaussian in d). The y axis is clipped at {md.num(POWER_YMIN)} (the steepest curve "
               f"reaches {md.num(fig['lowest_at_end'])} at d = {L}); at d = {L}: {at_end}. The reference clamps p "
               "to [0.01, 2] (see (c)): a power kernel cannot be steeper than quadratic. " + common)
    return ctx.renderer.image(plot, f"KERPLE {kernel} kernel bias against the distance"), cap


# --- (b) megatron − exact ---------------------------------------------------------------------------------------

def _deviation_fact(h: dict, fig: dict) -> str:
    fact = (f"{h['kernel']}, p = {md.num(h['p'])}, a = {md.num(h['a'], 4)}: largest {md.num(h['largest'])} ulps "
            f"at d = {h['largest_at']}, at most {md.num(h['far_max'])} for d ≥ {fig['far_from']}, {h['zeros']} of "
            f"{fig['length']} distances exact")
    if "within_carried" in h:
        slack = md.num(fig["slack"])
        fact += (f", every d within the carried half ulp + {slack}" if h["within_carried"] else
                 f", **some d above the carried half ulp + {slack}**")
    return fact


@figure("megatron_deviation", "fig-kerple-megatron-deviation")
def _deviation(ctx, fig: dict, name: str) -> tuple:
    L, heads, carried, half = fig["length"], fig["heads"], fig["carried"], fig["one_rounding"]
    series = [Series(f"{h['kernel']}, p = {md.num(h['p'])}, a = {md.num(h['a'], 4)}", _points(h["points"]), s)
              for h, s in zip(heads, DEVIATION_STYLES)]
    series.append(Series(f"carried half ulp of 1 + a d, a = {md.num(carried['a'], 4)}", _points(carried["points"]),
                         "lines lw 1", dashed=True, colour="#999999"))
    series.append(Series(f"{half:g} ulp (one correct rounding)", [(1, half), (L, half)], "lines lw 1", dashed=True,
                         colour="#000000"))
    plot = Plot(name=name, title="KERPLE megatron (float32 steps) minus exact bias, in float32 ulps",
                xlabel="distance d (log scale)", ylabel="|megatron - exact| / ulp32(exact) (log scale)",
                series=series, logx=2, logy=10, key="below left horizontal")
    log = [h for h in heads if h["kernel"] == "log"]
    power = [h for h in heads if h["kernel"] == "power"]
    cap = ("**(b) What the reference's float32 arithmetic changes.** |megatron − exact| in float32 ulps of the "
           f"exact bias, against the distance d = 1 … {L} (log–log; d = 0 is 0 in both: "
           f"{_yes(fig['zero_at_0'])}). megatron is posenc's emulation of ParallelKerpleLog / "
           "ParallelKerplePower's float32 steps, each correctly rounded (t = a·D, u = 1 + t, ln u, −p·ln u; "
           "D^p, −a·D^p); exact is the real bias rounded once to f64. The parameters are float32 numbers (0.01, "
           "0.1, 0.7 and 0.3 rounded to float32), so both regimes use the same (p, a) and the difference is the "
           "arithmetic alone. In the log kernel, u = 1 + a D is rounded to float32, whose spacing near 1 is "
           "2^−23: the low bits of a d are lost, and ln u ≈ a d inherits an absolute error of up to 2^−24 — about "
           "1/(a d) ulps of the bias while a d is small. The grey dashed curve is that carried half ulp "
           f"(p · ½ulp32(u) / u / ulp32(p ln u)) for a = {md.num(carried['a'])}; the other roundings (of a D and of "
           "the logarithm) add at most about one ulp. The power kernel has no such loss: D^p and the product a·D^p "
           "are rounded once each, at most half an ulp each (the black dashed line is one such rounding). "
           f"From the data (maxima over every d; the plot shows d ≤ {fig['dense']} and {fig['per_octave']} "
           "distances per octave above, zeros left out): " + "; ".join(_deviation_fact(h, fig) for h in heads) +
           ". Real torch float32 log and pow are not correctly rounded and add their own ulps on top; `posenc "
           "check kerple` allows for them (--ulp, and a fused a·D + 1 unless --no-fused; claim KERPLE-CHECK-1). "
           f"Data: KerplePlan::bias (f64) of one query row at position {L}, regimes exact and megatron "
           f"({_cli_text('log', 'R', log, L)} and {_cli_text('power', 'R', power, L)} for R = exact, megatron give "
           f"the same values). See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "KERPLE megatron minus exact bias in ulps"), cap


# --- (c) the clamp --------------------------------------------------------------------------------------------

def _value(x: float, regime: str) -> str:
    """A parameter as text: the shortest double (exact), 9 digits (a float32 number, megatron)."""
    return md.cell(f"{x:.9g}" if regime == "megatron" else real_text(x))


def _clamp_cell(c: dict) -> str:
    ps, as_ = _value(c["p"], c["regime"]), _value(c["a"], c["regime"])
    return (f"**{ps}**" if c["p_clamped"] else ps) + ", " + (f"**{as_}**" if c["a_clamped"] else as_)


@figure("clamp", "tab-kerple-clamp", "table")
def _clamp_table(ctx, fig: dict, name: str) -> tuple:
    rows = [[md.cell(real_text(r["bias_p"])), md.cell(real_text(r["bias_a"]))] + [_clamp_cell(c) for c in r["cells"]]
            for r in fig["rows"]]
    cols = [f"{c['kernel']}, {c['regime']}: p, a" for c in fig["rows"][0]["cells"]]
    table = md.table(["bias_p", "bias_a", *cols], rows, ["r", "r", "l", "l", "l", "l"])
    bias_p = ",".join(real_text(r["bias_p"]) for r in fig["rows"])
    bias_a = ",".join(real_text(r["bias_a"]) for r in fig["rows"])
    cap = ("**(c) The clamp.** Every reference forward clamps the trained parameters before use (eps = 0.01): "
           "p = max(bias_p, 0.01) — for the power kernel also min(·, 2) — and a = max(bias_a, 0.01). For each "
           "(bias_p, bias_a) given to a plan, the (p, a) each kernel and regime uses: KerplePlan::p() and a() "
           "(`posenc bias kerple` reports them as p_effective and a_effective); **bold**: the clamp changed the "
           "value (it differs from the given one rounded to the regime's type: the CLI's p_clamped_heads, "
           "a_clamped_heads). The exact regime clamps the doubles (printed as the shortest text that reads "
           "back); the megatron regime "
           "clamps the float32 parameters against float32 0.01 = 0.00999999978 (torch.clamp against the scalar "
           "in float32), so its values are float32 numbers (printed to 9 digits) and a parameter equal to 0.01 "
           "is not changed by the clamp, only rounded; 0.0100001 lies above float32 0.01 and is kept. Negative, "
           "zero and 0.005 parameters all give the bias of 0.01: a parameter trained below it has no effect on "
           "the model (claim KERPLE-CLAMP-1); a power-kernel p above 2 acts as 2. That every cell follows this "
           "rule, clamped heads included, is claim KERPLE-CLAMP-1's (plan.p() / a() against the oracle's clamp)"
           + ("" if fig["bias_zero_at_0"] else " (**and some bias at d = 0 is not 0**)") +
           f". Data: KerplePlan::p() and a() of {len(fig['rows'])} heads, one plan per kernel K = log, power and "
           f"regime R = exact, megatron (`posenc bias kerple --kernel K --regime R --heads {len(fig['rows'])} "
           f"--bias-p={bias_p} --bias-a={bias_a} --key-length 1 --dtype f64` gives the same values). See "
           f"{CLAIMS_LINK}.")
    return table, cap


def figures(ctx, data: FigureData) -> list:
    return [_curves(ctx, data, "log"), _curves(ctx, data, "power"), _deviation(ctx, data), _clamp_table(ctx, data)]
