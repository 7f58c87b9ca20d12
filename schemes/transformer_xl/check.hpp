// schemes/transformer_xl/check.hpp — `posenc check transformer_xl`: a user's table R of a call with key_length keys
// ([key_length][d_model], row c the [sin | cos] sinusoid of pos(key_length - 1 - c): mem_transformer.py's pos_emb)
// held to the exact table (rows sinusoidal.check.exact.<stored>) and to PositionalEmbedding's float32 steps within the
// emulation envelope (sinusoidal.check.envelope), the verdict held to the spec's regime (verify/relative_check.hpp).
#pragma once

#include <cstddef>

#include "posenc/transformer_xl_spec.hpp"
#include "verify/relative_check.hpp"

namespace posenc::verify::transformer_xl {

// Throws posenc::Error naming "key_length" (rows != key_length), "d_model" or "values".
CheckReport check_table(const TransformerXlSpec&, std::size_t key_length, const relative::TableInput&,
                        const reference::EnvelopeAllowance& = {}, int threads = 0);

}  // namespace posenc::verify::transformer_xl
