// posenc/shaw_spec.hpp — the one description of clipped relative position representations: Shaw et al. 2018 as
// tensor2tensor implements it, and the BERT-family `relative_key` / `relative_key_query` position embeddings of HF
// transformers (Huang et al. 2020), which are the same mechanism with the opposite sign, no clipping and a table
// sized by max_position_embeddings.
//
// A ShawSpec is the structure (sign, clipping distance, which terms use the tables, head_dim); the relative tables
// are trained weights and come with it as ShawWeights (a plan, the oracle and the command line take both). The fast
// path (lib/), the MPFR oracle (reference/), the command-line tool and the reports consume these two structs and
// nothing else; each consumer transcribes the definition below itself.
//
// Definition (CONVENTIONS.md §2.3):
//   Geometry of one call, as every bias scheme's (posenc/bias.hpp): key_length Lk keys at positions 0..Lk-1, the
//   query_length queries the LAST Lq of them, query row i at q_i = Lk - Lq + i. This is tensor2tensor's
//   `range_q = range_k[-length_q:]` for Lq < Lk, its cached single query (`cache=True`: distances
//   arange(-Lk+1, 1), i.e. the query at Lk - 1), and HF BERT's cached query position `key_length - 1`; with
//   Lq = Lk it is every self-attention call.
//   Signed distance   d(i, j) = j - q_i   (sign = key_minus_query: tensor2tensor, Shaw et al.)
//                     d(i, j) = q_i - j   (sign = query_minus_key: HF BERT relative_key, `position_ids_l -
//                                          position_ids_r`)
//   Index             idx(i, j) = clip(d(i, j), -k, k) + k  in [0, 2k], k = max_relative_position.
//                     clip = false (HF BERT: `distance + max_position_embeddings - 1`, no clamp, k =
//                     max_position_embeddings - 1) accepts only geometries where |d| <= k everywhere, i.e.
//                     key_length <= k + 1 (HF would index outside its table); clip = true clamps (t2t).
//   Tables            keys a^K: (2k + 1) rows of head_dim values (t2t relative_positions_keys; BERT
//                     distance_embedding.weight, 2 max_position_embeddings - 1 rows); values a^V (values = true
//                     only): (2k + 1) rows of head_dim (t2t relative_positions_values). Shared by every head.
//   Scores of one head, query row i, key j (q_i, k_j, v_j vectors of head_dim):
//                     e(i, j) = scale * ( <q_i, k_j> + <q_i, a^K[idx(i, j)]> + [key_query] <k_j, a^K[idx(i, j)]> )
//                     scale = 1/sqrt(head_dim) in every implementation named here (t2t scales q by depth^-0.5
//                     before both products; BERT divides the sum by sqrt(attention_head_size)); the mask of the
//                     geometry (causal / key padding) adds -inf afterwards.
//   Output            z_i = sum_j alpha(i, j) (v_j + [values] a^V[idx(i, j)]),  alpha(i, .) = softmax_j e(i, .)
//                     (t2t _relative_attention_inner applied to the weights and the value table; BERT has no value
//                     term). A row whose keys are all masked has no softmax: refused (Error naming key_mask).
// The index matrix is integer arithmetic only: every implementation and regime agrees on it exactly. Scores and
// outputs are sums of products (and exponentials): their budget is relative to the sum of the magnitudes of the
// terms (DESIGN.md §3), there is no emulated regime (the order of a gemm's sums is the implementation's own).
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

enum class RelativeSign { key_minus_query, query_minus_key };

template <>
struct EnumTraits<RelativeSign> {
  static constexpr std::array<EnumValue<RelativeSign>, 2> values{{
      {RelativeSign::key_minus_query, "key_minus_query", "d = j - i (tensor2tensor, Shaw et al., T5, NEZHA)"},
      {RelativeSign::query_minus_key, "query_minus_key", "d = i - j (HF BERT relative_key, DeBERTa)"},
  }};
};

inline constexpr std::size_t kShawMaxRelative = std::size_t{1} << 20;
inline constexpr std::size_t kShawMaxHeadDim = std::size_t{1} << 14;
// Largest |table entry| accepted (trained embeddings are O(1)); keeps every score finite in float32 for the lengths
// and head_dims accepted.
inline constexpr double kShawMaxWeight = 1e15;

