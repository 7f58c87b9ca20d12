#include "schemes/fire/check.hpp"

#include <mpfr.h>
#include <omp.h>
#include "lib/src/core/binary128.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "schemes/fire/budget.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/mp.hpp"
#include "verify/parallel_cases.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::verify::fire {
namespace {

namespace rf = posenc::reference;
const std::string kWhere = "fire check";

double ulp32(double x) { return ulp(x, DType::f32); }  // verify/accuracy.hpp

void check_allowance(const EnvelopeAllowance& a) {
  if (!(a.ulps >= 0 && a.ulps <= 1e6)) throw Error(kWhere, "ulp allowance", std::to_string(a.ulps), "a real in [0, 1e6]");
}

// RN32(ln u) for a float32 u >= 1: MPFR at 24 bits (the oracle's rounding, mp.hpp).
float rn32_ln(float u) {
  return static_cast<float>(rf::rn_log(rf::Binary::f32, rf::make_real(static_cast<double>(u), 64), 64));
}

// RN32(a b) for floats: the product is exact in double (48 bits), then rounded once.
float mul32(float a, float b) { return static_cast<float>(static_cast<double>(a) * static_cast<double>(b)); }

}  // namespace

CheckEvaluator::CheckEvaluator(const FireSpec& s, const FireWeights& w, std::size_t key_length) : s_(s), w_(w) {
  validate(s);
  check_fire_weights(s, w);
  auto f = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  w1_ = f(w.w1);
  b1_ = f(w.b1);
  w2_ = f(w.w2);
  b2_ = f(w.b2);
  c32_ = static_cast<float>(w.c);
  thr32_ = std::fabs(mul32(static_cast<float>(w.L_multiplier), static_cast<float>(w.init_L)));
  e32_ = static_cast<float>(s.eps);
  check_fire_key_length(key_length);
  std::vector<quad> l128(key_length);
  std::vector<float> l32(key_length);
  for (std::size_t d = 0; d < key_length; ++d) {  // computed while the caches are empty
    l128[d] = numerator128(static_cast<std::int64_t>(d));
    l32[d] = numerator32(static_cast<std::int64_t>(d));
  }
  l128_ = std::move(l128);
  l32_ = std::move(l32);
  // Segments of the piecewise-linear MLP (the same kinks for every head: they are the first layer's).
  const std::size_t W = s.mlp_width;
  for (std::size_t k = 0; k < W; ++k)
    if (w.w1[k] != 0) {
      const quad t = -static_cast<quad>(w.b1[k]) / static_cast<quad>(w.w1[k]);
      if (t > 0) kinks_.push_back(t);
    }
  std::sort(kinks_.begin(), kinks_.end());
  kinks_.erase(std::unique(kinks_.begin(), kinks_.end()), kinks_.end());
  const std::size_t segments = kinks_.size() + 1;
  A_.assign(s.heads, std::vector<quad>(segments));
  B_.assign(s.heads, std::vector<quad>(segments));
  for (std::size_t sg = 0; sg < segments; ++sg) {
    // A point inside the segment decides which units are active there (none sits on its kink inside it).
    const quad lo = sg == 0 ? 0 : kinks_[sg - 1];
    const quad mid = sg + 1 < segments ? (lo + kinks_[sg]) / 2 : lo + 1;
    for (std::size_t h = 0; h < s.heads; ++h) {
      quad a = 0, b = static_cast<quad>(w.b2[h]);
      for (std::size_t k = 0; k < W; ++k) {
        const quad w1 = w.w1[k], b1 = w.b1[k], w2 = w.w2[h * W + k];
        if (w1 * mid + b1 > 0) {
          a += w2 * w1;
          b += w2 * b1;
        }
      }
      A_[h][sg] = a;
      B_[h][sg] = b;
    }
  }
}

quad CheckEvaluator::numerator128(std::int64_t d) const {
  if (static_cast<std::size_t>(d) < l128_.size()) return l128_[static_cast<std::size_t>(d)];
  return log1pq(fabsq(static_cast<quad>(w_.c)) * static_cast<quad>(d));
}

float CheckEvaluator::numerator32(std::int64_t d) const {
  if (static_cast<std::size_t>(d) < l32_.size()) return l32_[static_cast<std::size_t>(d)];
  return rn32_ln(std::fabs(mul32(c32_, static_cast<float>(d))) + 1.0f);  // |RN32(c32 D)| = RN32(|c32| |D|)
}

bool CheckEvaluator::at_threshold(std::int64_t q) const {
  // q <= |L_multiplier init_L| exactly: the product in binary128 is exact (2 x 53 bits).
  return static_cast<quad>(q) <=
         fabsq(static_cast<quad>(w_.L_multiplier) * static_cast<quad>(w_.init_L));
}
bool CheckEvaluator::at_threshold32(std::int64_t q) const { return static_cast<float>(q) <= thr32_; }

