// schemes/learned/bench.cpp — learned absolute positions: the row gather (LearnedPlan::rows) and the id maps
// (position_ids), each with its in-run baselines (DESIGN.md §5). Names follow suites.hpp; sizes come from the case
// table (schemes/learned/cases.hpp, section "Benchmarks").
//
// Families and variants
//   rows/<variant>/rows:<R>/dim:<d>/L:<L>/threads:1   L rows of a float64 table [R][d] written to a dense [L][d]
//                          output (one call; LearnedPlan::rows is single-threaded). The ids are those of consecutive
//                          full-length sequences: 2, 3, ..., R-1, then 2 again (RoBERTa make_positions of R - 2 real
//                          tokens, OPT cumsum_mask with its offset 2), so every row but 0 and 1 is read and the
//                          table is walked in order, as a batch of unpadded sequences walks it.
//     gather_f32           LearnedPlan::rows into float: each double rounded once to float32 (8 bytes read, 4
//                          written per value)
//     gather_f64           LearnedPlan::rows into double: one memcpy per row (8 bytes read, 8 written)
//     stream_store_f32 (_f64)  non-temporal stores of the same L d * 4 (* 8) output bytes: the DRAM write limit
//     store_f32 (_f64)         ordinary stores of the same bytes: the limit of an output that stays in cache
//     memcpy_f32 (_f64)        std::memcpy of the same output bytes from a contiguous source of that size (scratch
//                              slot 1; one untimed copy first): a read and a write per output byte, what the f64
//                              gather does at best
//   ids/<variant>/L:<L>/threads:1   the ids of one sequence of L = 2^20 tokens, past 0, returned as a new
//                          std::vector<int64_t> (position_ids validates the spec and the input, then one pass)
//     arange               position_ids, preset bert (offset 0): ids 0 .. L-1; reads nothing but L
//     make_positions       preset roberta (padding_idx 1): reads L int64 tokens, every 7th the padding id
//     cumsum_mask          preset opt (offset 2): reads L mask bytes, every 7th entry 0 (a hole)
//     plainloop            the baseline: the loop a user writes for arange, std::vector<int64_t> v(L) and
//                          v[t] = t, the same allocation (zero-filled, then written) position_ids makes; a ratio
//                          to it states what the map and the validation cost on top of writing L int64
//   ids_into/<variant>/L:<L>/threads:1   the same maps through position_ids(spec, input, out) into the caller's
//                          buffer, reused from call to call (no allocation, no fresh pages); plainloop: v[t] = t into
//                          a reused buffer
// The baselines are registered under learned/ with exactly the arguments of the kernels they are the baseline of
// (the report pairs them by name within a family): the f64 gather's limits are the _f64 variants.
//
// Counters: rows: bytes_per_second = output bytes (L d sizeof(T)), items_per_second = output values (L d), label
// regime_label(output bytes). ids: items_per_second = ids, bytes_per_second = L * 8 (the ids written), label
// regime_label(L * 8).
//
// Size policy (suites.hpp). The sizes are the case table's, chosen as real tables and batch sizes, not by regime:
// output bytes (f32 / f64) are 1.5 / 3 MiB (514 x 768, L:512), 96 / 192 MiB (514 x 768, L:32768), 8 / 16 MiB
// (2050 x 4096, L:512): all in the shared-L3 range (label l3: less stable run to run), and 512 MiB / 1 GiB
// (2050 x 4096, L:32768, label dram). The tables themselves are 3 MiB and 64 MiB of doubles. ids: 8 MiB written
// (label l3) plus 8 MiB of tokens read (make_positions). One output buffer (scratch slot 0) serves every rows
// variant and one memcpy source (slot 1); sizes are registered in increasing order, so each slot grows a few times;
// peak ~2.2 GiB (1 GiB output, 1 GiB memcpy source, the 64 MiB table twice while its plan is made).
//
// Sanity, after every timed loop (a mismatch aborts the run before any result is reported). rows: the output is
// filled with NaN before timing, so an entry the gather did not write cannot pass; rows 0, L/2 and L-1 entirely, and
// columns 0 and d-1 of every row, must equal the table's value at that id (static_cast<T> of the double) bit for bit
// (claim LEARNED-ROWS-1). ids: every id must equal the map's definition computed here in a separate loop
// (posenc/learned_spec.hpp).
#include <benchmark/benchmark.h>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "schemes/learned/cases.hpp"
#include "baselines.hpp"
#include "bias_bench.hpp"
#include "posenc/learned.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::learned;
using posenc::IdMap;
using posenc::LearnedInput;
using posenc::LearnedPlan;
using posenc::LearnedSpec;
using posenc::LearnedTable;
using bias_bench::fill_nan;
using bias_bench::fmt;
using bias_bench::sanity_failure;
using bias_bench::set_counters;
using bias_bench::usize;

