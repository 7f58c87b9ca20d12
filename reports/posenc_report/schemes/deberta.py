"""Report module of DeBERTa-v2/v3's disentangled attention (He et al. 2021): its speed headline, the log bucket of
every relative position i − j for HF's unclamped buckets (every DeBERTa-v2/v3 checkpoint) and the 2023 original's
clamped ones, and where HF's float32 buckets differ from the exact ones.

Every number comes from the posenc CLI (`posenc index deberta --format json`: the relative-position matrix of a
column or a row); the comparisons are made here. Without a CLI the figures are not drawn and the page says why."""
from __future__ import annotations

from .. import md
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
# (b): (position_buckets, max_relative_positions) of properties/deberta/cases.hpp
CONFIGS = ((256, 512), (128, 512), (64, 256), (32, 64), (4, 8), (8, 16), (257, 1000), (3, 5), (2, 3), (512, 2048))


def _not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


class DebertaCli(CliData):
    def column(self, spec_args: tuple, length: int) -> dict | None:
        """Query positions 0..length-1 against key 0: rel = i >= 0."""
        return self.run(("index", "deberta", *spec_args, "--query-length", str(length), "--key-length", "1"))

    def row(self, spec_args: tuple, length: int) -> dict | None:
        """Query 0 against keys 0..length-1: rel = -j <= 0."""
        return self.run(("index", "deberta", *spec_args, "--query-length", "1", "--key-length", str(length)))


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
    cap = ("**(b) Exact vs HF float32 buckets.** For each configuration, the distances a = |rel| whose bucket differs "
           "between the exact regime (mid + the ceil of the real ln(a/mid) / ln((max − 1)/mid) (mid − 1)) and HF's "
           "float32 steps (a float32 division, two float32 logs, a quotient and a product, then ceil): at those "
           "distances a model trained with HF's arithmetic and a re-implementation with exact (or float64) logs use "
           "different relative embeddings. Where the real value is an exact integer (a = max − 1 gives mid − 1) both "
           "agree. Data: `posenc index deberta ... --regime exact|hf --key-length 1 --format json`. See "
           + CLAIMS_LINK + " (DEBERTA-BUCKET-3).")
    return table, cap


def figures(ctx) -> list:
    src = DebertaCli(ctx.cli)
    out = [_bucket_curves(ctx, src), _differences(ctx, src)]
    ctx.figure_notes.append(("figure data", f"the posenc CLI (`posenc index deberta --format json`; {src.calls} "
                             "invocations)" if src.error is None else f"not drawn: {md.cell(src.error)}"))
    return out
