// cli/verbs.hpp — the plumbing every scheme's verbs share: output flags, output types, thread counts, guarded
// allocation, the head of every result file (scheme + replayable spec), the --in tensor of check/identify/apply,
// and writing a report (check, identify) as Markdown or JSON with the exit status of its verdict.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "npy_reader.hpp"
#include "output.hpp"
#include "posenc/options.hpp"
#include "posenc/spec_json.hpp"
#include "posenc/vocabulary.hpp"
#include "registry.hpp"

namespace posenc::cli {

struct OutFlags {
  std::string format, out = "-";
  void add_to(CLI::App* a, const std::string& formats);
};

// --dtype of outputs: f32 | f64 (UsageError otherwise).
DType parse_output_dtype(const std::string& text);
// --threads N: 0 (OpenMP's default count, OMP_NUM_THREADS) .. 4096, capped at the processors; TableOptions with it.
TableOptions parse_threads(const std::string& text);

// Refuses sizes beyond the machine's physical memory before allocating (with overcommit a huge allocation
// succeeds and the process is killed later); posenc::IoError naming `what` when memory runs out.
void check_memory(std::size_t bytes, const std::string& what);
template <class T>
std::unique_ptr<T[]> allocate(std::size_t n, const std::string& what) {
  check_memory(n * sizeof(T), what);
  std::unique_ptr<T[]> p(new (std::nothrow) T[n]);
  if (!p) throw IoError("cannot allocate " + std::to_string(n * sizeof(T)) + " bytes for " + what);
  return p;
}

// {"scheme", "spec"}: the head of every result file; `posenc <verb> <scheme> --spec FILE` replays it.
template <DescribedSpec Spec>
Json result_head(const Spec& s) {
  Json head;
  head["scheme"] = std::string(SpecTraits<Spec>::scheme);
  head["spec"] = to_json(s);
  return head;
}

// --in FILE [--in-dtype T] of check / identify / apply.
struct InputFlags {
  std::string path, dtype;
  void add_to(CLI::App* a);
  // posenc::IoError naming the file for anything the reader refuses; kinds: the element types taken (floats, or
  // numbers where integer matrices are read: index matrices)
  NpyArray read(NpyKinds kinds = NpyKinds::floats) const;
};

// The element type of what a .npy file stored.
DType dtype_of(NpyType);
// One position per row / token: `text` (--positions syntax, flag `flag`) when given, else 0 .. n-1; a count other
// than n is a UsageError naming the flag, `what` (e.g. "an input of 4 tokens") and the `unit` ("token").
std::vector<std::int64_t> one_position_each(const std::string& flag, const std::string& text, bool given, std::size_t n,
                                            const std::string& what, const std::string& unit);
// A position list (flag `flag`) whose every run's ends pass the scheme's position check `check` (a posenc::Error
// about a position; runs are arithmetic, so their ends bound them). The error names the flag and the text typed.
PositionList parse_checked_positions(const std::string& flag, const std::string& text,
                                     const std::function<void(std::int64_t)>& check);
// `check` applied to position p, a posenc::Error renamed to the flag the user typed, with the text it came from.
void check_position_of(const std::string& flag, const std::string& text, std::int64_t p,
                       const std::function<void(std::int64_t)>& check);

// A .npy input named by a flag (--in, --q, --k): the reader's error prefixed by the flag. `kinds`: the element types
// taken (default floats; integers for token ids and masks).
NpyArray read_input(const std::string& flag, const std::string& path, std::optional<NpyType> declared = std::nullopt,
                    NpyKinds kinds = NpyKinds::floats);
// The declared element type of a .npy input (--in-dtype, --weights-dtype): empty text = none (the file's own);
// f16 | bf16 | f32 | f64; anything else a UsageError naming the flag.
std::optional<NpyType> parse_declared_dtype(const std::string& flag, const std::string& text);

// A check's ulp allowance for a float32 library function (--ulp-exp, --ulp-pow, --ulp-trig): a real in [0, 1e6].
void check_ulp_allowance(const CLI::App* app, const std::string& flag, double value);

// A report of check/identify: --format md (default) or json, --out; returns nothing, sets the exit status.
struct ReportFlags {
  std::string format = "md", out = "-";
  void add_to(CLI::App* a);
  void write(const Json& json, const std::string& markdown) const;
};

// The exit status a verb asks main() to return (check: 1 when the numbers fail their verdict).
int& exit_status();

}  // namespace posenc::cli
