// Self-tests of the sinusoidal oracle. The oracle is the ground truth of the property suite, so each test here
// is built to fail if the oracle is wrong: a silently low precision (P vs 2P), a misplaced slot or frequency
// rule (closed forms, an independent Boost formula), a wrong emulation step (plain C float arithmetic).
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
#include "posenc/reference/sinusoidal.hpp"
#include "posenc/sinusoidal_spec.hpp"
#include "test_util.hpp"

namespace oracle_sinusoidal {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::FrequencyRule;
using posenc::Layout;
using posenc::OddDim;
using posenc::PaperForm;
using posenc::Regime;
using posenc::SinusoidalSpec;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

// ---- generators -------------------------------------------------------------------------------------

rc::Gen<SinusoidalSpec> genSpec(bool emulated_allowed, std::size_t max_dim = 1024) {
  return rc::gen::exec([=] {
    SinusoidalSpec s;
    const int dim_kind = *rc::gen::inRange(0, 4);
    s.dim = dim_kind == 0   ? *rc::gen::inRange<std::size_t>(2, 17)
            : dim_kind == 1 ? *rc::gen::element<std::size_t>(64, 127, 128, 255, 256, 512, 1024)
                            : *rc::gen::inRange<std::size_t>(2, 129);
    s.dim = std::min(s.dim, max_dim);
    s.rule = *rc::gen::element(FrequencyRule::paper, FrequencyRule::tensor2tensor, FrequencyRule::fairseq);
    if (s.rule == FrequencyRule::paper && *rc::gen::arbitrary<bool>()) s.paper_form = PaperForm::pow;
    s.layout = *rc::gen::element(Layout::interleaved, Layout::halves);
    if (s.rule == FrequencyRule::fairseq && s.dim < 4) s.dim = 4 + s.dim;
    if (s.dim % 2 == 1 || *rc::gen::arbitrary<bool>()) s.odd_dim = OddDim::zero_pad;
    const int base_kind = *rc::gen::inRange(0, 4);
    s.base = base_kind == 0   ? 10000.0
             : base_kind == 1 ? *rc::gen::element(2.0, 1.0001, 500000.0, 1.0e6, 1.0e30)
                              : 1.0 + *rc::gen::inRange(1, 1000000) / 7.0;
    if (*rc::gen::inRange(0, 3) == 0) s.min_timescale = *rc::gen::element(0.5, 1.0e-3, 2.0, 37.0, 1.0e6);
    s.signed_positions = *rc::gen::arbitrary<bool>();
    if (s.rule == FrequencyRule::fairseq && *rc::gen::arbitrary<bool>()) {
      s.padding_row = 1;
      s.first_position = 2;
    }
    if (emulated_allowed && *rc::gen::arbitrary<bool>())
      s.regime = Regime::emulated;
    posenc::validate(s);
    return s;
  });
}

// Positions that stress argument reduction and float conversions, within the spec's accepted range.
rc::Gen<std::int64_t> genPosition(const SinusoidalSpec& s) {
  const std::int64_t lim = posenc::max_abs_position(s);
  return rc::gen::exec([=] {
    const int kind = *rc::gen::inRange(0, 4);
    std::int64_t p = kind == 0   ? *rc::gen::inRange<std::int64_t>(0, 1000)
                     : kind == 1 ? *rc::gen::element<std::int64_t>(0, 1, 2, 48039, 131071, 100000, std::int64_t{1} << 20,
                                                                   (std::int64_t{1} << 24) + 1, std::int64_t{1} << 40)
                                 : *rc::gen::inRange<std::int64_t>(0, lim + 1);
    p = std::min(p, lim);
    if (s.signed_positions && *rc::gen::arbitrary<bool>()) p = -p;
    return p;
  });
}

TEST(SinusoidalOracleMp, ValuesHaveExactlyTheRequestedPrecision) {
  for (unsigned bits : {24u, 53u, 100u, 255u, 256u, 257u, 512u, 1000u}) {
    const SinusoidalSpec s = posenc::vaswani_spec(8);
    EXPECT_EQ(bits_of(value(s, 123, 3, bits)), bits);
    EXPECT_EQ(bits_of(frequency(s, 3, bits)), bits);
    for (const Real& v : row(s, 77, bits)) EXPECT_EQ(bits_of(v), bits);
  }
}

TEST(SinusoidalOracleMp, OracleDoesNotDependOnBoostDefaultPrecision) {
  const SinusoidalSpec s = posenc::vaswani_spec(64);
  expect_independent_of_default_precision([&] { return std::vector<Real>{value(s, 987654321, 5, 256)}; });
}

// ======================================================================================================
// SinusoidalOraclePrecision: P vs 2P
// ======================================================================================================

RC_GTEST_PROP(SinusoidalOraclePrecision, ValueAt256BitsAgreesWith512Bits, ()) {
  SinusoidalSpec s = *genSpec(false);
  const std::int64_t p = *genPosition(s);
  const std::size_t c = *rc::gen::inRange<std::size_t>(0, s.dim);
  const Real lo = value(s, p, c, 256), hi = value(s, p, c, 512);
  RC_LOG() << posenc::describe(s) << " p=" << p << " c=" << c << "\n256: " << show(lo) << "\n512: " << show(hi) << "\n";
  RC_ASSERT(bits_of(lo) == 256u);
  RC_ASSERT(bits_of(hi) == 512u);
  RC_ASSERT(abs_below_pow2(sub(lo, hi), -240));
  RC_CLASSIFY(std::llabs(p) >= (std::int64_t{1} << 30), "|p| >= 2^30");
}

RC_GTEST_PROP(SinusoidalOraclePrecision, FrequencyShiftAndDotAt256BitsAgreeWith512Bits, ()) {
  SinusoidalSpec s = *genSpec(false, 64);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, posenc::pair_count(s));
  const std::int64_t shift = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(-1000, 1000),
                                             rc::gen::inRange<std::int64_t>(-kMaxShift, kMaxShift + 1));
  const Real f256 = frequency(s, k, 256), f512 = frequency(s, k, 512);
  RC_ASSERT(abs_below_pow2(sub(f256, f512), mpfr_get_exp(raw(f512)) - 250));  // relative 2^-250
  RC_ASSERT(abs_below_pow2(sub(shift_cos(s, shift, k, 256), shift_cos(s, shift, k, 512)), -240));
  RC_ASSERT(abs_below_pow2(sub(shift_sin(s, shift, k, 256), shift_sin(s, shift, k, 512)), -240));
  RC_ASSERT(abs_below_pow2(sub(dot_closed_form(s, shift, 256), dot_closed_form(s, shift, 512)), -235));
}

