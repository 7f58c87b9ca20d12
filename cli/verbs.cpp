#include "verbs.hpp"

#include "in_process.hpp"

#include <unistd.h>

#include <cstdio>

#include "args.hpp"
#include "posenc/error.hpp"
#include "posenc/json_text.hpp"

namespace posenc::cli {

void OutFlags::add_to(CLI::App* a, const std::string& formats) {
  a->add_option("--format", format, formats + " (default: from the --out extension, else json)")
      ->type_name("FMT")
      ->group("Output");
  a->add_option("--out", out, "Output file, written atomically, or - for stdout (default -)")->type_name("FILE")->group("Output");
}

DType parse_output_dtype(const std::string& text) {
  if (text == "f32") return DType::f32;
  if (text == "f64") return DType::f64;
  throw UsageError("--dtype: '" + text + "' is not an output type; accepted: f32 | f64");
}

TableOptions parse_threads(const std::string& text) {
  TableOptions opts;
  if (text.empty()) return opts;
  const std::int64_t t = parse_int64("--threads", text);
  if (t < 0 || t > 4096)
    throw UsageError("--threads: '" + text + "' is out of range; accepted: 0 (OpenMP's default count) .. 4096 (capped at the "
                     "number of processors)");
  opts.threads = static_cast<int>(t);
  return opts;
}

void check_memory(std::size_t bytes, const std::string& what) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) {
    const double phys = static_cast<double>(pages) * static_cast<double>(page);
    if (static_cast<double>(bytes) > phys)
      throw IoError(what + " needs " + std::to_string(bytes) + " bytes, more than this machine's memory (" +
                    std::to_string(static_cast<long long>(phys)) + " bytes)");
  }
}

void InputFlags::add_to(CLI::App* a) {
  a->add_option("--in", path, "The .npy file to read (f16, f32, f64; bf16 stored as uint16 with --in-dtype bf16)")
      ->type_name("FILE")
      ->required()
      ->group("Input");
  a->add_option("--in-dtype", dtype,
                "Element type of --in: f16 | bf16 | f32 | f64 (default: the file's own; bf16 must be declared, "
                "NumPy stores it as '<u2' or '<V2')")
      ->type_name("T")
      ->group("Input");
}

DType dtype_of(NpyType t) {
  switch (t) {
    case NpyType::f16: return DType::f16;
    case NpyType::bf16: return DType::bf16;
    case NpyType::f32: return DType::f32;
    case NpyType::f64: return DType::f64;
    default: break;  // integer types: read only where a caller asks for them (NpyKinds), never held to ulps
  }
  return DType::f64;
}

std::vector<std::int64_t> one_position_each(const std::string& flag, const std::string& text, bool given, std::size_t n,
                                            const std::string& what, const std::string& unit) {
  if (!given) {
    std::vector<std::int64_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int64_t>(i);
    return v;
  }
  const PositionList pl = PositionList::parse(flag, text);
  if (pl.size() != n)
    throw UsageError(flag + ": '" + text + "' has " + std::to_string(pl.size()) + " positions for " + what +
                     "; give one position per " + unit);
  return pl.materialize();
}

void check_position_of(const std::string& flag, const std::string& text, std::int64_t p,
                       const std::function<void(std::int64_t)>& check) {
  try {
    check(p);
  } catch (const Error& e) {
    const std::string v = std::to_string(p);
    throw Error(e.where(), flag, text == v ? v : v + " (of '" + text + "')", e.accepted(), e.problem());
  }
}

PositionList parse_checked_positions(const std::string& flag, const std::string& text,
                                     const std::function<void(std::int64_t)>& check) {
  PositionList pl = PositionList::parse(flag, text);
  for (const auto& r : pl.runs()) {
    check_position_of(flag, text, r.start, check);
    check_position_of(flag, text, r.last(), check);
  }
  return pl;
}

NpyArray read_input(const std::string& flag, const std::string& path, std::optional<NpyType> declared, NpyKinds kinds) {
  try {
    NpyArray held;
    if (read_in_process_npy(path, declared, kinds, &held)) return held;
    return read_npy(path, declared, kinds);
  } catch (const IoError& e) {
    throw IoError(flag + ": " + e.what());
  }
}

void check_ulp_allowance(const CLI::App* app, const std::string& flag, double value) {
  if (value >= 0 && value <= 1e6) return;
  const auto& typed = app->get_option(flag)->results();
  throw UsageError(flag + ": '" + (typed.empty() ? std::string("?") : typed.back()) +
                   "' is out of range; accepted: a real in [0, 1e6]");
}

std::optional<NpyType> parse_declared_dtype(const std::string& flag, const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (text == "f16") return NpyType::f16;
  if (text == "bf16") return NpyType::bf16;
  if (text == "f32") return NpyType::f32;
  if (text == "f64") return NpyType::f64;
  throw UsageError(flag + ": '" + text + "' is not an element type; accepted: f16 | bf16 | f32 | f64");
}

NpyArray InputFlags::read(NpyKinds kinds) const {
  NpyArray a = read_input("--in", path, parse_declared_dtype("--in-dtype", dtype), kinds);
  // An array with no values (shape (0, 128)) has nothing to check, identify or transform.
  if (a.values.empty())
    throw UsageError("--in: '" + text_excerpt(path) + "' holds no values (shape " + shape_text(a.shape) +
                     "); accepted: an array with at least one value");
  return a;
}

void ReportFlags::add_to(CLI::App* a) {
  a->add_option("--format", format, "md (default) | json")->type_name("FMT")->group("Output");
  a->add_option("--out", out, "Report file, written atomically, or - for stdout (default -)")->type_name("FILE")->group("Output");
}

void ReportFlags::write(const Json& json, const std::string& markdown) const {
  if (format != "md" && format != "json")
    throw UsageError("--format: '" + format + "' is not a report format; accepted: md | json");
  if (InProcess* session = in_process()) session->report_markdown = markdown;
  Output o(out == "-" ? std::string() : out, false);
  const std::string text = format == "json" ? json.dump(2) + "\n" : markdown;
  if (std::fwrite(text.data(), 1, text.size(), o.file()) != text.size()) throw IoError("cannot write the report to " + out);
  o.commit();
}

int& exit_status() {
  thread_local int status = 0;  // per thread: in-process commands (the Python module) run on several at once
  return status;
}

}  // namespace posenc::cli
