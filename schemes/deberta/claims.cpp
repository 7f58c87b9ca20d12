// DeBERTa claims (DEBERTA-*), as RapidCheck properties and enumerated tests. Reference claims compare the fast path
// with the MPFR oracle (include/oracle/posenc/reference/deberta.hpp, written from the definition independently of
// lib/); identity claims are exact equalities (buckets and indices are integers). Every tolerance comes from
// budget.cpp; every compared number goes through check() / emit().
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "schemes/deberta/budget.hpp"
#include "schemes/deberta/cases.hpp"
#include "schemes/deberta/check.hpp"
#include "posenc/deberta.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/deberta.hpp"
#include "support/bias_measure.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/spec_contract.hpp"

namespace claims_deberta {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace rf = posenc::reference;
namespace ca = posenc::cases::deberta;
using rf::Real;
using R = DebertaRow;

const std::string kConv = "CONVENTIONS.md §2.8, §3 items 3 and 6; HF models/deberta_v2/modeling_deberta_v2.py";

std::string label(const DebertaSpec& s) { return describe(s); }

// Random float32 values (a float32 checkpoint's projected embeddings, activations).
std::vector<double> random_values(std::size_t n, int scale = 100000) {
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<float>(*rc::gen::inRange(-scale, scale + 1) * (1.0 / scale));
  return v;
}
DebertaWeights random_weights(const DebertaSpec& s) {
  DebertaWeights w;
  const std::size_t n = s.heads * deberta_table_rows(s) * s.head_dim;
  if (s.c2p) w.pos_key = random_values(n);
  if (s.p2c) w.pos_query = random_values(n);
  return w;
}
DebertaWeights zero_weights(const DebertaSpec& s) {
  DebertaWeights w;
  const std::size_t n = s.heads * deberta_table_rows(s) * s.head_dim;
  if (s.c2p) w.pos_key.assign(n, 0.0);
  if (s.p2c) w.pos_query.assign(n, 0.0);
  return w;
}

// A spec small enough for score tests (heads <= 2, head_dim <= max_dim) with its tables.
DebertaSpec small_spec(std::size_t max_dim) {
  DebertaSpec s = *rc::gen::arbitrary<DebertaSpec>();
  s.heads = std::min<std::size_t>(s.heads, 2);
  s.head_dim = std::min(s.head_dim, max_dim);
  validate(s);
  return s;
}

// Lengths: independent query and key lengths up to max_len, a third of them at the seams.
std::pair<std::size_t, std::size_t> lengths_gen(std::size_t max_len) {
  const std::vector<std::size_t> hard(std::begin(ca::kHardLengths), std::end(ca::kHardLengths));
  auto one = [&] {
    return std::min(max_len, *rc::gen::inRange(0, 3) == 0 ? *rc::gen::elementOf(hard)
                                                          : *rc::gen::inRange<std::size_t>(1, max_len + 1));
  };
  const std::size_t Lk = one();
  const int kind = *rc::gen::inRange(0, 3);  // square (every DeBERTa self-attention), or independent
  return {kind == 0 ? Lk : one(), Lk};
}

std::vector<std::int32_t> relative_matrix(const DebertaPlan& plan, std::size_t Lq, std::size_t Lk, const TableOptions& o = {}) {
  std::vector<std::int32_t> m(Lq * Lk);
  plan.relative_positions(Lq, Lk, std::span<std::int32_t>(m), o);
  return m;
}
std::vector<std::int32_t> index_matrix(const DebertaPlan& plan, std::size_t Lq, std::size_t Lk, const TableOptions& o = {}) {
  std::vector<std::int32_t> m(Lq * Lk);
  plan.position_indices(Lq, Lk, std::span<std::int32_t>(m), o);
  return m;
}

// The distances where a bucket changes or may: 0..2 mid + 2, M +- 2, and a spread of larger ones up to 2^31 - 1.
std::vector<std::int64_t> hard_distances(const DebertaSpec& s) {
  std::set<std::int64_t> d;
  const auto mid = static_cast<std::int64_t>(s.position_buckets ? *s.position_buckets / 2 : 4);
  const auto M = static_cast<std::int64_t>(s.max_relative_positions) - 1;
  for (std::int64_t a = 0; a <= std::min<std::int64_t>(2 * mid + 2, 600); ++a) d.insert(a);
  for (std::int64_t a = M - 2; a <= M + 2; ++a)
    if (a >= 0) d.insert(a);
  for (int e = 0; e <= 31; ++e) d.insert(std::min<std::int64_t>((std::int64_t{1} << e) + e % 3 - 1, (std::int64_t{1} << 31) - 1));
  for (int n = 0; n < 40; ++n) d.insert(*rc::gen::inRange<std::int64_t>(0, std::min<std::int64_t>(8 * M + 100, (std::int64_t{1} << 31) - 1)));
  d.erase(-1);
  return {d.begin(), d.end()};
}

// ---- buckets ------------------------------------------------------------------------------------------------

// DEBERTA-BUCKET-1
POSENC_PROPERTY(Deberta, BucketsMatchOracle,
                {"DEBERTA-BUCKET-1", "deberta",
                 "DebertaPlan::bucket(rel) equals the oracle's b(rel) (exact: ceil decided in exact arithmetic; hf: "
                 "HF's float32 steps each correctly rounded) at every hard distance of both signs: 0 .. 2 mid + 2, "
                 "max_relative_positions - 1 +- 2, every power of two to 2^31 - 1 and random ones; any spec (with or "
                 "without buckets, clamp or not, odd position_buckets, mid = 1), both regimes",
                 kConv, Oracle::reference, {R::bucket_exact, R::bucket_hf}}) {
  DebertaSpec s = *rc::gen::arbitrary<DebertaSpec>();
  s.heads = 1;
  s.head_dim = 1;
  const DebertaPlan plan(s, zero_weights(s));
  tag(claim, std::string(to_string(s.regime)) + (s.position_buckets ? "" : " no-buckets") + (s.clamp ? " clamp" : ""));
  count_case(claim);
  const R row = s.regime == DebertaRegime::exact ? R::bucket_exact : R::bucket_hf;
  for (std::int64_t a : hard_distances(s))
    for (std::int64_t rel : {a, -a})
      if (auto f = check(claim, row, static_cast<double>(plan.bucket(rel)), Real(static_cast<double>(rf::deberta_bucket(s, rel))),
                         [&] { return label(s) + " rel=" + std::to_string(rel); }))
        RC_FAIL(*f);
}

// DEBERTA-BUCKET-2
POSENC_PROPERTY(Deberta, BucketsAreOddMonotoneAndBounded,
                {"DEBERTA-BUCKET-2", "deberta",
                 "b is odd (b(-r) = -b(r)), the identity for |r| <= mid, non-decreasing in r; in the exact regime "
                 "|b| <= position_buckets - 1 for |r| <= max - 1 with b(max - 1) = 2 mid - 1 exactly; with the clamp "
                 "every |r| >= max - 1 gives b(max - 1); without it the curve goes on (b(max) > b(max - 1) whenever "
                 "mid > 1); without buckets b(r) = r",
                 kConv, Oracle::identity, {R::bucket_exact, R::bucket_hf}}) {
  DebertaSpec s = *rc::gen::arbitrary<DebertaSpec>();
  s.heads = 1;
  s.head_dim = 1;
  DebertaSpec ex = s;
  ex.regime = DebertaRegime::exact;
  const DebertaPlan plan(s, zero_weights(s)), exact(ex, zero_weights(ex));
  count_case(claim);
  const auto M = static_cast<std::int64_t>(s.max_relative_positions) - 1;
  const std::vector<std::int64_t> ds = hard_distances(s);
  std::int64_t prev = std::numeric_limits<std::int64_t>::min();
  for (std::int64_t a : ds) {
    const std::int64_t b = plan.bucket(a);
    RC_ASSERT(plan.bucket(-a) == -b);
    RC_ASSERT(b >= prev);  // ds ascending
    prev = b;
    if (!s.position_buckets) {
      RC_ASSERT(b == a);
      continue;
    }
    const auto mid = static_cast<std::int64_t>(*s.position_buckets / 2);
    if (a <= mid) RC_ASSERT(b == a);
    if (s.clamp && a >= M) RC_ASSERT(b == plan.bucket(M));
  }
  if (s.position_buckets) {
    const auto mid = static_cast<std::int64_t>(*s.position_buckets / 2);
    RC_ASSERT(exact.bucket(M) == (M > mid ? 2 * mid - 1 : M));
    for (std::int64_t a : ds)
      if (a <= M) RC_ASSERT(exact.bucket(a) <= static_cast<std::int64_t>(*s.position_buckets) - 1);
    if (!s.clamp && mid > 1 && M > mid) RC_ASSERT(exact.bucket(M + 1) > exact.bucket(M));
  }
}

// DEBERTA-BUCKET-3
POSENC_CLAIM_TEST(Deberta, ExactAndFloat32BucketsDifferOnlyWhereTheLogIsWithinItsRounding,
                  {"DEBERTA-BUCKET-3", "deberta",
                   "for every configuration of the case table ((256, 512) of every DeBERTa-v2/v3 checkpoint, HF's "
                   "held-out (128, 512), (64, 256), (32, 64), (4, 8), (8, 16), odd and tiny bucket counts) the hf and "
                   "exact buckets are compared at every |rel| <= 4 max; where they differ the exact value v(a) lies "
                   "within the float32 steps' reach of an integer (|v - round(v)| <= 2^-18 (v + 1)), so every "
                   "difference is the float32 log, and the count of differences is recorded per configuration",
                   kConv, Oracle::reference, {R::bucket_exact, R::bucket_hf}}) {
  for (const ca::Buckets& c : ca::kConfigs) {
    DebertaSpec hf{.position_buckets = c.position_buckets, .max_relative_positions = c.max_relative_positions,
                   .clamp = false, .regime = DebertaRegime::hf, .c2p = true, .p2c = true, .heads = 1, .head_dim = 1};
    DebertaSpec ex = hf;
    ex.regime = DebertaRegime::exact;
    const auto mid = static_cast<std::int64_t>(c.position_buckets / 2);
    std::size_t differ = 0;
    std::string where;
    for (std::int64_t a = 0; a <= 4 * static_cast<std::int64_t>(c.max_relative_positions); ++a) {
      const std::int64_t bh = deberta_bucket(hf, a), be = deberta_bucket(ex, a);
      ASSERT_EQ(bh, rf::deberta_bucket(hf, a)) << label(hf) << " a=" << a;
      ASSERT_EQ(be, rf::deberta_bucket(ex, a)) << label(ex) << " a=" << a;
      if (bh == be) continue;
      ++differ;
      if (where.size() < 200) where += " " + std::to_string(a);
      ASSERT_GT(a, mid);
      const double v = static_cast<double>(rf::deberta_log_position(ex, a));
      EXPECT_LE(std::fabs(v - std::round(v)), std::ldexp(v + 1, -18)) << label(hf) << " a=" << a << " v=" << v;
      EXPECT_EQ(std::llabs(bh - be), 1) << label(hf) << " a=" << a;
    }
    tag(claim, std::to_string(c.position_buckets) + "/" + std::to_string(c.max_relative_positions) + ": " +
                   std::to_string(differ) + " distances differ" + (differ ? " (a =" + where + ")" : ""));
    count_case(claim);
  }
}

// ---- index matrices ------------------------------------------------------------------------------------------

// DEBERTA-INDEX-1
POSENC_PROPERTY(Deberta, IndexMatricesMatchOracle,
                {"DEBERTA-INDEX-1", "deberta",
                 "relative_positions equals the oracle's b(i - j) and position_indices its clamp(b + span, 0, 2 span "
                 "- 1) at every entry, the queries at positions 0..Lq-1 (HF build_relative_position), for "
                 "independent Lq, Lk <= 300 (Lq > Lk included; the 64-row seams among them), any spec, 1 to 3 "
                 "threads; every c2p / p2c index lies in [0, 2 span)",
                 kConv, Oracle::reference, {R::index}}) {
  DebertaSpec s = *rc::gen::arbitrary<DebertaSpec>();
  s.heads = 1;
  s.head_dim = 1;
  const auto lens = lengths_gen(300);
  const std::size_t Lq = lens.first, Lk = lens.second;
  const DebertaPlan plan(s, zero_weights(s));
  const TableOptions o{.threads = *rc::gen::inRange(1, 4)};
  count_case(claim);
  const auto rm = relative_matrix(plan, Lq, Lk, o), im = index_matrix(plan, Lq, Lk, o);
  const auto span = static_cast<std::int32_t>(deberta_span(s));
  // the oracle's entries depend on rel = i - j alone (its own definition): asked once per rel, at a cell holding it
  std::vector<std::pair<std::int64_t, std::int64_t>> want(Lq + Lk - 1);  // (b, c) by rel + Lk - 1
  for (std::size_t t = 0; t < want.size(); ++t) {
    const std::size_t i = t >= Lk - 1 ? t - (Lk - 1) : 0, j = t >= Lk - 1 ? 0 : Lk - 1 - t;
    want[t] = {rf::deberta_bucket(s, rf::deberta_relative(i, j, Lq, Lk)), rf::deberta_position_index(s, i, j, Lq, Lk)};
  }
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j) {
      auto what = [&] { return label(s) + " Lq=" + std::to_string(Lq) + " Lk=" + std::to_string(Lk) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
      const auto& [b, c] = want[i + Lk - 1 - j];
      if (auto f = check(claim, R::index, rm[i * Lk + j], Real(static_cast<double>(b)), what)) RC_FAIL(*f);
      if (auto f = check(claim, R::index, im[i * Lk + j], Real(static_cast<double>(c)), what)) RC_FAIL(*f);
      RC_ASSERT(im[i * Lk + j] >= 0 && im[i * Lk + j] < 2 * span);
    }
}

// DEBERTA-INDEX-2
POSENC_PROPERTY(Deberta, IndicesAreToeplitzAndShiftInvariant,
                {"DEBERTA-INDEX-2", "deberta",
                 "every entry depends only on i - j: entry (i, j) equals (i + t, j + t) inside the matrix (Toeplitz), "
                 "and a window of a larger call equals the smaller call of the same offsets — so the scores' "
                 "position terms are invariant when every position shifts by the same amount, checked up to |rel| "
                 "near 2^20 through bucket(rel + t) - bucket(rel) = 0 for the window's rel",
                 kConv, Oracle::identity, {R::index}}) {
  DebertaSpec s = *rc::gen::arbitrary<DebertaSpec>();
  s.heads = 1;
  s.head_dim = 1;
  const auto lens = lengths_gen(200);
  const std::size_t Lq = lens.first, Lk = lens.second;
  const DebertaPlan plan(s, zero_weights(s));
  count_case(claim);
  const auto m = relative_matrix(plan, Lq, Lk);
  for (std::size_t i = 1; i < Lq; ++i)
    for (std::size_t j = 1; j < Lk; ++j) RC_ASSERT(m[i * Lk + j] == m[(i - 1) * Lk + j - 1]);
  // a window of queries [a, a + lq) and keys [a, a + lk) of a call starting at 0 has the same rel = i - j as a call
  // of lq x lk: the same buckets
  const std::size_t a = *rc::gen::inRange<std::size_t>(0, std::min(Lq, Lk));
  const std::size_t lq = Lq - a, lk = Lk - a;
  const auto w = relative_matrix(plan, lq, lk);
  for (std::size_t i = 0; i < lq; ++i)
    for (std::size_t j = 0; j < lk; ++j) RC_ASSERT(w[i * lk + j] == m[(a + i) * Lk + a + j]);
  const std::int64_t far = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 20);
  for (std::int64_t rel : {far, -far, far / 3, -far / 7}) RC_ASSERT(plan.bucket(rel) == rf::deberta_bucket(s, rel));
}

