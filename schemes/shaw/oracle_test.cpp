// Self-tests of the Shaw / BERT relative-position oracle. The oracle is the ground truth of the shaw property suite,
// so each test here is built to fail if the oracle is wrong:
//   * index matrices written by hand from CONVENTIONS.md §2.3 (t2t k = 2 full 5 x 5, the queries-are-the-last-keys
//     rows, t2t's cached `range(-Lk + 1, 1)`, BERT's i - j + 4 and its cached query at key_length - 1), BERT's refusal
//     of key_length > k + 1, and the properties (index(d) + index(-d) = 2k, Toeplitz, range, saturation, the BERT
//     sign's matrix is the transpose of t2t's);
//   * scores against hand sums of small integers (scale 0.5, key_query off and on), a cancelling sum a double loses,
//     the default scale 1/sqrt(d) against doubles and against e^2 d = B^2, perfect-square head_dims exactly
//     (1/3 correctly rounded), random small-integer cases where double arithmetic is exact;
//   * outputs: equal scores give the plain mean of v_j + a^V[idx], the causal mask and the key mask remove exactly
//     their keys, values = false ignores a^V, a single visible key returns its value exactly, two-key softmaxes and
//     scores 2^1000 apart by 1 against Boost evaluations written again here, consistency with score();
//   * every bad argument against the posenc::Error it must raise.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/mp.hpp"
#include "posenc/reference/shaw.hpp"
#include "posenc/shaw_spec.hpp"
#include "test_util.hpp"

namespace oracle_shaw {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::RelativeSign;
using posenc::ShawSpec;
using posenc::ShawWeights;
using namespace posenc::reference;
using namespace posenc::reference::test_util;
using M = std::vector<std::vector<std::int64_t>>;

constexpr RelativeSign kT2t = RelativeSign::key_minus_query;
constexpr RelativeSign kBert = RelativeSign::query_minus_key;

ShawSpec make_spec(RelativeSign sign, std::size_t k, bool clip, bool key_query = false, bool values = true,
                   std::size_t head_dim = 2) {
  ShawSpec s;
  s.sign = sign;
  s.max_relative_position = k;
  s.clip = clip;
  s.key_query = key_query;
  s.values = values;
  s.head_dim = head_dim;
  posenc::validate(s);
  return s;
}

// Tables naming their row and column: a^K[r][c] = r + c / 8, a^V[r][c] = 100 r + c (exact doubles).
ShawWeights naming_weights(const ShawSpec& s) {
  ShawWeights w;
  for (std::size_t r = 0; r < posenc::shaw_table_rows(s); ++r)
    for (std::size_t c = 0; c < s.head_dim; ++c) {
      w.keys.push_back(double(r) + double(c) / 8.0);
      if (s.values) w.values.push_back(100.0 * double(r) + double(c));
    }
  return w;
}

ShawWeights zero_weights(const ShawSpec& s) {
  ShawWeights w;
  w.keys.assign(posenc::shaw_table_rows(s) * s.head_dim, 0.0);
  if (s.values) w.values.assign(posenc::shaw_table_rows(s) * s.head_dim, 0.0);
  return w;
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

M index_matrix(const ShawSpec& s, std::size_t lq, std::size_t lk) {
  M m(lq, std::vector<std::int64_t>(lk));
  for (std::size_t i = 0; i < lq; ++i)
    for (std::size_t j = 0; j < lk; ++j) m[i][j] = shaw_index(s, i, j, lq, lk);
  return m;
}

// A Real of 1200 bits holding x exactly (a double).
Real big(double x) { return make_real(x, 1200); }

// |got - want| <= 2^e * mag.
bool within(const Real& got, const Real& want, const Real& mag, long e) {
  const Real d = sub(got, want);
  Real bound = make_real(bits_of(mag) + 8);
  mpfr_mul_2si(raw(bound), raw(mag), e, MPFR_RNDN);
  return mpfr_cmpabs(raw(d), raw(bound)) <= 0;
}

// ======================================================================================================
// ShawOracleIndex
// ======================================================================================================

// CONVENTIONS.md §2.3: distance j - i clipped to [-2, 2], plus 2.
TEST(ShawOracleIndex, T2tFullMatrixK2) {
  const ShawSpec s = make_spec(kT2t, 2, true);
  const M want = {{2, 3, 4, 4, 4},  //
                  {1, 2, 3, 4, 4},
                  {0, 1, 2, 3, 4},
                  {0, 0, 1, 2, 3},
                  {0, 0, 0, 1, 2}};
  EXPECT_EQ(index_matrix(s, 5, 5), want);
  const M d = {{0, 1, 2, 3, 4}, {-1, 0, 1, 2, 3}, {-2, -1, 0, 1, 2}, {-3, -2, -1, 0, 1}, {-4, -3, -2, -1, 0}};
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(shaw_distance(s, i, j, 5, 5), d[i][j]);
}

// range_q = range_k[-length_q:]: Lq = 2 of Lk = 5 are the queries at positions 3 and 4.
TEST(ShawOracleIndex, T2tQueriesAreTheLastKeys) {
  const ShawSpec s = make_spec(kT2t, 2, true);
  const M want = {{0, 0, 1, 2, 3},  //
                  {0, 0, 0, 1, 2}};
  EXPECT_EQ(index_matrix(s, 2, 5), want);
  EXPECT_EQ(shaw_distance(s, 0, 0, 2, 5), -3);
  EXPECT_EQ(shaw_distance(s, 1, 4, 2, 5), 0);
  const M three = {{0, 1, 2, 3, 4}, {0, 0, 1, 2, 3}, {0, 0, 0, 1, 2}};  // Lq = 3: positions 2, 3, 4
  EXPECT_EQ(index_matrix(s, 3, 5), three);
}

// cache=True: distance = arange(-length_k + 1, 1), clipped, plus k.
TEST(ShawOracleIndex, T2tCachedSingleQueryIsRangeMinusLkPlusOneToOne) {
  for (std::int64_t k : {1, 2, 3, 20})
    for (std::size_t lk = 1; lk <= 30; ++lk) {
      const ShawSpec s = make_spec(kT2t, std::size_t(k), true);
      for (std::size_t j = 0; j < lk; ++j) {
        const std::int64_t dist = -std::int64_t(lk) + 1 + std::int64_t(j);  // range(-Lk + 1, 1)[j]
        const std::int64_t want = std::min(std::max(dist, -k), k) + k;
        ASSERT_EQ(shaw_index(s, 0, j, 1, lk), want) << "k=" << k << " lk=" << lk << " j=" << j;
      }
    }
  const ShawSpec s = make_spec(kT2t, 2, true);
  const M want = {{0, 0, 0, 1, 2}};
  EXPECT_EQ(index_matrix(s, 1, 5), want);
}

// HF BERT relative_key: distance = i - j, index = distance + max_position_embeddings - 1, no clamp (k = 4).
TEST(ShawOracleIndex, BertLiteralMatrix) {
  const ShawSpec s = make_spec(kBert, 4, false);
  const M want = {{4, 3, 2, 1, 0},  //
                  {5, 4, 3, 2, 1},
                  {6, 5, 4, 3, 2},
                  {7, 6, 5, 4, 3},
                  {8, 7, 6, 5, 4}};
  EXPECT_EQ(index_matrix(s, 5, 5), want);
  // cached: the single query at key_length - 1
  EXPECT_EQ(index_matrix(s, 1, 5), (M{{8, 7, 6, 5, 4}}));
  EXPECT_EQ(index_matrix(s, 1, 3), (M{{6, 5, 4}}));
  EXPECT_EQ(index_matrix(s, 2, 4), (M{{6, 5, 4, 3}, {7, 6, 5, 4}}));
  EXPECT_EQ(shaw_distance(s, 4, 0, 5, 5), 4);
  EXPECT_EQ(shaw_distance(s, 0, 4, 5, 5), -4);
}

TEST(ShawOracleIndex, BertLongerThanTheTableThrowsKeyLength) {
  const ShawSpec s = make_spec(kBert, 4, false);
  EXPECT_EQ(param_of([&] { shaw_index(s, 0, 0, 6, 6); }), "key_length");
  EXPECT_EQ(param_of([&] { shaw_index(s, 0, 0, 1, 6); }), "key_length");
  EXPECT_EQ(param_of([&] { shaw_distance(s, 0, 0, 1, 6); }), "key_length");
  EXPECT_EQ(param_of([&] { shaw_index(s, 0, 0, 5, 5); }), "");
  const ShawOracle o(s, naming_weights(s));
  const std::vector<double> q = {1, 2}, k = {3, 4};
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 1, 6); }), "key_length");
  EXPECT_EQ(param_of([&] { o.visible({}, 0, 0, 1, 6); }), "key_length");
  // the same lengths with clipping are fine
  EXPECT_EQ(param_of([&] { shaw_index(make_spec(kBert, 4, true), 0, 0, 6, 6); }), "");
}

