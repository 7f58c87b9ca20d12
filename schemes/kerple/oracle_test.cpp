// Self-tests of the KERPLE oracle. The oracle is the ground truth of the kerple property suite, so each test here is
// built to fail if the oracle is wrong: exact-regime values against literals derived by hand from kerple_spec.hpp
// (-ln 2, exact powers, ties to even) and against an independent Boost/MPFR evaluation at 4P; the megatron regime
// against plain C float arithmetic (IEEE float32 * and + are correctly rounded; glibc's double log/pow are within
// 0.52 ulp, so their float32 rounding is used only where a 4-ulp window around the double result rounds to one
// float32); the clamps against literals and against the spec's kerple_effective_p/_a; the geometry against literal
// distance matrices; Toeplitz, monotonicity and -0 at distance 0; every bad argument against the posenc::Error it
// must raise.
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
#include "posenc/kerple_spec.hpp"
#include "posenc/reference/kerple.hpp"
#include "posenc/reference/mp.hpp"
#include "test_util.hpp"

namespace oracle_kerple {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::KerpleKernel;
using posenc::KerpleRegime;
using posenc::KerpleSpec;
using posenc::KerpleWeights;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

constexpr std::int64_t kTwo24 = std::int64_t{1} << 24;
constexpr std::int64_t kMaxD = (std::int64_t{1} << 31) - 1;

KerpleSpec make_spec(std::size_t heads, KerpleKernel kernel = KerpleKernel::log,
                     KerpleRegime regime = KerpleRegime::exact) {
  KerpleSpec s;
  s.heads = heads;
  s.kernel = kernel;
  s.regime = regime;
  posenc::validate(s);
  return s;
}

// One head with the given (unclamped) weights.
KerpleOracle one_head(KerpleKernel kernel, KerpleRegime regime, double p, double a, unsigned bits = kDefaultBits) {
  return KerpleOracle(make_spec(1, kernel, regime), KerpleWeights{{p}, {a}}, bits);
}

// |a - b| <= 2^e
bool within_pow2(const Real& a, const Real& b, long e) { return abs_below_pow2(sub(a, b), e); }
bool negative_zero(const Real& x) { return mpfr_zero_p(raw(x)) != 0 && mpfr_signbit(raw(x)) != 0; }

// The clamps written out again from kerple_spec.hpp (doubles; the compiler's 0.01).
double clamp_p(KerpleKernel kernel, double p) {
  const double c = std::max(p, 0.01);
  return kernel == KerpleKernel::power ? std::min(c, 2.0) : c;
}
double clamp_a(double a) { return std::max(a, 0.01); }

// The exact bias transcribed again with Boost's expression templates at `bits` (PrecisionGuard), then rounded to
// `out_bits`: -p log(1 + a d) or -a pow(d, p).
Real boost_exact(KerpleKernel kernel, double bias_p, double bias_a, std::int64_t d, unsigned bits, unsigned out_bits) {
  const double p = clamp_p(kernel, bias_p), a = clamp_a(bias_a);
  PrecisionGuard guard(bits);
  Real r;
  if (kernel == KerpleKernel::log)
    r = -Real(p) * boost::multiprecision::log(Real(1) + Real(a) * Real(d));
  else
    r = -Real(a) * boost::multiprecision::pow(Real(d), Real(p));
  return with_bits(r, out_bits);
}


// The megatron steps in plain C float arithmetic (x86-64 SSE, FLT_EVAL_METHOD 0, no fast-math): * and + are IEEE
// binary32, correctly rounded; ln and pow through double (safe only when `safe`).
struct CFloat {
  float value;
  bool safe;
};
CFloat c_megatron(KerpleKernel kernel, double bias_p, double bias_a, std::int64_t d) {
  const float eps = static_cast<float>(0.01);
  float p = std::fmax(static_cast<float>(bias_p), eps);
  if (kernel == KerpleKernel::power) p = std::fmin(p, 2.0f);
  const float a = std::fmax(static_cast<float>(bias_a), eps);
  volatile float dd = static_cast<float>(d);
  if (kernel == KerpleKernel::log) {
    volatile float t = a * dd;
    volatile float u = 1.0f + t;
    float l = 0;
    const bool safe = to_float_safely(std::log(static_cast<double>(u)), &l);
    volatile float b = -p * l;
    return {b, safe};
  }
  float w = 0;
  const bool safe = to_float_safely(std::pow(static_cast<double>(dd), static_cast<double>(p)), &w);
  volatile float b = -w * a;
  return {b, safe};
}

// The parameter named by the posenc::Error f() throws, or "" if it throws none.
std::string param_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const posenc::Error& e) {
    return e.parameter();
  }
  return "";
}

// ---- generators -------------------------------------------------------------------------------------

// Weights as trained (p ~ U(0, 2), a ~ U(0, 1)), around the clamps, the exact-power dyadics, and the extremes.
rc::Gen<double> genWeight() {
  return rc::gen::exec([] {
    const int kind = *rc::gen::inRange(0, 4);
    if (kind == 0) return *rc::gen::inRange(-100000, 2500001) / 1000000.0;  // [-0.1, 2.5]
    if (kind == 1)
      return *rc::gen::element(1.0, 2.0, 0.5, 0.25, 1.5, 0.75, 0.125, 0.0625, 1.25, 0.01, 0.0099999999, 0.010000001,
                               -3.0, 0.0, 5.0, 2.0000000000000004, 1e6, -1e6, 1.0 + 0x1p-24, 1.0 / 3.0);
    if (kind == 2) return *rc::gen::inRange(-999999, 1000000) * 1.0 + *rc::gen::inRange(0, 1 << 20) * 0x1p-20;
    return static_cast<double>(*rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 53)) * 0x1p-52;  // [0, 2), 53 bits
  });
}

// Distances: 0, 1, small, perfect powers r^2, r^4, r^8, r^16 (exact powers), around 2^24 and 2^31, anything.
rc::Gen<std::int64_t> genDistance() {
  return rc::gen::exec([] {
    const int kind = *rc::gen::inRange(0, 5);
    if (kind == 0) return *rc::gen::element<std::int64_t>(0, 1, 2, 3, 4, 9, 16, 81, 256, 65536, kTwo24 - 1, kTwo24,
                                                           kTwo24 + 1, kTwo24 + 3, kMaxD - 1, kMaxD);
    if (kind == 1) return *rc::gen::inRange<std::int64_t>(0, 200);
    if (kind == 2) {
      const int e = *rc::gen::element(2, 4, 8, 16);
      const std::int64_t rmax = e == 2 ? 46340 : e == 4 ? 215 : e == 8 ? 14 : 3;
      const std::int64_t r = *rc::gen::inRange<std::int64_t>(1, rmax + 1);
      std::int64_t d = 1;
      for (int t = 0; t < e; ++t) d *= r;
      return d;
    }
    return *rc::gen::inRange<std::int64_t>(0, kMaxD + 1);
  });
}

