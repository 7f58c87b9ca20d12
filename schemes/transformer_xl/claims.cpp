// Transformer-XL relative attention claims (TXL-*), as RapidCheck properties and enumerated tests. Reference claims
// compare the fast path with the MPFR oracle (include/oracle/posenc/reference/transformer_xl.hpp: the table from
// Transformer-XL's own formula, correctly rounded scores); identity claims are laws checked on the oracle or exact
// equalities of the fast path. Every tolerance comes from a budget row (transformer_xl/budget.cpp, the scores bound of
// verify/relative_budget.hpp); every compared number goes through check() / emit().
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/transformer_xl.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/transformer_xl.hpp"
#include "schemes/sinusoidal/budget.hpp"
#include "support/bias_cases.hpp"
#include "support/bias_measure.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/relative_measure.hpp"
#include "schemes/transformer_xl/measure.hpp"
#include "support/spec_contract.hpp"
#include "schemes/transformer_xl/budget.hpp"
#include "schemes/transformer_xl/cases.hpp"
#include "schemes/transformer_xl/check.hpp"

namespace claims_transformer_xl {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace relative = posenc::test::relative;  // the measuring harness (the checker is verify::relative)
using verify::relative::TableInput;
namespace rf = posenc::reference;
namespace ca = posenc::cases::transformer_xl;
using rf::Real;
using R = TransformerXlRow;

const std::string kConv =
    "CONVENTIONS.md §2.5; kimiyoung/transformer-xl pytorch/mem_transformer.py PositionalEmbedding, _rel_shift, "
    "RelPartialLearnableMultiHeadAttn, MemTransformerLM._forward";

std::string label(const TransformerXlSpec& s) { return describe(s); }

// A spec with d_model <= max_dm and d_head <= max_d (the arbitrary spec's sizes are <= 48 and 24).
rc::Gen<TransformerXlSpec> spec_gen(std::size_t max_dm, std::size_t max_d) {
  return rc::gen::exec([max_dm, max_d] {
    TransformerXlSpec s = *rc::gen::arbitrary<TransformerXlSpec>();
    s.d_model = std::min(s.d_model, max_dm);
    s.d_head = std::min(s.d_head, max_d);
    return s;
  });
}

TransformerXlWeights weights_gen(const TransformerXlSpec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return {relative::random_values(hd), relative::random_values(hd), relative::random_values(hd * s.d_model)};
}

using relative::Call;
rc::Gen<Call> call_gen(std::size_t max_q, std::size_t max_m) {
  return relative::call_gen(max_q, max_m, ca::kHardQueryLengths, ca::kMemoryLengths, false);
}

// Deterministic weights (plain tests): 0.25 everywhere.
TransformerXlWeights fixed_weights(const TransformerXlSpec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return {std::vector<double>(hd, 0.25), std::vector<double>(hd, 0.25), std::vector<double>(hd * s.d_model, 0.25)};
}

std::string call_label(const Call& c) { return c.label(); }

template <class T>
std::vector<T> table_of(const TransformerXlPlan& plan, std::size_t Lk, const TableOptions& o = {}) {
  std::vector<T> t(Lk * plan.spec().d_model);
  plan.table(Lk, std::span<T>(t), o);
  return t;
}


// The plan's scores of a call in f32 and f64 (q, k float32 numbers held in doubles).
using transformer_xl_measure::entry_fn;  // schemes/transformer_xl/measure.hpp
using relative::Scores;
Scores run_scores(const TransformerXlPlan& plan, const Call& c, const std::vector<double>& q, const std::vector<double>& k,
                  std::optional<double> scale, RelativeScoresForm form, const TableOptions& o = {}) {
  const BiasGeometry g = c.view();
  return relative::run_scores(transformer_xl_scores_size(plan.spec(), g), q, k,
                              [&](auto q, auto k, auto out) { plan.scores(q, k, g, scale, out, o, form); });
}

// ---- the table ----------------------------------------------------------------------------------------------

// TXL-TABLE-1
POSENC_PROPERTY(TransformerXl, TableMatchesOracle,
                {"TXL-TABLE-1", "transformer_xl",
                 "TransformerXlPlan::table(klen) row c = [sin | cos](pos(klen - 1 - c) 10000^(-2k/d_model)), pos_seq "
                 "= klen - 1 .. 0 clamped to clamp_len: exact regime within transformer_xl.table.exact.{f32,f64} of "
                 "the oracle's real value, emulated regime the oracle's float32 number of PositionalEmbedding's steps "
                 "(within 1 ulp, transformer_xl.table.emulated.ulp), f32 and f64 output; rows 0, klen - 1, around "
                 "clamp_len and random ones, every column, klen up to 2^20 (d_model <= 8 beyond 400), 1 to 3 threads",
                 kConv, Oracle::reference, {R::table_exact_f32, R::table_exact_f64, R::table_emulated}}) {
  const std::size_t Lk = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(1, 400),
                                         rc::gen::inRange<std::size_t>(400, std::size_t{1} << 20));
  const TransformerXlSpec s = *spec_gen(Lk < 400 ? 48 : 8, 24);  // long calls: a narrow table (few values to write)
  const TransformerXlPlan plan(s, weights_gen(s));
  const TableOptions o{.threads = *rc::gen::inRange(1, 4)};
  const auto t32 = table_of<float>(plan, Lk, o);
  const auto t64 = table_of<double>(plan, Lk, o);
  const bool emu = s.regime == Regime::emulated;
  tag(claim, emu ? "emulated" : "exact");
  if (s.clamp_len > 0 && static_cast<std::size_t>(s.clamp_len) < Lk) tag(claim, "clamped");
  count_case(claim);
  std::vector<std::size_t> must{0, Lk - 1};
  if (s.clamp_len > 0)
    for (std::int64_t dc : {-1, 0, 1}) {
      const std::int64_t c = static_cast<std::int64_t>(Lk) - 1 - s.clamp_len + dc;
      if (c >= 0 && c < static_cast<std::int64_t>(Lk)) must.push_back(static_cast<std::size_t>(c));
    }
  const std::size_t dm = s.d_model;
  for (std::size_t c : sample_indices(Lk, 6, must)) {
    const std::int64_t p = transformer_xl_position(s, static_cast<std::int64_t>(Lk - 1 - c));
    for (std::size_t m = 0; m < dm; ++m) {
      const Real e = rf::transformer_xl_table_value(s, p, m);
      auto what = [&] { return label(s) + " klen=" + std::to_string(Lk) + " c=" + std::to_string(c) + " m=" + std::to_string(m); };
      if (auto f = check(claim, emu ? R::table_emulated : R::table_exact_f32, t32[c * dm + m], e, what)) RC_FAIL(*f);
      if (auto f = check(claim, emu ? R::table_emulated : R::table_exact_f64, t64[c * dm + m], e, what)) RC_FAIL(*f);
    }
  }
}

