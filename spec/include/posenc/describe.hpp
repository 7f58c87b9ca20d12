// posenc/describe.hpp — one description per spec type, and the generic code derived from it.
//
// A spec (SinusoidalSpec, later RopeSpec, T5Spec, ...) is a plain struct. Its description,
// SpecTraits<Spec>, lists every field once: name, command-line flag, member, one line of meaning, the
// convention it comes from, and the values it accepts as data (a range, or a set of enumerators, which may
// depend on the fields listed before it). Everything else is derived from that list, generically:
//   validate(spec)          the first field (in table order) whose value is not accepted -> posenc::Error
//                           naming the field, the value and the accepted values (generated text)
//   describe(spec)          "dim=512 base=10000 layout=halves ..."
//   set_field_text(...)     a field from text (the command line), with the same errors
//   posenc/spec_json.hpp    JSON both ways
//   the CLI                 flags, help, `posenc list`
//   properties/support      the default RapidCheck generator and the boundary test of every field
// Presets are data too: name, summary, the implementation and commit they reproduce, field values.
//
// Why a field table of our own rather than Boost.Describe: Boost.Describe arrived in Boost 1.77 and Debian 12
// ships 1.74, and it would only give names and member pointers; the flag, range, meaning and source still need
// a table like this one, and with it the names come for free. Ranges are functions of the spec (returning
// data) because some accepted sets depend on earlier fields (fairseq's d >= 4, emulation only for some
// rules); validation walks the fields in order, so a dependent field is checked after what it depends on.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "posenc/error.hpp"

namespace posenc {

// ---- enumerations ---------------------------------------------------------------------------------------

template <class E>
struct EnumValue {
  E value;
  std::string_view name;     // as written in specs, JSON and on the command line
  std::string_view meaning;  // one line
};

// Specialise with `static constexpr std::array<EnumValue<E>, N> values{...};` (in enumerator order).
template <class E>
struct EnumTraits;

template <class E>
concept DescribedEnum = std::is_enum_v<E> && requires { EnumTraits<E>::values; };

template <DescribedEnum E>
constexpr std::optional<std::size_t> enum_index(E v) noexcept {
  const auto& vs = EnumTraits<E>::values;
  for (std::size_t i = 0; i < vs.size(); ++i)
    if (vs[i].value == v) return i;
  return std::nullopt;
}

// The name of v; "?" for a value that is not an enumerator (a hand-assembled struct: validate() refuses it).
template <DescribedEnum E>
constexpr std::string_view to_string(E v) noexcept {
  const auto i = enum_index(v);
  return i ? EnumTraits<E>::values[*i].name : std::string_view("?");
}

template <DescribedEnum E>
constexpr std::optional<E> enum_from_string(std::string_view name) noexcept {
  for (const auto& e : EnumTraits<E>::values)
    if (e.name == name) return e.value;
  return std::nullopt;
}

// Bit i of a mask stands for EnumTraits<E>::values[i].
template <DescribedEnum E>
constexpr std::uint64_t enum_bit(E v) noexcept {
  const auto i = enum_index(v);
  return i ? (std::uint64_t{1} << *i) : 0;
}

// "a | b | c" for the enumerators in `mask`.
template <DescribedEnum E>
std::string enum_names(std::uint64_t mask = ~std::uint64_t{0}) {
  std::string out;
  const auto& vs = EnumTraits<E>::values;
  for (std::size_t i = 0; i < vs.size(); ++i)
    if (mask & (std::uint64_t{1} << i)) out += (out.empty() ? "" : " | ") + std::string(vs[i].name);
  return out;
}

// ---- accepted values --------------------------------------------------------------------------------------

// A numeric field accepts lo..hi (reals are finite and may exclude either end; integers may be required to be
// a multiple of `step`). `why` explains a bound that depends on other fields or on the convention.
template <class V>
struct Range {
  V lo{}, hi{};
  bool lo_open = false, hi_open = false;  // reals only
  V step = V(1);                          // integers only: value must be a multiple of step (1: any)
  std::string_view why = {};
};

// An enumeration field accepts the enumerators whose bits are set.
struct Choice {
  std::uint64_t allowed = ~std::uint64_t{0};
  std::string_view why = {};
};

// A bool field accepts the values allowed (both unless a setting elsewhere fixes it).
struct BoolChoice {
  bool allow_false = true, allow_true = true;
  std::string_view why = {};
};

// A list field (std::vector of an integer or double) accepts lists of min_size..max_size elements, each in
// `each`, and (integers, when fixed_total) whose elements sum to `total`. An empty list is how a field that its
// other settings do not use says "not given" (max_size 0).
template <class E>
struct ListRange {
  Range<E> each;
  std::size_t min_size = 0, max_size = 0;
  std::string_view why = {};
  bool fixed_total = false;
  E total{};
};

namespace describe_detail {
template <class M>
struct Unwrap {
  using type = M;
  static constexpr bool optional = false;
};
template <class T>
struct Unwrap<std::optional<T>> {
  using type = T;
  static constexpr bool optional = true;
};
template <class V>
struct ListOf {
  static constexpr bool list = false;
  using accepted = std::conditional_t<std::is_enum_v<V>, Choice, std::conditional_t<std::is_same_v<V, bool>, BoolChoice, Range<V>>>;
};
template <class E>
struct ListOf<std::vector<E>> {
  static constexpr bool list = true;
  using element = E;
  using accepted = ListRange<E>;
};
template <class V>
using AcceptedOf = typename ListOf<V>::accepted;
template <class V>
inline constexpr bool is_list_v = ListOf<V>::list;
}  // namespace describe_detail

// Field value types: an integer (std::size_t, std::int64_t), double, bool, a DescribedEnum, std::optional of
// an integer (whose "none" is always accepted), or std::vector of an integer or double (a list: written
// "[a,b,c]", JSON arrays).
template <class Spec, class M>
struct Field {
  using member_type = M;
  using value_type = typename describe_detail::Unwrap<M>::type;
  using accepted_type = describe_detail::AcceptedOf<value_type>;
  static constexpr bool is_optional = describe_detail::Unwrap<M>::optional;
  static constexpr bool is_list = describe_detail::is_list_v<value_type>;

