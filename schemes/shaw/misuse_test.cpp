// schemes/shaw/misuse_test.cpp — Shaw's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/shaw.hpp"
#include "support/misuse.hpp"

namespace misuse_shaw {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, ShawSpecsTablesAndCalls) {
  const posenc::BiasGeometry g{.query_length = 2, .key_length = 2};
  const posenc::ShawSpec base{.max_relative_position = 3, .head_dim = 4};
  const posenc::ShawWeights w{std::vector<double>(7 * 4, 0.5), std::vector<double>(7 * 4, 0.25)};
  for (const auto& [s, field] : refused_specs(base)) {
    EXPECT_ERROR_NAMING((posenc::ShawPlan{s, w}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, w), field);
    EXPECT_ERROR_NAMING(posenc::shaw_scores_size(s, 1, g), field);
    EXPECT_ERROR_NAMING(posenc::shaw_index(s, 1), field);
  }
  EXPECT_ERROR_NAMING((posenc::ShawPlan{base, posenc::ShawWeights{std::vector<double>(27, 0.5), w.values}}), "keys");
  EXPECT_ERROR_NAMING((posenc::ShawPlan{base, posenc::ShawWeights{w.keys, std::vector<double>(28, std::numeric_limits<double>::infinity())}}), "values");
  EXPECT_ERROR_NAMING(posenc::shaw_index(base, std::int64_t{1} << 31), "u");
  const posenc::ShawPlan plan(base, w);
  EXPECT_ERROR_NAMING(plan.index(kMin), "u");
  std::vector<std::int32_t> idx(12 + 1, 7);
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 3, .key_length = 4}, std::span<std::int32_t>(idx.data(), 11)), "out");
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 1, .key_length = kHuge}, std::span<std::int32_t>(idx.data(), 12)), "key_length");
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 5, .key_length = 4}, std::span<std::int32_t>(idx.data(), 12)), "query_length");
  EXPECT_EQ(idx.back(), 7) << "a refused call wrote past what it was given";
  std::vector<float> q(2 * 3 * 4), k(2 * 4 * 4), v(2 * 4 * 4), big(2 * 3 * 4 + 1, 7.0f);
  const posenc::BiasGeometry g34{.query_length = 3, .key_length = 4};
  const std::span<float> o(big.data(), 2 * 3 * 4);
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, 0, g34, std::nullopt, o), "heads");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, 2, g34, std::numeric_limits<double>::infinity(), o), "scale");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(5), k, 2, g34, std::nullopt, o), "q");
  EXPECT_ERROR_NAMING(plan.attend(std::span<const float>(q), k, std::span<const float>(v).first(5), 2, g34, std::nullopt, o), "v");
  EXPECT_ERROR_NAMING(plan.attend(std::span<const float>(q), k, v, kHuge, g34, std::nullopt, o), "heads");
  EXPECT_EQ(big.back(), 7.0f) << "a refused call wrote past what it was given";
}

}  // namespace misuse_shaw
