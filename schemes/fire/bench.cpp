// schemes/fire/bench.cpp — FIRE: bias-matrix generation and pre-softmax scores with the bias fused, each with its
// in-run baselines (DESIGN.md §5). Names follow suites.hpp; the layout mirrors schemes/kerple/bench.cpp (same families,
// arguments and store baselines, so the report pairs kernels and baselines the same way), plus a plain-loop baseline.
//
// Weights: FIRE's c, threshold and MLP are trained parameters, not part of the spec. The benchmarks use the
// reference's initial c = 0.1 and init_L = 512, L_multiplier = 0.25 (threshold L = 128), and MLP weights drawn as
// torch's default nn.Linear init draws them, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from a hash of the index
// (fire_weights below; width w = kBenchWidth). The threshold is below the reference's 512 on purpose: rows at or
// below it share one function of d (the library evaluates it once per head and copies it), so with L = 512 every row
// of the L:512 matrix would be a copy; with L = 128, 3/4 of the L:512 rows and 31/32 of the L:4096 rows evaluate
// their own normalizer and the MLP per entry, which is the kernel these numbers are about.
//
// Families and variants
//   bias/<variant>/heads:<H>/L:<L>/threads:<n>   FirePlan::bias, the whole [H][L][L] matrix (query length = key
//                          length = L, queries at positions 0..L-1), mask none (keys after the query get the value at
//                          their distance |i - j|), written once per iteration, TableOptions{.threads = n} (streaming
//                          stores as the library decides)
//     cramming_f32         the reference's float32 steps (preset fire), float output
//     exact_f32            exact regime, float output (correctly rounded but within a tiny band; fire.hpp)
//     exact_f64            exact regime, double output
//     stream_store_f32 (_f64)  non-temporal stores of the same H L^2 * 4 (* 8) bytes: the DRAM write limit
//     store_f32 (_f64)         ordinary stores of the same bytes: the limit of an output that stays in cache
//     plainloop_f32 (_f64)     (L:512 only) the loop a user writes from the definition, per output entry in the
//                              element type: d = |i - j|, x = log1p(|c| d) / (log1p(|c| max(i, L)) + eps), then
//                              b2[h] + sum_k W2[h][k] max(0, W1[k] x + b1[k]) — two std::log1p, a division and the
//                              MLP per entry, OpenMP static over the rows of all heads with `threads` threads. At
//                              L:4096 it would take ~40 s per iteration (5.4e8 entries), so it is not registered there
//                              and the report's plain-loop ratio is the L:512 one.
//   scores/<variant>/heads:1/L:<L>/head_dim:<d>/threads:<n>   one head, Lq = Lk = L, q and k [L][d] in [-1, 1)
//     fused_cramming_causal_f32  FirePlan::scores, cramming regime, mask causal, scale 1/sqrt(d): bias rows written,
//                                then cblas_sgemm with beta = 1 into them (core/bias_rows.hpp)
//     sgemm_f32                  sgemm_abt (baselines.hpp): q k^T of the same shape (alpha 1, beta 0)
//   Both scores variants run OpenBLAS with `threads` threads (openblas_set_num_threads, restored afterwards), and
//   posenc's bias with TableOptions{.threads = n}; each makes one untimed call first (OpenBLAS starts its threads and
//   allocates its buffers on the first call with a new thread count).
// The baselines are registered under fire/ with exactly the arguments of the kernels they are the baseline of (the
// report pairs them by name within a scheme); the f64 kernel's baselines are the _f64 variants.
//
// Counters: bias: bytes_per_second = output bytes, items_per_second = output values (H L^2); label regime_label(output
// bytes). scores: items_per_second = L^2 scores, flops = 2 L^2 d as a rate (the same nominal count for both variants),
// label regime_label(output bytes).
//
// Size policy (suites.hpp). bias: H and L from the case table (schemes/fire/cases.hpp: kBenchHeads,
// kBenchLengths): L:512 (32 MiB f32 at H = 32, label l3: less stable run to run) is kept as ALiBi's and KERPLE's are;
// L:4096 (2 GiB f32, 4 GiB f64, label dram). One output buffer (scratch slot 0) serves every variant, smallest first
// (L:512, then scores, then the L:4096 f32 cases, then f64), so the large buffer is pre-faulted once and grows once.
// scores: L = kBenchScoresLength, head_dim = kBenchHeadDim (BLAS-shaped, compute-bound).
//
// Sanity, after every timed loop (a mismatch aborts the run before any result is reported). The output buffer is
// filled with NaN before timing, so an entry the kernel did not write cannot pass.
//   bias kernels: rows 0, L/2 and L-1 of heads 0 and H-1 of the timed output are copied; the same buffer is then
//     rewritten by FirePlan::bias of the same geometry with TableOptions{.threads = 1, .streaming_stores = false},
//     and the copied rows must equal it bit for bit (claim FIRE-REPRO-1: values independent of the thread count and
//     the store kind; also catches unwritten rows). Entries (L-1, 0), (L/2, L-1), (0, L-1) and (L-1, L-1) of heads 0
//     and H-1 must equal FirePlan::bias_value_* bit for bit, and, as a gross-error guard, the definition evaluated
//     here in double from the weights within tol * S, S = |b2| + sum_k |W2| (|W1| x + |b1|) (tol 1e-6 exact f32,
//     1e-12 exact f64, 1e-5 cramming: float32 weights and steps).
//   plain loops: the same entries against the same double evaluation within 1e-5 S (f32) or 1e-12 S (f64).
//   scores: entries on, below and far below the diagonal equal scale * (q_i . k_j in double) + bias (in double)
//     within 1e-3 (scale * sum |q_ic k_jc| + S) + 1e-6 (a gross-error guard, not an accuracy claim), and entries
//     above the diagonal are -inf; sgemm_f32: the same entries equal q_i . k_j within the same bound.
//
// Shared with schemes/alibi/bench.cpp and schemes/kerple/bench.cpp through bias_bench.hpp: set_counters, sanity_failure, fmt,
// fill_nan, fill_uniform, bm_bias_store, BlasThreads.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "schemes/fire/cases.hpp"
#include "baselines.hpp"
#include "bias_bench.hpp"
#include "posenc/fire.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::fire;
using posenc::BiasGeometry;
using posenc::BiasMask;
using posenc::FirePlan;
using posenc::FireRegime;
using posenc::FireSpec;
using posenc::FireWeights;

