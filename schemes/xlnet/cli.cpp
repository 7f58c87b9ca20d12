// schemes/xlnet/cli.cpp — XLNet's relative attention on the command line: its registration (description, presets and
// flags come from SpecTraits<XlnetSpec>, cli/spec_options.hpp) and its verbs:
//   posenc table xlnet     the table of a call [rows, d_model] (pos_seq klen .. -qlen + 1 for bi, klen .. 0 for uni)
//   posenc index xlnet     the row each score entry reads, -1 where uni leaves it undefined [Lq, Lk]; --what seg_mat:
//                          HF's one-hot segment matrix seg_mat [qlen, klen, 1, 2] of --token-types (memory type 0)
//   posenc scores xlnet    pre-softmax scores for q [heads, Lq, d_head], k [heads, Lk, d_head] (Lk = memory + Lq) with
//                          the layer's r_w_bias, r_r_bias, r_s_bias (.npy [heads, d_head]; zeros when not given),
//                          seg_embed (.npy [2, heads, d_head]), r (.npy [d_model, heads, d_head]) and the queries'
//                          --token-types (the segment term; none: no segment term); --what ef: HF's segment term
//                          ef alone [heads, Lq, Lk] (XlnetPlan::segment_term: unscaled, no mask)
//   posenc check xlnet     a user's table of a call against the exact table and the float32 steps; --what ef: a
//                          user's ef against the exact segment term within the envelope of any summation
#include <algorithm>
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
#include "posenc/xlnet.hpp"
#include "registry.hpp"
#include "relative_table_check.hpp"
#include "relative_verbs.hpp"
#include "spec_options.hpp"
#include "schemes/xlnet/check.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_xlnet {
namespace {

using Spec = XlnetSpec;
constexpr const char* kScheme = "xlnet";

std::function<void(const BiasGeometry&)> size_check(const Spec& s) {
  return [s](const BiasGeometry& g) { (void)xlnet_scores_size(s, g); };
}

// --token-types: one digit per query ("0011") or comma-separated integers in [0, 2^31) ("0,0,1,2"), one per query.
std::vector<std::int64_t> parse_token_types(const std::string& text, std::size_t queries) {
  std::vector<std::int64_t> out;
  const bool commas = text.find(',') != std::string::npos;
  std::size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const std::size_t end = commas ? std::min(text.find(',', at), text.size()) : std::min(at + 1, text.size());
    const std::string item = text.substr(at, end - at);
    std::int64_t v = -1;
    const bool digits = !item.empty() && item.size() <= 10 && item.find_first_not_of("0123456789") == std::string::npos;
    if (digits) v = std::stoll(item);
    if (!digits || v >= (std::int64_t{1} << 31))
      throw UsageError("--token-types: '" + text + "' is not a list of token types; accepted: one digit per query "
                       "(0011) or comma-separated integers in [0, 2^31) (0,0,1,2)");
    out.push_back(v);
    if (end >= text.size()) break;
    at = commas ? end + 1 : end;
  }
  if (out.size() != queries)
    throw UsageError("--token-types: '" + text + "' gives " + std::to_string(out.size()) + " types for " +
                     std::to_string(queries) + " queries; accepted: one per query (the memory keys have type 0)");
  return out;
}

// --token-types in the "Input" group: "the queries' token types, one digit each (0011) or comma-separated integers in
// [0, 2^31) (0,0,1,2)" between `before` and `after` (parse_token_types reads it).
void add_token_types_option(CLI::App* c, std::optional<std::string>& target, const std::string& before,
                            const std::string& after, const std::string& type) {
  c->add_option("--token-types", target,
                before + "the queries' token types, one digit each (0011) or comma-separated integers in [0, 2^31) "
                "(0,0,1,2)" + after)
      ->type_name(type)
      ->group("Input");
}

XlnetWeights zero_weights(const Spec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return {std::vector<double>(hd, 0.0), std::vector<double>(hd, 0.0), std::vector<double>(hd, 0.0),
          std::vector<double>(2 * hd, 0.0), std::vector<double>(s.d_model * hd, 0.0)};
}

// ---- table -------------------------------------------------------------------------------------------

struct TableCommand {
  SpecOptions<Spec> spec;
  RelativeTableFlags table;
  std::string query_length = "4", key_length = "8";
};

