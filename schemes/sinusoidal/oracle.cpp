#include "posenc/reference/sinusoidal.hpp"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "mpfr_util.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::raw;
using detail::neg;

constexpr const char* kSinusoidalWhere = "sinusoidal reference";


enum class SlotKind { sin, cos, zero };
struct Slot {
  SlotKind kind;
  std::size_t pair;
};

void check_column(const SinusoidalSpec& s, std::size_t column) {
  if (column >= s.dim)
    throw Error(kSinusoidalWhere, "column", std::to_string(column), "0 <= column < dim = " + std::to_string(s.dim));
}

void check_pair(const SinusoidalSpec& s, std::size_t pair) {
  const std::size_t h = pair_count(s);
  if (pair >= h)
    throw Error(kSinusoidalWhere, "pair", std::to_string(pair),
                "0 <= pair < h = dim/2 = " + std::to_string(h) + " (dim = " + std::to_string(s.dim) + ")");
}

void check_shift(const SinusoidalSpec& s, std::int64_t k) {
  if (s.regime != Regime::exact)
    throw Error(kSinusoidalWhere, "regime", std::string(to_string(s.regime)),
                "exact (emulated tables are not exact rotations, so T(k) and the closed-form dot product "
                "are statements about the exact encoding)");
  if (k < -kMaxShift || k > kMaxShift)
    throw Error(kSinusoidalWhere, "k", std::to_string(k), "|k| <= 2^41 = " + std::to_string(kMaxShift));
}

// Which entry of the row a column holds (CONVENTIONS §2.1 / sinusoidal_spec.hpp):
// interleaved: sin 2k, cos 2k+1; halves: sin k, cos h+k; columns >= 2h (odd dim) are the zero pad.
Slot slot_of(const SinusoidalSpec& s, std::size_t column) {
  const std::size_t h = pair_count(s);
  if (column >= 2 * h) return {SlotKind::zero, 0};
  if (s.layout == Layout::interleaved)
    return {column % 2 == 0 ? SlotKind::sin : SlotKind::cos, column / 2};
  return column < h ? Slot{SlotKind::sin, column} : Slot{SlotKind::cos, column - h};
}

// Bits of |n| * max(min_timescale, 1), rounded up: a bound A with |n * omega_k| < 2^A.
unsigned angle_bits(const SinusoidalSpec& s, std::int64_t n) {
  const std::uint64_t mag = n < 0 ? std::uint64_t(0) - std::uint64_t(n) : std::uint64_t(n);
  const int ts_bits = s.min_timescale > 1.0 ? std::ilogb(s.min_timescale) + 1 : 0;
  return static_cast<unsigned>(std::bit_width(mag)) + static_cast<unsigned>(ts_bits) + 1;
}

// Working precision for an angle n*omega_k whose result is wanted to `bits`: the frequency carries a
// relative error <= 2^(11-w) (|e_k| <= 1 and ln(base) < 2^10 amplify the rounding of the exponent;
// pow, the min_timescale product and the angle product add 2^-w each), so the angle's absolute error
// is <= 2^(A+12-w) = 2^-(bits+68).
unsigned working_bits(const SinusoidalSpec& s, std::int64_t n, unsigned bits) {
  return bits + 80 + angle_bits(s, n);
}

// e_k = num/den of the spec's rule.
void exponent_ratio(const SinusoidalSpec& s, std::size_t k, unsigned long& num, unsigned long& den) {
  const std::size_t h = pair_count(s);
  switch (s.rule) {
    case FrequencyRule::paper:
      num = 2 * k;
      den = s.dim;
      return;
    case FrequencyRule::tensor2tensor:
      num = k;
      den = std::max<std::size_t>(h - 1, 1);
      return;
    case FrequencyRule::fairseq:
      num = k;
      den = h - 1;  // validate() guarantees dim >= 4, so h - 1 >= 1
      return;
  }
}

// omega_k = min_timescale * base^(-num/den), at w bits.
Real exact_frequency(const SinusoidalSpec& s, std::size_t k, unsigned w) {
  unsigned long num = 0, den = 1;
  exponent_ratio(s, k, num, den);
  Real ex = make_real(w);
  mpfr_set_ui(raw(ex), num, MPFR_RNDN);
  mpfr_div_ui(raw(ex), raw(ex), den, MPFR_RNDN);  // exact when num/den is dyadic (k = 0, e = 1, 1/2, ...)
  mpfr_neg(raw(ex), raw(ex), MPFR_RNDN);
  Real omega = make_real(w);
  const Real base = make_real(s.base, 64);          // a double is exact in 64 bits
  mpfr_pow(raw(omega), raw(base), raw(ex), MPFR_RNDN);
  mpfr_mul_d(raw(omega), raw(omega), s.min_timescale, MPFR_RNDN);
  return omega;
}

