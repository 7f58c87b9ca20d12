// The sinusoidal encodings' claims (claims.cpp ledger SIN-*), as RapidCheck properties and exhaustive
// tests. Oracle kinds (DESIGN.md §4): identity laws are checked on the MPFR oracle at 256 bits (budget row
// sinusoidal.identity.oracle) and on the fast path within its budget rows; reference claims compare the
// fast path with the oracle; differential claims compare the BLAS path with the direct path.
// Every tolerance comes from budget.cpp; every compared number goes through check()/record(), which
// prints the whole case on failure and feeds the proofs JSON.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/linalg.hpp"
#include "posenc/reference/sinusoidal.hpp"
#include "posenc/sinusoidal.hpp"
#include "schemes/sinusoidal/budget.hpp"
#include "schemes/sinusoidal/cases.hpp"
#include "schemes/sinusoidal/check.hpp"
#include "schemes/sinusoidal/generators.hpp"
#include "schemes/sinusoidal/measure.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/simd_targets.hpp"
#include "support/spec_contract.hpp"

namespace claims_sinusoidal {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace rf = posenc::reference;
using rf::Real;

constexpr unsigned kBits = rf::kDefaultBits;
constexpr DType kDTypes[] = {DType::f32, DType::f64};

using R = SinusoidalRow;

const std::string kS000 = "seed 000 (shared/seeds/000_97706ee09792f023.txt)";
const std::string kS001 = "seed 001 (shared/seeds/001_3d593460a3f44dd1.txt)";
const std::string kS002 = "seed 002 (shared/seeds/002_de10b0c57a03603b.txt)";
const std::string kConv = "CONVENTIONS.md §2.1";

// The table rows of every output type and regime (the claims about table entries list them all).
const std::vector<RowRef> kTableRows{R::table_exact_f32_scaled,    R::table_exact_f32_kernel,    R::table_exact_f64_scaled,
                                     R::table_emulated_f32_scaled, R::table_emulated_f32_kernel, R::table_emulated_f64_scaled,
                                     R::table_emulated_f64_kernel, R::table_range,               R::table_exact_values};


bool in_range(const SinusoidalSpec& s, std::int64_t a, std::int64_t b) {  // [a, b] accepted
  return a >= min_position(s) && b <= max_abs_position(s) && a <= b;
}

bool contains_padding(const SinusoidalSpec& s, std::int64_t a, std::int64_t b) {
  return s.padding_row && *s.padding_row >= a && *s.padding_row <= b;
}

std::string k_region(std::int64_t k) {
  const std::uint64_t a = k < 0 ? static_cast<std::uint64_t>(-k) : static_cast<std::uint64_t>(k);
  if (a <= 16) return "|k| <= 16";
  if (a < (1u << 20)) return "|k| < 2^20";
  if (a < (std::uint64_t{1} << 32)) return "|k| < 2^32";
  return "|k| >= 2^32";
}

// Oracle identity check: |a - b| within row sinusoidal.identity.oracle (2^-200).
void oracle_identity(const Claim& claim, const Real& a, const Real& b, const std::function<std::string()>& what,
                     bool in_rc = true) {
  const rf::PrecisionGuard guard(320);
  const BudgetRow& row = budget(R::identity_oracle);
  auto f = check(claim, row, measure(row, a, b), static_cast<double>(a), &b,
                 [&] { return what() + " lhs=" + rf::to_decimal(a, 40); });
  if (f) {
    if (in_rc) RC_FAIL(*f);
    ADD_FAILURE() << *f;
  }
}

std::vector<std::size_t> sampled_pairs(std::size_t h, std::size_t n) {
  std::vector<std::size_t> out;
  if (h <= n) {
    out.resize(h);
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) out.push_back(i * (h - 1) / (n - 1));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------------
// SIN-ROT-1: PE(p+k) = T(k) PE(p), T(k) independent of p.
POSENC_PROPERTY(Sinusoidal, ShiftByKIsAFixedRotation,
                {"SIN-ROT-1", "sinusoidal",
     "PE(p+k) = T(k) PE(p), T(k) = diag of 2x2 rotations [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]] on "
     "(sin slot, cos slot), independent of p",
     kS000 + "; " + kS001, Oracle::identity,
     {R::identity_oracle, R::shift_operator_f64, R::shift_dense_f32, R::shift_apply_f64, R::shift_apply_f32}}) {
  const SpecCase sc = *gen_any_spec(512, false);
  const SinusoidalSpec& s = sc.spec;
  const std::size_t rows = *rc::gen::inRange<std::size_t>(1, 9);
  const PositionCase pc = *gen_position(s);
  const std::int64_t k = *gen_shift(s, 2 * max_abs_position(s));
  const std::int64_t p = pc.p;
  const std::int64_t last = p + static_cast<std::int64_t>(rows) - 1;
  RC_PRE(in_range(s, p, last) && in_range(s, p + k, last + k));
  RC_PRE(!contains_padding(s, p, last) && !contains_padding(s, p + k, last + k));
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  tag(claim, k_region(k));

  // Oracle: the same T(k) maps PE(p) to PE(p+k) and PE(q) to PE(q+k) for an unrelated q.
  const PositionCase qc = *gen_position(s);
  const bool q_ok = in_range(s, qc.p, qc.p) && in_range(s, qc.p + k, qc.p + k) && !contains_padding(s, qc.p, qc.p) &&
                    !contains_padding(s, qc.p + k, qc.p + k);
  for (std::size_t i : sampled_pairs(pair_count(s), 3)) {
    const Real c = rf::shift_cos(s, k, i, kBits), sn = rf::shift_sin(s, k, i, kBits);
    for (std::int64_t x : {p, q_ok ? qc.p : p}) {
      const rf::PrecisionGuard guard(320);
      const Real xs = rf::value(s, x, sin_slot(s, i), kBits), xc = rf::value(s, x, cos_slot(s, i), kBits);
      const Real ys = rf::value(s, x + k, sin_slot(s, i), kBits), yc = rf::value(s, x + k, cos_slot(s, i), kBits);
      auto what = [&] { return spec_label(s) + " oracle p=" + std::to_string(x) + " k=" + std::to_string(k) + " pair=" + std::to_string(i); };
      oracle_identity(claim, Real(c * xs + sn * xc), ys, [&] { return what() + " sin slot"; });
      oracle_identity(claim, Real(c * xc - sn * xs), yc, [&] { return what() + " cos slot"; });
    }
  }
  // Fast path: ShiftOperator entries, dense float T(k), and apply_shift by rot and by gemm.
  const auto cols = sample_columns(s.dim, 16);
  for (DType t : kDTypes)
    for (ShiftMethod m : {ShiftMethod::rot, ShiftMethod::gemm})
      measure_shift(s, t, p, k, rows, m, cols, claim_sink(claim));
}

// SIN-ROT-2: T(a) T(b) = T(a+b).
POSENC_PROPERTY(Sinusoidal, ShiftsCompose,
                {"SIN-ROT-2", "sinusoidal", "T(a) T(b) = T(a+b)", kS000 + " (T(k) is a rotation by k w_i)", Oracle::identity,
     {R::identity_oracle, R::shift_compose_f64}}) {
  const SpecCase sc = *gen_any_spec(1024, false);
  const SinusoidalSpec& s = sc.spec;
  const std::int64_t lim = max_abs_position(s);
  const std::int64_t a = *gen_shift(s, lim), b = *gen_shift(s, lim);
  RC_PRE(std::llabs(a + b) <= lim);
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, k_region(a));
  const ShiftOperator ta = shift_operator(s, a), tb = shift_operator(s, b);
  for (std::size_t i : sampled_pairs(pair_count(s), 8)) {
    const Real rc = rf::shift_cos(s, a + b, i, kBits), rs = rf::shift_sin(s, a + b, i, kBits);
    {
      const rf::PrecisionGuard guard(320);
      const Real ca = rf::shift_cos(s, a, i, kBits), sa = rf::shift_sin(s, a, i, kBits);
      const Real cb = rf::shift_cos(s, b, i, kBits), sb = rf::shift_sin(s, b, i, kBits);
      auto what = [&] { return spec_label(s) + " a=" + std::to_string(a) + " b=" + std::to_string(b) + " pair=" + std::to_string(i); };
      oracle_identity(claim, Real(ca * cb - sa * sb), rc, [&] { return what() + " cos"; });
      oracle_identity(claim, Real(sa * cb + ca * sb), rs, [&] { return what() + " sin"; });
    }
    const double c = ta.cos_k()[i] * tb.cos_k()[i] - ta.sin_k()[i] * tb.sin_k()[i];
    const double sn = ta.sin_k()[i] * tb.cos_k()[i] + ta.cos_k()[i] * tb.sin_k()[i];
    auto in = [&] {
      return spec_label(s) + " a=" + position_label(a) + " b=" + position_label(b) + " pair=" + std::to_string(i) +
             " ca=" + dec_hex(ta.cos_k()[i]) + " sa=" + dec_hex(ta.sin_k()[i]) + " cb=" + dec_hex(tb.cos_k()[i]) + " sb=" + dec_hex(tb.sin_k()[i]);
    };
    if (auto f = check(claim, R::shift_compose_f64, c, rc, [&] { return in() + " cos"; }))
      RC_FAIL(*f);
    if (auto f = check(claim, R::shift_compose_f64, sn, rs, [&] { return in() + " sin"; }))
      RC_FAIL(*f);
  }
}

// SIN-ROT-3: T(k) T(k)^T = I and T(-k) = T(k)^T.
POSENC_PROPERTY(Sinusoidal, ShiftIsOrthogonalAndReversedByTranspose,
                {"SIN-ROT-3", "sinusoidal", "T(k) T(k)^T = I and T(-k) = T(k)^T", kS000 + "; " + kS002 + " (rotation matrix)",
     Oracle::identity, {R::identity_oracle, R::shift_orthogonality_f64, R::shift_orthogonality_f32, R::shift_operator_f64}}) {
  const SpecCase sc = *gen_any_spec(512, false);
  const SinusoidalSpec& s = sc.spec;
  const std::int64_t k = *gen_shift(s, 2 * max_abs_position(s));
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, k_region(k));
  const std::size_t d = s.dim;
  const ShiftOperator t = shift_operator(s, k), tneg = shift_operator(s, -k);
  std::vector<float> dense(d * d);
  dense_shift_matrix(t, std::span<float>(dense));
  for (std::size_t i : sampled_pairs(pair_count(s), 8)) {
    const rf::PrecisionGuard guard(320);
    const Real c = rf::shift_cos(s, k, i, kBits), sn = rf::shift_sin(s, k, i, kBits);
    auto what = [&] { return spec_label(s) + " k=" + std::to_string(k) + " pair=" + std::to_string(i); };
    oracle_identity(claim, Real(c * c + sn * sn), rf::make_real(1, kBits), [&] { return what() + " cos^2+sin^2"; });
    oracle_identity(claim, rf::shift_cos(s, -k, i, kBits), c, [&] { return what() + " cos(-k) = cos(k)"; });
    oracle_identity(claim, rf::shift_sin(s, -k, i, kBits), Real(-sn), [&] { return what() + " sin(-k) = -sin(k)"; });
    // Fast T(k): c^2 + s^2 - 1 in exact arithmetic from the double entries and the float dense matrix.
    const Real one = rf::make_real(1, kBits);
    const Real cd = rf::make_real(t.cos_k()[i], kBits), sd = rf::make_real(t.sin_k()[i], kBits);
    const Real n64 = cd * cd + sd * sd;
    const std::size_t a = sin_slot(s, i), b = cos_slot(s, i);
    const Real cf = rf::make_real(static_cast<double>(dense[a * d + a]), kBits), sf = rf::make_real(static_cast<double>(dense[a * d + b]), kBits);
    const Real n32 = cf * cf + sf * sf;
    auto in = [&] { return what() + " c=" + dec_hex(t.cos_k()[i]) + " s=" + dec_hex(t.sin_k()[i]); };
    if (auto f = check(claim, budget(R::shift_orthogonality_f64), measure(budget(R::shift_orthogonality_f64), n64, one),
                       static_cast<double>(n64), &one, in))
      RC_FAIL(*f);
    if (auto f = check(claim, budget(R::shift_orthogonality_f32), measure(budget(R::shift_orthogonality_f32), n32, one),
                       static_cast<double>(n32), &one, [&] { return what() + " dense f32 c=" + dec_hex(dense[a * d + a]) + " s=" + dec_hex(dense[a * d + b]); }))
      RC_FAIL(*f);
    // The dense matrix is T(k): a rotation, and the (s, c) / (c, s) entries are exact negatives.
    RC_ASSERT(dense[b * d + a] == -dense[a * d + b]);
    RC_ASSERT(dense[b * d + b] == dense[a * d + a]);
    // Fast T(-k) against the oracle (whose T(-k) = T(k)^T was just checked).
    const Real rcn = rf::shift_cos(s, -k, i, kBits), rsn = rf::shift_sin(s, -k, i, kBits);
    if (auto f = check(claim, R::shift_operator_f64, tneg.cos_k()[i], rcn,
                       [&] { return what() + " T(-k) cos"; }))
      RC_FAIL(*f);
    if (auto f = check(claim, R::shift_operator_f64, tneg.sin_k()[i], rsn,
                       [&] { return what() + " T(-k) sin"; }))
      RC_FAIL(*f);
  }
}