// CONVENTIONS.md §2.3 properties: Toeplitz, constant beyond +-k, index(d) + index(-d) = 2k, values in [0, 2k].
TEST(ShawOracleIndex, ShawProperties) {
  for (RelativeSign sign : {kT2t, kBert})
    for (std::int64_t k = 1; k <= 5; ++k)
      for (std::size_t lk = 1; lk <= 12; ++lk)
        for (std::size_t lq = 1; lq <= lk; ++lq) {
          const ShawSpec s = make_spec(sign, std::size_t(k), true);
          for (std::size_t i = 0; i < lq; ++i)
            for (std::size_t j = 0; j < lk; ++j) {
              const std::int64_t x = shaw_index(s, i, j, lq, lk);
              ASSERT_GE(x, 0);
              ASSERT_LE(x, 2 * k);
              const std::int64_t qi = std::int64_t(lk - lq + i), rel = std::int64_t(j) - qi;  // j - q_i
              const std::int64_t d = sign == kT2t ? rel : -rel;
              if (d >= k) {
                ASSERT_EQ(x, 2 * k);
              } else if (d <= -k) {
                ASSERT_EQ(x, 0);
              } else {
                ASSERT_EQ(x, d + k);
              }
              if (i + 1 < lq && j + 1 < lk) {
                ASSERT_EQ(shaw_index(s, i + 1, j + 1, lq, lk), x);  // Toeplitz
              }
              // the same j - q_i under the square geometry gives the same index
              ASSERT_EQ(shaw_index(s, std::size_t(qi), j, lk, lk), x);
            }
          if (lq == lk) {
            for (std::size_t i = 0; i < lk; ++i)
              for (std::size_t j = 0; j < lk; ++j)
                ASSERT_EQ(shaw_index(s, i, j, lk, lk) + shaw_index(s, j, i, lk, lk), 2 * k);
          }
        }
}

