// Tests of the accuracy metric itself (accuracy.hpp): it must be able to fail, so each test pins a
// known value that a plausible mistake (ulp from y instead of r, no emin clamp, raw bit difference,
// +0 != -0, folding NaN into a number) would get wrong.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "verify/accuracy.hpp"
#include "verify/budget.hpp"
#include "verify/check_report.hpp"
#include "posenc/half.hpp"
#include "posenc/reference/mp.hpp"

namespace claims_accuracy_metric {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc::test;
namespace rf = posenc::reference;

// The compiler's own binary16 (the conversions' reference): _Float16 (x86-64), __fp16 on AArch64, whose GCC 12 C++
// front end has no _Float16; both convert a double to binary16 in one rounding.
#if defined(__aarch64__)
using HalfRef = __fp16;
#define POSENC_HALF_REF 1
#elif defined(__FLT16_MANT_DIG__)
using HalfRef = _Float16;
#define POSENC_HALF_REF 1
#endif

Real R(double x) { return rf::make_real(x, 256); }
Real R(const char* text) { return rf::parse_real(text, 256); }

TEST(AccuracyMetric, UlpOfOneAndThreeQuarters) {
  EXPECT_EQ(ulp(R(1.0), DType::f32), std::ldexp(1.0, -23));
  EXPECT_EQ(ulp(R(0.75), DType::f32), std::ldexp(1.0, -24));
  EXPECT_EQ(ulp(R(1.0), DType::f64), std::ldexp(1.0, -52));
  EXPECT_EQ(ulp(R(0.75), DType::f64), std::ldexp(1.0, -53));
  EXPECT_EQ(ulp(R(-0.75), DType::f32), std::ldexp(1.0, -24));
  // Just below a power of two the exponent is the lower one.
  EXPECT_EQ(ulp(R("0.99999999999999999999999999"), DType::f32), std::ldexp(1.0, -24));
  EXPECT_EQ(ulp(R(2.0), DType::f32), std::ldexp(1.0, -22));
}

TEST(AccuracyMetric, SubnormalRangeUsesMinimumExponent) {
  // Below 2^-126 the f32 ulp stays 2^-149 (emin = -126, p = 24); below 2^-1022 the f64 ulp is 2^-1074.
  EXPECT_EQ(ulp(R(std::ldexp(1.0, -130)), DType::f32), std::ldexp(1.0, -149));
  EXPECT_EQ(ulp(R(std::ldexp(1.0, -126)), DType::f32), std::ldexp(1.0, -149));
  EXPECT_EQ(ulp(R(std::ldexp(1.0, -125)), DType::f32), std::ldexp(1.0, -148));
  EXPECT_EQ(ulp(R(std::ldexp(1.0, -1070)), DType::f64), std::ldexp(1.0, -1074));
  EXPECT_EQ(ulp(R(0.0), DType::f32), std::ldexp(1.0, -149));
  EXPECT_EQ(ulp(0.0, DType::f64), std::ldexp(1.0, -1074));
}

TEST(AccuracyMetric, OneUlpOffIsOneAndHalfwayIsOneHalf) {
  const float one = 1.0f, above = std::nextafter(one, 2.0f);
  EXPECT_DOUBLE_EQ(kernel_error(above, R(1.0), DType::f32).err, 1.0);
  // r halfway between 1 and its successor: error of either neighbour is 0.5 (ulp taken from r).
  const Real half = R(1.0 + std::ldexp(1.0, -24));
  EXPECT_DOUBLE_EQ(kernel_error(one, half, DType::f32).err, 0.5);
  EXPECT_DOUBLE_EQ(kernel_error(above, half, DType::f32).err, 0.5);
  // Below 1 the ulp halves: y = 1 - 2^-24 vs r = 1 is 1 ulp of r = 1 ... measured in ulp(r) = 2^-23: 0.5.
  EXPECT_DOUBLE_EQ(kernel_error(std::nextafter(one, 0.0f), R(1.0), DType::f32).err, 0.5);
  // ... and r = 1 - 2^-24 with y = 1 is 1 ulp of r (ulp(r) = 2^-24): the ulp comes from r, not from y.
  EXPECT_DOUBLE_EQ(kernel_error(one, R(1.0 - std::ldexp(1.0, -24)), DType::f32).err, 1.0);
  EXPECT_DOUBLE_EQ(kernel_error(1.0 + std::ldexp(1.0, -52), R(1.0), DType::f64).err, 1.0);
  EXPECT_LT(kernel_error(0.1, R("0.1"), DType::f64).err, 0.5);
  EXPECT_GT(kernel_error(0.1f, R("0.1"), DType::f32).err, 0.0);
  EXPECT_LT(kernel_error(0.1f, R("0.1"), DType::f32).err, 0.5);
}

TEST(AccuracyMetric, ExactDifferenceIsFormedInMultiprecision) {
  // r differs from y by 2^-200: a metric that converted r to double first would report 0.
  const Real r = R(1.0) + rf::make_real(std::ldexp(1.0, -200), 256);
  const Measure m = kernel_error(1.0, rf::with_bits(r, 256), DType::f64);
  ASSERT_TRUE(m.ok());
  EXPECT_GT(m.err, 0.0);
  EXPECT_DOUBLE_EQ(m.err, std::ldexp(1.0, -200) / std::ldexp(1.0, -52));
}

TEST(AccuracyMetric, ScaledErrorUsesTheLargerOfRAndS) {
  // r = 2^-30, y = 0: kernel would be zero-vs-nonzero; scaled with S = 1 is 2^-30 / 2^-23 = 2^-7.
  const Measure m = scaled_error(0.0, R(std::ldexp(1.0, -30)), 1.0, DType::f32);
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m.err, std::ldexp(1.0, -7));
  // r larger than S: ulp(r) is used. r = 4, y = 4 + 2^-21 (1 ulp_f32(4) = 2^-21) -> 1.
  EXPECT_DOUBLE_EQ(scaled_error(4.0 + std::ldexp(1.0, -21), R(4.0), 1.0, DType::f32).err, 1.0);
  // S = 64 (a dot product of 128 entries): ulp_f64(64) = 2^-46.
  EXPECT_DOUBLE_EQ(scaled_error(std::ldexp(1.0, -46), R(0.0), 64.0, DType::f64).err, 1.0);
  // A sign change near zero is a small number in the scaled metric, a class in the kernel metric.
  EXPECT_TRUE(scaled_error(-1e-20, R(1e-20), 1.0, DType::f64).ok());
  EXPECT_EQ(kernel_error(-1e-20, R(1e-20), DType::f64).cls, Class::sign_mismatch);
}

