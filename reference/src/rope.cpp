#include "posenc/reference/rope.hpp"

#include <mpfr.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "posenc/error.hpp"

namespace posenc::reference {
namespace {

constexpr const char* kWhere = "rope reference";
constexpr Binary F = Binary::f32;
constexpr unsigned kEmu = 64;  // precision of the Reals that hold emulated float32 intermediates (exactly)

mpfr_ptr raw(Real& x) { return x.backend().data(); }
mpfr_srcptr raw(const Real& x) { return x.backend().data(); }

std::size_t half_of(const RopeSpec& s) { return s.rotary_dim / 2; }

void check_pair(const RopeSpec& s, std::size_t k) {
  const std::size_t h = half_of(s);
  if (k >= h)
    throw Error(kWhere, "k", std::to_string(k),
                "a pair index 0 <= k < rotary_dim/2 = " + std::to_string(h) + " (rotary_dim = " +
                    std::to_string(s.rotary_dim) + ")");
}

void check_channel(const RopeSpec& s, std::size_t channel) {
  if (channel >= s.head_dim)
    throw Error(kWhere, "channel", std::to_string(channel),
                "0 <= channel < head_dim = " + std::to_string(s.head_dim));
}

// The working precision W = bits + 192 must itself be a valid MPFR precision of the oracles.
void check_rope_bits(unsigned bits) {
  if (bits < kMinBits || bits > kMaxBits - kRopeWorkingMargin)
    throw Error(kWhere, "bits", std::to_string(bits),
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

// theta_k = base^(-2k/r) at w bits: the exponent is rounded once (exact when 2k/r is dyadic), then MPFR's pow
// (correctly rounded) of the exact double base.
Real exact_theta(const RopeSpec& s, std::size_t k, unsigned w) {
  Real ex = make_real(w);
  mpfr_set_ui(raw(ex), static_cast<unsigned long>(2 * k), MPFR_RNDN);
  mpfr_div_ui(raw(ex), raw(ex), static_cast<unsigned long>(s.rotary_dim), MPFR_RNDN);
  mpfr_neg(raw(ex), raw(ex), MPFR_RNDN);
  Real theta = make_real(w);
  mpfr_pow(raw(theta), raw(make_real(s.base, 64)), raw(ex), MPFR_RNDN);  // a double is exact in 64 bits
  return theta;
}

// ---- float32 steps --------------------------------------------------------------------------------------

Real f32_of_int(std::int64_t n) { return rn(F, make_real(n, kEmu), kEmu); }

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
Real rn32_add(const Real& a, const Real& b) {
  Real t = make_real(320);
  mpfr_add(raw(t), raw(a), raw(b), MPFR_RNDN);  // exact
  return rn(F, t, kEmu);
}
Real rn32_sub(const Real& a, const Real& b) {
  Real t = make_real(320);
  mpfr_sub(raw(t), raw(a), raw(b), MPFR_RNDN);  // exact
  return rn(F, t, kEmu);
}

// HF: inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
// (transformers@ef46806 modeling_rope_utils.py _compute_default_rope_parameters; GPT-J's
// create_sinusoidal_positions, transformers@cb6cd7e, and Meta's precompute_freqs_cis, llama@0504cf4, are the
// same expression). Step by step in float32 on the CPU:
//   .float()          RN32(2k)                  (exact: 2k < r <= 2^16)
//   / dim             RN32(RN32(2k) / RN32(r))  (aten cpu div_true_kernel: a / b in float32)
//   base ** t         RN32(pow(RN32(base), t))  (pow(Scalar, Tensor): the Python float becomes a float32 tensor)
//   1.0 / t           RN32(1 / t)               (a float32 reciprocal or division: RN32(1/t) either way)
Real hf_inv_freq32(const RopeSpec& s, std::size_t k) {
  const Real base32 = rn(F, make_real(s.base, kEmu), kEmu);
  const Real e32 = rn_div(F, f32_of_int(static_cast<std::int64_t>(2 * k)),
                          f32_of_int(static_cast<std::int64_t>(s.rotary_dim)), kEmu);
  return rn_div(F, make_real(1, kEmu), rn32_pow(base32, e32), kEmu);
}

// ggml: const float theta_scale = powf(freq_base, -2.0f/n_dims); (ggml@084bfe1 src/ggml-cpu/ops.cpp
// ggml_compute_forward_rope_f32; freq_base is a float op parameter, n_dims an int converted to float).
Real ggml_theta_scale32(const RopeSpec& s) {
  const Real base32 = rn(F, make_real(s.base, kEmu), kEmu);
  const Real e32 = rn_div(F, make_real(-2, kEmu), f32_of_int(static_cast<std::int64_t>(s.rotary_dim)), kEmu);
  return rn32_pow(base32, e32);
}

void check_vector_length(const RopeSpec& s, std::span<const double> x, const char* name) {
  if (x.size() != s.head_dim)
    throw Error(kWhere, name, "a vector of " + std::to_string(x.size()) + " values",
                "a vector of head_dim = " + std::to_string(s.head_dim) + " values", "has the wrong length");
}

bool is_float32(double v) {
  return std::isfinite(v) && std::fabs(v) <= static_cast<double>(std::numeric_limits<float>::max()) &&
         static_cast<double>(static_cast<float>(v)) == v;
}

Real neg(const Real& x) {
  Real r = make_real(bits_of(x));
  mpfr_neg(raw(r), raw(x), MPFR_RNDN);
  return r;
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

Real rope_theta(const RopeSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_rope_bits(bits);
  return with_bits(exact_theta(s, k, bits + kRopeWorkingMargin), bits);
}

Real rope_hf_inv_freq(const RopeSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_rope_bits(bits);
  return with_bits(hf_inv_freq32(s, k), bits);  // a float32 fits in bits >= 24
}

Real rope_ggml_theta_scale(const RopeSpec& s, unsigned bits) {
  validate(s);
  check_rope_bits(bits);
  return with_bits(ggml_theta_scale32(s), bits);
}

Real rope_emulated_frequency(const RopeSpec& s, std::size_t k, unsigned bits) {
  validate(s);
  check_pair(s, k);
  check_rope_bits(bits);
  switch (s.regime) {
    case RopeRegime::hf: return with_bits(hf_inv_freq32(s, k), bits);
    case RopeRegime::ggml: return with_bits(ggml_theta_scale32(s), bits);
    case RopeRegime::exact: break;
  }
  throw Error(kWhere, "regime", std::string(to_string(s.regime)), "hf | ggml (the regimes with float32 frequencies)");
}

// ---- RopeOracle ----------------------------------------------------------------------------------------------

RopeOracle::RopeOracle(const RopeSpec& spec, unsigned bits) : spec_(spec), bits_(bits), w_(0) {
  validate(spec_);
  check_rope_bits(bits);
  w_ = bits + kRopeWorkingMargin;
  const std::size_t h = half_of(spec_);
  theta_.reserve(h);
  for (std::size_t k = 0; k < h; ++k) theta_.push_back(exact_theta(spec_, k, w_));
  if (spec_.regime == RopeRegime::hf) {
    inv32_.reserve(h);
    for (std::size_t k = 0; k < h; ++k) inv32_.push_back(hf_inv_freq32(spec_, k));
  } else if (spec_.regime == RopeRegime::ggml) {
    scale32_ = ggml_theta_scale32(spec_);
  }
}

// p * theta_k at W bits: |error| <= 2^(A+6-W) (header).
Real RopeOracle::exact_angle_w(std::int64_t p, std::size_t k) const {
  Real a = make_real(w_);
  mpfr_mul(raw(a), raw(theta_[k]), raw(make_real(p, 64)), MPFR_RNDN);
  return a;
}

// hf: freqs = inv_freq[None, :, None] @ position_ids[:, None, :].float()  (LlamaRotaryEmbedding.forward,
// transformers@5dd4a63, autocast disabled: float32; an inner dimension of 1, so each entry is one rounded
// product RN32(RN32(p) * inv_k); GPT-J's einsum "i,j->ij" and Meta's torch.outer(t, freqs) likewise).
// ggml: ggml_rope_cache_init(p, ...) takes `float theta_base` (t_0 = RN32(p), p from the int32 pos tensor) and
// does `theta *= theta_scale` after each pair; rope_yarn with ext_factor 0 uses theta_interp = freq_scale *
// theta_extrap = 1.0f * (theta / 1.0f), both exact.
Real RopeOracle::emulated_angle(std::int64_t p, std::size_t k) const {
  const Real p32 = f32_of_int(p);
  if (spec_.regime == RopeRegime::hf) return rn_mul(F, p32, inv32_[k], kEmu);
  Real t = p32;
  for (std::size_t j = 0; j < k; ++j) t = rn_mul(F, t, *scale32_, kEmu);
  return t;
}

void RopeOracle::emulated_angles(std::int64_t p, std::vector<Real>& out) const {
  const std::size_t h = half_of(spec_);
  out.clear();
  out.reserve(h);
  const Real p32 = f32_of_int(p);
  if (spec_.regime == RopeRegime::hf) {
    for (std::size_t k = 0; k < h; ++k) out.push_back(rn_mul(F, p32, inv32_[k], kEmu));
    return;
  }
  Real t = p32;
  for (std::size_t k = 0; k < h; ++k) {
    out.push_back(t);
    if (k + 1 < h) t = rn_mul(F, t, *scale32_, kEmu);
  }
}

Real RopeOracle::angle(std::int64_t p, std::size_t k) const {
  check_position(spec_, p);
  check_pair(spec_, k);
  if (spec_.regime == RopeRegime::exact) return exact_angle_w(p, k);
  return with_bits(emulated_angle(p, k), bits_);
}

Real RopeOracle::exact_cos(std::int64_t p, std::size_t k) const {
  check_position(spec_, p);
  check_pair(spec_, k);
  Real out = make_real(bits_);
  mpfr_cos(raw(out), raw(exact_angle_w(p, k)), MPFR_RNDN);
  return out;
}

Real RopeOracle::exact_sin(std::int64_t p, std::size_t k) const {
  check_position(spec_, p);
  check_pair(spec_, k);
  Real out = make_real(bits_);
  mpfr_sin(raw(out), raw(exact_angle_w(p, k)), MPFR_RNDN);
  return out;
}

// hf: cos = emb.cos(), sin = emb.sin() in float32, times attention_scaling = 1.0 (exact) for the default rope;
// ggml: rope_yarn's cosf(theta) * mscale, sinf(theta) * mscale with mscale = attn_factor = 1 (exact).
Real RopeOracle::cos(std::int64_t p, std::size_t k) const {
  if (spec_.regime == RopeRegime::exact) return exact_cos(p, k);
  check_position(spec_, p);
  check_pair(spec_, k);
  return with_bits(rn_cos(F, emulated_angle(p, k), kEmu), bits_);
}

Real RopeOracle::sin(std::int64_t p, std::size_t k) const {
  if (spec_.regime == RopeRegime::exact) return exact_sin(p, k);
  check_position(spec_, p);
  check_pair(spec_, k);
  return with_bits(rn_sin(F, emulated_angle(p, k), kEmu), bits_);
}

void RopeOracle::check_vector(std::span<const double> x, const char* name, bool float32) const {
  check_vector_length(spec_, x, name);
  for (std::size_t c = 0; c < x.size(); ++c) {
    if (!std::isfinite(x[c]))
      throw Error(kWhere, name, format_real(x[c]) + " in channel " + std::to_string(c), "finite numbers",
                  "is not finite");
    if (float32 && !is_float32(x[c]))
      throw Error(kWhere, name, format_real(x[c]) + " in channel " + std::to_string(c),
                  "binary32 numbers (the " + std::string(to_string(spec_.regime)) +
                      " regime's float32 steps start from float32 inputs: round x to float first)",
                  "is not a float32 number");
  }
}

// Exact: y_i = RN_bits(x_i c - x_j s), y_j = RN_bits(x_j c + x_i s) with c, s = cos, sin of the W-bit angle
// rounded to W bits (mpfr_fmms/fmma round the exact expression once).
void RopeOracle::rotate_pair_exact(std::int64_t p, std::span<const double> x, std::size_t k, Real& yi,
                                   Real& yj) const {
  const RopePairChannels ch = pair_channels(spec_, k);
  Real c = make_real(w_), s = make_real(w_);
  mpfr_sin_cos(raw(s), raw(c), raw(exact_angle_w(p, k)), MPFR_RNDN);
  const Real xi = make_real(x[ch.first], 64), xj = make_real(x[ch.second], 64);
  yi = make_real(bits_);
  yj = make_real(bits_);
  mpfr_fmms(raw(yi), raw(xi), raw(c), raw(xj), raw(s), MPFR_RNDN);
  mpfr_fmma(raw(yj), raw(xj), raw(c), raw(xi), raw(s), MPFR_RNDN);
}

// Emulated: HF q * cos + rotate_half(q) * sin (resp. GPT-J rotate_every_two; Meta's complex product
// (a+bi)(c+di) = (ac - bd) + (ad + bc)i), ggml  x0*cos_theta - x1*sin_theta, x0*sin_theta + x1*cos_theta:
// two rounded products, one rounded sum per output (the FMA contraction a compiler may do is outside).
void RopeOracle::rotate_pair_emulated(const Real& angle32, std::span<const double> x, std::size_t k, bool inverse,
                                      Real& yi, Real& yj) const {
  const RopePairChannels ch = pair_channels(spec_, k);
  const Real c = rn_cos(F, angle32, kEmu);
  Real s = rn_sin(F, angle32, kEmu);
  if (inverse) s = neg(s);  // = the steps at position -p (header), = ggml rope_back's sin_sign = -1
  const Real xi = make_real(x[ch.first], kEmu), xj = make_real(x[ch.second], kEmu);
  yi = with_bits(rn32_sub(rn_mul(F, xi, c, kEmu), rn_mul(F, xj, s, kEmu)), bits_);
  yj = with_bits(rn32_add(rn_mul(F, xj, c, kEmu), rn_mul(F, xi, s, kEmu)), bits_);
}

std::vector<Real> RopeOracle::exact_rotate(std::int64_t p, std::span<const double> x, bool inverse) const {
  check_position(spec_, p);
  check_vector(x, "x", false);
  const std::int64_t q = inverse ? -p : p;  // the accepted range is symmetric
  std::vector<Real> out;
  out.reserve(x.size());
  for (double v : x) out.push_back(make_real(v, bits_));  // pass-through channels keep this
  const std::size_t h = half_of(spec_);
  for (std::size_t k = 0; k < h; ++k) {
    const RopePairChannels ch = pair_channels(spec_, k);
    rotate_pair_exact(q, x, k, out[ch.first], out[ch.second]);
  }
  return out;
}

std::vector<Real> RopeOracle::rotate(std::int64_t p, std::span<const double> x, bool inverse) const {
  if (spec_.regime == RopeRegime::exact) return exact_rotate(p, x, inverse);
  check_position(spec_, p);
  check_vector(x, "x", true);
  std::vector<Real> angles;
  emulated_angles(p, angles);
  std::vector<Real> out;
  out.reserve(x.size());
  for (double v : x) out.push_back(make_real(v, bits_));  // float32: exact
  for (std::size_t k = 0; k < angles.size(); ++k) {
    const RopePairChannels ch = pair_channels(spec_, k);
    rotate_pair_emulated(angles[k], x, k, inverse, out[ch.first], out[ch.second]);
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
    rotate_pair_emulated(emulated_angle(p, k), x, k, inverse, yi, yj);
  else
    rotate_pair_exact(inverse ? -p : p, x, k, yi, yj);
  return channel == pair_channels(spec_, k).first ? yi : yj;
}

// <R(m) q, R(n) k> straight from the definition: both vectors rotated at W bits (error <= (|q_i|+|q_j|)
// 2^-(bits+143) per component), each pair's u_i v_i + u_j v_j rounded once at W, the passed channels' products
// exact (106 bits), all summed by mpfr_sum (correctly rounded): the bound of the header.
Real RopeOracle::score(std::int64_t m, std::span<const double> q, std::int64_t n, std::span<const double> k) const {
  check_position(spec_, m, "m");
  check_position(spec_, n, "n");
  check_vector(q, "q", false);
  check_vector(k, "k", false);
  const std::size_t h = half_of(spec_);
  std::vector<Real> terms;
  terms.reserve(h + (spec_.head_dim - spec_.rotary_dim));
  Real cm = make_real(w_), sm = make_real(w_), cn = make_real(w_), sn = make_real(w_);
  Real ui = make_real(w_), uj = make_real(w_), vi = make_real(w_), vj = make_real(w_);
  for (std::size_t pair = 0; pair < h; ++pair) {
    const RopePairChannels ch = pair_channels(spec_, pair);
    mpfr_sin_cos(raw(sm), raw(cm), raw(exact_angle_w(m, pair)), MPFR_RNDN);
    mpfr_sin_cos(raw(sn), raw(cn), raw(exact_angle_w(n, pair)), MPFR_RNDN);
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

}  // namespace posenc::reference
