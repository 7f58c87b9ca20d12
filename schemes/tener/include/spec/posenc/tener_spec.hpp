// posenc/tener_spec.hpp — the one description of TENER's relative attention (Yan et al. 2019, fastnlp/TENER
// modules/relative_transformer.py: RelativeSinusoidalPositionalEmbedding, RelativeMultiHeadAttn).
//
// A TenerSpec is the structure (sizes, whether scores are scaled, the embedding's init_size, the regime of the
// sinusoid table); the two trained biases come with it as TenerWeights. The fast path (lib/), the MPFR oracle
// (reference/), the command-line tool and the reports consume these two structs and nothing else; each consumer
// transcribes the definition below itself.
//
// Definition (CONVENTIONS.md §2.6; fastnlp/TENER@d2614d50 modules/relative_transformer.py):
//   Geometry of one call: self-attention over L tokens (Lq = Lk = L), query i and key j at positions i and j.
//   Signed distance   t(i, j) = j - i (the key minus the query).
//   Table R           d_head columns (the embedding has d_model // n_head = d_head dimensions): with h = d_head // 2
//                     pairs, w_k = exp(-k ln(10000) / (h - 1)) (the tensor2tensor/fairseq denominator h - 1, so h
//                     >= 2), R(t)[k] = sin(t w_k), R(t)[h + k] = cos(t w_k) ([sin | cos] halves), one zero column
//                     appended when d_head is odd. A call returns rows t = -L .. L - 1 (row c is t = c - L).
//                     The zeroed padding row: the module's table covers positions -N/2 .. N/2 - 1 (N = init_size + 1
//                     at first, Python's floor division) with the row of the most negative position zeroed
//                     (padding_idx 0); a call of length L > origin_shift = N // 2 + 1 rebuilds it for N = 2L (positions
//                     -L .. L - 1, the row of -L zeroed, origin_shift = L). So a fresh module's call returns an all-zero
//                     row for t = -L exactly when L > init_size / 2; TENER itself fails (index out of range) at L =
//                     init_size / 2 + 1, where posenc gives the rebuilt table. No score ever uses t = -L.
//   Scores of head h, query i, key j (a = r_r_bias[h], b = r_w_bias[h]: TENER's names, swapped against
//   Transformer-XL's roles):
//                     e(i, j) = ( <q_i + a, k_j> + <q_i + b, R(j - i)> + <k_j, R(i - j)> ) / s
//                     s = sqrt(d_head) when scale, else 1 (TENER's default: unscaled).
//                     In the code: AC = (q + r_r_bias) k; B = q R^T, D = r_w_bias R^T, E = k R^T over the call's 2L
//                     rows; attn = AC + _shift(B + D) + _transpose_shift(E), divided by s.
//   _shift            of an [L][2L] matrix x: a zero column appended, viewed as [2L + 1][L], the last row dropped,
//                     viewed as [L][2L], the last L columns kept: out[i][j] = x[i][L + j - i] (t = j - i); every
//                     entry is defined (the zero column is never read).
//   _transpose_shift  of an [L][2L] matrix y (row = key): a zero column appended, viewed as [2L + 1][L], rows 1, 3,
//                     .., 2L - 1 selected, transposed: out[i][j] = y[j][L + i - j] (the key's row at t = i - j).
//   Mask              the key padding mask (mask[j] == 0: -inf); no causal mask.
// Sinusoid and direction: sin is odd and cos even, so R(-t) is R(t) with its sin half negated; the scores see both
// signs of t and can tell a key before the query from one after it (TENER's argument).
// Regimes (of the table R; the attention is arithmetic of the output type, its budget relative to the magnitudes of
// the terms, DESIGN.md §3):
//   exact     R's entries are the real sin/cos, each rounded once (the sinusoidal scheme's exact fairseq-rule table).
//   emulated  get_embedding's float32 steps, each correctly rounded (those of fairseq's get_embedding, the
//             sinusoidal scheme's emulated fairseq rule): c = RN64(RN64(ln 10000) / (h - 1)) (math.log(10000) /
//             (half_dim - 1)), w_k = RN32(exp(RN32(RN32(k) RN32(-c)))) (a float32 tensor times a Python float: the
//             scalar is cast to float32 first), angle RN32(RN32(t) w_k) (t exact in float32 for |t| <= 2^24; beyond,
//             CPU torch.arange's value rounded once), RN32(sin), RN32(cos).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "posenc/describe.hpp"
#include "posenc/sinusoidal_spec.hpp"
#include "posenc/vocabulary.hpp"

