"""Report module of clipped relative position representations (Shaw et al. 2018, as tensor2tensor implements them)
and HF BERT's relative_key / relative_key_query (the same mechanism with the opposite sign and no clipping): its
speed headline, the table row of every offset u = j − q_i for each preset (t2t increasing and flat beyond ±20, BERT
decreasing over its whole 1023-row table), the relative score term of a fixed query against the offset (t2t flat
beyond ±20, BERT its mirror image), two small index matrices of the two signs (one the transpose of the other) and
the queries-are-the-last-keys alignment, and the presets side by side.

Every number comes from figures-shaw.json (schemes/shaw/figures.cpp, run by posenc_figures); this module only
draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import Plot, Series

SCHEME = "shaw"

CLAIMS_LINK = "[claims](claims.md#scheme-shaw)"
# (a): the line style of each preset's curve
STYLES = {"t2t": "lines lw 2", "bert-relative-key": "lines lw 2 dt 2"}


def sign_text(sign: str) -> str:
    return {"key_minus_query": "d = j − q_i", "query_minus_key": "d = q_i − j"}.get(sign, str(sign))


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _points(rows: list) -> list:
    return [tuple(p) for p in rows]


def _curve_note(c: dict) -> str:
    shape = ("non-decreasing" if c["non_decreasing"] else "non-increasing" if c["non_increasing"]
             else "neither increasing nor decreasing")
    ends = (f"constant for u ≤ {c['flat_low']} (index {c['index_low']}) and for u ≥ {c['flat_high']} (index "
            f"{c['index_high']})" if c["flat_ends"] else "no flat end (every offset its own row)")
    n = c["length"]
    return (f"{c['preset']} ({sign_text(c['sign'])}, k = {md.num(c['k'])}, clip {str(c['clip']).lower()}, {n} × {n}): "
            f"{shape} in u, {ends}; rows used {md.num(c['rows_used'])} ({md.num(c['row_min'])}–"
            f"{md.num(c['row_max'])}) of {md.num(c['table_rows'])}")


@figure("index", "fig-shaw-index")
def _index_curves(ctx, fig: dict, name: str) -> tuple:
    w, curves = fig["window"], {c["preset"]: c for c in fig["curves"]}
    series = [Series(f"{c['preset']} (k = {c['k']})", _points(c["points"]), STYLES[c["preset"]])
              for c in fig["curves"]]
    plot = Plot(name=name, title="Shaw / BERT relative positions: table row of the offset u = j - q_i (minus k)",
                xlabel="offset u = key - query", ylabel="index - k (row relative to the centre row k)",
                series=series, xrange=(-w, w), key="top right")
    t2t, bert = curves["t2t"], curves["bert-relative-key"]
    cap = (f"**(a) The table row of every offset.** idx(u) − k against u = j − q_i for |u| ≤ {w}: t2t (d = j − i) "
           f"rises with u and is clipped at ±{t2t['k']} (its flat ends), BERT relative_key (d = i − j) falls with u "
           "and is not clipped — the same offset reads the mirrored row of the table, the sign convention of "
           "SHAW-SIGN-1 (a port that copies one convention's table into the other's indexing reads every relative "
           "embedding at −u). " + "; ".join(_curve_note(c) for c in fig["curves"]) + ". That every entry equals "
           "the oracle's clip(d, −k, k) + k is a claim (SHAW-INDEX-1, SHAW-INDEX-3). bert-relative-key-query has "
           "the same index matrix as bert-relative-key (its k·E term reads the same rows): "
           f"{_yes(fig['key_query_same_as_key'])}. Data: ShawPlan::indices of t2t at {t2t['length']} × "
           f"{t2t['length']} and of bert-relative-key|bert-relative-key-query at {bert['length']} × {bert['length']} "
           "(the last row gives u ≤ 0, row 0 u ≥ 0; `posenc index shaw --preset P --query-length L --key-length L` "
           f"gives the same matrices). See {CLAIMS_LINK} (SHAW-INDEX-2/3, SHAW-SIGN-1).")
    return ctx.renderer.image(plot, "Shaw / BERT index against the offset"), cap


@figure("score_offset", "fig-shaw-score-offset")
def _score_curves(ctx, fig: dict, name: str) -> tuple:
    w, kt, kb, n, mid, seed, hd = (fig[x] for x in ("window", "k_t2t", "k_bert", "length", "query_position", "seed",
                                                    "head_dim"))
    lo, hi = fig["yrange"]
    series = [Series(f"t2t (k = {kt}, d = j - q_i, clipped)", _points(fig["t2t"]), "lines lw 2"),
              Series(f"bert-relative-key (k = {kb}, d = q_i - j)", _points(fig["bert"]), "lines lw 2 dt 2")]
    for x in (-kt, kt):
        series.append(Series(f"u = -{kt}, {kt} (t2t's clipping)" if x < 0 else "", [(x, lo), (x, hi)],
                             "lines lw 1", dashed=True, colour="#000000"))
    plot = Plot(name=name, title="Shaw / BERT: relative score term scale <q, a^K[idx(u)]> against u = j - q_i "
                                 "(synthetic table)",
                xlabel="offset u = j - q_i (key minus query)", ylabel="scale <q, a^K[idx(u)]>", series=series,
                xrange=(-w, w), yrange=(lo, hi), key="below left horizontal")
    cap = (f"**(b) Score against offset for a fixed query.** The relative part scale ⟨q, a^K[idx(u)]⟩ of the score "
           f"against u = j − q_i for |u| ≤ {w}, t2t (d = j − q_i, clipped at ±{kt}) and bert-relative-key "
           "(d = q_i − j, not clipped), scale = 1/√head_dim (head_dim "
           f"{md.num(hd)}). The key table a^K is a trained weight; here it is **synthetic**: a random walk over the "
           f"signed distance d, a(0) and every step drawn N(0, 1/head_dim) per entry (Python's random (CPython's "
           f"Mersenne Twister and random.gauss, reproduced in C++), seed {seed}), row d + k holding a(d) — the same "
           "a(d) in both tables, so the curves differ only by the index. q is one fixed vector of float32 numbers "
           f"drawn N(0, 1/head_dim) (seed {seed}). The scores are ShawPlan::scores of these inputs, float64, scale "
           f"1/√head_dim, no mask (`posenc scores shaw --preset t2t|bert-relative-key --key-table <synthetic> "
           "[--value-table <zeros>] --q <q in every row> --k <zeros> --mask none` gives the same values), "
           f"{n} × {n}, every key zero so that each score is the relative term alone; drawn is the row of the query "
           f"at position {mid}. t2t is flat beyond ±{kt} (one table row each side: clipping; the same number at every "
           f"u ≥ {kt} and at every u ≤ −{kt}): {_yes(fig['t2t_flat_beyond_k'])}. BERT reads its own row at every "
           f"offset ({fig['bert_distinct']} different numbers over the {n} offsets: "
           f"{_yes(fig['bert_every_offset_distinct'])}) and is t2t's curve mirrored, BERT(u) = t2t(−u) for |u| ≤ "
           f"{kt} (largest difference {md.num(fig['mirror_difference'])}) — the sign of SHAW-SIGN-1: a port that "
           "copies one convention's table into the other's indexing reads every relative embedding at −u. That "
           f"every entry of both {n} × {n} score matrices is scale Σ_c q_c a^K[idx][c] (idx = clip(d, −k, k) + k, "
           "u = j − q_i) within the shaw.scores budget of the oracle's exact value is a claim (SHAW-SCORES-1). See "
           f"{CLAIMS_LINK} (SHAW-SCORES-1, SHAW-SIGN-1).")
    return ctx.renderer.image(plot, "Shaw / BERT relative score term against the offset"), cap


def _matrix_table(m: dict, key_length: int) -> str:
    return md.table(["i (q_i)", *[f"j = {j}" for j in range(key_length)]],
                    [[f"{i} ({q})", *[md.num(v) for v in r]] for i, (q, r) in enumerate(zip(m["query_positions"],
                                                                                            m["rows"]))],
                    ["l"] + ["r"] * key_length)


@figure("sign", "table-shaw-sign", "table")
def _small_matrices(ctx, fig: dict, name: str) -> tuple:
    k, L, lq = fig["k"], fig["length"], fig["last_length"]
    body = (f"key_minus_query (t2t), k = {k}, {L} × {L}:\n\n" + _matrix_table(fig["key_minus_query"], L) +
            f"\nquery_minus_key (BERT's sign), k = {k}, {L} × {L}:\n\n" + _matrix_table(fig["query_minus_key"], L) +
            f"\nkey_minus_query (t2t), k = {k}, query_length {lq}, key_length {L}:\n\n" +
            _matrix_table(fig["last"], L))
    cap = (f"**(c) The two signs, small.** t2t with k = {k} (ShawPlan::indices, {L} × {L}; `posenc index shaw "
           f"--preset t2t --max-relative-position {k} --query-length {L} --key-length {L}` gives the same matrix) and "
           f"the same spec with `--sign query_minus_key` (BERT's sign, clipped here so that both have the same "
           f"{fig['rows']} rows; BERT itself does not clip). The second matrix is the transpose of the first: "
           f"{_yes(fig['is_transpose'])}; and equals 2k − the first: {_yes(fig['is_2k_minus'])} (SHAW-SIGN-1). With "
           f"query_length {lq} < key_length {L} the queries are the last keys (q_i = Lk − Lq + i, t2t's "
           f"range_k[-length_q:]): the rows are the last {lq} rows of the square matrix: {_yes(fig['last_rows'])}; "
           "the cached single query (query_length 1: t2t cache=True, BERT use_cache) is its last row: "
           f"{_yes(fig['cached_is_last_row'])} (SHAW-DECODE-1). That every entry equals the oracle's clip(d, −k, k) "
           f"+ k is a claim (SHAW-INDEX-1). See {CLAIMS_LINK} (SHAW-SIGN-1, SHAW-INDEX-1).")
    return body, cap


@figure("presets", "table-shaw-presets", "table")
def _presets_table(ctx, fig: dict, name: str) -> tuple:
    rows, by = [], {r["preset"]: r for r in fig["rows"]}
    for r in fig["rows"]:
        hd = r["head_dim"]
        rows.append([md.code(r["preset"]), md.cell(sign_text(r["sign"])), md.num(r["k"]),
                     "clamp to [−k, k]" if r["clip"] else f"none (key_length ≤ {md.num(r['max_key_length'])})",
                     md.num(r["table_rows"]), "yes" if r["values"] else "no", "yes" if r["key_query"] else "no",
                     md.num(hd), f"1/√{hd}"])
    table = md.table(["preset", "distance", "k", "clipping", "table rows (2k + 1)", "value table a^V",
                      "k·a^K term", "head_dim", "scale"], rows, ["l", "l", "r", "l", "r", "l", "l", "r", "l"])
    t2t, bert = by["t2t"], by["bert-relative-key"]
    tk, tr = md.num(t2t["k"]), md.num(t2t["table_rows"])
    bk, br = md.num(bert["k"]), md.num(bert["table_rows"])
    cap = ("**(d) t2t and BERT side by side.** Both add learned relative embeddings a^K[idx(i, j)] to the keys in "
           "the scores, e(i, j) = scale (⟨q_i, k_j⟩ + ⟨q_i, a^K[idx]⟩ [+ ⟨k_j, a^K[idx]⟩ for relative_key_query]), "
           "with scale 1/√head_dim in both (t2t scales q by depth^−0.5 before both products, BERT divides the sum by "
           "√attention_head_size). They differ in the sign of the distance (t2t j − i, BERT i − j: the index "
           f"matrices are transposes, SHAW-SIGN-1), in clipping (t2t clamps to ±{tk}, a {tr}-row table; BERT has no "
           f"clamp, its {br}-row table covering every distance up to max_position_embeddings − 1 = {bk}, and longer "
           "inputs are refused), in the value table (t2t adds a^V[idx] to the values in the output, BERT has none) "
           "and in the key·E term (relative_key_query only). The queries are the last query_length keys, q_i = Lk − "
           "Lq + i: t2t's range_q = range_k[-length_q:], its cached single query at Lk − 1 (cache=True) and HF BERT's "
           "cached query position key_length − 1; with Lq = Lk that is every self-attention call. HF BERT's uncached "
           "call with query_length < key_length (cross-attention; position_ids_l = arange(query_length)) puts the "
           "queries at 0 .. Lq − 1 instead: that is not this geometry, and posenc does not reproduce it. Table rows "
           f"equal 2k + 1 for every preset: {_yes(fig['table_rows_are_2k_plus_1'])}. Data: each preset's ShawSpec "
           "and shaw_table_rows (the \"spec\" and \"table_rows\" of `posenc index shaw --preset P --format json` "
           "are the same). The benchmarks time the t2t index matrix, its causal scores and its attention output "
           "(`attend`, held against the scores family's sgemm of q k^T); see [performance](performance.md) and "
           f"{CLAIMS_LINK} (SHAW-SCORES-1, SHAW-OUTPUT-1, SHAW-CHECK-1).")
    return table, cap


def figures(ctx, data: FigureData) -> list:
    return [_index_curves(ctx, data), _score_curves(ctx, data), _small_matrices(ctx, data), _presets_table(ctx, data)]
