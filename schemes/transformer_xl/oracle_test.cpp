// Self-tests of the Transformer-XL oracle (posenc/reference/transformer_xl.hpp), each built to fail if the oracle is
// wrong:
//   * the exact table against long double sin/cos of p 10000^(-2k/d) (tolerance below), against the exp form
//     exp(-(2k/d) ln 10000) at 400 bits (within 2^-255), sin^2 + cos^2 = 1 at 256 bits at the hard positions, correct
//     rounding (the 53- and 24-bit values are the 300-bit value rounded once), position 0 = [0 .. 0 | 1 .. 1];
//   * clamp_len (rows above clamp_len repeat its row; unclamped for -1 and 0) and the row order of the f64 table
//     (pos_seq = klen - 1 .. 0, descending);
//   * the emulated table against PositionalEmbedding's steps written again in plain C float arithmetic (division,
//     reciprocal and product are IEEE correctly rounded) with MPFR at 24 bits for pow / sin / cos, one value checked
//     by hand (d = 4, k = 1, p = 3), and RN32(p) above 2^24;
//   * _rel_shift written literally (zero column in front, flat reshape) on a marked matrix: for j <= q_i it picks
//     column klen - 1 - (q_i - j), and the oracle's scores equal the shifted BD of the f64 table; the junk above is
//     documented;
//   * scores against long double evaluation of (AC + BD) scale, default vs explicit scale, correct rounding across
//     precisions, translation invariance, clamping, the undefined entry refused, and the two places a careless Ziv
//     loop goes wrong: S cancelled to 2^-155 of its terms, and S / sqrt(3) within 2^-141 of a double midpoint;
//   * the dec_attn_mask with and without same_length by hand and against the code's triu / tril;
//   * every bad argument against the posenc::Error it must raise.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck/gtest.h>

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
#include "posenc/reference/transformer_xl.hpp"
#include "posenc/transformer_xl_spec.hpp"
#include "test_util.hpp"

namespace oracle_transformer_xl {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::Regime;
using posenc::TransformerXlSpec;
using posenc::TransformerXlWeights;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

TransformerXlSpec make_spec(std::size_t d_model, Regime regime = Regime::exact, std::int64_t clamp_len = -1,
                            std::size_t heads = 1, std::size_t d_head = 2, bool same_length = false,
                            std::size_t mem_len = 0) {
  TransformerXlSpec s;
  s.d_model = d_model;
  s.heads = heads;
  s.d_head = d_head;
  s.clamp_len = clamp_len;
  s.same_length = same_length;
  s.mem_len = mem_len;
  s.regime = regime;
  posenc::validate(s);
  return s;
}

// Multiples of 1/8 in [-4, 4]: exact doubles whose products and short sums stay exact in long double.
double dyadic(std::mt19937& rng) { return double(std::uniform_int_distribution<int>(-32, 32)(rng)) / 8.0; }

std::vector<double> dyadics(std::mt19937& rng, std::size_t n) {
  std::vector<double> v(n);
  for (double& x : v) x = dyadic(rng);
  return v;
}

TransformerXlWeights random_weights(const TransformerXlSpec& s, std::mt19937& rng) {
  return {dyadics(rng, s.heads * s.d_head), dyadics(rng, s.heads * s.d_head),
          dyadics(rng, s.heads * s.d_head * s.d_model)};
}

std::string param_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const posenc::Error& e) {
    return e.parameter();
  }
  return "";
}

double value_d(const TransformerXlSpec& s, std::int64_t p, std::size_t m, unsigned bits = kDefaultBits) {
  return to_d(transformer_xl_table_value(s, p, m, bits));
}

// One MPFR step at 24 bits on a float: RN32 of the real op for results in float32's normal range.
float f32_op(int (*op)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), float x) {
  mpfr_t a, r;
  mpfr_init2(a, 24);
  mpfr_init2(r, 24);
  mpfr_set_flt(a, x, MPFR_RNDN);
  op(r, a, MPFR_RNDN);
  const float out = mpfr_get_flt(r, MPFR_RNDN);
  mpfr_clear(a);
  mpfr_clear(r);
  return out;
}

