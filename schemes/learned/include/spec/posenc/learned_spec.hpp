// posenc/learned_spec.hpp — the one description of learned absolute position embeddings (BERT, GPT-2, RoBERTa,
// fairseq, OPT): a trained table [rows][dim] and the map from a token sequence to the row ids the model looks up.
//
// A LearnedSpec is the id map (how position ids are made); the table is a trained weight and comes with it as
// LearnedTable (a plan, the oracle and `posenc table learned` take both). Consumers transcribe the definition below
// themselves. CONVENTIONS.md §2.2, §3 item 4.
//
// One sequence of L tokens (a batch is one call per row), after `past` tokens already seen (a KV cache):
//   IdMap::arange          id_t = offset + past + t                                   (HF BERT, GPT-2: offset 0;
//                          BertEmbeddings position_ids[:, past : past + L]; padding tokens get ids too)
//   IdMap::make_positions  m_t = [token_t != padding_idx],  id_t = (cumsum(m)_t + past) m_t + padding_idx
//                          (HF RoBERTa create_position_ids_from_input_ids, huggingface/transformers@000824f17f924a8b
//                          520edf04c597c461fc83356a models/roberta/modeling_roberta.py; fairseq utils.make_positions
//                          has past = 0): real tokens count from padding_idx + 1, padding tokens get padding_idx
//                          (RoBERTa: padding_idx 1, first token id 2, hence 514 = 512 + 2 rows)
//   IdMap::cumsum_mask     over the attention mask a of the past + L tokens (1 = token, 0 = padding):
//                          id = (cumsum(a) a - 1)[past:] + offset                      (HF OPT
//                          OPTLearnedPositionalEmbedding, huggingface/transformers@0184d2087e15afbd83ffa3cef25044a4f6c
//                          05047 models/opt/modeling_opt.py: offset 2, padding tokens get id offset - 1 = 1)
// make_positions with past > 0 treats the cached prefix as padding-free (HF adds past to the real tokens only), so
// a cache call equals the tail of the full call only when the prefix had no padding; cumsum_mask has no such gap.
// Ids are exact integers here; the reference code computes them in narrower types (RoBERTa / fairseq: the cumsum
// and + past in int32, wrapping at 2^31; OPT without a mask: a float32 torch.ones mask, exact to 2^24) — far
// beyond any real table, but an implementation copying those types differs there.
// The row of a token is table[id_t]; an id outside [0, rows) is an error (never a wrap, never a clamp: torch's
// nn.Embedding raises "index out of range" there too).
// A learned table has no relative structure: <row(p), row(p + k)> depends on p, not only on k (claim
// LEARNED-NOT-RELATIVE-1), unlike the sinusoidal table's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "posenc/describe.hpp"

namespace posenc {

enum class IdMap { arange, make_positions, cumsum_mask };

template <>
struct EnumTraits<IdMap> {
  static constexpr std::array<EnumValue<IdMap>, 3> values{{
      {IdMap::arange, "arange", "offset + past + t (HF BERT, GPT-2)"},
      {IdMap::make_positions, "make_positions",
       "(cumsum(token != padding_idx) + past) * mask + padding_idx (HF RoBERTa, fairseq)"},
      {IdMap::cumsum_mask, "cumsum_mask", "(cumsum(attention_mask) * attention_mask - 1)[past:] + offset (HF OPT)"},
  }};
};

inline constexpr std::int64_t kLearnedMaxIndex = std::int64_t{1} << 40;  // ids, padding_idx, offset, past < 2^40

// The trained table [rows][dim], row-major, values exactly as stored (f16 / bf16 / f32 / f64 numbers held in double).
struct LearnedTable {
  std::size_t rows = 0, dim = 0;
  std::vector<double> values;

  friend bool operator==(const LearnedTable&, const LearnedTable&) = default;
};

struct LearnedSpec {
  IdMap id_map = IdMap::arange;
  std::int64_t padding_idx = 1;  // make_positions: the padding token id and its row
  std::int64_t offset = 0;       // arange, cumsum_mask: added to every id (OPT: 2)
  using Weights = LearnedTable;  // what a plan takes with the spec

  friend bool operator==(const LearnedSpec&, const LearnedSpec&) = default;
};

template <>
struct SpecTraits<LearnedSpec> {
  using S = LearnedSpec;
  static constexpr std::string_view scheme = "learned";
  static constexpr std::string_view summary =
      "learned absolute positions: a trained table [rows][dim] looked up at the position ids of BERT/GPT-2 "
      "(arange), RoBERTa/fairseq (make_positions) or OPT (cumsum of the attention mask)";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, kLearnedMaxIndex - 1, false, false, 1, "row ids 0 <= id < rows of the table"};
  }

  static constexpr auto fields = std::make_tuple(
      field("id_map", "--id-map", &S::id_map, "how position ids are made from the tokens / attention mask",
            "CONVENTIONS.md §2.2, §3 item 4"),
      field("padding_idx", "--padding-idx", &S::padding_idx,
            "make_positions: the padding token id, whose row padding tokens get; real tokens start at padding_idx + 1",
            "HF RoBERTa config pad_token_id (1); fairseq dictionary pad (1)",
            +[](const S&) {
              return Range<std::int64_t>{0, kLearnedMaxIndex - 1, false, false, 1, "a token id in [0, 2^40)"};
            },
            +[](const S&) { return Range<std::int64_t>{0, 4}; }),
      field("offset", "--offset", &S::offset, "arange, cumsum_mask: added to every id (OPT's 2); make_positions: 0",
            "HF OPTLearnedPositionalEmbedding.offset",
            +[](const S& s) {
              if (s.id_map == IdMap::make_positions)
                return Range<std::int64_t>{0, 0, false, false, 1, "make_positions has no offset (padding_idx plays it)"};
              return Range<std::int64_t>{0, kLearnedMaxIndex - 1, false, false, 1, "an integer in [0, 2^40)"};
            },
            +[](const S& s) {
              if (s.id_map == IdMap::make_positions) return Range<std::int64_t>{0, 0};
              return Range<std::int64_t>{0, 4};
            }));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<LearnedSpec>::presets(): bert, gpt2, roberta, fairseq, opt (data in learned_spec.cpp, with the commit
// read). Throws Error naming "preset".
LearnedSpec learned_preset(std::string_view name);

// Throws Error naming "table" unless rows >= 1, dim >= 1, rows * dim == values.size() and every value is finite.
void check_learned_table(const LearnedTable&);

}  // namespace posenc
