// `posenc budget`: the rows of the budget table (verify/budget.hpp), which the program links with the
// checkers (posenc_verify); one line per row, or a row with its error analysis, or JSON.
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "args.hpp"
#include "verify/budget.hpp"
#include "output.hpp"
#include "posenc/describe.hpp"
#include "posenc/json_text.hpp"
#include "registry.hpp"

namespace posenc::cli {
namespace budget_command {  // (a named namespace: this file is compiled in a unity unit with the scheme files)

struct BudgetQuery {
  std::string scheme, row, format = "text";
};

Json row_json(const verify::BudgetRow& r) {
  return {{"id", r.id},         {"scheme", r.scheme}, {"quantity", r.quantity}, {"dtype", r.dtype},
          {"regime", r.regime}, {"domain", r.domain},
          {"metric", {{"kind", std::string(verify::to_string(r.metric.kind))},
                      {"unit", std::string(to_string(r.metric.unit))},
                      {"scale", r.metric.scale},
                      {"text", verify::metric_text(r.metric)}}},
          {"bound", r.bound},   {"why", r.why}};
}

// The rows a query selects; a --scheme or --row that names nothing is a usage error listing what exists.
std::vector<const verify::BudgetRow*> select_rows(const BudgetQuery& q) {
  const auto rows = verify::budget_rows();
  std::set<std::string> schemes;
  for (const auto& r : rows) schemes.insert(r.scheme);
  if (!q.scheme.empty() && !schemes.count(q.scheme)) {
    std::string names;
    for (const auto& s : schemes) names += (names.empty() ? "" : " | ") + s;
    throw UsageError("--scheme: '" + text_excerpt(q.scheme) + "' has no budget rows; accepted: " + names);
  }
  std::vector<const verify::BudgetRow*> out;
  for (const auto& r : rows)
    if ((q.scheme.empty() || r.scheme == q.scheme) && (q.row.empty() || r.id == q.row)) out.push_back(&r);
  if (!q.row.empty() && out.empty())
    throw UsageError("--row: '" + text_excerpt(q.row) + "' is not a budget row" +
                     (q.scheme.empty() ? "" : " of " + q.scheme) +
                     "; accepted: a row id as `posenc budget` lists them (e.g. " + rows.front().id + ")");
  return out;
}

void print_budget_text(const std::vector<const verify::BudgetRow*>& rows, bool with_analysis) {
  Output out("-", false);
  std::FILE* f = out.file();
  for (const verify::BudgetRow* r : rows) {
    std::fprintf(f, "%s  <= %.17g  (%s)\n", r->id.c_str(), r->bound, verify::metric_text(r->metric).c_str());
    print_wrapped(f, 4, r->quantity + "; " + r->dtype + "; regime " + r->regime + "; domain: " + r->domain);
    if (with_analysis) print_wrapped(f, 4, "why: " + r->why);
  }
  out.commit();
}

}  // namespace budget_command

void register_budget_command(Registry& reg) {
  using namespace budget_command;
  auto q = std::make_shared<BudgetQuery>();
  CLI::App* budget = reg.app().add_subcommand(
      "budget", "The budget table: every accuracy bound posenc proves or checks against, with its error analysis");
  budget->add_option("--scheme", q->scheme, "only this scheme's rows (a scheme of posenc list)");
  budget->add_option("--row", q->row, "only this row, with its error analysis (e.g. rope.check.envelope)");
  budget->add_option("--format", q->format, "text (default: one line per row; --row adds the analysis) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->type_name("text|json");
  budget->callback([q] {
    const auto rows = select_rows(*q);
    if (q->format != "json") return print_budget_text(rows, !q->row.empty());
    Json doc;
    doc["count"] = rows.size();
    doc["rows"] = Json::array();
    for (const verify::BudgetRow* r : rows) doc["rows"].push_back(row_json(*r));
    print_json(doc);
  });
}

}  // namespace posenc::cli
