// schemes/learned/cases.hpp — the learned-positions case table: inputs and sizes that the properties, the
// accuracy sweep and the benchmarks all use. Header-only data, no test framework.
// Presets are not repeated here: every consumer iterates SpecTraits<LearnedSpec>::presets().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace posenc::cases::learned {

// ---- Benchmarks (schemes/learned/bench.cpp) ------------------------------------------------------------
// rows: LearnedPlan::rows, the gather of L rows from a float64 table, against stores / a memcpy of the same output
// bytes. Two tables: RoBERTa's (514 = 512 + 2 rows, hidden 768) and an OPT-like one (2050 = 2048 + 2 rows, hidden
// 4096: OPT-6.7B's max_position_embeddings + offset and hidden size). The ids of a table are those of consecutive
// full-length sequences (first id 2, padding_idx 1 / OPT's offset 2: ids 2 .. rows-1, then again from 2), L ids in
// all: one sequence's worth (512) and a batch of them (32768).
struct LearnedBenchTable {
  std::size_t rows, dim;
};
inline constexpr std::array<LearnedBenchTable, 2> kBenchTables{{{514, 768}, {2050, 4096}}};
inline constexpr std::array<std::size_t, 2> kBenchLengths{512, 32768};
inline constexpr std::int64_t kBenchFirstId = 2;  // RoBERTa's padding_idx + 1; OPT's offset

// ids: position_ids for each id map over one sequence of 2^20 tokens (past 0), against a plain loop writing L
// int64 (arange into a fresh std::vector, as position_ids returns one). make_positions reads tokens with every
// kBenchPaddingEvery-th one the padding id; cumsum_mask a mask with every kBenchPaddingEvery-th entry 0.
inline constexpr std::size_t kBenchIdsLength = std::size_t{1} << 20;
inline constexpr std::size_t kBenchPaddingEvery = 7;

}  // namespace posenc::cases::learned
