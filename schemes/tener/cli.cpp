// schemes/tener/cli.cpp — TENER's relative attention on the command line: its registration (description, presets and
// flags come from SpecTraits<TenerSpec>, cli/spec_options.hpp) and its verbs:
//   posenc table tener     the table of a call of --length L [2L, d_head] (t = -L .. L - 1, the zero row at -L when
//                          L > init_size / 2); --what weights: the module's whole weights buffer with its zero
//                          padding row (get_embedding(init_size + 1, d_head, 0))
//   posenc index tener     the row each score entry reads: L + j - i (query term), with --key L + i - j (key term)
//   posenc scores tener    pre-softmax scores for q, k [heads, L, d_head] with the layer's r_r_bias and r_w_bias
//                          (.npy [heads, d_head]; zeros when not given), unscaled unless the spec's scale says so
//   posenc check tener     a user's table [2L, d_head] against the exact table and get_embedding's float32 steps
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
#include "posenc/tener.hpp"
#include "registry.hpp"
#include "relative_table_check.hpp"
#include "relative_verbs.hpp"
#include "spec_options.hpp"
#include "schemes/tener/check.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_tener {
namespace {

using Spec = TenerSpec;
constexpr const char* kScheme = "tener";

std::function<void(const BiasGeometry&)> size_check(const Spec& s) {
  return [s](const BiasGeometry& g) { (void)tener_scores_size(s, g); };
}

TenerWeights zero_weights(const Spec& s) {
  return {std::vector<double>(s.heads * s.d_head, 0.0), std::vector<double>(s.heads * s.d_head, 0.0)};
}

// ---- table -------------------------------------------------------------------------------------------

struct TableCommand {
  SpecOptions<Spec> spec;
  RelativeTableFlags table;
  std::string length = "8", what = "table";
  std::optional<std::string> num_embeddings;
};

// --what weights: the module's whole buffer get_embedding(num_embeddings, d_head, padding_idx=0).
void run_weights(TableCommand& f, const CLI::App* app) {
  const Spec s = f.spec.build();
  if (app->count("--length") > 0)
    throw UsageError("--length: '" + f.length + "' given with --what weights; accepted: --num-embeddings for its rows");
  std::size_t N = s.init_size + 1;
  if (f.num_embeddings) {
    const std::int64_t v = parse_int64("--num-embeddings", *f.num_embeddings);
    if (v < 1 || v > (std::int64_t{1} << 31) - 1)
      throw UsageError("--num-embeddings: " + *f.num_embeddings + " is out of range; accepted: an integer in [1, 2^31 - "
                       "1]");
    N = static_cast<std::size_t>(v);
  }
  const auto first = -static_cast<std::int64_t>((N + 1) / 2);
  std::vector<std::int64_t> t(N);
  for (std::size_t c = 0; c < N; ++c) t[c] = first + static_cast<std::int64_t>(c);
  Json head = result_head(s);
  head["what"] = "weights";
  head["num_embeddings"] = N;
  head["origin_shift"] = N / 2 + 1;
  f.table.run(
      N, s.d_head, head,
      "RelativeSinusoidalPositionalEmbedding's weights buffer get_embedding(num_embeddings, d_head, padding_idx=0): "
      "row c = [sin | cos] of the position t = c - (num_embeddings + 1) // 2 (torch.arange(-N//2, N//2)), w_k = "
      "10000^(-k/(h - 1)), row 0 zeroed (padding_idx); the module's forward indexes it at t + origin_shift",
      t, "t",
      [&](std::span<float> o, const TableOptions& opts) { tener_weights(s, N, o, opts); },
      [&](std::span<double> o, const TableOptions& opts) { tener_weights(s, N, o, opts); });
}

void run_table(TableCommand& f, const CLI::App* app) {
  if (f.what == "weights") return run_weights(f, app);
  if (f.what != "table")
    throw UsageError("--what: '" + f.what + "'; accepted: table (the rows of one call, t = -L .. L - 1) | weights (the "
                     "module's whole buffer, padding row included)");
  if (f.num_embeddings)
    throw UsageError("--num-embeddings: '" + *f.num_embeddings + "' given, but only --what weights reads it");
  const Spec s = f.spec.build();
  const std::size_t L = parse_length("--length", f.length);
  if (L > static_cast<std::size_t>(kTenerMaxLength))
    throw UsageError("--length: " + f.length + " is out of range; accepted: an integer in [1, 2^30 - 1]");
  std::vector<std::int64_t> t(2 * L);
  for (std::size_t c = 0; c < 2 * L; ++c) t[c] = static_cast<std::int64_t>(c) - static_cast<std::int64_t>(L);
  f.table.run(
      2 * L, s.d_head, result_head(s),
      "row c = [sin | cos] of t = c - L, w_k = 10000^(-k/(h - 1)); the row of t = -L is zero when L > init_size / 2",
      t, "t",
      [&](std::span<float> o, const TableOptions& opts) { tener_table(s, L, o, opts); },
      [&](std::span<double> o, const TableOptions& opts) { tener_table(s, L, o, opts); });
}

// ---- index -------------------------------------------------------------------------------------------

struct IndexFlags {
  SpecOptions<Spec> spec;
  OutFlags out;
  BiasGeometryFlags geometry;
  std::string threads;
  bool key = false;
};

void run_index(IndexFlags& f) {
  const Spec s = f.spec.build();
  run_index_command(f.geometry, f.threads, f.out, size_check(s), "indices",
                    [&](const BiasGeometry& g, std::span<std::int32_t> idx, const TableOptions& opts) {
    TenerPlan(s, zero_weights(s)).indices(g, idx, f.key, opts);
    Json head = result_head(s);
    head["note"] = f.key ? "L + i - j: the row of `posenc table` the key term k_j . R(i - j) of entry (i, j) reads "
                           "(_transpose_shift)"
                         : "L + j - i: the row of `posenc table` the query term (q_i + r_w_bias) . R(j - i) of entry (i, j) "
                           "reads (_shift)";
    return head;
  });
}

// ---- scores ------------------------------------------------------------------------------------------

struct ScoresCommand {
  SpecOptions<Spec> spec;
  RelativeScoresFlags scores;
  std::optional<std::string> a, b;
};

void run_scores(ScoresCommand& f) {
  const ScoresInput in = read_scores_input(f.scores.scores.q_path, f.scores.scores.k_path);
  if (in.query_length != in.key_length)
    throw UsageError("--q: " + std::to_string(in.query_length) + " queries but --k has " + std::to_string(in.key_length) +
                     " keys; TENER is self-attention (as many queries as keys)");
  const Spec s = spec_for_inputs(f.spec, in, &Spec::heads, &Spec::d_head);
  check_heads(in, s.heads, s.d_head, "--heads", "--d-head");
  const std::size_t H = s.heads, d = s.d_head;
  TenerWeights w;
  w.r_r_bias = read_weight("--r-r-bias", f.a, H * d, {{H, d}, {H * d}}, true);
  w.r_w_bias = read_weight("--r-w-bias", f.b, H * d, {{H, d}, {H * d}}, true);
  std::optional<TenerPlan> plan;
  try {
    plan.emplace(s, w);
  } catch (const Error& e) {
    throw rename_weight_error(e, {{"r_r_bias", "--r-r-bias"}, {"r_w_bias", "--r-w-bias"}});
  }
  Json head = result_head(s);
  head["note"] = "scores[h][i][j] = ((q + r_r_bias).k + (q + r_w_bias).R(j - i) + k.R(i - j)) scale, scale 1 (TENER's "
                 "default) or 1/sqrt(d_head) with --scale-scores true; -inf at padded keys";
  run_relative_scores(f.scores, in, head, s.scale ? 1.0 / std::sqrt(static_cast<double>(d)) : 1.0, size_check(s),
                      [&](auto q, auto k, const BiasGeometry& g, double scale, auto o, const TableOptions& opts,
                          RelativeScoresForm form) { plan->scores(q, k, g, scale, o, opts, form); });
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  TableCheckFlags check;
};

void run_check(CheckFlags& f, CLI::App* app) {
  run_relative_table_check(f.spec, f.check, app, &Spec::d_head, "--d-head",
                           "a table [2L, d_head] (pos_embed of one call)",
                           [&](const Spec& s, const auto& in, const auto& allowance, auto threads) {
                             if (in.rows % 2 != 0)
                               throw UsageError("--in: '" + f.check.in.path + "' has " + std::to_string(in.rows) +
                                                " rows; a TENER table of length L has 2L rows (t = -L .. L - 1)");
                             return verify::tener::check_table(s, in.rows / 2, in, allowance, threads);
                           });
}

}  // namespace