TEST(AccuracyMetric, FailureClassesAreNotNumbers) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(kernel_error(nan, R(1.0), DType::f64).cls, Class::nan);
  EXPECT_EQ(scaled_error(nan, R(1.0), 1.0, DType::f64).cls, Class::nan);
  EXPECT_EQ(absolute_error(nan, R(1.0)).cls, Class::nan);
  EXPECT_EQ(kernel_error(inf, R(1.0), DType::f64).cls, Class::inf);
  EXPECT_EQ(scaled_error(-inf, R(1.0), 1.0, DType::f32).cls, Class::inf);
  EXPECT_EQ(kernel_error(0.0, R(1e-30), DType::f64).cls, Class::zero_vs_nonzero);
  EXPECT_EQ(kernel_error(1e-300, R(0.0), DType::f64).cls, Class::zero_vs_nonzero);
  EXPECT_EQ(kernel_error(-0.5, R(0.5), DType::f64).cls, Class::sign_mismatch);
  EXPECT_FALSE(kernel_error(nan, R(1.0), DType::f64).ok());
  // Both zero (either sign): exact.
  EXPECT_TRUE(kernel_error(-0.0, R(0.0), DType::f64).ok());
  EXPECT_EQ(kernel_error(-0.0, R(0.0), DType::f64).err, 0.0);
}

