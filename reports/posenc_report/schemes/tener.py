"""Report module of TENER's relative attention (Yan et al. 2019; fastnlp/TENER relative_transformer.py): its speed
headline and the rows of the signed sinusoid table the query term (_shift: t = j - i) and the key term
(_transpose_shift: t = i - j) of each score entry read. The index matrices come from the posenc CLI and are checked
here against the definition (spec/include/posenc/tener_spec.hpp: rows L + j - i and L + i - j)."""
from __future__ import annotations

from ..relative_figures import index_figure

SCHEME = "tener"

# benchmarks/tener_bench.cpp (benchmarks/relative_bench.hpp): table/<variant>/L:<rows>/d:1024/threads:<n> and
# scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n> (blas_f32 vs sgemm_f32: three gemms against one;
# direct_f32 at L 512).
HEADLINE_KERNELS = (
    {"family": "table", "variant": "exact_f32", "baseline": "bandwidth",
     "what": "exact f32 table of a call at its largest size vs the streaming store of the same bytes"},
    {"family": "scores", "variant": "blas_f32", "baseline": "sgemm",
     "what": "TENER scores (content, _shift of the query term, _transpose_shift of the key term) vs sgemm of q k^T "
             "alone, same shape (sgemm time ÷ time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-tener)"
L = 5


def figures(ctx) -> list:
    out = []
    for key in (False, True):
        out.append(index_figure(
            ctx, SCHEME, ("--key",) if key else (), L, L,
            (lambda i, j: L + i - j) if key else (lambda i, j: L + j - i),
            (f"({'b' if key else 'a'}) The row of the table (t = c - L, L = {L}) the "
             + ("key term k_j . R(i - j) of each entry reads (_transpose_shift): L + i - j."
                if key else "query term (q_i + r_w_bias) . R(j - i) of each entry reads (_shift): L + j - i.")
             + " Every entry is defined; both signs of the distance occur, which is what lets TENER tell a key "
               "before the query from one after it."),
            CLAIMS_LINK + " (TENER-SHIFT-1, TENER-DIR-1)"))
    return out
