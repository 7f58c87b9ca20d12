// posenc/spec_json.hpp — every described spec to JSON and back (header-only; needs nlohmann/json).
//
// to_json(spec) writes {"<field>": value, ...} in table order: integers as JSON integers, reals as JSON numbers
// (nlohmann writes the shortest digits that read back to the same double), enumerators by name, an empty
// optional as null. Values quoted in errors are short escaped excerpts (posenc/json_text.hpp); a number of
// the right kind beyond the field's type (a negative count) is "out of range", with the accepted range.
// spec_from_json(object) starts from a default spec (or the one given), sets the fields
// present, and validates: an unknown key, a value of the wrong JSON type or an unaccepted value is a
// posenc::Error naming the field. So a spec read back from any result file posenc writes is the spec that
// produced it (tested for every preset and for generated specs).
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "posenc/describe.hpp"
#include "posenc/json_text.hpp"

namespace posenc {

template <DescribedSpec Spec>
nlohmann::ordered_json to_json(const Spec& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for_each_field<Spec>([&](const auto& f) {
    using F = std::remove_cvref_t<decltype(f)>;
    using V = typename F::value_type;
    const auto& m = s.*(f.member);
    auto one = [](const V& v) {
      if constexpr (std::is_enum_v<V>) {
        return nlohmann::ordered_json(std::string(to_string(v)));
      } else {
        return nlohmann::ordered_json(v);
      }
    };
    if constexpr (F::is_optional) j[std::string(f.name)] = m ? one(*m) : nlohmann::ordered_json(nullptr);
    else j[std::string(f.name)] = one(m);
  });
  return j;
}

namespace spec_json_detail {

// How a JSON value reads as a field's type: ok, the wrong JSON type, or a number of the right kind beyond the
// field's C++ type (a negative count, an integer beyond 2^63): the latter is reported as out of range.
enum class Read { ok, wrong_type, out_of_range };

template <class V, class Json>
Read read_value(const Json& v, V& out) {
  if constexpr (describe_detail::is_list_v<V>) {  // a JSON array of numbers
    if (!v.is_array()) return Read::wrong_type;
    V list;
    for (const auto& e : v) {
      typename V::value_type x{};
      if (const Read r = read_value(e, x); r != Read::ok) return r;
      list.push_back(x);
    }
    out = std::move(list);
    return Read::ok;
  } else if constexpr (std::is_same_v<V, bool>) {
    if (!v.is_boolean()) return Read::wrong_type;
    out = v.template get<bool>();
    return Read::ok;
  } else if constexpr (std::is_enum_v<V>) {
    if (!v.is_string()) return Read::wrong_type;
    const auto e = enum_from_string<V>(v.template get<std::string>());
    if (!e) return Read::wrong_type;
    out = *e;
    return Read::ok;
  } else if constexpr (std::is_floating_point_v<V>) {
    if (!v.is_number()) return Read::wrong_type;
    out = v.template get<V>();
    return Read::ok;
  } else if constexpr (std::is_signed_v<V>) {
    if (v.is_number_unsigned()) {
      const auto u = v.template get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<V>::max())) return Read::out_of_range;
      out = static_cast<V>(u);
      return Read::ok;
    }
    if (!v.is_number_integer()) return Read::wrong_type;
    out = v.template get<V>();
    return Read::ok;
  } else {
    if (v.is_number_integer() && !v.is_number_unsigned()) return Read::out_of_range;  // negative
    if (!v.is_number_unsigned()) return Read::wrong_type;
    out = v.template get<V>();
    return Read::ok;
  }
}

}  // namespace spec_json_detail

// `j` must be an object; keys not named by a field are refused. Validates the result.
template <DescribedSpec Spec, class Json>
Spec spec_from_json(const Json& j, Spec s = Spec{}) {
  const std::string where(SpecTraits<Spec>::scheme);
  if (!j.is_object())
    throw Error(where, "spec", json_excerpt(j), "a JSON object {\"<field>\": value, ...}", "is not an object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const bool known = visit_field<Spec>(key, [&](const auto& f) {
      using F = std::remove_cvref_t<decltype(f)>;
      using V = typename F::value_type;
      if constexpr (F::is_optional) {
        if (it.value().is_null()) {
          (s.*(f.member)).reset();
          return;
        }
      }
      V v{};
      const auto read = spec_json_detail::read_value(it.value(), v);
      if (read == spec_json_detail::Read::out_of_range)
        throw Error(where, key, json_excerpt(it.value()), accepted_text(f, s));
      if (read != spec_json_detail::Read::ok)
        throw Error(where, key, json_excerpt(it.value()), accepted_text(f, s),
                    "has the wrong JSON type or is not a known name");
      s.*(f.member) = v;
    });
    if (!known)
      throw Error(where, text_excerpt(key), json_excerpt(it.value()), "one of the fields " + field_names<Spec>(),
                  "is not a field of this spec");
  }
  validate(s);
  return s;
}

}  // namespace posenc
