// posenc/reference/sinusoidal.hpp — the MPFR oracle of the sinusoidal absolute encoding.
//
// An independent transcription of the definition in posenc/sinusoidal_spec.hpp (it never includes or
// links lib/): direct evaluation of the defining formula for every entry, no recurrences, no BLAS.
//
// Exact regime (Regime::exact). With h = floor(dim/2) and pair k = 0..h-1
//   omega_k = min_timescale * base^(-e_k),  e_k = 2k/dim (paper), k/max(h-1,1) (tensor2tensor),
//                                           k/(h-1) (fairseq)
// where base and min_timescale are the spec's doubles taken as exact binary numbers. The entry is
// sin(p*omega_k) / cos(p*omega_k) placed by the layout; a zero-pad column (odd dim) is 0; the padding
// row is all 0.
//   Accuracy: omega_k and p*omega_k are formed at w = bits + 80 + log2|p*omega_0| bits (MPFR pow/mul,
//   relative error <= 2^(11-w) for ln(base) <= 710), then sin/cos are rounded once to `bits` (MPFR
//   reduces the argument exactly). Absolute error of a returned entry <= 2^-(bits+60) + ulp_bits/2.
//
// Emulated regime (Regime::emulated, every rule): the float32 number the named
// implementation computes, obtained by performing its steps with correctly rounded IEEE operations
// (RN32 = round to nearest-even binary32, RN64 = binary64, see CONVENTIONS.md §2.1):
//   tensor2tensor: ln64 = RN64(ln base); inc32 = RN32(RN32(ln64) / RN32(max(h-1,1)));
//                  e32_k = RN32(exp(RN32(RN32(k) * -inc32))); omega32_k = RN32(RN32(min_ts) * e32_k)
//   fairseq:       emb64 = RN64(RN64(ln base) / (h-1)); w32_k = RN32(exp(RN32(RN32(k) * RN32(-emb64))));
//                  omega32_k = w32_k if min_ts == 1, else RN32(RN32(min_ts) * w32_k)
//   paper:         PyTorch's exp form (HF NEZHA's table, transformers@553b10de models/deprecated/nezha/
//                  modeling_nezha.py: exp(arange(0, depth, 2).float() * (-math.log(10000.0) / depth))):
//                  c64 = RN64(-RN64(ln base) / d); w32_k = RN32(exp(RN32(RN32(2k) * RN32(c64)))); min_ts as fairseq
//   both:          angle32 = RN32(RN32(p) * omega32_k); entry = RN32(sin angle32) / RN32(cos angle32)
// (the correctly rounded float32 exp/sin/cos is the convention; real libms may differ by an ulp).
// Slots follow spec.layout; odd dim appends a zero column; the padding row is all 0.
//
// Every function calls posenc::validate(spec) first and throws posenc::Error (naming parameter, value
// and accepted range) for a bad position (posenc::check_position), column, pair, shift or bits.
// Results are Reals of exactly `bits` bits (kMinBits <= bits <= kMaxBits).
// Thread-safe: no function reads Boost's default precision; the rn_* steps change MPFR's exponent range
// only for the duration of one operation, and MPFR keeps it per thread (Debian's MPFR is built with TLS).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "posenc/reference/mp.hpp"
#include "posenc/sinusoidal_spec.hpp"