TEST(ShawOracleIndex, BertSignIsTheTransposeOfT2tSign) {
  for (std::size_t k = 1; k <= 4; ++k)
    for (std::size_t l = 1; l <= 10; ++l)
      for (bool clip : {true, false}) {
        if (!clip && l > k + 1) continue;
        const M t2t = index_matrix(make_spec(kT2t, k, clip), l, l);
        const M bert = index_matrix(make_spec(kBert, k, clip), l, l);
        for (std::size_t i = 0; i < l; ++i)
          for (std::size_t j = 0; j < l; ++j) ASSERT_EQ(bert[i][j], t2t[j][i]) << k << " " << l << " " << clip;
      }
  // and they are not the same matrix (the sign matters)
  EXPECT_NE(index_matrix(make_spec(kT2t, 2, true), 3, 3), index_matrix(make_spec(kBert, 2, true), 3, 3));
}

// ======================================================================================================
// ShawOracleScore
// ======================================================================================================

// head_dim 2, k = 1 (3 rows), Lq = Lk = 3, i = 0, j = 2: d = 2 clipped to 1, idx = 2: a^K[2] = (-2, 5).
// q = (1, 2), k = (3, -1): <q, k> = 1, <q, a> = -2 + 10 = 8, <k, a> = -6 - 5 = -11.
//   key_query false: 0.5 (1 + 8) = 4.5;  key_query true: 0.5 (1 + 8 - 11) = -1.
ShawWeights hand_weights() { return ShawWeights{{1, 2, 3, -1, -2, 5}, {}}; }

TEST(ShawOracleScore, HandCaseScaleHalf) {
  const std::vector<double> q = {1, 2}, k = {3, -1};
  const ShawOracle o(make_spec(kT2t, 1, true, false, false), hand_weights());
  EXPECT_TRUE(holds(o.score(q, k, 0, 2, 3, 3, 0.5), 4.5));
  const ShawOracle kq(make_spec(kT2t, 1, true, true, false), hand_weights());
  EXPECT_TRUE(holds(kq.score(q, k, 0, 2, 3, 3, 0.5), -1.0));
  // j = 1: d = 1, idx = 2 as well; j = 0: d = 0, idx = 1: a = (3, -1): <q, a> = 1, <k, a> = 10
  EXPECT_TRUE(holds(o.score(q, k, 0, 1, 3, 3, 0.5), 4.5));
  EXPECT_TRUE(holds(o.score(q, k, 0, 0, 3, 3, 0.5), 1.0));     // 0.5 (1 + 1)
  EXPECT_TRUE(holds(kq.score(q, k, 0, 0, 3, 3, 0.5), 6.0));    // 0.5 (1 + 1 + 10)
  // i = 2, j = 0: d = -2 clipped to -1, idx = 0: a = (1, 2): <q, a> = 5, <k, a> = 1
  EXPECT_TRUE(holds(o.score(q, k, 2, 0, 3, 3, 0.5), 3.0));     // 0.5 (1 + 5)
  EXPECT_TRUE(holds(kq.score(q, k, 2, 0, 3, 3, 0.5), 3.5));    // 0.5 (1 + 5 + 1)
  // BERT sign: i = 0, j = 2 -> d = -2 -> idx 0
  const ShawOracle b(make_spec(kBert, 1, true, false, false), hand_weights());
  EXPECT_TRUE(holds(b.score(q, k, 0, 2, 3, 3, 0.5), 3.0));
  EXPECT_EQ(bits_of(o.score(q, k, 0, 2, 3, 3, 0.5)), kDefaultBits);
  const ShawOracle o100(make_spec(kT2t, 1, true, false, false), hand_weights(), 100);
  EXPECT_EQ(bits_of(o100.score(q, k, 0, 2, 3, 3, 0.5)), 100u);
  // magnitudes: sum |q k| = 5, |q a| = 12, |k a| = 11
  EXPECT_EQ(o.score_magnitude(q, k, 0, 2, 3, 3, 0.5), 8.5);
  EXPECT_EQ(kq.score_magnitude(q, k, 0, 2, 3, 3, 0.5), 14.0);
  EXPECT_EQ(kq.score_magnitude(q, k, 0, 2, 3, 3, -0.5), 14.0);
  const double m = o.score_magnitude(q, k, 0, 2, 3, 3);  // 17 / sqrt(2), rounded up
  EXPECT_GE(m, 17.0 / std::sqrt(2.0) * (1 - 1e-16));
  EXPECT_LE(m, std::nextafter(17.0 / std::sqrt(2.0), 100.0));
  {
    PrecisionGuard guard(400);
    const Real exact = Real(17) / sqrt(Real(2));
    EXPECT_GE(Real(m), exact);
  }
}

