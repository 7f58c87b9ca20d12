// benchmarks/bias_bench.hpp — what the benchmarks of the additive-bias schemes (alibi, kerple, fire) share: counters,
// the sanity-failure exit, NaN / uniform fills, the store baselines of an [H][L][L] matrix, OpenBLAS's thread count
// for one benchmark, and the fused-scores benchmark against sgemm alone.
#pragma once

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>

#include "baselines.hpp"
#include "posenc/bias.hpp"
#include "posenc/options.hpp"
#include "suites.hpp"

namespace posenc_bench::bias_bench {

constexpr std::size_t usize(std::int64_t v) { return static_cast<std::size_t>(v); }

inline void set_counters(benchmark::State& st, std::size_t items, std::size_t bytes) {
  const auto it = static_cast<std::int64_t>(st.iterations());
  st.SetItemsProcessed(it * static_cast<std::int64_t>(items));
  st.SetBytesProcessed(it * static_cast<std::int64_t>(bytes));
  st.SetLabel(regime_label(bytes));
}

[[noreturn]] inline void sanity_failure(const std::string& message) {
  std::fprintf(stderr, "posenc_bench: sanity check failed for %s\n", message.c_str());
  std::abort();
}

inline std::string fmt(const char* format, auto... args) {
  char buf[768];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// x = quiet NaN everywhere, with `threads` threads (contiguous static split, as the stores use).
template <class T>
void fill_nan(std::span<T> x, int threads) {
  const auto n = static_cast<std::ptrdiff_t>(x.size());
  const T nan = std::numeric_limits<T>::quiet_NaN();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::ptrdiff_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = nan;
}

// Values in [-1, 1) from a hash of the index and a seed.
inline void fill_uniform(std::span<float> x, std::uint32_t seed) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u + seed;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    h *= 0x297A2D39u;
    h ^= h >> 15;
    x[i] = static_cast<float>(static_cast<double>(static_cast<std::int32_t>(h)) * 0x1p-31);
  }
}

template <class T>
void bm_bias_store(benchmark::State& st, bool non_temporal) {
  const std::size_t H = usize(st.range(0)), L = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const std::size_t n = H * L * L, bytes = n * sizeof(T);
  void* out = scratch(0, bytes);
  for (auto _ : st) {
    if (non_temporal) stream_store(out, bytes, threads);
    else plain_store(out, bytes, threads);
    benchmark::ClobberMemory();
  }
  set_counters(st, n, bytes);
}

// OpenBLAS's thread count for one benchmark, restored when it ends.
class BlasThreads {
 public:
  explicit BlasThreads(int n) : saved_(openblas_get_num_threads()) { openblas_set_num_threads(n); }
  ~BlasThreads() { openblas_set_num_threads(saved_); }
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int saved_;
};

// The independent double-precision bias of one entry (value) and the magnitude its error scales with.
struct BiasReference {
  double value = 0, scale = 0;
};

