// properties/support/spec_probes.hpp — the values a described spec must refuse, derived from its description
// (posenc/describe.hpp): for every field, both sides of every boundary of its accepted range given the fields
// before it (NaN, +-inf, the integer type's extremes, non-enumerators, odd values where even is required). The spec
// contract (spec_contract.hpp) checks validate() against every probe; the misuse tests (misuse_test.cpp) send every
// refused spec through each public function that takes one. No test framework: posenc_api_tests, built under
// ThreadSanitizer, includes it too.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "posenc/describe.hpp"

namespace posenc::test::contract {

// The field index of a name (table order).
template <DescribedSpec Spec>
std::size_t field_index(std::string_view name) {
  std::size_t i = 0, found = field_count<Spec>();
  for_each_field<Spec>([&](const auto& f) {
    if (f.name == name) found = i;
    ++i;
  });
  return found;
}

// Candidate values on both sides of every boundary of a field's accepted range, given the spec.
template <class V>
struct Probe {
  V value;
  bool inside;
  std::string what;
};

// Probes of a number range: both sides of each end (and of the step), NaN and infinities for reals.
template <class V>
std::vector<Probe<V>> number_probes(const Range<V>& r) {
  std::vector<Probe<V>> out;
  if constexpr (std::is_floating_point_v<V>) {
    const V inf = std::numeric_limits<V>::infinity();
    const V lo_in = r.lo_open ? std::nextafter(r.lo, inf) : r.lo;
    const V hi_in = r.hi_open ? std::nextafter(r.hi, -inf) : r.hi;
    const V lo_out = r.lo_open ? r.lo : std::nextafter(r.lo, -inf);
    const V hi_out = r.hi_open ? r.hi : std::nextafter(r.hi, inf);
    out.push_back({lo_in, true, "lowest accepted"});
    out.push_back({hi_in, true, "highest accepted"});
    if (std::isfinite(lo_out)) out.push_back({lo_out, false, "just below the range"});
    if (std::isfinite(hi_out)) out.push_back({hi_out, false, "just above the range"});
    out.push_back({std::numeric_limits<V>::quiet_NaN(), false, "NaN"});
    out.push_back({inf, false, "+inf"});
    out.push_back({-inf, false, "-inf"});
  } else {
    const V step = r.step > 1 ? r.step : V(1);
    auto first_multiple_at_or_above = [step](V x) {
      const V m = static_cast<V>(((x % step) + step) % step);
      return m == 0 ? x : static_cast<V>(x + (step - m));
    };
    const V lo_in = first_multiple_at_or_above(r.lo);
    const V hi_in = static_cast<V>(r.hi - (((r.hi % step) + step) % step));
    out.push_back({lo_in, true, "lowest accepted"});
    out.push_back({hi_in, true, "highest accepted"});
    constexpr V lowest = std::numeric_limits<V>::lowest(), highest = std::numeric_limits<V>::max();
    if (r.lo > lowest) out.push_back({static_cast<V>(r.lo - 1), false, "just below the range"});
    if (r.hi < highest) out.push_back({static_cast<V>(r.hi + 1), false, "just above the range"});
    if (r.lo > lowest && r.lo - 1 > lowest) out.push_back({lowest, false, "the type's lowest"});  // overflow in sizes and products
    if (r.hi < highest && r.hi + 1 < highest) out.push_back({highest, false, "the type's highest"});
    if (step > 1 && lo_in < hi_in) out.push_back({static_cast<V>(lo_in + 1), false, "not a multiple of the step"});
    if (step > 1 && hi_in <= highest - step) out.push_back({static_cast<V>(hi_in + step), false, "the multiple above the range"});
    if (step > 1 && lo_in >= lowest + step) out.push_back({static_cast<V>(lo_in - step), false, "the multiple below the range"});
  }
  return out;
}

template <class Spec, class M>
std::vector<Probe<typename Field<Spec, M>::value_type>> probes(const Field<Spec, M>& f, const Spec& s) {
  using V = typename Field<Spec, M>::value_type;
  std::vector<Probe<V>> out;
  if constexpr (std::is_same_v<V, bool>) {
    const BoolChoice c = accepted_of(f, s);
    out.push_back({true, c.allow_true, "true"});
    out.push_back({false, c.allow_false, "false"});
  } else if constexpr (std::is_enum_v<V>) {
    const Choice c = accepted_of(f, s);
    for (const auto& e : EnumTraits<V>::values)
      out.push_back({e.value, (c.allowed & enum_bit(e.value)) != 0, std::string(e.name)});
    out.push_back({static_cast<V>(EnumTraits<V>::values.size() + 7), false, "a value that is not an enumerator"});
  } else if constexpr (Field<Spec, M>::is_list) {
    // The length's boundaries (elements inside their range), and each element boundary in the first, a middle
    // and the last element of a list of accepted length.
    using E = typename V::value_type;
    const auto r = accepted_of(f, s);
    const E inside = r.each.lo_open || r.each.hi_open ? static_cast<E>(r.each.lo / 2 + r.each.hi / 2)
                                                      : r.each.lo;
    // A list of n accepted elements; with a fixed total, the first element takes what the others leave.
    auto list = [&](std::size_t n) {
      V v(n, inside);
      if constexpr (std::is_integral_v<E>) {
        if (r.fixed_total && n > 0) v[0] = static_cast<E>(r.total - static_cast<E>(n - 1) * inside);
      }
      return v;
    };
    auto total_ok = [&](std::size_t n) {  // whether list(n) meets the total (its first element within range)
      if constexpr (std::is_integral_v<E>) {
        if (r.fixed_total) return n > 0 && in_range(list(n)[0], r.each);
      }
      return true;
    };
    if (r.max_size <= (std::size_t{1} << 20)) {
      out.push_back({list(r.min_size), total_ok(r.min_size), "shortest accepted"});
      out.push_back({list(r.max_size), total_ok(r.max_size), "longest accepted"});
      out.push_back({list(r.max_size + 1), false, "one element too many"});
    }
    if (r.min_size > 0) out.push_back({list(r.min_size - 1), false, "one element too few"});
    const std::size_t n = r.min_size > 0 ? r.min_size : (r.max_size > 0 ? 1 : 0);
    if (n > 0) {
      for (const auto& pr : number_probes<E>(r.each))
        for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
          V v = list(n);
          bool in = pr.inside && total_ok(n);
          if constexpr (std::is_integral_v<E>) {
            if (r.fixed_total && n > 1) {  // keep the total: another element gives back the difference
              const std::size_t other = at == 0 ? 1 : 0;
              const long double back = static_cast<long double>(v[other]) + v[at] - static_cast<long double>(pr.value);
              if (back < static_cast<long double>(std::numeric_limits<E>::lowest()) ||
                  back > static_cast<long double>(std::numeric_limits<E>::max()))
                continue;
              v[other] = static_cast<E>(back);
              in = in && in_range(v[other], r.each);
            } else if (r.fixed_total) {
              in = in && pr.value == r.total;
            }
          }
          v[at] = pr.value;
          out.push_back({v, in, pr.what + " at element " + std::to_string(at)});
        }
      if constexpr (std::is_integral_v<E>) {
        if (r.fixed_total && total_ok(n)) {  // the total itself, one each side
          V hi = list(n), lo = list(n);
          hi[n - 1] = static_cast<E>(hi[n - 1] + 1);
          lo[n - 1] = static_cast<E>(lo[n - 1] - 1);
          out.push_back({hi, false, "elements summing to one more than the total"});
          if (in_range(lo[n - 1], r.each)) out.push_back({lo, false, "elements summing to one less than the total"});
        }
      }
    }
  } else {
    out = number_probes<V>(accepted_of(f, s));
  }
  return out;
}

