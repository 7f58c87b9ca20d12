// posenc/kerple.hpp — fast KERPLE: the kernelized relative bias matrices -p ln(1 + a d) and -a d^p, and
// pre-softmax scores with the bias fused. Definition: posenc/kerple_spec.hpp; geometry and mask: posenc/bias.hpp.
//
// Plans
//   KerplePlan plan(spec, weights) validates both once and clamps the parameters as the regime does
//   (kerple_effective_p / _a). A plan is immutable and safe to use from several threads; copies share the data.
//
// Values. The bias of head h at distance d (d = q_i - j for a key at or before the query, 0 after it):
//   exact, float output:   evaluated in double (log1p / pow, relative error < 2^-50 with the products), rounded
//                          to float, and re-evaluated in binary128 whenever the double lies within 2^-48 relative
//                          of a float rounding boundary: the float is the correctly rounded real value (up to
//                          binary128's 2^-110 relative error); budget rows kerple.bias.exact.f32.
//   exact, double output:  evaluated in binary128 (log1pq / powq: libquadmath, or glibc on AArch64; < 2^-108) and
//                          rounded once: within 0.5 ulp + 2^-50 ulp; budget rows kerple.bias.exact.f64.
//   megatron:              the float32 steps of kerple_spec.hpp, each correctly rounded (log and pow evaluated in
//                          double and rounded to float32, re-evaluated in binary128 near a float32 rounding
//                          boundary, as above); a double output holds the same float32 values.
// A bias depends only on (h, d): every value a (head, distance) gets is the same in every call, geometry, row and
// thread count (claim KERPLE-REPRO-1). Rows are slices of one per-head vector (lib/src/core/bias_rows.hpp).
// Every value at d = 0 (the diagonal, and every key after the query when mask = none) is -0.0.
//
// Scores. scores(q, k, ...) writes scale * <q_h,i, k_h,j> + bias_h(i, j) (+ the mask), the bias rows first and then
// a cblas ?gemm accumulating into them (beta = 1); with the causal mask per block of 256 query rows up to the last
// key the block sees. q is [heads][Lq][head_dim], k [heads][Lk][head_dim], dense. TableOptions::threads applies to
// the bias rows; the gemm runs with OpenBLAS's own thread count.
//
// Every function validates what it is given and throws posenc::Error naming the parameter; nothing is read or
// written outside the spans passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "posenc/bias.hpp"
#include "posenc/error.hpp"
#include "posenc/kerple_spec.hpp"
#include "posenc/options.hpp"

namespace posenc {

// Values of a bias matrix: heads * query_length * key_length (validates the spec and the geometry).
std::size_t kerple_bias_size(const KerpleSpec&, const BiasGeometry&);

class KerplePlan {
 public:
  KerplePlan(const KerpleSpec& spec, const KerpleWeights& weights);
  const KerpleSpec& spec() const noexcept;
  const KerpleWeights& weights() const noexcept;  // as given (before the clamp)

  // The clamped parameters the regime uses (megatron: float32 values).
  std::span<const double> p() const noexcept;
  std::span<const double> a() const noexcept;

  // The bias of head h at distance d (0 <= d < 2^31): exactly the value every bias matrix and score row of this
  // plan holds for it. Throws Error naming "head" or "d".
  float bias_value_f32(std::size_t head, std::int64_t d) const;
  double bias_value_f64(std::size_t head, std::int64_t d) const;

  // The bias matrix [heads][query_length][key_length].
  void bias(const BiasGeometry&, std::span<float> out, const TableOptions& = {}) const;
  void bias(const BiasGeometry&, std::span<double> out, const TableOptions& = {}) const;

  // scores[h][i][j] = scale * <q[h][i], k[h][j]> + bias (+ mask); accuracy: budget rows kerple.scores.*.
  void scores(std::span<const float> q, std::span<const float> k, std::size_t head_dim, const BiasGeometry&,
              double scale, std::span<float> out, const TableOptions& = {}) const;
  void scores(std::span<const double> q, std::span<const double> k, std::size_t head_dim, const BiasGeometry&,
              double scale, std::span<double> out, const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline KerplePlan make_plan(const KerpleSpec& spec, const KerpleWeights& weights) { return KerplePlan(spec, weights); }

// One-shot forms.
void kerple_bias(const KerpleSpec&, const KerpleWeights&, const BiasGeometry&, std::span<float> out,
                 const TableOptions& = {});
void kerple_bias(const KerpleSpec&, const KerpleWeights&, const BiasGeometry&, std::span<double> out,
                 const TableOptions& = {});

}  // namespace posenc
