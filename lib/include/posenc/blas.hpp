// posenc/blas.hpp — which BLAS kernels posenc runs on, and how it makes sure they are the fast ones.
//
// Debian's OpenBLAS 0.3.21 is built with DYNAMIC_ARCH and picks its kernel set ("core") at load time
// from the CPU id. CPUs newer than the library are not recognised and fall back to an older set
// (Haswell's AVX2 kernels, or Prescott's SSE3 ones, DESIGN.md §5), which costs up to 4x in sgemm.
// OpenBLAS reads OPENBLAS_CORETYPE only while it is being loaded, so the choice must be made before
// the process starts:
//   * posenc's own executables (CLI, benchmarks, property tests) call select_blas_kernels(argv) first
//     thing in main(); when OPENBLAS_CORETYPE is unset and the loaded core is older than the best one
//     the CPU supports, it re-executes the program once with OPENBLAS_CORETYPE set (POSENC_BLAS_AUTO=0
//     turns this off);
//   * a library user who does not call it gets a one-time warning on stderr from the first posenc call
//     that uses BLAS (POSENC_BLAS_QUIET=1 silences it), naming the variable to set;
//   * a user who forces an older core with OPENBLAS_CORETYPE keeps it (their choice), with a one-time
//     note on stderr saying it is older than the CPU supports.
// Address-space limits (ulimit -v): every OpenBLAS worker thread maps a work buffer (kBlasBufferBytes) when it
// starts, retries forever when the mapping fails, and the process's exit waits for it — so under a limit of
// 64-256 MiB every command finished its work and then spun at 100 % forever. select_blas_kernels therefore also
// re-executes with OPENBLAS_NUM_THREADS=1 (whatever POSENC_BLAS_AUTO says) when the limit is below
// kBlasThreadsMinAddressSpace plus two buffers per OpenBLAS thread, and, under any limit, has OpenBLAS take the
// calling thread's buffer at once (a tiny dgemm) when it fits; when it does not fit, prepare_blas() refuses
// every BLAS call with posenc::IoError instead of letting OpenBLAS spin. A thread that first calls BLAS later
// (a library host's) is map-tested once by prepare_blas(), without a guarantee: memory taken between that test
// and the call is not accounted for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace posenc {

struct BlasInfo {
  std::string core;             // openblas_get_corename(), e.g. "Haswell"
  std::string config;           // openblas_get_config()
  int threads = 0;              // openblas_get_num_threads()
  std::string best_core;        // best core this CPU supports: "SkylakeX", "Haswell", "Sandybridge" or "Prescott"
  bool fallback = false;        // core is older than best_core
  bool forced = false;          // OPENBLAS_CORETYPE was set in the environment
};
BlasInfo blas_info();

// OpenBLAS's per-thread work buffer as Debian's 0.3.21 maps it (BUFFER_SIZE 128 MiB plus its alignment slack).
inline constexpr std::size_t kBlasBufferBytes = 134225920;
// Below this address-space limit plus two buffers per OpenBLAS thread, posenc's executables run BLAS single-threaded.
inline constexpr std::uint64_t kBlasThreadsMinAddressSpace = std::uint64_t{1} << 30;

// Call first in main(). May not return (re-executes the program); returns normally otherwise.
void select_blas_kernels(int argc, char** argv);

// Called by posenc's BLAS entry points before they call BLAS: throws posenc::IoError when the address space left
// cannot hold this thread's OpenBLAS work buffer (above), then emits the one-time fallback warning if it applies.
void prepare_blas();

// Emits the one-time fallback warning if it applies.
void warn_if_blas_fallback();

}  // namespace posenc
