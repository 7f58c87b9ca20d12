// properties/support/misuse_test.cpp — every public function of the library, called the wrong way: every spec its
// description refuses (spec_probes.hpp: each side of every field's boundaries, the integer type's extremes, NaN and
// infinities, non-enumerators, under each enumerator and with each optional field empty), zero and huge sizes, spans one element short, strides that overlap, positions at the int64
// limits. Each call must throw posenc::Error (naming what was wrong) and write nothing outside what it was given;
// the sanitizer suite (scripts/sanitize.sh) runs this program, so an out-of-span access or undefined behaviour
// on the way to the error is a failure too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "posenc/alibi.hpp"
#include "posenc/deberta.hpp"
#include "posenc/fire.hpp"
#include "posenc/kerple.hpp"
#include "posenc/nezha.hpp"
#include "posenc/shaw.hpp"
#include "posenc/t5.hpp"
#include "posenc/tener.hpp"
#include "posenc/transformer_xl.hpp"
#include "posenc/xlnet.hpp"
#include "posenc/learned.hpp"
#include "posenc/linalg.hpp"
#include "posenc/rope.hpp"
#include "posenc/sinusoidal.hpp"
#include "spec_probes.hpp"

namespace {

using posenc::Error;
using posenc::test::contract::refused_specs;  // every spec the description refuses (spec_probes.hpp)
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kHuge = std::numeric_limits<std::size_t>::max();

// The call throws posenc::Error whose message names `needle`.
#define EXPECT_ERROR_NAMING(call, needle)                                                          \
  do {                                                                                           \
    try {                                                                                        \
      call;                                                                                      \
      ADD_FAILURE() << #call << " did not throw";                                                \
    } catch (const Error& e) {                                                                   \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << #call << ": " << e.what(); \
    } catch (const std::exception& e) {                                                          \
      ADD_FAILURE() << #call << " threw something other than posenc::Error: " << e.what();       \
    }                                                                                            \
  } while (0)

posenc::SinusoidalSpec small_sin() {
  posenc::SinusoidalSpec s;
  s.dim = 8;
  return s;
}

TEST(Misuse, SinusoidalSpecsThatAreNotValid) {
  for (const auto& [s, field] : refused_specs(small_sin())) {
    EXPECT_ERROR_NAMING(posenc::SinusoidalPlan{s}, field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s), field);
    EXPECT_ERROR_NAMING(posenc::sinusoidal_frequencies(s), field);
    std::vector<float> out(4 * 8);
    const std::vector<std::int64_t> p = {0, 1};
    EXPECT_ERROR_NAMING(posenc::sinusoidal_table(s, 0, 4, std::span<float>(out)), field);
    EXPECT_ERROR_NAMING(posenc::sinusoidal_rows(s, p, std::span<float>(out)), field);
    EXPECT_ERROR_NAMING(posenc::sin_slot(s, 0), field);
    EXPECT_ERROR_NAMING(posenc::cos_slot(s, 0), field);
    EXPECT_ERROR_NAMING(posenc::position_of_token(s, 0), field);
    EXPECT_ERROR_NAMING(posenc::shift_operator(s, 1), field);
  }
}

