#include "claims.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "verify/budget.hpp"
#include "posenc/blas.hpp"
#include "posenc/build_info.hpp"

namespace posenc::test {
namespace {

struct Pending {
  std::string test, claim_id;
};

struct Ledger {
  std::deque<Claim> claims;          // stable addresses
  std::vector<Pending> regressions;  // resolved on first read
  std::vector<const Claim*> view;
  bool resolved = false;
};

Ledger& ledger() {
  static Ledger l;
  return l;
}

void resolve() {
  Ledger& l = ledger();
  if (l.resolved) return;
  for (Claim& c : l.claims) c.tests.resize(1);
  for (const Pending& p : l.regressions) {
    Claim* c = nullptr;
    for (Claim& x : l.claims)
      if (x.id == p.claim_id) c = &x;
    if (!c) throw std::logic_error("claims: regression test " + p.test + " names unknown claim " + p.claim_id);
    c->tests.push_back(p.test);
  }
  for (const Claim& c : l.claims) l.view.push_back(&c);
  l.resolved = true;
}

struct RowStats {
  std::uint64_t cases = 0;
  double max_error = -1.0;
  std::string worst_input;
  std::map<std::string, std::uint64_t> failures;  // class or "over budget" -> count
};

struct ClaimStats {
  std::uint64_t cases = 0;
  std::map<std::string, std::uint64_t> regions;
  std::map<std::string, RowStats> rows;
};

std::mutex g_mutex;
std::map<std::string, ClaimStats, std::less<>>& stats() {
  static std::map<std::string, ClaimStats, std::less<>> s;
  return s;
}

ClaimStats& stats_of(const Claim& c) { return stats()[c.id]; }

std::string iso_date() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string fmt(double x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// Test name -> "passed" | "failed" | "not run", from GoogleTest's results of this process.
std::map<std::string, std::string> test_statuses() {
  std::map<std::string, std::string> status;
  const auto* ut = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < ut->total_test_suite_count(); ++i) {
    const auto* suite = ut->GetTestSuite(i);
    for (int k = 0; k < suite->total_test_count(); ++k) {
      const auto* info = suite->GetTestInfo(k);
      std::string st = "not run";
      if (info->should_run() && info->result() != nullptr && !info->result()->Skipped()) {
        // A test that ran has a start timestamp; Passed() is also true for tests that never ran.
        if (info->result()->start_timestamp() != 0 || info->result()->total_part_count() > 0)
          st = info->result()->Failed() ? "failed" : "passed";
      }
      status[std::string(suite->name()) + "." + info->name()] = st;
    }
  }
  return status;
}

}  // namespace

std::string_view to_string(Oracle o) {
  switch (o) {
    case Oracle::identity: return "identity";
    case Oracle::reference: return "reference";
    case Oracle::differential: return "differential";
  }
  return "?";
}

bool Claim::uses(std::string_view row_id) const {
  for (const auto& r : budget_rows)
    if (r == row_id) return true;
  return false;
}

const Claim& register_claim(std::string test, ClaimInfo info) {
  Ledger& l = ledger();
  for (const Claim& c : l.claims)
    if (c.id == info.id) throw std::logic_error("claims: two claims with id " + info.id + " (" + c.test() + ", " + test + ")");
  Claim c{info.id, info.scheme, info.statement, info.source, info.oracle, {}, {std::move(test)}};
  for (const RowRef& r : info.rows) c.budget_rows.emplace_back(r.id);
  l.claims.push_back(std::move(c));
  l.resolved = false;
  l.view.clear();
  return l.claims.back();
}

bool add_regression_test(std::string test, std::string claim_id) {
  Ledger& l = ledger();
  l.regressions.push_back({std::move(test), std::move(claim_id)});
  l.resolved = false;
  l.view.clear();
  return true;
}

std::span<const Claim* const> claims() {
  std::lock_guard lock(g_mutex);
  resolve();
  return ledger().view;
}

const Claim& claim(std::string_view id) {
  for (const Claim* c : claims())
    if (c->id == id) return *c;
  throw std::out_of_range("claims: no claim with id '" + std::string(id) + "'");
}

std::vector<std::string> claims_without_tests() {
  const auto status = test_statuses();
  std::vector<std::string> missing;
  for (const Claim* c : claims())
    for (const std::string& t : c->tests)
      if (!status.contains(t)) missing.push_back(c->id + " -> " + t);
  return missing;
}

void count_case(const Claim& c) {
  std::lock_guard lock(g_mutex);
  ++stats_of(c).cases;
}

void tag(const Claim& c, std::string_view region) {
  RC_TAG(std::string(region));  // inside a property RapidCheck prints the distribution; outside it is a no-op
  std::lock_guard lock(g_mutex);
  ++stats_of(c).regions[std::string(region)];
}

bool record(const Claim& c, const BudgetRow& row, const Measure& m, const Describe& describe) {
  if (!c.uses(row.id))
    throw std::logic_error("claims: claim " + c.id + " records budget row " + row.id + ", which its ledger entry does not list");
  const bool within = m.ok() && m.err <= row.bound;
  std::lock_guard lock(g_mutex);
  RowStats& r = stats_of(c).rows[row.id];
  ++r.cases;
  const double e = m.ok() ? m.err : std::numeric_limits<double>::infinity();
  if (!m.ok()) ++r.failures[std::string(to_string(m.cls))];
  else if (!within) ++r.failures["over budget"];
  if (e > r.max_error) {
    r.max_error = e;
    r.worst_input = describe ? describe() : std::string();
    if (!m.ok()) r.worst_input = "[" + std::string(to_string(m.cls)) + "] " + r.worst_input;
  }
  return within;
}

std::optional<std::string> check(const Claim& c, const BudgetRow& row, const Measure& m, double computed,
                                 const Real* reference, const Describe& inputs) {
  if (record(c, row, m, inputs)) return std::nullopt;
  std::ostringstream o;
  o << "claim " << c.id << " (" << c.test() << ") violates budget row " << row.id << "\n"
    << "  inputs:    " << (inputs ? inputs() : std::string("?")) << "\n"
    << "  computed:  " << dec_hex(computed) << "\n";
  if (reference) o << "  reference: " << ref40(*reference) << "\n";
  o << "  class:     " << to_string(m.cls) << "\n"
    << "  error:     " << (m.ok() ? fmt(m.err) : std::string("n/a")) << " (" << metric_text(row.metric) << ")\n"
    << "  bound:     " << fmt(row.bound) << "  [" << row.domain << "]\n"
    << "  RC_PARAMS: " << (std::getenv("RC_PARAMS") ? std::getenv("RC_PARAMS") : "(unset)")
    << " (RapidCheck prints the reproduce string at exit)";
  return o.str();
}

std::optional<std::string> check(const Claim& c, const BudgetRow& row, double y, const Real& r, const Describe& inputs,
                                 double scale) {
  return check(c, row, measure(row, y, r, scale), y, &r, inputs);
}

std::string run_meta_json(std::string_view program) {
  const BuildInfo b = build_info();
  const BlasInfo blas = blas_info();
  nlohmann::json j;
  j["program"] = std::string(program);
  j["commit"] = b.commit;
  j["run_id"] = b.run_id;
  j["compiler"] = b.compiler;
  j["flags"] = b.flags;
  j["build_type"] = b.build_type;
  j["blas_core"] = blas.core;
  j["blas_core_best"] = blas.best_core;
  j["blas_fallback"] = blas.fallback;
  j["blas_forced"] = blas.forced;
  j["blas_threads"] = blas.threads;
  j["omp_threads"] = omp_get_max_threads();
  const char* rc = std::getenv("RC_PARAMS");
  j["rc_params"] = rc ? rc : "";
  j["date"] = iso_date();
  return j.dump();
}

bool write_proofs(std::string_view program) {
  const char* dir = std::getenv("POSENC_RESULTS_DIR");
  if (!dir || !*dir) return true;
  const auto status = test_statuses();
  nlohmann::json out;
  out["meta"] = nlohmann::json::parse(run_meta_json(program));
  out["claims"] = nlohmann::json::array();
  const auto all = claims();
  std::lock_guard lock(g_mutex);
  for (const Claim* cp : all) {
    const Claim& c = *cp;
    // The claim's status: not run if its defining test did not run; failed if any of its tests failed or a
    // case recorded under it (by any test) was outside its budget; passed otherwise.
    const auto main_status = status.find(c.test());
    std::string st = main_status == status.end() ? "not run" : main_status->second;
    for (const std::string& t : c.tests)
      if (auto it = status.find(t); it != status.end() && it->second == "failed") st = "failed";
    const auto it = stats().find(c.id);
    const ClaimStats empty;
    const ClaimStats& s = it == stats().end() ? empty : it->second;
    bool any_failure = false;
    for (const auto& [rid, rs] : s.rows) any_failure = any_failure || !rs.failures.empty();
    if (st == "passed" && any_failure) st = "failed";

    nlohmann::json e;
    e["id"] = c.id;
    e["scheme"] = c.scheme;
    e["test"] = c.test();
    e["tests"] = c.tests;
    e["statement"] = c.statement;
    e["source"] = c.source;
    e["oracle"] = std::string(to_string(c.oracle));
    e["status"] = st;
    e["cases"] = s.cases;
    // Headline row: the one closest to its bound (largest max_error / bound; bound 0 rows count as
    // tight when their max error is positive).
    const RowStats* head = nullptr;
    std::string head_id;
    double head_ratio = -1;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [rid, rs] : s.rows) {
      const BudgetRow& br = budget(rid);
      const double ratio = br.bound > 0 ? rs.max_error / br.bound : (rs.max_error > 0 ? INFINITY : 0.0);
      if (ratio > head_ratio) head_ratio = ratio, head = &rs, head_id = rid;
      nlohmann::json r;
      r["budget_row"] = rid;
      r["metric"] = metric_text(br.metric);
      r["bound"] = br.bound;
      r["cases"] = rs.cases;
      r["max_error"] = std::isfinite(rs.max_error) ? nlohmann::json(rs.max_error) : nlohmann::json(nullptr);
      r["worst_input"] = rs.worst_input;
      r["failures"] = rs.failures;
      rows.push_back(r);
    }
    const std::string fallback_row = c.budget_rows.empty() ? std::string() : c.budget_rows.front();
    const std::string& row_id = head ? head_id : fallback_row;
    if (!row_id.empty()) {
      const BudgetRow& br = budget(row_id);
      e["budget_row"] = row_id;
      e["metric"] = metric_text(br.metric);
      e["bound"] = br.bound;
    } else {
      e["budget_row"] = nullptr;
      e["metric"] = nullptr;
      e["bound"] = nullptr;
    }
    e["max_error"] = head && std::isfinite(head->max_error) ? nlohmann::json(head->max_error) : nlohmann::json(nullptr);
    e["worst_input"] = head ? nlohmann::json(head->worst_input) : nlohmann::json(nullptr);
    e["regions"] = s.regions;
    e["rows"] = rows;
    e["budget_rows"] = c.budget_rows;
    out["claims"].push_back(e);
  }
  const std::string path = std::string(dir) + "/proofs-" + std::string(program) + ".json";
  std::ofstream f(path);
  if (!f) {
    std::fprintf(stderr, "posenc: cannot write %s\n", path.c_str());
    return false;
  }
  f << out.dump(2) << "\n";
  return static_cast<bool>(f);
}

}  // namespace posenc::test

