// verify/budget.hpp — THE one table of accuracy tolerances of posenc (DESIGN.md §3).
//
// Every tolerance used by a property, printed by a report or applied by `posenc check` is a row of this table.
// Rows are contributed per scheme (schemes/<scheme>/budget.cpp) under typed keys declared in that scheme's
// budget.hpp with POSENC_BUDGET_KEYS, so a property cannot name a row that does not exist, and the table refuses
// a scheme whose keys and rows do not match one to one. Each row states what is measured (scheme, quantity,
// output type, regime), where (domain), how (its Metric: the error of a case is computed from the row by
// measure(), never chosen at a call site), the largest value allowed, and why: a short error analysis of the
// algorithm from which the bound is derived. If a property fails, decide whether the code or the analysis is
// wrong; never widen a bound without a better analysis.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "verify/accuracy.hpp"

namespace posenc::verify {

enum class MetricKind {
  kernel,    // |y - r| / ulp_unit(r)
  scaled,    // |y - r| / ulp_unit(max(|r|, S))
  absolute,  // |y - r|
  ratio,     // |y - r| / scale (an a-priori error bound, so the bound is 1)
  bitwise,   // 0 when y is bit-for-bit the expected binary number (the sign of zero included), else the
             // monotone ULP distance in the unit type (at least 1)
  value,     // the measured number itself (a margin, a count): the property computes it, the row bounds it
};
std::string_view to_string(MetricKind);

struct Metric {
  MetricKind kind = MetricKind::absolute;
  DType unit = DType::f64;  // ULPs of this type (kernel, scaled, bitwise)
  double scale = 1.0;       // scaled: S; ratio: the denominator; 0: given with each case
  std::string text;         // how reports name it; generated from the fields when empty
};
// The metric's name as the reports print it, e.g. "err_S (S = 1), ulp_f32".
std::string metric_text(const Metric&);

struct BudgetRow {
  std::string id{};      // "sinusoidal.table.exact.f32.scaled" (from the key)
  std::string scheme{};  // "sinusoidal" (from the key)
  std::string quantity{};  // "table entry", "T(k) applied by cblas rot", ...
  std::string dtype{};   // output type(s): "f32", "f64", "f32, f64", "mp" (the oracle at 256 bits)
  std::string regime{};  // "exact" | "emulated" | "exact, emulated"
  std::string domain{};  // "|p| <= 2^40, every preset and spec"
  Metric metric{};
  double bound = 0.0;    // largest value allowed
  std::string why{};     // the error analysis
};

// ---- typed keys -------------------------------------------------------------------------------------------
// In a scheme's budget.hpp:
//   #define POSENC_SINUSOIDAL_ROWS(X) X(table_exact_f32_scaled, "sinusoidal.table.exact.f32.scaled") ...
//   POSENC_BUDGET_KEYS(SinusoidalRow, "sinusoidal", POSENC_SINUSOIDAL_ROWS)   (in namespace posenc::verify)
// declares enum class SinusoidalRow { table_exact_f32_scaled, ... } with its ids; the scheme's budget.cpp then
// registers one row per key with BudgetRegistration<SinusoidalRow>.
template <class K>
struct BudgetKeys;

template <class K>
concept BudgetKey = requires(K k) {
  { BudgetKeys<K>::scheme } -> std::convertible_to<std::string_view>;
  { BudgetKeys<K>::id(k) } -> std::convertible_to<std::string_view>;
  BudgetKeys<K>::all;
};

#define POSENC_BUDGET_KEY_ENUM_(name, id) name,
#define POSENC_BUDGET_KEY_ID_(name, id) id,
#define POSENC_BUDGET_KEY_ALL_(name, id) Enum::name,
// Use at namespace posenc::verify scope.
#define POSENC_BUDGET_KEYS(EnumName, scheme_name, LIST)                                        \
  enum class EnumName { LIST(POSENC_BUDGET_KEY_ENUM_) };                                       \
  template <>                                                                                  \
  struct BudgetKeys<EnumName> {                                                                \
    using Enum = EnumName;                                                                     \
    static constexpr std::string_view scheme = scheme_name;                                    \
    static constexpr std::string_view ids[] = {LIST(POSENC_BUDGET_KEY_ID_)};                   \
    static constexpr Enum all[] = {LIST(POSENC_BUDGET_KEY_ALL_)};                              \
    static constexpr std::string_view id(Enum k) { return ids[static_cast<std::size_t>(k)]; } \
  };

// What "bit for bit" in an emulated regime's rows rests on (DESIGN.md §2): appended to the why of every row that
// holds an emulation to its oracle's steps, so each such claim says what it is against and what real code does.
inline constexpr std::string_view kCorrectlyRoundedSteps =
    " Bit for bit against correctly rounded float32 steps; real torch 1.13 float32 pow/exp/sin/cos and glibc's cosf "
    "differ by 1–4 ulp in 2–16 % of entries (one 1-ulp pow at dynamic-NTK seq_len 8192 became 829 ulp of a cos at "
    "p 8191); `posenc check` admits real implementations through the stated envelope, which is how a user tells a "
    "different libm from a wrong convention.";

// ---- the table --------------------------------------------------------------------------------------------

std::span<const BudgetRow> budget_rows();
// Throws std::out_of_range naming the id if there is no such row.
const BudgetRow& budget(std::string_view id);
template <BudgetKey K>
const BudgetRow& budget(K k) {
  return budget(BudgetKeys<K>::id(k));
}
inline double bound(std::string_view id) { return budget(id).bound; }

// One key of a family of rows that differ only by the output type (e.g. check.exact.<dtype>).
template <BudgetKey K>
constexpr K row_of_dtype(DType t, K f16, K bf16, K f32, K f64) {
  switch (t) {
    case DType::f16: return f16;
    case DType::bf16: return bf16;
    case DType::f32: return f32;
    case DType::f64: return f64;
  }
  return f64;
}

// A scheme's rows: make() returns one (key, row) per key; id and scheme are filled in from the key. The table
// is built on first use and throws std::logic_error if a key has no row or two, or two schemes share an id.
void register_budget_rows(std::string_view scheme, std::span<const std::string_view> ids,
                          std::function<std::vector<std::pair<std::size_t, BudgetRow>>()> make);
// A scheme's rows as its budget.cpp builds them (in groups: one function per group of rows), and the call that
// appends one under its key: `const auto add = row_adder(rows); add(Key::x, {...});`.
template <class K>
using BudgetRows = std::vector<std::pair<K, BudgetRow>>;
template <class K>
auto row_adder(BudgetRows<K>& rows) {
  return [&rows](K key, BudgetRow row) { rows.emplace_back(key, std::move(row)); };
}

template <BudgetKey K>
struct BudgetRegistration {
  explicit BudgetRegistration(std::vector<std::pair<K, BudgetRow>> (*make)()) {
    register_budget_rows(BudgetKeys<K>::scheme, BudgetKeys<K>::ids, [make] {
      std::vector<std::pair<std::size_t, BudgetRow>> out;
      for (auto& [k, row] : make()) out.emplace_back(static_cast<std::size_t>(k), std::move(row));
      return out;
    });
  }
};

// ---- measuring a case against a row -----------------------------------------------------------------------
// The error of y (a binary number, or an exact Real such as a dot product formed in MPFR) against the reference
// r, as the row's metric defines it. `scale` is the per-case S (scaled) or denominator (ratio) when the row's
// metric.scale is 0; it is ignored otherwise. NaN/inf/zero/sign mismatches are Measure classes (accuracy.hpp).
Measure measure(const BudgetRow&, double y, const Real& r, double scale = 0.0);
Measure measure(const BudgetRow&, const Real& y, const Real& r, double scale = 0.0);
// For rows of kind value: the measured number itself (NaN counts as a NaN failure).
Measure measure_value(const BudgetRow&, double value);

}  // namespace posenc::verify
