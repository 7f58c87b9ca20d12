#include "schemes/kerple/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>

#include "schemes/kerple/budget.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/kerple.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::verify::kerple {
namespace {

namespace rf = posenc::reference;
constexpr unsigned kCheckBits = 128;  // the reference's own error (2^-128) is far below any ulp checked
const std::string kWhere = "kerple check";

double ulp32(double x) { return ulp(x, DType::f32); }  // verify/accuracy.hpp

void check_allowance(const EnvelopeAllowance& a) {
  if (!(a.ulps >= 0 && a.ulps <= 1e6)) throw Error(kWhere, "ulp allowance", std::to_string(a.ulps), "a real in [0, 1e6]");
}

}  // namespace

double envelope(const KerpleSpec& s, double p, double a, std::int64_t d, double e, const EnvelopeAllowance& al) {
  const auto D = static_cast<double>(static_cast<float>(static_cast<double>(d)));
  double move = 0;
  if (s.kernel == KerpleKernel::log) {
    const double u = static_cast<float>(1.0f + static_cast<float>(a * D));
    const double l = std::log(u);
    move = std::fabs(p) * (al.ulps * ulp32(l) + (al.fused ? ulp32(u) / u : 0.0));
  } else {
    const double w = d > 0 ? std::pow(D, p) : 0.0;
    move = std::fabs(a) * al.ulps * ulp32(w);
  }
  return move * (1 + 1e-6) + ulp32(std::fabs(e) + move);
}

CheckReport check_bias(const KerpleSpec& spec, const KerpleWeights& w, const BiasInput& in,
                       const EnvelopeAllowance& allowance, int threads) {
  validate(spec);
  check_kerple_weights(spec, w);
  check_allowance(allowance);
  check_bias_input(kWhere, spec.heads, in);

  KerpleSpec exact_spec = spec;
  exact_spec.regime = KerpleRegime::exact;
  const rf::KerpleOracle exact(exact_spec, w, kCheckBits);
  const bool emu = spec.regime != KerpleRegime::exact;
  const rf::KerpleOracle emulated(spec, w, kCheckBits);
  const std::size_t H = in.heads;

  CheckReport rep;
  rep.scheme = "kerple";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  describe_geometry(rep, in);
  rep.input["bias_p"] = w.p;
  rep.input["bias_a"] = w.a;
  rep.references.emplace_back("exact", budget(check_exact_row(in.stored)), in.stored, H);
  if (emu)
    rep.references.emplace_back("emulated (megatron float32 steps)", budget(KerpleRow::check_envelope), in.stored, H);

  const std::size_t Lq = in.query_length, Lk = in.key_length;
  scan_bias_tensor(rep, in, threads, [&](auto& acc, std::size_t h, std::size_t i, std::size_t, auto js) {
    const double p32 = emu ? static_cast<double>(emulated.p(h)) : 0.0, a32 = emu ? static_cast<double>(emulated.a(h)) : 0.0;
    // References depend only on (head, d); keys after the query share d = 0.
    std::unordered_map<std::int64_t, std::pair<Real, Real>> refs;
    for (std::size_t j : js) {
      const double y = in.values[(h * Lq + i) * Lk + j];
      const std::int64_t d = rf::kerple_distance(i, j, Lq, Lk);
      auto it = refs.find(d);
      if (it == refs.end())
        it = refs.emplace(d, std::make_pair(exact.bias_at(h, d), emu ? emulated.bias_at(h, d) : Real())).first;
      acc[0].add(d, h, y, it->second.first);
      if (emu) {
        const double e = static_cast<double>(it->second.second);
        acc[1].add(d, h, y, it->second.second, envelope(spec, p32, a32, d, e, allowance));
      }
    }
  });
  std::ostringstream o;
  if (emu) {
    rep.held_to = 1;
    o << "The spec's regime is megatron: every bias entry must lie within the emulation envelope of posenc's "
         "correctly rounded emulation of the reference's float32 steps, allowing float32 log / pow within "
      << allowance.ulps << " ulp of correctly rounded" << (allowance.fused ? " and a fused a D + 1" : "")
      << ". The exact column shows how far the numbers are from the mathematics with the weights given (the "
         "float32 1 + a d loses the low bits of a d: up to ~15 ulps for a = 0.01 at small d).";
  } else {
    rep.held_to = 0;
    o << "The spec's regime is exact: every bias entry must be within the budget row's bound of -p ln(1 + a d) / "
         "-a d^p with the weights given (clamped as the reference clamps them), in ulps of the input's type.";
  }
  rep.note = o.str();
  return rep;
}

}  // namespace posenc::verify::kerple
