#include "schemes/rope/check.hpp"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <cmath>
#include <sstream>

#include "posenc/error.hpp"
#include "posenc/reference/rope.hpp"
#include "posenc/spec_json.hpp"
#include "verify/parallel_cases.hpp"
#include "schemes/rope/budget.hpp"

namespace posenc::verify::rope {
namespace {

namespace rf = posenc::reference;
constexpr unsigned kCheckBits = 128;  // the reference's own error (2^-128) is far below any ulp checked

double ulp32(double x) {
  x = std::fabs(x);
  if (x < 0x1p-126) return 0x1p-149;
  int e = 0;
  std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

double ulp64(double x) {
  x = std::fabs(x);
  if (x < 0x1p-1022) return 0x1p-1074;
  int e = 0;
  std::frexp(x, &e);
  return std::ldexp(1.0, e - 53);
}

// The envelope row of a regime's cache entries and how its allowances read.
RopeRow cache_envelope_row(const RopeSpec& s) {
  return s.regime == RopeRegime::roformer ? RopeRow::check_roformer_envelope : RopeRow::check_envelope;
}
std::string emulated_name(const RopeSpec& s) {
  if (s.regime == RopeRegime::roformer) return "emulated (roformer: float64 table cast to float32, float32 rotation)";
  return std::string("emulated (") + std::string(to_string(s.regime)) + " float32 steps)";
}
const char* libm_type(const RopeSpec& s) { return s.regime == RopeRegime::roformer ? "float64" : "float32"; }

}  // namespace

// Relative allowance of the hf regime's float32 inv_freq'_k: a real pow A ulps off (relative <= A 2^-23: an ulp
// is at most 2^-23 of its value) and every later float32 step of the scaling allowed one flipped rounding
// (<= 2^-23 relative each), as the steps' inputs may differ; derivation per scaling in budget.cpp
// (rope.check.envelope). YaRN's ramp and Llama 3's smoothing are continuous at their band edges, so a pair that
// a real implementation puts in the neighbouring band moves by no more than the smoothing's own allowance.
double hf_frequency_allowance(const RopeSpec& s, double A) {
  const double u = 0x1p-23;
  switch (s.scaling) {
    case RopeScaling::none:
    case RopeScaling::ntk: return A * u + u;                        // pow, reciprocal
    case RopeScaling::linear: return A * u + 2 * u;                 // pow, reciprocal, / factor
    case RopeScaling::dynamic: return (A + 1) * u + A * u + 2 * u;  // base': pow + product; base'^e: pow, recip.
    case RopeScaling::yarn: return A * u + 5 * u;                   // pow; 1/pos, s*pos, 1/(.), 2 products, sum
    case RopeScaling::longrope: return A * u + 2 * u;               // pow; RN32(e_k) * pow, reciprocal
    case RopeScaling::llama3: {
      // inv (A + 1), / factor, the smoothed blend (2 products, a quotient, a sum), and the smoothing weight sm =
      // (L0 / wl - lf) / (hf - lf) with wl = (1/inv) 2 pi: wl relative (A + 3) u, L0 / wl (A + 5) u, so sm is off
      // by <= hf (A + 6) u / (hf - lf) + 2 u (sm <= 1), which moves inv' by inv |1 - 1/s| times that, and the
      // unscaled inv is at most s inv': relative to inv', (s - 1) times dsm.
      const double dsm = s.high_freq_factor * (A + 6) * u / (s.high_freq_factor - s.low_freq_factor) + 2 * u;
      return (A + 1) * u + 5 * u + (s.factor - 1) * dsm;
    }
  }
  return A * u + u;
}

namespace {
// The envelope of the entry before xPos' scale (the body of envelope()).
double envelope_unscaled(const RopeSpec& s, std::span<const double> f32, std::int64_t p, std::size_t k, double e,
                         const EnvelopeAllowance& a, double m32) {
  if (s.regime == RopeRegime::roformer) {
    // numpy's float64 pow and cos/sin A_pow, A_trig ulps of double off (row rope.check.roformer.envelope):
    // f32[k] = RN64(1 / w_k), so |a| = |p| f32[k] within 2^-52 relative.
    const double angle = std::fabs(static_cast<double>(p)) * f32[k] * (1 + 0x1p-50);
    const double da = angle * (a.pow_ulps + 1) * 0x1p-52 * (1 + 0x1p-20) + ulp64(angle * (1 + 0x1p-40));
    const double d = da + (a.trig_ulps + 1) * 0x1p-53;
    return d + ulp32(std::min(1.0, std::fabs(e) + d) * (1 + 0x1p-20));
  }
  const double p32 = static_cast<float>(p);
  double da = 0.0;
  // hf under yarn or longrope: e = RN32(c32 m32); the allowance is that of c32, scaled by m32, plus a flip of the product.
  const double e0 = std::fabs(e) / m32;
  if (s.regime == RopeRegime::hf) {
    const double inv = f32[k];
    // Relative, not in ulps of inv: A ulps of pow can be 2A ulps of the reciprocal (the binades' ulp ratios
    // differ).
    const double dinv = std::fabs(inv) * hf_frequency_allowance(s, a.pow_ulps) * (1 + 0x1p-20);
    const double angle = std::fabs(p32 * inv);
    da = std::fabs(p32) * dinv + ulp32(angle + std::fabs(p32) * dinv);
  } else if (s.regime == RopeRegime::ggml) {
    const double t = std::fabs(p32 * f32[k]);  // |t_k| up to the products' rounding (relative k 2^-24)
    const double tk = t * (1 + static_cast<double>(k) * 0x1p-23);
    da = tk * static_cast<double>(k) * (a.pow_ulps + 1) * 0x1p-23 * (1 + 0x1p-20) + ulp32(tk);
    if (s.scaling == RopeScaling::linear) da += ulp32(tk);  // freq_scale * t_k: one more rounding
    // YaRN's blend fs t (1 - mix) + t mix: three more roundings that a perturbed t_k may flip (the ramp and the
    // correction dims are the same float32 steps in a real ggml; a logf that moved floorf/ceilf of a correction
    // dim across an integer is not allowed for)
    if (s.scaling == RopeScaling::yarn) da += 3 * ulp32(tk);
  }
  const double E0 = da + (a.trig_ulps + 1) * ulp32(std::min(1.0, e0 + da));
  if (m32 == 1.0) return E0;
  // ggml's YaRN mscale 1 + 0.1 logf(1 / fs): a real logf up to pow_ulps off moves it by up to 0.1 |ln| pow_ulps
  // 2^-23 + one flipped rounding of each of its two steps: < (pow_ulps + 2) 2^-23 relative (m32 < 2).
  const double dm = s.regime == RopeRegime::ggml ? m32 * (a.pow_ulps + 2) * 0x1p-23 : 0.0;
  return m32 * E0 + dm * (e0 + E0) + ulp32(m32 * (e0 + E0));
}
}  // namespace

double envelope(const RopeSpec& s, std::span<const double> f32, std::int64_t p, std::size_t k, double e,
                const EnvelopeAllowance& a, double m32, double X) {
  const double E = envelope_unscaled(s, f32, p, k, e, a, m32);
  if (X == 1.0) return E;
  // xPos (hf): the entry is RN32(e X), X = RN32(pow(zeta32_k, e32)) (keys: RN32(1 / that)); zeta32 and e32 are
  // IEEE float32 steps every implementation performs alike. A real pow A_pow ulps off and a flipped reciprocal
  // put X within dX = X (A_pow + 1) 2^-23; the product's rounding may flip.
  const double dX = X * (a.pow_ulps + 1) * 0x1p-23 * (1 + 0x1p-20);
  return X * E + (std::fabs(e) + E) * dX + ulp32((std::fabs(e) + E) * (X + dX));
}

namespace {
// xPos scales are checked where they lie in [2^-100, 2^100] (the domain of the budget rows with a scale:
// rope.cache.exact.*.attention): |p - c| ln(3.5) / sb <= 100 ln 2 for every pair, i.e. |p - c| <= 55 sb.
void check_xpos_reach(const RopeSpec& s, std::int64_t p) {
  if (s.xpos == RopeXpos::none) return;
  const double reach = std::floor(55.0 * s.xpos_scale_base);
  const double d = std::fabs(static_cast<double>(p) - static_cast<double>(s.xpos_center));
  if (d > reach)
    throw Error("rope check", "positions", std::to_string(p),
                "|p - xpos_center| <= 55 xpos_scale_base = " + format_real(reach) +
                    " (xPos scales within [2^-100, 2^100], the domain the check's budget rows cover)");
}

// Position of pair k of token i in a position list of `tokens` tokens per axis row (1-D: row 0).
std::int64_t position_of(const RopeSpec& s, std::span<const std::int64_t> positions, std::size_t tokens, std::size_t i,
                         std::size_t k) {
  return positions[rf::rope_mrope_axis(s, k) * tokens + i];
}

// A cache stored as f16 / bf16 is the float32 cache cast once (HF: cos.to(x.dtype)): one more rounding, to the
// stored type, allowed a whole ulp of it (rope.check.envelope); f32 and f64 data hold the float32 entries as they are.
double stored_envelope(double E, const Real& e, DType stored) {
  if (stored != DType::f16 && stored != DType::bf16) return E;
  return E + ulp(std::fabs(static_cast<double>(e)) + E, stored);
}

// The spec without xPos (its unscaled emulated entries and envelope).
RopeSpec without_xpos(RopeSpec s) {
  s.xpos = RopeXpos::none, s.xpos_scale_base = 0.0, s.xpos_center = 0;
  return s;
}
}  // namespace

CheckReport check_cache(const RopeSpec& spec, const CacheInput& in, const EnvelopeAllowance& allowance, int threads) {
  validate(spec);
  const std::size_t axes = position_axes(spec);
  if (in.positions.size() % axes != 0)
    throw Error("rope check", "positions", std::to_string(in.positions.size()) + " positions",
                "a multiple of 3: rows t, h, w of one position per cache row each (--mrope " +
                    std::string(to_string(spec.mrope)) + ")");
  // n cache rows; M-RoPE: pair k of row i at the position of its axis (row t, h or w of the list)
  const std::size_t h = pair_count(spec), r = spec.rotary_dim, n = in.positions.size() / axes;
  const bool hf_form = in.form == RopeCacheForm::hf;
  const std::size_t want_cols = hf_form ? r : 2 * h, want_rows = hf_form ? 2 * n : n;
  const std::string where = "rope check";
  if (in.cols != want_cols)
    throw Error(where, "rotary_dim", std::to_string(r),
                "a cache whose last dimension is " + std::string(hf_form ? "rotary_dim" : "2 * (rotary_dim / 2)") +
                    " = " + std::to_string(want_cols) + " (the file has " + std::to_string(in.cols) + ")",
                "does not match the cache");
  if (in.rows != want_rows)
    throw Error(where, "positions", std::to_string(n) + " positions",
                std::string(hf_form ? "two blocks (cos, sin) of one row per position: " : "one row per position: ") +
                    std::to_string(in.rows) + " rows in the file",
                "does not match the cache");
  if (in.values.size() != in.rows * in.cols)
    throw Error(where, "values", std::to_string(in.values.size()), std::to_string(in.rows * in.cols));
  for (const std::int64_t p : in.positions) {
    check_position(spec, p, "positions");
    check_xpos_reach(spec, p);
  }
  if (!(allowance.pow_ulps >= 0 && allowance.pow_ulps <= 1e6 && allowance.trig_ulps >= 0 && allowance.trig_ulps <= 1e6))
    throw Error(where, "ulp allowance", std::to_string(allowance.pow_ulps) + ", " + std::to_string(allowance.trig_ulps),
                "reals in [0, 1e6]");

  RopeSpec exact_spec = spec;
  exact_spec.regime = RopeRegime::exact;
  const rf::RopeOracle exact(exact_spec, kCheckBits);
  const bool emu = spec.regime != RopeRegime::exact;
  const bool xpos = spec.xpos != RopeXpos::none;
  const rf::RopeOracle emulated(spec, kCheckBits);
  const rf::RopeOracle emulated_plain(without_xpos(spec), kCheckBits);  // xPos: the entry before its scale X
  const std::vector<double> f32 = emu ? rope_frequencies(spec) : std::vector<double>{};
  const BudgetRow& exact_row = budget(check_exact_row(in.stored));
  // An attention factor m (yarn, longrope): exact entries are m cos, held with S = M, the least power of two >= max(1, m),
  // as S = 1 holds |cos| <= 1 (rows rope.check.exact.*); hf entries RN32(c32 m32) (the envelope's m32).
  // xPos: m x_{p,k} in place of m, per entry (S = the least power of two >= max(1, m x)).
  const double m_exact = RopePlan(exact_spec).attention_factor(), m32 = attention32(spec);
  const BudgetRow& env_row = budget(cache_envelope_row(spec));
  const std::string emu_name = emulated_name(spec);

  CheckReport rep;
  rep.scheme = "rope";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  rep.input["form"] = std::string(to_string(in.form));
  rep.input["positions"] = {{"count", n}, {"first", n ? in.positions.front() : 0}, {"last", n ? in.positions[n - 1] : 0}};
  if (axes > 1) rep.input["positions"]["rows"] = "t, h, w (M-RoPE; first/last of the t row)";
  rep.references.emplace_back("exact", exact_row, in.stored, in.cols);
  if (emu) rep.references.emplace_back(emu_name, env_row, in.stored, in.cols);

  // (row, column) of the user's array holding cos or sin of pair k at position index i, and the column label.
  auto locate = [&](std::size_t i, std::size_t k, bool sin, std::size_t copy) -> std::pair<std::size_t, std::size_t> {
    switch (in.form) {
      case RopeCacheForm::pairs: return {i, (sin ? h : 0) + k};
      case RopeCacheForm::hf: return {(sin ? n : 0) + i, copy * h + k};
      case RopeCacheForm::gptj: return {i, (sin ? 0 : h) + k};
      case RopeCacheForm::ggml: return {i, 2 * k + (sin ? 1 : 0)};
    }
    return {i, k};
  };
  const std::size_t copies = hf_form ? 2 : 1;
  const int nt = threads > 0 ? std::min(threads, omp_get_num_procs()) : omp_get_max_threads();
  std::vector<std::vector<CheckAccumulator>> local(static_cast<std::size_t>(std::max(nt, 1)), rep.references);
  const auto count = static_cast<std::int64_t>(n);
  parallel_cases(nt, count, 4, [&](std::int64_t ii) {
    auto& acc = local[static_cast<std::size_t>(omp_get_thread_num())];
    const auto i = static_cast<std::size_t>(ii);
    for (std::size_t k = 0; k < h; ++k) {
      const std::int64_t p = position_of(spec, in.positions, n, i, k);
      const double S = attention_scale(xpos ? m_exact * static_cast<double>(exact.xpos_scale(p, k)) : m_exact);
      const double X = xpos && emu ? static_cast<double>(emulated.xpos_scale(p, k)) : 1.0;
      for (bool sin : {false, true}) {
        const Real ex = sin ? exact.sin(p, k) : exact.cos(p, k);
        const Real em = emu ? (sin ? emulated.sin(p, k) : emulated.cos(p, k)) : Real();
        // the emulated entry before xPos' scale (the envelope's e)
        const double e = !emu ? 0.0 : xpos ? static_cast<double>(sin ? emulated_plain.sin(p, k) : emulated_plain.cos(p, k))
                                           : static_cast<double>(em);
        for (std::size_t c = 0; c < copies; ++c) {
          const auto [row, col] = locate(i, k, sin, c);
          const double y = in.values[row * in.cols + col];
          acc[0].add(p, col, y, ex, S);
          if (emu) acc[1].add(p, col, y, em, stored_envelope(envelope(spec, f32, p, k, e, allowance, m32, X), em, in.stored));
        }
      }
    }
  });
  rep.merge_threads(local);
  std::ostringstream o;
  if (emu) {
    rep.held_to = 1;
    o << "The spec's regime is " << to_string(spec.regime)
      << ": every entry must lie within the emulation envelope of posenc's correctly rounded emulation of those "
      << (spec.regime == RopeRegime::roformer ? "float64 steps and the float32 cast" : "float32 steps")
      << ", allowing a " << libm_type(spec) << " pow within " << allowance.pow_ulps << " ulp and cos/sin within "
      << allowance.trig_ulps
      << " ulp of correctly rounded. The exact column shows how far the cache is from the mathematics (it grows "
         "with position: the "
      << (spec.regime == RopeRegime::roformer ? "float64" : "float32") << " angle).";
  } else {
    rep.held_to = 0;
    o << "The spec's regime is exact: every entry must be within the budget row's bound of the real cos/sin "
         "(err_S with S = 1, in ulps of the input's type).";
  }
  rep.note = o.str();
  return rep;
}

double attention32(const RopeSpec& s) {
  return s.regime == RopeRegime::hf ? static_cast<double>(static_cast<float>(RopePlan(s).attention_factor())) : 1.0;
}

double rotated_envelope(const RopeSpec& s, std::span<const double> f32, std::int64_t p, std::size_t k, double ce,
                        double se, double xa, double xb, DType stored, const EnvelopeAllowance& a, double m32,
                        double X) {
  // The type whose roundings are allowed: the data's own for 16-bit data, float32 for f32 and f64 data.
  const DType t = (stored == DType::f16 || stored == DType::bf16) ? stored : DType::f32;
  // Derivation: budget row rope.check.rotated.envelope. A rounding moves a value by <= 0.5 ulp of its result; a
  // result may lie one binade above the magnitude bound used here, so each rounding is allowed a whole ulp.
  // xPos: ce, se before the scale X; the entries are RN32(ce X), RN32(se X), within (1 + 2^-23) of ce X, se X.
  const double Ec = envelope(s, f32, p, k, ce, a, m32, X), Es = envelope(s, f32, p, k, se, a, m32, X);
  const double g = X == 1.0 ? 1.0 : X * (1 + 0x1p-23);
  const double cmax = std::max(1.0, m32) * g;  // |c|, |s| <= m32 under an attention factor, times X under xPos
  const double A = std::fabs(xa) * (cmax + Ec), B = std::fabs(xb) * (cmax + Es);  // bounds of |x_a c|, |x_b s|
  return std::fabs(xa) * (Ec + ulp(std::fabs(ce) * g + Ec, t)) + std::fabs(xb) * (Es + ulp(std::fabs(se) * g + Es, t)) +
         2 * ulp(A, t) + 2 * ulp(B, t) + 2 * ulp(A + B, t);
}

CheckReport check_rotated(const RopeSpec& spec, const RotatedInput& in, const EnvelopeAllowance& allowance,
                          int threads) {
  validate(spec);
  const std::size_t d = spec.head_dim, h = pair_count(spec), r = spec.rotary_dim, axes = position_axes(spec);
  const std::size_t vectors = in.tokens * in.heads;
  const std::string where = "rope check";
  if (in.x.size() != vectors * d)
    throw Error(where, "x", std::to_string(in.x.size()) + " values",
                "tokens * heads * head_dim = " + std::to_string(vectors * d), "does not match the spec");
  if (in.y.size() != in.x.size())
    throw Error(where, "y", std::to_string(in.y.size()) + " values", "as many as x, " + std::to_string(in.x.size()),
                "does not match x");
  if (in.positions.size() != axes * in.tokens)
    throw Error(where, "positions", std::to_string(in.positions.size()) + " positions",
                axes == 1 ? "one per token, " + std::to_string(in.tokens)
                          : "three rows (t, h, w) of one per token, 3 x " + std::to_string(in.tokens),
                "does not match x");
  for (const std::int64_t p : in.positions) {
    check_position(spec, p, "positions");
    check_xpos_reach(spec, p);
  }
  for (const double v : in.x)
    if (!std::isfinite(v)) throw Error(where, "x", "a non-finite value", "finite values", "holds");
  if (!(allowance.pow_ulps >= 0 && allowance.pow_ulps <= 1e6 && allowance.trig_ulps >= 0 && allowance.trig_ulps <= 1e6))
    throw Error(where, "ulp allowance", std::to_string(allowance.pow_ulps) + ", " + std::to_string(allowance.trig_ulps),
                "reals in [0, 1e6]");
  const bool emu = spec.regime != RopeRegime::exact;
  if (emu)
    for (const double v : in.x)
      if (static_cast<double>(static_cast<float>(v)) != v)
        throw Error(where, "x", "a value that is not a float32 number (" + std::to_string(v) + ")",
                    "float32 numbers: the " + std::string(to_string(spec.regime)) +
                        " regime rotates float32 data (round x to float32 as the implementation does, or check "
                        "against the exact regime)",
                    "holds");

  RopeSpec exact_spec = spec;
  exact_spec.regime = RopeRegime::exact;
  const rf::RopeOracle exact(exact_spec, kCheckBits);
  // Under an attention factor the exact rotation is m R(p) (scale S' = m S) and hf's cos/sin carry m32.
  const double m_exact = RopePlan(exact_spec).attention_factor(), m32 = attention32(spec);
  const rf::RopeOracle emulated(spec, kCheckBits);
  const rf::RopeOracle emulated_plain(without_xpos(spec), kCheckBits);  // xPos: cos/sin before the scale X
  const bool xpos = spec.xpos != RopeXpos::none;
  const std::vector<double> f32 = emu ? rope_frequencies(spec) : std::vector<double>{};
  const std::string emu_name = emulated_name(spec);

  CheckReport rep;
  rep.scheme = "rope";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  rep.input["what"] = std::string("rotated tensor, ") + (in.inverse ? "R(-p) x" : "R(p) x");
  rep.input["positions"] = {{"count", in.tokens},
                            {"first", in.tokens ? in.positions.front() : 0},
                            {"last", in.tokens ? in.positions[in.tokens - 1] : 0}};
  if (axes > 1) rep.input["positions"]["rows"] = "t, h, w (M-RoPE; first/last of the t row)";
  rep.references.emplace_back("exact", budget(check_rotated_exact_row(in.stored)), in.stored, d);
  if (emu) rep.references.emplace_back(emu_name, budget(RopeRow::check_rotated_envelope), in.stored, d);

  const int nt = threads > 0 ? std::min(threads, omp_get_num_procs()) : omp_get_max_threads();
  std::vector<std::vector<CheckAccumulator>> local(static_cast<std::size_t>(std::max(nt, 1)), rep.references);
  const auto count = static_cast<std::int64_t>(vectors);
  parallel_cases(nt, count, 4, [&](std::int64_t vi) {
    auto& acc = local[static_cast<std::size_t>(omp_get_thread_num())];
    const auto v = static_cast<std::size_t>(vi), tok = v / in.heads;
    const std::span<const double> x = in.x.subspan(v * d, d), y = in.y.subspan(v * d, d);
    // M-RoPE: the token's (t, h, w); pair k rotates by the position of its axis
    rf::RopeMropePosition pos{};
    for (std::size_t ax = 0; ax < axes; ++ax) pos[ax] = in.positions[ax * in.tokens + tok];
    const std::int64_t p0 = pos[0];
    const std::vector<Real> ex = axes > 1 ? exact.exact_rotate_mrope(pos, x, in.inverse) : exact.rotate(p0, x, in.inverse);
    const std::vector<Real> em = !emu ? std::vector<Real>{}
                                 : axes > 1 ? emulated.rotate_mrope(pos, x, in.inverse) : emulated.rotate(p0, x, in.inverse);
    for (std::size_t k = 0; k < h; ++k) {
      const std::size_t a = first_channel(spec, k), b = second_channel(spec, k);
      const std::int64_t p = pos[rf::rope_mrope_axis(spec, k)];
      // S = |x_a| + |x_b|; a pair of zeros must rotate to zeros: the least positive scale makes any other value
      // an error of astronomically many units, and zeros an error of 0 (a zero scale is no metric)
      const double S = std::max(std::fabs(x[a]) + std::fabs(x[b]), std::numeric_limits<double>::denorm_min());
      // xPos: the pair's scale x_{p,k} (exact) and X (the emulated float32 one); cos/sin before it
      const double xs = xpos ? static_cast<double>(exact.xpos_scale(p, k)) : 1.0;
      const double X = xpos && emu ? static_cast<double>(emulated.xpos_scale(p, k)) : 1.0;
      // y_a = x_a c -+ x_b s and y_b = x_b c +- x_a s: the same terms, so one envelope for both.
      const double env = emu ? rotated_envelope(spec, f32, p, k, static_cast<double>(emulated_plain.cos(p, k)),
                                                static_cast<double>(emulated_plain.sin(p, k)), x[a], x[b], in.stored,
                                                allowance, m32, X)
                             : 0.0;
      for (const std::size_t c : {a, b}) {
        acc[0].add(p, c, y[c], ex[c], m_exact * xs * S);
        if (emu) acc[1].add(p, c, y[c], em[c], env);
      }
    }
    for (std::size_t c = r; c < d; ++c) {  // pass-through channels
      acc[0].add(p0, c, y[c], ex[c], std::max(std::fabs(x[c]), std::numeric_limits<double>::denorm_min()));
      if (emu) acc[1].add(p0, c, y[c], em[c], 0.0);  // E = 0: bit for bit
    }
  });
  rep.merge_threads(local);
  std::ostringstream o;
  if (emu) {
    rep.held_to = 1;
    o << "The spec's regime is " << to_string(spec.regime)
      << ": every channel must lie within the envelope of posenc's correctly rounded emulation of those float32 "
         "rotation steps (x_a c -+ x_b s), allowing cos/sin within the cache envelope (a "
      << libm_type(spec) << " pow within " << allowance.pow_ulps << " ulp, cos/sin within " << allowance.trig_ulps
      << " ulp of correctly rounded) and every product and sum rounded in the data's type; channels >= rotary_dim "
         "must be x's, bit for bit. The exact column shows how far the tensor is from the mathematics.";
  } else {
    rep.held_to = 0;
    o << "The spec's regime is exact: every channel must be within the budget row's bound of the exact rotation "
         "(err_S with S = |x_a| + |x_b| of its pair, in ulps of the data's type: what a rotation in that type with "
         "libm-grade cos/sin achieves).";
  }
  rep.note = o.str();
  return rep;
}

// ---- identify -----------------------------------------------------------------------------------------------

namespace {

using Candidate = IdentifyCandidate<RopeSpec, RopeCacheForm>;

std::vector<RopeCacheForm> forms_of(const std::vector<std::size_t>& shape) {
  if (shape.size() == 3 && shape[0] == 2 && shape[2] >= 2 && shape[2] % 2 == 0) return {RopeCacheForm::hf};
  if (shape.size() == 2 && shape[1] >= 2 && shape[1] % 2 == 0)
    return {RopeCacheForm::pairs, RopeCacheForm::gptj, RopeCacheForm::ggml};
  return {};
}

// cos and sin of pair k in position row i of a cache in `form` (n position rows, h pairs, values as stored).
std::pair<double, double> cos_sin(std::span<const double> v, RopeCacheForm form, std::size_t n, std::size_t h,
                                  std::size_t i, std::size_t k) {
  switch (form) {
    case RopeCacheForm::pairs: return {v[i * 2 * h + k], v[i * 2 * h + h + k]};
    case RopeCacheForm::hf: return {v[i * 2 * h + k], v[(n + i) * 2 * h + k]};
    case RopeCacheForm::gptj: return {v[i * 2 * h + h + k], v[i * 2 * h + k]};
    case RopeCacheForm::ggml: return {v[i * 2 * h + 2 * k], v[i * 2 * h + 2 * k + 1]};
  }
  return {0.0, 0.0};
}

// What the cache shows of its frequencies: the turn of each pair between two position rows d apart (the closest
// pair of positions, d <= 4, so that no pair turns by pi), theta'_k = arg(e^{i a_k(p + d)} e^{-i a_k(p)}) / d (an
// attention factor scales cos and sin alike and drops out). The high-frequency quarter of the pairs (which llama3 and
// yarn keep) fits ln theta'_k = -ln s - (2k/r) ln base by least squares: the base and a linear factor s; `slow` is
// theta'_k / (base^(-2k/r) / s) of the lowest frequency (< 1 where low frequencies are scaled).
struct Fit {
  bool ok = false;
  double base = 0, linear = 1, slow = 1;
};

Fit fit_frequencies(const IdentifyInput& in, RopeCacheForm form, std::size_t n, std::size_t h) {
  Fit f;
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return in.positions[a] < in.positions[b]; });
  std::size_t i0 = n, i1 = n;
  for (std::size_t t = 0; t + 1 < n; ++t) {
    const std::int64_t d = in.positions[order[t + 1]] - in.positions[order[t]];
    if (d > 0 && d <= 4 && (i0 == n || d < in.positions[i1] - in.positions[i0])) i0 = order[t], i1 = order[t + 1];
  }
  if (i0 == n || h < 2) return f;
  const double d = static_cast<double>(in.positions[i1] - in.positions[i0]), r = 2.0 * static_cast<double>(h);
  std::vector<double> theta(h);
  for (std::size_t k = 0; k < h; ++k) {
    const auto [c0, s0] = cos_sin(in.values, form, n, h, i0, k);
    const auto [c1, s1] = cos_sin(in.values, form, n, h, i1, k);
    theta[k] = std::atan2(s1 * c0 - c1 * s0, c1 * c0 + s1 * s0) / d;
    if (!(theta[k] > 0)) return f;
  }
  const std::size_t m = std::max<std::size_t>(2, h / 4);
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const double x = 2.0 * static_cast<double>(k) / r, y = std::log(theta[k]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double md = static_cast<double>(m), slope = (md * sxy - sx * sy) / (md * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / md;
  f.base = std::exp(-slope);
  f.linear = std::exp(-intercept);
  f.slow = theta[h - 1] / (std::pow(f.base, -2.0 * static_cast<double>(h - 1) / r) / f.linear);
  f.ok = std::isfinite(f.base) && f.base > 1 && std::isfinite(f.linear) && f.linear > 0;
  return f;
}

// x rounded to `digits` significant digits.
double round_to_digits(double x, int digits) {
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(x)))));
  return std::round(x * scale) / scale;
}

