// Clipped relative position representations fast path: Toeplitz index rows through the shared bias machinery,
// scores as per-row gathers of two small gemms fused into the Q K^T gemm (core/bias_rows.hpp), and the attention
// output as a blocked softmax with the value table applied through per-index weight sums. Definition:
// posenc/shaw_spec.hpp; algorithms and their error: posenc/shaw.hpp, schemes/shaw/budget.cpp.
#include "posenc/shaw.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/bias_rows.hpp"
#include "core/reduce.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "shaw";
constexpr std::int64_t kMaxU = (std::int64_t{1} << 31) - 1;
constexpr std::size_t kMaxHeads = std::size_t{1} << 16;
// Query rows per block of the attention output (scores of one block live in a block x key_length buffer).
constexpr std::size_t kAttendRowBlock = 128;

}  // namespace

struct ShawPlan::Impl {
  ShawSpec spec;
  ShawWeights weights;
  std::vector<float> keys32, values32;  // the tables rounded once to float32 (the f32 entry points' tables)
  std::int64_t k = 0;

  Impl(const ShawSpec& s, const ShawWeights& w) : spec(s), weights(w), k(static_cast<std::int64_t>(s.max_relative_position)) {
    keys32.assign(w.keys.begin(), w.keys.end());
    values32.assign(w.values.begin(), w.values.end());
  }
  template <class T>
  const T* keys() const {
    if constexpr (std::is_same_v<T, float>) return keys32.data(); else return weights.keys.data();
  }
  template <class T>
  const T* values() const {
    if constexpr (std::is_same_v<T, float>) return values32.data(); else return weights.values.data();
  }
  bool key_minus_query() const { return spec.sign == RelativeSign::key_minus_query; }
  // idx of the key u = j - q_i positions after the query.
  std::int64_t index(std::int64_t u) const { return std::clamp(key_minus_query() ? u : -u, -k, k) + k; }
};

namespace {

// The columns of the tables a geometry uses: idx over u in [-(Lk - 1), Lq - 1] (u = j - q_i) is a contiguous range.
struct UsedRows {
  std::int64_t first = 0;  // table row of column 0 of the gathered products
  std::size_t count = 0;
};
UsedRows used_rows(const ShawPlan::Impl& P, std::size_t Lq, std::size_t Lk) {
  const std::int64_t a = P.index(-static_cast<std::int64_t>(Lk - 1)), b = P.index(static_cast<std::int64_t>(Lq - 1));
  return {std::min(a, b), static_cast<std::size_t>(std::max(a, b) - std::min(a, b) + 1)};
}

// The relative part of the scores of a block of query rows, for one head:
//   p   [rows][R]: scale <q_i, a^K[first + c]> (a gemm), R = used.count
//   klo, khi [Lk]: with key_query, scale <k_j, a^K[idx]> at the index of the keys far before / after the query;
//   kr  [Lk][R]:   with key_query, scale <k_j, a^K[first + c]>
// Row i (query at key position q) of b(i, j) = p[i][idx] + kr[j][idx] (one rounding; no kr: p exactly), with -inf
// at the masked keys.
template <class T>
struct RelativeRows {
  const ShawPlan::Impl& P;
  const BiasGeometry& g;
  UsedRows used;
  const T* p;
  const T* kr;   // nullptr without key_query
  const T* klo;
  const T* khi;

