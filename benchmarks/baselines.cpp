// benchmarks/baselines.cpp — see baselines.hpp.
#include "baselines.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "memory_kernels.hpp"

namespace posenc_bench {
namespace {

constexpr unsigned char kPattern = 0x3F;  // non-zero bytes: 0x3F3F3F3F is the float 0.747...

template <bool NonTemporal>
void parallel_fill(void* dst, std::size_t bytes, int threads) {
  auto* base = static_cast<unsigned char*>(dst);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto nt = static_cast<std::size_t>(omp_get_num_threads());
    // Contiguous chunks, rounded to cache lines so no line is written by two threads.
    const std::size_t chunk = (bytes / nt + 63) & ~std::size_t{63};
    const std::size_t begin = std::min(t * chunk, bytes);
    const std::size_t end = t + 1 == nt ? bytes : std::min(begin + chunk, bytes);
    fill_bytes(base + begin, end - begin, kPattern, NonTemporal);
  }
}

// The loop itself, written as a user writes it. The element type decides the arithmetic: float32 angle
// and sinf/cosf, or double angle and sin/cos. It is not vectorised (glibc's vector sin needs -ffast-math),
// which is exactly the point of this baseline: it is what a straightforward C++ port runs.
// OpenMP static over rows with the requested thread count: the same parallel decomposition posenc uses
// for its tables, so the threads:2 comparison measures the per-element work, not the threading.
template <class T>
void plainloop(std::span<const T> inv_freq, std::size_t rows, std::size_t d, T* out, int threads) {
  const std::size_t h = d / 2;
  const auto n = static_cast<std::ptrdiff_t>(rows);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::ptrdiff_t p = 0; p < n; ++p) {
    T* row = out + static_cast<std::size_t>(p) * d;
    const T fp = static_cast<T>(p);
    for (std::size_t k = 0; k < h; ++k) {
      const T angle = fp * inv_freq[k];
      row[2 * k] = std::sin(angle);
      row[2 * k + 1] = std::cos(angle);
    }
  }
}

template <class T>
void parallel_rmw(T* x, std::size_t n, T a, T b, int threads) {
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto nt = static_cast<std::size_t>(omp_get_num_threads());
    constexpr std::size_t kLine = 64 / sizeof(T);  // contiguous chunks, whole cache lines per thread
    const std::size_t chunk = (n / nt + kLine - 1) / kLine * kLine;
    const std::size_t begin = std::min(t * chunk, n);
    const std::size_t end = t + 1 == nt ? n : std::min(begin + chunk, n);
    rmw(x + begin, end - begin, a, b);
  }
}

// HF's rotation, the way a user ports it: the angle in T, one std::cos and one std::sin per token and pair
// (computed once per token, reused for every head), then the half-split rotation of every head.
template <class T>
void plainloop_rope(std::span<const T> inv_freq, std::span<const std::int64_t> positions, std::size_t heads, T* x,
                    int threads) {
  const std::size_t h = inv_freq.size(), d = 2 * h;
  const auto n = static_cast<std::ptrdiff_t>(positions.size());
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<T> cs(2 * h);
    T* c = cs.data();
    T* s = c + h;
#pragma omp for schedule(static)
    for (std::ptrdiff_t t = 0; t < n; ++t) {
      const T fp = static_cast<T>(positions[static_cast<std::size_t>(t)]);
      for (std::size_t k = 0; k < h; ++k) {
        const T angle = fp * inv_freq[k];
        c[k] = std::cos(angle);
        s[k] = std::sin(angle);
      }
      T* token = x + static_cast<std::size_t>(t) * heads * d;
      for (std::size_t hd = 0; hd < heads; ++hd) {
        T* q = token + hd * d;
        for (std::size_t k = 0; k < h; ++k) {
          const T x1 = q[k], x2 = q[k + h];
          q[k] = x1 * c[k] - x2 * s[k];
          q[k + h] = x2 * c[k] + x1 * s[k];
        }
      }
    }
  }
}

struct Slot {
  void* ptr = nullptr;
  std::size_t capacity = 0;
};
std::array<Slot, 4> g_slots;

constexpr std::size_t kMiB = std::size_t{1} << 20;

}  // namespace

