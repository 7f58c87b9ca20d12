// Self-tests of the XLNet relative attention oracle. The oracle is the ground truth of the xlnet property suite, so
// each test here is built to fail if the oracle is wrong:
//   * the table: exact entries against plain double sin/cos at small positions and against a second MPFR route
//     (w = exp(-(2k/d) ln 10000) at 1500 bits) at the hard positions, correctly rounded at 24 .. 256 bits; p = 0 exact;
//     sin odd / cos even; the rows of xlnet_table_f64 against pos_seq lists written by hand (bi / uni, forward /
//     backward, clamps of both signs) and against the spec's own transcription; backward = forward with the sin half
//     negated;
//   * the emulated table against IEEE float arithmetic (+ MPFR for pow, sin, cos), two values checked by hand (mpmath),
//     positions past 2^24 rounded as torch.arange's float32 pos_seq;
//   * rel_shift_bnij re-enacted literally (view, drop the first row, view back, keep klen columns) on a naming matrix
//     and on the real bd term: the oracle uses column Lq - i + j, bi and uni, memory M in {0, 1, 3}; uni's junk;
//   * create_mask re-enacted literally (triu / tril / cat) and its docstring picture, with and without same_length;
//   * scores: against a direct double computation, against a direct MPFR evaluation (RapidCheck, both regimes,
//     memory, token types, scales), correct rounding at 53 bits vs 256, the segment term (same / different only, memory
//     keys of type 0), default vs explicit scale, backward = forward with negated sin rows of r, undefined uni entries
//     refused, score_magnitude bounds, threads;
//   * every bad argument against the posenc::Error it must raise.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/mp.hpp"
#include "posenc/reference/xlnet.hpp"
#include "posenc/xlnet_spec.hpp"
#include "test_util.hpp"

namespace oracle_xlnet {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::Regime;
using posenc::XlnetAttnType;
using posenc::XlnetDirection;
using posenc::XlnetSpec;
using posenc::XlnetWeights;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

constexpr auto kBi = XlnetAttnType::bi;
constexpr auto kUni = XlnetAttnType::uni;
constexpr auto kFwd = XlnetDirection::forward;
constexpr auto kBwd = XlnetDirection::backward;
constexpr unsigned kDirectBits = 1500;  // the tests' own evaluations

XlnetSpec make_spec(std::size_t d_model, XlnetAttnType attn = kBi, XlnetDirection dir = kFwd,
                    std::int64_t clamp_len = -1, Regime regime = Regime::exact, bool same_length = false,
                    std::size_t heads = 1, std::size_t d_head = 2) {
  XlnetSpec s;
  s.d_model = d_model;
  s.heads = heads;
  s.d_head = d_head;
  s.attn_type = attn;
  s.direction = dir;
  s.clamp_len = clamp_len;
  s.same_length = same_length;
  s.regime = regime;
  posenc::validate(s);
  return s;
}

// Random weights: multiples of 1/64 in [-2, 2] (exact doubles, products exact in double).
XlnetWeights random_weights(const XlnetSpec& s, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-128, 128);
  auto fill = [&](std::size_t n) {
    std::vector<double> v(n);
    for (double& x : v) x = d(rng) / 64.0;
    return v;
  };
  const std::size_t hd = s.heads * s.d_head;
  return XlnetWeights{fill(hd), fill(hd), fill(hd), fill(2 * hd), fill(s.d_model * hd)};
}

XlnetWeights zero_weights(const XlnetSpec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return XlnetWeights{std::vector<double>(hd), std::vector<double>(hd), std::vector<double>(hd),
                      std::vector<double>(2 * hd), std::vector<double>(s.d_model * hd)};
}

std::vector<double> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-128, 128);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng) / 64.0;
  return v;
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

// ---- the tests' own evaluations of the definition ----------------------------------------------------------------

// sin/cos(p 10000^(-2k/d)) by another route than the oracle's: w = exp(-(2k/d) ln 10000), at `prec` bits.
Real direct_entry(std::size_t d, std::int64_t p, std::size_t m, unsigned prec = kDirectBits) {
  const std::size_t k = m < d / 2 ? m : m - d / 2;
  Real x = make_real(prec);
  mpfr_log_ui(raw(x), 10000, MPFR_RNDN);
  mpfr_mul_ui(raw(x), raw(x), static_cast<unsigned long>(2 * k), MPFR_RNDN);
  mpfr_div_ui(raw(x), raw(x), static_cast<unsigned long>(d), MPFR_RNDN);
  mpfr_neg(raw(x), raw(x), MPFR_RNDN);
  mpfr_exp(raw(x), raw(x), MPFR_RNDN);
  mpfr_mul_si(raw(x), raw(x), static_cast<long>(p), MPFR_RNDN);
  Real out = make_real(prec);
  if (m < d / 2)
    mpfr_sin(raw(out), raw(x), MPFR_RNDN);
  else
    mpfr_cos(raw(out), raw(x), MPFR_RNDN);
  return out;
}

// The plain double evaluation a user would write.
double double_entry(std::size_t d, std::int64_t p, std::size_t m) {
  const std::size_t k = m < d / 2 ? m : m - d / 2;
  const double w = 1.0 / std::pow(10000.0, double(2 * k) / double(d));
  return m < d / 2 ? std::sin(double(p) * w) : std::cos(double(p) * w);
}

// relative_positional_encoding in float32: IEEE float division and product (correctly rounded in hardware), MPFR
// for torch.pow, sin and cos (at 400 bits, then rounded once more to float: a double rounding only within 2^-370 of a
// midpoint).
float float_entry(std::size_t d, std::int64_t p, std::size_t m) {
  const std::size_t k = m < d / 2 ? m : m - d / 2;
  const float x = static_cast<float>(2 * k) / static_cast<float>(d);
  const Real x400 = make_real(double(x), 400);
  Real pw = make_real(400);
  mpfr_ui_pow(raw(pw), 10000, raw(x400), MPFR_RNDN);
  const float inv = 1.0f / round_to_float(pw);
  const float a = static_cast<float>(p) * inv;
  const Real a400 = make_real(double(a), 400);
  Real r = make_real(400);
  if (m < d / 2)
    mpfr_sin(raw(r), raw(a400), MPFR_RNDN);
  else
    mpfr_cos(raw(r), raw(a400), MPFR_RNDN);
  return round_to_float(r);
}

// pos_seq written from CONVENTIONS.md §2.9 with std::vector, not from the oracle's formula.
std::vector<std::int64_t> hand_pos_seq(const XlnetSpec& s, std::int64_t qlen, std::int64_t klen) {
  std::vector<std::int64_t> v;
  const std::int64_t end = s.attn_type == kBi ? -qlen : -1;  // arange(beg, end, -1)
  for (std::int64_t x = klen; x > end; --x) v.push_back(x);
  if (s.direction == kBwd)
    for (auto& x : v) x = -x;
  if (s.clamp_len > 0)
    for (auto& x : v) x = std::max(-s.clamp_len, std::min(s.clamp_len, x));
  return v;
}

