// Shaw / tensor2tensor and HF BERT relative_key claims (SHAW-*), as RapidCheck properties and enumerated tests.
// Reference claims compare the fast path with the MPFR oracle (include/oracle/posenc/reference/shaw.hpp, written
// from the definition independently of lib/); identity claims are exact equalities (indices are integers). Every
// tolerance comes from budget.cpp; every compared number goes through check() / emit().
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/shaw.hpp"
#include "posenc/shaw.hpp"
#include "schemes/shaw/budget.hpp"
#include "schemes/shaw/cases.hpp"
#include "schemes/shaw/check.hpp"
#include "schemes/shaw/measure.hpp"
#include "support/bias_cases.hpp"
#include "support/bias_measure.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/spec_contract.hpp"

namespace claims_shaw {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace shaw = posenc::test::shaw;  // the measuring harness (the checker is verify::shaw)
namespace rf = posenc::reference;
namespace ca = posenc::cases::shaw;
using rf::Real;
using R = ShawRow;
using shaw::random_values;

const std::string kConv =
    "CONVENTIONS.md §2.3, §3 item 3; tensor2tensor layers/common_attention.py; HF models/bert/modeling_bert.py";

std::string label(const ShawSpec& s) { return describe(s); }

ShawWeights random_weights(const ShawSpec& s) {
  ShawWeights w;
  w.keys = random_values(shaw_table_rows(s) * s.head_dim);
  if (s.values) w.values = random_values(shaw_table_rows(s) * s.head_dim);
  return w;
}
// Weights for index-only tests: zeros (indices never read the tables).
ShawWeights zero_weights(const ShawSpec& s) {
  ShawWeights w{std::vector<double>(shaw_table_rows(s) * s.head_dim, 0.0), {}};
  if (s.values) w.values = w.keys;
  return w;
}

// A spec and a geometry it accepts: clip = false needs key_length <= k + 1 (k is raised to fit).
struct Case {
  ShawSpec spec;
  GeometryCase geometry;
};
rc::Gen<Case> case_gen(std::size_t max_len, std::size_t max_dim) {
  return rc::gen::exec([max_len, max_dim] {
    Case c{*rc::gen::arbitrary<ShawSpec>(), *geometry_gen(max_len, ca::kHardLengths)};
    c.spec.head_dim = std::min(c.spec.head_dim, max_dim);
    if (!c.spec.clip) c.spec.max_relative_position = std::max(c.spec.max_relative_position, c.geometry.key_length - 1);
    validate(c.spec);
    return c;
  });
}

std::vector<std::int32_t> index_matrix(const ShawPlan& plan, const BiasGeometry& g, const TableOptions& o = {}) {
  std::vector<std::int32_t> m(g.query_length * g.key_length);
  plan.indices(g, std::span<std::int32_t>(m), o);
  return m;
}

// The whole index matrix against the oracle's, entry by entry.
std::optional<std::string> check_indices(const Claim& claim, const ShawSpec& s, const BiasGeometry& g,
                                         const std::vector<std::int32_t>& m) {
  const std::size_t Lq = g.query_length, Lk = g.key_length;
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j)
      if (auto f = check(claim, R::index, static_cast<double>(m[i * Lk + j]),
                         Real(static_cast<double>(rf::shaw_index(s, i, j, Lq, Lk))),
                         [&] { return label(s) + " " + geometry_label(g) + " i=" + std::to_string(i) + " j=" + std::to_string(j); }))
        return f;
  return std::nullopt;
}

// ---- indices ------------------------------------------------------------------------------------------------

