"""Report module of T5's relative attention bias (Raffel et al. 2020): its speed headline, the bucket of every
relative position j − i for the encoder (bidirectional) and the decoder (unidirectional), and where HF's float32
buckets (what T5 models were trained with) differ from the exact ones.

Every number comes from the posenc CLI (`posenc index t5 --format json`: the bucket matrix and the first distance of
every bucket); the comparisons are made here. Without a CLI the figures are not drawn and the page says why."""
from __future__ import annotations

from .. import md
from ..cli_data import CliData
from ..gnuplot import Plot, Series

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
# (b): (num_buckets, max_distance) of properties/t5/cases.hpp
CONFIGS = ((32, 128), (32, 256), (64, 128), (128, 1024), (8, 16), (16, 64), (64, 256), (128, 128), (34, 27), (96, 81),
           (19, 25), (31, 532))


def _not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


class T5Cli(CliData):
    def index(self, preset_args: tuple, length: int) -> dict | None:
        return self.run(("index", "t5", *preset_args, "--query-length", str(length), "--key-length", str(length)))


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


def figures(ctx) -> list:
    src = T5Cli(ctx.cli)
    out = [_bucket_curves(ctx, src), _differences(ctx, src)]
    ctx.figure_notes.append(("figure data", f"the posenc CLI (`posenc index t5 --format json`; {src.calls} "
                             "invocations)" if src.error is None else f"not drawn: {md.cell(src.error)}"))
    return out