// ---- rows --------------------------------------------------------------------------------------------------

// Value (r, c) of the benchmark table: a double in [-1, 1) from a hash, with all 53 bits used (so the float32
// output is a real rounding, not an exact copy).
double table_value(std::size_t r, std::size_t c) {
  std::uint64_t h = (static_cast<std::uint64_t>(r) << 32 | c) * 0x9E3779B97F4A7C15u;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9u;
  h ^= h >> 32;
  return static_cast<double>(h >> 11) * 0x1p-52 - 1.0;
}

// The plan of an R x d table, kept between the benchmarks of one table (building it writes and copies up to 64 MiB).
const LearnedPlan& table_plan(std::size_t R, std::size_t d) {
  static std::unique_ptr<LearnedPlan> plan;
  if (!plan || plan->table().rows != R || plan->table().dim != d) {
    plan.reset();
    LearnedTable t{R, d, std::vector<double>(R * d)};
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t c = 0; c < d; ++c) t.values[r * d + c] = table_value(r, c);
    const LearnedSpec spec = posenc::learned_preset("roberta");
    plan = std::make_unique<LearnedPlan>(spec, t);
  }
  return *plan;
}

// Ids of consecutive full-length sequences: first, first + 1, ..., R - 1, first, ...
std::vector<std::int64_t> sequence_ids(std::size_t R, std::size_t L) {
  const auto first = static_cast<std::size_t>(cases::kBenchFirstId);
  std::vector<std::int64_t> ids(L);
  for (std::size_t t = 0; t < L; ++t) ids[t] = static_cast<std::int64_t>(first + t % (R - first));
  return ids;
}

