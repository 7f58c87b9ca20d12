"""Report module of T5's relative attention bias (Raffel et al. 2020): its speed headline, the bucket of every
relative position j − i for the encoder (bidirectional) and the decoder (unidirectional), where HF's float32
buckets (what T5 models were trained with) differ from the exact ones, and the bias of a few heads against the
distance j − i (a synthetic table: T5's is trained and posenc ships none).

Every number comes from figures-t5.json (schemes/t5/figures.cpp, run by posenc_figures); this module only draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure
from ..gnuplot import COLOURS, Plot, Series

SCHEME = "t5"

CLAIMS_LINK = "[claims](claims.md#scheme-t5)"


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


@figure("buckets", "fig-t5-buckets")
def _bucket_curves(ctx, fig: dict, name: str) -> tuple:
    span, series, notes = fig["span"], [], []
    for p, style in zip(fig["presets"], ("lines lw 2", "lines lw 2 dt 2")):
        series.append(Series(p["preset"], [tuple(x) for x in p["points"]], style))
        notes.append(f"{p['preset']}: buckets used {md.num(p['buckets_used'])} of {md.num(p['num_buckets'])}"
                     + (f", bucket {p['num_buckets'] // 2} never" if p["bidirectional"] else "")
                     + f"; thresholds {p['thresholds']}")
    plot = Plot(name=name, title="T5: bucket of the relative position r = j - i (HF float32 buckets)",
                xlabel="relative position r = key - query", ylabel="bucket", series=series, key="top left")
    cap = ("**(a) The bucket of every relative position.** T5 (32 buckets, max_distance 128) gives exact buckets "
           "to distances below max_exact (8 for the encoder, whose 16 buckets per side split keys before (buckets "
           "0–15) and after (17–31) the query; 16 for the decoder, which sends every later key to bucket 0), then "
           "log-spaced ones up to max_distance, and one last bucket beyond. " + "; ".join(notes) +
           f". Data: the buckets of r = −{span} .. {span} (T5Plan::bucket; `posenc index t5 --preset "
           f"t5-encoder|t5-decoder` gives the same matrix). See {CLAIMS_LINK} (T5-BUCKET-1/2).")
    return ctx.renderer.image(plot, "T5 buckets against the relative position"), cap


@figure("exact_vs_float32", "table-t5-exact-vs-float32", "table")
def _differences(ctx, fig: dict, name: str) -> tuple:
    rows = []
    for r in fig["rows"]:
        diff = [f"bucket {b}: a ≥ {a} (exact) vs a ≥ {h} (HF)" for b, a, h in r["differ"]]
        rows.append([f"({r['num_buckets']}, {r['max_distance']})",
                     "bidirectional" if r["bidirectional"] else "unidirectional",
                     md.num(r["log_buckets"]), md.cell("; ".join(diff) if diff else "none")])
    table = md.table(["(num_buckets, max_distance)", "direction", "log buckets", "where HF's float32 buckets begin "
                      "elsewhere than the exact ones"], rows, ["l", "l", "r", "l"])
    cap = ("**(b) Exact vs HF float32 buckets.** For each configuration, the log-spaced buckets whose first distance "
           "a = |r| differs between the exact regime (the floor of the real ln(a/me) / ln(md/me) (n − me)) and HF's "
           "float32 steps (a float32 log, division and product, then truncation): at those distances a model trained "
           "with HF's arithmetic and a re-implementation with exact (or float64) logs put the key in different "
           "buckets. Where the real value is an exact integer (a = 16, 32, 64 for (32, 128)) both agree. Data: "
           "`posenc index t5 ... --format json` (its thresholds). See " + CLAIMS_LINK + " (T5-BUCKET-3).")
    return table, cap


def _facts(p: dict, side: int) -> str:
    bi, me = p["bidirectional"], p["max_exact"]
    return (f"{p['preset']} ({'bidirectional' if bi else 'unidirectional'}, {p['num_buckets']} buckets, max_distance "
            f"{p['max_distance']}, regime {p['regime']}): head 0 takes {p['levels_past']} levels for r < 0 and "
            f"{p['levels_future']} for r > 0; a level of its own at every −{me} < r ≤ 0"
            + (f" and 0 < r < {me}" if bi else "") + f" (max_exact = {me}): {_yes(p['exact_steps'])}; log buckets "
            f"from |r| = {', '.join(map(str, p['thresholds']))}; flat for |r| ≥ {p['max_distance']} in every head: "
            f"{_yes(p['flat_beyond_max_distance'])}"
            + ("" if bi else f"; every r ≥ 0 reads bucket 0 (table[0][h]) in every head: "
                             f"{_yes(p['future_reads_bucket_0'])}")
            + f"; the exact regime's buckets differ from HF's at {p['exact_regime_differs_at']} of these "
            f"{2 * side + 1} distances")


@figure("bias_distance", "fig-t5-bias-distance")
def _bias_distance(ctx, fig: dict, name: str) -> tuple:
    s, heads, nb = fig["side"], fig["heads"], fig["num_buckets"]
    lk, lq = 2 * s + 1, s + 1
    images = []
    for p in fig["presets"]:
        bi, mdist = p["bidirectional"], p["max_distance"]
        series = [Series(f"head {h}", [tuple(x) for x in pts], "histeps lw 2", colour=COLOURS[h % len(COLOURS)])
                  for h, pts in enumerate(p["heads"])]
        extra = [f"set arrow from {r}, graph 0 to {r}, graph 1 nohead dt 3 lc rgb '#888888'"
                 for r in ((-mdist, mdist) if bi else (-mdist,))]
        extra.append(f"set label 'max_distance' at {-mdist + 2}, graph 0.05 left noenhanced textcolor rgb '#555555'")
        plot = Plot(name=name if bi else f"{name}-decoder",
                    title=f"T5 {p['preset']} ({'bidirectional' if bi else 'unidirectional'}): bias of heads "
                          f"0-{heads - 1} against r = j - i (synthetic table, HF float32 buckets)",
                    xlabel="relative position r = key - query", ylabel="bias table[bucket(r)][h]", series=series,
                    xrange=(-s, s), yrange=(-1.1, 1.1), extra=extra, key="below left horizontal", size=(800, 420))
        images.append(ctx.renderer.image(plot, f"T5 bias per head against the relative position, {p['preset']}"))
    cap = ("**(c) Bias against distance, per head.** bias_h(i, j) = table[b(j − q_i)][h] of query row 0 against "
           f"r = j − q_0 in [−{s}, {s}] for heads 0–{heads - 1}, encoder (t5-encoder, top) and decoder "
           "(t5-decoder, bottom), one colour per head; dotted lines at ±max_distance. T5's table is trained and "
           "posenc ships none, so this one is **synthetic**, the same for both presets: table[b][h] = "
           f"RN32(cos(π (h + ½)(b + ½) / {nb})) (the DCT-IV basis vectors: smooth in the bucket b, head 0 strictly "
           f"decreasing, so its value names the bucket), of shape [{nb}, {heads}]. The curves are staircases: one "
           "value per distance near the query (exact buckets), then steps that widen with the distance (log "
           "buckets), then one flat value beyond max_distance; the encoder reads different halves of the table "
           "before and after the query, hence the jump at r = 0 → 1, while the decoder sends every later key to "
           "bucket 0 (the flat right half of the bottom plot). From the figure data: "
           + "; ".join(_facts(p, s) for p in fig["presets"]) + ". That every bias value is table[b(j − q_i)][h] bit "
           "for bit is a claim (T5-BUCKET-1/2, held against the oracle). Data: T5Plan::bias of the synthetic table, "
           f"{heads} heads, key_length {lk}, query_length {lq}, f64 (`posenc bias t5 --preset t5-encoder|t5-decoder "
           f"--table synthetic.npy --dtype f64` gives the same values). See {CLAIMS_LINK} (T5-BUCKET-1/2).")
    return "\n\n".join(images), cap


def figures(ctx, data: FigureData) -> list:
    return [_bucket_curves(ctx, data), _differences(ctx, data), _bias_distance(ctx, data)]
