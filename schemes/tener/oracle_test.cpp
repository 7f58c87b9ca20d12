// Self-tests of the TENER oracle (posenc/reference/tener.hpp), each built to fail if the oracle is wrong:
//   * the exact table against libm doubles at small t, against an independent MPFR evaluation (10000^(-k/(h-1)) by
//     mpfr_ui_pow at 1200 bits) for correct rounding at the hard positions, the frequencies 10^-k of h = 5 (so the
//     last one is exactly 1/10000: the h - 1 denominator), the [sin | cos] halves, sin odd / cos even bit for bit,
//     the odd-d_head zero column and the zero row at t = -L exactly when L > init_size / 2;
//   * the emulated table against get_embedding's steps in plain C++ float / double arithmetic (MPFR only for exp,
//     sin, cos), and one value derived by hand;
//   * scores against a direct double computation, a 1200-bit evaluation (with cancellation down to 2^-106 of the
//     terms), the scale flag, the roles of the two biases, and the distance each term reads;
//   * _shift and _transpose_shift of relative_transformer.py written as literal flat-index reshapes, and the whole
//     forward (AC + _shift(B + D) + _transpose_shift(E)) against the oracle's scores;
//   * every bad argument against the posenc::Error it must raise.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/mp.hpp"
#include "posenc/reference/tener.hpp"
#include "posenc/tener_spec.hpp"
#include "test_util.hpp"

namespace oracle_tener {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::Regime;
using posenc::TenerSpec;
using posenc::TenerWeights;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

TenerSpec spec(std::size_t d_head, Regime regime = Regime::exact, std::size_t init_size = 1200, bool scale = false,
               std::size_t heads = 1) {
  return TenerSpec{.heads = heads, .d_head = d_head, .scale = scale, .init_size = init_size, .regime = regime};
}

TenerWeights zero_weights(const TenerSpec& s) {
  return TenerWeights{std::vector<double>(s.heads * s.d_head, 0.0), std::vector<double>(s.heads * s.d_head, 0.0)};
}

std::vector<double> random_vector(std::mt19937_64& g, std::size_t n, double lo = -2.0, double hi = 2.0) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(g);
  return v;
}

TenerWeights random_weights(std::mt19937_64& g, const TenerSpec& s) {
  return TenerWeights{random_vector(g, s.heads * s.d_head), random_vector(g, s.heads * s.d_head)};
}

constexpr unsigned kWide = 1200;

Real negated(const Real& x) {
  Real y = make_real(bits_of(x));
  mpfr_neg(raw(y), raw(x), MPFR_RNDN);
  return y;
}

// sin / cos(t 10000^(-k/(h-1))) at kWide bits by another route than the oracle's exp(-k ln(10000)/(h-1)).
Real wide_trig(std::size_t h, std::size_t k, std::int64_t t, bool cosine) {
  Real x = make_real(kWide), w = make_real(kWide), a = make_real(kWide), y = make_real(kWide);
  mpfr_set_si(raw(x), -static_cast<long>(k), MPFR_RNDN);
  mpfr_div_ui(raw(x), raw(x), static_cast<unsigned long>(h - 1), MPFR_RNDN);
  mpfr_ui_pow(raw(w), 10000UL, raw(x), MPFR_RNDN);
  mpfr_mul_si(raw(a), raw(w), static_cast<long>(t), MPFR_RNDN);
  if (cosine)
    mpfr_cos(raw(y), raw(a), MPFR_RNDN);
  else
    mpfr_sin(raw(y), raw(a), MPFR_RNDN);
  return y;
}

// The exact table's real value R(t)[m] at kWide bits (no zero row: callers stay off t = -L).
Real wide_entry(std::size_t d_head, std::int64_t t, std::size_t m) {
  const std::size_t h = d_head / 2;
  if (m >= 2 * h) return make_real(kWide);
  return wide_trig(h, m < h ? m : m - h, t, m >= h);
}

// ======================================================================================================
// TenerOracleTable: the exact table and what both regimes share
// ======================================================================================================

TEST(TenerOracleTable, ExactAgainstLibmAtSmallT) {
  for (std::size_t d : {4u, 5u, 8u, 9u, 32u, 33u}) {
    const TenerSpec s = spec(d);
    const std::size_t h = d / 2, L = 40;
    for (std::int64_t t = -40; t < 40; ++t)
      for (std::size_t k = 0; k < h; ++k) {
        const double a = double(t) * std::exp(-double(k) * std::log(10000.0) / double(h - 1));
        // libm's exp, log, sin and cos each within ~1 ulp: a few 1e-16 (1 + |a|)
        const double tol = 8e-16 * (1.0 + std::fabs(a));
        EXPECT_NEAR(to_d(tener_table_value(s, t, k, L)), std::sin(a), tol) << "d " << d << " t " << t << " k " << k;
        EXPECT_NEAR(to_d(tener_table_value(s, t, h + k, L)), std::cos(a), tol) << "d " << d << " t " << t;
      }
  }
}

TEST(TenerOracleTable, ExactIsCorrectlyRoundedAtHardPositions) {
  const std::int64_t big = posenc::kTenerMaxLength;  // 2^30 - 1
  const std::vector<std::int64_t> ts = {1, -1, 2, 3, 7, 355, -355, 48039, -48039, 65535, 131071, -131072,
                                        1 << 20, (1 << 24) - 1, 1 << 24, (1 << 24) + 1, 103993, big - 1, 1 - big};
  for (std::size_t d : {4u, 7u, 64u, 128u})
    for (unsigned bits : {24u, 53u, 113u, 256u})
      for (std::int64_t t : ts) {
        const std::size_t h = d / 2;
        for (std::size_t k : {std::size_t{0}, std::size_t{1}, h / 2, h - 1})
          for (bool cosine : {false, true}) {
            const Real got = tener_table_value(spec(d), t, cosine ? h + k : k, static_cast<std::size_t>(big), bits);
            const Real want = with_bits(wide_trig(h, k, t, cosine), bits);
            EXPECT_EQ(bits_of(got), bits);
            EXPECT_TRUE(same(got, want)) << "d " << d << " bits " << bits << " t " << t << " k " << k << " cos "
                                         << cosine << ": " << show(got) << " vs " << show(want);
          }
      }
  // t = -L of the longest call is its zero row, not sin / cos(-L w_k)
  EXPECT_TRUE(mpfr_zero_p(raw(tener_table_value(spec(4), -big, 2, static_cast<std::size_t>(big)))));
}

