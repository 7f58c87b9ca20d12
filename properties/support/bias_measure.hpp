// properties/support/bias_measure.hpp — what the measuring harnesses of the additive-bias schemes (ALiBi, KERPLE, ...)
// share: labels of a geometry, which entries the causal mask hides, sampling rows and keys around the diagonal,
// the masked-entry case, and the a-priori error bound of scores with a fused bias.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "posenc/bias.hpp"
#include "verify/budget.hpp"
#include "support/harness.hpp"

namespace posenc::test {

std::string geometry_label(const BiasGeometry&);

// Whether (row i, key j) is masked by the geometry's causal mask (key after the query, or a padding key).
bool masked(const BiasGeometry&, std::size_t i, std::size_t j);

// Up to n indices of [0, size) including 0, size - 1 and `must` (when < size), evenly spread otherwise.
std::vector<std::size_t> sample_indices(std::size_t size, std::size_t n, std::vector<std::size_t> must = {});

// A masked entry must be -inf: recorded under `identity_row` (a bitwise row) as 0 (it is) or as the value it
// holds instead (any finite value or NaN is a nonzero bitwise distance from 0, +inf a class mismatch).
void masked_entry(const Sink& sink, const BudgetRow& identity_row, double y, const Describe& what);

// The a-priori bound of |scores - (scale <q, k> + b~)| for a bias b~ fused into a beta = 1 gemm, given
// sum_c |q_c k_c|, |scale| and |b~|: (gamma_{d+2} + u)(|scale| (1 + u) sum |q_c k_c| + |b~|) (1 + 1e-12), gamma_n =
// n u / (1 - n u), u the type's unit roundoff (budget rows <scheme>.scores.*).
double fused_scores_error_scale(DType, std::size_t head_dim, double abs_scale, double sum_abs_qk, double abs_bias);

// The outputs of one plan's fused scores and its plain bias for the same geometry (f32 and f64 calls).
struct FusedScoresRun {
  std::span<const float> s32;
  std::span<const double> s64;
  std::span<const float> b32;
  std::span<const double> b64;
};

// scale <q_h,i, k_h,j> exactly (the oracle's score minus its bias, or formed in MPFR).
using ExactDot = std::function<Real(std::size_t h, std::size_t i, std::size_t j, std::span<const double> qh,
                                    std::span<const double> kh)>;

// The fused scores of `run` against dot(...) + the plan's own bias value (the bias rows are held to their own
// rows), under row32 / row64 with fused_scores_error_scale; masked entries must be -inf (identity). Rows: up to
// max_rows (0: all) with the causal gemm's seams 255, 256, 511, 512; keys: up to max_cols (0: all) around the
// diagonal. label() describes the case (spec, weights, geometry).
void measure_fused_scores(const Sink&, const BudgetRow& row32, const BudgetRow& row64, const BudgetRow& identity,
                          std::size_t heads, const BiasGeometry&, std::size_t head_dim, std::span<const double> q,
                          std::span<const double> k, double scale, const FusedScoresRun&, const ExactDot& dot,
                          const std::function<std::string()>& label, std::size_t max_rows, std::size_t max_cols);

// The scores of `plan` (Plan::scores and Plan::bias in f32 and f64; q, k float32 numbers held in doubles, n the size
// of the output) measured by measure_fused_scores.
template <class Plan>
void measure_plan_scores(const Plan& plan, std::size_t n, const Sink& sink, const BudgetRow& row32,
                         const BudgetRow& row64, const BudgetRow& identity, std::size_t heads, const BiasGeometry& g,
                         std::size_t head_dim, std::span<const double> q, std::span<const double> k, double scale,
                         const ExactDot& dot, const std::function<std::string()>& label, std::size_t max_rows,
                         std::size_t max_cols) {
  const std::vector<float> q32(q.begin(), q.end()), k32(k.begin(), k.end());
  std::vector<float> s32(n), b32(n);
  std::vector<double> s64(n), b64(n);
  plan.scores(std::span<const float>(q32), std::span<const float>(k32), head_dim, g, scale, std::span<float>(s32));
  plan.scores(q, k, head_dim, g, scale, std::span<double>(s64));
  plan.bias(g, std::span<float>(b32));
  plan.bias(g, std::span<double>(b64));
  measure_fused_scores(sink, row32, row64, identity, heads, g, head_dim, q, k, scale, FusedScoresRun{s32, s64, b32, b64},
                       dot, label, max_rows, max_cols);
}

// The errors every bias plan raises for bad geometry, output and scores arguments (a claim of the scheme's ERR
// test): Lq > Lk, Lq = 0, Lk = 0, Lk = 2^31, key masks with a 2 or too short, a wrong output size, an unknown mask,
// head_dim 0, a NaN scale, short q, k and scores. `heads`: the plan's head count.
template <class Plan>
void expect_bias_call_errors(const Claim& claim, const Plan& plan, std::size_t heads) {
  std::vector<float> out(heads * 3 * 5);
  const std::uint8_t bad_mask[] = {1, 1, 2, 1, 1}, short_mask[] = {1, 1};
  const std::span<float> o(out);
  auto bias = [&](BiasGeometry g, std::span<float> to) { plan.bias(g, to); };
  expect_error(claim, "query_length", [&] { bias({.query_length = 6, .key_length = 5}, o); }, "Lq > Lk");
  expect_error(claim, "query_length", [&] { bias({.query_length = 0, .key_length = 5}, o); }, "Lq 0");
  expect_error(claim, "key_length", [&] { bias({.query_length = 1, .key_length = 0}, o); }, "Lk 0");
  expect_error(claim, "key_length", [&] { bias({.query_length = 1, .key_length = std::size_t{1} << 31}, o); }, "Lk 2^31");
  expect_error(claim, "key_mask", [&] { bias({.query_length = 3, .key_length = 5, .key_mask = bad_mask}, o); }, "mask value 2");
  expect_error(claim, "key_mask", [&] { bias({.query_length = 3, .key_length = 5, .key_mask = short_mask}, o); }, "short mask");
  expect_error(claim, "out", [&] { bias({.query_length = 3, .key_length = 4}, o); }, "wrong out size");
  expect_error(claim, "mask", [&] { bias({.query_length = 3, .key_length = 5, .mask = static_cast<BiasMask>(7)}, o); }, "mask 7");
  std::vector<float> q(heads * 3 * 8), k(heads * 5 * 8);
  const BiasGeometry g{.query_length = 3, .key_length = 5};
  expect_error(claim, "head_dim", [&] { plan.scores(q, k, 0, g, 1.0, o); }, "head_dim 0");
  expect_error(claim, "scale", [&] { plan.scores(q, k, 8, g, std::nan(""), o); }, "scale NaN");
  expect_error(claim, "q", [&] { plan.scores(std::span<const float>(q).first(10), k, 8, g, 1.0, o); }, "short q");
  expect_error(claim, "k", [&] { plan.scores(q, std::span<const float>(k).first(10), 8, g, 1.0, o); }, "short k");
  expect_error(claim, "scores", [&] { plan.scores(q, k, 8, g, 1.0, o.first(3)); }, "short scores");
}

}  // namespace posenc::test
