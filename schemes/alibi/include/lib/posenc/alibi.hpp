// posenc/alibi.hpp — fast ALiBi: per-head slopes, bias matrices, and pre-softmax scores with the bias fused.
//
// Plans
//   AlibiPlan plan = make_plan(spec) validates the spec once and computes the slopes of its regime (definition:
//   posenc/alibi_spec.hpp). A plan is immutable and safe to use from several threads; copies share the data.
//
// Values. The bias of head h at (query row i, key j) is m_h * x with x the integer its variant multiplies:
//   exact regime:   m_h held in double-double (from binary128 exp2, relative error < 2^-104), the product formed
//                   with one fma and rounded once to the output type; within 0.5 ulp + 2^-40 ulp in double and
//                   0.5 ulp + 2^-28 ulp in float (a double rounding needs the product within 2^-53 of a float32
//                   midpoint); budget rows alibi.bias.exact.*.
//   emulated:       the regime's float32 slope (computed once, binary128 pow/exp2 rounded as the named code's
//                   steps, each correctly rounded), then RN32(RN32(x) * slope) in float32 arithmetic; a double
//                   output holds the same float32 values.
// A bias depends only on (h, the variant's x): every value a (head, distance) gets is the same in every call,
// geometry, row and thread count (claim ALIBI-REPRO-1). Rows are written as slices of one per-head vector of
// the values at every distance (computed once per call), so a whole matrix costs about one store per value.
//
// Geometry. key_length keys at positions 0..Lk-1; the query_length queries are the last Lq of them (query row
// i at position q_i = Lk - Lq + i). key_mask (key_length entries, 1 = token, 0 = padding) is what BLOOM's
// key_counted variant counts positions over; empty means every key is a token. mask = causal writes -inf where
// key j is not visible from query row i: j > q_i, or key_mask[j] == 0 when a key_mask is given (what an
// implementation adds to the scores in the end; the symmetric variant of bidirectional encoders is normally used
// with mask = none).
//
// Scores. scores(q, k, ...) writes scale * <q_h,i, k_h,j> + bias_h(i, j) (+ the mask): the bias rows are written
// first, then cblas ?gemm accumulates into them (beta = 1) — the same memory traffic as a plain gemm, which first
// clears its output (beta = 0). With mask = causal the gemm runs per block of 256 query rows and stops at the last
// key the block sees (the masked entries stay -inf): about half the work of a square matrix. q is
// [heads][Lq][head_dim], k [heads][Lk][head_dim], dense. TableOptions::threads applies to the bias rows; the gemm
// runs with OpenBLAS's own thread count (OPENBLAS_NUM_THREADS / openblas_set_num_threads), as RopePlan::scores.
//
// Every function validates what it is given and throws posenc::Error naming the parameter; nothing is read or
// written outside the spans passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "posenc/alibi_spec.hpp"
#include "posenc/bias.hpp"
#include "posenc/error.hpp"
#include "posenc/options.hpp"

namespace posenc {

// Values of a bias matrix: heads * query_length * key_length.
std::size_t alibi_bias_size(const AlibiSpec&, const BiasGeometry&);

class AlibiPlan {
 public:
  explicit AlibiPlan(const AlibiSpec& spec);
  const AlibiSpec& spec() const noexcept;

  // m_h as the fast path uses it: exact regime, the real slope rounded to double; emulated regimes, the
  // regime's float32 slope.
  std::span<const double> slopes() const noexcept;

  // The bias of head h for the integer x its variant multiplies (|x| < 2^31): exactly the value every bias
  // matrix and score row of this plan holds for it (relative: x = j - q_i; key: j; key_shifted: j - (Lk - 1);
  // key_counted: c_j; symmetric: -|q_i - j|). Throws Error naming "head" or "x".
  float bias_value_f32(std::size_t head, std::int64_t x) const;
  double bias_value_f64(std::size_t head, std::int64_t x) const;

  // The bias matrix [heads][query_length][key_length].
  void bias(const BiasGeometry&, std::span<float> out, const TableOptions& = {}) const;
  void bias(const BiasGeometry&, std::span<double> out, const TableOptions& = {}) const;

  // scores[h][i][j] = scale * <q[h][i], k[h][j]> + bias (+ mask); q [heads][Lq][head_dim], k [heads][Lk][head_dim].
  // Accuracy: budget rows alibi.scores.*.
  void scores(std::span<const float> q, std::span<const float> k, std::size_t head_dim, const BiasGeometry&,
              double scale, std::span<float> out, const TableOptions& = {}) const;
  void scores(std::span<const double> q, std::span<const double> k, std::size_t head_dim, const BiasGeometry&,
              double scale, std::span<double> out, const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline AlibiPlan make_plan(const AlibiSpec& spec) { return AlibiPlan(spec); }

// The float64 list ofirpress's get_slopes(n) returns (ofirpress/attention_with_linear_biases@4b92f28a
// fairseq/models/transformer.py; gpt-neox AliBi's is the same code): for a power of two c, start = 2**(-2**-(log2(c)-3))
// = RN64(2^(-8/c)) and [start * start**i for i in range(c)]; otherwise get_slopes_power_of_2(c) +
// get_slopes(2c)[0::2][:n - c] with c = 2**floor(log2(n)). Each ** and * correctly rounded to double (Python's float
// pow is the C library's: within an ulp, almost always correctly rounded). The ofirpress regime's float32 slopes are
// these values rounded to float. Error naming "heads" unless 1 <= n <= kAlibiMaxHeads.
std::vector<double> alibi_get_slopes(std::size_t heads);

// One-shot forms.
std::vector<double> alibi_slopes(const AlibiSpec&);
void alibi_bias(const AlibiSpec&, const BiasGeometry&, std::span<float> out, const TableOptions& = {});
void alibi_bias(const AlibiSpec&, const BiasGeometry&, std::span<double> out, const TableOptions& = {});

}  // namespace posenc
