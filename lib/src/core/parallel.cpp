// lib/src/core/parallel.cpp — posenc's worker threads (see parallel.hpp for why they are not OpenMP's).
//
// One pool per process, created on first use and never destroyed (its idle workers sleep in a futex and end
// with the process; destroying it at exit would race with any static destructor that still calls posenc).
// One call at a time uses it: the call that holds `busy` publishes (fn, ctx, used), bumps `generation` and
// runs share 0 itself; every worker wakes, runs its share if its index is below `used`, and counts down
// `remaining`. The next call cannot start before every worker has counted down, so no worker ever reads the
// state of two calls mixed. A call that finds the pool busy (another host thread, or a body that calls posenc)
// runs all shares on its own thread, in order. After fork() the child gets a fresh, empty pool.
#include "core/parallel.hpp"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace posenc::core {
namespace {

struct Pool {
  std::mutex busy;
  std::vector<std::thread> workers;  // changed only by the holder of `busy`
  std::atomic<std::uint32_t> generation{0};
  std::atomic<int> remaining{0};
  void (*fn)(void*, int, int) = nullptr;  // the current call's, written before `generation` is bumped
  void* ctx = nullptr;
  int used = 0;
};

// A worker that has just finished a share polls for the next call for up to kSpin before it sleeps: a call that
// follows soon (a one-shot table call's setup is ~60 us) then finds it awake, where waking a sleeping thread
// costs tens of microseconds on a virtual machine. Far shorter than libgomp's default spinning, which is what
// slowed a following OpenBLAS call.
constexpr auto kSpin = std::chrono::microseconds(200);

template <class T>
void await_change(const std::atomic<T>& a, T old) noexcept {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0; a.load(std::memory_order_acquire) == old; ++i) {
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return a.wait(old, std::memory_order_acquire);
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

void worker(Pool* p, int index, std::uint32_t seen) noexcept {
  for (;;) {
    await_change(p->generation, seen);
    seen = p->generation.load(std::memory_order_acquire);
    if (index < p->used) p->fn(p->ctx, index, p->used);
    if (p->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) p->remaining.notify_all();
  }
}

Pool* g_pool = nullptr;

Pool* pool() noexcept {
  static const bool ready = [] {
    g_pool = new (std::nothrow) Pool;
    pthread_atfork(nullptr, nullptr, [] { g_pool = new (std::nothrow) Pool; });  // the parent's workers are gone
    return true;
  }();
  (void)ready;
  return g_pool;
}

void run_serially(int threads, void (*fn)(void*, int, int), void* ctx) noexcept {
  for (int t = 0; t < threads; ++t) fn(ctx, t, threads);
}

}  // namespace

void run_threads(int threads, void (*fn)(void*, int, int), void* ctx) noexcept {
  Pool* p = threads > 1 ? pool() : nullptr;
  if (p == nullptr) return run_serially(std::max(threads, 1), fn, ctx);
  std::unique_lock lock(p->busy, std::try_to_lock);
  if (!lock.owns_lock()) return run_serially(threads, fn, ctx);
  const auto want = static_cast<std::size_t>(threads - 1);
  if (p->workers.size() < want) {
    try {
      p->workers.reserve(want);
      while (p->workers.size() < want)  // a thread the system refuses (EAGAIN, no memory) ends the growth
        p->workers.emplace_back(worker, p, static_cast<int>(p->workers.size()) + 1,
                                p->generation.load(std::memory_order_relaxed));
    } catch (...) {
    }
  }
  const int workers = static_cast<int>(p->workers.size());
  if (workers == 0) return run_serially(threads, fn, ctx);
  p->fn = fn;
  p->ctx = ctx;
  p->used = 1 + std::min(threads - 1, workers);
  p->remaining.store(workers, std::memory_order_relaxed);
  p->generation.fetch_add(1, std::memory_order_release);
  p->generation.notify_all();
  fn(ctx, 0, p->used);
  for (int r; (r = p->remaining.load(std::memory_order_acquire)) != 0;) await_change(p->remaining, r);
}

}  // namespace posenc::core
