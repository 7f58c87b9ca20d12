// schemes/shaw/bench.cpp — Shaw / tensor2tensor and HF BERT relative_key: index matrices, pre-softmax scores and
// the attention output, each with its in-run baselines (DESIGN.md §5). Names follow suites.hpp; families, arguments
// and baselines as the other bias schemes' (schemes/t5/bench.cpp), so the report pairs kernels and baselines the same way.
//
// Tables: random float32 values in [-1, 1) from a hash (the trained relative_positions_keys / _values).
//
// Families and variants
//   index/<variant>/heads:1/L:<L>/threads:<n>   ShawPlan::indices, the [L][L] int32 index matrix
//     t2t_i32                 preset t2t (k = 20, j - i, clipped)
//     bert_i32                preset bert-relative-key (k = 511, i - j; L = 512 only: its table ends there)
//     stream_store_i32 / store_i32   non-temporal / ordinary stores of the same L^2 * 4 bytes
//   scores/<variant>/heads:1/L:<L>/head_dim:<d>/threads:<n>   one causal head (bm_bias_scores: scale 1/sqrt(d))
//     fused_t2t_causal_f32    ShawPlan::scores of t2t (Q A^T, gathered rows, then Q K^T with beta = 1)
//     sgemm_f32               q k^T alone
//   attend/<variant>/heads:1/L:<L>/head_dim:<d>/threads:<n>   ShawPlan::attend of t2t, causal (scores, softmax,
//     alpha V and the value table): t2t_causal_f32
//
// Sanity, after every timed loop (a mismatch aborts the run): index entries (L-1, 0), (0, L-1), (L/2, L/2), (L/2,
// L/2 + 7) against clip(d, -k, k) + k computed here, and rows 0, L/2, L-1 against the same matrix on one thread
// without streaming stores (claim SHAW-REPRO-1); scores against a double evaluation of the definition (bm_bias_scores);
// outputs: rows 0, L/2, L-1 within 1e-3 of a double evaluation here.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "schemes/shaw/cases.hpp"
#include "baselines.hpp"
#include "bias_bench.hpp"
#include "posenc/shaw.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::shaw;
using posenc::BiasGeometry;
using posenc::BiasMask;
using posenc::RelativeSign;
using posenc::ShawPlan;
using posenc::ShawSpec;
using posenc::ShawWeights;
using namespace bias_bench;


ShawSpec preset(const char* name) { return posenc::find_preset<ShawSpec>(name).spec; }

ShawWeights tables_of(const ShawSpec& s) {
  std::vector<float> a(posenc::shaw_table_rows(s) * s.head_dim), b(a.size());
  fill_uniform(a, 0x51ED270Bu);
  fill_uniform(b, 0x2545F491u);
  ShawWeights w{std::vector<double>(a.begin(), a.end()), {}};
  if (s.values) w.values.assign(b.begin(), b.end());
  return w;
}

// clip(d, -k, k) + k written here from the definition (CONVENTIONS.md §2.3), independently of the library.
std::int64_t independent_index(const ShawSpec& s, std::int64_t i, std::int64_t j) {
  const auto k = static_cast<std::int64_t>(s.max_relative_position);
  const std::int64_t d = s.sign == RelativeSign::key_minus_query ? j - i : i - j;
  return (d < -k ? -k : d > k ? k : d) + k;
}

