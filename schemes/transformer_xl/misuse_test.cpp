// schemes/transformer_xl/misuse_test.cpp — Transformer-XL's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/transformer_xl.hpp"
#include "support/misuse.hpp"

namespace misuse_transformer_xl {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, TransformerXlSpecsWeightsTablesAndCalls) {
  const posenc::TransformerXlSpec base{.d_model = 4, .heads = 1, .d_head = 2};
  const posenc::TransformerXlWeights w{{0.1, 0.2}, {0.3, 0.4}, std::vector<double>(8, 0.5)};
  for (const auto& [s, field] : refused_specs(base)) {
    std::vector<float> t(3 * 4);
    std::vector<double> t64(3 * 4);
    EXPECT_ERROR_NAMING((posenc::TransformerXlPlan{s, w}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, w), field);
    EXPECT_ERROR_NAMING(posenc::transformer_xl_table(s, 3, std::span<float>(t)), field);
    EXPECT_ERROR_NAMING(posenc::transformer_xl_table(s, 3, std::span<double>(t64)), field);
    EXPECT_ERROR_NAMING(posenc::transformer_xl_scores_size(s, {.query_length = 1, .key_length = 2}), field);
  }
  EXPECT_ERROR_NAMING((posenc::TransformerXlPlan{base, {}}), "r_w_bias");
  EXPECT_ERROR_NAMING((posenc::TransformerXlPlan{base, {w.r_w_bias, w.r_r_bias, {1.0, NAN, 1, 1, 1, 1, 1, 1}}}), "r_net");
  std::vector<float> big(3 * 4 + 1, 7.0f);
  EXPECT_ERROR_NAMING(posenc::transformer_xl_table(base, 3, std::span<float>(big.data(), 11)), "out.size()");
  EXPECT_ERROR_NAMING(posenc::transformer_xl_table(base, 0, std::span<float>(big.data(), 12)), "key_length");
  EXPECT_EQ(big.back(), 7.0f) << "a refused call wrote past what it was given";
  const posenc::TransformerXlPlan plan(base, w);
  std::vector<std::int32_t> idx(12 + 1, 7);
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 3, .key_length = 4}, std::span<std::int32_t>(idx.data(), 11)), "out");
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 5, .key_length = 4}, std::span<std::int32_t>(idx.data(), 12)), "query_length");
  EXPECT_EQ(idx.back(), 7) << "a refused call wrote past what it was given";
  const posenc::BiasGeometry g{.query_length = 3, .key_length = 4};
  std::vector<float> q(3 * 2), k(4 * 2), sc(3 * 4 + 1, 7.0f);
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(5), k, g, std::nullopt, std::span<float>(sc.data(), 12)), "q");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, g, std::nullopt, std::span<float>(sc.data(), 11)), "scores");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, g, std::nan(""), std::span<float>(sc.data(), 12)), "scale");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, {.query_length = 3, .key_length = 4, .key_mask = std::vector<std::uint8_t>{1, 2, 1, 1}}, std::nullopt, std::span<float>(sc.data(), 12)), "key_mask");
  EXPECT_EQ(sc.back(), 7.0f) << "a refused call wrote past what it was given";
  std::vector<double> x(12), y(12 + 1, 7.0);
  EXPECT_ERROR_NAMING(posenc::transformer_xl_rel_shift(std::span<const double>(x), 3, 4, std::span<double>(y.data(), 11)), "out");
  EXPECT_ERROR_NAMING(posenc::transformer_xl_rel_shift(std::span<const double>(x), 0, 4, std::span<double>(y.data(), 12)), "query_length");
  std::vector<float> xf(12), yf(12);
  EXPECT_ERROR_NAMING(posenc::transformer_xl_rel_shift(std::span<const float>(xf).first(11), 3, 4, std::span<float>(yf)), "x");
  EXPECT_EQ(y.back(), 7.0) << "a refused call wrote past what it was given";
}

}  // namespace misuse_transformer_xl
