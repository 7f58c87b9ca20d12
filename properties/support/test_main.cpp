// main() of the property program: applies --threads=N, picks the fast BLAS kernels (may re-execute the program, see
// posenc/blas.hpp), refuses to run if the claims ledger names a test GoogleTest does not know or the budget
// table is inconsistent, runs GoogleTest, then writes the ledger as JSON when POSENC_RESULTS_DIR is set (not for a test listing).
#include <cblas.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "verify/budget.hpp"
#include "claims.hpp"
#include "posenc/blas.hpp"
#include "posenc/error.hpp"
#include "posenc/simd.hpp"

int main(int argc, char** argv) {
  posenc::select_blas_kernels(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  // --threads=N (what ctest passes: two entries run at once on two cores): OpenMP and OpenBLAS threads.
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      const int n = std::atoi(argv[i] + 10);
      if (n < 1 || n > 1024) {
        std::fprintf(stderr, "posenc: --threads=%s is out of range; accepted: an integer in [1, 1024]\n", argv[i] + 10);
        return 2;
      }
      omp_set_num_threads(n);
      openblas_set_num_threads(n);
    }
  // POSENC_SIMD (ctest's properties.Simd.<target> entries): the claims on that SIMD target; a target this build or
  // CPU does not have skips the program (exit 77, ctest's SKIP_RETURN_CODE), saying so.
  try {
    posenc::set_simd_target_from_environment();
  } catch (const posenc::Error& e) {
    std::fprintf(stderr, "posenc: skipped: %s\n", e.what());
    return 77;
  }
  if (const char* simd = std::getenv("POSENC_SIMD"); simd != nullptr && *simd != '\0')
    std::fprintf(stderr, "posenc: SIMD target %s\n", posenc::simd_target().c_str());
  try {
    (void)posenc::test::budget_rows();  // builds the table: one row per key of every scheme
    const auto missing = posenc::test::claims_without_tests();
    for (const auto& m : missing) std::fprintf(stderr, "posenc: claim without a test: %s\n", m.c_str());
    if (!missing.empty()) return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posenc: inconsistent claims ledger or budget table: %s\n", e.what());
    return 3;
  }
  const int rc = RUN_ALL_TESTS();
  // A listing runs no test: ctest's test discovery lists the tests at build time, and a ledger written then
  // (every claim "not run") would replace the main job's when a build runs with POSENC_RESULTS_DIR set (the
  // sanitizer build of the main job's reliability stage did exactly that).
  if (::testing::GTEST_FLAG(list_tests)) return rc;
  std::string program = argc > 0 ? argv[0] : "posenc_test";
  if (const auto slash = program.find_last_of('/'); slash != std::string::npos) program = program.substr(slash + 1);
  const bool written = posenc::test::write_proofs(program);
  return rc != 0 ? rc : (written ? 0 : 1);
}
