#include "schemes/deberta/check.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "schemes/deberta/budget.hpp"
#include "posenc/deberta.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/deberta.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::verify::deberta {
namespace {

namespace rf = posenc::reference;
const std::string kWhere = "deberta check";

}  // namespace

std::pair<std::int64_t, std::int64_t> hf_bucket_pair(const DebertaSpec& s, std::int64_t rel, const EnvelopeAllowance& al) {
  const std::int64_t b = rf::deberta_bucket(s, rel);
  if (!s.position_buckets || s.regime != DebertaRegime::hf) return {b, b};
  const auto mid = static_cast<std::int64_t>(*s.position_buckets / 2), M = static_cast<std::int64_t>(s.max_relative_positions) - 1;
  const std::int64_t N = mid - 1;
  const std::int64_t r = s.clamp ? std::clamp(rel, -M, M) : rel;
  const std::int64_t a = r < 0 ? -r : r;
  if (a <= mid || N == 0) return {b, b};  // the identity, or y * 0 = 0 whatever the logs
  const double z = rf::deberta_hf_z(s, a);
  const double x = static_cast<float>(static_cast<double>(static_cast<float>(a)) / static_cast<double>(static_cast<float>(mid)));
  const double den = static_cast<float>(std::log(static_cast<double>(static_cast<float>(static_cast<double>(M) / static_cast<double>(mid)))));
  const double l = std::log(x), y = l / den;
  // real logs A ulps off move l and den, then y (and its rounding), then z (and its rounding)
  const double dz = ((al.ulps * ulp(l, DType::f32) + std::fabs(y) * al.ulps * ulp(den, DType::f32)) / den +
                     ulp(y, DType::f32)) * static_cast<double>(N) + ulp(z, DType::f32);
  const double k = std::round(z);
  if (!(std::fabs(z - k) <= dz)) return {b, b};
  const std::int64_t sign = r < 0 ? -1 : 1;
  const auto ki = static_cast<std::int64_t>(k);
  return {sign * (mid + ki), sign * (mid + ki + 1)};  // ceil of a z at or just above the integer
}

CheckReport check_index(const DebertaSpec& spec, const IndexInput& in, const EnvelopeAllowance& al) {
  validate(spec);
  check_deberta_lengths(in.query_length, in.key_length);
  if (!(al.ulps >= 0 && al.ulps <= 1e6)) throw Error(kWhere, "ulp allowance", std::to_string(al.ulps), "a real in [0, 1e6]");
  const std::size_t Lq = in.query_length, Lk = in.key_length;
  if (in.values.size() != Lq * Lk)
    throw Error(kWhere, "values", std::to_string(in.values.size()), "query_length * key_length = " + std::to_string(Lq * Lk));
  DebertaSpec exact_spec = spec;
  exact_spec.regime = DebertaRegime::exact;
  const bool emu = spec.position_buckets && spec.regime == DebertaRegime::hf;
  const bool position = in.kind == IndexKind::position;
  const auto span = static_cast<std::int64_t>(deberta_span(spec));

  CheckReport rep;
  rep.scheme = "deberta";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  rep.input["geometry"] = {{"query_length", Lq}, {"key_length", Lk}};
  rep.input["kind"] = position ? "c2p / p2c index clamp(b + span, 0, 2 span - 1)" : "relative position b(i - j)";
  rep.references.emplace_back("exact", budget(DebertaRow::check_exact), DType::f64, 1);
  if (emu) rep.references.emplace_back("emulated (HF float32 buckets)", budget(DebertaRow::check_envelope), DType::f64, 1);

  auto value = [&](std::int64_t b) { return position ? std::clamp(b + span, std::int64_t{0}, 2 * span - 1) : b; };
  // The oracle's buckets depend on rel = i - j alone: once per rel in [-(Lk - 1), Lq - 1].
  struct Want {
    std::int64_t exact = 0, hf = 0, other = 0;
  };
  std::vector<Want> by_rel(Lq + Lk - 1);
  for (std::size_t t = 0; t < by_rel.size(); ++t) {
    const std::int64_t rel = static_cast<std::int64_t>(t) - static_cast<std::int64_t>(Lk - 1);
    Want& w = by_rel[t];
    w.exact = value(rf::deberta_bucket(exact_spec, rel));
    if (emu) {
      const auto [b0, b1] = hf_bucket_pair(spec, rel, al);
      const std::int64_t hb = rf::deberta_bucket(spec, rel);
      w.hf = value(hb);
      w.other = value(b0 == hb ? b1 : b0);
    }
  }
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j) {
      const std::int64_t rel = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j);
      const Want& w = by_rel[static_cast<std::size_t>(rel + static_cast<std::int64_t>(Lk - 1))];
      const double y = in.values[i * Lk + j];
      rep.references[0].add(rel < 0 ? -rel : rel, 0, y, Real(static_cast<double>(w.exact)));
      if (emu)
        rep.references[1].add(rel < 0 ? -rel : rel, 0, y, Real(static_cast<double>(w.hf)),
                              static_cast<double>(std::llabs(w.other - w.hf)));
    }
  rep.held_to = emu ? 1 : 0;
  const std::string what = position ? "clamp(b(i - j) + span, 0, 2 span - 1)" : "b(i - j)";
  rep.note = emu ? "The spec's regime is hf: every entry must be " + what +
                       " with HF's float32 bucket, or the neighbouring bucket where a torch log within " +
                       format_real(al.ulps) +
                       " ulp of correctly rounded could move z = ln(a/mid) / ln((max - 1)/mid) (mid - 1) across an "
                       "integer. rel = i - j (query minus key) with the queries at positions 0..query_length-1. The "
                       "exact column shows the exact buckets."
                 : "Every entry must be " + what +
                       " with the exact bucket, rel = i - j (query minus key) and the queries at positions "
                       "0..query_length-1 (HF build_relative_position).";
  return rep;
}