rc::Gen<KerpleKernel> genKernel() { return rc::gen::element(KerpleKernel::log, KerpleKernel::power); }
rc::Gen<KerpleRegime> genRegime() { return rc::gen::element(KerpleRegime::exact, KerpleRegime::megatron); }

// ======================================================================================================
// KerpleOracleMp: precision bookkeeping, threads
// ======================================================================================================

TEST(KerpleOracleMp, ValuesHaveExactlyTheRequestedPrecision) {
  const std::vector<double> q = {1.0, -2.0, 0.5}, k = {0.25, 3.0, 7.0};
  for (KerpleKernel kernel : {KerpleKernel::log, KerpleKernel::power})
    for (KerpleRegime regime : {KerpleRegime::exact, KerpleRegime::megatron}) {
      const KerpleSpec s = make_spec(3, kernel, regime);
      const KerpleWeights w{{0.7, 2.0, 1.3}, {0.3, 0.5, 1e-3}};
      for (unsigned bits : {24u, 53u, 100u, 255u, 256u, 257u, 512u}) {
        const KerpleOracle o(s, w, bits);
        EXPECT_EQ(o.bits(), bits);
        EXPECT_EQ(bits_of(o.p(0)), std::max(bits, 53u));
        EXPECT_EQ(bits_of(o.a(2)), std::max(bits, 53u));
        EXPECT_EQ(bits_of(o.bias_at(0, 5)), bits);
        EXPECT_EQ(bits_of(o.bias_at(1, 0)), bits);  // a zero
        EXPECT_EQ(bits_of(o.bias_at(1, 3)), bits);  // an exact power (p = 2)
        EXPECT_EQ(bits_of(o.exact_bias_at(0, 5)), bits);
        EXPECT_EQ(bits_of(o.bias(0, 2, 0, 3, 5)), bits);
        EXPECT_EQ(bits_of(o.exact_bias(0, 0, 4, 3, 5)), bits);
        EXPECT_EQ(bits_of(o.score(0, 1, 0, 3, 5, q, k, 0.125)), bits);
        EXPECT_EQ(bits_of(o.score(1, 1, 0, 3, 5, q, k, 0.125)), bits);
      }
    }
}

TEST(KerpleOracleMp, OracleDoesNotDependOnBoostDefaultPrecision) {
  const std::vector<double> q = {0.1, -0.7, 3.0}, k = {1.5, 0.3, -2.25};
  const KerpleWeights w{{0.37, 1.61}, {0.29, 0.83}};
  for (KerpleKernel kernel : {KerpleKernel::log, KerpleKernel::power})
    expect_independent_of_default_precision([&] {
      const KerpleOracle o(make_spec(2, kernel), w);
      return std::vector<Real>{o.bias_at(0, 1000), o.bias(1, 2, 1000, 7, 5000), o.score(1, 2, 1000, 7, 5000, q, k, 0.5)};
    });
}

TEST(KerpleOracleMp, ConcurrentCallsGiveTheSerialResults) {
  std::vector<KerpleOracle> oracles;
  const KerpleWeights w{{0.3, 1.0, 2.0, 0.5, 1.7, -1.0}, {0.05, 0.5, 1.0, 0.25, 3.0, 0.0}};
  for (KerpleKernel kernel : {KerpleKernel::log, KerpleKernel::power})
    for (KerpleRegime regime : {KerpleRegime::exact, KerpleRegime::megatron})
      oracles.emplace_back(make_spec(6, kernel, regime), w);
  const std::vector<double> q = {1.0, -0.5, 0.25}, k = {-7.0, 0.125, 2.0};
  expect_concurrent_calls_match_serial([&] {
    std::vector<Real> out;
    for (const KerpleOracle& o : oracles)
      for (std::size_t h = 0; h < 6; ++h) {
        out.push_back(o.bias_at(h, 17));
        out.push_back(o.bias(h, 8, 0, 9, kMaxD));
        out.push_back(o.exact_bias_at(h, 4));
        out.push_back(o.score(h, 3, 1, 9, 100, q, k, 0.5));
      }
    return out;
  });
}

// ======================================================================================================
// KerpleOracleGeometry: distances, Toeplitz, the decoder row
// ======================================================================================================

TEST(KerpleOracleGeometry, LiteralDistanceMatrices) {
  using M = std::vector<std::vector<std::int64_t>>;
  const M square = {{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 1, 0, 0}, {3, 2, 1, 0}};  // tril(i - j), Lq = Lk = 4
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(kerple_distance(i, j, 4, 4), square[i][j]) << i << " " << j;
  for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(kerple_distance(0, j, 1, 4), square[3][j]);  // decoder: last row
  const M last_two = {{3, 2, 1, 0, 0}, {4, 3, 2, 1, 0}};  // Lq = 2, Lk = 5: q_0 = 3, q_1 = 4
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(kerple_distance(i, j, 2, 5), last_two[i][j]);
  EXPECT_EQ(kerple_distance(0, 0, 1, 1), 0);
  EXPECT_EQ(kerple_distance(0, 0, 1, std::size_t(kMaxD)), kMaxD - 1);
}

// power, p = 1, a = 1: the bias is -d exactly in both regimes, and -0 on and above the diagonal.
TEST(KerpleOracleGeometry, PowerOneBiasIsMinusTheDistanceMatrix) {
  for (KerpleRegime regime : {KerpleRegime::exact, KerpleRegime::megatron})
    for (unsigned bits : {24u, 256u}) {
      const KerpleOracle o = one_head(KerpleKernel::power, regime, 1.0, 1.0, bits);
      for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j) {
          const Real b = o.bias(0, i, j, 4, 4);
          const double want = j <= i ? -double(i - j) : 0.0;
          EXPECT_TRUE(holds(b, want)) << i << " " << j << " " << show(b);
          if (j >= i) {
            EXPECT_TRUE(negative_zero(b)) << i << " " << j;
          }
          EXPECT_TRUE(same(o.bias(0, 0, j, 1, 4), o.bias(0, 3, j, 4, 4)));  // decoder row = last row
        }
    }
}