// HF's rel_shift_bnij on one [qlen][rlen] matrix, literally: the flat buffer viewed as [rlen][qlen], the first row
// dropped, viewed as [qlen][rlen - 1], the first klen columns kept.
std::vector<std::vector<double>> rel_shift_bnij(const std::vector<double>& x, std::size_t qlen, std::size_t rlen,
                                                std::size_t klen) {
  const std::vector<double> dropped(x.begin() + static_cast<std::ptrdiff_t>(qlen), x.end());  // [rlen - 1][qlen]
  std::vector<std::vector<double>> out(qlen, std::vector<double>(klen));
  for (std::size_t i = 0; i < qlen; ++i)
    for (std::size_t j = 0; j < klen; ++j) out[i][j] = dropped[i * (rlen - 1) + j];  // view [qlen][rlen - 1]
  return out;
}

// HF's create_mask(qlen, mlen), literally; true = masked.
std::vector<std::vector<bool>> create_mask(std::size_t qlen, std::size_t mlen, bool same_length) {
  std::vector<std::vector<double>> ret(qlen, std::vector<double>(mlen + qlen, 0.0));
  for (std::size_t i = 0; i < qlen; ++i)
    for (std::size_t c = 0; c < qlen; ++c) ret[i][mlen + c] = c >= i + 1 ? 1.0 : 0.0;  // triu(ones, diagonal=1)
  if (same_length)
    for (std::size_t i = 0; i < qlen; ++i)
      for (std::size_t c = 0; c < qlen; ++c) ret[i][c] += c + 1 <= i ? 1.0 : 0.0;  // ret[:, :qlen] + tril(ones, -1)
  std::vector<std::vector<bool>> out(qlen, std::vector<bool>(mlen + qlen));
  for (std::size_t i = 0; i < qlen; ++i)
    for (std::size_t j = 0; j < mlen + qlen; ++j) out[i][j] = ret[i][j] > 0;
  return out;
}

// R's row at pos_seq value p as the test evaluates it: direct_entry (exact) or float_entry (emulated), as Reals.
std::vector<Real> direct_row(const XlnetSpec& s, std::int64_t p) {
  std::vector<Real> r;
  for (std::size_t m = 0; m < s.d_model; ++m)
    r.push_back(s.regime == Regime::exact ? direct_entry(s.d_model, p, m)
                                          : make_real(double(float_entry(s.d_model, p, m)), kDirectBits));
  return r;
}

struct Call {
  std::vector<double> q, k;
  std::size_t head = 0, i = 0, j = 0, lq = 1, lk = 1;
  std::vector<std::int64_t> types;
  std::optional<double> scale;
};

// e(i, j) at kDirectBits, term by term as rel_attn_core writes it: ac + bd + ef, times scale.
Real direct_score(const XlnetSpec& s, const XlnetWeights& w, const Call& c) {
  const std::size_t dh = s.d_head, hd = s.heads * dh, h = c.head;
  const auto hand = hand_pos_seq(s, std::int64_t(c.lq), std::int64_t(c.lk));
  const std::vector<Real> R = direct_row(s, hand[c.lq - c.i + c.j]);
  Real acc = make_real(kDirectBits), t = make_real(kDirectBits), x = make_real(kDirectBits);
  mpfr_set_zero(raw(acc), 1);
  const std::size_t mem = c.lk - c.lq;
  for (std::size_t e = 0; e < dh; ++e) {
    mpfr_set_d(raw(x), c.q[e], MPFR_RNDN);
    mpfr_add_d(raw(x), raw(x), w.r_w_bias[h * dh + e], MPFR_RNDN);
    mpfr_mul_d(raw(t), raw(x), c.k[e], MPFR_RNDN);
    mpfr_add(raw(acc), raw(acc), raw(t), MPFR_RNDN);  // ac
    Real pe = make_real(kDirectBits);
    mpfr_set_zero(raw(pe), 1);
    for (std::size_t m = 0; m < s.d_model; ++m) {
      mpfr_mul_d(raw(t), raw(R[m]), w.r[m * hd + h * dh + e], MPFR_RNDN);
      mpfr_add(raw(pe), raw(pe), raw(t), MPFR_RNDN);  // k_head_r = einsum('ibh,hnd->ibnd', R, r)
    }
    mpfr_set_d(raw(x), c.q[e], MPFR_RNDN);
    mpfr_add_d(raw(x), raw(x), w.r_r_bias[h * dh + e], MPFR_RNDN);
    mpfr_mul(raw(t), raw(x), raw(pe), MPFR_RNDN);
    mpfr_add(raw(acc), raw(acc), raw(t), MPFR_RNDN);  // bd
    if (!c.types.empty()) {
      std::vector<std::int64_t> cat_ids(mem, 0);  // mem_pad
      cat_ids.insert(cat_ids.end(), c.types.begin(), c.types.end());
      const std::size_t seg = c.types[c.i] != cat_ids[c.j] ? 1 : 0;
      mpfr_set_d(raw(x), c.q[e], MPFR_RNDN);
      mpfr_add_d(raw(x), raw(x), w.r_s_bias[h * dh + e], MPFR_RNDN);
      mpfr_mul_d(raw(t), raw(x), w.seg_embed[seg * hd + h * dh + e], MPFR_RNDN);
      mpfr_add(raw(acc), raw(acc), raw(t), MPFR_RNDN);  // ef
    }
  }
  if (c.scale) {
    mpfr_mul_d(raw(acc), raw(acc), *c.scale, MPFR_RNDN);
  } else {
    mpfr_set_ui(raw(t), static_cast<unsigned long>(dh), MPFR_RNDN);
    mpfr_sqrt(raw(t), raw(t), MPFR_RNDN);
    mpfr_div(raw(acc), raw(acc), raw(t), MPFR_RNDN);
  }
  return acc;
}

// The double computation of the same terms, with R from xlnet_table_f64 and std::sqrt.
double double_score(const XlnetSpec& s, const XlnetWeights& w, const Call& c) {
  const std::size_t dh = s.d_head, hd = s.heads * dh, h = c.head;
  const std::vector<double> table = xlnet_table_f64(s, c.lq, c.lk);
  const double* R = table.data() + (c.lq - c.i + c.j) * s.d_model;
  double ac = 0, bd = 0, ef = 0;
  const std::size_t mem = c.lk - c.lq;
  for (std::size_t e = 0; e < dh; ++e) {
    ac += (c.q[e] + w.r_w_bias[h * dh + e]) * c.k[e];
    double pe = 0;
    for (std::size_t m = 0; m < s.d_model; ++m) pe += R[m] * w.r[m * hd + h * dh + e];
    bd += (c.q[e] + w.r_r_bias[h * dh + e]) * pe;
    if (!c.types.empty()) {
      const std::int64_t tj = c.j < mem ? 0 : c.types[c.j - mem];
      const std::size_t seg = c.types[c.i] != tj ? 1 : 0;
      ef += (c.q[e] + w.r_s_bias[h * dh + e]) * w.seg_embed[seg * hd + h * dh + e];
    }
  }
  return (ac + bd + ef) * (c.scale ? *c.scale : 1.0 / std::sqrt(double(dh)));
}

Real score_of(const XlnetOracle& o, const Call& c) {
  return o.score(c.q, c.k, c.head, c.i, c.j, c.lq, c.lk, c.types, c.scale);
}

// ======================================================================================================
// XlnetOracleTable: the exact regime and the rows of the call's table
// ======================================================================================================

