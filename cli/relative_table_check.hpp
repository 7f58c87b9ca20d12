// cli/relative_table_check.hpp — `posenc check <scheme>` of the table of one call for the sinusoid-relative
// attentions (Transformer-XL, XLNet, TENER): the same reading of --in [rows, width], the same spec completion and the
// same report for the three; what differs (how the rows give the call's lengths, the scheme's checker) is the
// caller's `check`. Header-only and included by the scheme files alone: it uses the checkers' input type
// (verify/relative_check.hpp, in posenc_verify, which the program links and posenc_cli_core does not).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>

#include "npy_reader.hpp"
#include "posenc/error.hpp"
#include "relative_verbs.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"
#include "verify/relative_check.hpp"

namespace posenc::cli {

// Reads --in (a table [rows, width]; `accepted` names it for any other shape), completes the spec (its `width` member
// from the table unless --spec, --preset or `width_flag` gave it), runs check(spec, table, allowance, threads) and
// writes its report; exit status 0 when it passed, 1 when not. A spec error is renamed to the flag the user typed;
// check may refuse the rows with a UsageError naming --in.
template <class Spec, class Check>
void run_relative_table_check(SpecOptions<Spec>& spec, TableCheckFlags& f, const CLI::App* app,
                              std::size_t Spec::*width, const std::string& width_flag, const std::string& accepted,
                              Check&& check) {
  const NpyArray a = f.in.read();
  if (a.shape.size() != 2)
    throw UsageError("--in: '" + f.in.path + "' holds an array of shape " + shape_text(a.shape) + "; accepted: " +
                     accepted);
  const auto [ulp_func, ulp_trig] = f.allowance(app);
  const TableOptions opts = parse_threads(f.threads);
  verify::CheckReport rep;
  try {
    Spec s = spec.build();
    if (!spec.given("--spec") && !spec.given("--preset") && !spec.given(width_flag)) {
      s.*width = a.shape[1];
      validate(s);
    }
    verify::relative::TableInput in{a.values, a.shape[0], a.shape[1], dtype_of(a.stored), {}};
    in.describe = {{"file", f.in.path}, {"stored", std::string(to_string(a.stored))}, {"shape", shape_text(a.shape)}};
    rep = check(s, in, reference::EnvelopeAllowance{ulp_func, ulp_trig}, opts.threads);
  } catch (const Error& e) {
    throw SpecOptions<Spec>::renamed(e);
  }
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

}  // namespace posenc::cli
