#include "posenc/reference/rope.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "mpfr_util.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::kEmu;
using detail::F;
using detail::D;
using detail::neg;

constexpr const char* kRopeWhere = "rope reference";
// Extra bits over W of the scaled frequencies and the attention factor of the exact regime (header: "formed at
// >= W + 24 bits"); the yarn/llama3 blend factors start at W + 64 and double until their error is certified.
constexpr mpfr_prec_t kScaledExtra = 24;
constexpr mpfr_prec_t kBlendExtra = 64;
constexpr mpfr_prec_t kMaxWorkPrec = mpfr_prec_t{1} << 22;  // the Ziv loops give up here (never reached: header)

using detail::raw;

std::size_t half_of(const RopeSpec& s) { return s.rotary_dim / 2; }

void check_pair(const RopeSpec& s, std::size_t k) {
  const std::size_t h = half_of(s);
  if (k >= h)
    throw Error(kRopeWhere, "k", std::to_string(k),
                "a pair index 0 <= k < rotary_dim/2 = " + std::to_string(h) + " (rotary_dim = " +
                    std::to_string(s.rotary_dim) + ")");
}

void check_channel(const RopeSpec& s, std::size_t channel) {
  if (channel >= s.head_dim)
    throw Error(kRopeWhere, "channel", std::to_string(channel),
                "0 <= channel < head_dim = " + std::to_string(s.head_dim));
}

// The working precision W = bits + 192 must itself be a valid MPFR precision of the oracles.
void check_rope_bits(unsigned bits) {
  if (bits < kMinBits || bits > kMaxBits - kRopeWorkingMargin)
    throw Error(kRopeWhere, "bits", std::to_string(bits),
                std::to_string(kMinBits) + " <= bits <= " + std::to_string(kMaxBits - kRopeWorkingMargin) +
                    " (the exact regime works at bits + " + std::to_string(kRopeWorkingMargin) + ")");
}

// ---- the definition, transcribed ---------------------------------------------------------------------------

// Pair k = channels (2k, 2k+1) (interleaved: GPT-J rotate_every_two, ggml NORMAL's src[0], src[1]) or
// (k, k + h) (halves: HF rotate_half = cat(-x2, x1), ggml NEOX's src[0], src[n_dims/2]).
RopePairChannels pair_channels(const RopeSpec& s, std::size_t k) {
  if (s.layout == Layout::interleaved) return {2 * k, 2 * k + 1};
  return {k, k + half_of(s)};
}

// The axis (0 = t, 1 = h, 2 = w) of pair k < r/2 under spec.mrope (rope.hpp, "Multimodal RoPE", for the lines of
// HF and ggml this transcribes); 0 for mrope none. A valid spec has three sections summing to r/2.
//   sections:    HF Qwen2-VL apply_multimodal_rotary_pos_emb takes chunk i of cos.split(mrope_section * 2) from
//                row i % 3: pairs [0, s_t) -> t, [s_t, s_t + s_h) -> h, the rest -> w (both halves alike).
//   interleaved: HF Qwen3-VL apply_interleaved_mrope overwrites freqs[0][slice(offset, 3 s, 3)] with row 1
//                (offset 1, s = s_h) and row 2 (offset 2, s = s_w); everything else stays row 0.
unsigned char mrope_axis(const RopeSpec& s, std::size_t k) {
  if (s.mrope == RopeMrope::none) return 0;
  const std::int64_t st = s.mrope_section[0], sh = s.mrope_section[1], sw = s.mrope_section[2];
  const auto kk = static_cast<std::int64_t>(k);
  if (s.mrope == RopeMrope::sections) return kk < st ? 0 : kk < st + sh ? 1 : 2;
  if (k % 3 == 1 && kk < 3 * sh) return 1;
  if (k % 3 == 2 && kk < 3 * sw) return 2;
  return 0;
}

// A Real of any MPFR precision (the exact regime's internal values may exceed kMaxBits, which make_real refuses;
// copies and assignments of a Real keep their source's precision).
Real work_real(mpfr_prec_t p) {
  Real r = make_real(kMinBits);
  mpfr_set_prec(raw(r), p);
  mpfr_set_zero(raw(r), +1);
  return r;
}

Real work_real_ui(unsigned long v, mpfr_prec_t p) {
  Real r = work_real(p);
  mpfr_set_ui(raw(r), v, MPFR_RNDN);
  return r;
}

// Upper (lower) bound of |x| as a double.
double mag(const Real& x) {
  Real a = x;
  mpfr_abs(raw(a), raw(a), MPFR_RNDN);  // exact
  return mpfr_get_d(raw(a), MPFR_RNDU);
}
double mag_down(const Real& x) {
  Real a = x;
  mpfr_abs(raw(a), raw(a), MPFR_RNDN);
  return mpfr_get_d(raw(a), MPFR_RNDD);
}

// theta_k = base^(-2k/r) at p bits: the exponent is rounded once (exact when 2k/r is dyadic), then MPFR's pow
// (correctly rounded) of the exact double base. Relative error <= 2^(5.2-p) (header).
Real exact_theta_p(const RopeSpec& s, std::size_t k, mpfr_prec_t p) {
  Real ex = work_real(p);
  mpfr_set_ui(raw(ex), static_cast<unsigned long>(2 * k), MPFR_RNDN);
  mpfr_div_ui(raw(ex), raw(ex), static_cast<unsigned long>(s.rotary_dim), MPFR_RNDN);
  mpfr_neg(raw(ex), raw(ex), MPFR_RNDN);
  Real theta = work_real(p);
  mpfr_pow(raw(theta), raw(make_real(s.base, 64)), raw(ex), MPFR_RNDN);  // a double is exact in 64 bits
  return theta;
}

// ---- context extension, exact regime ------------------------------------------------------------------------
// Formulas: rope.hpp (from CONVENTIONS.md §2.11 and HF modeling_rope_utils.py @26892c16, see the header). Error
// bounds of intermediate values are doubles in units of 2^-p, p the precision of the value they bound (so they
// neither underflow nor overflow at any precision the oracle uses).

void check_work_prec(mpfr_prec_t p) {
  if (p > kMaxWorkPrec)
    throw std::logic_error("rope reference: the correction range/band of this spec is not decided at 2^22 bits");
}

// The scaling has no effect: theta'_k = theta_k. s = 1 gives exactly theta_k for every scaling but dynamic, whose
// a = s L / M - (s - 1) is L / M then (dynamic with L <= M is handled where base' is formed), and longrope, whose
// frequencies are divided by the per-pair factors whatever s is (s only enters its attention factor).
bool no_scaling(const RopeSpec& s) {
  return s.scaling == RopeScaling::none ||
         (s.factor == 1.0 && s.scaling != RopeScaling::dynamic && s.scaling != RopeScaling::longrope);
}

// LongRoPE's per-pair factors e (CONVENTIONS.md §2.11; HF v5 _compute_longrope_parameters: `if seq_len and seq_len >
// original_max_position_embeddings: ext_factors = long_factor else short_factor`): the long list when seq_len > L0,
// else the short one (seq_len 0 = None, at init: short). The spec guarantees r/2 entries, each >= 1.
const std::vector<double>& longrope_factors(const RopeSpec& s) {
  return s.seq_len > s.original_context ? s.long_factor : s.short_factor;
}

// Extra bits of the exact regime's angle when some theta'_k exceeds 1 (header). The spec refuses longrope factors
// below 1 (LongRoPE's rescale factors are >= 1), so E = 0 for every valid spec; kept so that the oracle stays right
// if that bound is ever relaxed: longrope with a factor e_k < 1 has
// theta'_k = theta_k / e_k <= 1 / e_k < 2^(-ilogb(e_k)) (ilogb(e) = floor(log2 e), also for subnormal e), so every
// theta'_k < 2^E with E = max(0, max_k -ilogb(e_k)); every other scaling keeps theta'_k <= theta_0 = 1 (E = 0).
unsigned angle_extra_bits(const RopeSpec& s) {
  if (s.scaling != RopeScaling::longrope) return 0;
  int e = 0;
  for (double f : longrope_factors(s)) e = std::max(e, -std::ilogb(f));
  return static_cast<unsigned>(e);
}

// Is x - e > t (+1), x + e < t (-1), or neither (0)? e = e_units 2^-p; decided with directed roundings, so +-1 is
// certain.
int side(const Real& x, double e_units, mpfr_prec_t p, const Real& t) {
  if (!(e_units >= 0) || std::isinf(e_units)) return 0;
  Real e = work_real(64);
  mpfr_set_d(raw(e), e_units, MPFR_RNDU);
  mpfr_mul_2si(raw(e), raw(e), -static_cast<long>(p), MPFR_RNDU);
  Real b = work_real(mpfr_get_prec(raw(x)) + 64);
  mpfr_sub(raw(b), raw(x), raw(e), MPFR_RNDD);
  if (mpfr_greater_p(raw(b), raw(t))) return 1;
  mpfr_add(raw(b), raw(x), raw(e), MPFR_RNDU);
  if (mpfr_less_p(raw(b), raw(t))) return -1;
  return 0;
}

// a > b_units 2^-p for a >= 0 (in log2 terms: no underflow).
bool exceeds(double a, double b_units, mpfr_prec_t p) {
  if (b_units <= 0) return a > 0;
  if (!(a > 0) || std::isinf(b_units)) return false;
  return std::log2(a) > std::log2(b_units) - static_cast<double>(p) + 1e-6;
}

struct Certified {
  Real v;
  double err;  // |v - true| <= err 2^-prec(v)
};

// q = n / d at p bits, n and d carrying errors en, ed (units of 2^-p). ok = false when |d| <= 2 ed 2^-p (d not
// certainly away from 0). Then |n_t/d_t - n/d| <= (en + |n/d| ed) / |d_t| with |d_t| >= |d|/2, plus the rounding.
Certified certified_quotient(const Real& n, double en, const Real& d, double ed, mpfr_prec_t p, bool& ok) {
  Certified q{work_real(p), 0};
  const double dd = mag_down(d);
  ok = exceeds(dd, 2 * ed, p);
  if (!ok) return q;
  mpfr_div(raw(q.v), raw(n), raw(d), MPFR_RNDN);
  const double qm = mag(q.v);
  q.err = 2.02 * (en + qm * ed) / dd + qm;
  return q;
}

// YaRN: cd(beta) = r ln(L0 / (2 pi beta)) / (2 ln base) at p bits. L0 / (2 pi beta) carries a relative error
// <= 3.01 2^-p (pi, the product, the quotient), so its ln an absolute one <= 3.1 2^-p plus its own rounding
// |l| 2^-p; ln(base) relative 2^-p (base > 1, ln base >= 2^-53); the product and the quotient 2^-p each:
//   |cd - cd_true| <= 1.01 (r (3.1 + |l|) / (2 ln base) + 3.02 |cd|) 2^-p.
Certified yarn_cd(const RopeSpec& s, double beta, mpfr_prec_t p) {
  Real t = work_real(p);
  mpfr_const_pi(raw(t), MPFR_RNDN);
  mpfr_mul_d(raw(t), raw(t), 2.0 * beta, MPFR_RNDN);  // 2 beta: an exact double
  Real l = work_real(p);
  mpfr_div(raw(l), raw(make_real(s.original_context, 64)), raw(t), MPFR_RNDN);
  mpfr_log(raw(l), raw(l), MPFR_RNDN);
  Real lb = work_real(p);
  mpfr_log(raw(lb), raw(make_real(s.base, 64)), MPFR_RNDN);
  Certified cd{work_real(p), 0};
  mpfr_mul_ui(raw(cd.v), raw(l), static_cast<unsigned long>(s.rotary_dim), MPFR_RNDN);
  mpfr_div(raw(cd.v), raw(cd.v), raw(lb), MPFR_RNDN);
  mpfr_div_2ui(raw(cd.v), raw(cd.v), 1, MPFR_RNDN);
  cd.err = 1.01 * (static_cast<double>(s.rotary_dim) * (3.1 + mag(l)) / (2 * mag_down(lb)) + 3.02 * mag(cd.v));
  return cd;
}

