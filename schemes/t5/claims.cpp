// T5's claims (T5-*), as RapidCheck properties and enumerated tests. Reference claims compare the fast path with the
// MPFR/GMP oracle (include/oracle/posenc/reference/t5.hpp, written from the definition independently of lib/);
// identity claims are exact equalities (buckets are integers, bias entries the table's values). Every tolerance
// comes from budget.cpp; every compared number goes through check().
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/t5.hpp"
#include "posenc/t5.hpp"
#include "support/bias_cases.hpp"
#include "support/bias_measure.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/spec_contract.hpp"
#include "schemes/t5/budget.hpp"
#include "schemes/t5/cases.hpp"
#include "schemes/t5/check.hpp"

namespace claims_t5 {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace rf = posenc::reference;
namespace ca = posenc::cases::t5;
using rf::Real;
using R = T5Row;

const std::string kConv = "CONVENTIONS.md §2.7, §3 item 5; HF transformers models/t5/modeling_t5.py";

T5Spec config_spec(const ca::Buckets& c, bool bidirectional, T5Regime regime, std::size_t heads = 1) {
  T5Spec s{.bidirectional = bidirectional, .num_buckets = c.num_buckets, .max_distance = c.max_distance,
           .heads = heads, .regime = regime};
  validate(s);
  return s;
}

// A table of distinct values (bucket b, head h -> b + h / 64 + 1/1024: every entry tells its bucket and head).
T5Weights distinct_table(const T5Spec& s) {
  T5Weights w;
  for (std::size_t b = 0; b < s.num_buckets; ++b)
    for (std::size_t h = 0; h < s.heads; ++h) w.table.push_back(static_cast<double>(b) + static_cast<double>(h) / 64 + 1.0 / 1024);
  return w;
}

// Random float32 table values (a float32 checkpoint), some large.
T5Weights random_table(const T5Spec& s) {
  T5Weights w;
  for (std::size_t i = 0; i < s.num_buckets * s.heads; ++i)
    w.table.push_back(static_cast<float>(*rc::gen::inRange(-1000000, 1000000) * 1e-5));
  return w;
}

std::string label(const T5Spec& s) { return describe(s); }

rc::Gen<T5Spec> spec_gen() {
  return rc::gen::map(rc::gen::arbitrary<T5Spec>(), [](T5Spec s) {
    s.heads = std::min<std::size_t>(s.heads, 8);
    return s;
  });
}

// The integer bucket against the oracle's, under the regime's row.
std::optional<std::string> check_bucket(const Claim& claim, const T5Spec& s, std::int64_t r, std::int64_t got) {
  const std::int64_t want = rf::t5_bucket(s, r);
  return check(claim, s.regime == T5Regime::exact ? R::bucket_exact : R::bucket_hf, static_cast<double>(got),
               Real(static_cast<double>(want)), [&] { return label(s) + " r=" + std::to_string(r); });
}

// ---- buckets ------------------------------------------------------------------------------------------------

// T5-BUCKET-1
POSENC_CLAIM_TEST(T5, BucketsMatchOracleOverEveryDistance,
                  {"T5-BUCKET-1", "t5",
                   "T5Plan::bucket equals the oracle's bucket (exact: decided in exact arithmetic; hf: HF's float32 "
                   "steps) for every integer r in [-4 max_distance, 4 max_distance] for (num_buckets, max_distance) "
                   "in (32,128), (32,256), (64,128), (128,1024), (8,16), (16,64), (64,256), (128,128) and the four "
                   "where the regimes differ, (34,27), (96,81), (19,25), (31,532), both directions, both regimes",
                   kConv, Oracle::reference, {R::bucket_exact, R::bucket_hf}}) {
  for (const ca::Buckets& c : ca::kConfigs)
    for (bool bi : {true, false})
      for (T5Regime regime : {T5Regime::exact, T5Regime::hf}) {
        const T5Spec s = config_spec(c, bi, regime);
        const T5Plan plan(s, distinct_table(s));
        for (std::int64_t r = -4 * c.max_distance; r <= 4 * c.max_distance; ++r)
          if (auto f = check_bucket(claim, s, r, plan.bucket(r))) FAIL() << *f;
        count_case(claim);
        tag(claim, std::string(bi ? "bidirectional " : "unidirectional ") + std::string(to_string(regime)));
      }
}

// T5-BUCKET-2
POSENC_PROPERTY(T5, BucketsAreBoundedMonotoneAndMatchTheOracle,
                {"T5-BUCKET-2", "t5",
                 "for any spec and r (|r| < 2^31): the bucket equals the oracle's; it lies in [0, num_buckets), is 0 "
                 "at r = 0, non-decreasing in the distance on each side, the last bucket of its side from "
                 "max_distance on, never num_buckets / 2 in bidirectional mode (positive offsets start at nb/2 + 1), "
                 "and 0 for every key after the query in unidirectional mode",
                 kConv, Oracle::reference, {R::bucket_exact, R::bucket_hf}}) {
  const T5Spec s = *spec_gen();
  const T5Plan plan(s, distinct_table(s));
  const std::int64_t md = s.max_distance, nb = static_cast<std::int64_t>(s.num_buckets);
  const std::int64_t n = static_cast<std::int64_t>(t5_side_buckets(s));
  const std::int64_t r = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(-3 * md, 3 * md + 1),
                                         rc::gen::inRange<std::int64_t>(-(std::int64_t{1} << 31) + 1, std::int64_t{1} << 31));
  tag(claim, std::string(s.bidirectional ? "bidirectional " : "unidirectional ") + std::string(to_string(s.regime)));
  count_case(claim);
  const std::int64_t b = plan.bucket(r);
  if (auto f = check_bucket(claim, s, r, b)) RC_FAIL(*f);
  RC_ASSERT(b >= 0 && b < nb);
  RC_ASSERT(plan.bucket(0) == 0);
  if (s.bidirectional) RC_ASSERT(b != nb / 2);
  if (!s.bidirectional && r > 0) RC_ASSERT(b == 0);
  const std::int64_t a = std::llabs(r), side = s.bidirectional && r > 0 ? n : 0;
  if (a >= md && (s.bidirectional || r < 0)) RC_ASSERT(b == side + n - 1);
  // monotone: one step further from the query on the same side never lowers the bucket
  if (a < (std::int64_t{1} << 31) - 1 && r != 0) RC_ASSERT(plan.bucket(r + (r > 0 ? 1 : -1)) >= b);
}

