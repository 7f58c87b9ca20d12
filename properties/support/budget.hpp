// properties/support/budget.hpp — THE one table of accuracy tolerances of posenc (DESIGN.md §3).
//
// Every tolerance used by a property or printed by a report is a row of this table, looked up by id.
// No other file holds a tolerance literal. Each row states what is measured (scheme, quantity, output
// type, regime), where (domain), how (metric, see accuracy.hpp), the largest value allowed, and why:
// a short error analysis of the algorithm in lib/ from which the bound is derived. If a property fails,
// decide whether the code or the analysis is wrong; never widen a bound without a better analysis.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "accuracy.hpp"

namespace posenc::test {

enum class MetricKind { kernel, scaled, absolute, ratio };

struct BudgetRow {
  std::string id;        // "sinusoidal.table.exact.f32.scaled"
  std::string scheme;    // "sinusoidal"
  std::string quantity;  // "table entry", "T(k) applied by cblas rot", ...
  std::string dtype;     // "f32" | "f64" | "mp" (the oracle at 256 bits)
  std::string regime;    // "exact" | "emulated" | "exact, emulated"
  std::string domain;    // "|p| <= 2^40, every preset and spec"
  MetricKind kind;
  std::string metric;    // "err_S (S = 1)", "kernel", "absolute", ...
  double bound;          // largest value allowed
  std::string why;       // the error analysis
};

std::span<const BudgetRow> budget_rows();
// Throws std::out_of_range naming the id if there is no such row.
const BudgetRow& budget(std::string_view id);
inline double bound(std::string_view id) { return budget(id).bound; }
std::string_view to_string(MetricKind);

// The a-priori bound that normalises the Gram-matrix metric (row sinusoidal.gram.*): the absolute error
// allowed for one entry of PE_block * PE_block^T from cblas ?syrk with `dim` columns, h = floor(dim/2)
// sin/cos pairs: h (2 sqrt2 E + 2 E^2) + gamma_dim h (1 + sqrt2 E)^2, E the table-entry error of dtype.
double gram_error_scale(DType, std::size_t dim);

// Absolute error bound of one fast table entry (exact regime), used by the distinctness argument.
double table_entry_abs_bound(DType);

}  // namespace posenc::test