CheckEvaluator::Row CheckEvaluator::row(std::int64_t q) const {
  Row r;
  const quad c = fabsq(static_cast<quad>(w_.c));
  const quad thr = fabsq(static_cast<quad>(w_.L_multiplier) * static_cast<quad>(w_.init_L));
  r.den = log1pq(c * std::max(static_cast<quad>(q), thr)) + static_cast<quad>(s_.eps);
  const float N = std::max(static_cast<float>(q), thr32_);
  r.n = rn32_ln(std::fabs(mul32(c32_, N)) + 1.0f);
  r.den32 = r.n + e32_;
  return r;
}

CheckEvaluator::Exact CheckEvaluator::exact(std::size_t h, std::int64_t d, const Row& r) const {
  const quad x = numerator128(d) / r.den;
  // x's segment: the number of kinks at or below it (at a kink both pieces agree: the MLP is continuous).
  const auto sg = static_cast<std::size_t>(std::upper_bound(kinks_.begin(), kinks_.end(), x) - kinks_.begin());
  const quad y = A_[h][sg] * x + B_[h][sg];
  const auto hi = static_cast<double>(y);
  const quad rest = y - static_cast<quad>(hi);  // exact
  const auto lo = static_cast<double>(rest);
  return {hi, lo, static_cast<double>(rest - static_cast<quad>(lo)), static_cast<double>(x)};
}

CheckEvaluator::Emulated CheckEvaluator::emulated(std::size_t h, std::int64_t d, const Row& r) const {
  Emulated e;
  e.l = numerator32(d);
  e.n = r.n;
  e.den = r.den32;
  e.x = e.l / e.den;
  const std::size_t W = s_.mlp_width;
  float acc = 0.0f;
  const bool unfused = s_.mlp_sum == FireMlpSum::unfused;
  for (std::size_t k = 0; k < W; ++k) {
    const float v = mul32(e.x, w1_[k]) + b1_[k];  // RN32(RN32(x W1) + b1): two roundings
    const float r = v > 0.0f ? v : 0.0f;
    if (unfused) acc = acc + mul32(r, w2_[h * W + k]);  // the product rounded, then the sum: two roundings
    else acc = std::fma(r, w2_[h * W + k], acc);         // one rounding
  }
  e.bias = acc + b2_[h];
  return e;
}

Real CheckEvaluator::value(const Exact& e) {
  Real r = rf::make_real(e.hi, 192);
  mpfr_add_d(r.backend().data(), r.backend().data(), e.lo, MPFR_RNDN);  // exact: 192 bits hold the three doubles
  mpfr_add_d(r.backend().data(), r.backend().data(), e.lo2, MPFR_RNDN);
  return r;
}

CheckEvaluator::Exact CheckEvaluator::exact(std::size_t h, std::int64_t q, std::int64_t j) const {
  return exact(h, q > j ? q - j : j - q, row(q));
}
CheckEvaluator::Emulated CheckEvaluator::emulated(std::size_t h, std::int64_t q, std::int64_t j) const {
  return emulated(h, q > j ? q - j : j - q, row(q));
}

double envelope(const FireSpec& s, const FireWeights& w, std::size_t h, const CheckEvaluator::Emulated& e,
                const EnvelopeAllowance& a) {
  const std::size_t W = s.mlp_width;
  const double l = e.l, n = e.n, den = e.den, x = e.x;
  const double up = 1 + std::ldexp(1.0, -20);  // ulp32 of the larger side at a binade edge
  const double Ex = a.ulps * ulp32(l * up) / den + l * a.ulps * ulp32(n * up) / (den * den) + ulp32(x * up);
  double Q = 0, S = std::fabs(static_cast<float>(w.b2[h]));
  for (std::size_t k = 0; k < W; ++k) {
    const double w1 = static_cast<float>(w.w1[k]), b1 = static_cast<float>(w.b1[k]), w2 = static_cast<float>(w.w2[h * W + k]);
    Q += std::fabs(w2 * w1);
    S += std::fabs(w2) * (std::fabs(w1) * x + std::fabs(b1));
  }
  if (!a.any_order) {  // --fixed-order: posenc's own order, only x allowed to differ
    const double move = 1.01 * Q * Ex;
    return move + ulp32((std::fabs(static_cast<double>(e.bias)) + move) * up);
  }
  // Any order, with or without FMA (budget row fire.check.envelope): both first layers within 2 u (1 + u) of the
  // exact unit, both second-Linear sums of n = w + 1 terms within gamma_n of theirs, subnormal roundings absolute.
  const double u = std::ldexp(1.0, -24), terms = static_cast<double>(W) + 1;
  const double gamma = terms * u / (1 - terms * u);
  return 1.01 * (Q * Ex + (2 * gamma + 4 * u * (1 + u)) * S) + 2 * terms * std::ldexp(1.0, -149);
}

