// posenc/xlnet_spec.hpp — the one description of XLNet's relative positional and relative segment attention (Yang
// et al. 2019) as HF transformers implements it (models/xlnet/modeling_xlnet.py: XLNetModel.
// relative_positional_encoding, XLNetRelativeAttention.rel_attn_core / rel_shift_bnij, the content stream h).
//
// An XlnetSpec is the structure (sizes, attn_type, the direction of bi_data, clamp_len, same_length, the regime of the
// sinusoid table); the trained parameters come with it as XlnetWeights. The fast path (lib/), the MPFR oracle
// (reference/), the command-line tool and the reports consume these two structs and nothing else; each consumer
// transcribes the definition below itself.
//
// Definition (CONVENTIONS.md §2.9; huggingface/transformers@98ad48f2 src/transformers/models/xlnet/modeling_xlnet.py):
//   Geometry of one call: qlen = Lq queries, klen = Lk = M + Lq keys (M = mlen memory positions first), query row i
//   at key position q_i = M + i (every bias scheme's geometry, posenc/bias.hpp).
//   Distance          delta(i, j) = q_i - j, of either sign.
//   pos_seq           attn_type bi:  klen, klen - 1, ..., -qlen + 1  (rlen = klen + qlen rows; starts at klen: one row
//                                    more than any entry uses, removed by the shift)
//                     attn_type uni: klen, klen - 1, ..., 0           (rlen = klen + 1)
//                     direction backward (bi_data's second half of the batch): every entry negated.
//                     clamp_len > 0: each entry clamped to [-clamp_len, clamp_len].
//                     Row c holds pos_seq[c]; entry (i, j) uses row c(i, j) = Lq - i + j, the one whose unclamped
//                     value is sigma * delta(i, j) (sigma = +1 forward, -1 backward).
//   Table R           R[c][k] = sin(pos_seq[c] w_k), R[c][d/2 + k] = cos(pos_seq[c] w_k), w_k = 10000^(-2k/d_model):
//                     [sin | cos] halves (positional_embedding).
//   Positional keys   k_head_r = einsum('ibh,hnd->ibnd', R, r): P_h[c][e] = sum_m R[c][m] r[m][h][e], r the
//                     parameter [d_model][heads][d_head].
//   Segments          token types t_0 .. t_{Lq-1} of the queries (the call's token_type_ids); the memory keys have
//                     type 0 (mem_pad), key j >= M has type t_{j - M}. s(i, j) = 1 if t_i != type(j), else 0
//                     ("not in the same segment"). Without token types there is no segment term (seg_mat None).
//   Scores of head h, query row i, key j (u = r_w_bias[h], v = r_r_bias[h], s = r_s_bias[h]):
//                     e(i, j) = scale ( <q_i + u, k_j> + <q_i + v, P_h[c(i, j)]> + [types] <q_i + s, seg_embed[s(i, j)][h]> )
//                     scale = 1/sqrt(d_head). In the code: ac + rel_shift_bnij(bd, klen) + ef, times scale.
//                     bi: every entry is defined. uni: defined for j <= q_i only (delta >= 0).
//   rel_shift_bnij    of an [Lq][rlen] matrix x: viewed as [rlen][Lq], the first row dropped, viewed back as
//                     [Lq][rlen - 1], the first klen columns kept: out[i][j] = x[i][Lq - i + j] = x[i][c(i, j)] for
//                     every j in bi; in uni the entries j > q_i are junk x[i + 1][j - q_i - 1] (hidden by uni's mask;
//                     posenc's scores hold -inf there).
//   Mask              bi: none (a key padding mask is the geometry's key_mask; memory keys are never padding; HF's
//                     content stream keeps a query's own key visible even when it is padding, non_tgt_mask: posenc
//                     hides every padded key, which differs only on padding query rows, whose outputs are unused).
//                     uni (create_mask): key j hidden when j > q_i; with same_length also when j < Lq and j < i
//                     (the code adds tril(ones(qlen, qlen), -1) to the first qlen columns). HF subtracts 1e30 from a
//                     hidden score (65500 in float16); posenc's scores hold -inf.
// Regimes (of the table R; the attention is arithmetic of the output type, its budget relative to the magnitudes of
// the terms, DESIGN.md §3):
//   exact     R's entries are the real sin/cos, each rounded once (the sinusoidal scheme's exact table).
//   emulated  relative_positional_encoding's float32 steps, each correctly rounded (the sinusoidal preset xlnet,
//             paper_form = pow): inv_freq = RN32(1 / RN32(torch.pow(10000, RN32(RN32(2k) / d_model)))), the angle
//             RN32(pos inv_freq) (einsum of one product), RN32(sin), RN32(cos).
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

