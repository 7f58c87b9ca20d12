// Self-tests of the ALiBi oracle. The oracle is the ground truth of the alibi property suite, so each test here is
// built to fail if the oracle is wrong: slopes against literal values derived by hand from alibi_spec.hpp and an
// independent MPFR/Boost transcription; the non-power-of-two rule against the recursive form of get_slopes; the
// float32 regimes against numbers the real code produced (properties/heldout/data/hf/alibi_*.json, bit for bit)
// and against plain C float/double arithmetic; the bias matrices against literal integer matrices; correct
// rounding (P vs 2P, a 4P Boost evaluation); every bad argument against the posenc::Error it must raise.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "posenc/alibi_spec.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/alibi.hpp"
#include "posenc/reference/mp.hpp"
#include "test_util.hpp"

#ifndef POSENC_SOURCE_DIR
#error "POSENC_SOURCE_DIR must name the source tree (the held-out vectors are read from it)"
#endif

namespace oracle_alibi {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::AlibiRegime;
using posenc::AlibiSpec;
using posenc::AlibiVariant;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

constexpr AlibiVariant kVariants[] = {AlibiVariant::relative, AlibiVariant::key, AlibiVariant::key_shifted,
                                      AlibiVariant::key_counted, AlibiVariant::symmetric};
constexpr AlibiRegime kEmulated[] = {AlibiRegime::ofirpress, AlibiRegime::bloom, AlibiRegime::mpt};

AlibiSpec make_spec(std::size_t heads, AlibiVariant variant = AlibiVariant::relative,
                    AlibiRegime regime = AlibiRegime::exact, double bias_max = 8.0) {
  AlibiSpec s;
  s.heads = heads;
  s.variant = variant;
  s.regime = regime;
  s.bias_max = bias_max;
  posenc::validate(s);
  return s;
}

bool is_pow2(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }
std::size_t floor_pow2(std::size_t n) {  // written out again, not posenc::alibi_power_of_two_floor
  std::size_t c = 1;
  while (2 * c <= n) c *= 2;
  return c;
}

// |a - b| <= 2^e
bool within_pow2(const Real& a, const Real& b, long e) { return abs_below_pow2(sub(a, b), e); }

// The exact slope transcribed again with Boost's expression templates at `bits` (PrecisionGuard; another MPFR path
// than the oracle's: pow of a Boost Real exponent built from a division).
Real boost_slope(std::size_t n, std::size_t h, double b, unsigned bits) {
  PrecisionGuard guard(bits);
  const std::size_t c = floor_pow2(n);
  Real num = Real(b) * Real(h < c ? (h + 1) : (2 * (h - c) + 1));
  Real den = Real(h < c ? c : 2 * c);
  Real e = -num / den;
  Real m = boost::multiprecision::pow(Real(2), e);
  return with_bits(m, bits);
}

// The variant's integer written out again from alibi_spec.hpp, for the property tests.
std::int64_t expected_x(AlibiVariant v, std::int64_t i, std::int64_t j, std::int64_t lq, std::int64_t lk,
                        const std::vector<std::uint8_t>& mask) {
  const std::int64_t qi = lk - lq + i;
  switch (v) {
    case AlibiVariant::relative: return j <= qi ? j - qi : 0;
    case AlibiVariant::key: return j;
    case AlibiVariant::key_shifted: return j + 1 - lk;
    case AlibiVariant::key_counted: {
      if (mask.empty()) return j;
      std::int64_t cum = 0;
      for (std::int64_t t = 0; t <= j; ++t) cum += mask[static_cast<std::size_t>(t)];
      return (cum - 1) * mask[static_cast<std::size_t>(j)];
    }
    case AlibiVariant::symmetric: return qi >= j ? j - qi : qi - j;
  }
  return 0;
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

nlohmann::json load_heldout(const std::string& name) {
  const std::string path = std::string(POSENC_SOURCE_DIR) + "/properties/heldout/data/hf/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

// ---- generators -------------------------------------------------------------------------------------

rc::Gen<std::size_t> genHeads(std::size_t max) {
  return rc::gen::exec([=] {
    const int kind = *rc::gen::inRange(0, 3);
    if (kind == 0) return *rc::gen::inRange<std::size_t>(1, std::min<std::size_t>(max, 33));
    if (kind == 1) return *rc::gen::element<std::size_t>(1, 2, 3, 5, 6, 7, 8, 12, 16, 20, 32, 40, 64, 71, 96, 128, 160);
    return *rc::gen::inRange<std::size_t>(1, max + 1);
  });
}

rc::Gen<double> genBiasMax() {
  return rc::gen::exec([] {
    const int kind = *rc::gen::inRange(0, 3);
    if (kind == 0) return 8.0;
    if (kind == 1) return *rc::gen::element(1.0, 4.0, 16.0, 0.5, 12.0, 3.0);
    return *rc::gen::inRange(1, 1 << 20) / 65536.0;  // (0, 16)
  });
}

rc::Gen<AlibiSpec> genSpec(std::size_t max_heads, bool emulated_allowed) {
  return rc::gen::exec([=] {
    AlibiSpec s;
    s.heads = *rc::gen::map(genHeads(max_heads), [=](std::size_t n) { return std::min(n, max_heads); });
    s.variant = *rc::gen::elementOf(std::vector<AlibiVariant>(std::begin(kVariants), std::end(kVariants)));
    s.regime = emulated_allowed ? *rc::gen::element(AlibiRegime::exact, AlibiRegime::ofirpress, AlibiRegime::bloom,
                                                    AlibiRegime::mpt)
                                : AlibiRegime::exact;
    s.bias_max = (s.regime == AlibiRegime::exact || s.regime == AlibiRegime::mpt) ? *genBiasMax() : 8.0;
    posenc::validate(s);
    return s;
  });
}

// A call site: lengths (small, or long enough that RN32(x) rounds), i, j, and a mask (empty or 0/1).
struct Site {
  std::size_t lq, lk, i, j;
  std::vector<std::uint8_t> mask;
};

rc::Gen<Site> genSite(bool long_ok) {
  return rc::gen::exec([=] {
    Site s{};
    const int kind = long_ok ? *rc::gen::inRange(0, 3) : 0;
    if (kind == 0) {
      s.lk = *rc::gen::inRange<std::size_t>(1, 40);
    } else if (kind == 1) {
      s.lk = *rc::gen::element<std::size_t>(1, 2, 4096, (std::size_t{1} << 24) + 3, (std::size_t{1} << 31) - 1);
    } else {
      s.lk = *rc::gen::inRange<std::size_t>(1, std::size_t{1} << 31);
    }
    s.lq = *rc::gen::element<std::size_t>(1, 1, s.lk, std::min<std::size_t>(s.lk, 3),
                                          *rc::gen::inRange<std::size_t>(1, s.lk + 1));
    s.i = *rc::gen::inRange<std::size_t>(0, s.lq);
    s.j = *rc::gen::element<std::size_t>(0, s.lk - 1, *rc::gen::inRange<std::size_t>(0, s.lk),
                                         std::min(s.lk - 1, s.lk - s.lq + s.i));
    if (s.lk <= 64 && *rc::gen::arbitrary<bool>())
      s.mask = *rc::gen::container<std::vector<std::uint8_t>>(s.lk, rc::gen::inRange<std::uint8_t>(0, 2));
    return s;
  });
}

// ======================================================================================================
// AlibiOracleMp: precision bookkeeping, threads
// ======================================================================================================

TEST(AlibiOracleMp, ValuesHaveExactlyTheRequestedPrecision) {
  const std::vector<double> q = {1.0, -2.0, 0.5}, k = {0.25, 3.0, 7.0};
  for (AlibiRegime regime : {AlibiRegime::exact, AlibiRegime::ofirpress, AlibiRegime::bloom, AlibiRegime::mpt}) {
    const AlibiSpec s = make_spec(12, AlibiVariant::relative, regime);
    for (unsigned bits : {24u, 53u, 100u, 255u, 256u, 257u, 512u}) {
      const AlibiOracle o(s, bits);
      EXPECT_EQ(o.bits(), bits);
      EXPECT_EQ(bits_of(alibi_slope(s, 9, bits)), bits);
      EXPECT_EQ(bits_of(o.slope(9)), bits);
      EXPECT_EQ(bits_of(o.bias(9, 1, 0, 3, 5)), bits);
      EXPECT_EQ(bits_of(o.bias(9, 0, 4, 3, 5)), bits);  // a zero bias too
      EXPECT_EQ(bits_of(o.exact_bias(9, 1, 0, 3, 5)), bits);
      EXPECT_EQ(bits_of(o.score(9, 1, 0, 3, 5, q, k, 0.125)), bits);
      EXPECT_EQ(bits_of(o.score(0, 1, 0, 3, 5, q, k, 0.125)), bits);
      if (regime != AlibiRegime::exact) {
        EXPECT_EQ(bits_of(alibi_emulated_slope(s, 9, bits)), bits);
      }
    }
  }
}

TEST(AlibiOracleMp, OracleDoesNotDependOnBoostDefaultPrecision) {
  const AlibiSpec s = make_spec(12, AlibiVariant::symmetric);
  const std::vector<double> q = {0.1, -0.7, 3.0}, k = {1.5, 0.3, -2.25};
  expect_independent_of_default_precision([&] {
    const AlibiOracle o(s);
    return std::vector<Real>{o.slope(9), o.bias(9, 2, 1000, 7, 5000), o.score(9, 2, 1000, 7, 5000, q, k, 0.5),
                             alibi_slope(s, 10)};
  });
}

TEST(AlibiOracleMp, ConcurrentCallsGiveTheSerialResults) {
  std::vector<AlibiOracle> oracles;
  for (AlibiRegime regime : {AlibiRegime::exact, AlibiRegime::ofirpress, AlibiRegime::bloom, AlibiRegime::mpt})
    oracles.emplace_back(make_spec(24, AlibiVariant::relative, regime));
  const std::vector<double> q = {1.0, -0.5, 0.25, 3.0}, k = {-7.0, 0.125, 2.0, 1.5};
  expect_concurrent_calls_match_serial([&] {
    std::vector<Real> out;
    for (const AlibiOracle& o : oracles)
      for (std::size_t h = 0; h < 24; h += 5) {
        out.push_back(o.slope(h));
        out.push_back(o.bias(h, 3, 1, 9, 100));
        out.push_back(o.exact_bias(h, 8, 0, 9, (std::size_t{1} << 31) - 1));
        out.push_back(o.score(h, 3, 1, 9, 100, q, k, 0.5));
        out.push_back(alibi_slope(o.spec(), h));
      }
    return out;
  });
}

// ======================================================================================================
// AlibiOracleSlopes: literal values and properties of the exact slopes
// ======================================================================================================

// Derived by hand from alibi_spec.hpp: c = 2^floor(log2 n); h < c: 2^(-8(h+1)/c); h = c+j: 2^(-8(2j+1)/(2c)).
TEST(AlibiOracleSlopes, LiteralPowerOfTwoValues) {
  struct Case {
    std::size_t n;
    std::vector<long> log2_slopes;
  };
  const Case cases[] = {
      {1, {-8}},                              // c = 1: 2^-8
      {2, {-4, -8}},                          // c = 2: 2^(-4(h+1))
      {3, {-4, -8, -2}},                      // c = 2, then 2^(-8/4): [1/16, 1/256, 1/4]
      {4, {-2, -4, -6, -8}},
      {5, {-2, -4, -6, -8, -1}},              // c = 4, then 2^(-8/8)
      {6, {-2, -4, -6, -8, -1, -3}},          // then 2^(-8*1/8), 2^(-8*3/8)
      {7, {-2, -4, -6, -8, -1, -3, -5}},
      {8, {-1, -2, -3, -4, -5, -6, -7, -8}},  // c = 8: 2^-(h+1)
  };
  for (const Case& cs : cases) {
    const AlibiSpec s = make_spec(cs.n);
    const AlibiOracle o(s);
    ASSERT_EQ(cs.log2_slopes.size(), cs.n);
    for (std::size_t h = 0; h < cs.n; ++h) {
      const double want = std::ldexp(1.0, static_cast<int>(cs.log2_slopes[h]));
      EXPECT_TRUE(holds(alibi_slope(s, h), want)) << "n=" << cs.n << " h=" << h << " " << show(alibi_slope(s, h));
      EXPECT_TRUE(holds(o.slope(h), want)) << "n=" << cs.n << " h=" << h;
      EXPECT_TRUE(holds(alibi_slope(s, h, 24), want));
    }
  }
  // b = 16 (MPT's alibi_bias_max), n = 4: 2^(-4(h+1)); b = 1, n = 1: 2^-1
  for (std::size_t h = 0; h < 4; ++h)
    EXPECT_TRUE(holds(alibi_slope(make_spec(4, AlibiVariant::key_shifted, AlibiRegime::mpt, 16.0), h),
                      std::ldexp(1.0, -4 * static_cast<int>(h + 1))));
  EXPECT_TRUE(holds(alibi_slope(make_spec(1, AlibiVariant::key, AlibiRegime::exact, 1.0), 0), 0.5));
}

// n = 12: c = 8, heads 0..7 are 2^-1 .. 2^-8; heads 8..11 are 2^(-8(2j+1)/16) = 2^-(j + 1/2):
// 2^-0.5, 2^-1.5 = 2^-1 2^-0.5, 2^-2.5, 2^-3.5. 2^-0.5 = 1/sqrt(2) from MPFR's rec_sqrt (not exp2).
TEST(AlibiOracleSlopes, TwelveHeadsAndHalfIntegerExponents) {
  const AlibiSpec s = make_spec(12);
  EXPECT_TRUE(holds(alibi_slope(s, 0), 0.5));
  for (std::size_t h = 0; h < 8; ++h) EXPECT_TRUE(holds(alibi_slope(s, h), std::ldexp(1.0, -static_cast<int>(h + 1))));
  for (unsigned bits : {24u, 53u, 100u, 256u, 1000u}) {
    for (std::size_t j = 0; j < 4; ++j) {
      Real want = make_real(bits);
      mpfr_rec_sqrt(raw(want), raw(make_real(2, 64)), MPFR_RNDN);  // correctly rounded 2^-0.5
      mpfr_div_2ui(raw(want), raw(want), static_cast<unsigned long>(j), MPFR_RNDN);  // exact
      const Real got = alibi_slope(s, 8 + j, bits);
      EXPECT_TRUE(same(got, want)) << "bits=" << bits << " j=" << j << " " << show(got) << " vs " << show(want);
    }
  }
  // 2^-0.5 to 40 digits, and its float32 (the BLOOM/HF value 0.7071067690849304)
  EXPECT_TRUE(within_pow2(alibi_slope(s, 8), parse_real("0.7071067811865475244008443621048490392848", 400), -130));
  EXPECT_EQ(round_to_float(alibi_slope(s, 8)), 0.7071067690849304f);
}

// Every n <= 128 (b = 8): positive, < 1, the first head 2^(-8/c), geometric within each power-of-two list,
// the non-power-of-two rule in its recursive form (get_slopes(c) + get_slopes(2c)[0::2][:n-c]), not sorted.
TEST(AlibiOracleSlopes, EveryHeadCountUpTo128) {
  for (std::size_t n = 1; n <= 128; ++n) {
    const AlibiSpec s = make_spec(n);
    const std::size_t c = floor_pow2(n);
    std::vector<Real> m;
    for (std::size_t h = 0; h < n; ++h) m.push_back(alibi_slope(s, h));
    for (std::size_t h = 0; h < n; ++h) {
      EXPECT_GT(mpfr_sgn(raw(m[h])), 0) << n << " " << h;
      EXPECT_LT(mpfr_cmp_ui(raw(m[h]), 1), 0) << n << " " << h;
    }
    // m_0 = 2^(-8/c) (= 2^(-8/n) for a power of two), against Boost's pow
    EXPECT_TRUE(same(m[0], with_bits(boost_slope(c, 0, 8.0, 512), 256))) << n;
    if (is_pow2(n)) {
      // geometric: m_{h+1} = m_h m_0 (to the rounding of three values)
      for (std::size_t h = 0; h + 1 < n; ++h) {
        Real prod = make_real(1024);
        mpfr_mul(raw(prod), raw(m[h]), raw(m[0]), MPFR_RNDN);
        EXPECT_TRUE(within_pow2(m[h + 1], prod, mpfr_get_exp(raw(m[h + 1])) - 254)) << n << " " << h;
        EXPECT_LT(mpfr_cmp(raw(m[h + 1]), raw(m[h])), 0) << "power of two sequences decrease: " << n;
      }
    } else {
      const AlibiSpec sc = make_spec(c), s2c = make_spec(2 * c);
      for (std::size_t h = 0; h < c; ++h) EXPECT_TRUE(same(m[h], alibi_slope(sc, h))) << n << " " << h;
      for (std::size_t j = 0; c + j < n; ++j)
        EXPECT_TRUE(same(m[c + j], alibi_slope(s2c, 2 * j))) << n << " " << j;
      // not sorted: the first appended slope 2^(-4/c) exceeds the last of the c list, 2^-8
      EXPECT_GT(mpfr_cmp(raw(m[c]), raw(m[c - 1])), 0) << n;
      EXPECT_FALSE(std::is_sorted(m.begin(), m.end(), [](const Real& a, const Real& b) {
        return mpfr_cmp(raw(a), raw(b)) > 0;
      })) << n;
    }
  }
}

// Random n up to 4096 and b: the closed form against the Boost transcription (correctly rounded: equal), the
// recursive form of the non-power-of-two rule, and the ratio of consecutive heads.
RC_GTEST_PROP(AlibiOracleSlopes, ClosedFormMatchesIndependentTranscription, ()) {
  const std::size_t n = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(1, 4097),
                                        rc::gen::element<std::size_t>(1, 3, 128, 129, 1024, 4095, 4096, 65536));
  const double b = *genBiasMax();
  const AlibiSpec s = make_spec(n, AlibiVariant::key, AlibiRegime::exact, b);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, n);
  const unsigned bits = *rc::gen::element(24u, 53u, 113u, 256u, 300u);
  const Real got = alibi_slope(s, h, bits);
  RC_ASSERT(mpfr_sgn(raw(got)) > 0);
  RC_ASSERT(mpfr_cmp_ui(raw(got), 1) < 0);
  // the Boost value at 4 bits + 64, rounded to bits: equal unless within 2^-(3 bits) of a midpoint
  RC_ASSERT(same(got, with_bits(boost_slope(n, h, b, 4 * bits + 64), bits)));
  const std::size_t c = floor_pow2(n);
  if (h >= c) RC_ASSERT(same(got, alibi_slope(make_spec(2 * c, AlibiVariant::key, AlibiRegime::exact, b), 2 * (h - c), bits)));
  else RC_ASSERT(same(got, alibi_slope(make_spec(c, AlibiVariant::key, AlibiRegime::exact, b), h, bits)));
  if (h + 1 < c) {
    // m_{h+1} / m_h = 2^(-b/c)
    Real ratio = make_real(512);
    mpfr_div(raw(ratio), raw(alibi_slope(s, h + 1, 500)), raw(alibi_slope(s, h, 500)), MPFR_RNDN);
    RC_ASSERT(within_pow2(ratio, boost_slope(c, 0, b, 600), -490));
  }
}

// ======================================================================================================
// AlibiOracleEmulated: the float32 regimes
// ======================================================================================================

// BLOOM build_alibi_tensor's float32 slopes for 1..32, 40, ..., 128 heads (HF transformers 5.17.0, torch 2.11
// CPU), read as build_alibi_tensor(ones(1, 5), n)[:, 0, 1] = slope * 1. Bit for bit, except where torch's float32
// pow is not correctly rounded (alibi_spec.hpp: "Real Python/torch pow is not correctly rounded"): base^k with
// (c, k) = (32, 15) and (128, 91) lies 0.479 and 0.496 ulp below the oracle's RN32, i.e. next to a midpoint, and
// torch returned the other neighbour. Those heads (n = 32, 40, 48: h = 14; n = 128: h = 90) are listed here: each
// must be one float32 ulp below the oracle, next to the midpoint, and no other head may differ.
TEST(AlibiOracleEmulated, BloomSlopesMatchTheHeldOutValuesBitForBit) {
  const nlohmann::json data = load_heldout("alibi_bloom.json");
  const std::vector<std::pair<std::size_t, std::size_t>> torch_pow_off = {{32, 14}, {40, 14}, {48, 14}, {128, 90}};
  std::size_t checked = 0, off = 0;
  for (const auto& [key, values] : data.at("slopes_f32_by_heads").items()) {
    const std::size_t n = std::stoul(key);
    ASSERT_EQ(values.size(), n);
    const AlibiSpec s = make_spec(n, AlibiVariant::key_counted, AlibiRegime::bloom);
    const AlibiOracle o(s, 64);
    const std::vector<std::uint8_t> ones(5, 1);
    for (std::size_t h = 0; h < n; ++h) {
      const double want = values[h].get<double>();
      const Real got = alibi_emulated_slope(s, h);
      ++checked;
      if (std::find(torch_pow_off.begin(), torch_pow_off.end(), std::make_pair(n, h)) != torch_pow_off.end()) {
        ++off;
        const float g = round_to_float(got), w = static_cast<float>(want);
        EXPECT_EQ(static_cast<double>(w), want);
        EXPECT_EQ(std::nextafter(g, 0.0f), w) << "n=" << n << " h=" << h << " one ulp below the oracle";
        // the exact power (the oracle's steps without the last rounding) lies within 0.05 ulp of the midpoint
        const std::size_t c = floor_pow2(n);
        Real base = make_real(64), exact = make_real(300);
        mpfr_set_flt(raw(base), round_to_float(alibi_emulated_slope(make_spec(c, AlibiVariant::key_counted,
                                                                              AlibiRegime::bloom), 0)),
                     MPFR_RNDN);
        mpfr_pow_ui(raw(exact), raw(base), static_cast<unsigned long>(h + 1), MPFR_RNDN);
        Real mid = make_real(64);
        mpfr_set_d(raw(mid), (double(g) + double(w)) / 2, MPFR_RNDN);  // exact
        EXPECT_TRUE(within_pow2(exact, mid, mpfr_get_exp(raw(mid)) - 24 - 4)) << show(exact);
        continue;
      }
      EXPECT_TRUE(holds(got, want)) << "n=" << n << " h=" << h << " " << show(got) << " want " << want;
      EXPECT_TRUE(holds(o.slope(h), want)) << n << " " << h;
      EXPECT_TRUE(holds(o.bias(h, 0, 1, 1, 5), want)) << n << " " << h;
      EXPECT_TRUE(holds(o.bias(h, 4, 1, 5, 5, ones), want)) << n << " " << h;
    }
  }
  EXPECT_EQ(checked, 1234u);  // 1 + ... + 32 + 40 + 48 + 64 + 66 + 72 + 80 + 96 + 112 + 128
  EXPECT_EQ(off, torch_pow_off.size());
}

// BLOOM with left/middle padding: mask [0,0,1,1,1,0,1,1], 6 heads: positions count the real keys only.
TEST(AlibiOracleEmulated, BloomPaddedBiasMatchesTheHeldOutValues) {
  const nlohmann::json data = load_heldout("alibi_bloom.json");
  std::vector<std::uint8_t> mask;
  for (const auto& v : data.at("padded_mask").at(0)) mask.push_back(static_cast<std::uint8_t>(v.get<int>()));
  ASSERT_EQ(mask, (std::vector<std::uint8_t>{0, 0, 1, 1, 1, 0, 1, 1}));
  const auto& rows = data.at("padded_bias_6_heads");
  ASSERT_EQ(rows.size(), 6u);
  const AlibiOracle o(make_spec(6, AlibiVariant::key_counted, AlibiRegime::bloom));
  const std::int64_t counted[] = {0, 0, 0, 1, 2, 0, 3, 4};  // (cumsum - 1) * mask, by hand
  for (std::size_t h = 0; h < 6; ++h)
    for (std::size_t j = 0; j < 8; ++j) {
      const double want = rows[h][j].get<double>();
      for (std::size_t lq : {std::size_t{1}, std::size_t{8}})
        for (std::size_t i = 0; i < lq; ++i)
          EXPECT_TRUE(holds(o.bias(h, i, j, lq, 8, mask), want)) << h << " " << j << " " << show(o.bias(h, i, j, lq, 8, mask));
      EXPECT_EQ(alibi_multiplier(o.spec(), 0, j, 1, 8, mask), counted[j]);
    }
}

// MPT build_mpt_alibi_tensor(n, 6, alibi_bias_max=8)[:, 0, :]: slope * (j - 5), the same row for every query.
TEST(AlibiOracleEmulated, MptBiasMatchesTheHeldOutValuesBitForBit) {
  const nlohmann::json data = load_heldout("alibi_mpt.json");
  ASSERT_EQ(data.at("sequence_length").get<int>(), 6);
  ASSERT_EQ(data.at("alibi_bias_max").get<double>(), 8.0);
  std::size_t checked = 0;
  for (const auto& [key, rows] : data.at("bias_by_heads").items()) {
    const std::size_t n = std::stoul(key);
    ASSERT_EQ(rows.size(), n);
    const AlibiOracle o(make_spec(n, AlibiVariant::key_shifted, AlibiRegime::mpt));
    for (std::size_t h = 0; h < n; ++h) {
      ASSERT_EQ(rows[h].size(), 6u);
      for (std::size_t j = 0; j < 6; ++j) {
        const double want = rows[h][j].get<double>();
        for (std::size_t i : {std::size_t{0}, std::size_t{5}})
          EXPECT_TRUE(holds(o.bias(h, i, j, 6, 6), want)) << "n=" << n << " h=" << h << " j=" << j << " "
                                                          << show(o.bias(h, i, j, 6, 6)) << " want " << want;
        ++checked;
      }
      // column j holds slope * (j - 5): column 4 is -slope
      EXPECT_TRUE(holds(o.slope(h), -rows[h][4].get<double>())) << n << " " << h;
    }
  }
  EXPECT_GT(checked, 4000u);
}

// ofirpress/gpt-neox: Python float64 get_slopes then float32. Python's arithmetic is C's double arithmetic, so the
// same expression in C (glibc pow) must give the same float32 slope; and for every n <= 128 the result equals
// RN32 of the exact slope (no double-rounding or pow-error case occurs; checked, recorded here so that a change
// shows). The same C transcription for MPT's float32 steps (glibc exp2f).
TEST(AlibiOracleEmulated, OfirpressAndMptMatchPlainCArithmetic) {
  int ofirpress_vs_rn32_exact = 0;
  for (std::size_t n = 1; n <= 128; ++n) {
    const std::size_t c = floor_pow2(n);
    const AlibiSpec so = make_spec(n, AlibiVariant::key, AlibiRegime::ofirpress);
    const AlibiSpec sm = make_spec(n, AlibiVariant::key_shifted, AlibiRegime::mpt);
    for (std::size_t h = 0; h < n; ++h) {
      const std::size_t list = h < c ? c : 2 * c;
      const double e = h < c ? double(h) : 2.0 * double(h - c);
      const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(double(list)) - 3)));
      const float of = static_cast<float>(start * std::pow(start, e));
      EXPECT_EQ(round_to_float(alibi_emulated_slope(so, h)), of) << n << " " << h;
      if (round_to_float(alibi_emulated_slope(so, h)) != round_to_float(alibi_slope(so, h))) ++ofirpress_vs_rn32_exact;

