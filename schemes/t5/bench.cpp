// schemes/t5/bench.cpp — T5: bucket matrices, bias matrices and pre-softmax scores with the bias fused, each with
// its in-run baselines (DESIGN.md §5). Names follow suites.hpp; families, arguments and baselines as the other bias
// schemes' (schemes/kerple/bench.cpp), so the report pairs kernels and baselines the same way.
//
// Table: T5's relative_attention_bias.weight is a trained weight. The benchmarks use table[b][h] = b + h / 64 (every
// entry says its bucket and head, so a wrong bucket cannot pass the sanity checks).
//
// Families and variants
//   index/<variant>/heads:1/L:<L>/threads:<n>   T5Plan::buckets, the [L][L] int32 bucket matrix (query length =
//                          key length = L), written once per iteration, TableOptions{.threads = n}
//     hf_bidirectional_i32   t5-encoder (32 buckets, max_distance 128, HF's float32 buckets)
//     exact_unidirectional_i32   t5-decoder's buckets in the exact regime
//     stream_store_i32 / store_i32   non-temporal / ordinary stores of the same L^2 * 4 bytes (the memory limits)
//   bias/<variant>/heads:<H>/L:<L>/threads:<n>   T5Plan::bias, [H][L][L] float32, mask none
//     hf_bidirectional_f32   t5-encoder with 32 heads
//     stream_store_f32 / store_f32   the same bytes
//   scores/<variant>/heads:1/L:<L>/head_dim:<d>/threads:<n>   one causal head (bm_bias_scores: scale 1/sqrt(d))
//     fused_hf_unidirectional_causal_f32   T5Plan::scores of t5-decoder (bias rows, then sgemm with beta = 1)
//     sgemm_f32                            q k^T alone
//
// Sanity, after every timed loop (a mismatch aborts the run): the output is filled with NaN (bias) or -1 (index)
// before timing; rows 0, L/2, L-1 of the timed output must equal the same matrix written on one thread without
// streaming stores bit for bit (claim T5-REPRO-1), and entries (L-1, 0), (0, L-1), (L/2, L/2) must hold the bucket
// (or table entry) of an independent evaluation of HF's formula in float32 here.
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

#include "schemes/t5/cases.hpp"
#include "baselines.hpp"
#include "bias_bench.hpp"
#include "posenc/t5.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::t5;
using posenc::BiasGeometry;
using posenc::BiasMask;
using posenc::T5Plan;
using posenc::T5Regime;
using posenc::T5Spec;
using posenc::T5Weights;
using namespace bias_bench;

constexpr std::int64_t kHeads = static_cast<std::int64_t>(cases::kBenchHeads);

T5Weights table_of(const T5Spec& s) {
  T5Weights w;
  for (std::size_t b = 0; b < s.num_buckets; ++b)
    for (std::size_t h = 0; h < s.heads; ++h) w.table.push_back(static_cast<double>(b) + static_cast<double>(h) / 64);
  return w;
}

// HF's _relative_position_bucket in float32 (std::log rounded to float), independently of the library.
std::int64_t independent_bucket(const T5Spec& s, std::int64_t r) {
  std::int64_t n = static_cast<std::int64_t>(s.num_buckets), base = 0, a;
  if (s.bidirectional) {
    n /= 2;
    base = r > 0 ? n : 0;
    a = r < 0 ? -r : r;
  } else {
    a = r < 0 ? -r : 0;
  }
  const std::int64_t me = n / 2;
  if (a < me) return base + a;
  const float x = static_cast<float>(a) / static_cast<float>(me);
  const auto l = static_cast<float>(std::log(static_cast<double>(x)));
  const auto den = static_cast<float>(std::log(static_cast<double>(s.max_distance) / static_cast<double>(me)));
  const float z = l / den * static_cast<float>(n - me);
  return base + std::min<std::int64_t>(me + static_cast<std::int64_t>(z), n - 1);
}

