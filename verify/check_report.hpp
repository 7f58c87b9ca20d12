// verify/check_report.hpp — what `posenc check` reports about a user's numbers, for every scheme.
//
// A scheme's checker (schemes/<scheme>/check.*) walks the user's entries, computes each one's reference with
// the scheme's MPFR oracle (the exact value, and the value of each emulated regime) and adds the entry to one
// CheckAccumulator per reference. An accumulator holds the entries to one budget row (the metric and bound come
// from the row, never from the caller) and keeps what a porter needs to find a mistake:
//   max and mean error in ULPs of the input's type, kernel (|y - r| / ulp(r)) and scaled (|y - r| / ulp(max(|r|, 1)))
//   (DESIGN.md §3); the row's own metric (for the emulation envelope: |y - e| / E, E the per-entry envelope);
//   the same per position band (0-2^10, 2^10-2^14, 2^14-2^16, 2^16-2^20, 2^20-2^24, 2^24-2^32, 2^32-2^40) and
//   per column; the worst entries with their inputs; NaN / inf (which fail) and zero-vs-nonzero / sign mismatches
//   more than half an ulp(1) off (reported; they fail through the metric); how many entries are bit-identical;
//   and a verdict: within the row for every entry, or not.
// A CheckReport is the whole result: the scheme, the spec (replayable JSON), the input, the accumulators, and which
// of them the verdict is held to. It renders as JSON and Markdown.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "verify/accuracy.hpp"
#include "verify/budget.hpp"

namespace posenc::verify {

struct CheckEntryError {
  std::int64_t position = 0;
  std::size_t column = 0;
  double value = 0.0;      // the user's number
  std::string reference;   // the reference, 40 digits
  Class cls = Class::ok;
  double metric = 0.0;     // the row's metric (inf for a class mismatch)
  double kernel = 0.0, scaled = 0.0;
};

// The exact sum of doubles (Shewchuk's non-overlapping partials, as Python's math.fsum) and its correctly rounded
// value: the same whatever the order of the additions and merges, so a report's means do not depend on which thread
// took which entries (a plain double sum did: two runs of one check differed in a mean's last bits).
class ExactSum {
 public:
  void add(double x);
  void add(const ExactSum& o) {
    for (double x : o.partials_) add(x);
  }
  double value() const;

 private:
  std::vector<double> partials_;  // increasing magnitude, non-overlapping
};

class CheckAccumulator {
 public:
  static constexpr std::array<int, 8> kBandTops = {10, 14, 16, 20, 24, 32, 40, 63};  // band i: |p| < 2^top

  // `name`: "exact" or "emulated (tensor2tensor)"; entries are measured in ULPs of `unit` (the input's type).
  CheckAccumulator(std::string name, const BudgetRow& row, DType unit, std::size_t columns);

  // One entry: the user's y against the reference r. scale: the per-entry scale of ratio rows (the envelope E);
  // E == 0 means the entry is stored, not computed, and must be bit-identical.
  void add(std::int64_t position, std::size_t column, double y, const Real& r, double scale = 0.0);
  void merge(const CheckAccumulator&);  // per-thread accumulators into one

  bool passed() const { return entries_ > 0 && over_ == 0 && mismatches_ == 0; }
  const BudgetRow& row() const { return *row_; }
  const std::string& name() const { return name_; }
  nlohmann::ordered_json to_json() const;

 private:
  struct Stats {
    std::uint64_t n = 0, over = 0;
    double max_metric = 0, max_kernel = 0, max_scaled = 0;
    ExactSum sum_scaled, sum_kernel;
  };
  static std::size_t band_of(std::int64_t p);
  void keep_worst(CheckEntryError e);

  std::string name_;
  const BudgetRow* row_;
  DType unit_;
  std::uint64_t entries_ = 0, over_ = 0, mismatches_ = 0, identical_ = 0;
  std::array<std::uint64_t, 5> classes_{};  // per Class
  Stats all_;
  std::array<Stats, kBandTops.size()> bands_;
  std::vector<Stats> columns_;
  std::vector<CheckEntryError> worst_;  // up to kWorst, largest metric first (ties: a total order, worse())
  static constexpr std::size_t kWorst = 10;
};

struct CheckReport {
  std::string scheme;
  nlohmann::ordered_json spec;   // to_json(spec): `posenc check --spec` replays it
  nlohmann::ordered_json input;  // file, stored dtype, shape, positions
  std::vector<CheckAccumulator> references;
  std::size_t held_to = 0;       // index of the accumulator the verdict is held to
  std::string note;              // how the verdict was reached (which row/envelope and why)

  bool passed() const { return references.at(held_to).passed(); }
  // Adds per-thread accumulators (each a copy of `references` made before any entry was added) into references.
  void merge_threads(const std::vector<std::vector<CheckAccumulator>>& per_thread);
  nlohmann::ordered_json to_json() const;
  std::string to_markdown() const;
};

}  // namespace posenc::verify