// n * omega_k at w bits.
Real exact_angle(const SinusoidalSpec& s, std::int64_t n, std::size_t k, unsigned w) {
  Real angle = exact_frequency(s, k, w);
  mpfr_mul_si(raw(angle), raw(angle), static_cast<long>(n), MPFR_RNDN);
  return angle;
}

// The emulation steps of sinusoidal.hpp; every intermediate is an exact binary32/binary64 number.
Real emulated_omega(const SinusoidalSpec& s, std::size_t k) {
  constexpr Binary F = Binary::f32, D = Binary::f64;
  constexpr unsigned b = 64;
  const std::size_t h = pair_count(s);
  const Real ln64 = rn_log(D, make_real(s.base, b), b);  // Python math.log of a float
  const Real k32 = rn(F, make_real(static_cast<std::int64_t>(k), b), b);
  Real omega = make_real(b);
  if (s.rule == FrequencyRule::tensor2tensor) {
    // math.log(max/min) / tf.maximum(tf.to_float(num_timescales) - 1, 1): the Python float meets a
    // float32 tensor, so it is rounded to float32 and the division happens in float32.
    const Real den32 = rn(F, make_real(static_cast<std::int64_t>(std::max<std::size_t>(h - 1, 1)), b), b);
    const Real inc32 = rn_div(F, rn(F, ln64, b), den32, b);
    const Real e32 = rn_exp(F, rn_mul(F, k32, neg(inc32), b), b);
    omega = rn_mul(F, rn(F, make_real(s.min_timescale, b), b), e32, b);
  } else if (s.rule == FrequencyRule::paper && s.paper_form == PaperForm::pow) {
    // PyTorch's pow form (Transformer-XL PositionalEmbedding, HF XLNet relative_positional_encoding):
    // 1 / (base ** (torch.arange(0.0, d, 2.0) / d)): the float32 tensor 2k divided by d in float32, the Python
    // base met as a float32 scalar in the float32 pow, then the float32 reciprocal.
    const Real t32 = rn_div(F, rn(F, make_real(static_cast<std::int64_t>(2 * k), b), b),
                            rn(F, make_real(static_cast<std::int64_t>(s.dim), b), b), b);
    const Real pow32 = rn_pow(F, rn(F, make_real(s.base, b), b), t32, b);
    const Real inv32 = rn_div(F, make_real(std::int64_t{1}, b), pow32, b);
    omega = s.min_timescale == 1.0 ? inv32 : rn_mul(F, rn(F, make_real(s.min_timescale, b), b), inv32, b);
  } else if (s.rule == FrequencyRule::paper) {
    // PyTorch's exp form (HF NezhaRelativePositionsEncoding): torch.arange(0, depth, 2).float() holds 2k;
    // -math.log(10000.0) / depth is a Python float (float64), rounded to float32 when it meets the tensor;
    // the product and the exp in float32.
    const Real c64 = rn_div(D, neg(ln64), make_real(static_cast<std::int64_t>(s.dim), b), b);
    const Real two_k32 = rn(F, make_real(static_cast<std::int64_t>(2 * k), b), b);
    const Real w32 = rn_exp(F, rn_mul(F, two_k32, rn(F, c64, b), b), b);
    omega = s.min_timescale == 1.0 ? w32 : rn_mul(F, rn(F, make_real(s.min_timescale, b), b), w32, b);
  } else {
    // emb = math.log(10000) / (half_dim - 1) in float64; torch.arange(half_dim, float32) * -emb rounds
    // the Python scalar to float32; exp in float32.
    const Real emb64 = rn_div(D, ln64, make_real(static_cast<std::int64_t>(h - 1), b), b);
    const Real w32 = rn_exp(F, rn_mul(F, k32, rn(F, neg(emb64), b), b), b);
    omega = s.min_timescale == 1.0 ? w32 : rn_mul(F, rn(F, make_real(s.min_timescale, b), b), w32, b);
  }
  return omega;
}

Real emulated_angle(std::int64_t p, const Real& omega32) {
  constexpr Binary F = Binary::f32;
  return rn_mul(F, rn(F, make_real(p, 64), 64), omega32, 64);
}

bool is_padding(const SinusoidalSpec& s, std::int64_t p) { return s.padding_row && *s.padding_row == p; }

// Both entries of pair k at position p (the caller has validated everything).
void pair_values(const SinusoidalSpec& s, std::int64_t p, std::size_t k, unsigned bits, Real& sin_v, Real& cos_v) {
  sin_v = make_real(bits);
  cos_v = make_real(bits);
  if (is_padding(s, p)) return;
  if (s.regime == Regime::exact) {
    const Real angle = exact_angle(s, p, k, working_bits(s, p, bits));
    mpfr_sin_cos(raw(sin_v), raw(cos_v), raw(angle), MPFR_RNDN);
  } else {
    const Real angle32 = emulated_angle(p, emulated_omega(s, k));
    sin_v = with_bits(rn_sin(Binary::f32, angle32, 64), bits);  // a float32 fits in bits >= 24
    cos_v = with_bits(rn_cos(Binary::f32, angle32, 64), bits);
  }
}

}  // namespace

