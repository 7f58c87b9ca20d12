// The XLNet rows of THE budget table (verify/budget.hpp). The table is the sinusoidal plan's xlnet table
// at the call's pos_seq (schemes/xlnet/fast.cpp), so its bounds are the sinusoidal kernel's (verify/relative_budget.hpp);
// indices and the rel_shift are integers and copies; the scores bound is the one the three sinusoid-relative schemes
// share (verify/relative_budget.hpp), with the segment term among the terms.
#include "schemes/xlnet/budget.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "verify/relative_budget.hpp"


namespace posenc::verify {
namespace xlnet_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = XlnetRow;

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string lengths = "1 <= Lq <= Lk <= 2^30 - 1 (memory M = Lk - Lq), bi and uni, both directions, clamp_len";
  add(R::index,
      {.quantity = "table row c(i, j) = Lq - i + j read by entry (i, j), -1 where uni leaves it undefined (j > q_i)",
       .dtype = "int", .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"}, .bound = 0.0,
       .why = "integer arithmetic in the fast path (a Toeplitz index row) and the definition: the same integers."});
  add(R::rel_shift,
      {.quantity = "xlnet_rel_shift(x)[i][j] vs x[i][c(i, j)] and uni's junk x[i + 1][j - q_i - 1]", .dtype = "f32, f64",
       .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise"}, .bound = 0.0,
       .why = "rel_shift_bnij is a copy of elements of x (view [rows][Lq], first row dropped, view [Lq][rows - 1], "
              "first klen columns): each output is one input element, bit for bit."});
  const RelativeTableRows t = relative_table_rows(
      "table entry R[c][m] = sin/cos(pos_seq[c] 10000^(-2k/d_model)), [sin | cos] halves",
      "d_model even up to 2^14, pos_seq klen .. -qlen + 1 (bi) or klen .. 0 (uni), negated (backward), clamp_len",
      "inv_freq = RN32(1 / RN32(torch.pow(10000, RN32(RN32(2k) / d_model)))), RN32(pos inv_freq), RN32(sin), "
      "RN32(cos)");
  add(R::table_exact_f32, t.exact_f32);
  add(R::table_exact_f64, t.exact_f64);
  add(R::table_emulated, t.emulated);
  add(R::mirror,
      {.quantity = "bi_data: the backward table's row c vs the forward table's row c with its sin half negated",
       .dtype = "f32, f64", .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise"}, .bound = 0.0,
       .why = "the backward pos_seq is -pos_seq (clamped symmetrically); the sinusoidal plan writes the row of -p as "
              "the row of p with its sines negated, bit for bit, in both regimes (claim SIN-REPRO-2): an exact "
              "mirror, every bit."});
  const std::string domain = "d_head <= 12, d_model <= 16, Lq <= Lk <= 600 (memory up to 300), bi and uni, both "
                             "directions, clamp_len, same_length, token types, key masks, both regimes, both forms";
  const std::string terms = "scale ((q + r_w_bias).k + (q + r_r_bias).P[c(i, j)] + (q + r_s_bias).seg_embed[s(i, j)])";
  add(R::scores_f32, relative_scores_row(DType::f32, "XlnetPlan", domain, terms));
  add(R::scores_f64, relative_scores_row(DType::f64, "XlnetPlan", domain, terms));
  add(R::masked,
      {.quantity = "scores at uni's undefined (j > q_i) and same_length-hidden keys and at padded keys",
       .dtype = "f32, f64", .regime = "exact, emulated", .domain = domain,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise against -inf"}, .bound = 0.0,
       .why = "written as -inf before the content gemm adds a finite product (-inf + finite = -inf): never the "
              "rel_shift's junk (HF subtracts 1e30 instead)."});
  const std::string seg_domain = "d_head <= 12, heads 1 .. 3, Lq <= Lk <= 600 (memory up to 300), token types 0 .. 3, "
                                 "weights and q of |v| <= 1 (float32 numbers), 1 to 3 threads";
  const std::string seg_why =
      "T = sum_e (q_e + s_e) g_e (exact: the oracle with every other weight 0 and scale 1), S = sum_e |q_e + s_e| "
      "|g_e| (its score_magnitude). x_e = RN(q_e + s_e) = (q_e + s_e)(1 + delta_e), |delta_e| <= u; the sum "
      "acc = RN(acc + RN(x_e g_e)) from e = 0 (lib/ is built with -ffp-contract=off: no product is fused) puts at most "
      "d roundings on each term (its product and the d - 1 additions after it; the first addition, to 0, is exact): "
      "x_e g_e (1 + theta_d), |theta_d| <= gamma_d (Higham, Accuracy and Stability, Lemma 3.1). (1 + delta)(1 + "
      "theta_d) = 1 + theta_{d+1} (Lemma 3.3), so |ef - T| <= gamma_{d+1}(u) S, gamma_n = n u / (1 - n u), u = 2^-24 "
      "(f32) / 2^-53 (f64), as long as nothing underflows. A product in the subnormal range is rounded with an "
      "absolute error up to half the smallest subnormal instead (2^-150 f32, 2^-1075 f64; a sum or an add that "
      "lands there is exact), and one such error is carried by at most d - 1 later roundings: (2 d + 1) 2^-150 "
      "(2^-1075) covers the d products with room. The second einsum (one-hot seg_mat times the two values) is exact. "
      "Metric: |ef - T| / (gamma_{d+1}(u) S + (2 d + 1) 2^-150), at most 1.";
  add(R::segment_f32,
      {.quantity = "XlnetPlan::segment_term: ef[h][i][j] = <RN32(q_i + r_s_bias_h), seg_embed[s(i, j)][h]>, unscaled",
       .dtype = "f32", .regime = "exact, emulated", .domain = seg_domain,
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|ef - T| / (gamma_{d+1}(2^-24) S + (2d + 1) 2^-150)"},
       .bound = 1.0, .why = seg_why});
  add(R::segment_f64,
      {.quantity = "XlnetPlan::segment_term: ef[h][i][j] = <RN64(q_i + r_s_bias_h), seg_embed[s(i, j)][h]>, unscaled",
       .dtype = "f64", .regime = "exact, emulated", .domain = seg_domain,
       .metric = {MetricKind::ratio, DType::f64, 0.0, "|ef - T| / (gamma_{d+1}(2^-53) S + (2d + 1) 2^-1075)"},
       .bound = 1.0, .why = seg_why});
  add(R::check_segment_envelope,
      {.quantity = "posenc check xlnet --what ef: a user's ef[h][i][j] against the exact T = <q_i + r_s_bias_h, "
                   "seg_embed[s(i, j)][h]> of the q and weights given",
       .dtype = "f16, bf16, f32, f64 (the stored type)", .regime = "exact, emulated",
       .domain = "any d_head, heads, lengths, token types; the inputs taken as the exact numbers the user's code used",
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|ef - T| / E, E = 1.01 (gamma_{d+1}(u) S + (2d + 1) 2^(emin - p))"},
       .bound = 1.0,
       .why = "What a real implementation of HF's ef may do: q_head + r_s_bias as one add in the stored type (or "
              "wider), then the einsum's contraction over d in any order (a BLAS kernel's blocking, pairwise, "
              "reversed), with or without FMA, in the stored type's precision or wider. In any summation tree each "
              "term x_e g_e meets at most d roundings (its product, unless fused, and at most d - 1 additions on its "
              "path to the root; a fused product removes one), and the add one more: |ef - T| <= gamma_{d+1}(u) S "
              "(Higham Lemmas 3.1, 3.3), u the stored type's unit roundoff (a wider accumulation rounded once to the "
              "stored type: gamma_{d+1}(u_wide) S + u |T| (1 + ...) stays below it for d >= 1), plus the absolute "
              "underflow term (2 d + 1) 2^(emin - p) of xlnet.segment.*. T is the oracle's exact value and S its "
              "score_magnitude (a double never below the real S); the factor 1.01 covers the double evaluation of "
              "gamma and of E itself (a few roundings of 2^-53 each) with room. The second einsum is exact: every "
              "entry of a row is one of the row's two values. No mask applies to ef: a -inf anywhere fails."});
  add(R::identity,
      {.quantity = "a law of the definition on the oracle (segment relabelling, translation, direction)", .dtype = "mp",
       .regime = "exact, emulated", .domain = domain,
       .metric = {MetricKind::absolute, DType::f64, 1.0, "|a - b| between two oracle values (256 bits)"},
       .bound = 0.0,
       .why = "the two sides are the same real number computed from the same inputs; the oracle rounds both correctly "
              "to 256 bits, so they are equal, and any difference is a defect."});
  return r;
}

const BudgetRegistration<R> kRegistration(make_rows);

}  // namespace
}  // namespace xlnet_rows

double segment_error_bound(DType t, std::size_t d, double S) {
  const int p = precision_bits(t);
  const double u = std::ldexp(1.0, -p), n = static_cast<double>(d) + 1;
  // (2d + 1) 2^(emin - p) formed in one ldexp: 2^(emin - p) alone underflows to 0 in f64 (2^-1075), which left an
  // all-zero case (S = 0) without a positive bound.
  return n * u / (1 - n * u) * S + std::ldexp(2 * static_cast<double>(d) + 1, min_exponent(t) - p);
}
}  // namespace posenc::verify
