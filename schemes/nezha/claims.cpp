// NEZHA functional relative position claims (NEZHA-*), as RapidCheck properties and enumerated tests. Reference
// claims compare the fast path with the MPFR oracle (include/oracle/posenc/reference/nezha.hpp: NEZHA's table
// evaluated from its own formula, and the Shaw oracle over it); identity claims are exact equalities or laws checked
// on the oracle. Every tolerance comes from a budget row (nezha/budget.cpp; the Shaw rows for scores and outputs);
// every compared number goes through check() / emit().
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "schemes/nezha/budget.hpp"
#include "schemes/nezha/cases.hpp"
#include "schemes/nezha/check.hpp"
#include "posenc/error.hpp"
#include "posenc/nezha.hpp"
#include "posenc/reference/nezha.hpp"
#include "posenc/reference/sinusoidal.hpp"
#include "posenc/sinusoidal.hpp"
#include "schemes/shaw/budget.hpp"
#include "schemes/sinusoidal/budget.hpp"
#include "schemes/shaw/measure.hpp"
#include "support/bias_cases.hpp"
#include "support/bias_measure.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/spec_contract.hpp"

namespace claims_nezha {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace shaw = posenc::test::shaw;  // the measuring harness (the checker is verify::shaw)
namespace rf = posenc::reference;
namespace ca = posenc::cases::nezha;
using rf::Real;
using R = NezhaRow;

const std::string kConv =
    "CONVENTIONS.md §2.4; HF models/deprecated/nezha/modeling_nezha.py NezhaRelativePositionsEncoding, "
    "NezhaSelfAttention";

std::string label(const NezhaSpec& s) { return describe(s); }

// A spec with depth <= max_depth (the arbitrary spec's K is 1..160, depth even 2..96).
rc::Gen<NezhaSpec> spec_gen(std::size_t max_depth) {
  return rc::gen::exec([max_depth] {
    NezhaSpec s = *rc::gen::arbitrary<NezhaSpec>();
    s.depth = std::min(s.depth, max_depth);
    return s;
  });
}

template <class T>
std::vector<T> table_of(const NezhaPlan& plan, const TableOptions& o = {}) {
  std::vector<T> t(nezha_table_rows(plan.spec()) * plan.spec().depth);
  plan.table(std::span<T>(t), o);
  return t;
}

std::vector<std::int32_t> index_matrix(const NezhaPlan& plan, const BiasGeometry& g, const TableOptions& o = {}) {
  std::vector<std::int32_t> m(g.query_length * g.key_length);
  plan.indices(g, std::span<std::int32_t>(m), o);
  return m;
}

// ---- the table ----------------------------------------------------------------------------------------------

// NEZHA-TABLE-1
POSENC_PROPERTY(Nezha, TableMatchesOracle,
                {"NEZHA-TABLE-1", "nezha",
                 "NezhaPlan::table row r = sin/cos(r 10000^(-2t/depth)) in the interleaved slots 2t, 2t + 1 (the "
                 "sinusoid of the shifted index r = 0..2K): exact regime within nezha.table.exact.{f32,f64} of the "
                 "oracle's real value; hf regime the oracle's float32 number of HF's steps (within 1 ulp, "
                 "nezha.table.hf.ulp), in f32 and f64 output; rows 0, K, 2K and random ones, every column, any K "
                 "<= 160 and even depth <= 96, 1 to 3 threads",
                 kConv, Oracle::reference, {R::table_exact_f32, R::table_exact_f64, R::table_hf}}) {
  const NezhaSpec s = *spec_gen(96);
  const NezhaPlan plan(s);
  const TableOptions o{.threads = *rc::gen::inRange(1, 4)};
  const auto t32 = table_of<float>(plan, o);
  const auto t64 = table_of<double>(plan, o);
  const bool hf = s.regime == NezhaRegime::hf;
  tag(claim, hf ? "hf" : "exact");
  count_case(claim);
  const std::size_t rows = nezha_table_rows(s), d = s.depth, K = s.max_relative_position;
  for (std::size_t r : sample_indices(rows, 8, {0, K, 2 * K})) {
    for (std::size_t c = 0; c < d; ++c) {
      const Real e = rf::nezha_table_value(s, static_cast<std::int64_t>(r), c);
      auto what = [&] { return label(s) + " r=" + std::to_string(r) + " c=" + std::to_string(c); };
      const double y32 = t32[r * d + c], y64 = t64[r * d + c];
      if (auto f = check(claim, hf ? R::table_hf : R::table_exact_f32, y32, e, what)) RC_FAIL(*f);
      if (auto f = check(claim, hf ? R::table_hf : R::table_exact_f64, y64, e, what)) RC_FAIL(*f);
    }
  }
}

// NEZHA-TABLE-2
POSENC_PROPERTY(Nezha, HfTableIsWithinItsEnvelopeOfTheExactOne,
                {"NEZHA-TABLE-2", "nezha",
                 "HF's float32 table differs from the exact one by at most E = ulp32(T_hf)/2 + ulp32(a32)/2 + r |w32 "
                 "- w| (+ 2^-50 r w): the float32 frequency's error carried by r, the angle's and the entry's "
                 "rounding (sin and cos are 1-Lipschitz); checked on the oracle for every K <= 160 and even depth "
                 "<= 96 at rows 0, K, 2K and random ones, every column; at the nezha-cn-base preset the two tables "
                 "differ (HF's is not the exact one)",
                 kConv, Oracle::identity, {R::hf_vs_exact}}) {
  NezhaSpec s = *spec_gen(96);
  s.regime = NezhaRegime::hf;
  NezhaSpec e = s;
  e.regime = NezhaRegime::exact;
  const SinusoidalSpec sin_hf = nezha_sinusoidal_spec(s);
  count_case(claim);
  const std::size_t rows = nezha_table_rows(s), d = s.depth, K = s.max_relative_position;
  for (std::size_t t = 0; t < d / 2; ++t) {
    const double w = std::pow(10000.0, -2.0 * static_cast<double>(t) / static_cast<double>(d));
    const auto w32 = static_cast<float>(rf::round_to_double(rf::emulated_frequency(sin_hf, t)));
    for (std::size_t r : sample_indices(rows, 6, {0, K, 2 * K})) {
      const float a32 = static_cast<float>(r) * w32;
      for (std::size_t c : {2 * t, 2 * t + 1}) {
        const Real yh = rf::nezha_table_value(s, static_cast<std::int64_t>(r), c);
        const Real ye = rf::nezha_table_value(e, static_cast<std::int64_t>(r), c);
        const double y = rf::round_to_double(yh);
        auto what = [&] { return label(s) + " r=" + std::to_string(r) + " c=" + std::to_string(c); };
        if (auto f = check(claim, R::hf_vs_exact, y, ye, what,
                           nezha_hf_envelope(static_cast<std::int64_t>(r), w, w32, a32, y)))
          RC_FAIL(*f);
      }
    }
  }
}

// ---- indices ------------------------------------------------------------------------------------------------

// NEZHA-INDEX-1
POSENC_PROPERTY(Nezha, IndexMatricesMatchOracleAndTransposeTheOtherSign,
                {"NEZHA-INDEX-1", "nezha",
                 "NezhaPlan::indices equals r = clip(j - q_i, -K, K) + K from the oracle at every entry (the queries "
                 "the last Lq keys; HF's square call), index(u) equals it at every offset, every entry lies in [0, "
                 "2K]; for Lq = Lk the matrix is the transpose of the query-minus-key one (HF BERT relative_key's / "
                 "DeBERTa's sign) and equals 2K minus it: any K, Lq <= Lk <= 300, 1 to 3 threads",
                 kConv, Oracle::reference, {R::index}}) {
  const NezhaSpec s = *spec_gen(4);
  const GeometryCase gc = *geometry_gen(300, ca::kHardLengths);
  const BiasGeometry g = gc.view();
  const NezhaPlan plan(s);
  count_case(claim);
  const auto m = index_matrix(plan, g, {.threads = *rc::gen::inRange(1, 4)});
  const std::size_t Lq = g.query_length, Lk = g.key_length;
  const auto K2 = static_cast<std::int32_t>(2 * s.max_relative_position);
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j) {
      const std::int32_t v = m[i * Lk + j];
      if (auto f = check(claim, R::index, static_cast<double>(v), Real(static_cast<double>(rf::nezha_index(s, i, j, Lq, Lk))),
                         [&] { return label(s) + " " + geometry_label(g) + " i=" + std::to_string(i) + " j=" + std::to_string(j); }))
        RC_FAIL(*f);
      RC_ASSERT(v >= 0 && v <= K2);
      RC_ASSERT(plan.index(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(Lk - Lq + i)) == v);
    }
  const std::size_t L = Lk;
  const BiasGeometry sq{.query_length = L, .key_length = L};
  const auto a = index_matrix(plan, sq);
  ShawSpec other = nezha_shaw_spec(s);
  other.sign = RelativeSign::query_minus_key;
  std::vector<std::int32_t> b(L * L);
  ShawPlan(other, ShawWeights{std::vector<double>(shaw_table_rows(other) * other.head_dim, 0.0),
                              std::vector<double>(shaw_table_rows(other) * other.head_dim, 0.0)})
      .indices(sq, std::span<std::int32_t>(b));
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) {
      RC_ASSERT(a[i * L + j] == b[j * L + i]);
      RC_ASSERT(a[i * L + j] == K2 - b[i * L + j]);
    }
}