template <class T>
void bm_gather(benchmark::State& st, const std::string& what) {
  const std::size_t R = usize(st.range(0)), d = usize(st.range(1)), L = usize(st.range(2));
  const LearnedPlan* plan = nullptr;
  try {
    plan = &table_plan(R, d);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const std::vector<std::int64_t> ids = sequence_ids(R, L);
  const std::span<T> out = scratch_span<T>(0, L * d);
  fill_nan(out, 1);
  try {
    for (auto _ : st) {
      plan->rows(ids, out);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const std::vector<double>& tab = plan->table().values;
  const auto expect = [&](std::size_t t, std::size_t c) {
    const T want = static_cast<T>(tab[static_cast<std::size_t>(ids[t]) * d + c]);
    const T got = out[t * d + c];
    if (std::memcmp(&got, &want, sizeof(T)) != 0)
      sanity_failure(fmt("%s (rows %zu, dim %zu, L %zu): output [%zu][%zu] is %.17g (%a); row %" PRId64
                         " of the table, column %zu, is %.17g (%a) as %s",
                         what.c_str(), R, d, L, t, c, static_cast<double>(got), static_cast<double>(got), ids[t], c,
                         static_cast<double>(want), static_cast<double>(want), sizeof(T) == 4 ? "float" : "double"));
  };
  for (std::size_t t : {std::size_t{0}, L / 2, L - 1})
    for (std::size_t c = 0; c < d; ++c) expect(t, c);
  for (std::size_t t = 0; t < L; ++t) {
    expect(t, 0);
    expect(t, d - 1);
  }
  set_counters(st, L * d, L * d * sizeof(T));
}

enum class Store { stream, plain, copy };

template <class T>
void bm_rows_baseline(benchmark::State& st, Store kind) {
  const std::size_t d = usize(st.range(1)), L = usize(st.range(2));
  const std::size_t bytes = L * d * sizeof(T);
  void* out = scratch(0, bytes);
  const void* src = kind == Store::copy ? scratch(1, bytes) : nullptr;
  // Untimed: the first copy out of a freshly pre-faulted source ran ~10x slower (59 ms against 6 ms for 96 MiB in a
  // single-iteration run), which a DRAM-sized case with one timed iteration would report as the baseline.
  if (kind == Store::copy) std::memcpy(out, src, bytes);
  for (auto _ : st) {
    switch (kind) {
      case Store::stream: stream_store(out, bytes, 1); break;
      case Store::plain: plain_store(out, bytes, 1); break;
      case Store::copy: std::memcpy(out, src, bytes); break;
    }
    benchmark::ClobberMemory();
  }
  set_counters(st, L * d, bytes);
}

// ---- ids ---------------------------------------------------------------------------------------------------

struct IdsCase {
  LearnedSpec spec;
  std::vector<std::int64_t> tokens;
  std::vector<std::uint8_t> mask;
};

// The spec and inputs of one map over L tokens: padding / holes at every kBenchPaddingEvery-th token.
IdsCase ids_case(IdMap map, std::size_t L) {
  IdsCase c;
  c.spec = posenc::learned_preset(map == IdMap::arange ? "bert" : map == IdMap::make_positions ? "roberta" : "opt");
  const auto hole = [](std::size_t t) { return t % cases::kBenchPaddingEvery == cases::kBenchPaddingEvery - 1; };
  if (map == IdMap::make_positions) {
    c.tokens.resize(L);
    for (std::size_t t = 0; t < L; ++t)
      c.tokens[t] = hole(t) ? c.spec.padding_idx : 100 + static_cast<std::int64_t>(t % 30000);
  }
  if (map == IdMap::cumsum_mask) {
    c.mask.resize(L);
    for (std::size_t t = 0; t < L; ++t) c.mask[t] = hole(t) ? 0 : 1;
  }
  return c;
}

// The map's definition (posenc/learned_spec.hpp) at past 0, written out here independently of the library.
std::vector<std::int64_t> independent_ids(const IdsCase& c, std::size_t L) {
  std::vector<std::int64_t> ids(L);
  std::int64_t run = 0;
  for (std::size_t t = 0; t < L; ++t) {
    switch (c.spec.id_map) {
      case IdMap::arange: ids[t] = c.spec.offset + static_cast<std::int64_t>(t); break;
      case IdMap::make_positions:
        if (c.tokens[t] != c.spec.padding_idx) ids[t] = ++run + c.spec.padding_idx;
        else ids[t] = c.spec.padding_idx;
        break;
      case IdMap::cumsum_mask:
        if (c.mask[t]) ids[t] = ++run - 1 + c.spec.offset;
        else ids[t] = c.spec.offset - 1;
        break;
    }
  }
  return ids;
}

// The ids of one sequence: returned as a new vector (into = false; the previous one is freed as a caller's would be
// when it takes the next one), or written by the buffer form into the caller's buffer (into = true; allocated and
// written once before timing, reused from call to call, so no call pays a fresh allocation's page faults).
void bm_ids(benchmark::State& st, IdMap map, bool into, const std::string& what) {
  const std::size_t L = usize(st.range(0));
  IdsCase c;
  try {
    c = ids_case(map, L);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const LearnedInput in{.length = L, .past = 0, .tokens = c.tokens, .attention_mask = c.mask};
  std::vector<std::int64_t> last(into ? L : 0, -1);
  try {
    for (auto _ : st) {
      if (into) {
        posenc::position_ids(c.spec, in, std::span<std::int64_t>(last));
        benchmark::DoNotOptimize(last.data());
        benchmark::ClobberMemory();
      } else {
        std::vector<std::int64_t> ids = posenc::position_ids(c.spec, in);
        benchmark::DoNotOptimize(ids.data());
        benchmark::ClobberMemory();
        last.swap(ids);
      }
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const std::vector<std::int64_t> want = independent_ids(c, L);
  if (last.size() != L) sanity_failure(fmt("%s (L %zu): %zu ids", what.c_str(), L, last.size()));
  for (std::size_t t = 0; t < L; ++t)
    if (last[t] != want[t])
      sanity_failure(fmt("%s (L %zu): id %zu is %" PRId64 "; the definition gives %" PRId64, what.c_str(), L, t,
                         last[t], want[t]));
  set_counters(st, L, L * sizeof(std::int64_t));
}

void bm_ids_plainloop(benchmark::State& st) {
  const std::size_t L = usize(st.range(0));
  std::vector<std::int64_t> last;
  for (auto _ : st) {
    std::vector<std::int64_t> ids(L);
    for (std::size_t t = 0; t < L; ++t) ids[t] = static_cast<std::int64_t>(t);
    benchmark::DoNotOptimize(ids.data());
    benchmark::ClobberMemory();
    last.swap(ids);
  }
  for (std::size_t t = 0; t < L; ++t)
    if (last[t] != static_cast<std::int64_t>(t))
      sanity_failure(fmt("learned/ids/plainloop (L %zu): id %zu is %" PRId64, L, t, last[t]));
  set_counters(st, L, L * sizeof(std::int64_t));
}

// Its baseline: the loop a user writes for arange into a reused buffer, v[t] = t.
void bm_ids_plainloop_into(benchmark::State& st) {
  const std::size_t L = usize(st.range(0));
  std::vector<std::int64_t> ids(L, -1);
  for (auto _ : st) {
    for (std::size_t t = 0; t < L; ++t) ids[t] = static_cast<std::int64_t>(t);
    benchmark::DoNotOptimize(ids.data());
    benchmark::ClobberMemory();
  }
  for (std::size_t t = 0; t < L; ++t)
    if (ids[t] != static_cast<std::int64_t>(t))
      sanity_failure(fmt("learned/ids_into/plainloop (L %zu): id %zu is %" PRId64, L, t, ids[t]));
  set_counters(st, L, L * sizeof(std::int64_t));
}

// ---- registration ------------------------------------------------------------------------------------------
const Registrar kReg{"learned"};  // "learned/<family>/<variant>/<key>:<value>..."

// The rows family for one table and L: the f32 gather and its baselines, then the f64 gather and its.
void register_rows(const cases::LearnedBenchTable& tab, std::size_t L) {
  const auto args = [&](benchmark::internal::Benchmark* b) {
    b->ArgNames({"rows", "dim", "L", "threads"});
    b->Args({static_cast<std::int64_t>(tab.rows), static_cast<std::int64_t>(tab.dim), static_cast<std::int64_t>(L), 1});
  };
  args(kReg.add("rows/gather_f32", [](benchmark::State& st) { bm_gather<float>(st, "learned/rows/gather_f32"); }));
  args(kReg.add("rows/stream_store_f32", [](benchmark::State& st) { bm_rows_baseline<float>(st, Store::stream); }));
  args(kReg.add("rows/store_f32", [](benchmark::State& st) { bm_rows_baseline<float>(st, Store::plain); }));
  args(kReg.add("rows/memcpy_f32", [](benchmark::State& st) { bm_rows_baseline<float>(st, Store::copy); }));
  args(kReg.add("rows/gather_f64", [](benchmark::State& st) { bm_gather<double>(st, "learned/rows/gather_f64"); }));
  args(kReg.add("rows/stream_store_f64", [](benchmark::State& st) { bm_rows_baseline<double>(st, Store::stream); }));
  args(kReg.add("rows/store_f64", [](benchmark::State& st) { bm_rows_baseline<double>(st, Store::plain); }));
  args(kReg.add("rows/memcpy_f64", [](benchmark::State& st) { bm_rows_baseline<double>(st, Store::copy); }));
}

POSENC_BENCH_SCHEME(learned) {
  const auto& t = cases::kBenchTables;
  const auto& ls = cases::kBenchLengths;
  // Increasing output sizes: each table at the short length, then each at the long one.
  for (const std::size_t L : ls)
    for (const auto& tab : t) register_rows(tab, L);

  const std::size_t Lids = cases::kBenchIdsLength;
  const auto ids_args = [&](benchmark::internal::Benchmark* b) {
    b->ArgNames({"L", "threads"});
    b->Args({static_cast<std::int64_t>(Lids), 1});
  };
  for (const bool into : {false, true}) {
    const std::string family = into ? "ids_into/" : "ids/";
    for (const IdMap map : {IdMap::arange, IdMap::make_positions, IdMap::cumsum_mask}) {
      const std::string what = "learned/" + family + std::string(posenc::to_string(map));
      ids_args(kReg.add(family + std::string(posenc::to_string(map)),
                   [map, into, what](benchmark::State& st) { bm_ids(st, map, into, what); }));
    }
    if (into) ids_args(kReg.add("ids_into/plainloop", [](benchmark::State& st) { bm_ids_plainloop_into(st); }));
    else ids_args(kReg.add("ids/plainloop", [](benchmark::State& st) { bm_ids_plainloop(st); }));
  }

  std::string out = "learned: rows (output f32 / f64)";
  for (const std::size_t L : ls)
    for (const auto& tab : t) {
      const std::size_t b = L * tab.dim * sizeof(float);
      out += fmt(" %zux%zu L:%zu %s / %s (%s / %s);", tab.rows, tab.dim, L, format_bytes(b).c_str(),
                 format_bytes(2 * b).c_str(), regime_label(b), regime_label(2 * b));
    }
  return out + " sizes from real tables and batches, kept in the L3 range (label l3) where they fall there; ids L:" +
         std::to_string(Lids) + " (" + format_bytes(Lids * sizeof(std::int64_t)) + " written, label " +
         regime_label(Lids * sizeof(std::int64_t)) + ")";
}

}  // namespace
}  // namespace posenc_bench
