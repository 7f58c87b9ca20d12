"""Report module of clipped relative position representations (Shaw et al. 2018, as tensor2tensor implements them)
and HF BERT's relative_key / relative_key_query (the same mechanism with the opposite sign and no clipping): its
speed headline, the table row of every offset u = j − q_i for each preset (t2t increasing and flat beyond ±20, BERT
decreasing over its whole 1023-row table), the relative score term of a fixed query against the offset (t2t flat
beyond ±20, BERT its mirror image), two small index matrices of the two signs (one the transpose of the other) and
the queries-are-the-last-keys alignment, and the presets side by side.

Every index comes from the posenc CLI (`posenc index shaw --format json`: the index matrix and the spec it used),
every score from `posenc scores shaw --format json` of .npy inputs written here (a fixed query, zero keys and a
synthetic, seeded key table: the trained one is a weight); the checks against the definition idx = clip(d, −k, k) + k
and e = scale ⟨q_i, a^K[idx]⟩ (spec/include/posenc/shaw_spec.hpp, CONVENTIONS.md §2.3) and between the matrices
(transpose, last rows, cached query) are made here. Without a CLI the figures are not drawn and the page says why."""
from __future__ import annotations

import math
import os
import random
import struct
import tempfile

from .. import md
from ..npy import write_npy
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
# (c): t2t with k = SMALL_K, SMALL_L x SMALL_L, both signs; then the last ALIGN_LQ queries and the cached query.
SMALL_K, SMALL_L, ALIGN_LQ = 3, 8, 3
# (b): the score of one fixed query against the offset, for t2t and bert-relative-key: SCORE_L × SCORE_L scores
# (every query row the same q, every key zero: each score is the relative term alone), the row of the query at
# position SCORE_L // 2 plotted (u in [−WINDOW, WINDOW]); every entry of both matrices is checked.
SCORE_PRESETS = ("t2t", "bert-relative-key")
SCORE_L = 2 * WINDOW + 1
SEED = 20260311             # Python's Mersenne Twister: the same q and synthetic table on every run
# (b): the CLI's float64 scores against scale Σ_c q_c a^K[idx][c] computed here (math.fsum) must agree to within
# SCORE_TOL of scale Σ_c |q_c a^K[idx][c]| (DESIGN.md §3: a sum of products is held relative to the sum of the
# magnitudes of its terms; a float64 gemm's bound (γ_{d+2} + u) is 7.4e-15 of it at head_dim 64).
SCORE_TOL = 1e-12


def _not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class ShawCli(CliData):
    """`posenc index shaw` and `posenc scores shaw` as Python data; the scores' inputs are written as .npy files
    into `directory` (None: no scores) under the names given."""

    def __init__(self, cli: str | None, directory: str | None = None, timeout: float = 60):
        super().__init__(cli, timeout)
        self.directory = directory
        self.curve_data = None              # _curve_data's, once made

    def npy_file(self, name: str, rows: list) -> str:
        path = os.path.join(self.directory, name)
        if not os.path.exists(path):
            write_npy(path, rows)
        return path

    def scores(self, preset: str, key_table: list, value_table: list | None, q_rows: list, k_rows: list,
               tag: str) -> dict | None:
        """`posenc scores shaw --preset P --key-table A [--value-table V] --q Q --k K --mask none --format json` of
        these rows (written to <tag>-*.npy), its "scores" checked to be len(q_rows) rows of len(k_rows) numbers,
        "scale" a number and "spec" as index's; None (and `error` set) otherwise."""
        if self.error:
            return None
        if self.directory is None:
            self.error = "no directory for the .npy inputs of `posenc scores shaw`"
            return None
        lq, lk = len(q_rows), len(k_rows)
        args = ("scores", "shaw", "--preset", preset, "--key-table", self.npy_file(f"{tag}-key-table.npy", key_table),
                *(("--value-table", self.npy_file(f"{tag}-value-table.npy", value_table)) if value_table else ()),
                "--q", self.npy_file(f"{tag}-q.npy", q_rows), "--k", self.npy_file(f"{tag}-k.npy", k_rows),
                "--mask", "none")
        d = self.run(args)
        if d is None:
            return None
        rows = d.get("scores")
        if d.get("shape") != [1, lq, lk] or not isinstance(rows, list) or len(rows) != lq or not all(
                isinstance(r, list) and len(r) == lk and all(_is_num(v) for v in r) for r in rows):
            self.fail(args, f"expected \"scores\": {lq} rows of {lk} numbers (shape [1, {lq}, {lk}])")
            return None
        spec = d.get("spec")
        if not _is_num(d.get("scale")) or not isinstance(spec, dict) \
                or not _is_int(spec.get("max_relative_position")) \
                or spec.get("sign") not in ("key_minus_query", "query_minus_key") \
                or not isinstance(spec.get("clip"), bool):
            self.fail(args, "expected \"scale\" and \"spec\" with sign, max_relative_position and clip")
            return None
        return d

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