// floor (ceil) of a certified value; `certain` is cleared unless v -+ err lie in one integer interval (the true
// value is never an integer: header).
Real certified_round(const Certified& x, mpfr_prec_t p, bool up, bool& certain) {
  Real e = work_real(64);
  mpfr_set_d(raw(e), x.err, MPFR_RNDU);
  mpfr_mul_2si(raw(e), raw(e), -static_cast<long>(p), MPFR_RNDU);
  Real lo = work_real(p + 64), hi = work_real(p + 64);
  mpfr_sub(raw(lo), raw(x.v), raw(e), MPFR_RNDD);
  mpfr_add(raw(hi), raw(x.v), raw(e), MPFR_RNDU);
  if (up) {
    mpfr_ceil(raw(lo), raw(lo));
    mpfr_ceil(raw(hi), raw(hi));
  } else {
    mpfr_floor(raw(lo), raw(lo));
    mpfr_floor(raw(hi), raw(hi));
  }
  if (!mpfr_equal_p(raw(lo), raw(hi))) certain = false;
  Real out = work_real(p);  // |cd| < 2^80 (ln base >= 2^-53): the integer fits
  if (up)
    mpfr_ceil(raw(out), raw(x.v));
  else
    mpfr_floor(raw(out), raw(x.v));
  return out;
}

// YaRN's correction range in real arithmetic at p bits (HF find_correction_range and linear_ramp_factor's
// "if min == max: max += 0.001", modeling_rope_utils.py @26892c16 _compute_yarn_parameters).
struct ExactYarn {
  Real low, high, ramp_high;
  double err_low = 0, err_high = 0;  // units of 2^-prec; err_high bounds high and ramp_high
  mpfr_prec_t prec = 0;
  bool certain = true;  // floor/ceil and the low == high test decided
};

ExactYarn exact_yarn_range_at(const RopeSpec& s, mpfr_prec_t p) {
  ExactYarn y{work_real(p), work_real(p), work_real(p)};
  y.prec = p;
  const Real zero = work_real(64), top = work_real_ui(static_cast<unsigned long>(s.rotary_dim - 1), 64);
  const Certified cf = yarn_cd(s, s.beta_fast, p), cs = yarn_cd(s, s.beta_slow, p);
  bool equal = false;
  if (s.truncate) {
    const Real fl = certified_round(cf, p, false, y.certain), ce = certified_round(cs, p, true, y.certain);
    mpfr_max(raw(y.low), raw(fl), raw(zero), MPFR_RNDN);  // integers: exact
    mpfr_min(raw(y.high), raw(ce), raw(top), MPFR_RNDN);
    equal = mpfr_equal_p(raw(y.low), raw(y.high)) != 0;
  } else {
    // max(., 0) and min(., r - 1) are 1-Lipschitz: the error carries over, or vanishes where the clamp is certain.
    mpfr_max(raw(y.low), raw(cf.v), raw(zero), MPFR_RNDN);
    y.err_low = side(cf.v, cf.err, p, zero) < 0 ? 0.0 : cf.err;
    mpfr_min(raw(y.high), raw(cs.v), raw(top), MPFR_RNDN);
    y.err_high = side(cs.v, cs.err, p, top) > 0 ? 0.0 : cs.err;
    // Real equality needs beta_fast == beta_slow (cd is strictly monotone in beta) and 0 < cd < r - 1 (cd is
    // never exactly 0 or r - 1): then low and high are the same number.
    if (s.beta_fast == s.beta_slow) {
      const int above = side(cf.v, cf.err, p, zero), below = side(cf.v, cf.err, p, top);
      if (above == 0 || below == 0) y.certain = false;
      equal = above > 0 && below < 0;
    }
  }
  y.ramp_high = y.high;
  if (equal) {  // high + 1/1000, the real number: the rounded 1/1000 and the sum add |ramp_high| + 1 units
    Real milli = work_real(p);
    mpfr_ui_div(raw(milli), 1, raw(work_real_ui(1000, 64)), MPFR_RNDN);
    mpfr_add(raw(y.ramp_high), raw(y.high), raw(milli), MPFR_RNDN);
    y.err_high += 1.0 + mag(y.ramp_high);
  }
  return y;
}

ExactYarn exact_yarn_range(const RopeSpec& s, mpfr_prec_t p) {
  for (;; p *= 2) {
    check_work_prec(p);
    ExactYarn y = exact_yarn_range_at(s, p);
    if (y.certain) return y;
  }
}

// ramp_k = clamp((k - low) / (ramp_high - low), 0, 1) with its error (units of 2^-prec). exact: 0 or 1 when the
// clamp is certain (then value is exactly that), -1 otherwise. ok = false: ramp_high - low not certainly away
// from 0 at this precision.
struct Ramp {
  Real value;
  double err = 0;
  int exact = -1;
  bool ok = true;
};

Ramp clamp01(const Certified& q, mpfr_prec_t p) {
  Ramp r{work_real(p)};
  const Real zero = work_real(64), one = work_real_ui(1, 64);
  if (side(q.v, q.err, p, one) > 0) {
    r.exact = 1;
    mpfr_set_ui(raw(r.value), 1, MPFR_RNDN);
  } else if (side(q.v, q.err, p, zero) < 0) {
    r.exact = 0;
  } else {
    mpfr_max(raw(r.value), raw(q.v), raw(zero), MPFR_RNDN);  // clamp is 1-Lipschitz: the error carries over
    mpfr_min(raw(r.value), raw(r.value), raw(one), MPFR_RNDN);
    r.err = q.err;
  }
  return r;
}

Ramp exact_yarn_ramp(const ExactYarn& y, std::size_t k) {
  const mpfr_prec_t p = y.prec;
  Real n = work_real(p), d = work_real(p);
  mpfr_sub(raw(n), raw(work_real_ui(static_cast<unsigned long>(k), 64)), raw(y.low), MPFR_RNDN);
  mpfr_sub(raw(d), raw(y.ramp_high), raw(y.low), MPFR_RNDN);
  bool ok = true;
  const Certified q =
      certified_quotient(n, y.err_low + mag(n), d, y.err_low + y.err_high + mag(d), p, ok);
  if (!ok) return Ramp{work_real(p), 0, -1, false};
  return clamp01(q, p);
}

// Is a ramp error of e units at precision p small enough for theta'_k at w bits? The blend factor
// f = 1 - ramp (1 - 1/s) >= 1/s then has relative error <= s e 2^-p <= 2^-(w+4) (header).
bool ramp_precise(double e, mpfr_prec_t p, unsigned w, double s) {
  return e == 0 ||
         std::log2(e) + std::log2(s) <= static_cast<double>(p) - static_cast<double>(w) - 4.0 - 1e-6;
}

// theta_k (1 - ramp (1 - 1/s)) rounded to w bits, formed at the ramp's precision p (>= w + 64): the four roundings
// of the blend factor add <= 4 s 2^-p relative, theta_k 2^(5.2-p).
Real exact_blend(const RopeSpec& s, std::size_t k, const Real& ramp, unsigned w) {
  const mpfr_prec_t p = mpfr_get_prec(raw(ramp));
  Real f = work_real(p);
  mpfr_set_d(raw(f), s.factor, MPFR_RNDN);
  mpfr_ui_div(raw(f), 1, raw(f), MPFR_RNDN);
  mpfr_ui_sub(raw(f), 1, raw(f), MPFR_RNDN);
  mpfr_mul(raw(f), raw(f), raw(ramp), MPFR_RNDN);
  mpfr_ui_sub(raw(f), 1, raw(f), MPFR_RNDN);
  Real out = work_real(w);
  mpfr_mul(raw(out), raw(exact_theta_p(s, k, p)), raw(f), MPFR_RNDN);
  return out;
}

// theta_k / d at w bits: theta_k at w + 24 bits, one division by the exact double d (d = s: linear, and every
// fully interpolated pair; d = e_k: longrope).
Real exact_theta_divided(const RopeSpec& s, std::size_t k, unsigned w, double d) {
  Real out = work_real(w);
  mpfr_div_d(raw(out), raw(exact_theta_p(s, k, w + kScaledExtra)), d, MPFR_RNDN);
  return out;
}

// Llama 3.1: u_k = L0 theta_k / (2 pi) = L0 / wl_k at p bits; wl_k < L0/hff <=> u_k > hff, wl_k > L0/lff <=>
// u_k < lff. Error: theta_k 2^(5.2-p) relative (< 28.7 2^-p), L0 exact, the product, pi and the quotient:
// <= 32 |u| 2^-p.
Certified llama3_u(const RopeSpec& s, std::size_t k, mpfr_prec_t p) {
  Certified u{exact_theta_p(s, k, p), 0};
  mpfr_mul(raw(u.v), raw(u.v), raw(make_real(s.original_context, 64)), MPFR_RNDN);
  Real pi_p = work_real(p);
  mpfr_const_pi(raw(pi_p), MPFR_RNDN);
  mpfr_div(raw(u.v), raw(u.v), raw(pi_p), MPFR_RNDN);
  mpfr_div_2ui(raw(u.v), raw(u.v), 1, MPFR_RNDN);
  u.err = 32.0 * mag(u.v);
  return u;
}

// The llama3 band of pair k at p bits (+1 kept, -1 divided, 0 smoothed); `certain` cleared when undecided.
int llama3_band_at(const RopeSpec& s, const Certified& u, mpfr_prec_t p, bool& certain) {
  const int vs_high = side(u.v, u.err, p, make_real(s.high_freq_factor, 64));
  const int vs_low = side(u.v, u.err, p, make_real(s.low_freq_factor, 64));
  if (vs_high > 0) return 1;
  if (vs_low < 0) return -1;
  if (!(vs_high < 0 && vs_low > 0)) certain = false;
  return 0;
}

// 1 - clamp(sm, 0, 1) with sm = (u - lff) / (hff - lff): llama3's blend in yarn's form, theta_k (1 - ramp (1 - 1/s))
// = (1 - sm) theta_k / s + sm theta_k. hff - lff > 0 is certain (the spec requires hff > lff).
Ramp llama3_ramp(const RopeSpec& s, const Certified& u, mpfr_prec_t p) {
  Real n = work_real(p), d = work_real(p);
  mpfr_sub(raw(n), raw(u.v), raw(make_real(s.low_freq_factor, 64)), MPFR_RNDN);
  mpfr_sub(raw(d), raw(make_real(s.high_freq_factor, 64)), raw(make_real(s.low_freq_factor, 64)), MPFR_RNDN);
  bool ok = true;
  const Certified sm = certified_quotient(n, u.err + mag(n), d, mag(d), p, ok);
  if (!ok) return Ramp{work_real(p), 0, -1, false};
  Ramp r = clamp01(sm, p);
  mpfr_ui_sub(raw(r.value), 1, raw(r.value), MPFR_RNDN);  // exact for 0 and 1, else one more 2^-p
  if (r.exact >= 0) r.exact = 1 - r.exact;
  r.err += 1.0;
  return r;
}

// theta'_k of the exact regime at w bits, for every k of one spec (the yarn range is computed once, refined when a
// pair needs it).
class ExactThetas {
 public:
  ExactThetas(const RopeSpec& s, unsigned w) : s_(s), w_(w) {
    if (no_scaling(s)) return;
    if (s.scaling == RopeScaling::ntk ||
        (s.scaling == RopeScaling::dynamic && std::max(s.seq_len, s.max_context) != s.max_context))
      log_base_ = log_scaled_base(s, w + kScaledExtra);
    if (s.scaling == RopeScaling::yarn) yarn_ = exact_yarn_range(s, w + kBlendExtra);
  }

