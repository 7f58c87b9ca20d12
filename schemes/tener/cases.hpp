// schemes/tener/cases.hpp — the TENER case table: hard lengths and benchmark sizes that the properties, the accuracy
// sweep and the benchmarks all use. Header-only data, no test framework.
#pragma once

#include <array>
#include <cstddef>

namespace posenc::cases::tener {

// Lengths at the blas form's seams (256-row blocks of queries and keys) and around init_size / 2 of small modules.
inline constexpr std::size_t kHardLengths[] = {1, 2, 3, 255, 256, 257};

// Benchmarks: the table of a call (2L rows of d_head) at a cache and a DRAM size, and the scores of one head at L =
// 4096, d_head 64, against a plain Q K^T sgemm of the same shape (three gemms: content, query and key terms).
inline constexpr std::size_t kBenchScoresLength = 4096;
inline constexpr std::size_t kBenchHeadDim = 64;
inline constexpr std::array<std::size_t, 2> kBenchTableRows{256, std::size_t{1} << 18};
inline constexpr std::size_t kBenchTableDim = 1024;

}  // namespace posenc::cases::tener
