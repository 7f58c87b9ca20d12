// verify/identify.hpp — `posenc identify <scheme>`: which convention a user's numbers follow, or the nearest one and
// where it differs. Written once for every scheme:
//   1. the scheme lists candidates: a spec, the preset it starts from, what besides the spec places the user's
//      numbers (an Extra: sinusoidal's row offset, RoPE's cache form) and any differences the spec's fields do not
//      show (add_candidate keeps one candidate per (spec, extra), the one with the fewest differences);
//   2. rank_and_verify measures each candidate by `distance` (posenc's own numbers on a sample of the input, the
//      largest difference in ulps of the stored type at 1), keeps the nearest `keep`, runs the scheme's real check
//      (budget rows, emulation envelopes) on the best `verify` of them, and puts the verified ones first: the input
//      matches when the best candidate passed its check.
// The report (JSON, Markdown) names the preset, the regime, every difference, the spec (replayable with --spec) and
// the ranked candidates with their checks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "posenc/spec_json.hpp"
#include "verify/check_report.hpp"

namespace posenc::verify {

template <class Spec, class Extra>
struct IdentifyCandidate {
  Spec spec;
  Extra extra{};
  std::string preset;
  std::vector<std::string> differs;  // "field: preset value -> this value", and the Extra's own differences
  double distance = 0;               // posenc's numbers vs the input's, sampled: ulps of the stored type at 1
  bool verified = false;             // the scheme's check passed on the sample
  nlohmann::ordered_json check;      // that check's verdict, budget row, what it was held to, its largest metric
};

// "field: from -> to" for every field of the spec that differs, except those named in `skip` (the input's own
// dimensions, the regime, which the report names on its own).
template <DescribedSpec Spec>
std::vector<std::string> field_differences(const Spec& from, const Spec& to, const std::vector<std::string>& skip) {
  std::vector<std::string> out;
  for_each_field<Spec>([&](const auto& f) {
    if (std::find(skip.begin(), skip.end(), std::string(f.name)) != skip.end()) return;
    const std::string a = field_text(f, from), b = field_text(f, to);
    if (a != b) out.push_back(std::string(f.name) + ": " + a + " -> " + b);
  });
  return out;
}

// The text of the spec's field `name` ("" when it has none).
template <DescribedSpec Spec>
std::string field_value(const Spec& s, const std::string& name) {
  std::string text;
  for_each_field<Spec>([&](const auto& f) {
    if (f.name == name) text = field_text(f, s);
  });
  return text;
}

// Adds c unless a candidate with the same spec and extra is there; then keeps the plainer description of the two.
template <class Spec, class Extra>
void add_candidate(std::vector<IdentifyCandidate<Spec, Extra>>& cands, IdentifyCandidate<Spec, Extra> c) {
  auto same = std::find_if(cands.begin(), cands.end(),
                           [&](const auto& x) { return x.spec == c.spec && x.extra == c.extra; });
  if (same == cands.end()) cands.push_back(std::move(c));
  else if (c.differs.size() < same->differs.size()) *same = std::move(c);
}

// Which rows of n to sample: the first sample/2 (where offsets and padding rows show) and sample/2 spread over the
// rest, in order.
inline std::vector<std::size_t> identify_sample_rows(std::size_t n, std::size_t sample) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < std::min(n, sample / 2); ++i) idx.push_back(i);
  for (std::size_t k = 0; k < sample / 2 && n > sample / 2; ++k)
    idx.push_back(sample / 2 + k * (n - sample / 2 - 1) / std::max<std::size_t>(1, sample / 2 - 1));
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  return idx;
}

// A candidate's distance: the largest |given - posenc's| in ulps of the stored type at 1 (NaN: infinite).
inline double max_scaled_difference(std::span<const double> given, std::span<const double> mine, DType stored) {
  const double u = std::ldexp(1.0, 1 - precision_bits(stored));
  double worst = 0;
  for (std::size_t i = 0; i < given.size(); ++i) {
    const double d = std::fabs(given[i] - mine[i]);
    worst = std::max(worst, std::isnan(d) ? INFINITY : d / u);
  }
  return worst;
}

template <class Spec, class Extra>
struct Identification {
  std::string scheme, noun = "input";  // noun: what the user gave ("table", "cache")
  std::vector<IdentifyCandidate<Spec, Extra>> ranked;  // best first
  bool matched = false;
  // The Extra's members of a candidate's JSON (e.g. {"row_offset": 1}); none by default.
  std::function<nlohmann::ordered_json(const Extra&)> extra_json;

  nlohmann::ordered_json to_json() const;
  std::string to_markdown() const;
};

