// cli/npy_reader.cpp — see npy_reader.hpp for the format and what is accepted.
//
// The header is read by a small parser for the Python literals NumPy writes (strings, True/False,
// integers, tuples); anything else (lists, dicts, floats) is kept as raw text so that the message can
// quote it. Nesting is bounded, so a hostile header cannot exhaust the stack.
#include "npy_reader.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posenc/error.hpp"

namespace posenc::cli {

std::string_view to_string(NpyType t) {
  switch (t) {
    case NpyType::f16: return "f16";
    case NpyType::bf16: return "bf16";
    case NpyType::f32: return "f32";
    case NpyType::f64: return "f64";
    case NpyType::b1: return "bool";
    case NpyType::i8: return "i8";
    case NpyType::i16: return "i16";
    case NpyType::i32: return "i32";
    case NpyType::i64: return "i64";
    case NpyType::u8: return "u8";
    case NpyType::u16: return "u16";
    case NpyType::u32: return "u32";
    case NpyType::u64: return "u64";
  }
  return "?";
}

bool is_integer(NpyType t) {
  return t != NpyType::f16 && t != NpyType::bf16 && t != NpyType::f32 && t != NpyType::f64;
}

std::size_t NpyArray::rows() const {
  std::size_t n = 1;
  for (std::size_t i = 0; i + 1 < shape.size(); ++i) n *= shape[i];  // bounded by the checked count
  return n;
}

std::size_t NpyArray::cols() const { return shape.empty() ? 1 : shape.back(); }

namespace {

// 2^40 elements (8 TiB as double): far beyond any real input, small enough that count × 8 cannot overflow.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 40;
constexpr int kMaxNesting = 16;

constexpr std::string_view kAcceptedDtypes =
    "'<f2' (f16), '<f4' (f32), '<f8' (f64), or '<u2'/'<V2' with --in-dtype bf16";
constexpr std::string_view kAcceptedIntegers =
    "'|b1' (bool), '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8' (integers with |v| < 2^53)";
constexpr std::string_view kAcceptedNumbers =
    "'|b1' (bool), '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8' (integers with |v| < 2^53), "
    "'<f2' (f16), '<f4' (f32) or '<f8' (f64)";

std::string_view accepted_dtypes(NpyKinds kinds) {
  return kinds == NpyKinds::floats ? kAcceptedDtypes : kinds == NpyKinds::integers ? kAcceptedIntegers : kAcceptedNumbers;
}

// The integer type of a descr's code ("i4" -> i32) in *type, if it is one.
bool integer_code(std::string_view code, NpyType* type) {
  static constexpr std::pair<std::string_view, NpyType> kCodes[] = {
      {"b1", NpyType::b1},  {"i1", NpyType::i8},  {"i2", NpyType::i16}, {"i4", NpyType::i32}, {"i8", NpyType::i64},
      {"u1", NpyType::u8},  {"u2", NpyType::u16}, {"u4", NpyType::u32}, {"u8", NpyType::u64}};
  for (const auto& [c, t] : kCodes)
    if (c == code) return *type = t, true;
  return false;
}

std::size_t item_size(NpyType t) {
  switch (t) {
    case NpyType::b1: case NpyType::i8: case NpyType::u8: return 1;
    case NpyType::f16: case NpyType::bf16: case NpyType::i16: case NpyType::u16: return 2;
    case NpyType::f32: case NpyType::i32: case NpyType::u32: return 4;
    case NpyType::f64: case NpyType::i64: case NpyType::u64: return 8;
  }
  return 8;
}
constexpr std::string_view kAcceptedHeader =
    "a Python dict literal like {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
constexpr std::string_view kAcceptedShape =
    "a tuple of non-negative integers with at most 2^40 elements in all, e.g. (), (5,) or (2, 3)";
constexpr std::string_view kAcceptedVersions = "a NumPy .npy file, format version 1.0, 2.0 or 3.0";

[[noreturn]] void fail(std::string_view name, const std::string& problem, std::string_view accepted) {
  throw IoError(std::string(name) + ": " + problem + "; accepted: " + std::string(accepted));
}

// Text from the file, made safe for a one-line message: printable ASCII kept, other bytes as \xNN,
// at most 40 characters.
std::string excerpt(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > 40) out += "...";
  return out;
}

std::string quoted_excerpt(std::string_view s) {
  std::string q(1, '\'');
  return q.append(excerpt(s)).append(1, '\'');
}

// One Python literal of the header. `text` is the literal as written.
struct Literal {
  enum class Kind { string, boolean, integer, tuple, other } kind = Kind::other;
  std::string_view text;
  std::string_view str;          // string: the characters between the quotes (escapes are not decoded)
  bool flag = false;             // boolean
  bool negative = false;         // integer: sign and magnitude, saturated at kMaxElements + 1
  std::uint64_t magnitude = 0;
  std::vector<Literal> items;    // tuple
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view name) : s_(text), name_(name) {}

