#include "posenc/reference/kerple.hpp"

#include <mpfr.h>

#include "mpfr_util.hpp"
#include "score_checks.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "posenc/alibi_spec.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::kZivLimit;
using detail::kEmu;
using detail::F;

constexpr const char* kKerpleWhere = "kerple reference";
constexpr mpfr_prec_t kKerpleArgBits = 128;  // 1 + a d (<= 111 bits, header) and 1 + t (<= 82 bits): exact
constexpr std::int64_t kMaxDistance = std::int64_t{1} << 31;  // d < 2^31 (key positions < 2^31)

using detail::Mp;
using detail::raw;

// ---- validation ----------------------------------------------------------------------------------------------

void check_kerple_site(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_alibi_lengths(query_length, key_length);
  if (i >= query_length)
    throw Error(kKerpleWhere, "i", std::to_string(i),
                "a query row 0 <= i < query_length = " + std::to_string(query_length));
  if (j >= key_length)
    throw Error(kKerpleWhere, "j", std::to_string(j), "a key 0 <= j < key_length = " + std::to_string(key_length));
}

void check_distance(std::int64_t d) {
  if (d < 0 || d >= kMaxDistance)
    throw Error(kKerpleWhere, "d", std::to_string(d), "a distance 0 <= d < 2^31 = " + std::to_string(kMaxDistance));
}

void check_kerple_vectors(std::span<const double> q, std::span<const double> k, double scale) {
  check_score_vectors(kKerpleWhere, q, k, scale);
}

// ---- the definition, transcribed ---------------------------------------------------------------------------

// kerple_spec.hpp: d = q_i - j for j <= q_i, else 0 (the reference's diff = tril(i - j)), q_i = Lk - Lq + i.
std::int64_t distance(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  const std::int64_t qi = static_cast<std::int64_t>(key_length) - static_cast<std::int64_t>(query_length) +
                          static_cast<std::int64_t>(i);
  const std::int64_t kj = static_cast<std::int64_t>(j);
  return kj <= qi ? qi - kj : 0;
}

// eps64 = RN64(0.01): MPFR's rounding of the decimal text (not the compiler's literal).
Real eps64() { return parse_real("0.01", 53); }

// The exact regime's clamp (doubles, exact): max(v, eps64), power's p also min(., 2).
Real clamp_exact(double v, bool upper_two) {
  Real r = make_real(53);
  mpfr_max(raw(r), raw(make_real(v, 53)), raw(eps64()), MPFR_RNDN);  // exact: both are doubles
  if (upper_two) mpfr_min(raw(r), raw(r), raw(make_real(2.0, 53)), MPFR_RNDN);
  return r;
}

// The megatron clamp: torch.clamp of the float32 parameter against the Python float 0.01 (a float32 scalar in the
// op: RN32(RN64(0.01))), power's p also against 2 (exact in float32).
Real clamp_float32(double v, bool upper_two) {
  const Real v32 = rn(F, make_real(v, 53), kEmu);
  const Real eps32 = rn(F, eps64(), kEmu);
  Real r = make_real(kEmu);
  mpfr_max(raw(r), raw(v32), raw(eps32), MPFR_RNDN);  // exact
  if (upper_two) mpfr_min(raw(r), raw(r), raw(make_real(2.0, kEmu)), MPFR_RNDN);
  return r;
}

Real negated(const Real& x) {
  Real r = with_bits(x, bits_of(x));
  mpfr_neg(raw(r), raw(r), MPFR_RNDN);  // exact, -0 for +0
  return r;
}

}  // namespace

// ---- free function ---------------------------------------------------------------------------------------------

std::int64_t kerple_distance(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_kerple_site(i, j, query_length, key_length);
  return distance(i, j, query_length, key_length);
}

// ---- KerpleOracle -----------------------------------------------------------------------------------------------

KerpleOracle::KerpleOracle(const KerpleSpec& spec, const KerpleWeights& weights, unsigned bits)
    : spec_(spec), bits_(bits) {
  validate(spec_);
  check_kerple_weights(spec_, weights);
  check_bits(bits);
  const bool power = spec_.kernel == KerpleKernel::power;
  p64_.reserve(spec_.heads);
  a64_.reserve(spec_.heads);
  p32_.reserve(spec_.heads);
  a32_.reserve(spec_.heads);
  for (std::size_t h = 0; h < spec_.heads; ++h) {
    p64_.push_back(clamp_exact(weights.p[h], power));
    a64_.push_back(clamp_exact(weights.a[h], false));
    p32_.push_back(clamp_float32(weights.p[h], power));
    a32_.push_back(clamp_float32(weights.a[h], false));
  }
}

void KerpleOracle::check_head(std::size_t h) const {
  if (h >= spec_.heads)
    throw Error(kKerpleWhere, "h", std::to_string(h), "a head index 0 <= h < heads = " + std::to_string(spec_.heads));
}

Real KerpleOracle::p(std::size_t h) const {
  check_head(h);
  const unsigned b = std::max(bits_, 53u);
  return with_bits(spec_.regime == KerpleRegime::megatron ? p32_[h] : p64_[h], b);  // exact: <= 53 bits each
}

Real KerpleOracle::a(std::size_t h) const {
  check_head(h);
  const unsigned b = std::max(bits_, 53u);
  return with_bits(spec_.regime == KerpleRegime::megatron ? a32_[h] : a64_[h], b);
}

