// schemes/alibi/measure.hpp — the ALiBi measuring harness: fast path vs the MPFR oracle, one emitted case per
// compared number under its budget row (support/harness.hpp). The properties and the accuracy sweep both use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "schemes/alibi/budget.hpp"
#include "posenc/alibi.hpp"
#include "support/bias_measure.hpp"
#include "support/harness.hpp"

namespace posenc::test::alibi {

using namespace posenc::verify::alibi;  // the budget keys, case table and checker of the scheme

// AlibiPlan::slopes vs the oracle: exact m_h (slope.exact.f64) or the regime's float32 slope (slope.emulated).
void measure_slopes(const AlibiSpec&, const Sink&);

// The fast bias of the geometry (f32 and f64 outputs) at up to `max_rows` query rows of up to `max_heads` heads
// and up to `max_cols` keys per row (the first and last, the diagonal and its neighbours, evenly spread others;
// everything when the geometry is that small) vs the oracle: rows bias.exact.f32/f64 or bias.emulated.bitwise,
// bias.emulated_vs_exact.ratio for the emulated regimes, bias.identity.bitwise for masked entries (-inf).
void measure_bias(const AlibiSpec&, const BiasGeometry&, const Sink&, std::size_t max_heads = 4,
                  std::size_t max_rows = 6, std::size_t max_cols = 24);

// AlibiPlan::scores (f32 and f64) for q [heads][Lq][d], k [heads][Lk][d] (float32 numbers held in doubles) vs
// scale <q, k> + the fast bias in MPFR: rows scores.f32 / scores.f64 (ratio), masked entries -inf.
// max_rows / max_cols (0: every one) sample the query rows and keys as measure_bias does (around the diagonal).
void measure_scores(const AlibiSpec&, const BiasGeometry&, std::size_t head_dim, std::span<const double> q,
                    std::span<const double> k, double scale, const Sink&, std::size_t max_rows = 0,
                    std::size_t max_cols = 0);

std::string spec_label(const AlibiSpec&);

}  // namespace posenc::test::alibi