// Default scale 1/sqrt(2): e = 9 / sqrt(2).
TEST(ShawOracleScore, DefaultScaleIsOneOverSqrtHeadDim) {
  const std::vector<double> q = {1, 2}, k = {3, -1};
  const ShawOracle o(make_spec(kT2t, 1, true, false, false), hand_weights());
  const Real e = o.score(q, k, 0, 2, 3, 3);
  EXPECT_NEAR(to_d(e), 9.0 / std::sqrt(2.0), 1e-15 * 9.0 / std::sqrt(2.0));
  // 2 e^2 = 81 to the precision of e
  Real t = make_real(1200);
  mpfr_sqr(raw(t), raw(e), MPFR_RNDN);
  mpfr_mul_ui(raw(t), raw(t), 2, MPFR_RNDN);
  EXPECT_TRUE(within(t, big(81), big(81), -250)) << show(t);
  // and it is the correctly rounded value: compare with 9 / sqrt(2) at 1200 bits rounded to 256
  Real s2 = make_real(1200), want = make_real(kDefaultBits);
  mpfr_sqrt_ui(raw(s2), 2, MPFR_RNDN);
  mpfr_ui_div(raw(s2), 9, raw(s2), MPFR_RNDN);
  mpfr_set(raw(want), raw(s2), MPFR_RNDN);
  EXPECT_TRUE(same(e, want)) << show(e) << " vs " << show(want);
  // key_query: 0 / sqrt(2) (1 + 8 - 11 = -2): -sqrt(2)
  const ShawOracle kq(make_spec(kT2t, 1, true, true, false), hand_weights());
  EXPECT_NEAR(to_d(kq.score(q, k, 0, 2, 3, 3)), -std::sqrt(2.0), 1e-15 * std::sqrt(2.0));
}

// head_dim 9: 1/3 exactly rounded once; head_dim 4: scale 1/2 exact; head_dim 1: scale 1.
TEST(ShawOracleScore, PerfectSquareHeadDims) {
  for (std::size_t d : {1u, 4u, 9u, 16u, 25u, 3u, 5u}) {
    const ShawSpec s = make_spec(kT2t, 1, true, false, false, d);
    const ShawOracle o(s, zero_weights(s));
    std::vector<double> q(d, 0.0), k(d, 0.0);
    q[0] = 1;
    k[0] = 1;
    const Real e = o.score(q, k, 0, 0, 1, 1);  // B = 1
    Real want = make_real(kDefaultBits), hi = make_real(2000);
    mpfr_sqrt_ui(raw(hi), static_cast<unsigned long>(d), MPFR_RNDN);
    mpfr_ui_div(raw(hi), 1, raw(hi), MPFR_RNDN);
    mpfr_set(raw(want), raw(hi), MPFR_RNDN);
    EXPECT_TRUE(same(e, want)) << d << ": " << show(e);
  }
  const ShawSpec s9 = make_spec(kT2t, 1, true, false, false, 9);
  const ShawOracle o9(s9, zero_weights(s9));
  std::vector<double> q(9, 0.0), k(9, 0.0);
  q[0] = 3;
  k[0] = 1;
  EXPECT_TRUE(holds(o9.score(q, k, 0, 0, 1, 1), 1.0));  // 3 / sqrt(9)
}

// q = (2^60, 1, -2^60), k = (1, 1, 1): <q, k> = 1 exactly; a left-to-right double sum gives 0.
TEST(ShawOracleScore, CancellingSumIsExact) {
  const ShawSpec s = make_spec(kT2t, 1, true, true, false, 3);
  ShawWeights w = zero_weights(s);
  const std::vector<double> q = {0x1p60, 1, -0x1p60}, k = {1, 1, 1};
  double naive = 0;
  for (int c = 0; c < 3; ++c) naive += q[c] * k[c];
  ASSERT_EQ(naive, 0.0);
  EXPECT_TRUE(holds(ShawOracle(s, w).score(q, k, 0, 0, 1, 1, 1.0), 1.0));
  // the table terms cancelling the dot product: a^K[1] = (1, 2^-80, 0) with key_query: <q,a> = 2^60 + 2^-80,
  // <k,a> = 1 + 2^-80: total 2^60 + 2 + 2^-79 (63 + 79 bits: exact at 256 bits)
  w.keys[3] = 1;
  w.keys[4] = 0x1p-80;
  const Real e = ShawOracle(s, w).score(q, k, 0, 0, 1, 1, 1.0);
  Real want = make_real(300);
  mpfr_set_ui_2exp(raw(want), 1, 60, MPFR_RNDN);
  mpfr_add_ui(raw(want), raw(want), 2, MPFR_RNDN);
  Real tiny = make_real(64);
  mpfr_set_ui_2exp(raw(tiny), 1, -79, MPFR_RNDN);
  mpfr_add(raw(want), raw(want), raw(tiny), MPFR_RNDN);
  EXPECT_TRUE(same(e, want)) << show(e);
}

