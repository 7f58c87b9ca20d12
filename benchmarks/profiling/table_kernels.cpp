// posenc_profile_tables — the per-pair cost of the table kernels and their ratio to a streaming-store loop of the same
// bytes, measured side by side in one process (reports/profiles/sinusoidal.md quotes it). Not a test, not part of
// the benchmark suite: a harness for profiling by hand, e.g.
//   perf record -e cpu-clock -F 20000 build/benchmarks/profiling/posenc_profile_tables
// (this VM has no hardware counters; cpu-clock sampling works).
#include <immintrin.h>
// GCC 12 passes _mm512_undefined_*() as the merge source of unmasked conversions and warns: a false positive.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "posenc/sinusoidal.hpp"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The memory limit: whole lines written with non-temporal stores, split over `threads` threads.
void stream_store(float* p, std::size_t n, int threads) {
  auto part = [p](std::size_t lo, std::size_t hi) {
    const __m512 v = _mm512_set1_ps(1.0f);
    for (std::size_t i = lo; i < hi; i += 16) _mm512_stream_ps(p + i, v);
    _mm_sfence();
  };
  if (threads == 1) return part(0, n);
  std::thread other(part, 0, n / 2);
  part(n / 2, n);
  other.join();
}

template <class F>
double median_seconds(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double a = now();
    f();
    t.push_back(now() - a);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  // In cache: exact f32 plans, one thread, ns per pair (a pair = one sin and one cos value).
  for (auto [rows, d] : std::vector<std::pair<std::size_t, std::size_t>>{{64, 256}, {512, 256}, {64, 4096}}) {
    std::vector<float> out(rows * d);
    posenc::SinusoidalSpec s;  // Vaswani et al.: interleaved, base 10^4
    s.dim = d;
    const posenc::SinusoidalPlan plan(s);
    const double t = median_seconds(2001, [&] { plan.table(0, rows, std::span<float>(out), {.threads = 1}); });
    std::printf("in cache, exact f32 plan %zu x %zu: %.3f ns per pair\n", rows, d, t * 1e9 / static_cast<double>(rows * d / 2));
  }
  // One-shot calls (the plan's setup in every call), 512 x 256 f32, in a steady loop: mean per call.
  for (int threads : {1, 2}) {
    std::vector<float> out(512 * 256);
    posenc::SinusoidalSpec s;
    s.dim = 256;
    constexpr int kCalls = 20000;
    const double t0 = now();
    for (int r = 0; r < kCalls; ++r) posenc::sinusoidal_table(s, 0, 512, std::span<float>(out), {.threads = threads});
    std::printf("one-shot exact f32 512 x 256, %d thread(s): %.1f us per call\n", threads, (now() - t0) / kCalls * 1e6);
  }
  // DRAM: 512 MiB of f32, exact and emulated (fairseq), against the streaming-store loop, alternately.
  const std::size_t n = std::size_t{128} << 20;
  auto* buf = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  std::memset(buf, 0, n * sizeof(float));
  for (bool emulated : {false, true})
    for (int threads : {1, 2})
      for (std::size_t d : {std::size_t{512}, std::size_t{4096}}) {
        posenc::SinusoidalSpec s = posenc::fairseq_spec(d);
        if (emulated) s.regime = posenc::Regime::emulated;
        const posenc::SinusoidalPlan plan(s);
        const std::size_t rows = n / d;
        std::vector<double> tk, tb;
        for (int r = 0; r < 5; ++r) {
          tb.push_back(median_seconds(1, [&] { stream_store(buf, n, threads); }));
          tk.push_back(median_seconds(1, [&] { plan.table(0, rows, std::span<float>(buf, n), {.threads = threads}); }));
        }
        std::sort(tk.begin(), tk.end());
        std::sort(tb.begin(), tb.end());
        std::printf("DRAM, %s f32 %zu x %zu, %d thread(s): %.1f ms (%.3f ns per pair per thread), stream store %.1f ms, "
                    "ratio %.2f\n",
                    emulated ? "emulated" : "exact", rows, d, threads, tk[2] * 1e3, tk[2] * 1e9 * threads / static_cast<double>(n / 2),
                    tb[2] * 1e3, tb[2] / tk[2]);
      }
  std::free(buf);
}
