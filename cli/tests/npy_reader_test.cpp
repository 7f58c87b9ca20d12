// cli/tests/npy_reader_test.cpp — the .npy reader on files built byte by byte in memory: every accepted
// dtype (exact values, f16 specials included), format versions 1-3, shapes and header spellings, and each
// refusal, whose one-line message must name the file and say what is wrong.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "npy_reader.hpp"
#include "posenc/error.hpp"

namespace {

using posenc::IoError;
using posenc::cli::NpyArray;
using posenc::cli::NpyKinds;
using posenc::cli::NpyType;
using posenc::cli::parse_npy;
using posenc::cli::read_npy;

constexpr std::string_view kName = "t.npy";

// A .npy file: magic, version, header length (u16 for 1.0, u32 otherwise), the header padded with spaces
// and '\n' to a multiple of 64 bytes as NumPy does, then the data.
std::string npy(std::string_view dict, std::string_view data, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header(dict);
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>(header.size() >> (8 * i) & 0xff);
  return out + header + std::string(data);
}

std::string dict(std::string_view descr, std::string_view shape) {
  return "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + std::string(shape) + ", }";
}

// Little-endian bytes of the values, each `bytes` wide.
std::string le(std::initializer_list<std::uint64_t> values, int bytes) {
  std::string out;
  for (const std::uint64_t v : values)
    for (int i = 0; i < bytes; ++i) out += static_cast<char>(v >> (8 * i) & 0xff);
  return out;
}
std::string f32s(std::initializer_list<float> v) {
  std::string out;
  for (const float x : v) out += le({std::bit_cast<std::uint32_t>(x)}, 4);
  return out;
}
std::string f64s(std::initializer_list<double> v) {
  std::string out;
  for (const double x : v) out += le({std::bit_cast<std::uint64_t>(x)}, 8);
  return out;
}
std::string zeros(std::size_t n) { return std::string(n, '\0'); }

// The refusal's message: one line, "t.npy: ...; accepted: ...", containing `phrase`.
void expect_refused(const std::string& bytes, std::string_view phrase, std::optional<NpyType> declared = std::nullopt,
                    NpyKinds kinds = NpyKinds::floats) {
  try {
    parse_npy(bytes, kName, declared, kinds);
    ADD_FAILURE() << "accepted, expected a refusal containing: " << phrase;
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.starts_with(std::string(kName) + ": ")) << what;
    EXPECT_NE(what.find("; accepted: "), std::string::npos) << what;
    EXPECT_NE(what.find(phrase), std::string::npos) << "missing \"" << phrase << "\" in: " << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(NpyReader, TypeNames) {
  EXPECT_EQ(to_string(NpyType::f16), "f16");
  EXPECT_EQ(to_string(NpyType::bf16), "bf16");
  EXPECT_EQ(to_string(NpyType::f32), "f32");
  EXPECT_EQ(to_string(NpyType::f64), "f64");
  EXPECT_EQ(to_string(NpyType::b1), "bool");
  EXPECT_EQ(to_string(NpyType::i64), "i64");
  EXPECT_EQ(to_string(NpyType::u8), "u8");
  EXPECT_FALSE(is_integer(NpyType::bf16));
  EXPECT_TRUE(is_integer(NpyType::b1));
  EXPECT_TRUE(is_integer(NpyType::u64));
}

TEST(NpyReader, F16ValuesAreExact) {
  const NpyArray a = parse_npy(
      npy(dict("<f2", "(10,)"), le({0x3c00, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xc000, 0x8000, 0x7c00, 0xfc00, 0x7e00}, 2)),
      kName);
  EXPECT_EQ(a.stored, NpyType::f16);
  ASSERT_EQ(a.values.size(), 10u);
  EXPECT_EQ(a.values[0], 1.0);
  EXPECT_EQ(a.values[1], std::ldexp(1.0, -24));          // smallest subnormal
  EXPECT_EQ(a.values[2], std::ldexp(1023.0, -24));       // largest subnormal
  EXPECT_EQ(a.values[3], std::ldexp(1.0, -14));          // smallest normal
  EXPECT_EQ(a.values[4], 65504.0);                       // largest finite
  EXPECT_EQ(a.values[5], -2.0);
  EXPECT_EQ(a.values[6], 0.0);
  EXPECT_TRUE(std::signbit(a.values[6]));                // -0 keeps its sign
  EXPECT_EQ(a.values[7], std::numeric_limits<double>::infinity());
  EXPECT_EQ(a.values[8], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(a.values[9]));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.values[9]), 0x7ff8000000000000u);  // the quiet NaN, payload widened
}

