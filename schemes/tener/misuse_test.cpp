// schemes/tener/misuse_test.cpp — TENER's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/tener.hpp"
#include "support/misuse.hpp"

namespace misuse_tener {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, TenerSpecsWeightsTablesAndCalls) {
  const posenc::TenerSpec base{.heads = 1, .d_head = 4, .init_size = 8};
  const posenc::TenerWeights w{{0.1, 0.2, 0.3, 0.4}, {0.5, 0.6, 0.7, 0.8}};
  for (const auto& [s, field] : refused_specs(base)) {
    std::vector<float> t(2 * 3 * 4);
    std::vector<double> t64(2 * 3 * 4);
    EXPECT_ERROR_NAMING((posenc::TenerPlan{s, w}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, w), field);
    EXPECT_ERROR_NAMING(posenc::tener_table(s, 3, std::span<float>(t)), field);
    EXPECT_ERROR_NAMING(posenc::tener_table(s, 3, std::span<double>(t64)), field);
    EXPECT_ERROR_NAMING(posenc::tener_weights(s, 3, std::span<float>(t)), field);
    EXPECT_ERROR_NAMING(posenc::tener_weights(s, 3, std::span<double>(t64)), field);
    EXPECT_ERROR_NAMING(posenc::tener_scores_size(s, {.query_length = 2, .key_length = 2}), field);
  }
  EXPECT_ERROR_NAMING((posenc::TenerPlan{base, {w.r_r_bias, {0.1}}}), "r_w_bias");
  std::vector<float> big(2 * 3 * 4 + 1, 7.0f);
  EXPECT_ERROR_NAMING(posenc::tener_table(base, 3, std::span<float>(big.data(), 23)), "out.size()");
  EXPECT_ERROR_NAMING(posenc::tener_table(base, 0, std::span<float>(big.data(), 24)), "length");
  EXPECT_EQ(big.back(), 7.0f) << "a refused call wrote past what it was given";
  const posenc::TenerPlan plan(base, w);
  std::vector<std::int32_t> idx(9 + 1, 7);
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 3, .key_length = 3}, std::span<std::int32_t>(idx.data(), 8)), "out");
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 2, .key_length = 3}, std::span<std::int32_t>(idx.data(), 6)), "query_length");
  EXPECT_EQ(idx.back(), 7) << "a refused call wrote past what it was given";
  const posenc::BiasGeometry g{.query_length = 3, .key_length = 3};
  std::vector<float> q(3 * 4), k(3 * 4), sc(9 + 1, 7.0f);
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(11), k, g, std::nullopt, std::span<float>(sc.data(), 9)), "q");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, g, std::nullopt, std::span<float>(sc.data(), 8)), "scores");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, {.query_length = 2, .key_length = 3}, std::nullopt, std::span<float>(sc.data(), 6)), "query_length");
  EXPECT_EQ(sc.back(), 7.0f) << "a refused call wrote past what it was given";
  std::vector<double> x(18), y(9 + 1, 7.0);
  EXPECT_ERROR_NAMING(posenc::tener_shift(std::span<const double>(x), 3, std::span<double>(y.data(), 8)), "out");
  EXPECT_ERROR_NAMING(posenc::tener_transpose_shift(std::span<const double>(x).first(17), 3, std::span<double>(y.data(), 9)), "x");
  std::vector<float> xf(18), yf(9);
  EXPECT_ERROR_NAMING(posenc::tener_shift(std::span<const float>(xf), 0, std::span<float>(yf)), "length");
  EXPECT_ERROR_NAMING(posenc::tener_transpose_shift(std::span<const float>(xf), 3, std::span<float>(yf).first(8)), "out");
  EXPECT_EQ(y.back(), 7.0) << "a refused call wrote past what it was given";
}

// The issue-42 intermediates' own arguments (their specs are covered above): the parameter named, never a crash.
TEST(Misuse, TenerWeightsArguments) {
  const posenc::TenerSpec t{.heads = 1, .d_head = 4, .init_size = 8};
  std::vector<float> w(9 * 4);
  EXPECT_ERROR_NAMING(posenc::tener_weights(t, 0, std::span<float>(w)), "num_embeddings");
  EXPECT_ERROR_NAMING(posenc::tener_weights(t, 9, std::span<float>(w).first(9 * 4 - 1)), "out.size()");
  EXPECT_NO_THROW(posenc::tener_weights(t, 9, std::span<float>(w)));
  EXPECT_EQ(w[0], 0.0f);  // padding_idx 0: row 0 zeroed
}

}  // namespace misuse_tener
