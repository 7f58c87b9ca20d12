// posenc/transformer_xl.hpp — fast Transformer-XL relative attention: the sinusoid table R of a call, the row of R
// each score entry reads, pre-softmax scores through cblas (posenc/relative_attention.hpp), and the code's
// _rel_shift itself. Definition: posenc/transformer_xl_spec.hpp; geometry and key mask: posenc/bias.hpp.
//
// Plans
//   TransformerXlPlan plan(spec, weights) validates both once, keeps the weights (also rounded to float32 for the f32
//   entry points) and the sinusoidal plan of the table (transformer_xl_sinusoidal_spec: exact, or the float32 steps
//   of PositionalEmbedding). A plan is immutable and safe to use from several threads; copies share the data.
//
// Table. table(key_length, out): R [key_length][d_model], row c the sinusoid of pos(key_length - 1 - c) (clamp_len):
//   the sinusoidal plan's rows, under its accuracy contract (budget rows sinusoidal.table.*) and its reproducibility
//   (claim SIN-REPRO-1: a distance's row is the same bytes in every call).
// Indices. indices(geometry, out): c(i, j) = key_length - 1 - (q_i - j) for j <= q_i, -1 where the entry is
//   undefined (j > q_i): integers, exact.
// Scores of head h (q [heads][Lq][d_head], k [heads][Lk][d_head], q_i = Lk - Lq + i):
//     e(i, j) = scale ( <q_i + u_h, k_j> + <q_i + v_h, P_h[c(i, j)]> ),  P_h = R W_h^T (W_h: rows h d_head .. of r_net)
//   P_h by one gemm per head over the call's table, then the blas form (one gemm per block of 256 query rows against
//   the table rows the block reads, the shift as a contiguous copy, the content term as a beta = 1 gemm over the
//   visible keys) or the direct form (explicit dot products). -inf where j > q_i (undefined), where same_length's
//   mask hides the key, and at keys the geometry's key_mask hides. scale std::nullopt = 1/sqrt(d_head). Error bound:
//   budget rows transformer_xl.scores.* (schemes/transformer_xl/budget.cpp).
// rel_shift. transformer_xl_rel_shift(x, Lq, Lk, out) is mem_transformer.py's _rel_shift of an [Lq][Lk] matrix (zero
//   column in front, viewed as [Lk + 1][Lq], first row dropped, viewed back), bit for bit: out[i][j] = x[i][c(i, j)]
//   for j <= q_i, and the code's junk elsewhere (0 at j = q_i + 1, x[i + 1][j - q_i - 2] beyond).
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
#include "posenc/transformer_xl_spec.hpp"

namespace posenc {

class TransformerXlPlan {
 public:
  TransformerXlPlan(const TransformerXlSpec& spec, const TransformerXlWeights& weights);
  const TransformerXlSpec& spec() const noexcept;
  const TransformerXlWeights& weights() const noexcept;
  // The sinusoidal plan of R (position p = distance p).
  const SinusoidalPlan& sinusoid() const noexcept;

  // R of a call with key_length keys (1 .. 2^31 - 1, Error naming "key_length"); out.size() >= key_length * d_model
  // (else Error naming "out.size()").
  void table(std::size_t key_length, std::span<float> out, const TableOptions& = {}) const;
  void table(std::size_t key_length, std::span<double> out, const TableOptions& = {}) const;

  // c(i, j) or -1, [query_length][key_length] (the geometry's masks do not apply to an index).
  void indices(const BiasGeometry&, std::span<std::int32_t> out, const TableOptions& = {}) const;

  // scores[h][i][j] for the spec's heads; out.size() == heads * Lq * Lk.
  void scores(std::span<const float> q, std::span<const float> k, const BiasGeometry&, std::optional<double> scale,
              std::span<float> out, const TableOptions& = {}, RelativeScoresForm = RelativeScoresForm::blas) const;
  void scores(std::span<const double> q, std::span<const double> k, const BiasGeometry&, std::optional<double> scale,
              std::span<double> out, const TableOptions& = {}, RelativeScoresForm = RelativeScoresForm::blas) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline TransformerXlPlan make_plan(const TransformerXlSpec& spec, const TransformerXlWeights& weights) {
  return TransformerXlPlan(spec, weights);
}

// heads * query_length * key_length (validates the spec and the geometry's lengths).
std::size_t transformer_xl_scores_size(const TransformerXlSpec&, const BiasGeometry&);

// One-shot table: the same numbers as a plan's table(), from the sinusoidal plan alone (no weights needed).
void transformer_xl_table(const TransformerXlSpec&, std::size_t key_length, std::span<float> out,
                          const TableOptions& = {});
void transformer_xl_table(const TransformerXlSpec&, std::size_t key_length, std::span<double> out,
                          const TableOptions& = {});

// mem_transformer.py's _rel_shift of x [query_length][key_length] into out (same size), bit for bit (header).
// Errors name "query_length", "key_length", "x" or "out" (sizes).
void transformer_xl_rel_shift(std::span<const float> x, std::size_t query_length, std::size_t key_length,
                              std::span<float> out);
void transformer_xl_rel_shift(std::span<const double> x, std::size_t query_length, std::size_t key_length,
                              std::span<double> out);

}  // namespace posenc