// DEBERTA-INDEX-3
POSENC_CLAIM_TEST(Deberta, PresetMatricesMatchOracleAtTheSeams,
                  {"DEBERTA-INDEX-3", "deberta",
                   "for every preset the relative-position and c2p index matrices equal the oracle's at every hard "
                   "length (square, one query, and Lq = 2 Lk), and deberta-v3-base's row 0 of a 600-key call reads "
                   "0, -1, .., -128, then the log buckets to -255 at key 511 and beyond (HF: no clamp), while "
                   "the 2023 original's clamp (deberta-v3-base --clamp) stays at -255 from key 511 on",
                   kConv, Oracle::reference, {R::index}}) {
  // every preset, and deberta-v3-base with the 2023 original's clamp
  std::vector<std::pair<std::string, DebertaSpec>> specs;
  for (const auto& p : SpecTraits<DebertaSpec>::presets()) specs.emplace_back(std::string(p.name), p.spec);
  specs.emplace_back("deberta-v3-base --clamp", find_preset<DebertaSpec>("deberta-v3-base").spec);
  specs.back().second.clamp = true;
  for (const auto& [name, spec] : specs) {
    DebertaSpec s = spec;
    s.heads = 1;
    s.head_dim = 1;
    const DebertaPlan plan(s, zero_weights(s));
    for (std::size_t L : ca::kHardLengths)
      for (auto [Lq, Lk] : {std::pair{L, L}, std::pair{std::size_t{1}, L}, std::pair{2 * L, L}}) {
        const auto rm = relative_matrix(plan, Lq, Lk), im = index_matrix(plan, Lq, Lk);
        for (std::size_t i : sample_indices(Lq, 20, {63, 64, 65}))
          for (std::size_t j = 0; j < Lk; ++j) {
            ASSERT_EQ(rm[i * Lk + j], rf::deberta_bucket(s, rf::deberta_relative(i, j, Lq, Lk))) << name << " i=" << i << " j=" << j;
            ASSERT_EQ(im[i * Lk + j], rf::deberta_position_index(s, i, j, Lq, Lk)) << name << " i=" << i << " j=" << j;
          }
        count_case(claim);
      }
    tag(claim, name);
    const auto row = relative_matrix(plan, 1, 600);
    for (std::size_t j = 0; j <= 128; ++j) EXPECT_EQ(row[j], -static_cast<std::int32_t>(j)) << name << " key " << j;
    EXPECT_EQ(row[511], -255) << name;
    if (s.clamp) {
      for (std::size_t j = 511; j < 600; ++j) EXPECT_EQ(row[j], -255) << name << " key " << j;
    } else {
      EXPECT_LT(row[599], -255) << name << ": HF continues the log curve past max - 1";
    }
  }
}

