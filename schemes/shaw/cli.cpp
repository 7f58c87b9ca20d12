// schemes/shaw/cli.cpp — Shaw et al. / tensor2tensor and HF BERT relative_key on the command line: its registration
// (description, presets and flags come from SpecTraits<ShawSpec>, cli/spec_options.hpp) and what is its own:
//   posenc index shaw    the index matrix [query_length, key_length]: clip(d, -k, k) + k (integers)
//   posenc scores shaw   pre-softmax scores for q [heads, Lq, d], k [heads, Lk, d] with your key table
//                        --key-table [2k + 1, head_dim]; with --v [heads, Lk, d] the attention output [heads, Lq,
//                        d] instead (and the value table --value-table when the spec has values)
//   posenc check shaw    a user's index matrix [Lq, Lk] against the oracle's, entry by entry
// The tables are trained weights (t2t relative_positions_keys / _values; BERT distance_embedding.weight).
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
#include "posenc/shaw.hpp"
#include "posenc/shaw_spec.hpp"
#include "identify_verb.hpp"
#include "registry.hpp"
#include "schemes/shaw/check.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_shaw {
namespace {

using Spec = ShawSpec;
constexpr const char* kScheme = "shaw";

std::function<void(const BiasGeometry&)> size_check(const Spec& s) {
  return [s](const BiasGeometry& g) { (void)shaw_scores_size(s, 1, g); };
}

// --key-table FILE [--value-table FILE]: the relative tables as .npy [2k + 1, head_dim].
struct TableFlags {
  std::string keys_path;
  std::optional<std::string> values_path;

  void add_to(CLI::App* c) {
    c->add_option("--key-table", keys_path,
                  "the key table a^K (t2t relative_positions_keys; BERT distance_embedding.weight): .npy of shape "
                  "[2 max_relative_position + 1, head_dim], float32 or float64")
        ->type_name("FILE")
        ->required()
        ->group("Weights");
    c->add_option("--value-table", values_path,
                  "the value table a^V (t2t relative_positions_values), same shape; required when the spec has "
                  "values = true, refused otherwise")
        ->type_name("FILE")
        ->group("Weights");
  }

  static std::vector<double> read_table(const char* flag, const std::string& path, const Spec& s) {
    const NpyArray a = read_input(flag, path);
    const std::vector<std::size_t> want{shaw_table_rows(s), s.head_dim};
    if (a.shape != want)
      throw UsageError(std::string(flag) + ": '" + path + "' holds an array of shape " + shape_text(a.shape) +
                       "; accepted: [2 max_relative_position + 1, head_dim] = " + shape_text(want) +
                       " (the spec's --max-relative-position and --head-dim)");
    return a.values;
  }

  ShawWeights build(const Spec& s) const {
    ShawWeights w{read_table("--key-table", keys_path, s), {}};
    if (s.values && !values_path)
      throw UsageError("--value-table: required: the spec has values = true (t2t adds a^V to the values); give the "
                       "value table (.npy [2 max_relative_position + 1, head_dim]) or --values=false");
    if (!s.values && values_path)
      throw UsageError("--value-table: '" + *values_path + "' given, but the spec has values = false (no value "
                       "table: BERT relative_key)");
    if (values_path) w.values = read_table("--value-table", *values_path, s);
    try {
      check_shaw_weights(s, w);
    } catch (const Error& e) {
      const bool keys = e.parameter() == "keys";
      throw Error(e.where(), keys ? "--key-table" : "--value-table", "'" + (keys ? keys_path : values_path.value_or("")) + "' (" + e.value() + ")",
                  e.accepted(), e.problem());
    }
    return w;
  }
};

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
    // the index needs no tables: a plan of zero tables would cost (2k + 1) head_dim doubles, so the rows are written
    // by a plan of the same spec with head_dim 1 (indices do not depend on head_dim)
    Spec thin = s;
    thin.head_dim = 1;
    ShawWeights w{std::vector<double>(shaw_table_rows(thin), 0.0), {}};
    if (thin.values) w.values = w.keys;
    ShawPlan(thin, w).indices(g, idx, opts);
    Json head = result_head(s);
    head["note"] = std::string("clip(d, -k, k) + k with d = ") +
                   (s.sign == RelativeSign::key_minus_query ? "j - q_i (key minus query)" : "q_i - j (query minus key)") +
                   "; the queries are the last query_length keys (q_i = key_length - query_length + i)";
    head["max_relative_position"] = s.max_relative_position;
    head["table_rows"] = shaw_table_rows(s);
    return head;
  });
}

// ---- scores / attention output -----------------------------------------------------------------------

struct ScoresCommand {
  SpecOptions<Spec> spec;
  TableFlags table;
  ScoresFlags scores;
  std::optional<std::string> v_path;
};

