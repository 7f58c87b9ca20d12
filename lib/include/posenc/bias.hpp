// posenc/bias.hpp — what every additive attention-bias scheme (ALiBi, KERPLE, ...) shares: the geometry of one
// call and the mask written with the bias.
//
// Geometry. key_length keys at positions 0..Lk-1; the query_length queries are the last Lq of them (query row i
// at position q_i = Lk - Lq + i; a decoder step with a cache has Lq = 1). key_mask (key_length entries, 1 = token,
// 0 = padding) may be empty (every key a token). mask = causal writes -inf where key j is not visible from query
// row i: j > q_i, or key_mask[j] == 0 when a key_mask is given (what an implementation adds to the scores in the
// end). Bias matrices are [heads][query_length][key_length], row-major.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "posenc/describe.hpp"

namespace posenc {

enum class BiasMask { none, causal };

template <>
struct EnumTraits<BiasMask> {
  static constexpr std::array<EnumValue<BiasMask>, 2> values{{
      {BiasMask::none, "none", "the bias only"},
      {BiasMask::causal, "causal", "-inf where the key is in the query's future (or padding, with a key mask)"},
  }};
};

struct BiasGeometry {
  std::size_t query_length = 1;
  std::size_t key_length = 1;
  std::span<const std::uint8_t> key_mask = {};  // empty, or key_length entries of 0 / 1
  BiasMask mask = BiasMask::none;
};

}  // namespace posenc