  Real operator()(std::size_t k) {
    if (no_scaling(s_)) return exact_theta_p(s_, k, w_);
    switch (s_.scaling) {
      case RopeScaling::none: break;
      case RopeScaling::linear: return exact_theta_divided(s_, k, w_, s_.factor);
      case RopeScaling::ntk:
      case RopeScaling::dynamic: {
        if (!log_base_) return exact_theta_p(s_, k, w_);  // dynamic within max_context: a = 1
        // exp(-(2k/r) ln base'): |exponent| <= ln(1e12) + 2 ln(2^60) < 111, formed with <= 6 roundings at
        // w + 24 bits, so exp's relative error <= 2^(9.4-w-24) before the final rounding to w.
        const mpfr_prec_t p = mpfr_get_prec(raw(*log_base_));
        Real x = work_real(p);
        mpfr_mul_ui(raw(x), raw(*log_base_), static_cast<unsigned long>(2 * k), MPFR_RNDN);
        mpfr_div_ui(raw(x), raw(x), static_cast<unsigned long>(s_.rotary_dim), MPFR_RNDN);
        mpfr_neg(raw(x), raw(x), MPFR_RNDN);
        Real out = work_real(w_);
        mpfr_exp(raw(out), raw(x), MPFR_RNDN);
        return out;
      }
      case RopeScaling::yarn:
        for (;;) {
          const Ramp r = exact_yarn_ramp(*yarn_, k);
          if (r.ok && r.exact == 0) return exact_theta_p(s_, k, w_);
          if (r.ok && r.exact == 1) return exact_theta_divided(s_, k, w_, s_.factor);
          if (r.ok && ramp_precise(r.err, yarn_->prec, w_, s_.factor)) return exact_blend(s_, k, r.value, w_);
          yarn_ = exact_yarn_range(s_, 2 * yarn_->prec);
        }
      case RopeScaling::llama3:
        for (mpfr_prec_t p = w_ + kBlendExtra;; p *= 2) {
          check_work_prec(p);
          const Certified u = llama3_u(s_, k, p);
          bool certain = true;
          const int band = llama3_band_at(s_, u, p, certain);
          if (certain && band > 0) return exact_theta_p(s_, k, w_);
          if (certain && band < 0) return exact_theta_divided(s_, k, w_, s_.factor);
          const Ramp r = llama3_ramp(s_, u, p);  // continuous across the band edges: no decision needed
          if (r.ok && r.exact == 0) return exact_theta_p(s_, k, w_);
          if (r.ok && r.exact == 1) return exact_theta_divided(s_, k, w_, s_.factor);
          if (r.ok && ramp_precise(r.err, p, w_, s_.factor)) return exact_blend(s_, k, r.value, w_);
        }
      case RopeScaling::longrope: {
        // CONVENTIONS.md §2.11 longrope (HF v5 _compute_longrope_parameters: inv_freq = 1.0 / (ext_factors *
        // base**inv_freq_shape)): theta'_k = theta_k / e_k, e_k the double as given (exact). e_k = 1 is theta_k
        // itself (the same bits as the unscaled frequency, not a rounding of the w + 24-bit one).
        const double e = longrope_factors(s_)[k];
        if (e == 1.0) return exact_theta_p(s_, k, w_);
        return exact_theta_divided(s_, k, w_, e);
      }
    }
    throw std::logic_error("rope reference: unknown scaling");
  }

 private:
  // ln(base') = ln(base) + r/(r-2) ln(a) at p bits (a = s for ntk; dynamic: a = (s (L - M) + M) / M, the
  // numerator exact in p >= 96 bits, one division). A sum of positive terms: relative error <= 4 2^-p.
  static Real log_scaled_base(const RopeSpec& s, mpfr_prec_t p) {
    Real a = work_real(p);
    if (s.scaling == RopeScaling::ntk) {
      mpfr_set_d(raw(a), s.factor, MPFR_RNDN);
    } else {
      const std::int64_t L = std::max(s.seq_len, s.max_context), M = s.max_context;
      Real num = work_real(p);
      mpfr_mul_d(raw(num), raw(make_real(L - M, 64)), s.factor, MPFR_RNDN);   // exact: <= 53 + 41 bits
      mpfr_add(raw(num), raw(num), raw(make_real(M, 64)), MPFR_RNDN);          // exact
      mpfr_div(raw(a), raw(num), raw(make_real(M, 64)), MPFR_RNDN);
    }
    Real la = work_real(p), e1 = work_real_ui(static_cast<unsigned long>(s.rotary_dim), p);
    mpfr_log(raw(la), raw(a), MPFR_RNDN);
    mpfr_div_ui(raw(e1), raw(e1), static_cast<unsigned long>(s.rotary_dim - 2), MPFR_RNDN);
    mpfr_mul(raw(la), raw(la), raw(e1), MPFR_RNDN);
    Real lb = work_real(p);
    mpfr_log(raw(lb), raw(make_real(s.base, 64)), MPFR_RNDN);
    mpfr_add(raw(lb), raw(lb), raw(la), MPFR_RNDN);
    return lb;
  }

  const RopeSpec& s_;
  unsigned w_;
  std::optional<Real> log_base_;
  std::optional<ExactYarn> yarn_;
};

// g(s, x) = x ln(s) / 10 + 1 (1 for s <= 1) at p bits: ln, the product, the quotient and a sum of positive terms,
// relative error <= 4 2^-p.
Real exact_mscale(double s, double x, mpfr_prec_t p) {
  Real g = work_real_ui(1, p);
  if (s <= 1.0) return g;
  mpfr_log(raw(g), raw(make_real(s, 64)), MPFR_RNDN);
  mpfr_mul_d(raw(g), raw(g), x, MPFR_RNDN);
  mpfr_div_ui(raw(g), raw(g), 10, MPFR_RNDN);
  mpfr_add_ui(raw(g), raw(g), 1, MPFR_RNDN);
  return g;
}

// The attention factor m at w bits (header): formed at w + 24 bits (relative error <= 9 2^-(w+24)), rounded once.
Real exact_attention(const RopeSpec& s, unsigned w) {
  Real m = work_real_ui(1, w);
  if (s.scaling == RopeScaling::longrope) {
    // CONVENTIONS.md §2.11 longrope (HF v5 _compute_longrope_parameters): the given attention_factor; else 1 for
    // s <= 1; else sqrt(1 + ln s / ln L0). At p = w + 24 bits: ln s, ln L0 (L0 >= 2: ln L0 >= 0.69) and the
    // quotient each 2^-p relative, the sum of positive terms 2^-p, sqrt halves the relative error and adds 2^-p:
    // relative error <= 4 2^-p, then one rounding to w. (The spec refuses L0 = 1, whose ln is 0.)
    if (s.attention_factor > 0) {
      mpfr_set_d(raw(m), s.attention_factor, MPFR_RNDN);  // the given double, exactly (w >= 216)
      return m;
    }
    if (s.factor <= 1.0) return m;
    const mpfr_prec_t p = w + kScaledExtra;
    Real q = work_real(p), l0 = work_real(p);
    mpfr_log(raw(q), raw(make_real(s.factor, 64)), MPFR_RNDN);
    mpfr_log(raw(l0), raw(make_real(s.original_context, 64)), MPFR_RNDN);
    mpfr_div(raw(q), raw(q), raw(l0), MPFR_RNDN);
    mpfr_add_ui(raw(q), raw(q), 1, MPFR_RNDN);
    mpfr_sqrt(raw(m), raw(q), MPFR_RNDN);
    return m;
  }
  if (s.scaling != RopeScaling::yarn) return m;
  if (s.attention_factor > 0) {
    mpfr_set_d(raw(m), s.attention_factor, MPFR_RNDN);  // the given double, exactly (w >= 216)
    return m;
  }
  const mpfr_prec_t p = w + kScaledExtra;
  if (s.mscale != 0 && s.mscale_all_dim != 0) {
    const Real num = exact_mscale(s.factor, s.mscale, p), den = exact_mscale(s.factor, s.mscale_all_dim, p);
    mpfr_div(raw(m), raw(num), raw(den), MPFR_RNDN);
  } else {
    const Real g = exact_mscale(s.factor, 1.0, p);
    mpfr_set(raw(m), raw(g), MPFR_RNDN);  // (mpfr_set is a macro: no temporaries in its arguments)
  }
  return m;
}

// ---- float32 and Python double steps ---------------------------------------------------------------------------

Real f32_of_int(std::int64_t n) { return rn(F, make_real(n, kEmu), kEmu); }
Real py(double v) { return make_real(v, kEmu); }  // a Python float, exactly
Real py_int(std::int64_t n) { return make_real(n, kEmu); }  // a Python int (|n| < 2^63), exactly
Real rn32(const Real& x) { return rn(F, x, kEmu); }  // a Python number (or a wider value) meeting a float32 tensor

// RN32(x^y) for binary32 x > 0 and y: MPFR's pow correctly rounded to 24 bits. Only used where the result is a
// normal binary32 number (x = RN32(base) in [1, 1e12] and |y| <= 1 give 1e-12 <= x^y <= 1e12), so no
// subnormal/overflow handling is needed; anything else is a bug in the caller.
Real rn32_pow(const Real& x, const Real& y) {
  mpfr_t t;
  mpfr_init2(t, 24);
  mpfr_pow(t, raw(x), raw(y), MPFR_RNDN);
  const bool normal = mpfr_regular_p(t) && mpfr_get_exp(t) >= -125 && mpfr_get_exp(t) <= 128;
  Real out = make_real(kEmu);
  mpfr_set(raw(out), t, MPFR_RNDN);  // exact
  mpfr_clear(t);
  if (!normal) throw std::logic_error("rope reference: pow result outside the binary32 normal range");
  return out;
}

// RN32(a + b) for binary32 a, b: the exact sum (a sum of two binary32 numbers fits in 278 bits), rounded once
// (rn() handles overflow to +-inf).
Real rope_rn32_add(const Real& a, const Real& b) {
  Real t = make_real(320);
  mpfr_add(raw(t), raw(a), raw(b), MPFR_RNDN);  // exact
  return rn(F, t, kEmu);
}
Real rn32_sub(const Real& a, const Real& b) {
  Real t = make_real(320);
  mpfr_sub(raw(t), raw(a), raw(b), MPFR_RNDN);  // exact
  return rn(F, t, kEmu);
}
// RN64(a +- b) for doubles (Python float arithmetic): the exact sum fits in 2200 bits.
Real rn64_add(const Real& a, const Real& b) {
  Real t = make_real(2200);
  mpfr_add(raw(t), raw(a), raw(b), MPFR_RNDN);  // exact
  return rn(D, t, kEmu);
}
Real rn64_sub(const Real& a, const Real& b) {
  Real t = make_real(2200);
  mpfr_sub(raw(t), raw(a), raw(b), MPFR_RNDN);  // exact
  return rn(D, t, kEmu);
}

// HF RoFormer's float64 divisor of pair k (RoFormerSinusoidalPositionalEmbedding.create_weight, transformers@0166003b
// models/roformer/modeling_roformer.py: `pos / np.power(10000, 2 * (j // 2) / dim)` for columns j = 2k and 2k + 1):
// w_k = RN64(pow(RN64(base), RN64(2k / r))), the exponent a Python int / int (true division, correctly rounded), the
// power numpy's float64 pow (here correctly rounded); dim = r.
Real roformer_divisor64(const RopeSpec& s, std::size_t k) {
  const Real e = rn_div(D, py_int(static_cast<std::int64_t>(2 * k)), py_int(static_cast<std::int64_t>(s.rotary_dim)), kEmu);
  return rn_pow(D, py(s.base), e, kEmu);
}

// HF's float32 exponent e_k = RN32(RN32(2k) / RN32(r)) and the pieces of the default formula for a float32 base
// that may be +inf (an overflowed dynamic base: inf^0 = 1, inf^e = inf for e > 0, 1/inf = 0, as IEEE/torch).
Real hf_exponent32(const RopeSpec& s, std::size_t k) {
  return rn_div(F, f32_of_int(static_cast<std::int64_t>(2 * k)), f32_of_int(static_cast<std::int64_t>(s.rotary_dim)),
                kEmu);
}
Real hf_pos_freq32(const Real& base32, const RopeSpec& s, std::size_t k) {
  if (mpfr_inf_p(raw(base32))) return k == 0 ? make_real(1, kEmu) : base32;
  return rn_pow(F, base32, hf_exponent32(s, k), kEmu);
}
Real rn32_recip(const Real& t) {
  if (mpfr_inf_p(raw(t))) return make_real(kEmu);  // +0
  return rn_div(F, make_real(1, kEmu), t, kEmu);
}

// HF: inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
// (transformers@ef46806 modeling_rope_utils.py _compute_default_rope_parameters; GPT-J's
// create_sinusoidal_positions, transformers@cb6cd7e, and Meta's precompute_freqs_cis, llama@0504cf4, are the
// same expression; @26892c16 repeats it in every scaled init function). Step by step in float32 on the CPU:
//   .float()          RN32(2k)                  (exact: 2k < r <= 2^16)
//   / dim             RN32(RN32(2k) / RN32(r))  (aten cpu div_true_kernel: a / b in float32)
//   base ** t         RN32(pow(RN32(base), t))  (pow(Scalar, Tensor): the Python float becomes a float32 tensor)
//   1.0 / t           RN32(1 / t)               (a float32 reciprocal or division: RN32(1/t) either way)
Real hf_default_inv32(const Real& base32, const RopeSpec& s, std::size_t k) {
  return rn32_recip(hf_pos_freq32(base32, s, k));
}