// DEBERTA-SIGN-1
POSENC_CLAIM_TEST(Deberta, RelativePositionIsQueryMinusKey,
                  {"DEBERTA-SIGN-1", "deberta",
                   "rel = i - j (query minus key), the opposite of T5 / Shaw / NEZHA's j - i: without buckets the "
                   "matrix holds i - j exactly; every square matrix is minus its transpose (b is odd), so the two "
                   "sign conventions differ exactly by transposition; and posenc check deberta refuses the "
                   "transposed (key minus query) matrix",
                   kConv, Oracle::identity, {R::index, R::check_exact}}) {
  const DebertaSpec plain{.position_buckets = std::nullopt, .max_relative_positions = 512, .clamp = false,
                          .regime = DebertaRegime::exact, .c2p = true, .p2c = false, .heads = 1, .head_dim = 1};
  for (std::size_t L : {1, 2, 7, 65, 300}) {
    const auto m = relative_matrix(DebertaPlan(plain, zero_weights(plain)), L, L);
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j)
        ASSERT_EQ(m[i * L + j], static_cast<std::int32_t>(i) - static_cast<std::int32_t>(j)) << "L=" << L;
    count_case(claim);
  }
  for (const auto& p : SpecTraits<DebertaSpec>::presets()) {
    DebertaSpec s = p.spec;
    s.heads = 1;
    s.head_dim = 1;
    const std::size_t L = 700;
    const auto m = relative_matrix(DebertaPlan(s, zero_weights(s)), L, L);
    std::vector<double> tr(L * L);
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j) {
        ASSERT_EQ(m[i * L + j], -m[j * L + i]) << p.name;
        tr[i * L + j] = m[j * L + i];
      }
    EXPECT_FALSE(deberta::check_index(s, deberta::IndexInput{tr, L, L, deberta::IndexKind::relative, {}}).passed()) << p.name << ": the transpose passed";
    count_case(claim);
  }
}

