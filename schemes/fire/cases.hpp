// schemes/fire/cases.hpp — the FIRE case table: weights, thresholds, hard positions and lengths, benchmark sizes
// that the properties, the accuracy sweep and the benchmarks all use. Header-only data, no test framework.
// Presets are not repeated here: every consumer iterates SpecTraits<FireSpec>::presets().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace posenc::cases::fire {

// c: the reference's init 0.1, trained-looking values, 0 (x = 0 everywhere) and negative (the code's |c|).
inline constexpr double kHardC[] = {0.1, 0.0, -0.1, 1.0, 0.01, 3.5, 1e-6, 1000.0};
// Thresholds |L_multiplier init_L|: the init 512, 0 (normalizer = q), non-integers, a negative multiplier.
inline constexpr double kHardLMultiplier[] = {1.0, 0.0, -1.0, 0.5, 1.0000001, 2.75, 1e-3};
inline constexpr double kHardInitL[] = {512.0, 1.0, 100.5, 4096.0};
inline constexpr double kHardEps[] = {1e-6, 1e-12, 1e-3, 1.0};

// Query positions at the threshold's seam (for L = 512), small, and at the end of the float32 position range.
inline constexpr std::int64_t kHardPositions[] = {0,    1,    2,     255,      256,   257,    511,
                                                  512,  513,  1000,  4095,     4096,  65536,  (std::int64_t{1} << 24) - 2,
                                                  (std::int64_t{1} << 24) - 1};

// Key lengths at the fast path's seams: 64 query rows per work item, 256 keys per MLP chunk, the threshold 512.
inline constexpr std::size_t kHardLengths[] = {1, 2, 63, 64, 65, 255, 256, 257, 511, 512, 513, 600};

// Benchmarks: H x L x L bias generation (H = 32 heads as the issue asks, width 32: the reference's default; L in {512, 4096}) and
// fused scores + bias against a plain sgemm of the same shape (one head, L = 4096, head_dim 128).
inline constexpr std::size_t kBenchHeads = 32;
inline constexpr std::size_t kBenchWidth = 32;
inline constexpr std::array<std::size_t, 2> kBenchLengths{512, 4096};
inline constexpr std::size_t kBenchScoresLength = 4096;
inline constexpr std::size_t kBenchHeadDim = 128;

// The accuracy sweep: query positions per octave 1 .. 2^24.
inline constexpr int kSweepStepsPerOctave = 2;

}  // namespace posenc::cases::fire
