// schemes/tener/check.hpp — `posenc check tener`: a user's table of a call of length L (pos_embed [2L, d_head], row
// c the [sin | cos] sinusoid of t = c - L with TENER's h - 1 denominator, the row of -L zero when L > init_size / 2)
// held to the exact table (rows sinusoidal.check.exact.<stored>) and to get_embedding's float32 steps within the
// emulation envelope (sinusoidal.check.envelope), the verdict held to the spec's regime (verify/relative_check.hpp).
#pragma once

#include <cstddef>

#include "posenc/tener_spec.hpp"
#include "verify/relative_check.hpp"

namespace posenc::verify::tener {

// Throws posenc::Error naming "length" (rows != 2L), "d_head" or "values".
CheckReport check_table(const TenerSpec&, std::size_t length, const relative::TableInput&,
                        const reference::EnvelopeAllowance& = {}, int threads = 0);

}  // namespace posenc::verify::tener