POSENC_CLI_SCHEME(tener) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: padding keys get -inf";
  {
    auto f = std::make_shared<TableCommand>();
    CLI::App* c = registry.command("table", kScheme,
                                   "The table of a call of length L [2L, d_head]: row c = [sin | cos] of t = c - L (the "
                                   "h - 1 denominator), the row of -L zero when L > init_size / 2");
    f->spec.add_to(c);
    c->add_option("--length", f->length, "L: the tokens of the call (default 8)")->type_name("N")->group("Geometry");
    c->add_option("--what", f->what,
                  "table (default): the rows of one call [2L, d_head]; weights: the module's whole weights buffer "
                  "get_embedding(num_embeddings, d_head, padding_idx=0) [num_embeddings, d_head], positions -N//2 .. "
                  "N//2 - 1 with row 0 zeroed (fastnlp/TENER@d2614d50 modules/relative_transformer.py)")
        ->type_name("table|weights");
    c->add_option("--num-embeddings", f->num_embeddings,
                  "with --what weights: N, the buffer's rows: an integer in [1, 2^31 - 1] (default init_size + 1, a "
                  "fresh module's; 2 L after a call of length L > init_size / 2 rebuilt it)")
        ->type_name("N")
        ->group("Geometry");
    f->table.add_to(c);
    c->footer("Example: posenc table tener --preset tener-conll2003 --what weights --out weights.npy\n"
              "Example: posenc table tener --preset tener-conll2003 --length 128 --out pos_embed.npy\n"
              "Example: posenc table tener --d-head 4 --length 3 --regime exact --format csv");
    c->callback([f, c] { run_table(*f, c); });
  }
  {
    auto f = std::make_shared<IndexFlags>();
    CLI::App* c = registry.command("index", kScheme,
                                   "The row of the table each score entry reads: L + j - i (query term), with --key L + "
                                   "i - j (key term) [L, L]");
    f->spec.add_to(c);
    f->geometry.add_to(c, mask_help + " (not for index: an index matrix has no mask)");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->add_flag("--key", f->key, "the key term's rows L + i - j instead of the query term's")->group("Output");
    c->footer("Example: posenc index tener --query-length 5 --key-length 5 --format csv");
    c->callback([f] { run_index(*f); });
  }
  {
    auto f = std::make_shared<ScoresCommand>();
    CLI::App* c = registry.command(
        "scores", kScheme,
        "((q + r_r_bias).k + _shift((q + r_w_bias) R^T) + _transpose_shift(k R^T)) scale for q, k [heads, L, d_head]; "
        "-inf at padded keys");
    f->spec.add_to(c);
    f->scores.add_to(c, mask_help, "default 1/sqrt(d_head)");
    add_weight_option(c, "--r-r-bias", f->a, "r_r_bias (the content term's bias): .npy [heads, d_head] (default zeros)");
    add_weight_option(c, "--r-w-bias", f->b, "r_w_bias (the position term's bias): .npy [heads, d_head] (default zeros)");
    c->footer("heads and d_head come from --q unless given; f64 when --q and --k are f64, else f32.\n"
              "Example: posenc scores tener --q q.npy --k k.npy --r-r-bias a.npy --r-w-bias b.npy --out s.npy");
    c->callback([f] { run_scores(*f); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your table (.npy [2L, d_head], pos_embed of one call) against the exact table (budget rows "
        "sinusoidal.check.exact.<dtype>) and get_embedding's float32 steps (emulation envelope); exit 0 pass, 1 fail");
    f->spec.add_to(c);
    f->check.add_to(c, "exp");
    c->footer("L and d_head come from the table's shape unless given. The verdict is held to the regime.\n"
              "Example: posenc check tener --preset tener-ontonotes --in pos_embed.npy --format json");
    c->callback([f, c] { run_check(*f, c); });
  }
}

}  // namespace posenc::cli::scheme_tener
