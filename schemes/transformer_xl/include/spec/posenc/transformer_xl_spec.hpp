// posenc/transformer_xl_spec.hpp — the one description of Transformer-XL's relative positional attention (Dai et
// al. 2019, "type 2" attention of kimiyoung/transformer-xl, RelPartialLearnableMultiHeadAttn; HF TransfoXL is the
// same code).
//
// A TransformerXlSpec is the structure (sizes, clamp_len, same_length, the regime of the sinusoid table); the trained
// parameters of the positional part come with it as TransformerXlWeights (a plan, the oracle and the command line take
// both). The fast path (lib/), the MPFR oracle (reference/), the command-line tool and the reports consume these two
// structs and nothing else; each consumer transcribes the definition below itself.
//
// Definition (CONVENTIONS.md §2.1 item 5, §2.5; kimiyoung/transformer-xl@01102106 pytorch/mem_transformer.py:
// PositionalEmbedding, RelMultiHeadAttn._rel_shift, RelPartialLearnableMultiHeadAttn.forward, MemTransformerLM._forward):
//   Geometry of one call: qlen = Lq queries (the current segment) and klen = Lk = M + Lq keys (M = mlen memory
//   positions, then the segment), query row i at key position q_i = M + i: every bias scheme's geometry
//   (posenc/bias.hpp, "the queries are the last Lq keys").
//   Distance          delta(i, j) = q_i - j (the query minus the key: how far back the key is). Only delta >= 0 is
//                     embedded: the table's pos_seq = klen - 1 .. 0 (descending), clamped above by clamp_len when
//                     clamp_len > 0: pos(delta) = min(delta, clamp_len).
//   Table R           row c = 0 .. klen - 1 is the sinusoid of pos_seq[c] = pos(klen - 1 - c) in [sin | cos] halves:
//                     R[c][k] = sin(pos w_k), R[c][d/2 + k] = cos(pos w_k), w_k = 10000^(-2k/d_model), k < d_model/2.
//   Positional keys   r_head_k = R W_R^T: for head h, P_h[c][e] = sum_m W_R[h d_head + e][m] R[c][m] (r_net, a Linear
//                     d_model -> heads * d_head without bias: W_R is its weight, [heads * d_head][d_model]).
//   Scores of head h, query row i, key j (q_i, k_j of d_head; u = r_w_bias[h], v = r_r_bias[h]):
//                     e(i, j) = scale ( <q_i + u, k_j> + <q_i + v, P_h[c(i, j)]> ),  c(i, j) = klen - 1 - delta(i, j)
//                     defined for delta(i, j) >= 0 (j <= q_i) only; scale = 1/sqrt(d_head).
//                     In the code: AC = (q + r_w_bias) k, BD = _rel_shift((q + r_r_bias) r_head_k), (AC + BD) * scale.
//   rel_shift         _rel_shift(x) of an [Lq][klen] matrix x: a zero column put in front ([Lq][klen + 1]), viewed
//                     as [klen + 1][Lq], the first row dropped, viewed back as [Lq][klen]. Then out[i][j] =
//                     x[i][Lq - 1 - i + j] = x[i][c(i, j)] for j <= q_i; the other entries (j > q_i: "the upper-right
//                     triangle") are junk: 0 at j = q_i + 1, x[i + 1][j - q_i - 2] beyond. They are removed by the
//                     attention mask (below) and never used by posenc: its scores hold -inf there.
//   Mask              dec_attn_mask: key j is hidden from query row i when j > q_i (every call: the undefined
//                     entries); with same_length also when j <= i - s, s = Lq - (klen - mem_len) if klen > mem_len
//                     else Lq, which is negative when klen - mem_len > Lq (every query then sees the same number of
//                     keys; mem_len is the model's configured memory length, not this call's M). The key_mask of
//                     the geometry hides padded keys.
//                     The code adds -inf (masked_fill) before the softmax; posenc's scores hold -inf.
// Regimes (of the table R; the attention is arithmetic of the output type, its budget relative to the magnitudes of
// the terms, DESIGN.md §3):
//   exact     R's entries are the real sin/cos, each rounded once (the sinusoidal scheme's exact table).
//   emulated  PositionalEmbedding's float32 steps, each correctly rounded (the sinusoidal preset transformer-xl,
//             paper_form = pow): inv_freq = RN32(1 / RN32(10000 ** RN32(RN32(2k) / d_model))), the angle
//             RN32(pos inv_freq) of torch.ger, RN32(sin), RN32(cos). A real torch pow / sin / cos is not correctly
//             rounded: `posenc check transformer_xl` holds a user's table to the emulation envelope.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "posenc/describe.hpp"
#include "posenc/sinusoidal_spec.hpp"
#include "posenc/vocabulary.hpp"

