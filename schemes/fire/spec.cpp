#include "posenc/fire_spec.hpp"

#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kFireWhere = "fire";

// CONVENTIONS.md §2.15; the code reproduced, read at mcleish7/arithmetic@55af9d5e3d9b2265ae7638b4f2936c9a70538cc4
// cramming/architectures/embeddings.py (FIRE.__init__ defaults: num_heads=12, mlp_width=32, eps=1e-6).
constexpr FireSpec kCramming{.heads = 12, .mlp_width = 32, .eps = 1e-6, .regime = FireRegime::cramming};
constexpr FireSpec kExact{.heads = 12, .mlp_width = 32, .eps = 1e-6, .regime = FireRegime::exact};

constexpr std::array<Preset<FireSpec>, 2> kFirePresets{{
    {"fire",
     "MLP(ln(|c d| + 1) / (ln(|c max(q, |L_mult init_L|)| + 1) + 1e-6)), width 32, float32 steps (eval mode), the second "
     "Linear summed as BLAS FMA kernels do (--mlp-sum unfused: kernels without FMA)",
     "mcleish7/arithmetic cramming/architectures/embeddings.py FIRE.forward",
     "mcleish7/arithmetic@55af9d5e3d9b2265ae7638b4f2936c9a70538cc4", kCramming},
    {"fire-exact", "the same function in exact arithmetic, each bias rounded once",
     "mcleish7/arithmetic cramming/architectures/embeddings.py FIRE.forward",
     "mcleish7/arithmetic@55af9d5e3d9b2265ae7638b4f2936c9a70538cc4", kExact},
}};

void check_value(double v, const char* name, const std::string& which, double max = kFireMaxWeight,
                 const char* accepted = "a finite real with |v| <= 1e6") {
  if (!std::isfinite(v) || std::fabs(v) > max) throw Error(std::string(kFireWhere), name, which + format_real(v), accepted);
}

void check_vector(const std::vector<double>& v, std::size_t n, const char* name, const char* shape) {
  if (v.size() != n)
    throw Error(std::string(kFireWhere), name, std::to_string(v.size()) + " values",
                std::string("exactly ") + shape + " = " + std::to_string(n) + " values");
  for (std::size_t k = 0; k < v.size(); ++k) check_value(v[k], name, "entry " + std::to_string(k) + ": ");
}

}  // namespace

std::span<const Preset<FireSpec>> SpecTraits<FireSpec>::presets() { return kFirePresets; }

FireSpec fire_preset(std::string_view name, std::size_t heads) {
  FireSpec s = find_preset<FireSpec>(name).spec;
  s.heads = heads;
  validate(s);
  return s;
}

void check_fire_weights(const FireSpec& s, const FireWeights& w) {
  check_value(w.c, "c", "");
  check_value(w.L_multiplier, "L_multiplier", "");
  check_value(w.init_L, "init_L", "", kFireMaxInitL, "a finite real with |v| <= 2^24 (a position)");
  check_vector(w.w1, s.mlp_width, "w1", "mlp_width");
  check_vector(w.b1, s.mlp_width, "b1", "mlp_width");
  check_vector(w.w2, s.heads * s.mlp_width, "w2", "heads * mlp_width");
  check_vector(w.b2, s.heads, "b2", "heads");
}

void check_fire_key_length(std::size_t key_length) {
  if (key_length > kFireMaxKeyLength)
    throw Error(std::string(kFireWhere), "key_length", std::to_string(key_length),
                "an integer in [1, 2^24 = 16777216] (FIRE's reference holds positions as float32 numbers)");
}

}  // namespace posenc
