"""Report module of Transformer-XL's relative attention (Dai et al. 2019; kimiyoung/transformer-xl
mem_transformer.py): its speed headline; (a) the rows of the sinusoid table each score entry of a call with memory
reads (the rel_shift column), with the upper-right region the code's _rel_shift fills with junk marked — posenc's
scores hold -inf there; (b) the positional score term of a fixed query against the distance delta = q_i - j, with and
without clamp_len (flat beyond it); (c) the clamp of the txl-wt103-base preset: the first rows of its table (the
distances beyond clamp_len) are one row.

The index matrix, the scores and the table come from the posenc CLI (`posenc index|scores|table transformer_xl
--format json`; the scores of .npy inputs written here: r_net the identity, zero biases and keys, one fixed query);
the checks against the definition (spec/include/posenc/transformer_xl_spec.hpp, CONVENTIONS.md §2.5: c(i, j) = klen -
1 - (q_i - j) for j <= q_i, R(pos) = [sin | cos](pos 10000^(-2k/d_model)), pos = min(delta, clamp_len), the emulated
float32 steps) are computed here. Without a CLI the figures are not drawn and the page says why."""
from __future__ import annotations

import math
import tempfile

from .. import md
from ..gnuplot import Plot, Series
from ..relative_figures import (NEG_INF, RelativeCli, dot_term, f32, halves_row, index_figure, is_int, not_drawn,
                                relative_error, ulp32, yes)

SCHEME = "transformer_xl"

