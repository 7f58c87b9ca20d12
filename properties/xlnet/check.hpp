// properties/xlnet/check.hpp — `posenc check xlnet`: a user's table of a call (pos_emb [rows, d_model], rows = klen +
// qlen for bi, klen + 1 for uni; row c the [sin | cos] sinusoid of pos_seq[c]) held to the exact table (rows
// sinusoidal.check.exact.<stored>) and to relative_positional_encoding's float32 steps within the emulation envelope
// (sinusoidal.check.envelope), the verdict held to the spec's regime (support/relative_check.hpp).
#pragma once

#include <cstddef>

#include "posenc/xlnet_spec.hpp"
#include "support/relative_check.hpp"

namespace posenc::test::xlnet {

// Throws posenc::Error naming "key_length" (rows other than the call's), "d_model" or "values".
CheckReport check_table(const XlnetSpec&, std::size_t query_length, std::size_t key_length,
                        const relative::TableInput&, const reference::EnvelopeAllowance& = {}, int threads = 0);

}  // namespace posenc::test::xlnet
