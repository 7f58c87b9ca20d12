// verify/bias_check.hpp — what `posenc check` of every additive-bias scheme (ALiBi, KERPLE, FIRE, ...)
// shares: the user's tensor, its validation against the spec, and the scan over its rows that skips the entries a
// causal mask legitimately holds as -inf. A scheme supplies only how one row's entries are referenced.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "posenc/alibi_spec.hpp"  // check_alibi_lengths: the lengths every bias scheme accepts
#include "posenc/error.hpp"
#include "verify/check_report.hpp"
#include "verify/parallel_cases.hpp"

namespace posenc::verify {

// A user's bias tensor [heads][query_length][key_length] (values exact in double; -inf where the user masked).
struct BiasTensorInput {
  std::span<const double> values;
  std::size_t heads = 0, query_length = 0, key_length = 0;
  std::vector<std::uint8_t> key_mask;  // empty or key_length entries: padding keys may be -inf
  DType stored = DType::f32;
  nlohmann::ordered_json describe;  // file, shape, ... (copied into the report)
};

// Throws posenc::Error (where = "<scheme> check") naming "heads" (the spec's count differs from the tensor's),
// "query_length" / "key_length", "values" (not heads * Lq * Lk of them) or "key_mask".
inline void check_bias_input(const std::string& where, std::size_t heads, const BiasTensorInput& in) {
  if (in.heads != heads)
    throw Error(where, "heads", std::to_string(heads),
                "the tensor's first dimension, " + std::to_string(in.heads) + " heads", "does not match the tensor");
  check_alibi_lengths(in.query_length, in.key_length);
  if (in.values.size() != in.heads * in.query_length * in.key_length)
    throw Error(where, "values", std::to_string(in.values.size()),
                "heads * query_length * key_length = " + std::to_string(in.heads * in.query_length * in.key_length));
  if (!in.key_mask.empty() && in.key_mask.size() != in.key_length)
    throw Error(where, "key_mask", std::to_string(in.key_mask.size()) + " entries",
                "key_length = " + std::to_string(in.key_length) + " entries (the tensor's last dimension)");
  for (const auto m : in.key_mask)
    if (m > 1) throw Error(where, "key_mask", std::to_string(m), "entries 0 (padding) or 1 (token)");
}

// The geometry part of a report's input.
inline void describe_geometry(CheckReport& rep, const BiasTensorInput& in) {
  rep.input["geometry"] = {{"heads", in.heads}, {"query_length", in.query_length}, {"key_length", in.key_length},
                           {"key_mask", in.key_mask.empty() ? "none" : "given"}};
}

// row(acc, h, i, qi, js) for every row (h, i) of the tensor (qi = Lk - Lq + i, the query's key position), over
// `threads` threads (0: OpenMP's default; dynamic schedule), each thread adding to its own copy of rep.references;
// js lists the row's keys to check: every key except those holding -inf where a causal mask puts it (a key after
// the query, or a padding key), which are counted in rep.input["masked_entries"]. Merges the threads' results.
// masks_hold_inf = false: a quantity no mask applies to (XLNet's segment term ef): every key is checked, so a -inf
// anywhere is an entry that fails (its class), and masked_entries is 0.
template <class Row>
void scan_bias_tensor(CheckReport& rep, const BiasTensorInput& in, int threads, Row&& row, bool masks_hold_inf = true) {
  const std::size_t Lq = in.query_length, Lk = in.key_length;
  const int nt = threads > 0 ? std::min(threads, omp_get_num_procs()) : omp_get_max_threads();
  std::vector<std::vector<CheckAccumulator>> local(static_cast<std::size_t>(std::max(nt, 1)), rep.references);
  std::vector<std::uint64_t> masked(static_cast<std::size_t>(std::max(nt, 1)), 0);
  std::vector<std::vector<std::size_t>> keys(static_cast<std::size_t>(std::max(nt, 1)), std::vector<std::size_t>(Lk));
  const auto rows = static_cast<std::int64_t>(in.heads * Lq);
  parallel_cases(nt, rows, 1, [&](std::int64_t ri) {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto h = static_cast<std::size_t>(ri) / Lq, i = static_cast<std::size_t>(ri) % Lq;
    const std::size_t qi = Lk - Lq + i;
    std::size_t n = 0;  // the row's keys to check, in keys[t] (allocated before the parallel region)
    for (std::size_t j = 0; j < Lk; ++j) {
      const double y = in.values[(h * Lq + i) * Lk + j];
      if (masks_hold_inf && y == -std::numeric_limits<double>::infinity() &&
          (j > qi || (!in.key_mask.empty() && in.key_mask[j] == 0)))
        ++masked[t];
      else
        keys[t][n++] = j;
    }
    row(local[t], h, i, qi, std::span<const std::size_t>(keys[t].data(), n));
  });
  rep.merge_threads(local);
  std::uint64_t nm = 0;
  for (auto m : masked) nm += m;
  rep.input["masked_entries"] = nm;
}

}  // namespace posenc::verify