// The P-vs-2P comparison is not vacuous: a genuinely low precision is detected.
TEST(SinusoidalOraclePrecision, LowPrecisionIsDetected) {
  const SinusoidalSpec s = posenc::vaswani_spec(8);
  EXPECT_FALSE(abs_below_pow2(sub(value(s, 12345, 0, 64), value(s, 12345, 0, 512)), -240));
  EXPECT_FALSE(abs_below_pow2(sub(value(s, 12345, 0, 200), value(s, 12345, 0, 512)), -240));
}

// ======================================================================================================
// SinusoidalOracleClosedForm
// ======================================================================================================

RC_GTEST_PROP(SinusoidalOracleClosedForm, PositionZeroIsZeroOnSinSlotsAndOneOnCosSlots, ()) {
  SinusoidalSpec s = *genSpec(true);
  RC_PRE(!(s.padding_row && *s.padding_row == 0));
  const auto v = row(s, 0);
  const std::size_t h = posenc::pair_count(s);
  for (std::size_t k = 0; k < h; ++k) {
    RC_ASSERT(mpfr_zero_p(raw(v[sin_column(s, k)])) != 0);
    RC_ASSERT(mpfr_cmp_ui(raw(v[cos_column(s, k)]), 1) == 0);
  }
  if (s.dim % 2 == 1) RC_ASSERT(mpfr_zero_p(raw(v[s.dim - 1])) != 0);
}

RC_GTEST_PROP(SinusoidalOracleClosedForm, FirstFrequencyIsMinTimescale, ()) {
  const SinusoidalSpec s = *genSpec(false);
  RC_ASSERT(mpfr_cmp_d(raw(frequency(s, 0)), s.min_timescale) == 0);
}

RC_GTEST_PROP(SinusoidalOracleClosedForm, Tensor2TensorLastFrequencyIsOneOverMaxTimescale, ()) {
  SinusoidalSpec s = *genSpec(false);
  s.rule = FrequencyRule::tensor2tensor;
  s.paper_form = PaperForm::exp;  // the pow form belongs to the paper rule
  const std::size_t h = posenc::pair_count(s);
  RC_PRE(h >= 2);
  const Real f = frequency(s, h - 1);
  Real want = make_real(1024);
  mpfr_set_d(raw(want), s.min_timescale, MPFR_RNDN);
  mpfr_div_d(raw(want), raw(want), s.base, MPFR_RNDN);
  RC_LOG() << show(f) << " vs " << show(want) << "\n";
  RC_ASSERT(abs_below_pow2(sub(f, want), mpfr_get_exp(raw(want)) - 254));
  // with min_timescale = 1 (the preset) it is 1/max_timescale
  const SinusoidalSpec t = posenc::tensor2tensor_spec(s.dim % 2 ? s.dim : s.dim + 1, 1.0, 1.0e4);
  Real inv = make_real(1024);
  mpfr_ui_div(raw(inv), 1, raw(make_real(1.0e4, 64)), MPFR_RNDN);
  RC_ASSERT(abs_below_pow2(sub(frequency(t, posenc::pair_count(t) - 1), inv), -13 - 254));
}