// [sin | cos] halves, w_k = 10000^(-2k/d): the double a user would compute agrees to ~|p| 2^-50.
TEST(XlnetOracleTable, ExactMatchesPlainDoubleAtSmallPositions) {
  for (std::size_t d : {2u, 4u, 6u, 8u, 16u, 48u}) {
    const XlnetSpec s = make_spec(d);
    for (std::int64_t p = -40; p <= 40; ++p)
      for (std::size_t m = 0; m < d; ++m) {
        const double got = round_to_double(xlnet_table_value(s, p, m));
        ASSERT_NEAR(got, double_entry(d, p, m), 1e-13) << "d=" << d << " p=" << p << " m=" << m;
      }
  }
  // the layout is halves, not interleaved: column 1 of d = 4 is sin(p / 100), not cos(p)
  const XlnetSpec s4 = make_spec(4);
  EXPECT_NEAR(round_to_double(xlnet_table_value(s4, 3, 1)), std::sin(0.03), 1e-16);
  EXPECT_NEAR(round_to_double(xlnet_table_value(s4, 3, 2)), std::cos(3.0), 1e-16);
}

// Correctly rounded: equal to the 1500-bit value of another route rounded once, at hard positions and precisions.
TEST(XlnetOracleTable, ExactIsCorrectlyRoundedAtHardPositions) {
  const std::vector<std::int64_t> ps = {1, -1, 2, 3, 7, 355, 48039, -48039, 131071, 1 << 20, (1 << 24) - 1, 1 << 24,
                                        (std::int64_t{1} << 30) - 1, -((std::int64_t{1} << 30) - 1)};
  for (std::size_t d : {2u, 6u, 768u}) {
    const XlnetSpec s = make_spec(d);
    for (std::int64_t p : ps)
      for (std::size_t m : {std::size_t{0}, std::size_t{1}, d / 2 - 1, d / 2, d - 1}) {
        if (m >= d) continue;
        const Real want = direct_entry(d, p, m);
        for (unsigned bits : {24u, 53u, 113u, 256u}) {
          const Real got = xlnet_table_value(s, p, m, bits);
          ASSERT_EQ(bits_of(got), bits);
          ASSERT_TRUE(same(got, with_bits(want, bits)))
              << "d=" << d << " p=" << p << " m=" << m << " bits=" << bits << ": " << show(got) << " vs "
              << show(want);
        }
      }
  }
}

TEST(XlnetOracleTable, ZeroPositionIsExact) {
  for (Regime r : {Regime::exact, Regime::emulated}) {
    const XlnetSpec s = make_spec(10, kBi, kFwd, -1, r);
    for (std::size_t m = 0; m < 10; ++m) {
      const Real v = xlnet_table_value(s, 0, m, 300);
      EXPECT_TRUE(holds(v, m < 5 ? 0.0 : 1.0)) << m << " " << show(v);
    }
  }
}

// sin(-x) = -sin(x), cos(-x) = cos(x), exactly, in both regimes (RN32 and MPFR's RN are odd).
TEST(XlnetOracleTable, SinIsOddCosIsEven) {
  for (Regime r : {Regime::exact, Regime::emulated})
    for (std::size_t d : {2u, 8u, 12u}) {
      const XlnetSpec s = make_spec(d, kBi, kFwd, -1, r);
      for (std::int64_t p : {1, 2, 5, 17, 100, 48039, 1 << 22})
        for (std::size_t m = 0; m < d; ++m) {
          const Real a = xlnet_table_value(s, p, m, 200), b = xlnet_table_value(s, -p, m, 200);
          Real nb = make_real(200);
          mpfr_neg(raw(nb), raw(b), MPFR_RNDN);
          ASSERT_TRUE(same(a, m < d / 2 ? nb : b)) << "p=" << p << " m=" << m;
          ASSERT_FALSE(mpfr_zero_p(raw(a))) << "p=" << p << " m=" << m;
        }
    }
}

// The rows of xlnet_table_f64 are pos_seq = arange(klen, -qlen, -1) (bi) or arange(klen, -1, -1) (uni), negated
// backward, clamped: against lists written by hand, the oracle's xlnet_pos_seq and the spec's xlnet_position.
TEST(XlnetOracleTable, RowsFollowPosSeq) {
  using V = std::vector<std::int64_t>;
  struct Case {
    XlnetAttnType attn;
    XlnetDirection dir;
    std::int64_t clamp;
    V want;  // qlen 3, klen 5
  };
  const std::vector<Case> cases = {
      {kBi, kFwd, -1, V{5, 4, 3, 2, 1, 0, -1, -2}},
      {kBi, kBwd, -1, V{-5, -4, -3, -2, -1, 0, 1, 2}},
      {kUni, kFwd, -1, V{5, 4, 3, 2, 1, 0}},
      {kUni, kBwd, 0, V{-5, -4, -3, -2, -1, 0}},
      {kBi, kFwd, 2, V{2, 2, 2, 2, 1, 0, -1, -2}},
      {kBi, kBwd, 1, V{-1, -1, -1, -1, -1, 0, 1, 1}},
      {kUni, kFwd, 3, V{3, 3, 3, 2, 1, 0}},
      {kBi, kFwd, 7, V{5, 4, 3, 2, 1, 0, -1, -2}},
  };
  for (const Case& c : cases) {
    const XlnetSpec s = make_spec(6, c.attn, c.dir, c.clamp);
    ASSERT_EQ(hand_pos_seq(s, 3, 5), c.want);
    const std::vector<double> t = xlnet_table_f64(s, 3, 5);
    ASSERT_EQ(t.size(), c.want.size() * 6);
    ASSERT_EQ(c.want.size(), posenc::xlnet_table_rows(s, 3, 5));
    for (std::size_t r = 0; r < c.want.size(); ++r) {
      EXPECT_EQ(xlnet_pos_seq(s, r, 3, 5), c.want[r]);
      EXPECT_EQ(posenc::xlnet_position(s, r, 3, 5), c.want[r]);
      for (std::size_t m = 0; m < 6; ++m)
        ASSERT_EQ(t[r * 6 + m], round_to_double(direct_entry(6, c.want[r], m))) << "row " << r << " m " << m;
    }
  }
  // both transcriptions over many shapes
  for (XlnetAttnType a : {kBi, kUni})
    for (XlnetDirection dir : {kFwd, kBwd})
      for (std::int64_t clamp : {-1, 0, 1, 2, 5})
        for (std::size_t klen = 1; klen <= 9; ++klen)
          for (std::size_t qlen = 1; qlen <= klen; ++qlen) {
            const XlnetSpec s = make_spec(2, a, dir, clamp);
            const V hand = hand_pos_seq(s, std::int64_t(qlen), std::int64_t(klen));
            ASSERT_EQ(hand.size(), posenc::xlnet_table_rows(s, qlen, klen));
            for (std::size_t r = 0; r < hand.size(); ++r) {
              ASSERT_EQ(xlnet_pos_seq(s, r, qlen, klen), hand[r]);
              ASSERT_EQ(posenc::xlnet_position(s, r, qlen, klen), hand[r]);
            }
          }
}