  void write(std::int64_t q, const T* prow, T* out) const {
    const auto Lk = static_cast<std::int64_t>(g.key_length);
    const std::int64_t k = P.k, R = static_cast<std::int64_t>(used.count), f = used.first;
    const bool kmq = P.key_minus_query();
    const std::int64_t b0 = std::max<std::int64_t>(0, q - k), b1 = std::min(Lk - 1, q + k);  // the band
    // Far before the query (j < q - k): d = -(q - j) < -k for key - query (index 0), > k for query - key (2k).
    const std::int64_t lo = (kmq ? 0 : 2 * k) - f, hi = (kmq ? 2 * k : 0) - f;
    if (kr == nullptr) {
      if (b0 > 0) std::fill(out, out + b0, prow[lo]);
      for (std::int64_t j = b0; j <= b1; ++j) out[j] = prow[(kmq ? j - q + k : q - j + k) - f];
      if (b1 + 1 < Lk) std::fill(out + b1 + 1, out + Lk, prow[hi]);
    } else {
      for (std::int64_t j = 0; j < b0; ++j) out[j] = prow[lo] + klo[j];
      for (std::int64_t j = b0; j <= b1; ++j) {
        const std::int64_t c = (kmq ? j - q + k : q - j + k) - f;
        out[j] = prow[c] + kr[j * R + c];
      }
      for (std::int64_t j = b1 + 1; j < Lk; ++j) out[j] = prow[hi] + khi[j];
    }
    if (g.mask == BiasMask::causal) {
      const T ninf = -std::numeric_limits<T>::infinity();
      std::fill(out + q + 1, out + Lk, ninf);
      if (!g.key_mask.empty())
        for (std::int64_t j = 0; j <= q; ++j)
          if (g.key_mask[static_cast<std::size_t>(j)] == 0) out[j] = ninf;
    }
  }
};

// scale K A_used^T into kr [Lk][R], and its columns at the far indices into klo / khi.
template <class T>
void key_products(const ShawPlan::Impl& P, const T* K, std::size_t Lk, std::size_t d, double scale, UsedRows used,
                  T* kr, T* klo, T* khi) {
  const auto R = static_cast<blasint>(used.count), dd = static_cast<blasint>(d);
  core::gemm_nt_ld(static_cast<blasint>(Lk), R, dd, scale, K, dd, P.keys<T>() + used.first * static_cast<std::int64_t>(d),
                   dd, 0.0, kr, R);
  const std::int64_t k = P.k, f = used.first;
  const std::int64_t lo = (P.key_minus_query() ? 0 : 2 * k) - f, hi = (P.key_minus_query() ? 2 * k : 0) - f;
  for (std::size_t j = 0; j < Lk; ++j) {
    // a far index outside the used range is never read (no key is that far): 0 keeps the buffers defined
    klo[j] = lo >= 0 && lo < R ? kr[j * used.count + static_cast<std::size_t>(lo)] : T(0);
    khi[j] = hi >= 0 && hi < R ? kr[j * used.count + static_cast<std::size_t>(hi)] : T(0);
  }
}

double resolve_scale(const ShawSpec& s, std::optional<double> scale) {
  const double v = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  if (!std::isfinite(v)) throw Error(kWhere, "scale", format_real(v), "a finite real (default 1/sqrt(head_dim))");
  return v;
}

void check_heads(std::size_t H) {
  if (H < 1 || H > kMaxHeads) throw Error(kWhere, "heads", std::to_string(H), "an integer in [1, 65536]");
}

template <class T>
void scores_impl(const ShawPlan::Impl& P, std::span<const T> q, std::span<const T> k, std::size_t H,
                 const BiasGeometry& g, std::optional<double> scale_opt, std::span<T> out, const TableOptions& o) {
  check_heads(H);
  check_shaw_lengths(P.spec, g.query_length, g.key_length);
  const double scale = resolve_scale(P.spec, scale_opt);
  const std::size_t d = P.spec.head_dim, Lq = g.query_length, Lk = g.key_length;
  core::fused_scores(kWhere, H, q, k, d, g, scale, out, [&](std::span<T> b) {
    const UsedRows used = used_rows(P, Lq, Lk);
    const bool kq = P.spec.key_query;
    core::AlignedBuffer<T> pbuf(Lq * used.count), krbuf(kq ? Lk * used.count : 0), kcols(kq ? 2 * Lk : 0);
    const int threads = core::thread_count(o, Lq * Lk);
    const std::size_t blocks = (Lq + core::kBiasRowBlock - 1) / core::kBiasRowBlock;
    const bool stream = o.streaming_stores && core::worth_streaming(H * Lq * Lk * sizeof(T));
    core::AlignedBuffer<T> rowbuf(stream ? (Lk + 15) / 16 * 16 * static_cast<std::size_t>(std::max(threads, 1)) : 0);
    for (std::size_t h = 0; h < H; ++h) {
      const T* Q = q.data() + h * Lq * d;
      core::gemm_nt_ld(static_cast<blasint>(Lq), static_cast<blasint>(used.count), static_cast<blasint>(d), scale, Q,
                       static_cast<blasint>(d), P.keys<T>() + used.first * static_cast<std::int64_t>(d),
                       static_cast<blasint>(d), 0.0, pbuf.get(), static_cast<blasint>(used.count));
      if (kq) key_products(P, k.data() + h * Lk * d, Lk, d, scale, used, krbuf.get(), kcols.get(), kcols.get() + Lk);
      const RelativeRows<T> rows{P, g, used, pbuf.get(), kq ? krbuf.get() : nullptr, kcols.get(),
                                 kq ? kcols.get() + Lk : nullptr};
      core::parallel_for(blocks, threads, [&](int t, std::size_t blk) {
        const std::size_t i0 = blk * core::kBiasRowBlock, i1 = std::min(Lq, i0 + core::kBiasRowBlock);
        for (std::size_t i = i0; i < i1; ++i) {
          T* dst = b.data() + (h * Lq + i) * Lk;
          const auto qi = static_cast<std::int64_t>(Lk - Lq + i);
          if (!stream) {
            rows.write(qi, pbuf.get() + i * used.count, dst);
          } else {
            T* tmp = rowbuf.get() + static_cast<std::size_t>(t) * ((Lk + 15) / 16 * 16);
            rows.write(qi, pbuf.get() + i * used.count, tmp);
            core::store_row(dst, tmp, Lk, true);
          }
        }
      });
    }
    if (stream) core::store_fence();
  });
}

// The first query row of the geometry that sees no key (causal mask with a key mask), or Lq.
std::size_t first_blind_row(const BiasGeometry& g) {
  if (g.mask != BiasMask::causal || g.key_mask.empty()) return g.query_length;
  const std::size_t past = g.key_length - g.query_length;
  std::size_t first = 0;
  while (first < g.key_length && g.key_mask[first] == 0) ++first;
  return first <= past ? g.query_length : 0;  // row 0 (at key `past`) sees keys 0..past; later rows see more
}

template <class T>
void softmax_row(T* s, std::size_t n, std::size_t Lk) {
  const T m = core::max_of(s, n, -std::numeric_limits<T>::infinity());
  for (std::size_t j = 0; j < n; ++j) s[j] = s[j] == -std::numeric_limits<T>::infinity() ? T(0) : std::exp(s[j] - m);
  const double sum = core::sum_in_double(s, n);  // a fixed order (core/reduce.hpp); the analysis admits any
  for (std::size_t j = 0; j < n; ++j) s[j] = static_cast<T>(static_cast<double>(s[j]) / sum);
  std::fill(s + n, s + Lk, T(0));
}

template <class T>
void attend_impl(const ShawPlan::Impl& P, std::span<const T> q, std::span<const T> k, std::span<const T> v,
                 std::size_t H, const BiasGeometry& g, std::optional<double> scale_opt, std::span<T> out,
                 const TableOptions& o) {
  check_heads(H);
  check_shaw_lengths(P.spec, g.query_length, g.key_length);
  core::check_bias_geometry(kWhere, H, g);
  const double scale = resolve_scale(P.spec, scale_opt);
  const std::size_t d = P.spec.head_dim, Lq = g.query_length, Lk = g.key_length;
  auto need = [&](const char* what, std::size_t have, std::size_t rows, const char* shape) {
    std::size_t n = 0;
    if (__builtin_mul_overflow(H, rows, &n) || __builtin_mul_overflow(n, d, &n) || have != n)
      throw Error(kWhere, what, std::to_string(have) + " elements",
                  std::string("exactly ") + shape + " = " + std::to_string(n) + " elements");
  };
  need("q", q.size(), Lq, "heads * query_length * head_dim");
  need("k", k.size(), Lk, "heads * key_length * head_dim");
  need("v", v.size(), Lk, "heads * key_length * head_dim");
  need("out", out.size(), Lq, "heads * query_length * head_dim");
  if (first_blind_row(g) < Lq)
    throw Error(kWhere, "key_mask", "no token among the keys query row 0 sees (keys 0.." + std::to_string(Lk - Lq) + ")",
                "a key mask leaving every query row at least one visible key (a row with none has no softmax)");
  const std::string where = std::string(kWhere) + " attend";
  core::to_blasint(Lk, where.c_str(), "key_length");
  prepare_blas();

  const UsedRows used = used_rows(P, Lq, Lk);
  const auto R = static_cast<blasint>(used.count), dd = static_cast<blasint>(d), ldk = static_cast<blasint>(Lk);
  const bool kq = P.spec.key_query, vals = P.spec.values, causal = g.mask == BiasMask::causal;
  const std::size_t B = std::min(Lq, kAttendRowBlock);
  core::AlignedBuffer<T> sbuf(B * Lk), pbuf(B * used.count), krbuf(kq ? Lk * used.count : 0),
      kcols(kq ? 2 * Lk : 0), cbuf(vals ? B * used.count : 0);
  const T* AK = P.keys<T>() + used.first * static_cast<std::int64_t>(d);
  const T* AV = vals ? P.values<T>() + used.first * static_cast<std::int64_t>(d) : nullptr;
  const std::int64_t kk = P.k, f = used.first;
  const bool kmq = P.key_minus_query();
  const std::int64_t lo = (kmq ? 0 : 2 * kk) - f, hi = (kmq ? 2 * kk : 0) - f;
  const std::size_t past = Lk - Lq;

  for (std::size_t h = 0; h < H; ++h) {
    const T* Q = q.data() + h * Lq * d;
    const T* K = k.data() + h * Lk * d;
    const T* V = v.data() + h * Lk * d;
    T* Z = out.data() + h * Lq * d;
    if (kq) key_products(P, K, Lk, d, scale, used, krbuf.get(), kcols.get(), kcols.get() + Lk);
    const RelativeRows<T> rows{P, g, used, pbuf.get(), kq ? krbuf.get() : nullptr, kcols.get(),
                               kq ? kcols.get() + Lk : nullptr};
    for (std::size_t i0 = 0; i0 < Lq; i0 += B) {
      const std::size_t n = std::min(B, Lq - i0);
      const std::size_t keys = causal ? past + i0 + n : Lk;  // the last key any row of the block sees, + 1
      core::gemm_nt_ld(static_cast<blasint>(n), R, dd, scale, Q + i0 * d, dd, AK, dd, 0.0, pbuf.get(), R);
      for (std::size_t r = 0; r < n; ++r)
        rows.write(static_cast<std::int64_t>(past + i0 + r), pbuf.get() + r * used.count, sbuf.get() + r * Lk);
      core::gemm_nt_ld(static_cast<blasint>(n), static_cast<blasint>(keys), dd, scale, Q + i0 * d, dd, K, dd, 1.0,
                       sbuf.get(), ldk);
      for (std::size_t r = 0; r < n; ++r) softmax_row(sbuf.get() + r * Lk, causal ? past + i0 + r + 1 : Lk, Lk);
      core::gemm_nn(static_cast<blasint>(n), dd, static_cast<blasint>(keys), 1.0, sbuf.get(), ldk, V, dd, 0.0,
                    Z + i0 * d, dd);
      if (!vals) continue;
      // C[r][c] = the weights of row r summed over the keys of index first + c: inside the band each index has one
      // key (exact); the far indices (0 and 2k) sum their keys in double, rounded once.
      T* C = cbuf.get();
      std::fill(C, C + n * used.count, T(0));
      for (std::size_t r = 0; r < n; ++r) {
        const auto qi = static_cast<std::int64_t>(past + i0 + r);
        const T* a = sbuf.get() + r * Lk;
        T* c = C + r * used.count;
        const auto L = static_cast<std::int64_t>(Lk);
        const std::int64_t b0 = std::max<std::int64_t>(0, qi - kk), b1 = std::min(L - 1, qi + kk);
        const double slo = b0 > 0 ? core::sum_in_double(a, static_cast<std::size_t>(b0)) : 0.0;
        const double shi = b1 + 1 < L ? core::sum_in_double(a + b1 + 1, static_cast<std::size_t>(L - b1 - 1)) : 0.0;
        for (std::int64_t j = b0; j <= b1; ++j) c[(kmq ? j - qi + kk : qi - j + kk) - f] = a[j];
        // the band's end keys (d = -k, k) share the far indices: their weight is added to the far sums
        if (b0 > 0) c[lo] = static_cast<T>(slo + static_cast<double>(c[lo]));
        if (b1 + 1 < L) c[hi] = static_cast<T>(shi + static_cast<double>(c[hi]));
      }
      core::gemm_nn(static_cast<blasint>(n), dd, R, 1.0, C, R, AV, dd, 1.0, Z + i0 * d, dd);
    }
  }
  (void)o;
}

}  // namespace