float f32_pow10000(float x) {
  mpfr_t b, e, r;
  mpfr_inits2(24, b, e, r, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_ui(b, 10000, MPFR_RNDN);
  mpfr_set_flt(e, x, MPFR_RNDN);
  mpfr_pow(r, b, e, MPFR_RNDN);
  const float out = mpfr_get_flt(r, MPFR_RNDN);
  mpfr_clears(b, e, r, static_cast<mpfr_ptr>(nullptr));
  return out;
}

// PositionalEmbedding in float32, step by step (p < 2^24).
float plain_float_entry(std::size_t d, std::int64_t p, std::size_t m) {
  const std::size_t half = d / 2, k = m % half;
  volatile float two_k = float(2 * k), dm = float(d);
  const float x = two_k / dm;              // torch.arange(0.0, d, 2.0) / d
  const float pw = f32_pow10000(x);        // 10000 ** x
  volatile float one = 1.0f;
  const float inv = one / pw;              // 1 / tensor
  volatile float pf = float(p);
  const float a = pf * inv;                // torch.ger
  return f32_op(m < half ? mpfr_sin : mpfr_cos, a);
}

const std::vector<std::int64_t> kHardPositions = {0,      1,      2,       3,       7,        63,        64,
                                                  65,     100,    255,     256,     1023,     1024,      48039,
                                                  65535,  65536,  131071,  1 << 20, 16777215, 16777216, 16777217,
                                                  123456789, (std::int64_t{1} << 31) - 1};

// ---- the table ---------------------------------------------------------------------------------------------------

TEST(TransformerXlOracleTable, ExactAgainstLongDouble) {
  for (std::size_t d : {2u, 4u, 10u, 64u, 410u}) {
    const TransformerXlSpec s = make_spec(d);
    for (std::int64_t p : {0, 1, 2, 3, 7, 100, 1000, 4097}) {
      for (std::size_t k = 0; k < d / 2; ++k) {
        const long double w = std::pow(10000.0L, -2.0L * (long double)k / (long double)d);
        const long double a = (long double)p * w;
        // The oracle's double is R rounded once (<= 2^-54 off for |R| < 1); powl, the product and sinl/cosl in x87
        // extended precision are each within a few 2^-64 relative: a few 2^-64 a on the angle.
        const double tol = 0x1p-53 + double(a) * 0x1p-60;
        EXPECT_NEAR(value_d(s, p, k), double(std::sin(a)), tol) << "d " << d << " p " << p << " k " << k;
        EXPECT_NEAR(value_d(s, p, d / 2 + k), double(std::cos(a)), tol) << "d " << d << " p " << p << " k " << k;
      }
    }
  }
}

TEST(TransformerXlOracleTable, ExactAgainstExpFormAt400Bits) {
  // w_k = exp(-(2k/d) ln 10000): another route to the same real number; |oracle - R| <= 2^-256 at 256 bits and the
  // 400-bit evaluation is within ~2^(36 - 400).
  for (std::size_t d : {6u, 410u, 1024u}) {
    const TransformerXlSpec s = make_spec(d);
    for (std::int64_t p : kHardPositions) {
      for (std::size_t k : {std::size_t{0}, std::size_t{1}, d / 4, d / 2 - 1}) {
        mpfr_t x, a, sn, cs;
        mpfr_inits2(400, x, a, sn, cs, static_cast<mpfr_ptr>(nullptr));
        mpfr_set_ui(x, 10000, MPFR_RNDN);
        mpfr_log(x, x, MPFR_RNDN);
        mpfr_mul_ui(x, x, static_cast<unsigned long>(2 * k), MPFR_RNDN);
        mpfr_div_ui(x, x, static_cast<unsigned long>(d), MPFR_RNDN);
        mpfr_neg(x, x, MPFR_RNDN);
        mpfr_exp(a, x, MPFR_RNDN);
        mpfr_mul_si(a, a, static_cast<long>(p), MPFR_RNDN);
        mpfr_sin_cos(sn, cs, a, MPFR_RNDN);
        Real rs = make_real(400), rc = make_real(400);
        mpfr_set(raw(rs), sn, MPFR_RNDN);
        mpfr_set(raw(rc), cs, MPFR_RNDN);
        mpfr_clears(x, a, sn, cs, static_cast<mpfr_ptr>(nullptr));
        EXPECT_TRUE(abs_below_pow2(sub(transformer_xl_table_value(s, p, k), rs), -255))
            << "d " << d << " p " << p << " k " << k << ": " << show(transformer_xl_table_value(s, p, k)) << " vs "
            << show(rs);
        EXPECT_TRUE(abs_below_pow2(sub(transformer_xl_table_value(s, p, d / 2 + k), rc), -255))
            << "d " << d << " p " << p << " k " << k;
      }
    }
  }
}

TEST(TransformerXlOracleTable, SinSquaredPlusCosSquaredIsOne) {
  std::mt19937 rng(7);
  for (std::size_t d : {2u, 410u, 1024u}) {
    const TransformerXlSpec s = make_spec(d);
    std::vector<std::int64_t> ps = kHardPositions;
    for (int n = 0; n < 20; ++n) ps.push_back(std::uniform_int_distribution<std::int64_t>(0, (1LL << 31) - 1)(rng));
    for (std::int64_t p : ps) {
      const std::size_t k = std::uniform_int_distribution<std::size_t>(0, d / 2 - 1)(rng);
      const Real sv = transformer_xl_table_value(s, p, k), cv = transformer_xl_table_value(s, p, d / 2 + k);
      Real e = make_real(1200);
      mpfr_sqr(raw(e), raw(sv), MPFR_RNDN);  // exact at 1200 bits
      Real c2 = make_real(1200);
      mpfr_sqr(raw(c2), raw(cv), MPFR_RNDN);
      mpfr_add(raw(e), raw(e), raw(c2), MPFR_RNDN);
      mpfr_sub_ui(raw(e), raw(e), 1, MPFR_RNDN);
      // each value within 2^-256 of the truth: |s^2 + c^2 - 1| <= 2 (|s| + |c|) 2^-256 + 2^-511 < 2^-253
      EXPECT_TRUE(abs_below_pow2(e, -252)) << "p " << p << " k " << k << ": " << show(e);
    }
  }
}

TEST(TransformerXlOracleTable, ExactIsCorrectlyRoundedAtEachPrecision) {
  for (std::size_t d : {4u, 410u}) {
    const TransformerXlSpec s = make_spec(d);
    for (std::int64_t p : kHardPositions) {
      for (std::size_t m : {std::size_t{0}, std::size_t{1}, d / 2 - 1, d / 2, d - 1}) {
        const Real hi = transformer_xl_table_value(s, p, m, 300);
        EXPECT_TRUE(holds(transformer_xl_table_value(s, p, m, 53), round_to_double(hi))) << "p " << p << " m " << m;
        EXPECT_TRUE(holds(transformer_xl_table_value(s, p, m, 24), double(round_to_float(hi))))
            << "p " << p << " m " << m;
        EXPECT_EQ(bits_of(transformer_xl_table_value(s, p, m, 77)), 77u);
      }
    }
  }
}

TEST(TransformerXlOracleTable, PositionZeroIsZerosThenOnes) {
  for (Regime r : {Regime::exact, Regime::emulated}) {
    const TransformerXlSpec s = make_spec(10, r);
    for (std::size_t m = 0; m < 10; ++m) EXPECT_TRUE(holds(transformer_xl_table_value(s, 0, m), m < 5 ? 0.0 : 1.0));
  }
}

TEST(TransformerXlOracleTable, SinHalfThenCosHalf) {
  // [sin | cos] halves (torch.cat([sin, cos], -1)), not interleaved: column 1 of d = 4 is sin(p / 100).
  const TransformerXlSpec s = make_spec(4);
  EXPECT_NEAR(value_d(s, 3, 0), std::sin(3.0), 1e-16);
  EXPECT_NEAR(value_d(s, 3, 1), std::sin(0.03), 1e-17);
  EXPECT_NEAR(value_d(s, 3, 2), std::cos(3.0), 1e-16);
  EXPECT_NEAR(value_d(s, 3, 3), std::cos(0.03), 1e-16);
}

TEST(TransformerXlOracleTable, ClampLenRepeatsTheRowOfClampLen) {
  const TransformerXlSpec c = make_spec(6, Regime::exact, 3);
  const std::size_t klen = 8;
  const std::vector<double> t = transformer_xl_table_f64(c, klen);
  // pos_seq = 7 6 5 4 3 2 1 0 clamped to 3 3 3 3 3 2 1 0
  const std::int64_t want[8] = {3, 3, 3, 3, 3, 2, 1, 0};
  for (std::size_t row = 0; row < klen; ++row)
    for (std::size_t m = 0; m < 6; ++m) EXPECT_EQ(t[row * 6 + m], value_d(c, want[row], m, 53)) << row << "," << m;
  EXPECT_EQ(param_of([&] { transformer_xl_table_value(c, 4, 0); }), "position");
  EXPECT_NO_THROW(transformer_xl_table_value(c, 3, 0));
  // clamp_len -1 and 0: no clamp (the code's `if clamp_len > 0`).
  for (std::int64_t none : {-1, 0}) {
    const TransformerXlSpec u = make_spec(6, Regime::exact, none);
    const std::vector<double> tu = transformer_xl_table_f64(u, klen);
    for (std::size_t row = 0; row < klen; ++row)
      EXPECT_EQ(tu[row * 6 + 1], value_d(u, std::int64_t(klen - 1 - row), 1, 53)) << "clamp " << none;
    EXPECT_NE(tu[0 * 6 + 1], t[0 * 6 + 1]);
  }
  // clamp_len = 1: every row but the last is the row of distance 1.
  const TransformerXlSpec one = make_spec(2, Regime::emulated, 1);
  const std::vector<double> t1 = transformer_xl_table_f64(one, 5);
  for (std::size_t row = 0; row < 4; ++row) EXPECT_EQ(t1[row * 2], value_d(one, 1, 0));
  EXPECT_EQ(t1[4 * 2], 0.0);
}

TEST(TransformerXlOracleTable, F64TableRowsAreDescendingPositions) {
  for (Regime r : {Regime::exact, Regime::emulated}) {
    const TransformerXlSpec s = make_spec(8, r);
    const std::size_t klen = 7;
    const std::vector<double> t = transformer_xl_table_f64(s, klen);
    ASSERT_EQ(t.size(), klen * 8);
    for (std::size_t c = 0; c < klen; ++c)
      for (std::size_t m = 0; m < 8; ++m)
        EXPECT_EQ(t[c * 8 + m], value_d(s, std::int64_t(klen - 1 - c), m, 53)) << "row " << c << " col " << m;
    // the last row is distance 0, the first distance klen - 1: column 0 is sin(6) there
    for (std::size_t m = 0; m < 8; ++m) EXPECT_EQ(t[(klen - 1) * 8 + m], m < 4 ? 0.0 : 1.0);
    EXPECT_NEAR(t[0], std::sin(6.0), 1e-6);
  }
}

TEST(TransformerXlOracleTable, EmulatedAgainstPlainFloatArithmetic) {
  for (std::size_t d : {2u, 4u, 10u, 410u, 1024u}) {
    const TransformerXlSpec s = make_spec(d, Regime::emulated);
    for (std::int64_t p : {0, 1, 2, 3, 17, 255, 400, 1000, 1600, 48039, 65535, 131071, 1 << 20, 16777215}) {
      for (std::size_t m = 0; m < d; m += (d > 64 ? 7 : 1)) {
        const float want = plain_float_entry(d, p, m);
        EXPECT_TRUE(holds(transformer_xl_table_value(s, p, m), double(want)))
            << "d " << d << " p " << p << " m " << m << ": " << show(transformer_xl_table_value(s, p, m)) << " vs "
            << std::hexfloat << want;
      }
    }
  }
}

TEST(TransformerXlOracleTable, EmulatedHandCheckedValue) {
  // d = 4, k = 1: x = 2/4 = 0.5 exactly, 10000^0.5 = 100 exactly, inv = RN32(1/100) = 0x1.47ae14p-7
  // (0.00999999977648258209228515625); p = 3: 3 * 0xa3d70a = 0x1eb851e has 24 significant bits, so a = 3 inv =
  // 0x1.eb851ep-6 exactly; RN32(sin a) = 0x1.eb723ep-6, RN32(cos a) = 0x1.ffc506p-1 (mpmath at 300 bits).
  const TransformerXlSpec s = make_spec(4, Regime::emulated);
  EXPECT_TRUE(holds(transformer_xl_table_value(s, 3, 1), 0x1.eb723ep-6));
  EXPECT_TRUE(holds(transformer_xl_table_value(s, 3, 3), 0x1.ffc506p-1));
  // The exact regime differs: sin(0.03) = 0x1.eb723f19667c6p-6 in double.
  EXPECT_TRUE(holds(transformer_xl_table_value(make_spec(4), 3, 1, 53), 0x1.eb723f19667c6p-6));
  // k = 0: w = 1 in both regimes, so the emulated entry is sin(3) rounded to float32.
  EXPECT_TRUE(holds(transformer_xl_table_value(s, 3, 0), double(float(std::sin(3.0)))));
}

TEST(TransformerXlOracleTable, EmulatedIsNearExact) {
  // inv_freq carries a few float32 roundings (relative < 2^-20 all told), so |a_emu - a| < a 2^-20 + ulp32(a),
  // and the entries differ by at most that plus two float32 roundings: the float32 table is a perturbation, not
  // another formula.
  for (std::size_t d : {16u, 410u}) {
    const TransformerXlSpec e = make_spec(d, Regime::emulated), x = make_spec(d);
    for (std::int64_t p : {1, 100, 4000}) {
      for (std::size_t m = 0; m < d; m += 3) {
        const double a = double(p) * std::pow(10000.0, -2.0 * double(m % (d / 2)) / double(d));
        const double tol = a * 0x1p-20 + a * 0x1p-23 + 0x1p-23;
        EXPECT_NEAR(value_d(e, p, m), value_d(x, p, m), tol) << "d " << d << " p " << p << " m " << m;
      }
    }
  }
}

TEST(TransformerXlOracleTable, EmulatedPositionsAbove2To24AreFloat32) {
  // pos_seq is a float32 tensor: 2^24 + 1 is held as 2^24 (ties to even), 2^24 + 3 as 2^24 + 4.
  const TransformerXlSpec s = make_spec(8, Regime::emulated);
  for (std::size_t m = 0; m < 8; ++m) {
    EXPECT_TRUE(same(transformer_xl_table_value(s, (1 << 24) + 1, m), transformer_xl_table_value(s, 1 << 24, m)));
    EXPECT_TRUE(same(transformer_xl_table_value(s, (1 << 24) + 3, m), transformer_xl_table_value(s, (1 << 24) + 4, m)));
  }
  // ... while the exact table tells them apart.
  const TransformerXlSpec x = make_spec(8);
  EXPECT_FALSE(same(transformer_xl_table_value(x, (1 << 24) + 1, 0), transformer_xl_table_value(x, 1 << 24, 0)));
}

// ---- rel_shift ---------------------------------------------------------------------------------------------------

// RelMultiHeadAttn._rel_shift on an [qlen][klen] matrix, literally: x_padded = cat([zeros(qlen, 1), x], 1) is
// [qlen][klen + 1]; .view(klen + 1, qlen)[1:] drops the first qlen elements of the flat buffer; .view_as(x).
std::vector<double> literal_rel_shift(const std::vector<double>& x, std::size_t qlen, std::size_t klen) {
  std::vector<double> padded(qlen * (klen + 1));
  for (std::size_t r = 0; r < qlen; ++r) {
    padded[r * (klen + 1)] = 0.0;
    for (std::size_t c = 0; c < klen; ++c) padded[r * (klen + 1) + 1 + c] = x[r * klen + c];
  }
  return std::vector<double>(padded.begin() + std::ptrdiff_t(qlen), padded.end());  // qlen * klen elements
}

TEST(TransformerXlOracleRelShift, LiteralShiftPicksTheColumnOfTheDistance) {
  for (auto [qlen, klen] : std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {1, 5}, {3, 3}, {3, 7}, {4, 9}}) {
    std::vector<double> x(qlen * klen);
    for (std::size_t r = 0; r < qlen; ++r)
      for (std::size_t c = 0; c < klen; ++c) x[r * klen + c] = 1000.0 * double(r + 1) + double(c);  // never 0
    const std::vector<double> out = literal_rel_shift(x, qlen, klen);
    ASSERT_EQ(out.size(), qlen * klen);
    for (std::size_t i = 0; i < qlen; ++i) {
      const std::size_t qi = klen - qlen + i;
      for (std::size_t j = 0; j < klen; ++j) {
        const double got = out[i * klen + j];
        if (j <= qi) {
          EXPECT_EQ(got, x[i * klen + (klen - 1 - (qi - j))]) << qlen << "x" << klen << " (" << i << "," << j << ")";
        } else if (j == qi + 1) {
          EXPECT_EQ(got, 0.0);  // junk: the next row's zero pad
        } else {
          EXPECT_EQ(got, x[(i + 1) * klen + (j - qi - 2)]);  // junk: the start of the next row
        }
      }
    }
  }
}

