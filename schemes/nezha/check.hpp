// schemes/nezha/check.hpp — `posenc check nezha`: a user's NEZHA table [2K + 1][depth] (HF's embeddings_table:
// row r = the sinusoid of the shifted index r) held to the exact table (rows sinusoidal.check.exact.<stored>) and to
// HF's float32 steps within the emulation envelope (sinusoidal.check.envelope), the verdict held to the spec's
// regime. NEZHA's table is the sinusoidal scheme's paper table at positions 0..2K (posenc/nezha_spec.hpp), so this is
// that scheme's check with NEZHA's shape and positions. No test framework: the CLI links it (through
// posenc_verify) and the properties test it (NEZHA-CHECK-*).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

#include "posenc/nezha_spec.hpp"
#include "posenc/reference/sinusoidal.hpp"
#include "verify/check_report.hpp"

namespace posenc::verify::nezha {

struct TableInput {
  std::span<const double> values;  // rows x cols numbers (exact in double)
  std::size_t rows = 0, cols = 0;
  DType stored = DType::f32;       // the type they were stored in
  nlohmann::ordered_json describe; // file, shape, ... (copied into the report)
};

// Throws posenc::Error naming "max_relative_position" (rows != 2K + 1), "depth" (cols != depth) or "values".
CheckReport check_table(const NezhaSpec&, const TableInput&, const reference::EnvelopeAllowance& = {}, int threads = 0);

}  // namespace posenc::verify::nezha
