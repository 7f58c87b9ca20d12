// XLNet fast path: the table through the sinusoidal plan, the positional keys by one gemm per head, the scores
// (with the segment term) through the shared relative-scores core (core/relative_scores.hpp), the segment term ef
// alone by a sequential sum per row. Definition:
// posenc/xlnet_spec.hpp; algorithms and their error: posenc/xlnet.hpp, schemes/xlnet/budget.cpp.
#include "posenc/xlnet.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/bias_rows.hpp"
#include "core/rel_shift.hpp"
#include "core/relative_scores.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "xlnet";

}  // namespace

struct XlnetPlan::Impl {
  XlnetSpec spec;
  XlnetWeights weights;
  core::WeightCopies u, v, sb, seg, r;  // r_w_bias, r_r_bias, r_s_bias, seg_embed, r
  SinusoidalPlan sin;

  Impl(const XlnetSpec& s, const XlnetWeights& w)
      : spec(s), weights(w), u(w.r_w_bias), v(w.r_r_bias), sb(w.r_s_bias), seg(w.seg_embed), r(w.r),
        sin(xlnet_sinusoidal_spec(s)) {}

  template <class T>
  std::size_t table(std::size_t Lq, std::size_t Lk, std::span<T> out, const TableOptions& o) const {
    const std::size_t rows = xlnet_table_rows(spec, Lq, Lk), n = rows * spec.d_model;
    if (out.size() < n)
      throw Error(kWhere, "out.size()", std::to_string(out.size()), ">= rows * d_model = " + std::to_string(n));
    std::vector<std::int64_t> p(rows);
    for (std::size_t c = 0; c < rows; ++c) p[c] = xlnet_position(spec, c, Lq, Lk);
    sin.rows(std::span<const std::int64_t>(p), out.first(n), o);
    return rows;
  }
};