CheckReport check_bias(const FireSpec& spec, const FireWeights& w, const BiasInput& in,
                       const EnvelopeAllowance& allowance, int threads) {
  validate(spec);
  check_fire_weights(spec, w);
  check_allowance(allowance);
  check_bias_input(kWhere, spec.heads, in);
  check_fire_key_length(in.key_length);

  const CheckEvaluator ev(spec, w, in.key_length);
  const bool emu = spec.regime != FireRegime::exact;
  const std::size_t H = in.heads, Lq = in.query_length, Lk = in.key_length;

  CheckReport rep;
  rep.scheme = "fire";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  describe_geometry(rep, in);
  rep.input["weights"] = {{"c", w.c}, {"L_multiplier", w.L_multiplier}, {"init_L", w.init_L},
                          {"mlp_width", spec.mlp_width}};
  rep.input["reference"] = "binary128 (exact regime) and float32 steps with MPFR-rounded logs (cramming), "
                           "held to the MPFR oracle by claim FIRE-CHECK-2";
  rep.references.emplace_back("exact", budget(check_exact_row(in.stored)), in.stored, H);
  if (emu)
    rep.references.emplace_back("emulated (cramming float32 steps)", budget(FireRow::check_envelope), in.stored, H);

  // Rows at or below the threshold share one function of d per head (the query at 0 stands for them): computed
  // once, before the scan.
  const bool shared = ev.at_threshold(static_cast<std::int64_t>(Lk - Lq)), shared32 = emu && ev.at_threshold32(static_cast<std::int64_t>(Lk - Lq));
  std::vector<CheckEvaluator::Exact> thr(shared ? H * Lk : 0);
  std::vector<CheckEvaluator::Emulated> thr32(shared32 ? H * Lk : 0);
  const auto cells = static_cast<std::int64_t>(H * Lk);
  const CheckEvaluator::Row row0 = ev.row(0);  // max(0, L) = L
  parallel_cases(threads > 0 ? threads : omp_get_max_threads(), cells, 256, [&](std::int64_t c) {
    const auto h = static_cast<std::size_t>(c) / Lk;
    const auto d = static_cast<std::int64_t>(static_cast<std::size_t>(c) % Lk);
    if (shared) thr[static_cast<std::size_t>(c)] = ev.exact(h, d, row0);
    if (shared32) thr32[static_cast<std::size_t>(c)] = ev.emulated(h, d, row0);
  });
  scan_bias_tensor(rep, in, threads, [&](auto& acc, std::size_t h, std::size_t i, std::size_t qi, auto js) {
    const auto q = static_cast<std::int64_t>(qi);
    const bool at = shared && ev.at_threshold(q), at32 = shared32 && ev.at_threshold32(q);
    const CheckEvaluator::Row row = ev.row(q);
    for (std::size_t j : js) {
      const double y = in.values[(h * Lq + i) * Lk + j];
      const auto jj = static_cast<std::int64_t>(j);
      const std::int64_t d = q > jj ? q - jj : jj - q;
      const CheckEvaluator::Exact x = at ? thr[h * Lk + static_cast<std::size_t>(d)] : ev.exact(h, d, row);
      const Real r = CheckEvaluator::value(x);
      acc[0].add(d, h, y, r, check_exact_scale(in.stored, spec, w, h, x.x, x.hi));
      if (emu) {
        const CheckEvaluator::Emulated e = at32 ? thr32[h * Lk + static_cast<std::size_t>(d)] : ev.emulated(h, d, row);
        acc[1].add(d, h, y, rf::make_real(static_cast<double>(e.bias), 53), envelope(spec, w, h, e, allowance));
      }
    }
  });
  std::ostringstream o;
  if (emu) {
    rep.held_to = 1;
    o << "The spec's regime is cramming: every bias entry must lie within the emulation envelope of posenc's "
         "correctly rounded emulation of the reference's float32 steps, allowing float32 log within "
      << allowance.ulps << " ulp of correctly rounded"
      << (allowance.any_order ? ", a fused first Linear and any summation order in the second (gamma_{w+1} per side)"
                              : std::string(", the MLP in the spec's own order (--mlp-sum ") +
                                    std::string(to_string(spec.mlp_sum)) + ")")
      << ". The exact column shows how far the numbers are from the mathematics with the weights given.";
  } else {
    rep.held_to = 0;
    o << "The spec's regime is exact: every bias entry must be within the budget row's bound of the exact "
         "MLP(ln(|c| d + 1) / (ln(|c| max(q, L) + 1) + eps)) with the weights given: the stored type's half ulp plus "
         "(w + 16) 2^-53 S (a double evaluation, S the MLP's condition scale).";
  }
  rep.note = o.str();
  return rep;
}

}  // namespace posenc::verify::fire
