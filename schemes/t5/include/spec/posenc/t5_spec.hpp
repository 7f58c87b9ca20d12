// posenc/t5_spec.hpp — the one description of T5's relative attention bias (Raffel et al. 2020): the log-bucketed
// relative position and the per-head bias table it indexes.
//
// A T5Spec is the structure of the bias (direction, buckets, heads, arithmetic); the bias table itself is a trained
// weight and comes with it as T5Weights (a plan, the oracle and `posenc bias t5` take both). The fast path (lib/),
// the MPFR oracle (reference/), the command-line tool and the reports consume these two structs and nothing else;
// each consumer transcribes the definition below itself.
//
// Definition (CONVENTIONS.md §2.7; HF transformers models/t5/modeling_t5.py T5Attention._relative_position_bucket
// and compute_bias, from Mesh TensorFlow's _relative_position_bucket):
//   Relative position  r = j - q_i (memory minus query: key j, query row i at position q_i). Geometry of one call as
//                      every bias scheme's (posenc/bias.hpp): key_length Lk keys at 0..Lk-1, the query_length queries
//                      the LAST Lq of them, q_i = Lk - Lq + i (compute_bias(query_length, key_length) at a decoder
//                      step, where HF slices the last rows or passes cache_position = those positions).
//   Bucket b(r), with nb = num_buckets, md = max_distance:
//     bidirectional:   n = nb // 2, base = n if r > 0 else 0, a = |r|
//     unidirectional:  n = nb,      base = 0,                 a = max(-r, 0)   (keys after the query: a = 0)
//     me = n // 2 (max_exact)
//     b = base + a                                            if a < me
//     b = base + min(me + L(a), n - 1)                        otherwise, with
//     L(a) = floor(ln(a / me) / ln(md / me) * (n - me))       (a >= me: the argument is >= 0, so trunc = floor)
//   so b(0) = 0, b is non-decreasing in a on each side, every a >= md lands in base + n - 1, and in bidirectional
//   mode no r reaches bucket n = nb // 2 (r > 0 has a >= 1, so b >= n + 1; r <= 0 stays below n): the unused
//   bucket of CONVENTIONS.md §3 item 5.
//   Bias of head h:    bias_h(i, j) = table[b(j - q_i)][h]  (nn.Embedding(num_buckets, n_heads): table is
//                      [num_buckets][heads], row-major); T5 adds it to the unscaled scores q.k (no 1/sqrt(d)).
// Regimes (T5Regime): only L(a) differs.
//   exact  L(a) of the real numbers: floor of the exact value (where ln(a/me)/ln(md/me)*(n - me) is an integer t,
//          i.e. a = me (md/me)^(t/(n-me)) exactly, the bucket is me + t).
//   hf     HF's float32 steps, each correctly rounded (DESIGN.md §2; the arithmetic T5 models were trained with):
//            x = RN32(RN32(a) / RN32(me))          relative_position.float() / max_exact
//            l = RN32(ln x)                        torch.log (float32)
//            y = RN32(l / RN32(ln_64(md / me)))     / math.log(max_distance / max_exact): a Python double, used as a
//                                                  float32 scalar by the float32 tensor op
//            z = RN32(y * RN32(n - me))            * (num_buckets - max_exact)
//            L = trunc(z)                          .to(torch.long)
//          A real torch log is not correctly rounded: where z lies within a few ulps of an integer a real run may
//          take the other bucket; `posenc check t5` and the budget table state that envelope.
// The bias values are the table's entries: no arithmetic, so every output holds table[b][h] rounded once to the
// output type (exactly, for a float32 table and float32 output).
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

enum class T5Regime { exact, hf };

template <>
struct EnumTraits<T5Regime> {
  static constexpr std::array<EnumValue<T5Regime>, 2> values{{
      {T5Regime::exact, "exact", "the bucket of the real log: floor(ln(a/me) / ln(md/me) (n - me))"},
      {T5Regime::hf, "hf", "HF's float32 log, division and product, then truncation (what T5 models were trained with)"},
  }};
};

inline constexpr std::size_t kT5MaxBuckets = std::size_t{1} << 16;
inline constexpr std::size_t kT5MaxHeads = std::size_t{1} << 16;
inline constexpr std::int64_t kT5MaxDistance = (std::int64_t{1} << 31) - 1;
// Largest |table entry| accepted (trained biases are O(10)); keeps every bias and score finite in float32.
inline constexpr double kT5MaxBias = 1e30;

