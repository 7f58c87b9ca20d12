#include "schemes/sinusoidal/check.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "posenc/error.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/spec_json.hpp"
#include "verify/parallel_cases.hpp"
#include "schemes/sinusoidal/budget.hpp"

namespace posenc::verify::sinusoidal {
namespace {

namespace rf = posenc::reference;
constexpr unsigned kCheckBits = 128;  // the reference's own error (2^-128) is far below any ulp checked

std::string rule_name(const SinusoidalSpec& s) { return std::string(to_string(s.rule)); }

}  // namespace

CheckReport check_table(const SinusoidalSpec& spec, const TableInput& in, const rf::EnvelopeAllowance& allowance,
                        int threads) {
  validate(spec);
  if (in.cols != spec.dim)
    throw Error("sinusoidal check", "dim", std::to_string(spec.dim), "the table's last dimension, " + std::to_string(in.cols),
                "differs from the table");
  if (in.positions.size() != in.rows)
    throw Error("sinusoidal check", "positions", std::to_string(in.positions.size()) + " positions",
                "one position per table row (" + std::to_string(in.rows) + " rows)", "does not match the table");
  if (in.values.size() != in.rows * in.cols)
    throw Error("sinusoidal check", "values", std::to_string(in.values.size()), std::to_string(in.rows * in.cols));
  for (std::int64_t p : in.positions) check_position(spec, p);
  if (!(allowance.exp_ulps >= 0 && allowance.exp_ulps <= 1e6 && allowance.trig_ulps >= 0 && allowance.trig_ulps <= 1e6))
    throw Error("sinusoidal check", "ulp allowance", std::to_string(allowance.exp_ulps) + ", " + std::to_string(allowance.trig_ulps),
                "reals in [0, 1e6]");

  const rf::SinusoidalOracle oracle(spec, kCheckBits);
  const BudgetRow& exact_row = budget(check_exact_row(in.stored));
  const BudgetRow& env_row = budget(SinusoidalRow::check_envelope);
  const std::string emu_name = "emulated (" + rule_name(spec) + " float32 steps)";

  CheckReport rep;
  rep.scheme = "sinusoidal";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  rep.input["positions"] = {{"count", in.positions.size()},
                            {"first", in.positions.empty() ? 0 : in.positions.front()},
                            {"last", in.positions.empty() ? 0 : in.positions.back()}};
  rep.references.emplace_back("exact", exact_row, in.stored, in.cols);
  rep.references.emplace_back(emu_name, env_row, in.stored, in.cols);

  const int nt = threads > 0 ? std::min(threads, omp_get_num_procs()) : omp_get_max_threads();
  std::vector<std::vector<CheckAccumulator>> local(static_cast<std::size_t>(std::max(nt, 1)), rep.references);
  const std::int64_t rows = static_cast<std::int64_t>(in.rows);
  parallel_cases(nt, rows, 4, [&](std::int64_t r) {
    auto& acc = local[static_cast<std::size_t>(omp_get_thread_num())];
    const std::int64_t p = in.positions[static_cast<std::size_t>(r)];
    for (std::size_t c = 0; c < in.cols; ++c) {
      const double y = in.values[static_cast<std::size_t>(r) * in.cols + c];
      acc[0].add(p, c, y, oracle.exact(p, c));
      acc[1].add(p, c, y, oracle.emulated(p, c), oracle.envelope(p, c, allowance));
    }
  });
  rep.merge_threads(local);
  if (spec.regime == Regime::emulated) {
    rep.held_to = 1;
    std::ostringstream o;
    o << "The spec's regime is emulated: every entry must lie within the emulation envelope of posenc's correctly "
         "rounded emulation of the "
      << rule_name(spec) << " float32 steps, allowing a float32 exp within " << allowance.exp_ulps
      << " ulp and sin/cos within " << allowance.trig_ulps << " ulp of correctly rounded (--ulp-exp, --ulp-trig).";
    rep.note = o.str();
  } else {
    rep.held_to = 0;
    rep.note = "The spec's regime is exact: every entry must be within the budget row's bound of the real value "
               "(err_S with S = 1, in ulps of the input's type), as posenc's own tables are. The emulated column shows how "
               "far the table is from the float32 steps of the rule's own implementation.";
  }
  return rep;
}

// ---- identify -----------------------------------------------------------------------------------------------

namespace {

std::vector<std::string> field_differences(const SinusoidalSpec& from, const SinusoidalSpec& to) {
  std::vector<std::string> out;
  for_each_field<SinusoidalSpec>([&](const auto& f) {
    if (f.name == "dim" || f.name == "regime") return;  // dim is the table's; the regime is reported on its own
    const std::string a = field_text(f, from), b = field_text(f, to);
    if (a != b) out.push_back(std::string(f.name) + ": " + a + " -> " + b);
  });
  return out;
}

}  // namespace

Identification identify_table(const TableInput& in, std::size_t sample_rows) {
  if (in.rows == 0 || in.cols < 2) throw Error("sinusoidal identify", "table", std::to_string(in.rows) + " x " + std::to_string(in.cols),
                                               "at least 1 row of at least 2 columns");
  // Sample rows: the first ones (where offsets and padding rows show) and some spread over the table.
  std::vector<std::size_t> rows_idx;
  for (std::size_t i = 0; i < std::min(in.rows, sample_rows / 2); ++i) rows_idx.push_back(i);
  for (std::size_t k = 0; k < sample_rows / 2 && in.rows > sample_rows / 2; ++k)
    rows_idx.push_back(sample_rows / 2 + k * (in.rows - sample_rows / 2 - 1) / std::max<std::size_t>(1, sample_rows / 2 - 1));
  std::sort(rows_idx.begin(), rows_idx.end());
  rows_idx.erase(std::unique(rows_idx.begin(), rows_idx.end()), rows_idx.end());

  std::vector<Candidate> cands;
  for (const auto& preset : SpecTraits<SinusoidalSpec>::presets()) {
    for (Layout layout : {Layout::interleaved, Layout::halves})
      for (FrequencyRule rule : {FrequencyRule::paper, FrequencyRule::tensor2tensor, FrequencyRule::fairseq})
        for (Regime regime : {Regime::exact, Regime::emulated})
          for (bool keep_padding : {true, false})
            for (std::int64_t off = -2; off <= 2; ++off) {
              SinusoidalSpec s = preset.spec;
              s.dim = in.cols;
              if (s.dim % 2) s.odd_dim = OddDim::zero_pad;
              s.layout = layout;
              s.rule = rule;
              s.regime = regime;
              if (!keep_padding) s.padding_row.reset();
              if (!keep_padding && !preset.spec.padding_row) continue;
              if (!is_valid(s)) continue;
              bool ok = true;
              for (std::size_t i : rows_idx) {
                const std::int64_t p = in.positions[i] + off;
                if (p < 0 || p > max_abs_position(s)) ok = false;
              }
              if (!ok) continue;
              Candidate c{s, off, std::string(preset.name), field_differences(preset.spec, s), 0, false, {}};
              if (off != 0) c.differs.push_back("row positions shifted by " + std::to_string(off));
              // The same convention reached from two presets: keep the plainest description.
              auto same = std::find_if(cands.begin(), cands.end(),
                                       [&](const Candidate& x) { return x.spec == s && x.row_offset == off; });
              if (same == cands.end()) cands.push_back(std::move(c));
              else if (c.differs.size() < same->differs.size()) *same = std::move(c);
            }
  }
  // Rank by the fast path (posenc's own rows in double).
  std::vector<std::int64_t> pos;
  for (std::size_t i : rows_idx) pos.push_back(in.positions[i]);
  for (auto& c : cands) {
    std::vector<std::int64_t> q(pos);
    for (auto& p : q) p += c.row_offset;
    std::vector<double> mine(q.size() * in.cols);
    sinusoidal_rows(c.spec, q, std::span<double>(mine), TableOptions{.threads = 1});
    const double u = std::ldexp(1.0, 1 - precision_bits(in.stored));  // ulp of the stored type at 1
    double worst = 0;
    for (std::size_t r = 0; r < q.size(); ++r)
      for (std::size_t col = 0; col < in.cols; ++col) {
        const double y = in.values[rows_idx[r] * in.cols + col];
        const double d = std::fabs(y - mine[r * in.cols + col]);
        worst = std::max(worst, std::isnan(d) ? INFINITY : d / u);
      }
    c.max_scaled_ulp = worst;
  }
  std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    if (a.max_scaled_ulp != b.max_scaled_ulp) return a.max_scaled_ulp < b.max_scaled_ulp;
    return a.differs.size() < b.differs.size();  // the plainest description of equal tables first
  });
  if (cands.size() > 8) cands.resize(8);
  // Verify the best few against the oracle on the sampled rows (the real check, budget rows and envelope).
  Identification id;
  std::vector<double> vals;
  for (std::size_t i : rows_idx) vals.insert(vals.end(), in.values.begin() + static_cast<std::ptrdiff_t>(i * in.cols),
                                             in.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * in.cols));
  for (std::size_t k = 0; k < std::min<std::size_t>(3, cands.size()); ++k) {
    auto& c = cands[k];
    TableInput sub{vals, rows_idx.size(), in.cols, in.stored, {}, {}};
    for (std::int64_t p : pos) sub.positions.push_back(p + c.row_offset);
    const CheckReport rep = check_table(c.spec, sub);
    c.verified = rep.passed();
    const auto j = rep.to_json();
    c.check = {{"verdict", j["verdict"]}, {"budget_row", j["budget_row"]}, {"held_to", j["held_to"]},
               {"max_metric", j["references"][rep.held_to]["overall"]["max_metric"]}};
  }
  // A verified candidate with the fewest differences wins over an unverified better-ranked one.
  std::stable_partition(cands.begin(), cands.end(), [](const Candidate& c) { return c.verified; });
  id.ranked = std::move(cands);
  id.matched = !id.ranked.empty() && id.ranked.front().verified;
  return id;
}