// T5-BUCKET-3
POSENC_CLAIM_TEST(T5, ExactAndFloat32BucketsDifferOnlyAtListedDistances,
                  {"T5-BUCKET-3", "t5",
                   "exact and HF float32 buckets: (32,128) bidirectional puts r = 16, 32, 64 (where ln(a/8)/ln 16 * 8 "
                   "is exactly 2, 4, 6) in buckets 10, 12, 14 (and 26, 28, 30 for +r) in both regimes, every a >= 128 "
                   "in 15 / 31; for every configuration of T5-BUCKET-1 the distances where the regimes differ are "
                   "listed (tags) and each is one where the HF log's float32 value z lies within the envelope of an "
                   "integer (T5-CHECK-1's), so a real run's bucket there is either",
                   kConv, Oracle::reference, {R::bucket_exact, R::bucket_hf}}) {
  {
    const T5Spec ex = config_spec({32, 128}, true, T5Regime::exact), hf = config_spec({32, 128}, true, T5Regime::hf);
    const T5Plan pe(ex, distinct_table(ex)), ph(hf, distinct_table(hf));
    const std::map<std::int64_t, std::int64_t> want{{16, 10}, {32, 12}, {64, 14}, {128, 15}, {1000, 15}};
    for (const auto& [a, b] : want) {
      EXPECT_EQ(pe.bucket(-a), b) << "exact, r = -" << a;
      EXPECT_EQ(ph.bucket(-a), b) << "hf, r = -" << a;
      EXPECT_EQ(pe.bucket(a), b + 16) << "exact, r = " << a;
      EXPECT_EQ(ph.bucket(a), b + 16) << "hf, r = " << a;
      if (auto f = check_bucket(claim, hf, -a, ph.bucket(-a))) ADD_FAILURE() << *f;
      count_case(claim);
    }
  }
  for (const ca::Buckets& c : ca::kConfigs)
    for (bool bi : {true, false}) {
      const T5Spec ex = config_spec(c, bi, T5Regime::exact), hf = config_spec(c, bi, T5Regime::hf);
      const T5Plan pe(ex, distinct_table(ex)), ph(hf, distinct_table(hf));
      std::string diff;
      for (std::int64_t a = 0; a <= 4 * c.max_distance; ++a) {
        const std::int64_t r = -a;  // the side every direction has
        if (pe.bucket(r) == ph.bucket(r)) continue;
        diff += (diff.empty() ? "" : ",") + std::to_string(a);
        const auto [b0, b1] = t5::hf_bucket_pair(hf, r);
        EXPECT_TRUE(pe.bucket(r) == b0 || pe.bucket(r) == b1)
            << label(hf) << " a = " << a << ": the exact bucket " << pe.bucket(r) << " is outside the envelope pair ("
            << b0 << ", " << b1 << ")";
        count_case(claim);
      }
      tag(claim, "(" + std::to_string(c.num_buckets) + "," + std::to_string(c.max_distance) + ") " +
                     (bi ? "bi" : "uni") + ": " + (diff.empty() ? std::string("none") : "a = " + diff));
    }
}

