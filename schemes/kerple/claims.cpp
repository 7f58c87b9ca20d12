// KERPLE's claims (KERPLE-*), as RapidCheck properties and enumerated tests. Reference claims compare the fast path
// with the MPFR oracle (include/oracle/posenc/reference/kerple.hpp, written from the definition independently of
// lib/); identity claims are exact equalities of the fast path (row kerple.bias.identity.bitwise). Every tolerance
// comes from budget.cpp; every compared number goes through the measuring harness (measure.hpp) or check().
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "schemes/kerple/budget.hpp"
#include "schemes/kerple/cases.hpp"
#include "schemes/kerple/check.hpp"
#include "schemes/kerple/measure.hpp"
#include "posenc/alibi.hpp"
#include "posenc/error.hpp"
#include "posenc/kerple.hpp"
#include "posenc/reference/kerple.hpp"
#include "support/bias_cases.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/spec_contract.hpp"

namespace claims_kerple {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
using namespace posenc::test::kerple;
namespace rf = posenc::reference;
namespace ca = posenc::cases::kerple;
using rf::Real;
using R = KerpleRow;

const std::string kConv = "CONVENTIONS.md §2.14; chijames/KERPLE megatron/mpu/layers.py";
const std::string kPaper = "Chi et al. 2022 (KERPLE), Prop. 1-2; CONVENTIONS.md §2.14";
constexpr std::int64_t kMaxD = (std::int64_t{1} << 31) - 1;

KerpleSpec make_spec(std::size_t heads, KerpleKernel k, KerpleRegime r) {
  KerpleSpec s{.heads = heads, .kernel = k, .regime = r};
  validate(s);
  return s;
}

// ---- generators -------------------------------------------------------------------------------------------

// One parameter: a hard value (clamp edges, exact powers), the reference's initialisation range, a trained-looking
// value, or anything accepted; sometimes rounded to float32 (a float32 checkpoint).
rc::Gen<double> parameter_gen(std::span<const double> hard, double init_hi) {
  const std::vector<double> h(hard.begin(), hard.end());
  return rc::gen::exec([h, init_hi] {
    double v = 0;
    switch (*rc::gen::inRange(0, 4)) {
      case 0: v = *rc::gen::elementOf(h); break;
      case 1: v = *rc::gen::inRange(0, 1 << 20) * init_hi / (1 << 20); break;
      case 2: v = std::exp2(*rc::gen::inRange(-1000, 3000) / 1000.0); break;
      default: v = (*rc::gen::inRange(-1000000, 1000000)) * 1e-3; break;
    }
    if (*rc::gen::arbitrary<bool>()) v = static_cast<float>(v);
    return v;
  });
}

KerpleWeights weights_gen(std::size_t heads) {
  KerpleWeights w;
  for (std::size_t h = 0; h < heads; ++h) {
    w.p.push_back(*parameter_gen(ca::kHardP, 2.0));
    w.a.push_back(*parameter_gen(ca::kHardA, 1.0));
  }
  return w;
}

KerpleSpec spec_gen(std::size_t max_heads) {
  KerpleSpec s = *rc::gen::arbitrary<KerpleSpec>();
  s.heads = std::min(s.heads, max_heads);
  return s;
}

rc::Gen<std::int64_t> distance_gen() {
  return rc::gen::oneOf(rc::gen::elementOf(std::vector<std::int64_t>(std::begin(ca::kHardDistances), std::end(ca::kHardDistances))),
                        rc::gen::inRange<std::int64_t>(0, 5000),
                        rc::gen::map(rc::gen::inRange(0, 31000), [](int e) {
                          return std::min<std::int64_t>(kMaxD, static_cast<std::int64_t>(std::exp2(e / 1000.0)));
                        }));
}

std::string region(const KerpleSpec& s) { return std::string(to_string(s.regime)) + " " + std::string(to_string(s.kernel)); }

void bitwise(const Claim& claim, double a, double b, const Describe& what) {
  expect_bitwise(claim, budget(R::bias_identity), a, b, what);
}

// ---------------------------------------------------------------------------------------------------------------
POSENC_PROPERTY(Kerple, BiasMatchesOracle,
                {"KERPLE-BIAS-1", "kerple",
                 "the bias of every head at a distance d (0 <= d < 2^31, the hard distances around 2^24 included) is "
                 "-p ln(1 + a d) / -a d^p of the clamped weights, correctly rounded (exact regime, f32 and f64), and "
                 "bit for bit the reference's float32 steps (megatron); the megatron value lies within the analysed "
                 "bound of the exact one",
                 kConv, Oracle::reference, {R::bias_exact_f32, R::bias_exact_f64, R::bias_emulated, R::emulated_vs_exact}}) {
  const KerpleSpec s = spec_gen(6);
  const KerpleWeights w = weights_gen(s.heads);
  tag(claim, region(s));
  for (int n = 0; n < 4; ++n) {
    count_case(claim);
    measure_value(s, w, *distance_gen(), claim_sink(claim));
  }
}

POSENC_CLAIM_TEST(Kerple, BiasMatchesOracleAtHardPlaces,
                  {"KERPLE-BIAS-2", "kerple",
                   "KERPLE-BIAS-1 for every pair of hard parameters (p below, at and above the clamps 0.01 and 2, "
                   "exact powers p = 0.5, 1, 2; a from 0.01 to 100) at every hard distance, both kernels and regimes",
                   kConv, Oracle::reference, {R::bias_exact_f32, R::bias_exact_f64, R::bias_emulated, R::emulated_vs_exact}}) {
  const Sink sink = claim_sink(claim, FailWith::gtest);
  for (KerpleKernel k : {KerpleKernel::log, KerpleKernel::power})
    for (KerpleRegime r : {KerpleRegime::exact, KerpleRegime::megatron}) {
      const std::size_t n = std::size(ca::kHardP) * std::size(ca::kHardA);
      KerpleWeights w;
      for (double p : ca::kHardP)
        for (double a : ca::kHardA) {
          w.p.push_back(p);
          w.a.push_back(a);
        }
      const KerpleSpec s = make_spec(n, k, r);
      for (std::int64_t d : ca::kHardDistances) {
        count_case(claim);
        measure_value(s, w, d, sink);
      }
    }
}

POSENC_PROPERTY(Kerple, BiasMatricesMatchOracle,
                {"KERPLE-BIAS-3", "kerple",
                 "bias matrices [heads][Lq][Lk] (queries the last Lq keys, a decoder step included) hold the bias of "
                 "d = q_i - j (0 after the query: the reference's tril) in f32 and f64, -inf exactly where the causal "
                 "mask or a padding key puts it",
                 kConv, Oracle::reference,
                 {R::bias_exact_f32, R::bias_exact_f64, R::bias_emulated, R::emulated_vs_exact, R::bias_identity}}) {
  const KerpleSpec s = spec_gen(4);
  const KerpleWeights w = weights_gen(s.heads);
  const GeometryCase gc = *geometry_gen(300, ca::kHardLengths);
  tag(claim, region(s));
  count_case(claim);
  measure_bias(s, w, gc.view(), claim_sink(claim));
}

POSENC_PROPERTY(Kerple, ZeroAtDistanceZeroAndNonIncreasing,
                {"KERPLE-SHAPE-1", "kerple",
                 "the bias is -0 at distance 0 (on the diagonal and, without a mask, after the query) and "
                 "non-increasing in the distance, exactly, in f32 and f64 and both regimes: b(d + 1) <= b(d) at "
                 "random d and over whole rows",
                 kPaper, Oracle::identity, {R::bias_identity}}) {
  const KerpleSpec s = spec_gen(4);
  const KerpleWeights w = weights_gen(s.heads);
  const KerplePlan plan(s, w);
  tag(claim, region(s));
  for (std::size_t h = 0; h < s.heads; ++h) {
    const float z32 = plan.bias_value_f32(h, 0);
    const double z64 = plan.bias_value_f64(h, 0);
    RC_ASSERT(z32 == 0.0f && std::signbit(z32));
    RC_ASSERT(z64 == 0.0 && std::signbit(z64));
    for (int n = 0; n < 8; ++n) {
      const std::int64_t d = std::min(*distance_gen(), kMaxD - 1);
      count_case(claim);
      RC_ASSERT(plan.bias_value_f32(h, d + 1) <= plan.bias_value_f32(h, d));
      RC_ASSERT(plan.bias_value_f64(h, d + 1) <= plan.bias_value_f64(h, d));
    }
  }
  const std::size_t L = *rc::gen::inRange<std::size_t>(1, 600);
  std::vector<double> b(kerple_bias_size(s, {.query_length = 1, .key_length = L}));
  plan.bias({.query_length = 1, .key_length = L}, std::span<double>(b));
  for (std::size_t h = 0; h < s.heads; ++h) {
    const double* row = b.data() + h * L;  // keys 0 .. L-1 seen from the query at L - 1: d = L - 1 - j
    RC_ASSERT(row[L - 1] == 0.0 && std::signbit(row[L - 1]));
    for (std::size_t j = 0; j + 1 < L; ++j) RC_ASSERT(row[j] <= row[j + 1]);
  }
  count_case(claim);
}

POSENC_PROPERTY(Kerple, ValuesIndependentOfGeometryThreadsAndStorePath,
                {"KERPLE-REPRO-1", "kerple",
                 "every entry of a bias matrix is bit for bit bias_value(h, d) of its distance (so rows are "
                 "Toeplitz, b(i, j) = b(i+1, j+1)), whatever the geometry, thread count (1, 2) and store path "
                 "(streaming stores on or off), f32 and f64",
                 kConv, Oracle::identity, {R::bias_identity}}) {
  const KerpleSpec s = spec_gen(3);
  const KerpleWeights w = weights_gen(s.heads);
  const GeometryCase gc = *geometry_gen(200, ca::kHardLengths);
  const BiasGeometry g = gc.view();
  const KerplePlan plan(s, w);
  tag(claim, region(s));
  for_each_stored_bias(plan, s.heads, g, kerple_bias_size(s, g), claim,
                       [&](auto h, auto i, auto j, double b32, double b64, auto where) {
    const std::int64_t d = rf::kerple_distance(i, j, g.query_length, g.key_length);
    auto what = [&] { return spec_label(s, w) + " " + geometry_label(g) + where(); };
    bitwise(claim, b32, plan.bias_value_f32(h, d), what);
    bitwise(claim, b64, plan.bias_value_f64(h, d), what);
  });
}

POSENC_CLAIM_TEST(Kerple, ParametersAreClampedAsTheReferenceClampsThem,
                  {"KERPLE-CLAMP-1", "kerple",
                   "bias_p and bias_a below 0.01 give exactly the values of 0.01 (float32 0.01 in the megatron "
                   "regime) and a power-kernel p above 2 those of 2, in both regimes; plan.p() / a() report the "
                   "clamped values (the oracle's clamp agrees)",
                   kConv, Oracle::identity, {R::bias_identity}}) {
  for (KerpleKernel k : {KerpleKernel::log, KerpleKernel::power})
    for (KerpleRegime r : {KerpleRegime::exact, KerpleRegime::megatron}) {
      const KerpleSpec s = make_spec(4, k, r);
      const double eps = r == KerpleRegime::exact ? 0.01 : static_cast<double>(0.01f);
      const KerpleWeights low{{-5.0, 0.0, 0.001, 0.7}, {0.3, -1.0, 0.005, 0.0099}};
      const KerpleWeights at{{eps, eps, eps, 0.7}, {0.3, eps, eps, eps}};
      const KerplePlan a(s, low), b(s, at);
      const rf::KerpleOracle o(s, low);
      for (std::size_t h = 0; h < 4; ++h) {
        EXPECT_EQ(a.p()[h], b.p()[h]) << h;
        EXPECT_EQ(a.a()[h], b.a()[h]) << h;
        EXPECT_EQ(a.p()[h], static_cast<double>(o.p(h))) << h;
        EXPECT_EQ(a.a()[h], static_cast<double>(o.a(h))) << h;
        for (std::int64_t d : ca::kHardDistances) {
          auto what = [&] { return region(s) + " h=" + std::to_string(h) + " d=" + std::to_string(d); };
          bitwise(claim, a.bias_value_f64(h, d), b.bias_value_f64(h, d), what);
          bitwise(claim, a.bias_value_f32(h, d), b.bias_value_f32(h, d), what);
        }
        count_case(claim);
      }
      if (k == KerpleKernel::power) {
        const KerplePlan hi(s, KerpleWeights{{2.5, 7.0, 2.0, 1.0}, {1.0, 1.0, 1.0, 1.0}});
        const KerplePlan two(s, KerpleWeights{{2.0, 2.0, 2.0, 1.0}, {1.0, 1.0, 1.0, 1.0}});
        for (std::size_t h = 0; h < 4; ++h)
          for (std::int64_t d : ca::kHardDistances)
            bitwise(claim, hi.bias_value_f64(h, d), two.bias_value_f64(h, d), [&] { return "p > 2 h=" + std::to_string(h); });
        count_case(claim);
      }
    }
}

POSENC_CLAIM_TEST(Kerple, PowerKernelWithPOneIsAlibi,
                  {"KERPLE-ALIBI-1", "kerple",
                   "the power kernel with p = 1 and a = ALiBi's slopes is ALiBi's gpt-neox relative bias -m (i - j), "
                   "bit for bit: exact regime for n in {1, 2, 4, 8} (dyadic slopes, every head with m >= 0.01), "
                   "megatron against ALiBi's ofirpress float32 regime for every n <= 64; heads whose slope is below "
                   "0.01 (n = 8: heads 6, 7) differ, because the reference clamps bias_a >= 0.01 also in its ALiBi "
                   "('original') mode",
                   kConv + "; ParallelKerplePower pos_emb *_original", Oracle::identity, {R::bias_identity}}) {
  const std::size_t L = 70;
  const BiasGeometry g{.query_length = L, .key_length = L, .mask = BiasMask::causal};
  for (std::size_t n = 1; n <= 64; ++n) {
    for (KerpleRegime r : {KerpleRegime::exact, KerpleRegime::megatron}) {
      const bool exact = r == KerpleRegime::exact;
      if (exact && n != 1 && n != 2 && n != 4 && n != 8) continue;
      const AlibiPlan alibi(AlibiSpec{.heads = n, .variant = AlibiVariant::relative,
                                      .regime = exact ? AlibiRegime::exact : AlibiRegime::ofirpress});
      KerpleWeights w{std::vector<double>(n, 1.0), {alibi.slopes().begin(), alibi.slopes().end()}};
      const KerplePlan kp(make_spec(n, KerpleKernel::power, r), w);
      std::vector<float> ka(n * L * L), al(n * L * L);
      kp.bias(g, std::span<float>(ka));
      alibi.bias(g, std::span<float>(al));
      for (std::size_t h = 0; h < n; ++h) {
        const bool clamped = alibi.slopes()[h] < kp.a()[h];
        EXPECT_EQ(clamped, alibi.slopes()[h] < (exact ? 0.01 : static_cast<double>(0.01f))) << n << " " << h;
        for (std::size_t i = 0; i < L; ++i)
          for (std::size_t j = 0; j <= i; ++j) {
            const std::size_t at = (h * L + i) * L + j;
            // ALiBi's gpt-neox bias is +0 on the diagonal, KERPLE's -0 (-p * 0): equal as numbers.
            const double x = al[at] == 0 ? 0.0 : al[at], y = ka[at] == 0 ? 0.0 : ka[at];
            if (clamped) {
              if (j < i) {
                EXPECT_NE(x, y) << "n=" << n << " h=" << h;
              }
            } else {
              bitwise(claim, y, x, [&] { return "n=" + std::to_string(n) + " h=" + std::to_string(h) + " i=" + std::to_string(i) + " j=" + std::to_string(j); });
            }
          }
        count_case(claim);
      }
    }
  }
}

POSENC_PROPERTY(Kerple, KernelsAreConditionallyPositiveDefinite,
                {"KERPLE-CPD-1", "kerple",
                 "on random sets of N <= 24 integer positions x_i in [0, 10^6] and random integer c with sum c_i = 0, "
                 "sum_ij c_i c_j b_h(|x_i - x_j|) >= 0 (evaluated exactly from the fast f64 values; both kernels, "
                 "any clamped weights): the kernels are conditionally positive definite, as the paper's Prop. 1-2 "
                 "state; and with c = (1, ..., 1) (sum != 0) the form is < 0 whenever two points differ, so the "
                 "sum-zero condition is what the claim needs",
                 kPaper, Oracle::identity, {R::cpd}}) {
  KerpleSpec s = spec_gen(2);
  s.regime = KerpleRegime::exact;
  const KerpleWeights w = weights_gen(s.heads);
  const KerplePlan plan(s, w);
  tag(claim, region(s));
  const std::size_t N = *rc::gen::inRange<std::size_t>(2, 25);
  const auto xs = *rc::gen::container<std::vector<std::int64_t>>(N, rc::gen::inRange<std::int64_t>(0, 1000001));
  std::vector<std::int64_t> c = *rc::gen::container<std::vector<std::int64_t>>(N - 1, rc::gen::inRange<std::int64_t>(-100, 101));
  std::int64_t sum = 0;
  for (auto v : c) sum += v;
  c.push_back(-sum);
  const rf::PrecisionGuard guard(256);
  for (std::size_t h = 0; h < s.heads; ++h) {
    Real q = rf::make_real(0.0, 256), ones = rf::make_real(0.0, 256);
    double mag = 0;
    bool distinct = false;
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j < N; ++j) {
        const std::int64_t d = xs[i] > xs[j] ? xs[i] - xs[j] : xs[j] - xs[i];
        distinct = distinct || d != 0;
        const double k = plan.bias_value_f64(h, d);
        q += rf::make_real(k, 256) * static_cast<double>(c[i] * c[j]);
        ones += rf::make_real(k, 256);
        mag += std::fabs(k * static_cast<double>(c[i] * c[j]));
      }
    const double qd = static_cast<double>(q);
    const double value = qd >= 0 ? 0.0 : -qd / (std::ldexp(1.0, -51) * mag);
    count_case(claim);
    emit_value(claim_sink(claim), R::cpd, value, [&] { return spec_label(s, w) + " h=" + std::to_string(h) + " c^T K c=" + format_real(qd); });
    if (distinct) RC_ASSERT(static_cast<double>(ones) < 0);
  }
}