TEST(TransformerXlOracleRelShift, ScoresAreTheShiftedBDOfTheTable) {
  // BD[i][c] = <q_i + v, P[c]> over the table's rows in the code's order (row c = pos_seq[c]); k = 0 makes AC = 0.
  // The emulated table is float32 (entries >= 2^-14 or 0) and the inputs are eighths: every product and partial sum
  // spans < 64 bits, so long double holds BD exactly and only the two conversions to double differ.
  std::mt19937 rng(11);
  for (auto [qlen, mlen, clamp] : std::vector<std::tuple<std::size_t, std::size_t, std::int64_t>>{
           {1, 0, -1}, {3, 0, -1}, {3, 4, -1}, {4, 5, 3}, {2, 6, 0}}) {
    const std::size_t klen = qlen + mlen;
    const TransformerXlSpec s = make_spec(6, Regime::emulated, clamp, 2, 3);
    const TransformerXlWeights w = random_weights(s, rng);
    const TransformerXlOracle o(s, w);
    const std::vector<double> table = transformer_xl_table_f64(s, klen);
    const std::size_t h = 1, dh = 3, d = 6;
    std::vector<std::vector<double>> q(qlen);
    for (auto& qi : q) qi = dyadics(rng, dh);
    std::vector<double> bd(qlen * klen);
    for (std::size_t i = 0; i < qlen; ++i)
      for (std::size_t c = 0; c < klen; ++c) {
        long double acc = 0;
        for (std::size_t e = 0; e < dh; ++e) {
          long double pe = 0;
          for (std::size_t m = 0; m < d; ++m) pe += (long double)w.r_net[(h * dh + e) * d + m] * table[c * d + m];
          acc += ((long double)q[i][e] + w.r_r_bias[h * dh + e]) * pe;
        }
        bd[i * klen + c] = double(acc);
      }
    const std::vector<double> shifted = literal_rel_shift(bd, qlen, klen);
    const std::vector<double> zero(dh, 0.0);
    for (std::size_t i = 0; i < qlen; ++i)
      for (std::size_t j = 0; j <= klen - qlen + i; ++j) {
        const double e = to_d(o.score(q[i], zero, h, i, j, qlen, klen, 1.0));
        EXPECT_NEAR(e, shifted[i * klen + j], 0x1p-52 * std::fabs(e))
            << "qlen " << qlen << " mlen " << mlen << " (" << i << "," << j << ")";
      }
  }
}