def fixed_query(dim: int, seed: int = SEED) -> list:
    """q: `dim` float32 numbers drawn N(0, 1/dim) (norm about 1; Python's random.gauss, seeded)."""
    rng = random.Random(seed)
    return [struct.unpack("<f", struct.pack("<f", rng.gauss(0.0, 1.0 / math.sqrt(dim))))[0] for _ in range(dim)]


def synthetic_table(k: int, dim: int, seed: int = SEED) -> list:
    """A (2k + 1) × dim stand-in for the trained key table a^K: row d + k holds a(d), a random walk over the signed
    distance d: a(0) drawn N(0, 1/dim) per entry, a(d) = a(d − 1) + N(0, 1/dim) for d > 0 and a(d + 1) + N(0, 1/dim)
    for d < 0, each side from its own seeded generator, so a(d) is the same for every k >= |d| (t2t's 41 rows are
    the middle of BERT's 1023)."""
    sd = 1.0 / math.sqrt(dim)
    rng0 = random.Random(seed + 3)
    zero = [rng0.gauss(0.0, sd) for _ in range(dim)]
    rows = {0: zero}
    for side, rng in ((1, random.Random(seed + 1)), (-1, random.Random(seed + 2))):
        prev = zero
        for d in range(1, k + 1):
            prev = [v + rng.gauss(0.0, sd) for v in prev]
            rows[side * d] = prev
    return [rows[d] for d in range(-k, k + 1)]


def relative_term(table: list, q: list, spec: dict, u: int, scale: float) -> tuple | None:
    """(scale Σ_c q_c a^K[idx(u)][c], |scale| Σ_c |q_c a^K[idx(u)][c]|) in double (math.fsum): the relative part of
    the score of q and a key at offset u, and the sum of the magnitudes of its terms; None where idx(u) has no row."""
    r = definition_index(spec, u)
    if r is None:
        return None
    products = [a * b for a, b in zip(q, table[r])]
    return scale * math.fsum(products), abs(scale) * math.fsum(abs(x) for x in products)


def score_errors(rows: list, table: list, q: list, spec: dict, scale: float) -> tuple:
    """(largest |rows[i][j] − e(u)| / m(u), i, j) over a score matrix whose query rows are all q and whose keys are
    all zero (each score the relative term alone), (e, m) = relative_term at u = j − q_i; inf where e has no row or
    m = 0 and the score differs from e."""
    lq, lk = len(rows), len(rows[0]) if rows else 0
    want = {u: relative_term(table, q, spec, u, scale) for u in range(-(lk - 1), lk)}
    worst = (0.0, 0, 0)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            w = want[offset(i, j, lq, lk)]
            if w is None:
                x = math.inf
            else:
                x = abs(v - w[0]) / w[1] if w[1] > 0 else (0.0 if v == w[0] else math.inf)
            if x > worst[0]:
                worst = (x, i, j)
    return worst


def flat_beyond(curve: dict, k: int) -> bool:
    """The curve {u: value} is constant (equal numbers) for u >= k and for u <= −k (clipping: one table row each
    side); False if k or −k is not in it."""
    if k not in curve or -k not in curve:
        return False
    return all(v == curve[k] for u, v in curve.items() if u >= k) and \
        all(v == curve[-k] for u, v in curve.items() if u <= -k)


