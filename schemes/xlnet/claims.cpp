// XLNet relative attention claims (XLNET-*), as RapidCheck properties and enumerated tests. Reference claims compare
// the fast path with the MPFR oracle (include/oracle/posenc/reference/xlnet.hpp: the table from XLNet's own
// formula, correctly rounded scores with the segment term); identity claims are laws checked on the oracle or exact
// equalities of the fast path. Tolerances: xlnet/budget.cpp and the scores bound of verify/relative_budget.hpp.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/xlnet.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/xlnet.hpp"
#include "schemes/sinusoidal/budget.hpp"
#include "support/bias_measure.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/relative_measure.hpp"
#include "schemes/xlnet/measure.hpp"
#include "support/spec_contract.hpp"
#include "schemes/xlnet/budget.hpp"
#include "schemes/xlnet/cases.hpp"
#include "schemes/xlnet/check.hpp"

namespace claims_xlnet {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace relative = posenc::test::relative;  // the measuring harness (the checker is verify::relative)
using verify::relative::TableInput;
namespace rf = posenc::reference;
namespace ca = posenc::cases::xlnet;
using relative::Call;
using rf::Real;
using R = XlnetRow;

const std::string kConv =
    "CONVENTIONS.md §2.9; HF models/xlnet/modeling_xlnet.py relative_positional_encoding, rel_attn_core, "
    "rel_shift_bnij, create_mask";

std::string label(const XlnetSpec& s) { return describe(s); }

rc::Gen<XlnetSpec> spec_gen(std::size_t max_dm, std::size_t max_d) {
  return rc::gen::exec([max_dm, max_d] {
    XlnetSpec s = *rc::gen::arbitrary<XlnetSpec>();
    s.d_model = std::min(s.d_model, max_dm);
    s.d_head = std::min(s.d_head, max_d);
    return s;
  });
}

XlnetWeights weights_gen(const XlnetSpec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return {relative::random_values(hd), relative::random_values(hd), relative::random_values(hd),
          relative::random_values(2 * hd), relative::random_values(s.d_model * hd)};
}

XlnetWeights fixed_weights(const XlnetSpec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return {std::vector<double>(hd, 0.25), std::vector<double>(hd, 0.25), std::vector<double>(hd, 0.25),
          std::vector<double>(2 * hd, 0.25), std::vector<double>(s.d_model * hd, 0.25)};
}

rc::Gen<Call> call_gen(std::size_t max_q, std::size_t max_m) {
  return relative::call_gen(max_q, max_m, ca::kHardQueryLengths, ca::kMemoryLengths, true);
}

template <class T>
std::vector<T> table_of(const XlnetPlan& plan, std::size_t Lq, std::size_t Lk, const TableOptions& o = {}) {
  std::vector<T> t(xlnet_table_rows(plan.spec(), Lq, Lk) * plan.spec().d_model);
  plan.table(Lq, Lk, std::span<T>(t), o);
  return t;
}


using xlnet_measure::entry_fn;  // schemes/xlnet/measure.hpp
using relative::Scores;
Scores run_scores(const XlnetPlan& plan, const Call& c, const std::vector<double>& q, const std::vector<double>& k,
                  std::optional<double> scale, RelativeScoresForm form, const TableOptions& o = {}) {
  const BiasGeometry g = c.view();
  return relative::run_scores(xlnet_scores_size(plan.spec(), g), q, k,
                              [&](auto q, auto k, auto out) { plan.scores(q, k, g, c.types, scale, out, o, form); });
}

// ---- the table ----------------------------------------------------------------------------------------------

// XLNET-TABLE-1
POSENC_PROPERTY(Xlnet, TableMatchesOracle,
                {"XLNET-TABLE-1", "xlnet",
                 "XlnetPlan::table(qlen, klen) row c = [sin | cos](pos_seq[c] 10000^(-2k/d_model)), pos_seq = klen .. "
                 "-qlen + 1 (bi) or klen .. 0 (uni), negated for the backward direction, clamped to [-clamp_len, "
                 "clamp_len]: exact regime within xlnet.table.exact.{f32,f64} of the oracle's real value, emulated the "
                 "oracle's float32 number (within 1 ulp); rows 0, the last, around +-clamp_len and random ones, every "
                 "column, klen up to 2^20 (d_model <= 8 beyond 400), 1 to 3 threads",
                 kConv, Oracle::reference, {R::table_exact_f32, R::table_exact_f64, R::table_emulated}}) {
  const std::size_t Lk = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(1, 400),
                                         rc::gen::inRange<std::size_t>(400, std::size_t{1} << 20));
  const XlnetSpec s = *spec_gen(Lk < 400 ? 48 : 8, 4);  // long calls: a narrow table (few values to write)
  const std::size_t Lq = *rc::gen::inRange<std::size_t>(1, std::min<std::size_t>(Lk, 400) + 1);
  const XlnetPlan plan(s, weights_gen(s));
  const TableOptions o{.threads = *rc::gen::inRange(1, 4)};
  const auto t32 = table_of<float>(plan, Lq, Lk, o);
  const auto t64 = table_of<double>(plan, Lq, Lk, o);
  const bool emu = s.regime == Regime::emulated;
  tag(claim, std::string(emu ? "emulated " : "exact ") + std::string(to_string(s.attn_type)) + " " +
                 std::string(to_string(s.direction)));
  count_case(claim);
  const std::size_t rows = xlnet_table_rows(s, Lq, Lk), dm = s.d_model;
  std::vector<std::size_t> must{0, rows - 1, Lk, Lk - 1};
  if (s.clamp_len > 0)
    for (std::int64_t sign : {-1, 1})
      for (std::int64_t dc : {-1, 0, 1}) {
        const std::int64_t c = static_cast<std::int64_t>(Lk) - sign * s.clamp_len + dc;
        if (c >= 0 && c < static_cast<std::int64_t>(rows)) must.push_back(static_cast<std::size_t>(c));
      }
  for (std::size_t c : sample_indices(rows, 6, must)) {
    const std::int64_t p = xlnet_position(s, c, Lq, Lk);
    RC_ASSERT(p == rf::xlnet_pos_seq(s, c, Lq, Lk));
    for (std::size_t m = 0; m < dm; ++m) {
      const Real e = rf::xlnet_table_value(s, p, m);
      auto what = [&] { return label(s) + " Lq=" + std::to_string(Lq) + " Lk=" + std::to_string(Lk) + " c=" + std::to_string(c) + " m=" + std::to_string(m); };
      if (auto f = check(claim, emu ? R::table_emulated : R::table_exact_f32, t32[c * dm + m], e, what)) RC_FAIL(*f);
      if (auto f = check(claim, emu ? R::table_emulated : R::table_exact_f64, t64[c * dm + m], e, what)) RC_FAIL(*f);
    }
  }
}

