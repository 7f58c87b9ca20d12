// Self-tests of the RoPE oracle. The oracle is the ground truth of the rope property suite, so each test here is
// built to fail if the oracle is wrong: a silently low precision (P vs 2P, literal values derived independently
// with Python's decimal module), a misplaced channel or sign (unit vectors, the layout permutation, closed-form
// identities), a wrong or missing float32 step (plain C float arithmetic, literal float32 values), a misread
// context-extension formula (hand-computed correction ranges and band counts, the identities of CONVENTIONS.md
// §2.11, and HF 5.17's own inv_freq and attention factors: properties/heldout/data/hf/rope_scaling.json).
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/mp.hpp"
#include "posenc/reference/rope.hpp"
#include "posenc/rope_spec.hpp"
#include "test_util.hpp"

namespace oracle_rope {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::Layout;
using posenc::RopeMrope;
using posenc::RopeRegime;
using posenc::RopeScaling;
using posenc::RopeSpec;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

constexpr std::int64_t kMaxP = std::int64_t{1} << 40;

RopeSpec make_spec(Layout layout, RopeRegime regime, std::size_t head_dim, std::size_t rotary_dim, double base) {
  RopeSpec s;
  s.layout = layout;
  s.regime = regime;
  s.head_dim = head_dim;
  s.rotary_dim = rotary_dim;
  s.base = base;
  posenc::validate(s);
  return s;
}

// ---- generators -------------------------------------------------------------------------------------

rc::Gen<RopeSpec> genSpec(bool emulated_allowed, std::size_t max_head_dim = 64) {
  return rc::gen::exec([=] {
    RopeSpec s;
    s.layout = *rc::gen::element(Layout::interleaved, Layout::halves);
    const int dim_kind = *rc::gen::inRange(0, 3);
    s.head_dim = dim_kind == 0   ? *rc::gen::inRange<std::size_t>(2, 17)
                 : dim_kind == 1 ? *rc::gen::element<std::size_t>(24, 64, 96, 128)
                                 : *rc::gen::inRange<std::size_t>(2, 65);
    s.head_dim = std::min(s.head_dim, max_head_dim);
    const std::size_t full = s.head_dim - s.head_dim % 2;
    s.rotary_dim = *rc::gen::arbitrary<bool>() ? full : 2 * *rc::gen::inRange<std::size_t>(1, full / 2 + 1);
    const int base_kind = *rc::gen::inRange(0, 4);
    s.base = base_kind == 0   ? 10000.0
             : base_kind == 1 ? *rc::gen::element(2.0, 1.0001, 500000.0, 1.0e6, 1.0e12)
                              : 1.0 + *rc::gen::inRange(1, 1000000) / 7.0;
    if (emulated_allowed) s.regime = *rc::gen::element(RopeRegime::exact, RopeRegime::hf, RopeRegime::ggml);
    posenc::validate(s);
    return s;
  });
}

rc::Gen<RopeSpec> genEmulatedSpec(std::size_t max_head_dim = 64) {
  return rc::gen::exec([=] {
    RopeSpec s = *genSpec(false, max_head_dim);
    s.regime = *rc::gen::element(RopeRegime::hf, RopeRegime::ggml);
    return s;
  });
}

// Positions that stress argument reduction and float conversions, anywhere in |p| <= 2^40.
rc::Gen<std::int64_t> genPosition() {
  return rc::gen::exec([] {
    const int kind = *rc::gen::inRange(0, 4);
    std::int64_t p = kind == 0   ? *rc::gen::inRange<std::int64_t>(0, 1000)
                     : kind == 1 ? *rc::gen::element<std::int64_t>(0, 1, 2, 4095, 48039, 100000, 131071,
                                                                   std::int64_t{1} << 20, (std::int64_t{1} << 24) + 1,
                                                                   (std::int64_t{1} << 31) - 1, kMaxP)
                                 : *rc::gen::inRange<std::int64_t>(0, kMaxP + 1);
    return *rc::gen::arbitrary<bool>() ? -p : p;
  });
}

// One channel value: zeros, small integers, dyadic fractions of any sign and moderate exponent, and (unless
// float32 is asked for) doubles that are not float32 numbers.
rc::Gen<double> genValue(bool float32) {
  return rc::gen::exec([=] {
    const int kind = *rc::gen::inRange(0, 5);
    double v = 0.0;
    switch (kind) {
      case 0: v = 0.0; break;
      case 1: v = *rc::gen::inRange(-8, 9); break;
      case 2: v = *rc::gen::inRange(-(1 << 24), 1 << 24) / 16777216.0; break;
      case 3: v = std::ldexp(double(*rc::gen::inRange(-(1 << 30), 1 << 30)), *rc::gen::inRange(-60, 20)); break;
      default: v = *rc::gen::element(0.1, -1.0 / 3.0, 3.141592653589793, -1.0e-7, 65504.0); break;
    }
    return float32 ? double(static_cast<float>(v)) : v;
  });
}

rc::Gen<std::vector<double>> genVector(const RopeSpec& s, bool float32) {
  return rc::gen::container<std::vector<double>>(s.head_dim, genValue(float32));
}

// ---- helpers ----------------------------------------------------------------------------------------

// |a - b| <= scale * 2^e
bool within(const Real& a, const Real& b, double scale, long e) {
  Real d = sub(a, b);
  mpfr_abs(raw(d), raw(d), MPFR_RNDN);
  Real tol = make_real(scale, 64);
  mpfr_mul_2si(raw(tol), raw(tol), e, MPFR_RNDU);
  return mpfr_cmp(raw(d), raw(tol)) <= 0;
}

// Pair weights of the scaled error bounds (rope.hpp): |x_i| + |x_j| and
// S = sum over pairs (|q_i|+|q_j|)(|k_i|+|k_j|) + sum over passed channels |q_c k_c|.
double pair_weight(const RopeSpec& s, const std::vector<double>& x, std::size_t k) {
  const auto ch = rope_pair_channels(s, k);
  return std::fabs(x[ch.first]) + std::fabs(x[ch.second]);
}
double score_weight(const RopeSpec& s, const std::vector<double>& q, const std::vector<double>& k) {
  double sum = 0;
  for (std::size_t i = 0; i < s.rotary_dim / 2; ++i) sum += pair_weight(s, q, i) * pair_weight(s, k, i);
  for (std::size_t c = s.rotary_dim; c < s.head_dim; ++c) sum += std::fabs(q[c] * k[c]);
  return std::max(sum, 0x1p-1000);
}

// Apply the rotation (c, s) to one pair of Reals at `bits`: (a c - b s, b c + a s).
void rotate_reals(Real& a, Real& b, const Real& c, const Real& s, unsigned bits) {
  Real na = make_real(bits), nb = make_real(bits);
  mpfr_fmms(raw(na), raw(a), raw(c), raw(b), raw(s), MPFR_RNDN);
  mpfr_fmma(raw(nb), raw(b), raw(c), raw(a), raw(s), MPFR_RNDN);
  a = std::move(na);
  b = std::move(nb);
}

bool is_float32_value(const Real& x) { return same(x, round_to_float_precision(x)); }

Real neg_of(const Real& x) {
  Real r = make_real(bits_of(x));
  mpfr_neg(raw(r), raw(x), MPFR_RNDN);
  return r;
}


// ======================================================================================================
// RopeOracleMp: precision bookkeeping
// ======================================================================================================

TEST(RopeOracleMp, ValuesHaveExactlyTheRequestedPrecision) {
  const std::vector<double> x = {1.0, -2.0, 0.5, 0.25, 3.0, 7.0};
  for (RopeRegime regime : {RopeRegime::exact, RopeRegime::hf, RopeRegime::ggml}) {
    const RopeSpec s = make_spec(Layout::halves, regime, 6, 4, 10000.0);
    for (unsigned bits : {24u, 53u, 100u, 255u, 256u, 257u, 512u}) {
      const RopeOracle o(s, bits);
      EXPECT_EQ(bits_of(rope_theta(s, 1, bits)), bits);
      EXPECT_EQ(bits_of(o.cos(123, 1)), bits);
      EXPECT_EQ(bits_of(o.sin(123, 1)), bits);
      EXPECT_EQ(bits_of(o.exact_cos(123, 1)), bits);
      EXPECT_EQ(bits_of(o.score(5, x, -7, x)), bits);
      EXPECT_EQ(bits_of(o.rotate_channel(9, x, 1)), bits);
      for (const Real& v : o.rotate(77, x)) EXPECT_EQ(bits_of(v), bits);
      EXPECT_EQ(bits_of(o.angle(99, 1)), regime == RopeRegime::exact ? bits + kRopeWorkingMargin : bits);
      EXPECT_EQ(bits_of(rope_hf_inv_freq(s, 1, bits)), bits);
      EXPECT_EQ(bits_of(rope_ggml_theta_scale(s, bits)), bits);
    }
  }
}

TEST(RopeOracleMp, OracleDoesNotDependOnBoostDefaultPrecision) {
  const RopeSpec s = make_spec(Layout::interleaved, RopeRegime::exact, 64, 64, 10000.0);
  const std::vector<double> x(64, 0.75);
  expect_independent_of_default_precision([&] {
    const RopeOracle o(s);
    return std::vector<Real>{o.cos(987654321, 5), o.rotate(987654321, x)[10], o.score(3, x, 987654321, x)};
  });
}

// The oracle is used from several threads at once by the property suite: MPFR's exponent range (changed by the
// float32 steps) and constant caches are per thread, and nothing reads Boost's default precision.
TEST(RopeOracleMp, ConcurrentCallsGiveTheSerialResults) {
  std::vector<RopeOracle> oracles;
  for (RopeRegime regime : {RopeRegime::exact, RopeRegime::hf, RopeRegime::ggml})
    oracles.emplace_back(make_spec(Layout::interleaved, regime, 16, 12, 10000.0));
  const std::vector<double> x = {1.0, -0.5, 0.25, 3.0, -7.0, 0.125, 2.0, 1.5, -1.0, 0.75, 5.0, -2.0, 9.0, 0.5, 1.0, 4.0};
  const std::vector<std::int64_t> positions = {0, 1, 48039, 131071, -99999, std::int64_t{1} << 30, kMaxP};
  expect_concurrent_calls_match_serial([&] {
    std::vector<Real> out;
    for (const RopeOracle& o : oracles)
      for (std::int64_t p : positions) {
        for (Real& y : o.rotate(p, x)) out.push_back(std::move(y));
        out.push_back(o.score(p, x, -p, x));
      }
    return out;
  });
}

// ======================================================================================================
// RopeOracle: hand-checkable values and identities of the exact regime
// ======================================================================================================

RC_GTEST_PROP(RopeOracle, PositionZeroIsTheIdentity, ()) {
  const RopeSpec s = *genSpec(true);
  const RopeOracle o(s);
  const auto x = *genVector(s, s.regime != RopeRegime::exact);
  const auto y = o.rotate(0, x);
  for (std::size_t c = 0; c < s.head_dim; ++c) RC_ASSERT(holds(y[c], x[c]));
  const auto yi = o.rotate(0, x, true);
  for (std::size_t c = 0; c < s.head_dim; ++c) RC_ASSERT(holds(yi[c], x[c]));
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  RC_ASSERT(mpfr_cmp_ui(raw(o.cos(0, k)), 1) == 0);
  RC_ASSERT(mpfr_zero_p(raw(o.sin(0, k))) != 0);
  RC_ASSERT(mpfr_zero_p(raw(o.angle(0, k))) != 0);
}

// theta_0 = 1, so pair 0 turns by p radians: cos(p), sin(p) from Python's decimal module (Machin pi, Taylor
// series at 200 digits), printed to 61 digits (~200 bits).
TEST(RopeOracle, PairZeroTurnsByPRadians) {
  struct Known {
    std::int64_t p;
    const char* cos;
    const char* sin;
  };
  const Known known[] = {
      {1, "5.403023058681397174009366074429766037323104206179222276700973e-1",
       "8.414709848078965066525023216302989996225630607983710656727517e-1"},
      {2, "-4.161468365471423869975682295007621897660007710755448907551500e-1",
       "9.092974268256816953960198659117448427022549714478902683789730e-1"},
      {48039, "-6.163210234868163521172549907729416329569318789871626462925142e-1",
       "-7.874950133227277563463040056514361323203442604906288074675803e-1"},
      {100000, "-9.993608074382124518911354141448022032353865874597274764410411e-1",
       "3.574879797201650931647050069580882900904569257810889685461674e-2"},
      {131071, "-8.179834993879490807134406475367325007823891530418661588586815e-1",
       "-5.752416837547893711382536595391953918096512271236601408895533e-1"},
      {-131071, "-8.179834993879490807134406475367325007823891530418661588586815e-1",
       "5.752416837547893711382536595391953918096512271236601408895533e-1"},
      {kMaxP, "-9.140040719915570022997218090496905660904052152116573326861168e-1",
       "-4.057050115328287198206483025752853128929811481142627090939607e-1"},
      {-kMaxP, "-9.140040719915570022997218090496905660904052152116573326861168e-1",
       "4.057050115328287198206483025752853128929811481142627090939607e-1"},
  };
  for (double base : {10000.0, 2.0, 1.0e12}) {
    for (Layout layout : {Layout::interleaved, Layout::halves}) {
      const RopeSpec s = make_spec(layout, RopeRegime::exact, 8, 8, base);
      EXPECT_TRUE(mpfr_cmp_ui(raw(rope_theta(s, 0)), 1) == 0) << base;
      const RopeOracle o(s);
      for (const Known& kn : known) {
        const Real c = o.cos(kn.p, 0), sn = o.sin(kn.p, 0);
        EXPECT_TRUE(within(c, parse_real(kn.cos, 400), 1.0, -195)) << kn.p << " cos " << show(c);
        EXPECT_TRUE(within(sn, parse_real(kn.sin, 400), 1.0, -195)) << kn.p << " sin " << show(sn);
      }
    }
  }
}

TEST(RopeOracle, KnownFrequencies) {
  // 10000^(-2/128) (Python decimal: exp(ln(10000) * -1/64) at 200 digits)
  const RopeSpec llama = make_spec(Layout::halves, RopeRegime::exact, 128, 128, 10000.0);
  EXPECT_TRUE(within(rope_theta(llama, 1), parse_real("8.659643233600653523531691834202299819398126066395892551157714e-1", 400),
                     1.0, -196));
  // 2k/r = 1/2: theta = 1/sqrt(base) = 1/100
  EXPECT_TRUE(within(rope_theta(llama, 32), parse_real("0.01", 1024), 1.0, -256 - 6));
  // base 16, r 4, k 1: 16^(-1/2) = 1/4 exactly (the exponent is dyadic, so pow is correctly rounded)
  EXPECT_TRUE(holds(rope_theta(make_spec(Layout::interleaved, RopeRegime::exact, 4, 4, 16.0), 1), 0.25));
  // base 8, r 6, k 1: 8^(-1/3) = 1/2 (the exponent -1/3 is rounded, so within the bound, not exactly)
  EXPECT_TRUE(within(rope_theta(make_spec(Layout::interleaved, RopeRegime::exact, 6, 6, 8.0), 1), pow2(-1), 1.0, -256));
  // the last frequency of r = 2 is theta_0 = 1 whatever the base; of r = 4 it is base^(-1/2)
  for (double base : {1.0001, 10000.0, 12345.678, 1.0e12}) {
    Real want = make_real(1024);
    mpfr_rec_sqrt(raw(want), raw(make_real(base, 64)), MPFR_RNDN);
    const Real got = rope_theta(make_spec(Layout::halves, RopeRegime::exact, 4, 4, base), 1);
    EXPECT_TRUE(abs_below_pow2(sub(got, want), mpfr_get_exp(raw(want)) - 255)) << base << " " << show(got);
  }
}

// theta_k = base^(-2k/r), transcribed again with Boost's exp/log (another MPFR path than the oracle's pow).
RC_GTEST_PROP(RopeOracle, FrequencyFollowsTheDefinition, ()) {
  const RopeSpec s = *genSpec(false, 128);
  const std::size_t h = s.rotary_dim / 2;
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, h);
  PrecisionGuard guard(400);
  const Real base = make_real(s.base, 400);
  const Real e = Real(2 * k) / Real(s.rotary_dim);
  const Real want = boost::multiprecision::exp(-e * boost::multiprecision::log(base));
  const Real got = rope_theta(s, k);
  RC_LOG() << posenc::describe(s) << " k=" << k << " got " << show(got) << " want " << show(want) << "\n";
  RC_ASSERT(abs_below_pow2(sub(got, want), mpfr_get_exp(raw(want)) - 250));
  if (k + 1 < h) RC_ASSERT(mpfr_cmp(raw(rope_theta(s, k + 1)), raw(got)) < 0);  // strictly decreasing
}

TEST(RopeOracle, PairChannelsFollowTheLayout) {
  const RopeSpec inter = make_spec(Layout::interleaved, RopeRegime::exact, 10, 8, 10000.0);
  const RopeSpec halves = make_spec(Layout::halves, RopeRegime::exact, 10, 8, 10000.0);
  EXPECT_EQ(rope_pair_channels(inter, 2).first, 4u);
  EXPECT_EQ(rope_pair_channels(inter, 2).second, 5u);
  EXPECT_EQ(rope_pair_channels(halves, 2).first, 2u);
  EXPECT_EQ(rope_pair_channels(halves, 2).second, 6u);
  EXPECT_EQ(rope_pair_channels(halves, 3).second, 7u);
  EXPECT_FALSE(rope_pair_of_channel(inter, 8).has_value());
  EXPECT_FALSE(rope_pair_of_channel(halves, 9).has_value());
  for (const RopeSpec& s : {inter, halves}) {
    for (std::size_t k = 0; k < 4; ++k) {
      const auto ch = rope_pair_channels(s, k);
      EXPECT_EQ(*rope_pair_of_channel(s, ch.first), k);
      EXPECT_EQ(*rope_pair_of_channel(s, ch.second), k);
      // the spec header's own helpers agree
      EXPECT_EQ(ch.first, posenc::first_channel(s, k));
      EXPECT_EQ(ch.second, posenc::second_channel(s, k));
    }
  }
}

// A unit vector in the first (second) channel of pair k comes out as (cos, sin) ((-sin, cos)) of that pair,
// everything else zero: the sign convention y_i = x_i c - x_j s, y_j = x_j c + x_i s and the channel map (written
// out here from rope_spec.hpp, not taken from the oracle).
RC_GTEST_PROP(RopeOracle, UnitVectorsGiveTheCosSinOfTheirPair, ()) {
  const RopeSpec s = *genSpec(true);
  const RopeOracle o(s);
  const std::int64_t p = *genPosition();
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  const RopePairChannels ch = s.layout == Layout::interleaved ? RopePairChannels{2 * k, 2 * k + 1}
                                                              : RopePairChannels{k, k + s.rotary_dim / 2};
  const Real c = o.cos(p, k), sn = o.sin(p, k);
  const bool emulated = s.regime != RopeRegime::exact;
  for (bool second : {false, true}) {
    std::vector<double> x(s.head_dim, 0.0);
    x[second ? ch.second : ch.first] = 1.0;
    const auto y = o.rotate(p, x);
    const Real want_i = second ? neg_of(sn) : c;
    const Real& want_j = second ? c : sn;
    // emulated: RN32(1*c - 0*s) = c exactly; exact: c rounded from W bits vs cos rounded once (double rounding
    // is possible, so compare at 2^-(bits+100))
    if (emulated) {
      RC_ASSERT(same(y[ch.first], want_i));
      RC_ASSERT(same(y[ch.second], want_j));
    } else {
      RC_ASSERT(within(y[ch.first], want_i, 1.0, -356));
      RC_ASSERT(within(y[ch.second], want_j, 1.0, -356));
    }
    for (std::size_t c2 = 0; c2 < s.head_dim; ++c2)
      if (c2 != ch.first && c2 != ch.second) RC_ASSERT(mpfr_zero_p(raw(y[c2])) != 0);
  }
}

RC_GTEST_PROP(RopeOracle, CosSquaredPlusSinSquaredIsOne, ()) {
  const RopeSpec s = *genSpec(false);
  const RopeOracle o(s);
  const std::int64_t p = *genPosition();
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  const Real c = o.cos(p, k), sn = o.sin(p, k);
  Real sum = make_real(1024);
  mpfr_sqr(raw(sum), raw(c), MPFR_RNDN);
  mpfr_fma(raw(sum), raw(sn), raw(sn), raw(sum), MPFR_RNDN);
  RC_ASSERT(within(sum, make_real(1, 64), 1.0, -254));
}

RC_GTEST_PROP(RopeOracle, RotationPreservesTheNorm, ()) {
  const RopeSpec s = *genSpec(false);
  const RopeOracle o(s);
  const std::int64_t p = *genPosition();
  const auto x = *genVector(s, false);
  const auto y = o.rotate(p, x, *rc::gen::arbitrary<bool>());
  Real nx = make_real(2400), ny = make_real(1200);
  double scale = 0x1p-1000;
  for (std::size_t c = 0; c < s.head_dim; ++c) {
    mpfr_fma(raw(nx), raw(make_real(x[c], 64)), raw(make_real(x[c], 64)), raw(nx), MPFR_RNDN);
    mpfr_fma(raw(ny), raw(y[c]), raw(y[c]), raw(ny), MPFR_RNDN);
    scale += x[c] * x[c];
  }
  RC_ASSERT(within(nx, ny, scale, -250));
}

