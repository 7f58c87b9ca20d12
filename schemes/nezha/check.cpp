#include "schemes/nezha/check.hpp"

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/spec_json.hpp"
#include "schemes/sinusoidal/check.hpp"

namespace posenc::verify::nezha {

CheckReport check_table(const NezhaSpec& spec, const TableInput& in, const reference::EnvelopeAllowance& allowance,
                        int threads) {
  validate(spec);
  const std::size_t rows = nezha_table_rows(spec);
  if (in.rows != rows)
    throw Error("nezha check", "max_relative_position", std::to_string(spec.max_relative_position),
                "(rows - 1) / 2 of the table: it has " + std::to_string(in.rows) + " rows, 2K + 1 are expected",
                "does not match the table");
  if (in.cols != spec.depth)
    throw Error("nezha check", "depth", std::to_string(spec.depth), "the table's last dimension, " + std::to_string(in.cols),
                "differs from the table");
  if (in.values.size() != in.rows * in.cols)
    throw Error("nezha check", "values", std::to_string(in.values.size()), std::to_string(in.rows * in.cols));
  std::vector<std::int64_t> positions(rows);
  std::iota(positions.begin(), positions.end(), std::int64_t{0});
  const sinusoidal::TableInput t{in.values, in.rows, in.cols, in.stored, std::move(positions), in.describe};
  CheckReport rep = sinusoidal::check_table(nezha_sinusoidal_spec(spec), t, allowance, threads);
  rep.scheme = "nezha";
  rep.spec = to_json(spec);
  rep.note = "NEZHA's table row r is the paper's interleaved sinusoid of the shifted index r = 0..2K (position r of "
             "the sinusoidal paper table; CONVENTIONS.md §2.4). " +
             rep.note;
  return rep;
}

}  // namespace posenc::verify::nezha