void run_table(TableCommand& f) {
  const Spec s = f.spec.build();
  const std::size_t lq = parse_length("--query-length", f.query_length), lk = parse_length("--key-length", f.key_length);
  std::size_t rows = 0;
  try {
    rows = xlnet_table_rows(s, lq, lk);
  } catch (const Error& e) {
    throw UsageError(std::string(e.parameter() == "query_length" ? "--query-length" : "--key-length") + ": " + e.what());
  }
  std::vector<std::int64_t> pos(rows);
  for (std::size_t c = 0; c < rows; ++c) pos[c] = xlnet_position(s, c, lq, lk);
  f.table.run(
      rows, s.d_model, result_head(s),
      "row c = [sin | cos] of pos_seq[c]: klen - c (bi: c < klen + qlen; uni: c <= klen), negated for the backward "
      "direction, clamped to [-clamp_len, clamp_len]; w_k = 10000^(-2k/d_model)",
      pos, "position",
      [&](std::span<float> t, const TableOptions& o) { xlnet_table(s, lq, lk, t, o); },
      [&](std::span<double> t, const TableOptions& o) { xlnet_table(s, lq, lk, t, o); });
}

// ---- index -------------------------------------------------------------------------------------------

struct IndexFlags {
  SpecOptions<Spec> spec;
  OutFlags out;
  BiasGeometryFlags geometry;
  std::string threads, what = "index";
  std::optional<std::string> types;
};

// The count of items in a --token-types text (digits, or comma-separated), before parse_token_types checks them.
std::size_t token_type_count(const std::string& text) {
  if (text.find(',') == std::string::npos) return text.size();
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) + 1;
}

// HF XLNetModel.forward's seg_mat for one sequence (bsz 1): cat_ids = [0] * mlen + token_types, seg_mat[i][j] =
// one_hot(token_types[i] != cat_ids[j], 2) as float32 (dtype_float of a float32 model), [qlen, klen, 1, 2].
void run_seg_mat(IndexFlags& f, const CLI::App* app) {
  const Spec s = f.spec.build();
  if (!f.types) throw UsageError("--token-types: required with --what seg_mat (the queries' token types, e.g. 0011)");
  if (app->count("--query-length") == 0) f.geometry.query_length = std::to_string(std::max<std::size_t>(1, token_type_count(*f.types)));
  if (app->count("--key-length") == 0) f.geometry.key_length = f.geometry.query_length;  // no memory unless given
  const BiasGeometry g = f.geometry.geometry(size_check(s));
  if (g.mask != BiasMask::none || !g.key_mask.empty())
    throw UsageError("--mask / --key-mask: seg_mat has no mask; give them to scores");
  const std::size_t Lq = g.query_length, Lk = g.key_length, mlen = Lk - Lq;
  const std::vector<std::int64_t> types = parse_token_types(*f.types, Lq);
  (void)parse_threads(f.threads);  // checked like every command's (seg_mat is one pass)
  const Format format = choose_format(f.out.format, f.out.out, {Format::npy, Format::json});
  check_memory(Lq * Lk * 2 * sizeof(float), "seg_mat");
  Output out(f.out.out, format == Format::npy);
  std::vector<float> m(Lq * Lk * 2);
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j) {
      const std::int64_t key_type = j < mlen ? 0 : types[j - mlen];
      const bool different = types[i] != key_type;
      m[(i * Lk + j) * 2 + (different ? 1 : 0)] = 1.0f;
    }
  if (format == Format::npy) {
    write_npy(out.file(), std::span<const float>(m), {Lq, Lk, 1, 2});
  } else {
    Json head = result_head(s);
    head["what"] = "seg_mat";
    head["dtype"] = "f32";
    head["shape"] = std::vector<std::size_t>{Lq, Lk, 1, 2};
    head["query_length"] = Lq;
    head["key_length"] = Lk;
    head["memory_length"] = mlen;
    head["token_types"] = types;
    head["note"] = "seg_mat[i][j][0] = one_hot(token_type[i] != cat_ids[j], 2), cat_ids = [0] * mlen + token_types "
                   "(memory keys type 0), float32, one row of 2 per (i, j) in C order (HF XLNetModel.forward, bsz 1)";
    write_json(out.file(), head, std::vector<JsonArray>{{"seg_mat", std::span<const float>(m), 2}});
  }
  out.commit();
}