      const std::size_t p = is_pow2(n) ? n : 2 * c;
      const std::size_t t = p == n ? h + 1 : (h < c ? 2 * (h + 1) : 2 * (h - c) + 1);
      const float base = static_cast<float>(t) * static_cast<float>(8.0 / double(p));
      const float mp = 1.0f / std::pow(2.0f, base);
      EXPECT_EQ(round_to_float(alibi_emulated_slope(sm, h)), mp) << n << " " << h;
    }
  }
  EXPECT_EQ(ofirpress_vs_rn32_exact, 0);
}

// ofirpress's slope depends on (c', e) only, and every n <= 65536 takes its heads from the power-of-two lists
// c' <= 65536. Over all 131071 of them the float64 steps never cross a float32 rounding boundary: the ofirpress
// slope is RN32 of the exact slope for every accepted head count (so its RN64 steps are invisible in float32).
TEST(AlibiOracleEmulated, OfirpressIsRn32OfTheExactSlopeForEveryHeadCount) {
  std::size_t differ = 0, checked = 0;
  for (std::size_t c = 1; c <= posenc::kAlibiMaxHeads; c *= 2) {
    const AlibiSpec s = make_spec(c, AlibiVariant::key, AlibiRegime::ofirpress);
    for (std::size_t h = 0; h < c; ++h, ++checked)
      if (round_to_float(alibi_emulated_slope(s, h, 24)) != round_to_float(alibi_slope(s, h, 128))) ++differ;
  }
  EXPECT_EQ(checked, 131071u);
  EXPECT_EQ(differ, 0u);
}

