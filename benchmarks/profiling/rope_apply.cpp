// posenc_profile_rope — RoPE apply in DRAM ([32768][32][128] f32, 512 MiB) against a read-modify-write loop and
// against the bare rotation pattern (the exact kernel's loads, arithmetic and stores with fixed coefficients, no
// per-token work), side by side in one process (reports/profiles/rope.md quotes it). A harness for profiling by
// hand, e.g. perf record -e cpu-clock -F 20000 build/benchmarks/profiling/posenc_profile_rope 1
#include <immintrin.h>
// GCC 12 passes _mm512_undefined_*() as the merge source of unmasked conversions and warns: a false positive.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "posenc/rope.hpp"

namespace {

constexpr std::size_t kTokens = 32768, kHeads = 32, kDim = 128, kN = kTokens * kHeads * kDim;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// x = -x over the buffer: the memory limit of an in-place update (one thread).
__attribute__((noinline)) void rmw(float* x) {
  const __m512 m = _mm512_set1_ps(-1.0f);
  for (std::size_t i = 0; i < kN; i += 16) _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), m));
}

// The exact halves kernel's pattern: per head, pairs (k, k + 64) widened to double, y = x c -+ x' s, rounded back;
// the same head of the next token prefetched for writing (as lib/src/core/pair_rotation.cpp does).
__attribute__((noinline)) void pattern(float* x, const double* c, const double* s) {
  for (std::size_t tok = 0; tok < kTokens; ++tok)
    for (std::size_t hd = 0; hd < kHeads; ++hd) {
      float* v = x + (tok * kHeads + hd) * kDim;
      if (tok + 1 < kTokens)
        for (std::size_t b = 0; b < kDim * sizeof(float); b += 64)
          __builtin_prefetch(reinterpret_cast<const char*>(v + kHeads * kDim) + b, 1, 3);
      for (std::size_t k = 0; k < kDim / 2; k += 8) {
        const __m512d C = _mm512_loadu_pd(c + k), S = _mm512_loadu_pd(s + k);
        const __m512d a = _mm512_cvtps_pd(_mm256_loadu_ps(v + k)), b = _mm512_cvtps_pd(_mm256_loadu_ps(v + kDim / 2 + k));
        _mm256_storeu_ps(v + k, _mm512_cvtpd_ps(_mm512_fmsub_pd(a, C, _mm512_mul_pd(b, S))));
        _mm256_storeu_ps(v + kDim / 2 + k, _mm512_cvtpd_ps(_mm512_fmadd_pd(b, C, _mm512_mul_pd(a, S))));
      }
    }
}

}  // namespace

int main() {
  auto* x = static_cast<float*>(std::aligned_alloc(64, kN * sizeof(float)));
  for (std::size_t i = 0; i < kN; ++i) x[i] = static_cast<float>(i % 1000) * 1e-3f;
  const std::vector<double> c(kDim / 2, 0.6), s(kDim / 2, 0.8);
  std::vector<std::int64_t> positions(kTokens);
  std::iota(positions.begin(), positions.end(), 0);
  const auto view = posenc::dense_rope_tensor(std::span<float>(x, kN), kTokens, kHeads, kDim);
  for (const char* preset : {"exact halves", "hf-llama", "ggml-normal"}) {
    const posenc::RopeSpec spec = std::string(preset) == "exact halves"
        ? posenc::RopeSpec{.layout = posenc::Layout::halves, .regime = posenc::RopeRegime::exact, .head_dim = kDim, .rotary_dim = kDim}
        : posenc::rope_preset(preset, kDim);
    const posenc::RopePlan plan(spec);
    double sr = 0, sp = 0, sk = 0;
    constexpr int kReps = 5;
    for (int r = 0; r < kReps; ++r) {
      const double t0 = now();
      rmw(x);
      const double t1 = now();
      pattern(x, c.data(), s.data());
      const double t2 = now();
      plan.apply(view, positions, posenc::RopeDirection::forward, {.threads = 1});
      const double t3 = now();
      plan.apply(view, positions, posenc::RopeDirection::inverse, {.threads = 1});  // keep the values bounded
      sr += t1 - t0, sp += t2 - t1, sk += t3 - t2;
    }
    std::printf("%-12s 1 thread: RMW %.1f ms, rotation pattern %.1f ms (%.2f x RMW speed), posenc apply %.1f ms "
                "(%.2f x RMW speed)\n",
                preset, sr / kReps * 1e3, sp / kReps * 1e3, sr / sp, sk / kReps * 1e3, sr / sk);
  }
  std::free(x);
}