void run_scores(ScoresCommand& f) {
  const ScoresInput in = read_scores_input(f.scores.q_path, f.scores.k_path);
  const Spec s = f.spec.build();
  if (s.head_dim != in.head_dim)
    throw Error(kScheme, f.spec.given("--head-dim") ? "--head-dim" : "head_dim (from the preset or --spec)",
                std::to_string(s.head_dim), "the head_dim of --q and --k, " + std::to_string(in.head_dim),
                "differs from the input");
  const ShawPlan plan(s, f.table.build(s));
  if (f.v_path)
    return run_attention_output(f.scores, *f.v_path, in, plan, result_head(s),
                                "attention output z[h][i] = sum_j softmax_j(scores[h][i][j]) "
                                "(v[h][j] + [values] a^V[idx(i, j)])",
                                size_check(s));
  run_bias_scores(f.scores, in, AllHeadsPlan<ShawPlan>{plan, in.heads}, result_head(s), size_check(s));
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  std::string in_path;
  ReportFlags report;
};

void run_check(CheckFlags& f) {
  const NpyArray a = read_input("--in", f.in_path, std::nullopt, NpyKinds::numbers);
  if (a.shape.size() != 2)
    throw UsageError("--in: '" + f.in_path + "' holds an array of shape " + shape_text(a.shape) +
                     "; accepted: an index matrix [query_length, key_length]");
  verify::CheckReport rep;
  try {
    const Spec s = f.spec.build();
    verify::shaw::IndexInput in{a.values, a.shape[0], a.shape[1], {}};
    in.describe["file"] = f.in_path;
    in.describe["shape"] = a.shape;
    rep = verify::shaw::check_index(s, in);
  } catch (const Error& e) {
    if (e.parameter() == "query_length" || e.parameter() == "key_length")
      throw e.renamed("--in (its " + e.parameter() + ", " + e.value() + ")");
    throw SpecOptions<Spec>::renamed(e);
  }
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

}  // namespace

POSENC_CLI_SCHEME(shaw) {
  add_identify_command(
      registry, kScheme,
      "Which clipped-relative convention an index matrix [query_length, key_length] follows: preset, sign, k, "
      "clipping, or the nearest one and where it differs",
      "",
      "k is read at distance 0 (the last query against the last key). Exit status 0 when a convention passes its\n"
      "check.\n"
      "Example: posenc identify shaw --in index.npy --format json",
      [](const NpyArray& a, const IdentifyFlags& f, bool) {
        const auto [lq, lk] = index_matrix_shape(a, f);
        verify::shaw::IndexInput in{a.values, lq, lk, {}};
        in.describe["file"] = f.in.path;
        return verify::shaw::identify_index(in);
      },
      NpyKinds::numbers);
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: with --mask causal padding keys get "
                                "-inf";
  {
    auto f = std::make_shared<IndexFlags>();
    CLI::App* c = registry.command("index", kScheme,
                                   "The index matrix [query_length, key_length]: clip(d, -k, k) + k, d = j - q_i "
                                   "(t2t) or q_i - j (BERT); the queries are the last query_length keys");
    f->spec.add_to(c);
    f->geometry.add_to(c, mask_help + " (not for index: an index matrix has no mask)");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Example: posenc index shaw --preset bert-relative-key --key-length 8 --format json\n"
              "Example: posenc index shaw --preset t2t --query-length 1 --key-length 300 --out index.npy");
    c->callback([f] { run_index(*f); });
  }
  {
    auto f = std::make_shared<ScoresCommand>();
    CLI::App* c = registry.command(
        "scores", kScheme,
        "scale (<q_i, k_j> + <q_i, a^K[idx]> + [key_query] <k_j, a^K[idx]>) for q [heads, Lq, d] and k [heads, Lk, "
        "d] (Q A^T gathered, then one BLAS gemm per head); with --v the attention output [heads, Lq, d] instead");
    f->spec.add_to(c);
    f->table.add_to(c);
    f->scores.add_to(c, mask_help);
    c->add_option("--v", f->v_path,
                  "values [heads, Lk, d] (.npy): write the attention output z_i = sum_j softmax(scores)_ij (v_j + "
                  "[values] a^V[idx]) instead of the scores")
        ->type_name("FILE")
        ->group("Input");
    c->footer("f64 when every input is f64, else f32. The tables are shared by every head.\n"
              "Example: posenc scores shaw --preset t2t --key-table rel_keys.npy --value-table rel_values.npy --q q.npy --k k.npy "
              "--v v.npy --out z.npy\n"
              "Example: posenc scores shaw --preset bert-relative-key --key-table distance_embedding.npy --q q.npy --k k.npy "
              "--mask none --out s.npy");
    c->callback([f] { run_scores(*f); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your index matrix (.npy [query_length, key_length], any integer or float type) against clip(d, -k, k) + k "
        "from the oracle (budget row shaw.check.index.bitwise); exit 0 pass, 1 fail");
    f->spec.add_to(c);
    c->add_option("--in", f->in_path,
                  "the index matrix (.npy [query_length, key_length]; any integer type, or floats holding integers)")
        ->type_name("FILE")
        ->required()
        ->group("Input");
    f->report.add_to(c);
    c->footer("The queries are the last query_length keys (t2t's range_k[-length_q:], a cached single query).\n"
              "Example: posenc check shaw --preset t2t --in index.npy --format json");
    c->callback([f] { run_check(*f); });
  }
}

}  // namespace posenc::cli::scheme_shaw
