// posenc/xlnet.hpp — fast XLNet relative attention (the content stream of HF's XLNetRelativeAttention): the sinusoid
// table of a call, the row each score entry reads, the segment term ef alone, pre-softmax scores with the relative
// segment term through cblas
// (posenc/relative_attention.hpp), and the code's rel_shift_bnij itself. Definition: posenc/xlnet_spec.hpp;
// geometry and key mask: posenc/bias.hpp.
//
// Plans
//   XlnetPlan plan(spec, weights) validates both once, keeps the weights (also rounded to float32 for the f32 entry
//   points) and the sinusoidal plan of the table (xlnet_sinusoidal_spec). Immutable, thread-safe; copies share data.
//
// Table. table(Lq, Lk, out): R [rows][d_model] (rows = Lk + Lq for bi, Lk + 1 for uni), row c the sinusoid of
//   pos_seq[c] (direction and clamp_len applied): the sinusoidal plan's rows (budget rows sinusoidal.table.*, claims
//   SIN-REPRO-1/2: a position's row is the same bytes in every call; the row of -p is the row of p with its sines
//   negated, which makes the backward direction's table the mirror of the forward one).
// Indices. indices(geometry, out): c(i, j) = Lq - i + j (= Lk - q_i + j), -1 where undefined (uni: j > q_i).
// Scores of head h (q [heads][Lq][d_head], k [heads][Lk][d_head]; token_types: none or Lq types of the queries,
//   the memory keys having type 0):
//     e(i, j) = scale ( <q_i + r_w_bias_h, k_j> + <q_i + r_r_bias_h, P_h[c(i, j)]>
//                       + [token types] <q_i + r_s_bias_h, seg_embed[s(i, j)][h]> ),  P_h = R r[:, h, :]
//   P_h by one gemm per head; then the blas or the direct form. -inf where undefined, where uni's mask (same_length
//   included) hides the key, and at keys the geometry's key_mask hides (HF subtracts 1e30 there instead). scale
//   std::nullopt = 1/sqrt(d_head). Error bound: budget rows xlnet.scores.* (schemes/xlnet/budget.cpp).
// Segment term. segment_term(q, Lq, Lk, token_types, out): HF's ef (rel_attn_core: einsum("ibnd,snd->ibns", q_head +
//   r_s_bias, seg_embed), then einsum("ijbs,ibns->bnij", seg_mat, .)) alone, unscaled and unmasked, [heads][Lq][Lk]:
//     ef[h][i][j] = <RN_T(q_i + r_s_bias_h), seg_embed[s(i, j)][h]>,  s(i, j) = 1 iff t_i != type(j) (memory keys:
//     type 0), token_types exactly Lq entries (there is no segment term without them).
//   Per row (h, i) the two values (same, different segment) are computed once, in T: x_e = RN_T(q_e + s_e) (the
//   code's q_head + r_s_bias, one add), then acc = 0, acc = RN_T(acc + RN_T(x_e g_e)) for e = 0 .. d_head - 1 in that
//   order, products never fused (lib/ is built with -ffp-contract=off; claim XLNET-SEGMENT-2 would see a fused one
//   only as a smaller error); the row is then filled with them (the second einsum is exact: one-hot times a value
//   plus 0 times the other). Rows split over threads statically: the same bits for any thread count. Error bound
//   (Higham Lemma 3.3 on the add and the d_head-term sum): |ef - T| <= gamma_{d_head+1}(u) S + (2 d_head + 1) 2^-150
//   (f32; 2^-1075 for f64), T = sum_e (q_e + s_e) g_e exact, S = sum_e |q_e + s_e| |g_e| (budget rows
//   xlnet.segment.f32 / .f64, claim XLNET-SEGMENT-2). Errors name "key_length" / "query_length"
//   (check_xlnet_lengths), "token_types" (not exactly Lq entries), "q" (not heads * Lq * d_head values) or "out" (not
//   heads * Lq * Lk values).
// rel_shift. xlnet_rel_shift(x, Lq, rows, Lk, out) is modeling_xlnet.py's rel_shift_bnij of one [Lq][rows] matrix
//   (viewed [rows][Lq], first row dropped, viewed [Lq][rows - 1], the first Lk columns kept), bit for bit: out[i][j]
//   = x[i][Lq - i + j], which for uni's j > q_i is the code's junk x[i + 1][j - q_i - 1].
//
// Every function validates what it is given and throws posenc::Error naming the parameter; nothing is read or
// written outside the spans passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "posenc/bias.hpp"
#include "posenc/options.hpp"
#include "posenc/relative_attention.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/xlnet_spec.hpp"