// ---- indices and the rel_shift -----------------------------------------------------------------------------

// TXL-INDEX-1
POSENC_PROPERTY(TransformerXl, IndicesAreTheRowOfTheDistanceOrMinusOne,
                {"TXL-INDEX-1", "transformer_xl",
                 "TransformerXlPlan::indices holds c(i, j) = klen - 1 - (q_i - j) where the oracle says the entry is "
                 "defined (j <= q_i) and -1 elsewhere, for every entry, any Lq <= klen (memory M = klen - Lq up to "
                 "300), 1 to 3 threads",
                 kConv, Oracle::reference, {R::index}}) {
  const TransformerXlSpec s = *spec_gen(4, 2);
  const Call c = *call_gen(300, 300);
  const TransformerXlPlan plan(s, weights_gen(s));
  const rf::TransformerXlOracle o(s, plan.weights());
  std::vector<std::int32_t> m(c.Lq * c.Lk);
  plan.indices(c.view(), std::span<std::int32_t>(m), {.threads = *rc::gen::inRange(1, 4)});
  count_case(claim);
  for (std::size_t i = 0; i < c.Lq; ++i)
    for (std::size_t j = 0; j < c.Lk; ++j) {
      const std::int64_t want = o.defined(i, j, c.Lq, c.Lk) ? static_cast<std::int64_t>(c.Lk - 1 - (c.Lk - c.Lq + i - j)) : -1;
      if (auto f = check(claim, R::index, static_cast<double>(m[i * c.Lk + j]), Real(static_cast<double>(want)),
                         [&] { return call_label(c) + " i=" + std::to_string(i) + " j=" + std::to_string(j); }))
        RC_FAIL(*f);
    }
}