  std::string_view name;     // JSON key, describe() key, the parameter named by errors
  std::string_view flag;     // command-line flag, e.g. "--dim"
  M Spec::*member;
  std::string_view meaning;  // one line: what the field does
  std::string_view source;   // the convention it encodes (CONVENTIONS.md section, implementation)
  // Values accepted, given the fields listed before this one. nullptr: every value of the type.
  accepted_type (*accepted)(const Spec&) = nullptr;
  // Values the default generator draws from (a narrower range for sizes); nullptr: the accepted range.
  accepted_type (*sample)(const Spec&) = nullptr;
};

template <class Spec, class M>
using AcceptedFn = typename Field<Spec, M>::accepted_type (*)(const Spec&);

template <class Spec, class M>
constexpr Field<Spec, M> field(std::string_view name, std::string_view flag, M Spec::*member, std::string_view meaning,
                               std::string_view source, std::type_identity_t<AcceptedFn<Spec, M>> accepted = nullptr,
                               std::type_identity_t<AcceptedFn<Spec, M>> sample = nullptr) {
  return Field<Spec, M>{name, flag, member, meaning, source, accepted, sample};
}

// ---- presets ----------------------------------------------------------------------------------------------

// A named convention: every field's value, and what it reproduces. dim is a default size; callers override it.
template <class Spec>
struct Preset {
  std::string_view name;
  std::string_view summary;         // one line: layout, frequencies, offsets
  std::string_view implementation;  // the code it reproduces (file, function)
  std::string_view commit;          // repository@commit that code was read at
  Spec spec;
};

// ---- the description of a spec type ----------------------------------------------------------------------

// Specialise with:
//   static constexpr std::string_view scheme = "sinusoidal";     // the scheme's name everywhere
//   static constexpr std::string_view summary = "...";           // one line
//   static constexpr auto fields = std::make_tuple(field(...), ...);   // in validation order
//   static std::span<const Preset<Spec>> presets();
template <class Spec>
struct SpecTraits;

template <class Spec>
concept DescribedSpec = requires {
  { SpecTraits<Spec>::scheme } -> std::convertible_to<std::string_view>;
  SpecTraits<Spec>::fields;
  SpecTraits<Spec>::presets();
};

template <DescribedSpec Spec, class F>
constexpr void for_each_field(F&& f) {
  std::apply([&](const auto&... fld) { (f(fld), ...); }, SpecTraits<Spec>::fields);
}

template <DescribedSpec Spec>
constexpr std::size_t field_count() {
  return std::tuple_size_v<std::remove_cvref_t<decltype(SpecTraits<Spec>::fields)>>;
}

// Calls f(field) for the field called `name`; false if there is none.
template <DescribedSpec Spec, class F>
bool visit_field(std::string_view name, F&& f) {
  bool found = false;
  for_each_field<Spec>([&](const auto& fld) {
    if (!found && fld.name == name) {
      found = true;
      f(fld);
    }
  });
  return found;
}

// "dim, base, min_timescale, ..."
template <DescribedSpec Spec>
std::string field_names() {
  std::string out;
  for_each_field<Spec>([&](const auto& fld) { out += (out.empty() ? "" : ", ") + std::string(fld.name); });
  return out;
}

// ---- text of values ---------------------------------------------------------------------------------------

// Shortest text that reads back to the same double ("10000", "0.1", "1e+300", "inf", "nan").
inline std::string format_real(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

template <class V>
std::string value_text(const V& v) {
  if constexpr (std::is_same_v<V, bool>) return v ? "true" : "false";
  else if constexpr (std::is_enum_v<V>) return std::string(to_string(v));
  else if constexpr (std::is_floating_point_v<V>) return format_real(v);
  else if constexpr (describe_detail::Unwrap<V>::optional) return v ? value_text(*v) : std::string("none");
  else if constexpr (describe_detail::is_list_v<V>) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      out += value_text(v[i]);
    }
    return out + "]";
  } else return std::to_string(v);
}