void run_index(IndexFlags& f, const CLI::App* app) {
  if (f.what == "seg_mat") return run_seg_mat(f, app);
  if (f.what != "index")
    throw UsageError("--what: '" + f.what + "'; accepted: index (the row of the table each entry reads) | seg_mat (HF's "
                     "one-hot segment matrix [qlen, klen, 1, 2])");
  if (f.types) throw UsageError("--token-types: '" + *f.types + "' given, but only --what seg_mat reads token types");
  const Spec s = f.spec.build();
  run_index_command(f.geometry, f.threads, f.out, size_check(s), "indices",
                    [&](const BiasGeometry& g, std::span<std::int32_t> idx, const TableOptions& opts) {
    XlnetPlan(s, zero_weights(s)).indices(g, idx, opts);
    Json head = result_head(s);
    head["note"] = "c(i, j) = query_length - i + j: the row of `posenc table` (the rel_shift_bnij column) that entry (i, "
                   "j) reads, -1 where uni leaves the entry undefined (j > q_i: rel_shift_bnij leaves junk there)";
    return head;
  });
}

// ---- scores ------------------------------------------------------------------------------------------

struct ScoresCommand {
  SpecOptions<Spec> spec;
  RelativeScoresFlags scores;
  std::optional<std::string> u, v, sb, seg, r, types;
  std::string what = "scores";
};

// The weights ef reads (--r-s-bias, --seg-embed; zeros when not given) in a plan whose other weights are zeros.
XlnetPlan segment_plan(const Spec& s, const std::optional<std::string>& sb, const std::optional<std::string>& seg) {
  const std::size_t H = s.heads, d = s.d_head;
  XlnetWeights w = zero_weights(s);
  w.r_s_bias = read_weight("--r-s-bias", sb, H * d, {{H, d}, {H * d}}, true);
  w.seg_embed = read_weight("--seg-embed", seg, 2 * H * d, {{2, H, d}, {2, H * d}}, true);
  try {
    return XlnetPlan(s, w);
  } catch (const Error& e) {
    throw rename_weight_error(e, {{"r_s_bias", "--r-s-bias"}, {"seg_embed", "--seg-embed"}});
  }
}

// HF rel_attn_core's ef = einsum("ijbs,ibns->bnij", seg_mat, einsum("ibnd,snd->ibns", q_head + r_s_bias, seg_embed))
// of one sequence (bsz 1 squeezed): [heads, Lq, Lk], unscaled and unmasked.
void run_ef(ScoresCommand& f, const CLI::App* app) {
  for (const char* flag : {"--r-w-bias", "--r-r-bias", "--r"})
    if (app->count(flag) > 0)
      throw UsageError(std::string(flag) + ": not used by --what ef (ef = (q + r_s_bias).seg_embed[s(i, j)] reads only "
                       "--q, the key count of --k, --r-s-bias, --seg-embed and --token-types)");
  if (app->count("--scale") > 0)
    throw UsageError("--scale: --what ef is unscaled (HF multiplies ac + bd + ef by the scale afterwards)");
  if (app->count("--key-mask") > 0) throw UsageError("--key-mask: no mask applies to ef (give it to --what scores)");
  if (app->count("--mask") > 0 && f.scores.scores.mask != "none")
    throw UsageError("--mask: '" + f.scores.scores.mask + "'; no mask applies to ef (accepted with --what ef: none)");
  if (app->count("--form") > 0) throw UsageError("--form: not used by --what ef (one sequential sum per row, no gemm)");
  if (!f.types) throw UsageError("--token-types: required with --what ef (the queries' token types, e.g. 0011)");
  const ScoresInput in = read_scores_input(f.scores.scores.q_path, f.scores.scores.k_path);
  const Spec s = spec_for_inputs(f.spec, in, &Spec::heads, &Spec::d_head);
  check_heads(in, s.heads, s.d_head, "--heads", "--d-head");
  const XlnetPlan plan = segment_plan(s, f.sb, f.seg);
  const std::size_t H = s.heads, Lq = in.query_length, Lk = in.key_length;
  try {
    (void)xlnet_scores_size(s, {.query_length = Lq, .key_length = Lk});
  } catch (const Error& e) {
    throw UsageError("--k: " + std::string(e.what()));
  }
  const std::vector<std::int64_t> types = parse_token_types(*f.types, Lq);
  const TableOptions opts = parse_threads(f.scores.scores.threads);
  const Format format = choose_format(f.scores.scores.out.format, f.scores.scores.out.out, {Format::npy, Format::json});
  const bool f64 = in.q.stored == NpyType::f64;  // k gives only klen: its type does not matter
  const std::size_t n = H * Lq * Lk;
  check_memory(n * (f64 ? 8 : 4), "the ef tensor");
  Output out(f.scores.scores.out.out, format == Format::npy);
  Json head = result_head(s);
  head["what"] = "ef";
  head["dtype"] = f64 ? "f64" : "f32";
  head["shape"] = std::vector<std::size_t>{H, Lq, Lk};
  head["query_length"] = Lq;
  head["key_length"] = Lk;
  head["memory_length"] = Lk - Lq;
  head["token_types"] = types;
  head["note"] = "ef[h][i][j] = <q[h][i] + r_s_bias[h], seg_embed[s(i, j)][h]>, s(i, j) = 1 iff token_type[i] differs "
                 "from the key's (memory keys type 0): HF rel_attn_core's ef [bsz, heads, qlen, klen] with bsz 1 "
                 "squeezed, unscaled (the scale multiplies ac + bd + ef later) and unmasked; q + r_s_bias is one add "
                 "and the sum over d_head runs from e = 0 in the output type (XlnetPlan::segment_term)";
  auto emit = [&](auto values) {
    if (format == Format::npy) write_npy(out.file(), values, {H, Lq, Lk});
    else write_json(out.file(), head, std::vector<JsonArray>{{"ef", values, Lk}});
    out.commit();
  };
  if (f64) {
    std::vector<double> ef(n);
    plan.segment_term(std::span<const double>(in.q.values), Lq, Lk, types, std::span<double>(ef), opts);
    emit(std::span<const double>(ef));
  } else {
    const std::vector<float> q32(in.q.values.begin(), in.q.values.end());
    std::vector<float> ef(n);
    plan.segment_term(std::span<const float>(q32), Lq, Lk, types, std::span<float>(ef), opts);
    emit(std::span<const float>(ef));
  }
}

