"""Report module of ALiBi, attention with linear biases (Press et al. 2022): its speed headline, and figures of
what the spec says and the implementations disagree on — the per-head slopes (geometric for a power-of-two head
count, an interleaved tail otherwise), one query's bias row in each variant (parallel lines that differ by a
constant per row), which variants give the same softmax rows (a table), and how far the float32 slopes of
ofirpress/gpt-neox, BLOOM and MPT lie from the exact ones.

Every number comes from figures-alibi.json (schemes/alibi/figures.cpp, run by posenc_figures); this module only
draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import Plot, Series

SCHEME = "alibi"

CLAIMS_LINK = "[claims](claims.md#scheme-alibi)"

# (a): one style per head count of the figure data, in its order (8, 12, 40, 66, 72, 128); 66 heads are the first
# 66 of 72: open circles, so that both stay visible where they coincide.
SLOPE_STYLES = ("linespoints pt 7 ps 0.9 lw 2", "linespoints pt 5 ps 0.7", "linespoints pt 9 ps 0.7",
                "points pt 6 ps 1.1", "linespoints pt 7 ps 0.3", "linespoints pt 6 ps 0.4 lw 2")
ROW_STYLES = {"relative": "linespoints pt 7 ps 1.2 lw 2", "key": "linespoints pt 6 ps 1.6",
              "key_shifted": "linespoints pt 5 ps 0.8", "key_counted": "linespoints pt 2 ps 0.9 dt 2",
              "symmetric": "linespoints pt 9 ps 0.9"}
ROW_LABELS = {"relative": "relative (gpt-neox)", "key": "key (ofirpress)", "key_shifted": "key_shifted (MPT)",
              "key_counted": "key_counted (BLOOM, no padding)", "symmetric": "symmetric"}
DEVIATION_STYLES = ("points pt 7 ps 0.6", "points pt 5 ps 0.6", "points pt 9 ps 0.6")


def _points(rows: list) -> list:
    return [tuple(p) for p in rows]


def _slope_text(k: list) -> str:
    """m = 2^-k with k = [numerator, denominator] (reduced) of the figure data: 2^-4, 2^(-1/2)."""
    return f"2^-{k[0]}" if k[1] == 1 else f"2^(-{k[0]}/{k[1]})"


def _short(x: float) -> str:
    """Three digits, the exponent without its leading zero: 6.75e-7."""
    return f"{x:.3g}".replace("e-0", "e-").replace("e+0", "e+")


# --- (a) slopes ----------------------------------------------------------------------------------------------

def _slope_table(fig: dict) -> tuple:
    """(a′): the table of the slopes of 1, 3, 6, 12 heads as powers of two, and its caption."""
    rows = [[str(t["n"]), str(t["c"]),
             md.cell(", ".join(f"{a}/{q}" for a, q in zip(t["e_num"], t["e_den"]))),
             md.cell(", ".join(_slope_text(k) for k in t["k"])),
             md.cell(", ".join(repr(s) for s in t["slopes"]))] for t in fig["table"]]
    table = md.table(["n", "c", "e_h = e_num/e_den (JSON)", "m_h = 2^(−8 e_h)", "m_h (the JSON's double)"], rows,
                     ["r", "r", "l", "l", "l"])
    cap = ("*The slopes of small head counts, exactly* (table above): AlibiPlan::slopes gives each slope, here with "
           "its exponent e_h = e_num/e_den (as `posenc freqs alibi --heads n` reports it), m_h = 2^(−b e_h), b = 8. "
           "n = 1 gives 2^−8 and n = 3 gives (2^−4, 2^−8, 2^−2) = (1/16, 1/256, 1/4), not sorted — the examples of "
           "ALIBI-SLOPE-3 " + ("(the library's doubles equal them)" if fig["examples_hold"] else
                               "(**the library's doubles differ from them**)")
           + "; n = 6 ends with the odd-numbered slopes of 8 heads (2^−1, 2^−3), n = 12 with those of 16 heads, "
           "2^(−p/2): irrational, rounded once to double (ALIBI-SLOPE-1). Every slope with an integer exponent "
           "k = 8 e_h is "
           + ("exactly 2^−k" if fig["dyadic_exact"] else "**not** exactly 2^−k in at least one case")
           + f". See {CLAIMS_LINK}.")
    return table, cap


@figure("slopes", "fig-alibi-slopes")
def _slopes(ctx, fig: dict, name: str) -> tuple:
    """(a): the plot, and below its caption a table of the slopes of 1, 3, 6, 12 heads as powers of two."""
    curves = fig["curves"]
    series = [Series(f"n = {cv['n']}" + (" (power of two)" if cv["n"] == cv["c"] else f" (c = {cv['c']})"),
                     _points(cv["points"]), style, dashed=cv["n"] == cv["c"])
              for cv, style in zip(curves, SLOPE_STYLES)]
    plot = Plot(name=name, title="ALiBi slopes m_h against the head index h (exact regime)",
                xlabel="head index h", ylabel="slope m_h (log scale)", series=series, logy=2,
                key="below left horizontal")
    jumps = [f"n = {cv['n']}: m_{j['before_head']} = {md.num(j['before'])} then m_{j['after_head']} = "
             f"{md.num(j['after'])}" for cv in curves if (j := cv.get("jump"))]
    fails = fig["interleave_fails"]
    verdict = ("holds bit for bit for every n shown" if not fails else
               f"**fails for n = {', '.join(map(str, fails))}**")
    cap = ("**(a) The slopes.** m_h against h for n = " + ", ".join(str(cv["n"]) for cv in curves) + " heads (log "
           "scale). A power-of-two n (dashed: 8, 128) gives a geometric sequence, one straight line in log scale: "
           "m_h = 2^(−8(h+1)/n) = m_0^(h+1) with m_0 = 2^(−8/n). Any other n takes the c = 2^⌊log2 n⌋ slopes of c "
           "heads, then the odd-numbered slopes of 2c heads (slopes(2c)[0::2][:n−c]), which fall between the first "
           "c: the sequence jumps back up after head c − 1 (" + "; ".join(jumps) + ") and is not sorted. The first c "
           "slopes of n heads are those of c heads, so n = 12 starts on the line of n = 8, and n = 66 (open circles) "
           "is the start of n = 72. From the figure data (slopes(n) equal to slopes(c) + slopes(2c)[0::2][:n−c] as "
           "doubles): the interleaving " + verdict + "; the geometric rule (e_h = (h+1)/n for a power of two n) is "
           "claim ALIBI-SLOPE-3's, held against the oracle. Claims ALIBI-SLOPE-1 (the definition, correctly "
           "rounded), ALIBI-SLOPE-3 (geometric / interleaved; n = 12, 40, 66, 72 are its examples). Data: "
           "AlibiPlan::slopes, exact regime (`posenc freqs alibi --heads n` gives the same values). See "
           f"{CLAIMS_LINK}.")
    image = ctx.renderer.image(plot, "ALiBi slopes per head")
    table, cap2 = _slope_table(fig)
    return image, cap + "\n\n" + table + "\n" + cap2


# --- (b) bias rows -------------------------------------------------------------------------------------------

def _row_fact(v: dict, q: int) -> str:
    const = ("constant " + md.num(v["offset_min"]) if v["offset_constant"] else
             f"**not constant** ({md.num(v['offset_min'])} … {md.num(v['offset_max'])})")
    return (f"{v['variant']}: step {', '.join(md.num(s) for s in v['steps_before'])} up to the query, "
            f"{', '.join(md.num(s) for s in v['steps_after'])} after it; minus relative at j ≤ {q}: {const}")


@figure("bias_rows", "fig-alibi-bias-rows")
def _bias_rows(ctx, fig: dict, name: str) -> tuple:
    q, n, L, m0 = fig["query"], fig["heads"], fig["key_length"], fig["m0"]
    series = [Series(ROW_LABELS[v["variant"]], _points(v["points"]), ROW_STYLES[v["variant"]])
              for v in fig["variants"]]
    plot = Plot(name=name, title=f"ALiBi bias of query row {q} against the key j, n = {n}, head 0 "
                                 f"(m_0 = {m0:g}), {L} keys, no mask",
                xlabel="key position j", ylabel=f"bias b({q}, j)", series=series, key="below left horizontal",
                extra=[f"set arrow from {q}, graph 0 to {q}, graph 1 nohead dt 3 lc rgb '#888888'",
                       f"set label 'query at {q}' at {q + 0.2}, graph 0.95 left textcolor rgb '#555555'"])
    cap = (f"**(b) One query's bias row in each variant.** b(i, j) of query row i = {q} (queries are the last "
           f"query_length of the keys; here query_length = key_length = {L}, so row {q} sits at position {q}) "
           f"against the key j, head 0 of n = {n} (m_0 = 2^−1 = {m0:g}), no mask. Up to the query (the keys a "
           "causal model sees) every variant is a straight line of slope m_0, and they differ by a constant per "
           "row — which softmax cancels (see (c)). Past the query they part: key, key_shifted and key_counted go "
           "on rising, relative is 0 (gpt-neox's −tril(i − j): it is meant to be masked), symmetric −m|i − j| "
           "bends down. From the data: " + "; ".join(_row_fact(v, q) for v in fig["variants"]) + ". With the "
           "causal mask the library gives "
           + (f"the same values at j ≤ {q} and −inf at every j > {q}, in every variant" if fig["causal_same"] else
              f"**other values** than the unmasked rows at j ≤ {q}, or finite entries above it")
           + ". Claims ALIBI-BIAS-1 (each variant's definition), ALIBI-LINEAR-1 (b(i, j+1) − b(i, j) = m_h "
           "wherever both keys are visible; symmetric: +m before the query, −m after). Data: AlibiPlan::bias "
           f"(f64) of {n} heads, variant V, key_length {L}, with and without the causal mask, row {q} of head 0 "
           f"(`posenc bias alibi --heads {n} --variant V --key-length {L} [--mask causal] --dtype f64` gives the "
           f"same values). See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "ALiBi bias rows per variant"), cap


# --- (c) softmax equivalence ---------------------------------------------------------------------------------

def _cell(x: dict) -> str:
    return f"{md.num(x['max'])}: " + ("same" if x["same"] else "**differs**")


@figure("softmax", "tab-alibi-softmax", "table")
def _softmax_table(ctx, fig: dict, name: str) -> tuple:
    n, L, pad, p = fig["heads"], fig["length"], fig["pad"], fig["padded"]
    rows = [[md.code(v["variant"]), _cell(v["causal_vs_relative"]), _cell(v["unmasked_vs_relative"]),
             _cell(v["unmasked_vs_key"])] for v in fig["variants"]]
    rows.append([f"{md.code('key_counted')}, key mask {pad} × 0 then 1s (vs relative with the same mask)",
                 _cell(p), "—", "—"])
    table = md.table(["variant", "causal mask: max \\|Δ\\| vs relative", "no mask: max \\|Δ\\| vs relative",
                      "no mask: max \\|Δ\\| vs key"], rows, ["l", "r", "r", "r"])
    sym = next(v for v in fig["variants"] if v["variant"] == "symmetric")
    cap = (f"**(c) Which variants are the same under softmax.** For n = {n} heads and {L} queries × {L} keys, "
           "every row of every head: max over rows of max_j |softmax(variant row) − softmax(reference row)|, "
           "computed in float64 (std::exp, and the correctly rounded sum math.fsum would give) from AlibiPlan::bias "
           f"(f64) of {n} heads, variant V, key_length {L}, with and without the causal mask (`posenc bias alibi "
           f"--heads {n} --variant V --key-length {L} [--mask causal] --dtype f64` gives the same matrices; "
           f"{fig['rows_compared']} rows per comparison). Under the causal mask all five variants give the same "
           f"rows (largest difference {md.num(fig['causal_max'])}"
           + (f": with n = {n} every slope is a power of two, so the f64 biases are exact and each row minus its "
              "maximum is the same vector in every variant" if fig["causal_zero"] else
              ": the rounding of the f64 biases and of exp") + "): their biases differ by a constant per row (claim "
           "ALIBI-SOFTMAX-1). Without a mask (bidirectional attention) the symmetric variant −m|i − j| differs "
           f"from relative by {md.num(sym['unmasked_vs_relative']['max'])} and from key by "
           f"{md.num(sym['unmasked_vs_key']['max'])} (claim ALIBI-SOFTMAX-2: not equivalent); key, key_shifted and "
           "key_counted still agree with each other (they are linear over all keys), and relative, which is 0 "
           "above the diagonal, agrees with none of them — it is meant to be used with the causal mask. Last row: "
           f"BLOOM's key_counted with left padding (key mask {pad} zeros then {L - pad} ones: positions counted "
           "over the real tokens) against relative with the same key mask, both under the causal mask (padding "
           f"keys −inf): {md.num(p['max'])} over {p['rows']} rows ({p['skipped']} rows of padding queries see no "
           f"key and are left out) — the same rows. \"Same softmax rows\" means ≤ {fig['same_at_most']:g}. See "
           f"{CLAIMS_LINK}.")
    return table, cap


# --- (d) emulated vs exact slopes ----------------------------------------------------------------------------

@figure("slope_deviation", "fig-alibi-slope-deviation")
def _deviation(ctx, fig: dict, name: str) -> tuple:
    top, half_ulp, bloom_line = fig["max_heads"], fig["half_ulp"], fig["conventions_bloom"]
    series = [Series(r["regime"], _points(r["points"]), style)
              for r, style in zip(fig["regimes"], DEVIATION_STYLES)]
    series.append(Series("2^-24 (a correctly rounded float32: at most half an ulp, relative)",
                         [(1, half_ulp), (top, half_ulp)], "lines lw 1", dashed=True, colour="#999999"))
    series.append(Series(f"{bloom_line:g} (CONVENTIONS.md §2.13, BLOOM)", [(1, bloom_line), (top, bloom_line)],
                         "lines lw 1", dashed=True, colour="#000000"))
    plot = Plot(name=name, title="float32 slopes of the implementations vs the exact slopes, largest over heads",
                xlabel="head count n", ylabel="max_h |s_regime - s_exact| / s_exact (log scale)", series=series,
                logy=10, key="below left horizontal")
    worst = {r["regime"]: r["worst"] for r in fig["regimes"]}
    o, b, m, orc = worst["ofirpress"], worst["bloom"], worst["mpt"], fig["oracle_bloom"]
    found = f"{_short(orc['value'])} at n = {orc['n']}, h = {orc['h']}"
    cap = ("**(d) How far the float32 slopes of real implementations lie from the exact ones.** For every head "
           f"count n = 1 … {top}, the largest relative deviation over the heads, |s_regime − s_exact| / "
           "s_exact, of the float32 slopes posenc emulates for ofirpress/gpt-neox (Python float64 slopes cast to "
           "float32), BLOOM (float32 pow(base, h+1)) and MPT (float32 1/2^(t·8/P)); zeros (slopes that are exact "
           f"in float32: every n < {fig['first_nonzero']}) are not plotted. ofirpress rounds a double slope to "
           f"float32 once: largest {md.num(o['value'])} at n = {o['n']}, h = {o['h']} "
           f"({'within' if fig['ofirpress_within_half_ulp'] else 'above'} 2^−24 = {md.num(half_ulp)}, grey dashed "
           "line); MPT rounds twice in float32 (2^e_t, then its reciprocal): "
           f"largest {md.num(m['value'])} at n = {m['n']}, h = {m['h']}. "
           "BLOOM's repeated float32 pow carries the rounding of its base into every power, so its deviation "
           f"grows with the head index: largest {md.num(b['value'], 4)} at n = {b['n']}, h = {b['h']} — "
           + (f"as the MPFR oracle found ({found})" if fig["bloom_agrees_with_oracle"] else
              f"the MPFR oracle found {found}") +
           f", above the ≤ {bloom_line:g} that CONVENTIONS.md §2.13 states (black dashed line; the spec's "
           "regime field cites both). These are posenc's correctly rounded emulations of each float32 "
           "step (claims ALIBI-SLOPE-1, ALIBI-SLOPE-2: bit for bit); a real torch.pow is not correctly rounded — "
           "HF BLOOM's was measured 1 ulp off for 4 of 1234 slopes (properties/heldout), which `posenc check "
           "alibi` allows for (claims ALIBI-CHECK-1, ALIBI-CHECK-2). Data: AlibiPlan::slopes of every n = 1 … "
           f"{top} in the regimes exact, " + ", ".join(r["regime"] for r in fig["regimes"]) + " (`posenc freqs "
           "alibi --heads n --regime R` gives the same values); the oracle's largest BLOOM deviation over the same "
           "heads from reference::alibi_slope and alibi_emulated_slope (MPFR, 256 bits). See "
           f"{CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "ALiBi float32 slope deviation"), cap


def figures(ctx, data: FigureData) -> list:
    return [_slopes(ctx, data), _bias_rows(ctx, data), _softmax_table(ctx, data), _deviation(ctx, data)]
