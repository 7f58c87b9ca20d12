// schemes/kerple/check.hpp — `posenc check kerple`: a user's KERPLE bias tensor held to the budget table (exact
// mathematics with the user's weights) and to the emulation envelope of the reference's float32 steps
// (verify/check_report.hpp). No test framework: the CLI links it (through posenc_verify) and the properties
// test it (KERPLE-CHECK-*).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "posenc/kerple.hpp"
#include "verify/bias_check.hpp"

namespace posenc::verify::kerple {

// How far a real implementation's float32 steps may be from posenc's correctly rounded emulation: torch / Sleef
// float32 log and pow within `ulps` of correctly rounded, and (fused = true) the product a D and the sum 1 + a D
// fused into one rounding (a JIT-compiled or fused kernel).
struct EnvelopeAllowance {
  double ulps = 2.0;
  bool fused = true;
};

// The envelope E of the emulated bias e at distance d of a head with clamped float32 parameters p, a (row
// kerple.check.envelope): a real float32 implementation lies within E of posenc's emulation.
double envelope(const KerpleSpec&, double p, double a, std::int64_t d, double e, const EnvelopeAllowance& = {});

using BiasInput = BiasTensorInput;  // verify/bias_check.hpp

// Every finite entry against the exact -p ln(1 + a d) / -a d^p of the user's weights (row
// kerple.check.exact.<stored>) and, for the megatron regime, against posenc's emulation within the envelope (row
// kerple.check.envelope); -inf is accepted exactly where a causal mask puts it (key after the query, or a padding
// key) and counted; the verdict is held to the spec's regime. Columns of the report are heads; bands are d.
// Throws posenc::Error naming "heads", "key_mask", "values", "bias_p" or "bias_a" when the input disagrees.
CheckReport check_bias(const KerpleSpec&, const KerpleWeights&, const BiasInput&, const EnvelopeAllowance& = {},
                       int threads = 0);

}  // namespace posenc::verify::kerple