// SIN-ROT-4: the BLAS block shift equals the directly generated rows.
POSENC_PROPERTY(Sinusoidal, BlasBlockShiftEqualsDirectRows,
                {"SIN-ROT-4", "sinusoidal", "apply_shift(T(k), PE(p..p+n-1)) (cblas rot and gemm) = sinusoidal_table(p+k, n)",
     kS000, Oracle::differential, {R::shift_differential_f64, R::shift_differential_f32}}) {
  const SpecCase sc = *gen_any_spec(256, false);
  const SinusoidalSpec& s = sc.spec;
  const std::size_t rows = *rc::gen::inRange<std::size_t>(1, 65);
  const PositionCase pc = *gen_position(s);
  const std::int64_t k = *gen_shift(s, 2 * max_abs_position(s));
  const std::int64_t p = pc.p, last = p + static_cast<std::int64_t>(rows) - 1;
  RC_PRE(in_range(s, p, last) && in_range(s, p + k, last + k));
  RC_PRE(!contains_padding(s, p, last) && !contains_padding(s, p + k, last + k));
  const ShiftMethod m = *rc::gen::element(ShiftMethod::rot, ShiftMethod::gemm);
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  tag(claim, m == ShiftMethod::rot ? "method rot" : "method gemm");
  for (DType t : kDTypes) measure_shift(s, t, p, k, rows, m, sample_columns(s.dim, 8), claim_sink(claim));
}

// SIN-NORM-1: ||PE(p)||^2 = d/2 (floor(d/2) with a zero-pad column); the padding row has norm 0.
POSENC_PROPERTY(Sinusoidal, EveryRowHasNormSquaredHalfTheDimension,
                {"SIN-NORM-1", "sinusoidal",
     "||PE(p)||^2 = d/2 for even d; floor(d/2) with a zero-pad column (it adds 0); the fairseq padding row has norm 0",
     kS000 + " (PE(p).PE(p) = d_m/2)", Oracle::identity,
     {R::identity_oracle, R::norm_f32, R::norm_f64, R::table_exact_values}}) {
  const SpecCase sc = *gen_any_spec(2048, true);
  const SinusoidalSpec& s = sc.spec;
  const PositionCase pc = *gen_position(s);
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  const std::size_t h = pair_count(s);
  if (contains_padding(s, pc.p, pc.p)) {
    for (DType t : kDTypes) measure_entries(s, t, pc.p, 0, {}, claim_sink(claim));
    return;
  }
  if (s.regime == Regime::exact) {
    const rf::PrecisionGuard guard(320);
    Real sum = rf::make_real(320);
    for (std::size_t i : sampled_pairs(h, 64)) {
      const Real a = rf::value(s, pc.p, sin_slot(s, i), kBits), b = rf::value(s, pc.p, cos_slot(s, i), kBits);
      oracle_identity(claim, Real(a * a + b * b), rf::make_real(1, kBits),
                      [&] { return spec_label(s) + " oracle p=" + std::to_string(pc.p) + " pair " + std::to_string(i) + " norm"; });
    }
    if (s.dim > 2 * h)
      oracle_identity(claim, rf::value(s, pc.p, s.dim - 1, kBits), rf::make_real(0, kBits), [&] { return spec_label(s) + " zero-pad column"; });
  }
  for (DType t : kDTypes) measure_dot(s, t, pc.p, 0, claim_sink(claim));
}

// SIN-DOT-1: PE(p).PE(p+k) = sum_i cos(k w_i), independent of p.
POSENC_PROPERTY(Sinusoidal, DotProductDependsOnlyOnTheOffset,
                {"SIN-DOT-1", "sinusoidal", "PE(p).PE(p+k) = sum_i cos(k w_i), independent of p", kS000 + " (eq. 2.3)",
     Oracle::identity, {R::identity_oracle, R::dot_f32, R::dot_f64}}) {
  const SpecCase sc = *gen_any_spec(1024, false);
  const SinusoidalSpec& s = sc.spec;
  const PositionCase p1 = *gen_position(s), p2 = *gen_position(s);
  const std::int64_t k = *gen_shift(s, 2 * max_abs_position(s));
  RC_PRE(in_range(s, p1.p + k, p1.p + k) && in_range(s, p2.p + k, p2.p + k));
  RC_PRE(!contains_padding(s, p1.p, p1.p) && !contains_padding(s, p1.p + k, p1.p + k) && !contains_padding(s, p2.p, p2.p) &&
         !contains_padding(s, p2.p + k, p2.p + k));
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, p1.region);
  tag(claim, k_region(k));
  const Real closed = rf::dot_closed_form(s, k, kBits);
  if (s.dim <= 256) {  // oracle rows at two unrelated positions give the same dot product
    for (std::int64_t p : {p1.p, p2.p}) {
      const rf::PrecisionGuard guard(320);
      const auto a = rf::row(s, p, kBits), b = rf::row(s, p + k, kBits);
      Real sum = rf::make_real(320);
      for (std::size_t c = 0; c < s.dim; ++c) sum += a[c] * b[c];
      oracle_identity(claim, sum, closed, [&] { return spec_label(s) + " oracle p=" + std::to_string(p) + " k=" + std::to_string(k); });
    }
  }
  for (DType t : kDTypes) {
    measure_dot(s, t, p1.p, k, claim_sink(claim));
    measure_dot(s, t, p2.p, k, claim_sink(claim));
  }
}

// SIN-DOT-2: PE(p).PE(p+k) = PE(p).PE(p-k).
POSENC_PROPERTY(Sinusoidal, DotProductIsSymmetricInTheOffset,
                {"SIN-DOT-2", "sinusoidal", "PE(p).PE(p+k) = PE(p).PE(p-k): the dot product cannot tell direction",
     kS000 + "; " + kConv, Oracle::identity, {R::identity_oracle, R::dot_f32, R::dot_f64}}) {
  const SpecCase sc = *gen_any_spec(1024, false);
  const SinusoidalSpec& s = sc.spec;
  const PositionCase pc = *gen_position(s);
  const std::int64_t k = *gen_shift(s, max_abs_position(s));
  const std::int64_t p = pc.p;
  RC_PRE(in_range(s, p - std::llabs(k), p + std::llabs(k)));
  RC_PRE(!contains_padding(s, p, p) && !contains_padding(s, p + k, p + k) && !contains_padding(s, p - k, p - k));
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  tag(claim, k_region(k));
  oracle_identity(claim, rf::dot_closed_form(s, k, kBits), rf::dot_closed_form(s, -k, kBits),
                  [&] { return spec_label(s) + " closed form k=" + std::to_string(k) + " vs -k"; });
  if (s.dim <= 128) {
    const rf::PrecisionGuard guard(320);
    const auto a = rf::row(s, p, kBits), b = rf::row(s, p + k, kBits), c = rf::row(s, p - k, kBits);
    Real plus = rf::make_real(320), minus = rf::make_real(320);
    for (std::size_t i = 0; i < s.dim; ++i) {
      plus += a[i] * b[i];
      minus += a[i] * c[i];
    }
    oracle_identity(claim, plus, minus, [&] { return spec_label(s) + " oracle p=" + std::to_string(p) + " k=" + std::to_string(k) + " vs -k"; });
  }
  for (DType t : kDTypes) {
    measure_dot(s, t, p, k, claim_sink(claim));
    measure_dot(s, t, p, -k, claim_sink(claim));
  }
}

