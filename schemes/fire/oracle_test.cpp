// Self-tests of the FIRE oracle. The oracle is the ground truth of the fire property suite, so each test here is built
// to fail if the oracle is wrong: exact-regime values against literals derived by hand from fire_spec.hpp (x = 2^10
// ln 2 and friends through MPFR's const_log2, never its log; rational biases at d = 0 rounded once, ties to even; a
// ReLU switching off; an MLP whose x-terms cancel to a midpoint) and against an independent Boost/MPFR evaluation of
// the formula at 4P + 400 bits; the cramming regime against literals derived by hand (x = 2 RN32(ln 2), the fused
// accumulation, the two roundings of h_k) and against plain C float arithmetic (IEEE float32 *, /, + and fmaf are
// correctly rounded; glibc's double log is within 0.52 ulp, so its float32 rounding is used only where a 4-ulp
// window around the double result rounds to one float32); symmetry in j about q; rows with q <= thr sharing one
// function of d; the geometry; the condition scale; the score; every bad argument against the posenc::Error it must
// raise.
//
// Break-the-oracle map: each mutation of schemes/fire/oracle.cpp below was applied and the suite run; the tests
// named failed (the mutant's own exceptions included):
//   |c| -> c in the exact regime               LiteralNegativeC, ExactMatchesIndependentEvaluation, the shape,
//                                              geometry, scale and score properties (ln of 1 - |c| d: no rounding)
//   |RN32(c32 D)| -> RN32(c32 D) (cramming)     LiteralX, LiteralTwoRoundingsOfTheHiddenUnit, WeightsAreRounded...,
//                                              CrammingMatchesPlainCFloatArithmetic(Sweep), the shape properties
//   N = q (the threshold dropped)              LiteralThresholdRows, RowsBelowTheThresholdShareOneFunction,
//                                              XIsMonotone, ExactMatchesIndependentEvaluation, LiteralX, ...
//   eps rounded to float32 in the exact regime  LiteralLog2Values, LiteralThresholdRows, LiteralReluSwitchesOff,
//                                              ExactMatchesIndependentEvaluation, ...
//   h_k rounded once (x W1 + b1 fused)         LiteralTwoRoundingsOfTheHiddenUnit, CrammingMatchesPlainCFloatArithmetic
//                                              (property and sweep)
//   acc = RN32(RN32(r W2) + acc) (unfused)     LiteralFusedAccumulation, CrammingMatchesPlainCFloatArithmetic (both)
//   no ReLU (r = h) in either regime            LiteralReluSwitchesOff, LiteralReluJustAboveItsKink,
//                                              ExactMatchesIndependentEvaluation / CrammingMatchesPlainCFloat...
//   x's ends not swapped for W1 < 0, or an      LiteralReluWithinTwoToTheMinus80OfItsKink (a unit 2^-84 from its kink
//   undecided ReLU taken as on / as off         whose wrong decision turns b into the rational midpoint 1 + 2^-24)
//   the rational value rounded to 53 bits first LiteralRationalBiasRoundedOnce, ExactMatchesIndependentEvaluation
//   the first enclosure accepted unchecked      LiteralDeepCancellationNeedsMorePrecision
//   mpfr_can_round acceptance, no A == 0 case   LiteralCancellingUnitsGiveAMidpoint, LiteralRationalBiasRoundedOnce and
//                                              others: no termination (logic_error at 2^20 bits)
//   (The A == 0 branch alone is redundant: the enclosure of 0 x + B is [B, B], which rounds once; removing it is an
//   equivalent mutant.)
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/fire_spec.hpp"
#include "posenc/reference/fire.hpp"
#include "posenc/reference/mp.hpp"
#include "test_util.hpp"

namespace oracle_fire {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::FireRegime;
using posenc::FireSpec;
using posenc::FireWeights;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

constexpr std::int64_t kTwo24 = std::int64_t{1} << 24;

FireSpec make_spec(std::size_t heads, std::size_t width, double eps, FireRegime regime) {
  FireSpec s;
  s.heads = heads;
  s.mlp_width = width;
  s.eps = eps;
  s.regime = regime;
  posenc::validate(s);
  return s;
}

// One head, one unit: b = b2 + W2 max(0, W1 x + b1).
FireWeights one_unit(double c, double lm, double il, double w1, double b1, double w2, double b2) {
  return FireWeights{c, lm, il, {w1}, {b1}, {w2}, {b2}};
}
// The identity MLP (W1 = W2 = 1, b1 = b2 = 0): b = x.
FireWeights identity(double c, double lm, double il) { return one_unit(c, lm, il, 1.0, 0.0, 1.0, 0.0); }

FireOracle oracle(const FireWeights& w, double eps, FireRegime regime, unsigned bits = kDefaultBits,
                  std::size_t heads = 1) {
  return FireOracle(make_spec(heads, w.w1.size(), eps, regime), w, bits);
}

// |a - b| <= 2^e
bool within_pow2(const Real& a, const Real& b, long e) { return abs_below_pow2(sub(a, b), e); }
bool positive_zero(const Real& x) { return mpfr_zero_p(raw(x)) != 0 && mpfr_signbit(raw(x)) == 0; }

// The parameter named by the posenc::Error f() throws, or "" if it throws none.
std::string param_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const posenc::Error& e) {
    return e.parameter();
  }
  return "";
}

// 2^e ln 2 correctly rounded to bits (MPFR's const_log2, not its log).
Real ln2_times_pow2(long e, unsigned bits) {
  Real r = make_real(bits);
  mpfr_const_log2(raw(r), MPFR_RNDN);
  mpfr_mul_2si(raw(r), raw(r), e, MPFR_RNDN);
  return r;
}
Real ln2_wide() { return ln2_times_pow2(0, 4000); }

// ---- the independent evaluation ------------------------------------------------------------------------------

// fire_spec.hpp's formula with Boost expression templates at `bits` (PrecisionGuard), written as the reference code
// writes it: log(|c (q - j)| + 1) / (log(|c max(q, |L_mult init_L|)| + 1) + eps), then the MLP with max(0, .).
Real boost_x(const FireWeights& w, double eps, std::int64_t q, std::int64_t j, unsigned bits) {
  PrecisionGuard guard(bits);
  using boost::multiprecision::abs;
  using boost::multiprecision::log;
  const Real thr = abs(Real(w.L_multiplier) * Real(w.init_L));
  const Real normalizer = Real(q) > thr ? Real(q) : thr;
  const Real rel = Real(q) - Real(j);
  const Real x = log(abs(Real(w.c) * rel) + 1) / (log(abs(Real(w.c) * normalizer) + 1) + Real(eps));
  return with_bits(x, bits);
}

Real boost_bias(const FireWeights& w, std::size_t width, double eps, std::size_t h, std::int64_t q, std::int64_t j,
                unsigned bits) {
  const Real x = boost_x(w, eps, q, j, bits);
  PrecisionGuard guard(bits);
  Real b = Real(w.b2[h]);
  for (std::size_t k = 0; k < width; ++k) {
    const Real pre = Real(w.w1[k]) * x + Real(w.b1[k]);
    if (pre > 0) b += Real(w.w2[h * width + k]) * pre;
  }
  return with_bits(b, bits);
}

Real boost_scale(const FireWeights& w, std::size_t width, double eps, std::size_t h, std::int64_t q, std::int64_t j,
                 unsigned bits) {
  const Real x = boost_x(w, eps, q, j, bits);
  PrecisionGuard guard(bits);
  using boost::multiprecision::abs;
  Real s = abs(Real(w.b2[h]));
  for (std::size_t k = 0; k < width; ++k)
    s += abs(Real(w.w2[h * width + k])) * (abs(Real(w.w1[k])) * x + abs(Real(w.b1[k])));
  return with_bits(s, bits);
}

// ---- the cramming steps in plain C float arithmetic ------------------------------------------------------------


struct CFloat {
  float value;
  bool safe;
};

// fire_spec.hpp's cramming steps on x86-64 SSE (FLT_EVAL_METHOD 0, no fast-math; volatile keeps the compiler from
// contracting a * b + c): (float)double is RN32, float * / + are IEEE binary32, std::fma(float) is one rounding.
CFloat c_x(const FireWeights& w, double eps, std::int64_t q, std::int64_t j) {
  const float c = static_cast<float>(w.c), lm = static_cast<float>(w.L_multiplier),
              il = static_cast<float>(w.init_L), e = static_cast<float>(eps);
  volatile float thr_signed = lm * il;
  const float thr = std::fabs(thr_signed);
  const float Q = static_cast<float>(q), J = static_cast<float>(j);
  volatile float D = Q - J;
  const float N = Q > thr ? Q : thr;  // torch.max(positions, threshold)
  volatile float cd = c * D;
  volatile float u1 = std::fabs(cd) + 1.0f;
  volatile float cn = c * N;
  volatile float u2 = std::fabs(cn) + 1.0f;
  float l = 0, n = 0;
  const bool safe_l = to_float_safely(std::log(static_cast<double>(u1)), &l);
  const bool safe_n = to_float_safely(std::log(static_cast<double>(u2)), &n);
  volatile float den = n + e;
  volatile float x = l / den;
  return {x, safe_l && safe_n};
}

CFloat c_bias(const FireWeights& w, std::size_t width, double eps, std::size_t h, std::int64_t q, std::int64_t j) {
  const CFloat x = c_x(w, eps, q, j);
  float acc = 0.0f;
  for (std::size_t k = 0; k < width; ++k) {
    volatile float p = x.value * static_cast<float>(w.w1[k]);
    volatile float hk = p + static_cast<float>(w.b1[k]);
    const float r = hk > 0.0f ? static_cast<float>(hk) : 0.0f;
    acc = std::fma(r, static_cast<float>(w.w2[h * width + k]), acc);
  }
  volatile float b = acc + static_cast<float>(w.b2[h]);
  return {b, x.safe};
}

