// posenc/rope_spec.hpp — the one description of rotary position embedding (RoPE, Su et al. 2021).
//
// A RopeSpec fully determines the frequencies, the cos/sin values and the rotation applied to a head vector:
// the fast path (lib/), the MPFR oracle (reference/), the command-line tool and the reports all consume this
// struct and nothing else. It holds data only; each consumer transcribes the definition below itself.
//
// Definition (exact regime, CONVENTIONS.md §2.10). With r = rotary_dim (even, <= head_dim), h = r/2 pairs,
//   theta_k = base^(-2k/r),  k = 0..h-1,           angle a_{p,k} = p * theta_k
//   Layout::halves      (GPT-NeoX, HF Llama rotate_half, ggml NEOX): pair k = channels (k, k + h)
//   Layout::interleaved (GPT-J, RoFormer, Meta Llama complex view, ggml NORMAL): pair k = channels (2k, 2k+1)
//   for pair (i, j):  y_i = x_i cos a - x_j sin a,   y_j = x_j cos a + x_i sin a        (R(p) x)
//   channels r..head_dim-1 pass through unchanged (partial rotary: GPT-J rotary_dim, NeoX rotary_pct,
//   HF partial_rotary_factor). The inverse rotation is R(-p) = R(p)^T.
// Emulated regimes: the float32 steps of the named implementation, each correctly rounded (RN32 = round to
// nearest-even binary32). Whatever the regime, the result of an emulated step is a float32 number.
//   RopeRegime::hf   (HF Llama/GPT-NeoX/GPT-J, Meta Llama; modeling_llama.py LlamaRotaryEmbedding):
//     inv_k = RN32(1 / RN32(pow(RN32(base), RN32(RN32(2k) / RN32(r)))));  a = RN32(RN32(p) * inv_k);
//     c = RN32(cos a), s = RN32(sin a);  y_i = RN32(RN32(x_i c) - RN32(x_j s)), y_j = RN32(RN32(x_j c) + RN32(x_i s)).
//   RopeRegime::ggml (ggml-cpu ops.cpp rope_f32, rope_yarn with ext_factor 0, freq_scale 1, attn_factor 1):
//     scale = RN32(pow(RN32(base), RN32(-2 / RN32(r))));  t_0 = RN32(p), t_{k+1} = RN32(t_k * scale);
//     c = RN32(cos t_k), s = RN32(sin t_k);  the rotation as in hf.
//   RopeRegime::roformer (HF RoFormer; roformer/modeling_roformer.py, huggingface/transformers@0166003b4b47 and
//     @189e82c53b3f: RoFormerSinusoidalPositionalEmbedding.create_weight / _init_weight builds the table in float64
//     numpy, `pos / np.power(10000, 2 * (j // 2) / dim)`, np.sin / np.cos of it, then torch.FloatTensor casts it to
//     float32; RoFormerSelfAttention.apply_rotary_position_embeddings rotates in eager float32 PyTorch,
//     `q * cos_pos + rotate_every_two(q) * sin_pos` with rotate_every_two(q) = [-q1, q0, -q3, q2, ...]):
//     w_k = RN64(pow(RN64(base), RN64(2k / r)));  a = RN64(p / w_k)   (Python ints and float64 numpy; dim = r);
//     c = RN32(RN64(cos a)), s = RN32(RN64(sin a))   (the float64 value, then the float32 cast: two roundings);
//     y_i = RN32(RN32(x_i c) + RN32(-x_j s)) = RN32(RN32(x_i c) - RN32(x_j s)), y_j = RN32(RN32(x_j c) + RN32(x_i s))
//     (each product and the sum its own eager PyTorch kernel: no FMA), the hf rotation on this table. Interleaved
//     pairs, full rotary and base 10000 are RoFormer's (preset roformer); the regime takes any layout, rotary_dim
//     and base, and no scaling, M-RoPE or xPos (RoFormer has none). Its real numpy pow / sin / cos are float64 libm
//     calls within a few ulp of double, so the float32 table differs from this emulation only where a value lies
//     that close to a float32 rounding boundary: the envelope row rope.check.roformer.envelope.
// Context extension (RopeSpec::scaling; CONVENTIONS.md §2.11, HF modeling_rope_utils). theta'_k replaces theta_k,
// and cos, sin are multiplied by the attention factor m (1 unless yarn or longrope). Exact regime, in real arithmetic:
//   linear   theta'_k = theta_k / s                                    (s = factor; = positions divided by s)
//   ntk      theta'_k = base'^(-2k/r), base' = base s^(r/(r-2))
//   dynamic  as ntk with a = s L / max_context - (s - 1) in place of s, L = seq_len, when L > max_context;
//            otherwise theta_k (HF at init, or a length within the original context)
//   yarn     cd(beta) = r ln(L0 / (2 pi beta)) / (2 ln base); low = max(floor(cd(beta_fast)), 0),
//            high = min(ceil(cd(beta_slow)), r - 1) (no floor/ceil when truncate is false; high += 0.001 when
//            equal); ramp_k = clamp((k - low) / (high - low), 0, 1);
//            theta'_k = theta_k / s * ramp_k + theta_k * (1 - ramp_k);
//            m = attention_factor if given, else g(s, mscale) / g(s, mscale_all_dim) if both given, else g(s, 1),
//            g(s, x) = 0.1 x ln s + 1 (1 for s <= 1)
//   llama3   wl_k = 2 pi / theta_k; wl_k < L0 / high_freq_factor: theta_k; wl_k > L0 / low_freq_factor:
//            theta_k / s; otherwise (edges included) sm = (L0 / wl_k - low_freq_factor) / (high_freq_factor -
//            low_freq_factor), theta'_k = (1 - sm) theta_k / s + sm theta_k
//   longrope theta'_k = theta_k / e_k with e = long_factor when seq_len > L0, else short_factor (the values as
//            given); m = attention_factor if given, else 1 for s <= 1, else sqrt(1 + ln s / ln L0)
//   (L0 = original_context; channels >= rotary_dim pass through unscaled: m multiplies cos and sin only.)
// hf regime: the same formulas as HF's float32 tensor steps (schemes/rope/fast.cpp lists them: Python scalars are
//   doubles rounded to float32 where they meet a tensor, `x / t` is t.reciprocal() * x; dynamic is the module's
//   forward, where L is an int64 tensor, the new base a float32 one, and its power r/(r-2) a double pow rounded to
//   float32; longrope: inv_k = RN32(1 / RN32(RN32(e_k) RN32(pow(RN32(base), RN32(RN32(2k) / RN32(r)))))), m a
//   Python double from math.sqrt and math.log), cos and sin multiplied by RN32(m).
// ggml regime (ggml-cpu rope_f32 / rope_yarn, llama.cpp freq_scale fs = RN32(1 / RN32(s))):
//   linear  angle RN32(fs t_k) (rope_yarn with ext_factor 0)
//   yarn    llama.cpp's YaRN (ext_factor 1, attn_factor 1; ggml@084bfe1 ops.cpp rope_yarn, ggml.c
//           ggml_rope_yarn_corr_dims): every step a float32 operation, correctly rounded, logf too:
//           cd(beta) = r logf(RN32(L0) / (RN32(2 RN32(beta)) (float)pi)) / (2 logf(RN32(base))), left to right;
//           low = MAX(0, floorf(cd(beta_fast))), high = MIN(r - 1, ceilf(cd(beta_slow))) (C macros: NaN passes);
//           per pair y = (k - low) / MAX(0.001f, high - low) (as written, also for high < low), mix = 1 - MIN(1,
//           MAX(0, y)); angle RN32(RN32(RN32(fs t_k) RN32(1 - mix)) + RN32(t_k mix)); cos and sin times mscale =
//           1 + 0.1f logf(1 / fs). truncate must be true, and mscale, mscale_all_dim, attention_factor keep their
//           defaults (llama.cpp passes attn_factor 1 for plain YaRN models; newer llama.cpp's attn_factor
//           RN32(d RN32(1/d)), one ulp below 1 for some factors, is not modelled). Factor 1 is not a no-op here:
//           blended pairs still round.
// Multimodal RoPE (RopeSpec::mrope; CONVENTIONS.md §2.16): every token has three positions (t, h, w) and pair k
// rotates by the position of its axis a(k), with sections (s_t, s_h, s_w) = mrope_section summing to r/2:
//   sections     (Qwen2-VL / Qwen2.5-VL apply_multimodal_rotary_pos_emb; ggml GGML_ROPE_TYPE_MROPE):
//                a(k) = t for k < s_t, h for s_t <= k < s_t + s_h, else w
//   interleaved  (Qwen3-VL apply_interleaved_mrope, huggingface/transformers@00709b862bb8): a(k) = h if
//                k mod 3 = 1 and k < 3 s_h; w if k mod 3 = 2 and k < 3 s_w; else t. ggml's IMROPE
//                (llama.cpp@0049e3cb202d ggml_mrope_cache_init) gives a pair beyond its residue class' limit a
//                4th position (0 for text tokens) instead of t: for Qwen3-VL's [24, 20, 20], pairs 61 and 62 —
//                not modelled (posenc follows HF)
//   With t = h = w every pair takes the same position: 1-D RoPE.
// xPos (RopeSpec::xpos; CONVENTIONS.md §2.12, Sun et al. 2022, torchscale XPOS): cos and sin of pair k at position p
// are multiplied by the decay scale  x_{p,k} = zeta_k^(+-(p - c) / scale_base),  zeta_k = (2k + 0.4 r) / (1.4 r),
// c = xpos_center, + for queries (xpos query), - for keys (xpos key: torchscale downscale=True). So
// <q'_m, k'_n> carries zeta_k^((m - n) / scale_base) on pair k: a decay with distance. torchscale centres a call of
// L new tokens after `offset` cached ones at c = ceil((L + offset) / 2) (min_pos = -(L + offset) // 2) and takes the
// angle's positions from 0; queries and keys of one call share c. Positions are limited to |p - c| <= 553
// scale_base (zeta_0 = 2/7: the scale stays below 2^1000, finite in double).
//   exact: x_{p,k} cos, rounded once (as the attention factor m: budget rows rope.*.attention, S = the least power
//   of two >= the scale). hf regime: torchscale's float32 steps (its angles are HF's): zeta32_k = RN32(RN32(RN32(2k) +
//   RN32(0.4 r)) / RN32(1.4 r)), e = RN32(RN32(p - c) / RN32(scale_base)), x = RN32(pow(zeta32_k, e)) (keys:
//   RN32(1 / x)), entries RN32(c32 x), RN32(s32 x). ggml has no xPos. Frequencies, scaling, layout and regime are
//   those of the spec (HF computes cos/sin per axis with the same inv_freq, then selects per pair).
// Every emulated regime is bit for bit against correctly rounded steps (DESIGN.md §2). Real libm/torch/numpy pow,
// sin and cos are not correctly rounded, and compilers may contract a*b - c*d into an FMA: the envelope a real
// implementation falls in is stated per quantity in the budget table (schemes/rope/budget.hpp), and `posenc check
// rope` uses it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "posenc/describe.hpp"
#include "posenc/vocabulary.hpp"

