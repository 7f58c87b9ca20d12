#include "schemes/learned/measure.hpp"

#include <sstream>
#include <vector>

#include "posenc/reference/learned.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::test::learned {
namespace {
namespace rf = posenc::reference;
using R = LearnedRow;
}  // namespace

std::string input_label(const LearnedSpec& s, const LearnedInput& in) {
  std::ostringstream o;
  o << "spec=" << to_json(s).dump() << " length=" << in.length << " past=" << in.past;
  if (!in.tokens.empty()) {
    o << " tokens=[";
    for (std::size_t t = 0; t < in.tokens.size(); ++t) o << (t ? "," : "") << in.tokens[t];
    o << "]";
  }
  if (!in.attention_mask.empty()) {
    o << " attention_mask=";
    for (auto m : in.attention_mask) o << static_cast<int>(m);
  }
  return o.str();
}

void measure_ids(const LearnedSpec& s, const LearnedInput& in, const Sink& sink) {
  const std::vector<std::int64_t> got = position_ids(s, in);
  const std::vector<std::int64_t> want = rf::learned_position_ids(s, in.length, in.past, in.tokens, in.attention_mask);
  for (std::size_t t = 0; t < in.length; ++t)
    emit(sink, R::ids, static_cast<double>(got[t]), rf::make_real(static_cast<double>(want[t]), 64),
         [&] { return input_label(s, in) + " t=" + std::to_string(t); });
}

void measure_rows(const LearnedSpec& s, const LearnedTable& table, std::span<const std::int64_t> ids, const Sink& sink) {
  const LearnedPlan plan(s, table);
  std::vector<double> r64(ids.size() * table.dim);
  std::vector<float> r32(ids.size() * table.dim);
  plan.rows(ids, std::span<double>(r64));
  plan.rows(ids, std::span<float>(r32));
  for (std::size_t t = 0; t < ids.size(); ++t)
    for (std::size_t c = 0; c < table.dim; ++c) {
      const Real ref = rf::learned_row_value(table, ids[t], c, 64);
      auto what = [&] {
        return "table " + std::to_string(table.rows) + "x" + std::to_string(table.dim) + " id=" + std::to_string(ids[t]) +
               " c=" + std::to_string(c);
      };
      emit(sink, R::rows_f64, r64[t * table.dim + c], ref, what);
      emit(sink, R::rows_f32, r32[t * table.dim + c], ref, what);
    }
}

}  // namespace posenc::test::learned