// h = 5: w_k = 10000^(-k/4) = 10^-k, so pair k holds sin / cos(t 10^-k) and the last frequency is exactly 1/10000
// (with the paper's h denominator it would be 10000^(-4/5)).
TEST(TenerOracleTable, FrequenciesUseTheHMinusOneDenominator) {
  for (std::size_t d : {10u, 11u})
    for (std::int64_t t : {1, -3, 7, 1000, 123457}) {
      for (std::size_t k = 0; k < 5; ++k) {
        Real a = make_real(kWide), sv = make_real(kWide), cv = make_real(kWide);
        mpfr_set_si(raw(a), static_cast<long>(t), MPFR_RNDN);
        for (std::size_t p = 0; p < k; ++p) mpfr_div_ui(raw(a), raw(a), 10, MPFR_RNDN);
        mpfr_sin(raw(sv), raw(a), MPFR_RNDN);
        mpfr_cos(raw(cv), raw(a), MPFR_RNDN);
        EXPECT_TRUE(same(tener_table_value(spec(d), t, k, 200000), with_bits(sv, kDefaultBits))) << t << " " << k;
        EXPECT_TRUE(same(tener_table_value(spec(d), t, 5 + k, 200000), with_bits(cv, kDefaultBits))) << t << " " << k;
      }
    }
  // and in float64 terms: R(1)[h - 1] = sin(1e-4), R(1)[2h - 1] = cos(1e-4) for any h
  for (std::size_t d : {4u, 16u, 64u}) {
    const std::size_t h = d / 2;
    EXPECT_NEAR(to_d(tener_table_value(spec(d), 1, h - 1, 8)), std::sin(1e-4), 1e-19);  // the double 1e-4 is not 1/10000
    EXPECT_EQ(to_d(tener_table_value(spec(d), 1, 2 * h - 1, 8, 53)), std::cos(1e-4));
  }
}

TEST(TenerOracleTable, HalvesLayoutAndRowZero) {
  // Column k is sin of pair k, column h + k its cos (not interleaved): R(1) = [sin 1, sin .1, ... | cos 1, ...].
  const TenerSpec s = spec(10);
  EXPECT_NEAR(to_d(tener_table_value(s, 1, 0, 5)), std::sin(1.0), 1e-16);
  EXPECT_NEAR(to_d(tener_table_value(s, 1, 1, 5)), std::sin(0.1), 1e-16);
  EXPECT_NEAR(to_d(tener_table_value(s, 1, 5, 5)), std::cos(1.0), 1e-16);
  EXPECT_NEAR(to_d(tener_table_value(s, 1, 6, 5)), std::cos(0.1), 1e-16);
  for (Regime r : {Regime::exact, Regime::emulated})
    for (std::size_t m = 0; m < 10; ++m) {
      const Real v = tener_table_value(spec(10, r), 0, m, 5);
      EXPECT_TRUE(m < 5 ? mpfr_zero_p(raw(v)) != 0 : holds(v, 1.0)) << m;
    }
}

TEST(TenerOracleTable, SinHalfIsOddCosHalfIsEvenBitForBit) {
  for (Regime r : {Regime::exact, Regime::emulated})
    for (std::size_t d : {4u, 5u, 10u, 33u})
      for (unsigned bits : {24u, 256u}) {
        const TenerSpec s = spec(d, r);
        const std::size_t h = d / 2, L = 30;
        for (std::int64_t t = 1; t < 30; ++t)
          for (std::size_t m = 0; m < 2 * h; ++m) {
            const Real pos = tener_table_value(s, t, m, L, bits), neg = tener_table_value(s, -t, m, L, bits);
            Real want = make_real(bits);
            if (m < h)
              mpfr_neg(raw(want), raw(pos), MPFR_RNDN);
            else
              mpfr_set(raw(want), raw(pos), MPFR_RNDN);
            EXPECT_TRUE(same(neg, want)) << "d " << d << " t " << t << " m " << m;
          }
      }
  // the same for the emulated table beyond 2^24, where RN32(t) is symmetric too
  const TenerSpec e = spec(64, Regime::emulated);
  for (std::int64_t t : {std::int64_t{1} << 24, (std::int64_t{1} << 24) + 3, std::int64_t{1000000007}})
    for (std::size_t m : {0u, 5u, 31u})
      EXPECT_TRUE(same(tener_table_value(e, -t, m, posenc::kTenerMaxLength),
                       negated(tener_table_value(e, t, m, posenc::kTenerMaxLength))));
}

TEST(TenerOracleTable, OddDHeadLastColumnIsZero) {
  for (Regime r : {Regime::exact, Regime::emulated})
    for (std::size_t d : {5u, 9u, 33u}) {
      const TenerSpec s = spec(d, r, 6);
      for (std::size_t L : {2u, 4u}) {
        const std::vector<double> table = tener_table_f64(s, L);
        for (std::size_t c = 0; c < 2 * L; ++c) {
          const std::int64_t t = static_cast<std::int64_t>(c) - static_cast<std::int64_t>(L);
          EXPECT_TRUE(mpfr_zero_p(raw(tener_table_value(s, t, d - 1, L))));
          EXPECT_EQ(table[c * d + d - 1], 0.0);
        }
      }
    }
  // an even d_head has no zero column: its last column is the cos of the last pair
  EXPECT_FALSE(mpfr_zero_p(raw(tener_table_value(spec(8), 5, 7, 10))));
}

