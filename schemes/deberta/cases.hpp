// schemes/deberta/cases.hpp — the DeBERTa case table: bucket configurations, hard lengths and benchmark sizes that
// the properties, the accuracy sweep and the benchmarks all use. Header-only data, no test framework.
// Presets are not repeated here: every consumer iterates SpecTraits<DebertaSpec>::presets().
#pragma once

#include <array>
#include <cstddef>

namespace posenc::cases::deberta {

struct Buckets {
  std::size_t position_buckets;
  std::size_t max_relative_positions;
};
// HF's held-out configurations (properties/heldout/data/hf/deberta_buckets.json: (256, 512) of every DeBERTa-v2/v3
// checkpoint, (128, 512), (64, 256), (32, 64), and build_relative_position's (4, 8), (8, 16)), plus odd bucket
// counts (mid = bs // 2) and the smallest ones (mid = 1: N = 0, every log level is mid).
inline constexpr Buckets kConfigs[] = {{256, 512}, {128, 512}, {64, 256}, {32, 64}, {4, 8}, {8, 16},
                                       {257, 1000}, {3, 5},  {2, 3},    {512, 2048}};
// Lengths at the index writer's seams (64 query rows per work item) and the gather's 256-key tiles.
inline constexpr std::size_t kHardLengths[] = {1, 2, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300};

// Benchmarks: relative-position matrices (int32) at L in {512, 8192, 16384}; disentangled scores (12 heads of a
// deberta-v3-base layer, one head measured: L = 4096, head_dim 64) against a plain Q K^T sgemm of the same shape.
inline constexpr std::array<std::size_t, 3> kBenchIndexLengths{512, 8192, 16384};
inline constexpr std::size_t kBenchScoresLength = 4096;
inline constexpr std::size_t kBenchHeadDim = 64;

}  // namespace posenc::cases::deberta
