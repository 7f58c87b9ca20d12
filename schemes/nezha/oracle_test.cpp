// Self-tests of the NEZHA oracle (posenc/reference/nezha.hpp), each built to fail if the oracle is wrong:
//   * the index matrix written by hand from CONVENTIONS.md §2.4 (K = 2, L = 5: j - i clipped, + K) and the
//     queries-are-the-last-keys rows;
//   * exact table entries against libm's double sin/cos of r * 10000^(-2t/depth) (an independent evaluation, within
//     a few double ulps), r = 0 exactly (0, 1), the interleaved slots, and the shifted index: row K + u is the
//     sinusoid of K + u, not of u, so rows K + u and K - u are not mirror images;
//   * the hf table against HF's steps written again with plain C float arithmetic (expf / sinf / cosf used only
//     where they are verified to be correctly rounded);
//   * the attention oracle: scores (q.k + q.T[r]) / sqrt(depth) and a single-key output v + T[r] against doubles;
//   * every bad argument against the posenc::Error it must raise.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/nezha_spec.hpp"
#include "posenc/reference/mp.hpp"
#include "posenc/reference/nezha.hpp"
#include "test_util.hpp"

namespace oracle_nezha {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::NezhaRegime;
using posenc::NezhaSpec;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

NezhaSpec spec(std::size_t K, std::size_t depth, NezhaRegime regime = NezhaRegime::exact) {
  return NezhaSpec{.max_relative_position = K, .depth = depth, .regime = regime};
}

TEST(NezhaOracle, IndexMatrixByHand) {
  // final_mat = clamp(range_mat - range_mat^T, -2, 2) + 2 with range_mat[i][j] = j (HF NezhaRelativePositionsEncoding)
  const int want[5][5] = {{2, 3, 4, 4, 4}, {1, 2, 3, 4, 4}, {0, 1, 2, 3, 4}, {0, 0, 1, 2, 3}, {0, 0, 0, 1, 2}};
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(nezha_index(spec(2, 4), i, j, 5, 5), want[i][j]) << i << "," << j;
  // Two queries over five keys: the queries are keys 3 and 4, so their rows are the last two rows above.
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(nezha_index(spec(2, 4), i, j, 2, 5), want[3 + i][j]);
  EXPECT_EQ(nezha_index(spec(64, 64), 0, 1000, 1, 2000), 0);      // query at 1999, key 1000: d = -999 -> -64
  EXPECT_EQ(nezha_index(spec(64, 64), 0, 1999, 2000, 2000), 128); // query 0, key 1999: +64 -> 2K
}

TEST(NezhaOracle, ExactTableAgainstLibm) {
  for (std::size_t depth : {2u, 8u, 64u, 128u}) {
    const NezhaSpec s = spec(64, depth);
    for (std::int64_t r : {0, 1, 2, 17, 63, 64, 65, 100, 128}) {
      for (std::size_t t = 0; t < depth / 2; ++t) {
        const double w = std::pow(10000.0, -2.0 * double(t) / double(depth));
        const double a = double(r) * w;
        const double sv = to_d(nezha_table_value(s, r, 2 * t)), cv = to_d(nezha_table_value(s, r, 2 * t + 1));
        // |error of libm's a| <= ~2 ulp(a) (pow and the product), and of sin/cos about 1 ulp: a few 1e-16 * a
        const double tol = 8e-16 * (1.0 + std::fabs(a));
        EXPECT_NEAR(sv, std::sin(a), tol) << "depth " << depth << " r " << r << " t " << t;
        EXPECT_NEAR(cv, std::cos(a), tol) << "depth " << depth << " r " << r << " t " << t;
      }
    }
    EXPECT_TRUE(mpfr_zero_p(raw(nezha_table_value(s, 0, 0))));
    EXPECT_EQ(to_d(nezha_table_value(s, 0, 1)), 1.0);
  }
}

TEST(NezhaOracle, ShiftedIndexIsNotAntisymmetric) {
  // Row K + u holds sin((K + u) w), not sin(u w): for K = 64, column 0 (w = 1) of rows 65 and 63 are sin 65 and
  // sin 63, neither of them sin(+-1).
  const NezhaSpec s = spec(64, 64);
  EXPECT_NEAR(to_d(nezha_table_value(s, 65, 0)), std::sin(65.0), 1e-15);
  EXPECT_NEAR(to_d(nezha_table_value(s, 63, 0)), std::sin(63.0), 1e-15);
  EXPECT_GT(std::fabs(to_d(nezha_table_value(s, 65, 0)) + to_d(nezha_table_value(s, 63, 0))), 0.1);
  EXPECT_GT(std::fabs(to_d(nezha_table_value(s, 66, 0)) - std::sin(2.0)), 0.5);  // sin 66 = -0.027, sin 2 = 0.909
  // The centre row K is the sinusoid of K (64), not of distance 0 (which would be 0 and 1).
  EXPECT_GT(std::fabs(to_d(nezha_table_value(s, 64, 0))), 0.9);
}

bool is_rn32_of(float c, const Real& y) { return round_to_float(y) == c; }
Real hp(int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), float x) {
  Real y = make_real(300);
  f(raw(y), raw(make_real(double(x), 64)), MPFR_RNDN);
  return y;
}