// ---- generators -------------------------------------------------------------------------------------------

rc::Gen<double> genWeight() {
  return rc::gen::exec([] {
    const int kind = *rc::gen::inRange(0, 4);
    if (kind == 0) return *rc::gen::inRange(-2000000, 2000001) / 1000000.0;  // [-2, 2]
    if (kind == 1)
      return *rc::gen::element(0.0, -0.0, 1.0, -1.0, 0.5, -0.25, 2.0, 1.0 / 3.0, -0.1, 1e-6, 0x1p-24, 1e6, -1e6,
                               12.5, 1e-40 /* a float32 subnormal */, -3e-300);
    if (kind == 2) return *rc::gen::inRange(-999, 1000) * 1.0 + *rc::gen::inRange(0, 1 << 20) * 0x1p-20;
    return static_cast<double>(*rc::gen::inRange<std::int64_t>(-(std::int64_t{1} << 53), std::int64_t{1} << 53)) *
           0x1p-52;  // (-2, 2), 53 bits
  });
}

rc::Gen<double> genC() {
  return rc::gen::oneOf(rc::gen::element(0.1, -0.1, 1.0, 0.0, 1e-6, -3.7, 1e6, 0.01, 2.5),
                        rc::gen::map(rc::gen::inRange(-2000000, 2000001), [](int v) { return v / 1000000.0; }));
}

rc::Gen<double> genEps() { return rc::gen::element(1e-6, 1e-12, 1.0, 0.5, 0x1p-10, 1e-3, 1e-7, 3.3e-5); }

// thr = |L_multiplier init_L|: 512, 0, small, fractional, around positions, up to 2^24.
struct Threshold {
  double lm, il;
};
rc::Gen<Threshold> genThreshold() {
  return rc::gen::exec([] {
    const int kind = *rc::gen::inRange(0, 3);
    if (kind == 0)
      return *rc::gen::element(Threshold{1.0, 512.0}, Threshold{0.0, 512.0}, Threshold{1.0, 0.0},
                               Threshold{-0.5, 6.0}, Threshold{1.0 / 3.0, 3.0}, Threshold{1.0, 16777216.0},
                               Threshold{2.5, -7.0}, Threshold{1.7, 300.0});
    if (kind == 1) return Threshold{*genWeight(), *rc::gen::inRange(0, 5000) * 1.0};
    return Threshold{*rc::gen::inRange(-3000, 3000) / 1000.0, *rc::gen::inRange(-100000, 100000) / 7.0};
  });
}

rc::Gen<std::int64_t> genPosition() {
  return rc::gen::exec([] {
    const int kind = *rc::gen::inRange(0, 4);
    if (kind == 0) return *rc::gen::element<std::int64_t>(0, 1, 2, 3, 511, 512, 513, 1000, kTwo24 - 2, kTwo24 - 1);
    if (kind == 1) return *rc::gen::inRange<std::int64_t>(0, 64);
    if (kind == 2) return *rc::gen::inRange<std::int64_t>(0, 2000);
    return *rc::gen::inRange<std::int64_t>(0, kTwo24);
  });
}

// A random model: heads in [1, 3], width in [1, 8] (sometimes 32).
struct Model {
  FireSpec spec;
  FireWeights w;
};
Model genModel(FireRegime regime) {
  const std::size_t heads = *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t width = *rc::gen::element<std::size_t>(1, 2, 3, 5, 8, 32);
  const Threshold t = *genThreshold();
  FireWeights w;
  w.c = *genC();
  w.L_multiplier = t.lm;
  w.init_L = t.il;
  for (std::size_t k = 0; k < width; ++k) {
    w.w1.push_back(*genWeight());
    w.b1.push_back(*genWeight());
  }
  for (std::size_t k = 0; k < heads * width; ++k) w.w2.push_back(*genWeight());
  for (std::size_t h = 0; h < heads; ++h) w.b2.push_back(*genWeight());
  return {make_spec(heads, width, *genEps(), regime), w};
}

// A handful of fixed models for sweeps (both regimes).
std::vector<FireWeights> sweep_models() {
  std::vector<FireWeights> out;
  // the reference's initialisation scale: c = 0.1, L = 512, small weights
  out.push_back(FireWeights{0.1,
                            1.0,
                            512.0,
                            {0.31, -0.72, 1.13, -0.05, 0.66, -1.4, 0.27, 0.9},
                            {-0.2, 0.45, -0.6, 0.11, 0.03, 0.8, -0.33, -0.9},
                            {0.5, -0.25, 0.125, 0.71, -0.62, 0.44, -0.18, 0.93, -0.4, 0.3, 0.2, -0.1, 0.6, -0.7,
                             0.8, -0.9},
                            {0.01, -0.3}});
  // negative c and L_multiplier, thr = 37.5
  out.push_back(FireWeights{-0.37, -2.5, 15.0, {2.0, -3.0, 0.75}, {-1.0, 1.5, -0.1}, {1.0, 1.0, -2.0}, {0.25}});
  // thr = 0 (L_multiplier 0), large c
  out.push_back(FireWeights{3.7, 0.0, 512.0, {1.0 / 3.0, -7.5}, {0.1, 2.0}, {-1.0 / 7.0, 0.3}, {-0.5}});
  return out;
}

// ======================================================================================================
// FireOracleMp: precision bookkeeping, threads
// ======================================================================================================

TEST(FireOracleMp, ValuesHaveExactlyTheRequestedPrecision) {
  const std::vector<double> q = {1.0, -2.0, 0.5}, k = {0.25, 3.0, 7.0};
  const FireWeights w{0.1, 1.0, 8.0, {0.5, -1.0}, {0.25, 0.5}, {1.0, 2.0, -1.0, 0.5}, {0.0, 0.125}};
  for (FireRegime regime : {FireRegime::exact, FireRegime::cramming})
    for (unsigned bits : {24u, 53u, 100u, 256u, 257u, 512u}) {
      const FireOracle o(make_spec(2, 2, 1e-6, regime), w, bits);
      EXPECT_EQ(o.bits(), bits);
      EXPECT_EQ(bits_of(o.x(5, 2)), bits);
      EXPECT_EQ(bits_of(o.x(5, 5)), bits);  // a zero
      EXPECT_EQ(bits_of(o.bias_at(0, 9, 1)), bits);
      EXPECT_EQ(bits_of(o.bias_at(1, 3, 3)), bits);  // rational
      EXPECT_EQ(bits_of(o.exact_bias_at(0, 9, 1)), bits);
      EXPECT_EQ(bits_of(o.bias(0, 2, 0, 3, 5)), bits);
      EXPECT_EQ(bits_of(o.exact_bias(1, 0, 4, 3, 5)), bits);
      EXPECT_EQ(bits_of(o.score(0, 1, 0, 3, 5, q, k, 0.125)), bits);
      EXPECT_EQ(bits_of(o.score(1, 1, 3, 3, 5, q, k, 0.125)), bits);  // rational bias
      EXPECT_EQ(bits_of(o.condition_scale(0, 9, 1)), 64u);
    }
}

TEST(FireOracleMp, OracleDoesNotDependOnBoostDefaultPrecision) {
  const std::vector<double> q = {0.1, -0.7, 3.0}, k = {1.5, 0.3, -2.25};
  const FireWeights w = sweep_models()[0];
  for (FireRegime regime : {FireRegime::exact, FireRegime::cramming})
    expect_independent_of_default_precision([&] {
      const FireOracle o(make_spec(2, 8, 1e-6, regime), w);
      return std::vector<Real>{o.x(700, 3), o.bias_at(1, 700, 3), o.bias(0, 2, 1000, 7, 5000),
                               o.score(1, 2, 1000, 7, 5000, q, k, 0.5), o.condition_scale(1, 700, 3)};
    });
}

TEST(FireOracleMp, ConcurrentCallsGiveTheSerialResults) {
  std::vector<FireOracle> oracles;
  for (FireRegime regime : {FireRegime::exact, FireRegime::cramming})
    oracles.emplace_back(make_spec(2, 8, 1e-6, regime), sweep_models()[0]);
  const std::vector<double> q = {1.0, -0.5, 0.25}, k = {-7.0, 0.125, 2.0};
  expect_concurrent_calls_match_serial([&] {
    std::vector<Real> out;
    for (const FireOracle& o : oracles)
      for (std::size_t h = 0; h < 2; ++h) {
        out.push_back(o.bias_at(h, 17, 3));
        out.push_back(o.bias(h, 8, 0, 9, 100));
        out.push_back(o.exact_bias_at(h, 600, 4));
        out.push_back(o.score(h, 3, 1, 9, 100, q, k, 0.5));
      }
    return out;
  });
}

// ======================================================================================================
// FireOracleExact: the exact regime
// ======================================================================================================

