// ALiBi's claims (ALIBI-*), as RapidCheck properties and enumerated tests. Oracle kinds (DESIGN.md §4): identity laws
// are checked on the MPFR oracle at 256 bits (row alibi.identity.oracle) and on the fast path within its budget rows;
// reference claims compare the fast path with the oracle (include/oracle/posenc/reference/alibi.hpp, written from
// the definition independently of lib/). Every tolerance comes from budget.cpp; every compared number goes through
// the measuring harness (measure.hpp) or check(), which print the whole case on failure and feed the proofs JSON.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "schemes/alibi/budget.hpp"
#include "schemes/alibi/cases.hpp"
#include "schemes/alibi/check.hpp"
#include "schemes/alibi/measure.hpp"
#include "posenc/alibi.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/alibi.hpp"
#include "support/bias_cases.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/spec_contract.hpp"

namespace claims_alibi {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
using namespace posenc::test::alibi;
namespace rf = posenc::reference;
namespace ca = posenc::cases::alibi;
using rf::Real;
using R = AlibiRow;

const std::string kConv = "CONVENTIONS.md §2.13";
const std::string kPress = "Press et al. 2022 (ALiBi), CONVENTIONS.md §2.13, §3 item 7";

constexpr AlibiVariant kVariants[] = {AlibiVariant::relative, AlibiVariant::key, AlibiVariant::key_shifted,
                                      AlibiVariant::key_counted, AlibiVariant::symmetric};
constexpr AlibiRegime kRegimes[] = {AlibiRegime::exact, AlibiRegime::ofirpress, AlibiRegime::bloom, AlibiRegime::mpt};

AlibiSpec make_spec(std::size_t heads, AlibiVariant v, AlibiRegime r, double b = 8.0) {
  AlibiSpec s{.heads = heads, .variant = v, .regime = r, .bias_max = b};
  validate(s);
  return s;
}

// ---- generators -------------------------------------------------------------------------------------------

rc::Gen<GeometryCase> geometry_gen(std::size_t max_len) { return test::geometry_gen(max_len, ca::kHardLengths); }

std::string regime_region(const AlibiSpec& s) {
  return std::string(to_string(s.regime)) + " " + std::string(to_string(s.variant));
}

void oracle_identity(const Claim& claim, const Real& a, const Real& b, const Describe& what) {
  const rf::PrecisionGuard guard(320);
  const BudgetRow& row = budget(R::identity_oracle);
  if (auto f = check(claim, row, measure(row, a, b), static_cast<double>(a), &b, what)) ADD_FAILURE() << *f;
}

void bitwise(const Claim& claim, double a, double b, const Describe& what) {
  expect_bitwise(claim, budget(R::bias_identity), a, b, what);
}

// ---------------------------------------------------------------------------------------------------------------
// ALIBI-SLOPE-1
POSENC_PROPERTY(Alibi, SlopesMatchOracle,
                {"ALIBI-SLOPE-1", "alibi",
                 "m_h = 2^(-b (h+1)/c) for h < c and 2^(-b (2j+1)/(2c)) for h = c + j (c = 2^floor(log2 n)), "
                 "correctly rounded to double (exact regime); the ofirpress, BLOOM and MPT float32 slopes are the "
                 "numbers of those implementations' steps, bit for bit",
                 kConv, Oracle::reference, {R::slope_exact_f64, R::slope_emulated}}) {
  const AlibiSpec s = *rc::gen::arbitrary<AlibiSpec>();
  tag(claim, regime_region(s));
  count_case(claim);
  measure_slopes(s, claim_sink(claim));
}

POSENC_CLAIM_TEST(Alibi, SlopesMatchOracleForTheNamedHeadCounts,
                  {"ALIBI-SLOPE-2", "alibi",
                   "ALIBI-SLOPE-1 for every head count n <= 160 and n in {255, 256, 257, 1000, 4099, 65536}, every "
                   "regime (and b in {1, 8, 16, 127.5} for exact and mpt)",
                   kConv, Oracle::reference, {R::slope_exact_f64, R::slope_emulated}}) {
  std::vector<std::size_t> ns(160);
  std::iota(ns.begin(), ns.end(), 1);
  for (std::size_t n : {255, 256, 257, 1000, 4099, 65536}) ns.push_back(n);
  const Sink sink = claim_sink(claim, FailWith::gtest);
  for (std::size_t n : ns)
    for (AlibiRegime r : kRegimes) {
      if (n > 4099 && r != AlibiRegime::exact) continue;  // one large case is enough per rule
      for (double b : {1.0, 8.0, 16.0, 127.5}) {
        if (b != 8.0 && (r == AlibiRegime::ofirpress || r == AlibiRegime::bloom || n > 257)) continue;
        count_case(claim);
        measure_slopes(make_spec(n, AlibiVariant::relative, r, b), sink);
      }
    }
}

POSENC_CLAIM_TEST(Alibi, SlopeRulesHold,
                  {"ALIBI-SLOPE-3", "alibi",
                   "slopes are positive and < 1; for a power of two n they are geometric, m_h = m_0^(h+1), with "
                   "m_0 = 2^(-8/n); for every other n <= 128 (6, 12, 40, 66, 72 among them) slopes(n) = slopes(c) "
                   "followed by the odd-numbered slopes(2c)[0::2][:n-c], so they are not sorted; n = 1 gives 2^-8, "
                   "n = 3 gives (1/16, 1/256, 1/4). On the oracle at 256 bits and, bit for bit, on the fast path in "
                   "every regime",
                   kPress, Oracle::identity, {R::identity_oracle, R::bias_identity}}) {
  for (std::size_t n = 1; n <= 128; ++n) {
    const std::size_t c = alibi_power_of_two_floor(n);
    const AlibiSpec s = make_spec(n, AlibiVariant::relative, AlibiRegime::exact);
    const rf::AlibiOracle o(s);
    const rf::AlibiOracle oc(make_spec(c, AlibiVariant::relative, AlibiRegime::exact));
    const rf::AlibiOracle o2c(make_spec(2 * c, AlibiVariant::relative, AlibiRegime::exact));
    const rf::PrecisionGuard guard(320);
    bool sorted = true;
    for (std::size_t h = 0; h < n; ++h) {
      const Real m = o.slope(h);
      auto what = [&] { return "n=" + std::to_string(n) + " h=" + std::to_string(h); };
      EXPECT_TRUE(m > 0 && m < 1) << what();
      if (h > 0 && o.slope(h) > o.slope(h - 1)) sorted = false;
      if (n == c) {
        // m_h = m_0^(h+1), m_0 = 2^(-8/n)
        const Real m0 = o.slope(0);
        oracle_identity(claim, m, Real(pow(m0, static_cast<double>(h + 1))), what);
        oracle_identity(claim, m0, Real(pow(rf::make_real(2.0, 320), rf::make_real(-8.0, 320) / static_cast<double>(n))), what);
      } else {
        oracle_identity(claim, m, h < c ? oc.slope(h) : o2c.slope(2 * (h - c)), what);
      }
      count_case(claim);
    }
    EXPECT_EQ(sorted, n == c) << "n=" << n << ": the slopes of a non-power-of-two head count are not sorted";
    // The fast path, every regime: the same rule bit for bit.
    for (AlibiRegime r : kRegimes) {
      const auto fs = alibi_slopes(make_spec(n, AlibiVariant::relative, r));
      const auto fc = alibi_slopes(make_spec(c, AlibiVariant::relative, r));
      const auto f2c = alibi_slopes(make_spec(2 * c, AlibiVariant::relative, r));
      for (std::size_t h = 0; h < n; ++h)
        bitwise(claim, fs[h], h < c ? fc[h] : f2c[2 * (h - c)], [&] {
          return "fast " + std::string(to_string(r)) + " n=" + std::to_string(n) + " h=" + std::to_string(h);
        });
      count_case(claim);
    }
  }
  for (AlibiRegime r : kRegimes) {
    EXPECT_EQ(alibi_slopes(make_spec(1, AlibiVariant::relative, r)), std::vector<double>{0x1p-8}) << to_string(r);
    EXPECT_EQ(alibi_slopes(make_spec(3, AlibiVariant::relative, r)), (std::vector<double>{0x1p-4, 0x1p-8, 0x1p-2}))
        << to_string(r);
  }
}

// ALIBI-BIAS-1
POSENC_PROPERTY(Alibi, BiasMatchesOracle,
                {"ALIBI-BIAS-1", "alibi",
                 "every bias variant (relative -m(i-j) | key m j | key_shifted m (j - (L-1)) | key_counted m c_j | "
                 "symmetric -m|i-j|) for any heads, lengths, key mask and causal mask equals m_h x: exact regime "
                 "within 0.5 + 2^-28 ulp_f32 and 0.5 + 2^-40 ulp_f64; the emulated regimes bit for bit; masked "
                 "entries -inf",
                 kConv, Oracle::reference,
                 {R::bias_exact_f32, R::bias_exact_f64, R::bias_emulated, R::emulated_vs_exact, R::bias_identity}}) {
  AlibiSpec s = *rc::gen::arbitrary<AlibiSpec>();
  s.heads = std::min<std::size_t>(s.heads, 24);
  const GeometryCase gc = *geometry_gen(300);
  const BiasGeometry g = gc.view();
  tag(claim, regime_region(s));
  tag(claim, g.query_length == 1 ? "Lq = 1" : "Lq > 1");
  count_case(claim);
  measure_bias(s, g, claim_sink(claim));
}

POSENC_CLAIM_TEST(Alibi, BiasMatchesOracleAtHardPlaces,
                  {"ALIBI-BIAS-2", "alibi",
                   "ALIBI-BIAS-1 for every preset in its regime and in the exact regime, head counts 1 .. 129 of the "
                   "case table, key lengths at the row-block seams (63, 64, 65, 127, 128, 129), and distances across "
                   "2^24 (Lk = 2^24 + 4, one query: float32 rounds the distance, the output takes the streaming "
                   "stores)",
                   kConv, Oracle::reference,
                   {R::bias_exact_f32, R::bias_exact_f64, R::bias_emulated, R::emulated_vs_exact, R::bias_identity}}) {
  const Sink sink = claim_sink(claim, FailWith::gtest);
  for (const auto& preset : SpecTraits<AlibiSpec>::presets())
    for (bool exact : {false, true})
      for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{12}, std::size_t{71}, std::size_t{129}})
        for (std::size_t L : {std::size_t{63}, std::size_t{65}, std::size_t{129}}) {
          AlibiSpec s = alibi_preset(preset.name, n);
          if (exact) s.regime = AlibiRegime::exact;
          for (BiasMask m : {BiasMask::none, BiasMask::causal}) {
            const BiasGeometry g{.query_length = L, .key_length = L, .key_mask = {}, .mask = m};
            count_case(claim);
            measure_bias(s, g, sink, 3, 4, 12);
          }
        }
  // Distances across 2^24, one query row (a decoder step at position 2^24 + 3), every regime.
  for (AlibiRegime r : kRegimes)
    for (AlibiVariant v : {AlibiVariant::relative, AlibiVariant::key_shifted}) {
      const AlibiSpec s = make_spec(1, v, r);
      const BiasGeometry g{.query_length = 1, .key_length = (std::size_t{1} << 24) + 4};
      count_case(claim);
      measure_bias(s, g, sink, 2, 1, 40);
    }
}

