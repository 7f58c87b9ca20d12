// schemes/nezha/budget.hpp — NEZHA's keys in the one budget table (rows and their analyses: budget.cpp beside
// this file). Scores and outputs go through a Shaw plan and are held to the Shaw rows (shaw/budget.hpp); a user's
// table in `posenc check nezha` to the sinusoidal check rows (the table is that scheme's paper table).
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/nezha_spec.hpp"
#include "verify/budget.hpp"

#define POSENC_NEZHA_ROWS(X)                                 \
  X(index, "nezha.index.bitwise")                            \
  X(table_exact_f32, "nezha.table.exact.f32")                \
  X(table_exact_f64, "nezha.table.exact.f64")                \
  X(table_hf, "nezha.table.hf.ulp")                          \
  X(hf_vs_exact, "nezha.table.hf_vs_exact.ratio")

namespace posenc::verify {

POSENC_BUDGET_KEYS(NezhaRow, "nezha", POSENC_NEZHA_ROWS)

// E(r, t) of row nezha.table.hf_vs_exact: the bound of |T_hf[r][c] - T_exact[r][c]| given the real frequency w
// (a double within 2^-52 relative), HF's float32 frequency w32 (exact), the float32 angle a32 = RN32(r w32) and the
// float32 entry y (budget.cpp derives it).
double nezha_hf_envelope(std::int64_t r, double w, double w32, double a32, double y);

}  // namespace posenc::verify