TEST(SinusoidalOracleClosedForm, PaperFrequencyAtHalfExponentIsInverseSquareRootOfBase) {
  for (std::size_t dim : {4u, 8u, 64u, 512u, 1024u}) {
    for (double base : {10000.0, 2.0, 500000.0, 12345.678}) {
      const SinusoidalSpec s = posenc::vaswani_spec(dim, base);
      Real want = make_real(1024);
      mpfr_rec_sqrt(raw(want), raw(make_real(base, 64)), MPFR_RNDN);
      const Real f = frequency(s, dim / 4);  // 2k/d = 1/2
      EXPECT_TRUE(abs_below_pow2(sub(f, want), mpfr_get_exp(raw(want)) - 254)) << dim << " " << base << " " << show(f);
    }
  }
}

// The exponent rule, transcribed again with Boost's own exp/log (a different MPFR path from the oracle's pow).
RC_GTEST_PROP(SinusoidalOracleClosedForm, FrequencyFollowsTheRuleOfTheSpec, ()) {
  const SinusoidalSpec s = *genSpec(false);
  const std::size_t h = posenc::pair_count(s);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, h);
  PrecisionGuard guard(400);
  const Real base = make_real(s.base, 400);
  Real e;
  switch (s.rule) {
    case FrequencyRule::paper: e = Real(2 * k) / Real(s.dim); break;
    case FrequencyRule::tensor2tensor: e = Real(k) / Real(std::max<std::size_t>(h - 1, 1)); break;
    case FrequencyRule::fairseq: e = Real(k) / Real(h - 1); break;
  }
  const Real want = Real(s.min_timescale) * boost::multiprecision::exp(-e * boost::multiprecision::log(base));
  const Real got = frequency(s, k);
  RC_LOG() << posenc::describe(s) << " k=" << k << " got " << show(got) << " want " << show(want) << "\n";
  RC_ASSERT(abs_below_pow2(sub(got, want), mpfr_get_exp(raw(want)) - 245));
  if (k + 1 < h) RC_ASSERT(mpfr_cmp(raw(frequency(s, k + 1)), raw(got)) < 0);  // strictly decreasing
}

TEST(SinusoidalOracleClosedForm, KnownEntries) {
  // p = 1, pair 0: sin(1), cos(1)
  const SinusoidalSpec v = posenc::vaswani_spec(8);
  EXPECT_EQ(to_decimal(value(v, 1, 0), 40), "8.414709848078965066525023216302989996226e-01");
  EXPECT_EQ(to_decimal(value(v, 1, 1), 40), "5.403023058681397174009366074429766037323e-01");
  const SinusoidalSpec m = posenc::marian_spec(8);
  EXPECT_TRUE(same(value(m, 1, 0), value(v, 1, 0)));
  EXPECT_TRUE(same(value(m, 1, 4), value(v, 1, 1)));
  // the exact t2t and fairseq rules are the same for h >= 2
  const SinusoidalSpec t = posenc::tensor2tensor_spec(64), f = posenc::fairseq_spec(64);
  for (std::size_t k = 0; k < 32; ++k) EXPECT_TRUE(same(frequency(t, k), frequency(f, k))) << k;
  // and differ from the paper rule except at k = 0
  EXPECT_FALSE(same(frequency(t, 5), frequency(posenc::marian_spec(64), 5)));
}

RC_GTEST_PROP(SinusoidalOracleClosedForm, RowSumOfSquaresIsH, ()) {
  const SinusoidalSpec s = *genSpec(false);
  const std::int64_t p = *genPosition(s);
  RC_PRE(!(s.padding_row && *s.padding_row == p));
  const auto v = row(s, p);
  Real sum = make_real(600);
  for (const Real& x : v) {
    RC_ASSERT(mpfr_cmpabs_ui(raw(x), 1) <= 0);  // values in [-1, 1]
    mpfr_fma(raw(sum), raw(x), raw(x), raw(sum), MPFR_RNDN);
  }
  RC_ASSERT(abs_below_pow2(sub(sum, make_real(std::int64_t(posenc::pair_count(s)), 64)), -240));
}

