#include "schemes/xlnet/check.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/xlnet.hpp"
#include "posenc/spec_json.hpp"
#include "schemes/xlnet/budget.hpp"

namespace posenc::verify::xlnet {

CheckReport check_table(const XlnetSpec& spec, std::size_t query_length, std::size_t key_length,
                        const relative::TableInput& in, const reference::EnvelopeAllowance& allowance, int threads) {
  const SinusoidalSpec sin = xlnet_sinusoidal_spec(spec);  // validates the spec
  const std::size_t rows = xlnet_table_rows(spec, query_length, key_length);
  std::vector<std::int64_t> positions(rows);
  for (std::size_t c = 0; c < rows; ++c) positions[c] = xlnet_position(spec, c, query_length, key_length);
  return relative::check_table(
      "xlnet", to_json(spec), sin, std::move(positions), "key_length",
      std::to_string(key_length) + " (query_length " + std::to_string(query_length) + ")", "d_model", in, allowance,
      threads,
      "XLNet's row c is the [sin | cos] sinusoid of pos_seq[c] (klen .. -qlen + 1 for bi, klen .. 0 for uni, negated "
      "for bi_data's backward half, clamp_len; CONVENTIONS.md §2.9).");
}

CheckReport check_segment_term(const XlnetSpec& spec, const SegmentWeights& w, std::span<const double> q,
                               std::span<const std::int64_t> types, const BiasTensorInput& in, int threads) {
  const std::string where = "xlnet check";
  validate(spec);
  const std::size_t H = spec.heads, d = spec.d_head, hd = H * d;
  // The oracle of ef: every other weight 0, r too (so the table, d_model and the regime do not enter: d_model 2 keeps
  // r small), attn_type bi (ef does not depend on it, and uni leaves j > q_i undefined in score).
  const XlnetSpec os{.d_model = 2, .heads = H, .d_head = d, .attn_type = XlnetAttnType::bi, .regime = Regime::exact};
  const XlnetWeights ow{std::vector<double>(hd, 0.0), std::vector<double>(hd, 0.0), w.r_s_bias, w.seg_embed,
                        std::vector<double>(2 * hd, 0.0)};
  check_xlnet_weights(os, ow);  // names r_s_bias / seg_embed
  check_bias_input(where, H, in);
  check_xlnet_lengths(in.query_length, in.key_length);
  const std::size_t Lq = in.query_length, Lk = in.key_length, M = Lk - Lq;
  if (!in.key_mask.empty())
    throw Error(where, "key_mask", std::to_string(in.key_mask.size()) + " entries", "none (no mask applies to ef)");
  if (types.size() != Lq)
    throw Error(where, "token_types", std::to_string(types.size()) + " entries",
                "exactly query_length = " + std::to_string(Lq) + " (the memory keys have type 0)");
  if (q.size() != H * Lq * d)
    throw Error(where, "q", std::to_string(q.size()) + " elements",
                "exactly heads * query_length * d_head = " + std::to_string(H * Lq * d) + " elements");
  for (std::size_t e = 0; e < q.size(); ++e)
    if (!std::isfinite(q[e])) throw Error(where, "q", "entry " + std::to_string(e) + " = " + format_real(q[e]), "finite reals");
  const reference::XlnetOracle oracle(os, ow);

  CheckReport rep;
  rep.scheme = "xlnet";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  describe_geometry(rep, in);
  rep.input["what"] = "ef";
  rep.input["token_types"] = std::vector<std::int64_t>(types.begin(), types.end());
  rep.input["reference"] = "the MPFR oracle's exact <q_i + r_s_bias_h, seg_embed[s(i, j)][h]> (other weights 0, "
                           "scale 1) and its magnitude S";
  const char* steps = in.stored == DType::f64 ? "float64" : in.stored == DType::f32 ? "float32"
                      : in.stored == DType::f16 ? "float16" : "bfloat16";
  rep.references.emplace_back(std::string(steps) + " steps in any order", budget(XlnetRow::check_segment_envelope),
                              in.stored, H);
  const std::vector<double> zero(d, 0.0);
  scan_bias_tensor(
      rep, in, threads,
      [&](auto& acc, std::size_t h, std::size_t i, std::size_t, auto js) {
        const auto qi = q.subspan((h * Lq + i) * d, d);
        // The row's two values, each once: <q_i + s_h, seg_embed[k][h]> is the oracle's score of a query of type k
        // at a memory key (type 0) of a call with one query and one memory key.
        std::optional<Real> value[2];
        double envelope[2] = {0, 0};
        for (std::size_t j : js) {
          const std::int64_t tj = j < M ? 0 : types[j - M];
          const std::size_t k = types[i] != tj ? 1 : 0;
          if (!value[k]) {
            const std::int64_t t[1] = {static_cast<std::int64_t>(k)};
            value[k] = oracle.score(qi, zero, h, 0, 0, 1, 2, t, 1.0);
            const double S = oracle.score_magnitude(qi, zero, h, 0, 0, 1, 2, t, 1.0);
            envelope[k] = 1.01 * segment_error_bound(in.stored, d, S);
          }
          acc[0].add(static_cast<std::int64_t>(j), h, in.values[(h * Lq + i) * Lk + j], *value[k], envelope[k]);
        }
      },
      /*masks_hold_inf=*/false);
  rep.held_to = 0;
  rep.note = std::string("ef has one value per row and segment kind: every entry must be within E = 1.01 (gamma_{d+1}(u) "
                         "S + (2 d + 1) 2^(emin - p)) of the exact <q_i + r_s_bias_h, seg_embed[s(i, j)][h]> (s = 1 iff "
                         "the query's type differs from the key's; memory keys type 0), u the unit roundoff of the "
                         "stored ") + steps +
             ": q + r_s_bias as one add, the sum over d_head in any order, with or without FMA, in that precision or "
             "wider (row xlnet.check.segment.envelope). No mask applies to ef: a -inf entry fails.";
  return rep;
}

}  // namespace posenc::verify::xlnet
