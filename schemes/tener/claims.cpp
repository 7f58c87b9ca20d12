// TENER relative attention claims (TENER-*), as RapidCheck properties and enumerated tests. Reference claims compare
// the fast path with the MPFR oracle (include/oracle/posenc/reference/tener.hpp: the table from TENER's own formula
// with its zero row, correctly rounded scores with the key term); identity claims are laws checked on the oracle or
// exact equalities of the fast path. Tolerances: tener/budget.cpp and the scores bound of verify/relative_budget.hpp.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/tener.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/tener.hpp"
#include "schemes/sinusoidal/budget.hpp"
#include "support/bias_measure.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/relative_measure.hpp"
#include "schemes/tener/measure.hpp"
#include "support/spec_contract.hpp"
#include "schemes/tener/budget.hpp"
#include "schemes/tener/cases.hpp"
#include "schemes/tener/check.hpp"

namespace claims_tener {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace relative = posenc::test::relative;  // the measuring harness (the checker is verify::relative)
using verify::relative::TableInput;
namespace rf = posenc::reference;
namespace ca = posenc::cases::tener;
using relative::Call;
using rf::Real;
using R = TenerRow;

const std::string kConv = "CONVENTIONS.md §2.6; fastnlp/TENER modules/relative_transformer.py "
                          "RelativeSinusoidalPositionalEmbedding, RelativeMultiHeadAttn (_shift, _transpose_shift)";

std::string label(const TenerSpec& s) { return describe(s); }

rc::Gen<TenerSpec> spec_gen(std::size_t max_d) {
  return rc::gen::exec([max_d] {
    TenerSpec s = *rc::gen::arbitrary<TenerSpec>();
    s.d_head = std::min(s.d_head, max_d);
    return s;
  });
}

TenerWeights weights_gen(const TenerSpec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return {relative::random_values(hd), relative::random_values(hd)};
}

TenerWeights fixed_weights(const TenerSpec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return {std::vector<double>(hd, 0.25), std::vector<double>(hd, 0.25)};
}

// Self-attention calls: L = Lq = Lk (no memory).
rc::Gen<Call> call_gen(std::size_t max_l) { return relative::call_gen(max_l, 0, ca::kHardLengths, {}, false); }

template <class T>
std::vector<T> table_of(const TenerPlan& plan, std::size_t L, const TableOptions& o = {}) {
  std::vector<T> t(2 * L * plan.spec().d_head);
  plan.table(L, std::span<T>(t), o);
  return t;
}


double default_scale(const TenerSpec& s) { return s.scale ? 1 / std::sqrt(static_cast<double>(s.d_head)) : 1.0; }

using tener_measure::entry_fn;  // schemes/tener/measure.hpp
using relative::Scores;
Scores run_scores(const TenerPlan& plan, const Call& c, const std::vector<double>& q, const std::vector<double>& k,
                  std::optional<double> scale, RelativeScoresForm form, const TableOptions& o = {}) {
  const BiasGeometry g = c.view();
  return relative::run_scores(tener_scores_size(plan.spec(), g), q, k,
                              [&](auto q, auto k, auto out) { plan.scores(q, k, g, scale, out, o, form); });
}

// ---- the table ----------------------------------------------------------------------------------------------

// TENER-TABLE-1
POSENC_PROPERTY(Tener, TableMatchesOracle,
                {"TENER-TABLE-1", "tener",
                 "TenerPlan::table(L) row c = [sin | cos](t 10000^(-k/(h - 1))) at t = c - L (a zero column for odd "
                 "d_head), the row of t = -L all zeros exactly when L > init_size / 2: exact regime within "
                 "tener.table.exact.{f32,f64} of the oracle's real value, emulated the oracle's float32 number of "
                 "get_embedding's steps (within 1 ulp); rows 0, L, 2L - 1 and random ones, every column, L up to "
                 "2^20 (d_head <= 6 beyond 600), 1 to 3 threads",
                 kConv, Oracle::reference, {R::table_exact_f32, R::table_exact_f64, R::table_emulated}}) {
  const std::size_t L = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(1, 600),
                                        rc::gen::inRange<std::size_t>(600, std::size_t{1} << 20));
  const TenerSpec s = *spec_gen(L < 600 ? 24 : 6);  // long calls: a narrow table (few values to write)
  const TenerPlan plan(s, weights_gen(s));
  const TableOptions o{.threads = *rc::gen::inRange(1, 4)};
  const auto t32 = table_of<float>(plan, L, o);
  const auto t64 = table_of<double>(plan, L, o);
  const bool emu = s.regime == Regime::emulated;
  tag(claim, emu ? "emulated" : "exact");
  if (L > s.init_size / 2) tag(claim, "zero row");
  count_case(claim);
  const std::size_t d = s.d_head;
  for (std::size_t c : sample_indices(2 * L, 6, {0, 1, L, 2 * L - 1})) {
    const std::int64_t t = static_cast<std::int64_t>(c) - static_cast<std::int64_t>(L);
    for (std::size_t m = 0; m < d; ++m) {
      const Real e = rf::tener_table_value(s, t, m, L);
      auto what = [&] { return label(s) + " L=" + std::to_string(L) + " t=" + std::to_string(t) + " m=" + std::to_string(m); };
      if (auto f = check(claim, emu ? R::table_emulated : R::table_exact_f32, t32[c * d + m], e, what)) RC_FAIL(*f);
      if (auto f = check(claim, emu ? R::table_emulated : R::table_exact_f64, t64[c * d + m], e, what)) RC_FAIL(*f);
    }
  }
}