// ALIBI-LINEAR-1
POSENC_PROPERTY(Alibi, BiasIsLinearInDistanceAndToeplitz,
                {"ALIBI-LINEAR-1", "alibi",
                 "per head the bias is linear in the distance: on the oracle b(i, j+1) - b(i, j) = m_h wherever both "
                 "keys are visible (relative, key, key_shifted; symmetric: +m before the query, -m after); on the "
                 "fast path relative and symmetric matrices are Toeplitz (b(i, j) = b(i+1, j+1)) and per-key rows "
                 "are the same for every query, bit for bit",
                 kPress, Oracle::identity, {R::identity_oracle, R::bias_identity}}) {
  AlibiSpec s = *rc::gen::arbitrary<AlibiSpec>();
  s.heads = std::min<std::size_t>(s.heads, 8);
  if (s.variant == AlibiVariant::key_counted) s.variant = AlibiVariant::key;
  const std::size_t Lk = *rc::gen::inRange<std::size_t>(2, 200), Lq = *rc::gen::inRange<std::size_t>(1, Lk + 1);
  const BiasGeometry g{.query_length = Lq, .key_length = Lk};
  tag(claim, regime_region(s));
  count_case(claim);
  // Oracle: differences of consecutive keys in the exact regime.
  AlibiSpec es = s;
  es.regime = AlibiRegime::exact;
  const rf::AlibiOracle o(es);
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, s.heads), i = *rc::gen::inRange<std::size_t>(0, Lq);
  const std::size_t qi = Lk - Lq + i;
  const rf::PrecisionGuard guard(320);
  for (std::size_t j : sample_indices(Lk - 1, 16, {qi, qi > 0 ? qi - 1 : 0})) {
    if (s.variant == AlibiVariant::relative && j + 1 > qi) continue;  // 0 above the diagonal
    const Real d = o.bias(h, i, j + 1, Lq, Lk) - o.bias(h, i, j, Lq, Lk);
    const Real m = s.variant == AlibiVariant::symmetric && j >= qi ? Real(-o.slope(h)) : o.slope(h);
    auto what = [&] { return spec_label(s) + " h=" + std::to_string(h) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
    const Real dd = d;
    RC_ASSERT(record(claim, budget(R::identity_oracle), measure(budget(R::identity_oracle), dd, m), what));
  }
  // Fast path: structure of the matrix, bit for bit.
  std::vector<float> b(alibi_bias_size(s, g));
  make_plan(s).bias(g, std::span<float>(b));
  const BudgetRow& row = budget(R::bias_identity);
  for (std::size_t hh = 0; hh < s.heads; ++hh)
    for (std::size_t ii = 0; ii + 1 < Lq; ++ii)
      for (std::size_t j = 0; j < Lk; ++j) {
        const float a = b[(hh * Lq + ii) * Lk + j];
        const bool per_key = s.variant != AlibiVariant::relative && s.variant != AlibiVariant::symmetric;
        if (!per_key && j + 1 >= Lk) continue;
        const float other = per_key ? b[(hh * Lq + ii + 1) * Lk + j] : b[(hh * Lq + ii + 1) * Lk + j + 1];
        if (a != other || std::signbit(a) != std::signbit(other)) {
          const Real r = rf::make_real(static_cast<double>(other), 53);
          auto what = [&] { return spec_label(s) + " " + geometry_label(g) + " h=" + std::to_string(hh) + " i=" + std::to_string(ii) + " j=" + std::to_string(j); };
          if (auto f = check(claim, row, measure(row, static_cast<double>(a), r), a, &r, what)) RC_FAIL(*f);
        }
      }
}