# benchmarks/transformer_xl_bench.cpp (benchmarks/relative_bench.hpp): table/<variant>/L:<rows>/d:1024/threads:<n>
# (R of a call; exact_f32, emulated_f32 against stream_store and plainloop_f32) and scores/<variant>/heads:1/L:4096/
# head_dim:64/threads:<n> (blas_f32 against sgemm_f32, q k^T alone; direct_f32 at L 512).
HEADLINE_KERNELS = (
    {"family": "table", "variant": "exact_f32", "baseline": "bandwidth",
     "what": "exact f32 table R of a call at its largest size vs the streaming store of the same bytes"},
    {"family": "scores", "variant": "blas_f32", "baseline": "sgemm",
     "what": "Transformer-XL scores (AC + rel_shift(BD): a gemm per block of query rows against the table rows it "
             "reads, the shift as a copy, the content gemm) vs sgemm of q k^T alone, same shape (sgemm time ÷ time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-transformer_xl)"
LQ, LK = 4, 7   # 3 memory keys
BASE = 10000.0
# (b): d_model = d_head = D_MODEL, one head, r_net the identity (so the positional keys are R itself), u = v = 0 and
# every key zero (AC = 0): the score of key j is scale <q, R(pos(delta))>. SCORE_LQ queries (each the same q) after
# SCORE_KLEN - SCORE_LQ memory keys, so the last row sees delta = 0 .. SCORE_KLEN - 1; clamp_len none and CLAMP.
# q = R(T0), the table row of distance T0 computed here: the query that looks for the key T0 back (a readable peak;
# any q would do, the check computes <q, R> whatever q is).
D_MODEL, SCORE_KLEN, SCORE_LQ, CLAMP, T0 = 16, 96, 4, 32, 20
# (b): the CLI's float64 scores against scale Σ_c q_c R(pos)_c computed here (math.fsum) must agree to within
# SCORE_TOL of scale Σ_c |q_c R(pos)_c| (DESIGN.md §3: a sum of products is held relative to the sum of the
# magnitudes of its terms; a float64 dot product of 16 terms is off by well under 1e-14 of it).
SCORE_TOL = 1e-12
# (c): the preset whose clamp is shown, and how many rows beyond clamp_len its table has (klen = clamp_len +
# CLAMP_EXTRA + 1: rows 0 .. CLAMP_EXTRA are distances clamp_len + CLAMP_EXTRA .. clamp_len); SHOW_ROWS are listed.
PRESET = "txl-wt103-base"
CLAMP_EXTRA = 5
SHOW_ROWS = CLAMP_EXTRA + 3
# (c): an exact-regime table must equal math.sin / math.cos of pos w_k in double to within this (the angle pos w_k in
# double is off by a few 2^-53 pos: under 1e-12 for pos < 2^12).
EXACT_TOL = 1e-12


# ---- the definition, here in Python -------------------------------------------------------------------------

def frequencies(d_model: int) -> list:
    """w_k = 10000^(-2k/d_model), k < d_model / 2, in double (the exact regime's)."""
    return [BASE ** (-2.0 * k / d_model) for k in range(d_model // 2)]


def position(delta: int, clamp_len: int) -> int:
    """pos(delta) = min(delta, clamp_len) when clamp_len > 0, else delta (the code's `if clamp_len > 0`)."""
    return min(delta, clamp_len) if clamp_len > 0 else delta


def table_row(pos: int, d_model: int) -> list:
    """R(pos) = [sin(pos w_k) | cos(pos w_k)] in double."""
    return halves_row(pos, frequencies(d_model))


def emulated_frequency(k: int, d_model: int) -> float:
    """PositionalEmbedding's float32 inv_freq: RN32(1 / RN32(10000 ** RN32(RN32(2k) / d_model))) (pow in double,
    then rounded: correctly rounded but for the rare double rounding, which the one-ulp check allows)."""
    return f32(1.0 / f32(BASE ** f32(f32(2 * k) / d_model)))


def emulated_entry(pos: int, c: int, d_model: int) -> float:
    """R[pos][c] of the emulated regime: the angle RN32(pos inv_freq) (torch.ger of float32 vectors; pos is a float32
    integer below 2^24), then RN32(sin) in the first half, RN32(cos) in the second."""
    h = d_model // 2
    a = f32(f32(pos) * emulated_frequency(c % h, d_model))
    return f32(math.sin(a) if c < h else math.cos(a))


def fixed_query(d_model: int) -> list:
    """q = R(T0)."""
    return table_row(T0, d_model)


def score_errors(rows: list, q: list, d_model: int, clamp_len: int, scale: float) -> tuple:
    """(largest relative_error, i, j) of a score matrix whose query rows are all q, whose keys are all zero and whose
    r_net is the identity (each score scale <q, R(pos(q_i - j))>; −inf where j > q_i: undefined), q_i = Lk − Lq + i."""
    lq, lk = len(rows), len(rows[0]) if rows else 0
    want = {}
    worst = (0.0, 0, 0)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            delta = lk - lq + i - j
            if delta not in want:
                want[delta] = (dot_term(q, table_row(position(delta, clamp_len), d_model), scale) if delta >= 0
                               else (NEG_INF, 0.0))
            err = relative_error(v, want[delta])
            if err > worst[0]:
                worst = (err, i, j)
    return worst


def last_row_curve(rows: list) -> dict:
    """{delta: score} of the last query row (q_i = Lk − 1: delta = Lk − 1 − j, every key defined)."""
    row = rows[-1]
    return {len(row) - 1 - j: v for j, v in enumerate(row)}


def table_deviation(table: list, positions: list, entry) -> tuple:
    """(max |table[c][col] − entry(positions[c], col)|, c, col) over the table."""
    worst = (0.0, 0, 0)
    for c, (row, pos) in enumerate(zip(table, positions)):
        for col, v in enumerate(row):
            e = abs(v - entry(pos, col))
            if e > worst[0]:
                worst = (e, c, col)
    return worst


# ---- (b) the score against the distance -----------------------------------------------------------------------

def _score_curves(ctx, src: RelativeCli) -> tuple:
    name = "fig-transformer_xl-score-distance"
    d, q = D_MODEL, fixed_query(D_MODEL)
    inputs = (("--q", "q.npy", (SCORE_LQ, d), q * SCORE_LQ),
              ("--k", "k.npy", (SCORE_KLEN, d), [0.0] * (SCORE_KLEN * d)),
              ("--r-net", "r-net.npy", (d, d), [1.0 if a == b else 0.0 for a in range(d) for b in range(d)]))
    scale = 1 / math.sqrt(d)
    curves, worst, scales_ok = {}, (0.0, None, 0, 0), True
    for clamp in (-1, CLAMP):
        out = src.scores(("scores", SCHEME, "--d-model", str(d), *(("--clamp-len", str(clamp)) if clamp > 0 else ())),
                         inputs, SCORE_LQ, SCORE_KLEN)
        if out is None:
            return not_drawn(name, src.error), ""
        scales_ok = scales_ok and abs(out["scale"] - scale) <= 1e-15 * scale
        err = score_errors(out["scores"], q, d, clamp, scale)
        if worst[1] is None or err[0] > worst[0]:
            worst = (err[0], clamp, err[1], err[2])
        curves[clamp] = last_row_curve(out["scores"])
    free, clamped = curves[-1], curves[CLAMP]
    deltas = range(SCORE_KLEN)
    mag = max(dot_term(q, table_row(x, d), scale)[1] for x in deltas)
    peak = max(deltas, key=lambda x: free[x])
    same_below = max(abs(free[x] - clamped[x]) for x in range(CLAMP + 1))
    flat = max(abs(clamped[x] - clamped[CLAMP]) for x in deltas if x >= CLAMP)
    # the unclamped curve goes on changing beyond clamp_len (else "flat beyond C" would show nothing)
    moves = max(abs(free[x] - free[CLAMP]) for x in deltas if x >= CLAMP)
    lo = min(min(c.values()) for c in curves.values())
    hi = max(max(c.values()) for c in curves.values())
    pad = 0.05 * (hi - lo or 1)
    series = [Series("clamp_len none (-1)", sorted(free.items()), "lines lw 2"),
              Series(f"clamp_len = {CLAMP}", sorted(clamped.items()), "lines lw 2 dt 2"),
              Series(f"delta = {CLAMP} (clamp_len)", [(CLAMP, lo - pad), (CLAMP, hi + pad)], "lines lw 1",
                     dashed=True, colour="#000000")]
    plot = Plot(name=name, title=f"Transformer-XL positional score term against the distance (d_model {d}, r_net = I, "
                                 f"q = R({T0}))",
                xlabel="distance delta = q_i - j (how far back the key is)",
                ylabel="scale <q, R(pos(delta))>", series=series, xrange=(0, SCORE_KLEN - 1),
                yrange=(lo - pad, hi + pad), key="below left horizontal")
    cap = (f"**(b) Score against distance for a fixed query.** d_model = d_head = {d}, one head, r_net = W_R the "
           f"identity (the positional keys are R itself), u = v = 0 and every key zero (AC = 0), so the score of key "
           f"j is scale ⟨q, R(pos(δ))⟩, δ = q_i − j, scale = 1/√{d}; q = R({T0}) (the table row of distance {T0}, "
           "computed here: a query that looks for the key "
           f"{T0} back). The scores are the CLI's: `posenc scores transformer_xl --d-model {d} [--clamp-len {CLAMP}] "
           "--q <q in every row> --k <zeros> --r-net <identity> --format json`, float64, "
           f"{SCORE_LQ} queries after {SCORE_KLEN - SCORE_LQ} memory keys; drawn is the last row (q_i = "
           f"{SCORE_KLEN - 1}: δ = 0 .. {SCORE_KLEN - 1}). Only δ ≥ 0 is embedded (keys after the query are "
           "rel_shift's junk, −inf). Every entry of both score matrices (not only the row drawn; the −inf ones "
           "exactly where j > q_i) equals scale Σ_c q_c R(pos(δ))_c computed here (math.sin / math.cos of pos "
           f"10000^(−2k/{d}), math.fsum) to within {md.num(SCORE_TOL)} of scale Σ_c |q_c R_c|: "
           f"{yes(worst[0] <= SCORE_TOL)} (largest {md.num(worst[0])} of it"
           + (f", clamp_len {worst[1]} at ({worst[2]}, {worst[3]})" if worst[0] > 0 else "")
           + f"); the CLI's scale is 1/√{d}: {yes(scales_ok)}. Without a clamp the curve peaks at δ = {T0}: "
           f"{yes(peak == T0)} (at δ = {peak}, {md.num(free[peak])}; scale · d_model/2 = {md.num(scale * d / 2)}). "
           f"With clamp_len = {CLAMP} it is the unclamped curve up to δ = {CLAMP}: "
           f"{yes(same_below <= SCORE_TOL * mag)} (largest difference {md.num(same_below)}), and flat beyond it, every δ ≥ {CLAMP} reading the row of "
           f"{CLAMP}: {yes(flat <= SCORE_TOL * mag)} (largest difference from the score at δ = {CLAMP}: "
           f"{md.num(flat)}; both to within {md.num(SCORE_TOL)} of the largest scale Σ_c |q_c R_c|, "
           f"{md.num(mag)}), where the unclamped curve moves by up to {md.num(moves)}. See "
           f"{CLAIMS_LINK} (TXL-SCORES-1, TXL-TABLE-1).")
    return ctx.renderer.image(plot, "Transformer-XL score term against the distance"), cap


# ---- (c) the preset's clamp --------------------------------------------------------------------------------------

def _clamp_table(ctx, src: RelativeCli) -> tuple:
    name = "table-transformer_xl-clamp"
    probe = src.table(("table", SCHEME, "--preset", PRESET, "--key-length", "1", "--dtype", "f64"), "position", 1,
                      None)
    if probe is None:
        return not_drawn(name, src.error, "table"), ""
    spec = probe["spec"]
    clamp, d = spec.get("clamp_len"), spec.get("d_model")
    if not is_int(clamp) or clamp <= 0 or not is_int(d) or d < 2 or len(probe["table"][0]) != d \
            or spec.get("regime") not in ("exact", "emulated"):
        src.fail(("table", SCHEME, "--preset", PRESET), "expected \"spec\" with clamp_len > 0, d_model (the table's "
                 "columns) and regime exact or emulated")
        return not_drawn(name, src.error, "table"), ""
    klen = clamp + CLAMP_EXTRA + 1
    args = ("table", SCHEME, "--preset", PRESET, "--key-length", str(klen), "--dtype", "f64")
    t = src.table(args, "position", klen, d)
    if t is None:
        return not_drawn(name, src.error, "table"), ""
    table, pos = t["table"], t["position"]
    h = d // 2
    want_pos = [position(klen - 1 - c, clamp) for c in range(klen)]
    pos_ok = pos == want_pos
    same = [table[c] == table[0] for c in range(klen)]
    clamped_same = all(same[:CLAMP_EXTRA + 1])
    next_differs = not same[CLAMP_EXTRA + 1]
    emulated = t["spec"].get("regime") == "emulated"
    entry = ((lambda p, col: emulated_entry(p, col, d)) if emulated
             else (lambda p, col: (math.sin if col < h else math.cos)(p * BASE ** (-2.0 * (col % h) / d))))
    dev, wc, wcol = table_deviation(table, want_pos, entry)
    if emulated:
        def_ok = all(abs(v - emulated_entry(p, col, d)) <= ulp32(emulated_entry(p, col, d))
                     for row, p in zip(table, want_pos) for col, v in enumerate(row))
        floats = all(f32(v) == v for row in table for v in row)
    else:
        def_ok, floats = dev <= EXACT_TOL, True
    real = table_deviation(table, want_pos,
                           lambda p, col: (math.sin if col < h else math.cos)(p * BASE ** (-2.0 * (col % h) / d)))
    rows = [[md.num(c), md.num(klen - 1 - c), md.num(pos[c]), *[md.num(table[c][col], 9) for col in (0, h, 1, h + 1)],
             "yes" if same[c] else "no"] for c in range(SHOW_ROWS)]
    body = md.table(["row c", "distance klen − 1 − c", "position (CLI)", "R[c][0] = sin(pos w_0)",
                     f"R[c][{h}] = cos(pos w_0)", "R[c][1] = sin(pos w_1)", f"R[c][{h + 1}] = cos(pos w_1)",
                     f"= row 0 (all {d} columns)"], rows, ["r", "r", "r", "r", "r", "r", "r", "l"])
    cap = (f"**(c) The preset's clamp.** {md.code(PRESET, table=False)} (d_model {d}, clamp_len {clamp}, "
           f"{t['spec'].get('regime')} regime: PositionalEmbedding's float32 steps) at klen = clamp_len + "
           f"{CLAMP_EXTRA + 1} = {klen}: the first {SHOW_ROWS} of its {klen} rows (`posenc table transformer_xl "
           f"--preset {PRESET} --key-length {klen} --dtype f64 --format json`; row c is the distance klen − 1 − c, "
           f"pos_seq descending). Compared: rows 0 .. {CLAMP_EXTRA} (distances {klen - 1} .. {clamp}, every "
           f"distance ≥ clamp_len) with row 0, all {d} columns: the same numbers: {yes(clamped_same)}; row "
           f"{CLAMP_EXTRA + 1} (distance {clamp - 1}, below the clamp) differs from them: {yes(next_differs)}. The "
           f"\"position\" of every row is min(klen − 1 − c, {clamp}): {yes(pos_ok)}. Every entry of the table "
           + (f"is a float32 number: {yes(floats)}, and within one float32 ulp of PositionalEmbedding's steps "
              f"emulated here (inv_freq = RN32(1 / RN32(10000 ** RN32(2k / {d}))), the angle RN32(pos inv_freq), "
              f"RN32(sin), RN32(cos)): {yes(def_ok)} (largest difference {md.num(dev)})"
              if emulated else
              f"is within {md.num(EXACT_TOL)} of math.sin / math.cos computed here: {yes(def_ok)}")
           + f"; from the real sin / cos (in double) it is at most {md.num(real[0])} (row {real[1]}, column "
           f"{real[2]}). So the model sees every key more than {clamp} back at the same position term: beyond "
           f"clamp_len a longer memory adds keys but no new distances. See {CLAIMS_LINK} (TXL-TABLE-1).")
    return body, cap


def figures(ctx) -> list:
    def want(i, j):
        qi = LK - LQ + i
        return LK - 1 - (qi - j) if j <= qi else None
    with tempfile.TemporaryDirectory(prefix="posenc-report-transformer_xl.") as tmp:
        src = RelativeCli(ctx.cli, tmp)
        table, cap = index_figure(
            ctx, SCHEME, (), LQ, LK, want,
            f"(a) The row of R each score entry reads, {LQ} queries after {LK - LQ} memory keys: c(i, j) = klen - 1 - "
            "(q_i - j), the column _rel_shift moves to (i, j). The marked entries (j > q_i) are where _rel_shift "
            "leaves junk (a pad zero at j = q_i + 1, the next row's values beyond); posenc's scores hold -inf there.",
            CLAIMS_LINK + " (TXL-SHIFT-1, TXL-INDEX-1)", src)
        out = [(table, cap), _score_curves(ctx, src), _clamp_table(ctx, src)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc index transformer_xl`, `posenc scores "
                             f"transformer_xl` and `posenc table transformer_xl`, `--format json`; {src.calls} "
                             "invocations)" if src.error is None else f"not drawn: {md.cell(src.error)}"))
    return out