// ---- scores ------------------------------------------------------------------------------------------------------

// e(i, j) in long double from the f64 table; *tol gets the bound on |this - e|.
double long_double_score(const TransformerXlSpec& s, const TransformerXlWeights& w, const std::vector<double>& table,
                         const std::vector<double>& q, const std::vector<double>& k, std::size_t h, std::size_t i,
                         std::size_t j, std::size_t qlen, std::size_t klen, double scale, double* tol) {
  const std::size_t d = s.d_model, dh = s.d_head;
  const std::size_t c = klen - 1 - ((klen - qlen + i) - j);
  long double ac = 0, bd = 0, mag = 0, gmag = 0;
  for (std::size_t e = 0; e < dh; ++e) {
    const long double qu = (long double)q[e] + w.r_w_bias[h * dh + e], qv = (long double)q[e] + w.r_r_bias[h * dh + e];
    ac += qu * k[e];
    mag += std::fabs(qu * k[e]);
    long double pe = 0;
    for (std::size_t m = 0; m < d; ++m) {
      pe += (long double)w.r_net[(h * dh + e) * d + m] * table[c * d + m];
      mag += std::fabs(qv * w.r_net[(h * dh + e) * d + m] * table[c * d + m]);
      gmag += std::fabs(qv * w.r_net[(h * dh + e) * d + m]);
    }
    bd += qv * pe;
  }
  // long double: (d + 2) dh + 4 roundings of 2^-64 relative on sums of magnitude <= mag (2^-63 with room); the
  // table's doubles: exact-regime entries within 2^-54 of R (gmag 2^-53 with room), emulated ones exact.
  const long double n = (long double)((d + 2) * dh + 4);
  *tol = double(std::fabs(scale) * (n * mag * 0x1p-63L + (s.regime == Regime::exact ? gmag * 0x1p-53L : 0.0L)));
  return double((ac + bd) * scale);
}

RC_GTEST_PROP(TransformerXlOracleScore, MatchesLongDoubleEvaluation, ()) {
  const std::size_t d = *rc::gen::element<std::size_t>(2, 4, 6, 10, 16);
  const Regime r = *rc::gen::element(Regime::exact, Regime::emulated);
  const std::int64_t clamp = *rc::gen::element<std::int64_t>(-1, 0, 1, 2, 5);
  const std::size_t heads = *rc::gen::inRange<std::size_t>(1, 3), dh = *rc::gen::inRange<std::size_t>(1, 6);
  const TransformerXlSpec s = make_spec(d, r, clamp, heads, dh);
  std::mt19937 rng(*rc::gen::arbitrary<std::uint32_t>());
  const TransformerXlWeights w = random_weights(s, rng);
  const std::size_t qlen = *rc::gen::inRange<std::size_t>(1, 4), klen = qlen + *rc::gen::inRange<std::size_t>(0, 6);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, heads), i = *rc::gen::inRange<std::size_t>(0, qlen);
  const std::size_t j = *rc::gen::inRange<std::size_t>(0, klen - qlen + i + 1);
  const bool given = *rc::gen::arbitrary<bool>();
  RC_TAG(r == Regime::exact ? "exact" : "emulated", given ? "given scale" : "default scale");
  const TransformerXlOracle o(s, w, *rc::gen::element(53u, 256u));
  const std::vector<double> table = transformer_xl_table_f64(s, klen);
  const std::vector<double> q = dyadics(rng, dh), k = dyadics(rng, dh);
  const double scale = given ? 0.375 : 1.0 / std::sqrt(double(dh));
  double tol = 0;
  const double want = long_double_score(s, w, table, q, k, h, i, j, qlen, klen, scale, &tol);
  const double got = to_d(given ? o.score(q, k, h, i, j, qlen, klen, 0.375) : o.score(q, k, h, i, j, qlen, klen));
  // + three roundings of 2^-53 relative: the oracle's value and the long double one to double, the default scale
  // 1/sqrt(d_head) to double (2^-51 |want| with room).
  RC_ASSERT(std::fabs(got - want) <= tol + std::fabs(want) * 0x1p-51);
}