RC_GTEST_PROP(SinusoidalOracleClosedForm, LayoutsArePermutationsOfEachOther, ()) {
  SinusoidalSpec s = *genSpec(true);
  const std::int64_t p = *genPosition(s);
  SinusoidalSpec a = s, b = s;
  a.layout = Layout::interleaved;
  b.layout = Layout::halves;
  const std::size_t h = posenc::pair_count(s);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, h);
  RC_ASSERT(same(value(a, p, 2 * k), value(b, p, k)));
  RC_ASSERT(same(value(a, p, 2 * k + 1), value(b, p, h + k)));
}

RC_GTEST_PROP(SinusoidalOracleClosedForm, ShiftByKIsAFixedRotation, ()) {
  SinusoidalSpec s = *genSpec(false, 256);
  const std::int64_t lim = posenc::max_abs_position(s);
  const std::int64_t p = *genPosition(s);
  const std::int64_t k = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(-100, 100),
                                         rc::gen::inRange<std::int64_t>(-lim, lim + 1));
  const std::int64_t q = p + k;
  RC_PRE(q <= lim && q >= (s.signed_positions ? -lim : 0));
  RC_PRE(!(s.padding_row && (*s.padding_row == p || *s.padding_row == q)));
  const std::size_t i = *rc::gen::inRange<std::size_t>(0, posenc::pair_count(s));
  const Real sp = value(s, p, sin_column(s, i)), cp = value(s, p, cos_column(s, i));
  const Real c = shift_cos(s, k, i), sn = shift_sin(s, k, i);
  PrecisionGuard guard(600);
  const Real sq = c * sp + sn * cp, cq = c * cp - sn * sp;
  RC_ASSERT(abs_below_pow2(sub(sq, value(s, q, sin_column(s, i))), -240));
  RC_ASSERT(abs_below_pow2(sub(cq, value(s, q, cos_column(s, i))), -240));
}

RC_GTEST_PROP(SinusoidalOracleClosedForm, DotProductIsTheClosedFormAndSymmetric, ()) {
  SinusoidalSpec s = *genSpec(false, 128);
  const std::int64_t lim = posenc::max_abs_position(s);
  const std::int64_t p = *genPosition(s);
  const std::int64_t k = *rc::gen::inRange<std::int64_t>(-5000, 5000);
  const std::int64_t q = p + k;
  RC_PRE(q <= lim && q >= (s.signed_positions ? -lim : 0));
  RC_PRE(!(s.padding_row && (*s.padding_row == p || *s.padding_row == q)));
  const auto a = row(s, p), b = row(s, q);
  Real dot = make_real(700);
  for (std::size_t c = 0; c < s.dim; ++c) mpfr_fma(raw(dot), raw(a[c]), raw(b[c]), raw(dot), MPFR_RNDN);
  const Real closed = dot_closed_form(s, k);
  RC_ASSERT(abs_below_pow2(sub(dot, closed), -240));
  RC_ASSERT(same(closed, dot_closed_form(s, -k)));
}

RC_GTEST_PROP(SinusoidalOracleClosedForm, NegativePositionsMirrorPositiveOnes, ()) {
  SinusoidalSpec s = *genSpec(false);
  s.signed_positions = true;
  s.padding_row.reset();
  const std::int64_t p = *genPosition(s);
  const std::size_t c = *rc::gen::inRange<std::size_t>(0, s.dim);
  const Real a = value(s, p, c), b = value(s, -p, c);
  Real nb = b;
  const bool sin_slot = (s.layout == Layout::interleaved ? c % 2 == 0 : c < posenc::pair_count(s));
  if (sin_slot) mpfr_neg(raw(nb), raw(b), MPFR_RNDN);
  RC_ASSERT(same(a, nb));
}

TEST(SinusoidalOracleClosedForm, FairseqPaddingRowIsZeroAndTokensStartAtTwo) {
  for (Regime regime : {Regime::exact, Regime::emulated}) {
    for (std::size_t dim : {4u, 7u, 8u, 512u}) {
      SinusoidalSpec s = posenc::fairseq_spec(dim);
      s.regime = regime;
      EXPECT_EQ(s.first_position, 2);
      EXPECT_EQ(posenc::position_of_token(s, 0), 2);
      for (const Real& x : row(s, 1)) EXPECT_TRUE(mpfr_zero_p(raw(x)));
      for (std::size_t c = 0; c < dim; ++c) EXPECT_TRUE(mpfr_zero_p(raw(value(s, 1, c))));
      const auto first = row(s, 2);
      EXPECT_TRUE(same(first[0], value(s, 2, 0)));
      EXPECT_GT(std::fabs(to_d(first[0])), 0.5);  // sin(2 * omega_0) = sin 2
      if (dim % 2) {
        EXPECT_TRUE(mpfr_zero_p(raw(first[dim - 1])));
      }
    }
  }
}

// ======================================================================================================
// SinusoidalOracleEmulated
// ======================================================================================================

