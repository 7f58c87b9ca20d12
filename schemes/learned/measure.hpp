// schemes/learned/measure.hpp — the learned scheme's measuring harness: position ids and rows of the fast path
// against the oracle, one emitted case per compared number under its budget row (support/harness.hpp).
#pragma once

#include <span>
#include <string>

#include "schemes/learned/budget.hpp"
#include "posenc/learned.hpp"
#include "support/harness.hpp"

namespace posenc::test::learned {

// position_ids(spec, in) against the oracle's ids (row learned.ids.bitwise).
void measure_ids(const LearnedSpec&, const LearnedInput&, const Sink&);

// LearnedPlan::rows (f64 and f32) at `ids` (all inside the table) against the oracle's table values (rows
// learned.rows.f64.bitwise, learned.rows.f32).
void measure_rows(const LearnedSpec&, const LearnedTable&, std::span<const std::int64_t> ids, const Sink&);

std::string input_label(const LearnedSpec&, const LearnedInput&);

}  // namespace posenc::test::learned
