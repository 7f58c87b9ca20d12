// posenc/fire_spec.hpp — the one description of FIRE, functional interpolation for relative positions (Li et al.
// 2023, arXiv 2310.04418).
//
// A FireSpec is the structure of the bias (heads, MLP width, eps, arithmetic); the trained parameters (c, the
// threshold L, the MLP's weights) come with it as FireWeights (a plan, the oracle and `posenc bias fire` take both).
// The fast path (lib/), the MPFR oracle (reference/), the command-line tool and the reports consume these two structs
// and nothing else; each consumer transcribes the definition below itself.
//
// Which FIRE. The paper's authors published no code. posenc follows the one implementation located
// (CONVENTIONS.md §2.15): mcleish7/arithmetic@55af9d5e3d9b2265ae7638b4f2936c9a70538cc4
// cramming/architectures/embeddings.py, class FIRE, forward in eval mode (CONVENTIONS.md cites 86022a57; the FIRE
// class is the same at both commits). Where the paper and that code differ, posenc takes the code:
//   * the paper's psi(i - j) / psi(max(L, i)) with psi(x) = ln(c x + 1) becomes ln(|c (i - j)| + 1) /
//     (ln(|c max(i, thr)| + 1) + eps): absolute values (the code's torch.abs) and eps in the denominator;
//   * the threshold is thr = |L_multiplier * init_L| (init_L fixed, L_multiplier trained);
//   * the bias is evaluated for every (i, j), j > i included, as a function of |i - j| (the causal mask is applied
//     outside the module; BiasMask::causal writes it here);
//   * training mode's randomized positions (a sorted subset of randperm(max_length)) are not modelled: eval mode
//     uses positions 0..L-1, which is what a trained model runs with.
//
// Definition.
//   Geometry of one call (as every bias scheme's, posenc/bias.hpp): key_length Lk keys at positions j = 0..Lk-1, the
//   query_length queries are the LAST Lq of them, query row i at position q_i = Lk - Lq + i (the reference builds
//   the Lk x Lk matrix of positions 0..Lk-1; a decoder step takes its last row). Lk <= 2^24 (the reference holds
//   positions as float32 numbers, exact below 2^24).
//   Weights: c, L_multiplier, init_L (scalars); W1[k], b1[k] (k < w = mlp_width: mlp[0], Linear(1, w)); W2[h][k],
//   b2[h] (mlp[2], Linear(w, heads)).
//   For query position q and key position j, with d = |q - j|:
//     thr   = |L_multiplier * init_L|
//     N(q)  = max(q, thr)
//     x     = ln(|c| d + 1) / (ln(|c| N(q) + 1) + eps)
//     r_k   = max(0, W1[k] x + b1[k])                         (ReLU)
//     b_h   = b2[h] + sum_k W2[h][k] r_k
//   x depends on (q, d): rows with q <= thr share one function of d; every row is symmetric in j about q.
// Regimes (FireRegime):
//   exact     the real numbers above with the weights and eps as given (doubles); each bias is that real value
//             rounded once to the output type, up to the bound of the budget table (fire.bias.exact.*: the MLP's
//             sum can cancel, so the bound is relative to S = |b2[h]| + sum_k |W2[h][k]| (|W1[k]| x + |b1[k]|)).
//   cramming  the reference's float32 steps (a float32 model), each correctly rounded (RN32 = round to nearest-even
//             binary32, DESIGN.md §2):
//               c32, Lm32, iL32, W1, b1, W2, b2 = RN32 of the weights; e32 = RN32(eps) (a Python float added to a
//               float32 tensor)
//               thr   = |RN32(Lm32 iL32)|
//               Q = RN32(q), J = RN32(j) (exact: < 2^24), D = Q - J (exact), N = max(Q, thr)
//               l     = RN32(ln(RN32(|RN32(c32 D)| + 1)))
//               n     = RN32(ln(RN32(|RN32(c32 N)| + 1)))
//               x     = RN32(l / RN32(n + e32))
//               h_k   = RN32(RN32(x W1[k]) + b1[k])            (torch Linear(1, w): a K = 1 gemm onto the bias)
//               r_k   = max(h_k, +0)
//               the second Linear in the order mlp_sum names (FireMlpSum):
//                 fma      acc = +0; for k = 0..w-1 ascending: acc = RN32(r_k W2[h][k] + acc)   (one rounding: fused)
//                 unfused  acc = +0; for k = 0..w-1 ascending: acc = RN32(acc + RN32(r_k W2[h][k]))   (two roundings)
//               b_h   = RN32(acc + b2[h])
//             In PyTorch both Linears are addmm on the BLAS (the bias copied into C, then C += A B with beta = 1), so
//             the order of the second one's sum is the BLAS kernel's, not the model's. Measured with Debian's
//             PyTorch 1.13 on OpenBLAS 0.3.21 (properties/heldout/generate_fire.py, data/fire/; four shapes, 3-12
//             heads, width 7-64): the Sandybridge kernel (AVX, no FMA) computes exactly `unfused`; the Haswell kernel
//             (FMA) computes `fma` on 99.96-100 % of entries (18 of 49152 in the 12-head shape differ: its tiles sum
//             some outputs in another order); Prescott's SSE3 kernel neither (it splits the sum). SkylakeX, Zen and
//             Nehalem were not measured. The first Linear (K = 1) is RN32(RN32(x W1) + b1)
//             on every one of them. Each order is bit for bit against correctly rounded float32 steps (DESIGN.md
//             §2); real kernels in other orders and torch's float32 log (Sleef, not correctly rounded) land in the
//             envelope stated per quantity in the budget table (fire.check.envelope: any order, with or without
//             FMA, gamma_{w+1} sum |W2 r| per side), and `posenc check fire` uses it.
// Not modelled: training mode (randomized positions), fp16/bf16 runs, a learned eps.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "posenc/describe.hpp"

