// schemes/sinusoidal/cases.hpp — the sinusoidal case table: the shapes, sizes and hard positions that the
// properties, the accuracy sweep and the benchmarks all use (one list, as ggml's test-backend-ops keeps one case
// list for its test and perf modes). Header-only data, no test framework: benchmarks include it too.
// Presets are not repeated here: every consumer iterates SpecTraits<SinusoidalSpec>::presets().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace posenc::cases::sinusoidal {

// Positions where sin/cos implementations or posenc's own kernels have failed or could (DESIGN.md §3): 0 and the
// first few, 48039 (common fast reductions fail there), 131071, around 2^20 and 2^24 (float32 stops representing
// every integer above 2^24). Powers of two +-1 up to 2^40, the top of the accepted range and angles within a few
// ulps of multiples of pi/2 are added per spec by the generators (they depend on the spec). Emulated regime at
// d 64: 258182 (tensor2tensor and fairseq, pair 11), 3108646 (vaswani and marian, pair 20) and 2331155
// (transformer-xl, pair 19) give the float32 angle
// 0x1.33333p+13, whose sin lies so close to a float32 midpoint that RN32 of the double sin is one ulp off: only
// the binary128 path of lib/src/core/sincos32.hpp rounds it correctly (found by scanning p < 2^22).
inline constexpr std::int64_t kNamedHardPositions[] = {
    0, 1, 2, 3, 48039, 131071, 258182, 2331155, 3108646,
    (std::int64_t{1} << 20) - 2, (std::int64_t{1} << 20) - 1, std::int64_t{1} << 20, (std::int64_t{1} << 20) + 1,
    (std::int64_t{1} << 20) + 2,
    (std::int64_t{1} << 24) - 2, (std::int64_t{1} << 24) - 1, std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1,
    (std::int64_t{1} << 24) + 2};

// Offsets of a position inside its anchor block (B = 4..64 rows): the first row, the second, the block's last
// rows and the middle of the largest block, so the in-block table is exercised at its ends.
inline constexpr std::size_t kBlockOffsets[] = {0, 1, 2, 3, 4, 7, 31, 32, 62, 63};

// Table sizes (rows L x columns d). Benchmarks keep the cells whose output is cache-resident (<= 1 MiB) or
// DRAM-sized (>= 512 MiB) (benchmarks/suites.hpp); the sweep measures error vs position at the sweep dims.
inline constexpr std::array<std::int64_t, 4> kTableRows{512, 2048, 8192, 32768};
inline constexpr std::array<std::int64_t, 4> kTableDims{64, 256, 1024, 4096};

// The accuracy sweep: dims, and points per octave of position (0 .. 2^40).
struct SweepMode {
  std::array<std::size_t, 4> dims;
  std::size_t n_dims;
  int steps_per_octave;
};
inline constexpr SweepMode kSweepSmoke{{64}, 1, 1};
inline constexpr SweepMode kSweepDefault{{64, 512}, 2, 2};
inline constexpr SweepMode kSweepLong{{7, 64, 512, 2048}, 4, 8};

// Shift offsets k of T(k) (plus convergents of 2 w_0 / pi, added per spec).
inline constexpr std::int64_t kShifts[] = {1, 7, 1000, 48039, std::int64_t{1} << 20};

// Property dimensions: tiny (2..8), odd, powers of two and others up to this size.
inline constexpr std::size_t kPropertyMaxDim = 8192;

}  // namespace posenc::cases::sinusoidal
