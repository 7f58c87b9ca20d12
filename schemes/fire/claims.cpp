// FIRE's claims (FIRE-*), as RapidCheck properties and enumerated tests. Reference claims compare the fast path with
// the MPFR oracle (include/oracle/posenc/reference/fire.hpp, written from the definition independently of lib/);
// identity claims are exact equalities of the fast path (row fire.bias.identity.bitwise). Every tolerance comes from
// budget.cpp; every compared number goes through the measuring harness (measure.hpp) or check().
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "schemes/fire/budget.hpp"
#include "schemes/fire/cases.hpp"
#include "schemes/fire/check.hpp"
#include "schemes/fire/measure.hpp"
#include "posenc/error.hpp"
#include "posenc/fire.hpp"
#include "posenc/reference/fire.hpp"
#include "support/bias_cases.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/spec_contract.hpp"

namespace claims_fire {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
using namespace posenc::test::fire;
namespace rf = posenc::reference;
namespace ca = posenc::cases::fire;
using rf::Real;
using R = FireRow;

const std::string kConv = "CONVENTIONS.md §2.15; mcleish7/arithmetic cramming/architectures/embeddings.py FIRE";
const std::string kPaper = "Li et al. 2023 (FIRE), §3; CONVENTIONS.md §2.15";
constexpr std::int64_t kMaxPos = (std::int64_t{1} << 24) - 1;

FireSpec make_spec(std::size_t heads, std::size_t width, FireRegime r, double eps = 1e-6) {
  FireSpec s{.heads = heads, .mlp_width = width, .eps = eps, .regime = r};
  validate(s);
  return s;
}

// ---- generators -------------------------------------------------------------------------------------------

// A weight of a Linear layer with fan_in inputs: torch's default init U(-1/sqrt(fan_in), 1/sqrt(fan_in)), sometimes a
// trained-looking larger value, an exact 0, or a float32 number.
double linear_weight(std::size_t fan_in) {
  const double bound = 1 / std::sqrt(static_cast<double>(fan_in));
  double v = 0;
  switch (*rc::gen::inRange(0, 6)) {
    case 0: v = 0; break;
    case 1: v = *rc::gen::inRange(-100000, 100001) * 1e-3; break;  // |v| <= 100
    default: v = *rc::gen::inRange(-1 << 20, (1 << 20) + 1) * bound / (1 << 20); break;
  }
  if (*rc::gen::arbitrary<bool>()) v = static_cast<float>(v);
  return v;
}

// Weights for a spec; the threshold sometimes drawn below max_position so that rows on both sides of it appear.
FireWeights weights_gen(const FireSpec& s, double max_position = 600) {
  FireWeights w;
  w.c = *rc::gen::inRange(0, 3) == 0 ? *rc::gen::elementOf(std::vector<double>(std::begin(ca::kHardC), std::end(ca::kHardC)))
                                      : std::exp2(*rc::gen::inRange(-20000, 10000) / 1000.0) * (*rc::gen::arbitrary<bool>() ? 1 : -1);
  switch (*rc::gen::inRange(0, 3)) {
    case 0:
      w.L_multiplier = *rc::gen::elementOf(std::vector<double>(std::begin(ca::kHardLMultiplier), std::end(ca::kHardLMultiplier)));
      w.init_L = *rc::gen::elementOf(std::vector<double>(std::begin(ca::kHardInitL), std::end(ca::kHardInitL)));
      break;
    case 1:
      w.L_multiplier = *rc::gen::inRange(-2000, 2001) / 1000.0;
      w.init_L = 512.0;
      break;
    default:
      w.L_multiplier = 1.0;
      w.init_L = *rc::gen::inRange(0, static_cast<int>(max_position) + 1) + *rc::gen::elementOf(std::vector<double>{0.0, 0.5, 0.25});
      break;
  }
  for (std::size_t k = 0; k < s.mlp_width; ++k) {
    w.w1.push_back(linear_weight(1));
    w.b1.push_back(linear_weight(1));
  }
  for (std::size_t n = 0; n < s.heads * s.mlp_width; ++n) w.w2.push_back(linear_weight(s.mlp_width));
  for (std::size_t h = 0; h < s.heads; ++h) w.b2.push_back(linear_weight(s.mlp_width));
  return w;
}

FireSpec spec_gen(std::size_t max_heads, std::size_t max_width = 40) {
  FireSpec s = *rc::gen::arbitrary<FireSpec>();
  s.heads = std::min(s.heads, max_heads);
  s.mlp_width = std::min(s.mlp_width, max_width);
  return s;
}

rc::Gen<std::int64_t> position_gen() {
  return rc::gen::oneOf(rc::gen::elementOf(std::vector<std::int64_t>(std::begin(ca::kHardPositions), std::end(ca::kHardPositions))),
                        rc::gen::inRange<std::int64_t>(0, 5000),
                        rc::gen::map(rc::gen::inRange(0, 24000), [](int e) {
                          return std::min<std::int64_t>(kMaxPos, static_cast<std::int64_t>(std::exp2(e / 1000.0)));
                        }));
}

// A key for the query at q: near it (both sides), at 0, or anywhere below 2^24.
std::int64_t key_gen(std::int64_t q) {
  switch (*rc::gen::inRange(0, 4)) {
    case 0: return std::clamp<std::int64_t>(q + *rc::gen::inRange(-3, 4), 0, kMaxPos);
    case 1: return 0;
    case 2: return *rc::gen::inRange<std::int64_t>(0, q + 1);
    default: return *rc::gen::inRange<std::int64_t>(0, kMaxPos + 1);
  }
}

std::string region(const FireSpec& s) { return std::string(to_string(s.regime)); }

void bitwise(const Claim& claim, double a, double b, const Describe& what) {
  expect_bitwise(claim, budget(R::bias_identity), a, b, what);
}

// The exact MLP of head h at x (256 bits).
Real mlp_at(const FireSpec& s, const FireWeights& w, std::size_t h, const Real& x) {
  Real y = rf::make_real(w.b2[h], 256);
  for (std::size_t k = 0; k < s.mlp_width; ++k) {
    const Real v = rf::make_real(w.w1[k], 256) * x + rf::make_real(w.b1[k], 256);
    if (v > 0) y += rf::make_real(w.w2[h * s.mlp_width + k], 256) * v;
  }
  return y;
}

// ---------------------------------------------------------------------------------------------------------------
POSENC_PROPERTY(Fire, BiasMatchesOracle,
                {"FIRE-BIAS-1", "fire",
                 "the bias of every head for a query at q and a key at j (0 <= q, j < 2^24, both sides of the "
                 "threshold, j after q included) is MLP_h(ln(|c| d + 1) / (ln(|c| max(q, L) + 1) + eps)) of the "
                 "weights: in the exact regime within the budget's bound (f32: correctly rounded unless the MLP's "
                 "sum cancels by ~2^80; f64: (w + 16) 2^-53 S), bit for bit the reference's float32 steps in the "
                 "cramming regime (the second Linear in either --mlp-sum order), which lie within the analysed bound "
                 "of the exact value",
                 kConv, Oracle::reference,
                 {R::bias_exact_f32, R::bias_exact_f64, R::bias_emulated, R::bias_emulated_unfused, R::emulated_vs_exact}}) {
  const FireSpec s = spec_gen(4);
  const FireWeights w = weights_gen(s, static_cast<double>(kMaxPos));
  tag(claim, region(s));
  for (int n = 0; n < 3; ++n) {
    const std::int64_t q = *position_gen();
    count_case(claim);
    measure_value(s, w, q, key_gen(q), claim_sink(claim));
  }
}

POSENC_CLAIM_TEST(Fire, BiasMatchesOracleAtHardPlaces,
                  {"FIRE-BIAS-2", "fire",
                   "FIRE-BIAS-1 at the hard places: c = 0, negative c (the code's |c|), tiny and large c; thresholds 0, "
                   "non-integer and negative multipliers; eps 1e-12 .. 1; queries at, just below and just above the "
                   "threshold and at 2^24 - 1; keys at the query, next to it on both sides and at 0; both regimes, "
                   "the cramming regime in both --mlp-sum orders",
                   kConv, Oracle::reference,
                   {R::bias_exact_f32, R::bias_exact_f64, R::bias_emulated, R::bias_emulated_unfused, R::emulated_vs_exact}}) {
  const Sink sink = claim_sink(claim, FailWith::gtest);
  const std::size_t W = 6, H = 2;
  FireWeights w{.c = 0.1, .L_multiplier = 1.0, .init_L = 512.0,
                .w1 = {1.0, -0.75, 0.5, 2.0, -1.5, 0.3}, .b1 = {-0.25, 0.5, 0.0, -1.0, 1.25, -0.1},
                .w2 = {0.4, -0.2, 0.9, 0.1, -0.35, 0.6, -0.8, 0.05, 0.3, -0.45, 0.2, 0.7}, .b2 = {0.05, -0.3}};
  const std::pair<FireRegime, FireMlpSum> regimes[] = {{FireRegime::exact, FireMlpSum::fma},
                                                        {FireRegime::cramming, FireMlpSum::fma},
                                                        {FireRegime::cramming, FireMlpSum::unfused}};
  for (const auto& [r, sum] : regimes)
    for (double eps : ca::kHardEps) {
      FireSpec s = make_spec(H, W, r, eps);
      s.mlp_sum = sum;
      for (double c : ca::kHardC)
        for (double lm : ca::kHardLMultiplier)
          for (double il : {512.0, 100.5}) {
            w.c = c;
            w.L_multiplier = lm;
            w.init_L = il;
            const double thr = std::fabs(lm * il);
            std::vector<std::int64_t> qs(std::begin(ca::kHardPositions), std::end(ca::kHardPositions));
            for (double t : {std::floor(thr), std::ceil(thr), std::floor(thr) + 1})
              if (t >= 1 && t <= kMaxPos) qs.push_back(static_cast<std::int64_t>(t));
            for (std::int64_t q : qs)
              for (std::int64_t j : {q, q - 1, q + 1, std::int64_t{0}, q / 2})
                if (j >= 0 && j <= kMaxPos) {
                  count_case(claim);
                  measure_value(s, w, q, j, sink);
                }
          }
    }
}

POSENC_PROPERTY(Fire, BiasMatricesMatchOracle,
                {"FIRE-BIAS-3", "fire",
                 "bias matrices [heads][Lq][Lk] (queries the last Lq keys, a decoder step included; thresholds inside "
                 "the key range so rows on both sides appear; the 256-key chunk seam) hold the bias of (q_i, j) in f32 "
                 "and f64, -inf exactly where the causal mask or a padding key puts it",
                 kConv, Oracle::reference,
                 {R::bias_exact_f32, R::bias_exact_f64, R::bias_emulated, R::bias_emulated_unfused, R::emulated_vs_exact,
                  R::bias_identity}}) {
  const FireSpec s = spec_gen(3, 24);
  const GeometryCase gc = *geometry_gen(600, ca::kHardLengths);
  const FireWeights w = weights_gen(s, static_cast<double>(gc.key_length));
  tag(claim, region(s));
  count_case(claim);
  measure_bias(s, w, gc.view(), claim_sink(claim), 3, 5, 20);
}

POSENC_PROPERTY(Fire, ValuesIndependentOfGeometryThreadsAndStorePath,
                {"FIRE-REPRO-1", "fire",
                 "every entry of a bias matrix is bit for bit bias_value(h, q_i, j), whatever the geometry, thread "
                 "count (1, 2) and store path (streaming stores on or off), f32 and f64: a row is the same in every "
                 "call, and rows at or below the threshold are computed once per head and copied",
                 kConv, Oracle::identity, {R::bias_identity}}) {
  const FireSpec s = spec_gen(2, 16);
  const GeometryCase gc = *geometry_gen(300, ca::kHardLengths);
  const FireWeights w = weights_gen(s, static_cast<double>(gc.key_length));
  const BiasGeometry g = gc.view();
  const FirePlan plan(s, w);
  tag(claim, region(s));
  for_each_stored_bias(plan, s.heads, g, fire_bias_size(s, g), claim, [&](auto h, auto i, auto j, double b32, double b64,
                                                                          auto where) {
    const auto q = static_cast<std::int64_t>(g.key_length - g.query_length + i), jj = static_cast<std::int64_t>(j);
    auto what = [&] { return spec_label(s, w) + " " + geometry_label(g) + where(); };
    bitwise(claim, b32, plan.bias_value_f32(h, q, jj), what);
    bitwise(claim, b64, plan.bias_value_f64(h, q, jj), what);
  });
}

POSENC_PROPERTY(Fire, SymmetricAndOneFunctionBelowTheThreshold,
                {"FIRE-SHAPE-1", "fire",
                 "exactly, in f32 and f64 and both regimes, the bias depends only on |i - j| and max(L, i): it is "
                 "symmetric about the query (b(q, q - t) = b(q, q + t): the reference's |i - j|), every row whose "
                 "position is at or below the threshold L is the same function of the distance (b(q1, q1 - t) = "
                 "b(q2, q2 - t) for q1, q2 <= L: Toeplitz there), and x(q, j) = 0 at j = q",
                 kPaper, Oracle::identity, {R::bias_identity}}) {
  const FireSpec s = spec_gen(3, 16);
  const FireWeights w = weights_gen(s, 5000);
  const FirePlan plan(s, w);
  tag(claim, region(s));
  const double L = plan.threshold();
  for (int n = 0; n < 6; ++n) {
    const std::int64_t q = std::min(*position_gen(), kMaxPos - 4000);
    const std::int64_t t = *rc::gen::inRange<std::int64_t>(0, std::min<std::int64_t>(q, 4000) + 1);
    count_case(claim);
    RC_ASSERT(plan.normalized_distance(q, q) == 0.0);
    for (std::size_t h = 0; h < s.heads; ++h) {
      auto what = [&] { return spec_label(s, w) + " h=" + std::to_string(h) + " q=" + std::to_string(q) + " t=" + std::to_string(t); };
      bitwise(claim, plan.bias_value_f32(h, q, q - t), plan.bias_value_f32(h, q, q + t), what);
      bitwise(claim, plan.bias_value_f64(h, q, q - t), plan.bias_value_f64(h, q, q + t), what);
    }
    if (L >= 1) {
      const auto top = static_cast<std::int64_t>(std::min(L, 5000.0));
      const std::int64_t q1 = *rc::gen::inRange<std::int64_t>(0, top + 1), q2 = *rc::gen::inRange<std::int64_t>(0, top + 1);
      const std::int64_t u = *rc::gen::inRange<std::int64_t>(0, std::min(q1, q2) + 1);
      for (std::size_t h = 0; h < s.heads; ++h) {
        auto what = [&] { return spec_label(s, w) + " h=" + std::to_string(h) + " q1=" + std::to_string(q1) + " q2=" + std::to_string(q2); };
        bitwise(claim, plan.bias_value_f32(h, q1, q1 - u), plan.bias_value_f32(h, q2, q2 - u), what);
        bitwise(claim, plan.bias_value_f64(h, q1, q1 - u), plan.bias_value_f64(h, q2, q2 - u), what);
      }
    }
  }
}

POSENC_PROPERTY(Fire, NormalizedDistanceIsMonotoneAndInTheUnitInterval,
                {"FIRE-PSI-1", "fire",
                 "exactly, in both regimes: psi(d) = ln(|c| d + 1) is non-decreasing in d, so within a row the "
                 "normalized distance x(q, q - d) = psi(d) / (psi(max(q, L)) + eps) is non-decreasing in d (checked "
                 "over whole rows of up to 5000 keys and at random far pairs), and 0 <= x <= 1 for every key at or "
                 "before the query",
                 kPaper, Oracle::identity, {R::bias_identity}}) {
  const FireSpec s = spec_gen(1, 4);
  const FireWeights w = weights_gen(s, static_cast<double>(kMaxPos));
  const FirePlan plan(s, w);
  tag(claim, region(s));
  const std::int64_t q = *position_gen();
  const std::int64_t n = std::min<std::int64_t>(q, 5000);
  double prev = plan.normalized_distance(q, q);
  RC_ASSERT(prev == 0.0);
  for (std::int64_t d = 1; d <= n; ++d) {
    const double x = plan.normalized_distance(q, q - d);
    RC_ASSERT(x >= prev);
    RC_ASSERT(x <= 1.0);
    prev = x;
  }
  count_case(claim);
  for (int k = 0; k < 8; ++k) {
    const std::int64_t d1 = *rc::gen::inRange<std::int64_t>(0, q + 1), d2 = *rc::gen::inRange<std::int64_t>(0, q + 1);
    const double x1 = plan.normalized_distance(q, q - d1), x2 = plan.normalized_distance(q, q - d2);
    const bool ordered = d1 <= d2 ? x1 <= x2 : x1 >= x2;
    RC_ASSERT(ordered);
    RC_ASSERT(x1 >= 0.0);
    RC_ASSERT(x1 <= 1.0);
    count_case(claim);
  }
}

POSENC_PROPERTY(Fire, CausalBiasesStayInTheMlpRangeOverTheUnitInterval,
                {"FIRE-BOUNDED-1", "fire",
                 "for every key at or before the query (d <= q <= max(q, L)) the normalized distance lies in [0, 1), "
                 "so the exact-regime bias lies in MLP_h([0, 1]) at every position up to 2^24 - 1 (within the fast "
                 "path's bound): FIRE's progressive interpolation bounds the bias whatever the sequence length",
                 kPaper, Oracle::reference, {R::bounded}}) {
  FireSpec s = spec_gen(3, 24);
  s.regime = FireRegime::exact;
  s.mlp_sum = FireMlpSum::fma;
  const FireWeights w = weights_gen(s, static_cast<double>(kMaxPos));
  const FirePlan plan(s, w);
  tag(claim, region(s));
  const rf::PrecisionGuard guard(256);
  for (std::size_t h = 0; h < s.heads; ++h) {
    // MLP_h is piecewise linear: its extremes over [0, 1] are at 0, 1 or a kink -b1/W1 inside.
    std::vector<Real> xs{rf::make_real(0.0, 256), rf::make_real(1.0, 256)};
    for (std::size_t k = 0; k < s.mlp_width; ++k)
      if (w.w1[k] != 0) {
        const Real kink = -rf::make_real(w.b1[k], 256) / rf::make_real(w.w1[k], 256);
        if (kink > 0 && kink < 1) xs.push_back(kink);
      }
    Real lo = mlp_at(s, w, h, xs[0]), hi = lo;
    for (const Real& x : xs) {
      const Real y = mlp_at(s, w, h, x);
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
    const double tol = exact_f64_scale(s, w, h, 1.0);
    for (int n = 0; n < 6; ++n) {
      const std::int64_t q = *position_gen();
      const std::int64_t j = *rc::gen::inRange<std::int64_t>(0, q + 1);
      const double x = plan.normalized_distance(q, j);
      RC_ASSERT(x >= 0.0);
      RC_ASSERT(x <= 1.0);
      for (const double y : {static_cast<double>(plan.bias_value_f32(h, q, j)), plan.bias_value_f64(h, q, j)}) {
        const Real ry = rf::make_real(y, 256);
        const double excess = std::max({0.0, static_cast<double>(Real(lo - ry)), static_cast<double>(Real(ry - hi))});
        count_case(claim);
        emit_value(claim_sink(claim), R::bounded, excess / (tol + ulp(y, DType::f32)), [&] {
          return spec_label(s, w) + " h=" + std::to_string(h) + " q=" + std::to_string(q) + " j=" + std::to_string(j) +
                 " y=" + format_real(y) + " range=[" + format_real(static_cast<double>(lo)) + ", " +
                 format_real(static_cast<double>(hi)) + "]";
        });
      }
    }
  }
}

POSENC_PROPERTY(Fire, FusedScoresMatchOracle,
                {"FIRE-SCORES-1", "fire",
                 "scores = scale <q_i, k_j> + bias (bias rows, then a beta = 1 gemm; causal: per 256-row block up to "
                 "the last visible key) within the gemm's a-priori bound of the exact value in f32 and f64, -inf "
                 "where masked",
                 kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::bias_identity}}) {
  const FireSpec s = spec_gen(2, 12);
  const GeometryCase gc = *geometry_gen(10, ca::kHardLengths);
  const FireWeights w = weights_gen(s, static_cast<double>(gc.key_length));
  const BiasGeometry g = gc.view();
  const ScoreOperands c = score_operands_gen(s.heads, g);
  tag(claim, region(s));
  count_case(claim);
  measure_scores(s, w, g, c.d, c.q, c.k, c.scale, claim_sink(claim));
}

POSENC_CLAIM_TEST(Fire, FusedCausalScoresAcrossGemmRowBlocks,
                  {"FIRE-SCORES-2", "fire",
                   "FIRE-SCORES-1 for a causal 600 x 600 geometry (rows 255/256 and 511/512 straddle the gemm's row "
                   "blocks and the threshold 512) and a decoder step (1 x 600)",
                   kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::bias_identity}}) {
  const FireSpec s = make_spec(1, 4, FireRegime::cramming);
  const FireWeights w{.c = 0.1, .L_multiplier = 1.0, .init_L = 512.0, .w1 = {1.0, -0.5, 2.0, 0.25},
                      .b1 = {0.0, 0.5, -1.0, 0.1}, .w2 = {0.3, -0.6, 0.9, 0.2}, .b2 = {-0.1}};
  for (const auto& [g, c] : causal_block_score_cases(600)) {
    count_case(claim);
    measure_scores(s, w, g, c.d, c.q, c.k, c.scale, claim_sink(claim, FailWith::gtest), 12, 12);
  }
}

