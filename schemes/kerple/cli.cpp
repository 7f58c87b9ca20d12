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

// The geometry, checked as the library checks it (errors renamed to the flags).
std::function<void(const BiasGeometry&)> size_check(const Spec& s) {
  return [s](const BiasGeometry& g) { (void)kerple_bias_size(s, g); };
}

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

// ---- bias --------------------------------------------------------------------------------------------

struct BiasFlags {
  SpecOptions<Spec> spec;
  WeightFlags weights;
  OutFlags out;
  BiasGeometryFlags geometry;
  std::string dtype = "f32", threads;
};

template <class T>
void run_bias_typed(const BiasFlags& f, const KerplePlan& plan, const BiasGeometry& g, Format format, Output& out) {
  const Spec& s = plan.spec();
  const TableOptions opts = parse_threads(f.threads);
  const std::size_t n = kerple_bias_size(s, g);
  auto data = allocate<T>(n, "a bias of " + std::to_string(s.heads) + " x " + std::to_string(g.query_length) + " x " +
                                 std::to_string(g.key_length) + " values");
  const std::span<T> bias(data.get(), n);
  plan.bias(g, bias, opts);
  write_bias_tensor(out, format, weights_head(s, plan), bias_note(s), std::span<const T>(bias), g, s.heads);
}

void run_bias(BiasFlags& f) {
  const Spec s = f.spec.build();
  const KerplePlan plan = make_plan(s, f.weights.build(s));
  const BiasGeometry g = f.geometry.geometry(size_check(s));
  const bool f64 = parse_output_dtype(f.dtype) == DType::f64;
  const Format format = choose_format(f.out.format, f.out.out);
  Output out(f.out.out, format == Format::npy);  // the destination is checked before anything is computed
  if (f64) run_bias_typed<double>(f, plan, g, format, out);
  else run_bias_typed<float>(f, plan, g, format, out);
}

// ---- scores ------------------------------------------------------------------------------------------

struct ScoresCommand {
  SpecOptions<Spec> spec;
  WeightFlags weights;
  ScoresFlags scores;
};

void run_scores(ScoresCommand& f) {
  const ScoresInput in = read_scores_input(f.scores.q_path, f.scores.k_path);
  const Spec s = f.spec.build();
  if (s.heads != in.heads)
    throw Error(kScheme, f.spec.given("--heads") ? "--heads" : "heads (from the preset or --spec)", std::to_string(s.heads),
                "the heads of --q and --k, " + std::to_string(in.heads), "differs from the input");
  const KerplePlan plan = make_plan(s, f.weights.build(s));
  run_bias_scores(f.scores, in, plan, weights_head(s, plan), size_check(s));
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  WeightFlags weights;
  InputFlags in;
  ReportFlags report;
  std::string threads;
  std::optional<std::string> key_mask;
  double ulp = 2.0;
  bool no_fused = false;
};

void run_check(CheckFlags& f, CLI::App* app) {
  const NpyArray a = f.in.read();
  const TableOptions opts = parse_threads(f.threads);
  verify::CheckReport rep;
  try {
    check_ulp_allowance(app, "--ulp", f.ulp);
    const verify::kerple::EnvelopeAllowance allowance{f.ulp, !f.no_fused};
    const verify::kerple::BiasInput in = read_bias_tensor(a, f.in.path, f.key_mask);
    const Spec s = f.spec.build();
    if (in.heads != s.heads) throw heads_mismatch(kScheme, f.spec.given("--heads"), s.heads, in.heads);
    const KerpleWeights w = f.weights.build(s);
    rep = verify::kerple::check_bias(s, w, in, allowance, opts.threads);
  } catch (const Error& e) {
    const Error w = f.weights.renamed(e);
    throw SpecOptions<Spec>::renamed(w.parameter() == "key_mask" ? w.renamed("--key-mask") : w);
  }
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

}  // namespace

POSENC_CLI_SCHEME(kerple) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: with --mask causal padding keys get "
                                "-inf (KERPLE's distances do not depend on padding)";
  {
    auto f = std::make_shared<BiasFlags>();
    CLI::App* c = registry.command("bias", kScheme,
                                   "The bias matrix [heads, query_length, key_length] of the kernel with your "
                                   "bias_p, bias_a (queries are the last query_length keys); the JSON head gives "
                                   "the clamped parameters the regime uses");
    f->spec.add_to(c);
    f->weights.add_to(c);
    f->geometry.add_to(c, mask_help);
    c->add_option("--dtype", f->dtype, "f32 (default) | f64")->type_name("T")->group("Output");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Example: posenc bias kerple --preset kerple-log --heads 12 --bias-p 1.2 --bias-a 0.05 --key-length 2048 "
              "--out bias.npy\n"
              "Example: posenc bias kerple --kernel power --regime megatron --heads 2 --bias-p 0.8,2.5 --bias-a 0.3,0.005 "
              "--key-length 8 --mask causal --format json");
    c->callback([f] { run_bias(*f); });
  }
  {
    auto f = std::make_shared<ScoresCommand>();
    CLI::App* c = registry.command("scores", kScheme,
                                   "scale * <q_i, k_j> + bias for q [heads, Lq, d] and k [heads, Lk, d]: bias rows, "
                                   "then one BLAS gemm per head accumulating into them");
    f->spec.add_to(c);
    f->weights.add_to(c);
    f->scores.add_to(c, mask_help);
    c->footer("f64 when both inputs are f64, else f32.\n"
              "Example: posenc scores kerple --preset kerple-log --heads 8 --bias-p 1.2 --bias-a 0.05 --q q.npy --k k.npy "
              "--out s.npy");
    c->callback([f] { run_scores(*f); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your bias tensor (.npy [heads, Lq, Lk]) made with your bias_p, bias_a against -p ln(1 + a d) / -a d^p of "
        "the clamped parameters (budget rows kerple.check.exact.<dtype>) and, for the megatron regime, the "
        "reference's float32 steps (emulation envelope kerple.check.envelope); exit 0 pass, 1 fail");
    f->spec.add_to(c);
    f->weights.add_to(c);
    f->in.add_to(c);
    c->add_option("--key-mask", f->key_mask, "0/1 per key (1 token, 0 padding), e.g. 0011111: --in may hold -inf at "
                  "the padding keys")
        ->type_name("BITS")
        ->group("Input");
    c->add_option("--ulp", f->ulp, "Envelope: ulps a float32 log or pow may be off correctly rounded (default 2)")
        ->type_name("A")
        ->check(CLI::Range(0.0, 1.0e6))
        ->group("Envelope");
    c->add_flag("--no-fused", f->no_fused,
                "Envelope (log kernel): the float32 steps a D and 1 + a D are rounded separately, as eager torch "
                "does (default: also allow them fused into one rounding, as a JIT-compiled or fused kernel does)")
        ->group("Envelope");
    c->add_option("--threads", f->threads, "OpenMP threads for the oracle (0: default)")->type_name("N");
    f->report.add_to(c);
    c->footer("-inf entries are accepted where a causal mask puts them (a key after the query, or a padding key).\n"
              "Example: posenc check kerple --preset kerple-log --heads 4 --bias-p 1.1,0.9,1.4,0.7 "
              "--bias-a 0.02,0.1,0.5,1 --in bias.npy\n"
              "Example: posenc check kerple --kernel power --regime exact --heads 12 --bias-p 1.5 --bias-a 0.3 "
              "--in bias.npy --format json");
    c->callback([f, c] { run_check(*f, c); });
  }
}

}  // namespace posenc::cli::scheme_kerple