// ---- index ------------------------------------------------------------------------------------------------
void bm_index(benchmark::State& st, const T5Spec& spec, const std::string& what) {
  const std::size_t L = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const T5Plan plan(spec, table_of(spec));
  const BiasGeometry g{.query_length = L, .key_length = L};
  const std::size_t n = L * L;
  const std::span<std::int32_t> out = scratch_span<std::int32_t>(0, n);
  std::fill(out.begin(), out.end(), -1);
  const posenc::TableOptions opt{.threads = threads};
  try {
    for (auto _ : st) {
      plan.buckets(g, out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  for (const auto& [i, j] : {std::pair<std::size_t, std::size_t>{L - 1, 0}, {0, L - 1}, {L / 2, L / 2}}) {
    const std::int64_t r = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
    if (out[i * L + j] != independent_bucket(spec, r))
      sanity_failure(fmt("%s (L %zu, threads %d): bucket (%zu, %zu) is %d; HF's float32 formula here gives %lld",
                         what.c_str(), L, threads, i, j, out[i * L + j], static_cast<long long>(independent_bucket(spec, r))));
  }
  check_index_rows_single_thread(what, out, L, threads, "bucket", [&](std::span<std::int32_t> o) {
    plan.buckets(g, o, posenc::TableOptions{.threads = 1, .streaming_stores = false});
  });
  set_counters(st, n, n * sizeof(std::int32_t));
}

// ---- bias -------------------------------------------------------------------------------------------------
void bm_bias(benchmark::State& st, const T5Spec& spec, const std::string& what) {
  const std::size_t H = usize(st.range(0)), L = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const T5Weights w = table_of(spec);
  const T5Plan plan(spec, w);
  const BiasGeometry g{.query_length = L, .key_length = L};
  const std::size_t n = H * L * L;
  const std::span<float> out = scratch_span<float>(0, n);
  fill_nan(out, threads);
  const posenc::TableOptions opt{.threads = threads};
  try {
    if (posenc::t5_bias_size(spec, g) != n) throw std::invalid_argument("t5_bias_size != H L^2");
    for (auto _ : st) {
      plan.bias(g, out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  for (std::size_t h : {std::size_t{0}, H - 1})
    for (const auto& [i, j] : {std::pair<std::size_t, std::size_t>{L - 1, 0}, {0, L - 1}, {L / 2, L / 2}}) {
      const std::int64_t b = independent_bucket(spec, static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i));
      const auto want = static_cast<float>(w.table[static_cast<std::size_t>(b) * H + h]);
      const float got = out[(h * L + i) * L + j];
      if (std::memcmp(&got, &want, sizeof(float)) != 0)
        sanity_failure(fmt("%s (heads %zu, L %zu, threads %d): head %zu, entry (%zu, %zu) is %.9g; the table entry of "
                           "HF's float32 bucket %lld is %.9g",
                           what.c_str(), H, L, threads, h, i, j, static_cast<double>(got), static_cast<long long>(b),
                           static_cast<double>(want)));
    }
  check_rows_single_thread<float>(what, plan, g, out, H, L, threads, "T5Plan", posenc::describe(spec));
  set_counters(st, n, n * sizeof(float));
}

// ---- scores -----------------------------------------------------------------------------------------------
void bm_scores(benchmark::State& st, bool fused, const std::string& what) {
  const T5Spec spec = posenc::t5_preset("t5-decoder", 1);
  const T5Weights w = table_of(spec);
  bm_bias_scores(
      st, fused, what, [&] { return T5Plan(spec, w); },
      [&](std::size_t i, std::size_t j) {
        const std::int64_t b = independent_bucket(spec, static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i));
        const double v = w.table[static_cast<std::size_t>(b)];
        return BiasReference{v, std::fabs(v)};
      },
      "scale * q.k + table[bucket(j - i)]");
}

// ---- registration -----------------------------------------------------------------------------------------
const Registrar kReg{"t5"};  // "t5/<family>/<variant>/<key>:<value>..."

template <class Fn>
void add_family(const std::string& family, const std::string& variant, std::int64_t heads, std::int64_t L, Fn&& fn) {
  kReg.per_thread(family + "/" + variant, {"heads", "L"}, {heads, L}, std::forward<Fn>(fn));
}

void register_index(std::int64_t L) {
  T5Spec enc = posenc::t5_preset("t5-encoder", 1), dec = posenc::t5_preset("t5-decoder", 1);
  dec.regime = T5Regime::exact;
  add_family("index", "hf_bidirectional_i32", 1, L, [enc](benchmark::State& st) { bm_index(st, enc, "t5/index/hf_bidirectional_i32"); });
  add_family("index", "exact_unidirectional_i32", 1, L,
             [dec](benchmark::State& st) { bm_index(st, dec, "t5/index/exact_unidirectional_i32"); });
  // int32 and float32 entries are the same 4 bytes: the float store baselines time them
  add_family("index", "stream_store_i32", 1, L, [](benchmark::State& st) { bm_bias_store<float>(st, true); });
  add_family("index", "store_i32", 1, L, [](benchmark::State& st) { bm_bias_store<float>(st, false); });
}

void register_bias(std::int64_t L) {
  const T5Spec enc = posenc::t5_preset("t5-encoder", usize(kHeads));
  add_family("bias", "hf_bidirectional_f32", kHeads, L, [enc](benchmark::State& st) { bm_bias(st, enc, "t5/bias/hf_bidirectional_f32"); });
  add_family("bias", "stream_store_f32", kHeads, L, [](benchmark::State& st) { bm_bias_store<float>(st, true); });
  add_family("bias", "store_f32", kHeads, L, [](benchmark::State& st) { bm_bias_store<float>(st, false); });
}

POSENC_BENCH_SCHEME(t5) {
  // Smaller outputs first (scratch slot 0 grows once per size).
  register_index(static_cast<std::int64_t>(cases::kBenchBucketLengths[0]));
  register_bias(static_cast<std::int64_t>(cases::kBenchLengths[0]));
  for (const char* v : {"fused_hf_unidirectional_causal_f32", "sgemm_f32"}) {
    const bool fused = std::string(v) != "sgemm_f32";
    const std::string what = std::string("t5/scores/") + v;
    auto* b = kReg.add(std::string("scores/") + v, [fused, what](benchmark::State& st) { bm_scores(st, fused, what); });
    b->ArgNames({"heads", "L", "head_dim", "threads"});
    for (int t : kThreadCounts)
      b->Args({1, static_cast<std::int64_t>(cases::kBenchScoresLength), static_cast<std::int64_t>(cases::kBenchHeadDim), t});
  }
  register_index(static_cast<std::int64_t>(cases::kBenchBucketLengths[1]));
  register_index(static_cast<std::int64_t>(cases::kBenchBucketLengths[2]));
  register_bias(static_cast<std::int64_t>(cases::kBenchLengths[1]));
  return "t5: index heads:1 L:512/8192/16384 (1 MiB, 256 MiB, 1 GiB int32), bias heads:32 L:512/4096 (32 MiB, 2 GiB "
         "f32), scores heads:1 L:4096 head_dim:64 (causal, t5-decoder)";
}

}  // namespace
}  // namespace posenc_bench