namespace posenc::reference {

// omega_k as a real number (exact rule of spec.rule, whatever spec.regime), rounded to `bits`.
// k < pair_count(spec).
Real frequency(const SinusoidalSpec&, std::size_t k, unsigned bits = kDefaultBits);

// Entry of column `column` (< dim) at position `position` (accepted by posenc::check_position).
// Exact regime: the real value rounded to `bits`. Emulated regime: the emulated float32 value, exactly.
Real value(const SinusoidalSpec&, std::int64_t position, std::size_t column, unsigned bits = kDefaultBits);

// All dim entries of the row of `position`, value(spec, position, c) for c = 0..dim-1.
std::vector<Real> row(const SinusoidalSpec&, std::int64_t position, unsigned bits = kDefaultBits);

// omega32_k of the emulated implementation (spec.regime must be emulated), exactly, as a Real.
Real emulated_frequency(const SinusoidalSpec&, std::size_t k, unsigned bits = kDefaultBits);

// Column of the sin (cos) slot of pair k under spec.layout (k < pair_count(spec)).
std::size_t sin_column(const SinusoidalSpec&, std::size_t pair);
std::size_t cos_column(const SinusoidalSpec&, std::size_t pair);

// Largest |k| accepted by the shift functions: 2^41 (differences of accepted positions).
inline constexpr std::int64_t kMaxShift = std::int64_t{1} << 41;

// Entries of the shift operator T(k) of pair `pair` (exact regime only; |k| <= kMaxShift):
// cos(k*omega_pair) and sin(k*omega_pair), so that, for non-padding rows,
//   sin slot of PE(p+k) = cos(k w) * sin slot of PE(p) + sin(k w) * cos slot of PE(p)
//   cos slot of PE(p+k) = cos(k w) * cos slot of PE(p) - sin(k w) * sin slot of PE(p).
Real shift_cos(const SinusoidalSpec&, std::int64_t k, std::size_t pair, unsigned bits = kDefaultBits);
Real shift_sin(const SinusoidalSpec&, std::int64_t k, std::size_t pair, unsigned bits = kDefaultBits);

// ---- many entries of one spec ------------------------------------------------------------------------
// The same values as value() for many positions and columns of one spec, with the frequencies computed once
// (what `posenc check` needs for a whole table). exact() and emulated() give both regimes whatever
// spec.regime says. Thread-safe (const; MPFR keeps its
// state per thread).
//
// The emulation envelope (budget row sinusoidal.check.envelope): how far a real implementation of the
// emulated float32 steps may be from posenc's correctly rounded emulation e, given how many float32 ulps its
// exp or pow (A_exp) and sin/cos (A_trig) may be from correctly rounded:
//   A_w = A_exp for the exp forms, 2 A_exp + 1 for the paper rule's pow form (the reciprocal of a pow A_exp ulps
//   off: 2 A_exp ulps of w where it crosses a binade, plus its own rounding); then 2 A_w + 1 when min_timescale
//   != 1 (every rule multiplies by min_timescale last),
//   dw = A_w ulp32(w32),  dt = |p32| dw + ulp32(|t32| + |p32| dw),
//   E  = dt + (A_trig + 1) ulp32(min(1, |e| + dt)),
// with t32 = RN32(p32 w32) the emulated angle; zero columns and padding rows are stored, not computed: E = 0.
struct EnvelopeAllowance {
  double exp_ulps = 2.0;
  double trig_ulps = 2.0;
};

class SinusoidalOracle {
 public:
  // Validates the spec (posenc::Error naming the field) and the precision.
  explicit SinusoidalOracle(const SinusoidalSpec& spec, unsigned bits = kDefaultBits);
  const SinusoidalSpec& spec() const noexcept { return spec_; }
  // Entries of column `column` at `position` (checked as value() checks them), rounded to `bits`.
  Real exact(std::int64_t position, std::size_t column) const;
  Real emulated(std::int64_t position, std::size_t column) const;
  Real value(std::int64_t position, std::size_t column) const;  // the spec's own regime
  // E(position, column) of the envelope above, an upper bound computed in double (rounded up).
  double envelope(std::int64_t position, std::size_t column, const EnvelopeAllowance& = {}) const;
  // The float32 frequency of the emulated code for the pair of `column` (0 for a zero column).
  double emulated_frequency_of_column(std::size_t column) const;

 private:
  SinusoidalSpec spec_;
  unsigned bits_;
  std::vector<Real> omega_;     // exact frequencies at enough bits for any accepted position
  std::vector<double> omega32_; // emulated float32 frequencies
};

// PE(p) . PE(p+k) = sum_{i<h} cos(k*omega_i) for non-padding rows (exact regime only; |k| <= kMaxShift),
// summed at working precision and rounded once to `bits`.
Real dot_closed_form(const SinusoidalSpec&, std::int64_t k, unsigned bits = kDefaultBits);

}  // namespace posenc::reference