enum class XlnetAttnType { bi, uni };
enum class XlnetDirection { forward, backward };

template <>
struct EnumTraits<XlnetAttnType> {
  static constexpr std::array<EnumValue<XlnetAttnType>, 2> values{{
      {XlnetAttnType::bi, "bi", "bidirectional: pos_seq klen .. -qlen + 1, every entry defined, no mask"},
      {XlnetAttnType::uni, "uni", "unidirectional: pos_seq klen .. 0, keys after the query hidden"},
  }};
};

template <>
struct EnumTraits<XlnetDirection> {
  static constexpr std::array<EnumValue<XlnetDirection>, 2> values{{
      {XlnetDirection::forward, "forward", "pos_seq as is (bi_data: the first half of the batch; bi_data false)"},
      {XlnetDirection::backward, "backward", "-pos_seq (bi_data: the second half of the batch)"},
  }};
};

inline constexpr std::size_t kXlnetMaxDModel = std::size_t{1} << 14;
inline constexpr std::size_t kXlnetMaxHeads = 1024;
inline constexpr std::size_t kXlnetMaxHeadDim = std::size_t{1} << 14;
inline constexpr std::int64_t kXlnetMaxLength = (std::int64_t{1} << 30) - 1;  // klen + qlen rows fit in 2^31
inline constexpr double kXlnetMaxWeight = 1e15;

// The trained parameters of one XLNetRelativeAttention layer that the positional and segment terms use (row-major):
//   r_w_bias, r_r_bias, r_s_bias  [heads][d_head]
//   seg_embed                     [2][heads][d_head]   (index 0: same segment, 1: different segment)
//   r                             [d_model][heads][d_head]
struct XlnetWeights {
  std::vector<double> r_w_bias;
  std::vector<double> r_r_bias;
  std::vector<double> r_s_bias;
  std::vector<double> seg_embed;
  std::vector<double> r;
  friend bool operator==(const XlnetWeights&, const XlnetWeights&) = default;
};

struct XlnetSpec {
  std::size_t d_model = 768;   // columns of R (the sinusoid's d), rows of r
  std::size_t heads = 12;      // n_head
  std::size_t d_head = 64;
  XlnetAttnType attn_type = XlnetAttnType::bi;
  XlnetDirection direction = XlnetDirection::forward;
  std::int64_t clamp_len = -1;  // > 0: pos_seq clamped to [-clamp_len, clamp_len]; <= 0: none
  bool same_length = false;     // uni only: also hide j < min(i, qlen)
  Regime regime = Regime::exact;
  using Weights = XlnetWeights;
  friend bool operator==(const XlnetSpec&, const XlnetSpec&) = default;
};