TEST(NpyReader, Bf16OnlyWhenDeclared) {
  const std::string data = le({0x3f80, 0xc000, 0x7f80, 0x0001}, 2);
  for (const std::string_view descr : {"<u2", "<V2", "|V2"}) {
    const NpyArray a = parse_npy(npy(dict(descr, "(4,)"), data), kName, NpyType::bf16);
    EXPECT_EQ(a.stored, NpyType::bf16) << descr;
    ASSERT_EQ(a.values.size(), 4u);
    EXPECT_EQ(a.values[0], 1.0);
    EXPECT_EQ(a.values[1], -2.0);
    EXPECT_EQ(a.values[2], std::numeric_limits<double>::infinity());
    EXPECT_EQ(a.values[3], std::ldexp(1.0, -133));  // a float32 subnormal
  }
  expect_refused(npy(dict("<u2", "(4,)"), data), "dtype '<u2' is not a float type");
  expect_refused(npy(dict("<V2", "(4,)"), data), "--in-dtype bf16");
  expect_refused(npy(dict("<u2", "(4,)"), data), "read only as bf16, not as the declared f16", NpyType::f16);
  expect_refused(npy(dict("<f4", "(1,)"), f32s({1})), "dtype '<f4' (f32) does not match the declared bf16", NpyType::bf16);
}

TEST(NpyReader, F32AndF64) {
  const NpyArray a = parse_npy(npy(dict("<f4", "(3,)"), f32s({0.1f, -3.5f, 1e-45f})), kName);
  EXPECT_EQ(a.stored, NpyType::f32);
  EXPECT_EQ(a.values, (std::vector<double>{0.1f, -3.5f, 1e-45f}));
  const NpyArray b = parse_npy(npy(dict("<f8", "(3,)"), f64s({0.1, -1e300, 5e-324})), kName, NpyType::f64);
  EXPECT_EQ(b.stored, NpyType::f64);
  EXPECT_EQ(b.values, (std::vector<double>{0.1, -1e300, 5e-324}));
  // A declared type equal to the file's own is accepted.
  EXPECT_EQ(parse_npy(npy(dict("<f4", "(1,)"), f32s({2})), kName, NpyType::f32).values, std::vector<double>{2});
}

TEST(NpyReader, FormatVersions) {
  for (const int major : {1, 2, 3}) {
    const NpyArray a = parse_npy(npy(dict("<f8", "(2,)"), f64s({1.5, 2.5}), major), kName);
    EXPECT_EQ(a.values, (std::vector<double>{1.5, 2.5})) << "version " << major;
  }
  expect_refused(npy(dict("<f8", "(2,)"), f64s({1.5, 2.5}), 4), "format version 4.0 is not supported");
  std::string minor = npy(dict("<f8", "(2,)"), f64s({1.5, 2.5}));
  minor[7] = 1;
  expect_refused(minor, "format version 1.1 is not supported");
}

TEST(NpyReader, Shapes) {
  struct Case {
    std::string_view shape;
    std::vector<std::size_t> dims;
    std::size_t rows, cols;
  };
  for (const Case& c : {Case{"()", {}, 1, 1}, Case{"(5,)", {5}, 1, 5}, Case{"(2, 3)", {2, 3}, 2, 3},
                        Case{"(2,3,)", {2, 3}, 2, 3}, Case{"( 2 ,3 , )", {2, 3}, 2, 3},
                        Case{"(2, 3, 4)", {2, 3, 4}, 6, 4}, Case{"(0, 3)", {0, 3}, 0, 3}, Case{"(0,)", {0}, 1, 0}}) {
    std::size_t count = 1;
    for (const std::size_t d : c.dims) count *= d;
    const NpyArray a = parse_npy(npy(dict("<f4", c.shape), zeros(4 * count)), kName);
    EXPECT_EQ(a.shape, c.dims) << c.shape;
    EXPECT_EQ(a.values.size(), count) << c.shape;
    EXPECT_EQ(a.rows(), c.rows) << c.shape;
    EXPECT_EQ(a.cols(), c.cols) << c.shape;
  }
  const NpyArray a = parse_npy(npy(dict("<f8", "(2, 2)"), f64s({1, 2, 3, 4})), kName);
  EXPECT_EQ(a.values, (std::vector<double>{1, 2, 3, 4}));  // C order, as stored
}

TEST(NpyReader, HeaderSpellings) {
  for (const std::string_view header : {
           "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",
           "{'fortran_order':False,'descr':'<f4','shape':(2,),}",
           "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}",
           "  {\n 'descr' : '<f4' ,\t'shape' : ( 2 , ) ,\n 'fortran_order' : False ,\n }  ",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }",  // Python 2 era long integer
       }) {
    const NpyArray a = parse_npy(npy(header, f32s({1, 2})), kName);
    EXPECT_EQ(a.values, (std::vector<double>{1, 2})) << header;
  }
}