// Identity MLP (b = x), c = 1, thr = 0 (L_multiplier = 0):
//   q = 0: N = 0, ln(1) = 0, so x = ln(1 + j) / eps; eps = 2^-10: j = 1 -> 2^10 ln 2, j = 3 -> 2^11 ln 2 (RN commutes
//   with the power of two), j = 15 -> 2^12 ln 2.
//   q = 1, j = 0 (or 2): x = ln 2 / (ln 2 + eps); q = 3, j = 0: x = 2 ln 2 / (2 ln 2 + eps) — the same number when
//   eps is doubled: ln 2 / (ln 2 + eps/2).
TEST(FireOracleExact, LiteralLog2Values) {
  for (unsigned bits : {24u, 53u, 100u, 256u, 1000u}) {
    const FireOracle o = oracle(identity(1.0, 0.0, 512.0), 0x1p-10, FireRegime::exact, bits);
    EXPECT_TRUE(same(o.bias_at(0, 0, 1), ln2_times_pow2(10, bits))) << bits << " " << show(o.bias_at(0, 0, 1));
    EXPECT_TRUE(same(o.bias_at(0, 0, 3), ln2_times_pow2(11, bits))) << bits;
    EXPECT_TRUE(same(o.bias_at(0, 0, 15), ln2_times_pow2(12, bits))) << bits;
    EXPECT_TRUE(same(o.x(0, 15), ln2_times_pow2(12, bits))) << bits;

    for (double eps : {1e-6, 0x1p-10, 1.0}) {
      Real want = make_real(4000);  // ln 2 / (ln 2 + eps), from const_log2
      Real den = make_real(4000);
      mpfr_add_d(raw(den), raw(ln2_wide()), eps, MPFR_RNDN);
      mpfr_div(raw(want), raw(ln2_wide()), raw(den), MPFR_RNDN);
      const FireOracle oe = oracle(identity(1.0, 0.0, 512.0), eps, FireRegime::exact, bits);
      EXPECT_TRUE(same(oe.bias_at(0, 1, 0), with_bits(want, bits))) << bits << " " << eps;
      EXPECT_TRUE(same(oe.bias_at(0, 1, 2), with_bits(want, bits))) << bits << " " << eps;
      if (eps * 2 <= 1.0) {
        const FireOracle oh = oracle(identity(1.0, 0.0, 512.0), eps * 2, FireRegime::exact, bits);
        EXPECT_TRUE(same(oh.bias_at(0, 3, 0), with_bits(want, bits))) << bits << " " << eps;
      }
    }
  }
  // ln 2 / (ln 2 + 1e-6) to 30 digits, derived separately (mpmath at 400 bits)
  const FireOracle o = oracle(identity(1.0, 0.0, 512.0), 1e-6, FireRegime::exact, 200);
  EXPECT_TRUE(within_pow2(o.bias_at(0, 1, 0), parse_real("0.999998557307040477014887157293", 200), -90))
      << show(o.bias_at(0, 1, 0));
}

// Rows at q <= thr use N = thr: c = 1, thr = 512 (the default init_L), q = 10, j = 3: x = ln 8 / (ln 513 + eps)
// = 3 ln 2 / (ln 513 + eps); q = 600 > thr: x = 3 ln 2 / (ln 601 + eps) for j = 593.
TEST(FireOracleExact, LiteralThresholdRows) {
  for (unsigned bits : {24u, 53u, 256u}) {
    const FireOracle o = oracle(identity(1.0, 1.0, 512.0), 1e-6, FireRegime::exact, bits);
    for (std::int64_t n : {513, 601}) {
      Real ln_n = make_real(4000), want = make_real(4000);
      mpfr_set_si(raw(ln_n), n, MPFR_RNDN);
      mpfr_log(raw(ln_n), raw(ln_n), MPFR_RNDN);
      mpfr_add_d(raw(ln_n), raw(ln_n), 1e-6, MPFR_RNDN);
      mpfr_mul_ui(raw(want), raw(ln2_wide()), 3, MPFR_RNDN);
      mpfr_div(raw(want), raw(want), raw(ln_n), MPFR_RNDN);
      const std::int64_t q = n == 513 ? 10 : 600;
      EXPECT_TRUE(same(o.bias_at(0, q, q - 7), with_bits(want, bits))) << bits << " " << n;
      EXPECT_TRUE(same(o.x(q, q + 7), with_bits(want, bits))) << bits << " " << n;
    }
  }
  // |L_multiplier init_L| with both negative factors or one: the same threshold
  const FireOracle a = oracle(identity(0.1, -2.0, 256.0), 1e-6, FireRegime::exact);
  const FireOracle b = oracle(identity(0.1, 2.0, -256.0), 1e-6, FireRegime::exact);
  const FireOracle c = oracle(identity(0.1, 1.0, 512.0), 1e-6, FireRegime::exact);
  EXPECT_TRUE(same(a.bias_at(0, 100, 40), c.bias_at(0, 100, 40)));
  EXPECT_TRUE(same(b.bias_at(0, 100, 40), c.bias_at(0, 100, 40)));
}

// c enters as |c|: c = -1 gives the c = 1 values (a transcription that forgets the abs takes ln of 1 - d < 1).
TEST(FireOracleExact, LiteralNegativeC) {
  for (unsigned bits : {24u, 256u}) {
    const FireOracle o = oracle(identity(-1.0, 0.0, 512.0), 0x1p-10, FireRegime::exact, bits);
    EXPECT_TRUE(same(o.bias_at(0, 0, 1), ln2_times_pow2(10, bits)));
    EXPECT_TRUE(same(o.bias_at(0, 0, 3), ln2_times_pow2(11, bits)));
    const FireOracle p = oracle(identity(1.0, 1.0, 512.0), 1e-6, FireRegime::exact, bits);
    const FireOracle m = oracle(identity(-1.0, 1.0, 512.0), 1e-6, FireRegime::exact, bits);
    EXPECT_TRUE(same(p.bias_at(0, 700, 3), m.bias_at(0, 700, 3)));
  }
}

// d = 0 (or c = 0): x = 0 and b = b2 + sum over b1 > 0 of W2 b1, rational. W2 = (0.5, 3), b1 = (0.25, -1),
// b2 = 1: b = 1 + 0.125 = 1.125 (the second unit is off).
TEST(FireOracleExact, LiteralRationalBiasAtDistanceZero) {
  const FireWeights w{0.1, 1.0, 512.0, {7.0, -2.0}, {0.25, -1.0}, {0.5, 3.0}, {1.0}};
  for (unsigned bits : {24u, 53u, 256u}) {
    const FireOracle o = oracle(w, 1e-6, FireRegime::exact, bits);
    for (std::int64_t q : {0, 1, 511, 512, 513, 40000, static_cast<int>(kTwo24 - 1)}) {
      EXPECT_TRUE(holds(o.bias_at(0, q, q), 1.125)) << q;
      EXPECT_TRUE(positive_zero(o.x(q, q))) << q;
    }
    FireWeights w0 = w;
    w0.c = 0.0;
    const FireOracle z = oracle(w0, 1e-6, FireRegime::exact, bits);
    EXPECT_TRUE(holds(z.bias_at(0, 7, 0), 1.125));
    EXPECT_TRUE(holds(z.bias_at(0, 0, kTwo24 - 1), 1.125));
    EXPECT_TRUE(positive_zero(z.x(7, 0)));
  }
  // an exact zero is +0: b2 = -0.0, every unit off
  const FireOracle o = oracle(one_unit(0.1, 1.0, 512.0, 1.0, -1.0, 1.0, -0.0), 1e-6, FireRegime::exact, 24);
  EXPECT_TRUE(positive_zero(o.bias_at(0, 3, 3)));
}

// One rounding of the rational value: b = 1 + (2^-24 + 2^-60) at 24 bits is above the midpoint 1 + 2^-24, so it
// rounds up to 1 + 2^-23; rounding the sum to 53 bits first would give the midpoint and then 1 (even). Ties go to
// even: b2 = 1 + 2^-24 -> 1, b2 = 1 + 3 2^-24 -> 1 + 2^-22.
TEST(FireOracleExact, LiteralRationalBiasRoundedOnce) {
  const FireOracle o = oracle(one_unit(0.1, 1.0, 512.0, 5.0, 0x1p-24 + 0x1p-60, 1.0, 1.0), 1e-6, FireRegime::exact, 24);
  EXPECT_TRUE(holds(o.bias_at(0, 9, 9), 1.0 + 0x1p-23)) << show(o.bias_at(0, 9, 9));
  const FireOracle t1 = oracle(one_unit(0.1, 1.0, 512.0, 5.0, 1.0, 0.0, 1.0 + 0x1p-24), 1e-6, FireRegime::exact, 24);
  EXPECT_TRUE(holds(t1.bias_at(0, 4, 4), 1.0));
  const FireOracle t3 = oracle(one_unit(0.1, 1.0, 512.0, 5.0, 1.0, 0.0, 1.0 + 3 * 0x1p-24), 1e-6, FireRegime::exact, 24);
  EXPECT_TRUE(holds(t3.bias_at(0, 4, 4), 1.0 + 0x1p-22));
  // W2 = 0: the MLP is the constant b2 at every d (A = 0), the tie still goes to even
  EXPECT_TRUE(holds(t1.bias_at(0, 4, 0), 1.0));
  EXPECT_TRUE(holds(t3.bias_at(0, 900, 4), 1.0 + 0x1p-22));
}

// Two active units whose x-terms cancel: b = 1 + (x + 2^-24) - (x + 0) = 1 + 2^-24, a midpoint at 24 bits (-> 1,
// even). A Ziv loop on A x + B without the A == 0 case never separates the enclosure from the midpoint.
TEST(FireOracleExact, LiteralCancellingUnitsGiveAMidpoint) {
  const FireWeights w{1.0, 1.0, 512.0, {1.0, 1.0}, {0x1p-24, 0.0}, {1.0, -1.0}, {1.0}};
  const FireOracle o24 = oracle(w, 1e-6, FireRegime::exact, 24);
  const FireOracle o53 = oracle(w, 1e-6, FireRegime::exact, 53);
  for (std::int64_t j : {0, 1, 100, 511}) {
    EXPECT_TRUE(holds(o24.bias_at(0, 600, j), 1.0)) << j;
    EXPECT_TRUE(holds(o53.bias_at(0, 600, j), 1.0 + 0x1p-24)) << j;
  }
  const std::vector<double> q = {0x1p-24}, k = {1.0};  // the score 1 + 2^-23 exactly
  EXPECT_TRUE(holds(o24.score(0, 599, 3, 600, 600, q, k, 1.0), 1.0 + 0x1p-23));
}

