// schemes/kerple/cases.hpp — the KERPLE case table: parameters, hard lengths and distances, benchmark sizes that
// the properties, the accuracy sweep and the benchmarks all use. Header-only data, no test framework.
// Presets are not repeated here: every consumer iterates SpecTraits<KerpleSpec>::presets().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace posenc::cases::kerple {

// Parameters at the clamp edges and the ranges the reference initialises (p ~ U(0, 2), a ~ U(0, 1)), plus values
// a trained model leaves (p, a > 1) and the exact cases of the power kernel (p = 1, 2, 0.5).
inline constexpr double kHardP[] = {-1.0, 0.0, 0.005, 0.01, 0.0100001, 0.5, 1.0, 1.5, 2.0, 2.5, 7.0};
inline constexpr double kHardA[] = {-1.0, 0.0, 0.01, 0.05, 0.25, 1.0, 3.0, 100.0};

// Key lengths at the fast path's seams (64 query rows per work item) and long single-query rows.
inline constexpr std::size_t kHardLengths[] = {1, 2, 63, 64, 65, 127, 128, 129, 1000};

// Distances where float32 stops being exact (D = RN32(d) above 2^24) or the range ends.
inline constexpr std::int64_t kHardDistances[] = {0, 1, 2, 3, 255, 256, 4095, 100000, (std::int64_t{1} << 24) - 1,
                                                  std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1,
                                                  (std::int64_t{1} << 24) + 3, (std::int64_t{1} << 31) - 1};

// Benchmarks: H x L x L bias generation (H = 32, L in {512, 4096}; f32: 32 MiB and 2 GiB) and fused scores + bias
// against a plain sgemm of the same shape (one head, L = 4096, head_dim 128).
inline constexpr std::size_t kBenchHeads = 32;
inline constexpr std::array<std::size_t, 2> kBenchLengths{512, 4096};
inline constexpr std::size_t kBenchScoresLength = 4096;
inline constexpr std::size_t kBenchHeadDim = 128;

// The accuracy sweep: distances per octave 0 .. 2^31.
inline constexpr int kSweepStepsPerOctave = 2;

}  // namespace posenc::cases::kerple