// SHAW-INDEX-1
POSENC_PROPERTY(Shaw, IndexMatricesMatchOracle,
                {"SHAW-INDEX-1", "shaw",
                 "ShawPlan::indices equals clip(d, -k, k) + k from the oracle at every entry (d = j - q_i or q_i - j, "
                 "the queries the last Lq keys: t2t's range_k[-length_q:], its cached single query and BERT's "
                 "key_length - 1), and ShawPlan::index(u) equals it at every offset: any spec, Lq <= Lk <= 300 "
                 "(the row writer's seams among them), 1 to 3 threads",
                 kConv, Oracle::reference, {R::index}}) {
  const Case c = *case_gen(300, 8);
  const BiasGeometry g = c.geometry.view();
  const ShawPlan plan(c.spec, zero_weights(c.spec));
  tag(claim, std::string(to_string(c.spec.sign)) + (c.spec.clip ? " clip" : " no-clip"));
  count_case(claim);
  const auto m = index_matrix(plan, g, {.threads = *rc::gen::inRange(1, 4)});
  if (auto f = check_indices(claim, c.spec, g, m)) RC_FAIL(*f);
  const std::size_t Lq = g.query_length, Lk = g.key_length;
  for (std::size_t i = 0; i < Lq; ++i) {
    const std::size_t j = *rc::gen::inRange<std::size_t>(0, Lk);
    RC_ASSERT(plan.index(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(Lk - Lq + i)) == m[i * Lk + j]);
  }
}

// SHAW-INDEX-2
POSENC_PROPERTY(Shaw, IndicesAreBoundedToeplitzAndClipped,
                {"SHAW-INDEX-2", "shaw",
                 "every index lies in [0, 2k] (inside both tables of 2k + 1 rows); it depends only on j - q_i "
                 "(Toeplitz); with clipping it is constant from distance k on (0 and 2k at the two ends) and "
                 "index(u) + index(-u) = 2k at every offset; idx(0) = k; clip = false refuses key_length k + 2 "
                 "(Error naming key_length) and offsets beyond k (naming u)",
                 kConv, Oracle::identity, {R::index}}) {
  const Case c = *case_gen(300, 8);
  const ShawSpec& s = c.spec;
  const BiasGeometry g = c.geometry.view();
  const ShawPlan plan(s, zero_weights(s));
  const auto k = static_cast<std::int64_t>(s.max_relative_position);
  count_case(claim);
  const auto m = index_matrix(plan, g);
  const std::size_t Lq = g.query_length, Lk = g.key_length;
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j) {
      const std::int32_t v = m[i * Lk + j];
      RC_ASSERT(v >= 0 && v <= 2 * k);
      if (i > 0 && j > 0) RC_ASSERT(v == m[(i - 1) * Lk + j - 1]);
    }
  RC_ASSERT(plan.index(0) == k);
  const std::int64_t reach = s.clip ? 3 * k + 5 : k;
  for (std::int64_t u = -reach; u <= reach; ++u) {
    RC_ASSERT(plan.index(u) + plan.index(-u) == 2 * k);
    if (u >= k) RC_ASSERT(plan.index(u) == plan.index(k));
    if (u <= -k) RC_ASSERT(plan.index(u) == plan.index(-k));
  }
  const std::int32_t far_after = s.sign == RelativeSign::key_minus_query ? static_cast<std::int32_t>(2 * k) : 0;
  if (s.clip) {
    RC_ASSERT(plan.index((std::int64_t{1} << 31) - 1) == far_after);
    RC_ASSERT(plan.index(-(std::int64_t{1} << 31) + 1) == 2 * k - far_after);
  } else {
    bool threw = false;
    try {
      std::vector<std::int32_t> big((s.max_relative_position + 2) * (s.max_relative_position + 2));
      plan.indices({.query_length = s.max_relative_position + 2, .key_length = s.max_relative_position + 2},
                   std::span<std::int32_t>(big));
    } catch (const Error& e) {
      threw = e.parameter() == "key_length";
    }
    RC_ASSERT(threw);
  }
}

