// posenc/options.hpp — how a kernel call may use the machine (the same for every scheme).
#pragma once

namespace posenc {

struct TableOptions {
  // Threads (the calling thread and posenc's own workers): 0 means OpenMP's default count
  // (omp_get_max_threads(): OMP_NUM_THREADS or omp_set_num_threads); any request is capped at the number of
  // processors this process may run on (omp_get_num_procs()), and outputs below 2^15 values run on the calling
  // thread. A worker the system refuses to start (thread or memory limits), or a pool busy with another host
  // thread's call, means fewer threads for that call, never an error or an exit. The values computed never
  // depend on the thread count (work is split at fixed block boundaries): the bytes are the same.
  int threads = 0;
  // Non-temporal stores when the output exceeds the private caches (~4 MiB): faster for outputs that go to
  // DRAM, and the values are the same either way.
  bool streaming_stores = true;
};

}  // namespace posenc