// The regimes' float32 slopes against the exact slope: within a few float32 ulps (BLOOM's power accumulates the
// rounding of its base: up to 6.8e-7 relative at n = 127), and the exact regime has none.
TEST(AlibiOracleEmulated, EmulatedSlopesAreCloseToTheExactOnes) {
  for (AlibiRegime regime : kEmulated) {
    double worst = 0;
    for (std::size_t n = 1; n <= 160; ++n) {
      const AlibiSpec s = make_spec(n, AlibiVariant::key, regime);
      for (std::size_t h = 0; h < n; ++h) {
        const Real e = alibi_slope(s, h), f = alibi_emulated_slope(s, h);
        EXPECT_TRUE(same(f, round_to_float_precision(f))) << "a float32 number";
        const double rel = std::fabs(to_d(sub(f, e)) / to_d(e));
        worst = std::max(worst, rel);
      }
    }
    // ofirpress = RN32(exact) (n <= 160): 2^-24; mpt rounds twice (2^e, then 1/.): 2^-23; bloom's power: 7e-7
    const double limit = regime == AlibiRegime::bloom ? 7e-7 : regime == AlibiRegime::mpt ? 0x1p-23 : 0x1p-24;
    EXPECT_LE(worst, limit) << posenc::to_string(regime);
    if (regime == AlibiRegime::bloom) {
      EXPECT_GT(worst, 4.8e-7) << "BLOOM's float32 power error, recorded (CONVENTIONS.md §2.13 says <= 4.8e-7)";
    }
  }
  EXPECT_EQ(param_of([] { alibi_emulated_slope(make_spec(3), 0); }), "regime");
}

