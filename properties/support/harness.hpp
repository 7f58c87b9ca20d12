// properties/support/harness.hpp — how measuring harnesses report what they measure.
//
// A scheme's harness (schemes/<scheme>/measure.*) computes fast values and oracle values and emits one case
// per compared number under its budget row; emit() computes the measure from the row (budget.hpp), so a harness
// never chooses a metric. Sinks decide what a case is for: a claim sink records it in the ledger and fails the
// property or test with the whole case when it is over budget (tests and report measure exactly the same thing,
// DESIGN.md §8); the accuracy sweep's sink aggregates per row for accuracy.json.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "verify/budget.hpp"
#include "verify/check_report.hpp"
#include "claims.hpp"
#include "posenc/error.hpp"

namespace posenc::test {

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

// Records the cases of the rows `claim` lists (others are measured for other claims) and fails on the first
// one over budget: with RC_FAIL inside a RapidCheck property, with a non-fatal ADD_FAILURE in a plain test
// (which keeps going and so finds every failing case).
enum class FailWith { rapidcheck, gtest };
Sink claim_sink(const Claim&, FailWith = FailWith::rapidcheck);

// `posenc check` claims: records the largest metric of accumulator `ref` of a check report under the claim (its
// row) and fails the test (ADD_FAILURE) unless that accumulator passed.
void check_verdict(const Claim&, const CheckReport&, std::size_t ref, const std::string& what);

// Invalid-argument claims: f() must throw posenc::Error naming `parameter` (in parameter() and in the message)
// with a non-empty accepted range; anything else is a test failure. Counts one case of the claim.
template <class F>
void expect_error(const Claim& claim, const std::string& parameter, F&& f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no posenc::Error thrown (expected one naming '" << parameter << "')";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), parameter) << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(parameter), std::string::npos) << what << ": " << e.what();
    EXPECT_FALSE(e.accepted().empty()) << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw a non-posenc exception: " << e.what();
  }
  count_case(claim);
}

// x rounded to nearest-even in the type (f16, bf16: how a user's table stored in that type holds the value;
// no overflow handling: |x| <= 1 where it is used).
double round_to(double x, DType);

}  // namespace posenc::test