// XLNET-MIRROR-1
POSENC_PROPERTY(Xlnet, BackwardHalfIsTheMirrorOfTheForwardOne,
                {"XLNET-MIRROR-1", "xlnet",
                 "bi_data: the backward table (pos_seq negated) is the forward one with its sin half negated, bit for "
                 "bit, f32 and f64, both regimes, clamped or not (clamp_len clamps both signs: every pos_seq entry in "
                 "[-clamp_len, clamp_len]); on the oracle, the backward score equals the forward score with the sin "
                 "rows of r negated (R_bwd r = R_fwd r'), exactly",
                 kConv, Oracle::identity, {R::mirror, R::identity}}) {
  XlnetSpec s = *spec_gen(16, 6);
  const Call c = *call_gen(64, 64);
  s.direction = XlnetDirection::forward;
  XlnetSpec b = s;
  b.direction = XlnetDirection::backward;
  const XlnetWeights w = weights_gen(s);
  const XlnetPlan pf(s, w), pb(b, w);
  const Sink sink = claim_sink(claim);
  count_case(claim);
  const std::size_t rows = xlnet_table_rows(s, c.Lq, c.Lk), dm = s.d_model;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t p = xlnet_position(s, r, c.Lq, c.Lk);
    RC_ASSERT(xlnet_position(b, r, c.Lq, c.Lk) == -p);
    if (s.clamp_len > 0) RC_ASSERT(p >= -s.clamp_len && p <= s.clamp_len);
  }
  const auto f32 = table_of<float>(pf, c.Lq, c.Lk), b32 = table_of<float>(pb, c.Lq, c.Lk);
  const auto f64 = table_of<double>(pf, c.Lq, c.Lk), b64 = table_of<double>(pb, c.Lq, c.Lk);
  for (std::size_t r : sample_indices(rows, 16))
    for (std::size_t m = 0; m < dm; ++m) {
      // position 0 is its own mirror: the same row (sin 0 = +0 on both sides)
      const double sg = m < dm / 2 && xlnet_position(s, r, c.Lq, c.Lk) != 0 ? -1.0 : 1.0;
      auto what = [&] { return label(s) + " row=" + std::to_string(r) + " m=" + std::to_string(m); };
      emit(sink, R::mirror, b32[r * dm + m], Real(sg * f32[r * dm + m]), what);
      emit(sink, R::mirror, b64[r * dm + m], Real(sg * f64[r * dm + m]), what);
    }
  XlnetWeights wr = w;
  const std::size_t hd = s.heads * s.d_head;
  for (std::size_t m = 0; m < dm / 2; ++m)
    for (std::size_t x = 0; x < hd; ++x) wr.r[m * hd + x] = -wr.r[m * hd + x];
  const rf::XlnetOracle ob(b, w), of(s, wr);
  const std::vector<double> q = relative::random_values(c.Lq * s.d_head), k = relative::random_values(c.Lk * s.d_head);
  for (std::size_t i : sample_indices(c.Lq, 4))
    for (std::size_t j : sample_indices(c.Lk, 6)) {
      if (!ob.defined(i, j, c.Lq, c.Lk)) continue;
      const auto qi = std::span<const double>(q).subspan(i * s.d_head, s.d_head);
      const auto kj = std::span<const double>(k).subspan(j * s.d_head, s.d_head);
      const Real x = ob.score(qi, kj, 0, i, j, c.Lq, c.Lk, c.types), y = of.score(qi, kj, 0, i, j, c.Lq, c.Lk, c.types);
      emit_real(sink, R::identity, x, y, static_cast<double>(x),
                [&] { return label(s) + " " + c.label() + " i=" + std::to_string(i) + " j=" + std::to_string(j); });
    }
}

// ---- indices and the rel_shift -----------------------------------------------------------------------------

// XLNET-INDEX-1
POSENC_PROPERTY(Xlnet, IndicesAreTheRowOfTheDistanceOrMinusOne,
                {"XLNET-INDEX-1", "xlnet",
                 "XlnetPlan::indices holds c(i, j) = qlen - i + j where the oracle says the entry is defined (bi: "
                 "every entry; uni: j <= q_i) and -1 elsewhere, every entry, Lq <= klen (memory up to 300), 1 to 3 "
                 "threads; the row's pos_seq value is sigma (q_i - j) before the clamp",
                 kConv, Oracle::reference, {R::index}}) {
  const XlnetSpec s = *spec_gen(4, 2);
  const Call c = *call_gen(300, 300);
  const XlnetPlan plan(s, weights_gen(s));
  const rf::XlnetOracle o(s, plan.weights());
  std::vector<std::int32_t> m(c.Lq * c.Lk);
  plan.indices(c.view(), std::span<std::int32_t>(m), {.threads = *rc::gen::inRange(1, 4)});
  count_case(claim);
  XlnetSpec unclamped = s;
  unclamped.clamp_len = -1;
  const std::int64_t sigma = s.direction == XlnetDirection::forward ? 1 : -1;
  for (std::size_t i = 0; i < c.Lq; ++i)
    for (std::size_t j = 0; j < c.Lk; ++j) {
      const bool def = o.defined(i, j, c.Lq, c.Lk);
      const std::int64_t want = def ? static_cast<std::int64_t>(c.Lq + j) - static_cast<std::int64_t>(i) : -1;
      if (auto f = check(claim, R::index, static_cast<double>(m[i * c.Lk + j]), Real(static_cast<double>(want)),
                         [&] { return label(s) + " " + c.label() + " i=" + std::to_string(i) + " j=" + std::to_string(j); }))
        RC_FAIL(*f);
      if (def)
        RC_ASSERT(xlnet_position(unclamped, static_cast<std::size_t>(want), c.Lq, c.Lk) ==
                  sigma * (static_cast<std::int64_t>(c.Lk - c.Lq + i) - static_cast<std::int64_t>(j)));
    }
}

