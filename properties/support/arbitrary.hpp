// properties/support/arbitrary.hpp — the default RapidCheck generator of every described spec, derived from its
// description (posenc/describe.hpp): rc::gen::arbitrary<SinusoidalSpec>() and friends.
//
// Built field by field, in table order, so that a field's accepted values may depend on the fields before it
// (as validation does). Each field starts from a preset's value (so the conventions real code uses are common)
// and is redrawn with probability 1/2 from its sample range: its boundaries and their neighbours (where bugs
// live), small values, and log-uniform values; enumerations from the enumerators allowed there; an optional
// field is empty one time in four. Every generated spec validates; the boundary test of the spec contract
// (spec_contract.hpp) checks the boundaries themselves exhaustively.
#pragma once

#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <limits>
#include <type_traits>

#include "posenc/describe.hpp"

namespace posenc::test {

namespace arbitrary_detail {

template <class V>
rc::Gen<V> gen_in(const Range<V>& r) {
  if constexpr (std::is_floating_point_v<V>) {
    // Finite, inside the (possibly open) range: the ends' nearest inner values, and log-uniform or uniform values.
    const V lo = r.lo_open ? std::nextafter(r.lo, r.hi) : r.lo;
    const V hi = r.hi_open ? std::nextafter(r.hi, r.lo) : r.hi;
    return rc::gen::exec([lo, hi] {
      const int kind = *rc::gen::inRange(0, 8);
      if (kind == 0) return lo;
      if (kind == 1) return hi;
      const double t = *rc::gen::inRange(0, 1 << 20) / static_cast<double>(1 << 20);
      if (lo > 0 && hi / lo > 16) return static_cast<V>(std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo))));
      return static_cast<V>(lo + t * (hi - lo));
    });
  } else {
    const V step = r.step > 1 ? r.step : V(1);
    // lo and hi rounded inwards to multiples of step.
    auto up = [step](V x) { return x % step == 0 ? x : static_cast<V>(x + (step - x % step) % step); };
    const V lo = std::is_signed_v<V> && r.lo < 0 ? static_cast<V>(r.lo - r.lo % step) : up(r.lo);
    const V hi = static_cast<V>(r.hi - ((r.hi % step) + step) % step);
    return rc::gen::exec([lo, hi, step] {
      auto clampv = [&](long double x) {
        if (x < static_cast<long double>(lo)) return lo;
        if (x > static_cast<long double>(hi)) return hi;
        V v = static_cast<V>(x);
        v = static_cast<V>(v - (((v % step) + step) % step));
        return v < lo ? lo : v;
      };
      const int kind = *rc::gen::inRange(0, 8);
      if (kind == 0) return lo;
      if (kind == 1) return hi;
      if (kind == 2) return clampv(static_cast<long double>(lo) + step);
      if (kind == 3) return clampv(static_cast<long double>(hi) - step);
      if (kind == 4) return clampv(*rc::gen::inRange(-2, 3) * static_cast<long double>(step));  // small values
      // log-uniform magnitude, either sign where the range allows
      const long double top = std::max(std::fabs(static_cast<long double>(lo)), std::fabs(static_cast<long double>(hi)));
      const int bits = std::max(1, static_cast<int>(std::log2(top + 1)) + 1);
      const int e = *rc::gen::inRange(0, bits);
      const long double mag = std::ldexp(1.0L, e) * (1 + *rc::gen::inRange(0, 1024) / 1024.0L);
      const bool negative = lo < 0 && *rc::gen::arbitrary<bool>();
      return clampv(negative ? -mag : mag);
    });
  }
}

template <class Spec, class M>
void draw(const Field<Spec, M>& f, Spec& s) {
  using F = Field<Spec, M>;
  using V = typename F::value_type;
  if (!*rc::gen::arbitrary<bool>() && accepts(f, s)) return;  // keep the preset's value
  if constexpr (F::is_optional) {
    if (*rc::gen::inRange(0, 4) == 0) {
      (s.*(f.member)).reset();
      return;
    }
  }
  if constexpr (std::is_same_v<V, bool>) {
    const BoolChoice c = accepted_of(f, s);
    s.*(f.member) = c.allow_true && c.allow_false ? *rc::gen::arbitrary<bool>() : c.allow_true;
  } else if constexpr (std::is_enum_v<V>) {
    const Choice c = accepted_of(f, s);
    std::vector<V> allowed;
    for (const auto& e : EnumTraits<V>::values)
      if (c.allowed & enum_bit(e.value)) allowed.push_back(e.value);
    s.*(f.member) = *rc::gen::elementOf(allowed);
  } else if constexpr (F::is_list) {
    // A length in [min_size, max_size] (capped at 4096 elements), elements drawn like a number field's.
    const auto r = f.sample ? f.sample(s) : accepted_of(f, s);
    const std::size_t hi = std::min(r.max_size, std::max<std::size_t>(r.min_size, 4096));
    const std::size_t n = r.min_size == hi ? hi : *rc::gen::inRange(r.min_size, hi + 1);
    V list(n);
    using E = typename V::value_type;
    if constexpr (std::is_integral_v<E>) {
      if (r.fixed_total && n > 0) {
        // A random composition of the total: n - 1 sorted cut points in [0, total - n lo], plus lo each (kept
        // only when every part is within its range, else the even split, which the description must accept).
        const E lo = r.each.lo, spare = static_cast<E>(r.total - static_cast<E>(n) * lo);
        std::vector<E> cuts{0, spare};
        for (std::size_t i = 1; i < n; ++i) cuts.push_back(*rc::gen::inRange<E>(0, spare + 1));
        std::sort(cuts.begin(), cuts.end());
        for (std::size_t i = 0; i < n; ++i) list[i] = static_cast<E>(lo + cuts[i + 1] - cuts[i]);
        if (!in_range(list, r))
          for (std::size_t i = 0; i < n; ++i)
            list[i] = static_cast<E>(lo + spare / static_cast<E>(n) + (i < static_cast<std::size_t>(spare % static_cast<E>(n)) ? 1 : 0));
        s.*(f.member) = std::move(list);
        return;
      }
    }
    const auto g = gen_in(r.each);
    for (auto& e : list) e = *g;
    s.*(f.member) = std::move(list);
  } else {
    const Range<V> r = f.sample ? f.sample(s) : accepted_of(f, s);
    // The sample range may be narrower than the accepted one but must lie inside it.
    s.*(f.member) = *gen_in(r);
  }
}

}  // namespace arbitrary_detail

// A spec that starts from a preset (or the default spec) and redraws fields from their description.
template <DescribedSpec Spec>
rc::Gen<Spec> gen_described_spec() {
  return rc::gen::exec([] {
    const auto presets = SpecTraits<Spec>::presets();
    Spec s = presets.empty() || *rc::gen::inRange(0, 4) == 0
                 ? Spec{}
                 : presets[static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, presets.size()))].spec;
    for_each_field<Spec>([&](const auto& f) { arbitrary_detail::draw(f, s); });
    validate(s);  // by construction; a failure here is a bug in the description's ranges
    return s;
  });
}

}  // namespace posenc::test

namespace rc {
template <posenc::DescribedSpec Spec>
struct Arbitrary<Spec> {
  static Gen<Spec> arbitrary() { return posenc::test::gen_described_spec<Spec>(); }
};
}  // namespace rc