// TXL-SHIFT-1
POSENC_CLAIM_TEST(TransformerXlShift, RelShiftIsTheDistanceRowOnDefinedEntriesAndJunkExactlyWhereUndefined,
                  {"TXL-SHIFT-1", "transformer_xl",
                   "_rel_shift (zero column in front, viewed [klen + 1][qlen], first row dropped, viewed back: "
                   "transformer_xl_rel_shift, bit for bit) of any [qlen][klen] matrix x equals x[i][c(i, j)] at every "
                   "defined entry (j <= q_i); at the others it holds the code's junk, 0 at j = q_i + 1 and x[i + 1][j "
                   "- q_i - 2] beyond, so for x of distinct nonzero entries the entries that are not x[i][c(i, j)] are "
                   "exactly the ones the plan's indices mark -1 (and its scores -inf): memory M in {0, 1, 7, 128}, qlen "
                   "in {1, 2, 5, 64, 257}, f32 and f64",
                   kConv, Oracle::identity, {R::rel_shift, R::index}}) {
  const Sink sink = claim_sink(claim, FailWith::gtest);
  const TransformerXlSpec s{.d_model = 2, .heads = 1, .d_head = 1};
  const TransformerXlPlan plan(s, fixed_weights(s));
  for (std::size_t M : ca::kMemoryLengths)
    for (std::size_t Lq : {1, 2, 5, 64, 257}) {
      const std::size_t Lk = M + Lq;
      std::vector<double> x(Lq * Lk), y(Lq * Lk);
      for (std::size_t t = 0; t < x.size(); ++t) x[t] = 1.0 + static_cast<double>(t);  // distinct, nonzero
      transformer_xl_rel_shift(std::span<const double>(x), Lq, Lk, std::span<double>(y));
      std::vector<float> x32(x.begin(), x.end()), y32(x.size());
      transformer_xl_rel_shift(std::span<const float>(x32), Lq, Lk, std::span<float>(y32));
      std::vector<std::int32_t> idx(Lq * Lk);
      plan.indices({Lq, Lk}, std::span<std::int32_t>(idx));
      count_case(claim);
      for (std::size_t i = 0; i < Lq; ++i)
        for (std::size_t j = 0; j < Lk; ++j) {
          const std::size_t qi = M + i, at = i * Lk + j;
          double want;
          if (j <= qi) want = x[i * Lk + (Lk - 1 - (qi - j))];
          else if (j == qi + 1) want = 0.0;
          else want = x[(i + 1) * Lk + (j - qi - 2)];
          auto what = [&] { return "M=" + std::to_string(M) + " Lq=" + std::to_string(Lq) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
          emit(sink, R::rel_shift, y[at], Real(want), what);
          emit(sink, R::rel_shift, y32[at], Real(static_cast<double>(static_cast<float>(want))), what);
          // the row of the entry's own distance iff defined (x's entries are distinct and nonzero)
          const bool is_own = j <= qi;
          emit(sink, R::index, static_cast<double>(idx[at] >= 0), Real(is_own ? 1.0 : 0.0), what);
        }
    }
}

// ---- scores -------------------------------------------------------------------------------------------------

// TXL-SCORES-1
POSENC_PROPERTY(TransformerXl, ScoresMatchOracle,
                {"TXL-SCORES-1", "transformer_xl",
                 "scores = scale ((q + u).k + (q + v).W_R R[c(i, j)]) from TransformerXlPlan::scores, blas and direct "
                 "forms, within the transformer_xl.scores bound of the oracle's correctly rounded value, f32 and f64, "
                 "both regimes, clamp_len, same_length with any mem_len, memory M up to 300 (the issue's 0, 1, 7, "
                 "128), Lq up to 300 (the 256-row seams), key masks, 1 to 3 heads, d_head <= 12, d_model <= 16; "
                 "entries the oracle calls undefined or hidden are -inf",
                 kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::masked}}) {
  const TransformerXlSpec s = *spec_gen(16, 12);
  const Call c = *call_gen(300, 300);
  const std::optional<double> scale = *rc::gen::element<std::optional<double>>(std::nullopt, std::nullopt, 0.5);
  const RelativeScoresForm form = *rc::gen::element(RelativeScoresForm::blas, RelativeScoresForm::direct);
  const TransformerXlWeights w = weights_gen(s);
  const TransformerXlPlan plan(s, w);
  const std::vector<double> q = relative::random_values(s.heads * c.Lq * s.d_head),
                            k = relative::random_values(s.heads * c.Lk * s.d_head);
  const Scores sc = run_scores(plan, c, q, k, scale, form);
  tag(claim, std::string(to_string(s.regime)) + " " + std::string(to_string(form)) + (s.same_length ? " same_length" : ""));
  count_case(claim);
  const rf::TransformerXlOracle o(s, w);
  const std::vector<double> table = rf::transformer_xl_table_f64(s, c.Lk);
  const bool emu = s.regime == Regime::emulated;
  const relative::BoundParams b{.d = s.d_head, .dm = s.d_model, .terms = 2,
                                .abs_scale = std::fabs(scale ? *scale : 1 / std::sqrt(static_cast<double>(s.d_head))),
                                .form = form, .rho32 = relative_table_rho(DType::f32, emu),
                                .rho64 = relative_table_rho(DType::f64, emu)};
  relative::measure_scores(claim_sink(claim), budget(R::scores_f32), budget(R::scores_f64), budget(R::masked), s.heads,
                           c.Lq, c.Lk, entry_fn(o, w, c, table, q, k, scale), b, sc.s32, sc.s64,
                           [&] { return label(s) + " " + call_label(c); }, 8, 12);
}