// Softmax of row `i` over its visible keys, in MPFR from the fast numbers `b` (row of Lk values); -inf entries drop.
std::vector<Real> softmax_row(std::span<const double> b) {
  const rf::PrecisionGuard guard(192);
  Real mx = rf::make_real(-std::numeric_limits<double>::infinity(), 192);
  for (double v : b)
    if (std::isfinite(v) && v > mx) mx = rf::make_real(v, 192);
  std::vector<Real> p(b.size());
  Real sum = rf::make_real(0.0, 192);
  for (std::size_t j = 0; j < b.size(); ++j) {
    p[j] = std::isfinite(b[j]) ? Real(exp(rf::make_real(b[j], 192) - mx)) : rf::make_real(0.0, 192);
    sum += p[j];
  }
  for (auto& v : p) v = Real(v / sum);
  return p;
}

double ulp_of(double v, DType t) { return ulp(std::fabs(v), t); }

// ALIBI-SOFTMAX-1
POSENC_PROPERTY(Alibi, VariantsGiveTheSameSoftmaxUnderTheCausalMask,
                {"ALIBI-SOFTMAX-1", "alibi",
                 "under the causal mask the relative (gpt-neox), key (ofirpress), key_shifted (MPT), key_counted "
                 "(BLOOM, no padding) and symmetric variants give the same softmax rows: their exact biases differ "
                 "by a constant per row (oracle, 256 bits) and the fast exact-regime rows (f32 and f64) agree within "
                 "the rounding of their entries; with left padding BLOOM's counted positions equal the relative "
                 "variant under the padding mask",
                 kPress, Oracle::identity, {R::identity_oracle, R::softmax_exact}}) {
  const std::size_t n = *rc::gen::inRange<std::size_t>(1, 17);
  const std::size_t Lk = *rc::gen::inRange<std::size_t>(1, 161), Lq = *rc::gen::inRange<std::size_t>(1, Lk + 1);
  const double b = *rc::gen::element(8.0, 8.0, 4.0, 16.0);
  const bool left_pad = *rc::gen::arbitrary<bool>();
  std::vector<std::uint8_t> mask;
  if (left_pad) {
    mask.assign(Lk, 1);
    const std::size_t pad = *rc::gen::inRange<std::size_t>(0, Lk - Lq + 1);  // every query row is a token
    std::fill(mask.begin(), mask.begin() + static_cast<std::ptrdiff_t>(pad), 0);
  }
  const BiasGeometry g{.query_length = Lq, .key_length = Lk, .key_mask = mask, .mask = BiasMask::causal};
  tag(claim, left_pad ? "left padding" : "no padding");
  count_case(claim);
  const std::vector<AlibiVariant> vars =
      left_pad ? std::vector<AlibiVariant>{AlibiVariant::relative, AlibiVariant::key_counted}
               : std::vector<AlibiVariant>(std::begin(kVariants), std::end(kVariants));
  // Oracle: b_v(i, j) - b_relative(i, j) is the same for every visible j.
  const std::size_t h = *rc::gen::inRange<std::size_t>(0, n), i = *rc::gen::inRange<std::size_t>(0, Lq);
  const rf::PrecisionGuard guard(320);
  const rf::AlibiOracle ref(make_spec(n, AlibiVariant::relative, AlibiRegime::exact, b));
  for (AlibiVariant v : vars) {
    const rf::AlibiOracle o(make_spec(n, v, AlibiRegime::exact, b));
    std::optional<Real> c0;
    for (std::size_t j = 0; j < Lk; ++j) {
      if (masked(g, i, j)) continue;
      const Real c = o.bias(h, i, j, Lq, Lk, g.key_mask) - ref.bias(h, i, j, Lq, Lk, g.key_mask);
      if (!c0) c0 = c;
      auto what = [&] { return std::string(to_string(v)) + " n=" + std::to_string(n) + " " + geometry_label(g) + " h=" + std::to_string(h) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
      RC_ASSERT(record(claim, budget(R::identity_oracle), measure(budget(R::identity_oracle), c, *c0), what));
    }
  }
  // Fast path: softmax rows of every variant against the relative one's, f32 and f64 outputs.
  for (DType t : {DType::f32, DType::f64}) {
    std::vector<std::vector<double>> mats;
    for (AlibiVariant v : vars) {
      const AlibiPlan plan(make_spec(n, v, AlibiRegime::exact, b));
      std::vector<double> m(alibi_bias_size(plan.spec(), g));
      if (t == DType::f64) {
        plan.bias(g, std::span<double>(m));
      } else {
        std::vector<float> m32(m.size());
        plan.bias(g, std::span<float>(m32));
        std::copy(m32.begin(), m32.end(), m.begin());
      }
      mats.push_back(std::move(m));
    }
    const std::span<const double> base(mats[0].data() + (h * Lq + i) * Lk, Lk);
    const std::vector<Real> pb = softmax_row(base);
    for (std::size_t v = 1; v < vars.size(); ++v) {
      const std::span<const double> row(mats[v].data() + (h * Lq + i) * Lk, Lk);
      const std::vector<Real> pa = softmax_row(row);
      double delta = 0;
      for (std::size_t j = 0; j < Lk; ++j)
        if (std::isfinite(row[j])) delta = std::max(delta, ulp_of(row[j], t) + ulp_of(base[j], t));
      for (std::size_t j = 0; j < Lk; ++j) {
        const double p = static_cast<double>(pa[j]);
        auto what = [&] { return std::string(to_string(vars[v])) + " vs relative " + std::string(to_string(t)) + " n=" + std::to_string(n) + " b=" + format_real(b) + " " + geometry_label(g) + " h=" + std::to_string(h) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
        const BudgetRow& row = budget(R::softmax_exact);
        const Measure m = measure(row, pa[j], pb[j], softmax_scale(static_cast<double>(pb[j]), delta));
        if (auto f = check(claim, row, m, p, &pb[j], what)) RC_FAIL(*f);
      }
    }
  }
}

POSENC_CLAIM_TEST(Alibi, SymmetricIsNotSoftmaxEquivalentWithoutTheMask,
                  {"ALIBI-SOFTMAX-2", "alibi",
                   "without a causal mask (bidirectional attention) the symmetric variant -m|i-j| is not softmax-"
                   "equivalent to any of the causal variants: for every n in the case table and L in {2, 16, 160}, "
                   "the rows of queries with keys after them differ from the relative, key, key_shifted and "
                   "key_counted rows by more than 2^20 times the softmax row's budget",
                   kPress, Oracle::identity, {R::softmax_exact}}) {
  for (std::size_t n : ca::kHeadCounts)
    for (std::size_t L : {std::size_t{2}, std::size_t{16}, std::size_t{160}}) {
      const BiasGeometry g{.query_length = L, .key_length = L};
      std::vector<double> sym(n * L * L);
      make_plan(make_spec(n, AlibiVariant::symmetric, AlibiRegime::exact)).bias(g, std::span<double>(sym));
      for (AlibiVariant v : {AlibiVariant::relative, AlibiVariant::key, AlibiVariant::key_shifted, AlibiVariant::key_counted}) {
        std::vector<double> other(n * L * L);
        make_plan(make_spec(n, v, AlibiRegime::exact)).bias(g, std::span<double>(other));
        const std::size_t h = n - 1, i = 0;  // the first query sees every key after it
        const std::span<const double> a(sym.data() + (h * L + i) * L, L), bb(other.data() + (h * L + i) * L, L);
        const auto pa = softmax_row(a), pb = softmax_row(bb);
        double worst = 0;
        for (std::size_t j = 0; j < L; ++j) {
          const double delta = ulp_of(a[j], DType::f64) + ulp_of(bb[j], DType::f64);
          const double scale = softmax_scale(static_cast<double>(pb[j]), delta);
          worst = std::max(worst, std::fabs(static_cast<double>(pa[j]) - static_cast<double>(pb[j])) / scale);
        }
        EXPECT_GT(worst, 0x1p20) << "symmetric vs " << to_string(v) << " n=" << n << " L=" << L
                                 << ": the rows should differ (softmax is not invariant to -m|i-j| vs a causal form)";
        count_case(claim);
      }
    }
}

// ALIBI-SCORES-1
POSENC_PROPERTY(Alibi, FusedScoresMatchOracle,
                {"ALIBI-SCORES-1", "alibi",
                 "AlibiPlan::scores = scale <q_i, k_j> + b(i, j) (bias rows, then a beta = 1 gemm) within the gemm's "
                 "error bound B = (gamma_{d+2} + u)(|scale| sum |q_c k_c| + |b|), f32 and f64, every regime, masked "
                 "entries -inf",
                 kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::bias_identity}}) {
  AlibiSpec s = *rc::gen::arbitrary<AlibiSpec>();
  s.heads = std::min<std::size_t>(s.heads, 3);
  const GeometryCase gc = *geometry_gen(10);
  const BiasGeometry g = gc.view();
  const std::size_t d = *rc::gen::element<std::size_t>(1, 2, 7, 16, 64, 128);
  const double scale = *rc::gen::element(1.0, 0.125, 1 / std::sqrt(static_cast<double>(d)), 0.0);
  auto vec = [&](std::size_t count) {
    const auto v = *rc::gen::container<std::vector<int>>(count, rc::gen::inRange(-1000000, 1000001));
    std::vector<double> out(count);
    for (std::size_t c = 0; c < count; ++c) out[c] = static_cast<float>(v[c] / 250000.0);
    return out;
  };
  const std::vector<double> q = vec(s.heads * g.query_length * d), k = vec(s.heads * g.key_length * d);
  tag(claim, regime_region(s));
  count_case(claim);
  measure_scores(s, g, d, q, k, scale, claim_sink(claim));
}

POSENC_CLAIM_TEST(Alibi, FusedCausalScoresAcrossGemmRowBlocks,
                  {"ALIBI-SCORES-2", "alibi",
                   "ALIBI-SCORES-1 where the causal scores run one gemm per block of 256 query rows that stops at the "
                   "block's last visible key: rows on both sides of every block seam (255, 256, 511, 512), square "
                   "and Lq < Lk geometries, with and without a padding mask, f32 and f64, every regime",
                   kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::bias_identity}}) {
  const Sink sink = claim_sink(claim, FailWith::gtest);
  std::uint64_t state = 20261124;
  auto next = [&state] {  // a fixed LCG: the same q, k every run
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(static_cast<float>(static_cast<double>(state >> 40) / static_cast<double>(1 << 24) * 2 - 1));
  };
  for (AlibiRegime r : kRegimes)
    for (auto [lq, lk] : {std::pair<std::size_t, std::size_t>{600, 600}, {520, 777}}) {
      const std::size_t d = 16, n = 2;
      std::vector<std::uint8_t> mask(lk, 1);
      mask[3] = mask[300] = 0;
      for (bool padded : {false, true}) {
        const BiasGeometry g{.query_length = lq, .key_length = lk,
                              .key_mask = padded ? std::span<const std::uint8_t>(mask) : std::span<const std::uint8_t>(),
                              .mask = BiasMask::causal};
        std::vector<double> q(n * lq * d), k(n * lk * d);
        for (double& v : q) v = next();
        for (double& v : k) v = next();
        count_case(claim);
        measure_scores(make_spec(n, AlibiVariant::relative, r), g, d, q, k, 0.25, sink, 12, 16);
      }
    }
}

