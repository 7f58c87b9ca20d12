// schemes/rope/cases.hpp — the RoPE case table: the shapes, sizes and hard positions that the properties, the
// accuracy sweep and the benchmarks all use. Header-only data, no test framework: benchmarks include it too.
// Presets are not repeated here: every consumer iterates SpecTraits<RopeSpec>::presets().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace posenc::cases::rope {

// Positions where float32 angles, reductions or the angle core's blocks are hard: 0 and the first few, 4095
// (ggml/HF differ visibly there), 48039, around 2^20 and 2^24 (float32 stops representing every integer above
// 2^24: the hf and ggml angles use RN32(p)), 10^5, and the top of the range. Float32 angles of hf-llama (d 128)
// whose sin/cos the double evaluation cannot round (lib/src/core/sincos32.hpp; found by scanning p < 2^22
// against binary128 sinq/cosq): 467401 (pair 31) and 532308 (pair 15, a cos of 2.1e-7 whose float32 ulps are
// finer than 2^-52) take the binary128 path; at 638368 (pair 29) RN32 of the double sin is one ulp off.
inline constexpr std::int64_t kHardPositions[] = {
    0, 1, 2, 3, 63, 64, 4095, 48039, 100000, 131071, 467401, 532308, 638368,
    (std::int64_t{1} << 20) - 1, std::int64_t{1} << 20, (std::int64_t{1} << 20) + 1,
    (std::int64_t{1} << 24) - 1, std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1, (std::int64_t{1} << 24) + 3,
    std::int64_t{1} << 32, (std::int64_t{1} << 40) - 1, std::int64_t{1} << 40};

// Shifts of both positions in the relative-score claim (issue: s in {1, 1000, 1e5, 2^20, 2^24}).
inline constexpr std::int64_t kScoreShifts[] = {1, 1000, 100000, std::int64_t{1} << 20, std::int64_t{1} << 24};

// Head dimensions of the layout-equivalence claim (HF Llama checkpoint permutation).
inline constexpr std::size_t kLayoutHeadDims[] = {64, 80, 96, 128, 256};

// Benchmarks: in-place rotation of [T][heads][head_dim] f32 (T = 1024: 16 MiB, as the issue names it; T = 32768:
// 512 MiB in DRAM), and cache generation for the same positions.
inline constexpr std::size_t kBenchHeads = 32;
inline constexpr std::size_t kBenchHeadDim = 128;
inline constexpr std::array<std::int64_t, 2> kBenchTokens{1024, 32768};

// The accuracy sweep: head dims and points per octave of position (0 .. 2^40).
struct SweepMode {
  std::array<std::size_t, 2> head_dims;
  std::size_t n_dims;
  int steps_per_octave;
};
inline constexpr SweepMode kSweepSmoke{{64}, 1, 1};
inline constexpr SweepMode kSweepDefault{{64, 128}, 2, 2};
inline constexpr SweepMode kSweepLong{{64, 128}, 2, 8};

}  // namespace posenc::cases::rope
