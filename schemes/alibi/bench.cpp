// schemes/alibi/bench.cpp — ALiBi: bias-matrix generation and pre-softmax scores with the bias fused, each with
// its in-run baselines (DESIGN.md §5). Names follow suites.hpp.
//
// Families and variants
//   bias/<variant>/heads:<H>/L:<L>/threads:<n>   AlibiPlan::bias, the whole [H][L][L] matrix (query length = key
//                          length = L, queries at positions 0..L-1), written once per iteration, TableOptions{.threads
//                          = n} (streaming stores as the library decides: on above 4 MiB)
//     exact_relative_f32         exact regime, relative variant (gpt-neox's -tril(i - j) m), mask none
//     exact_relative_causal_f32  the same with mask causal (-inf above the diagonal)
//     bloom_key_counted_f32      alibi_preset("bloom", H): key_counted variant, no key mask, mask none
//     mpt_key_shifted_f32        alibi_preset("mpt", H): key_shifted variant, mask none
//     exact_symmetric_f32        exact regime, symmetric variant (-m |i - j|), mask none
//     exact_relative_f64         exact_relative_f32 in double
//     stream_store_f32 (_f64)    non-temporal stores of the same H L^2 * 4 (* 8) bytes: the DRAM write limit
//     store_f32 (_f64)           ordinary stores of the same bytes: the limit of an output that stays in cache
//   scores/<variant>/heads:1/L:<L>/head_dim:<d>/threads:<n>   one head, Lq = Lk = L, q and k [L][d] in [-1, 1)
//     fused_exact_relative_causal_f32  AlibiPlan::scores, exact relative, mask causal, scale 1/sqrt(d): bias rows
//                                      written, then cblas_sgemm with beta = 1 into them, per block of 256 query
//                                      rows up to the block's last visible key (about half the flops of sgemm_f32)
//     sgemm_f32                        sgemm_abt (baselines.hpp): q k^T of the same shape (alpha 1, beta 0)
//   Both scores variants run OpenBLAS with `threads` threads (openblas_set_num_threads, restored afterwards), and
//   posenc's bias with TableOptions{.threads = n}; each makes one untimed call first (OpenBLAS starts its threads
//   and allocates its buffers on the first call with a new thread count).
// Every baseline has exactly the arguments of the kernels it is the baseline of (the report pairs them by name):
// the f64 kernel's memory limits are the _f64 store variants (same bytes), as in sinusoidal's table family.
// Targets (the issue): bias >= 0.85x stream_store (bytes per second), fused scores <= 1.1x the time of sgemm.
//
// Counters: bias: bytes_per_second = output bytes, items_per_second = output values (H L^2); label
// regime_label(output bytes). scores: items_per_second = L^2 scores, flops = 2 L^2 d as a rate (the same nominal
// count for both variants), label regime_label(output bytes).
//
// Size policy (suites.hpp). bias: H = 32 and L from the case table (schemes/alibi/cases.hpp): L:512 (32 MiB
// f32, 64 MiB f64) is the size the issue names although it lies in the shared-L3 range (label l3: less stable run
// to run); L:4096 (2 GiB f32, 4 GiB f64, label dram). One output buffer (scratch slot 0) serves every variant:
// the L:512 cases run first, then scores (64 MiB), then the L:4096 f32 cases, then f64, so the 2 GiB buffer is
// allocated and pre-faulted once and grows once to 4 GiB; no second matrix is ever allocated (peak ~4 GiB).
// scores: L:4096, head_dim 128 (output 64 MiB, label l3): BLAS-shaped and compute-bound (O(L^2 d) flops).
//
// Sanity, after every timed loop (a mismatch aborts the run before any result is reported). The output buffer is
// filled with NaN before timing, so an entry the kernel did not write cannot pass.
//   bias kernels: rows 0, L/2 and L-1 of heads 0 and H-1 of the timed output are copied; the same buffer is then
//     rewritten by AlibiPlan::bias of the same geometry with TableOptions{.threads = 1, .streaming_stores = false},
//     and the copied rows must equal it bit for bit (claim ALIBI-REPRO-1: values independent of the thread count
//     and the store kind; also catches unwritten rows). Gross-error guard: entry (row L-1, key 0) of heads 0 and
//     H-1 (key L-1 for key_counted, whose bias at key 0 is 0) equals m_h x, m_h = 2^(-8 (h+1) / H) computed here
//     in double and x the variant's integer, within 1e-6 relative (exact regime) or 1e-5 (the float32 regimes,
//     whose float32 slopes are a few 1e-7 off m_h); -inf above the diagonal for the causal mask.
//   scores: entries on, below and far below the diagonal equal scale * (q_i . k_j in double) - m (i - j) within
//     1e-3 of scale * sum |q_ic k_jc| + |bias| + 1e-6 (a gross-error guard, not an accuracy claim), and entries
//     above the diagonal are -inf; sgemm_f32: the same entries equal q_i . k_j within the same bound.
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
#include <utility>
#include <vector>

