// KERPLE fast path: per-head values in double with a binary128 fallback near rounding boundaries (exact float,
// and every emulated float32 log / pow), binary128 for exact doubles; rows and scores through the shared bias
// machinery (core/bias_rows.hpp). Definition: posenc/kerple_spec.hpp.
#include "posenc/kerple.hpp"

#include "core/binary128.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/bias_rows.hpp"
#include "core/rn32.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "kerple";
constexpr std::int64_t kMaxDistance = (std::int64_t{1} << 31) - 1;

using core::near_float_boundary;
using core::rn32_log;
using core::rn32_pow;
constexpr double kDoubleRel = core::kDoubleLibmRel;

struct Head {
  double p = 0, a = 0;  // clamped (megatron: float32 values)
};

// The real value -p ln(1 + a d) / -a d^p in binary128 (a d is exact: 53 + 31 bits).
quad exact_q(KerpleKernel k, const Head& h, std::int64_t d) {
  const auto dq = static_cast<quad>(d);
  if (k == KerpleKernel::log) return -static_cast<quad>(h.p) * log1pq(static_cast<quad>(h.a) * dq);
  return -static_cast<quad>(h.a) * powq(dq, static_cast<quad>(h.p));
}

float exact_f32(KerpleKernel k, const Head& h, std::int64_t d) {
  const auto dd = static_cast<double>(d);
  const double v = k == KerpleKernel::log ? -h.p * std::log1p(h.a * dd) : -h.a * std::pow(dd, h.p);
  if (d == 0) return static_cast<float>(v);  // -0
  if (!near_float_boundary(v, kDoubleRel)) return static_cast<float>(v);
  return static_cast<float>(exact_q(k, h, d));
}

double exact_f64(KerpleKernel k, const Head& h, std::int64_t d) {
  if (d == 0) return -0.0;
  return static_cast<double>(exact_q(k, h, d));
}

float megatron_f32(KerpleKernel k, const Head& h, std::int64_t d) {
  const auto D = static_cast<float>(d);
  const auto p = static_cast<float>(h.p), a = static_cast<float>(h.a);
  if (k == KerpleKernel::log) {
    const float t = a * D;
    const float u = 1.0f + t;
    return -p * rn32_log(u);
  }
  return -rn32_pow(D, p) * a;
}

}  // namespace

struct KerplePlan::Impl {
  KerpleSpec spec;
  KerpleWeights weights;
  std::vector<Head> head;
  std::vector<double> p, a;

  Impl(const KerpleSpec& s, const KerpleWeights& w) : spec(s), weights(w) {
    head.resize(s.heads);
    p.resize(s.heads);
    a.resize(s.heads);
    for (std::size_t h = 0; h < s.heads; ++h) {
      head[h] = {kerple_effective_p(s, w.p[h]), kerple_effective_a(s, w.a[h])};
      p[h] = head[h].p;
      a[h] = head[h].a;
    }
  }

  template <class T>
  T value(std::size_t h, std::int64_t d) const {
    if (spec.regime == KerpleRegime::megatron) return static_cast<T>(megatron_f32(spec.kernel, head[h], d));
    if constexpr (std::is_same_v<T, float>) return exact_f32(spec.kernel, head[h], d);
    else return exact_f64(spec.kernel, head[h], d);
  }
};

namespace {

template <class T>
void bias_impl(const KerplePlan::Impl& P, const BiasGeometry& g, std::span<T> out, const TableOptions& o) {
  const std::size_t total = core::check_bias_geometry(kWhere, P.spec.heads, g);
  if (out.size() != total)
    throw Error(kWhere, "out", std::to_string(out.size()) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  const std::size_t Lk = g.key_length;
  // Toeplitz: E[t] is the bias of a key t - (Lk - 1) positions after the query, i.e. distance Lk - 1 - t up to the
  // query, distance 0 (the value at d = 0) after it.
  auto build = [&](std::size_t h, T* E, std::size_t n) {
    for (std::size_t t = 0; t < std::min(n, Lk); ++t) E[t] = P.value<T>(h, static_cast<std::int64_t>(Lk - 1 - t));
    for (std::size_t t = Lk; t < n; ++t) E[t] = E[Lk - 1];
  };
  core::write_bias_rows(P.spec.heads, g, core::RowShape::toeplitz, build, out, o);
}

void check_value_args(const KerpleSpec& s, std::size_t head, std::int64_t d) {
  if (head >= s.heads)
    throw Error(kWhere, "head", std::to_string(head), "an integer in [0, heads - 1 = " + std::to_string(s.heads - 1) + "]");
  if (d < 0 || d > kMaxDistance)
    throw Error(kWhere, "d", std::to_string(d), "a distance in [0, 2^31 - 1] (d = 0 for keys after the query)");
}

}  // namespace

KerplePlan::KerplePlan(const KerpleSpec& spec, const KerpleWeights& weights) {
  validate(spec);
  check_kerple_weights(spec, weights);
  impl_ = std::make_shared<const Impl>(spec, weights);
}
const KerpleSpec& KerplePlan::spec() const noexcept { return impl_->spec; }
const KerpleWeights& KerplePlan::weights() const noexcept { return impl_->weights; }
std::span<const double> KerplePlan::p() const noexcept { return impl_->p; }
std::span<const double> KerplePlan::a() const noexcept { return impl_->a; }

float KerplePlan::bias_value_f32(std::size_t head, std::int64_t d) const {
  check_value_args(impl_->spec, head, d);
  return impl_->value<float>(head, d);
}
double KerplePlan::bias_value_f64(std::size_t head, std::int64_t d) const {
  check_value_args(impl_->spec, head, d);
  return impl_->value<double>(head, d);
}

void KerplePlan::bias(const BiasGeometry& g, std::span<float> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }
void KerplePlan::bias(const BiasGeometry& g, std::span<double> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }

void KerplePlan::scores(std::span<const float> q, std::span<const float> k, std::size_t head_dim, const BiasGeometry& g,
                        double scale, std::span<float> out, const TableOptions& o) const {
  core::fused_scores(kWhere, impl_->spec.heads, q, k, head_dim, g, scale, out,
                     [&](std::span<float> b) { bias(g, b, o); });
}
void KerplePlan::scores(std::span<const double> q, std::span<const double> k, std::size_t head_dim,
                        const BiasGeometry& g, double scale, std::span<double> out, const TableOptions& o) const {
  core::fused_scores(kWhere, impl_->spec.heads, q, k, head_dim, g, scale, out,
                     [&](std::span<double> b) { bias(g, b, o); });
}

std::size_t kerple_bias_size(const KerpleSpec& s, const BiasGeometry& g) {
  validate(s);
  return core::check_bias_geometry(kWhere, s.heads, g);
}

void kerple_bias(const KerpleSpec& s, const KerpleWeights& w, const BiasGeometry& g, std::span<float> out,
                 const TableOptions& o) {
  KerplePlan(s, w).bias(g, out, o);
}
void kerple_bias(const KerpleSpec& s, const KerpleWeights& w, const BiasGeometry& g, std::span<double> out,
                 const TableOptions& o) {
  KerplePlan(s, w).bias(g, out, o);
}

}  // namespace posenc