namespace posenc {

enum class FireRegime { exact, cramming };
// The order of the cramming regime's second Linear (fire_spec.hpp, "cramming"): a BLAS kernel's choice.
enum class FireMlpSum { fma, unfused };

template <>
struct EnumTraits<FireRegime> {
  static constexpr std::array<EnumValue<FireRegime>, 2> values{{
      {FireRegime::exact, "exact", "the mathematics with the weights as given, rounded once"},
      {FireRegime::cramming, "cramming", "the reference's float32 steps (mcleish7/arithmetic FIRE, eval mode)"},
  }};
};

template <>
struct EnumTraits<FireMlpSum> {
  static constexpr std::array<EnumValue<FireMlpSum>, 2> values{{
      {FireMlpSum::fma, "fma",
       "acc = fma(r_k, W2[h][k], acc) over k ascending from +0, then + b2 (most outputs of OpenBLAS's FMA kernels: "
       "Haswell agreed on 99.96-100 % of held-out entries, its tiles order a few otherwise)"},
      {FireMlpSum::unfused, "unfused",
       "acc = acc + RN32(r_k W2[h][k]) over k ascending from +0, then + b2 (OpenBLAS without FMA: Sandybridge, "
       "Nehalem; a plain loop)"},
  }};
};

inline constexpr std::size_t kFireMaxHeads = std::size_t{1} << 16;
inline constexpr std::size_t kFireMaxWidth = 4096;
// Key positions are below 2^24 (the reference's float32 positions are exact there).
inline constexpr std::size_t kFireMaxKeyLength = std::size_t{1} << 24;
// Largest |v| of any weight (c, L_multiplier, W1, b1, W2, b2): keeps every float32 step finite. init_L is a position:
// |init_L| <= 2^24.
inline constexpr double kFireMaxWeight = 1e6;
inline constexpr double kFireMaxInitL = 16777216.0;
inline constexpr double kFireMinEps = 1e-12;

// The trained parameters, as the reference's state_dict holds them (names in comments).
struct FireWeights {
  double c = 0.1;             // c (init_c)
  double L_multiplier = 1.0;  // L_multiplier
  double init_L = 512.0;      // init_L (not trained)
  std::vector<double> w1;     // mlp.0.weight [w, 1]
  std::vector<double> b1;     // mlp.0.bias [w]
  std::vector<double> w2;     // mlp.2.weight [heads, w], row-major: w2[h * w + k]
  std::vector<double> b2;     // mlp.2.bias [heads]

