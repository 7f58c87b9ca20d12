// lib/src/core/table_kernels.hpp — the table writer's fused pass as a vector kernel (table_kernels.cpp: Highway, every
// target, dispatched to posenc's target, posenc/simd.hpp), and the unit of work it takes.
#pragma once

#include <array>
#include <cstddef>

#include "table_writer.hpp"

namespace posenc::core {

// A destination of the fused pass: where pair k0 of a part goes in the tile's first row, and the distance
// between rows.
template <class T>
struct Dest {
  Part part;
  T* p;
  std::ptrdiff_t stride;
};

// The unit of work of the fused pass: `rows` consecutive rows j0 .. j0 + rows - 1 of `groups` anchor blocks whose
// anchors' values lie `anchor_stride` apart and whose output rows lie `group_rows` rows apart, pairs k0 .. k0 + n - 1.
// Row j of every block in the group is written before row j + 1 of any, so that row j's slice of J (2 KiB for a
// chunk, from L2) is read into L1 once and used for every anchor of the group.
template <class T>
struct Tile {
  const double *sa, *ca;  // the first anchor's values at pair k0
  const double* j;        // J at (first row, k0): sin at j + r * 2 kChunk, cos kChunk further (angle_table.hpp)
  std::size_t rows, n;
  std::array<Dest<T>, 4> dest;  // the first block's rows
  std::size_t nd;
  double scale = 1.0;       // RowForm::scale
  bool negate_sin = false;  // RowForm::negate_sin
  std::size_t groups = 1;
  std::size_t anchor_stride = 0;    // doubles from one anchor's values to the next one's
  std::ptrdiff_t group_rows = 0;    // output rows from one block's row j to the next block's row j
};

namespace kernels {

// The fused pass over a tile with the operations of table_writer.cpp's fused_scalar, bit for bit. stream: every
// store a non-temporal store of whole aligned lines (the caller guarantees 64-byte aligned rows and n a multiple of
// 16). Returns false, having written nothing, on a scalar target or (stream) where the target's vectors are wider
// than a line.
bool fused(const Tile<float>& t, bool stream) noexcept;
bool fused(const Tile<double>& t, bool stream) noexcept;

}  // namespace kernels
}  // namespace posenc::core