// The scalings a fit suggests: none, linear (its factor), and, where low frequencies turn slower, llama3 and yarn
// with that factor and the common original contexts.
std::vector<RopeSpec> scalings(const RopeSpec& base_spec, const Fit& f) {
  std::vector<RopeSpec> out{base_spec};
  if (!f.ok) return out;
  if (std::fabs(f.linear - 1) > 1e-3) {
    RopeSpec s = base_spec;
    s.scaling = RopeScaling::linear, s.factor = round_to_digits(f.linear, 4);
    out.push_back(s);
  }
  if (f.slow < 0.95) {
    const double factor = std::max(1.0, std::round(1.0 / f.slow));
    for (std::int64_t l0 : {2048, 4096, 8192, 32768}) {
      RopeSpec s = base_spec;
      s.scaling = RopeScaling::llama3, s.factor = factor, s.original_context = l0;
      out.push_back(s);
      RopeSpec y = base_spec;
      y.scaling = RopeScaling::yarn, y.factor = factor, y.original_context = l0;
      out.push_back(y);
    }
  }
  return out;
}

std::vector<Candidate> candidates(const IdentifyInput& in, std::size_t n, std::size_t r) {
  std::vector<Candidate> cands;
  const auto [lo, hi] = std::minmax_element(in.positions.begin(), in.positions.end());
  for (RopeCacheForm form : forms_of(in.shape)) {
    const Fit fit = fit_frequencies(in, form, n, r / 2);
    for (const auto& preset : SpecTraits<RopeSpec>::presets()) {
      RopeSpec p = preset.spec;
      if (p.rotary_dim != r) p.head_dim = p.rotary_dim = r;
      std::vector<double> bases{p.base};
      if (fit.ok) bases.insert(bases.end(), {std::round(fit.base), round_to_digits(fit.base, 3)});
      for (RopeRegime regime : {RopeRegime::exact, RopeRegime::hf, RopeRegime::ggml, RopeRegime::roformer})
        for (double b : bases) {
          RopeSpec s = p;
          s.regime = regime, s.base = b;
          for (const RopeSpec& t : scalings(s, fit)) {
            if (!is_valid(t)) continue;
            try {  // the position range is a span: its ends bound every position
              check_position(t, *lo);
              check_position(t, *hi);
            } catch (const Error&) {
              continue;
            }
            add_candidate(cands, Candidate{t, form, std::string(preset.name),
                                           field_differences(preset.spec, t, {"head_dim", "rotary_dim", "regime"}), 0,
                                           false, {}});
          }
        }
    }
  }
  return cands;
}

}  // namespace

