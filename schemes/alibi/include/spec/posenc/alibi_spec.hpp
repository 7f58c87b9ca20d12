// posenc/alibi_spec.hpp — the one description of ALiBi, attention with linear biases (Press et al. 2022).
//
// An AlibiSpec fully determines the per-head slopes and the bias matrix added to the pre-softmax scores: the fast
// path (lib/), the MPFR oracle (reference/), the command-line tool and the reports consume this struct and nothing
// else. It holds data only; each consumer transcribes the definition below itself.
//
// Slopes (CONVENTIONS.md §2.13). n = heads, b = bias_max (8 in every implementation but MPT's alibi_bias_max),
// c = 2^floor(log2 n) (the largest power of two <= n):
//   head h < c:        m_h = 2^(-b (h+1) / c)                 (for a power of two n = c, every head)
//   head h = c + j:    m_h = 2^(-b (2j+1) / (2c)),  j < n - c  (the odd-numbered slopes of the 2c sequence)
//   n = 1 gives 2^-b; n = 3 gives 2^-b/2, 2^-b, 2^-b/4 (b = 8: 1/16, 1/256, 1/4).
// Geometry of one call: key_length Lk keys at positions j = 0..Lk-1 and query_length Lq queries, the LAST Lq of
// them: query row i sits at position q_i = Lk - Lq + i (a decoder step with a cache has Lq = 1, q_0 = Lk - 1).
// Bias variants (AlibiVariant), the matrix each implementation adds (equal under softmax with the causal mask,
// not element-wise; claim ALIBI-SOFTMAX-1 says which):
//   relative     bias = -m (q_i - j) for j <= q_i, 0 above          (gpt-neox AliBi: -tril(i - j) * slopes)
//   key          bias = m j, the same for every query               (ofirpress fairseq: slopes * arange(maxpos))
//   key_shifted  bias = m (j - (Lk - 1)), the same for every query  (MPT build_mpt_alibi_tensor: arange(1-L, 1))
//   key_counted  bias = m c_j, c_j = (cumsum(mask)_j - 1) mask_j   (BLOOM build_alibi_tensor: positions counted
//                over the non-padding keys; mask_j = 1 for a real token, 0 for padding; no mask: all real)
//   symmetric    bias = -m |q_i - j|                                (non-causal encoders; NOT softmax-equivalent)
// Regimes (AlibiRegime). exact: each bias is the real m_h times the integer distance, rounded once to the output
// type. The emulated regimes are the named code's float32 steps, each correctly rounded (RN32, RN64 = round to
// nearest-even binary32 / binary64; DESIGN.md §2); x below is the signed integer the variant multiplies, bias = m x
// (relative -(q_i - j) or 0, key j, key_shifted j - (Lk - 1), key_counted c_j, symmetric -|q_i - j|):
//   ofirpress (ofirpress get_slopes, also gpt-neox AliBi): Python float64 slopes, then torch.Tensor (float32):
//       s = RN64(2^(-8/c')) for the power-of-two list c' the head comes from (c, or 2c for h >= c),
//       slope = RN32(RN64(s * RN64(s^e))), e = h (h < c) or 2j (h = c + j);      bias = RN32(RN32(x) slope)
//   bloom (HF BLOOM build_alibi_tensor): base = RN32(RN64(2^(-8/c))), slope_h = RN32(base^(h+1)) (h < c);
//       extra = RN32(RN64(2^(-4/c))), slope_{c+j} = RN32(extra^(2j+1));            bias = RN32(RN32(x) slope)
//   mpt (HF MPT build_mpt_alibi_tensor): P = 2^ceil(log2 n), for t = 1..P: e_t = RN32(t * RN32(RN64(b / P))),
//       r_t = RN32(1 / RN32(2^e_t)); slopes = (r_2, r_4, ..., r_P, r_1, r_3, ...)[:n] (= the order above);
//       bias = RN32(RN32(x) slope)
// Real Python/torch pow is not correctly rounded: the envelope a real implementation falls in is stated per
// quantity in the budget table (schemes/alibi/budget.hpp), and `posenc check alibi` uses it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>

#include "posenc/describe.hpp"