// Small integers with a power-of-two scale: double arithmetic is exact; the index formula written again here.
TEST(ShawOracleScore, RandomSmallIntegersMatchExactDoubleArithmetic) {
  std::mt19937 gen(12345);
  std::uniform_int_distribution<int> val(-8, 8);
  for (int trial = 0; trial < 300; ++trial) {
    const auto hd = std::size_t(1 + gen() % 6), kmax = std::size_t(1 + gen() % 3);
    const auto lk = std::size_t(1 + gen() % 7), lq = std::size_t(1 + gen() % lk);
    const RelativeSign sign = gen() % 2 ? kT2t : kBert;
    const bool kqf = gen() % 2, clip = true;
    const ShawSpec s = make_spec(sign, kmax, clip, kqf, false, hd);
    ShawWeights w;
    for (std::size_t t = 0; t < posenc::shaw_table_rows(s) * hd; ++t) w.keys.push_back(val(gen));
    const ShawOracle o(s, w);
    std::vector<double> q(hd), k(hd);
    for (auto& x : q) x = val(gen);
    for (auto& x : k) x = val(gen);
    const std::size_t i = gen() % lq, j = gen() % lk;
    const std::int64_t qi = std::int64_t(lk) - std::int64_t(lq) + std::int64_t(i);
    std::int64_t d = sign == kT2t ? std::int64_t(j) - qi : qi - std::int64_t(j);
    d = std::clamp<std::int64_t>(d, -std::int64_t(kmax), std::int64_t(kmax));
    const std::size_t row = std::size_t(d + std::int64_t(kmax));
    double b = 0, mag = 0;
    for (std::size_t c = 0; c < hd; ++c) {
      const double a = w.keys[row * hd + c];
      b += q[c] * k[c] + q[c] * a + (kqf ? k[c] * a : 0.0);
      mag += std::fabs(q[c] * k[c]) + std::fabs(q[c] * a) + (kqf ? std::fabs(k[c] * a) : 0.0);
    }
    ASSERT_TRUE(holds(o.score(q, k, i, j, lq, lk, 0.25), b * 0.25)) << trial;
    ASSERT_TRUE(holds(o.score(q, k, i, j, lq, lk, -2.0), b * -2.0)) << trial;
    ASSERT_EQ(o.score_magnitude(q, k, i, j, lq, lk, 0.25), mag * 0.25) << trial;
  }
}

TEST(ShawOracleScore, ThreadSafe) {
  const ShawOracle o(make_spec(kT2t, 1, true, true, false, 2), hand_weights());
  const std::vector<double> q = {1.1, 2.3}, k = {3.7, -1.9};
  expect_concurrent_calls_match_serial([&] {
    std::vector<Real> out;
    for (int n = 0; n < 50; ++n) out.push_back(o.score(q, k, 0, 2, 3, 3));
    return out;
  });
}

// ======================================================================================================
// ShawOracleOutput
// ======================================================================================================

// Five keys, head_dim 3, t2t k = 2 with the naming tables: a^V[r][c] = 100 r + c. V[j][c] = 10 j + c / 4.
struct Case {
  ShawSpec spec;
  ShawWeights weights;
  std::vector<double> Q, K, V;
  std::size_t lq, lk;
};

Case five_keys(bool values = true, bool key_query = false) {
  Case c{make_spec(kT2t, 2, true, key_query, values, 3), {}, {}, {}, {}, 5, 5};
  c.weights = naming_weights(c.spec);
  c.Q.assign(5 * 3, 0.0);  // q = 0: every score is 0 (key_query false)
  for (std::size_t j = 0; j < 5; ++j)
    for (std::size_t d = 0; d < 3; ++d) {
      c.K.push_back(double(j) - 2.0 + double(d) / 2.0);
      c.V.push_back(10.0 * double(j) + double(d) / 4.0);
    }
  return c;
}

// The mean over `keys` of v_j + [values] (100 idx + c), idx given by hand.
Real mean_of(const Case& c, const std::vector<std::size_t>& keys, const std::vector<std::int64_t>& idx,
             std::size_t col) {
  Real s = make_real(600);
  for (std::size_t n = 0; n < keys.size(); ++n) {
    mpfr_add_d(raw(s), raw(s), c.V[keys[n] * 3 + col], MPFR_RNDN);
    if (c.spec.values) mpfr_add_d(raw(s), raw(s), 100.0 * double(idx[n]) + double(col), MPFR_RNDN);
  }
  mpfr_div_ui(raw(s), raw(s), static_cast<unsigned long>(keys.size()), MPFR_RNDN);
  return s;
}

void expect_mean(const Case& c, const std::vector<Real>& z, const std::vector<std::size_t>& keys,
                 const std::vector<std::int64_t>& idx) {
  ASSERT_EQ(z.size(), 3u);
  for (std::size_t col = 0; col < 3; ++col) {
    const Real want = mean_of(c, keys, idx, col);
    EXPECT_TRUE(within(z[col], want, want, -(long(kDefaultBits) - 1))) << col << ": " << show(z[col]) << " vs "
                                                                        << show(want);
  }
}

TEST(ShawOracleOutput, EqualScoresGiveTheMeanOfValuesPlusTable) {
  const Case c = five_keys();
  const ShawOracle o(c.spec, c.weights);
  // row 2 (position 2): idx = 0, 1, 2, 3, 4 for j = 0..4 (the literal T2tFullMatrixK2 row)
  expect_mean(c, o.output(c.Q, c.K, c.V, 2, 5, 5), {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4});
  // row 0: idx = 2, 3, 4, 4, 4
  expect_mean(c, o.output(c.Q, c.K, c.V, 0, 5, 5), {0, 1, 2, 3, 4}, {2, 3, 4, 4, 4});
  // the queries of Lq = 2 are positions 3, 4: row 1 -> idx 0, 0, 0, 1, 2
  std::vector<double> q2(2 * 3, 0.0);
  expect_mean(c, o.output(q2, c.K, c.V, 1, 2, 5), {0, 1, 2, 3, 4}, {0, 0, 0, 1, 2});
  // a given scale changes nothing when every score is 0
  expect_mean(c, o.output(c.Q, c.K, c.V, 2, 5, 5, {}, 3.0), {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4});
}