TEST(TenerOracleTable, ZeroRowExactlyWhenLengthExceedsHalfInitSize) {
  for (Regime r : {Regime::exact, Regime::emulated})
    for (std::size_t init : {2u, 8u, 1200u})
      for (std::size_t d : {4u, 5u}) {
        const TenerSpec s = spec(d, r, init);
        for (std::size_t L : {std::size_t{1}, std::size_t{2}, init / 2, init / 2 + 1, init / 2 + 2, init + 3}) {
          if (L == 0) continue;
          const bool zero = L > init / 2;
          EXPECT_EQ(posenc::tener_zero_position(s, L).has_value(), zero);
          const auto t = -static_cast<std::int64_t>(L);
          bool all_zero = true;
          for (std::size_t m = 0; m < d; ++m) all_zero = all_zero && mpfr_zero_p(raw(tener_table_value(s, t, m, L)));
          EXPECT_EQ(all_zero, zero) << "init " << init << " L " << L;
          // the same t in a longer call (so not its row -L) is the plain sinusoid: cos(L w_0) != 0
          EXPECT_FALSE(mpfr_zero_p(raw(tener_table_value(s, t, d / 2, L + 1))));
          // no other row of the call is zero
          for (std::int64_t u = t + 1; u < static_cast<std::int64_t>(L) && u < t + 4; ++u)
            EXPECT_FALSE(mpfr_zero_p(raw(tener_table_value(s, u, d / 2, L))));
        }
      }
}

TEST(TenerOracleTable, TableF64IsTheEntriesRoundedOnce) {
  for (Regime r : {Regime::exact, Regime::emulated})
    for (std::size_t d : {4u, 7u, 12u}) {
      const TenerSpec s = spec(d, r, 6);
      for (std::size_t L : {1u, 3u, 4u, 9u}) {
        const std::vector<double> table = tener_table_f64(s, L);
        ASSERT_EQ(table.size(), 2 * L * d);
        for (std::size_t c = 0; c < 2 * L; ++c)
          for (std::size_t m = 0; m < d; ++m) {
            const std::int64_t t = static_cast<std::int64_t>(c) - static_cast<std::int64_t>(L);
            const double v = table[c * d + m];
            EXPECT_EQ(v, round_to_double(tener_table_value(s, t, m, L, 53))) << "t " << t << " m " << m;
            if (r == Regime::emulated) {
              EXPECT_EQ(double(float(v)), v);
            } else if (!(t == -static_cast<std::int64_t>(L) && L > 3)) {
              EXPECT_EQ(v, round_to_double(wide_entry(d, t, m)));
            }
          }
      }
    }
}

// ======================================================================================================
// TenerOracleEmulated: get_embedding's float32 steps
// ======================================================================================================

float rn32(const Real& x) { return round_to_float(x); }
float wide_f32(int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), float x) {
  Real y = make_real(300);
  f(raw(y), raw(make_real(double(x), 64)), MPFR_RNDN);
  return rn32(y);
}

TEST(TenerOracleEmulated, MatchesPlainFloatArithmetic) {
  // math.log(10000) is the correctly rounded double (checked here once: the steps below use std::log)
  Real ln = make_real(200);
  mpfr_log_ui(raw(ln), 10000, MPFR_RNDN);
  ASSERT_EQ(std::log(10000.0), round_to_double(ln));
  const std::vector<std::int64_t> ts = {0, 1, -1, 2, 5, 17, 255, 256, -1000, 4097, 48039, -65537, 131071,
                                        1 << 20, -(1 << 22) - 1, (1 << 24) - 1, 1 << 24};
  for (std::size_t d : {4u, 5u, 8u, 32u, 96u, 128u, 1001u}) {
    const std::size_t h = d / 2;
    const TenerSpec s = spec(d, Regime::emulated);
    const volatile double c = std::log(10000.0) / double(h - 1);  // Python: math.log(10000) / (half_dim - 1)
    const volatile float negc = static_cast<float>(-c);          // the scalar meets a float32 tensor
    for (std::size_t k = 0; k < h; k += (h > 64 ? 7 : 1)) {
      const volatile float prod = static_cast<float>(k) * negc;
      const float w = wide_f32(mpfr_exp, prod);
      for (std::int64_t t : ts) {
        const volatile float a = static_cast<float>(t) * w;
        const float sv = wide_f32(mpfr_sin, a), cv = wide_f32(mpfr_cos, a);
        const Real gs = tener_table_value(s, t, k, std::size_t{1} << 25), gc = tener_table_value(s, t, h + k, std::size_t{1} << 25);
        EXPECT_TRUE(holds(gs, sv)) << "d " << d << " k " << k << " t " << t << ": " << show(gs) << " vs " << sv;
        EXPECT_TRUE(holds(gc, cv)) << "d " << d << " k " << k << " t " << t << ": " << show(gc) << " vs " << cv;
      }
    }
  }
}

// d_head = 8 (h = 4), t = 3, pair 1, derived by hand:
//   ln 10000 = 0x1.26bb1bbb55516p+3; / 3 = 0x1.88f97a4f1c6c8p+1; RN32(-c) = -0x1.88f97ap+1 (1 * it is exact);
//   exp -> 0.0464158915 = RN32: 0x1.7c3d2ep-5 (10000^(-1/3) = 0.0464158883); 3 w = RN32: 0x1.1d2de2p-3;
//   sin = 0.1387981027 -> 0x1.1c422ep-3 (the real sin(3 * 10000^(-1/3)) is 0.1387981011), cos -> 0x1.fb0b5p-1.
TEST(TenerOracleEmulated, HandCheckedValue) {
  for (std::size_t d : {8u, 9u}) {
    const TenerSpec s = spec(d, Regime::emulated);
    EXPECT_TRUE(holds(tener_table_value(s, 3, 1, 4), 0x1.1c422ep-3));
    EXPECT_TRUE(holds(tener_table_value(s, 3, 5, 4), 0x1.fb0b5p-1));
    EXPECT_TRUE(holds(tener_table_value(s, -3, 1, 4), -0x1.1c422ep-3));
    EXPECT_TRUE(holds(tener_table_value(s, -3, 5, 4), 0x1.fb0b5p-1));
  }
  // and the exact regime is the real value, not the float32 one
  EXPECT_NEAR(to_d(tener_table_value(spec(8), 3, 1, 4)), 0.13879810108005053, 1e-17);
}

