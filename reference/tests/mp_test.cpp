// Self-tests of the oracles' multiprecision helpers (reference/mp.hpp): every Real has exactly the precision
// asked for, correct rounding to binary32/binary64 never goes through double (brute-force nearest float), and
// the correctly rounded IEEE steps of the emulated regimes match hardware arithmetic.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/mp.hpp"
#include "test_util.hpp"

namespace oracle_mp {  // its own namespace: the self-tests are compiled together (posenc_unity)

using namespace posenc::reference;
using namespace posenc::reference::test_util;

// ---- brute-force nearest binary32 / binary64 ------------------------------------------------------

// The value a candidate stands for when measuring distance: +-inf stands for +-2^(emax) (IEEE rounds
// as if the exponent were unbounded; the first "number" past the largest finite one is 2^128).
template <class F>
Real candidate_value(F f) {
  Real r = make_real(64);
  if (std::isinf(f)) {
    mpfr_set_ui_2exp(raw(r), 1, std::numeric_limits<F>::max_exponent, MPFR_RNDN);
    if (f < 0) mpfr_neg(raw(r), raw(r), MPFR_RNDN);
  } else {
    mpfr_set_d(raw(r), static_cast<double>(f), MPFR_RNDN);
  }
  return r;
}

template <class F>
bool even_significand(F f) {
  if constexpr (sizeof(F) == 4) return (std::bit_cast<std::uint32_t>(f) & 1u) == 0;
  else return (std::bit_cast<std::uint64_t>(f) & 1u) == 0;
}

// Nearest F to x by searching the neighbours of a truncated guess; ties to the even bit pattern.
template <class F>
F brute_nearest(const Real& x) {
  F guess = static_cast<F>(mpfr_get_d(raw(x), MPFR_RNDZ));
  for (int i = 0; i < 4; ++i) guess = std::nextafter(guess, -std::numeric_limits<F>::infinity());
  F best = guess;
  Real best_dist = make_real(64);
  mpfr_set_inf(raw(best_dist), 1);
  F c = guess;
  for (int i = 0; i < 9; ++i) {
    Real d = sub(x, candidate_value(c));
    mpfr_abs(raw(d), raw(d), MPFR_RNDN);
    const int cmp = mpfr_cmp(raw(d), raw(best_dist));
    if (cmp < 0 || (cmp == 0 && even_significand(c) && !even_significand(best))) {
      best = c;
      best_dist = d;
    }
    if (std::isinf(c) && c > 0) break;
    c = std::nextafter(c, std::numeric_limits<F>::infinity());
  }
  if (best == F(0)) best = mpfr_signbit(raw(x)) ? -F(0) : F(0);
  return best;
}

// A Real near a rounding boundary of F: the midpoint of two neighbours plus a tiny (possibly zero)
// offset, or a plain random value, across the whole exponent range including subnormals and overflow.
template <class F>
rc::Gen<Real> genHardReal() {
  using U = std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>;
  return rc::gen::exec([] {
    // rc::gen::inRange scales with the test size; resize(100) makes the bit pattern uniform
    const U bits = *rc::gen::resize(100, rc::gen::inRange<U>(0, std::numeric_limits<U>::max()));
    F f = std::bit_cast<F>(bits);
    if (!std::isfinite(f)) f = std::numeric_limits<F>::max();
    if (*rc::gen::inRange(0, 3) == 0) {
      // small exponents: near and inside the subnormal range
      const int e = *rc::gen::inRange(std::numeric_limits<F>::min_exponent - std::numeric_limits<F>::digits - 2,
                                      std::numeric_limits<F>::min_exponent + 3);
      f = std::ldexp(static_cast<F>(1) + static_cast<F>(*rc::gen::inRange(0, 1 << 20)) / F(1 << 20), e);
    }
    const F g = std::nextafter(f, std::numeric_limits<F>::infinity());
    Real x = make_real(256);
    Real gv = candidate_value(g);
    mpfr_add(raw(x), raw(candidate_value(f)), raw(gv), MPFR_RNDN);
    mpfr_div_2ui(raw(x), raw(x), 1, MPFR_RNDN);  // the exact midpoint
    const int kind = *rc::gen::inRange(0, 4);
    if (kind == 1 || kind == 2) {
      const long shift = *rc::gen::inRange(26, 200);
      const long e = mpfr_zero_p(raw(x)) ? -1200 : mpfr_get_exp(raw(x)) - shift;
      Real tiny = pow2(e);
      if (kind == 2) mpfr_neg(raw(tiny), raw(tiny), MPFR_RNDN);
      mpfr_add(raw(x), raw(x), raw(tiny), MPFR_RNDN);
    } else if (kind == 3) {
      // anywhere between f and g
      Real t = make_real(256);
      mpfr_set_ui(raw(t), *rc::gen::inRange(0, 1 << 30), MPFR_RNDN);
      mpfr_div_2ui(raw(t), raw(t), 30, MPFR_RNDN);
      Real d = sub(gv, candidate_value(f));
      mpfr_mul(raw(d), raw(d), raw(t), MPFR_RNDN);
      mpfr_add(raw(x), raw(candidate_value(f)), raw(d), MPFR_RNDN);
    }
    if (*rc::gen::arbitrary<bool>()) mpfr_neg(raw(x), raw(x), MPFR_RNDN);
    return x;
  });
}

// ======================================================================================================
// OracleMp: precision handling
// ======================================================================================================

TEST(OracleMp, RealsHaveExactlyTheRequestedPrecision) {
  for (unsigned bits : {24u, 53u, 100u, 255u, 256u, 257u, 512u, 1000u}) {
    EXPECT_EQ(bits_of(make_real(bits)), bits);
    EXPECT_EQ(bits_of(make_real(0.1, bits)), bits);
    EXPECT_EQ(bits_of(make_real(std::int64_t{-7}, bits)), bits);
    EXPECT_EQ(bits_of(with_bits(make_real(1.5, 64), bits)), bits);
    EXPECT_EQ(bits_of(pi(bits)), bits);
  }
}

TEST(OracleMp, Digits10ForBitsIsTheSmallestSufficient) {
  for (unsigned bits = 24; bits < 3000; ++bits) {
    const unsigned d = digits10_for_bits(bits);
    ASSERT_GE(boost::multiprecision::detail::digits10_2_2(d), bits);
    ASSERT_LT(boost::multiprecision::detail::digits10_2_2(d - 1), bits);
  }
}

TEST(OracleMp, PrecisionGuardSetsAndRestoresTheDefault) {
  const unsigned before = Real::default_precision();
  {
    PrecisionGuard g(512);
    Real fresh;
    EXPECT_GE(bits_of(fresh), 512u);
    const Real a = make_real(1.0, 512), b = make_real(3.0, 512);
    const Real q = a / b;  // a Boost expression under the guard
    EXPECT_GE(bits_of(q), 512u);
    Real third = make_real(1024);
    mpfr_ui_div(raw(third), 1, raw(b), MPFR_RNDN);
    EXPECT_TRUE(abs_below_pow2(sub(q, third), -510)) << show(q);
  }
  EXPECT_EQ(Real::default_precision(), before);
}

TEST(OracleMp, TextForms) {
  EXPECT_EQ(to_decimal(pi(256), 40), "3.141592653589793238462643383279502884197e+00");
  EXPECT_EQ(to_hexfloat(make_real(0.375, 64)), "0x1.8p-2");
  EXPECT_EQ(to_hexfloat(make_real(-1.0, 64)), "-0x1p+0");
  EXPECT_EQ(to_hexfloat(make_real(0x1.fffffep+127, 64)), "0x1.fffffep+127");
  EXPECT_EQ(to_hexfloat(make_real(0.0, 64)), "0x0p+0");
  EXPECT_EQ(to_decimal(make_real(-0.5, 64), 3), "-5.00e-01");
  EXPECT_TRUE(same(parse_real("0x1.8p-2", 64), make_real(0.375, 64)));
  EXPECT_TRUE(same(parse_real("0.375", 64), make_real(0.375, 64)));
  EXPECT_THROW(parse_real("zebra", 64), posenc::Error);
}

// ======================================================================================================
// OracleRounding: round_to_float / round_to_double / rn_* are correctly rounded
// ======================================================================================================

Real r(const std::string& hex) { return parse_real(hex, 512); }

TEST(OracleRounding, FloatTiesGoToEven) {
  EXPECT_EQ(round_to_float(r("0x1.000001p0")), 1.0f);                  // 1 + 2^-24: tie, even is 1
  EXPECT_EQ(round_to_float(r("0x1.000003p0")), 0x1.000004p0f);         // 1 + 3*2^-24: tie, even is 1 + 2^-22
  EXPECT_EQ(round_to_float(r("0x1.0000010000000000000000000001p0")), 0x1.000002p0f);  // just above
  EXPECT_EQ(round_to_float(r("0x1.000000ffffffffffffffffffffffp0")), 1.0f);          // just below
  EXPECT_EQ(round_to_float(r("-0x1.000001p0")), -1.0f);
  EXPECT_EQ(round_to_float(r("-0x1.000003p0")), -0x1.000004p0f);
  EXPECT_EQ(round_to_float(r("0x1.000001p100")), 0x1p100f);            // large exponent
  EXPECT_EQ(round_to_float(r("0x1.000003p-100")), 0x1.000004p-100f);   // small exponent
  EXPECT_EQ(round_to_float(r("0x1.ffffffp127")), std::numeric_limits<float>::infinity());    // max + half ulp: tie -> 2^128
  EXPECT_EQ(round_to_float(r("0x1.fffffeffffffp127")), std::numeric_limits<float>::max());  // just below the tie
  EXPECT_EQ(round_to_float(r("-0x1.ffffff00000001p127")), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(round_to_float(r("0x1p-150")), 0.0f);                      // half the smallest subnormal: tie -> 0
  EXPECT_TRUE(std::signbit(round_to_float(r("-0x1p-150"))));
  EXPECT_EQ(round_to_float(r("0x1.0000000001p-150")), 0x1p-149f);
  EXPECT_EQ(round_to_float(r("0x1.8p-149")), 0x1p-148f);               // 1.5 * 2^-149: tie -> even (2)
  EXPECT_EQ(round_to_float(r("0x1.4p-148")), 0x1p-148f);               // 2.5 * 2^-149: tie -> even (2)
  EXPECT_EQ(round_to_float(r("0x1.fffffep-127")), 0x1p-126f);          // between largest subnormal and 2^-126
}

TEST(OracleRounding, DoubleTiesGoToEven) {
  EXPECT_EQ(round_to_double(r("0x1.00000000000008p0")), 1.0);           // 1 + 2^-53
  EXPECT_EQ(round_to_double(r("0x1.00000000000018p0")), 0x1.0000000000002p0);  // 1 + 3*2^-53
  EXPECT_EQ(round_to_double(r("0x1.000000000000080000000001p0")), 0x1.0000000000001p0);
  EXPECT_EQ(round_to_double(r("-0x1.00000000000008p-900")), -0x1p-900);
  EXPECT_EQ(round_to_double(r("0x1p-1075")), 0.0);
  EXPECT_EQ(round_to_double(r("0x1.8p-1074")), 0x1p-1073);
  EXPECT_EQ(round_to_double(r("0x1.fffffffffffff8p1023")), std::numeric_limits<double>::infinity());
  EXPECT_EQ(round_to_double(r("0x1.fffffffffffff7ffp1023")), std::numeric_limits<double>::max());
}

// Going through double first would round 1 + 2^-24 + 2^-60 to the tie 1 + 2^-24 and then to 1.
TEST(OracleRounding, NoDoubleRoundingThroughDouble) {
  const Real x = r("0x1.000001000000001p0");  // 1 + 2^-24 + 2^-60
  const float via_double = static_cast<float>(mpfr_get_d(raw(x), MPFR_RNDN));
  EXPECT_EQ(via_double, 1.0f) << "the trap must be a real trap";
  EXPECT_EQ(round_to_float(x), 0x1.000002p0f);
  EXPECT_EQ(round_to_float(round_to_float_precision(x)), 0x1.000002p0f);
  EXPECT_TRUE(same(rn(Binary::f32, x), make_real(0x1.000002p0, 64)));
  const float boost_cast = static_cast<float>(x);
  RecordProperty("boost_static_cast_float_double_rounds", boost_cast != 0x1.000002p0f ? "yes" : "no");
  std::printf("note: static_cast<float>(mpfr_float) of 1+2^-24+2^-60 gives %a (%s)\n", boost_cast,
              boost_cast == 0x1.000002p0f ? "correct" : "double rounding");
}

RC_GTEST_PROP(OracleRounding, RoundToFloatIsTheNearestFloat, ()) {
  const Real x = *genHardReal<float>();
  const float want = brute_nearest<float>(x);
  const float got = round_to_float(x);
  RC_LOG() << "x = " << show(x) << " want " << std::hexfloat << want << " got " << got << "\n";
  RC_ASSERT(std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want));
  // the Real-valued roundings agree (two independent MPFR paths: get_flt and subnormalize)
  RC_ASSERT(round_to_float(round_to_float_precision(x)) == want);
  const Real viaop = rn(Binary::f32, x);
  RC_ASSERT(holds(viaop, want));
  const float via_double = static_cast<float>(mpfr_get_d(raw(x), MPFR_RNDN));
  RC_CLASSIFY(via_double != want, "double rounding would be wrong");
  RC_CLASSIFY(std::fpclassify(want) == FP_SUBNORMAL, "subnormal");
}

RC_GTEST_PROP(OracleRounding, RoundToDoubleIsTheNearestDouble, ()) {
  const Real x = *genHardReal<double>();
  const double want = brute_nearest<double>(x);
  const double got = round_to_double(x);
  RC_LOG() << "x = " << show(x) << " want " << std::hexfloat << want << " got " << got << "\n";
  RC_ASSERT(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want));
  RC_ASSERT(round_to_double(round_to_double_precision(x)) == want);
  const Real viaop = rn(Binary::f64, x);
  RC_ASSERT(holds(viaop, want));
  RC_CLASSIFY(std::fpclassify(want) == FP_SUBNORMAL, "subnormal");
}

