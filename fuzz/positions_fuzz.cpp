// fuzz/positions_fuzz.cpp — libFuzzer target: the text of --positions/--tokens (PositionList::parse) and of
// integer and real flags (parse_int64, parse_double), as a user may type them.
// Accepted outcomes: a value, or a UsageError (the one-line message path). Anything else — another exception,
// a crash, a sanitizer report, or a parsed value that breaks the invariants below — is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "args.hpp"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "positions_fuzz: %s\n", what);
  std::abort();
}

void check_list(const posenc::cli::PositionList& l) {
  std::uint64_t total = 0;
  for (const auto& r : l.runs()) {
    if (r.count == 0) finding("a run with no positions");
    if (r.step == 0) finding("a run with step 0");
    total += r.count;
  }
  if (total != l.size()) finding("size() differs from the sum of the runs");
  if (l.size() == 0) finding("an empty list was accepted");
  std::int64_t first = 0;
  const bool contiguous = l.contiguous(&first);
  if (l.size() > 4096) {  // a long range: check its ends without materialising it
    if (contiguous && l.runs().front().start != first) finding("contiguous() gives a first that is not the first");
    return;
  }
  const auto v = l.materialize();
  if (v.size() != l.size()) finding("materialize() has the wrong length");
  bool runs_of_one = true;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i - 1] == std::numeric_limits<std::int64_t>::max() || v[i] != v[i - 1] + 1) runs_of_one = false;
  if (contiguous != runs_of_one) finding("contiguous() disagrees with the materialised list");
  if (contiguous && first != v.front()) finding("contiguous() gives the wrong first");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check_list(posenc::cli::PositionList::parse("--positions", text));
  } catch (const posenc::cli::UsageError&) {
  }
  try {
    const std::int64_t n = posenc::cli::parse_int64("--dim", text);
    // The decimal form of the value reads back to it.
    if (posenc::cli::parse_int64("--dim", std::to_string(n)) != n) finding("parse_int64 does not round-trip");
  } catch (const posenc::cli::UsageError&) {
  }
  try {
    const double x = posenc::cli::parse_double("--base", text);
    if (std::isfinite(x)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", x);
      if (posenc::cli::parse_double("--base", buf) != x) finding("parse_double does not round-trip");
    }
  } catch (const posenc::cli::UsageError&) {
  }
  return 0;
}