// SIN-DOT-3: the Gram matrix of consecutive positions is symmetric Toeplitz.
POSENC_PROPERTY(Sinusoidal, GramMatrixOfConsecutivePositionsIsSymmetricToeplitz,
                {"SIN-DOT-3", "sinusoidal",
     "G = PE PE^T over positions p..p+n-1 has G[i][j] = sum_k cos((j-i) w_k): symmetric Toeplitz", kS000 + "; " + kConv,
     Oracle::reference, {R::gram_f32, R::gram_f64, R::gram_symmetry}}) {
  const SpecCase sc = *gen_any_spec(2048, false);
  const SinusoidalSpec& s = sc.spec;
  const std::size_t rows = *rc::gen::inRange<std::size_t>(2, 33);
  const PositionCase pc = *gen_position(s);
  const std::int64_t last = pc.p + static_cast<std::int64_t>(rows) - 1;
  RC_PRE(in_range(s, pc.p, last) && !contains_padding(s, pc.p, last));
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  for (DType t : kDTypes) measure_gram(s, t, pc.p, rows, claim_sink(claim));
}

// SIN-BND-1: every entry in [-1, 1] (both dtypes, both regimes, table and rows paths).
POSENC_PROPERTY(Sinusoidal, EveryEntryLiesInMinusOneToOne,
                {"SIN-BND-1", "sinusoidal", "-1 <= PE(p)_c <= 1 for every p, c", kS001, Oracle::identity, {R::table_range}}) {
  const SpecCase sc = *gen_any_spec(1024, true);
  const SinusoidalSpec& s = sc.spec;
  const PositionCase pc = *gen_position(s);
  const std::size_t rows = std::min<std::int64_t>(64, max_abs_position(s) - pc.p + 1);
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> out(rows * s.dim);
    sinusoidal_table(s, pc.p, rows, std::span<T>(out));
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double y = out[i];
      if (auto f = check(claim, R::table_range, y, rf::make_real(std::isnan(y) ? y : std::clamp(y, -1.0, 1.0), kBits), [&] {
            return spec_label(s) + " dtype=" + (sizeof(T) == 4 ? "f32" : "f64") + " p=" +
                   position_label(pc.p + static_cast<std::int64_t>(i / s.dim)) + " col=" + std::to_string(i % s.dim);
          }))
        RC_FAIL(*f);
    }
  };
  run(0.0f);
  run(0.0);
}

// SIN-BND-2: PE(0) is 0 on sin slots and 1 on cos slots, exactly (plus zero columns / padding rows).
POSENC_PROPERTY(Sinusoidal, PositionZeroIsZeroOnSinSlotsAndOneOnCosSlots,
                {"SIN-BND-2", "sinusoidal",
     "PE(0) = 0 on sin slots, 1 on cos slots (exactly); zero-pad column and padding row exactly 0", kConv,
     Oracle::identity, {R::table_exact_values}}) {
  const SpecCase sc = *gen_any_spec(8192, true);
  const SinusoidalSpec& s = sc.spec;
  count_case(claim);
  tag(claim, sc.region);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 64);
  for (DType t : kDTypes) {
    measure_entries(s, t, 0, offset, sample_columns(s.dim, 64), claim_sink(claim));
    if (s.padding_row) measure_entries(s, t, *s.padding_row, offset, sample_columns(s.dim, 64), claim_sink(claim));
  }
  // The defining values themselves, independently of the oracle.
  if (!contains_padding(s, 0, 0)) {
    std::vector<double> row(s.dim);
    sinusoidal_table(s, 0, 1, std::span<double>(row));
    for (std::size_t i = 0; i < pair_count(s); ++i) {
      RC_ASSERT(row[sin_slot(s, i)] == 0.0);
      RC_ASSERT(row[cos_slot(s, i)] == 1.0);
    }
  }
}

// SIN-BND-3: frequencies strictly decrease (fast path and oracle).
POSENC_PROPERTY(Sinusoidal, FrequenciesStrictlyDecrease,
                {"SIN-BND-3", "sinusoidal", "w_0 > w_1 > ... > w_{h-1} > 0", kConv + "; " + kS001, Oracle::identity,
     {R::identity_oracle, R::frequency_exact_f64, R::frequency_emulated_f32}}) {
  const SpecCase sc = *gen_any_spec(8192, true);
  const SinusoidalSpec& s = sc.spec;
  count_case(claim);
  tag(claim, sc.region);
  const auto w = sinusoidal_frequencies(s);
  RC_ASSERT(w.size() == pair_count(s));
  for (std::size_t k = 0; k < w.size(); ++k) {
    RC_ASSERT(w[k] > 0.0);
    if (k + 1 < w.size()) {
      if (!(w[k + 1] < w[k]))
        RC_FAIL("claim SIN-BND-3: fast frequencies not strictly decreasing at k=" + std::to_string(k) + ": " + dec_hex(w[k]) +
                " then " + dec_hex(w[k + 1]) + " for " + spec_label(s));
    }
  }
  const auto pairs = sampled_pairs(w.size(), 32);
  for (std::size_t j = 0; j + 1 < pairs.size(); ++j) {
    const std::size_t k = pairs[j];
    const Real a = s.regime == Regime::emulated ? rf::emulated_frequency(s, k, kBits) : rf::frequency(s, k, kBits);
    const Real b = s.regime == Regime::emulated ? rf::emulated_frequency(s, k + 1, kBits) : rf::frequency(s, k + 1, kBits);
    RC_ASSERT(b < a);
  }
  measure_frequencies(s, claim_sink(claim));
}

// SIN-DIST-1: distinct positions have distinct encodings (fast rows distinct for all p != q < 2^16).
POSENC_CLAIM_TEST(Sinusoidal, DistinctPositionsHaveDistinctEncodings,
                {"SIN-DIST-1", "sinusoidal",
     "p != q => PE(p) != PE(q) (pair 0 alone: (p-q) w_0 is never a multiple of 2 pi since pi is irrational and w_0 "
     "rational); fast rows distinct for all p != q < 2^16",
     kS001 + "; " + kS002 + " (lcm of periods)", Oracle::identity, {R::distinct_margin}}) {
  constexpr std::size_t N = std::size_t{1} << 16;
  for (const auto& info : SpecTraits<SinusoidalSpec>::presets()) {
    for (std::size_t d : {std::size_t{4}, std::size_t{8}, std::size_t{64}}) {
      const SinusoidalSpec s = sinusoidal_preset(info.name, d);
      const std::int64_t first = s.first_position;
      count_case(claim);
      tag(claim, std::string(info.name) + " d=" + std::to_string(d));
      for (DType t : kDTypes) {
        std::vector<double> tab(N * d);
        if (t == DType::f32) {
          std::vector<float> f(N * d);
          sinusoidal_table(s, first, N, std::span<float>(f));
          std::copy(f.begin(), f.end(), tab.begin());
        } else {
          sinusoidal_table(s, first, N, std::span<double>(tab));
        }
        // Exhaustive: sort the rows and compare neighbours (exact).
        std::vector<std::size_t> idx(N);
        std::iota(idx.begin(), idx.end(), 0);
        auto row_less = [&](std::size_t a, std::size_t b) {
          return std::lexicographical_compare(tab.begin() + a * d, tab.begin() + (a + 1) * d, tab.begin() + b * d, tab.begin() + (b + 1) * d);
        };
        std::sort(idx.begin(), idx.end(), row_less);
        for (std::size_t i = 0; i + 1 < N; ++i)
          ASSERT_TRUE(row_less(idx[i], idx[i + 1]))
              << info.name << " d=" << d << " " << to_string(t) << ": rows of positions " << first + static_cast<std::int64_t>(idx[i])
              << " and " << first + static_cast<std::int64_t>(idx[i + 1]) << " are identical";
        // Measured minimum distance ||PE(first) - PE(first + k)||, k = 1..N-1 (depends on k only).
        double min_d2 = std::numeric_limits<double>::infinity();
        std::size_t arg = 0;
        for (std::size_t k = 1; k < N; ++k) {
          long double d2 = 0;
          for (std::size_t c = 0; c < d; ++c) {
            const long double diff = static_cast<long double>(tab[c]) - static_cast<long double>(tab[k * d + c]);
            d2 += diff * diff;
          }
          if (static_cast<double>(d2) < min_d2) min_d2 = static_cast<double>(d2), arg = k;
        }
        const double ratio = 2 * std::sqrt(static_cast<double>(d)) * sinusoidal::table_entry_abs_bound(t) / std::sqrt(min_d2);
        const Real dist = rf::make_real(std::sqrt(min_d2), kBits);
        auto f = check(claim, budget(R::distinct_margin), measure_value(budget(R::distinct_margin), ratio), std::sqrt(min_d2), &dist, [&] {
          return std::string(info.name) + " dim=" + std::to_string(d) + " dtype=" + std::string(to_string(t)) + " N=2^16 min distance " +
                 dec_hex(std::sqrt(min_d2)) + " at k=" + std::to_string(arg);
        });
        if (f) ADD_FAILURE() << *f;
      }
    }
  }
}

// SIN-EXT-1: the encoding extends to positions never seen (up to 2^40), via rows and via table.
POSENC_PROPERTY(Sinusoidal, EncodingExtendsToPositionsNeverSeen,
                {"SIN-EXT-1", "sinusoidal",
     "PE(p) is defined for every |p| <= 2^40 (no maximum length, no table to outgrow) and matches the oracle there, "
     "through both sinusoidal_rows(p) and sinusoidal_table(p - j, j + 1)",
     kS001 + " (item 3); " + kS002, Oracle::reference, kTableRows}) {
  const SpecCase sc = *gen_any_spec(512, true);
  const SinusoidalSpec& s = sc.spec;
  const PositionCase pc = *gen_position(s, std::int64_t{1} << 30, std::int64_t{1} << 40);
  RC_PRE(std::llabs(pc.p) >= (std::int64_t{1} << 20));
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 64);
  const auto cols = sample_columns(s.dim, 24);
  for (DType t : kDTypes) {
    measure_entries(s, t, pc.p, 0, cols, claim_sink(claim), Path::rows);
    measure_entries(s, t, pc.p, offset, cols, claim_sink(claim), Path::table);
  }
}