// ---- bias matrices ------------------------------------------------------------------------------------------

// The plan's bias (f32 and f64) and bucket matrices of a geometry against the oracle: bucket(j - q_i) and
// table[bucket][h] rounded once; -inf where the mask puts it.
void measure_matrices(const Claim& claim, const T5Spec& s, const T5Weights& w, const BiasGeometry& g, int threads) {
  const T5Plan plan(s, w);
  const rf::T5Oracle o(s, w);
  const std::size_t H = s.heads, Lq = g.query_length, Lk = g.key_length, n = t5_bias_size(s, g);
  std::vector<float> b32(n);
  std::vector<double> b64(n);
  std::vector<std::int32_t> idx(Lq * Lk);
  const TableOptions opt{.threads = threads};
  plan.bias(g, std::span<float>(b32), opt);
  plan.bias(g, std::span<double>(b64), opt);
  plan.buckets(g, std::span<std::int32_t>(idx), opt);
  const bool causal = g.mask == BiasMask::causal;
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j) {
      const std::size_t qi = Lk - Lq + i;
      const std::int64_t r = rf::t5_relative_position(i, j, Lq, Lk);
      auto where = [&] { return label(s) + " Lq=" + std::to_string(Lq) + " Lk=" + std::to_string(Lk) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
      if (auto f = check(claim, s.regime == T5Regime::exact ? R::bucket_exact : R::bucket_hf,
                         static_cast<double>(idx[i * Lk + j]), Real(static_cast<double>(o.bucket(r))), where))
        RC_FAIL(*f);
      const bool masked = causal && (j > qi || (!g.key_mask.empty() && g.key_mask[j] == 0));
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t at = (h * Lq + i) * Lk + j;
        if (masked) {  // -inf exactly (the identity row's masked entries)
          RC_ASSERT(b64[at] == -std::numeric_limits<double>::infinity());
          RC_ASSERT(b32[at] == -std::numeric_limits<float>::infinity());
          continue;
        }
        const double want = o.bias(h, i, j, Lq, Lk);
        if (auto f = check(claim, R::bias_identity, b64[at], Real(want), where)) RC_FAIL(*f);
        if (auto f = check(claim, R::bias_identity, b32[at], Real(static_cast<double>(static_cast<float>(want))), where))
          RC_FAIL(*f);
      }
    }
}