// XLNET-SHIFT-1
POSENC_CLAIM_TEST(XlnetShift, RelShiftBnijIsTheDistanceRowOnDefinedEntriesAndJunkElsewhere,
                  {"XLNET-SHIFT-1", "xlnet",
                   "rel_shift_bnij (viewed [rows][qlen], first row dropped, viewed [qlen][rows - 1], first klen "
                   "columns: xlnet_rel_shift, bit for bit) of any [qlen][rows] matrix x equals x[i][c(i, j)] at every "
                   "defined entry (bi: all of them, the extra row of pos_seq = klen never read; uni: j <= q_i); at "
                   "uni's others it holds x[i + 1][j - q_i - 1], so for x of distinct entries the entries that are not "
                   "x[i][c(i, j)] are exactly the ones the plan's indices mark -1: memory M in {0, 1, 7, 128}, qlen in "
                   "{1, 2, 5, 64, 257}, bi and uni, f32 and f64",
                   kConv, Oracle::identity, {R::rel_shift, R::index}}) {
  const Sink sink = claim_sink(claim, FailWith::gtest);
  for (XlnetAttnType at : {XlnetAttnType::bi, XlnetAttnType::uni}) {
    const XlnetSpec s{.d_model = 2, .heads = 1, .d_head = 1, .attn_type = at};
    const XlnetPlan plan(s, fixed_weights(s));
    for (std::size_t M : ca::kMemoryLengths)
      for (std::size_t Lq : {1, 2, 5, 64, 257}) {
        const std::size_t Lk = M + Lq, rows = xlnet_table_rows(s, Lq, Lk);
        std::vector<double> x(Lq * rows), y(Lq * Lk);
        for (std::size_t t = 0; t < x.size(); ++t) x[t] = 1.0 + static_cast<double>(t);
        xlnet_rel_shift(std::span<const double>(x), Lq, rows, Lk, std::span<double>(y));
        std::vector<float> x32(x.begin(), x.end()), y32(Lq * Lk);
        xlnet_rel_shift(std::span<const float>(x32), Lq, rows, Lk, std::span<float>(y32));
        std::vector<std::int32_t> idx(Lq * Lk);
        plan.indices({Lq, Lk}, std::span<std::int32_t>(idx));
        count_case(claim);
        for (std::size_t i = 0; i < Lq; ++i)
          for (std::size_t j = 0; j < Lk; ++j) {
            const std::size_t qi = M + i, at2 = i * Lk + j;
            const bool def = at == XlnetAttnType::bi || j <= qi;
            const double want = def ? x[i * rows + (Lq - i + j)] : x[(i + 1) * rows + (j - qi - 1)];
            auto what = [&] {
              return std::string(to_string(at)) + " M=" + std::to_string(M) + " Lq=" + std::to_string(Lq) +
                     " i=" + std::to_string(i) + " j=" + std::to_string(j);
            };
            emit(sink, R::rel_shift, y[at2], Real(want), what);
            emit(sink, R::rel_shift, y32[at2], Real(static_cast<double>(static_cast<float>(want))), what);
            emit(sink, R::index, static_cast<double>(idx[at2] >= 0), Real(def ? 1.0 : 0.0), what);
          }
      }
  }
}

// ---- scores -------------------------------------------------------------------------------------------------

// XLNET-SCORES-1
POSENC_PROPERTY(Xlnet, ScoresMatchOracle,
                {"XLNET-SCORES-1", "xlnet",
                 "scores = scale ((q + r_w_bias).k + (q + r_r_bias).R[c(i, j)] r + (q + r_s_bias).seg_embed[s(i, "
                 "j)]) from XlnetPlan::scores, blas and direct forms, within the xlnet.scores bound of the oracle's "
                 "correctly rounded value, f32 and f64, both regimes, bi and uni, both directions, clamp_len, "
                 "same_length, token types (memory keys type 0) or none, memory up to 300, Lq up to 300, key masks, "
                 "1 to 3 heads, d_head <= 12, d_model <= 16; entries the oracle calls undefined or hidden are -inf",
                 kConv, Oracle::reference, {R::scores_f32, R::scores_f64, R::masked}}) {
  const XlnetSpec s = *spec_gen(16, 12);
  const Call c = *call_gen(300, 300);
  const std::optional<double> scale = *rc::gen::element<std::optional<double>>(std::nullopt, std::nullopt, 0.5);
  const RelativeScoresForm form = *rc::gen::element(RelativeScoresForm::blas, RelativeScoresForm::direct);
  const XlnetWeights w = weights_gen(s);
  const XlnetPlan plan(s, w);
  const std::vector<double> q = relative::random_values(s.heads * c.Lq * s.d_head),
                            k = relative::random_values(s.heads * c.Lk * s.d_head);
  const Scores sc = run_scores(plan, c, q, k, scale, form);
  tag(claim, std::string(to_string(s.regime)) + " " + std::string(to_string(s.attn_type)) + " " +
                 std::string(to_string(form)) + (c.types.empty() ? "" : " segments"));
  count_case(claim);
  const rf::XlnetOracle o(s, w);
  const std::vector<double> table = rf::xlnet_table_f64(s, c.Lq, c.Lk);
  const bool emu = s.regime == Regime::emulated;
  const relative::BoundParams b{.d = s.d_head, .dm = s.d_model, .terms = c.types.empty() ? 2u : 3u,
                                .abs_scale = std::fabs(scale ? *scale : 1 / std::sqrt(static_cast<double>(s.d_head))),
                                .form = form, .rho32 = relative_table_rho(DType::f32, emu),
                                .rho64 = relative_table_rho(DType::f64, emu)};
  relative::measure_scores(claim_sink(claim), budget(R::scores_f32), budget(R::scores_f64), budget(R::masked), s.heads,
                           c.Lq, c.Lk, entry_fn(o, w, c, table, q, k, scale), b, sc.s32, sc.s64,
                           [&] { return label(s) + " " + c.label(); }, 8, 12);
}

