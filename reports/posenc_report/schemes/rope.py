"""Report module of the rotary position embedding (rope): its speed headline. It draws no figures of its own yet
(the figures page shows the accuracy plots); add them here as figures(ctx) returns them (see schemes/__init__.py
and sinusoidal.py)."""
from __future__ import annotations

SCHEME = "rope"

# benchmarks/rope_bench.cpp: apply/<variant>/T:/heads:/head_dim:/threads: (in place; baseline rmw_f32, the
# read-modify-write of the same bytes) and cache/<variant>/T:/w:/threads: (baseline stream_store_f32).
HEADLINE_KERNELS = (
    {"family": "apply", "variant": "exact_halves_f32", "baseline": "rmw",
     "what": "exact half-split f32 rotation at its largest (DRAM) size vs read-modify-write of the same bytes"},
    {"family": "cache", "variant": "exact_pairs_f32", "baseline": "bandwidth",
     "what": "exact f32 cos/sin cache (pairs form) at its largest (DRAM) size vs the streaming store"},
)


def figures(ctx) -> list:
    return []
