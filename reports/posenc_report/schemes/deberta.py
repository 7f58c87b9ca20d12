"""Report module of DeBERTa-v2/v3's disentangled attention (He et al. 2021): its speed headline, the log bucket of
every relative position i − j for HF's unclamped buckets (every DeBERTa-v2/v3 checkpoint) and the 2023 original's
clamped ones, the c2p and p2c score terms of a fixed query / key against rel = i − j (the identity up to ±mid, log
compression beyond, the clamp of the gather index at the table's ends), where HF's float32 buckets differ from the
exact ones, and small relative-position and c2p / p2c gather-index matrices.

Every bucket and index comes from the posenc CLI (`posenc index deberta --format json`: the relative-position matrix
or, with --what c2p, the gather index, of a column, a row or a small square), every score from `posenc scores deberta
--format json` of .npy inputs written here (a fixed query or key, zeros elsewhere, synthetic seeded relative tables:
the trained ones are weights); the checks against the definition (spec/include/posenc/deberta_spec.hpp, CONVENTIONS.md
§2.8: b(rel) in HF's float32 steps or exactly, c = clamp(b + span, 0, 2 span − 1), the scores) are made here.
Without a CLI the figures are not drawn and the page says why."""
from __future__ import annotations

import math
import os
import random
import struct
import tempfile

from .. import md
from ..npy import read_npy, write_npy  # noqa: F401 (tests use deberta.read_npy)
from ..cli_data import CliData
from ..gnuplot import Plot, Series

SCHEME = "deberta"

