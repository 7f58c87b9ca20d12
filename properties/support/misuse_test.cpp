// properties/support/misuse_test.cpp — the misuse tests of what no scheme owns (posenc/linalg.hpp); each scheme's are
// in schemes/<name>/misuse_test.cpp (properties/support/misuse.hpp says what they hold a call to).
#include <span>
#include <vector>

#include "posenc/linalg.hpp"
#include "support/misuse.hpp"

namespace {
using namespace posenc::test::misuse;

TEST(Misuse, GramMatrix) {
  std::vector<float> block(4 * 8), out(16);
  EXPECT_ERROR_NAMING(posenc::gram_matrix(std::span<const float>(block), 5, 8, std::span<float>(out)), "block");
  EXPECT_ERROR_NAMING(posenc::gram_matrix(std::span<const float>(block), 4, 8, std::span<float>(out.data(), 15)), "out");
  EXPECT_ERROR_NAMING(posenc::gram_matrix(std::span<const float>(block), kHuge, 8, std::span<float>(out)), "rows");
  EXPECT_ERROR_NAMING(posenc::gram_matrix(std::span<const float>(block), 4, kHuge, std::span<float>(out)), "dim");
}

}  // namespace
