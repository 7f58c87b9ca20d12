// posenc_accuracy_sweep — every registered scheme's sweep (support/sweep.hpp) into one accuracy.json.
//
//   posenc_accuracy_sweep [--out FILE] [--smoke | --long] [--scheme NAME]...
// Exit status: 0 all rows within budget, 1 a measured maximum over its row (the JSON is still written),
// 2 bad arguments or an unwritable file.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "posenc/blas.hpp"
#include "support/sweep.hpp"

namespace posenc::test {
namespace {

struct Registered {
  std::string scheme;
  SweepFn fn;
};
std::vector<Registered>& registry() {
  static std::vector<Registered> r;
  return r;
}

const auto g_start = std::chrono::steady_clock::now();

struct RowAgg {
  double max = -1;
  std::string worst;
  std::uint64_t samples = 0;
  std::map<std::string, std::uint64_t> failures;
};

}  // namespace

std::string_view to_string(SweepMode m) {
  switch (m) {
    case SweepMode::smoke: return "smoke";
    case SweepMode::standard: return "default";
    case SweepMode::extended: return "long";
  }
  return "?";
}

double SweepContext::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

bool register_sweep(std::string_view scheme, SweepFn fn) {
  registry().push_back({std::string(scheme), fn});
  return true;
}

}  // namespace posenc::test

int main(int argc, char** argv) {
  using namespace posenc::test;
  using nlohmann::json;
  posenc::select_blas_kernels(argc, argv);
  std::string out = "accuracy.json";
  SweepContext ctx;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (!std::strcmp(argv[i], "--long")) ctx.mode = SweepMode::extended;
    else if (!std::strcmp(argv[i], "--smoke")) ctx.mode = SweepMode::smoke;
    else if (!std::strcmp(argv[i], "--scheme") && i + 1 < argc) only.emplace_back(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--out FILE] [--smoke | --long] [--scheme NAME]...\n", argv[0]);
      return 2;
    }
  }
  std::map<std::string, RowAgg> rows;
  ctx.aggregate = [&rows](const posenc::test::BudgetRow& row, const Measure& m, double, const Real*, const Describe& in) {
    RowAgg& a = rows[row.id];
    ++a.samples;
    const double e = m.ok() ? m.err : std::numeric_limits<double>::infinity();
    if (!m.ok()) ++a.failures[std::string(to_string(m.cls))];
    if (e > a.max) {
      a.max = e;
      a.worst = (m.ok() ? "" : "[" + std::string(to_string(m.cls)) + "] ") + in();
    }
  };
  ctx.series = json::array();
  std::vector<std::string> ran;
  for (const auto& r : registry()) {
    if (!only.empty() && std::find(only.begin(), only.end(), r.scheme) == only.end()) continue;
    std::fprintf(stderr, "[sweep] %s (%s)\n", r.scheme.c_str(), std::string(to_string(ctx.mode)).c_str());
    r.fn(ctx);
    ran.push_back(r.scheme);
  }
  for (const auto& name : only)
    if (std::find(ran.begin(), ran.end(), name) == ran.end()) {
      std::fprintf(stderr, "posenc_accuracy_sweep: --scheme %s has no sweep; registered:", name.c_str());
      for (const auto& r : registry()) std::fprintf(stderr, " %s", r.scheme.c_str());
      std::fprintf(stderr, "\n");
      return 2;
    }

  json budget = json::array();
  bool over = false;
  for (const BudgetRow& row : budget_rows()) {
    // With --scheme, the rows of those schemes only: the report merges the files of schemes swept side by side.
    if (!only.empty() && std::find(ran.begin(), ran.end(), row.scheme) == ran.end()) continue;
    json r{{"id", row.id},         {"scheme", row.scheme}, {"quantity", row.quantity},
           {"dtype", row.dtype},   {"regime", row.regime}, {"domain", row.domain},
           {"metric", metric_text(row.metric)}, {"metric_kind", std::string(to_string(row.metric.kind))},
           {"bound", row.bound},   {"why", row.why}};
    const auto it = rows.find(row.id);
    if (it == rows.end() || it->second.samples == 0) {
      r["measured_max"] = nullptr;
      r["worst_input"] = nullptr;
      r["samples"] = 0;
      r["note"] = "measured by the property program only (see proofs-*.json)";
    } else {
      const RowAgg& a = it->second;
      r["measured_max"] = std::isfinite(a.max) ? json(a.max) : json(nullptr);
      r["worst_input"] = a.worst;
      r["samples"] = a.samples;
      r["failures"] = a.failures;
      const bool fail = !std::isfinite(a.max) || a.max > row.bound;
      r["within_bound"] = !fail;
      if (fail) {
        over = true;
        std::fprintf(stderr, "OVER BUDGET: %s measured %.6g > bound %.6g at %s\n", row.id.c_str(), a.max, row.bound,
                     a.worst.c_str());
      }
    }
    budget.push_back(r);
  }
  json meta = json::parse(run_meta_json("posenc_accuracy_sweep"));
  meta["mode"] = std::string(to_string(ctx.mode));
  meta["schemes"] = ran;
  meta["seconds"] = ctx.elapsed_seconds();
  const json doc{{"meta", meta}, {"budget", budget}, {"series", ctx.series}};
  std::ofstream f(out);
  if (!f) {
    std::fprintf(stderr, "posenc_accuracy_sweep: cannot write %s\n", out.c_str());
    return 2;
  }
  f << doc.dump(1) << "\n";
  f.close();
  if (!f) {
    std::fprintf(stderr, "posenc_accuracy_sweep: error writing %s\n", out.c_str());
    return 2;
  }
  std::fprintf(stderr, "wrote %s (%.0f s)\n", out.c_str(), meta["seconds"].get<double>());
  for (const auto& r : budget)
    if (r["samples"].get<std::uint64_t>() > 0)
      std::fprintf(stderr, "  %-42s bound %-10.4g measured %-10.4g n=%llu\n", r["id"].get<std::string>().c_str(),
                   r["bound"].get<double>(), r["measured_max"].is_null() ? NAN : r["measured_max"].get<double>(),
                   static_cast<unsigned long long>(r["samples"].get<std::uint64_t>()));
  return over ? 1 : 0;
}
