// schemes/alibi/cases.hpp — the ALiBi case table: head counts, hard lengths and distances, benchmark sizes that
// the properties, the accuracy sweep and the benchmarks all use. Header-only data, no test framework.
// Presets are not repeated here: every consumer iterates SpecTraits<AlibiSpec>::presets().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace posenc::cases::alibi {

// Head counts the issue names for the non-power-of-two rule, plus the model sizes in use (BLOOM 16/112, MPT 32/64,
// Falcon-era 71) and the edges (1, 2, 3, 127, 128, 129).
inline constexpr std::size_t kHeadCounts[] = {1, 2, 3, 5, 6, 7, 8, 12, 16, 24, 32, 40, 64, 66, 71, 72, 96, 112, 127, 128, 129};

// Key lengths at the fast path's seams: 1, around its row block (64 query rows per work item), around the
// streaming-store threshold (4 MiB of output), and long single-query rows.
inline constexpr std::size_t kHardLengths[] = {1, 2, 63, 64, 65, 127, 128, 129, 1000};

// Distances where float32 stops being exact or the range ends (keys at 0 .. 2^31 - 2 relative to a query at most
// 2^31 - 2 away): the emulated regimes round RN32(x) above 2^24.
inline constexpr std::int64_t kHardDistances[] = {0, 1, 2, 255, 256, 4095, 100000, (std::int64_t{1} << 24) - 1,
                                                  std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1,
                                                  (std::int64_t{1} << 24) + 3, (std::int64_t{1} << 31) - 2};

// Benchmarks: H x L x L bias generation (H = 32, L in {512, 4096}; f32: 32 MiB and 2 GiB) and fused scores + bias
// against a plain sgemm of the same shape (one head, L = 4096, head_dim 128).
inline constexpr std::size_t kBenchHeads = 32;
inline constexpr std::array<std::size_t, 2> kBenchLengths{512, 4096};
inline constexpr std::size_t kBenchScoresLength = 4096;
inline constexpr std::size_t kBenchHeadDim = 128;

// The accuracy sweep: distances per octave 0 .. 2^31 and the head counts measured.
inline constexpr int kSweepStepsPerOctave = 2;
inline constexpr int kSweepStepsPerOctaveLong = 8;

}  // namespace posenc::cases::alibi