// ---- scores and outputs -------------------------------------------------------------------------------------

// How far the plan's table, as its f32 and f64 entry points multiply it, may be from the oracle's correctly rounded
// table (the drift terms of rows shaw.scores.* and shaw.output.*): under the hf regime both are the same float32
// values; under the exact regime the f64 table is within sinusoidal.table.exact.f64.scaled (in ulp_f64(1) =
// 2^-52) of the sinusoid and the oracle's within 2^-54 (|a| <= 1), and the f32 path rounds it once more (2^-25).
shaw::TableDrift table_drift(const NezhaSpec& s) {
  if (s.regime == NezhaRegime::hf) return {};
  const double t64 = std::ldexp(budget(SinusoidalRow::table_exact_f64_scaled).bound, -52) + std::ldexp(1.0, -54);
  return {t64 + std::ldexp(1.0, -25), t64};
}

// NEZHA-SCORES-1
POSENC_PROPERTY(Nezha, ScoresMatchOracle,
                {"NEZHA-SCORES-1", "nezha",
                 "scores = (<q_i, k_j> + <q_i, T[r(i, j)]>) scale (default 1/sqrt(depth), HF's division after the "
                 "sum) through the Shaw plan over the table (Q T^T, gathered rows, a beta = 1 Q K^T gemm), within "
                 "the shaw.scores bound of the oracle's exact value (its drift term: the plan's computed table against the "
                 "oracle's correctly rounded one), f32 and f64, both regimes, any K and geometry "
                 "(Lq <= Lk <= 300, causal or not, key masks), 1 or 2 heads, depth <= 64; masked entries -inf",
                 kConv, Oracle::reference, {ShawRow::scores_f32, ShawRow::scores_f64, ShawRow::masked}}) {
  const NezhaSpec s = *spec_gen(64);
  const GeometryCase gc = *geometry_gen(300, ca::kHardLengths);
  const BiasGeometry g = gc.view();
  const std::size_t H = *rc::gen::inRange<std::size_t>(1, 3);
  const std::optional<double> scale = *rc::gen::element<std::optional<double>>(std::nullopt, std::nullopt, 1.0);
  const shaw::Inputs in = shaw::random_inputs(s.depth, g, H);
  const NezhaPlan plan(s);
  const std::size_t n = shaw_scores_size(nezha_shaw_spec(s), H, g);
  const std::vector<float> q32(in.q.begin(), in.q.end()), k32(in.k.begin(), in.k.end());
  std::vector<float> s32(n);
  std::vector<double> s64(n);
  plan.scores(std::span<const float>(q32), std::span<const float>(k32), H, g, scale, std::span<float>(s32));
  plan.scores(std::span<const double>(in.q), std::span<const double>(in.k), H, g, scale, std::span<double>(s64));
  tag(claim, std::string(to_string(s.regime)) + (g.mask == BiasMask::causal ? " causal" : ""));
  count_case(claim);
  shaw::measure_scores(claim, rf::nezha_attention_oracle(s), plan.shaw().weights(), label(s), g, in, scale, s32, s64,
                       table_drift(s));
}

