// schemes/nezha/cases.hpp — the NEZHA case table: hard lengths and benchmark sizes that the properties, the
// accuracy sweep and the benchmarks all use. Header-only data, no test framework.
// Presets are not repeated here: every consumer iterates SpecTraits<NezhaSpec>::presets().
#pragma once

#include <array>
#include <cstddef>

namespace posenc::cases::nezha {

// Key lengths at the Shaw plan's seams (64-row work items, 128-row output blocks, 256-row causal score blocks) and
// around the clipping distance of the preset (K = 64: 64, 65, 66, 129, 130).
inline constexpr std::size_t kHardLengths[] = {1, 2, 63, 64, 65, 66, 127, 128, 129, 130, 255, 256, 257};

// Benchmarks: the table (K = 64 and 2^14, depth 64), the attention output of one head at L = 4096, depth 64, against a
// plain Q K^T sgemm of the same shape.
inline constexpr std::array<std::size_t, 2> kBenchTableK{64, 16384};
inline constexpr std::size_t kBenchScoresLength = 4096;
inline constexpr std::size_t kBenchDepth = 64;

}  // namespace posenc::cases::nezha