TEST(ShawOracleOutput, CausalMaskDropsFutureKeys) {
  Case c = five_keys();
  const ShawOracle o(c.spec, c.weights);
  const ShawMask causal{true, {}};
  // row 1 (position 1) sees keys 0, 1: idx 1, 2
  const auto z = o.output(c.Q, c.K, c.V, 1, 5, 5, causal);
  expect_mean(c, z, {0, 1}, {1, 2});
  for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(o.visible(causal, 1, j, 5, 5), j <= 1) << j;
  // the future keys' values play no part
  for (std::size_t t = 2 * 3; t < c.V.size(); ++t) c.V[t] = 1e6 + double(t);
  const auto z2 = o.output(c.Q, c.K, c.V, 1, 5, 5, causal);
  for (std::size_t col = 0; col < 3; ++col) EXPECT_TRUE(same(z[col], z2[col]));
  // without the mask they do
  EXPECT_FALSE(same(o.output(c.Q, c.K, c.V, 1, 5, 5)[0], z[0]));
  // Lq = 2 of Lk = 5, causal: row 0 is position 3, sees keys 0..3 with idx 0, 0, 1, 2
  const Case d = five_keys();
  std::vector<double> q2(2 * 3, 0.0);
  expect_mean(d, o.output(q2, d.K, d.V, 0, 2, 5, causal), {0, 1, 2, 3}, {0, 0, 1, 2});
  EXPECT_FALSE(o.visible(causal, 0, 4, 2, 5));
  EXPECT_TRUE(o.visible(causal, 0, 3, 2, 5));
  EXPECT_TRUE(o.visible(causal, 1, 4, 2, 5));
}

TEST(ShawOracleOutput, KeyMaskDropsPaddedKeys) {
  const Case c = five_keys();
  const ShawOracle o(c.spec, c.weights);
  const ShawMask mask{false, {1, 0, 1, 1, 0}};
  expect_mean(c, o.output(c.Q, c.K, c.V, 2, 5, 5, mask), {0, 2, 3}, {0, 2, 3});
  EXPECT_FALSE(o.visible(mask, 2, 1, 5, 5));
  EXPECT_TRUE(o.visible(mask, 2, 3, 5, 5));
  // both masks: row 2 causal keeps 0, 1, 2; the key mask removes 1
  const ShawMask both{true, {1, 0, 1, 1, 0}};
  expect_mean(c, o.output(c.Q, c.K, c.V, 2, 5, 5, both), {0, 2}, {0, 2});
  EXPECT_FALSE(o.visible(both, 2, 3, 5, 5));
}

TEST(ShawOracleOutput, ValuesFalseIgnoresTheValueTable) {
  const Case c = five_keys(false);
  ASSERT_TRUE(c.weights.values.empty());
  const ShawOracle o(c.spec, c.weights);
  expect_mean(c, o.output(c.Q, c.K, c.V, 2, 5, 5), {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4});
  // row 4 column 0: mean of 0, 10, 20, 30, 40 = 20 (no table)
  EXPECT_TRUE(within(o.output(c.Q, c.K, c.V, 4, 5, 5)[0], big(20), big(20), -250));
}

TEST(ShawOracleOutput, SingleVisibleKeyIsItsValueExactly) {
  const Case c = five_keys();
  const ShawOracle o(c.spec, c.weights);
  const auto z = o.output(c.Q, c.K, c.V, 0, 5, 5, ShawMask{false, {0, 0, 0, 1, 0}});
  // key 3 from row 0: idx 4: 30 + c/4 + 400 + c
  for (std::size_t col = 0; col < 3; ++col) EXPECT_TRUE(holds(z[col], 430.0 + 1.25 * double(col))) << show(z[col]);
}

TEST(ShawOracleOutput, FullyMaskedRowThrowsKeyMask) {
  const Case c = five_keys();
  const ShawOracle o(c.spec, c.weights);
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, c.V, 2, 5, 5, ShawMask{false, {0, 0, 0, 0, 0}}); }), "key_mask");
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, c.V, 0, 5, 5, ShawMask{true, {0, 1, 1, 1, 1}}); }), "key_mask");
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, c.V, 1, 5, 5, ShawMask{true, {0, 1, 1, 1, 1}}); }), "");
}

// head_dim 1, k = 1, Lq = 1, Lk = 2 (the query at position 1): idx(0, 0) = 0, idx(0, 1) = 1.
// a^K = (0.5, -0.25, 1), q = 2, K = (1, 0.5), scale 1: e0 = 2 + 1 = 3, e1 = 1 - 0.5 = 0.5;
// key_query: e0 = 3 + 0.5 = 3.5, e1 = 0.5 - 0.125 = 0.375.
// a^V = (1, 2, 4), V = (1, 3): w0 = 2, w1 = 5: z = (2 exp(e0) + 5 exp(e1)) / (exp(e0) + exp(e1)).
Real two_key_want(double e0, double e1, double w0, double w1) {
  PrecisionGuard guard(1200);
  const Real a = exp(Real(e0)), b = exp(Real(e1));
  return Real((Real(w0) * a + Real(w1) * b) / (a + b));
}