// TENER-ODD-1
POSENC_PROPERTY(Tener, SignedTableIsOddInItsSinesAndEvenInItsCosines,
                {"TENER-ODD-1", "tener",
                 "across the signed table, R(-t) is R(t) with its sin half negated and its cos half (and a zero "
                 "column) unchanged, bit for bit, f32 and f64, both regimes, for every t with -t and t in the call "
                 "(t != -L): sin(-x) = -sin(x) survives the float32 steps, the property TENER's direction argument "
                 "needs",
                 kConv + "; seed 003 (TENER)", Oracle::identity, {R::odd}}) {
  const TenerSpec s = *spec_gen(24);
  const std::size_t L = *rc::gen::inRange<std::size_t>(1, 2000);
  const TenerPlan plan(s, weights_gen(s));
  const auto t32 = table_of<float>(plan, L);
  const auto t64 = table_of<double>(plan, L);
  const Sink sink = claim_sink(claim);
  count_case(claim);
  const std::size_t d = s.d_head, h = d / 2;
  for (std::size_t t : sample_indices(L, 24, {0, 1, L - 1})) {
    const std::size_t plus = L + t, minus = L - t;
    for (std::size_t m = 0; m < d; ++m) {
      const double sg = m < h && t != 0 ? -1.0 : 1.0;  // t = 0 is its own mirror (sin 0 = +0)
      auto what = [&] { return label(s) + " L=" + std::to_string(L) + " t=" + std::to_string(t) + " m=" + std::to_string(m); };
      emit(sink, R::odd, t32[minus * d + m], Real(sg * t32[plus * d + m]), what);
      emit(sink, R::odd, t64[minus * d + m], Real(sg * t64[plus * d + m]), what);
    }
  }
}

// ---- indices and the shifts ---------------------------------------------------------------------------------

