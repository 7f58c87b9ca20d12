// lib/src/core/streaming.hpp — copying finished rows to their destination.
//
// Why: a table larger than the caches is write-only traffic. Ordinary stores first read each
// destination line (read-for-ownership) and reach ~10 GB/s per core here; non-temporal (streaming)
// stores skip that read and reach ~24 GB/s (DESIGN.md §5). For outputs that fit in cache, ordinary
// stores are better: the data stays close to the consumer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif

namespace posenc::core {

// Outputs above this size are streamed (larger than the private L2s of both cores together).
inline bool worth_streaming(std::size_t bytes) { return bytes > (std::size_t{4} << 20); }

namespace stream_impl {
inline bool aligned64(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 63) == 0; }

// Streams n bytes from src to a 64-byte aligned dst; n a multiple of 64.
inline void stream_lines(char* dst, const char* src, std::size_t n) {
#if defined(__AVX512F__)
  for (std::size_t i = 0; i < n; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), _mm512_loadu_si512(src + i));
#elif defined(__AVX__)
  for (std::size_t i = 0; i < n; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
#elif defined(__SSE2__)
  for (std::size_t i = 0; i < n; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
#else
  std::memcpy(dst, src, n);
#endif
}
}  // namespace stream_impl

// Copies n elements of a finished row; whole aligned cache lines are streamed when `stream`.
template <class T>
void store_row(T* dst, const T* src, std::size_t n, bool stream) {
  const std::size_t bytes = n * sizeof(T);
  if (!stream || bytes < 256) {
    std::memcpy(dst, src, bytes);
    return;
  }
  char* d = reinterpret_cast<char*>(dst);
  const char* s = reinterpret_cast<const char*>(src);
  const std::size_t head = (64 - (reinterpret_cast<std::uintptr_t>(d) & 63)) & 63;
  std::memcpy(d, s, head);
  const std::size_t body = (bytes - head) & ~std::size_t{63};
  stream_impl::stream_lines(d + head, s + head, body);
  std::memcpy(d + head + body, s + head + body, bytes - head - body);
}

template <class T>
void fill_zero(T* dst, std::size_t n, bool) {
  std::memset(dst, 0, n * sizeof(T));
}

// Orders streamed stores before anything that follows (they are weakly ordered).
inline void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace posenc::core
