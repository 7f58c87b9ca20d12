// verify/harness.hpp — how a measuring harness reports what it measures, written once for every consumer.
//
// A harness (a scheme's claims, measure.* or sweep.cpp) computes fast values and oracle values and emits one case per
// compared number under its budget row; emit() computes the measure from the row (budget.hpp), so a harness never
// chooses a metric. A Sink decides what a case is for: the claims' sink records it in the ledger and fails the
// property or test when it is over budget (properties/support/harness.hpp: claim_sink, GoogleTest); the accuracy
// sweep's aggregates it per row into accuracy.json (properties/support/sweep_main.cpp). Tests and report measure
// exactly the same thing (DESIGN.md §8). No test framework.
#pragma once

#include <functional>
#include <limits>
#include <string>

#include "verify/accuracy.hpp"
#include "verify/budget.hpp"

namespace posenc::verify {

// What was measured, in words: called only when a case must be shown (the worst so far, or a failure).
using Describe = std::function<std::string()>;
// One case: the row, its measure, the computed value, the reference (nullptr for a value metric) and the inputs.
using Sink = std::function<void(const BudgetRow&, const Measure&, double computed, const Real* reference,
                                const Describe& inputs)>;

inline void emit(const Sink& sink, const BudgetRow& row, double y, const Real& r, const Describe& inputs,
                 double scale = 0.0) {
  sink(row, measure(row, y, r, scale), y, &r, inputs);
}
template <BudgetKey K>
void emit(const Sink& sink, K key, double y, const Real& r, const Describe& inputs, double scale = 0.0) {
  emit(sink, budget(key), y, r, inputs, scale);
}
// A case whose computed quantity is an exact Real (a dot product formed in MPFR); `shown` is printed as computed.
template <BudgetKey K>
void emit_real(const Sink& sink, K key, const Real& y, const Real& r, double shown, const Describe& inputs,
               double scale = 0.0) {
  const BudgetRow& row = budget(key);
  sink(row, measure(row, y, r, scale), shown, &r, inputs);
}
template <BudgetKey K>
void emit_value(const Sink& sink, K key, double value, const Describe& inputs) {
  const BudgetRow& row = budget(key);
  sink(row, measure_value(row, value), value, nullptr, inputs);
}
// emit() plus the measured error (for a sweep's series): the row's measure of y against r, +inf when the case is a
// failure class (NaN, a zero or sign mismatch) rather than a number.
inline double emit_measured(const Sink& sink, const BudgetRow& row, double y, const Real& r, const Describe& what,
                            double scale = 0.0) {
  const Measure m = measure(row, y, r, scale);
  sink(row, m, y, &r, what);
  return m.ok() ? m.err : std::numeric_limits<double>::infinity();
}

}  // namespace posenc::verify