// Toeplitz: the bias at (i, j) is bias_at(q_i - j) (0 above the diagonal), the same along every diagonal, and a
// decoder step (Lq = 1) reads the last row of the full matrix.
RC_GTEST_PROP(KerpleOracleGeometry, BiasDependsOnTheDistanceOnly, ()) {
  const KerpleKernel kernel = *genKernel();
  const KerpleRegime regime = *genRegime();
  const KerpleOracle o = one_head(kernel, regime, *genWeight(), *genWeight(), *rc::gen::element(24u, 64u));
  const std::size_t lk = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(1, 50),
                                         rc::gen::inRange<std::size_t>(1, std::size_t(kMaxD) + 1));
  const std::size_t lq = *rc::gen::element<std::size_t>(1, lk, *rc::gen::inRange<std::size_t>(1, lk + 1));
  const std::size_t i = *rc::gen::inRange<std::size_t>(0, lq), j = *rc::gen::inRange<std::size_t>(0, lk);
  const std::int64_t qi = std::int64_t(lk) - std::int64_t(lq) + std::int64_t(i);
  const std::int64_t d = std::int64_t(j) <= qi ? qi - std::int64_t(j) : 0;
  RC_ASSERT(kerple_distance(i, j, lq, lk) == d);
  const Real b = o.bias(0, i, j, lq, lk);
  RC_ASSERT(same(b, o.bias_at(0, d)));
  RC_ASSERT(same(o.exact_bias(0, i, j, lq, lk), o.exact_bias_at(0, d)));
  if (std::int64_t(j) <= qi) RC_ASSERT(same(b, o.bias(0, 0, j, 1, std::size_t(qi) + 1)));  // decoder, q_i + 1 keys
  if (i + 1 < lq && j + 1 < lk) RC_ASSERT(same(b, o.bias(0, i + 1, j + 1, lq, lk)));  // along the diagonal
  if (d == 0) RC_ASSERT(negative_zero(b));
}

// ======================================================================================================
// KerpleOracleClamp: the parameters of each regime
// ======================================================================================================

TEST(KerpleOracleClamp, LiteralClamps) {
  using K = KerpleKernel;
  using R = KerpleRegime;
  const float eps32 = 0x1.47ae14p-7f;  // RN32(0.01), by hand: 0.01 = 0x1.47ae147ae147bp-7
  ASSERT_EQ(eps32, 0.01f);
  struct Case {
    K kernel;
    double bias_p, bias_a, p64, a64;
    float p32, a32;
  };
  const Case cases[] = {
      {K::log, -3.0, -1e6, 0.01, 0.01, eps32, eps32},
      {K::power, -3.0, 0.0, 0.01, 0.01, eps32, eps32},
      {K::power, 5.0, 1e6, 2.0, 1e6, 2.0f, 1e6f},
      {K::log, 5.0, 0.5, 5.0, 0.5, 5.0f, 0.5f},                 // log: no upper clamp
      {K::power, 2.0000000000000004, 1.0, 2.0, 1.0, 2.0f, 1.0f},  // one ulp above 2
      {K::power, 1.9999999, 0.25, 1.9999999, 0.25, 0x1.fffffep0f, 0.25f},  // RN32(1.9999999) = 2 - 2^-23
      {K::log, 0.0099999999, 0.01, 0.01, 0.01, eps32, eps32},    // below the double eps; RN32 of it is eps32
      {K::log, 0.009999999, 0.3, 0.01, 0.3, 0x1.47ae12p-7f, 0.3f},  // RN32: one float32 ulp below eps32
  };
  for (const Case& c : cases)
    for (unsigned bits : {24u, 53u, 256u}) {
      const KerpleOracle ex = one_head(c.kernel, R::exact, c.bias_p, c.bias_a, bits);
      const KerpleOracle mg = one_head(c.kernel, R::megatron, c.bias_p, c.bias_a, bits);
      EXPECT_TRUE(holds(ex.p(0), c.p64)) << c.bias_p << " " << show(ex.p(0));
      EXPECT_TRUE(holds(ex.a(0), c.a64)) << c.bias_a;
      const float want_p32 = std::max(c.p32, eps32), want_a32 = std::max(c.a32, eps32);
      EXPECT_TRUE(holds(mg.p(0), want_p32)) << c.bias_p << " " << show(mg.p(0));
      EXPECT_TRUE(holds(mg.a(0), want_a32)) << c.bias_a;
    }
  // 0.009999999 rounds to the float32 below eps32 (0x1.47ae12p-7), which the clamp raises to eps32; 1.9999999 to
  // the float32 below 2, which the clamp keeps
  EXPECT_EQ(static_cast<float>(0.009999999), 0x1.47ae12p-7f);
  EXPECT_EQ(static_cast<float>(1.9999999), 0x1.fffffep0f);
  // the clamp acts on the bias: p = 0.01, a = 0.01 (exact: the doubles) at d = 1: -0.01 ln(1.01)
  const Real b = one_head(K::log, R::exact, -3.0, -3.0).bias_at(0, 1);
  EXPECT_TRUE(same(b, boost_exact(K::log, 0.01, 0.01, 1, 2000, 256))) << show(b);
  // power bias_p = 5 -> 2: -a d^2, exact
  EXPECT_TRUE(holds(one_head(K::power, R::exact, 5.0, 0.5).bias_at(0, 3), -4.5));
  EXPECT_TRUE(holds(one_head(K::power, R::megatron, 5.0, 0.5).bias_at(0, 3), -4.5));
}

// eps32: torch clamps a float32 tensor against the Python float 0.01, i.e. RN32(RN64(0.01)); kerple_spec.hpp writes
// RN32(0.01). They are the same float32 (RN64(0.01) is not near a float32 midpoint).
TEST(KerpleOracleClamp, Eps32IsRn32OfTheRealHundredth) {
  const Real hundredth = parse_real("0.01", 400);
  EXPECT_EQ(round_to_float(hundredth), static_cast<float>(0.01));
  EXPECT_EQ(round_to_float(hundredth), 0x1.47ae14p-7f);
  EXPECT_EQ(round_to_double(hundredth), 0.01);
  const KerpleOracle o = one_head(KerpleKernel::log, KerpleRegime::megatron, -1.0, -1.0);
  EXPECT_TRUE(holds(o.p(0), 0x1.47ae14p-7f));
}

