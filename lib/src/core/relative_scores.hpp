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

namespace relative_blas {

// The keys [lo[i], hi[i]) each row i sees (before the key mask), from range(i) clipped to [0, Lk).
struct RowRanges {
  std::vector<std::size_t> lo, hi;
  bool full = true;  // every row sees every key: one content gemm for the whole matrix
};

// A block of 256 rows: the table rows [cmin, cmin + width) its visible entries read, its offset in the super-block
// buffer.
struct Block {
  std::size_t i0 = 0, i1 = 0, lo_min = 0, hi_max = 0, width = 0, at = 0;
  std::int64_t cmin = 0;
};

template <class T>
std::int64_t query_position(const RelativeHead<T>& H, std::size_t i) {
  return static_cast<std::int64_t>(H.Lk - H.Lq + i);
}

template <class T, class Range>
RowRanges row_ranges(const RelativeHead<T>& H, Range&& range) {
  RowRanges r{std::vector<std::size_t>(H.Lq), std::vector<std::size_t>(H.Lq), true};
  for (std::size_t i = 0; i < H.Lq; ++i) {
    const auto [l, h] = range(i);
    r.lo[i] = std::min(l, H.Lk);
    r.hi[i] = std::max(std::min(h, H.Lk), r.lo[i]);
    r.full = r.full && r.lo[i] == 0 && r.hi[i] == H.Lk;
  }
  return r;
}

// q + bias of every row, rounded once to T (as the code's rw_head_q, rr_head_q); bias nullptr: q itself.
template <class T>
AlignedBuffer<T> biased_queries(const RelativeHead<T>& H, const T* bias) {
  AlignedBuffer<T> out(H.Lq * H.d);
  for (std::size_t i = 0; i < H.Lq; ++i)
    for (std::size_t e = 0; e < H.d; ++e) out.get()[i * H.d + e] = H.q[i * H.d + e] + (bias ? bias[e] : T(0));
  return out;
}

template <class T>
std::vector<Block> row_blocks(const RelativeHead<T>& H, const RowRanges& r) {
  const std::size_t B = kRelativeRowBlock, nblocks = (H.Lq + B - 1) / B;
  std::vector<Block> blocks(nblocks);
  for (std::size_t b = 0; b < nblocks; ++b) {
    Block& k = blocks[b];
    k.i0 = b * B;
    k.i1 = std::min(H.Lq, k.i0 + B);
    k.lo_min = H.Lk;
    std::int64_t cmin = std::numeric_limits<std::int64_t>::max(), cmax = std::numeric_limits<std::int64_t>::min();
    for (std::size_t i = k.i0; i < k.i1; ++i) {
      if (r.lo[i] >= r.hi[i]) continue;
      k.lo_min = std::min(k.lo_min, r.lo[i]);
      k.hi_max = std::max(k.hi_max, r.hi[i]);
      cmin = std::min(cmin, H.c0 - query_position(H, i) + static_cast<std::int64_t>(r.lo[i]));
      cmax = std::max(cmax, H.c0 - query_position(H, i) + static_cast<std::int64_t>(r.hi[i]) - 1);
    }
    if (k.lo_min < k.hi_max) {
      k.cmin = cmin;
      k.width = static_cast<std::size_t>(cmax - cmin + 1);
    }
  }
  return blocks;
}

// Row i of out from the position term's gemm output src (its visible keys), plus the segment term, -inf outside
// the row's range and where the key mask hides a key.
template <class T>
void finish_row(const RelativeHead<T>& H, std::size_t i, std::size_t l, std::size_t h, const T* src, double scale,
                T* out) {
  const T ninf = -std::numeric_limits<T>::infinity();
  T* row = out + i * H.Lk;
  if (l < h) {
    std::copy(src, src + (h - l), row + l);
    if (H.segment_bias != nullptr) {
      T same = 0, other = 0;
      for (std::size_t e = 0; e < H.d; ++e) {
        const T x = H.q[i * H.d + e] + H.segment_bias[e];
        same += x * H.segment_same[e];
        other += x * H.segment_other[e];
      }
      same *= static_cast<T>(scale);
      other *= static_cast<T>(scale);
      const std::size_t past = H.Lk - H.Lq;
      const std::int64_t t = H.query_types[i];
      for (std::size_t j = l; j < h; ++j) {
        const std::int64_t tj = j < past ? std::int64_t{0} : H.query_types[j - past];
        row[j] += t != tj ? other : same;
      }
    }
  }
  std::fill(row, row + l, ninf);
  std::fill(row + h, row + H.Lk, ninf);
  if (!H.key_mask.empty())
    for (std::size_t j = l; j < h; ++j)
      if (H.key_mask[j] == 0) row[j] = ninf;
}

// The position term (+ segment, mask) of every row, by super-blocks of row blocks.
template <class T>
void position_term(const RelativeHead<T>& H, const RowRanges& r, std::vector<Block>& blocks, const T* qb,
                   double scale, T* out, int threads) {
  const std::size_t B = kRelativeRowBlock, nblocks = blocks.size(), d = H.d;
  const auto dd = static_cast<blasint>(d);
  const std::size_t cap = std::max<std::size_t>(kRelativeSuperBytes / sizeof(T), B * (H.Lk + B));
  AlignedBuffer<T> g(std::min(cap, H.Lq * (H.Lk + B)));
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
      gemm_nt_ld(static_cast<blasint>(k.i1 - k.i0), static_cast<blasint>(k.width), dd, scale, qb + k.i0 * d, dd,
                 H.P + static_cast<std::size_t>(k.cmin) * d, dd, 0.0, g.get() + k.at, static_cast<blasint>(k.width));
    }
    const std::size_t r0 = blocks[b0].i0, r1 = blocks[b1 - 1].i1;
    parallel_for(r1 - r0, threads, [&](int, std::size_t n) {
      const std::size_t i = r0 + n;
      const Block& k = blocks[i / B];
      const std::size_t l = r.lo[i];
      const T* src = l < r.hi[i] ? g.get() + k.at + (i - k.i0) * k.width +
                                       static_cast<std::size_t>(H.c0 - query_position(H, i) +
                                                                static_cast<std::int64_t>(l) - k.cmin)
                                 : nullptr;
      finish_row(H, i, l, r.hi[i], src, scale, out);
    });
    b0 = b1;
  }
}