namespace posenc {

inline constexpr std::size_t kTenerMaxHeads = 1024;
inline constexpr std::size_t kTenerMaxHeadDim = std::size_t{1} << 14;
inline constexpr std::int64_t kTenerMaxLength = (std::int64_t{1} << 30) - 1;
inline constexpr double kTenerMaxWeight = 1e15;

// The trained biases of one RelativeMultiHeadAttn (row-major [heads][d_head]), named as TENER names them:
//   r_r_bias  added to the query in the content term AC (Transformer-XL's u)
//   r_w_bias  added to the query in the position term D (Transformer-XL's v)
struct TenerWeights {
  std::vector<double> r_r_bias;
  std::vector<double> r_w_bias;
  friend bool operator==(const TenerWeights&, const TenerWeights&) = default;
};

struct TenerSpec {
  std::size_t heads = 6;          // n_head
  std::size_t d_head = 32;        // d_model // n_head: columns of R, length of q, k and the biases
  bool scale = false;             // divide the scores by sqrt(d_head) (RelativeMultiHeadAttn scale=False by default)
  std::size_t init_size = 1200;   // RelativeSinusoidalPositionalEmbedding(d_head, 0, 1200): where the zero row is
  Regime regime = Regime::exact;
  using Weights = TenerWeights;
  friend bool operator==(const TenerSpec&, const TenerSpec&) = default;
};

template <>
struct SpecTraits<TenerSpec> {
  using S = TenerSpec;
  static constexpr std::string_view scheme = "tener";
  static constexpr std::string_view summary =
      "TENER relative attention (Yan et al. 2019): (q + r_r_bias).k + (q + r_w_bias).R(j - i) + k.R(i - j), "
      "unscaled by default, R the [sin | cos] sinusoid of signed distances with the h - 1 denominator";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, kTenerMaxLength, false, false, 1, "token positions 0 <= j < 2^30"};
  }

  static constexpr auto fields = std::make_tuple(
      field("heads", "--heads", &S::heads, "attention heads n_head", "CONVENTIONS.md §2.6 (n_head)",
            +[](const S&) { return Range<std::size_t>{1, kTenerMaxHeads}; },
            +[](const S&) { return Range<std::size_t>{1, 3}; }),
      field("d_head", "--d-head", &S::d_head,
            "d_model // n_head: columns of R (odd: one zero column) and length of q, k and the biases",
            "CONVENTIONS.md §2.6 (RelativeSinusoidalPositionalEmbedding(d_model // n_head, 0, 1200); the h - 1 "
            "denominator needs h = d_head // 2 >= 2)",
            +[](const S&) { return Range<std::size_t>{4, kTenerMaxHeadDim, false, false, 1, "w_k divides by d_head // 2 - 1"}; },
            +[](const S&) { return Range<std::size_t>{4, 24}; }),
      field("scale", "--scale-scores", &S::scale,
            "divide the scores by sqrt(d_head) (TENER's default: no; scores' --scale gives any scale)",
            "relative_transformer.py RelativeMultiHeadAttn (scale=False: self.scale = 1)"),
      field("init_size", "--init-size", &S::init_size,
            "the embedding's initial table size: a call of length L > init_size / 2 gets the zero row at t = -L",
            "relative_transformer.py RelativeSinusoidalPositionalEmbedding(..., init_size=1200) (assert init_size % 2 == 0)",
            +[](const S&) {
              return Range<std::size_t>{2, static_cast<std::size_t>(kTenerMaxLength), false, false, 2,
                                        "TENER asserts init_size % 2 == 0"};
            },
            +[](const S&) { return Range<std::size_t>{2, 400, false, false, 2}; }),
      field("regime", "--regime", &S::regime,
            "the sinusoid table R: exact (the real sin/cos, rounded once) or emulated (get_embedding's float32 steps, "
            "fairseq's)",
            "DESIGN.md §2; CONVENTIONS.md §2.6"));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<TenerSpec>::presets(): tener-conll2003, tener-ontonotes (data in tener_spec.cpp).

// The sinusoidal spec of the call's table: halves, fairseq rule, dim = d_head (odd: zero_pad), signed positions,
// padding_row -L where a fresh module's call of length L has its zero row (L > init_size / 2), regime exact or
// emulated (validates the spec; Error naming "length" unless 1 <= L <= 2^30 - 1).
SinusoidalSpec tener_sinusoidal_spec(const TenerSpec&, std::size_t length);

// The position whose row is zero in a fresh module's call of length L: -L when L > init_size / 2, else none.
std::optional<std::int64_t> tener_zero_position(const TenerSpec&, std::size_t length);

// Throws Error naming "r_r_bias" or "r_w_bias" unless each has heads * d_head finite entries with |v| <=
// kTenerMaxWeight (validate(spec) first).
void check_tener_weights(const TenerSpec&, const TenerWeights&);

// Throws Error naming "length" unless 1 <= L <= 2^30 - 1, or "query_length" unless query_length == key_length (TENER
// is self-attention).
void check_tener_lengths(std::size_t query_length, std::size_t key_length);

}  // namespace posenc
