// schemes/sinusoidal/budget.hpp — the sinusoidal scheme's keys in the one budget table (rows and their error
// analyses: budget.cpp beside this file).
#pragma once

#include <cstddef>

#include "verify/budget.hpp"

namespace posenc::verify {

#define POSENC_SINUSOIDAL_ROWS(X)                                                \
  X(frequency_exact_f64, "sinusoidal.frequency.exact.f64")                       \
  X(frequency_emulated_f32, "sinusoidal.frequency.emulated.f32")                 \
  X(table_exact_f64_scaled, "sinusoidal.table.exact.f64.scaled")                 \
  X(table_exact_f32_scaled, "sinusoidal.table.exact.f32.scaled")                 \
  X(table_exact_f32_kernel, "sinusoidal.table.exact.f32.kernel")                 \
  X(table_emulated_f32_scaled, "sinusoidal.table.emulated.f32.scaled")           \
  X(table_emulated_f64_scaled, "sinusoidal.table.emulated.f64.scaled")           \
  X(table_emulated_f32_kernel, "sinusoidal.table.emulated.f32.kernel")           \
  X(table_emulated_f64_kernel, "sinusoidal.table.emulated.f64.kernel")           \
  X(table_range, "sinusoidal.table.range")                                       \
  X(table_exact_values, "sinusoidal.table.exact_values")                         \
  X(table_reproducible, "sinusoidal.table.reproducible")                         \
  X(shift_operator_f64, "sinusoidal.shift.operator.f64")                         \
  X(shift_dense_f32, "sinusoidal.shift.dense.f32")                               \
  X(shift_apply_f64, "sinusoidal.shift.apply.f64")                               \
  X(shift_apply_f32, "sinusoidal.shift.apply.f32")                               \
  X(shift_differential_f64, "sinusoidal.shift.differential.f64")                 \
  X(shift_differential_f32, "sinusoidal.shift.differential.f32")                 \
  X(shift_compose_f64, "sinusoidal.shift.compose.f64")                           \
  X(shift_orthogonality_f64, "sinusoidal.shift.orthogonality.f64")               \
  X(shift_orthogonality_f32, "sinusoidal.shift.orthogonality.f32")               \
  X(norm_f32, "sinusoidal.norm.f32")                                             \
  X(norm_f64, "sinusoidal.norm.f64")                                             \
  X(dot_f32, "sinusoidal.dot.f32")                                               \
  X(dot_f64, "sinusoidal.dot.f64")                                               \
  X(gram_f32, "sinusoidal.gram.f32")                                             \
  X(gram_f64, "sinusoidal.gram.f64")                                             \
  X(gram_symmetry, "sinusoidal.gram.symmetry")                                   \
  X(distinct_margin, "sinusoidal.distinct.margin")                               \
  X(identity_oracle, "sinusoidal.identity.oracle")                               \
  X(check_exact_f16, "sinusoidal.check.exact.f16")                               \
  X(check_exact_bf16, "sinusoidal.check.exact.bf16")                             \
  X(check_exact_f32, "sinusoidal.check.exact.f32")                               \
  X(check_exact_f64, "sinusoidal.check.exact.f64")                               \
  X(check_envelope, "sinusoidal.check.envelope")

POSENC_BUDGET_KEYS(SinusoidalRow, "sinusoidal", POSENC_SINUSOIDAL_ROWS)

namespace sinusoidal {

// Absolute error bound of one fast table entry, exact regime (E32 / E64 of budget.cpp): the distinctness
// argument and the Gram scale use it.
double table_entry_abs_bound(DType);

// The a-priori bound that normalises the Gram-matrix metric (rows gram.*): the absolute error allowed for one
// entry of PE_block * PE_block^T from cblas ?syrk with `dim` columns, h = floor(dim/2) sin/cos pairs:
// h (2 sqrt2 E + 2 E^2) + gamma_dim h (1 + sqrt2 E)^2, E the table-entry error of dtype.
double gram_error_scale(DType, std::size_t dim);

// The table rows of an output type and regime (for harnesses that measure entries generically).
SinusoidalRow scaled_row(bool emulated, DType);
SinusoidalRow kernel_row(bool emulated, DType);  // exact f64 has none: entries are measured scaled only
SinusoidalRow check_exact_row(DType);

}  // namespace sinusoidal
}  // namespace posenc::verify
