"""Report module of ALiBi, attention with linear biases (Press et al. 2022): its speed headline, and figures of
what the spec says and the implementations disagree on — the per-head slopes (geometric for a power-of-two head
count, an interleaved tail otherwise), one query's bias row in each variant (parallel lines that differ by a
constant per row), which variants give the same softmax rows (a table), and how far the float32 slopes of
ofirpress/gpt-neox, BLOOM and MPT lie from the exact ones.

Every number comes from the posenc CLI (`posenc freqs alibi`, `posenc bias alibi --dtype f64`); the softmax rows
are computed here in float64 (math.fsum). Without a CLI the figures are not drawn and the page says why."""
from __future__ import annotations

import math
from fractions import Fraction

from .. import md
from ..cli_data import NEG_INF, CliData
from ..gnuplot import Plot, Series

SCHEME = "alibi"

# benchmarks/alibi_bench.cpp: bias/<variant>/heads:32/L:<L>/threads:<n> (the whole [H][L][L] matrix; baselines
# stream_store_f32 — the DRAM write limit — and store_f32 of the same bytes) and
# scores/<variant>/heads:1/L:4096/head_dim:128/threads:<n> (baseline sgemm_f32: q k^T of the same shape; bench.py
# recognises it by the "sgemm" prefix of the variant, in any family, with the same arguments).
HEADLINE_KERNELS = (
    {"family": "bias", "variant": "exact_relative_f32", "baseline": "bandwidth",
     "what": "exact relative (gpt-neox) f32 bias matrix at its largest (DRAM) size vs the streaming store of the "
             "same bytes"},
    {"family": "scores", "variant": "fused_exact_relative_causal_f32", "baseline": "sgemm",
     "what": "scores with the exact causal bias fused (bias rows, then a beta = 1 sgemm) vs sgemm of the same "
             "shape (sgemm time ÷ fused time; the target is ≥ 1/1.1)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-alibi)"
VARIANTS = ("relative", "key", "key_shifted", "key_counted", "symmetric")
EMULATED = ("ofirpress", "bloom", "mpt")

SLOPE_HEADS = (8, 12, 40, 66, 72, 128)        # (a): powers of two and the non-power-of-two tails
TABLE_HEADS = (1, 3, 6, 12)                   # (a′)
ROW_HEADS, ROW_L, ROW_QUERY = 8, 16, 10       # (b): head 0 of 8 (m_0 = 1/2), 16 keys, query row 10
SOFT_HEADS, SOFT_L, SOFT_PAD = 8, 64, 4       # (c): 8 heads, 64 keys and queries, 4 left-padding keys
MAX_HEADS = 160                               # (d): n = 1 .. 160
EQUIVALENT = 1e-12                            # (c): "same softmax rows" below this (rounding level is ~1e-16)
CONVENTIONS_BLOOM = 4.8e-7                    # CONVENTIONS.md §2.13: "float32 results differ by ≤ 4.8e-7 relative"
ORACLE_BLOOM = (6.75e-7, 127, 126)            # what the MPFR oracle found (spec/include/posenc/alibi_spec.hpp)


class AlibiCli(CliData):
    """`posenc freqs alibi` and `posenc bias alibi` as Python data, each call made once (cached); `error` says why
    not, once one failed (later calls then return None). Running and caching: cli_data.CliData."""

    def freqs(self, heads: int, regime: str = "exact") -> dict | None:
        """{"slopes": [float] * heads, "e_num": [int], "e_den": [int], "bias_max": float}."""
        args = ("freqs", "alibi", "--heads", str(heads), "--regime", regime)
        data = self.run(args)
        if data is None:
            return None
        try:
            slopes = [float(x) for x in data["slopes"]]
            e_num, e_den = [int(x) for x in data["e_num"]], [int(x) for x in data["e_den"]]
            bias_max = float((data.get("spec") or {}).get("bias_max", 8.0))
        except (KeyError, TypeError, ValueError) as e:
            self.fail(args, f"{type(e).__name__}: {e}")
            return None
        if not len(slopes) == len(e_num) == len(e_den) == heads or not all(d > 0 for d in e_den):
            self.fail(args, f"expected {heads} slopes and exponents")
            return None
        return {"slopes": slopes, "e_num": e_num, "e_den": e_den, "bias_max": bias_max}

    def bias(self, heads: int, variant: str, key_length: int, query_length: int | None = None,
             mask: str | None = None, key_mask: str | None = None) -> list | None:
        """bias[h][i][j] in float64 (-inf where the JSON has null: a masked entry)."""
        lq = key_length if query_length is None else query_length
        args = ("bias", "alibi", "--heads", str(heads), "--variant", variant, "--key-length", str(key_length),
                "--query-length", str(lq), *(("--mask", mask) if mask else ()),
                *(("--key-mask", key_mask) if key_mask else ()), "--dtype", "f64")
        return self.bias_tensor(args, self.run(args), heads, lq, key_length)


def _not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


def power_of_two_floor(n: int) -> int:
    return 1 << (n.bit_length() - 1)


def slope_text(bias_max: float, e_num: int, e_den: int) -> str:
    """m = 2^(-b e) with e = e_num/e_den, as a power of two: 2^-4, 2^(-1/2)."""
    k = Fraction(bias_max) * Fraction(e_num, e_den)
    return f"2^-{k.numerator}" if k.denominator == 1 else f"2^(-{k.numerator}/{k.denominator})"


# --- (a) slopes ----------------------------------------------------------------------------------------------

def _slopes(ctx, src: AlibiCli) -> tuple:
    """(a): the plot, and below its caption a table of the slopes of 1, 3, 6, 12 heads as powers of two."""
    name = "fig-alibi-slopes"
    data = {n: src.freqs(n) for n in SLOPE_HEADS}
    if any(d is None for d in data.values()):
        return _not_drawn(name, src.error), ""
    # Check the two rules on the CLI's own numbers: e_h = (h+1)/n for a power of two n (geometric, m_0 = 2^(-8/n)),
    # slopes(n) = slopes(c) + slopes(2c)[0::2][:n-c] otherwise, bit for bit.
    bad = []
    for n in SLOPE_HEADS:
        c = power_of_two_floor(n)
        d = data[n]
        if n == c:
            ok = all(Fraction(a, b) == Fraction(h + 1, n) for h, (a, b) in enumerate(zip(d["e_num"], d["e_den"])))
        else:
            base, double = src.freqs(c), src.freqs(2 * c)
            if base is None or double is None:
                return _not_drawn(name, src.error), ""
            ok = d["slopes"] == base["slopes"] + double["slopes"][0::2][:n - c]
        if not ok:
            bad.append(n)
    series = []
    # 66 heads are the first 66 of 72: open circles, so that both stay visible where they coincide.
    for n, style in zip(SLOPE_HEADS, ("linespoints pt 7 ps 0.9 lw 2", "linespoints pt 5 ps 0.7",
                                      "linespoints pt 9 ps 0.7", "points pt 6 ps 1.1",
                                      "linespoints pt 7 ps 0.3", "linespoints pt 6 ps 0.4 lw 2")):
        series.append(Series(f"n = {n}" + (" (power of two)" if n == power_of_two_floor(n) else
                                           f" (c = {power_of_two_floor(n)})"),
                             list(enumerate(data[n]["slopes"])), style, dashed=n == power_of_two_floor(n)))
    plot = Plot(name=name, title="ALiBi slopes m_h against the head index h (exact regime)",
                xlabel="head index h", ylabel="slope m_h (log scale)", series=series, logy=2,
                key="below left horizontal")
    jumps = []
    for n in SLOPE_HEADS:
        c = power_of_two_floor(n)
        if n != c:
            s = data[n]["slopes"]
            jumps.append(f"n = {n}: m_{c - 1} = {md.num(s[c - 1])} then m_{c} = {md.num(s[c])}")
    verdict = ("both rules hold bit for bit for every n shown" if not bad else
               f"**the rule fails for n = {', '.join(map(str, bad))}**")
    cap = ("**(a) The slopes.** m_h against h for n = " + ", ".join(map(str, SLOPE_HEADS)) + " heads (log scale). "
           "A power-of-two n (dashed: 8, 128) gives a geometric sequence, one straight line in log scale: "
           "m_h = 2^(−8(h+1)/n) = m_0^(h+1) with m_0 = 2^(−8/n). Any other n takes the c = 2^⌊log2 n⌋ slopes of c "
           "heads, then the odd-numbered slopes of 2c heads (slopes(2c)[0::2][:n−c]), which fall between the first "
           "c: the sequence jumps back up after head c − 1 (" + "; ".join(jumps) + ") and is not sorted. The first c "
           "slopes of n heads are those of c heads, so n = 12 starts on the line of n = 8, and n = 66 (open circles) "
           "is the start of n = 72. Checked "
           "here on the CLI's numbers (e_h = (h+1)/n from the JSON's e_num/e_den; slopes(n) equal to "
           "slopes(c) + slopes(2c)[0::2][:n−c] as doubles): " + verdict + ". Claims ALIBI-SLOPE-1 (the definition, "
           "correctly rounded), ALIBI-SLOPE-3 (geometric / interleaved; n = 12, 40, 66, 72 are its examples). "
           f"Data: `posenc freqs alibi --heads n --format json` (exact regime). See {CLAIMS_LINK}.")
    image = ctx.renderer.image(plot, "ALiBi slopes per head")

    rows, small = [], {}
    for n in TABLE_HEADS:
        d = small[n] = src.freqs(n)
        if d is None:
            return image, cap + "\n\n" + _not_drawn("tab-alibi-slopes", src.error, "table")
        b = d["bias_max"]
        rows.append([str(n), str(power_of_two_floor(n)),
                     md.cell(", ".join(f"{a}/{q}" for a, q in zip(d["e_num"], d["e_den"]))),
                     md.cell(", ".join(slope_text(b, a, q) for a, q in zip(d["e_num"], d["e_den"]))),
                     md.cell(", ".join(repr(s) for s in d["slopes"]))])
    # The integer exponents k = b e_h: the slope must be exactly 2^-k.
    dyadic = [(Fraction(d["bias_max"]) * Fraction(a, q), s) for d in small.values()
              for a, q, s in zip(d["e_num"], d["e_den"], d["slopes"])]
    exact = all(s == 2.0 ** -int(k) for k, s in dyadic if k.denominator == 1)
    examples = small[1]["slopes"] == [2.0 ** -8] and small[3]["slopes"] == [1 / 16, 1 / 256, 1 / 4]
    table = md.table(["n", "c", "e_h = e_num/e_den (JSON)", "m_h = 2^(−8 e_h)", "m_h (the JSON's double)"], rows,
                     ["r", "r", "l", "l", "l"])
    cap2 = ("*The slopes of small head counts, exactly* (table above): `posenc freqs alibi --heads n --format json` "
            "gives each slope with its exponent e_h = e_num/e_den, m_h = 2^(−b e_h), b = 8. n = 1 gives 2^−8 and "
            "n = 3 gives (2^−4, 2^−8, 2^−2) = (1/16, 1/256, 1/4), not sorted — the examples of ALIBI-SLOPE-3 "
            + ("(the CLI's doubles equal them)" if examples else "(**the CLI's doubles differ from them**)")
            + "; n = 6 ends with the odd-numbered slopes of 8 heads (2^−1, 2^−3), n = 12 with those of 16 heads, "
            "2^(−p/2): irrational, rounded once to double (ALIBI-SLOPE-1). Every slope with an integer exponent "
            "k = 8 e_h is "
            + ("exactly 2^−k" if exact else "**not** exactly 2^−k in at least one case")
            + f". See {CLAIMS_LINK}.")
    return image, cap + "\n\n" + table + "\n" + cap2


# --- (b) bias rows -------------------------------------------------------------------------------------------

def _bias_rows(ctx, src: AlibiCli) -> tuple:
    name = "fig-alibi-bias-rows"
    rows, causal = {}, {}
    for v in VARIANTS:
        full = src.bias(ROW_HEADS, v, ROW_L)
        masked = src.bias(ROW_HEADS, v, ROW_L, mask="causal")
        if full is None or masked is None:
            return _not_drawn(name, src.error), ""
        rows[v], causal[v] = full[0][ROW_QUERY], masked[0][ROW_QUERY]
    m0 = src.freqs(ROW_HEADS)
    if m0 is None:
        return _not_drawn(name, src.error), ""
    m0 = m0["slopes"][0]
    q = ROW_QUERY
    visible = range(q + 1)
    rel = rows["relative"]
    facts = []
    for v in VARIANTS:
        r = rows[v]
        offsets = [r[j] - rel[j] for j in visible]
        steps_before = {r[j + 1] - r[j] for j in range(q)}
        steps_after = sorted({r[j + 1] - r[j] for j in range(q, ROW_L - 1)})
        const = "constant " + md.num(offsets[0]) if max(offsets) == min(offsets) else \
            f"**not constant** ({md.num(min(offsets))} … {md.num(max(offsets))})"
        facts.append(f"{v}: step {', '.join(md.num(s) for s in sorted(steps_before))} up to the query, "
                     f"{', '.join(md.num(s) for s in steps_after)} after it; minus relative at j ≤ {q}: {const}")
    causal_ok = all(causal[v][j] == rows[v][j] for v in VARIANTS for j in visible) and \
        all(causal[v][j] == NEG_INF for v in VARIANTS for j in range(q + 1, ROW_L))
    series = []
    styles = {"relative": "linespoints pt 7 ps 1.2 lw 2", "key": "linespoints pt 6 ps 1.6",
              "key_shifted": "linespoints pt 5 ps 0.8", "key_counted": "linespoints pt 2 ps 0.9 dt 2",
              "symmetric": "linespoints pt 9 ps 0.9"}
    labels = {"relative": "relative (gpt-neox)", "key": "key (ofirpress)", "key_shifted": "key_shifted (MPT)",
              "key_counted": "key_counted (BLOOM, no padding)", "symmetric": "symmetric"}
    for v in VARIANTS:
        series.append(Series(labels[v], list(enumerate(rows[v])), styles[v]))
    plot = Plot(name=name, title=f"ALiBi bias of query row {q} against the key j, n = {ROW_HEADS}, head 0 "
                                 f"(m_0 = {m0:g}), {ROW_L} keys, no mask",
                xlabel="key position j", ylabel=f"bias b({q}, j)", series=series, key="below left horizontal",
                extra=[f"set arrow from {q}, graph 0 to {q}, graph 1 nohead dt 3 lc rgb '#888888'",
                       f"set label 'query at {q}' at {q + 0.2}, graph 0.95 left textcolor rgb '#555555'"])
    cap = (f"**(b) One query's bias row in each variant.** b(i, j) of query row i = {q} (queries are the last "
           f"query_length of the keys; here query_length = key_length = {ROW_L}, so row {q} sits at position {q}) "
           "against the key j, head 0 of "
           f"n = {ROW_HEADS} (m_0 = 2^−1 = {m0:g}), no mask. Up to the query (the keys a causal model sees) every "
           "variant is a straight line of slope m_0, and they differ by a constant per row — which softmax "
           "cancels (see (c)). Past the query they part: key, key_shifted and key_counted go on rising, relative "
           "is 0 (gpt-neox's −tril(i − j): it is meant to be masked), symmetric −m|i − j| bends down. From the "
           "data: " + "; ".join(facts) + ". With `--mask causal` the CLI gives "
           + (f"the same values at j ≤ {q} and −inf (JSON null) at every j > {q}, in every variant"
              if causal_ok else "**other values** than the unmasked rows at j ≤ "
              f"{q}, or finite entries above it") + ". Claims ALIBI-BIAS-1 (each variant's definition), "
           "ALIBI-LINEAR-1 (b(i, j+1) − b(i, j) = m_h wherever both keys are visible; symmetric: +m before the "
           f"query, −m after). Data: `posenc bias alibi --heads {ROW_HEADS} --variant V --key-length {ROW_L} "
           f"[--mask causal] --dtype f64 --format json`, row {q} of head 0. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "ALiBi bias rows per variant"), cap


# --- (c) softmax equivalence ---------------------------------------------------------------------------------

def softmax(row: list) -> list | None:
    """float64 softmax of a row with -inf entries (math.fsum); None for a fully masked row."""
    finite = [x for x in row if x != NEG_INF]
    if not finite:
        return None
    top = max(finite)
    e = [0.0 if x == NEG_INF else math.exp(x - top) for x in row]
    s = math.fsum(e)
    return [x / s for x in e]


def softmax_difference(a: list, b: list) -> tuple:
    """(max over rows of max_j |softmax(a row) − softmax(b row)|, rows compared, rows fully masked in both) for
    two [heads][Lq][Lk] matrices; inf where one row is fully masked and the other not."""
    worst, compared, skipped = 0.0, 0, 0
    for ha, hb in zip(a, b):
        for ra, rb in zip(ha, hb):
            pa, pb = softmax(ra), softmax(rb)
            if pa is None and pb is None:
                skipped += 1
                continue
            compared += 1
            if pa is None or pb is None:
                worst = math.inf
                continue
            worst = max(worst, max(abs(x - y) for x, y in zip(pa, pb)))
    return worst, compared, skipped


def _cell(x: float) -> str:
    return f"{md.num(x)}: " + ("same" if x <= EQUIVALENT else "**differs**")


def _softmax_table(ctx, src: AlibiCli) -> tuple:
    name = "tab-alibi-softmax"
    n, L = SOFT_HEADS, SOFT_L
    causal, free = {}, {}
    for v in VARIANTS:
        causal[v] = src.bias(n, v, L, mask="causal")
        free[v] = src.bias(n, v, L)
        if causal[v] is None or free[v] is None:
            return _not_drawn(name, src.error, "table"), ""
    pad = "0" * SOFT_PAD + "1" * (L - SOFT_PAD)
    bloom_pad = src.bias(n, "key_counted", L, mask="causal", key_mask=pad)
    rel_pad = src.bias(n, "relative", L, mask="causal", key_mask=pad)
    if bloom_pad is None or rel_pad is None:
        return _not_drawn(name, src.error, "table"), ""
    rows, numbers = [], {}
    for v in VARIANTS:
        c, cn, _ = softmax_difference(causal[v], causal["relative"])
        f, fn, _ = softmax_difference(free[v], free["relative"])
        k, _, _ = softmax_difference(free[v], free["key"])
        numbers[v] = (c, f, k)
        rows.append([md.code(v), _cell(c), _cell(f), _cell(k)])
    p, pn, ps = softmax_difference(bloom_pad, rel_pad)
    rows.append([f"{md.code('key_counted')}, key mask {SOFT_PAD} × 0 then 1s (vs relative with the same mask)",
                 _cell(p), "—", "—"])
    table = md.table(["variant", "causal mask: max \\|Δ\\| vs relative", "no mask: max \\|Δ\\| vs relative",
                      "no mask: max \\|Δ\\| vs key"], rows, ["l", "r", "r", "r"])
    causal_max = max(numbers[v][0] for v in VARIANTS)
    cap = (f"**(c) Which variants are the same under softmax.** For n = {n} heads and {L} queries × {L} keys, "
           "every row of every head: max over rows of max_j |softmax(variant row) − softmax(reference row)|, "
           f"computed here in float64 (math.exp, math.fsum) from `posenc bias alibi --heads {n} --variant V "
           f"--key-length {L} [--mask causal] --dtype f64 --format json` ({cn} rows per comparison). Under the "
           f"causal mask all five variants give the same rows (largest difference {md.num(causal_max)}"
           + (f": with n = {n} every slope is a power of two, so the f64 biases are exact and each row minus its "
              "maximum is the same vector in every variant" if causal_max == 0 else
              ": the rounding of the f64 biases and of exp") + "): their biases differ by a constant per row (claim "
           "ALIBI-SOFTMAX-1). Without a mask (bidirectional attention) the symmetric variant −m|i − j| differs "
           f"from relative by {md.num(numbers['symmetric'][1])} and from key by {md.num(numbers['symmetric'][2])} "
           "(claim ALIBI-SOFTMAX-2: not equivalent); key, key_shifted and key_counted still agree with each other "
           "(they are linear over all keys), and relative, which is 0 above the diagonal, agrees with none of "
           "them — it is meant to be used with the causal mask. Last row: BLOOM's key_counted with left padding "
           f"(key mask {SOFT_PAD} zeros then {L - SOFT_PAD} ones: positions counted over the real tokens) against "
           "relative with the same key mask, both under the causal mask (padding keys −inf): "
           f"{md.num(p)} over {pn} rows ({ps} rows of padding queries see no key and are left out) — the same "
           f"rows. \"Same softmax rows\" means ≤ {EQUIVALENT:g}. See {CLAIMS_LINK}.")
    return table, cap


# --- (d) emulated vs exact slopes ----------------------------------------------------------------------------

def covering_heads(limit: int) -> list:
    """The head counts whose slopes hold every n <= limit as a prefix: slopes(n) = slopes(2c - 1)[:n] for
    c <= n < 2c (slopes(c), then the odd-numbered slopes of 2c heads): 1, 3, 7, ..., and `limit` itself."""
    out, c = [], 1
    while c <= limit:
        out.append(min(2 * c - 1, limit))
        c *= 2
    return out


def _cover(n: int, covers: list) -> int:
    return next(m for m in covers if power_of_two_floor(m) == power_of_two_floor(n))


def _deviation(ctx, src: AlibiCli) -> tuple:
    name = "fig-alibi-slope-deviation"
    covers = covering_heads(MAX_HEADS)
    big = {}
    for regime in ("exact", *EMULATED):
        for m in covers:
            d = src.freqs(m, regime)
            if d is None:
                return _not_drawn(name, src.error), ""
            big[regime, m] = d["slopes"]
    # The prefix rule, checked on direct calls: every head count of (a) in the exact regime, and a power of two,
    # one just below it and a small one in each emulated regime (MPT's P = 2^ceil(log2 n) changes at a power of two).
    spot = [(r, n) for r in ("exact",) for n in sorted({*SLOPE_HEADS, *TABLE_HEADS})] + \
           [(r, n) for r in EMULATED for n in (12, 100, 128)]
    for regime, n in spot:
        d = src.freqs(n, regime)
        if d is None:
            return _not_drawn(name, src.error), ""
        if d["slopes"] != big[regime, _cover(n, covers)][:n]:
            return _not_drawn(name, f"slopes({n}) of regime {regime} are not the first {n} of slopes"
                                    f"({_cover(n, covers)}): the prefix rule this figure relies on fails"), ""
    series, worst = [], {}
    for regime, style in zip(EMULATED, ("points pt 7 ps 0.6", "points pt 5 ps 0.6", "points pt 9 ps 0.6")):
        pts, best = [], (0.0, 0, 0)
        for n in range(1, MAX_HEADS + 1):
            cov = _cover(n, covers)
            got, exact = big[regime, cov][:n], big["exact", cov][:n]
            devs = [abs(g - e) / e for g, e in zip(got, exact)]
            h = max(range(n), key=lambda i: devs[i])
            if devs[h] > best[0]:
                best = (devs[h], n, h)
            if devs[h] > 0:
                pts.append((n, devs[h]))
        worst[regime] = best
        series.append(Series(regime, pts, style))
    half_ulp = 2.0 ** -24
    series.append(Series("2^-24 (a correctly rounded float32: at most half an ulp, relative)",
                         [(1, half_ulp), (MAX_HEADS, half_ulp)], "lines lw 1", dashed=True, colour="#999999"))
    series.append(Series(f"{CONVENTIONS_BLOOM:g} (CONVENTIONS.md §2.13, BLOOM)",
                         [(1, CONVENTIONS_BLOOM), (MAX_HEADS, CONVENTIONS_BLOOM)], "lines lw 1", dashed=True,
                         colour="#000000"))
    plot = Plot(name=name, title="float32 slopes of the implementations vs the exact slopes, largest over heads",
                xlabel="head count n", ylabel="max_h |s_regime - s_exact| / s_exact (log scale)", series=series,
                logy=10, key="below left horizontal")
    bv, bn, bh = worst["bloom"]
    ov, on, oh = worst["ofirpress"]
    mv, mn, mh = worst["mpt"]
    first = min((s.rows[0][0] for s in series[:len(EMULATED)] if s.rows), default=MAX_HEADS + 1)
    oracle_v, oracle_n, oracle_h = ORACLE_BLOOM
    agrees = bn == oracle_n and bh == oracle_h and abs(bv - oracle_v) <= 0.005 * oracle_v
    cap = ("**(d) How far the float32 slopes of real implementations lie from the exact ones.** For every head "
           f"count n = 1 … {MAX_HEADS}, the largest relative deviation over the heads, |s_regime − s_exact| / "
           "s_exact, of the float32 slopes posenc emulates for ofirpress/gpt-neox (Python float64 slopes cast to "
           "float32), BLOOM (float32 pow(base, h+1)) and MPT (float32 1/2^(t·8/P)); zeros (slopes that are exact "
           f"in float32: every n < {first}) are not drawn. ofirpress rounds a double slope to float32 once: "
           f"largest {md.num(ov)} at n = {on}, h = {oh} ({'within' if ov <= half_ulp else 'above'} 2^−24 = "
           f"{md.num(half_ulp)}, grey dashed line); MPT rounds twice in float32 (2^e_t, then its reciprocal): "
           f"largest {md.num(mv)} at n = {mn}, h = {mh}. "
           "BLOOM's repeated float32 pow carries the rounding of its base into every power, so its deviation "
           f"grows with the head index: largest {md.num(bv, 4)} at n = {bn}, h = {bh} — "
           + ("as the MPFR oracle found (6.75e-7 at n = 127, h = 126)" if agrees else
              f"the MPFR oracle found {oracle_v:g} at n = {oracle_n}, h = {oracle_h}") +
           f", above the ≤ {CONVENTIONS_BLOOM:g} that CONVENTIONS.md §2.13 states (black dashed line; the spec's "
           "regime field cites both). These are posenc's correctly rounded emulations of each float32 "
           "step (claims ALIBI-SLOPE-1, ALIBI-SLOPE-2: bit for bit); a real torch.pow is not correctly rounded — "
           "HF BLOOM's was measured 1 ulp off for 4 of 1234 slopes (properties/heldout), which `posenc check "
           "alibi` allows for (claims ALIBI-CHECK-1, ALIBI-CHECK-2). Data: `posenc freqs alibi --heads n "
           "--regime R --format json` for R = exact, ofirpress, bloom, mpt and n = "
           + ", ".join(map(str, covers)) + f": slopes(n) is the first n of slopes(2c − 1) for c ≤ n < 2c "
           "(ALIBI-SLOPE-3), checked here bit for bit against direct calls for " + str(len(spot)) +
           f" (regime, n) pairs. See {CLAIMS_LINK}.")
    return ctx.renderer.image(plot, "ALiBi float32 slope deviation"), cap


def figures(ctx) -> list:
    src = AlibiCli(ctx.cli)
    out = [_slopes(ctx, src), _bias_rows(ctx, src), _softmax_table(ctx, src), _deviation(ctx, src)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc freqs alibi`, `posenc bias alibi --dtype f64`; "
                             f"{src.calls} invocations); softmax rows in Python float64" if src.error is None
                             else f"not drawn: {md.cell(src.error)}"))
    return out