// DEBERTA-REPRO-1
POSENC_PROPERTY(Deberta, ValuesIndependentOfThreadsAndStorePath,
                {"DEBERTA-REPRO-1", "deberta",
                 "index matrices and scores are bit-identical whatever posenc's thread count (1, 2, 3) and store "
                 "path (streaming stores on or off): the same gemm calls in the same order, rows written at fixed "
                 "block boundaries",
                 kConv, Oracle::identity, {R::index}}) {
  const DebertaSpec s = small_spec(16);
  const auto lens = lengths_gen(200);
  const std::size_t Lq = lens.first, Lk = lens.second;
  const DebertaPlan plan(s, random_weights(s));
  count_case(claim);
  const TableOptions one{.threads = 1, .streaming_stores = false},
      many{.threads = *rc::gen::inRange(2, 4), .streaming_stores = true};
  RC_ASSERT(relative_matrix(plan, Lq, Lk, one) == relative_matrix(plan, Lq, Lk, many));
  RC_ASSERT(index_matrix(plan, Lq, Lk, one) == index_matrix(plan, Lq, Lk, many));
  const std::size_t n = deberta_scores_size(s, Lq, Lk), d = s.head_dim, H = s.heads;
  const std::vector<double> qd = random_values(H * Lq * d), kd = random_values(H * Lk * d);
  const std::vector<float> q(qd.begin(), qd.end()), k(kd.begin(), kd.end());
  std::vector<float> a(n), b(n);
  plan.scores(std::span<const float>(q), std::span<const float>(k), Lq, Lk, {}, std::nullopt, std::span<float>(a), one);
  plan.scores(std::span<const float>(q), std::span<const float>(k), Lq, Lk, {}, std::nullopt, std::span<float>(b), many);
  RC_ASSERT(std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0);
}

