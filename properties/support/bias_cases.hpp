// properties/support/bias_cases.hpp — the RapidCheck generator of bias geometries the additive-bias schemes' claims
// share: Lq <= Lk (sometimes 1: a decoder step), a key mask sometimes (left padding or holes), causal or none.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/bias.hpp"

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

}  // namespace posenc::test