TEST(AccuracyMetric, MonotoneUlpDistanceAcrossZeroAndInfinity) {
  EXPECT_EQ(ulp_distance(0.0f, -0.0f), 0u);
  EXPECT_EQ(ulp_distance(0.0, -0.0), 0u);
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulp_distance(tiny, -tiny), 2u);  // raw bit difference would be ~2^31
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1u);
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 0.0f)), 1u);
  const float fmax = std::numeric_limits<float>::max(), finf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ulp_distance(fmax, finf), 1u);
  EXPECT_EQ(ulp_distance(-fmax, -finf), 1u);
  EXPECT_EQ(*ulp_distance(-finf, finf), 2u * 0x7f800000u);
  const double dinf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(*ulp_distance(-dinf, dinf), 2ull * 0x7ff0000000000000ull);  // exceeds INT64_MAX
  EXPECT_FALSE(ulp_distance(std::nanf(""), 1.0f).has_value());
  EXPECT_FALSE(ulp_distance(1.0, std::nan("")).has_value());
}

RC_GTEST_PROP(AccuracyMetric, UlpDistanceIsMonotoneAndAgreesWithNextafter, (float a, int steps)) {
  RC_PRE(std::isfinite(a));
  const int n = std::abs(steps) % 64;
  float b = a;
  for (int i = 0; i < n; ++i) b = std::nextafter(b, std::numeric_limits<float>::infinity());
  RC_PRE(std::isfinite(b));
  // nextafter steps over representable numbers (-0 steps to +denorm_min, never to +0), so the count of
  // steps is the distance; the monotone key must agree.
  RC_ASSERT(*ulp_distance(a, b) == static_cast<std::uint64_t>(n));
  RC_ASSERT(monotone_key(a) <= monotone_key(b));
}

RC_GTEST_PROP(AccuracyMetric, KernelErrorOfTheRoundedValueIsAtMostOneHalf, (double x)) {
  RC_PRE(std::isfinite(x) && x != 0.0);
  const Real r = rf::make_real(x, 256) * rf::make_real(1.0 + std::ldexp(1.0, -40), 256);  // not a float
  const float y = rf::round_to_float(r);
  RC_PRE(std::isfinite(y) && y != 0.0f);
  const Measure m = kernel_error(y, rf::with_bits(r, 256), DType::f32);
  RC_ASSERT(m.ok());
  RC_ASSERT(m.err <= 0.5);
  // The neighbour away from r is more than half an ulp off.
  const float other = std::nextafter(y, (static_cast<double>(y) < x) ? -INFINITY : INFINITY);
  if (std::isfinite(other) && other != 0.0f && std::signbit(other) == std::signbit(y))
    RC_ASSERT(kernel_error(other, rf::with_bits(r, 256), DType::f32).err >= 0.5);
}


// ---- posenc/half.hpp: the 16-bit storage types kernels round into ---------------------------------------------

TEST(HalfConversion, EveryF16AndBf16PatternRoundTripsAndRandomDoublesRoundAsTheCompilerDoes) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const posenc::f16 h{static_cast<std::uint16_t>(b)};
    const posenc::bf16 g{static_cast<std::uint16_t>(b)};
    const double vh = posenc::to_double(h), vg = posenc::to_double(g);
    if (!std::isnan(vh)) {
      EXPECT_EQ(posenc::to_f16(vh).bits, b) << std::hex << b;
    }
    if (!std::isnan(vg)) {
      EXPECT_EQ(posenc::to_bf16(vg).bits, b) << std::hex << b;
    }
#if defined(POSENC_HALF_REF)
    HalfRef ref;
    std::memcpy(&ref, &h, 2);
    if (!std::isnan(vh)) {
      EXPECT_EQ(vh, static_cast<double>(ref)) << std::hex << b;
    }
#endif
  }
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 200000; ++i) {
    // Doubles spread over both formats' ranges, including their subnormals, overflow and exact ties.
    const double m = std::ldexp(static_cast<double>(rng() >> 11), -53) + 1.0;
    const int e = static_cast<int>(rng() % 300) - 150;
    double y = std::ldexp(m, e) * ((rng() & 1) ? -1.0 : 1.0);
    if (i % 7 == 0) y = std::ldexp(2 * std::floor(std::ldexp(m, 10)) + 1, e - 11);  // a tie of the f16 grid
#if defined(POSENC_HALF_REF)
    const auto ref = static_cast<HalfRef>(y);
    std::uint16_t rb;
    std::memcpy(&rb, &ref, 2);
    EXPECT_EQ(posenc::to_f16(y).bits, rb) << y;
#endif
    // bf16: the nearest bf16 value, ties to even, from the exact double (no rounding through float).
    const double r = posenc::to_double(posenc::to_bf16(y));
    if (std::isfinite(r) && std::fabs(y) >= 0x1p-126) {
      const double ulp = std::ldexp(1.0, std::ilogb(y) - 7);
      EXPECT_LE(std::fabs(r - y), ulp / 2) << y;
    }
  }
}

}  // namespace claims_accuracy_metric

