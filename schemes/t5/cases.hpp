// schemes/t5/cases.hpp — the T5 case table: bucket configurations, hard lengths and benchmark sizes that the
// properties, the accuracy sweep and the benchmarks all use. Header-only data, no test framework.
// Presets are not repeated here: every consumer iterates SpecTraits<T5Spec>::presets().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace posenc::cases::t5 {

struct Buckets {
  std::size_t num_buckets;
  std::int64_t max_distance;
};
// The configurations of issue "Clipped and bucketed relative positions" (T5 / mT5 / LongT5 use (32, 128)), HF's
// held-out set (properties/heldout/data/hf/t5_buckets.json), and four where HF's float32 steps and the exact
// buckets differ (found by the oracle's author with an independent exact model: (34, 27) and (96, 81) at a = 12, 18
// and 36, 54, where the float32 z lands one ulp below an exact integer; (19, 25) unidirectional at 15; (31, 532)
// unidirectional at 218, where z = 11.9999995 rounds up to 12).
inline constexpr Buckets kConfigs[] = {{32, 128}, {32, 256}, {64, 128}, {128, 1024}, {8, 16}, {16, 64}, {64, 256},
                                       {128, 128}, {34, 27}, {96, 81}, {19, 25}, {31, 532}};

// Key lengths at the row writer's seams (64 query rows per work item) and long single-query rows.
inline constexpr std::size_t kHardLengths[] = {1, 2, 63, 64, 65, 127, 128, 129, 1000};

// Benchmarks: bucket matrices (int32, one matrix) at L in {512, 8192, 16384}; bias matrices (f32, 32 heads) at L in
// {512, 4096}; fused scores (one head, L = 4096, head_dim 64) against a plain sgemm.
inline constexpr std::array<std::size_t, 3> kBenchBucketLengths{512, 8192, 16384};
inline constexpr std::size_t kBenchHeads = 32;
inline constexpr std::array<std::size_t, 2> kBenchLengths{512, 4096};
inline constexpr std::size_t kBenchScoresLength = 4096;
inline constexpr std::size_t kBenchHeadDim = 64;

}  // namespace posenc::cases::t5
