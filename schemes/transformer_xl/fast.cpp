// Transformer-XL fast path: the table through the sinusoidal plan, the positional keys by one gemm per head, the
// scores through the shared relative-scores core (core/relative_scores.hpp). Definition:
// posenc/transformer_xl_spec.hpp; algorithms and their error: posenc/transformer_xl.hpp,
// schemes/transformer_xl/budget.cpp.
#include "posenc/transformer_xl.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/bias_rows.hpp"
#include "core/relative_scores.hpp"
#include "core/rel_shift.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "transformer_xl";

}  // namespace

struct TransformerXlPlan::Impl {
  TransformerXlSpec spec;
  TransformerXlWeights weights;
  core::WeightCopies u, v, w;  // r_w_bias, r_r_bias, r_net
  SinusoidalPlan sin;

  Impl(const TransformerXlSpec& s, const TransformerXlWeights& wt)
      : spec(s), weights(wt), u(wt.r_w_bias), v(wt.r_r_bias), w(wt.r_net), sin(transformer_xl_sinusoidal_spec(s)) {}

  template <class T>
  void table(std::size_t Lk, std::span<T> out, const TableOptions& o) const {
    if (Lk == 0 || Lk > static_cast<std::size_t>(kTxlMaxLength))
      throw Error(kWhere, "key_length", std::to_string(Lk), "1 .. 2^31 - 1");
    const std::size_t n = Lk * spec.d_model;
    if (out.size() < n)
      throw Error(kWhere, "out.size()", std::to_string(out.size()), ">= key_length * d_model = " + std::to_string(n));
    std::vector<std::int64_t> p(Lk);  // row c: pos(Lk - 1 - c)
    for (std::size_t c = 0; c < Lk; ++c) p[c] = transformer_xl_position(spec, static_cast<std::int64_t>(Lk - 1 - c));
    sin.rows(std::span<const std::int64_t>(p), out.first(n), o);
  }
};

namespace {

template <class T>
void scores_impl(const TransformerXlPlan::Impl& P, std::span<const T> q, std::span<const T> k, const BiasGeometry& g,
                 std::optional<double> scale_opt, std::span<T> out, const TableOptions& o, RelativeScoresForm form) {
  const TransformerXlSpec& s = P.spec;
  check_transformer_xl_lengths(g.query_length, g.key_length);
  const std::size_t Lq = g.query_length, Lk = g.key_length, d = s.d_head, H = s.heads, dm = s.d_model;
  const double scale = core::check_relative_call(kWhere, H, d, g, q, k, out, form, scale_opt,
                                                 1.0 / std::sqrt(static_cast<double>(d)));
  core::AlignedBuffer<T> R(Lk * dm), Ph(Lk * d);
  P.table(Lk, std::span<T>(R.get(), Lk * dm), o);
  // same_length hides j <= i - s, s = Lq - (Lk - mem_len) if Lk > mem_len else Lq (negative s: j <= i + |s|).
  const auto iLq = static_cast<std::int64_t>(Lq), iLk = static_cast<std::int64_t>(Lk),
             mem = static_cast<std::int64_t>(s.mem_len);
  const std::int64_t shift = iLk > mem ? iLq - (iLk - mem) : iLq;
  auto range = [&](std::size_t i) -> std::pair<std::size_t, std::size_t> {
    const std::size_t hi = Lk - Lq + i + 1;
    std::size_t lo = 0;
    if (s.same_length) {
      const std::int64_t t = static_cast<std::int64_t>(i) - shift;  // hidden: j <= t
      lo = t < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(t) + 1, hi);
    }
    return {lo, hi};
  };
  for (std::size_t h = 0; h < H; ++h) {
    // P_h = R W_h^T: [Lk][d_head], W_h the rows h d_head .. (h + 1) d_head - 1 of r_net.
    core::gemm_nt_ld(static_cast<blasint>(Lk), static_cast<blasint>(d), static_cast<blasint>(dm), 1.0, R.get(),
                     static_cast<blasint>(dm), P.w.get<T>() + h * d * dm, static_cast<blasint>(dm), 0.0, Ph.get(),
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
    head.rows = Lk;
    head.c0 = iLk - 1;
    head.key_mask = g.key_mask;
    core::relative_scores_head(head, range, scale, form, out.data() + h * Lq * Lk, o);
  }
}

}  // namespace

TransformerXlPlan::TransformerXlPlan(const TransformerXlSpec& spec, const TransformerXlWeights& weights) {
  validate(spec);
  check_transformer_xl_weights(spec, weights);
  impl_ = std::make_shared<const Impl>(spec, weights);
}
const TransformerXlSpec& TransformerXlPlan::spec() const noexcept { return impl_->spec; }
const TransformerXlWeights& TransformerXlPlan::weights() const noexcept { return impl_->weights; }
const SinusoidalPlan& TransformerXlPlan::sinusoid() const noexcept { return impl_->sin; }

void TransformerXlPlan::table(std::size_t key_length, std::span<float> out, const TableOptions& o) const {
  impl_->table(key_length, out, o);
}
void TransformerXlPlan::table(std::size_t key_length, std::span<double> out, const TableOptions& o) const {
  impl_->table(key_length, out, o);
}

void TransformerXlPlan::indices(const BiasGeometry& g, std::span<std::int32_t> out, const TableOptions& o) const {
  check_transformer_xl_lengths(g.query_length, g.key_length);
  const auto Lk = static_cast<std::int64_t>(g.key_length);
  core::write_index_rows(kWhere, g, out, o, [Lk](std::int64_t u) { return u <= 0 ? Lk - 1 + u : std::int64_t{-1}; });
}

void TransformerXlPlan::scores(std::span<const float> q, std::span<const float> k, const BiasGeometry& g,
                               std::optional<double> scale, std::span<float> out, const TableOptions& o,
                               RelativeScoresForm form) const {
  scores_impl(*impl_, q, k, g, scale, out, o, form);
}
void TransformerXlPlan::scores(std::span<const double> q, std::span<const double> k, const BiasGeometry& g,
                               std::optional<double> scale, std::span<double> out, const TableOptions& o,
                               RelativeScoresForm form) const {
  scores_impl(*impl_, q, k, g, scale, out, o, form);
}

std::size_t transformer_xl_scores_size(const TransformerXlSpec& s, const BiasGeometry& g) {
  validate(s);
  check_transformer_xl_lengths(g.query_length, g.key_length);
  return core::check_bias_geometry(kWhere, s.heads, g);
}

void transformer_xl_table(const TransformerXlSpec& s, std::size_t key_length, std::span<float> out,
                          const TableOptions& o) {
  TransformerXlPlan::Impl(s, {}).table(key_length, out, o);
}
void transformer_xl_table(const TransformerXlSpec& s, std::size_t key_length, std::span<double> out,
                          const TableOptions& o) {
  TransformerXlPlan::Impl(s, {}).table(key_length, out, o);
}

// _rel_shift: pad a zero column in front ([Lq][Lk + 1]), view [Lk + 1][Lq], drop the first row (Lq values), view
// [Lq][Lk]: out's flat element n is the padded matrix's flat element Lq + n.
void transformer_xl_rel_shift(std::span<const float> x, std::size_t Lq, std::size_t Lk, std::span<float> out) {
  core::rel_shift_front_pad(kWhere, x, Lq, Lk, out);
}
void transformer_xl_rel_shift(std::span<const double> x, std::size_t Lq, std::size_t Lk, std::span<double> out) {
  core::rel_shift_front_pad(kWhere, x, Lq, Lk, out);
}

}  // namespace posenc