// Weights of the check claims: 3 heads, width 5, the reference's c and L.
FireWeights check_weights() {
  return {.c = 0.1, .L_multiplier = 1.0, .init_L = 24.0, .w1 = {0.9, -0.4, 0.7, 1.3, -1.1},
          .b1 = {-0.2, 0.3, 0.05, -0.6, 0.45},
          .w2 = {0.5, -0.3, 0.8, 0.2, -0.4, -0.6, 0.25, 0.1, 0.9, 0.3, 0.15, -0.7, 0.4, -0.2, 0.65},
          .b2 = {0.1, -0.05, 0.2}};
}

POSENC_CLAIM_TEST(FireCheck, CheckPassesPosencBiasesAndRefusesWrongConventions,
                  {"FIRE-CHECK-1", "fire",
                   "posenc check fire passes posenc's own biases (both presets against their regime's row, exact "
                   "biases stored in f16, bf16, f32 and f64, -inf where the causal mask puts it; rows on both sides of "
                   "the threshold) and fails: the second Linear's weights read as [w][heads] instead of [heads][w], the "
                   "normalizer without the threshold (ln(|c| q + 1)), a signed distance (no |i - j| above the "
                   "diagonal), c's sign kept (no |c|), eps dropped (exact regime), a -inf where no mask puts one",
                   "DESIGN.md (posenc check)", Oracle::reference,
                   {R::check_exact_f16, R::check_exact_bf16, R::check_exact_f32, R::check_exact_f64, R::check_envelope}}) {
  const std::size_t L = 40, H = 3, W = 5;
  const FireWeights w = check_weights();
  for (const auto& preset : SpecTraits<FireSpec>::presets()) {
    FireSpec s = fire_preset(preset.name, H);
    s.mlp_width = W;
    const BiasGeometry g{.query_length = L, .key_length = L, .mask = BiasMask::causal};
    const BiasGeometry full{.query_length = L, .key_length = L};
    std::vector<float> b32(fire_bias_size(s, g)), f32(fire_bias_size(s, full));
    FirePlan(s, w).bias(g, std::span<float>(b32));
    FirePlan(s, w).bias(full, std::span<float>(f32));
    const std::vector<double> v(b32.begin(), b32.end()), vf(f32.begin(), f32.end());
    const CheckReport ok = check_bias(s, w, BiasInput{v, H, L, L, {}, DType::f32, {}});
    count_case(claim);
    check_verdict(claim, ok, ok.held_to, std::string(preset.name));
    const CheckReport okf = check_bias(s, w, BiasInput{vf, H, L, L, {}, DType::f32, {}});
    check_verdict(claim, okf, okf.held_to, std::string(preset.name) + " mask none");
    auto fails = [&](const FireSpec& spec, const FireWeights& ww, const std::vector<double>& vals, const char* what) {
      EXPECT_FALSE(check_bias(spec, ww, BiasInput{vals, H, L, L, {}, DType::f32, {}}).passed()) << preset.name << " " << what;
      count_case(claim);
    };
    // The user's numbers made with a mistake, held to the right weights.
    FireWeights transposed = w;  // w2 read as [w][heads]
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t k = 0; k < W; ++k) transposed.w2[h * W + k] = w.w2[k * H + h];
    std::vector<float> t32(b32.size());
    FirePlan(s, transposed).bias(g, std::span<float>(t32));
    fails(s, w, std::vector<double>(t32.begin(), t32.end()), "w2 transposed");
    FireWeights no_threshold = w;
    no_threshold.L_multiplier = 0;
    std::vector<float> n32(b32.size());
    FirePlan(s, no_threshold).bias(g, std::span<float>(n32));
    fails(s, w, std::vector<double>(n32.begin(), n32.end()), "normalizer without threshold");
    // A signed distance (no |i - j|): above the diagonal x < 0, i.e. MLP(-|x|), which is the plan's value with W1
    // negated there.
    FireWeights negated = w;
    for (double& a : negated.w1) a = -a;
    std::vector<float> m32(f32.size());
    FirePlan(s, negated).bias(full, std::span<float>(m32));
    std::vector<double> signed_d(vf);
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = i + 1; j < L; ++j) signed_d[(h * L + i) * L + j] = m32[(h * L + i) * L + j];
    fails(s, w, signed_d, "signed distance above the diagonal");
    FireWeights neg_c = w;
    neg_c.c = -w.c;
    // With |c| the plan gives the same numbers for -c: the check must accept them...
    std::vector<float> c32(b32.size());
    FirePlan(s, neg_c).bias(g, std::span<float>(c32));
    EXPECT_TRUE(check_bias(s, w, BiasInput{std::vector<double>(c32.begin(), c32.end()), H, L, L, {}, DType::f32, {}}).passed())
        << preset.name << " -c gives |c|'s numbers";
    // ...while numbers made with a different c are refused.
    neg_c.c = 0.2;
    FirePlan(s, neg_c).bias(g, std::span<float>(c32));
    fails(s, w, std::vector<double>(c32.begin(), c32.end()), "c = 0.2 held to c = 0.1");
    std::vector<double> hole(v);
    hole[5 * L + 2] = -std::numeric_limits<double>::infinity();
    fails(s, w, hole, "-inf where no mask puts it");
    if (s.regime == FireRegime::exact) {
      FireSpec no_eps = s;
      no_eps.eps = kFireMinEps;
      std::vector<double> e64(fire_bias_size(s, g));
      FirePlan(no_eps, w).bias(g, std::span<double>(e64));
      EXPECT_FALSE(check_bias(s, w, BiasInput{e64, H, L, L, {}, DType::f64, {}}).passed()) << "eps dropped (f64)";
      count_case(claim);
    }
  }
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const FireSpec s = make_spec(H, W, FireRegime::exact);
    const BiasGeometry g{.query_length = L, .key_length = L};
    std::vector<double> b(fire_bias_size(s, g));
    FirePlan(s, w).bias(g, std::span<double>(b));
    for (double& x : b) x = round_to(x, t);
    const CheckReport rep = check_bias(s, w, BiasInput{b, H, L, L, {}, t, {}});
    count_case(claim);
    check_verdict(claim, rep, 0, "exact stored in " + std::string(to_string(t)));
  }
}