// R(a) R(b) x = R(a+b) x: R(a) is applied to the oracle's R(b) x with the oracle's own cos/sin at 700 bits.
// a = -b makes it R(-b) R(b) x = x.
RC_GTEST_PROP(RopeOracle, RotationsCompose, ()) {
  const RopeSpec s = *genSpec(false);
  const RopeOracle o(s);
  const std::int64_t b = *genPosition();
  std::int64_t a = *rc::gen::oneOf(rc::gen::just(-b), rc::gen::inRange<std::int64_t>(-1000, 1000), genPosition());
  if (a + b > kMaxP || a + b < -kMaxP) a = -a;
  const auto x = *genVector(s, false);
  auto y = o.rotate(b, x);
  for (std::size_t k = 0; k < s.rotary_dim / 2; ++k) {
    const auto ch = rope_pair_channels(s, k);
    rotate_reals(y[ch.first], y[ch.second], o.cos(a, k), o.sin(a, k), 700);
  }
  const auto z = o.rotate(a + b, x);
  for (std::size_t k = 0; k < s.rotary_dim / 2; ++k) {
    const auto ch = rope_pair_channels(s, k);
    const double w = std::max(pair_weight(s, x, k), 0x1p-1000);
    RC_ASSERT(within(y[ch.first], z[ch.first], w, -250));
    RC_ASSERT(within(y[ch.second], z[ch.second], w, -250));
    if (a == -b) {
      RC_ASSERT(within(y[ch.first], make_real(x[ch.first], 64), w, -250));
      RC_ASSERT(within(y[ch.second], make_real(x[ch.second], 64), w, -250));
    }
  }
}

RC_GTEST_PROP(RopeOracle, InverseIsRotationByMinusP, ()) {
  const RopeSpec s = *genSpec(true);
  const RopeOracle o(s);
  const std::int64_t p = *genPosition();
  const auto x = *genVector(s, s.regime != RopeRegime::exact);
  const auto a = o.rotate(p, x, true), b = o.rotate(-p, x);
  for (std::size_t c = 0; c < s.head_dim; ++c) RC_ASSERT(same(a[c], b[c]));
}

RC_GTEST_PROP(RopeOracle, PassThroughChannelsAreUnchanged, ()) {
  const RopeSpec s = *genSpec(true);
  const RopeOracle o(s);
  const auto x = *genVector(s, s.regime != RopeRegime::exact);
  const auto y = o.rotate(*genPosition(), x, *rc::gen::arbitrary<bool>());
  for (std::size_t c = s.rotary_dim; c < s.head_dim; ++c) RC_ASSERT(holds(y[c], x[c]));
}

RC_GTEST_PROP(RopeOracle, RotateChannelIsOneChannelOfRotate, ()) {
  const RopeSpec s = *genSpec(true);
  const RopeOracle o(s);
  const std::int64_t p = *genPosition();
  const bool inverse = *rc::gen::arbitrary<bool>();
  const auto x = *genVector(s, s.regime != RopeRegime::exact);
  const std::size_t c = *rc::gen::inRange<std::size_t>(0, s.head_dim);
  RC_ASSERT(same(o.rotate_channel(p, x, c, inverse), o.rotate(p, x, inverse)[c]));
}

// The halves layout is the interleaved one under the channel permutation (k, k+h) <-> (2k, 2k+1): the same
// numbers in every regime, bit for bit.
RC_GTEST_PROP(RopeOracle, LayoutsArePermutationsOfEachOther, ()) {
  RopeSpec halves = *genSpec(true);
  halves.layout = Layout::halves;
  RopeSpec inter = halves;
  inter.layout = Layout::interleaved;
  const std::int64_t p = *genPosition();
  const auto xh = *genVector(halves, halves.regime != RopeRegime::exact);
  const std::size_t h = halves.rotary_dim / 2;
  std::vector<double> xi = xh;
  for (std::size_t k = 0; k < h; ++k) {
    xi[2 * k] = xh[k];
    xi[2 * k + 1] = xh[k + h];
  }
  const auto yh = RopeOracle(halves).rotate(p, xh), yi = RopeOracle(inter).rotate(p, xi);
  for (std::size_t k = 0; k < h; ++k) {
    RC_ASSERT(same(yi[2 * k], yh[k]));
    RC_ASSERT(same(yi[2 * k + 1], yh[k + h]));
  }
  for (std::size_t c = halves.rotary_dim; c < halves.head_dim; ++c) RC_ASSERT(same(yi[c], yh[c]));
}

// <R(m) q, R(n) k> depends only on n - m, equals the dot product of the oracle's rotated vectors, and at m = n is
// the plain dot product <q, k>.
RC_GTEST_PROP(RopeOracle, ScoreDependsOnlyOnTheOffset, ()) {
  const RopeSpec s = *genSpec(true);  // score is exact mathematics whatever the regime
  const RopeOracle o(s);
  const std::int64_t m = *genPosition(), n = *genPosition();
  std::int64_t d = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(-1000, 1000), genPosition());
  const auto q = *genVector(s, false), k = *genVector(s, false);
  const double S = score_weight(s, q, k);
  const Real sc = o.score(m, q, n, k);
  if (std::max(m + d, n + d) <= kMaxP && std::min(m + d, n + d) >= -kMaxP)
    RC_ASSERT(within(sc, o.score(m + d, q, n + d, k), S, -240));
  const auto rq = o.exact_rotate(m, q), rk = o.exact_rotate(n, k);
  Real dot = make_real(2400);
  for (std::size_t c = 0; c < s.head_dim; ++c) mpfr_fma(raw(dot), raw(rq[c]), raw(rk[c]), raw(dot), MPFR_RNDN);
  RC_ASSERT(within(sc, dot, S, -240));
  Real plain = make_real(2400);
  for (std::size_t c = 0; c < s.head_dim; ++c)
    mpfr_fma(raw(plain), raw(make_real(q[c], 64)), raw(make_real(k[c], 64)), raw(plain), MPFR_RNDN);
  RC_ASSERT(within(o.score(m, q, m, k), plain, S, -240));
}

TEST(RopeOracle, ScoreOfOrthogonalChannelsIsExactlyZero) {
  const RopeSpec s = make_spec(Layout::halves, RopeRegime::exact, 8, 8, 10000.0);
  const RopeOracle o(s);
  std::vector<double> q(8, 0.0), k(8, 0.0);
  q[0] = 1.0;  // pair 0
  k[1] = 1.0;  // pair 1: different pairs never mix
  EXPECT_TRUE(mpfr_zero_p(raw(o.score(3, q, 1000, k))));
}

// ======================================================================================================
// RopeOraclePrecision: P vs 2P
// ======================================================================================================

RC_GTEST_PROP(RopeOraclePrecision, ValuesAt256BitsAgreeWith512Bits, ()) {
  const RopeSpec s = *genSpec(false);
  const RopeOracle lo(s, 256), hi(s, 512);
  const std::int64_t p = *genPosition(), n = *genPosition();
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  RC_LOG() << posenc::describe(s) << " p=" << p << " k=" << k << "\n";
  RC_ASSERT(within(lo.cos(p, k), hi.cos(p, k), 1.0, -255));
  RC_ASSERT(within(lo.sin(p, k), hi.sin(p, k), 1.0, -255));
  const Real t256 = rope_theta(s, k, 256), t512 = rope_theta(s, k, 512);
  RC_ASSERT(abs_below_pow2(sub(t256, t512), mpfr_get_exp(raw(t512)) - 255));
  RC_ASSERT(within(lo.angle(p, k), hi.angle(p, k), 1.0, -256 - 140));
  const auto x = *genVector(s, false), y = *genVector(s, false);
  const auto a = lo.rotate(p, x), b = hi.rotate(p, x);
  for (std::size_t i = 0; i < s.rotary_dim / 2; ++i) {
    const auto ch = rope_pair_channels(s, i);
    const double w = std::max(pair_weight(s, x, i), 0x1p-1000);
    RC_ASSERT(within(a[ch.first], b[ch.first], w, -254));
    RC_ASSERT(within(a[ch.second], b[ch.second], w, -254));
  }
  RC_ASSERT(within(lo.score(p, x, n, y), hi.score(p, x, n, y), score_weight(s, x, y), -250));
  RC_CLASSIFY(std::llabs(p) >= (std::int64_t{1} << 30), "|p| >= 2^30");
}

// The P-vs-2P comparison is not vacuous: a genuinely lower precision is detected, at small and large p.
TEST(RopeOraclePrecision, LowPrecisionIsDetected) {
  const RopeSpec s = make_spec(Layout::halves, RopeRegime::exact, 64, 64, 10000.0);
  const RopeOracle o64(s, 64), o200(s, 200), o512(s, 512);
  for (std::int64_t p : {std::int64_t{12345}, kMaxP - 1}) {
    EXPECT_FALSE(within(o64.cos(p, 3), o512.cos(p, 3), 1.0, -240));
    EXPECT_FALSE(within(o200.cos(p, 3), o512.cos(p, 3), 1.0, -240));
  }
  // and an angle formed at `bits` only (no working margin) loses the low bits at p = 2^40
  const Real theta = rope_theta(s, 3, 256);
  Real a = make_real(256), c = make_real(256);
  mpfr_mul(raw(a), raw(theta), raw(make_real(kMaxP - 1, 64)), MPFR_RNDN);
  mpfr_cos(raw(c), raw(a), MPFR_RNDN);
  EXPECT_FALSE(within(c, o512.cos(kMaxP - 1, 3), 1.0, -240));
  EXPECT_TRUE(within(RopeOracle(s, 256).cos(kMaxP - 1, 3), o512.cos(kMaxP - 1, 3), 1.0, -255));
}

// ======================================================================================================
// RopeOracleEmulated: the float32 steps
// ======================================================================================================

// Is f the correctly rounded float32 of the real y? (decides whether a libm float result may serve as an
// independent expectation)
bool is_rn32_of(float f, const Real& y) { return round_to_float(y) == f; }
Real hp_pow(float x, float y) {
  Real r = make_real(300);
  mpfr_pow(raw(r), raw(make_real(double(x), 64)), raw(make_real(double(y), 64)), MPFR_RNDN);
  return r;
}
Real hp_sin(float x) {
  Real r = make_real(300);
  mpfr_sin(raw(r), raw(make_real(double(x), 64)), MPFR_RNDN);
  return r;
}
Real hp_cos(float x) {
  Real r = make_real(300);
  mpfr_cos(raw(r), raw(make_real(double(x), 64)), MPFR_RNDN);
  return r;
}
Real hp_log(float x) {
  Real r = make_real(300);
  mpfr_log(raw(r), raw(make_real(double(x), 64)), MPFR_RNDN);
  return r;
}

// Plain float32 rotation of one pair, every step a separate IEEE operation (volatile: no FMA contraction).
void plain_rotate(float xi, float xj, float c, float s, float& yi, float& yj) {
  volatile float a = xi * c, b = xj * s, d = xj * c, e = xi * s;
  volatile float u = a - b, v = d + e;
  yi = u;
  yj = v;
}

// HF's steps with plain C float arithmetic (powf/sinf/cosf used only where verified correctly rounded).
RC_GTEST_PROP(RopeOracleEmulated, HfMatchesPlainFloatArithmetic, ()) {
  RopeSpec s = *genSpec(false);
  s.regime = RopeRegime::hf;
  const RopeOracle o(s);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  const std::int64_t p = *genPosition();
  const float base32 = static_cast<float>(s.base);
  volatile float e = static_cast<float>(2 * k) / static_cast<float>(s.rotary_dim);
  const float pw = std::pow(base32, static_cast<float>(e));
  RC_PRE(is_rn32_of(pw, hp_pow(base32, e)));
  volatile float inv = 1.0f / pw;
  RC_LOG() << posenc::describe(s) << " k=" << k << " p=" << p << std::hexfloat << " inv=" << inv << "\n";
  RC_ASSERT(holds(rope_hf_inv_freq(s, k), inv));
  RC_ASSERT(holds(rope_emulated_frequency(s, k), inv));
  volatile float angle = static_cast<float>(p) * inv;
  RC_ASSERT(holds(o.angle(p, k), angle));
  const float sv = std::sin(static_cast<float>(angle)), cv = std::cos(static_cast<float>(angle));
  const bool ok = is_rn32_of(sv, hp_sin(angle)) && is_rn32_of(cv, hp_cos(angle));
  RC_CLASSIFY(!ok, "libm sinf/cosf not correctly rounded here (rest skipped)");
  if (!ok) return;
  RC_ASSERT(holds(o.sin(p, k), sv));
  RC_ASSERT(holds(o.cos(p, k), cv));
  const auto x = *genVector(s, true);
  const auto ch = rope_pair_channels(s, k);
  float yi = 0, yj = 0;
  plain_rotate(static_cast<float>(x[ch.first]), static_cast<float>(x[ch.second]), cv, sv, yi, yj);
  RC_ASSERT(holds(o.rotate_channel(p, x, ch.first), yi));
  RC_ASSERT(holds(o.rotate_channel(p, x, ch.second), yj));
  plain_rotate(static_cast<float>(x[ch.first]), static_cast<float>(x[ch.second]), cv, -sv, yi, yj);
  RC_ASSERT(holds(o.rotate_channel(p, x, ch.first, true), yi));
  RC_ASSERT(holds(o.rotate_channel(p, x, ch.second, true), yj));
}

// ggml's steps with plain C float arithmetic: theta_scale = powf(base, -2.0f/n_dims), theta *= theta_scale.
RC_GTEST_PROP(RopeOracleEmulated, GgmlMatchesPlainFloatArithmetic, ()) {
  RopeSpec s = *genSpec(false);
  s.regime = RopeRegime::ggml;
  const RopeOracle o(s);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  const std::int64_t p = *genPosition();
  const float base32 = static_cast<float>(s.base);
  volatile float e = -2.0f / static_cast<float>(s.rotary_dim);
  const float scale = std::pow(base32, static_cast<float>(e));
  RC_PRE(is_rn32_of(scale, hp_pow(base32, e)));
  RC_ASSERT(holds(rope_ggml_theta_scale(s), scale));
  RC_ASSERT(holds(rope_emulated_frequency(s, k), scale));
  volatile float theta = static_cast<float>(p);
  for (std::size_t j = 0; j < k; ++j) theta = theta * scale;
  RC_LOG() << posenc::describe(s) << " k=" << k << " p=" << p << std::hexfloat << " theta=" << theta << "\n";
  RC_ASSERT(holds(o.angle(p, k), theta));
  const float sv = std::sin(static_cast<float>(theta)), cv = std::cos(static_cast<float>(theta));
  const bool ok = is_rn32_of(sv, hp_sin(theta)) && is_rn32_of(cv, hp_cos(theta));
  RC_CLASSIFY(!ok, "libm sinf/cosf not correctly rounded here (rest skipped)");
  if (!ok) return;
  RC_ASSERT(holds(o.sin(p, k), sv));
  RC_ASSERT(holds(o.cos(p, k), cv));
  const auto x = *genVector(s, true);
  const auto ch = rope_pair_channels(s, k);
  float yi = 0, yj = 0;
  plain_rotate(static_cast<float>(x[ch.first]), static_cast<float>(x[ch.second]), cv, sv, yi, yj);
  const auto y = o.rotate(p, x);
  RC_ASSERT(holds(y[ch.first], yi));
  RC_ASSERT(holds(y[ch.second], yj));
}

// HF RoFormer's table with plain C double arithmetic (Python's int / int, numpy's pow, the division and np.cos / np.sin
// are the C double operations; pow, cos and sin used only where verified correctly rounded), then the float32 cast
// and the float32 rotation.
Real hp_pow64(double x, double y) {
  Real r = make_real(300);
  mpfr_pow(raw(r), raw(make_real(x, 64)), raw(make_real(y, 64)), MPFR_RNDN);
  return r;
}
Real hp_trig64(double x, bool sine) {
  Real r = make_real(300);
  if (sine) mpfr_sin(raw(r), raw(make_real(x, 64)), MPFR_RNDN);
  else mpfr_cos(raw(r), raw(make_real(x, 64)), MPFR_RNDN);
  return r;
}
bool is_rn64_of(double d, const Real& y) { return round_to_double(y) == d; }

RC_GTEST_PROP(RopeOracleEmulated, RoformerMatchesPlainDoubleArithmetic, ()) {
  RopeSpec s = *genSpec(false);
  s.regime = RopeRegime::roformer;
  const RopeOracle o(s);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  const std::int64_t p = *genPosition();
  volatile double e = static_cast<double>(2 * k) / static_cast<double>(s.rotary_dim);
  const double w = std::pow(s.base, static_cast<double>(e));
  RC_PRE(is_rn64_of(w, hp_pow64(s.base, e)));
  RC_ASSERT(holds(rope_emulated_frequency(s, k), w));
  volatile double a = static_cast<double>(p) / w;
  RC_LOG() << posenc::describe(s) << " k=" << k << " p=" << p << std::hexfloat << " w=" << w << " a=" << a << "\n";
  RC_ASSERT(holds(o.angle(p, k), a));
  const double sd = std::sin(static_cast<double>(a)), cd = std::cos(static_cast<double>(a));
  const bool ok = is_rn64_of(sd, hp_trig64(a, true)) && is_rn64_of(cd, hp_trig64(a, false));
  RC_CLASSIFY(!ok, "libm sin/cos not correctly rounded here (rest skipped)");
  if (!ok) return;
  const float sv = static_cast<float>(sd), cv = static_cast<float>(cd);  // torch.FloatTensor(np.sin(...))
  RC_ASSERT(holds(o.sin(p, k), sv));
  RC_ASSERT(holds(o.cos(p, k), cv));
  const auto x = *genVector(s, true);
  const auto ch = rope_pair_channels(s, k);
  float yi = 0, yj = 0;
  plain_rotate(static_cast<float>(x[ch.first]), static_cast<float>(x[ch.second]), cv, sv, yi, yj);
  RC_ASSERT(holds(o.rotate_channel(p, x, ch.first), yi));
  RC_ASSERT(holds(o.rotate_channel(p, x, ch.second), yj));
  plain_rotate(static_cast<float>(x[ch.first]), static_cast<float>(x[ch.second]), cv, -sv, yi, yj);
  RC_ASSERT(holds(o.rotate_channel(p, x, ch.first, true), yi));
  RC_ASSERT(holds(o.rotate_channel(p, x, ch.second, true), yj));
}

// RoFormer's values at d = 64 as HF transformers 5.17 computed them (properties/heldout/data/hf/roformer_d64_table.npy,
// numpy 2.5.2 float64 then float32; entries whose real value lies >= 0.009 ulp_f32 from a float32 rounding boundary,
// 2^20 times any float64 libm's error, so every libm gives them): the float64 angle p / 10000^(2k/64) and its cos/sin rounded twice.
TEST(RopeOracleEmulated, RoformerLiteralValuesFromHfTable) {
  const RopeSpec s = make_spec(Layout::interleaved, RopeRegime::roformer, 64, 64, 10000.0);
  const RopeOracle o(s);
  struct Step {
    std::int64_t p;
    std::size_t k;
    double cos, sin;
  };
  const Step steps[] = {
      {1, 0, 0x1.14a28p-1, 0x1.aed548p-1},
      {255, 1, -0x1.d4b824p-1, 0x1.9c0cb6p-2},
      {48039, 5, 0x1.d1fd6cp-1, 0x1.a84072p-2},
      {131072, 31, 0x1.96d1d4p-3, -0x1.f5ccp-1},
  };
  for (const Step& st : steps) {
    EXPECT_TRUE(holds(o.cos(st.p, st.k), st.cos)) << st.p << " " << st.k << " " << show(o.cos(st.p, st.k));
    EXPECT_TRUE(holds(o.sin(st.p, st.k), st.sin)) << st.p << " " << st.k << " " << show(o.sin(st.p, st.k));
  }
  // pair 0 turns by p itself (w_0 = 1): the float64 angle is p exactly, even where float32 would round it
  EXPECT_TRUE(holds(o.angle((std::int64_t{1} << 40) - 1, 0), static_cast<double>((std::int64_t{1} << 40) - 1)));
  EXPECT_TRUE(holds(o.angle(1, 32 - 1), 1.0 / std::pow(10000.0, 62.0 / 64.0)));
}

