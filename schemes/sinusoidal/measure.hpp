// schemes/sinusoidal/measure.hpp — the one harness that measures the fast sinusoidal path against the
// oracle. The properties assert from it (claim sinks) and the accuracy sweep aggregates it into accuracy.json,
// so the tests and the report measure exactly the same thing (DESIGN.md §8).
//
// Each function computes fast values and the oracle's values and emits one case per compared number under its
// budget row (support/harness.hpp: the measure comes from the row).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "posenc/sinusoidal.hpp"
#include "verify/accuracy.hpp"
#include "support/harness.hpp"

namespace posenc::test {

enum class Path { table, rows };  // sinusoidal_table (anchor + J complex multiply) or sinusoidal_rows

// Entries of the row of position p, columns `columns` (empty: every column). Path::table computes the
// table [p - offset, p] so that p sits at offset `offset` inside its block (offset clipped to the spec's
// range and to 63), exercising the J table; Path::rows uses sinusoidal_rows({p}).
// Rows: table.{exact,emulated}.*, table.range, table.exact_values.
void measure_entries(const SinusoidalSpec&, DType, std::int64_t p, std::size_t offset,
                     const std::vector<std::size_t>& columns, const Sink&, Path = Path::table);

// The same for several output types, sharing the oracle values.
void measure_entries(const SinusoidalSpec&, std::span<const DType>, std::int64_t p, std::size_t offset,
                     const std::vector<std::size_t>& columns, const Sink&, Path = Path::table);

// The oracle reference of one entry as the budget rows define it: exact regime, the real value;
// emulated regime, sin/cos of the emulated float32 angle before the final rounding to float32.
Real entry_reference(const SinusoidalSpec&, std::int64_t p, std::size_t column);

// sinusoidal_frequencies vs the oracle (rows frequency.*).
void measure_frequencies(const SinusoidalSpec&, const Sink&);

// T(k) entries vs the oracle (shift.operator.f64 / shift.dense.f32), apply_shift(T(k), table rows
// p..p+rows-1) vs the oracle rows p+k.. (shift.apply.*) and vs sinusoidal_table(p+k, rows)
// (shift.differential.*). Exact regime; no padding row inside either range.
void measure_shift(const SinusoidalSpec&, DType, std::int64_t p, std::int64_t k, std::size_t rows, ShiftMethod,
                   const std::vector<std::size_t>& columns, const Sink&);

// PE(p).PE(p+k) of fast rows (formed exactly) vs sum_i cos(k w_i) (dot.*), or, for k = 0, ||PE(p)||^2
// vs floor(d/2) (norm.*; emulated regime allowed). Neither row may be the padding row.
void measure_dot(const SinusoidalSpec&, DType, std::int64_t p, std::int64_t k, const Sink&);

// gram_matrix of table rows p..p+rows-1 vs the closed form (gram.*, gram.symmetry).
void measure_gram(const SinusoidalSpec&, DType, std::int64_t p, std::size_t rows, const Sink&);

// Up to n columns spread over the row, always including the first and last two (deterministic).
std::vector<std::size_t> sample_columns(std::size_t dim, std::size_t n);

// "preset=... spec={...} dtype=f32 p=48039 (0x1.774p+15) col=5" style description pieces.
std::string spec_label(const SinusoidalSpec&);
std::string position_label(std::int64_t p);

}  // namespace posenc::test
