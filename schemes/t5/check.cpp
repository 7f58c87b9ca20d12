#include "schemes/t5/check.hpp"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/half.hpp"
#include "posenc/reference/t5.hpp"
#include "posenc/spec_json.hpp"
#include "schemes/t5/budget.hpp"

namespace posenc::verify::t5 {
namespace {

namespace rf = posenc::reference;
const std::string kWhere = "t5 check";

// v rounded once to the stored type.
double round_to_type(double v, DType t) {
  switch (t) {
    case DType::f16: return to_double(to_f16(v));
    case DType::bf16: return to_double(to_bf16(v));
    case DType::f32: return static_cast<float>(v);
    case DType::f64: return v;
  }
  return v;
}

// Half an ulp of v in the stored type, or 0 when v is a number of that type (then only v itself is right).
double half_ulp_unless_exact(double v, DType t) {
  if (round_to_type(v, t) == v) return 0.0;
  return ulp(v, t) / 2;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> hf_bucket_pair(const T5Spec& s, std::int64_t r, const EnvelopeAllowance& al) {
  const std::int64_t b = rf::t5_bucket(s, r);
  const auto n = static_cast<std::int64_t>(t5_side_buckets(s)), me = static_cast<std::int64_t>(t5_max_exact(s));
  const std::int64_t a = s.bidirectional ? (r < 0 ? -r : r) : (r < 0 ? -r : 0);
  if (a < me) return {b, b};
  const std::int64_t base = s.bidirectional && r > 0 ? n : 0;
  const double z = rf::t5_hf_z(s, a);
  const auto den = static_cast<double>(static_cast<float>(std::log(static_cast<double>(s.max_distance) / static_cast<double>(me))));
  const double x = static_cast<float>(static_cast<double>(static_cast<float>(a)) / static_cast<double>(static_cast<float>(me)));
  const double l = std::log(x), y = l / den, N = static_cast<double>(n - me);
  // a real log A ulps off moves l, then y (and its rounding), then z (and its rounding)
  const double dz = ((al.ulps * ulp(l, DType::f32)) / den + ulp(y, DType::f32)) * N + ulp(z, DType::f32);
  const double k = std::round(z);
  if (!(std::fabs(z - k) <= dz) || k < 1) return {b, b};
  auto bucket_of = [&](double level) { return base + std::min<std::int64_t>(me + static_cast<std::int64_t>(level), n - 1); };
  return {bucket_of(k - 1), bucket_of(k)};
}

CheckReport check_bias(const T5Spec& spec, const T5Weights& w, const BiasInput& in, const EnvelopeAllowance& al,
                       int threads) {
  validate(spec);
  check_t5_weights(spec, w);
  if (!(al.ulps >= 0 && al.ulps <= 1e6)) throw Error(kWhere, "ulp allowance", std::to_string(al.ulps), "a real in [0, 1e6]");
  check_bias_input(kWhere, spec.heads, in);
  T5Spec exact_spec = spec;
  exact_spec.regime = T5Regime::exact;
  const bool emu = spec.regime != T5Regime::exact;
  const std::size_t H = in.heads, Lq = in.query_length, Lk = in.key_length;

  CheckReport rep;
  rep.scheme = "t5";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  describe_geometry(rep, in);
  rep.references.emplace_back("exact", budget(T5Row::check_exact), in.stored, H);
  if (emu) rep.references.emplace_back("emulated (HF float32 buckets)", budget(T5Row::check_envelope), in.stored, H);

  auto entry = [&](std::int64_t b, std::size_t h) { return w.table[static_cast<std::size_t>(b) * H + h]; };
  // The oracle's buckets depend on r = j - q_i alone: once per r in [-(Lk - 1), Lk - 1].
  struct Buckets {
    std::int64_t exact = 0, hf = 0, other = 0;  // hf: the emulated bucket and its envelope neighbour (or itself)
  };
  std::vector<Buckets> by_r(2 * Lk - 1);
  for (std::size_t t = 0; t < by_r.size(); ++t) {
    const std::int64_t r = static_cast<std::int64_t>(t) - static_cast<std::int64_t>(Lk - 1);
    Buckets& b = by_r[t];
    b.exact = rf::t5_bucket(exact_spec, r);
    if (emu) {
      b.hf = rf::t5_bucket(spec, r);
      const auto [b0, b1] = hf_bucket_pair(spec, r, al);
      b.other = b0 == b.hf ? b1 : b0;
    }
  }
  scan_bias_tensor(rep, in, threads, [&](auto& acc, std::size_t h, std::size_t i, std::size_t qi, auto js) {
    (void)i;
    for (std::size_t j : js) {
      const double y = in.values[(h * Lq + i) * Lk + j];
      const std::int64_t r = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(qi);
      const Buckets& b = by_r[static_cast<std::size_t>(r + static_cast<std::int64_t>(Lk - 1))];
      const double bx = entry(b.exact, h);
      acc[0].add(r < 0 ? -r : r, h, y, Real(bx), half_ulp_unless_exact(bx, in.stored));
      if (emu) {
        const double e = entry(b.hf, h), other = entry(b.other, h);
        const double E = std::fabs(other - e) + half_ulp_unless_exact(e, in.stored) +
                         (other != e ? ulp(std::fabs(other) + std::fabs(e), in.stored) : 0.0);
        acc[1].add(r < 0 ? -r : r, h, y, Real(e), E);
      }
    }
  });
  std::ostringstream o;
  if (emu) {
    rep.held_to = 1;
    o << "The spec's regime is hf: every entry must be the table entry of HF's float32 bucket (rounded to the "
         "stored type), or of the neighbouring bucket where a torch log within "
      << al.ulps << " ulp of correctly rounded could move z = ln(a/me) / ln(md/me) (n - me) across an integer. "
         "The exact column shows the entries of the exact buckets.";
  } else {
    rep.held_to = 0;
    o << "The spec's regime is exact: every entry must be table[bucket][head] of the exact bucket, rounded once to "
         "the stored type.";
  }
  rep.note = o.str();
  return rep;
}

}  // namespace posenc::verify::t5