// T5-BIAS-1
POSENC_PROPERTY(T5, BiasAndBucketMatricesMatchOracle,
                {"T5-BIAS-1", "t5",
                 "bias matrices [heads][Lq][Lk] (f32, f64) hold table[bucket(j - q_i)][h] rounded once, the queries "
                 "the last Lq keys, -inf where the causal / padding mask puts it; bucket matrices [Lq][Lk] hold "
                 "bucket(j - q_i); any spec, geometry (Lq <= Lk <= 1000, decoder steps, key masks), 1 or 2 threads",
                 kConv, Oracle::reference, {R::bucket_exact, R::bucket_hf, R::bias_identity}}) {
  const T5Spec s = *spec_gen();
  const GeometryCase gc = *geometry_gen(300, ca::kHardLengths);
  tag(claim, std::string(to_string(s.regime)) + (gc.mask == BiasMask::causal ? " causal" : " none"));
  count_case(claim);
  measure_matrices(claim, s, random_table(s), gc.view(), *rc::gen::inRange(1, 3));
}

// T5-DECODE-1
POSENC_PROPERTY(T5, DecoderStepRowIsTheLastRowOfTheFullMatrix,
                {"T5-DECODE-1", "t5",
                 "a decoder step (query_length 1 with key_length L, HF's compute_bias at cache position L - 1) gives "
                 "exactly the last row of the L x L matrix: buckets and bias (f32), with and without the causal mask",
                 kConv, Oracle::identity, {R::bias_identity}}) {
  const T5Spec s = *spec_gen();
  const T5Weights w = random_table(s);
  const T5Plan plan(s, w);
  const std::size_t L = *rc::gen::inRange<std::size_t>(1, 400), H = s.heads;
  const BiasMask mask = *rc::gen::element(BiasMask::none, BiasMask::causal);
  std::vector<float> full(H * L * L), step(H * L);
  std::vector<std::int32_t> bf(L * L), bs(L);
  plan.bias({.query_length = L, .key_length = L, .mask = mask}, std::span<float>(full));
  plan.bias({.query_length = 1, .key_length = L, .mask = mask}, std::span<float>(step));
  plan.buckets({.query_length = L, .key_length = L}, std::span<std::int32_t>(bf));
  plan.buckets({.query_length = 1, .key_length = L}, std::span<std::int32_t>(bs));
  count_case(claim);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t j = 0; j < L; ++j) {
      const float a = full[(h * L + L - 1) * L + j], b = step[h * L + j];
      if (auto f = check(claim, R::bias_identity, b, Real(static_cast<double>(a)),
                         [&] { return label(s) + " L=" + std::to_string(L) + " h=" + std::to_string(h) + " j=" + std::to_string(j); }))
        RC_FAIL(*f);
    }
  for (std::size_t j = 0; j < L; ++j) RC_ASSERT(bs[j] == bf[(L - 1) * L + j]);
}

// T5-REPRO-1
POSENC_PROPERTY(T5, ValuesIndependentOfThreadsAndStorePath,
                {"T5-REPRO-1", "t5",
                 "a bias or bucket matrix is bit-identical whatever the thread count (1, 2, 3) and store path "
                 "(streaming stores on or off), and every entry depends only on (h, j - q_i): the Toeplitz structure",
                 kConv, Oracle::identity, {R::bias_identity}}) {
  const T5Spec s = *spec_gen();
  const T5Plan plan(s, random_table(s));
  const std::size_t Lk = *rc::gen::inRange<std::size_t>(1, 200), Lq = *rc::gen::inRange<std::size_t>(1, Lk + 1);
  const BiasGeometry g{.query_length = Lq, .key_length = Lk};
  const std::size_t n = t5_bias_size(s, g);
  std::vector<float> a(n), b(n);
  plan.bias(g, std::span<float>(a), {.threads = 1, .streaming_stores = false});
  plan.bias(g, std::span<float>(b), {.threads = *rc::gen::inRange(2, 4), .streaming_stores = true});
  count_case(claim);
  RC_ASSERT(std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0);
  for (std::size_t h = 0; h < s.heads; ++h)
    for (std::size_t i = 1; i < Lq; ++i)
      for (std::size_t j = 1; j < Lk; ++j)  // (i, j) and (i - 1, j - 1) have the same offset
        RC_ASSERT(std::memcmp(&a[(h * Lq + i) * Lk + j], &a[(h * Lq + i - 1) * Lk + j - 1], sizeof(float)) == 0);
}

