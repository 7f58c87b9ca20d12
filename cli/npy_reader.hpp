// cli/npy_reader.hpp — reading NumPy .npy files of floating-point values (and, where a caller asks for them,
// of integers: token ids, attention masks, position ids).
//
// The format (numpy.lib.format):
//   "\x93NUMPY", major, minor            versions 1.0 (then a little-endian u16 header length),
//                                        2.0 and 3.0 (a little-endian u32 header length)
//   header                               a Python dict literal, padded with spaces and ended by '\n':
//                                        {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//   data                                 product(shape) items, C order, nothing after them
//
// Accepted: exactly the keys 'descr', 'fortran_order' and 'shape', in any order, with any whitespace and
// optional trailing commas (single or double quotes); 'fortran_order': False; a shape tuple of
// non-negative integers — (), (5,), (2, 3, 4), (2,3,) — with at most 2^40 elements; descr '<f2' (f16),
// '<f4' (f32) or '<f8' (f64). bfloat16 is not a NumPy dtype: ml_dtypes saves it as '<V2', and a
// bit-cast array as '<u2' ('|V2' is the same void type); such 16-bit raw data is read as bf16 (the upper
// half of a float32) only when the caller declares bf16 (the CLI's `--in-dtype bf16`).
// Integers (NpyKinds::integers or numbers, never by default): '|b1' (bool), '|i1', '<i2', '<i4', '<i8',
// '|u1', '<u2', '<u4', '<u8' ('<' or '|' for the one-byte types, as NumPy accepts both); every value must
// have |v| < 2^53, so that the double holding it is exact (a larger one is refused, naming its index). With
// integers allowed, '<u2' is uint16 unless the caller declares bf16.
// Refused, each with one line "<name>: <what is wrong>; accepted: <what is accepted>" (posenc::IoError):
// a missing magic or unknown version, a truncated header or data, trailing bytes after the data, any
// other dtype (integer unless asked for, complex, object, structured; a float where only integers are
// asked for), big-endian '>' or native '=' byte order, '|' on a multi-byte number, Fortran order, a bad
// shape, and a declared type that differs from the file's own.
//
// Every value is converted exactly to double (f16, bf16 and f32 embed exactly; NaN payloads of f16 are
// kept). Sizes from the header are checked against the bytes actually present before anything is
// allocated from them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace posenc::cli {

enum class NpyType { f16, bf16, f32, f64, b1, i8, i16, i32, i64, u8, u16, u32, u64 };
// "f16", "bf16", "f32", "f64", "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"
std::string_view to_string(NpyType);
bool is_integer(NpyType);  // bool and the integer types

// Which element types a caller takes: floats (the default: every reader of values), integers (ids, masks:
// integer and bool dtypes only) or numbers (both).
enum class NpyKinds { floats, integers, numbers };

struct NpyArray {
  NpyType stored = NpyType::f64;     // element type in the file
  std::vector<std::size_t> shape;    // any number of dimensions; {} is a 0-d (scalar) array
  std::vector<double> values;        // every element, exactly, in C order
  std::size_t rows() const;          // product of all but the last dimension (1 for 0-d and 1-d)
  std::size_t cols() const;          // the last dimension (1 for 0-d)
};

// Parses a whole .npy file held in memory; `name` (a path, usually) starts every error message.
// declared = nullopt: the file's own dtype decides; otherwise it must agree with the file, and it is
// the only way to read '<u2'/'<V2' data as bf16 (declared applies to the float types only). `kinds`: the
// element types taken. Throws posenc::IoError.
NpyArray parse_npy(std::string_view bytes, std::string_view name, std::optional<NpyType> declared = std::nullopt,
                   NpyKinds kinds = NpyKinds::floats);

// The same from a file's preamble + header (`head`) and its data (`data`) held apart: the in-process inputs
// (cli/in_process.hpp), whose header is made from the host array's type and shape and whose data is read in place.
NpyArray parse_npy_parts(std::string_view head, std::string_view data, std::string_view name,
                         std::optional<NpyType> declared = std::nullopt, NpyKinds kinds = NpyKinds::floats);

// Reads the file at `path` and parses it. A missing, unreadable or directory path throws
// posenc::IoError naming the path and the system's reason.
NpyArray read_npy(const std::string& path, std::optional<NpyType> declared = std::nullopt,
                  NpyKinds kinds = NpyKinds::floats);

// "()", "(5,)", "(3, 4)": a shape as NumPy prints it.
std::string shape_text(const std::vector<std::size_t>& shape);

}  // namespace posenc::cli