// Adds a key block's tile of queries [qt B, qt B + B) from gk (row j: key j's values for consecutive queries,
// starting at table row f) into out within each row's visible keys: a blocked transpose through S x S sub-tiles
// that stay in L1.
template <class T>
void add_key_tile(const RelativeHead<T>& H, const RowRanges& r, const T* base, std::size_t w, std::int64_t f,
                  std::size_t qt, std::size_t j0, std::size_t j1, T* out) {
  const std::size_t B = kRelativeRowBlock, Lq = H.Lq;
  constexpr std::size_t S = 32;
  T tile[S][S];
  for (std::size_t a0 = qt * B; a0 < std::min(Lq, qt * B + B); a0 += S)
    for (std::size_t b0 = j0; b0 < j1; b0 += S) {
      const std::size_t a1 = std::min({Lq, qt * B + B, a0 + S}), b1 = std::min(j1, b0 + S);
      for (std::size_t j = b0; j < b1; ++j) {
        const T* src =
            base + (j - j0) * w + static_cast<std::size_t>(H.c1 + query_position(H, a0) - static_cast<std::int64_t>(j) - f);
        for (std::size_t i = a0; i < a1; ++i) tile[i - a0][j - b0] = src[i - a0];
      }
      for (std::size_t i = a0; i < a1; ++i) {
        T* row = out + i * H.Lk;
        const std::size_t jl = std::max(r.lo[i], b0), jh = std::min(r.hi[i], b1);
        for (std::size_t j = jl; j < jh; ++j) row[j] += tile[i - a0][j - b0];
      }
    }
}

