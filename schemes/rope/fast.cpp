// Rotary position embedding (posenc/rope.hpp). Definition and regimes: posenc/rope_spec.hpp.
#include "posenc/rope.hpp"

#include "core/binary128.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "core/angle_table.hpp"
#include "core/blas.hpp"
#include "core/pair_rotation.hpp"
#include "core/rn32.hpp"
#include "core/sincos32.hpp"
#include "core/parallel.hpp"
#include "core/table_writer.hpp"
#include "core/trig.hpp"

namespace posenc {
namespace {

constexpr std::string_view kWhere = "rope";
constexpr std::size_t kTokensPerChunk = 16;  // fixed split: which thread computes a token never changes its value

// RN32 of a binary128 value: one rounding (binary128 -> binary32 conversion rounds to nearest-even).
float rn32(quad x) { return static_cast<float>(x); }

// ---- context-extension scaling (posenc/rope_spec.hpp RopeScaling; CONVENTIONS.md §2.11) --------------------
// Exact regime: theta'_k and the attention factor m from their definitions in binary128: the unscaled theta_k
// (within 2^-105 relative) times or blended with a few logq/powq/division results (each within ~2^-112), so
// theta'_k is within ~2^-104.9 relative, and the angle p theta'_k within 2^-64 absolute for |p| <= 2^40: far below
// the angle core's E64 ~ 4.5 * 2^-53 (budget rows rope.cache.exact.*; rope.frequency.exact.f64 holds theta'_k to
// 0.5 + 2^-50 ulp, as ROPE-FREQ-1 checks against the oracle). hf regime: the float32 steps of HF's
// modeling_rope_utils (huggingface/transformers@26892c16b782513fdf938920653228ef63a19d7d, v5 rope_parameters:
// _compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters, _compute_yarn_parameters,
// _compute_llama3_parameters), each op of a float32 tensor correctly rounded; Python scalars are doubles and
// are rounded to float32 where they meet a tensor; `x / t` for a Python number x is t.reciprocal() * x
// (torch/_tensor.py __rdiv__). ggml regime: linear only (freq_scale = 1/factor multiplies theta).
using q128 = quad;

// 0.1 m ln s + 1, or 1 for s <= 1 (HF get_mscale), in binary128.
q128 mscale_q(q128 s, q128 m) { return s <= 1 ? q128(1) : q128(1) / 10 * m * logq(s) + 1; }

inline q128 floor_of(q128 x) { return floorq(x); }
inline double floor_of(double x) { return std::floor(x); }
inline q128 ceil_of(q128 x) { return ceilq(x); }
inline double ceil_of(double x) { return std::ceil(x); }

// HF's YaRN correction range (find_correction_range) in the arithmetic R it is given (binary128 for the exact
// regime, double as Python computes it for hf): the pair indices where the ramp starts (low) and ends (high),
// before the +0.001 of equal ends. find_correction_dim(beta) = (dim * log(L0 / (beta * 2 * pi))) / (2 * log(base)),
// evaluated left to right; truncate: floor(low), ceil(high); then max(low, 0), min(high, dim - 1) with dim = r.
template <class R>
std::pair<R, R> yarn_range(const RopeSpec& s, R (*log_of)(R), R pi) {
  const R r = static_cast<R>(s.rotary_dim), L0 = static_cast<R>(s.original_context);
  auto corr = [&](double beta) { return (r * log_of(L0 / (static_cast<R>(beta) * R(2) * pi))) / (R(2) * log_of(static_cast<R>(s.base))); };
  R low = corr(s.beta_fast), high = corr(s.beta_slow);
  if (s.truncate) low = floor_of(low), high = ceil_of(high);
  return {std::max(low, R(0)), std::min(high, r - R(1))};
}

// LongRoPE's factors for the spec's seq_len: the long ones when seq_len > original_context.
const std::vector<double>& longrope_factors(const RopeSpec& s) {
  return s.seq_len > s.original_context ? s.long_factor : s.short_factor;
}

// theta'_k for the exact regime from theta_k (binary128).
void scale_exact(const RopeSpec& s, std::vector<q128>& th, std::vector<double>& w, q128& m) {
  const std::size_t h = th.size();
  const q128 f = s.factor, r = static_cast<q128>(s.rotary_dim);
  w.assign(h, 0.0);
  m = 1;
  switch (s.scaling) {
    case RopeScaling::none: return;
    case RopeScaling::linear:
      for (std::size_t k = 0; k < h; ++k) th[k] /= f, w[k] = 1.0;
      return;
    case RopeScaling::ntk:
    case RopeScaling::dynamic: {
      // base' = base * a^(r/(r-2)): theta'_k = base'^(-2k/r) = theta_k * a^(-2k/(r-2)).
      q128 a = f;
      if (s.scaling == RopeScaling::dynamic) {
        const std::int64_t L = std::max(s.seq_len, s.max_context);
        a = f * static_cast<q128>(L) / static_cast<q128>(s.max_context) - (f - 1);
      }
      if (a == 1) return;
      for (std::size_t k = 0; k < h; ++k) th[k] *= powq(a, -(2 * static_cast<q128>(k)) / (r - 2));
      return;
    }
    case RopeScaling::yarn: {
      auto [low, high] = yarn_range<q128>(s, +[](q128 x) { return logq(x); }, acosq(q128(-1)));
      if (low == high) high += q128(1) / 1000;
      for (std::size_t k = 0; k < h; ++k) {
        q128 ramp = (static_cast<q128>(k) - low) / (high - low);
        ramp = ramp < 0 ? q128(0) : (ramp > 1 ? q128(1) : ramp);
        th[k] = th[k] / f * ramp + th[k] * (1 - ramp);
        w[k] = static_cast<double>(ramp);
      }
      if (s.attention_factor > 0) m = s.attention_factor;
      else if (s.mscale > 0 && s.mscale_all_dim > 0) m = mscale_q(f, s.mscale) / mscale_q(f, s.mscale_all_dim);
      else m = mscale_q(f, 1);
      return;
    }
    case RopeScaling::llama3: {
      const q128 L0 = static_cast<q128>(s.original_context), lf = s.low_freq_factor, hf = s.high_freq_factor;
      for (std::size_t k = 0; k < h; ++k) {
        const q128 wl = 2 * acosq(q128(-1)) / th[k];
        if (wl < L0 / hf) continue;  // high frequency: kept
        if (wl > L0 / lf) {          // low frequency: divided
          th[k] /= f, w[k] = 1.0;
          continue;
        }
        const q128 sm = (L0 / wl - lf) / (hf - lf);  // band edges inclusive: smoothed
        th[k] = (1 - sm) * th[k] / f + sm * th[k];
        w[k] = static_cast<double>(1 - sm);
      }
      return;
    }
    case RopeScaling::longrope: {
      // theta_k / e_k, e the long factors beyond the original context (HF: `seq_len and seq_len > L0`).
      const std::vector<double>& e = longrope_factors(s);
      for (std::size_t k = 0; k < h; ++k) th[k] /= static_cast<q128>(e[k]);
      if (s.attention_factor > 0) m = s.attention_factor;
      else if (f > 1) m = sqrtq(1 + logq(f) / logq(static_cast<q128>(s.original_context)));
      return;
    }
  }
}

float rn32d(double x) { return static_cast<float>(x); }

// hf regime: HF's float32 inv_freq' and its attention factor, from inv (the default float32 inv_freq) and the
// float32 exponents e_k = RN32(2k) / RN32(r) (rebuilt here for the bases that change).
void scale_hf(const RopeSpec& s, std::vector<float>& inv, double& m) {
  const std::size_t h = inv.size();
  const float r32 = static_cast<float>(s.rotary_dim), f32 = rn32d(s.factor);
  auto exponent = [&](std::size_t k) { return static_cast<float>(2 * k) / r32; };
  auto from_base = [&](float b32) {  // 1.0 / (base ** (arange(0, r, 2).float() / r))
    for (std::size_t k = 0; k < h; ++k) inv[k] = 1.0f / rn32(powq(static_cast<q128>(b32), static_cast<q128>(exponent(k))));
  };
  m = 1.0;
  switch (s.scaling) {
    case RopeScaling::none: return;
    case RopeScaling::linear:  // inv_freq /= factor
      for (float& v : inv) v = v / f32;
      return;
    case RopeScaling::ntk: {  // base * factor ** (dim / (dim - 2)) in Python doubles, then base ** ... in float32
      const double e = static_cast<double>(s.rotary_dim) / static_cast<double>(s.rotary_dim - 2);
      from_base(rn32d(s.base * static_cast<double>(powq(s.factor, e))));
      return;
    }
    case RopeScaling::dynamic: {
      // The module's forward: seq_len = max(position_ids) + 1 is an int64 tensor, so (factor * seq_len /
      // max_position_embeddings) - (factor - 1) is a 0-dim float32 tensor; `** (dim / (dim - 2))` keeps the Python
      // exponent as a double (PyTorch's CPU pow kernel for a tensor and a scalar exponent computes
      // std::pow(float, double) and rounds to float: aten/src/ATen/native/cpu/PowKernel.cpp, pytorch@0c678301;
      // a 0-dim tensor takes the scalar path of Loops.h vectorized_loop); times RN32(base); base ** exponents in
      // float32. seq_len <= max_position_embeddings: the original frequencies.
      if (s.seq_len <= s.max_context) return;
      float a = rn32d(s.factor) * static_cast<float>(s.seq_len);
      a = a / static_cast<float>(s.max_context);
      a = a - rn32d(s.factor - 1.0);
      const double e = static_cast<double>(s.rotary_dim) / static_cast<double>(s.rotary_dim - 2);
      a = static_cast<float>(static_cast<double>(powq(static_cast<q128>(a), static_cast<q128>(e))));  // RN32(RN64(pow))
      from_base(rn32d(s.base) * a);
      return;
    }
    case RopeScaling::yarn: {
      auto [low, high] = yarn_range<double>(s, +[](double x) { return static_cast<double>(logq(x)); }, M_PI);
      if (low == high) high += 0.001;
      const float low32 = rn32d(low), span32 = rn32d(high - low);
      for (std::size_t k = 0; k < h; ++k) {
        const float pos = rn32(powq(static_cast<q128>(rn32d(s.base)), static_cast<q128>(exponent(k))));
        const float extrap = 1.0f / pos, interp = 1.0f / (f32 * pos);
        float ramp = (static_cast<float>(k) - low32) / span32;
        ramp = std::min(std::max(ramp, 0.0f), 1.0f);
        const float ef = 1.0f - ramp;
        inv[k] = interp * (1.0f - ef) + extrap * ef;
      }
      auto g = [](double sc, double ms) { return sc <= 1 ? 1.0 : 0.1 * ms * static_cast<double>(logq(sc)) + 1.0; };
      if (s.attention_factor > 0) m = s.attention_factor;
      else if (s.mscale > 0 && s.mscale_all_dim > 0) m = g(s.factor, s.mscale) / g(s.factor, s.mscale_all_dim);
      else m = g(s.factor, 1.0);
      return;
    }
    case RopeScaling::llama3: {
      const double L0 = static_cast<double>(s.original_context);
      const float low_wl = rn32d(L0 / s.low_freq_factor), high_wl = rn32d(L0 / s.high_freq_factor);
      const float two_pi = rn32d(2 * M_PI), l0 = rn32d(L0), lf = rn32d(s.low_freq_factor),
                  span = rn32d(s.high_freq_factor - s.low_freq_factor);
      for (std::size_t k = 0; k < h; ++k) {
        const float wl = (1.0f / inv[k]) * two_pi;             // 2 * math.pi / inv_freq
        const float llama = wl > low_wl ? inv[k] / f32 : inv[k];
        const float sm = ((1.0f / wl) * l0 - lf) / span;       // (L0 / wavelen - low) / (high - low)
        const float smoothed = (1.0f - sm) * llama / f32 + sm * llama;
        inv[k] = (!(wl < high_wl) && !(wl > low_wl)) ? smoothed : llama;
      }
      return;
    }
    case RopeScaling::longrope: {
      // 1.0 / (ext_factors * base ** inv_freq_shape), ext_factors = torch.tensor(factors, dtype=float32);
      // attention_factor = math.sqrt(1 + math.log(factor) / math.log(L0)), 1.0 when factor <= 1.
      const std::vector<double>& e = longrope_factors(s);
      for (std::size_t k = 0; k < h; ++k) {
        const float pw = rn32(powq(static_cast<q128>(rn32d(s.base)), static_cast<q128>(exponent(k))));
        inv[k] = 1.0f / (rn32d(e[k]) * pw);
      }
      if (s.attention_factor > 0) m = s.attention_factor;
      else if (s.factor > 1)
        m = std::sqrt(1.0 + static_cast<double>(logq(s.factor)) / static_cast<double>(logq(static_cast<q128>(s.original_context))));
      return;
    }
  }
}

std::size_t checked_mul_add(std::size_t a, std::size_t b, std::size_t c, bool& overflow) {
  // a * b + c, flagging overflow.
  if (b != 0 && a > (std::numeric_limits<std::size_t>::max() - c) / b) {
    overflow = true;
    return 0;
  }
  return a * b + c;
}

// The exact regime's frequencies theta'_k in double-double (unscaled: exactly the angle core's geometric ones),
// with the scaling's weights and attention factor.
core::DDFrequencies exact_frequencies(const RopeSpec& s, std::vector<double>& weight, q128& m) {
  core::DDFrequencies f = core::geometric_frequencies(pair_count(s), 1.0, s.base, 2.0, static_cast<double>(s.rotary_dim));
  std::vector<q128> th(f.size());
  for (std::size_t k = 0; k < th.size(); ++k) th[k] = static_cast<q128>(f.hi[k]) + static_cast<q128>(f.lo[k]);
  scale_exact(s, th, weight, m);
  if (s.scaling == RopeScaling::none) return f;
  for (std::size_t k = 0; k < th.size(); ++k) {
    f.hi[k] = static_cast<double>(th[k]);
    f.lo[k] = static_cast<double>(th[k] - static_cast<q128>(f.hi[k]));
  }
  return f;
}

// ---- xPos decay without a binary128 exp per entry -----------------------------------------------------------
// Double-double arithmetic (hi + lo, |lo| <= ulp(hi) / 2): the product within ~2^-104 relative of the exact one.
struct DD {
  double hi, lo;
};
inline DD dd_of(q128 x) noexcept {
  const auto hi = static_cast<double>(x);
  return {hi, static_cast<double>(x - static_cast<q128>(hi))};
}
inline DD dd_mul(DD a, DD b) noexcept {
  const double p = a.hi * b.hi;
  const double e = std::fma(a.hi, b.hi, -p) + (a.hi * b.lo + a.lo * b.hi);
  const double hi = p + e;
  return {hi, e - (hi - p)};
}
// RN64 of a value known within `rel` relative of v = hi + lo: hi when every value in that interval rounds to hi
// (rounding is monotone, so checking both ends suffices), else nothing (the caller computes it another way).
inline std::optional<double> settled(DD v, double rel) noexcept {
  const double a = std::fabs(v.hi);
  if (!(a > 0x1p-900 && a < 0x1p900)) return std::nullopt;  // lo would be subnormal or the margin inexact
  const double margin = a * rel;
  if (v.hi + (v.lo + margin) == v.hi && v.hi + (v.lo - margin) == v.hi) return v.hi;
  return std::nullopt;
}
// RN32 of a double v known within `rel` relative of the real value, when every value in that interval rounds to
// the same float.
inline std::optional<float> settled32(double v, double rel) noexcept {
  const auto f = static_cast<float>(v);
  if (static_cast<float>(v * (1 + rel)) == f && static_cast<float>(v * (1 - rel)) == f) return f;
  return std::nullopt;
}

// ggml_rope_yarn_corr_dim of beta_fast and beta_slow before floor / ceil (rope.hpp): n_dims * logf(n_ctx_orig /
// (n_rot * 2 * (float)M_PI)) / (2 * logf(base)), left to right in float, logf correctly rounded.
std::array<float, 2> ggml_corr_dims(const RopeSpec& s) {
  auto logf_cr = [](float x) { return rn32(logq(static_cast<q128>(x))); };
  const auto n_dims = static_cast<float>(s.rotary_dim), n_ctx_orig = static_cast<float>(s.original_context);
  const auto base = static_cast<float>(s.base);
  auto corr_dim = [&](double beta) {
    const float den = static_cast<float>(beta) * 2.0f * static_cast<float>(M_PI);
    return n_dims * logf_cr(n_ctx_orig / den) / (2.0f * logf_cr(base));
  };
  return {corr_dim(s.beta_fast), corr_dim(s.beta_slow)};
}

}  // namespace

struct RopePlan::Impl {
  RopeSpec spec;
  std::size_t h = 0;
  std::vector<double> weight;        // the scaling's interpolation weight per pair (exact mathematics)
  q128 m_exact = 1;                  // the exact attention factor
  core::AngleTable table;            // exact regime
  std::vector<double> freqs;         // what frequencies() returns
  std::optional<core::ProductSinCos32> hf_sincos;  // hf: RN32(sin/cos(RN32(RN32(p) inv_freq_k))) per position
  float scale32 = 0.0f;              // ggml: theta_scale
  float freq_scale32 = 1.0f;         // ggml: freq_scale = 1.0f / factor (linear, yarn)
  std::vector<float> mix32, keep32;  // ggml yarn: rope_yarn's ramp_mix and 1 - ramp_mix per pair
  double m = 1.0;                    // the attention factor of the regime (attention_factor())
  float m32 = 1.0f;                  // hf: RN32(m), as cos * attention_scaling multiplies a float32 tensor
  std::vector<double> w64;           // roformer: the float64 divisors RN64(pow(base, RN64(2k / r)))
  int xsign = 0;                     // xPos: +1 queries, -1 keys, 0 none
  std::vector<q128> ln_zeta;         // xPos exact: ln zeta_k
  std::vector<q128> ln_x;            // xPos exact: ln X_k = xsign ln zeta_k / scale_base (x_{p,k} = X_k^(p - c))
  std::vector<DD> xpow;              // xPos exact: X_k^(+-j), X_k^(+-kXB j), j < kXB: [table][j][k] (xpos_table)
  std::vector<float> zeta32;         // xPos hf: torchscale's float32 zeta_k
  std::vector<double> ln_zeta32;     // xPos hf: RN64(ln zeta32_k)
  float xpos_sb32 = 1.0f;            // xPos hf: RN32(scale_base)
  std::size_t axes = 1;              // positions per token (3 for M-RoPE)
  std::vector<std::uint8_t> axis;    // M-RoPE: the position row (0 t, 1 h, 2 w) of pair k
  struct AxisRun {
    std::size_t begin, end, axis;
  };
  std::vector<AxisRun> axis_runs;    // M-RoPE: the maximal runs of consecutive pairs of one axis

