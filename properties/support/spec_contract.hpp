// properties/support/spec_contract.hpp — the tests every described spec gets, generically from its description:
//
//   POSENC_SPEC_CONTRACT(SinusoidalSpec, Sinusoidal, "SIN")
//
// instantiates, as claims <ID>-SPEC-1..4 with suite <Prefix>Spec:
//   EveryFieldRefusesEachSideOfEveryBoundary   every field, every boundary of its accepted range, both sides:
//       the values just inside are accepted (or refused only for a later, dependent field), the values just
//       outside -- and NaN, +-inf, non-enumerators, odd values where even is required -- raise posenc::Error
//       naming that field, its value and the accepted values; for the default spec, every preset and
//       generated specs (whose dependent ranges differ);
//   JsonAndTextRoundTripEverySpec    to_json/spec_from_json and field_text/set_field_text give back the spec;
//                                    unknown keys and wrong JSON types are refused naming the key;
//   PresetsAreValidDistinctAndSourced     every preset validates, has a unique name, a summary, the
//                                    implementation it reproduces and its repository@commit;
//   GeneratedSpecsAreValid           rc::gen::arbitrary<Spec>() yields valid specs and reaches every field's
//                                    boundaries and every allowed enumerator.
// and checks at compile time that the scheme provides a plan: make_plan(spec).spec() (or make_plan(spec, weights).spec(), with Spec::Weights) returns the spec.
// The registry test (registry_test.cpp) fails for a registered scheme whose contract was not instantiated.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "arbitrary.hpp"
#include "claims.hpp"
#include "posenc/describe.hpp"
#include "posenc/error.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::test::contract {

template <class Spec>
concept HasPlan = requires(const Spec& s) {
  { make_plan(s).spec() } -> std::convertible_to<const Spec&>;
} || requires(const Spec& s, const typename Spec::Weights& w) {  // a scheme whose plan also takes trained weights
  { make_plan(s, w).spec() } -> std::convertible_to<const Spec&>;
};

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
    if (r.lo > std::numeric_limits<V>::lowest()) out.push_back({static_cast<V>(r.lo - 1), false, "just below the range"});
    if (r.hi < std::numeric_limits<V>::max()) out.push_back({static_cast<V>(r.hi + 1), false, "just above the range"});
    if (step > 1 && lo_in < hi_in) out.push_back({static_cast<V>(lo_in + 1), false, "not a multiple of the step"});
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

// Checks every probe of every field of s; returns the number of probes tried. Failures are reported to
// GoogleTest (non-fatal), or to RapidCheck when in_rc.
template <DescribedSpec Spec>
std::size_t check_boundaries(const Spec& s, bool in_rc) {
  std::size_t tried = 0;
  auto fail = [in_rc](const std::string& msg) {
    if (in_rc) RC_FAIL(msg);
    ADD_FAILURE() << msg;
  };
  std::size_t index = 0;
  for_each_field<Spec>([&](const auto& f) {
    const std::size_t my_index = index++;
    if (!accepts(f, s)) return;  // cannot happen for a valid s
    for (const auto& pr : probes(f, s)) {
      ++tried;
      Spec t = s;
      t.*(f.member) = pr.value;
      const std::string context = "spec {" + describe(s) + "}: field " + std::string(f.name) + " = " + field_text(f, t) +
                                  " (" + pr.what + ")";
      const bool predicted = is_valid(t);  // the exception-free form must agree with validate()
      try {
        validate(t);
        if (!predicted) fail(context + ": validate() accepts it but is_valid() does not");
        if (!pr.inside) fail(context + ": accepted, but lies outside " + accepted_text(f, s));
      } catch (const Error& e) {
        if (predicted) fail(context + ": is_valid() accepts it but validate() refuses: " + e.what());
        const std::size_t named = field_index<Spec>(e.parameter());
        if (pr.inside) {
          // Refused for a later field whose range depends on this one: fine. Refused for this or an
          // earlier field: the boundary is wrong.
          if (named <= my_index) fail(context + ": refused, but is inside the range: " + e.what());
          continue;
        }
        if (e.parameter() != f.name) fail(context + ": refused naming '" + e.parameter() + "' instead: " + e.what());
        const std::string msg = e.what();
        if (msg.find(std::string(f.name)) == std::string::npos || msg.find(field_text(f, t)) == std::string::npos ||
            e.accepted().empty() || msg.find(e.accepted()) == std::string::npos)
          fail(context + ": the message does not name the field, the value and the accepted values: " + msg);
      } catch (const std::exception& e) {
        fail(context + ": threw a non-posenc exception: " + std::string(e.what()));
      }
    }
  });
  return tried;
}