// TXL-TRANSLATE-1
POSENC_PROPERTY(TransformerXl, ScoresDependOnlyOnDistanceAndContent,
                {"TXL-TRANSLATE-1", "transformer_xl",
                 "shifting a segment with its memory by s positions (s more memory keys in front, the contents of the "
                 "last klen keys unchanged) leaves every score of those keys unchanged: on the oracle exactly (both "
                 "at 256 bits), and the fast path's scores of both calls within the transformer_xl.scores bound of "
                 "them; s in 1 .. 300, any spec without same_length (whose mask depends on klen), memory and queries "
                 "up to 64",
                 kConv, Oracle::identity, {R::identity, R::scores_f64}}) {
  TransformerXlSpec s = *spec_gen(8, 6);
  s.same_length = false;
  const Call c = *call_gen(64, 64);
  const std::size_t shift = *rc::gen::inRange<std::size_t>(1, 301);
  const TransformerXlWeights w = weights_gen(s);
  const rf::TransformerXlOracle o(s, w);
  const std::size_t d = s.d_head, Lq = c.Lq, Lk = c.Lk, Lk2 = Lk + shift;
  const std::vector<double> q = relative::random_values(Lq * d), k = relative::random_values(Lk * d);
  std::vector<double> k2 = relative::random_values(shift * d);
  k2.insert(k2.end(), k.begin(), k.end());
  const TransformerXlSpec one = [&] { TransformerXlSpec t = s; t.heads = 1; return t; }();
  const TransformerXlWeights w1{std::vector<double>(w.r_w_bias.begin(), w.r_w_bias.begin() + static_cast<std::ptrdiff_t>(d)),
                                std::vector<double>(w.r_r_bias.begin(), w.r_r_bias.begin() + static_cast<std::ptrdiff_t>(d)),
                                std::vector<double>(w.r_net.begin(), w.r_net.begin() + static_cast<std::ptrdiff_t>(d * s.d_model))};
  const TransformerXlPlan plan(one, w1);
  const rf::TransformerXlOracle o1(one, w1);
  std::vector<double> a(Lq * Lk), b(Lq * Lk2);
  plan.scores(std::span<const double>(q), std::span<const double>(k), {Lq, Lk}, std::nullopt, std::span<double>(a));
  plan.scores(std::span<const double>(q), std::span<const double>(k2), {Lq, Lk2}, std::nullopt, std::span<double>(b));
  count_case(claim);
  const Sink sink = claim_sink(claim);
  for (std::size_t i : sample_indices(Lq, 6))
    for (std::size_t j : sample_indices(Lk, 8, {Lk - Lq + i})) {
      if (!o1.defined(i, j, Lq, Lk)) continue;
      const auto qi = std::span<const double>(q).subspan(i * d, d), kj = std::span<const double>(k).subspan(j * d, d);
      const Real e1 = o1.score(qi, kj, 0, i, j, Lq, Lk), e2 = o1.score(qi, kj, 0, i, j + shift, Lq, Lk2);
      auto what = [&] { return label(one) + " " + call_label(c) + " shift=" + std::to_string(shift) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
      emit_real(sink, R::identity, e2, e1, static_cast<double>(e2), what);
      // the fast path: both calls near the same exact value (B of the f64 row, generous magnitudes: |q|, |k| <= 1)
      double mag = 0;
      for (std::size_t x = 0; x < d; ++x) {
        double B = 0;
        for (std::size_t m = 0; m < s.d_model; ++m) B += std::fabs(w1.r_net[x * s.d_model + m]);
        mag += (1 + std::fabs(w1.r_w_bias[x])) + (1 + std::fabs(w1.r_r_bias[x])) * B;
      }
      const RelativeMagnitudes mm{.content = mag, .position = mag, .weights = mag};
      const double bound = relative_scores_bound(DType::f64, RelativeScoresForm::blas, d, s.d_model, 2,
                                                 1 / std::sqrt(static_cast<double>(d)), mm,
                                                 relative_table_rho(DType::f64, s.regime == Regime::emulated));
      emit(sink, R::scores_f64, a[i * Lk + j], e1, what, bound);
      emit(sink, R::scores_f64, b[i * Lk2 + j + shift], e1, what, bound);
    }
  (void)o;
}

// TXL-DIR-1
POSENC_CLAIM_TEST(TransformerXlDirection, PositionTermIsNotEvenInTheDistanceWhileTheAbsoluteDotProductIs,
                  {"TXL-DIR-1", "transformer_xl",
                   "Transformer-XL embeds only keys at or before the query (delta = q_i - j >= 0), and its projected "
                   "sinusoid can tell the sign of a distance: with d_model = 2, d_head = 1, W_R = [1, 0] (the sin "
                   "column), u = v = 0, q = 1, the position term at delta is sin(delta) and at -delta (the reflected "
                   "row: sin negated, SIN-REPRO-2) -sin(delta), different for every delta not a multiple of pi; the "
                   "absolute sinusoidal dot product PE(p) . PE(p + k) = sum cos(k w) (SIN-DOT) is the same for k and "
                   "-k. Checked on the oracle at delta = 1 .. 64 (and the absolute dot products on the sinusoidal "
                   "plan's double table)",
                   kConv + "; seed 003 (direction)", Oracle::identity, {R::identity}}) {
  const TransformerXlSpec s{.d_model = 2, .heads = 1, .d_head = 1, .regime = Regime::exact};
  const TransformerXlWeights w{{0.0}, {0.0}, {1.0, 0.0}};
  const rf::TransformerXlOracle o(s, w);
  const std::vector<double> q{1.0}, k{0.0};
  const Sink sink = claim_sink(claim, FailWith::gtest);
  const SinusoidalPlan abs_plan(marian_spec(64));
  for (std::int64_t delta = 1; delta <= 64; ++delta) {
    const std::size_t Lk = static_cast<std::size_t>(delta) + 1;
    // query at key position delta (Lq = 1), key 0: distance delta
    const Real plus = o.score(q, k, 0, 0, 0, 1, Lk, 1.0);
    const Real sin_d = rf::transformer_xl_table_value(s, delta, 0);
    emit_real(sink, R::identity, plus, sin_d, static_cast<double>(plus), [&] { return "delta=" + std::to_string(delta); });
    // the reflected row's position term is -sin(delta): it differs from the forward one
    EXPECT_GT(static_cast<double>(abs(sin_d)), 1e-3) << "delta " << delta << ": sin(delta) ~ 0 shows no direction";
    std::vector<double> a(2 * 64);
    abs_plan.table(100, 1, std::span<double>(a).first(64));
    abs_plan.table(100 + delta, 1, std::span<double>(a).subspan(64, 64));
    std::vector<double> b(2 * 64);
    abs_plan.table(100 - delta, 1, std::span<double>(b).first(64));
    abs_plan.table(100, 1, std::span<double>(b).subspan(64, 64));
    double dp = 0, dm = 0;
    for (std::size_t x = 0; x < 64; ++x) dp += a[x] * a[64 + x], dm += b[x] * b[64 + x];
    EXPECT_NEAR(dp, dm, 1e-12) << "the absolute dot product told +" << delta << " from -" << delta;
    count_case(claim);
  }
}

// ---- reproducibility ----------------------------------------------------------------------------------------

// TXL-REPRO-1
POSENC_PROPERTY(TransformerXl, ValuesIndependentOfThreadsAndStorePath,
                {"TXL-REPRO-1", "transformer_xl",
                 "the table is bit-identical whatever the thread count (1, 2, 3), store path and call form (plan or "
                 "one-shot transformer_xl_table), and equals the sinusoidal transformer-xl table of the distances bit "
                 "for bit (a distance's row is the same bytes in every call: SIN-REPRO-1); index matrices and scores "
                 "(both forms) are bit-identical across thread counts and store paths",
                 kConv, Oracle::identity, {R::index}}) {
  const TransformerXlSpec s = *spec_gen(16, 8);
  const Call c = *call_gen(300, 300);
  const TransformerXlPlan plan(s, weights_gen(s));
  const TableOptions one{.threads = 1, .streaming_stores = false},
      many{.threads = *rc::gen::inRange(2, 4), .streaming_stores = true};
  count_case(claim);
  const auto a32 = table_of<float>(plan, c.Lk, one), b32 = table_of<float>(plan, c.Lk, many);
  RC_ASSERT(std::memcmp(a32.data(), b32.data(), a32.size() * sizeof(float)) == 0);
  std::vector<float> c32(a32.size());
  transformer_xl_table(s, c.Lk, std::span<float>(c32));
  RC_ASSERT(std::memcmp(a32.data(), c32.data(), a32.size() * sizeof(float)) == 0);
  std::vector<std::int64_t> pos(c.Lk);
  for (std::size_t r = 0; r < c.Lk; ++r) pos[r] = transformer_xl_position(s, static_cast<std::int64_t>(c.Lk - 1 - r));
  std::vector<float> d32(a32.size());
  sinusoidal_rows(transformer_xl_sinusoidal_spec(s), std::span<const std::int64_t>(pos), std::span<float>(d32));
  RC_ASSERT(std::memcmp(a32.data(), d32.data(), a32.size() * sizeof(float)) == 0);
  std::vector<std::int32_t> i1(c.Lq * c.Lk), i2(c.Lq * c.Lk);
  plan.indices(c.view(), std::span<std::int32_t>(i1), one);
  plan.indices(c.view(), std::span<std::int32_t>(i2), many);
  RC_ASSERT(i1 == i2);
  const std::vector<double> q = relative::random_values(s.heads * c.Lq * s.d_head),
                            k = relative::random_values(s.heads * c.Lk * s.d_head);
  for (RelativeScoresForm form : {RelativeScoresForm::blas, RelativeScoresForm::direct}) {
    const Scores x = run_scores(plan, c, q, k, std::nullopt, form, one), y = run_scores(plan, c, q, k, std::nullopt, form, many);
    RC_ASSERT(x.same_bits(y));
  }
}

// ---- check --------------------------------------------------------------------------------------------------

CheckReport run_check(const TransformerXlSpec& s, std::size_t Lk, const std::vector<double>& t, DType stored) {
  return transformer_xl::check_table(s, Lk, TableInput{t, Lk, s.d_model, stored, {}});
}

// TXL-CHECK-1
POSENC_CLAIM_TEST(TransformerXlCheck, CheckPassesRightTablesAndRefusesWrongOnes,
                  {"TXL-CHECK-1", "transformer_xl",
                   "posenc check transformer_xl passes posenc's own tables (exact in f32 and f64 under the exact "
                   "regime, the float32 table under the emulated regime, also with entries a libm ulp away from "
                   "correctly rounded) and refuses the float32 table held to the exact regime at a long klen (the "
                   "float32 frequencies' error), the ascending pos_seq (0 .. klen - 1), the interleaved layout, the "
                   "table without clamp_len, rows shifted by one and one entry off by 1e-4",
                   "DESIGN.md (posenc check); " + kConv, Oracle::reference,
                   {SinusoidalRow::check_exact_f32, SinusoidalRow::check_exact_f64, SinusoidalRow::check_envelope}}) {
  TransformerXlSpec em = find_preset<TransformerXlSpec>("txl-wt103-base").spec;
  em.d_model = 16;  // the preset's clamp and memory; a narrow table keeps the oracle's entries few
  TransformerXlSpec ex = em;
  ex.regime = Regime::exact;
  const std::size_t Lk = 704, dm = em.d_model;  // tgt_len 64 + mem_len 640: pos_seq 703 .. 0, clamped at 400
  auto own = [&](const TransformerXlSpec& s, auto type_tag) {
    using T = decltype(type_tag);
    std::vector<T> t(Lk * dm);
    transformer_xl_table(s, Lk, std::span<T>(t));
    return std::vector<double>(t.begin(), t.end());
  };
  const std::vector<double> em32 = own(em, float{}), ex32 = own(ex, float{}), ex64 = own(ex, double{});
  check_verdict(claim, run_check(ex, Lk, ex32, DType::f32), 0, "own exact f32");
  check_verdict(claim, run_check(ex, Lk, ex64, DType::f64), 0, "own exact f64");
  check_verdict(claim, run_check(em, Lk, em32, DType::f32), 1, "own emulated f32");
  std::vector<double> libm = em32;
  for (std::size_t at : {7 * dm + 4, 300 * dm + 3, 703 * dm + 11})  // rows 7, 300, 703 (a sine, a sine, a cosine)
    libm[at] = static_cast<double>(std::nextafter(static_cast<float>(libm[at]), 2.0f));
  check_verdict(claim, run_check(em, Lk, libm, DType::f32), 1, "emulated with libm ulps");
  EXPECT_FALSE(run_check(ex, Lk, em32, DType::f32).passed()) << "the float32 table passed the exact regime";
  std::vector<double> asc(Lk * dm);
  for (std::size_t c = 0; c < Lk; ++c)
    std::copy(ex32.begin() + static_cast<std::ptrdiff_t>((Lk - 1 - c) * dm),
              ex32.begin() + static_cast<std::ptrdiff_t>((Lk - c) * dm), asc.begin() + static_cast<std::ptrdiff_t>(c * dm));
  EXPECT_FALSE(run_check(ex, Lk, asc, DType::f32).passed()) << "the ascending pos_seq passed";
  SinusoidalSpec inter = transformer_xl_sinusoidal_spec(ex);
  inter.layout = Layout::interleaved;
  std::vector<std::int64_t> pos(Lk);
  for (std::size_t c = 0; c < Lk; ++c) pos[c] = transformer_xl_position(ex, static_cast<std::int64_t>(Lk - 1 - c));
  std::vector<float> il(Lk * dm);
  sinusoidal_rows(inter, std::span<const std::int64_t>(pos), std::span<float>(il));
  EXPECT_FALSE(run_check(ex, Lk, std::vector<double>(il.begin(), il.end()), DType::f32).passed()) << "interleaved passed";
  TransformerXlSpec noclamp = ex;
  noclamp.clamp_len = -1;
  EXPECT_FALSE(run_check(ex, Lk, own(noclamp, float{}), DType::f32).passed()) << "the unclamped table passed";
  std::vector<double> shifted(Lk * dm, 0.0);
  std::copy(ex32.begin() + static_cast<std::ptrdiff_t>(dm), ex32.end(), shifted.begin());
  EXPECT_FALSE(run_check(ex, Lk, shifted, DType::f32).passed()) << "rows shifted by one passed";
  std::vector<double> off = em32;
  off[500 * dm + 10] += 1e-4;
  EXPECT_FALSE(run_check(em, Lk, off, DType::f32).passed()) << "one entry off by 1e-4 passed";
  for (int i = 0; i < 10; ++i) count_case(claim);
}

// ---- errors -------------------------------------------------------------------------------------------------

// TXL-ERR-1
POSENC_CLAIM_TEST(TransformerXlErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"TXL-ERR-1", "transformer_xl",
                   "bad specs (odd d_model, 0 heads, clamp_len below -1), weights of the wrong size or not finite, "
                   "Lq > Lk, klen 0, short q/k and outputs, an unknown form, a NaN scale, a rel_shift of the wrong "
                   "size and a checked table of the wrong shape raise posenc::Error naming the parameter, its value and "
                   "the accepted range",
                   "DESIGN.md (errors)", Oracle::identity, {}}) {
  const TransformerXlSpec s{.d_model = 4, .heads = 1, .d_head = 2};
  const TransformerXlWeights w{{0.1, 0.2}, {0.3, 0.4}, std::vector<double>(8, 0.5)};
  const TransformerXlPlan plan(s, w);
  expect_error(claim, "d_model", [&] { TransformerXlPlan(TransformerXlSpec{.d_model = 5, .heads = 1, .d_head = 2}, w); }, "odd d_model");
  expect_error(claim, "heads", [&] { TransformerXlPlan(TransformerXlSpec{.d_model = 4, .heads = 0, .d_head = 2}, w); }, "0 heads");
  expect_error(claim, "clamp_len", [&] { TransformerXlPlan(TransformerXlSpec{.d_model = 4, .heads = 1, .d_head = 2, .clamp_len = -2}, w); }, "clamp_len -2");
  expect_error(claim, "r_net", [&] { TransformerXlPlan(s, TransformerXlWeights{w.r_w_bias, w.r_r_bias, std::vector<double>(7, 0.5)}); }, "short r_net");
  expect_error(claim, "r_w_bias", [&] { TransformerXlPlan(s, TransformerXlWeights{{0.1, NAN}, w.r_r_bias, w.r_net}); }, "NaN bias");
  std::vector<float> t(3 * 4);
  expect_error(claim, "out.size()", [&] { plan.table(3, std::span<float>(t).first(11)); }, "short table");
  expect_error(claim, "key_length", [&] { plan.table(0, std::span<float>(t)); }, "klen 0");
  std::vector<std::int32_t> idx(30);
  expect_error(claim, "query_length", [&] { plan.indices({.query_length = 6, .key_length = 5}, std::span<std::int32_t>(idx)); }, "Lq > Lk");
  std::vector<float> q(3 * 2), k(5 * 2), out(3 * 5);
  const BiasGeometry g{.query_length = 3, .key_length = 5};
  expect_error(claim, "q", [&] { plan.scores(std::span<const float>(q).first(5), k, g, std::nullopt, std::span<float>(out)); }, "short q");
  expect_error(claim, "k", [&] { plan.scores(std::span<const float>(q), std::span<const float>(k).first(9), g, std::nullopt, std::span<float>(out)); }, "short k");
  expect_error(claim, "scores", [&] { plan.scores(std::span<const float>(q), k, g, std::nullopt, std::span<float>(out).first(3)); }, "short scores");
  expect_error(claim, "scale", [&] { plan.scores(std::span<const float>(q), k, g, NAN, std::span<float>(out)); }, "NaN scale");
  expect_error(claim, "form", [&] { plan.scores(std::span<const float>(q), k, g, std::nullopt, std::span<float>(out), {}, static_cast<RelativeScoresForm>(7)); }, "form 7");
  std::vector<double> x(15), y(14);
  expect_error(claim, "out", [&] { transformer_xl_rel_shift(std::span<const double>(x), 3, 5, std::span<double>(y)); }, "short rel_shift output");
  expect_error(claim, "query_length", [&] { transformer_xl_rel_shift(std::span<const double>(x), 6, 5, std::span<double>(x)); }, "Lq > Lk rel_shift");
  const std::vector<double> tab(5 * 4, 0.0);
  expect_error(claim, "key_length", [&] { transformer_xl::check_table(s, 4, TableInput{tab, 5, 4, DType::f32, {}}); }, "5 rows for klen 4");
  expect_error(claim, "d_model", [&] { transformer_xl::check_table(s, 5, TableInput{tab, 5, 3, DType::f32, {}}); }, "3 columns for d_model 4");
  expect_error(claim, "preset", [&] { (void)find_preset<TransformerXlSpec>("txl-nosuch"); }, "unknown preset");
}

}  // namespace claims_transformer_xl

POSENC_SPEC_CONTRACT(posenc::TransformerXlSpec, TransformerXl, "TXL")
