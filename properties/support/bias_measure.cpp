#include "support/bias_measure.hpp"

#include <cmath>
#include <limits>
#include <set>

#include "posenc/reference/mp.hpp"

namespace posenc::test {

std::string geometry_label(const BiasGeometry& g) {
  std::string m;
  for (auto v : g.key_mask) m += static_cast<char>('0' + v);
  return "Lq=" + std::to_string(g.query_length) + " Lk=" + std::to_string(g.key_length) +
         " mask=" + std::string(to_string(g.mask)) + (m.empty() ? "" : " key_mask=" + m);
}

bool masked(const BiasGeometry& g, std::size_t i, std::size_t j) {
  if (g.mask != BiasMask::causal) return false;
  const std::size_t qi = g.key_length - g.query_length + i;
  return j > qi || (!g.key_mask.empty() && g.key_mask[j] == 0);
}

std::vector<std::size_t> sample_indices(std::size_t size, std::size_t n, std::vector<std::size_t> must) {
  std::set<std::size_t> out;
  if (size == 0) return {};
  if (size <= n) {
    for (std::size_t i = 0; i < size; ++i) out.insert(i);
  } else {
    out.insert(0);
    out.insert(size - 1);
    for (std::size_t m : must)
      if (m < size) out.insert(m);
    for (std::size_t i = 1; out.size() < n && i + 1 < n; ++i) out.insert(i * (size - 1) / (n - 1));
  }
  return {out.begin(), out.end()};
}

void masked_entry(const Sink& sink, const BudgetRow& identity_row, double y, const Describe& what) {
  const double v = y == -std::numeric_limits<double>::infinity() ? 0.0 : (y == 0 ? 1.0 : y);
  emit(sink, identity_row, v, reference::make_real(0.0, 53),
       [&] { return what() + " (masked: must be -inf, is " + format_real(y) + ")"; });
}

double fused_scores_error_scale(DType t, std::size_t d, double abs_scale, double sum_abs_qk, double abs_bias) {
  const double u = t == DType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  const double n = static_cast<double>(d) + 2;
  const double gamma = n * u / (1 - n * u);
  return (gamma + u) * (abs_scale * (1 + u) * sum_abs_qk + abs_bias) * (1 + 1e-12) + std::ldexp(1.0, -1000);
}

}  // namespace posenc::test