// MPT at the top of the accepted alibi_bias_max (b <= 128): e_t = 128 makes 2^e_t overflow float32 (its largest
// finite value is (2 - 2^-23) 2^127), so that slope is 1/inf = +0; e_t in (126, 128) gives subnormal slopes,
// rounded on the 2^-149 grid. The exact slopes are still 2^(-b (h+1)/c).
TEST(AlibiOracleEmulated, MptAtLargeBiasMaxOverflowsAndUnderflowsLikeFloat32) {
  const AlibiSpec s1 = make_spec(1, AlibiVariant::key_shifted, AlibiRegime::mpt, 128.0);
  EXPECT_TRUE(holds(alibi_emulated_slope(s1, 0), 0.0));  // P = 1, e_1 = 128
  EXPECT_TRUE(holds(alibi_slope(s1, 0), 0x1p-128));
  const AlibiSpec s2 = make_spec(2, AlibiVariant::key_shifted, AlibiRegime::mpt, 128.0);
  EXPECT_TRUE(holds(alibi_emulated_slope(s2, 0), 0x1p-64));  // e_1 = 64
  EXPECT_TRUE(holds(alibi_emulated_slope(s2, 1), 0.0));      // e_2 = 128
  const AlibiOracle o(s2);
  EXPECT_TRUE(holds(o.bias(1, 0, 0, 1, 3), 0.0));
  EXPECT_TRUE(holds(o.bias(0, 0, 0, 1, 3), -0x1p-63));
  EXPECT_TRUE(holds(o.exact_bias(1, 0, 0, 1, 3), -0x1p-127));
  // b = 127: 2^-127 is a float32 subnormal, exact; b = 127.5: RN32(2^127.5), then 1/that on the subnormal grid
  EXPECT_TRUE(holds(alibi_emulated_slope(make_spec(1, AlibiVariant::key, AlibiRegime::mpt, 127.0), 0), 0x1p-127));
  Real p = make_real(200);
  mpfr_set_d(raw(p), 127.5, MPFR_RNDN);
  mpfr_exp2(raw(p), raw(p), MPFR_RNDN);
  volatile float pf = round_to_float(p);  // a normal float32: 2^127.5 < 2^128 (1 - 2^-25)
  volatile float want = 1.0f / pf;        // IEEE division: correctly rounded, subnormal result
  ASSERT_LT(static_cast<float>(want), std::numeric_limits<float>::min());
  EXPECT_TRUE(holds(alibi_emulated_slope(make_spec(1, AlibiVariant::key, AlibiRegime::mpt, 127.5), 0), want));
}