// ---- scores -------------------------------------------------------------------------------------------------

// DEBERTA-SCORES-1
POSENC_PROPERTY(Deberta, ScoresMatchOracle,
                {"DEBERTA-SCORES-1", "deberta",
                 "scores = scale (<q_i, k_j> + [c2p] <q_i, K_r[c]> + [p2c] <k_j, Q_r[c]>) (default scale 1/sqrt(d (1 "
                 "+ c2p + p2c)), or a given one) through Q K_r^T, K Q_r^T, tiled gathers and a beta = 1 Q K^T gemm, "
                 "within the deberta.scores bound of the oracle's exact value, f32 and f64, any spec (c2p and p2c on "
                 "or off), independent Lq, Lk <= 300 (the 64-row and 256-key tile seams among them), 1 or 2 heads, "
                 "head_dim <= 64, with or without a key padding mask (-inf there)",
                 kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::masked}}) {
  const DebertaSpec s = small_spec(64);
  const auto lens = lengths_gen(300);
  const std::size_t Lq = lens.first, Lk = lens.second;
  const DebertaWeights w = random_weights(s);
  const std::optional<double> scale = *rc::gen::element<std::optional<double>>(std::nullopt, 1.0, -0.3);
  std::vector<std::uint8_t> mask;
  if (*rc::gen::inRange(0, 3) == 0) {
    mask.resize(Lk);
    for (auto& m : mask) m = *rc::gen::inRange(0, 4) == 0 ? 0 : 1;
  }
  const std::size_t H = s.heads, d = s.head_dim, n = deberta_scores_size(s, Lq, Lk);
  const std::vector<double> q = random_values(H * Lq * d), k = random_values(H * Lk * d);
  const DebertaPlan plan(s, w);
  const rf::DebertaOracle o(s, w);
  const std::vector<float> q32(q.begin(), q.end()), k32(k.begin(), k.end());
  std::vector<float> s32(n);
  std::vector<double> s64(n);
  plan.scores(std::span<const float>(q32), std::span<const float>(k32), Lq, Lk, mask, scale, std::span<float>(s32));
  plan.scores(std::span<const double>(q), std::span<const double>(k), Lq, Lk, mask, scale, std::span<double>(s64));
  tag(claim, std::string(s.c2p ? "c2p" : "") + (s.p2c ? " p2c" : "") + (mask.empty() ? "" : " masked"));
  count_case(claim);
  const Sink sink = claim_sink(claim);
  const double sc = std::fabs(scale ? *scale : 1 / std::sqrt(static_cast<double>(d * deberta_scale_factor(s))));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i : sample_indices(Lq, 12, {63, 64, 65}))
      for (std::size_t j : sample_indices(Lk, 24, {i, i + 1, 255, 256, 257})) {
        const std::size_t at = (h * Lq + i) * Lk + j;
        auto what = [&] {
          return label(s) + " Lq=" + std::to_string(Lq) + " Lk=" + std::to_string(Lk) + " h=" + std::to_string(h) +
                 " i=" + std::to_string(i) + " j=" + std::to_string(j);
        };
        if (!mask.empty() && mask[j] == 0) {
          masked_entry(sink, budget(R::masked), s32[at], what);
          masked_entry(sink, budget(R::masked), s64[at], what);
          continue;
        }
        const auto qi = std::span<const double>(q).subspan((h * Lq + i) * d, d);
        const auto kj = std::span<const double>(k).subspan((h * Lk + j) * d, d);
        const Real e = o.score(h, qi, kj, i, j, Lq, Lk, scale);
        const auto c = static_cast<std::size_t>(rf::deberta_position_index(s, i, j, Lq, Lk));
        const auto [qk, rel] = deberta_score_sums(s, w, h, qi, kj, c);
        emit(sink, R::scores_f32, s32[at], e, what, deberta_scores_bound(DType::f32, d, sc, qk, rel));
        emit(sink, R::scores_f64, s64[at], e, what, deberta_scores_bound(DType::f64, d, sc, qk, rel));
      }
}

