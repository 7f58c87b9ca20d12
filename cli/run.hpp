// cli/run.hpp — one command line, parsed and run: the driver of the `posenc` program (main.cpp) and of the Python
// module (python/), so both take the same commands, flags, checks and errors.
//
// Failures are classified as the program's exit statuses:
//   2  usage and argument errors (CLI11 parse errors, posenc::Error, malformed flag values)
//   1  everything else (posenc::IoError, out of memory, ...), and `check` / `identify` whose verdict is "fail"
#pragma once

#include <string>
#include <vector>

namespace posenc::cli {

struct RunResult {
  enum class Failure { none, usage, io, memory, other };
  int status = 0;                  // the program's exit status
  Failure failure = Failure::none;
  std::string error;               // the failure's message (one line: control bytes shown as \xNN)
  std::string out, err;            // what --help / --version printed (CLI11's own streams)
};

// Runs `args` (the command line without the program name). Never throws: every failure is in the result.
RunResult run_command(const std::vector<std::string>& args);

// The options of `posenc <verb> <scheme>` (what the Python module maps keyword arguments to): the long flag, its
// type name as --help shows it (FILE, N, X, LIST, ...), its default as --help shows it, and whether it takes a
// value (false: a flag). A UsageError
// naming the schemes that have `verb` when there is no such command.
struct OptionInfo {
  std::string flag, type, default_value;  // default_value: "true" for a flag that is on unless --flag=false
  bool takes_value = true;
};
std::vector<OptionInfo> command_options(const std::string& verb, const std::string& scheme);

}  // namespace posenc::cli