// The emulated bias is RN32(RN32(x) * slope32): IEEE binary32 multiplication is correctly rounded, so plain C
// float arithmetic computes it (x86-64 SSE, FLT_EVAL_METHOD 0, no fast-math).
RC_GTEST_PROP(AlibiOracleEmulated, BiasIsFloatTimesFloat, ()) {
  AlibiSpec s = *genSpec(160, false);
  s.regime = *rc::gen::element(AlibiRegime::ofirpress, AlibiRegime::bloom, AlibiRegime::mpt);
  if (s.regime != AlibiRegime::mpt) s.bias_max = 8.0;
  posenc::validate(s);
  const Site site = *genSite(true);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, s.heads);
  const AlibiOracle o(s, *rc::gen::element(24u, 64u, 256u));
  const float slope = round_to_float(o.slope(h));
  RC_ASSERT(same(o.slope(h), round_to_float_precision(o.slope(h))));
  const std::int64_t x = expected_x(s.variant, std::int64_t(site.i), std::int64_t(site.j), std::int64_t(site.lq),
                                    std::int64_t(site.lk), site.mask);
  RC_ASSERT(alibi_multiplier(s, site.i, site.j, site.lq, site.lk, site.mask) == x);
  volatile float xf = static_cast<float>(x);
  volatile float want = xf * slope;
  const Real got = o.bias(h, site.i, site.j, site.lq, site.lk, site.mask);
  RC_LOG() << posenc::describe(s) << " h=" << h << " x=" << x << " got " << show(got) << " want " << want << "\n";
  RC_ASSERT(holds(got, static_cast<double>(want)));
}