TEST(NpyReader, RefusesBadPreamble) {
  expect_refused("PK\x03\x04 not npy at all", "not a .npy file");
  expect_refused(std::string("\x93NUM", 4), "too short for a .npy preamble");
  expect_refused(std::string("\x93NUMPY\x01", 7), "too short for a .npy preamble");
  expect_refused(std::string("\x93NUMPY\x02\x00\x10", 9), "truncated header");
  std::string cut = npy(dict("<f4", "(2,)"), "");
  expect_refused(cut.substr(0, 40), "truncated header: the header length is 118 bytes but only 30 follow");
}

TEST(NpyReader, RefusesOtherDtypes) {
  expect_refused(npy(dict("<i4", "(1,)"), zeros(4)), "dtype '<i4' is not a float type");
  expect_refused(npy(dict("<c8", "(1,)"), zeros(8)), "dtype '<c8' is not a float type");
  expect_refused(npy(dict("|O", "(1,)"), zeros(8)), "dtype '|O' is not a float type");
  expect_refused(npy(dict("f4", "(1,)"), zeros(4)), "dtype 'f4' is not a float type");
  expect_refused(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", zeros(4)),
                 "dtype [('a', '<f4')] is a structured dtype");
  expect_refused(npy("{'descr': 4, 'fortran_order': False, 'shape': (1,)}", zeros(4)), "is not a dtype string");
  expect_refused(npy(dict(">f4", "(1,)"), zeros(4)), "dtype '>f4' is big-endian");
  expect_refused(npy(dict("=f8", "(1,)"), zeros(8)), "has native byte order '='");
  expect_refused(npy(dict("|f4", "(1,)"), zeros(4)), "byte order '|', which is not valid for a float type");
  expect_refused(npy(dict(">u2", "(1,)"), zeros(2)), "is big-endian", NpyType::bf16);
  // Every dtype refusal lists what is accepted.
  expect_refused(npy(dict("<i4", "(1,)"), zeros(4)), "'<f2' (f16), '<f4' (f32), '<f8' (f64)");
}

TEST(NpyReader, RefusesDeclaredMismatch) {
  expect_refused(npy(dict("<f8", "(1,)"), zeros(8)), "dtype '<f8' (f64) does not match the declared f32", NpyType::f32);
  expect_refused(npy(dict("<f2", "(1,)"), zeros(2)), "dtype '<f2' (f16) does not match the declared f64", NpyType::f64);
}

TEST(NpyReader, RefusesFortranOrder) {
  expect_refused(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", zeros(16)),
                 "Fortran order is not supported; save with np.ascontiguousarray");
  expect_refused(npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 2)}", zeros(16)), "is not True or False");
}

TEST(NpyReader, RefusesBadShapes) {
  expect_refused(npy(dict("<f4", "(-1, 3)"), ""), "shape (-1, 3) has the negative entry -1");
  expect_refused(npy(dict("<f4", "(2.5,)"), ""), "shape (2.5,) has the non-integer entry 2.5");
  expect_refused(npy(dict("<f4", "('a',)"), ""), "has the non-integer entry 'a'");
  expect_refused(npy(dict("<f4", "((2,),)"), ""), "has the non-integer entry (2,)");
  expect_refused(npy(dict("<f4", "[2, 3]"), ""), "shape [2, 3] is not a tuple");
  expect_refused(npy(dict("<f4", "(5)"), zeros(20)), "shape (5) is not a tuple");
  expect_refused(npy(dict("<f4", "5"), zeros(20)), "shape 5 is not a tuple");
  expect_refused(npy(dict("<f4", "(1099511627777,)"), ""), "has more than 2^40 elements");
  expect_refused(npy(dict("<f4", "(2097152, 524289)"), ""), "has more than 2^40 elements");
  expect_refused(npy(dict("<f4", "(1099511627776, 1099511627776, 1099511627776)"), ""), "has more than 2^40 elements");
  expect_refused(npy(dict("<f4", "(99999999999999999999999999999,)"), ""), "has more than 2^40 elements");
  // A zero dimension makes the count 0 however large the others (each still at most 2^40).
  EXPECT_TRUE(parse_npy(npy(dict("<f4", "(1099511627776, 0)"), ""), kName).values.empty());
}