  explicit Impl(const RopeSpec& s)
      : spec(s), h(pair_count(s)), table(exact_frequencies(s, weight, m_exact)), axes(position_axes(s)) {
    if (s.xpos != RopeXpos::none) {  // rope_spec.hpp: zeta_k = (2k + 0.4 r) / (1.4 r)
      xsign = s.xpos == RopeXpos::query ? 1 : -1;
      const q128 r = static_cast<q128>(s.rotary_dim);
      // torchscale: (arange(0, d, 2) + 0.4 * d) / (1.4 * d), the Python doubles rounded to float32, one rounding
      // per float32 op (microsoft/torchscale@776b070d xpos_relative_position.py)
      const float r04 = static_cast<float>(0.4 * static_cast<double>(s.rotary_dim)),
                  r14 = static_cast<float>(1.4 * static_cast<double>(s.rotary_dim));
      xpos_sb32 = static_cast<float>(s.xpos_scale_base);
      for (std::size_t k = 0; k < h; ++k) {
        ln_zeta.push_back(logq((2 * static_cast<q128>(k) + 2 * r / 5) / (7 * r / 5)));
        ln_x.push_back(xsign * ln_zeta.back() / static_cast<q128>(s.xpos_scale_base));
        zeta32.push_back((static_cast<float>(2 * k) + r04) / r14);
        ln_zeta32.push_back(static_cast<double>(logq(static_cast<q128>(zeta32.back()))));
      }
      if (s.regime == RopeRegime::exact) {
        // X^(+-j) and X^(+-kXB j) by repeated binary128 products of expq values (within j 2^-112 + 2^-111
        // relative for j < 32), stored as double-double (within 2^-106 more).
        xpow.resize(4 * kXB * h);
        for (std::size_t k = 0; k < h; ++k)
          for (int t = 0; t < 4; ++t) {
            const q128 e = static_cast<q128>(t < 2 ? 1 : static_cast<int>(kXB)) * ln_x[k];
            const q128 step = expq(t % 2 ? -e : e);
            q128 v = 1;
            for (std::size_t j = 0; j < kXB; ++j, v *= step) xpos_table(t, j)[k] = dd_of(v);
          }
      }
    }
    if (s.mrope != RopeMrope::none) {  // rope_spec.hpp: sections (Qwen2-VL) or interleaved (Qwen3-VL)
      const auto st = static_cast<std::size_t>(s.mrope_section[0]), sh = static_cast<std::size_t>(s.mrope_section[1]),
                 sw = static_cast<std::size_t>(s.mrope_section[2]);
      axis.resize(h);
      for (std::size_t k = 0; k < h; ++k) {
        if (s.mrope == RopeMrope::sections) axis[k] = k < st ? 0 : (k < st + sh ? 1 : 2);
        else axis[k] = (k % 3 == 1 && k < 3 * sh) ? 1 : ((k % 3 == 2 && k < 3 * sw) ? 2 : 0);
        if (k == 0 || axis[k] != axis[k - 1]) axis_runs.push_back({k, k + 1, axis[k]});
        else axis_runs.back().end = k + 1;
      }
    }
    const auto b32 = static_cast<quad>(static_cast<float>(s.base));
    const float r32 = static_cast<float>(s.rotary_dim);
    freqs.resize(h);
    switch (s.regime) {
      case RopeRegime::exact:
        for (std::size_t k = 0; k < h; ++k) freqs[k] = table.frequencies().hi[k];
        m = static_cast<double>(m_exact);
        break;
      case RopeRegime::hf: {  // 1.0 / (base ** (arange(0, r, 2, int64).float() / r)), float32 throughout
        std::vector<float> inv32(h);  // inv_freq_k
        for (std::size_t k = 0; k < h; ++k) {
          const float e = static_cast<float>(2 * k) / r32;
          const float pw = core::rn32_pow(static_cast<float>(s.base), e);  // torch.pow, correctly rounded
          inv32[k] = 1.0f / pw;
        }
        scale_hf(s, inv32, m);
        m32 = static_cast<float>(m);
        for (std::size_t k = 0; k < h; ++k) freqs[k] = inv32[k];
        hf_sincos.emplace(std::move(inv32));
        break;
      }
      case RopeRegime::roformer: {
        // RoFormerSinusoidalPositionalEmbedding: np.power(10000, 2 * (j // 2) / dim), a Python float exponent
        // (int / int: correctly rounded) and numpy's float64 pow, here correctly rounded (binary128 powq rounded
        // once to double); frequencies() reports the angle of position 1, RN64(1 / w_k).
        w64.resize(h);
        for (std::size_t k = 0; k < h; ++k) {
          const double e = static_cast<double>(2 * k) / static_cast<double>(s.rotary_dim);
          w64[k] = static_cast<double>(powq(static_cast<q128>(s.base), static_cast<q128>(e)));
          freqs[k] = 1.0 / w64[k];
        }
        break;
      }
      case RopeRegime::ggml: {  // theta_scale = powf(freq_base, -2.0f/n_dims); theta *= theta_scale per pair
        scale32 = rn32(powq(b32, static_cast<quad>(-2.0f / r32)));
        // llama.cpp: rope_freq_scale = 1.0f / rope_scaling factor (a float32 GGUF value); rope_yarn with
        // ext_factor 0 multiplies theta_extrap by it.
        if (s.scaling != RopeScaling::none) freq_scale32 = 1.0f / static_cast<float>(s.factor);
        if (s.scaling == RopeScaling::yarn) ggml_yarn(s);
        float t = 1.0f;
        for (std::size_t k = 0; k < h; ++k) {
          freqs[k] = ggml_angle(t, k);
          t = t * scale32;
        }
        break;
      }
    }
  }