// ======================================================================================================
// AlibiOracleBias: the five matrices
// ======================================================================================================

// n = 1 (m = 1/256), Lq = Lk = 3, the integer matrices x (bias = x / 256), written out by hand.
TEST(AlibiOracleBias, LiteralMatricesOfEveryVariant) {
  using M = std::vector<std::vector<int>>;
  const std::pair<AlibiVariant, M> cases[] = {
      {AlibiVariant::relative, {{0, 0, 0}, {-1, 0, 0}, {-2, -1, 0}}},
      {AlibiVariant::key, {{0, 1, 2}, {0, 1, 2}, {0, 1, 2}}},
      {AlibiVariant::key_shifted, {{-2, -1, 0}, {-2, -1, 0}, {-2, -1, 0}}},
      {AlibiVariant::key_counted, {{0, 1, 2}, {0, 1, 2}, {0, 1, 2}}},
      {AlibiVariant::symmetric, {{0, -1, -2}, {-1, 0, -1}, {-2, -1, 0}}},
  };
  for (const auto& [variant, x] : cases)
    for (AlibiRegime regime : {AlibiRegime::exact, AlibiRegime::ofirpress, AlibiRegime::bloom, AlibiRegime::mpt}) {
      const AlibiOracle o(make_spec(1, variant, regime));
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 3; ++j) {
          EXPECT_TRUE(holds(o.bias(0, i, j, 3, 3), x[i][j] / 256.0))
              << posenc::to_string(variant) << " " << posenc::to_string(regime) << " " << i << " " << j;
          EXPECT_TRUE(holds(o.exact_bias(0, i, j, 3, 3), x[i][j] / 256.0));
          EXPECT_EQ(alibi_multiplier(o.spec(), i, j, 3, 3), x[i][j]);
        }
    }
}

// Lq < Lk: the queries are the LAST Lq keys (q_i = Lk - Lq + i). Lq = 2, Lk = 5: q_0 = 3, q_1 = 4.
TEST(AlibiOracleBias, QueriesAreTheLastKeys) {
  using M = std::vector<std::vector<std::int64_t>>;
  const std::pair<AlibiVariant, M> cases[] = {
      {AlibiVariant::relative, {{-3, -2, -1, 0, 0}, {-4, -3, -2, -1, 0}}},
      {AlibiVariant::key, {{0, 1, 2, 3, 4}, {0, 1, 2, 3, 4}}},
      {AlibiVariant::key_shifted, {{-4, -3, -2, -1, 0}, {-4, -3, -2, -1, 0}}},
      {AlibiVariant::key_counted, {{0, 1, 2, 3, 4}, {0, 1, 2, 3, 4}}},
      {AlibiVariant::symmetric, {{-3, -2, -1, 0, -1}, {-4, -3, -2, -1, 0}}},
  };
  for (const auto& [variant, x] : cases) {
    const AlibiSpec s = make_spec(6, variant);  // heads 0..3: 2^-2 .. 2^-8, 4: 2^-1, 5: 2^-3
    const AlibiOracle o(s);
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t j = 0; j < 5; ++j) {
        EXPECT_EQ(alibi_multiplier(s, i, j, 2, 5), x[i][j]) << posenc::to_string(variant) << " " << i << " " << j;
        EXPECT_TRUE(holds(o.bias(5, i, j, 2, 5), double(x[i][j]) / 8.0)) << posenc::to_string(variant);
        EXPECT_TRUE(holds(o.bias(1, i, j, 2, 5), double(x[i][j]) / 16.0));
      }
    // a decoder step: Lq = 1 is the last row of the full matrix
    for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(alibi_multiplier(s, 0, j, 1, 5), x[1][j]);
  }
}

// BLOOM's key_counted: positions counted over the real keys, padding gets 0 (cumsum rule, by hand).
TEST(AlibiOracleBias, KeyCountedFollowsTheCumsumRule) {
  const AlibiSpec s = make_spec(3, AlibiVariant::key_counted);
  const std::vector<std::uint8_t> mask = {1, 0, 1, 1, 0, 1};  // cumsum 1 1 2 3 3 4; -1: 0 0 1 2 2 3; * mask
  const std::int64_t want[] = {0, 0, 1, 2, 0, 3};
  const std::vector<std::uint8_t> left = {0, 0, 0, 1, 1};  // left padding: 0 0 0 0 1
  const std::int64_t want_left[] = {0, 0, 0, 0, 1};
  const std::vector<std::uint8_t> none(4, 0);
  const AlibiOracle o(s);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 6; ++j) {
      EXPECT_EQ(alibi_multiplier(s, i, j, 6, 6, mask), want[j]);
      EXPECT_TRUE(holds(o.bias(2, i, j, 6, 6, mask), double(want[j]) / 4.0));  // head 2 of 3: 2^-2
    }
  for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(alibi_multiplier(s, 0, j, 1, 5, left), want_left[j]);
  for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(alibi_multiplier(s, 0, j, 2, 4, none), 0);
  // the mask is used by key_counted only
  for (AlibiVariant v : {AlibiVariant::relative, AlibiVariant::key, AlibiVariant::key_shifted, AlibiVariant::symmetric})
    for (std::size_t j = 0; j < 6; ++j)
      EXPECT_EQ(alibi_multiplier(make_spec(3, v), 2, j, 6, 6, mask), alibi_multiplier(make_spec(3, v), 2, j, 6, 6));
}