// NEZHA-OUTPUT-1
POSENC_PROPERTY(Nezha, AttentionOutputMatchesOracle,
                {"NEZHA-OUTPUT-1", "nezha",
                 "the attention output z_i = sum_j softmax(e)_ij (v_j + T[r(i, j)]) (HF: context + probs . "
                 "relations_values) from NezhaPlan::attend is within the shaw.output bound of the oracle's, f32 and "
                 "f64, both regimes, any K and geometry (Lq <= Lk <= 300, causal or not, key masks), 1 or 2 heads, "
                 "depth <= 32",
                 kConv, Oracle::reference, {ShawRow::output_f32, ShawRow::output_f64}}) {
  const NezhaSpec s = *spec_gen(32);
  const GeometryCase gc = *geometry_gen(300, ca::kHardLengths);
  const BiasGeometry g = gc.view();
  RC_PRE(!shaw::blind(g));
  const std::size_t H = *rc::gen::inRange<std::size_t>(1, 3);
  const shaw::Inputs in = shaw::random_inputs(s.depth, g, H);
  const NezhaPlan plan(s);
  const std::size_t n = H * g.query_length * s.depth;
  const std::vector<float> q32(in.q.begin(), in.q.end()), k32(in.k.begin(), in.k.end()), v32(in.v.begin(), in.v.end());
  std::vector<float> z32(n);
  std::vector<double> z64(n);
  plan.attend(std::span<const float>(q32), std::span<const float>(k32), std::span<const float>(v32), H, g,
              std::nullopt, std::span<float>(z32));
  plan.attend(std::span<const double>(in.q), std::span<const double>(in.k), std::span<const double>(in.v), H, g,
              std::nullopt, std::span<double>(z64));
  tag(claim, std::string(to_string(s.regime)) + (g.mask == BiasMask::causal ? " causal" : ""));
  count_case(claim);
  shaw::measure_outputs(claim, rf::nezha_attention_oracle(s), plan.shaw().weights(), label(s), g, in, std::nullopt,
                        z32, z64, 4, table_drift(s));
}

