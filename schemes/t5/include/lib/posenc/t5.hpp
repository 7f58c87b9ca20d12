// posenc/t5.hpp — fast T5 relative attention bias: the bucket of every relative position, the bucket and bias
// matrices of a call, and pre-softmax scores with the bias fused. Definition: posenc/t5_spec.hpp; geometry and
// mask: posenc/bias.hpp.
//
// Plans
//   T5Plan plan(spec, weights) validates both once and finds, for its regime, where each bucket of a side begins
//   (thresholds()): the bucket of any distance is then a lookup. A plan is immutable and safe to use from several
//   threads; copies share the data.
//
// Buckets. bucket(r) for the relative position r = j - q_i, |r| < 2^31:
//   exact  the floor of the real value v(a) = ln(a / me) / ln(md / me) (n - me), decided exactly: v in binary128
//          (within ~2^-100 absolute), and where that is within 2^-80 of an integer t, the exact comparison
//          a^(n-me) me^t >= md^t me^(n-me) in GMP integers (so a = 16 in (32, 128) is bucket 10, not 9).
//   hf     HF's float32 steps of t5_spec.hpp, each correctly rounded (float32 division and product; the log through
//          core::rn32_log, double with a binary128 fallback near rounding boundaries).
//   Both are non-decreasing in a = |r| (each step is monotone), so the plan stores the first distance of every
//   bucket me + t (t = 1 .. n - me - 1) and looks a distance up among them (claim T5-BUCKET-*).
// Values. The bias of head h for a key u = j - q_i positions after the query is table[bucket(u)][h] rounded once to
// the output type (no arithmetic: a float32 table gives its own numbers in float32 output). It depends only on
// (h, u): every call, geometry and thread count gives the same value (claim T5-REPRO-1). Rows are slices of one
// per-head vector over u (lib/src/core/bias_rows.hpp).
// Scores. scores(q, k, ...) writes scale * <q_h,i, k_h,j> + bias_h(i, j) (+ the mask; T5 itself uses scale 1: it
// does not divide by sqrt(d)), the bias rows first and then a cblas ?gemm accumulating into them (beta = 1).
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
#include "posenc/options.hpp"
#include "posenc/t5_spec.hpp"

namespace posenc {

// Values of a bias matrix: heads * query_length * key_length (validates the spec and the geometry).
std::size_t t5_bias_size(const T5Spec&, const BiasGeometry&);

class T5Plan {
 public:
  T5Plan(const T5Spec& spec, const T5Weights& weights);
  const T5Spec& spec() const noexcept;
  const T5Weights& weights() const noexcept;

  // The bucket of relative position r = j - q_i (|r| <= 2^31 - 1; Error naming "r").
  std::int32_t bucket(std::int64_t r) const;
  // thresholds()[t - 1]: the least distance a = |r| (bidirectional) or -r (unidirectional) whose bucket within its
  // side is me + t, for t = 1 .. n - me - 1 (distances below me are their own bucket; from the last threshold on,
  // n - 1). Non-decreasing; a threshold may repeat (a bucket no distance reaches) in the hf regime or for large n.
  std::span<const std::int64_t> thresholds() const noexcept;

  // The bucket matrix [query_length][key_length] of a geometry (its mask and key_mask do not apply: indices).
  void buckets(const BiasGeometry&, std::span<std::int32_t> out, const TableOptions& = {}) const;
  // The bias matrix [heads][query_length][key_length] (with the geometry's mask).
  void bias(const BiasGeometry&, std::span<float> out, const TableOptions& = {}) const;
  void bias(const BiasGeometry&, std::span<double> out, const TableOptions& = {}) const;

  // scores[h][i][j] = scale * <q[h][i], k[h][j]> + bias (+ mask); q [heads][Lq][head_dim], k [heads][Lk][head_dim].
  void scores(std::span<const float> q, std::span<const float> k, std::size_t head_dim, const BiasGeometry&,
              double scale, std::span<float> out, const TableOptions& = {}) const;
  void scores(std::span<const double> q, std::span<const double> k, std::size_t head_dim, const BiasGeometry&,
              double scale, std::span<double> out, const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline T5Plan make_plan(const T5Spec& spec, const T5Weights& weights) { return T5Plan(spec, weights); }

// The bucket of r for a spec alone (no table needed): builds the spec's thresholds each call (use a plan to repeat).
std::int32_t t5_bucket(const T5Spec&, std::int64_t r);

}  // namespace posenc
