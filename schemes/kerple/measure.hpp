// schemes/kerple/measure.hpp — the KERPLE measuring harness: fast path vs the MPFR oracle, one emitted case per
// compared number under its budget row (support/harness.hpp). The properties and the accuracy sweep both use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "schemes/kerple/budget.hpp"
#include "posenc/kerple.hpp"
#include "support/bias_measure.hpp"
#include "support/harness.hpp"

namespace posenc::test::kerple {

using namespace posenc::verify::kerple;  // the budget keys, case table and checker of the scheme

// KerplePlan::bias_value_f32/f64 at distance d of every head vs the oracle: rows bias.exact.f32/f64 or
// bias.emulated.bitwise, and bias.emulated_vs_exact.ratio for the megatron regime.
void measure_value(const KerpleSpec&, const KerpleWeights&, std::int64_t d, const Sink&);

// The fast bias of the geometry (f32 and f64 outputs) at up to `max_rows` query rows of up to `max_heads` heads and
// up to `max_cols` keys per row (around the diagonal; everything when the geometry is that small) vs the oracle;
// masked entries must be -inf (bias.identity.bitwise).
void measure_bias(const KerpleSpec&, const KerpleWeights&, const BiasGeometry&, const Sink&, std::size_t max_heads = 4,
                  std::size_t max_rows = 6, std::size_t max_cols = 24);

// KerplePlan::scores (f32 and f64) for q [heads][Lq][d], k [heads][Lk][d] (float32 numbers held in doubles) vs
// scale <q, k> + the fast bias in MPFR: rows scores.f32 / scores.f64 (ratio), masked entries -inf.
void measure_scores(const KerpleSpec&, const KerpleWeights&, const BiasGeometry&, std::size_t head_dim,
                    std::span<const double> q, std::span<const double> k, double scale, const Sink&,
                    std::size_t max_rows = 0, std::size_t max_cols = 0);

std::string spec_label(const KerpleSpec&, const KerpleWeights&);

}  // namespace posenc::test::kerple
