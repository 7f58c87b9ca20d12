// benchmarks/memory_kernels.cpp — the memory baselines' inner loops (baselines.hpp: stream_store, plain_store,
// read_modify_write) as Highway code, compiled for every target and run on the best one the CPU has (Highway's own
// choice, whatever POSENC_SIMD caps posenc's kernels to): the limit a kernel is stated against is the machine's,
// not the build's, so a packaged build (-DPOSENC_NATIVE=OFF) measures against the same limit as a native one.
// Compiled without POSENC_ARCH_FLAGS (benchmarks/CMakeLists.txt), as lib/'s kernels are, so every target is in it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "memory_kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "memory_kernels.hpp"

HWY_BEFORE_NAMESPACE();
namespace posenc_bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// n bytes of `pattern` at p: ordinary stores up to the vector alignment and for the tail, whole aligned vectors
// (four a step) in between; Stream: non-temporal vector stores, fenced before returning (a table's producer must
// make its bytes visible to other threads).
template <bool Stream>
void Fill(unsigned char* p, std::size_t n, unsigned char pattern) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t N = hn::Lanes(d);
  const std::size_t head = std::min(n, (N - reinterpret_cast<std::uintptr_t>(p) % N) % N);
  std::memset(p, pattern, head);
  p += head;
  n -= head;
  const auto v = hn::Set(d, pattern);
  auto put = [&](unsigned char* q) {
    if constexpr (Stream) hn::Stream(v, d, q);
    else hn::Store(v, d, q);
  };
  for (; n >= 4 * N; p += 4 * N, n -= 4 * N) put(p), put(p + N), put(p + 2 * N), put(p + 3 * N);
  for (; n >= N; p += N, n -= N) put(p);
  std::memset(p, pattern, n);
  if constexpr (Stream) hwy::FlushStream();
}
void FillStream(unsigned char* p, std::size_t n, unsigned char pattern) { Fill<true>(p, n, pattern); }
void FillPlain(unsigned char* p, std::size_t n, unsigned char pattern) { Fill<false>(p, n, pattern); }

// p[i] = p[i] a + b: scalar up to the vector alignment (all of it for misaligned elements) and for the tail, aligned
// vector loads, multiply-adds and stores (four vectors a step) in between.
template <class T>
void Rmw(T* p, std::size_t n, T a, T b) {
  const hn::ScalableTag<T> d;
  const std::size_t N = hn::Lanes(d), bytes = N * sizeof(T);
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::size_t head = addr % sizeof(T) != 0 ? n : std::min(n, (bytes - addr % bytes) % bytes / sizeof(T));
  for (std::size_t i = 0; i < head; ++i) p[i] = p[i] * a + b;
  p += head;
  n -= head;
  const auto va = hn::Set(d, a), vb = hn::Set(d, b);
  std::size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N)
    for (std::size_t j = 0; j < 4; ++j) {
      T* q = p + i + j * N;
      hn::Store(hn::MulAdd(hn::Load(d, q), va, vb), d, q);
    }
  for (; i < n; ++i) p[i] = p[i] * a + b;
}
void RmwF32(float* p, std::size_t n, float a, float b) { Rmw(p, n, a, b); }
void RmwF64(double* p, std::size_t n, double a, double b) { Rmw(p, n, a, b); }

const char* Target() { return hwy::TargetName(HWY_TARGET); }

}  // namespace posenc_bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc_bench {
HWY_EXPORT(FillStream);
HWY_EXPORT(FillPlain);
HWY_EXPORT(RmwF32);
HWY_EXPORT(RmwF64);
HWY_EXPORT(Target);

void fill_bytes(unsigned char* p, std::size_t n, unsigned char pattern, bool stream) {
  if (stream) HWY_DYNAMIC_DISPATCH(FillStream)(p, n, pattern);
  else HWY_DYNAMIC_DISPATCH(FillPlain)(p, n, pattern);
}
void rmw(float* p, std::size_t n, float a, float b) { HWY_DYNAMIC_DISPATCH(RmwF32)(p, n, a, b); }
void rmw(double* p, std::size_t n, double a, double b) { HWY_DYNAMIC_DISPATCH(RmwF64)(p, n, a, b); }
const char* memory_target() { return HWY_DYNAMIC_DISPATCH(Target)(); }
}  // namespace posenc_bench
#endif  // HWY_ONCE
