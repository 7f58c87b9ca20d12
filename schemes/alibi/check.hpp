// schemes/alibi/check.hpp — `posenc check alibi`: a user's bias tensor or slopes held to the budget table (exact
// mathematics) and to the emulation envelope of the ofirpress / BLOOM / MPT float32 steps (verify/check_report.hpp).
// No test framework: the CLI links it (through posenc_verify) and the properties test it (ALIBI-CHECK-*).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "posenc/alibi.hpp"
#include "verify/bias_check.hpp"
#include "verify/identify.hpp"

namespace posenc::verify::alibi {

// How far a real implementation's float32 slope step may be from correctly rounded (ulps of float32): torch /
// Sleef float32 pow (BLOOM), torch exp2 (MPT), glibc double pow then a cast (ofirpress).
struct EnvelopeAllowance {
  double pow_ulps = 2.0;
};

// The envelope E of an emulated bias RN32(x32 s_e) = e (row alibi.check.envelope): a real implementation lies
// within E of posenc's emulation given the allowance.
double envelope(double x, double slope32, double e, const EnvelopeAllowance& = {});

// A user's bias tensor (verify/bias_check.hpp); its key_mask is also BLOOM's: the keys whose positions count.
using BiasInput = BiasTensorInput;

// Every finite entry against the exact m_h x (row alibi.check.exact.<stored>) and, for the emulated regimes,
// against posenc's emulation within the envelope (row alibi.check.envelope); -inf is accepted exactly where a
// causal mask puts it (key after the query, or a padding key) and counted; the verdict is held to the spec's
// regime. Columns of the report are heads; bands are |x|. Throws posenc::Error naming "heads", "key_mask" or
// "values" when the input disagrees with the spec.
CheckReport check_bias(const AlibiSpec&, const BiasInput&, const EnvelopeAllowance& = {}, int threads = 0);

// A user's slopes, one per head: each held as the bias at x = 1 (the same rows).
CheckReport check_slopes(const AlibiSpec&, std::span<const double> slopes, DType stored,
                         const nlohmann::ordered_json& describe, const EnvelopeAllowance& = {});

// ---- identify: which convention slopes or a bias tensor follow ------------------------------------------------

// A user's slopes (shape (heads,)) or bias tensor (shape (heads, Lq, Lk); -inf where a causal mask hides a key).
struct IdentifyInput {
  std::span<const double> values;
  std::vector<std::size_t> shape;
  DType stored = DType::f32;
};
// Candidates: every preset in every regime with the input's head count, and for a tensor every variant; ranked by
// posenc's own slopes / bias (a tensor: its last 16 query rows), the best checked (verify/identify.hpp). Throws
// posenc::Error naming "shape" for a shape that is neither.
using Identification = verify::Identification<AlibiSpec, int>;
Identification identify(const IdentifyInput&);

}  // namespace posenc::verify::alibi