  // The dict, followed by nothing but whitespace; the entries in the order written.
  std::vector<std::pair<std::string_view, Literal>> dict() {
    std::vector<std::pair<std::string_view, Literal>> entries;
    skip_ws();
    expect('{', "'{'");
    for (;;) {
      skip_ws();
      if (take('}')) break;
      Literal key = value(1);
      if (key.kind != Literal::Kind::string) syntax("a quoted key", key.text);
      skip_ws();
      expect(':', "':'");
      entries.emplace_back(key.str, value(1));
      skip_ws();
      if (take('}')) break;
      expect(',', "',' or '}'");
    }
    skip_ws();
    if (i_ != s_.size()) syntax("the end of the header after '}'", s_.substr(i_));
    return entries;
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
  static bool is_delimiter(char c) { return is_space(c) || std::string_view(",:()[]{}'\"").find(c) != std::string_view::npos; }

  void skip_ws() {
    while (i_ < s_.size() && is_space(s_[i_])) ++i_;
  }
  bool take(char c) {
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c, std::string_view what) {
    if (!take(c)) syntax(what, s_.substr(i_));
  }
  [[noreturn]] void syntax(std::string_view expected, std::string_view found) const {
    fail(name_, "malformed header: expected " + std::string(expected) +
                    (found.empty() ? std::string(" before the end") : " at \"" + excerpt(found) + "\""),
         kAcceptedHeader);
  }

  // At an opening quote: moves past the closing one.
  void skip_string() {
    const char quote = s_[i_++];
    while (i_ < s_.size() && s_[i_] != quote) i_ += s_[i_] == '\\' ? 2 : 1;
    if (i_ >= s_.size()) syntax("a closing quote", {});
    ++i_;
  }

  Literal value(int depth) {
    skip_ws();
    if (depth > kMaxNesting) fail(name_, "malformed header: literals nested too deeply", kAcceptedHeader);
    const std::size_t start = i_;
    const char c = i_ < s_.size() ? s_[i_] : '\0';
    Literal v;
    if (c == '\'' || c == '"') {
      skip_string();
      v.kind = Literal::Kind::string;
      v.str = s_.substr(start + 1, i_ - start - 2);
    } else if (take('(')) {
      bool comma = false;
      for (;;) {
        skip_ws();
        if (take(')')) break;
        v.items.push_back(value(depth + 1));
        skip_ws();
        if (take(')')) break;
        expect(',', "',' or ')'");
        comma = true;
      }
      // (x) without a comma is x in parentheses, not a 1-tuple.
      v.kind = v.items.size() == 1 && !comma ? Literal::Kind::other : Literal::Kind::tuple;
    } else if (c == '[' || c == '{') {
      // Never valid here (a list descr is a structured dtype): skip to the matching bracket, counting.
      int level = 0;
      do {
        if (s_[i_] == '\'' || s_[i_] == '"') {
          skip_string();
          continue;
        }
        if (std::string_view("([{").find(s_[i_]) != std::string_view::npos) ++level;
        if (std::string_view(")]}").find(s_[i_]) != std::string_view::npos) --level;
        ++i_;
      } while (level > 0 && i_ < s_.size());
      if (level > 0) syntax("a closing bracket", {});
    } else {
      while (i_ < s_.size() && !is_delimiter(s_[i_])) ++i_;
      if (i_ == start) syntax("a value", s_.substr(i_));
      classify_atom(s_.substr(start, i_ - start), v);
    }
    v.text = s_.substr(start, i_ - start);
    return v;
  }

  // True, False, or a decimal integer (Python 2 era files may write 5L); anything else stays `other`.
  static void classify_atom(std::string_view a, Literal& v) {
    if (a == "True" || a == "False") {
      v.kind = Literal::Kind::boolean;
      v.flag = a == "True";
      return;
    }
    std::string_view digits = a;
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
    if (digits.size() > 1 && digits.back() == 'L') digits.remove_suffix(1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return;
    v.kind = Literal::Kind::integer;
    v.negative = a[0] == '-';
    for (const char d : digits) v.magnitude = std::min(v.magnitude * 10 + unsigned(d - '0'), kMaxElements + 1);
  }

  std::string_view s_;
  std::string_view name_;
  std::size_t i_ = 0;
};

// descr → the type to read, checked against the caller's declaration and the kinds it takes.
NpyType dtype_of(const Literal& descr, std::string_view name, std::optional<NpyType> declared, NpyKinds kinds) {
  const std::string_view accepted = accepted_dtypes(kinds);
  if (descr.kind != Literal::Kind::string) {
    const bool structured = descr.text.starts_with('[');
    fail(name, "dtype " + excerpt(descr.text) + (structured ? " is a structured dtype" : " is not a dtype string"),
         accepted);
  }
  const std::string_view s = descr.str;
  const char order = s.empty() ? '\0' : s[0];
  const std::string_view code = s.empty() ? s : s.substr(1);
  const bool want_floats = kinds != NpyKinds::integers, want_integers = kinds != NpyKinds::floats;
  const bool is_float = code == "f2" || code == "f4" || code == "f8";
  const bool raw16 = code == "u2" || code == "V2";
  NpyType integer = NpyType::f64;
  const bool is_int = want_integers && integer_code(code, &integer);
  const bool known = (want_floats && (is_float || raw16)) || is_int;
  const char* kind_text = kinds == NpyKinds::floats     ? " is not a float type"
                          : kinds == NpyKinds::integers ? " is not an integer type"
                                                        : " is not an integer or float type";
  if (std::string_view("<>=|").find(order) == std::string_view::npos || !known)
    fail(name, "dtype " + quoted_excerpt(s) + kind_text, accepted);
  // '<u2' with bf16 declared is bf16 data; otherwise an integer code names an integer type.
  const bool as_integer = is_int && !(raw16 && want_floats && declared == NpyType::bf16);
  // Byte order does not apply to one byte: NumPy writes '|' and reads any of the four.
  const bool one_byte = as_integer && item_size(integer) == 1;
  if (!one_byte) {
    if (order == '>')
      fail(name, "dtype " + quoted_excerpt(s) + " is big-endian",
           "little-endian '<" + std::string(code) + "' (convert with a.astype('<" + std::string(code) + "'))");
    if (order == '=')
      fail(name, "dtype " + quoted_excerpt(s) + " has native byte order '=' instead of an explicit one",
           "explicit little-endian '<" + std::string(code) + "'");
    if (order == '|' && code != "V2")  // '|' means "byte order not applicable": right for void, wrong for numbers
      fail(name, "dtype " + quoted_excerpt(s) + " has byte order '|', which is not valid for a " +
                     (as_integer ? "multi-byte integer type" : "float type"),
           as_integer ? std::string("little-endian '<") + std::string(code) + "'" : std::string(accepted));
  }

  const auto declared_descr = [](NpyType t) -> std::string {
    return t == NpyType::f16 ? "'<f2'" : t == NpyType::f32 ? "'<f4'" : t == NpyType::f64 ? "'<f8'" : "'<u2' or '<V2'";
  };
  if (as_integer) {
    if (declared)
      fail(name, "dtype " + quoted_excerpt(s) + " (" + std::string(to_string(integer)) + ") does not match the declared " +
                     std::string(to_string(*declared)),
           "dtype " + declared_descr(*declared) + " for the declared " + std::string(to_string(*declared)));
    return integer;
  }
  if (raw16) {
    if (declared == NpyType::bf16) return NpyType::bf16;
    if (!declared) fail(name, "dtype " + quoted_excerpt(s) + kind_text, accepted);
    fail(name, "dtype " + quoted_excerpt(s) + " holds raw 16-bit values, read only as bf16, not as the declared " +
                   std::string(to_string(*declared)),
         "dtype " + declared_descr(*declared) + " for the declared " + std::string(to_string(*declared)));
  }
  const NpyType own = code == "f2" ? NpyType::f16 : code == "f4" ? NpyType::f32 : NpyType::f64;
  if (declared && *declared != own)
    fail(name, "dtype " + quoted_excerpt(s) + " (" + std::string(to_string(own)) + ") does not match the declared " +
                   std::string(to_string(*declared)),
         "dtype " + declared_descr(*declared) + " for the declared " + std::string(to_string(*declared)));
  return own;
}

// The shape tuple → dimensions, with the element count checked against kMaxElements.
std::vector<std::size_t> shape_of(const Literal& shape, std::string_view name, std::uint64_t* count) {
  if (shape.kind != Literal::Kind::tuple) fail(name, "shape " + excerpt(shape.text) + " is not a tuple", kAcceptedShape);
  std::vector<std::size_t> dims;
  bool any_zero = false;
  for (const Literal& d : shape.items) {
    if (d.kind != Literal::Kind::integer)
      fail(name, "shape " + excerpt(shape.text) + " has the non-integer entry " + excerpt(d.text), kAcceptedShape);
    if (d.negative && d.magnitude != 0)
      fail(name, "shape " + excerpt(shape.text) + " has the negative entry " + excerpt(d.text), kAcceptedShape);
    if (d.magnitude > kMaxElements)
      fail(name, "shape " + excerpt(shape.text) + " has more than 2^40 elements", kAcceptedShape);
    dims.push_back(static_cast<std::size_t>(d.magnitude));
    any_zero = any_zero || d.magnitude == 0;
  }
  // With every dimension <= 2^40, the product stays in range while it is checked before each step.
  *count = 1;
  if (any_zero) *count = 0;
  for (const std::size_t d : dims) {
    if (any_zero) break;
    if (*count > kMaxElements / d)
      fail(name, "shape " + excerpt(shape.text) + " has more than 2^40 elements", kAcceptedShape);
    *count *= d;
  }
  return dims;
}

// Little-endian unsigned integer of N bytes.
template <std::size_t N>
std::uint64_t little_endian(const char* p) {
  std::uint64_t v = 0;
  for (std::size_t i = N; i-- > 0;) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

// IEEE binary16 → double, exactly. Normal: (1024 + m)·2^(e-25); subnormal (e = 0): m·2^-24; e = 31 is
// ±inf (m = 0) or NaN, whose payload is widened into the top of the double's fraction as hardware does.
double half_to_double(std::uint16_t h) {
  const bool negative = (h & 0x8000) != 0;
  const unsigned exponent = (h >> 10) & 0x1f;
  const unsigned mantissa = h & 0x3ff;
  if (exponent == 0x1f)
    return std::bit_cast<double>(std::uint64_t{negative} << 63 | std::uint64_t{0x7ff} << 52 |
                                 std::uint64_t{mantissa} << 42);
  const double magnitude = exponent == 0 ? std::ldexp(static_cast<double>(mantissa), -24)
                                         : std::ldexp(static_cast<double>(1024 + mantissa), static_cast<int>(exponent) - 25);
  return negative ? -magnitude : magnitude;
}

// bfloat16 is the upper half of a binary32.
double bf16_to_double(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// Element i of an array of `shape` as NumPy indexes it: "[1, 2]", "[5]", "[]".
std::string index_text(std::uint64_t i, const std::vector<std::size_t>& shape) {
  std::vector<std::uint64_t> idx(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    idx[k] = shape[k] ? i % shape[k] : 0;
    i = shape[k] ? i / shape[k] : 0;
  }
  std::string out = "[";
  for (std::size_t k = 0; k < idx.size(); ++k) out += (k ? ", " : "") + std::to_string(idx[k]);
  return out + "]";
}

// One integer element (little-endian, `t` an integer type) → double, exactly: |v| < 2^53 or an IoError.
double integer_to_double(const char* p, NpyType t, std::uint64_t i, const std::vector<std::size_t>& shape,
                         std::string_view name) {
  constexpr std::uint64_t kExact = std::uint64_t{1} << 53;
  const auto too_large = [&](const std::string& v) {
    fail(name, "value " + v + " at index " + index_text(i, shape) + " has |v| >= 2^53, more than a double holds "
                   "exactly",
         "integers with |v| < 2^53 = 9007199254740992");
  };
  switch (t) {
    case NpyType::b1: {
      const auto b = static_cast<unsigned char>(*p);
      if (b > 1)
        fail(name, "byte " + std::to_string(b) + " at index " + index_text(i, shape) + " is not a bool",
             "bool bytes 0 (False) and 1 (True)");
      return b;
    }
    case NpyType::i8: return static_cast<std::int8_t>(little_endian<1>(p));
    case NpyType::i16: return static_cast<std::int16_t>(little_endian<2>(p));
    case NpyType::i32: return static_cast<std::int32_t>(little_endian<4>(p));
    case NpyType::i64: {
      const auto v = static_cast<std::int64_t>(little_endian<8>(p));
      const std::uint64_t mag = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
      if (mag >= kExact) too_large(std::to_string(v));
      return static_cast<double>(v);
    }
    case NpyType::u8: return static_cast<double>(little_endian<1>(p));
    case NpyType::u16: return static_cast<double>(little_endian<2>(p));
    case NpyType::u32: return static_cast<double>(little_endian<4>(p));
    case NpyType::u64: {
      const std::uint64_t v = little_endian<8>(p);
      if (v >= kExact) too_large(std::to_string(v));
      return static_cast<double>(v);
    }
    default: return 0;  // not an integer type: not reached
  }
}

}  // namespace

namespace {

// What the preamble and header say: the array's type and shape, where the data starts and how many bytes it has.
struct Layout {
  NpyArray out;  // stored and shape (no values yet)
  std::uint64_t count = 0;
  std::size_t item = 0, data_offset = 0;
  std::uint64_t data_bytes = 0;
  std::string descr;
};

// Reads the preamble and header of `bytes` (which must hold them; the data need not be there yet).
Layout layout_of(std::string_view bytes, std::string_view name, std::optional<NpyType> declared, NpyKinds kinds) {
  static constexpr std::string_view kMagic("\x93NUMPY", 6);
  if (!bytes.starts_with(kMagic)) {
    if (kMagic.starts_with(bytes))
      fail(name, "truncated: " + std::to_string(bytes.size()) + " bytes, too short for a .npy preamble", kAcceptedVersions);
    fail(name, "not a .npy file (it does not start with \\x93NUMPY)", kAcceptedVersions);
  }
  if (bytes.size() < 8)
    fail(name, "truncated: " + std::to_string(bytes.size()) + " bytes, too short for a .npy preamble", kAcceptedVersions);
  const unsigned major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(name, "format version " + std::to_string(major) + "." + std::to_string(minor) + " is not supported",
         kAcceptedVersions);

  const std::size_t prefix = major == 1 ? 10 : 12;
  if (bytes.size() < prefix)
    fail(name, "truncated header: " + std::to_string(bytes.size()) + " bytes, too short for the header length",
         "a complete .npy file");
  const std::uint64_t header_length =
      major == 1 ? little_endian<2>(bytes.data() + 8) : little_endian<4>(bytes.data() + 8);
  if (header_length > bytes.size() - prefix)
    fail(name, "truncated header: the header length is " + std::to_string(header_length) + " bytes but only " +
                   std::to_string(bytes.size() - prefix) + " follow",
         "a complete .npy file");

  const std::string_view header = bytes.substr(prefix, header_length);
  HeaderParser parser(header, name);
  const Literal* descr = nullptr;
  const Literal* fortran = nullptr;
  const Literal* shape = nullptr;
  const auto entries = parser.dict();
  for (const auto& [key, value] : entries) {
    const Literal** slot = key == "descr" ? &descr : key == "fortran_order" ? &fortran : key == "shape" ? &shape : nullptr;
    if (!slot) fail(name, "header has the unexpected key " + quoted_excerpt(key), "exactly the keys 'descr', 'fortran_order' and 'shape'");
    if (*slot) fail(name, "header repeats the key " + quoted_excerpt(key), "each of 'descr', 'fortran_order' and 'shape' once");
    *slot = &value;
  }
  for (const auto& [slot, key] : {std::pair{descr, "'descr'"}, {fortran, "'fortran_order'"}, {shape, "'shape'"}})
    if (!slot) fail(name, std::string("header has no ") + key + " key", kAcceptedHeader);

  Layout layout;
  NpyArray& out = layout.out;
  out.stored = dtype_of(*descr, name, declared, kinds);
  if (fortran->kind != Literal::Kind::boolean)
    fail(name, "fortran_order " + excerpt(fortran->text) + " is not True or False", "'fortran_order': False");
  if (fortran->flag)
    fail(name, "Fortran order is not supported; save with np.ascontiguousarray", "'fortran_order': False (C order)");
  out.shape = shape_of(*shape, name, &layout.count);
  // count <= 2^40, so the byte count cannot overflow.
  layout.item = item_size(out.stored);
  layout.data_offset = prefix + static_cast<std::size_t>(header_length);
  layout.data_bytes = layout.count * layout.item;
  layout.descr = std::string(descr->str);
  return layout;
}

// The values of `data` (exactly the data of `layout`: neither shorter nor longer) converted exactly to double.
NpyArray decode(Layout& layout, std::string_view data, std::string_view name) {
  NpyArray& out = layout.out;
  const std::uint64_t count = layout.count;
  const std::size_t item = layout.item;
  const std::uint64_t needed = layout.data_bytes;

  if (data.size() < needed)
    fail(name, "truncated: " + std::to_string(data.size()) + " bytes of data, shape " + shape_text(out.shape) + " of " +
                   quoted_excerpt(layout.descr) + " needs " + std::to_string(needed),
         "a complete .npy file");
  if (data.size() > needed)
    fail(name, std::to_string(data.size() - needed) + " trailing bytes after the " + std::to_string(needed) +
                   " bytes of data of shape " + shape_text(out.shape) + " of " + quoted_excerpt(layout.descr),
         "a .npy file that ends with its data");

  out.values.reserve(static_cast<std::size_t>(count));
  const char* p = data.data();
  for (std::uint64_t i = 0; i < count; ++i, p += item) {
    switch (out.stored) {
      case NpyType::f16: out.values.push_back(half_to_double(static_cast<std::uint16_t>(little_endian<2>(p)))); break;
      case NpyType::bf16: out.values.push_back(bf16_to_double(static_cast<std::uint16_t>(little_endian<2>(p)))); break;
      case NpyType::f32: out.values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(little_endian<4>(p)))); break;
      case NpyType::f64: out.values.push_back(std::bit_cast<double>(little_endian<8>(p))); break;
      default: out.values.push_back(integer_to_double(p, out.stored, i, out.shape, name)); break;
    }
  }
  return std::move(layout.out);
}

}  // namespace

NpyArray parse_npy(std::string_view bytes, std::string_view name, std::optional<NpyType> declared, NpyKinds kinds) {
  Layout layout = layout_of(bytes, name, declared, kinds);
  return decode(layout, bytes.substr(layout.data_offset), name);
}

NpyArray parse_npy_parts(std::string_view head, std::string_view data, std::string_view name,
                         std::optional<NpyType> declared, NpyKinds kinds) {
  Layout layout = layout_of(head, name, declared, kinds);
  if (layout.data_offset != head.size())
    fail(name, std::to_string(head.size() - layout.data_offset) + " bytes after the header", "a header alone");
  return decode(layout, data, name);
}

NpyArray read_npy(const std::string& path, std::optional<NpyType> declared, NpyKinds kinds) {
  constexpr std::string_view kAccepted = "the path of a readable .npy file";
  const auto reason = [](int error) { return std::generic_category().message(error); };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open: " + reason(errno), kAccepted);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};

  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, "cannot stat: " + reason(errno), kAccepted);
  if (S_ISDIR(st.st_mode)) fail(path, "cannot read: " + reason(EISDIR), kAccepted);
  // Read in steps, each bounded by what the bytes so far imply: the preamble, then the header it announces, then
  // the data the header's shape needs and one byte more (to see trailing bytes). An endless input (/dev/zero,
  // /dev/urandom) is thus refused after a few bytes, or after the data its header announces, never read to the end.
  std::string bytes;
  bool at_end = false;
  const auto read_up_to = [&](std::uint64_t n) {
    char buffer[1 << 16];
    while (!at_end && bytes.size() < n) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buffer, n - bytes.size()));
      const ssize_t got = ::read(fd, buffer, want);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail(path, "cannot read: " + reason(errno), kAccepted);
      if (got == 0) at_end = true;
      else bytes.append(buffer, static_cast<std::size_t>(got));
    }
  };
  read_up_to(12);
  static constexpr std::string_view kMagic("\x93NUMPY", 6);
  const bool preamble = bytes.size() >= 12 && std::string_view(bytes).starts_with(kMagic) &&
                        static_cast<unsigned char>(bytes[6]) >= 1 && static_cast<unsigned char>(bytes[6]) <= 3;
  if (!preamble) return parse_npy(bytes, path, declared, kinds);  // refused (not .npy, truncated, version)
  const bool v1 = bytes[6] == 1;
  const std::uint64_t header_end = v1 ? 10 + little_endian<2>(bytes.data() + 8) : 12 + little_endian<4>(bytes.data() + 8);
  read_up_to(header_end);
  if (bytes.size() < header_end) return parse_npy(bytes, path, declared, kinds);  // truncated header
  const Layout layout = layout_of(bytes, path, declared, kinds);
  const std::uint64_t total = layout.data_offset + layout.data_bytes;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && static_cast<double>(layout.data_bytes) > static_cast<double>(pages) * static_cast<double>(page))
    fail(path, "shape " + shape_text(layout.out.shape) + " of " + quoted_excerpt(layout.descr) + " needs " +
                   std::to_string(layout.data_bytes) + " bytes of data, more than this machine's memory",
         "an array that fits in memory");
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) <= total + 1)
    bytes.reserve(static_cast<std::size_t>(st.st_size));
  read_up_to(total + 1);
  return parse_npy(bytes, path, declared, kinds);
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace posenc::cli
