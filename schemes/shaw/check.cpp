#include "schemes/shaw/check.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/shaw.hpp"
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

Identification identify_index(const IndexInput& in) {
  using Candidate = IdentifyCandidate<ShawSpec, int>;
  const std::size_t Lq = in.query_length, Lk = in.key_length;
  if (Lq == 0 || Lk == 0 || in.values.size() != Lq * Lk)
    throw Error("shaw identify", "values", std::to_string(in.values.size()),
                "query_length * key_length = " + std::to_string(Lq * Lk) + " (at least one)");
  // The entry at distance 0 (the last query against the last key) is k in every convention.
  const double k0 = in.values[Lq * Lk - 1];
  std::vector<std::size_t> ks;
  if (k0 >= 0 && k0 <= 1e6 && k0 == std::floor(k0)) ks.push_back(static_cast<std::size_t>(k0));
  std::vector<Candidate> cands;
  for (const auto& preset : SpecTraits<ShawSpec>::presets()) {
    std::vector<std::size_t> kk(ks);
    kk.push_back(preset.spec.max_relative_position);
    for (RelativeSign sign : {RelativeSign::key_minus_query, RelativeSign::query_minus_key})
      for (bool clip : {true, false})
        for (std::size_t k : kk) {
          ShawSpec s = preset.spec;
          s.sign = sign, s.clip = clip, s.max_relative_position = k;
          if (!is_valid(s)) continue;
          try {
            check_shaw_lengths(s, Lq, Lk);
          } catch (const Error&) {
            continue;
          }
          add_candidate(cands, Candidate{s, 0, std::string(preset.name), field_differences(preset.spec, s, {}), 0,
                                         false, {}});
        }
  }
  auto distance = [&](const Candidate& c) {
    std::vector<double> mine(Lq * Lk);
    for (std::size_t i = 0; i < Lq; ++i)
      for (std::size_t j = 0; j < Lk; ++j)
        mine[i * Lk + j] = shaw_index(c.spec, static_cast<std::int64_t>(j) - static_cast<std::int64_t>(Lk - Lq + i));
    return max_scaled_difference(in.values, mine, DType::f64) * 0x1p-52;  // in index units
  };
  auto check = [&](const Candidate& c) { return check_index(c.spec, in); };
  return rank_and_verify<ShawSpec, int>("shaw", "index matrix", std::move(cands), distance, check);
}

}  // namespace posenc::verify::shaw
