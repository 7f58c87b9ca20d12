// cli/bias_family.hpp — the verbs `bias`, `scores` and `check` of an additive-bias scheme, written once for every
// scheme whose bias is a plan of (spec, trained weights) on the shared geometry (ALiBi, KERPLE, T5). A scheme file
// describes itself in a struct S and registers the verbs with BiasFamily<S>::add_bias / add_scores / add_check; what
// is its own (T5's index, ALiBi's slopes) stays in its file.
//
// S provides:
//   using Spec, Plan;
//   using Weights    the weight flags: add_to(CLI::App*), build(const Spec&) (checked, errors naming the flags),
//                    renamed(const Error&) (an Error of the scheme's weight check under the flag), describe(Json&)
//                    (what `check` adds to the input's description); NoWeightFlags for none
//   using Envelope   check's envelope flags: add_to(CLI::App*), check(const CLI::App*) (UsageError naming a flag)
//   static constexpr const char* name;
//   static std::size_t bias_size(const Spec&, const BiasGeometry&)   the library's size check
//   static Plan plan(const Spec&, const Weights&)
//   static Json head(const Spec&, const Plan&)                       the JSON head of bias and scores
//   static std::string note(const Spec&)                            what a bias entry is
//   static verify::CheckReport check(const Spec&, const Weights&, const verify::BiasTensorInput&, const Envelope&,
//                                    int threads)                    (add_check only)
// Header-only, included by the scheme files alone (like bias_check_input.hpp: the checkers are in posenc_verify).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "bias_check_input.hpp"
#include "bias_verbs.hpp"
#include "output.hpp"
#include "posenc/error.hpp"
#include "registry.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

namespace posenc::cli {

// A scheme without trained parameters (ALiBi).
struct NoWeightFlags {
  void add_to(CLI::App*) {}
  Error renamed(const Error& e) const { return e; }
  void describe(Json&) const {}
};

// What `posenc scores <scheme>` defaults to and says about it (T5: scale 1, no causal mask).
struct ScoresDefaults {
  std::optional<std::string> scale;  // nullopt: 1/sqrt(head_dim)
  std::string scale_help = "default 1/sqrt(head_dim)";
  std::string mask = "causal";
};

template <class S>
struct BiasFamily {
  using Spec = typename S::Spec;
  using Plan = typename S::Plan;

  static std::function<void(const BiasGeometry&)> size_check(const Spec& s) {
    return [s](const BiasGeometry& g) { (void)S::bias_size(s, g); };
  }

  // ---- bias ----------------------------------------------------------------------------------------------------

  struct BiasFlags {
    SpecOptions<Spec> spec;
    typename S::Weights weights;
    OutFlags out;
    BiasGeometryFlags geometry;
    std::string dtype = "f32", threads;
  };

  template <class T>
  static void write_bias(const BiasFlags& f, const Spec& s, const Plan& plan, const BiasGeometry& g, Format format,
                         Output& out) {
    const TableOptions opts = parse_threads(f.threads);
    const std::size_t n = S::bias_size(s, g);
    auto data = allocate<T>(n, "a bias of " + std::to_string(s.heads) + " x " + std::to_string(g.query_length) + " x " +
                                   std::to_string(g.key_length) + " values");
    const std::span<T> bias(data.get(), n);
    plan.bias(g, bias, opts);
    write_bias_tensor(out, format, S::head(s, plan), S::note(s), std::span<const T>(bias), g, s.heads);
  }

  static void run_bias(BiasFlags& f) {
    const Spec s = f.spec.build();
    const Plan plan = S::plan(s, f.weights);
    const BiasGeometry g = f.geometry.geometry(size_check(s));
    const bool f64 = parse_output_dtype(f.dtype) == DType::f64;
    const Format format = choose_format(f.out.format, f.out.out);
    Output out(f.out.out, format == Format::npy);  // the destination is checked before anything is computed
    if (f64) write_bias<double>(f, s, plan, g, format, out);
    else write_bias<float>(f, s, plan, g, format, out);
  }