// SHAW-INDEX-3
POSENC_CLAIM_TEST(Shaw, PresetIndexMatricesMatchOracleAtTheSeams,
                  {"SHAW-INDEX-3", "shaw",
                   "for every preset (t2t: k = 20, j - i, clipped; bert-relative-key(-query): k = 511, i - j, no "
                   "clamp) the index matrix equals the oracle's for square calls and cached single queries at every "
                   "hard length (1, 2, 20..22, 41, 42, 63..65, 127..129, 255..257) and at 512 (BERT's whole table); "
                   "t2t's row at the centre of a 101-key call reads 0 x 30, 0..40, 40 x 30",
                   kConv, Oracle::reference, {R::index}}) {
  for (const auto& p : SpecTraits<ShawSpec>::presets()) {
    const ShawSpec& s = p.spec;
    const ShawPlan plan(s, zero_weights(s));
    std::vector<std::size_t> lengths(std::begin(ca::kHardLengths), std::end(ca::kHardLengths));
    lengths.push_back(512);
    for (std::size_t L : lengths)
      for (std::size_t Lq : {L, std::size_t{1}}) {
        const BiasGeometry g{.query_length = Lq, .key_length = L};
        if (auto f = check_indices(claim, s, g, index_matrix(plan, g))) FAIL() << *f;
        count_case(claim);
      }
    tag(claim, std::string(p.name));
  }
  const ShawSpec t2t = find_preset<ShawSpec>("t2t").spec;
  const auto row = index_matrix(ShawPlan(t2t, zero_weights(t2t)), {.query_length = 101, .key_length = 101});
  for (std::size_t j = 0; j < 101; ++j) {
    const int want = j < 30 ? 0 : j > 70 ? 40 : static_cast<int>(j) - 30;
    EXPECT_EQ(row[50 * 101 + j], want) << "t2t row 50, key " << j;
  }
}

// SHAW-SIGN-1
POSENC_CLAIM_TEST(Shaw, BertSignIsTheTransposeOfT2tSign,
                  {"SHAW-SIGN-1", "shaw",
                   "the two sign conventions differ exactly by transposition: for Lq = Lk the query_minus_key "
                   "(BERT) index matrix is the transpose of the key_minus_query (t2t, T5, NEZHA) one and equals 2k "
                   "minus it; for Lq < Lk (not square) they differ, and a matrix of the wrong sign fails posenc "
                   "check (SHAW-CHECK-1): a porter who flips the sign is caught",
                   kConv, Oracle::identity, {R::index}}) {
  for (std::size_t k : {1, 3, 20, 64})
    for (bool clip : {true, false})
      for (std::size_t L : {1, 2, 5, 21, 65, 130}) {
        if (!clip && L > k + 1) continue;
        const ShawSpec a{.sign = RelativeSign::key_minus_query, .max_relative_position = k, .clip = clip,
                         .key_query = false, .values = false, .head_dim = 4};
        ShawSpec b = a;
        b.sign = RelativeSign::query_minus_key;
        const BiasGeometry g{.query_length = L, .key_length = L};
        const auto ma = index_matrix(ShawPlan(a, zero_weights(a)), g), mb = index_matrix(ShawPlan(b, zero_weights(b)), g);
        for (std::size_t i = 0; i < L; ++i)
          for (std::size_t j = 0; j < L; ++j) {
            ASSERT_EQ(mb[i * L + j], ma[j * L + i]) << label(b) << " L=" << L << " i=" << i << " j=" << j;
            ASSERT_EQ(mb[i * L + j], static_cast<std::int32_t>(2 * k) - ma[i * L + j]);
          }
        count_case(claim);
      }
}