// A ReLU that switches off: W1 = -1, b1 = 0.5, W2 = 1: b = max(0, 0.5 - x). c = 1, thr = 0, eps = 1e-6:
// q = 1, d = 1: x = ln 2 / (ln 2 + eps) > 0.5 -> b = +0 exactly; d = 0 -> 0.5; q = 100, d = 1: x = ln 2 / (ln 101 +
// eps) ~ 0.150 -> b = 0.5 - x (the unit is on, and W1 < 0 takes the upper end of x for its lower end).
TEST(FireOracleExact, LiteralReluSwitchesOff) {
  for (unsigned bits : {24u, 53u, 256u}) {
    const FireOracle o = oracle(one_unit(1.0, 0.0, 512.0, -1.0, 0.5, 1.0, 0.0), 1e-6, FireRegime::exact, bits);
    EXPECT_TRUE(positive_zero(o.bias_at(0, 1, 0))) << show(o.bias_at(0, 1, 0));
    EXPECT_TRUE(positive_zero(o.bias_at(0, 1, 2)));
    EXPECT_TRUE(holds(o.bias_at(0, 1, 1), 0.5));
    Real want = make_real(4000), den = make_real(4000);
    mpfr_set_ui(raw(den), 101, MPFR_RNDN);
    mpfr_log(raw(den), raw(den), MPFR_RNDN);
    mpfr_add_d(raw(den), raw(den), 1e-6, MPFR_RNDN);
    mpfr_div(raw(want), raw(ln2_wide()), raw(den), MPFR_RNDN);
    mpfr_d_sub(raw(want), 0.5, raw(want), MPFR_RNDN);
    EXPECT_TRUE(same(o.bias_at(0, 100, 99), with_bits(want, bits))) << bits;
    // along a row the unit is on for small d and off beyond x = 0.5
    bool seen_off = false;
    for (std::int64_t j = 99; j >= 0; --j) {
      const Real b = o.bias_at(0, 100, j);
      if (mpfr_zero_p(raw(b))) seen_off = true;
      else EXPECT_FALSE(seen_off) << "the unit came back on at j = " << j;
    }
    EXPECT_TRUE(seen_off);
  }
  // W1 = 0: the constant unit max(0, b1)
  const FireOracle k = oracle(FireWeights{1.0, 0.0, 1.0, {0.0, 0.0}, {0.75, -3.0}, {2.0, 5.0}, {0.0}}, 1e-6,
                              FireRegime::exact, 24);
  EXPECT_TRUE(holds(k.bias_at(0, 50, 7), 1.5));
  EXPECT_TRUE(holds(k.bias_at(0, 0, 7), 1.5));
}

// A ReLU just above its kink: cramming x of c = 1, thr = 0, eps = 0.5, q = 0, j = 1 is 2 RN32(ln 2) =
// 0x1.62e43p0; W1 = 1 + 2^-23, b1 = -0x1.62e432p0 = -RN32(x32 W1). Exact: x = 2 ln 2, W1 x + b1 = 2 ln 2 (1 + 2^-23)
// - 0x1.62e432p0 ~ 4.2e-8 > 0, so b = that (W2 = 1, b2 = 0).
TEST(FireOracleExact, LiteralReluJustAboveItsKink) {
  const FireWeights w = one_unit(1.0, 0.0, 1.0, 1.0 + 0x1p-23, -0x1.62e432p0, 1.0, 0.0);
  for (unsigned bits : {24u, 53u, 256u}) {
    const FireOracle o = oracle(w, 0.5, FireRegime::exact, bits);
    Real want = make_real(4000);
    mpfr_mul_d(raw(want), raw(ln2_wide()), 2.0 * (1.0 + 0x1p-23), MPFR_RNDN);
    mpfr_sub_d(raw(want), raw(want), 0x1.62e432p0, MPFR_RNDN);
    EXPECT_GT(mpfr_sgn(raw(want)), 0);
    EXPECT_TRUE(same(o.bias_at(0, 0, 1), with_bits(want, bits))) << bits << " " << show(o.bias_at(0, 0, 1));
    // W1 -> -W1, b1 -> -b1: the mirrored unit is off
    const FireOracle m = oracle(one_unit(1.0, 0.0, 1.0, -(1.0 + 0x1p-23), 0x1.62e432p0, 1.0, 0.0), 0.5,
                                FireRegime::exact, bits);
    EXPECT_TRUE(positive_zero(m.bias_at(0, 0, 1)));
  }
}

// Kinks within ~2^-96 (relative) of x: with p/q a continued-fraction convergent of x = 2^10 ln 2 (c = 1, thr = 0,
// eps = 2^-10, q = 0, j = 1; p, q < 2^53, so q < 2^53 / x ~ 2^43.5), the unit W1 = -q 2^-40, b1 = p 2^-40 has
// W1 x + b1 = 2^-40 (p - q x), |p - q x| < 1 / q_next: about 2^-84 against W1 x ~ 2^13, so at 24 bits the first
// working precision (88) cannot decide its sign. Even convergents lie below x (the unit is off: b = +0), odd ones
// above (on: b = 2^-40 (p - q x) > 0). W1 < 0, so the lower end of W1 x + b1 comes from the upper end of x: an
// oracle that does not swap them takes the off unit for an on one.
TEST(FireOracleExact, LiteralReluWithinTwoToTheMinus80OfItsKink) {
  const Real x = ln2_times_pow2(10, 4000);
  // convergents p_n / q_n of x, exact integers while below 2^53
  std::vector<std::pair<std::int64_t, std::int64_t>> conv;
  {
    Real r = with_bits(x, 4000), a = make_real(4000);
    constexpr std::int64_t kLimit = std::int64_t{1} << 53;
    std::int64_t p0 = 1, q0 = 0, p1 = 0, q1 = 1;  // p_{-1}/q_{-1} = 1/0, p_{-2}/q_{-2} = 0/1
    for (int n = 0; n < 60; ++n) {
      mpfr_floor(raw(a), raw(r));
      const std::int64_t an = mpfr_get_sj(raw(a), MPFR_RNDN);
      // p = an p0 + p1, q = an q0 + q1, both below 2^53 (checked without overflow)
      if (an > (kLimit - 1 - p1) / p0 || (q0 > 0 && an > (kLimit - 1 - q1) / q0)) break;
      const std::int64_t p = an * p0 + p1, q = an * q0 + q1;
      conv.emplace_back(p, q);
      p1 = p0, q1 = q0, p0 = p, q0 = q;
      mpfr_sub(raw(r), raw(r), raw(a), MPFR_RNDN);
      mpfr_ui_div(raw(r), 1, raw(r), MPFR_RNDN);
    }
  }
  ASSERT_GE(conv.size(), 4u);
  for (std::size_t n = conv.size() - 2; n < conv.size(); ++n) {
    const auto [p, q] = conv[n];
    const double w1 = -std::ldexp(static_cast<double>(q), -40), b1 = std::ldexp(static_cast<double>(p), -40);
    Real t = make_real(4000);  // W1 x + b1
    mpfr_mul_d(raw(t), raw(x), w1, MPFR_RNDN);
    mpfr_add_d(raw(t), raw(t), b1, MPFR_RNDN);
    EXPECT_TRUE(abs_below_pow2(t, -80)) << n << " " << show(t);
    EXPECT_EQ(mpfr_sgn(raw(t)) > 0, n % 2 == 1) << n;
    for (unsigned bits : {24u, 53u, 256u}) {
      const FireOracle o = oracle(one_unit(1.0, 0.0, 512.0, w1, b1, 1.0, 0.0), 0x1p-10, FireRegime::exact, bits);
      const Real b = o.bias_at(0, 0, 1);
      if (mpfr_sgn(raw(t)) > 0) EXPECT_TRUE(same(b, with_bits(t, bits))) << n << " " << bits << " " << show(b);
      else EXPECT_TRUE(positive_zero(b)) << n << " " << bits << " " << show(b);
    }
    // A second unit W1' = -W1, b1' = 1 + 2^-24 (always on), W2 = W2' = 1, b2 = -b1: with the kink unit on, the
    // x-terms cancel and b = 1 + 2^-24 exactly, a midpoint at 24 bits (-> 1); with it off, b = 1 + 2^-24 - t, just
    // above the midpoint (-> 1 + 2^-23). A wrong decision here is not caught by the final enclosure (A = 0 gives
    // the rational B at once).
    const FireWeights two{1.0, 0.0, 512.0, {w1, -w1}, {b1, 1.0 + 0x1p-24}, {1.0, 1.0}, {-b1}};
    const FireOracle o24 = oracle(two, 0x1p-10, FireRegime::exact, 24);
    EXPECT_TRUE(holds(o24.bias_at(0, 0, 1), mpfr_sgn(raw(t)) > 0 ? 1.0 : 1.0 + 0x1p-23))
        << n << " " << show(o24.bias_at(0, 0, 1));
    Real want = make_real(4000);
    mpfr_set_d(raw(want), 1.0 + 0x1p-24, MPFR_RNDN);
    if (mpfr_sgn(raw(t)) < 0) mpfr_sub(raw(want), raw(want), raw(t), MPFR_RNDN);
    EXPECT_TRUE(same(oracle(two, 0x1p-10, FireRegime::exact, 256).bias_at(0, 0, 1), with_bits(want, 256))) << n;
  }
}