namespace posenc {

inline constexpr std::size_t kTxlMaxDModel = std::size_t{1} << 14;
inline constexpr std::size_t kTxlMaxHeads = 1024;
inline constexpr std::size_t kTxlMaxHeadDim = std::size_t{1} << 14;
inline constexpr std::int64_t kTxlMaxLength = (std::int64_t{1} << 31) - 1;
// Largest |weight| accepted (trained parameters are O(1)); keeps every score finite in float32.
inline constexpr double kTxlMaxWeight = 1e15;

// The trained parameters of the positional part of one layer (row-major, as the PyTorch tensors are laid out):
//   r_w_bias  u: [heads][d_head]          (MemTransformerLM.r_w_bias; HF TransfoXL: per layer unless untie_r = False)
//   r_r_bias  v: [heads][d_head]          (r_r_bias)
//   r_net     W_R: [heads * d_head][d_model]  (RelPartialLearnableMultiHeadAttn.r_net.weight)
struct TransformerXlWeights {
  std::vector<double> r_w_bias;
  std::vector<double> r_r_bias;
  std::vector<double> r_net;
  friend bool operator==(const TransformerXlWeights&, const TransformerXlWeights&) = default;
};

struct TransformerXlSpec {
  std::size_t d_model = 410;   // columns of R (the sinusoid's d), input size of r_net
  std::size_t heads = 10;      // n_head
  std::size_t d_head = 41;     // length of q, k, u, v
  std::int64_t clamp_len = -1; // > 0: distances clamped to clamp_len; <= 0: none (the code's `if clamp_len > 0`)
  bool same_length = false;    // every query sees the same number of keys (eval.py --same_length)
  std::size_t mem_len = 0;     // the configured memory length: only same_length's mask uses it
  Regime regime = Regime::exact;
  using Weights = TransformerXlWeights;
  friend bool operator==(const TransformerXlSpec&, const TransformerXlSpec&) = default;
};

template <>
struct SpecTraits<TransformerXlSpec> {
  using S = TransformerXlSpec;
  static constexpr std::string_view scheme = "transformer_xl";
  static constexpr std::string_view summary =
      "Transformer-XL relative attention (Dai et al. 2019): ((q + u).k + rel_shift((q + v).W_R R)) / sqrt(d_head), R "
      "the [sin | cos] sinusoid of the distances klen - 1 .. 0 (clamp_len), memory, same_length";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, kTxlMaxLength, false, false, 1, "key positions 0 <= j < 2^31"};
  }

  static constexpr auto fields = std::make_tuple(
      field("d_model", "--d-model", &S::d_model,
            "columns of the sinusoid table R and input size of r_net (pairs sin/cos: even)",
            "CONVENTIONS.md §2.5 (PositionalEmbedding(d_model): inv_freq of arange(0, d_model, 2))",
            +[](const S&) { return Range<std::size_t>{2, kTxlMaxDModel, false, false, 2, "sin and cos come in pairs"}; },
            +[](const S&) { return Range<std::size_t>{2, 48, false, false, 2}; }),
      field("heads", "--heads", &S::heads, "attention heads n_head (rows of r_w_bias, r_r_bias; blocks of r_net)",
            "CONVENTIONS.md §2.5 (n_head)", +[](const S&) { return Range<std::size_t>{1, kTxlMaxHeads}; },
            +[](const S&) { return Range<std::size_t>{1, 3}; }),
      field("d_head", "--d-head", &S::d_head, "length of q, k, u, v per head",
            "CONVENTIONS.md §2.5 (d_head; scale = 1/sqrt(d_head))",
            +[](const S&) { return Range<std::size_t>{1, kTxlMaxHeadDim}; },
            +[](const S&) { return Range<std::size_t>{1, 24}; }),
      field("clamp_len", "--clamp-len", &S::clamp_len,
            "distances above clamp_len use the row of clamp_len; -1 or 0: no clamp",
            "mem_transformer.py MemTransformerLM._forward (pos_seq.clamp_(max=clamp_len) if clamp_len > 0)",
            +[](const S&) {
              return Range<std::int64_t>{-1, kTxlMaxLength, false, false, 1, "-1 or 0: no clamp"};
            },
            +[](const S&) { return Range<std::int64_t>{-1, 300}; }),
      field("same_length", "--same-length", &S::same_length,
            "also hide keys j <= i - s so every query sees the same number of keys (s from mem_len)",
            "mem_transformer.py MemTransformerLM._forward (dec_attn_mask with same_length)"),
      field("mem_len", "--mem-len", &S::mem_len,
            "the model's configured memory length (same_length's mask: s = Lq - (klen - mem_len) if klen > mem_len, "
            "else Lq)",
            "mem_transformer.py MemTransformerLM._forward (mask_len = klen - self.mem_len)",
            +[](const S&) { return Range<std::size_t>{0, static_cast<std::size_t>(kTxlMaxLength)}; },
            +[](const S&) { return Range<std::size_t>{0, 300}; }),
      field("regime", "--regime", &S::regime,
            "the sinusoid table R: exact (the real sin/cos, rounded once) or emulated (PositionalEmbedding's float32 "
            "steps: 1 / 10000 ** (arange(0, d, 2) / d), torch.ger, sin, cos)",
            "DESIGN.md §2; CONVENTIONS.md §2.5; the sinusoidal preset transformer-xl"));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<TransformerXlSpec>::presets(): txl-wt103-base, txl-wt103-large (data in transformer_xl_spec.cpp, with the
// commit read).

// The sinusoidal spec whose table at position p is R's row of distance p: halves, paper rule, dim = d_model, base
// 10000, regime exact or emulated with paper_form = pow (the sinusoidal preset transformer-xl) (validates the spec).
SinusoidalSpec transformer_xl_sinusoidal_spec(const TransformerXlSpec&);

// pos(delta) = min(delta, clamp_len) when clamp_len > 0, else delta (delta >= 0; Error naming "delta" otherwise).
std::int64_t transformer_xl_position(const TransformerXlSpec&, std::int64_t delta);

// Whether key j of query row i is hidden by Transformer-XL's attention mask (j > q_i, or same_length's j <= i - s),
// q_i = key_length - query_length + i (the key_mask of a geometry is the caller's). Validates the lengths
// (check_transformer_xl_lengths) and i < query_length ("i"), j < key_length ("j").
bool transformer_xl_masked(const TransformerXlSpec&, std::size_t i, std::size_t j, std::size_t query_length,
                           std::size_t key_length);

// Throws Error naming "r_w_bias", "r_r_bias" or "r_net" unless each has its size (header) of finite entries with
// |v| <= kTxlMaxWeight (validate(spec) first).
void check_transformer_xl_weights(const TransformerXlSpec&, const TransformerXlWeights&);

// Throws Error naming "key_length" (0 or > 2^31 - 1) or "query_length" (0 or > key_length).
void check_transformer_xl_lengths(std::size_t query_length, std::size_t key_length);

}  // namespace posenc