// ---- reproducibility ----------------------------------------------------------------------------------------

// NEZHA-REPRO-1
POSENC_PROPERTY(Nezha, ValuesIndependentOfThreadsAndStorePath,
                {"NEZHA-REPRO-1", "nezha",
                 "the table is bit-identical whatever the thread count (1, 2, 3), store path (streaming stores on "
                 "or off) and call form (plan or one-shot nezha_table), and equals the sinusoidal scheme's paper "
                 "table of positions 0..2K bit for bit; the attention's key and value tables are the f64 table; "
                 "index matrices and scores are bit-identical across thread counts and store paths",
                 kConv, Oracle::identity, {R::index}}) {
  const NezhaSpec s = *spec_gen(64);
  const NezhaPlan plan(s);
  const TableOptions one{.threads = 1, .streaming_stores = false},
      many{.threads = *rc::gen::inRange(2, 4), .streaming_stores = true};
  count_case(claim);
  const auto a32 = table_of<float>(plan, one), b32 = table_of<float>(plan, many);
  const auto a64 = table_of<double>(plan, one), b64 = table_of<double>(plan, many);
  RC_ASSERT(std::memcmp(a32.data(), b32.data(), a32.size() * sizeof(float)) == 0);
  RC_ASSERT(std::memcmp(a64.data(), b64.data(), a64.size() * sizeof(double)) == 0);
  std::vector<float> c32(a32.size());
  nezha_table(s, std::span<float>(c32));
  RC_ASSERT(std::memcmp(a32.data(), c32.data(), a32.size() * sizeof(float)) == 0);
  std::vector<float> sin32(a32.size());
  sinusoidal_table(nezha_sinusoidal_spec(s), 0, nezha_table_rows(s), std::span<float>(sin32));
  RC_ASSERT(std::memcmp(a32.data(), sin32.data(), a32.size() * sizeof(float)) == 0);
  RC_ASSERT(plan.shaw().weights().keys == a64);
  RC_ASSERT(plan.shaw().weights().values == a64);
  const GeometryCase gc = *geometry_gen(200, ca::kHardLengths);
  const BiasGeometry g = gc.view();
  RC_ASSERT(index_matrix(plan, g, one) == index_matrix(plan, g, many));
  const std::size_t H = 2, n = shaw_scores_size(nezha_shaw_spec(s), H, g);
  const shaw::Inputs in = shaw::random_inputs(s.depth, g, H);
  const std::vector<float> q(in.q.begin(), in.q.end()), k(in.k.begin(), in.k.end());
  std::vector<float> x(n), y(n);
  plan.scores(std::span<const float>(q), std::span<const float>(k), H, g, std::nullopt, std::span<float>(x), one);
  plan.scores(std::span<const float>(q), std::span<const float>(k), H, g, std::nullopt, std::span<float>(y), many);
  RC_ASSERT(std::memcmp(x.data(), y.data(), n * sizeof(float)) == 0);
}

