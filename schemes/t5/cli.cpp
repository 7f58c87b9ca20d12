// schemes/t5/cli.cpp — T5's relative attention bias on the command line: its registration (description, presets
// and flags come from SpecTraits<T5Spec>, cli/spec_options.hpp) and what is its own:
//   posenc index t5    the bucket matrix [query_length, key_length] (bucket of j - q_i; integers), and the
//                      first distance of every bucket (thresholds); --what relative: the relative positions j - q_i
//                      before bucketing (HF T5Attention.compute_bias's relative_position); --query-offset: the
//                      position of the first query (HF's cache_position[0]) when the queries are not the last keys
//   posenc bias t5     the bias matrix [heads, query_length, key_length] from your table --table [num_buckets, heads]
//   posenc scores t5   scale <q_i, k_j> + bias (T5: scale 1) for q [heads, Lq, d], k [heads, Lk, d]
//   posenc check t5    a user's bias tensor against the table entries of the exact buckets and, for the hf regime,
//                      HF's float32 buckets within the envelope of a real torch log
// The table is a trained weight (relative_attention_bias.weight): a .npy of shape [num_buckets, heads].
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
#include "output.hpp"
#include "posenc/error.hpp"
#include "posenc/t5.hpp"
#include "posenc/t5_spec.hpp"
#include "registry.hpp"
#include "spec_options.hpp"
#include "schemes/t5/check.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_t5 {
namespace {

using Spec = T5Spec;
constexpr const char* kScheme = "t5";

// --table FILE: relative_attention_bias.weight as a .npy [num_buckets, heads] (a 1-D array for one head).
struct TableFlags {
  std::string path;

  void add_to(CLI::App* c) {
    c->add_option("--table", path,
                  "the bias table relative_attention_bias.weight: .npy of shape [num_buckets, heads] (float32 or "
                  "float64; [num_buckets] for one head)")
        ->type_name("FILE")
        ->required()
        ->group("Weights");
  }

  void describe(Json& d) const { d["table"] = path; }
  Error renamed(const Error& e) const { return e; }  // build names --table itself

  T5Weights build(const Spec& s) const {
    const NpyArray a = read_input("--table", path);
    const std::vector<std::size_t> want{s.num_buckets, s.heads};
    const bool ok = (a.shape.size() == 2 && a.shape == want) || (a.shape.size() == 1 && s.heads == 1 && a.shape[0] == s.num_buckets);
    if (!ok)
      throw UsageError("--table: '" + path + "' holds an array of shape " + shape_text(a.shape) + "; accepted: [num_buckets, heads] = " +
                       shape_text(want) + " (the spec's --num-buckets and --heads)");
    T5Weights w{a.values};
    try {
      check_t5_weights(s, w);
    } catch (const Error& e) {
      throw Error(e.where(), "--table", "'" + path + "' (" + e.value() + ")", e.accepted(), e.problem());
    }
    return w;
  }
};

std::string bias_note() {
  return "table[bucket(j - q_i)][h] with the queries the last query_length keys (q_i = Lk - Lq + i); T5 adds it to "
         "the unscaled scores";
}

// --ulp: the envelope of HF's float32 log.
struct EnvelopeFlags {
  UlpFlag ulp;
  void add_to(CLI::App* c) { ulp.add(c, "Envelope: ulps a float32 log may be off correctly rounded (default 2)"); }
  void check(const CLI::App* app) const { ulp.check(app); }
};

struct T5 {
  using Spec = T5Spec;
  using Plan = T5Plan;
  using Weights = TableFlags;
  using Envelope = EnvelopeFlags;
  static constexpr const char* name = kScheme;
  static std::size_t bias_size(const Spec& s, const BiasGeometry& g) { return t5_bias_size(s, g); }
  static Plan plan(const Spec& s, const Weights& w) { return make_plan(s, w.build(s)); }
  static Json head(const Spec& s, const Plan&) { return result_head(s); }
  static std::string note(const Spec&) { return bias_note(); }
  static verify::CheckReport check(const Spec& s, const Weights& w, const verify::BiasTensorInput& in,
                                   const Envelope& e, int threads) {
    return verify::t5::check_bias(s, w.build(s), in, verify::t5::EnvelopeAllowance{e.ulp.ulp}, threads);
  }
};

// ---- index -------------------------------------------------------------------------------------------

struct IndexFlags {
  SpecOptions<Spec> spec;
  OutFlags out;
  BiasGeometryFlags geometry;
  std::string threads, what = "buckets";
  std::optional<std::string> query_offset;
};

// --what buckets | relative
bool parse_relative(const std::string& what) {
  if (what == "buckets") return false;
  if (what == "relative") return true;
  throw UsageError("--what: '" + what + "'; accepted: buckets (the bucket of j - q_i) | relative (j - q_i before "
                   "bucketing, HF compute_bias's relative_position)");
}

// --query-offset P: query row i at position P + i; every key position j < Lk and P + Lq - 1 stay below 2^31 so that
// each j - q_i is a relative position the plan buckets (|r| <= 2^31 - 1).
std::size_t parse_query_offset(const std::string& text, std::size_t Lq) {
  const std::int64_t top = (std::int64_t{1} << 31) - static_cast<std::int64_t>(Lq);
  const std::int64_t p = parse_int64("--query-offset", text);
  if (p < 0 || p > top)
    throw UsageError("--query-offset: " + text + " is out of range; accepted: an integer in [0, " + std::to_string(top) +
                     "] (2^31 - query_length: the last query's position stays below 2^31)");
  return static_cast<std::size_t>(p);
}

void run_index(IndexFlags& f) {
  const Spec s = f.spec.build();
  const T5Plan plan(s, T5Weights{std::vector<double>(s.num_buckets * s.heads, 0.0)});
  const BiasGeometry g = f.geometry.geometry(BiasFamily<T5>::size_check(s));
  if (g.mask != BiasMask::none || !g.key_mask.empty())
    throw UsageError("--mask / --key-mask: a bucket matrix has no mask (it is an index); give them to bias or scores");
  const bool relative = parse_relative(f.what);
  const std::size_t Lq = g.query_length, Lk = g.key_length, n = Lq * Lk;
  const bool offset = f.query_offset.has_value();
  const std::size_t first_query = offset ? parse_query_offset(*f.query_offset, Lq) : Lk - Lq;
  const TableOptions opts = parse_threads(f.threads);
  const Format format = choose_format(f.out.format, f.out.out);
  Output out(f.out.out, format == Format::npy);
  auto b32 = allocate<std::int32_t>(n, "an index matrix of " + std::to_string(Lq) + " x " + std::to_string(Lk) + " entries");
  const std::span<std::int32_t> idx(b32.get(), n);
  // HF compute_bias: relative_position = memory_position - context_position, context_position = cache_position (or
  // arange(query_length), the rows of which the last seq_length are kept): q_i = P + i.
  const auto P = static_cast<std::int64_t>(first_query);
  if (relative || offset) {
    for (std::size_t i = 0; i < Lq; ++i)
      for (std::size_t j = 0; j < Lk; ++j) {
        const std::int64_t r = static_cast<std::int64_t>(j) - (P + static_cast<std::int64_t>(i));
        idx[i * Lk + j] = relative ? static_cast<std::int32_t>(r) : plan.bucket(r);
      }
  } else {
    plan.buckets(g, idx, opts);
  }
  Json head = result_head(s);
  head["what"] = relative ? "relative" : "buckets";
  head["query_offset"] = P;
  if (relative) {
    head["note"] = "relative_position[i][j] = j - q_i (memory_position - context_position, before bucketing; int64 as "
                   "torch.long), q_i = query_offset + i";
    write_index_matrix(out, format, head, "relative_positions", idx, Lq, Lk);
    return;
  }
  head["note"] = "bucket of the relative position j - q_i (key minus query; q_i = query_offset + i, by default the "
                 "last query_length keys); thresholds[t - 1]: the first distance of bucket max_exact + t within a side";
  head["max_exact"] = t5_max_exact(s);
  head["side_buckets"] = t5_side_buckets(s);
  head["thresholds"] = std::vector<std::int64_t>(plan.thresholds().begin(), plan.thresholds().end());
  write_index_matrix(out, format, head, "buckets", idx, Lq, Lk);
}

}  // namespace