// Literal float32 values for base 10000, r = 128, derived independently with Python's decimal/fractions
// (pow as exp(ln(b) * e) at 200 digits, cos/sin by Machin pi + Taylor series, RN32 by exact rational rounding).
TEST(RopeOracleEmulated, LiteralFloat32ValuesForBase10000AndR128) {
  for (Layout layout : {Layout::interleaved, Layout::halves}) {
    const RopeSpec hf = make_spec(layout, RopeRegime::hf, 128, 128, 10000.0);
    const RopeSpec gg = make_spec(layout, RopeRegime::ggml, 128, 128, 10000.0);
    // inv_freq[k] = RN32(1 / RN32(10000^(k/64)))
    EXPECT_TRUE(holds(rope_hf_inv_freq(hf, 1), 0x1.bb5faep-1));   // 10000^(-1/64) = 0.86596432336...
    EXPECT_TRUE(holds(rope_hf_inv_freq(hf, 2), 0x1.7ff222p-1));
    EXPECT_TRUE(holds(rope_hf_inv_freq(hf, 3), 0x1.4c7bcp-1));
    EXPECT_TRUE(holds(rope_hf_inv_freq(hf, 32), 0x1.47ae14p-7));  // RN32(1/100)
    EXPECT_TRUE(holds(rope_hf_inv_freq(hf, 63), 0x1.e459c4p-14));
    EXPECT_TRUE(holds(rope_hf_inv_freq(hf, 0), 1.0));
    // ggml theta_scale = RN32(10000^RN32(-2/128)) (here the same float as hf's inv_freq[1])
    EXPECT_TRUE(holds(rope_ggml_theta_scale(gg), 0x1.bb5faep-1));
    const RopeOracle ohf(hf), ogg(gg);
    struct Step {
      std::int64_t p;
      std::size_t k;
      double angle, cos, sin;
    };
    const Step hf_steps[] = {
        {1000, 1, 0x1.b0fb7p+9, 0x1.c28ad2p-2, -0x1.cbc77ap-1},
        {1000, 2, 0x1.76f276p+9, -0x1.2b4fc2p-1, 0x1.9f663ap-1},
        {48039, 1, 0x1.45002p+15, 0x1.3b47b8p-1, -0x1.9369dap-1},
        {4095, 63, 0x1.e43b7ep-2, 0x1.c7d002p-1, 0x1.d262cap-2},
    };
    for (const Step& st : hf_steps) {
      EXPECT_TRUE(holds(ohf.angle(st.p, st.k), st.angle)) << st.p << " " << st.k << " " << show(ohf.angle(st.p, st.k));
      EXPECT_TRUE(holds(ohf.cos(st.p, st.k), st.cos)) << st.p << " " << st.k;
      EXPECT_TRUE(holds(ohf.sin(st.p, st.k), st.sin)) << st.p << " " << st.k;
    }
    // ggml, p = 1000: t_0 = 1000, t_{k+1} = RN32(t_k * scale)
    const Step gg_steps[] = {
        {1000, 0, 0x1.f4p+9, 0x1.1ff026p-1, 0x1.a75cc2p-1},      {1000, 1, 0x1.b0fb7p+9, 0x1.c28ad2p-2, -0x1.cbc77ap-1},
        {1000, 2, 0x1.76f278p+9, -0x1.2b564p-1, 0x1.9f618cp-1},   {1000, 3, 0x1.44b0dcp+9, -0x1.32ece8p-1, 0x1.99ce48p-1},
        {1000, 4, 0x1.192bb4p+9, -0x1.ffff2p-1, 0x1.defaa6p-9}, {1000, 5, 0x1.e6f7b6p+8, -0x1.ffe3c2p-1, -0x1.541994p-6},
    };
    for (const Step& st : gg_steps) {
      EXPECT_TRUE(holds(ogg.angle(st.p, st.k), st.angle)) << st.k << " " << show(ogg.angle(st.p, st.k));
      EXPECT_TRUE(holds(ogg.cos(st.p, st.k), st.cos)) << st.k;
      EXPECT_TRUE(holds(ogg.sin(st.p, st.k), st.sin)) << st.k;
    }
    // hf and ggml round the second frequency's angle alike at p = 1000 but not the third (0x1.76f276p+9 vs
    // 0x1.76f278p+9): the recurrence is not the direct product
    EXPECT_FALSE(same(ohf.angle(1000, 2), ogg.angle(1000, 2)));
  }
}

RC_GTEST_PROP(RopeOracleEmulated, EmulatedValuesAreFloat32Numbers, ()) {
  const RopeSpec s = *genEmulatedSpec();
  const RopeOracle o(s);
  const std::int64_t p = *genPosition();
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  RC_ASSERT(is_float32_value(o.angle(p, k)));
  RC_ASSERT(is_float32_value(o.cos(p, k)));
  RC_ASSERT(is_float32_value(o.sin(p, k)));
  RC_ASSERT(is_float32_value(rope_emulated_frequency(s, k)));
  for (const Real& v : o.rotate(p, *genVector(s, true), *rc::gen::arbitrary<bool>())) RC_ASSERT(is_float32_value(v));
  // pair 0 turns by RN32(p) in both regimes (inv_0 = 1, t_0 = RN32(p))
  RC_ASSERT(holds(o.angle(p, 0), double(static_cast<float>(p))));
}

// |emulated - exact| of cos/sin: the float32 angle carries a relative error of at most (ln(base) + 5) 2^-24
// (hf: RN32 of base, exponent, pow, reciprocal, p and product) or (ln(base) + 2k + 3) 2^-24 (ggml: the scale's
// error compounds over k steps, plus k roundings), then cos/sin are rounded once more.
RC_GTEST_PROP(RopeOracleEmulated, EmulatedIsWithinTheFloat32ErrorOfExact, ()) {
  const RopeSpec s = *genEmulatedSpec();
  const RopeOracle o(s);
  const std::int64_t p = *genPosition();
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  const double angle = std::fabs(double(p)) * to_d(rope_theta(s, k));
  const double rel = s.regime == RopeRegime::hf ? std::log(s.base) + 5.0 : std::log(s.base) + 2.0 * double(k) + 3.0;
  const double bound = 2.0 * (angle * rel + 1.0) * 0x1p-24;
  const double ec = std::fabs(to_d(sub(o.cos(p, k), o.exact_cos(p, k))));
  const double es = std::fabs(to_d(sub(o.sin(p, k), o.exact_sin(p, k))));
  RC_LOG() << posenc::describe(s) << " p=" << p << " k=" << k << " err " << ec << " " << es << " bound " << bound << "\n";
  RC_ASSERT(ec <= bound);
  RC_ASSERT(es <= bound);
}

// CONVENTIONS.md §2.10: ggml's repeated multiplication drifts from HF's direct product as p grows. The correctly
// rounded steps give max |delta cos| = 1.5e-3 at p = 1e5 for r = 64 (CONVENTIONS quotes 1.7e-3 from a cross-check
// with real libm), and 9.6e-3 for r = 128 (plain glibc float code gives the same two numbers).
TEST(RopeOracleEmulated, GgmlRecurrenceDriftsFromHfAtLargePositions) {
  for (std::size_t r : {64u, 128u}) {
    const RopeOracle hf(make_spec(Layout::halves, RopeRegime::hf, r, r, 10000.0), 64);
    const RopeOracle gg(make_spec(Layout::halves, RopeRegime::ggml, r, r, 10000.0), 64);
    double worst = 0, worst_small = 0;
    for (std::size_t k = 0; k < r / 2; ++k) {
      worst = std::max(worst, std::fabs(to_d(hf.cos(100000, k)) - to_d(gg.cos(100000, k))));
      worst_small = std::max(worst_small, std::fabs(to_d(hf.cos(7, k)) - to_d(gg.cos(7, k))));
    }
    std::printf("r = %zu: max |cos_hf - cos_ggml| over the pairs: %.3g at p = 1e5, %.3g at p = 7\n", r, worst,
                worst_small);
    EXPECT_GT(worst, 1e-3);
    EXPECT_LT(worst, 2e-2);
    EXPECT_LT(worst_small, 1e-5);
  }
}

// ======================================================================================================
// RopeOracleErrors
// ======================================================================================================

TEST(RopeOracleErrors, InvalidInputsNameParameterValueAndRange) {
  const RopeSpec s = make_spec(Layout::halves, RopeRegime::exact, 10, 8, 10000.0);
  RopeSpec hf = s;
  hf.regime = RopeRegime::hf;
  const RopeOracle o(s), oh(hf);
  const std::vector<double> x(10, 0.5), short_x(9, 0.5);
  // positions
  EXPECT_NE(error_of([&] { o.cos(kMaxP + 1, 0); }).find("position = 1099511627777"), std::string::npos);
  EXPECT_NE(error_of([&] { o.rotate(-kMaxP - 1, x); }).find("position"), std::string::npos);
  EXPECT_NE(error_of([&] { oh.angle(kMaxP + 1, 0); }).find("position"), std::string::npos);
  EXPECT_NE(error_of([&] { o.score(kMaxP + 1, x, 0, x); }).find("m = "), std::string::npos);
  EXPECT_NE(error_of([&] { o.score(0, x, -kMaxP - 1, x); }).find("n = "), std::string::npos);
  EXPECT_NO_THROW(o.rotate(kMaxP, x, true));
  EXPECT_NO_THROW(o.cos(-kMaxP, 3));
  // pair index
  const std::string pair = error_of([&] { o.sin(5, 4); });
  EXPECT_NE(pair.find("k = 4"), std::string::npos) << pair;
  EXPECT_NE(pair.find("rotary_dim/2 = 4"), std::string::npos) << pair;
  EXPECT_NE(error_of([&] { rope_theta(s, 4); }).find("k = 4"), std::string::npos);
  EXPECT_NE(error_of([&] { rope_hf_inv_freq(s, 99); }).find("k = 99"), std::string::npos);
  EXPECT_NE(error_of([&] { rope_pair_channels(s, 4); }).find("k = 4"), std::string::npos);
  // channel
  EXPECT_NE(error_of([&] { o.rotate_channel(1, x, 10); }).find("channel = 10"), std::string::npos);
  EXPECT_NE(error_of([&] { rope_pair_of_channel(s, 10); }).find("channel = 10"), std::string::npos);
  // vector length and values
  const std::string len = error_of([&] { o.rotate(1, short_x); });
  EXPECT_NE(len.find("x = a vector of 9 values"), std::string::npos) << len;
  EXPECT_NE(len.find("head_dim = 10"), std::string::npos) << len;
  EXPECT_NE(error_of([&] { o.score(1, short_x, 2, x); }).find("q = "), std::string::npos);
  EXPECT_NE(error_of([&] { o.score(1, x, 2, short_x); }).find("k = "), std::string::npos);
  std::vector<double> tenth = x;
  tenth[3] = 0.1;  // not a float32 number
  const std::string f32 = error_of([&] { oh.rotate(1, tenth); });
  EXPECT_NE(f32.find("x = 0.1 in channel 3"), std::string::npos) << f32;
  EXPECT_NE(f32.find("float32"), std::string::npos) << f32;
  EXPECT_NE(error_of([&] { oh.rotate_channel(1, tenth, 0); }).find("x = 0.1"), std::string::npos);
  EXPECT_NO_THROW(o.rotate(1, tenth));         // the exact regime takes any finite double
  EXPECT_NO_THROW(oh.exact_rotate(1, tenth));  // and so does exact_rotate
  EXPECT_NO_THROW(oh.score(1, tenth, 2, tenth));
  std::vector<double> inf = x;
  inf[9] = std::numeric_limits<double>::infinity();
  EXPECT_NE(error_of([&] { o.rotate(1, inf); }).find("x = inf in channel 9"), std::string::npos);
  std::vector<double> big = x;
  big[0] = 1.0e300;  // finite, but not a float32
  EXPECT_NE(error_of([&] { oh.rotate(1, big); }).find("float32"), std::string::npos);
  // precision and spec
  EXPECT_NE(error_of([&] { RopeOracle(s, 8); }).find("bits = 8"), std::string::npos);
  EXPECT_NE(error_of([&] { RopeOracle(s, kMaxBits); }).find("bits = "), std::string::npos);
  EXPECT_NE(error_of([&] { rope_theta(s, 0, 8); }).find("bits = 8"), std::string::npos);
  RopeSpec odd = s;
  odd.rotary_dim = 7;
  EXPECT_NE(error_of([&] { RopeOracle{odd}; }).find("rotary_dim"), std::string::npos);
  RopeSpec wide = s;
  wide.rotary_dim = 12;
  EXPECT_NE(error_of([&] { rope_theta(wide, 0); }).find("rotary_dim"), std::string::npos);
  RopeSpec flat = s;
  flat.base = 1.0;
  EXPECT_NE(error_of([&] { rope_pair_channels(flat, 0); }).find("base"), std::string::npos);
  EXPECT_NE(error_of([&] { rope_emulated_frequency(s, 0); }).find("regime"), std::string::npos);
}

// ======================================================================================================
// RopeOracleScaling: context extension (CONVENTIONS.md §2.11; HF modeling_rope_utils.py @26892c16)
// ======================================================================================================

#ifndef POSENC_SOURCE_DIR
#error "POSENC_SOURCE_DIR must name the source tree (the held-out vectors are read from it)"
#endif

RopeSpec with_regime(RopeSpec s, RopeRegime regime) {
  s.regime = regime;
  posenc::validate(s);
  return s;
}

// YaRN as in the held-out "yarn" configuration: r = 64, base 1e4, L0 = 4096, s = 4, beta 32/1, truncate.
RopeSpec yarn_spec(RopeRegime regime = RopeRegime::exact) {
  RopeSpec s = make_spec(Layout::halves, regime, 64, 64, 10000.0);
  s.scaling = RopeScaling::yarn;
  s.factor = 4.0;
  s.original_context = 4096;
  posenc::validate(s);
  return s;
}

// Llama 3.1: r = 128, base 5e5, L0 = 8192, s = 8, low/high_freq_factor 1/4.
RopeSpec llama3_spec(RopeRegime regime = RopeRegime::exact) {
  RopeSpec s = make_spec(Layout::halves, regime, 128, 128, 500000.0);
  s.scaling = RopeScaling::llama3;
  s.factor = 8.0;
  s.original_context = 8192;
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 4.0;
  posenc::validate(s);
  return s;
}

// LongRoPE as in the held-out "longrope" configuration: r = 64, base 1e4, L0 = 4096, s = 131072 / 4096 = 32,
// short_factor 1 + k/100, long_factor 1 + k/2; seq_len picks the list (> L0: long).
RopeSpec longrope_spec(RopeRegime regime = RopeRegime::exact, std::int64_t seq_len = 0) {
  RopeSpec s = make_spec(Layout::halves, regime, 64, 64, 10000.0);
  s.scaling = RopeScaling::longrope;
  s.factor = 32.0;
  s.original_context = 4096;
  s.seq_len = seq_len;
  for (std::size_t k = 0; k < 32; ++k) {
    s.short_factor.push_back(1.0 + double(k) / 100.0);
    s.long_factor.push_back(1.0 + double(k) / 2.0);
  }
  posenc::validate(s);
  return s;
}

// The small hand case: r = 8, base 1e4 (theta_k = 10^-k exactly), short {1, 1.5, 2, 4}, long {2, 3, 5, 7},
// L0 = 4096, s = 32.
RopeSpec longrope_hand(std::int64_t seq_len, RopeRegime regime = RopeRegime::exact) {
  RopeSpec s = make_spec(Layout::interleaved, regime, 8, 8, 10000.0);
  s.scaling = RopeScaling::longrope;
  s.factor = 32.0;
  s.original_context = 4096;
  s.seq_len = seq_len;
  s.short_factor = {1.0, 1.5, 2.0, 4.0};
  s.long_factor = {2.0, 3.0, 5.0, 7.0};
  posenc::validate(s);
  return s;
}

RopeSpec scaled(RopeSpec s, RopeScaling scaling, double factor) {
  s.scaling = scaling;
  s.factor = factor;
  if (scaling == RopeScaling::dynamic) s.max_context = 4096;
  if (scaling == RopeScaling::yarn || scaling == RopeScaling::llama3) s.original_context = 4096;
  posenc::validate(s);
  return s;
}

// |a - b| <= |b| 2^e
bool rel_within(const Real& a, const Real& b, long e) { return abs_below_pow2(sub(a, b), mpfr_get_exp(raw(b)) + e); }

// Distance of two positive float32 numbers in units in the last place (their bit patterns are ordered).
long ulps32(double a, double b) {
  const float fa = static_cast<float>(a), fb = static_cast<float>(b);
  std::int32_t ia = 0, ib = 0;
  std::memcpy(&ia, &fa, sizeof ia);
  std::memcpy(&ib, &fb, sizeof ib);
  return std::labs(static_cast<long>(ia) - static_cast<long>(ib));
}

// cd(beta) = r ln(L0/(2 pi beta)) / (2 ln base), by hand (Python decimal, 60 digits), r = 64, base 1e4:
//   L0 = 4096: cd(32) = 64 ln(20.37183...) / 18.42068... = 10.47224081031802653544...  -> floor 10
//              cd(1)  = 64 ln(651.8986...) / 18.42068... = 22.51344063687727434399...  -> ceil  23
//   L0 = 2048 (no truncation): cd(32) = 8.06400084500617697373940948265..., cd(1) = 20.10520067156542478228896527...
TEST(RopeOracleScaling, YarnCorrectionRangeByHand) {
  const RopeSpec s = yarn_spec();
  const RopeYarnRange r = rope_yarn_correction_range(s);
  EXPECT_TRUE(holds(r.low, 10.0)) << show(r.low);
  EXPECT_TRUE(holds(r.high, 23.0)) << show(r.high);
  EXPECT_TRUE(holds(r.ramp_high, 23.0));
  const RopeHfYarnRange h = rope_hf_yarn_correction_range(s);
  EXPECT_EQ(h.low, 10.0);
  EXPECT_EQ(h.high, 23.0);
  EXPECT_EQ(h.ramp_high, 23.0);
  // theta'_k: k <= 10 keeps theta_k (the same bits), k >= 23 is theta_k / 4, between theta_k (1 - (3/4)(k-10)/13);
  // k = 16: ramp 6/13, theta_16 (1 - 18/52) = theta_16 17/26.
  const RopeSpec plain = posenc::without_scaling(s);
  for (std::size_t k : {0u, 5u, 10u}) EXPECT_TRUE(same(rope_theta(s, k), rope_theta(plain, k))) << k;
  for (std::size_t k : {23u, 24u, 31u}) {
    Real want = make_real(1024);
    mpfr_div_ui(raw(want), raw(rope_theta(plain, k, 512)), 4, MPFR_RNDN);
    EXPECT_TRUE(rel_within(rope_theta(s, k), want, -255)) << k;
  }
  for (std::size_t k = 11; k < 23; ++k) {
    Real want = make_real(1024);
    mpfr_mul_ui(raw(want), raw(rope_theta(plain, k, 512)), 52 - 3 * (k - 10), MPFR_RNDN);
    mpfr_div_ui(raw(want), raw(want), 52, MPFR_RNDN);
    EXPECT_TRUE(rel_within(rope_theta(s, k), want, -255)) << k;
  }
  // no truncation: the correction dims themselves
  RopeSpec nt = s;
  nt.original_context = 2048;
  nt.factor = 8.0;
  nt.truncate = false;
  posenc::validate(nt);
  const RopeYarnRange rn = rope_yarn_correction_range(nt);
  // (60 digits: the literals carry ~2^-196 absolute)
  EXPECT_TRUE(within(rn.low, parse_real("8.06400084500617697373940948265253008151416866344080208334467", 400), 1.0, -190));
  EXPECT_TRUE(within(rn.high, parse_real("20.1052006715654247822889652716322511522417639219251437357618", 400), 1.0, -190));
  EXPECT_TRUE(same(rn.high, rn.ramp_high));
  const RopeHfYarnRange hn = rope_hf_yarn_correction_range(nt);
  EXPECT_NEAR(hn.low, 8.064000845006177, 1e-14);
  EXPECT_NEAR(hn.high, 20.105200671565425, 1e-14);
  // the hf ramp over k = 0..31 at the low end is exactly HF's float32 expression
  EXPECT_EQ(ulps32(to_d(rope_hf_inv_freq(with_regime(nt, RopeRegime::hf), 0)), 1.0), 0);
}

// low == high: HF's linear_ramp_factor adds 0.001 to max (the real 1/1000 in the exact regime).
//   truncate false, beta_fast = beta_slow = 8: low = high = cd(8) = 64 ln(4096/(16 pi)) / (2 ln 1e4) = 15.288...
//   truncate true, L0 = 5: cd(1) = 64 ln(5/(2 pi)) / (2 ln 1e4) = -0.7935 -> ceil 0 = high, low = max(floor, 0) = 0
TEST(RopeOracleScaling, YarnEqualEndsAreWidenedByOneThousandth) {
  RopeSpec s = yarn_spec();
  s.truncate = false;
  s.beta_fast = s.beta_slow = 8.0;
  posenc::validate(s);
  const RopeYarnRange r = rope_yarn_correction_range(s);
  EXPECT_TRUE(same(r.low, r.high));
  EXPECT_TRUE(within(r.low, parse_real("15.288", 64), 1.0, -9)) << show(r.low);
  EXPECT_TRUE(within(sub(r.ramp_high, r.high), parse_real("0.001", 400), 1.0, -240));
  const RopeYarnRange hr = rope_yarn_correction_range(s);
  const RopeSpec plain = posenc::without_scaling(s);
  EXPECT_TRUE(same(rope_theta(s, 15), rope_theta(plain, 15)));  // ramp 0
  Real quarter = make_real(1024);
  mpfr_div_ui(raw(quarter), raw(rope_theta(plain, 16, 512)), 4, MPFR_RNDN);
  EXPECT_TRUE(rel_within(rope_theta(s, 16), quarter, -255));  // ramp 1
  const RopeHfYarnRange h = rope_hf_yarn_correction_range(s);
  EXPECT_EQ(h.low, h.high);
  EXPECT_EQ(h.ramp_high, h.high + 0.001);

  RopeSpec t = yarn_spec();
  t.original_context = 5;
  posenc::validate(t);
  const RopeYarnRange rt = rope_yarn_correction_range(t);
  EXPECT_TRUE(holds(rt.low, 0.0));
  EXPECT_TRUE(holds(rt.high, 0.0));
  EXPECT_TRUE(within(rt.ramp_high, parse_real("0.001", 400), 1.0, -250));
  const RopeHfYarnRange ht = rope_hf_yarn_correction_range(t);
  EXPECT_EQ(ht.low, 0.0);
  EXPECT_EQ(ht.high, 0.0);
  EXPECT_EQ(ht.ramp_high, 0.001);
  // ramp_k = clamp(k / 0.001): pair 0 keeps theta_0 = 1, every other pair is divided by 4; in float32 the same:
  // inv'_1 = RN32(1 / RN32(4 P_1)) exactly (e_1 = 0).
  EXPECT_TRUE(holds(rope_theta(t, 0), 1.0));
  Real q1 = make_real(1024);
  mpfr_div_ui(raw(q1), raw(rope_theta(posenc::without_scaling(t), 1, 512)), 4, MPFR_RNDN);
  EXPECT_TRUE(rel_within(rope_theta(t, 1), q1, -255));
  const RopeSpec th = with_regime(t, RopeRegime::hf);
  volatile float e = 2.0f / 64.0f;
  const float pos = std::pow(10000.0f, static_cast<float>(e));
  volatile float inter = 1.0f / (4.0f * pos);
  EXPECT_TRUE(holds(rope_hf_inv_freq(th, 1), inter));
  EXPECT_TRUE(holds(rope_hf_inv_freq(th, 0), 1.0));
}