TEST(ShawOracleOutput, TwoKeySoftmaxAgainstBoost) {
  const std::vector<double> Q = {2}, K = {1, 0.5}, V = {1, 3};
  const ShawWeights w{{0.5, -0.25, 1}, {1, 2, 4}};
  const ShawOracle o(make_spec(kT2t, 1, true, false, true, 1), w);
  const ShawOracle kq(make_spec(kT2t, 1, true, true, true, 1), w);
  struct Row {
    const ShawOracle* oracle;
    std::optional<double> scale;
    double e0, e1;
  };
  for (const Row& r : {Row{&o, 1.0, 3, 0.5}, Row{&o, std::nullopt, 3, 0.5}, Row{&kq, 1.0, 3.5, 0.375},
                       Row{&o, -1.0, -3, -0.5}, Row{&o, 0.25, 0.75, 0.125}, Row{&o, 0.0, 0, 0}}) {
    const Real want = two_key_want(r.e0, r.e1, 2, 5);
    const auto z = r.oracle->output(Q, K, V, 0, 1, 2, {}, r.scale);
    ASSERT_EQ(z.size(), 1u);
    EXPECT_TRUE(within(z[0], want, big(5), -(long(kDefaultBits) - 2))) << show(z[0]) << " vs " << show(want);
    const double e0 = r.e0, e1 = r.e1;
    const double dz = (2 * std::exp(e0) + 5 * std::exp(e1)) / (std::exp(e0) + std::exp(e1));
    EXPECT_NEAR(to_d(z[0]), dz, 1e-14 * 5);
  }
}

// Scores 2^1000 and 2^1000 - 1: alpha = (1/(1 + e^-1), e^-1/(1 + e^-1)). Rounding the scores themselves to a few
// hundred bits would make them equal (alpha = 1/2).
TEST(ShawOracleOutput, HugeScoresOneApart) {
  const ShawSpec s = make_spec(kT2t, 1, true, false, true, 2);
  const ShawOracle o(s, zero_weights(s));
  const std::vector<double> Q = {0x1p500, 1}, K = {0x1p500, 0, 0x1p500, -1}, V = {1, 0, 0, 1};
  const auto z = o.output(Q, K, V, 0, 1, 2, {}, 1.0);
  const double a0 = 1 / (1 + std::exp(-1.0));
  EXPECT_NEAR(to_d(z[0]), a0, 1e-15);
  EXPECT_NEAR(to_d(z[1]), 1 - a0, 1e-15);
  const Real want0 = two_key_want(1, 0, 1, 0), want1 = two_key_want(1, 0, 0, 1);
  EXPECT_TRUE(within(z[0], want0, big(1), -250)) << show(z[0]);
  EXPECT_TRUE(within(z[1], want1, big(1), -250)) << show(z[1]);
  // a key 2^41 below the best one has no weight: the output is the best key's value
  const std::vector<double> Q2 = {0x1p20, 0}, K2 = {0x1p20, 0, -0x1p20, 0};
  const auto z2 = o.output(Q2, K2, V, 0, 1, 2, {}, 1.0);
  EXPECT_TRUE(holds(z2[0], 1.0));
  EXPECT_TRUE(holds(z2[1], 0.0));
}

// output() against score(): alpha from the oracle's own scores (256 bits), softmax with Boost at 1200 bits.
TEST(ShawOracleOutput, ConsistentWithScore) {
  std::mt19937 gen(777);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (int trial = 0; trial < 12; ++trial) {
    const bool kqf = trial % 2, values = trial % 3 != 0;
    const RelativeSign sign = trial % 4 < 2 ? kT2t : kBert;
    const std::size_t hd = 3, kmax = 2, lk = 6, lq = 4;
    const ShawSpec s = make_spec(sign, kmax, true, kqf, values, hd);
    ShawWeights w;
    for (std::size_t t = 0; t < posenc::shaw_table_rows(s) * hd; ++t) {
      w.keys.push_back(u(gen));
      if (values) w.values.push_back(u(gen));
    }
    std::vector<double> Q(lq * hd), K(lk * hd), V(lk * hd);
    for (auto& x : Q) x = u(gen);
    for (auto& x : K) x = u(gen);
    for (auto& x : V) x = u(gen);
    const ShawOracle o(s, w);
    const ShawMask mask{trial % 5 == 1, trial % 3 == 2 ? std::vector<std::uint8_t>{1, 1, 0, 1, 0, 1}
                                                        : std::vector<std::uint8_t>{}};
    const std::optional<double> scale = trial % 4 == 3 ? std::optional<double>(0.7) : std::nullopt;
    for (std::size_t i = 0; i < lq; ++i) {
      const auto z = o.output(Q, K, V, i, lq, lk, mask, scale);
      PrecisionGuard guard(1200);
      Real num[hd], mag[hd], den = 0;
      for (std::size_t c = 0; c < hd; ++c) num[c] = mag[c] = 0;
      for (std::size_t j = 0; j < lk; ++j) {
        if (!o.visible(mask, i, j, lq, lk)) continue;
        const std::span<const double> qv(Q.data() + i * hd, hd), kv(K.data() + j * hd, hd);
        const Real ex = exp(Real(o.score(qv, kv, i, j, lq, lk, scale)));
        den += ex;
        const auto idx = std::size_t(shaw_index(s, i, j, lq, lk));
        for (std::size_t c = 0; c < hd; ++c) {
          const Real wjc = Real(V[j * hd + c]) + (values ? Real(w.values[idx * hd + c]) : Real(0));
          num[c] += ex * wjc;
          mag[c] += ex * abs(wjc);
        }
      }
      for (std::size_t c = 0; c < hd; ++c) {
        const Real want = num[c] / den, m = mag[c] / den;
        // the scores are correctly rounded to 256 bits: exp amplifies their 2^-256 relative error by |e| < 20
        EXPECT_TRUE(within(z[c], want, m, -(long(kDefaultBits) - 8)))
            << trial << " " << i << " " << c << ": " << show(z[c]) << " vs " << show(want);
      }
    }
  }
}

