// schemes/deberta/cli.cpp — DeBERTa-v2/v3 disentangled attention on the command line: its registration
// (description, presets and flags come from SpecTraits<DebertaSpec>, cli/spec_options.hpp) and what is its own:
//   posenc index deberta    the relative-position matrix b(i - j) (HF build_relative_position with buckets) or,
//                           with --what c2p, the c2p index clamp(b + span, 0, 2 span - 1): [query_length,
//                           key_length], the queries at positions 0..Lq-1; with --what p2c, HF's p2c_pos
//                           [key_length, key_length] (key-major, before HF's transpose)
//   posenc scores deberta   disentangled pre-softmax scores for q [heads, Lq, d], k [heads, Lk, d] with the projected
//                           relative tables --pos-key / --pos-query [heads, 2 span, d]
//   posenc check deberta    a user's relative-position (or c2p index) matrix against the oracle's, entry by entry
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "args.hpp"
#include "bias_verbs.hpp"
#include "schemes/deberta/check.hpp"
#include "output.hpp"
#include "posenc/deberta.hpp"
#include "posenc/deberta_spec.hpp"
#include "posenc/error.hpp"
#include "identify_verb.hpp"
#include "registry.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_deberta {
namespace {

using Spec = DebertaSpec;
constexpr const char* kScheme = "deberta";

// --what relative | c2p (| p2c for index)
enum class What { relative, c2p, p2c };
What parse_what(const std::string& what, bool p2c_allowed) {
  if (what == "relative") return What::relative;
  if (what == "c2p") return What::c2p;
  if (what == "p2c" && p2c_allowed) return What::p2c;
  throw UsageError("--what: '" + what + "'; accepted: relative (b(i - j), HF build_relative_position) | c2p (the c2p "
                   "gather index clamp(b + span, 0, 2 span - 1))" +
                   (p2c_allowed ? " | p2c (HF's p2c_pos [key_length, key_length], clamp(-b(a - b) + span, 0, 2 span - 1))"
                                : ""));
}

// A plan that needs no tables: the spec with head_dim 1 and one head (buckets and indices depend on neither).
DebertaPlan index_plan(const Spec& s) {
  Spec thin = s;
  thin.heads = 1;
  thin.head_dim = 1;
  DebertaWeights w;
  if (thin.c2p) w.pos_key.assign(deberta_table_rows(thin), 0.0);
  if (thin.p2c) w.pos_query.assign(deberta_table_rows(thin), 0.0);
  return DebertaPlan(thin, w);
}

// ---- index -------------------------------------------------------------------------------------------

struct IndexFlags {
  SpecOptions<Spec> spec;
  OutFlags out;
  std::string query_length, key_length = "8", what = "relative", threads;
};

void run_index(IndexFlags& f) {
  const Spec s = f.spec.build();
  const std::size_t Lk = parse_length("--key-length", f.key_length);
  const std::size_t Lq = f.query_length.empty() ? Lk : parse_length("--query-length", f.query_length);
  const What what = parse_what(f.what, true);
  const TableOptions opts = parse_threads(f.threads);
  const Format format = choose_format(f.out.format, f.out.out);
  Output out(f.out.out, format == Format::npy);
  try {
    check_deberta_lengths(Lq, Lk);
  } catch (const Error& e) {
    throw e.renamed(e.parameter() == "query_length" ? "--query-length" : "--key-length");
  }
  // p2c_pos is [Lk, Lk] whatever Lq is (HF build_rpos builds r_pos over the keys when Lq != Lk)
  const std::size_t rows = what == What::p2c ? Lk : Lq, n = rows * Lk;
  auto i32 = allocate<std::int32_t>(n, "an index matrix of " + std::to_string(rows) + " x " + std::to_string(Lk) + " entries");
  const std::span<std::int32_t> idx(i32.get(), n);
  const DebertaPlan plan = index_plan(s);
  try {
    if (what == What::c2p) plan.position_indices(Lq, Lk, idx, opts);
    else if (what == What::p2c) plan.p2c_indices(Lk, idx, opts);
    else plan.relative_positions(Lq, Lk, idx, opts);
  } catch (const Error& e) {
    if (e.parameter() == "query_length") throw e.renamed(what == What::p2c ? "--key-length" : "--query-length");
    if (e.parameter() == "key_length") throw e.renamed("--key-length");
    throw;
  }
  Json head = result_head(s);
  head["span"] = deberta_span(s);
  switch (what) {
    case What::c2p:
      head["what"] = "c2p";
      head["note"] = "c2p gather index clamp(b(i - j) + span, 0, 2 span - 1); query i at position i";
      write_index_matrix(out, format, head, "indices", idx, Lq, Lk);
      break;
    case What::p2c:
      head["what"] = "p2c";
      head["note"] = "HF's p2c_pos = clamp(-r_pos + span, 0, 2 span - 1), r_pos[a][b] = b(a - b) over the keys (a, b < "
                     "key_length; relative_pos itself when query_length = key_length): row a indexes the relative "
                     "axis of K Q_r^T for key a, and after HF's transpose the p2c score of query i, key j reads "
                     "Q_r[p2c_pos[j][i]]";
      head["p2c_query_length"] = Lq;
      write_index_matrix(out, format, head, "p2c_pos", idx, Lk, Lk);
      break;
    case What::relative:
      head["what"] = "relative";
      head["note"] = "relative position b(i - j) (query minus key, log-bucketed); query i at position i (HF "
                     "build_relative_position)";
      write_index_matrix(out, format, head, "relative_positions", idx, Lq, Lk);
      break;
  }
}

// ---- scores ------------------------------------------------------------------------------------------

// --pos-key FILE, --pos-query FILE: the projected relative tables [heads, 2 span, head_dim] ([2 span, head_dim] for
// one head).
struct TableFlags {
  std::optional<std::string> key_path, query_path;

