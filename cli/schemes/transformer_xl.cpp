// cli/schemes/transformer_xl.cpp — Transformer-XL's relative attention on the command line: its registration
// (description, presets and flags come from SpecTraits<TransformerXlSpec>, cli/spec_options.hpp) and its verbs:
//   posenc table transformer_xl    R of a call with --key-length keys [klen, d_model] (pos_seq klen - 1 .. 0, clamped)
//   posenc index transformer_xl    the row of R each score entry reads, -1 where undefined (j > q_i) [Lq, Lk]
//   posenc scores transformer_xl   pre-softmax scores for q [heads, Lq, d_head], k [heads, Lk, d_head] (Lk = memory +
//                                  Lq) with the layer's r_w_bias, r_r_bias (.npy [heads, d_head]; zeros when not given)
//                                  and r_net weight (.npy [heads * d_head, d_model])
//   posenc check transformer_xl    a user's R [klen, d_model] against the exact table and the float32 steps
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "args.hpp"
#include "bias_verbs.hpp"
#include "output.hpp"
#include "posenc/error.hpp"
#include "posenc/transformer_xl.hpp"
#include "registry.hpp"
#include "relative_verbs.hpp"
#include "spec_options.hpp"
#include "transformer_xl/check.hpp"
#include "verbs.hpp"