// The key term, transposed: key j reads rows c1 + q_i - j over its visible queries i, which for a block of keys is
// one contiguous run of table rows; a gemm per block of keys, then tiles added into place. The queries that see key
// j: every query of the scheme that has a key term (TENER: [0, Lq) minus the mask's -inf, which an addition leaves
// -inf); the rows of key block [j0, j1) are c1 + q_i - j for i in [0, Lq).
template <class T>
void key_term(const RelativeHead<T>& H, const RowRanges& r, double scale, T* out, int threads) {
  const std::size_t B = kRelativeRowBlock, Lq = H.Lq, Lk = H.Lk, d = H.d;
  const auto dd = static_cast<blasint>(d);
  const std::size_t kblocks = (Lk + B - 1) / B, kw = Lq + B;
  const std::size_t kcap = std::max<std::size_t>(kRelativeSuperBytes / sizeof(T), B * kw);
  AlignedBuffer<T> gk(std::min(kcap, kblocks * B * kw));
  for (std::size_t kb0 = 0; kb0 < kblocks;) {
    const std::size_t kb1 = std::min(kblocks, kb0 + std::max<std::size_t>(1, kcap / (B * kw)));
    std::vector<std::int64_t> first(kb1 - kb0);
    std::vector<std::size_t> width(kb1 - kb0);
    for (std::size_t kb = kb0; kb < kb1; ++kb) {
      const std::size_t j0 = kb * B, j1 = std::min(Lk, j0 + B);
      const std::int64_t f = std::max<std::int64_t>(H.c1 + query_position(H, 0) - static_cast<std::int64_t>(j1 - 1), 0);
      const std::int64_t l = std::min<std::int64_t>(H.c1 + query_position(H, Lq - 1) - static_cast<std::int64_t>(j0),
                                                    static_cast<std::int64_t>(H.rows) - 1);
      first[kb - kb0] = f;
      width[kb - kb0] = l >= f ? static_cast<std::size_t>(l - f + 1) : 0;
      if (width[kb - kb0] == 0) continue;
      gemm_nt_ld(static_cast<blasint>(j1 - j0), static_cast<blasint>(width[kb - kb0]), dd, scale, H.k + j0 * d, dd,
                 H.P + static_cast<std::size_t>(f) * d, dd, 0.0, gk.get() + (kb - kb0) * B * kw,
                 static_cast<blasint>(width[kb - kb0]));
    }
    const std::size_t qtiles = (Lq + B - 1) / B, ktiles = kb1 - kb0;
    parallel_for(qtiles * ktiles, threads, [&](int, std::size_t t) {
      const std::size_t qt = t / ktiles, kb = kb0 + t % ktiles;
      if (width[kb - kb0] == 0) return;
      const std::size_t j0 = kb * B, j1 = std::min(Lk, j0 + B);
      add_key_tile(H, r, gk.get() + (kb - kb0) * B * kw, width[kb - kb0], first[kb - kb0], qt, j0, j1, out);
    });
    kb0 = kb1;
  }
}

// The content term, beta = 1 (-inf stays -inf): one gemm when every row sees every key, else per block.
template <class T>
void content_term(const RelativeHead<T>& H, const RowRanges& r, const std::vector<Block>& blocks, const T* qa,
                  double scale, T* out) {
  const auto dd = static_cast<blasint>(H.d);
  if (r.full) {
    gemm_nt_accumulate(static_cast<blasint>(H.Lq), static_cast<blasint>(H.Lk), dd, scale, qa, H.k, out,
                       static_cast<blasint>(H.Lk));
    return;
  }
  for (const Block& k : blocks)
    if (k.lo_min < k.hi_max)
      gemm_nt_accumulate(static_cast<blasint>(k.i1 - k.i0), static_cast<blasint>(k.hi_max - k.lo_min), dd, scale,
                         qa + k.i0 * H.d, H.k + k.lo_min * H.d, out + k.i0 * H.Lk + k.lo_min,
                         static_cast<blasint>(H.Lk));
}

}  // namespace relative_blas

template <class T, class Range>
void blas_form(const RelativeHead<T>& H, Range&& range, double scale, T* out, int threads) {
  using namespace relative_blas;
  const RowRanges r = row_ranges(H, range);
  const AlignedBuffer<T> qa = biased_queries(H, H.content_bias), qb = biased_queries(H, H.position_bias);
  std::vector<Block> blocks = row_blocks(H, r);
  position_term(H, r, blocks, qb.get(), scale, out, threads);
  if (H.key_term) key_term(H, r, scale, out, threads);
  content_term(H, r, blocks, qa.get(), scale, out);
}

}  // namespace posenc::core
