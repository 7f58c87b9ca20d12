// properties/support/claims.hpp — the claims ledger and the per-claim recorder.
//
// A claim is a mathematical statement about a scheme with an id, the GoogleTest that checks it (its name reads as
// the claim), the formula, where it comes from (a seed post or a paper), the kind of oracle (identity: a law
// checked on the MPFR oracle at high precision and on the fast path within the budget; reference: fast path vs
// oracle; differential: one fast path vs another) and the budget rows it uses.
//
// A claim is registered where its property is defined, by the macro that defines the test:
//   POSENC_PROPERTY(Sinusoidal, ShiftByKIsAFixedRotation,
//                   {"SIN-ROT-1", "sinusoidal", "PE(p+k) = T(k) PE(p) ...", "seed 000", Oracle::identity,
//                    {SinusoidalRow::shift_apply_f32, ...}}) {
//     ... body; `claim` names the registered claim ...
//   }
// so the ledger and the tests cannot drift apart: a claim's test exists by construction, and the test main
// refuses to run if a claim names a test GoogleTest does not know (a regression test registered with
// POSENC_REGRESSION adds itself to an existing claim). A property records every case through check()/record():
// the measure is computed from the budget row (budget.hpp), the recorder refuses a row the claim does not list,
// and keeps, per claim and per row, the number of cases, the largest error, the worst input, failure counts per
// class, and the regions the generators hit. At the end of a program (write_proofs, called by the test main) the
// ledger is written to $POSENC_RESULTS_DIR/proofs-<program>.json.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "verify/accuracy.hpp"
#include "verify/budget.hpp"
#include "verify/harness.hpp"

namespace posenc::test {

// The claims hold posenc to the product's own metric, budget rows and checkers (verify/, schemes/<name>/).
using namespace posenc::verify;

enum class Oracle { identity, reference, differential };
std::string_view to_string(Oracle);

// A budget row named by its typed key (or, for rows of another scheme's table, by id).
struct RowRef {
  std::string_view id;
  template <BudgetKey K>
  constexpr RowRef(K k) : id(BudgetKeys<K>::id(k)) {}  // NOLINT: implicit by design
};

struct ClaimInfo {
  std::string id;         // "SIN-ROT-1"
  std::string scheme;     // "sinusoidal"
  std::string statement;  // the formula
  std::string source;     // "seed 000 (shared/seeds/000_97706ee09792f023.txt)"
  Oracle oracle = Oracle::identity;
  std::vector<RowRef> rows;
};

struct Claim {
  std::string id, scheme, statement, source;
  Oracle oracle = Oracle::identity;
  std::vector<std::string> budget_rows;  // ids
  std::vector<std::string> tests;        // "Suite.Name": the defining test first, then regression tests
  const std::string& test() const { return tests.front(); }
  bool uses(std::string_view row_id) const;
};

// Registration (used by the macros below; references stay valid for the program's life).
const Claim& register_claim(std::string test, ClaimInfo info);
// Adds a regression test to the claim `claim_id` (resolved when the ledger is first read, so the order of
// static initialisation does not matter).
bool add_regression_test(std::string test, std::string claim_id);

std::span<const Claim* const> claims();
const Claim& claim(std::string_view id);  // throws std::out_of_range

// Tests named by claims that GoogleTest does not know (empty when the ledger is consistent).
std::vector<std::string> claims_without_tests();

using Describe = verify::Describe;  // verify/harness.hpp

// One case of a claim (call once per property invocation).
void count_case(const Claim&);
// Region tag for coverage: recorded in the ledger and passed to RC_TAG when inside a property.
void tag(const Claim&, std::string_view region);

// Records a measured error under (claim, row); describe() is called only when the case becomes the worst so far
// or fails. Returns true when the measure is within the row's bound. Throws std::logic_error if the claim does
// not list the row.
bool record(const Claim&, const BudgetRow&, const Measure&, const Describe&);

// record() plus the whole case as a failure message (empty optional when within budget): inputs (decimal and
// hex-float), computed value, reference to 40 digits, error, bound, budget row, RC_PARAMS.
std::optional<std::string> check(const Claim&, const BudgetRow&, const Measure&, double computed, const Real* reference,
                                 const Describe& inputs);
// The measure computed from the row: check(claim, row, measure(row, y, r, scale), y, &r, inputs).
std::optional<std::string> check(const Claim&, const BudgetRow&, double y, const Real& r, const Describe& inputs,
                                 double scale = 0.0);
template <BudgetKey K>
std::optional<std::string> check(const Claim& c, K key, double y, const Real& r, const Describe& inputs, double scale = 0.0) {
  return check(c, budget(key), y, r, inputs, scale);
}

// JSON "meta" object of this run (program, commit, compiler, flags, build type, BLAS core and threads,
// OpenMP threads, RC_PARAMS, date), serialised.
std::string run_meta_json(std::string_view program);
// Writes $POSENC_RESULTS_DIR/proofs-<program>.json if the variable is set; statuses come from the
// GoogleTest results of this process. Returns false if the file could not be written.
bool write_proofs(std::string_view program);

}  // namespace posenc::test

