#include "schemes/alibi/check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>

#include "schemes/alibi/budget.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/alibi.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::verify::alibi {
namespace {

namespace rf = posenc::reference;
constexpr unsigned kCheckBits = 128;  // the reference's own error (2^-128) is far below any ulp checked
const std::string kWhere = "alibi check";

double ulp32(double x) { return ulp(x, DType::f32); }  // verify/accuracy.hpp

void check_allowance(const EnvelopeAllowance& a) {
  if (!(a.pow_ulps >= 0 && a.pow_ulps <= 1e6))
    throw Error(kWhere, "ulp allowance", std::to_string(a.pow_ulps), "a real in [0, 1e6]");
}

// One accumulator per reference: exact always, the envelope for an emulated regime; the note says which one holds.
CheckReport start_report(const AlibiSpec& spec, const nlohmann::ordered_json& describe, DType stored,
                         std::size_t columns) {
  CheckReport rep;
  rep.scheme = "alibi";
  rep.spec = to_json(spec);
  rep.input = describe;
  rep.references.emplace_back("exact", budget(check_exact_row(stored)), stored, columns);
  if (spec.regime != AlibiRegime::exact)
    rep.references.emplace_back(std::string("emulated (") + std::string(to_string(spec.regime)) + " float32 steps)",
                                budget(AlibiRow::check_envelope), stored, columns);
  return rep;
}

void finish(CheckReport& rep, const AlibiSpec& spec, const EnvelopeAllowance& a, const char* what) {
  std::ostringstream o;
  if (spec.regime != AlibiRegime::exact) {
    rep.held_to = 1;
    o << "The spec's regime is " << to_string(spec.regime) << ": every " << what
      << " must lie within the emulation envelope of posenc's correctly rounded emulation of those float32 steps, "
         "allowing the slope's pow within "
      << a.pow_ulps
      << " ulp of correctly rounded. The exact column shows how far the numbers are from the mathematics m_h x "
         "(it grows with the distance x: the float32 slope).";
  } else {
    rep.held_to = 0;
    o << "The spec's regime is exact: every " << what
      << " must be within the budget row's bound of m_h x (in ulps of the input's type: what the slope rounded "
         "once to that type times the exact distance achieves).";
  }
  rep.note = o.str();
}

}  // namespace

double envelope(double x, double slope32, double e, const EnvelopeAllowance& a) {
  const double x32 = std::fabs(static_cast<double>(static_cast<float>(x)));
  const double ds = (a.pow_ulps + 1) * ulp32(slope32);
  return x32 * ds + ulp32(std::fabs(e) + x32 * ds);
}

CheckReport check_bias(const AlibiSpec& spec, const BiasInput& in, const EnvelopeAllowance& allowance, int threads) {
  validate(spec);
  check_allowance(allowance);
  check_bias_input(kWhere, spec.heads, in);

  AlibiSpec exact_spec = spec;
  exact_spec.regime = AlibiRegime::exact;
  const rf::AlibiOracle exact(exact_spec, kCheckBits);
  const bool emu = spec.regime != AlibiRegime::exact;
  const rf::AlibiOracle emulated(spec, kCheckBits);
  const std::size_t H = in.heads, Lq = in.query_length, Lk = in.key_length;
  const std::span<const std::uint8_t> mask(in.key_mask);

  CheckReport rep = start_report(spec, in.describe, in.stored, H);
  describe_geometry(rep, in);

  scan_bias_tensor(rep, in, threads, [&](auto& acc, std::size_t h, std::size_t i, std::size_t, auto js) {
    // References depend only on (head, x): keep them per row (a row's x are distinct for most variants).
    std::unordered_map<std::int64_t, std::pair<Real, Real>> refs;
    const double s32 = emu ? static_cast<double>(emulated.slope(h)) : 0.0;
    for (std::size_t j : js) {
      const double y = in.values[(h * Lq + i) * Lk + j];
      const std::int64_t x = rf::alibi_multiplier(spec, i, j, Lq, Lk, mask);
      auto it = refs.find(x);
      if (it == refs.end())
        it = refs.emplace(x, std::make_pair(exact.bias(h, i, j, Lq, Lk, mask),
                                            emu ? emulated.bias(h, i, j, Lq, Lk, mask) : Real()))
                 .first;
      acc[0].add(x, h, y, it->second.first);
      if (emu) {
        const double e = static_cast<double>(it->second.second);
        acc[1].add(x, h, y, it->second.second, envelope(static_cast<double>(x), s32, e, allowance));
      }
    }
  });
  finish(rep, spec, allowance, "bias entry");
  return rep;
}

