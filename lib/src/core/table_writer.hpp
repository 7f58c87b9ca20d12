// lib/src/core/table_writer.hpp — every table of (sin, cos)(p omega_k) that posenc writes (sinusoidal tables
// and rows, RoPE cos/sin caches in each engine's form) goes through here, so the fast path is written once.
//
// A row form says where pair k's values go: up to four segments, each a contiguous run in some output plane
// (sin values, cos values, or the pair interleaved as (sin, cos) or (cos, sin)). A form is a pure layout: the
// values are AngleTable's (anchor (x) J, angle_table.hpp), so a position's row is bit-identical in every form,
// call, thread count and store path.
//
// How it is fast (issue "Tables at memory speed"; measurements in reports/latest/<scheme>/performance.md):
//  * one pass per output entry: the complex multiply, the rounding to T and the layout are fused (the vector
//    kernel of posenc's SIMD target, table_kernels.cpp; a portable loop of the same operations on a scalar target);
//  * the anchor block stays B = 64 rows at any width: the row is cut into column chunks of kChunkPairs pairs,
//    so the slice of J a block reads (B x kChunkPairs x 16 bytes) stays in L2 while the block's rows are
//    written and an anchor costs 1/64 of a row whatever the width;
//  * outputs larger than the private caches are written with non-temporal stores of whole cache lines straight
//    from registers (or from a chunk staged in L1 where rows are not whole lines; no read-for-ownership), in
//    groups of up to 8 anchor blocks: row j of every block of the group before row j + 1, so that row j's slice of
//    J is read into L1 once per group (writing block by block cost two lines of J per streamed line); smaller
//    outputs are written in place from registers, in groups too (there J's slices came from L2 for every row);
//  * threads take whole blocks (or fixed chunks of a position list): which thread writes a row never changes it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "angle_table.hpp"
#include "posenc/options.hpp"

namespace posenc::core {

enum class Part : std::uint8_t {
  sin,      // s_k at offset + k
  cos,      // c_k at offset + k
  sin_cos,  // s_k at offset + 2k, c_k at offset + 2k + 1
  cos_sin,  // c_k at offset + 2k, s_k at offset + 2k + 1
};

template <class T>
struct Segment {
  Part part;
  T* base;                    // the plane: row i of the output starts at base + (origin + i * row_stride)
  std::ptrdiff_t row_stride;  // elements (negative: rows written in descending memory order)
  std::size_t offset;         // elements from the row's start to pair 0's first value
  // Elements from base to row 0 (a re-based form, whose row 0 may lie outside the plane): kept as an integer and
  // added to base only together with the row's, so no pointer outside the plane is ever formed (that is
  // undefined behaviour even when never dereferenced; UBSan's pointer-overflow check caught base += r0 * stride).
  std::ptrdiff_t origin = 0;

  T* row_start(std::size_t row) const noexcept { return base + (origin + static_cast<std::ptrdiff_t>(row) * row_stride); }
};

template <class T>
struct RowForm {
  std::array<Segment<T>, 4> segments{};
  std::size_t count = 0;                  // segments in use
  std::optional<std::size_t> zero_column; // a column of segments[0]'s plane set to 0 in every row (odd dim)
  // Every value times `scale` before its rounding to T (RoPE's attention factor m): v = RN_T(RN64(c_d m)) with
  // c_d the double value clamped to [-1, 1], the operations of the per-token path (c_d from AngleTable::rotate,
  // then c_d * m), so both give the same bits.
  double scale = 1.0;
  // Every sin value negated (exactly: a sign flip commutes with rounding): with the rows of |p| this writes the
  // rows of -p, the exact reflection (sin odd, cos even). Set by write_table for negative positions, not by callers.
  bool negate_sin = false;

  RowForm& add(Part part, T* base, std::size_t row_stride, std::size_t offset) {
    segments[count++] = {part, base, static_cast<std::ptrdiff_t>(row_stride), offset};
    return *this;
  }
};

// The rows to write: output row i holds position first + i (a range), first - i (a descending range) or
// positions[i] (a list). Inside a list, runs of at least kMinRun consecutive positions (step +1 or -1) are written
// as ranges.
struct PositionSource {
  std::int64_t first = 0;
  std::size_t count = 0;
  std::span<const std::int64_t> list{};  // non-empty: a list (then count == list.size())
  bool descending = false;               // a range: row i holds first - i

  std::int64_t at(std::size_t i) const noexcept {
    return !list.empty() ? list[i] : descending ? first - static_cast<std::int64_t>(i) : first + static_cast<std::int64_t>(i);
  }
};

// Pairs k0 .. k1 - 1 of row `row` of `form` from given values s[k], c[k], each rounded once to T: for rows whose
// values do not come from an AngleTable (the emulated regimes), so every layout is still described once, by its form.
template <class T>
void put_pairs(const RowForm<T>& form, std::size_t row, const double* s, const double* c, std::size_t k0,
               std::size_t k1) noexcept {
  for (std::size_t i = 0; i < form.count; ++i) {
    const Segment<T>& g = form.segments[i];
    T* p = g.row_start(row) + g.offset;
    switch (g.part) {  // one loop per part (a switch inside the loop kept it scalar: ~30% of an xPos cache)
      case Part::sin: for (std::size_t k = k0; k < k1; ++k) p[k] = static_cast<T>(s[k]); break;
      case Part::cos: for (std::size_t k = k0; k < k1; ++k) p[k] = static_cast<T>(c[k]); break;
      case Part::sin_cos:
        for (std::size_t k = k0; k < k1; ++k) p[2 * k] = static_cast<T>(s[k]), p[2 * k + 1] = static_cast<T>(c[k]);
        break;
      case Part::cos_sin:
        for (std::size_t k = k0; k < k1; ++k) p[2 * k] = static_cast<T>(c[k]), p[2 * k + 1] = static_cast<T>(s[k]);
        break;
    }
  }
}
// The form's zero column of row `row`, if it has one.
template <class T>
void put_zero_column(const RowForm<T>& form, std::size_t row) noexcept {
  if (form.zero_column) form.segments[0].row_start(row)[*form.zero_column] = T(0);
}
// Row `row` of `form` (pairs 0 .. h - 1 and the zero column) from given values s[k], c[k].
template <class T>
void put_row(const RowForm<T>& form, std::size_t row, const double* s, const double* c, std::size_t h) noexcept {
  put_pairs(form, row, s, c, 0, h);
  put_zero_column(form, row);
}

// Writes the rows of `src` in `form`. `zero_position`: a position whose row is all zeros (a padding row).
// `output_bytes` decides the store path (worth_streaming) and `elements` the thread count. Allocates its
// per-thread scratch before any parallel region (std::bad_alloc on the caller's thread); never throws after.
template <class T>
void write_table(const AngleTable& table, const PositionSource& src, const RowForm<T>& form,
                 std::optional<std::int64_t> zero_position, const TableOptions& opt, std::size_t elements);

}  // namespace posenc::core