// TENER-SHIFT-1
POSENC_CLAIM_TEST(TenerShift, ShiftsAreTheSignedDistanceRowsAndEveryEntryIsDefined,
                  {"TENER-SHIFT-1", "tener",
                   "_shift of any [L][2L] matrix x (zero column appended, viewed [2L + 1][L], last row dropped, viewed "
                   "[L][2L], last L columns: tener_shift, bit for bit) equals x[i][L + j - i] (t = j - i) at every "
                   "entry, and _transpose_shift of y (rows 1, 3, .., 2L - 1 of the view, transposed) equals y[j][L + i "
                   "- j] (the key's row at t = i - j): no entry reads a pad zero, so none is undefined; the plan's "
                   "indices hold those rows (query and key term); L in {1, 2, 5, 64, 257}, f32 and f64",
                   kConv, Oracle::identity, {R::shift, R::index}}) {
  const Sink sink = claim_sink(claim, FailWith::gtest);
  const TenerSpec s{.heads = 1, .d_head = 4};
  const TenerPlan plan(s, fixed_weights(s));
  for (std::size_t L : {1, 2, 5, 64, 257}) {
    std::vector<double> x(2 * L * L), y(L * L), z(L * L);
    for (std::size_t t = 0; t < x.size(); ++t) x[t] = 1.0 + static_cast<double>(t);
    tener_shift(std::span<const double>(x), L, std::span<double>(y));
    tener_transpose_shift(std::span<const double>(x), L, std::span<double>(z));
    std::vector<float> x32(x.begin(), x.end()), y32(L * L), z32(L * L);
    tener_shift(std::span<const float>(x32), L, std::span<float>(y32));
    tener_transpose_shift(std::span<const float>(x32), L, std::span<float>(z32));
    std::vector<std::int32_t> iq(L * L), ik(L * L);
    plan.indices({L, L}, std::span<std::int32_t>(iq), false);
    plan.indices({L, L}, std::span<std::int32_t>(ik), true);
    count_case(claim);
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j) {
        auto what = [&] { return "L=" + std::to_string(L) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
        const double a = x[i * 2 * L + (L + j - i)], b = x[j * 2 * L + (L + i - j)];
        emit(sink, R::shift, y[i * L + j], Real(a), what);
        emit(sink, R::shift, z[i * L + j], Real(b), what);
        emit(sink, R::shift, y32[i * L + j], Real(static_cast<double>(static_cast<float>(a))), what);
        emit(sink, R::shift, z32[i * L + j], Real(static_cast<double>(static_cast<float>(b))), what);
        emit(sink, R::index, iq[i * L + j], Real(static_cast<double>(L + j - i)), what);
        emit(sink, R::index, ik[i * L + j], Real(static_cast<double>(L + i - j)), what);
      }
  }
}

// ---- scores -------------------------------------------------------------------------------------------------

// TENER-SCORES-1
POSENC_PROPERTY(Tener, ScoresMatchOracle,
                {"TENER-SCORES-1", "tener",
                 "scores = scale ((q + r_r_bias).k + (q + r_w_bias).R(j - i) + k.R(i - j)) from TenerPlan::scores, "
                 "blas and direct forms, within the tener.scores bound of the oracle's correctly rounded value, f32 "
                 "and f64, both regimes, scale on (1/sqrt(d_head)) or off (TENER's default) or given, L up to 300 (the "
                 "256 seams), key masks, 1 to 3 heads, d_head 4 .. 12; padded keys -inf",
                 kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::masked}}) {
  const TenerSpec s = *spec_gen(12);
  const Call c = *call_gen(300);
  const std::optional<double> scale = *rc::gen::element<std::optional<double>>(std::nullopt, std::nullopt, 0.5);
  const RelativeScoresForm form = *rc::gen::element(RelativeScoresForm::blas, RelativeScoresForm::direct);
  const TenerWeights w = weights_gen(s);
  const TenerPlan plan(s, w);
  const std::vector<double> q = relative::random_values(s.heads * c.Lq * s.d_head),
                            k = relative::random_values(s.heads * c.Lk * s.d_head);
  const Scores sc = run_scores(plan, c, q, k, scale, form);
  tag(claim, std::string(to_string(s.regime)) + " " + std::string(to_string(form)) + (s.scale ? " scaled" : " unscaled"));
  count_case(claim);
  const rf::TenerOracle o(s, w);
  const std::vector<double> table = rf::tener_table_f64(s, c.Lk);
  const bool emu = s.regime == Regime::emulated;
  const relative::BoundParams b{.d = s.d_head, .dm = 0, .terms = 3,
                                .abs_scale = std::fabs(scale ? *scale : default_scale(s)), .form = form,
                                .rho32 = relative_table_rho(DType::f32, emu), .rho64 = relative_table_rho(DType::f64, emu)};
  relative::measure_scores(claim_sink(claim), budget(R::scores_f32), budget(R::scores_f64), budget(R::masked), s.heads,
                           c.Lq, c.Lk, entry_fn(o, w, c, table, q, k, scale), b, sc.s32, sc.s64,
                           [&] { return label(s) + " " + c.label(); }, 8, 12);
}