using namespace bias_bench;

constexpr std::int64_t kHeads = static_cast<std::int64_t>(cases::kBenchHeads);
constexpr std::size_t kWidth = cases::kBenchWidth;
constexpr std::int64_t kScoresL = static_cast<std::int64_t>(cases::kBenchScoresLength);
constexpr std::int64_t kHeadDim = static_cast<std::int64_t>(cases::kBenchHeadDim);
constexpr std::int64_t kPlainLoopMaxL = 512;  // the plain loops only at L <= this (see the header)

// ---- weights and the independent value ------------------------------------------------------------------
// torch's default Linear init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from a hash of the index (each value a float32
// number, as a float32 model's weights are); c = 0.1 and init_L = 512 as the reference initialises them,
// L_multiplier = 0.25 (threshold 128; the header says why).
FireWeights fire_weights(std::size_t heads, std::size_t width) {
  auto draw = [](std::size_t n, double bound, std::uint32_t seed) {
    std::vector<float> u(n);
    fill_uniform(u, seed);
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(bound * u[i]);
    return out;
  };
  const double b2 = 1.0 / std::sqrt(static_cast<double>(width));
  FireWeights w;
  w.c = static_cast<float>(0.1);
  w.L_multiplier = 0.25;
  w.init_L = 512.0;
  w.w1 = draw(width, 1.0, 0x2310u);
  w.b1 = draw(width, 1.0, 0x0441u);
  w.w2 = draw(heads * width, b2, 0x8F1Eu);
  w.b2 = draw(heads, b2, 0x5EEDu);
  return w;
}