#include "schemes/alibi/cases.hpp"
#include "baselines.hpp"
#include "bias_bench.hpp"
#include "posenc/alibi.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::alibi;
using posenc::BiasGeometry;
using posenc::BiasMask;
using posenc::AlibiPlan;
using posenc::AlibiRegime;
using posenc::AlibiSpec;
using posenc::AlibiVariant;

constexpr std::int64_t kHeads = static_cast<std::int64_t>(cases::kBenchHeads);
constexpr std::int64_t kScoresL = static_cast<std::int64_t>(cases::kBenchScoresLength);
constexpr std::int64_t kHeadDim = static_cast<std::int64_t>(cases::kBenchHeadDim);

using namespace bias_bench;






// ---- bias -------------------------------------------------------------------------------------------------
struct BiasCase {
  AlibiSpec spec;
  BiasMask mask;
};

// The integer x the variant multiplies at (query row i, key j) of an L x L geometry (queries at 0..L-1).
std::int64_t variant_x(AlibiVariant v, std::int64_t L, std::int64_t i, std::int64_t j) {
  switch (v) {
    case AlibiVariant::relative: return j <= i ? -(i - j) : 0;
    case AlibiVariant::key: return j;
    case AlibiVariant::key_shifted: return j - (L - 1);
    case AlibiVariant::key_counted: return j;  // no key mask: every key is a token
    case AlibiVariant::symmetric: return -(i > j ? i - j : j - i);
  }
  return 0;
}

// m_h = 2^(-b (h+1) / H) for a power-of-two H, computed independently of the library.
double independent_slope(const AlibiSpec& s, std::size_t h) {
  return std::exp2(-s.bias_max * static_cast<double>(h + 1) / static_cast<double>(s.heads));
}

