// lib/src/core/bias_rows.hpp — the machinery every additive-bias scheme shares (posenc/bias.hpp): geometry checks,
// bias matrices written as slices of one per-head vector (about one store per value), the causal / padding mask,
// and scores with the bias fused into a beta = 1 gemm. A scheme supplies only how a head's vector is built.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/angle_table.hpp"  // AlignedBuffer
#include "core/blas.hpp"
#include "core/parallel.hpp"
#include "core/streaming.hpp"
#include "posenc/alibi_spec.hpp"  // check_alibi_lengths: 1 <= Lq <= Lk < 2^31
#include "posenc/bias.hpp"
#include "posenc/error.hpp"
#include "posenc/options.hpp"

namespace posenc::core {

// Validates the geometry (lengths, key_mask, mask) and returns heads * query_length * key_length.
inline std::size_t check_bias_geometry(const char* where, std::size_t heads, const BiasGeometry& g) {
  check_alibi_lengths(g.query_length, g.key_length);
  if (!g.key_mask.empty()) {
    if (g.key_mask.size() != g.key_length)
      throw Error(where, "key_mask", std::to_string(g.key_mask.size()) + " entries",
                  "empty or exactly key_length = " + std::to_string(g.key_length) + " entries");
    for (std::size_t j = 0; j < g.key_mask.size(); ++j)
      if (g.key_mask[j] > 1)
        throw Error(where, "key_mask", "entry " + std::to_string(j) + " = " + std::to_string(g.key_mask[j]),
                    "0 (padding) or 1 (token)");
  }
  if (!enum_index(g.mask)) throw Error(where, "mask", std::to_string(static_cast<int>(g.mask)), enum_names<BiasMask>());
  std::size_t n = 0;
  if (__builtin_mul_overflow(heads, g.query_length, &n) || __builtin_mul_overflow(n, g.key_length, &n))
    throw Error(where, "query_length", std::to_string(g.query_length),
                "a geometry whose heads * query_length * key_length fits in size_t");
  return n;
}

// How a head's rows relate to its vector E.
//   per_key:   every query row is E[0 .. Lk) (a bias that depends on the key only); with the causal mask the
//              entries beyond the query's position are -inf.
//   toeplitz:  a bias that depends on the query-key offset only: E has Lk + Lq - 1 entries, E[Lk - 1 + u] the value
//              for a key u positions after the query (u in [-(Lk - 1), Lq - 1]); row i is E[Lk - 1 - q_i .. + Lk).
enum class RowShape { per_key, toeplitz };

// Rows are written in blocks of this many query rows (one work item: one head, one block).
inline constexpr std::size_t kBiasRowBlock = 64;

// Writes the bias matrix [H][Lq][Lk] of a geometry already checked (total = check_bias_geometry(...)).
// build(h, E, n) fills E[0 .. n) of head h: per_key n = Lk; toeplitz n = Lk when the causal mask will overwrite
// the future keys with -inf, else Lk + Lq - 1. Each head's vector is built once per run of its row blocks in a
// thread, so build must depend only on (h, index): which thread builds it then never matters (reproducibility).
template <class T, class Build>
void write_bias_rows(std::size_t H, const BiasGeometry& g, RowShape shape, Build&& build, std::span<T> out,
                     const TableOptions& o) {
  const std::size_t Lq = g.query_length, Lk = g.key_length, total = H * Lq * Lk;
  const std::size_t past = Lk - Lq;
  const bool causal = g.mask == BiasMask::causal;
  const bool per_key = shape == RowShape::per_key;
  const bool patch_padding = causal && !g.key_mask.empty();
  const T ninf = -std::numeric_limits<T>::infinity();

  const std::size_t blocks_per_head = (Lq + kBiasRowBlock - 1) / kBiasRowBlock;
  const std::size_t items = H * blocks_per_head;
  const int threads =
      std::min<int>(thread_count(o, total), static_cast<int>(std::min<std::size_t>(items, std::size_t{1} << 20)));
  const std::size_t ext = per_key ? Lk : Lk + Lq - 1;
  const std::size_t stride = (ext + (patch_padding ? Lk : 0) + 15) / 16 * 16;
  AlignedBuffer<T> scratch(stride * static_cast<std::size_t>(std::max(threads, 1)));
  const bool tails = per_key && causal && !patch_padding;
  AlignedBuffer<T> fill_row(tails ? Lk : 0);  // -inf, for the masked tails of per-key rows
  if (tails) std::fill(fill_row.get(), fill_row.get() + Lk, ninf);
  const bool stream = o.streaming_stores && worth_streaming(total * sizeof(T));
  std::vector<std::size_t> built(static_cast<std::size_t>(std::max(threads, 1)), H);  // head whose E a thread holds

  parallel_for(items, threads, [&](int t, std::size_t item) {
    const std::size_t h = item / blocks_per_head, b = item % blocks_per_head;
    T* E = scratch.get() + static_cast<std::size_t>(t) * stride;
    T* row = E + ext;
    if (built[static_cast<std::size_t>(t)] != h) {
      built[static_cast<std::size_t>(t)] = h;
      if (per_key) {
        build(h, E, Lk);
      } else if (causal) {
        build(h, E, Lk);
        std::fill(E + Lk, E + ext, ninf);
      } else {
        build(h, E, ext);
      }
    }
    const std::size_t i0 = b * kBiasRowBlock, i1 = std::min(Lq, i0 + kBiasRowBlock);
    for (std::size_t i = i0; i < i1; ++i) {
      T* dst = out.data() + (h * Lq + i) * Lk;
      const std::size_t qi = past + i;  // the query's key position
      const T* src;
      if (per_key) {
        if (!causal) {
          src = E;
        } else if (!patch_padding) {
          store_row(dst, E, qi + 1, stream);
          if (qi + 1 < Lk) store_row(dst + qi + 1, fill_row.get(), Lk - qi - 1, stream);
          continue;
        } else {
          std::memcpy(row, E, (qi + 1) * sizeof(T));
          std::fill(row + qi + 1, row + Lk, ninf);
          src = row;
        }
      } else {
        src = E + (Lk - 1 - qi);
      }
      if (patch_padding) {
        if (src != row) std::memcpy(row, src, Lk * sizeof(T));
        for (std::size_t j = 0; j < Lk; ++j)
          if (g.key_mask[j] == 0) row[j] = ninf;
        src = row;
      }
      store_row(dst, src, Lk, stream);
    }
  });
  if (stream) store_fence();
}

// Writes an index matrix [Lq][Lk] (T5 buckets, Shaw indices) whose entry depends only on the offset u = j - q_i:
// index(u) for u in [-(Lk - 1), Lq - 1]. Validates the geometry and the output size (errors name `where`); the
// geometry's mask and key_mask do not apply (an index has no mask).
template <class Index>
void write_index_rows(const char* where, const BiasGeometry& g, std::span<std::int32_t> out, const TableOptions& o,
                      Index&& index) {
  const std::size_t total = check_bias_geometry(where, 1, g);
  if (out.size() != total)
    throw Error(where, "out", std::to_string(out.size()) + " elements",
                "exactly query_length * key_length = " + std::to_string(total) + " elements");
  BiasGeometry plain = g;
  plain.mask = BiasMask::none;
  plain.key_mask = {};
  const auto Lk = static_cast<std::int64_t>(g.key_length);
  auto build = [&](std::size_t, std::int32_t* E, std::size_t m) {
    for (std::size_t t = 0; t < m; ++t) E[t] = static_cast<std::int32_t>(index(static_cast<std::int64_t>(t) - (Lk - 1)));
  };
  write_bias_rows(1, plain, RowShape::toeplitz, build, out, o);
}

// Writes the bias matrix [H][Lq][Lk] of a geometry already checked, for a bias that is no slice of one vector: each
// row is built on its own. build_row(h, q, E, n) fills E[0 .. n) with the bias of keys 0 .. n-1 for the query at key
// position q (n = q + 1 with the causal mask: the keys after it become -inf here; n = Lk otherwise); the padding
// mask is applied here. Work items are (head, block of kBiasRowBlock rows); build_row must depend only on its
// arguments (reproducibility: which thread builds a row never matters).
template <class T, class BuildRow>
void write_bias_rows_each(std::size_t H, const BiasGeometry& g, BuildRow&& build_row, std::span<T> out,
                          const TableOptions& o) {
  const std::size_t Lq = g.query_length, Lk = g.key_length, total = H * Lq * Lk, past = Lk - Lq;
  const bool causal = g.mask == BiasMask::causal;
  const bool padding = causal && !g.key_mask.empty();
  const T ninf = -std::numeric_limits<T>::infinity();
  const std::size_t blocks_per_head = (Lq + kBiasRowBlock - 1) / kBiasRowBlock;
  const std::size_t items = H * blocks_per_head;
  const int threads =
      std::min<int>(thread_count(o, total), static_cast<int>(std::min<std::size_t>(items, std::size_t{1} << 20)));
  const std::size_t stride = (Lk + 15) / 16 * 16;
  AlignedBuffer<T> scratch(stride * static_cast<std::size_t>(std::max(threads, 1)));
  const bool stream = o.streaming_stores && worth_streaming(total * sizeof(T));
  parallel_for(items, threads, [&](int t, std::size_t item) {
    const std::size_t h = item / blocks_per_head, b = item % blocks_per_head;
    T* row = scratch.get() + static_cast<std::size_t>(t) * stride;
    const std::size_t i0 = b * kBiasRowBlock, i1 = std::min(Lq, i0 + kBiasRowBlock);
    for (std::size_t i = i0; i < i1; ++i) {
      const std::size_t qi = past + i, n = causal ? qi + 1 : Lk;
      build_row(h, qi, row, n);
      std::fill(row + n, row + Lk, ninf);
      if (padding)
        for (std::size_t j = 0; j < n; ++j)
          if (g.key_mask[j] == 0) row[j] = ninf;
      store_row(out.data() + (h * Lq + i) * Lk, row, Lk, stream);
    }
  });
  if (stream) store_fence();
}

// Causal scores: query rows per gemm call (each call stops at the last key its rows see).
inline constexpr std::size_t kScoresRowBlock = 256;

// scores[h][i][j] = scale <q[h][i], k[h][j]> + bias (+ mask): write_bias(out) writes the bias rows (with the mask),
// then cblas ?gemm accumulates into them (beta = 1). With the causal mask a block of query rows [i0, i1) sees keys
// 0 .. q_{i1-1} only: its gemm stops there (the entries beyond are -inf already, and -inf + a finite product is
// -inf), about half the work of a square matrix. Validates every argument (errors name `where`).
template <class T, class WriteBias>
void fused_scores(const char* where, std::size_t H, std::span<const T> q, std::span<const T> k, std::size_t d,
                  const BiasGeometry& g, double scale, std::span<T> out, WriteBias&& write_bias) {
  const std::size_t total = check_bias_geometry(where, H, g);
  const std::size_t Lq = g.query_length, Lk = g.key_length;
  if (d < 1 || d > (std::size_t{1} << 16)) throw Error(where, "head_dim", std::to_string(d), "an integer in [1, 65536]");
  if (!std::isfinite(scale)) throw Error(where, "scale", format_real(scale), "a finite real");
  auto need = [&](const char* what, std::size_t have, std::size_t rows, const char* shape) {
    std::size_t n = 0;
    if (__builtin_mul_overflow(H, rows, &n) || __builtin_mul_overflow(n, d, &n) || have != n)
      throw Error(where, what, std::to_string(have) + " elements",
                  std::string("exactly ") + shape + " = " + std::to_string(n) + " elements");
  };
  need("q", q.size(), Lq, "heads * query_length * head_dim");
  need("k", k.size(), Lk, "heads * key_length * head_dim");
  if (out.size() != total)
    throw Error(where, "scores", std::to_string(out.size()) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  const std::string scores_where = std::string(where) + " scores";
  const blasint m = to_blasint(Lq, scores_where.c_str(), "query_length");
  const blasint n = to_blasint(Lk, scores_where.c_str(), "key_length");
  const blasint kk = to_blasint(d, scores_where.c_str(), "head_dim");
  prepare_blas();
  write_bias(out);
  const bool causal = g.mask == BiasMask::causal;
  const std::size_t block = causal ? kScoresRowBlock : Lq, past = Lk - Lq;
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i0 = 0; i0 < Lq; i0 += block) {
      const std::size_t rows = std::min(block, Lq - i0), keys = causal ? past + i0 + rows : Lk;
      gemm_nt_accumulate(causal ? static_cast<blasint>(rows) : m, causal ? static_cast<blasint>(keys) : n, kk, scale,
                         q.data() + (h * Lq + i0) * d, k.data() + h * Lk * d, out.data() + (h * Lq + i0) * Lk, n);
    }
}

}  // namespace posenc::core
