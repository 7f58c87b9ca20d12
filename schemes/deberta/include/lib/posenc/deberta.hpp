// posenc/deberta.hpp — fast DeBERTa-v2/v3 disentangled attention: log buckets of the relative position, the
// relative-position and c2p / p2c index matrices of a call, and the disentangled pre-softmax scores through cblas,
// never an L x L x d tensor. Definition: posenc/deberta_spec.hpp.
//
// Geometry: query row i at position i, key j at position j (HF build_relative_position: the queries are the FIRST
// positions, unlike posenc/bias.hpp's bias schemes); rel(i, j) = i - j. Lq and Lk are independent, 1 .. 2^30.
//
// Plans
//   DebertaPlan plan(spec, weights) validates both once and keeps the tables (also rounded to float32 for the f32
//   entry points). A plan is immutable and safe to use from several threads; copies share the data.
//
// Buckets. bucket(rel) is b(rel) of the spec's regime:
//   exact  mid + ceil(v(a)), v(a) = ln(a / mid) / ln(M / mid) N: v in double, then where that lies within 2^-30 of an
//          integer in binary128 (~2^-100 relative), and where that lies within 2^-80 of an integer t the exact
//          comparison a^N mid^t <= M^t mid^N in GMP integers (so a = M is exactly N: bucket position_buckets - 1).
//          (Skipped only when the integers would exceed 2^24 bits: then the binary128 value decides; no spec of
//          CONVENTIONS.md gets there.)
//   hf     HF's float32 steps of deberta_spec.hpp, each correctly rounded (float32 division and product; the logs
//          through core::rn32_log, double with a binary128 fallback near rounding boundaries).
//   Every index depends only on rel = i - j: the matrices are Toeplitz, each row a slice of one vector over rel.
// Index matrices (int32, [Lq][Lk]): relative_positions writes b(i - j) (HF build_relative_position with buckets;
//   Error naming "query_length" / "key_length" where some |b| would not fit in int32, only for specs far outside
//   CONVENTIONS.md's); position_indices writes c(i, j) = clamp(b + span, 0, 2 span - 1) (the c2p gather index; p2c
//   uses the same c at (i, j)). p2c_indices writes HF's own p2c_pos [key_length][key_length], the index its p2c
//   term gathers along the relative axis of K Q_r^T (key-major) before transposing: p2c_pos[a][b] =
//   clamp(-b(a - b) + span, 0, 2 span - 1), HF building r_pos over the keys both ways (build_rpos: relative_pos
//   itself when Lq = Lk); since b is odd, p2c_pos[j][i] = c(i, j) (transformers@967ed0db
//   models/deberta_v2/modeling_deberta_v2.py, disentangled_attention_bias).
// Scores of head h (q [heads][Lq][head_dim], k [heads][Lk][head_dim]; out [heads][Lq][Lk]):
//     e(i, j) = scale (<q_i, k_j> + [c2p] <q_i, K_r[h][c(i, j)]> + [p2c] <k_j, Q_r[h][c(i, j)]>)
//   computed as P = scale Q K_r^T (Lq x R) and G = scale K Q_r^T (Lk x R) over the R table rows the call uses (two
//   gemms), the relative rows b(i, j) = P[i][c] + G[j][c] (one rounding) gathered in 64 x 256 tiles so that the rows
//   of G a tile reads stay in cache; where 64 or more consecutive offsets share one index (far from the query: the
//   c2p clamp, wide log buckets) the row is a vector add of G's column c, copied out once per head; then a beta = 1
//   gemm adds scale Q K^T. scale std::nullopt = 1/sqrt(head_dim (1 +
//   c2p + p2c)), as HF. key_mask (empty, or Lk entries of 0 = padding / 1 = token) writes -inf at the padded keys
//   (a row may be all -inf: DeBERTa's softmax is the caller's). The error is bounded by the budget row
//   deberta.scores.* (schemes/deberta/budget.cpp).
// Reproducibility: index rows depend only on (i - j) and the spec. Scores are computed in a fixed order of calls for
//   a given geometry; the BLAS library's own threading decides its sums' order (as posenc/shaw.hpp says).
//
// Every function validates what it is given and throws posenc::Error naming the parameter; nothing is read or
// written outside the spans passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "posenc/deberta_spec.hpp"
#include "posenc/error.hpp"
#include "posenc/options.hpp"

namespace posenc {

class DebertaPlan {
 public:
  DebertaPlan(const DebertaSpec& spec, const DebertaWeights& weights);
  const DebertaSpec& spec() const noexcept;
  const DebertaWeights& weights() const noexcept;

  // b(rel) (|rel| <= 2^31 - 1, else Error naming "rel").
  std::int64_t bucket(std::int64_t rel) const;
  // c = clamp(b(rel) + span, 0, 2 span - 1) (same range of rel).
  std::int32_t position_index(std::int64_t rel) const;

  // b(i - j) as [query_length][key_length] int32.
  void relative_positions(std::size_t query_length, std::size_t key_length, std::span<std::int32_t> out,
                          const TableOptions& = {}) const;
  // c(i, j) as [query_length][key_length] int32.
  void position_indices(std::size_t query_length, std::size_t key_length, std::span<std::int32_t> out,
                        const TableOptions& = {}) const;
  // HF's p2c_pos as [key_length][key_length] int32: row a (a key), column b, clamp(-b(a - b) + span, 0, 2 span - 1).
  void p2c_indices(std::size_t key_length, std::span<std::int32_t> out, const TableOptions& = {}) const;

  // scores[h][i][j] for every head of the spec; key_mask empty or key_length entries of 0 / 1.
  void scores(std::span<const float> q, std::span<const float> k, std::size_t query_length, std::size_t key_length,
              std::span<const std::uint8_t> key_mask, std::optional<double> scale, std::span<float> out,
              const TableOptions& = {}) const;
  void scores(std::span<const double> q, std::span<const double> k, std::size_t query_length, std::size_t key_length,
              std::span<const std::uint8_t> key_mask, std::optional<double> scale, std::span<double> out,
              const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline DebertaPlan make_plan(const DebertaSpec& spec, const DebertaWeights& weights) {
  return DebertaPlan(spec, weights);
}

// Values of a scores matrix: heads * query_length * key_length (validates the spec and the lengths).
std::size_t deberta_scores_size(const DebertaSpec&, std::size_t query_length, std::size_t key_length);

// b(rel) for a spec alone (no tables needed).
std::int64_t deberta_bucket(const DebertaSpec&, std::int64_t rel);

}  // namespace posenc
