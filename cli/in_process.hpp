// cli/in_process.hpp — the command line run inside a host process (the Python module, python/): the same commands,
// parsing, validation, errors and writers as `posenc`, with inputs and outputs held in memory instead of files.
//
// A host opens an InProcess for the calling thread, names its arrays and texts, and runs a command line whose file
// flags carry those names (`--in <x>`); every reader and writer of the command line consults the thread's
// InProcess first:
//   read_npy         an array named here is parsed from its descr, shape and bytes, read in place (no copy of the
//                    bytes, no file): the header goes through the .npy reader's own checks, the values through its
//                    own exact conversion, so a command sees exactly the NpyArray it would read from np.save's file;
//   read_text_file   a text named here (a JSON spec, an HF config) is the file's content;
//   Output           "-" (stdout) and every name starting with '<' are written to memory (outputs, by name), which
//                    the host takes over without copying (a malloc'd buffer);
//   ReportFlags      the Markdown of a check/identify report is kept (report_markdown) whatever --format says.
// Nothing else changes: run_command (cli/run.hpp) is the one driver of both `posenc` and the module.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "npy_reader.hpp"

namespace posenc::cli {

// Bytes written by an in-memory Output: malloc'd (open_memstream), freed with free().
struct MemoryBuffer {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data;
  std::size_t size = 0;
};

struct InProcess {
  struct Array {
    std::string descr;               // NumPy's type string: '<f4', '<f8', '<f2', '<u2', '|b1', '<i8', ...
    std::vector<std::size_t> shape;  // C order
    std::string_view bytes;          // the host's buffer, product(shape) items, read in place
  };
  std::map<std::string, Array> arrays;
  std::map<std::string, std::string> texts;
  std::map<std::string, MemoryBuffer> outputs;  // by the --out name given ("-" for stdout)
  std::string report_markdown;

  static bool names_memory(std::string_view path) { return !path.empty() && path.front() == '<'; }
};

// The calling thread's InProcess, or null (the `posenc` program never opens one). Inline, so that the readers and
// writers that consult it (args.cpp, output.cpp) link without this file's .cpp (the fuzz targets build them alone).
namespace detail {
inline thread_local InProcess* current_in_process = nullptr;
}
inline InProcess* in_process() { return detail::current_in_process; }

// Opens `session` for the calling thread while it lives (not nested).
class InProcessScope {
 public:
  explicit InProcessScope(InProcess& session);
  ~InProcessScope();
  InProcessScope(const InProcessScope&) = delete;
  InProcessScope& operator=(const InProcessScope&) = delete;
};

// The array `name` of the thread's InProcess parsed as the .npy reader parses a file (posenc::IoError as it),
// or false when there is no such array.
bool read_in_process_npy(const std::string& name, std::optional<NpyType> declared, NpyKinds kinds, NpyArray* out);

}  // namespace posenc::cli