template <>
struct SpecTraits<XlnetSpec> {
  using S = XlnetSpec;
  static constexpr std::string_view scheme = "xlnet";
  static constexpr std::string_view summary =
      "XLNet relative attention (Yang et al. 2019; HF XLNetModel): ((q + u).k + rel_shift_bnij((q + v).R r) + (q + "
      "s).seg_embed[different segment]) / sqrt(d_head), R the [sin | cos] sinusoid of klen .. -qlen + 1 (bi) or "
      "klen .. 0 (uni), bi_data's backward half, clamp_len of both signs";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, kXlnetMaxLength, false, false, 1, "key positions 0 <= j < 2^30"};
  }

  static constexpr auto fields = std::make_tuple(
      field("d_model", "--d-model", &S::d_model, "columns of the sinusoid table R and rows of r (pairs: even)",
            "CONVENTIONS.md §2.9 (freq_seq = arange(0, d_model, 2))",
            +[](const S&) { return Range<std::size_t>{2, kXlnetMaxDModel, false, false, 2, "sin and cos come in pairs"}; },
            +[](const S&) { return Range<std::size_t>{2, 48, false, false, 2}; }),
      field("heads", "--heads", &S::heads, "attention heads n_head", "CONVENTIONS.md §2.9 (n_head)",
            +[](const S&) { return Range<std::size_t>{1, kXlnetMaxHeads}; },
            +[](const S&) { return Range<std::size_t>{1, 3}; }),
      field("d_head", "--d-head", &S::d_head, "length of q, k and the biases per head (scale = 1/sqrt(d_head))",
            "CONVENTIONS.md §2.9 (d_head)", +[](const S&) { return Range<std::size_t>{1, kXlnetMaxHeadDim}; },
            +[](const S&) { return Range<std::size_t>{1, 24}; }),
      field("attn_type", "--attn-type", &S::attn_type,
            "bi: pos_seq klen .. -qlen + 1, no mask; uni: pos_seq klen .. 0, keys after the query hidden",
            "modeling_xlnet.py relative_positional_encoding, create_mask (XLNetConfig.attn_type = \"bi\")"),
      field("direction", "--direction", &S::direction,
            "forward: pos_seq; backward: -pos_seq (bi_data: the second half of the batch)",
            "modeling_xlnet.py relative_positional_encoding (bi_data: fwd_pos_seq, bwd_pos_seq)"),
      field("clamp_len", "--clamp-len", &S::clamp_len,
            "pos_seq clamped to [-clamp_len, clamp_len]; -1 or 0: no clamp",
            "modeling_xlnet.py relative_positional_encoding (clamp(-clamp_len, clamp_len) if clamp_len > 0)",
            +[](const S&) { return Range<std::int64_t>{-1, kXlnetMaxLength, false, false, 1, "-1 or 0: no clamp"}; },
            +[](const S&) { return Range<std::int64_t>{-1, 300}; }),
      field("same_length", "--same-length", &S::same_length,
            "uni only: also hide key j when j < qlen and j < i (create_mask's mask_lo)",
            "modeling_xlnet.py XLNetModel.create_mask",
            +[](const S& s) {
              return s.attn_type == XlnetAttnType::uni
                         ? BoolChoice{}
                         : BoolChoice{true, false, "same_length changes only uni's mask (bi has none)"};
            }),
      field("regime", "--regime", &S::regime,
            "the sinusoid table R: exact (the real sin/cos, rounded once) or emulated (relative_positional_encoding's "
            "float32 steps: 1 / torch.pow(10000, arange(0, d, 2) / d), einsum, sin, cos)",
            "DESIGN.md §2; CONVENTIONS.md §2.9; the sinusoidal preset xlnet"));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<XlnetSpec>::presets(): xlnet-base-cased, xlnet-large-cased (data in xlnet_spec.cpp).

// The sinusoidal spec whose table at (signed) position p is the row of pos_seq value p: halves, paper rule, dim =
// d_model, base 10000, signed positions, regime exact or emulated with paper_form = pow (the sinusoidal preset xlnet)
// (validates the spec).
SinusoidalSpec xlnet_sinusoidal_spec(const XlnetSpec&);

// Rows of the call's table: klen + qlen (bi) or klen + 1 (uni) (check_xlnet_lengths first).
std::size_t xlnet_table_rows(const XlnetSpec&, std::size_t query_length, std::size_t key_length);

// pos_seq[c] of the call (direction and clamp applied); Error naming "c" unless c < xlnet_table_rows.
std::int64_t xlnet_position(const XlnetSpec&, std::size_t c, std::size_t query_length, std::size_t key_length);

// Whether entry (i, j) is defined (bi: always; uni: j <= q_i) and whether XLNet's mask hides it (uni: j > q_i, or
// same_length's j < min(i, qlen)); the key padding mask of a geometry is the caller's. Validate the lengths and
// i < query_length ("i"), j < key_length ("j").
bool xlnet_defined(const XlnetSpec&, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length);
bool xlnet_masked(const XlnetSpec&, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length);

// Throws Error naming "r_w_bias", "r_r_bias", "r_s_bias", "seg_embed" or "r" unless each has its size (header) of
// finite entries with |v| <= kXlnetMaxWeight (validate(spec) first).
void check_xlnet_weights(const XlnetSpec&, const XlnetWeights&);

// Throws Error naming "key_length" (0 or > 2^30 - 1) or "query_length" (0 or > key_length).
void check_xlnet_lengths(std::size_t query_length, std::size_t key_length);

// Throws Error naming "token_types" unless it is empty (no segment term) or has query_length entries.
void check_xlnet_token_types(std::span<const std::int64_t> token_types, std::size_t query_length);

}  // namespace posenc
