// schemes/learned/check.hpp — `posenc check learned`: a user's position ids (what their port fed to the
// embedding) against the id map of the spec for the same tokens / attention mask, id by id, bitwise
// (verify/check_report.hpp). No test framework: the CLI links it (through posenc_verify) and the properties test
// it (LEARNED-CHECK-1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "posenc/learned.hpp"
#include "verify/check_report.hpp"

namespace posenc::verify::learned {

// A batch of sequences: ids[b][t] the user's position ids (exact integers held in double), with the tokens
// ([batch][length], make_positions) or the attention masks ([batch][past + length], cumsum_mask) posenc maps.
struct IdsInput {
  std::span<const double> ids;
  std::size_t batch = 1, length = 0;
  std::int64_t past = 0;
  std::vector<std::int64_t> tokens;         // empty, or batch * length
  std::vector<std::uint8_t> attention_mask;  // empty, or batch * (past + length)
  nlohmann::ordered_json describe;           // file, shape, ... (copied into the report)
};

// Every id against posenc's map (row learned.check.ids: bitwise); columns of the report are the batch rows, bands
// the token index t. Throws posenc::Error naming "ids", "tokens" or "attention_mask" when the input disagrees with
// the spec's map.
CheckReport check_ids(const LearnedSpec&, const IdsInput&);

}  // namespace posenc::verify::learned