namespace {

template <class T>
void scores_impl(const XlnetPlan::Impl& P, std::span<const T> q, std::span<const T> k, const BiasGeometry& g,
                 std::span<const std::int64_t> types, std::optional<double> scale_opt, std::span<T> out,
                 const TableOptions& o, RelativeScoresForm form) {
  const XlnetSpec& s = P.spec;
  check_xlnet_lengths(g.query_length, g.key_length);
  check_xlnet_token_types(types, g.query_length);
  const std::size_t Lq = g.query_length, Lk = g.key_length, d = s.d_head, H = s.heads, dm = s.d_model;
  const double scale = core::check_relative_call(kWhere, H, d, g, q, k, out, form, scale_opt,
                                                 1.0 / std::sqrt(static_cast<double>(d)));
  const std::size_t rows = xlnet_table_rows(s, Lq, Lk);
  core::AlignedBuffer<T> R(rows * dm), Ph(rows * d);
  P.table(Lq, Lk, std::span<T>(R.get(), rows * dm), o);
  const bool uni = s.attn_type == XlnetAttnType::uni, causal = uni || g.mask == BiasMask::causal;
  auto range = [&](std::size_t i) -> std::pair<std::size_t, std::size_t> {
    // uni hides j > q_i; same_length (uni only) also j < min(i, Lq) = i.
    return {uni && s.same_length ? i : 0, causal ? Lk - Lq + i + 1 : Lk};
  };
  for (std::size_t h = 0; h < H; ++h) {
    // P_h = R r[:, h, :]: [rows][d_head] (r is [d_model][heads][d_head]: leading dimension heads * d_head).
    core::gemm_nn(static_cast<blasint>(rows), static_cast<blasint>(d), static_cast<blasint>(dm), 1.0, R.get(),
                  static_cast<blasint>(dm), P.r.get<T>() + h * d, static_cast<blasint>(H * d), 0.0, Ph.get(),
                  static_cast<blasint>(d));
    core::RelativeHead<T> head;
    head.Lq = Lq;
    head.Lk = Lk;
    head.d = d;
    head.q = q.data() + h * Lq * d;
    head.k = k.data() + h * Lk * d;
    head.content_bias = P.u.get<T>() + h * d;
    head.position_bias = P.v.get<T>() + h * d;
    head.P = Ph.get();
    head.rows = rows;
    head.c0 = static_cast<std::int64_t>(Lk);
    if (!types.empty()) {
      head.segment_bias = P.sb.get<T>() + h * d;
      head.segment_same = P.seg.get<T>() + h * d;
      head.segment_other = P.seg.get<T>() + (H + h) * d;
      head.query_types = types;
    }
    head.key_mask = g.key_mask;
    core::relative_scores_head(head, range, scale, form, out.data() + h * Lq * Lk, o);
  }
}

// ef (posenc/xlnet.hpp, Segment term): per row (h, i) the two values in T, sequentially from e = 0, then the row.
template <class T>
void segment_impl(const XlnetPlan::Impl& P, std::span<const T> q, std::size_t Lq, std::size_t Lk,
                  std::span<const std::int64_t> types, std::span<T> out, const TableOptions& o) {
  check_xlnet_lengths(Lq, Lk);
  if (types.size() != Lq)
    throw Error(kWhere, "token_types", std::to_string(types.size()) + " entries",
                "exactly query_length = " + std::to_string(Lq) +
                    " (the segment term needs the queries' types; the memory keys have type 0)");
  const std::size_t H = P.spec.heads, d = P.spec.d_head;
  const std::size_t total = core::check_bias_geometry(kWhere, H, {.query_length = Lq, .key_length = Lk});
  if (q.size() != H * Lq * d)  // H * Lq * d <= kXlnetMaxHeads 2^30 kXlnetMaxHeadDim < 2^54: no overflow
    throw Error(kWhere, "q", std::to_string(q.size()) + " elements",
                "exactly heads * query_length * d_head = " + std::to_string(H * Lq * d) + " elements");
  if (out.size() != total)
    throw Error(kWhere, "out", std::to_string(out.size()) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  const std::size_t past = Lk - Lq;
  const T* sb = P.sb.get<T>();
  const T* seg = P.seg.get<T>();
  core::parallel_for(H * Lq, core::thread_count(o, total), [&](int, std::size_t r) {
    const std::size_t h = r / Lq, i = r % Lq;
    const T* qi = q.data() + r * d;
    const T* s = sb + h * d;
    const T* g0 = seg + h * d;         // seg_embed[0][h]: same segment
    const T* g1 = seg + (H + h) * d;   // seg_embed[1][h]: different segment
    T same = 0, other = 0;
    for (std::size_t e = 0; e < d; ++e) {
      const T x = qi[e] + s[e];
      same += x * g0[e];
      other += x * g1[e];
    }
    const std::int64_t t = types[i];
    T* row = out.data() + r * Lk;
    // Memory keys have type 0 (mem_pad); key j >= past has the type of query j - past.
    const T mem = t != 0 ? other : same;
    for (std::size_t j = 0; j < past; ++j) row[j] = mem;
    for (std::size_t j = past; j < Lk; ++j) row[j] = types[j - past] != t ? other : same;
  });
}

}  // namespace

XlnetPlan::XlnetPlan(const XlnetSpec& spec, const XlnetWeights& weights) {
  validate(spec);
  check_xlnet_weights(spec, weights);
  impl_ = std::make_shared<const Impl>(spec, weights);
}
const XlnetSpec& XlnetPlan::spec() const noexcept { return impl_->spec; }
const XlnetWeights& XlnetPlan::weights() const noexcept { return impl_->weights; }
const SinusoidalPlan& XlnetPlan::sinusoid() const noexcept { return impl_->sin; }

void XlnetPlan::table(std::size_t Lq, std::size_t Lk, std::span<float> out, const TableOptions& o) const {
  impl_->table(Lq, Lk, out, o);
}
void XlnetPlan::table(std::size_t Lq, std::size_t Lk, std::span<double> out, const TableOptions& o) const {
  impl_->table(Lq, Lk, out, o);
}

void XlnetPlan::indices(const BiasGeometry& g, std::span<std::int32_t> out, const TableOptions& o) const {
  check_xlnet_lengths(g.query_length, g.key_length);
  const auto Lk = static_cast<std::int64_t>(g.key_length);
  const bool uni = impl_->spec.attn_type == XlnetAttnType::uni;
  core::write_index_rows(kWhere, g, out, o, [Lk, uni](std::int64_t u) { return uni && u > 0 ? std::int64_t{-1} : Lk + u; });
}

void XlnetPlan::scores(std::span<const float> q, std::span<const float> k, const BiasGeometry& g,
                       std::span<const std::int64_t> types, std::optional<double> scale, std::span<float> out,
                       const TableOptions& o, RelativeScoresForm form) const {
  scores_impl(*impl_, q, k, g, types, scale, out, o, form);
}
void XlnetPlan::scores(std::span<const double> q, std::span<const double> k, const BiasGeometry& g,
                       std::span<const std::int64_t> types, std::optional<double> scale, std::span<double> out,
                       const TableOptions& o, RelativeScoresForm form) const {
  scores_impl(*impl_, q, k, g, types, scale, out, o, form);
}

void XlnetPlan::segment_term(std::span<const float> q, std::size_t Lq, std::size_t Lk,
                             std::span<const std::int64_t> types, std::span<float> out, const TableOptions& o) const {
  segment_impl(*impl_, q, Lq, Lk, types, out, o);
}
void XlnetPlan::segment_term(std::span<const double> q, std::size_t Lq, std::size_t Lk,
                             std::span<const std::int64_t> types, std::span<double> out, const TableOptions& o) const {
  segment_impl(*impl_, q, Lq, Lk, types, out, o);
}

std::size_t xlnet_scores_size(const XlnetSpec& s, const BiasGeometry& g) {
  validate(s);
  check_xlnet_lengths(g.query_length, g.key_length);
  return core::check_bias_geometry(kWhere, s.heads, g);
}

void xlnet_table(const XlnetSpec& s, std::size_t Lq, std::size_t Lk, std::span<float> out, const TableOptions& o) {
  XlnetPlan::Impl(s, {}).table(Lq, Lk, out, o);
}
void xlnet_table(const XlnetSpec& s, std::size_t Lq, std::size_t Lk, std::span<double> out, const TableOptions& o) {
  XlnetPlan::Impl(s, {}).table(Lq, Lk, out, o);
}

void xlnet_rel_shift(std::span<const float> x, std::size_t Lq, std::size_t rows, std::size_t Lk, std::span<float> out) {
  core::rel_shift_bnij(kWhere, x, Lq, rows, Lk, out);
}
void xlnet_rel_shift(std::span<const double> x, std::size_t Lq, std::size_t rows, std::size_t Lk,
                     std::span<double> out) {
  core::rel_shift_bnij(kWhere, x, Lq, rows, Lk, out);
}

}  // namespace posenc