void run_scores(ScoresCommand& f, const CLI::App* app) {
  if (f.what == "ef") return run_ef(f, app);
  if (f.what != "scores")
    throw UsageError("--what: '" + f.what + "'; accepted: scores (the pre-softmax scores) | ef (HF's segment term alone "
                     "[heads, qlen, klen], unscaled)");
  const ScoresInput in = read_scores_input(f.scores.scores.q_path, f.scores.scores.k_path);
  const Spec s = spec_for_inputs(f.spec, in, &Spec::heads, &Spec::d_head);
  check_heads(in, s.heads, s.d_head, "--heads", "--d-head");
  const std::size_t H = s.heads, d = s.d_head, dm = s.d_model;
  XlnetWeights w;
  w.r_w_bias = read_weight("--r-w-bias", f.u, H * d, {{H, d}, {H * d}}, true);
  w.r_r_bias = read_weight("--r-r-bias", f.v, H * d, {{H, d}, {H * d}}, true);
  w.r_s_bias = read_weight("--r-s-bias", f.sb, H * d, {{H, d}, {H * d}}, true);
  w.seg_embed = read_weight("--seg-embed", f.seg, 2 * H * d, {{2, H, d}, {2, H * d}}, true);
  w.r = read_weight("--r", f.r, dm * H * d, {{dm, H, d}, {dm, H * d}}, false);
  const std::vector<std::int64_t> types = f.types ? parse_token_types(*f.types, in.query_length) : std::vector<std::int64_t>{};
  std::optional<XlnetPlan> plan;
  try {
    plan.emplace(s, w);
  } catch (const Error& e) {
    throw rename_weight_error(e, {{"r_w_bias", "--r-w-bias"}, {"r_r_bias", "--r-r-bias"}, {"r_s_bias", "--r-s-bias"},
                                  {"seg_embed", "--seg-embed"}, {"r", "--r"}});
  }
  Json head = result_head(s);
  head["note"] = "scores[h][i][j] = scale ((q + r_w_bias).k + (q + r_r_bias).R[c(i, j)] r + [token types] (q + "
                 "r_s_bias).seg_embed[different segment]), c(i, j) = qlen - i + j; -inf where uni leaves the entry "
                 "undefined or its mask hides it and at padded keys (HF subtracts 1e30 there)";
  if (!types.empty()) head["token_types"] = types;
  run_relative_scores(f.scores, in, head, 1.0 / std::sqrt(static_cast<double>(d)), size_check(s),
                      [&](auto q, auto k, const BiasGeometry& g, double scale, auto o, const TableOptions& opts,
                          RelativeScoresForm form) { plan->scores(q, k, g, types, scale, o, opts, form); });
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  TableCheckFlags check;
  std::string query_length, what = "table";
  std::optional<std::string> q, sb, seg, types;
};

