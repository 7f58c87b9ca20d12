// properties/support/relative_measure.hpp — what the measuring harnesses of the sinusoid-relative attentions
// (Transformer-XL, XLNet, TENER) share: their inputs, and the scores measurement against an oracle under the bound of
// verify/relative_budget.hpp. RapidCheck generators: call from inside a property.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "posenc/bias.hpp"
#include "posenc/relative_attention.hpp"
#include "support/harness.hpp"
#include "verify/relative_budget.hpp"

namespace posenc::test::relative {

// n random float32 numbers in [-1, 1] on a grid of 1/scale (a float32 checkpoint's values), as doubles, from one
// drawn seed.
std::vector<double> random_values(std::size_t n, int scale = 100000);

// One call: Lq queries after M = Lk - Lq memory keys, an optional key mask, optional token types of the queries.
struct Call {
  std::size_t Lq = 1, Lk = 1;
  std::vector<std::uint8_t> key_mask;
  std::vector<std::int64_t> types;
  BiasGeometry view() const { return {Lq, Lk, key_mask, BiasMask::none}; }
  std::string label() const;
};
// Lq up to max_q (one of hard_q a third of the time), M up to max_m (one of hard_m a third of the time; max_m = 0:
// self-attention), a random key mask a quarter of the time, token types in {0, 1, 2} half of the time when `types`.
rc::Gen<Call> call_gen(std::size_t max_q, std::size_t max_m, std::span<const std::size_t> hard_q,
                       std::span<const std::size_t> hard_m, bool types);

// What one entry of the oracle says: whether it is visible (else the score must be -inf), its exact value and the
// magnitudes of its terms.
struct Entry {
  bool visible = false;
  Real exact;
  RelativeMagnitudes magnitudes;
};
using EntryFn = std::function<Entry(std::size_t h, std::size_t i, std::size_t j)>;

// How B is formed for the call: the head size, the projection's input size (0: none), the dot products of an entry,
// |scale|, the form measured, and rho of each type.
struct BoundParams {
  std::size_t d = 0, dm = 0, terms = 2;
  double abs_scale = 1;
  RelativeScoresForm form = RelativeScoresForm::blas;
  double rho32 = 0, rho64 = 0;
};

// Sampled entries (rows 0, Lq - 1, the 256-row block seams, up to max_rows; keys around the diagonal, up to max_cols)
// of the f32 and f64 scores [H][Lq][Lk] against entry(): visible ones under row32 / row64 (ratio to B), the others
// must be -inf (masked_row). label() names the case.
void measure_scores(const Sink&, const BudgetRow& row32, const BudgetRow& row64, const BudgetRow& masked_row,
                    std::size_t H, std::size_t Lq, std::size_t Lk, const EntryFn& entry, const BoundParams& bound,
                    std::span<const float> s32, std::span<const double> s64,
                    const std::function<std::string()>& label, std::size_t max_rows, std::size_t max_cols);

// A plan's scores of one call in f32 and f64 (q, k float32 numbers held in doubles): scores(q, k, out) is called
// with spans of float and of double.
struct Scores {
  std::vector<float> s32;
  std::vector<double> s64;
  bool same_bits(const Scores& o) const;  // bit for bit equal, both types
};
template <class Run>
Scores run_scores(std::size_t n, const std::vector<double>& q, const std::vector<double>& k, Run&& scores) {
  const std::vector<float> q32(q.begin(), q.end()), k32(k.begin(), k.end());
  Scores s{std::vector<float>(n), std::vector<double>(n)};
  scores(std::span<const float>(q32), std::span<const float>(k32), std::span<float>(s.s32));
  scores(std::span<const double>(q), std::span<const double>(k), std::span<double>(s.s64));
  return s;
}

// sum_e (|x_e| + |y_e|) |z_e| and sum_e |x_e| |z_e| over d values (the magnitudes' building blocks; y may be empty).
double sum_abs(std::span<const double> x, std::span<const double> y, std::span<const double> z);

}  // namespace posenc::test::relative