// SIN-ACC-1: every table budget row holds at the hard positions, every preset, regime and dtype.
POSENC_CLAIM_TEST(Sinusoidal, FastTableMatchesOracleAtHardPositions,
                {"SIN-ACC-1", "sinusoidal",
     "|PE_fast(p)_c - PE(p)_c| within every table budget row at the hard positions, every preset, regime, dtype, "
     "dim 2, 3, 4, 7, 64 and 512",
     "DESIGN.md §3", Oracle::reference, kTableRows}) {
  for (const auto& info : SpecTraits<SinusoidalSpec>::presets()) {
    // d 2 and 3: one pair, where tensor2tensor's max(num_timescales - 1, 1) guards a 0/0 (mutation campaign)
    for (std::size_t d : {std::size_t{2}, std::size_t{3}, std::size_t{4}, std::size_t{7}, std::size_t{64},
                          std::size_t{512}}) {
      SinusoidalSpec s = info.spec;
      s.dim = d;
      try {
        validate(s);
      } catch (const Error&) {
        continue;  // odd d for presets that reject it
      }
      for (Regime regime : {Regime::exact, Regime::emulated}) {
        s.regime = regime;
        try {
          validate(s);
        } catch (const Error&) {
          continue;
        }
        const auto positions = hard_positions(s, d >= 512 ? 2 : 4);
        const auto cols = sample_columns(d, d >= 512 ? 24 : 64);
        std::size_t n = 0;
        for (const auto& pc : positions) {
          count_case(claim);
          tag(claim, std::string(info.name) + " " + std::string(to_string(regime)));
          tag(claim, pc.region);
          for (DType t : kDTypes) measure_entries(s, t, pc.p, (n * 17) % 64, cols, claim_sink(claim, FailWith::gtest));
          ++n;
        }
      }
    }
  }
}

// SIN-ACC-4: every entry of whole emulated tables, including the rare rows whose fast evaluation does not settle.
POSENC_CLAIM_TEST(Sinusoidal, WholeEmulatedTablesAreCorrectlyRounded,
                {"SIN-ACC-4", "sinusoidal",
     "every entry of whole emulated f32 tables (every emulated preset, d = 512, positions 0 .. 2^14 - 1, the 2^14 "
     "positions below 2^18 - 64 and the 2^14 around 2^22: the ends of the fast path's short and long polynomials, "
     "then its fallback) is RN32(sin/cos(angle32)): checked "
     "against libm's double sin/cos of angle32 where the entry is the only float within 2^-51 of it, against the "
     "oracle elsewhere (entries near a float32 rounding midpoint, where the fast path falls back)",
     "DESIGN.md §3; lib/src/core/sincos32.hpp (ProductSinCos32)", Oracle::reference,
     {R::table_emulated_f32_scaled}}) {
  // Three ranges of 2^14 rows: small positions; angles up to just below 2^18 (the fast path's short polynomials at
  // the end of their range, for presets with max w_k = 1); across 2^22 (its long polynomials, then the fallback).
  constexpr std::size_t d = 512, rows = 1 << 14;
  const std::int64_t firsts[] = {0, (std::int64_t{1} << 18) - static_cast<std::int64_t>(rows) - 64,
                                 (std::int64_t{1} << 22) - static_cast<std::int64_t>(rows / 2)};
  std::vector<float> table(rows * d);
  std::size_t failures = 0, ambiguous = 0, entries = 0;
  for (const auto& info : SpecTraits<SinusoidalSpec>::presets()) {
    SinusoidalSpec s = info.spec;
    s.dim = d;
    s.regime = Regime::emulated;
    try {
      validate(s);
    } catch (const Error&) {
      continue;
    }
    const std::size_t h = pair_count(s);
    std::vector<float> w(h);  // the oracle's emulated float32 frequencies
    for (std::size_t k = 0; k < h; ++k) w[k] = rf::emulated_frequency(s, k).convert_to<float>();
    for (std::int64_t first : firsts) {
      if (first + static_cast<std::int64_t>(rows) - 1 > max_abs_position(s)) continue;
      count_case(claim);
      tag(claim, std::string(info.name) + (first == 0 ? " p < 2^14" : first < (std::int64_t{1} << 20) ? " p < 2^18" : " p ~ 2^22"));
      sinusoidal_table(s, first, rows, std::span<float>(table));
      for (std::size_t i = 0; i < rows; ++i) {
        const std::int64_t p = first + static_cast<std::int64_t>(i);
        if (s.padding_row && p == *s.padding_row) continue;
        const float pf = static_cast<float>(p);
        for (std::size_t c = 0; c < 2 * h; ++c) {
          // the column's pair and function in the spec's layout
          const bool interleaved = s.layout == Layout::interleaved;
          const std::size_t k = interleaved ? c / 2 : c % h;
          const bool is_sin = interleaved ? c % 2 == 0 : c < h;
          const float a = pf * w[k];
          const double v = is_sin ? std::sin(static_cast<double>(a)) : std::cos(static_cast<double>(a));
          const float y = table[i * d + c];
          ++entries;
          // libm's double sin/cos err by < 1 ulp (<= 2^-53 here): when both ends of v -+ 2^-51 round to y, y is
          // RN32 of the true value.
          constexpr double m = 0x1p-51;
          if (static_cast<float>(v - m) == y && static_cast<float>(v + m) == y) continue;
          ++ambiguous;
          auto in = [&] {
            return spec_label(s) + " dtype=f32 p=" + position_label(p) + " col=" + std::to_string(c) + " (whole table)";
          };
          if (auto f = check(claim, R::table_emulated_f32_scaled, y, entry_reference(s, p, c), in); f && failures++ < 5)
            ADD_FAILURE() << *f;
        }
      }
    }
  }
  EXPECT_GT(entries, std::size_t{0});
  EXPECT_EQ(failures, std::size_t{0});
  std::printf("SIN-ACC-4: %zu entries, %zu near a float32 midpoint checked against the oracle\n", entries, ambiguous);
}

// SIN-ACC-3: the table budget rows hold for generated specs and positions.
POSENC_PROPERTY(Sinusoidal, FastTableMatchesOracleForAnySpec,
                {"SIN-ACC-3", "sinusoidal",
     "the table budget rows hold for generated specs (rules, layouts, bases, min_timescale, signed positions, padding "
     "rows, dims 2..8192) at generated positions and block offsets",
     "DESIGN.md §3", Oracle::reference, kTableRows}) {
  const SpecCase sc = *gen_any_spec(8192, true);
  const SinusoidalSpec& s = sc.spec;
  const PositionCase pc = *gen_position(s);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 64);
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  const auto cols = sample_columns(s.dim, 32);
  for (DType t : kDTypes) measure_entries(s, t, pc.p, offset, cols, claim_sink(claim));
}

// SIN-ACC-2: sinusoidal_frequencies = RN64(w_k) / the emulated float32 w_k.
POSENC_PROPERTY(Sinusoidal, FrequenciesMatchOracle,
                {"SIN-ACC-2", "sinusoidal", "sinusoidal_frequencies = RN64(w_k) (exact regime) / the emulated float32 w_k",
     "DESIGN.md §3", Oracle::reference, {R::frequency_exact_f64, R::frequency_emulated_f32}}) {
  const SpecCase sc = *gen_any_spec(8192, true);
  count_case(claim);
  tag(claim, sc.region);
  measure_frequencies(sc.spec, claim_sink(claim));
}

// SIN-REPRO-1: a position's row is bit-for-bit the same in every call.
POSENC_PROPERTY(Sinusoidal, RowsAreBitwiseReproducibleAcrossCallsThreadsAndSplits,
                {"SIN-REPRO-1", "sinusoidal",
                 "the row of position p is bit-for-bit the same whether it comes from plan.table or a one-shot table "
                 "(any first row, any split of a range into calls), plan.rows (any order of positions), 1 or 2 "
                 "threads, and every store path of the table writer: in place, streamed whole cache lines from "
                 "registers (64-byte aligned rows of a multiple of 64 bytes, > 4 MiB) and streamed through the staged "
                 "copy (misaligned rows or chunk tails)",
                 "posenc/sinusoidal.hpp (reproducibility contract); brief: bitwise reproducibility", Oracle::differential,
                 {R::table_reproducible}}) {
  SpecCase sc = *gen_any_spec(512, true);
  const bool big = *rc::gen::inRange(0, 4) == 0;  // > 4 MiB of f32: the streaming-store paths
  if (big) {
    // Widths whose f32 and f64 rows are whole cache lines; 272 = 2 * (128 + 8) also leaves a chunk tail of 8
    // pairs (staged), and its halves layout puts the cos segment off a line boundary.
    sc.spec = at_dim(sc.spec, *rc::gen::element<std::size_t>(64, 256, 272, 1024));
    sc.region = sc.name + " " + std::string(to_string(sc.spec.layout)) + " d=" + std::to_string(sc.spec.dim) + " " +
                std::string(to_string(sc.spec.regime));
  }
  const SinusoidalSpec& s = sc.spec;
  const std::size_t count = big ? (std::size_t{4} << 20) / (4 * s.dim) + *rc::gen::inRange<std::size_t>(1, 300)
                                : *rc::gen::inRange<std::size_t>(1, 200);
  const PositionCase pc = *gen_position(s);
  const std::int64_t first = pc.p, last = first + static_cast<std::int64_t>(count) - 1;
  RC_PRE(in_range(s, first, last));
  const std::size_t split = *rc::gen::inRange<std::size_t>(0, count);
  const int threads = *rc::gen::inRange(1, 3);
  const bool streaming = *rc::gen::arbitrary<bool>();
  const std::size_t misalign = *rc::gen::inRange<std::size_t>(0, 2);  // elements off a 64-byte boundary
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  tag(claim, big ? "table > 4 MiB" : "table small");
  tag(claim, misalign ? "rows misaligned" : "rows 64-byte aligned");
  // count * d elements starting `misalign` elements after a 64-byte boundary.
  auto buffer = [&](auto zero, std::vector<decltype(zero)>& storage) {
    using T = decltype(zero);
    storage.assign(count * s.dim + 64 / sizeof(T) + misalign, T(0));
    const auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
    const std::size_t skip = ((64 - addr % 64) % 64) / sizeof(T) + misalign;
    return std::span<T>(storage.data() + skip, count * s.dim);
  };
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const std::size_t d = s.dim;
    const SinusoidalPlan plan = make_plan(s);
    std::vector<T> a(count * d), sb, scv;
    const std::span<T> b = buffer(zero, sb), c = buffer(zero, scv);
    plan.table(first, count, std::span<T>(a), TableOptions{.threads = 1, .streaming_stores = false});
    // b: the one-shot function, the range split in two calls, another thread count and store path.
    const TableOptions opt{.threads = threads, .streaming_stores = streaming};
    if (split > 0) sinusoidal_table(s, first, split, b.first(split * d), opt);
    sinusoidal_table(s, first + static_cast<std::int64_t>(split), count - split,
                     std::span<T>(b.data() + split * d, (count - split) * d), opt);
    // c: plan.rows with the positions in reverse order.
    std::vector<std::int64_t> pos(count);
    for (std::size_t i = 0; i < count; ++i) pos[i] = last - static_cast<std::int64_t>(i);
    plan.rows(pos, c, opt);
    for (std::size_t i = 0; i < count; ++i) {
      const T* ra = a.data() + i * d;
      const T* rb = b.data() + i * d;
      const T* rcv = c.data() + (count - 1 - i) * d;
      const bool same = std::memcmp(ra, rb, d * sizeof(T)) == 0 && std::memcmp(ra, rcv, d * sizeof(T)) == 0;
      // Every row is a case; the entries are compared one by one only where the row differs (or for the first row).
      if (same && i != 0) continue;
      for (std::size_t col = 0; col < d; ++col) {
        auto in = [&, i, col] {
          return spec_label(s) + " dtype=" + (sizeof(T) == 4 ? "f32" : "f64") + " table first=" + position_label(first) +
                 " count=" + std::to_string(count) + " split=" + std::to_string(split) + " threads=" +
                 std::to_string(threads) + (streaming ? " streaming" : "") +
                 (misalign ? " misaligned" : " aligned") + " row p=" +
                 position_label(first + static_cast<std::int64_t>(i)) + " col=" + std::to_string(col);
        };
        const Real ref = rf::make_real(static_cast<double>(ra[col]), kBits);
        if (auto f = check(claim, R::table_reproducible, static_cast<double>(rb[col]), ref, [&] { return in() + " (split one-shot)"; }))
          RC_FAIL(*f);
        if (auto f = check(claim, R::table_reproducible, static_cast<double>(rcv[col]), ref, [&] { return in() + " (plan.rows)"; }))
          RC_FAIL(*f);
      }
    }
  };
  run(0.0f);
  run(0.0);
}