// XLNET-SEGMENT-1
POSENC_PROPERTY(Xlnet, SegmentTermSeesOnlySameOrDifferent,
                {"XLNET-SEGMENT-1", "xlnet",
                 "the segment term depends on the token types only through same / different segment (memory keys "
                 "type 0): relabelling the queries' types by a permutation that keeps 0 (any permutation when there is "
                 "no memory) leaves every score unchanged, bit for bit on the fast path (f32, f64) and exactly on the "
                 "oracle; and it is (q + r_s_bias).(seg_embed[1] - seg_embed[0]) apart between a same- and a "
                 "different-segment key with the same content and distance term",
                 kConv, Oracle::identity, {R::identity}}) {
  const XlnetSpec s = *spec_gen(8, 6);
  Call c = *call_gen(48, 16);
  if (c.types.empty()) {
    c.types.resize(c.Lq);
    for (auto& v : c.types) v = *rc::gen::inRange<std::int64_t>(0, 3);
  }
  const bool memory = c.Lk > c.Lq;
  // 0 -> 0 with memory; otherwise a random permutation of {0, 1, 2}
  std::vector<std::int64_t> perm{0, 1, 2};
  if (memory) {
    if (*rc::gen::arbitrary<bool>()) std::swap(perm[1], perm[2]);
  } else {
    perm = *rc::gen::element(std::vector<std::int64_t>{1, 2, 0}, std::vector<std::int64_t>{2, 0, 1},
                             std::vector<std::int64_t>{1, 0, 2});
  }
  Call d = c;
  for (auto& v : d.types) v = perm[static_cast<std::size_t>(v)];
  const XlnetWeights w = weights_gen(s);
  const XlnetPlan plan(s, w);
  const std::vector<double> q = relative::random_values(s.heads * c.Lq * s.d_head),
                            k = relative::random_values(s.heads * c.Lk * s.d_head);
  count_case(claim);
  const Scores a = run_scores(plan, c, q, k, std::nullopt, RelativeScoresForm::blas),
               b = run_scores(plan, d, q, k, std::nullopt, RelativeScoresForm::blas);
  RC_ASSERT(a.same_bits(b));
  const rf::XlnetOracle o(s, w);
  const Sink sink = claim_sink(claim);
  const std::size_t dd = s.d_head;
  for (std::size_t i : sample_indices(c.Lq, 4))
    for (std::size_t j : sample_indices(c.Lk, 6)) {
      if (!o.defined(i, j, c.Lq, c.Lk)) continue;
      const auto qi = std::span<const double>(q).subspan(i * dd, dd), kj = std::span<const double>(k).subspan(j * dd, dd);
      const Real x = o.score(qi, kj, 0, i, j, c.Lq, c.Lk, c.types), y = o.score(qi, kj, 0, i, j, d.Lq, d.Lk, d.types);
      emit_real(sink, R::identity, x, y, static_cast<double>(x),
                [&] { return label(s) + " " + c.label() + " relabelled i=" + std::to_string(i) + " j=" + std::to_string(j); });
    }
}

// ---- the segment term ef alone ------------------------------------------------------------------------------

struct Ef {
  std::vector<float> f32;
  std::vector<double> f64;
  bool same_bits(const Ef& o) const {
    return std::memcmp(f32.data(), o.f32.data(), f32.size() * sizeof(float)) == 0 &&
           std::memcmp(f64.data(), o.f64.data(), f64.size() * sizeof(double)) == 0;
  }
};

Ef run_segment(const XlnetPlan& plan, const Call& c, const std::vector<double>& q, const TableOptions& o = {}) {
  const std::size_t n = plan.spec().heads * c.Lq * c.Lk;
  const std::vector<float> q32(q.begin(), q.end());
  Ef e{std::vector<float>(n), std::vector<double>(n)};
  plan.segment_term(std::span<const float>(q32), c.Lq, c.Lk, c.types, std::span<float>(e.f32), o);
  plan.segment_term(std::span<const double>(q), c.Lq, c.Lk, c.types, std::span<double>(e.f64), o);
  return e;
}

// The oracle of ef: the spec's bi copy (uni leaves j > q_i undefined in score; ef does not depend on attn_type) with
// every weight but r_s_bias and seg_embed 0; its score with k = 0 and scale 1 is then exactly <q_i + s_h, g> (a dyadic
// number, correctly rounded at 256 bits) and its score_magnitude is S = sum_e |q_e + s_e| |g_e|.
rf::XlnetOracle segment_oracle(const XlnetSpec& s, const XlnetWeights& w) {
  XlnetSpec b = s;
  b.attn_type = XlnetAttnType::bi;
  b.same_length = false;
  const std::size_t hd = s.heads * s.d_head;
  return rf::XlnetOracle(b, XlnetWeights{std::vector<double>(hd, 0.0), std::vector<double>(hd, 0.0), w.r_s_bias,
                                         w.seg_embed, std::vector<double>(s.d_model * hd, 0.0)});
}

