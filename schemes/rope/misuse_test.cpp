// schemes/rope/misuse_test.cpp — RoPE's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/rope.hpp"
#include "support/misuse.hpp"

namespace misuse_rope {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

posenc::RopeSpec small_rope() {
  posenc::RopeSpec s;
  s.head_dim = 8;
  s.rotary_dim = 8;
  return s;
}

TEST(Misuse, RopeSpecsThatAreNotValid) {
  for (const auto& [s, field] : refused_specs(small_rope())) {
    EXPECT_ERROR_NAMING(posenc::RopePlan{s}, field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s), field);
    EXPECT_ERROR_NAMING(posenc::rope_frequencies(s), field);
    EXPECT_ERROR_NAMING(posenc::rope_ggml_yarn_corr_dims(s), field);
    EXPECT_ERROR_NAMING(posenc::cache_values_per_position(s, posenc::RopeCacheForm::hf), field);
    std::vector<float> x(2 * 8);
    const std::vector<std::int64_t> p = {0, 1};
    EXPECT_ERROR_NAMING(posenc::rope_apply(s, posenc::dense_rope_tensor(std::span<float>(x), 2, 1, 8), p), field);
  }
}

TEST(Misuse, RopeCachesApplyShiftScores) {
  const posenc::RopePlan plan(small_rope());
  const std::vector<std::int64_t> p2 = {0, 5};
  std::vector<float> cache(2 * 8 + 1, 7.0f);
  EXPECT_ERROR_NAMING(plan.cache(posenc::RopeCacheForm::hf, p2, std::span<float>(cache.data(), 2 * 8 - 1)), "out");
  for (std::int64_t bad : {kMin, kMax, std::int64_t{1} << 41}) {
    const std::vector<std::int64_t> p = {0, bad};
    EXPECT_ERROR_NAMING(plan.cache(posenc::RopeCacheForm::pairs, p, std::span<float>(cache)), "position");
  }
  EXPECT_EQ(cache.back(), 7.0f) << "a refused call wrote past what it was given";

  std::vector<float> x(2 * 3 * 8 + 1, 1.0f);
  const std::span<float> data(x.data(), 2 * 3 * 8);
  EXPECT_ERROR_NAMING(plan.apply(posenc::RopeTensor<float>{}, p2), "tokens");  // default-constructed view
  EXPECT_ERROR_NAMING(plan.apply(posenc::dense_rope_tensor(std::span<float>(x.data(), 2 * 3 * 8 - 1), 2, 3, 8), p2),
                      "data");
  EXPECT_ERROR_NAMING(plan.apply(posenc::RopeTensor<float>{data, 2, 3, 24, 4}, p2), "strides");  // heads overlap
  EXPECT_ERROR_NAMING(plan.apply(posenc::RopeTensor<float>{data, 2, 3, kHuge, 8}, p2), "data");  // stride overflow
  EXPECT_ERROR_NAMING(plan.apply(posenc::RopeTensor<float>{data, 2, 0, 24, 8}, p2), "heads");
  EXPECT_ERROR_NAMING(plan.apply(posenc::dense_rope_tensor(data, 1, 3, 8), p2), "tokens");
  const std::vector<std::int64_t> far = {0, kMax};
  EXPECT_ERROR_NAMING(plan.apply(posenc::dense_rope_tensor(data, 2, 3, 8), far), "position");
  EXPECT_ERROR_NAMING(plan.shift(posenc::dense_rope_tensor(data, 2, 3, 8), kMin), "delta");
  // The one-shot form checks the same way.
  EXPECT_ERROR_NAMING(posenc::rope_apply(small_rope(), posenc::RopeTensor<float>{}, p2), "tokens");
  EXPECT_ERROR_NAMING(posenc::rope_apply(small_rope(), posenc::dense_rope_tensor(data, 2, 3, 8), far), "position");
  EXPECT_ERROR_NAMING(posenc::rope_apply(small_rope(), posenc::RopeTensor<float>{data, 2, 3, 24, 4}, p2), "strides");
  EXPECT_ERROR_NAMING(posenc::cache_values_per_position(small_rope(), static_cast<posenc::RopeCacheForm>(99)), "form");
  EXPECT_EQ(x.back(), 1.0f) << "a refused call wrote past what it was given";

  std::vector<float> q(2 * 8), k(3 * 8), s(2 * 3);
  const std::vector<std::int64_t> p3 = {0, 1, 2};
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), p3, std::span<const float>(k), p3, std::span<float>(s)), "q");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), p2, std::span<const float>(k), p3,
                                  std::span<float>(s.data(), 5)), "scores");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q), far, std::span<const float>(k), p3, std::span<float>(s)),
                      "position");
}

}  // namespace misuse_rope