std::size_t identify_position_rows(const std::vector<std::size_t>& shape) {
  const auto forms = forms_of(shape);
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  text += shape.size() == 1 ? ",)" : ")";
  if (forms.empty())
    throw Error("rope identify", "cache", text,
                "(2, positions, rotary_dim): the hf form, or (positions, 2 * pairs): pairs, gptj or ggml (an even "
                "last dimension >= 2)");
  return forms.front() == RopeCacheForm::hf ? shape[1] : shape[0];
}

Identification identify_cache(const IdentifyInput& in, std::size_t sample_rows) {
  const std::size_t n = identify_position_rows(in.shape), r = in.shape.back(), cols = in.shape.back();
  if (n == 0 || in.positions.size() != n)
    throw Error("rope identify", "positions", std::to_string(in.positions.size()) + " positions",
                "one per position row: " + std::to_string(n) + " (at least one)");
  // Sampled position rows: the first ones and some spread over the cache; their values in each form's arrangement.
  const std::vector<std::size_t> rows = identify_sample_rows(n, sample_rows);
  std::vector<std::int64_t> pos;
  for (std::size_t i : rows) pos.push_back(in.positions[i]);
  const bool hf = forms_of(in.shape).front() == RopeCacheForm::hf;
  std::vector<double> vals;
  for (std::size_t block = 0; block < (hf ? 2u : 1u); ++block)
    for (std::size_t i : rows) {
      const auto at = in.values.begin() + static_cast<std::ptrdiff_t>((block * n + i) * cols);
      vals.insert(vals.end(), at, at + static_cast<std::ptrdiff_t>(cols));
    }
  auto distance = [&](const Candidate& c) {
    std::vector<double> mine(vals.size());
    make_plan(c.spec).cache(c.extra, pos, std::span<double>(mine), TableOptions{.threads = 1});
    return max_scaled_difference(vals, mine, in.stored);
  };
  auto check = [&](const Candidate& c) {
    return check_cache(c.spec, CacheInput{vals, vals.size() / cols, cols, in.stored, c.extra, pos, {}});
  };
  Identification id =
      rank_and_verify<RopeSpec, RopeCacheForm>("rope", "cache", candidates(in, n, r), distance, check);
  id.extra_json = [](const RopeCacheForm& form) { return nlohmann::ordered_json{{"form", std::string(to_string(form))}}; };
  return id;
}

}  // namespace posenc::verify::rope