TEST(TenerOracleEmulated, PositionsBeyondTwoTo24AreRoundedToFloat32) {
  // arange(..., dtype=float) holds RN32(t): 2^24 + 1 rounds to 2^24 (ties to even), 2^24 + 3 to 2^24 + 4
  const TenerSpec s = spec(16, Regime::emulated);
  const std::size_t L = std::size_t{1} << 26;
  const std::int64_t p = std::int64_t{1} << 24;
  for (std::size_t m : {0u, 3u, 8u, 15u}) {
    EXPECT_TRUE(same(tener_table_value(s, p + 1, m, L), tener_table_value(s, p, m, L)));
    EXPECT_TRUE(same(tener_table_value(s, p + 3, m, L), tener_table_value(s, p + 4, m, L)));
  }
  EXPECT_FALSE(same(tener_table_value(spec(16), p + 1, 0, L), tener_table_value(spec(16), p, 0, L)));
}

// ======================================================================================================
// TenerOracleScore
// ======================================================================================================

// The score by the definition in long double over the regime's double table (tener_table_f64), and its magnitude.
struct Direct {
  long double value = 0, magnitude = 0;
};
Direct direct_score(const TenerSpec& s, const TenerWeights& w, const std::vector<double>& q,
                    const std::vector<double>& k, std::size_t head, std::size_t i, std::size_t j, std::size_t L,
                    std::optional<double> scale = std::nullopt) {
  const std::size_t d = s.d_head;
  const std::vector<double> table = tener_table_f64(s, L);
  const double* r1 = &table[(L + j - i) * d];  // t = j - i
  const double* r2 = &table[(L + i - j) * d];  // t = i - j
  Direct out;
  for (std::size_t c = 0; c < d; ++c) {
    const long double a = w.r_r_bias[head * d + c], b = w.r_w_bias[head * d + c];
    const long double terms[3] = {(q[c] + a) * k[c], (q[c] + b) * r1[c], k[c] * r2[c]};
    for (long double x : terms) {
      out.value += x;
      out.magnitude += std::fabs(x);
    }
  }
  const long double sc = scale ? *scale : (s.scale ? 1.0L / std::sqrt(static_cast<long double>(d)) : 1.0L);
  out.value *= sc;
  out.magnitude *= std::fabs(sc);
  return out;
}

TEST(TenerOracleScore, MatchesDirectDoubleComputation) {
  std::mt19937_64 g(20240607);
  for (Regime r : {Regime::exact, Regime::emulated})
    for (bool scaled : {false, true})
      for (std::size_t d : {4u, 5u, 6u, 9u}) {
        const TenerSpec s = spec(d, r, 4, scaled, 2);
        const TenerWeights w = random_weights(g, s);
        const TenerOracle o(s, w, 113);
        for (std::size_t L : {1u, 2u, 3u, 6u})
          for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < L; ++j) {
              const std::vector<double> q = random_vector(g, d), k = random_vector(g, d);
              const std::size_t head = (i + j) % 2;
              const Direct want = direct_score(s, w, q, k, head, i, j, L);
              const double got = to_d(o.score(q, k, head, i, j, L));
              // the double table is within 2^-53 relative of the real one (exact regime); long double sums: 1e-17
              EXPECT_NEAR(got, double(want.value), 1e-15 * double(want.magnitude) + 1e-300)
                  << "regime " << int(r) << " d " << d << " L " << L << " i " << i << " j " << j;
            }
      }
}

// B(1200 bits) * s rounded to `bits`: the definition evaluated at 1200 bits with the independent table.
Real wide_score(const TenerSpec& s, const TenerWeights& w, const std::vector<double>& q, const std::vector<double>& k,
                std::size_t head, std::size_t i, std::size_t j, std::size_t L, std::optional<double> scale) {
  const std::size_t d = s.d_head;
  const auto tq = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
  Real sum = make_real(kWide + 4400);  // every double product below is exact at this precision
  auto add_product = [&](double x, const Real& y) {
    Real p = make_real(kWide + 60);
    mpfr_mul_d(raw(p), raw(y), x, MPFR_RNDN);
    mpfr_add(raw(sum), raw(sum), raw(p), MPFR_RNDN);
  };
  for (std::size_t c = 0; c < d; ++c) {
    const double a = w.r_r_bias[head * d + c], b = w.r_w_bias[head * d + c];
    add_product(k[c], make_real(q[c], 64));
    add_product(k[c], make_real(a, 64));
    const Real r1 = s.regime == Regime::exact ? wide_entry(d, tq, c) : tener_table_value(s, tq, c, L, 64);
    const Real r2 = s.regime == Regime::exact ? wide_entry(d, -tq, c) : tener_table_value(s, -tq, c, L, 64);
    add_product(q[c], r1);
    add_product(b, r1);
    add_product(k[c], r2);
  }
  Real e = make_real(kWide);
  if (scale) {
    mpfr_mul_d(raw(e), raw(sum), *scale, MPFR_RNDN);
  } else if (s.scale) {
    Real sq = make_real(kWide);
    mpfr_sqrt_ui(raw(sq), static_cast<unsigned long>(d), MPFR_RNDN);
    mpfr_div(raw(e), raw(sum), raw(sq), MPFR_RNDN);
  } else {
    mpfr_set(raw(e), raw(sum), MPFR_RNDN);
  }
  return e;
}