// SIN-SIMD-1: every SIMD target writes the same bytes (posenc/simd.hpp).
POSENC_PROPERTY(Sinusoidal, EverySimdTargetWritesTheSameBytes,
                {"SIN-SIMD-1", "sinusoidal",
                 "every SIMD target this build and CPU have (posenc::simd_targets(); avx512, avx2 and scalar on an "
                 "AVX-512 x86-64) writes the same bytes as the scalar target: plan.table and plan.rows (positions in "
                 "any order, negative ones reflected), f32 and f64, every layout and regime, in place and through "
                 "both streaming paths (whole aligned lines from registers, the staged copy), widths with every tail "
                 "length of a vector step; the exact regime through the vector angle core and fused pass, the "
                 "emulated float32 rows through the vector settle test and the product path",
                 "posenc/simd.hpp (values contract); issue 'Fast on every CPU' (Highway)", Oracle::differential,
                 {R::table_reproducible}}) {
  SpecCase sc = *gen_any_spec(512, true);
  const bool big = *rc::gen::inRange(0, 16) == 0;  // > 4 MiB of f32: the streaming-store paths (3 targets each)
  if (big) sc.spec = at_dim(sc.spec, *rc::gen::element<std::size_t>(64, 256, 272, 1024));
  const SinusoidalSpec& s = sc.spec;
  const std::size_t count = big ? (std::size_t{4} << 20) / (4 * s.dim) + *rc::gen::inRange<std::size_t>(1, 300)
                                : *rc::gen::inRange<std::size_t>(1, 200);
  const PositionCase pc = *gen_position(s);
  const std::int64_t first = pc.p, last = first + static_cast<std::int64_t>(count) - 1;
  RC_PRE(in_range(s, first, last));
  std::vector<std::int64_t> list = *rc::gen::container<std::vector<std::int64_t>>(
      *rc::gen::inRange<std::size_t>(1, 70), rc::gen::map(gen_position(s), [](const PositionCase& c) { return c.p; }));
  list.erase(std::remove_if(list.begin(), list.end(), [&](std::int64_t p) { return !in_range(s, p, p); }), list.end());
  if (list.empty()) list.push_back(first);
  const TableOptions opt{.threads = *rc::gen::inRange(1, 3), .streaming_stores = *rc::gen::arbitrary<bool>()};
  const std::size_t misalign = *rc::gen::inRange<std::size_t>(0, 2);  // elements off a 64-byte boundary
  count_case(claim);
  tag(claim, sc.region + " " + std::string(to_string(s.layout)) + " " + std::string(to_string(s.regime)));
  tag(claim, big ? "table > 4 MiB" : "table small");
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::vector<std::vector<T>> tables, rows;
    std::vector<std::string> names;
    for_each_simd_target([&](const std::string& target) {
      const SinusoidalPlan plan = make_plan(s);
      std::vector<T> storage(count * s.dim + 64 / sizeof(T) + misalign);
      const auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
      const std::span<T> t(storage.data() + ((64 - addr % 64) % 64) / sizeof(T) + misalign, count * s.dim);
      plan.table(first, count, t, opt);
      tables.emplace_back(t.begin(), t.end());
      rows.emplace_back(list.size() * s.dim);
      plan.rows(list, std::span<T>(rows.back()), opt);
      names.push_back(target);
    });
    for (std::size_t x = 0; x < names.size(); ++x)
      for (const auto* set : {&tables, &rows}) {
        const std::vector<T>& got = (*set)[x];
        const std::vector<T>& scalar = set->back();
        const std::size_t i = std::min(first_difference(got, scalar), got.size() - 1);  // the first row when equal
        auto what = [&] {
          const std::int64_t p = set == &tables ? first + static_cast<std::int64_t>(i / s.dim) : list[i / s.dim];
          return spec_label(s) + " dtype=" + (sizeof(T) == 4 ? "f32" : "f64") + " target=" + names[x] + " vs scalar, " +
                 (set == &tables ? "table first=" + position_label(first) + " count=" + std::to_string(count)
                                 : "rows of " + std::to_string(list.size()) + " positions") +
                 " threads=" + std::to_string(opt.threads) + (opt.streaming_stores ? " streaming" : "") +
                 (misalign ? " misaligned" : " aligned") + " row p=" + position_label(p) +
                 " col=" + std::to_string(i % s.dim);
        };
        if (auto f = check(claim, R::table_reproducible, static_cast<double>(got[i]),
                           rf::make_real(static_cast<double>(scalar[i]), kBits), what))
          RC_FAIL(*f);
      }
  };
  run(0.0f);
  run(0.0);
}

// SIN-CHECK-1/2: `posenc check` passes posenc's own tables and its envelope contains real-libm-style deviations.

POSENC_CLAIM_TEST(SinusoidalCheck, PosencsOwnTablesPassCheckInEveryType,
                  {"SIN-CHECK-1", "sinusoidal",
                   "posenc check holds a table to sinusoidal.check.exact.<dtype>: posenc's own exact table rounded to "
                   "f16, bf16, f32 or f64 passes (every preset, positions at block boundaries and up to 2^40), and the "
                   "same table with one entry moved by 2 ulp(1) of the type where the bound is 0.5 fails",
                   "issue 'One scheme interface' §5; DESIGN.md §2-3", Oracle::reference,
                   {R::check_exact_f16, R::check_exact_bf16, R::check_exact_f32, R::check_exact_f64}}) {
  for (const auto& preset : SpecTraits<SinusoidalSpec>::presets()) {
    SinusoidalSpec s = preset.spec;
    s.dim = 24;
    std::vector<std::int64_t> pos;
    for (std::int64_t p = 0; p < 70; ++p) pos.push_back(p);
    for (std::int64_t p : {std::int64_t{48039}, std::int64_t{1} << 24, (std::int64_t{1} << 40) - 1}) pos.push_back(p);
    std::vector<double> table(pos.size() * s.dim);
    sinusoidal_rows(s, pos, std::span<double>(table));
    for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
      count_case(claim);
      tag(claim, std::string(preset.name) + " " + std::string(to_string(t)));
      std::vector<double> v(table.size());
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = t == DType::f64 ? table[i] : round_to(table[i], t);
      verify::sinusoidal::TableInput in{v, pos.size(), s.dim, t, pos, {}};
      const auto rep = verify::sinusoidal::check_table(s, in);
      check_verdict(claim, rep, 0, std::string(preset.name) + " " + std::string(to_string(t)));
      if (t != DType::f64) {  // one entry off by 2 ulp(1) of the type: err_S >= 1.5 > the bound 0.5, the check must fail
        const std::size_t i = 5 * s.dim + 3;
        v[i] = v[i] + 2 * std::ldexp(1.0, 1 - precision_bits(t));
        verify::sinusoidal::TableInput bad{v, pos.size(), s.dim, t, pos, {}};
        EXPECT_FALSE(verify::sinusoidal::check_table(s, bad).passed())
            << preset.name << " " << to_string(t) << ": a 1-ulp error passed";
      }
    }
  }
}

// Real exp/ln/sin/cos at 320 bits (independent transcription uses MPFR directly).
struct Mp {
  mpfr_t v;
  Mp() { mpfr_init2(v, 320); }
  explicit Mp(double x) : Mp() { mpfr_set_d(v, x, MPFR_RNDN); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp& o) : Mp() { mpfr_set(v, o.v, MPFR_RNDN); }
  Mp& operator=(const Mp& o) {
    mpfr_set(v, o.v, MPFR_RNDN);
    return *this;
  }
  Real real() const {
    Real r = rf::make_real(320);
    mpfr_set(r.backend().data(), v, MPFR_RNDN);
    return r;
  }
};