TEST(NpyReader, RefusesWrongDataSize) {
  expect_refused(npy(dict("<f4", "(2, 3)"), zeros(12)), "truncated: 12 bytes of data, shape (2, 3) of '<f4' needs 24");
  expect_refused(npy(dict("<f8", "()"), ""), "truncated: 0 bytes of data, shape () of '<f8' needs 8");
  expect_refused(npy(dict("<f2", "(3,)"), zeros(9)), "3 trailing bytes after the 6 bytes of data");
}

TEST(NpyReader, RefusesMalformedHeaders) {
  expect_refused(npy("{'descr': '<f4', 'fortran_order': False}", ""), "header has no 'shape' key");
  expect_refused(npy("{'fortran_order': False, 'shape': ()}", zeros(4)), "header has no 'descr' key");
  expect_refused(npy("{}", ""), "header has no 'descr' key");
  expect_refused(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", zeros(4)),
                 "unexpected key 'x'");
  expect_refused(npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", zeros(4)),
                 "repeats the key 'descr'");
  expect_refused(npy("{'descr' '<f4', 'fortran_order': False, 'shape': ()}", zeros(4)), "malformed header: expected ':'");
  expect_refused(npy("{'descr': '<f4' 'fortran_order': False, 'shape': ()}", zeros(4)), "expected ',' or '}'");
  expect_refused(npy("{'descr': '<f4, 'fortran_order': False, 'shape': ()}", zeros(4)), "malformed header");
  expect_refused(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}", zeros(24)), "expected ',' or ')'");
  expect_refused(npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()} junk", zeros(4)),
                 "expected the end of the header");
  expect_refused(npy("['descr', '<f4']", zeros(4)), "expected '{'");
  expect_refused(npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()", zeros(4)), "malformed header");
  expect_refused(npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(5000, '(') + "}", ""),
                 "nested too deeply");
  // Binary junk in the header is quoted as \xNN, keeping the message one printable line.
  expect_refused(npy(std::string("{\x01\xff", 3), ""), "at \"\\x01\\xff");
}

