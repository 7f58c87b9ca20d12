// verify/relative_check.hpp — `posenc check` of the sinusoid-relative schemes (Transformer-XL, XLNet,
// TENER): a user's table of one call, whose row c is the sinusoidal scheme's row of position positions[c], held to
// that scheme's check (rows sinusoidal.check.exact.<stored> and sinusoidal.check.envelope: the exact value, and
// the emulation within the envelope of a libm a few ulps off). No test framework (the CLI links it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/error.hpp"
#include "schemes/sinusoidal/check.hpp"
#include "verify/check_report.hpp"

namespace posenc::verify::relative {

// A user's table: rows x cols numbers (exact in double) and the type they were stored in.
struct TableInput {
  std::span<const double> values;
  std::size_t rows = 0, cols = 0;
  DType stored = DType::f32;
  nlohmann::ordered_json describe;  // file, shape, ... (copied into the report)
};

// `where` names the scheme; `length_name` the parameter that fixes the row count (errors: it, "d_model"/`cols_name`,
// "values"); note: what the rows are (prefixed to the report's note).
inline CheckReport check_table(const std::string& where, nlohmann::ordered_json spec_json, const SinusoidalSpec& sin,
                               std::vector<std::int64_t> positions, const std::string& length_name,
                               const std::string& length_value, const std::string& cols_name, const TableInput& in,
                               const reference::EnvelopeAllowance& allowance, int threads, const std::string& note) {
  if (in.rows != positions.size())
    throw Error(where + " check", length_name, length_value,
                "a call whose table has the file's " + std::to_string(in.rows) + " rows (this one has " +
                    std::to_string(positions.size()) + ")",
                "does not match the table");
  if (in.cols != sin.dim)
    throw Error(where + " check", cols_name, std::to_string(sin.dim),
                "the table's last dimension, " + std::to_string(in.cols), "differs from the table");
  if (in.values.size() != in.rows * in.cols)
    throw Error(where + " check", "values", std::to_string(in.values.size()), std::to_string(in.rows * in.cols));
  const sinusoidal::TableInput t{in.values, in.rows, in.cols, in.stored, std::move(positions), in.describe};
  CheckReport rep = sinusoidal::check_table(sin, t, allowance, threads);
  rep.scheme = where;
  rep.spec = std::move(spec_json);
  rep.note = note + " " + rep.note;
  return rep;
}

}  // namespace posenc::verify::relative