  // llama.cpp's YaRN (rope_spec.hpp, ggml regime): the float32 correction dims (ggml_rope_yarn_corr_dims), the
  // per-pair ramp (rope_yarn_ramp) with ext_factor 1, and the magnitude scale of rope_yarn with attn_factor 1.
  void ggml_yarn(const RopeSpec& s) {
    auto logf_cr = [](float x) { return rn32(logq(static_cast<q128>(x))); };  // logf, correctly rounded
    const auto n_dims = static_cast<float>(s.rotary_dim);
    const std::array<float, 2> corr = ggml_corr_dims(s);
    // ggml's MAX / MIN macros (a > b ? a : b), whose NaN behaviour std::max / std::min do not share
    auto cmax = [](float a, float b) { return a > b ? a : b; };
    auto cmin = [](float a, float b) { return a < b ? a : b; };
    const float low = cmax(0.0f, std::floor(corr[0]));
    const float high = cmin(n_dims - 1.0f, std::ceil(corr[1]));
    mix32.resize(h), keep32.resize(h);
    for (std::size_t k = 0; k < h; ++k) {
      // MAX(0.001f, high - low) as written, also when high < low (ggml then extrapolates below low)
      const float y = (static_cast<float>(k) - low) / cmax(0.001f, high - low);  // i0 / 2 - low
      mix32[k] = 1.0f - cmin(1.0f, cmax(0.0f, y));                                // times ext_factor 1
      keep32[k] = 1.0f - mix32[k];
    }
    m32 = 1.0f + 0.1f * logf_cr(1.0f / freq_scale32);  // mscale (attn_factor 1) *= 1 + 0.1 logf(1 / freq_scale)
    m = m32;
  }
  // The ggml angle of pair k from theta_extrap = t (ggml's p theta_k): freq_scale times it (linear), or YaRN's
  // blend theta_interp (1 - mix) + theta_extrap mix, each product and the sum rounded to float.
  float ggml_angle(float t, std::size_t k) const noexcept {
    switch (spec.scaling) {
      case RopeScaling::linear: return freq_scale32 * t;
      case RopeScaling::yarn: {
        const float interp = freq_scale32 * t;
        return interp * keep32[k] + t * mix32[k];
      }
      default: return t;
    }
  }

