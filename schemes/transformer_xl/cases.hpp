// schemes/transformer_xl/cases.hpp — the Transformer-XL case table: hard lengths and benchmark sizes that the
// properties, the accuracy sweep and the benchmarks all use. Header-only data, no test framework.
// Presets are not repeated here: every consumer iterates SpecTraits<TransformerXlSpec>::presets().
#pragma once

#include <array>
#include <cstddef>

namespace posenc::cases::transformer_xl {

// Query lengths at the blas form's seams (256-row blocks) and memory lengths of the issue (M in {0, 1, 7, 128}).
inline constexpr std::size_t kHardQueryLengths[] = {1, 2, 7, 255, 256, 257};
inline constexpr std::size_t kMemoryLengths[] = {0, 1, 7, 128};

// Benchmarks: the table (R of a call: L x d_model) and the scores of one head at L = 4096, d_head 64 (d_model 64),
// against a plain Q K^T sgemm of the same shape; the table also at a DRAM size (2^18 rows of 1024: 1 GiB in f32).
inline constexpr std::size_t kBenchScoresLength = 4096;
inline constexpr std::size_t kBenchHeadDim = 64;
inline constexpr std::array<std::size_t, 2> kBenchTableRows{256, std::size_t{1} << 18};
inline constexpr std::size_t kBenchTableDModel = 1024;

}  // namespace posenc::cases::transformer_xl