// SHAW-DECODE-1
POSENC_PROPERTY(Shaw, CachedSingleQueryIsTheLastRow,
                {"SHAW-DECODE-1", "shaw",
                 "the cached single query (query_length 1 with key_length L: t2t cache=True, BERT use_cache) gives "
                 "exactly the last row of the L x L index matrix, and its scores equal the last row's within the "
                 "scores budget of the oracle (both measured)",
                 kConv, Oracle::reference, {R::index, R::scores_f32, R::scores_f64}}) {
  const Case c = *case_gen(200, 16);
  const ShawSpec& s = c.spec;
  const std::size_t L = c.geometry.key_length, d = s.head_dim;
  const ShawWeights w = random_weights(s);
  const ShawPlan plan(s, w);
  count_case(claim);
  const auto full = index_matrix(plan, {.query_length = L, .key_length = L});
  const auto step = index_matrix(plan, {.query_length = 1, .key_length = L});
  for (std::size_t j = 0; j < L; ++j) RC_ASSERT(step[j] == full[(L - 1) * L + j]);
  // scores of the step against the oracle at the last row of the square call
  const std::vector<double> q = random_values(d), k = random_values(L * d);
  const std::vector<float> q32(q.begin(), q.end()), k32(k.begin(), k.end());
  std::vector<float> s32(L);
  std::vector<double> s64(L);
  const BiasGeometry g{.query_length = 1, .key_length = L};
  plan.scores(std::span<const float>(q32), std::span<const float>(k32), 1, g, std::nullopt, std::span<float>(s32));
  plan.scores(std::span<const double>(q), std::span<const double>(k), 1, g, std::nullopt, std::span<double>(s64));
  const rf::ShawOracle o(s, w);
  const Sink sink = claim_sink(claim);
  for (std::size_t j : sample_indices(L, 40, {L - 1})) {
    const auto kj = std::span<const double>(k).subspan(j * d, d);
    const Real e = o.score(q, kj, L - 1, j, L, L);
    const auto [qk, rel] = shaw_score_sums(s, w, q, kj, static_cast<std::size_t>(full[(L - 1) * L + j]));
    const double sc = 1 / std::sqrt(static_cast<double>(d));
    auto what = [&] { return label(s) + " L=" + std::to_string(L) + " j=" + std::to_string(j); };
    emit(sink, R::scores_f32, s32[j], e, what, shaw_scores_bound(DType::f32, d, sc, qk, rel));
    emit(sink, R::scores_f64, s64[j], e, what, shaw_scores_bound(DType::f64, d, sc, qk, rel));
  }
}

// SHAW-REPRO-1
POSENC_PROPERTY(Shaw, ValuesIndependentOfThreadsAndStorePath,
                {"SHAW-REPRO-1", "shaw",
                 "index matrices and scores are bit-identical whatever posenc's thread count (1, 2, 3) and store "
                 "path (streaming stores on or off): the same gemm calls in the same order, rows written at fixed "
                 "block boundaries",
                 kConv, Oracle::identity, {R::index}}) {
  const Case c = *case_gen(200, 16);
  const ShawSpec& s = c.spec;
  const BiasGeometry g = c.geometry.view();
  const ShawPlan plan(s, random_weights(s));
  count_case(claim);
  const TableOptions one{.threads = 1, .streaming_stores = false},
      many{.threads = *rc::gen::inRange(2, 4), .streaming_stores = true};
  RC_ASSERT(index_matrix(plan, g, one) == index_matrix(plan, g, many));
  const std::size_t H = 2, d = s.head_dim, n = shaw_scores_size(s, H, g);
  const std::vector<double> qd = random_values(H * g.query_length * d), kd = random_values(H * g.key_length * d);
  const std::vector<float> q(qd.begin(), qd.end()), k(kd.begin(), kd.end());
  std::vector<float> a(n), b(n);
  plan.scores(std::span<const float>(q), std::span<const float>(k), H, g, std::nullopt, std::span<float>(a), one);
  plan.scores(std::span<const float>(q), std::span<const float>(k), H, g, std::nullopt, std::span<float>(b), many);
  RC_ASSERT(std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0);
}

// ---- scores and outputs -------------------------------------------------------------------------------------

