// Learned absolute positions: the id maps (one pass over the sequence each) and the row gather. Definition:
// posenc/learned_spec.hpp.
#include "posenc/learned.hpp"

#include <algorithm>
#include <cstdint>
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
  // Any entry above 1, in a loop without an exit (it vectorises: an early exit kept it at a byte per cycle, half
  // of a cumsum_mask call at 1M ids), then which one.
  const std::uint8_t* mask = in.attention_mask.data();
  std::uint8_t high = 0;
  for (std::size_t t = 0; t < in.attention_mask.size(); ++t) high |= static_cast<std::uint8_t>(mask[t] & 0xFE);
  if (high != 0)
    for (std::size_t t = 0; t < in.attention_mask.size(); ++t)
      if (mask[t] > 1)
        throw Error(kWhere, "attention_mask", "entry " + std::to_string(t) + " = " + std::to_string(mask[t]),
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

namespace {

// Whether every id of the input lies in [0, 2^40), from the map's bounds alone (no pass over the input): arange's ids
// run from offset + past to offset + past + L - 1; make_positions' from padding_idx (padding) to padding_idx + past +
// L; cumsum_mask's from offset - 1 (padding) to offset + past + L - 1. Each term is below 2^40: no overflow.
bool ids_in_range(const LearnedSpec& s, const LearnedInput& in) {
  const auto L = static_cast<std::int64_t>(in.length), p = in.past;
  std::int64_t lo = 0, hi = 0;
  switch (s.id_map) {
    case IdMap::arange: lo = s.offset + p, hi = s.offset + p + L - 1; break;
    case IdMap::make_positions: lo = s.padding_idx, hi = s.padding_idx + p + L; break;
    case IdMap::cumsum_mask: lo = s.offset - 1, hi = s.offset + p + L - 1; break;
  }
  return lo >= 0 && hi < kLearnedMaxIndex;
}

// A running count of a 0/1 mask: emit(t, run_t, m_t) for t < L, run_t = start + m_0 + ... + m_t, m_t = mask_of(t).
// Eight entries at a time: their mask bytes as one 64-bit word w (byte i = m_i), whose product with 0x0101...01
// holds in byte i the count of bytes 0..i (at most 8: no carry reaches the next byte), so no entry's count waits
// on a chain of adds through the entries before it in its word (vectorised: 0.66 -> 0.49 ms for make_positions at
// 1M ids, where the serial chain ran at ~2.3 cycles per id). Integers: the same ids either way.
template <class MaskOf, class Emit>
void running_counts(std::size_t L, std::int64_t start, MaskOf mask_of, Emit emit) {
  constexpr std::size_t kBlock = 256;
  alignas(64) std::uint8_t m[kBlock];
  std::int64_t run = start;
  std::size_t t = 0;
  for (; t + kBlock <= L; t += kBlock) {
    for (std::size_t i = 0; i < kBlock; ++i) m[i] = mask_of(t + i) ? 1 : 0;
    for (std::size_t b = 0; b < kBlock; b += 8) {
      std::uint64_t w = 0;
      for (std::size_t i = 0; i < 8; ++i) w |= static_cast<std::uint64_t>(m[b + i]) << (8 * i);
      const std::uint64_t counts = w * 0x0101010101010101ull;
      for (std::size_t i = 0; i < 8; ++i)
        emit(t + b + i, run + static_cast<std::int64_t>((counts >> (8 * i)) & 0xFF), static_cast<std::int64_t>(m[b + i]));
      run += static_cast<std::int64_t>(counts >> 56);
    }
  }
  for (; t < L; ++t) {
    const std::int64_t mt = mask_of(t) ? 1 : 0;
    run += mt;
    emit(t, run, mt);
  }
}

// The ids of the map, one pass, into ids[0, length); Checked: each through checked_id (the first id outside
// [0, 2^40) throws, naming it, after the ids before it were written). The spec's and the input's numbers are copied
// into locals first: ids are int64 stores that the compiler must otherwise assume may change them (and mask bytes
// may alias anything), which kept the loops scalar with a reload per id (5x slower than the plain loop).
template <bool Checked>
void fill_ids(const LearnedSpec& s, const LearnedInput& in, std::int64_t* ids) {
  auto id = [](std::int64_t v, std::size_t t) { return Checked ? checked_id(v, t) : v; };
  const std::size_t L = in.length;
  const std::int64_t past = in.past;
  switch (s.id_map) {
    case IdMap::arange: {
      const std::int64_t first = s.offset + past;
      for (std::size_t t = 0; t < L; ++t) ids[t] = id(first + static_cast<std::int64_t>(t), t);
      break;
    }
    case IdMap::make_positions: {
      const std::int64_t pad = s.padding_idx;
      const std::int64_t* tokens = in.tokens.data();
      running_counts(L, past, [&](std::size_t t) { return tokens[t] != pad; },
                     [&](std::size_t t, std::int64_t run, std::int64_t m) { ids[t] = id(run * m + pad, t); });
      break;
    }
    case IdMap::cumsum_mask: {
      const std::int64_t offset = s.offset;
      const std::uint8_t* mask = in.attention_mask.data();
      std::int64_t before = 0;
      for (std::size_t u = 0; u < static_cast<std::size_t>(past); ++u) before += mask[u];
      mask += past;
      running_counts(L, before, [&](std::size_t t) { return mask[t] != 0; },
                     [&](std::size_t t, std::int64_t run, std::int64_t m) { ids[t] = id(run * m - 1 + offset, t); });
      break;
    }
  }
}

}  // namespace

std::vector<std::int64_t> position_ids(const LearnedSpec& s, const LearnedInput& in) {
  validate(s);
  check_input(s, in);
  std::vector<std::int64_t> ids(in.length);
  if (ids_in_range(s, in)) fill_ids<false>(s, in, ids.data());
  else fill_ids<true>(s, in, ids.data());  // a throw discards the vector
  return ids;
}

void position_ids(const LearnedSpec& s, const LearnedInput& in, std::span<std::int64_t> out) {
  validate(s);
  check_input(s, in);
  if (out.size() != in.length)
    throw Error(kWhere, "out", std::to_string(out.size()) + " ids", "exactly length = " + std::to_string(in.length) + " ids");
  if (ids_in_range(s, in)) return fill_ids<false>(s, in, out.data());
  // Some id may leave [0, 2^40): checked into a vector first, so that a refused call leaves `out` as it was.
  const std::vector<std::int64_t> ids = position_ids(s, in);
  std::copy(ids.begin(), ids.end(), out.begin());
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
void LearnedPlan::position_ids(const LearnedInput& in, std::span<std::int64_t> out) const {
  posenc::position_ids(impl_->spec, in, out);
}
void LearnedPlan::rows(std::span<const std::int64_t> ids, std::span<double> out) const { rows_impl(impl_->table, ids, out); }
void LearnedPlan::rows(std::span<const std::int64_t> ids, std::span<float> out) const { rows_impl(impl_->table, ids, out); }
void LearnedPlan::lookup(const LearnedInput& in, std::span<double> out) const { rows(position_ids(in), out); }
void LearnedPlan::lookup(const LearnedInput& in, std::span<float> out) const { rows(position_ids(in), out); }

}  // namespace posenc