// Correctly rounded against the 1200-bit evaluation, with cancellation: r_r_bias[0] (and [1]) chosen, with k[0] =
// k[1] = 1, to cancel the rest of the bracket down to ~2^-53 (2^-106) of it, where the Ziv loop must go on.
RC_GTEST_PROP(TenerOracleScore, CorrectlyRoundedAgainstWideEvaluation, ()) {
  const Regime r = *rc::gen::element(Regime::exact, Regime::emulated);
  const std::size_t d = *rc::gen::inRange<std::size_t>(4, 13);
  const bool scaled = *rc::gen::arbitrary<bool>();
  const TenerSpec s = spec(d, r, 2 * *rc::gen::inRange<std::size_t>(1, 6), scaled);
  const std::size_t L = *rc::gen::inRange<std::size_t>(1, 12);
  const std::size_t i = *rc::gen::inRange<std::size_t>(0, L), j = *rc::gen::inRange<std::size_t>(0, L);
  const unsigned bits = *rc::gen::element(24u, 53u, 113u, 256u);
  auto value = rc::gen::oneOf(rc::gen::map(rc::gen::inRange(-1000000, 1000001), [](int v) { return v / 4096.0; }),
                              rc::gen::element(0.0, 1.0, -1.0 / 3.0, 1e-30, -7.5e5));  // cancelling biases stay <= 1e15
  std::vector<double> q = *rc::gen::container<std::vector<double>>(d, value);
  std::vector<double> k = *rc::gen::container<std::vector<double>>(d, value);
  TenerWeights w{*rc::gen::container<std::vector<double>>(d, value), *rc::gen::container<std::vector<double>>(d, value)};
  const std::optional<double> scale =
      *rc::gen::element(std::optional<double>{}, std::optional<double>{0.125}, std::optional<double>{-0.3});
  const int cancel = *rc::gen::inRange(0, 3);
  if (cancel > 0) {
    k[0] = k[1] = 1.0;
    w.r_r_bias[0] = w.r_r_bias[1] = 0.0;
    Real rest = wide_score(s, w, q, k, 0, i, j, L, 1.0);
    w.r_r_bias[0] = -round_to_double(rest);
    if (cancel > 1) w.r_r_bias[1] = -round_to_double(sub(rest, make_real(-w.r_r_bias[0], 64)));
  }
  RC_TAG(r == Regime::exact ? "exact" : "emulated", i == j ? "t = 0" : "t != 0", cancel);
  const TenerOracle o(s, w, bits);
  const Real got = o.score(q, k, 0, i, j, L, scale);
  const Real want = wide_score(s, w, q, k, 0, i, j, L, scale);
  RC_LOG() << posenc::describe(s) << " L=" << L << " i=" << i << " j=" << j << " bits=" << bits << " got "
           << show(got) << " want " << show(want) << "\n";
  RC_ASSERT(bits_of(got) == bits);
  RC_ASSERT(same(got, with_bits(want, bits)));
}

RC_GTEST_PROP(TenerOracleScore, DependsOnlyOnTheDistance, ()) {
  const Regime r = *rc::gen::element(Regime::exact, Regime::emulated);
  const std::size_t d = *rc::gen::inRange<std::size_t>(4, 10);
  const TenerSpec s = spec(d, r, 4, *rc::gen::arbitrary<bool>());
  std::mt19937_64 g(*rc::gen::arbitrary<std::uint64_t>());
  const TenerOracle o(s, random_weights(g, s), 64);
  const std::vector<double> q = random_vector(g, d), k = random_vector(g, d);
  const std::size_t L1 = *rc::gen::inRange<std::size_t>(2, 20), L2 = *rc::gen::inRange<std::size_t>(2, 20);
  const auto t = *rc::gen::inRange<std::int64_t>(-static_cast<std::int64_t>(std::min(L1, L2)) + 1,
                                                 static_cast<std::int64_t>(std::min(L1, L2)));
  // (i1, i1 + t) in a call of length L1 and (i2, i2 + t) in one of length L2 (a zero row or not)
  const std::size_t lo = t < 0 ? static_cast<std::size_t>(-t) : 0;
  const std::size_t i1 = *rc::gen::inRange<std::size_t>(lo, L1 - (t > 0 ? static_cast<std::size_t>(t) : 0));
  const std::size_t i2 = *rc::gen::inRange<std::size_t>(lo, L2 - (t > 0 ? static_cast<std::size_t>(t) : 0));
  const Real a = o.score(q, k, 0, i1, static_cast<std::size_t>(static_cast<std::int64_t>(i1) + t), L1);
  const Real b = o.score(q, k, 0, i2, static_cast<std::size_t>(static_cast<std::int64_t>(i2) + t), L2);
  RC_ASSERT(same(a, b));
}

TEST(TenerOracleScore, ScaleFlag) {
  std::mt19937_64 g(7);
  for (Regime r : {Regime::exact, Regime::emulated}) {
    // d_head = 4: 1/sqrt(4) = 1/2, so the scaled score is the unscaled one halved, bit for bit
    {
      const TenerSpec plain = spec(4, r), scaled = spec(4, r, 1200, true);
      const TenerWeights w = random_weights(g, plain);
      const TenerOracle op(plain, w), os(scaled, w);
      for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j) {
          const std::vector<double> q = random_vector(g, 4), k = random_vector(g, 4);
          const Real u = op.score(q, k, 0, i, j, 4);
          Real half = make_real(kDefaultBits);
          mpfr_div_2ui(raw(half), raw(u), 1, MPFR_RNDN);
          EXPECT_TRUE(same(os.score(q, k, 0, i, j, 4), half));
          EXPECT_TRUE(same(op.score(q, k, 0, i, j, 4, 1.0), u));      // unscaled is scale 1
          EXPECT_TRUE(same(os.score(q, k, 0, i, j, 4, 1.0), u));      // a given scale overrides the flag
          EXPECT_TRUE(same(os.score(q, k, 0, i, j, 4, 0.5), half));
          EXPECT_TRUE(mpfr_zero_p(raw(os.score(q, k, 0, i, j, 4, 0.0))));
        }
    }
    // d_head = 6: the scaled score is the unscaled one over sqrt(6), within the last bits
    const TenerSpec plain = spec(6, r), scaled = spec(6, r, 1200, true);
    const TenerWeights w = random_weights(g, plain);
    const TenerOracle op(plain, w), os(scaled, w);
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) {
        const std::vector<double> q = random_vector(g, 6), k = random_vector(g, 6);
        const Real u = op.score(q, k, 0, i, j, 3), v = os.score(q, k, 0, i, j, 3);
        Real sq = make_real(600), ratio = make_real(600);
        mpfr_sqrt_ui(raw(sq), 6, MPFR_RNDN);
        mpfr_div(raw(ratio), raw(u), raw(sq), MPFR_RNDN);
        Real rel = sub(v, ratio);
        mpfr_div(raw(rel), raw(rel), raw(ratio), MPFR_RNDN);
        EXPECT_TRUE(abs_below_pow2(rel, -250)) << show(rel);
      }
  }
}