// x - hi - lo with hi + lo the double-double of 2^10 ln 2: b ~ 2^-106 relative to x, so at 256 bits the first
// working precision (320) cannot decide it and the Ziv loop must go on. Units: x (W1 = 1, b1 = 0, W2 = 1) and the
// constant 1 (W1 = 0, b1 = 1) weighted by -lo; b2 = -hi.
TEST(FireOracleExact, LiteralDeepCancellationNeedsMorePrecision) {
  const Real x = ln2_times_pow2(10, 4000);
  const double hi = round_to_double(x);
  const double lo = round_to_double(sub(x, make_real(hi, 64)));
  const FireWeights w{1.0, 0.0, 512.0, {1.0, 0.0}, {0.0, 1.0}, {1.0, -lo}, {-hi}};
  Real want = make_real(4000);
  mpfr_sub_d(raw(want), raw(x), hi, MPFR_RNDN);
  mpfr_sub_d(raw(want), raw(want), lo, MPFR_RNDN);
  for (unsigned bits : {24u, 53u, 256u, 1000u}) {
    const FireOracle o = oracle(w, 0x1p-10, FireRegime::exact, bits);
    EXPECT_TRUE(same(o.bias_at(0, 0, 1), with_bits(want, bits))) << bits << " " << show(o.bias_at(0, 0, 1));
  }
}

// Extreme weights: c = 2^-1074 (the smallest subnormal double), thr = 3 2^-2148, q = 0: 1 + |c| N = 1 + 3 2^-3222
// must be formed exactly (the header's 3288-bit bound). Identity MLP: b = x = ln(1 + 2^-1074 j) / (ln(1 +
// 3 2^-3222) + eps), compared with Boost at 8000 bits.
TEST(FireOracleExact, ExtremeWeightsAreFormedExactly) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  const FireWeights w = identity(tiny, tiny, 3 * tiny);
  const FireOracle o = oracle(w, 1e-12, FireRegime::exact, 256);
  for (std::int64_t j : {1, 7, static_cast<int>(kTwo24 - 1)}) {
    EXPECT_TRUE(same(o.bias_at(0, 0, j), with_bits(boost_bias(w, 1, 1e-12, 0, 0, j, 8000), 256))) << j;
    EXPECT_TRUE(same(o.bias_at(0, 5, j), with_bits(boost_bias(w, 1, 1e-12, 0, 5, j, 8000), 256))) << j;
  }
  // the largest weights: every magnitude at its bound
  const FireWeights big{1e6, 1e6, 16777216.0, {-1e6, 1e6}, {1e6, -1e6}, {1e6, -1e6}, {-1e6}};
  const FireOracle ob(make_spec(1, 2, 1e-12, FireRegime::exact), big, 100);
  for (std::int64_t q : {0, 1, static_cast<int>(kTwo24 - 1)})
    for (std::int64_t j : {0, 3, static_cast<int>(kTwo24 - 1)})
      EXPECT_TRUE(same(ob.bias_at(0, q, j), with_bits(boost_bias(big, 2, 1e-12, 0, q, j, 2000), 100))) << q << " " << j;
}

// The whole formula against Boost at 4P + 400 bits, random models, including deep cancellation (b2 chosen to cancel
// the MLP's sum to 2^-53 of it).
RC_GTEST_PROP(FireOracleExact, ExactMatchesIndependentEvaluation, ()) {
  Model m = genModel(FireRegime::exact);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, m.spec.heads);
  const std::int64_t q = *genPosition(), j = *genPosition();
  const unsigned bits = *rc::gen::element(24u, 53u, 100u, 256u);
  if (*rc::gen::element(0, 0, 1) == 1) {
    const FireOracle probe(m.spec, m.w, 256);
    const double part = round_to_double(sub(probe.bias_at(h, q, j), make_real(m.w.b2[h], 64)));
    if (std::fabs(part) <= posenc::kFireMaxWeight) m.w.b2[h] = -part;
  }
  const FireOracle o(m.spec, m.w, bits);
  const unsigned wide = 4 * bits + 400;
  const Real got = o.bias_at(h, q, j);
  const unsigned boost_bits = wide + 2200;  // b2 = -3e-300 beside 1e6
  const Real want = boost_bias(m.w, m.spec.mlp_width, m.spec.eps, h, q, j, boost_bits);
  RC_CLASSIFY(mpfr_zero_p(raw(got)), "zero");
  RC_CLASSIFY(q == j || m.w.c == 0.0, "x = 0");
  RC_LOG() << "c=" << m.w.c << " thr=" << m.w.L_multiplier << "*" << m.w.init_L << " eps=" << m.spec.eps
           << " q=" << q << " j=" << j << " got " << show(got) << " want " << show(want) << "\n";
  if (mpfr_zero_p(raw(got)) && !mpfr_zero_p(raw(want))) {
    // The bias is A x + B over the active units. Where the x-terms cancel exactly (A = 0, e.g. W2 W1 = +-1 pairs)
    // and the probe set b2 = -B, the true bias is exactly 0 and the oracle says so, but Boost forms each unit's
    // W2 (W1 x + b1) from a rounded x and leaves rounding noise: each of its <= 2 width + 4 roundings (x itself
    // carries a few ulps) is at most 2^-boost_bits of scale = |b2| + sum |W2| (|W1| x + |b1|) -- seen: seed
    // 1637813202945650073, want = -2^-2697 at 2696 bits. Accept 0 only inside that noise, 2^8 > 2 * 32 + 4 + 8.
    Real noise = boost_scale(m.w, m.spec.mlp_width, m.spec.eps, h, q, j, 64);
    mpfr_mul_2si(raw(noise), raw(noise), -static_cast<long>(boost_bits) + 8, MPFR_RNDU);
    RC_LOG() << "zero against Boost noise bound " << show(noise) << "\n";
    RC_ASSERT(mpfr_cmpabs(raw(want), raw(noise)) <= 0);
  } else {
    RC_ASSERT(same(got, with_bits(want, bits)));
  }
  RC_ASSERT(same(o.exact_bias_at(h, q, j), got));
  RC_ASSERT(same(o.x(q, j), with_bits(boost_x(m.w, m.spec.eps, q, j, wide), bits)));
}

// The cramming oracle's exact_bias_at is the exact regime's bias.
RC_GTEST_PROP(FireOracleExact, ExactBiasIgnoresTheRegime, ()) {
  const Model m = genModel(FireRegime::cramming);
  FireSpec exact = m.spec;
  exact.regime = FireRegime::exact;
  const FireOracle oc(m.spec, m.w, 64), oe(exact, m.w, 64);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, m.spec.heads);
  const std::int64_t q = *genPosition(), j = *genPosition();
  RC_ASSERT(same(oc.exact_bias_at(h, q, j), oe.bias_at(h, q, j)));
}

// ======================================================================================================
// FireOracleCramming: the float32 steps
// ======================================================================================================

// c = 1, thr = 0, eps = 0.5, q = 0: N = 0, n = RN32(ln 1) = 0, den = RN32(0 + 0.5) = 0.5, so x = RN32(l / 0.5) = 2 l
// with l = RN32(ln(1 + j)): j = 1 -> 2 RN32(ln 2) = 0x1.62e43p0 (RN32(ln 2) = 0x1.62e43p-1); j = 3 -> RN32(ln 4) =
// 2 RN32(ln 2), x = 0x1.62e43p1. c = 1, L_mult 0.5, init_L 6 (thr = 3), eps = 2^-30, q = 1, j = 0: N = 3,
// n = RN32(ln 4) = 0x1.62e43p0, den = RN32(n + 2^-30) = n (2^-30 is below half an ulp of n), x = RN32(l / n) = 0.5.
TEST(FireOracleCramming, LiteralX) {
  const FireOracle o = oracle(identity(1.0, 0.0, 512.0), 0.5, FireRegime::cramming, 24);
  EXPECT_TRUE(holds(o.x(0, 1), 0x1.62e43p0)) << show(o.x(0, 1));
  EXPECT_TRUE(holds(o.bias_at(0, 0, 1), 0x1.62e43p0));
  EXPECT_TRUE(holds(o.x(0, 3), 0x1.62e43p1));
  EXPECT_TRUE(positive_zero(o.x(0, 0)));
  const FireOracle t = oracle(identity(1.0, 0.5, 6.0), 0x1p-30, FireRegime::cramming, 53);
  EXPECT_TRUE(holds(t.x(1, 0), 0.5)) << show(t.x(1, 0));
  EXPECT_TRUE(holds(t.x(1, 2), 0.5));
  EXPECT_TRUE(holds(t.x(3, 2), 0.5));  // q = thr
  EXPECT_TRUE(holds(t.x(3, 4), 0.5));
  // the exact x differs: ln 2 / (2 ln 2 + 2^-30) < 0.5; a unit with its kink at 0.5 (W1 = -2, b1 = 1) is off in
  // float32 (h = RN32(RN32(0.5 (-2)) + 1) = 0) and on in the exact regime: b = 1 - 2x = 2^-30 / (2 ln 2 + 2^-30).
  const FireWeights kink = one_unit(1.0, 0.5, 6.0, -2.0, 1.0, 1.0, 0.0);
  const FireOracle kc = oracle(kink, 0x1p-30, FireRegime::cramming, 53);
  const FireOracle ke = oracle(kink, 0x1p-30, FireRegime::exact, 53);
  EXPECT_TRUE(positive_zero(kc.bias_at(0, 1, 0)));
  Real want = make_real(4000);
  mpfr_mul_2si(raw(want), raw(ln2_wide()), 1, MPFR_RNDN);
  mpfr_add_d(raw(want), raw(want), 0x1p-30, MPFR_RNDN);
  mpfr_d_div(raw(want), 0x1p-30, raw(want), MPFR_RNDN);
  EXPECT_TRUE(same(ke.bias_at(0, 1, 0), with_bits(want, 53))) << show(ke.bias_at(0, 1, 0));
}