// SHAW-SCORES-1
POSENC_PROPERTY(Shaw, ScoresMatchOracle,
                {"SHAW-SCORES-1", "shaw",
                 "scores = scale (<q_i, k_j> + <q_i, a^K[idx]> + [key_query] <k_j, a^K[idx]>) (default scale "
                 "1/sqrt(head_dim), or a given one) through Q A^T, K A^T, gathered rows and a beta = 1 Q K^T gemm, "
                 "within the shaw.scores bound of the oracle's exact value, f32 and f64, any spec and geometry "
                 "(Lq <= Lk <= 300, causal or not, key masks), 1 or 2 heads, head_dim <= 64; masked entries -inf",
                 kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::masked}}) {
  const Case c = *case_gen(300, 64);
  const ShawSpec& s = c.spec;
  const BiasGeometry g = c.geometry.view();
  const ShawWeights w = random_weights(s);
  const std::size_t H = *rc::gen::inRange<std::size_t>(1, 3);
  const std::optional<double> scale = *rc::gen::element<std::optional<double>>(std::nullopt, 1.0, -0.3);
  const shaw::Inputs in = shaw::random_inputs(s.head_dim, g, H);
  const ShawPlan plan(s, w);
  const rf::ShawOracle o(s, w);
  const std::size_t n = shaw_scores_size(s, H, g);
  const std::vector<float> q32(in.q.begin(), in.q.end()), k32(in.k.begin(), in.k.end());
  std::vector<float> s32(n);
  std::vector<double> s64(n);
  plan.scores(std::span<const float>(q32), std::span<const float>(k32), H, g, scale, std::span<float>(s32));
  plan.scores(std::span<const double>(in.q), std::span<const double>(in.k), H, g, scale, std::span<double>(s64));
  tag(claim, std::string(to_string(s.sign)) + (s.key_query ? " key_query" : "") + (g.mask == BiasMask::causal ? " causal" : ""));
  count_case(claim);
  shaw::measure_scores(claim, o, w, label(s), g, in, scale, s32, s64);
}

// SHAW-OUTPUT-1
POSENC_PROPERTY(Shaw, AttentionOutputMatchesOracle,
                {"SHAW-OUTPUT-1", "shaw",
                 "the attention output z_i = sum_j softmax(e)_ij (v_j + [values] a^V[idx]) from ShawPlan::attend "
                 "(blocked softmax, alpha V and the per-index weight sums times the value table through gemms) is "
                 "within the shaw.output bound of the oracle's, f32 and f64, any spec and geometry (Lq <= Lk <= "
                 "300, causal or not, key masks; the 128-row block seams), 1 or 2 heads, head_dim <= 32; a key mask "
                 "that leaves a query row no key is refused naming key_mask",
                 kConv, Oracle::reference, {R::output_f32, R::output_f64}}) {
  const Case c = *case_gen(300, 32);
  const ShawSpec& s = c.spec;
  const BiasGeometry g = c.geometry.view();
  const ShawWeights w = random_weights(s);
  const std::size_t H = *rc::gen::inRange<std::size_t>(1, 3);
  const std::optional<double> scale = *rc::gen::element<std::optional<double>>(std::nullopt, 1.0, 4.0);
  const shaw::Inputs in = shaw::random_inputs(s.head_dim, g, H);
  const ShawPlan plan(s, w);
  const std::size_t n = H * g.query_length * s.head_dim;
  const std::vector<float> q32(in.q.begin(), in.q.end()), k32(in.k.begin(), in.k.end()), v32(in.v.begin(), in.v.end());
  std::vector<float> z32(n);
  std::vector<double> z64(n);
  if (shaw::blind(g)) {
    expect_error(claim, "key_mask", [&] {
      plan.attend(std::span<const float>(q32), std::span<const float>(k32), std::span<const float>(v32), H, g, scale,
                  std::span<float>(z32));
    }, "no visible key");
    return;
  }
  plan.attend(std::span<const float>(q32), std::span<const float>(k32), std::span<const float>(v32), H, g, scale,
              std::span<float>(z32));
  plan.attend(std::span<const double>(in.q), std::span<const double>(in.k), std::span<const double>(in.v), H, g, scale,
              std::span<double>(z64));
  tag(claim, std::string(s.values ? "values" : "no values") + (g.mask == BiasMask::causal ? " causal" : ""));
  count_case(claim);
  shaw::measure_outputs(claim, rf::ShawOracle(s, w), w, label(s), g, in, scale, z32, z64, 4);
}