// ALIBI-REPRO-1
POSENC_PROPERTY(Alibi, ValuesIndependentOfGeometryThreadsAndStorePath,
                {"ALIBI-REPRO-1", "alibi",
                 "a (head, distance) gets the same bits in every call: any thread count, streaming or ordinary "
                 "stores, and any geometry (the last query row of Lk keys equals the last row of Lk' keys shifted "
                 "by Lk - Lk'; a decoder step Lq = 1 equals the last row of the full matrix)",
                 kConv, Oracle::identity, {R::bias_identity}}) {
  AlibiSpec s = *rc::gen::arbitrary<AlibiSpec>();
  s.heads = std::min<std::size_t>(s.heads, 3);
  if (s.variant == AlibiVariant::key_counted || s.variant == AlibiVariant::key_shifted) s.variant = AlibiVariant::relative;
  // 1100 keys: 4.6 MiB per head, beyond the streaming-store threshold (4 MiB).
  const std::size_t Lk = *rc::gen::element<std::size_t>(64, 65, 300, 1100);
  const BiasGeometry full{.query_length = Lk, .key_length = Lk, .mask = *rc::gen::element(BiasMask::none, BiasMask::causal)};
  tag(claim, regime_region(s));
  count_case(claim);
  const AlibiPlan plan(s);
  std::vector<float> a(alibi_bias_size(s, full)), b(a.size());
  plan.bias(full, std::span<float>(a), TableOptions{.threads = 1, .streaming_stores = false});
  plan.bias(full, std::span<float>(b), TableOptions{.threads = 2, .streaming_stores = true});
  RC_ASSERT(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  // A decoder step: Lq = 1 is the last row; a shorter context: the last row shifted.
  BiasGeometry step = full;
  step.query_length = 1;
  std::vector<float> c(alibi_bias_size(s, step));
  plan.bias(step, std::span<float>(c));
  const std::size_t Ls = Lk / 2;
  BiasGeometry shorter = step;
  shorter.key_length = Ls;
  std::vector<float> e(alibi_bias_size(s, shorter));
  plan.bias(shorter, std::span<float>(e));
  for (std::size_t h = 0; h < s.heads; ++h) {
    RC_ASSERT(std::memcmp(&c[h * Lk], &a[(h * Lk + Lk - 1) * Lk], Lk * sizeof(float)) == 0);
    if (s.variant == AlibiVariant::key) continue;  // m j: the same j, not the same distance
    for (std::size_t j = 0; j < Ls; ++j) {
      const float x = e[h * Ls + j], y = c[h * Lk + j + (Lk - Ls)];
      RC_ASSERT(std::memcmp(&x, &y, sizeof(float)) == 0);
    }
  }
  const BudgetRow& row = budget(R::bias_identity);
  RC_ASSERT(record(claim, row, measure(row, 0.0, rf::make_real(0.0, 53)), [] { return std::string("bitwise"); }));
}

// ALIBI-CHECK-1
POSENC_CLAIM_TEST(AlibiCheck, CheckPassesPosencBiasesAndRefusesWrongConventions,
                  {"ALIBI-CHECK-1", "alibi",
                   "posenc check alibi passes posenc's own biases and slopes (every preset in its regime against the "
                   "emulation envelope, exact biases stored in f16, bf16, f32 and f64 against the exact row, -inf "
                   "where the causal mask puts it) and fails: the heads in reverse order, every distance off by one, "
                   "the sign flipped, a single entry 2 ulp off (exact), a slope 8 ulp off (emulated: the envelope "
                   "allows a pow 2 ulp off), a -inf where no mask puts one",
                   "DESIGN.md (posenc check)", Oracle::reference,
                   {R::check_exact_f16, R::check_exact_bf16, R::check_exact_f32, R::check_exact_f64, R::check_envelope}}) {
  const std::size_t L = 40;
  for (const auto& preset : SpecTraits<AlibiSpec>::presets()) {
    const AlibiSpec s = alibi_preset(preset.name, 6);
    const BiasGeometry g{.query_length = L, .key_length = L, .mask = BiasMask::causal};
    std::vector<float> b32(alibi_bias_size(s, g));
    make_plan(s).bias(g, std::span<float>(b32));
    std::vector<double> v(b32.begin(), b32.end());
    BiasInput in{v, s.heads, L, L, {}, DType::f32, {}};
    const CheckReport ok = check_bias(s, in);
    count_case(claim);
    check_verdict(claim, ok, ok.held_to, std::string(preset.name));
    // Heads in reverse order.
    std::vector<double> rev(v.size());
    for (std::size_t h = 0; h < s.heads; ++h)
      std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(h * L * L), L * L,
                  rev.begin() + static_cast<std::ptrdiff_t>((s.heads - 1 - h) * L * L));
    EXPECT_FALSE(check_bias(s, BiasInput{rev, s.heads, L, L, {}, DType::f32, {}}).passed()) << preset.name << " reversed heads";
    // Sign flipped.
    std::vector<double> neg(v);
    for (double& x : neg) x = std::isfinite(x) ? -x : x;
    EXPECT_FALSE(check_bias(s, BiasInput{neg, s.heads, L, L, {}, DType::f32, {}}).passed()) << preset.name << " sign";
    // A -inf where no mask puts one (row 5, key 2).
    std::vector<double> hole(v);
    hole[5 * L + 2] = -std::numeric_limits<double>::infinity();
    EXPECT_FALSE(check_bias(s, BiasInput{hole, s.heads, L, L, {}, DType::f32, {}}).passed()) << preset.name << " -inf";
    count_case(claim);
    // Slopes: posenc's pass; 8 ulp off fail in the emulated regimes, 2 ulp off fail in the exact one.
    const AlibiPlan plan(s);
    std::vector<double> sl(plan.slopes().begin(), plan.slopes().end());
    const CheckReport sok = check_slopes(s, sl, DType::f32, {});
    check_verdict(claim, sok, sok.held_to, std::string(preset.name) + " slopes");
    const double k = s.regime == AlibiRegime::exact ? 2 : 8;
    sl[1] = static_cast<float>(sl[1] + k * std::ldexp(1.0, std::ilogb(sl[1]) - 23));
    EXPECT_FALSE(check_slopes(s, sl, DType::f32, {}).passed()) << preset.name << " perturbed slope";
    count_case(claim);
  }
  // Every distance off by one (the exact relative variant of 4 heads, rows shifted by one key).
  {
    const AlibiSpec s = make_spec(4, AlibiVariant::relative, AlibiRegime::exact);
    const BiasGeometry g{.query_length = L, .key_length = L};
    std::vector<double> v(alibi_bias_size(s, g)), w(v.size());
    make_plan(s).bias(g, std::span<double>(v));
    for (std::size_t r = 0; r < 4 * L; ++r)
      for (std::size_t j = 0; j < L; ++j) w[r * L + j] = j == 0 ? v[r * L] : v[r * L + j - 1];
    EXPECT_FALSE(check_bias(s, BiasInput{w, 4, L, L, {}, DType::f64, {}}).passed()) << "off by one";
    count_case(claim);
  }
  // Exact biases stored in every type; one entry 2 ulp off fails.
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const AlibiSpec s = make_spec(5, AlibiVariant::relative, AlibiRegime::exact);
    const BiasGeometry g{.query_length = L, .key_length = L};
    std::vector<double> v(alibi_bias_size(s, g));
    make_plan(s).bias(g, std::span<double>(v));
    if (t != DType::f64)
      for (double& x : v) x = round_to(x, t);
    count_case(claim);
    check_verdict(claim, check_bias(s, BiasInput{v, 5, L, L, {}, t, {}}), 0, "exact bias stored in " + std::string(to_string(t)));
    const std::size_t j = (4 * L + 30) * L + 3;  // head 4, row 30, key 3: -m * 27
    v[j] -= 2 * std::ldexp(1.0, std::ilogb(v[j]) + 1 - precision_bits(t));
    EXPECT_FALSE(check_bias(s, BiasInput{v, 5, L, L, {}, t, {}}).passed()) << to_string(t) << ": a 2-ulp error passed";
  }
}

