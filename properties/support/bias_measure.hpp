// properties/support/bias_measure.hpp — what the measuring harnesses of the additive-bias schemes (ALiBi, KERPLE, ...)
// share: labels of a geometry, which entries the causal mask hides, sampling rows and keys around the diagonal,
// the masked-entry case, and the a-priori error bound of scores with a fused bias.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "posenc/bias.hpp"
#include "support/budget.hpp"
#include "support/harness.hpp"

namespace posenc::test {

std::string geometry_label(const BiasGeometry&);

// Whether (row i, key j) is masked by the geometry's causal mask (key after the query, or a padding key).
bool masked(const BiasGeometry&, std::size_t i, std::size_t j);

// Up to n indices of [0, size) including 0, size - 1 and `must` (when < size), evenly spread otherwise.
std::vector<std::size_t> sample_indices(std::size_t size, std::size_t n, std::vector<std::size_t> must = {});

// A masked entry must be -inf: recorded under `identity_row` (a bitwise row) as 0 (it is) or as the value it
// holds instead (any finite value or NaN is a nonzero bitwise distance from 0, +inf a class mismatch).
void masked_entry(const Sink& sink, const BudgetRow& identity_row, double y, const Describe& what);

// The a-priori bound of |scores - (scale <q, k> + b~)| for a bias b~ fused into a beta = 1 gemm, given
// sum_c |q_c k_c|, |scale| and |b~|: (gamma_{d+2} + u)(|scale| (1 + u) sum |q_c k_c| + |b~|) (1 + 1e-12), gamma_n =
// n u / (1 - n u), u the type's unit roundoff (budget rows <scheme>.scores.*).
double fused_scores_error_scale(DType, std::size_t head_dim, double abs_scale, double sum_abs_qk, double abs_bias);

}  // namespace posenc::test