// ---- check ------------------------------------------------------------------------------------------------

// DEBERTA-CHECK-1
POSENC_CLAIM_TEST(DebertaCheck, CheckPassesRightMatricesAndRefusesWrongOnes,
                  {"DEBERTA-CHECK-1", "deberta",
                   "posenc check deberta passes posenc's own relative-position and c2p index matrices (every preset, "
                   "square, 1 x L and Lq > Lk calls, both regimes) and refuses: the key-minus-query sign, the queries "
                   "aligned to the last keys, floor instead of ceil in the log bucket, a clamped matrix held to HF's "
                   "unclamped spec (and the reverse), and one entry off by one; in the hf regime it passes the "
                   "neighbouring bucket exactly at the distances the float32 envelope names",
                   "DESIGN.md (posenc check); " + kConv, Oracle::reference, {R::check_exact, R::check_envelope}}) {
  using deberta::IndexInput;
  using deberta::IndexKind;
  auto run = [](const DebertaSpec& s, const std::vector<std::int32_t>& m, std::size_t Lq, std::size_t Lk,
                IndexKind kind = IndexKind::relative) {
    const std::vector<double> v(m.begin(), m.end());
    return deberta::check_index(s, IndexInput{v, Lq, Lk, kind, {}});
  };
  std::vector<std::pair<std::string, DebertaSpec>> specs;
  for (const auto& p : SpecTraits<DebertaSpec>::presets()) specs.emplace_back(std::string(p.name), p.spec);
  specs.emplace_back("deberta-v3-base --clamp --regime exact", find_preset<DebertaSpec>("deberta-v3-base").spec);
  specs.back().second.clamp = true;
  specs.back().second.regime = DebertaRegime::exact;
  for (const auto& [name, spec] : specs) {
    DebertaSpec s = spec;
    s.heads = 1;
    s.head_dim = 1;
    const DebertaPlan plan(s, zero_weights(s));
    const bool emu = s.regime == DebertaRegime::hf;
    for (auto [Lq, Lk] : {std::pair<std::size_t, std::size_t>{700, 700}, {1, 700}, {40, 9}}) {
      check_verdict(claim, run(s, relative_matrix(plan, Lq, Lk), Lq, Lk), emu ? 1 : 0, name + " own relative");
      check_verdict(claim, run(s, index_matrix(plan, Lq, Lk), Lq, Lk, IndexKind::position), emu ? 1 : 0,
                    name + " own c2p index");
    }
    const std::size_t L = 700;
    const auto sq = relative_matrix(plan, L, L);
    std::vector<std::int32_t> bad(L * L);
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j) bad[i * L + j] = -sq[i * L + j];  // b(j - i): the T5 / Shaw sign
    EXPECT_FALSE(run(s, bad, L, L).passed()) << name << ": key minus query passed";
    // queries aligned to the last keys (the bias schemes' geometry): 10 queries of 700 keys
    std::vector<std::int32_t> last(10 * L);
    for (std::size_t i = 0; i < 10; ++i)
      for (std::size_t j = 0; j < L; ++j)
        last[i * L + j] = static_cast<std::int32_t>(plan.bucket(static_cast<std::int64_t>(L - 10 + i) - static_cast<std::int64_t>(j)));
    EXPECT_FALSE(run(s, last, 10, L).passed()) << name << ": queries at the last keys passed";
    // floor instead of ceil: mid + floor(v) away from the exact integers
    const auto mid = static_cast<std::int64_t>(*s.position_buckets / 2);
    std::vector<std::int32_t> fl = sq;
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j) {
        const std::int64_t rel = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j), a = std::llabs(rel);
        if (a <= mid || (s.clamp && a >= static_cast<std::int64_t>(s.max_relative_positions) - 1)) continue;
        const double v = std::log(static_cast<double>(a) / mid) / std::log(static_cast<double>(s.max_relative_positions - 1) / mid) * (mid - 1);
        if (std::fabs(v - std::round(v)) < 1e-6) continue;
        const auto lev = static_cast<std::int32_t>(mid + static_cast<std::int64_t>(std::floor(v)));
        fl[i * L + j] = rel < 0 ? -lev : lev;
      }
    EXPECT_FALSE(run(s, fl, L, L).passed()) << name << ": floor instead of ceil passed";
    std::vector<std::int32_t> one = sq;
    one[17 * L + 3] += 1;
    EXPECT_FALSE(run(s, one, L, L).passed()) << name << ": one entry off by one passed";
    DebertaSpec other = s;
    other.clamp = !s.clamp;
    const DebertaPlan op(other, zero_weights(other));
    EXPECT_FALSE(run(s, relative_matrix(op, L, L), L, L).passed()) << name << ": the other clamp passed";
    for (int i = 0; i < 5; ++i) count_case(claim);
  }
  // hf envelope: the neighbouring bucket passes exactly where hf_bucket_pair allows it, and fails elsewhere
  std::size_t allowed = 0;
  for (const ca::Buckets& c : ca::kConfigs) {
    const DebertaSpec s{.position_buckets = c.position_buckets, .max_relative_positions = c.max_relative_positions,
                        .clamp = false, .regime = DebertaRegime::hf, .c2p = true, .p2c = true, .heads = 1, .head_dim = 1};
    const std::size_t L = std::min<std::size_t>(4 * c.max_relative_positions, 3000);
    const auto row = relative_matrix(DebertaPlan(s, zero_weights(s)), L, 1);  // column 0: rel = i
    for (std::size_t a = 0; a < L; ++a) {
      const auto [b0, b1] = deberta::hf_bucket_pair(s, static_cast<std::int64_t>(a));
      if (b0 == b1) continue;
      ++allowed;
      std::vector<std::int32_t> m(row.begin(), row.end());
      m[a] = static_cast<std::int32_t>(m[a] == b0 ? b1 : b0);
      check_verdict(claim, run(s, m, L, 1), 1, describe(s) + " neighbour at a=" + std::to_string(a));
      EXPECT_FALSE(run(s, m, L, 1).references[0].passed()) << "the exact column passed a neighbour bucket";
    }
    // a neighbour where the envelope names none fails
    std::vector<std::int32_t> m(row.begin(), row.end());
    const std::size_t a = std::min<std::size_t>(L - 1, 3 * c.position_buckets / 4 + 1);
    if (static_cast<std::int64_t>(a) > static_cast<std::int64_t>(c.position_buckets / 2) &&
        deberta::hf_bucket_pair(s, static_cast<std::int64_t>(a)).first == deberta::hf_bucket_pair(s, static_cast<std::int64_t>(a)).second) {
      m[a] += 1;
      EXPECT_FALSE(run(s, m, L, 1).passed()) << describe(s) << ": a neighbour outside the envelope passed at a=" << a;
    }
    count_case(claim);
  }
  tag(claim, std::to_string(allowed) + " distances with an envelope neighbour");
}

