// schemes/nezha/misuse_test.cpp — NEZHA's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/nezha.hpp"
#include "support/misuse.hpp"

namespace misuse_nezha {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, NezhaSpecsTablesAndCalls) {
  const posenc::NezhaSpec base{.max_relative_position = 3, .depth = 4};
  for (const auto& [s, field] : refused_specs(base)) {
    std::vector<float> t(7 * 4);
    std::vector<double> t64(7 * 4);
    EXPECT_ERROR_NAMING((posenc::NezhaPlan{s}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s), field);
    EXPECT_ERROR_NAMING(posenc::nezha_table(s, std::span<float>(t)), field);
    EXPECT_ERROR_NAMING(posenc::nezha_table(s, std::span<double>(t64)), field);
    EXPECT_ERROR_NAMING(posenc::nezha_shaw_spec(s), field);
    EXPECT_ERROR_NAMING(posenc::nezha_sinusoidal_spec(s), field);
  }
  std::vector<float> big(7 * 4 + 1, 7.0f);
  EXPECT_ERROR_NAMING(posenc::nezha_table(base, std::span<float>(big.data(), 27)), "out.size()");
  EXPECT_EQ(big.back(), 7.0f) << "a refused call wrote past what it was given";
  const posenc::NezhaPlan plan(base);
  EXPECT_ERROR_NAMING(plan.index(kMin), "u");
  std::vector<double> b64(7 * 4 + 1, 7.0);
  EXPECT_ERROR_NAMING(plan.table(std::span<double>(b64.data(), 27)), "out.size()");
  EXPECT_EQ(b64.back(), 7.0) << "a refused call wrote past what it was given";
  std::vector<std::int32_t> idx(12 + 1, 7);
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 3, .key_length = 4}, std::span<std::int32_t>(idx.data(), 11)), "out");
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 5, .key_length = 4}, std::span<std::int32_t>(idx.data(), 12)), "query_length");
  EXPECT_EQ(idx.back(), 7) << "a refused call wrote past what it was given";
  const posenc::BiasGeometry g{.query_length = 3, .key_length = 4};
  std::vector<float> q(3 * 4), k(4 * 4), v(4 * 4), sc(3 * 4 + 1, 7.0f), z(3 * 4 + 1, 7.0f);
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(5), k, 1, g, std::nullopt, std::span<float>(sc.data(), 12)), "q");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, 1, g, std::nullopt, std::span<float>(sc.data(), 11)), "scores");
  EXPECT_ERROR_NAMING(plan.attend(std::span<const float>(q), k, std::span<const float>(v).first(3), 1, g, std::nullopt, std::span<float>(z.data(), 12)), "v");
  EXPECT_ERROR_NAMING(plan.attend(std::span<const float>(q), k, v, 1, g, std::nan(""), std::span<float>(z.data(), 12)), "scale");
  EXPECT_EQ(sc.back(), 7.0f) << "a refused call wrote past what it was given";
  EXPECT_EQ(z.back(), 7.0f) << "a refused call wrote past what it was given";
}

}  // namespace misuse_nezha