// ---- check ------------------------------------------------------------------------------------------------

CheckReport run_check(const NezhaSpec& s, const std::vector<double>& t, std::size_t rows, DType stored) {
  return nezha::check_table(s, nezha::TableInput{t, rows, s.depth, stored, {}});
}

// NEZHA-CHECK-1
POSENC_CLAIM_TEST(NezhaCheck, CheckPassesRightTablesAndRefusesWrongOnes,
                  {"NEZHA-CHECK-1", "nezha",
                   "posenc check nezha passes posenc's own tables (exact in f32 and f64 under the exact regime, HF's "
                   "float32 table under the hf regime, also with entries a libm ulp away from correctly rounded) "
                   "and refuses HF's table held to the exact regime (the float32 frequencies' error), the sinusoid of "
                   "the signed distance r - K instead of the shifted index r, the halves layout, rows shifted by one "
                   "and one entry off by 1e-4",
                   "DESIGN.md (posenc check); " + kConv, Oracle::reference,
                   {SinusoidalRow::check_exact_f32, SinusoidalRow::check_exact_f64, SinusoidalRow::check_envelope}}) {
  const NezhaSpec hf = find_preset<NezhaSpec>("nezha-cn-base").spec;
  NezhaSpec ex = hf;
  ex.regime = NezhaRegime::exact;
  const std::size_t rows = nezha_table_rows(hf), d = hf.depth;
  const auto own_hf = table_of<float>(NezhaPlan(hf));
  const auto own_ex32 = table_of<float>(NezhaPlan(ex));
  const auto own_ex64 = table_of<double>(NezhaPlan(ex));
  const std::vector<double> hf64(own_hf.begin(), own_hf.end()), ex32(own_ex32.begin(), own_ex32.end());
  check_verdict(claim, run_check(ex, ex32, rows, DType::f32), 0, "own exact f32");
  check_verdict(claim, run_check(ex, own_ex64, rows, DType::f64), 0, "own exact f64");
  check_verdict(claim, run_check(hf, hf64, rows, DType::f32), 1, "own hf f32");
  // a real libm: a few entries one float ulp away from the correctly rounded emulation
  std::vector<double> libm = hf64;
  for (std::size_t at : {7 * d + 4, 77 * d + 3, 128 * d + 62})
    libm[at] = static_cast<double>(std::nextafter(static_cast<float>(libm[at]), 2.0f));
  check_verdict(claim, run_check(hf, libm, rows, DType::f32), 1, "hf with libm ulps");
  EXPECT_FALSE(run_check(ex, hf64, rows, DType::f32).passed()) << "HF's table passed the exact regime";
  // the sinusoid of the signed distance: row r holds PE(r - K)
  SinusoidalSpec sd = nezha_sinusoidal_spec(ex);
  sd.signed_positions = true;
  std::vector<double> signed_t(rows * d);
  std::vector<float> row(d);
  for (std::size_t r = 0; r < rows; ++r) {
    sinusoidal_table(sd, static_cast<std::int64_t>(r) - static_cast<std::int64_t>(hf.max_relative_position), 1,
                     std::span<float>(row));
    std::copy(row.begin(), row.end(), signed_t.begin() + static_cast<std::ptrdiff_t>(r * d));
  }
  EXPECT_FALSE(run_check(ex, signed_t, rows, DType::f32).passed()) << "the signed-distance table passed";
  SinusoidalSpec halves = nezha_sinusoidal_spec(ex);
  halves.layout = Layout::halves;
  std::vector<float> h32(rows * d);
  sinusoidal_table(halves, 0, rows, std::span<float>(h32));
  EXPECT_FALSE(run_check(ex, std::vector<double>(h32.begin(), h32.end()), rows, DType::f32).passed()) << "halves passed";
  std::vector<float> shifted(rows * d);
  sinusoidal_table(nezha_sinusoidal_spec(ex), 1, rows, std::span<float>(shifted));
  EXPECT_FALSE(run_check(ex, std::vector<double>(shifted.begin(), shifted.end()), rows, DType::f32).passed())
      << "rows shifted by one passed";
  std::vector<double> off = hf64;
  off[40 * d + 10] += 1e-4;
  EXPECT_FALSE(run_check(hf, off, rows, DType::f32).passed()) << "one entry off by 1e-4 passed";
  for (int i = 0; i < 9; ++i) count_case(claim);
}