// The oracle's own clamps agree with the spec's kerple_effective_p/_a (two transcriptions of one definition).
RC_GTEST_PROP(KerpleOracleClamp, AgreesWithTheSpecHelpers, ()) {
  const KerpleSpec s = make_spec(1, *genKernel(), *genRegime());
  const double bp = *genWeight(), ba = *genWeight();
  const KerpleOracle o(s, KerpleWeights{{bp}, {ba}}, *rc::gen::element(24u, 256u));
  RC_ASSERT(holds(o.p(0), posenc::kerple_effective_p(s, bp)));
  RC_ASSERT(holds(o.a(0), posenc::kerple_effective_a(s, ba)));
  if (s.regime == KerpleRegime::exact) {
    RC_ASSERT(holds(o.p(0), clamp_p(s.kernel, bp)));
    RC_ASSERT(holds(o.a(0), clamp_a(ba)));
  } else {
    RC_ASSERT(same(o.p(0), round_to_float_precision(o.p(0))));  // a float32 number
    RC_ASSERT(holds(o.a(0), std::max(static_cast<float>(ba), 0.01f)));
  }
}

// ======================================================================================================
// KerpleOracleExact: the exact regime
// ======================================================================================================

// log, hand-derived: p = 1, a = 1, d = 1: -ln 2; p = 2, a = 1, d = 3: -2 ln 4 = -4 ln 2 (RN commutes with the
// power of two); p = 1, a = 3, d = 1: -ln 4 = -2 ln 2; p = 0.5, a = 0.5, d = 2: -ln(2)/2. Against MPFR's
// const_log2 (not its log).
TEST(KerpleOracleExact, LiteralLogValues) {
  struct Case {
    double p, a;
    std::int64_t d;
    long shift;  // b = -2^shift ln 2
  };
  const Case cases[] = {{1.0, 1.0, 1, 0}, {2.0, 1.0, 3, 2}, {1.0, 3.0, 1, 1}, {0.5, 0.5, 2, -1}, {1.0, 0.5, 2, 0}};
  for (unsigned bits : {24u, 53u, 100u, 256u, 1000u})
    for (const Case& c : cases) {
      Real want = make_real(bits);
      mpfr_const_log2(raw(want), MPFR_RNDN);
      mpfr_mul_2si(raw(want), raw(want), c.shift, MPFR_RNDN);
      mpfr_neg(raw(want), raw(want), MPFR_RNDN);
      const KerpleOracle o = one_head(KerpleKernel::log, KerpleRegime::exact, c.p, c.a, bits);
      const Real got = o.bias_at(0, c.d);
      EXPECT_TRUE(same(got, want)) << bits << " p=" << c.p << " d=" << c.d << " " << show(got) << " vs " << show(want);
    }
  const Real ln2 = one_head(KerpleKernel::log, KerpleRegime::exact, 1.0, 1.0, 400).bias_at(0, 1);
  EXPECT_TRUE(within_pow2(ln2, parse_real("-0.6931471805599453094172321214581765680755", 400), -130));
  EXPECT_EQ(round_to_float(ln2), -0x1.62e43p-1f);
  EXPECT_EQ(round_to_double(ln2), -0x1.62e42fefa39efp-1);
}

// power, exact cases (d^p an integer): each must terminate and be the exact value rounded once.
TEST(KerpleOracleExact, LiteralExactPowers) {
  struct Case {
    double p, a;
    std::int64_t d;
    double want;
  };
  const Case cases[] = {
      {2.0, 0.5, 3, -4.5},      {1.0, 1.0, 7, -7.0},     {0.5, 1.0, 49, -7.0},   {0.25, 1.0, 81, -3.0},
      {1.5, 1.0, 9, -27.0},     {0.75, 2.0, 16, -16.0},  {0.0625, 1.0, 65536, -2.0}, {0.125, 3.0, 256, -6.0},
      {0.3, 0.75, 1, -0.75},    {1.25, 1.0, 16, -32.0},  {2.0, 1.0, 46340, -2147395600.0},
      {0.5, 0.25, 2147395600, -11585.0},  // sqrt(46340^2) = 46340, times 0.25
  };
  for (const Case& c : cases)
    for (unsigned bits : {24u, 53u, 256u}) {
      const KerpleOracle o = one_head(KerpleKernel::power, KerpleRegime::exact, c.p, c.a, bits);
      const Real got = o.bias_at(0, c.d);
      Real want = make_real(bits);
      mpfr_set_d(raw(want), c.want, MPFR_RNDN);  // rounded once to bits (exact for bits >= 32)
      EXPECT_TRUE(same(got, want)) << c.p << " " << c.d << " bits=" << bits << " " << show(got);
    }
  // a 53-bit a times a 62-bit integer, rounded once: a = 1/3, d = 2^31 - 1, p = 2; a = 1e6
  for (double a : {1.0 / 3.0, 1e6, 0.7})
    for (unsigned bits : {24u, 53u, 100u}) {
      Real exact = make_real(200), d = make_real(kMaxD, 64);
      mpfr_mul(raw(exact), raw(d), raw(d), MPFR_RNDN);
      mpfr_mul_d(raw(exact), raw(exact), a, MPFR_RNDN);  // exact at 200 bits
      mpfr_neg(raw(exact), raw(exact), MPFR_RNDN);
      const Real got = one_head(KerpleKernel::power, KerpleRegime::exact, 2.0, a, bits).bias_at(0, kMaxD);
      EXPECT_TRUE(same(got, with_bits(exact, bits))) << a << " " << bits << " " << show(got);
    }
}