// h_k = RN32(RN32(x W1) + b1) is two roundings. x = 0x1.62e43p0 (above), W1 = 1 + 2^-23: x W1 = 0x1.62e432p0 +
// 405059 2^-43 rounds down to 0x1.62e432p0; with b1 = -0x1.62e432p0, h = RN32(0) = 0, so r = 0 and b = b2. One
// rounding (a fused x W1 + b1) would give h = 405059 2^-43 > 0 and b = b2 + that.
TEST(FireOracleCramming, LiteralTwoRoundingsOfTheHiddenUnit) {
  const FireOracle o = oracle(one_unit(1.0, 0.0, 1.0, 1.0 + 0x1p-23, -0x1.62e432p0, 1.0, 0.0), 0.5,
                              FireRegime::cramming, 24);
  EXPECT_TRUE(positive_zero(o.bias_at(0, 0, 1))) << show(o.bias_at(0, 0, 1));
  const FireOracle o2 = oracle(one_unit(1.0, 0.0, 1.0, 1.0 + 0x1p-23, -0x1.62e432p0, 1.0, 0.5), 0.5,
                               FireRegime::cramming, 24);
  EXPECT_TRUE(holds(o2.bias_at(0, 0, 1), 0.5));  // fused: RN32(0.5 + 405059 2^-43) = 0.5 + 2^-24
  // with b1 = -x32 (one ulp lower) the unit is on: h = RN32(0x1.62e432p0 - 0x1.62e43p0) = 2^-23 (one ulp); fused
  // it would be x32 2^-23
  const FireOracle o3 = oracle(one_unit(1.0, 0.0, 1.0, 1.0 + 0x1p-23, -0x1.62e430p0, 1.0, 0.0), 0.5,
                               FireRegime::cramming, 24);
  EXPECT_TRUE(holds(o3.bias_at(0, 0, 1), 0x1p-23)) << show(o3.bias_at(0, 0, 1));
}

// acc = RN32(r W2 + acc) is one rounding. x = 0 (q = j), r = b1 = 1 + 2^-12 for both units, W2 = +-(1 + 2^-12):
// unit 0: acc = RN32(1 + 2^-11 + 2^-24) = 1 + 2^-11 (a tie, to even); unit 1: acc = RN32(-(1 + 2^-11 + 2^-24) +
// 1 + 2^-11) = -2^-24 exactly; b = RN32(-2^-24 + 0) = -2^-24. Unfused: RN32(r W2) = -(1 + 2^-11), acc = 0, b = +0.
// The exact regime gives +0 (the two products cancel exactly).
TEST(FireOracleCramming, LiteralFusedAccumulation) {
  const double r = 1.0 + 0x1p-12;
  const FireWeights w{0.1, 1.0, 512.0, {3.0, -5.0}, {r, r}, {r, -r}, {0.0}};
  for (unsigned bits : {24u, 256u}) {
    EXPECT_TRUE(holds(oracle(w, 1e-6, FireRegime::cramming, bits).bias_at(0, 7, 7), -0x1p-24));
    EXPECT_TRUE(positive_zero(oracle(w, 1e-6, FireRegime::exact, bits).bias_at(0, 7, 7)));
  }
  // b2 is added after the accumulation: RN32(-2^-24 + 1) = 1 - 2^-24 exactly
  const FireWeights w1{0.1, 1.0, 512.0, {3.0, -5.0}, {r, r}, {r, -r}, {1.0}};
  EXPECT_TRUE(holds(oracle(w1, 1e-6, FireRegime::cramming, 24).bias_at(0, 7, 7), 1.0 - 0x1p-24));
  // mlp_sum unfused: each product rounded first, RN32(r W2) = +-(1 + 2^-11) (the tie 1 + 2^-11 + 2^-24 to even), so
  // acc = RN32((1 + 2^-11) - (1 + 2^-11)) = +0 and b = RN32(+0 + b2): +0, and 1 with b2 = 1
  FireSpec un = make_spec(1, 2, 1e-6, FireRegime::cramming);
  un.mlp_sum = posenc::FireMlpSum::unfused;
  for (unsigned bits : {24u, 256u}) EXPECT_TRUE(positive_zero(FireOracle(un, w, bits).bias_at(0, 7, 7)));
  EXPECT_TRUE(holds(FireOracle(un, w1, 24).bias_at(0, 7, 7), 1.0));
}

// The weights are rounded to float32 first: b2 = 1 + 2^-30 -> 1; c = 1 + 2^-30 -> 1 (the x of c = 1).
TEST(FireOracleCramming, WeightsAreRoundedToFloat32) {
  const FireOracle o = oracle(one_unit(1.0 + 0x1p-30, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0 + 0x1p-30), 0.5,
                              FireRegime::cramming, 64);
  EXPECT_TRUE(holds(o.bias_at(0, 0, 5), 1.0));
  const FireOracle x = oracle(identity(1.0 + 0x1p-30, 0.0, 1.0), 0.5, FireRegime::cramming, 64);
  EXPECT_TRUE(holds(x.x(0, 1), 0x1.62e43p0));
  // eps -> e32 = RN32(eps): eps = 0.5 + 2^-30 behaves as 0.5
  const FireOracle e = oracle(identity(1.0, 0.0, 1.0), 0.5 + 0x1p-30, FireRegime::cramming, 64);
  EXPECT_TRUE(holds(e.x(0, 1), 0x1.62e43p0));
}

// Every (q, j) over a grid, the sweep models, bit for bit (and the sign of zero) wherever both double logs round
// safely to float32.
TEST(FireOracleCramming, CrammingMatchesPlainCFloatArithmeticSweep) {
  std::size_t checked = 0, unsafe = 0;
  std::vector<std::int64_t> qs = {0, 1, 2, 3, 5, 14, 15, 16, 37, 38, 100, 511, 512, 513, 1000, 4097,
                                  kTwo24 / 2 + 1, kTwo24 - 1};
  for (const FireWeights& w : sweep_models()) {
    const std::size_t width = w.w1.size(), heads = w.b2.size();
    for (double eps : {1e-6, 0.5}) {
      const FireOracle o(make_spec(heads, width, eps, FireRegime::cramming), w, 24);
      for (std::int64_t q : qs)
        for (std::int64_t dj = -40; dj <= 40; ++dj) {
          const std::int64_t j = q + dj * (q > 100000 ? 997 : 1);
          if (j < 0 || j >= kTwo24) continue;
          const CFloat cx = c_x(w, eps, q, j);
          if (!cx.safe) {
            ++unsafe;
            continue;
          }
          ++checked;
          ASSERT_TRUE(holds(o.x(q, j), static_cast<double>(cx.value))) << q << " " << j << " " << show(o.x(q, j));
          for (std::size_t h = 0; h < heads; ++h) {
            const CFloat c = c_bias(w, width, eps, h, q, j);
            const Real got = o.bias_at(h, q, j);
            ASSERT_TRUE(holds(got, static_cast<double>(c.value)))
                << "c=" << w.c << " eps=" << eps << " q=" << q << " j=" << j << " h=" << h << " " << show(got)
                << " vs " << c.value;
            ASSERT_EQ(mpfr_signbit(raw(got)) != 0, std::signbit(c.value)) << q << " " << j;
          }
        }
    }
  }
  EXPECT_GT(checked, 5000u);
  EXPECT_LT(unsafe, 20u) << "the double window should almost never straddle a float32 midpoint";
}

RC_GTEST_PROP(FireOracleCramming, CrammingMatchesPlainCFloatArithmetic, ()) {
  const Model m = genModel(FireRegime::cramming);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, m.spec.heads);
  const std::int64_t q = *genPosition(), j = *genPosition();
  const CFloat c = c_bias(m.w, m.spec.mlp_width, m.spec.eps, h, q, j);
  RC_PRE(c.safe);
  const FireOracle o(m.spec, m.w, *rc::gen::element(24u, 64u, 256u));
  const Real got = o.bias_at(h, q, j);
  RC_LOG() << "c=" << m.w.c << " thr=" << m.w.L_multiplier << "*" << m.w.init_L << " eps=" << m.spec.eps
           << " q=" << q << " j=" << j << " got " << show(got) << " vs " << c.value << "\n";
  RC_ASSERT(same(got, round_to_float_precision(got)));  // a float32 number
  RC_ASSERT(holds(got, static_cast<double>(c.value)));
  RC_ASSERT((mpfr_signbit(raw(got)) != 0) == std::signbit(c.value));
  RC_ASSERT(holds(o.x(q, j), static_cast<double>(c_x(m.w, m.spec.eps, q, j).value)));
}

// ======================================================================================================
// FireOracleShape: symmetry, rows below the threshold, monotone x
// ======================================================================================================

// Every row is symmetric in j about q: b(q, q + t) == b(q, q - t), both regimes.
RC_GTEST_PROP(FireOracleShape, SymmetricInTheKeyAboutTheQuery, ()) {
  const FireRegime regime = *rc::gen::element(FireRegime::exact, FireRegime::cramming);
  const Model m = genModel(regime);
  const FireOracle o(m.spec, m.w, *rc::gen::element(24u, 64u));
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, m.spec.heads);
  const std::int64_t q = *genPosition();
  const std::int64_t tmax = std::min(q, kTwo24 - 1 - q);
  const std::int64_t t = *rc::gen::element<std::int64_t>(0, std::min<std::int64_t>(1, tmax), tmax,
                                                         *rc::gen::inRange<std::int64_t>(0, tmax + 1));
  RC_ASSERT(same(o.bias_at(h, q, q + t), o.bias_at(h, q, q - t)));
  RC_ASSERT(same(o.x(q, q + t), o.x(q, q - t)));
}

