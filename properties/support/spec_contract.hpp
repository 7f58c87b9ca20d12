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
#include "spec_probes.hpp"
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
