// posenc/reference/rope.hpp — the MPFR oracle of rotary position embedding (RoPE).
//
// An independent transcription of the definition in posenc/rope_spec.hpp (it never includes or links lib/):
// direct evaluation of the defining formulas for every pair, no recurrences (except ggml's, which is its
// definition), no BLAS.
//
// Exact regime (RopeRegime::exact). With r = rotary_dim, h = r/2 and pair k = 0..h-1
//   theta_k = base^(-2k/r)   (base: the spec's double taken as an exact binary number),  a = p * theta_k,
//   pair k = channels (2k, 2k+1) (interleaved) or (k, k+h) (halves),
//   y_i = x_i cos a - x_j sin a,  y_j = x_j cos a + x_i sin a;  channels r..head_dim-1 pass through.
//   Accuracy. Everything is formed at the working precision W = bits + kRopeWorkingMargin (192): the exponent
//   -2k/r and base^(-2k/r) are rounded to W bits (relative error of theta_k <= 2^(5.2-W), since
//   |-2k/r| * ln(base) <= ln(1e12) < 28), the angle p*theta_k once more. Because theta_k <= theta_0 = 1 and
//   |p| < 2^A (A = bit width of |p| <= 41), the angle's absolute error is <= 2^(A+6-W) <= 2^-(bits+145): the
//   angle keeps bits + 145 fractional bits at every accepted position, and MPFR reduces it by 2*pi exactly.
//     rope_theta:         |returned - theta_k| <= ulp_bits(theta_k)/2 + theta_k 2^-(bits+186)
//     cos, sin:           |returned - true|    <= ulp_bits/2 + 2^-(bits+145)        (values in [-1, 1])
//     rotate (channel y): |returned - y|       <= ulp_bits(y)/2 + (|x_i| + |x_j|) 2^-(bits+143)
//     score:              |returned - s|       <= ulp_bits(s)/2 + S 2^-(bits+136),
//                         S = sum over pairs (|q_i|+|q_j|)(|k_i|+|k_j|) + sum over passed channels |q_c k_c|
//   (the last two are DESIGN.md §3's scaled errors). p = 0 is exact: cos 1, sin 0, rotate returns x rounded
//   once to bits (exactly x for bits >= 53).
//
// Emulated regimes: the float32 numbers the named implementation computes, each step correctly rounded
// (RN32 = round to nearest-even binary32; the convention of DESIGN.md §2 — real powf/sinf/cosf may be an ulp
// off, and compilers may contract a*b - c*d into an FMA: that is the envelope's business, not the oracle's).
//   hf   (HF Llama/NeoX/GPT-J, Meta Llama):  inv_k = RN32(1 / RN32(pow(RN32(base), RN32(RN32(2k) / RN32(r)))))
//                                            a = RN32(RN32(p) * inv_k)
//   ggml (ggml-cpu rope_f32, no YaRN):       scale = RN32(pow(RN32(base), RN32(-2 / RN32(r))))
//                                            a = t_k,  t_0 = RN32(p),  t_{j+1} = RN32(t_j * scale)
//   both: c = RN32(cos a), s = RN32(sin a);  y_i = RN32(RN32(x_i c) - RN32(x_j s)),
//                                            y_j = RN32(RN32(x_j c) + RN32(x_i s)).
//   Verified against the real code (float32 steps only; see reference/src/rope.cpp for the lines):
//     HF   transformers@ef46806472a64b0013ed413781e3afed82bfa047 modeling_rope_utils.py
//          _compute_default_rope_parameters; @5dd4a63548857797727ae73eeb6a6e886ea02a3e llama/modeling_llama.py
//          LlamaRotaryEmbedding.forward, rotate_half, apply_rotary_pos_emb;
//          @cb6cd7e984c1482cfcf62aeb3b2921bfeca71e95 gptj/modeling_gptj.py create_sinusoidal_positions,
//          rotate_every_two, apply_rotary_pos_emb
//     Meta meta-llama/llama@0504cf440a50aab815cadccd10a46e7ba70ff344 llama/model.py precompute_freqs_cis,
//          apply_rotary_emb (torch.polar(1, a) and the complex64 product (a+bi)(c+di) = (ac-bd) + (ad+bc)i, taken
//          here as separately rounded products and one rounded sum; torch's complex kernel not re-read)
//     ggml ggml-org/ggml@084bfe1a2112ae79f89ea69262da9743fe049e44 src/ggml-cpu/ops.cpp rope_f32,
//          ggml_rope_cache_init, rope_yarn (ext_factor 0, freq_scale 1, attn_factor 1, no freq_factors)
//   Caveat (not modelled): PyTorch on CUDA divides a tensor by a Python scalar as a * RN32(1/b)
//   (aten/src/ATen/native/cuda/BinaryDivTrueKernel.cu, pytorch@0f57f050df0e969d03e76495ace7ea90ba2b05d8), so an
//   inv_freq built on the GPU has RN32(RN32(2k) * RN32(1/r)) for the exponent; it equals RN32(2k)/RN32(r) when r
//   is a power of two. The CPU kernel divides, RN32(a / b) (div_true_kernel in aten/src/ATen/native/cpu/
//   BinaryOpsKernel.cpp, pytorch@c93798da6d867b0fca8cd48efd9f30e345d63003): the formula above. ggml's positions
//   are int32 (|p| < 2^31); the oracle accepts the spec's |p| <= 2^40 in every regime.
//
// Inverse (inverse == true, R(-p) = R(p)^T): the exact regime rotates by -p; the emulated regimes use the same
// c and negate s. By the symmetry of RN32 that is exactly what the implementation computes for position -p
// (RN32(-p) = -RN32(p), so the hf angle and every ggml t_k change sign, and RN32(sin(-a)) = -RN32(sin a)), and it
// is what ggml's rope_back does (sin_sign = -1).
//
// Every function calls posenc::validate(spec) first and throws posenc::Error (naming the parameter, the value
// and the accepted range) for a bad position (posenc::check_position; "m" and "n" in score), pair index ("k"),
// channel, vector length or value ("x"; "q", "k" in score), or bits (kMinBits <= bits <= kMaxBits - 192).
// Results are Reals of exactly `bits` bits, except angle() in the exact regime (W bits, see there).
// Thread-safe: no function reads Boost's default precision; MPFR keeps its state (exponent range, constant
// caches) per thread (Debian's MPFR is built with TLS). RopeOracle's methods are const and share nothing mutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "posenc/reference/mp.hpp"
#include "posenc/rope_spec.hpp"

