// reference/src/score_checks.hpp — the argument checks every bias oracle's score() shares (ALiBi, KERPLE, FIRE):
// q and k finite vectors of equal nonzero length, a finite scale. Errors name the parameter, as posenc::Error.
#pragma once

#include <cmath>
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

}  // namespace posenc::reference