POSENC_CLI_SCHEME(t5) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: with --mask causal padding keys get "
                                "-inf (T5's buckets do not depend on padding)";
  {
    auto f = std::make_shared<IndexFlags>();
    CLI::App* c = registry.command("index", kScheme,
                                   "The bucket matrix [query_length, key_length]: the bucket of j - q_i (key minus "
                                   "query; the queries are the last query_length keys); JSON adds the first "
                                   "distance of every bucket");
    f->spec.add_to(c);
    f->geometry.add_to(c, mask_help + " (not for index: a bucket matrix has no mask)");
    c->add_option("--what", f->what,
                  "buckets (default): the bucket of j - q_i; relative: the relative positions j - q_i themselves "
                  "(memory_position - context_position before _relative_position_bucket, as HF T5Attention."
                  "compute_bias builds them, transformers@6b8b757d models/t5/modeling_t5.py), int64")
        ->type_name("buckets|relative");
    c->add_option("--query-offset", f->query_offset,
                  "P: query row i at position P + i (HF's cache_position[0]; a cached decoder step is --query-length 1 "
                  "--query-offset P, with --key-length the cache's length): an integer in [0, 2^31 - query_length] "
                  "(default key_length - query_length: the queries are the last keys)")
        ->type_name("P")
        ->group("Geometry");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Example: posenc index t5 --preset t5-decoder --what relative --query-length 1 --query-offset 6 "
              "--key-length 16 --format json\n"
              "Example: posenc index t5 --preset t5-decoder --key-length 8 --format json\n"
              "Example: posenc index t5 --preset t5-encoder --query-length 1 --key-length 300 --out buckets.npy");
    c->callback([f] { run_index(*f); });
  }
  using Family = BiasFamily<T5>;
  Family::add_bias(registry,
                   "The bias matrix [heads, query_length, key_length] from your table [num_buckets, heads]: "
                   "table[bucket(j - q_i)][h]",
                   mask_help,
                   "Example: posenc bias t5 --preset t5-encoder --heads 8 --table rel_bias.npy --key-length 512 --out "
                   "bias.npy");
  Family::add_scores(registry,
                     "scale * <q_i, k_j> + bias (T5: scale 1, no 1/sqrt(d)) for q [heads, Lq, d] and k [heads, Lk, "
                     "d]: bias rows, then one BLAS gemm per head accumulating into them",
                     mask_help,
                     "f64 when both inputs are f64, else f32.\n"
                     "Example: posenc scores t5 --preset t5-encoder --heads 8 --table rel_bias.npy --q q.npy --k k.npy "
                     "--out s.npy",
                     {"1", "default 1: T5 does not divide by sqrt(d)", "none"});
  Family::add_check(registry,
                    "Your bias tensor (.npy [heads, Lq, Lk]) made with your table against table[bucket][h] of the "
                    "exact buckets (budget row t5.check.exact.ratio) and, for the hf regime, HF's float32 buckets "
                    "within the envelope of a real torch log (t5.check.envelope); exit 0 pass, 1 fail",
                    "Example: posenc check t5 --preset t5-encoder --heads 8 --table rel_bias.npy --in bias.npy "
                    "--format json");
}

}  // namespace posenc::cli::scheme_t5
