// The table's mechanics: registration of each scheme's rows, lookup, and measuring a case against a row.
// The rows themselves live with their scheme (schemes/<scheme>/budget.cpp).
#include "verify/budget.hpp"

#include <mpfr.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

namespace posenc::verify {
namespace {

struct Contribution {
  std::string scheme;
  std::vector<std::string_view> ids;
  std::function<std::vector<std::pair<std::size_t, BudgetRow>>()> make;
};

std::vector<Contribution>& contributions() {
  static std::vector<Contribution> c;
  return c;
}

std::vector<BudgetRow> build() {
  std::vector<BudgetRow> rows;
  std::set<std::string, std::less<>> seen;
  for (const Contribution& c : contributions()) {
    std::vector<int> covered(c.ids.size(), 0);
    for (auto& [index, row] : c.make()) {
      if (index >= c.ids.size()) throw std::logic_error("budget: scheme " + c.scheme + " registered a row for an unknown key");
      ++covered[index];
      row.id = std::string(c.ids[index]);
      row.scheme = c.scheme;
      if (!seen.insert(row.id).second) throw std::logic_error("budget: two rows with id '" + row.id + "'");
      rows.push_back(std::move(row));
    }
    for (std::size_t i = 0; i < c.ids.size(); ++i)
      if (covered[i] != 1)
        throw std::logic_error("budget: key '" + std::string(c.ids[i]) + "' of scheme " + c.scheme + " has " +
                               std::to_string(covered[i]) + " rows (exactly one is required)");
  }
  return rows;
}

const std::vector<BudgetRow>& table() {
  static const std::vector<BudgetRow> rows = build();
  return rows;
}


std::optional<Class> nonfinite(double y) {
  if (std::isnan(y)) return Class::nan;
  if (std::isinf(y)) return Class::inf;
  return std::nullopt;
}

std::string fmt6(double x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// |y - r| / unit for a Real y, formed at a precision that makes the subtraction exact enough.
double real_diff_over(const Real& y, const Real& r, double unit) {
  const mpfr_prec_t prec = std::max(mpfr_get_prec(mpfr_of(y)), mpfr_get_prec(mpfr_of(r))) + 64;
  mpfr_t d;
  mpfr_init2(d, prec);
  mpfr_sub(d, mpfr_of(y), mpfr_of(r), MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  mpfr_div_d(d, d, unit, MPFR_RNDN);
  const double out = mpfr_get_d(d, MPFR_RNDN);
  mpfr_clear(d);
  return out;
}

double scale_of(const BudgetRow& row, double per_case) {
  const double s = row.metric.scale != 0.0 ? row.metric.scale : per_case;
  if (!(s > 0.0) || !std::isfinite(s))
    throw std::logic_error("budget row " + row.id + ": its metric needs a positive per-case scale, got " + fmt6(per_case));
  return s;
}

Measure bitwise(const BudgetRow& row, double y, const Real& r) {
  if (auto c = nonfinite(y)) return {*c, std::numeric_limits<double>::infinity()};
  const bool same_value = mpfr_number_p(mpfr_of(r)) && mpfr_cmp_d(mpfr_of(r), y) == 0;
  const bool same_sign = (mpfr_signbit(mpfr_of(r)) != 0) == std::signbit(y);
  if (same_value && same_sign) return {Class::ok, 0.0};
  const double e = row.metric.unit == DType::f32 ? static_cast<double>(ulp_distance(static_cast<float>(y),
                                                                                      reference::round_to_float(r)).value_or(0))
                                                 : static_cast<double>(ulp_distance(y, reference::round_to_double(r)).value_or(0));
  return {Class::ok, std::max(1.0, e)};
}

}  // namespace

std::string_view to_string(MetricKind k) {
  switch (k) {
    case MetricKind::kernel: return "kernel";
    case MetricKind::scaled: return "scaled";
    case MetricKind::absolute: return "absolute";
    case MetricKind::ratio: return "ratio";
    case MetricKind::bitwise: return "bitwise";
    case MetricKind::value: return "value";
  }
  return "?";
}

std::string metric_text(const Metric& m) {
  if (!m.text.empty()) return m.text;
  const std::string unit = "ulp_" + std::string(to_string(m.unit));
  const std::string scale = m.scale == 0.0 ? std::string("per case") : fmt6(m.scale);
  switch (m.kind) {
    case MetricKind::kernel: return "kernel: |y - r| / " + unit + "(r)";
    case MetricKind::scaled: return "err_S = |y - r| / " + unit + "(max(|r|, S)), S = " + scale;
    case MetricKind::absolute: return "absolute |y - r|";
    case MetricKind::ratio: return "|y - r| / " + scale;
    case MetricKind::bitwise: return "bit-identical (else ULP distance in " + std::string(to_string(m.unit)) + ")";
    case MetricKind::value: return "measured value";
  }
  return "?";
}

void register_budget_rows(std::string_view scheme, std::span<const std::string_view> ids,
                          std::function<std::vector<std::pair<std::size_t, BudgetRow>>()> make) {
  contributions().push_back({std::string(scheme), {ids.begin(), ids.end()}, std::move(make)});
}

std::span<const BudgetRow> budget_rows() { return table(); }

const BudgetRow& budget(std::string_view id) {
  for (const auto& row : table())
    if (row.id == id) return row;
  throw std::out_of_range("budget: no row with id '" + std::string(id) + "'");
}

Measure measure(const BudgetRow& row, double y, const Real& r, double scale) {
  const Metric& m = row.metric;
  switch (m.kind) {
    case MetricKind::kernel: return kernel_error(y, r, m.unit);
    case MetricKind::scaled: return scaled_error(y, r, scale_of(row, scale), m.unit);
    case MetricKind::absolute: return absolute_error(y, r);
    case MetricKind::ratio: return ratio_error(y, r, scale_of(row, scale));
    case MetricKind::bitwise: return bitwise(row, y, r);
    case MetricKind::value: break;
  }
  throw std::logic_error("budget row " + row.id + " measures a value, not a (y, r) pair: use measure_value");
}

Measure measure(const BudgetRow& row, const Real& y, const Real& r, double scale) {
  const Metric& m = row.metric;
  if (!mpfr_number_p(mpfr_of(y))) return {mpfr_nan_p(mpfr_of(y)) ? Class::nan : Class::inf, std::numeric_limits<double>::infinity()};
  switch (m.kind) {
    case MetricKind::scaled: {
      double u = ulp(scale_of(row, scale), m.unit);
      if (!mpfr_zero_p(mpfr_of(r))) u = std::max(u, ulp(r, m.unit));
      return {Class::ok, real_diff_over(y, r, u)};
    }
    case MetricKind::absolute: return {Class::ok, real_diff_over(y, r, 1.0)};
    case MetricKind::ratio: return {Class::ok, real_diff_over(y, r, scale_of(row, scale))};
    case MetricKind::kernel: return {Class::ok, real_diff_over(y, r, ulp(r, m.unit))};
    case MetricKind::bitwise: return {Class::ok, mpfr_equal_p(mpfr_of(y), mpfr_of(r)) ? 0.0 : 1.0};
    case MetricKind::value: break;
  }
  throw std::logic_error("budget row " + row.id + " measures a value, not a (y, r) pair: use measure_value");
}

Measure measure_value(const BudgetRow& row, double value) {
  if (row.metric.kind != MetricKind::value)
    throw std::logic_error("budget row " + row.id + " has metric " + std::string(to_string(row.metric.kind)) +
                           ", not value");
  if (auto c = nonfinite(value)) return {*c, std::numeric_limits<double>::infinity()};
  return {Class::ok, value};
}

}  // namespace posenc::verify
