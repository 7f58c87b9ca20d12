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

using Candidate = IdentifyCandidate<SinusoidalSpec, std::int64_t>;

// Every preset with every layout, frequency rule, regime, padding row (the preset's or none) and row offset in
// [-2, 2] whose positions the spec takes.
std::vector<Candidate> candidates(const TableInput& in, const std::vector<std::int64_t>& pos) {
  std::vector<Candidate> cands;
  for (const auto& preset : SpecTraits<SinusoidalSpec>::presets())
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
              if ((!keep_padding && !preset.spec.padding_row) || !is_valid(s)) continue;
              if (std::any_of(pos.begin(), pos.end(), [&](std::int64_t p) {
                    return p + off < 0 || p + off > max_abs_position(s);
                  }))
                continue;
              Candidate c{s, off, std::string(preset.name), field_differences(preset.spec, s, {"dim", "regime"}), 0, false, {}};
              if (off != 0) c.differs.push_back("row positions shifted by " + std::to_string(off));
              add_candidate(cands, std::move(c));
            }
  return cands;
}

}  // namespace

Identification identify_table(const TableInput& in, std::size_t sample_rows) {
  if (in.rows == 0 || in.cols < 2) throw Error("sinusoidal identify", "table", std::to_string(in.rows) + " x " + std::to_string(in.cols),
                                               "at least 1 row of at least 2 columns");
  const std::vector<std::size_t> rows_idx = identify_sample_rows(in.rows, sample_rows);
  std::vector<std::int64_t> pos;
  std::vector<double> vals;  // the sampled rows
  for (std::size_t i : rows_idx) {
    pos.push_back(in.positions[i]);
    vals.insert(vals.end(), in.values.begin() + static_cast<std::ptrdiff_t>(i * in.cols),
                in.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * in.cols));
  }
  auto shifted = [&](const Candidate& c) {
    std::vector<std::int64_t> q(pos);
    for (auto& p : q) p += c.extra;
    return q;
  };
  // Ranked by the fast path (posenc's own rows in double), verified by the real check on the sampled rows.
  auto distance = [&](const Candidate& c) {
    const std::vector<std::int64_t> q = shifted(c);
    std::vector<double> mine(q.size() * in.cols);
    sinusoidal_rows(c.spec, q, std::span<double>(mine), TableOptions{.threads = 1});
    return max_scaled_difference(vals, mine, in.stored);
  };
  auto check = [&](const Candidate& c) {
    return check_table(c.spec, TableInput{vals, rows_idx.size(), in.cols, in.stored, shifted(c), {}});
  };
  Identification id = rank_and_verify<SinusoidalSpec, std::int64_t>("sinusoidal", "table", candidates(in, pos),
                                                                    distance, check);
  id.extra_json = [](const std::int64_t& off) { return nlohmann::ordered_json{{"row_offset", off}}; };
  return id;
}

}  // namespace posenc::verify::sinusoidal