// bi_data's second half: -pos_seq, so its table is the forward one with the sin half negated (cos is even).
TEST(XlnetOracleTable, BackwardIsForwardWithSinHalfNegated) {
  for (Regime r : {Regime::exact, Regime::emulated})
    for (XlnetAttnType a : {kBi, kUni})
      for (std::int64_t clamp : {-1, 2})
        for (auto [qlen, klen] : {std::pair{1, 1}, std::pair{3, 3}, std::pair{2, 5}}) {
          const std::size_t d = 8;
          const std::vector<double> f = xlnet_table_f64(make_spec(d, a, kFwd, clamp, r), qlen, klen);
          const std::vector<double> b = xlnet_table_f64(make_spec(d, a, kBwd, clamp, r), qlen, klen);
          ASSERT_EQ(f.size(), b.size());
          bool some_nonzero_sin = false;
          for (std::size_t n = 0; n < f.size(); ++n) {
            const bool sin_col = n % d < d / 2;
            ASSERT_EQ(b[n], sin_col ? -f[n] : f[n]) << n;
            some_nonzero_sin = some_nonzero_sin || (sin_col && f[n] != 0.0);
          }
          EXPECT_TRUE(some_nonzero_sin);
        }
}

// clamp_len applies to both signs: every row beyond the clamp equals the row at +-clamp_len; 0 and -1 clamp nothing.
TEST(XlnetOracleTable, ClampSaturatesBothSigns) {
  const std::size_t d = 4, qlen = 6, klen = 9;
  const std::vector<double> t = xlnet_table_f64(make_spec(d, kBi, kFwd, 3), qlen, klen);
  const std::vector<double> none = xlnet_table_f64(make_spec(d, kBi, kFwd, -1), qlen, klen);
  const std::vector<double> zero = xlnet_table_f64(make_spec(d, kBi, kFwd, 0), qlen, klen);
  EXPECT_EQ(none, zero);
  for (std::size_t c = 0; c < klen + qlen; ++c) {
    const std::int64_t p = std::int64_t(klen) - std::int64_t(c), pc = std::clamp<std::int64_t>(p, -3, 3);
    for (std::size_t m = 0; m < d; ++m) {
      ASSERT_EQ(t[c * d + m], round_to_double(direct_entry(d, pc, m))) << c;
      ASSERT_EQ(none[c * d + m], round_to_double(direct_entry(d, p, m))) << c;
    }
  }
  EXPECT_NE(t[0], none[0]);                                    // +9 clamped to +3
  EXPECT_NE(t[(klen + qlen - 1) * d], none[(klen + qlen - 1) * d]);  // -5 clamped to -3
}

// ======================================================================================================
// XlnetOracleEmulated: relative_positional_encoding's float32 steps
// ======================================================================================================

TEST(XlnetOracleEmulated, MatchesFloatArithmetic) {
  for (std::size_t d : {2u, 4u, 6u, 8u, 16u, 48u, 768u}) {
    const XlnetSpec s = make_spec(d, kBi, kFwd, -1, Regime::emulated);
    for (std::int64_t p : {1, -1, 2, 3, 7, 100, -511, 512, 4096, 48039, 131071, 1 << 20, (1 << 24) - 1})
      for (std::size_t m = 0; m < d; m += (d > 48 ? 37 : 1)) {
        const Real got = xlnet_table_value(s, p, m, 113);
        ASSERT_TRUE(holds(got, double(float_entry(d, p, m)))) << "d=" << d << " p=" << p << " m=" << m << " "
                                                              << show(got);
      }
  }
}

// Checked by hand (mpmath 1.3.0 at 300 bits, an independent evaluator):
//   d = 4, k = 1: x = 2/4 = 0.5 exactly, 10000^0.5 = 100 exactly, inv = RN32(0.01) = 0x1.47ae14p-7 (0.01f);
//   p = 3: a = 3 * 0x1.47ae14p-7 = 0x1.eb851ep-6 exactly (3 * 0x147ae14 = 0x3d70a3c has 24 significant bits);
//   sin a = a - a^3/6 + ... = 0.0299954991787... -> 0x1.eb723ep-6; cos a = 0.99955004453... -> 0x1.ffc506p-1.
//   d = 6, k = 1: x = RN32(1/3) = 0x1.555556p-2 (above 1/3), pw = RN32(10000^x) = 0x1.58b5a8p+4 (21.5443497, the real
//   cube root being 21.5443469), inv = 0x1.7c3d2ap-5; p = 7: a = 0x1.4cb584p-2, sin -> 0x1.46e2d2p-2, cos ->
//   0x1.e53632p-1.
TEST(XlnetOracleEmulated, HandCheckedValues) {
  const XlnetSpec s4 = make_spec(4, kBi, kFwd, -1, Regime::emulated);
  EXPECT_TRUE(holds(xlnet_table_value(s4, 3, 1), 0x1.eb723ep-6));
  EXPECT_TRUE(holds(xlnet_table_value(s4, 3, 3), 0x1.ffc506p-1));
  EXPECT_TRUE(holds(xlnet_table_value(s4, -3, 1), -0x1.eb723ep-6));
  const XlnetSpec s6 = make_spec(6, kBi, kFwd, -1, Regime::emulated);
  EXPECT_TRUE(holds(xlnet_table_value(s6, 7, 1), 0x1.46e2d2p-2));
  EXPECT_TRUE(holds(xlnet_table_value(s6, 7, 4), 0x1.e53632p-1));
  // the exact regime differs there: RN32(1/3) moves the frequency
  EXPECT_FALSE(holds(xlnet_table_value(make_spec(6), 7, 1, 24), 0x1.46e2d2p-2));
}

// torch.arange(..., dtype=float) stores RN32(p): 2^24 + 1 reads as 2^24; every entry is a binary32 number.
TEST(XlnetOracleEmulated, PositionsPast2To24AreFloat32) {
  const XlnetSpec s = make_spec(6, kBi, kFwd, -1, Regime::emulated);
  const std::int64_t p = std::int64_t{1} << 24;
  for (std::size_t m = 0; m < 6; ++m) {
    EXPECT_TRUE(same(xlnet_table_value(s, p + 1, m), xlnet_table_value(s, p, m)));
    EXPECT_TRUE(same(xlnet_table_value(s, p + 3, m), xlnet_table_value(s, p + 4, m)));
  }
  EXPECT_FALSE(same(xlnet_table_value(s, p + 2, 0), xlnet_table_value(s, p, 0)));  // sin(2^24 + 2) != sin(2^24)
  for (double v : xlnet_table_f64(s, 4, 7)) EXPECT_EQ(double(float(v)), v);
}

// ======================================================================================================
// XlnetOracleShift: rel_shift_bnij, re-enacted
// ======================================================================================================

// On a naming matrix x[i][c] = 1000 i + c: the literal reshape leaves (i, j) at column qlen - i + j wherever the
// entry is defined (bi: all; uni: j <= q_i); uni's j > q_i read x[i + 1][j - q_i - 1], the next row's first columns
// (junk, hidden by create_mask).
TEST(XlnetOracleShift, ReshapePicksColumnQlenMinusIPlusJ) {
  for (XlnetAttnType a : {kBi, kUni})
    for (std::size_t mem : {0u, 1u, 3u})
      for (std::size_t qlen = 1; qlen <= 5; ++qlen) {
        const std::size_t klen = mem + qlen, rlen = a == kBi ? klen + qlen : klen + 1;
        std::vector<double> x(qlen * rlen);
        for (std::size_t i = 0; i < qlen; ++i)
          for (std::size_t c = 0; c < rlen; ++c) x[i * rlen + c] = 1000.0 * double(i) + double(c);
        const auto out = rel_shift_bnij(x, qlen, rlen, klen);
        const XlnetOracle o(make_spec(2, a), zero_weights(make_spec(2, a)));
        for (std::size_t i = 0; i < qlen; ++i)
          for (std::size_t j = 0; j < klen; ++j) {
            const std::size_t qi = mem + i;
            if (o.defined(i, j, qlen, klen)) {
              ASSERT_EQ(out[i][j], 1000.0 * double(i) + double(qlen - i + j)) << i << " " << j;
            } else {
              ASSERT_EQ(a, kUni);
              ASSERT_GT(j, qi);
              ASSERT_EQ(out[i][j], 1000.0 * double(i + 1) + double(j - qi - 1)) << i << " " << j;
            }
          }
      }
}

