// posenc/fire.hpp — fast FIRE: the bias matrices MLP(ln(|c| d + 1) / (ln(|c| max(q, L) + 1) + eps)) and pre-softmax
// scores with the bias fused. Definition: posenc/fire_spec.hpp; geometry and mask: posenc/bias.hpp.
//
// Plans
//   FirePlan plan(spec, weights) validates both once and prepares the per-head constants (the float32 weights of the
//   cramming regime; the scales P_h = |b2| + sum |W2 b1|, Q_h = sum |W2 W1| of the exact regime's error bound).
//   A plan is immutable and safe to use from several threads; copies share the data.
//
// Values. The bias of head h for a query at position q and a key at position j (d = |q - j|):
//   cramming:              the float32 steps of fire_spec.hpp, each correctly rounded (ln evaluated in double and
//                          rounded to float32, re-evaluated in binary128 when the double lies within 2^-48 relative
//                          of a float32 rounding boundary; the float32 products, sums, quotient and the second
//                          Linear's accumulation in the spec's mlp_sum order, fused (std::fma) or each product and
//                          sum rounded, are IEEE operations); a double output holds the same float32 values. Bit for
//                          bit against correctly rounded float32 steps in that one order (budget rows
//                          fire.bias.emulated.bitwise, fire.bias.emulated.unfused.bitwise); PyTorch's addmm sums in
//                          its BLAS kernel's order and its float32 log is Sleef's: a real run lies within the
//                          envelope of budget row fire.check.envelope (any order), which `posenc check fire` applies.
//   exact, double output:  x in double (log1p twice, one quotient: relative error < 2^-49), then the MLP in double
//                          with fused multiply-adds: |out - b| <= (w + 16) 2^-53 S, S = |b2| + sum_k |W2[h][k]|
//                          (|W1[k]| x + |b1[k]|) (budget row fire.bias.exact.f64; not correctly rounded where the sum
//                          cancels).
//   exact, float output:   the double value rounded to float unless it lies within (w + 16) 2^-53 S of a float
//                          rounding boundary; then x and the MLP are re-evaluated in binary128 (logq; error
//                          <= (w + 16) 2^-112 S) and that is rounded: the float is the correctly rounded bias except
//                          within (w + 16) 2^-112 S of a boundary (budget row fire.bias.exact.f32).
// Rows whose query position is at or below the threshold L share one function of d: they are evaluated once per
// head and copied; every other row evaluates its own. The value of (h, q, j) is the same in every call, geometry and
// thread count (claim FIRE-REPRO-1). The bias is symmetric in j about q: with mask = none the keys after the query
// get the value at their distance (the reference's |i - j|).
//
// Scores. scores(q, k, ...) writes scale * <q_h,i, k_h,j> + bias_h(i, j) (+ the mask), the bias rows first and then
// a cblas ?gemm accumulating into them (beta = 1), as every bias scheme (lib/src/core/bias_rows.hpp).
//
// Every function validates what it is given (the key length is at most 2^24) and throws posenc::Error naming the
// parameter; nothing is read or written outside the spans passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "posenc/bias.hpp"
#include "posenc/error.hpp"
#include "posenc/fire_spec.hpp"
#include "posenc/options.hpp"

namespace posenc {

// Values of a bias matrix: heads * query_length * key_length (validates the spec and the geometry).
std::size_t fire_bias_size(const FireSpec&, const BiasGeometry&);

class FirePlan {
 public:
  FirePlan(const FireSpec& spec, const FireWeights& weights);
  const FireSpec& spec() const noexcept;
  const FireWeights& weights() const noexcept;

  // The threshold L = |L_multiplier init_L| as the regime uses it (cramming: the float32 value; exact: the double
  // nearest the exact product).
  double threshold() const noexcept;

  // x(q, j), the MLP's input, as the regime computes it (cramming: the float32 x; exact: the double evaluation).
  // Throws Error naming "q" or "j" outside [0, 2^24).
  double normalized_distance(std::int64_t q, std::int64_t j) const;

  // The bias of head h for query position q and key position j: exactly the value every bias matrix and score row
  // of this plan holds for it. Throws Error naming "head", "q" or "j".
  float bias_value_f32(std::size_t head, std::int64_t q, std::int64_t j) const;
  double bias_value_f64(std::size_t head, std::int64_t q, std::int64_t j) const;

  // The bias matrix [heads][query_length][key_length].
  void bias(const BiasGeometry&, std::span<float> out, const TableOptions& = {}) const;
  void bias(const BiasGeometry&, std::span<double> out, const TableOptions& = {}) const;

  // scores[h][i][j] = scale * <q[h][i], k[h][j]> + bias (+ mask); accuracy: budget rows fire.scores.*.
  void scores(std::span<const float> q, std::span<const float> k, std::size_t head_dim, const BiasGeometry&,
              double scale, std::span<float> out, const TableOptions& = {}) const;
  void scores(std::span<const double> q, std::span<const double> k, std::size_t head_dim, const BiasGeometry&,
              double scale, std::span<double> out, const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline FirePlan make_plan(const FireSpec& spec, const FireWeights& weights) { return FirePlan(spec, weights); }

// One-shot forms.
void fire_bias(const FireSpec&, const FireWeights&, const BiasGeometry&, std::span<float> out, const TableOptions& = {});
void fire_bias(const FireSpec&, const FireWeights&, const BiasGeometry&, std::span<double> out,
               const TableOptions& = {});

}  // namespace posenc