// ---- scores -------------------------------------------------------------------------------------------------

// T5-SCORES-1
POSENC_PROPERTY(T5, FusedScoresMatchOracle,
                {"T5-SCORES-1", "t5",
                 "scores = scale <q_i, k_j> + table[bucket(j - q_i)][h] (T5 uses scale 1: no 1/sqrt(d)) through the "
                 "bias rows and a beta = 1 gemm, within the fused-scores bound of the exact value, f32 and f64, any "
                 "spec and geometry, head_dim 1..128; masked entries -inf",
                 kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::bias_identity}}) {
  const T5Spec s = *spec_gen();
  const T5Weights w = random_table(s);
  const GeometryCase gc = *geometry_gen(150, ca::kHardLengths);
  const BiasGeometry g = gc.view();
  const std::size_t d = *rc::gen::element<std::size_t>(1, 7, 32, 64, 128);
  const double scale = *rc::gen::element(1.0, 0.125);
  const std::size_t H = s.heads, Lq = g.query_length, Lk = g.key_length;
  std::vector<double> q(H * Lq * d), k(H * Lk * d);
  for (double& v : q) v = static_cast<float>(*rc::gen::inRange(-1000, 1000) / 997.0);
  for (double& v : k) v = static_cast<float>(*rc::gen::inRange(-1000, 1000) / 991.0);
  const T5Plan plan(s, w);
  const rf::T5Oracle o(s, w);
  count_case(claim);
  auto dot = [&](std::size_t h, std::size_t i, std::size_t j, std::span<const double> qh, std::span<const double> kh) {
    return Real((o.score(h, qh, kh, i, j, Lq, Lk) - Real(o.bias(h, i, j, Lq, Lk))) * scale);  // scale: a power of 2
  };
  measure_plan_scores(plan, t5_bias_size(s, g), claim_sink(claim), budget(R::scores_f32), budget(R::scores_f64),
                      budget(R::bias_identity), H, g, d, q, k, scale, dot, [&] { return label(s); }, 40, 40);
}

// ---- check ------------------------------------------------------------------------------------------------