// ---- errors -----------------------------------------------------------------------------------------------

// DEBERTA-ERR-1
POSENC_CLAIM_TEST(DebertaErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"DEBERTA-ERR-1", "deberta",
                   "bad specs (position_buckets 1, max_relative_positions <= mid + 1, a clamp without buckets), "
                   "tables (sizes, NaN, a table the spec does not use), relative positions beyond 2^31 - 1, lengths "
                   "0 or beyond 2^30, output sizes, q / k sizes, key masks and a NaN scale raise posenc::Error naming "
                   "the parameter, its value and the accepted range",
                   "DESIGN.md (errors)", Oracle::identity, {}}) {
  DebertaSpec s = find_preset<DebertaSpec>("deberta-v3-base").spec;
  s.heads = 2;
  s.head_dim = 4;
  const DebertaWeights w = zero_weights(s);
  const DebertaPlan plan(s, w);
  DebertaSpec b1 = s;
  b1.position_buckets = 1;
  expect_error(claim, "position_buckets", [&] { validate(b1); }, "position_buckets 1");
  DebertaSpec mp = s;
  mp.max_relative_positions = 129;
  expect_error(claim, "max_relative_positions", [&] { validate(mp); }, "max 129 with mid 128");
  DebertaSpec cl = s;
  cl.position_buckets = std::nullopt;
  cl.clamp = true;
  expect_error(claim, "clamp", [&] { validate(cl); }, "clamp without buckets");
  expect_error(claim, "pos_key", [&] { DebertaPlan(s, DebertaWeights{std::vector<double>(5, 0.0), w.pos_query}); }, "short pos_key");
  expect_error(claim, "pos_query", [&] { DebertaPlan(s, DebertaWeights{w.pos_key, {}}); }, "missing pos_query");
  expect_error(claim, "pos_key", [&] {
    DebertaWeights bad = w;
    bad.pos_key[3] = std::nan("");
    DebertaPlan(s, bad);
  }, "NaN pos_key entry");
  DebertaSpec c2p_only = s;
  c2p_only.p2c = false;
  expect_error(claim, "pos_query", [&] { DebertaPlan(c2p_only, w); }, "pos_query given with p2c = false");
  expect_error(claim, "rel", [&] { (void)plan.bucket(std::int64_t{1} << 31); }, "rel 2^31");
  expect_error(claim, "rel", [&] { (void)deberta_bucket(s, -(std::int64_t{1} << 31)); }, "rel -2^31");
  std::vector<std::int32_t> idx(30);
  expect_error(claim, "query_length", [&] { plan.relative_positions(0, 5, std::span<std::int32_t>(idx).first(0)); }, "Lq 0");
  expect_error(claim, "key_length", [&] { plan.position_indices(3, 0, std::span<std::int32_t>(idx).first(0)); }, "Lk 0");
  expect_error(claim, "key_length", [&] { plan.position_indices(1, (std::size_t{1} << 30) + 1, std::span<std::int32_t>(idx)); }, "Lk 2^30 + 1");
  expect_error(claim, "out", [&] { plan.relative_positions(2, 5, std::span<std::int32_t>(idx).first(9)); }, "short out");
  std::vector<float> q(2 * 3 * 4), k(2 * 5 * 4), out(2 * 3 * 5);
  expect_error(claim, "scale", [&] { plan.scores(std::span<const float>(q), k, 3, 5, {}, std::nan(""), std::span<float>(out)); }, "NaN scale");
  expect_error(claim, "q", [&] { plan.scores(std::span<const float>(q).first(5), k, 3, 5, {}, std::nullopt, std::span<float>(out)); }, "short q");
  expect_error(claim, "k", [&] { plan.scores(std::span<const float>(q), std::span<const float>(k).first(5), 3, 5, {}, std::nullopt, std::span<float>(out)); }, "short k");
  expect_error(claim, "scores", [&] { plan.scores(std::span<const float>(q), k, 3, 5, {}, std::nullopt, std::span<float>(out).first(3)); }, "short scores");
  const std::uint8_t bad[] = {1, 2, 1, 1, 1};
  expect_error(claim, "key_mask", [&] { plan.scores(std::span<const float>(q), k, 3, 5, bad, std::nullopt, std::span<float>(out)); }, "key mask entry 2");
  expect_error(claim, "key_mask", [&] { plan.scores(std::span<const float>(q), k, 3, 5, std::span<const std::uint8_t>(bad).first(4), std::nullopt, std::span<float>(out)); }, "short key mask");
  expect_error(claim, "preset", [&] { (void)find_preset<DebertaSpec>("deberta-nosuch"); }, "unknown preset");
}