#include "harness.hpp"
#include "posenc/half.hpp"

namespace posenc::test {

Sink claim_sink(const Claim& c, FailWith how) {
  return [&c, how](const BudgetRow& row, const Measure& m, double y, const Real* r, const Describe& in) {
    if (!c.uses(row.id)) return;
    if (auto failure = check(c, row, m, y, r, in)) {
      if (how == FailWith::rapidcheck) RC_FAIL(*failure);
      ADD_FAILURE() << *failure;
    }
  };
}

void check_verdict(const Claim& claim, const CheckReport& rep, std::size_t ref, const std::string& what) {
  const auto j = rep.references.at(ref).to_json();
  const double max = j["overall"]["max_metric"].is_null() ? INFINITY : j["overall"]["max_metric"].get<double>();
  const bool classes_ok = j["over_bound"].get<std::uint64_t>() == 0 && rep.references.at(ref).passed();
  const Measure m{classes_ok || std::isfinite(max) ? Class::ok : Class::nan, max};
  if (auto f = check(claim, rep.references.at(ref).row(), m, max, nullptr, [&] { return what + " report: " + j.dump().substr(0, 600); }))
    ADD_FAILURE() << *f;
  EXPECT_TRUE(rep.references.at(ref).passed()) << what;
}

void expect_bitwise(const Claim& claim, const BudgetRow& row, double a, double b, const Describe& what) {
  const Real rb = posenc::reference::make_real(b, 53);
  if (auto f = check(claim, row, measure(row, a, rb), a, &rb, what)) ADD_FAILURE() << *f;
}

double round_to(double x, DType t) {  // one rounding from the double (posenc/half.hpp for the 16-bit types)
  switch (t) {
    case DType::f16: return to_double(to_f16(x));
    case DType::bf16: return to_double(to_bf16(x));
    case DType::f32: return static_cast<float>(x);
    case DType::f64: return x;
  }
  return x;
}

}  // namespace posenc::test
