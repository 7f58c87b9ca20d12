#include "kerple/check.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>

#include "kerple/budget.hpp"
#include "posenc/alibi_spec.hpp"  // check_alibi_lengths: the lengths every bias scheme accepts
#include "posenc/error.hpp"
#include "posenc/reference/kerple.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::test::kerple {
namespace {

namespace rf = posenc::reference;
constexpr unsigned kCheckBits = 128;  // the reference's own error (2^-128) is far below any ulp checked
const std::string kWhere = "kerple check";

double ulp32(double x) { return ulp(x, DType::f32); }  // support/accuracy.hpp

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
  if (in.heads != spec.heads)
    throw Error(kWhere, "heads", std::to_string(spec.heads),
                "the tensor's first dimension, " + std::to_string(in.heads) + " heads", "does not match the tensor");
  check_alibi_lengths(in.query_length, in.key_length);
  if (in.values.size() != in.heads * in.query_length * in.key_length)
    throw Error(kWhere, "values", std::to_string(in.values.size()),
                "heads * query_length * key_length = " + std::to_string(in.heads * in.query_length * in.key_length));
  if (!in.key_mask.empty() && in.key_mask.size() != in.key_length)
    throw Error(kWhere, "key_mask", std::to_string(in.key_mask.size()) + " entries",
                "key_length = " + std::to_string(in.key_length) + " entries (the tensor's last dimension)");
  for (const auto m : in.key_mask)
    if (m > 1) throw Error(kWhere, "key_mask", std::to_string(m), "entries 0 (padding) or 1 (token)");

  KerpleSpec exact_spec = spec;
  exact_spec.regime = KerpleRegime::exact;
  const rf::KerpleOracle exact(exact_spec, w, kCheckBits);
  const bool emu = spec.regime != KerpleRegime::exact;
  const rf::KerpleOracle emulated(spec, w, kCheckBits);
  const std::size_t H = in.heads, Lq = in.query_length, Lk = in.key_length;

  CheckReport rep;
  rep.scheme = "kerple";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  rep.input["geometry"] = {{"heads", H}, {"query_length", Lq}, {"key_length", Lk},
                           {"key_mask", in.key_mask.empty() ? "none" : "given"}};
  rep.input["bias_p"] = w.p;
  rep.input["bias_a"] = w.a;
  rep.references.emplace_back("exact", budget(check_exact_row(in.stored)), in.stored, H);
  if (emu)
    rep.references.emplace_back("emulated (megatron float32 steps)", budget(KerpleRow::check_envelope), in.stored, H);

  const int nt = threads > 0 ? std::min(threads, omp_get_num_procs()) : omp_get_max_threads();
  std::vector<std::vector<CheckAccumulator>> local(static_cast<std::size_t>(std::max(nt, 1)), rep.references);
  std::vector<std::uint64_t> masked(static_cast<std::size_t>(std::max(nt, 1)), 0);
  const auto rows = static_cast<std::int64_t>(H * Lq);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (std::int64_t ri = 0; ri < rows; ++ri) {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    auto& acc = local[t];
    const auto h = static_cast<std::size_t>(ri) / Lq, i = static_cast<std::size_t>(ri) % Lq;
    const std::size_t qi = Lk - Lq + i;
    const double p32 = emu ? static_cast<double>(emulated.p(h)) : 0.0, a32 = emu ? static_cast<double>(emulated.a(h)) : 0.0;
    // References depend only on (head, d); keys after the query share d = 0.
    std::unordered_map<std::int64_t, std::pair<Real, Real>> refs;
    for (std::size_t j = 0; j < Lk; ++j) {
      const double y = in.values[(h * Lq + i) * Lk + j];
      if (y == -std::numeric_limits<double>::infinity() && (j > qi || (!in.key_mask.empty() && in.key_mask[j] == 0))) {
        ++masked[t];
        continue;
      }
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
  }
  rep.merge_threads(local);
  std::uint64_t nm = 0;
  for (auto m : masked) nm += m;
  rep.input["masked_entries"] = nm;
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

}  // namespace posenc::test::kerple