POSENC_PROPERTY(FireCheck, CheckReferencesMatchTheOracle,
                {"FIRE-CHECK-2", "fire",
                 "the references posenc check fire evaluates without MPFR (binary128 for the exact bias, float32 steps "
                 "for the cramming regime) agree with the MPFR oracle: within (w + 16) 2^-112 S, and bit for bit",
                 "DESIGN.md (posenc check); schemes/fire/check.hpp", Oracle::reference,
                 {R::check_reference_exact, R::check_reference_emulated}}) {
  const FireSpec s = spec_gen(3, 24);
  const FireWeights w = weights_gen(s, static_cast<double>(kMaxPos));
  FireSpec es = s, cs = s;
  es.regime = FireRegime::exact;
  es.mlp_sum = FireMlpSum::fma;
  cs.regime = FireRegime::cramming;
  cs.mlp_sum = *rc::gen::element(FireMlpSum::fma, FireMlpSum::unfused);
  const CheckEvaluator ev(cs, w, 64);
  const rf::FireOracle ex(es, w), cr(cs, w);
  tag(claim, "cramming " + std::string(to_string(cs.mlp_sum)));
  for (int n = 0; n < 3; ++n) {
    const std::int64_t q = *position_gen(), j = key_gen(q);
    count_case(claim);
    for (std::size_t h = 0; h < s.heads; ++h) {
      auto what = [&] { return spec_label(cs, w) + " h=" + std::to_string(h) + " q=" + std::to_string(q) + " j=" + std::to_string(j); };
      const CheckEvaluator::Exact e = ev.exact(h, q, j);
      const Real r = ex.bias_at(h, q, j);
      const Real mine = CheckEvaluator::value(e);
      const double x = static_cast<double>(ex.x(q, j));
      emit_real(claim_sink(claim), R::check_reference_exact, mine, r, e.hi, what,
                (static_cast<double>(s.mlp_width) + 16) * std::ldexp(1.0, -112) * condition_scale(s, w, h, x) +
                    std::ldexp(1.0, -1074));
      emit(claim_sink(claim), R::check_reference_emulated, ev.emulated(h, q, j).bias, cr.bias_at(h, q, j), what);
    }
  }
}

