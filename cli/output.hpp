// cli/output.hpp — where results go (stdout or a file replaced atomically) and the three writers.
//
//   .npy  NumPy format 1.0: "\x93NUMPY" 1 0, little-endian u16 header length, the header dict
//         {'descr': '<f4'|'<f8', 'fortran_order': False, 'shape': (n, d), } padded with spaces so that
//         magic + header end on a multiple of 64 bytes (newline last), then little-endian C-order data.
//   JSON  one object: the caller's metadata members, then numeric arrays; numbers are written with the
//         shortest digits that read back to the same float / double (std::to_chars), non-finite as null.
//   CSV   a header row, then one row per record: integer label columns, then value columns.
#pragma once

#include "posenc/half.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace posenc::cli {

enum class Format { npy, json, csv };
std::string_view to_string(Format);
// --format if given (non-empty), else the --out extension (.npy/.json/.csv), else json.
// Throws UsageError for an unknown format or extension or a format not in `allowed`.
Format choose_format(std::string_view format_flag, std::string_view out_path, std::vector<Format> allowed = {});

// Where a command's result goes. Construct it before computing anything, so a bad destination is reported at
// once (and a temporary file exists only while the result is being made):
//  * "-" or empty: stdout;
//  * a regular file, or a path that does not exist: written to a temporary file next to it, which commit()
//    renames over the target; a replaced file keeps its mode (and owner and group where the system allows);
//    a destroyed uncommitted Output, or SIGINT/SIGTERM/SIGHUP/SIGQUIT, removes the temporary file, so a failed
//    or interrupted command leaves no partial output and the old file untouched;
//  * a symbolic link: the file it names, as above (the link stays a link);
//  * a character device or a FIFO (/dev/null, /dev/stdout, a named pipe): written in place (no atomic
//    replace is possible); a write error (ENOSPC on /dev/full) is reported;
//  * anything else (a directory, a block device, a socket): refused.
// In an in-process command (cli/in_process.hpp), stdout and every name starting with '<' are written to memory:
// commit() hands the bytes to the thread's InProcess under that name ("-" for stdout).
// I/O failures throw posenc::IoError naming the path and the system's reason.
class Output {
 public:
  explicit Output(std::string path, bool binary);
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output();

  std::FILE* file() const { return file_; }
  bool is_stdout() const { return path_.empty(); }
  void commit();

 private:
  void discard_tmp() noexcept;
  std::string path_, target_, tmp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false, in_place_ = false, replaces_ = false;
  bool memory_ = false;  // an in-process command's output (cli/in_process.hpp): open_memstream's buffer
  char* memory_data_ = nullptr;
  std::size_t memory_size_ = 0;
  unsigned keep_mode_ = 0, keep_uid_ = 0, keep_gid_ = 0;
};

using NumberSpan = std::variant<std::span<const std::int64_t>, std::span<const float>, std::span<const double>>;

// One numeric member of a JSON document: a flat array (cols == 0) or rows of `cols` numbers.
struct JsonArray {
  std::string name;
  NumberSpan values;
  std::size_t cols = 0;
};
void write_json(std::FILE*, const nlohmann::ordered_json& head, std::span<const JsonArray> arrays);

// .npy of a float32/float64 array of the given shape (any number of dimensions, product = values.size()).
void write_npy(std::FILE*, std::span<const float> values, std::vector<std::size_t> shape);
void write_npy(std::FILE*, std::span<const double> values, std::vector<std::size_t> shape);
// Integers (bucket and index matrices) as '<i8'.
void write_npy(std::FILE*, std::span<const std::int64_t> values, std::vector<std::size_t> shape);
// 16-bit data: f16 as '<f2'; bf16, which NumPy has no type for, as its bit patterns '<u2' (read back with
// `--in-dtype bf16`, or in NumPy with .view(ml_dtypes.bfloat16) / torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)).
void write_npy(std::FILE*, std::span<const f16> values, std::vector<std::size_t> shape);
void write_npy(std::FILE*, std::span<const bf16> values, std::vector<std::size_t> shape);
// The header bytes alone (exposed for tests and for writers that stream the data).
std::string npy_header(std::string_view descr, const std::vector<std::size_t>& shape);

struct CsvColumn {
  std::string name;
  std::vector<std::int64_t> values;  // one per row
};
// Header: label names then value_names; row r: labels[*].values[r], then values[r*cols .. r*cols+cols).
void write_csv(std::FILE*, const std::vector<CsvColumn>& labels, const std::vector<std::string>& value_names,
               NumberSpan values, std::size_t rows);
// "c0", "c1", ..., "c{n-1}".
std::vector<std::string> numbered_names(std::string_view prefix, std::size_t n);

}  // namespace posenc::cli
