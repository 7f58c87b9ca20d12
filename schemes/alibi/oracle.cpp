#include "posenc/reference/alibi.hpp"

#include <mpfr.h>

#include "mpfr_util.hpp"
#include "score_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::kZivLimit;
using detail::kEmu;
using detail::F;
using detail::D;

constexpr const char* kAlibiWhere = "alibi reference";
constexpr unsigned kExponentBits = 128;             // E_h needs at most 53 + 18 bits: exact at 128

using detail::Mp;
using detail::raw;

bool is_power_of_two(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// ---- validation ----------------------------------------------------------------------------------------------

void check_head(const AlibiSpec& s, std::size_t h) {
  if (h >= s.heads)
    throw Error(kAlibiWhere, "h", std::to_string(h), "a head index 0 <= h < heads = " + std::to_string(s.heads));
}

void check_mask(std::span<const std::uint8_t> mask, std::size_t key_length) {
  if (mask.empty()) return;
  if (mask.size() != key_length)
    throw Error(kAlibiWhere, "key_mask", "a mask of " + std::to_string(mask.size()) + " entries",
                "empty (every key real) or key_length = " + std::to_string(key_length) + " entries of 0 or 1",
                "has the wrong length");
  for (std::size_t j = 0; j < mask.size(); ++j)
    if (mask[j] > 1)
      throw Error(kAlibiWhere, "key_mask", std::to_string(mask[j]) + " at key " + std::to_string(j),
                  "entries 0 (padding) or 1 (a real token)");
}

void check_alibi_site(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
                std::span<const std::uint8_t> mask) {
  check_alibi_lengths(query_length, key_length);
  if (i >= query_length)
    throw Error(kAlibiWhere, "i", std::to_string(i),
                "a query row 0 <= i < query_length = " + std::to_string(query_length));
  if (j >= key_length)
    throw Error(kAlibiWhere, "j", std::to_string(j), "a key 0 <= j < key_length = " + std::to_string(key_length));
  check_mask(mask, key_length);
}

void check_alibi_vectors(std::span<const double> q, std::span<const double> k, double scale) {
  check_score_vectors(kAlibiWhere, q, k, scale);
}

// ---- the definition, transcribed ---------------------------------------------------------------------------

// E_h = -b (h+1) / c (h < c) or -b (2j+1) / (2c) (h = c + j), exactly (alibi_spec.hpp; CONVENTIONS.md §2.13).
void exact_exponent(mpfr_ptr out, const AlibiSpec& s, std::size_t h) {
  const std::size_t c = alibi_power_of_two_floor(s.heads);
  const unsigned long k = h < c ? static_cast<unsigned long>(h + 1) : static_cast<unsigned long>(2 * (h - c) + 1);
  const unsigned long denominator = h < c ? static_cast<unsigned long>(c) : static_cast<unsigned long>(2 * c);
  int inexact = mpfr_set_d(out, s.bias_max, MPFR_RNDN);
  inexact |= mpfr_mul_ui(out, out, k, MPFR_RNDN);
  inexact |= mpfr_div_ui(out, out, denominator, MPFR_RNDN);  // a power of two: exact
  mpfr_neg(out, out, MPFR_RNDN);
  if (inexact != 0) throw std::logic_error("alibi reference: the slope exponent was rounded");
}

// The variant's integer (header): bias = m x for every variant.
std::int64_t multiplier(const AlibiSpec& s, std::size_t i, std::size_t j, std::size_t query_length,
                        std::size_t key_length, std::span<const std::uint8_t> mask) {
  const std::int64_t lk = static_cast<std::int64_t>(key_length);
  const std::int64_t qi = lk - static_cast<std::int64_t>(query_length) + static_cast<std::int64_t>(i);
  const std::int64_t kj = static_cast<std::int64_t>(j);
  switch (s.variant) {
    case AlibiVariant::relative: return kj <= qi ? -(qi - kj) : 0;  // gpt-neox -tril(i - j)
    case AlibiVariant::key: return kj;                              // ofirpress slopes * arange(maxpos)
    case AlibiVariant::key_shifted: return kj - (lk - 1);           // MPT arange(1 - L, 1)
    case AlibiVariant::key_counted: {                               // BLOOM (cumsum(mask) - 1) * mask
      if (mask.empty()) return kj;
      if (mask[j] == 0) return 0;
      std::int64_t count = 0;
      for (std::size_t t = 0; t <= j; ++t) count += mask[t];
      return count - 1;
    }
    case AlibiVariant::symmetric: return -std::llabs(qi - kj);
  }
  throw std::logic_error("alibi reference: unknown variant");
}

// ---- float32 / float64 steps ----------------------------------------------------------------------------------

// -num / den exactly (den a power of two).
Real neg_ratio(long num, unsigned long den) {
  Real r = make_real(kEmu);
  mpfr_set_si(raw(r), -num, MPFR_RNDN);
  mpfr_div_ui(raw(r), raw(r), den, MPFR_RNDN);
  return r;
}

// ofirpress fairseq/models/transformer.py (ofirpress/attention_with_linear_biases@3b7c2ec) and gpt-neox
// AliBi._get_slopes (EleutherAI/gpt-neox@b0b561f), in Python floats:
//   start = (2**(-2**-(math.log2(n)-3)))     -> s = RN64(2^(-8/c'))  (2**-(log2 n - 3) = 8/n exactly)
//   [start*ratio**i for i in range(n)]       -> RN64(s * RN64(s^i))  (float ** int: C pow of two doubles)
//   get_slopes(c) + get_slopes(2c)[0::2][:n-c]: heads c + j take i = 2j of the 2c list
//   self.slopes = torch.Tensor(get_slopes(n)) -> RN32
Real ofirpress_slope32(const AlibiSpec& s, std::size_t h) {
  const std::size_t c = alibi_power_of_two_floor(s.heads);
  const std::size_t list = h < c ? c : 2 * c;
  const unsigned long e = h < c ? static_cast<unsigned long>(h) : static_cast<unsigned long>(2 * (h - c));
  const Real s64 = rn_exp2(D, neg_ratio(8, static_cast<unsigned long>(list)), kEmu);
  const Real p64 = rn_pow_ui(D, s64, e, kEmu);
  return rn(F, rn_mul(D, s64, p64, kEmu), kEmu);
}

// HF build_alibi_tensor (transformers@9d97831 models/bloom/modeling_bloom.py):
//   base = torch.tensor(2 ** (-(2 ** -(math.log2(c) - 3))), dtype=torch.float32)   -> RN32(RN64(2^(-8/c)))
//   slopes = torch.pow(base, arange(1, 1 + c, dtype=int32))                          -> RN32(base^(h+1))
//   extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * c) - 3))), float32)      -> RN32(RN64(2^(-4/c)))
//   torch.pow(extra_base, arange(1, 1 + 2 * (n - c), 2, dtype=int32))               -> RN32(extra^(2j+1))
Real bloom_slope32(const AlibiSpec& s, std::size_t h) {
  const std::size_t c = alibi_power_of_two_floor(s.heads);
  if (h < c) {
    const Real base = rn(F, rn_exp2(D, neg_ratio(8, static_cast<unsigned long>(c)), kEmu), kEmu);
    return rn_pow_ui(F, base, static_cast<unsigned long>(h + 1), kEmu);
  }
  const Real extra = rn(F, rn_exp2(D, neg_ratio(8, static_cast<unsigned long>(2 * c)), kEmu), kEmu);
  return rn_pow_ui(F, extra, static_cast<unsigned long>(2 * (h - c) + 1), kEmu);
}

// HF build_mpt_alibi_tensor (transformers@4352620 models/mpt/modeling_mpt.py):
//   P = 2 ** math.ceil(math.log2(num_heads))
//   base = torch.arange(1, P + 1, dtype=torch.int64).float()   -> RN32(t), t = 1..P (exact)
//   base = base * (alibi_bias_max / P)                          -> RN32(RN32(t) * RN32(RN64(b / P)))  (CPU scalar
//                                                                  operand cast to the tensor's float32)
//   slopes = 1.0 / torch.pow(2, base)                           -> RN32(1 / RN32(2^e_t))
//   slopes[1::2] ++ slopes[::2], first n                        -> t = 2, 4, ..., P, 1, 3, ...
Real mpt_slope32(const AlibiSpec& s, std::size_t h) {
  const std::size_t n = s.heads, c = alibi_power_of_two_floor(n);
  const std::size_t p = is_power_of_two(n) ? n : 2 * c;
  const std::size_t t = p == n ? h + 1 : (h < c ? 2 * (h + 1) : 2 * (h - c) + 1);
  const Real ratio = rn(F, rn_div(D, make_real(s.bias_max, kEmu), make_real(static_cast<std::int64_t>(p), kEmu), kEmu),
                        kEmu);
  const Real e = rn_mul(F, rn(F, make_real(static_cast<std::int64_t>(t), kEmu), kEmu), ratio, kEmu);
  const Real pw = rn_exp2(F, e, kEmu);
  if (mpfr_inf_p(raw(pw))) return make_real(kEmu);  // 2^e_t overflowed float32 (b >= 128): 1 / inf = +0
  return rn_div(F, make_real(1, kEmu), pw, kEmu);
}

Real emulated_slope32(const AlibiSpec& s, std::size_t h) {
  switch (s.regime) {
    case AlibiRegime::ofirpress: return ofirpress_slope32(s, h);
    case AlibiRegime::bloom: return bloom_slope32(s, h);
    case AlibiRegime::mpt: return mpt_slope32(s, h);
    case AlibiRegime::exact: break;
  }
  throw Error(kAlibiWhere, "regime", std::string(to_string(s.regime)),
              "ofirpress | bloom | mpt (the regimes with float32 slopes)");
}

// Every emulated regime: slopes (float32) * integer position tensor -> float32: RN32(RN32(x) * slope).
Real emulated_bias32(const Real& slope32, std::int64_t x) {
  return rn_mul(F, rn(F, make_real(x, kEmu), kEmu), slope32, kEmu);
}

// 2^E_h rounded to nearest at the precision of out.
void exact_slope_at(mpfr_ptr out, const AlibiSpec& s, std::size_t h) {
  Mp e(kExponentBits);
  exact_exponent(e.get(), s, h);
  mpfr_exp2(out, e.get(), MPFR_RNDN);
}

bool exponent_is_integer(const AlibiSpec& s, std::size_t h) {
  Mp e(kExponentBits);
  exact_exponent(e.get(), s, h);
  return mpfr_integer_p(e.get()) != 0;
}

}  // namespace