// CONVENTIONS.md §2.11: with head_dim 128, theta 5e5, L0 8192, factor 8: 29 pairs unchanged, 6 smoothed, 29 divided
// (by hand: wl_k = 2 pi 500000^(k/64) crosses 8192/4 = 2048 between k = 28 (1956) and 29 (2402), and 8192
// between k = 34 (6695) and 35 (8220)).
TEST(RopeOracleScaling, Llama3BandsOf29Kept6Smoothed29Divided) {
  for (RopeRegime regime : {RopeRegime::exact, RopeRegime::hf}) {
    const RopeSpec s = llama3_spec(regime);
    int kept = 0, smoothed = 0, divided = 0;
    for (std::size_t k = 0; k < 64; ++k) {
      const RopeLlama3Band b = regime == RopeRegime::exact ? rope_llama3_band(s, k) : rope_hf_llama3_band(s, k);
      (b == RopeLlama3Band::kept ? kept : b == RopeLlama3Band::smoothed ? smoothed : divided) += 1;
      const RopeLlama3Band want = k < 29 ? RopeLlama3Band::kept : k < 35 ? RopeLlama3Band::smoothed : RopeLlama3Band::divided;
      EXPECT_EQ(static_cast<int>(b), static_cast<int>(want)) << k;
    }
    EXPECT_EQ(kept, 29);
    EXPECT_EQ(smoothed, 6);
    EXPECT_EQ(divided, 29);
  }
  // theta'_k: kept pairs are theta_k (same bits), divided ones theta_k / 8, smoothed ones (1 - sm) theta_k / 8 +
  // sm theta_k with sm = (L0 / wl_k - 1) / 3, transcribed here with Boost at 500 bits; k = 29: sm =
  // 0.80362104209963388006737853420496514691663397642419144751377 (Python decimal).
  const RopeSpec s = llama3_spec();
  const RopeSpec plain = posenc::without_scaling(s);
  PrecisionGuard guard(500);
  for (std::size_t k = 0; k < 64; ++k) {
    const Real theta = rope_theta(plain, k, 500);
    const Real wl = 2 * posenc::reference::pi(600) / theta;
    const Real sm = (Real(8192) / wl - 1) / 3;
    if (k == 29) {
      EXPECT_TRUE(within(sm, parse_real("0.80362104209963388006737853420496514691663397642419144751377", 400), 1.0, -190));
    }
    const Real want = k < 29 ? theta : k >= 35 ? Real(theta / 8) : Real((1 - sm) * theta / 8 + sm * theta);
    const Real got = rope_theta(s, k);
    if (k < 29)
      EXPECT_TRUE(same(got, rope_theta(plain, k))) << k;
    else
      EXPECT_TRUE(rel_within(got, want, -254)) << k << " " << show(got) << " vs " << show(want);
  }
}

// Linear scaling is positions divided by s (CONVENTIONS.md §2.11): cos/sin at p = s q equal those at q unscaled.
// For s = 4, theta_k / 4 is exact, so the W-bit angles are the same number: bit for bit; for s = 3 within the bound.
TEST(RopeOracleScaling, LinearIsPositionsDividedByFactor) {
  const RopeSpec plain = make_spec(Layout::interleaved, RopeRegime::exact, 64, 64, 10000.0);
  const RopeOracle o(plain);
  for (double s : {4.0, 3.0}) {
    const RopeOracle ol(scaled(plain, RopeScaling::linear, s));
    for (std::int64_t q : {std::int64_t{1}, std::int64_t{777}, std::int64_t{123456789}, std::int64_t{1} << 37}) {
      const std::int64_t p = static_cast<std::int64_t>(s) * q;
      for (std::size_t k : {0u, 1u, 17u, 31u}) {
        if (s == 4.0) {
          EXPECT_TRUE(same(ol.cos(p, k), o.cos(q, k))) << p << " " << k;
          EXPECT_TRUE(same(ol.sin(p, k), o.sin(q, k))) << p << " " << k;
        } else {
          EXPECT_TRUE(within(ol.cos(p, k), o.cos(q, k), 1.0, -256 - 140)) << p << " " << k;
          EXPECT_TRUE(within(ol.sin(p, k), o.sin(q, k), 1.0, -256 - 140)) << p << " " << k;
        }
      }
    }
    EXPECT_TRUE(holds(ol.attention_factor(), 1.0));
  }
}

// Dynamic NTK with seq_len <= max_context (or 0: at init) is the default RoPE (CONVENTIONS.md §2.11), in the exact
// and the hf regime; beyond it the base grows.
TEST(RopeOracleScaling, DynamicWithinMaxContextIsUnscaled) {
  for (RopeRegime regime : {RopeRegime::exact, RopeRegime::hf}) {
    const RopeSpec plain = make_spec(Layout::halves, regime, 128, 128, 10000.0);
    for (std::int64_t L : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1000}, std::int64_t{4096}, std::int64_t{5000}}) {
      RopeSpec s = scaled(plain, RopeScaling::dynamic, 2.0);
      s.seq_len = L;
      posenc::validate(s);
      for (std::size_t k : {0u, 1u, 30u, 63u}) {
        const bool same_theta = same(rope_theta(s, k), rope_theta(plain, k));
        const bool same_inv = same(rope_hf_inv_freq(s, k), rope_hf_inv_freq(plain, k));
        EXPECT_EQ(same_theta, L <= 4096 || k == 0) << L << " " << k;
        EXPECT_EQ(same_inv, L <= 4096 || k == 0) << L << " " << k;
        if (L <= 4096) {
          EXPECT_TRUE(same(RopeOracle(s).cos(99999, k), RopeOracle(plain).cos(99999, k)));
        }
      }
    }
  }
}

// Every scaling with factor 1 but dynamic is the default RoPE (yarn: the ramp is irrelevant and m = 1): the exact
// regime gives the same bits; HF's float32 blends (yarn I (1 - e) + X e with I = X, llama3's smoothed
// (1 - sf) inv / 1 + sf inv) are within an ulp of inv (counted).
// Dynamic with factor 1 is not: a = 1 L/M - 0 = L/M still grows the base beyond max_context.
TEST(RopeOracleScaling, FactorOneIsUnscaled) {
  const RopeSpec plain = make_spec(Layout::halves, RopeRegime::exact, 128, 128, 10000.0);
  int hf_identical = 0, hf_total = 0;
  for (RopeScaling sc : {RopeScaling::linear, RopeScaling::ntk, RopeScaling::yarn, RopeScaling::llama3}) {
    RopeSpec s = scaled(plain, sc, 1.0);
    for (std::size_t k = 0; k < 64; ++k) {
      EXPECT_TRUE(same(rope_theta(s, k), rope_theta(plain, k))) << posenc::describe(s) << " k=" << k;
      const long d = ulps32(to_d(rope_hf_inv_freq(s, k)), to_d(rope_hf_inv_freq(plain, k)));
      const bool blend = sc == RopeScaling::yarn || sc == RopeScaling::llama3;
      EXPECT_LE(d, blend ? 1 : 0) << posenc::describe(s) << " k=" << k;
      if (blend) hf_identical += d == 0, ++hf_total;
    }
    EXPECT_TRUE(holds(rope_attention_factor(s), 1.0));
    EXPECT_EQ(rope_hf_attention_factor(s), 1.0);
    const RopeOracle o(s), op(plain);
    EXPECT_TRUE(same(o.cos(48039, 7), op.cos(48039, 7)));
    EXPECT_TRUE(holds(o.attention_factor(), 1.0));
  }
  std::printf("yarn and llama3 with factor 1, hf: %d of %d inv_freq bit-identical to the unscaled ones\n", hf_identical,
              hf_total);
  RopeSpec dyn = scaled(plain, RopeScaling::dynamic, 1.0);
  dyn.seq_len = 4 * 4096;  // a = 4: base' = base 4^(128/126)
  posenc::validate(dyn);
  RopeSpec ntk4 = scaled(plain, RopeScaling::ntk, 4.0);
  for (std::size_t k : {1u, 40u, 63u}) {
    EXPECT_FALSE(same(rope_theta(dyn, k), rope_theta(plain, k)));
    EXPECT_TRUE(rel_within(rope_theta(dyn, k), rope_theta(ntk4, k), -254));
  }
}

// m = 0.1 ln s + 1 (s = 4: 1.13862943611198906188344642429163531361510002687205105082414, Python decimal);
// g(s, mscale) / g(s, mscale_all_dim) when both are given; the given attention_factor; 1 for the other scalings.
TEST(RopeOracleScaling, AttentionFactor) {
  const RopeSpec s = yarn_spec();
  EXPECT_TRUE(within(rope_attention_factor(s), parse_real("1.13862943611198906188344642429163531361510002687205105082414", 400),
                     1.0, -190));  // a 60-digit literal
  EXPECT_EQ(rope_hf_attention_factor(s), 1.138629436111989);
  RopeSpec ds = s;
  ds.factor = 16.0;
  ds.mscale = 1.0;
  ds.mscale_all_dim = 0.5;
  posenc::validate(ds);
  {
    PrecisionGuard guard(500);
    const Real l = boost::multiprecision::log(Real(16));
    const Real want = (l / 10 + 1) / (Real(0.5) * l / 10 + 1);
    EXPECT_TRUE(rel_within(rope_attention_factor(ds), want, -254));
    EXPECT_NEAR(rope_hf_attention_factor(ds), to_d(want), 4e-16);
  }
  RopeSpec eq = ds;
  eq.mscale = eq.mscale_all_dim = 0.707;
  EXPECT_TRUE(holds(rope_attention_factor(eq), 1.0));
  EXPECT_EQ(rope_hf_attention_factor(eq), 1.0);
  RopeSpec only = ds;
  only.mscale_all_dim = 0.0;  // one of the two missing: g(s, 1)
  EXPECT_TRUE(same(rope_attention_factor(only), rope_attention_factor(scaled(posenc::without_scaling(s), RopeScaling::yarn, 16.0))));
  RopeSpec given = ds;
  given.attention_factor = 2.5;
  EXPECT_TRUE(holds(rope_attention_factor(given), 2.5));
  EXPECT_EQ(rope_hf_attention_factor(given), 2.5);
  EXPECT_TRUE(holds(rope_attention_factor(llama3_spec()), 1.0));
  EXPECT_EQ(rope_hf_attention_factor(llama3_spec()), 1.0);
}

// The exact regime's cos and sin carry m: cos^2 + sin^2 = m^2, p = 0 gives (m, 0), a unit vector comes out as
// (m cos, m sin); with full rotary the score is m^2 times the score of the same frequencies without m, and passed
// channels are not scaled.
TEST(RopeOracleScaling, AttentionFactorScalesCosSinAndScore) {
  for (RopeSpec s : {yarn_spec(), longrope_spec(RopeRegime::exact, 0), longrope_spec(RopeRegime::exact, 5000)}) {
  SCOPED_TRACE(posenc::describe(s));
  s.head_dim = 70;  // 6 passed channels
  posenc::validate(s);
  RopeSpec unit = s;
  unit.attention_factor = 1.0;  // same theta'_k, m = 1
  const RopeOracle o(s), o1(unit);
  const Real m = rope_attention_factor(s);
  EXPECT_GT(to_d(m), 1.1);
  for (std::int64_t p : {std::int64_t{0}, std::int64_t{17}, std::int64_t{48039}, kMaxP}) {
    for (std::size_t k : {0u, 12u, 31u}) {
      const Real c = o.cos(p, k), sn = o.sin(p, k);
      Real sum = make_real(1024), m2 = make_real(1024);
      mpfr_sqr(raw(sum), raw(c), MPFR_RNDN);
      mpfr_fma(raw(sum), raw(sn), raw(sn), raw(sum), MPFR_RNDN);
      mpfr_sqr(raw(m2), raw(m), MPFR_RNDN);
      EXPECT_TRUE(within(sum, m2, 1.0, -252));
      Real mc = make_real(1024);
      mpfr_mul(raw(mc), raw(o1.cos(p, k)), raw(m), MPFR_RNDN);
      EXPECT_TRUE(within(c, mc, 1.0, -252));
      if (p == 0) {
        EXPECT_TRUE(same(c, m));
        EXPECT_TRUE(mpfr_zero_p(raw(sn)));
      }
      std::vector<double> x(70, 0.0);
      x[k] = 1.0;
      const auto y = o.rotate(p, x);
      EXPECT_TRUE(within(y[k], c, 1.0, -252));
      EXPECT_TRUE(within(y[k + 32], sn, 1.0, -252));
    }
  }
  std::vector<double> q(70), kv(70);
  for (std::size_t c = 0; c < 70; ++c) {
    q[c] = 0.25 * double(c % 7) - 0.5;
    kv[c] = 1.0 - 0.125 * double(c % 5);
  }
  std::vector<double> q_rot = q, k_rot = kv, q_pass(70, 0.0), k_pass(70, 0.0);
  for (std::size_t c = 64; c < 70; ++c) {
    q_pass[c] = q[c];
    k_pass[c] = kv[c];
    q_rot[c] = k_rot[c] = 0.0;
  }
  Real m2 = make_real(1024);
  mpfr_sqr(raw(m2), raw(m), MPFR_RNDN);
  Real want = make_real(1024);
  mpfr_mul(raw(want), raw(o1.score(123, q_rot, -4567, k_rot)), raw(m2), MPFR_RNDN);
  EXPECT_TRUE(within(o.score(123, q_rot, -4567, k_rot), want, 64.0, -240));
  EXPECT_TRUE(same(o.score(123, q_pass, -4567, k_pass), o1.score(123, q_pass, -4567, k_pass)));
  Real total = make_real(1024);
  mpfr_add(raw(total), raw(want), raw(o1.score(123, q_pass, -4567, k_pass)), MPFR_RNDN);
  EXPECT_TRUE(within(o.score(123, q, -4567, kv), total, 64.0, -240));
  }
}

// theta'_k of ntk and dynamic transcribed again with Boost's pow (another MPFR path than the oracle's
// exp(-(2k/r) ln base')): base' = base a^(r/(r-2)), a = s (ntk) or s L/M - (s-1) (dynamic).
RC_GTEST_PROP(RopeOracleScaling, NtkAndDynamicFollowTheDefinition, ()) {
  RopeSpec s = *genSpec(false, 128);
  RC_PRE(s.rotary_dim >= 4);
  s.scaling = *rc::gen::element(RopeScaling::ntk, RopeScaling::dynamic);
  s.factor = *rc::gen::element(2.0, 4.0, 3.7, 64.0, 1048576.0);
  if (s.scaling == RopeScaling::dynamic) {
    s.max_context = *rc::gen::element<std::int64_t>(1, 4096, 131072);
    s.seq_len = *rc::gen::element<std::int64_t>(0, 4096, 4097, 40000, std::int64_t{1} << 40);
  }
  posenc::validate(s);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  PrecisionGuard guard(600);
  Real a = Real(s.factor);
  if (s.scaling == RopeScaling::dynamic) {
    const Real L = Real(std::max(s.seq_len, s.max_context)), M = Real(s.max_context);
    a = Real(s.factor) * L / M - (Real(s.factor) - 1);
  }
  const Real r = Real(s.rotary_dim);
  const Real base2 = Real(s.base) * boost::multiprecision::pow(a, r / (r - 2));
  const Real want = boost::multiprecision::pow(base2, -Real(2 * k) / r);
  const Real got = rope_theta(s, k);
  RC_LOG() << posenc::describe(s) << " k=" << k << " got " << show(got) << " want " << show(want) << "\n";
  RC_ASSERT(rel_within(got, want, -250));
}

// A scaled spec for the property tests (every scaling the exact and hf regimes accept).
rc::Gen<RopeSpec> genScaledSpec(RopeRegime regime, bool ntk_dynamic_only = false) {
  return rc::gen::exec([=] {
    RopeSpec s = *genSpec(false, 128);
    s.regime = regime;
    std::vector<RopeScaling> options = {RopeScaling::linear, RopeScaling::yarn, RopeScaling::llama3,
                                        RopeScaling::longrope};
    if (ntk_dynamic_only) options.clear();
    if (s.rotary_dim < 4 && ntk_dynamic_only) s.rotary_dim = 4, s.head_dim = std::max<std::size_t>(s.head_dim, 4);
    if (s.rotary_dim >= 4) options.insert(options.end(), {RopeScaling::ntk, RopeScaling::dynamic});
    s.scaling = *rc::gen::elementOf(options);
    s.factor = *rc::gen::element(1.0, 2.0, 4.0, 3.7, 16.0, 64.0, 1048576.0);
    if (s.scaling == RopeScaling::dynamic) {
      s.max_context = *rc::gen::element<std::int64_t>(1, 4096, 131072);
      s.seq_len = *rc::gen::element<std::int64_t>(0, 4096, 4097, 40000, std::int64_t{1} << 40);
    }
    if (s.scaling == RopeScaling::yarn || s.scaling == RopeScaling::llama3)
      s.original_context = *rc::gen::element<std::int64_t>(1, 5, 256, 2048, 4096, 8192, 131072);
    if (s.scaling == RopeScaling::yarn) {
      s.truncate = *rc::gen::arbitrary<bool>();
      s.beta_fast = *rc::gen::element(32.0, 8.0, 1.0e6, 1.0e-3);
      s.beta_slow = *rc::gen::element(1.0, 8.0, 0.5);
      const int m = *rc::gen::inRange(0, 3);
      if (m == 1) s.mscale = s.mscale_all_dim = 0.707;
      if (m == 2) s.mscale = 1.0, s.mscale_all_dim = 0.25;
      if (*rc::gen::inRange(0, 4) == 0) s.attention_factor = 1.5;
    }
    if (s.scaling == RopeScaling::llama3) {
      s.low_freq_factor = *rc::gen::element(1.0, 0.5, 2.0);
      s.high_freq_factor = s.low_freq_factor * *rc::gen::element(4.0, 1.0 + 0x1p-40, 8.0);
    }
    if (s.scaling == RopeScaling::longrope) {
      // L0 >= 2 and factors >= 1 (the spec refuses the rest: RopeOracleErrors), huge ones and non-float32 ones.
      s.original_context = *rc::gen::element<std::int64_t>(2, 256, 4096, 131072);
      s.seq_len = *rc::gen::element<std::int64_t>(0, 255, 4096, 4097, std::int64_t{1} << 40);
      auto list = [&] {
        return *rc::gen::container<std::vector<double>>(
            s.rotary_dim / 2, rc::gen::element(1.0, 1.01, 2.5, 64.0, 1.0e6, 1.0 + 0x1p-52, 3.7, 1.0 / 0.37));
      };
      s.short_factor = list();
      s.long_factor = list();
      if (*rc::gen::inRange(0, 4) == 0) s.attention_factor = 1.5;
    }
    posenc::validate(s);
    return s;
  });
}

// P vs 2P with scaling: theta'_k, m, cos and sin agree (the blend factors' Ziv loops, the range decisions).
RC_GTEST_PROP(RopeOracleScaling, ScaledValuesAt256BitsAgreeWith512Bits, ()) {
  const RopeSpec s = *genScaledSpec(RopeRegime::exact);
  const RopeOracle lo(s, 256), hi(s, 512);
  const std::int64_t p = *genPosition();
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  RC_LOG() << posenc::describe(s) << " p=" << p << " k=" << k << "\n";
  const Real t256 = rope_theta(s, k, 256), t512 = rope_theta(s, k, 512);
  RC_ASSERT(rel_within(t256, t512, -255));
  RC_ASSERT(mpfr_cmp(raw(t512), raw(rope_theta(posenc::without_scaling(s), k, 512))) <= 0);  // theta' <= theta
  RC_ASSERT(mpfr_sgn(raw(t512)) > 0);
  const Real m = rope_attention_factor(s, 512);
  RC_ASSERT(rel_within(rope_attention_factor(s, 256), m, -255));
  const double mw = std::max(1.0, to_d(m));
  RC_ASSERT(within(lo.cos(p, k), hi.cos(p, k), mw, -255));
  RC_ASSERT(within(lo.sin(p, k), hi.sin(p, k), mw, -255));
  RC_CLASSIFY(s.scaling == RopeScaling::yarn, "yarn");
  RC_CLASSIFY(s.scaling == RopeScaling::llama3, "llama3");
  RC_CLASSIFY(s.scaling == RopeScaling::longrope, "longrope");
}