template <class Spec, class M>
std::string field_text(const Field<Spec, M>& f, const Spec& s) {
  return value_text(s.*(f.member));
}

// The accepted values as text: "an integer in [2, 1048576], even", "a finite real > 1", "interleaved | halves".
template <class V>
std::string accepted_text(const Range<V>& r, bool optional) {
  std::string out;
  if constexpr (std::is_floating_point_v<V>) {
    const bool no_hi = r.hi == std::numeric_limits<V>::max() && !r.hi_open;
    const bool no_lo = r.lo == std::numeric_limits<V>::lowest() && !r.lo_open;
    if (no_hi && no_lo) out = "a finite real";
    else if (no_hi) out = std::string("a finite real ") + (r.lo_open ? "> " : ">= ") + format_real(r.lo);
    else if (no_lo) out = std::string("a finite real ") + (r.hi_open ? "< " : "<= ") + format_real(r.hi);
    else
      out = std::string("a real in ") + (r.lo_open ? "(" : "[") + format_real(r.lo) + ", " + format_real(r.hi) +
            (r.hi_open ? ")" : "]");
  } else {
    out = "an integer in [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]";
    if (r.step == 2) out += ", even";
    else if (r.step != 1) out += ", a multiple of " + std::to_string(r.step);
  }
  if (optional) out += ", or none";
  if (!r.why.empty()) out += " (" + std::string(r.why) + ")";
  return out;
}

// "a list of 64 reals in (0, 1e+06]", "an empty list (only with --scaling longrope)".
template <class E>
std::string accepted_text(const ListRange<E>& r) {
  std::string out;
  if (r.max_size == 0) out = "an empty list []";
  else {
    out = "a list of ";
    if (r.min_size == r.max_size) out += std::to_string(r.min_size);
    else out += std::to_string(r.min_size) + " to " + std::to_string(r.max_size);
    std::string each = accepted_text(Range<E>{r.each.lo, r.each.hi, r.each.lo_open, r.each.hi_open, r.each.step}, false);
    out += each.rfind("a real ", 0) == 0 ? " reals " + each.substr(7)
           : each.rfind("a finite real ", 0) == 0 ? " reals " + each.substr(14)
           : each.rfind("an integer ", 0) == 0 ? " integers " + each.substr(11)
                                              : ", each " + each;
    if (r.fixed_total) out += " summing to " + value_text(r.total);
    out += ", written [a,b,...]";
  }
  if (!r.why.empty()) out += " (" + std::string(r.why) + ")";
  return out;
}

template <DescribedEnum E>
std::string accepted_text(const Choice& c) {
  std::string out = enum_names<E>(c.allowed);
  if (!c.why.empty()) out += " (" + std::string(c.why) + ")";
  return out;
}

template <class Spec, class M>
typename Field<Spec, M>::accepted_type accepted_of(const Field<Spec, M>& f, const Spec& s) {
  using A = typename Field<Spec, M>::accepted_type;
  using V = typename Field<Spec, M>::value_type;
  if (f.accepted) return f.accepted(s);
  if constexpr (std::is_same_v<A, Choice>) return Choice{};
  else if constexpr (std::is_same_v<A, BoolChoice>) return BoolChoice{};
  else if constexpr (describe_detail::is_list_v<V>) {
    using E = typename V::value_type;
    return A{{std::numeric_limits<E>::lowest(), std::numeric_limits<E>::max()}, 0, std::numeric_limits<std::size_t>::max()};
  } else return A{std::numeric_limits<V>::lowest(), std::numeric_limits<V>::max()};
}