// The oracle's positional term is rel_shift_bnij of the unshifted bd[i][c] = <q_i + v, P[c]> over every row c of
// the call's table: with k = 0 and no token types the score is bd alone.
TEST(XlnetOracleShift, OracleScoreIsShiftedBd) {
  std::mt19937_64 rng(7);
  for (Regime r : {Regime::exact, Regime::emulated})
    for (XlnetAttnType a : {kBi, kUni})
      for (XlnetDirection dir : {kFwd, kBwd})
        for (std::size_t mem : {0u, 1u, 3u})
          for (std::size_t qlen : {1u, 2u, 4u}) {
            const XlnetSpec s = make_spec(6, a, dir, -1, r, false, 2, 3);
            const XlnetWeights w = random_weights(s, rng);
            const XlnetOracle o(s, w);
            const std::size_t klen = mem + qlen, rlen = a == kBi ? klen + qlen : klen + 1, h = 1, dh = 3,
                              hd = 6;
            const std::vector<double> table = xlnet_table_f64(s, qlen, klen);
            ASSERT_EQ(table.size(), rlen * 6);
            std::vector<std::vector<double>> q(qlen);
            for (auto& qi : q) qi = random_vector(dh, rng);
            std::vector<double> bd(qlen * rlen);
            for (std::size_t i = 0; i < qlen; ++i)
              for (std::size_t c = 0; c < rlen; ++c) {
                double sum = 0;
                for (std::size_t e = 0; e < dh; ++e) {
                  double pe = 0;
                  for (std::size_t m = 0; m < 6; ++m) pe += table[c * 6 + m] * w.r[m * hd + h * dh + e];
                  sum += (q[i][e] + w.r_r_bias[h * dh + e]) * pe;
                }
                bd[i * rlen + c] = sum;
              }
            const auto shifted = rel_shift_bnij(bd, qlen, rlen, klen);
            const std::vector<double> zero(dh, 0.0);
            for (std::size_t i = 0; i < qlen; ++i)
              for (std::size_t j = 0; j < klen; ++j) {
                if (!o.defined(i, j, qlen, klen)) continue;
                const double got = round_to_double(o.score(q[i], zero, h, i, j, qlen, klen, {}, 1.0));
                ASSERT_NEAR(got, shifted[i][j], 1e-12) << "mem=" << mem << " qlen=" << qlen << " i=" << i
                                                       << " j=" << j;
              }
          }
}

// ======================================================================================================
// XlnetOracleMask: create_mask and the key mask
// ======================================================================================================

// The docstring picture of create_mask (qlen 5, mlen 4), both settings of same_length.
TEST(XlnetOracleMask, CreateMaskDocstringPicture) {
  const std::vector<std::vector<int>> plain = {{0, 0, 0, 0, 0, 1, 1, 1, 1},
                                               {0, 0, 0, 0, 0, 0, 1, 1, 1},
                                               {0, 0, 0, 0, 0, 0, 0, 1, 1},
                                               {0, 0, 0, 0, 0, 0, 0, 0, 1},
                                               {0, 0, 0, 0, 0, 0, 0, 0, 0}};
  const std::vector<std::vector<int>> same = {{0, 0, 0, 0, 0, 1, 1, 1, 1},
                                              {1, 0, 0, 0, 0, 0, 1, 1, 1},
                                              {1, 1, 0, 0, 0, 0, 0, 1, 1},
                                              {1, 1, 1, 0, 0, 0, 0, 0, 1},
                                              {1, 1, 1, 1, 0, 0, 0, 0, 0}};
  for (bool sl : {false, true}) {
    const XlnetSpec s = make_spec(2, kUni, kFwd, -1, Regime::exact, sl);
    const XlnetOracle o(s, zero_weights(s));
    const auto& want = sl ? same : plain;
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t j = 0; j < 9; ++j) {
        EXPECT_EQ(!o.visible({}, i, j, 5, 9), want[i][j] == 1) << sl << " " << i << " " << j;
        EXPECT_EQ(create_mask(5, 4, sl)[i][j], want[i][j] == 1);
      }
  }
}

// create_mask re-enacted for uni, mlen in {0, 1, 3}, qlen 1..6, with and without same_length; bi has no mask.
TEST(XlnetOracleMask, UniMaskIsCreateMask) {
  for (bool sl : {false, true})
    for (std::size_t mlen : {0u, 1u, 3u})
      for (std::size_t qlen = 1; qlen <= 6; ++qlen) {
        const std::size_t klen = mlen + qlen;
        const XlnetSpec s = make_spec(2, kUni, kFwd, -1, Regime::exact, sl);
        const XlnetOracle o(s, zero_weights(s));
        const XlnetSpec sb = make_spec(2, kBi);
        const XlnetOracle ob(sb, zero_weights(sb));
        const auto want = create_mask(qlen, mlen, sl);
        for (std::size_t i = 0; i < qlen; ++i)
          for (std::size_t j = 0; j < klen; ++j) {
            ASSERT_EQ(!o.visible({}, i, j, qlen, klen), want[i][j]) << sl << " " << mlen << " " << qlen << " " << i
                                                                    << " " << j;
            ASSERT_EQ(o.defined(i, j, qlen, klen), j <= mlen + i);
            ASSERT_EQ(posenc::xlnet_masked(s, i, j, qlen, klen), want[i][j]);
            ASSERT_EQ(posenc::xlnet_defined(s, i, j, qlen, klen), j <= mlen + i);
            ASSERT_TRUE(ob.visible({}, i, j, qlen, klen));
            ASSERT_TRUE(ob.defined(i, j, qlen, klen));
          }
        if (sl && qlen >= 2) {
          EXPECT_FALSE(o.visible({}, qlen - 1, 0, qlen, klen));  // same_length hides key 0
        }
      }
}

TEST(XlnetOracleMask, KeyMaskHidesExactlyItsKeys) {
  const XlnetSpec s = make_spec(2, kUni);
  const XlnetOracle o(s, zero_weights(s));
  const XlnetSpec sb = make_spec(2, kBi);
  const XlnetOracle ob(sb, zero_weights(sb));
  const std::vector<std::uint8_t> km = {1, 0, 1, 1, 0};  // qlen 3, klen 5
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 5; ++j) {
      EXPECT_EQ(ob.visible(km, i, j, 3, 5), km[j] == 1);
      EXPECT_EQ(o.visible(km, i, j, 3, 5), km[j] == 1 && j <= 2 + i);
    }
}

// ======================================================================================================
// XlnetOracleScore
// ======================================================================================================