// The trained bias table: num_buckets rows of heads values (relative_attention_bias.weight, [num_buckets, heads]).
struct T5Weights {
  std::vector<double> table;

  friend bool operator==(const T5Weights&, const T5Weights&) = default;
};

struct T5Spec {
  bool bidirectional = true;         // encoder (true) or decoder self-attention (false)
  std::size_t num_buckets = 32;      // relative_attention_num_buckets
  std::int64_t max_distance = 128;   // relative_attention_max_distance
  std::size_t heads = 8;             // n_heads (columns of the table)
  T5Regime regime = T5Regime::exact;
  using Weights = T5Weights;  // what a plan takes with the spec

  friend bool operator==(const T5Spec&, const T5Spec&) = default;
};

// n (the buckets of one side) and me (max_exact) of a spec.
constexpr std::size_t t5_side_buckets(const T5Spec& s) noexcept { return s.bidirectional ? s.num_buckets / 2 : s.num_buckets; }
constexpr std::size_t t5_max_exact(const T5Spec& s) noexcept { return t5_side_buckets(s) / 2; }

template <>
struct SpecTraits<T5Spec> {
  using S = T5Spec;
  static constexpr std::string_view scheme = "t5";
  static constexpr std::string_view summary =
      "T5 relative attention bias (Raffel et al. 2020): a per-head table indexed by the log-bucketed relative "
      "position j - i (key minus query), bidirectional (encoder) or unidirectional (decoder)";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, (std::int64_t{1} << 31) - 1, false, false, 1, "key positions 0 <= j < 2^31"};
  }

  static constexpr auto fields = std::make_tuple(
      field("bidirectional", "--bidirectional", &S::bidirectional,
            "true: encoder (half the buckets for keys after the query); false: decoder self-attention (keys after "
            "the query share bucket 0)",
            "CONVENTIONS.md §2.7 (bidirectional = not is_decoder)"),
      field("num_buckets", "--num-buckets", &S::num_buckets, "relative_attention_num_buckets",
            "CONVENTIONS.md §2.7 (T5Config default 32)",
            +[](const S& s) {
              return s.bidirectional
                         ? Range<std::size_t>{4, kT5MaxBuckets, false, false, 1,
                                              "bidirectional: >= 4, so that each side has max_exact = nb // 4 >= 1"}
                         : Range<std::size_t>{2, kT5MaxBuckets, false, false, 1, "unidirectional: >= 2 (max_exact >= 1)"};
            },
            +[](const S& s) { return Range<std::size_t>{s.bidirectional ? std::size_t{4} : std::size_t{2}, 256}; }),
      field("max_distance", "--max-distance", &S::max_distance,
            "relative_attention_max_distance: distances from it on share the last bucket of their side",
            "CONVENTIONS.md §2.7 (T5Config default 128)",
            +[](const S& s) {
              return Range<std::int64_t>{static_cast<std::int64_t>(t5_max_exact(s)) + 1, kT5MaxDistance, false, false, 1,
                                         "> max_exact = (bidirectional ? num_buckets // 2 : num_buckets) // 2 (ln(md / "
                                         "max_exact) divides)"};
            },
            +[](const S& s) {
              const auto me = static_cast<std::int64_t>(t5_max_exact(s));
              return Range<std::int64_t>{me + 1, me * 64 + 1};
            }),
      field("heads", "--heads", &S::heads, "attention heads (columns of the bias table)",
            "CONVENTIONS.md §2.7 (nn.Embedding(num_buckets, n_heads))",
            +[](const S&) { return Range<std::size_t>{1, kT5MaxHeads}; },
            +[](const S&) { return Range<std::size_t>{1, 16}; }),
      field("regime", "--regime", &S::regime, "exact (the real log) or HF's float32 steps",
            "CONVENTIONS.md §2.7, §3 item 5; DESIGN.md §2 (emulation: each float32 step correctly rounded)"));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<T5Spec>::presets(): t5-encoder, t5-decoder (data in t5_spec.cpp, with the commit read).
// The preset called `name` with `heads` heads. Throws Error naming "preset" or "heads".
T5Spec t5_preset(std::string_view name, std::size_t heads);

// Throws Error naming "table" unless it has exactly num_buckets * heads finite entries with |v| <= kT5MaxBias
// (validate(spec) first).
void check_t5_weights(const T5Spec&, const T5Weights&);

}  // namespace posenc
