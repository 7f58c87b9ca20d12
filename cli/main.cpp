// posenc — command-line front end of the posenc library.
//
// Every failure is one line on stderr, "posenc: error: <message>", and a non-zero status:
//   2  usage and argument errors (CLI11 parse errors, posenc::Error, malformed flag values)
//   1  everything else (posenc::IoError, out of memory, ...), and `check` / `identify` whose verdict is "fail"
// Output files are written to a temporary file and renamed on success (cli/output.hpp), so a failed
// command leaves no partial file. The parsing and running is cli/run.cpp's, shared with the Python module.
#include <cstdio>
#include <string>
#include <vector>

#include "posenc/blas.hpp"
#include "run.hpp"

int main(int argc, char** argv) {
  posenc::select_blas_kernels(argc, argv);  // may re-execute with OPENBLAS_CORETYPE set (posenc/blas.hpp)
  const posenc::cli::RunResult r = posenc::cli::run_command(std::vector<std::string>(argv + 1, argv + argc));
  std::fputs(r.out.c_str(), stdout);
  std::fputs(r.err.c_str(), stderr);
  if (r.failure != posenc::cli::RunResult::Failure::none) {
    std::fflush(stdout);
    std::fprintf(stderr, "posenc: error: %s\n", r.error.c_str());
  }
  return r.status;
}
