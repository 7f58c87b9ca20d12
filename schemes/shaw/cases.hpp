// schemes/shaw/cases.hpp — the Shaw / BERT relative_key case table: hard lengths and benchmark sizes that the
// properties, the accuracy sweep and the benchmarks all use. Header-only data, no test framework.
// Presets are not repeated here: every consumer iterates SpecTraits<ShawSpec>::presets().
#pragma once

#include <array>
#include <cstddef>

namespace posenc::cases::shaw {

// Key lengths at the fast path's seams: the index/score row writer's 64-row work items, the attention output's
// 128-row blocks, the causal scores gemm's 256-row blocks, and lengths around the clipping distance of t2t (k = 20:
// 20, 21, 22, 41, 42).
inline constexpr std::size_t kHardLengths[] = {1, 2, 20, 21, 22, 41, 42, 63, 64, 65, 127, 128, 129, 255, 256, 257};

// Benchmarks: index matrices (int32) at L in {512, 8192, 16384}; scores and outputs of one head at L = 4096,
// head_dim 64, against a plain Q K^T sgemm of the same shape.
inline constexpr std::array<std::size_t, 3> kBenchIndexLengths{512, 8192, 16384};
inline constexpr std::size_t kBenchScoresLength = 4096;
inline constexpr std::size_t kBenchHeadDim = 64;

}  // namespace posenc::cases::shaw
