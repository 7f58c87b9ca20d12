// reference/src/score_checks.hpp — the argument checks every bias oracle's score() shares (ALiBi, KERPLE, FIRE):
// q and k finite vectors of equal nonzero length, a finite scale. Errors name the parameter, as posenc::Error.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "posenc/error.hpp"

namespace posenc::reference {

inline void check_score_vectors(const char* where, std::span<const double> q, std::span<const double> k, double scale) {
  if (q.empty()) throw Error(where, "q", "an empty vector", "a vector of at least one finite value", "is empty");
  if (k.size() != q.size())
    throw Error(where, "k", "a vector of " + std::to_string(k.size()) + " values",
                "a vector of q's length, " + std::to_string(q.size()), "has the wrong length");
  for (std::size_t c = 0; c < q.size(); ++c) {
    if (!std::isfinite(q[c]))
      throw Error(where, "q", format_real(q[c]) + " in channel " + std::to_string(c), "finite numbers",
                  "is not finite");
    if (!std::isfinite(k[c]))
      throw Error(where, "k", format_real(k[c]) + " in channel " + std::to_string(c), "finite numbers",
                  "is not finite");
  }
  if (!std::isfinite(scale)) throw Error(where, "scale", format_real(scale), "a finite number", "is not finite");
}

// The relative-score oracles' key mask (Transformer-XL, XLNet): empty (every key real) or one 0/1 entry per key.
inline void check_key_mask(const char* where, std::span<const std::uint8_t> key_mask, std::size_t key_length) {
  if (!key_mask.empty() && key_mask.size() != key_length)
    throw Error(where, "key_mask", "a mask of " + std::to_string(key_mask.size()) + " entries",
                "empty (every key real) or key_length = " + std::to_string(key_length) + " entries");
  for (std::size_t j = 0; j < key_mask.size(); ++j)
    if (key_mask[j] > 1)
      throw Error(where, "key_mask", std::to_string(key_mask[j]) + " at key " + std::to_string(j),
                  "0 (padding) or 1 (a real key)");
}

// The position of query row i when the queries are the last query_length of key_length positions.
inline std::int64_t query_position(std::size_t i, std::size_t query_length, std::size_t key_length) {
  return static_cast<std::int64_t>(key_length) - static_cast<std::int64_t>(query_length) +
         static_cast<std::int64_t>(i);
}

}  // namespace posenc::reference