// The second Linear of head h in float32 at x, summed in one of the orders a BLAS kernel may take (test-local float32
// steps; volatile keeps every rounding where it is written, whatever the compiler's contraction setting).
enum class TestOrder { descending_fma, pairwise, split4_bias_first, fused_first_layer_fma };
float mlp_in_order(const FireSpec& s, const FireWeights& w, std::size_t h, float x, TestOrder order) {
  const std::size_t W = s.mlp_width;
  std::vector<float> r(W), t(W);
  for (std::size_t k = 0; k < W; ++k) {
    const float w1 = static_cast<float>(w.w1[k]), b1 = static_cast<float>(w.b1[k]);
    volatile float p = x * w1;
    const float v = order == TestOrder::fused_first_layer_fma ? std::fma(x, w1, b1) : p + b1;
    r[k] = v > 0.0f ? v : 0.0f;
    volatile float prod = r[k] * static_cast<float>(w.w2[h * W + k]);
    t[k] = prod;
  }
  const float b2 = static_cast<float>(w.b2[h]);
  switch (order) {
    case TestOrder::descending_fma: {  // an FMA chain over k descending, bias last
      float acc = 0.0f;
      for (std::size_t k = W; k-- > 0;) acc = std::fma(r[k], static_cast<float>(w.w2[h * W + k]), acc);
      volatile float out = acc + b2;
      return out;
    }
    case TestOrder::pairwise: {  // rounded products summed as a balanced tree, bias last
      std::vector<float> v = t;
      while (v.size() > 1) {
        std::vector<float> next;
        for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
          volatile float sum = v[i] + v[i + 1];
          next.push_back(static_cast<float>(sum));
        }
        if (v.size() % 2) next.push_back(v.back());
        v.swap(next);
      }
      volatile float out = (v.empty() ? 0.0f : v[0]) + b2;
      return out;
    }
    case TestOrder::split4_bias_first: {  // C = b2 first (beta = 1), four partial sums by k mod 4, then combined
      float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (std::size_t k = 0; k < W; ++k) {
        volatile float sum = part[k % 4] + t[k];
        part[k % 4] = sum;
      }
      volatile float a = part[0] + part[1], b = part[2] + part[3];
      volatile float ab = a + b;
      volatile float out = b2 + ab;
      return out;
    }
    case TestOrder::fused_first_layer_fma: {  // the first Linear fused, then posenc's fma chain
      float acc = 0.0f;
      for (std::size_t k = 0; k < W; ++k) acc = std::fma(r[k], static_cast<float>(w.w2[h * W + k]), acc);
      volatile float out = acc + b2;
      return out;
    }
  }
  return 0.0f;
}