// ---- check ------------------------------------------------------------------------------------------------

// SHAW-CHECK-1
POSENC_CLAIM_TEST(ShawCheck, CheckPassesRightIndicesAndRefusesWrongOnes,
                  {"SHAW-CHECK-1", "shaw",
                   "posenc check shaw passes posenc's own index matrices (every preset, square and cached calls) "
                   "and refuses the transposed matrix (the other sign convention), the matrix of the other sign, "
                   "queries aligned to the first keys instead of the last, an unclipped matrix held to a clipped "
                   "spec, and one entry off by one",
                   "DESIGN.md (posenc check); " + kConv, Oracle::reference, {R::check_index}}) {
  for (const auto& p : SpecTraits<ShawSpec>::presets()) {
    const ShawSpec& s = p.spec;
    const ShawPlan plan(s, zero_weights(s));
    const std::size_t L = 60;
    auto run = [&](const std::vector<std::int32_t>& m, std::size_t Lq, std::size_t Lk) {
      const std::vector<double> v(m.begin(), m.end());
      return verify::shaw::check_index(s, verify::shaw::IndexInput{v, Lq, Lk, {}});
    };
    const auto sq = index_matrix(plan, {.query_length = L, .key_length = L});
    check_verdict(claim, run(sq, L, L), 0, std::string(p.name) + " own square");
    const auto st = index_matrix(plan, {.query_length = 1, .key_length = L});
    check_verdict(claim, run(st, 1, L), 0, std::string(p.name) + " own cached step");
    std::vector<std::int32_t> tr(L * L);
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j) tr[i * L + j] = sq[j * L + i];
    EXPECT_FALSE(run(tr, L, L).passed()) << p.name << ": the transposed matrix passed";
    ShawSpec other = s;
    other.sign = s.sign == RelativeSign::key_minus_query ? RelativeSign::query_minus_key : RelativeSign::key_minus_query;
    EXPECT_FALSE(run(index_matrix(ShawPlan(other, zero_weights(other)), {.query_length = L, .key_length = L}), L, L).passed())
        << p.name << ": the other sign passed";
    // queries at 0..Lq-1 (the first keys) instead of the last: 10 queries of 60 keys
    std::vector<std::int32_t> first(10 * L);
    for (std::size_t i = 0; i < 10; ++i)
      for (std::size_t j = 0; j < L; ++j)
        first[i * L + j] = plan.index(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i));
    EXPECT_FALSE(run(first, 10, L).passed()) << p.name << ": queries at the first keys passed";
    std::vector<std::int32_t> one = sq;
    one[17 * L + 3] += 1;
    EXPECT_FALSE(run(one, L, L).passed()) << p.name << ": one entry off by one passed";
    for (int i = 0; i < 6; ++i) count_case(claim);
  }
  // an unclipped (BERT-like, k large) matrix held to t2t's clipped k = 20
  const ShawSpec t2t = find_preset<ShawSpec>("t2t").spec;
  ShawSpec wide = t2t;
  wide.max_relative_position = 200;
  const auto mw = index_matrix(ShawPlan(wide, zero_weights(wide)), {.query_length = 50, .key_length = 50});
  std::vector<double> shifted(mw.begin(), mw.end());
  for (double& x : shifted) x -= 180;  // the same numbers near the diagonal, no clipping beyond 20
  EXPECT_FALSE(verify::shaw::check_index(t2t, verify::shaw::IndexInput{shifted, 50, 50, {}}).passed())
      << "an unclipped matrix passed";
  count_case(claim);
}

