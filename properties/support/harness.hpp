// properties/support/harness.hpp — the test side of the measuring harness (verify/harness.hpp: Sink, emit): the
// claims' sink, which records a case in the ledger and fails the property or test with the whole case when it is over
// budget, and the checks of `posenc check` claims and invalid-argument claims.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "verify/budget.hpp"
#include "verify/harness.hpp"
#include "verify/check_report.hpp"
#include "claims.hpp"
#include "posenc/error.hpp"

namespace posenc::test {

using verify::emit;  // verify/harness.hpp: Sink, emit, emit_real, emit_value, emit_measured
using verify::emit_real;
using verify::emit_value;
using verify::Sink;

// Records the cases of the rows `claim` lists (others are measured for other claims) and fails on the first
// one over budget: with RC_FAIL inside a RapidCheck property, with a non-fatal ADD_FAILURE in a plain test
// (which keeps going and so finds every failing case).
enum class FailWith { rapidcheck, gtest };
Sink claim_sink(const Claim&, FailWith = FailWith::rapidcheck);

// `posenc check` claims: records the largest metric of accumulator `ref` of a check report under the claim (its
// row) and fails the test (ADD_FAILURE) unless that accumulator passed.
void check_verdict(const Claim&, const CheckReport&, std::size_t ref, const std::string& what);

// a and b bit for bit equal under the bitwise row `row` (the fast path against itself: a value of two paths or calls
// that must agree); a difference fails the test (ADD_FAILURE) with the case. One case of the claim's ledger row.
void expect_bitwise(const Claim&, const BudgetRow& row, double a, double b, const Describe& what);

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