// Scores of one causal head, L x L, head_dim d (ranges: heads, L, head_dim, threads): fused = the plan's scores
// (bias rows + gemm), else sgemm alone (the baseline). make_plan() returns the plan (an exception skips the
// benchmark); bias(i, j) is the reference bias of query i, key j (j <= i) for the sanity check of 8 entries on, below,
// far below and (fused) above the diagonal; formula names what the fused value is (in a sanity failure).
template <class MakePlan, class Bias>
void bm_bias_scores(benchmark::State& st, bool fused, const std::string& what, MakePlan&& make_plan, Bias&& bias,
                    const char* formula) {
  const std::size_t H = usize(st.range(0)), L = usize(st.range(1)), d = usize(st.range(2));
  const int threads = static_cast<int>(st.range(3));
  std::optional<decltype(make_plan())> plan;
  try {
    if (H != 1) throw std::invalid_argument("scores benchmarks are one head (the sgemm baseline is one gemm)");
    plan.emplace(make_plan());
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  std::vector<float> q(L * d), k(L * d);
  fill_uniform(q, 0x9E3779B9u);
  fill_uniform(k, 0x7F4A7C15u);
  const std::span<float> out = scratch_span<float>(0, L * L);
  fill_nan(out, 1);  // one thread: no OpenMP workers left spinning next to OpenBLAS's (parallel.hpp)
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const posenc::BiasGeometry g{.query_length = L, .key_length = L, .key_mask = {}, .mask = posenc::BiasMask::causal};
  const posenc::TableOptions opt{.threads = threads};
  {
    const BlasThreads blas(threads);
    const auto once = [&] {
      if (fused) plan->scores(std::span<const float>(q), std::span<const float>(k), d, g, scale, out, opt);
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
  const std::pair<std::size_t, std::size_t> at[] = {{0, 0}, {L / 3, L / 3}, {L / 2, L / 2 - 1}, {L / 2, L / 7},
                                                    {L - 1, 0}, {L - 1, L - 1}, {0, L - 1}, {L / 3, L / 2}};
  for (const auto& [i, j] : at) {
    double dot = 0, mag = 0;
    for (std::size_t c = 0; c < d; ++c) {
      const double p = static_cast<double>(q[i * d + c]) * static_cast<double>(k[j * d + c]);
      dot += p;
      mag += std::fabs(p);
    }
    const double got = out[i * L + j];
    double want = 0, bound = 0;
    if (fused) {
      if (j > i) {
        if (!(std::isinf(got) && got < 0))
          sanity_failure(fmt("%s (L %zu, head_dim %zu, threads %d): scores[%zu][%zu] (above the diagonal) is %.9g, "
                             "the causal mask gives -inf",
                             what.c_str(), L, d, threads, i, j, got));
        continue;
      }
      const BiasReference b = bias(i, j);
      want = scale * dot + b.value;
      bound = 1e-3 * (scale * mag + b.scale) + 1e-6;
    } else {
      want = dot;
      bound = 1e-3 * mag + 1e-6;
    }
    if (!(std::fabs(got - want) <= bound))
      sanity_failure(fmt("%s (L %zu, head_dim %zu, threads %d): scores[%zu][%zu] is %.9g; the double-precision %s "
                         "gives %.9g (bound %.3g)",
                         what.c_str(), L, d, threads, i, j, got, fused ? formula : "q.k", want, bound));
  }
  st.counters["flops"] =
      benchmark::Counter(2.0 * static_cast<double>(L * L * d), benchmark::Counter::kIsIterationInvariantRate);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(L * L));
  st.SetLabel(regime_label(L * L * sizeof(float)));
}

// Reproducibility check of a timed index call (T5 buckets, Shaw indices): rows 0, L/2, L-1 of the [L][L] `out` must
// be those of the same matrix written again by rewrite(out) (one thread, no streaming stores; it overwrites `out`).
template <class Rewrite>
void check_index_rows_single_thread(const std::string& what, std::span<std::int32_t> out, std::size_t L, int threads,
                                    const char* entry, Rewrite&& rewrite) {
  std::vector<std::int32_t> rows;
  for (std::size_t i : {std::size_t{0}, L / 2, L - 1})
    rows.insert(rows.end(), out.begin() + static_cast<std::ptrdiff_t>(i * L), out.begin() + static_cast<std::ptrdiff_t>((i + 1) * L));
  rewrite(out);
  std::size_t at = 0;
  for (std::size_t i : {std::size_t{0}, L / 2, L - 1})
    for (std::size_t j = 0; j < L; ++j, ++at)
      if (rows[at] != out[i * L + j])
        sanity_failure(fmt("%s (L %zu, threads %d): %s (%zu, %zu) is %d; one thread without streaming stores gives %d",
                           what.c_str(), L, threads, entry, i, j, rows[at], out[i * L + j]));
}

// Reproducibility check of a timed bias call: rows 0, L/2, L-1 of heads 0 and H-1 of `out` (the [H][L][L] bias the
// benchmark wrote with `threads`) must be bit for bit those of the same geometry written again on one thread without
// streaming stores (which overwrites `out`). plan_name and spec_text name the call in a sanity failure.
template <class T, class Plan>
void check_rows_single_thread(const std::string& what, const Plan& plan, const posenc::BiasGeometry& g,
                              std::span<T> out, std::size_t H, std::size_t L, int threads, const char* plan_name,
                              const std::string& spec_text) {
  const std::array<std::size_t, 2> heads{0, H - 1};
  const std::array<std::size_t, 3> rows{0, L / 2, L - 1};
  std::vector<T> sample(heads.size() * rows.size() * L);
  for (std::size_t a = 0; a < heads.size(); ++a)
    for (std::size_t r = 0; r < rows.size(); ++r)
      std::copy_n(out.data() + (heads[a] * L + rows[r]) * L, L, sample.data() + (a * rows.size() + r) * L);
  try {
    plan.bias(g, out, posenc::TableOptions{.threads = 1, .streaming_stores = false});
  } catch (const std::exception& e) {
    sanity_failure(what + ": the single-thread reference call threw: " + e.what());
  }
  for (std::size_t a = 0; a < heads.size(); ++a)
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const T* want = out.data() + (heads[a] * L + rows[r]) * L;
      const T* got = sample.data() + (a * rows.size() + r) * L;
      for (std::size_t j = 0; j < L; ++j)
        if (std::memcmp(&got[j], &want[j], sizeof(T)) != 0)
          sanity_failure(fmt("%s (heads %zu, L %zu, threads %d, %s): head %zu, row %zu, key %zu is %.17g (%a); "
                             "%s::bias of the same geometry with threads = 1 and no streaming stores gives %.17g (%a)",
                             what.c_str(), H, L, threads, spec_text.c_str(), heads[a], rows[r], j,
                             static_cast<double>(got[j]), static_cast<double>(got[j]), plan_name,
                             static_cast<double>(want[j]), static_cast<double>(want[j])));
    }
}

// The attention output of one causal head (heads 1, L x head_dim from the arguments heads, L, head_dim, threads) of a
// plan with attend(q, k, v, heads, g, scale, out, options) (Shaw, NEZHA), then rows 0, L/2 and L - 1 (every 7th
// column) checked against the definition in double: key_entry(i, j, c) and value_entry(i, j, c) are column c of the
// key and value tables' rows for query i and key j, computed from the definition by the caller (not by the plan).
template <class Plan, class KeyEntry, class ValueEntry>
void bm_attend_causal(benchmark::State& st, const std::string& what, const Plan& plan, KeyEntry&& key_entry,
                      ValueEntry&& value_entry) {
  const std::size_t L = usize(st.range(1)), d = usize(st.range(2));
  const int threads = static_cast<int>(st.range(3));
  std::vector<float> q(L * d), k(L * d), v(L * d);
  fill_uniform(q, 0x9E3779B9u);
  fill_uniform(k, 0x7F4A7C15u);
  fill_uniform(v, 0x6A09E667u);
  const std::span<float> out = scratch_span<float>(0, L * d);
  const posenc::BiasGeometry g{.query_length = L, .key_length = L, .key_mask = {}, .mask = posenc::BiasMask::causal};
  const posenc::TableOptions opt{.threads = threads};
  {
    const BlasThreads blas(threads);
    try {
      plan.attend(std::span<const float>(q), std::span<const float>(k), std::span<const float>(v), 1, g, std::nullopt,
                  out, opt);
      for (auto _ : st) {
        plan.attend(std::span<const float>(q), std::span<const float>(k), std::span<const float>(v), 1, g, std::nullopt,
                    out, opt);
        benchmark::ClobberMemory();
      }
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
      return;
    }
  }
  const double scale = 1 / std::sqrt(static_cast<double>(d));
  for (std::size_t i : {std::size_t{0}, L / 2, L - 1}) {
    std::vector<double> e(i + 1);
    double m = -1e300, sum = 0;
    for (std::size_t j = 0; j <= i; ++j) {
      double x = 0;
      for (std::size_t c = 0; c < d; ++c)
        x += static_cast<double>(q[i * d + c]) * (static_cast<double>(k[j * d + c]) + key_entry(i, j, c));
      e[j] = scale * x;
      m = std::max(m, e[j]);
    }
    for (double& x : e) sum += (x = std::exp(x - m));
    for (std::size_t c = 0; c < d; c += 7) {
      double z = 0;
      for (std::size_t j = 0; j <= i; ++j) z += e[j] / sum * (static_cast<double>(v[j * d + c]) + value_entry(i, j, c));
      if (!(std::fabs(out[i * d + c] - z) <= 1e-3))
        sanity_failure(fmt("%s (L %zu, head_dim %zu, threads %d): output[%zu][%zu] is %.9g; the double-precision "
                           "definition gives %.9g",
                           what.c_str(), L, d, threads, i, c, static_cast<double>(out[i * d + c]), z));
    }
  }
  st.counters["flops"] =
      benchmark::Counter(4.0 * static_cast<double>(L * L * d), benchmark::Counter::kIsIterationInvariantRate);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(L * d));
  st.SetLabel(regime_label(L * L * sizeof(float)));
}

}  // namespace posenc_bench::bias_bench
