// schemes/sinusoidal/check.hpp — `posenc check sinusoidal` and `posenc identify sinusoidal`: a user's own table
// held to the budget table and the emulation envelope (verify/check_report.hpp), and the convention search.
// No test framework: the CLI links it (through posenc_verify) and the properties test it (SIN-CHECK-*).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "posenc/reference/sinusoidal.hpp"
#include "posenc/sinusoidal_spec.hpp"
#include "verify/check_report.hpp"
#include "verify/identify.hpp"

namespace posenc::verify::sinusoidal {

// A user's table: rows x cols numbers (exact in double), the type they were stored in, and the position of each row.
struct TableInput {
  std::span<const double> values;
  std::size_t rows = 0, cols = 0;
  DType stored = DType::f32;
  std::vector<std::int64_t> positions;  // one per row
  nlohmann::ordered_json describe;      // file, shape, ... (copied into the report)
};

// Every entry against the exact value (row sinusoidal.check.exact.<stored>) and, for the tensor2tensor and
// fairseq rules, against posenc's emulation within the envelope of `allowance` (row sinusoidal.check.envelope).
// The verdict is held to the spec's regime. Throws posenc::Error naming dim/positions when the shapes disagree.
// threads: OpenMP threads (0: default); the entries are independent, the result does not depend on it.
CheckReport check_table(const SinusoidalSpec&, const TableInput&, const reference::EnvelopeAllowance& = {}, int threads = 0);

// identify's candidates: a spec and the shift between the table's row positions and the spec's positions (the
// table's row i holds position positions[i] + row_offset); the search and the report are verify/identify.hpp's.
using Identification = verify::Identification<SinusoidalSpec, std::int64_t>;

// Tries every preset with every layout, frequency rule, regime, padding row (the preset's or none) and row offset
// in [-2, 2], on up to `sample_rows` rows of the table; the best few are then checked against the oracle.
Identification identify_table(const TableInput&, std::size_t sample_rows = 64);

}  // namespace posenc::verify::sinusoidal