struct ScoreCase {
  TransformerXlSpec s;
  TransformerXlWeights w;
  std::vector<double> q, k;
};

ScoreCase score_case(Regime r, std::size_t d_head, std::int64_t clamp = -1, unsigned seed = 5) {
  std::mt19937 rng(seed);
  ScoreCase c{make_spec(8, r, clamp, 2, d_head), {}, {}, {}};
  c.w = random_weights(c.s, rng);
  c.q = dyadics(rng, d_head);
  c.k = dyadics(rng, d_head);
  return c;
}

TEST(TransformerXlOracleScore, DefaultScaleIsInverseSqrtOfDHead) {
  for (Regime r : {Regime::exact, Regime::emulated}) {
    {  // d_head = 4: 1/2 exactly, so default and explicit agree bit for bit
      const ScoreCase c = score_case(r, 4);
      const TransformerXlOracle o(c.s, c.w);
      for (std::size_t j = 0; j < 6; ++j)
        EXPECT_TRUE(same(o.score(c.q, c.k, 1, 2, j, 3, 6), o.score(c.q, c.k, 1, 2, j, 3, 6, 0.5)));
    }
    {  // d_head = 9: default = S / 3; 3 * default = S within a few 2^-256 relative
      const ScoreCase c = score_case(r, 9);
      const TransformerXlOracle o(c.s, c.w);
      for (std::size_t j = 0; j < 6; ++j) {
        const Real def = o.score(c.q, c.k, 0, 2, j, 3, 6), one = o.score(c.q, c.k, 0, 2, j, 3, 6, 1.0);
        Real three = make_real(600);
        mpfr_mul_ui(raw(three), raw(def), 3, MPFR_RNDN);
        Real diff = sub(three, one);
        mpfr_div(raw(diff), raw(diff), raw(one), MPFR_RNDN);
        EXPECT_TRUE(abs_below_pow2(diff, -250)) << show(def) << " " << show(one);
      }
    }
    {  // d_head = 5: the default uses the real 1/sqrt(5), the explicit double RN64(1/sqrt(5)) differs by < 2^-53 rel
      const ScoreCase c = score_case(r, 5);
      const TransformerXlOracle o(c.s, c.w);
      for (std::size_t j = 0; j < 6; ++j) {
        const Real def = o.score(c.q, c.k, 1, 2, j, 3, 6), exp = o.score(c.q, c.k, 1, 2, j, 3, 6, 1.0 / std::sqrt(5.0));
        EXPECT_FALSE(same(def, exp));
        Real diff = sub(def, exp);
        mpfr_div(raw(diff), raw(diff), raw(def), MPFR_RNDN);
        EXPECT_TRUE(abs_below_pow2(diff, -52));
        // ... and 5 default^2 = one^2
        const Real one = o.score(c.q, c.k, 1, 2, j, 3, 6, 1.0);
        Real lhs = make_real(2000), rhs = make_real(2000);
        mpfr_sqr(raw(lhs), raw(def), MPFR_RNDN);
        mpfr_mul_ui(raw(lhs), raw(lhs), 5, MPFR_RNDN);
        mpfr_sqr(raw(rhs), raw(one), MPFR_RNDN);
        Real rel = sub(lhs, rhs);
        mpfr_div(raw(rel), raw(rel), raw(rhs), MPFR_RNDN);
        EXPECT_TRUE(abs_below_pow2(rel, -250));
      }
    }
  }
}

TEST(TransformerXlOracleScore, CorrectlyRoundedAtEachPrecision) {
  for (Regime r : {Regime::exact, Regime::emulated}) {
    for (std::size_t dh : {3u, 4u}) {
      const ScoreCase c = score_case(r, dh, -1, 9);
      const TransformerXlOracle lo(c.s, c.w, 53), f(c.s, c.w, 24), hi(c.s, c.w, 400);
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j <= 4 + i; ++j)
          for (std::optional<double> sc : {std::optional<double>{}, std::optional<double>{0.3}}) {
            const Real h = hi.score(c.q, c.k, 1, i, j, 3, 7, sc);
            EXPECT_TRUE(holds(lo.score(c.q, c.k, 1, i, j, 3, 7, sc), round_to_double(h))) << i << "," << j;
            EXPECT_TRUE(holds(f.score(c.q, c.k, 1, i, j, 3, 7, sc), double(round_to_float(h)))) << i << "," << j;
            EXPECT_EQ(bits_of(lo.score(c.q, c.k, 1, i, j, 3, 7, sc)), 53u);
          }
    }
  }
}

TEST(TransformerXlOracleScore, DependsOnlyOnTheDistance) {
  for (Regime r : {Regime::exact, Regime::emulated}) {
    const ScoreCase c = score_case(r, 3);
    const TransformerXlOracle o(c.s, c.w);
    // distance 2: (i = 0, j = 2) of qlen 1 klen 5; (i = 2, j = 4) of qlen 3 klen 7; (i = 1, j = 5) of qlen 4 klen 10
    const Real a = o.score(c.q, c.k, 0, 0, 2, 1, 5), b = o.score(c.q, c.k, 0, 2, 4, 3, 7);
    const Real e = o.score(c.q, c.k, 0, 1, 5, 4, 10), other = o.score(c.q, c.k, 0, 1, 4, 4, 10);
    EXPECT_TRUE(same(a, b));
    EXPECT_TRUE(same(a, e));
    EXPECT_FALSE(same(a, other));
  }
}

TEST(TransformerXlOracleScore, ClampedDistancesShareTheScore) {
  for (Regime r : {Regime::exact, Regime::emulated}) {
    const ScoreCase c = score_case(r, 3, 2), u = score_case(r, 3, -1);
    const TransformerXlOracle o(c.s, c.w), free(u.s, u.w);
    // qlen 1, klen 8: query 7, key j at distance 7 - j
    for (std::size_t j = 0; j <= 5; ++j) EXPECT_TRUE(same(o.score(c.q, c.k, 1, 0, j, 1, 8), o.score(c.q, c.k, 1, 0, 5, 1, 8)));
    EXPECT_FALSE(same(o.score(c.q, c.k, 1, 0, 6, 1, 8), o.score(c.q, c.k, 1, 0, 5, 1, 8)));
    EXPECT_FALSE(same(free.score(u.q, u.k, 1, 0, 0, 1, 8), free.score(u.q, u.k, 1, 0, 5, 1, 8)));
  }
}