// ---- defining a claim and its test together ---------------------------------------------------------------
#define POSENC_CLAIM_VAR_(Suite, Name) posenc_claim_##Suite##_##Name
#define POSENC_CLAIM_BODY_(Suite, Name) posenc_claim_body_##Suite##_##Name

// A RapidCheck property that checks the claim given by the ClaimInfo argument; the body sees `claim`.
#define POSENC_PROPERTY(Suite, Name, ...)                                                                   \
  static void POSENC_CLAIM_BODY_(Suite, Name)(const ::posenc::test::Claim& claim);                         \
  static const ::posenc::test::Claim& POSENC_CLAIM_VAR_(Suite, Name) =                                     \
      ::posenc::test::register_claim(#Suite "." #Name, ::posenc::test::ClaimInfo __VA_ARGS__);             \
  RC_GTEST_PROP(Suite, Name, ()) { POSENC_CLAIM_BODY_(Suite, Name)(POSENC_CLAIM_VAR_(Suite, Name)); }     \
  static void POSENC_CLAIM_BODY_(Suite, Name)(const ::posenc::test::Claim& claim)

// The same as a plain (exhaustive or enumerated) GoogleTest test.
#define POSENC_CLAIM_TEST(Suite, Name, ...)                                                                 \
  static void POSENC_CLAIM_BODY_(Suite, Name)(const ::posenc::test::Claim& claim);                         \
  static const ::posenc::test::Claim& POSENC_CLAIM_VAR_(Suite, Name) =                                     \
      ::posenc::test::register_claim(#Suite "." #Name, ::posenc::test::ClaimInfo __VA_ARGS__);             \
  TEST(Suite, Name) { POSENC_CLAIM_BODY_(Suite, Name)(POSENC_CLAIM_VAR_(Suite, Name)); }                   \
  static void POSENC_CLAIM_BODY_(Suite, Name)(const ::posenc::test::Claim& claim)

// A named regression case (a counterexample a property once found) that records under an existing claim.
#define POSENC_REGRESSION(Suite, Name, claim_id)                                                            \
  static void POSENC_CLAIM_BODY_(Suite, Name)(const ::posenc::test::Claim& claim);                         \
  [[maybe_unused]] static const bool POSENC_CLAIM_VAR_(Suite, Name) =                                      \
      ::posenc::test::add_regression_test(#Suite "." #Name, claim_id);                                     \
  TEST(Suite, Name) { POSENC_CLAIM_BODY_(Suite, Name)(::posenc::test::claim(claim_id)); }                  \
  static void POSENC_CLAIM_BODY_(Suite, Name)(const ::posenc::test::Claim& claim)
