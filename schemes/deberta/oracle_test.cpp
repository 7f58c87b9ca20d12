// Self-tests of the DeBERTa disentangled-attention oracle. The oracle is the ground truth of the deberta property
// suite, so each test here is built to fail if the oracle is wrong:
//   * the geometry rel(i, j) = i - j with the queries first, literal matrices, and HF's own build_relative_position
//     (properties/heldout/data/hf/deberta_buckets.json, real transformers output);
//   * buckets against thresholds derived by hand (position_buckets 4, max 8: a <= 2 (7/2)^t), against a brute-force
//     search of the definition's integer form (the smallest t >= 0 with a^N mid^t <= M^t mid^N, written again here
//     with GMP, no gcd reduction, no hint), against every held-out HF make_log_bucket_position value (4
//     configurations x 6001 relative positions, both regimes), and at the exact integer points of the log curve
//     (a = M gives mid + N; (a / mid)^N = (M / mid)^t for non-powers of two, up to N = 32767);
//   * the hf regime against plain C float arithmetic, its float32 `ceil(z) + mid` at huge z, and the list of
//     distances where the exact and hf regimes differ (an independent Python model, written and run while writing
//     this test, not part of the repository: the exact regime with Python integers, each hf float32 step rounded from
//     a 300-bit mpmath value; it also reproduced every held-out HF bucket);
//   * deberta_log_position against exact rationals (non-dyadic ones included, negative below mid) and against Boost
//     at 4x the precision;
//   * the properties of CONVENTIONS.md §2.8 (odd, identity for |r| <= mid, monotone, |b| <= bs - 1 for |r| <= M,
//     saturation with the clamp, growth past M without it, N = 0, no buckets = rel), the position index's range and
//     literals (clamp at 0 and 2 span - 1);
//   * scores against hand sums of small integers (c2p / p2c on and off, two heads), the default scale 1/sqrt(head_dim
//     (1 + c2p + p2c)) at perfect squares (exact thirds and sixths) and an irrational one, a cancelling sum, random
//     small-integer cases where double arithmetic is exact, translation invariance, score_magnitude;
//   * every bad argument against the posenc::Error it must raise.
#include <gtest/gtest.h>
#include <gmp.h>
#include <mpfr.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "posenc/deberta_spec.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/deberta.hpp"
#include "posenc/reference/mp.hpp"
#include "test_util.hpp"

namespace oracle_deberta {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::DebertaRegime;
using posenc::DebertaSpec;
using posenc::DebertaWeights;
using namespace posenc::reference;
using namespace posenc::reference::test_util;
using M = std::vector<std::vector<std::int64_t>>;
using Opt = std::optional<std::size_t>;

constexpr DebertaRegime kExact = DebertaRegime::exact;
constexpr DebertaRegime kHf = DebertaRegime::hf;
constexpr std::int64_t kMaxRel = (std::int64_t{1} << 31) - 1;

DebertaSpec make_spec(Opt buckets, std::size_t max_rel, DebertaRegime regime = kExact, bool clamp = false,
                      bool c2p = true, bool p2c = true, std::size_t heads = 1, std::size_t head_dim = 2) {
  DebertaSpec s;
  s.position_buckets = buckets;
  s.max_relative_positions = max_rel;
  s.clamp = clamp;
  s.regime = regime;
  s.c2p = c2p;
  s.p2c = p2c;
  s.heads = heads;
  s.head_dim = head_dim;
  posenc::validate(s);
  return s;
}

DebertaSpec with_regime(DebertaSpec s, DebertaRegime regime) {
  s.regime = regime;
  return s;
}

// Tables naming head, row and column: K_r[h][r][d] = 100 h + 10 r + d, Q_r[h][r][d] = -(100 h + 10 r) + 2 d.
DebertaWeights naming_weights(const DebertaSpec& s) {
  DebertaWeights w;
  const std::size_t rows = posenc::deberta_table_rows(s);
  for (std::size_t h = 0; h < s.heads; ++h)
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t d = 0; d < s.head_dim; ++d) {
        if (s.c2p) w.pos_key.push_back(100.0 * double(h) + 10.0 * double(r) + double(d));
        if (s.p2c) w.pos_query.push_back(-(100.0 * double(h) + 10.0 * double(r)) + 2.0 * double(d));
      }
  return w;
}