// The Python double r/(r-2) (dim / (dim - 2)).
Real hf_ntk_exponent64(const RopeSpec& s) {
  return rn_div(D, py_int(static_cast<std::int64_t>(s.rotary_dim)), py_int(static_cast<std::int64_t>(s.rotary_dim - 2)),
                kEmu);
}

// HF @26892c16 _compute_dynamic_ntk_parameters with a Python int seq_len (or None: max_position_embeddings), all in
// Python doubles:  base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
// with seq_len = max(seq_len, max_position_embeddings). Returns that double.
Real hf_dynamic_init_base64(const RopeSpec& s) {
  const std::int64_t L = std::max(s.seq_len, s.max_context);
  Real t = rn_mul(D, py(s.factor), py_int(L), kEmu);       // float * int: the int converted exactly (< 2^53)
  t = rn_div(D, t, py_int(s.max_context), kEmu);
  t = rn64_sub(t, rn64_sub(py(s.factor), py(1.0)));
  t = rn_pow(D, t, hf_ntk_exponent64(s), kEmu);           // Python float ** float: C pow
  return rn_mul(D, py(s.base), t, kEmu);
}

// The same expression in the module's forward (dynamic_rope_update -> dynamic_frequency_update, @26892c16):
// seq_len = torch.max(position_ids) + 1 is an int64 0-dim tensor, torch.maximum keeps it (seq_len > max_context
// here), and every step is a float32 0-dim tensor op:
//   factor * seq_len        RN32(RN32(s) RN32(L))        (int64 tensor meets a Python float: float32)
//   / max_position_emb.     RN32(x / RN32(M))            (true division)
//   - (factor - 1)          RN32(x - RN32(RN64(s - 1)))  (Python double, then float32)
//   ** (dim / (dim - 2))    RN32(RN64(pow(x, RN64(r/(r-2)))))  PyTorch CPU pow(Tensor, Scalar) for float keeps the
//                           exponent a double and its scalar lambda is std::pow(float base, double exp): a double pow
//                           of the float value, returned as float (aten/src/ATen/native/cpu/PowKernel.cpp
//                           pow_tensor_scalar_kernel, pytorch@0c678301357ded1cde76167cbab8b71866aea98e; newer
//                           versions route it through pow_tensor_scalar_optimized_kernel<scalar_t, double> with the
//                           same scalar lambda). A 0-dim tensor takes that scalar lambda: cpu_kernel_vec's
//                           vectorized_loop runs the Vectorized body only on blocks of 2 * Vec::size() and leaves the
//                           rest (here all of n = 1) to basic_loop (aten/src/ATen/native/cpu/Loops.h,
//                           pytorch@d35f668d792f5c2b5fe88cb2a1c9f4401855bd76). (The Vectorized body would round the
//                           exponent to float: not this case.) The special exponents 2 (r = 4: base * base, the same
//                           value), 3, 0.5, -0.5, -1, -2 need r/(r-2) to be one of them; only r = 4 is.
//   base * that             RN32(RN32(base) x')          (may overflow to +inf for extreme specs)
// then inv_freq = 1.0 / (base' ** (arange(0, dim, 2).float() / dim)): a 0-dim float32 base' ** float32 tensor.
Real hf_dynamic_forward_base32(const RopeSpec& s) {
  Real x = rn_mul(F, rn32(py(s.factor)), f32_of_int(s.seq_len), kEmu);
  x = rn_div(F, x, f32_of_int(s.max_context), kEmu);
  x = rn32_sub(x, rn32(rn64_sub(py(s.factor), py(1.0))));
  x = rn32(rn_pow(D, x, hf_ntk_exponent64(s), kEmu));
  return rn_mul(F, rn32(py(s.base)), x, kEmu);
}

// NTK-aware static (not an HF rope_type; CONVENTIONS.md §2.11 "emulate by changing rope_theta"): the Python double
// base * factor ** (dim / (dim - 2)), then the default formula.
Real hf_ntk_base64(const RopeSpec& s) {
  return rn_mul(D, py(s.base), rn_pow(D, py(s.factor), hf_ntk_exponent64(s), kEmu), kEmu);
}

// HF @26892c16 _compute_yarn_parameters, the Python part: find_correction_dim / find_correction_range /
// linear_ramp_factor's "if min == max: max += 0.001", in Python doubles (low, high Python ints when truncate).
struct HfYarn {
  Real low = make_real(kEmu), high = make_real(kEmu), ramp_high = make_real(kEmu);
  Real width = make_real(kEmu);  // max - min of linear_ramp_factor: exact for two ints, else RN64
};

HfYarn hf_yarn_range(const RopeSpec& s) {
  const Real pi64 = rn(D, pi(128), kEmu);  // math.pi
  // (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))
  auto cd = [&](double beta) {
    const Real t = rn_mul(D, py(beta * 2.0), pi64, kEmu);  // num_rotations * 2: exact
    const Real v = rn_div(D, py_int(s.original_context), t, kEmu);
    const Real num = rn_mul(D, py_int(static_cast<std::int64_t>(s.rotary_dim)), rn_log(D, v, kEmu), kEmu);
    const Real den = rn_mul(D, py(2.0), rn_log(D, py(s.base), kEmu), kEmu);  // exact doubling
    return rn_div(D, num, den, kEmu);
  };
  HfYarn y;
  Real lo = cd(s.beta_fast), hi = cd(s.beta_slow);
  if (s.truncate) {  // math.floor / math.ceil: Python ints, exactly the doubles' floor / ceil
    mpfr_floor(raw(lo), raw(lo));
    mpfr_ceil(raw(hi), raw(hi));
  }
  const Real zero = make_real(kEmu), top = py_int(static_cast<std::int64_t>(s.rotary_dim - 1));
  mpfr_max(raw(y.low), raw(lo), raw(zero), MPFR_RNDN);   // max(low, 0), min(high, dim - 1): exact
  mpfr_min(raw(y.high), raw(hi), raw(top), MPFR_RNDN);
  const bool equal = mpfr_equal_p(raw(y.low), raw(y.high)) != 0;  // min == max (Python compares exactly)
  // max += 0.001: float(max) + 0.001 (max an int from ceil, or a float; |max| < 2^53 converts exactly)
  y.ramp_high = equal ? rn64_add(rn(D, y.high, kEmu), py(0.001)) : y.high;
  // max - min: two Python ints subtract exactly; otherwise the ints convert to float and the difference rounds
  Real exact = make_real(2200);
  if (s.truncate && !equal)
    mpfr_sub(raw(exact), raw(y.ramp_high), raw(y.low), MPFR_RNDN);
  else
    exact = rn64_sub(rn(D, y.ramp_high, kEmu), rn(D, y.low, kEmu));
  y.width = with_bits(exact, 2200);
  return y;
}

// HF's float32 inv_freq with spec.scaling applied (the `inv'_k` of the header), for every k of one spec.
class HfFrequencies {
 public:
  explicit HfFrequencies(const RopeSpec& s) : s_(s) {
    base32_ = rn32(py(s.base));
    factor32_ = rn32(py(s.factor));
    switch (s.scaling) {
      case RopeScaling::ntk: base32_ = rn32(hf_ntk_base64(s)); break;
      case RopeScaling::dynamic:
        base32_ = s.seq_len > s.max_context ? hf_dynamic_forward_base32(s) : rn32(hf_dynamic_init_base64(s));
        break;
      case RopeScaling::yarn: {
        const HfYarn y = hf_yarn_range(s);
        low32_ = rn32(y.low);    // tensor - Python int/float: the number becomes float32
        width32_ = rn32(y.width);  // tensor / Python number: true float32 division by RN32(number)
        if (mpfr_zero_p(raw(width32_)))
          throw std::logic_error("rope reference: yarn correction range narrower than float32 (not modelled)");
        break;
      }
      case RopeScaling::llama3: {
        // low_freq_wavelen = old_context_len / low_freq_factor (Python int / float), compared with the float32
        // wavelen as RN32 of that double; 2 * math.pi exact; old_context_len / wavelen = reciprocal * L0.
        low_wl32_ = rn32(rn_div(D, py_int(s.original_context), py(s.low_freq_factor), kEmu));
        high_wl32_ = rn32(rn_div(D, py_int(s.original_context), py(s.high_freq_factor), kEmu));
        two_pi32_ = rn32(rn_mul(D, py(2.0), rn(D, pi(128), kEmu), kEmu));
        l0_32_ = rn32(py_int(s.original_context));
        lff32_ = rn32(py(s.low_freq_factor));
        band32_ = rn32(rn64_sub(py(s.high_freq_factor), py(s.low_freq_factor)));
        break;
      }
      case RopeScaling::none:
      case RopeScaling::linear:
      case RopeScaling::longrope: break;
    }
  }

  Real operator()(std::size_t k) const {
    switch (s_.scaling) {
      case RopeScaling::none:
      case RopeScaling::ntk:
      case RopeScaling::dynamic: return hf_default_inv32(base32_, s_, k);
      case RopeScaling::linear:  // inv_freq /= factor  (_compute_linear_scaling_rope_parameters)
        return rn_div(F, hf_default_inv32(base32_, s_, k), factor32_, kEmu);
      case RopeScaling::yarn: return yarn(k);
      case RopeScaling::llama3: return llama3(k).first;
      case RopeScaling::longrope: return longrope(k);
    }
    throw std::logic_error("rope reference: unknown scaling");
  }

  // llama3: (inv'_k, band) with band +1 kept, -1 divided, 0 smoothed.
  std::pair<Real, int> llama3(std::size_t k) const {
    // _compute_llama3_parameters @26892c16, each tensor op rounded to float32:
    const Real inv = hf_default_inv32(base32_, s_, k);
    const Real wl = rn_mul(F, rn32_recip(inv), two_pi32_, kEmu);   // 2 * math.pi / inv_freq
    const bool divided = mpfr_greater_p(raw(wl), raw(low_wl32_)) != 0;  // wavelen > low_freq_wavelen
    const bool kept = mpfr_less_p(raw(wl), raw(high_wl32_)) != 0;       // wavelen < high_freq_wavelen
    const Real il = divided ? rn_div(F, inv, factor32_, kEmu) : inv;   // torch.where(..., inv_freq / factor, ...)
    if (kept || divided) return {il, kept ? 1 : -1};
    // smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    const Real sf = rn_div(F, rn32_sub(rn_mul(F, rn32_recip(wl), l0_32_, kEmu), lff32_), band32_, kEmu);
    // smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    const Real one = make_real(1, kEmu);
    const Real a = rn_div(F, rn_mul(F, rn32_sub(one, sf), il, kEmu), factor32_, kEmu);
    return {rope_rn32_add(a, rn_mul(F, sf, il, kEmu)), 0};
  }

 private:
  // _compute_yarn_parameters @26892c16, the tensor part:
  //   pos_freqs = base ** (arange(0, dim, 2).float() / dim)                      P_k
  //   inv_freq_extrapolation = 1.0 / pos_freqs                                   RN32(1 / P_k)
  //   inv_freq_interpolation = 1.0 / (factor * pos_freqs)                        RN32(1 / RN32(S P_k))
  //   linear_ramp_factor: (arange(dim // 2, float32) - min) / (max - min), clamp(0, 1)
  //   inv_freq_extrapolation_factor = 1 - ramp                                   e_k = RN32(1 - ramp_k)
  //   inv_freq = interpolation * (1 - e) + extrapolation * e                    three products/sums, each RN32
  Real yarn(std::size_t k) const {
    const Real pos = hf_pos_freq32(base32_, s_, k);
    const Real extra = rn32_recip(pos), inter = rn32_recip(rn_mul(F, factor32_, pos, kEmu));
    Real ramp = rn_div(F, rn32_sub(f32_of_int(static_cast<std::int64_t>(k)), low32_), width32_, kEmu);
    const Real zero = make_real(kEmu), one = make_real(1, kEmu);
    mpfr_max(raw(ramp), raw(ramp), raw(zero), MPFR_RNDN);
    mpfr_min(raw(ramp), raw(ramp), raw(one), MPFR_RNDN);
    const Real e = rn32_sub(one, ramp);
    return rope_rn32_add(rn_mul(F, inter, rn32_sub(one, e), kEmu), rn_mul(F, extra, e, kEmu));
  }