// ---- free functions -------------------------------------------------------------------------------------------

Real alibi_slope(const AlibiSpec& s, std::size_t h, unsigned bits) {
  validate(s);
  check_head(s, h);
  check_bits(bits);
  Real out = make_real(bits);
  exact_slope_at(raw(out), s, h);  // MPFR's exp2 of the exact exponent: correctly rounded
  return out;
}

Real alibi_emulated_slope(const AlibiSpec& s, std::size_t h, unsigned bits) {
  validate(s);
  check_head(s, h);
  check_bits(bits);
  return with_bits(emulated_slope32(s, h), bits);  // a float32 fits in bits >= 24
}

std::int64_t alibi_multiplier(const AlibiSpec& s, std::size_t i, std::size_t j, std::size_t query_length,
                              std::size_t key_length, std::span<const std::uint8_t> key_mask) {
  validate(s);
  check_alibi_site(i, j, query_length, key_length, key_mask);
  return multiplier(s, i, j, query_length, key_length, key_mask);
}

// ---- AlibiOracle ------------------------------------------------------------------------------------------------

AlibiOracle::AlibiOracle(const AlibiSpec& spec, unsigned bits) : spec_(spec), bits_(bits) {
  validate(spec_);
  check_bits(bits);
  // The cached slopes seed the Ziv loops; their precision is what the loops' first round assumes (capped at
  // kMaxBits, a valid Real precision: near that cap the first round fails and the loop goes on with mpfr_t).
  const unsigned w = std::min(bits + kAlibiWorkingMargin, kMaxBits);
  slope_w_.reserve(spec_.heads);
  slope_exact_.reserve(spec_.heads);
  for (std::size_t h = 0; h < spec_.heads; ++h) {
    Real m = make_real(w);
    exact_slope_at(raw(m), spec_, h);
    slope_w_.push_back(std::move(m));
    slope_exact_.push_back(exponent_is_integer(spec_, h));
  }
  if (spec_.regime != AlibiRegime::exact) {
    slope32_.reserve(spec_.heads);
    for (std::size_t h = 0; h < spec_.heads; ++h) slope32_.push_back(emulated_slope32(spec_, h));
  }
}

