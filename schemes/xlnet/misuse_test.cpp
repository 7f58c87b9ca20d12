// schemes/xlnet/misuse_test.cpp — XLNet's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/xlnet.hpp"
#include "support/misuse.hpp"

namespace misuse_xlnet {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, XlnetSpecsWeightsTablesAndCalls) {
  const posenc::XlnetSpec base{.d_model = 4, .heads = 1, .d_head = 2};
  const posenc::XlnetWeights w{{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}, {0.1, 0.2, 0.3, 0.4}, std::vector<double>(8, 0.5)};
  for (const auto& [s, field] : refused_specs(base)) {
    std::vector<float> t(5 * 4);
    std::vector<double> t64(5 * 4);
    EXPECT_ERROR_NAMING((posenc::XlnetPlan{s, w}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, w), field);
    EXPECT_ERROR_NAMING(posenc::xlnet_table(s, 2, 3, std::span<float>(t)), field);
    EXPECT_ERROR_NAMING(posenc::xlnet_table(s, 2, 3, std::span<double>(t64)), field);
    EXPECT_ERROR_NAMING(posenc::xlnet_scores_size(s, {.query_length = 1, .key_length = 2}), field);
  }
  EXPECT_ERROR_NAMING((posenc::XlnetPlan{base, {w.r_w_bias, w.r_r_bias, w.r_s_bias, {0.1}, w.r}}), "seg_embed");
  std::vector<float> big(5 * 4 + 1, 7.0f);
  EXPECT_ERROR_NAMING(posenc::xlnet_table(base, 2, 3, std::span<float>(big.data(), 19)), "out.size()");
  EXPECT_ERROR_NAMING(posenc::xlnet_table(base, 4, 3, std::span<float>(big.data(), 20)), "query_length");
  EXPECT_EQ(big.back(), 7.0f) << "a refused call wrote past what it was given";
  const posenc::XlnetPlan plan(base, w);
  std::vector<std::int32_t> idx(12 + 1, 7);
  EXPECT_ERROR_NAMING(plan.indices({.query_length = 3, .key_length = 4}, std::span<std::int32_t>(idx.data(), 11)), "out");
  EXPECT_EQ(idx.back(), 7) << "a refused call wrote past what it was given";
  const posenc::BiasGeometry g{.query_length = 3, .key_length = 4};
  std::vector<float> q(3 * 2), k(4 * 2), sc(3 * 4 + 1, 7.0f);
  const std::vector<std::int64_t> types{0, 1};
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, g, types, std::nullopt, std::span<float>(sc.data(), 12)), "token_types");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), std::span<const float>(k).first(7), g, {}, std::nullopt, std::span<float>(sc.data(), 12)), "k");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, g, {}, INFINITY, std::span<float>(sc.data(), 12)), "scale");
  EXPECT_EQ(sc.back(), 7.0f) << "a refused call wrote past what it was given";
  // segment_term: every throw path (lengths, token types required and counted, q, out), f32 and f64
  const std::vector<std::int64_t> three{0, 1, 0};
  std::vector<float> ef(3 * 4 + 1, 7.0f);
  const std::span<const float> q32(q);
  const std::span<float> ef32(ef.data(), 12);
  EXPECT_ERROR_NAMING(plan.segment_term(q32, 3, 0, three, ef32), "key_length");
  EXPECT_ERROR_NAMING(plan.segment_term(q32, 5, 4, three, ef32), "query_length");
  EXPECT_ERROR_NAMING(plan.segment_term(q32, 0, 4, three, ef32), "query_length");
  EXPECT_ERROR_NAMING(plan.segment_term(q32, 3, 4, types, ef32), "token_types");
  EXPECT_ERROR_NAMING(plan.segment_term(q32, 3, 4, {}, ef32), "token_types");
  EXPECT_ERROR_NAMING(plan.segment_term(q32.first(5), 3, 4, three, ef32), "q");
  EXPECT_ERROR_NAMING(plan.segment_term(q32, 3, 4, three, std::span<float>(ef.data(), 11)), "out");
  EXPECT_ERROR_NAMING(plan.segment_term(q32, 3, 4, three, std::span<float>(ef.data(), 13)), "out");
  EXPECT_EQ(ef.back(), 7.0f) << "a refused call wrote past what it was given";
  std::vector<double> q64(3 * 2), ef64(3 * 4 + 1, 7.0);
  const std::span<double> ef64s(ef64.data(), 12);
  EXPECT_ERROR_NAMING(plan.segment_term(std::span<const double>(q64), 3, 5000000000, three, ef64s), "key_length");
  EXPECT_ERROR_NAMING(plan.segment_term(std::span<const double>(q64), 4, 4, three, ef64s), "token_types");
  EXPECT_ERROR_NAMING(plan.segment_term(std::span<const double>(q64).first(4), 3, 4, three, ef64s), "q");
  EXPECT_ERROR_NAMING(plan.segment_term(std::span<const double>(q64), 3, 4, three, std::span<double>(ef64.data(), 3)), "out");
  EXPECT_EQ(ef64.back(), 7.0) << "a refused call wrote past what it was given";
  std::vector<double> x(3 * 7), y(3 * 4 + 1, 7.0);
  EXPECT_ERROR_NAMING(posenc::xlnet_rel_shift(std::span<const double>(x), 3, 7, 4, std::span<double>(y.data(), 11)), "out");
  EXPECT_ERROR_NAMING(posenc::xlnet_rel_shift(std::span<const double>(x), 3, 7, 7, std::span<double>(y.data(), 12)), "key_length");
  std::vector<float> xf(3 * 7), yf(12);
  EXPECT_ERROR_NAMING(posenc::xlnet_rel_shift(std::span<const float>(xf), 3, 1, 4, std::span<float>(yf)), "rows");
  EXPECT_EQ(y.back(), 7.0) << "a refused call wrote past what it was given";
}

}  // namespace misuse_xlnet
