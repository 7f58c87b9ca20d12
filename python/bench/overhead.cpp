// python/bench/overhead.cpp — the C++ side of the Python module's call overhead (overhead.py runs it): the same
// small table and small check as overhead.py, timed
//   library  the library / checker call alone (posenc::sinusoidal_table; verify::rope::check_cache with the cache
//            already in doubles);
//   driver   the command line's driver in process, inputs and outputs in memory, as the module runs it
//            (cli::run_command under an InProcess: parsing, validation, the result's .npy / JSON in memory).
// Prints one JSON object: {"table": {"library_us", "driver_us"}, "check": {...}}, medians over repeats.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "check.hpp"  // schemes/rope/check.hpp: verify::rope::check_cache
#include "in_process.hpp"
#include "posenc/rope.hpp"
#include "posenc/sinusoidal.hpp"
#include "run.hpp"

namespace {

// Median over 15 repeats of the mean time of `calls` calls, in microseconds.
double median_us(int calls, const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < 15; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls);
  }
  std::nth_element(t.begin(), t.begin() + 7, t.end());
  return t[7];
}

void run_in_memory(const std::vector<std::string>& args, posenc::cli::InProcess& session) {
  session.outputs.clear();
  posenc::cli::InProcessScope scope(session);
  const auto r = posenc::cli::run_command(args);
  if (r.failure != posenc::cli::RunResult::Failure::none) std::fprintf(stderr, "%s\n", r.error.c_str());
}

}  // namespace

int main() {
  namespace cli = posenc::cli;
  // The small table: sinusoidal vaswani, dim 64, positions 0..15 (overhead.py's).
  const posenc::SinusoidalSpec sspec = posenc::vaswani_spec(64);
  std::vector<float> table(16 * 64);
  const double table_lib = median_us(2000, [&] { posenc::sinusoidal_table(sspec, 0, 16, std::span<float>(table)); });
  cli::InProcess session;
  const std::vector<std::string> table_args{"table", "sinusoidal", "--preset", "vaswani", "--dim", "64", "--positions",
                                            "0:16", "--format", "npy", "--out", "<out>"};
  const double table_driver = median_us(200, [&] { run_in_memory(table_args, session); });

  // The small check: rope hf-llama, head_dim 64, hf form, positions 0..15, regime hf, one thread.
  const posenc::RopeSpec rspec = [] {
    posenc::RopeSpec s = posenc::rope_preset("hf-llama", 64);
    s.regime = posenc::RopeRegime::hf;
    return s;
  }();
  std::vector<std::int64_t> positions(16);
  for (int i = 0; i < 16; ++i) positions[static_cast<std::size_t>(i)] = i;
  std::vector<float> cache(2 * 16 * 64);
  posenc::make_plan(rspec).cache(posenc::RopeCacheForm::hf, positions, std::span<float>(cache));
  const std::vector<double> values(cache.begin(), cache.end());
  const posenc::verify::rope::CacheInput in{values, 32, 64, posenc::DType::f32, posenc::RopeCacheForm::hf, positions, {}};
  const double check_lib = median_us(10, [&] { (void)posenc::verify::rope::check_cache(rspec, in, {}, 1); });
  session.arrays["<array>"] = {"<f4", {2, 16, 64}, std::string_view(reinterpret_cast<const char*>(cache.data()),
                                                                    cache.size() * sizeof(float))};
  const std::vector<std::string> check_args{"check", "rope", "--preset", "hf-llama", "--head-dim", "64", "--form", "hf",
                                            "--regime", "hf", "--positions", "0:16", "--threads", "1", "--in",
                                            "<array>", "--format", "json", "--out", "<out>"};
  const double check_driver = median_us(10, [&] { run_in_memory(check_args, session); });
  std::printf("{\"table\": {\"library_us\": %.3f, \"driver_us\": %.3f}, \"check\": {\"library_us\": %.3f, "
              "\"driver_us\": %.3f}}\n", table_lib, table_driver, check_lib, check_driver);
}