// A user's ef ([heads, Lq, Lk] or HF's [1, heads, Lq, Lk]) against the exact segment term of --q and the weights.
void run_check_ef(CheckFlags& f, const CLI::App* app) {
  for (const char* flag : {"--query-length", "--ulp-pow", "--ulp-trig"})
    if (app->count(flag) > 0)
      throw UsageError(std::string(flag) + ": not used by --what ef (qlen comes from --q, klen from --in; the ef "
                       "envelope has no transcendental step)");
  if (!f.q) throw UsageError("--q: required with --what ef (the queries [heads, Lq, d_head] the ef was computed from)");
  if (!f.types) throw UsageError("--token-types: required with --what ef (the queries' token types, e.g. 0011)");
  const NpyArray a = f.check.in.read();
  std::vector<std::size_t> sh = a.shape;
  if (sh.size() == 4 && sh[0] == 1) sh.erase(sh.begin());  // HF's [bsz = 1, heads, qlen, klen]
  if (sh.size() != 3)
    throw UsageError("--in: '" + f.check.in.path + "' holds an array of shape " + shape_text(a.shape) +
                     "; accepted: ef [heads, qlen, klen] or HF's [1, heads, qlen, klen]");
  ScoresInput qin;
  qin.q = read_input("--q", *f.q);
  if (qin.q.shape.size() != 2 && qin.q.shape.size() != 3)
    throw UsageError("--q: holds an array of shape " + shape_text(qin.q.shape) +
                     "; accepted: [heads, qlen, d_head] or [qlen, d_head] (one head)");
  qin.heads = qin.q.shape.size() == 3 ? qin.q.shape[0] : 1;
  qin.head_dim = qin.q.shape.back();
  qin.query_length = qin.q.shape[qin.q.shape.size() - 2];
  qin.key_length = sh[2];
  const TableOptions opts = parse_threads(f.check.threads);
  verify::CheckReport rep;
  try {
    const Spec s = spec_for_inputs(f.spec, qin, &Spec::heads, &Spec::d_head);
    check_heads(qin, s.heads, s.d_head, "--heads", "--d-head");
    if (sh[0] != s.heads)
      throw UsageError("--in: " + std::to_string(sh[0]) + " heads (shape " + shape_text(a.shape) + ") but --q has " +
                       std::to_string(s.heads));
    if (sh[1] != qin.query_length)
      throw UsageError("--in: qlen " + std::to_string(sh[1]) + " (shape " + shape_text(a.shape) + ") but --q has " +
                       std::to_string(qin.query_length) + " queries");
    if (sh[1] > sh[2])
      throw UsageError("--in: shape " + shape_text(a.shape) + ": qlen > klen; the queries are the last qlen keys");
    const std::size_t H = s.heads, d = s.d_head;
    verify::xlnet::SegmentWeights w{read_weight("--r-s-bias", f.sb, H * d, {{H, d}, {H * d}}, true),
                                  read_weight("--seg-embed", f.seg, 2 * H * d, {{2, H, d}, {2, H * d}}, true)};
    const std::vector<std::int64_t> types = parse_token_types(*f.types, qin.query_length);
    verify::BiasTensorInput in;
    in.values = a.values;
    in.heads = sh[0];
    in.query_length = sh[1];
    in.key_length = sh[2];
    in.stored = dtype_of(a.stored);
    in.describe = {{"file", f.check.in.path}, {"stored", std::string(to_string(a.stored))}, {"shape", shape_text(a.shape)},
                   {"q", *f.q}};
    try {
      rep = verify::xlnet::check_segment_term(s, w, qin.q.values, types, in, opts.threads);
    } catch (const Error& e) {
      throw rename_weight_error(e, {{"r_s_bias", "--r-s-bias"}, {"seg_embed", "--seg-embed"}, {"q", "--q"},
                                    {"token_types", "--token-types"}});
    }
  } catch (const Error& e) {
    throw SpecOptions<Spec>::renamed(e);
  }
  f.check.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

void run_check(CheckFlags& f, CLI::App* app) {
  if (f.what == "ef") return run_check_ef(f, app);
  if (f.what != "table")
    throw UsageError("--what: '" + f.what + "'; accepted: table (pos_emb of one call) | ef (HF's segment term "
                     "[heads, qlen, klen])");
  for (const auto& [flag, given] : {std::pair<const char*, const std::optional<std::string>*>{"--q", &f.q},
                                    {"--r-s-bias", &f.sb}, {"--seg-embed", &f.seg}, {"--token-types", &f.types}})
    if (*given)
      throw UsageError(std::string(flag) + ": '" + **given + "' given, but only --what ef reads it (a table check needs "
                       "--in alone)");
  // The rows give klen for a query length: bi rows = klen + qlen, uni rows = klen + 1.
  run_relative_table_check(f.spec, f.check, app, &Spec::d_model, "--d-model",
                           "a table [rows, d_model] (pos_emb of one call)",
                           [&](const Spec& s, const auto& in, const auto& allowance, auto threads) {
                             const std::size_t lq =
                                 parse_length("--query-length", f.query_length.empty() ? "1" : f.query_length);
                             const bool bi = s.attn_type == XlnetAttnType::bi;
                             if (in.rows <= (bi ? lq : 1))
                               throw UsageError("--in: " + std::to_string(in.rows) +
                                                " rows cannot be a table with --query-length " + std::to_string(lq) +
                                                " (bi: klen + qlen rows, uni: klen + 1)");
                             const std::size_t lk = bi ? in.rows - lq : in.rows - 1;
                             return verify::xlnet::check_table(s, lq, lk, in, allowance, threads);
                           });
}

}  // namespace