TEST(XlnetOracleScore, MatchesDirectDoubleComputation) {
  std::mt19937_64 rng(11);
  for (Regime r : {Regime::exact, Regime::emulated})
    for (XlnetAttnType a : {kBi, kUni})
      for (std::size_t dh : {1u, 3u, 4u}) {
        const XlnetSpec s = make_spec(8, a, kFwd, -1, r, false, 2, dh);
        const XlnetWeights w = random_weights(s, rng);
        const XlnetOracle o(s, w);
        for (std::size_t mem : {0u, 2u})
          for (std::size_t qlen : {1u, 3u})
            for (std::size_t i = 0; i < qlen; ++i)
              for (std::size_t j = 0; j < mem + qlen; ++j) {
                if (!o.defined(i, j, qlen, mem + qlen)) continue;
                Call c{random_vector(dh, rng), random_vector(dh, rng), 1, i, j, qlen, mem + qlen, {}, std::nullopt};
                if (j % 2 == 0) c.types = std::vector<std::int64_t>(qlen, 1);
                if (i == 1) c.scale = 0.75;
                const double want = double_score(s, w, c);
                ASSERT_NEAR(round_to_double(score_of(o, c)), want, 1e-12 * (1 + std::fabs(want)))
                    << i << " " << j;
              }
      }
}

// Both regimes, memory, token types, clamps, scales: the oracle equals the direct 1500-bit evaluation rounded once.
RC_GTEST_PROP(XlnetOracleScore, CorrectlyRoundedAgainstDirectEvaluation, ()) {
  XlnetSpec s;
  s.d_model = *rc::gen::element<std::size_t>(2, 4, 6, 10);
  s.heads = *rc::gen::inRange<std::size_t>(1, 3);
  s.d_head = *rc::gen::element<std::size_t>(1, 2, 3, 4, 5);
  s.attn_type = *rc::gen::element(kBi, kUni);
  s.direction = *rc::gen::element(kFwd, kBwd);
  s.clamp_len = *rc::gen::element<std::int64_t>(-1, 0, 1, 3, 100);
  s.same_length = s.attn_type == kUni && *rc::gen::arbitrary<bool>();
  s.regime = *rc::gen::element(Regime::exact, Regime::emulated);
  posenc::validate(s);
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  XlnetWeights w = random_weights(s, rng);
  if (*rc::gen::inRange(0, 4) == 0)
    for (double& x : w.r) x *= 0x1p40;  // large positional weights: the positional term dominates
  Call c;
  const bool long_keys = *rc::gen::inRange(0, 5) == 0;
  c.lk = long_keys ? *rc::gen::element<std::size_t>(40000, 48039, 1 << 20) : *rc::gen::inRange<std::size_t>(1, 9);
  c.lq = long_keys ? *rc::gen::inRange<std::size_t>(1, 4) : *rc::gen::inRange<std::size_t>(1, c.lk + 1);
  c.i = *rc::gen::inRange<std::size_t>(0, c.lq);
  const std::size_t last = s.attn_type == kBi ? c.lk - 1 : c.lk - c.lq + c.i;
  c.j = *rc::gen::element<std::size_t>(0, last, *rc::gen::inRange<std::size_t>(0, last + 1));
  c.head = *rc::gen::inRange<std::size_t>(0, s.heads);
  c.q = random_vector(s.d_head, rng);
  c.k = random_vector(s.d_head, rng);
  if (*rc::gen::arbitrary<bool>())
    c.types = *rc::gen::container<std::vector<std::int64_t>>(c.lq, rc::gen::inRange<std::int64_t>(0, 3));
  const int sc = *rc::gen::inRange(0, 3);
  if (sc == 1) c.scale = 0.125;
  if (sc == 2) c.scale = -1.0 / 3.0;
  const unsigned bits = *rc::gen::element(24u, 53u, 256u);
  RC_TAG(s.regime == Regime::exact ? "exact" : "emulated", c.types.empty() ? "no types" : "types",
         long_keys ? "long" : "short");
  const XlnetOracle o(s, w, bits);
  const Real got = score_of(o, c);
  const Real want = direct_score(s, w, c);
  RC_ASSERT(bits_of(got) == bits);
  if (!same(got, with_bits(want, bits))) {
    RC_LOG() << "got " << show(got) << "\nwant " << show(want) << "\n";
    RC_FAIL("not the correctly rounded score");
  }
  // the magnitude bounds the score
  const double mag = o.score_magnitude(c.q, c.k, c.head, c.i, c.j, c.lq, c.lk, c.types, c.scale);
  const Real mag_r = make_real(mag, 64);
  RC_ASSERT(mpfr_cmpabs(raw(want), raw(mag_r)) <= 0);
}

// Correctly rounded at every precision: the 53-bit score is the 256-bit one rounded (exact regime, Ziv loop).
TEST(XlnetOracleScore, RoundingIsConsistentAcrossPrecisions) {
  std::mt19937_64 rng(3);
  const XlnetSpec s = make_spec(12, kBi, kFwd, -1, Regime::exact, false, 1, 3);
  const XlnetWeights w = random_weights(s, rng);
  const XlnetOracle o53(s, w, 53), o256(s, w, 256), o24(s, w, 24);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 6; ++j) {
      const std::vector<double> q = random_vector(3, rng), k = random_vector(3, rng);
      const Real a = o256.score(q, k, 0, i, j, 4, 6);
      EXPECT_TRUE(same(o53.score(q, k, 0, i, j, 4, 6), with_bits(a, 53)));
      EXPECT_TRUE(same(o24.score(q, k, 0, i, j, 4, 6), with_bits(a, 24)));
    }
}

// A bracket that cancels to ~2^-215 of its terms: r_w_bias holds minus a four-double expansion of sin(1) and the
// positional term is +sin(1), so T = sin(1) - expansion. The first working precision (bits + 64) cannot decide the
// rounding; the Ziv loop must go on (a loop that stopped there would be wrong in every bit).
TEST(XlnetOracleScore, CancellationNeedsMorePrecision) {
  const XlnetSpec s = make_spec(2, kBi, kFwd, -1, Regime::exact, false, 1, 4);
  const Real sin1 = direct_entry(2, 1, 0);  // pos_seq 1, column 0: sin(1 * w_0) = sin 1
  XlnetWeights w = zero_weights(s);
  Real rest = with_bits(sin1, kDirectBits);
  for (std::size_t e = 0; e < 4; ++e) {
    const double part = round_to_double(rest);
    w.r_w_bias[e] = -part;
    const Real part_r = make_real(part, 64);
    mpfr_sub(raw(rest), raw(rest), raw(part_r), MPFR_RNDN);
  }
  EXPECT_TRUE(abs_below_pow2(rest, -205));
  EXPECT_FALSE(mpfr_zero_p(raw(rest)));
  w.r_r_bias = {1, 0, 0, 0};
  w.r = {1, 0, 0, 0, 0, 0, 0, 0};  // C_0 = 1 (the sin column), C_1 = 0
  const Call base{{0, 0, 0, 0}, {1, 1, 1, 1}, 0, 0, 0, 1, 2, {}, std::nullopt};  // q_0 = 1, key 0: pos_seq 1
  for (unsigned bits : {53u, 256u})
    for (std::optional<double> scale : {std::optional<double>{}, std::optional<double>{1.0 / 3.0}}) {
      const XlnetOracle o(s, w, bits);
      Call c = base;
      c.scale = scale;
      const Real got = score_of(o, c), want = direct_score(s, w, c);
      EXPECT_TRUE(same(got, with_bits(want, bits))) << bits << ": " << show(got) << " vs " << show(want);
      EXPECT_TRUE(abs_below_pow2(got, -200));
      EXPECT_FALSE(mpfr_zero_p(raw(got)));
    }
}