void AlibiOracle::check_head(std::size_t h) const { posenc::reference::check_head(spec_, h); }

Real AlibiOracle::slope(std::size_t h) const {
  check_head(h);
  if (spec_.regime != AlibiRegime::exact) return with_bits(slope32_[h], bits_);
  Real out = make_real(bits_);
  exact_slope_at(raw(out), spec_, h);
  return out;
}

// m_h x correctly rounded to bits_ (header): exact when E_h is an integer or x = 0, else a Ziv loop.
Real AlibiOracle::exact_bias_of(std::size_t h, std::int64_t x) const {
  Real out = make_real(bits_);
  if (x == 0) return out;  // +0
  if (slope_exact_[h]) {
    mpfr_mul_si(raw(out), raw(slope_w_[h]), static_cast<long>(x), MPFR_RNDN);  // 2^E_h x rounded once
    return out;
  }
  mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_of(slope_w_[h]));
  Mp t(w);
  mpfr_set(t.get(), raw(slope_w_[h]), MPFR_RNDN);  // t = RN_w(2^E_h), |t - 2^E_h| <= 2^(EXP(t) - w - 1)
  for (;;) {
    Mp p(w + 64);
    mpfr_mul_si(p.get(), t.get(), static_cast<long>(x), MPFR_RNDN);  // exact: |x| < 2^31
    // |p - m x| <= |x| 2^(EXP(t) - w - 1) < 2^(EXP(x) + EXP(t) - w - 1) <= 2^(EXP(p) - w)
    if (mpfr_can_round(p.get(), w - 1, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits_) + 1)) {
      mpfr_set(raw(out), p.get(), MPFR_RNDN);
      return out;
    }
    w += w / 2;
    if (w > kZivLimit) throw std::logic_error("alibi reference: the bias did not round within 2^20 bits");
    mpfr_set_prec(t.get(), w);
    exact_slope_at(t.get(), spec_, h);
  }
}

