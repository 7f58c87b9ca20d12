// schemes/transformer_xl/cli.cpp — Transformer-XL's relative attention on the command line: its registration
// (description, presets and flags come from SpecTraits<TransformerXlSpec>, cli/spec_options.hpp) and its verbs:
//   posenc table transformer_xl    R of a call with --key-length keys [klen, d_model] (pos_seq klen - 1 .. 0, clamped)
//   posenc index transformer_xl    the row of R each score entry reads, -1 where undefined (j > q_i) [Lq, Lk];
//                                  --what junk: the 0/1 mask of the entries _rel_shift leaves as junk; --what
//                                  shifted: _rel_shift (and zero_triu) of a user's matrix, bit for bit
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
#include "relative_table_check.hpp"
#include "relative_verbs.hpp"
#include "spec_options.hpp"
#include "schemes/transformer_xl/check.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_transformer_xl {
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
  std::string threads, what = "index";
  std::optional<std::string> in;
  bool zero_triu = false;
};

enum class IndexWhat { index, junk, shifted };

IndexWhat parse_index_what(const std::string& what) {
  if (what == "index") return IndexWhat::index;
  if (what == "junk") return IndexWhat::junk;
  if (what == "shifted") return IndexWhat::shifted;
  throw UsageError("--what: '" + what + "'; accepted: index (the row of R each entry reads, -1 where junk) | junk (1 "
                   "where _rel_shift leaves junk, j > q_i) | shifted (_rel_shift of --in, junk included)");
}

// _rel_shift(x, zero_triu) of mem_transformer.py for x [qlen, klen, ...] (the shift moves the first two axes; the
// trailing ones, bsz and n_head in the code, ride along), in x's own type T. zero_triu multiplies by
// tril(ones(qlen, klen), klen - qlen) as the code does, so a junk entry becomes x * 0 (-0 for a negative one, NaN
// for an infinite one), and a kept entry x * 1 = x.
template <class T>
std::vector<T> rel_shift_all(const NpyArray& a, std::size_t Lq, std::size_t Lk, std::size_t inner, bool zero_triu) {
  const std::size_t m = Lq * Lk;
  std::vector<T> x(m), y(m), out(m * inner);
  for (std::size_t t = 0; t < inner; ++t) {
    for (std::size_t e = 0; e < m; ++e) x[e] = static_cast<T>(a.values[e * inner + t]);
    transformer_xl_rel_shift(std::span<const T>(x), Lq, Lk, std::span<T>(y));
    for (std::size_t i = 0; i < Lq; ++i)
      for (std::size_t j = 0; j < Lk; ++j) {
        T v = y[i * Lk + j];
        if (zero_triu) v = v * (j <= Lk - Lq + i ? T(1) : T(0));
        out[(i * Lk + j) * inner + t] = v;
      }
  }
  return out;
}

std::vector<std::int64_t> junk_mask(std::size_t Lq, std::size_t Lk) {
  std::vector<std::int64_t> junk(Lq * Lk);
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j) junk[i * Lk + j] = j > Lk - Lq + i ? 1 : 0;
  return junk;
}

template <class T>
void write_shifted(Output& out, Format format, Json head, const std::vector<T>& v, const std::vector<std::size_t>& shape,
                   std::size_t Lq, std::size_t Lk) {
  if (format == Format::npy) {
    write_npy(out.file(), std::span<const T>(v), shape);
  } else {
    const std::vector<std::int64_t> junk = junk_mask(Lq, Lk);
    head["dtype"] = sizeof(T) == 4 ? "f32" : "f64";
    head["shape"] = shape;
    head["query_length"] = Lq;
    head["key_length"] = Lk;
    write_json(out.file(), head,
               std::vector<JsonArray>{{"shifted", std::span<const T>(v), v.size() / Lq},
                                      {"junk", std::span<const std::int64_t>(junk), Lk}});
  }
  out.commit();
}