// XLNET-SEGMENT-2
POSENC_PROPERTY(Xlnet, SegmentTermIsTheSegmentDotProductWithinBudget,
                {"XLNET-SEGMENT-2", "xlnet",
                 "XlnetPlan::segment_term is HF's ef (rel_attn_core, unscaled, no mask): ef[h][i][j] = <q_i + "
                 "r_s_bias_h, seg_embed[s(i, j)][h]>, s(i, j) = 1 iff t_i != type(j), memory keys type 0; f32 and f64 "
                 "within xlnet.segment.{f32,f64} (gamma_{d+1}(u) S + (2d + 1) 2^(emin - p)) of the oracle's exact value "
                 "at sampled entries of random calls (memory up to 300, token types 0 .. 3, heads 1 .. 3, d_head <= 12, "
                 "bi and uni); bit-identical for 1 and 2 or 3 threads; at every memory key bit for bit the value at a "
                 "key of type 0 of the same row",
                 kConv, Oracle::reference, {R::segment_f32, R::segment_f64}}) {
  XlnetSpec s = *spec_gen(8, 12);
  s.heads = std::min<std::size_t>(s.heads, 3);  // presets bring 12 or 16
  const bool big = *rc::gen::inRange(0, 3) == 0;  // big calls: enough entries (>= 2^15) for the threads to start
  Call c = big ? *call_gen(300, 300) : *call_gen(48, 16);
  c.key_mask.clear();
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  c.types.resize(c.Lq);
  for (auto& t : c.types) t = static_cast<std::int64_t>(rng() % 4);
  const XlnetWeights w = weights_gen(s);
  const XlnetPlan plan(s, w);
  const std::size_t H = s.heads, d = s.d_head, Lq = c.Lq, Lk = c.Lk, M = Lk - Lq;
  const std::vector<double> q = relative::random_values(H * Lq * d);
  const TableOptions one{.threads = 1}, many{.threads = *rc::gen::inRange(2, 4)};
  const Ef a = run_segment(plan, c, q, one), b = run_segment(plan, c, q, many);
  RC_ASSERT(a.same_bits(b));
  tag(claim, std::string(M > 0 ? "memory" : "no memory") + (H * Lq * Lk >= (std::size_t{1} << 15) ? " threads" : ""));
  count_case(claim);
  // Memory keys have type 0: their entries are those of a type-0 key of the row, bit for bit.
  std::size_t zero_key = Lk;
  for (std::size_t j = M; j < Lk && zero_key == Lk; ++j)
    if (c.types[j - M] == 0) zero_key = j;
  if (M > 0 && zero_key < Lk) {
    tag(claim, "memory next to a type-0 key");
    for (std::size_t r = 0; r < H * Lq; ++r)
      for (std::size_t j = 0; j < M; ++j) {
        RC_ASSERT(std::memcmp(&a.f32[r * Lk + j], &a.f32[r * Lk + zero_key], sizeof(float)) == 0);
        RC_ASSERT(std::memcmp(&a.f64[r * Lk + j], &a.f64[r * Lk + zero_key], sizeof(double)) == 0);
      }
  }
  const rf::XlnetOracle o = segment_oracle(s, w);
  const std::vector<double> zero(d, 0.0);
  std::vector<std::size_t> must{0, Lk - 1, M};
  if (M > 0) must.push_back(M - 1);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i : sample_indices(Lq, 4))
      for (std::size_t j : sample_indices(Lk, 6, must)) {
        const auto qi = std::span<const double>(q).subspan((h * Lq + i) * d, d);
        const Real r = o.score(qi, zero, h, i, j, Lq, Lk, c.types, 1.0);
        const double S = o.score_magnitude(qi, zero, h, i, j, Lq, Lk, c.types, 1.0);
        const std::size_t at = (h * Lq + i) * Lk + j;
        auto what = [&] {
          return label(s) + " " + c.label() + " h=" + std::to_string(h) + " i=" + std::to_string(i) +
                 " j=" + std::to_string(j) + " S=" + std::to_string(S);
        };
        if (auto f = check(claim, R::segment_f32, a.f32[at], r, what, segment_error_bound(DType::f32, d, S))) RC_FAIL(*f);
        if (auto f = check(claim, R::segment_f64, a.f64[at], r, what, segment_error_bound(DType::f64, d, S))) RC_FAIL(*f);
      }
}

