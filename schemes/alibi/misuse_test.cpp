// schemes/alibi/misuse_test.cpp — ALiBi's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/alibi.hpp"
#include "support/misuse.hpp"

namespace misuse_alibi {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, AlibiSpecsThatAreNotValid) {
  for (const auto& [s, field] : refused_specs(posenc::AlibiSpec{})) {
    std::vector<float> out(8 * 2 * 2);
    const posenc::BiasGeometry g{.query_length = 2, .key_length = 2};
    EXPECT_ERROR_NAMING(posenc::AlibiPlan{s}, field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s), field);
    EXPECT_ERROR_NAMING(posenc::alibi_slopes(s), field);
    EXPECT_ERROR_NAMING(posenc::alibi_bias_size(s, g), field);
    EXPECT_ERROR_NAMING(posenc::alibi_bias(s, g, std::span<float>(out)), field);
  }
}

TEST(Misuse, AlibiBiasScoresAndValues) {
  const posenc::AlibiPlan plan(posenc::AlibiSpec{.heads = 2, .variant = posenc::AlibiVariant::key_counted});
  std::vector<float> out(2 * 3 * 4 + 1, 7.0f);
  const std::span<float> o(out.data(), 2 * 3 * 4);
  const std::uint8_t mask3[] = {1, 1, 1}, mask_bad[] = {1, 0, 5, 1};
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4}, std::span<float>(out.data(), 2 * 3 * 4 - 1)), "out");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 5, .key_length = 4}, o), "query_length");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 0, .key_length = 4}, o), "query_length");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 1, .key_length = 0}, o), "key_length");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 1, .key_length = kHuge}, o), "key_length");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4, .key_mask = mask3}, o), "key_mask");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4, .key_mask = mask_bad}, o), "key_mask");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4, .mask = static_cast<posenc::BiasMask>(9)}, o), "mask");
  EXPECT_EQ(out.back(), 7.0f) << "a refused call wrote past what it was given";
  EXPECT_ERROR_NAMING(posenc::alibi_bias_size(plan.spec(), {.query_length = 9, .key_length = 4}), "query_length");
  std::vector<double> out64(2 * 3 * 4);
  EXPECT_ERROR_NAMING(posenc::alibi_bias(plan.spec(), {.query_length = 3, .key_length = 5}, std::span<double>(out64)), "out");
  EXPECT_ERROR_NAMING(plan.bias_value_f32(2, 0), "head");
  EXPECT_ERROR_NAMING(plan.bias_value_f64(0, std::int64_t{1} << 31), "x");
  EXPECT_ERROR_NAMING(plan.bias_value_f64(0, kMin), "x");
  std::vector<float> q(2 * 3 * 4), k(2 * 4 * 4);
  const posenc::BiasGeometry g{.query_length = 3, .key_length = 4};
  EXPECT_ERROR_NAMING(plan.scores(q, k, 0, g, 1.0, o), "head_dim");
  EXPECT_ERROR_NAMING(plan.scores(q, k, kHuge, g, 1.0, o), "head_dim");
  EXPECT_ERROR_NAMING(plan.scores(q, k, 4, g, std::numeric_limits<double>::infinity(), o), "scale");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(5), k, 4, g, 1.0, o), "q");
  EXPECT_ERROR_NAMING(plan.scores(q, std::span<const float>(k).first(5), 4, g, 1.0, o), "k");
  EXPECT_ERROR_NAMING(plan.scores(q, k, 4, g, 1.0, std::span<float>(out.data(), 5)), "scores");
  EXPECT_EQ(out.back(), 7.0f) << "a refused call wrote past what it was given";
}

TEST(Misuse, AlibiGetSlopesHeads) {
  EXPECT_ERROR_NAMING(posenc::alibi_get_slopes(0), "heads");
  EXPECT_ERROR_NAMING(posenc::alibi_get_slopes(posenc::kAlibiMaxHeads + 1), "heads");
  EXPECT_EQ(posenc::alibi_get_slopes(8).front(), 0.5);  // 2^(-8/8)
}

}  // namespace misuse_alibi