  // HF v5 _compute_longrope_parameters (CONVENTIONS.md §2.11), the tensor part:
  //   ext_factors = torch.tensor(long_factor or short_factor, dtype=float32)      RN32(e_k)
  //   inv_freq_shape = torch.arange(0, dim, 2, dtype=int64).float() / dim        RN32(RN32(2k) / RN32(r))
  //   base**inv_freq_shape                                                         P_k = RN32(pow(RN32(base), .))
  //   ext_factors * base**inv_freq_shape                                           RN32(RN32(e_k) P_k)
  //   1.0 / (...)                                                                  RN32(1 / .)
  // (the same P_k as the default formula: hf_pos_freq32). The spec's e_k >= 1 keeps RN32(e_k) P_k >= 1, so the
  // reciprocal is a normal float32 number in (0, 1].
  Real longrope(std::size_t k) const {
    const double e = longrope_factors(s_)[k];
    return rn32_recip(rn_mul(F, rn32(py(e)), hf_pos_freq32(base32_, s_, k), kEmu));
  }

  const RopeSpec& s_;
  Real base32_ = make_real(kEmu), factor32_ = make_real(kEmu);
  Real low32_ = make_real(kEmu), width32_ = make_real(kEmu);
  Real low_wl32_ = make_real(kEmu), high_wl32_ = make_real(kEmu), two_pi32_ = make_real(kEmu),
       l0_32_ = make_real(kEmu), lff32_ = make_real(kEmu), band32_ = make_real(kEmu);
};

// HF's attention factor, the Python float (_compute_yarn_parameters @26892c16: get_mscale(scale, mscale=1) =
// 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0, evaluated left to right; every other scaling 1.0).
Real hf_mscale64(double s, double x) {
  if (s <= 1.0) return py(1.0);
  const Real t = rn_mul(D, rn_mul(D, py(0.1), py(x), kEmu), rn_log(D, py(s), kEmu), kEmu);
  return rn64_add(t, py(1.0));
}
// RN64(sqrt(x)) for a double x >= 1: MPFR's sqrt correctly rounded to 53 bits directly (the result is a normal
// double: no subnormal/overflow handling needed); Python's math.sqrt is the IEEE (correctly rounded) sqrt.
Real rn64_sqrt(const Real& x) {
  detail::Mp t(53);
  mpfr_sqrt(t.get(), raw(x), MPFR_RNDN);
  Real out = make_real(kEmu);
  mpfr_set(raw(out), t.get(), MPFR_RNDN);  // exact
  return out;
}

double hf_attention64(const RopeSpec& s) {
  if (s.scaling == RopeScaling::longrope) {
    // HF v5 _compute_longrope_parameters (CONVENTIONS.md §2.11), Python floats:
    //   if attention_factor is None: attention_factor = 1.0 if factor <= 1.0 else
    //       math.sqrt(1 + math.log(factor) / math.log(original_max_position_embeddings))
    // math.log of the Python int L0 converts it exactly (< 2^53); `1 + q` is int + float: RN64(1 + q).
    if (s.attention_factor > 0) return s.attention_factor;
    if (s.factor <= 1.0) return 1.0;
    const Real q = rn_div(D, rn_log(D, py(s.factor), kEmu), rn_log(D, py_int(s.original_context), kEmu), kEmu);
    return round_to_double(rn64_sqrt(rn64_add(py(1.0), q)));
  }
  if (s.scaling != RopeScaling::yarn) return 1.0;
  if (s.attention_factor > 0) return s.attention_factor;
  if (s.mscale != 0 && s.mscale_all_dim != 0)  // `if mscale and mscale_all_dim`: both truthy
    return round_to_double(rn_div(D, hf_mscale64(s.factor, s.mscale), hf_mscale64(s.factor, s.mscale_all_dim), kEmu));
  return round_to_double(hf_mscale64(s.factor, 1.0));
}

// ggml: const float theta_scale = powf(freq_base, -2.0f/n_dims); (ggml@084bfe1 src/ggml-cpu/ops.cpp
// ggml_compute_forward_rope_f32; freq_base is a float op parameter, n_dims an int converted to float).
Real ggml_theta_scale32(const RopeSpec& s) {
  const Real base32 = rn(F, make_real(s.base, kEmu), kEmu);
  const Real e32 = rn_div(F, make_real(-2, kEmu), f32_of_int(static_cast<std::int64_t>(s.rotary_dim)), kEmu);
  return rn32_pow(base32, e32);
}

// llama.cpp: rope_freq_scale = 1.0f/factor (a float from the GGUF rope scaling factor; llama.cpp@a5410f04
// src/llama-model.cpp load_hparams: `hparams.rope_freq_scale_train = ropescale == 0.0f ? 1.0f : 1.0f/ropescale`);
// ggml's rope_yarn: theta_interp = freq_scale * theta_extrap (the angle itself with ext_factor 0: linear).
Real ggml_freq_scale32(const RopeSpec& s) {
  if (s.scaling == RopeScaling::none) return make_real(1, kEmu);
  return rn_div(F, make_real(1, kEmu), rn32(py(s.factor)), kEmu);
}

// ---- llama.cpp's YaRN in ggml (rope.hpp "ggml yarn") -----------------------------------------------------------
// C float arithmetic, each operation one RN32 (FLT_EVAL_METHOD 0; the FMA contraction a compiler may do is the
// envelope's business). ggml-org/ggml@017d02de src/ggml.c:
//   static float ggml_rope_yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
//       return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)M_PI)) / (2 * logf(base));
//   }
//   void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
//                                 float dims[2]) {
//       float start = floorf(ggml_rope_yarn_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
//       float end   =  ceilf(ggml_rope_yarn_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
//       dims[0] = MAX(0, start);
//       dims[1] = MIN(n_dims - 1, end);
//   }
// ggml-org/ggml@084bfe1 src/ggml-cpu/ops.cpp (the same in llama.cpp@0049e3cb ggml/src/ggml-cpu/ops.cpp):
//   static float rope_yarn_ramp(const float low, const float high, const int i0) {
//       const float y = (i0 / 2 - low) / MAX(0.001f, high - low);
//       return 1 - MIN(1, MAX(0, y));
//   }
//   rope_yarn(theta_extrap, freq_scale, corr_dims, i0, ext_factor, mscale, ...):
//       float theta_interp = freq_scale * theta_extrap;  float theta = theta_interp;
//       if (ext_factor != 0.0f) {
//           float ramp_mix = rope_yarn_ramp(corr_dims[0], corr_dims[1], i0) * ext_factor;
//           theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
//           mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
//       }
//       *cos_theta = cosf(theta) * mscale;  *sin_theta = sinf(theta) * mscale;
// called by ggml_rope_cache_init for i0 = 0, 2, .., ne0 - 2 with theta_extrap = theta / 1.0f (t_k exactly),
// n_dims = r (llama.cpp passes n_rot), freq_base / beta_fast / beta_slow float op parameters, n_ctx_orig an int.
// ext_factor 1 (llama.cpp's default for YaRN) makes ramp_mix the ramp itself; attn_factor 1 makes mscale the factor.

// The C macros MAX(a, b) = ((a) > (b) ? (a) : (b)), MIN(a, b) = ((a) < (b) ? (a) : (b)) on floats (a comparison
// with NaN is false: the second operand).
Real c_max(const Real& a, const Real& b) { return mpfr_greater_p(raw(a), raw(b)) ? a : b; }
Real c_min(const Real& a, const Real& b) { return mpfr_less_p(raw(a), raw(b)) ? a : b; }
// A C float literal: its decimal correctly rounded to binary32.
Real f32_literal(const char* text) { return rn32(parse_real(text, 256)); }

Real ggml_yarn_corr_dim32(const RopeSpec& s, double beta) {
  const Real pi32 = rn32(rn(D, pi(128), kEmu));  // (float)M_PI: M_PI is the double pi
  Real t = rn_mul(F, rn32(py(beta)), f32_of_int(2), kEmu);  // n_rot * 2
  t = rn_mul(F, t, pi32, kEmu);                             // * (float)M_PI
  const Real q = rn_div(F, f32_of_int(s.original_context), t, kEmu);  // n_ctx_orig / (...): int -> float
  const Real num = rn_mul(F, f32_of_int(static_cast<std::int64_t>(s.rotary_dim)), rn_log(F, q, kEmu), kEmu);
  const Real den = rn_mul(F, f32_of_int(2), rn_log(F, rn32(py(s.base)), kEmu), kEmu);  // 2 * logf(base)
  return rn_div(F, num, den, kEmu);  // log B = 0 (RN32(base) = 1): +-inf or NaN, as in C
}

struct GgmlYarn {
  Real low = make_real(kEmu), high = make_real(kEmu), width = make_real(kEmu);
};

GgmlYarn ggml_yarn_range32(const RopeSpec& s) {
  GgmlYarn y;
  Real start = ggml_yarn_corr_dim32(s, s.beta_fast), end = ggml_yarn_corr_dim32(s, s.beta_slow);
  mpfr_floor(raw(start), raw(start));  // floorf / ceilf: exact (inf and NaN stay)
  mpfr_ceil(raw(end), raw(end));
  y.low = c_max(make_real(kEmu), start);                                                  // MAX(0, start)
  y.high = c_min(f32_of_int(static_cast<std::int64_t>(s.rotary_dim) - 1), end);          // MIN(n_dims - 1, end)
  y.width = c_max(f32_literal("0.001"), rn32_sub(y.high, y.low));                        // MAX(0.001f, high - low)
  return y;
}

// rope_yarn_ramp(low, high, i0 = 2k) * ext_factor (1): RN32(1 - MIN(1, MAX(0, RN32(RN32(k - low) / w)))).
Real ggml_yarn_mix32(const GgmlYarn& y, std::size_t k) {
  const Real one = make_real(1, kEmu);
  const Real v = rn_div(F, rn32_sub(f32_of_int(static_cast<std::int64_t>(k)), y.low), y.width, kEmu);
  return rn32_sub(one, c_min(one, c_max(make_real(kEmu), v)));
}

// mscale = attn_factor (1) * (1.0f + 0.1f * logf(1.0f / freq_scale)).
Real ggml_yarn_mscale32(const RopeSpec& s) {
  const Real inv = rn_div(F, make_real(1, kEmu), ggml_freq_scale32(s), kEmu);
  return rope_rn32_add(make_real(1, kEmu), rn_mul(F, f32_literal("0.1"), rn_log(F, inv, kEmu), kEmu));
}

// ---- xPos (rope.hpp "xPos"; CONVENTIONS.md §2.12) ------------------------------------------------------------------
// torchscale XPOS, microsoft/torchscale@776b070d68aef2aca447dc3e1adb64682fbec126
// torchscale/component/xpos_relative_position.py:
//   __init__:  self.register_buffer("scale", (torch.arange(0, head_dim, 2) + 0.4 * head_dim) / (1.4 * head_dim))
//   forward(x, offset=0, downscale=False):
//     min_pos = -(length + offset) // 2;  max_pos = length + offset + min_pos
//     scale = self.scale ** torch.arange(min_pos, max_pos, 1).to(self.scale).div(self.scale_base)[:, None]
//     sin, cos = fixed_pos_embedding(scale)        (angles of positions 0 .. length + offset - 1)
//     (last `length` rows kept);  if downscale: scale = 1 / scale
//     apply_rotary_pos_emb(x, sin, cos, scale):  sin, cos = duplicate_interleave(t * scale);
//                                                (x * cos) + (rotate_every_two(x) * sin)
// and torchscale@0cb96955010a93818b3dafb99708f465bcbcc651 torchscale/component/multihead_attention.py:
//   k = self.xpos(k, offset=0, downscale=True); q = self.xpos(q, offset=offset, downscale=False)
// Row i of the call is position p = i (its angle) with scale exponent (i + min_pos) / scale_base = (p - c) / sb,
// c = -min_pos = ceil((length + offset) / 2): queries (downscale False) zeta^((p - c)/sb), keys its reciprocal.

bool xpos_key(const RopeSpec& s) { return s.xpos == RopeXpos::key; }