// XLNET-DIR-1
POSENC_CLAIM_TEST(XlnetDirection, BiScoresTellAKeyBeforeTheQueryFromOneAfterIt,
                  {"XLNET-DIR-1", "xlnet",
                   "attn_type bi embeds distances of both signs, and its scores distinguish a key k positions before "
                   "the query from one k positions after it: with d_model = 2, d_head = 1, r = [1, 0] (the sin "
                   "column), zero biases, q = 1 and equal key contents (k = 0), score(i, i - k) = sin(k) / 1 and "
                   "score(i, i + k) = -sin(k) on the oracle, for k = 1 .. 32; the absolute sinusoidal dot product "
                   "PE(p) . PE(p + k) is the same for k and -k (SIN-DOT)",
                   kConv + "; seed 003 (direction)", Oracle::identity, {R::identity}}) {
  const XlnetSpec s{.d_model = 2, .heads = 1, .d_head = 1, .attn_type = XlnetAttnType::bi, .regime = Regime::exact};
  const XlnetWeights w{{0.0}, {0.0}, {0.0}, {0.0, 0.0}, {1.0, 0.0}};
  const rf::XlnetOracle o(s, w);
  const std::vector<double> q{1.0}, k{0.0};
  const Sink sink = claim_sink(claim, FailWith::gtest);
  const std::size_t L = 65, i = 32;
  for (std::size_t dist = 1; dist <= 32; ++dist) {
    const Real before = o.score(q, k, 0, i, i - dist, L, L, {}, 1.0), after = o.score(q, k, 0, i, i + dist, L, L, {}, 1.0);
    const Real sin_k = rf::xlnet_table_value(s, static_cast<std::int64_t>(dist), 0);
    auto what = [&] { return "k=" + std::to_string(dist); };
    emit_real(sink, R::identity, before, sin_k, static_cast<double>(before), what);
    emit_real(sink, R::identity, after, Real(-sin_k), static_cast<double>(after), what);
    EXPECT_NE(static_cast<double>(before), static_cast<double>(after)) << "k = " << dist << ": no direction";
    count_case(claim);
  }
  const SinusoidalPlan abs_plan(marian_spec(64));
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

// ---- reproducibility ----------------------------------------------------------------------------------------

// XLNET-REPRO-1
POSENC_PROPERTY(Xlnet, ValuesIndependentOfThreadsAndStorePath,
                {"XLNET-REPRO-1", "xlnet",
                 "the table is bit-identical whatever the thread count (1, 2, 3), store path and call form (plan or "
                 "one-shot xlnet_table), and equals the sinusoidal xlnet table of the call's pos_seq bit for bit; "
                 "index matrices and scores (both forms, with token types) are bit-identical across thread counts and "
                 "store paths",
                 kConv, Oracle::identity, {R::index}}) {
  const XlnetSpec s = *spec_gen(16, 8);
  const Call c = *call_gen(300, 300);
  const XlnetPlan plan(s, weights_gen(s));
  const TableOptions one{.threads = 1, .streaming_stores = false},
      many{.threads = *rc::gen::inRange(2, 4), .streaming_stores = true};
  count_case(claim);
  const auto a32 = table_of<float>(plan, c.Lq, c.Lk, one), b32 = table_of<float>(plan, c.Lq, c.Lk, many);
  RC_ASSERT(std::memcmp(a32.data(), b32.data(), a32.size() * sizeof(float)) == 0);
  std::vector<float> c32(a32.size());
  xlnet_table(s, c.Lq, c.Lk, std::span<float>(c32));
  RC_ASSERT(std::memcmp(a32.data(), c32.data(), a32.size() * sizeof(float)) == 0);
  const std::size_t rows = xlnet_table_rows(s, c.Lq, c.Lk);
  std::vector<std::int64_t> pos(rows);
  for (std::size_t r = 0; r < rows; ++r) pos[r] = xlnet_position(s, r, c.Lq, c.Lk);
  std::vector<float> d32(a32.size());
  sinusoidal_rows(xlnet_sinusoidal_spec(s), std::span<const std::int64_t>(pos), std::span<float>(d32));
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

CheckReport run_check(const XlnetSpec& s, std::size_t Lq, std::size_t Lk, const std::vector<double>& t, DType stored) {
  return xlnet::check_table(s, Lq, Lk, TableInput{t, t.size() / s.d_model, s.d_model, stored, {}});
}

// XLNET-CHECK-1
POSENC_CLAIM_TEST(XlnetCheck, CheckPassesRightTablesAndRefusesWrongOnes,
                  {"XLNET-CHECK-1", "xlnet",
                   "posenc check xlnet passes posenc's own tables (exact in f32 and f64, the float32 table under the "
                   "emulated regime, also with entries a libm ulp away from correctly rounded) and refuses the float32 "
                   "table held to the exact regime at a long klen, the backward table for a forward spec, the table "
                   "starting at klen - 1 (Transformer-XL's pos_seq), the interleaved layout and one entry off by 1e-4",
                   "DESIGN.md (posenc check); " + kConv, Oracle::reference,
                   {SinusoidalRow::check_exact_f32, SinusoidalRow::check_exact_f64, SinusoidalRow::check_envelope}}) {
  XlnetSpec em = find_preset<XlnetSpec>("xlnet-base-cased").spec;
  em.d_model = 16;  // a narrow table keeps the oracle's entries few
  XlnetSpec ex = em;
  ex.regime = Regime::exact;
  const std::size_t Lq = 256, Lk = 512, rows = xlnet_table_rows(em, Lq, Lk), dm = em.d_model;
  auto own = [&](const XlnetSpec& s, auto tag_type) {
    using T = decltype(tag_type);
    std::vector<T> t(rows * dm);
    xlnet_table(s, Lq, Lk, std::span<T>(t));
    return std::vector<double>(t.begin(), t.end());
  };
  const std::vector<double> em32 = own(em, float{}), ex32 = own(ex, float{}), ex64 = own(ex, double{});
  check_verdict(claim, run_check(ex, Lq, Lk, ex32, DType::f32), 0, "own exact f32");
  check_verdict(claim, run_check(ex, Lq, Lk, ex64, DType::f64), 0, "own exact f64");
  check_verdict(claim, run_check(em, Lq, Lk, em32, DType::f32), 1, "own emulated f32");
  std::vector<double> libm = em32;
  for (std::size_t at : {7 * dm + 4, 300 * dm + 3, 700 * dm + 9})
    libm[at] = static_cast<double>(std::nextafter(static_cast<float>(libm[at]), 2.0f));
  check_verdict(claim, run_check(em, Lq, Lk, libm, DType::f32), 1, "emulated with libm ulps");
  EXPECT_FALSE(run_check(ex, Lq, Lk, em32, DType::f32).passed()) << "the float32 table passed the exact regime";
  XlnetSpec bw = ex;
  bw.direction = XlnetDirection::backward;
  EXPECT_FALSE(run_check(ex, Lq, Lk, own(bw, float{}), DType::f32).passed()) << "the backward table passed";
  std::vector<double> txl(rows * dm, 0.0);
  std::copy(ex32.begin() + static_cast<std::ptrdiff_t>(dm), ex32.end(), txl.begin());
  EXPECT_FALSE(run_check(ex, Lq, Lk, txl, DType::f32).passed()) << "pos_seq from klen - 1 passed";
  SinusoidalSpec inter = xlnet_sinusoidal_spec(ex);
  inter.layout = Layout::interleaved;
  std::vector<std::int64_t> pos(rows);
  for (std::size_t c = 0; c < rows; ++c) pos[c] = xlnet_position(ex, c, Lq, Lk);
  std::vector<float> il(rows * dm);
  sinusoidal_rows(inter, std::span<const std::int64_t>(pos), std::span<float>(il));
  EXPECT_FALSE(run_check(ex, Lq, Lk, std::vector<double>(il.begin(), il.end()), DType::f32).passed()) << "interleaved passed";
  std::vector<double> off = em32;
  off[600 * dm + 10] += 1e-4;
  EXPECT_FALSE(run_check(em, Lq, Lk, off, DType::f32).passed()) << "one entry off by 1e-4 passed";
  for (int i = 0; i < 9; ++i) count_case(claim);
}

// What a user's code may do for ef: x_e = RN32(q_e + s_e) (or q_e alone: r_s_bias left out), one of several sums of
// x_e g_e in float32, and the one-hot selection (possibly wrong: same/other swapped, memory keys given the query's
// type).
namespace user_ef {

float forward(const float* x, const float* g, std::size_t d) {
  float acc = 0;
  for (std::size_t e = 0; e < d; ++e) acc += x[e] * g[e];
  return acc;
}
float reverse(const float* x, const float* g, std::size_t d) {
  float acc = 0;
  for (std::size_t e = d; e-- > 0;) acc += x[e] * g[e];
  return acc;
}
float fma_chain(const float* x, const float* g, std::size_t d) {
  float acc = 0;
  for (std::size_t e = 0; e < d; ++e) acc = std::fma(x[e], g[e], acc);
  return acc;
}
float pairwise(const float* x, const float* g, std::size_t d) {
  if (d == 1) return x[0] * g[0];
  const std::size_t h = d / 2;
  return pairwise(x, g, h) + pairwise(x + h, g + h, d - h);
}

struct Mistakes {
  bool swap = false, no_bias = false, memory_query_type = false;
};

template <class Sum>
std::vector<double> compute(const XlnetSpec& s, const XlnetWeights& w, const std::vector<double>& q,
                            const std::vector<std::int64_t>& t, std::size_t Lk, Sum&& sum, Mistakes m = {}) {
  const std::size_t H = s.heads, d = s.d_head, Lq = t.size(), M = Lk - Lq;
  std::vector<double> out(H * Lq * Lk);
  std::vector<float> x(d), g0(d), g1(d);
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t e = 0; e < d; ++e) {
      g0[e] = static_cast<float>(w.seg_embed[h * d + e]);
      g1[e] = static_cast<float>(w.seg_embed[(H + h) * d + e]);
    }
    for (std::size_t i = 0; i < Lq; ++i) {
      for (std::size_t e = 0; e < d; ++e)
        x[e] = static_cast<float>(q[(h * Lq + i) * d + e]) + (m.no_bias ? 0.0f : static_cast<float>(w.r_s_bias[h * d + e]));
      const float same = sum(x.data(), g0.data(), d), other = sum(x.data(), g1.data(), d);
      for (std::size_t j = 0; j < Lk; ++j) {
        const std::int64_t tj = j < M ? (m.memory_query_type ? t[i] : 0) : t[j - M];
        const bool different = (t[i] != tj) != m.swap;
        out[(h * Lq + i) * Lk + j] = different ? other : same;
      }
    }
  }
  return out;
}

}  // namespace user_ef