def mirror_difference(a: dict, b: dict, k: int) -> float:
    """max |a(u) − b(−u)| over |u| <= k (inf if an offset is missing)."""
    if not all(u in a and -u in b for u in range(-k, k + 1)):
        return math.inf
    return max(abs(a[u] - b[-u]) for u in range(-k, k + 1))


def sign_text(sign: str) -> str:
    return {"key_minus_query": "d = j − q_i", "query_minus_key": "d = q_i − j"}.get(sign, str(sign))


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _curve_data(src: ShawCli) -> dict | None:
    """{preset: data} of the square matrices of (a) (also the spec of each preset for (b) and (d)); None if the CLI
    failed. Made (and checked) once per source: (a), (b) and (d) share it."""
    if src.curve_data is not None:
        return src.curve_data
    out = {}
    for preset in PRESETS:
        n = CURVE_LENGTH[preset]
        d = src.index(("--preset", preset), n, n)
        if d is None:
            return None
        out[preset] = d
    src.curve_data = out
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


def _score_curves(ctx, src: ShawCli) -> tuple:
    name = "fig-shaw-score-offset"
    data = _curve_data(src)
    if data is None:
        return _not_drawn(name, src.error), ""
    n, mid = SCORE_L, SCORE_L // 2
    curves, mags, specs, notes, worst, scales_ok = {}, {}, {}, [], (0.0, "", 0, 0), True
    for preset in SCORE_PRESETS:
        spec = data[preset]["spec"]
        k, hd = spec["max_relative_position"], spec.get("head_dim")
        if not _is_int(hd) or hd < 1:
            src.fail(("index", "shaw", "--preset", preset), "expected \"spec\" with head_dim")
            return _not_drawn(name, src.error), ""
        q, table = fixed_query(hd), synthetic_table(k, hd)
        values = [[0.0] * hd for _ in table] if spec.get("values") else None
        d = src.scores(preset, table, values, [q] * n, [[0.0] * hd] * n, preset)
        if d is None:
            return _not_drawn(name, src.error), ""
        scale = 1 / math.sqrt(hd)
        scales_ok = scales_ok and abs(d["scale"] - scale) <= 1e-15 * scale
        err = score_errors(d["scores"], table, q, spec, scale)
        if err[0] >= worst[0]:
            worst = (err[0], preset, err[1], err[2])
        row = d["scores"][mid]
        curves[preset] = {j - mid: row[j] for j in range(n)}
        mags[preset] = max(relative_term(table, q, spec, u, scale)[1] for u in range(-mid, mid + 1)
                           if definition_index(spec, u) is not None)
        specs[preset] = spec
    t2t, bert = curves["t2t"], curves["bert-relative-key"]
    kt = specs["t2t"]["max_relative_position"]
    flat = flat_beyond(t2t, kt)
    distinct = len(set(bert.values()))
    mirror = mirror_difference(bert, t2t, kt)
    mirror_ok = mirror <= SCORE_TOL * max(mags.values())
    series = [Series(f"t2t (k = {kt}, d = j - q_i, clipped)", sorted(t2t.items()), "lines lw 2"),
              Series(f"bert-relative-key (k = {specs['bert-relative-key']['max_relative_position']}, d = q_i - j)",
                     sorted(bert.items()), "lines lw 2 dt 2")]
    lo = min(min(c.values()) for c in curves.values())
    hi = max(max(c.values()) for c in curves.values())
    pad = 0.05 * (hi - lo or 1)
    for x in (-kt, kt):
        series.append(Series(f"u = -{kt}, {kt} (t2t's clipping)" if x < 0 else "", [(x, lo - pad), (x, hi + pad)],
                             "lines lw 1", dashed=True, colour="#000000"))
    plot = Plot(name=name, title="Shaw / BERT: relative score term scale <q, a^K[idx(u)]> against u = j - q_i "
                                 "(synthetic table)",
                xlabel="offset u = j - q_i (key minus query)", ylabel="scale <q, a^K[idx(u)]>", series=series,
                xrange=(-WINDOW, WINDOW), yrange=(lo - pad, hi + pad), key="below left horizontal")
    hd = specs["t2t"].get("head_dim")
    cap = (f"**(b) Score against offset for a fixed query.** The relative part scale ⟨q, a^K[idx(u)]⟩ of the score "
           f"against u = j − q_i for |u| ≤ {WINDOW}, t2t (d = j − q_i, clipped at ±{kt}) and bert-relative-key "
           "(d = q_i − j, not clipped), scale = 1/√head_dim (head_dim "
           f"{md.num(hd)}). The key table a^K is a trained weight; here it is **synthetic**: a random walk over the "
           f"signed distance d, a(0) and every step drawn N(0, 1/head_dim) per entry (Python's random, seed {SEED}), "
           "row d + k holding a(d) — the same a(d) in both tables, so the curves differ only by the index. q is one "
           f"fixed vector of float32 numbers drawn N(0, 1/head_dim) (seed {SEED}). The scores are the CLI's: "
           f"`posenc scores shaw --preset t2t|bert-relative-key --key-table <synthetic> [--value-table <zeros>] --q "
           f"<q in every row> --k <zeros> --mask none --format json`, float64, {n} × {n}, every key zero so that each "
           f"score is the relative term alone; drawn is the row of the query at position {mid}. t2t is flat beyond "
           f"±{kt} (one table row each side: clipping; the same number at every u ≥ {kt} and at every u ≤ −{kt}): "
           f"{_yes(flat)}. BERT reads its own row at every offset ({distinct} different numbers over the {n} offsets: "
           f"{_yes(distinct == n)}) and is t2t's curve mirrored, BERT(u) = t2t(−u) for |u| ≤ {kt} (largest difference "
           f"{md.num(mirror)}, within {md.num(SCORE_TOL)} of the terms' magnitude: {_yes(mirror_ok)}) — the sign of "
           "SHAW-SIGN-1: a port that copies one convention's table into the other's indexing reads every relative "
           f"embedding at −u. Every entry of both {n} × {n} score matrices (not only the row drawn) equals scale "
           "Σ_c q_c a^K[idx][c] computed here (math.fsum; idx = clip(d, −k, k) + k, u = j − q_i) to within "
           f"{md.num(SCORE_TOL)} of scale Σ_c |q_c a^K[idx][c]|: {_yes(worst[0] <= SCORE_TOL)} (largest "
           f"{md.num(worst[0])} of it" + (f", {worst[1]} at ({worst[2]}, {worst[3]})" if worst[1] else "")
           + f"); the CLI's scale is 1/√head_dim: {_yes(scales_ok)}. See {CLAIMS_LINK} (SHAW-SCORES-1, SHAW-SIGN-1).")
    return ctx.renderer.image(plot, "Shaw / BERT relative score term against the offset"), cap


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
    cap = (f"**(c) The two signs, small.** t2t with k = {SMALL_K} (`posenc index shaw --preset t2t "
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
           f"equal 2k + 1 for every preset: {_yes(all(checks))}. Data: the \"spec\" and \"table_rows\" of the "
           "JSON of (a). The benchmarks time the t2t index matrix, its causal scores and its attention output "
           "(`attend`, held against the scores family's sgemm of q k^T); see [performance](performance.md) and "
           f"{CLAIMS_LINK} (SHAW-SCORES-1, SHAW-OUTPUT-1, SHAW-CHECK-1).")
    return table, cap


def figures(ctx) -> list:
    with tempfile.TemporaryDirectory(prefix="posenc-report-shaw.") as tmp:
        src = ShawCli(ctx.cli, tmp)
        out = [_index_curves(ctx, src), _score_curves(ctx, src), _small_matrices(ctx, src), _presets_table(ctx, src)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc index shaw` and `posenc scores shaw`, `--format "
                             f"json`; {src.calls} invocations)" if src.error is None
                             else f"not drawn: {md.cell(src.error)}"))
    return out
