"""Report module of XLNet's relative attention (Yang et al. 2019; HF modeling_xlnet.py): its speed headline and the
rows of the sinusoid table each score entry reads in a bi and a uni call with memory (the rel_shift_bnij column),
uni's undefined region marked. The index matrices come from the posenc CLI and are checked here against the
definition (spec/include/posenc/xlnet_spec.hpp: c(i, j) = qlen - i + j; uni: j <= q_i only)."""
from __future__ import annotations

from ..relative_figures import index_figure

SCHEME = "xlnet"

# benchmarks/xlnet_bench.cpp (benchmarks/relative_bench.hpp): table/<variant>/L:<rows>/d:1024/threads:<n> and
# scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n> (a bi call: blas_f32 vs sgemm_f32; direct_f32 at L 512).
HEADLINE_KERNELS = (
    {"family": "table", "variant": "exact_f32", "baseline": "bandwidth",
     "what": "exact f32 table of a bi call at its largest size vs the streaming store of the same bytes"},
    {"family": "scores", "variant": "blas_f32", "baseline": "sgemm",
     "what": "XLNet bi scores (ac + rel_shift_bnij(bd)) vs sgemm of q k^T alone, same shape (sgemm time ÷ time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-xlnet)"
LQ, LK = 4, 7


def figures(ctx) -> list:
    out = []
    for attn in ("bi", "uni"):
        def want(i, j, attn=attn):
            qi = LK - LQ + i
            return LQ - i + j if attn == "bi" or j <= qi else None
        out.append(index_figure(
            ctx, SCHEME, ("--attn-type", attn), LQ, LK, want,
            f"({'a' if attn == 'bi' else 'b'}) attn_type {attn}: the row of the table (pos_seq klen .. "
            f"{'-qlen + 1' if attn == 'bi' else '0'}) each score entry reads, {LQ} queries after {LK - LQ} memory keys: "
            "c(i, j) = qlen - i + j. " + ("Every entry is defined (the first row, pos_seq = klen, is never read)."
                                          if attn == "bi" else
                                          "The marked entries (j > q_i) are rel_shift_bnij's junk (the next row's "
                                          "values); posenc's scores hold -inf there."),
            CLAIMS_LINK + " (XLNET-SHIFT-1, XLNET-INDEX-1)"))
    return out