  // ggml's angles of positions q0 + i, i < kThetaBlock, into block[i * h + k] (ggml_angle of theta_extrap): the
  // float32 chain t = (float) q, t = t * theta_scale per pair of each position, run for kThetaBlock positions side by
  // side. One position's chain is a serial dependency of h multiplies (latency-bound: ~10 % of a T = 1024 ggml
  // apply); side by side they vectorise. Each position's values are its own chain's.
  static constexpr std::size_t kThetaBlock = 16;
  void ggml_angles(std::int64_t q0, float* block) const noexcept {
    float t[kThetaBlock];
    for (std::size_t i = 0; i < kThetaBlock; ++i) t[i] = static_cast<float>(q0 + static_cast<std::int64_t>(i));
    for (std::size_t k = 0; k < h; ++k)
      for (std::size_t i = 0; i < kThetaBlock; ++i) {
        block[i * h + k] = ggml_angle(t[i], k);
        t[i] = t[i] * scale32;
      }
  }

  // cos and sin of every pair at position p (values of the regime; float32 numbers in hf/ggml). Scratch: sa, ca (h
  // doubles) hold the angle core's anchor `anchor` (exact and hf regimes; updated when p has another anchor); ggml:
  // theta (kThetaBlock h floats) holds ggml_angles of the positions from `anchor` on.
  void sincos(std::int64_t p, double* s, double* c, double* sa, double* ca, std::int64_t& anchor,
              float* angle, float* theta, DD* xa, std::int64_t& xanchor, double* x) const noexcept {
    switch (spec.regime) {
      case RopeRegime::exact: {
        // p < 0: the values of |p| with the sines negated, as the table writer makes them (core/table_writer.cpp),
        // so a position has the same bits in caches, rotations and M-RoPE rows (p and -p have different anchors).
        const std::int64_t q = p < 0 ? -p : p;
        const std::int64_t pa = table.anchor_of(q);
        if (pa != anchor) {
          table.direct(pa, sa, ca);
          anchor = pa;
        }
        table.rotate(sa, ca, static_cast<std::size_t>(q - pa), s, c);
        if (p < 0)
          for (std::size_t k = 0; k < h; ++k) s[k] = -s[k];
        if (xsign != 0) {  // xPos: the real factor x_{p,k} rounded once to double, then one product
          xpos_exact(p - spec.xpos_center, xa, xanchor, x);
          for (std::size_t k = 0; k < h; ++k) s[k] *= x[k], c[k] *= x[k];
        } else if (m != 1.0) {
          for (std::size_t k = 0; k < h; ++k) s[k] *= m, c[k] *= m;
        }
        return;
      }
      case RopeRegime::hf:
        // angle_k = RN32(position_ids.float() * inv_freq_k), then RN32(sin/cos angle_k) (core/sincos32.hpp); sa, ca,
        // anchor and angle are its scratch (the exact regime's anchor is not used in this regime)
        hf_sincos->row(p, sa, ca, anchor, angle, s, c);
        break;
      case RopeRegime::roformer:
        for (std::size_t k = 0; k < h; ++k) roformer_sincos(static_cast<double>(p) / w64[k], s[k], c[k]);
        return;
      case RopeRegime::ggml: {
        // theta_base = (float) p, then theta *= theta_scale per pair: p's angles from the block of positions held
        // in theta (anchor: its first position), computed when p is not in it
        if (p < anchor || p >= anchor + static_cast<std::int64_t>(kThetaBlock)) {
          ggml_angles(p, theta);
          anchor = p;
        }
        core::sincos_rn32(theta + static_cast<std::size_t>(p - anchor) * h, h, s, c);  // each RN32(sin/cos angle_k)
        break;
      }
    }
    if (m32 != 1.0f)  // hf: cos = emb.cos() * attention_scaling, a float32 tensor times RN32(m)
      for (std::size_t k = 0; k < h; ++k)
        s[k] = static_cast<float>(s[k]) * m32, c[k] = static_cast<float>(c[k]) * m32;
    if (xsign != 0) {  // torchscale XPOS: scale ** (positions / scale_base), 1 / scale for keys; sin * scale
      const float e = static_cast<float>(p - spec.xpos_center) / xpos_sb32;
      for (std::size_t k = 0; k < h; ++k) {
        // pow(zeta, e) correctly rounded to float32: exp(e ln zeta) in double is within 2^-42.4 relative (ln
        // zeta_k within 2^-53, the product 2^-53 more, |e ln zeta| <= 553 ln 3.5 < 693 so the exponent is
        // within 2^-42.6 absolute; glibc's exp within 1 ulp), settled when that interval does not straddle a
        // float32 rounding boundary (all but ~2^-16 of entries), else powq in binary128 as before.
        const std::optional<float> fast = settled32(std::exp(static_cast<double>(e) * ln_zeta32[k]), 0x1p-40);
        float x = fast ? *fast : rn32(powq(static_cast<q128>(zeta32[k]), static_cast<q128>(e)));
        if (xsign < 0) x = 1.0f / x;
        s[k] = static_cast<float>(s[k]) * x, c[k] = static_cast<float>(c[k]) * x;
      }
    }
  }