POSENC_CLAIM_TEST(Kerple, ThePowerKernelBeyondTwoIsNotConditionallyPositiveDefinite,
                  {"KERPLE-CPD-2", "kerple",
                   "KERPLE-CPD-1's test can fail: for -|m - n|^3 (p = 3, which the power kernel's clamp to p <= 2 "
                   "excludes) the points (0, 1, 2) with c = (1, -2, 1) give c^T K c = -8 < 0, and posenc clamps "
                   "such a p to 2, where the same form is 0",
                   kPaper, Oracle::identity, {R::cpd}}) {
  const std::int64_t xs[] = {0, 1, 2}, c[] = {1, -2, 1};
  auto form = [&](auto k) {
    double q = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) q += static_cast<double>(c[i] * c[j]) * k(std::llabs(xs[i] - xs[j]));
    return q;
  };
  const double cubic = form([](std::int64_t d) { return -std::pow(static_cast<double>(d), 3.0); });
  EXPECT_EQ(cubic, -8.0);  // 2 (c0 c1 K01 + c0 c2 K02 + c1 c2 K12) = 2 (2 - 8 + 2)
  const KerplePlan plan(make_spec(1, KerpleKernel::power, KerpleRegime::exact), KerpleWeights{{3.0}, {1.0}});
  EXPECT_EQ(plan.p()[0], 2.0);
  const double clamped = form([&](std::int64_t d) { return plan.bias_value_f64(0, d); });
  emit_value(claim_sink(claim, FailWith::gtest), R::cpd, clamped >= 0 ? 0.0 : 2.0, [&] { return "p = 3 clamped to 2: c^T K c = " + format_real(clamped); });
  count_case(claim);
}