// ef only depends on whether the query's and the key's types differ; memory keys have type 0 (mem_pad).
TEST(XlnetOracleScore, SegmentTermIsSameOrDifferentWithMemoryTypeZero) {
  std::mt19937_64 rng(5);
  for (Regime r : {Regime::exact, Regime::emulated}) {
    const XlnetSpec s = make_spec(4, kBi, kFwd, -1, r, false, 2, 2);
    XlnetWeights w = random_weights(s, rng);
    w.seg_embed = {1, 2, 3, 4, 10, 20, 30, 40};  // [2][heads][d_head]: same = {3, 4}, different = {30, 40} on head 1
    w.r_s_bias = {0, 0, 0.5, -0.25};
    const XlnetOracle o(s, w);
    const std::vector<double> q = {1.5, -2}, k = {0.25, 3};
    const std::size_t qlen = 2, klen = 4;  // M = 2
    const std::vector<std::int64_t> t01 = {0, 1}, t23 = {2, 3}, t45 = {4, 5}, t00 = {0, 0}, t11 = {1, 1};
    // q + s = {2, -2.25}: same segment 2*3 - 2.25*4 = -3, different 2*30 - 2.25*40 = -30 (scale 1)
    auto ef = [&](std::span<const std::int64_t> t, std::size_t i, std::size_t j) {  // (ac + bd + ef) - (ac + bd)
      return round_to_double(o.score(q, k, 1, i, j, qlen, klen, t, 1.0)) -
             round_to_double(o.score(q, k, 1, i, j, qlen, klen, {}, 1.0));
    };
    for (std::size_t j : {0u, 1u}) {  // memory keys: type 0
      EXPECT_NEAR(ef(t01, 0, j), -3.0, 1e-12);
      EXPECT_NEAR(ef(t01, 1, j), -30.0, 1e-12);
      EXPECT_NEAR(ef(t11, 0, j), -30.0, 1e-12);
      EXPECT_NEAR(ef(t00, 1, j), -3.0, 1e-12);
    }
    EXPECT_NEAR(ef(t01, 0, 2), -3.0, 1e-12);   // key 2 = query 0's token: type 0
    EXPECT_NEAR(ef(t01, 0, 3), -30.0, 1e-12);  // key 3: type 1
    EXPECT_NEAR(ef(t01, 1, 3), -3.0, 1e-12);
    // renaming the types (none of them 0) changes nothing
    for (std::size_t i = 0; i < qlen; ++i)
      for (std::size_t j = 0; j < klen; ++j)
        EXPECT_TRUE(same(o.score(q, k, 1, i, j, qlen, klen, t23), o.score(q, k, 1, i, j, qlen, klen, t45)));
  }
}

// scale = nullopt is 1/sqrt(d_head): equal to an explicit 0.5 for d_head 4, to 1 for d_head 1; d_head 3 against the
// direct evaluation; a negative and a zero scale.
TEST(XlnetOracleScore, DefaultScaleVsExplicit) {
  std::mt19937_64 rng(9);
  for (std::size_t dh : {1u, 3u, 4u}) {
    const XlnetSpec s = make_spec(6, kBi, kFwd, -1, Regime::exact, false, 1, dh);
    const XlnetWeights w = random_weights(s, rng);
    const XlnetOracle o(s, w);
    const std::vector<double> q = random_vector(dh, rng), k = random_vector(dh, rng);
    for (std::size_t j : {0u, 1u, 3u}) {  // q_1 = 3: j = 3 is pos_seq 0 (the dyadic path)
      const Real def = o.score(q, k, 0, 1, j, 2, 4);
      if (dh == 4) {
        EXPECT_TRUE(same(def, o.score(q, k, 0, 1, j, 2, 4, {}, 0.5)));
      }
      if (dh == 1) {
        EXPECT_TRUE(same(def, o.score(q, k, 0, 1, j, 2, 4, {}, 1.0)));
      }
      Call c{q, k, 0, 1, j, 2, 4, {}, std::nullopt};
      EXPECT_TRUE(same(def, with_bits(direct_score(s, w, c), 256))) << dh << " " << j;
      const Real one = o.score(q, k, 0, 1, j, 2, 4, {}, 1.0), neg = o.score(q, k, 0, 1, j, 2, 4, {}, -1.0);
      Real n = make_real(256);
      mpfr_neg(raw(n), raw(neg), MPFR_RNDN);
      EXPECT_TRUE(same(one, n));
      const Real zero = o.score(q, k, 0, 1, j, 2, 4, {}, 0.0);
      EXPECT_TRUE(mpfr_zero_p(raw(zero)));
      EXPECT_EQ(mpfr_signbit(raw(zero)) != 0, mpfr_sgn(raw(one)) < 0);
    }
  }
}

// Backward (-pos_seq) is forward with r's sin rows negated, exactly (sin odd, cos even; both correctly rounded).
TEST(XlnetOracleScore, BackwardIsForwardWithNegatedSinRows) {
  std::mt19937_64 rng(13);
  for (Regime r : {Regime::exact, Regime::emulated})
    for (XlnetAttnType a : {kBi, kUni}) {
      const XlnetSpec f = make_spec(6, a, kFwd, 2, r, false, 1, 2), b = make_spec(6, a, kBwd, 2, r, false, 1, 2);
      const XlnetWeights w = random_weights(f, rng);
      XlnetWeights wn = w;
      for (std::size_t m = 0; m < 3; ++m)
        for (std::size_t e = 0; e < 2; ++e) wn.r[m * 2 + e] = -wn.r[m * 2 + e];
      const XlnetOracle of(f, wn), ob(b, w), of_plain(f, w);
      bool differs = false;
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 5; ++j) {
          if (!ob.defined(i, j, 3, 5)) continue;
          const std::vector<double> q = random_vector(2, rng), k = random_vector(2, rng);
          ASSERT_TRUE(same(ob.score(q, k, 0, i, j, 3, 5), of.score(q, k, 0, i, j, 3, 5))) << i << " " << j;
          differs = differs || !same(ob.score(q, k, 0, i, j, 3, 5), of_plain.score(q, k, 0, i, j, 3, 5));
        }
      EXPECT_TRUE(differs);
    }
}

TEST(XlnetOracleScore, UndefinedUniEntriesAreRefused) {
  const XlnetSpec s = make_spec(4, kUni, kFwd, -1, Regime::exact, true);
  const XlnetOracle o(s, zero_weights(s));
  const std::vector<double> q = {1, 2}, k = {3, 4};
  for (std::size_t mem : {0u, 2u})
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < mem + 3; ++j) {
        const std::string p = param_of([&] { o.score(q, k, 0, i, j, 3, mem + 3); });
        EXPECT_EQ(p, j > mem + i ? "j" : "") << mem << " " << i << " " << j;
        EXPECT_EQ(param_of([&] { o.score_magnitude(q, k, 0, i, j, 3, mem + 3); }), p);
      }
  // same_length hides (2, 0) but it is defined: it has a score
  EXPECT_FALSE(o.visible({}, 2, 0, 3, 3));
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 2, 0, 3, 3); }), "");
}