// HF's float32 steps for ntk and dynamic with plain C arithmetic (pow/powf used only where verified correctly
// rounded): the forward path for seq_len > max_context (float32 0-dim tensor ops; the 0-dim pow is a double pow of
// the float, cast back), the init path (Python doubles) otherwise.
RC_GTEST_PROP(RopeOracleScaling, HfNtkAndDynamicMatchPlainArithmetic, ()) {
  const RopeSpec s = *genScaledSpec(RopeRegime::hf, true);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  const double r = static_cast<double>(s.rotary_dim), ex = r / (r - 2.0);
  auto pow_cr = [](double x, double y) {  // is libm's pow correctly rounded here?
    Real t = make_real(300);
    mpfr_pow(raw(t), raw(make_real(x, 64)), raw(make_real(y, 64)), MPFR_RNDN);
    return round_to_double(t) == std::pow(x, y);
  };
  float base32 = 0;
  if (s.scaling == RopeScaling::dynamic && s.seq_len > s.max_context) {
    volatile float x = static_cast<float>(s.factor) * static_cast<float>(s.seq_len);
    x = x / static_cast<float>(s.max_context);
    x = x - static_cast<float>(s.factor - 1.0);
    RC_PRE(pow_cr(double(x), ex));
    const volatile float x4 = static_cast<float>(std::pow(static_cast<double>(x), ex));
    volatile float b = static_cast<float>(s.base) * x4;
    base32 = b;
  } else {
    volatile double a = s.factor;
    if (s.scaling == RopeScaling::dynamic) {
      const double L = double(std::max(s.seq_len, s.max_context)), M = double(s.max_context);
      a = s.factor * L;
      a = a / M;
      a = a - (s.factor - 1.0);
    }
    RC_PRE(pow_cr(a, ex));
    volatile double b = s.base * std::pow(static_cast<double>(a), ex);
    base32 = static_cast<float>(b);
  }
  volatile float e = static_cast<float>(2 * k) / static_cast<float>(s.rotary_dim);
  float inv = 0;
  if (std::isinf(base32)) {
    inv = k == 0 ? 1.0f : 0.0f;
  } else {
    const float pw = std::pow(base32, static_cast<float>(e));
    RC_PRE(is_rn32_of(pw, hp_pow(base32, e)));
    volatile float v = 1.0f / pw;
    inv = v;
  }
  RC_LOG() << posenc::describe(s) << " k=" << k << std::hexfloat << " base'=" << base32 << " inv=" << inv << "\n";
  RC_ASSERT(holds(rope_hf_inv_freq(s, k), inv));
  RC_CLASSIFY(s.scaling == RopeScaling::dynamic && s.seq_len > s.max_context, "dynamic forward");
}

// ggml linear: angle = RN32(RN32(1/RN32(s)) t_k) (llama.cpp rope_freq_scale = 1.0f/factor, rope_yarn with
// ext_factor 0), cos and sin unscaled.
TEST(RopeOracleScaling, GgmlLinearMultipliesTheRecurrenceByFreqScale) {
  for (double factor : {4.0, 3.0, 2.5}) {
    const RopeSpec s = scaled(make_spec(Layout::halves, RopeRegime::ggml, 64, 64, 10000.0), RopeScaling::linear, factor);
    const RopeOracle o(s);
    volatile float fs = 1.0f / static_cast<float>(factor);
    EXPECT_TRUE(holds(rope_ggml_freq_scale(s), fs));
    const float scale = to_d(rope_ggml_theta_scale(s));
    for (std::int64_t p : {std::int64_t{1}, std::int64_t{4095}, std::int64_t{100000}}) {
      volatile float t = static_cast<float>(p);
      for (std::size_t k = 0; k < 32; ++k) {
        volatile float a = fs * t;
        EXPECT_TRUE(holds(o.angle(p, k), a)) << factor << " " << p << " " << k;
        t = t * scale;
      }
    }
    EXPECT_TRUE(holds(o.attention_factor(), 1.0));
  }
}

// ---- ggml YaRN (llama.cpp: ext_factor 1, attn_factor 1; rope.hpp "ggml yarn") ----------------------------------

// llama.cpp's YaRN in plain C float arithmetic, transcribed from ggml (ggml.c ggml_rope_yarn_corr_dim(s),
// ggml-cpu ops.cpp rope_yarn_ramp, rope_yarn, ggml_rope_cache_init), every operation on volatile floats (one
// IEEE rounding each, no contraction). libm's logf/powf are used and `ok` is cleared where they are not correctly
// rounded (the oracle's convention); cosf/sinf are checked by the caller.
struct PlainGgmlYarn {
  float low = 0, high = 0, width = 0, fs = 0, mscale = 0, scale = 0;
  bool ok = true;
  float cmax(float a, float b) const { return a > b ? a : b; }  // ggml's MAX / MIN macros
  float cmin(float a, float b) const { return a < b ? a : b; }
  float logf_checked(float x) {
    const float l = std::log(x);
    ok = ok && is_rn32_of(l, hp_log(x));
    return l;
  }
  // n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)M_PI)) / (2 * logf(base))
  float corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    const float pi32 = static_cast<float>(3.14159265358979323846);
    volatile float t = n_rot * 2;
    t = t * pi32;
    volatile float q = static_cast<float>(n_ctx_orig) / t;
    volatile float num = static_cast<float>(n_dims) * logf_checked(q);
    volatile float den = 2 * logf_checked(base);
    volatile float cd = num / den;
    return cd;
  }
  explicit PlainGgmlYarn(const RopeSpec& s) {
    const int n_dims = static_cast<int>(s.rotary_dim);
    const float base = static_cast<float>(s.base);
    const float start = std::floor(corr_dim(n_dims, static_cast<int>(s.original_context),
                                            static_cast<float>(s.beta_fast), base));
    const float end = std::ceil(corr_dim(n_dims, static_cast<int>(s.original_context),
                                         static_cast<float>(s.beta_slow), base));
    low = cmax(0, start);
    high = cmin(static_cast<float>(n_dims - 1), end);
    volatile float d = high - low;
    width = cmax(0.001f, d);
    volatile float f = 1.0f / static_cast<float>(s.factor);  // llama.cpp rope_freq_scale = 1.0f/ropescale
    fs = f;
    volatile float inv = 1.0f / fs;
    volatile float l = 0.1f * logf_checked(inv);
    volatile float m = 1.0f + l;
    mscale = m;  // attn_factor 1
    volatile float e = -2.0f / static_cast<float>(n_dims);
    scale = std::pow(base, static_cast<float>(e));
    ok = ok && is_rn32_of(scale, hp_pow(base, e));
  }
  // rope_yarn_ramp(low, high, i0 = 2k) * ext_factor (1)
  float mix(std::size_t k) const {
    const int i0 = static_cast<int>(2 * k);
    volatile float num = i0 / 2 - low;
    volatile float y = num / width;
    volatile float r = 1 - cmin(1, cmax(0, y));
    return r;
  }
  // theta_k by ggml_rope_cache_init's recurrence, then rope_yarn's blend
  float angle(std::int64_t p, std::size_t k) const {
    volatile float t = static_cast<float>(p);
    for (std::size_t j = 0; j < k; ++j) t = t * scale;
    const float ramp_mix = mix(k);
    volatile float interp = fs * t;
    volatile float one_minus = 1 - ramp_mix;
    volatile float a = interp * one_minus, b = t * ramp_mix;
    volatile float theta = a + b;
    return theta;
  }
};

// A ggml YaRN spec: r = 8 (or r), base 1e4, s, L0, betas; attn_factor 1 and truncate as the spec requires.
RopeSpec ggml_yarn(std::size_t r, double factor, std::int64_t l0, double beta_fast = 32.0, double beta_slow = 1.0,
                   Layout layout = Layout::halves, double base = 10000.0) {
  RopeSpec s = make_spec(layout, RopeRegime::ggml, r, r, base);
  s.scaling = RopeScaling::yarn;
  s.factor = factor;
  s.original_context = l0;
  s.beta_fast = beta_fast;
  s.beta_slow = beta_slow;
  posenc::validate(s);
  return s;
}

// The hand case r = 8, base 1e4, s = 4, L0 = 4096. Here r / (2 ln base) = 8 / (8 ln 10) = 1 / ln 10, so
//   cd(beta) = log10(L0 / (2 pi beta)):
//   cd(32)   = log10(4096 / (64 pi))  = log10(20.371832...)  = 1.309032...  -> floor 1 = low
//   cd(1)    = log10(4096 / (2 pi))   = log10(651.89864...)  = 2.814180...  -> ceil  3 = high   (<= r - 1 = 7)
//   cd(0.25) = log10(4096 / (pi / 2)) = log10(2607.5945...)  = 3.416240...  -> ceil  4
// (all far from integers: float32 gives the same floor/ceil). Width 2 (resp. 3), y_k = (k - 1) / 2 (resp. / 3):
//   beta_slow 1:    mix = 1 - clamp(y) = {1, 1, 1/2, 0}: pairs 0, 1 keep t_k, pair 2 averages, pair 3 = RN32(t_3 / 4)
//   beta_slow 0.25: mix = {1, 1, RN32(1 - RN32(1/3)), RN32(1 - RN32(2/3))}
// fs = RN32(1 / 4) = 1/4, 1/fs = 4, M = RN32(1 + RN32(0.1f RN32(ln 4))) = 1.1386294... (ln 4 = 1.3862943611...).
TEST(RopeOracleScaling, GgmlYarnHandCase) {
  for (double beta_slow : {1.0, 0.25}) {
    for (Layout layout : {Layout::halves, Layout::interleaved}) {
      const RopeSpec s = ggml_yarn(8, 4.0, 4096, 32.0, beta_slow, layout);
      SCOPED_TRACE(posenc::describe(s));
      const RopeGgmlYarnRange range = rope_ggml_yarn_correction_range(s);
      EXPECT_EQ(range.low, 1.0f);
      EXPECT_EQ(range.high, beta_slow == 1.0 ? 3.0f : 4.0f);
      EXPECT_EQ(range.width, beta_slow == 1.0 ? 2.0f : 3.0f);
      const float third = 1.0f / 3.0f, two_thirds = 2.0f / 3.0f;
      const std::array<float, 4> mix = beta_slow == 1.0
                                           ? std::array<float, 4>{1.0f, 1.0f, 0.5f, 0.0f}
                                           : std::array<float, 4>{1.0f, 1.0f, 1.0f - third, 1.0f - two_thirds};
      for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(rope_ggml_yarn_mix(s, k), mix[k]) << k;
      EXPECT_TRUE(holds(rope_ggml_freq_scale(s), 0.25));
      const PlainGgmlYarn plain(s);
      ASSERT_TRUE(plain.ok);  // logf(4), logf(20.37..), logf(10000), powf: correctly rounded here
      EXPECT_EQ(plain.low, range.low);
      EXPECT_EQ(plain.high, range.high);
      EXPECT_EQ(plain.mscale, rope_ggml_yarn_mscale(s));
      EXPECT_NEAR(plain.mscale, 1.0 + 0.1 * std::log(4.0), 1e-6);
      const RopeOracle o(s);
      EXPECT_TRUE(holds(o.attention_factor(), plain.mscale));
      const RopeOracle unscaled(posenc::without_scaling(s));
      int checked = 0;
      for (std::int64_t p : {std::int64_t{1}, std::int64_t{7}, std::int64_t{4095}, std::int64_t{100000},
                             std::int64_t{1} << 30, -std::int64_t{12345}}) {
        for (std::size_t k = 0; k < 4; ++k) {
          const float a = plain.angle(p, k);
          EXPECT_TRUE(holds(o.angle(p, k), a)) << p << " " << k << " " << show(o.angle(p, k));
          if (mix[k] == 1.0f) {
            EXPECT_TRUE(same(o.angle(p, k), unscaled.angle(p, k)));  // t_k itself
          }
          const float cv = std::cos(a), sv = std::sin(a);
          if (!is_rn32_of(cv, hp_cos(a)) || !is_rn32_of(sv, hp_sin(a))) continue;
          volatile float c = cv * plain.mscale, sn = sv * plain.mscale;  // cosf(theta) * mscale
          EXPECT_TRUE(holds(o.cos(p, k), c)) << p << " " << k;
          EXPECT_TRUE(holds(o.sin(p, k), sn)) << p << " " << k;
          std::vector<double> x(8, 0.0);
          const auto ch = rope_pair_channels(s, k);
          x[ch.first] = 0.75;
          x[ch.second] = -1.5;
          float yi = 0, yj = 0;
          plain_rotate(0.75f, -1.5f, c, sn, yi, yj);
          const auto y = o.rotate(p, x);
          EXPECT_TRUE(holds(y[ch.first], yi));
          EXPECT_TRUE(holds(y[ch.second], yj));
          plain_rotate(0.75f, -1.5f, c, -sn, yi, yj);  // rope_back: sin_sign = -1
          const auto yb = o.rotate(p, x, true);
          EXPECT_TRUE(holds(yb[ch.first], yi));
          EXPECT_TRUE(holds(yb[ch.second], yj));
          ++checked;
        }
      }
      EXPECT_GT(checked, 15);
      // pair 2 at p = 4095 with beta_slow 1: RN32(RN32(t/4 * 1/2) + RN32(t * 1/2)) = RN32(5 t / 8), between the
      // interpolated RN32(t/4) and the extrapolated t
      const double t2 = to_d(unscaled.angle(4095, 2)), a2 = to_d(o.angle(4095, 2));
      EXPECT_GT(a2, t2 / 4);
      EXPECT_LT(a2, t2);
    }
  }
}

// llama.cpp's YaRN against plain C float arithmetic over random specs (r, base, s, L0, betas, p, k), where libm's
// logf/powf/cosf/sinf are correctly rounded; includes correction ranges with high <= low (beta_fast below
// beta_slow, or floor(cd(beta_fast)) > r - 1: ggml divides by 0.001f) and L0 = 1 (cd < 0).
RC_GTEST_PROP(RopeOracleScaling, GgmlYarnMatchesPlainFloatArithmetic, ()) {
  RopeSpec s = *genSpec(false, 128);
  s.regime = RopeRegime::ggml;
  s.scaling = RopeScaling::yarn;
  s.factor = *rc::gen::element(1.0, 2.0, 4.0, 3.7, 16.0, 64.0, 1048576.0, 1.0 + 0x1p-30);
  s.original_context = *rc::gen::element<std::int64_t>(1, 5, 256, 2048, 4096, 8192, 131072, (std::int64_t{1} << 31) - 1);
  s.beta_fast = *rc::gen::element(32.0, 32.0, 32.0, 8.0, 1.0e6, 1.0e-3, 1.0, 0.1);
  s.beta_slow = *rc::gen::element(1.0, 1.0, 1.0, 8.0, 0.5, 32.0, 0.3);
  posenc::validate(s);
  const RopeOracle o(s);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  const std::int64_t p = *genPosition();
  const PlainGgmlYarn plain(s);
  RC_PRE(plain.ok);
  RC_LOG() << posenc::describe(s) << " k=" << k << " p=" << p << std::hexfloat << " low=" << plain.low
           << " high=" << plain.high << " mix=" << plain.mix(k) << " M=" << plain.mscale << "\n";
  const RopeGgmlYarnRange range = rope_ggml_yarn_correction_range(s);
  RC_ASSERT(range.low == plain.low);
  RC_ASSERT(range.high == plain.high);
  RC_ASSERT(range.width == plain.width);
  RC_ASSERT(rope_ggml_yarn_mix(s, k) == plain.mix(k));
  RC_ASSERT(rope_ggml_yarn_mscale(s) == plain.mscale);
  RC_ASSERT(holds(o.attention_factor(), plain.mscale));
  const float a = plain.angle(p, k);
  RC_ASSERT(holds(o.angle(p, k), a));
  const float cv = std::cos(a), sv = std::sin(a);
  const bool ok = is_rn32_of(sv, hp_sin(a)) && is_rn32_of(cv, hp_cos(a));
  RC_CLASSIFY(!ok, "libm sinf/cosf not correctly rounded here (rest skipped)");
  RC_CLASSIFY(plain.high <= plain.low, "high <= low");
  RC_CLASSIFY(plain.mix(k) > 0 && plain.mix(k) < 1, "blended pair");
  if (!ok) return;
  volatile float c = cv * plain.mscale, sn = sv * plain.mscale;
  RC_ASSERT(holds(o.cos(p, k), c));
  RC_ASSERT(holds(o.sin(p, k), sn));
}

// factor 1: fs = 1, 1/fs = 1, logf(1) = 0, so M = 1 exactly (cos and sin unscaled). The ramp still blends: a pair
// with 0 < mix < 1 has RN32(RN32(t (1 - mix)) + RN32(t mix)), which need not be t_k; pairs with mix 0 or 1 are
// t_k bit for bit.
TEST(RopeOracleScaling, GgmlYarnFactorOneHasMscaleOne) {
  const RopeSpec s = ggml_yarn(128, 1.0, 4096, 32.0, 1.0);
  const RopeOracle o(s), plain(posenc::without_scaling(s));
  EXPECT_EQ(rope_ggml_yarn_mscale(s), 1.0f);
  EXPECT_TRUE(holds(o.attention_factor(), 1.0));
  EXPECT_TRUE(holds(rope_ggml_freq_scale(s), 1.0));
  int blended = 0, differ = 0;
  for (std::int64_t p : {std::int64_t{3}, std::int64_t{4095}, std::int64_t{100000}, std::int64_t{1} << 30}) {
    for (std::size_t k = 0; k < 64; ++k) {
      const float mix = rope_ggml_yarn_mix(s, k);
      const Real t = plain.angle(p, k);
      const float tf = static_cast<float>(to_d(t));
      volatile float u = 1 - mix, x = tf * u, y = tf * mix, a = x + y;
      EXPECT_TRUE(holds(o.angle(p, k), a)) << p << " " << k;
      if (mix == 0.0f || mix == 1.0f) {
        EXPECT_TRUE(same(o.angle(p, k), t)) << p << " " << k;
        EXPECT_TRUE(same(o.cos(p, k), plain.cos(p, k)));
        EXPECT_TRUE(same(o.sin(p, k), plain.sin(p, k)));
      } else {
        ++blended;
        differ += !same(o.angle(p, k), t);
      }
    }
  }
  EXPECT_GT(blended, 0);
  std::printf("ggml yarn, factor 1, r = 128, L0 = 4096: %d of %d blended (pair, position) angles differ from t_k\n",
              differ, blended);
}