DebertaWeights zero_weights(const DebertaSpec& s) {
  DebertaWeights w;
  const std::size_t n = s.heads * posenc::deberta_table_rows(s) * s.head_dim;
  if (s.c2p) w.pos_key.assign(n, 0.0);
  if (s.p2c) w.pos_query.assign(n, 0.0);
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

std::int64_t sgn(std::int64_t r) { return r > 0 ? 1 : (r < 0 ? -1 : 0); }

// ceil(v(a)) for a > mid by the definition's integer form, written again here: the smallest t >= 0 with
// a^N mid^t <= M^t mid^N (v(a) <= t), a linear search in GMP integers.
std::int64_t brute_ceil(std::int64_t mid, std::int64_t big_m, std::int64_t a) {
  const auto n = static_cast<unsigned long>(mid - 1);
  mpz_t lhs, rhs;
  mpz_init(lhs);
  mpz_init(rhs);
  mpz_ui_pow_ui(lhs, static_cast<unsigned long>(a), n);    // a^N mid^0
  mpz_ui_pow_ui(rhs, static_cast<unsigned long>(mid), n);  // M^0 mid^N
  std::int64_t t = 0;
  while (mpz_cmp(lhs, rhs) > 0 && t < 100000) {
    mpz_mul_ui(lhs, lhs, static_cast<unsigned long>(mid));
    mpz_mul_ui(rhs, rhs, static_cast<unsigned long>(big_m));
    ++t;
  }
  mpz_clear(lhs);
  mpz_clear(rhs);
  return t;
}

// b(rel) of the exact regime from brute_ceil (deberta_spec.hpp's formula, transcribed again).
std::int64_t brute_bucket(std::int64_t bs, std::int64_t max_rel, bool clamp, std::int64_t rel) {
  const std::int64_t mid = bs / 2, big_m = max_rel - 1;
  const std::int64_t r = clamp ? std::clamp(rel, -big_m, big_m) : rel;
  const std::int64_t a = r < 0 ? -r : r;
  if (a <= mid) return r;
  return sgn(r) * (mid + brute_ceil(mid, big_m, a));
}

nlohmann::json heldout() {
  const std::string path = std::string(POSENC_SOURCE_DIR) + "/properties/heldout/data/hf/deberta_buckets.json";
  std::ifstream in(path);
  if (!in.good()) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

// The integer after `tag` in key ("bs256_mp512", "q5_k5_bs256_mp512").
std::size_t number_after(const std::string& key, const std::string& tag) {
  const std::size_t at = key.find(tag);
  if (at == std::string::npos) throw std::runtime_error("no " + tag + " in " + key);
  return std::stoul(key.substr(at + tag.size()));
}

// ======================================================================================================
// DebertaOracleGeometry
// ======================================================================================================

TEST(DebertaOracleGeometry, RelativeIsQueryMinusKeyWithTheQueriesFirst) {
  const M square = {{0, -1, -2}, {1, 0, -1}, {2, 1, 0}};  // i - j, Lq = Lk = 3
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(deberta_relative(i, j, 3, 3), square[i][j]) << i << " " << j;
  // Lq = 2, Lk = 5: query rows at positions 0 and 1 (not the last keys, unlike the bias schemes)
  const M first_two = {{0, -1, -2, -3, -4}, {1, 0, -1, -2, -3}};
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(deberta_relative(i, j, 2, 5), first_two[i][j]);
  // Lq = 4, Lk = 2: more queries than keys
  EXPECT_EQ(deberta_relative(3, 0, 4, 2), 3);
  EXPECT_EQ(deberta_relative(3, 1, 4, 2), 2);
  const std::size_t big = std::size_t{1} << 30;
  EXPECT_EQ(deberta_relative(big - 1, 0, big, 1), std::int64_t(big) - 1);
  EXPECT_EQ(deberta_relative(0, big - 1, 1, big), -(std::int64_t(big) - 1));
}

// HF build_relative_position(q, k, bucket_size, max_position): rel[i][j] = i - j, bucketed.
TEST(DebertaOracleGeometry, ReproducesHeldOutBuildRelativePosition) {
  const nlohmann::json data = heldout();
  const auto& rp = data.at("build_relative_position");
  ASSERT_EQ(rp.size(), 4u);
  std::size_t checked = 0;
  for (const auto& [key, value] : rp.items()) {
    const std::size_t lq = number_after(key, "q"), lk = number_after(key, "_k"), bs = number_after(key, "_bs"),
                      mp = number_after(key, "_mp");
    const auto want = value.get<std::vector<std::vector<std::vector<std::int64_t>>>>();
    ASSERT_EQ(want.size(), 1u) << key;
    ASSERT_EQ(want[0].size(), lq) << key;
    for (DebertaRegime regime : {kHf, kExact}) {
      const DebertaSpec s = make_spec(bs, mp, regime);
      for (std::size_t i = 0; i < lq; ++i) {
        ASSERT_EQ(want[0][i].size(), lk) << key;
        for (std::size_t j = 0; j < lk; ++j) {
          EXPECT_EQ(deberta_bucket(s, deberta_relative(i, j, lq, lk)), want[0][i][j]) << key << " " << i << " " << j;
          // and the index is that bucket shifted by the span, clamped
          const auto span = std::int64_t(bs);
          EXPECT_EQ(deberta_position_index(s, i, j, lq, lk),
                    std::clamp(want[0][i][j] + span, std::int64_t{0}, 2 * span - 1));
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2u * (25 + 21 + 36 + 1600));
}

// ======================================================================================================
// DebertaOracleIndex
// ======================================================================================================

TEST(DebertaOracleIndex, HandLiterals) {
  // position_buckets 4, max 8 (span 4, 8 rows): b of rel 0..8 = 0, 1, 2, 3, 3, 3, 3, 3, 4 (DebertaOracleBucket), so
  // c = b + 4 clamped to [0, 7] for Lq = 9, Lk = 4 (rel 8 -> b 4 -> 8 -> 7):
  const M want = {{4, 3, 2, 1}, {5, 4, 3, 2}, {6, 5, 4, 3}, {7, 6, 5, 4}, {7, 7, 6, 5},
                  {7, 7, 7, 6}, {7, 7, 7, 7}, {7, 7, 7, 7}, {7, 7, 7, 7}};
  for (DebertaRegime regime : {kExact, kHf}) {
    const DebertaSpec s = make_spec(4, 8, regime);
    for (std::size_t i = 0; i < 9; ++i)
      for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(deberta_position_index(s, i, j, 9, 4), want[i][j]) << i << j;
    // rel -30: b = -5 (a = 30 in (24.5, 85.75]) -> -1 -> 0; rel -7: b = -3 -> 1; rel -8: b = -4 -> 0
    EXPECT_EQ(deberta_position_index(s, 0, 30, 1, 31), 0);
    EXPECT_EQ(deberta_position_index(s, 0, 7, 1, 31), 1);
    EXPECT_EQ(deberta_position_index(s, 0, 8, 1, 31), 0);
    EXPECT_EQ(deberta_position_index(s, 0, 2, 1, 31), 2);
  }
  // no buckets, max_relative_positions 3 (span 3, 6 rows): c = clamp(i - j + 3, 0, 5)
  const DebertaSpec nb = make_spec(std::nullopt, 3);
  const M want_nb = {{3, 2, 1, 0, 0}, {4, 3, 2, 1, 0}, {5, 4, 3, 2, 1}, {5, 5, 4, 3, 2}, {5, 5, 5, 4, 3}};
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(deberta_position_index(nb, i, j, 5, 5), want_nb[i][j]);
  // the deberta-v3-base geometry: rel 1 -> 257, rel -1 -> 255, rel 3000 -> b 418 -> 674 -> 511, rel -3000 -> 0
  const DebertaSpec v3 = make_spec(256, 512, kHf);
  EXPECT_EQ(deberta_position_index(v3, 1, 0, 2, 2), 257);
  EXPECT_EQ(deberta_position_index(v3, 0, 1, 2, 2), 255);
  EXPECT_EQ(deberta_position_index(v3, 3000, 0, 3001, 1), 511);
  EXPECT_EQ(deberta_position_index(v3, 0, 3000, 1, 3001), 0);
  EXPECT_EQ(deberta_position_index(v3, 200, 0, 201, 1), 256 + deberta_bucket(v3, 200));
}

TEST(DebertaOracleIndex, RangeToeplitzAndConsistency) {
  struct Case {
    DebertaSpec spec;
    std::int64_t low, high;  // c at rel = -(2^30 - 1) and 2^30 - 1: the corners of the largest matrix
  };
  const Case cases[] = {
      {make_spec(4, 8), 0, 7},                   // b grows past +-(bs - 1) without the clamp: both clamps of c act
      {make_spec(4, 8, kHf, true), 1, 7},        // clamp: b in [-3, 3], c in [1, 7] (row 0 is never read)
      {make_spec(256, 512, kHf), 0, 511},        //
      {make_spec(256, 512, kExact, true), 1, 511},
      {make_spec(3, 3), 2, 4},                   // mid = 1: b in {-1, 0, 1}, span 3
      {make_spec(2, 3, kHf), 1, 3},              // span 2
      {make_spec(7, 10), 0, 13},                 //
      {make_spec(std::nullopt, 1), 0, 1},        // no buckets: c = clamp(rel + max, 0, 2 max - 1)
      {make_spec(std::nullopt, 5), 0, 9},
      {make_spec(std::nullopt, 600), 0, 1199}};
  for (const Case& cs : cases) {
    const DebertaSpec& s = cs.spec;
    const auto span = std::int64_t(posenc::deberta_span(s));
    for (std::size_t lq : {1u, 5u, 40u})
      for (std::size_t lk : {1u, 7u, 40u})
        for (std::size_t i = 0; i < lq; ++i)
          for (std::size_t j = 0; j < lk; ++j) {
            const std::int64_t c = deberta_position_index(s, i, j, lq, lk);
            ASSERT_GE(c, 0);
            ASSERT_LT(c, 2 * span);
            ASSERT_EQ(c, std::clamp(deberta_bucket(s, std::int64_t(i) - std::int64_t(j)) + span, std::int64_t{0},
                                    2 * span - 1));
            if (i + 1 < lq && j + 1 < lk) {
              ASSERT_EQ(deberta_position_index(s, i + 1, j + 1, lq, lk), c);  // Toeplitz
            }
            ASSERT_EQ(deberta_position_index(s, i, j, 100, 100), c);  // only i - j matters
          }
    const std::size_t big = std::size_t{1} << 30;
    const std::string name = std::to_string(s.position_buckets.value_or(0)) + " " +
                             std::to_string(s.max_relative_positions);
    EXPECT_EQ(deberta_position_index(s, big - 1, 0, big, 1), cs.high) << name;
    EXPECT_EQ(deberta_position_index(s, 0, big - 1, 1, big), cs.low) << name;
  }
}

// ======================================================================================================
// DebertaOracleBucket
// ======================================================================================================

// position_buckets 4, max 8: mid = 2, M = 7, N = 1, v(a) = ln(a/2) / ln(7/2): v(a) <= t <=> a <= 2 (7/2)^t
// (= 7, 24.5, 85.75, 300.125, ...): rel 0..8 -> 0, 1, 2, 3, 3, 3, 3, 3, 4; a = 24 -> 4, 25 -> 5, 85 -> 5, 86 -> 6.
std::int64_t hand_bucket_4_8(std::int64_t r, bool clamp) {
  if (clamp) r = std::clamp<std::int64_t>(r, -7, 7);
  const std::int64_t a = r < 0 ? -r : r;
  if (a <= 2) return r;
  std::int64_t t = 0, p2 = 1, p7 = 1;  // a <= 2 (7/2)^t  <=>  a 2^t <= 2 7^t
  while (a * p2 > 2 * p7) {
    ++t;
    p2 *= 2;
    p7 *= 7;
  }
  return sgn(r) * (2 + t);
}

TEST(DebertaOracleBucket, HandLiteralsFourBucketsMaxEight) {
  const std::vector<std::int64_t> literal = {0, 1, 2, 3, 3, 3, 3, 3, 4};
  for (DebertaRegime regime : {kExact, kHf}) {
    const DebertaSpec s = make_spec(4, 8, regime), c = make_spec(4, 8, regime, true);
    for (std::int64_t r = 0; r <= 8; ++r) {
      EXPECT_EQ(deberta_bucket(s, r), literal[std::size_t(r)]) << r;
      EXPECT_EQ(deberta_bucket(s, -r), -literal[std::size_t(r)]) << r;
    }
    EXPECT_EQ(deberta_bucket(s, 24), 4);
    EXPECT_EQ(deberta_bucket(s, 25), 5);
    EXPECT_EQ(deberta_bucket(s, -85), -5);
    EXPECT_EQ(deberta_bucket(s, -86), -6);
    EXPECT_EQ(deberta_bucket(s, 300), 6);
    EXPECT_EQ(deberta_bucket(s, 301), 7);
    EXPECT_EQ(deberta_bucket(c, 8), 3);  // clamped to 7 first
    EXPECT_EQ(deberta_bucket(c, -kMaxRel), -3);
    for (std::int64_t r = -3000; r <= 3000; ++r) {
      ASSERT_EQ(deberta_bucket(s, r), hand_bucket_4_8(r, false)) << r << " " << posenc::to_string(regime);
      ASSERT_EQ(deberta_bucket(c, r), hand_bucket_4_8(r, true)) << r << " " << posenc::to_string(regime);
    }
  }
}

// The exact regime against the brute-force integer search; hf agrees except at the listed distances (the Python
// model's lists, header comment: z lands one float32 ulp above the integer v).
TEST(DebertaOracleBucket, ExactRegimeAgainstTheIntegerFormOfTheDefinition) {
  struct Case {
    std::int64_t bs, mp;
    std::vector<std::int64_t> hf_differs;  // distances a where hf = exact + 1
  };
  const Case cases[] = {{4, 8, {}},   {5, 8, {}},   {6, 9, {}},   {8, 16, {}},     {8, 109, {}}, {10, 41, {}},
                        {18, 17, {12}}, {19, 17, {12}}, {32, 64, {}}, {33, 40, {}},  {50, 37, {30}}, {64, 256, {}},
                        {7, 10, {}},  {2, 3, {}},   {3, 5, {}}};
  std::size_t checked = 0;
  for (const Case& c : cases) {
    const std::int64_t limit = std::min<std::int64_t>(4 * c.mp, 1500);
    const DebertaSpec ex = make_spec(std::size_t(c.bs), std::size_t(c.mp)),
                      hf = make_spec(std::size_t(c.bs), std::size_t(c.mp), kHf);
    const DebertaSpec exc = make_spec(std::size_t(c.bs), std::size_t(c.mp), kExact, true);
    for (std::int64_t a = 0; a <= limit; ++a) {
      const std::int64_t want = brute_bucket(c.bs, c.mp, false, a);
      ASSERT_EQ(deberta_bucket(ex, a), want) << c.bs << " " << c.mp << " a=" << a;
      ASSERT_EQ(deberta_bucket(ex, -a), -want) << c.bs << " " << c.mp << " a=" << a;
      ASSERT_EQ(deberta_bucket(exc, a), brute_bucket(c.bs, c.mp, true, a)) << c.bs << " " << c.mp << " a=" << a;
      const bool differs = std::find(c.hf_differs.begin(), c.hf_differs.end(), a) != c.hf_differs.end();
      ASSERT_EQ(deberta_bucket(hf, a), want + (differs ? 1 : 0)) << c.bs << " " << c.mp << " a=" << a;
      ASSERT_EQ(deberta_bucket(hf, -a), -want - (differs ? 1 : 0)) << c.bs << " " << c.mp << " a=" << a;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2575u);  // sum over the cases of min(4 max, 1500) + 1
}

// Where v(a) is an integer t ((a / mid)^N = (M / mid)^t, derived in each comment) the exact bucket is mid + t.
TEST(DebertaOracleBucket, ExactIntegerPointsOfTheCurve) {
  struct Case {
    std::size_t bs, mp;
    std::int64_t a, exact, hf;
  };
  const Case cases[] = {
      // bs 4, max 8: a = M = 7: v = 1 = N -> 3 = bs - 1; hf z = 1 exactly
      {4, 8, 7, 3, 3},
      {4, 8, 8, 4, 4},
      // bs 5 (odd): mid = 2, same curve: a = M = 7 gives mid + N = 3 = bs - 2
      {5, 8, 7, 3, 3},
      // bs 8, max 109: mid 4, N 3, M 108 = 4 * 27: a = 12, 36, 108 = 4 * 3^t: v = t = 1, 2, 3 -> 5, 6, 7
      {8, 109, 12, 5, 5},
      {8, 109, 13, 6, 6},
      {8, 109, 36, 6, 6},
      {8, 109, 37, 7, 7},
      {8, 109, 108, 7, 7},
      {8, 109, 109, 8, 8},
      // bs 18, max 17: mid 9, N 8, M 16 = 9 (4/3)^2: a = 12 = 9 (4/3): v = 8 / 2 = 4 -> 13; hf z = 4 + 2^-21 -> 14.
      // a = 16 = M: v = 8 -> 17 = bs - 1
      {18, 17, 12, 13, 14},
      {18, 17, 11, 12, 12},
      {18, 17, 13, 15, 15},
      {18, 17, 16, 17, 17},
      // bs 50, max 37: mid 25, N 24, M 36 = 25 (6/5)^2: a = 30: v = 12 -> 37; hf z = 12 + 2^-19 -> 38
      {50, 37, 30, 37, 38},
      {50, 37, 36, 49, 49},
      // bs 1250, max 1297: mid 625, N 624, M 1296 = 625 (6/5)^4: a = 750, 900, 1080: v = 156, 312, 468
      {1250, 1297, 750, 781, 782},
      {1250, 1297, 900, 937, 938},
      {1250, 1297, 1080, 1093, 1093},
      {1250, 1297, 1296, 1249, 1249},
      // bs 65536, max 2^22 + 1: mid 2^15, N 32767 = 7 * 4681, M = 2^22 = mid 2^7: a = mid 2^k: v = 32767 k / 7 =
      // 4681 k: a = 2^16 -> 32768 + 4681; 2^16 - 1 -> the same (v slightly below); 2^16 + 1 -> one more; a = M -> N
      // -> 65535; a = M + 1 -> v = 32767.0016 -> 65536 (exact) but hf z rounds to 32767 -> 65535.
      {65536, (std::size_t{1} << 22) + 1, 65536, 37449, 37449},
      {65536, (std::size_t{1} << 22) + 1, 65535, 37449, 37449},
      {65536, (std::size_t{1} << 22) + 1, 65537, 37450, 37450},
      {65536, (std::size_t{1} << 22) + 1, 1 << 17, 32768 + 9362, 32768 + 9362},
      {65536, (std::size_t{1} << 22) + 1, 1 << 22, 65535, 65535},
      {65536, (std::size_t{1} << 22) + 1, (1 << 22) + 1, 65536, 65535},
  };
  for (const Case& c : cases) {
    const DebertaSpec s = make_spec(c.bs, c.mp);
    EXPECT_EQ(deberta_bucket(s, c.a), c.exact) << c.bs << " " << c.mp << " a=" << c.a;
    EXPECT_EQ(deberta_bucket(s, -c.a), -c.exact) << c.bs << " " << c.mp << " a=" << c.a;
    EXPECT_EQ(deberta_bucket(with_regime(s, kHf), c.a), c.hf) << c.bs << " " << c.mp << " a=" << c.a;
    EXPECT_EQ(deberta_bucket(with_regime(s, kHf), -c.a), -c.hf) << c.bs << " " << c.mp << " a=" << c.a;
  }
  EXPECT_EQ(deberta_hf_z(make_spec(18, 17), 12), 4.0 + 0x1p-21);
  EXPECT_EQ(deberta_hf_z(make_spec(50, 37), 30), 12.0 + 0x1p-19);
  EXPECT_EQ(deberta_hf_z(make_spec(8, 109), 12), 1.0);
  EXPECT_EQ(deberta_hf_z(make_spec(4, 8), 7), 1.0);
  EXPECT_EQ(deberta_hf_z(make_spec(65536, (std::size_t{1} << 22) + 1), (1 << 22) + 1), 32767.0);
}

// a = M gives v = N exactly: mid + N = 2 mid - 1 (bs - 1 for an even bs, bs - 2 for an odd one), in both regimes for
// these specs (the Python model: z(M) = N for every bs in 4..79 and 128, 129, 256, 257, 511, 512 with max in
// [mid + 2, 4 bs + 2], and for these). Past M the curve goes on (no clamp): v(M + 1) > N, so b(M + 1) >= 2 mid, and
// for max >= 2 bs, N ln(M / (M - 1)) / ln(M / mid) < 1 on both sides: b(M - 1) = 2 mid - 1 and b(M + 1) = 2 mid.
TEST(DebertaOracleBucket, MaxMinusOneIsTheLastBucketBelowTheSpan) {
  for (std::size_t bs : {4u, 5u, 6u, 7u, 16u, 17u, 32u, 33u, 64u, 128u, 255u, 256u, 257u, 511u, 512u})
    for (std::size_t mp : {bs / 2 + 2, bs / 2 + 3, bs, bs + 1, 2 * bs, 4 * bs + 2}) {
      const auto mid = std::int64_t(bs / 2), big_m = std::int64_t(mp) - 1;
      for (DebertaRegime regime : {kExact, kHf}) {
        const DebertaSpec s = make_spec(bs, mp, regime), c = make_spec(bs, mp, regime, true);
        ASSERT_EQ(deberta_bucket(s, big_m), 2 * mid - 1) << bs << " " << mp;
        ASSERT_EQ(deberta_bucket(s, -big_m), -(2 * mid - 1)) << bs << " " << mp;
        ASSERT_GE(deberta_bucket(s, big_m + 1), 2 * mid) << bs << " " << mp;
        ASSERT_EQ(deberta_bucket(c, big_m + 1), 2 * mid - 1) << bs << " " << mp;
        ASSERT_EQ(deberta_bucket(c, -kMaxRel), -(2 * mid - 1)) << bs << " " << mp;
        if (mp >= 2 * bs) {
          ASSERT_EQ(deberta_bucket(s, big_m + 1), 2 * mid) << bs << " " << mp;
          ASSERT_EQ(deberta_bucket(s, big_m - 1), 2 * mid - 1) << bs << " " << mp;
        }
      }
    }
}

// N = 0 (position_buckets 2 or 3: mid = 1): v = 0 for every a, so b = sign(r) for every r != 0.
TEST(DebertaOracleBucket, OneBucketEachSideWhenMidIsOne) {
  for (std::size_t bs : {2u, 3u})
    for (std::size_t mp : {3u, 4u, 1000u})
      for (DebertaRegime regime : {kExact, kHf})
        for (bool clamp : {false, true}) {
          const DebertaSpec s = make_spec(bs, mp, regime, clamp);
          for (std::int64_t r : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{3},
                                 std::int64_t{1000}, std::int64_t{123456789}, kMaxRel}) {
            EXPECT_EQ(deberta_bucket(s, r), sgn(r)) << bs << " " << mp << " " << r;
            EXPECT_EQ(deberta_bucket(s, -r), -sgn(r)) << bs << " " << mp << " " << r;
          }
        }
  EXPECT_EQ(deberta_hf_z(make_spec(2, 3), 1000), 0.0);
  EXPECT_TRUE(holds(deberta_log_position(make_spec(3, 5), 1000), 0.0));
}

TEST(DebertaOracleBucket, NoBucketsIsTheRelativePosition) {
  for (std::size_t mp : {1u, 3u, 512u})
    for (DebertaRegime regime : {kExact, kHf}) {
      const DebertaSpec s = make_spec(std::nullopt, mp, regime);
      for (std::int64_t r : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{2}, std::int64_t{-600},
                             std::int64_t{513}, kMaxRel, -kMaxRel})
        EXPECT_EQ(deberta_bucket(s, r), r);
    }
}

// The extreme geometry (N = 32766 or 32767, M / mid = 1 + 2^-15): v(2^31 - 1) ~ 1.19e10, far from any GMP-sized
// integer test; the values from the Python model (exact: mpmath at 400 bits, > 0.07 from an integer). hf: z >= 2^33
// (ulp 1024) and the float32 `ceil(z) + mid` rounds when mid is not a multiple of that ulp (mid = 32767 here).
TEST(DebertaOracleBucket, HugeRelativePositionsAtTheNarrowestCurve) {
  struct Case {
    std::size_t bs, mp;
    std::int64_t a, exact, hf, z;
  };
  const Case cases[] = {
      {65536, 32770, kMaxRel, 11908028944, 11908028416, 11907995648},             // mid 32768: the sum is exact
      {65534, 32769, kMaxRel, 11907334909, 11907697664, 11907664896},             // z + 32767 rounds up by 1
      {65534, 32769, 1000000000, 11086740122, 11087078400, 11087045632},
      {65534, 32769, (std::int64_t{1} << 24) + 1, 6697904621, 6698108928, 6698076160},
      {65535, 32769, 123456789, 8840789543, 8841059328, 8841026560},
      {512, 258, kMaxRel, 1043007, 1043007, -1},  // z = 1042750.25 (below 2^24: the sum is exact)
      {512, 2050, kMaxRel, 2211, 2211, -1},
  };
  for (const Case& c : cases) {
    const DebertaSpec s = make_spec(c.bs, c.mp);
    EXPECT_EQ(deberta_bucket(s, c.a), c.exact) << c.bs << " " << c.mp << " a=" << c.a;
    EXPECT_EQ(deberta_bucket(s, -c.a), -c.exact);
    EXPECT_EQ(deberta_bucket(with_regime(s, kHf), c.a), c.hf) << c.bs << " " << c.mp << " a=" << c.a;
    EXPECT_EQ(deberta_bucket(with_regime(s, kHf), -c.a), -c.hf);
    if (c.z >= 0) {
      EXPECT_EQ(deberta_hf_z(s, c.a), double(c.z));
    }
    // the exact bucket is mid + ceil of the real value
    const Real v = deberta_log_position(s, c.a);
    Real cv = make_real(256);
    mpfr_ceil(raw(cv), raw(v));
    EXPECT_EQ(std::int64_t(to_d(cv)) + std::int64_t(c.bs / 2), c.exact) << show(v);
  }
  EXPECT_EQ(deberta_hf_z(make_spec(512, 258), kMaxRel), 1042750.25);
}

// ======================================================================================================
// DebertaOracleHf: HF's own outputs and plain C float arithmetic
// ======================================================================================================

TEST(DebertaOracleHf, ReproducesEveryHeldOutHfBucket) {
  const nlohmann::json data = heldout();
  const std::vector<std::int64_t> rel = data.at("relative").get<std::vector<std::int64_t>>();
  ASSERT_EQ(rel.size(), 6001u);
  ASSERT_EQ(rel.front(), -3000);
  ASSERT_EQ(data.at("log_bucket").size(), 4u);
  std::size_t checked = 0;
  for (const auto& [key, values] : data.at("log_bucket").items()) {
    const std::size_t bs = number_after(key, "bs"), mp = number_after(key, "_mp");
    const std::vector<double> want = values.get<std::vector<double>>();
    ASSERT_EQ(want.size(), rel.size()) << key;
    // HF's float32 regime, and the exact one (which agrees everywhere here: the Python model)
    for (DebertaRegime regime : {kHf, kExact}) {
      const DebertaSpec s = make_spec(bs, mp, regime);
      int wrong = 0;
      for (std::size_t c = 0; c < rel.size(); ++c) {
        const std::int64_t got = deberta_bucket(s, rel[c]);
        if (double(got) != want[c] && ++wrong <= 10)
          ADD_FAILURE() << key << " " << posenc::to_string(regime) << " r=" << rel[c] << " got " << got << " HF "
                        << want[c];
        ++checked;
      }
      EXPECT_EQ(wrong, 0) << key;
    }
  }
  EXPECT_EQ(checked, 2u * 4u * 6001u);
  // the spec's note: |r| = 3000 gives 418 for (256, 512) without the clamp; the clamp saturates at 255
  EXPECT_EQ(deberta_bucket(make_spec(256, 512, kHf), 3000), 418);
  EXPECT_EQ(deberta_bucket(make_spec(256, 512, kHf, true), 3000), 255);
  EXPECT_EQ(deberta_bucket(make_spec(256, 512, kExact, true), -3000), -255);
}


// The hf chain in C float arithmetic (IEEE binary32 / and * are correctly rounded; the logs through double).
TEST(DebertaOracleHf, ZAgainstPlainFloatArithmetic) {
  const std::vector<std::pair<std::size_t, std::size_t>> specs = {
      {256, 512}, {128, 512}, {64, 256}, {32, 64}, {4, 8}, {18, 17}, {50, 37}, {255, 1000}, {65534, 32769},
      {1000, 100000}};
  std::size_t compared = 0, skipped = 0;
  for (const auto& [bs, mp] : specs) {
    const DebertaSpec s = make_spec(bs, mp, kHf);
    const auto mid = std::int64_t(bs / 2), big_m = std::int64_t(mp) - 1, big_n = mid - 1;
    const double q = static_cast<double>(big_m) / static_cast<double>(mid);  // Python's true division
    float den = 0;
    ASSERT_TRUE(to_float_safely(std::log(static_cast<double>(static_cast<float>(q))), &den));
    std::vector<std::int64_t> as;
    for (std::int64_t a = mid + 1; a < mid + 600; ++a) as.push_back(a);
    for (std::int64_t a : {std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1, (std::int64_t{1} << 24) + 3, kMaxRel,
                           std::int64_t{123456789}})
      as.push_back(a);
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    for (int c = 0; c < 300; ++c) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      as.push_back(mid + 1 + static_cast<std::int64_t>((state >> 33) % std::uint64_t(kMaxRel - mid - 1)));
    }
    for (std::int64_t a : as) {
      volatile float x = static_cast<float>(a) / static_cast<float>(mid);
      float l = 0;
      if (!to_float_safely(std::log(static_cast<double>(x)), &l)) {
        ++skipped;
        continue;
      }
      volatile float y = l / den;
      volatile float z = y * static_cast<float>(big_n);
      ASSERT_EQ(deberta_hf_z(s, a), static_cast<double>(z)) << bs << " " << mp << " a=" << a;
      volatile float log_pos = std::ceil(static_cast<float>(z)) + static_cast<float>(mid);
      ASSERT_EQ(deberta_bucket(s, a), static_cast<std::int64_t>(log_pos)) << bs << " " << mp << " a=" << a;
      ASSERT_EQ(deberta_bucket(s, -a), -static_cast<std::int64_t>(log_pos)) << bs << " " << mp << " a=" << a;
      ++compared;
    }
  }
  EXPECT_GT(compared, 3 * skipped + 5000);
}

// ======================================================================================================
// DebertaOracleRegimes
// ======================================================================================================

// exact == hf wherever v is at least 1e-4 from an integer, and the exact bucket is mid + ceil(v) with v from
// deberta_log_position at 256 bits.
TEST(DebertaOracleRegimes, AgreeAwayFromIntegersAndExactIsTheCeilOfTheRealValue) {
  const std::vector<std::pair<std::size_t, std::size_t>> specs = {
      {256, 512}, {128, 512}, {64, 256}, {32, 64}, {4, 8}, {5, 8}, {18, 17}, {50, 37}, {8, 109}, {255, 1000},
      {1250, 1297}, {40, 22}};
  std::size_t far = 0;
  for (const auto& [bs, mp] : specs) {
    const DebertaSpec ex = make_spec(bs, mp), hf = make_spec(bs, mp, kHf);
    const auto mid = std::int64_t(bs / 2);
    for (std::int64_t a = mid + 1; a <= mid + 1500; ++a) {
      const Real v = deberta_log_position(ex, a);
      Real cv = make_real(256);
      mpfr_ceil(raw(cv), raw(v));
      ASSERT_EQ(deberta_bucket(ex, a), mid + std::int64_t(to_d(cv))) << bs << " " << mp << " a=" << a << " " << show(v);
      const double vd = to_d(v);
      if (std::fabs(vd - std::nearbyint(vd)) >= 1e-4) {
        ++far;
        ASSERT_EQ(deberta_bucket(hf, a), deberta_bucket(ex, a)) << bs << " " << mp << " a=" << a << " " << show(v);
      }
    }
  }
  EXPECT_GT(far, 15000u);
}

TEST(DebertaOracleRegimes, DifferencesListedByTheIndependentModel) {
  struct Case {
    std::size_t bs, mp;
    std::int64_t top;                                                        // a in (mid, top]
    std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> want;  // (a, exact, hf)
  };
  // Every distance where the two regimes differ. The first eight have no integer points of v below 4 max other than
  // powers of two (where the float32 chain is exact); the others have a / mid = c^p, M / mid = c^q for a rational c
  // that is not a power of two, and the chain lands just above the integer (hf one bucket higher), except (32, 55)
  // (M / mid = (3/2)^3, N = 15: v = 5, 10, 15 at a = 24, 36, 54, where z = 5 - 2^-21, 10 - 2^-20, 15: ceil agrees).
  const Case cases[] = {
      {256, 512, 2048, {}},
      {128, 512, 2048, {}},
      {64, 256, 1024, {}},
      {32, 64, 256, {}},
      {4, 8, 32, {}},
      {8, 16, 64, {}},
      {16, 64, 256, {}},
      {8, 109, 436, {}},
      {18, 17, 68, {{12, 13, 14}}},
      {19, 17, 68, {{12, 13, 14}}},
      {162, 257, 771, {{108, 101, 102}}},
      {50, 37, 111, {{30, 37, 38}}},
      {98, 65, 195, {{56, 73, 74}}},
      {32, 55, 165, {}},
      {1250, 1297, 3891, {{750, 781, 782}, {900, 937, 938}}},
  };
  for (const Case& c : cases) {
    const DebertaSpec ex = make_spec(c.bs, c.mp), hf = make_spec(c.bs, c.mp, kHf);
    const auto mid = std::int64_t(c.bs / 2);
    std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> got;
    for (std::int64_t a = mid + 1; a <= c.top; ++a) {
      const std::int64_t e = deberta_bucket(ex, a), h = deberta_bucket(hf, a);
      if (e != h) got.emplace_back(a, e, h);
      ASSERT_EQ(deberta_bucket(ex, -a) != deberta_bucket(hf, -a), e != h) << c.bs << " " << c.mp << " a=" << a;
    }
    EXPECT_EQ(got, c.want) << c.bs << " " << c.mp;
  }
}

// ======================================================================================================
// DebertaOracleLogPosition: the real value
// ======================================================================================================

// p / q correctly rounded to bits.
Real ratio(long p, unsigned long q, unsigned bits) {
  Real out = make_real(bits), n = make_real(std::int64_t(p), 64);
  mpfr_div_ui(raw(out), raw(n), q, MPFR_RNDN);
  return out;
}

TEST(DebertaOracleLogPosition, RationalValuesAreExact) {
  struct Case {
    std::size_t bs, mp;
    std::int64_t a;
    long p;
    unsigned long q;  // v = p / q
  };
  const Case cases[] = {
      // bs 4, max 8: v = ln(a/2)/ln(7/2): a = 2 -> 0, a = 7 -> 1
      {4, 8, 2, 0, 1},
      {4, 8, 7, 1, 1},
      // bs 4, max 5: M / mid = 2, N = 1: v = log2(a / 2): a = 1 -> -1, 2^30 -> 29 (p = 29: the largest powers)
      {4, 5, 1, -1, 1},
      {4, 5, std::int64_t{1} << 30, 29, 1},
      // bs 8, max 17: mid 4, N 3, M 16 = 4 * 4: v = 3 log4(a / 4): a = 8 -> 3/2, 16 -> 3, 2 -> -3/2, 1 -> -3
      {8, 17, 8, 3, 2},
      {8, 17, 16, 3, 1},
      {8, 17, 2, -3, 2},
      {8, 17, 1, -3, 1},
      {8, 17, 32, 9, 2},
      // bs 16, max 28: mid 8, N 7, M 27 = 8 (3/2)^3: a = 12 -> 7/3, 18 -> 14/3, 27 -> 7 (non-dyadic)
      {16, 28, 12, 7, 3},
      {16, 28, 18, 14, 3},
      {16, 28, 27, 7, 1},
      // bs 216, max 257: mid 108, N 107, M 256 = 108 (4/3)^3: a = 81 -> -107/3, 144 -> 107/3, 192 -> 214/3
      {216, 257, 81, -107, 3},
      {216, 257, 144, 107, 3},
      {216, 257, 192, 214, 3},
      {216, 257, 256, 107, 1},
      // bs 72, max 65: mid 36, N 35, M 64 = 36 (4/3)^2: a = 27 -> -35/2, 48 -> 35/2
      {72, 65, 27, -35, 2},
      {72, 65, 48, 35, 2},
      // bs 65536, max 2^22 + 1: a = 2^16 -> 4681, a = 2^13 (below mid: a / mid = 2^-2) -> -2 * 32767 / 7 = -9362
      {65536, (std::size_t{1} << 22) + 1, 1 << 16, 4681, 1},
      {65536, (std::size_t{1} << 22) + 1, 1 << 13, -2 * 32767, 7},
  };
  for (unsigned bits : {24u, 53u, 256u, 1000u})
    for (const Case& c : cases) {
      const DebertaSpec s = make_spec(c.bs, c.mp);
      const Real got = deberta_log_position(s, c.a, bits);
      EXPECT_TRUE(same(got, ratio(c.p, c.q, bits))) << c.bs << " " << c.mp << " a=" << c.a << " " << show(got);
      EXPECT_EQ(bits_of(got), bits);
    }
}

// The Ziv loop against Boost's expression templates at 4x the precision (log of the quotients, not log1p).
TEST(DebertaOracleLogPosition, IrrationalValuesAgainstBoostAtFourTimesThePrecision) {
  const std::vector<std::pair<std::size_t, std::size_t>> specs = {
      {256, 512}, {4, 8}, {18, 17}, {65536, 32770}, {65534, 32769}, {5, 1000000}, {512, std::size_t{1} << 30}};
  for (const auto& [bs, mp] : specs) {
    const DebertaSpec s = make_spec(bs, mp);
    const auto mid = std::int64_t(bs / 2), big_m = std::int64_t(mp) - 1;
    for (std::int64_t a :
         {std::int64_t{1}, mid - 1, mid + 1, 2 * mid + 1, big_m - 1, big_m + 1, 3 * big_m + 7, kMaxRel}) {
      if (a < 1 || a == mid || a > kMaxRel) continue;
      for (unsigned bits : {24u, 53u, 113u, 256u}) {
        const Real got = deberta_log_position(s, a, bits);
        Real want;
        {
          PrecisionGuard guard(4 * bits + 64);
          want = Real(double(mid - 1)) * boost::multiprecision::log(Real(double(a)) / Real(double(mid))) /
                 boost::multiprecision::log(Real(double(big_m)) / Real(double(mid)));
        }
        EXPECT_TRUE(same(got, with_bits(want, bits))) << bs << " " << mp << " a=" << a << " " << show(got);
        EXPECT_EQ(bits_of(got), bits);
      }
    }
  }
}

// ======================================================================================================
// DebertaOracleProperties: CONVENTIONS.md §2.8
// ======================================================================================================

TEST(DebertaOracleProperties, OddIdentityMonotoneBoundedSaturating) {
  const std::vector<std::pair<std::size_t, std::size_t>> specs = {
      {256, 512}, {4, 8}, {5, 8}, {2, 3}, {3, 4}, {6, 5}, {33, 100}, {18, 17}, {50, 37}, {512, 2050}, {511, 258},
      {1250, 1297}};
  for (const auto& [bs, mp] : specs)
    for (DebertaRegime regime : {kExact, kHf})
      for (bool clamp : {false, true}) {
        const DebertaSpec s = make_spec(bs, mp, regime, clamp);
        const auto mid = std::int64_t(bs / 2), big_m = std::int64_t(mp) - 1, nb = std::int64_t(bs);
        std::vector<std::int64_t> rs;
        for (std::int64_t r = 0; r <= 2 * big_m + 10; ++r) rs.push_back(r);
        for (std::int64_t r : {std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1, std::int64_t{1} << 30, kMaxRel - 1,
                               kMaxRel})
          rs.push_back(r);
        std::int64_t prev = -1;
        for (std::int64_t r : rs) {
          const std::int64_t b = deberta_bucket(s, r);
          ASSERT_EQ(deberta_bucket(s, -r), -b) << "odd " << bs << " " << mp << " r=" << r;
          ASSERT_GE(b, prev) << "monotone " << bs << " " << mp << " r=" << r;
          if (r <= mid) {
            ASSERT_EQ(b, r);
          } else {
            ASSERT_GE(b, mid + (mid > 1 ? 1 : 0)) << bs << " " << mp << " r=" << r;  // ceil(v) >= 1 unless N = 0
          }
          if (r <= big_m) {
            ASSERT_LE(b, nb - 1) << bs << " " << mp << " r=" << r;
          }
          if (clamp && r >= big_m) {
            ASSERT_EQ(b, 2 * mid - 1) << "saturates " << bs << " " << mp << " r=" << r;
          }
          if (!clamp && r > big_m && mid > 1) {
            ASSERT_GT(b, 2 * mid - 1) << "grows past M " << bs << " " << mp << " r=" << r;
          }
          prev = b;
        }
      }
}

// ======================================================================================================
// DebertaOracleScore
// ======================================================================================================

// bs 4, max 8 (span 4, 8 rows), 2 heads, head_dim 2, naming tables: K_r[h][r] = (100h + 10r, 100h + 10r + 1),
// Q_r[h][r] = (-(100h + 10r), -(100h + 10r) + 2). q = (1, 2), k = (3, -1): <q, k> = 1.
//   (h 1, i 5, j 0, Lq 6, Lk 2): rel 5 -> b 3 -> c 7: K_r = (170, 171): <q, K_r> = 512; Q_r = (-170, -168):
//     <k, Q_r> = -510 + 168 = -342. B = 1 + 512 - 342 = 171; magnitudes 5, 512, 678.
//   (h 1, i 0, j 1): rel -1 -> c 3: K_r = (130, 131): 392; Q_r = (-130, -128): -262. B = 131.
//   (h 0, i 0, j 1): c 3: K_r = (30, 31): 92; Q_r = (-30, -28): -62. B = 31.
TEST(DebertaOracleScore, HandSumsScaleHalf) {
  const std::vector<double> q = {1, 2}, k = {3, -1};
  const DebertaSpec both = make_spec(4, 8, kHf, false, true, true, 2, 2);
  const DebertaOracle o(both, naming_weights(both));
  EXPECT_TRUE(holds(o.score(1, q, k, 5, 0, 6, 2, 0.5), 85.5));
  EXPECT_TRUE(holds(o.score(1, q, k, 0, 1, 6, 2, 0.5), 65.5));
  EXPECT_TRUE(holds(o.score(0, q, k, 0, 1, 6, 2, 0.5), 15.5));
  EXPECT_TRUE(holds(o.score(1, q, k, 5, 0, 6, 2, -2.0), -342.0));
  EXPECT_EQ(o.score_magnitude(1, q, k, 5, 0, 6, 2, 0.5), 597.5);
  EXPECT_EQ(o.score_magnitude(1, q, k, 5, 0, 6, 2, -0.5), 597.5);
  // c2p only: 0.5 (1 + 512); p2c only: 0.5 (1 - 342); neither: 0.5
  const DebertaSpec c2p = make_spec(4, 8, kHf, false, true, false, 2, 2);
  const DebertaSpec p2c = make_spec(4, 8, kHf, false, false, true, 2, 2);
  const DebertaSpec none = make_spec(4, 8, kHf, false, false, false, 2, 2);
  EXPECT_TRUE(holds(DebertaOracle(c2p, naming_weights(c2p)).score(1, q, k, 5, 0, 6, 2, 0.5), 256.5));
  EXPECT_TRUE(holds(DebertaOracle(p2c, naming_weights(p2c)).score(1, q, k, 5, 0, 6, 2, 0.5), -170.5));
  EXPECT_TRUE(holds(DebertaOracle(none, naming_weights(none)).score(1, q, k, 5, 0, 6, 2, 0.5), 0.5));
  EXPECT_EQ(DebertaOracle(c2p, naming_weights(c2p)).score_magnitude(1, q, k, 5, 0, 6, 2, 0.5), 258.5);
  EXPECT_EQ(DebertaOracle(p2c, naming_weights(p2c)).score_magnitude(1, q, k, 5, 0, 6, 2, 0.5), 341.5);
  // rel 8: b 4 -> c 8 clamped to 7 (the same row as rel 5); rel -30: b -5 -> c 0: K_r[1][0] = (100, 101): 302,
  // Q_r[1][0] = (-100, -98): -202; B = 1 + 302 - 202 = 101
  EXPECT_TRUE(holds(o.score(1, q, k, 8, 0, 9, 1, 0.5), 85.5));
  EXPECT_TRUE(holds(o.score(1, q, k, 0, 30, 1, 31, 0.5), 50.5));
  EXPECT_EQ(bits_of(o.score(1, q, k, 5, 0, 6, 2, 0.5)), kDefaultBits);
  const DebertaOracle o100(both, naming_weights(both), 100);
  EXPECT_EQ(bits_of(o100.score(1, q, k, 5, 0, 6, 2, 0.5)), 100u);
  EXPECT_EQ(o.spec(), both);
  EXPECT_EQ(o100.bits(), 100u);
}

// scale = 1 / sqrt(head_dim (1 + c2p + p2c)): perfect squares divide exactly once; others go through the Ziv loop.
TEST(DebertaOracleScore, DefaultScale) {
  struct Case {
    std::size_t head_dim;
    bool c2p, p2c;
    unsigned long root;  // sqrt(head_dim * factor) when an integer, else 0
  };
  const Case cases[] = {{3, true, true, 3}, {12, true, true, 6}, {2, true, false, 2}, {2, false, true, 2},
                        {4, false, false, 2}, {1, false, false, 1}, {27, true, true, 9}, {2, true, true, 0},
                        {64, true, true, 0}, {3, true, false, 0}, {1, true, true, 0}};
  for (const Case& c : cases) {
    const DebertaSpec s = make_spec(4, 8, kHf, false, c.c2p, c.p2c, 1, c.head_dim);
    const DebertaOracle o(s, zero_weights(s));
    std::vector<double> q(c.head_dim, 0.0), k(c.head_dim, 0.0);
    q[0] = 1;
    k[0] = 1;  // B = 1
    const Real e = o.score(0, q, k, 0, 0, 1, 1);
    const unsigned long n = c.head_dim * (1 + (c.c2p ? 1 : 0) + (c.p2c ? 1 : 0));
    Real hi = make_real(2000), want = make_real(kDefaultBits);
    mpfr_sqrt_ui(raw(hi), n, MPFR_RNDN);
    mpfr_ui_div(raw(hi), 1, raw(hi), MPFR_RNDN);
    mpfr_set(raw(want), raw(hi), MPFR_RNDN);
    EXPECT_TRUE(same(e, want)) << c.head_dim << " " << c.c2p << c.p2c << ": " << show(e);
    if (c.root != 0) {
      Real third = make_real(kDefaultBits);
      mpfr_set_ui(raw(third), 1, MPFR_RNDN);
      mpfr_div_ui(raw(third), raw(third), c.root, MPFR_RNDN);
      EXPECT_TRUE(same(e, third)) << c.head_dim;
    }
    // magnitude: 1 / sqrt(n) rounded up, never below
    const double m = o.score_magnitude(0, q, k, 0, 0, 1, 1);
    EXPECT_LE(mpfr_cmp_d(raw(hi), m), 0) << c.head_dim;  // never below
    EXPECT_LE(m, to_d(hi) * (1 + 0x1p-51)) << c.head_dim;
  }
  // head_dim 3, c2p + p2c: 3 / sqrt(9) = 1 exactly; 7 / 3 correctly rounded at 53 bits
  const DebertaSpec s3 = make_spec(4, 8, kHf, false, true, true, 1, 3);
  const DebertaOracle o3(s3, zero_weights(s3));
  EXPECT_TRUE(holds(o3.score(0, std::vector<double>{3, 0, 0}, std::vector<double>{1, 0, 0}, 0, 0, 1, 1), 1.0));
  const DebertaOracle o3_53(s3, zero_weights(s3), 53);
  EXPECT_TRUE(holds(o3_53.score(0, std::vector<double>{7, 0, 0}, std::vector<double>{1, 0, 0}, 0, 0, 1, 1), 7.0 / 3.0));
  // head_dim 2 with both terms: e = B / sqrt(6), e^2 * 6 = B^2 to the precision of e
  const DebertaSpec s2 = make_spec(4, 8, kHf, false, true, true, 1, 2);
  const DebertaOracle o2(s2, naming_weights(s2));
  const std::vector<double> q = {1, 2}, k = {3, -1};
  const Real e = o2.score(0, q, k, 5, 0, 6, 2);  // c 7: K_r = (70, 71): 212; Q_r = (-70, -68): -142; B = 71
  Real t = make_real(1200);
  mpfr_sqr(raw(t), raw(e), MPFR_RNDN);
  mpfr_mul_ui(raw(t), raw(t), 6, MPFR_RNDN);
  const Real d = sub(t, make_real(71.0 * 71.0, 1200));
  EXPECT_TRUE(abs_below_pow2(d, 13 - 250)) << show(t);
  EXPECT_NEAR(to_d(e), 71.0 / std::sqrt(6.0), 1e-14);
  // a zero bracket gives +0
  EXPECT_TRUE(holds(o2.score(0, std::vector<double>{0, 0}, std::vector<double>{0, 0}, 0, 5, 1, 6), 0.0));
}

// q = (2^60, 1, -2^60), k = (1, 1, 1): <q, k> = 1 exactly; a left-to-right double sum gives 0.
TEST(DebertaOracleScore, CancellingSumIsExact) {
  const DebertaSpec s = make_spec(4, 8, kExact, false, true, true, 1, 3);
  DebertaWeights w = zero_weights(s);
  const std::vector<double> q = {0x1p60, 1, -0x1p60}, k = {1, 1, 1};
  double naive = 0;
  for (int c = 0; c < 3; ++c) naive += q[c] * k[c];
  ASSERT_EQ(naive, 0.0);
  EXPECT_TRUE(holds(DebertaOracle(s, w).score(0, q, k, 0, 0, 1, 1, 1.0), 1.0));
  // rel 0 -> c 4: K_r[4] = (1, 2^-80, 0): <q, K_r> = 2^60 + 2^-80; Q_r[4] = (0, 0, 2^-90): <k, Q_r> = 2^-90:
  // B = 2^60 + 1 + 2^-80 + 2^-90 (151 bits: exact at 256)
  w.pos_key[4 * 3 + 0] = 1;
  w.pos_key[4 * 3 + 1] = 0x1p-80;
  w.pos_query[4 * 3 + 2] = 0x1p-90;
  const Real e = DebertaOracle(s, w).score(0, q, k, 3, 3, 4, 4, 1.0);
  Real want = make_real(300), tiny = make_real(64);
  mpfr_set_ui_2exp(raw(want), 1, 60, MPFR_RNDN);
  mpfr_add_ui(raw(want), raw(want), 1, MPFR_RNDN);
  mpfr_set_ui_2exp(raw(tiny), 1, -80, MPFR_RNDN);
  mpfr_add(raw(want), raw(want), raw(tiny), MPFR_RNDN);
  mpfr_set_ui_2exp(raw(tiny), 1, -90, MPFR_RNDN);
  mpfr_add(raw(want), raw(want), raw(tiny), MPFR_RNDN);
  EXPECT_TRUE(same(e, want)) << show(e);
  // at 53 bits, one rounding: 2^60 + 1 + tiny -> 2^60 (the nearest double)
  EXPECT_TRUE(holds(DebertaOracle(s, w, 53).score(0, q, k, 3, 3, 4, 4, 1.0), 0x1p60));
}

// Small integers with a power-of-two scale: double arithmetic is exact; the index written again here from
// deberta_bucket.
TEST(DebertaOracleScore, RandomSmallIntegersMatchExactDoubleArithmetic) {
  std::mt19937 gen(20240611);
  std::uniform_int_distribution<int> val(-8, 8);
  const std::vector<std::pair<Opt, std::size_t>> geos = {{4, 8}, {5, 8}, {8, 16}, {std::nullopt, 3}, {2, 3}};
  for (int trial = 0; trial < 400; ++trial) {
    const auto& [bs, mp] = geos[gen() % geos.size()];
    const auto hd = std::size_t(1 + gen() % 5), heads = std::size_t(1 + gen() % 3);
    const bool c2p = gen() % 2, p2c = gen() % 2, clamp = bs && gen() % 2;
    const DebertaSpec s = make_spec(bs, mp, gen() % 2 ? kHf : kExact, clamp, c2p, p2c, heads, hd);
    DebertaWeights w;
    const std::size_t n = heads * posenc::deberta_table_rows(s) * hd;
    for (std::size_t t = 0; t < n; ++t) {
      if (c2p) w.pos_key.push_back(val(gen));
      if (p2c) w.pos_query.push_back(val(gen));
    }
    const DebertaOracle o(s, w);
    std::vector<double> q(hd), k(hd);
    for (auto& x : q) x = val(gen);
    for (auto& x : k) x = val(gen);
    const auto lq = std::size_t(1 + gen() % 40), lk = std::size_t(1 + gen() % 40);
    const std::size_t i = gen() % lq, j = gen() % lk, h = gen() % heads;
    const auto span = std::int64_t(posenc::deberta_span(s));
    const std::int64_t c = std::clamp(deberta_bucket(s, std::int64_t(i) - std::int64_t(j)) + span, std::int64_t{0},
                                      2 * span - 1);
    const std::size_t row = (h * posenc::deberta_table_rows(s) + std::size_t(c)) * hd;
    double b = 0, mag = 0;
    for (std::size_t d = 0; d < hd; ++d) {
      const double kr = c2p ? w.pos_key[row + d] : 0.0, qr = p2c ? w.pos_query[row + d] : 0.0;
      b += q[d] * k[d] + q[d] * kr + k[d] * qr;
      mag += std::fabs(q[d] * k[d]) + std::fabs(q[d] * kr) + std::fabs(k[d] * qr);
    }
    ASSERT_TRUE(holds(o.score(h, q, k, i, j, lq, lk, 0.25), b * 0.25)) << trial;
    ASSERT_TRUE(holds(o.score(h, q, k, i, j, lq, lk, -2.0), b * -2.0)) << trial;
    ASSERT_EQ(o.score_magnitude(h, q, k, i, j, lq, lk, 0.25), mag * 0.25) << trial;
    // translation invariance: only i - j matters
    ASSERT_TRUE(same(o.score(h, q, k, i + 3, j + 3, lq + 3, lk + 3), o.score(h, q, k, i, j, lq, lk))) << trial;
  }
}

// Non-integer inputs: the magnitude bounds the score and is tight when every term has the same sign.
TEST(DebertaOracleScore, MagnitudeBoundsTheScore) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> val(-3.0, 3.0);
  const DebertaSpec s = make_spec(8, 16, kHf, false, true, true, 2, 5);
  DebertaWeights w;
  const std::size_t n = 2 * posenc::deberta_table_rows(s) * 5;
  for (std::size_t t = 0; t < n; ++t) {
    w.pos_key.push_back(val(gen));
    w.pos_query.push_back(val(gen));
  }
  const DebertaOracle o(s, w);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> q(5), k(5);
    for (auto& x : q) x = val(gen);
    for (auto& x : k) x = val(gen);
    const std::size_t i = gen() % 30, j = gen() % 30;
    for (std::optional<double> scale : {std::optional<double>{}, std::optional<double>{-0.3}}) {
      const Real e = o.score(trial % 2, q, k, i, j, 30, 30, scale);
      const double m = o.score_magnitude(trial % 2, q, k, i, j, 30, 30, scale);
      ASSERT_GE(mpfr_cmpabs(raw(make_real(m, 64)), raw(e)), 0) << trial;
      ASSERT_GT(m, 0.0);
    }
  }
  // all terms positive: S = |e| up to the upward rounding
  std::vector<double> ones(5, 1.0);
  DebertaWeights pos = zero_weights(s);
  std::fill(pos.pos_key.begin(), pos.pos_key.end(), 0.5);
  std::fill(pos.pos_query.begin(), pos.pos_query.end(), 0.25);
  const DebertaOracle op(s, pos);
  EXPECT_EQ(op.score_magnitude(1, ones, ones, 3, 2, 5, 5, 1.0), 5 * (1 + 0.5 + 0.25));
  EXPECT_TRUE(holds(op.score(1, ones, ones, 3, 2, 5, 5, 1.0), 8.75));
}

TEST(DebertaOracleScore, DoesNotDependOnBoostDefaultPrecisionAndIsThreadSafe) {
  const DebertaSpec s = make_spec(256, 512, kHf, false, true, true, 2, 2);
  const DebertaWeights w = naming_weights(s);
  const DebertaOracle o(s, w);
  const std::vector<double> q = {0.1, -0.7}, k = {1.5, 0.3};
  expect_independent_of_default_precision([&] {
    return std::vector<Real>{deberta_log_position(s, 1000), o.score(1, q, k, 900, 3, 1000, 1000)};
  });
  EXPECT_EQ(bits_of(o.score(1, q, k, 900, 3, 1000, 1000)), kDefaultBits);

  const DebertaSpec ex = make_spec(18, 17), hf = make_spec(18, 17, kHf);
  expect_concurrent_calls_match_serial([&] {
    std::vector<std::int64_t> out;
    for (std::int64_t r = -200; r <= 200; ++r) {
      out.push_back(deberta_bucket(ex, r));
      out.push_back(deberta_bucket(hf, r));
    }
    return out;
  });
  expect_concurrent_calls_match_serial([&] {
    std::vector<Real> out;
    for (int n = 0; n < 20; ++n) out.push_back(o.score(1, q, k, 900, 3, 1000, 1000));
    return out;
  });
}

// ======================================================================================================
// DebertaOracleErrors: every bad argument names its parameter
// ======================================================================================================

TEST(DebertaOracleErrors, SpecWeightsAndBits) {
  const DebertaSpec s = make_spec(4, 8, kHf, false, true, true, 2, 2);
  const DebertaWeights w = naming_weights(s);
  EXPECT_EQ(param_of([&] { DebertaOracle x(s, w); }), "");
  DebertaSpec bad = s;
  bad.position_buckets = 1;
  EXPECT_EQ(param_of([&] { DebertaOracle x(bad, w); }), "position_buckets");
  EXPECT_EQ(param_of([&] { deberta_bucket(bad, 0); }), "position_buckets");
  EXPECT_EQ(param_of([&] { deberta_log_position(bad, 10); }), "position_buckets");
  EXPECT_EQ(param_of([&] { deberta_hf_z(bad, 10); }), "position_buckets");
  EXPECT_EQ(param_of([&] { deberta_position_index(bad, 0, 0, 1, 1); }), "position_buckets");
  bad.position_buckets = posenc::kDebertaMaxBuckets + 1;
  EXPECT_EQ(param_of([&] { deberta_bucket(bad, 0); }), "position_buckets");
  bad = s;
  bad.max_relative_positions = 3;  // mid + 1: ln(M / mid) = 0
  EXPECT_EQ(param_of([&] { DebertaOracle x(bad, w); }), "max_relative_positions");
  EXPECT_EQ(param_of([&] { deberta_bucket(bad, 5); }), "max_relative_positions");
  bad.max_relative_positions = 4;
  EXPECT_EQ(param_of([&] { deberta_bucket(bad, 5); }), "");
  bad = s;
  bad.position_buckets = std::nullopt;
  bad.max_relative_positions = 0;
  EXPECT_EQ(param_of([&] { deberta_bucket(bad, 0); }), "max_relative_positions");
  bad.max_relative_positions = 3;
  bad.clamp = true;  // the clamp needs buckets
  EXPECT_EQ(param_of([&] { deberta_bucket(bad, 0); }), "clamp");
  bad.clamp = false;
  EXPECT_EQ(param_of([&] { deberta_bucket(bad, 0); }), "");
  EXPECT_EQ(param_of([&] { deberta_log_position(bad, 5); }), "position_buckets");  // no log curve
  EXPECT_EQ(param_of([&] { deberta_hf_z(bad, 5); }), "position_buckets");
  bad = s;
  bad.regime = static_cast<DebertaRegime>(7);
  EXPECT_EQ(param_of([&] { DebertaOracle x(bad, w); }), "regime");
  EXPECT_EQ(param_of([&] { deberta_bucket(bad, 0); }), "regime");
  bad = s;
  bad.heads = 0;
  EXPECT_EQ(param_of([&] { DebertaOracle x(bad, DebertaWeights{}); }), "heads");
  bad = s;
  bad.head_dim = 0;
  EXPECT_EQ(param_of([&] { DebertaOracle x(bad, DebertaWeights{}); }), "head_dim");

  // the weights: 2 heads * 8 rows * 2 = 32 values each
  DebertaWeights wb = w;
  wb.pos_key.pop_back();
  EXPECT_EQ(param_of([&] { DebertaOracle x(s, wb); }), "pos_key");
  wb = w;
  wb.pos_query.push_back(0.0);
  EXPECT_EQ(param_of([&] { DebertaOracle x(s, wb); }), "pos_query");
  wb = w;
  wb.pos_key[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(param_of([&] { DebertaOracle x(s, wb); }), "pos_key");
  wb = w;
  wb.pos_query[31] = 2e15;
  EXPECT_EQ(param_of([&] { DebertaOracle x(s, wb); }), "pos_query");
  EXPECT_EQ(param_of([&] { DebertaOracle x(make_spec(4, 8, kHf, false, false, true, 2, 2), w); }), "pos_key");
  EXPECT_EQ(param_of([&] { DebertaOracle x(make_spec(4, 8, kHf, false, true, false, 2, 2), w); }), "pos_query");

  // bits
  EXPECT_EQ(param_of([&] { DebertaOracle x(s, w, 23); }), "bits");
  EXPECT_EQ(param_of([&] { DebertaOracle x(s, w, kMaxBits + 1); }), "bits");
  EXPECT_EQ(param_of([&] { deberta_log_position(s, 10, 0); }), "bits");
  EXPECT_EQ(param_of([&] { DebertaOracle x(s, w, 24); }), "");
}

TEST(DebertaOracleErrors, PositionsAndDistances) {
  const DebertaSpec s = make_spec(4, 8, kHf);
  EXPECT_EQ(param_of([&] { deberta_bucket(s, kMaxRel + 1); }), "rel");
  EXPECT_EQ(param_of([&] { deberta_bucket(s, -kMaxRel - 1); }), "rel");
  EXPECT_EQ(param_of([&] { deberta_bucket(s, std::numeric_limits<std::int64_t>::min()); }), "rel");
  EXPECT_EQ(param_of([&] { deberta_bucket(make_spec(std::nullopt, 3), kMaxRel + 1); }), "rel");
  EXPECT_EQ(param_of([&] { deberta_bucket(s, kMaxRel); }), "");
  EXPECT_EQ(param_of([&] { deberta_bucket(s, -kMaxRel); }), "");
  EXPECT_EQ(param_of([&] { deberta_log_position(s, 0); }), "a");
  EXPECT_EQ(param_of([&] { deberta_log_position(s, -5); }), "a");
  EXPECT_EQ(param_of([&] { deberta_log_position(s, kMaxRel + 1); }), "a");
  EXPECT_EQ(param_of([&] { deberta_log_position(s, 1); }), "");
  EXPECT_EQ(param_of([&] { deberta_log_position(s, kMaxRel); }), "");
  EXPECT_EQ(param_of([&] { deberta_hf_z(s, 2); }), "a");  // = mid
  EXPECT_EQ(param_of([&] { deberta_hf_z(s, -3); }), "a");
  EXPECT_EQ(param_of([&] { deberta_hf_z(s, kMaxRel + 1); }), "a");
  EXPECT_EQ(param_of([&] { deberta_hf_z(s, 3); }), "");
  EXPECT_EQ(param_of([&] { deberta_hf_z(s, kMaxRel); }), "");

  const std::size_t too_long = (std::size_t{1} << 30) + 1;
  EXPECT_EQ(param_of([&] { deberta_relative(0, 0, 0, 1); }), "query_length");
  EXPECT_EQ(param_of([&] { deberta_relative(0, 0, too_long, 1); }), "query_length");
  EXPECT_EQ(param_of([&] { deberta_relative(0, 0, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { deberta_relative(0, 0, 1, too_long); }), "key_length");
  EXPECT_EQ(param_of([&] { deberta_relative(1, 0, 1, 1); }), "i");
  EXPECT_EQ(param_of([&] { deberta_relative(0, 2, 1, 2); }), "j");
  EXPECT_EQ(param_of([&] { deberta_relative(0, 0, too_long - 1, too_long - 1); }), "");
  EXPECT_EQ(param_of([&] { deberta_position_index(s, 3, 0, 3, 1); }), "i");
  EXPECT_EQ(param_of([&] { deberta_position_index(s, 0, 1, 3, 1); }), "j");
  EXPECT_EQ(param_of([&] { deberta_position_index(s, 0, 0, 3, 0); }), "key_length");
}

TEST(DebertaOracleErrors, ScoreArguments) {
  const DebertaSpec s = make_spec(4, 8, kHf, false, true, true, 2, 2);
  const DebertaOracle o(s, naming_weights(s));
  const std::vector<double> q = {1, 2}, k = {3, 4}, three = {1, 2, 3};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(param_of([&] { o.score(1, q, k, 0, 0, 2, 3); }), "");
  EXPECT_EQ(param_of([&] { o.score(2, q, k, 0, 0, 2, 3); }), "h");
  EXPECT_EQ(param_of([&] { o.score(0, three, k, 0, 0, 2, 3); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, {}, k, 0, 0, 2, 3); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, q, three, 0, 0, 2, 3); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, std::vector<double>{nan, 1}, k, 0, 0, 2, 3); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, q, std::vector<double>{1, inf}, 0, 0, 2, 3); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 0, 0, 0, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 0, 0, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 0, 0, 2, 3, nan); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 0, 0, 2, 3, -inf); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 0, 0, 2, 3, 0.0); }), "");
  EXPECT_EQ(param_of([&] { o.score_magnitude(2, q, k, 0, 0, 2, 3); }), "h");
  EXPECT_EQ(param_of([&] { o.score_magnitude(0, q, three, 0, 0, 2, 3); }), "k");
  EXPECT_EQ(param_of([&] { o.score_magnitude(0, std::vector<double>{inf, 0}, k, 0, 0, 2, 3); }), "q");
  EXPECT_EQ(param_of([&] { o.score_magnitude(0, q, k, 0, 0, 2, 3, inf); }), "scale");
  EXPECT_EQ(param_of([&] { o.score_magnitude(0, q, k, 0, 5, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.score_magnitude(0, q, k, 4, 0, 2, 3); }), "i");
}

}  // namespace oracle_deberta