// ---- errors -----------------------------------------------------------------------------------------------

// SHAW-ERR-1
POSENC_CLAIM_TEST(ShawErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"SHAW-ERR-1", "shaw",
                   "bad specs, tables, offsets and call arguments (lengths beyond an unclipped table, Lq > Lk, key "
                   "masks, output sizes, heads, a NaN scale, q/k/v sizes, a key mask hiding every key of a row) "
                   "raise posenc::Error naming the parameter, its value and the accepted range",
                   "DESIGN.md (errors)", Oracle::identity, {}}) {
  const ShawSpec s = find_preset<ShawSpec>("t2t").spec;
  ShawSpec sm = s;
  sm.head_dim = 4;
  const ShawWeights w = zero_weights(sm);
  const ShawPlan plan(sm, w);
  expect_error(claim, "keys", [&] { ShawPlan(sm, ShawWeights{std::vector<double>(5, 0.0), w.values}); }, "short keys");
  expect_error(claim, "values", [&] { ShawPlan(sm, ShawWeights{w.keys, {}}); }, "missing values");
  expect_error(claim, "keys", [&] {
    ShawWeights bad = w;
    bad.keys[3] = std::nan("");
    ShawPlan(sm, bad);
  }, "NaN key entry");
  ShawSpec bert = find_preset<ShawSpec>("bert-relative-key").spec;
  bert.head_dim = 4;
  expect_error(claim, "values", [&] { ShawPlan(bert, ShawWeights{zero_weights(bert).keys, {1.0}}); }, "values given to BERT");
  const ShawPlan pb(bert, zero_weights(bert));
  std::vector<std::int32_t> idx(513 * 513);
  expect_error(claim, "key_length", [&] { pb.indices({.query_length = 1, .key_length = 513}, std::span<std::int32_t>(idx).first(513)); },
               "BERT key_length 513 > 512");
  expect_error(claim, "u", [&] { (void)pb.index(512); }, "BERT offset 512");
  expect_error(claim, "u", [&] { (void)plan.index(std::int64_t{1} << 31); }, "offset 2^31");
  expect_error(claim, "query_length", [&] { plan.indices({.query_length = 6, .key_length = 5}, std::span<std::int32_t>(idx).first(30)); }, "Lq > Lk");
  expect_error(claim, "out", [&] { plan.indices({.query_length = 2, .key_length = 5}, std::span<std::int32_t>(idx).first(9)); }, "short out");
  std::vector<float> q(2 * 3 * 4), k(2 * 5 * 4), v(2 * 5 * 4), out(2 * 3 * 5), z(2 * 3 * 4);
  const BiasGeometry g{.query_length = 3, .key_length = 5};
  expect_error(claim, "heads", [&] { plan.scores(std::span<const float>(q), k, 0, g, std::nullopt, std::span<float>(out)); }, "0 heads");
  expect_error(claim, "scale", [&] { plan.scores(std::span<const float>(q), k, 2, g, std::nan(""), std::span<float>(out)); }, "NaN scale");
  expect_error(claim, "q", [&] { plan.scores(std::span<const float>(q).first(5), k, 2, g, std::nullopt, std::span<float>(out)); }, "short q");
  expect_error(claim, "k", [&] { plan.scores(std::span<const float>(q), std::span<const float>(k).first(5), 2, g, std::nullopt, std::span<float>(out)); }, "short k");
  expect_error(claim, "scores", [&] { plan.scores(std::span<const float>(q), k, 2, g, std::nullopt, std::span<float>(out).first(3)); }, "short scores");
  expect_error(claim, "v", [&] { plan.attend(std::span<const float>(q), k, std::span<const float>(v).first(3), 2, g, std::nullopt, std::span<float>(z)); }, "short v");
  expect_error(claim, "out", [&] { plan.attend(std::span<const float>(q), k, v, 2, g, std::nullopt, std::span<float>(z).first(3)); }, "short out");
  const std::uint8_t none[] = {0, 0, 0, 1, 1};
  expect_error(claim, "key_mask", [&] {
    plan.attend(std::span<const float>(q), k, v, 2, {.query_length = 3, .key_length = 5, .key_mask = none, .mask = BiasMask::causal},
                std::nullopt, std::span<float>(z));
  }, "row 0 sees only padding");
  const std::uint8_t bad[] = {1, 2, 1, 1, 1};
  expect_error(claim, "key_mask", [&] {
    plan.scores(std::span<const float>(q), k, 2, {.query_length = 3, .key_length = 5, .key_mask = bad}, std::nullopt, std::span<float>(out));
  }, "key mask entry 2");
  expect_error(claim, "preset", [&] { (void)find_preset<ShawSpec>("shaw-nosuch"); }, "unknown preset");
}