template <DescribedSpec Spec>
void check_round_trips(const Spec& s, bool in_rc) {
  auto fail = [in_rc](const std::string& msg) {
    if (in_rc) RC_FAIL(msg);
    ADD_FAILURE() << msg;
  };
  const auto j = to_json(s);
  const Spec back = spec_from_json<Spec>(nlohmann::json::parse(j.dump()));
  if (!(back == s)) fail("JSON round trip changed {" + describe(s) + "} into {" + describe(back) + "} via " + j.dump());
  Spec t{};
  for_each_field<Spec>([&](const auto& f) { set_field_text(f, t, field_text(f, s)); });
  if (!(t == s)) fail("text round trip changed {" + describe(s) + "} into {" + describe(t) + "}");
}

}  // namespace posenc::test::contract

#define POSENC_SPEC_CONTRACT(SpecType, Prefix, ID) POSENC_SPEC_CONTRACT_(SpecType, Prefix##Spec, ID)
#define POSENC_SPEC_CONTRACT_(Spec, Suite, ID)                                                                   \
  static_assert(::posenc::DescribedSpec<Spec>, #Spec " has no SpecTraits description");                        \
  static_assert(::posenc::test::contract::HasPlan<Spec>, #Spec ": the scheme must provide make_plan(spec) or make_plan(spec, weights)");    \
  POSENC_CLAIM_TEST(Suite, EveryFieldRefusesEachSideOfEveryBoundary,                                            \
                    {ID "-SPEC-1", std::string(::posenc::SpecTraits<Spec>::scheme),                             \
                     "for every field f and every boundary b of its accepted range (given the fields before "  \
                     "it): the values just inside b are accepted, those just outside (and NaN, +-inf, "         \
                     "non-enumerators, odd where even is required) raise posenc::Error naming f, the value "    \
                     "and the accepted values",                                                                 \
                     "DESIGN.md §7; posenc/describe.hpp", ::posenc::test::Oracle::identity, {}}) {              \
    std::vector<Spec> specs{Spec{}};                                                                            \
    for (const auto& p : ::posenc::SpecTraits<Spec>::presets()) specs.push_back(p.spec);                       \
    for (const Spec& s : specs) {                                                                               \
      ::posenc::test::count_case(claim);                                                                        \
      ::posenc::test::contract::check_boundaries(s, false);                                                     \
    }                                                                                                           \
  }                                                                                                             \
  POSENC_REGRESSION(Suite, EveryFieldRefusesEachSideOfEveryBoundaryForGeneratedSpecs, ID "-SPEC-1") {           \
    const bool ok = rc::check("boundaries of a generated spec", [&claim] {                                      \
      const Spec s = *rc::gen::arbitrary<Spec>();                                                               \
      ::posenc::test::count_case(claim);                                                                        \
      ::posenc::test::contract::check_boundaries(s, true);                                                      \
    });                                                                                                         \
    EXPECT_TRUE(ok);                                                                                            \
  }                                                                                                             \
  POSENC_PROPERTY(Suite, JsonAndTextRoundTripEverySpec,                                                         \
                  {ID "-SPEC-2", std::string(::posenc::SpecTraits<Spec>::scheme),                               \
                   "spec_from_json(to_json(s)) = s and set_field_text(field_text(s)) = s for every spec s; an " \
                   "unknown key or a wrong JSON type raises posenc::Error naming the key",                      \
                   "issue 'One scheme interface' §1 (replayable specs in every result file)",                   \
                   ::posenc::test::Oracle::identity, {}}) {                                                     \
    const Spec s = *rc::gen::arbitrary<Spec>();                                                                 \
    ::posenc::test::count_case(claim);                                                                          \
    ::posenc::test::contract::check_round_trips(s, true);                                                       \
    auto j = nlohmann::json::parse(::posenc::to_json(s).dump());                                                \
    j["no_such_field"] = 1;                                                                                     \
    try {                                                                                                       \
      (void)::posenc::spec_from_json<Spec>(j);                                                                  \
      RC_FAIL("an unknown key was accepted");                                                                   \
    } catch (const ::posenc::Error& e) {                                                                        \
      RC_ASSERT(e.parameter() == std::string("no_such_field"));                                                 \
    }                                                                                                           \
    auto k = nlohmann::json::parse(::posenc::to_json(s).dump());                                                \
    const std::string first(std::get<0>(::posenc::SpecTraits<Spec>::fields).name);                             \
    k[first] = nlohmann::json::array();                                                                         \
    try {                                                                                                       \
      (void)::posenc::spec_from_json<Spec>(k);                                                                  \
      RC_FAIL("a wrong JSON type was accepted for " + first);                                                   \
    } catch (const ::posenc::Error& e) {                                                                        \
      RC_ASSERT(e.parameter() == first);                                                                        \
    }                                                                                                           \
  }                                                                                                             \
  POSENC_CLAIM_TEST(Suite, PresetsAreValidDistinctAndSourced,                                                   \
                    {ID "-SPEC-3", std::string(::posenc::SpecTraits<Spec>::scheme),                             \
                     "every preset validates, has a unique name, a summary, the implementation it reproduces "  \
                     "and the repository@commit it was read at; find_preset(name) returns it",                  \
                     "DESIGN.md §2; CONVENTIONS.md §4", ::posenc::test::Oracle::identity, {}}) {               \
    std::set<std::string> names;                                                                                \
    EXPECT_FALSE(::posenc::SpecTraits<Spec>::presets().empty());                                                \
    for (const auto& p : ::posenc::SpecTraits<Spec>::presets()) {                                               \
      ::posenc::test::count_case(claim);                                                                        \
      EXPECT_NO_THROW(::posenc::validate(p.spec)) << p.name;                                                    \
      EXPECT_TRUE(names.insert(std::string(p.name)).second) << "duplicate preset " << p.name;                   \
      EXPECT_FALSE(p.summary.empty()) << p.name;                                                                \
      EXPECT_FALSE(p.implementation.empty()) << p.name;                                                         \
      EXPECT_NE(p.commit.find('@'), std::string_view::npos) << p.name << ": commit should be repo@sha";         \
      EXPECT_EQ(&::posenc::find_preset<Spec>(p.name), &p);                                                      \
    }                                                                                                           \
    EXPECT_THROW((void)::posenc::find_preset<Spec>("no-such-preset"), ::posenc::Error);                         \
  }                                                                                                             \
  POSENC_PROPERTY(Suite, GeneratedSpecsAreValid,                                                                \
                  {ID "-SPEC-4", std::string(::posenc::SpecTraits<Spec>::scheme),                               \
                   "rc::gen::arbitrary<Spec>() yields only valid specs, drawn field by field from the "         \
                   "description, reaching each field's boundaries",                                            \
                   "RapidCheck gen::build; posenc/describe.hpp", ::posenc::test::Oracle::identity, {}}) {        \
    const Spec s = *rc::gen::arbitrary<Spec>();                                                                 \
    ::posenc::test::count_case(claim);                                                                          \
    ::posenc::validate(s);                                                                                      \
    ::posenc::for_each_field<Spec>([&](const auto& f) {                                                        \
      using V = typename std::remove_cvref_t<decltype(f)>::value_type;                                         \
      if constexpr (!std::is_enum_v<V> && !std::is_same_v<V, bool> &&                                          \
                    !std::remove_cvref_t<decltype(f)>::is_optional &&                                          \
                    !std::remove_cvref_t<decltype(f)>::is_list) {                                              \
        const auto r = ::posenc::accepted_of(f, s);                                                             \
        const auto v = s.*(f.member);                                                                           \
        if (v == r.lo || v == r.hi) ::posenc::test::tag(claim, std::string(f.name) + " at a boundary");         \
      } else {                                                                                                  \
        ::posenc::test::tag(claim, std::string(f.name) + "=" + ::posenc::field_text(f, s));                     \
      }                                                                                                         \
    });                                                                                                         \
  }
