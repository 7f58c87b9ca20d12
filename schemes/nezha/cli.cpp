// schemes/nezha/cli.cpp — NEZHA's functional relative positions on the command line: its registration (description,
// presets and flags come from SpecTraits<NezhaSpec>, cli/spec_options.hpp) and what is its own:
//   posenc table nezha    the fixed table T [2K + 1, depth] (row r: the sinusoid of the shifted index r)
//   posenc index nezha    the index matrix [query_length, key_length]: clip(j - q_i, -K, K) + K
//   posenc scores nezha   pre-softmax scores for q [heads, Lq, d], k [heads, Lk, d] with the table on the keys; with
//                         --v [heads, Lk, d] the attention output [heads, Lq, d] (the table on the values too)
//   posenc check nezha    a user's table [2K + 1, depth] against the exact one and HF's float32 steps
// There are no trained position weights: the spec is the whole encoding.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "args.hpp"
#include "bias_verbs.hpp"
#include "schemes/nezha/check.hpp"
#include "output.hpp"
#include "posenc/error.hpp"
#include "posenc/nezha.hpp"
#include "registry.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_nezha {
namespace {

using Spec = NezhaSpec;
constexpr const char* kScheme = "nezha";

std::function<void(const BiasGeometry&)> size_check(const Spec& s) {
  return [s](const BiasGeometry& g) { (void)shaw_scores_size(nezha_shaw_spec(s), 1, g); };
}

// ---- table -------------------------------------------------------------------------------------------

struct TableCommand {
  SpecOptions<Spec> spec;
  OutFlags out;
  std::string dtype = "f32", threads;
};

// The one-shot nezha_table: the sinusoidal plan alone (a NezhaPlan would also build the attention's copy).
template <class T>
void write_table(const Spec& s, const TableOptions& opts, Format format, Output& out) {
  const std::size_t rows = nezha_table_rows(s), n = rows * s.depth;
  auto data = allocate<T>(n, "a " + std::to_string(rows) + " x " + std::to_string(s.depth) + " table");
  const std::span<T> table(data.get(), n);
  nezha_table(s, table, opts);
  const std::span<const T> values(table);
  if (format == Format::npy) {
    write_npy(out.file(), values, {rows, s.depth});
  } else if (format == Format::json) {
    Json head = result_head(s);
    head["dtype"] = sizeof(T) == 4 ? "f32" : "f64";
    head["note"] = "row r = the interleaved sinusoid of the shifted index r = clip(j - i, -K, K) + K: T[r][2t] = "
                   "sin(r w_t), T[r][2t + 1] = cos(r w_t), w_t = 10000^(-2t/depth)";
    write_json(out.file(), head, std::vector<JsonArray>{{"table", values, s.depth}});
  } else {
    std::vector<std::int64_t> r(rows);
    for (std::size_t i = 0; i < rows; ++i) r[i] = static_cast<std::int64_t>(i);
    write_csv(out.file(), {CsvColumn{"r", r}}, numbered_names("c", s.depth), values, rows);
  }
  out.commit();
}

void run_table(TableCommand& f) {
  const Spec s = f.spec.build();
  const bool f64 = parse_output_dtype(f.dtype) == DType::f64;
  const TableOptions opts = parse_threads(f.threads);
  const Format format = choose_format(f.out.format, f.out.out);
  Output out(f.out.out, format == Format::npy);
  if (f64) write_table<double>(s, opts, format, out);
  else write_table<float>(s, opts, format, out);
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
  run_index_command(f.geometry, f.threads, f.out, size_check(s), "indices",
                    [&](const BiasGeometry& g, std::span<std::int32_t> idx, const TableOptions& opts) {
    // indices need no table: a Shaw plan of NEZHA's structure with head_dim 1 and zero tables writes them
    ShawSpec thin = nezha_shaw_spec(s);
    thin.head_dim = 1;
    const std::vector<double> zeros(shaw_table_rows(thin), 0.0);
    ShawPlan(thin, ShawWeights{zeros, zeros}).indices(g, idx, opts);
    Json head = result_head(s);
    head["note"] = "r = clip(j - q_i, -K, K) + K (key minus query); the queries are the last query_length keys (q_i = "
                   "key_length - query_length + i; HF NEZHA computes only query_length = key_length)";
    head["table_rows"] = nezha_table_rows(s);
    return head;
  });
}

// ---- scores / attention output -----------------------------------------------------------------------

struct ScoresCommand {
  SpecOptions<Spec> spec;
  ScoresFlags scores;
  std::optional<std::string> v_path;
};

void run_scores(ScoresCommand& f) {
  const ScoresInput in = read_scores_input(f.scores.q_path, f.scores.k_path);
  const Spec s = f.spec.build();
  if (s.depth != in.head_dim)
    throw Error(kScheme, f.spec.given("--depth") ? "--depth" : "depth (from the preset or --spec)", std::to_string(s.depth),
                "the head_dim of --q and --k, " + std::to_string(in.head_dim), "differs from the input");
  const NezhaPlan plan(s);
  if (f.v_path)
    return run_attention_output(f.scores, *f.v_path, in, plan, result_head(s),
                                "attention output z[h][i] = sum_j softmax_j(scores[h][i][j]) "
                                "(v[h][j] + T[r(i, j)])",
                                size_check(s));
  run_bias_scores(f.scores, in, AllHeadsPlan<NezhaPlan>{plan, in.heads}, result_head(s), size_check(s));
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  InputFlags in;
  ReportFlags report;
  std::string threads;
  double ulp_exp = 2.0, ulp_trig = 2.0;
};

void run_check(CheckFlags& f, CLI::App* app) {
  const NpyArray a = f.in.read();
  if (a.shape.size() != 2)
    throw UsageError("--in: '" + f.in.path + "' holds an array of shape " + shape_text(a.shape) +
                     "; accepted: a table [2 max_relative_position + 1, depth]");
  check_ulp_allowance(app, "--ulp-exp", f.ulp_exp);
  check_ulp_allowance(app, "--ulp-trig", f.ulp_trig);
  const TableOptions opts = parse_threads(f.threads);
  verify::CheckReport rep;
  try {
    Spec s = f.spec.build();
    // The table's shape gives K and depth unless the flags (or --spec) say otherwise (then the shapes must agree).
    if (!f.spec.given("--spec") && !f.spec.given("--preset")) {
      if (!f.spec.given("--depth")) s.depth = a.shape[1];
      if (!f.spec.given("--max-relative-position") && a.shape[0] % 2 == 1) s.max_relative_position = a.shape[0] / 2;
      validate(s);
    }
    verify::nezha::TableInput in{a.values, a.shape[0], a.shape[1], dtype_of(a.stored), {}};
    in.describe = {{"file", f.in.path}, {"stored", std::string(to_string(a.stored))}, {"shape", shape_text(a.shape)}};
    rep = verify::nezha::check_table(s, in, reference::EnvelopeAllowance{f.ulp_exp, f.ulp_trig}, opts.threads);
  } catch (const Error& e) {
    throw SpecOptions<Spec>::renamed(e);
  }
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

}  // namespace

POSENC_CLI_SCHEME(nezha) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: with --mask causal padding keys get "
                                "-inf";
  {
    auto f = std::make_shared<TableCommand>();
    CLI::App* c = registry.command("table", kScheme,
                                   "The fixed table T [2K + 1, depth]: row r = sin/cos(r 10000^(-2t/depth)) in slots "
                                   "2t, 2t + 1 (the sinusoid of the shifted index r, not of the signed distance)");
    f->spec.add_to(c);
    c->add_option("--dtype", f->dtype, "f32 (default) | f64")->type_name("T")->group("Output");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Example: posenc table nezha --preset nezha-cn-base --out relative_table.npy\n"
              "Example: posenc table nezha --preset nezha-cn-base --regime exact --dtype f64 --format json");
    c->callback([f] { run_table(*f); });
  }
  {
    auto f = std::make_shared<IndexFlags>();
    CLI::App* c = registry.command("index", kScheme,
                                   "The index matrix [query_length, key_length]: clip(j - q_i, -K, K) + K; the "
                                   "queries are the last query_length keys");
    f->spec.add_to(c);
    f->geometry.add_to(c, mask_help + " (not for index: an index matrix has no mask)");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Example: posenc index nezha --preset nezha-cn-base --key-length 200 --out index.npy");
    c->callback([f] { run_index(*f); });
  }
  {
    auto f = std::make_shared<ScoresCommand>();
    CLI::App* c = registry.command(
        "scores", kScheme,
        "(<q_i, k_j> + <q_i, T[r]>) scale for q [heads, Lq, d] and k [heads, Lk, d] (Q T^T gathered, then one BLAS "
        "gemm per head); with --v the attention output [heads, Lq, d] (v_j + T[r] on the values) instead");
    f->spec.add_to(c);
    f->scores.add_to(c, mask_help);
    c->add_option("--v", f->v_path,
                  "values [heads, Lk, d] (.npy): write the attention output z_i = sum_j softmax(scores)_ij (v_j + "
                  "T[r(i, j)]) instead of the scores")
        ->type_name("FILE")
        ->group("Input");
    c->footer("f64 when every input is f64, else f32. The table is the spec's (no weights to give).\n"
              "Example: posenc scores nezha --preset nezha-cn-base --q q.npy --k k.npy --v v.npy --out z.npy");
    c->callback([f] { run_scores(*f); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your table (.npy [2K + 1, depth], HF's embeddings_table) against the exact one (budget rows "
        "sinusoidal.check.exact.<dtype>) and HF's float32 steps (emulation envelope); exit 0 pass, 1 fail");
    f->spec.add_to(c);
    f->in.add_to(c);
    c->add_option("--ulp-exp", f->ulp_exp, "Envelope: ulps a float32 exp may be off correctly rounded (default 2)")
        ->type_name("A")
        ->check(CLI::Range(0.0, 1.0e6))
        ->group("Envelope");
    c->add_option("--ulp-trig", f->ulp_trig, "Envelope: ulps a float32 sin/cos may be off correctly rounded (default 2)")
        ->type_name("A")
        ->check(CLI::Range(0.0, 1.0e6))
        ->group("Envelope");
    c->add_option("--threads", f->threads, "OpenMP threads for the oracle (0: default)")->type_name("N");
    f->report.add_to(c);
    c->footer("K and depth come from the table's shape unless given. The verdict is held to the spec's regime.\n"
              "Example: posenc check nezha --preset nezha-cn-base --in embeddings_table.npy --format json");
    c->callback([f, c] { run_check(*f, c); });
  }
}

}  // namespace posenc::cli::scheme_nezha
