#include "schemes/sinusoidal/generators.hpp"

#include "schemes/sinusoidal/cases.hpp"
#include "support/arbitrary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include "posenc/reference/sinusoidal.hpp"

namespace posenc::test {
namespace {

namespace rf = posenc::reference;

constexpr std::int64_t pow2(int e) { return std::int64_t{1} << e; }

__extension__ typedef __int128 i128;

// weightedOneOf over a run-time list of choices (RapidCheck's takes an initializer_list).
template <class T>
rc::Gen<T> weighted_choice(std::vector<std::pair<int, rc::Gen<T>>> choices) {
  int total = 0;
  for (const auto& c : choices) total += c.first;
  return rc::gen::mapcat(rc::gen::inRange(0, total), [choices](int x) {
    for (const auto& c : choices) {
      if (x < c.first) return c.second;
      x -= c.first;
    }
    return choices.back().second;
  });
}


// Log-uniform integer in [lo, hi] (lo >= 0), with its binade as region.
rc::Gen<PositionCase> gen_log_uniform(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return rc::gen::just(PositionCase{lo, "p=lo"});
  const int top = 63 - __builtin_clzll(static_cast<unsigned long long>(hi));
  return rc::gen::mapcat(rc::gen::inRange(0, top + 1), [lo, hi](int e) {
    const std::int64_t a = std::max<std::int64_t>(lo, e == 0 ? 0 : pow2(e));
    const std::int64_t b = std::min<std::int64_t>(hi, pow2(e + 1) - 1);
    const std::string region = "p random in [2^" + std::to_string(e) + ", 2^" + std::to_string(e + 1) + ")";
    if (b < a) return rc::gen::just(PositionCase{lo, "p=lo"});
    return rc::gen::map(rc::gen::inRange<std::int64_t>(a, b + 1),
                        [region](std::int64_t p) { return PositionCase{p, region}; });
  });
}

std::string key_of(const SinusoidalSpec& s, std::size_t pair) { return describe(s) + "#" + std::to_string(pair); }

}  // namespace

void showValue(const SpecCase& c, std::ostream& os) { os << c.name << " {" << describe(c.spec) << "} [" << c.region << "]"; }
void showValue(const PositionCase& c, std::ostream& os) { os << c.p << " [" << c.region << "]"; }

std::string dim_region(std::size_t d) {
  if (d <= 8) return "d tiny (<= 8)";
  if (d % 2) return "d odd";
  if ((d & (d - 1)) == 0) return "d power of 2";
  return "d other";
}

rc::Gen<std::size_t> gen_dim(std::size_t max_dim) {
  const int top = std::max(1, 63 - __builtin_clzll(static_cast<unsigned long long>(max_dim)));
  auto clamp = [max_dim](std::size_t d) { return std::clamp<std::size_t>(d, 2, max_dim); };
  return rc::gen::map(
      rc::gen::weightedOneOf<std::size_t>({
          {3, rc::gen::inRange<std::size_t>(2, 9)},
          {2, rc::gen::mapcat(rc::gen::inRange(1, top),
                              [](int e) {
                                return rc::gen::map(rc::gen::inRange<std::size_t>(std::size_t{1} << (e - 1), std::size_t{1} << e),
                                                    [](std::size_t n) { return 2 * n + 1; });
                              })},
          {3, rc::gen::map(rc::gen::inRange(1, top + 1), [](int e) { return std::size_t{1} << e; })},
          {3, rc::gen::mapcat(rc::gen::inRange(1, top),
                              [](int e) { return rc::gen::inRange<std::size_t>(std::size_t{1} << e, std::size_t{2} << e); })},
      }),
      clamp);
}

rc::Gen<double> gen_base() {
  return rc::gen::weightedOneOf<double>({
      {4, rc::gen::just(10000.0)},
      {2, rc::gen::element(2.0, 10.0, 500000.0, 1.0e7)},
      {3, rc::gen::map(rc::gen::inRange(0, 1 << 20),
                       [](int u) {
                         const double t = static_cast<double>(u) / static_cast<double>(1 << 20);
                         return std::exp(std::log(2.0) + t * (std::log(1.0e7) - std::log(2.0)));
                       })},
  });
}

SinusoidalSpec at_dim(SinusoidalSpec s, std::size_t d) {
  if (d % 2 && s.odd_dim == OddDim::reject) ++d;
  if (s.rule == FrequencyRule::fairseq && d < 4) d = 4;
  s.dim = d;
  return s;
}

namespace {

std::string spec_region(const SinusoidalSpec& s, const std::string& name) {
  std::string region = name + " " + std::string(to_string(s.rule)) + " " + std::string(to_string(s.layout)) + " " +
                       dim_region(s.dim) + " " + std::string(to_string(s.regime));
  if (name == "custom") {
    if (s.base == 10000.0) region += " base=10000";
    if (s.min_timescale != 1.0) region += " min_ts!=1";
    if (s.signed_positions) region += " signed";
    if (s.padding_row) region += " padding_row";
    if (s.rule == FrequencyRule::paper && s.paper_form == PaperForm::pow) region += " pow_form";
  }
  return region;
}
}  // namespace

rc::Gen<SpecCase> gen_preset_spec(std::size_t max_dim, bool allow_emulated) {
  const auto presets = SpecTraits<SinusoidalSpec>::presets();
  return rc::gen::apply(
      [allow_emulated, presets](std::size_t which, std::size_t d, bool emulate) {
        const auto& preset = presets[which];
        SpecCase c{at_dim(preset.spec, d), std::string(preset.name), ""};
        if (allow_emulated && emulate) c.spec.regime = Regime::emulated;
        c.region = spec_region(c.spec, c.name);
        return c;
      },
      rc::gen::inRange<std::size_t>(0, presets.size()), gen_dim(max_dim), rc::gen::arbitrary<bool>());
}

// Custom specs come from the description's default generator (support/arbitrary.hpp: every field, its boundaries
// included), with the size drawn by gen_dim (<= max_dim) and, for positions, a bounded min_timescale.
rc::Gen<SpecCase> gen_any_spec(std::size_t max_dim, bool allow_emulated) {
  auto custom = rc::gen::apply(
      [allow_emulated](SinusoidalSpec s, std::size_t d, int ts_choice) {
        s = at_dim(s, d);
        static constexpr double kTs[] = {1.0, 1.0, 1.0, 0.5, 2.0, 1.0e-3, 1.0e3};
        s.min_timescale = kTs[ts_choice];
        if (s.base > 1.0e7 || s.base < 1.0 + 1.0e-6) s.base = 10000.0;  // the budget rows' base range
        if (!allow_emulated) s.regime = Regime::exact;
        // Positions the spec accepts may have shrunk with min_timescale: keep the padding row/first position inside.
        const std::int64_t lim = max_abs_position(s);
        auto clampv = [&](std::int64_t v) { return std::clamp<std::int64_t>(v, s.signed_positions ? -lim : 0, lim); };
        s.first_position = clampv(s.first_position);
        if (s.padding_row) s.padding_row = clampv(*s.padding_row);
        validate(s);
        return SpecCase{s, "custom", spec_region(s, "custom")};
      },
      gen_described_spec<SinusoidalSpec>(), gen_dim(max_dim), rc::gen::inRange(0, 7));
  return rc::gen::weightedOneOf<SpecCase>({{3, gen_preset_spec(max_dim, allow_emulated)}, {2, custom}});
}

std::vector<std::int64_t> quarter_pi_positions(const SinusoidalSpec& spec, std::size_t pair) {
  static std::mutex m;
  static std::map<std::string, std::vector<std::int64_t>> cache;
  const std::string key = key_of(spec, pair);
  {
    std::lock_guard lock(m);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  constexpr unsigned kBits = 320;
  rf::PrecisionGuard guard(kBits);
  const rf::Real w = spec.regime == Regime::emulated ? rf::emulated_frequency(spec, pair, kBits) : rf::frequency(spec, pair, kBits);
  rf::Real x = 2 * w / rf::pi(kBits);
  const std::int64_t limit = max_abs_position(spec);
  std::vector<std::int64_t> out;
  // Convergent denominators: q_{-1} = 0, q_0 = 1, q_n = a_n q_{n-1} + q_{n-2}.
  i128 q_prev = 0, q = 1;
  rf::Real a = floor(x);
  rf::Real frac = x - a;
  for (int n = 0; n < 80; ++n) {
    if (q >= 1 && q <= limit) out.push_back(static_cast<std::int64_t>(q));
    if (frac == 0) break;
    x = 1 / frac;
    a = floor(x);
    frac = x - a;
    if (a > 1e30) break;
    const i128 an = static_cast<i128>(a.convert_to<double>());
    const i128 next = an * q + q_prev;
    if (next > limit) break;
    q_prev = q;
    q = next;
  }
  std::lock_guard lock(m);
  cache[key] = out;
  return out;
}

std::vector<PositionCase> hard_positions(const SinusoidalSpec& spec, std::size_t pairs) {
  static std::mutex m;
  static std::map<std::string, std::vector<PositionCase>> cache;
  const std::string key = key_of(spec, pairs);
  {
    std::lock_guard lock(m);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const std::int64_t lim = max_abs_position(spec), lo = min_position(spec);
  std::map<std::int64_t, std::string> pos;
  auto add = [&](std::int64_t p, const std::string& region) {
    if (p < lo || p > lim) return;
    pos.emplace(p, region);  // first region wins
  };
  for (std::int64_t p : cases::sinusoidal::kNamedHardPositions) add(p, "p=" + std::to_string(p));
  add(spec.first_position, "p=first_position");
  if (spec.padding_row) add(*spec.padding_row, "p=padding_row");
  for (int d = 0; d <= 3; ++d) add(lim - d, "p=max-3..max");
  for (int e = 1; e <= 40; ++e)
    for (int d : {-1, 0, 1}) add(pow2(e) + d, "p=2^k+-1");
  const std::size_t h = pair_count(spec);
  std::vector<std::size_t> ps;
  for (std::size_t k : {std::size_t{0}, std::size_t{1}, h / 2, h - 1, h / 4, 3 * h / 4})
    if (k < h && std::find(ps.begin(), ps.end(), k) == ps.end() && ps.size() < pairs) ps.push_back(k);
  for (std::size_t k : ps)
    for (std::int64_t q : quarter_pi_positions(spec, k)) {
      if (q < 8) continue;
      for (int d : {0, -1, 1}) add(q + d, "p: angle ~ n pi/2 (pair " + std::to_string(k) + ")");
    }
  if (spec.signed_positions) {
    std::vector<std::pair<std::int64_t, std::string>> neg;
    for (const auto& [p, r] : pos)
      if (p > 0) neg.emplace_back(-p, r + ", negated");
    for (auto& [p, r] : neg) add(p, r);
  }
  std::vector<PositionCase> out;
  for (const auto& [p, r] : pos) out.push_back({p, r});
  std::lock_guard lock(m);
  cache[key] = out;
  return out;
}

rc::Gen<PositionCase> gen_position(const SinusoidalSpec& spec) {
  return gen_position(spec, min_position(spec), max_abs_position(spec));
}

rc::Gen<PositionCase> gen_position(const SinusoidalSpec& spec, std::int64_t lo, std::int64_t hi) {
  lo = std::max(lo, min_position(spec));
  hi = std::min(hi, max_abs_position(spec));
  std::vector<PositionCase> pool;
  for (const auto& c : hard_positions(spec))
    if (c.p >= lo && c.p <= hi) pool.push_back(c);
  const std::int64_t nlo = std::max<std::int64_t>(lo, 0);
  std::vector<std::pair<int, rc::Gen<PositionCase>>> choices;
  if (!pool.empty()) choices.push_back({5, rc::gen::elementOf(pool)});
  if (hi >= nlo) {
    choices.push_back({2, rc::gen::map(rc::gen::inRange<std::int64_t>(nlo, std::min<std::int64_t>(hi, nlo + 1024) + 1),
                                       [](std::int64_t p) { return PositionCase{p, "p small random"}; })});
    choices.push_back({3, gen_log_uniform(nlo, hi)});
  }
  if (lo < 0) {
    const std::int64_t top = std::min<std::int64_t>(-1, hi);
    choices.push_back({2, rc::gen::map(gen_log_uniform(1, -lo), [lo, top](PositionCase c) {
                         c.p = std::clamp<std::int64_t>(-c.p, lo, top);
                         c.region += ", negative";
                         return c;
                       })});
  }
  if (choices.empty()) return rc::gen::just(PositionCase{lo, "p=lo"});
  return weighted_choice<PositionCase>(std::move(choices));
}

rc::Gen<std::int64_t> gen_shift(const SinusoidalSpec& spec, std::int64_t max_k) {
  std::vector<std::int64_t> hard;
  for (std::int64_t q : quarter_pi_positions(spec, 0))
    if (q <= max_k) hard.push_back(q);
  for (int e = 0; e <= 41; ++e)
    if (pow2(e) <= max_k) hard.push_back(pow2(e));
  for (std::int64_t k : cases::sinusoidal::kShifts)
    if (k <= max_k) hard.push_back(k);
  auto sign = [](rc::Gen<std::int64_t> g) {
    return rc::gen::apply([](std::int64_t k, bool neg) { return neg ? -k : k; }, g, rc::gen::arbitrary<bool>());
  };
  const std::int64_t small = std::min<std::int64_t>(16, max_k);
  return rc::gen::weightedOneOf<std::int64_t>({
      {3, rc::gen::inRange<std::int64_t>(-small, small + 1)},
      {3, sign(rc::gen::elementOf(hard))},
      {3, sign(rc::gen::map(gen_log_uniform(1, std::max<std::int64_t>(max_k, 1)), [](const PositionCase& c) { return c.p; }))},
  });
}

}  // namespace posenc::test