// SHAW-IDENTIFY-1
POSENC_CLAIM_TEST(ShawIdentify, NamesEveryPresetsIndexAndReportsNearMissesAsNear,
                  {"SHAW-IDENTIFY-1", "shaw",
                   "posenc identify shaw names the convention of posenc's own index matrix of every preset, with "
                   "either sign and k in {2, 7, the preset's}, on geometries inside and beyond k (clipped), as a "
                   "preset with exactly the changed fields (or one whose index is the same, bit for bit); and reports "
                   "a matrix with one entry off by one as no match",
                   "issue 40 (identify for every scheme)", Oracle::reference, {R::check_index}}) {
  for (const auto& preset : SpecTraits<ShawSpec>::presets())
    for (RelativeSign sign : {RelativeSign::key_minus_query, RelativeSign::query_minus_key})
      for (std::size_t k : {std::size_t{2}, std::size_t{7}, preset.spec.max_relative_position})
        for (const auto& [lq, lk] : {std::pair<std::size_t, std::size_t>{5, 9}, {12, 12}}) {
          ShawSpec s = preset.spec;
          s.sign = sign, s.max_relative_position = k;
          try {
            check_shaw_lengths(s, lq, lk);
          } catch (const Error&) {
            continue;  // BERT without clipping refuses a geometry beyond k
          }
          std::vector<double> idx(lq * lk);
          for (std::size_t i = 0; i < lq; ++i)
            for (std::size_t j = 0; j < lk; ++j)
              idx[i * lk + j] = shaw_index(s, static_cast<std::int64_t>(j) - static_cast<std::int64_t>(lk - lq + i));
          const std::string what = std::string(preset.name) + " " + std::string(to_string(sign)) + " k " +
                                   std::to_string(k) + " " + std::to_string(lq) + "x" + std::to_string(lk);
          const auto id = verify::shaw::identify_index({idx, lq, lk, {}});
          ASSERT_TRUE(id.matched) << what << ": " << id.to_markdown();
          const ShawSpec& got = id.ranked.front().spec;
          for (std::size_t i = 0; i < lq; ++i)
            for (std::size_t j = 0; j < lk; ++j)
              ASSERT_EQ(shaw_index(got, static_cast<std::int64_t>(j) - static_cast<std::int64_t>(lk - lq + i)),
                        idx[i * lk + j])
                  << what << ": identified as " << id.ranked.front().preset;
          if (id.ranked.front().preset == preset.name) {  // the source preset: only the fields changed here differ
            EXPECT_EQ(id.ranked.front().differs, verify::field_differences(preset.spec, s, {})) << what;
          }
          count_case(claim);
          std::vector<double> off(idx);
          off[lk + 1] += 1;
          EXPECT_FALSE(verify::shaw::identify_index({off, lq, lk, {}}).matched) << what << " with one entry off";
          count_case(claim);
        }
}

}  // namespace claims_shaw

POSENC_SPEC_CONTRACT(posenc::ShawSpec, Shaw, "SHAW")
