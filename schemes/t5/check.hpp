// schemes/t5/check.hpp — `posenc check t5`: a user's T5 bias tensor [heads][Lq][Lk] held to the table entries of
// the exact buckets (budget row t5.check.exact.ratio) and, for the hf regime, to posenc's emulation of HF's float32
// buckets within the envelope of a real torch log (t5.check.envelope). No test framework: the CLI links it (through
// posenc_verify) and the properties test it (T5-CHECK-*).
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/t5.hpp"
#include "verify/bias_check.hpp"

namespace posenc::verify::t5 {

// How far a real torch float32 log may be from correctly rounded (ulps of float32).
struct EnvelopeAllowance {
  double ulps = 2.0;
};

using BiasInput = BiasTensorInput;  // verify/bias_check.hpp

// The two buckets a real HF run may give distance a >= me of a side (hf regime): the emulated one and, where z lies
// within the envelope of an integer, its neighbour (else both the same).
std::pair<std::int64_t, std::int64_t> hf_bucket_pair(const T5Spec&, std::int64_t r, const EnvelopeAllowance& = {});

// Every finite entry against table[bucket(j - q_i)][h] (exact buckets; row t5.check.exact.ratio) and, for the hf
// regime, the emulation's entry within the envelope (t5.check.envelope); -inf is accepted exactly where a causal
// mask puts it and counted. Columns of the report are heads; bands are |j - q_i|. Throws posenc::Error naming
// "heads", "key_mask", "values" or "table" when the input disagrees.
CheckReport check_bias(const T5Spec&, const T5Weights&, const BiasInput&, const EnvelopeAllowance& = {}, int threads = 0);

}  // namespace posenc::verify::t5