// DEBERTA-IDENTIFY-1
POSENC_CLAIM_TEST(DebertaIdentify, NamesIndexMatricesAndReportsNearMissesAsNear,
                  {"DEBERTA-IDENTIFY-1", "deberta",
                   "posenc identify deberta names the convention of posenc's own index matrices (b(i - j) and the c2p "
                   "index; 200 x 200, where the log buckets show) of every preset with position_buckets in {256, 128, "
                   "none}, max_relative_positions in {512, 256}, with and without clamp, as a convention whose index "
                   "is the same bit for bit, read the same way; and reports a matrix with one entry off by one as no "
                   "match",
                   "issue 40 (identify for every scheme)", Oracle::reference, {R::check_exact, R::check_envelope}}) {
  const std::size_t L = 200;
  auto index_of = [&](const DebertaSpec& s, verify::deberta::IndexKind kind) {
    const auto span = static_cast<std::int64_t>(deberta_span(s));
    std::vector<double> by_rel(2 * L - 1), v(L * L);  // Toeplitz: one value per rel = i - j
    for (std::size_t t = 0; t < by_rel.size(); ++t) {
      const std::int64_t b = deberta_bucket(s, static_cast<std::int64_t>(t) - static_cast<std::int64_t>(L - 1));
      by_rel[t] = static_cast<double>(kind == verify::deberta::IndexKind::relative
                                          ? b
                                          : std::clamp(b + span, std::int64_t{0}, 2 * span - 1));
    }
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j) v[i * L + j] = by_rel[i + L - 1 - j];
    return v;
  };
  for (const auto& preset : SpecTraits<DebertaSpec>::presets())
    for (const std::optional<std::size_t> buckets : {std::optional<std::size_t>{256}, std::optional<std::size_t>{128},
                                                     std::optional<std::size_t>{}})
      for (std::size_t m : {std::size_t{512}, std::size_t{256}})
        for (bool clamp : {false, true})
          for (auto kind : {verify::deberta::IndexKind::relative, verify::deberta::IndexKind::position}) {
            DebertaSpec s = preset.spec;
            s.position_buckets = buckets, s.max_relative_positions = m, s.clamp = clamp;
            if (!is_valid(s)) continue;
            const std::string what = std::string(preset.name) + " " + to_json(s).dump() +
                                     (kind == verify::deberta::IndexKind::position ? " c2p" : " relative");
            const std::vector<double> v = index_of(s, kind);
            const auto id = verify::deberta::identify_index(v, L, L);
            ASSERT_TRUE(id.matched) << what << ": " << id.to_markdown();
            EXPECT_EQ(id.ranked.front().extra, kind) << what;
            EXPECT_EQ(index_of(id.ranked.front().spec, id.ranked.front().extra), v)
                << what << ": identified as " << to_json(id.ranked.front().spec).dump();
            count_case(claim);
            std::vector<double> off(v);
            off[L + 7] += 1;
            EXPECT_FALSE(verify::deberta::identify_index(off, L, L).matched) << what << " with one entry off";
            count_case(claim);
          }
}

}  // namespace claims_deberta

POSENC_SPEC_CONTRACT(posenc::DebertaSpec, Deberta, "DEBERTA")
