// properties/support/generators.hpp — RapidCheck generators aimed at the hard regions of the sinusoidal
// encodings. Every generated value carries the region it came from (`region`), which properties pass to
// RC_TAG and to the recorder, so coverage is visible in the test output and in the proofs JSON.
//
// Hard positions (DESIGN.md §3): 0, 1, powers of two and their neighbours, 48039 (where common fast
// sin/cos reductions fail), 131071, 2^20, 2^24 +- 1, the top of the accepted range (2^40), and positions
// whose angle p w_k is within a few ulps of a multiple of pi/2 for some pair k: the denominators q of
// the continued-fraction convergents of 2 w_k / pi (|q * 2 w_k / pi - n| < 1/q_next), found at 256
// bits by the oracle's arithmetic and cached per (spec, pair).
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "posenc/sinusoidal_spec.hpp"

namespace posenc::test {

struct SpecCase {
  SinusoidalSpec spec;
  std::string name;    // preset name or "custom"
  std::string region;  // e.g. "fairseq d=odd regime=emulated"
};

struct PositionCase {
  std::int64_t p = 0;
  std::string region;  // "p=0", "p~2^k", "p=48039", "angle~n*pi/2", ...
};

void showValue(const SpecCase&, std::ostream&);
void showValue(const PositionCase&, std::ostream&);

// Region name of a dimension: "d tiny", "d odd", "d pow2", "d other".
std::string dim_region(std::size_t d);

// 2..8192: tiny (2..8), odd, powers of two, log-uniform random.
rc::Gen<std::size_t> gen_dim(std::size_t max_dim = 8192);
// 2..1e7, 10000 exactly with weight, log-uniform otherwise.
rc::Gen<double> gen_base();
// The spec made valid at dim d: an odd d only where odd_dim allows it, d >= 4 for the fairseq rule.
SinusoidalSpec at_dim(SinusoidalSpec s, std::size_t d);
// One of posenc::sinusoidal_presets() at a generated dim (odd dims made even for presets that reject
// them, d >= 4 for fairseq), regime exact or (t2t, fairseq) emulated when allow_emulated.
rc::Gen<SpecCase> gen_preset_spec(std::size_t max_dim = 8192, bool allow_emulated = true);
// Any valid spec: presets, or a custom combination of layout, rule, base, min_timescale, odd-dim
// handling, signed positions and padding row.
rc::Gen<SpecCase> gen_any_spec(std::size_t max_dim = 8192, bool allow_emulated = true);

// Every hard position accepted by the spec (sorted, unique), with the pairs whose angle is nearly a
// multiple of pi/2 taken from up to `pairs` pairs (0, 1, h/2, h-1, ...). Deterministic; cached.
std::vector<PositionCase> hard_positions(const SinusoidalSpec&, std::size_t pairs = 4);
// Denominators of the convergents of 2 w_k / pi up to max_abs_position(spec) (w_k exact, or the
// emulated float32 w_k in the emulated regime). Cached.
std::vector<std::int64_t> quarter_pi_positions(const SinusoidalSpec&, std::size_t pair);

// A position for the spec: a hard position, a small one, or a log-uniform random one; negative when
// the spec has signed positions. Stays within [lo, hi] intersected with the accepted range.
rc::Gen<PositionCase> gen_position(const SinusoidalSpec&);
rc::Gen<PositionCase> gen_position(const SinusoidalSpec&, std::int64_t lo, std::int64_t hi);
// A shift k with |k| <= max_k: small, powers of two, hard (same sources as positions), random.
rc::Gen<std::int64_t> gen_shift(const SinusoidalSpec&, std::int64_t max_k);

}  // namespace posenc::test