POSENC_PROPERTY(SinusoidalCheck, EmulationEnvelopeContainsLibmDeviations,
                {"SIN-CHECK-2", "sinusoidal",
                 "for the tensor2tensor and fairseq rules and Transformer-XL's pow form of the paper rule: posenc's "
                 "emulated table passes the envelope check bit-identically (ratio 0), and a table whose float32 exp "
                 "results (t2t, fairseq: the frequencies) or float32 pow results (Transformer-XL: before the float32 "
                 "reciprocal) are each moved by up to A_exp ulp and whose float32 sin/cos are each moved by up to "
                 "A_trig ulp (a real libm) stays within the envelope of sinusoidal.check.envelope (ratio <= 1) at "
                 "positions up to 2^24",
                 "issue 'One scheme interface' §5 (real-libm-style 1-ulp frequency error passes as within the envelope)",
                 Oracle::reference, {R::check_envelope}}) {
  const std::size_t d = *rc::gen::inRange<std::size_t>(2, 17) * 2;
  const std::string preset = *rc::gen::element<std::string>("fairseq", "tensor2tensor", "transformer-xl");
  SinusoidalSpec s = sinusoidal_preset(preset, std::max<std::size_t>(d, 4));
  const bool pow_form = s.paper_form == PaperForm::pow;
  s.regime = Regime::emulated;
  if (*rc::gen::inRange(0, 4) == 0) s.min_timescale = *rc::gen::element(0.5, 2.0, 1.0e-3);
  const int a_exp = *rc::gen::inRange(0, 3), a_trig = *rc::gen::inRange(0, 3);
  std::vector<std::int64_t> pos;
  const std::int64_t top = *rc::gen::element(std::int64_t{256}, std::int64_t{1} << 16, std::int64_t{1} << 24);
  for (int i = 0; i < 12; ++i) pos.push_back(*rc::gen::inRange<std::int64_t>(0, top));
  count_case(claim);
  tag(claim, preset + " A_exp=" + std::to_string(a_exp) + " A_trig=" + std::to_string(a_trig));
  std::vector<double> exact_emu(pos.size() * s.dim);
  sinusoidal_rows(s, pos, std::span<double>(exact_emu));
  verify::sinusoidal::TableInput in{exact_emu, pos.size(), s.dim, DType::f32, pos, {}};
  const auto rep = verify::sinusoidal::check_table(s, in);
  RC_ASSERT(rep.references.at(1).to_json()["bit_identical"].get<std::uint64_t>() == exact_emu.size());
  // A libm: each frequency w32 moved by up to A_exp ulp (A_w = 2 A_exp + 1 when min_timescale multiplies after the
  // exp: here the multiplied value moves by A_exp ulp, inside that allowance); for the pow form the float32 pow
  // base32 ** RN32(2k / d) (correctly rounded here from 320 bits) moved by up to A_exp ulp, then the float32
  // reciprocal and the min_timescale product; the angle formed in float32, each sin/cos moved by up to A_trig ulp.
  const std::vector<double> w = sinusoidal_frequencies(s);
  std::vector<double> libm(exact_emu.size());
  const std::size_t h = s.dim / 2;
  auto moved = [](float x, int n) {
    for (int i = 0; i < std::abs(n); ++i) x = std::nextafter(x, n > 0 ? INFINITY : 0.0f);
    return x;
  };
  for (std::size_t r = 0; r < pos.size(); ++r)
    for (std::size_t k = 0; k < h && !(s.padding_row && pos[r] == *s.padding_row); ++k) {  // the padding row stays 0
      float wk = static_cast<float>(w[k]);
      if (pow_form) {
        const float t = static_cast<float>(2 * k) / static_cast<float>(s.dim);
        Mp pw(static_cast<double>(static_cast<float>(s.base)));
        mpfr_pow(pw.v, pw.v, Mp(static_cast<double>(t)).v, MPFR_RNDN);
        const float pw32 = moved(mpfr_get_flt(pw.v, MPFR_RNDN), *rc::gen::inRange(-a_exp, a_exp + 1));
        wk = 1.0f / pw32;
        if (s.min_timescale != 1.0) wk = static_cast<float>(s.min_timescale) * wk;
      } else {
        wk = moved(wk, *rc::gen::inRange(-a_exp, a_exp + 1));
      }
      const float angle = static_cast<float>(pos[r]) * wk;
      float sv = static_cast<float>(std::sin(static_cast<double>(angle)));
      float cv = static_cast<float>(std::cos(static_cast<double>(angle)));
      for (int i = 0, n = *rc::gen::inRange(-a_trig, a_trig + 1); i < std::abs(n); ++i) sv = std::nextafter(sv, n > 0 ? 2.0f : -2.0f);
      for (int i = 0, n = *rc::gen::inRange(-a_trig, a_trig + 1); i < std::abs(n); ++i) cv = std::nextafter(cv, n > 0 ? 2.0f : -2.0f);
      libm[r * s.dim + sin_slot(s, k)] = sv;
      libm[r * s.dim + cos_slot(s, k)] = cv;
    }
  verify::sinusoidal::TableInput lin{libm, pos.size(), s.dim, DType::f32, pos, {}};
  const auto lrep = verify::sinusoidal::check_table(s, lin, reference::EnvelopeAllowance{2.0, 2.0});
  const auto j = lrep.references.at(1).to_json();
  const double max = j["overall"]["max_metric"].is_null() ? INFINITY : j["overall"]["max_metric"].get<double>();
  if (auto f = check(claim, budget(R::check_envelope), Measure{Class::ok, max}, max, nullptr,
                     [&] { return spec_label(s) + " A_exp=" + std::to_string(a_exp) + " A_trig=" + std::to_string(a_trig) +
                                  " worst: " + j["worst"].dump().substr(0, 400); }))
    RC_FAIL(*f);
}

// ---------------------------------------------------------------------------------------------------
// Preset conventions (CONVENTIONS.md §2.1), each written here independently of reference/ and lib/.


// Exact-regime w_k = exp(-num/den * ln(base)) * scale.
Mp mp_frequency(double base, double num, double den, double scale = 1.0) {
  Mp w, t;
  mpfr_set_d(t.v, base, MPFR_RNDN);
  mpfr_log(t.v, t.v, MPFR_RNDN);
  mpfr_mul_d(t.v, t.v, -num, MPFR_RNDN);
  mpfr_div_d(t.v, t.v, den, MPFR_RNDN);
  mpfr_exp(w.v, t.v, MPFR_RNDN);
  mpfr_mul_d(w.v, w.v, scale, MPFR_RNDN);
  return w;
}

Real mp_sincos(const Mp& w, std::int64_t p, bool is_sin) {
  Mp a;
  mpfr_mul_si(a.v, w.v, static_cast<long>(p), MPFR_RNDN);
  if (is_sin) mpfr_sin(a.v, a.v, MPFR_RNDN);
  else mpfr_cos(a.v, a.v, MPFR_RNDN);
  return a.real();
}

float rn32_exp(float x) {  // correctly rounded float32 exp (the emulation convention)
  Mp t(static_cast<double>(x));
  mpfr_exp(t.v, t.v, MPFR_RNDN);
  return mpfr_get_flt(t.v, MPFR_RNDN);  // 320-bit exp rounded once: correct unless within 2^-296 of a midpoint
}

double rn64_log(double x) {
  Mp t(x);
  mpfr_log(t.v, t.v, MPFR_RNDN);
  return mpfr_get_d(t.v, MPFR_RNDN);
}

// Expected row of a preset: value or "exactly zero" per column; in the emulated regime the value is sin/cos
// of the float32 angle before its final rounding (the budget rows' reference).
struct Expected {
  std::vector<Real> value;
};

// Compare the fast table row p (both dtypes, block offset) against `expect(column)`.
void compare_preset(const Claim& claim, const SinusoidalSpec& s, std::int64_t p, std::size_t offset,
                    const std::function<Real(std::size_t)>& expect, const std::vector<std::size_t>& cols) {
  const bool emulated = s.regime == Regime::emulated;
  for (DType t : kDTypes) {
    std::vector<double> y(s.dim);
    const std::int64_t start = std::max<std::int64_t>(0, p - static_cast<std::int64_t>(offset));
    const std::size_t count = static_cast<std::size_t>(p - start) + 1;
    if (t == DType::f32) {
      std::vector<float> f(count * s.dim);
      sinusoidal_table(s, start, count, std::span<float>(f));
      std::copy(f.end() - static_cast<std::ptrdiff_t>(s.dim), f.end(), y.begin());
    } else {
      std::vector<double> f(count * s.dim);
      sinusoidal_table(s, start, count, std::span<double>(f));
      std::copy(f.end() - static_cast<std::ptrdiff_t>(s.dim), f.end(), y.begin());
    }
    for (std::size_t c : cols) {
      const Real r = expect(c);
      auto in = [&, c] {
        return spec_label(s) + " dtype=" + std::string(to_string(t)) + " p=" + position_label(p) + " col=" + std::to_string(c) +
               " (independent formula)";
      };
      std::optional<std::string> f;
      if (r == 0 && (c >= 2 * pair_count(s) || (s.padding_row && p == *s.padding_row)))
        f = check(claim, R::table_exact_values, y[c], r, in);
      else
        f = check(claim, sinusoidal::scaled_row(emulated, t), y[c], r, in);
      if (f) RC_FAIL(*f);
    }
  }
}

POSENC_PROPERTY(SinusoidalPreset, VaswaniIsInterleavedPaperFormula,
                {"SIN-PRE-1", "sinusoidal", "vaswani: PE[p, 2k] = sin(p / 10000^(2k/d)), PE[p, 2k+1] = cos(p / 10000^(2k/d))",
     kConv + " item 1", Oracle::reference, {R::table_exact_f32_scaled, R::table_exact_f64_scaled}}) {
  const std::size_t d = std::max<std::size_t>(2, *gen_dim(2048) / 2 * 2);
  const SinusoidalSpec s = vaswani_spec(d);
  const PositionCase pc = *gen_position(s);
  count_case(claim);
  tag(claim, dim_region(d));
  tag(claim, pc.region);
  RC_ASSERT(s.layout == Layout::interleaved && s.first_position == 0 && !s.padding_row);
  // PE[p, 2k] = sin(p / 10000^(2k/d)), PE[p, 2k+1] = cos(p / 10000^(2k/d)).
  auto expect = [&](std::size_t c) { return mp_sincos(mp_frequency(10000.0, 2.0 * static_cast<double>(c / 2), static_cast<double>(d)), pc.p, c % 2 == 0); };
  compare_preset(claim, s, pc.p, *rc::gen::inRange<std::size_t>(0, 64), expect, sample_columns(d, 32));
  try {
    validate(vaswani_spec(d + 1));
    RC_FAIL("vaswani accepted odd d");
  } catch (const Error&) {
  }
}