namespace posenc::cli {
namespace {

using Spec = TransformerXlSpec;
constexpr const char* kScheme = "transformer_xl";

std::function<void(const BiasGeometry&)> size_check(const Spec& s) {
  return [s](const BiasGeometry& g) { (void)transformer_xl_scores_size(s, g); };
}

std::vector<std::int64_t> distances(const Spec& s, std::size_t klen) {
  std::vector<std::int64_t> p(klen);
  for (std::size_t c = 0; c < klen; ++c) p[c] = transformer_xl_position(s, static_cast<std::int64_t>(klen - 1 - c));
  return p;
}

// ---- table -------------------------------------------------------------------------------------------

struct TableCommand {
  SpecOptions<Spec> spec;
  RelativeTableFlags table;
  std::string key_length = "8";
};

void run_table(TableCommand& f) {
  const Spec s = f.spec.build();
  const std::size_t klen = parse_length("--key-length", f.key_length);
  const std::vector<std::int64_t> pos = distances(s, klen);
  f.table.run(
      klen, s.d_model, result_head(s),
      "row c = [sin | cos] of pos_seq[c] = min(klen - 1 - c, clamp_len) (descending distances), w_k = "
      "10000^(-2k/d_model)",
      pos, "position",
      [&](std::span<float> t, const TableOptions& o) { transformer_xl_table(s, klen, t, o); },
      [&](std::span<double> t, const TableOptions& o) { transformer_xl_table(s, klen, t, o); });
}

// ---- index -------------------------------------------------------------------------------------------

struct IndexFlags {
  SpecOptions<Spec> spec;
  OutFlags out;
  BiasGeometryFlags geometry;
  std::string threads;
};

void run_index(IndexFlags& f) {
  const Spec s = f.spec.build();
  const BiasGeometry g = f.geometry.geometry(size_check(s));
  if (g.mask != BiasMask::none || !g.key_mask.empty())
    throw UsageError("--mask / --key-mask: an index matrix has no mask (it is an index); give them to scores");
  const TableOptions opts = parse_threads(f.threads);
  const Format format = choose_format(f.out.format, f.out.out);
  Output out(f.out.out, format == Format::npy);
  const std::size_t Lq = g.query_length, Lk = g.key_length, n = Lq * Lk;
  auto i32 = allocate<std::int32_t>(n, "an index matrix of " + std::to_string(Lq) + " x " + std::to_string(Lk) + " entries");
  const std::span<std::int32_t> idx(i32.get(), n);
  const std::size_t hd = s.heads * s.d_head;
  TransformerXlPlan(s, {std::vector<double>(hd, 0.0), std::vector<double>(hd, 0.0), std::vector<double>(hd * s.d_model, 0.0)})
      .indices(g, idx, opts);
  Json head = result_head(s);
  head["note"] = "c(i, j) = key_length - 1 - (q_i - j): the row of `posenc table` (the _rel_shift column) that entry (i, "
                 "j) reads, -1 where the entry is undefined (j > q_i: _rel_shift leaves junk there); q_i = key_length - "
                 "query_length + i";
  write_index_matrix(out, format, head, "indices", idx, Lq, Lk);
}

// ---- scores ------------------------------------------------------------------------------------------

struct ScoresCommand {
  SpecOptions<Spec> spec;
  RelativeScoresFlags scores;
  std::optional<std::string> u, v, r_net;
};

void run_scores(ScoresCommand& f) {
  const ScoresInput in = read_scores_input(f.scores.scores.q_path, f.scores.scores.k_path);
  const Spec s = spec_for_inputs(f.spec, in, &Spec::heads, &Spec::d_head);
  check_heads(in, s.heads, s.d_head, "--heads", "--d-head");
  const std::size_t H = s.heads, d = s.d_head, dm = s.d_model;
  TransformerXlWeights w;
  w.r_w_bias = read_weight("--r-w-bias", f.u, H * d, {{H, d}, {H * d}}, true);
  w.r_r_bias = read_weight("--r-r-bias", f.v, H * d, {{H, d}, {H * d}}, true);
  w.r_net = read_weight("--r-net", f.r_net, H * d * dm, {{H * d, dm}}, false);
  std::optional<TransformerXlPlan> plan;
  try {
    plan.emplace(s, w);
  } catch (const Error& e) {
    throw rename_weight_error(e, {{"r_w_bias", "--r-w-bias"}, {"r_r_bias", "--r-r-bias"}, {"r_net", "--r-net"}});
  }
  Json head = result_head(s);
  head["note"] = "scores[h][i][j] = scale ((q + r_w_bias).k + (q + r_r_bias).r_net R[c(i, j)]), c(i, j) = klen - 1 - "
                 "(q_i - j); -inf where j > q_i (undefined), where same_length hides the key and at padded keys";
  run_relative_scores(f.scores, in, head, 1.0 / std::sqrt(static_cast<double>(d)), size_check(s),
                      [&](auto q, auto k, const BiasGeometry& g, double scale, auto o, const TableOptions& opts,
                          RelativeScoresForm form) { plan->scores(q, k, g, scale, o, opts, form); });
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  TableCheckFlags check;
};

void run_check(CheckFlags& f, CLI::App* app) {
  const NpyArray a = f.check.in.read();
  if (a.shape.size() != 2)
    throw UsageError("--in: '" + f.check.in.path + "' holds an array of shape " + shape_text(a.shape) +
                     "; accepted: a table [key_length, d_model] (pos_emb of one call)");
  const auto [ulp_func, ulp_trig] = f.check.allowance(app);
  const reference::EnvelopeAllowance allowance{ulp_func, ulp_trig};
  const TableOptions opts = parse_threads(f.check.threads);
  test::CheckReport rep;
  try {
    Spec s = f.spec.build();
    if (!f.spec.given("--spec") && !f.spec.given("--preset") && !f.spec.given("--d-model")) {
      s.d_model = a.shape[1];
      validate(s);
    }
    test::relative::TableInput in{a.values, a.shape[0], a.shape[1], dtype_of(a.stored), {}};
    in.describe = {{"file", f.check.in.path}, {"stored", std::string(to_string(a.stored))}, {"shape", shape_text(a.shape)}};
    rep = test::transformer_xl::check_table(s, a.shape[0], in, allowance, opts.threads);
  } catch (const Error& e) {
    throw SpecOptions<Spec>::renamed(e);
  }
  f.check.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

}  // namespace

POSENC_CLI_SCHEME(transformer_xl) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: padding keys get -inf";
  {
    auto f = std::make_shared<TableCommand>();
    CLI::App* c = registry.command("table", kScheme,
                                   "R of a call with --key-length keys [klen, d_model]: row c = [sin | cos] of the "
                                   "distance min(klen - 1 - c, clamp_len) (mem_transformer.py's pos_emb)");
    f->spec.add_to(c);
    c->add_option("--key-length", f->key_length, "klen = memory + query length: the rows (default 8)")
        ->type_name("N")
        ->group("Geometry");
    f->table.add_to(c);
    c->footer("Example: posenc table transformer_xl --preset txl-wt103-base --key-length 704 --out pos_emb.npy\n"
              "Example: posenc table transformer_xl --d-model 8 --key-length 4 --regime exact --format csv");
    c->callback([f] { run_table(*f); });
  }
  {
    auto f = std::make_shared<IndexFlags>();
    CLI::App* c = registry.command("index", kScheme,
                                   "The row c(i, j) = klen - 1 - (q_i - j) of R each score entry reads, -1 where "
                                   "undefined (keys after the query) [query_length, key_length]");
    f->spec.add_to(c);
    f->geometry.add_to(c, mask_help + " (not for index: an index matrix has no mask)");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Example: posenc index transformer_xl --query-length 4 --key-length 7 --format csv");
    c->callback([f] { run_index(*f); });
  }
  {
    auto f = std::make_shared<ScoresCommand>();
    CLI::App* c = registry.command(
        "scores", kScheme,
        "scale ((q + u).k + rel_shift((q + v) R r_net^T)) for q [heads, Lq, d_head], k [heads, Lk, d_head] (Lk = "
        "memory + Lq); -inf where undefined or hidden");
    f->spec.add_to(c);
    f->scores.add_to(c, mask_help, "default 1/sqrt(d_head)");
    add_weight_option(c, "--r-w-bias", f->u, "u = r_w_bias: .npy [heads, d_head] (default zeros)");
    add_weight_option(c, "--r-r-bias", f->v, "v = r_r_bias: .npy [heads, d_head] (default zeros)");
    add_weight_option(c, "--r-net", f->r_net, "r_net.weight: .npy [heads * d_head, d_model] (required)");
    c->footer("heads and d_head come from --q unless given; f64 when --q and --k are f64, else f32.\n"
              "Example: posenc scores transformer_xl --d-model 16 --q q.npy --k k.npy --r-net r_net.npy --out s.npy");
    c->callback([f] { run_scores(*f); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your R (.npy [key_length, d_model], pos_emb of one call) against the exact table (budget rows "
        "sinusoidal.check.exact.<dtype>) and PositionalEmbedding's float32 steps (emulation envelope); exit 0 pass, 1 "
        "fail");
    f->spec.add_to(c);
    f->check.add_to(c, "pow");
    c->footer("key_length and d_model come from the table's shape unless given. The verdict is held to the regime.\n"
              "Example: posenc check transformer_xl --preset txl-wt103-base --in pos_emb.npy --format json");
    c->callback([f, c] { run_check(*f, c); });
  }
}

}  // namespace posenc::cli