TEST(TransformerXlOracleScore, HandSumsOfSmallIntegers) {
  // d_model 2, one head of 1: R(p) = [sin p, cos p]. u = 1, v = 2, W_R = [3, 5], q = 1, k = 4, scale 1.
  // AC = (1 + 1) 4 = 8; BD = (1 + 2) (3 sin p + 5 cos p). At distance 0: 8 + 15 = 23 exactly, in both regimes.
  const TransformerXlWeights w{{1.0}, {2.0}, {3.0, 5.0}};
  const std::vector<double> q{1.0}, k{4.0};
  for (Regime r : {Regime::exact, Regime::emulated}) {
    const TransformerXlOracle o(make_spec(2, r, -1, 1, 1), w);
    EXPECT_TRUE(holds(o.score(q, k, 0, 0, 0, 1, 1), 23.0));
    EXPECT_TRUE(holds(o.score(q, k, 0, 1, 1, 2, 2), 23.0));
    EXPECT_TRUE(holds(o.score(q, k, 0, 0, 0, 1, 1, -0.25), -5.75));
    // distance 1: 8 + 3 (3 sin 1 + 5 cos 1)
    const double want = 8.0 + 3.0 * (3.0 * std::sin(1.0) + 5.0 * std::cos(1.0));
    EXPECT_NEAR(to_d(o.score(q, k, 0, 0, 0, 1, 2)), want, 1e-6);
  }
  // r_net = 0: only the content term, exactly scale <q + u, k>.
  const TransformerXlOracle z(make_spec(2, Regime::exact, -1, 1, 1), TransformerXlWeights{{1.0}, {2.0}, {0.0, 0.0}});
  EXPECT_TRUE(holds(z.score(q, k, 0, 0, 0, 1, 9), 8.0));
  EXPECT_TRUE(holds(z.score(q, k, 0, 0, 0, 1, 9, -0.0), -0.0));
  EXPECT_TRUE(std::signbit(to_d(z.score(q, k, 0, 0, 0, 1, 9, -0.0))));
  // scale 0 on a transcendental S: a zero with the sign of S (here S = 8 + 3 (3 sin 8 + 5 cos 8) > 0)
  const TransformerXlOracle o(make_spec(2, Regime::exact, -1, 1, 1), w);
  EXPECT_TRUE(holds(o.score(q, k, 0, 0, 0, 1, 9, 0.0), 0.0));
  EXPECT_FALSE(std::signbit(to_d(o.score(q, k, 0, 0, 0, 1, 9, 0.0))));
  EXPECT_TRUE(std::signbit(to_d(o.score(q, k, 0, 0, 0, 1, 9, -0.0))));
}