namespace posenc::reference {

// Extra bits of the working precision W = bits + kRopeWorkingMargin of the exact regime (see above).
inline constexpr unsigned kRopeWorkingMargin = 192;

// Channels of pair k, from the definition: (2k, 2k+1) interleaved, (k, k + r/2) halves. k < r/2.
struct RopePairChannels {
  std::size_t first;
  std::size_t second;
};
RopePairChannels rope_pair_channels(const RopeSpec&, std::size_t k);
// The pair a channel belongs to, or std::nullopt for a pass-through channel (rotary_dim <= channel < head_dim).
std::optional<std::size_t> rope_pair_of_channel(const RopeSpec&, std::size_t channel);

// theta_k = base^(-2k/r) (exact mathematics whatever spec.regime), rounded to `bits`. k < r/2.
// theta_0 = 1 exactly; the thetas decrease strictly (base > 1).
Real rope_theta(const RopeSpec&, std::size_t k, unsigned bits = kDefaultBits);

// The float32 constants of the emulated regimes, exactly (as Reals of `bits` bits; any spec.regime):
//   rope_hf_inv_freq:       inv_k = RN32(1 / RN32(pow(RN32(base), RN32(RN32(2k) / RN32(r))))), k < r/2
//   rope_ggml_theta_scale:  scale = RN32(pow(RN32(base), RN32(-2 / RN32(r)))), the per-step multiplier
// rope_emulated_frequency(spec, k) is the one of spec.regime: hf -> inv_k; ggml -> scale for every k (ggml has
// no per-pair frequency of its own: its angle t_k depends on p through the recurrence); exact -> Error naming
// "regime".
Real rope_hf_inv_freq(const RopeSpec&, std::size_t k, unsigned bits = kDefaultBits);
Real rope_ggml_theta_scale(const RopeSpec&, unsigned bits = kDefaultBits);
Real rope_emulated_frequency(const RopeSpec&, std::size_t k, unsigned bits = kDefaultBits);

class RopeOracle {
 public:
  // Validates the spec (posenc::Error naming the field) and the precision; precomputes theta_k at W bits (and
  // the float32 constants of an emulated regime).
  explicit RopeOracle(const RopeSpec& spec, unsigned bits = kDefaultBits);
  const RopeSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // The angle of pair k at position p in the spec's regime.
  //   exact: p * theta_k as a Real of W = bits + 192 bits, absolute error <= 2^-(bits+145) (enough for cos/sin
  //          of it to be correct to `bits`); hf: RN32(RN32(p) inv_k); ggml: t_k. Emulated angles are exact
  //          float32 numbers held in a Real of `bits` bits.
  Real angle(std::int64_t p, std::size_t k) const;
  // cos and sin of pair k at position p: exact regime -> rounded to bits (bound above); hf/ggml -> the float32
  // RN32(cos a), RN32(sin a) exactly.
  Real cos(std::int64_t p, std::size_t k) const;
  Real sin(std::int64_t p, std::size_t k) const;
  // The exact regime's values whatever spec.regime says (for error-vs-exact measurements of emulated regimes).
  Real exact_cos(std::int64_t p, std::size_t k) const;
  Real exact_sin(std::int64_t p, std::size_t k) const;