// Rows with q <= thr share one function of d (N = thr for all of them), both regimes.
RC_GTEST_PROP(FireOracleShape, RowsBelowTheThresholdShareOneFunction, ()) {
  const FireRegime regime = *rc::gen::element(FireRegime::exact, FireRegime::cramming);
  Model m = genModel(regime);
  m.w.L_multiplier = *rc::gen::element(1.0, -1.0, 0.75, 2.0);
  m.w.init_L = *rc::gen::element(512.0, 100.0, 37.5, 4000.0);
  const std::int64_t thr = static_cast<std::int64_t>(std::floor(std::fabs(m.w.L_multiplier * m.w.init_L)));
  const FireOracle o(m.spec, m.w, *rc::gen::element(24u, 64u));
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, m.spec.heads);
  const std::int64_t q1 = *rc::gen::inRange<std::int64_t>(0, thr + 1), q2 = *rc::gen::inRange<std::int64_t>(0, thr + 1);
  const std::int64_t d = *rc::gen::inRange<std::int64_t>(0, std::max<std::int64_t>(std::min(q1, q2), 0) + 1);
  RC_ASSERT(same(o.bias_at(h, q1, q1 - d), o.bias_at(h, q2, q2 - d)));
  RC_ASSERT(same(o.bias_at(h, q1, q1 + d), o.bias_at(h, q2, q2 - d)));
}

// Above the threshold the normalizer grows with q: the exact x at fixed d >= 1 strictly decreases in q (c != 0).
// And x grows with d along a row (both regimes: every step is monotone), x = 0 at d = 0, x < 1 for d <= N (exact).
TEST(FireOracleShape, XIsMonotone) {
  const FireOracle e = oracle(identity(0.1, 1.0, 512.0), 1e-6, FireRegime::exact, 53);
  const FireOracle c = oracle(identity(0.1, 1.0, 512.0), 1e-6, FireRegime::cramming, 53);
  EXPECT_TRUE(same(e.x(600, 590), e.x(512, 502)) == false);
  for (std::int64_t q = 513; q < 700; ++q) EXPECT_LT(mpfr_cmp(raw(e.x(q + 1, q - 9)), raw(e.x(q, q - 10))), 0) << q;
  for (std::int64_t q : {0, 10, 512, 700, 100000}) {
    for (const FireOracle* o : {&e, &c}) {
      Real prev = o->x(q, q);
      EXPECT_TRUE(positive_zero(prev));
      for (std::int64_t d = 1; d <= 300; ++d) {
        const Real x = o->x(q, q + d);
        EXPECT_GE(mpfr_cmp(raw(x), raw(prev)), 0) << q << " " << d;
        prev = x;
      }
    }
    for (std::int64_t d = 1; d <= std::max<std::int64_t>(q, 512) && d <= 300; ++d)
      EXPECT_LT(mpfr_cmp_ui(raw(e.x(q, q + d)), 1), 0) << q << " " << d;
  }
}

// ======================================================================================================
// FireOracleGeometry
// ======================================================================================================

// Lq = 2, Lk = 5: q_0 = 3, q_1 = 4; Lq = Lk: q_i = i; a decoder step (Lq = 1) is the last row.
TEST(FireOracleGeometry, LiteralGeometry) {
  for (FireRegime regime : {FireRegime::exact, FireRegime::cramming}) {
    const FireWeights w = sweep_models()[0];
    const FireOracle o(make_spec(2, 8, 1e-6, regime), w, 53);
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t j = 0; j < 5; ++j) {
        EXPECT_TRUE(same(o.bias(h, 0, j, 2, 5), o.bias_at(h, 3, static_cast<std::int64_t>(j))));
        EXPECT_TRUE(same(o.bias(h, 1, j, 2, 5), o.bias_at(h, 4, static_cast<std::int64_t>(j))));
        EXPECT_TRUE(same(o.bias(h, j, 0, 5, 5), o.bias_at(h, static_cast<std::int64_t>(j), 0)));
        EXPECT_TRUE(same(o.bias(h, 0, j, 1, 5), o.bias(h, 4, j, 5, 5)));
        EXPECT_TRUE(same(o.exact_bias(h, 1, j, 2, 5), o.exact_bias_at(h, 4, static_cast<std::int64_t>(j))));
      }
    // the largest key length, 2^24: row 0 of a decoder step at position 2^24 - 1
    const std::size_t lk = std::size_t{1} << 24;
    EXPECT_TRUE(same(o.bias(0, 0, 0, 1, lk), o.bias_at(0, kTwo24 - 1, 0)));
    EXPECT_TRUE(same(o.bias(1, 0, lk - 1, 1, lk), o.bias_at(1, kTwo24 - 1, kTwo24 - 1)));
  }
}

RC_GTEST_PROP(FireOracleGeometry, BiasIsBiasAtTheQueryPosition, ()) {
  const FireRegime regime = *rc::gen::element(FireRegime::exact, FireRegime::cramming);
  const Model m = genModel(regime);
  const FireOracle o(m.spec, m.w, *rc::gen::element(24u, 64u));
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, m.spec.heads);
  const std::size_t lk = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(1, 40),
                                         rc::gen::inRange<std::size_t>(1, (std::size_t{1} << 24) + 1));
  const std::size_t lq = *rc::gen::element<std::size_t>(1, lk, *rc::gen::inRange<std::size_t>(1, lk + 1));
  const std::size_t i = *rc::gen::inRange<std::size_t>(0, lq), j = *rc::gen::inRange<std::size_t>(0, lk);
  const auto qi = static_cast<std::int64_t>(lk - lq + i);
  RC_ASSERT(same(o.bias(h, i, j, lq, lk), o.bias_at(h, qi, static_cast<std::int64_t>(j))));
  RC_ASSERT(same(o.exact_bias(h, i, j, lq, lk), o.exact_bias_at(h, qi, static_cast<std::int64_t>(j))));
}

// ======================================================================================================
// FireOracleScale: the condition scale S
// ======================================================================================================

TEST(FireOracleScale, LiteralValues) {
  // d = 0: S = |b2| + sum |W2| |b1| = 1 + 0.5 0.25 + 3 1 = 4.125, exactly (every unit counted, on or off)
  const FireWeights w{0.1, 1.0, 512.0, {7.0, -2.0}, {0.25, -1.0}, {0.5, -3.0}, {-1.0}};
  const FireOracle o = oracle(w, 1e-6, FireRegime::exact, 24);
  EXPECT_TRUE(holds(o.condition_scale(0, 5, 5), 4.125));
  // identity MLP: S = x = 2^10 ln 2 (c = 1, thr = 0, eps = 2^-10, q = 0, j = 1): an upper bound within 2^-62
  const FireOracle i = oracle(identity(1.0, 0.0, 512.0), 0x1p-10, FireRegime::cramming, 24);
  const Real s = i.condition_scale(0, 0, 1), x = ln2_times_pow2(10, 4000);
  EXPECT_GE(mpfr_cmp(raw(s), raw(x)), 0);
  EXPECT_TRUE(abs_below_pow2(sub(s, x), 10 - 62));
}

RC_GTEST_PROP(FireOracleScale, IsATightUpperBound, ()) {
  const Model m = genModel(*rc::gen::element(FireRegime::exact, FireRegime::cramming));
  const FireOracle o(m.spec, m.w, 64);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, m.spec.heads);
  const std::int64_t q = *genPosition(), j = *genPosition();
  const Real s = o.condition_scale(h, q, j);
  const Real want = boost_scale(m.w, m.spec.mlp_width, m.spec.eps, h, q, j, 1000);
  RC_ASSERT(bits_of(s) == 64u);
  RC_ASSERT(mpfr_cmp(raw(s), raw(want)) >= 0);
  // s <= S (1 + 2^-62)
  Real slack = make_real(1200);
  mpfr_mul_2si(raw(slack), raw(want), -62, MPFR_RNDN);
  mpfr_add(raw(slack), raw(slack), raw(want), MPFR_RNDN);
  RC_ASSERT(mpfr_cmp(raw(s), raw(slack)) <= 0);
  // |b| <= S
  const Real b = o.exact_bias_at(h, q, j);
  RC_ASSERT(mpfr_cmpabs(raw(b), raw(s)) <= 0);
}

// ======================================================================================================
// FireOracleScore
// ======================================================================================================

TEST(FireOracleScore, LiteralValues) {
  const std::vector<double> q = {1.0, 2.0}, k = {3.0, 4.0};
  // d = 0 (i = 3, j = 3 with Lq = Lk = 4): the bias is b2 = -4.5; 0.5 (3 + 8) - 4.5 = 1
  const FireOracle o = oracle(one_unit(0.1, 1.0, 512.0, 1.0, 0.0, 1.0, -4.5), 1e-6, FireRegime::exact);
  EXPECT_TRUE(holds(o.score(0, 3, 3, 4, 4, q, k, 0.5), 1.0));
  EXPECT_TRUE(holds(o.score(0, 3, 3, 4, 4, q, k, 0.0), -4.5));
  // the cramming oracle's score uses the exact bias
  const FireWeights m = sweep_models()[0];
  const FireOracle oc(make_spec(2, 8, 1e-6, FireRegime::cramming), m, 24);
  const FireOracle oe(make_spec(2, 8, 1e-6, FireRegime::exact), m, 24);
  EXPECT_TRUE(same(oc.score(1, 1, 0, 2, 900, q, k, 0.5), oe.score(1, 1, 0, 2, 900, q, k, 0.5)));
  // One rounding at 24 bits: dot = 2^30 + 192 is 1.5 ulp (ulp 2^7) above 2^30, a tie that goes to 2^30 + 2^8;
  // with the bias -0.5 (b2, d = 0) the sum is below the tie: 2^30 + 2^7.
  const std::vector<double> big = {0x1p30 + 192.0}, one = {1.0};
  const FireOracle o24 = oracle(one_unit(0.1, 1.0, 512.0, 1.0, 0.0, 1.0, -0.5), 1e-6, FireRegime::exact, 24);
  EXPECT_TRUE(holds(o24.score(0, 1, 1, 2, 2, big, one, 1.0), 0x1p30 + 128.0));
  const FireOracle z24 = oracle(one_unit(0.1, 1.0, 512.0, 1.0, 0.0, 1.0, 0.0), 1e-6, FireRegime::exact, 24);
  EXPECT_TRUE(holds(z24.score(0, 1, 1, 2, 2, big, one, 1.0), 0x1p30 + 256.0));  // the tie, to even
  // an irrational bias: identity, c = 1, thr = 0, eps = 2^-10, q_0 = 0, j = 1: 0.25 + 2^10 ln 2
  const std::vector<double> half = {0.5};
  for (unsigned bits : {24u, 53u, 256u}) {
    const FireOracle ol = oracle(identity(1.0, 0.0, 512.0), 0x1p-10, FireRegime::exact, bits);
    Real want = ln2_times_pow2(10, 4000);
    mpfr_add_d(raw(want), raw(want), 0.25, MPFR_RNDN);
    EXPECT_TRUE(same(ol.score(0, 0, 1, 2, 2, half, half, 1.0), with_bits(want, bits))) << bits;
  }
}

