// schemes/xlnet/check.hpp — `posenc check xlnet`: a user's table of a call (pos_emb [rows, d_model], rows = klen +
// qlen for bi, klen + 1 for uni; row c the [sin | cos] sinusoid of pos_seq[c]) held to the exact table (rows
// sinusoidal.check.exact.<stored>) and to relative_positional_encoding's float32 steps within the emulation envelope
// (sinusoidal.check.envelope), the verdict held to the spec's regime (verify/relative_check.hpp).
// `posenc check xlnet --what ef`: a user's segment term ef [heads][Lq][Lk] held to the exact <q_i + r_s_bias_h,
// seg_embed[s(i, j)][h]> within the envelope of any float summation (row xlnet.check.segment.envelope).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/xlnet_spec.hpp"
#include "verify/bias_check.hpp"
#include "verify/relative_check.hpp"

namespace posenc::verify::xlnet {

// Throws posenc::Error naming "key_length" (rows other than the call's), "d_model" or "values".
CheckReport check_table(const XlnetSpec&, std::size_t query_length, std::size_t key_length,
                        const relative::TableInput&, const reference::EnvelopeAllowance& = {}, int threads = 0);

// The parameters ef reads (row-major): r_s_bias [heads][d_head], seg_embed [2][heads][d_head] (0: same segment).
struct SegmentWeights {
  std::vector<double> r_s_bias, seg_embed;
};

// HF's ef (rel_attn_core; posenc/xlnet.hpp, Segment term) of the user's q [heads][Lq][d_head] (the exact numbers the
// user's code used, as doubles) and token_types (exactly Lq; memory keys type 0): every entry of in ([heads][Lq][Lk],
// Lk from the tensor, no key mask: ef has none) against the oracle's exact T = <q_i + r_s_bias_h, seg_embed[s][h]>
// (include/oracle/posenc/reference/xlnet.hpp with every other weight 0 and scale 1), held to the one reference
// "<stored> steps in any order" with the per-entry envelope E = 1.01 segment_error_bound(stored, d_head, S) (row
// xlnet.check.segment.envelope). No entry may be -inf: no mask applies to ef. Columns of the report are heads, its
// positions the keys j. Throws posenc::Error (where "xlnet check") naming the spec's field, "r_s_bias" / "seg_embed"
// (size, finite, |v| <= 1e15), "heads" (the tensor's differ), "query_length" / "key_length", "values", "key_mask"
// (given), "token_types" (not Lq entries) or "q" (not heads * Lq * d_head finite values).
CheckReport check_segment_term(const XlnetSpec&, const SegmentWeights&, std::span<const double> q,
                               std::span<const std::int64_t> token_types, const BiasTensorInput& in, int threads = 0);

}  // namespace posenc::verify::xlnet