// Is c the correctly rounded float32 of the real y? (decides whether a libm float result may be used as
// an independent expectation)
bool is_rn32_of(float c, const Real& y) { return round_to_float(y) == c; }

Real hp_exp(float x) {
  Real y = make_real(300);
  mpfr_exp(raw(y), raw(make_real(double(x), 64)), MPFR_RNDN);
  return y;
}
Real hp_pow(float x, float y) {
  Real r = make_real(300);
  mpfr_pow(raw(r), raw(make_real(double(x), 64)), raw(make_real(double(y), 64)), MPFR_RNDN);
  return r;
}
Real hp_sin(float x) {
  Real y = make_real(300);
  mpfr_sin(raw(y), raw(make_real(double(x), 64)), MPFR_RNDN);
  return y;
}
Real hp_cos(float x) {
  Real y = make_real(300);
  mpfr_cos(raw(y), raw(make_real(double(x), 64)), MPFR_RNDN);
  return y;
}

// fairseq get_embedding for d = 8 with plain C arithmetic: emb = log(10000)/3 (double),
// w = expf(float(k) * float(-emb)), angle = float(p) * w, entry = sinf/cosf(angle).
TEST(SinusoidalOracleEmulated, FairseqDim8MatchesPlainFloatArithmetic) {
  SinusoidalSpec s = posenc::fairseq_spec(8);
  s.regime = Regime::emulated;
  const double ln = std::log(10000.0);
  Real ln_hp = make_real(300);
  mpfr_log(raw(ln_hp), raw(make_real(10000.0, 64)), MPFR_RNDN);
  ASSERT_EQ(round_to_double(ln_hp), ln) << "libm log(10000) is not correctly rounded";
  volatile double emb = ln / 3.0;
  const float neg_emb = static_cast<float>(-emb);
  int verified = 0, total = 0;
  for (int k = 0; k < 4; ++k) {
    volatile float arg = static_cast<float>(k) * neg_emb;
    const float w = std::exp(static_cast<float>(arg));
    if (!is_rn32_of(w, hp_exp(arg))) continue;  // libm expf not correctly rounded here: no expectation
    ++verified;
    EXPECT_EQ(to_d(emulated_frequency(s, k)), double(w)) << "k=" << k;
    for (std::int64_t p : {2, 3, 17, 100, 1000, 48039}) {
      volatile float angle = static_cast<float>(p) * w;
      const float sv = std::sin(static_cast<float>(angle)), cv = std::cos(static_cast<float>(angle));
      ++total;
      if (is_rn32_of(sv, hp_sin(angle)) && is_rn32_of(cv, hp_cos(angle))) {
        EXPECT_EQ(to_d(value(s, p, k)), double(sv)) << "p=" << p << " k=" << k;
        EXPECT_EQ(to_d(value(s, p, 4 + k)), double(cv)) << "p=" << p << " k=" << k;
      } else {
        --total;
      }
    }
  }
  EXPECT_GE(verified, 3) << "too few correctly rounded expf results to check against";
  EXPECT_GE(total, 12);
}

// tensor2tensor get_timing_signal_1d for d = 9 (odd: zero column), min_timescale 1, max 1e4:
// inc = float(log(1e4)) / float(max(h-1, 1)) in float32, inv_ts = 1 * expf(float(k) * -inc).
TEST(SinusoidalOracleEmulated, Tensor2TensorDim9MatchesPlainFloatArithmetic) {
  SinusoidalSpec s = posenc::tensor2tensor_spec(9);
  s.regime = Regime::emulated;
  const double ln = std::log(1.0e4 / 1.0);
  volatile float inc = static_cast<float>(ln) / 3.0f;
  int verified = 0;
  for (int k = 0; k < 4; ++k) {
    volatile float arg = static_cast<float>(k) * -inc;
    const float w = 1.0f * std::exp(static_cast<float>(arg));
    if (!is_rn32_of(w, hp_exp(arg))) continue;
    ++verified;
    EXPECT_EQ(to_d(emulated_frequency(s, k)), double(w)) << "k=" << k;
    for (std::int64_t p : {1, 5, 31, 4096, 99999}) {
      volatile float angle = static_cast<float>(p) * w;
      const float sv = std::sin(static_cast<float>(angle)), cv = std::cos(static_cast<float>(angle));
      if (is_rn32_of(sv, hp_sin(angle))) {
        EXPECT_EQ(to_d(value(s, p, k)), double(sv)) << "p=" << p;
      }
      if (is_rn32_of(cv, hp_cos(angle))) {
        EXPECT_EQ(to_d(value(s, p, 4 + k)), double(cv)) << "p=" << p;
      }
    }
    EXPECT_TRUE(mpfr_zero_p(raw(value(s, 77, 8))));
  }
  EXPECT_GE(verified, 3);
}

