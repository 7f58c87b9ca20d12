// schemes/learned/misuse_test.cpp — learned absolute positions's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/learned.hpp"
#include "support/misuse.hpp"

namespace misuse_learned {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, LearnedSpecsTablesAndInputs) {
  const posenc::LearnedTable table{3, 2, {1, 2, 3, 4, 5, 6}};
  for (const auto& [s, field] : refused_specs(posenc::LearnedSpec{})) {
    EXPECT_ERROR_NAMING((posenc::LearnedPlan{s, table}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, table), field);
    EXPECT_ERROR_NAMING(posenc::position_ids(s, {.length = 2}), field);
  }
  EXPECT_ERROR_NAMING((posenc::LearnedPlan{posenc::LearnedSpec{}, posenc::LearnedTable{3, 2, {1, 2}}}), "table");
  EXPECT_ERROR_NAMING((posenc::LearnedPlan{posenc::LearnedSpec{}, posenc::LearnedTable{kHuge, 2, {}}}), "table");
  const posenc::LearnedPlan plan(posenc::LearnedSpec{}, table);
  std::vector<double> out(2 * 2 + 1, 7.0);
  const std::int64_t far[] = {0, 3}, huge[] = {kMin, 0};
  EXPECT_ERROR_NAMING(plan.rows(far, std::span<double>(out.data(), 4)), "position id");
  EXPECT_ERROR_NAMING(plan.rows(huge, std::span<double>(out.data(), 4)), "position id");
  EXPECT_ERROR_NAMING(plan.rows(far, std::span<double>(out.data(), 5)), "out");
  EXPECT_EQ(out.back(), 7.0) << "a refused call wrote past what it was given";
  std::vector<float> o32(4);
  EXPECT_ERROR_NAMING(plan.lookup({.length = 2, .past = 2}, std::span<float>(o32)), "position id");
  EXPECT_ERROR_NAMING(plan.lookup({.length = 0}, std::span<double>(out.data(), 0)), "length");
  EXPECT_ERROR_NAMING(plan.position_ids({.length = 2, .past = kMin}), "past");
  std::vector<std::int64_t> ids(3, 7);
  EXPECT_ERROR_NAMING(plan.position_ids({.length = 2}, ids), "out");
  EXPECT_ERROR_NAMING(posenc::position_ids(posenc::LearnedSpec{}, {.length = 2, .past = kMin}, std::span(ids).first(2)), "past");
  EXPECT_EQ(ids, std::vector<std::int64_t>(3, 7)) << "a refused call wrote into out";
  const std::uint8_t mask_bad[] = {1, 3};
  EXPECT_ERROR_NAMING(posenc::position_ids(posenc::LearnedSpec{.id_map = posenc::IdMap::cumsum_mask}, {.length = 2, .attention_mask = mask_bad}), "attention_mask");
  const std::int64_t one[] = {5};
  EXPECT_ERROR_NAMING(posenc::position_ids(posenc::LearnedSpec{.id_map = posenc::IdMap::make_positions}, {.length = 2, .tokens = one}), "tokens");
}

}  // namespace misuse_learned