POSENC_PROPERTY(Kerple, FusedScoresMatchOracle,
                {"KERPLE-SCORES-1", "kerple",
                 "scores = scale <q_i, k_j> + bias (bias rows, then a beta = 1 gemm; causal: per 256-row block up to "
                 "the last visible key) within the gemm's a-priori bound of the exact value in f32 and f64, -inf "
                 "where masked",
                 kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::bias_identity}}) {
  const KerpleSpec s = spec_gen(2);
  const KerpleWeights w = weights_gen(s.heads);
  const GeometryCase gc = *geometry_gen(10, ca::kHardLengths);
  const BiasGeometry g = gc.view();
  const ScoreOperands c = score_operands_gen(s.heads, g);
  tag(claim, region(s));
  count_case(claim);
  measure_scores(s, w, g, c.d, c.q, c.k, c.scale, claim_sink(claim));
}

POSENC_CLAIM_TEST(Kerple, FusedCausalScoresAcrossGemmRowBlocks,
                  {"KERPLE-SCORES-2", "kerple",
                   "KERPLE-SCORES-1 for a causal 600 x 600 geometry (rows 255/256 and 511/512 straddle the gemm's row "
                   "blocks) and a decoder step (1 x 600)",
                   kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::bias_identity}}) {
  const KerpleSpec s = make_spec(1, KerpleKernel::log, KerpleRegime::megatron);
  const KerpleWeights w{{1.3}, {0.2}};
  for (const auto& [g, c] : causal_block_score_cases(600)) {
    count_case(claim);
    measure_scores(s, w, g, c.d, c.q, c.k, c.scale, claim_sink(claim, FailWith::gtest), 12, 12);
  }
}

