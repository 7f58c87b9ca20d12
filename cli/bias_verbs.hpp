// cli/bias_verbs.hpp — what the command lines of the additive-bias schemes (ALiBi, KERPLE, ...) share: the geometry
// flags (--query-length, --key-length, --key-mask, --mask), writing a [heads, Lq, Lk] bias tensor in every format,
// and reading and checking the --q / --k inputs of `posenc scores`.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "npy_reader.hpp"
#include "output.hpp"
#include "posenc/bias.hpp"
#include "posenc/error.hpp"
#include "verbs.hpp"

namespace posenc::cli {

// The geometry flags of `posenc bias <scheme>` (and --key-mask / --mask of scores).
struct BiasGeometryFlags {
  std::string query_length, key_length = "8", mask = "none";
  std::optional<std::string> key_mask;
  std::vector<std::uint8_t> key_mask_values;  // parsed by geometry()

  // --key-length, --query-length, --key-mask, --mask (group "Geometry"); key_mask_help says what the mask does.
  void add_to(CLI::App* c, const std::string& key_mask_help);
  // The geometry, checked by `check` (the scheme's size function: its Errors are renamed to the flags).
  BiasGeometry geometry(const std::function<void(const BiasGeometry&)>& check);
};

// --key-mask: 0/1 per key, as digits ("0011111") or comma-separated ("0,0,1,1"); not given: empty (every key a
// token). --mask: none | causal.
std::vector<std::uint8_t> parse_key_mask(const std::optional<std::string>& given);
// Any 0/1 mask flag in that syntax (learned's --mask: "an attention mask", one per "token"): UsageError naming the
// flag, the text and `what` it is not, or that it holds no entries.
std::vector<std::uint8_t> parse_bits(const std::string& flag, const std::string& text, const std::string& what,
                                     const std::string& unit);
BiasMask parse_mask(const std::string& text);
// A length flag: an integer in [1, 2^31 - 1].
std::size_t parse_length(const std::string& flag, const std::string& text);
// A per-head list flag (KERPLE's --bias-p 1.2,0.8): comma-separated reals (spaces around an item allowed), one
// per head, or ONE real used for every head; `heads` values out. UsageError naming the flag, the text typed and
// the accepted form for an empty item, an item that is not a whole real (as strtod reads it), one beyond the range
// of a double, or a count other than 1 and `heads`. nan and inf are read: the scheme's own check refuses them.
std::vector<double> parse_per_head_list(const std::string& flag, const std::string& text, std::size_t heads);
// The geometry checked by `check`, its Errors renamed to the flags (UsageError).
BiasGeometry checked_geometry(std::size_t lq, std::size_t lk, const std::vector<std::uint8_t>& key_mask, BiasMask m,
                              const std::function<void(const BiasGeometry&)>& check);

// Writes an index matrix [Lq][Lk] (T5 buckets, Shaw indices, DeBERTa positions) in the format: npy as int64, JSON
// as `head` (result_head(spec) plus what the scheme adds) with the rows under `name`, or CSV rows; commits the
// output.
void write_index_matrix(Output& out, Format format, Json head, const std::string& name,
                        std::span<const std::int32_t> index, std::size_t query_length, std::size_t key_length);

// `posenc index <scheme>`: the geometry from the flags (checked by `check`; a --mask or --key-mask is refused with
// `no_mask`: an index has none), --threads and the output checked, then fill(g, idx, options) writes the int32 matrix
// [Lq][Lk] and returns the JSON head; written under `name` (write_index_matrix).
using IndexFill = std::function<Json(const BiasGeometry&, std::span<std::int32_t>, const TableOptions&)>;
inline constexpr const char* kIndexHasNoMask =
    "--mask / --key-mask: an index matrix has no mask (it is an index); give them to scores";
void run_index_command(BiasGeometryFlags& geometry, const std::string& threads, const OutFlags& out,
                       const std::function<void(const BiasGeometry&)>& check, const std::string& name,
                       const IndexFill& fill, const std::string& no_mask = kIndexHasNoMask);

// Writes bias [heads][Lq][Lk] in the format (head: result_head(spec) plus what the scheme adds; note: one line
// of what an entry is) and commits the output.
void write_bias_tensor(Output& out, Format format, Json head, const std::string& note, std::span<const float> values,
                       const BiasGeometry& g, std::size_t heads);
void write_bias_tensor(Output& out, Format format, Json head, const std::string& note, std::span<const double> values,
                       const BiasGeometry& g, std::size_t heads);

// The --q / --k inputs of `posenc scores <scheme>`: shape [heads, L, d] or [L, d] (one head), equal heads and d,
// and Lq <= Lk where the queries are the last keys (posenc/bias.hpp; not DeBERTa, whose queries are positions
// 0 .. Lq - 1 of their own) (UsageError naming the flag otherwise).
struct ScoresInput {
  NpyArray q, k;
  std::size_t heads = 1, head_dim = 0, query_length = 0, key_length = 0;
  bool f64 = false;  // both inputs stored as f64: compute in double
};
ScoresInput read_scores_input(const std::string& q_path, const std::string& k_path, bool queries_are_last_keys = true);
// --scale (default 1/sqrt(head_dim)), finite.
double scores_scale(const std::optional<std::string>& given, std::size_t head_dim);

// Writes scores [heads][Lq][Lk] (npy or json) and commits the output.
void write_scores(Output& out, Format format, Json head, double scale, const BiasGeometry& g, std::size_t heads,
                  std::span<const float> values);
void write_scores(Output& out, Format format, Json head, double scale, const BiasGeometry& g, std::size_t heads,
                  std::span<const double> values);

// Runs the scheme's scores in f32 or f64 (as the inputs are stored) and writes them: compute(q, k, out) for each type.
template <class Compute32, class Compute64>
void run_scores_typed(const ScoresInput& in, Output& out, Format format, const Json& head, double scale,
                      const BiasGeometry& g, Compute32&& c32, Compute64&& c64) {
  const std::size_t n = in.heads * in.query_length * in.key_length;
  check_memory(n * (in.f64 ? 8 : 4), "the scores tensor");
  if (in.f64) {
    std::vector<double> sc(n);
    c64(std::span<const double>(in.q.values), std::span<const double>(in.k.values), std::span<double>(sc));
    write_scores(out, format, head, scale, g, in.heads, std::span<const double>(sc));
  } else {
    const std::vector<float> q32(in.q.values.begin(), in.q.values.end()), k32(in.k.values.begin(), in.k.values.end());
    std::vector<float> sc(n);
    c32(std::span<const float>(q32), std::span<const float>(k32), std::span<float>(sc));
    write_scores(out, format, head, scale, g, in.heads, std::span<const float>(sc));
  }
}

// The flags of `posenc scores <bias scheme>` besides the spec and the weights: --q, --k, --scale, --key-mask,
// --mask, --threads and the output (npy | json).
struct ScoresFlags {
  std::string q_path, k_path, mask = "causal", threads;
  std::optional<std::string> key_mask;
  std::optional<std::string> scale;
  OutFlags out;