// The same transcription with plain C float/double arithmetic for random dims, bases, pairs and
// positions (including p > 2^24, where float(p) rounds). libm results are used as expectations only
// where they are verified to be correctly rounded (cases where they are not are discarded / skipped).
RC_GTEST_PROP(SinusoidalOracleEmulated, EmulatedMatchesPlainFloatArithmetic, ()) {
  SinusoidalSpec s = *genSpec(true);
  RC_PRE(s.regime == Regime::emulated);
  const std::size_t h = posenc::pair_count(s);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, h);
  const std::int64_t p = *genPosition(s);
  RC_PRE(!(s.padding_row && *s.padding_row == p));
  const double ln = std::log(s.base);
  Real ln_hp = make_real(300);
  mpfr_log(raw(ln_hp), raw(make_real(s.base, 64)), MPFR_RNDN);
  RC_PRE(round_to_double(ln_hp) == ln);
  volatile float w;
  if (s.rule == FrequencyRule::paper && s.paper_form == PaperForm::pow) {
    // PyTorch's pow form (Transformer-XL, XLNet): 1 / (base ** (arange(0.0, d, 2.0) / d)), all float32. The
    // float pow from the double pow, used only where that is the correctly rounded float32 pow.
    volatile float t = static_cast<float>(2 * k) / static_cast<float>(s.dim);
    const float b32 = static_cast<float>(s.base);
    const float pw = static_cast<float>(std::pow(static_cast<double>(b32), static_cast<double>(t)));
    RC_PRE(is_rn32_of(pw, hp_pow(b32, t)));
    w = 1.0f / pw;
    if (s.min_timescale != 1.0) w = static_cast<float>(s.min_timescale) * w;
    RC_CLASSIFY(true, "paper (PyTorch pow form)");
  } else {
    volatile float arg;
    if (s.rule == FrequencyRule::tensor2tensor) {
      volatile float inc = static_cast<float>(ln) / static_cast<float>(std::max<std::size_t>(h - 1, 1));
      arg = static_cast<float>(k) * -inc;
    } else if (s.rule == FrequencyRule::paper) {
      // PyTorch's exp form (HF NEZHA): arange(0, d, 2).float() * (-math.log(base) / d).
      volatile double c = -ln / static_cast<double>(s.dim);
      volatile float c32 = static_cast<float>(c);
      arg = static_cast<float>(2 * k) * c32;
    } else {
      volatile double emb = ln / static_cast<double>(h - 1);
      volatile float neg_emb = static_cast<float>(-emb);
      arg = static_cast<float>(k) * neg_emb;
    }
    const float e = std::exp(static_cast<float>(arg));
    RC_PRE(is_rn32_of(e, hp_exp(arg)));
    w = e;
    if (s.rule == FrequencyRule::tensor2tensor || s.min_timescale != 1.0) w = static_cast<float>(s.min_timescale) * e;
    RC_CLASSIFY(s.rule == FrequencyRule::paper, "paper (PyTorch exp form)");
  }
  RC_LOG() << posenc::describe(s) << " k=" << k << " p=" << p << std::hexfloat << " w=" << w << "\n";
  RC_ASSERT(holds(emulated_frequency(s, k), w));
  volatile float angle = static_cast<float>(p) * w;
  const float sv = std::sin(static_cast<float>(angle)), cv = std::cos(static_cast<float>(angle));
  const bool sin_ok = is_rn32_of(sv, hp_sin(angle)), cos_ok = is_rn32_of(cv, hp_cos(angle));
  if (sin_ok) RC_ASSERT(holds(value(s, p, sin_column(s, k)), sv));
  if (cos_ok) RC_ASSERT(holds(value(s, p, cos_column(s, k)), cv));
  RC_CLASSIFY(!sin_ok || !cos_ok, "libm sinf/cosf not correctly rounded here (entry skipped)");
  RC_CLASSIFY(std::llabs(p) > (1 << 24), "|p| > 2^24");
  RC_CLASSIFY(s.rule == FrequencyRule::fairseq, "fairseq");
}