  void add_to(CLI::App* c) {
    c->add_option("--pos-key", key_path,
                  "K_r, the relative embeddings projected by the key projection (HF pos_key_layer): .npy [heads, 2 "
                  "span, head_dim] (or [2 span, head_dim] for one head); required with c2p")
        ->type_name("FILE")
        ->group("Weights");
    c->add_option("--pos-query", query_path,
                  "Q_r, the relative embeddings projected by the query projection (HF pos_query_layer), same shape; "
                  "required with p2c")
        ->type_name("FILE")
        ->group("Weights");
  }

  static std::vector<double> read_table(const char* flag, const std::string& path, const Spec& s) {
    const NpyArray a = read_input(flag, path);
    const std::vector<std::size_t> want{s.heads, deberta_table_rows(s), s.head_dim}, want2{deberta_table_rows(s), s.head_dim};
    if (!(a.shape == want || (s.heads == 1 && a.shape == want2)))
      throw UsageError(std::string(flag) + ": '" + path + "' holds an array of shape " + shape_text(a.shape) +
                       "; accepted: [heads, 2 span, head_dim] = " + shape_text(want) +
                       " (the spec's --heads, span = --position-buckets or --max-relative-positions, --head-dim)");
    return a.values;
  }

  DebertaWeights build(const Spec& s) const {
    auto need = [](bool used, const std::optional<std::string>& p, const char* flag, const char* term) {
      if (used && !p)
        throw UsageError(std::string(flag) + ": required: the spec has " + term + " = true; give the table or --" + term +
                         "=false");
      if (!used && p)
        throw UsageError(std::string(flag) + ": '" + *p + "' given, but the spec has " + term + " = false (the table "
                         "is unused)");
    };
    need(s.c2p, key_path, "--pos-key", "c2p");
    need(s.p2c, query_path, "--pos-query", "p2c");
    DebertaWeights w;
    if (key_path) w.pos_key = read_table("--pos-key", *key_path, s);
    if (query_path) w.pos_query = read_table("--pos-query", *query_path, s);
    try {
      check_deberta_weights(s, w);
    } catch (const Error& e) {
      const bool key = e.parameter() == "pos_key";
      throw Error(e.where(), key ? "--pos-key" : "--pos-query",
                  "'" + (key ? key_path : query_path).value_or("") + "' (" + e.value() + ")", e.accepted(), e.problem());
    }
    return w;
  }
};

struct ScoresCommand {
  SpecOptions<Spec> spec;
  TableFlags table;
  ScoresFlags scores;
};

void run_scores(ScoresCommand& f) {
  // HF build_relative_position: queries at 0 .. Lq - 1, keys at 0 .. Lk - 1, any Lq and Lk.
  const ScoresInput in = read_scores_input(f.scores.q_path, f.scores.k_path, /*queries_are_last_keys=*/false);
  const Spec s = f.spec.build();
  if (s.head_dim != in.head_dim)
    throw Error(kScheme, f.spec.given("--head-dim") ? "--head-dim" : "head_dim (from the preset or --spec)",
                std::to_string(s.head_dim), "the head_dim of --q and --k, " + std::to_string(in.head_dim),
                "differs from the input");
  if (s.heads != in.heads)
    throw Error(kScheme, f.spec.given("--heads") ? "--heads" : "heads (from the preset or --spec)",
                std::to_string(s.heads), "the heads of --q and --k, " + std::to_string(in.heads),
                "differs from the input (each head has its own relative tables)");
  if (parse_mask(f.scores.mask) != BiasMask::none)
    throw UsageError("--mask: '" + f.scores.mask + "'; accepted: none (DeBERTa is an encoder: bidirectional attention; "
                     "padding keys go in --key-mask)");
  const DebertaPlan plan(s, f.table.build(s));
  const std::vector<std::uint8_t> km = parse_key_mask(f.scores.key_mask);
  if (!km.empty() && km.size() != in.key_length)
    throw UsageError("--key-mask: " + std::to_string(km.size()) + " entries; accepted: exactly key_length = " +
                     std::to_string(in.key_length) + " (one 0/1 per key)");
  const std::optional<double> scale =
      f.scores.scale ? std::optional<double>(scores_scale(f.scores.scale, in.head_dim)) : std::nullopt;
  const double shown = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(s.head_dim * deberta_scale_factor(s)));
  const TableOptions opts = parse_threads(f.scores.threads);
  const Format format = choose_format(f.scores.out.format, f.scores.out.out, {Format::npy, Format::json});
  Output out(f.scores.out.out, format == Format::npy);
  const BiasGeometry g{.query_length = in.query_length, .key_length = in.key_length, .key_mask = km};
  Json head = result_head(s);
  head["note"] = "scale (<q_i, k_j> + [c2p] <q_i, K_r[c(i, j)]> + [p2c] <k_j, Q_r[c(i, j)]>), c = clamp(b(i - j) + "
                 "span, 0, 2 span - 1), query i at position i; -inf at padded keys";
  run_scores_typed(
      in, out, format, head, shown, g,
      [&](std::span<const float> q, std::span<const float> k, std::span<float> o) {
        plan.scores(q, k, in.query_length, in.key_length, km, scale, o, opts);
      },
      [&](std::span<const double> q, std::span<const double> k, std::span<double> o) {
        plan.scores(q, k, in.query_length, in.key_length, km, scale, o, opts);
      });
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  std::string in_path, what = "relative";
  ReportFlags report;
};