// Correctly rounded against Boost at 4P + 400, including cancellation: q = -(the bias at `bits` as a sum of up to
// three doubles), k = 1.
RC_GTEST_PROP(FireOracleScore, CorrectlyRoundedScore, ()) {
  const Model m = genModel(*rc::gen::element(FireRegime::exact, FireRegime::cramming));
  const unsigned bits = *rc::gen::element(24u, 53u, 100u, 256u);
  const FireOracle o(m.spec, m.w, bits);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, m.spec.heads);
  const std::size_t lk = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(1, 40),
                                         rc::gen::inRange<std::size_t>(1, (std::size_t{1} << 24) + 1));
  const std::size_t lq = *rc::gen::element<std::size_t>(1, lk, *rc::gen::inRange<std::size_t>(1, lk + 1));
  const std::size_t i = *rc::gen::inRange<std::size_t>(0, lq), j = *rc::gen::inRange<std::size_t>(0, lk);
  const auto qi = static_cast<std::int64_t>(lk - lq + i), jj = static_cast<std::int64_t>(j);
  const ScoreOperands c = score_operands_gen({1.0, 0.125, 0.0, -2.0}, o.exact_bias_at(h, qi, jj));
  const unsigned wide = 4 * bits + 400;
  const Real got = o.score(h, i, j, lq, lk, c.q, c.k, c.scale);
  Real want = exact_scaled_dot(c, wide + 6000);  // the sum is exact, and has room for the bias's exact terms
  // the bias at wide + 2200 bits: its terms range over 2^20 .. 2^-1074 (b2 = -3e-300 beside W2 W1 x ~ 1e6), and
  // the q_c k_c cancel all of it but the residual
  mpfr_add(raw(want), raw(want), raw(boost_bias(m.w, m.spec.mlp_width, m.spec.eps, h, qi, jj, wide + 2200)),
           MPFR_RNDN);
  RC_LOG() << "q_i=" << qi << " j=" << j << " got " << show(got) << " want " << show(want) << "\n";
  RC_ASSERT(same(got, with_bits(want, bits)));
}

// ======================================================================================================
// FireOracleErrors: every bad argument names its parameter
// ======================================================================================================

TEST(FireOracleErrors, EveryBadArgumentNamesItsParameter) {
  const FireSpec s = make_spec(2, 2, 1e-6, FireRegime::exact);
  const FireWeights w{0.1, 1.0, 512.0, {0.5, -1.0}, {0.25, 0.5}, {1.0, 2.0, -1.0, 0.5}, {0.0, 0.125}};
  const FireOracle o(s, w);
  const std::vector<double> q = {1.0, 2.0}, k = {3.0, 4.0};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();

  FireSpec bad = s;
  bad.heads = 0;
  EXPECT_EQ(param_of([&] { FireOracle x(bad, w); }), "heads");
  bad.heads = posenc::kFireMaxHeads + 1;
  EXPECT_EQ(param_of([&] { FireOracle x(bad, w); }), "heads");
  bad = s;
  bad.mlp_width = 0;
  EXPECT_EQ(param_of([&] { FireOracle x(bad, w); }), "mlp_width");
  bad.mlp_width = posenc::kFireMaxWidth + 1;
  EXPECT_EQ(param_of([&] { FireOracle x(bad, w); }), "mlp_width");
  bad = s;
  bad.eps = 0.0;
  EXPECT_EQ(param_of([&] { FireOracle x(bad, w); }), "eps");
  bad.eps = 1e-13;
  EXPECT_EQ(param_of([&] { FireOracle x(bad, w); }), "eps");
  bad.eps = nan;
  EXPECT_EQ(param_of([&] { FireOracle x(bad, w); }), "eps");
  bad.eps = 1.5;
  EXPECT_EQ(param_of([&] { FireOracle x(bad, w); }), "eps");
  bad = s;
  bad.regime = static_cast<FireRegime>(7);
  EXPECT_EQ(param_of([&] { FireOracle x(bad, w); }), "regime");

  auto with = [&](auto edit) {
    FireWeights v = w;
    edit(v);
    return param_of([&] { FireOracle x(s, v); });
  };
  EXPECT_EQ(with([&](FireWeights& v) { v.c = nan; }), "c");
  EXPECT_EQ(with([&](FireWeights& v) { v.c = -2e6; }), "c");
  EXPECT_EQ(with([&](FireWeights& v) { v.L_multiplier = inf; }), "L_multiplier");
  EXPECT_EQ(with([&](FireWeights& v) { v.init_L = 16777217.0; }), "init_L");
  EXPECT_EQ(with([&](FireWeights& v) { v.init_L = -nan; }), "init_L");
  EXPECT_EQ(with([&](FireWeights& v) { v.w1.pop_back(); }), "w1");
  EXPECT_EQ(with([&](FireWeights& v) { v.w1[1] = 1e7; }), "w1");
  EXPECT_EQ(with([&](FireWeights& v) { v.b1.push_back(0.0); }), "b1");
  EXPECT_EQ(with([&](FireWeights& v) { v.b1[0] = nan; }), "b1");
  EXPECT_EQ(with([&](FireWeights& v) { v.w2.resize(2); }), "w2");
  EXPECT_EQ(with([&](FireWeights& v) { v.w2[3] = -inf; }), "w2");
  EXPECT_EQ(with([&](FireWeights& v) { v.b2.clear(); }), "b2");
  EXPECT_EQ(with([&](FireWeights& v) { v.b2[1] = 1.5e6; }), "b2");
  EXPECT_EQ(with([&](FireWeights& v) {
              v.c = -1e6;
              v.init_L = -16777216.0;
              v.b2[1] = 1e6;
            }),
            "");

  EXPECT_EQ(param_of([&] { FireOracle x(s, w, 23); }), "bits");
  EXPECT_EQ(param_of([&] { FireOracle x(s, w, kMaxBits + 1); }), "bits");
  EXPECT_EQ(param_of([&] { FireOracle x(s, w, 0); }), "bits");

  EXPECT_EQ(param_of([&] { o.bias_at(2, 0, 0); }), "h");
  EXPECT_EQ(param_of([&] { o.exact_bias_at(99, 1, 0); }), "h");
  EXPECT_EQ(param_of([&] { o.condition_scale(2, 1, 0); }), "h");
  EXPECT_EQ(param_of([&] { o.bias(2, 0, 0, 1, 1); }), "h");
  EXPECT_EQ(param_of([&] { o.exact_bias(2, 0, 0, 1, 1); }), "h");
  EXPECT_EQ(param_of([&] { o.score(2, 0, 0, 1, 1, q, k, 1.0); }), "h");

  for (std::int64_t bad_pos : {std::int64_t{-1}, kTwo24, std::numeric_limits<std::int64_t>::max(),
                               std::numeric_limits<std::int64_t>::min()}) {
    EXPECT_EQ(param_of([&] { o.x(bad_pos, 0); }), "q");
    EXPECT_EQ(param_of([&] { o.x(0, bad_pos); }), "j");
    EXPECT_EQ(param_of([&] { o.bias_at(0, bad_pos, 0); }), "q");
    EXPECT_EQ(param_of([&] { o.bias_at(0, 0, bad_pos); }), "j");
    EXPECT_EQ(param_of([&] { o.exact_bias_at(0, bad_pos, 1); }), "q");
    EXPECT_EQ(param_of([&] { o.exact_bias_at(0, 1, bad_pos); }), "j");
    EXPECT_EQ(param_of([&] { o.condition_scale(0, bad_pos, 1); }), "q");
    EXPECT_EQ(param_of([&] { o.condition_scale(0, 1, bad_pos); }), "j");
  }
  EXPECT_EQ(param_of([&] { o.bias_at(0, kTwo24 - 1, kTwo24 - 1); }), "");
  EXPECT_EQ(param_of([&] { o.x(kTwo24 - 1, 0); }), "");

  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, (std::size_t{1} << 24) + 1); }), "key_length");
  EXPECT_EQ(param_of([&] { o.exact_bias(0, 0, 0, 1, std::size_t{1} << 31); }), "key_length");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, (std::size_t{1} << 24) + 1, q, k, 1.0); }), "key_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 0, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.exact_bias(0, 0, 0, 4, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 4, 3, q, k, 1.0); }), "query_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.exact_bias(0, 1, 0, 1, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.score(0, 1, 0, 1, 3, q, k, 1.0); }), "i");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.exact_bias(0, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 3, 2, 3, q, k, 1.0); }), "j");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, (std::size_t{1} << 24) - 1, 1, std::size_t{1} << 24); }), "");

  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, std::vector<double>{}, std::vector<double>{}, 1.0); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, std::vector<double>{1.0}, 1.0); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, std::vector<double>{1.0, nan}, k, 1.0); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, std::vector<double>{-inf, 1.0}, 1.0); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, k, nan); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, k, inf); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, k, 1.0); }), "");

  // the messages name the parameter and the accepted values
  const std::string msg = error_of([&] { o.bias_at(0, -3, 0); });
  EXPECT_NE(msg.find("q = -3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2^24"), std::string::npos) << msg;
}

}  // namespace oracle_fire