// Exact values on a rounding midpoint go to even (a Ziv loop alone would never decide them).
TEST(KerpleOracleExact, ExactMidpointsRoundToEven) {
  // a = 1 + 2^-24, p = 1, d = 2: 2 + 2^-23, half an ulp (2^-22) above 2 at 24 bits: -> 2 (even)
  EXPECT_TRUE(holds(one_head(KerpleKernel::power, KerpleRegime::exact, 1.0, 1.0 + 0x1p-24, 24).bias_at(0, 2), -2.0));
  EXPECT_TRUE(holds(one_head(KerpleKernel::power, KerpleRegime::exact, 1.0, 1.0 + 0x1p-24, 53).bias_at(0, 2),
                    -(2.0 + 0x1p-23)));
  // a = 1 + 3 2^-24, d = 2: 2 + 1.5 ulp -> 2 + 2 ulp = 2 + 2^-21 (even)
  EXPECT_TRUE(holds(one_head(KerpleKernel::power, KerpleRegime::exact, 1.0, 1.0 + 3 * 0x1p-24, 24).bias_at(0, 2),
                    -(2.0 + 0x1p-21)));
  // p = 0.5, d = 4: sqrt 4 = 2, same ties; p = 2, d = 1: 1^2 = 1, a = 1 + 2^-24 -> 1 (a tie at 24 bits)
  EXPECT_TRUE(holds(one_head(KerpleKernel::power, KerpleRegime::exact, 0.5, 1.0 + 0x1p-24, 24).bias_at(0, 4), -2.0));
  EXPECT_TRUE(holds(one_head(KerpleKernel::power, KerpleRegime::exact, 2.0, 1.0 + 0x1p-24, 24).bias_at(0, 1), -1.0));
  EXPECT_TRUE(holds(one_head(KerpleKernel::power, KerpleRegime::exact, 2.0, 1.0 + 3 * 0x1p-24, 24).bias_at(0, 1),
                    -(1.0 + 0x1p-22)));
}

// Irrational powers against other MPFR functions: p = 0.5, d = 2: -a sqrt 2; p = 1.5, d = 2: -2 sqrt 2 a;
// p = 0.25, d = 4: -sqrt 2; p = 1/3 (a double, not 1/3): d^p irrational even for d = 8.
TEST(KerpleOracleExact, LiteralIrrationalPowers) {
  for (unsigned bits : {24u, 53u, 256u, 1000u}) {
    Real sqrt2 = make_real(bits);
    mpfr_sqrt_ui(raw(sqrt2), 2, MPFR_RNDN);
    mpfr_neg(raw(sqrt2), raw(sqrt2), MPFR_RNDN);
    Real two_sqrt2 = with_bits(sqrt2, bits);
    mpfr_mul_2ui(raw(two_sqrt2), raw(two_sqrt2), 1, MPFR_RNDN);
    EXPECT_TRUE(same(one_head(KerpleKernel::power, KerpleRegime::exact, 0.5, 1.0, bits).bias_at(0, 2), sqrt2));
    EXPECT_TRUE(same(one_head(KerpleKernel::power, KerpleRegime::exact, 1.5, 1.0, bits).bias_at(0, 2), two_sqrt2));
    EXPECT_TRUE(same(one_head(KerpleKernel::power, KerpleRegime::exact, 0.25, 1.0, bits).bias_at(0, 4), sqrt2));
    EXPECT_TRUE(same(one_head(KerpleKernel::power, KerpleRegime::exact, 0.5, 0.5, bits).bias_at(0, 8), sqrt2));
    const Real cube = one_head(KerpleKernel::power, KerpleRegime::exact, 1.0 / 3.0, 1.0, bits).bias_at(0, 8);
    // 8^RN64(1/3) = 2 8^-delta, delta = 1/3 - RN64(1/3) ~ 2^-55.6: 2 (1 - 2^-54.5 ...) rounds to 2 at 24 and 53 bits
    EXPECT_EQ(holds(cube, -2.0), bits <= 53) << "8^RN64(1/3) is not 2 " << show(cube);
    EXPECT_TRUE(same(cube, boost_exact(KerpleKernel::power, 1.0 / 3.0, 1.0, 8, 4 * bits + 64, bits)));
  }
}

// Every kernel, weight and distance: the exact bias equals a 4P Boost evaluation rounded to P (correctly rounded:
// equal unless within 2^-3P of a midpoint, and exact values are exact in both), P vs 2P agree to an ulp, the
// exact regime's bias_at is exact_bias_at, and a megatron oracle's exact_bias_at is the exact regime's value.
RC_GTEST_PROP(KerpleOracleExact, ExactBiasIsCorrectlyRounded, ()) {
  const KerpleKernel kernel = *genKernel();
  const double bp = *genWeight(), ba = *genWeight();
  const std::int64_t d = *genDistance();
  const unsigned bits = *rc::gen::element(24u, 53u, 100u, 256u);
  const KerpleOracle o = one_head(kernel, KerpleRegime::exact, bp, ba, bits);
  const KerpleOracle o2 = one_head(kernel, KerpleRegime::exact, bp, ba, 2 * bits);
  const KerpleOracle om = one_head(kernel, KerpleRegime::megatron, bp, ba, bits);
  const Real got = o.bias_at(0, d), got2 = o2.bias_at(0, d);
  const Real want = boost_exact(kernel, bp, ba, d, 4 * bits + 64, bits);
  RC_LOG() << posenc::to_string(kernel) << " p=" << bp << " a=" << ba << " d=" << d << " bits=" << bits << " got "
           << show(got) << " want " << show(want) << "\n";
  RC_ASSERT(same(got, want));
  RC_ASSERT(same(got, o.exact_bias_at(0, d)));
  RC_ASSERT(same(got, om.exact_bias_at(0, d)));
  if (d == 0) {
    RC_ASSERT(negative_zero(got));
    RC_ASSERT(negative_zero(got2));
  } else {
    RC_ASSERT(mpfr_sgn(raw(got)) < 0);
    RC_ASSERT(within_pow2(got, got2, mpfr_get_exp(raw(got2)) - long(bits)));  // <= ulp_P/2 + ulp_2P/2 < ulp_P
  }
}

// ======================================================================================================
// KerpleOracleMegatron: the float32 steps
// ======================================================================================================