  // roformer: RN32(RN64(sin a)), RN32(RN64(cos a)) of the float64 angle a (|a| <= 2^40): numpy's np.sin / np.cos
  // rounded to double, then torch.FloatTensor's cast. The angle core's sincos_dd is within 2^-53 + 2^-58 absolute
  // of sin/cos a (core/trig.hpp) and RN64 moves the real value by at most 2^-54 (|value| <= 1), so RN64(sin a) lies
  // within 2^-52 of the double v: when no float32 rounding boundary lies within 2^-51 of v, RN32(v) is the value.
  // Otherwise binary128 sinq/cosq (libquadmath, or glibc on AArch64, reduces the angle exactly) rounded to double,
  // then to float: exact unless sin a lies within ~2^-112 relative of a double midpoint (every emulated row's caveat).
  static void roformer_sincos(double a, double& s_out, double& c_out) noexcept {
    double sv = 0, cv = 0;
    core::sincos_dd(a, 0.0, sv, cv);
    constexpr double tol = 0x1p-51;
    s_out = core::near_float_boundary_abs(sv, tol)
                ? static_cast<double>(static_cast<float>(static_cast<double>(sinq(static_cast<q128>(a)))))
                : static_cast<double>(static_cast<float>(sv));
    c_out = core::near_float_boundary_abs(cv, tol)
                ? static_cast<double>(static_cast<float>(static_cast<double>(cosq(static_cast<q128>(a)))))
                : static_cast<double>(static_cast<float>(cv));
  }

  // xPos exact: x_{p,k} = X_k^d for d = p - c, rounded once to double, for every pair, into x. d = q kXB^2 + i kXB
  // + j with q truncated toward zero and i, j < kXB of d's sign: X^d = A_q X^(+-i kXB) X^(+-j) in double-double,
  // A_q = expq(q kXB^2 ln X) (per thread, cached in xa while q stays: kXB^2 = 1024 consecutive positions). Each
  // factor is within 2^-101.6 relative (|q kXB^2 ln X| <= |d ln X| <= 693, ln X within 2^-111 relative; expq
  // within 2^-112), each product adds ~2^-104: the product is within 2^-100 relative; settled() takes hi when
  // the whole interval of width 2^-96 relative rounds to it, else the entry is expq(d ln X) in binary128
  // rounded once (the former path, for ~2^-42 of entries and for scales beyond 2^+-900).
  void xpos_exact(std::int64_t d, DD* xa, std::int64_t& xanchor, double* x) const noexcept {
    constexpr auto B = static_cast<std::int64_t>(kXB);
    const std::int64_t q = d / (B * B), rem = d - q * B * B, ar = rem < 0 ? -rem : rem;
    if (q != xanchor) {
      for (std::size_t k = 0; k < h; ++k) xa[k] = dd_of(expq(static_cast<q128>(q * B * B) * ln_x[k]));
      xanchor = q;
    }
    const int neg = rem < 0 ? 1 : 0;
    const DD* t1 = xpos_table(2 + neg, static_cast<std::size_t>(ar / B));
    const DD* t0 = xpos_table(neg, static_cast<std::size_t>(ar % B));
    // settled() for every pair without branches (the loop vectorises), then the rare unsettled pairs again
    int unsettled = 0;
#pragma omp simd reduction(| : unsettled)
    for (std::size_t k = 0; k < h; ++k) {
      const DD v = dd_mul(dd_mul(xa[k], t1[k]), t0[k]);
      const double a = std::fabs(v.hi), margin = a * 0x1p-96;
      const bool ok = (a > 0x1p-900) & (a < 0x1p900) & (v.hi + (v.lo + margin) == v.hi) & (v.hi + (v.lo - margin) == v.hi);
      x[k] = v.hi;
      unsettled |= static_cast<int>(!ok);
    }
    if (!unsettled) return;
    for (std::size_t k = 0; k < h; ++k) {
      const std::optional<double> v = settled(dd_mul(dd_mul(xa[k], t1[k]), t0[k]), 0x1p-96);
      x[k] = v ? *v : static_cast<double>(expq(static_cast<q128>(d) * ln_x[k]));
    }
  }
  static constexpr std::size_t kXB = 32;
  // Table t of xpow (0: X^j, 1: X^-j, 2: X^(kXB j), 3: X^(-kXB j)), row j: h values.
  DD* xpos_table(int t, std::size_t j) { return xpow.data() + (static_cast<std::size_t>(t) * kXB + j) * h; }
  const DD* xpos_table(int t, std::size_t j) const {
    return xpow.data() + (static_cast<std::size_t>(t) * kXB + j) * h;
  }

  // The values of token `tok` of a position list with `tokens` tokens per axis row: sincos of each axis' position
  // in the thread's slot of that axis, or slot 0 where the axis is at axis 0's position (every text token; 1-D
  // has axis 0 only). A slot still holding the values of the position asked for is not recomputed (an image grid
  // repeats its t and h positions over many tokens; a slot's values depend only on the position). Returns the
  // slot of each axis: pair k takes the values of slot[axis[k]] (HF computes cos/sin per axis row and selects per
  // pair: the same numbers).
  template <class Scr>
  std::array<std::size_t, 3> token_slots(std::span<const std::int64_t> positions, std::size_t tokens, std::size_t tok,
                                         const Scr& sc, int t, std::int64_t* anchors) const noexcept {
    // anchors: [0, 3) sincos anchor per axis, [3, 6) xPos anchor per axis, [6, 9) the position slot a holds
    auto values = [&](std::size_t a, std::int64_t p) {
      if (anchors[6 + a] == p) return;
      sincos(p, sc.s(t, a), sc.c(t, a), sc.sa(t, a), sc.ca(t, a), anchors[a], sc.a(t, a), sc.theta(t, a), sc.xa(t, a),
             anchors[3 + a], sc.x(t));
      anchors[6 + a] = p;
    };
    const std::int64_t p0 = positions[tok];
    values(0, p0);
    std::array<std::size_t, 3> slot{0, 0, 0};
    for (std::size_t a = 1; a < axes; ++a) {
      const std::int64_t p = positions[a * tokens + tok];
      if (p == p0) continue;
      values(a, p);
      slot[a] = a;
    }
    return slot;
  }
  static bool one_slot(const std::array<std::size_t, 3>& slot) noexcept { return slot[1] == 0 && slot[2] == 0; }

