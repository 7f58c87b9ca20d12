// schemes/fire/budget.hpp — the FIRE scheme's keys in the one budget table (rows and their error analyses:
// budget.cpp beside this file), and the per-case scales the ratio rows divide by.
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/fire_spec.hpp"
#include "verify/budget.hpp"

namespace posenc::verify {

#define POSENC_FIRE_ROWS(X)                                      \
  X(bias_exact_f32, "fire.bias.exact.f32.ratio")                 \
  X(bias_exact_f64, "fire.bias.exact.f64.ratio")                 \
  X(bias_emulated, "fire.bias.emulated.bitwise")                 \
  X(bias_emulated_unfused, "fire.bias.emulated.unfused.bitwise") \
  X(bias_identity, "fire.bias.identity.bitwise")                 \
  X(emulated_vs_exact, "fire.bias.emulated_vs_exact.ratio")      \
  X(bounded, "fire.bias.bounded.ratio")                          \
  X(scores_f32, "fire.scores.f32.ratio")                         \
  X(scores_f64, "fire.scores.f64.ratio")                         \
  X(check_exact_f16, "fire.check.exact.f16.ratio")               \
  X(check_exact_bf16, "fire.check.exact.bf16.ratio")             \
  X(check_exact_f32, "fire.check.exact.f32.ratio")               \
  X(check_exact_f64, "fire.check.exact.f64.ratio")               \
  X(check_envelope, "fire.check.envelope")                       \
  X(check_reference_exact, "fire.check.reference.exact.ratio")   \
  X(check_reference_emulated, "fire.check.reference.emulated.bitwise")

POSENC_BUDGET_KEYS(FireRow, "fire", POSENC_FIRE_ROWS)

namespace fire {

// S = |b2[h]| + sum_k |W2[h][k]| (|W1[k]| x + |b1[k]|): the condition scale of head h's MLP at input x >= 0 (the
// weights as doubles; an upper bound: rounded up).
double condition_scale(const FireSpec&, const FireWeights&, std::size_t h, double x);

// Denominators of the ratio rows (analyses in budget.cpp). x: the exact x of the entry; r: the exact bias.
double exact_f32_scale(const FireSpec&, const FireWeights&, std::size_t h, double x, double r);  // bias.exact.f32
double exact_f64_scale(const FireSpec&, const FireWeights&, std::size_t h, double x);            // bias.exact.f64
double check_exact_scale(DType, const FireSpec&, const FireWeights&, std::size_t h, double x, double r);

// The a-priori bound of |e - X| for the cramming float32 bias e of head h at query position q, key j against the exact
// X (row bias.emulated_vs_exact): x the exact x.
double emulated_vs_exact_scale(const FireSpec&, const FireWeights&, std::size_t h, std::int64_t q, std::int64_t j,
                               double x);

// The row a user's bias stored as `t` is held to in the exact regime.
FireRow check_exact_row(DType t);

}  // namespace fire
}  // namespace posenc::verify