// zeta_k = (2k + 0.4 r) / (1.4 r) = (10k + 2r) / (7r), the rational rounded once to p bits (10k + 2r < 2^20 and
// 7r < 2^19 are exact).
Real exact_xpos_zeta(const RopeSpec& s, std::size_t k, mpfr_prec_t p) {
  const Real num = work_real_ui(static_cast<unsigned long>(10 * k + 2 * s.rotary_dim), 64);
  Real z = work_real(p);
  mpfr_div_ui(raw(z), raw(num), static_cast<unsigned long>(7 * s.rotary_dim), MPFR_RNDN);
  return z;
}

// x_{p,k} = zeta^(+-(p - c) / sb) at the precision of zeta (>= 64 bits: p - c, |p - c| <= 2^41, is exact), `key`
// negating the exponent. One rounded division, MPFR's pow (correctly rounded, exactly 1 for the exponent 0):
// relative error <= 2^(10.3 - prec) for zeta rounded to prec (rope.hpp).
Real exact_xpos_scale_of(const RopeSpec& s, const Real& zeta, std::int64_t p, bool key) {
  const mpfr_prec_t prec = mpfr_get_prec(raw(zeta));
  Real e = work_real(prec);
  mpfr_set_sj(raw(e), static_cast<intmax_t>(p - s.xpos_center), MPFR_RNDN);  // exact
  mpfr_div_d(raw(e), raw(e), s.xpos_scale_base, MPFR_RNDN);                 // (p - c) / sb, sb the exact double
  if (key) mpfr_neg(raw(e), raw(e), MPFR_RNDN);
  Real x = work_real(prec);
  mpfr_pow(raw(x), raw(zeta), raw(e), MPFR_RNDN);
  return x;
}

// torchscale's float32 zeta32_k (XPOS.__init__ above), on the CPU:
//   torch.arange(0, head_dim, 2)   int64 2k
//   0.4 * head_dim                 Python float * int: RN64(RN64(0.4) r); 1.4 * head_dim likewise
//   int64 tensor + Python float    result dtype float32 (the default dtype): RN32(RN32(2k) + RN32(RN64(0.4 r)))
//                                  (ufunc add self + alpha * other, alpha = 1: one rounding, also as fmadd)
//   / (1.4 * head_dim)             float32 true division by RN32 of the double: one rounding (div_true_kernel)
Real hf_xpos_zeta32(const RopeSpec& s, std::size_t k) {
  const Real r = py_int(static_cast<std::int64_t>(s.rotary_dim));
  const Real a = rn32(rn_mul(D, py(0.4), r, kEmu)), b = rn32(rn_mul(D, py(1.4), r, kEmu));
  return rn_div(F, rope_rn32_add(f32_of_int(static_cast<std::int64_t>(2 * k)), a), b, kEmu);
}

// torchscale's float32 scale of position p (forward above): e32 = RN32(RN32(p - c) / RN32(sb)) (int64 arange
// .to(float32), .div(scale_base)), X = RN32(pow(zeta32, e32)) (float32 tensor ** tensor; IEEE overflow to +inf and
// gradual underflow), keys RN32(1 / X) (`1 / scale` = scale.reciprocal() * 1: 1/0 = +inf, 1/inf = +0).
Real hf_xpos_scale32(const RopeSpec& s, const Real& zeta32, const Real& sb32, std::int64_t p) {
  const Real e32 = rn_div(F, f32_of_int(p - s.xpos_center), sb32, kEmu);
  Real x = rn_pow(F, zeta32, e32, kEmu);
  if (xpos_key(s)) x = rn32_recip(x);  // rn_div(1, +0) = +inf (MPFR, IEEE)
  return x;
}

void require_scaling(const RopeSpec& s, RopeScaling want, const char* what) {
  if (s.scaling != want)
    throw Error(kRopeWhere, "scaling", std::string(to_string(s.scaling)), std::string(to_string(want)) + " (" + what + ")");
}

void check_vector_length(const RopeSpec& s, std::span<const double> x, const char* name) {
  if (x.size() != s.head_dim)
    throw Error(kRopeWhere, name, "a vector of " + std::to_string(x.size()) + " values",
                "a vector of head_dim = " + std::to_string(s.head_dim) + " values", "has the wrong length");
}

bool is_float32(double v) {
  return std::isfinite(v) && std::fabs(v) <= static_cast<double>(std::numeric_limits<float>::max()) &&
         static_cast<double>(static_cast<float>(v)) == v;
}

}  // namespace

RopePairChannels rope_pair_channels(const RopeSpec& s, std::size_t k) {
  validate(s);
  check_pair(s, k);
  return pair_channels(s, k);
}

std::optional<std::size_t> rope_pair_of_channel(const RopeSpec& s, std::size_t channel) {
  validate(s);
  check_channel(s, channel);
  if (channel >= s.rotary_dim) return std::nullopt;
  const std::size_t h = half_of(s);
  if (s.layout == Layout::interleaved) return channel / 2;
  return channel < h ? channel : channel - h;
}

std::size_t rope_mrope_axis(const RopeSpec& s, std::size_t k) {
  validate(s);
  check_pair(s, k);
  return mrope_axis(s, k);
}

Real rope_theta(const RopeSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_rope_bits(bits);
  ExactThetas thetas(s, bits + kRopeWorkingMargin);
  return with_bits(thetas(k), bits);
}

Real rope_attention_factor(const RopeSpec& s, unsigned bits) {
  validate(s);
  check_rope_bits(bits);
  return with_bits(exact_attention(s, bits + kRopeWorkingMargin), bits);
}

// The range at bits + 64 bits, refined until certain and its absolute error is <= 2^-(bits+32), then rounded.
RopeYarnRange rope_yarn_correction_range(const RopeSpec& s, unsigned bits) {
  validate(s);
  check_rope_bits(bits);
  require_scaling(s, RopeScaling::yarn, "the correction range exists only for YaRN");
  for (mpfr_prec_t p = bits + kBlendExtra;; p *= 2) {
    const ExactYarn y = exact_yarn_range(s, p);
    const double limit = std::ldexp(1.0, static_cast<int>(y.prec - bits - 32));
    if (y.err_low <= limit && y.err_high <= limit)
      return RopeYarnRange{with_bits(y.low, bits), with_bits(y.high, bits), with_bits(y.ramp_high, bits)};
    p = y.prec;
  }
}

RopeHfYarnRange rope_hf_yarn_correction_range(const RopeSpec& s) {
  validate(s);
  require_scaling(s, RopeScaling::yarn, "the correction range exists only for YaRN");
  const HfYarn y = hf_yarn_range(s);
  return RopeHfYarnRange{round_to_double(y.low), round_to_double(y.high), round_to_double(y.ramp_high)};
}

RopeLlama3Band rope_llama3_band(const RopeSpec& s, std::size_t k) {
  validate(s);
  check_pair(s, k);
  require_scaling(s, RopeScaling::llama3, "the bands exist only for Llama 3.1's scaling");
  for (mpfr_prec_t p = kDefaultBits;; p *= 2) {  // never a tie (header): the loop ends
    check_work_prec(p);
    bool certain = true;
    const int band = llama3_band_at(s, llama3_u(s, k, p), p, certain);
    if (certain) return band > 0 ? RopeLlama3Band::kept : band < 0 ? RopeLlama3Band::divided : RopeLlama3Band::smoothed;
  }
}

RopeLlama3Band rope_hf_llama3_band(const RopeSpec& s, std::size_t k) {
  validate(s);
  check_pair(s, k);
  require_scaling(s, RopeScaling::llama3, "the bands exist only for Llama 3.1's scaling");
  const int band = HfFrequencies(s).llama3(k).second;
  return band > 0 ? RopeLlama3Band::kept : band < 0 ? RopeLlama3Band::divided : RopeLlama3Band::smoothed;
}

Real rope_hf_inv_freq(const RopeSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_rope_bits(bits);
  return with_bits(HfFrequencies(s)(k), bits);  // a float32 fits in bits >= 24
}

Real rope_hf_dynamic_init_inv_freq(const RopeSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_rope_bits(bits);
  require_scaling(s, RopeScaling::dynamic, "the init function of dynamic NTK");
  return with_bits(hf_default_inv32(rn32(hf_dynamic_init_base64(s)), s, k), bits);
}

Real rope_ggml_theta_scale(const RopeSpec& s, unsigned bits) {
  validate(s);
  check_rope_bits(bits);
  return with_bits(ggml_theta_scale32(s), bits);
}

Real rope_ggml_freq_scale(const RopeSpec& s, unsigned bits) {
  validate(s);
  check_rope_bits(bits);
  if (s.scaling != RopeScaling::none && s.scaling != RopeScaling::linear && s.scaling != RopeScaling::yarn)
    throw Error(kRopeWhere, "scaling", std::string(to_string(s.scaling)),
                "none | linear | yarn (the scalings the ggml emulation models)");
  return with_bits(ggml_freq_scale32(s), bits);
}

RopeGgmlYarnRange rope_ggml_yarn_correction_range(const RopeSpec& s) {
  validate(s);
  require_scaling(s, RopeScaling::yarn, "the correction range exists only for YaRN");
  const GgmlYarn y = ggml_yarn_range32(s);
  return RopeGgmlYarnRange{round_to_float(y.low), round_to_float(y.high), round_to_float(y.width)};
}

float rope_ggml_yarn_mix(const RopeSpec& s, std::size_t k) {
  validate(s);
  check_pair(s, k);
  require_scaling(s, RopeScaling::yarn, "the ramp exists only for YaRN");
  return round_to_float(ggml_yarn_mix32(ggml_yarn_range32(s), k));
}

float rope_ggml_yarn_mscale(const RopeSpec& s) {
  validate(s);
  require_scaling(s, RopeScaling::yarn, "ggml's mscale exists only for YaRN");
  return round_to_float(ggml_yarn_mscale32(s));
}

Real rope_emulated_frequency(const RopeSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_rope_bits(bits);
  switch (s.regime) {
    case RopeRegime::hf: return with_bits(HfFrequencies(s)(k), bits);
    case RopeRegime::ggml: return with_bits(ggml_theta_scale32(s), bits);
    case RopeRegime::roformer: return with_bits(roformer_divisor64(s, k), bits);
    case RopeRegime::exact: break;
  }
  throw Error(kRopeWhere, "regime", std::string(to_string(s.regime)),
              "hf | ggml | roformer (the regimes with emulated frequencies)");
}

double rope_hf_attention_factor(const RopeSpec& s) {
  validate(s);
  return hf_attention64(s);
}

Real rope_xpos_zeta(const RopeSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_rope_bits(bits);
  return with_bits(exact_xpos_zeta(s, k, bits), bits);  // the rational rounded once at `bits`
}

// x at bits + 216 bits (relative error <= 2^(10.3-bits-216)), rounded once: the bound of rope.hpp.
Real rope_xpos_scale(const RopeSpec& s, std::int64_t p, std::size_t k, unsigned bits) {
  validate(s);
  check_position(s, p);
  check_pair(s, k);
  check_rope_bits(bits);
  if (s.xpos == RopeXpos::none) return make_real(1, bits);
  const mpfr_prec_t prec = bits + kRopeWorkingMargin + kScaledExtra;
  return with_bits(exact_xpos_scale_of(s, exact_xpos_zeta(s, k, prec), p, xpos_key(s)), bits);
}

Real rope_hf_xpos_zeta(const RopeSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_rope_bits(bits);
  return with_bits(hf_xpos_zeta32(s, k), bits);
}

Real rope_hf_xpos_scale(const RopeSpec& s, std::int64_t p, std::size_t k, unsigned bits) {
  validate(s);
  check_position(s, p);
  check_pair(s, k);
  check_rope_bits(bits);
  if (s.xpos == RopeXpos::none) return make_real(1, bits);
  return with_bits(hf_xpos_scale32(s, hf_xpos_zeta32(s, k), rn32(py(s.xpos_scale_base)), p), bits);
}

// ---- RopeOracle ----------------------------------------------------------------------------------------------