POSENC_PROPERTY(FireCheck, EveryBlasSummationOrderLiesInTheEnvelope,
                {"FIRE-SUM-1", "fire",
                 "the cramming bias summed in any order a BLAS kernel may take lies within the envelope of posenc's "
                 "emulation in either --mlp-sum order (fire.check.envelope, gamma_{w+1} per side): the other "
                 "--mlp-sum order (the fast path), an FMA chain over k descending, a pairwise tree of rounded "
                 "products, four partial sums with the bias first (beta = 1) and a fused first Linear, all on "
                 "posenc's float32 x; and the two orders are each their own float32 steps bit for bit (FIRE-BIAS-1)",
                 "schemes/fire/check.hpp; OpenBLAS 0.3.21 sgemm kernels (held-out data/torch/fire_*)",
                 Oracle::reference, {R::check_envelope, R::bias_emulated, R::bias_emulated_unfused}}) {
  FireSpec s = spec_gen(3, 40);
  s.regime = FireRegime::cramming;
  s.mlp_sum = *rc::gen::element(FireMlpSum::fma, FireMlpSum::unfused);
  const FireWeights w = weights_gen(s, static_cast<double>(kMaxPos));
  FireSpec other = s;
  other.mlp_sum = s.mlp_sum == FireMlpSum::fma ? FireMlpSum::unfused : FireMlpSum::fma;
  const CheckEvaluator ev(s, w, 64);
  const FirePlan plan(s, w), plan_other(other, w);
  const rf::FireOracle oracle(s, w);
  tag(claim, std::string(to_string(s.mlp_sum)) + (s.mlp_width > 16 ? " wide" : " narrow"));
  const BudgetRow& env = budget(R::check_envelope);
  const EnvelopeAllowance exact_log{0.0, true};  // the same x on both sides: only the order differs
  for (int n = 0; n < 3; ++n) {
    const std::int64_t q = *position_gen(), j = key_gen(q);
    count_case(claim);
    for (std::size_t h = 0; h < s.heads; ++h) {
      auto what = [&] { return spec_label(s, w) + " h=" + std::to_string(h) + " q=" + std::to_string(q) + " j=" + std::to_string(j); };
      const CheckEvaluator::Emulated e = ev.emulated(h, q, j);
      emit(claim_sink(claim), s.mlp_sum == FireMlpSum::unfused ? R::bias_emulated_unfused : R::bias_emulated,
           plan.bias_value_f32(h, q, j), oracle.bias_at(h, q, j), what);
      const double E = envelope(s, w, h, e, exact_log);
      const Real re = rf::make_real(static_cast<double>(e.bias), 53);
      auto in_envelope = [&](float y, const char* order) {
        if (auto f = check(claim, env, measure(env, y, re, E), y, &re, [&] { return what() + " order=" + order; }))
          RC_FAIL(*f);
      };
      in_envelope(plan_other.bias_value_f32(h, q, j), to_string(other.mlp_sum).data());
      in_envelope(mlp_in_order(s, w, h, e.x, TestOrder::descending_fma), "fma descending");
      in_envelope(mlp_in_order(s, w, h, e.x, TestOrder::pairwise), "pairwise");
      in_envelope(mlp_in_order(s, w, h, e.x, TestOrder::split4_bias_first), "4 partial sums, bias first");
      in_envelope(mlp_in_order(s, w, h, e.x, TestOrder::fused_first_layer_fma), "fused first Linear");
    }
  }
}