// hf yarn: the cache is RN32(RN32(cos a) RN32(m)) (emb.cos() * self.attention_scaling), checked with plain float
// arithmetic where cosf/sinf are correctly rounded; the rotation uses those values.
TEST(RopeOracleScaling, HfCacheIsCosTimesFloat32AttentionFactor) {
  for (const RopeSpec& s : {yarn_spec(RopeRegime::hf), longrope_spec(RopeRegime::hf, 8192)}) {
  SCOPED_TRACE(posenc::describe(s));
  const RopeOracle o(s);
  const float m32 = static_cast<float>(rope_hf_attention_factor(s));
  EXPECT_NE(m32, 1.0f);
  EXPECT_TRUE(holds(o.attention_factor(), m32));
  int checked = 0;
  for (std::int64_t p : {std::int64_t{1}, std::int64_t{4095}, std::int64_t{100000}, std::int64_t{1} << 30}) {
    for (std::size_t k = 0; k < 32; ++k) {
      const float a = to_d(o.angle(p, k));
      EXPECT_TRUE(holds(o.angle(p, k), double(static_cast<float>(p) * static_cast<float>(to_d(rope_hf_inv_freq(s, k))))));
      const float cv = std::cos(a), sv = std::sin(a);
      if (!is_rn32_of(cv, hp_cos(a)) || !is_rn32_of(sv, hp_sin(a))) continue;
      volatile float c = cv * m32, sn = sv * m32;
      EXPECT_TRUE(holds(o.cos(p, k), c));
      EXPECT_TRUE(holds(o.sin(p, k), sn));
      std::vector<double> x(64, 0.0);
      x[k] = 0.75;
      x[k + 32] = -1.5;
      float yi = 0, yj = 0;
      plain_rotate(0.75f, -1.5f, c, sn, yi, yj);
      const auto y = o.rotate(p, x);
      EXPECT_TRUE(holds(y[k], yi));
      EXPECT_TRUE(holds(y[k + 32], yj));
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
  }
}

// ---- LongRoPE (CONVENTIONS.md §2.11 longrope; HF v5 _compute_longrope_parameters) ----------------------------

std::string error_parameter(const std::function<void()>& f) {
  try {
    f();
  } catch (const posenc::Error& e) {
    return std::string(e.parameter());
  }
  return std::string();
}

const std::vector<double> kHandShort = {1.0, 1.5, 2.0, 4.0}, kHandLong = {2.0, 3.0, 5.0, 7.0};

// theta'_k = theta_k / e_k, e = short_factor while seq_len <= L0 (0: at init), long_factor beyond. The hand case
// (r = 8, base 1e4) has theta_k = 10^-k exactly, so theta'_k = 1 / (10^k e_k), checked
//   (a) against long double: powl(10000, -2k/8) / e_k (powl and the division within a few ulp of 2^-64: 2^-58);
//   (b) against the rational 1 / (10^k e_k) rounded once at 1024 bits (2^-254: the oracle's 256-bit rounding);
// and RopeOracle's cos/sin are m cos(p theta'_k), m sin(p theta'_k) with m = sqrt(17/12) (next test), the angle
// formed here at 1024 bits from the rational.
TEST(RopeOracleScaling, LongropeThetaIsThetaOverTheFactorOfTheLength) {
  const RopeSpec plain = posenc::without_scaling(longrope_hand(0));
  Real m = make_real(1024);
  mpfr_set_ui(raw(m), 17, MPFR_RNDN);
  mpfr_div_ui(raw(m), raw(m), 12, MPFR_RNDN);
  mpfr_sqrt(raw(m), raw(m), MPFR_RNDN);
  for (std::int64_t L : {std::int64_t{0}, std::int64_t{4096}, std::int64_t{4097}}) {
    const RopeSpec s = longrope_hand(L);
    const std::vector<double>& e = L > 4096 ? kHandLong : kHandShort;
    const RopeOracle o(s);
    for (std::size_t k = 0; k < 4; ++k) {
      const Real got = rope_theta(s, k);
      const long double ld = powl(10000.0L, -static_cast<long double>(2 * k) / 8.0L) / static_cast<long double>(e[k]);
      Real want_ld = make_real(64);
      mpfr_set_ld(raw(want_ld), ld, MPFR_RNDN);
      EXPECT_TRUE(rel_within(got, want_ld, -58)) << "seq_len " << L << " k=" << k << " " << show(got);
      Real want = make_real(1024);
      mpfr_ui_pow_ui(raw(want), 10, static_cast<unsigned long>(k), MPFR_RNDN);  // exact
      mpfr_mul_d(raw(want), raw(want), e[k], MPFR_RNDN);                          // exact
      mpfr_ui_div(raw(want), 1, raw(want), MPFR_RNDN);
      EXPECT_TRUE(rel_within(got, want, -254)) << "seq_len " << L << " k=" << k << " " << show(got);
      if (e[k] == 1.0) {
        EXPECT_TRUE(same(got, rope_theta(plain, k))) << k;  // the unscaled bits
      }
      for (std::int64_t p : {std::int64_t{1}, std::int64_t{-4097}, std::int64_t{123456789}, kMaxP}) {
        Real a = make_real(1024), c = make_real(1024), sn = make_real(1024);
        mpfr_mul_si(raw(a), raw(want), static_cast<long>(p), MPFR_RNDN);
        mpfr_sin_cos(raw(sn), raw(c), raw(a), MPFR_RNDN);
        mpfr_mul(raw(c), raw(c), raw(m), MPFR_RNDN);
        mpfr_mul(raw(sn), raw(sn), raw(m), MPFR_RNDN);
        EXPECT_TRUE(within(o.cos(p, k), c, 1.0, -255)) << "seq_len " << L << " p=" << p << " k=" << k;
        EXPECT_TRUE(within(o.sin(p, k), sn, 1.0, -255)) << "seq_len " << L << " p=" << p << " k=" << k;
      }
    }
  }
  // seq_len 0 and seq_len = L0 take the short factors (the same bits), L0 + 1 the long ones (every pair differs)
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_TRUE(same(rope_theta(longrope_hand(0), k), rope_theta(longrope_hand(4096), k))) << k;
    EXPECT_FALSE(same(rope_theta(longrope_hand(4096), k), rope_theta(longrope_hand(4097), k))) << k;
  }
}

// m = sqrt(1 + ln s / ln L0) with L0 = 4096 = 2^12, s = 32 = 2^5: ln s / ln L0 = 5/12 exactly, m = sqrt(17/12) =
// 1.1902380714238082...; HF's Python double is 1.1902380714238083 (held-out rope_scaling.json, factor derived
// from max_position_embeddings 131072). s = 1 gives 1; a given attention_factor replaces it; the list and seq_len
// do not matter. RopeOracle: m itself (exact), RN32(m_hf) (hf).
TEST(RopeOracleScaling, LongropeAttentionFactor) {
  Real want = make_real(1024);
  mpfr_set_ui(raw(want), 17, MPFR_RNDN);
  mpfr_div_ui(raw(want), raw(want), 12, MPFR_RNDN);
  mpfr_sqrt(raw(want), raw(want), MPFR_RNDN);
  Real want_ld = make_real(64);
  mpfr_set_ld(raw(want_ld), sqrtl(17.0L / 12.0L), MPFR_RNDN);
  for (std::int64_t L : {std::int64_t{0}, std::int64_t{4096}, std::int64_t{4097}}) {
    const RopeSpec s = longrope_hand(L);
    EXPECT_TRUE(rel_within(rope_attention_factor(s), want, -254)) << show(rope_attention_factor(s));
    EXPECT_TRUE(rel_within(rope_attention_factor(s), want_ld, -62));
    EXPECT_TRUE(same(RopeOracle(s).attention_factor(), rope_attention_factor(s)));
    EXPECT_EQ(rope_hf_attention_factor(s), 1.1902380714238083);
    EXPECT_TRUE(holds(RopeOracle(with_regime(s, RopeRegime::hf)).attention_factor(), double(1.1902380714238083f)));
    RopeSpec one = s;
    one.factor = 1.0;
    posenc::validate(one);
    EXPECT_TRUE(holds(rope_attention_factor(one), 1.0));
    EXPECT_EQ(rope_hf_attention_factor(one), 1.0);
    EXPECT_TRUE(holds(RopeOracle(with_regime(one, RopeRegime::hf)).attention_factor(), 1.0));
    RopeSpec given = s;
    given.attention_factor = 1.25;
    posenc::validate(given);
    EXPECT_TRUE(holds(rope_attention_factor(given), 1.25));
    EXPECT_EQ(rope_hf_attention_factor(given), 1.25);
    EXPECT_TRUE(holds(RopeOracle(with_regime(given, RopeRegime::hf)).attention_factor(), 1.25));
  }
  // s only enters m: with every factor 1 and s = 1, longrope is the unscaled RoPE, bit for bit in both regimes
  RopeSpec unit = longrope_spec(RopeRegime::exact, 0);
  unit.factor = 1.0;
  unit.short_factor.assign(32, 1.0);
  posenc::validate(unit);
  const RopeSpec plain = posenc::without_scaling(unit);
  for (std::size_t k = 0; k < 32; ++k) {
    EXPECT_TRUE(same(rope_theta(unit, k), rope_theta(plain, k))) << k;
    EXPECT_TRUE(same(rope_hf_inv_freq(unit, k), rope_hf_inv_freq(plain, k))) << k;
  }
  EXPECT_TRUE(same(RopeOracle(unit).cos(48039, 7), RopeOracle(plain).cos(48039, 7)));
}

// hf: inv_k = RN32(1 / RN32(RN32(e_k) P_k)), P_k = RN32(pow(RN32(1e4), RN32(RN32(2k) / RN32(8)))). The exponents
// are 0, 1/4, 1/2, 3/4 (exact in float32) and 10000^(2k/8) = 10^k is an integer below 2^24, a float32 number:
// P_k = 1, 10, 100, 1000 exactly. powl (64-bit significand, within a few ulp: ~2^-61 relative) therefore suffices:
// every value within 2^-25 relative of a float32 number rounds to it, so (float)powl(...) is P_k (checked against
// 10^k). The rest is plain float arithmetic (volatile: one IEEE rounding per step); the angle RN32(RN32(p) inv_k).
TEST(RopeOracleScaling, LongropeHfInvFreqByHand) {
  const float tens[] = {1.0f, 10.0f, 100.0f, 1000.0f};
  for (std::int64_t L : {std::int64_t{0}, std::int64_t{4096}, std::int64_t{4097}}) {
    const RopeSpec s = longrope_hand(L, RopeRegime::hf);
    const std::vector<double>& e = L > 4096 ? kHandLong : kHandShort;
    const RopeOracle o(s);
    for (std::size_t k = 0; k < 4; ++k) {
      volatile float ex = static_cast<float>(2 * k) / static_cast<float>(8);
      const float pk = static_cast<float>(powl(static_cast<long double>(10000.0f), static_cast<long double>(ex)));
      EXPECT_EQ(pk, tens[k]);
      volatile float d = static_cast<float>(e[k]) * pk;
      volatile float inv = 1.0f / d;
      EXPECT_TRUE(holds(rope_hf_inv_freq(s, k), inv)) << "seq_len " << L << " k=" << k << " "
                                                      << show(rope_hf_inv_freq(s, k)) << " vs " << inv;
      EXPECT_TRUE(holds(rope_emulated_frequency(s, k), inv));
      for (std::int64_t p : {std::int64_t{1}, std::int64_t{4097}, std::int64_t{100000}}) {
        volatile float a = static_cast<float>(p) * inv;
        EXPECT_TRUE(holds(o.angle(p, k), a)) << p << " " << k;
      }
    }
  }
}

// hf longrope with plain C float arithmetic for any r and base and factors that are not float32 numbers
// (torch.tensor(list, dtype=float32) is a rounding step of its own); powf used only where verified correctly
// rounded. m_hf likewise from C's log and sqrt (IEEE sqrt; log used only where verified correctly rounded).
RC_GTEST_PROP(RopeOracleScaling, HfLongropeMatchesPlainFloatArithmetic, ()) {
  RopeSpec s = *genSpec(false, 128);
  s.regime = RopeRegime::hf;
  s.scaling = RopeScaling::longrope;
  s.factor = *rc::gen::element(1.0, 32.0, 3.7, 1048576.0);
  s.original_context = *rc::gen::element<std::int64_t>(2, 4096, 131072, 1000003);
  s.seq_len = *rc::gen::element<std::int64_t>(0, 4096, 4097, 131073, std::int64_t{1} << 40);
  const auto gen_e = rc::gen::oneOf(rc::gen::element(1.0, 1.01, 1.0 / 0.37, 1.0e6, 4.0 / 3.0),
                                    rc::gen::map(rc::gen::inRange(1000, 1000000), [](int n) { return n / 1000.0; }));
  s.short_factor = *rc::gen::container<std::vector<double>>(s.rotary_dim / 2, gen_e);
  s.long_factor = *rc::gen::container<std::vector<double>>(s.rotary_dim / 2, gen_e);
  posenc::validate(s);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  const double e = s.seq_len > s.original_context ? s.long_factor[k] : s.short_factor[k];
  volatile float ex = static_cast<float>(2 * k) / static_cast<float>(s.rotary_dim);
  const float base32 = static_cast<float>(s.base);
  const float pw = std::pow(base32, static_cast<float>(ex));
  RC_PRE(is_rn32_of(pw, hp_pow(base32, ex)));
  volatile float d = static_cast<float>(e) * pw;
  volatile float inv = 1.0f / d;
  RC_LOG() << posenc::describe(s) << " k=" << k << std::hexfloat << " e=" << e << " inv=" << inv << "\n";
  RC_ASSERT(holds(rope_hf_inv_freq(s, k), inv));
  auto log_cr = [](double x) {
    Real t = make_real(300);
    mpfr_log(raw(t), raw(make_real(x, 64)), MPFR_RNDN);
    return round_to_double(t) == std::log(x);
  };
  const double l0 = static_cast<double>(s.original_context);
  RC_PRE(log_cr(s.factor) && log_cr(l0));
  volatile double q = std::log(s.factor) / std::log(l0);
  volatile double one_q = 1.0 + q;
  const double m = s.factor <= 1.0 ? 1.0 : std::sqrt(static_cast<double>(one_q));
  RC_ASSERT(rope_hf_attention_factor(s) == m);
  RC_CLASSIFY(s.seq_len > s.original_context, "long factors");
}

// The longrope specs the oracle could not evaluate are refused by the spec, naming the field: L0 = 1 (ln L0 = 0
// divides the attention factor; HF raises ZeroDivisionError) and factors below 1 (LongRoPE's rescale factors are
// >= 1; a tiny one overflows HF's float32 inv_freq). A given attention_factor with factor 1 needs no logarithm.
TEST(RopeOracleErrors, LongropeSpecsWithoutAValueNameTheField) {
  RopeSpec s = longrope_hand(0);
  s.original_context = 1;
  EXPECT_EQ(error_parameter([&] { posenc::validate(s); }), "original_context");
  EXPECT_EQ(error_parameter([&] { RopeOracle{s}; }), "original_context");
  RopeSpec one = longrope_hand(0);
  one.factor = 1.0;
  EXPECT_TRUE(holds(rope_attention_factor(one), 1.0));
  one.attention_factor = 1.5;
  EXPECT_TRUE(holds(rope_attention_factor(one), 1.5));

  RopeSpec tiny = longrope_hand(0, RopeRegime::hf);
  tiny.short_factor[3] = 1.0e-45;
  EXPECT_EQ(error_parameter([&] { posenc::validate(tiny); }), "short_factor");
  EXPECT_EQ(error_parameter([&] { RopeOracle{tiny}; }), "short_factor");
  tiny.short_factor[3] = 4.0;
  tiny.long_factor[0] = 0.5;
  EXPECT_EQ(error_parameter([&] { RopeOracle{tiny}; }), "long_factor");
  tiny.long_factor.pop_back();
  tiny.long_factor[0] = 2.0;
  EXPECT_EQ(error_parameter([&] { RopeOracle{tiny}; }), "long_factor");  // one per pair
}

TEST(RopeOracleScaling, ScalingSpecificFunctionsNameScaling) {
  const RopeSpec plain = make_spec(Layout::halves, RopeRegime::exact, 64, 64, 10000.0);
  auto param = [](auto f) {
    try {
      f();
    } catch (const posenc::Error& e) {
      return std::string(e.parameter());
    }
    return std::string();
  };
  EXPECT_EQ(param([&] { rope_yarn_correction_range(plain); }), "scaling");
  EXPECT_EQ(param([&] { rope_hf_yarn_correction_range(llama3_spec()); }), "scaling");
  EXPECT_EQ(param([&] { rope_llama3_band(yarn_spec(), 0); }), "scaling");
  EXPECT_EQ(param([&] { rope_hf_llama3_band(plain, 0); }), "scaling");
  EXPECT_EQ(param([&] { rope_hf_dynamic_init_inv_freq(yarn_spec(), 0); }), "scaling");
  EXPECT_EQ(param([&] { rope_ggml_freq_scale(llama3_spec()); }), "scaling");
  EXPECT_EQ(param([&] { rope_ggml_yarn_correction_range(plain); }), "scaling");
  EXPECT_EQ(param([&] { rope_ggml_yarn_mix(llama3_spec(), 0); }), "scaling");
  EXPECT_EQ(param([&] { rope_ggml_yarn_mscale(plain); }), "scaling");
  EXPECT_EQ(param([&] { rope_ggml_yarn_mix(yarn_spec(), 32); }), "k");
  EXPECT_EQ(param([&] { rope_llama3_band(llama3_spec(), 64); }), "k");
  RopeSpec bad = plain;
  bad.factor = 2.0;  // scaling none keeps factor 1
  EXPECT_EQ(param([&] { rope_theta(bad, 0); }), "factor");
}

// ======================================================================================================
// RopeOracleHeldout: HF 5.17's own ROPE_INIT_FUNCTIONS output (properties/heldout/data/hf/rope_scaling.json,
// transformers 5.17.0, PyTorch 2.11.0 CPU; the init function called with seq_len None or a Python int)
// ======================================================================================================

nlohmann::json load_heldout(const std::string& name) {
  const std::string path = std::string(POSENC_SOURCE_DIR) + "/properties/heldout/data/hf/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

// For every configuration and seq_len:
//   * m_hf equals HF's attention factor to 1e-15 relative (and so does the exact m);
//   * the hf inv'_k is within 1 float32 ulp of HF's (torch's vectorized powf is not correctly rounded: allowed),
//     and the bit-identical entries are counted;
//   * dynamic: HF's file holds the init function called with a Python int seq_len, i.e. the double path
//     base * ((s L / M) - (s - 1)) ** (d / (d - 2)) in Python doubles, which rope_hf_dynamic_init_inv_freq models
//     (held to <= 1 ulp like the others). The module's forward (rope_hf_inv_freq at seq_len = L > M) forms the base
//     in float32 0-dim tensors instead, so it is not the same float32 base: held to <= 2 ulp, counted;
//   * the exact theta'_k is within 4e-6 relative of HF's float32 values (the definition, not the rounding).
//   longrope: no factor in the file, so HF's factor = max_position_embeddings / original_max_position_embeddings
//   (= 32: m = sqrt(17/12)); seq_len None and 1024 take the short factors, 8192 and 40000 the long ones.
TEST(RopeOracleHeldout, ScalingMatchesHf517InvFreqAndAttentionFactor) {
  const nlohmann::json data = load_heldout("rope_scaling.json");
  int configs = 0;
  for (const auto& cfg : data) {
    const std::string tag = cfg["tag"];
    const auto& rp = cfg["rope_parameters"];
    const std::string type = rp["rope_type"];
    ++configs;
    RopeSpec s;
    s.layout = Layout::halves;
    s.regime = RopeRegime::hf;
    s.head_dim = s.rotary_dim = cfg["head_dim"].get<std::size_t>();
    s.base = cfg["rope_theta"].get<double>();
    s.factor = type == "longrope" && !rp.contains("factor")
                   ? double(cfg["max_position_embeddings"].get<std::int64_t>()) /
                         double(rp["original_max_position_embeddings"].get<std::int64_t>())
                   : rp["factor"].get<double>();
    if (type == "linear") s.scaling = RopeScaling::linear;
    if (type == "dynamic") {
      s.scaling = RopeScaling::dynamic;
      s.max_context = cfg["max_position_embeddings"].get<std::int64_t>();
    }
    if (type == "yarn") {
      s.scaling = RopeScaling::yarn;
      s.original_context = rp["original_max_position_embeddings"].get<std::int64_t>();
      s.beta_fast = rp.value("beta_fast", 32.0);
      s.beta_slow = rp.value("beta_slow", 1.0);
      s.mscale = rp.value("mscale", 0.0);
      s.mscale_all_dim = rp.value("mscale_all_dim", 0.0);
      s.attention_factor = rp.value("attention_factor", 0.0);
      s.truncate = rp.value("truncate", true);
    }
    if (type == "llama3") {
      s.scaling = RopeScaling::llama3;
      s.original_context = rp["original_max_position_embeddings"].get<std::int64_t>();
      s.low_freq_factor = rp["low_freq_factor"].get<double>();
      s.high_freq_factor = rp["high_freq_factor"].get<double>();
    }
    if (type == "longrope") {
      s.scaling = RopeScaling::longrope;
      s.original_context = rp["original_max_position_embeddings"].get<std::int64_t>();
      s.attention_factor = rp.value("attention_factor", 0.0);
      s.short_factor = rp["short_factor"].get<std::vector<double>>();
      s.long_factor = rp["long_factor"].get<std::vector<double>>();
    }
    ASSERT_NE(s.scaling, RopeScaling::none) << tag;
    for (const auto& [seq, v] : cfg["by_seq_len"].items()) {
      if (s.scaling == RopeScaling::dynamic || s.scaling == RopeScaling::longrope)
        s.seq_len = seq == "None" ? 0 : std::stoll(seq);
      posenc::validate(s);
      const double af = v["attention_factor"].get<double>();
      EXPECT_NEAR(rope_hf_attention_factor(s), af, 1e-15 * af) << tag << " " << seq;
      EXPECT_NEAR(to_d(rope_attention_factor(s)), af, 1e-15 * af) << tag << " " << seq;
      const auto& inv = v["inv_freq"];
      ASSERT_EQ(inv.size(), s.rotary_dim / 2) << tag;
      int identical = 0, forward_identical = 0, max_ulps = 0, forward_max = 0;
      double worst_rel = 0;
      for (std::size_t k = 0; k < inv.size(); ++k) {
        const double want = inv[k].get<double>();
        ASSERT_EQ(want, double(static_cast<float>(want))) << tag;  // float32 values
        const double got = to_d(s.scaling == RopeScaling::dynamic ? rope_hf_dynamic_init_inv_freq(s, k)
                                                                  : rope_hf_inv_freq(s, k));
        const long d = ulps32(got, want);
        EXPECT_LE(d, 1) << tag << " seq_len " << seq << " k=" << k << " got " << got << " HF " << want;
        identical += d == 0;
        max_ulps = std::max(max_ulps, int(d));
        if (s.scaling == RopeScaling::dynamic) {
          const long f = ulps32(to_d(rope_hf_inv_freq(s, k)), want);
          EXPECT_LE(f, 2) << tag << " forward, seq_len " << seq << " k=" << k;
          forward_identical += f == 0;
          forward_max = std::max(forward_max, int(f));
        }
        const double t = to_d(rope_theta(with_regime(s, RopeRegime::exact), k));
        worst_rel = std::max(worst_rel, std::fabs(t - want) / t);
      }
      EXPECT_LT(worst_rel, 4e-6) << tag << " " << seq;
      std::printf("heldout %-13s seq_len %-6s: %2d/%zu inv_freq bit-identical (max %d ulp)", tag.c_str(), seq.c_str(),
                  identical, inv.size(), max_ulps);
      if (s.scaling == RopeScaling::dynamic)
        std::printf("; forward path %2d/%zu (max %d ulp)", forward_identical, inv.size(), forward_max);
      std::printf("; exact theta' within %.2g relative; m %.17g\n", worst_rel, af);
    }
  }
  EXPECT_EQ(configs, 7);
}

// ======================================================================================================
// RopeOracleMrope: multimodal RoPE (three positions per token). The axis rule is checked against literal
// transcriptions of HF's own code (Qwen2-VL split-and-select on the duplicated [c | c] rows, Qwen3-VL's slice
// assignment), not against the formula the oracle implements; the values against the one-position oracle.
// ======================================================================================================

// Sections (s_t, s_h, s_w) summing to h, zeros included, each axis as likely to get the large share.
rc::Gen<std::vector<std::int64_t>> genSections(std::size_t h) {
  return rc::gen::exec([=] {
    const auto hh = static_cast<std::int64_t>(h);
    const std::int64_t a = *rc::gen::inRange<std::int64_t>(0, hh + 1);
    const std::int64_t b = *rc::gen::inRange<std::int64_t>(0, hh - a + 1);
    std::vector<std::int64_t> s = {a, b, hh - a - b};
    std::rotate(s.begin(), s.begin() + *rc::gen::inRange(0, 3), s.end());
    return s;
  });
}

rc::Gen<RopeSpec> genMropeSpec(bool emulated_allowed, RopeMrope mrope) {
  return rc::gen::exec([=] {
    RopeSpec s = *genSpec(emulated_allowed);
    s.mrope = mrope;
    s.mrope_section = *genSections(s.rotary_dim / 2);
    posenc::validate(s);
    return s;
  });
}
rc::Gen<RopeSpec> genMropeSpec(bool emulated_allowed) {
  return rc::gen::exec([=] {
    return *genMropeSpec(emulated_allowed, *rc::gen::element(RopeMrope::sections, RopeMrope::interleaved));
  });
}

// (t, h, w): independent positions, or some of them equal.
rc::Gen<RopeMropePosition> genMropePosition() {
  return rc::gen::exec([] {
    RopeMropePosition pos = {*genPosition(), *genPosition(), *genPosition()};
    const int kind = *rc::gen::inRange(0, 4);
    if (kind == 1) pos[2] = pos[1];
    if (kind == 2) pos[1] = pos[0];
    return pos;
  });
}

RopeSpec one_position(RopeSpec s) {
  s.mrope = RopeMrope::none;
  s.mrope_section.clear();
  posenc::validate(s);
  return s;
}

RopeSpec mrope_spec(RopeMrope mrope, std::vector<std::int64_t> section, std::size_t head_dim, double base,
                    RopeRegime regime = RopeRegime::exact) {
  RopeSpec s = make_spec(Layout::halves, regime, head_dim, head_dim, base);
  s.mrope = mrope;
  s.mrope_section = std::move(section);
  posenc::validate(s);
  return s;
}

// HF Qwen2-VL apply_multimodal_rotary_pos_emb, transcribed (transformers@00b676f8f0489b88652a31d70751cc540dd06305
// models/qwen2_vl/modeling_qwen2_vl.py):
//   mrope_section = mrope_section * 2
//   cos = torch.cat([m[i % 3] for i, m in enumerate(cos.split(mrope_section, dim=-1))], dim=-1)
// rows[a] is the cos (or sin) row of position row a, length r, duplicated [c | c] by emb = cat(freqs, freqs).
template <class T>
std::vector<T> hf_split_and_select(const std::array<std::vector<T>, 3>& rows, std::vector<std::int64_t> section) {
  std::vector<std::int64_t> sizes = section;
  sizes.insert(sizes.end(), section.begin(), section.end());  // a Python list times 2: the list repeated
  std::vector<T> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {  // torch.split: consecutive chunks of the given sizes
    const auto n = static_cast<std::size_t>(sizes[i]);
    for (std::size_t j = start; j < start + n; ++j) out.push_back(rows[i % 3].at(j));
    start += n;
  }
  return out;
}

// HF Qwen3-VL apply_interleaved_mrope, transcribed (transformers@00709b862bb8f14a5435bb7195592579168496e4
// models/qwen3_vl/modeling_qwen3_vl.py), on freqs[a], the r/2 angles of position row a:
//   freqs_t = freqs[0]
//   for dim, offset in enumerate((1, 2), start=1):
//       length = mrope_section[dim] * 3
//       idx = slice(offset, length, 3)
//       freqs_t[..., idx] = freqs[dim, ..., idx]
// (a Python slice stops at min(length, len)). emb = cat(freqs_t, freqs_t) then gives both halves the same pair.
template <class T>
std::vector<T> hf_interleaved(const std::array<std::vector<T>, 3>& freqs, const std::vector<std::int64_t>& section) {
  std::vector<T> freqs_t = freqs[0];
  for (std::size_t dim = 1; dim <= 2; ++dim) {
    const std::size_t offset = dim;
    const auto length = static_cast<std::size_t>(section[dim] * 3);
    for (std::size_t i = offset; i < std::min(length, freqs_t.size()); i += 3) freqs_t[i] = freqs[dim][i];
  }
  return freqs_t;
}

// Tags: row a, column j holds a * r + j, so a selected entry says which row and which column it came from.
std::array<std::vector<std::int64_t>, 3> tag_rows(std::size_t len) {
  std::array<std::vector<std::int64_t>, 3> rows;
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t j = 0; j < len; ++j) rows[a].push_back(static_cast<std::int64_t>(a * len + j));
  return rows;
}

// Qwen2-VL: on the duplicated rows, column j (pair j mod h, either half) comes from row rope_mrope_axis(j mod h),
// for the tags and for the oracle's own cos/sin rows of three distinct positions.
void expect_hf_sections(const RopeSpec& s, const RopeMropePosition& pos) {
  const std::size_t r = s.rotary_dim, h = r / 2;
  const auto tags = hf_split_and_select(tag_rows(r), s.mrope_section);
  ASSERT_EQ(tags.size(), r);
  for (std::size_t j = 0; j < r; ++j)
    EXPECT_EQ(tags[j], static_cast<std::int64_t>(rope_mrope_axis(s, j % h) * r + j)) << "column " << j;
  const RopeOracle o(s), one(one_position(s));
  std::array<std::vector<Real>, 3> cos_rows, sin_rows;
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t j = 0; j < r; ++j) {
      cos_rows[a].push_back(one.cos(pos[a], j % h));
      sin_rows[a].push_back(one.sin(pos[a], j % h));
    }
  const auto c = hf_split_and_select(cos_rows, s.mrope_section), sn = hf_split_and_select(sin_rows, s.mrope_section);
  for (std::size_t j = 0; j < r; ++j) {
    EXPECT_TRUE(same(c[j], o.cos_mrope(pos, j % h))) << "column " << j;
    EXPECT_TRUE(same(sn[j], o.sin_mrope(pos, j % h))) << "column " << j;
  }
}

