// benchmarks/bias_bench.hpp — what the benchmarks of the additive-bias schemes (alibi_bench.cpp, kerple_bench.cpp)
// share: counters, the sanity-failure exit, NaN / uniform fills, the store baselines of an [H][L][L] matrix, and
// OpenBLAS's thread count for one benchmark.
#pragma once

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>

#include "baselines.hpp"
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

}  // namespace posenc_bench::bias_bench