  // R(p) x (inverse: R(-p) x) for one head vector x (x.size() == head_dim), in the spec's regime. x must be
  // finite; in the hf/ggml regimes every x_c must be a float32 number (Error naming "x" otherwise: round it
  // first, as the implementation would). Channels >= rotary_dim are returned unchanged (rounded to bits, i.e.
  // exactly x_c for bits >= 53, and always for float32 x). Emulated results are float32 numbers; a sum that
  // overflows binary32 gives +-inf as the float32 code would.
  std::vector<Real> rotate(std::int64_t p, std::span<const double> x, bool inverse = false) const;
  // Output channel `channel` (< head_dim) of rotate(p, x, inverse), computing only its pair.
  Real rotate_channel(std::int64_t p, std::span<const double> x, std::size_t channel, bool inverse = false) const;
  // rotate() in the exact regime whatever spec.regime says (x need not be float32).
  std::vector<Real> exact_rotate(std::int64_t p, std::span<const double> x, bool inverse = false) const;

  // <R(m) q, R(n) k>, exact mathematics whatever the regime (q, k finite doubles taken as exact numbers),
  // rounded to bits: both vectors are rotated at W bits and the products summed by mpfr_sum (bound above).
  Real score(std::int64_t m, std::span<const double> q, std::int64_t n, std::span<const double> k) const;

 private:
  Real exact_angle_w(std::int64_t p, std::size_t k) const;
  Real emulated_angle(std::int64_t p, std::size_t k) const;
  void emulated_angles(std::int64_t p, std::vector<Real>& out) const;
  void check_vector(std::span<const double> x, const char* name, bool float32) const;
  void rotate_pair_exact(std::int64_t p, std::span<const double> x, std::size_t k, Real& yi, Real& yj) const;
  void rotate_pair_emulated(const Real& angle32, std::span<const double> x, std::size_t k, bool inverse, Real& yi,
                            Real& yj) const;

  RopeSpec spec_;
  unsigned bits_;
  unsigned w_;                 // working precision of the exact regime, bits + kRopeWorkingMargin
  std::vector<Real> theta_;    // theta_k at w_ bits
  std::vector<Real> inv32_;    // hf: inv_k (float32 values, 64-bit Reals); empty otherwise
  std::optional<Real> scale32_;  // ggml: the float32 multiplier
};

}  // namespace posenc::reference
