// schemes/kerple/bench.cpp — KERPLE: bias-matrix generation and pre-softmax scores with the bias fused, each with
// its in-run baselines (DESIGN.md §5). Names follow suites.hpp; the layout mirrors schemes/alibi/bench.cpp (same families,
// arguments and baselines, so the report pairs kernels and baselines the same way).
//
// Weights: KERPLE's bias_p, bias_a are trained parameters, not part of the spec. The benchmarks use H deterministic
// values in the range a trained model leaves (kerple_weights below): bias_p in [0.5, 1.8], bias_a in [0.05, 1],
// spread over the heads by a golden-ratio sequence (no head at an exact case such as p = 1 or 2); the clamp of the
// definition (eps = 0.01, power p <= 2) is then a no-op.
//
// Families and variants
//   bias/<variant>/heads:<H>/L:<L>/threads:<n>   KerplePlan::bias, the whole [H][L][L] matrix (query length = key
//                          length = L, queries at positions 0..L-1), mask none (d = 0, bias -0.0, above the
//                          diagonal), written once per iteration, TableOptions{.threads = n} (streaming stores as the
//                          library decides: on above 4 MiB)
//     exact_log_f32        exact regime, log kernel -p ln(1 + a d), float output (correctly rounded)
//     megatron_log_f32     megatron regime (the reference's float32 steps), log kernel
//     exact_power_f32      exact regime, power kernel -a d^p
//     megatron_power_f32   megatron regime, power kernel
//     exact_log_f64        exact_log_f32 in double (binary128 log1pq per value of the per-head vector)
//     stream_store_f32 (_f64)  non-temporal stores of the same H L^2 * 4 (* 8) bytes: the DRAM write limit
//     store_f32 (_f64)         ordinary stores of the same bytes: the limit of an output that stays in cache
//   scores/<variant>/heads:1/L:<L>/head_dim:<d>/threads:<n>   one head, Lq = Lk = L, q and k [L][d] in [-1, 1)
//     fused_exact_log_causal_f32  KerplePlan::scores, exact log kernel, mask causal, scale 1/sqrt(d): bias rows
//                                 written, then cblas_sgemm with beta = 1 into them, per block of 256 query rows up
//                                 to the block's last visible key (about half the flops of sgemm_f32)
//     sgemm_f32                   sgemm_abt (baselines.hpp): q k^T of the same shape (alpha 1, beta 0)
//   Both scores variants run OpenBLAS with `threads` threads (openblas_set_num_threads, restored afterwards), and
//   posenc's bias with TableOptions{.threads = n}; each makes one untimed call first (OpenBLAS starts its threads
//   and allocates its buffers on the first call with a new thread count).
// The baselines are registered under kerple/ with exactly the arguments of the kernels they are the baseline of
// (the report pairs them by name within a scheme): the f64 kernel's memory limits are the _f64 store variants.
// They time the same stores as alibi's (a run of both schemes measures them twice; a kerple-only run is complete).
//
// Counters: bias: bytes_per_second = output bytes, items_per_second = output values (H L^2); label
// regime_label(output bytes). scores: items_per_second = L^2 scores, flops = 2 L^2 d as a rate (the same nominal
// count for both variants), label regime_label(output bytes).
//
// Size policy (suites.hpp), as ALiBi's. bias: H = 32 and L from the case table (schemes/kerple/cases.hpp): L:512
// (32 MiB f32, 64 MiB f64) lies in the shared-L3 range (label l3: less stable run to run) and is kept as ALiBi's
// is; L:4096 (2 GiB f32, 4 GiB f64, label dram). One output buffer (scratch slot 0) serves every variant: the L:512
// cases run first, then scores (64 MiB), then the L:4096 f32 cases, then f64, so the 2 GiB buffer is allocated and
// pre-faulted once and grows once to 4 GiB; no second matrix is ever allocated (peak ~4 GiB).
// scores: L:4096, head_dim 128 (output 64 MiB, label l3): BLAS-shaped and compute-bound (O(L^2 d) flops).
//
// Sanity, after every timed loop (a mismatch aborts the run before any result is reported). The output buffer is
// filled with NaN before timing, so an entry the kernel did not write cannot pass.
//   bias kernels: rows 0, L/2 and L-1 of heads 0 and H-1 of the timed output are copied; the same buffer is then
//     rewritten by KerplePlan::bias of the same geometry with TableOptions{.threads = 1, .streaming_stores = false},
//     and the copied rows must equal it bit for bit (claim KERPLE-REPRO-1: values independent of the thread count
//     and the store kind; also catches unwritten rows). Entry (row L-1, key 0) of heads 0 and H-1 must equal
//     KerplePlan::bias_value_* (h, L-1) bit for bit (KERPLE-REPRO-1: one value per (head, distance)), and, as a
//     gross-error guard, -p ln(1 + a d) / -a d^p computed here in double from the weights (clamped as the spec says)
//     within 1e-6 relative (exact regime) or 1e-5 (megatron: float32 parameters and steps); entry (row 0, key L-1),
//     after the query, must be -0.0.
//   scores: entries on, below and far below the diagonal equal scale * (q_i . k_j in double) - p ln(1 + a (i - j))
//     within 1e-3 of scale * sum |q_ic k_jc| + |bias| + 1e-6 (a gross-error guard, not an accuracy claim), and
//     entries above the diagonal are -inf; sgemm_f32: the same entries equal q_i . k_j within the same bound.
//
// Shared with schemes/alibi/bench.cpp through bias_bench.hpp: set_counters,
// sanity_failure, fmt, fill_nan, fill_uniform, bm_bias_store, BlasThreads.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <array>
#include <cinttypes>
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