TEST(KerpleOracleMegatron, LiteralValues) {
  using K = KerpleKernel;
  const auto mg = [](K kernel, double p, double a) { return one_head(kernel, KerpleRegime::megatron, p, a); };
  // log p = a = 1, d = 1: t = 1, u = 2, l = RN32(ln 2) = 0x1.62e43p-1, b = -l
  EXPECT_TRUE(holds(mg(K::log, 1.0, 1.0).bias_at(0, 1), -0x1.62e43p-1));
  // d = 3, a = 1: u = 4, l = RN32(ln 4) = 2 RN32(ln 2); p = 0.5: b = -RN32(ln 2)
  EXPECT_TRUE(holds(mg(K::log, 0.5, 1.0).bias_at(0, 3), -0x1.62e43p-1));
  // power p = 2, a = 0.5, d = 3: w = 9, b = -4.5; p = 0.5, d = 2: w = RN32(sqrt 2) (IEEE sqrtf is correctly rounded)
  EXPECT_TRUE(holds(mg(K::power, 2.0, 0.5).bias_at(0, 3), -4.5));
  volatile float two = 2.0f;
  EXPECT_TRUE(holds(mg(K::power, 0.5, 1.0).bias_at(0, 2), -std::sqrt(static_cast<float>(two))));
  // a = 0.1: a32 = RN32(0.1), t = RN32(a32 * 3) ...; spot values against C floats where ln/pow are safe
  EXPECT_TRUE(holds(mg(K::power, 1.0, 0.1).bias_at(0, 3), static_cast<double>(-(3.0f * 0.1f))));
  // every regime writes -0 at d = 0
  for (K kernel : {K::log, K::power}) {
    EXPECT_TRUE(negative_zero(mg(kernel, 0.7, 0.3).bias_at(0, 0)));
    EXPECT_TRUE(negative_zero(mg(kernel, 0.7, 0.3).bias(0, 0, 3, 2, 4)));  // above the diagonal
  }
}

// D = RN32(d): exact below 2^24, then rounded to the float32 grid: d = 2^24 + 1 is read as 2^24 (ties to even),
// 2^24 + 3 as 2^24 + 4, 2^31 - 1 as 2^31. The exact regime sees every d.
TEST(KerpleOracleMegatron, DistancesAreRoundedToFloat32) {
  for (KerpleKernel kernel : {KerpleKernel::log, KerpleKernel::power}) {
    const KerpleOracle mg = one_head(kernel, KerpleRegime::megatron, 1.0, 1.0);
    const KerpleOracle ex = one_head(kernel, KerpleRegime::exact, 1.0, 1.0);
    EXPECT_TRUE(same(mg.bias_at(0, kTwo24 + 1), mg.bias_at(0, kTwo24)));
    EXPECT_TRUE(same(mg.bias_at(0, kTwo24 + 3), mg.bias_at(0, kTwo24 + 4)));
    EXPECT_FALSE(same(ex.bias_at(0, kTwo24 + 1), ex.bias_at(0, kTwo24)));
  }
  const KerpleOracle mp1 = one_head(KerpleKernel::power, KerpleRegime::megatron, 1.0, 1.0);
  EXPECT_TRUE(holds(mp1.bias_at(0, kMaxD), -0x1p31));
  EXPECT_TRUE(holds(mp1.bias_at(0, kTwo24 + 1), -0x1p24));
  EXPECT_TRUE(holds(one_head(KerpleKernel::power, KerpleRegime::exact, 1.0, 1.0).bias_at(0, kTwo24 + 1),
                    -double(kTwo24 + 1)));
}

// Plain C float arithmetic over every d < 4096 and around 2^24 and 2^31, for a handful of weights: bit for bit
// (and the sign of zero) wherever the double ln/pow rounds safely to float32 (nearly everywhere).
TEST(KerpleOracleMegatron, MatchesPlainCFloatArithmetic) {
  const std::pair<double, double> weights[] = {{1.0, 1.0}, {0.37, 0.29}, {1.83, 0.61}, {-3.0, -3.0},
                                               {5.0, 1e6}, {0.5, 0.1},   {1.0 / 3.0, 2.0 / 3.0}};
  std::size_t checked = 0, unsafe = 0;
  for (KerpleKernel kernel : {KerpleKernel::log, KerpleKernel::power})
    for (const auto& [bp, ba] : weights) {
      const KerpleOracle o = one_head(kernel, KerpleRegime::megatron, bp, ba, 24);
      std::vector<std::int64_t> ds;
      for (std::int64_t d = 0; d < 4096; ++d) ds.push_back(d);
      for (std::int64_t d = kTwo24 - 40; d < kTwo24 + 40; ++d) ds.push_back(d);
      for (std::int64_t d = kMaxD - 200; d <= kMaxD; ++d) ds.push_back(d);
      for (std::int64_t d : ds) {
        const CFloat c = c_megatron(kernel, bp, ba, d);
        if (!c.safe) {
          ++unsafe;
          continue;
        }
        ++checked;
        const Real got = o.bias_at(0, d);
        ASSERT_TRUE(holds(got, static_cast<double>(c.value)))
            << posenc::to_string(kernel) << " p=" << bp << " a=" << ba << " d=" << d << " " << show(got) << " vs "
            << c.value;
        ASSERT_EQ(mpfr_signbit(raw(got)) != 0, std::signbit(c.value)) << d;
      }
    }
  EXPECT_GT(checked, 60000u);
  EXPECT_LT(unsafe, 20u) << "the double window should almost never straddle a float32 midpoint";
}

RC_GTEST_PROP(KerpleOracleMegatron, MatchesPlainCFloatArithmeticAnywhere, ()) {
  const KerpleKernel kernel = *genKernel();
  const double bp = *genWeight(), ba = *genWeight();
  const std::int64_t d = *genDistance();
  const CFloat c = c_megatron(kernel, bp, ba, d);
  RC_PRE(c.safe);
  const KerpleOracle o = one_head(kernel, KerpleRegime::megatron, bp, ba, *rc::gen::element(24u, 64u, 256u));
  const Real got = o.bias_at(0, d);
  RC_LOG() << posenc::to_string(kernel) << " p=" << bp << " a=" << ba << " d=" << d << " " << show(got) << " vs "
           << c.value << "\n";
  RC_ASSERT(same(got, round_to_float_precision(got)));  // a float32 number
  RC_ASSERT(holds(got, static_cast<double>(c.value)));
  RC_ASSERT((mpfr_signbit(raw(got)) != 0) == std::signbit(c.value));
}