POSENC_CLI_SCHEME(xlnet) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: padding keys get -inf";
  {
    auto f = std::make_shared<TableCommand>();
    CLI::App* c = registry.command("table", kScheme,
                                   "The table of a call [rows, d_model]: row c = [sin | cos] of pos_seq[c] (klen .. -qlen "
                                   "+ 1 for bi, klen .. 0 for uni; negated for the backward direction; clamp_len)");
    f->spec.add_to(c);
    c->add_option("--query-length", f->query_length, "qlen: the queries (default 4)")->type_name("N")->group("Geometry");
    c->add_option("--key-length", f->key_length, "klen = memory + qlen (default 8)")->type_name("N")->group("Geometry");
    f->table.add_to(c);
    c->footer("Example: posenc table xlnet --preset xlnet-base-cased --query-length 512 --key-length 1024 --out pos_emb.npy\n"
              "Example: posenc table xlnet --d-model 8 --query-length 2 --key-length 3 --regime exact --format csv");
    c->callback([f] { run_table(*f); });
  }
  {
    auto f = std::make_shared<IndexFlags>();
    CLI::App* c = registry.command("index", kScheme,
                                   "The row c(i, j) = qlen - i + j of the table each score entry reads, -1 where uni "
                                   "leaves it undefined (keys after the query) [query_length, key_length]");
    f->spec.add_to(c);
    f->geometry.add_to(c, mask_help + " (not for index: an index matrix has no mask)");
    c->add_option("--what", f->what,
                  "index (default): c(i, j); seg_mat: HF's one-hot segment matrix, float32 [qlen, klen, 1, 2] (bsz 1): "
                  "one_hot(token_type[i] != cat_ids[j], 2) with cat_ids the memory's zeros then --token-types "
                  "(transformers@98ad48f2 models/xlnet/modeling_xlnet.py XLNetModel.forward); npy | json")
        ->type_name("index|seg_mat");
    add_token_types_option(c, f->types, "with --what seg_mat: ", "; qlen defaults to their count, klen to qlen (no memory)",
                           "TYPES");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv (seg_mat: npy | json)");
    c->footer("Example: posenc index xlnet --what seg_mat --token-types 0011 --key-length 7 --out seg_mat.npy\n"
              "Example: posenc index xlnet --attn-type uni --query-length 4 --key-length 7 --format csv");
    c->callback([f, c] { run_index(*f, c); });
  }
  {
    auto f = std::make_shared<ScoresCommand>();
    CLI::App* c = registry.command(
        "scores", kScheme,
        "scale ((q + r_w_bias).k + rel_shift_bnij((q + r_r_bias) R r) + (q + r_s_bias).seg_embed[s]) for q [heads, Lq, "
        "d_head], k [heads, Lk, d_head] (Lk = memory + Lq); -inf where undefined or hidden");
    f->spec.add_to(c);
    f->scores.add_to(c, mask_help, "default 1/sqrt(d_head)");
    add_weight_option(c, "--r-w-bias", f->u, "r_w_bias: .npy [heads, d_head] (default zeros)");
    add_weight_option(c, "--r-r-bias", f->v, "r_r_bias: .npy [heads, d_head] (default zeros)");
    add_weight_option(c, "--r-s-bias", f->sb, "r_s_bias: .npy [heads, d_head] (default zeros)");
    add_weight_option(c, "--seg-embed", f->seg, "seg_embed: .npy [2, heads, d_head] (default zeros)");
    add_weight_option(c, "--r", f->r, "r: .npy [d_model, heads, d_head] (required)");
    add_token_types_option(c, f->types, "",
                           ": adds the segment term (the memory keys have type 0); required with --what ef", "BITS");
    c->add_option("--what", f->what,
                  "scores (default): the pre-softmax scores; ef: HF rel_attn_core's segment term alone, [heads, qlen, "
                  "klen] (HF's [bsz, heads, qlen, klen], bsz 1 squeezed) = (q + r_s_bias).seg_embed[s(i, j)], "
                  "unscaled, no mask: reads --q, --k (for klen only: its values are not used), --r-s-bias, --seg-embed, "
                  "--token-types; refuses --r-w-bias, --r-r-bias, --r, --scale, --key-mask, --mask other than none, "
                  "--form")
        ->type_name("scores|ef");
    c->footer("heads and d_head come from --q unless given; f64 when --q and --k are f64, else f32 (ef: when --q is "
              "f64).\n"
              "Example: posenc scores xlnet --d-model 16 --q q.npy --k k.npy --r r.npy --token-types 0011 --out s.npy\n"
              "Example: posenc scores xlnet --what ef --q q.npy --k k.npy --r-s-bias r_s_bias.npy --seg-embed "
              "seg_embed.npy --token-types 0011 --out ef.npy");
    c->callback([f, c] { run_scores(*f, c); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your table (.npy [rows, d_model], pos_emb of one call) against the exact table (budget rows "
        "sinusoidal.check.exact.<dtype>) and relative_positional_encoding's float32 steps (emulation envelope); exit 0 "
        "pass, 1 fail");
    f->spec.add_to(c);
    f->check.add_to(c, "pow");
    c->add_option("--query-length", f->query_length, "qlen of the call (default 1); klen follows from the rows")
        ->type_name("N")
        ->group("Geometry");
    c->add_option("--what", f->what,
                  "table (default): --in is pos_emb [rows, d_model] of one call; ef: --in is HF's segment term ef "
                  "[heads, qlen, klen] or [1, heads, qlen, klen] (klen from it, qlen from --q), held to the exact "
                  "(q + r_s_bias).seg_embed[s(i, j)] within the envelope of any summation order, with or without FMA, "
                  "in the stored type or wider (budget row xlnet.check.segment.envelope); no entry may be -inf")
        ->type_name("table|ef");
    c->add_option("--q", f->q, "with --what ef: the queries .npy [heads, qlen, d_head] or [qlen, d_head] (q_head)")
        ->type_name("FILE")
        ->group("Input");
    add_weight_option(c, "--r-s-bias", f->sb, "with --what ef: r_s_bias .npy [heads, d_head] (default zeros)");
    add_weight_option(c, "--seg-embed", f->seg, "with --what ef: seg_embed .npy [2, heads, d_head] (default zeros)");
    add_token_types_option(c, f->types, "with --what ef (required): ", "; the memory keys have type 0", "TYPES");
    c->footer("d_model comes from the table's shape unless given. The verdict is held to the regime.\n"
              "--what ef: heads and d_head come from --q unless given.\n"
              "Example: posenc check xlnet --preset xlnet-base-cased --query-length 512 --in pos_emb.npy --format json\n"
              "Example: posenc check xlnet --what ef --in ef.npy --q q.npy --r-s-bias r_s_bias.npy --seg-embed "
              "seg_embed.npy --token-types 0011");
    c->callback([f, c] { run_check(*f, c); });
  }
}

}  // namespace posenc::cli::scheme_xlnet