// r_r_bias joins q in the content term <q + a, k> only; r_w_bias joins q in the position term <q + b, R(j - i)> only.
TEST(TenerOracleScore, BiasRoles) {
  std::mt19937_64 g(99);
  for (Regime r : {Regime::exact, Regime::emulated}) {
    const std::size_t d = 6, L = 5;
    const TenerSpec s = spec(d, r, 1200, false, 2);
    const std::vector<double> zero(d, 0.0), a = random_vector(g, 2 * d), b = random_vector(g, 2 * d);
    const TenerOracle only_a(s, TenerWeights{a, std::vector<double>(2 * d, 0.0)});
    const TenerOracle only_b(s, TenerWeights{std::vector<double>(2 * d, 0.0), b});
    for (std::size_t head : {0u, 1u})
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = 0; j < L; ++j) {
          const std::vector<double> k = random_vector(g, d);
          const auto t = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
          // q = 0, k = 0: only r_w_bias . R(j - i) is left; r_r_bias has nothing to multiply
          EXPECT_TRUE(mpfr_zero_p(raw(only_a.score(zero, zero, head, i, j, L))));
          Real want = make_real(2000);
          for (std::size_t c = 0; c < d; ++c) {
            Real p = make_real(2000);
            mpfr_mul_d(raw(p), raw(tener_table_value(s, t, c, L, 1500)), b[head * d + c], MPFR_RNDN);
            mpfr_add(raw(want), raw(want), raw(p), MPFR_RNDN);
          }
          EXPECT_TRUE(abs_below_pow2(sub(only_b.score(zero, zero, head, i, j, L), want), -240));
          // q = 0: r_r_bias gives <a, k> + <k, R(i - j)>; r_w_bias gives <b, R(j - i)> + <k, R(i - j)>
          Real key = make_real(2000), content = make_real(2000);
          for (std::size_t c = 0; c < d; ++c) {
            Real p = make_real(2000);
            mpfr_mul_d(raw(p), raw(tener_table_value(s, -t, c, L, 1500)), k[c], MPFR_RNDN);
            mpfr_add(raw(key), raw(key), raw(p), MPFR_RNDN);
            mpfr_set_d(raw(p), a[head * d + c], MPFR_RNDN);
            mpfr_mul_d(raw(p), raw(p), k[c], MPFR_RNDN);
            mpfr_add(raw(content), raw(content), raw(p), MPFR_RNDN);
          }
          Real ca = make_real(2000), cb = make_real(2000);
          mpfr_add(raw(ca), raw(content), raw(key), MPFR_RNDN);
          mpfr_add(raw(cb), raw(want), raw(key), MPFR_RNDN);
          EXPECT_TRUE(abs_below_pow2(sub(only_a.score(zero, k, head, i, j, L), ca), -240)) << head << i << j;
          EXPECT_TRUE(abs_below_pow2(sub(only_b.score(zero, k, head, i, j, L), cb), -240)) << head << i << j;
        }
  }
}

// With unit vectors the score is one table entry, correctly rounded both ways: q = e_m reads R(j - i)[m], k = e_m
// (q = 0, no biases) reads R(i - j)[m].
TEST(TenerOracleScore, QueryTermReadsRjMinusIKeyTermReadsRiMinusJ) {
  for (Regime r : {Regime::exact, Regime::emulated})
    for (std::size_t d : {4u, 7u}) {
      const TenerSpec s = spec(d, r, 4);
      const TenerOracle o(s, zero_weights(s));
      const std::size_t L = 5;
      for (std::size_t m = 0; m < d; ++m)
        for (std::size_t i = 0; i < L; ++i)
          for (std::size_t j = 0; j < L; ++j) {
            std::vector<double> e(d, 0.0), zero(d, 0.0);
            e[m] = 1.0;
            const auto t = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
            EXPECT_TRUE(same(o.score(e, zero, 0, i, j, L), tener_table_value(s, t, m, L)))
                << "query d " << d << " m " << m << " i " << i << " j " << j;
            EXPECT_TRUE(same(o.score(zero, e, 0, i, j, L), tener_table_value(s, -t, m, L)))
                << "key d " << d << " m " << m << " i " << i << " j " << j;
            // q = k = e_m: <e, e> = 1 plus both entries
            if (m < 2 * (d / 2) && i != j) {
              const double want = 1.0 + to_d(tener_table_value(s, t, m, L)) + to_d(tener_table_value(s, -t, m, L));
              EXPECT_NEAR(to_d(o.score(e, e, 0, i, j, L)), want, 1e-15);
            }
          }
    }
}

// In the exact regime (q + b) sin(t w) + k sin(-t w) = (q + b - k) sin(t w) and (q + b) cos(t w) + k cos(-t w) = (q + b
// + k) cos(t w): with k = q + b on the sin half and k = -(q + b) on the cos half every position term cancels, in both
// directions, and the score is the content term <q + a, k> alone, a dyadic number (the oracle's no-Ziv branch).
TEST(TenerOracleScore, CancellingPositionTermsLeaveTheContentTerm) {
  std::mt19937_64 g(3);
  const std::size_t d = 9, h = 4, L = 6;
  const TenerSpec s = spec(d, Regime::exact, 1200, false, 1);
  TenerWeights w = random_weights(g, s);
  std::uniform_int_distribution<int> n(-4096, 4096);
  for (double& b : w.r_w_bias) b = n(g) / 1024.0;  // dyadic: q + b below is exact
  const TenerOracle o(s, w, 53);
  auto content = [&](const std::vector<double>& q, const std::vector<double>& k) {
    Real sum = make_real(4000);
    for (std::size_t c = 0; c < d; ++c) {
      Real p = make_real(200);
      mpfr_set_d(raw(p), q[c], MPFR_RNDN);
      mpfr_add_d(raw(p), raw(p), w.r_r_bias[c], MPFR_RNDN);
      mpfr_mul_d(raw(p), raw(p), k[c], MPFR_RNDN);
      mpfr_add(raw(sum), raw(sum), raw(p), MPFR_RNDN);
    }
    return with_bits(sum, 53);
  };
  std::vector<double> q(d), k(d), flipped(d);
  for (std::size_t c = 0; c < d; ++c) {
    q[c] = std::ldexp(double(c + 1), -3);
    k[c] = c < h ? q[c] + w.r_w_bias[c] : -(q[c] + w.r_w_bias[c]);  // column 8 (zero column): any value
    flipped[c] = c < h ? -k[c] : k[c];
  }
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) {
      EXPECT_TRUE(same(o.score(q, k, 0, i, j, L), content(q, k))) << i << " " << j;
      // k = -(q + b) on the sin half: the sin terms double instead (t != 0), the score is transcendental
      if (i != j) {
        EXPECT_GT(std::fabs(to_d(o.score(q, flipped, 0, i, j, L)) - to_d(content(q, flipped))), 1e-6);
      }
    }
}

