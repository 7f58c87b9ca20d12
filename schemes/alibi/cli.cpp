// schemes/alibi/cli.cpp — ALiBi on the command line: its registration (description, presets and flags come from
// SpecTraits<AlibiSpec>, cli/spec_options.hpp) and what is its own:
//   posenc freqs alibi    the slopes m_h of the regime (and the exponent e_h of m_h = 2^(-b e_h)); --what get_slopes:
//                         the float64 list of the reference Python's get_slopes(heads)
//   posenc bias alibi     the bias matrix [heads, query_length, key_length] of the variant (--mask causal: -inf
//                         where a key is not visible)
//   posenc scores alibi   scale <q_i, k_j> + bias for q [heads, Lq, d], k [heads, Lk, d] (bias rows + BLAS gemm)
//   posenc check alibi    a user's bias tensor (or --slopes vector) against the oracle: budget row (exact) and the
//                         emulation envelope (ofirpress, bloom, mpt)
#include <cstdint>
#include <functional>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "schemes/alibi/check.hpp"
#include "args.hpp"
#include "bias_check_input.hpp"
#include "bias_family.hpp"
#include "bias_verbs.hpp"
#include "identify_verb.hpp"
#include "output.hpp"
#include "posenc/alibi.hpp"
#include "posenc/alibi_spec.hpp"
#include "posenc/error.hpp"
#include "registry.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_alibi {
namespace {

using Spec = AlibiSpec;
constexpr const char* kScheme = "alibi";

struct Alibi {
  using Spec = AlibiSpec;
  using Plan = AlibiPlan;
  using Weights = NoWeightFlags;
  static constexpr const char* name = kScheme;
  static std::size_t bias_size(const Spec& s, const BiasGeometry& g) { return alibi_bias_size(s, g); }
  static Plan plan(const Spec& s, const Weights&) { return make_plan(s); }
  static Json head(const Spec& s, const Plan&) { return result_head(s); }
  static std::string note(const Spec& s) {
    return std::string(EnumTraits<AlibiVariant>::values[*enum_index(s.variant)].meaning);
  }
};

// ---- freqs (slopes) ------------------------------------------------------------------------------------

struct FreqFlags {
  SpecOptions<Spec> spec;
  OutFlags out;
  std::string what = "slopes";
};

void run_freqs(FreqFlags& f) {
  const Spec s = f.spec.build();
  const Format format = choose_format(f.out.format, f.out.out);
  if (f.what != "slopes" && f.what != "get_slopes")
    throw UsageError("--what: '" + f.what + "'; accepted: slopes (the regime's m_h) | get_slopes (the float64 list of "
                     "ofirpress's get_slopes(heads))");
  if (f.what == "get_slopes" && s.bias_max != 8.0)
    throw UsageError("--bias-max: " + std::to_string(s.bias_max) + " with --what get_slopes; accepted: 8 (get_slopes "
                     "has no alibi_bias_max)");
  const AlibiPlan plan = make_plan(s);
  const std::vector<double> python = f.what == "get_slopes" ? alibi_get_slopes(s.heads) : std::vector<double>{};
  const std::span<const double> m = f.what == "get_slopes" ? std::span<const double>(python) : plan.slopes();
  const std::size_t n = m.size(), c = alibi_power_of_two_floor(n);
  std::vector<std::int64_t> head(n), num(n), den(n);
  for (std::size_t h = 0; h < n; ++h) {
    head[h] = static_cast<std::int64_t>(h);
    num[h] = static_cast<std::int64_t>(h < c ? h + 1 : 2 * (h - c) + 1);
    den[h] = static_cast<std::int64_t>(h < c ? c : 2 * c);
  }
  Output out(f.out.out, format == Format::npy);
  switch (format) {
    case Format::npy: write_npy(out.file(), m, {n}); break;
    case Format::json: {
      Json head_json = result_head(s);
      head_json["heads"] = n;
      head_json["what"] = f.what;
      head_json["note"] = f.what == "get_slopes"
                              ? "slopes: get_slopes(heads) as Python computes it in float64 (ofirpress/"
                                "attention_with_linear_biases@4b92f28a fairseq/models/transformer.py; gpt-neox AliBi): "
                                "start * start**i per power-of-two list, start = 2**(-2**-(log2(c) - 3)), each step "
                                "correctly rounded; the exact slope is 2^(-8 e_num[h] / e_den[h])"
                          : s.regime == AlibiRegime::exact
                              ? "m_h = 2^(-bias_max * e_num[h] / e_den[h]) rounded to double"
                              : "the float32 slope of the regime's steps (exact in double); the exact slope is "
                                "2^(-bias_max * e_num[h] / e_den[h])";
      const std::vector<JsonArray> arrays{{"e_num", std::span<const std::int64_t>(num), 0},
                                          {"e_den", std::span<const std::int64_t>(den), 0},
                                          {"slopes", m, 0}};
      write_json(out.file(), head_json, arrays);
      break;
    }
    case Format::csv:
      write_csv(out.file(), {{"head", head}, {"e_num", num}, {"e_den", den}}, {"slope"}, m, n);
      break;
  }
  out.commit();
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  InputFlags in;
  ReportFlags report;
  std::string threads;
  std::optional<std::string> key_mask;
  bool slopes = false;
  double ulp_pow = 2.0;
};

void run_check(CheckFlags& f, CLI::App* app) {
  const NpyArray a = f.in.read();
  const std::vector<std::size_t>& sh = a.shape;
  const std::string file = "--in: '" + f.in.path + "' holds an array of shape " + shape_text(sh);
  const TableOptions opts = parse_threads(f.threads);
  verify::CheckReport rep;
  try {
    check_ulp_allowance(app, "--ulp-pow", f.ulp_pow);
    const verify::alibi::EnvelopeAllowance allowance{f.ulp_pow};
    const Json describe = {{"file", f.in.path}, {"stored", std::string(to_string(a.stored))}, {"shape", shape_text(sh)}};
    if (f.slopes) {
      if (sh.size() != 1) throw UsageError(file + "; accepted with --slopes: one slope per head, shape (heads,)");
      const Spec s = f.spec.build();
      rep = verify::alibi::check_slopes(s, a.values, dtype_of(a.stored), describe, allowance);
    } else {
      const verify::alibi::BiasInput in = read_bias_tensor(a, f.in.path, f.key_mask);
      const Spec s = f.spec.build();
      if (in.heads != s.heads) throw heads_mismatch(kScheme, f.spec.given("--heads"), s.heads, in.heads);
      rep = verify::alibi::check_bias(s, in, allowance, opts.threads);
    }
  } catch (const Error& e) {
    throw SpecOptions<Spec>::renamed(e);
  }
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

}  // namespace

POSENC_CLI_SCHEME(alibi) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: BLOOM's key_counted positions count "
                                "the tokens; with --mask causal padding keys get -inf";
  {
    auto f = std::make_shared<FreqFlags>();
    CLI::App* c = registry.command("freqs", kScheme, "The slopes m_h of the regime, with the exponent e_h of 2^(-b e_h)");
    f->spec.add_to(c);
    f->out.add_to(c, "json | csv | npy");
    c->add_option("--what", f->what,
                  "slopes (default): m_h of the regime; get_slopes: the float64 list ofirpress's get_slopes(heads) "
                  "returns in Python (start * start**i, every other slope of the 2c list for non-powers of two; "
                  "before torch.Tensor rounds it to float32), whatever the regime; npy as <f8")
        ->type_name("slopes|get_slopes");
    c->footer("Example: posenc freqs alibi --heads 12 --what get_slopes --out slopes.npy\n"
              "Example: posenc freqs alibi --heads 12 --format csv\n"
              "Example: posenc freqs alibi --preset bloom --heads 112 --format json");
    c->callback([f] { run_freqs(*f); });
  }
  add_identify_command(
      registry, kScheme,
      "Which ALiBi convention slopes (heads,) or a bias tensor (heads, Lq, Lk) follow: preset, regime, variant, or "
      "the nearest one and where it differs",
      "",
      "The head count is the input's; a tensor is compared on its last 16 query rows (queries are the last Lq keys),\n"
      "-inf where a causal mask hides a key. Exit status 0 when a convention passes its check.\n"
      "Example: posenc identify alibi --in slopes.npy --format json\n"
      "Example: posenc identify alibi --in bias.npy",
      [](const NpyArray& a, const IdentifyFlags& f, bool) {
        try {
          return verify::alibi::identify({a.values, a.shape, dtype_of(a.stored)});
        } catch (const Error& e) {
          if (e.parameter() != "shape") throw;
          throw UsageError("--in: '" + f.in.path + "' holds an array of shape " + shape_text(a.shape) +
                           "; accepted: " + e.accepted());
        }
      });
  using Family = BiasFamily<Alibi>;
  Family::add_bias(registry,
                   "The bias matrix [heads, query_length, key_length] of the variant (queries are the last "
                   "query_length keys)",
                   mask_help,
                   "Example: posenc bias alibi --preset mpt --heads 32 --key-length 2048 --out bias.npy\n"
                   "Example: posenc bias alibi --heads 6 --variant key_counted --key-length 8 --key-mask 00111111 "
                   "--format json");
  Family::add_scores(registry,
                     "scale * <q_i, k_j> + bias for q [heads, Lq, d] and k [heads, Lk, d]: bias rows, then one BLAS "
                     "gemm per head accumulating into them",
                     mask_help,
                     "f64 when both inputs are f64, else f32.\n"
                     "Example: posenc scores alibi --preset gpt-neox --heads 8 --q q.npy --k k.npy --out s.npy");
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your bias tensor (.npy [heads, Lq, Lk]) or, with --slopes, your slopes against m_h x (budget rows "
        "alibi.check.exact.<dtype>) and, for the ofirpress, bloom and mpt regimes, their float32 steps (emulation "
        "envelope); exit 0 pass, 1 fail");
    f->spec.add_to(c);
    f->in.add_to(c);
    c->add_flag("--slopes", f->slopes, "--in holds the slopes, shape (heads,)")->group("Input");
    c->add_option("--key-mask", f->key_mask, mask_help)->type_name("BITS")->group("Input");
    c->add_option("--ulp-pow", f->ulp_pow, "Envelope: ulps a float32 pow may be off correctly rounded (default 2)")
        ->type_name("A")
        ->check(CLI::Range(0.0, 1.0e6))
        ->group("Envelope");
    c->add_option("--threads", f->threads, "OpenMP threads for the oracle (0: default)")->type_name("N");
    f->report.add_to(c);
    c->footer("-inf entries are accepted where a causal mask puts them (a key after the query, or a padding key).\n"
              "Example: posenc check alibi --preset bloom --heads 16 --in bias.npy --key-mask 0011111111\n"
              "Example: posenc check alibi --heads 12 --slopes --in slopes.npy");
    c->callback([f, c] { run_check(*f, c); });
  }
}

}  // namespace posenc::cli::scheme_alibi