namespace posenc {

enum class RopeRegime { exact, hf, ggml, roformer };

// Context-extension scalings (CONVENTIONS.md §2.11; HF modeling_rope_utils ROPE_INIT_FUNCTIONS). Each changes the
// frequencies theta_k -> theta'_k and may multiply cos and sin by an attention factor m (so scores scale by m^2).
enum class RopeScaling { none, linear, ntk, dynamic, yarn, llama3, longrope };

// Multimodal RoPE: how pairs take one of three positions (t, h, w) per token.
enum class RopeMrope { none, sections, interleaved };

// xPos: the decay scale of queries (zeta^(+e)) or keys (zeta^(-e)), or none.
enum class RopeXpos { none, query, key };

template <>
struct EnumTraits<RopeRegime> {
  static constexpr std::array<EnumValue<RopeRegime>, 4> values{{
      {RopeRegime::exact, "exact", "the mathematics: every output rounded once"},
      {RopeRegime::hf, "hf", "HF/PyTorch float32 steps: inv_freq = 1/base^(2k/r), angle = p * inv_freq"},
      {RopeRegime::ggml, "ggml", "ggml float32 steps: theta_k by repeated multiplication with base^(-2/r)"},
      {RopeRegime::roformer, "roformer",
       "HF RoFormer: the float64 numpy table p / base^(2k/r), sin/cos cast to float32, then float32 products and sum"},
  }};
};

template <>
struct EnumTraits<RopeMrope> {
  static constexpr std::array<EnumValue<RopeMrope>, 3> values{{
      {RopeMrope::none, "none", "one position per token"},
      {RopeMrope::sections, "sections",
       "three positions (t, h, w) per token; pairs in consecutive sections mrope_section (Qwen2-VL, ggml MROPE)"},
      {RopeMrope::interleaved, "interleaved",
       "three positions (t, h, w) per token; pairs take h, w, t interleaved by k mod 3 (Qwen3-VL)"},
  }};
};

template <>
struct EnumTraits<RopeXpos> {
  static constexpr std::array<EnumValue<RopeXpos>, 3> values{{
      {RopeXpos::none, "none", "no decay scale"},
      {RopeXpos::query, "query", "xPos queries: cos and sin times zeta_k^((p - c) / scale_base)"},
      {RopeXpos::key, "key", "xPos keys: cos and sin times zeta_k^(-(p - c) / scale_base) (torchscale downscale)"},
  }};
};

template <>
struct EnumTraits<RopeScaling> {
  static constexpr std::array<EnumValue<RopeScaling>, 7> values{{
      {RopeScaling::none, "none", "theta_k = base^(-2k/r), attention factor 1"},
      {RopeScaling::linear, "linear", "position interpolation: theta_k / factor (HF rope_type linear)"},
      {RopeScaling::ntk, "ntk", "NTK-aware static: base' = base * factor^(r/(r-2)) (not an HF rope_type)"},
      {RopeScaling::dynamic, "dynamic",
       "dynamic NTK at the current length L = seq_len: base' = base * (factor L/max_context - (factor-1))^(r/(r-2)) "
       "when L > max_context (HF rope_type dynamic)"},
      {RopeScaling::yarn, "yarn",
       "YaRN: theta_k/factor blended with theta_k by a ramp over the pair index, attention factor "
       "0.1 ln(factor) + 1 (HF rope_type yarn)"},
      {RopeScaling::llama3, "llama3",
       "Llama 3.1: wavelengths above original_context/low_freq_factor divided by factor, below "
       "original_context/high_freq_factor kept, smoothed between (HF rope_type llama3)"},
      {RopeScaling::longrope, "longrope",
       "LongRoPE (Phi-3): theta_k / short_factor[k], or / long_factor[k] when seq_len > original_context; "
       "attention factor sqrt(1 + ln(factor) / ln(original_context)) (HF rope_type longrope)"},
  }};
};

inline constexpr std::size_t kRopeMaxHeadDim = std::size_t{1} << 16;
inline constexpr std::int64_t kRopeMaxPosition = std::int64_t{1} << 40;  // |p| <= 2^40 (theta_0 = 1)
inline constexpr std::int64_t kRopeMaxContext = std::int64_t{1} << 40;   // original_context, max_context, seq_len

struct RopeSpec {
  Layout layout = Layout::halves;
  RopeRegime regime = RopeRegime::exact;
  std::size_t head_dim = 128;    // channels of one head vector
  std::size_t rotary_dim = 128;  // r: the first r channels rotate (even, <= head_dim)
  double base = 10000.0;         // rope_theta
  // Context extension (scaling none: every field below keeps its default, and validation says so).
  RopeScaling scaling = RopeScaling::none;
  double factor = 1.0;                  // s: linear, ntk, dynamic, yarn, llama3, longrope (its attention factor)
  std::int64_t original_context = 0;   // L0 = original_max_position_embeddings: yarn, llama3, longrope
  std::int64_t max_context = 0;        // max_position_embeddings: dynamic
  std::int64_t seq_len = 0;            // dynamic, longrope: the current length L = max(position_ids) + 1 (0: at init)
  double beta_fast = 32.0, beta_slow = 1.0;  // yarn
  double mscale = 0.0, mscale_all_dim = 0.0; // yarn (0: not given)
  double attention_factor = 0.0;       // yarn, longrope: 0 computes it from factor (and mscale); > 0 replaces it
  bool truncate = true;                // yarn: floor/ceil of the correction range
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  std::vector<double> short_factor = {}, long_factor = {};  // longrope: one per pair (r/2 each); empty otherwise
  RopeMrope mrope = RopeMrope::none;            // multimodal: three positions (t, h, w) per token
  std::vector<std::int64_t> mrope_section = {}; // (s_t, s_h, s_w), summing to r/2, when mrope is not none
  RopeXpos xpos = RopeXpos::none;               // xPos decay: queries or keys
  double xpos_scale_base = 0.0;                 // xPos: scale_base (torchscale 512), when xpos is not none
  std::int64_t xpos_center = 0;                 // xPos: c, the position whose scale is 1

