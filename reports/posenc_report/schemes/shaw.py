"""Report module of clipped relative position representations (Shaw et al. 2018, as tensor2tensor implements them)
and HF BERT's relative_key / relative_key_query (the same mechanism with the opposite sign and no clipping): its
speed headline, the table row of every offset u = j − q_i for each preset (t2t increasing and flat beyond ±20, BERT
decreasing over its whole 1023-row table), two small index matrices of the two signs (one the transpose of the
other) and the queries-are-the-last-keys alignment, and the presets side by side.

Every index comes from the posenc CLI (`posenc index shaw --format json`: the index matrix and the spec it used);
the checks against the definition idx = clip(d, −k, k) + k (spec/include/posenc/shaw_spec.hpp) and between the
matrices (transpose, last rows, cached query) are made here. Without a CLI the figures are not drawn and the page
says why."""
from __future__ import annotations

from .. import md
from ..cli_data import CliData
from ..gnuplot import Plot, Series

SCHEME = "shaw"

# benchmarks/shaw_bench.cpp: index/<variant>/heads:1/L:<L>/threads:<n> (the [L][L] int32 index matrix; variants
# t2t_i32 at L = 512, 8192, 16384 and bert_i32 at L = 512 only; baselines stream_store_i32, store_i32 of the same
# bytes), scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n> (fused_t2t_causal_f32 against sgemm_f32: q k^T
# alone) and attend/t2t_causal_f32/heads:1/L:4096/head_dim:64/threads:<n> (the attention output). bench.py pairs a
# kernel with an sgemm baseline of any family in the same file with the same arguments, so the attend kernel is
# held against the scores family's sgemm_f32 (same heads, L, head_dim, threads).
HEADLINE_KERNELS = (
    {"family": "index", "variant": "t2t_i32", "baseline": "bandwidth",
     "what": "t2t int32 index matrix (k = 20, clipped) at its largest size vs the streaming store of the same bytes"},
    {"family": "scores", "variant": "fused_t2t_causal_f32", "baseline": "sgemm",
     "what": "t2t causal scores with the relative term fused (Q A^T, gathered rows, then a beta = 1 Q K^T sgemm) vs "
             "sgemm of q k^T alone, same shape (sgemm time ÷ fused time)"},
    {"family": "attend", "variant": "t2t_causal_f32", "baseline": "sgemm",
     "what": "t2t causal attention output (scores, softmax, alpha V and the value table) vs sgemm of q k^T alone of "
             "the same shape (the scores family's sgemm_f32; sgemm time ÷ attend time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-shaw)"
PRESETS = ("t2t", "bert-relative-key", "bert-relative-key-query")
# (a): the square length each preset's curve is read from (t2t: |u| up to 60 shows the flat ends beyond ±20; BERT:
# 512 keys, its whole table) and the offsets plotted (|u| <= WINDOW; BERT's full diagonal is checked, not drawn).
CURVE_LENGTH = {"t2t": 61, "bert-relative-key": 512, "bert-relative-key-query": 512}
WINDOW = 60
# (b): t2t with k = SMALL_K, SMALL_L x SMALL_L, both signs; then the last ALIGN_LQ queries and the cached query.
SMALL_K, SMALL_L, ALIGN_LQ = 3, 8, 3


def _not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class ShawCli(CliData):
    def index(self, spec_args: tuple, query_length: int, key_length: int) -> dict | None:
        """`posenc index shaw *spec_args --query-length Lq --key-length Lk --format json`, its "indices" checked to be
        Lq rows of Lk integers and its "spec" an object; None (and `error` set) otherwise."""
        args = ("index", "shaw", *spec_args, "--query-length", str(query_length), "--key-length", str(key_length))
        d = self.run(args)
        if d is None:
            return None
        rows = d.get("indices")
        if not isinstance(rows, list) or len(rows) != query_length or not all(
                isinstance(r, list) and len(r) == key_length and all(_is_int(v) for v in r) for r in rows):
            self.fail(args, f"expected \"indices\": {query_length} rows of {key_length} integers")
            return None
        spec = d.get("spec")
        if not isinstance(spec, dict) or not _is_int(spec.get("max_relative_position")) \
                or spec.get("sign") not in ("key_minus_query", "query_minus_key") \
                or not isinstance(spec.get("clip"), bool):
            self.fail(args, "expected \"spec\" with sign, max_relative_position and clip")
            return None
        return d


def offset(i: int, j: int, query_length: int, key_length: int) -> int:
    """u = j − q_i, the key's offset from query row i (the queries are the last query_length keys)."""
    return j - (key_length - query_length + i)


def definition_index(spec: dict, u: int) -> int | None:
    """idx(u) = clip(d, −k, k) + k with d = u (key_minus_query) or −u (query_minus_key); None where clip is false
    and |d| > k (the table has no row: the CLI refuses such a geometry)."""
    k = spec["max_relative_position"]
    d = u if spec["sign"] == "key_minus_query" else -u
    if abs(d) > k and not spec["clip"]:
        return None
    return max(-k, min(k, d)) + k


def index_by_offset(d: dict, length: int) -> list:
    """[(u, idx)] for u in [−(length − 1), length − 1] from a square index matrix: the last row (query at length − 1)
    gives u <= 0, row 0 (query at 0) u >= 0."""
    rows = d["indices"]
    neg = [(j - (length - 1), rows[length - 1][j]) for j in range(length - 1)]
    return neg + [(j, rows[0][j]) for j in range(length)]


def mismatches(d: dict) -> list:
    """[(i, j, got, want)] where the matrix differs from the definition computed here (the JSON's own spec and
    lengths)."""
    spec, rows = d["spec"], d["indices"]
    lq, lk = len(rows), len(rows[0]) if rows else 0
    want = {u: definition_index(spec, u) for u in range(-(lk - 1), lk)}
    return [(i, j, v, want[offset(i, j, lq, lk)])
            for i, r in enumerate(rows) for j, v in enumerate(r) if v != want[offset(i, j, lq, lk)]]


def transpose(rows: list) -> list:
    return [list(c) for c in zip(*rows)]


def flat_ends(pts: list) -> tuple:
    """(a, b): the index is constant for u <= a and for u >= b (a = the first u, b = the last u: no flat end)."""
    a = pts[0][0]
    for u, v in pts[1:]:
        if v != pts[0][1]:
            break
        a = u
    b = pts[-1][0]
    for u, v in reversed(pts[:-1]):
        if v != pts[-1][1]:
            break
        b = u
    return a, b


def sign_text(sign: str) -> str:
    return {"key_minus_query": "d = j − q_i", "query_minus_key": "d = q_i − j"}.get(sign, str(sign))


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _curve_data(src: ShawCli) -> dict | None:
    """{preset: data} of the square matrices of (a) (also the spec of each preset for (c)); None if the CLI failed."""
    out = {}
    for preset in PRESETS:
        n = CURVE_LENGTH[preset]
        d = src.index(("--preset", preset), n, n)
        if d is None:
            return None
        out[preset] = d
    return out


def _index_curves(ctx, src: ShawCli) -> tuple:
    name = "fig-shaw-index"
    data = _curve_data(src)
    if data is None:
        return _not_drawn(name, src.error), ""
    series, notes = [], []
    for preset, style in (("t2t", "lines lw 2"), ("bert-relative-key", "lines lw 2 dt 2")):
        d, n = data[preset], CURVE_LENGTH[preset]
        spec, k = d["spec"], d["spec"]["max_relative_position"]
        pts = index_by_offset(d, n)
        series.append(Series(f"{preset} (k = {k})", [(u, v - k) for u, v in pts if abs(u) <= WINDOW], style))
        used = sorted({v for _, v in pts})
        a, b = flat_ends(pts)
        rising = all(y >= x for (_, x), (_, y) in zip(pts, pts[1:]))
        falling = all(y <= x for (_, x), (_, y) in zip(pts, pts[1:]))
        shape = "non-decreasing" if rising else "non-increasing" if falling else "neither increasing nor decreasing"
        ends = (f"constant for u ≤ {a} (index {pts[0][1]}) and for u ≥ {b} (index {pts[-1][1]})"
                if (a, b) != (pts[0][0], pts[-1][0]) else "no flat end (every offset its own row)")
        bad = mismatches(d)
        notes.append(f"{preset} ({sign_text(spec['sign'])}, k = {md.num(k)}, clip {str(spec['clip']).lower()}, "
                     f"{n} × {n}): {shape} in u, {ends}; rows used {md.num(len(used))} "
                     f"({md.num(used[0])}–{md.num(used[-1])}) of {md.num(d.get('table_rows'))}; every entry equals "
                     f"clip(d, −k, k) + k computed here: {_yes(not bad)}"
                     + (" (first difference at ({}, {}): {} vs {})".format(*bad[0]) if bad else ""))
    same = data["bert-relative-key-query"]["indices"] == data["bert-relative-key"]["indices"]
    plot = Plot(name=name, title="Shaw / BERT relative positions: table row of the offset u = j - q_i (minus k)",
                xlabel="offset u = key - query", ylabel="index - k (row relative to the centre row k)",
                series=series, xrange=(-WINDOW, WINDOW), key="top right")
    t2t_k = data["t2t"]["spec"]["max_relative_position"]
    cap = (f"**(a) The table row of every offset.** idx(u) − k against u = j − q_i for |u| ≤ {WINDOW}: t2t (d = j − i) "
           f"rises with u and is clipped at ±{t2t_k} (its flat ends), BERT relative_key (d = i − j) falls with u and "
           "is not clipped — the same offset reads the mirrored row of the table, the sign convention of "
           "SHAW-SIGN-1 (a port that copies one convention's table into the other's indexing reads every relative "
           "embedding at −u). " + "; ".join(notes) + ". bert-relative-key-query has the same index matrix as "
           f"bert-relative-key (its k·E term reads the same rows): {_yes(same)}. Data: `posenc index shaw --preset "
           f"t2t --query-length {CURVE_LENGTH['t2t']} --key-length {CURVE_LENGTH['t2t']} --format json` and "
           f"`--preset bert-relative-key|bert-relative-key-query` at {CURVE_LENGTH['bert-relative-key']} (the last "
           f"row gives u ≤ 0, row 0 u ≥ 0). See {CLAIMS_LINK} (SHAW-INDEX-2/3, SHAW-SIGN-1).")
    return ctx.renderer.image(plot, "Shaw / BERT index against the offset"), cap


def _matrix_table(rows: list, key_length: int) -> str:
    lq = len(rows)
    return md.table(["i (q_i)", *[f"j = {j}" for j in range(key_length)]],
                    [[f"{i} ({key_length - lq + i})", *[md.num(v) for v in r]] for i, r in enumerate(rows)],
                    ["l"] + ["r"] * key_length)


def _small_matrices(ctx, src: ShawCli) -> tuple:
    name = "table-shaw-sign"
    base = ("--preset", "t2t", "--max-relative-position", str(SMALL_K))
    flipped = base + ("--sign", "query_minus_key")
    sq = src.index(base, SMALL_L, SMALL_L)
    tr = src.index(flipped, SMALL_L, SMALL_L) if sq else None
    last = src.index(base, ALIGN_LQ, SMALL_L) if tr else None
    cached = src.index(base, 1, SMALL_L) if last else None
    if cached is None:
        return _not_drawn(name, src.error, "table"), ""
    a, b, c = sq["indices"], tr["indices"], last["indices"]
    k2 = 2 * SMALL_K
    is_transpose = b == transpose(a)
    is_mirror = b == [[k2 - v for v in r] for r in a]
    last_rows = c == a[SMALL_L - ALIGN_LQ:]
    cached_row = cached["indices"] == a[-1:]
    bad = [m for d in (sq, tr, last, cached) for m in mismatches(d)]
    body = (f"key_minus_query (t2t), k = {SMALL_K}, {SMALL_L} × {SMALL_L}:\n\n" + _matrix_table(a, SMALL_L) +
            f"\nquery_minus_key (BERT's sign), k = {SMALL_K}, {SMALL_L} × {SMALL_L}:\n\n" + _matrix_table(b, SMALL_L) +
            f"\nkey_minus_query (t2t), k = {SMALL_K}, query_length {ALIGN_LQ}, key_length {SMALL_L}:\n\n" +
            _matrix_table(c, SMALL_L))
    cap = (f"**(b) The two signs, small.** t2t with k = {SMALL_K} (`posenc index shaw --preset t2t "
           f"--max-relative-position {SMALL_K} --query-length {SMALL_L} --key-length {SMALL_L} --format json`) and the "
           f"same spec with `--sign query_minus_key` (BERT's sign, clipped here so that both have the same {k2 + 1} "
           f"rows; BERT itself does not clip). The second matrix is the transpose of the first: {_yes(is_transpose)}; "
           f"and equals 2k − the first: {_yes(is_mirror)} (SHAW-SIGN-1). With query_length {ALIGN_LQ} < key_length "
           f"{SMALL_L} the queries are the last keys (q_i = Lk − Lq + i, t2t's range_k[-length_q:]): the rows are the "
           f"last {ALIGN_LQ} rows of the square matrix: {_yes(last_rows)}; the cached single query (query_length 1: "
           f"t2t cache=True, BERT use_cache) is its last row: {_yes(cached_row)} (SHAW-DECODE-1). Every entry equals "
           f"clip(d, −k, k) + k computed here: {_yes(not bad)}. See {CLAIMS_LINK} (SHAW-SIGN-1, SHAW-INDEX-1).")
    return body, cap


def _presets_table(ctx, src: ShawCli) -> tuple:
    name = "table-shaw-presets"
    data = _curve_data(src)
    if data is None:
        return _not_drawn(name, src.error, "table"), ""
    rows, checks = [], []
    for preset in PRESETS:
        spec = data[preset]["spec"]
        k, hd = spec["max_relative_position"], spec.get("head_dim")
        table_rows = data[preset].get("table_rows")
        checks.append(table_rows == 2 * k + 1)
        rows.append([md.code(preset), md.cell(sign_text(spec["sign"])), md.num(k),
                     "clamp to [−k, k]" if spec["clip"] else f"none (key_length ≤ {md.num(k + 1)})",
                     md.num(table_rows), "yes" if spec.get("values") else "no",
                     "yes" if spec.get("key_query") else "no", md.num(hd),
                     f"1/√{hd}" if _is_int(hd) else "—"])
    table = md.table(["preset", "distance", "k", "clipping", "table rows (2k + 1)", "value table a^V",
                      "k·a^K term", "head_dim", "scale"], rows, ["l", "l", "r", "l", "r", "l", "l", "r", "l"])
    t2t, bert = data["t2t"], data["bert-relative-key"]
    tk, tr = md.num(t2t["spec"]["max_relative_position"]), md.num(t2t.get("table_rows"))
    bk, br = md.num(bert["spec"]["max_relative_position"]), md.num(bert.get("table_rows"))
    cap = ("**(c) t2t and BERT side by side.** Both add learned relative embeddings a^K[idx(i, j)] to the keys in "
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
           f"equal 2k + 1 for every preset: {_yes(all(checks))}. Data: the \"spec\" and \"table_rows\" of the "
           "JSON of (a). The benchmarks time the t2t index matrix, its causal scores and its attention output "
           "(`attend`, held against the scores family's sgemm of q k^T); see [performance](performance.md) and "
           f"{CLAIMS_LINK} (SHAW-SCORES-1, SHAW-OUTPUT-1, SHAW-CHECK-1).")
    return table, cap


def figures(ctx) -> list:
    src = ShawCli(ctx.cli)
    out = [_index_curves(ctx, src), _small_matrices(ctx, src), _presets_table(ctx, src)]
    ctx.figure_notes.append(("figure data", f"the posenc CLI (`posenc index shaw --format json`; {src.calls} "
                             "invocations)" if src.error is None else f"not drawn: {md.cell(src.error)}"))
    return out