POSENC_CLAIM_TEST(KerpleCheck, CheckPassesPosencBiasesAndRefusesWrongConventions,
                  {"KERPLE-CHECK-1", "kerple",
                   "posenc check kerple passes posenc's own biases (both presets in the megatron regime against the "
                   "emulation envelope, exact biases stored in f16, bf16, f32 and f64 against the exact row, -inf "
                   "where the causal mask puts it) and fails: bias_p and bias_a swapped, every distance off by one, the "
                   "sign flipped, the log kernel's float32 1 + a d (megatron numbers) held to the exact regime, a "
                   "-inf where no mask puts one",
                   "DESIGN.md (posenc check)", Oracle::reference,
                   {R::check_exact_f16, R::check_exact_bf16, R::check_exact_f32, R::check_exact_f64, R::check_envelope}}) {
  const std::size_t L = 40, H = 3;
  const KerpleWeights w{{1.7, 0.4, 1.1}, {0.02, 0.6, 0.15}};
  for (const auto& preset : SpecTraits<KerpleSpec>::presets()) {
    const KerpleSpec s = kerple_preset(preset.name, H);
    const BiasGeometry g{.query_length = L, .key_length = L, .mask = BiasMask::causal};
    std::vector<float> b32(kerple_bias_size(s, g));
    KerplePlan(s, w).bias(g, std::span<float>(b32));
    const std::vector<double> v(b32.begin(), b32.end());
    const CheckReport ok = check_bias(s, w, BiasInput{v, H, L, L, {}, DType::f32, {}});
    count_case(claim);
    check_verdict(claim, ok, ok.held_to, std::string(preset.name));
    const KerpleWeights swapped{w.a, w.p};
    EXPECT_FALSE(check_bias(s, swapped, BiasInput{v, H, L, L, {}, DType::f32, {}}).passed()) << preset.name << " swapped";
    std::vector<double> neg(v), shift(v), hole(v);
    for (double& x : neg) x = std::isfinite(x) && x != 0 ? -x : x;
    EXPECT_FALSE(check_bias(s, w, BiasInput{neg, H, L, L, {}, DType::f32, {}}).passed()) << preset.name << " sign";
    for (std::size_t r = 0; r < H * L; ++r)
      for (std::size_t j = 1; j < L; ++j) shift[r * L + j] = std::isfinite(v[r * L + j]) ? v[r * L + j - 1] : v[r * L + j];
    EXPECT_FALSE(check_bias(s, w, BiasInput{shift, H, L, L, {}, DType::f32, {}}).passed()) << preset.name << " off by one";
    hole[5 * L + 2] = -std::numeric_limits<double>::infinity();
    EXPECT_FALSE(check_bias(s, w, BiasInput{hole, H, L, L, {}, DType::f32, {}}).passed()) << preset.name << " -inf";
    count_case(claim);
    if (s.kernel == KerpleKernel::log) {
      KerpleSpec es = s;
      es.regime = KerpleRegime::exact;
      EXPECT_FALSE(check_bias(es, w, BiasInput{v, H, L, L, {}, DType::f32, {}}).passed())
          << "megatron float32 numbers (a = 0.02: 1 + a d in float32) held to the exact regime";
      count_case(claim);
    }
  }
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64})
    for (KerpleKernel k : {KerpleKernel::log, KerpleKernel::power}) {
      const KerpleSpec s = make_spec(H, k, KerpleRegime::exact);
      const BiasGeometry g{.query_length = L, .key_length = L};
      std::vector<double> b(kerple_bias_size(s, g));
      KerplePlan(s, w).bias(g, std::span<double>(b));
      for (double& x : b) x = round_to(x, t);
      const CheckReport rep = check_bias(s, w, BiasInput{b, H, L, L, {}, t, {}});
      count_case(claim);
      check_verdict(claim, rep, 0, "exact " + std::string(to_string(k)) + " stored in " + std::string(to_string(t)));
    }
}

