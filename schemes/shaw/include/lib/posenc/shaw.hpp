// posenc/shaw.hpp — fast clipped relative position representations (Shaw et al. / tensor2tensor, HF BERT
// relative_key and relative_key_query): the index matrix of a call, pre-softmax scores and the attention output,
// through cblas, never an L x L x d tensor. Definition: posenc/shaw_spec.hpp; geometry and mask: posenc/bias.hpp.
//
// Plans
//   ShawPlan plan(spec, weights) validates both once and keeps the tables (also rounded to float32 for the f32
//   entry points). A plan is immutable and safe to use from several threads; copies share the data.
//
// Index. idx(i, j) = clip(d(i, j), -k, k) + k with d = j - q_i or q_i - j (spec.sign), q_i = Lk - Lq + i: integer
//   arithmetic, so every entry is exact (claim SHAW-INDEX-*). The matrix is Toeplitz: rows are slices of one vector
//   over the offset u = j - q_i (lib/src/core/bias_rows.hpp).
// Scores of head h (q [heads][Lq][head_dim], k [heads][Lk][head_dim]; the tables shared by every head):
//     e(i, j) = scale (<q_i, k_j> + <q_i, a^K[idx]> + [key_query] <k_j, a^K[idx]>)
//   computed as: P = scale Q A^T (a gemm, Lq x (2k + 1)), with key_query also R = scale K A^T (Lk x (2k + 1)); the
//   rows b(i, j) = P[i][idx] + R[j][idx] (one rounding) written with the mask; then a beta = 1 gemm adds
//   scale Q K^T (core::fused_scores). scale defaults to 1/sqrt(head_dim) (std::nullopt), as every implementation
//   named in the spec uses. The error is bounded by the budget row shaw.scores.* (schemes/shaw/budget.cpp).
// Output of head h (v [heads][Lk][head_dim]):
//     z_i = sum_j alpha(i, j) (v_j + [values] a^V[idx(i, j)]),  alpha(i, .) = softmax over the visible keys
//   per block of query rows: the scores as above, the softmax (max subtracted, exp in the type, the sum in double),
//   Z = alpha V (a gemm), and with values the weights summed per index, C[i][r] = sum_{idx(i, j) = r} alpha(i, j),
//   then Z += C A^V (a gemm over the 2k + 1 rows): O(L^2 + L (2k + 1) d) work besides the two L x L x d gemms.
//   A row whose keys are all masked (causal mask with a key mask that hides every key it sees) has no softmax:
//   Error naming "key_mask".
// Reproducibility: index rows depend only on (i, j) and the spec. Scores and outputs are computed in a fixed order
//   of calls for a given geometry (per head, per block of rows); the BLAS library's own threading decides its sums'
//   order, so two runs with OpenBLAS threads give the same bytes only when OpenBLAS itself is deterministic for
//   that shape (it is for a fixed thread count on a given machine).
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
#include "posenc/error.hpp"
#include "posenc/options.hpp"
#include "posenc/shaw_spec.hpp"

namespace posenc {

class ShawPlan {
 public:
  ShawPlan(const ShawSpec& spec, const ShawWeights& weights);
  const ShawSpec& spec() const noexcept;
  const ShawWeights& weights() const noexcept;

  // idx for the offset u = j - q_i (the key u positions after the query): clip(sign u, -k, k) + k. |u| <= 2^31 - 1
  // (Error naming "u"); with clip = false |u| <= k (Error naming "u").
  std::int32_t index(std::int64_t u) const;

  // The index matrix [query_length][key_length] (the geometry's mask does not apply: indices). Error naming
  // "key_length" when clip = false and key_length > k + 1.
  void indices(const BiasGeometry&, std::span<std::int32_t> out, const TableOptions& = {}) const;

  // scores[h][i][j] (+ the mask) for `heads` heads; scale std::nullopt = 1/sqrt(head_dim).
  void scores(std::span<const float> q, std::span<const float> k, std::size_t heads, const BiasGeometry&,
              std::optional<double> scale, std::span<float> out, const TableOptions& = {}) const;
  void scores(std::span<const double> q, std::span<const double> k, std::size_t heads, const BiasGeometry&,
              std::optional<double> scale, std::span<double> out, const TableOptions& = {}) const;

  // out[h][i][c] = z_i of head h (head_dim values per row).
  void attend(std::span<const float> q, std::span<const float> k, std::span<const float> v, std::size_t heads,
              const BiasGeometry&, std::optional<double> scale, std::span<float> out, const TableOptions& = {}) const;
  void attend(std::span<const double> q, std::span<const double> k, std::span<const double> v, std::size_t heads,
              const BiasGeometry&, std::optional<double> scale, std::span<double> out, const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline ShawPlan make_plan(const ShawSpec& spec, const ShawWeights& weights) { return ShawPlan(spec, weights); }

// Values of a scores matrix: heads * query_length * key_length (validates the spec and the geometry).
std::size_t shaw_scores_size(const ShawSpec&, std::size_t heads, const BiasGeometry&);

// idx for offset u for a spec alone (no tables needed).
std::int32_t shaw_index(const ShawSpec&, std::int64_t u);

}  // namespace posenc