void run_shifted(IndexFlags& f, const CLI::App* app) {
  const Spec s = f.spec.build();  // no spec field changes the shift (the code's data movement); it heads the JSON
  if (!f.in) throw UsageError("--in: required with --what shifted (the matrix to shift, .npy [qlen, klen, ...])");
  for (const char* flag : {"--query-length", "--key-length", "--mask", "--key-mask"})
    if (app->count(flag) > 0)
      throw UsageError(std::string(flag) + ": not with --what shifted (the shape of --in gives qlen and klen; an index "
                       "has no mask)");
  const NpyArray a = read_input("--in", *f.in);
  if (a.stored != NpyType::f32 && a.stored != NpyType::f64)
    throw UsageError("--in: '" + *f.in + "' holds " + std::string(to_string(a.stored)) + " values; accepted: f32 or f64");
  if (a.shape.size() < 2 || a.shape[0] == 0 || a.shape[1] == 0 || a.shape[0] > a.shape[1])
    throw UsageError("--in: '" + *f.in + "' holds an array of shape " + shape_text(a.shape) +
                     "; accepted: [qlen, klen, ...] with 1 <= qlen <= klen (BD of mem_transformer.py, klen = memory + "
                     "qlen)");
  const std::size_t Lq = a.shape[0], Lk = a.shape[1], inner = a.values.size() / (Lq * Lk);
  (void)parse_threads(f.threads);  // checked like every command's (the shift is one pass)
  const Format format = choose_format(f.out.format, f.out.out, {Format::npy, Format::json});
  Output out(f.out.out, format == Format::npy);
  Json head = result_head(s);
  head["what"] = "shifted";
  head["zero_triu"] = f.zero_triu;
  head["note"] = "_rel_shift of --in as mem_transformer.py computes it (zero column in front, viewed [klen + 1, qlen], "
                 "first row dropped, viewed back), junk included: out[i][j] = x[i][j + qlen - 1 - i] for j <= q_i; "
                 "junk[i][j] = 1 where j > q_i (0 at j = q_i + 1, entries of row i + 1 beyond)" +
                 std::string(f.zero_triu ? "; zero_triu: multiplied by tril(ones(qlen, klen), klen - qlen)" : "");
  if (a.stored == NpyType::f32)
    write_shifted(out, format, head, rel_shift_all<float>(a, Lq, Lk, inner, f.zero_triu), a.shape, Lq, Lk);
  else
    write_shifted(out, format, head, rel_shift_all<double>(a, Lq, Lk, inner, f.zero_triu), a.shape, Lq, Lk);
}

void run_index(IndexFlags& f, const CLI::App* app) {
  const IndexWhat what = parse_index_what(f.what);
  if (what == IndexWhat::shifted) return run_shifted(f, app);
  if (f.in) throw UsageError("--in: '" + *f.in + "' given, but only --what shifted reads a matrix");
  if (f.zero_triu) throw UsageError("--zero-triu: only with --what shifted");
  const Spec s = f.spec.build();
  const bool junk = what == IndexWhat::junk;
  run_index_command(f.geometry, f.threads, f.out, size_check(s), junk ? "junk" : "indices",
                    [&](const BiasGeometry& g, std::span<std::int32_t> idx, const TableOptions& opts) {
    const std::size_t hd = s.heads * s.d_head;
    TransformerXlPlan(s, {std::vector<double>(hd, 0.0), std::vector<double>(hd, 0.0), std::vector<double>(hd * s.d_model, 0.0)})
        .indices(g, idx, opts);
    Json head = result_head(s);
    if (junk) {
      for (std::int32_t& v : idx) v = v < 0 ? 1 : 0;
      head["what"] = "junk";
      head["note"] = "1 where mem_transformer.py's _rel_shift leaves junk (j > q_i: the pad zero at j = q_i + 1, entries "
                     "of the next row beyond; zero_triu zeroes them), 0 where the entry is x[i][klen - 1 - (q_i - j)]; "
                     "q_i = key_length - query_length + i";
      return head;
    }
    head["what"] = "index";
    head["note"] = "c(i, j) = key_length - 1 - (q_i - j): the row of `posenc table` (the _rel_shift column) that entry (i, "
                   "j) reads, -1 where the entry is undefined (j > q_i: _rel_shift leaves junk there); q_i = key_length - "
                   "query_length + i";
    return head;
  });
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
  run_relative_table_check(f.spec, f.check, app, &Spec::d_model, "--d-model",
                           "a table [key_length, d_model] (pos_emb of one call)",
                           [](const Spec& s, const auto& in, const auto& allowance, auto threads) {
                             return verify::transformer_xl::check_table(s, in.rows, in, allowance, threads);
                           });
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
    c->add_option("--what", f->what,
                  "index (default): c(i, j), -1 where junk; junk: 1 where _rel_shift leaves junk (j > q_i), else 0; "
                  "shifted: _rel_shift(--in, zero_triu) bit for bit, junk entries included, in --in's type "
                  "(kimiyoung/transformer-xl@44781ed2 pytorch/mem_transformer.py); JSON adds the junk mask")
        ->type_name("index|junk|shifted");
    c->add_option("--in", f->in,
                  "with --what shifted: the matrix to shift, .npy f32 or f64 [qlen, klen] or the code's [qlen, klen, "
                  "bsz, n_head] (any trailing axes), 1 <= qlen <= klen")
        ->type_name("FILE")
        ->group("Input");
    c->add_flag("--zero-triu", f->zero_triu,
                "with --what shifted: _rel_shift(x, zero_triu=True), the junk multiplied by 0 (x * tril(ones(qlen, "
                "klen), klen - qlen): -0 for a negative entry, NaN for an infinite one)")
        ->group("Input");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv (shifted: npy | json)");
    c->footer("Example: posenc index transformer_xl --what shifted --in bd.npy --zero-triu --out shifted.npy\n"
              "Example: posenc index transformer_xl --query-length 4 --key-length 7 --format csv");
    c->callback([f, c] { run_index(*f, c); });
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

}  // namespace posenc::cli::scheme_transformer_xl