// Error vs the exact regime, bounded by propagating 2^-24 per float32 step (kerple_spec.hpp's steps, first order
// with slack): log |m - e| <= (5 p + 4 |e|) 2^-24 (the rounding of u = 1 + t costs up to 2^-24 in ln u, absolute);
// power |m - e| <= |e| (p ln d + 6) 2^-24 (the rounding of p is amplified by ln d).
RC_GTEST_PROP(KerpleOracleMegatron, IsCloseToTheExactRegime, ()) {
  const KerpleKernel kernel = *genKernel();
  const double bp = *genWeight(), ba = *genWeight();
  const std::int64_t d = *genDistance();
  const KerpleOracle o = one_head(kernel, KerpleRegime::megatron, bp, ba, 64);
  const Real m = o.bias_at(0, d), e = o.exact_bias_at(0, d);
  const double err = std::fabs(to_d(sub(m, e))), ee = std::fabs(to_d(e));
  const double p = clamp_p(kernel, bp);
  const double bound = kernel == KerpleKernel::log ? (5 * p + 4 * ee) * 0x1p-24
                                                   : ee * (p * std::log(std::max<double>(d, 1)) + 6) * 0x1p-24;
  RC_LOG() << posenc::to_string(kernel) << " p=" << bp << " a=" << ba << " d=" << d << " err=" << err
           << " bound=" << bound << "\n";
  RC_ASSERT(err <= bound);
}

// ======================================================================================================
// KerpleOracleShape: 0 at distance 0, negative and non-increasing in d (both regimes: every step is monotone)
// ======================================================================================================

TEST(KerpleOracleShape, NonIncreasingSweep) {
  const std::pair<double, double> weights[] = {{1.0, 1.0}, {0.01, 0.01}, {2.0, 1e6}, {0.37, 0.29}, {1e6, 1e6}};
  for (KerpleKernel kernel : {KerpleKernel::log, KerpleKernel::power})
    for (KerpleRegime regime : {KerpleRegime::exact, KerpleRegime::megatron})
      for (const auto& [bp, ba] : weights) {
        const KerpleOracle o = one_head(kernel, regime, bp, ba, 53);
        Real prev = o.bias_at(0, 0);
        EXPECT_TRUE(negative_zero(prev));
        std::vector<std::int64_t> ds;
        for (std::int64_t d = 1; d < 600; ++d) ds.push_back(d);
        for (std::int64_t d = kTwo24 - 8; d < kTwo24 + 8; ++d) ds.push_back(d);
        ds.push_back(kMaxD);
        for (std::int64_t d : ds) {
          const Real b = o.bias_at(0, d);
          EXPECT_LT(mpfr_sgn(raw(b)), 0) << d;
          EXPECT_LE(mpfr_cmp(raw(b), raw(prev)), 0) << posenc::to_string(kernel) << " " << d;
          prev = b;
        }
      }
}

RC_GTEST_PROP(KerpleOracleShape, NegativeAndNonIncreasing, ()) {
  const KerpleKernel kernel = *genKernel();
  const KerpleRegime regime = *genRegime();
  const KerpleOracle o = one_head(kernel, regime, *genWeight(), *genWeight(), *rc::gen::element(24u, 53u, 200u));
  const std::int64_t d = std::min(*genDistance(), kMaxD - 1);
  const std::int64_t step = *rc::gen::element<std::int64_t>(1, 1, 2, 1000);
  const Real b = o.bias_at(0, d), b1 = o.bias_at(0, std::min(d + step, kMaxD));
  RC_ASSERT(mpfr_cmp(raw(b1), raw(b)) <= 0);
  RC_ASSERT(mpfr_sgn(raw(b1)) < 0);
  if (d == 0) RC_ASSERT(negative_zero(b));
  else RC_ASSERT(mpfr_sgn(raw(b)) < 0);
}

// ======================================================================================================
// KerpleOracleScore
// ======================================================================================================

TEST(KerpleOracleScore, LiteralValues) {
  const std::vector<double> q = {1.0, 2.0}, k = {3.0, 4.0};
  // power p = 2, a = 0.5; Lq = Lk = 4, i = 3, j = 0: d = 3, bias -4.5; 0.5 * (3 + 8) = 5.5
  const KerpleOracle o = one_head(KerpleKernel::power, KerpleRegime::exact, 2.0, 0.5);
  EXPECT_TRUE(holds(o.score(0, 3, 0, 4, 4, q, k, 0.5), 1.0));
  EXPECT_TRUE(holds(o.score(0, 1, 3, 4, 4, q, k, 0.5), 5.5));  // above the diagonal: bias -0
  EXPECT_TRUE(holds(o.score(0, 3, 0, 4, 4, q, k, 0.0), -4.5));
  // the megatron oracle's score uses the exact bias too
  const KerpleOracle om = one_head(KerpleKernel::log, KerpleRegime::megatron, 1.0, 1.0, 24);
  const KerpleOracle oe = one_head(KerpleKernel::log, KerpleRegime::exact, 1.0, 1.0, 24);
  EXPECT_TRUE(same(om.score(0, 1, 0, 2, 2, q, k, 0.5), oe.score(0, 1, 0, 2, 2, q, k, 0.5)));
  // One rounding, not two, at 24 bits: dot = 2^30 + 3 2^6 is 1.5 ulp (ulp = 2^7) above 2^30, a tie that goes to
  // 2^30 + 2^8; with the bias -0.5 (power p = 1, a = 0.5, d = 1) the sum is below the tie: 2^30 + 2^7.
  const std::vector<double> big = {0x1p30 + 192.0}, one = {1.0};
  const KerpleOracle o24 = one_head(KerpleKernel::power, KerpleRegime::exact, 1.0, 0.5, 24);
  EXPECT_TRUE(holds(o24.score(0, 1, 0, 2, 2, big, one, 1.0), 0x1p30 + 128.0));
  EXPECT_TRUE(holds(o24.score(0, 0, 0, 2, 2, big, one, 1.0), 0x1p30 + 256.0));  // d = 0: the tie, to even
  // an irrational bias: log p = a = 1, d = 1: 0.25 - ln 2, at 24, 53 and 256 bits
  const std::vector<double> half = {0.5};
  for (unsigned bits : {24u, 53u, 256u}) {
    const KerpleOracle ol = one_head(KerpleKernel::log, KerpleRegime::exact, 1.0, 1.0, bits);
    Real wide = make_real(2000);
    mpfr_const_log2(raw(wide), MPFR_RNDN);
    mpfr_d_sub(raw(wide), 0.25, raw(wide), MPFR_RNDN);
    EXPECT_TRUE(same(ol.score(0, 1, 0, 2, 2, half, half, 1.0), with_bits(wide, bits))) << bits;
  }
}