TEST(TransformerXlOracleScore, CancellationIsStillCorrectlyRounded) {
  // One head of 3, d_model 2: g = (q_0 + v_0) W_R[0] = 3 [3, 5], so BD = 3 (3 sin 1 + 5 cos 1) at distance 1 and
  // G = 24. k = -(a triple-double expansion of BD) with q = [1, 1, 1], u = 0 makes A = -BD to ~2^-155, so S is
  // ~2^-155 against terms of ~5: at W = 53 + 64 the sin/cos errors (G 2^(36 - W)) swamp S, and only a loop that
  // tracks them returns the right double.
  mpfr_t bd, t;
  mpfr_inits2(1000, bd, t, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_ui(t, 1, MPFR_RNDN);
  mpfr_sin(bd, t, MPFR_RNDN);
  mpfr_mul_ui(bd, bd, 3, MPFR_RNDN);
  mpfr_cos(t, t, MPFR_RNDN);
  mpfr_mul_ui(t, t, 5, MPFR_RNDN);
  mpfr_add(bd, bd, t, MPFR_RNDN);
  mpfr_mul_ui(bd, bd, 3, MPFR_RNDN);  // 3 (3 sin 1 + 5 cos 1) at 1000 bits
  std::vector<double> k(3);
  mpfr_set(t, bd, MPFR_RNDN);
  for (double& x : k) {
    x = -mpfr_get_d(t, MPFR_RNDN);
    mpfr_add_d(t, t, x, MPFR_RNDN);  // exact: the remainder
  }
  Real want = make_real(1000);  // S = BD + sum k, the remainder left in t
  mpfr_set(raw(want), t, MPFR_RNDN);
  mpfr_clears(bd, t, static_cast<mpfr_ptr>(nullptr));
  ASSERT_TRUE(abs_below_pow2(want, -140));
  ASSERT_FALSE(mpfr_zero_p(raw(want)));

  const TransformerXlWeights w{{0.0, 0.0, 0.0}, {2.0, 0.0, 0.0}, {3.0, 5.0, 0.0, 0.0, 0.0, 0.0}};
  const std::vector<double> q{1.0, 1.0, 1.0};
  const TransformerXlSpec s = make_spec(2, Regime::exact, -1, 1, 3);
  const TransformerXlOracle lo(s, w, 53), hi(s, w, 400);
  const Real h = hi.score(q, k, 0, 0, 0, 1, 2, 1.0);
  Real rel = sub(h, want);
  mpfr_div(raw(rel), raw(rel), raw(want), MPFR_RNDN);
  EXPECT_TRUE(abs_below_pow2(rel, -390)) << show(h) << " vs " << show(want);
  EXPECT_TRUE(holds(lo.score(q, k, 0, 0, 0, 1, 2, 1.0), round_to_double(want)));
  // the default scale 1/sqrt(3) through the same loop: 3 e^2 = S^2
  const Real d = hi.score(q, k, 0, 0, 0, 1, 2);
  Real lhs = make_real(2000), rhs = make_real(2000);
  mpfr_sqr(raw(lhs), raw(d), MPFR_RNDN);
  mpfr_mul_ui(raw(lhs), raw(lhs), 3, MPFR_RNDN);
  mpfr_sqr(raw(rhs), raw(want), MPFR_RNDN);
  Real r2 = sub(lhs, rhs);
  mpfr_div(raw(r2), raw(r2), raw(rhs), MPFR_RNDN);
  EXPECT_TRUE(abs_below_pow2(r2, -390));
  EXPECT_TRUE(holds(TransformerXlOracle(s, w, 53).score(q, k, 0, 0, 0, 1, 2), round_to_double(d)));
}

TEST(TransformerXlOracleScore, DefaultScaleNextToAMidpointIsStillCorrectlyRounded) {
  // r_net = 0 leaves S = A = k0 + k1 + k2 (q = 1, u = 0), an exact sum; with k a triple-double expansion of
  // (x +- 2^-140) sqrt(3), x = 1 + 3 2^-53 a midpoint between two doubles, e = S / sqrt(3) lies ~2^-141 above or
  // below x: the two round to different doubles, which one W = 53 + 64 bits cannot tell.
  const TransformerXlSpec s = make_spec(2, Regime::exact, -1, 1, 3);
  const TransformerXlWeights w{{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, std::vector<double>(6, 0.0)};
  const std::vector<double> q{1.0, 1.0, 1.0};
  const TransformerXlOracle o(s, w, 53);
  for (int side : {1, -1}) {
    mpfr_t v, t;
    mpfr_inits2(1000, v, t, static_cast<mpfr_ptr>(nullptr));
    mpfr_set_ui(v, 3, MPFR_RNDN);
    mpfr_sqrt(v, v, MPFR_RNDN);
    mpfr_set_ui(t, 1, MPFR_RNDN);
    mpfr_add_d(t, t, 3 * 0x1p-53, MPFR_RNDN);
    mpfr_add_d(t, t, side * 0x1p-140, MPFR_RNDN);
    mpfr_mul(v, v, t, MPFR_RNDN);
    std::vector<double> k(3);
    for (double& x : k) {
      x = mpfr_get_d(v, MPFR_RNDN);
      mpfr_sub_d(v, v, x, MPFR_RNDN);
    }
    // the truth: (k0 + k1 + k2) / sqrt(3) at 1000 bits, rounded once to double
    mpfr_set_d(t, k[0], MPFR_RNDN);
    mpfr_add_d(t, t, k[1], MPFR_RNDN);
    mpfr_add_d(t, t, k[2], MPFR_RNDN);
    mpfr_set_ui(v, 3, MPFR_RNDN);
    mpfr_sqrt(v, v, MPFR_RNDN);
    mpfr_div(t, t, v, MPFR_RNDN);
    const double want = mpfr_get_d(t, MPFR_RNDN);
    mpfr_clears(v, t, static_cast<mpfr_ptr>(nullptr));
    EXPECT_EQ(want, side > 0 ? 1.0 + 4 * 0x1p-53 : 1.0 + 2 * 0x1p-53);
    EXPECT_TRUE(holds(o.score(q, k, 0, 0, 0, 1, 1), want)) << side << ": " << show(o.score(q, k, 0, 0, 0, 1, 1));
  }
}

TEST(TransformerXlOracleScore, SafeFromSeveralThreads) {
  const ScoreCase c = score_case(Regime::exact, 3);
  const TransformerXlOracle o(c.s, c.w);
  expect_concurrent_calls_match_serial([&] {
    std::vector<Real> out;
    for (std::size_t j = 0; j < 7; ++j) out.push_back(o.score(c.q, c.k, 1, 2, j, 3, 7));
    return out;
  });
}

// ---- masks -------------------------------------------------------------------------------------------------------

// MemTransformerLM._forward's dec_attn_mask, built as matrices: triu(ones, 1 + mlen) [+ tril(ones, -mask_shift_len)].
std::vector<int> code_mask(std::size_t qlen, std::size_t klen, bool same_length, std::size_t mem_len) {
  const long mlen = long(klen) - long(qlen);
  std::vector<int> mask(qlen * klen, 0);
  for (long i = 0; i < long(qlen); ++i)
    for (long j = 0; j < long(klen); ++j) mask[std::size_t(i) * klen + std::size_t(j)] += (j - i >= 1 + mlen) ? 1 : 0;
  if (same_length) {
    const long mask_len = long(klen) - long(mem_len);
    const long shift = mask_len > 0 ? long(qlen) - mask_len : long(qlen);
    for (long i = 0; i < long(qlen); ++i)
      for (long j = 0; j < long(klen); ++j) mask[std::size_t(i) * klen + std::size_t(j)] += (j - i <= -shift) ? 1 : 0;
  }
  return mask;
}

// 1 = visible, row by row.
void expect_visible(const TransformerXlOracle& o, std::size_t qlen, std::size_t klen, const std::vector<int>& want,
                    const char* what) {
  for (std::size_t i = 0; i < qlen; ++i)
    for (std::size_t j = 0; j < klen; ++j)
      EXPECT_EQ(o.visible({}, i, j, qlen, klen), want[i * klen + j] != 0) << what << " (" << i << "," << j << ")";
}

TransformerXlOracle mask_oracle(bool same_length, std::size_t mem_len) {
  const TransformerXlSpec s = make_spec(2, Regime::exact, -1, 1, 1, same_length, mem_len);
  return TransformerXlOracle(s, TransformerXlWeights{{0.0}, {0.0}, {0.0, 0.0}});
}

TEST(TransformerXlOracleMask, CausalOnlyWithoutSameLength) {
  // qlen 3, mlen 2: query i at key 2 + i sees keys 0 .. 2 + i.
  expect_visible(mask_oracle(false, 4), 3, 5, {1, 1, 1, 0, 0, /**/ 1, 1, 1, 1, 0, /**/ 1, 1, 1, 1, 1}, "causal");
}

TEST(TransformerXlOracleMask, SameLengthByHand) {
  // klen <= mem_len (qlen 3, klen 5, mem_len 6): mask_shift_len = qlen = 3, tril(-3) hides j <= i - 3: nothing.
  expect_visible(mask_oracle(true, 6), 3, 5, {1, 1, 1, 0, 0, /**/ 1, 1, 1, 1, 0, /**/ 1, 1, 1, 1, 1}, "klen<=mem");
  // klen = mem_len (qlen 2, klen 4, mem_len 4): mask_len 0 -> shift = qlen: nothing extra.
  expect_visible(mask_oracle(true, 4), 2, 4, {1, 1, 1, 0, /**/ 1, 1, 1, 1}, "klen=mem");
  // 0 < klen - mem_len < qlen (qlen 3, klen 6, mem_len 4): shift = 3 - 2 = 1, hides j <= i - 1: every query sees 4.
  expect_visible(mask_oracle(true, 4), 3, 6, {1, 1, 1, 1, 0, 0, /**/ 0, 1, 1, 1, 1, 0, /**/ 0, 0, 1, 1, 1, 1}, "mid");
  // klen - mem_len = qlen (qlen 2, klen 4, mem_len 2): shift 0, hides j <= i: every query sees mem_len = 2 keys.
  expect_visible(mask_oracle(true, 2), 2, 4, {0, 1, 1, 0, /**/ 0, 0, 1, 1}, "eq");
  // klen - mem_len > qlen (qlen 2, klen 7, mem_len 2): shift = 2 - 5 = -3 < 0, tril(+3) hides j <= i + 3.
  expect_visible(mask_oracle(true, 2), 2, 7, {0, 0, 0, 0, 1, 1, 0, /**/ 0, 0, 0, 0, 0, 1, 1}, "negative shift");
  // mem_len = 0 with same_length (degenerate: mask_len = klen, shift = qlen - klen = -mlen): hides every key.
  expect_visible(mask_oracle(true, 0), 2, 2, {0, 0, /**/ 0, 0}, "mem_len 0");
  expect_visible(mask_oracle(true, 0), 2, 5, {0, 0, 0, 0, 0, /**/ 0, 0, 0, 0, 0}, "mem_len 0 with memory");
}

TEST(TransformerXlOracleMask, AgreesWithTheCodeMatricesAndTheSpecFunction) {
  for (bool same_length : {false, true})
    for (std::size_t mem_len : {0u, 1u, 2u, 3u, 5u, 8u, 13u})
      for (std::size_t qlen = 1; qlen <= 5; ++qlen)
        for (std::size_t klen = qlen; klen <= qlen + 9; ++klen) {
          const TransformerXlOracle o = mask_oracle(same_length, mem_len);
          const std::vector<int> m = code_mask(qlen, klen, same_length, mem_len);
          for (std::size_t i = 0; i < qlen; ++i)
            for (std::size_t j = 0; j < klen; ++j) {
              const bool vis = o.visible({}, i, j, qlen, klen);
              EXPECT_EQ(vis, m[i * klen + j] == 0) << same_length << " mem " << mem_len << " " << qlen << "x" << klen;
              EXPECT_EQ(vis, !posenc::transformer_xl_masked(o.spec(), i, j, qlen, klen));
              EXPECT_EQ(o.defined(i, j, qlen, klen), j <= klen - qlen + i);
              if (vis) {
                EXPECT_TRUE(o.defined(i, j, qlen, klen));
              }
            }
        }
}

TEST(TransformerXlOracleMask, KeyMaskHidesPaddedKeys) {
  const TransformerXlOracle o = mask_oracle(false, 0);
  const std::vector<std::uint8_t> km{0, 1, 1, 0, 1};
  for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(o.visible(km, 1, j, 2, 5), j != 0 && j != 3 && j <= 4) << j;
  EXPECT_FALSE(o.visible(km, 0, 4, 2, 5));  // after query 3: hidden whatever the key mask says
}

// ---- errors ------------------------------------------------------------------------------------------------------

TEST(TransformerXlOracleErrors, EveryBadArgumentIsNamed) {
  const TransformerXlSpec s = make_spec(4, Regime::exact, 5, 2, 3);
  std::mt19937 rng(1);
  const TransformerXlWeights w = random_weights(s, rng);
  const TransformerXlOracle o(s, w);
  const std::vector<double> q(3, 1.0), k(3, 1.0);

  TransformerXlSpec odd = s;
  odd.d_model = 5;
  EXPECT_EQ(param_of([&] { transformer_xl_table_value(odd, 0, 0); }), "d_model");
  EXPECT_EQ(param_of([&] { TransformerXlOracle(odd, w); }), "d_model");
  EXPECT_EQ(param_of([&] { transformer_xl_table_f64(odd, 3); }), "d_model");
  TransformerXlWeights bad = w;
  bad.r_net.pop_back();
  EXPECT_EQ(param_of([&] { TransformerXlOracle(s, bad); }), "r_net");
  bad = w;
  bad.r_w_bias[0] = NAN;
  EXPECT_EQ(param_of([&] { TransformerXlOracle(s, bad); }), "r_w_bias");
  bad = w;
  bad.r_r_bias.push_back(0.0);
  EXPECT_EQ(param_of([&] { TransformerXlOracle(s, bad); }), "r_r_bias");
  EXPECT_EQ(param_of([&] { TransformerXlOracle(s, w, 0); }), "bits");
  EXPECT_EQ(param_of([&] { transformer_xl_table_value(s, 0, 0, 10); }), "bits");

  EXPECT_EQ(param_of([&] { transformer_xl_table_value(s, -1, 0); }), "position");
  EXPECT_EQ(param_of([&] { transformer_xl_table_value(s, 6, 0); }), "position");  // above clamp_len 5
  EXPECT_EQ(param_of([&] { transformer_xl_table_value(make_spec(4), std::int64_t{1} << 31, 0); }), "position");
  EXPECT_EQ(param_of([&] { transformer_xl_table_value(s, 0, 4); }), "m");
  EXPECT_EQ(param_of([&] { transformer_xl_table_f64(s, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { transformer_xl_table_f64(s, std::size_t{1} << 25); }), "key_length");  // > 2^26 entries

  EXPECT_EQ(param_of([&] { o.defined(0, 0, 0, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.defined(0, 0, 4, 3); }), "query_length");
  EXPECT_EQ(param_of([&] { o.defined(0, 0, 1, 0); }), "key_length");
  EXPECT_EQ(param_of([&] { o.defined(2, 0, 2, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.defined(0, 3, 2, 3); }), "j");
  EXPECT_EQ(param_of([&] { o.visible(std::vector<std::uint8_t>(2, 1), 0, 0, 2, 3); }), "key_mask");
  EXPECT_EQ(param_of([&] { o.visible(std::vector<std::uint8_t>{1, 2, 1}, 0, 0, 2, 3); }), "key_mask");

  EXPECT_EQ(param_of([&] { o.score(q, k, 2, 0, 0, 1, 1); }), "head");
  EXPECT_EQ(param_of([&] { o.score(std::vector<double>(2, 1.0), k, 0, 0, 0, 1, 1); }), "q");
  EXPECT_EQ(param_of([&] { o.score(q, std::vector<double>(4, 1.0), 0, 0, 0, 1, 1); }), "k");
  EXPECT_EQ(param_of([&] { o.score(std::vector<double>{1.0, INFINITY, 0.0}, k, 0, 0, 0, 1, 1); }), "q");
  EXPECT_EQ(param_of([&] { o.score(q, std::vector<double>{NAN, 0.0, 0.0}, 0, 0, 0, 1, 1); }), "k");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 0, 1, 1, NAN); }), "scale");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 1, 0, 1, 3); }), "i");
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 3, 1, 3); }), "j");
  // The undefined upper-right triangle: query 0 of qlen 2, klen 3 sits at key 1; key 2 is after it.
  EXPECT_EQ(param_of([&] { o.score(q, k, 0, 0, 2, 2, 3); }), "j");
  const std::string msg = error_of([&] { o.score(q, k, 0, 0, 2, 2, 3); });
  EXPECT_NE(msg.find("undefined"), std::string::npos) << msg;
  EXPECT_NE(msg.find("q_i"), std::string::npos) << msg;
  EXPECT_NO_THROW(o.score(q, k, 0, 0, 1, 2, 3));
}

}  // namespace oracle_transformer_xl