// ======================================================================================================
// ShawOracleErrors
// ======================================================================================================

TEST(ShawOracleErrors, Construction) {
  const ShawSpec s = make_spec(kT2t, 2, true, false, true, 3);
  EXPECT_EQ(param_of([&] { (void)ShawOracle(s, naming_weights(s)); }), "");
  ShawSpec bad = s;
  bad.head_dim = 0;
  EXPECT_EQ(param_of([&] { (void)ShawOracle(bad, naming_weights(s)); }), "head_dim");
  bad = s;
  bad.max_relative_position = 0;
  EXPECT_EQ(param_of([&] { (void)ShawOracle(bad, naming_weights(s)); }), "max_relative_position");
  EXPECT_EQ(param_of([&] { shaw_index(bad, 0, 0, 1, 1); }), "max_relative_position");
  ShawWeights w = naming_weights(s);
  w.keys.pop_back();
  EXPECT_EQ(param_of([&] { (void)ShawOracle(s, w); }), "keys");
  w = naming_weights(s);
  w.values[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(param_of([&] { (void)ShawOracle(s, w); }), "values");
  const ShawSpec nv = make_spec(kT2t, 2, true, false, false, 3);
  EXPECT_EQ(param_of([&] { (void)ShawOracle(nv, naming_weights(s)); }), "values");
  EXPECT_EQ(param_of([&] { (void)ShawOracle(s, naming_weights(s), 0); }), "bits");
  EXPECT_EQ(param_of([&] { (void)ShawOracle(s, naming_weights(s), kMaxBits + 1); }), "bits");
}

TEST(ShawOracleErrors, IndexAndScoreArguments) {
  const ShawSpec s = make_spec(kT2t, 2, true, false, true, 2);
  const ShawOracle o(s, naming_weights(s));
  const std::vector<double> q = {1, 2}, k = {3, 4}, three = {1, 2, 3};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 2, 3); }), "");
  EXPECT_EQ(param_of([&] { o.score(three, k, 0, 0, 2, 3); }), "q");
  EXPECT_EQ(param_of([&] { o.score({}, k, 0, 0, 2, 3); }), "q");
  EXPECT_EQ(param_of([&] { o.score(q, three, 0, 0, 2, 3); }), "k");
  EXPECT_EQ(param_of([&] { o.score(std::vector<double>{nan, 1}, k, 0, 0, 2, 3); }), "q");
  EXPECT_EQ(param_of([&] { o.score(q, std::vector<double>{1, inf}, 0, 0, 2, 3); }), "k");
  EXPECT_EQ(param_of([&] { o.score(q, k, 2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 4, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 2, 3, nan); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 2, 3, -inf); }), "scale");
  EXPECT_EQ(param_of([&] { o.score_magnitude(q, three, 0, 0, 2, 3); }), "k");
  EXPECT_EQ(param_of([&] { o.score_magnitude(q, k, 0, 0, 2, 3, inf); }), "scale");
  EXPECT_EQ(param_of([&] { o.score_magnitude(q, k, 0, 5, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { shaw_index(s, 2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { shaw_index(s, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { shaw_distance(s, 0, 0, 3, 2); }), "query_length");
  EXPECT_EQ(param_of([&] { o.visible({}, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.visible(ShawMask{false, {1, 1}}, 0, 0, 2, 3); }), "key_mask");
  EXPECT_EQ(param_of([&] { o.visible(ShawMask{false, {1, 2, 1}}, 0, 0, 2, 3); }), "key_mask");
}

TEST(ShawOracleErrors, OutputArguments) {
  const Case c = five_keys();
  const ShawOracle o(c.spec, c.weights);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, c.V, 0, 5, 5); }), "");
  auto shorter = [](std::vector<double> v) {
    v.pop_back();
    return v;
  };
  auto with_nan = [&](std::vector<double> v) {
    v[4] = nan;
    return v;
  };
  EXPECT_EQ(param_of([&] { o.output(shorter(c.Q), c.K, c.V, 0, 5, 5); }), "Q");
  EXPECT_EQ(param_of([&] { o.output(c.Q, shorter(c.K), c.V, 0, 5, 5); }), "K");
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, shorter(c.V), 0, 5, 5); }), "V");
  EXPECT_EQ(param_of([&] { o.output(with_nan(c.Q), c.K, c.V, 0, 5, 5); }), "Q");
  EXPECT_EQ(param_of([&] { o.output(c.Q, with_nan(c.K), c.V, 0, 5, 5); }), "K");
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, with_nan(c.V), 0, 5, 5); }), "V");
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, c.V, 5, 5, 5); }), "i");
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, c.V, 0, 6, 5); }), "query_length");
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, c.V, 0, 5, 5, ShawMask{false, {1, 1, 1}}); }), "key_mask");
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, c.V, 0, 5, 5, ShawMask{false, {1, 1, 3, 1, 1}}); }), "key_mask");
  EXPECT_EQ(param_of([&] { o.output(c.Q, c.K, c.V, 0, 5, 5, {}, nan); }), "scale");
}

}  // namespace oracle_shaw
