// schemes/fire/check.hpp — `posenc check fire`: a user's FIRE bias tensor held to the budget table (exact
// mathematics with the user's weights) and to the emulation envelope of the reference's float32 steps
// (verify/check_report.hpp). No test framework: the CLI links it (through posenc_verify) and the properties test
// it (FIRE-CHECK-*).
//
// References. A tensor of L = 4096 keys has ~10^8 entries whose normalizer differs row by row, too many for the MPFR
// oracle, so the check evaluates its references with CheckEvaluator below: an independent transcription of
// posenc/fire_spec.hpp (it shares no code with lib/), in binary128 for the exact regime (the MLP as its linear piece
// A_s x + B_s on x's segment between the units' kinks; error <= (w + 16) 2^-112 S, 2^-59 of the smallest tolerance it
// is used with) and in float32 steps with correctly rounded logs for the cramming regime. Claim FIRE-CHECK-2 holds it
// to the MPFR oracle (include/oracle/posenc/reference/fire.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/src/core/binary128.hpp"
#include "posenc/fire_spec.hpp"
#include "verify/bias_check.hpp"

namespace posenc::verify::fire {

// How far a real implementation's float32 steps may be from posenc's correctly rounded emulation: torch / Sleef
// float32 log within `ulps` of correctly rounded, and (any_order = true) the first Linear fused (x W1 + b1 in one
// rounding) and the second Linear's sum in any order, with or without FMA (a BLAS kernel's blocking: gamma_{w+1} per
// side); any_order = false holds the MLP to the spec's own mlp_sum order.
struct EnvelopeAllowance {
  double ulps = 2.0;
  bool any_order = true;
};

// The references the check holds a tensor to, for one spec and weights.
class CheckEvaluator {
 public:
  // Numerators ln(|c| d + 1) are cached for d < key_length (each computed once).
  CheckEvaluator(const FireSpec&, const FireWeights&, std::size_t key_length);
  // The exact bias b_h(q, j) in binary128 (|error| <= (w + 16) 2^-112 S) as the sum of three doubles hi + lo + lo2
  // (exactly the binary128 number), and the exact x (as a double).
  struct Exact {
    double hi = 0, lo = 0, lo2 = 0, x = 0;
  };
  Exact exact(std::size_t h, std::int64_t q, std::int64_t j) const;
  // hi + lo + lo2 of an Exact, exactly (a Real of 192 bits; no default precision involved).
  static Real value(const Exact&);
  // The cramming regime's float32 bias (every step correctly rounded) and its intermediate values.
  struct Emulated {
    float bias = 0, l = 0, n = 0, den = 0, x = 0;
  };
  Emulated emulated(std::size_t h, std::int64_t q, std::int64_t j) const;
  // The same from a row's denominators (computed once per row) and the distance d = |q - j|.
  struct Row {
    quad den = 0;           // ln(|c| N + 1) + eps, exact regime
    float n = 0, den32 = 0;       // cramming regime
  };
  Row row(std::int64_t q) const;
  Exact exact(std::size_t h, std::int64_t d, const Row&) const;
  Emulated emulated(std::size_t h, std::int64_t d, const Row&) const;
  // Whether rows q1, q2 have the same normalizer (both at or below the threshold): exact regime / float32 regime.
  bool at_threshold(std::int64_t q) const;
  bool at_threshold32(std::int64_t q) const;

 private:
  FireSpec s_;
  FireWeights w_;
  float c32_, thr32_, e32_;
  std::vector<float> w1_, b1_, w2_, b2_;
  std::vector<quad> l128_;  // ln(|c| d + 1), d < key_length
  // The exact MLP is piecewise linear in x: kinks_ are the units' kinks -b1/W1 > 0 (ascending, binary128), and on
  // segment s (x between kinks_[s-1] and kinks_[s]) head h's MLP is A_[h][s] x + B_[h][s] (the active units' sums in
  // binary128).
  std::vector<quad> kinks_;
  std::vector<std::vector<quad>> A_, B_;
  std::vector<float> l32_;        // RN32(ln(RN32(|RN32(c32 d)| + 1)))
  quad numerator128(std::int64_t d) const;
  float numerator32(std::int64_t d) const;
};

// The envelope E of the emulated bias at (h, q, j) (row fire.check.envelope): a real float32 implementation lies
// within E of posenc's emulation.
double envelope(const FireSpec&, const FireWeights&, std::size_t h, const CheckEvaluator::Emulated&,
                const EnvelopeAllowance& = {});

using BiasInput = BiasTensorInput;  // verify/bias_check.hpp

// Every finite entry against the exact bias of the user's weights (row fire.check.exact.<stored>) and, for the
// cramming regime, against posenc's emulation within the envelope (row fire.check.envelope); -inf is accepted exactly
// where a causal mask puts it (key after the query, or a padding key) and counted; the verdict is held to the spec's
// regime. Columns of the report are heads; bands are the distance d = |q - j|. Throws posenc::Error naming "heads",
// "key_length" (> 2^24), "key_mask", "values", or the weight that does not fit the spec.
CheckReport check_bias(const FireSpec&, const FireWeights&, const BiasInput&, const EnvelopeAllowance& = {},
                       int threads = 0);

}  // namespace posenc::verify::fire