// XLNET-CHECK-2
POSENC_CLAIM_TEST(XlnetCheck, SegmentCheckPassesAnySummationAndRefusesWrongTerms,
                  {"XLNET-CHECK-2", "xlnet",
                   "posenc check xlnet --what ef passes posenc's own f32 and f64 ef and float32 ef summed in reverse "
                   "order, as an FMA chain and pairwise, all within xlnet.check.segment.envelope; it refuses same / "
                   "other swapped, r_s_bias left out, the memory keys given the query's type instead of 0, one entry "
                   "off by 1e-3 relative and a -inf entry (after the query: no mask applies to ef)",
                   "DESIGN.md (posenc check); " + kConv, Oracle::reference, {R::check_segment_envelope}}) {
  const XlnetSpec s{.d_model = 4, .heads = 2, .d_head = 24};
  const std::size_t H = s.heads, d = s.d_head, Lq = 40, M = 24, Lk = M + Lq;
  std::mt19937_64 rng(20261128);
  auto values = [&](std::size_t n) {
    std::uniform_int_distribution<int> pick(-100000, 100000);
    std::vector<double> v(n);
    for (double& x : v) x = static_cast<float>(pick(rng) * 1e-5);
    return v;
  };
  const XlnetWeights w{values(H * d), values(H * d), values(H * d), values(2 * H * d), values(s.d_model * H * d)};
  const std::vector<double> q = values(H * Lq * d);
  std::vector<std::int64_t> t(Lq);
  for (std::size_t i = 0; i < Lq; ++i) t[i] = static_cast<std::int64_t>(rng() % 4);
  t[0] = 0;
  t[1] = 2;  // both kinds of query
  const XlnetPlan plan(s, w);
  const Call c{Lq, Lk, {}, t};
  const Ef own = run_segment(plan, c, q);
  auto run = [&](const std::vector<double>& ef, DType stored) {
    const BiasTensorInput in{ef, H, Lq, Lk, {}, stored, {}};
    return xlnet::check_segment_term(s, {w.r_s_bias, w.seg_embed}, q, t, in, 2);
  };
  const CheckReport r32 = run(std::vector<double>(own.f32.begin(), own.f32.end()), DType::f32);
  EXPECT_EQ(r32.references.at(0).name(), "float32 steps in any order");
  check_verdict(claim, r32, 0, "own f32");
  check_verdict(claim, run(own.f64, DType::f64), 0, "own f64");
  using namespace user_ef;
  check_verdict(claim, run(compute(s, w, q, t, Lk, forward), DType::f32), 0, "forward float32");
  check_verdict(claim, run(compute(s, w, q, t, Lk, reverse), DType::f32), 0, "reverse order");
  check_verdict(claim, run(compute(s, w, q, t, Lk, fma_chain), DType::f32), 0, "fma chain");
  check_verdict(claim, run(compute(s, w, q, t, Lk, pairwise), DType::f32), 0, "pairwise");
  EXPECT_FALSE(run(compute(s, w, q, t, Lk, forward, {.swap = true}), DType::f32).passed()) << "same / other swapped passed";
  EXPECT_FALSE(run(compute(s, w, q, t, Lk, forward, {.no_bias = true}), DType::f32).passed()) << "no r_s_bias passed";
  EXPECT_FALSE(run(compute(s, w, q, t, Lk, forward, {.memory_query_type = true}), DType::f32).passed())
      << "memory keys of the query's type passed";
  std::vector<double> off(own.f32.begin(), own.f32.end());
  std::size_t big = 0;
  for (std::size_t e = 0; e < off.size(); ++e)
    if (std::fabs(off[e]) > std::fabs(off[big])) big = e;
  off[big] = static_cast<float>(off[big] * (1 + 1e-3));
  EXPECT_FALSE(run(off, DType::f32).passed()) << "one entry off by 1e-3 relative passed";
  std::vector<double> inf(own.f32.begin(), own.f32.end());
  inf[Lk - 1] = -INFINITY;  // head 0, query 0, the last key: after the query (a causal mask's place)
  EXPECT_FALSE(run(inf, DType::f32).passed()) << "a -inf entry passed";
  for (int i = 0; i < 11; ++i) count_case(claim);
  const BiasTensorInput good{own.f64, H, Lq, Lk, {}, DType::f64, {}};
  expect_error(claim, "token_types", [&] { xlnet::check_segment_term(s, {w.r_s_bias, w.seg_embed}, q, std::span(t).first(3), good); }, "3 types");
  expect_error(claim, "q", [&] { xlnet::check_segment_term(s, {w.r_s_bias, w.seg_embed}, std::span(q).first(5), t, good); }, "short q");
  expect_error(claim, "seg_embed", [&] { xlnet::check_segment_term(s, {w.r_s_bias, {1.0}}, q, t, good); }, "short seg_embed");
  BiasTensorInput masked = good;
  masked.key_mask.assign(Lk, 1);
  expect_error(claim, "key_mask", [&] { xlnet::check_segment_term(s, {w.r_s_bias, w.seg_embed}, q, t, masked); }, "a key mask");
}