ShawPlan::ShawPlan(const ShawSpec& spec, const ShawWeights& weights) {
  validate(spec);
  check_shaw_weights(spec, weights);
  impl_ = std::make_shared<const Impl>(spec, weights);
}
const ShawSpec& ShawPlan::spec() const noexcept { return impl_->spec; }
const ShawWeights& ShawPlan::weights() const noexcept { return impl_->weights; }

std::int32_t ShawPlan::index(std::int64_t u) const { return shaw_index(impl_->spec, u); }

void ShawPlan::indices(const BiasGeometry& g, std::span<std::int32_t> out, const TableOptions& o) const {
  check_shaw_lengths(impl_->spec, g.query_length, g.key_length);
  core::write_index_rows(kWhere, g, out, o, [&](std::int64_t u) { return impl_->index(u); });
}

void ShawPlan::scores(std::span<const float> q, std::span<const float> k, std::size_t heads, const BiasGeometry& g,
                      std::optional<double> scale, std::span<float> out, const TableOptions& o) const {
  scores_impl(*impl_, q, k, heads, g, scale, out, o);
}
void ShawPlan::scores(std::span<const double> q, std::span<const double> k, std::size_t heads, const BiasGeometry& g,
                      std::optional<double> scale, std::span<double> out, const TableOptions& o) const {
  scores_impl(*impl_, q, k, heads, g, scale, out, o);
}
void ShawPlan::attend(std::span<const float> q, std::span<const float> k, std::span<const float> v, std::size_t heads,
                      const BiasGeometry& g, std::optional<double> scale, std::span<float> out,
                      const TableOptions& o) const {
  attend_impl(*impl_, q, k, v, heads, g, scale, out, o);
}
void ShawPlan::attend(std::span<const double> q, std::span<const double> k, std::span<const double> v,
                      std::size_t heads, const BiasGeometry& g, std::optional<double> scale, std::span<double> out,
                      const TableOptions& o) const {
  attend_impl(*impl_, q, k, v, heads, g, scale, out, o);
}

std::size_t shaw_scores_size(const ShawSpec& s, std::size_t heads, const BiasGeometry& g) {
  validate(s);
  check_heads(heads);
  check_shaw_lengths(s, g.query_length, g.key_length);
  return core::check_bias_geometry(kWhere, heads, g);
}

std::int32_t shaw_index(const ShawSpec& s, std::int64_t u) {
  validate(s);
  const auto k = static_cast<std::int64_t>(s.max_relative_position);
  if (u < -kMaxU || u > kMaxU) throw Error(kWhere, "u", std::to_string(u), "an offset j - i with |u| <= 2^31 - 1");
  if (!s.clip && (u < -k || u > k))
    throw Error(kWhere, "u", std::to_string(u), "|u| <= max_relative_position = " + std::to_string(k) + " (clip = false)");
  return static_cast<std::int32_t>(std::clamp(s.sign == RelativeSign::key_minus_query ? u : -u, -k, k) + k);
}

}  // namespace posenc