void stream_store(void* dst, std::size_t bytes, int threads) { parallel_fill<true>(dst, bytes, threads); }
void plain_store(void* dst, std::size_t bytes, int threads) { parallel_fill<false>(dst, bytes, threads); }

const char* store_isa() noexcept { return memory_target(); }

std::vector<float> plainloop_inv_freq_f32(std::size_t d) {
  std::vector<float> inv(d / 2);
  for (std::size_t k = 0; k < inv.size(); ++k)
    inv[k] = 1.0f / std::pow(10000.0f, static_cast<float>(2 * k) / static_cast<float>(d));
  return inv;
}

std::vector<double> plainloop_inv_freq_f64(std::size_t d) {
  std::vector<double> inv(d / 2);
  for (std::size_t k = 0; k < inv.size(); ++k)
    inv[k] = 1.0 / std::pow(10000.0, static_cast<double>(2 * k) / static_cast<double>(d));
  return inv;
}

void plainloop_table(std::span<const float> inv_freq, std::size_t rows, std::size_t d, float* out, int threads) {
  plainloop(inv_freq, rows, d, out, threads);
}
void plainloop_table(std::span<const double> inv_freq, std::size_t rows, std::size_t d, double* out, int threads) {
  plainloop(inv_freq, rows, d, out, threads);
}

void read_modify_write(float* x, std::size_t n, float a, float b, int threads) { parallel_rmw(x, n, a, b, threads); }
void read_modify_write(double* x, std::size_t n, double a, double b, int threads) {
  parallel_rmw(x, n, a, b, threads);
}

void plainloop_rope_halves(std::span<const float> inv_freq, std::span<const std::int64_t> positions,
                           std::size_t heads, float* x, int threads) {
  plainloop_rope(inv_freq, positions, heads, x, threads);
}
void plainloop_rope_halves(std::span<const double> inv_freq, std::span<const std::int64_t> positions,
                           std::size_t heads, double* x, int threads) {
  plainloop_rope(inv_freq, positions, heads, x, threads);
}

void sgemm_abt(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(k), b, static_cast<int>(k), 0.0f, c,
              static_cast<int>(n));
}

// What the slots may hold together: half the machine's memory. Beyond it the other slots are released first.
static std::size_t scratch_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2
                               : std::size_t{4} << 30;
}

void* scratch(int slot, std::size_t bytes) {
  Slot& s = g_slots.at(static_cast<std::size_t>(slot));
  if (s.ptr != nullptr && s.capacity >= bytes) return s.ptr;
  std::free(s.ptr);
  s = {};
  std::size_t held = 0;
  for (const Slot& o : g_slots) held += o.capacity;
  if (held + bytes > scratch_budget()) release_scratch();
  // Large buffers start on a 2 MiB boundary (huge-page friendly where THP applies); small ones on a page.
  const std::size_t align = bytes >= 2 * kMiB ? 2 * kMiB : 4096;
  const std::size_t size = std::max<std::size_t>((bytes + align - 1) / align * align, align);
  void* p = std::aligned_alloc(align, size);
  if (p == nullptr) {
    std::fprintf(stderr, "posenc_bench: cannot allocate %s for benchmark buffers\n", format_bytes(size).c_str());
    std::abort();
  }
  // Pre-fault: first-touch writes run at ~2 GB/s (DESIGN §5) and must not land in a timed loop.
  auto* bp = static_cast<unsigned char*>(p);
  const auto pages = static_cast<std::ptrdiff_t>(size / 4096);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < pages; ++i) std::memset(bp + i * 4096, 0, 4096);
  s = {p, size};
  return p;
}

void release_scratch() noexcept {
  for (Slot& s : g_slots) {
    std::free(s.ptr);
    s = {};
  }
}

std::string format_bytes(std::size_t bytes) {
  char buf[32];
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0)
    std::snprintf(buf, sizeof buf, "%zu GiB", bytes >> 30);
  else if (bytes >= kMiB && bytes % kMiB == 0)
    std::snprintf(buf, sizeof buf, "%zu MiB", bytes >> 20);
  else if (bytes >= 1024 && bytes % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%zu KiB", bytes >> 10);
  else
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  return buf;
}

}  // namespace posenc_bench