TEST(NezhaOracle, HfTableMatchesPlainFloatArithmetic) {
  int checked = 0;
  for (std::size_t depth : {2u, 10u, 64u, 96u}) {
    const NezhaSpec s = spec(64, depth, NezhaRegime::hf);
    volatile double c = -std::log(10000.0) / double(depth);  // -math.log(10000.0) / depth
    const float c32 = static_cast<float>(c);
    for (std::size_t t = 0; t < depth / 2; ++t) {
      volatile float arg = static_cast<float>(2 * t) * c32;
      const float w = std::exp(static_cast<float>(arg));
      if (!is_rn32_of(w, hp(mpfr_exp, arg))) continue;  // libm expf not correctly rounded here: no expectation
      for (std::int64_t r : {0, 1, 5, 63, 64, 77, 128}) {
        volatile float a = static_cast<float>(r) * w;
        const float sv = std::sin(static_cast<float>(a)), cv = std::cos(static_cast<float>(a));
        if (is_rn32_of(sv, hp(mpfr_sin, a))) {
          EXPECT_EQ(to_d(nezha_table_value(s, r, 2 * t)), double(sv)) << depth << " " << r << " " << t;
          ++checked;
        }
        if (is_rn32_of(cv, hp(mpfr_cos, a))) {
          EXPECT_EQ(to_d(nezha_table_value(s, r, 2 * t + 1)), double(cv)) << depth << " " << r << " " << t;
          ++checked;
        }
      }
    }
  }
  EXPECT_GE(checked, 500);
  // The hf entries are float32 numbers and differ from the exact ones (float32 frequencies) somewhere in the table.
  const NezhaSpec h = spec(64, 64, NezhaRegime::hf), e = spec(64, 64);
  double worst = 0;
  for (std::int64_t r = 0; r <= 128; ++r)
    for (std::size_t col = 0; col < 64; ++col) {
      const Real v = nezha_table_value(h, r, col);
      EXPECT_TRUE(same(v, round_to_float_precision(v)));
      worst = std::max(worst, std::fabs(to_d(sub(v, nezha_table_value(e, r, col)))));
    }
  EXPECT_GT(worst, 1e-8);
  EXPECT_LT(worst, 1e-5);
}

TEST(NezhaOracle, AttentionOracleIsShawWithTheTable) {
  const NezhaSpec s = spec(2, 4);
  const std::vector<double> T = nezha_table_f64(s);
  ASSERT_EQ(T.size(), 5u * 4u);
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(T[r * 4 + c], to_d(nezha_table_value(s, std::int64_t(r), c)));
  const ShawOracle o = nezha_attention_oracle(s);
  const std::vector<double> q{1, -2, 0.5, 3}, k{0.25, 1, -1, 2};
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j) {
      const std::int64_t r = nezha_index(s, i, j, 5, 5);
      double qk = 0, qt = 0;
      for (std::size_t c = 0; c < 4; ++c) {
        qk += q[c] * k[c];
        qt += q[c] * T[std::size_t(r) * 4 + c];
      }
      EXPECT_NEAR(to_d(o.score(q, k, i, j, 5, 5)), (qk + qt) / 2.0, 1e-14) << i << "," << j;
    }
  // One visible key (causal, query row 0 of 5 with Lq = Lk): z = v_0 + T[r(0, 0)] = v_0 + T[K].
  const std::vector<double> Q(20, 0.5), K(20, 0.25), V{1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const auto z = o.output(Q, K, V, 0, 5, 5, ShawMask{.causal = true, .key_mask = {}});
  for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(to_d(z[c]), V[c] + T[2 * 4 + c]);
}

TEST(NezhaOracle, BadArgumentsAreNamed) {
  const NezhaSpec s = spec(4, 8);
  EXPECT_NE(error_of([&] { nezha_table_value(s, -1, 0); }).find(": r = "), std::string::npos);
  EXPECT_NE(error_of([&] { nezha_table_value(s, 9, 0); }).find(": r = "), std::string::npos);
  EXPECT_NE(error_of([&] { nezha_table_value(s, 0, 8); }).find(": c = "), std::string::npos);
  EXPECT_NE(error_of([&] { nezha_table_value(s, 0, 0, 3); }).find("bits"), std::string::npos);
  EXPECT_NE(error_of([&] { nezha_table_value(spec(4, 7), 0, 0); }).find("depth"), std::string::npos);
  EXPECT_NE(error_of([&] { nezha_table_value(spec(0, 8), 0, 0); }).find("max_relative_position"), std::string::npos);
  EXPECT_NE(error_of([&] { nezha_index(s, 0, 0, 3, 2); }).find("query_length"), std::string::npos);
  EXPECT_NE(error_of([&] { nezha_index(s, 2, 0, 2, 2); }).find(": i = "), std::string::npos);
  EXPECT_NE(error_of([&] { nezha_index(s, 0, 2, 2, 2); }).find(": j = "), std::string::npos);
}

}  // namespace oracle_nezha