Real frequency(const SinusoidalSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_bits(bits);
  return with_bits(exact_frequency(s, k, bits + 32), bits);
}

Real emulated_frequency(const SinusoidalSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_bits(bits);
  if (s.regime != Regime::emulated)
    throw Error(kSinusoidalWhere, "regime", std::string(to_string(s.regime)), "emulated (for emulated_frequency)");
  return with_bits(emulated_omega(s, k), bits);
}

std::size_t sin_column(const SinusoidalSpec& s, std::size_t pair) {
  validate(s);
  check_pair(s, pair);
  return s.layout == Layout::interleaved ? 2 * pair : pair;
}

std::size_t cos_column(const SinusoidalSpec& s, std::size_t pair) {
  validate(s);
  check_pair(s, pair);
  return s.layout == Layout::interleaved ? 2 * pair + 1 : pair_count(s) + pair;
}

Real value(const SinusoidalSpec& s, std::int64_t p, std::size_t column, unsigned bits) {
  validate(s);
  check_position(s, p);
  check_column(s, column);
  check_bits(bits);
  const Slot slot = slot_of(s, column);
  if (slot.kind == SlotKind::zero || is_padding(s, p)) return make_real(bits);
  Real out = make_real(bits);
  if (s.regime == Regime::exact) {
    const Real angle = exact_angle(s, p, slot.pair, working_bits(s, p, bits));
    if (slot.kind == SlotKind::sin)
      mpfr_sin(raw(out), raw(angle), MPFR_RNDN);
    else
      mpfr_cos(raw(out), raw(angle), MPFR_RNDN);
    return out;
  }
  const Real angle32 = emulated_angle(p, emulated_omega(s, slot.pair));
  return with_bits(slot.kind == SlotKind::sin ? rn_sin(Binary::f32, angle32, 64) : rn_cos(Binary::f32, angle32, 64),
                   bits);
}

std::vector<Real> row(const SinusoidalSpec& s, std::int64_t p, unsigned bits) {
  validate(s);
  check_position(s, p);
  check_bits(bits);
  std::vector<Real> out;
  out.reserve(s.dim);
  for (std::size_t c = 0; c < s.dim; ++c) out.push_back(make_real(bits));  // zero pad column, padding row
  const std::size_t h = pair_count(s);
  for (std::size_t k = 0; k < h; ++k) {
    Real sv = make_real(bits), cv = make_real(bits);
    pair_values(s, p, k, bits, sv, cv);
    out[s.layout == Layout::interleaved ? 2 * k : k] = std::move(sv);
    out[s.layout == Layout::interleaved ? 2 * k + 1 : h + k] = std::move(cv);
  }
  return out;
}

namespace {
// cos or sin of the exact angle k * omega_pair, rounded once to `bits`.
Real shift_entry(const SinusoidalSpec& s, std::int64_t k, std::size_t pair, unsigned bits,
                 int (*fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t)) {
  validate(s);
  check_shift(s, k);
  check_pair(s, pair);
  check_bits(bits);
  const Real angle = exact_angle(s, k, pair, working_bits(s, k, bits));
  Real out = make_real(bits);
  fn(raw(out), raw(angle), MPFR_RNDN);
  return out;
}
}  // namespace

Real shift_cos(const SinusoidalSpec& s, std::int64_t k, std::size_t pair, unsigned bits) {
  return shift_entry(s, k, pair, bits, mpfr_cos);
}

Real shift_sin(const SinusoidalSpec& s, std::int64_t k, std::size_t pair, unsigned bits) {
  return shift_entry(s, k, pair, bits, mpfr_sin);
}

Real dot_closed_form(const SinusoidalSpec& s, std::int64_t k, unsigned bits) {
  validate(s);
  check_shift(s, k);
  check_bits(bits);
  const std::size_t h = pair_count(s);
  // h <= 2^19 terms, each within 2^-(w-A-12): 20 more bits keep the sum's error below 2^-(bits+60).
  const unsigned w = working_bits(s, k, bits) + 20;
  Real sum = make_real(w), term = make_real(w);
  for (std::size_t i = 0; i < h; ++i) {
    const Real angle = exact_angle(s, k, i, w);
    mpfr_cos(raw(term), raw(angle), MPFR_RNDN);
    mpfr_add(raw(sum), raw(sum), raw(term), MPFR_RNDN);
  }
  return with_bits(sum, bits);
}