POSENC_CLAIM_TEST(FireErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"FIRE-ERR-1", "fire",
                   "invalid arguments (weights of the wrong count, NaN, infinite or |v| > 1e6, for every weight; a "
                   "head or position out of range; a key length above 2^24, lengths out of range, key masks of the "
                   "wrong size or values, outputs of the wrong size, scores with a bad head_dim, scale or q/k size; "
                   "unknown presets) raise posenc::Error naming the parameter, value and accepted range (invalid spec "
                   "fields: FIRE-SPEC-1)",
                   "DESIGN.md §7", Oracle::identity, {}}) {
  const FireSpec s = make_spec(2, 3, FireRegime::exact);
  const FireWeights w{.c = 0.1, .L_multiplier = 1, .init_L = 512, .w1 = {1, 2, 3}, .b1 = {0, 0, 0},
                      .w2 = {1, 1, 1, 1, 1, 1}, .b2 = {0, 0}};
  const double nan = std::nan("");
  auto with = [&](auto mutate) {
    FireWeights x = w;
    mutate(x);
    return x;
  };
  expect_error(claim, "c", [&] { (void)FirePlan(s, with([&](FireWeights& x) { x.c = nan; })); }, "c NaN");
  expect_error(claim, "L_multiplier", [&] { (void)FirePlan(s, with([](FireWeights& x) { x.L_multiplier = 2e6; })); }, "L_multiplier 2e6");
  expect_error(claim, "init_L", [&] { (void)FirePlan(s, with([](FireWeights& x) { x.init_L = INFINITY; })); }, "init_L inf");
  expect_error(claim, "w1", [&] { (void)FirePlan(s, with([](FireWeights& x) { x.w1.pop_back(); })); }, "2 w1 for width 3");
  expect_error(claim, "b1", [&] { (void)FirePlan(s, with([&](FireWeights& x) { x.b1[1] = nan; })); }, "b1 NaN");
  expect_error(claim, "w2", [&] { (void)FirePlan(s, with([](FireWeights& x) { x.w2.push_back(1); })); }, "7 w2");
  expect_error(claim, "b2", [&] { (void)FirePlan(s, with([](FireWeights& x) { x.b2 = {0}; })); }, "1 b2 for 2 heads");
  const FirePlan plan(s, w);
  expect_error(claim, "head", [&] { (void)plan.bias_value_f32(2, 1, 0); }, "head 2");
  expect_error(claim, "q", [&] { (void)plan.bias_value_f64(0, -1, 0); }, "q -1");
  expect_error(claim, "j", [&] { (void)plan.bias_value_f64(0, 0, kMaxPos + 1); }, "j 2^24");
  expect_error(claim, "q", [&] { (void)plan.normalized_distance(kMaxPos + 1, 0); }, "x at q 2^24");
  expect_bias_call_errors(claim, plan, 2);
  std::vector<float> out(2 * 3 * 5);
  expect_error(claim, "key_length", [&] { plan.bias({.query_length = 1, .key_length = kFireMaxKeyLength + 1}, std::span<float>(out)); }, "Lk 2^24 + 1");
  expect_error(claim, "preset", [] { (void)fire_preset("fire-v2", 8); }, "unknown preset");
  expect_error(claim, "heads", [] { (void)fire_preset("fire", 0); }, "0 heads");
}

}  // namespace claims_fire

POSENC_SPEC_CONTRACT(posenc::FireSpec, Fire, "FIRE")
