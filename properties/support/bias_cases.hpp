// properties/support/bias_cases.hpp — what the additive-bias schemes' claims share: the RapidCheck generator of bias
// geometries (Lq <= Lk, sometimes 1: a decoder step; a key mask sometimes, left padding or holes; causal or none),
// the q / k operands of the fused-scores claims, and the walk over a bias matrix's entries in every store path.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "posenc/bias.hpp"
#include "posenc/options.hpp"
#include "support/bias_measure.hpp"
#include "support/claims.hpp"

namespace posenc::test {

// A generated geometry; the case owns its key mask (RapidCheck keeps generated values while it shrinks).
struct GeometryCase {
  std::size_t query_length = 1, key_length = 1;
  BiasMask mask = BiasMask::none;
  std::vector<std::uint8_t> key_mask;
  BiasGeometry view() const { return {query_length, key_length, key_mask, mask}; }
};

// Up to max_len keys; a third of the cases take a key length from `hard_lengths` (the fast path's seams).
inline rc::Gen<GeometryCase> geometry_gen(std::size_t max_len, std::span<const std::size_t> hard_lengths) {
  const std::vector<std::size_t> hard(hard_lengths.begin(), hard_lengths.end());
  return rc::gen::exec([max_len, hard] {
    GeometryCase g;
    const int kind = *rc::gen::inRange(0, 3);
    g.key_length = kind == 0 ? *rc::gen::elementOf(hard) : *rc::gen::inRange<std::size_t>(1, max_len + 1);
    g.key_length = std::min(g.key_length, max_len);
    g.query_length = *rc::gen::arbitrary<bool>() ? 1 : *rc::gen::inRange<std::size_t>(1, g.key_length + 1);
    g.mask = *rc::gen::element(BiasMask::none, BiasMask::causal);
    const int mk = *rc::gen::inRange(0, 3);
    if (mk == 1) {  // left padding
      const std::size_t pad = *rc::gen::inRange<std::size_t>(0, g.key_length);
      g.key_mask.assign(g.key_length, 1);
      std::fill(g.key_mask.begin(), g.key_mask.begin() + static_cast<std::ptrdiff_t>(pad), 0);
    } else if (mk == 2) {  // any pattern
      g.key_mask = *rc::gen::container<std::vector<std::uint8_t>>(g.key_length, rc::gen::inRange<std::uint8_t>(0, 2));
    }
    return g;
  });
}

// The operands of a fused-scores case: q [heads, Lq, d] and k [heads, Lk, d] (float32 numbers held in doubles) and
// the scale.
struct ScoreOperands {
  std::size_t d = 1;
  std::vector<double> q{}, k{};
  double scale = 1.0;
};

// A generated case of g's shape: d in [1, 40), entries m / 250 with |m| <= 1000, scale 1/sqrt(d).
inline ScoreOperands score_operands_gen(std::size_t heads, const BiasGeometry& g) {
  ScoreOperands c{.d = *rc::gen::inRange<std::size_t>(1, 40)};
  auto values = [](std::size_t n) {
    std::vector<double> v(n);
    for (auto& x : v) x = static_cast<float>(*rc::gen::inRange(-1000, 1001) / 250.0);
    return v;
  };
  c.q = values(heads * g.query_length * c.d);
  c.k = values(heads * g.key_length * c.d);
  c.scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  return c;
}

// The enumerated cases across the gemm's 256-row blocks: one head, d = 16, a causal L x L geometry and a decoder step
// (1 x L); entries the float32 numbers of sin(0.37 n) (q) and cos(0.11 n) (k), scale 1/4.
inline std::vector<std::pair<BiasGeometry, ScoreOperands>> causal_block_score_cases(std::size_t L) {
  std::vector<std::pair<BiasGeometry, ScoreOperands>> out;
  for (std::size_t lq : {L, std::size_t{1}}) {
    ScoreOperands c{.d = 16, .q = std::vector<double>(lq * 16), .k = std::vector<double>(L * 16), .scale = 0.25};
    for (std::size_t n = 0; n < c.q.size(); ++n) c.q[n] = static_cast<float>(std::sin(0.37 * static_cast<double>(n)));
    for (std::size_t n = 0; n < c.k.size(); ++n) c.k[n] = static_cast<float>(std::cos(0.11 * static_cast<double>(n)));
    out.push_back({BiasGeometry{.query_length = lq, .key_length = L, .mask = BiasMask::causal}, std::move(c)});
  }
  return out;
}

// The plan's bias matrix of `g` (n entries, `heads` heads) in f32 and f64, for 1 and 2 threads with streaming stores
// off and on (each call one case of the claim): masked entries must be -inf in both types, and
// entry(h, i, j, b32, b64, label) is called for every visible one, label() naming the threads and the store path.
template <class Plan, class Entry>
void for_each_stored_bias(const Plan& plan, std::size_t heads, const BiasGeometry& g, std::size_t n,
                          const Claim& claim, Entry entry) {
  const std::size_t Lq = g.query_length, Lk = g.key_length;
  for (int threads : {1, 2})
    for (bool stream : {false, true}) {
      const TableOptions o{.threads = threads, .streaming_stores = stream};
      std::vector<float> b32(n);
      std::vector<double> b64(n);
      plan.bias(g, std::span<float>(b32), o);
      plan.bias(g, std::span<double>(b64), o);
      count_case(claim);
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t i = 0; i < Lq; ++i)
          for (std::size_t j = 0; j < Lk; ++j) {
            const std::size_t at = (h * Lq + i) * Lk + j;
            if (masked(g, i, j)) {
              RC_ASSERT(b32[at] == -std::numeric_limits<float>::infinity());
              RC_ASSERT(b64[at] == -std::numeric_limits<double>::infinity());
              continue;
            }
            entry(h, i, j, static_cast<double>(b32[at]), b64[at], [=] {
              return " threads=" + std::to_string(threads) + " stream=" + std::to_string(stream) +
                     " h=" + std::to_string(h) + " i=" + std::to_string(i) + " j=" + std::to_string(j);
            });
          }
    }
}

}  // namespace posenc::test