TEST(Misuse, SinusoidalTablesAndRows) {
  const posenc::SinusoidalPlan plan(small_sin());
  std::vector<float> out(4 * 8 + 1, 7.0f);
  const std::span<float> short_by_one(out.data(), 4 * 8 - 1);
  EXPECT_ERROR_NAMING(plan.table(0, 4, short_by_one), "out.size()");
  EXPECT_ERROR_NAMING(plan.table(0, 0, std::span<float>(out)), "count");
  EXPECT_ERROR_NAMING(plan.table(0, kHuge, std::span<float>(out)), "count");
  EXPECT_ERROR_NAMING(plan.table(kMin, 4, std::span<float>(out)), "position");
  EXPECT_ERROR_NAMING(plan.table(kMax, 4, std::span<float>(out)), "position");
  EXPECT_ERROR_NAMING(plan.table(-1, 4, std::span<float>(out)), "position");  // unsigned convention
  const std::vector<std::int64_t> three = {0, 1, 2};
  EXPECT_ERROR_NAMING(plan.rows(three, std::span<float>(out.data(), 3 * 8 - 1)), "out.size()");
  EXPECT_ERROR_NAMING(plan.rows(std::span<const std::int64_t>(), std::span<float>(out)), "positions.size()");
  for (std::int64_t bad : {kMin, kMax, std::int64_t{-1}, std::int64_t{1} << 41}) {
    const std::vector<std::int64_t> p = {0, bad};
    EXPECT_ERROR_NAMING(plan.rows(p, std::span<float>(out)), "position");
  }
  // The one-shot forms check the same way.
  std::vector<double> out64(4 * 8 + 1, 7.0);
  EXPECT_ERROR_NAMING(posenc::sinusoidal_table(small_sin(), 0, 4, std::span<double>(out64.data(), 4 * 8 - 1)), "out.size()");
  EXPECT_ERROR_NAMING(posenc::sinusoidal_table(small_sin(), kMax, 4, std::span<double>(out64)), "position");
  EXPECT_ERROR_NAMING(posenc::sinusoidal_rows(small_sin(), three, std::span<double>(out64.data(), 3 * 8 - 1)), "out.size()");
  EXPECT_ERROR_NAMING(posenc::sinusoidal_rows(small_sin(), std::span<const std::int64_t>(), std::span<float>(out)),
                      "positions.size()");
  EXPECT_EQ(out64.back(), 7.0) << "a refused call wrote past what it was given";
  EXPECT_EQ(out.back(), 7.0f) << "a refused call wrote past what it was given";
  EXPECT_ERROR_NAMING(posenc::sin_slot(small_sin(), 4), "pair");
  EXPECT_ERROR_NAMING(posenc::cos_slot(small_sin(), kHuge), "pair");
  EXPECT_ERROR_NAMING(posenc::position_of_token(small_sin(), -1), "token_index");
  EXPECT_ERROR_NAMING(posenc::position_of_token(small_sin(), kMax), "token_index");
}

TEST(Misuse, SinusoidalShiftOperator) {
  const posenc::SinusoidalPlan plan(small_sin());
  EXPECT_ERROR_NAMING(posenc::shift_operator(plan, kMin), "k");
  EXPECT_ERROR_NAMING(posenc::shift_operator(plan, kMax), "k");
  const posenc::ShiftOperator op = posenc::shift_operator(plan, 3);
  std::vector<double> m(8 * 8 - 1);
  EXPECT_ERROR_NAMING(posenc::dense_shift_matrix(op, std::span<double>(m)), "out.size()");
  std::vector<float> block(2 * 8);
  EXPECT_ERROR_NAMING(posenc::apply_shift(op, std::span<float>(block), 3), "block");
  EXPECT_ERROR_NAMING(posenc::apply_shift(op, std::span<float>(block), kHuge), "block");
  EXPECT_ERROR_NAMING(posenc::apply_shift(op, std::span<float>(block), kHuge, posenc::ShiftMethod::gemm), "block");
}

TEST(Misuse, GramMatrix) {
  std::vector<float> block(4 * 8), out(16);
  EXPECT_ERROR_NAMING(posenc::gram_matrix(std::span<const float>(block), 5, 8, std::span<float>(out)), "block");
  EXPECT_ERROR_NAMING(posenc::gram_matrix(std::span<const float>(block), 4, 8, std::span<float>(out.data(), 15)), "out");
  EXPECT_ERROR_NAMING(posenc::gram_matrix(std::span<const float>(block), kHuge, 8, std::span<float>(out)), "rows");
  EXPECT_ERROR_NAMING(posenc::gram_matrix(std::span<const float>(block), 4, kHuge, std::span<float>(out)), "dim");
}

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

