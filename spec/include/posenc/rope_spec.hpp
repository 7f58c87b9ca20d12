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
// Real libm/torch pow, sin and cos are not correctly rounded, and compilers may contract a*b - c*d into an
// FMA: the envelope a real implementation falls in is stated per quantity in the budget table
// (properties/rope/budget.hpp), and `posenc check rope` uses it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <tuple>

#include "posenc/describe.hpp"
#include "posenc/vocabulary.hpp"

namespace posenc {

enum class RopeRegime { exact, hf, ggml };

template <>
struct EnumTraits<RopeRegime> {
  static constexpr std::array<EnumValue<RopeRegime>, 3> values{{
      {RopeRegime::exact, "exact", "the mathematics: every output rounded once"},
      {RopeRegime::hf, "hf", "HF/PyTorch float32 steps: inv_freq = 1/base^(2k/r), angle = p * inv_freq"},
      {RopeRegime::ggml, "ggml", "ggml float32 steps: theta_k by repeated multiplication with base^(-2/r)"},
  }};
};

inline constexpr std::size_t kRopeMaxHeadDim = std::size_t{1} << 16;
inline constexpr std::int64_t kRopeMaxPosition = std::int64_t{1} << 40;  // |p| <= 2^40 (theta_0 = 1)

struct RopeSpec {
  Layout layout = Layout::halves;
  RopeRegime regime = RopeRegime::exact;
  std::size_t head_dim = 128;    // channels of one head vector
  std::size_t rotary_dim = 128;  // r: the first r channels rotate (even, <= head_dim)
  double base = 10000.0;         // rope_theta

  friend bool operator==(const RopeSpec&, const RopeSpec&) = default;
};

template <>
struct SpecTraits<RopeSpec> {
  using S = RopeSpec;
  static constexpr std::string_view scheme = "rope";
  static constexpr std::string_view summary =
      "rotary position embedding R(p) x (Su et al. 2021): pairs rotated by p * base^(-2k/r), interleaved "
      "(GPT-J, ggml NORMAL) or half-split (GPT-NeoX, HF Llama), partial rotary, exact or HF/ggml float32";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {-kRopeMaxPosition, kRopeMaxPosition, false, false, 1,
            "|p| <= 2^40 (negative: inverse rotations and K-shifts)"};
  }

  static constexpr auto fields = std::make_tuple(
      field("layout", "--layout", &S::layout,
            "which channels form pair k: interleaved (2k, 2k+1) or halves (k, k + r/2)", "CONVENTIONS.md §2.10, §3 item 2"),
      field("regime", "--regime", &S::regime,
            "exact (the mathematics) or the float32 steps of HF/PyTorch or ggml", "CONVENTIONS.md §2.10, §3 item 10"),
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
            +[](const S&) { return Range<double>{2.0, 1.0e7}; }));

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
