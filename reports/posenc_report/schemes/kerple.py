"""Report module of KERPLE, kernelized relative positional biases (Chi et al. 2022): its speed headline, and figures
of the bias itself — −p ln(1 + a d) (log kernel) and −a d^p (power kernel) against the causal distance d for
several trained parameters, with ALiBi's line −m d (the power kernel at p = 1, a = m) for reference — of what the
reference's float32 arithmetic (the megatron regime) changes in it, and of the clamp every reference forward
applies to the trained parameters before use (p, a ≥ 0.01; power: p ≤ 2).

Every number comes from the posenc CLI (`posenc bias kerple --dtype f64 --format json`, and `posenc bias alibi`
for ALiBi's line); the ulp distances, the shape checks and the clamp rule they are compared with are computed here
in float64 (float32 rounding through struct). Without a CLI the figures are not drawn and the page says why."""
from __future__ import annotations

import math
import struct

from .. import md
from ..cli_data import CliData
from ..gnuplot import Plot, Series

SCHEME = "kerple"

# benchmarks/kerple_bench.cpp: bias/<variant>/heads:32/L:<L>/threads:<n> (the whole [H][L][L] matrix; variants
# exact_log_f32, megatron_log_f32, exact_power_f32, megatron_power_f32, exact_log_f64; baselines stream_store_f32 —
# the DRAM write limit — and store_f32 of the same bytes, and their f64 forms) and
# scores/<variant>/heads:1/L:4096/head_dim:128/threads:<n> (fused_exact_log_causal_f32 against sgemm_f32, q k^T of
# the same shape; bench.py recognises the baseline by the "sgemm" prefix of the variant, with the same arguments).
HEADLINE_KERNELS = (
    {"family": "bias", "variant": "exact_log_f32", "baseline": "bandwidth",
     "what": "exact log-kernel f32 bias matrix at its largest (DRAM) size vs the streaming store of the same bytes"},
    {"family": "scores", "variant": "fused_exact_log_causal_f32", "baseline": "sgemm",
     "what": "scores with the exact causal log-kernel bias fused (bias rows, then a beta = 1 sgemm) vs sgemm of "
             "the same shape (sgemm time ÷ fused time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-kerple)"
EPS = 0.01                  # the reference's clamp: p, a >= eps (spec/include/posenc/kerple_spec.hpp)
MAX_POWER_P = 2.0           # ... and p <= 2 for the power kernel

# (a), (a′): distances 0 .. CURVE_L, (p, a) per head; ALiBi's slope m_3 = 2^-4 of 8 heads for reference.
CURVE_L = 128
LOG_HEADS = ((1.0, 1.0), (1.0, 0.1), (1.0, 0.01), (2.0, 0.1), (0.5, 1.0))
POWER_HEADS = ((0.5, 1.0), (1.0, 0.0625), (1.5, 0.01), (2.0, 0.01))
ALIBI_HEADS, ALIBI_HEAD = 8, 3
POWER_YMIN = -20.0          # (a′) is clipped here: p = 2, a = 0.01 reaches -163.84 at d = 128


def float32(x: float) -> float:
    """x rounded to the nearest binary32 (ties to even), as a float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


# (b): distances 0 .. DEV_L; the parameters are float32 numbers, so that megatron − exact is the arithmetic alone.
DEV_L = 4096
DEV_LOG = ((1.0, float32(0.01)), (1.0, float32(0.1)))       # (p, a) of the log heads
DEV_POWER = ((float32(0.7), float32(0.3)),)                 # (p, a) of the power head
DEV_SLACK = 1.0             # (b): the other roundings (a D, the logarithm) on top of the carried half ulp

# (c): (bias_p, bias_a) pairs around the clamps (schemes/kerple/cases.hpp kHardP, kHardA).
CLAMP_ROWS = ((-1.0, -1.0), (0.0, 0.0), (0.005, 0.005), (0.01, 0.01), (0.0100001, 0.05), (0.5, 0.25), (1.0, 1.0),
              (2.0, 3.0), (2.5, 100.0), (7.0, 1e6))


class KerpleCli(CliData):
    """`posenc bias kerple` (and ALiBi's relative bias for reference) as Python data, each call made once
    (cached); `error` says why not, once one failed (later calls then return None)."""

    def bias(self, kernel: str, regime: str, params, key_length: int, query_length: int = 1) -> dict | None:
        """{"bias": [h][i][j] (float64; -inf where masked), "p_effective", "a_effective": [float] * heads,
        "p_clamped_heads", "a_clamped_heads": [int]} of one head per (bias_p, bias_a) in `params`."""
        heads = len(params)
        args = ("bias", "kerple", "--kernel", kernel, "--regime", regime, "--heads", str(heads),
                "--bias-p=" + ",".join(real_text(p) for p, _ in params),
                "--bias-a=" + ",".join(real_text(a) for _, a in params),
                "--key-length", str(key_length), "--query-length", str(query_length), "--dtype", "f64")
        data = self.run(args)
        tensor = self.bias_tensor(args, data, heads, query_length, key_length)
        if tensor is None:
            return None
        try:
            out = {"bias": tensor}
            for k in ("p_effective", "a_effective"):
                out[k] = [float(x) for x in data[k]]
            for k in ("p_clamped_heads", "a_clamped_heads"):
                out[k] = [int(x) for x in data[k]]
        except (KeyError, TypeError, ValueError) as e:
            self.fail(args, f"{type(e).__name__}: {e}")
            return None
        if len(out["p_effective"]) != heads or len(out["a_effective"]) != heads:
            self.fail(args, f"expected {heads} effective parameters of each kind")
            return None
        return out

    def by_distance(self, kernel: str, regime: str, params, limit: int) -> dict | None:
        """The bias of each head at d = 0 .. limit: one query row at position `limit` (key_length limit + 1,
        query_length 1: key j is at distance limit − j), as {"rows": [h][d], ...the effective parameters}."""
        out = self.bias(kernel, regime, params, limit + 1)
        if out is None:
            return None
        out["rows"] = [list(reversed(h[0])) for h in out.pop("bias")]
        return out

    def alibi_by_distance(self, heads: int, head: int, limit: int) -> list | None:
        """ALiBi's gpt-neox relative bias −m_head d at d = 0 .. limit (exact regime), from `posenc bias alibi`."""
        args = ("bias", "alibi", "--heads", str(heads), "--variant", "relative", "--key-length", str(limit + 1),
                "--query-length", "1", "--dtype", "f64")
        tensor = self.bias_tensor(args, self.run(args), heads, 1, limit + 1)
        return None if tensor is None else list(reversed(tensor[head][0]))


def _not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


def effective(kernel: str, regime: str, bias_p: float, bias_a: float) -> tuple:
    """(p, a) the regime uses (kerple_spec.hpp): exact, the doubles clamped; megatron, the float32 values clamped
    against float32 0.01 (float32 numbers)."""
    if regime == "megatron":
        eps = float32(EPS)
        p, a = max(float32(bias_p), eps), max(float32(bias_a), eps)
    else:
        p, a = max(bias_p, EPS), max(bias_a, EPS)
    if kernel == "power":
        p = min(p, MAX_POWER_P)
    return p, a


def kerple_bias(kernel: str, p: float, a: float, d: float) -> float:
    """The real bias of clamped parameters at distance d, in float64 (for the captions' checks and bounds)."""
    return -p * math.log1p(a * d) if kernel == "log" else -a * d ** p


def ulp32(x: float) -> float:
    """The spacing of binary32 numbers at |x| (normal range): 2^(floor(log2 |x|) − 23)."""
    _, e = math.frexp(abs(x))
    return math.ldexp(1.0, e - 24)


def ulps32(got: float, exact: float) -> float:
    """got − exact in float32 ulps of the exact value (0 where both are 0)."""
    if exact == 0:
        return 0.0 if got == 0 else math.inf
    return (got - exact) / ulp32(exact)


def carried_half_ulp(p: float, a: float, d: float) -> float:
    """The log kernel's main float32 loss in ulps of the bias: half an ulp of the float32 sum u = 1 + a d (2^-24
    while u < 2), carried into ln(u) as an absolute error of half_ulp(u) / u, times p, over ulp32(p ln u)."""
    u = 1.0 + a * d
    return p * (ulp32(u) / 2) / u / ulp32(p * math.log(u))


def non_increasing(row: list) -> bool:
    return all(row[d + 1] <= row[d] for d in range(len(row) - 1))


def plot_distances(limit: int, dense: int = 64, per_octave: int = 24) -> list:
    """1 .. dense, then `per_octave` points per octave (rounded) up to `limit`, and `limit` itself."""
    out = set(range(1, min(dense, limit) + 1)) | {limit}
    i = 0
    while dense * 2 ** (i / per_octave) < limit:
        out.add(int(round(dense * 2 ** (i / per_octave))))
        i += 1
    return sorted(d for d in out if 1 <= d <= limit)


def real_text(x: float) -> str:
    """The shortest text that reads back to the double x, without a trailing ".0" (1, 0.01, -1, 1000000)."""
    t = repr(float(x))
    return t[:-2] if t.endswith(".0") else t


def _params_text(params) -> str:
    return ", ".join(f"({md.num(p)}, {md.num(a)})" for p, a in params)


def _cli_text(kernel: str, regime: str, params, limit: int) -> str:
    return (f"`posenc bias kerple --kernel {kernel} --regime {regime} --heads {len(params)} "
            f"--bias-p={','.join(real_text(p) for p, _ in params)} "
            f"--bias-a={','.join(real_text(a) for _, a in params)} --key-length {limit + 1} --query-length 1 "
            f"--dtype f64 --format json`")


# --- (a), (a′) bias against the distance ----------------------------------------------------------------------

def _curves(ctx, src: KerpleCli, kernel: str) -> tuple:
    name = f"fig-kerple-{kernel}-bias"
    heads = LOG_HEADS if kernel == "log" else POWER_HEADS
    data = src.by_distance(kernel, "exact", heads, CURVE_L)
    alibi_row = src.alibi_by_distance(ALIBI_HEADS, ALIBI_HEAD, CURVE_L)
    if data is None or alibi_row is None:
        return _not_drawn(name, src.error), ""
    rows = data["rows"]
    m = -alibi_row[1]
    if any(effective(kernel, "exact", p, a) != (p, a) for p, a in heads):
        return _not_drawn(name, "a parameter of this figure lies outside the clamp (a module error)"), ""
    shape_ok = all(r[0] == 0 and non_increasing(r) for r in rows) and non_increasing(alibi_row)
    worst = max(abs(r[d] - kerple_bias(kernel, p, a, d)) / max(abs(kerple_bias(kernel, p, a, d)), 1e-300)
                for r, (p, a) in zip(rows, heads) for d in range(1, CURVE_L + 1))
    styles = ("linespoints pt 7 ps 0.4 lw 2", "linespoints pt 5 ps 0.4", "linespoints pt 9 ps 0.4",
              "linespoints pt 13 ps 0.4", "linespoints pt 11 ps 0.4")
    series = [Series(f"p = {md.num(p)}, a = {md.num(a)}", list(enumerate(r)), s)
              for (p, a), r, s in zip(heads, rows, styles)]
    series.append(Series(f"ALiBi -m d, m = 2^-4 (head {ALIBI_HEAD} of {ALIBI_HEADS})", list(enumerate(alibi_row)),
                         "lines lw 2", dashed=True, colour="#000000"))
    at_end = "; ".join(f"({md.num(p)}, {md.num(a)}): {md.num(r[CURVE_L])}" for (p, a), r in zip(heads, rows))
    cli = _cli_text(kernel, "exact", heads, CURVE_L)
    common = (f"Checked on the CLI's numbers: every curve is 0 at d = 0 and non-increasing in d (claim "
              f"KERPLE-SHAPE-1): {'yes' if shape_ok else '**no**'}; largest relative difference from −p ln(1 + a d) "
              f"/ −a d^p evaluated here in float64: {md.num(worst)}. Data: {cli} (one query row at position "
              f"{CURVE_L}: the key j is at distance d = {CURVE_L} − j), and `posenc bias alibi --heads {ALIBI_HEADS} "
              f"--variant relative --key-length {CURVE_L + 1} --query-length 1 --dtype f64 --format json`, head "
              f"{ALIBI_HEAD}. See {CLAIMS_LINK}.")
    if kernel == "log":
        plot = Plot(name=name, title=f"KERPLE log kernel: bias -p ln(1 + a d) against the distance d (exact regime)",
                    xlabel="distance d = i - j", ylabel="bias b(d)", series=series, key="below left horizontal")
        cap = ("**(a) The log kernel against the distance.** b(d) = −p ln(1 + a d) for d = 0 … "
               f"{CURVE_L} and (p, a) = {_params_text(heads)} (exact regime, f64), with ALiBi's −m d for m = 2^−4 = "
               f"{md.num(m)} (dashed) for reference. p scales the whole curve; a sets where it bends: the bias is "
               "about −p a d (a line of slope −p a, as ALiBi's) while a d ≪ 1, and grows only logarithmically "
               "beyond, so the log kernel penalises distant keys far less than a line does: at d = "
               f"{CURVE_L}, {at_end}, against ALiBi's {md.num(alibi_row[CURVE_L])}. " + common)
    else:
        same = next((h for h, (p, a) in enumerate(heads) if p == 1 and a == m), None)
        alibi_ok = same is not None and rows[same] == alibi_row
        top = min(r[CURVE_L] for r in rows)
        plot = Plot(name=name, title=f"KERPLE power kernel: bias -a d^p against the distance d (exact regime)",
                    xlabel="distance d = i - j", ylabel="bias b(d)", series=series, key="below left horizontal",
                    yrange=(POWER_YMIN, 0.5))
        cap = ("**(a′) The power kernel against the distance.** b(d) = −a d^p for d = 0 … "
               f"{CURVE_L} and (p, a) = {_params_text(heads)} (exact regime, f64), with ALiBi's −m d for m = 2^−4 "
               f"(dashed). p = 1 is ALiBi's line with the slope a: the head (1, {md.num(m)}) and ALiBi's head "
               f"{ALIBI_HEAD} of {ALIBI_HEADS} (`posenc bias alibi`, gpt-neox relative) are "
               + ("equal bit for bit at every d" if alibi_ok else "**not equal**") + " (claim KERPLE-ALIBI-1). "
               "p < 1 bends the curve upwards (concave: like the log kernel, distant keys are penalised less than "
               "by a line), p > 1 downwards (convex: the penalty accelerates; p = 2 makes the softmax weights "
               f"Gaussian in d). The y axis is clipped at {md.num(POWER_YMIN)} (the steepest curve reaches "
               f"{md.num(top)} at d = {CURVE_L}); at d = {CURVE_L}: {at_end}. The reference clamps p to [0.01, 2] "
               "(see (c)): a power kernel cannot be steeper than quadratic. " + common)
    return ctx.renderer.image(plot, f"KERPLE {kernel} kernel bias against the distance"), cap


# --- (b) megatron − exact ---------------------------------------------------------------------------------------

def _deviation(ctx, src: KerpleCli) -> tuple:
    name = "fig-kerple-megatron-deviation"
    runs = {}
    for kernel, params in (("log", DEV_LOG), ("power", DEV_POWER)):
        for regime in ("exact", "megatron"):
            runs[kernel, regime] = src.by_distance(kernel, regime, params, DEV_L)
            if runs[kernel, regime] is None:
                return _not_drawn(name, src.error), ""
    heads = [("log", h, p, a) for h, (p, a) in enumerate(DEV_LOG)] + \
            [("power", h, p, a) for h, (p, a) in enumerate(DEV_POWER)]
    sample = plot_distances(DEV_L)
    series, facts, zero_d0 = [], [], True
    styles = ("points pt 7 ps 0.5", "points pt 5 ps 0.5", "points pt 9 ps 0.6")
    within = True
    for (kernel, h, p, a), style in zip(heads, styles):
        exact, meg = runs[kernel, "exact"]["rows"][h], runs[kernel, "megatron"]["rows"][h]
        # the parameters are float32 numbers: the megatron regime uses the same (p, a) as the exact one
        if runs[kernel, "megatron"]["p_effective"][h] != p or runs[kernel, "megatron"]["a_effective"][h] != a:
            return _not_drawn(name, f"the megatron regime does not use the float32 parameters ({p!r}, {a!r}) as "
                                    "given: the premise of this figure fails"), ""
        zero_d0 = zero_d0 and exact[0] == 0 and meg[0] == 0
        dev = [abs(ulps32(meg[d], exact[d])) for d in range(DEV_L + 1)]
        d_max = max(range(1, DEV_L + 1), key=lambda d: dev[d])
        far = max(dev[d] for d in range(1000, DEV_L + 1))
        label = f"{kernel}, p = {md.num(p)}, a = {md.num(a, 4)}"
        pts = [(d, dev[d]) for d in sample if dev[d] > 0]
        zeros = sum(1 for d in range(1, DEV_L + 1) if dev[d] == 0)
        series.append(Series(label, pts, style))
        fact = (f"{label}: largest {md.num(dev[d_max])} ulps at d = {d_max}, at most {md.num(far)} for d ≥ 1000, "
                f"{zeros} of {DEV_L} distances exact")
        if kernel == "log":
            ok = all(dev[d] <= carried_half_ulp(p, a, d) + DEV_SLACK for d in range(1, DEV_L + 1))
            within = within and ok
            fact += ", every d within the carried half ulp + 1" if ok else \
                ", **some d above the carried half ulp + 1**"
        facts.append(fact)
    p0, a0 = DEV_LOG[0]
    series.append(Series(f"carried half ulp of 1 + a d, a = {md.num(a0, 4)}",
                         [(d, carried_half_ulp(p0, a0, d)) for d in sample], "lines lw 1", dashed=True,
                         colour="#999999"))
    series.append(Series("0.5 ulp (one correct rounding)", [(1, 0.5), (DEV_L, 0.5)], "lines lw 1", dashed=True,
                         colour="#000000"))
    plot = Plot(name=name, title="KERPLE megatron (float32 steps) minus exact bias, in float32 ulps",
                xlabel="distance d (log scale)", ylabel="|megatron - exact| / ulp32(exact) (log scale)",
                series=series, logx=2, logy=10, key="below left horizontal")
    cap = ("**(b) What the reference's float32 arithmetic changes.** |megatron − exact| in float32 ulps of the "
           f"exact bias, against the distance d = 1 … {DEV_L} (log–log; d = 0 is 0 in both: "
           f"{'yes' if zero_d0 else '**no**'}). megatron is posenc's emulation of ParallelKerpleLog / "
           "ParallelKerplePower's float32 steps, each correctly rounded (t = a·D, u = 1 + t, ln u, −p·ln u; "
           "D^p, −a·D^p); exact is the real bias rounded once to f64. The parameters are float32 numbers (0.01, "
           "0.1, 0.7 and 0.3 rounded to float32), so both regimes use the same (p, a) and the difference is the "
           "arithmetic alone. In the log kernel, u = 1 + a D is rounded to float32, whose spacing near 1 is "
           "2^−23: the low bits of a d are lost, and ln u ≈ a d inherits an absolute error of up to 2^−24 — about "
           "1/(a d) ulps of the bias while a d is small. The grey dashed curve is that carried half ulp "
           "(p · ½ulp32(u) / u / ulp32(p ln u)) for a = 0.01; the other roundings (of a D and of the "
           "logarithm) add at most about one ulp. The power kernel has no such loss: D^p and the product a·D^p "
           "are rounded once each, at most half an ulp each (the black dashed line is one such rounding). "
           "From the data (maxima over every d; the plot shows d ≤ 64 and 24 distances per octave above, zeros "
           "left out): " + "; ".join(facts) + ". Real torch float32 log and pow are not correctly rounded and "
           "add their own ulps on top; `posenc check kerple` allows for them (--ulp, and a fused a·D + 1 unless "
           f"--no-fused; claim KERPLE-CHECK-1). Data: {_cli_text('log', 'R', DEV_LOG, DEV_L)} and "
           f"{_cli_text('power', 'R', DEV_POWER, DEV_L)} for R = exact, megatron. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "KERPLE megatron minus exact bias in ulps"), cap


# --- (c) the clamp --------------------------------------------------------------------------------------------

def _value(x: float, regime: str) -> str:
    """A parameter as text: the shortest double (exact), 9 digits (a float32 number, megatron)."""
    return md.cell(f"{x:.9g}" if regime == "megatron" else real_text(x))


def _clamp_table(ctx, src: KerpleCli) -> tuple:
    name = "tab-kerple-clamp"
    cols = [(k, r) for r in ("exact", "megatron") for k in ("log", "power")]
    got = {}
    for kernel, regime in cols:
        got[kernel, regime] = src.bias(kernel, regime, CLAMP_ROWS, 1)
        if got[kernel, regime] is None:
            return _not_drawn(name, src.error, "table"), ""
    rows, agree, bias_ok = [], True, True
    for h, (bp, ba) in enumerate(CLAMP_ROWS):
        cells = [md.cell(real_text(bp)), md.cell(real_text(ba))]
        for kernel, regime in cols:
            g = got[kernel, regime]
            p, a = g["p_effective"][h], g["a_effective"][h]
            agree = agree and (p, a) == effective(kernel, regime, bp, ba)
            ps, as_ = _value(p, regime), _value(a, regime)
            if h in g["p_clamped_heads"]:
                ps = f"**{ps}**"
            if h in g["a_clamped_heads"]:
                as_ = f"**{as_}**"
            cells.append(f"{ps}, {as_}")
            # clamped heads are exactly the ones whose value the rule changed (megatron: beyond float32 rounding)
            rp, ra = (float32(bp), float32(ba)) if regime == "megatron" else (bp, ba)
            agree = agree and (h in g["p_clamped_heads"]) == (p != rp) and (h in g["a_clamped_heads"]) == (a != ra)
            bias_ok = bias_ok and g["bias"][h][0][0] == 0
        rows.append(cells)
    table = md.table(["bias_p", "bias_a", "log, exact: p, a", "power, exact: p, a", "log, megatron: p, a",
                      "power, megatron: p, a"], rows, ["r", "r", "l", "l", "l", "l"])
    cap = ("**(c) The clamp.** Every reference forward clamps the trained parameters before use (eps = 0.01): "
           "p = max(bias_p, 0.01) — for the power kernel also min(·, 2) — and a = max(bias_a, 0.01). For each "
           "(bias_p, bias_a) given to `posenc bias kerple`, the (p, a) each kernel and regime uses: the JSON's "
           "p_effective and a_effective; **bold**: the clamp changed the value (the JSON's p_clamped_heads, "
           "a_clamped_heads). The exact regime clamps the doubles (printed as the shortest text that reads "
           "back); the megatron regime "
           "clamps the float32 parameters against float32 0.01 = 0.00999999978 (torch.clamp against the scalar "
           "in float32), so its values are float32 numbers (printed to 9 digits) and a parameter equal to 0.01 "
           "is not changed by the clamp, only rounded; 0.0100001 lies above float32 0.01 and is kept. Negative, "
           "zero and 0.005 parameters all give the bias of 0.01: a parameter trained below it has no effect on "
           "the model (claim KERPLE-CLAMP-1); a power-kernel p above 2 acts as 2. The rule computed here "
           "(float32 rounding through struct) gives the same value in every cell, and the same clamped heads: "
           + ("yes" if agree else "**no**") + ("" if bias_ok else " (**and some bias at d = 0 is not 0**)") +
           f". Data: `posenc bias kerple --kernel K --regime R --heads {len(CLAMP_ROWS)} --bias-p="
           f"{','.join(real_text(p) for p, _ in CLAMP_ROWS)} --bias-a={','.join(real_text(a) for _, a in CLAMP_ROWS)} "
           f"--key-length 1 --dtype f64 --format json` for K = log, power and R = exact, megatron. See {CLAIMS_LINK}.")
    return table, cap


def figures(ctx) -> list:
    src = KerpleCli(ctx.cli)
    out = [_curves(ctx, src, "log"), _curves(ctx, src, "power"), _deviation(ctx, src), _clamp_table(ctx, src)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc bias kerple --dtype f64`, `posenc bias alibi "
                             f"--dtype f64`; {src.calls} invocations); ulps and checks in Python float64"
                             if src.error is None else f"not drawn: {md.cell(src.error)}"))
    return out