RopeOracle::RopeOracle(const RopeSpec& spec, unsigned bits)
    : spec_(spec), bits_(bits), w_(0), wa_(0), m_(make_real(kMinBits)) {
  validate(spec_);
  check_rope_bits(bits);
  w_ = bits + kRopeWorkingMargin;
  wa_ = w_ + angle_extra_bits(spec_);  // theta'_k < 2^E: W + E bits keep the angle's absolute error (header)
  const std::size_t h = half_of(spec_);
  axis_.reserve(h);
  for (std::size_t k = 0; k < h; ++k) axis_.push_back(mrope_axis(spec_, k));
  theta_.reserve(h);
  ExactThetas thetas(spec_, wa_);
  for (std::size_t k = 0; k < h; ++k) theta_.push_back(thetas(k));
  m_ = exact_attention(spec_, w_);
  m_is_one_ = mpfr_cmp_ui(raw(m_), 1) == 0;
  if (spec_.regime == RopeRegime::hf) {
    const HfFrequencies inv(spec_);
    inv32_.reserve(h);
    for (std::size_t k = 0; k < h; ++k) inv32_.push_back(inv(k));
    Real m32 = rn32(py(hf_attention64(spec_)));  // cos * self.attention_scaling: the Python float meets float32
    if (mpfr_cmp_ui(raw(m32), 1) != 0) m32_ = std::move(m32);
  } else if (spec_.regime == RopeRegime::roformer) {
    w64_.reserve(h);
    for (std::size_t k = 0; k < h; ++k) w64_.push_back(roformer_divisor64(spec_, k));
  } else if (spec_.regime == RopeRegime::ggml) {
    scale32_ = ggml_theta_scale32(spec_);
    if (spec_.scaling == RopeScaling::linear || spec_.scaling == RopeScaling::yarn) fs32_ = ggml_freq_scale32(spec_);
    if (spec_.scaling == RopeScaling::yarn) {  // llama.cpp's YaRN (rope.hpp "ggml yarn")
      const GgmlYarn y = ggml_yarn_range32(spec_);
      mix32_.reserve(h);
      unmix32_.reserve(h);
      for (std::size_t k = 0; k < h; ++k) {
        mix32_.push_back(ggml_yarn_mix32(y, k));
        unmix32_.push_back(rn32_sub(make_real(1, kEmu), mix32_.back()));  // (1 - ramp_mix)
      }
      Real m = ggml_yarn_mscale32(spec_);
      if (mpfr_cmp_ui(raw(m), 1) != 0) m32_ = std::move(m);  // cosf(theta) * mscale: RN32 of the product
    }
  }
  if (spec_.xpos != RopeXpos::none) {
    xpos_key_ = xpos_key(spec_);
    zeta_.reserve(h);
    for (std::size_t k = 0; k < h; ++k) zeta_.push_back(exact_xpos_zeta(spec_, k, w_ + kScaledExtra));
    if (spec_.regime == RopeRegime::hf) {  // (the spec refuses xPos with ggml: ggml has none)
      zeta32_.reserve(h);
      for (std::size_t k = 0; k < h; ++k) zeta32_.push_back(hf_xpos_zeta32(spec_, k));
      sb32_ = rn32(py(spec_.xpos_scale_base));  // .div(self.scale_base): the Python number meets float32
    }
  }
}

Real RopeOracle::xpos_scale(std::int64_t p, std::size_t k) const {
  check_position(spec_, p);
  check_pair(spec_, k);
  if (spec_.xpos == RopeXpos::none) return make_real(1, bits_);
  if (spec_.regime == RopeRegime::hf) return with_bits(*emulated_xpos(p, k), bits_);
  return with_bits(exact_xpos_w24(p, k, xpos_key_), bits_);
}

Real RopeOracle::exact_xpos_w24(std::int64_t p, std::size_t k, bool key) const {
  return exact_xpos_scale_of(spec_, zeta_[k], p, key);
}

// F = m x at W bits: x (W + 24 bits, relative error <= 2^(-13.7-W)) times m (W bits), rounded once (rope.hpp).
std::optional<Real> RopeOracle::exact_factor_w(std::int64_t p, std::size_t k, bool key) const {
  if (spec_.xpos == RopeXpos::none) return m_is_one_ ? std::nullopt : std::optional<Real>(m_);
  const Real x = exact_xpos_w24(p, k, key);
  Real f = work_real(w_);
  mpfr_mul(raw(f), raw(x), raw(m_), MPFR_RNDN);  // m then x: one real product, one rounding
  if (mpfr_cmp_ui(raw(f), 1) == 0) return std::nullopt;  // p = c with m = 1: the values without xPos, bit for bit
  return f;
}

std::optional<Real> RopeOracle::emulated_xpos(std::int64_t p, std::size_t k) const {
  if (zeta32_.empty()) return std::nullopt;
  return hf_xpos_scale32(spec_, zeta32_[k], *sb32_, p);
}

Real RopeOracle::attention_factor() const {
  switch (spec_.regime) {
    case RopeRegime::exact: return with_bits(m_, bits_);
    case RopeRegime::hf:
    case RopeRegime::ggml:
    case RopeRegime::roformer: return m32_ ? with_bits(*m32_, bits_) : make_real(1, bits_);
  }
  return make_real(1, bits_);
}

// p * theta'_k at W + E bits (E = 0 unless longrope has factors < 1): theta'_k < 2^E carries a relative error
// <= 2^(5.2-W-E), so |error| <= 2^(A+E) (2^(5.2-W-E) + 2^(-W-E)) <= 2^(A+6-W) (header).
Real RopeOracle::exact_angle_w(std::int64_t p, std::size_t k) const {
  Real a = work_real(wa_);
  mpfr_mul(raw(a), raw(theta_[k]), raw(make_real(p, 64)), MPFR_RNDN);
  return a;
}

// hf: freqs = inv_freq[None, :, None] @ position_ids[:, None, :].float()  (LlamaRotaryEmbedding.forward,
// transformers@5dd4a63, autocast disabled: float32; an inner dimension of 1, so each entry is one rounded
// product RN32(RN32(p) * inv_k); GPT-J's einsum "i,j->ij" and Meta's torch.outer(t, freqs) likewise).
// ggml: ggml_rope_cache_init(p, ...) takes `float theta_base` (t_0 = RN32(p), p from the int32 pos tensor) and
// does `theta *= theta_scale` after each pair; rope_yarn with ext_factor 0 uses theta_interp = freq_scale *
// theta_extrap (theta_extrap = theta / 1.0f without freq_factors: exact): t_k itself for freq_scale 1,
// RN32(fs t_k) for linear; with ext_factor 1 (yarn) theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix.
Real RopeOracle::ggml_angle(const Real& t, std::size_t k) const {
  if (!fs32_) return t;
  const Real interp = rn_mul(F, *fs32_, t, kEmu);
  if (mix32_.empty()) return interp;
  return rope_rn32_add(rn_mul(F, interp, unmix32_[k], kEmu), rn_mul(F, t, mix32_[k], kEmu));
}

Real RopeOracle::emulated_angle(std::int64_t p, std::size_t k) const {
  // roformer: position_enc = pos / w_k in float64 numpy (a Python int, exact for |p| <= 2^40, over a float64)
  if (spec_.regime == RopeRegime::roformer) return rn_div(D, py_int(p), w64_[k], kEmu);
  const Real p32 = f32_of_int(p);
  if (spec_.regime == RopeRegime::hf) return rn_mul(F, p32, inv32_[k], kEmu);
  Real t = p32;
  for (std::size_t j = 0; j < k; ++j) t = rn_mul(F, t, *scale32_, kEmu);
  return ggml_angle(t, k);
}

void RopeOracle::emulated_angles(std::int64_t p, std::vector<Real>& out) const {
  const std::size_t h = half_of(spec_);
  out.clear();
  out.reserve(h);
  if (spec_.regime == RopeRegime::roformer) {
    for (std::size_t k = 0; k < h; ++k) out.push_back(rn_div(D, py_int(p), w64_[k], kEmu));
    return;
  }
  const Real p32 = f32_of_int(p);
  if (spec_.regime == RopeRegime::hf) {
    for (std::size_t k = 0; k < h; ++k) out.push_back(rn_mul(F, p32, inv32_[k], kEmu));
    return;
  }
  Real t = p32;
  for (std::size_t k = 0; k < h; ++k) {
    out.push_back(ggml_angle(t, k));
    if (k + 1 < h) t = rn_mul(F, t, *scale32_, kEmu);
  }
}

// M-RoPE: pair k's angle is that of the one-position sequence at pos[axis_[k]]. ggml keeps one recurrence per axis
// (ggml_mrope_cache_init: theta_t, theta_h, theta_w each *= theta_scale at every pair), i.e. the recurrence of
// each distinct position, then each pair reads its axis's; HF forms RN32(RN32(p_a) inv_k) for every row a.
void RopeOracle::emulated_angles(const RopeMropePosition& pos, std::vector<Real>& out) const {
  emulated_angles(pos[0], out);
  std::vector<Real> other;
  for (unsigned char a = 1; a < 3; ++a) {
    if (pos[a] == pos[0] || std::find(axis_.begin(), axis_.end(), a) == axis_.end()) continue;
    emulated_angles(pos[a], other);
    for (std::size_t k = 0; k < out.size(); ++k)
      if (axis_[k] == a) out[k] = std::move(other[k]);
  }
}

Real RopeOracle::angle(std::int64_t p, std::size_t k) const {
  check_position(spec_, p);
  check_pair(spec_, k);
  if (spec_.regime == RopeRegime::exact) return exact_angle_w(p, k);
  return with_bits(emulated_angle(p, k), bits_);
}

// F cos a, F sin a at W bits (F = m x_{p,k}, exact_factor_w): cos/sin of the W-bit angle rounded to W, times F (W
// bits) rounded to W (skipped for F = 1): |error| <= F 2^-(bits+144.9) (header).
void RopeOracle::exact_cos_sin_w(std::int64_t p, std::size_t k, bool key, Real& c, Real& s) const {
  c = make_real(w_);
  s = make_real(w_);
  mpfr_sin_cos(raw(s), raw(c), raw(exact_angle_w(p, k)), MPFR_RNDN);
  const std::optional<Real> f = exact_factor_w(p, k, key);
  if (!f) return;
  mpfr_mul(raw(c), raw(c), raw(*f), MPFR_RNDN);
  mpfr_mul(raw(s), raw(s), raw(*f), MPFR_RNDN);
}

// F = 1: cos of the W-bit angle rounded once to bits (as before scalings existed); else cos at W times F, rounded
// once to bits.
Real RopeOracle::exact_trig(std::int64_t p, std::size_t k, bool sine) const {
  Real out = make_real(bits_);
  const std::optional<Real> f = exact_factor_w(p, k, xpos_key_);
  if (!f) {
    if (sine)
      mpfr_sin(raw(out), raw(exact_angle_w(p, k)), MPFR_RNDN);
    else
      mpfr_cos(raw(out), raw(exact_angle_w(p, k)), MPFR_RNDN);
    return out;
  }
  Real v = make_real(w_);
  if (sine)
    mpfr_sin(raw(v), raw(exact_angle_w(p, k)), MPFR_RNDN);
  else
    mpfr_cos(raw(v), raw(exact_angle_w(p, k)), MPFR_RNDN);
  mpfr_mul(raw(out), raw(v), raw(*f), MPFR_RNDN);
  return out;
}

Real RopeOracle::exact_cos(std::int64_t p, std::size_t k) const {
  check_position(spec_, p);
  check_pair(spec_, k);
  return exact_trig(p, k, false);
}

Real RopeOracle::exact_sin(std::int64_t p, std::size_t k) const {
  check_position(spec_, p);
  check_pair(spec_, k);
  return exact_trig(p, k, true);
}

// hf: cos = emb.cos() * self.attention_scaling, sin = emb.sin() * self.attention_scaling in float32
// (LlamaRotaryEmbedding.forward): RN32(RN32(cos a) RN32(m_hf)), the Python float rounded to float32 where it meets
// the tensor (exactly RN32(cos a) for m_hf = 1); with xPos then torchscale's `t * scale`: RN32(. X) (m then x:
// rope.hpp; X may be +-inf, 0 * inf = NaN as in torch);
// ggml: rope_yarn's cosf(theta) * mscale, sinf(theta) * mscale: mscale = attn_factor = 1 (exact) for none and
// linear, M for yarn (rope.hpp), one rounded product like hf's.
// roformer: np.cos of the float64 angle (RN64), then torch.FloatTensor's cast (RN32): two roundings.
Real RopeOracle::emulated_cos(const Real& angle32, const std::optional<Real>& x32) const {
  Real c = spec_.regime == RopeRegime::roformer ? rn32(rn_cos(D, angle32, kEmu)) : rn_cos(F, angle32, kEmu);
  if (m32_) c = rn_mul(F, c, *m32_, kEmu);
  return x32 ? rn_mul(F, c, *x32, kEmu) : c;
}
Real RopeOracle::emulated_sin(const Real& angle32, const std::optional<Real>& x32) const {
  Real s = spec_.regime == RopeRegime::roformer ? rn32(rn_sin(D, angle32, kEmu)) : rn_sin(F, angle32, kEmu);
  if (m32_) s = rn_mul(F, s, *m32_, kEmu);
  return x32 ? rn_mul(F, s, *x32, kEmu) : s;
}

