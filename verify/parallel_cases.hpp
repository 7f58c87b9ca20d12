// verify/parallel_cases.hpp — the parallel loop of every `posenc check` scan and measurement.
//
// An exception that leaves an OpenMP parallel region terminates the process (std::terminate), so an oracle's
// posenc::Error or a budget row's std::logic_error raised while checking one entry would kill the user's
// `posenc check` (and any host that calls the check library) instead of reaching the error handler. parallel_cases
// runs body(i) for i in [0, count) on `threads` OpenMP threads (dynamic schedule, `chunk` iterations at a time),
// stops handing out work after the first exception, and rethrows that exception on the calling thread.
#pragma once

#include <omp.h>

#include <atomic>
#include <cstdint>
#include <exception>

namespace posenc::verify {

template <class Body>
void parallel_cases(int threads, std::int64_t count, int chunk, Body&& body) {
  std::exception_ptr first;
  std::atomic<bool> failed{false};
#pragma omp parallel for num_threads(threads) schedule(dynamic, chunk)
  for (std::int64_t i = 0; i < count; ++i) {
    if (failed.load(std::memory_order_relaxed)) continue;
    try {
      body(i);
    } catch (...) {
#pragma omp critical(posenc_parallel_cases)
      if (!first) first = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace posenc::verify