// ---- errors -----------------------------------------------------------------------------------------------

// NEZHA-ERR-1
POSENC_CLAIM_TEST(NezhaErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"NEZHA-ERR-1", "nezha",
                   "bad specs (odd or zero depth, K = 0 or beyond 2^20), short table outputs, Lq > Lk, offsets beyond "
                   "2^31 - 1, short q/k/v and outputs, and a checked table of the wrong shape raise posenc::Error "
                   "naming the parameter, its value and the accepted range",
                   "DESIGN.md (errors)", Oracle::identity, {}}) {
  const NezhaSpec s{.max_relative_position = 4, .depth = 4, .regime = NezhaRegime::exact};
  const NezhaPlan plan(s);
  expect_error(claim, "depth", [&] { NezhaPlan(NezhaSpec{.max_relative_position = 4, .depth = 5}); }, "odd depth");
  expect_error(claim, "depth", [&] { NezhaPlan(NezhaSpec{.max_relative_position = 4, .depth = 0}); }, "depth 0");
  expect_error(claim, "max_relative_position", [&] { NezhaPlan(NezhaSpec{.max_relative_position = 0, .depth = 4}); }, "K = 0");
  expect_error(claim, "max_relative_position", [&] {
    NezhaPlan(NezhaSpec{.max_relative_position = kNezhaMaxRelative + 1, .depth = 4});
  }, "K = 2^20 + 1");
  std::vector<float> t(9 * 4);
  expect_error(claim, "out.size()", [&] { plan.table(std::span<float>(t).first(35)); }, "short table");
  std::vector<std::int32_t> idx(30);
  expect_error(claim, "query_length", [&] { plan.indices({.query_length = 6, .key_length = 5}, std::span<std::int32_t>(idx)); }, "Lq > Lk");
  expect_error(claim, "u", [&] { (void)plan.index(std::int64_t{1} << 31); }, "offset 2^31");
  std::vector<float> q(3 * 4), k(5 * 4), v(5 * 4), out(3 * 5), z(3 * 4);
  const BiasGeometry g{.query_length = 3, .key_length = 5};
  expect_error(claim, "q", [&] { plan.scores(std::span<const float>(q).first(5), k, 1, g, std::nullopt, std::span<float>(out)); }, "short q");
  expect_error(claim, "scores", [&] { plan.scores(std::span<const float>(q), k, 1, g, std::nullopt, std::span<float>(out).first(3)); }, "short scores");
  expect_error(claim, "v", [&] { plan.attend(std::span<const float>(q), k, std::span<const float>(v).first(3), 1, g, std::nullopt, std::span<float>(z)); }, "short v");
  const std::vector<double> tab(9 * 4, 0.0);
  expect_error(claim, "max_relative_position", [&] { nezha::check_table(s, nezha::TableInput{tab, 8, 4, DType::f32, {}}); }, "8 rows for K = 4");
  expect_error(claim, "depth", [&] { nezha::check_table(s, nezha::TableInput{tab, 9, 3, DType::f32, {}}); }, "3 columns for depth 4");
  expect_error(claim, "preset", [&] { (void)find_preset<NezhaSpec>("nezha-nosuch"); }, "unknown preset");
}

}  // namespace claims_nezha

POSENC_SPEC_CONTRACT(posenc::NezhaSpec, Nezha, "NEZHA")
