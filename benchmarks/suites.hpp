// benchmarks/suites.hpp — what every scheme's benchmark file shares: the size policy and its registration hook.
//
// Naming contract (parsed by reports/): "<scheme>/<family>/<variant>/<key>:<value>/<key>:<value>...", e.g.
// "sinusoidal/table/exact_f32/L:4096/d:512/threads:2". Keys come from Google Benchmark's ArgNames. Every benchmark
// measures wall-clock time (UseRealTime: the kernels are multi-threaded); main.cpp drops the
// "/real_time" suffix Google Benchmark would append, so names are exactly the contract.
#pragma once

#include <cstddef>
#include <string>

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
bool add_scheme_benchmarks(const char* scheme, SchemeBenchmarks);
std::string register_all_benchmarks();  // "scheme: sizes skipped; ..."

}  // namespace posenc_bench

#define POSENC_BENCH_SCHEME(name)                                                                   \
  static std::string posenc_bench_register_##name();                                                 \
  [[maybe_unused]] static const bool posenc_bench_registered_##name =                                \
      ::posenc_bench::add_scheme_benchmarks(#name, &posenc_bench_register_##name);                   \
  static std::string posenc_bench_register_##name()