  friend bool operator==(const RopeSpec&, const RopeSpec&) = default;
};

template <>
struct SpecTraits<RopeSpec> {
  using S = RopeSpec;
  static constexpr std::string_view scheme = "rope";
  static constexpr std::string_view summary =
      "rotary position embedding R(p) x (Su et al. 2021): pairs rotated by p * base^(-2k/r), interleaved "
      "(GPT-J, ggml NORMAL) or half-split (GPT-NeoX, HF Llama), partial rotary, exact or HF/ggml/RoFormer float32";

  // An integer used by some scalings only: [lo, hi] when used, else exactly 0.
  static constexpr Range<std::int64_t> only_when(bool used, std::int64_t lo, std::int64_t hi, std::string_view why) {
    return used ? Range<std::int64_t>{lo, hi} : Range<std::int64_t>{0, 0, false, false, 1, why};
  }
  static constexpr bool uses_l0(const S& s) {
    return s.scaling == RopeScaling::yarn || s.scaling == RopeScaling::llama3 || s.scaling == RopeScaling::longrope;
  }
  static constexpr bool dynamic(const S& s) { return s.scaling == RopeScaling::dynamic; }
  static constexpr bool uses_seq_len(const S& s) {
    return s.scaling == RopeScaling::dynamic || s.scaling == RopeScaling::longrope;
  }