// ======================================================================================================
// TenerOracleShift: relative_transformer.py's reshapes, literally
// ======================================================================================================

// _shift(BD): cat a zero column ([L][2L+1]), view(-1, L) ([2L+1][L]), BD[:-1] (drop the last row), view(L, -1)
// ([L][2L]), [:, L:]. Row-major flat buffers make each view a reinterpretation of the same memory.
std::vector<double> torch_shift(const std::vector<double>& x, std::size_t L) {
  std::vector<double> padded(L * (2 * L + 1), 0.0);
  for (std::size_t r = 0; r < L; ++r)
    for (std::size_t c = 0; c < 2 * L; ++c) padded[r * (2 * L + 1) + c] = x[r * 2 * L + c];
  const std::vector<double> dropped(padded.begin(), padded.begin() + static_cast<std::ptrdiff_t>(2 * L * L));
  std::vector<double> out(L * L);
  for (std::size_t r = 0; r < L; ++r)
    for (std::size_t c = 0; c < L; ++c) out[r * L + c] = dropped[r * 2 * L + L + c];
  return out;
}

// _transpose_shift(E): cat a zero column, view(-1, L), index_select rows 1, 3, .., 2L - 1, transpose(-1, -2).
std::vector<double> torch_transpose_shift(const std::vector<double>& y, std::size_t L) {
  std::vector<double> padded(L * (2 * L + 1), 0.0);
  for (std::size_t r = 0; r < L; ++r)
    for (std::size_t c = 0; c < 2 * L; ++c) padded[r * (2 * L + 1) + c] = y[r * 2 * L + c];
  std::vector<double> selected(L * L);
  for (std::size_t m = 0; m < L; ++m)
    for (std::size_t n = 0; n < L; ++n) selected[m * L + n] = padded[(2 * m + 1) * L + n];
  std::vector<double> out(L * L);
  for (std::size_t r = 0; r < L; ++r)
    for (std::size_t c = 0; c < L; ++c) out[r * L + c] = selected[c * L + r];
  return out;
}

TEST(TenerOracleShift, ShiftPicksXAtLPlusJMinusI) {
  for (std::size_t L = 1; L <= 9; ++L) {
    std::vector<double> x(2 * L * L);
    for (std::size_t r = 0; r < L; ++r)
      for (std::size_t c = 0; c < 2 * L; ++c) x[r * 2 * L + c] = 1000.0 * double(r) + double(c) + 1.0;  // never 0
    const std::vector<double> out = torch_shift(x, L);
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j) EXPECT_EQ(out[i * L + j], x[i * 2 * L + (L + j - i)]) << L << i << j;
  }
}

TEST(TenerOracleShift, TransposeShiftPicksYAtLPlusIMinusJ) {
  for (std::size_t L = 1; L <= 9; ++L) {
    std::vector<double> y(2 * L * L);
    for (std::size_t r = 0; r < L; ++r)
      for (std::size_t c = 0; c < 2 * L; ++c) y[r * 2 * L + c] = 1000.0 * double(r) + double(c) + 1.0;
    const std::vector<double> out = torch_transpose_shift(y, L);
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j) EXPECT_EQ(out[i * L + j], y[j * 2 * L + (L + i - j)]) << L << i << j;
  }
}

// RelativeMultiHeadAttn.forward up to the mask, head by head, over the call's table (pos_embed = rows t = -L..L-1):
// AC = (q + r_r_bias) k^T, B_ = q R^T, D_ = r_w_bias R^T, E_ = k R^T, attn = (AC + _shift(B_ + D_) +
// _transpose_shift(E_)) / scale; against the oracle's scores.
TEST(TenerOracleShift, ForwardMatchesScores) {
  std::mt19937_64 g(11);
  for (Regime r : {Regime::exact, Regime::emulated})
    for (std::size_t d : {4u, 5u})
      for (bool scaled : {false, true})
        for (std::size_t L : {1u, 3u, 5u, 8u}) {
          const TenerSpec s = spec(d, r, 4, scaled, 2);  // init_size 4: L >= 3 has the zero row, never read
          const TenerWeights w = random_weights(g, s);
          const TenerOracle o(s, w, 64);
          const std::vector<double> pos = tener_table_f64(s, L);  // [2L][d]
          const std::vector<double> Q = random_vector(g, L * d), K = random_vector(g, L * d);
          for (std::size_t head = 0; head < 2; ++head) {
            const double* a = &w.r_r_bias[head * d];
            const double* b = &w.r_w_bias[head * d];
            std::vector<double> AC(L * L), BD(L * 2 * L), E(L * 2 * L);
            for (std::size_t x = 0; x < L; ++x) {
              for (std::size_t y = 0; y < L; ++y) {
                long double v = 0;
                for (std::size_t c = 0; c < d; ++c) v += ((long double)Q[x * d + c] + a[c]) * K[y * d + c];
                AC[x * L + y] = double(v);
              }
              for (std::size_t l = 0; l < 2 * L; ++l) {
                long double bv = 0, dv = 0, ev = 0;
                for (std::size_t c = 0; c < d; ++c) {
                  bv += (long double)Q[x * d + c] * pos[l * d + c];
                  dv += (long double)b[c] * pos[l * d + c];
                  ev += (long double)K[x * d + c] * pos[l * d + c];
                }
                BD[x * 2 * L + l] = double(bv + dv);
                E[x * 2 * L + l] = double(ev);
              }
            }
            const std::vector<double> bd = torch_shift(BD, L), e = torch_transpose_shift(E, L);
            const double sc = scaled ? std::sqrt(double(d)) : 1.0;
            for (std::size_t i = 0; i < L; ++i)
              for (std::size_t j = 0; j < L; ++j) {
                const double attn = (AC[i * L + j] + bd[i * L + j] + e[i * L + j]) / sc;
                const std::vector<double> q(Q.begin() + long(i * d), Q.begin() + long(i * d + d));
                const std::vector<double> k(K.begin() + long(j * d), K.begin() + long(j * d + d));
                EXPECT_NEAR(to_d(o.score(q, k, head, i, j, L)), attn, 1e-13)
                    << "regime " << int(r) << " d " << d << " L " << L << " head " << head << " i " << i << " j " << j;
              }
          }
        }
}