// ---- the check report's sums and worst entries: independent of the order entries arrive in --------------------

namespace claims_check_report {

using posenc::verify::CheckAccumulator;
using posenc::verify::ExactSum;

TEST(CheckReport, ExactSumIsTheCorrectlyRoundedSumInAnyOrder) {
  // Known sums a plain double loop gets wrong: cancellation, and a half-way case decided by a tiny last term.
  ExactSum a;
  for (double x : {1e16, 1.0, -1e16}) a.add(x);
  EXPECT_EQ(a.value(), 1.0);
  ExactSum h;  // 1 + 2^-53 + 2^-106: above the half-way point, rounds up to 1 + 2^-52
  for (double x : {0x1p-106, 0x1p-53, 1.0}) h.add(x);
  EXPECT_EQ(h.value(), 1.0 + 0x1p-52);
  // Random non-negative magnitudes over 60 binades (ulp errors), summed in shuffled orders and merged at random
  // splits: the value never changes.
  std::mt19937_64 rng(7);
  std::vector<double> xs(5000);
  for (double& x : xs) x = std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng), static_cast<int>(rng() % 60) - 30);
  ExactSum ref;
  for (double x : xs) ref.add(x);
  double naive_min = INFINITY, naive_max = -INFINITY;
  for (int t = 0; t < 20; ++t) {
    std::shuffle(xs.begin(), xs.end(), rng);
    const std::size_t cut = rng() % xs.size();
    ExactSum left, right;
    double naive = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) (i < cut ? left : right).add(xs[i]), naive += xs[i];
    left.add(right);
    EXPECT_EQ(left.value(), ref.value()) << "order " << t << ", split at " << cut;
    naive_min = std::min(naive_min, naive), naive_max = std::max(naive_max, naive);
  }
  EXPECT_LT(naive_min, naive_max) << "the orders tried do not move a plain sum: the test would not see a plain sum";
}

TEST(CheckReport, ReportIsTheSameWhateverOrderAndSplitTheEntriesCome) {
  // The same entries added in shuffled orders to two accumulators (two threads) and merged: the same report, its
  // means and its worst entries (with ties: equal metrics at different places) included.
  const auto& row = posenc::verify::budget("sinusoidal.check.exact.f32");
  std::mt19937_64 rng(11);
  struct Entry {
    std::int64_t p;
    std::size_t col;
    double y, r;
  };
  std::vector<Entry> entries;
  for (std::int64_t p = 0; p < 64; ++p)
    for (std::size_t c = 0; c < 8; ++c) {
      const double r = std::sin(1.0 + static_cast<double>(c));  // one reference per column: many equal metrics
      const float f = static_cast<float>(r);
      const int off = static_cast<int>(rng() % 3) - 1;  // the float32 neighbours or the nearest float
      entries.push_back({p, c, off == 0 ? f : std::nextafter(f, off > 0 ? 2.0f : -2.0f), r});
    }
  std::string first;
  for (int t = 0; t < 10; ++t) {
    std::shuffle(entries.begin(), entries.end(), rng);
    const std::size_t cut = rng() % entries.size();
    CheckAccumulator a("exact", row, posenc::DType::f32, 8), b("exact", row, posenc::DType::f32, 8);
    for (std::size_t i = 0; i < entries.size(); ++i)
      (i < cut ? a : b).add(entries[i].p, entries[i].col, entries[i].y, posenc::reference::Real(entries[i].r));
    a.merge(b);
    const std::string json = a.to_json().dump();
    if (t == 0) first = json;
    EXPECT_EQ(json, first) << "order " << t << ", split at " << cut;
  }
}

}  // namespace claims_check_report
