"""Report module of DeBERTa-v2/v3's disentangled attention (He et al. 2021): its speed headline, the log bucket of
every relative position i − j for HF's unclamped buckets (every DeBERTa-v2/v3 checkpoint) and the 2023 original's
clamped ones, the c2p and p2c score terms of a fixed query / key against rel = i − j (the identity up to ±mid, log
compression beyond, the clamp of the gather index at the table's ends), where HF's float32 buckets differ from the
exact ones, and small relative-position and c2p / p2c gather-index matrices.

Every number comes from figures-deberta.json (schemes/deberta/figures.cpp, run by posenc_figures); this module only
draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import Plot, Series

SCHEME = "deberta"

CLAIMS_LINK = "[claims](claims.md#scheme-deberta)"
# (a): the two curves, by the clamp: label and line style
CURVES = {False: ("deberta-v3-base (HF)", "lines lw 2"), True: ("2023 original (--clamp)", "lines lw 2 dt 2")}


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _points(rows: list) -> list:
    return [tuple(p) for p in rows]


@figure("buckets", "fig-deberta-buckets")
def _bucket_curves(ctx, fig: dict, name: str) -> tuple:
    series, notes = [], []
    for c in fig["curves"]:
        label, style = CURVES[c["clamp"]]
        series.append(Series(label, _points(c["points"]), style))
        notes.append(f"{label}: " + ", ".join(f"b({r}) = {b}" for r, b in c["quoted"]))
    plot = Plot(name=name, title="DeBERTa: log bucket of the relative position rel = i - j",
                xlabel="relative position rel = query - key", ylabel="bucket", series=series, key="top left")
    n = fig["length"]
    cap = ("**(a) The bucket of every relative position.** DeBERTa-v2/v3 (256 buckets, max 512) keeps rel itself for "
           "|rel| ≤ 128, then mid + ceil(ln(a/128) / ln(511/128) · 127), reaching ±255 at |rel| = 511; HF (and the "
           "2021 original) go on growing past it, the 2023 original clamps rel first and stays at ±255 (the c2p "
           "clamp to [0, 511] later hides the difference for the c2p index). " + "; ".join(notes) +
           f". Data: DebertaPlan::relative_positions of a column ({n} queries, one key: rel = i) and a row (one "
           f"query, {n} keys: rel = −j) (`posenc index deberta --preset deberta-v3-base [--clamp=true] "
           f"--query-length {n} --key-length 1` and `--query-length 1 --key-length {n}` give the same values). See "
           f"{CLAIMS_LINK} (DEBERTA-BUCKET-2, DEBERTA-INDEX-3).")
    return ctx.renderer.image(plot, "DeBERTa buckets against the relative position"), cap


@figure("score_offset", "fig-deberta-score-offset")
def _score_curves(ctx, fig: dict, name: str) -> tuple:
    mid, m, s, lo, hi = fig["mid"], fig["max_minus_1"], fig["score_span"], *fig["yrange"]
    series = [Series("c2p of a fixed query q", _points(fig["c2p"]), "lines lw 2"),
              Series("p2c of a fixed key k", _points(fig["p2c"]), "lines lw 2 dt 2")]
    for x in (mid, m):
        for sx in (-x, x):
            series.append(Series(f"|rel| = {mid} (mid), {m} (max - 1)" if sx == -mid else "",
                                 [(sx, lo), (sx, hi)], "lines lw 1", dashed=True,
                                 colour="#000000" if x == mid else "#999999"))
    preset = fig["preset"]
    plot = Plot(name=name, title=f"DeBERTa c2p and p2c terms against rel = i - j ({preset}, one head, synthetic "
                                 "tables)",
                xlabel="relative position rel = i - j (query minus key)",
                ylabel="scale <q, K_r[c(rel)]> (c2p), scale <k, Q_r[c(rel)]> (p2c)", series=series,
                xrange=(-s, s), yrange=(lo, hi), key="below left horizontal",
                extra=["set bmargin 6"])               # gnuplot's own margin puts the key over the x label here
    reg, seeds, hd, sp, n = fig["regions"], fig["seeds"], fig["head_dim"], fig["span"], fig["length"]
    (ni, ri), (nl, rl), (nb, rb) = ((reg[r]["offsets"], reg[r]["rows"]) for r in ("identity", "log", "beyond"))
    cap = (f"**(b) Score against offset for a fixed query and a fixed key.** The c2p term scale ⟨q, K_r[c(rel)]⟩ "
           "of one fixed query q and the p2c term scale ⟨k, Q_r[c(rel)]⟩ of one fixed key k against rel = i − j in "
           f"[−{s}, {s}], {md.code(preset, table=False)} ({fig['position_buckets']} buckets, max "
           f"{fig['max_relative_positions']}, {fig['regime']} buckets, one head, head_dim {hd}, scale "
           f"1/√({fig['scale_factor']} · {hd}) with c2p and p2c both on), c(rel) = clamp(b(rel) + {sp}, 0, "
           f"{fig['last_row']}). K_r and Q_r are projected trained weights; here they are **synthetic**: random walks "
           f"over the bucket b (row b + {sp} holds t(b); t(0) and every step drawn N(0, 1/head_dim) per entry; "
           f"Python's random (CPython's Mersenne Twister and random.gauss, reproduced in C++), seeds "
           f"{seeds['pos_key']} and {seeds['pos_query']}); q and k are float32 numbers drawn N(0, 1/head_dim) (seeds "
           f"{seeds['q']}, {seeds['k']}). The scores are DebertaPlan::scores of these inputs, float64 (`posenc scores "
           f"deberta --preset {preset} --heads 1 --pos-key <synthetic> --pos-query <synthetic> --q Q --k K` gives "
           f"the same values), {n} × {n} (query i at position i, key j at j), the other operand zero so that each "
           f"score is the one term alone — c2p: every query q, every key zero; p2c: every query zero, every key k; "
           f"drawn are row 0 (rel = −j ≤ 0) and row {s} (rel ≥ 0). From the gather index c (DebertaPlan::"
           f"position_index): for |rel| ≤ {mid} (black dashed lines) every offset has its own row ({md.num(ni)} "
           f"offsets, {md.num(ri)} rows: the identity); for {mid} < |rel| ≤ {m} (grey dashed lines) {md.num(nl)} "
           f"offsets share {md.num(rl)} rows (the log buckets: plateaus widening with |rel|); beyond, HF's bucket "
           f"keeps growing (b({s}) = {fig['b_score_span']}, past the table's ±{fig['reach']}) and the gather index "
           f"clamps it: {md.num(nb)} offsets read {md.num(rb)} rows, row {fig['last_row']} for every rel ≥ "
           f"{reg['flat_high']} and row 0 for every rel ≤ {reg['flat_low']} (b(−{m}) = {fig['b_minus_max']} reads "
           f"row {fig['c_minus_max']}). p2c gathers with the same c as c2p (HF's −r_pos on the key-major matrix, "
           "transposed; b is odd). That every entry of both score matrices is scale Σ_c x_c T[c(i − j)][c] (c2p: "
           "x = q, T = K_r; p2c: x = k, T = Q_r) within the deberta.scores budget of the oracle's exact value is a "
           f"claim (DEBERTA-SCORES-1). See {CLAIMS_LINK} (DEBERTA-SCORES-1, DEBERTA-INDEX-1).")
    return ctx.renderer.image(plot, "DeBERTa c2p and p2c terms against the relative position"), cap


@figure("exact_vs_float32", "table-deberta-exact-vs-float32", "table")
def _differences(ctx, fig: dict, name: str) -> tuple:
    rows = []
    for r in fig["rows"]:
        diff = [f"{a}: {e} vs {h}" for a, e, h in r["differ"]]
        rows.append([f"({r['position_buckets']}, {r['max_relative_positions']})", md.num(r["max_distance"]),
                     md.cell("; ".join(diff[:12]) + (" …" if len(diff) > 12 else "") if diff else "none")])
    table = md.table(["(position_buckets, max)", "distances compared (0 .. 4 max)",
                      "distance: exact vs HF float32 bucket"], rows, ["l", "r", "l"])
    cap = ("**(c) Exact vs HF float32 buckets.** For each configuration, the distances a = |rel| whose bucket differs "
           "between the exact regime (mid + the ceil of the real ln(a/mid) / ln((max − 1)/mid) (mid − 1)) and HF's "
           "float32 steps (a float32 division, two float32 logs, a quotient and a product, then ceil): at those "
           "distances a model trained with HF's arithmetic and a re-implementation with exact (or float64) logs use "
           "different relative embeddings. Where the real value is an exact integer (a = max − 1 gives mid − 1) both "
           "agree. Data: DebertaPlan::relative_positions of one key and the queries a = 0 .. 4 max, --regime exact "
           "and hf (`posenc index deberta ... --regime exact|hf --key-length 1` gives the same column). See "
           + CLAIMS_LINK + " (DEBERTA-BUCKET-3).")
    return table, cap


def _matrix_table(rows: list, key_length: int) -> str:
    return md.table(["i", *[f"j = {j}" for j in range(key_length)]],
                    [[str(i), *[md.num(v) for v in r]] for i, r in enumerate(rows)], ["l"] + ["r"] * key_length)


@figure("index", "table-deberta-index", "table")
def _index_matrices(ctx, fig: dict, name: str) -> tuple:
    f, L, lq, sp, last = fig["facts"], fig["length"], fig["first_length"], fig["span"], fig["last_row"]
    bs, mp, preset = fig["position_buckets"], fig["max_relative_positions"], fig["preset"]
    share_text = "; ".join(" = ".join(f"b({r})" for r in rs) + f" = {v}" for rs, v in f["shared"])
    body = (f"b(i − j), position_buckets {bs}, max_relative_positions {mp} (row i: the query at position i; column "
            f"j: the key at j):\n\n" + _matrix_table(fig["relative"], L)
            + f"\nc(i, j) = clamp(b(i − j) + {sp}, 0, {last}), the c2p and p2c gather row:\n\n"
            + _matrix_table(fig["c2p"], L)
            + f"\nc(i, j), query_length {lq}, key_length {L}:\n\n"
            + _matrix_table(fig["c2p_first"], L))
    cap = (f"**(d) The relative positions and the gather index, small.** DebertaPlan::relative_positions and "
           f"position_indices of {preset} with position_buckets {bs}, max_relative_positions {mp}, {L} × {L} "
           f"(`posenc index deberta --preset {preset} --position-buckets {bs} --max-relative-positions {mp} "
           f"--query-length {L} --key-length {L} [--what c2p]` gives the same matrices) (mid = {fig['mid']}, max − 1 "
           f"= {fig['max_minus_1']}, span {sp}: relative tables of {fig['rows']} rows; {fig['regime']} buckets): "
           f"b(i − j) is i − j for |i − j| ≤ {fig['mid']} and log-bucketed beyond"
           + (f" ({share_text}: offsets share a bucket)" if share_text else "")
           + f"; HF's bucket is not clamped and passes the table's reach, so the gather index clamps it at rel ∈ "
           f"{{{', '.join(map(str, f['clamped']))}}} (b + {sp} outside [0, {last}]). That every b and c equals the "
           "oracle's b(i − j) and clamp(b(i − j) + span, 0, 2 span − 1) is a claim (DEBERTA-INDEX-1); every c is "
           f"clamp(b + span, 0, 2 span − 1) of the b above: {_yes(f['c_is_clamp_of_b'])}; every c is in [0, {last}]: "
           f"{_yes(f['c_in_range'])}; the span is position_buckets: {_yes(f['span_is_position_buckets'])}. b is odd, "
           f"so the matrix is minus its transpose (DEBERTA-SIGN-1: rel = i − j, the opposite of Shaw's and T5's "
           f"j − i): {_yes(f['odd'])}. The queries are the FIRST positions (HF build_relative_position: "
           f"arange(query_size); unlike Shaw's and NEZHA's last): query_length {lq} gives the first {lq} rows of the "
           f"square matrix: {_yes(f['first_rows'])}. p2c reads the same c (HF gathers clamp(−b(j − i) + span) on the "
           f"key-major matrix and transposes; b is odd). See {CLAIMS_LINK} (DEBERTA-INDEX-1, DEBERTA-SIGN-1).")
    return body, cap


def figures(ctx, data: FigureData) -> list:
    return [_bucket_curves(ctx, data), _score_curves(ctx, data), _differences(ctx, data), _index_matrices(ctx, data)]
