// lib/src/core/relative_scores.hpp — the scores of one head of a sinusoid-relative attention (Transformer-XL, XLNet,
// TENER; posenc/relative_attention.hpp): the schemes supply the positional keys of the call and where each entry
// reads them, this file assembles
//   e(i, j) = scale ( <q_i + a, k_j> + <q_i + b, P[c0 - q_i + j]> + [key term] <k_j, P[c1 + q_i - j]>
//                     + [segment] <q_i + s, S[seg(i, j)]> )
// at the visible keys j in [lo(i), hi(i)) of each query row i (q_i = Lk - Lq + i) that the key mask keeps, and -inf
// everywhere else. Every visible entry must be defined (its rows inside P): the schemes' ranges guarantee it.
//
// blas form, per block of kRelativeRowBlock query rows (the blocks' gemms first, then one parallel pass per super-block
// of rows whose gemm outputs fit kRelativeSuperBytes):
//   G = scale (Q_blk + b) P[cmin .. cmax]^T   one gemm over the table rows the block's visible entries read
//   out[i][lo .. hi) = G[i][c0 - q_i + lo ..]  the shift as a contiguous copy; -inf outside [lo, hi)
//   segment:  out[i][j] += scale <q_i + s, S[seg(i, j)]> (two dot products per row)
//   key term, transposed: per block of keys, Gk = scale K_blk P[..]^T over the rows c1 + q_i - j its queries read
//             (one contiguous run), then out[i][j] += Gk[j][c1 + q_i - j] in tiles of 256 x 256
//   content:  out += scale (Q + a) K^T, one beta = 1 gemm when every row sees every key, else per block over
//             [lo_min, hi_max) (-inf + a finite product stays -inf)
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
  prepare_blas();
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

template <class T, class Range>
void blas_form(const RelativeHead<T>& H, Range&& range, double scale, T* out, int threads);

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

  blas_form(H, range, scale, out, threads);
}

// The blas form (header). Rows and keys go in super-blocks whose gemm outputs fit kRelativeSuperBytes, so that one
// parallel region per super-block moves them into place (not one per 256-row block: a pool woken between small
// gemms competes with OpenBLAS's own threads on 2 cores).
inline constexpr std::size_t kRelativeSuperBytes = std::size_t{4} << 20;