// Every variant: bias = m_h * x with x from the definition (written out again here), and the exact bias
// correctly rounded: equal to a 4P Boost/MPFR evaluation rounded to P, and P vs 2P agree to half an ulp.
RC_GTEST_PROP(AlibiOracleBias, ExactBiasIsTheSlopeTimesTheIntegerCorrectlyRounded, ()) {
  const AlibiSpec s = *genSpec(160, true);
  const Site site = *genSite(true);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, s.heads);
  const unsigned bits = *rc::gen::element(24u, 53u, 100u, 256u);
  const AlibiOracle o(s, bits), o2(s, 2 * bits);
  const std::int64_t x = expected_x(s.variant, std::int64_t(site.i), std::int64_t(site.j), std::int64_t(site.lq),
                                    std::int64_t(site.lk), site.mask);
  RC_ASSERT(alibi_multiplier(s, site.i, site.j, site.lq, site.lk, site.mask) == x);
  const Real got = o.exact_bias(h, site.i, site.j, site.lq, site.lk, site.mask);
  const Real got2 = o2.exact_bias(h, site.i, site.j, site.lq, site.lk, site.mask);
  if (s.regime == AlibiRegime::exact) RC_ASSERT(same(got, o.bias(h, site.i, site.j, site.lq, site.lk, site.mask)));
  Real want = make_real(4 * bits + 64);
  mpfr_mul_si(raw(want), raw(boost_slope(s.heads, h, s.bias_max, 4 * bits + 64)), static_cast<long>(x), MPFR_RNDN);
  RC_LOG() << posenc::describe(s) << " h=" << h << " x=" << x << " got " << show(got) << " want " << show(want) << "\n";
  RC_ASSERT(same(got, with_bits(want, bits)));
  if (x == 0) {
    RC_ASSERT(mpfr_zero_p(raw(got)) != 0);
  } else {
    RC_ASSERT(within_pow2(got, got2, mpfr_get_exp(raw(got2)) - long(bits)));  // <= ulp_P/2 + ulp_2P/2 < ulp_P
    RC_ASSERT((mpfr_sgn(raw(got)) > 0) == (x > 0));
  }
}

// Softmax equivalence under the causal mask (j <= q_i): relative, key, key_shifted and key_counted without a mask
// differ per row by a constant: key - relative = m q_i, key_shifted - relative = m (q_i - (Lk - 1)).
RC_GTEST_PROP(AlibiOracleBias, CausalVariantsDifferByARowConstant, ()) {
  const std::size_t n = *genHeads(64);
  const Site site = *genSite(true);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, n);
  const std::size_t qi = site.lk - site.lq + site.i;
  const std::size_t j = std::min(site.j, qi);  // causal
  const AlibiOracle rel(make_spec(n, AlibiVariant::relative), 300), key(make_spec(n, AlibiVariant::key), 300),
      shifted(make_spec(n, AlibiVariant::key_shifted), 300), counted(make_spec(n, AlibiVariant::key_counted), 300),
      sym(make_spec(n, AlibiVariant::symmetric), 300);
  const Real r = rel.bias(h, site.i, j, site.lq, site.lk);
  const Real m = alibi_slope(rel.spec(), h, 400);
  Real mq = make_real(500), ms = make_real(500);
  mpfr_mul_si(raw(mq), raw(m), static_cast<long>(qi), MPFR_RNDN);
  mpfr_mul_si(raw(ms), raw(m), static_cast<long>(qi) - static_cast<long>(site.lk - 1), MPFR_RNDN);
  const long tol = mpfr_get_exp(raw(m)) + 32 - 290;
  RC_ASSERT(within_pow2(sub(key.bias(h, site.i, j, site.lq, site.lk), r), mq, tol));
  RC_ASSERT(within_pow2(sub(shifted.bias(h, site.i, j, site.lq, site.lk), r), ms, tol));
  RC_ASSERT(same(counted.bias(h, site.i, j, site.lq, site.lk), key.bias(h, site.i, j, site.lq, site.lk)));
  RC_ASSERT(same(sym.bias(h, site.i, j, site.lq, site.lk), r));  // j <= q_i: -|q_i - j| = -(q_i - j)
  // above the diagonal relative is 0 and symmetric is -m (j - q_i)
  if (qi + 1 < site.lk) {
    RC_ASSERT(mpfr_zero_p(raw(rel.bias(h, site.i, site.lk - 1, site.lq, site.lk))) != 0);
    RC_ASSERT(alibi_multiplier(sym.spec(), site.i, site.lk - 1, site.lq, site.lk) ==
              -static_cast<std::int64_t>(site.lk - 1 - qi));
  }
}

// ======================================================================================================
// AlibiOracleScore
// ======================================================================================================

TEST(AlibiOracleScore, LiteralValues) {
  // n = 1, m = 2^-8; relative, Lq = Lk = 4, i = 3, j = 1: x = -2, bias = -1/128; 0.5 * (1*3 + 2*4) = 5.5
  const AlibiOracle o(make_spec(1));
  const std::vector<double> q = {1.0, 2.0}, k = {3.0, 4.0};
  EXPECT_TRUE(holds(o.score(0, 3, 1, 4, 4, q, k, 0.5), 5.4921875));
  EXPECT_TRUE(holds(o.score(0, 1, 3, 4, 4, q, k, 0.5), 5.5));  // above the diagonal: bias 0
  EXPECT_TRUE(holds(o.score(0, 3, 1, 4, 4, q, k, 0.0), -0.0078125));
  // One rounding, not two: at 24 bits the dot product 1 + 2^-24 is a tie (1 | 1 + 2^-23). n = 1, b = 40: m = 2^-40.
  // key, j = 1: 1 + 2^-24 + 2^-40 rounds up to 1 + 2^-23; relative x = -1: 1 + 2^-24 - 2^-40 rounds down to 1.
  // Rounding the dot product first (tie to even: 1) and then adding would give 1 both times.
  const std::vector<double> tie = {1.0 + 0x1p-24}, one = {1.0};
  const AlibiOracle up(make_spec(1, AlibiVariant::key, AlibiRegime::exact, 40.0), 24);
  const AlibiOracle down(make_spec(1, AlibiVariant::relative, AlibiRegime::exact, 40.0), 24);
  EXPECT_TRUE(holds(up.score(0, 0, 1, 1, 2, tie, one, 1.0), 1.0 + 0x1p-23));
  EXPECT_TRUE(holds(down.score(0, 1, 0, 2, 2, tie, one, 1.0), 1.0));
  EXPECT_TRUE(holds(up.score(0, 0, 0, 1, 2, tie, one, 1.0), 1.0));  // x = 0: the tie itself, to even
  // an irrational bias: n = 16, head 0, m = 2^-0.5; key j = 2: score = 0.25 + 2^0.5, to 24 and 53 bits
  const std::vector<double> half = {0.5};
  for (unsigned bits : {24u, 53u}) {
    const AlibiOracle o16(make_spec(16, AlibiVariant::key), bits);
    Real want = make_real(bits);
    Real wide = make_real(1000);
    mpfr_sqrt_ui(raw(wide), 2, MPFR_RNDN);
    mpfr_add_d(raw(wide), raw(wide), 0.25, MPFR_RNDN);
    mpfr_set(raw(want), raw(wide), MPFR_RNDN);
    EXPECT_TRUE(same(o16.score(0, 0, 2, 1, 3, half, half, 1.0), want)) << bits;
  }
}