// ---- index ------------------------------------------------------------------------------------------------
void bm_index(benchmark::State& st, const ShawSpec& spec, const std::string& what) {
  const std::size_t L = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const ShawPlan plan(spec, tables_of(spec));
  const BiasGeometry g{.query_length = L, .key_length = L};
  const std::size_t n = L * L;
  const std::span<std::int32_t> out = scratch_span<std::int32_t>(0, n);
  std::fill(out.begin(), out.end(), -1);
  const posenc::TableOptions opt{.threads = threads};
  try {
    for (auto _ : st) {
      plan.indices(g, out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  for (const auto& [i, j] : {std::pair<std::size_t, std::size_t>{L - 1, 0}, {0, L - 1}, {L / 2, L / 2}, {L / 2, L / 2 + 7}}) {
    const std::int64_t want = independent_index(spec, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
    if (out[i * L + j] != want)
      sanity_failure(fmt("%s (L %zu, threads %d): index (%zu, %zu) is %d; clip(d, -k, k) + k gives %lld", what.c_str(),
                         L, threads, i, j, out[i * L + j], static_cast<long long>(want)));
  }
  check_index_rows_single_thread(what, out, L, threads, "index", [&](std::span<std::int32_t> o) {
    plan.indices(g, o, posenc::TableOptions{.threads = 1, .streaming_stores = false});
  });
  set_counters(st, n, n * sizeof(std::int32_t));
}

// ---- scores -----------------------------------------------------------------------------------------------

// bm_bias_scores calls plan.scores(q, k, head_dim, geometry, scale, out, options): one head.
struct OneHead {
  ShawPlan plan;
  void scores(std::span<const float> q, std::span<const float> k, std::size_t, const BiasGeometry& g, double scale,
              std::span<float> out, const posenc::TableOptions& o) const {
    plan.scores(q, k, 1, g, scale, out, o);
  }
};

void bm_scores(benchmark::State& st, bool fused, const std::string& what) {
  const ShawSpec spec = preset("t2t");
  const ShawWeights w = tables_of(spec);
  const std::size_t d = usize(st.range(2));
  std::vector<float> q(usize(st.range(1)) * d);
  fill_uniform(q, 0x9E3779B9u);  // bm_bias_scores's q (the same hash and seed): the relative term's reference
  bm_bias_scores(
      st, fused, what, [&] { return OneHead{ShawPlan(spec, w)}; },
      [&](std::size_t i, std::size_t j) {
        const auto idx = static_cast<std::size_t>(independent_index(spec, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)));
        double v = 0, mag = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const double p = static_cast<double>(q[i * d + c]) * w.keys[idx * d + c];
          v += p;
          mag += std::fabs(p);
        }
        const double scale = 1 / std::sqrt(static_cast<double>(d));
        return BiasReference{scale * v, scale * mag};
      },
      "scale (q.k + q.a^K[clip(j - i) + k])");
}

// ---- attention output -------------------------------------------------------------------------------------
void bm_attend(benchmark::State& st, const std::string& what) {
  ShawSpec spec = preset("t2t");
  spec.head_dim = usize(st.range(2));
  const ShawWeights w = tables_of(spec);
  const ShawPlan plan(spec, w);
  const std::size_t d = spec.head_dim;
  auto row = [&spec](std::size_t i, std::size_t j) {
    return static_cast<std::size_t>(independent_index(spec, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)));
  };
  bm_attend_causal(
      st, what, plan, [&](std::size_t i, std::size_t j, std::size_t c) { return w.keys[row(i, j) * d + c]; },
      [&](std::size_t i, std::size_t j, std::size_t c) { return w.values[row(i, j) * d + c]; });
}

// ---- registration -----------------------------------------------------------------------------------------
const Registrar kReg{"shaw"};  // "shaw/<family>/<variant>/<key>:<value>..."

template <class Fn>
void add_family(const std::string& family, const std::string& variant, std::int64_t L, Fn&& fn) {
  kReg.per_thread(family + "/" + variant, {"heads", "L"}, {1, L}, std::forward<Fn>(fn));
}

void register_index(std::int64_t L) {
  const ShawSpec t2t = preset("t2t"), bert = preset("bert-relative-key");
  add_family("index", "t2t_i32", L, [t2t](benchmark::State& st) { bm_index(st, t2t, "shaw/index/t2t_i32"); });
  if (L <= static_cast<std::int64_t>(bert.max_relative_position) + 1)
    add_family("index", "bert_i32", L, [bert](benchmark::State& st) { bm_index(st, bert, "shaw/index/bert_i32"); });
  // int32 and float32 entries are the same 4 bytes: the float store baselines time them
  add_family("index", "stream_store_i32", L, [](benchmark::State& st) { bm_bias_store<float>(st, true); });
  add_family("index", "store_i32", L, [](benchmark::State& st) { bm_bias_store<float>(st, false); });
}

POSENC_BENCH_SCHEME(shaw) {
  register_index(static_cast<std::int64_t>(cases::kBenchIndexLengths[0]));
  const auto L = static_cast<std::int64_t>(cases::kBenchScoresLength), d = static_cast<std::int64_t>(cases::kBenchHeadDim);
  for (const char* v : {"fused_t2t_causal_f32", "sgemm_f32"}) {
    const bool fused = std::string(v) != "sgemm_f32";
    const std::string what = std::string("shaw/scores/") + v;
    kReg.per_thread(std::string("scores/") + v, {"heads", "L", "head_dim"}, {1, L, d}, [fused, what](benchmark::State& st) { bm_scores(st, fused, what); });
  }
  {
    kReg.per_thread("attend/t2t_causal_f32", {"heads", "L", "head_dim"}, {1, L, d}, [](benchmark::State& st) { bm_attend(st, "shaw/attend/t2t_causal_f32"); });
  }
  register_index(static_cast<std::int64_t>(cases::kBenchIndexLengths[1]));
  register_index(static_cast<std::int64_t>(cases::kBenchIndexLengths[2]));
  return "shaw: index heads:1 L:512/8192/16384 (1 MiB, 256 MiB, 1 GiB int32; bert only at 512), scores and attend "
         "heads:1 L:4096 head_dim:64 (causal, t2t)";
}

}  // namespace
}  // namespace posenc_bench
