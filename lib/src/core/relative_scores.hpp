// lib/src/core/relative_scores.hpp — the scores of one head of a sinusoid-relative attention (Transformer-XL, XLNet,
// TENER; posenc/relative_attention.hpp): the schemes supply the positional keys of the call and where each entry
// reads them, this file assembles
//   e(i, j) = scale ( <q_i + a, k_j> + <q_i + b, P[c0 - q_i + j]> + [key term] <k_j, P[c1 + q_i - j]>
//                     + [segment] <q_i + s, S[seg(i, j)]> )
// at the visible keys j in [lo(i), hi(i)) of each query row i (q_i = Lk - Lq + i) that the key mask keeps, and -inf
// everywhere else. Every visible entry must be defined (its rows inside P): the schemes' ranges guarantee it.
//
// blas form, per block of kRelativeRowBlock query rows:
//   G = scale (Q_blk + b) P[cmin .. cmax]^T   one gemm over the table rows the block's visible entries read
//   out[i][lo .. hi) = G[i][c0 - q_i + lo ..]  the shift as a contiguous copy; -inf outside [lo, hi)
//   key term: per block of keys, H = scale K_blk P[..]^T and out[i][j] += H[j][c1 + q_i - j]
//   segment:  out[i][j] += scale <q_i + s, S[seg(i, j)]> (two dot products per row)
//   out_blk[:, lo_min .. hi_max) += scale (Q_blk + a) K[lo_min .. hi_max)^T   (beta = 1: -inf stays -inf)
// direct form: each visible entry's sums in the output type, in the order content, position, key, segment.
// Each visible entry gets the same operations whatever the thread count (the gemms are OpenBLAS's; its own
// threading decides their sums' order, as for every scheme's scores).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/angle_table.hpp"  // AlignedBuffer
#include "core/bias_rows.hpp"    // check_bias_geometry
#include "core/blas.hpp"
#include "core/parallel.hpp"
#include "posenc/blas.hpp"
#include "posenc/bias.hpp"
#include "posenc/error.hpp"
#include "posenc/options.hpp"
#include "posenc/relative_attention.hpp"