// Qwen3-VL: pair k of the interleaved angles comes from row rope_mrope_axis(k) (tags, the oracle's angles and cos).
void expect_hf_interleaved(const RopeSpec& s, const RopeMropePosition& pos) {
  const std::size_t h = s.rotary_dim / 2;
  const auto tags = hf_interleaved(tag_rows(h), s.mrope_section);
  ASSERT_EQ(tags.size(), h);
  for (std::size_t k = 0; k < h; ++k)
    EXPECT_EQ(tags[k], static_cast<std::int64_t>(rope_mrope_axis(s, k) * h + k)) << "pair " << k;
  const RopeOracle o(s), one(one_position(s));
  std::array<std::vector<Real>, 3> angles, cosines;
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t k = 0; k < h; ++k) {
      angles[a].push_back(one.angle(pos[a], k));
      cosines[a].push_back(one.cos(pos[a], k));
    }
  const auto an = hf_interleaved(angles, s.mrope_section), c = hf_interleaved(cosines, s.mrope_section);
  for (std::size_t k = 0; k < h; ++k) {
    EXPECT_TRUE(same(an[k], o.angle_mrope(pos, k))) << "pair " << k;
    EXPECT_TRUE(same(c[k], o.cos_mrope(pos, k))) << "pair " << k;
  }
}

// Distinct positions (no two of +-t, +-h, +-w equal: cos is even), so every row's values differ.
constexpr RopeMropePosition kThreePositions = {7, 1001, 123457};

TEST(RopeOracleMrope, Qwen2VlSplitAndSelectIsTheSectionsRule) {
  // Qwen2-VL: head_dim 128, rope_theta 1e6, mrope_section [16, 24, 24]; float32 like HF, and exact.
  for (RopeRegime regime : {RopeRegime::hf, RopeRegime::exact})
    expect_hf_sections(mrope_spec(RopeMrope::sections, {16, 24, 24}, 128, 1.0e6, regime), kThreePositions);
}

RC_GTEST_PROP(RopeOracleMrope, HfSplitAndSelectIsTheSectionsRuleForAnySections, ()) {
  const RopeSpec s = *genMropeSpec(true, RopeMrope::sections);
  expect_hf_sections(s, kThreePositions);
  RC_ASSERT(!::testing::Test::HasFailure());
}

TEST(RopeOracleMrope, Qwen3VlSliceAssignmentIsTheInterleavedRule) {
  // Qwen3-VL: head_dim 128, rope_theta 5e6, mrope_section [24, 20, 20] (the HF default).
  for (RopeRegime regime : {RopeRegime::hf, RopeRegime::exact})
    expect_hf_interleaved(mrope_spec(RopeMrope::interleaved, {24, 20, 20}, 128, 5.0e6, regime), kThreePositions);
}

RC_GTEST_PROP(RopeOracleMrope, HfSliceAssignmentIsTheInterleavedRuleForAnySections, ()) {
  const RopeSpec s = *genMropeSpec(true, RopeMrope::interleaved);
  expect_hf_interleaved(s, kThreePositions);
  RC_ASSERT(!::testing::Test::HasFailure());
}

TEST(RopeOracleMrope, AxesByHand) {
  auto axes = [](const RopeSpec& s) {
    std::string out;
    for (std::size_t k = 0; k < s.rotary_dim / 2; ++k) out += "thw"[rope_mrope_axis(s, k)];
    return out;
  };
  EXPECT_EQ(axes(mrope_spec(RopeMrope::sections, {1, 2, 1}, 8, 10000.0)), "thhw");
  EXPECT_EQ(axes(mrope_spec(RopeMrope::interleaved, {2, 1, 1}, 8, 10000.0)), "thwt");
  EXPECT_EQ(axes(mrope_spec(RopeMrope::sections, {0, 4, 0}, 8, 10000.0)), "hhhh");
  EXPECT_EQ(axes(mrope_spec(RopeMrope::interleaved, {0, 0, 4}, 8, 10000.0)), "ttwt");  // only k = 2 mod 3 < 12
  EXPECT_EQ(axes(mrope_spec(RopeMrope::interleaved, {0, 4, 0}, 8, 10000.0)), "thtt");  // k = 2: 2 mod 3, s_w = 0
  // Qwen2-VL [16, 24, 24]: t up to 15, h 16..39, w 40..63.
  const std::string q2 = axes(mrope_spec(RopeMrope::sections, {16, 24, 24}, 128, 1.0e6));
  EXPECT_EQ(q2, std::string(16, 't') + std::string(24, 'h') + std::string(24, 'w'));
  // Qwen3-VL [24, 20, 20]: "thw" 20 times (k < 60), then k = 60..63 all t — HF's rule. (ggml IMROPE gives pairs 61
  // and 62 the 4th position instead, 0 for text in llama.cpp: rope.hpp.)
  std::string q3;
  for (int i = 0; i < 20; ++i) q3 += "thw";
  q3 += "tttt";
  EXPECT_EQ(axes(mrope_spec(RopeMrope::interleaved, {24, 20, 20}, 128, 5.0e6)), q3);
  // mrope none: the one position, row 0.
  const RopeSpec none = make_spec(Layout::halves, RopeRegime::exact, 8, 8, 10000.0);
  EXPECT_EQ(axes(none), "tttt");
}

// t = h = w = p: every M-RoPE value is the one-position oracle's at p (on the spec without mrope), bit for bit; so
// are the one-position methods of the M-RoPE spec.
RC_GTEST_PROP(RopeOracleMrope, EqualPositionsAreOneDimensionalRope, ()) {
  const RopeSpec s = *genMropeSpec(true);
  const RopeOracle o(s), one(one_position(s));
  const std::int64_t p = *genPosition(), p2 = *genPosition();
  const RopeMropePosition pos = {p, p, p}, pos2 = {p2, p2, p2};
  const bool emulated = s.regime != RopeRegime::exact;
  const auto x = *genVector(s, emulated), y = *genVector(s, false);
  for (std::size_t k = 0; k < s.rotary_dim / 2; ++k) {
    RC_ASSERT(same(o.angle_mrope(pos, k), one.angle(p, k)));
    RC_ASSERT(same(o.cos_mrope(pos, k), one.cos(p, k)));
    RC_ASSERT(same(o.sin_mrope(pos, k), one.sin(p, k)));
    RC_ASSERT(same(o.cos(p, k), one.cos(p, k)));
  }
  for (bool inverse : {false, true}) {
    const auto a = o.rotate_mrope(pos, x, inverse), b = one.rotate(p, x, inverse), c = o.rotate(p, x, inverse);
    const auto ea = o.exact_rotate_mrope(pos, y, inverse), eb = one.exact_rotate(p, y, inverse);
    for (std::size_t ch = 0; ch < s.head_dim; ++ch) {
      RC_ASSERT(same(a[ch], b[ch]));
      RC_ASSERT(same(c[ch], b[ch]));
      RC_ASSERT(same(ea[ch], eb[ch]));
    }
  }
  RC_ASSERT(same(o.score_mrope(pos, y, pos2, x), one.score(p, y, p2, x)));
}

// Distinct positions: pair k's channels of rotate_mrope are the one-position rotation's at pos[a(k)] (every regime,
// ggml's per-axis recurrences included), bit for bit; pass-through channels are unchanged; inverse is R(-pos).
RC_GTEST_PROP(RopeOracleMrope, EachPairRotatesByItsAxisPosition, ()) {
  const RopeSpec s = *genMropeSpec(true);
  const RopeOracle o(s), one(one_position(s));
  const RopeMropePosition pos = *genMropePosition();
  const bool inverse = *rc::gen::arbitrary<bool>();
  const auto x = *genVector(s, s.regime != RopeRegime::exact);
  const auto y = o.rotate_mrope(pos, x, inverse), ey = o.exact_rotate_mrope(pos, x, inverse);
  std::array<std::vector<Real>, 3> by_axis, exact_by_axis;
  for (std::size_t a = 0; a < 3; ++a) {
    by_axis[a] = one.rotate(pos[a], x, inverse);
    exact_by_axis[a] = one.exact_rotate(pos[a], x, inverse);
  }
  for (std::size_t k = 0; k < s.rotary_dim / 2; ++k) {
    const std::size_t a = rope_mrope_axis(s, k);
    const auto ch = rope_pair_channels(s, k);
    RC_ASSERT(same(y[ch.first], by_axis[a][ch.first]));
    RC_ASSERT(same(y[ch.second], by_axis[a][ch.second]));
    RC_ASSERT(same(ey[ch.first], exact_by_axis[a][ch.first]));
    RC_ASSERT(same(ey[ch.second], exact_by_axis[a][ch.second]));
    RC_ASSERT(same(o.cos_mrope(pos, k), one.cos(pos[a], k)));
    RC_ASSERT(same(o.sin_mrope(pos, k), one.sin(pos[a], k)));
  }
  for (std::size_t c = s.rotary_dim; c < s.head_dim; ++c) RC_ASSERT(holds(y[c], x[c]));
  const RopeMropePosition neg = {-pos[0], -pos[1], -pos[2]};
  const auto z = o.rotate_mrope(neg, x, !inverse);
  for (std::size_t c = 0; c < s.head_dim; ++c) RC_ASSERT(same(z[c], y[c]));
}

// <R(m) q, R(n) k> under M-RoPE depends only on the per-axis offsets n - m and is the dot product of the oracle's
// rotated vectors.
RC_GTEST_PROP(RopeOracleMrope, ScoreDependsOnlyOnThePerAxisOffsets, ()) {
  const RopeSpec s = *genMropeSpec(true);
  const RopeOracle o(s);
  const RopeMropePosition m = *genMropePosition(), n = *genMropePosition();
  const auto q = *genVector(s, false), k = *genVector(s, false);
  const double S = score_weight(s, q, k);
  const Real sc = o.score_mrope(m, q, n, k);
  RopeMropePosition md = m, nd = n;
  bool in_range = true;
  for (std::size_t a = 0; a < 3; ++a) {
    const std::int64_t d = *rc::gen::inRange<std::int64_t>(-100000, 100000);
    md[a] += d;
    nd[a] += d;
    in_range = in_range && std::max(std::abs(md[a]), std::abs(nd[a])) <= kMaxP;
  }
  if (in_range) RC_ASSERT(within(sc, o.score_mrope(md, q, nd, k), S, -240));
  const auto rq = o.exact_rotate_mrope(m, q), rk = o.exact_rotate_mrope(n, k);
  Real dot = make_real(2400);
  for (std::size_t c = 0; c < s.head_dim; ++c) mpfr_fma(raw(dot), raw(rq[c]), raw(rk[c]), raw(dot), MPFR_RNDN);
  RC_ASSERT(within(sc, dot, S, -240));
}

TEST(RopeOracleMrope, ErrorsNameMropePositionAndPair) {
  const RopeSpec s = mrope_spec(RopeMrope::sections, {1, 2, 1}, 8, 10000.0);
  const RopeSpec none = make_spec(Layout::halves, RopeRegime::exact, 8, 8, 10000.0);
  const RopeOracle o(s), on(none);
  const std::vector<double> x(8, 0.5), short_x(7, 0.5);
  const RopeMropePosition ok = {1, 2, 3};
  const std::string m = error_of([&] { on.cos_mrope(ok, 0); });
  EXPECT_NE(m.find("mrope = none"), std::string::npos) << m;
  EXPECT_NE(error_of([&] { on.rotate_mrope(ok, x); }).find("mrope"), std::string::npos);
  EXPECT_NE(error_of([&] { on.score_mrope(ok, x, ok, x); }).find("mrope"), std::string::npos);
  EXPECT_EQ(rope_mrope_axis(none, 3), 0u);
  EXPECT_NE(error_of([&] { rope_mrope_axis(s, 4); }).find("k = 4"), std::string::npos);
  EXPECT_NE(error_of([&] { rope_mrope_axis(none, 4); }).find("k = 4"), std::string::npos);
  EXPECT_NE(error_of([&] { o.cos_mrope(ok, 4); }).find("k = 4"), std::string::npos);
  // every axis is checked, used or not (sections [1, 2, 1] use all three; w is checked in angle_mrope at k = 0)
  EXPECT_NE(error_of([&] { o.angle_mrope({kMaxP + 1, 0, 0}, 1); }).find("position t = 1099511627777"),
            std::string::npos);
  EXPECT_NE(error_of([&] { o.sin_mrope({0, -kMaxP - 1, 0}, 0); }).find("position h = "), std::string::npos);
  EXPECT_NE(error_of([&] { o.angle_mrope({0, 0, kMaxP + 1}, 0); }).find("position w = "), std::string::npos);
  EXPECT_NE(error_of([&] { o.rotate_mrope({0, 0, kMaxP + 1}, x); }).find("position w = "), std::string::npos);
  EXPECT_NE(error_of([&] { o.exact_rotate_mrope({0, kMaxP + 1, 0}, x); }).find("position h = "), std::string::npos);
  EXPECT_NE(error_of([&] { o.score_mrope({0, 0, kMaxP + 1}, x, ok, x); }).find("m w = "), std::string::npos);
  EXPECT_NE(error_of([&] { o.score_mrope(ok, x, {kMaxP + 1, 0, 0}, x); }).find("n t = "), std::string::npos);
  EXPECT_NE(error_of([&] { o.rotate_mrope(ok, short_x); }).find("x = a vector of 7 values"), std::string::npos);
  EXPECT_NO_THROW(o.rotate_mrope({kMaxP, -kMaxP, 0}, x, true));
}

// ======================================================================================================
// RopeOracleXpos: the xPos decay scale (CONVENTIONS.md §2.12; torchscale XPOS,
// microsoft/torchscale@776b070d68aef2aca447dc3e1adb64682fbec126 torchscale/component/xpos_relative_position.py)
// ======================================================================================================

using posenc::RopeXpos;

RopeSpec xpos_spec(RopeXpos side, RopeRegime regime, std::size_t head_dim, std::size_t r, double sb, std::int64_t c,
                   Layout layout = Layout::interleaved) {
  RopeSpec s = make_spec(layout, regime, head_dim, r, 10000.0);
  s.xpos = side;
  s.xpos_scale_base = sb;
  s.xpos_center = c;
  posenc::validate(s);
  return s;
}

RopeSpec without_xpos(RopeSpec s) {
  s.xpos = RopeXpos::none;
  s.xpos_scale_base = 0.0;
  s.xpos_center = 0;
  posenc::validate(s);
  return s;
}

// The rational n / d rounded once to `bits`.
Real rational(long n, long d, unsigned bits) {
  Real r = make_real(bits);
  mpfr_set_si(raw(r), n, MPFR_RNDN);
  mpfr_div_si(raw(r), raw(r), d, MPFR_RNDN);
  return r;
}

// r = 8: zeta_k = (2k + 0.4 * 8) / (1.4 * 8) = 3.2/11.2, 5.2/11.2, 7.2/11.2, 9.2/11.2 = 2/7, 13/28, 9/14, 23/28 (by hand,
// not the oracle's (10k + 2r)/(7r)); the scale at e = (p - c)/sb = 1, 2, -1, 1/2 for queries and keys.
TEST(RopeOracleXpos, ZetaAndScaleByHand) {
  const long num[4] = {2, 13, 9, 23}, den[4] = {7, 28, 14, 28};
  const RopeSpec q = xpos_spec(RopeXpos::query, RopeRegime::exact, 8, 8, 2.0, 10);
  const RopeSpec k = xpos_spec(RopeXpos::key, RopeRegime::exact, 8, 8, 2.0, 10);
  for (std::size_t j = 0; j < 4; ++j) {
    SCOPED_TRACE(j);
    const Real z = rational(num[j], den[j], 1024);
    EXPECT_TRUE(same(rope_xpos_zeta(q, j), with_bits(z, 256)));
    EXPECT_TRUE(same(rope_xpos_zeta(q, j, 53), make_real(double(num[j]) / double(den[j]), 53)));
    Real z2 = make_real(1024), zinv = make_real(1024), zsqrt = make_real(1024);
    mpfr_sqr(raw(z2), raw(z), MPFR_RNDN);
    mpfr_ui_div(raw(zinv), 1, raw(z), MPFR_RNDN);
    mpfr_sqrt(raw(zsqrt), raw(z), MPFR_RNDN);
    // queries: zeta^((p - 10)/2)
    EXPECT_TRUE(rel_within(rope_xpos_scale(q, 12, j), z, -254));
    EXPECT_TRUE(rel_within(rope_xpos_scale(q, 14, j), z2, -254));
    EXPECT_TRUE(rel_within(rope_xpos_scale(q, 8, j), zinv, -254));
    EXPECT_TRUE(rel_within(rope_xpos_scale(q, 11, j), zsqrt, -254));
    // keys: zeta^(-(p - 10)/2)
    EXPECT_TRUE(rel_within(rope_xpos_scale(k, 12, j), zinv, -254));
    EXPECT_TRUE(rel_within(rope_xpos_scale(k, 8, j), z, -254));
    EXPECT_TRUE(rel_within(rope_xpos_scale(k, 6, j), z2, -254));
    // scale 1 at the centre, exactly; a key at c - d is the query at c + d, bit for bit
    EXPECT_TRUE(same(rope_xpos_scale(q, 10, j), make_real(1, 256)));
    EXPECT_TRUE(same(rope_xpos_scale(k, 10, j), make_real(1, 256)));
    for (std::int64_t d : {1, 3, 77, 1105}) EXPECT_TRUE(same(rope_xpos_scale(q, 10 + d, j), rope_xpos_scale(k, 10 - d, j)));
  }
  // the scale decreases along the pairs for queries after c (zeta_k < 1 grows with k), and xpos none is 1
  EXPECT_LT(to_d(rope_xpos_scale(q, 40, 0)), to_d(rope_xpos_scale(q, 40, 3)));
  EXPECT_TRUE(same(rope_xpos_scale(without_xpos(q), 40, 0), make_real(1, 256)));
  EXPECT_TRUE(same(RopeOracle(q).xpos_scale(14, 1), rope_xpos_scale(q, 14, 1)));
  // zeta does not depend on spec.xpos
  EXPECT_TRUE(same(rope_xpos_zeta(without_xpos(q), 2), rope_xpos_zeta(q, 2)));
}