TEST(Misuse, T5SpecsTablesAndCalls) {
  const posenc::BiasGeometry g{.query_length = 2, .key_length = 2};
  std::vector<float> out(2 * 2 * 2);
  const posenc::T5Weights w{std::vector<double>(32 * 2, 0.5)};
  for (const auto& [s, field] : refused_specs(posenc::T5Spec{.heads = 2})) {
    EXPECT_ERROR_NAMING((posenc::T5Plan{s, w}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, w), field);
    EXPECT_ERROR_NAMING(posenc::t5_bias_size(s, g), field);
    EXPECT_ERROR_NAMING(posenc::t5_bucket(s, 5), field);
  }
  const posenc::T5Spec s{.heads = 2};
  EXPECT_ERROR_NAMING((posenc::T5Plan{s, posenc::T5Weights{std::vector<double>(63, 0.5)}}), "table");
  EXPECT_ERROR_NAMING((posenc::T5Plan{s, posenc::T5Weights{std::vector<double>(64, std::numeric_limits<double>::infinity())}}), "table");
  EXPECT_ERROR_NAMING(posenc::t5_bucket(s, std::int64_t{1} << 31), "r");
  const posenc::T5Plan plan(s, w);
  EXPECT_ERROR_NAMING(plan.bucket(kMin), "r");
  std::vector<float> big(2 * 3 * 4 + 1, 7.0f);
  const std::span<float> o(big.data(), 2 * 3 * 4);
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4}, std::span<float>(big.data(), 2 * 3 * 4 - 1)), "out");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 5, .key_length = 4}, o), "query_length");
  std::vector<std::int32_t> idx(12);
  EXPECT_ERROR_NAMING(plan.buckets({.query_length = 3, .key_length = 4}, std::span<std::int32_t>(idx.data(), 11)), "out");
  EXPECT_ERROR_NAMING(plan.buckets({.query_length = 1, .key_length = kHuge}, std::span<std::int32_t>(idx)), "key_length");
  std::vector<float> q(2 * 3 * 4), k(2 * 4 * 4);
  const posenc::BiasGeometry g34{.query_length = 3, .key_length = 4};
  EXPECT_ERROR_NAMING(plan.scores(q, k, 0, g34, 1.0, o), "head_dim");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(5), k, 4, g34, 1.0, o), "q");
  EXPECT_EQ(big.back(), 7.0f) << "a refused call wrote past what it was given";
}

TEST(Misuse, FireSpecsAndWeightsThatAreNotValid) {
  const posenc::FireWeights w{.w1 = {1.0}, .b1 = {0.0}, .w2 = {0.5, -0.5}, .b2 = {0.0, 0.1}};
  const posenc::BiasGeometry g{.query_length = 2, .key_length = 2};
  std::vector<float> out(2 * 2 * 2);
  for (const auto& [s, field] : refused_specs(posenc::FireSpec{.heads = 2, .mlp_width = 1})) {
    EXPECT_ERROR_NAMING((posenc::FirePlan{s, w}), field);
    EXPECT_ERROR_NAMING(posenc::make_plan(s, w), field);
    EXPECT_ERROR_NAMING(posenc::fire_bias_size(s, g), field);
    EXPECT_ERROR_NAMING(posenc::fire_bias(s, w, g, std::span<float>(out)), field);
  }
  const posenc::FireSpec s{.heads = 2, .mlp_width = 1};
  auto with = [&](void (*mutate)(posenc::FireWeights&)) {
    posenc::FireWeights x = w;
    mutate(x);
    return x;
  };
  for (auto [field, bad] : std::vector<std::pair<std::string, posenc::FireWeights>>{
           {"w1", with([](posenc::FireWeights& x) { x.w1.clear(); })},
           {"b1", with([](posenc::FireWeights& x) { x.b1 = {0, 0}; })},
           {"w2", with([](posenc::FireWeights& x) { x.w2.pop_back(); })},
           {"b2", with([](posenc::FireWeights& x) { x.b2[1] = std::numeric_limits<double>::infinity(); })},
           {"c", with([](posenc::FireWeights& x) { x.c = std::numeric_limits<double>::quiet_NaN(); })},
           {"L_multiplier", with([](posenc::FireWeights& x) { x.L_multiplier = -1e7; })},
           {"init_L", with([](posenc::FireWeights& x) { x.init_L = 1e8; })},
       }) {
    EXPECT_ERROR_NAMING((posenc::FirePlan{s, bad}), field);
    std::vector<double> out64(2 * 2 * 2);
    EXPECT_ERROR_NAMING(posenc::fire_bias(s, bad, g, std::span<double>(out64)), field);
  }
}