// The specs the description refuses, derived from `base` and from base with every enum or bool field set to each
// other value it accepts there, and every optional field empty (so that a range that depends on an enumerator is probed under each): for every
// field, each probe outside its accepted range, with the field's name. The bad-input rows of the misuse tests.
template <DescribedSpec Spec>
std::vector<std::pair<Spec, std::string>> refused_specs(const Spec& base) {
  std::vector<Spec> bases{base};
  for_each_field<Spec>([&](const auto& f) {
    using F = std::remove_cvref_t<decltype(f)>;
    using V = typename F::value_type;
    if constexpr (F::is_optional) {  // the field left empty
      Spec t = base;
      t.*(f.member) = std::nullopt;
      if (!(t == base) && is_valid(t)) bases.push_back(t);
    }
    if constexpr (std::is_enum_v<V> || std::is_same_v<V, bool>)
      for (const auto& pr : probes(f, base)) {
        Spec t = base;
        t.*(f.member) = pr.value;
        if (pr.inside && !(t == base) && is_valid(t)) bases.push_back(t);
      }
  });
  std::vector<std::pair<Spec, std::string>> out;
  for (const Spec& b : bases)
    for_each_field<Spec>([&](const auto& f) {
      if (!accepts(f, b)) return;
      for (const auto& pr : probes(f, b)) {
        if (pr.inside) continue;
        Spec t = b;
        t.*(f.member) = pr.value;
        out.emplace_back(std::move(t), std::string(f.name));
      }
    });
  return out;
}

}  // namespace posenc::test::contract