# benchmarks/deberta_bench.cpp: index/<variant>/heads:1/L:<L>/threads:<n> (int32 matrices; baselines
# stream_store_i32, store_i32) and scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n> (fused against sgemm_f32).
HEADLINE_KERNELS = (
    {"family": "index", "variant": "relative_v3_i32", "baseline": "bandwidth",
     "what": "deberta-v3-base int32 relative-position matrix at its largest size vs the streaming store"},
    {"family": "index", "variant": "c2p_v3_i32", "baseline": "bandwidth",
     "what": "deberta-v3-base int32 c2p index matrix at its largest size vs the streaming store"},
    {"family": "scores", "variant": "fused_v3_f32", "baseline": "sgemm",
     "what": "disentangled scores (c2c + c2p + p2c: two gathered gemms, then a beta = 1 sgemm) vs sgemm of the "
             "same shape (target <= 2.2x)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-deberta)"
SPAN = 1500  # (a): rel in [-SPAN, SPAN]
# (b): (position_buckets, max_relative_positions) of schemes/deberta/cases.hpp
CONFIGS = ((256, 512), (128, 512), (64, 256), (32, 64), (4, 8), (8, 16), (257, 1000), (3, 5), (2, 3), (512, 2048))
# (b): the c2p term of one fixed query and the p2c term of one fixed key against rel in [-SCORE_SPAN, SCORE_SPAN]
# (past ±511, where deberta-v3-base's bucket reaches the table's ±255), one head of the preset; each from one square
# call of SCORE_SPAN + 1 queries and keys (`posenc scores` takes Lq <= Lk only, and the queries are positions 0..Lq-1:
# row 0 gives rel = −j <= 0, the last row rel >= 0), the other operand zero so that the score is that term alone; the
# scores come back as a float64 .npy (the JSON of 641 × 641 numbers takes the CLI seconds to print).
PRESET = "deberta-v3-base"
SCORE_ARGS = ("--preset", PRESET, "--heads", "1")
SCORE_SPAN = 640
SEED = 20260312             # Python's Mersenne Twister: the same q, k and synthetic tables on every run
# (b): the CLI's float64 scores against scale Σ_c x_c T[c(rel)][c] computed here (math.fsum) must agree to within
# SCORE_TOL of scale Σ_c |x_c T[c(rel)][c]| (DESIGN.md §3: a sum of products is held relative to the sum of the
# magnitudes of its terms; a float64 gemm's bound (γ_{d+2} + u) is 7.4e-15 of it at head_dim 64).
SCORE_TOL = 1e-12
# (d): a small case whose 8 × 8 matrices show the identity (|rel| <= mid = 2), the log buckets and the clamp of the
# gather index (span 4: an 8-row table; HF's b reaches ±6 at |rel| = 7), then the first ALIGN_LQ queries.
SMALL_ARGS = ("--preset", PRESET, "--position-buckets", "4", "--max-relative-positions", "4")
SMALL_L, ALIGN_LQ = 8, 3


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


def _exact_ceil(a: int, mid: int, m: int, n: int) -> int:
    """ceil(v), v = ln(a / mid) / ln(m / mid) · n in the reals (a > mid, m > mid): v in double, and where it is
    within 1e-9 of an integer t the integers decide: v = t iff a^n mid^t = m^t mid^n, v > t iff
    a^n mid^t > m^t mid^n."""
    v = math.log(a / mid) / math.log(m / mid) * n
    t = round(v)
    if abs(v - t) > 1e-9 * max(1.0, abs(v)):
        return math.ceil(v)
    lhs, rhs = a ** n * mid ** t, m ** t * mid ** n
    return t + 1 if lhs > rhs else t


def bucket(rel: int, spec: dict) -> int:
    """b(rel) of the spec (position_buckets, max_relative_positions, clamp, regime "exact" or "hf"): rel itself
    without buckets or for |r| <= mid, else sign(r) (mid + ceil(v(|r|))), v(a) = ln(a / mid) / ln(M / mid) · N with
    mid = position_buckets // 2, M = max_relative_positions − 1, N = mid − 1, r = rel clamped to ±M first with clamp
    (the 2023 original). exact: the real v; hf: HF's float32 steps RN32(RN32(a) / RN32(mid)), RN32(ln x),
    RN32(ln RN32(M / mid)), their quotient and the product by RN32(N) each rounded to float32, then ceil (a float32
    operation on a float32 number is correctly rounded when done in double; ln in double, then rounded)."""
    bs = spec.get("position_buckets")
    if bs is None:
        return rel
    mid, m = bs // 2, spec["max_relative_positions"] - 1
    n = mid - 1
    r = max(-m, min(m, rel)) if spec.get("clamp") else rel
    a = abs(r)
    if a <= mid:
        return r
    if spec.get("regime") == "exact":
        t = _exact_ceil(a, mid, m, n)
    else:
        x = f32(f32(a) / f32(mid))
        y = f32(f32(math.log(x)) / f32(math.log(f32(m / mid))))
        t = math.ceil(f32(y * f32(n)))
    return (mid + t) if r > 0 else -(mid + t)


def span(spec: dict) -> int:
    """att_span: position_buckets, or max_relative_positions without buckets (HF pos_ebd_size)."""
    bs = spec.get("position_buckets")
    return bs if bs is not None else spec["max_relative_positions"]


def gather_index(b: int, att_span: int) -> int:
    """c = clamp(b + att_span, 0, 2 att_span − 1): the c2p / p2c row of bucket b."""
    return max(0, min(2 * att_span - 1, b + att_span))


def matrix_mismatches(d: dict) -> list:
    """[(i, j, got, want)] where an `index deberta` matrix (relative_positions: b(i − j); indices: c(i, j)) differs
    from the definition computed here with the JSON's own spec (query i at position i, key j at j)."""
    spec = d["spec"]
    if "indices" in d:
        rows, f = d["indices"], lambda rel: gather_index(bucket(rel, spec), span(spec))
    else:
        rows, f = d["relative_positions"], lambda rel: bucket(rel, spec)
    return [(i, j, v, f(i - j)) for i, r in enumerate(rows) for j, v in enumerate(r) if v != f(i - j)]


def fixed_vector(dim: int, seed: int) -> list:
    """`dim` float32 numbers drawn N(0, 1/dim) (norm about 1; Python's random.gauss, seeded)."""
    rng = random.Random(seed)
    return [f32(rng.gauss(0.0, 1.0 / math.sqrt(dim))) for _ in range(dim)]


def synthetic_table(att_span: int, dim: int, seed: int) -> list:
    """A 2 att_span × dim stand-in for a trained projected relative table (K_r or Q_r): row c = b + att_span holds
    t(b), a random walk over the bucket b: t(0) drawn N(0, 1/dim) per entry, t(b) = t(b − 1) + N(0, 1/dim) for b > 0
    and t(b + 1) + N(0, 1/dim) for b < 0 (each side its own seeded generator)."""
    sd = 1.0 / math.sqrt(dim)
    rng0 = random.Random(seed + 3)
    zero = [rng0.gauss(0.0, sd) for _ in range(dim)]
    rows = {0: zero}
    for side, count, rng in ((1, att_span - 1, random.Random(seed + 1)), (-1, att_span, random.Random(seed + 2))):
        prev = zero
        for b in range(1, count + 1):
            prev = [v + rng.gauss(0.0, sd) for v in prev]
            rows[side * b] = prev
    return [rows[c - att_span] for c in range(2 * att_span)]


def position_term(table: list, x: list, spec: dict, rel: int, scale: float) -> tuple:
    """(scale Σ_c x_c T[c(rel)][c], |scale| Σ_c |x_c T[c(rel)][c]|) in double (math.fsum): the c2p term (x = the
    query, T = K_r) or the p2c term (x = the key, T = Q_r) at rel = i − j, and the sum of the magnitudes of its
    terms."""
    products = [a * b for a, b in zip(x, table[gather_index(bucket(rel, spec), span(spec))])]
    return scale * math.fsum(products), abs(scale) * math.fsum(abs(p) for p in products)


def matrix_errors(rows: list, table: list, x: list, spec: dict, scale: float) -> tuple:
    """(largest |rows[i][j] − e(i − j)| / m(i − j), i, j) over a score matrix that holds one term alone (query i at
    position i, key j at j), (e, m) = position_term's (inf where m = 0 and the score differs from e)."""
    lq, lk = len(rows), len(rows[0]) if rows else 0
    want = {rel: position_term(table, x, spec, rel, scale) for rel in range(-(lk - 1), lq)}
    worst = (0.0, 0, 0)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            e, m = want[i - j]
            err = abs(v - e) / m if m > 0 else (0.0 if v == e else math.inf)
            if err > worst[0]:
                worst = (err, i, j)
    return worst


def rows_by_region(spec: dict, rels: range) -> dict:
    """{region: (offsets, distinct rows c(rel) read)} for |rel| <= mid ("identity"), mid < |rel| <= M ("log") and
    |rel| > M ("beyond"), M = max_relative_positions − 1."""
    mid, m = spec["position_buckets"] // 2, spec["max_relative_positions"] - 1
    sp = span(spec)
    out = {}
    for region, keep in (("identity", lambda a: a <= mid), ("log", lambda a: mid < a <= m),
                         ("beyond", lambda a: a > m)):
        rs = [r for r in rels if keep(abs(r))]
        out[region] = (len(rs), len({gather_index(bucket(r, spec), sp) for r in rs}))
    return out


def flat_ends(spec: dict, rels: range) -> tuple:
    """(lo, hi): c(rel) is row 0 for every rel <= lo and row 2 span − 1 for every rel >= hi within rels (None where
    the end row is not reached)."""
    sp = span(spec)
    c = {r: gather_index(bucket(r, spec), sp) for r in rels}
    lo = hi = None
    for r in rels:
        if c[r] == 0:
            lo = r
        else:
            break
    for r in reversed(rels):
        if c[r] == 2 * sp - 1:
            hi = r
        else:
            break
    return lo, hi


# ---- the CLI ------------------------------------------------------------------------------------------------


def _regime_text(spec: dict) -> str:
    return "HF's float32 steps" if spec.get("regime") == "hf" else "the reals"


def _spec_ok(spec) -> bool:
    return isinstance(spec, dict) and (spec.get("position_buckets") is None or _is_int(spec.get("position_buckets"))) \
        and _is_int(spec.get("max_relative_positions")) and isinstance(spec.get("clamp"), bool) \
        and spec.get("regime") in ("exact", "hf") and _is_int(spec.get("head_dim"))


class DebertaCli(CliData):
    """`posenc index deberta` and `posenc scores deberta` as Python data; the scores' inputs are written as .npy
    files into `directory` (None: no scores) under the names given."""

    def __init__(self, cli: str | None, directory: str | None = None, timeout: float = 60):
        super().__init__(cli, timeout)
        self.directory = directory

    def npy_file(self, name: str, rows: list) -> str:
        path = os.path.join(self.directory, name)
        if not os.path.exists(path):
            write_npy(path, rows)
        return path

    def matrix(self, spec_args: tuple, what: str, query_length: int, key_length: int) -> dict | None:
        """`posenc index deberta *spec_args --what relative|c2p --query-length Lq --key-length Lk --format json`, its
        matrix ("relative_positions" or "indices") checked to be Lq rows of Lk integers, "span" an integer and
        "spec" the spec's fields; None (and `error` set) otherwise."""
        args = ("index", "deberta", *spec_args, "--what", what, "--query-length", str(query_length),
                "--key-length", str(key_length))
        return self._checked(args, "indices" if what == "c2p" else "relative_positions", query_length, key_length)

    def _checked(self, args: tuple, key: str, query_length: int, key_length: int) -> dict | None:
        """The JSON of `posenc *args` with d[key] checked to be query_length rows of key_length integers, "span" an
        integer and "spec" the spec's fields; None (and `error` set) otherwise."""
        d = self.run(args)
        if d is None:
            return None
        rows = d.get(key)
        if not isinstance(rows, list) or len(rows) != query_length or not all(
                isinstance(r, list) and len(r) == key_length and all(_is_int(v) for v in r) for r in rows):
            self.fail(args, f"expected \"{key}\": {query_length} rows of {key_length} integers")
            return None
        if not _spec_ok(d.get("spec")) or not _is_int(d.get("span")):
            self.fail(args, "expected \"span\" and \"spec\" with position_buckets, max_relative_positions, clamp, "
                      "regime and head_dim")
            return None
        return d

    def scores(self, tables: dict, q_rows: list, k_rows: list, tag: str) -> list | None:
        """`posenc scores deberta *SCORE_ARGS --pos-key K_r --pos-query Q_r --q Q --k K --out <tag>-scores.npy
        --format npy` of these rows (tables: {"pos_key": rows, "pos_query": rows}, written to pos-key.npy and
        pos-query.npy; the q and k to <tag>-q.npy, <tag>-k.npy), the scores read back as len(q_rows) rows of
        len(k_rows) finite floats (the .npy's shape checked to be [1, Lq, Lk]); None (and `error` set) otherwise.
        Run once per argument tuple (cached), as CliData.run."""
        if self.error:
            return None
        if self.directory is None:
            self.error = "no directory for the .npy inputs of `posenc scores deberta`"
            return None
        lq, lk = len(q_rows), len(k_rows)
        out = os.path.join(self.directory, f"{tag}-scores.npy")
        args = ("scores", "deberta", *SCORE_ARGS, "--pos-key", self.npy_file("pos-key.npy", tables["pos_key"]),
                "--pos-query", self.npy_file("pos-query.npy", tables["pos_query"]),
                "--q", self.npy_file(f"{tag}-q.npy", q_rows), "--k", self.npy_file(f"{tag}-k.npy", k_rows),
                "--out", out, "--format", "npy")
        if args in self._cache:
            return self._cache[args]
        if self.execute(args) is None:
            return None
        try:
            with open(out, "rb") as f:
                shape, values = read_npy(f.read())
        except (OSError, ValueError) as e:
            self.fail(args, f"no readable .npy in {out}: {e}")
            return None
        if shape != (1, lq, lk) or not all(math.isfinite(v) for v in values):
            self.fail(args, f"expected finite scores of shape [1, {lq}, {lk}], got shape {list(shape)}")
            return None
        rows = [list(values[i * lk:(i + 1) * lk]) for i in range(lq)]
        self._cache[args] = rows
        return rows

    def column(self, spec_args: tuple, length: int) -> dict | None:
        """Query positions 0..length-1 against key 0: rel = i >= 0 (the relative positions checked as matrix's)."""
        return self._checked(("index", "deberta", *spec_args, "--query-length", str(length), "--key-length", "1"),
                             "relative_positions", length, 1)

    def row(self, spec_args: tuple, length: int) -> dict | None:
        """Query 0 against keys 0..length-1: rel = -j <= 0 (the relative positions checked as matrix's)."""
        return self._checked(("index", "deberta", *spec_args, "--query-length", "1", "--key-length", str(length)),
                             "relative_positions", 1, length)


def buckets_by_rel(column: dict, row: dict) -> list:
    """[(rel, bucket)] for rel in [-(n - 1), n - 1] from a column call (rel = i) and a row call (rel = -j)."""
    col = [r[0] for r in column["relative_positions"]]
    neg = row["relative_positions"][0]
    return [(-j, neg[j]) for j in range(len(neg) - 1, 0, -1)] + [(i, col[i]) for i in range(len(col))]


def _bucket_curves(ctx, src: DebertaCli) -> tuple:
    name = "fig-deberta-buckets"
    series, notes = [], []
    for label, args, style in (("deberta-v3-base (HF)", ("--preset", "deberta-v3-base"), "lines lw 2"),
                               ("2023 original (--clamp)", ("--preset", "deberta-v3-base", "--clamp=true"),
                                "lines lw 2 dt 2")):
        col, row = src.column(args, SPAN + 1), src.row(args, SPAN + 1)
        if col is None or row is None:
            return _not_drawn(name, src.error), ""
        pts = buckets_by_rel(col, row)
        series.append(Series(label, pts, style))
        d = dict(pts)
        notes.append(f"{label}: b(511) = {d[511]}, b(512) = {d[512]}, b({SPAN}) = {d[SPAN]}")
    plot = Plot(name=name, title="DeBERTa: log bucket of the relative position rel = i - j",
                xlabel="relative position rel = query - key", ylabel="bucket", series=series, key="top left")
    cap = ("**(a) The bucket of every relative position.** DeBERTa-v2/v3 (256 buckets, max 512) keeps rel itself for "
           "|rel| ≤ 128, then mid + ceil(ln(a/128) / ln(511/128) · 127), reaching ±255 at |rel| = 511; HF (and the "
           "2021 original) go on growing past it, the 2023 original clamps rel first and stays at ±255 (the c2p "
           "clamp to [0, 511] later hides the difference for the c2p index). " + "; ".join(notes) +
           f". Data: `posenc index deberta --preset deberta-v3-base [--clamp=true] --query-length {SPAN + 1} "
           f"--key-length 1` and `--query-length 1 --key-length {SPAN + 1}` (JSON). See {CLAIMS_LINK} "
           "(DEBERTA-BUCKET-2, DEBERTA-INDEX-3).")
    return ctx.renderer.image(plot, "DeBERTa buckets against the relative position"), cap


def _score_curves(ctx, src: DebertaCli) -> tuple:
    name = "fig-deberta-score-offset"
    probe = src.matrix(SCORE_ARGS, "relative", 1, 1)
    if probe is None:
        return _not_drawn(name, src.error), ""
    spec = probe["spec"]
    if spec.get("position_buckets") is None or not spec.get("c2p") or not spec.get("p2c") \
            or probe["span"] != span(spec):
        src.fail(("index", "deberta", *SCORE_ARGS), "expected a spec with position_buckets, c2p and p2c, and "
                 "\"span\" = position_buckets")
        return _not_drawn(name, src.error), ""
    hd, sp = spec["head_dim"], span(spec)
    mid, m = spec["position_buckets"] // 2, spec["max_relative_positions"] - 1
    tables = {"pos_key": synthetic_table(sp, hd, SEED), "pos_query": synthetic_table(sp, hd, SEED + 10)}
    q, k, zero = fixed_vector(hd, SEED), fixed_vector(hd, SEED + 20), [0.0] * hd
    n = SCORE_SPAN + 1
    scale = 1 / math.sqrt(hd * 3)
    curves, worst = {}, (0.0, "", None, None)
    for term, x, table, qs, ks in (("c2p", q, tables["pos_key"], [q] * n, [zero] * n),
                                   ("p2c", k, tables["pos_query"], [zero] * n, [k] * n)):
        rows = src.scores(tables, qs, ks, term)
        if rows is None:
            return _not_drawn(name, src.error), ""
        err = matrix_errors(rows, table, x, spec, scale)
        if worst[2] is None or err[0] > worst[0]:
            worst = (err[0], term, err[1], err[2])
        curves[term] = {**{-j: v for j, v in enumerate(rows[0])}, **{n - 1 - j: v for j, v in enumerate(rows[-1])}}
    rels = range(-SCORE_SPAN, SCORE_SPAN + 1)
    regions = rows_by_region(spec, rels)
    lo, hi = flat_ends(spec, rels)
    top = bucket(SCORE_SPAN, spec)
    series = [Series("c2p of a fixed query q", sorted(curves["c2p"].items()), "lines lw 2"),
              Series("p2c of a fixed key k", sorted(curves["p2c"].items()), "lines lw 2 dt 2")]
    ys = [v for c in curves.values() for v in c.values()]
    y0, y1 = min(ys), max(ys)
    pad = 0.05 * (y1 - y0 or 1)
    for x in (mid, m):
        for sx in (-x, x):
            series.append(Series(f"|rel| = {mid} (mid), {m} (max - 1)" if sx == -mid else "",
                                 [(sx, y0 - pad), (sx, y1 + pad)], "lines lw 1", dashed=True,
                                 colour="#000000" if x == mid else "#999999"))
    plot = Plot(name=name, title=f"DeBERTa c2p and p2c terms against rel = i - j ({PRESET}, one head, synthetic "
                                 "tables)",
                xlabel="relative position rel = i - j (query minus key)",
                ylabel="scale <q, K_r[c(rel)]> (c2p), scale <k, Q_r[c(rel)]> (p2c)", series=series,
                xrange=(-SCORE_SPAN, SCORE_SPAN), yrange=(y0 - pad, y1 + pad), key="below left horizontal",
                extra=["set bmargin 6"])               # gnuplot's own margin puts the key over the x label here
    (ni, ri), (nl, rl), (nb, rb) = regions["identity"], regions["log"], regions["beyond"]
    cap = (f"**(b) Score against offset for a fixed query and a fixed key.** The c2p term scale ⟨q, K_r[c(rel)]⟩ "
           "of one fixed query q and the p2c term scale ⟨k, Q_r[c(rel)]⟩ of one fixed key k against rel = i − j in "
           f"[−{SCORE_SPAN}, {SCORE_SPAN}], {md.code(PRESET, table=False)} ({spec['position_buckets']} buckets, max "
           f"{spec['max_relative_positions']}, {spec['regime']} buckets, one head, head_dim {hd}, scale "
           f"1/√(3 · {hd}) with c2p and p2c both on), c(rel) = clamp(b(rel) + {sp}, 0, {2 * sp - 1}). K_r and Q_r "
           "are projected trained weights; here they are **synthetic**: random walks over the bucket b (row b + "
           f"{sp} holds t(b); t(0) and every step drawn N(0, 1/head_dim) per entry; Python's random, seeds {SEED} "
           f"and {SEED + 10}); q and k are float32 numbers drawn N(0, 1/head_dim) (seeds {SEED}, {SEED + 20}). The "
           f"scores are the CLI's: `posenc scores deberta --preset {PRESET} --heads 1 --pos-key <synthetic> "
           "--pos-query <synthetic> --q Q --k K --format npy`, float64, "
           f"{n} × {n} (query i at position i, key j at j), the other operand zero so that each score is the one "
           f"term alone — c2p: every query q, every key zero; p2c: every query zero, every key k; drawn are row 0 "
           f"(rel = −j ≤ 0) and row {n - 1} (rel ≥ 0). From the definition: for |rel| ≤ {mid} (black dashed "
           f"lines) every offset has its own row ({md.num(ni)} offsets, {md.num(ri)} rows: the identity); for "
           f"{mid} < |rel| ≤ {m} (grey dashed lines) {md.num(nl)} offsets share {md.num(rl)} rows (the log "
           f"buckets: plateaus widening with |rel|); beyond, HF's bucket keeps growing (b({SCORE_SPAN}) = {top}, "
           f"past the table's ±{sp - 1}) and the gather index clamps it: {md.num(nb)} offsets read {md.num(rb)} "
           f"rows, row {2 * sp - 1} for every rel ≥ {hi} and row 0 for every rel ≤ {lo} (b(−{m}) = "
           f"{bucket(-m, spec)} reads row {gather_index(bucket(-m, spec), sp)}). p2c gathers with the same c as c2p "
           "(HF's −r_pos on the key-major matrix, transposed; b is odd). Every entry of both score matrices (not "
           "only the rows drawn) equals scale Σ_c x_c T[c(i − j)][c] computed here (math.fsum; b in "
           f"{_regime_text(spec)}; c2p: x = q, T = K_r; p2c: x = k, T = Q_r) to within {md.num(SCORE_TOL)} of "
           f"scale Σ_c |x_c T[c][c]|: {_yes(worst[0] <= SCORE_TOL)} (largest {md.num(worst[0])} of it, {worst[1]} "
           f"at ({worst[2]}, {worst[3]})). See {CLAIMS_LINK} (DEBERTA-SCORES-1, DEBERTA-INDEX-1).")
    return ctx.renderer.image(plot, "DeBERTa c2p and p2c terms against the relative position"), cap


def _differences(ctx, src: DebertaCli) -> tuple:
    name = "table-deberta-exact-vs-float32"
    rows = []
    for bs, mp in CONFIGS:
        got = {}
        n = 4 * mp + 1
        for regime in ("exact", "hf"):
            d = src.column(("--position-buckets", str(bs), "--max-relative-positions", str(mp), "--regime", regime), n)
            if d is None:
                return _not_drawn(name, src.error, "table"), ""
            got[regime] = [r[0] for r in d["relative_positions"]]
        diff = [f"{a}: {e} vs {h}" for a, (e, h) in enumerate(zip(got["exact"], got["hf"])) if e != h]
        rows.append([f"({bs}, {mp})", md.num(n - 1), md.cell("; ".join(diff[:12]) + (" …" if len(diff) > 12 else "")
                                                             if diff else "none")])
    table = md.table(["(position_buckets, max)", "distances compared (0 .. 4 max)",
                      "distance: exact vs HF float32 bucket"], rows, ["l", "r", "l"])
    cap = ("**(c) Exact vs HF float32 buckets.** For each configuration, the distances a = |rel| whose bucket differs "
           "between the exact regime (mid + the ceil of the real ln(a/mid) / ln((max − 1)/mid) (mid − 1)) and HF's "
           "float32 steps (a float32 division, two float32 logs, a quotient and a product, then ceil): at those "
           "distances a model trained with HF's arithmetic and a re-implementation with exact (or float64) logs use "
           "different relative embeddings. Where the real value is an exact integer (a = max − 1 gives mid − 1) both "
           "agree. Data: `posenc index deberta ... --regime exact|hf --key-length 1 --format json`. See "
           + CLAIMS_LINK + " (DEBERTA-BUCKET-3).")
    return table, cap


def _matrix_table(rows: list, key_length: int) -> str:
    return md.table(["i", *[f"j = {j}" for j in range(key_length)]],
                    [[str(i), *[md.num(v) for v in r]] for i, r in enumerate(rows)], ["l"] + ["r"] * key_length)


def _index_matrices(ctx, src: DebertaCli) -> tuple:
    name = "table-deberta-index"
    rel = src.matrix(SMALL_ARGS, "relative", SMALL_L, SMALL_L)
    c2p = src.matrix(SMALL_ARGS, "c2p", SMALL_L, SMALL_L) if rel else None
    first = src.matrix(SMALL_ARGS, "c2p", ALIGN_LQ, SMALL_L) if c2p else None
    if first is None:
        return _not_drawn(name, src.error, "table"), ""
    spec, sp = rel["spec"], c2p["span"]
    b, c = rel["relative_positions"], c2p["indices"]
    bad = [x for d in (rel, c2p, first) for x in matrix_mismatches(d)]
    own = [(i, j, c[i][j], gather_index(b[i][j], sp)) for i in range(SMALL_L) for j in range(SMALL_L)
           if c[i][j] != gather_index(b[i][j], sp)]
    odd = b == [[-v for v in r] for r in zip(*b)]
    first_rows = first["indices"] == c[:ALIGN_LQ]
    span_ok = sp == span(spec) and rel["span"] == sp
    in_range = all(0 <= v < 2 * sp for r in c for v in r)
    clamped = sorted({i - j for i in range(SMALL_L) for j in range(SMALL_L) if not 0 <= b[i][j] + sp < 2 * sp})
    bs, mp = spec.get("position_buckets"), spec["max_relative_positions"]
    mid = bs // 2 if bs else None
    shared = sorted({(b[i][0], i) for i in range(SMALL_L)})
    groups = {}
    for v, r in shared:
        groups.setdefault(v, []).append(r)
    share_text = "; ".join(" = ".join(f"b({r})" for r in rs) + f" = {v}" for v, rs in groups.items() if len(rs) > 1)
    body = (f"b(i − j), position_buckets {bs}, max_relative_positions {mp} (row i: the query at position i; column "
            f"j: the key at j):\n\n" + _matrix_table(b, SMALL_L)
            + f"\nc(i, j) = clamp(b(i − j) + {sp}, 0, {2 * sp - 1}), the c2p and p2c gather row:\n\n"
            + _matrix_table(c, SMALL_L)
            + f"\nc(i, j), query_length {ALIGN_LQ}, key_length {SMALL_L}:\n\n"
            + _matrix_table(first["indices"], SMALL_L))
    cap = (f"**(d) The relative positions and the gather index, small.** `posenc index deberta --preset {PRESET} "
           f"--position-buckets {bs} --max-relative-positions {mp} --query-length {SMALL_L} --key-length {SMALL_L} "
           f"[--what c2p] --format json` (mid = {mid}, max − 1 = {mp - 1}, span {sp}: relative tables of {2 * sp} "
           f"rows; {spec['regime']} buckets): b(i − j) is i − j for |i − j| ≤ {mid} and log-bucketed beyond"
           + (f" ({share_text}: offsets share a bucket)" if share_text else "")
           + f"; HF's bucket is not clamped and passes the table's reach, so the gather index clamps it at rel ∈ "
           f"{{{', '.join(map(str, clamped))}}} (b + {sp} outside [0, {2 * sp - 1}]). Every b equals b(i − j) "
           f"computed here ({_regime_text(spec)}) and "
           f"every c equals clamp(b(i − j) + span, 0, 2 span − 1) computed here: {_yes(not bad)}"
           + (" (first difference at ({}, {}): {} vs {})".format(*bad[0]) if bad else "")
           + f"; every c is clamp(b + span, 0, 2 span − 1) of the CLI's own b: {_yes(not own)}; every c is in "
           f"[0, {2 * sp - 1}]: {_yes(in_range)}; \"span\" is position_buckets: {_yes(span_ok)}. b is odd, so the "
           f"matrix is minus its transpose (DEBERTA-SIGN-1: rel = i − j, the opposite of Shaw's and T5's j − i): "
           f"{_yes(odd)}. The queries are the FIRST positions (HF build_relative_position: arange(query_size); "
           f"unlike Shaw's and NEZHA's last): query_length {ALIGN_LQ} gives the first {ALIGN_LQ} rows of the square "
           f"matrix: {_yes(first_rows)}. p2c reads the same c (HF gathers clamp(−b(j − i) + span) on the key-major "
           f"matrix and transposes; b is odd). See {CLAIMS_LINK} (DEBERTA-INDEX-1, DEBERTA-SIGN-1).")
    return body, cap


def figures(ctx) -> list:
    with tempfile.TemporaryDirectory(prefix="posenc-report-deberta.") as tmp:
        src = DebertaCli(ctx.cli, tmp)
        out = [_bucket_curves(ctx, src), _score_curves(ctx, src), _differences(ctx, src), _index_matrices(ctx, src)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc index deberta --format json` and `posenc scores "
                             f"deberta --format npy`; {src.calls} invocations)" if src.error is None
                             else f"not drawn: {md.cell(src.error)}"))
    return out