// ---- identify -----------------------------------------------------------------------------------------------

Identification identify_index(std::span<const double> values, std::size_t Lq, std::size_t Lk) {
  using Candidate = IdentifyCandidate<DebertaSpec, IndexKind>;
  check_deberta_lengths(Lq, Lk);
  if (values.size() != Lq * Lk)
    throw Error(kWhere, "values", std::to_string(values.size()), "query_length * key_length = " + std::to_string(Lq * Lk));
  std::vector<Candidate> cands;
  for (const auto& preset : SpecTraits<DebertaSpec>::presets()) {
    const std::optional<std::size_t> buckets[] = {preset.spec.position_buckets, std::nullopt, 64, 128, 512};
    const std::size_t maxes[] = {preset.spec.max_relative_positions, 128, 256, 1024};
    for (const auto& b : buckets)
      for (std::size_t m : maxes)
        for (bool clamp : {false, true})
          for (DebertaRegime regime : {DebertaRegime::exact, DebertaRegime::hf})
            for (IndexKind kind : {IndexKind::relative, IndexKind::position}) {
              DebertaSpec s = preset.spec;
              s.position_buckets = b, s.max_relative_positions = m, s.clamp = clamp, s.regime = regime;
              if (!is_valid(s)) continue;
              Candidate c{s, kind, std::string(preset.name), field_differences(preset.spec, s, {"regime"}), 0, false, {}};
              if (kind == IndexKind::position) c.differs.push_back("the c2p index c = clamp(b + span, 0, 2 span - 1)");
              add_candidate(cands, std::move(c));
            }
  }
  // The index depends on rel = i - j alone: one value per rel in [-(Lk - 1), Lq - 1].
  auto distance = [&](const Candidate& c) {
    const auto span = static_cast<std::int64_t>(deberta_span(c.spec));
    std::vector<double> by_rel(Lq + Lk - 1);
    for (std::size_t t = 0; t < by_rel.size(); ++t) {
      const std::int64_t rel = static_cast<std::int64_t>(t) - static_cast<std::int64_t>(Lk - 1);
      const std::int64_t b = deberta_bucket(c.spec, rel);
      by_rel[t] = static_cast<double>(c.extra == IndexKind::relative ? b : std::clamp(b + span, std::int64_t{0}, 2 * span - 1));
    }
    std::vector<double> mine(Lq * Lk);
    for (std::size_t i = 0; i < Lq; ++i)
      for (std::size_t j = 0; j < Lk; ++j) mine[i * Lk + j] = by_rel[i + Lk - 1 - j];
    return max_scaled_difference(values, mine, DType::f64) * 0x1p-52;  // in index units
  };
  auto check = [&](const Candidate& c) { return check_index(c.spec, IndexInput{values, Lq, Lk, c.extra, {}}); };
  Identification id = rank_and_verify<DebertaSpec, IndexKind>("deberta", "index matrix", std::move(cands), distance, check);
  id.extra_json = [](const IndexKind& k) {
    return nlohmann::ordered_json{{"index", k == IndexKind::relative ? "relative" : "position"}};
  };
  return id;
}

}  // namespace posenc::verify::deberta