POSENC_PROPERTY(SinusoidalPreset, MarianIsHalvesWithPaperFrequencies,
                {"SIN-PRE-2", "sinusoidal", "marian: PE[p, k] = sin(p 10000^(-2k/d)), PE[p, d/2 + k] = cos(p 10000^(-2k/d))",
     kConv + " item 2", Oracle::reference, {R::table_exact_f32_scaled, R::table_exact_f64_scaled}}) {
  const std::size_t d = std::max<std::size_t>(2, *gen_dim(2048) / 2 * 2);
  const SinusoidalSpec s = marian_spec(d);
  const PositionCase pc = *gen_position(s);
  count_case(claim);
  tag(claim, dim_region(d));
  tag(claim, pc.region);
  const std::size_t h = d / 2;
  // out[:, :d/2] = sin(p 10000^(-2k/d)), out[:, d/2:] = cos(p 10000^(-2k/d)).
  auto expect = [&](std::size_t c) {
    const std::size_t k = c < h ? c : c - h;
    return mp_sincos(mp_frequency(10000.0, 2.0 * static_cast<double>(k), static_cast<double>(d)), pc.p, c < h);
  };
  compare_preset(claim, s, pc.p, *rc::gen::inRange<std::size_t>(0, 64), expect, sample_columns(d, 32));
}

POSENC_PROPERTY(SinusoidalPreset, Tensor2TensorMatchesGetTimingSignal1d,
                {"SIN-PRE-3", "sinusoidal",
     "t2t: inv_ts[k] = min_ts exp(-k ln(max_ts/min_ts)/max(h-1, 1)), [sin | cos] halves, odd d zero-padded, last "
     "frequency exactly 1/max_ts; emulated = the float32 steps",
     kConv + " item 3", Oracle::reference,
     {R::table_exact_f32_scaled, R::table_exact_f64_scaled, R::table_emulated_f32_scaled, R::table_emulated_f64_scaled,
      R::table_exact_values}}) {
  const std::size_t d = *gen_dim(2048);
  const bool emulated = *rc::gen::arbitrary<bool>();
  SinusoidalSpec s = tensor2tensor_spec(d);
  if (emulated) s.regime = Regime::emulated;
  const PositionCase pc = *gen_position(s);
  count_case(claim);
  tag(claim, dim_region(d) + (emulated ? " emulated" : " exact"));
  tag(claim, pc.region);
  const std::size_t h = d / 2;
  const double max_ts = 1.0e4, min_ts = 1.0;
  // inc = ln(max/min) / max(h-1, 1); inv_ts[k] = min * exp(-k inc); signal = [sin(p inv) | cos(p inv)] (+ zero column).
  const double den = static_cast<double>(std::max<std::size_t>(h - 1, 1));
  // Emulated (float32 tensors): inc32 = RN32(RN32(math.log(max/min)) / RN32(max(h-1, 1)));
  // inv32_k = RN32(min32 * RN32(exp(RN32(RN32(k) * -inc32)))); angle32 = RN32(RN32(p) * inv32_k).
  const float inc32 = static_cast<float>(rn64_log(max_ts / min_ts)) / static_cast<float>(den);
  auto inv32 = [&](std::size_t k) { return static_cast<float>(min_ts) * rn32_exp(static_cast<float>(k) * -inc32); };
  auto expect = [&](std::size_t c) -> Real {
    if (c >= 2 * h) return rf::make_real(0, kBits);
    const std::size_t k = c < h ? c : c - h;
    if (!emulated) return mp_sincos(mp_frequency(max_ts / min_ts, static_cast<double>(k), den, min_ts), pc.p, c < h);
    const float angle = static_cast<float>(pc.p) * inv32(k);
    Mp a(static_cast<double>(angle));
    if (c < h) mpfr_sin(a.v, a.v, MPFR_RNDN);
    else mpfr_cos(a.v, a.v, MPFR_RNDN);
    return a.real();
  };
  compare_preset(claim, s, pc.p, *rc::gen::inRange<std::size_t>(0, 64), expect, sample_columns(d, 32));
  // Last frequency exactly 1/max_timescale (exact regime, h >= 2): RN64(1e-4).
  const auto w = sinusoidal_frequencies(s);
  if (h >= 2 && !emulated) RC_ASSERT(w[h - 1] == 1.0 / max_ts);
  if (emulated)
    for (std::size_t k = 0; k < h; k += std::max<std::size_t>(1, h / 16)) RC_ASSERT(w[k] == static_cast<double>(inv32(k)));
}

POSENC_PROPERTY(SinusoidalPreset, FairseqMatchesGetEmbeddingAndMakePositions,
                {"SIN-PRE-4", "sinusoidal",
     "fairseq: row p col k < h = sin(p exp(-k ln(10000)/(h-1))), col h+k = cos(...), odd d -> zero last column, row "
     "padding_idx = 0, first token at row padding_idx + 1; emulated = the float32 steps",
     kConv + " item 4", Oracle::reference,
     {R::table_exact_f32_scaled, R::table_exact_f64_scaled, R::table_emulated_f32_scaled, R::table_emulated_f64_scaled,
      R::table_exact_values}}) {
  const std::size_t d = std::max<std::size_t>(4, *gen_dim(2048));
  const bool emulated = *rc::gen::arbitrary<bool>();
  SinusoidalSpec s = fairseq_spec(d);  // padding_idx = 1
  if (emulated) s.regime = Regime::emulated;
  const PositionCase pc = *gen_position(s);
  count_case(claim);
  tag(claim, dim_region(d) + (emulated ? " emulated" : " exact"));
  tag(claim, pc.region);
  // make_positions: first real token at row padding_idx + 1 = 2, padding tokens use row 1.
  RC_ASSERT(s.first_position == 2);
  RC_ASSERT(position_of_token(s, 0) == 2);
  RC_ASSERT(s.padding_row && *s.padding_row == 1);
  const std::size_t h = d / 2;
  // emb = ln(10000)/(h-1); w = exp(arange(h) * -emb); table[p] = [sin(p w) | cos(p w)] (+ zero column); row 1 = 0.
  // Emulated: emb64 = RN64(math.log(10000) / (h-1)); w32_k = RN32(exp(RN32(RN32(k) * RN32(-emb64)))).
  const double emb64 = rn64_log(10000.0) / static_cast<double>(h - 1);
  const float neg32 = static_cast<float>(-emb64);
  auto expect = [&](std::size_t c) -> Real {
    if (c >= 2 * h || pc.p == 1) return rf::make_real(0, kBits);
    const std::size_t k = c < h ? c : c - h;
    if (!emulated) return mp_sincos(mp_frequency(10000.0, static_cast<double>(k), static_cast<double>(h - 1)), pc.p, c < h);
    const float w = rn32_exp(static_cast<float>(k) * neg32);
    const float angle = static_cast<float>(pc.p) * w;
    Mp a(static_cast<double>(angle));
    if (c < h) mpfr_sin(a.v, a.v, MPFR_RNDN);
    else mpfr_cos(a.v, a.v, MPFR_RNDN);
    return a.real();
  };
  compare_preset(claim, s, pc.p, *rc::gen::inRange<std::size_t>(0, 64), expect, sample_columns(d, 32));
  // The padding row is zero wherever it falls in a table.
  std::vector<float> t3(3 * d);
  sinusoidal_table(s, 0, 3, std::span<float>(t3));
  for (std::size_t c = 0; c < d; ++c) RC_ASSERT(t3[d + c] == 0.0f);
}

// ---------------------------------------------------------------------------------------------------
// SIN-ERR-1: invalid input raises posenc::Error naming the parameter.

POSENC_CLAIM_TEST(SinusoidalErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"SIN-ERR-1", "sinusoidal",
                   "invalid arguments of the library's functions (positions, counts, buffer sizes, shifts, presets, "
                   "preset helpers) raise posenc::Error naming the parameter, value and accepted range (invalid spec "
                   "fields: SIN-SPEC-1)",
                   "DESIGN.md §7", Oracle::identity, {}}) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  std::vector<float> out(64 * 64);
  auto table = [&](const SinusoidalSpec& s, std::int64_t first, std::size_t count) {
    sinusoidal_table(s, first, count, std::span<float>(out));
  };
  auto with = [](auto f) {
    SinusoidalSpec s = vaswani_spec(8);
    f(s);
    return s;
  };
  expect_error(claim, "dim", [&] { table(with([](auto& s) { s.dim = 0; }), 0, 1); }, "d = 0");
  expect_error(claim, "dim", [&] { table(with([](auto& s) { s.dim = 7; }), 0, 1); }, "odd d with odd_dim = reject");
  expect_error(claim, "dim", [&] { validate(vaswani_spec(9)); }, "vaswani odd d");
  expect_error(claim, "dim", [&] { validate(fairseq_spec(2)); }, "fairseq d = 2");
  expect_error(claim, "dim", [&] { table(with([](auto& s) { s.dim = kMaxDim + 2; }), 0, 1); }, "d too large");
  for (double b : {nan, inf, -inf, 0.0, -2.0, 1.0, 0.5})
    expect_error(claim, "base", [&] { table(with([b](auto& s) { s.base = b; }), 0, 1); }, "bad base");
  expect_error(claim, "min_timescale", [&] { tensor2tensor_spec(64, 0.0, 1.0e4); }, "min_timescale = 0");
  expect_error(claim, "min_timescale", [&] { tensor2tensor_spec(64, nan, 1.0e4); }, "min_timescale NaN");
  expect_error(claim, "max_timescale", [&] { tensor2tensor_spec(64, 10.0, 10.0); }, "min_timescale = max_timescale");
  expect_error(claim, "max_timescale", [&] { tensor2tensor_spec(64, 10.0, 1.0); }, "min_timescale > max_timescale");
  expect_error(claim, "max_timescale", [&] { tensor2tensor_spec(64, 1.0, inf); }, "max_timescale inf");
  expect_error(claim, "min_timescale", [&] { table(with([](auto& s) { s.min_timescale = -1.0; }), 0, 1); }, "negative min_timescale");
  expect_error(claim, "position", [&] { table(vaswani_spec(8), -1, 1); }, "negative first position");
  const std::int64_t neg[] = {3, -5};
  expect_error(claim, "position", [&] { sinusoidal_rows(vaswani_spec(8), std::span<const std::int64_t>(neg), std::span<float>(out)); },
               "negative position in rows");
  expect_error(claim, "position", [&] { table(vaswani_spec(8), kMaxPosition + 1, 1); }, "position beyond 2^40");
  expect_error(claim, "count", [&] { table(vaswani_spec(8), kMaxPosition - 2, 8); }, "range beyond 2^40");
  expect_error(claim, "count", [&] { table(vaswani_spec(8), 0, 0); }, "count = 0");
  expect_error(claim, "count", [&] { checked_table_elements(with([](auto& s) { s.dim = 1u << 20; s.signed_positions = true; }),
                                                      -kMaxPosition, std::size_t{1} << 41, 8); },
               "count * d overflows");
  expect_error(claim, "out.size()", [&] { sinusoidal_table(vaswani_spec(8), 0, 2, std::span<float>(out.data(), 15)); }, "output too small");
  expect_error(claim, "out.size()", [&] {
    std::vector<double> o(7);
    sinusoidal_table(vaswani_spec(8), 0, 1, std::span<double>(o));
  }, "f64 output too small");
  expect_error(claim, "positions.size()", [&] { sinusoidal_rows(vaswani_spec(8), std::span<const std::int64_t>(), std::span<float>(out)); },
               "no positions");
  expect_error(claim, "regime", [&] {
    SinusoidalSpec s = fairseq_spec(8);
    s.regime = Regime::emulated;
    shift_operator(s, 1);
  }, "shift operator of an emulated table");
  expect_error(claim, "k", [&] { shift_operator(vaswani_spec(8), std::int64_t{1} << 42); }, "shift beyond 2^41");
  const ShiftOperator t = shift_operator(vaswani_spec(8), 3);
  expect_error(claim, "block.size()", [&] { apply_shift(t, std::span<float>(out.data(), 15), 2); }, "apply_shift block too small");
  expect_error(claim, "rows", [&] { apply_shift(t, std::span<float>(out.data(), 16), 0); }, "apply_shift rows = 0");
  expect_error(claim, "out.size()", [&] {
    std::vector<float> small(3);
    dense_shift_matrix(t, std::span<float>(small));
  }, "dense matrix output too small");
  expect_error(claim, "out.size()", [&] {
    std::vector<float> g(3);
    gram_matrix(std::span<const float>(out.data(), 16), 2, 8, std::span<float>(g));
  }, "gram output too small");
  expect_error(claim, "block.size()", [&] {
    std::vector<float> g(4);
    gram_matrix(std::span<const float>(out.data(), 15), 2, 8, std::span<float>(g));
  }, "gram block too small");
  expect_error(claim, "preset", [&] { sinusoidal_preset("bert", 64); }, "unknown preset");
  expect_error(claim, "padding_idx", [&] { fairseq_spec(64, -1); }, "negative padding_idx");
}

}  // namespace claims_sinusoidal