namespace posenc {

enum class AlibiVariant { relative, key, key_shifted, key_counted, symmetric };
enum class AlibiRegime { exact, ofirpress, bloom, mpt };

template <>
struct EnumTraits<AlibiVariant> {
  static constexpr std::array<EnumValue<AlibiVariant>, 5> values{{
      {AlibiVariant::relative, "relative", "-m (i - j) for j <= i, 0 above (gpt-neox AliBi)"},
      {AlibiVariant::key, "key", "m j, the same row for every query (ofirpress fairseq)"},
      {AlibiVariant::key_shifted, "key_shifted", "m (j - (Lk - 1)), the same row for every query (MPT)"},
      {AlibiVariant::key_counted, "key_counted",
       "m (cumsum(mask) - 1) mask over the keys (BLOOM: positions count non-padding keys)"},
      {AlibiVariant::symmetric, "symmetric", "-m |i - j| (non-causal; not softmax-equivalent to the others)"},
  }};
};

template <>
struct EnumTraits<AlibiRegime> {
  static constexpr std::array<EnumValue<AlibiRegime>, 4> values{{
      {AlibiRegime::exact, "exact", "the mathematics: m_h times the distance, rounded once"},
      {AlibiRegime::ofirpress, "ofirpress",
       "ofirpress/gpt-neox get_slopes in Python float64 cast to float32, bias float32(x) * slope"},
      {AlibiRegime::bloom, "bloom", "HF BLOOM: float32 pow(base, k), bias float32(x) * slope"},
      {AlibiRegime::mpt, "mpt", "HF MPT: float32 1 / 2^(t * b/P), bias float32(x) * slope"},
  }};
};

inline constexpr std::size_t kAlibiMaxHeads = std::size_t{1} << 16;
// Key positions and lengths: 0 <= j < 2^31 (int32 positions, as the implementations hold them).
inline constexpr std::int64_t kAlibiMaxLength = std::int64_t{1} << 31;

struct AlibiSpec {
  std::size_t heads = 8;                          // n
  AlibiVariant variant = AlibiVariant::relative;  // which matrix is added
  AlibiRegime regime = AlibiRegime::exact;
  double bias_max = 8.0;                          // b: m_h = 2^(-b (h+1)/c); MPT alibi_bias_max

  friend bool operator==(const AlibiSpec&, const AlibiSpec&) = default;
};

template <>
struct SpecTraits<AlibiSpec> {
  using S = AlibiSpec;
  static constexpr std::string_view scheme = "alibi";
  static constexpr std::string_view summary =
      "ALiBi linear attention biases (Press et al. 2022): per-head slopes 2^(-8(h+1)/n) (odd-numbered 2n' slopes "
      "for other head counts) times the distance; gpt-neox, ofirpress, MPT, BLOOM and symmetric bias matrices";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, kAlibiMaxLength - 1, false, false, 1, "key positions 0 <= j < 2^31"};
  }

  static constexpr auto fields = std::make_tuple(
      field("heads", "--heads", &S::heads, "n: attention heads, one slope each", "CONVENTIONS.md §2.13 (get_slopes(n))",
            +[](const S&) { return Range<std::size_t>{1, kAlibiMaxHeads}; },
            +[](const S&) { return Range<std::size_t>{1, 160}; }),
      field("variant", "--variant", &S::variant,
            "which bias matrix: relative (gpt-neox), key (ofirpress), key_shifted (MPT), key_counted (BLOOM), symmetric",
            "CONVENTIONS.md §2.13, §3 item 7"),
      field("regime", "--regime", &S::regime,
            "exact (the mathematics) or the float32 steps of ofirpress/gpt-neox, BLOOM or MPT",
            "CONVENTIONS.md §2.13 (BLOOM's float32 slopes differ from the exact ones by up to 6.75e-7 relative, "
            "n = 127, h = 126; CONVENTIONS says 4.8e-7)"),
      field("bias_max", "--bias-max", &S::bias_max,
            "b: slopes 2^(-b (h+1)/c); 8 in ALiBi, MPT's alibi_bias_max may differ (exact and mpt regimes only)",
            "HF MPT build_mpt_alibi_tensor(alibi_bias_max=8)",
            +[](const S& s) {
              if (s.regime == AlibiRegime::ofirpress || s.regime == AlibiRegime::bloom)
                return Range<double>{8.0, 8.0, false, false, 1.0,
                                     "ofirpress and bloom fix b = 8; another b needs regime exact or mpt"};
              return Range<double>{0.0, 128.0, true, false, 1.0,
                                   "slopes 2^(-b e) >= 2^-128 (normal doubles; MPT's float32 steps give subnormal or "
                                   "zero slopes as b e nears 128, as float32 does)"};
            },
            +[](const S& s) {
              if (s.regime == AlibiRegime::ofirpress || s.regime == AlibiRegime::bloom) return Range<double>{8.0, 8.0};
              return Range<double>{1.0, 16.0};
            }));

  static std::span<const Preset<S>> presets();
};

// ---- presets ----------------------------------------------------------------------------------------------
// SpecTraits<AlibiSpec>::presets(): ofirpress, gpt-neox, bloom, mpt, symmetric (data in alibi_spec.cpp, each with
// the implementation and commit it reproduces). heads is a default; callers set it.

// The preset called `name` with `heads` heads. Throws Error naming "preset" or "heads".
AlibiSpec alibi_preset(std::string_view name, std::size_t heads);

// c = 2^floor(log2 n), the largest power of two <= n (n >= 1).
constexpr std::size_t alibi_power_of_two_floor(std::size_t n) noexcept {
  std::size_t c = 1;
  while (c <= n / 2) c *= 2;
  return c;
}

// Key positions 0..Lk-1 and the last Lq of them as queries. Throws Error naming "query_length" / "key_length":
// 1 <= Lk < 2^31, 1 <= Lq <= Lk.
void check_alibi_lengths(std::size_t query_length, std::size_t key_length);

}  // namespace posenc
