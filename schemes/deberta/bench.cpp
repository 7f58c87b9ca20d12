// schemes/deberta/bench.cpp — DeBERTa-v2/v3: relative-position and c2p index matrices and disentangled scores,
// each with its in-run baselines (DESIGN.md §5). Names follow suites.hpp; families, arguments and baselines as the
// other bias schemes' (schemes/shaw/bench.cpp), so the report pairs kernels and baselines the same way.
//
// Tables: random float32 values in [-1, 1) from a hash (the projected pos_key_layer / pos_query_layer of one head).
//
// Families and variants
//   index/<variant>/heads:1/L:<L>/threads:<n>   the [L][L] int32 matrices of preset deberta-v3-base
//     relative_v3_i32         DebertaPlan::relative_positions (b(i - j), HF float32 log buckets)
//     c2p_v3_i32              DebertaPlan::position_indices (clamp(b + 256, 0, 511))
//     stream_store_i32 / store_i32   non-temporal / ordinary stores of the same L^2 * 4 bytes
//   scores/<variant>/heads:1/L:<L>/head_dim:<d>/threads:<n>   one head, no mask (DeBERTa is an encoder)
//     fused_v3_f32            DebertaPlan::scores of deberta-v3-base in the exact regime (c2p + p2c: Q K_r^T and
//                             K Q_r^T gathered, then Q K^T with beta = 1; the regime changes only the per-distance
//                             vector of L values)
//     sgemm_f32               q k^T alone, the full L x L (the target: fused <= 2.2x this)
//
// Sanity, after every timed loop (a mismatch aborts the run): index entries at (L-1, 0), (0, L-1), (L/2, L/2), (L/2,
// L/2 + 7), (L/2, L/2 - 200) against b(i - j) computed here in double (away from integers of v, where double decides
// like the real value), and rows 0, L/2, L-1 against the same matrix on one thread without streaming stores (claim
// DEBERTA-REPRO-1); scores at 8 entries against a double evaluation of the definition (within 1e-3 of its magnitude).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "schemes/deberta/cases.hpp"
#include "baselines.hpp"
#include "bias_bench.hpp"
#include "posenc/deberta.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::deberta;
using posenc::DebertaPlan;
using posenc::DebertaSpec;
using posenc::DebertaWeights;
using namespace bias_bench;


DebertaSpec v3_one_head(std::size_t head_dim) {
  DebertaSpec s = posenc::find_preset<DebertaSpec>("deberta-v3-base").spec;
  s.heads = 1;
  s.head_dim = head_dim;
  return s;
}

DebertaWeights tables_of(const DebertaSpec& s) {
  std::vector<float> a(s.heads * posenc::deberta_table_rows(s) * s.head_dim), b(a.size());
  fill_uniform(a, 0x51ED270Bu);
  fill_uniform(b, 0x2545F491u);
  DebertaWeights w;
  if (s.c2p) w.pos_key.assign(a.begin(), a.end());
  if (s.p2c) w.pos_query.assign(b.begin(), b.end());
  return w;
}

// b(rel) written here from the definition (CONVENTIONS.md §2.8) in double, independently of the library; nullopt
// where v lies within 1e-6 of an integer (there only exact arithmetic decides).
std::optional<std::int64_t> independent_bucket(const DebertaSpec& s, std::int64_t rel) {
  const auto mid = static_cast<std::int64_t>(*s.position_buckets / 2);
  const std::int64_t a = rel < 0 ? -rel : rel;
  if (a <= mid) return rel;
  const double v = std::log(static_cast<double>(a) / static_cast<double>(mid)) /
                   std::log(static_cast<double>(s.max_relative_positions - 1) / static_cast<double>(mid)) *
                   static_cast<double>(mid - 1);
  if (std::fabs(v - std::round(v)) < 1e-6) return std::nullopt;
  const auto lev = mid + static_cast<std::int64_t>(std::ceil(v));
  return rel < 0 ? -lev : lev;
}

