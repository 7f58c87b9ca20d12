"""Report module of NEZHA's functional relative positions (Wei et al. 2019; HF NezhaRelativePositionsEncoding): its
speed headline, the fixed table against its row r (the sinusoid of the shifted index r = clip(j − q_i, −K, K) + K, so
row K — distance 0 — is not sin 0 / cos 0), the relative score term of a fixed query against the offset u = j − q_i
(flat beyond ±K), HF's float32 table against the exact one, a small index matrix, and the preset side by side with
the exact regime.

Every table and index comes from the posenc CLI (`posenc table nezha --format json`, `posenc index nezha --format
json`); the checks against the definition (spec/include/posenc/nezha_spec.hpp, CONVENTIONS.md §2.4: the sinusoid
of r, HF's float32 steps, r(i, j)) and the score curves are computed here. Without a CLI the figures are not drawn
and the page says why."""
from __future__ import annotations

import math
import struct

from .. import md
from ..cli_data import CliData
from ..gnuplot import Plot, Series

SCHEME = "nezha"

# benchmarks/nezha_bench.cpp: table/<variant>/K:<K>/depth:64/threads:<n> (the (2K + 1) x depth table at K = 64 and
# 16384; variants exact_f32 and hf_f32; baseline plainloop_f32: the loop a user writes — float32 frequencies and
# angles, one std::sin / std::cos per entry — which bench.py recognises by its "plainloop" prefix and pairs with
# the kernel of the same family and arguments, items/s ÷ items/s; the table family has no streaming-store
# baseline), scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n> (fused_hf_causal_f32 against sgemm_f32: q k^T
# alone) and attend/hf_causal_f32/heads:1/L:4096/head_dim:64/threads:<n> (the attention output). bench.py pairs a
# kernel with an sgemm baseline of any family in the same file with the same arguments, so the attend kernel is
# held against the scores family's sgemm_f32 (as shaw.py's). A record's size is K·depth here (no L or d named),
# so the table headline is read at K = 16384.
HEADLINE_KERNELS = (
    {"family": "table", "variant": "exact_f32", "baseline": "plainloop",
     "what": "exact f32 table (correctly rounded sin/cos) at its largest size vs the plain loop a user writes "
             "(float32 frequencies and angles, one std::sin / std::cos per entry; items/s ÷ items/s)"},
    {"family": "table", "variant": "hf_f32", "baseline": "plainloop",
     "what": "HF's float32 table (each float32 step correctly rounded) at its largest size vs the same plain loop "
             "(items/s ÷ items/s)"},
    {"family": "scores", "variant": "fused_hf_causal_f32", "baseline": "sgemm",
     "what": "nezha-cn-base causal scores with the relative term fused (Q T^T, gathered rows, then a beta = 1 Q K^T "
             "sgemm) vs sgemm of q k^T alone, same shape (sgemm time ÷ fused time)"},
    {"family": "attend", "variant": "hf_causal_f32", "baseline": "sgemm",
     "what": "nezha-cn-base causal attention output (scores, softmax, alpha (V + T)) vs sgemm of q k^T alone of the "
             "same shape (the scores family's sgemm_f32; sgemm time ÷ attend time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-nezha)"
PRESET = "nezha-cn-base"
PRESET_ARGS = ("--preset", PRESET)
BASE = 10000.0
# (a): the exact f64 table must equal math.sin / math.cos of r w_t in double to within this (the angle r w_t in
# double is off by a few 2^-53 r: < 1e-13 for r <= 2^8; the CLI's entries are correctly rounded).
EXACT_TOL = 1e-12
# (b): the fixed queries' relative term against the closed forms, from HF's float32 table: its entries are off the
# real sinusoid by Δ <= about r |w32 − w| + ulps (under 1e-5 for the preset, figure (c)); q · T with both q and T off
# by Δ and entries of size <= 1 is off by <= 2 depth Δ, divided by sqrt(depth): under 1e-4 for the preset.
CLOSED_FORM_TOL = 1e-4
# (d): the small index matrices (K = SMALL_K, SMALL_L × SMALL_L and the last ALIGN_LQ queries) and the square
# length of the preset's matrix checked whole (> 2K + 1, so every row of the table is read).
SMALL_K, SMALL_L, ALIGN_LQ = 3, 8, 3
CHECK_L = 160


def _not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


# ---- the definition, here in Python -------------------------------------------------------------------------

def f32(x: float) -> float:
    """x rounded to the nearest float32 (ties to even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def ulp32(x: float) -> float:
    """The spacing of float32 numbers at |x| (2^-149 at 0 and in the subnormal range)."""
    if x == 0:
        return 2.0 ** -149
    _, e = math.frexp(abs(x))            # |x| = m 2^e, 0.5 <= m < 1
    return 2.0 ** max(e - 24, -149)


def frequency(t: int, depth: int) -> float:
    """w_t = 10000^(-2t/depth) in double (the exact regime's frequency)."""
    return BASE ** (-2.0 * t / depth)


def hf_frequency(t: int, depth: int) -> float:
    """HF's float32 frequency: RN32(exp(RN32(RN32(2t) · RN32(−ln 10000 / depth)))) (torch.exp(torch.arange(0, depth,
    2).float() * (-math.log(10000.0) / depth))); exp in double, then rounded to float32."""
    c = f32(-math.log(BASE) / depth)
    return f32(math.exp(f32(f32(2 * t) * c)))


def exact_entry(r: int, c: int, depth: int) -> float:
    """T[r][c] of the exact regime in double: sin(r w_t) at c = 2t, cos(r w_t) at c = 2t + 1."""
    a = r * frequency(c // 2, depth)
    return math.sin(a) if c % 2 == 0 else math.cos(a)


def hf_angle(r: int, t: int, depth: int) -> float:
    """a = RN32(RN32(r) · w32_t): position * div_term in float32 (the product of two float32 numbers is exact in
    double, so one rounding)."""
    return f32(f32(r) * hf_frequency(t, depth))


def hf_entry(r: int, c: int, depth: int) -> float:
    """T[r][c] of HF's float32 steps: RN32(sin a) / RN32(cos a) (sin / cos in double, then rounded)."""
    a = hf_angle(r, c // 2, depth)
    return f32(math.sin(a) if c % 2 == 0 else math.cos(a))


def hf_envelope(r: int, c: int, depth: int, t_hf: float) -> float:
    """NEZHA-TABLE-2's bound on |T_hf[r][c] − T_exact[r][c]|: ulp32(T_hf)/2 + ulp32(a32)/2 + r |w32 − w| + 2^-50 r w,
    plus 2^-52 for the exact table's own rounding to double."""
    t = c // 2
    w, w32 = frequency(t, depth), hf_frequency(t, depth)
    a32 = f32(f32(r) * w32)
    return ulp32(t_hf) / 2 + ulp32(a32) / 2 + r * abs(w32 - w) + 2.0 ** -50 * r * w + 2.0 ** -52


def definition_index(k: int, u: int) -> int:
    """r(u) = clip(u, −K, K) + K for the offset u = j − q_i (key minus query)."""
    return max(-k, min(k, u)) + k


def offset(i: int, j: int, query_length: int, key_length: int) -> int:
    """u = j − q_i, the key's offset from query row i (the queries are the last query_length keys)."""
    return j - (key_length - query_length + i)


def index_mismatches(d: dict) -> list:
    """[(i, j, got, want)] where the index matrix differs from clip(j − q_i, −K, K) + K computed here (the JSON's
    own K and lengths)."""
    k, rows = d["spec"]["max_relative_position"], d["indices"]
    lq, lk = len(rows), len(rows[0]) if rows else 0
    return [(i, j, v, definition_index(k, offset(i, j, lq, lk)))
            for i, row in enumerate(rows) for j, v in enumerate(row)
            if v != definition_index(k, offset(i, j, lq, lk))]


def table_deviation(table: list, entry) -> tuple:
    """(max |table[r][c] − entry(r, c, depth)|, r, c) over the table (entry: exact_entry or hf_entry)."""
    depth = len(table[0]) if table else 0
    worst = (0.0, 0, 0)
    for r, row in enumerate(table):
        for c, v in enumerate(row):
            e = abs(v - entry(r, c, depth))
            if e > worst[0]:
                worst = (e, r, c)
    return worst


def row_differences(hf: list, exact: list) -> list:
    """[max_c |hf[r][c] − exact[r][c]|] for every row r."""
    return [max(abs(a - b) for a, b in zip(h, e)) for h, e in zip(hf, exact)]


def relative_term(table: list, q: list, k: int, u: int) -> float:
    """q · T[r(u)] / sqrt(depth): the relative part of the score of a query q and a key at offset u."""
    row = table[definition_index(k, u)]
    return sum(a * b for a, b in zip(q, row)) / math.sqrt(len(row))


def fixed_queries(table: list, k: int) -> list:
    """[(label, q)]: T[K] (the row of distance 0), (1, …, 1)/√depth and e_0 (the unit vector on column 0)."""
    depth = len(table[0])
    ones = [1 / math.sqrt(depth)] * depth
    e0 = [1.0] + [0.0] * (depth - 1)
    return [("q = T[K] (row of distance 0)", list(table[k])), ("q = (1, ..., 1) / sqrt(depth)", ones),
            ("q = e_0 (unit vector on column 0)", e0)]


def cosine_sum(u: int, k: int, depth: int) -> float:
    """T[K] · T[r(u)] / sqrt(depth) in the reals: Σ_t cos(clip(u) w_t) / sqrt(depth) (sin a sin b + cos a cos b =
    cos(a − b); the K cancels)."""
    v = max(-k, min(k, u))
    return sum(math.cos(v * frequency(t, depth)) for t in range(depth // 2)) / math.sqrt(depth)


def flat_beyond(curve: dict, k: int) -> bool:
    """The curve {u: value} is constant for u >= K and for u <= −K (clipping: one table row each)."""
    return all(v == curve[k] for u, v in curve.items() if u >= k) and \
        all(v == curve[-k] for u, v in curve.items() if u <= -k)


def low_pair(depth: int) -> int:
    """The frequency index t of figure (a)'s low-frequency pair: depth/8 (w = 10000^(-1/4) = 0.1), at least 1."""
    return min(max(depth // 8, 1), depth // 2 - 1)


# ---- the CLI ------------------------------------------------------------------------------------------------

class NezhaCli(CliData):
    def table(self, regime: str | None, dtype: str, spec_args: tuple = PRESET_ARGS) -> dict | None:
        """`posenc table nezha *spec_args [--regime R] --dtype T --format json`, its "spec" checked (K, depth,
        regime — the one asked for, if any), "dtype" the one asked for and "table" 2K + 1 rows of depth numbers;
        None (and `error` set) otherwise."""
        args = ("table", "nezha", *spec_args, *(("--regime", regime) if regime else ()), "--dtype", dtype)
        d = self.run(args)
        if d is None:
            return None
        spec = d.get("spec")
        if not isinstance(spec, dict) or not _is_int(spec.get("max_relative_position")) \
                or not _is_int(spec.get("depth")) or spec.get("regime") not in ("exact", "hf") \
                or (regime and spec.get("regime") != regime):
            self.fail(args, "expected \"spec\" with max_relative_position, depth and regime"
                      + (f" {regime}" if regime else ""))
            return None
        if d.get("dtype") != dtype:
            self.fail(args, f"expected \"dtype\": \"{dtype}\", got {d.get('dtype')!r}")
            return None
        rows, depth = 2 * spec["max_relative_position"] + 1, spec["depth"]
        table = d.get("table")
        if not isinstance(table, list) or len(table) != rows or not all(
                isinstance(r, list) and len(r) == depth and all(_is_num(v) for v in r) for r in table):
            self.fail(args, f"expected \"table\": {rows} rows of {depth} numbers")
            return None
        return d

    def index(self, spec_args: tuple, query_length: int, key_length: int) -> dict | None:
        """`posenc index nezha *spec_args --query-length Lq --key-length Lk --format json`, its "indices" checked to
        be Lq rows of Lk integers and its "spec" to name K; None (and `error` set) otherwise."""
        args = ("index", "nezha", *spec_args, "--query-length", str(query_length), "--key-length", str(key_length))
        d = self.run(args)
        if d is None:
            return None
        rows = d.get("indices")
        if not isinstance(rows, list) or len(rows) != query_length or not all(
                isinstance(r, list) and len(r) == key_length and all(_is_int(v) for v in r) for r in rows):
            self.fail(args, f"expected \"indices\": {query_length} rows of {key_length} integers")
            return None
        spec = d.get("spec")
        if not isinstance(spec, dict) or not _is_int(spec.get("max_relative_position")):
            self.fail(args, "expected \"spec\" with max_relative_position")
            return None
        return d


# ---- (a) the table against r --------------------------------------------------------------------------------

def _table_curves(ctx, src: NezhaCli) -> tuple:
    name = "fig-nezha-table"
    d = src.table("exact", "f64")
    if d is None:
        return _not_drawn(name, src.error), ""
    table, spec = d["table"], d["spec"]
    k, depth = spec["max_relative_position"], spec["depth"]
    tl = low_pair(depth)
    cols = [(0, "c = 0: sin(r w_0), w_0 = 1", "lines lw 1"), (1, "c = 1: cos(r w_0)", "lines lw 1 dt 2"),
            (2 * tl, f"c = {2 * tl}: sin(r w_{tl}), w_{tl} = {md.num(frequency(tl, depth))}", "lines lw 3"),
            (2 * tl + 1, f"c = {2 * tl + 1}: cos(r w_{tl})", "lines lw 3 dt 2")]
    series = [Series(label, [(r, table[r][c]) for r in range(2 * k + 1)], style) for c, label, style in cols]
    series.append(Series(f"r = K = {k} (distance 0)", [(k, -1.05), (k, 1.05)], "lines lw 1", dashed=True,
                         colour="#000000"))
    dev, wr, wc = table_deviation(table, exact_entry)
    row0 = all(table[0][c] == (0.0 if c % 2 == 0 else 1.0) for c in range(depth))
    rowk_zero = all(table[k][c] == (0.0 if c % 2 == 0 else 1.0) for c in range(depth))
    plus, minus = table[k + 1][0], table[k - 1][0]
    mirror = abs(plus + minus) <= EXACT_TOL
    plot = Plot(name=name, title=f"NEZHA table T[r][c] against its row r = 0..2K (K = {k}, depth {depth}, exact)",
                xlabel="table row r = clip(j - q_i, -K, K) + K", ylabel="T[r][c]", series=series,
                xrange=(0, 2 * k), yrange=(-1.1, 1.1), key="below left horizontal")
    cap = (f"**(a) The table is the sinusoid of the shifted index r.** Columns 0, 1 (w_0 = 1) and {2 * tl}, "
           f"{2 * tl + 1} (w_{tl} = 10000^(−{2 * tl}/{depth}) = {md.num(frequency(tl, depth))}) of the exact table "
           f"of {md.code(PRESET, table=False)}'s shape (K = {k}, depth {depth}) against r = 0..{2 * k}; the dashed "
           f"line is r = K, the row of distance 0 (j = q_i). Row 0 (distance −K, and every distance below it) is "
           f"(0, 1, 0, 1, …): {_yes(row0)}; row K is (sin K, cos K, …) = ({md.num(table[k][0])}, "
           f"{md.num(table[k][1])}, …), not (0, 1, …): {_yes(not rowk_zero)}. The rows of distances ±1 are not "
           f"mirror images: T[K + 1][0] = sin {k + 1} = {md.num(plus)} and T[K − 1][0] = sin {k - 1} = "
           f"{md.num(minus)} (a sinusoid of the signed distance would give ±sin 1 = ±{md.num(math.sin(1))}): "
           f"T[K + 1][0] ≠ −T[K − 1][0], not antisymmetric across the table: {_yes(not mirror)}. Every "
           f"entry is within {md.num(EXACT_TOL)} of math.sin / math.cos of r 10000^(−2t/depth) computed here: "
           f"{_yes(dev <= EXACT_TOL)} (largest difference {md.num(dev)} at r = {wr}, c = {wc}). Data: "
           f"`posenc table nezha --preset {PRESET} --regime exact --dtype f64 --format json`. See {CLAIMS_LINK} "
           "(NEZHA-TABLE-1).")
    return ctx.renderer.image(plot, "NEZHA table columns against the row r"), cap


# ---- (b) the relative score term against the offset ---------------------------------------------------------

def _score_curves(ctx, src: NezhaCli) -> tuple:
    name = "fig-nezha-score-offset"
    d = src.table(None, "f64")
    if d is None:
        return _not_drawn(name, src.error), ""
    table, spec = d["table"], d["spec"]
    k, depth = spec["max_relative_position"], spec["depth"]
    us = range(-2 * k, 2 * k + 1)
    series, curves = [], []
    for (label, q), style in zip(fixed_queries(table, k), ("lines lw 2", "lines lw 2 dt 2", "lines lw 2 dt 4")):
        curve = {u: relative_term(table, q, k, u) for u in us}
        curves.append(curve)
        series.append(Series(label, sorted(curve.items()), style))
    lo = min(min(c.values()) for c in curves)
    hi = max(max(c.values()) for c in curves)
    pad = 0.05 * (hi - lo or 1)
    for x in (-k, k):
        series.append(Series("u = -K, K (clipping)" if x < 0 else "", [(x, lo - pad), (x, hi + pad)], "lines lw 1",
                             dashed=True, colour="#000000"))
    tk, ones, e0 = curves
    flat = all(flat_beyond(c, k) for c in curves)
    closed = max(abs(tk[u] - cosine_sum(u, k, depth)) for u in us)
    peak = max(us, key=lambda u: tk[u])
    symmetric = max(abs(tk[u] - tk[-u]) for u in us)
    e0_closed = max(abs(e0[u] - math.sin(definition_index(k, u)) / math.sqrt(depth)) for u in us)
    plot = Plot(name=name, title=f"NEZHA relative score term q.T[r(u)] / sqrt(depth) against the offset u "
                                 f"(K = {k}, depth {depth}, {spec['regime']})",
                xlabel="offset u = j - q_i (key minus query)", ylabel="q.T[r(u)] / sqrt(depth)", series=series,
                xrange=(-2 * k, 2 * k), yrange=(lo - pad, hi + pad), key="below left horizontal")
    cap = (f"**(b) Score against offset for a fixed query.** The relative part q·T[r(u)] / √depth of the score "
           f"e(i, j) = (q_i·k_j + q_i·T[r(i, j)]) / √depth, against u = j − q_i in [−2K, 2K] (K = {k}, depth "
           f"{depth}, {md.code(PRESET, table=False)}'s {spec['regime']} table), for three fixed queries, computed "
           "here from the CLI's table. Every curve is flat beyond ±K (one table row each side: clipping): "
           f"{_yes(flat)}. q = T[K] gives Σ_t cos(clip(u) w_t) / √depth (the K cancels): within "
           f"{md.num(CLOSED_FORM_TOL)} of it computed here: {_yes(closed <= CLOSED_FORM_TOL)} (largest difference "
           f"{md.num(closed)}), symmetric in u to {md.num(symmetric)}, highest at u = {peak} "
           f"({md.num(tk[peak])}; √depth / 2 = {md.num(math.sqrt(depth) / 2)}). A general query sees no symmetry: "
           f"q = (1, …, 1)/√depth gives {md.num(ones[-1])} at u = −1 and {md.num(ones[1])} at u = 1; q = e_0 reads "
           f"column 0, sin(clip(u) + K) / √depth (within {md.num(CLOSED_FORM_TOL)}: "
           f"{_yes(e0_closed <= CLOSED_FORM_TOL)}), so at distance 0 it is sin {k} / √{depth} = {md.num(e0[0])}, "
           f"not 0. Data: `posenc table nezha --preset {PRESET} --dtype f64 --format json`. See {CLAIMS_LINK} "
           "(NEZHA-SCORES-1).")
    return ctx.renderer.image(plot, "NEZHA relative score term against the offset"), cap


# ---- (c) HF's float32 table against the exact one -----------------------------------------------------------

def _hf_vs_exact(ctx, src: NezhaCli) -> tuple:
    name = "fig-nezha-hf-vs-exact"
    hf = src.table("hf", "f64")
    exact = src.table("exact", "f64") if hf else None
    if exact is None:
        return _not_drawn(name, src.error), ""
    th, te = hf["table"], exact["table"]
    k, depth = hf["spec"]["max_relative_position"], hf["spec"]["depth"]
    if (exact["spec"]["max_relative_position"], exact["spec"]["depth"]) != (k, depth):
        src.fail(("table", "nezha", *PRESET_ARGS, "--regime", "exact"), "its K and depth differ from the hf table's")
        return _not_drawn(name, src.error), ""
    diffs = row_differences(th, te)
    env = [max(hf_envelope(r, c, depth, th[r][c]) for c in range(depth)) for r in range(len(th))]
    within = all(abs(th[r][c] - te[r][c]) <= hf_envelope(r, c, depth, th[r][c])
                 for r in range(len(th)) for c in range(depth))
    emu = [(abs(th[r][c] - hf_entry(r, c, depth)), ulp32(hf_entry(r, c, depth)), r, c)
           for r in range(len(th)) for c in range(depth)]
    same_bits = sum(1 for e, _, _, _ in emu if e == 0)
    near = all(e <= u for e, u, _, _ in emu)
    floats = all(f32(v) == v for row in th for v in row)
    worst_r = max(range(len(diffs)), key=lambda r: diffs[r])
    worst_c = max(range(depth), key=lambda c: abs(th[worst_r][c] - te[worst_r][c]))
    zero_rows = [r for r, x in enumerate(diffs) if x == 0]
    series = [Series("max over columns |T_hf[r][c] - T_exact[r][c]|", [(r, x) for r, x in enumerate(diffs) if x > 0],
                     "linespoints pt 7 ps 0.4"),
              Series("NEZHA-TABLE-2 envelope (max over columns)", [(r, x) for r, x in enumerate(env) if x > 0],
                     "lines lw 1", dashed=True)]
    plot = Plot(name=name, title=f"NEZHA: HF's float32 table against the exact one, per row (K = {k}, depth {depth})",
                xlabel="table row r", ylabel="max over columns |difference|", series=series, logy=10,
                xrange=(0, 2 * k), key="bottom right")
    zero_text = (f"row{'s' if len(zero_rows) > 1 else ''} {', '.join(str(r) for r in zero_rows[:8])}"
                 f"{' …' if len(zero_rows) > 8 else ''} {'are' if len(zero_rows) > 1 else 'is'} identical (not "
                 "drawn on the log axis; row 0 is (0, 1, …) in both)" if zero_rows else "no row is identical")
    cap = (f"**(c) HF's float32 table vs the exact one.** For every row r, the largest difference over the {depth} "
           f"columns between HF's float32 steps (float32 frequencies from torch.exp, float32 angles r·w, sin/cos "
           f"rounded to float32) and the correctly rounded real sin/cos, for K = {k}, depth {depth}; the dashed "
           "curve is NEZHA-TABLE-2's envelope, ulp32(T)/2 + ulp32(a)/2 + r |w32 − w| (+ 2^−50 r w), largest over "
           f"the columns. The largest difference is **{md.num(diffs[worst_r])}** at r = {worst_r}, c = {worst_c} "
           f"({md.num(th[worst_r][worst_c], 9)} vs {md.num(te[worst_r][worst_c], 9)}); it grows with r, the float32 "
           f"frequency's error carried by the position; {zero_text}. Every entry is within its envelope: "
           f"{_yes(within)}. Every entry of HF's table is a float32 number: {_yes(floats)}; it is within one float32 "
           f"ulp of HF's steps emulated here (math.exp, math.sin, math.cos in double, each step rounded to float32): "
           f"{_yes(near)} (the same number at {md.num(same_bits)} of {md.num(len(emu))} entries). A model trained "
           "with HF's table and a re-implementation with the exact one differ by this much in every relative key "
           f"and value. Data: `posenc table nezha --preset {PRESET} --regime hf|exact --dtype f64 --format json`. "
           f"See {CLAIMS_LINK} (NEZHA-TABLE-1, NEZHA-TABLE-2).")
    return ctx.renderer.image(plot, "NEZHA HF float32 table against the exact one"), cap


# ---- (d) index matrices ---------------------------------------------------------------------------------------

def _matrix_table(rows: list, key_length: int) -> str:
    lq = len(rows)
    return md.table(["i (q_i)", *[f"j = {j}" for j in range(key_length)]],
                    [[f"{i} ({key_length - lq + i})", *[md.num(v) for v in r]] for i, r in enumerate(rows)],
                    ["l"] + ["r"] * key_length)


def _index_matrices(ctx, src: NezhaCli) -> tuple:
    name = "table-nezha-index"
    small = PRESET_ARGS + ("--max-relative-position", str(SMALL_K))
    sq = src.index(small, SMALL_L, SMALL_L)
    last = src.index(small, ALIGN_LQ, SMALL_L) if sq else None
    full = src.index(PRESET_ARGS, CHECK_L, CHECK_L) if last else None
    if full is None:
        return _not_drawn(name, src.error, "table"), ""
    a, c = sq["indices"], last["indices"]
    bad = [m for d in (sq, last, full) for m in index_mismatches(d)]
    last_rows = c == a[SMALL_L - ALIGN_LQ:]
    k = full["spec"]["max_relative_position"]
    used = sorted({v for r in full["indices"] for v in r})
    rows_ok = full.get("table_rows") == 2 * k + 1 and sq.get("table_rows") == 2 * SMALL_K + 1
    body = (f"K = {SMALL_K}, {SMALL_L} × {SMALL_L} (row i: the query at q_i; column j: the key):\n\n"
            + _matrix_table(a, SMALL_L)
            + f"\nK = {SMALL_K}, query_length {ALIGN_LQ}, key_length {SMALL_L}:\n\n" + _matrix_table(c, SMALL_L))
    cap = (f"**(d) The index matrix, small.** r(i, j) = clip(j − q_i, −K, K) + K with K = {SMALL_K} (`posenc index "
           f"nezha --preset {PRESET} --max-relative-position {SMALL_K} --query-length {SMALL_L} --key-length "
           f"{SMALL_L} --format json`): the diagonal (distance 0) reads row K = {SMALL_K}, the keys after the query "
           f"rows above it up to 2K = {2 * SMALL_K}, the keys before it rows below it down to 0 (HF: distance_mat = "
           "range_mat − range_mat^T, key minus query). With query_length "
           f"{ALIGN_LQ} < key_length {SMALL_L} the queries are the last keys (q_i = Lk − Lq + i): its rows are the "
           f"last {ALIGN_LQ} rows of the square matrix: {_yes(last_rows)} (HF NEZHA itself computes only "
           f"query_length = key_length). Every entry of these two and of the {md.code(PRESET, table=False)} "
           f"matrix at {CHECK_L} × {CHECK_L} (K = {k}) equals clip(j − q_i, −K, K) + K computed here: "
           f"{_yes(not bad)}" + (" (first difference at ({}, {}): {} vs {})".format(*bad[0]) if bad else "")
           + f"; the preset's matrix reads {md.num(len(used))} rows ({md.num(used[0])}–{md.num(used[-1])}) of its "
           f"{md.num(full.get('table_rows'))}; \"table_rows\" is 2K + 1: {_yes(rows_ok)}. See {CLAIMS_LINK} "
           "(NEZHA-INDEX-1).")
    return body, cap


# ---- (e) the preset --------------------------------------------------------------------------------------------

def _preset_table(ctx, src: NezhaCli) -> tuple:
    name = "table-nezha-presets"
    hf = src.table(None, "f64")
    exact = src.table("exact", "f64") if hf else None
    hf32 = src.table(None, "f32") if exact else None
    if hf32 is None:
        return _not_drawn(name, src.error, "table"), ""
    rows = []
    for label, d in ((md.code(PRESET), hf), (md.code(f"{PRESET} --regime exact"), exact)):
        spec, t = d["spec"], d["table"]
        k, depth = spec["max_relative_position"], spec["depth"]
        dev, _, _ = table_deviation(t, exact_entry)
        rows.append([label, md.num(k), md.num(depth), md.cell(spec["regime"]), md.num(len(t)),
                     f"{md.num(t[k][0])}, {md.num(t[k][1])}", md.num(dev), f"1/√{depth}"])
    table = md.table(["preset", "K", "depth", "regime", "table rows (2K + 1)", "row K (distance 0): T[K][0], T[K][1]",
                      "largest difference from sin/cos in double (here)", "scale"], rows,
                     ["l", "r", "r", "l", "r", "l", "r", "l"])
    same32 = hf32["spec"] == hf["spec"] and all(f32(a) == b for ra, rb in zip(hf32["table"], hf["table"])
                                                 for a, b in zip(ra, rb))
    spec = hf["spec"]
    cap = (f"**(e) The preset.** {md.code(PRESET, table=False)} is HF's NezhaConfig (max_relative_position = "
           f"{spec['max_relative_position']}; the NezhaRelativePositionsEncoding class default is 127), depth = "
           f"hidden_size / num_attention_heads = {spec['depth']}, regime {spec['regime']} (HF's float32 table, what "
           "NEZHA checkpoints were trained with); beside it the same shape in the exact regime (the last but one "
           "column: each table's largest difference from math.sin / math.cos in double, computed here; for HF's "
           "steps that is figure (c)'s maximum). The table is the whole encoding: no trained position weights. It "
           "is Shaw et al.'s mechanism (see the shaw scheme) with the key-minus-query sign, clipping at ±K, no key·E "
           "term, and this fixed table as both the key table a^K (scores (q·k + q·T[r]) / √depth) and the value "
           "table a^V (output Σ_j α_ij (v_j + T[r])). The default f32 table of the preset (`posenc table nezha "
           f"--preset {PRESET} --dtype f32 --format json`) holds the f64 one's numbers (HF's entries are float32 "
           f"numbers): {_yes(same32)}. The benchmarks time the table (exact and HF steps, against the plain loop a "
           "user writes), the preset's causal scores and its attention output (`attend`, held against the scores "
           "family's sgemm of q k^T); see [performance](performance.md) and "
           f"{CLAIMS_LINK} (NEZHA-OUTPUT-1, NEZHA-REPRO-1, NEZHA-CHECK-1).")
    return table, cap


def figures(ctx) -> list:
    src = NezhaCli(ctx.cli)
    out = [_table_curves(ctx, src), _score_curves(ctx, src), _hf_vs_exact(ctx, src), _index_matrices(ctx, src),
           _preset_table(ctx, src)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc table nezha` and `posenc index nezha`, "
                             f"`--format json`; {src.calls} invocations)" if src.error is None
                             else f"not drawn: {md.cell(src.error)}"))
    return out