template <class T, class Range>
void blas_form(const RelativeHead<T>& H, Range&& range, double scale, T* out, int threads) {
  const std::size_t Lq = H.Lq, Lk = H.Lk, d = H.d, past = Lk - Lq, B = kRelativeRowBlock;
  const T ninf = -std::numeric_limits<T>::infinity();
  const T sc = static_cast<T>(scale);
  const auto dd = static_cast<blasint>(d);
  const auto qpos = [&](std::size_t i) { return static_cast<std::int64_t>(past + i); };
  const auto key_type = [&](std::size_t j) { return j < past ? std::int64_t{0} : H.query_types[j - past]; };
  const bool segments = H.segment_bias != nullptr;

  std::vector<std::size_t> lo(Lq), hi(Lq);
  bool full = true;  // every row sees every key: one content gemm for the whole matrix
  for (std::size_t i = 0; i < Lq; ++i) {
    const auto [l, h] = range(i);
    lo[i] = std::min(l, Lk);
    hi[i] = std::max(std::min(h, Lk), lo[i]);
    full = full && lo[i] == 0 && hi[i] == Lk;
  }
  // q + a and q + b of every row, rounded once to T (as the code's rw_head_q, rr_head_q).
  AlignedBuffer<T> qa(Lq * d), qb(Lq * d);
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t e = 0; e < d; ++e) {
      qa.get()[i * d + e] = H.q[i * d + e] + H.content_bias[e];
      qb.get()[i * d + e] = H.q[i * d + e] + (H.position_bias ? H.position_bias[e] : T(0));
    }

  // Blocks of 256 rows: the table rows [cmin, cmin + width) the visible entries of a block read, its offset in the
  // super-block buffer.
  struct Block {
    std::size_t i0 = 0, i1 = 0, lo_min = 0, hi_max = 0, width = 0, at = 0;
    std::int64_t cmin = 0;
  };
  const std::size_t nblocks = (Lq + B - 1) / B;
  std::vector<Block> blocks(nblocks);
  for (std::size_t b = 0; b < nblocks; ++b) {
    Block& k = blocks[b];
    k.i0 = b * B;
    k.i1 = std::min(Lq, k.i0 + B);
    k.lo_min = Lk;
    std::int64_t cmin = std::numeric_limits<std::int64_t>::max(), cmax = std::numeric_limits<std::int64_t>::min();
    for (std::size_t i = k.i0; i < k.i1; ++i) {
      if (lo[i] >= hi[i]) continue;
      k.lo_min = std::min(k.lo_min, lo[i]);
      k.hi_max = std::max(k.hi_max, hi[i]);
      cmin = std::min(cmin, H.c0 - qpos(i) + static_cast<std::int64_t>(lo[i]));
      cmax = std::max(cmax, H.c0 - qpos(i) + static_cast<std::int64_t>(hi[i]) - 1);
    }
    if (k.lo_min < k.hi_max) {
      k.cmin = cmin;
      k.width = static_cast<std::size_t>(cmax - cmin + 1);
    }
  }

  // ---- the position term (+ segment, mask), by super-blocks of row blocks ----
  const std::size_t cap = std::max<std::size_t>(kRelativeSuperBytes / sizeof(T), B * (Lk + B));
  AlignedBuffer<T> g(std::min(cap, Lq * (Lk + B)));
  for (std::size_t b0 = 0; b0 < nblocks;) {
    std::size_t b1 = b0, used = 0;
    while (b1 < nblocks && (b1 == b0 || used + (blocks[b1].i1 - blocks[b1].i0) * blocks[b1].width <= cap)) {
      blocks[b1].at = used;
      used += (blocks[b1].i1 - blocks[b1].i0) * blocks[b1].width;
      ++b1;
    }
    for (std::size_t b = b0; b < b1; ++b) {
      const Block& k = blocks[b];
      if (k.width == 0) continue;
      gemm_nt_ld(static_cast<blasint>(k.i1 - k.i0), static_cast<blasint>(k.width), dd, scale, qb.get() + k.i0 * d, dd,
                 H.P + static_cast<std::size_t>(k.cmin) * d, dd, 0.0, g.get() + k.at, static_cast<blasint>(k.width));
    }
    const std::size_t r0 = blocks[b0].i0, r1 = blocks[b1 - 1].i1;
    parallel_for(r1 - r0, threads, [&](int, std::size_t r) {
      const std::size_t i = r0 + r;
      const Block& k = blocks[i / B];
      T* row = out + i * Lk;
      const std::size_t l = lo[i], h = hi[i];
      if (l < h) {
        const T* src = g.get() + k.at + (i - k.i0) * k.width +
                       static_cast<std::size_t>(H.c0 - qpos(i) + static_cast<std::int64_t>(l) - k.cmin);
        std::copy(src, src + (h - l), row + l);
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
          for (std::size_t j = l; j < h; ++j) row[j] += t != key_type(j) ? other : same;
        }
      }
      std::fill(row, row + l, ninf);
      std::fill(row + h, row + Lk, ninf);
      if (!H.key_mask.empty())
        for (std::size_t j = l; j < h; ++j)
          if (H.key_mask[j] == 0) row[j] = ninf;
    });
    b0 = b1;
  }

  // ---- the key term, transposed: key j reads rows c1 + q_i - j over its visible queries i, which for a block of keys
  // is one contiguous run of table rows; a gemm per block of keys, then tiles added into place ----
  if (H.key_term) {
    // The queries that see key j: every query of the scheme that has a key term (TENER: [0, Lq) minus the mask's
    // -inf, which an addition leaves -inf); the rows of key block [j0, j1) are c1 + q_i - j for i in [0, Lq).
    const std::size_t kblocks = (Lk + B - 1) / B, kw = Lq + B;
    const std::size_t kcap = std::max<std::size_t>(kRelativeSuperBytes / sizeof(T), B * kw);
    AlignedBuffer<T> gk(std::min(kcap, kblocks * B * kw));
    for (std::size_t kb0 = 0; kb0 < kblocks;) {
      const std::size_t kb1 = std::min(kblocks, kb0 + std::max<std::size_t>(1, kcap / (B * kw)));
      std::vector<std::int64_t> first(kb1 - kb0);
      std::vector<std::size_t> width(kb1 - kb0);
      for (std::size_t kb = kb0; kb < kb1; ++kb) {
        const std::size_t j0 = kb * B, j1 = std::min(Lk, j0 + B);
        const std::int64_t f = std::max<std::int64_t>(H.c1 + qpos(0) - static_cast<std::int64_t>(j1 - 1), 0);
        const std::int64_t l = std::min<std::int64_t>(H.c1 + qpos(Lq - 1) - static_cast<std::int64_t>(j0),
                                                      static_cast<std::int64_t>(H.rows) - 1);
        first[kb - kb0] = f;
        width[kb - kb0] = l >= f ? static_cast<std::size_t>(l - f + 1) : 0;
        if (width[kb - kb0] == 0) continue;
        gemm_nt_ld(static_cast<blasint>(j1 - j0), static_cast<blasint>(width[kb - kb0]), dd, scale, H.k + j0 * d, dd,
                   H.P + static_cast<std::size_t>(f) * d, dd, 0.0, gk.get() + (kb - kb0) * B * kw,
                   static_cast<blasint>(width[kb - kb0]));
      }
      // Tiles of B queries x B keys: out[i][j] += gk[j][c1 + q_i - j - first], within each row's visible keys.
      const std::size_t qtiles = (Lq + B - 1) / B, ktiles = kb1 - kb0;
      parallel_for(qtiles * ktiles, threads, [&](int, std::size_t t) {
        const std::size_t qt = t / ktiles, kb = kb0 + t % ktiles;
        if (width[kb - kb0] == 0) return;
        const std::size_t j0 = kb * B, j1 = std::min(Lk, j0 + B);
        const T* base = gk.get() + (kb - kb0) * B * kw;
        const std::size_t w = width[kb - kb0];
        const std::int64_t f = first[kb - kb0];
        // A blocked transpose: gk's row j holds key j's values for consecutive queries i (contiguous), out's row i
        // wants them for consecutive keys j; S x S sub-tiles go through a small buffer that stays in L1.
        constexpr std::size_t S = 32;
        T tile[S][S];
        for (std::size_t a0 = qt * B; a0 < std::min(Lq, qt * B + B); a0 += S)
          for (std::size_t b0 = j0; b0 < j1; b0 += S) {
            const std::size_t a1 = std::min({Lq, qt * B + B, a0 + S}), b1 = std::min(j1, b0 + S);
            for (std::size_t j = b0; j < b1; ++j) {
              const T* src = base + (j - j0) * w + static_cast<std::size_t>(H.c1 + qpos(a0) - static_cast<std::int64_t>(j) - f);
              for (std::size_t i = a0; i < a1; ++i) tile[i - a0][j - b0] = src[i - a0];
            }
            for (std::size_t i = a0; i < a1; ++i) {
              T* row = out + i * Lk;
              const std::size_t jl = std::max(lo[i], b0), jh = std::min(hi[i], b1);
              for (std::size_t j = jl; j < jh; ++j) row[j] += tile[i - a0][j - b0];
            }
          }
      });
      kb0 = kb1;
    }
  }

  // ---- the content term, beta = 1 (-inf stays -inf): one gemm when every row sees every key, else per block ----
  if (full) {
    gemm_nt_accumulate(static_cast<blasint>(Lq), static_cast<blasint>(Lk), dd, scale, qa.get(), H.k, out,
                       static_cast<blasint>(Lk));
    return;
  }
  for (const Block& k : blocks)
    if (k.lo_min < k.hi_max)
      gemm_nt_accumulate(static_cast<blasint>(k.i1 - k.i0), static_cast<blasint>(k.hi_max - k.lo_min), dd, scale,
                         qa.get() + k.i0 * d, H.k + k.lo_min * d, out + k.i0 * Lk + k.lo_min, static_cast<blasint>(Lk));
}

}  // namespace posenc::core