template <class Spec, class Extra>
Identification<Spec, Extra> rank_and_verify(std::string scheme, std::string noun,
                                            std::vector<IdentifyCandidate<Spec, Extra>> cands,
                                            const std::function<double(const IdentifyCandidate<Spec, Extra>&)>& distance,
                                            const std::function<CheckReport(const IdentifyCandidate<Spec, Extra>&)>& check,
                                            std::size_t keep = 8, std::size_t verify = 3) {
  for (auto& c : cands) c.distance = distance(c);
  std::stable_sort(cands.begin(), cands.end(), [](const auto& a, const auto& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    return a.differs.size() < b.differs.size();  // the plainest description of equal numbers first
  });
  if (cands.size() > keep) cands.resize(keep);
  for (std::size_t k = 0; k < std::min(verify, cands.size()); ++k) {
    auto& c = cands[k];
    const CheckReport rep = check(c);
    c.verified = rep.passed();
    const auto j = rep.to_json();
    c.check = {{"verdict", j["verdict"]}, {"budget_row", j["budget_row"]}, {"held_to", j["held_to"]},
               {"max_metric", j["references"][rep.held_to]["overall"]["max_metric"]}};
  }
  // A verified candidate wins over an unverified better-ranked one.
  std::stable_partition(cands.begin(), cands.end(), [](const auto& c) { return c.verified; });
  Identification<Spec, Extra> id;
  id.scheme = std::move(scheme);
  id.noun = std::move(noun);
  id.ranked = std::move(cands);
  id.matched = !id.ranked.empty() && id.ranked.front().verified;
  return id;
}

template <class Spec, class Extra>
nlohmann::ordered_json Identification<Spec, Extra>::to_json() const {
  nlohmann::ordered_json j;
  j["scheme"] = scheme;
  j["matched"] = matched;
  if (!ranked.empty()) {
    const auto& b = ranked.front();
    const std::string regime = field_value(b.spec, "regime");
    const std::string name = b.preset + (regime.empty() ? "" : " (" + regime + ")");
    j["verdict"] = matched ? (b.differs.empty() ? "preset " + name : "preset " + name + " with differences")
                           : "no convention matches; nearest: " + name;
    j["preset"] = b.preset;
    if (!regime.empty()) j["regime"] = regime;
    j["differs"] = b.differs;
    if (extra_json) j.update(extra_json(b.extra));
    j["spec"] = posenc::to_json(b.spec);
  }
  j["candidates"] = nlohmann::ordered_json::array();
  for (const auto& c : ranked) {
    nlohmann::ordered_json cj{{"preset", c.preset}, {"differs", c.differs}};
    if (extra_json) cj.update(extra_json(c.extra));
    cj["max_scaled_ulp_fast"] = std::isfinite(c.distance) ? nlohmann::ordered_json(c.distance) : nlohmann::ordered_json(nullptr);
    cj["verified"] = c.verified;
    cj["check"] = c.check;
    cj["spec"] = posenc::to_json(c.spec);
    j["candidates"].push_back(std::move(cj));
  }
  return j;
}

template <class Spec, class Extra>
std::string Identification<Spec, Extra>::to_markdown() const {
  std::ostringstream o;
  const auto j = to_json();
  o << "# posenc identify " << scheme << ": "
    << (j.contains("verdict") ? j["verdict"].template get<std::string>() : "no candidate") << "\n\n";
  if (!ranked.empty()) {
    const auto& b = ranked.front();
    const std::string regime = field_value(b.spec, "regime");
    o << (matched ? "The " + noun + " is" : "The nearest convention is") << " the **" << b.preset << "** preset";
    if (!regime.empty()) o << " in the **" << regime << "** regime";
    if (b.differs.empty()) o << ", exactly.\n";
    else {
      o << ", except:\n";
      for (const auto& d : b.differs) o << "- " << d << "\n";
    }
    o << "\nspec: `" << posenc::to_json(b.spec).dump() << "`\n";
  }
  o << "\n| rank | preset | differences | max scaled ulp (posenc's numbers) | oracle check |\n|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const auto& c = ranked[i];
    std::string d;
    for (const auto& x : c.differs) d += (d.empty() ? "" : "; ") + x;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", c.distance);
    o << "| " << i + 1 << " | " << c.preset << " | " << (d.empty() ? "none" : d) << " | " << buf << " | "
      << (c.check.empty() ? "not run"
                          : c.check["verdict"].template get<std::string>() + " (" +
                                c.check["budget_row"].template get<std::string>() + ")")
      << " |\n";
  }
  return o.str();
}

}  // namespace posenc::verify