// ---------------------------------------------------------------------------------------------------
// Regression cases: counterexamples the properties found, kept as named tests.
namespace claims_sinusoidal {

// Found by Sinusoidal.FastTableMatchesOracleAtHardPositions: positions whose angle p w_k is within ~1e-12
// of a multiple of 2 pi (convergent denominators of 2 w_k / pi), where cos(p w_k) = 1 - O(1e-25); the
// complex product s_a c_j + c_a s_j in double returned 1 + 2^-52 (0x1.0000000000001p+0):
//   vaswani/marian d=64, p = 1052667157050, pair 0 (lib of 11:40, table started at p - 33);
//   tensor2tensor/fairseq d=7, p = 29038651959, pair 1 (cos slot, column 4) (lib of 11:45, aligned anchors).
POSENC_REGRESSION(SinusoidalRegression, F64CosineNearOneAtConvergentOfTwoOverPiStaysWithinOne, "SIN-BND-1") {
  struct Case {
    SinusoidalSpec spec;
    std::int64_t p;
  };
  for (const Case& c : {Case{vaswani_spec(64), 1052667157050}, Case{marian_spec(64), 1052667157050},
                        Case{tensor2tensor_spec(7), 29038651959}, Case{fairseq_spec(7), 29038651959}}) {
    for (std::size_t before : {std::size_t{0}, std::size_t{33}, std::size_t{52}}) {
      const std::size_t d = c.spec.dim;
      std::vector<double> block((before + 1) * d);
      sinusoidal_table(c.spec, c.p - static_cast<std::int64_t>(before), before + 1, std::span<double>(block));
      count_case(claim);
      for (std::size_t col = 0; col < d; ++col) {
        const double y = block[before * d + col];
        if (auto f = check(claim, R::table_range, y, rf::make_real(std::isnan(y) ? y : std::clamp(y, -1.0, 1.0), kBits), [&] {
              return spec_label(c.spec) + " dtype=f64 p=" + position_label(c.p) + " table from p-" + std::to_string(before) +
                     " col=" + std::to_string(col);
            }))
          ADD_FAILURE() << *f;
      }
    }
  }
}

// Found by Sinusoidal.PositionZeroIsZeroOnSinSlotsAndOneOnCosSlots (lib of 11:40, anchors at the table's
// first row): with signed positions, a table that started at -1 put p = 0 at offset 1 of its block and
// the complex product of the anchor at -1 with J[1] returned sin = 2.34e-17 instead of 0. (Fixed by the
// lib of 11:45, whose anchors are multiples of B, so 0 is always an anchor.)
POSENC_REGRESSION(SinusoidalRegression, PositionZeroInsideABlockIsExact, "SIN-BND-2") {
  SinusoidalSpec s = vaswani_spec(4);
  s.dim = 3;
  s.odd_dim = OddDim::zero_pad;
  s.signed_positions = true;
  for (std::size_t before : {std::size_t{1}, std::size_t{5}, std::size_t{63}}) {
    std::vector<double> block((before + 1) * s.dim);
    sinusoidal_table(s, -static_cast<std::int64_t>(before), before + 1, std::span<double>(block));
    count_case(claim);
    const double* row = block.data() + before * s.dim;
    const Real zero = rf::make_real(0, kBits), one = rf::make_real(1, kBits);
    auto in = [&] { return spec_label(s) + " dtype=f64 table from -" + std::to_string(before) + " p=0"; };
    if (auto f = check(claim, R::table_exact_values, row[0], zero, [&] { return in() + " sin slot"; }))
      ADD_FAILURE() << *f;
    if (auto f = check(claim, R::table_exact_values, row[1], one, [&] { return in() + " cos slot"; }))
      ADD_FAILURE() << *f;
  }
}


// SIN-SPEC-1..4: the generic contract of the spec description (support/spec_contract.hpp).
POSENC_SPEC_CONTRACT(posenc::SinusoidalSpec, Sinusoidal, "SIN")

// SIN-REPRO-2: with signed positions, PE(-p) is the exact reflection of PE(p).
POSENC_PROPERTY(Sinusoidal, NegativePositionsAreTheExactReflection,
                {"SIN-REPRO-2", "sinusoidal",
                 "with signed positions, the row of -p is the row of p with every sine negated and every cosine (and "
                 "zero column) equal, bit for bit: f32 and f64, exact and emulated regimes, table ranges that end at "
                 "or cross 0, position lists, 1 or 2 threads, streamed (> 4 MiB) or not",
                 "issue Reliability (determinism and symmetry): f64 cos(-p w) and cos(p w) differed in the last bit",
                 Oracle::differential, {R::table_reproducible}}) {
  SpecCase sc = *gen_any_spec(512, true);
  const bool big = *rc::gen::inRange(0, 10) == 0;  // > 4 MiB of f32: the streaming paths
  if (big) sc.spec = at_dim(sc.spec, 256);
  SinusoidalSpec s = sc.spec;
  s.signed_positions = true;
  s.padding_row.reset();  // a padding row is all zeros at one position only: not symmetric by definition
  s.first_position = 0;
  const std::size_t count = big ? (std::size_t{4} << 20) / (4 * s.dim) + *rc::gen::inRange<std::size_t>(1, 100)
                                : *rc::gen::inRange<std::size_t>(1, 300);
  const PositionCase pc = *gen_position(s, 0, max_abs_position(s));
  const std::int64_t a = pc.p, last = a + static_cast<std::int64_t>(count) - 1;
  RC_PRE(in_range(s, -last, last));
  const int threads = *rc::gen::inRange(1, 3);
  const bool streaming = *rc::gen::arbitrary<bool>();
  // The negative table also holds 0 .. last (it crosses 0) where that is small enough.
  const bool crossing = *rc::gen::arbitrary<bool>() && last < 4096;
  count_case(claim);
  tag(claim, sc.region);
  tag(claim, pc.region);
  tag(claim, big ? "table > 4 MiB" : "table small");
  tag(claim, crossing ? "range crosses 0" : "range negative");
  const std::size_t d = s.dim;
  std::vector<char> sin_column(d, 0);
  for (std::size_t k = 0; k < pair_count(s); ++k) sin_column[sin_slot(s, k)] = 1;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const SinusoidalPlan plan = make_plan(s);
    const TableOptions opt{.threads = threads, .streaming_stores = streaming};
    std::vector<T> pos(count * d);  // rows of a .. last
    plan.table(a, count, std::span<T>(pos), opt);
    // neg: rows of -last .. -a (then, when crossing, -a+1 .. last as well)
    const std::size_t ncount = crossing && last < 4096 ? static_cast<std::size_t>(2 * last + 1) : count;
    std::vector<T> neg(ncount * d);
    plan.table(-last, ncount, std::span<T>(neg), opt);
    // list: -a .. -last in descending order of magnitude, as a list
    std::vector<std::int64_t> list(count);
    for (std::size_t i = 0; i < count; ++i) list[i] = -(a + static_cast<std::int64_t>(i));
    std::vector<T> rows(count * d);
    plan.rows(list, std::span<T>(rows), opt);
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t p = a + static_cast<std::int64_t>(i);
      if (p == 0) continue;  // sin(0) = +0: its negation -0 is not the same bits
      const T* rp = pos.data() + i * d;
      const T* rn = neg.data() + static_cast<std::size_t>(last - p) * d;  // row of -p
      const T* rl = rows.data() + i * d;
      for (std::size_t col = 0; col < d; ++col) {
        const bool is_sin = sin_column[col] != 0;
        const T want = is_sin ? T(-rp[col]) : rp[col];
        for (const T* got : {rn, rl}) {
          if (std::memcmp(&got[col], &want, sizeof(T)) == 0) continue;
          const std::string in = spec_label(s) + " dtype=" + (sizeof(T) == 4 ? "f32" : "f64") + " p=" +
                                 position_label(p) + " col=" + std::to_string(col) + (is_sin ? " (sin)" : " (cos/zero)") +
                                 (got == rl ? " (plan.rows)" : " (table)") + " threads=" + std::to_string(threads) +
                                 (streaming ? " streaming" : "");
          const Real ref = rf::make_real(static_cast<double>(want), kBits);
          if (auto f = check(claim, R::table_reproducible, static_cast<double>(got[col]), ref, [&] { return in; })) RC_FAIL(*f);
          RC_FAIL("PE(-p) is not the reflection of PE(p) at " + in);
        }
      }
    }
  };
  run(0.0f);
  run(0.0);
}

}  // namespace claims_sinusoidal