CheckReport check_slopes(const AlibiSpec& spec, std::span<const double> slopes, DType stored,
                         const nlohmann::ordered_json& describe, const EnvelopeAllowance& allowance) {
  validate(spec);
  check_allowance(allowance);
  if (slopes.size() != spec.heads)
    throw Error(kWhere, "heads", std::to_string(spec.heads), "the number of slopes in the file, " +
                                                                 std::to_string(slopes.size()),
                "does not match the slopes");
  AlibiSpec exact_spec = spec;
  exact_spec.regime = AlibiRegime::exact;
  const rf::AlibiOracle exact(exact_spec, kCheckBits);
  const bool emu = spec.regime != AlibiRegime::exact;
  const rf::AlibiOracle emulated(spec, kCheckBits);
  CheckReport rep = start_report(spec, describe, stored, spec.heads);
  rep.input["what"] = "slopes (each checked as the bias at distance x = 1)";
  for (std::size_t h = 0; h < spec.heads; ++h) {
    rep.references[0].add(1, h, slopes[h], exact.slope(h));
    if (emu) {
      const Real e = emulated.slope(h);
      const double ed = static_cast<double>(e);
      rep.references[1].add(1, h, slopes[h], e, envelope(1.0, ed, ed, allowance));
    }
  }
  finish(rep, spec, allowance, "slope");
  return rep;
}

// ---- identify -----------------------------------------------------------------------------------------------

Identification identify(const IdentifyInput& in) {
  using Candidate = IdentifyCandidate<AlibiSpec, int>;
  const bool tensor = in.shape.size() == 3;
  if (!(in.shape.size() == 1 || tensor) || in.shape[0] == 0 || (tensor && (in.shape[1] == 0 || in.shape[2] == 0)))
    throw Error("alibi identify", "shape", std::to_string(in.shape.size()) + " dimensions",
                "(heads,): slopes, or (heads, query_length, key_length): a bias tensor");
  const std::size_t heads = in.shape[0], lq = tensor ? in.shape[1] : 1, lk = tensor ? in.shape[2] : 1;
  // A tensor is compared on its last rows (queries Lk - rows .. Lk - 1 of every head): the same geometry posenc makes.
  const std::size_t rows = std::min<std::size_t>(lq, 16);
  std::vector<double> vals;
  if (!tensor) vals.assign(in.values.begin(), in.values.end());
  else
    for (std::size_t h = 0; h < heads; ++h) {
      const auto at = in.values.begin() + static_cast<std::ptrdiff_t>((h * lq + lq - rows) * lk);
      vals.insert(vals.end(), at, at + static_cast<std::ptrdiff_t>(rows * lk));
    }
  // bias_max b from the first head's slope 2^(-b/c), c = 2^floor(log2 n) (ofirpress's order; MPT's first slope
  // 2^(-2b/c'), c' = 2^ceil(log2 n) = 2c for n not a power of two, is the same), to two decimals; a tensor's slope is
  // read as the relative variant's entry at distance 1 (another variant's reading only adds a candidate).
  const double s0 = tensor ? (lk > 1 ? std::fabs(vals[(rows - 1) * lk + lk - 2]) : 0.0) : std::fabs(vals[0]);
  const double c = std::exp2(std::floor(std::log2(static_cast<double>(heads))));
  const std::array<double, 2> bias_maxes{
      8.0, s0 > 0 && s0 < 1 && std::isfinite(s0) ? std::round(-std::log2(s0) * c * 100) / 100 : 8.0};
  std::vector<Candidate> cands;
  for (const auto& preset : SpecTraits<AlibiSpec>::presets())
    for (AlibiRegime regime : {AlibiRegime::exact, AlibiRegime::ofirpress, AlibiRegime::bloom, AlibiRegime::mpt})
      for (AlibiVariant variant : {AlibiVariant::relative, AlibiVariant::key, AlibiVariant::key_shifted,
                                   AlibiVariant::key_counted, AlibiVariant::symmetric})
        for (double b : bias_maxes) {
          AlibiSpec s = preset.spec;
          s.heads = heads, s.regime = regime, s.bias_max = b;
          if (tensor) s.variant = variant;
          if (!is_valid(s)) continue;
          add_candidate(cands, Candidate{s, 0, std::string(preset.name),
                                         field_differences(preset.spec, s, {"heads", "regime"}), 0, false, {}});
        }
  const BiasGeometry geometry{rows, lk, {}, BiasMask::none};
  auto distance = [&](const Candidate& c) {
    const AlibiPlan plan = make_plan(c.spec);
    std::vector<double> mine(vals.size());
    if (!tensor) std::copy(plan.slopes().begin(), plan.slopes().end(), mine.begin());
    else plan.bias(geometry, std::span<double>(mine), TableOptions{.threads = 1});
    std::vector<double> given(vals);  // a causal mask's -inf: left out of the distance (the check judges it)
    for (std::size_t i = 0; i < given.size(); ++i)
      if (given[i] == -INFINITY) given[i] = mine[i];
    return max_scaled_difference(given, mine, in.stored);
  };
  auto check = [&](const Candidate& c) {
    if (!tensor) return check_slopes(c.spec, vals, in.stored, {});
    return check_bias(c.spec, BiasInput{vals, heads, rows, lk, {}, in.stored, {}});
  };
  return rank_and_verify<AlibiSpec, int>("alibi", tensor ? "bias tensor" : "list of slopes", std::move(cands), distance,
                                         check);
}

}  // namespace posenc::verify::alibi