Real AlibiOracle::exact_bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                             std::size_t key_length, std::span<const std::uint8_t> key_mask) const {
  check_head(h);
  check_alibi_site(i, j, query_length, key_length, key_mask);
  return exact_bias_of(h, multiplier(spec_, i, j, query_length, key_length, key_mask));
}

Real AlibiOracle::bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
                       std::span<const std::uint8_t> key_mask) const {
  check_head(h);
  check_alibi_site(i, j, query_length, key_length, key_mask);
  const std::int64_t x = multiplier(spec_, i, j, query_length, key_length, key_mask);
  if (spec_.regime == AlibiRegime::exact) return exact_bias_of(h, x);
  return with_bits(emulated_bias32(slope32_[h], x), bits_);
}

// scale <q, k> + m_h x (header): the terms scale q_c k_c exactly, summed with the bias by mpfr_sum.
Real AlibiOracle::score(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
                        std::span<const double> q, std::span<const double> k, double scale,
                        std::span<const std::uint8_t> key_mask) const {
  check_head(h);
  check_alibi_site(i, j, query_length, key_length, key_mask);
  check_alibi_vectors(q, k, scale);
  const std::int64_t x = multiplier(spec_, i, j, query_length, key_length, key_mask);

  std::vector<Real> terms;
  terms.reserve(q.size() + 1);
  const Real sc = make_real(scale, 64);
  for (std::size_t c = 0; c < q.size(); ++c) {
    Real term = make_real(160);
    mpfr_mul(raw(term), raw(make_real(q[c], 64)), raw(make_real(k[c], 64)), MPFR_RNDN);  // exact: 106 bits
    mpfr_mul(raw(term), raw(term), raw(sc), MPFR_RNDN);                                   // exact: 159 bits
    terms.push_back(std::move(term));
  }
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(terms.size() + 1);
  for (Real& term : terms) ptrs.push_back(raw(term));

  Real out = make_real(bits_);
  if (x == 0 || slope_exact_[h]) {
    // the bias 2^E_h x is exact in 64 bits (a power of two times a 31-bit integer): one rounding, by mpfr_sum
    Real b = make_real(64);
    if (x != 0) mpfr_mul_si(raw(b), raw(slope_w_[h]), static_cast<long>(x), MPFR_RNDN);
    ptrs.push_back(raw(b));
    mpfr_sum(raw(out), ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
    return out;
  }
  mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_of(slope_w_[h]));
  Mp t(w);
  mpfr_set(t.get(), raw(slope_w_[h]), MPFR_RNDN);
  ptrs.push_back(nullptr);
  for (;;) {
    Mp b(w + 64), s(w);
    mpfr_mul_si(b.get(), t.get(), static_cast<long>(x), MPFR_RNDN);  // exact; |b - m x| <= 2^(EXP(b) - w)
    ptrs.back() = b.get();
    mpfr_sum(s.get(), ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
    if (!mpfr_zero_p(s.get())) {
      // |s - score| <= 2^(EXP(s) - w - 1) + 2^(EXP(b) - w) <= 2^(max(EXP(s) - w - 1, EXP(b) - w) + 1)
      const mpfr_exp_t e_err = std::max(mpfr_get_exp(s.get()) - w - 1, mpfr_get_exp(b.get()) - w) + 1;
      const mpfr_exp_t err = std::min<mpfr_exp_t>(mpfr_get_exp(s.get()) - e_err, w);
      if (err > 1 && mpfr_can_round(s.get(), err, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits_) + 1)) {
        mpfr_set(raw(out), s.get(), MPFR_RNDN);
        return out;
      }
    }
    w += w / 2;
    if (w > kZivLimit) throw std::logic_error("alibi reference: the score did not round within 2^20 bits");
    mpfr_set_prec(t.get(), w);
    exact_slope_at(t.get(), spec_, h);
  }
}

}  // namespace posenc::reference
