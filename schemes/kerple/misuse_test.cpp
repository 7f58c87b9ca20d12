// schemes/kerple/misuse_test.cpp — KERPLE's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/kerple.hpp"
#include "support/misuse.hpp"

namespace misuse_kerple {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, KerpleSpecsAndWeightsThatAreNotValid) {
  const posenc::KerpleWeights w{{1.0, 1.0}, {0.5, 0.5}};
  const posenc::BiasGeometry g{.query_length = 2, .key_length = 2};
  std::vector<float> out(2 * 2 * 2);
  for (const auto& [s, field] : refused_specs(posenc::KerpleSpec{.heads = 2})) {
    EXPECT_ERROR_NAMING((posenc::KerplePlan{s, w}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, w), field);
    EXPECT_ERROR_NAMING(posenc::kerple_bias_size(s, g), field);
    EXPECT_ERROR_NAMING(posenc::kerple_bias(s, w, g, std::span<float>(out)), field);
  }
  const posenc::KerpleSpec s{.heads = 2};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (auto [field, bad] : std::vector<std::pair<std::string, posenc::KerpleWeights>>{
           {"bias_p", {{1.0}, {0.5, 0.5}}},
           {"bias_a", {{1.0, 1.0}, {}}},
           {"bias_p", {{1.0, nan}, {0.5, 0.5}}},
           {"bias_a", {{1.0, 1.0}, {0.5, -std::numeric_limits<double>::infinity()}}},
           {"bias_a", {{1.0, 1.0}, {0.5, 1e7}}},
       }) {
    EXPECT_ERROR_NAMING((posenc::KerplePlan{s, bad}), field);
    std::vector<double> out64(2 * 2 * 2);
    EXPECT_ERROR_NAMING(posenc::kerple_bias(s, bad, g, std::span<double>(out64)), field);
  }
}

TEST(Misuse, KerpleBiasScoresAndValues) {
  const posenc::KerplePlan plan(posenc::KerpleSpec{.heads = 2, .kernel = posenc::KerpleKernel::power},
                                posenc::KerpleWeights{{1.5, 0.5}, {0.25, 2.0}});
  std::vector<float> out(2 * 3 * 4 + 1, 7.0f);
  const std::span<float> o(out.data(), 2 * 3 * 4);
  const std::uint8_t mask3[] = {1, 1, 1}, mask_bad[] = {1, 0, 5, 1};
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4}, std::span<float>(out.data(), 2 * 3 * 4 - 1)), "out");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 5, .key_length = 4}, o), "query_length");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 1, .key_length = kHuge}, o), "key_length");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4, .key_mask = mask3}, o), "key_mask");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4, .key_mask = mask_bad}, o), "key_mask");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4, .mask = static_cast<posenc::BiasMask>(9)}, o), "mask");
  EXPECT_EQ(out.back(), 7.0f) << "a refused call wrote past what it was given";
  EXPECT_ERROR_NAMING(posenc::kerple_bias_size(plan.spec(), {.query_length = 9, .key_length = 4}), "query_length");
  EXPECT_ERROR_NAMING(plan.bias_value_f32(2, 0), "head");
  EXPECT_ERROR_NAMING(plan.bias_value_f64(0, std::int64_t{1} << 31), "d");
  EXPECT_ERROR_NAMING(plan.bias_value_f64(0, kMin), "d");
  std::vector<float> q(2 * 3 * 4), k(2 * 4 * 4);
  const posenc::BiasGeometry g{.query_length = 3, .key_length = 4};
  EXPECT_ERROR_NAMING(plan.scores(q, k, 0, g, 1.0, o), "head_dim");
  EXPECT_ERROR_NAMING(plan.scores(q, k, 4, g, std::numeric_limits<double>::infinity(), o), "scale");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(5), k, 4, g, 1.0, o), "q");
  EXPECT_ERROR_NAMING(plan.scores(q, std::span<const float>(k).first(5), 4, g, 1.0, o), "k");
  EXPECT_ERROR_NAMING(plan.scores(q, k, 4, g, 1.0, std::span<float>(out.data(), 5)), "scores");
  EXPECT_EQ(out.back(), 7.0f) << "a refused call wrote past what it was given";
}

}  // namespace misuse_kerple
