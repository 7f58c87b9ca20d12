"""Report module of Transformer-XL's relative attention (Dai et al. 2019; kimiyoung/transformer-xl
mem_transformer.py): its speed headline and the rows of the sinusoid table each score entry of a call with memory
reads (the rel_shift column), with the upper-right region the code's _rel_shift fills with junk marked — posenc's
scores hold -inf there. The index matrix comes from the posenc CLI and is checked here against the definition
(spec/include/posenc/transformer_xl_spec.hpp: c(i, j) = klen - 1 - (q_i - j) for j <= q_i)."""
from __future__ import annotations

from ..relative_figures import index_figure

SCHEME = "transformer_xl"

# benchmarks/transformer_xl_bench.cpp (benchmarks/relative_bench.hpp): table/<variant>/L:<rows>/d:1024/threads:<n>
# (R of a call; exact_f32, emulated_f32 against stream_store and plainloop_f32) and scores/<variant>/heads:1/L:4096/
# head_dim:64/threads:<n> (blas_f32 against sgemm_f32, q k^T alone; direct_f32 at L 512).
HEADLINE_KERNELS = (
    {"family": "table", "variant": "exact_f32", "baseline": "bandwidth",
     "what": "exact f32 table R of a call at its largest size vs the streaming store of the same bytes"},
    {"family": "scores", "variant": "blas_f32", "baseline": "sgemm",
     "what": "Transformer-XL scores (AC + rel_shift(BD): a gemm per block of query rows against the table rows it "
             "reads, the shift as a copy, the content gemm) vs sgemm of q k^T alone, same shape (sgemm time ÷ time)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-transformer_xl)"
LQ, LK = 4, 7   # 3 memory keys


def figures(ctx) -> list:
    def want(i, j):
        qi = LK - LQ + i
        return LK - 1 - (qi - j) if j <= qi else None
    table, cap = index_figure(
        ctx, SCHEME, (), LQ, LK, want,
        f"(a) The row of R each score entry reads, {LQ} queries after {LK - LQ} memory keys: c(i, j) = klen - 1 - "
        "(q_i - j), the column _rel_shift moves to (i, j). The marked entries (j > q_i) are where _rel_shift leaves "
        "junk (a pad zero at j = q_i + 1, the next row's values beyond); posenc's scores hold -inf there.",
        CLAIMS_LINK + " (TXL-SHIFT-1, TXL-INDEX-1)")
    return [(table, cap)]