namespace posenc {

class XlnetPlan {
 public:
  XlnetPlan(const XlnetSpec& spec, const XlnetWeights& weights);
  const XlnetSpec& spec() const noexcept;
  const XlnetWeights& weights() const noexcept;
  const SinusoidalPlan& sinusoid() const noexcept;

  // R of a call (lengths: check_xlnet_lengths); out.size() >= rows * d_model (else Error naming "out.size()").
  void table(std::size_t query_length, std::size_t key_length, std::span<float> out, const TableOptions& = {}) const;
  void table(std::size_t query_length, std::size_t key_length, std::span<double> out, const TableOptions& = {}) const;

  // c(i, j) or -1, [query_length][key_length].
  void indices(const BiasGeometry&, std::span<std::int32_t> out, const TableOptions& = {}) const;

  // scores[h][i][j] for the spec's heads; out.size() == heads * Lq * Lk; token_types empty or Lq entries.
  void scores(std::span<const float> q, std::span<const float> k, const BiasGeometry&,
              std::span<const std::int64_t> token_types, std::optional<double> scale, std::span<float> out,
              const TableOptions& = {}, RelativeScoresForm = RelativeScoresForm::blas) const;
  void scores(std::span<const double> q, std::span<const double> k, const BiasGeometry&,
              std::span<const std::int64_t> token_types, std::optional<double> scale, std::span<double> out,
              const TableOptions& = {}, RelativeScoresForm = RelativeScoresForm::blas) const;

  // ef[h][i][j] (header: Segment term): out.size() == heads * query_length * key_length, q [heads][Lq][d_head],
  // token_types exactly query_length entries.
  void segment_term(std::span<const float> q, std::size_t query_length, std::size_t key_length,
                    std::span<const std::int64_t> token_types, std::span<float> out, const TableOptions& = {}) const;
  void segment_term(std::span<const double> q, std::size_t query_length, std::size_t key_length,
                    std::span<const std::int64_t> token_types, std::span<double> out, const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline XlnetPlan make_plan(const XlnetSpec& spec, const XlnetWeights& weights) { return XlnetPlan(spec, weights); }

// heads * query_length * key_length (validates the spec and the geometry's lengths).
std::size_t xlnet_scores_size(const XlnetSpec&, const BiasGeometry&);

// One-shot table: the same numbers as a plan's table(), from the sinusoidal plan alone.
void xlnet_table(const XlnetSpec&, std::size_t query_length, std::size_t key_length, std::span<float> out,
                 const TableOptions& = {});
void xlnet_table(const XlnetSpec&, std::size_t query_length, std::size_t key_length, std::span<double> out,
                 const TableOptions& = {});

// modeling_xlnet.py's rel_shift_bnij of x [query_length][rows], keeping key_length columns (key_length <= rows - 1),
// into out [query_length][key_length], bit for bit. Errors name "rows", "query_length", "key_length", "x" or "out".
void xlnet_rel_shift(std::span<const float> x, std::size_t query_length, std::size_t rows, std::size_t key_length,
                     std::span<float> out);
void xlnet_rel_shift(std::span<const double> x, std::size_t query_length, std::size_t rows, std::size_t key_length,
                     std::span<double> out);

}  // namespace posenc
