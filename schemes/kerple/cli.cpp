// schemes/kerple/cli.cpp — KERPLE on the command line: its registration (description, presets and flags come from
// SpecTraits<KerpleSpec>, cli/spec_options.hpp) and what is its own:
//   posenc bias kerple    the bias matrix [heads, query_length, key_length] of the kernel with the trained
//                         parameters --bias-p, --bias-a (--mask causal: -inf where a key is not visible)
//   posenc scores kerple  scale <q_i, k_j> + bias for q [heads, Lq, d], k [heads, Lk, d] (bias rows + BLAS gemm)
//   posenc check kerple   a user's bias tensor against the oracle with the user's parameters: budget rows (exact)
//                         and the emulation envelope of the reference's float32 steps (megatron)
// No `freqs`: KERPLE has no frequencies or slopes of its own, only the trained per-head bias_p and bias_a, which
// every command takes as --bias-p / --bias-a (comma-separated, one per head, or one value for every head).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "args.hpp"
#include "bias_check_input.hpp"
#include "bias_family.hpp"
#include "bias_verbs.hpp"
#include "schemes/kerple/check.hpp"
#include "output.hpp"
#include "posenc/error.hpp"
#include "posenc/kerple.hpp"
#include "posenc/kerple_spec.hpp"
#include "registry.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_kerple {
namespace {

using Spec = KerpleSpec;
constexpr const char* kScheme = "kerple";

// ---- the trained parameters --------------------------------------------------------------------------

// --bias-p LIST --bias-a LIST: bias_p and bias_a per head (KerpleWeights), read after the spec (the count is its
// heads) and checked by check_kerple_weights, whose errors are renamed to the flags with the text typed.
struct WeightFlags {
  std::string p, a;

  void add_to(CLI::App* c) {
    c->add_option("--bias-p", p,
                  "bias_p per head: comma-separated, one per head, or one for every head; each a real in "
                  "[-1e6, 1e6], raised to 0.01 if below it (power: lowered to 2 if above it) as the reference "
                  "clamps")
        ->type_name("LIST")
        ->required()
        ->group("Weights");
    c->add_option("--bias-a", a,
                  "bias_a per head: comma-separated, one per head, or one for every head; each a real in "
                  "[-1e6, 1e6], raised to 0.01 if below it as the reference clamps")
        ->type_name("LIST")
        ->required()
        ->group("Weights");
  }

  // The error of check_kerple_weights (parameter "bias_p" or "bias_a", value "head h: v") under the flag, with the
  // text typed: "--bias-p = '1,nan' (head 1: nan)"; one value for every head: "--bias-p = '-1e7' (read as
  // -10000000)". Other errors unchanged.
  Error renamed(const Error& e) const {
    const bool is_p = e.parameter() == "bias_p";
    if (!is_p && e.parameter() != "bias_a") return e;
    const std::string& text = is_p ? p : a;
    std::string value = "'" + text + "'";
    const std::string head0 = "head 0: ";
    if (text.find(',') == std::string::npos && e.value().rfind(head0, 0) == 0) {
      const std::string read = e.value().substr(head0.size());
      if (read != text) value += " (read as " + read + ")";
    } else if (e.value() != text) {
      value += " (" + e.value() + ")";
    }
    return Error(e.where(), is_p ? "--bias-p" : "--bias-a", value, e.accepted(), e.problem());
  }

  void describe(Json&) const {}

  KerpleWeights build(const Spec& s) const {
    KerpleWeights w{parse_per_head_list("--bias-p", p, s.heads), parse_per_head_list("--bias-a", a, s.heads)};
    try {
      check_kerple_weights(s, w);
    } catch (const Error& e) {
      throw renamed(e);
    }
    return w;
  }
};

// Heads whose parameter the clamp changed: the effective value differs from the given one rounded to the
// regime's type (megatron: float32; rounding alone is not a clamp).
std::vector<std::int64_t> clamped_heads(const Spec& s, const std::vector<double>& given, std::span<const double> eff) {
  std::vector<std::int64_t> out;
  for (std::size_t h = 0; h < given.size(); ++h) {
    const double rounded =
        s.regime == KerpleRegime::megatron ? static_cast<double>(static_cast<float>(given[h])) : given[h];
    if (eff[h] != rounded) out.push_back(static_cast<std::int64_t>(h));
  }
  return out;
}

// The head of a bias / scores JSON: scheme, spec, the parameters as given (so that a result says what it was made
// from) and as the regime uses them.
Json weights_head(const Spec& s, const KerplePlan& plan) {
  Json head = result_head(s);
  const KerpleWeights& w = plan.weights();
  head["bias_p"] = w.p;
  head["bias_a"] = w.a;
  head["p_effective"] = std::vector<double>(plan.p().begin(), plan.p().end());
  head["a_effective"] = std::vector<double>(plan.a().begin(), plan.a().end());
  head["p_clamped_heads"] = clamped_heads(s, w.p, plan.p());
  head["a_clamped_heads"] = clamped_heads(s, w.a, plan.a());
  head["parameters_note"] =
      std::string("bias_p, bias_a: as given; p_effective, a_effective: what the regime uses, ") +
      (s.kernel == KerpleKernel::power ? "p = min(max(bias_p, 0.01), 2), " : "p = max(bias_p, 0.01), ") +
      "a = max(bias_a, 0.01)" +
      (s.regime == KerpleRegime::megatron ? " on the float32 values (each a float32 number)" : " (doubles)") +
      "; *_clamped_heads: the heads whose parameter the clamp changed";
  return head;
}

std::string bias_note(const Spec& s) {
  return std::string(s.kernel == KerpleKernel::log ? "-p ln(1 + a d)" : "-a d^p") +
         " with p = p_effective[h], a = a_effective[h] and the distance d = q_i - j for j <= q_i, 0 for j > q_i "
         "(-0.0 at d = 0)";
}

// --ulp, --no-fused: the envelope of the megatron regime's float32 steps.
struct EnvelopeFlags {
  UlpFlag ulp;
  bool no_fused = false;

