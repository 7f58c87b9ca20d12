// schemes/sinusoidal/misuse_test.cpp — the sinusoidal scheme's public functions called the wrong way (properties/support/misuse.hpp:
// each call must throw posenc::Error naming what was wrong and write nothing outside what it was given; program
// posenc_api_tests).
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posenc/sinusoidal.hpp"
#include "support/misuse.hpp"

namespace misuse_sinusoidal {  // its own namespace: the scheme files are compiled into one program
using namespace posenc::test::misuse;

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

}  // namespace misuse_sinusoidal