  // A yarn-only real: [lo, hi] under --scaling yarn, else exactly its default. ggml_too: whether the ggml regime
  // models it (beta_fast, beta_slow) or takes only the default (mscale, mscale_all_dim).
  static constexpr Range<double> yarn_only(const S& s, double dflt, double lo, double hi, bool ggml_too) {
    if (s.scaling == RopeScaling::yarn && !ggml_too && s.regime == RopeRegime::ggml)
      return Range<double>{dflt, dflt, false, false, 1.0, "the ggml regime models llama.cpp's YaRN with attn_factor 1"};
    return s.scaling == RopeScaling::yarn ? Range<double>{lo, hi}
                                          : Range<double>{dflt, dflt, false, false, 1.0, "only with --scaling yarn"};
  }

  // LongRoPE's per-pair factors: r/2 positive reals under --scaling longrope, else the empty list.
  static constexpr ListRange<double> longrope_list(const S& s, double lo, double hi) {
    if (s.scaling != RopeScaling::longrope) return {{0.0, 0.0}, 0, 0, "only with --scaling longrope"};
    return {{lo, hi}, s.rotary_dim / 2, s.rotary_dim / 2,
            "one per rotated pair: rotary_dim / 2; LongRoPE's rescale factors are >= 1"};
  }

  // xPos: |p - c| <= 553 scale_base keeps zeta_0^(-|p - c| / scale_base) = 3.5^(|p - c| / scale_base) < 2^1000.
  static constexpr std::int64_t xpos_reach(const S& s) {
    const double r = 553.0 * s.xpos_scale_base;
    return r >= static_cast<double>(kRopeMaxPosition) ? 2 * kRopeMaxPosition : static_cast<std::int64_t>(r);
  }
  static constexpr Range<std::int64_t> position_range(const S& s) {
    if (s.xpos != RopeXpos::none) {
      const std::int64_t reach = xpos_reach(s);
      return {std::max(-kRopeMaxPosition, s.xpos_center - reach), std::min(kRopeMaxPosition, s.xpos_center + reach),
              false, false, 1, "|p| <= 2^40 and |p - xpos_center| <= 553 xpos_scale_base (the xPos scale stays finite)"};
    }
    return {-kRopeMaxPosition, kRopeMaxPosition, false, false, 1,
            "|p| <= 2^40 (negative: inverse rotations and K-shifts)"};
  }

