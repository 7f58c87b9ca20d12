#include "schemes/shaw/check.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/shaw.hpp"
#include "posenc/spec_json.hpp"
#include "schemes/shaw/budget.hpp"

namespace posenc::verify::shaw {

CheckReport check_index(const ShawSpec& spec, const IndexInput& in) {
  validate(spec);
  check_shaw_lengths(spec, in.query_length, in.key_length);
  const std::size_t Lq = in.query_length, Lk = in.key_length;
  if (in.values.size() != Lq * Lk)
    throw Error("shaw check", "values", std::to_string(in.values.size()),
                "query_length * key_length = " + std::to_string(Lq * Lk));
  CheckReport rep;
  rep.scheme = "shaw";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  rep.input["geometry"] = {{"query_length", Lq}, {"key_length", Lk}};
  rep.references.emplace_back("exact", budget(ShawRow::check_index), DType::f64, 1);
  // The oracle's index depends on u = j - q_i alone (u in [-(Lk - 1), Lq - 1]): once per u, each from a cell of
  // the matrix at that offset (the last row for u <= 0, the first for u > 0).
  std::vector<std::int64_t> by_u(Lk + Lq - 1);
  for (std::size_t t = 0; t < by_u.size(); ++t) {
    const auto u = static_cast<std::int64_t>(t) - static_cast<std::int64_t>(Lk - 1);
    const std::size_t i = u <= 0 ? Lq - 1 : 0, qi = Lk - Lq + i;
    by_u[t] = reference::shaw_index(spec, i, static_cast<std::size_t>(static_cast<std::int64_t>(qi) + u), Lq, Lk);
  }
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j) {
      const auto u = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(Lk - Lq + i);
      const std::int64_t want = by_u[static_cast<std::size_t>(u + static_cast<std::int64_t>(Lk - 1))];
      rep.references[0].add(u < 0 ? -u : u, 0, in.values[i * Lk + j], Real(static_cast<double>(want)));
    }
  rep.held_to = 0;
  rep.note = "Every entry must be clip(d, -k, k) + k exactly, with d = " +
             std::string(spec.sign == RelativeSign::key_minus_query ? "j - q_i (key minus query)" : "q_i - j (query minus key)") +
             " and the queries the last query_length keys (q_i = key_length - query_length + i).";
  return rep;
}

}  // namespace posenc::verify::shaw
