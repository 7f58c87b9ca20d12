// schemes/rope/budget.hpp — the RoPE scheme's keys in the one budget table (rows and their error analyses:
// budget.cpp beside this file).
#pragma once

#include <cstddef>

#include "verify/budget.hpp"

namespace posenc::verify {

#define POSENC_ROPE_ROWS(X)                                         \
  X(frequency_exact_f64, "rope.frequency.exact.f64")                \
  X(frequency_emulated, "rope.frequency.emulated.bitwise")          \
  X(cache_exact_f32, "rope.cache.exact.f32.scaled")                 \
  X(cache_exact_f64, "rope.cache.exact.f64.scaled")                 \
  X(cache_exact_f32_attention, "rope.cache.exact.f32.attention")    \
  X(cache_exact_f64_attention, "rope.cache.exact.f64.attention")    \
  X(cache_emulated, "rope.cache.emulated.bitwise")                  \
  X(apply_exact_f32, "rope.apply.exact.f32.scaled")                 \
  X(apply_exact_f64, "rope.apply.exact.f64.scaled")                 \
  X(apply_exact_f64_attention, "rope.apply.exact.f64.attention")    \
  X(frequency_attention, "rope.frequency.attention_factor")         \
  X(apply_emulated_f32, "rope.apply.emulated.f32.bitwise")          \
  X(apply_exact_bf16, "rope.apply.exact.bf16.scaled")               \
  X(apply_exact_f16, "rope.apply.exact.f16.scaled")                 \
  X(apply_emulated_half, "rope.apply.emulated.half.bitwise")        \
  X(apply_identity, "rope.apply.identity.bitwise")                  \
  X(compose_f64, "rope.compose.f64.scaled")                         \
  X(kshift_drift_f64, "rope.kshift.drift1000.f64.scaled")           \
  X(score_f64, "rope.score.f64.ratio")                              \
  X(scores_f32, "rope.scores.f32.ratio")                            \
  X(scores_f64, "rope.scores.f64.ratio")                            \
  X(emulated_vs_exact, "rope.cache.emulated_vs_exact.ratio")       \
  X(identity_oracle, "rope.identity.oracle")                        \
  X(check_exact_f16, "rope.check.exact.f16")                        \
  X(check_exact_bf16, "rope.check.exact.bf16")                      \
  X(check_exact_f32, "rope.check.exact.f32")                        \
  X(check_exact_f64, "rope.check.exact.f64")                        \
  X(check_envelope, "rope.check.envelope")                          \
  X(check_rotated_exact_f16, "rope.check.rotated.exact.f16")       \
  X(check_rotated_exact_bf16, "rope.check.rotated.exact.bf16")     \
  X(check_rotated_exact_f32, "rope.check.rotated.exact.f32")       \
  X(check_rotated_exact_f64, "rope.check.rotated.exact.f64")       \
  X(check_rotated_envelope, "rope.check.rotated.envelope")        \
  X(frequency_roformer, "rope.frequency.roformer.bitwise")          \
  X(cache_roformer, "rope.cache.roformer.bitwise")                  \
  X(apply_roformer_f32, "rope.apply.roformer.f32.bitwise")          \
  X(check_roformer_envelope, "rope.check.roformer.envelope")

POSENC_BUDGET_KEYS(RopeRow, "rope", POSENC_ROPE_ROWS)

namespace rope {

// Per-case scale of the score row (ratio metric): the a-priori bound of |<q~, k~> - <R(m)q, R(n)k>| for fast
// exact-regime f64 rotations q~ = R(m)q, k~ = R(n)k (dot product formed exactly), from the 1-norms of q and k.
double score_error_scale(double q_l1, double k_l1);
// Per-case scale of the scores rows (ratio metric): the a-priori bound of |scores[i][j] - <R(m)q, R(n)k>| for
// RopePlan::scores in the exact regime, given sum_c S_c(q) S_c(k) over the channels (S_c = |x_i| + |x_j| of
// channel c's pair, |x_c| for a pass-through channel).
double scores_error_scale(DType, std::size_t head_dim, double sum_sq_sk);
// Per-case scale of the emulated-vs-exact row: |a32 - p theta_k| + 2^-25, a32 the regime's float32 angle; with
// an attention factor (exact m, the regime's float32 m32 != 1): m (|a32 - p theta'_k| + 2^-25) + |m32 - m| +
// ulp_f32(m32) / 2. roformer (its float64 angle a64, cos rounded to double before float32): + 2^-54.
double emulated_vs_exact_scale(double angle_error, double m = 1.0, double m32 = 1.0, bool roformer = false);
// The scale S = M of a cache entry times the attention factor m: the least power of two >= max(1, m) (1 without m).
double attention_scale(double m);
// Bounds of a rotation in units of ulp(S), S = |x_i| + |x_j| (rows apply.exact.*, compose, kshift); with an
// attention factor m != 1, S = m (|x_i| + |x_j|) and the f64 bound is the attention row's.
double apply_exact_bound(DType, bool attention = false);
// The row a user's cache of the stored type is held to in the exact regime.
RopeRow check_exact_row(DType);
// The row a user's rotated tensor of the stored type is held to in the exact regime (posenc check rope --x).
RopeRow check_rotated_exact_row(DType);

}  // namespace rope
}  // namespace posenc::verify
