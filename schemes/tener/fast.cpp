// TENER fast path: the table through the sinusoidal plan (the zero row written here), the scores through the shared
// relative-scores core with its key term (core/relative_scores.hpp). Definition: posenc/tener_spec.hpp; algorithms
// and their error: posenc/tener.hpp, schemes/tener/budget.cpp.
#include "posenc/tener.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/bias_rows.hpp"
#include "core/rel_shift.hpp"
#include "core/relative_scores.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "tener";

}  // namespace

struct TenerPlan::Impl {
  TenerSpec spec;
  TenerWeights weights;
  core::WeightCopies a, b;  // r_r_bias (content), r_w_bias (position)
  SinusoidalPlan sin;       // no padding row: the zero row depends on the call's length

  Impl(const TenerSpec& s, const TenerWeights& w)
      : spec(s), weights(w), a(w.r_r_bias), b(w.r_w_bias), sin(tener_sinusoidal_spec(s, 1)) {}

  template <class T>
  void table(std::size_t L, std::span<T> out, const TableOptions& o) const {
    const std::optional<std::int64_t> zero = tener_zero_position(spec, L);  // validates L ("length")
    const std::size_t d = spec.d_head, n = 2 * L * d;
    if (out.size() < n)
      throw Error(kWhere, "out.size()", std::to_string(out.size()), ">= 2 length * d_head = " + std::to_string(n));
    sin.table(-static_cast<std::int64_t>(L), 2 * L, out.first(n), o);
    if (zero) std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(d), T(0));  // row c = 0 is t = -L
  }
};

namespace {

template <class T>
void scores_impl(const TenerPlan::Impl& P, std::span<const T> q, std::span<const T> k, const BiasGeometry& g,
                 std::optional<double> scale_opt, std::span<T> out, const TableOptions& o, RelativeScoresForm form) {
  const TenerSpec& s = P.spec;
  check_tener_lengths(g.query_length, g.key_length);
  const std::size_t L = g.key_length, d = s.d_head, H = s.heads;
  const double scale = core::check_relative_call(kWhere, H, d, g, q, k, out, form, scale_opt,
                                                 s.scale ? 1.0 / std::sqrt(static_cast<double>(d)) : 1.0);
  core::AlignedBuffer<T> R(2 * L * d);
  P.table(L, std::span<T>(R.get(), 2 * L * d), o);
  const bool causal = g.mask == BiasMask::causal;
  auto range = [&](std::size_t i) -> std::pair<std::size_t, std::size_t> { return {0, causal ? i + 1 : L}; };
  for (std::size_t h = 0; h < H; ++h) {
    core::RelativeHead<T> head;
    head.Lq = L;
    head.Lk = L;
    head.d = d;
    head.q = q.data() + h * L * d;
    head.k = k.data() + h * L * d;
    head.content_bias = P.a.get<T>() + h * d;
    head.position_bias = P.b.get<T>() + h * d;
    head.P = R.get();
    head.rows = 2 * L;
    head.c0 = static_cast<std::int64_t>(L);
    head.key_term = true;
    head.c1 = static_cast<std::int64_t>(L);
    head.key_mask = g.key_mask;
    core::relative_scores_head(head, range, scale, form, out.data() + h * L * L, o);
  }
}

}  // namespace

TenerPlan::TenerPlan(const TenerSpec& spec, const TenerWeights& weights) {
  validate(spec);
  check_tener_weights(spec, weights);
  impl_ = std::make_shared<const Impl>(spec, weights);
}
const TenerSpec& TenerPlan::spec() const noexcept { return impl_->spec; }
const TenerWeights& TenerPlan::weights() const noexcept { return impl_->weights; }
const SinusoidalPlan& TenerPlan::sinusoid() const noexcept { return impl_->sin; }

void TenerPlan::table(std::size_t L, std::span<float> out, const TableOptions& o) const { impl_->table(L, out, o); }
void TenerPlan::table(std::size_t L, std::span<double> out, const TableOptions& o) const { impl_->table(L, out, o); }

void TenerPlan::indices(const BiasGeometry& g, std::span<std::int32_t> out, bool key, const TableOptions& o) const {
  check_tener_lengths(g.query_length, g.key_length);
  const auto L = static_cast<std::int64_t>(g.key_length);
  core::write_index_rows(kWhere, g, out, o, [L, key](std::int64_t u) { return key ? L - u : L + u; });
}

void TenerPlan::scores(std::span<const float> q, std::span<const float> k, const BiasGeometry& g,
                       std::optional<double> scale, std::span<float> out, const TableOptions& o,
                       RelativeScoresForm form) const {
  scores_impl(*impl_, q, k, g, scale, out, o, form);
}
void TenerPlan::scores(std::span<const double> q, std::span<const double> k, const BiasGeometry& g,
                       std::optional<double> scale, std::span<double> out, const TableOptions& o,
                       RelativeScoresForm form) const {
  scores_impl(*impl_, q, k, g, scale, out, o, form);
}

std::size_t tener_scores_size(const TenerSpec& s, const BiasGeometry& g) {
  validate(s);
  check_tener_lengths(g.query_length, g.key_length);
  return core::check_bias_geometry(kWhere, s.heads, g);
}

void tener_table(const TenerSpec& s, std::size_t L, std::span<float> out, const TableOptions& o) {
  TenerPlan::Impl(s, {}).table(L, out, o);
}
void tener_table(const TenerSpec& s, std::size_t L, std::span<double> out, const TableOptions& o) {
  TenerPlan::Impl(s, {}).table(L, out, o);
}

namespace {

template <class T>
void weights_impl(const TenerSpec& s, std::size_t N, std::span<T> out, const TableOptions& o) {
  validate(s);
  constexpr std::size_t kMaxRows = (std::size_t{1} << 31) - 1;
  if (N < 1 || N > kMaxRows)
    throw Error(kWhere, "num_embeddings", std::to_string(N), "an integer in [1, 2^31 - 1]");
  const std::size_t d = s.d_head;
  if (N > std::numeric_limits<std::size_t>::max() / d || out.size() < N * d)
    throw Error(kWhere, "out.size()", std::to_string(out.size()), ">= num_embeddings * d_head");
  // torch.arange(-num_embeddings//2, num_embeddings//2): Python's -N//2 is floor(-N / 2)
  const auto first = -static_cast<std::int64_t>((N + 1) / 2);
  TenerPlan::Impl(s, {}).sin.table(first, N, out.first(N * d), o);
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(d), T(0));  // emb[padding_idx, :] = 0
}

}  // namespace

void tener_weights(const TenerSpec& s, std::size_t N, std::span<float> out, const TableOptions& o) {
  weights_impl(s, N, out, o);
}
void tener_weights(const TenerSpec& s, std::size_t N, std::span<double> out, const TableOptions& o) {
  weights_impl(s, N, out, o);
}

void tener_shift(std::span<const float> x, std::size_t L, std::span<float> out) { core::tener_shift(kWhere, x, L, out); }
void tener_shift(std::span<const double> x, std::size_t L, std::span<double> out) {
  core::tener_shift(kWhere, x, L, out);
}
void tener_transpose_shift(std::span<const float> y, std::size_t L, std::span<float> out) {
  core::tener_transpose_shift(kWhere, y, L, out);
}
void tener_transpose_shift(std::span<const double> y, std::size_t L, std::span<double> out) {
  core::tener_transpose_shift(kWhere, y, L, out);
}

}  // namespace posenc