// ---- index ------------------------------------------------------------------------------------------------
void bm_index(benchmark::State& st, bool c2p, const std::string& what) {
  const std::size_t L = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const DebertaSpec spec = v3_one_head(1);
  const DebertaPlan plan(spec, tables_of(spec));
  const std::size_t n = L * L;
  const std::span<std::int32_t> out = scratch_span<std::int32_t>(0, n);
  std::fill(out.begin(), out.end(), -1);
  const posenc::TableOptions opt{.threads = threads};
  auto run = [&](std::span<std::int32_t> o, const posenc::TableOptions& op) {
    if (c2p) plan.position_indices(L, L, o, op);
    else plan.relative_positions(L, L, o, op);
  };
  try {
    for (auto _ : st) {
      run(out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const auto span = static_cast<std::int64_t>(posenc::deberta_span(spec));
  for (const auto& [i, j] : {std::pair<std::size_t, std::size_t>{L - 1, 0}, {0, L - 1}, {L / 2, L / 2}, {L / 2, L / 2 + 7},
                             {L / 2, L / 2 > 200 ? L / 2 - 200 : 0}}) {
    const auto b = independent_bucket(spec, static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j));
    if (!b) continue;
    const std::int64_t want = c2p ? std::clamp(*b + span, std::int64_t{0}, 2 * span - 1) : *b;
    // the preset's HF float32 bucket may be one away from the real value's (claim DEBERTA-BUCKET-3)
    if (std::llabs(out[i * L + j] - want) > 1)
      sanity_failure(fmt("%s (L %zu, threads %d): entry (%zu, %zu) is %d; the definition gives %lld", what.c_str(), L,
                         threads, i, j, out[i * L + j], static_cast<long long>(want)));
  }
  check_index_rows_single_thread(what, out, L, threads, "index", [&](std::span<std::int32_t> o) {
    run(o, posenc::TableOptions{.threads = 1, .streaming_stores = false});
  });
  set_counters(st, n, n * sizeof(std::int32_t));
}

// ---- scores -----------------------------------------------------------------------------------------------
void bm_scores(benchmark::State& st, bool fused, const std::string& what) {
  const std::size_t L = usize(st.range(1)), d = usize(st.range(2));
  const int threads = static_cast<int>(st.range(3));
  DebertaSpec spec = v3_one_head(d);
  spec.regime = posenc::DebertaRegime::exact;  // the sanity check's buckets are the real ones (the timing is the same)
  const DebertaWeights w = tables_of(spec);
  std::optional<DebertaPlan> plan;
  try {
    plan.emplace(spec, w);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  std::vector<float> q(L * d), k(L * d);
  fill_uniform(q, 0x9E3779B9u);
  fill_uniform(k, 0x7F4A7C15u);
  const std::span<float> out = scratch_span<float>(0, L * L);
  fill_nan(out, 1);
  const posenc::TableOptions opt{.threads = threads};
  {
    const BlasThreads blas(threads);
    const auto once = [&] {
      if (fused) plan->scores(std::span<const float>(q), std::span<const float>(k), L, L, {}, std::nullopt, out, opt);
      else sgemm_abt(L, L, d, q.data(), k.data(), out.data());
    };
    try {
      once();  // untimed: OpenBLAS's first call with a new thread count starts threads and allocates its buffers
      for (auto _ : st) {
        once();
        benchmark::ClobberMemory();
      }
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
      return;
    }
  }
  const auto span = static_cast<std::int64_t>(posenc::deberta_span(spec));
  const double scale = fused ? 1 / std::sqrt(static_cast<double>(d * 3)) : 1.0;
  const std::pair<std::size_t, std::size_t> at[] = {{0, 0}, {L / 3, L / 3}, {L / 2, L / 2 - 1}, {L / 2, L / 7},
                                                    {L - 1, 0}, {L - 1, L - 1}, {0, L - 1}, {L / 3, L / 2}};
  for (const auto& [i, j] : at) {
    double want = 0, mag = 0;
    std::optional<std::int64_t> b = independent_bucket(spec, static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j));
    if (fused && !b) continue;
    const auto c = static_cast<std::size_t>(b ? std::clamp(*b + span, std::int64_t{0}, 2 * span - 1) : 0);
    for (std::size_t x = 0; x < d; ++x) {
      double p = static_cast<double>(q[i * d + x]) * static_cast<double>(k[j * d + x]);
      if (fused)
        p += static_cast<double>(q[i * d + x]) * w.pos_key[c * d + x] + static_cast<double>(k[j * d + x]) * w.pos_query[c * d + x];
      want += p;
      mag += std::fabs(p);
    }
    want *= scale;
    const double got = out[i * L + j];
    if (!(std::fabs(got - want) <= 1e-3 * scale * mag + 1e-6))
      sanity_failure(fmt("%s (L %zu, head_dim %zu, threads %d): scores[%zu][%zu] is %.9g; the double-precision "
                         "definition gives %.9g",
                         what.c_str(), L, d, threads, i, j, got, want));
  }
  st.counters["flops"] = benchmark::Counter(2.0 * static_cast<double>(L * L * d), benchmark::Counter::kIsIterationInvariantRate);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(L * L));
  st.SetLabel(regime_label(L * L * sizeof(float)));
}

// ---- registration -----------------------------------------------------------------------------------------
const Registrar kReg{"deberta"};  // "deberta/<family>/<variant>/<key>:<value>..."

template <class Fn>
void add_family(const std::string& family, const std::string& variant, std::int64_t L, Fn&& fn) {
  kReg.per_thread(family + "/" + variant, {"heads", "L"}, {1, L}, std::forward<Fn>(fn));
}

void register_index(std::int64_t L) {
  add_family("index", "relative_v3_i32", L, [](benchmark::State& st) { bm_index(st, false, "deberta/index/relative_v3_i32"); });
  add_family("index", "c2p_v3_i32", L, [](benchmark::State& st) { bm_index(st, true, "deberta/index/c2p_v3_i32"); });
  // int32 and float32 entries are the same 4 bytes: the float store baselines time them
  add_family("index", "stream_store_i32", L, [](benchmark::State& st) { bm_bias_store<float>(st, true); });
  add_family("index", "store_i32", L, [](benchmark::State& st) { bm_bias_store<float>(st, false); });
}

POSENC_BENCH_SCHEME(deberta) {
  register_index(static_cast<std::int64_t>(cases::kBenchIndexLengths[0]));
  const auto L = static_cast<std::int64_t>(cases::kBenchScoresLength), d = static_cast<std::int64_t>(cases::kBenchHeadDim);
  for (const char* v : {"fused_v3_f32", "sgemm_f32"}) {
    const bool fused = std::string(v) != "sgemm_f32";
    const std::string what = std::string("deberta/scores/") + v;
    kReg.per_thread(std::string("scores/") + v, {"heads", "L", "head_dim"}, {1, L, d}, [fused, what](benchmark::State& st) { bm_scores(st, fused, what); });
  }
  register_index(static_cast<std::int64_t>(cases::kBenchIndexLengths[1]));
  register_index(static_cast<std::int64_t>(cases::kBenchIndexLengths[2]));
  return "deberta: index heads:1 L:512/8192/16384 (1 MiB, 256 MiB, 1 GiB int32; relative and c2p), scores heads:1 "
         "L:4096 head_dim:64 (c2p + p2c, no mask)";
}

}  // namespace
}  // namespace posenc_bench