template <class T>
void bm_bias(benchmark::State& st, const BiasCase& c, const std::string& what) {
  const std::size_t H = usize(st.range(0)), L = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  std::optional<AlibiPlan> plan;
  try {
    if (c.spec.heads != H) throw std::invalid_argument("spec heads != heads argument");
    plan.emplace(c.spec);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const BiasGeometry g{.query_length = L, .key_length = L, .key_mask = {}, .mask = c.mask};
  const std::size_t n = H * L * L;
  const std::span<T> out = scratch_span<T>(0, n);
  fill_nan(out, threads);
  const posenc::TableOptions opt{.threads = threads};
  try {
    if (posenc::alibi_bias_size(c.spec, g) != n) throw std::invalid_argument("alibi_bias_size != H L^2");
    for (auto _ : st) {
      plan->bias(g, out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }

  // Gross-error guard on the timed output: one far entry per head against m_h x, and the causal -inf.
  const bool exact = c.spec.regime == AlibiRegime::exact;
  const double tol = exact ? 1e-6 : 1e-5;
  const auto Li = static_cast<std::int64_t>(L);
  for (std::size_t h : {std::size_t{0}, H - 1}) {
    const std::int64_t i = Li - 1, j = c.spec.variant == AlibiVariant::key_counted ? Li - 1 : 0;
    const double m = independent_slope(c.spec, h);
    const double want = m * static_cast<double>(variant_x(c.spec.variant, Li, i, j));
    const double got = out[(h * L + usize(i)) * L + usize(j)];
    if (!(std::fabs(got - want) <= tol * std::fabs(want)))
      sanity_failure(fmt("%s (heads %zu, L %zu, threads %d): head %zu, row %" PRId64 ", key %" PRId64
                         " is %.9g; m_h x = 2^(-%g (h+1)/%zu) * %" PRId64 " = %.9g (relative tolerance %g)",
                         what.c_str(), H, L, threads, h, i, j, got, c.spec.bias_max, H,
                         variant_x(c.spec.variant, Li, i, j), want, tol));
    if (c.mask == BiasMask::causal) {
      const double above = out[(h * L + 0) * L + (L - 1)];
      if (!(std::isinf(above) && above < 0))
        sanity_failure(fmt("%s (heads %zu, L %zu, threads %d): head %zu, row 0, key %zu (above the diagonal) is %.9g, "
                           "the causal mask gives -inf",
                           what.c_str(), H, L, threads, h, L - 1, above));
    }
  }

  check_rows_single_thread<T>(what, *plan, g, out, H, L, threads, "AlibiPlan", posenc::describe(c.spec));
  set_counters(st, n, n * sizeof(T));
}


// ---- scores -----------------------------------------------------------------------------------------------

void bm_scores(benchmark::State& st, bool fused, const std::string& what) {
  const AlibiSpec spec{.heads = usize(st.range(0)), .variant = AlibiVariant::relative, .regime = AlibiRegime::exact};
  bm_bias_scores(
      st, fused, what, [&] { return AlibiPlan(spec); },
      [&](std::size_t i, std::size_t j) {
        const double b = -independent_slope(spec, 0) * static_cast<double>(i - j);  // m = 2^-8 for one head
        return BiasReference{b, std::fabs(b)};
      },
      "scale * q.k - m (i - j)");
}

// ---- registration -----------------------------------------------------------------------------------------
const Registrar kReg{"alibi"};  // "alibi/<family>/<variant>/<key>:<value>..."

template <class Fn>
void add_bias(const std::string& variant, std::int64_t L, Fn&& fn) {
  kReg.per_thread("bias/" + variant, {"heads", "L"}, {kHeads, L}, std::forward<Fn>(fn));
}

// The bias family at one length: the f32 kernels and their baselines, then (if with_f64) the f64 kernel and its.
void register_bias(std::int64_t L, bool with_f64) {
  struct Kernel {
    const char* variant;
    AlibiSpec (*spec)();
    BiasMask mask;
  };
  static constexpr Kernel kKernels[] = {
      {"exact_relative_f32",
       [] { return AlibiSpec{.heads = usize(kHeads), .variant = AlibiVariant::relative, .regime = AlibiRegime::exact}; },
       BiasMask::none},
      {"exact_relative_causal_f32",
       [] { return AlibiSpec{.heads = usize(kHeads), .variant = AlibiVariant::relative, .regime = AlibiRegime::exact}; },
       BiasMask::causal},
      {"bloom_key_counted_f32", [] { return posenc::alibi_preset("bloom", usize(kHeads)); }, BiasMask::none},
      {"mpt_key_shifted_f32", [] { return posenc::alibi_preset("mpt", usize(kHeads)); }, BiasMask::none},
      {"exact_symmetric_f32",
       [] { return AlibiSpec{.heads = usize(kHeads), .variant = AlibiVariant::symmetric, .regime = AlibiRegime::exact}; },
       BiasMask::none},
  };
  for (const Kernel& k : kKernels) {
    const BiasCase c{k.spec(), k.mask};
    const std::string what = std::string("alibi/bias/") + k.variant;
    add_bias(k.variant, L, [c, what](benchmark::State& st) { bm_bias<float>(st, c, what); });
  }
  add_bias("stream_store_f32", L, [](benchmark::State& st) { bm_bias_store<float>(st, true); });
  add_bias("store_f32", L, [](benchmark::State& st) { bm_bias_store<float>(st, false); });
  if (with_f64) {
    const BiasCase c{AlibiSpec{.heads = usize(kHeads), .variant = AlibiVariant::relative, .regime = AlibiRegime::exact},
                     BiasMask::none};
    add_bias("exact_relative_f64", L,
             [c](benchmark::State& st) { bm_bias<double>(st, c, "alibi/bias/exact_relative_f64"); });
    add_bias("stream_store_f64", L, [](benchmark::State& st) { bm_bias_store<double>(st, true); });
    add_bias("store_f64", L, [](benchmark::State& st) { bm_bias_store<double>(st, false); });
  }
}

POSENC_BENCH_SCHEME(alibi) {
  const std::int64_t small_l = static_cast<std::int64_t>(cases::kBenchLengths[0]);
  const std::int64_t large_l = static_cast<std::int64_t>(cases::kBenchLengths[1]);
  const std::size_t per_l2 = usize(kHeads) * sizeof(float);  // bytes per L^2 (f32)
  static_assert(usize(kHeads) * cases::kBenchLengths[1] * cases::kBenchLengths[1] * sizeof(float) >= kDramMinBytes);

  // Smaller outputs first, then scores (64 MiB), then the DRAM-sized matrices (scratch slot 0 grows once per size).
  register_bias(small_l, true);
  for (const char* v : {"fused_exact_relative_causal_f32", "sgemm_f32"}) {
    const bool fused = std::string(v) != "sgemm_f32";
    const std::string what = std::string("alibi/scores/") + v;
    kReg.per_thread(std::string("scores/") + v, {"heads", "L", "head_dim"}, {1, kScoresL, kHeadDim}, [fused, what](benchmark::State& st) { bm_scores(st, fused, what); });
  }
  register_bias(large_l, true);

  const auto sl = usize(small_l), ll = usize(large_l);
  return "alibi: bias heads:" + std::to_string(kHeads) + " L:" + std::to_string(small_l) + " (" +
         format_bytes(sl * sl * per_l2) + " f32, " + format_bytes(sl * sl * per_l2 * 2) +
         " f64) is kept although it lies in the L3 range (label l3: the size the issue names), L:" +
         std::to_string(large_l) + " (" + format_bytes(ll * ll * per_l2) + " f32, " +
         format_bytes(ll * ll * per_l2 * 2) + " f64); scores heads:1/L:" + std::to_string(kScoresL) +
         "/head_dim:" + std::to_string(kHeadDim) + " (" + format_bytes(usize(kScoresL * kScoresL) * sizeof(float)) +
         " output, BLAS-shaped)";
}

}  // namespace
}  // namespace posenc_bench
