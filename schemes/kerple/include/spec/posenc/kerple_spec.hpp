// posenc/kerple_spec.hpp — the one description of KERPLE, kernelized relative positional biases (Chi et al. 2022).
//
// A KerpleSpec is the structure of the bias (heads, kernel, arithmetic); the per-head kernel parameters bias_p and
// bias_a are trained weights and come with them as KerpleWeights (a plan, the oracle and `posenc bias kerple`
// take both). The fast path (lib/), the MPFR oracle (reference/), the command-line tool and the reports consume
// these two structs and nothing else; each consumer transcribes the definition below itself.
//
// Definition (CONVENTIONS.md §2.14; chijames/KERPLE@73f1ee2d24722cdbe277d473899321218f5cbd00
// megatron/mpu/layers.py, ParallelKerpleLog.forward and ParallelKerplePower.forward):
//   Geometry of one call (as ALiBi's): key_length Lk keys at positions j = 0..Lk-1, the query_length queries are
//   the LAST Lq of them, query row i at position q_i = Lk - Lq + i (the reference runs Lq = Lk, or Lq = 1 at a
//   decoder step, where it takes row Lk - 1 of its matrix: the same alignment).
//   Distance  d = q_i - j for j <= q_i, and d = 0 for j > q_i (the reference's diff = tril(i - j)).
//   Parameters of head h, clamped as every reference forward clamps them before use (eps = 0.01):
//     log:    p = max(bias_p[h], eps),            a = max(bias_a[h], eps)
//     power:  p = min(max(bias_p[h], eps), 2),    a = max(bias_a[h], eps)
//   Bias      log:    b_h(d) = -p ln(1 + a d)
//             power:  b_h(d) = -a d^p                (0^p = 0: p >= eps > 0)
//   so b_h(0) = -0 (the sign of -p * 0 in IEEE arithmetic; every regime writes -0.0 there, above the diagonal too).
//   The bias depends only on (h, d): a relative (Toeplitz) bias, 0 at distance 0, non-increasing in d.
// Regimes (KerpleRegime):
//   exact     the real parameters as given (doubles), eps = RN64(0.01); each bias is the real value rounded once to
//             the output type.
//   megatron  the reference's float32 steps (a float32 model: params_dtype = x.dtype = float32), each correctly
//             rounded (RN32 = round to nearest-even binary32; DESIGN.md §2): p32 = RN32(bias_p), a32 = RN32(bias_a),
//             clamped with eps32 = RN32(0.01) (torch.clamp against the scalar in float32), D = RN32(d)
//             (diff.to(float32): exact below 2^24), then
//               log:    t = RN32(a32 D), u = RN32(1 + t), l = RN32(ln u), bias = RN32(-p32 l)
//                       (-self.bias_p * torch.log(1 + self.bias_a * diff): the negation is exact)
//               power:  w = RN32(D^p32), bias = RN32(-w a32)            (diff.pow(p); bias = -bias * self.bias_a)
//             Real torch float32 log/pow are not correctly rounded: the envelope a real run falls in is stated per
//             quantity in the budget table (schemes/kerple/budget.hpp), and `posenc check kerple` uses it.
// Not modelled: the power kernel's optional multiplicative "wei" kernel exp(-wei_a d^wei_p) (the pos_emb variants
// kerple_power_*_wei*), which scales the scores rather than adding a bias; half-precision (fp16/bf16) runs.
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

enum class KerpleKernel { log, power };
enum class KerpleRegime { exact, megatron };

template <>
struct EnumTraits<KerpleKernel> {
  static constexpr std::array<EnumValue<KerpleKernel>, 2> values{{
      {KerpleKernel::log, "log", "-p ln(1 + a d) (ParallelKerpleLog)"},
      {KerpleKernel::power, "power", "-a d^p, p <= 2 (ParallelKerplePower)"},
  }};
};

template <>
struct EnumTraits<KerpleRegime> {
  static constexpr std::array<EnumValue<KerpleRegime>, 2> values{{
      {KerpleRegime::exact, "exact", "the mathematics with the parameters as given, rounded once"},
      {KerpleRegime::megatron, "megatron", "the reference's float32 steps (float32 parameters and distances)"},
  }};
};

inline constexpr std::size_t kKerpleMaxHeads = std::size_t{1} << 16;
// Largest |bias_p|, |bias_a| accepted (trained values are O(1); the bound keeps every bias finite in float32).
inline constexpr double kKerpleMaxParameter = 1e6;
// The clamp of every reference forward: parameters below it are raised to it (power: p also lowered to 2).
inline constexpr double kKerpleEps = 0.01;
inline constexpr double kKerpleMaxPowerP = 2.0;

// The trained parameters: bias_p and bias_a, one per head each (the reference's [heads, 1, 1] parameters),
// before the clamp. Any finite value with |v| <= kKerpleMaxParameter; the clamp above is applied by every consumer.
struct KerpleWeights {
  std::vector<double> p;  // bias_p
  std::vector<double> a;  // bias_a

  friend bool operator==(const KerpleWeights&, const KerpleWeights&) = default;
};

struct KerpleSpec {
  std::size_t heads = 8;
  KerpleKernel kernel = KerpleKernel::log;
  KerpleRegime regime = KerpleRegime::exact;
  using Weights = KerpleWeights;  // what a plan takes with the spec

  friend bool operator==(const KerpleSpec&, const KerpleSpec&) = default;
};

template <>
struct SpecTraits<KerpleSpec> {
  using S = KerpleSpec;
  static constexpr std::string_view scheme = "kerple";
  static constexpr std::string_view summary =
      "KERPLE kernelized relative biases (Chi et al. 2022): per-head -p ln(1 + a d) (log) or -a d^p (power) of the "
      "causal distance d, with the trained parameters bias_p, bias_a";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, (std::int64_t{1} << 31) - 1, false, false, 1, "key positions 0 <= j < 2^31"};
  }

  static constexpr auto fields = std::make_tuple(
      field("heads", "--heads", &S::heads, "attention heads, one (bias_p, bias_a) pair each",
            "CONVENTIONS.md §2.14 ([heads, 1, 1] parameters)",
            +[](const S&) { return Range<std::size_t>{1, kKerpleMaxHeads}; },
            +[](const S&) { return Range<std::size_t>{1, 64}; }),
      field("kernel", "--kernel", &S::kernel, "log: -p ln(1 + a d); power: -a d^p",
            "chijames/KERPLE megatron/mpu/layers.py ParallelKerpleLog, ParallelKerplePower"),
      field("regime", "--regime", &S::regime, "exact (the mathematics) or the reference's float32 steps",
            "CONVENTIONS.md §2.14; DESIGN.md §2 (emulation: each float32 step correctly rounded)"));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<KerpleSpec>::presets(): kerple-log, kerple-power (data in kerple_spec.cpp, with the commit read).
// The preset called `name` with `heads` heads. Throws Error naming "preset" or "heads".
KerpleSpec kerple_preset(std::string_view name, std::size_t heads);

// Throws Error naming "bias_p" / "bias_a" unless each has exactly spec.heads finite entries with
// |v| <= kKerpleMaxParameter (validate(spec) first).
void check_kerple_weights(const KerpleSpec&, const KerpleWeights&);

// The clamped parameter as the regime uses it (the definition above): exact, the double clamped; megatron, the
// float32 value clamped in float32 (returned as a double holding a float32 number).
double kerple_effective_p(const KerpleSpec&, double bias_p);
double kerple_effective_a(const KerpleSpec&, double bias_a);

}  // namespace posenc