// TENER-SCALE-1
POSENC_PROPERTY(Tener, ScoresAreUnscaledByDefault,
                {"TENER-SCALE-1", "tener",
                 "with scale = false (TENER's default) the scores are the sum itself: the plan's default equals an "
                 "explicit scale of 1 bit for bit, and the oracle's default equals its scale-1 value exactly; with "
                 "scale = true the default is 1/sqrt(d_head): the plan's default equals the explicit double "
                 "1/sqrt(d_head) bit for bit, and the oracle's equals its value at the exact scales 1/2 and 1/4 "
                 "(d_head 4 and 16)",
                 kConv, Oracle::identity, {R::identity}}) {
  TenerSpec s = *spec_gen(16);
  const Call c = *call_gen(64);
  const TenerWeights w = weights_gen(s);
  const std::vector<double> q = relative::random_values(s.heads * c.Lq * s.d_head),
                            k = relative::random_values(s.heads * c.Lk * s.d_head);
  count_case(claim);
  s.scale = false;
  TenerSpec scaled = s;
  scaled.scale = true;
  const double rsd = 1 / std::sqrt(static_cast<double>(s.d_head));
  for (const auto& [spec, explicit_scale] : {std::pair<TenerSpec, double>{s, 1.0}, {scaled, rsd}}) {
    const TenerPlan plan(spec, w);
    const Scores a = run_scores(plan, c, q, k, std::nullopt, RelativeScoresForm::blas),
                 b = run_scores(plan, c, q, k, explicit_scale, RelativeScoresForm::blas);
    RC_ASSERT(a.same_bits(b));
  }
  const Sink sink = claim_sink(claim);
  const std::size_t d = s.d_head, L = c.Lk;
  const rf::TenerOracle o0(s, w);
  const bool exact_scale = d == 4 || d == 16;
  const std::optional<rf::TenerOracle> o1 = exact_scale ? std::optional<rf::TenerOracle>(std::in_place, scaled, w) : std::nullopt;
  for (std::size_t i : sample_indices(L, 3))
    for (std::size_t j : sample_indices(L, 4)) {
      const auto qi = std::span<const double>(q).subspan(i * d, d), kj = std::span<const double>(k).subspan(j * d, d);
      auto what = [&] { return label(s) + " L=" + std::to_string(L) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
      const Real a = o0.score(qi, kj, 0, i, j, L);
      emit_real(sink, R::identity, a, o0.score(qi, kj, 0, i, j, L, 1.0), static_cast<double>(a), what);
      if (o1) {
        const Real b = o1->score(qi, kj, 0, i, j, L);
        emit_real(sink, R::identity, b, o1->score(qi, kj, 0, i, j, L, rsd), static_cast<double>(b), what);
      }
    }
}

// TENER-DIR-1
POSENC_CLAIM_TEST(TenerDirection, ScoresTellAKeyBeforeTheQueryFromOneAfterIt,
                  {"TENER-DIR-1", "tener",
                   "TENER's scores distinguish a key k positions after the query from one k positions before it "
                   "(seed 003: the relative sinusoid of the signed distance is direction-aware because sin is odd): "
                   "with d_head = 4, zero biases, q = (1, 0, 0, 0) (pair 0's sin slot, w_0 = 1), k = 0 for every key, "
                   "score(i, i + k) = sin(k) and score(i, i - k) = -sin(k) on the oracle, k = 1 .. 32; the absolute "
                   "sinusoidal dot product PE(p) . PE(p + k) is the same for k and -k (SIN-DOT)",
                   kConv + "; seed 003 (direction)", Oracle::identity, {R::identity}}) {
  const TenerSpec s{.heads = 1, .d_head = 4, .scale = false, .regime = Regime::exact};
  const TenerWeights w{std::vector<double>(4, 0.0), std::vector<double>(4, 0.0)};
  const rf::TenerOracle o(s, w);
  const std::vector<double> q{1.0, 0.0, 0.0, 0.0}, k(4, 0.0);
  const Sink sink = claim_sink(claim, FailWith::gtest);
  const std::size_t L = 65, i = 32;
  for (std::size_t dist = 1; dist <= 32; ++dist) {
    const Real after = o.score(q, k, 0, i, i + dist, L), before = o.score(q, k, 0, i, i - dist, L);
    const Real sin_k = rf::tener_table_value(s, static_cast<std::int64_t>(dist), 0, L);
    auto what = [&] { return "k=" + std::to_string(dist); };
    emit_real(sink, R::identity, after, sin_k, static_cast<double>(after), what);
    emit_real(sink, R::identity, before, Real(-sin_k), static_cast<double>(before), what);
    EXPECT_NE(static_cast<double>(before), static_cast<double>(after)) << "k = " << dist << ": no direction";
    count_case(claim);
  }
  const SinusoidalPlan abs_plan(fairseq_spec(64));
  std::vector<double> a(64), b(64), c0(64);
  abs_plan.table(100, 1, std::span<double>(c0));
  for (std::int64_t dist = 1; dist <= 32; ++dist) {
    abs_plan.table(100 + dist, 1, std::span<double>(a));
    abs_plan.table(100 - dist, 1, std::span<double>(b));
    double dp = 0, dm = 0;
    for (std::size_t x = 0; x < 64; ++x) dp += c0[x] * a[x], dm += c0[x] * b[x];
    EXPECT_NEAR(dp, dm, 1e-12) << "the absolute dot product told +" << dist << " from -" << dist;
  }
}

// TENER-TRANSLATE-1
POSENC_PROPERTY(Tener, ScoresDependOnlyOnDistanceAndContent,
                {"TENER-TRANSLATE-1", "tener",
                 "the score of a query and a key depends on their contents and on j - i only: the same pair of "
                 "vectors at (i, j) in a call of length L and at (i + s, j + s) in a call of length L + s (a longer "
                 "sequence, whose table may have a zero row elsewhere) has the same exact score on the oracle, and "
                 "the fast path's scores of both within the tener.scores bound of it; s in 1 .. 300",
                 kConv, Oracle::identity, {R::identity, R::scores_f64}}) {
  const TenerSpec one = [&] { TenerSpec t = *spec_gen(8); t.heads = 1; return t; }();
  const std::size_t L = *rc::gen::inRange<std::size_t>(1, 65), shift = *rc::gen::inRange<std::size_t>(1, 301);
  const TenerWeights w = weights_gen(one);
  const rf::TenerOracle o(one, w);
  const std::size_t d = one.d_head, L2 = L + shift;
  const std::vector<double> q = relative::random_values(L * d), k = relative::random_values(L * d);
  std::vector<double> q2 = relative::random_values(shift * d), k2 = relative::random_values(shift * d);
  q2.insert(q2.end(), q.begin(), q.end());
  k2.insert(k2.end(), k.begin(), k.end());
  const TenerPlan plan(one, w);
  std::vector<double> a(L * L), b(L2 * L2);
  plan.scores(std::span<const double>(q), std::span<const double>(k), {L, L}, std::nullopt, std::span<double>(a));
  plan.scores(std::span<const double>(q2), std::span<const double>(k2), {L2, L2}, std::nullopt, std::span<double>(b));
  count_case(claim);
  const Sink sink = claim_sink(claim);
  const std::vector<double> t1 = rf::tener_table_f64(one, L);
  for (std::size_t i : sample_indices(L, 5))
    for (std::size_t j : sample_indices(L, 6)) {
      const auto qi = std::span<const double>(q).subspan(i * d, d), kj = std::span<const double>(k).subspan(j * d, d);
      const Real e1 = o.score(qi, kj, 0, i, j, L), e2 = o.score(qi, kj, 0, i + shift, j + shift, L2);
      auto what = [&] { return label(one) + " L=" + std::to_string(L) + " shift=" + std::to_string(shift) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
      emit_real(sink, R::identity, e2, e1, static_cast<double>(e2), what);
      relative::Entry e = entry_fn(o, w, Call{L, L, {}, {}}, t1, q, k, std::nullopt)(0, i, j);
      const double bound = relative_scores_bound(DType::f64, RelativeScoresForm::blas, d, 0, 3, default_scale(one),
                                                 e.magnitudes, relative_table_rho(DType::f64, one.regime == Regime::emulated));
      emit(sink, R::scores_f64, a[i * L + j], e1, what, bound);
      emit(sink, R::scores_f64, b[(i + shift) * L2 + j + shift], e1, what, bound);
    }
}

// ---- reproducibility ----------------------------------------------------------------------------------------

// TENER-REPRO-1
POSENC_PROPERTY(Tener, ValuesIndependentOfThreadsAndStorePath,
                {"TENER-REPRO-1", "tener",
                 "the table is bit-identical whatever the thread count (1, 2, 3), store path and call form (plan or "
                 "one-shot tener_table), and equals the sinusoidal fairseq-rule table of t = -L .. L - 1 with its "
                 "padding row at -L (the zero row) bit for bit; index matrices and scores (both forms) are "
                 "bit-identical across thread counts and store paths",
                 kConv, Oracle::identity, {R::index}}) {
  const TenerSpec s = *spec_gen(12);
  const Call c = *call_gen(300);
  const TenerPlan plan(s, weights_gen(s));
  const TableOptions one{.threads = 1, .streaming_stores = false},
      many{.threads = *rc::gen::inRange(2, 4), .streaming_stores = true};
  count_case(claim);
  const std::size_t L = c.Lk;
  const auto a32 = table_of<float>(plan, L, one), b32 = table_of<float>(plan, L, many);
  RC_ASSERT(std::memcmp(a32.data(), b32.data(), a32.size() * sizeof(float)) == 0);
  std::vector<float> c32(a32.size());
  tener_table(s, L, std::span<float>(c32));
  RC_ASSERT(std::memcmp(a32.data(), c32.data(), a32.size() * sizeof(float)) == 0);
  std::vector<float> d32(a32.size());
  sinusoidal_table(tener_sinusoidal_spec(s, L), -static_cast<std::int64_t>(L), 2 * L, std::span<float>(d32));
  RC_ASSERT(std::memcmp(a32.data(), d32.data(), a32.size() * sizeof(float)) == 0);
  std::vector<std::int32_t> i1(L * L), i2(L * L);
  plan.indices(c.view(), std::span<std::int32_t>(i1), true, one);
  plan.indices(c.view(), std::span<std::int32_t>(i2), true, many);
  RC_ASSERT(i1 == i2);
  const std::vector<double> q = relative::random_values(s.heads * L * s.d_head),
                            k = relative::random_values(s.heads * L * s.d_head);
  for (RelativeScoresForm form : {RelativeScoresForm::blas, RelativeScoresForm::direct}) {
    const Scores x = run_scores(plan, c, q, k, std::nullopt, form, one), y = run_scores(plan, c, q, k, std::nullopt, form, many);
    RC_ASSERT(x.same_bits(y));
  }
}

// ---- check --------------------------------------------------------------------------------------------------

CheckReport run_check(const TenerSpec& s, std::size_t L, const std::vector<double>& t, DType stored) {
  return tener::check_table(s, L, TableInput{t, t.size() / s.d_head, s.d_head, stored, {}});
}

// TENER-CHECK-1
POSENC_CLAIM_TEST(TenerCheck, CheckPassesRightTablesAndRefusesWrongOnes,
                  {"TENER-CHECK-1", "tener",
                   "posenc check tener passes posenc's own tables (exact in f32 and f64, the float32 table under the "
                   "emulated regime, also with entries a libm ulp away from correctly rounded, with and without the "
                   "zero row) and refuses the float32 table held to the exact regime at a long L, the paper "
                   "denominator h instead of h - 1, the zero row missing where TENER has it, t = i - j order (rows "
                   "reversed) and one entry off by 1e-4",
                   "DESIGN.md (posenc check); " + kConv, Oracle::reference,
                   {SinusoidalRow::check_exact_f32, SinusoidalRow::check_exact_f64, SinusoidalRow::check_envelope}}) {
  TenerSpec em = find_preset<TenerSpec>("tener-ontonotes").spec;
  em.d_head = 8;  // a narrow table keeps the oracle's entries few
  TenerSpec ex = em;
  ex.regime = Regime::exact;
  const std::size_t d = em.d_head;
  auto own = [&](const TenerSpec& s, std::size_t L, auto tag_type) {
    using T = decltype(tag_type);
    std::vector<T> t(2 * L * d);
    tener_table(s, L, std::span<T>(t));
    return std::vector<double>(t.begin(), t.end());
  };
  for (std::size_t L : {std::size_t{300}, std::size_t{700}}) {  // 700 > init_size / 2: the zero row
    const std::vector<double> em32 = own(em, L, float{}), ex32 = own(ex, L, float{}), ex64 = own(ex, L, double{});
    const std::string at = " at L = " + std::to_string(L);
    check_verdict(claim, run_check(ex, L, ex32, DType::f32), 0, "own exact f32" + at);
    check_verdict(claim, run_check(ex, L, ex64, DType::f64), 0, "own exact f64" + at);
    check_verdict(claim, run_check(em, L, em32, DType::f32), 1, "own emulated f32" + at);
    std::vector<double> libm = em32;
    for (std::size_t a : {7 * d + 4, 300 * d + 3, (2 * L - 1) * d + 5})
      libm[a] = static_cast<double>(std::nextafter(static_cast<float>(libm[a]), 2.0f));
    check_verdict(claim, run_check(em, L, libm, DType::f32), 1, "emulated with libm ulps" + at);
    std::vector<double> rev(2 * L * d, 0.0);
    for (std::size_t c = 1; c < 2 * L; ++c)
      std::copy(ex32.begin() + static_cast<std::ptrdiff_t>((2 * L - c) * d),
                ex32.begin() + static_cast<std::ptrdiff_t>((2 * L - c + 1) * d), rev.begin() + static_cast<std::ptrdiff_t>(c * d));
    EXPECT_FALSE(run_check(ex, L, rev, DType::f32).passed()) << "reversed rows passed" << at;
    for (int i = 0; i < 5; ++i) count_case(claim);
  }
  const std::size_t L = 700;
  EXPECT_FALSE(run_check(ex, L, own(em, L, float{}), DType::f32).passed()) << "the float32 table passed the exact regime";
  std::vector<double> nozero = own(ex, L, float{});
  SinusoidalSpec full = tener_sinusoidal_spec(ex, L);
  full.padding_row.reset();
  std::vector<float> row(d);
  sinusoidal_table(full, -static_cast<std::int64_t>(L), 1, std::span<float>(row));
  std::copy(row.begin(), row.end(), nozero.begin());
  EXPECT_FALSE(run_check(ex, L, nozero, DType::f32).passed()) << "the table without its zero row passed";
  SinusoidalSpec paper = full;
  paper.rule = FrequencyRule::paper;
  paper.odd_dim = OddDim::reject;
  std::vector<float> pt(2 * L * d);
  sinusoidal_table(paper, -static_cast<std::int64_t>(L), 2 * L, std::span<float>(pt));
  EXPECT_FALSE(run_check(ex, L, std::vector<double>(pt.begin(), pt.end()), DType::f32).passed()) << "the paper rule passed";
  std::vector<double> off = own(em, L, float{});
  off[1000 * d + 5] += 1e-4;
  EXPECT_FALSE(run_check(em, L, off, DType::f32).passed()) << "one entry off by 1e-4 passed";
  for (int i = 0; i < 3; ++i) count_case(claim);
}

// ---- errors -------------------------------------------------------------------------------------------------

// TENER-ERR-1
POSENC_CLAIM_TEST(TenerErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"TENER-ERR-1", "tener",
                   "bad specs (d_head below 4, an odd init_size, 0 heads), biases of the wrong size, Lq != Lk, L = 0, "
                   "short q/k and outputs, a NaN scale, shifts of the wrong size and a checked table of the wrong shape "
                   "raise posenc::Error naming the parameter, its value and the accepted range",
                   "DESIGN.md (errors)", Oracle::identity, {}}) {
  const TenerSpec s{.heads = 1, .d_head = 4, .init_size = 8};
  const TenerWeights w = fixed_weights(s);
  const TenerPlan plan(s, w);
  expect_error(claim, "d_head", [&] { TenerPlan(TenerSpec{.heads = 1, .d_head = 3}, w); }, "d_head 3");
  expect_error(claim, "init_size", [&] { TenerPlan(TenerSpec{.heads = 1, .d_head = 4, .init_size = 9}, w); }, "odd init_size");
  expect_error(claim, "heads", [&] { TenerPlan(TenerSpec{.heads = 0, .d_head = 4}, w); }, "0 heads");
  expect_error(claim, "r_r_bias", [&] { TenerPlan(s, TenerWeights{{1.0}, w.r_w_bias}); }, "short r_r_bias");
  std::vector<float> t(2 * 3 * 4);
  expect_error(claim, "out.size()", [&] { plan.table(3, std::span<float>(t).first(23)); }, "short table");
  expect_error(claim, "length", [&] { plan.table(0, std::span<float>(t)); }, "L = 0");
  std::vector<float> q(3 * 4), k(3 * 4), out(9);
  const BiasGeometry g{.query_length = 3, .key_length = 3};
  expect_error(claim, "query_length", [&] { plan.scores(std::span<const float>(q), k, {.query_length = 2, .key_length = 3}, std::nullopt, std::span<float>(out).first(6)); }, "Lq != Lk");
  expect_error(claim, "k", [&] { plan.scores(std::span<const float>(q), std::span<const float>(k).first(11), g, std::nullopt, std::span<float>(out)); }, "short k");
  expect_error(claim, "scale", [&] { plan.scores(std::span<const float>(q), k, g, NAN, std::span<float>(out)); }, "NaN scale");
  std::vector<double> x(18), y(9);
  expect_error(claim, "x", [&] { tener_shift(std::span<const double>(x).first(17), 3, std::span<double>(y)); }, "short shift input");
  expect_error(claim, "out", [&] { tener_transpose_shift(std::span<const double>(x), 3, std::span<double>(y).first(8)); }, "short transpose output");
  const std::vector<double> tab(6 * 4, 0.0);
  expect_error(claim, "length", [&] { tener::check_table(s, 4, TableInput{tab, 6, 4, DType::f32, {}}); }, "6 rows for L 4");
  expect_error(claim, "d_head", [&] { tener::check_table(s, 3, TableInput{tab, 6, 5, DType::f32, {}}); }, "5 columns for d_head 4");
  expect_error(claim, "preset", [&] { (void)find_preset<TenerSpec>("tener-nosuch"); }, "unknown preset");
}

}  // namespace claims_tener

POSENC_SPEC_CONTRACT(posenc::TenerSpec, Tener, "TENER")