POSENC_CLAIM_TEST(KerpleErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"KERPLE-ERR-1", "kerple",
                   "invalid arguments (weights of the wrong count, NaN, infinite or |v| > 1e6; a head or distance out "
                   "of range; lengths out of range, key masks of the wrong size or values, outputs of the wrong size, "
                   "scores with a bad head_dim, scale or q/k size; unknown presets) raise posenc::Error naming the "
                   "parameter, value and accepted range (invalid spec fields: KERPLE-SPEC-1)",
                   "DESIGN.md §7", Oracle::identity, {}}) {
  const KerpleSpec s = make_spec(4, KerpleKernel::log, KerpleRegime::exact);
  const KerpleWeights w{{1, 1, 1, 1}, {0.5, 0.5, 0.5, 0.5}};
  const double nan = std::nan("");
  expect_error(claim, "bias_p", [&] { (void)KerplePlan(s, KerpleWeights{{1, 1, 1}, w.a}); }, "3 p for 4 heads");
  expect_error(claim, "bias_a", [&] { (void)KerplePlan(s, KerpleWeights{w.p, {0.5, 0.5, 0.5, 0.5, 0.5}}); }, "5 a for 4 heads");
  expect_error(claim, "bias_p", [&] { (void)KerplePlan(s, KerpleWeights{{1, nan, 1, 1}, w.a}); }, "NaN p");
  expect_error(claim, "bias_a", [&] { (void)KerplePlan(s, KerpleWeights{w.p, {0.5, 0.5, INFINITY, 0.5}}); }, "inf a");
  expect_error(claim, "bias_p", [&] { (void)KerplePlan(s, KerpleWeights{{1, 1, 2e6, 1}, w.a}); }, "p 2e6");
  const KerplePlan plan(s, w);
  expect_error(claim, "head", [&] { (void)plan.bias_value_f32(4, 1); }, "head 4");
  expect_error(claim, "d", [&] { (void)plan.bias_value_f64(0, -1); }, "d -1");
  expect_error(claim, "d", [&] { (void)plan.bias_value_f64(0, kMaxD + 1); }, "d 2^31");
  expect_bias_call_errors(claim, plan, 4);
  expect_error(claim, "preset", [] { (void)kerple_preset("kerple-exp", 8); }, "unknown preset");
  expect_error(claim, "heads", [] { (void)kerple_preset("kerple-log", 0); }, "0 heads");
}

}  // namespace claims_kerple

POSENC_SPEC_CONTRACT(posenc::KerpleSpec, Kerple, "KERPLE")