// At p = c every value is the one without xPos, bit for bit, in the exact and hf regimes; elsewhere the exact cos, sin
// and rotation carry x_{p,k}, and inverse is the transpose (the scale of p kept, sin negated).
TEST(RopeOracleXpos, ExactCosSinRotateCarryTheScale) {
  for (RopeXpos side : {RopeXpos::query, RopeXpos::key}) {
    for (Layout layout : {Layout::interleaved, Layout::halves}) {
      const RopeSpec s = xpos_spec(side, RopeRegime::exact, 70, 64, 512.0, 300, layout);
      SCOPED_TRACE(posenc::describe(s));
      const RopeSpec plain = without_xpos(s);
      const RopeOracle o(s), o0(plain);
      std::vector<double> x(70);
      for (std::size_t c = 0; c < 70; ++c) x[c] = 0.25 * double(c % 7) - 0.625;
      for (RopeRegime regime : {RopeRegime::exact, RopeRegime::hf}) {
        RopeSpec a = s, b = plain;
        a.regime = b.regime = regime;
        const RopeOracle oa(a), ob(b);
        for (std::size_t k : {0u, 13u, 31u}) {
          EXPECT_TRUE(same(oa.cos(300, k), ob.cos(300, k)));
          EXPECT_TRUE(same(oa.sin(300, k), ob.sin(300, k)));
          EXPECT_TRUE(holds(oa.xpos_scale(300, k), 1.0));
        }
        const auto ya = oa.rotate(300, x), yb = ob.rotate(300, x);
        for (std::size_t c = 0; c < 70; ++c) EXPECT_TRUE(same(ya[c], yb[c])) << c;
      }
      for (std::int64_t p : {std::int64_t{0}, std::int64_t{17}, std::int64_t{299}, std::int64_t{4096},
                             std::int64_t{-20000}, std::int64_t{283000}}) {
        for (std::size_t k : {0u, 13u, 31u}) {
          const Real xs = rope_xpos_scale(s, p, k);
          Real want = make_real(1024);
          mpfr_mul(raw(want), raw(o0.cos(p, k)), raw(xs), MPFR_RNDN);
          EXPECT_TRUE(rel_within(o.cos(p, k), want, -250)) << p << " " << k;
          mpfr_mul(raw(want), raw(o0.sin(p, k)), raw(xs), MPFR_RNDN);
          if (p != 0) {
            EXPECT_TRUE(rel_within(o.sin(p, k), want, -250)) << p << " " << k;
          }
          std::vector<double> e(70, 0.0);
          const auto ch = rope_pair_channels(s, k);
          e[ch.first] = 1.0;
          // rotate rounds F cos formed at W bits, cos() the exact product F cos_W: within an ulp of each other
          const auto y = o.rotate(p, e), yi = o.rotate(p, e, true);
          EXPECT_TRUE(rel_within(y[ch.first], o.cos(p, k), -254));
          EXPECT_TRUE(rel_within(y[ch.second], o.sin(p, k), -254));
          EXPECT_TRUE(same(yi[ch.first], y[ch.first]));  // transpose: the same scale, sin negated
          EXPECT_TRUE(same(yi[ch.second], neg_of(y[ch.second])));
          EXPECT_TRUE(same(o.rotate_channel(p, x, ch.second, true), o.rotate(p, x, true)[ch.second]));
        }
        const auto y = o.rotate(p, x);
        for (std::size_t c = 64; c < 70; ++c) EXPECT_TRUE(holds(y[c], x[c]));  // passed channels: unscaled
      }
    }
  }
}

// score pairs the query scale on q with the key scale on k whichever side the spec names: it is <R q, R k> of the
// query spec's and the key spec's rotations, it carries zeta_j^((m - n)/sb) on pair j and depends on m - n only.
TEST(RopeOracleXpos, ScoreCarriesZetaToTheOffsetOverScaleBase) {
  const double sb = 64.0;
  const RopeSpec sq = xpos_spec(RopeXpos::query, RopeRegime::exact, 70, 64, sb, 1000, Layout::halves);
  const RopeSpec sk = xpos_spec(RopeXpos::key, RopeRegime::exact, 70, 64, sb, 1000, Layout::halves);
  const RopeOracle oq(sq), ok(sk), o0(without_xpos(sq));
  std::vector<double> q(70), kv(70);
  for (std::size_t c = 0; c < 70; ++c) {
    q[c] = 0.25 * double(c % 7) - 0.5;
    kv[c] = 1.0 - 0.125 * double(c % 5);
  }
  const double w = score_weight(sq, q, kv);
  const std::pair<std::int64_t, std::int64_t> mn[] = {{1000, 1000}, {1100, 1000}, {1000, 1100}, {37, 2900},
                                                      {-3000, -3256}, {5000, 100}};
  for (const auto& [m, n] : mn) {
    SCOPED_TRACE(std::to_string(m) + " " + std::to_string(n));
    const Real s = oq.score(m, q, n, kv);
    EXPECT_TRUE(same(s, ok.score(m, q, n, kv)));
    // <R_query(m) q, R_key(n) k> from the two specs' rotations, summed here at 2048 bits
    const auto u = oq.exact_rotate(m, q), v = ok.exact_rotate(n, kv);
    Real dot = make_real(2048), t = make_real(2048);
    for (std::size_t c = 0; c < 70; ++c) {
      mpfr_mul(raw(t), raw(u[c]), raw(v[c]), MPFR_RNDN);
      mpfr_add(raw(dot), raw(dot), raw(t), MPFR_RNDN);
    }
    // the decay on pair j carries zeta^(|m-n|/64) <= 3.5^(78): the bound scales with the largest factor
    const double big = std::pow(3.5, std::fabs(double(m - n)) / sb);
    EXPECT_TRUE(within(s, dot, 2 * w * big, -240));
    // shifting both positions keeps the score (relative to the factor-weighted bound)
    for (std::int64_t t2 : {-777, 1, 4096}) EXPECT_TRUE(within(oq.score(m + t2, q, n + t2, kv), s, 4 * w * big, -236));
    // pair j alone: zeta_j^((m - n)/sb) times the score without xPos
    for (std::size_t j : {0u, 5u, 31u}) {
      std::vector<double> qj(70, 0.0), kj(70, 0.0);
      qj[j] = q[j];
      qj[j + 32] = q[j + 32];
      kj[j] = kv[j];
      kj[j + 32] = kv[j + 32];
      Real factor = make_real(1024), e = make_real(1024);
      mpfr_set_si(raw(e), long(m - n), MPFR_RNDN);
      mpfr_div_d(raw(e), raw(e), sb, MPFR_RNDN);
      mpfr_pow(raw(factor), raw(rational(long(10 * j + 128), 7 * 64, 1024)), raw(e), MPFR_RNDN);
      Real want = make_real(1024);
      mpfr_mul(raw(want), raw(o0.score(m, qj, n, kj)), raw(factor), MPFR_RNDN);
      EXPECT_TRUE(within(oq.score(m, qj, n, kj), want, 4 * big, -240)) << j;
    }
  }
  // passed channels carry no scale: q, k zero on the rotated channels give the plain dot product
  std::vector<double> qp(70, 0.0), kp(70, 0.0);
  for (std::size_t c = 64; c < 70; ++c) {
    qp[c] = q[c];
    kp[c] = kv[c];
  }
  EXPECT_TRUE(same(oq.score(5000, qp, 100, kp), o0.score(5000, qp, 100, kp)));
}

// holds(), with a NaN float matched by a NaN Real
bool holds_f(const Real& x, float f) { return std::isnan(f) ? mpfr_nan_p(raw(x)) != 0 : holds(x, f); }

// torchscale's float32 steps with plain C float arithmetic (XPOS.__init__: (arange(0, d, 2) + 0.4 * d) / (1.4 * d)
// as float(2k) + float(0.4 * d) and one float division; forward: float(p - c) / float(sb), powf, keys 1.0f / x;
// apply_rotary_pos_emb: float cos/sin times x), powf/sinf/cosf used only where they are correctly rounded.
TEST(RopeOracleXpos, HfMatchesPlainFloatArithmetic) {
  int checked = 0;
  for (std::size_t r : {8u, 64u, 80u, 128u}) {
    for (double sb : {512.0, 64.0, 1.5, 100.0}) {
      for (RopeXpos side : {RopeXpos::query, RopeXpos::key}) {
        const std::int64_t c = 3000;
        const RopeSpec s = xpos_spec(side, RopeRegime::hf, r, r, sb, c);
        SCOPED_TRACE(posenc::describe(s));
        const RopeOracle o(s), o0(without_xpos(s));
        for (std::size_t k = 0; k < r / 2; k += (r > 8 ? 7 : 1)) {
          volatile float a = static_cast<float>(0.4 * double(r)), b = static_cast<float>(1.4 * double(r));
          volatile float n = static_cast<float>(2 * k) + a;
          volatile float z = n / b;
          ASSERT_TRUE(holds(rope_hf_xpos_zeta(s, k), z));
          for (std::int64_t p : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2999}, std::int64_t{3000},
                                 std::int64_t{3001}, std::int64_t{4711}, std::int64_t{-1234}, std::int64_t{10000}}) {
            if (std::fabs(double(p - c)) > 553.0 * sb) continue;
            volatile float e = static_cast<float>(p - c) / static_cast<float>(sb);
            const float xq = std::pow(static_cast<float>(z), static_cast<float>(e));
            if (!is_rn32_of(xq, hp_pow(z, e))) continue;
            volatile float x = side == RopeXpos::key ? 1.0f / xq : xq;
            EXPECT_TRUE(holds(rope_hf_xpos_scale(s, p, k), x)) << p << " " << k;
            EXPECT_TRUE(holds(o.xpos_scale(p, k), x)) << p << " " << k;
            const float ang = to_d(o0.angle(p, k));
            EXPECT_TRUE(same(o.angle(p, k), o0.angle(p, k)));
            const float cv = std::cos(ang), sv = std::sin(ang);
            if (!is_rn32_of(cv, hp_cos(ang)) || !is_rn32_of(sv, hp_sin(ang))) continue;
            volatile float cx = cv * x, sx = sv * x;
            EXPECT_TRUE(holds_f(o.cos(p, k), cx)) << p << " " << k;
            EXPECT_TRUE(holds_f(o.sin(p, k), sx)) << p << " " << k;
            std::vector<double> v(r, 0.0);
            v[2 * k] = 0.75;
            v[2 * k + 1] = -1.5;
            float yi = 0, yj = 0;
            plain_rotate(0.75f, -1.5f, cx, sx, yi, yj);
            const auto y = o.rotate(p, v);
            EXPECT_TRUE(holds_f(y[2 * k], yi));
            EXPECT_TRUE(holds_f(y[2 * k + 1], yj)) << p << " " << k;  // inf - inf = NaN past the float32 reach
            plain_rotate(0.75f, -1.5f, cx, -sx, yi, yj);
            EXPECT_TRUE(holds_f(o.rotate_channel(p, v, 2 * k + 1, true), yj));
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
}

// The edge of the position range: |p - c| = 553 sb (the spec's reach) is finite in the exact regime (x_{p,0} =
// 3.5^553 < 2^1000), one further is refused. torchscale's float32 scale of pair 0 (zeta32_0 = RN32(2/7), the same
// for every power-of-two r) is +inf from |p - c| = 4533 (sb = 64) and 36261 (sb = 512) on, for queries before c and for
// keys after it (keys: RN32(pow) <= 2^-128, a subnormal, whose reciprocal overflows) — as for the exact scale
// rounded to float32; the exact scale first exceeds 65504 (float16's largest, also its overflow threshold's side:
// 65520) at |p - c| = 567 (sb = 64) and 4533 (sb = 512). Cross-checked with Python fractions + mpmath.
TEST(RopeOracleXpos, OverflowAtTheEdgeOfThePositionRange) {
  struct Edge {
    double sb;
    std::int64_t first_inf32, first_above_f16;
  };
  for (const Edge& edge : {Edge{64.0, 4533, 567}, Edge{512.0, 36261, 4533}}) {
    const std::int64_t c = 100000;
    for (RopeXpos side : {RopeXpos::query, RopeXpos::key}) {
      const std::int64_t dir = side == RopeXpos::query ? -1 : 1;  // the growing side
      const RopeSpec s = xpos_spec(side, RopeRegime::exact, 128, 128, edge.sb, c);
      SCOPED_TRACE(posenc::describe(s));
      const auto reach = static_cast<std::int64_t>(553.0 * edge.sb);
      const RopeOracle o(s);
      const Real x = rope_xpos_scale(s, c + dir * reach, 0);
      ASSERT_TRUE(mpfr_number_p(raw(x)));
      EXPECT_GT(mpfr_get_exp(raw(x)), 990);
      EXPECT_LE(mpfr_get_exp(raw(x)), 1000);
      EXPECT_TRUE(std::isfinite(to_d(x)));
      Real inv = make_real(512);
      mpfr_ui_div(raw(inv), 1, raw(x), MPFR_RNDN);
      EXPECT_TRUE(rel_within(rope_xpos_scale(s, c - dir * reach, 0), inv, -250));
      EXPECT_TRUE(mpfr_number_p(raw(o.cos(c + dir * reach, 0))));
      std::vector<double> v(128, 1.0);
      for (const Real& y : o.rotate(c + dir * reach, v)) EXPECT_TRUE(mpfr_number_p(raw(y)));
      EXPECT_TRUE(mpfr_number_p(raw(o.score(c + dir * reach, v, c - dir * reach, v))));
      EXPECT_EQ(error_parameter([&] { (void)o.cos(c + dir * (reach + 1), 0); }), "position");
      EXPECT_EQ(error_parameter([&] { (void)rope_xpos_scale(s, c - dir * (reach + 1), 0); }), "position");
      // float16: the first |p - c| whose exact scale exceeds 65504 (and 65520, where RN16 gives inf)
      auto exact_at = [&](std::int64_t d) { return to_d(rope_xpos_scale(s, c + dir * d, 0)); };
      EXPECT_LE(exact_at(edge.first_above_f16 - 1), 65504.0);
      EXPECT_GT(exact_at(edge.first_above_f16), 65520.0);
      // float32: the exact scale rounded to float32, and the hf regime's scale, become +inf at the same |p - c|
      RopeSpec h = s;
      h.regime = RopeRegime::hf;
      const RopeOracle oh(h);
      EXPECT_TRUE(std::isfinite(round_to_float(rope_xpos_scale(s, c + dir * (edge.first_inf32 - 1), 0))));
      EXPECT_TRUE(std::isinf(round_to_float(rope_xpos_scale(s, c + dir * edge.first_inf32, 0))));
      const Real before = rope_hf_xpos_scale(h, c + dir * (edge.first_inf32 - 1), 0);
      EXPECT_TRUE(mpfr_number_p(raw(before)));
      EXPECT_GT(to_d(before), 3.3e38);
      for (std::int64_t d : {edge.first_inf32, edge.first_inf32 + 1, reach}) {
        EXPECT_TRUE(holds(rope_hf_xpos_scale(h, c + dir * d, 0), INFINITY)) << d;
        EXPECT_TRUE(holds(oh.xpos_scale(c + dir * d, 0), INFINITY)) << d;
      }
      // the other side decays to 0 (queries after c, keys before): finite, and the entries are zeros
      EXPECT_TRUE(holds(rope_hf_xpos_scale(h, c - dir * reach, 0), 0.0));
      EXPECT_TRUE(mpfr_zero_p(raw(oh.cos(c - dir * reach, 0))));
      // an infinite scale gives infinite entries, as float32 torch does; cos of a float32 angle is never 0
      EXPECT_TRUE(mpfr_inf_p(raw(oh.cos(c + dir * edge.first_inf32, 0))));
    }
  }
  // sin(0) * inf = NaN (p = 0 with the centre beyond the float32 reach), as in torch
  const RopeSpec far = xpos_spec(RopeXpos::query, RopeRegime::hf, 8, 8, 64.0, 5000);
  EXPECT_TRUE(mpfr_nan_p(raw(RopeOracle(far).sin(0, 0))));
  EXPECT_TRUE(mpfr_inf_p(raw(RopeOracle(far).cos(0, 0))));
}

// The exact regime's xPos values at 256 bits agree with 512 bits within the bounds of rope.hpp (F = m x in place of m).
RC_GTEST_PROP(RopeOracleXpos, ValuesAt256BitsAgreeWith512Bits, ()) {
  RopeSpec s = *genSpec(false, 64);
  s.xpos = *rc::gen::element(RopeXpos::query, RopeXpos::key);
  s.xpos_scale_base = *rc::gen::element(1.0, 1.5, 64.0, 512.0, 4096.0, 1.0e9);
  s.xpos_center = *rc::gen::inRange<std::int64_t>(-100000, 100000);
  posenc::validate(s);
  const auto range = posenc::SpecTraits<RopeSpec>::position_range(s);
  auto gen_p = [&] {
    return *rc::gen::oneOf(rc::gen::just(range.lo), rc::gen::just(range.hi), rc::gen::just(s.xpos_center),
                           rc::gen::inRange<std::int64_t>(range.lo, range.hi + 1));
  };
  const std::int64_t p = gen_p(), n = gen_p();
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.rotary_dim / 2);
  RC_LOG() << posenc::describe(s) << " p=" << p << " n=" << n << " k=" << k << "\n";
  const RopeOracle o(s, 256), o512(s, 512);
  const Real x = rope_xpos_scale(s, p, k, 512);
  RC_ASSERT(rel_within(rope_xpos_scale(s, p, k), x, -255));
  RC_ASSERT(within(o.cos(p, k), o512.cos(p, k), to_d(x), -255));
  RC_ASSERT(within(o.sin(p, k), o512.sin(p, k), to_d(x), -255));
  const auto q = *genVector(s, false), kv = *genVector(s, false);
  // the score's factor per pair is at most the largest zeta_0^(-|p - n|/sb), bounded by 3.5^(|p - n|/sb) <= 2^2000
  Real big = make_real(256);
  mpfr_set_d(raw(big), 3.5, MPFR_RNDN);
  Real e = make_real(256);
  mpfr_set_d(raw(e), std::fabs(double(p) - double(n)) / s.xpos_scale_base, MPFR_RNDU);
  mpfr_pow(raw(big), raw(big), raw(e), MPFR_RNDU);
  mpfr_mul_d(raw(big), raw(big), 2 * score_weight(s, q, kv), MPFR_RNDU);
  Real d = sub(o.score(p, q, n, kv), o512.score(p, q, n, kv));
  mpfr_abs(raw(d), raw(d), MPFR_RNDN);
  Real tol = make_real(256);
  mpfr_abs(raw(tol), raw(o512.score(p, q, n, kv)), MPFR_RNDN);
  mpfr_mul_2si(raw(tol), raw(tol), -255, MPFR_RNDU);
  mpfr_mul_2si(raw(big), raw(big), -(256 + 130), MPFR_RNDU);
  mpfr_add(raw(tol), raw(tol), raw(big), MPFR_RNDU);
  RC_ASSERT(mpfr_cmp(raw(d), raw(tol)) <= 0);
}

// No real model combines xPos with an attention factor: the spec refuses xpos with yarn and longrope (the oracle's code
// would apply m then x: rope.hpp), and every entry point says so, naming "xpos".
TEST(RopeOracleXpos, AttentionFactorScalingsAreRefused) {
  for (RopeSpec s : {yarn_spec(), longrope_spec(RopeRegime::exact, 0)}) {
    s.xpos = RopeXpos::query;
    s.xpos_scale_base = 512.0;
    s.xpos_center = 2048;
    EXPECT_EQ(error_parameter([&] { RopeOracle o(s); }), "xpos");
    EXPECT_EQ(error_parameter([&] { (void)rope_xpos_scale(s, 0, 0); }), "xpos");
    EXPECT_EQ(error_parameter([&] { (void)rope_hf_xpos_scale(s, 0, 0); }), "xpos");
  }
}

TEST(RopeOracleXpos, ErrorsNamePositionAndPair) {
  const RopeSpec s = xpos_spec(RopeXpos::key, RopeRegime::hf, 8, 8, 2.0, 10);
  EXPECT_EQ(error_parameter([&] { (void)rope_xpos_zeta(s, 4); }), "k");
  EXPECT_EQ(error_parameter([&] { (void)rope_hf_xpos_zeta(s, 4); }), "k");
  EXPECT_EQ(error_parameter([&] { (void)rope_xpos_scale(s, 10, 4); }), "k");
  EXPECT_EQ(error_parameter([&] { (void)rope_hf_xpos_scale(s, 10 + 1107, 0); }), "position");
  EXPECT_EQ(error_parameter([&] { (void)RopeOracle(s).xpos_scale(10 - 1107, 0); }), "position");
  EXPECT_NO_THROW((void)rope_hf_xpos_scale(s, 10 + 1106, 0));
}

}  // namespace oracle_rope
