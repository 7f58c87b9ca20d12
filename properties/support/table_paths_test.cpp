// properties/support/table_paths_test.cpp — the table writer's signed paths (negative and descending runs,
// lib/src/core/table_writer.cpp) in posenc_api_tests, so that CI's bounded sanitizer run (scripts/sanitize.sh ci)
// reaches them: rows far from position 0 on the negative side are written through a form re-based to the row of
// position 0, which lies outside the output (f173d7f: forming that pointer was undefined behaviour, caught only by
// the main job's full UBSan run, at positions near 2^40). The values are held to the exact reflection
// PE(-p) = (-sin, cos)(p), bit for bit, and to rows written one at a time.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "posenc/sinusoidal.hpp"

namespace {

posenc::SinusoidalSpec signed_spec() {
  posenc::SinusoidalSpec spec;
  spec.dim = 64;
  spec.layout = posenc::Layout::halves;  // [sin | cos]
  spec.signed_positions = true;
  return spec;
}

std::vector<float> table(std::int64_t first, std::size_t count) {
  std::vector<float> out(count * signed_spec().dim);
  posenc::sinusoidal_table(signed_spec(), first, count, std::span<float>(out));
  return out;
}

std::vector<float> rows(const std::vector<std::int64_t>& positions) {
  std::vector<float> out(positions.size() * signed_spec().dim);
  posenc::sinusoidal_rows(signed_spec(), std::span<const std::int64_t>(positions), std::span<float>(out));
  return out;
}

TEST(TablePaths, NegativeRangeFarFromZeroIsTheExactReflection) {
  const std::size_t n = 300, d = signed_spec().dim, h = d / 2;
  const std::vector<float> neg = table(-20299, n), pos = table(20000, n);  // rows -20299 .. -20000, 20000 .. 20299
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < h; ++k) {
      const std::size_t r = n - 1 - i;  // row of -p in neg for row i (p = 20000 + i) of pos
      ASSERT_EQ(neg[r * d + k], -pos[i * d + k]) << "sin, p = " << 20000 + i << ", k = " << k;  // halves: sin | cos
      ASSERT_EQ(neg[r * d + h + k], pos[i * d + h + k]) << "cos, p = " << 20000 + i << ", k = " << k;
    }
}

// Ranges near |p| = 2^40 (the largest positions accepted): the row of position 0 lies 2^40 rows away from the
// output, 2^47 bytes here, past the bottom of the address space: UBSan's pointer-overflow check trips there.
TEST(TablePaths, RangesNearTwoToTheFortyEqualRowsWrittenOneByOne) {
  const std::int64_t far = (std::int64_t{1} << 40) - 200;
  const std::size_t d = signed_spec().dim;
  for (const std::int64_t first : {far, -far - 199}) {
    const std::vector<float> all = table(first, 200);
    for (std::size_t i = 0; i < 200; i += 37) {
      const std::vector<float> one = rows({first + static_cast<std::int64_t>(i)});
      for (std::size_t c = 0; c < d; ++c) ASSERT_EQ(all[i * d + c], one[c]) << "p = " << first + i << ", column " << c;
    }
  }
}

TEST(TablePaths, DescendingAndNegativeRunsOfAListEqualRowsWrittenOneByOne) {
  std::vector<std::int64_t> list;
  for (std::int64_t p = -3000; p > -3200; --p) list.push_back(p);  // a descending run of 200 (block path)
  for (std::int64_t p = 5000; p > 4800; --p) list.push_back(p);    // a descending positive run
  list.push_back(-7);
  list.push_back(123456);
  const std::vector<float> all = rows(list);
  const std::size_t d = signed_spec().dim;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::vector<float> one = rows({list[i]});
    for (std::size_t c = 0; c < d; ++c) ASSERT_EQ(all[i * d + c], one[c]) << "p = " << list[i] << ", column " << c;
  }
}

}  // namespace