POSENC_CLAIM_TEST(AlibiCheck, EnvelopeContainsARealPowOneUlpOff,
                  {"ALIBI-CHECK-2", "alibi",
                   "the emulation envelope holds what a real implementation computes when its float32 pow is up to "
                   "2 ulp off (HF BLOOM's torch.pow was measured 1 ulp off for 4 of 1234 slopes): for every slope of "
                   "12 and 40 heads moved by -2 .. 2 ulp, the bias RN32(RN32(x) s') lies within the envelope of "
                   "posenc's emulation at every hard distance up to 2^31 - 1, and posenc check alibi passes such "
                   "biases (300 keys) against the envelope",
                   "properties/heldout/data/hf/alibi_bloom.json", Oracle::reference, {R::check_envelope}}) {
  const BudgetRow& row = budget(R::check_envelope);
  for (AlibiRegime r : {AlibiRegime::ofirpress, AlibiRegime::bloom, AlibiRegime::mpt})
    for (std::size_t n : {std::size_t{12}, std::size_t{40}}) {
      const AlibiSpec s = make_spec(n, AlibiVariant::key, r);
      const AlibiPlan plan(s);
      const rf::AlibiOracle o(s);
      for (int off = -2; off <= 2; ++off) {
        std::vector<float> moved(n);
        for (std::size_t h = 0; h < n; ++h) {
          float u = static_cast<float>(plan.slopes()[h]);
          for (int k = 0; k < std::abs(off); ++k) u = std::nextafter(u, off > 0 ? 2.0f : 0.0f);
          moved[h] = u;
          for (std::int64_t x : ca::kHardDistances) {
            const auto x32 = static_cast<float>(x);
            const double real = static_cast<float>(x32 * u);
            const double e = static_cast<float>(x32 * static_cast<float>(plan.slopes()[h]));
            const double E = envelope(static_cast<double>(x), plan.slopes()[h], e);
            const Real re = rf::make_real(e, 53);
            auto what = [&] { return spec_label(s) + " h=" + std::to_string(h) + " x=" + std::to_string(x) + " slope off by " + std::to_string(off) + " ulp"; };
            if (auto f = check(claim, row, measure(row, real, re, E), real, &re, what)) ADD_FAILURE() << *f;
          }
        }
        const std::size_t Lk = 300;
        std::vector<double> v(n * Lk);
        for (std::size_t h = 0; h < n; ++h)
          for (std::size_t j = 0; j < Lk; ++j) v[h * Lk + j] = static_cast<float>(static_cast<float>(j) * moved[h]);
        const CheckReport rep = check_bias(s, BiasInput{v, n, 1, Lk, {}, DType::f32, {}});
        count_case(claim);
        check_verdict(claim, rep, 1, std::string(to_string(r)) + " n=" + std::to_string(n) + " slopes off by " + std::to_string(off) + " ulp");
      }
    }
}