// The bias of head h for the query at q and the key at j, from the definition in double (fire_spec.hpp), and its
// scale S = |b2| + sum_k |W2| (|W1| x + |b1|). Independent of the library (no plan, no float32 steps).
struct Reference {
  double value = 0, scale = 0;
};
Reference independent_bias(const FireSpec& s, const FireWeights& w, std::size_t h, std::int64_t q, std::int64_t j) {
  const double c = std::fabs(w.c), thr = std::fabs(w.L_multiplier * w.init_L);
  const auto d = static_cast<double>(q >= j ? q - j : j - q);
  const double x = std::log1p(c * d) / (std::log1p(c * std::max(static_cast<double>(q), thr)) + s.eps);
  const std::size_t W = s.mlp_width;
  Reference r{w.b2[h], std::fabs(w.b2[h])};
  for (std::size_t k = 0; k < W; ++k) {
    r.value += w.w2[h * W + k] * std::max(0.0, w.w1[k] * x + w.b1[k]);
    r.scale += std::fabs(w.w2[h * W + k]) * (std::fabs(w.w1[k]) * x + std::fabs(w.b1[k]));
  }
  return r;
}

template <class T>
T plan_value(const FirePlan& plan, std::size_t h, std::int64_t q, std::int64_t j) {
  if constexpr (std::is_same_v<T, float>) return plan.bias_value_f32(h, q, j);
  else return plan.bias_value_f64(h, q, j);
}

// Entries checked after every bias benchmark: far below the diagonal, after the query, the last row's diagonal.
std::vector<std::pair<std::size_t, std::size_t>> probe_entries(std::size_t L) {
  return {{L - 1, 0}, {L / 2, L - 1}, {0, L - 1}, {L - 1, L - 1}, {L / 3, L / 7}};
}

template <class T>
void check_against_definition(const std::string& what, const FireSpec& spec, const FireWeights& w,
                              std::span<const T> out, std::size_t H, std::size_t L, int threads, double tol,
                              const FirePlan* plan) {
  for (std::size_t h : {std::size_t{0}, H - 1})
    for (const auto& [i, j] : probe_entries(L)) {
      const T got = out[(h * L + i) * L + j];
      const auto q = static_cast<std::int64_t>(i), jj = static_cast<std::int64_t>(j);
      if (plan != nullptr) {
        const T same = plan_value<T>(*plan, h, q, jj);
        if (std::memcmp(&got, &same, sizeof(T)) != 0)
          sanity_failure(fmt("%s (heads %zu, L %zu, threads %d): head %zu, row %zu, key %zu is %.17g (%a); "
                             "bias_value gives %.17g (%a)",
                             what.c_str(), H, L, threads, h, i, j, static_cast<double>(got), static_cast<double>(got),
                             static_cast<double>(same), static_cast<double>(same)));
      }
      const Reference want = independent_bias(spec, w, h, q, jj);
      if (!(std::fabs(static_cast<double>(got) - want.value) <= tol * want.scale))
        sanity_failure(fmt("%s (heads %zu, L %zu, threads %d): head %zu, row %zu, key %zu is %.9g; the definition in "
                           "double gives %.9g (tolerance %g x S = %.3g)",
                           what.c_str(), H, L, threads, h, i, j, static_cast<double>(got), want.value, tol,
                           tol * want.scale));
    }
}