namespace posenc::core {

inline constexpr std::size_t kRelativeRowBlock = 256;

// Validates one call of a scheme with H heads of d values (the geometry, q [H][Lq][d], k [H][Lk][d], out [H][Lq][Lk],
// the form and the scale: errors name `where`) and returns the scale to use (std::nullopt: default_scale).
template <class T>
double check_relative_call(const char* where, std::size_t H, std::size_t d, const BiasGeometry& g,
                           std::span<const T> q, std::span<const T> k, std::span<T> out, RelativeScoresForm form,
                           std::optional<double> scale, double default_scale) {
  const std::size_t total = check_bias_geometry(where, H, g);
  if (!enum_index(form))
    throw Error(where, "form", std::to_string(static_cast<int>(form)), enum_names<RelativeScoresForm>());
  const double sc = scale ? *scale : default_scale;
  if (!std::isfinite(sc)) throw Error(where, "scale", format_real(sc), "a finite real");
  const std::size_t Lq = g.query_length, Lk = g.key_length;
  if (q.size() != H * Lq * d)
    throw Error(where, "q", std::to_string(q.size()) + " elements",
                "exactly heads * query_length * d_head = " + std::to_string(H * Lq * d) + " elements");
  if (k.size() != H * Lk * d)
    throw Error(where, "k", std::to_string(k.size()) + " elements",
                "exactly heads * key_length * d_head = " + std::to_string(H * Lk * d) + " elements");
  if (out.size() != total)
    throw Error(where, "scores", std::to_string(out.size()) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  const std::string w = std::string(where) + " scores";
  to_blasint(Lq + Lk, w.c_str(), "key_length");
  warn_if_blas_fallback();
  return sc;
}

// A scheme's weights as doubles (the plan's) and rounded once to float32 (the f32 entry points'), by element type.
struct WeightCopies {
  std::vector<double> f64;
  std::vector<float> f32;
  WeightCopies() = default;
  explicit WeightCopies(const std::vector<double>& w) : f64(w), f32(w.begin(), w.end()) {}
  template <class T>
  const T* get() const {
    if constexpr (std::is_same_v<T, float>) return f32.data(); else return f64.data();
  }
};

// One head of one call. Vectors are d values; matrices row-major with d columns.
template <class T>
struct RelativeHead {
  std::size_t Lq = 0, Lk = 0, d = 0;
  const T* q = nullptr;              // [Lq][d]
  const T* k = nullptr;              // [Lk][d]
  const T* content_bias = nullptr;   // a [d]
  const T* position_bias = nullptr;  // b [d] (nullptr: 0)
  const T* P = nullptr;              // positional keys [rows][d]
  std::size_t rows = 0;
  std::int64_t c0 = 0;               // the position term's row: c0 - q_i + j
  bool key_term = false;
  std::int64_t c1 = 0;               // the key term's row: c1 + q_i - j
  const T* segment_bias = nullptr;   // s [d]; nullptr: no segment term
  const T* segment_same = nullptr;   // S[0] [d]
  const T* segment_other = nullptr;  // S[1] [d]
  std::span<const std::int64_t> query_types;  // Lq types; key j's type: 0 for j < Lk - Lq, query_types[j - (Lk - Lq)]
  std::span<const std::uint8_t> key_mask;     // empty or Lk entries (0: hidden)
};

// range(i) -> {lo, hi}: the keys [lo, hi) row i may see (before the key mask).
template <class T, class Range>
void relative_scores_head(const RelativeHead<T>& H, Range&& range, double scale, RelativeScoresForm form, T* out,
                          const TableOptions& o) {
  const std::size_t Lq = H.Lq, Lk = H.Lk, d = H.d, past = Lk - Lq;
  const T ninf = -std::numeric_limits<T>::infinity();
  const T sc = static_cast<T>(scale);
  auto qpos = [&](std::size_t i) { return static_cast<std::int64_t>(past + i); };
  auto key_type = [&](std::size_t j) { return j < past ? std::int64_t{0} : H.query_types[j - past]; };
  const bool segments = H.segment_bias != nullptr;
  const int threads = thread_count(o, Lq * Lk);

  // The mask and the -inf outside each row's range; returns nothing (entries in range keep what is there).
  auto mask_row = [&](std::size_t lo, std::size_t hi, T* row) {
    std::fill(row, row + std::min(lo, Lk), ninf);
    if (hi < Lk) std::fill(row + std::max(hi, lo), row + Lk, ninf);
    if (!H.key_mask.empty())
      for (std::size_t j = lo; j < hi; ++j)
        if (H.key_mask[j] == 0) row[j] = ninf;
  };

  if (form == RelativeScoresForm::direct) {
    parallel_for(Lq, threads, [&](int, std::size_t i) {
      const auto [lo, hi] = range(i);
      T* row = out + i * Lk;
      const T* qi = H.q + i * d;
      for (std::size_t j = lo; j < hi; ++j) {
        const T* kj = H.k + j * d;
        const T* p = H.P + static_cast<std::size_t>(H.c0 - qpos(i) + static_cast<std::int64_t>(j)) * d;
        T acc = 0;
        for (std::size_t e = 0; e < d; ++e) acc += (qi[e] + H.content_bias[e]) * kj[e];
        for (std::size_t e = 0; e < d; ++e) acc += (qi[e] + (H.position_bias ? H.position_bias[e] : T(0))) * p[e];
        if (H.key_term) {
          const T* pk = H.P + static_cast<std::size_t>(H.c1 + qpos(i) - static_cast<std::int64_t>(j)) * d;
          for (std::size_t e = 0; e < d; ++e) acc += kj[e] * pk[e];
        }
        if (segments) {
          const T* s = H.query_types[i] != key_type(j) ? H.segment_other : H.segment_same;
          for (std::size_t e = 0; e < d; ++e) acc += (qi[e] + H.segment_bias[e]) * s[e];
        }
        row[j] = sc * acc;
      }
      mask_row(lo, hi, row);
    });
    return;
  }

  const auto dd = static_cast<blasint>(d);
  const auto ldo = static_cast<blasint>(Lk);
  AlignedBuffer<T> qa(kRelativeRowBlock * d), qb(kRelativeRowBlock * d);
  AlignedBuffer<T> g(kRelativeRowBlock * (Lk + kRelativeRowBlock));
  AlignedBuffer<T> hk(H.key_term ? 2 * kRelativeRowBlock * kRelativeRowBlock : 0);
  for (std::size_t i0 = 0; i0 < Lq; i0 += kRelativeRowBlock) {
    const std::size_t i1 = std::min(Lq, i0 + kRelativeRowBlock), n = i1 - i0;
    std::size_t lo_min = Lk, hi_max = 0;
    std::int64_t cmin = std::numeric_limits<std::int64_t>::max(), cmax = std::numeric_limits<std::int64_t>::min();
    for (std::size_t i = i0; i < i1; ++i) {
      const auto [lo, hi] = range(i);
      if (lo >= hi) continue;
      lo_min = std::min(lo_min, lo);
      hi_max = std::max(hi_max, hi);
      cmin = std::min(cmin, H.c0 - qpos(i) + static_cast<std::int64_t>(lo));
      cmax = std::max(cmax, H.c0 - qpos(i) + static_cast<std::int64_t>(hi) - 1);
    }
    if (lo_min >= hi_max) {  // no row of the block sees a key
      for (std::size_t i = i0; i < i1; ++i) std::fill(out + i * Lk, out + (i + 1) * Lk, ninf);
      continue;
    }
    for (std::size_t i = i0; i < i1; ++i)
      for (std::size_t e = 0; e < d; ++e) {
        qa.get()[(i - i0) * d + e] = H.q[i * d + e] + H.content_bias[e];
        qb.get()[(i - i0) * d + e] = H.q[i * d + e] + (H.position_bias ? H.position_bias[e] : T(0));
      }
    // The position term: G[r][c - cmin] = scale <q + b, P[c]>.
    const auto width = static_cast<std::size_t>(cmax - cmin + 1);
    gemm_nt_ld(static_cast<blasint>(n), static_cast<blasint>(width), dd, scale, qb.get(), dd,
               H.P + static_cast<std::size_t>(cmin) * d, dd, 0.0, g.get(), static_cast<blasint>(width));
    parallel_for(n, threads, [&](int, std::size_t r) {
      const std::size_t i = i0 + r;
      const auto [lo, hi] = range(i);
      T* row = out + i * Lk;
      if (lo < hi) {
        const T* src = g.get() + r * width + static_cast<std::size_t>(H.c0 - qpos(i) + static_cast<std::int64_t>(lo) - cmin);
        std::copy(src, src + (hi - lo), row + lo);
        if (segments) {
          T same = 0, other = 0;
          for (std::size_t e = 0; e < d; ++e) {
            const T x = H.q[i * d + e] + H.segment_bias[e];
            same += x * H.segment_same[e];
            other += x * H.segment_other[e];
          }
          same *= sc;
          other *= sc;
          const std::int64_t t = H.query_types[i];
          for (std::size_t j = lo; j < hi; ++j) row[j] += t != key_type(j) ? other : same;
        }
      }
      mask_row(lo, hi, row);
    });
    if (H.key_term) {
      // out[i][j] += scale <k_j, P[c1 + q_i - j]> for each key block: the rows c1 + q_i - j of the block's keys.
      for (std::size_t j0 = lo_min; j0 < hi_max; j0 += kRelativeRowBlock) {
        const std::size_t j1 = std::min(hi_max, j0 + kRelativeRowBlock), m = j1 - j0;
        const std::int64_t kmin = H.c1 + qpos(i0) - static_cast<std::int64_t>(j1 - 1);
        const std::int64_t kmax = H.c1 + qpos(i1 - 1) - static_cast<std::int64_t>(j0);
        const std::int64_t first = std::max<std::int64_t>(kmin, 0);
        const std::int64_t last = std::min<std::int64_t>(kmax, static_cast<std::int64_t>(H.rows) - 1);
        const auto kw = static_cast<std::size_t>(last - first + 1);
        gemm_nt_ld(static_cast<blasint>(m), static_cast<blasint>(kw), dd, scale, H.k + j0 * d, dd,
                   H.P + static_cast<std::size_t>(first) * d, dd, 0.0, hk.get(), static_cast<blasint>(kw));
        parallel_for(n, threads, [&](int, std::size_t r) {
          const std::size_t i = i0 + r;
          const auto [lo, hi] = range(i);
          T* row = out + i * Lk;
          for (std::size_t j = std::max(lo, j0); j < std::min(hi, j1); ++j)
            row[j] += hk.get()[(j - j0) * kw + static_cast<std::size_t>(H.c1 + qpos(i) - static_cast<std::int64_t>(j) - first)];
        });
      }
    }
    // The content term, beta = 1 over the keys the block sees.
    gemm_nt_accumulate(static_cast<blasint>(n), static_cast<blasint>(hi_max - lo_min), dd, scale, qa.get(),
                       H.k + lo_min * d, out + i0 * Lk + lo_min, ldo);
  }
}

}  // namespace posenc::core
