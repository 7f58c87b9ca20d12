// lib/src/core/parallel.hpp — how elementwise kernels split work over threads.
//
// Rules every kernel follows (so a library call can never terminate or hang its host):
//  * the thread count is capped at the number of processors (TableOptions::threads documents it);
//  * everything that can throw (allocation of per-thread scratch) happens before the parallel region; the
//    bodies run inside it are noexcept;
//  * work is split statically over blocks, so which thread computes a value never changes the value.
//
// The threads are posenc's own (parallel.cpp), not OpenMP's: libgomp ends the process ("Thread creation
// failed") when it cannot start a thread, and its idle threads spin on both cores for a while after each
// region, which halves the speed of an OpenBLAS call that follows (RoPE scores). posenc's workers sleep in a
// futex when idle, and a thread the system refuses to create only means fewer threads for that call (the values
// are the same bit for bit, by the rule above).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "posenc/options.hpp"

namespace posenc::core {

// Threads for `elements` outputs: 1 below 2^15 (starting threads costs more than it saves), else the
// requested count (0: OpenMP's default, omp_get_max_threads(), i.e. OMP_NUM_THREADS or omp_set_num_threads),
// capped at the number of processors this process may run on.
inline int thread_count(const TableOptions& o, std::size_t elements) {
  if (elements < (std::size_t{1} << 15)) return 1;
  const int procs = std::max(1, omp_get_num_procs());
  const int want = o.threads > 0 ? o.threads : omp_get_max_threads();
  return std::clamp(want, 1, procs);
}

// fn(ctx, t, used) for t in [0, used), concurrently, used <= threads (fewer when the system refuses to start a
// thread, or when the pool is busy with another call: a concurrent or nested call runs on its caller's thread
// alone). Returns after every call has returned. fn must not throw.
void run_threads(int threads, void (*fn)(void* ctx, int t, int used), void* ctx) noexcept;

// body(thread, i) for i in [0, n), split statically into contiguous ranges over at most `threads` threads;
// body must not throw.
template <class Body>
void parallel_for(std::size_t n, int threads, Body&& body) {
  if (threads <= 1 || n <= 1) {  // no threads for small outputs: their fixed cost would dominate them
    for (std::size_t i = 0; i < n; ++i) body(0, i);
    return;
  }
  struct Ctx {
    std::size_t n;
    Body* body;
  } ctx{n, &body};
  run_threads(
      static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads), n)),
      [](void* p, int t, int used) {
        const auto& c = *static_cast<Ctx*>(p);
        const auto u = static_cast<std::size_t>(used), tt = static_cast<std::size_t>(t);
        const std::size_t lo = c.n / u * tt + std::min(tt, c.n % u), hi = lo + c.n / u + (tt < c.n % u ? 1 : 0);
        for (std::size_t i = lo; i < hi; ++i) (*c.body)(t, i);
      },
      &ctx);
}

// The blocks of [first, first + count) whose starts are multiples of B (the first and last may be partial):
// body(thread, anchor, lo, hi) for each, lo..hi (inclusive) the positions of the block that are in range.
template <class Body>
void for_each_block(std::int64_t first, std::size_t count, std::size_t B, int threads, Body&& body) {
  const auto b = static_cast<std::int64_t>(B);
  auto floor_div = [](std::int64_t a, std::int64_t d) { return a / d - ((a % d != 0) && ((a < 0) != (d < 0))); };
  const std::int64_t last = first + static_cast<std::int64_t>(count) - 1;
  const std::int64_t a0 = floor_div(first, b) * b;
  const auto blocks = static_cast<std::size_t>((floor_div(last, b) * b - a0) / b) + 1;
  parallel_for(blocks, threads, [&](int t, std::size_t i) {
    const std::int64_t pa = a0 + static_cast<std::int64_t>(i) * b;
    body(t, pa, std::max(pa, first), std::min(pa + b - 1, last));
  });
}

}  // namespace posenc::core
