// main() of posenc's property programs: picks the fast BLAS kernels (may re-execute the program, see
// posenc/blas.hpp), runs GoogleTest, then writes the claims ledger of this program as JSON when
// POSENC_RESULTS_DIR is set (claims.hpp).
#include <gtest/gtest.h>

#include <string>

#include "claims.hpp"
#include "posenc/blas.hpp"

int main(int argc, char** argv) {
  posenc::select_blas_kernels(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  std::string program = argc > 0 ? argv[0] : "posenc_test";
  if (const auto slash = program.find_last_of('/'); slash != std::string::npos) program = program.substr(slash + 1);
  const bool written = posenc::test::write_proofs(program);
  return rc != 0 ? rc : (written ? 0 : 1);
}