Real RopeOracle::cos(std::int64_t p, std::size_t k) const {
  if (spec_.regime == RopeRegime::exact) return exact_cos(p, k);
  check_position(spec_, p);
  check_pair(spec_, k);
  return with_bits(emulated_cos(emulated_angle(p, k), emulated_xpos(p, k)), bits_);
}

Real RopeOracle::sin(std::int64_t p, std::size_t k) const {
  if (spec_.regime == RopeRegime::exact) return exact_sin(p, k);
  check_position(spec_, p);
  check_pair(spec_, k);
  return with_bits(emulated_sin(emulated_angle(p, k), emulated_xpos(p, k)), bits_);
}

void RopeOracle::check_vector(std::span<const double> x, const char* name, bool float32) const {
  check_vector_length(spec_, x, name);
  for (std::size_t c = 0; c < x.size(); ++c) {
    if (!std::isfinite(x[c]))
      throw Error(kRopeWhere, name, format_real(x[c]) + " in channel " + std::to_string(c), "finite numbers",
                  "is not finite");
    if (float32 && !is_float32(x[c]))
      throw Error(kRopeWhere, name, format_real(x[c]) + " in channel " + std::to_string(c),
                  "binary32 numbers (the " + std::string(to_string(spec_.regime)) +
                      " regime's float32 steps start from float32 inputs: round x to float first)",
                  "is not a float32 number");
  }
}

// Exact: y_i = RN_bits(x_i c - x_j s), y_j = RN_bits(x_j c + x_i s) with c, s = F cos, F sin of the W-bit angle
// at W bits (mpfr_fmms/fmma round the exact expression once). inverse: s negated (header; without xPos the same
// bits as position -p: the W-bit angle and sin are odd in p, and F = m does not depend on p).
void RopeOracle::rotate_pair_exact(std::int64_t p, std::span<const double> x, std::size_t k, bool inverse, Real& yi,
                                   Real& yj) const {
  const RopePairChannels ch = pair_channels(spec_, k);
  Real c = make_real(w_), s = make_real(w_);
  exact_cos_sin_w(p, k, xpos_key_, c, s);
  if (inverse) mpfr_neg(raw(s), raw(s), MPFR_RNDN);
  const Real xi = make_real(x[ch.first], 64), xj = make_real(x[ch.second], 64);
  yi = make_real(bits_);
  yj = make_real(bits_);
  mpfr_fmms(raw(yi), raw(xi), raw(c), raw(xj), raw(s), MPFR_RNDN);
  mpfr_fmma(raw(yj), raw(xj), raw(c), raw(xi), raw(s), MPFR_RNDN);
}

// Emulated: HF q * cos + rotate_half(q) * sin (resp. GPT-J rotate_every_two; Meta's complex product
// (a+bi)(c+di) = (ac - bd) + (ad + bc)i), ggml  x0*cos_theta - x1*sin_theta, x0*sin_theta + x1*cos_theta:
// two rounded products, one rounded sum per output (the FMA contraction a compiler may do is outside).
void RopeOracle::rotate_pair_emulated(const Real& angle32, const std::optional<Real>& x32, std::span<const double> x,
                                      std::size_t k, bool inverse, Real& yi, Real& yj) const {
  const RopePairChannels ch = pair_channels(spec_, k);
  const Real c = emulated_cos(angle32, x32);
  Real s = emulated_sin(angle32, x32);
  if (inverse) s = neg(s);  // = the steps at position -p (header), = ggml rope_back's sin_sign = -1
  const Real xi = make_real(x[ch.first], kEmu), xj = make_real(x[ch.second], kEmu);
  yi = with_bits(rn32_sub(rn_mul(F, xi, c, kEmu), rn_mul(F, xj, s, kEmu)), bits_);
  yj = with_bits(rope_rn32_add(rn_mul(F, xj, c, kEmu), rn_mul(F, xi, s, kEmu)), bits_);
}

std::vector<Real> RopeOracle::exact_rotate(std::int64_t p, std::span<const double> x, bool inverse) const {
  check_position(spec_, p);
  return exact_rotate_at({p, p, p}, x, inverse);
}

std::vector<Real> RopeOracle::exact_rotate_at(const RopeMropePosition& pos, std::span<const double> x,
                                              bool inverse) const {
  check_vector(x, "x", false);
  std::vector<Real> out;
  out.reserve(x.size());
  for (double v : x) out.push_back(make_real(v, bits_));  // pass-through channels keep this
  const std::size_t h = half_of(spec_);
  for (std::size_t k = 0; k < h; ++k) {
    const RopePairChannels ch = pair_channels(spec_, k);
    rotate_pair_exact(pair_position(pos, k), x, k, inverse, out[ch.first], out[ch.second]);
  }
  return out;
}

std::vector<Real> RopeOracle::rotate(std::int64_t p, std::span<const double> x, bool inverse) const {
  check_position(spec_, p);
  return rotate_at({p, p, p}, x, inverse);
}

std::vector<Real> RopeOracle::rotate_at(const RopeMropePosition& pos, std::span<const double> x, bool inverse) const {
  if (spec_.regime == RopeRegime::exact) return exact_rotate_at(pos, x, inverse);
  check_vector(x, "x", true);
  std::vector<Real> angles;
  emulated_angles(pos, angles);
  std::vector<Real> out;
  out.reserve(x.size());
  for (double v : x) out.push_back(make_real(v, bits_));  // float32: exact
  for (std::size_t k = 0; k < angles.size(); ++k) {
    const RopePairChannels ch = pair_channels(spec_, k);
    rotate_pair_emulated(angles[k], emulated_xpos(pair_position(pos, k), k), x, k, inverse, out[ch.first],
                         out[ch.second]);
  }
  return out;
}

Real RopeOracle::rotate_channel(std::int64_t p, std::span<const double> x, std::size_t channel, bool inverse) const {
  check_position(spec_, p);
  const bool emulated = spec_.regime != RopeRegime::exact;
  check_vector(x, "x", emulated);
  check_channel(spec_, channel);
  if (channel >= spec_.rotary_dim) return make_real(x[channel], bits_);
  const std::size_t h = half_of(spec_);
  const std::size_t k = spec_.layout == Layout::interleaved ? channel / 2 : (channel < h ? channel : channel - h);
  Real yi = make_real(bits_), yj = make_real(bits_);
  if (emulated)
    rotate_pair_emulated(emulated_angle(p, k), emulated_xpos(p, k), x, k, inverse, yi, yj);
  else
    rotate_pair_exact(p, x, k, inverse, yi, yj);
  return channel == pair_channels(spec_, k).first ? yi : yj;
}

// <R(m) q, R(n) k> straight from the definition: both vectors rotated at W bits with the attention factor (and with
// xPos: q the query scale at m, k the key scale at n) in their cos and sin (error <= F (|q_i|+|q_j|) 2^-(bits+143)
// per component), each pair's u_i v_i + u_j v_j rounded
// once at W, the passed channels' products exact (106 bits, no attention factor), all summed by mpfr_sum
// (correctly rounded): the bound of the header.
Real RopeOracle::score(std::int64_t m, std::span<const double> q, std::int64_t n, std::span<const double> k) const {
  check_position(spec_, m, "m");
  check_position(spec_, n, "n");
  return score_at({m, m, m}, q, {n, n, n}, k);
}

Real RopeOracle::score_at(const RopeMropePosition& m, std::span<const double> q, const RopeMropePosition& n,
                          std::span<const double> k) const {
  check_vector(q, "q", false);
  check_vector(k, "k", false);
  const std::size_t h = half_of(spec_);
  std::vector<Real> terms;
  terms.reserve(h + (spec_.head_dim - spec_.rotary_dim));
  Real cm = make_real(w_), sm = make_real(w_), cn = make_real(w_), sn = make_real(w_);
  Real ui = make_real(w_), uj = make_real(w_), vi = make_real(w_), vj = make_real(w_);
  for (std::size_t pair = 0; pair < h; ++pair) {
    const RopePairChannels ch = pair_channels(spec_, pair);
    exact_cos_sin_w(pair_position(m, pair), pair, false, cm, sm);  // the query
    exact_cos_sin_w(pair_position(n, pair), pair, true, cn, sn);   // the key
    const Real qi = make_real(q[ch.first], 64), qj = make_real(q[ch.second], 64);
    const Real ki = make_real(k[ch.first], 64), kj = make_real(k[ch.second], 64);
    mpfr_fmms(raw(ui), raw(qi), raw(cm), raw(qj), raw(sm), MPFR_RNDN);
    mpfr_fmma(raw(uj), raw(qj), raw(cm), raw(qi), raw(sm), MPFR_RNDN);
    mpfr_fmms(raw(vi), raw(ki), raw(cn), raw(kj), raw(sn), MPFR_RNDN);
    mpfr_fmma(raw(vj), raw(kj), raw(cn), raw(ki), raw(sn), MPFR_RNDN);
    Real term = make_real(w_);
    mpfr_fmma(raw(term), raw(ui), raw(vi), raw(uj), raw(vj), MPFR_RNDN);
    terms.push_back(std::move(term));
  }
  for (std::size_t c = spec_.rotary_dim; c < spec_.head_dim; ++c) {
    Real term = make_real(128);
    mpfr_mul(raw(term), raw(make_real(q[c], 64)), raw(make_real(k[c], 64)), MPFR_RNDN);  // exact
    terms.push_back(std::move(term));
  }
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(terms.size());
  for (Real& t : terms) ptrs.push_back(raw(t));
  Real out = make_real(bits_);
  mpfr_sum(raw(out), ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
  return out;
}

// ---- M-RoPE ------------------------------------------------------------------------------------------------
// Pair k at pos[axis_[k]] through the one-position code (rope.hpp, "Multimodal RoPE").

void RopeOracle::check_mrope_position(const RopeMropePosition& pos, const char* name) const {
  if (spec_.mrope == RopeMrope::none)
    throw Error(kRopeWhere, "mrope", "none",
                "sections | interleaved (three positions per token; a spec with mrope none has one: use the "
                "one-position methods)");
  static constexpr const char* kAxis[3] = {" t", " h", " w"};
  for (std::size_t a = 0; a < 3; ++a) check_position(spec_, pos[a], std::string(name) + kAxis[a]);
}

Real RopeOracle::angle_mrope(const RopeMropePosition& pos, std::size_t k) const {
  check_mrope_position(pos, "position");
  check_pair(spec_, k);
  return angle(pair_position(pos, k), k);
}

Real RopeOracle::cos_mrope(const RopeMropePosition& pos, std::size_t k) const {
  check_mrope_position(pos, "position");
  check_pair(spec_, k);
  return cos(pair_position(pos, k), k);
}

Real RopeOracle::sin_mrope(const RopeMropePosition& pos, std::size_t k) const {
  check_mrope_position(pos, "position");
  check_pair(spec_, k);
  return sin(pair_position(pos, k), k);
}

std::vector<Real> RopeOracle::rotate_mrope(const RopeMropePosition& pos, std::span<const double> x,
                                           bool inverse) const {
  check_mrope_position(pos, "position");
  return rotate_at(pos, x, inverse);
}

std::vector<Real> RopeOracle::exact_rotate_mrope(const RopeMropePosition& pos, std::span<const double> x,
                                                 bool inverse) const {
  check_mrope_position(pos, "position");
  return exact_rotate_at(pos, x, inverse);
}

Real RopeOracle::score_mrope(const RopeMropePosition& m, std::span<const double> q, const RopeMropePosition& n,
                             std::span<const double> k) const {
  check_mrope_position(m, "m");
  check_mrope_position(n, "n");
  return score_at(m, q, n, k);
}

}  // namespace posenc::reference