// ---- bias -------------------------------------------------------------------------------------------------
template <class T>
void bm_bias(benchmark::State& st, FireRegime regime, const std::string& what) {
  const std::size_t H = usize(st.range(0)), L = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const FireSpec spec{.heads = H, .mlp_width = kWidth, .eps = 1e-6, .regime = regime};
  const FireWeights w = fire_weights(H, kWidth);
  std::optional<FirePlan> plan;
  try {
    plan.emplace(spec, w);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const BiasGeometry g{.query_length = L, .key_length = L, .key_mask = {}, .mask = BiasMask::none};
  const std::size_t n = H * L * L;
  const std::span<T> out = scratch_span<T>(0, n);
  fill_nan(out, threads);
  const posenc::TableOptions opt{.threads = threads};
  try {
    if (posenc::fire_bias_size(spec, g) != n) throw std::invalid_argument("fire_bias_size != H L^2");
    for (auto _ : st) {
      plan->bias(g, out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }

  const double tol = regime == FireRegime::cramming ? 1e-5 : std::is_same_v<T, float> ? 1e-6 : 1e-12;
  check_against_definition<T>(what, spec, w, out, H, L, threads, tol, &*plan);

  check_rows_single_thread<T>(what, *plan, g, out, H, L, threads, "FirePlan", posenc::describe(spec));
  set_counters(st, n, n * sizeof(T));
}

// The plain loop of the definition, per output entry, in T (header).
template <class T>
void plainloop_fire(const FireWeights& w, std::size_t H, std::size_t W, double eps, std::size_t L, T* out,
                    int threads) {
  const T c = static_cast<T>(std::fabs(w.c)), thr = static_cast<T>(std::fabs(w.L_multiplier * w.init_L));
  const T e = static_cast<T>(eps);
  std::vector<T> w1(w.w1.begin(), w.w1.end()), b1(w.b1.begin(), w.b1.end()), w2(w.w2.begin(), w.w2.end()),
      b2(w.b2.begin(), w.b2.end());
  const auto rows = static_cast<std::int64_t>(H * L);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::size_t h = static_cast<std::size_t>(r) / L, i = static_cast<std::size_t>(r) % L;
    T* row = out + static_cast<std::size_t>(r) * L;
    for (std::size_t j = 0; j < L; ++j) {
      const T d = static_cast<T>(i >= j ? i - j : j - i);
      const T x = std::log1p(c * d) / (std::log1p(c * std::max(static_cast<T>(i), thr)) + e);
      T b = b2[h];
      for (std::size_t k = 0; k < W; ++k) b += w2[h * W + k] * std::max(T(0), w1[k] * x + b1[k]);
      row[j] = b;
    }
  }
}

template <class T>
void bm_plainloop(benchmark::State& st, const std::string& what) {
  const std::size_t H = usize(st.range(0)), L = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const FireSpec spec{.heads = H, .mlp_width = kWidth, .eps = 1e-6, .regime = FireRegime::exact};
  const FireWeights w = fire_weights(H, kWidth);
  const std::size_t n = H * L * L;
  const std::span<T> out = scratch_span<T>(0, n);
  fill_nan(out, threads);
  for (auto _ : st) {
    plainloop_fire<T>(w, H, kWidth, spec.eps, L, out.data(), threads);
    benchmark::ClobberMemory();
  }
  check_against_definition<T>(what, spec, w, out, H, L, threads, std::is_same_v<T, float> ? 1e-5 : 1e-12, nullptr);
  set_counters(st, n, n * sizeof(T));
}

// ---- scores -----------------------------------------------------------------------------------------------

void bm_scores(benchmark::State& st, bool fused, const std::string& what) {
  const std::size_t H = usize(st.range(0));
  const FireSpec spec{.heads = H, .mlp_width = kWidth, .eps = 1e-6, .regime = FireRegime::cramming};
  const FireWeights w = fire_weights(H, kWidth);
  bm_bias_scores(
      st, fused, what, [&] { return FirePlan(spec, w); },
      [&](std::size_t i, std::size_t j) {
        const Reference b = independent_bias(spec, w, 0, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
        return BiasReference{b.value, b.scale};
      },
      "scale * q.k + MLP(x)");
}

// ---- registration -----------------------------------------------------------------------------------------
const Registrar kReg{"fire"};  // "fire/<family>/<variant>/<key>:<value>..."

template <class Fn>
void add_bias(const std::string& variant, std::int64_t L, Fn&& fn) {
  kReg.per_thread("bias/" + variant, {"heads", "L"}, {kHeads, L}, std::forward<Fn>(fn));
}

// The bias family at one length: the f32 kernels and their baselines, then the f64 kernel and its.
void register_bias(std::int64_t L) {
  add_bias("cramming_f32", L,
           [](benchmark::State& st) { bm_bias<float>(st, FireRegime::cramming, "fire/bias/cramming_f32"); });
  add_bias("exact_f32", L, [](benchmark::State& st) { bm_bias<float>(st, FireRegime::exact, "fire/bias/exact_f32"); });
  add_bias("stream_store_f32", L, [](benchmark::State& st) { bm_bias_store<float>(st, true); });
  add_bias("store_f32", L, [](benchmark::State& st) { bm_bias_store<float>(st, false); });
  if (L <= kPlainLoopMaxL)
    add_bias("plainloop_f32", L, [](benchmark::State& st) { bm_plainloop<float>(st, "fire/bias/plainloop_f32"); });
  add_bias("exact_f64", L, [](benchmark::State& st) { bm_bias<double>(st, FireRegime::exact, "fire/bias/exact_f64"); });
  add_bias("stream_store_f64", L, [](benchmark::State& st) { bm_bias_store<double>(st, true); });
  add_bias("store_f64", L, [](benchmark::State& st) { bm_bias_store<double>(st, false); });
  if (L <= kPlainLoopMaxL)
    add_bias("plainloop_f64", L, [](benchmark::State& st) { bm_plainloop<double>(st, "fire/bias/plainloop_f64"); });
}

POSENC_BENCH_SCHEME(fire) {
  const std::int64_t small_l = static_cast<std::int64_t>(cases::kBenchLengths[0]);
  const std::int64_t large_l = static_cast<std::int64_t>(cases::kBenchLengths[1]);
  const std::size_t per_l2 = usize(kHeads) * sizeof(float);  // bytes per L^2 (f32)
  static_assert(usize(kHeads) * cases::kBenchLengths[1] * cases::kBenchLengths[1] * sizeof(float) >= kDramMinBytes);

  // Smaller outputs first, then scores, then the DRAM-sized matrices (scratch slot 0 grows once per size).
  register_bias(small_l);
  for (const char* v : {"fused_cramming_causal_f32", "sgemm_f32"}) {
    const bool fused = std::string(v) != "sgemm_f32";
    const std::string what = std::string("fire/scores/") + v;
    kReg.per_thread(std::string("scores/") + v, {"heads", "L", "head_dim"}, {1, kScoresL, kHeadDim}, [fused, what](benchmark::State& st) { bm_scores(st, fused, what); });
  }
  register_bias(large_l);

  const auto sl = usize(small_l), ll = usize(large_l);
  return "fire: bias heads:" + std::to_string(kHeads) + " width " + std::to_string(kWidth) + " L:" +
         std::to_string(small_l) + " (" + format_bytes(sl * sl * per_l2) + " f32, " +
         format_bytes(sl * sl * per_l2 * 2) + " f64) is kept although it lies in the L3 range (label l3), L:" +
         std::to_string(large_l) + " (" + format_bytes(ll * ll * per_l2) + " f32, " +
         format_bytes(ll * ll * per_l2 * 2) + " f64); plainloop only at L <= " + std::to_string(kPlainLoopMaxL) +
         " (the per-entry loop of the definition takes ~40 s per L:4096 matrix); scores heads:1/L:" +
         std::to_string(kScoresL) + "/head_dim:" + std::to_string(kHeadDim) + " (" +
         format_bytes(usize(kScoresL * kScoresL) * sizeof(float)) + " output, BLAS-shaped)";
}

}  // namespace
}  // namespace posenc_bench