  // The token's sines and cosines as two rows of h values: slot 0's, or the selection per pair of token_slots in
  // the thread's row buffer. Returns {sin, cos}.
  template <class Scr>
  std::pair<const double*, const double*> token_sincos(std::span<const std::int64_t> positions, std::size_t tokens,
                                                       std::size_t tok, const Scr& sc, int t,
                                                       std::int64_t* anchors) const noexcept {
    const std::array<std::size_t, 3> slot = token_slots(positions, tokens, tok, sc, t, anchors);
    if (one_slot(slot)) return {sc.s(t, 0), sc.c(t, 0)};
    double *s = sc.row(t), *c = s + h;
    for (const AxisRun& r : axis_runs) {  // per run, not per pair: slot[axis[k]] per pair stayed scalar
      const std::size_t a = slot[r.axis], n = r.end - r.begin;
      std::memcpy(s + r.begin, sc.s(t, a) + r.begin, n * sizeof(double));
      std::memcpy(c + r.begin, sc.c(t, a) + r.begin, n * sizeof(double));
    }
    return {s, c};
  }
};

namespace {

// Per thread and position axis: sin, cos, the anchor's sin and cos (h doubles each), the float32 angles and the
// xPos anchor (h double-doubles); per thread: the xPos scales of a token (h doubles).
struct Scratch {
  core::AlignedBuffer<double> buf;
  core::AlignedBuffer<float> angle, thetas;
  core::AlignedBuffer<DD> xanchor;
  core::AlignedBuffer<double> xscale, rows;
  std::size_t h, axes;
  Scratch(int threads, std::size_t h_, std::size_t axes_, bool ggml)
      : buf(static_cast<std::size_t>(threads) * axes_ * 4 * h_), angle(static_cast<std::size_t>(threads) * axes_ * h_),
        thetas(ggml ? static_cast<std::size_t>(threads) * axes_ * RopePlan::Impl::kThetaBlock * h_ : 0),
        xanchor(static_cast<std::size_t>(threads) * axes_ * h_), xscale(static_cast<std::size_t>(threads) * h_),
        rows(static_cast<std::size_t>(threads) * 2 * h_), h(h_), axes(axes_),
        anchor_ids(9 * static_cast<std::size_t>(threads), std::numeric_limits<std::int64_t>::min()) {}
  // The anchors whose values sa/ca and xa hold and the positions whose values s/c hold (9 per thread: sincos
  // anchor, xPos anchor, position; per axis). Kept across a thread's chunks: the values depend only on them, so
  // reusing them changes no bit.
  std::vector<std::int64_t> anchor_ids;
  std::int64_t* anchors(int t) { return anchor_ids.data() + 9 * static_cast<std::size_t>(t); }
  // A token's row of sines then cosines (2h doubles): M-RoPE's selection per pair, the inverse rotation's sines.
  double* row(int t) const { return rows.get() + static_cast<std::size_t>(t) * 2 * h; }
  DD* xa(int t, std::size_t a) const { return xanchor.get() + (static_cast<std::size_t>(t) * axes + a) * h; }
  double* x(int t) const { return xscale.get() + static_cast<std::size_t>(t) * h; }
  double* s(int t, std::size_t a) const { return buf.get() + (static_cast<std::size_t>(t) * axes + a) * 4 * h; }
  double* c(int t, std::size_t a) const { return s(t, a) + h; }
  double* sa(int t, std::size_t a) const { return s(t, a) + 2 * h; }
  double* ca(int t, std::size_t a) const { return s(t, a) + 3 * h; }
  float* a(int t, std::size_t a) const { return angle.get() + (static_cast<std::size_t>(t) * axes + a) * h; }
  float* theta(int t, std::size_t a) const {  // ggml only (null otherwise)
    return thetas.size() ? thetas.get() + (static_cast<std::size_t>(t) * axes + a) * RopePlan::Impl::kThetaBlock * h : nullptr;
  }
};

// Tokens of a position list: its size, or (M-RoPE) a third of it: rows t, h, w of tokens entries each.
std::size_t token_count(const RopeSpec& s, std::span<const std::int64_t> positions, const char* name) {
  const std::size_t axes = position_axes(s);
  if (positions.size() % axes != 0)
    throw Error(std::string(kWhere), name, std::to_string(positions.size()) + " positions",
                "a multiple of 3: rows t, h, w of one position per token each (--mrope " +
                    std::string(to_string(s.mrope)) + ")");
  return positions.size() / axes;
}

// Every position within the spec's range; the parameter's name ("positions[i]") is built only for the one that
// is not (building it per token cost a string allocation per token on the hot path).
void check_positions(const RopeSpec& s, std::span<const std::int64_t> positions) {
  const Range<std::int64_t> r = SpecTraits<RopeSpec>::position_range(s);
  if (r.step == 1 && !positions.empty()) {  // one vectorised min/max pass decides the common case
    std::int64_t lo = positions[0], hi = positions[0];
#pragma omp simd reduction(min : lo) reduction(max : hi)
    for (std::size_t i = 0; i < positions.size(); ++i) lo = std::min(lo, positions[i]), hi = std::max(hi, positions[i]);
    if (in_range(lo, r) && in_range(hi, r)) return;
  }
  for (std::size_t i = 0; i < positions.size(); ++i)
    if (!in_range(positions[i], r)) check_position(s, positions[i], "positions[" + std::to_string(i) + "]");
}

template <class T>
void check_view(const RopeSpec& s, const RopeTensor<T>& v, std::size_t tokens, std::size_t index) {
  const std::string name = "views[" + std::to_string(index) + "]";
  const std::size_t d = s.head_dim;
  if (v.tokens != tokens)
    throw Error(std::string(kWhere), name + ".tokens", std::to_string(v.tokens),
                "the number of positions (" + std::to_string(tokens) + ")");
  if (v.heads == 0) throw Error(std::string(kWhere), name + ".heads", "0", "an integer >= 1");
  if (tokens == 0) return;
  // Elements of distinct (token, head) vectors must not overlap: heads nested in tokens or tokens in heads.
  const bool heads_inner = (v.heads == 1 || v.head_stride >= d) &&
                           (tokens == 1 || v.token_stride >= (v.heads - 1) * v.head_stride + d);
  const bool tokens_inner = (tokens == 1 || v.token_stride >= d) &&
                            (v.heads == 1 || v.head_stride >= (tokens - 1) * v.token_stride + d);
  if (!heads_inner && !tokens_inner)
    throw Error(std::string(kWhere), name + ".strides",
                "(token_stride " + std::to_string(v.token_stride) + ", head_stride " + std::to_string(v.head_stride) +
                    ")",
                "strides under which no two head vectors of head_dim = " + std::to_string(d) +
                    " elements overlap (heads inside tokens, or tokens inside heads)");
  bool overflow = false;
  std::size_t last = checked_mul_add(tokens - 1, v.token_stride, 0, overflow);
  last = checked_mul_add(v.heads - 1, v.head_stride, last, overflow);
  last = checked_mul_add(1, d - 1, last, overflow);
  if (overflow || last >= v.data.size())
    throw Error(std::string(kWhere), name + ".data", std::to_string(v.data.size()) + " elements",
                "at least (tokens-1)*token_stride + (heads-1)*head_stride + head_dim = " +
                    (overflow ? std::string("(overflows size_t)") : std::to_string(last + 1)) + " elements");
}

// The arithmetic type of the emulated regimes: T itself for float and double, float for the 16-bit types.
template <class T>
using ArithOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
void apply_impl(const RopePlan::Impl& im, std::span<const RopeTensor<T>> views, std::span<const std::int64_t> positions,
                RopeDirection dir, const TableOptions& o) {
  const RopeSpec& spec = im.spec;
  check_positions(spec, positions);
  const std::size_t tokens = token_count(spec, positions, "positions");
  std::size_t work = 0;
  for (std::size_t i = 0; i < views.size(); ++i) {
    check_view(spec, views[i], tokens, i);
    work += views[i].heads * spec.rotary_dim * tokens;
  }
  if (tokens == 0 || views.empty()) return;
  const std::size_t h = im.h;
  const std::size_t chunks = (tokens + kTokensPerChunk - 1) / kTokensPerChunk;
  const int threads = std::min<int>(core::thread_count(o, work), static_cast<int>(chunks));
  Scratch sc(threads, h, im.axes, spec.regime == RopeRegime::ggml);  // allocated before the parallel region: a failure throws here
  // Per thread, the token's rotor (core/pair_rotation.hpp): the exact regime rotates in double with one fma
  // and one product (rounded once to T), the emulated ones in their float32 (f64: double) arithmetic.
  using A = ArithOf<T>;
  const bool exact = spec.regime == RopeRegime::exact;
  const core::AlignedBuffer<double> rot_d(exact ? static_cast<std::size_t>(threads) * 6 * h : 0);
  const core::AlignedBuffer<A> rot_a(exact ? 0 : static_cast<std::size_t>(threads) * 6 * h);
  const bool interleaved = spec.layout == Layout::interleaved;
  const double sign = dir == RopeDirection::inverse ? -1.0 : 1.0;
  core::parallel_for(chunks, threads, [&](int t, std::size_t chunk) {
    std::int64_t* anchors = sc.anchors(t);
    const std::size_t lo = chunk * kTokensPerChunk, hi = std::min(tokens, lo + kTokensPerChunk);
    for (std::size_t tok = lo; tok < hi; ++tok) {
      auto [s, c] = im.token_sincos(positions, tokens, tok, sc, t, anchors);
      if (sign < 0) {  // R(-p): sin is odd in every regime (RN32 and the angle steps are symmetric)
        double* neg = sc.row(t);  // may be where s is (M-RoPE): each entry read before it is written
        for (std::size_t k = 0; k < h; ++k) neg[k] = -s[k];
        s = neg;
      }
      auto rotate = [&](const auto& rotor) {
        for (const RopeTensor<T>& v : views) {
          // The next token of this call (same view): its lines are prefetched while this one is rotated.
          const auto next = tok + 1 < tokens ? static_cast<std::ptrdiff_t>(v.token_stride) : std::ptrdiff_t{0};
          core::rotate_heads(v.data.data() + tok * v.token_stride, v.heads, static_cast<std::ptrdiff_t>(v.head_stride),
                             rotor, next);
        }
      };
      if (exact)
        rotate(core::make_rotor(c, s, h, interleaved, core::PairFormula::fused,
                                rot_d.get() + static_cast<std::size_t>(t) * 6 * h));
      else
        rotate(core::make_rotor(c, s, h, interleaved, core::PairFormula::products,
                                rot_a.get() + static_cast<std::size_t>(t) * 6 * h));
    }
  });
}

// A cache form posenc knows (a value cast from an integer may not be one), else Error naming "form".
void check_form(RopeCacheForm f) {
  if (!enum_index(f))
    throw Error(std::string(kWhere), "form", std::to_string(static_cast<int>(f)), enum_names<RopeCacheForm>());
}

// Values per position of a cache form, for a spec already validated.
std::size_t values_per_position(const RopeSpec& s, RopeCacheForm f) {
  check_form(f);
  return f == RopeCacheForm::hf ? 2 * s.rotary_dim : 2 * pair_count(s);
}

template <class T>
void cache_impl(const RopePlan::Impl& im, RopeCacheForm form, std::span<const std::int64_t> positions, std::span<T> out,
                const TableOptions& o) {
  const RopeSpec& spec = im.spec;
  check_positions(spec, positions);
  const std::size_t per = values_per_position(spec, form);
  const std::size_t n = token_count(spec, positions, "positions");  // rows
  if (n > out.size() / per || n * per > out.size())
    throw Error(std::string(kWhere), "out", std::to_string(out.size()) + " elements",
                std::string(spec.mrope == RopeMrope::none ? "at least positions * " : "at least tokens * ") +
                    std::to_string(per) + " = " +
                    (n > std::numeric_limits<std::size_t>::max() / per ? std::string("(overflows size_t)")
                                                                         : std::to_string(n * per)) +
                    " elements (" + std::string(to_string(form)) + " form)");
  if (n == 0) return;
  const std::size_t h = im.h, r = spec.rotary_dim;
  // The form's layout, described once for both regimes.
  T* base = out.data();
  core::RowForm<T> f;
  switch (form) {
    case RopeCacheForm::pairs: f.add(core::Part::cos, base, per, 0).add(core::Part::sin, base, per, h); break;
    case RopeCacheForm::hf:  // [n][r] cos plane [c | c], then [n][r] sin plane [s | s]
      f.add(core::Part::cos, base, r, 0).add(core::Part::cos, base, r, h);
      f.add(core::Part::sin, base + n * r, r, 0).add(core::Part::sin, base + n * r, r, h);
      break;
    case RopeCacheForm::gptj: f.add(core::Part::sin, base, per, 0).add(core::Part::cos, base, per, h); break;
    case RopeCacheForm::ggml: f.add(core::Part::cos_sin, base, per, 0); break;
  }
  f.scale = im.m;  // the attention factor (YaRN, LongRoPE): c_d m, as sincos() forms it
  if (spec.regime == RopeRegime::exact && im.axes == 1 && im.xsign == 0) {  // the shared table writer (core/table_writer.hpp)
    core::write_table(im.table, core::PositionSource{.count = n, .list = positions}, f, std::nullopt, o, n * per);
    return;
  }
  // Emulated regimes, xPos scales and M-RoPE: every token on its own (token_slots), laid out by the same form.
  // (M-RoPE sections once went through the writer, one pass per section from its axis' positions: an image grid
  // repeats t and h positions, so two of three passes wrote one row per call, into partial lines with streaming
  // stores; 0.036x the streaming store at [1M][128] f32, 1 thread, against 0.15x here.)
  const std::size_t chunks = (n + kTokensPerChunk - 1) / kTokensPerChunk;
  const int threads = std::min<int>(core::thread_count(o, n * per), static_cast<int>(chunks));
  Scratch sc(threads, h, im.axes, spec.regime == RopeRegime::ggml);
  core::parallel_for(chunks, threads, [&](int t, std::size_t chunk) {
    std::int64_t* anchors = sc.anchors(t);
    const std::size_t lo = chunk * kTokensPerChunk, hi = std::min(n, lo + kTokensPerChunk);
    for (std::size_t i = lo; i < hi; ++i) {
      const std::array<std::size_t, 3> slot = im.token_slots(positions, n, i, sc, t, anchors);
      if (RopePlan::Impl::one_slot(slot)) {
        core::put_row(f, i, sc.s(t, 0), sc.c(t, 0), h);
        continue;
      }
      for (const auto& r : im.axis_runs)  // M-RoPE: each run of pairs from its axis' slot
        core::put_pairs(f, i, sc.s(t, slot[r.axis]), sc.c(t, slot[r.axis]), r.begin, r.end);
      core::put_zero_column(f, i);
    }
  });
}

template <class T>
void shift_impl(const RopePlan& plan, const RopeTensor<T>& x, std::int64_t delta, const TableOptions& o) {
  check_position(plan.spec(), delta, "delta");
  const std::vector<std::int64_t> positions(position_axes(plan.spec()) * x.tokens, delta);  // every axis by delta
  plan.apply(x, positions, RopeDirection::forward, o);
}

template <class T>
void scores_impl(const RopePlan& plan, std::span<const T> q, std::span<const std::int64_t> qp, std::span<const T> k,
                 std::span<const std::int64_t> kp, std::span<T> out, const TableOptions& o) {
  prepare_blas();  // refuses when the address space cannot hold OpenBLAS's work buffer (posenc/blas.hpp)
  const std::size_t d = plan.spec().head_dim, lq = token_count(plan.spec(), qp, "q_positions"),
                    lk = token_count(plan.spec(), kp, "k_positions");
  auto need = [&](const char* what, std::size_t have, std::size_t rows, std::size_t cols, const char* shape) {
    if (cols != 0 && rows > std::numeric_limits<std::size_t>::max() / cols)
      throw Error(std::string(kWhere), what, std::to_string(rows) + " rows", std::string("a size whose ") + shape + " fits in size_t");
    if (have != rows * cols)
      throw Error(std::string(kWhere), what, std::to_string(have) + " elements",
                  std::string("exactly ") + shape + " = " + std::to_string(rows * cols) + " elements");
  };
  need("q", q.size(), lq, d, "q tokens (q_positions per axis) * head_dim");
  need("k", k.size(), lk, d, "k tokens (k_positions per axis) * head_dim");
  need("scores", out.size(), lq, lk, "q tokens * k tokens");
  const blasint m = core::to_blasint(lq, "rope scores", "q tokens");
  const blasint n = core::to_blasint(lk, "rope scores", "k tokens");
  const blasint kk = core::to_blasint(d, "rope scores", "head_dim");
  if (lq == 0 || lk == 0) return;
  std::vector<T> qr(q.begin(), q.end()), kr(k.begin(), k.end());
  // The rotations on the calling thread: they are 1/Lk of the gemm's work, and handing both cores from posenc's
  // workers to OpenBLAS's (each pool spins a while after its call) cost more than they save (L 4096, d 128:
  // 1.08x the plain sgemm with the pool, 1.04x without).
  const TableOptions one{.threads = 1, .streaming_stores = o.streaming_stores};
  if (plan.spec().xpos != RopeXpos::none) {  // xPos: q scaled as queries, k as keys, whatever the spec's side
    RopeSpec qs = plan.spec(), ks = plan.spec();
    qs.xpos = RopeXpos::query, ks.xpos = RopeXpos::key;
    RopePlan(qs).apply(dense_rope_tensor(std::span<T>(qr), lq, 1, d), qp, RopeDirection::forward, one);
    RopePlan(ks).apply(dense_rope_tensor(std::span<T>(kr), lk, 1, d), kp, RopeDirection::forward, one);
  } else {
    plan.apply(dense_rope_tensor(std::span<T>(qr), lq, 1, d), qp, RopeDirection::forward, one);
    plan.apply(dense_rope_tensor(std::span<T>(kr), lk, 1, d), kp, RopeDirection::forward, one);
  }
  core::gemm_nt(m, n, kk, qr.data(), kr.data(), out.data());
}

}  // namespace

std::size_t cache_values_per_position(const RopeSpec& s, RopeCacheForm f) {
  validate(s);
  return values_per_position(s, f);
}

RopePlan::RopePlan(const RopeSpec& spec) {
  validate(spec);
  impl_ = std::make_shared<const Impl>(spec);
}

const RopeSpec& RopePlan::spec() const noexcept { return impl_->spec; }

RopeDynamicState::RopeDynamicState(const RopeSpec& spec) : current_(spec) {
  validate(spec);
  if (spec.scaling != RopeScaling::dynamic)
    throw Error("rope dynamic state", "scaling", std::string(to_string(spec.scaling)), "dynamic",
                "is not dynamic NTK (the only stateful scaling)");
  current_.seq_len = 0;
  cached_ = spec.max_context;  // HF: max_seq_len_cached = original_max_seq_len = max_position_embeddings
}

const RopeSpec& RopeDynamicState::step(std::int64_t seq_len) {
  if (seq_len < 1 || seq_len > kRopeMaxContext)
    throw Error("rope dynamic state", "seq_len", std::to_string(seq_len), "an integer in [1, 2^40]",
                "is not the length max(position_ids) + 1 of a call");
  const std::int64_t original = current_.max_context, before = cached_;
  if (seq_len > before) {  // growth: inv_freq for this length
    current_.seq_len = seq_len;
    cached_ = seq_len;
  }
  if (seq_len < original && before > original) {  // reset (HF compares the cached length from before the call)
    current_.seq_len = 0;
    cached_ = original;
  }
  return current_;
}
std::span<const double> RopePlan::frequencies() const noexcept { return impl_->freqs; }
double RopePlan::attention_factor() const noexcept { return impl_->m; }
std::span<const double> RopePlan::interpolation() const noexcept { return impl_->weight; }
std::span<const std::uint8_t> RopePlan::pair_axes() const noexcept { return impl_->axis; }

void RopePlan::cache(RopeCacheForm f, std::span<const std::int64_t> p, std::span<float> out, const TableOptions& o) const {
  cache_impl(*impl_, f, p, out, o);
}
void RopePlan::cache(RopeCacheForm f, std::span<const std::int64_t> p, std::span<double> out, const TableOptions& o) const {
  cache_impl(*impl_, f, p, out, o);
}
void RopePlan::apply(std::span<const RopeTensor<float>> v, std::span<const std::int64_t> p, RopeDirection d,
                     const TableOptions& o) const {
  apply_impl(*impl_, v, p, d, o);
}
void RopePlan::apply(std::span<const RopeTensor<double>> v, std::span<const std::int64_t> p, RopeDirection d,
                     const TableOptions& o) const {
  apply_impl(*impl_, v, p, d, o);
}
void RopePlan::apply(std::span<const RopeTensor<bf16>> v, std::span<const std::int64_t> p, RopeDirection d,
                     const TableOptions& o) const {
  apply_impl(*impl_, v, p, d, o);
}
void RopePlan::apply(std::span<const RopeTensor<f16>> v, std::span<const std::int64_t> p, RopeDirection d,
                     const TableOptions& o) const {
  apply_impl(*impl_, v, p, d, o);
}
void RopePlan::shift(const RopeTensor<float>& x, std::int64_t delta, const TableOptions& o) const {
  shift_impl(*this, x, delta, o);
}
void RopePlan::shift(const RopeTensor<double>& x, std::int64_t delta, const TableOptions& o) const {
  shift_impl(*this, x, delta, o);
}

void RopePlan::scores(std::span<const float> q, std::span<const std::int64_t> qp, std::span<const float> k,
                      std::span<const std::int64_t> kp, std::span<float> out, const TableOptions& o) const {
  scores_impl(*this, q, qp, k, kp, out, o);
}
void RopePlan::scores(std::span<const double> q, std::span<const std::int64_t> qp, std::span<const double> k,
                      std::span<const std::int64_t> kp, std::span<double> out, const TableOptions& o) const {
  scores_impl(*this, q, qp, k, kp, out, o);
}

std::array<float, 2> rope_ggml_yarn_corr_dims(const RopeSpec& s) {
  validate(s);
  return ggml_corr_dims(s);
}

std::vector<double> rope_frequencies(const RopeSpec& s) {
  const RopePlan p(s);
  return {p.frequencies().begin(), p.frequencies().end()};
}
void rope_apply(const RopeSpec& s, const RopeTensor<float>& x, std::span<const std::int64_t> p, RopeDirection d,
                const TableOptions& o) {
  RopePlan(s).apply(x, p, d, o);
}
void rope_apply(const RopeSpec& s, const RopeTensor<double>& x, std::span<const std::int64_t> p, RopeDirection d,
                const TableOptions& o) {
  RopePlan(s).apply(x, p, d, o);
}

}  // namespace posenc
