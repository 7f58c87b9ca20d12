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
#pragma once

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

// Call first in main(). May not return (re-executes the program); returns normally otherwise.
void select_blas_kernels(int argc, char** argv);

// Emits the one-time fallback warning if it applies (called by posenc's BLAS entry points).
void warn_if_blas_fallback();

}  // namespace posenc