// ======================================================================================================
// TenerOracleMask, TenerOracleErrors, TenerOracleThreads
// ======================================================================================================

TEST(TenerOracleMask, KeyPaddingOnlyNoCausalMask) {
  const TenerSpec s = spec(4);
  const TenerOracle o(s, zero_weights(s));
  const std::vector<std::uint8_t> mask = {1, 0, 2, 1};
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) {
      EXPECT_TRUE(o.visible({}, i, j, 4));  // j > i too: no causal mask
      EXPECT_EQ(o.visible(mask, i, j, 4), j != 1);
    }
  EXPECT_NE(error_of([&] { (void)o.visible(std::vector<std::uint8_t>{1, 1, 1}, 0, 0, 4); }).find("key_mask"),
            std::string::npos);
  EXPECT_NE(error_of([&] { (void)o.visible({}, 4, 0, 4); }).find("i = 4"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)o.visible({}, 0, 4, 4); }).find("j = 4"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)o.visible({}, 0, 0, 0); }).find("length = 0"), std::string::npos);
}

bool names(const std::string& message, const std::string& what) {
  return !message.empty() && message.find(what) != std::string::npos;
}

TEST(TenerOracleErrors, EveryBadArgumentNamesItsParameter) {
  const TenerSpec s = spec(6, Regime::exact, 1200, false, 2);
  const TenerWeights w = zero_weights(s);
  const TenerOracle o(s, w);
  const std::vector<double> v(6, 0.5), short_v(5, 0.5);
  std::vector<double> nan_v = v;
  nan_v[2] = std::nan("");
  // constructor
  EXPECT_TRUE(names(error_of([&] { TenerOracle(spec(3), zero_weights(spec(3))); }), "d_head = 3"));
  EXPECT_TRUE(names(error_of([&] { TenerOracle(spec(6, Regime::exact, 7), zero_weights(spec(6))); }), "init_size"));
  EXPECT_TRUE(names(error_of([&] { TenerOracle(s, TenerWeights{v, w.r_w_bias}); }), "r_r_bias"));
  EXPECT_TRUE(names(error_of([&] {
                      TenerWeights bad = w;
                      bad.r_w_bias[7] = INFINITY;
                      TenerOracle(s, bad);
                    }),
                    "r_w_bias"));
  EXPECT_TRUE(names(error_of([&] { TenerOracle(s, w, 10); }), "bits"));
  // table
  EXPECT_TRUE(names(error_of([&] { (void)tener_table_value(s, 4, 0, 4); }), "t = 4"));
  EXPECT_TRUE(names(error_of([&] { (void)tener_table_value(s, -5, 0, 4); }), "t = -5"));
  EXPECT_TRUE(names(error_of([&] { (void)tener_table_value(s, 0, 6, 4); }), "m = 6"));
  EXPECT_TRUE(names(error_of([&] { (void)tener_table_value(s, 0, 0, 0); }), "length = 0"));
  EXPECT_TRUE(names(error_of([&] { (void)tener_table_value(s, 0, 0, std::size_t{1} << 30); }), "length"));
  EXPECT_TRUE(names(error_of([&] { (void)tener_table_value(s, 0, 0, 4, 8); }), "bits"));
  EXPECT_TRUE(names(error_of([&] { (void)tener_table_value(spec(2), 0, 0, 4); }), "d_head"));
  EXPECT_TRUE(names(error_of([&] { (void)tener_table_f64(s, 0); }), "length = 0"));
  // score
  EXPECT_TRUE(names(error_of([&] { (void)o.score(short_v, v, 0, 0, 0, 4); }), "q = "));
  EXPECT_TRUE(names(error_of([&] { (void)o.score(v, nan_v, 0, 0, 0, 4); }), "k = "));
  EXPECT_TRUE(names(error_of([&] { (void)o.score(nan_v, v, 0, 0, 0, 4); }), "q = "));
  EXPECT_TRUE(names(error_of([&] { (void)o.score(v, v, 2, 0, 0, 4); }), "head = 2"));
  EXPECT_TRUE(names(error_of([&] { (void)o.score(v, v, 0, 4, 0, 4); }), "i = 4"));
  EXPECT_TRUE(names(error_of([&] { (void)o.score(v, v, 0, 0, 4, 4); }), "j = 4"));
  EXPECT_TRUE(names(error_of([&] { (void)o.score(v, v, 0, 0, 0, 0); }), "length = 0"));
  EXPECT_TRUE(names(error_of([&] { (void)o.score(v, v, 0, 0, 0, 4, INFINITY); }), "scale"));
  EXPECT_TRUE(names(error_of([&] { (void)o.score(v, v, 0, 0, 0, 4, std::nan("")); }), "scale"));
  // and the accepted values are in the message
  EXPECT_TRUE(names(error_of([&] { (void)o.score(v, v, 0, 0, 9, 4); }), "accepted"));
  EXPECT_EQ(o.bits(), kDefaultBits);
  EXPECT_EQ(o.spec(), s);
}

TEST(TenerOracleThreads, ConcurrentScoresMatchSerial) {
  std::mt19937_64 g(5);
  const TenerSpec s = spec(8, Regime::exact, 1200, true, 2);
  const TenerOracle o(s, random_weights(g, s), 128);
  const std::size_t L = 7;
  std::vector<std::vector<double>> qs, ks;
  for (std::size_t n = 0; n < L * L; ++n) {
    qs.push_back(random_vector(g, 8));
    ks.push_back(random_vector(g, 8));
  }
  expect_concurrent_calls_match_serial([&] {
    std::vector<Real> out;
    for (std::size_t n = 0; n < L * L; ++n) out.push_back(o.score(qs[n], ks[n], n % 2, n / L, n % L, L));
    return out;
  });
}

}  // namespace oracle_tener