// ---- SinusoidalOracle ------------------------------------------------------------------------------------

namespace {

// ulp of a non-negative real x in binary32: 2^(max(floor(log2 x), -126) - 23).
double ulp32(double x) {
  if (!(x > 0)) return std::ldexp(1.0, -149);
  return std::ldexp(1.0, std::max(std::ilogb(x), -126) - 23);
}

// Enough bits for the angle p * omega_k of any accepted position to be within 2^-(bits+68) (working_bits at
// the largest |p|, min_timescale included).
unsigned cached_bits(const SinusoidalSpec& s, unsigned bits) { return working_bits(s, max_abs_position(s), bits); }

}  // namespace

SinusoidalOracle::SinusoidalOracle(const SinusoidalSpec& spec, unsigned bits) : spec_(spec), bits_(bits) {
  validate(spec_);
  check_bits(bits);
  const std::size_t h = pair_count(spec_);
  const unsigned w = cached_bits(spec_, bits);
  omega_.reserve(h);
  for (std::size_t k = 0; k < h; ++k) omega_.push_back(exact_frequency(spec_, k, w));
  SinusoidalSpec emu = spec_;
  emu.regime = Regime::emulated;
  omega32_.reserve(h);
  for (std::size_t k = 0; k < h; ++k) omega32_.push_back(round_to_double(emulated_omega(emu, k)));
}

Real SinusoidalOracle::exact(std::int64_t p, std::size_t column) const {
  check_position(spec_, p);
  check_column(spec_, column);
  const Slot slot = slot_of(spec_, column);
  Real out = make_real(bits_);
  if (slot.kind == SlotKind::zero || is_padding(spec_, p)) return out;
  const Real& w = omega_[slot.pair];
  Real angle = make_real(bits_of(w));
  mpfr_mul_si(raw(angle), raw(w), static_cast<long>(p), MPFR_RNDN);
  if (slot.kind == SlotKind::sin)
    mpfr_sin(raw(out), raw(angle), MPFR_RNDN);
  else
    mpfr_cos(raw(out), raw(angle), MPFR_RNDN);
  return out;
}

Real SinusoidalOracle::emulated(std::int64_t p, std::size_t column) const {
  check_position(spec_, p);
  check_column(spec_, column);
  const Slot slot = slot_of(spec_, column);
  if (slot.kind == SlotKind::zero || is_padding(spec_, p)) return make_real(bits_);
  const Real angle32 = emulated_angle(p, make_real(omega32_[slot.pair], 64));
  return with_bits(slot.kind == SlotKind::sin ? rn_sin(Binary::f32, angle32, 64) : rn_cos(Binary::f32, angle32, 64),
                   bits_);
}

Real SinusoidalOracle::value(std::int64_t p, std::size_t column) const {
  return spec_.regime == Regime::exact ? exact(p, column) : emulated(p, column);
}

double SinusoidalOracle::emulated_frequency_of_column(std::size_t column) const {
  check_column(spec_, column);
  const Slot slot = slot_of(spec_, column);
  if (slot.kind == SlotKind::zero) return 0.0;
  return omega32_[slot.pair];
}

double SinusoidalOracle::envelope(std::int64_t p, std::size_t column, const EnvelopeAllowance& a) const {
  if (!(a.exp_ulps >= 0 && a.trig_ulps >= 0 && std::isfinite(a.exp_ulps) && std::isfinite(a.trig_ulps)))
    throw Error(kSinusoidalWhere, "allowance", "exp " + std::to_string(a.exp_ulps) + ", trig " + std::to_string(a.trig_ulps),
                "finite, >= 0 ulps");
  const Real e = emulated(p, column);  // checks position, column, rule
  const Slot slot = slot_of(spec_, column);
  if (slot.kind == SlotKind::zero || is_padding(spec_, p)) return 0.0;
  const double w = omega32_[slot.pair];
  const double p32 = std::fabs(static_cast<double>(static_cast<float>(p)));
  const double t32 = std::fabs(static_cast<double>(static_cast<float>(p32) * static_cast<float>(w)));
  double aw = a.exp_ulps;
  if (spec_.rule == FrequencyRule::paper && spec_.paper_form == PaperForm::pow) aw = 2 * aw + 1;  // 1 / pow
  if (spec_.min_timescale != 1.0) aw = 2 * aw + 1;                                              // min_ts * w
  const double up = 1 + std::ldexp(1.0, -40);  // the double arithmetic below, rounded towards a larger bound
  const double dw = aw * ulp32(w) * up;
  const double dt = (p32 * dw + ulp32((t32 + p32 * dw) * up)) * up;
  const double ev = std::fabs(round_to_double(e));
  return (dt + (a.trig_ulps + 1) * ulp32(std::min(1.0, (ev + dt) * up))) * up;
}

}  // namespace posenc::reference