void run_check(CheckFlags& f) {
  const NpyArray a = read_input("--in", f.in_path, std::nullopt, NpyKinds::numbers);
  const bool c2p = parse_what(f.what, false) == What::c2p;
  // [Lq, Lk], or HF's [1, Lq, Lk] (build_relative_position's unsqueeze(0))
  const bool three = a.shape.size() == 3 && a.shape[0] == 1;
  if (a.shape.size() != 2 && !three)
    throw UsageError("--in: '" + f.in_path + "' holds an array of shape " + shape_text(a.shape) +
                     "; accepted: a matrix [query_length, key_length] (or HF's [1, query_length, key_length])");
  verify::CheckReport rep;
  try {
    const Spec s = f.spec.build();
    verify::deberta::IndexInput in{a.values, a.shape[three ? 1 : 0], a.shape[three ? 2 : 1],
                                 c2p ? verify::deberta::IndexKind::position : verify::deberta::IndexKind::relative, {}};
    in.describe["file"] = f.in_path;
    in.describe["shape"] = a.shape;
    rep = verify::deberta::check_index(s, in);
  } catch (const Error& e) {
    if (e.parameter() == "query_length" || e.parameter() == "key_length")
      throw e.renamed("--in (its " + e.parameter() + ", " + e.value() + ")");
    throw SpecOptions<Spec>::renamed(e);
  }
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

}  // namespace