// Integer dtypes: only where the caller asks for them; every value exact in double, |v| < 2^53.
TEST(NpyReader, IntegersOnlyWhenAskedFor) {
  struct Case {
    std::string_view descr;
    NpyType type;
    int bytes;
    std::uint64_t raw;  // the bit pattern of one element
    double value;
  };
  const Case cases[] = {
      {"|b1", NpyType::b1, 1, 1, 1.0},
      {"|i1", NpyType::i8, 1, 0x80, -128.0},
      {"<i1", NpyType::i8, 1, 0x7f, 127.0},   // NumPy reads any byte order for one byte
      {"|u1", NpyType::u8, 1, 0xff, 255.0},
      {"<i2", NpyType::i16, 2, 0x8000, -32768.0},
      {"<u2", NpyType::u16, 2, 0xffff, 65535.0},
      {"<i4", NpyType::i32, 4, 0xffffffff, -1.0},
      {"<u4", NpyType::u32, 4, 0xffffffff, 4294967295.0},
      {"<i8", NpyType::i64, 8, 0x001fffffffffffff, 9007199254740991.0},       // 2^53 - 1
      {"<i8", NpyType::i64, 8, 0xffe0000000000001, -9007199254740991.0},      // -(2^53 - 1)
      {"<u8", NpyType::u64, 8, 0x001fffffffffffff, 9007199254740991.0},
  };
  for (const Case& c : cases) {
    const std::string bytes = npy(dict(c.descr, "(2,)"), le({0, c.raw}, c.bytes));
    for (const NpyKinds kinds : {NpyKinds::integers, NpyKinds::numbers}) {
      const NpyArray a = parse_npy(bytes, kName, std::nullopt, kinds);
      EXPECT_EQ(a.stored, c.type) << c.descr;
      EXPECT_EQ(a.values, (std::vector<double>{0.0, c.value})) << c.descr;
    }
    // Not by default: every reader of values (check, apply, scores) still takes floats only.
    expect_refused(bytes, "is not a float type");
  }
  // A 2-D array keeps its shape; the int64 ids a position-id file holds.
  const NpyArray ids = parse_npy(npy(dict("<i8", "(2, 3)"), le({2, 3, 4, 1, 1, 2}, 8)), kName, std::nullopt,
                                 NpyKinds::integers);
  EXPECT_EQ(ids.shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(ids.values, (std::vector<double>{2, 3, 4, 1, 1, 2}));
  // numbers: floats too; integers: floats refused.
  EXPECT_EQ(parse_npy(npy(dict("<f4", "(1,)"), f32s({2.5f})), kName, std::nullopt, NpyKinds::numbers).values,
            std::vector<double>{2.5});
  expect_refused(npy(dict("<f4", "(1,)"), f32s({2.5f})), "dtype '<f4' is not an integer type", std::nullopt,
                 NpyKinds::integers);
  expect_refused(npy(dict("<f4", "(1,)"), f32s({2.5f})), "'|b1' (bool), '|i1', '<i2'", std::nullopt,
                 NpyKinds::integers);
  expect_refused(npy(dict("<c8", "(1,)"), zeros(8)), "dtype '<c8' is not an integer or float type", std::nullopt,
                 NpyKinds::numbers);
  // '<u2' is uint16 with integers allowed, bf16 only when declared.
  const std::string raw = npy(dict("<u2", "(1,)"), le({0x3f80}, 2));
  EXPECT_EQ(parse_npy(raw, kName, std::nullopt, NpyKinds::numbers).values, std::vector<double>{16256});
  EXPECT_EQ(parse_npy(raw, kName, NpyType::bf16, NpyKinds::numbers).stored, NpyType::bf16);
  EXPECT_EQ(parse_npy(raw, kName, NpyType::bf16, NpyKinds::numbers).values, std::vector<double>{1.0});
}

TEST(NpyReader, RefusesIntegersADoubleCannotHold) {
  for (const NpyKinds kinds : {NpyKinds::integers, NpyKinds::numbers}) {
    expect_refused(npy(dict("<i8", "(2, 2)"), le({0, 0, 0, std::uint64_t{1} << 53}, 8)),
                   "value 9007199254740992 at index [1, 1] has |v| >= 2^53", std::nullopt, kinds);
    expect_refused(npy(dict("<i8", "(1,)"), le({0x8000000000000000}, 8)),
                   "value -9223372036854775808 at index [0] has |v| >= 2^53", std::nullopt, kinds);
    expect_refused(npy(dict("<u8", "(3,)"), le({1, 2, ~std::uint64_t{0}}, 8)),
                   "value 18446744073709551615 at index [2]", std::nullopt, kinds);
    expect_refused(npy(dict("<u8", "(1,)"), le({std::uint64_t{1} << 60}, 8)), "integers with |v| < 2^53", std::nullopt,
                   kinds);
  }
}

TEST(NpyReader, RefusesMalformedIntegers) {
  const auto ints = NpyKinds::integers;
  expect_refused(npy(dict("|b1", "(3,)"), le({0, 1, 2}, 1)), "byte 2 at index [2] is not a bool", std::nullopt, ints);
  expect_refused(npy(dict(">i4", "(1,)"), zeros(4)), "dtype '>i4' is big-endian", std::nullopt, ints);
  expect_refused(npy(dict("=i8", "(1,)"), zeros(8)), "has native byte order '='", std::nullopt, ints);
  expect_refused(npy(dict("|i2", "(1,)"), zeros(2)), "not valid for a multi-byte integer type", std::nullopt, ints);
  expect_refused(npy(dict("<i4", "(2,)"), zeros(4)), "truncated: 4 bytes of data", std::nullopt, ints);
  expect_refused(npy(dict("|i1", "(2,)"), zeros(3)), "1 trailing bytes", std::nullopt, ints);
  expect_refused(npy(dict("<i4", "(1,)"), zeros(4)), "dtype '<i4' (i32) does not match the declared f32",
                 NpyType::f32, NpyKinds::numbers);
}

TEST(NpyReader, ReadsFilesAndNamesUnreadablePaths) {
  const std::filesystem::path dir = ::testing::TempDir();
  const std::string path = (dir / "posenc_npy_reader_test.npy").string();
  {
    std::ofstream f(path, std::ios::binary);
    f << npy(dict("<f4", "(2, 1)"), f32s({0.5f, 4}), 2);
  }
  const NpyArray a = read_npy(path);
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(a.values, (std::vector<double>{0.5, 4}));
  {
    std::ofstream f(path, std::ios::binary);
    f << npy(dict("<i8", "(2,)"), le({7, 3}, 8));
  }
  EXPECT_EQ(read_npy(path, std::nullopt, NpyKinds::integers).values, (std::vector<double>{7, 3}));
  std::remove(path.c_str());

  for (const auto& [bad, reason] : {std::pair<std::string, std::string_view>{(dir / "no_such_file.npy").string(),
                                                                           "No such file or directory"},
                                    {dir.string(), "Is a directory"}}) {
    try {
      read_npy(bad);
      ADD_FAILURE() << "read " << bad;
    } catch (const IoError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.starts_with(bad + ": ")) << what;
      EXPECT_NE(what.find(reason), std::string::npos) << what;
      EXPECT_NE(what.find("; accepted: "), std::string::npos) << what;
    }
  }
}

}  // namespace