// Correctly rounded against a 4P Boost/MPFR evaluation, including cancellation: q = -(the bias at `bits` as a sum
// of up to three doubles), k = 1, where the result is down to ~2^-159 of the terms and the Ziv loop must go on.
RC_GTEST_PROP(KerpleOracleScore, CorrectlyRoundedScore, ()) {
  const KerpleKernel kernel = *genKernel();
  const KerpleRegime regime = *genRegime();
  const double bp = *genWeight(), ba = *genWeight();
  const unsigned bits = *rc::gen::element(24u, 53u, 100u, 256u);
  const KerpleOracle o = one_head(kernel, regime, bp, ba, bits);
  const std::size_t lk = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(1, 40),
                                         rc::gen::inRange<std::size_t>(1, std::size_t(kMaxD) + 1));
  const std::size_t lq = *rc::gen::element<std::size_t>(1, lk, *rc::gen::inRange<std::size_t>(1, lk + 1));
  const std::size_t i = *rc::gen::inRange<std::size_t>(0, lq), j = *rc::gen::inRange<std::size_t>(0, lk);
  const std::int64_t d = kerple_distance(i, j, lq, lk);
  const ScoreOperands c = score_operands_gen({1.0, 0.125, 0.0, -2.0}, o.exact_bias_at(0, d));
  const unsigned wide = 4 * bits + 400;
  const Real got = o.score(0, i, j, lq, lk, c.q, c.k, c.scale);
  Real want = exact_scaled_dot(c, wide + 4000);
  mpfr_add(raw(want), raw(want), raw(boost_exact(kernel, bp, ba, d, wide, wide)), MPFR_RNDN);
  RC_LOG() << posenc::to_string(kernel) << " p=" << bp << " a=" << ba << " d=" << d << " got " << show(got)
           << " want " << show(want) << "\n";
  RC_ASSERT(same(got, with_bits(want, bits)));
}

// ======================================================================================================
// KerpleOracleErrors: every bad argument names its parameter
// ======================================================================================================

TEST(KerpleOracleErrors, EveryBadArgumentNamesItsParameter) {
  const KerpleSpec s = make_spec(2);
  const KerpleWeights w{{1.0, 0.5}, {0.5, 0.25}};
  const KerpleOracle o(s, w);
  const std::vector<double> q = {1.0, 2.0}, k = {3.0, 4.0};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();

  KerpleSpec bad = s;
  bad.heads = 0;
  EXPECT_EQ(param_of([&] { KerpleOracle x(bad, KerpleWeights{}); }), "heads");
  bad.heads = posenc::kKerpleMaxHeads + 1;
  EXPECT_EQ(param_of([&] { KerpleOracle x(bad, w); }), "heads");
  bad = s;
  bad.kernel = static_cast<KerpleKernel>(7);
  EXPECT_EQ(param_of([&] { KerpleOracle x(bad, w); }), "kernel");
  bad = s;
  bad.regime = static_cast<KerpleRegime>(7);
  EXPECT_EQ(param_of([&] { KerpleOracle x(bad, w); }), "regime");

  EXPECT_EQ(param_of([&] { KerpleOracle x(s, KerpleWeights{{1.0}, {0.5, 0.25}}); }), "bias_p");
  EXPECT_EQ(param_of([&] { KerpleOracle x(s, KerpleWeights{{1.0, 0.5}, {0.5}}); }), "bias_a");
  EXPECT_EQ(param_of([&] { KerpleOracle x(s, KerpleWeights{{1.0, nan}, {0.5, 0.25}}); }), "bias_p");
  EXPECT_EQ(param_of([&] { KerpleOracle x(s, KerpleWeights{{1.0, 0.5}, {inf, 0.25}}); }), "bias_a");
  EXPECT_EQ(param_of([&] { KerpleOracle x(s, KerpleWeights{{1.0, -1.5e6}, {0.5, 0.25}}); }), "bias_p");
  EXPECT_EQ(param_of([&] { KerpleOracle x(s, KerpleWeights{{1.0, -1e6}, {0.5, 1e6}}); }), "");

  EXPECT_EQ(param_of([&] { KerpleOracle x(s, w, 23); }), "bits");
  EXPECT_EQ(param_of([&] { KerpleOracle x(s, w, kMaxBits + 1); }), "bits");
  EXPECT_EQ(param_of([&] { KerpleOracle x(s, w, 0); }), "bits");

  EXPECT_EQ(param_of([&] { o.p(2); }), "h");
  EXPECT_EQ(param_of([&] { o.a(2); }), "h");
  EXPECT_EQ(param_of([&] { o.bias_at(2, 0); }), "h");
  EXPECT_EQ(param_of([&] { o.exact_bias_at(99, 1); }), "h");
  EXPECT_EQ(param_of([&] { o.bias(2, 0, 0, 1, 1); }), "h");
  EXPECT_EQ(param_of([&] { o.exact_bias(2, 0, 0, 1, 1); }), "h");
  EXPECT_EQ(param_of([&] { o.score(2, 0, 0, 1, 1, q, k, 1.0); }), "h");

  EXPECT_EQ(param_of([&] { o.bias_at(0, -1); }), "d");
  EXPECT_EQ(param_of([&] { o.bias_at(0, kMaxD + 1); }), "d");
  EXPECT_EQ(param_of([&] { o.exact_bias_at(0, -5); }), "d");
  EXPECT_EQ(param_of([&] { o.exact_bias_at(0, std::numeric_limits<std::int64_t>::max()); }), "d");
  EXPECT_EQ(param_of([&] { o.bias_at(0, kMaxD); }), "");

  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, std::size_t{1} << 31); }), "key_length");
  EXPECT_EQ(param_of([&] { kerple_distance(0, 0, 1, std::size_t{1} << 31); }), "key_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 0, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.exact_bias(0, 0, 0, 4, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { kerple_distance(0, 0, 4, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { kerple_distance(1, 0, 1, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.exact_bias(0, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { kerple_distance(0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 3, 2, 3, q, k, 1.0); }), "j");

  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, std::vector<double>{}, std::vector<double>{}, 1.0); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, std::vector<double>{1.0}, 1.0); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, std::vector<double>{1.0, nan}, k, 1.0); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, std::vector<double>{-inf, 1.0}, 1.0); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, k, nan); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, k, inf); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, k, 1.0); }), "");
  EXPECT_EQ(param_of([&] { kerple_distance(0, 0, 1, 1); }), "");
}

}  // namespace oracle_kerple
