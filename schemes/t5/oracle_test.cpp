// Self-tests of the T5 relative-attention-bias oracle. The oracle is the ground truth of the t5 property suite, so
// each test here is built to fail if the oracle is wrong:
//   * buckets of both regimes against thresholds derived by hand from t5_spec.hpp for the default geometry
//     (32 buckets, max_distance 128), for every r in [-3000, 3000], and against hand-computed literals at the exact
//     integer points of the log curve (a = 16, 32, 64 -> 10, 12, 14);
//   * the hf regime against HF's real _relative_position_bucket outputs (properties/heldout/data/hf/t5_buckets.json,
//     10 configurations x 6001 relative positions) and against plain C float arithmetic where that is safe;
//   * the distances where the exact and the hf regimes differ, against the lists derived independently (a Python
//     model: the exact regime with Fractions, each hf float32 step rounded from a 300-bit mpmath value, written and
//     run while writing this test, not part of the repository, sharing no code with this oracle; it also reproduced
//     every held-out HF bucket), and exact == hf wherever the real value is >= 1e-4 from an integer;
//   * t5_log_position against exact rationals and an independent Boost evaluation at 4x the precision, and the
//     exact regime's integer decision against the floor of that real value;
//   * the properties of CONVENTIONS.md §2.7 (range, unused bucket nb/2, monotone, b(0) = 0, future keys -> 0);
//   * score against exact small-integer sums and a cancelling sum a naive double sum gets wrong;
//   * every bad argument against the posenc::Error it must raise.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/mp.hpp"
#include "posenc/reference/t5.hpp"
#include "posenc/t5_spec.hpp"
#include "test_util.hpp"