nlohmann::ordered_json Identification::to_json() const {
  nlohmann::ordered_json j;
  j["scheme"] = "sinusoidal";
  j["matched"] = matched;
  if (!ranked.empty()) {
    const Candidate& b = ranked.front();
    const std::string name = b.preset + " (" + std::string(to_string(b.spec.regime)) + ")";
    j["verdict"] = matched ? (b.differs.empty() ? "preset " + name : "preset " + name + " with differences")
                           : "no convention matches; nearest: " + name;
    j["preset"] = b.preset;
    j["regime"] = std::string(to_string(b.spec.regime));
    j["differs"] = b.differs;
    j["spec"] = posenc::to_json(b.spec);
  }
  j["candidates"] = nlohmann::ordered_json::array();
  for (const auto& c : ranked)
    j["candidates"].push_back({{"preset", c.preset},
                               {"differs", c.differs},
                               {"row_offset", c.row_offset},
                               {"max_scaled_ulp_fast", std::isfinite(c.max_scaled_ulp) ? nlohmann::ordered_json(c.max_scaled_ulp) : nlohmann::ordered_json(nullptr)},
                               {"verified", c.verified},
                               {"check", c.check},
                               {"spec", posenc::to_json(c.spec)}});
  return j;
}

std::string Identification::to_markdown() const {
  std::ostringstream o;
  const auto j = to_json();
  o << "# posenc identify sinusoidal: " << (j.contains("verdict") ? j["verdict"].get<std::string>() : "no candidate") << "\n\n";
  if (!ranked.empty()) {
    const Candidate& b = ranked.front();
    o << (matched ? "The table is" : "The nearest convention is") << " the **" << b.preset << "** preset in the **"
      << to_string(b.spec.regime) << "** regime";
    if (b.differs.empty()) o << ", exactly.\n";
    else {
      o << ", except:\n";
      for (const auto& d : b.differs) o << "- " << d << "\n";
    }
    o << "\nspec: `" << posenc::to_json(b.spec).dump() << "`\n";
  }
  o << "\n| rank | preset | differences | max scaled ulp (posenc's rows) | oracle check |\n|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const auto& c = ranked[i];
    std::string d;
    for (const auto& x : c.differs) d += (d.empty() ? "" : "; ") + x;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", c.max_scaled_ulp);
    o << "| " << i + 1 << " | " << c.preset << " | " << (d.empty() ? "none" : d) << " | " << buf << " | "
      << (c.check.empty() ? "not run" : c.check["verdict"].get<std::string>() + " (" + c.check["budget_row"].get<std::string>() + ")")
      << " |\n";
  }
  return o.str();
}

}  // namespace posenc::verify::sinusoidal
