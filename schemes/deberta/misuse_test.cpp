// schemes/deberta/misuse_test.cpp — DeBERTa's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/deberta.hpp"
#include "support/misuse.hpp"

namespace misuse_deberta {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

TEST(Misuse, DebertaSpecsTablesAndCalls) {
  const posenc::DebertaSpec base{.position_buckets = 8, .max_relative_positions = 16, .heads = 2, .head_dim = 4};
  const posenc::DebertaWeights w{std::vector<double>(2 * 16 * 4, 0.5), std::vector<double>(2 * 16 * 4, 0.25)};
  for (const auto& [s, field] : refused_specs(base)) {
    EXPECT_ERROR_NAMING((posenc::DebertaPlan{s, w}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, w), field);
    EXPECT_ERROR_NAMING(posenc::deberta_scores_size(s, 2, 2), field);
    EXPECT_ERROR_NAMING(posenc::deberta_bucket(s, 1), field);
  }
  EXPECT_ERROR_NAMING((posenc::DebertaPlan{base, posenc::DebertaWeights{std::vector<double>(127, 0.5), w.pos_query}}), "pos_key");
  EXPECT_ERROR_NAMING((posenc::DebertaPlan{base, posenc::DebertaWeights{w.pos_key, std::vector<double>(128, std::numeric_limits<double>::infinity())}}), "pos_query");
  EXPECT_ERROR_NAMING(posenc::deberta_bucket(base, kMin), "rel");
  EXPECT_ERROR_NAMING(posenc::deberta_scores_size(base, 0, 2), "query_length");
  const posenc::DebertaPlan plan(base, w);
  EXPECT_ERROR_NAMING(plan.bucket(kMax), "rel");
  EXPECT_ERROR_NAMING(plan.position_index(kMin), "rel");
  std::vector<std::int32_t> idx(12 + 1, 7);
  EXPECT_ERROR_NAMING(plan.relative_positions(3, 4, std::span<std::int32_t>(idx.data(), 11)), "out");
  EXPECT_ERROR_NAMING(plan.position_indices(1, kHuge, std::span<std::int32_t>(idx.data(), 12)), "key_length");
  EXPECT_ERROR_NAMING(plan.relative_positions(kHuge, 1, std::span<std::int32_t>(idx.data(), 12)), "query_length");
  EXPECT_EQ(idx.back(), 7) << "a refused call wrote past what it was given";
  std::vector<float> q(2 * 3 * 4), k(2 * 4 * 4), big(2 * 3 * 4 + 1, 7.0f);
  const std::span<float> o(big.data(), 2 * 3 * 4);
  const std::uint8_t bad[] = {1, 3, 1, 1};
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, 3, 4, {}, std::numeric_limits<double>::infinity(), o), "scale");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(5), k, 3, 4, {}, std::nullopt, o), "q");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, 3, 4, bad, std::nullopt, o), "key_mask");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), k, 3, 4, {}, std::nullopt, std::span<float>(big.data(), 23)), "scores");
  EXPECT_EQ(big.back(), 7.0f) << "a refused call wrote past what it was given";
}

}  // namespace misuse_deberta