  static constexpr auto fields = std::make_tuple(
      field("layout", "--layout", &S::layout,
            "which channels form pair k: interleaved (2k, 2k+1) or halves (k, k + r/2)", "CONVENTIONS.md §2.10, §3 item 2"),
      field("regime", "--regime", &S::regime,
            "exact (the mathematics) or the float32 steps of HF/PyTorch, ggml or HF RoFormer (float64 table, float32 "
            "rotation)",
            "CONVENTIONS.md §2.10, §3 item 10; HF roformer/modeling_roformer.py (transformers@0166003b4b47)"),
      field("head_dim", "--head-dim", &S::head_dim, "channels of one head vector", "HF config head_dim",
            +[](const S&) { return Range<std::size_t>{2, kRopeMaxHeadDim}; },
            +[](const S&) { return Range<std::size_t>{2, 512}; }),
      field("rotary_dim", "--rotary-dim", &S::rotary_dim,
            "r: the first r channels rotate, the rest pass through (GPT-J rotary_dim; int(head_dim * "
            "partial_rotary_factor))",
            "CONVENTIONS.md §2.10 (GPT-J rotary_dim, NeoX rotary_pct, HF partial_rotary_factor)",
            +[](const S& s) {
              return Range<std::size_t>{2, s.head_dim < 2 ? 2 : s.head_dim, false, false, 2,
                                        "pairs of channels rotate; at most head_dim"};
            }),
      field("base", "--base", &S::base, "rope_theta: theta_k = base^(-2k/r)",
            "Su et al. 2021 (10000); Llama 3 500000; Code Llama 1e6",
            +[](const S&) {
              return Range<double>{1.0, 1.0e12, true, false, 1.0, "frequencies must decrease"};
            },
            +[](const S&) { return Range<double>{2.0, 1.0e7}; }),
      field("scaling", "--scaling", &S::scaling,
            "context extension: none, linear, ntk, dynamic, yarn or llama3 (HF rope_type)",
            "CONVENTIONS.md §2.11; HF modeling_rope_utils ROPE_INIT_FUNCTIONS",
            +[](const S& s) {
              // ggml implements freq_scale (linear) here; its YaRN is not modelled yet. ntk and dynamic raise to
              // r/(r-2): r = 2 divides by zero (HF raises ZeroDivisionError).
              if (s.regime == RopeRegime::ggml)
                return Choice{enum_bit(RopeScaling::none) | enum_bit(RopeScaling::linear) | enum_bit(RopeScaling::yarn),
                              "the ggml regime models freq_scale (linear) and llama.cpp's YaRN"};
              if (s.regime == RopeRegime::roformer)
                return Choice{enum_bit(RopeScaling::none), "RoFormer's float64 table has no context extension"};
              return s.rotary_dim >= 4 ? Choice{} : Choice{~(enum_bit(RopeScaling::ntk) | enum_bit(RopeScaling::dynamic)),
                                                           "ntk and dynamic need rotary_dim >= 4 (exponent r/(r-2))"};
            }),
      field("factor", "--factor", &S::factor, "s: the scaling factor (HF rope_scaling factor)",
            "CONVENTIONS.md §2.11 (HF warns below 1)",
            +[](const S& s) {
              return s.scaling == RopeScaling::none ? Range<double>{1.0, 1.0, false, false, 1.0, "only with --scaling"}
                                                    : Range<double>{1.0, 1048576.0};
            },
            +[](const S& s) {
              return s.scaling == RopeScaling::none ? Range<double>{1.0, 1.0} : Range<double>{1.0, 64.0};
            }),
      field("original_context", "--original-context", &S::original_context,
            "L0: the pretraining context (original_max_position_embeddings) of yarn, llama3 and longrope",
            "CONVENTIONS.md §2.11, §3 item 8",
            +[](const S& s) {
              // longrope's attention factor divides by ln L0
              return only_when(uses_l0(s), s.scaling == RopeScaling::longrope ? 2 : 1, kRopeMaxContext,
                               "only with --scaling yarn, llama3 or longrope");
            },
            +[](const S& s) { return only_when(uses_l0(s), 256, 1 << 17, {}); }),
      field("max_context", "--max-context", &S::max_context,
            "max_position_embeddings: the length beyond which dynamic NTK grows the base",
            "CONVENTIONS.md §2.11 (dynamic)",
            +[](const S& s) { return only_when(dynamic(s), 1, kRopeMaxContext, "only with --scaling dynamic"); },
            +[](const S& s) { return only_when(dynamic(s), 256, 1 << 17, {}); }),
      field("seq_len", "--seq-len", &S::seq_len,
            "the current length L = max(position_ids) + 1: dynamic grows the base when L > max_context, longrope takes "
            "the long factors when L > original_context (0: at init, the original frequencies or the short factors)",
            "CONVENTIONS.md §2.11 (dynamic, longrope), §3 item 9",
            +[](const S& s) {
              return only_when(uses_seq_len(s), 0, kRopeMaxContext, "only with --scaling dynamic or longrope");
            },
            +[](const S& s) { return only_when(uses_seq_len(s), 0, 1 << 20, {}); }),
      field("beta_fast", "--beta-fast", &S::beta_fast,
            "yarn: rotations at which the ramp starts (pairs turning faster keep theta_k)", "CONVENTIONS.md §2.11 (yarn)",
            +[](const S& s) { return yarn_only(s, 32.0, 1.0e-3, 1.0e6, true); },
            +[](const S& s) { return yarn_only(s, 32.0, 4.0, 64.0, true); }),
      field("beta_slow", "--beta-slow", &S::beta_slow,
            "yarn: rotations at which the ramp ends (pairs turning slower take theta_k / factor)",
            "CONVENTIONS.md §2.11 (yarn)", +[](const S& s) { return yarn_only(s, 1.0, 1.0e-3, 1.0e6, true); },
            +[](const S& s) { return yarn_only(s, 1.0, 0.25, 4.0, true); }),
      field("mscale", "--mscale", &S::mscale,
            "yarn: with mscale_all_dim, attention factor (0.1 mscale ln s + 1) / (0.1 mscale_all_dim ln s + 1) "
            "(DeepSeek); 0: not given",
            "CONVENTIONS.md §2.11 (yarn get_mscale)", +[](const S& s) { return yarn_only(s, 0.0, 0.0, 1.0e3, false); },
            +[](const S& s) { return yarn_only(s, 0.0, 0.0, 2.0, false); }),
      field("mscale_all_dim", "--mscale-all-dim", &S::mscale_all_dim, "yarn: see mscale; 0: not given",
            "CONVENTIONS.md §2.11 (yarn get_mscale)", +[](const S& s) { return yarn_only(s, 0.0, 0.0, 1.0e3, false); },
            +[](const S& s) { return yarn_only(s, 0.0, 0.0, 2.0, false); }),
      field("attention_factor", "--attention-factor", &S::attention_factor,
            "yarn, longrope: the factor m multiplying cos and sin; 0 computes it from factor (and mscale)",
            "CONVENTIONS.md §2.11 (yarn, longrope attention_factor)",
            +[](const S& s) {
              if (s.regime == RopeRegime::ggml)
                return Range<double>{0.0, 0.0, false, false, 1.0, "the ggml regime models llama.cpp's YaRN with attn_factor 1"};
              return s.scaling == RopeScaling::yarn || s.scaling == RopeScaling::longrope
                         ? Range<double>{0.0, 1.0e3}
                         : Range<double>{0.0, 0.0, false, false, 1.0, "only with --scaling yarn or longrope"};
            },
            +[](const S& s) {
              return s.regime != RopeRegime::ggml && (s.scaling == RopeScaling::yarn || s.scaling == RopeScaling::longrope)
                         ? Range<double>{0.0, 2.0}
                         : Range<double>{0.0, 0.0};
            }),
      field("truncate", "--truncate", &S::truncate,
            "yarn: floor/ceil the correction range to whole pairs (HF truncate, default true; --truncate=false keeps "
            "it fractional)",
            "CONVENTIONS.md §2.11 (yarn), §3 item 8",
            +[](const S& s) {
              return s.regime == RopeRegime::ggml && s.scaling == RopeScaling::yarn
                         ? BoolChoice{false, true, "ggml always floors and ceils the correction range"}
                         : BoolChoice{};
            }),
      field("low_freq_factor", "--low-freq-factor", &S::low_freq_factor,
            "llama3: wavelengths above original_context / low_freq_factor are divided by factor",
            "CONVENTIONS.md §2.11 (llama3)",
            +[](const S& s) {
              return s.scaling == RopeScaling::llama3
                         ? Range<double>{0.0, 1.0e5, true, false}
                         : Range<double>{1.0, 1.0, false, false, 1.0, "only with --scaling llama3"};
            },
            +[](const S& s) {
              return s.scaling == RopeScaling::llama3 ? Range<double>{0.25, 4.0} : Range<double>{1.0, 1.0};
            }),
      field("high_freq_factor", "--high-freq-factor", &S::high_freq_factor,
            "llama3: wavelengths below original_context / high_freq_factor are kept",
            "CONVENTIONS.md §2.11 (llama3)",
            +[](const S& s) {
              return s.scaling == RopeScaling::llama3
                         ? Range<double>{s.low_freq_factor, 1.0e6, true, false, 1.0,
                                         "above low_freq_factor (the smoothing divides by their difference)"}
                         : Range<double>{4.0, 4.0, false, false, 1.0, "only with --scaling llama3"};
            },
            +[](const S& s) {
              return s.scaling == RopeScaling::llama3 ? Range<double>{s.low_freq_factor, 4 * s.low_freq_factor + 8, true, false}
                                                      : Range<double>{4.0, 4.0};
            }),
      field("short_factor", "--short-factor", &S::short_factor,
            "longrope: theta_k is divided by short_factor[k] while seq_len <= original_context",
            "CONVENTIONS.md §2.11 (longrope); HF rope_scaling short_factor",
            +[](const S& s) { return longrope_list(s, 1.0, 1.0e6); },
            +[](const S& s) { return longrope_list(s, 1.0, 64.0); }),
      field("long_factor", "--long-factor", &S::long_factor,
            "longrope: theta_k is divided by long_factor[k] when seq_len > original_context",
            "CONVENTIONS.md §2.11 (longrope); HF rope_scaling long_factor",
            +[](const S& s) { return longrope_list(s, 1.0, 1.0e6); },
            +[](const S& s) { return longrope_list(s, 1.0, 64.0); }),
      field("mrope", "--mrope", &S::mrope,
            "multimodal RoPE: none, or three positions (t, h, w) per token with pairs in sections (Qwen2-VL) or "
            "interleaved (Qwen3-VL)",
            "CONVENTIONS.md §2.16 (Qwen2-VL M-RoPE, ggml MROPE / IMROPE)",
            +[](const S& s) {
              return s.regime == RopeRegime::roformer
                         ? Choice{enum_bit(RopeMrope::none), "RoFormer has one position per token"}
                         : Choice{};
            }),
      field("mrope_section", "--mrope-section", &S::mrope_section,
            "M-RoPE: how many pairs take the t, h and w positions (HF mrope_section, e.g. [16,24,24] for head_dim 128)",
            "CONVENTIONS.md §2.16 (Qwen2-VL rope_scaling mrope_section)",
            +[](const S& s) {
              if (s.mrope == RopeMrope::none)
                return ListRange<std::int64_t>{{0, 0}, 0, 0, "only with --mrope sections or interleaved"};
              const auto h = static_cast<std::int64_t>(s.rotary_dim / 2);
              return ListRange<std::int64_t>{{0, h}, 3, 3, "t, h, w: one count per axis", true, h};
            }),
      field("xpos", "--xpos", &S::xpos,
            "xPos decay (Sun et al. 2022): none, or the scale of queries (zeta^e) or keys (zeta^-e)",
            "CONVENTIONS.md §2.12 (torchscale XPOS, downscale for keys)",
            +[](const S& s) {
              if (s.regime == RopeRegime::ggml) return Choice{enum_bit(RopeXpos::none), "ggml has no xPos"};
              if (s.regime == RopeRegime::roformer) return Choice{enum_bit(RopeXpos::none), "RoFormer has no xPos"};
              if (s.scaling == RopeScaling::yarn || s.scaling == RopeScaling::longrope)
                return Choice{enum_bit(RopeXpos::none),
                              "no implementation combines xPos with an attention factor (yarn, longrope)"};
              return Choice{};
            }),
      field("xpos_scale_base", "--xpos-scale-base", &S::xpos_scale_base,
            "xPos: the distance over which the scale changes by zeta (torchscale scale_base, default 512)",
            "CONVENTIONS.md §2.12",
            +[](const S& s) {
              return s.xpos == RopeXpos::none
                         ? Range<double>{0.0, 0.0, false, false, 1.0, "only with --xpos query or key"}
                         : Range<double>{1.0, 1.0e9};
            },
            +[](const S& s) {
              return s.xpos == RopeXpos::none ? Range<double>{0.0, 0.0} : Range<double>{1.0, 4096.0};
            }),
      field("xpos_center", "--xpos-center", &S::xpos_center,
            "xPos: the position c whose scale is 1 (torchscale: ceil((L + offset) / 2) for L tokens after offset; "
            "queries and keys of one call share it)",
            "CONVENTIONS.md §2.12 (min_pos = -(L + offset) // 2)",
            +[](const S& s) {
              return s.xpos == RopeXpos::none
                         ? Range<std::int64_t>{0, 0, false, false, 1, "only with --xpos query or key"}
                         : Range<std::int64_t>{-kRopeMaxPosition, kRopeMaxPosition};
            },
            +[](const S& s) {
              return s.xpos == RopeXpos::none ? Range<std::int64_t>{0, 0} : Range<std::int64_t>{0, 1 << 16};
            }));

