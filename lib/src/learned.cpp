// Learned absolute positions: the id maps (one pass over the sequence each) and the row gather. Definition:
// posenc/learned_spec.hpp.
#include "posenc/learned.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace posenc {
namespace {

constexpr const char* kWhere = "learned";

void check_input(const LearnedSpec& s, const LearnedInput& in) {
  if (in.length < 1 || in.length > static_cast<std::size_t>(kLearnedMaxIndex))
    throw Error(kWhere, "length", std::to_string(in.length), "an integer in [1, 2^40)");
  if (in.past < 0 || in.past >= kLearnedMaxIndex)
    throw Error(kWhere, "past", std::to_string(in.past), "an integer in [0, 2^40) (tokens already in the cache)");
  if (s.id_map == IdMap::make_positions || !in.tokens.empty()) {
    if (in.tokens.size() != in.length)
      throw Error(kWhere, "tokens", std::to_string(in.tokens.size()) + " token ids",
                  std::string("exactly length = ") + std::to_string(in.length) + " token ids" +
                      (s.id_map == IdMap::make_positions ? " (make_positions reads them)" : ""));
  }
  if (s.id_map == IdMap::cumsum_mask) {
    const auto need = static_cast<std::size_t>(in.past) + in.length;
    if (in.attention_mask.size() != need)
      throw Error(kWhere, "attention_mask", std::to_string(in.attention_mask.size()) + " entries",
                  "exactly past + length = " + std::to_string(need) + " entries (cumsum_mask counts over the cache too)");
  } else if (!in.attention_mask.empty() && in.attention_mask.size() != in.length &&
             in.attention_mask.size() != static_cast<std::size_t>(in.past) + in.length) {
    throw Error(kWhere, "attention_mask", std::to_string(in.attention_mask.size()) + " entries",
                "empty (this map does not read it), length or past + length entries");
  }
  for (std::size_t t = 0; t < in.attention_mask.size(); ++t)
    if (in.attention_mask[t] > 1)
      throw Error(kWhere, "attention_mask", "entry " + std::to_string(t) + " = " + std::to_string(in.attention_mask[t]),
                  "0 (padding) or 1 (token)");
}

std::int64_t checked_id(std::int64_t id, std::size_t t) {
  if (id < 0 || id >= kLearnedMaxIndex)
    throw Error(kWhere, "id", std::to_string(id) + " at token " + std::to_string(t), "ids in [0, 2^40)");
  return id;
}

template <class T>
void rows_impl(const LearnedTable& tab, std::span<const std::int64_t> ids, std::span<T> out) {
  std::size_t n = 0;
  if (__builtin_mul_overflow(ids.size(), tab.dim, &n) || out.size() != n)
    throw Error(kWhere, "out", std::to_string(out.size()) + " elements",
                "exactly ids * dim = " + std::to_string(ids.size()) + " * " + std::to_string(tab.dim) + " elements");
  for (std::size_t t = 0; t < ids.size(); ++t)
    if (ids[t] < 0 || static_cast<std::uint64_t>(ids[t]) >= tab.rows)
      throw Error(kWhere, "position id", std::to_string(ids[t]) + " at token " + std::to_string(t),
                  "a row of the table, 0 <= id < rows = " + std::to_string(tab.rows) +
                      " (a lookup beyond the table is refused, never wrapped)");
  for (std::size_t t = 0; t < ids.size(); ++t) {
    const double* src = tab.values.data() + static_cast<std::size_t>(ids[t]) * tab.dim;
    T* dst = out.data() + t * tab.dim;
    if constexpr (std::is_same_v<T, double>) std::memcpy(dst, src, tab.dim * sizeof(double));
    else
      for (std::size_t c = 0; c < tab.dim; ++c) dst[c] = static_cast<float>(src[c]);
  }
}

}  // namespace

std::vector<std::int64_t> position_ids(const LearnedSpec& s, const LearnedInput& in) {
  validate(s);
  check_input(s, in);
  std::vector<std::int64_t> ids(in.length);
  switch (s.id_map) {
    case IdMap::arange:
      for (std::size_t t = 0; t < in.length; ++t) ids[t] = checked_id(s.offset + in.past + static_cast<std::int64_t>(t), t);
      break;
    case IdMap::make_positions: {
      std::int64_t run = 0;
      for (std::size_t t = 0; t < in.length; ++t) {
        const std::int64_t m = in.tokens[t] != s.padding_idx ? 1 : 0;
        run += m;
        ids[t] = checked_id((run + in.past) * m + s.padding_idx, t);
      }
      break;
    }
    case IdMap::cumsum_mask: {
      std::int64_t run = 0;
      const auto past = static_cast<std::size_t>(in.past);
      for (std::size_t u = 0; u < past + in.length; ++u) {
        const std::int64_t m = in.attention_mask[u];
        run += m;
        if (u >= past) ids[u - past] = checked_id(run * m - 1 + s.offset, u - past);
      }
      break;
    }
  }
  return ids;
}

struct LearnedPlan::Impl {
  LearnedSpec spec;
  LearnedTable table;
};

LearnedPlan::LearnedPlan(const LearnedSpec& spec, const LearnedTable& table) {
  validate(spec);
  check_learned_table(table);
  impl_ = std::make_shared<const Impl>(Impl{spec, table});
}
const LearnedSpec& LearnedPlan::spec() const noexcept { return impl_->spec; }
const LearnedTable& LearnedPlan::table() const noexcept { return impl_->table; }
std::vector<std::int64_t> LearnedPlan::position_ids(const LearnedInput& in) const {
  return posenc::position_ids(impl_->spec, in);
}
void LearnedPlan::rows(std::span<const std::int64_t> ids, std::span<double> out) const { rows_impl(impl_->table, ids, out); }
void LearnedPlan::rows(std::span<const std::int64_t> ids, std::span<float> out) const { rows_impl(impl_->table, ids, out); }
void LearnedPlan::lookup(const LearnedInput& in, std::span<double> out) const { rows(position_ids(in), out); }
void LearnedPlan::lookup(const LearnedInput& in, std::span<float> out) const { rows(position_ids(in), out); }

}  // namespace posenc
