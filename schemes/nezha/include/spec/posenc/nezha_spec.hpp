// posenc/nezha_spec.hpp — the one description of NEZHA's functional relative position encoding (Wei et al. 2019):
// Shaw et al.'s clipped relative representations with a FIXED sinusoid table instead of trained ones.
//
// A NezhaSpec fully determines the table and the attention it feeds (there are no trained position weights). The
// fast path (lib/), the MPFR oracle (reference/), the command-line tool and the reports consume this struct and
// nothing else; each consumer transcribes the definition below itself.
//
// Definition (CONVENTIONS.md §2.4; HF transformers models/deprecated/nezha/modeling_nezha.py
// NezhaRelativePositionsEncoding and NezhaSelfAttention, read at huggingface/transformers@553b10de):
//   Shifted index     r(i, j) = clip(j - q_i, -K, K) + K in [0, 2K], K = max_relative_position: the key minus the
//                     query (HF: distance_mat = range_mat - range_mat^T, range_mat[i][j] = j), as tensor2tensor's.
//                     Geometry as every bias scheme's (posenc/bias.hpp): key_length Lk keys at 0..Lk-1, the queries
//                     the LAST Lq of them, q_i = Lk - Lq + i. HF computes only Lq = Lk (its batched matmul of the
//                     key term needs from_seq_length = to_seq_length); there the geometries coincide.
//   Table             T[r][2t] = sin(r w_t), T[r][2t + 1] = cos(r w_t), w_t = 10000^(-2t/depth), r = 0..2K,
//                     t = 0..depth/2 - 1: the paper's interleaved sinusoid (Vaswani et al.) OF THE SHIFTED INDEX r,
//                     not of the signed distance, so T[K + u] and T[K - u] are not mirror images (no sin(-x) =
//                     -sin(x) across the table). depth = the attention head size; even (HF's cos slots would not
//                     match its sin slots for an odd depth).
//   Scores of one head   e(i, j) = (<q_i, k_j> + <q_i, T[r(i, j)]>) / sqrt(depth)    (key term before the scaling)
//   Output              z_i = sum_j alpha(i, j) (v_j + T[r(i, j)]),  alpha(i, .) = softmax_j e(i, .)
//                     i.e. the Shaw mechanism (posenc/shaw_spec.hpp) with sign key_minus_query, k = K, clip, no
//                     key-query term, and T as both the key table a^K and the value table a^V.
// Regimes (NezhaRegime): only the table differs.
//   exact  T's entries are the real sin / cos, each rounded once to the output type (the sinusoidal scheme's exact
//          paper table at positions 0..2K, posenc/sinusoidal_spec.hpp).
//   hf     HF's float32 steps, each correctly rounded (DESIGN.md §2; what NEZHA models were trained with):
//            c   = RN32(RN64(-RN64(ln 10000) / depth))   -math.log(10000.0) / depth meets a float32 tensor
//            w_t = RN32(exp(RN32(RN32(2t) * c)))         torch.exp(torch.arange(0, depth, 2).float() * c)
//            a   = RN32(RN32(r) * w_t)                   position * div_term (float32)
//            T   = RN32(sin a), RN32(cos a)              torch.sin / torch.cos (float32)
//          — the sinusoidal scheme's emulated paper rule (PyTorch's exp form). The one-hot matmul that spreads T
//          over [L][L][depth] is exact (one non-zero product per entry). A real torch exp / sin / cos is not
//          correctly rounded: `posenc check nezha` holds a user's table to the emulation envelope.
// Scores and outputs use the table of the regime as double numbers (what the plan's f64 table holds); their budget
// is relative to the sum of the magnitudes of the terms (DESIGN.md §3), as Shaw's.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <tuple>

#include "posenc/describe.hpp"
#include "posenc/shaw_spec.hpp"
#include "posenc/sinusoidal_spec.hpp"

namespace posenc {

enum class NezhaRegime { exact, hf };

template <>
struct EnumTraits<NezhaRegime> {
  static constexpr std::array<EnumValue<NezhaRegime>, 2> values{{
      {NezhaRegime::exact, "exact", "the real sin/cos of r * 10000^(-2t/depth), rounded once"},
      {NezhaRegime::hf, "hf", "HF's float32 steps (torch.exp form of the frequencies), each correctly rounded"},
  }};
};

inline constexpr std::size_t kNezhaMaxRelative = std::size_t{1} << 20;

struct NezhaSpec {
  std::size_t max_relative_position = 64;  // K: 2K + 1 table rows (HF NezhaConfig default 64; class default 127)
  std::size_t depth = 64;                  // attention head size: columns of the table, length of q, k, v
  NezhaRegime regime = NezhaRegime::exact;

  friend bool operator==(const NezhaSpec&, const NezhaSpec&) = default;
};

// Rows of the table: 2K + 1.
constexpr std::size_t nezha_table_rows(const NezhaSpec& s) noexcept { return 2 * s.max_relative_position + 1; }

template <>
struct SpecTraits<NezhaSpec> {
  using S = NezhaSpec;
  static constexpr std::string_view scheme = "nezha";
  static constexpr std::string_view summary =
      "NEZHA functional relative positions (Wei et al. 2019): a fixed sinusoid of the shifted index clip(j - i, -K, "
      "K) + K, added to the keys and the values as Shaw et al.'s tables";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, (std::int64_t{1} << 31) - 1, false, false, 1, "key positions 0 <= j < 2^31"};
  }

  static constexpr auto fields = std::make_tuple(
      field("max_relative_position", "--max-relative-position", &S::max_relative_position,
            "K: distances are clipped to [-K, K]; the table has 2K + 1 rows (sinusoid positions 0..2K)",
            "CONVENTIONS.md §2.4 (HF NezhaConfig.max_relative_position = 64; class default 127)",
            +[](const S&) { return Range<std::size_t>{1, kNezhaMaxRelative}; },
            +[](const S&) { return Range<std::size_t>{1, 160}; }),
      field("depth", "--depth", &S::depth, "attention head size: columns of the table and length of q, k, v",
            "CONVENTIONS.md §2.4 (depth = hidden_size / num_attention_heads; sin and cos come in pairs)",
            +[](const S&) {
              return Range<std::size_t>{2, kShawMaxHeadDim, false, false, 2, "sin and cos slots come in pairs"};
            },
            +[](const S&) { return Range<std::size_t>{2, 96, false, false, 2}; }),
      field("regime", "--regime", &S::regime,
            "exact (the real sin/cos, rounded once) or HF's float32 steps (what NEZHA models were trained with)",
            "DESIGN.md §2; CONVENTIONS.md §2.4"));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<NezhaSpec>::presets(): nezha-cn-base (data in nezha_spec.cpp, with the commit read).

// The Shaw structure NEZHA is an instance of: sign key_minus_query, k = K, clip, no key-query term, values, head_dim
// = depth (validates the spec: Error naming the field).
ShawSpec nezha_shaw_spec(const NezhaSpec&);

// The sinusoidal spec whose table at positions 0..2K is NEZHA's table: interleaved, paper rule, dim = depth, base
// 10000, regime exact or emulated (the PyTorch exp form) (validates the spec).
SinusoidalSpec nezha_sinusoidal_spec(const NezhaSpec&);

}  // namespace posenc
