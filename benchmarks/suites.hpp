// benchmarks/suites.hpp — what every scheme's benchmark file shares: the size policy and its registration hook.
//
// Naming contract (parsed by reports/): "<scheme>/<family>/<variant>/<key>:<value>/<key>:<value>...", e.g.
// "sinusoidal/table/exact_f32/L:4096/d:512/threads:2". Keys come from Google Benchmark's ArgNames. Every benchmark
// measures wall-clock time (UseRealTime: the kernels are multi-threaded); main.cpp drops the
// "/real_time" suffix Google Benchmark would append, so names are exactly the contract.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace posenc_bench {

// Size policy (DESIGN.md §5): working sets between ~2 and ~256 MiB land in the shared L3 and are unstable
// from run to run, so memory-bound benchmarks run at <= 1 MiB (private-L2 resident) or >= 512 MiB (DRAM).
inline constexpr std::size_t kCacheMaxBytes = std::size_t{1} << 20;
inline constexpr std::size_t kDramMinBytes = std::size_t{512} << 20;
constexpr bool in_stable_regime(std::size_t bytes) noexcept {
  return bytes <= kCacheMaxBytes || bytes >= kDramMinBytes;
}
constexpr const char* regime_label(std::size_t bytes) noexcept {
  return bytes <= kCacheMaxBytes ? "cache" : bytes >= kDramMinBytes ? "dram" : "l3";
}

// One registration function per scheme, in its one file schemes/<scheme>/bench.cpp (cmake/posenc_schemes.cmake):
//   POSENC_BENCH_SCHEME(sinusoidal) { ...register "sinusoidal/..." benchmarks...; return "<sizes skipped>"; }
// main.cpp calls every registered function; each returns a one-line account of the sizes it skipped, which goes
// into the "size_policy" context.
using SchemeBenchmarks = std::string (*)();

// The thread counts of the multi-threaded kernels' benchmarks.
inline constexpr std::array<int, 2> kThreadCounts{1, 2};

// Registers one scheme's benchmarks: "<scheme>/<name>", each timed by the wall clock (UseRealTime) in `unit`.
struct Registrar {
  std::string scheme;
  benchmark::TimeUnit unit = benchmark::kMillisecond;

  template <class Fn>
  benchmark::internal::Benchmark* add(const std::string& name, Fn&& fn) const {
    const std::string full = scheme + "/" + name;
    auto* b = benchmark::RegisterBenchmark(full.c_str(), std::forward<Fn>(fn));
    b->UseRealTime()->Unit(unit);
    return b;
  }
  // `name` at `args` and each thread count of kThreadCounts: ArgNames(names..., "threads").
  template <class Fn>
  benchmark::internal::Benchmark* per_thread(const std::string& name, std::vector<std::string> names,
                                             const std::vector<std::int64_t>& args, Fn&& fn) const {
    auto* b = add(name, std::forward<Fn>(fn));
    names.push_back("threads");
    b->ArgNames(names);
    std::vector<std::int64_t> a(args.size() + 1);
    std::copy(args.begin(), args.end(), a.begin());
    for (int t : kThreadCounts) {
      a.back() = t;
      b->Args(a);
    }
    return b;
  }
};
bool add_scheme_benchmarks(const char* scheme, SchemeBenchmarks);
std::string register_all_benchmarks();  // "scheme: sizes skipped; ..."

}  // namespace posenc_bench

#define POSENC_BENCH_SCHEME(name)                                                                   \
  static std::string posenc_bench_register_##name();                                                 \
  [[maybe_unused]] static const bool posenc_bench_registered_##name =                                \
      ::posenc_bench::add_scheme_benchmarks(#name, &posenc_bench_register_##name);                   \
  static std::string posenc_bench_register_##name()
