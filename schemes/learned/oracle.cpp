#include "posenc/reference/learned.hpp"

#include <algorithm>
#include <string>

#include "posenc/error.hpp"

namespace posenc::reference {
namespace {

constexpr const char* kLearnedWhere = "learned reference";
constexpr std::int64_t kMax = kLearnedMaxIndex;  // 2^40: lengths, past and ids lie below it

std::string str(std::size_t n) { return std::to_string(n); }

// ---- validation ----------------------------------------------------------------------------------------------

void check_learned_length(std::size_t length) {
  if (length < 1 || length >= static_cast<std::size_t>(kMax))
    throw Error(kLearnedWhere, "length", str(length), "a token count in [1, 2^40)");
}

void check_past(std::int64_t past) {
  if (past < 0 || past >= kMax)
    throw Error(kLearnedWhere, "past", std::to_string(past), "a count of tokens already seen in [0, 2^40)");
}

void check_tokens(IdMap map, std::span<const std::int64_t> tokens, std::size_t length) {
  if (map == IdMap::make_positions) {
    if (tokens.size() != length)
      throw Error(kLearnedWhere, "tokens", "a sequence of " + str(tokens.size()) + " token ids",
                  "exactly length = " + str(length) + " token ids (make_positions reads them)",
                  "has the wrong length");
    return;
  }
  if (!tokens.empty() && tokens.size() != length)
    throw Error(kLearnedWhere, "tokens", "a sequence of " + str(tokens.size()) + " token ids",
                "empty or length = " + str(length) + " token ids (unread by " + std::string(to_string(map)) + ")",
                "has the wrong length");
}

void check_mask(IdMap map, std::span<const std::uint8_t> mask, std::size_t length, std::int64_t past) {
  const std::size_t total = static_cast<std::size_t>(past) + length;  // < 2^41
  if (map == IdMap::cumsum_mask) {
    if (mask.size() != total)
      throw Error(kLearnedWhere, "attention_mask", "a mask of " + str(mask.size()) + " entries",
                  "exactly past + length = " + str(total) + " entries of 0 or 1 (cumsum_mask reads them)",
                  "has the wrong length");
  } else if (!mask.empty() && mask.size() != length && mask.size() != total) {
    throw Error(kLearnedWhere, "attention_mask", "a mask of " + str(mask.size()) + " entries",
                "empty, length = " + str(length) + " or past + length = " + str(total) +
                    " entries of 0 or 1 (unread by " + std::string(to_string(map)) + ")",
                "has the wrong length");
  }
  for (std::size_t k = 0; k < mask.size(); ++k)
    if (mask[k] > 1)
      throw Error(kLearnedWhere, "attention_mask", std::to_string(mask[k]) + " at entry " + str(k),
                  "entries 0 (padding) or 1 (a token)");
}

void check_id(std::int64_t id, std::size_t t) {
  if (id < 0 || id >= kMax)
    throw Error(kLearnedWhere, "id", std::to_string(id) + " at token " + str(t),
                "position ids in [0, 2^40) (never wrapped or clamped)");
}

// ---- the definition, transcribed (learned_spec.hpp) --------------------------------------------------------------
// Each map builds its vectors the way the reference code does (mask, cumulative sum, formula), in int64: every
// intermediate is below 2^42 (offset, past, padding_idx < 2^40, cumulative sums <= past + length < 2^41).

// HF BERT / GPT-2: arange(past, past + L) (+ offset).
std::vector<std::int64_t> arange_ids(std::int64_t offset, std::int64_t past, std::size_t length) {
  std::vector<std::int64_t> ids(length);
  for (std::size_t t = 0; t < length; ++t) ids[t] = offset + past + static_cast<std::int64_t>(t);
  return ids;
}

// HF RoBERTa create_position_ids_from_input_ids / fairseq make_positions:
//   mask = tokens != padding_idx;  incremental = (cumsum(mask) + past) * mask;  ids = incremental + padding_idx.
std::vector<std::int64_t> make_positions_ids(std::int64_t padding_idx, std::int64_t past,
                                             std::span<const std::int64_t> tokens) {
  const std::size_t n = tokens.size();
  std::vector<std::int64_t> mask(n), cumsum(n), ids(n);
  for (std::size_t t = 0; t < n; ++t) mask[t] = tokens[t] != padding_idx ? 1 : 0;
  std::int64_t running = 0;
  for (std::size_t t = 0; t < n; ++t) cumsum[t] = running += mask[t];
  for (std::size_t t = 0; t < n; ++t) ids[t] = (cumsum[t] + past) * mask[t] + padding_idx;
  return ids;
}

// HF OPT OPTLearnedPositionalEmbedding.forward:
//   p = cumsum(attention_mask);  p = p * attention_mask - 1;  p = p[past:];  ids = p + offset.
std::vector<std::int64_t> cumsum_mask_ids(std::int64_t offset, std::int64_t past, std::size_t length,
                                          std::span<const std::uint8_t> attention_mask) {
  const std::size_t total = attention_mask.size();  // past + length (checked)
  std::vector<std::int64_t> p(total);
  std::int64_t running = 0;
  for (std::size_t k = 0; k < total; ++k) p[k] = running += attention_mask[k];
  for (std::size_t k = 0; k < total; ++k) p[k] = p[k] * static_cast<std::int64_t>(attention_mask[k]) - 1;
  const std::size_t start = static_cast<std::size_t>(past);
  std::vector<std::int64_t> ids(length);
  for (std::size_t t = 0; t < length; ++t) ids[t] = p[start + t] + offset;
  return ids;
}

}  // namespace

std::vector<std::int64_t> learned_position_ids(const LearnedSpec& spec, std::size_t length, std::int64_t past,
                                               std::span<const std::int64_t> tokens,
                                               std::span<const std::uint8_t> attention_mask) {
  validate(spec);
  check_learned_length(length);
  check_past(past);
  check_tokens(spec.id_map, tokens, length);
  check_mask(spec.id_map, attention_mask, length, past);

  std::vector<std::int64_t> ids;
  switch (spec.id_map) {
    case IdMap::arange:
      ids = arange_ids(spec.offset, past, length);
      break;
    case IdMap::make_positions:
      ids = make_positions_ids(spec.padding_idx, past, tokens);
      break;
    case IdMap::cumsum_mask:
      ids = cumsum_mask_ids(spec.offset, past, length, attention_mask);
      break;
  }
  for (std::size_t t = 0; t < ids.size(); ++t) check_id(ids[t], t);
  return ids;
}

Real learned_row_value(const LearnedTable& table, std::int64_t id, std::size_t c, unsigned bits) {
  check_learned_table(table);
  if (id < 0 || static_cast<std::uint64_t>(id) >= table.rows)
    throw Error(kLearnedWhere, "id", std::to_string(id), "a row id in [0, rows = " + str(table.rows) + ")");
  if (c >= table.dim)
    throw Error(kLearnedWhere, "c", str(c), "a column in [0, dim = " + str(table.dim) + ")");
  check_bits(bits);
  // Row-major: table[id][c] = values[id * dim + c] (id < rows and rows * dim == values.size(): no overflow).
  const double v = table.values[static_cast<std::size_t>(id) * table.dim + c];
  return make_real(v, std::max(bits, 53u));  // exact: a double has 53 bits
}

}  // namespace posenc::reference