  // default_scale: what --scale defaults to (nullopt: 1/sqrt(head_dim)), as the help says; mask: the default --mask.
  std::optional<std::string> default_scale;
  void add_to(CLI::App* c, const std::string& key_mask_help, const std::string& scale_help = "default 1/sqrt(head_dim)",
              const std::string& default_mask = "causal");
};

// Scores of a plan for inputs already read and matched to the spec's heads: the geometry from the flags, checked by
// `check` (the scheme's size function), then Plan::scores in f32 or f64 as the inputs are stored; `head` leads the
// JSON output.
template <class Plan>
void run_bias_scores(const ScoresFlags& f, const ScoresInput& in, const Plan& plan, const Json& head,
                     const std::function<void(const BiasGeometry&)>& check) {
  const std::vector<std::uint8_t> km = parse_key_mask(f.key_mask);
  const BiasGeometry g = checked_geometry(in.query_length, in.key_length, km, parse_mask(f.mask), check);
  const double scale = scores_scale(f.scale ? f.scale : f.default_scale, in.head_dim);
  const TableOptions opts = parse_threads(f.threads);
  const Format format = choose_format(f.out.format, f.out.out, {Format::npy, Format::json});
  Output out(f.out.out, format == Format::npy);
  const std::size_t d = in.head_dim;
  run_scores_typed(
      in, out, format, head, scale, g,
      [&](std::span<const float> q, std::span<const float> k, std::span<float> o) { plan.scores(q, k, d, g, scale, o, opts); },
      [&](std::span<const double> q, std::span<const double> k, std::span<double> o) { plan.scores(q, k, d, g, scale, o, opts); });
}

// A plan whose scores take every head at once, plan.scores(q, k, heads, g, scale, out, options) (Shaw, NEZHA),
// seen through the runner's call plan.scores(q, k, head_dim, g, scale, out, options).
template <class Plan>
struct AllHeadsPlan {
  const Plan& plan;
  std::size_t heads;
  template <class T>
  void scores(std::span<const T> q, std::span<const T> k, std::size_t, const BiasGeometry& g, double scale,
              std::span<T> out, const TableOptions& o) const {
    plan.scores(q, k, heads, g, scale, out, o);
  }
};

// --v of `posenc scores <scheme> --v v.npy`: [heads, key_length, head_dim], or [key_length, head_dim] with one head
// (UsageError naming --v and the accepted shape otherwise).
NpyArray read_values_input(const std::string& v_path, const ScoresInput& in);
// Writes the attention output z [heads][Lq][head_dim] (npy, or json with `head`, the scale and the note) and commits.
void write_attention_output(Output& out, Format format, Json head, double scale, const std::string& note,
                            const ScoresInput& in, std::span<const float> z);
void write_attention_output(Output& out, Format format, Json head, double scale, const std::string& note,
                            const ScoresInput& in, std::span<const double> z);

// The attention output of a plan with plan.attend(q, k, v, heads, g, scale, z, options) (the schemes whose relative
// term changes the values too): the geometry, scale, threads and output from the flags as run_bias_scores, v from
// --v; computed in f64 when q, k and v are all stored as f64, else in f32. An Error on the key mask names --key-mask.
template <class Plan>
void run_attention_output(const ScoresFlags& f, const std::string& v_path, const ScoresInput& in, const Plan& plan,
                          const Json& head, const std::string& note,
                          const std::function<void(const BiasGeometry&)>& check) {
  const NpyArray v = read_values_input(v_path, in);
  const std::vector<std::uint8_t> km = parse_key_mask(f.key_mask);
  const BiasGeometry g = checked_geometry(in.query_length, in.key_length, km, parse_mask(f.mask), check);
  const double scale = scores_scale(f.scale ? f.scale : f.default_scale, in.head_dim);
  const TableOptions opts = parse_threads(f.threads);
  const Format format = choose_format(f.out.format, f.out.out, {Format::npy, Format::json});
  Output out(f.out.out, format == Format::npy);
  const std::size_t n = in.heads * in.query_length * in.head_dim;
  check_memory(n * (in.f64 ? 8 : 4), "the attention output");
  try {
    if (in.f64 && v.stored == NpyType::f64) {
      std::vector<double> z(n);
      plan.attend(std::span<const double>(in.q.values), std::span<const double>(in.k.values),
                  std::span<const double>(v.values), in.heads, g, scale, std::span<double>(z), opts);
      write_attention_output(out, format, head, scale, note, in, std::span<const double>(z));
    } else {
      const std::vector<float> q(in.q.values.begin(), in.q.values.end()), k(in.k.values.begin(), in.k.values.end()),
          vv(v.values.begin(), v.values.end());
      std::vector<float> z(n);
      plan.attend(std::span<const float>(q), std::span<const float>(k), std::span<const float>(vv), in.heads, g, scale,
                  std::span<float>(z), opts);
      write_attention_output(out, format, head, scale, note, in, std::span<const float>(z));
    }
  } catch (const Error& e) {
    throw e.parameter() == "key_mask" ? e.renamed("--key-mask") : e;
  }
}

}  // namespace posenc::cli
