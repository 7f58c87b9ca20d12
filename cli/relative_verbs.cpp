#include "relative_verbs.hpp"

#include <string>

#include "npy_reader.hpp"

namespace posenc::cli {

std::vector<double> read_weight(const std::string& flag, const std::optional<std::string>& path, std::size_t count,
                                const std::vector<std::vector<std::size_t>>& shapes, bool zeros_if_absent) {
  std::string accepted;
  for (const auto& s : shapes) accepted += (accepted.empty() ? "" : " or ") + shape_text(s);
  if (!path) {
    if (zeros_if_absent) return std::vector<double>(count, 0.0);
    throw UsageError(flag + ": required: a .npy of shape " + accepted);
  }
  NpyArray a = read_input(flag, *path);
  bool ok = false;
  for (const auto& s : shapes) ok = ok || a.shape == s;
  if (!ok)
    throw UsageError(flag + ": '" + *path + "' holds an array of shape " + shape_text(a.shape) + "; accepted: " + accepted);
  return std::move(a.values);
}

Error rename_weight_error(const Error& e, std::initializer_list<std::pair<const char*, const char*>> names) {
  for (const auto& [param, flag] : names)
    if (e.parameter() == param) return Error(e.where(), flag, e.value(), e.accepted(), e.problem());
  return e;
}

void add_weight_option(CLI::App* c, const std::string& flag, std::optional<std::string>& target, const std::string& help) {
  c->add_option(flag, target, help)->type_name("FILE")->group("Weights");
}

void TableCheckFlags::add_to(CLI::App* c, const std::string& func) {
  func_flag = "--ulp-" + func;
  in.add_to(c);
  c->add_option(func_flag, ulp_func, "Envelope: ulps a float32 " + func + " may be off correctly rounded (default 2)")
      ->type_name("A")
      ->check(CLI::Range(0.0, 1.0e6))
      ->group("Envelope");
  c->add_option("--ulp-trig", ulp_trig, "Envelope: ulps a float32 sin/cos may be off correctly rounded (default 2)")
      ->type_name("A")
      ->check(CLI::Range(0.0, 1.0e6))
      ->group("Envelope");
  c->add_option("--threads", threads, "OpenMP threads for the oracle (0: default)")->type_name("N");
  report.add_to(c);
}

std::pair<double, double> TableCheckFlags::allowance(const CLI::App* app) const {
  check_ulp_allowance(app, func_flag, ulp_func);
  check_ulp_allowance(app, "--ulp-trig", ulp_trig);
  return {ulp_func, ulp_trig};
}

RelativeScoresForm parse_form(const std::string& text) {
  if (const auto f = enum_from_string<RelativeScoresForm>(text)) return *f;
  throw UsageError("--form: '" + text + "' is not a form; accepted: " + enum_names<RelativeScoresForm>());
}

namespace {

template <class T>
void write_table_impl(Output& out, Format format, Json head, const std::string& note, std::span<const T> values,
                      std::size_t rows, std::size_t cols, std::span<const std::int64_t> labels,
                      const std::string& label_name) {
  if (format == Format::npy) {
    write_npy(out.file(), values, {rows, cols});
  } else if (format == Format::json) {
    head["dtype"] = sizeof(T) == 4 ? "f32" : "f64";
    head["note"] = note;
    write_json(out.file(), head,
               std::vector<JsonArray>{{label_name, labels, 0}, {"table", values, cols}});
  } else {
    write_csv(out.file(), {CsvColumn{label_name, std::vector<std::int64_t>(labels.begin(), labels.end())}},
              numbered_names("c", cols), values, rows);
  }
  out.commit();
}

}  // namespace

void write_relative_table(Output& out, Format format, Json head, const std::string& note, std::span<const float> values,
                          std::size_t rows, std::size_t cols, std::span<const std::int64_t> labels,
                          const std::string& label_name) {
  write_table_impl(out, format, std::move(head), note, values, rows, cols, labels, label_name);
}
void write_relative_table(Output& out, Format format, Json head, const std::string& note,
                          std::span<const double> values, std::size_t rows, std::size_t cols,
                          std::span<const std::int64_t> labels, const std::string& label_name) {
  write_table_impl(out, format, std::move(head), note, values, rows, cols, labels, label_name);
}

void RelativeTableFlags::add_to(CLI::App* c) {
  c->add_option("--dtype", dtype, "f32 (default) | f64")->type_name("T")->group("Output");
  c->add_option("--threads", threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
  out.add_to(c, "npy | json | csv");
}

void RelativeScoresFlags::add_to(CLI::App* c, const std::string& key_mask_help, const std::string& scale_help) {
  scores.add_to(c, key_mask_help, scale_help, "none");
  c->add_option("--form", form,
                "blas (default): one gemm per block of query rows against the table rows it reads, the shift as a "
                "copy; direct: every entry at its own table row with explicit dot products")
      ->type_name(enum_names<RelativeScoresForm>())
      ->group("Input");
}

void check_heads(const ScoresInput& in, std::size_t heads, std::size_t d_head, const std::string& heads_flag,
                 const std::string& d_head_flag) {
  if (in.heads != heads)
    throw UsageError("--q: " + std::to_string(in.heads) + " heads, but the spec has " + heads_flag + " " +
                     std::to_string(heads) + " (give " + heads_flag + " to match, or inputs [" + std::to_string(heads) +
                     ", L, d_head])");
  if (in.head_dim != d_head)
    throw UsageError("--q: head_dim " + std::to_string(in.head_dim) + ", but the spec has " + d_head_flag + " " +
                     std::to_string(d_head));
}

}  // namespace posenc::cli