// Header: d = 0 -> -0 exactly; log -> -p RN_w(ln(1 + a d)) (never exact for d >= 1); power -> -a RN_w(d^p),
// exact when MPFR's pow reports an exact result. The product with the 53-bit parameter is exact at w + 64 bits.
bool KerpleOracle::exact_bias_approx(mpfr_ptr out, std::size_t h, std::int64_t d, mpfr_prec_t w) const {
  if (d == 0) {
    mpfr_set_zero(out, -1);
    return true;
  }
  Mp t(w);
  int ternary = 0;
  if (spec_.kernel == KerpleKernel::log) {
    Mp u(kKerpleArgBits);
    int inexact = mpfr_mul_si(u.get(), raw(a64_[h]), static_cast<long>(d), MPFR_RNDN);
    inexact |= mpfr_add_ui(u.get(), u.get(), 1, MPFR_RNDN);
    if (inexact != 0) throw std::logic_error("kerple reference: 1 + a d was rounded");
    ternary = mpfr_log(t.get(), u.get(), MPFR_RNDN);  // |t - ln u| <= 2^(EXP(t) - w - 1)
    if (mpfr_mul(out, t.get(), raw(p64_[h]), MPFR_RNDN) != 0)
      throw std::logic_error("kerple reference: p t was rounded");
  } else {
    Mp dd(64);
    mpfr_set_si(dd.get(), static_cast<long>(d), MPFR_RNDN);  // exact
    ternary = mpfr_pow(t.get(), dd.get(), raw(p64_[h]), MPFR_RNDN);  // 0 iff t = d^p exactly
    if (mpfr_mul(out, t.get(), raw(a64_[h]), MPFR_RNDN) != 0)
      throw std::logic_error("kerple reference: a t was rounded");
  }
  mpfr_neg(out, out, MPFR_RNDN);
  // inexact: |out - b| <= c 2^(EXP(t) - w - 1) with c = p or a < 2^EXP(c), and EXP(out) >= EXP(c) + EXP(t) - 1
  return ternary == 0;
}

Real KerpleOracle::exact_bias_of(std::size_t h, std::int64_t d) const {
  Real out = make_real(bits_);
  mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_) + kKerpleWorkingMargin;
  for (;;) {
    Mp b(w + 64);
    if (exact_bias_approx(b.get(), h, d, w)) {
      mpfr_set(raw(out), b.get(), MPFR_RNDN);  // the exact value rounded once (-0 stays -0)
      return out;
    }
    if (mpfr_can_round(b.get(), w - 1, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits_) + 1)) {
      mpfr_set(raw(out), b.get(), MPFR_RNDN);
      return out;
    }
    w += w / 2;
    if (w > kZivLimit) throw std::logic_error("kerple reference: the bias did not round within 2^20 bits");
  }
}

// kerple_spec.hpp's float32 steps, each one rounding (mp.hpp rn_*): the reference's -bias_p * log(1 + bias_a * diff)
// and -diff.pow(bias_p) * bias_a with float32 parameters and diff.to(float32).
Real KerpleOracle::megatron_bias_of(std::size_t h, std::int64_t d) const {
  const Real D = rn(F, make_real(d, kEmu), kEmu);
  if (spec_.kernel == KerpleKernel::log) {
    const Real t = rn_mul(F, a32_[h], D, kEmu);
    Real sum = make_real(static_cast<unsigned>(kKerpleArgBits));
    if (mpfr_add_ui(raw(sum), raw(t), 1, MPFR_RNDN) != 0) throw std::logic_error("kerple reference: 1 + t was rounded");
    const Real u = rn(F, sum, kEmu);
    const Real l = rn_log(F, u, kEmu);
    return rn_mul(F, negated(p32_[h]), l, kEmu);
  }
  const Real w = rn_pow(F, D, p32_[h], kEmu);
  return rn_mul(F, negated(w), a32_[h], kEmu);
}

Real KerpleOracle::bias_at(std::size_t h, std::int64_t d) const {
  check_head(h);
  check_distance(d);
  if (spec_.regime == KerpleRegime::megatron) return with_bits(megatron_bias_of(h, d), bits_);
  return exact_bias_of(h, d);
}

Real KerpleOracle::exact_bias_at(std::size_t h, std::int64_t d) const {
  check_head(h);
  check_distance(d);
  return exact_bias_of(h, d);
}

Real KerpleOracle::bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                        std::size_t key_length) const {
  check_head(h);
  check_kerple_site(i, j, query_length, key_length);
  return bias_at(h, distance(i, j, query_length, key_length));
}

Real KerpleOracle::exact_bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                              std::size_t key_length) const {
  check_head(h);
  check_kerple_site(i, j, query_length, key_length);
  return exact_bias_of(h, distance(i, j, query_length, key_length));
}

// scale <q, k> + b (header): the terms scale q_c k_c exactly, summed with the bias by mpfr_sum.
Real KerpleOracle::score(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                         std::size_t key_length, std::span<const double> q, std::span<const double> k,
                         double scale) const {
  check_head(h);
  check_kerple_site(i, j, query_length, key_length);
  check_kerple_vectors(q, k, scale);
  const std::int64_t d = distance(i, j, query_length, key_length);

  std::vector<Real> terms;
  terms.reserve(q.size());
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
  ptrs.push_back(nullptr);

  Real out = make_real(bits_);
  mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_) + kKerpleWorkingMargin;
  for (;;) {
    Mp b(w + 64), s(w);
    ptrs.back() = b.get();
    if (exact_bias_approx(b.get(), h, d, w)) {
      // every term exact: one rounding
      mpfr_sum(raw(out), ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
      return out;
    }
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
    if (w > kZivLimit) throw std::logic_error("kerple reference: the score did not round within 2^20 bits");
  }
}

}  // namespace posenc::reference