  friend bool operator==(const FireWeights&, const FireWeights&) = default;
};

struct FireSpec {
  std::size_t heads = 12;
  std::size_t mlp_width = 32;
  double eps = 1e-6;
  FireRegime regime = FireRegime::exact;
  FireMlpSum mlp_sum = FireMlpSum::fma;  // cramming: the second Linear's summation order
  using Weights = FireWeights;  // what a plan takes with the spec

  friend bool operator==(const FireSpec&, const FireSpec&) = default;
};

template <>
struct SpecTraits<FireSpec> {
  using S = FireSpec;
  static constexpr std::string_view scheme = "fire";
  static constexpr std::string_view summary =
      "FIRE functional relative biases (Li et al. 2023): per-head MLP(ln(|c| d + 1) / (ln(|c| max(q, L) + 1) + eps)) "
      "of the distance d, with trained c, L and MLP weights (mcleish7/arithmetic's FIRE)";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, (std::int64_t{1} << 24) - 1, false, false, 1, "key positions 0 <= j < 2^24 (float32 positions)"};
  }

  static constexpr auto fields = std::make_tuple(
      field("heads", "--heads", &S::heads, "attention heads: outputs of the MLP's second layer",
            "CONVENTIONS.md §2.15 (Linear(w, heads))",
            +[](const S&) { return Range<std::size_t>{1, kFireMaxHeads}; },
            +[](const S&) { return Range<std::size_t>{1, 16}; }),
      field("mlp_width", "--mlp-width", &S::mlp_width, "w: hidden units of the MLP (Linear(1, w), ReLU)",
            "CONVENTIONS.md §2.15 (mlp_width 32)", +[](const S&) { return Range<std::size_t>{1, kFireMaxWidth}; },
            +[](const S&) { return Range<std::size_t>{1, 48}; }),
      field("eps", "--eps", &S::eps, "added to the normalizer ln(|c| max(q, L) + 1)",
            "mcleish7/arithmetic FIRE(eps=1e-6)",
            +[](const S&) {
              return Range<double>{kFireMinEps, 1.0, false, false, 1.0,
                                   "a positive denominator at every row (the normalizer is 0 where |c| max(q, L) = 0)"};
            },
            +[](const S&) { return Range<double>{1e-7, 1e-3}; }),
      field("regime", "--regime", &S::regime, "exact (the mathematics) or the reference's float32 steps",
            "CONVENTIONS.md §2.15; DESIGN.md §2 (emulation: each float32 step correctly rounded)"),
      field("mlp_sum", "--mlp-sum", &S::mlp_sum,
            "cramming: the second Linear's float32 summation order, fma (an FMA chain over k, then + b2: BLAS kernels "
            "with FMA) or unfused (each product rounded, then added: BLAS kernels without FMA)",
            "PyTorch addmm on OpenBLAS 0.3.21 (properties/heldout/generate_fire.py: the Sandybridge kernel unfused "
            "bit for bit; Haswell's fma on 99.96-100 % of entries)",
            +[](const S& s) {
              return s.regime == FireRegime::cramming
                         ? Choice{}
                         : Choice{enum_bit(FireMlpSum::fma),
                                  "only with --regime cramming (the exact regime has no float32 order)"};
            }));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<FireSpec>::presets(): fire (the reference's defaults, float32 steps), fire-exact.
// The preset called `name` with `heads` heads. Throws Error naming "preset" or "heads".
FireSpec fire_preset(std::string_view name, std::size_t heads);

// Throws Error naming the weight ("c", "L_multiplier", "init_L", "w1", "b1", "w2", "b2") unless each vector has its
// size (w1, b1: mlp_width; w2: heads * mlp_width; b2: heads) and every value is finite with |v| <= kFireMaxWeight
// (init_L: kFireMaxInitL) (validate(spec) first).
void check_fire_weights(const FireSpec&, const FireWeights&);

// Throws Error naming "key_length" when key_length > kFireMaxKeyLength.
void check_fire_key_length(std::size_t key_length);

}  // namespace posenc