// IEEE hardware multiplication and division are correctly rounded, subnormals included: rn_mul/rn_div
// must reproduce them bit for bit (checks the exponent-range + subnormalize path).
template <class F>
F random_finite(bool small) {
  using U = std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>;
  F f = std::bit_cast<F>(*rc::gen::resize(100, rc::gen::inRange<U>(0, std::numeric_limits<U>::max())));
  if (!std::isfinite(f) || f == 0) f = F(1.5);
  int unused_exponent = 0;
  if (small) f = std::ldexp(std::frexp(f, &unused_exponent), *rc::gen::inRange(std::numeric_limits<F>::min_exponent - 30,
                                                                      std::numeric_limits<F>::min_exponent + 30));
  return f;
}

RC_GTEST_PROP(OracleRounding, RnOpsMatchHardwareFloat, ()) {
  const float a = random_finite<float>(*rc::gen::arbitrary<bool>());
  const float b = random_finite<float>(false);
  // volatile: keep the compiler from evaluating in another format
  volatile float prod = a * b, quot = a / b;
  const Real m = rn_mul(Binary::f32, make_real(double(a), 64), make_real(double(b), 64));
  const Real q = rn_div(Binary::f32, make_real(double(a), 64), make_real(double(b), 64));
  RC_LOG() << std::hexfloat << a << " op " << b << "\n";
  RC_ASSERT(holds(m, prod));
  RC_ASSERT(holds(q, quot));
  RC_CLASSIFY(std::fpclassify(prod) == FP_SUBNORMAL || std::fpclassify(quot) == FP_SUBNORMAL, "subnormal result");
}

RC_GTEST_PROP(OracleRounding, RnOpsMatchHardwareDouble, ()) {
  const double a = random_finite<double>(*rc::gen::arbitrary<bool>());
  const double b = random_finite<double>(false);
  volatile double prod = a * b, quot = a / b;
  const Real m = rn_mul(Binary::f64, make_real(a, 64), make_real(b, 64));
  const Real q = rn_div(Binary::f64, make_real(a, 64), make_real(b, 64));
  RC_LOG() << std::hexfloat << a << " op " << b << "\n";
  RC_ASSERT(holds(m, prod));
  RC_ASSERT(holds(q, quot));
}

}  // namespace oracle_mp
