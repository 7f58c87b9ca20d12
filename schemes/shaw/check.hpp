// schemes/shaw/check.hpp — `posenc check shaw`: a user's relative index matrix [query_length][key_length] (the
// queries the last keys) held to clip(d, -k, k) + k from the oracle, entry by entry (row shaw.check.index.bitwise).
// No test framework: the CLI links it (through posenc_verify) and the properties test it (SHAW-CHECK-*).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

#include "posenc/shaw_spec.hpp"
#include "verify/check_report.hpp"
#include "verify/identify.hpp"

namespace posenc::verify::shaw {

struct IndexInput {
  std::span<const double> values;  // the user's entries (integers held in doubles)
  std::size_t query_length = 0, key_length = 0;
  nlohmann::ordered_json describe;  // file, shape, ... (copied into the report)
};

// Every entry against the oracle's index; the report's positions are |j - q_i|. Throws posenc::Error naming
// "query_length" / "key_length" (check_shaw_lengths) or "values" (not Lq * Lk of them).
CheckReport check_index(const ShawSpec&, const IndexInput&);

// ---- identify: which convention an index matrix follows ----------------------------------------------------

// Candidates: every preset with either sign, with and without clipping, at the preset's k and at the k the matrix
// shows (its entry at distance 0); ranked by posenc's index, the best checked (verify/identify.hpp). Candidates whose
// k the geometry exceeds without clipping (BERT refuses them) are left out.
using Identification = verify::Identification<ShawSpec, int>;
Identification identify_index(const IndexInput&);

}  // namespace posenc::verify::shaw