#include "schemes/kerple/cases.hpp"
#include "baselines.hpp"
#include "bias_bench.hpp"
#include "posenc/kerple.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::kerple;
using posenc::BiasGeometry;
using posenc::BiasMask;
using posenc::KerpleKernel;
using posenc::KerplePlan;
using posenc::KerpleRegime;
using posenc::KerpleSpec;
using posenc::KerpleWeights;

constexpr std::int64_t kHeads = static_cast<std::int64_t>(cases::kBenchHeads);
constexpr std::int64_t kScoresL = static_cast<std::int64_t>(cases::kBenchScoresLength);
constexpr std::int64_t kHeadDim = static_cast<std::int64_t>(cases::kBenchHeadDim);

using namespace bias_bench;






// ---- weights and the independent value ------------------------------------------------------------------
// Plausible trained parameters for `heads` heads: bias_p in [0.5, 1.8], bias_a in [0.05, 1] (golden-ratio spread).
KerpleWeights kerple_weights(std::size_t heads) {
  KerpleWeights w;
  for (std::size_t h = 0; h < heads; ++h) {
    const double u = std::fmod(0.5 + 0.6180339887498949 * static_cast<double>(h), 1.0);
    const double v = std::fmod(0.25 + 0.7548776662466927 * static_cast<double>(h), 1.0);
    w.p.push_back(0.5 + 1.3 * u);
    w.a.push_back(0.05 + 0.95 * v);
  }
  return w;
}

// b_h(d) in double, from the weights and the definition (kerple_spec.hpp), independently of the library: the clamp,
// float32 parameters for the megatron regime, then -p ln(1 + a d) or -a d^p.
double independent_bias(const KerpleSpec& s, const KerpleWeights& w, std::size_t h, std::int64_t d) {
  double p = std::max(w.p[h], 0.01), a = std::max(w.a[h], 0.01);
  if (s.kernel == KerpleKernel::power) p = std::min(p, 2.0);
  if (s.regime == KerpleRegime::megatron) {
    p = static_cast<float>(p);
    a = static_cast<float>(a);
  }
  const auto dd = static_cast<double>(d);
  return s.kernel == KerpleKernel::log ? -p * std::log1p(a * dd) : -a * std::pow(dd, p);
}

