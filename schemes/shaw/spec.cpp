#include "posenc/shaw_spec.hpp"

#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kShawWhere = "shaw";

// CONVENTIONS.md §2.3. tensor2tensor read at tensorflow/tensor2tensor@75b75f2e2281101b9b3637e14ef519afd6a11b68:
// tensor2tensor/layers/common_attention.py (_generate_relative_positions_matrix: clip(range_k[None, :] -
// range_q[:, None], -k, k) + k with range_q = range_k[-length_q:]; dot_product_attention_relative: both tables, q
// scaled by depth^-0.5 in multihead_attention) and tensor2tensor/models/transformer.py (transformer_relative:
// max_relative_position = 20 on transformer_base, hidden_size 512 / 8 heads = depth 64).
constexpr ShawSpec kT2t{.sign = RelativeSign::key_minus_query, .max_relative_position = 20, .clip = true,
                        .key_query = false, .values = true, .head_dim = 64};
// HF BERT read at huggingface/transformers@8ec58104181bfb34d824d89bccc009b4f6be6e0e
// src/transformers/models/bert/modeling_bert.py (BertSelfAttention: distance_embedding = nn.Embedding(2 *
// max_position_embeddings - 1, attention_head_size); distance = position_ids_l - position_ids_r, indexed at
// distance + max_position_embeddings - 1 without a clamp; relative_key adds einsum(q, E), relative_key_query adds
// einsum(q, E) + einsum(k, E), both before / sqrt(attention_head_size)). bert-base: max_position_embeddings 512,
// head size 768 / 12 = 64.
constexpr ShawSpec kBertKey{.sign = RelativeSign::query_minus_key, .max_relative_position = 511, .clip = false,
                            .key_query = false, .values = false, .head_dim = 64};
constexpr ShawSpec kBertKeyQuery{.sign = RelativeSign::query_minus_key, .max_relative_position = 511, .clip = false,
                                 .key_query = true, .values = false, .head_dim = 64};

constexpr std::array<Preset<ShawSpec>, 3> kShawPresets{{
    {"t2t", "tensor2tensor transformer_relative: d = j - i clipped to [-20, 20], key and value tables, depth 64",
     "tensor2tensor layers/common_attention.py dot_product_attention_relative; models/transformer.py "
     "transformer_relative",
     "tensorflow/tensor2tensor@75b75f2e2281101b9b3637e14ef519afd6a11b68", kT2t},
    {"bert-relative-key",
     "HF BERT position_embedding_type=relative_key: d = i - j + 511 (max_position_embeddings 512), no clamp, q.E",
     "transformers models/bert/modeling_bert.py BertSelfAttention (relative_key)",
     "huggingface/transformers@8ec58104181bfb34d824d89bccc009b4f6be6e0e", kBertKey},
    {"bert-relative-key-query",
     "HF BERT position_embedding_type=relative_key_query: as relative_key, plus k.E",
     "transformers models/bert/modeling_bert.py BertSelfAttention (relative_key_query)",
     "huggingface/transformers@8ec58104181bfb34d824d89bccc009b4f6be6e0e", kBertKeyQuery},
}};

void check_table(const ShawSpec& s, const std::vector<double>& t, const char* name) {
  const std::size_t rows = shaw_table_rows(s), want = rows * s.head_dim;
  if (t.size() != want)
    throw Error(std::string(kShawWhere), name, std::to_string(t.size()) + " values",
                "exactly (2 max_relative_position + 1) * head_dim = " + std::to_string(rows) + " * " +
                    std::to_string(s.head_dim) + " = " + std::to_string(want) + " values ([2k + 1][head_dim], row-major)");
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i]) || std::fabs(t[i]) > kShawMaxWeight)
      throw Error(std::string(kShawWhere), name,
                  "row " + std::to_string(i / s.head_dim) + ", column " + std::to_string(i % s.head_dim) + ": " +
                      format_real(t[i]),
                  "a finite real with |v| <= 1e15");
}

}  // namespace

std::span<const Preset<ShawSpec>> SpecTraits<ShawSpec>::presets() { return kShawPresets; }

void check_shaw_weights(const ShawSpec& s, const ShawWeights& w) {
  check_table(s, w.keys, "keys");
  if (s.values) {
    check_table(s, w.values, "values");
  } else if (!w.values.empty()) {
    throw Error(std::string(kShawWhere), "values", std::to_string(w.values.size()) + " values",
                "none: this spec has values = false (no value table; BERT relative_key)");
  }
}

void check_shaw_lengths(const ShawSpec& s, std::size_t query_length, std::size_t key_length) {
  constexpr std::size_t kMax = std::size_t{1} << 31;
  if (key_length == 0 || key_length > kMax)
    throw Error(std::string(kShawWhere), "key_length", std::to_string(key_length), "1 .. 2^31");
  if (query_length == 0 || query_length > key_length)
    throw Error(std::string(kShawWhere), "query_length", std::to_string(query_length),
                "1 .. key_length = " + std::to_string(key_length) + " (the queries are the last keys)");
  if (!s.clip && key_length - 1 > s.max_relative_position)
    throw Error(std::string(kShawWhere), "key_length", std::to_string(key_length),
                "<= max_relative_position + 1 = " + std::to_string(s.max_relative_position + 1) +
                    " with clip = false (the table has no row for a longer distance; HF BERT: max_position_embeddings)");
}

}  // namespace posenc