// The trained relative tables, [2k + 1][head_dim] row-major each; `values` empty unless spec.values.
struct ShawWeights {
  std::vector<double> keys;
  std::vector<double> values;

  friend bool operator==(const ShawWeights&, const ShawWeights&) = default;
};

struct ShawSpec {
  RelativeSign sign = RelativeSign::key_minus_query;
  std::size_t max_relative_position = 20;  // k: rows 0..2k of each table
  bool clip = true;                         // clamp |d| to k (t2t) or refuse geometries that exceed it (BERT)
  bool key_query = false;                   // also add <k_j, a^K[idx]> (BERT relative_key_query)
  bool values = true;                       // the output adds a^V[idx] to the values (Shaw / t2t)
  std::size_t head_dim = 64;                // columns of the tables, length of q, k, v
  using Weights = ShawWeights;

  friend bool operator==(const ShawSpec&, const ShawSpec&) = default;
};

// Rows of each table: 2k + 1.
constexpr std::size_t shaw_table_rows(const ShawSpec& s) noexcept { return 2 * s.max_relative_position + 1; }

template <>
struct SpecTraits<ShawSpec> {
  using S = ShawSpec;
  static constexpr std::string_view scheme = "shaw";
  static constexpr std::string_view summary =
      "clipped relative position representations (Shaw et al. 2018; tensor2tensor) and HF BERT relative_key / "
      "relative_key_query: learned tables indexed by clip(d, -k, k) + k, added to the keys (and values)";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, (std::int64_t{1} << 31) - 1, false, false, 1, "key positions 0 <= j < 2^31"};
  }

  static constexpr auto fields = std::make_tuple(
      field("sign", "--sign", &S::sign, "which signed distance indexes the tables: j - i or i - j",
            "CONVENTIONS.md §2.3, §3 item 3 (t2t: key - query; BERT: query - key)"),
      field("max_relative_position", "--max-relative-position", &S::max_relative_position,
            "k: distances are clipped to [-k, k]; each table has 2k + 1 rows (BERT: max_position_embeddings - 1)",
            "CONVENTIONS.md §2.3 (t2t transformer_relative: 20; BERT: 2 max_position_embeddings - 1 rows)",
            +[](const S&) { return Range<std::size_t>{1, kShawMaxRelative}; },
            +[](const S&) { return Range<std::size_t>{1, 64}; }),
      field("clip", "--clip", &S::clip,
            "true: clamp the distance to [-k, k] (t2t); false: refuse key_length > k + 1 (HF BERT has no clamp)",
            "CONVENTIONS.md §2.3 (BERT: no clipping)"),
      field("key_query", "--key-query", &S::key_query,
            "also add <k_j, a^K[idx]> to the scores (BERT relative_key_query)",
            "CONVENTIONS.md §2.3 (relative_key_query adds q_i.E + k_j.E)"),
      field("values", "--values", &S::values,
            "the output adds the value table a^V[idx] to every value (Shaw / t2t; BERT has no value table)",
            "CONVENTIONS.md §2.3 (_relative_attention_inner on the weights)"),
      field("head_dim", "--head-dim", &S::head_dim, "columns of the tables and length of q, k, v",
            "CONVENTIONS.md §2.3 (tables [2k + 1, depth]; BERT distance_embedding [.., attention_head_size])",
            +[](const S&) { return Range<std::size_t>{1, kShawMaxHeadDim}; },
            +[](const S&) { return Range<std::size_t>{1, 96}; }));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<ShawSpec>::presets(): t2t, bert-relative-key, bert-relative-key-query (data in shaw_spec.cpp, with the
// commit read).

// Throws Error naming "keys" or "values" unless each has (2k + 1) * head_dim finite entries with |v| <=
// kShawMaxWeight (values: none unless spec.values) (validate(spec) first).
void check_shaw_weights(const ShawSpec&, const ShawWeights&);

// Throws Error naming "key_length" when clip is false and key_length > k + 1 (a distance the table lacks), or
// "query_length" when query_length > key_length or either is 0 (the caller's names for the two lengths).
void check_shaw_lengths(const ShawSpec&, std::size_t query_length, std::size_t key_length);

}  // namespace posenc