// Transformer-XL's PositionalEmbedding(demb = 16) with plain C arithmetic: inv_freq = 1 / powf-like(10000, 2k / 16)
// in float32, angle = float(p) * inv_freq (torch.ger), entry = sinf/cosf(angle); the exact regime's frequencies
// are the paper rule's, whatever the form.
TEST(SinusoidalOracleEmulated, TransformerXlDim16MatchesPlainFloatArithmetic) {
  SinusoidalSpec s = posenc::sinusoidal_preset("transformer-xl", 16);
  s.regime = Regime::emulated;
  int verified = 0, total = 0;
  for (int k = 0; k < 8; ++k) {
    volatile float t = static_cast<float>(2 * k) / 16.0f;
    const float pw = static_cast<float>(std::pow(10000.0, static_cast<double>(t)));
    if (!is_rn32_of(pw, hp_pow(10000.0f, t))) continue;  // the double pow rounded twice: no expectation
    ++verified;
    volatile float w = 1.0f / pw;
    EXPECT_EQ(to_d(emulated_frequency(s, k)), double(w)) << "k=" << k;
    SinusoidalSpec ex = s;
    ex.regime = Regime::exact;
    SinusoidalSpec paper = posenc::marian_spec(16);
    EXPECT_TRUE(same(frequency(ex, k), frequency(paper, k))) << "k=" << k;
    for (std::int64_t p : {0, 1, 7, 511, 4095, 100000}) {
      volatile float angle = static_cast<float>(p) * w;
      const float sv = std::sin(static_cast<float>(angle)), cv = std::cos(static_cast<float>(angle));
      if (is_rn32_of(sv, hp_sin(angle)) && is_rn32_of(cv, hp_cos(angle))) {
        ++total;
        EXPECT_EQ(to_d(value(s, p, k)), double(sv)) << "p=" << p << " k=" << k;       // halves: sin at k
        EXPECT_EQ(to_d(value(s, p, 8 + k)), double(cv)) << "p=" << p << " k=" << k;   // cos at 8 + k
      }
    }
  }
  EXPECT_GE(verified, 6) << "too few correctly rounded float32 pows to check against";
  EXPECT_GE(total, 30);
}

RC_GTEST_PROP(SinusoidalOracleEmulated, EmulatedValuesAreFloatsAndExactAtZero, ()) {
  SinusoidalSpec s = *genSpec(true);
  RC_PRE(s.regime == Regime::emulated);
  const std::int64_t p = *genPosition(s);
  const std::size_t c = *rc::gen::inRange<std::size_t>(0, s.dim);
  const Real v = value(s, p, c);
  RC_ASSERT(same(v, round_to_float_precision(v)));
  RC_ASSERT(mpfr_cmpabs_ui(raw(v), 1) <= 0);
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, posenc::pair_count(s));
  const Real w = emulated_frequency(s, k);
  RC_ASSERT(same(w, round_to_float_precision(w)));
  if (k == 0) RC_ASSERT(mpfr_cmp_d(raw(w), double(static_cast<float>(s.min_timescale))) == 0);
  if (!(s.padding_row && *s.padding_row == 0)) {
    SinusoidalSpec e = s;
    e.regime = Regime::exact;
    RC_ASSERT(same(value(s, 0, c), value(e, 0, c)));
  }
}

// |emulated - exact| <= |p| w_k (4 ln(base) + 6) 2^-24 + 2^-24: the float32 frequency carries a relative
// error of at most (4 ln(base) + 3) 2^-24 (rounded log, division, product and exp argument k*inc with
// |k*inc| <= ln(base), exp and min_timescale roundings), the angle two more roundings, the entry half an ulp.
RC_GTEST_PROP(SinusoidalOracleEmulated, EmulatedIsWithinTheFloat32ErrorOfExact, ()) {
  SinusoidalSpec s = *genSpec(true);
  RC_PRE(s.regime == Regime::emulated && s.min_timescale >= 1.0e-3 && s.base <= 1.0e6);
  const std::int64_t p = *rc::gen::inRange<std::int64_t>(0, 1 << 20);
  RC_PRE(p <= posenc::max_abs_position(s) && !(s.padding_row && *s.padding_row == p));
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, posenc::pair_count(s));
  SinusoidalSpec e = s;
  e.regime = Regime::exact;
  const double w = to_d(frequency(s, k));
  const double bound = (double(p) * w * (4.0 * std::log(s.base) + 6.0) + 1.0) * 0x1p-24;
  const double err_s = std::fabs(to_d(sub(value(s, p, sin_column(s, k)), value(e, p, sin_column(s, k)))));
  const double err_c = std::fabs(to_d(sub(value(s, p, cos_column(s, k)), value(e, p, cos_column(s, k)))));
  RC_LOG() << posenc::describe(s) << " p=" << p << " k=" << k << " err " << err_s << " " << err_c << " bound "
           << bound << "\n";
  RC_ASSERT(err_s <= bound);
  RC_ASSERT(err_c <= bound);
  RC_CLASSIFY(p < 16, "small p");
}