POSENC_CLI_SCHEME(deberta) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  add_identify_command(
      registry, kScheme,
      "Which DeBERTa convention an index matrix [query_length, key_length] follows: b(i - j) or the c2p index, "
      "position_buckets, max_relative_positions, clamp, regime, or the nearest one and where it differs",
      "",
      "Buckets show only where |i - j| reaches position_buckets / 2: a smaller matrix names the preset's. Exit status\n"
      "0 when a convention passes its check.\n"
      "Example: posenc identify deberta --in relative_positions.npy --format json",
      [](const NpyArray& a, const IdentifyFlags& f, bool) {
        const auto [lq, lk] = index_matrix_shape(a, f);
        return verify::deberta::identify_index(a.values, lq, lk);
      },
      NpyKinds::numbers);
  {
    auto f = std::make_shared<IndexFlags>();
    CLI::App* c = registry.command("index", kScheme,
                                   "The relative-position matrix b(i - j) [query_length, key_length] (HF "
                                   "build_relative_position: query i at position i, log buckets), or with --what c2p "
                                   "the c2p / p2c gather index clamp(b + span, 0, 2 span - 1)");
    f->spec.add_to(c);
    c->add_option("--key-length", f->key_length, "Keys Lk at positions 0 .. Lk-1: an integer in [1, 2^30] (default 8)")
        ->type_name("N")
        ->group("Geometry");
    c->add_option("--query-length", f->query_length,
                  "Queries Lq at positions 0 .. Lq-1 (the FIRST positions, as HF): an integer in [1, 2^30] (default Lk)")
        ->type_name("N")
        ->group("Geometry");
    c->add_option("--what", f->what,
                  "relative (default): b(i - j); c2p: clamp(b + span, 0, 2 span - 1); p2c: HF's p2c_pos "
                  "clamp(-r_pos + span, 0, 2 span - 1) [key_length, key_length] with r_pos[a][b] = b(a - b) over the "
                  "keys (transformers@967ed0db models/deberta_v2/modeling_deberta_v2.py build_rpos; the p2c score of "
                  "query i, key j reads Q_r[p2c_pos[j][i]])")
        ->type_name("relative|c2p|p2c");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Example: posenc index deberta --preset deberta-v3-base --key-length 512 --what p2c --out p2c_pos.npy\n"
              "Example: posenc index deberta --preset deberta-v3-base --key-length 600 --query-length 1 --format json\n"
              "Example: posenc index deberta --preset deberta-v3-base --key-length 512 --what c2p --out c2p.npy");
    c->callback([f] { run_index(*f); });
  }
  {
    auto f = std::make_shared<ScoresCommand>();
    CLI::App* c = registry.command(
        "scores", kScheme,
        "scale (<q_i, k_j> + [c2p] <q_i, K_r[c]> + [p2c] <k_j, Q_r[c]>) for q [heads, Lq, d] and k [heads, Lk, d] with "
        "the projected relative tables (Q K_r^T and K Q_r^T gathered, then one BLAS gemm per head)");
    f->spec.add_to(c);
    f->table.add_to(c);
    f->scores.add_to(c, "0/1 per key (1 token, 0 padding), e.g. 1111100: padded keys get -inf",
                     "default 1/sqrt(head_dim (1 + c2p + p2c)), as HF", "none");
    c->footer("f64 when every input is f64, else f32. Each head has its own tables (HF pos_key_layer / "
              "pos_query_layer after transpose_for_scores).\n"
              "Example: posenc scores deberta --preset deberta-v3-base --heads 1 --pos-key pk.npy --pos-query pq.npy "
              "--q q.npy --k k.npy --out s.npy");
    c->callback([f] { run_scores(*f); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your relative-position matrix (or with --what c2p your c2p index matrix), .npy [query_length, key_length] "
        "or [1, Lq, Lk], against the oracle's (rows deberta.check.exact.bitwise and, for the hf regime, "
        "deberta.check.envelope); exit 0 pass, 1 fail");
    f->spec.add_to(c);
    c->add_option("--in", f->in_path,
                  "the matrix (.npy [query_length, key_length] or [1, query_length, key_length]; any integer type, or "
                  "floats holding integers)")
        ->type_name("FILE")
        ->required()
        ->group("Input");
    c->add_option("--what", f->what, "relative (default): b(i - j); c2p: clamp(b + span, 0, 2 span - 1)")
        ->type_name("relative|c2p");
    f->report.add_to(c);
    c->footer("Query i is at position i (HF build_relative_position), rel = i - j.\n"
              "Example: posenc check deberta --preset deberta-v3-base --in relative_pos.npy --format json");
    c->callback([f] { run_check(*f); });
  }
}

}  // namespace posenc::cli::scheme_deberta