TEST(Misuse, FireBiasScoresAndValues) {
  const posenc::FirePlan plan(posenc::FireSpec{.heads = 2, .mlp_width = 1, .regime = posenc::FireRegime::cramming},
                              posenc::FireWeights{.w1 = {1.0}, .b1 = {0.0}, .w2 = {0.5, -0.5}, .b2 = {0.0, 0.1}});
  std::vector<float> out(2 * 3 * 4 + 1, 7.0f);
  const std::span<float> o(out.data(), 2 * 3 * 4);
  const std::uint8_t mask3[] = {1, 1, 1}, mask_bad[] = {1, 0, 5, 1};
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4}, std::span<float>(out.data(), 2 * 3 * 4 - 1)), "out");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 5, .key_length = 4}, o), "query_length");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 1, .key_length = kHuge}, o), "key_length");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 1, .key_length = (std::size_t{1} << 24) + 1}, o), "key_length");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4, .key_mask = mask3}, o), "key_mask");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4, .key_mask = mask_bad}, o), "key_mask");
  EXPECT_ERROR_NAMING(plan.bias({.query_length = 3, .key_length = 4, .mask = static_cast<posenc::BiasMask>(9)}, o), "mask");
  EXPECT_EQ(out.back(), 7.0f) << "a refused call wrote past what it was given";
  EXPECT_ERROR_NAMING(posenc::fire_bias_size(plan.spec(), {.query_length = 9, .key_length = 4}), "query_length");
  EXPECT_ERROR_NAMING(plan.bias_value_f32(2, 0, 0), "head");
  EXPECT_ERROR_NAMING(plan.bias_value_f64(0, std::int64_t{1} << 24, 0), "q");
  EXPECT_ERROR_NAMING(plan.bias_value_f64(0, 0, kMin), "j");
  EXPECT_ERROR_NAMING(plan.normalized_distance(kMax, 0), "q");
  std::vector<float> q(2 * 3 * 4), k(2 * 4 * 4);
  const posenc::BiasGeometry g{.query_length = 3, .key_length = 4};
  EXPECT_ERROR_NAMING(plan.scores(q, k, 0, g, 1.0, o), "head_dim");
  EXPECT_ERROR_NAMING(plan.scores(q, k, 4, g, std::numeric_limits<double>::infinity(), o), "scale");
  EXPECT_ERROR_NAMING(plan.scores(std::span<const float>(q).first(5), k, 4, g, 1.0, o), "q");
  EXPECT_ERROR_NAMING(plan.scores(q, std::span<const float>(k).first(5), 4, g, 1.0, o), "k");
  EXPECT_ERROR_NAMING(plan.scores(q, k, 4, g, 1.0, std::span<float>(out.data(), 5)), "scores");
  EXPECT_ERROR_NAMING(plan.scores(q, k, 4, {.query_length = 3, .key_length = (std::size_t{1} << 24) + 1}, 1.0, o), "key_length");
  EXPECT_EQ(out.back(), 7.0f) << "a refused call wrote past what it was given";
}

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

}  // namespace

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

TEST(Misuse, AlibiGetSlopesHeads) {
  EXPECT_ERROR_NAMING(posenc::alibi_get_slopes(0), "heads");
  EXPECT_ERROR_NAMING(posenc::alibi_get_slopes(posenc::kAlibiMaxHeads + 1), "heads");
  EXPECT_EQ(posenc::alibi_get_slopes(8).front(), 0.5);  // 2^(-8/8)
}