  static std::span<const Preset<S>> presets();
};

// ---- presets ----------------------------------------------------------------------------------------------
// SpecTraits<RopeSpec>::presets(): hf-llama, gpt-neox, gpt-j, roformer, meta-llama, ggml-normal, ggml-neox
// (data in rope_spec.cpp, each with the implementation and commit it reproduces).

// The preset called `name` with head_dim set; rotary_dim follows the preset's rule (full, or GPT-J's 64,
// or NeoX's rotary_pct 0.25 via rotary_dim_from_factor). Throws Error naming "preset" or "head_dim".
RopeSpec rope_preset(std::string_view name, std::size_t head_dim);

// HF's rotary dimension for partial_rotary_factor f: int(head_dim * f) (truncation, as HF computes it). HF then
// builds arange(0, r, 2) frequencies with r in the exponent, which for an odd r is not a rotation of pairs:
// posenc refuses an odd result (Error naming "partial_rotary_factor", the value and the product) rather than
// guess. f must be in (0, 1].
std::size_t rotary_dim_from_factor(std::size_t head_dim, double partial_rotary_factor);

// The spec with every scaling field at its default (scaling none): the unscaled frequencies of the same regime.
// M-RoPE (mrope, mrope_section) and xPos are kept: they are not scalings of the frequencies.
inline RopeSpec without_scaling(const RopeSpec& s) {
  return RopeSpec{.layout = s.layout, .regime = s.regime, .head_dim = s.head_dim, .rotary_dim = s.rotary_dim,
                  .base = s.base, .mrope = s.mrope, .mrope_section = s.mrope_section, .xpos = s.xpos,
                  .xpos_scale_base = s.xpos_scale_base, .xpos_center = s.xpos_center};
}

// Positions per token: 3 (t, h, w) for M-RoPE, else 1. Position lists hold that many rows of tokens entries.
constexpr std::size_t position_axes(const RopeSpec& s) noexcept { return s.mrope == RopeMrope::none ? 1 : 3; }

// Number of rotated pairs h = rotary_dim / 2.
constexpr std::size_t pair_count(const RopeSpec& s) noexcept { return s.rotary_dim / 2; }

// Channels (first, second) of pair k under spec.layout: (2k, 2k+1) or (k, k + h). k < pair_count.
constexpr std::size_t first_channel(const RopeSpec& s, std::size_t k) noexcept {
  return s.layout == Layout::interleaved ? 2 * k : k;
}
constexpr std::size_t second_channel(const RopeSpec& s, std::size_t k) noexcept {
  return s.layout == Layout::interleaved ? 2 * k + 1 : k + pair_count(s);
}

// Throws unless |position| <= 2^40, naming `parameter` ("position" by default).
void check_position(const RopeSpec&, std::int64_t position, std::string_view parameter = "position");

}  // namespace posenc