// score_magnitude is the sum of |products| (here all products are positive, so it equals the score) and bounds it.
TEST(XlnetOracleScore, MagnitudeIsTheSumOfProductMagnitudes) {
  for (Regime r : {Regime::exact, Regime::emulated}) {
    const XlnetSpec s = make_spec(2, kBi, kFwd, -1, r, false, 1, 1);
    const XlnetWeights w{{0.5}, {0.25}, {2.0}, {1.0, 3.0}, {4.0, 8.0}};
    const XlnetOracle o(s, w);
    const std::vector<double> q = {1.0}, k = {2.0};
    // j = q_i: pos_seq 0, R = (0, 1): (1 + 0.5) 2 + (1 + 0.25) 8 + (1 + 2) 1 = 3 + 10 + 3 = 16, scale 1/4
    const std::vector<std::int64_t> t = {0};
    EXPECT_EQ(o.score_magnitude(q, k, 0, 0, 0, 1, 1, t, 0.25), 4.0);
    EXPECT_TRUE(holds(o.score(q, k, 0, 0, 0, 1, 1, t, 0.25), 4.0));
    // memory key 0 from query 0 (M = 1): pos_seq 1, R = (sin w0, cos w0): |.| >= the score
    const double m1 = o.score_magnitude(q, k, 0, 0, 0, 1, 2, {}, -1.0);
    const double sin1 = r == Regime::exact ? std::sin(1.0) : double(float(std::sin(1.0)));
    const double cos1 = r == Regime::exact ? std::cos(1.0) : double(float(std::cos(1.0)));
    const double want = 3.0 + 1.25 * (4.0 * sin1 + 8.0 * cos1);
    EXPECT_GE(m1, want * (1 - 1e-15));
    EXPECT_LE(m1, want * (1 + 1e-6));
  }
}

TEST(XlnetOracleScore, ThreadsAgree) {
  std::mt19937_64 rng(17);
  const XlnetSpec s = make_spec(8, kBi, kBwd, 3, Regime::exact, false, 2, 3);
  const XlnetWeights w = random_weights(s, rng);
  const XlnetOracle o(s, w);
  const std::vector<double> q = random_vector(3, rng), k = random_vector(3, rng);
  expect_concurrent_calls_match_serial([&] {
    std::vector<Real> out;
    for (std::size_t j = 0; j < 6; ++j) out.push_back(o.score(q, k, 1, 1, j, 3, 6));
    return out;
  });
}

// ======================================================================================================
// XlnetOracleErrors
// ======================================================================================================

TEST(XlnetOracleErrors, EveryBadArgumentNamesItsParameter) {
  const XlnetSpec s = make_spec(4, kUni, kFwd, -1, Regime::exact, false, 2, 2);
  const XlnetWeights w = zero_weights(s);
  // constructor: spec, weights, bits
  XlnetSpec odd = s;
  odd.d_model = 5;
  EXPECT_EQ(param_of([&] { (void)XlnetOracle(odd, w); }), "d_model");
  XlnetSpec bi_same = make_spec(4);
  bi_same.same_length = true;
  EXPECT_EQ(param_of([&] { (void)XlnetOracle(bi_same, zero_weights(bi_same)); }), "same_length");
  XlnetWeights bad = w;
  bad.r.pop_back();
  EXPECT_EQ(param_of([&] { (void)XlnetOracle(s, bad); }), "r");
  bad = w;
  bad.seg_embed[3] = std::nan("");
  EXPECT_EQ(param_of([&] { (void)XlnetOracle(s, bad); }), "seg_embed");
  bad = w;
  bad.r_w_bias.push_back(0);
  EXPECT_EQ(param_of([&] { (void)XlnetOracle(s, bad); }), "r_w_bias");
  EXPECT_EQ(param_of([&] { (void)XlnetOracle(s, w, 10); }), "bits");
  // table
  EXPECT_EQ(param_of([&] { xlnet_table_value(s, std::int64_t{1} << 30, 0); }), "position");
  EXPECT_EQ(param_of([&] { xlnet_table_value(s, -(std::int64_t{1} << 30), 0); }), "position");
  EXPECT_EQ(param_of([&] { xlnet_table_value(s, (std::int64_t{1} << 30) - 1, 3); }), "");
  EXPECT_EQ(param_of([&] { xlnet_table_value(s, 1, 4); }), "m");
  EXPECT_EQ(param_of([&] { xlnet_table_value(s, 1, 0, 23); }), "bits");
  EXPECT_EQ(param_of([&] { xlnet_table_value(odd, 1, 0); }), "d_model");
  EXPECT_EQ(param_of([&] { xlnet_table_f64(s, 0, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { xlnet_table_f64(s, 4, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { xlnet_table_f64(s, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { xlnet_table_f64(s, 1, std::size_t{1} << 30); }), "key_length");
  EXPECT_EQ(param_of([&] { xlnet_pos_seq(s, 4, 3, 3); }), "c");  // uni: klen + 1 = 4 rows
  EXPECT_EQ(param_of([&] { xlnet_pos_seq(s, 3, 3, 3); }), "");
  // score
  const XlnetOracle o(s, w);
  const std::vector<double> q = {1, 2}, k = {3, 4}, q3 = {1, 2, 3}, knan = {1, std::nan("")};
  const std::vector<std::int64_t> t2 = {0, 1}, t3 = {0, 1, 1};
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 2, 3); }), "");
  EXPECT_EQ(param_of([&] { o.score(q3, k, 0, 0, 0, 2, 3); }), "q");
  EXPECT_EQ(param_of([&] { o.score(q, knan, 0, 0, 0, 2, 3); }), "k");
  EXPECT_EQ(param_of([&] { o.score(q, k, 2, 0, 0, 2, 3); }), "head");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 2, 2, 3); }), "j");  // uni: j > q_0 = 1
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 3, 2); }), "query_length");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 0, 2); }), "query_length");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 2, 3, t3); }), "token_types");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 2, 3, t2); }), "");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 2, 3, {}, INFINITY); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 2, 3, {}, std::nan("")); }), "scale");
  EXPECT_EQ(param_of([&] { o.score_magnitude(q, k, 0, 0, 0, 2, 3, {}, INFINITY); }), "scale");
  EXPECT_EQ(param_of([&] { o.score_magnitude(q3, k, 0, 0, 0, 2, 3); }), "q");
  // defined / visible
  EXPECT_EQ(param_of([&] { o.defined(2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.defined(0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.visible({}, 0, 0, 3, 2); }), "query_length");
  const std::vector<std::uint8_t> km2 = {1, 1}, km3 = {1, 2, 1};
  EXPECT_EQ(param_of([&] { o.visible(km2, 0, 0, 2, 3); }), "key_mask");
  EXPECT_EQ(param_of([&] { o.visible(km3, 0, 0, 2, 3); }), "key_mask");
  // the message names the value and the accepted range
  try {
    o.score(q, k, 0, 0, 2, 2, 3);
    ADD_FAILURE() << "no error";
  } catch (const posenc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("j = 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("q_i = 1"), std::string::npos) << e.what();
  }
}

}  // namespace oracle_xlnet