// Correctly rounded against a 4P Boost/MPFR evaluation, including cancellation: q = -(the bias at `bits` as a sum
// of up to three doubles), k = 1, where the result is down to ~2^-159 of the terms and the Ziv loop must go on.
RC_GTEST_PROP(AlibiOracleScore, CorrectlyRoundedScore, ()) {
  const AlibiSpec s = *genSpec(64, true);
  const Site site = *genSite(true);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, s.heads);
  const unsigned bits = *rc::gen::element(24u, 53u, 100u, 256u);
  const AlibiOracle o(s, bits);
  const ScoreOperands c = score_operands_gen({1.0, 0.125, 1.0 / std::sqrt(64.0), 0.0, -2.0},
                                             o.exact_bias(h, site.i, site.j, site.lq, site.lk, site.mask));
  const unsigned wide = 4 * bits + 400;
  const Real got = o.score(h, site.i, site.j, site.lq, site.lk, c.q, c.k, c.scale, site.mask);
  Real want = exact_scaled_dot(c, wide + 4000);
  const std::int64_t x = expected_x(s.variant, std::int64_t(site.i), std::int64_t(site.j), std::int64_t(site.lq),
                                    std::int64_t(site.lk), site.mask);
  Real bias = make_real(wide);
  mpfr_mul_si(raw(bias), raw(boost_slope(s.heads, h, s.bias_max, wide)), static_cast<long>(x), MPFR_RNDN);
  mpfr_add(raw(want), raw(want), raw(bias), MPFR_RNDN);
  RC_LOG() << posenc::describe(s) << " h=" << h << " x=" << x << " cancel=" << c.cancel << " got " << show(got)
           << " want " << show(want) << "\n";
  RC_ASSERT(same(got, with_bits(want, bits)));
}

// ======================================================================================================
// AlibiOracleErrors: every bad argument names its parameter
// ======================================================================================================

TEST(AlibiOracleErrors, EveryBadArgumentNamesItsParameter) {
  const AlibiSpec s = make_spec(4);
  const AlibiOracle o(s);
  const std::vector<double> q = {1.0, 2.0}, k = {3.0, 4.0};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();

  AlibiSpec bad = s;
  bad.heads = 0;
  EXPECT_EQ(param_of([&] { AlibiOracle x(bad); }), "heads");
  EXPECT_EQ(param_of([&] { alibi_slope(bad, 0); }), "heads");
  EXPECT_EQ(param_of([&] { alibi_multiplier(bad, 0, 0, 1, 1); }), "heads");
  bad = s;
  bad.heads = posenc::kAlibiMaxHeads + 1;
  EXPECT_EQ(param_of([&] { alibi_emulated_slope(bad, 0); }), "heads");
  bad = s;
  bad.regime = AlibiRegime::bloom;
  bad.bias_max = 4.0;
  EXPECT_EQ(param_of([&] { AlibiOracle x(bad); }), "bias_max");
  bad = s;
  bad.bias_max = 0.0;
  EXPECT_EQ(param_of([&] { alibi_slope(bad, 0); }), "bias_max");
  bad.bias_max = nan;
  EXPECT_EQ(param_of([&] { alibi_slope(bad, 0); }), "bias_max");

  EXPECT_EQ(param_of([&] { AlibiOracle x(s, 23); }), "bits");
  EXPECT_EQ(param_of([&] { AlibiOracle x(s, kMaxBits + 1); }), "bits");
  EXPECT_EQ(param_of([&] { alibi_slope(s, 0, 0); }), "bits");
  EXPECT_EQ(param_of([&] { alibi_emulated_slope(make_spec(4, AlibiVariant::key, AlibiRegime::mpt), 0, 10); }), "bits");

  EXPECT_EQ(param_of([&] { alibi_slope(s, 4); }), "h");
  EXPECT_EQ(param_of([&] { alibi_emulated_slope(make_spec(4, AlibiVariant::key, AlibiRegime::mpt), 4); }), "h");
  EXPECT_EQ(param_of([&] { o.slope(4); }), "h");
  EXPECT_EQ(param_of([&] { o.bias(4, 0, 0, 1, 1); }), "h");
  EXPECT_EQ(param_of([&] { o.exact_bias(99, 0, 0, 1, 1); }), "h");
  EXPECT_EQ(param_of([&] { o.score(4, 0, 0, 1, 1, q, k, 1.0); }), "h");
  EXPECT_EQ(param_of([&] { alibi_emulated_slope(s, 0); }), "regime");

  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, std::size_t{1} << 31); }), "key_length");
  EXPECT_EQ(param_of([&] { alibi_multiplier(s, 0, 0, 1, std::size_t{1} << 31); }), "key_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 0, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.exact_bias(0, 0, 0, 4, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.bias(0, 2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { alibi_multiplier(s, 1, 0, 1, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 3, 2, 3, q, k, 1.0); }), "j");

  const std::vector<std::uint8_t> short_mask = {1, 1}, two = {1, 2, 1}, good = {0, 1, 1};
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, 3, short_mask); }), "key_mask");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, 3, two); }), "key_mask");
  EXPECT_EQ(param_of([&] { alibi_multiplier(make_spec(4, AlibiVariant::key_counted), 0, 0, 1, 3, two); }),
            "key_mask");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 3, q, k, 1.0, short_mask); }), "key_mask");
  EXPECT_EQ(param_of([&] { o.bias(0, 0, 0, 1, 3, good); }), "");

  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, std::vector<double>{}, std::vector<double>{}, 1.0); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, std::vector<double>{1.0}, 1.0); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, std::vector<double>{1.0, nan}, k, 1.0); }), "q");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, std::vector<double>{-inf, 1.0}, 1.0); }), "k");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, k, nan); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, k, inf); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(0, 0, 0, 1, 1, q, k, 1.0); }), "");
}

}  // namespace oracle_alibi