POSENC_CLAIM_TEST(AlibiErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"ALIBI-ERR-1", "alibi",
                   "invalid arguments (lengths out of range, query_length > key_length, key masks of the wrong size "
                   "or with values other than 0/1, outputs of the wrong size, scores with a bad head_dim, scale or "
                   "q/k size, unknown presets) raise posenc::Error naming the parameter, value and accepted range "
                   "(invalid spec fields: ALIBI-SPEC-1)",
                   "DESIGN.md §7", Oracle::identity, {}}) {
  const AlibiPlan plan(make_spec(4, AlibiVariant::key_counted, AlibiRegime::exact));
  expect_bias_call_errors(claim, plan, 4);
  expect_error(claim, "preset", [] { (void)alibi_preset("falcon", 8); }, "unknown preset");
  expect_error(claim, "heads", [] { (void)alibi_preset("bloom", 0); }, "0 heads");
  expect_error(claim, "bias_max", [] { (void)make_plan(AlibiSpec{.heads = 4, .regime = AlibiRegime::bloom, .bias_max = 4.0}); }, "bloom b 4");
}

// ALIBI-IDENTIFY-1
POSENC_CLAIM_TEST(AlibiIdentify, NamesEveryPresetsSlopesAndBiasAndReportsNearMissesAsNear,
                  {"ALIBI-IDENTIFY-1", "alibi",
                   "posenc identify alibi names the convention of posenc's own float32 slopes of every preset (8, 12 "
                   "and 40 heads) and of its bias tensor in every variant (12 heads, 20 queries, 40 keys; and under a "
                   "causal mask) with no difference, as a preset whose numbers are bit for bit the same; slopes of "
                   "bias_max 7 (exact, MPT) with that difference; and reports slopes in reverse head order or one "
                   "part in 2^10 off as no match",
                   "issue 40 (identify for every scheme)", Oracle::reference,
                   {R::check_exact_f32, R::check_envelope}}) {
  auto identified_same = [&](const verify::alibi::Identification& id, std::span<const float> given,
                             const BiasGeometry* g, const std::string& what) {
    ASSERT_TRUE(id.matched) << what << ": " << id.to_markdown();
    EXPECT_TRUE(id.ranked.front().differs.empty()) << what << ": " << id.to_markdown();
    const AlibiPlan plan = make_plan(id.ranked.front().spec);
    std::vector<float> mine(given.size());
    if (g) plan.bias(*g, std::span<float>(mine));
    else for (std::size_t h = 0; h < mine.size(); ++h) mine[h] = static_cast<float>(plan.slopes()[h]);
    for (std::size_t i = 0; i < mine.size(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint32_t>(mine[i]), std::bit_cast<std::uint32_t>(given[i]))
          << what << ": identified as " << id.ranked.front().preset << ", entry " << i;
    count_case(claim);
  };
  for (const auto& preset : SpecTraits<AlibiSpec>::presets()) {
    for (std::size_t heads : {8, 12, 40}) {
      AlibiSpec s = preset.spec;
      s.heads = heads;
      std::vector<float> slopes(heads);
      for (std::size_t h = 0; h < heads; ++h) slopes[h] = static_cast<float>(make_plan(s).slopes()[h]);
      const std::vector<double> v(slopes.begin(), slopes.end());
      identified_same(verify::alibi::identify({v, {heads}, DType::f32}), slopes, nullptr,
                      std::string(preset.name) + " slopes, " + std::to_string(heads) + " heads");
    }
    for (AlibiVariant variant : {AlibiVariant::relative, AlibiVariant::key, AlibiVariant::key_shifted,
                                 AlibiVariant::key_counted, AlibiVariant::symmetric})
      for (BiasMask mask : {BiasMask::none, BiasMask::causal}) {
        AlibiSpec s = preset.spec;
        s.heads = 12, s.variant = variant;
        const BiasGeometry g{20, 40, {}, mask};
        std::vector<float> bias(alibi_bias_size(s, g));
        make_plan(s).bias(g, std::span<float>(bias));
        const std::vector<double> v(bias.begin(), bias.end());
        const auto id = verify::alibi::identify({v, {12, 20, 40}, DType::f32});
        // Under a causal mask variants may coincide on what is visible: the identified one's unmasked bias is then
        // compared where the input is finite.
        const BiasGeometry g_id{20, 40, {}, mask};
        identified_same(id, bias, &g_id, std::string(preset.name) + " bias " + std::string(to_string(variant)) +
                                             (mask == BiasMask::causal ? " causal" : ""));
      }
  }
  // bias_max fitted (MPT's alibi_bias_max): 16 heads of b = 7 in the exact regime, 12 in MPT's.
  for (const auto& [regime, heads] : {std::pair{AlibiRegime::exact, std::size_t{16}}, {AlibiRegime::mpt, std::size_t{12}}}) {
    AlibiSpec b7 = SpecTraits<AlibiSpec>::presets()[0].spec;
    b7.heads = heads, b7.regime = regime, b7.bias_max = 7;
    std::vector<float> slopes(heads);
    for (std::size_t h = 0; h < heads; ++h) slopes[h] = static_cast<float>(make_plan(b7).slopes()[h]);
    const auto id = verify::alibi::identify({std::vector<double>(slopes.begin(), slopes.end()), {heads}, DType::f32});
    ASSERT_TRUE(id.matched) << "bias_max 7: " << id.to_markdown();
    EXPECT_EQ(id.ranked.front().spec.bias_max, 7.0) << id.to_markdown();
    count_case(claim);
  }
  // Near misses: slopes a little off, or in the reverse head order.
  for (const auto& [name, slopes] :
       {std::pair{"heads reversed", [] {
                    AlibiSpec s = SpecTraits<AlibiSpec>::presets()[0].spec;
                    s.heads = 12;
                    const AlibiPlan plan = make_plan(s);
                    std::vector<double> v(plan.slopes().begin(), plan.slopes().end());
                    std::reverse(v.begin(), v.end());
                    return v;
                  }()},
        std::pair{"one part in 2^10 off", [] {
                    AlibiSpec s = SpecTraits<AlibiSpec>::presets()[0].spec;
                    s.heads = 12;
                    const AlibiPlan plan = make_plan(s);
                    std::vector<double> v(plan.slopes().begin(), plan.slopes().end());
                    for (double& x : v) x = static_cast<double>(static_cast<float>(x * (1 + 0x1p-10)));
                    return v;
                  }()}}) {
    const auto id = verify::alibi::identify({slopes, {12}, DType::f32});
    EXPECT_FALSE(id.matched) << name << ": " << id.to_markdown();
    count_case(claim);
  }
}

}  // namespace claims_alibi

POSENC_SPEC_CONTRACT(posenc::AlibiSpec, Alibi, "ALIBI")
