// benchmarks/baselines.hpp — the in-run baselines every kernel family is stated against (DESIGN.md §5),
// and the benchmark-side buffer cache.
//
// Baselines
//   stream_store / plain_store: the memory limit for writing B bytes. Streaming (non-temporal) stores
//     bypass the caches (~24 GB/s per core to DRAM on this machine class, vs ~10 GB/s for ordinary
//     stores, which must first read the line: write-allocate). Ordinary stores are the limit for a
//     cache-resident output (<= 1 MiB stays in the private L2); streaming stores the limit for a DRAM one.
//   plainloop_table: the loop a user writes (PyTorch-style: float32 inv_freq, float32 angle, one std::sin
//     or std::cos per element), interleaved layout like the vaswani preset.
//   read_modify_write: the memory limit of an in-place kernel (RoPE's rotation): the same bytes read and
//     written back, with one fused multiply-add per element.
//   plainloop_rope_halves: the rotary loop a user writes (HF style: float32 angle, std::cos / std::sin).
//   sgemm_abt: cblas_sgemm of a given shape, so BLAS-backed kernels are stated as a ratio to a plain GEMM.
//
// The plain loops are compiled with the same POSENC_ARCH_FLAGS as lib/; the memory baselines' loops are Highway
// code on the best SIMD target the CPU has (memory_kernels.cpp), whatever the build's flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace posenc_bench {

// Write `bytes` bytes at dst (any alignment) with non-temporal stores, split in contiguous chunks over
// `threads` OpenMP threads (the same split a table's rows get); whole vectors of the CPU's best target.
void stream_store(void* dst, std::size_t bytes, int threads);
// The same with ordinary vector stores (no non-temporal hint).
void plain_store(void* dst, std::size_t bytes, int threads);
// The target the memory baselines run on: Highway's name ("AVX3", "AVX2", "NEON", ...).
const char* store_isa() noexcept;

// PyTorch-style inverse frequencies of the paper rule, in the user's arithmetic:
//   f32: 1.0f / powf(10000.0f, (float)(2k) / (float)d)    (torch: 1/(10000 ** (arange(0,d,2).float()/d)))
//   f64: 1.0  / pow (10000.0,  (double)(2k) / (double)d)
std::vector<float> plainloop_inv_freq_f32(std::size_t d);
std::vector<double> plainloop_inv_freq_f64(std::size_t d);

// out[p*d + 2k] = sin(p * inv_freq[k]), out[p*d + 2k + 1] = cos(p * inv_freq[k]) for p = 0..rows-1,
// angle formed in the element type, one std::sin / std::cos per element, OpenMP static over rows with
// `threads` threads. d must be even and inv_freq.size() == d/2.
void plainloop_table(std::span<const float> inv_freq, std::size_t rows, std::size_t d, float* out, int threads);
void plainloop_table(std::span<const double> inv_freq, std::size_t rows, std::size_t d, double* out, int threads);

// ---- in-place baselines (RoPE) ---------------------------------------------------------------------
// x[i] = x[i] * a + b for i < n, in place: the read-modify-write limit of an in-place kernel over the same
// bytes (every line read once and written back once; 2 * n * sizeof(T) bytes of traffic). Contiguous chunks
// (cache-line rounded) over `threads` OpenMP threads, the split stream_store uses; vector multiply-adds of the
// CPU's best target. a and b are run-time values so the compiler cannot fold the pass away
// (a = -1, b = 0 flips the sign: after N passes x is exactly (-1)^N x).
void read_modify_write(float* x, std::size_t n, float a, float b, int threads);
void read_modify_write(double* x, std::size_t n, double a, double b, int threads);

// The rotary loop a user writes (HF LlamaRotaryEmbedding + apply_rotary_pos_emb, half-split pairs, full
// rotary), in place on a dense [tokens][heads][head_dim] tensor, tokens = positions.size(), head_dim =
// 2 * inv_freq.size(). Per token: angle = (T)positions[t] * inv_freq[k] in T, c = std::cos(angle),
// s = std::sin(angle), once per token and pair and reused for every head (as HF broadcasts its [T][d] cos/sin
// over heads); then per head y_k = x_k c - x_{k+h} s, y_{k+h} = x_{k+h} c + x_k s. Not vectorised beyond what
// the compiler does with the plain loop. OpenMP static over tokens with `threads` threads.
void plainloop_rope_halves(std::span<const float> inv_freq, std::span<const std::int64_t> positions,
                           std::size_t heads, float* x, int threads);
void plainloop_rope_halves(std::span<const double> inv_freq, std::span<const std::int64_t> positions,
                           std::size_t heads, double* x, int threads);

// C (m x n) = A (m x k) * B^T (B is n x k), row-major, single precision, through cblas_sgemm with the
// BLAS library's own threading.
void sgemm_abt(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c);

// ---- buffers --------------------------------------------------------------------------------------
// A pre-faulted (every page written once), 64-byte aligned buffer of at least `bytes` bytes for `slot`
// (0..3), kept between calls so the repetitions of one benchmark do not pay first-touch faults (~2 GB/s)
// again. A slot only grows (re-allocated when too small): the repetitions run in random interleaved order, so
// a DRAM-sized case and a cache-sized one alternate, and a buffer released for the small one had to be
// pre-faulted again for the next large one (seconds per GiB, each time). When the
// slots would hold more than half the machine's memory, the others are released first. Contents are unspecified.
void* scratch(int slot, std::size_t bytes);
template <class T>
std::span<T> scratch_span(int slot, std::size_t count) {
  return {static_cast<T*>(scratch(slot, count * sizeof(T))), count};
}
void release_scratch() noexcept;

// "512 KiB", "1 GiB", ...
std::string format_bytes(std::size_t bytes);

}  // namespace posenc_bench