template <class Spec, class M>
std::string accepted_text(const Field<Spec, M>& f, const Spec& s) {
  using V = typename Field<Spec, M>::value_type;
  const auto a = accepted_of(f, s);
  if constexpr (std::is_enum_v<V>) return accepted_text<V>(a);
  else if constexpr (std::is_same_v<V, bool>) {
    std::string out = a.allow_false && a.allow_true ? "true | false" : a.allow_true ? "true" : a.allow_false ? "false" : "no value";
    if (!a.why.empty()) out += " (" + std::string(a.why) + ")";
    return out;
  }
  else if constexpr (Field<Spec, M>::is_list) return accepted_text(a);
  else return accepted_text(a, Field<Spec, M>::is_optional);
}

// ---- acceptance and validation ----------------------------------------------------------------------------

template <class V>
bool in_range(const V& v, const Range<V>& r) {
  if constexpr (std::is_floating_point_v<V>) {
    if (!std::isfinite(v)) return false;
    if (r.lo_open ? !(v > r.lo) : !(v >= r.lo)) return false;
    return r.hi_open ? v < r.hi : v <= r.hi;
  } else {
    if (v < r.lo || v > r.hi) return false;
    return r.step <= 1 || v % r.step == 0;
  }
}

template <class E>
bool in_range(const std::vector<E>& v, const ListRange<E>& r) {
  if (v.size() < r.min_size || v.size() > r.max_size) return false;
  for (const E& e : v)
    if (!in_range(e, r.each)) return false;
  if constexpr (std::is_integral_v<E>) {
    if (r.fixed_total) {  // elements are in range, so the sum of a short list cannot overflow for sane ranges
      long double sum = 0;
      for (const E& e : v) sum += static_cast<long double>(e);
      return sum == static_cast<long double>(r.total);
    }
  }
  return true;
}

// Whether the field's value in s is accepted (given the fields before it, as they are in s).
template <class Spec, class M>
bool accepts(const Field<Spec, M>& f, const Spec& s) {
  using V = typename Field<Spec, M>::value_type;
  const M& m = s.*(f.member);
  const auto a = accepted_of(f, s);
  if constexpr (std::is_enum_v<V>) {
    return enum_index(m).has_value() && (a.allowed & enum_bit(m)) != 0;
  } else if constexpr (std::is_same_v<V, bool>) {
    return m ? a.allow_true : a.allow_false;
  } else if constexpr (Field<Spec, M>::is_optional) {
    return !m || in_range(*m, a);
  } else {
    return in_range(m, a);  // numbers and lists
  }
}

template <class Spec, class M>
void check_field(const Field<Spec, M>& f, const Spec& s) {
  if (!accepts(f, s))
    throw Error(std::string(SpecTraits<Spec>::scheme), std::string(f.name), field_text(f, s), accepted_text(f, s));
}

// Throws posenc::Error for the first field (in table order) whose value is not accepted.
template <DescribedSpec Spec>
void validate(const Spec& s) {
  for_each_field<Spec>([&](const auto& f) { check_field(f, s); });
}

// Whether validate(s) would accept s (no exception: for searches over candidate specs).
template <DescribedSpec Spec>
bool is_valid(const Spec& s) {
  bool ok = true;
  for_each_field<Spec>([&](const auto& f) { ok = ok && accepts(f, s); });
  return ok;
}

// "dim=512 base=10000 ..." in table order.
template <DescribedSpec Spec>
std::string describe(const Spec& s) {
  std::string out;
  for_each_field<Spec>([&](const auto& f) {
    if (!out.empty()) out += ' ';
    out.append(f.name).append("=").append(field_text(f, s));
  });
  return out;
}

// ---- reading values from text -----------------------------------------------------------------------------

