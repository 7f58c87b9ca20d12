#include "schemes/rope/measure.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "posenc/reference/rope.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::test::rope {
namespace {

namespace rf = posenc::reference;
using R = RopeRow;

bool emulated(const RopeSpec& s) { return s.regime != RopeRegime::exact; }
bool roformer(const RopeSpec& s) { return s.regime == RopeRegime::roformer; }

std::vector<std::size_t> all_pairs(const RopeSpec& s) {
  std::vector<std::size_t> v(pair_count(s));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

std::string spec_label(const RopeSpec& s) { return "spec=" + to_json(s).dump(); }

double pair_scale(const RopeSpec& s, std::span<const double> head, std::size_t c) {
  // a zero pair (or zero pass-through channel) must stay zero: the least positive scale, not 0 (no metric)
  constexpr double kTiny = std::numeric_limits<double>::denorm_min();
  if (c >= s.rotary_dim) return std::max(std::fabs(head[c]), kTiny);
  const std::size_t h = pair_count(s);
  const std::size_t k = s.layout == Layout::interleaved ? c / 2 : (c < h ? c : c - h);
  return std::max(std::fabs(head[first_channel(s, k)]) + std::fabs(head[second_channel(s, k)]), kTiny);
}

void measure_frequencies(const RopeSpec& s, const Sink& sink) {
  const rf::RopeOracle o(s);
  const RopePlan plan(s);
  const std::span<const double> f = plan.frequencies();
  for (std::size_t k = 0; k < f.size(); ++k) {
    auto what = [&] { return spec_label(s) + " k=" + std::to_string(k); };
    if (roformer(s)) emit(sink, R::frequency_roformer, f[k], o.angle(1, k), what);
    else if (emulated(s)) emit(sink, R::frequency_emulated, f[k], o.angle(1, k), what);
    else emit(sink, R::frequency_exact_f64, f[k], rf::rope_theta(s, k), what);
  }
  // The attention factor (1 unless yarn or longrope): exact regime against the real m, hf against HF's double steps.
  if (s.regime != RopeRegime::ggml) {
    const rf::Real m = s.regime == RopeRegime::hf ? rf::make_real(rf::rope_hf_attention_factor(s), 64u)
                                                  : rf::rope_attention_factor(s);
    emit(sink, R::frequency_attention, plan.attention_factor(), m, [&] { return spec_label(s) + " attention_factor"; });
  }
}

void measure_cache(const RopeSpec& s, std::span<const std::int64_t> positions, const std::vector<std::size_t>& pairs_in,
                   const Sink& sink) {
  const std::vector<std::size_t> pairs = pairs_in.empty() ? all_pairs(s) : pairs_in;
  const RopePlan plan(s);
  const rf::RopeOracle o(s);
  RopeSpec exact_spec = s;
  exact_spec.regime = RopeRegime::exact;
  const rf::RopeOracle ex(exact_spec);
  const std::size_t h = pair_count(s), r = s.rotary_dim, n = positions.size();
  // The attention factor: exact m (from the oracle), and the float32 m32 an hf cache multiplies by.
  const double m_exact = static_cast<double>(rf::rope_attention_factor(exact_spec));
  const double m32 = s.regime == RopeRegime::hf ? static_cast<float>(rf::rope_hf_attention_factor(s)) : 1.0;
  const bool attention = !emulated(s) && (m_exact != 1.0 || s.xpos != RopeXpos::none);
  // The scale of entry (p, k): m, times the xPos decay x_{p,k} (its S: the least power of two >= it).
  auto entry_scale = [&](std::int64_t p, std::size_t k) {
    if (s.xpos == RopeXpos::none) return attention_scale(m_exact);
    return attention_scale(m_exact * static_cast<double>(rf::rope_xpos_scale(exact_spec, p, k, 64)));
  };
  const RopeCacheForm forms[] = {RopeCacheForm::pairs, RopeCacheForm::hf, RopeCacheForm::gptj, RopeCacheForm::ggml};
  std::vector<float> c32[4];
  std::vector<double> c64[4];
  for (int f = 0; f < 4; ++f) {
    c32[f].resize(n * cache_values_per_position(s, forms[f]));
    c64[f].resize(c32[f].size());
    plan.cache(forms[f], positions, std::span<float>(c32[f]));
    plan.cache(forms[f], positions, std::span<double>(c64[f]));
  }
  // Where each form keeps cos and sin of (position i, pair k).
  auto at = [&](int f, std::size_t i, std::size_t k, bool want_sin) -> std::size_t {
    switch (forms[f]) {
      case RopeCacheForm::pairs: return i * 2 * h + (want_sin ? h : 0) + k;
      case RopeCacheForm::hf: return (want_sin ? n * r : 0) + i * r + k;  // the duplicate h + k is checked below
      case RopeCacheForm::gptj: return i * 2 * h + (want_sin ? 0 : h) + k;
      case RopeCacheForm::ggml: return i * 2 * h + 2 * k + (want_sin ? 1 : 0);
    }
    return 0;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t p = positions[i];
    for (std::size_t k : pairs) {
      for (bool want_sin : {false, true}) {
        const Real ref = want_sin ? o.sin(p, k) : o.cos(p, k);
        for (int f = 0; f < 4; ++f) {
          const std::size_t j = at(f, i, k, want_sin);
          auto what = [&] {
            return spec_label(s) + " form=" + std::string(to_string(forms[f])) + " p=" + std::to_string(p) +
                   " k=" + std::to_string(k) + (want_sin ? " sin" : " cos");
          };
          if (emulated(s)) {
            const R row = roformer(s) ? R::cache_roformer : R::cache_emulated;
            emit(sink, row, c32[f][j], ref, what);
            emit(sink, row, c64[f][j], ref, what);
          } else if (attention) {
            emit(sink, R::cache_exact_f32_attention, c32[f][j], ref, what, entry_scale(p, k));
            emit(sink, R::cache_exact_f64_attention, c64[f][j], ref, what, entry_scale(p, k));
          } else {
            emit(sink, R::cache_exact_f32, c32[f][j], ref, what);
            emit(sink, R::cache_exact_f64, c64[f][j], ref, what);
          }
          if (forms[f] == RopeCacheForm::hf) {  // [c | c]: the second copy must be the same number
            emit(sink, R::apply_identity, c64[f][j + h], rf::make_real(c64[f][j], 64u), what);
          }
        }
        // The regime's float32 value against the exact mathematics (not under xPos: torchscale's float32 scale
        // adds its own deviation, which rope.emulated_vs_exact does not bound).
        if (emulated(s) && s.xpos == RopeXpos::none) {
          const Real exact = want_sin ? ex.sin(p, k) : ex.cos(p, k);
          const rf::PrecisionGuard guard(320);
          const Real angle_err = abs(o.angle(p, k) - ex.angle(p, k));
          emit(sink, R::emulated_vs_exact, c64[0][at(0, i, k, want_sin)], exact,
               [&] { return spec_label(s) + " p=" + std::to_string(p) + " k=" + std::to_string(k); },
               emulated_vs_exact_scale(static_cast<double>(angle_err), m_exact, m32, roformer(s)));
        }
      }
    }
  }
}

void measure_apply(const RopeSpec& s, std::span<const std::int64_t> positions, std::span<const double> x,
                   RopeDirection dir, const Sink& sink) {
  const std::size_t d = s.head_dim, n = positions.size();
  const RopePlan plan(s);
  const rf::RopeOracle o(s);
  std::vector<float> y32(n * d);
  std::vector<double> y64(n * d), x32(n * d);
  for (std::size_t i = 0; i < n * d; ++i) {
    y32[i] = static_cast<float>(x[i]);
    x32[i] = y32[i];
    y64[i] = x[i];
  }
  plan.apply(dense_rope_tensor(std::span<float>(y32), n, 1, d), positions, dir);
  // 16-bit data: the same values rounded to bf16 and f16 (|x| <= 256 here, inside f16's range).
  std::vector<bf16> yb(n * d);
  std::vector<f16> yh(n * d);
  std::vector<double> xb(n * d), xh(n * d);
  for (std::size_t i = 0; i < n * d; ++i) {
    yb[i] = to_bf16(x[i]), xb[i] = to_double(yb[i]);
    yh[i] = to_f16(x[i]), xh[i] = to_double(yh[i]);
  }
  plan.apply(dense_rope_tensor(std::span<bf16>(yb), n, 1, d), positions, dir);
  plan.apply(dense_rope_tensor(std::span<f16>(yh), n, 1, d), positions, dir);
  const bool emu = emulated(s);
  if (!emu) plan.apply(dense_rope_tensor(std::span<double>(y64), n, 1, d), positions, dir);
  // Exact regime with an attention factor m != 1: the rotation is m R(p), its scale S' = m S (budget.cpp).
  const double m = emu ? 1.0 : static_cast<double>(rf::rope_attention_factor(s));
  const R f64_row = m != 1.0 ? R::apply_exact_f64_attention : R::apply_exact_f64;
  const bool inverse = dir == RopeDirection::inverse;
  for (std::size_t t = 0; t < n; ++t) {
    const std::span<const double> h32(x32.data() + t * d, d), h64(x.data() + t * d, d);
    const std::vector<Real> r32 = o.rotate(positions[t], h32, inverse);
    const std::vector<Real> r64 = emu ? std::vector<Real>{} : o.rotate(positions[t], h64, inverse);
    const std::span<const double> hb(xb.data() + t * d, d), hh(xh.data() + t * d, d);
    const std::vector<Real> rb = o.rotate(positions[t], hb, inverse), rh = o.rotate(positions[t], hh, inverse);
    for (std::size_t c = 0; c < d; ++c) {
      auto what = [&] {
        std::ostringstream w;
        w << spec_label(s) << (inverse ? " inverse" : "") << " p=" << positions[t] << " channel=" << c;
        return w.str();
      };
      const double vb = to_double(yb[t * d + c]), vh = to_double(yh[t * d + c]);
      if (c >= s.rotary_dim) {  // pass-through: bit-identical
        emit(sink, R::apply_identity, vb, rf::make_real(xb[t * d + c], 64u), what);
        emit(sink, R::apply_identity, vh, rf::make_real(xh[t * d + c], 64u), what);
        emit(sink, R::apply_identity, y32[t * d + c], rf::make_real(x32[t * d + c], 64u), what);
        if (!emu) emit(sink, R::apply_identity, y64[t * d + c], rf::make_real(x[t * d + c], 64u), what);
        continue;
      }
      if (emu) {
        emit(sink, roformer(s) ? R::apply_roformer_f32 : R::apply_emulated_f32, y32[t * d + c], r32[c], what);
        // The oracle's float32 steps on the widened 16-bit values, rounded once to the 16-bit type.
        emit(sink, R::apply_emulated_half, vb, rf::make_real(to_double(to_bf16(static_cast<double>(rb[c]))), 64u), what);
        emit(sink, R::apply_emulated_half, vh, rf::make_real(to_double(to_f16(static_cast<double>(rh[c]))), 64u), what);
      } else {
        emit(sink, R::apply_exact_bf16, vb, rb[c], what, m * pair_scale(s, hb, c));
        emit(sink, R::apply_exact_f16, vh, rh[c], what, m * pair_scale(s, hh, c));
        emit(sink, R::apply_exact_f32, y32[t * d + c], r32[c], what, m * pair_scale(s, h32, c));
        emit(sink, f64_row, y64[t * d + c], r64[c], what, m * pair_scale(s, h64, c));
      }
    }
  }
}

}  // namespace posenc::test::rope