TEST(SinusoidalOracleEmulated, SmallPositionsAreWithinAFewUlpOfExact) {
  for (auto mk : {+[](std::size_t d) { return posenc::tensor2tensor_spec(d); },
                  +[](std::size_t d) { return posenc::fairseq_spec(d, 0); }}) {
    SinusoidalSpec s = mk(64);
    s.regime = Regime::emulated;
    SinusoidalSpec e = s;
    e.regime = Regime::exact;
    for (std::int64_t p = 1; p <= 3; ++p)
      for (std::size_t c = 0; c < 64; ++c) {
        const double err = std::fabs(to_d(sub(value(s, p, c), value(e, p, c))));
        EXPECT_LE(err, 32 * 0x1p-24) << posenc::describe(s) << " p=" << p << " c=" << c;
      }
  }
}

// CONVENTIONS §2.1: at p = 1e5 the t2t and fairseq float32 tables differ by up to ~7.7e-3 for some d,
// because their float32 frequencies round differently; at p = 1e5 both are far from exact too.
TEST(SinusoidalOracleEmulated, Tensor2TensorAndFairseqDifferAtLargePositions) {
  double worst = 0, worst_exact = 0;
  std::size_t worst_dim = 0;
  std::int64_t p = 100000;
  for (std::size_t dim = 4; dim <= 512; dim += 2) {
    SinusoidalSpec t = posenc::tensor2tensor_spec(dim), f = posenc::fairseq_spec(dim);
    t.regime = f.regime = Regime::emulated;
    const auto a = row(t, p, 64), b = row(f, p, 64);
    for (std::size_t c = 0; c < dim; ++c) {
      const double d = std::fabs(to_d(a[c]) - to_d(b[c]));
      if (d > worst) {
        worst = d;
        worst_dim = dim;
      }
    }
  }
  {
    SinusoidalSpec t = posenc::tensor2tensor_spec(512);
    SinusoidalSpec te = t;
    t.regime = Regime::emulated;
    for (std::size_t c = 0; c < 512; ++c)
      worst_exact = std::max(worst_exact, std::fabs(to_d(sub(value(t, p, c), value(te, p, c)))));
  }
  std::printf("t2t vs fairseq emulated at p=1e5: max |diff| = %.3g (dim %zu); t2t emulated vs exact (d=512): %.3g\n",
              worst, worst_dim, worst_exact);
  RecordProperty("t2t_vs_fairseq_max_diff", std::to_string(worst));
  EXPECT_GT(worst, 3e-3);
  EXPECT_LT(worst, 2e-2);
  EXPECT_GT(worst_exact, 1e-3);
}

// ======================================================================================================
// SinusoidalOracleErrors
// ======================================================================================================


TEST(SinusoidalOracleErrors, InvalidInputsNameParameterValueAndRange) {
  const SinusoidalSpec s = posenc::vaswani_spec(8);
  SinusoidalSpec bad = s;
  bad.dim = 0;
  EXPECT_NE(error_of([&] { value(bad, 0, 0); }).find("dim"), std::string::npos);
  EXPECT_NE(error_of([&] { value(s, -1, 0); }).find("position = -1"), std::string::npos);
  EXPECT_NE(error_of([&] { value(s, (std::int64_t{1} << 40) + 1, 0); }).find("position"), std::string::npos);
  SinusoidalSpec big_ts = s;
  big_ts.min_timescale = 1.0e6;
  EXPECT_NE(error_of([&] { row(big_ts, std::int64_t{1} << 30); }).find("position"), std::string::npos);
  const std::string col = error_of([&] { value(s, 0, 8); });
  EXPECT_NE(col.find("column = 8"), std::string::npos) << col;
  EXPECT_NE(col.find("dim = 8"), std::string::npos) << col;
  EXPECT_NE(error_of([&] { frequency(s, 4); }).find("pair = 4"), std::string::npos);
  EXPECT_NE(error_of([&] { shift_cos(s, 1, 4); }).find("pair"), std::string::npos);
  EXPECT_NE(error_of([&] { value(s, 0, 0, 8); }).find("bits = 8"), std::string::npos);
  EXPECT_NE(error_of([&] { shift_sin(s, kMaxShift + 1, 0); }).find("k = "), std::string::npos);
  EXPECT_NE(error_of([&] { emulated_frequency(s, 0); }).find("regime"), std::string::npos);
  SinusoidalSpec em = posenc::fairseq_spec(8);
  em.regime = Regime::emulated;
  EXPECT_NE(error_of([&] { dot_closed_form(em, 1); }).find("regime"), std::string::npos);
  EXPECT_NE(error_of([&] { shift_cos(em, 1, 0); }).find("regime"), std::string::npos);
  EXPECT_NO_THROW(value(s, std::int64_t{1} << 40, 7));
  SinusoidalSpec sg = s;
  sg.signed_positions = true;
  EXPECT_NO_THROW(value(sg, -(std::int64_t{1} << 40), 7));
}

}  // namespace oracle_sinusoidal
