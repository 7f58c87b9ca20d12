// schemes/deberta/check.hpp — `posenc check deberta`: a user's relative-position matrix b(i - j) (HF
// build_relative_position with buckets) or c2p / p2c index matrix clamp(b + span, 0, 2 span - 1), [query_length]
// [key_length] with the queries at positions 0..Lq-1, held to the exact buckets (row deberta.check.exact.bitwise)
// and, for the hf regime, to posenc's emulation of HF's float32 buckets within the envelope of a real torch log
// (deberta.check.envelope). No test framework: the CLI links it (through posenc_verify) and the properties test
// it (DEBERTA-CHECK-*).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <utility>

#include "posenc/deberta_spec.hpp"
#include "verify/check_report.hpp"
#include "verify/identify.hpp"

namespace posenc::verify::deberta {

// How far a real torch float32 log may be from correctly rounded (ulps of float32).
struct EnvelopeAllowance {
  double ulps = 2.0;
};

enum class IndexKind { relative, position };  // b(i - j), or c = clamp(b + span, 0, 2 span - 1)

struct IndexInput {
  std::span<const double> values;  // the user's entries (integers held in doubles)
  std::size_t query_length = 0, key_length = 0;
  IndexKind kind = IndexKind::relative;
  nlohmann::ordered_json describe;  // file, shape, ... (copied into the report)
};

// The two buckets a real HF run may give rel (hf regime): the emulated one and, where z = RN32(y N) lies within the
// envelope of an integer, its neighbour (else both the same).
std::pair<std::int64_t, std::int64_t> hf_bucket_pair(const DebertaSpec&, std::int64_t rel, const EnvelopeAllowance& = {});

// Every entry against the exact bucket (row deberta.check.exact.bitwise) and, for the hf regime, the emulation's
// within the envelope (deberta.check.envelope; the verdict is held to it); the report's positions are |i - j|.
// Throws posenc::Error naming "query_length" / "key_length", "values" (not Lq * Lk of them) or "ulp allowance".
CheckReport check_index(const DebertaSpec&, const IndexInput&, const EnvelopeAllowance& = {});

// ---- identify: which convention an index matrix follows ----------------------------------------------------

// Candidates: every preset with position_buckets in {the preset's, none, 64, 128, 512}, max_relative_positions in
// {the preset's, 128, 256, 1024}, with and without clamp, both regimes, read as b(i - j) or as the c2p index c;
// ranked by posenc's index (one value per offset: the matrices are Toeplitz), the best checked (verify/identify.hpp).
using Identification = verify::Identification<DebertaSpec, IndexKind>;
Identification identify_index(std::span<const double> values, std::size_t query_length, std::size_t key_length);

}  // namespace posenc::verify::deberta
