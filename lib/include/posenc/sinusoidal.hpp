// posenc/sinusoidal.hpp — fast sinusoidal absolute encodings, the shift operator T(k) and Gram matrices.
//
// Tables
//   sinusoidal_table(spec, first, count, out): rows for positions first .. first+count-1, row-major,
//   count x spec.dim, into caller memory (out.size() >= count * dim, else Error). Positions are the
//   spec's position numbers (fairseq: row numbers; the first token is spec.first_position).
//   sinusoidal_rows(spec, positions, out): the same for an explicit list of positions.
//
// Accuracy contract (exact regime; measured by properties/, budget rows in properties/support/budget.cpp):
//   every entry is computed in double from the angle p*omega_k formed and reduced in double-double
//   (omega_k correctly rounded to 106 bits), then rounded once to the output type.
//   float:  |y - r| <= 0.25 ulp_f32(1) + 2^-45 for all accepted positions (|p| <= 2^40), i.e. the scaled
//           error err_S (S = 1) is at most 0.25 + 2^-22; entries with |r| >= 2^-16 are within
//           0.5 + 2^-9 ulp of r (nearly correctly rounded).
//   double: |y - r| <= 4 ulp_f64(1) (err_S <= 4, S = 1); see the budget row for the analysis.
// Emulated regime: the float32 number of tensor2tensor / fairseq (CONVENTIONS.md §2.1), reproduced
//   step by step (float32 products, correctly rounded float32 exp/sin/cos); double output holds that
//   float32 value exactly. Agreement with the step-by-step oracle: <= 0.5 + 2^-24 ulp_f32 (the margin
//   covers the double rounding of sin/cos evaluated in double, which happens with probability ~2^-28).
//
// Performance: elementwise, OpenMP over row blocks, streaming stores for outputs larger than the L2.
// Rows are produced by rotating an exactly computed anchor row (see lib/src/sinusoidal.cpp), so each
// entry is one complex multiply from exact values: no recurrence, no error growth with position.
//
// Shift operator (seed 000, CONVENTIONS §2.1): PE(p+k) = T(k) PE(p), T(k) block diagonal with 2x2
// rotations [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]] acting on (sin slot, cos slot) of pair i,
// independent of p; identity on a zero-pad column. The padding row (fairseq) is not PE of its position
// and is not shifted by T (T maps it to zero).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/sinusoidal_spec.hpp"

namespace posenc {

struct TableOptions {
  int threads = 0;              // 0: OpenMP's default (omp_get_max_threads)
  bool streaming_stores = true; // non-temporal stores when the output exceeds the last private cache
};

void sinusoidal_table(const SinusoidalSpec&, std::int64_t first, std::size_t count, std::span<float> out,
                      const TableOptions& = {});
void sinusoidal_table(const SinusoidalSpec&, std::int64_t first, std::size_t count, std::span<double> out,
                      const TableOptions& = {});
void sinusoidal_rows(const SinusoidalSpec&, std::span<const std::int64_t> positions, std::span<float> out,
                     const TableOptions& = {});
void sinusoidal_rows(const SinusoidalSpec&, std::span<const std::int64_t> positions, std::span<double> out,
                     const TableOptions& = {});

// omega_k for k = 0..h-1 as the fast path uses them: exact regime, the real omega_k rounded to double
// (the fast path also keeps the next 53 bits); emulated regime, the float32 value the emulated code computes.
std::vector<double> sinusoidal_frequencies(const SinusoidalSpec&);

// Column of the sin (cos) slot of pair k under the spec's layout.
std::size_t sin_slot(const SinusoidalSpec&, std::size_t k) noexcept;
std::size_t cos_slot(const SinusoidalSpec&, std::size_t k) noexcept;

// ---- the shift operator T(k) ----------------------------------------------------------------------
// Block form: pair i rotates by angle k*omega_i; cos_k[i] = cos(k omega_i), sin_k[i] = sin(k omega_i),
// each computed like a table entry (double-double angle, one rounding), so T(k) is as exact as PE.
// Only the exact regime has a shift operator (emulated tables are not exact rotations); |k| <= 2^41.
struct ShiftOperator {
  SinusoidalSpec spec;
  std::int64_t k = 0;
  std::vector<double> cos_k, sin_k;  // size h
};
ShiftOperator shift_operator(const SinusoidalSpec&, std::int64_t k);

// Dense d x d row-major matrix of T(k): (T x)_r = sum_c T[r*d + c] x_c.
void dense_shift_matrix(const ShiftOperator&, std::span<double> out);
void dense_shift_matrix(const ShiftOperator&, std::span<float> out);

// Apply T(k) to each of `rows` encodings stored row-major (rows x d) in `block`, in place:
// block[r] <- T(k) block[r]. rot: cblas_?rot per frequency pair (O(rows*d)); gemm: block <- block T(k)^T
// with the dense matrix through cblas_?gemm (O(rows*d^2), the generic linear-map form).
enum class ShiftMethod { rot, gemm };
void apply_shift(const ShiftOperator&, std::span<float> block, std::size_t rows, ShiftMethod = ShiftMethod::rot);
void apply_shift(const ShiftOperator&, std::span<double> block, std::size_t rows, ShiftMethod = ShiftMethod::rot);

// ---- Gram matrix ----------------------------------------------------------------------------------
// out (rows x rows, row-major, both triangles filled) = block * block^T via cblas_?syrk, block rows x dim.
// For a block of consecutive positions this is the symmetric Toeplitz matrix G[i][j] = sum_k cos((j-i) w_k).
void gram_matrix(std::span<const float> block, std::size_t rows, std::size_t dim, std::span<float> out);
void gram_matrix(std::span<const double> block, std::size_t rows, std::size_t dim, std::span<double> out);

}  // namespace posenc
