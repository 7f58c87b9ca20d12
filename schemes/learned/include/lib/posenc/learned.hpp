// posenc/learned.hpp — learned absolute positions: position ids from tokens / attention mask (the id maps of
// BERT/GPT-2, RoBERTa/fairseq, OPT) and the table rows at those ids. Definition: posenc/learned_spec.hpp.
//
// Plans. LearnedPlan plan(spec, table) validates both and keeps the table. Immutable, safe to share between
// threads; copies share the data.
//
// Ids. One sequence of `length` tokens after `past` cached ones; what each map reads (LearnedInput):
//   arange          length only (tokens, if given, must have `length` entries and are not read)
//   make_positions  tokens (length entries): token ids compared with padding_idx
//   cumsum_mask     attention_mask over the past + length tokens (entries 0 / 1)
// Every id is an exact integer; position_ids() does not look at the table (an id may lie outside it); rows() and
// lookup() refuse an id outside [0, rows) with an Error naming "position id" (the token, the id and the table's
// rows), before writing anything.
//
// Rows. rows(ids, out) writes table[id_t] for each t: out[t * dim + c] = table[id_t][c], bit for bit in double;
// float output rounds each value once (exact for tables stored in f16 / bf16 / f32). Every row is the same in
// every call (claim LEARNED-ROWS-1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/learned_spec.hpp"

namespace posenc {

struct LearnedInput {
  std::size_t length = 0;                            // L: tokens in this call
  std::int64_t past = 0;                             // tokens before them (a KV cache), 0 <= past < 2^40
  std::span<const std::int64_t> tokens = {};         // make_positions: L token ids
  std::span<const std::uint8_t> attention_mask = {}; // cumsum_mask: past + L entries of 0 / 1
};

// The position ids of the input under the spec's map (no table needed). Throws Error naming "length", "past",
// "tokens" or "attention_mask" when the input does not fit the map, "id" when an id would reach 2^40.
std::vector<std::int64_t> position_ids(const LearnedSpec&, const LearnedInput&);
// The same ids written into `out` (exactly `length` entries) without allocating: for a caller that reuses its buffer
// (a fresh vector of 10^6 ids costs its page faults at every call). Throws what position_ids() throws, and Error
// naming "out" for another size, before writing anything (claim LEARNED-IDS-3).
void position_ids(const LearnedSpec&, const LearnedInput&, std::span<std::int64_t> out);

class LearnedPlan {
 public:
  LearnedPlan(const LearnedSpec& spec, const LearnedTable& table);
  const LearnedSpec& spec() const noexcept;
  const LearnedTable& table() const noexcept;

  std::vector<std::int64_t> position_ids(const LearnedInput&) const;
  void position_ids(const LearnedInput&, std::span<std::int64_t> out) const;

  // out = the rows at `ids` ([ids.size()][dim]). Throws Error naming "position id" or "out".
  void rows(std::span<const std::int64_t> ids, std::span<double> out) const;
  void rows(std::span<const std::int64_t> ids, std::span<float> out) const;

  // rows(position_ids(in), out).
  void lookup(const LearnedInput&, std::span<double> out) const;
  void lookup(const LearnedInput&, std::span<float> out) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline LearnedPlan make_plan(const LearnedSpec& spec, const LearnedTable& table) { return LearnedPlan(spec, table); }

}  // namespace posenc