// ---- errors -------------------------------------------------------------------------------------------------

// XLNET-ERR-1
POSENC_CLAIM_TEST(XlnetErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"XLNET-ERR-1", "xlnet",
                   "bad specs (odd d_model, same_length with bi, clamp_len below -1), weights of the wrong size, Lq > "
                   "Lk, token types of the wrong count, short q/k and outputs, a NaN scale, a rel_shift of the wrong "
                   "size and a checked table of the wrong shape raise posenc::Error naming the parameter, its value "
                   "and the accepted range",
                   "DESIGN.md (errors)", Oracle::identity, {}}) {
  const XlnetSpec s{.d_model = 4, .heads = 1, .d_head = 2};
  const XlnetWeights w = fixed_weights(s);
  const XlnetPlan plan(s, w);
  expect_error(claim, "d_model", [&] { XlnetPlan(XlnetSpec{.d_model = 5, .heads = 1, .d_head = 2}, w); }, "odd d_model");
  expect_error(claim, "same_length", [&] { XlnetPlan(XlnetSpec{.d_model = 4, .heads = 1, .d_head = 2, .same_length = true}, w); }, "same_length with bi");
  expect_error(claim, "clamp_len", [&] { XlnetPlan(XlnetSpec{.d_model = 4, .heads = 1, .d_head = 2, .clamp_len = -3}, w); }, "clamp_len -3");
  expect_error(claim, "r", [&] { XlnetPlan(s, XlnetWeights{w.r_w_bias, w.r_r_bias, w.r_s_bias, w.seg_embed, {1.0}}); }, "short r");
  std::vector<float> t(8 * 4);
  expect_error(claim, "out.size()", [&] { plan.table(3, 5, std::span<float>(t).first(31)); }, "short table");
  expect_error(claim, "query_length", [&] { plan.table(6, 5, std::span<float>(t)); }, "Lq > Lk table");
  std::vector<float> q(3 * 2), k(5 * 2), out(3 * 5);
  const BiasGeometry g{.query_length = 3, .key_length = 5};
  const std::vector<std::int64_t> two{0, 1};
  expect_error(claim, "token_types", [&] { plan.scores(std::span<const float>(q), k, g, two, std::nullopt, std::span<float>(out)); }, "2 types for 3 queries");
  expect_error(claim, "q", [&] { plan.scores(std::span<const float>(q).first(5), k, g, {}, std::nullopt, std::span<float>(out)); }, "short q");
  expect_error(claim, "scores", [&] { plan.scores(std::span<const float>(q), k, g, {}, std::nullopt, std::span<float>(out).first(3)); }, "short scores");
  expect_error(claim, "scale", [&] { plan.scores(std::span<const float>(q), k, g, {}, NAN, std::span<float>(out)); }, "NaN scale");
  std::vector<double> x(3 * 8), y(3 * 5);
  expect_error(claim, "out", [&] { xlnet_rel_shift(std::span<const double>(x), 3, 8, 5, std::span<double>(y).first(14)); }, "short rel_shift output");
  const std::vector<double> tab(8 * 4, 0.0);
  expect_error(claim, "key_length", [&] { xlnet::check_table(s, 3, 4, TableInput{tab, 8, 4, DType::f32, {}}); }, "8 rows for Lq 3 Lk 4");
  expect_error(claim, "d_model", [&] { xlnet::check_table(s, 3, 5, TableInput{tab, 8, 3, DType::f32, {}}); }, "3 columns for d_model 4");
  expect_error(claim, "preset", [&] { (void)find_preset<XlnetSpec>("xlnet-nosuch"); }, "unknown preset");
}

}  // namespace claims_xlnet

POSENC_SPEC_CONTRACT(posenc::XlnetSpec, Xlnet, "XLNET")