  // posenc bias <scheme>: `help` says what the matrix is, `mask_help` what --key-mask does, `footer` the examples.
  static void add_bias(Registry& registry, const std::string& help, const std::string& mask_help,
                       const std::string& footer) {
    auto f = std::make_shared<BiasFlags>();
    CLI::App* c = registry.command("bias", S::name, help);
    f->spec.add_to(c);
    f->weights.add_to(c);
    f->geometry.add_to(c, mask_help);
    c->add_option("--dtype", f->dtype, "f32 (default) | f64")->type_name("T")->group("Output");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer(footer);
    c->callback([f] { run_bias(*f); });
  }

  // ---- scores --------------------------------------------------------------------------------------------------

  struct ScoresCommand {
    SpecOptions<Spec> spec;
    typename S::Weights weights;
    ScoresFlags scores;
  };

  static void run_scores(ScoresCommand& f) {
    const ScoresInput in = read_scores_input(f.scores.q_path, f.scores.k_path);
    const Spec s = f.spec.build();
    if (s.heads != in.heads)
      throw Error(S::name, f.spec.given("--heads") ? "--heads" : "heads (from the preset or --spec)",
                  std::to_string(s.heads), "the heads of --q and --k, " + std::to_string(in.heads),
                  "differs from the input");
    const Plan plan = S::plan(s, f.weights);
    run_bias_scores(f.scores, in, plan, S::head(s, plan), size_check(s));
  }

  static void add_scores(Registry& registry, const std::string& help, const std::string& mask_help,
                         const std::string& footer, const ScoresDefaults& defaults = {}) {
    auto f = std::make_shared<ScoresCommand>();
    CLI::App* c = registry.command("scores", S::name, help);
    f->spec.add_to(c);
    f->weights.add_to(c);
    f->scores.default_scale = defaults.scale;
    f->scores.add_to(c, mask_help, defaults.scale_help, defaults.mask);
    c->footer(footer);
    c->callback([f] { run_scores(*f); });
  }

  // ---- check ---------------------------------------------------------------------------------------------------

  struct CheckFlags {
    SpecOptions<Spec> spec;
    typename S::Weights weights;
    InputFlags in;
    ReportFlags report;
    std::string threads;
    std::optional<std::string> key_mask;
    typename S::Envelope envelope;
  };

  static void run_check(CheckFlags& f, const CLI::App* app) {
    const NpyArray a = f.in.read();
    const TableOptions opts = parse_threads(f.threads);
    verify::CheckReport rep;
    try {
      f.envelope.check(app);
      verify::BiasTensorInput in = read_bias_tensor(a, f.in.path, f.key_mask);
      f.weights.describe(in.describe);
      const Spec s = f.spec.build();
      if (in.heads != s.heads) throw heads_mismatch(S::name, f.spec.given("--heads"), s.heads, in.heads);
      rep = S::check(s, f.weights, in, f.envelope, opts.threads);
    } catch (const Error& e) {
      const Error w = f.weights.renamed(e);
      throw SpecOptions<Spec>::renamed(w.parameter() == "key_mask" ? w.renamed("--key-mask") : w);
    }
    f.report.write(rep.to_json(), rep.to_markdown());
    exit_status() = rep.passed() ? 0 : 1;
  }

  static void add_check(Registry& registry, const std::string& help, const std::string& footer) {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command("check", S::name, help);
    f->spec.add_to(c);
    f->weights.add_to(c);
    f->in.add_to(c);
    c->add_option("--key-mask", f->key_mask, "0/1 per key (1 token, 0 padding), e.g. 0011111: --in may hold -inf at "
                  "the padding keys")
        ->type_name("BITS")
        ->group("Input");
    f->envelope.add_to(c);
    c->add_option("--threads", f->threads, "OpenMP threads for the oracle (0: default)")->type_name("N");
    f->report.add_to(c);
    c->footer("-inf entries are accepted where a causal mask puts them (a key after the query, or a padding key).\n" +
              footer);
    c->callback([f, c] { run_check(*f, c); });
  }
};

// --ulp A: how many ulps the scheme's float32 transcendental step may be off correctly rounded (the envelope's
// allowance; `help` names the step).
struct UlpFlag {
  double ulp = 2.0;
  void add(CLI::App* c, const std::string& help) {
    c->add_option("--ulp", ulp, help)->type_name("A")->check(CLI::Range(0.0, 1.0e6))->group("Envelope");
  }
  void check(const CLI::App* app) const { check_ulp_allowance(app, "--ulp", ulp); }
};

}  // namespace posenc::cli
