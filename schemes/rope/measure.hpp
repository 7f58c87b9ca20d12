// schemes/rope/measure.hpp — the RoPE measuring harness: fast path vs the MPFR oracle, one emitted case per
// compared number under its budget row (support/harness.hpp). The properties and the accuracy sweep both use it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "posenc/rope.hpp"
#include "schemes/rope/budget.hpp"
#include "support/harness.hpp"

namespace posenc::test::rope {

using namespace posenc::verify::rope;  // the budget keys, case table and checker of the scheme

// rope_frequencies vs the oracle: exact theta_k (frequency.exact.f64) or the regime's float32 frequency
// (frequency.emulated.bitwise: the oracle's angle at p = 1; roformer: the float64 angle at p = 1,
// frequency.roformer.bitwise).
void measure_frequencies(const RopeSpec&, const Sink&);

// The fast cache (every form, f32 and f64 outputs) at `positions` vs the oracle's cos/sin of pairs `pairs`
// (empty: every pair): exact regime rows cache.exact.*; hf/ggml rows cache.emulated.bitwise (roformer:
// cache.roformer.bitwise) and cache.emulated_vs_exact.ratio (the regime's values against the exact mathematics).
void measure_cache(const RopeSpec&, std::span<const std::int64_t> positions, const std::vector<std::size_t>& pairs,
                   const Sink&);

// Rotation in place of tokens x head_dim values `x` (one head per token) at `positions`, f32 and f64 data (f32 only
// in the hf/ggml regimes, where the oracle replays float32 steps), forward or inverse, vs the oracle's rotate:
// rows apply.exact.f32/f64 (scaled by S = |x_i| + |x_j|), apply.emulated.f32.bitwise (roformer:
// apply.roformer.f32.bitwise), and apply.identity.bitwise
// for the pass-through channels.
void measure_apply(const RopeSpec&, std::span<const std::int64_t> positions, std::span<const double> x,
                   RopeDirection, const Sink&);

// S of channel c: |x_i| + |x_j| of the pair containing c (|x_c| for a pass-through channel).
double pair_scale(const RopeSpec&, std::span<const double> head, std::size_t channel);

std::string spec_label(const RopeSpec&);

}  // namespace posenc::test::rope