namespace oracle_t5 {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::T5Regime;
using posenc::T5Spec;
using posenc::T5Weights;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

constexpr std::int64_t kMaxR = (std::int64_t{1} << 31) - 1;

T5Spec make_spec(bool bidirectional, std::size_t nb, std::int64_t md, T5Regime regime = T5Regime::exact,
                 std::size_t heads = 1) {
  T5Spec s;
  s.bidirectional = bidirectional;
  s.num_buckets = nb;
  s.max_distance = md;
  s.heads = heads;
  s.regime = regime;
  posenc::validate(s);
  return s;
}

T5Spec with_regime(T5Spec s, T5Regime regime) {
  s.regime = regime;
  return s;
}

// A table whose entry names its bucket and head: table[b][h] = 100 b + h / 4 (exact doubles).
T5Weights naming_table(const T5Spec& s) {
  T5Weights w;
  for (std::size_t b = 0; b < s.num_buckets; ++b)
    for (std::size_t h = 0; h < s.heads; ++h) w.table.push_back(100.0 * double(b) + double(h) / 4.0);
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

struct Side {
  std::int64_t n, me, big_n;
};
Side side(const T5Spec& s) {
  const auto n = static_cast<std::int64_t>(s.bidirectional ? s.num_buckets / 2 : s.num_buckets);
  return {n, n / 2, n - n / 2};
}

// ---- hand derivations (t5_spec.hpp), nb = 32, md = 128 --------------------------------------------------------
//
// Bidirectional: n = 16, me = 8, N = 8, md/me = 16: L(a) = floor(8 ln(a/8) / ln 16) = floor(2 log2(a/8)), i.e. the
// largest t with (a/8)^2 >= 2^t, i.e. a >= 8 * 2^(t/2): t = 1: a >= 11.31 -> 12; t = 2: a >= 16; t = 3: a >= 22.63
// -> 23; t = 4: a >= 32; t = 5: a >= 45.25 -> 46; t = 6: a >= 64; t = 7 (= N - 1, the cap): a >= 90.51 -> 91.
// Exact integers of the curve: a = 8, 16, 32, 64 (t = 0, 2, 4, 6) and 128, 256, ... (beyond the cap).
const std::map<std::int64_t, std::int64_t> kBidiThresholds = {{8, 8},   {12, 9},  {16, 10}, {23, 11},
                                                              {32, 12}, {46, 13}, {64, 14}, {91, 15}};
// Unidirectional: n = 32, me = 16, N = 16, md/me = 8: L(a) = floor(16 log2(a/16) / 3), the largest t with
// a >= 16 * 2^(3t/16): 2^(3t/16) = 1.1388, 1.2968, 1.4768, 1.6818, 1.9152, 2.1810, 2.4837, 2.8284, 3.2210, 3.6680,
// 4.1771, 4.7568, 5.4170, 6.1689, 7.0250 for t = 1..15, times 16: 18.22, 20.75, 23.63, 26.91, 30.64, 34.90, 39.74,
// 45.25, 51.54, 58.69, 66.83, 76.11, 86.67, 98.70, 112.40 -> the next integers below. The only exact integer point
// below the cap is a = 16 (3t/16 is an integer for t = 0 or 16).
const std::map<std::int64_t, std::int64_t> kUniThresholds = {
    {16, 16}, {19, 17}, {21, 18}, {24, 19}, {27, 20}, {31, 21}, {35, 22}, {40, 23},
    {46, 24}, {52, 25}, {59, 26}, {67, 27}, {77, 28}, {87, 29}, {99, 30}, {113, 31}};

// The hand bucket of a distance a on one side: a below me, else the bucket of the largest threshold <= a.
std::int64_t hand_side_bucket(const std::map<std::int64_t, std::int64_t>& thresholds, std::int64_t me, std::int64_t a) {
  if (a < me) return a;
  auto it = thresholds.upper_bound(a);
  --it;
  return it->second;
}

std::int64_t hand_bucket_default(bool bidirectional, std::int64_t r) {
  if (bidirectional) return (r > 0 ? 16 : 0) + hand_side_bucket(kBidiThresholds, 8, r < 0 ? -r : r);
  return r >= 0 ? 0 : hand_side_bucket(kUniThresholds, 16, -r);
}

// ======================================================================================================
// T5OracleGeometry
// ======================================================================================================

TEST(T5OracleGeometry, LiteralRelativePositionMatrices) {
  using M = std::vector<std::vector<std::int64_t>>;
  const M square = {{0, 1, 2}, {-1, 0, 1}, {-2, -1, 0}};  // j - i, Lq = Lk = 3
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(t5_relative_position(i, j, 3, 3), square[i][j]) << i << " " << j;
  const M last_two = {{-3, -2, -1, 0, 1}, {-4, -3, -2, -1, 0}};  // Lq = 2, Lk = 5: q_0 = 3, q_1 = 4
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(t5_relative_position(i, j, 2, 5), last_two[i][j]);
  EXPECT_EQ(t5_relative_position(0, 0, 1, std::size_t(kMaxR)), -(kMaxR - 1));
  EXPECT_EQ(t5_relative_position(0, std::size_t(kMaxR) - 1, 1, std::size_t(kMaxR)), 0);
  EXPECT_EQ(t5_relative_position(0, std::size_t(kMaxR) - 1, std::size_t(kMaxR), std::size_t(kMaxR)), kMaxR - 1);
}

// The bias is the table entry of the bucket of j - q_i: with the naming table, bias / 100 is the bucket.
TEST(T5OracleGeometry, BiasReadsTheTableAtTheBucketOfTheRelativePosition) {
  for (bool bi : {true, false})
    for (T5Regime regime : {T5Regime::exact, T5Regime::hf}) {
      const T5Spec s = make_spec(bi, 32, 128, regime, 3);
      const T5Oracle o(s, naming_table(s));
      for (std::size_t lk : {1u, 7u, 200u})
        for (std::size_t lq : {std::size_t{1}, lk / 2 + 1, lk})
          for (std::size_t i = 0; i < lq; i += (lq > 20 ? 37 : 1))
            for (std::size_t j = 0; j < lk; j += (lk > 20 ? 13 : 1))
              for (std::size_t h = 0; h < 3; ++h) {
                const std::int64_t r = std::int64_t(j) - (std::int64_t(lk) - std::int64_t(lq) + std::int64_t(i));
                const double want = 100.0 * double(hand_bucket_default(bi, r)) + double(h) / 4.0;
                ASSERT_EQ(o.bias(h, i, j, lq, lk), want) << bi << " " << i << " " << j << " " << lq << " " << lk;
              }
      // A decoder step (Lq = 1) reads the last row of the full matrix.
      for (std::size_t j = 0; j < 50; ++j) EXPECT_EQ(o.bias(1, 0, j, 1, 50), o.bias(1, 49, j, 50, 50));
    }
}

// ======================================================================================================
// T5OracleHand: literals and thresholds derived by hand (above)
// ======================================================================================================

TEST(T5OracleHand, DefaultLiterals) {
  // {r, bidirectional bucket, unidirectional bucket}
  const std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> cases = {
      {0, 0, 0},       {-1, 1, 1},      {1, 17, 0},     {-7, 7, 7},      {7, 23, 0},      {-8, 8, 8},
      {8, 24, 0},      {-15, 9, 15},    {15, 25, 0},    {-16, 10, 16},   {16, 26, 0},     {-31, 11, 21},
      {31, 27, 0},     {-32, 12, 21},   {32, 28, 0},    {-64, 14, 26},   {64, 30, 0},     {-127, 15, 31},
      {127, 31, 0},    {-128, 15, 31},  {128, 31, 0},   {-1000, 15, 31}, {1000, 31, 0},   {-kMaxR, 15, 31},
      {kMaxR, 31, 0},  {-11, 8, 11},    {-12, 9, 12},   {-22, 10, 18},   {-23, 11, 18},   {-45, 12, 23},
      {-46, 13, 24},   {-90, 14, 29},   {-91, 15, 29},  {-18, 10, 16},   {-19, 10, 17},   {-112, 15, 30},
      {-113, 15, 31},  {12, 25, 0},     {91, 31, 0},    {90, 30, 0}};
  for (T5Regime regime : {T5Regime::exact, T5Regime::hf}) {
    const T5Spec bi = make_spec(true, 32, 128, regime), uni = make_spec(false, 32, 128, regime);
    for (const auto& [r, b_bi, b_uni] : cases) {
      EXPECT_EQ(t5_bucket(bi, r), b_bi) << "bidirectional r=" << r << " " << posenc::to_string(regime);
      EXPECT_EQ(t5_bucket(uni, r), b_uni) << "unidirectional r=" << r << " " << posenc::to_string(regime);
    }
  }
}

TEST(T5OracleHand, EveryRelativePositionInPlusMinus3000MatchesTheHandThresholds) {
  for (bool bi : {true, false})
    for (T5Regime regime : {T5Regime::exact, T5Regime::hf}) {
      const T5Spec s = make_spec(bi, 32, 128, regime);
      const T5Oracle o(s, naming_table(s));
      int wrong = 0;
      for (std::int64_t r = -3000; r <= 3000; ++r) {
        const std::int64_t want = hand_bucket_default(bi, r);
        const std::int64_t got = t5_bucket(s, r);
        if (got != want && ++wrong <= 10)
          ADD_FAILURE() << "bi=" << bi << " r=" << r << " got " << got << " want " << want;
        if (o.bucket(r) != got) ++wrong;
      }
      EXPECT_EQ(wrong, 0) << "bi=" << bi << " " << posenc::to_string(regime);
    }
}

// Where ln(a/me)/ln(md/me)*N is an exact integer t the bucket is me + t (and one below is me + t - 1 or less):
// derived by hand in each comment from (a/me)^N = (md/me)^t.
TEST(T5OracleHand, ExactIntegerPointsOfTheCurve) {
  struct Case {
    bool bi;
    std::size_t nb;
    std::int64_t md, a, bucket_exact, bucket_hf;
  };
  const Case cases[] = {
      // nb 32, md 128, bidirectional: (a/8)^2 = 2^t at a = 16, 32, 64 (t = 2, 4, 6); hf: z = 2, 4, 6 exactly
      // (ln 16 = 4 ln 2, x = 2, 4: l = RN32(ln 2) * 1, 2, and RN32(3 ln 2) / (4 RN32(ln 2)) rounds to 0.75)
      {true, 32, 128, 16, 10, 10},  {true, 32, 128, 15, 9, 9},    {true, 32, 128, 32, 12, 12},
      {true, 32, 128, 31, 11, 11},  {true, 32, 128, 64, 14, 14},  {true, 32, 128, 63, 13, 13},
      {true, 32, 128, 8, 8, 8},     {true, 32, 128, 7, 7, 7},
      // unidirectional nb 32, md 128: a = 16 -> 16; a = 128 = md -> L = N = 16, capped: 31
      {false, 32, 128, 16, 16, 16}, {false, 32, 128, 128, 31, 31},
      // nb 16, md 64, bidirectional: n = 8, me = 4, N = 4, md/me = 16: L = floor(log2(a/4)): 8 -> 5, 16 -> 6,
      // 32 -> 7 (cap = n - 1 = 7 as well), 7 -> 4, 15 -> 5, 31 -> 6
      {true, 16, 64, 8, 5, 5},      {true, 16, 64, 16, 6, 6},     {true, 16, 64, 32, 7, 7},
      {true, 16, 64, 7, 4, 4},      {true, 16, 64, 15, 5, 5},     {true, 16, 64, 31, 6, 6},
      // unidirectional nb 8, md 16: n = 8, me = 4, N = 4, md/me = 4: L = floor(2 log2(a/4)): 8 -> 4 + 2 = 6,
      // 7 -> 4 + floor(2 * 0.807) = 5, 16 -> cap 7, 5 -> 4 + floor(0.64) = 4, 6 -> 4 + floor(1.17) = 5
      {false, 8, 16, 8, 6, 6},      {false, 8, 16, 7, 5, 5},      {false, 8, 16, 16, 7, 7},
      {false, 8, 16, 5, 4, 4},      {false, 8, 16, 6, 5, 5},
      // nb 34, md 27, bidirectional: n = 17, me = 8, N = 9, md/me = 27/8 = (3/2)^3: a = 12 = 8 (3/2) gives
      // (3/2)^9 = (27/8)^3, t = 3 exactly -> 11; a = 18 = 8 (3/2)^2: t = 6 -> 14. The float32 chain lands one ulp
      // below: z = 3 - 2^-22 and 6 - 2^-21 (independent model) -> hf buckets 10 and 13.
      {true, 34, 27, 12, 11, 10},   {true, 34, 27, 18, 14, 13},   {true, 34, 27, 11, 10, 10},
      {true, 34, 27, 27, 16, 16},
      // unidirectional nb 19, md 25: n = 19, me = 9, N = 10, md/me = (5/3)^2: a = 15 = 9 (5/3): t = 5 -> 14;
      // hf: z = 5 - 2^-21 -> 13.
      {false, 19, 25, 15, 14, 13},  {false, 19, 25, 14, 13, 13},  {false, 19, 25, 25, 18, 18},
      // Points where a double evaluation of the formula lands below the integer (floor(double) would be one bucket
      // low) while the float32 chain lands on or above it:
      // nb 38, md 16, bidirectional: n = 19, me = 9, N = 10, md/me = (4/3)^2: a = 12 = 9 (4/3): t = 5 -> 14
      // (double: 4.9999999999999991; hf z = 5 + 2^-21); a = 11: 10 ln(11/9)/ln(16/9) = 10 (0.20067/0.57536) = 3.49
      // -> 12.
      {true, 38, 16, 12, 14, 14},   {true, 38, 16, 11, 12, 12},
      // nb 72, md 32: n = 36, me = 18, N = 18, md/me = (4/3)^2: a = 24: t = 9 -> 27 (double 8.9999999999999982;
      // hf z = 9 + 2^-20)
      {true, 72, 32, 24, 27, 27},
      // nb 48, md 243: n = 24, me = 12, N = 12, md/me = 81/4 = (9/2)^2: a = 54 = 12 (9/2): t = 6 -> 18 (double
      // 5.9999999999999991; hf z = 6)
      {true, 48, 243, 54, 18, 18},
  };
  for (const Case& c : cases) {
    const T5Spec s = make_spec(c.bi, c.nb, c.md);
    const std::int64_t r = c.bi ? c.a : -c.a;
    const std::int64_t base = c.bi ? std::int64_t(c.nb / 2) : 0;
    EXPECT_EQ(t5_bucket(s, -c.a), c.bucket_exact) << c.nb << " " << c.md << " a=" << c.a;
    EXPECT_EQ(t5_bucket(with_regime(s, T5Regime::hf), -c.a), c.bucket_hf) << c.nb << " " << c.md << " a=" << c.a;
    if (c.bi) {  // the positive side: the same plus n
      EXPECT_EQ(t5_bucket(s, r), base + c.bucket_exact);
      EXPECT_EQ(t5_bucket(with_regime(s, T5Regime::hf), r), base + c.bucket_hf);
    }
  }
  // the hf z at those points, exactly (binary32 numbers)
  EXPECT_EQ(t5_hf_z(make_spec(true, 32, 128), 16), 2.0);
  EXPECT_EQ(t5_hf_z(make_spec(true, 32, 128), 32), 4.0);
  EXPECT_EQ(t5_hf_z(make_spec(true, 32, 128), 64), 6.0);
  EXPECT_EQ(t5_hf_z(make_spec(true, 34, 27), 12), 3.0 - 0x1p-22);
  EXPECT_EQ(t5_hf_z(make_spec(true, 34, 27), 18), 6.0 - 0x1p-21);
  EXPECT_EQ(t5_hf_z(make_spec(false, 19, 25), 15), 5.0 - 0x1p-21);
  EXPECT_EQ(t5_hf_z(make_spec(true, 34, 27), 8), 0.0);
  EXPECT_EQ(t5_hf_z(make_spec(true, 38, 16), 12), 5.0 + 0x1p-21);
  EXPECT_EQ(t5_hf_z(make_spec(true, 72, 32), 24), 9.0 + 0x1p-20);
  EXPECT_EQ(t5_hf_z(make_spec(true, 48, 243), 54), 6.0);
}

// ======================================================================================================
// T5OracleHf: HF's own outputs and plain C float arithmetic
// ======================================================================================================

TEST(T5OracleHf, ReproducesEveryHeldOutHfBucket) {
  const std::string path = std::string(POSENC_SOURCE_DIR) + "/properties/heldout/data/hf/t5_buckets.json";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  const nlohmann::json data = nlohmann::json::parse(in);
  ASSERT_EQ(data.at("relative_position").get<std::string>(), "key - query");
  const std::vector<std::int64_t> rel = data.at("relative").get<std::vector<std::int64_t>>();
  ASSERT_EQ(rel.size(), 6001u);
  ASSERT_EQ(data.at("buckets").size(), 10u);
  std::size_t checked = 0;
  for (const auto& [key, values] : data.at("buckets").items()) {
    // "bi{0,1}_nb{N}_md{M}"
    const bool bi = key.substr(0, 3) == "bi1";
    const std::size_t nb_at = key.find("_nb") + 3, md_at = key.find("_md") + 3;
    const std::size_t nb = std::stoul(key.substr(nb_at, key.find('_', nb_at) - nb_at));
    const std::int64_t md = std::stoll(key.substr(md_at));
    const T5Spec s = make_spec(bi, nb, md, T5Regime::hf);
    const std::vector<std::int64_t> want = values.get<std::vector<std::int64_t>>();
    ASSERT_EQ(want.size(), rel.size()) << key;
    int wrong = 0;
    for (std::size_t c = 0; c < rel.size(); ++c) {
      const std::int64_t got = t5_bucket(s, rel[c]);
      if (got != want[c] && ++wrong <= 10)
        ADD_FAILURE() << key << " r=" << rel[c] << " got " << got << " HF " << want[c];
      ++checked;
    }
    EXPECT_EQ(wrong, 0) << key;
  }
  EXPECT_EQ(checked, 60010u);
}


// The hf chain in C float arithmetic (IEEE binary32 / and * are correctly rounded; the logs through double).
TEST(T5OracleHf, ZAgainstPlainFloatArithmetic) {
  const std::vector<std::tuple<bool, std::size_t, std::int64_t>> specs = {
      {true, 32, 128}, {false, 32, 128}, {true, 34, 27}, {false, 19, 25}, {true, 48, 100}, {false, 255, 5000},
      {true, 6, 1000}};
  std::size_t compared = 0, skipped = 0;
  for (const auto& [bi, nb, md] : specs) {
    const T5Spec s = make_spec(bi, nb, md, T5Regime::hf);
    const Side sd = side(s);
    float dd = 0;
    const bool d_safe = to_float_safely(std::log(static_cast<double>(md) / static_cast<double>(sd.me)), &dd);
    ASSERT_TRUE(d_safe);
    std::vector<std::int64_t> as;
    for (std::int64_t a = sd.me; a < sd.me + 600; ++a) as.push_back(a);
    for (std::int64_t a : {std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1, (std::int64_t{1} << 24) + 3, kMaxR,
                           std::int64_t{123456789}})
      as.push_back(a);
    // large distances, where relative_position.float() rounds (a > 2^24): a deterministic spread up to 2^31 - 1
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    for (int c = 0; c < 300; ++c) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const std::uint64_t span = std::uint64_t(kMaxR - (std::int64_t{1} << 24));
      as.push_back((std::int64_t{1} << 24) + static_cast<std::int64_t>((state >> 33) % span));
    }
    for (std::int64_t a : as) {
      volatile float A = static_cast<float>(a);
      volatile float x = A / static_cast<float>(sd.me);
      float l = 0;
      if (!to_float_safely(std::log(static_cast<double>(x)), &l)) {
        ++skipped;
        continue;
      }
      volatile float y = l / dd;
      volatile float z = y * static_cast<float>(sd.big_n);
      ASSERT_EQ(t5_hf_z(s, a), static_cast<double>(z)) << nb << " " << md << " a=" << a;
      const std::int64_t level = std::min<std::int64_t>(static_cast<std::int64_t>(z), sd.big_n - 1);
      ASSERT_EQ(t5_bucket(s, -a), sd.me + level) << nb << " " << md << " a=" << a;
      ++compared;
    }
  }
  EXPECT_GT(compared, 3 * skipped + 3000);
}

// ======================================================================================================
// T5OracleRegimes: where the exact and the hf regimes differ
// ======================================================================================================

// Every a in [me, 4 md] where the exact and the hf bucket (on the a side, bucket in the side) differ.
std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> regime_differences(bool bi, std::size_t nb,
                                                                                      std::int64_t md) {
  const T5Spec ex = make_spec(bi, nb, md, T5Regime::exact), hf = make_spec(bi, nb, md, T5Regime::hf);
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> out;
  for (std::int64_t a = 0; a <= 4 * md; ++a) {
    const std::int64_t e = t5_bucket(ex, -a), h = t5_bucket(hf, -a);
    if (e != h) out.emplace_back(a, e, h);
    if (bi) {
      // the positive side differs exactly where the negative side does
      const std::int64_t ep = t5_bucket(ex, a), hp = t5_bucket(hf, a);
      EXPECT_EQ(ep != hp, e != h) << nb << " " << md << " a=" << a;
    }
  }
  return out;
}

std::string show_list(const std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>& v) {
  std::string s = "[";
  for (const auto& [a, e, h] : v)
    s += "(a=" + std::to_string(a) + " exact=" + std::to_string(e) + " hf=" + std::to_string(h) + ")";
  return s + "]";
}

TEST(T5OracleRegimes, DifferencesInZeroToFourMaxDistance) {
  using L = std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>;
  struct Case {
    bool bi;
    std::size_t nb;
    std::int64_t md;
    L want;
  };
  // The lists of the independent Python model (header comment). The first twelve (nb, md in (32, 128), (32, 256),
  // (64, 128), (128, 1024), (8, 16), (16, 64), both directions) agree everywhere: at every exact integer point of
  // their curves (a/me and md/me powers of two) the float32 chain lands exactly on the integer. The next six have
  // md/me a perfect power of a rational that is not a power of two; there the chain lands one ulp below (hf one
  // bucket lower), or, for (31, 532) where v = 11.99999953 is not an integer, the float32 rounding lifts z to 12.
  // The last three have integer points where the chain lands on or above the integer (no difference).
  const Case cases[] = {
      {true, 32, 128, {}},
      {false, 32, 128, {}},
      {true, 32, 256, {}},
      {false, 32, 256, {}},
      {true, 64, 128, {}},
      {false, 64, 128, {}},
      {true, 128, 1024, {}},
      {false, 128, 1024, {}},
      {true, 8, 16, {}},
      {false, 8, 16, {}},
      {true, 16, 64, {}},
      {false, 16, 64, {}},
      {true, 34, 27, {{12, 11, 10}, {18, 14, 13}}},
      {false, 17, 27, {{12, 11, 10}, {18, 14, 13}}},
      {false, 19, 25, {{15, 14, 13}}},
      {false, 31, 532, {{218, 26, 27}}},
      {true, 96, 81, {{36, 32, 31}, {54, 40, 39}}},
      {false, 48, 81, {{36, 32, 31}, {54, 40, 39}}},
      {true, 38, 16, {}},
      {true, 72, 32, {}},
      {true, 48, 243, {}},
  };
  for (const Case& c : cases) {
    const L got = regime_differences(c.bi, c.nb, c.md);
    std::cout << "[ T5 regimes ] bi=" << c.bi << " nb=" << c.nb << " md=" << c.md << " exact != hf at "
              << show_list(got) << "\n";
    EXPECT_EQ(got, c.want) << "bi=" << c.bi << " nb=" << c.nb << " md=" << c.md << ": " << show_list(got);
  }
}

// exact == hf wherever the real value v is at least 1e-4 from an integer (the float32 chain is far more accurate
// than that), and the exact bucket is me + min(floor(v), N - 1) with v from t5_log_position at 256 bits.
TEST(T5OracleRegimes, AgreeAwayFromIntegersAndExactIsTheFloorOfTheRealValue) {
  const std::vector<std::tuple<bool, std::size_t, std::int64_t>> specs = {
      {true, 32, 128},  {false, 32, 128}, {true, 32, 256},  {false, 32, 256}, {true, 64, 128},
      {false, 64, 128}, {true, 128, 1024}, {false, 128, 1024}, {true, 8, 16}, {false, 8, 16},
      {true, 16, 64},   {false, 16, 64},  {true, 34, 27},   {false, 31, 532}, {true, 48, 100}, {false, 255, 1000}};
  std::size_t far = 0;
  for (const auto& [bi, nb, md] : specs) {
    const T5Spec ex = make_spec(bi, nb, md, T5Regime::exact), hf = make_spec(bi, nb, md, T5Regime::hf);
    const Side sd = side(ex);
    for (std::int64_t a = sd.me; a <= 4 * md; ++a) {
      const Real v = t5_log_position(ex, a);
      Real fl = make_real(256);
      mpfr_floor(raw(fl), raw(v));
      const double vd = to_d(v), floor_v = to_d(fl);
      const std::int64_t want = sd.me + std::min<std::int64_t>(static_cast<std::int64_t>(floor_v), sd.big_n - 1);
      ASSERT_EQ(t5_bucket(ex, -a), want) << nb << " " << md << " a=" << a << " v=" << show(v);
      if (std::fabs(vd - std::nearbyint(vd)) >= 1e-4) {
        ++far;
        ASSERT_EQ(t5_bucket(hf, -a), t5_bucket(ex, -a)) << nb << " " << md << " a=" << a << " v=" << show(v);
      }
    }
  }
  EXPECT_GT(far, 10000u);
}

// ======================================================================================================
// T5OracleLogPosition: the real value
// ======================================================================================================

TEST(T5OracleLogPosition, RationalValuesAreExact) {
  const T5Spec bi = make_spec(true, 32, 128), uni = make_spec(false, 32, 128);
  for (unsigned bits : {24u, 53u, 256u, 1000u}) {
    // bidirectional: 8 log16(a/8) = 2 log2(a/8)
    EXPECT_TRUE(holds(t5_log_position(bi, 8, bits), 0.0));
    EXPECT_TRUE(holds(t5_log_position(bi, 16, bits), 2.0));
    EXPECT_TRUE(holds(t5_log_position(bi, 32, bits), 4.0));
    EXPECT_TRUE(holds(t5_log_position(bi, 64, bits), 6.0));
    EXPECT_TRUE(holds(t5_log_position(bi, 128, bits), 8.0));
    EXPECT_TRUE(holds(t5_log_position(bi, std::int64_t{1} << 30, bits), 54.0));  // 2 * 27
    // unidirectional: 16 log8(a/16) = (16/3) log2(a/16): a = 32 -> 16/3, a = 64 -> 32/3 (not binary numbers)
    for (const auto& [a, num] : {std::pair<std::int64_t, long>{32, 16}, {64, 32}, {1024, 96}}) {
      Real want = make_real(bits);
      Real n = make_real(std::int64_t(num), 64);
      mpfr_div_ui(raw(want), raw(n), 3, MPFR_RNDN);
      const Real got = t5_log_position(uni, a, bits);
      EXPECT_TRUE(same(got, want)) << a << " " << bits << " " << show(got);
      EXPECT_EQ(bits_of(got), bits);
    }
    EXPECT_TRUE(holds(t5_log_position(uni, 128, bits), 16.0));
    // nb 34, md 27: 9 ln(a/8)/ln(27/8): a = 12 -> 3, 18 -> 6, 27 -> 9
    const T5Spec odd = make_spec(true, 34, 27);
    EXPECT_TRUE(holds(t5_log_position(odd, 12, bits), 3.0));
    EXPECT_TRUE(holds(t5_log_position(odd, 18, bits), 6.0));
    EXPECT_TRUE(holds(t5_log_position(odd, 27, bits), 9.0));
    // 16 ln(a/16)/ln(8) with a/16 = 2^(1/...)? never; but nb 8 md 16 (me 2, md/me = 8): a = 4 -> 2/3
    const T5Spec small = make_spec(true, 8, 16);  // n = 4, me = 2, N = 2
    Real two_thirds = make_real(bits);
    mpfr_set_ui(raw(two_thirds), 2, MPFR_RNDN);
    mpfr_div_ui(raw(two_thirds), raw(two_thirds), 3, MPFR_RNDN);
    EXPECT_TRUE(same(t5_log_position(small, 4, bits), two_thirds));
  }
}

// The Ziv loop against Boost's expression templates at 4x the precision (log, not log1p), then rounded.
TEST(T5OracleLogPosition, IrrationalValuesAgainstBoostAtFourTimesThePrecision) {
  const std::vector<std::tuple<bool, std::size_t, std::int64_t>> specs = {
      {true, 32, 128}, {false, 32, 128}, {true, 34, 27}, {false, 31, 532}, {true, 65536, 32769}, {false, 3, 2}};
  for (const auto& [bi, nb, md] : specs) {
    const T5Spec s = make_spec(bi, nb, md);
    const Side sd = side(s);
    std::vector<std::int64_t> as = {sd.me + 1, sd.me + 2, 2 * sd.me + 1, md - 1, md + 1, 3 * md + 7, kMaxR};
    for (std::int64_t a : as) {
      if (a <= sd.me) continue;
      for (unsigned bits : {24u, 53u, 113u, 256u}) {
        const Real got = t5_log_position(s, a, bits);
        Real want;
        {
          PrecisionGuard guard(4 * bits + 64);
          want = Real(double(sd.big_n)) * boost::multiprecision::log(Real(double(a)) / Real(double(sd.me))) /
                 boost::multiprecision::log(Real(double(md)) / Real(double(sd.me)));
        }
        EXPECT_TRUE(same(got, with_bits(want, bits))) << nb << " " << md << " a=" << a << " " << show(got);
        EXPECT_EQ(bits_of(got), bits);
      }
    }
  }
}

// ======================================================================================================
// T5OracleProperties: CONVENTIONS.md §2.7
// ======================================================================================================

TEST(T5OracleProperties, RangeUnusedBucketMonotoneFutureKeys) {
  const std::vector<std::tuple<bool, std::size_t, std::int64_t>> specs = {
      {true, 32, 128}, {false, 32, 128}, {true, 4, 2},   {false, 2, 2},     {true, 5, 3},     {false, 3, 2},
      {true, 33, 100}, {false, 33, 100}, {true, 34, 27}, {false, 19, 25},   {true, 96, 81},   {false, 255, 1000},
      {true, 256, 65}, {true, 64, 4097}};
  for (const auto& [bi, nb, md] : specs)
    for (T5Regime regime : {T5Regime::exact, T5Regime::hf}) {
      const T5Spec s = make_spec(bi, nb, md, regime);
      const Side sd = side(s);
      const auto nbi = static_cast<std::int64_t>(nb);
      EXPECT_EQ(t5_bucket(s, 0), 0);
      std::vector<std::int64_t> as;
      for (std::int64_t a = 0; a <= 2 * md + 10; ++a) as.push_back(a);
      for (std::int64_t a : {std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1, std::int64_t{1} << 30, kMaxR - 1,
                             kMaxR})
        as.push_back(a);
      std::int64_t prev_neg = -1, prev_pos = -1;
      for (std::int64_t a : as) {
        const std::int64_t neg = t5_bucket(s, -a), pos = t5_bucket(s, a);
        ASSERT_GE(neg, 0);
        ASSERT_LT(neg, nbi);
        ASSERT_GE(pos, 0);
        ASSERT_LT(pos, nbi);
        ASSERT_GE(neg, prev_neg) << "monotone (r <= 0) " << nb << " " << md << " a=" << a;
        if (a < sd.me) {
          ASSERT_EQ(neg, a);
        }
        if (a >= md) {
          ASSERT_EQ(neg, sd.n - 1) << nb << " " << md << " a=" << a;
        }
        if (bi) {
          ASSERT_LT(neg, sd.n);  // r <= 0 stays below n
          if (a > 0) {
            ASSERT_GE(pos, sd.n + 1) << "bucket n is never produced";
            ASSERT_GE(pos, prev_pos);
            ASSERT_EQ(pos, sd.n + neg) << "the positive side mirrors the negative one";
          }
        } else {
          ASSERT_EQ(pos, 0) << "future keys -> bucket 0";
        }
        prev_neg = neg;
        if (a > 0) prev_pos = pos;
      }
      if (bi) {
        // bucket n is never used; the default geometry uses the other 31 of 32 (md close to me can skip log
        // buckets: nb 256, md 65 jumps from 64 + 0 to the cap; an odd nb also leaves bucket nb - 1 out)
        std::vector<bool> used(nb, false);
        for (std::int64_t r = -2 * md - 10; r <= 2 * md + 10; ++r) used[std::size_t(t5_bucket(s, r))] = true;
        EXPECT_FALSE(used[std::size_t(sd.n)]);
        std::size_t count = 0;
        for (bool u : used) count += u;
        EXPECT_LE(count, 2 * std::size_t(sd.n) - 1) << nb << " " << md;
        if (nb == 32 && md == 128) {
          EXPECT_EQ(count, 31u);
        }
      }
    }
}

// ======================================================================================================
// T5OracleScore
// ======================================================================================================

TEST(T5OracleScore, ExactSumsRoundedOnce) {
  const T5Spec s = make_spec(true, 32, 128, T5Regime::exact, 2);
  const T5Oracle o(s, naming_table(s));
  const std::vector<double> q = {1.0, 2.0, 3.0}, k = {4.0, 5.0, 6.0};
  // <q, k> = 32; Lq = Lk = 40: i = 0, j = 39: r = 39 -> bucket 16 + 12 = 28; head 1: bias 2800.25
  for (unsigned bits : {24u, 53u, 256u}) {
    const Real sc = o.score(1, q, k, 0, 39, 40, 40);
    EXPECT_TRUE(holds(sc, 32.0 + 2800.25)) << show(sc);
    EXPECT_EQ(bits_of(sc), bits == 256u ? 256u : bits_of(sc));
  }
  EXPECT_TRUE(holds(o.score(0, q, k, 5, 5, 40, 40), 32.0));          // r = 0: bucket 0, bias 0
  EXPECT_TRUE(holds(o.score(0, q, k, 5, 0, 40, 40), 32.0 + 500.0));  // r = -5: bucket 5
  // no 1/sqrt(d): a longer vector of ones gives its length
  const std::vector<double> ones(64, 1.0);
  EXPECT_TRUE(holds(o.score(0, ones, ones, 0, 0, 1, 1), 64.0));
  // exact summation: 1e16 + 1 - 1e16 + 0.5 = 1.5 (a left-to-right double sum gives 0.5)
  const T5Spec s1 = make_spec(false, 32, 128, T5Regime::hf, 1);
  T5Weights w1;
  w1.table.assign(32, 0.5);
  const T5Oracle o1(s1, w1, 53);
  const std::vector<double> qc = {1e16, 1.0, -1e16}, kc = {1.0, 1.0, 1.0};
  const Real sc = o1.score(0, qc, kc, 0, 0, 1, 1);
  EXPECT_TRUE(holds(sc, 1.5)) << show(sc);
  EXPECT_EQ(bits_of(sc), 53u);
  // one rounding at 24 bits: 2^24 + 1 + bias 0.5 = 16777217.5 -> 16777218 (nearest), not 2^24 (two roundings)
  const T5Oracle o24(s1, w1, 24);
  const std::vector<double> qa = {16777216.0, 1.0}, ka = {1.0, 1.0};
  EXPECT_TRUE(holds(o24.score(0, qa, ka, 0, 0, 1, 1), 16777218.0));
  // the bias enters with all its 53 bits: q = k = 0 gives the table entry itself
  T5Weights wt;
  wt.table.assign(32, 0.1);
  const T5Oracle ot(s1, wt, 256);
  const std::vector<double> zero = {0.0};
  EXPECT_TRUE(holds(ot.score(0, zero, zero, 0, 0, 1, 1), 0.1));
  EXPECT_EQ(ot.bias(0, 0, 0, 1, 1), 0.1);
  // subnormal products are exact: 2^-1074 * 2^-1074 = 2^-2148 with a zero bias; with the bias 0.5 the sum
  // 0.5 + 2^-2148 rounds to 0.5 at 256 bits
  T5Weights w0;
  w0.table.assign(32, 0.0);
  const T5Oracle o0(s1, w0, 256), o256(s1, w1, 256);
  const std::vector<double> qs = {0x1p-1074}, ks = {0x1p-1074};
  EXPECT_TRUE(same(o0.score(0, qs, ks, 0, 0, 1, 1), pow2(-2148)));
  EXPECT_TRUE(holds(o256.score(0, qs, ks, 0, 0, 1, 1), 0.5));
}

// ======================================================================================================
// T5OracleMp: precision bookkeeping, threads
// ======================================================================================================

TEST(T5OracleMp, OracleDoesNotDependOnBoostDefaultPrecision) {
  const T5Spec s = make_spec(true, 32, 128, T5Regime::exact, 2);
  const std::vector<double> q = {0.1, -0.7, 3.0}, k = {1.5, 0.3, -2.25};
  const T5Weights w = naming_table(s);
  expect_independent_of_default_precision([&] {
    const T5Oracle o(s, w);
    return std::vector<Real>{t5_log_position(s, 1000), o.score(1, q, k, 2, 1000, 7, 5000)};
  });
  EXPECT_EQ(bits_of(t5_log_position(s, 1000)), kDefaultBits);
  EXPECT_EQ(bits_of(T5Oracle(s, w).score(1, q, k, 2, 1000, 7, 5000)), kDefaultBits);
}

TEST(T5OracleMp, ConcurrentCallsGiveTheSerialResults) {
  const T5Spec ex = make_spec(false, 34, 27), hf = make_spec(false, 34, 27, T5Regime::hf);
  expect_concurrent_calls_match_serial([&] {
    std::vector<std::int64_t> out;
    for (std::int64_t r = -200; r <= 10; ++r) {
      out.push_back(t5_bucket(ex, r));
      out.push_back(t5_bucket(hf, r));
    }
    return out;
  });
}

// ======================================================================================================
// T5OracleErrors: every bad argument names its parameter
// ======================================================================================================

TEST(T5OracleErrors, EveryBadArgumentNamesItsParameter) {
  const T5Spec s = make_spec(true, 32, 128, T5Regime::exact, 2);
  const T5Weights w = naming_table(s);
  const T5Oracle o(s, w);
  const std::vector<double> q = {1.0, 2.0}, k = {3.0, 4.0};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();

  // the spec
  T5Spec bad = s;
  bad.num_buckets = 3;  // bidirectional needs >= 4
  EXPECT_EQ(param_of([&] { T5Oracle x(bad, w); }), "num_buckets");
  EXPECT_EQ(param_of([&] { t5_bucket(bad, 0); }), "num_buckets");
  EXPECT_EQ(param_of([&] { t5_log_position(bad, 10); }), "num_buckets");
  EXPECT_EQ(param_of([&] { t5_hf_z(bad, 10); }), "num_buckets");
  bad = s;
  bad.bidirectional = false;
  bad.num_buckets = 1;
  EXPECT_EQ(param_of([&] { t5_bucket(bad, 0); }), "num_buckets");
  bad = s;
  bad.num_buckets = posenc::kT5MaxBuckets + 1;
  EXPECT_EQ(param_of([&] { t5_bucket(bad, 0); }), "num_buckets");
  bad = s;
  bad.max_distance = 8;  // = max_exact
  EXPECT_EQ(param_of([&] { T5Oracle x(bad, w); }), "max_distance");
  EXPECT_EQ(param_of([&] { t5_bucket(bad, -100); }), "max_distance");
  bad.max_distance = std::int64_t{1} << 31;
  EXPECT_EQ(param_of([&] { t5_bucket(bad, -100); }), "max_distance");
  bad.max_distance = 9;
  EXPECT_EQ(param_of([&] { t5_bucket(bad, -100); }), "");
  bad = s;
  bad.heads = 0;
  EXPECT_EQ(param_of([&] { T5Oracle x(bad, T5Weights{}); }), "heads");
  bad = s;
  bad.regime = static_cast<T5Regime>(7);
  EXPECT_EQ(param_of([&] { T5Oracle x(bad, w); }), "regime");
  EXPECT_EQ(param_of([&] { t5_bucket(bad, 0); }), "regime");

  // the weights
  EXPECT_EQ(param_of([&] { T5Oracle x(s, T5Weights{std::vector<double>(63, 0.0)}); }), "table");
  EXPECT_EQ(param_of([&] { T5Oracle x(s, T5Weights{std::vector<double>(65, 0.0)}); }), "table");
  EXPECT_EQ(param_of([&] { T5Oracle x(s, T5Weights{}); }), "table");
  T5Weights wb = w;
  wb.table[17] = nan;
  EXPECT_EQ(param_of([&] { T5Oracle x(s, wb); }), "table");
  wb.table[17] = -inf;
  EXPECT_EQ(param_of([&] { T5Oracle x(s, wb); }), "table");
  wb.table[17] = 1e31;
  EXPECT_EQ(param_of([&] { T5Oracle x(s, wb); }), "table");
  wb.table[17] = -1e30;
  EXPECT_EQ(param_of([&] { T5Oracle x(s, wb); }), "");

  // bits
  EXPECT_EQ(param_of([&] { T5Oracle x(s, w, 23); }), "bits");
  EXPECT_EQ(param_of([&] { T5Oracle x(s, w, kMaxBits + 1); }), "bits");
  EXPECT_EQ(param_of([&] { t5_log_position(s, 10, 0); }), "bits");

  // r, a
  EXPECT_EQ(param_of([&] { t5_bucket(s, kMaxR + 1); }), "r");
  EXPECT_EQ(param_of([&] { t5_bucket(s, -kMaxR - 1); }), "r");
  EXPECT_EQ(param_of([&] { o.bucket(std::numeric_limits<std::int64_t>::min()); }), "r");
  EXPECT_EQ(param_of([&] { o.bucket(std::numeric_limits<std::int64_t>::max()); }), "r");
  EXPECT_EQ(param_of([&] { t5_bucket(s, kMaxR); }), "");
  EXPECT_EQ(param_of([&] { t5_bucket(s, -kMaxR); }), "");
  EXPECT_EQ(param_of([&] { t5_log_position(s, 7); }), "a");  // below max_exact = 8
  EXPECT_EQ(param_of([&] { t5_log_position(s, -8); }), "a");
  EXPECT_EQ(param_of([&] { t5_log_position(s, kMaxR + 1); }), "a");
  EXPECT_EQ(param_of([&] { t5_hf_z(s, 7); }), "a");
  EXPECT_EQ(param_of([&] { t5_hf_z(s, kMaxR + 1); }), "a");
  EXPECT_EQ(param_of([&] { t5_log_position(s, 8); }), "");
  EXPECT_EQ(param_of([&] { t5_hf_z(s, kMaxR); }), "");

  // h, i, j, lengths
  EXPECT_EQ(param_of([&] { o.bias(2, 0, 0, 1, 1); }), "h");
  EXPECT_EQ(param_of([&] { o.score(2, q, k, 0, 0, 1, 1); }), "h");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, std::size_t{1} << 31); }), "key_length");
  EXPECT_EQ(param_of([&] { t5_relative_position(0, 0, 1, std::size_t{1} << 31); }), "key_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 0, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 4, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { t5_relative_position(0, 0, 4, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { t5_relative_position(1, 0, 1, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { t5_relative_position(0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 0, 3, 2, 3); }), "j");

  // the vectors
  EXPECT_EQ(param_of([&] { o.score(0, std::vector<double>{}, std::vector<double>{}, 0, 0, 1, 1); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, q, std::vector<double>{1.0}, 0, 0, 1, 1); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, std::vector<double>{1.0, nan}, k, 0, 0, 1, 1); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, q, std::vector<double>{-inf, 1.0}, 0, 0, 1, 1); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, q, k, 0, 0, 1, 1); }), "");
  EXPECT_EQ(param_of([&] { o.bias(1, 0, 2, 1, 3); }), "");
}

}  // namespace oracle_t5
