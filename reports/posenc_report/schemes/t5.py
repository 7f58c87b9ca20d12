"""Report module of T5's relative attention bias (Raffel et al. 2020): its speed headline, the bucket of every
relative position j − i for the encoder (bidirectional) and the decoder (unidirectional), where HF's float32
buckets (what T5 models were trained with) differ from the exact ones, and the bias of a few heads against the
distance j − i (a synthetic table: T5's is trained and posenc ships none).

Every number comes from the posenc CLI (`posenc index t5 --format json`: the bucket matrix and the first distance of
every bucket; `posenc bias t5 --table T.npy --dtype f64 --format json`: the bias); the comparisons are made here,
and every bias value is checked against table[bucket(j − q_i)][h] with the bucket computed here from the definition
(spec/include/posenc/t5_spec.hpp, CONVENTIONS.md §2.7). Without a CLI the figures are not drawn and the page says
why."""
from __future__ import annotations

import math
import os
import struct
import tempfile

from .. import md
from ..npy import write_npy
from ..cli_data import CliData
from ..gnuplot import COLOURS, Plot, Series

SCHEME = "t5"

# benchmarks/t5_bench.cpp: index/<variant>/heads:1/L:<L>/threads:<n> (int32 bucket matrices; baselines
# stream_store_i32, store_i32), bias/<variant>/heads:32/L:<L>/threads:<n> (baselines stream_store_f32, store_f32) and
# scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n> (fused against sgemm_f32).
HEADLINE_KERNELS = (
    {"family": "index", "variant": "hf_bidirectional_i32", "baseline": "bandwidth",
     "what": "t5-encoder int32 bucket matrix at its largest size vs the streaming store of the same bytes"},
    {"family": "bias", "variant": "hf_bidirectional_f32", "baseline": "bandwidth",
     "what": "t5-encoder f32 bias matrix (32 heads) at its largest (DRAM) size vs the streaming store"},
    {"family": "scores", "variant": "fused_hf_unidirectional_causal_f32", "baseline": "sgemm",
     "what": "decoder scores with the bias fused (bias rows, then a beta = 1 sgemm) vs sgemm of the same shape"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-t5)"
SPAN = 300  # (a): r in [-SPAN, SPAN]
# (b): (num_buckets, max_distance) of schemes/t5/cases.hpp
CONFIGS = ((32, 128), (32, 256), (64, 128), (128, 1024), (8, 16), (16, 64), (64, 256), (128, 128), (34, 27), (96, 81),
           (19, 25), (31, 532))
# (c): BIAS_HEADS heads of a synthetic [num_buckets, BIAS_HEADS] table; key_length 2 BIAS_SIDE + 1, query_length
# BIAS_SIDE + 1, so that query row 0 sits at position BIAS_SIDE and sees r = -BIAS_SIDE .. BIAS_SIDE (past
# max_distance = 128 on both sides); every row of every head is checked.
BIAS_HEADS, BIAS_SIDE = 4, 149


def _not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


class T5Cli(CliData):
    def index(self, preset_args: tuple, length: int) -> dict | None:
        return self.run(("index", "t5", *preset_args, "--query-length", str(length), "--key-length", str(length)))

    def bias(self, preset: str, table_path: str, heads: int, query_length: int, key_length: int) -> tuple:
        """(spec, bias[h][i][j]) of `posenc bias t5 --preset P --heads H --table T --dtype f64 --format json`, its
        "spec" checked to name num_buckets, max_distance, bidirectional and regime; (None, None) (and `error` set)
        otherwise."""
        args = ("bias", "t5", "--preset", preset, "--heads", str(heads), "--table", table_path, "--key-length",
                str(key_length), "--query-length", str(query_length), "--dtype", "f64")
        d = self.run(args)
        if d is None:
            return None, None
        spec = d.get("spec")
        if not isinstance(spec, dict) or not all(_is_int(spec.get(k)) for k in ("num_buckets", "max_distance")) \
                or not isinstance(spec.get("bidirectional"), bool) or spec.get("regime") not in ("exact", "hf"):
            self.fail(args, "expected \"spec\" with num_buckets, max_distance, bidirectional and regime")
            return None, None
        bias = self.bias_tensor(args, d, heads, query_length, key_length)
        return (spec, bias) if bias is not None else (None, None)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


# ---- the definition, here in Python -------------------------------------------------------------------------

def f32(x: float) -> float:
    """x rounded to the nearest float32 (ties to even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def side(r: int, num_buckets: int, bidirectional: bool) -> tuple:
    """(base, n, a): the first bucket of r's side, the buckets of a side and the distance a
    (bidirectional: base = n = nb // 2 for r > 0, else 0, a = |r|; unidirectional: base 0, n = nb, a = max(-r, 0))."""
    if bidirectional:
        n = num_buckets // 2
        return (n if r > 0 else 0), n, abs(r)
    return 0, num_buckets, max(-r, 0)


def log_steps_hf(a: int, me: int, n: int, max_distance: int) -> int:
    """L(a) of HF's float32 steps: trunc(RN32(RN32(RN32(ln RN32(a / me)) / RN32(ln(md / me))) · RN32(n − me))).
    Each step is a float32 operation done in double and rounded once (correctly rounded for / and ·; for the log,
    unless ln x in double lies within its error of a float32 tie: the tests compare the resulting thresholds with
    the CLI's, whose log is correctly rounded, for every configuration of figure (b))."""
    x = f32(f32(a) / f32(me))
    y = f32(f32(math.log(x)) / f32(math.log(max_distance / me)))
    return math.trunc(f32(y * f32(n - me)))


def log_steps_exact(a: int, me: int, n: int, max_distance: int) -> int:
    """L(a) of the real numbers, floor(ln(a/me) / ln(md/me) (n − me)), in integers: the largest t <= n − me with
    (a/me)^(n−me) >= (md/me)^t, i.e. a^(n−me) me^t >= me^(n−me) md^t (capped at n − me: min(me + L, n − 1) needs
    no more)."""
    k = n - me
    lhs = a ** k
    t = 0
    while t < k and lhs * me ** (t + 1) >= me ** k * max_distance ** (t + 1):
        t += 1
    return t


def bucket(r: int, num_buckets: int, max_distance: int, bidirectional: bool, regime: str = "hf") -> int:
    """b(r) of CONVENTIONS.md §2.7 / t5_spec.hpp for the relative position r = j − q_i (key minus query)."""
    base, n, a = side(r, num_buckets, bidirectional)
    me = n // 2
    if a < me:
        return base + a
    steps = log_steps_hf if regime == "hf" else log_steps_exact
    return base + min(me + steps(a, me, n, max_distance), n - 1)


def thresholds(num_buckets: int, max_distance: int, bidirectional: bool, regime: str = "hf") -> list:
    """The CLI's "thresholds": for t = 1 .. n − 1 − me, the first distance a (on the side r <= 0) whose bucket is at
    least me + t, from bucket(); a bucket that no distance reaches repeats the next one's first distance."""
    _, n, _ = side(0, num_buckets, bidirectional)
    me, out = n // 2, []
    for a in range(me, max_distance + 1):
        b = bucket(-a, num_buckets, max_distance, bidirectional, regime)
        while len(out) < n - 1 - me and b >= me + len(out) + 1:
            out.append(a)
    return out


def synthetic_table(num_buckets: int, heads: int) -> list:
    """table[b][h] = RN32(cos(π (h + ½)(b + ½) / num_buckets)): the DCT-IV basis vectors, one per head — smooth in
    the bucket, head 0 strictly decreasing (so a bias value names its bucket), deterministic."""
    return [[f32(math.cos(math.pi * (h + 0.5) * (b + 0.5) / num_buckets)) for h in range(heads)]
            for b in range(num_buckets)]


def write_npy_f32(path: str, table: list) -> None:
    """`table` (a list of equal rows) as a little-endian float32 .npy, NumPy format 1.0."""
    write_npy(path, table, "<f4")

def bias_mismatches(bias: list, table: list, spec: dict, query_length: int, key_length: int) -> tuple:
    """(values checked, [(h, i, j, got, want)]) where bias[h][i][j] differs from table[b(j − q_i)][h] (q_i =
    key_length − query_length + i; b from the JSON's own spec), compared bit for bit."""
    nb, mdist, bi, regime = spec["num_buckets"], spec["max_distance"], spec["bidirectional"], spec["regime"]
    cache, bad, count = {}, [], 0
    for h, rows in enumerate(bias):
        for i, row in enumerate(rows):
            q = key_length - query_length + i
            for j, v in enumerate(row):
                r = j - q
                if r not in cache:
                    cache[r] = bucket(r, nb, mdist, bi, regime)
                count += 1
                if v != table[cache[r]][h]:
                    bad.append((h, i, j, v, table[cache[r]][h]))
    return count, bad


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def buckets_by_r(d: dict, length: int) -> list:
    """[(r, bucket)] for r in [-(length - 1), length - 1] from a square bucket matrix: row 0 (query at 0) gives r >= 0,
    the last row (query at length - 1) r <= 0."""
    rows = d["buckets"]
    neg = [(j - (length - 1), rows[length - 1][j]) for j in range(length - 1)]
    return neg + [(j, rows[0][j]) for j in range(length)]


def _bucket_curves(ctx, src: T5Cli) -> tuple:
    name = "fig-t5-buckets"
    series, notes = [], []
    for preset, style in (("t5-encoder", "lines lw 2"), ("t5-decoder", "lines lw 2 dt 2")):
        d = src.index(("--preset", preset), SPAN + 1)
        if d is None:
            return _not_drawn(name, src.error), ""
        pts = buckets_by_r(d, SPAN + 1)
        series.append(Series(preset, pts, style))
        used = sorted({b for _, b in pts})
        notes.append(f"{preset}: buckets used {md.num(len(used))} of {md.num(d['spec']['num_buckets'])}"
                     + (f", bucket {d['spec']['num_buckets'] // 2} never" if d["spec"]["bidirectional"] else "")
                     + f"; thresholds {d['thresholds']}")
    plot = Plot(name=name, title="T5: bucket of the relative position r = j - i (HF float32 buckets)",
                xlabel="relative position r = key - query", ylabel="bucket", series=series, key="top left")
    cap = ("**(a) The bucket of every relative position.** T5 (32 buckets, max_distance 128) gives exact buckets "
           "to distances below max_exact (8 for the encoder, whose 16 buckets per side split keys before (buckets "
           "0–15) and after (17–31) the query; 16 for the decoder, which sends every later key to bucket 0), then "
           "log-spaced ones up to max_distance, and one last bucket beyond. " + "; ".join(notes) +
           f". Data: `posenc index t5 --preset t5-encoder|t5-decoder --query-length {SPAN + 1} --key-length "
           f"{SPAN + 1} --format json` (row 0 and the last row). See {CLAIMS_LINK} (T5-BUCKET-1/2).")
    return ctx.renderer.image(plot, "T5 buckets against the relative position"), cap


def _differences(ctx, src: T5Cli) -> tuple:
    name = "table-t5-exact-vs-float32"
    rows = []
    for nb, mdist in CONFIGS:
        for bi in ("true", "false"):
            th = {}
            for regime in ("exact", "hf"):
                d = src.index(("--bidirectional=" + bi, "--num-buckets", str(nb), "--max-distance", str(mdist),
                               "--regime", regime), 2)
                if d is None:
                    return _not_drawn(name, src.error, "table"), ""
                th[regime] = d["thresholds"]
                me = d["max_exact"]
            diff = [f"bucket {me + t + 1}: a ≥ {a} (exact) vs a ≥ {b} (HF)"
                    for t, (a, b) in enumerate(zip(th["exact"], th["hf"])) if a != b]
            rows.append([f"({nb}, {mdist})", "bidirectional" if bi == "true" else "unidirectional",
                         md.num(len(th["exact"])), md.cell("; ".join(diff) if diff else "none")])
    table = md.table(["(num_buckets, max_distance)", "direction", "log buckets", "where HF's float32 buckets begin "
                      "elsewhere than the exact ones"], rows, ["l", "l", "r", "l"])
    cap = ("**(b) Exact vs HF float32 buckets.** For each configuration, the log-spaced buckets whose first distance "
           "a = |r| differs between the exact regime (the floor of the real ln(a/me) / ln(md/me) (n − me)) and HF's "
           "float32 steps (a float32 log, division and product, then truncation): at those distances a model trained "
           "with HF's arithmetic and a re-implementation with exact (or float64) logs put the key in different "
           "buckets. Where the real value is an exact integer (a = 16, 32, 64 for (32, 128)) both agree. Data: "
           "`posenc index t5 ... --format json` (its thresholds). See " + CLAIMS_LINK + " (T5-BUCKET-3).")
    return table, cap


def _bias_distance(ctx, src: T5Cli) -> tuple:
    name = "fig-t5-bias-distance"
    if src.error:
        return _not_drawn(name, src.error), ""
    lk, lq, s = 2 * BIAS_SIDE + 1, BIAS_SIDE + 1, BIAS_SIDE
    presets = (("t5-encoder", True), ("t5-decoder", False))
    # The preset's num_buckets (the table's rows), from the index call of (a) (cached).
    d = src.index(("--preset", presets[0][0]), SPAN + 1)
    if d is None:
        return _not_drawn(name, src.error), ""
    nb = (d.get("spec") or {}).get("num_buckets")
    if not _is_int(nb) or nb < 2:
        src.fail(("index", "t5", "--preset", presets[0][0]), "expected \"spec\" with num_buckets")
        return _not_drawn(name, src.error), ""
    table = synthetic_table(nb, BIAS_HEADS)
    got = {}
    with tempfile.TemporaryDirectory(prefix="posenc-report-t5.") as tmp:
        path = os.path.join(tmp, "synthetic_bias_table.npy")
        write_npy_f32(path, table)
        for preset, bi in presets:
            spec, bias = src.bias(preset, path, BIAS_HEADS, lq, lk)
            if bias is None:
                return _not_drawn(name, src.error), ""
            if spec["bidirectional"] != bi or spec["num_buckets"] != nb:
                src.fail(("bias", "t5", "--preset", preset), f"expected bidirectional {str(bi).lower()} and "
                         f"{nb} buckets, got {spec}")
                return _not_drawn(name, src.error), ""
            got[preset] = (spec, bias)
    checked, bad, facts, images = 0, [], [], []
    for preset, bi in presets:
        spec, bias = got[preset]
        count, wrong = bias_mismatches(bias, table, spec, lq, lk)
        checked += count
        bad += [(preset, *w) for w in wrong]
        mdist, regime = spec["max_distance"], spec["regime"]
        _, n, _ = side(0, nb, bi)
        me = n // 2
        row = {h: {j - s: bias[h][0][j] for j in range(lk)} for h in range(BIAS_HEADS)}   # query row 0, at s
        flat = all(len({v for r, v in row[h].items() if r >= mdist}) <= 1 and
                   len({v for r, v in row[h].items() if r <= -mdist}) <= 1 for h in range(BIAS_HEADS))
        exact_steps = len({row[0][r] for r in range(-me + 1, 1)}) == me and \
            (not bi or len({row[0][r] for r in range(1, me)}) == me - 1)
        past = len({row[0][r] for r in range(-s, 0)})
        future = len({row[0][r] for r in range(1, s + 1)})
        collapsed = all(row[h][r] == table[0][h] for h in range(BIAS_HEADS) for r in range(0, s + 1))
        differ = sum(1 for r in range(-s, s + 1) if bucket(r, nb, mdist, bi, "exact") != bucket(r, nb, mdist, bi,
                                                                                             "hf"))
        facts.append(f"{preset} ({'bidirectional' if bi else 'unidirectional'}, {nb} buckets, max_distance "
                     f"{mdist}, regime {regime}): head 0 takes {past} levels for r < 0 and {future} for r > 0; "
                     f"a level of its own at every −{me} < r ≤ 0" + (f" and 0 < r < {me}" if bi else "") +
                     f" (max_exact = {me}): {_yes(exact_steps)}; log buckets from "
                     f"|r| = {', '.join(map(str, thresholds(nb, mdist, bi, regime)))}; flat for |r| ≥ {mdist} in "
                     f"every head: {_yes(flat)}"
                     + ("" if bi else f"; every r ≥ 0 reads bucket 0 (table[0][h]) in every head: {_yes(collapsed)}")
                     + f"; the exact regime's buckets (computed here) differ from HF's at {differ} of these "
                     f"{2 * s + 1} distances")
        series = [Series(f"head {h}", sorted(row[h].items()), "histeps lw 2", colour=COLOURS[h % len(COLOURS)])
                  for h in range(BIAS_HEADS)]
        extra = [f"set arrow from {r}, graph 0 to {r}, graph 1 nohead dt 3 lc rgb '#888888'"
                 for r in ((-mdist, mdist) if bi else (-mdist,))]
        extra.append(f"set label 'max_distance' at {-mdist + 2}, graph 0.05 left noenhanced textcolor rgb '#555555'")
        plot = Plot(name=name if bi else f"{name}-decoder",
                    title=f"T5 {preset} ({'bidirectional' if bi else 'unidirectional'}): bias of heads "
                          f"0-{BIAS_HEADS - 1} against r = j - i (synthetic table, HF float32 buckets)",
                    xlabel="relative position r = key - query", ylabel="bias table[bucket(r)][h]", series=series,
                    xrange=(-s, s), yrange=(-1.1, 1.1), extra=extra, key="below left horizontal", size=(800, 420))
        images.append(ctx.renderer.image(plot, f"T5 bias per head against the relative position, {preset}"))
    verdict = (f"every one of the {md.num(checked)} values equals it bit for bit: yes" if not bad else
               f"**{md.num(len(bad))} of the {md.num(checked)} values differ** (first: {bad[0][0]}, head "
               f"{bad[0][1]}, row {bad[0][2]}, key {bad[0][3]}: {bad[0][4]!r} vs {bad[0][5]!r})")
    cap = ("**(c) Bias against distance, per head.** bias_h(i, j) = table[b(j − q_i)][h] of query row 0 against "
           f"r = j − q_0 in [−{s}, {s}] for heads 0–{BIAS_HEADS - 1}, encoder (t5-encoder, top) and decoder "
           "(t5-decoder, bottom), one colour per head; dotted lines at ±max_distance. T5's table is trained and "
           "posenc ships none, so this one is **synthetic**, the same for both presets: table[b][h] = "
           f"RN32(cos(π (h + ½)(b + ½) / {nb})) (the DCT-IV basis vectors: smooth in the bucket b, head 0 strictly "
           "decreasing, so its value names the bucket), written as a float32 .npy of shape "
           f"[{nb}, {BIAS_HEADS}]. The curves are staircases: one value per distance near the query (exact buckets), "
           "then steps that widen with the distance (log buckets), then one flat value beyond max_distance; the "
           "encoder reads different halves of the table before and after the query, hence the jump at r = 0 → 1, "
           "while the decoder sends every later key to bucket 0 (the flat right half of the bottom plot). From "
           "the CLI's numbers: " + "; ".join(facts) + ". Checked here: every bias value of every head and every "
           f"one of the {lq} query rows (key_length {lk}, the queries its last {lq} keys, q_i = {lk - lq} + i), in "
           "both presets, against table[b(j − q_i)][h] with b computed here from the definition (HF's float32 "
           "steps: float32 a / max_exact, log, division and product, then truncation; spec/include/posenc/"
           "t5_spec.hpp), tolerance 0 (the bias is a table entry, no arithmetic; f64 output of a float32 table): "
           + verdict + ". Data: `posenc bias t5 --preset t5-encoder|t5-decoder --heads "
           f"{BIAS_HEADS} --table synthetic.npy --key-length {lk} --query-length {lq} --dtype f64 --format json`. "
           f"See {CLAIMS_LINK} (T5-BUCKET-1/2).")
    return "\n\n".join(images), cap


def figures(ctx) -> list:
    src = T5Cli(ctx.cli)
    out = [_bucket_curves(ctx, src), _differences(ctx, src), _bias_distance(ctx, src)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc index t5`, `posenc bias t5` of a synthetic "
                             f"table, `--format json`; {src.calls} invocations)" if src.error is None
                             else f"not drawn: {md.cell(src.error)}"))
    return out
