// schemes/t5/misuse_test.cpp — T5's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/t5.hpp"
#include "support/misuse.hpp"

namespace misuse_t5 {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, T5SpecsTablesAndCalls) {
  const posenc::BiasGeometry g{.query_length = 2, .key_length = 2};
  std::vector<float> out(2 * 2 * 2);
  const posenc::T5Weights w{std::vector<double>(32 * 2, 0.5)};
  for (const auto& [s, field] : refused_specs(posenc::T5Spec{.heads = 2})) {
    EXPECT_ERROR_NAMING((posenc::T5Plan{s, w}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, w), field);
    EXPECT_ERROR_NAMING(posenc::t5_bias_size(s, g), field);
    EXPECT_ERROR_NAMING(posenc::t5_bucket(s, 5), field);
  }
  const posenc::T5Spec s{.heads = 2};
  EXPECT_ERROR_NAMING((posenc::T5Plan{s, posenc::T5Weights{std::vector<double>(63, 0.5)}}), "table");
  EXPECT_ERROR_NAMING((posenc::T5Plan{s, posenc::T5Weights{std::vector<double>(64, std::numeric_limits<double>::infinity())}}), "table");
  EXPECT_ERROR_NAMING(posenc::t5_bucket(s, std::int64_t{1} << 31), "r");
  const posenc::T5Plan plan(s, w);
  EXPECT_ERROR_NAMING(plan.bucket(kMin), "r");
  std::vector<float> big(2 * 3 * 4 + 1, 7.0f);
  const std::span<float> o(big.data(), 2 * 3 * 4);
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4}, std::span<float>(big.data(), 2 * 3 * 4 - 1)), "out");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 5, .key_length = 4}, o), "query_length");
  std::vector<std::int32_t> idx(12);
  EXPECT_ERROR_NAMING(plan.buckets({.query_length = 3, .key_length = 4}, std::span<std::int32_t>(idx.data(), 11)), "out");
  EXPECT_ERROR_NAMING(plan.buckets({.query_length = 1, .key_length = kHuge}, std::span<std::int32_t>(idx)), "key_length");
  std::vector<float> q(2 * 3 * 4), k(2 * 4 * 4);
  const posenc::BiasGeometry g34{.query_length = 3, .key_length = 4};
  EXPECT_ERROR_NAMING(plan.scores(q, k, 0, g34, 1.0, o), "head_dim");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(5), k, 4, g34, 1.0, o), "q");
  EXPECT_EQ(big.back(), 7.0f) << "a refused call wrote past what it was given";
}

}  // namespace misuse_t5