// T5-CHECK-1
POSENC_CLAIM_TEST(T5Check, CheckPassesRightBiasesAndRefusesWrongOnes,
                  {"T5-CHECK-1", "t5",
                   "posenc check t5 passes posenc's own bias tensors (exact and hf regimes; f32 and f64), and in the "
                   "hf regime one built from the exact buckets ((34, 27) differs at a = 12, 18: within the envelope of a torch log "
                   "2 ulps off); it refuses the transposed tensor (relative position i - j: DeBERTa's / BERT's sign "
                   "convention), the other direction's buckets, and one entry moved to another bucket's value",
                   "DESIGN.md (posenc check); " + kConv, Oracle::reference, {R::check_exact, R::check_envelope}}) {
  for (const ca::Buckets& c : {ca::Buckets{32, 128}, ca::Buckets{8, 16}, ca::Buckets{34, 27}})
    for (bool bi : {true, false})
      for (T5Regime regime : {T5Regime::exact, T5Regime::hf}) {
        const T5Spec s = config_spec(c, bi, regime, 2);
        const T5Weights w = distinct_table(s);
        const std::size_t L = 300;
        const BiasGeometry g{.query_length = L, .key_length = L};
        std::vector<double> v(2 * L * L);
        T5Plan(s, w).bias(g, std::span<double>(v));
        auto run = [&](const std::vector<double>& x, DType t) {
          return t5::check_bias(s, w, t5::BiasInput{x, 2, L, L, {}, t, {}});
        };
        const std::string what = label(s);
        check_verdict(claim, run(v, DType::f64), regime == T5Regime::exact ? 0 : 1, what + " own f64");
        std::vector<double> v32(v.begin(), v.end());
        for (double& x : v32) x = static_cast<float>(x);
        check_verdict(claim, run(v32, DType::f32), regime == T5Regime::exact ? 0 : 1, what + " own f32");
        if (regime == T5Regime::hf) {
          T5Spec ex = s;
          ex.regime = T5Regime::exact;
          std::vector<double> ve(v.size());
          T5Plan(ex, w).bias(g, std::span<double>(ve));
          check_verdict(claim, run(ve, DType::f64), 1, what + " exact buckets held to hf");
        }
        std::vector<double> tr(v.size());  // transposed: bias of i - j
        for (std::size_t h = 0; h < 2; ++h)
          for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < L; ++j) tr[(h * L + i) * L + j] = v[(h * L + j) * L + i];
        EXPECT_FALSE(run(tr, DType::f64).passed()) << what << ": the transposed tensor passed";
        T5Spec other = s;
        other.bidirectional = !bi;
        if (is_valid(other)) {
          std::vector<double> vo(v.size());
          T5Plan(other, w).bias(g, std::span<double>(vo));
          EXPECT_FALSE(run(vo, DType::f64).passed()) << what << ": the other direction's buckets passed";
        }
        std::vector<double> one = v;
        one[(1 * L + 200) * L + 3] += 1.0;  // another bucket's value (distinct_table: buckets differ by 1)
        EXPECT_FALSE(run(one, DType::f64).passed()) << what << ": one entry moved to another bucket passed";
        for (int i = 0; i < 4; ++i) count_case(claim);
      }
}

// ---- errors -----------------------------------------------------------------------------------------------

// T5-ERR-1
POSENC_CLAIM_TEST(T5Errors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"T5-ERR-1", "t5",
                   "bad specs, tables, relative positions and call arguments (lengths, key masks, output sizes, masks, "
                   "scores with a bad head_dim, scale or q/k size; unknown presets) raise posenc::Error naming the "
                   "parameter, its value and the accepted range",
                   "DESIGN.md (errors)", Oracle::identity, {}}) {
  const T5Spec s = t5_preset("t5-encoder", 3);
  const T5Weights w = distinct_table(s);
  const T5Plan plan(s, w);
  expect_bias_call_errors(claim, plan, 3);
  expect_error(claim, "table", [&] { T5Plan(s, T5Weights{std::vector<double>(5, 0.0)}); }, "short table");
  expect_error(claim, "table", [&] {
    T5Weights bad = w;
    bad.table[7] = std::nan("");
    T5Plan(s, bad);
  }, "NaN entry");
  expect_error(claim, "r", [&] { (void)plan.bucket(std::int64_t{1} << 31); }, "r = 2^31");
  expect_error(claim, "r", [&] { (void)plan.bucket(-(std::int64_t{1} << 31)); }, "r = -2^31");
  std::vector<std::int32_t> idx(4);
  expect_error(claim, "out", [&] { plan.buckets({.query_length = 2, .key_length = 3}, std::span<std::int32_t>(idx)); },
               "short bucket output");
  expect_error(claim, "preset", [&] { (void)t5_preset("t5-nosuch", 4); }, "unknown preset");
  expect_error(claim, "heads", [&] { (void)t5_preset("t5-decoder", 0); }, "0 heads");
  T5Spec md = s;
  md.max_distance = 8;  // max_exact is 8 for 32 buckets bidirectional
  expect_error(claim, "max_distance", [&] { validate(md); }, "max_distance = max_exact");
}

}  // namespace claims_t5

POSENC_SPEC_CONTRACT(posenc::T5Spec, T5, "T5")
