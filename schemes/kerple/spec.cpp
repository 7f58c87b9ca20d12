#include "posenc/kerple_spec.hpp"

#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kKerpleWhere = "kerple";

// CONVENTIONS.md §2.14; the code reproduced, read at chijames/KERPLE@73f1ee2d24722cdbe277d473899321218f5cbd00.
constexpr KerpleSpec kLog{.heads = 12, .kernel = KerpleKernel::log, .regime = KerpleRegime::megatron};
constexpr KerpleSpec kPower{.heads = 12, .kernel = KerpleKernel::power, .regime = KerpleRegime::megatron};

constexpr std::array<Preset<KerpleSpec>, 2> kKerplePresets{{
    {"kerple-log", "bias -p ln(1 + a d) over tril(i - j), p, a >= 0.01, float32 (the paper's best variant)",
     "chijames/KERPLE megatron/mpu/layers.py ParallelKerpleLog.forward",
     "chijames/KERPLE@73f1ee2d24722cdbe277d473899321218f5cbd00", kLog},
    {"kerple-power", "bias -a d^p over tril(i - j), 0.01 <= p <= 2, a >= 0.01, float32 (pos_emb kerple_power_ap_)",
     "chijames/KERPLE megatron/mpu/layers.py ParallelKerplePower.forward",
     "chijames/KERPLE@73f1ee2d24722cdbe277d473899321218f5cbd00", kPower},
}};

void check_one(const KerpleSpec& s, const std::vector<double>& v, const char* name) {
  if (v.size() != s.heads)
    throw Error(std::string(kKerpleWhere), name, std::to_string(v.size()) + " values",
                "exactly heads = " + std::to_string(s.heads) + " values (one per head)");
  for (std::size_t h = 0; h < v.size(); ++h)
    if (!std::isfinite(v[h]) || std::fabs(v[h]) > kKerpleMaxParameter)
      throw Error(std::string(kKerpleWhere), name, "head " + std::to_string(h) + ": " + format_real(v[h]),
                  "a finite real with |v| <= 1e6 (values below 0.01 are clamped to 0.01 as the reference does)");
}

}  // namespace

std::span<const Preset<KerpleSpec>> SpecTraits<KerpleSpec>::presets() { return kKerplePresets; }

KerpleSpec kerple_preset(std::string_view name, std::size_t heads) {
  KerpleSpec s = find_preset<KerpleSpec>(name).spec;
  s.heads = heads;
  validate(s);
  return s;
}

void check_kerple_weights(const KerpleSpec& s, const KerpleWeights& w) {
  check_one(s, w.p, "bias_p");
  check_one(s, w.a, "bias_a");
}

double kerple_effective_p(const KerpleSpec& s, double bias_p) {
  const bool power = s.kernel == KerpleKernel::power;
  if (s.regime == KerpleRegime::megatron) {
    const auto eps = static_cast<float>(kKerpleEps);
    float p = std::fmax(static_cast<float>(bias_p), eps);
    if (power) p = std::fmin(p, static_cast<float>(kKerpleMaxPowerP));
    return p;
  }
  double p = std::fmax(bias_p, kKerpleEps);
  if (power) p = std::fmin(p, kKerpleMaxPowerP);
  return p;
}

double kerple_effective_a(const KerpleSpec& s, double bias_a) {
  if (s.regime == KerpleRegime::megatron)
    return std::fmax(static_cast<float>(bias_a), static_cast<float>(kKerpleEps));
  return std::fmax(bias_a, kKerpleEps);
}

}  // namespace posenc
