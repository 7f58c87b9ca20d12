// cli/relative_verbs.hpp — what the command lines of the sinusoid-relative attentions (Transformer-XL, XLNet, TENER)
// share: reading their trained weights from .npy files, writing the table of a call, and the scores runner with
// --form (posenc/relative_attention.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bias_verbs.hpp"
#include "output.hpp"
#include "spec_options.hpp"
#include "posenc/relative_attention.hpp"
#include "verbs.hpp"

namespace posenc::cli {

// A weight tensor from the .npy of `flag`: its values, row-major, when its shape is one of `shapes`; not given:
// `count` zeros when `zeros_if_absent`, else a UsageError naming the flag. shape_text_accepted: how the help names it.
std::vector<double> read_weight(const std::string& flag, const std::optional<std::string>& path, std::size_t count,
                                const std::vector<std::vector<std::size_t>>& shapes, bool zeros_if_absent);

// A trained parameter's Error from a plan's constructor with the parameter renamed to its flag (names: {parameter,
// flag} pairs; a parameter not listed keeps its name).
Error rename_weight_error(const Error& e, std::initializer_list<std::pair<const char*, const char*>> names);

// A weight flag (.npy FILE) in the "Weights" group.
void add_weight_option(CLI::App* c, const std::string& flag, std::optional<std::string>& target, const std::string& help);

// The spec of a scores command: heads and d_head from the inputs (--q) unless a flag, a preset or --spec gives them.
template <class Spec>
Spec spec_for_inputs(SpecOptions<Spec>& options, const ScoresInput& in, std::size_t Spec::*heads,
                     std::size_t Spec::*d_head) {
  Spec s = options.build();
  if (!options.given("--spec") && !options.given("--preset")) {
    if (!options.given("--heads")) s.*heads = in.heads;
    if (!options.given("--d-head")) s.*d_head = in.head_dim;
    validate(s);
  }
  return s;
}

// --form: blas | direct (UsageError naming --form otherwise).
RelativeScoresForm parse_form(const std::string& text);

// Writes the table of a call [rows][cols] (npy, json with `head` and `note`, or csv with one label per row under
// `label_name`) and commits the output.
void write_relative_table(Output& out, Format format, Json head, const std::string& note, std::span<const float> values,
                          std::size_t rows, std::size_t cols, std::span<const std::int64_t> labels,
                          const std::string& label_name);
void write_relative_table(Output& out, Format format, Json head, const std::string& note,
                          std::span<const double> values, std::size_t rows, std::size_t cols,
                          std::span<const std::int64_t> labels, const std::string& label_name);

// The table command of a scheme: writes rows x cols of T from fill(std::span<T>, options), f32 or f64 as --dtype says.
struct RelativeTableFlags {
  OutFlags out;
  std::string dtype = "f32", threads;
  void add_to(CLI::App* c);
  template <class Fill32, class Fill64>
  void run(std::size_t rows, std::size_t cols, const Json& head, const std::string& note,
           std::span<const std::int64_t> labels, const std::string& label_name, Fill32&& f32, Fill64&& f64) const {
    const bool dbl = parse_output_dtype(dtype) == DType::f64;
    const TableOptions opts = parse_threads(threads);
    const Format format = choose_format(out.format, out.out);
    Output o(out.out, format == Format::npy);
    const std::size_t n = rows * cols;
    const std::string what = "a " + std::to_string(rows) + " x " + std::to_string(cols) + " table";
    if (dbl) {
      auto data = allocate<double>(n, what);
      f64(std::span<double>(data.get(), n), opts);
      write_relative_table(o, format, head, note, std::span<const double>(data.get(), n), rows, cols, labels, label_name);
    } else {
      auto data = allocate<float>(n, what);
      f32(std::span<float>(data.get(), n), opts);
      write_relative_table(o, format, head, note, std::span<const float>(data.get(), n), rows, cols, labels, label_name);
    }
  }
};

// The scores command's flags: ScoresFlags (--q, --k, --scale, --key-mask, --mask, --threads, output) and --form.
struct RelativeScoresFlags {
  ScoresFlags scores;
  std::string form = "blas";
  void add_to(CLI::App* c, const std::string& key_mask_help, const std::string& scale_help);
};

// The flags of `posenc check <scheme>` for a table of one call: --in, the envelope's ulp allowances (--ulp-<func> for the
// frequencies' transcendental step, --ulp-trig), --threads and the report.
struct TableCheckFlags {
  InputFlags in;
  ReportFlags report;
  std::string threads;
  double ulp_func = 2.0, ulp_trig = 2.0;
  std::string func_flag;
  // func: "pow" or "exp", the float32 function the frequencies go through (its allowance's flag --ulp-<func>).
  void add_to(CLI::App* c, const std::string& func);
  // The allowances {--ulp-<func>, --ulp-trig}, checked (UsageError naming the flag).
  std::pair<double, double> allowance(const CLI::App* app) const;
};

// Checks the inputs' heads and head_dim against the spec's (UsageError naming --q and the spec's flags otherwise).
void check_heads(const ScoresInput& in, std::size_t heads, std::size_t d_head, const std::string& heads_flag,
                 const std::string& d_head_flag);

// Runs plan-side scores(q, k, g, scale, out, options, form) in f32 or f64 as the inputs are stored and writes them;
// default_scale is what --scale defaults to.
template <class Compute>
void run_relative_scores(const RelativeScoresFlags& f, const ScoresInput& in, const Json& head, double default_scale,
                         const std::function<void(const BiasGeometry&)>& check, Compute&& compute) {
  const std::vector<std::uint8_t> km = parse_key_mask(f.scores.key_mask);
  const BiasGeometry g = checked_geometry(in.query_length, in.key_length, km, parse_mask(f.scores.mask), check);
  const RelativeScoresForm form = parse_form(f.form);
  const double scale = f.scores.scale ? scores_scale(f.scores.scale, in.head_dim) : default_scale;
  const TableOptions opts = parse_threads(f.scores.threads);
  const Format format = choose_format(f.scores.out.format, f.scores.out.out, {Format::npy, Format::json});
  Output out(f.scores.out.out, format == Format::npy);
  Json h = head;
  h["form"] = std::string(to_string(form));
  run_scores_typed(
      in, out, format, h, scale, g,
      [&](std::span<const float> q, std::span<const float> k, std::span<float> o) { compute(q, k, g, scale, o, opts, form); },
      [&](std::span<const double> q, std::span<const double> k, std::span<double> o) { compute(q, k, g, scale, o, opts, form); });
}

}  // namespace posenc::cli
