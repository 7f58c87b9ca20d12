// posenc/options.hpp — how a kernel call may use the machine (the same for every scheme).
#pragma once

namespace posenc {

struct TableOptions {
  // OpenMP threads: 0 means OpenMP's default (omp_get_max_threads()); any request is capped at the number of
  // processors (omp_get_num_procs()), and outputs below 2^15 values run on the calling thread. The values
  // computed never depend on the thread count (work is split at fixed block boundaries).
  int threads = 0;
  // Non-temporal stores when the output exceeds the private caches (~4 MiB): faster for outputs that go to
  // DRAM, and the values are the same either way.
  bool streaming_stores = true;
};

}  // namespace posenc