// ---- bias -------------------------------------------------------------------------------------------------
template <class T>
T plan_value(const KerplePlan& plan, std::size_t h, std::int64_t d) {
  if constexpr (std::is_same_v<T, float>) return plan.bias_value_f32(h, d);
  else return plan.bias_value_f64(h, d);
}

template <class T>
void bm_bias(benchmark::State& st, const KerpleSpec& spec, const std::string& what) {
  const std::size_t H = usize(st.range(0)), L = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const KerpleWeights w = kerple_weights(H);
  std::optional<KerplePlan> plan;
  try {
    if (spec.heads != H) throw std::invalid_argument("spec heads != heads argument");
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
    if (posenc::kerple_bias_size(spec, g) != n) throw std::invalid_argument("kerple_bias_size != H L^2");
    for (auto _ : st) {
      plan->bias(g, out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }

  // The far entry per head against bias_value (bit for bit) and the independent value; -0.0 after the query.
  const double tol = spec.regime == KerpleRegime::exact ? 1e-6 : 1e-5;
  for (std::size_t h : {std::size_t{0}, H - 1}) {
    const auto d = static_cast<std::int64_t>(L - 1);
    const T got = out[(h * L + (L - 1)) * L + 0];
    const T same = plan_value<T>(*plan, h, d);
    const double want = independent_bias(spec, w, h, d);
    if (std::memcmp(&got, &same, sizeof(T)) != 0)
      sanity_failure(fmt("%s (heads %zu, L %zu, threads %d): head %zu, row %zu, key 0 is %.17g (%a); bias_value "
                         "of distance %" PRId64 " gives %.17g (%a)",
                         what.c_str(), H, L, threads, h, L - 1, static_cast<double>(got), static_cast<double>(got),
                         d, static_cast<double>(same), static_cast<double>(same)));
    if (!(std::fabs(static_cast<double>(got) - want) <= tol * std::fabs(want)))
      sanity_failure(fmt("%s (heads %zu, L %zu, threads %d): head %zu, row %zu, key 0 is %.9g; the double-precision "
                         "bias of distance %" PRId64 " (bias_p %.17g, bias_a %.17g) is %.9g (relative tolerance %g)",
                         what.c_str(), H, L, threads, h, L - 1, static_cast<double>(got), d, w.p[h], w.a[h], want,
                         tol));
    const T after = out[(h * L + 0) * L + (L - 1)];
    if (!(after == 0 && std::signbit(after)))
      sanity_failure(fmt("%s (heads %zu, L %zu, threads %d): head %zu, row 0, key %zu (after the query) is %.9g, "
                         "the definition gives -0.0",
                         what.c_str(), H, L, threads, h, L - 1, static_cast<double>(after)));
  }

  check_rows_single_thread<T>(what, *plan, g, out, H, L, threads, "KerplePlan", posenc::describe(spec));
  set_counters(st, n, n * sizeof(T));
}


// ---- scores -----------------------------------------------------------------------------------------------

void bm_scores(benchmark::State& st, bool fused, const std::string& what) {
  const std::size_t H = usize(st.range(0));
  const KerpleSpec spec{.heads = H, .kernel = KerpleKernel::log, .regime = KerpleRegime::exact};
  const KerpleWeights w = kerple_weights(H);
  bm_bias_scores(
      st, fused, what, [&] { return KerplePlan(spec, w); },
      [&](std::size_t i, std::size_t j) {
        const double b = independent_bias(spec, w, 0, static_cast<std::int64_t>(i - j));
        return BiasReference{b, std::fabs(b)};
      },
      "scale * q.k - p ln(1 + a (i - j))");
}

// ---- registration -----------------------------------------------------------------------------------------
const Registrar kReg{"kerple"};  // "kerple/<family>/<variant>/<key>:<value>..."

template <class Fn>
void add_bias(const std::string& variant, std::int64_t L, Fn&& fn) {
  kReg.per_thread("bias/" + variant, {"heads", "L"}, {kHeads, L}, std::forward<Fn>(fn));
}

// The bias family at one length: the f32 kernels and their baselines, then the f64 kernel and its.
void register_bias(std::int64_t L) {
  struct Kernel {
    const char* variant;
    KerpleKernel kernel;
    KerpleRegime regime;
  };
  static constexpr Kernel kKernels[] = {
      {"exact_log_f32", KerpleKernel::log, KerpleRegime::exact},
      {"megatron_log_f32", KerpleKernel::log, KerpleRegime::megatron},
      {"exact_power_f32", KerpleKernel::power, KerpleRegime::exact},
      {"megatron_power_f32", KerpleKernel::power, KerpleRegime::megatron},
  };
  for (const Kernel& k : kKernels) {
    const KerpleSpec spec{.heads = usize(kHeads), .kernel = k.kernel, .regime = k.regime};
    const std::string what = std::string("kerple/bias/") + k.variant;
    add_bias(k.variant, L, [spec, what](benchmark::State& st) { bm_bias<float>(st, spec, what); });
  }
  add_bias("stream_store_f32", L, [](benchmark::State& st) { bm_bias_store<float>(st, true); });
  add_bias("store_f32", L, [](benchmark::State& st) { bm_bias_store<float>(st, false); });
  const KerpleSpec f64{.heads = usize(kHeads), .kernel = KerpleKernel::log, .regime = KerpleRegime::exact};
  add_bias("exact_log_f64", L, [f64](benchmark::State& st) { bm_bias<double>(st, f64, "kerple/bias/exact_log_f64"); });
  add_bias("stream_store_f64", L, [](benchmark::State& st) { bm_bias_store<double>(st, true); });
  add_bias("store_f64", L, [](benchmark::State& st) { bm_bias_store<double>(st, false); });
}

POSENC_BENCH_SCHEME(kerple) {
  const std::int64_t small_l = static_cast<std::int64_t>(cases::kBenchLengths[0]);
  const std::int64_t large_l = static_cast<std::int64_t>(cases::kBenchLengths[1]);
  const std::size_t per_l2 = usize(kHeads) * sizeof(float);  // bytes per L^2 (f32)
  static_assert(usize(kHeads) * cases::kBenchLengths[1] * cases::kBenchLengths[1] * sizeof(float) >= kDramMinBytes);

  // Smaller outputs first, then scores (64 MiB), then the DRAM-sized matrices (scratch slot 0 grows once per size).
  register_bias(small_l);
  for (const char* v : {"fused_exact_log_causal_f32", "sgemm_f32"}) {
    const bool fused = std::string(v) != "sgemm_f32";
    const std::string what = std::string("kerple/scores/") + v;
    kReg.per_thread(std::string("scores/") + v, {"heads", "L", "head_dim"}, {1, kScoresL, kHeadDim}, [fused, what](benchmark::State& st) { bm_scores(st, fused, what); });
  }
  register_bias(large_l);

  const auto sl = usize(small_l), ll = usize(large_l);
  return "kerple: bias heads:" + std::to_string(kHeads) + " L:" + std::to_string(small_l) + " (" +
         format_bytes(sl * sl * per_l2) + " f32, " + format_bytes(sl * sl * per_l2 * 2) +
         " f64) is kept although it lies in the L3 range (label l3: ALiBi's size), L:" + std::to_string(large_l) +
         " (" + format_bytes(ll * ll * per_l2) + " f32, " + format_bytes(ll * ll * per_l2 * 2) +
         " f64); scores heads:1/L:" + std::to_string(kScoresL) + "/head_dim:" + std::to_string(kHeadDim) + " (" +
         format_bytes(usize(kScoresL * kScoresL) * sizeof(float)) + " output, BLAS-shaped)";
}

}  // namespace
}  // namespace posenc_bench
