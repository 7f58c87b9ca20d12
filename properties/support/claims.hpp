// properties/support/claims.hpp — the claims ledger and the per-claim recorder.
//
// A claim is a mathematical statement about a scheme with an id, the GoogleTest that checks it (its name
// reads as the claim), the formula, where it comes from (a seed post or a paper), the kind of oracle
// (identity: a law checked on the MPFR oracle at high precision and on the fast path within the budget;
// reference: fast path vs oracle; differential: BLAS path vs direct path) and the budget rows it uses.
//
// Properties report every checked case through check()/record(): the recorder keeps, per claim and per
// budget row, the number of cases, the largest error, the worst input, failure counts per class, and
// the regions the generators hit. At the end of a test program (write_proofs, called by the test main)
// the ledger of the claims whose tests live in this program is written to
// $POSENC_RESULTS_DIR/proofs-<program>.json (one file per program, merged by the report generator).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accuracy.hpp"

namespace posenc::test {

struct Claim {
  std::string id;         // "SIN-ROT-1"
  std::string scheme;     // "sinusoidal"
  std::string test;       // "Sinusoidal.ShiftByKIsAFixedRotation"
  std::string statement;  // the formula
  std::string source;     // "seed 000 (shared/seeds/000_97706ee09792f023.txt)"
  std::string oracle;     // identity | reference | differential
  std::vector<std::string> budget_rows;
};

std::span<const Claim> claims();
const Claim& claim(std::string_view id);  // throws std::out_of_range

using Describe = std::function<std::string()>;

// One case of a claim (call once per property invocation).
void count_case(std::string_view claim_id);
// Region tag for coverage (also use RC_TAG in the property so RapidCheck prints the distribution).
void tag(std::string_view claim_id, std::string_view region);
// Records a measured error under (claim, budget row); describe() is called only when the case becomes
// the worst so far or fails. Returns true when the measure is within the row's bound.
bool record(std::string_view claim_id, std::string_view row_id, const Measure& m, const Describe& describe);

// record() plus the whole case as a failure message (empty optional when within budget):
// inputs (decimal and hex-float), computed value, reference to 40 digits, error, bound, budget row.
std::optional<std::string> check(std::string_view claim_id, std::string_view row_id, const Measure& m, double computed,
                                 const Real* reference, const Describe& inputs);

// JSON "meta" object of this run (program, commit, compiler, flags, build type, BLAS core and threads,
// OpenMP threads, RC_PARAMS, date), serialised.
std::string run_meta_json(std::string_view program);
// Writes $POSENC_RESULTS_DIR/proofs-<program>.json if the variable is set; statuses come from the
// GoogleTest results of this process. Returns false if the file could not be written.
bool write_proofs(std::string_view program);

}  // namespace posenc::test