  void add_to(CLI::App* c) {
    ulp.add(c, "Envelope: ulps a float32 log or pow may be off correctly rounded (default 2)");
    c->add_flag("--no-fused", no_fused,
                "Envelope (log kernel): the float32 steps a D and 1 + a D are rounded separately, as eager torch "
                "does (default: also allow them fused into one rounding, as a JIT-compiled or fused kernel does)")
        ->group("Envelope");
  }
  void check(const CLI::App* app) const { ulp.check(app); }
};

struct Kerple {
  using Spec = KerpleSpec;
  using Plan = KerplePlan;
  using Weights = WeightFlags;
  using Envelope = EnvelopeFlags;
  static constexpr const char* name = kScheme;
  static std::size_t bias_size(const Spec& s, const BiasGeometry& g) { return kerple_bias_size(s, g); }
  static Plan plan(const Spec& s, const Weights& w) { return make_plan(s, w.build(s)); }
  static Json head(const Spec& s, const Plan& p) { return weights_head(s, p); }
  static std::string note(const Spec& s) { return bias_note(s); }
  static verify::CheckReport check(const Spec& s, const Weights& w, const verify::BiasTensorInput& in,
                                   const Envelope& e, int threads) {
    return verify::kerple::check_bias(s, w.build(s), in, verify::kerple::EnvelopeAllowance{e.ulp.ulp, !e.no_fused},
                                      threads);
  }
};

}  // namespace

POSENC_CLI_SCHEME(kerple) {
  using Family = BiasFamily<Kerple>;
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: with --mask causal padding keys get "
                                "-inf (KERPLE's distances do not depend on padding)";
  Family::add_bias(registry,
                   "The bias matrix [heads, query_length, key_length] of the kernel with your bias_p, bias_a (queries "
                   "are the last query_length keys); the JSON head gives the clamped parameters the regime uses",
                   mask_help,
                   "Example: posenc bias kerple --preset kerple-log --heads 12 --bias-p 1.2 --bias-a 0.05 --key-length "
                   "2048 --out bias.npy\n"
                   "Example: posenc bias kerple --kernel power --regime megatron --heads 2 --bias-p 0.8,2.5 --bias-a "
                   "0.3,0.005 --key-length 8 --mask causal --format json");
  Family::add_scores(registry,
                     "scale * <q_i, k_j> + bias for q [heads, Lq, d] and k [heads, Lk, d]: bias rows, then one BLAS "
                     "gemm per head accumulating into them",
                     mask_help,
                     "f64 when both inputs are f64, else f32.\n"
                     "Example: posenc scores kerple --preset kerple-log --heads 8 --bias-p 1.2 --bias-a 0.05 --q q.npy "
                     "--k k.npy --out s.npy");
  Family::add_check(registry,
                    "Your bias tensor (.npy [heads, Lq, Lk]) made with your bias_p, bias_a against -p ln(1 + a d) / -a "
                    "d^p of the clamped parameters (budget rows kerple.check.exact.<dtype>) and, for the megatron "
                    "regime, the reference's float32 steps (emulation envelope kerple.check.envelope); exit 0 pass, 1 "
                    "fail",
                    "Example: posenc check kerple --preset kerple-log --heads 4 --bias-p 1.1,0.9,1.4,0.7 "
                    "--bias-a 0.02,0.1,0.5,1 --in bias.npy\n"
                    "Example: posenc check kerple --kernel power --regime exact --heads 12 --bias-p 1.5 --bias-a 0.3 "
                    "--in bias.npy --format json");
}

}  // namespace posenc::cli::scheme_kerple
