// fuzz/npy_fuzz.cpp — libFuzzer target: the .npy reader (parse_npy), which `posenc check`, `identify` and
// `apply` run on users' files, under each declared type the command line can give (--in-dtype).
// Accepted outcomes: an array whose size matches its shape, or a posenc::IoError (one line naming the file and
// the problem). Anything else — another exception (std::bad_alloc from a size taken on trust, std::length_error),
// a crash, a sanitizer report, or an array that breaks the invariants below — is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "npy_reader.hpp"
#include "posenc/error.hpp"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "npy_fuzz: %s\n", what);
  std::abort();
}

void check(const posenc::cli::NpyArray& a, std::size_t file_size) {
  std::size_t n = 1;
  bool empty = false;
  for (std::size_t d : a.shape) empty = empty || d == 0;
  for (std::size_t d : a.shape) {
    if (empty) {
      n = 0;
      break;
    }
    if (n > SIZE_MAX / d) finding("the shape's product overflows yet the array was accepted");
    n *= d;
  }
  if (a.values.size() != n) finding("values.size() differs from the product of the shape");
  if (n > file_size) finding("more values than bytes in the file");  // every element takes >= 2 bytes
  if (a.rows() * a.cols() != n && n != 0) finding("rows() * cols() differs from the size");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  using posenc::cli::NpyType;
  for (std::optional<NpyType> declared : {std::optional<NpyType>{}, std::optional<NpyType>{NpyType::bf16},
                                          std::optional<NpyType>{NpyType::f16}}) {
    try {
      check(posenc::cli::parse_npy(bytes, "fuzz.npy", declared), size);
    } catch (const posenc::IoError&) {
    }
  }
  return 0;
}