namespace describe_detail {

inline std::string quoted(std::string_view t) {
  std::string q;
  q.reserve(t.size() + 2);
  return q.append(1, '\'').append(t).append(1, '\'');
}

template <class V>
std::optional<V> parse_value(std::string_view t) {
  if constexpr (is_list_v<V>) {
    // "[a,b,c]" or "a,b,c"; "[]" (or nothing) is the empty list. Spaces around elements are allowed.
    auto trim = [](std::string_view x) {
      while (!x.empty() && (x.front() == ' ' || x.front() == '\t')) x.remove_prefix(1);
      while (!x.empty() && (x.back() == ' ' || x.back() == '\t')) x.remove_suffix(1);
      return x;
    };
    t = trim(t);
    if (!t.empty() && t.front() == '[') {
      if (t.back() != ']') return std::nullopt;
      t = trim(t.substr(1, t.size() - 2));
    }
    V out;
    if (t.empty()) return out;
    while (true) {
      const std::size_t comma = t.find(',');
      const auto e = parse_value<typename V::value_type>(trim(t.substr(0, comma)));
      if (!e) return std::nullopt;
      out.push_back(*e);
      if (comma == std::string_view::npos) return out;
      t.remove_prefix(comma + 1);
    }
  } else if constexpr (std::is_same_v<V, bool>) {
    if (t == "true" || t == "1" || t == "yes") return true;
    if (t == "false" || t == "0" || t == "no") return false;
    return std::nullopt;
  } else if constexpr (std::is_enum_v<V>) {
    return enum_from_string<V>(t);
  } else if constexpr (std::is_floating_point_v<V>) {
    // strtod: decimal, inf, nan (the range check then refuses non-finite values by name). Hexadecimal (0x1p3),
    // which strtod also reads, is refused: numbers are decimal, as for integers (from_chars reads no 0x10).
    const std::string s(t);
    if (s.empty() || s.find_first_of(" \t\n\rxX") != std::string::npos) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return std::nullopt;
    return static_cast<V>(v);
  } else {
    if (!t.empty() && t.front() == '+') t.remove_prefix(1);
    V v{};
    if (t.empty() || t.front() == '+') return std::nullopt;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return std::nullopt;
    return v;
  }
}

template <class V>
constexpr std::string_view kind_text() {
  if constexpr (is_list_v<V>) return "is not a list of numbers [a,b,...]";
  else if constexpr (std::is_same_v<V, bool>) return "is not a boolean";
  else if constexpr (std::is_enum_v<V>) return "is not a known name";
  else if constexpr (std::is_floating_point_v<V>) return "is not a decimal number";
  else if constexpr (std::is_signed_v<V>) return "is not a decimal integer (or is beyond [-2^63, 2^63))";
  else return "is not a non-negative decimal integer (or is beyond 2^64)";
}

}  // namespace describe_detail

// Sets the field from text ("none" clears an optional field). Only the text is checked here: validate()
// checks the value. Throws posenc::Error naming the field when the text cannot be read as its type.
template <class Spec, class M>
void set_field_text(const Field<Spec, M>& f, Spec& s, std::string_view text) {
  using V = typename Field<Spec, M>::value_type;
  if constexpr (Field<Spec, M>::is_optional) {
    if (text == "none") {
      (s.*(f.member)).reset();
      return;
    }
  }
  const std::optional<V> v = describe_detail::parse_value<V>(text);
  if (!v)
    throw Error(std::string(SpecTraits<Spec>::scheme), std::string(f.name), describe_detail::quoted(text),
                accepted_text(f, s), std::string(describe_detail::kind_text<V>()));
  if constexpr (std::is_floating_point_v<V> || std::is_same_v<V, std::vector<double>>) {
    // A finite numeral beyond the double range (1e999) reads as inf: say so, rather than "inf is out of range".
    bool finite = true;
    if constexpr (std::is_floating_point_v<V>) finite = std::isfinite(*v);
    else for (double e : *v) finite = finite && std::isfinite(e);
    if (!finite && text.find_first_of("iInN") == std::string_view::npos)
      throw Error(std::string(SpecTraits<Spec>::scheme), std::string(f.name), describe_detail::quoted(text),
                  accepted_text(f, s), "is beyond the range of a double (|x| > 1.8e308)");
  }
  s.*(f.member) = *v;
}

// Sets the field called `name` from text; throws posenc::Error naming `name` if the spec has no such field.
template <DescribedSpec Spec>
void set_field_text(Spec& s, std::string_view name, std::string_view text) {
  if (!visit_field<Spec>(name, [&](const auto& f) { set_field_text(f, s, text); }))
    throw Error(std::string(SpecTraits<Spec>::scheme), "field", describe_detail::quoted(name), field_names<Spec>(),
                "is not a field of this spec");
}

// ---- presets ----------------------------------------------------------------------------------------------

template <DescribedSpec Spec>
std::string preset_names() {
  std::string out;
  for (const auto& p : SpecTraits<Spec>::presets()) out += (out.empty() ? "" : " | ") + std::string(p.name);
  return out;
}

template <DescribedSpec Spec>
const Preset<Spec>& find_preset(std::string_view name) {
  for (const auto& p : SpecTraits<Spec>::presets())
    if (p.name == name) return p;
  throw Error(std::string(SpecTraits<Spec>::scheme), "preset", describe_detail::quoted(name), preset_names<Spec>(),
              "is not a preset of this scheme");
}

}  // namespace posenc
