// posenc/tener.hpp — fast TENER relative attention: the sinusoid table of a call, the rows each score entry reads,
// pre-softmax scores through cblas (posenc/relative_attention.hpp), and the code's _shift / _transpose_shift.
// Definition: posenc/tener_spec.hpp; geometry and key mask: posenc/bias.hpp (Lq = Lk = L).
//
// Plans
//   TenerPlan plan(spec, weights) validates both once, keeps the biases (also rounded to float32 for the f32 entry
//   points) and the sinusoidal plan of the table (halves, the fairseq rule: exact, or get_embedding's float32 steps).
//   Immutable, thread-safe; copies share the data.
//
// Table. table(L, out): R [2L][d_head], row c the sinusoid of t = c - L, the row of t = -L all zeros when L >
//   init_size / 2 (a fresh module's rebuilt table): the sinusoidal plan's rows (budget rows sinusoidal.table.*;
//   SIN-REPRO-2: the row of -t is the row of t with its sines negated, bit for bit, in both regimes).
// Indices. indices(geometry, out, key): the row each entry reads, L + j - i (the query term, _shift), or with key =
//   true L + i - j (the key term, _transpose_shift); every entry is defined.
// Scores of head h (q [heads][L][d_head], k [heads][L][d_head]; one table for every head, not projected):
//     e(i, j) = scale ( <q_i + r_r_bias_h, k_j> + <q_i + r_w_bias_h, R(j - i)> + <k_j, R(i - j)> )
//   scale std::nullopt = the spec's (1/sqrt(d_head) with scale = true, else 1). The blas form adds the key term per
//   block of keys (one gemm K_blk R^T per block, read along its anti-diagonals): three gemms in all. -inf at keys
//   the geometry's key_mask hides. Error bound: budget rows tener.scores.* (schemes/tener/budget.cpp).
// Shifts. tener_shift(x, L, out) and tener_transpose_shift(y, L, out) are relative_transformer.py's _shift and
//   _transpose_shift of one [L][2L] matrix, bit for bit: out[i][j] = x[i][L + j - i], resp. y[j][L + i - j].
//
// Every function validates what it is given and throws posenc::Error naming the parameter; nothing is read or
// written outside the spans passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "posenc/bias.hpp"
#include "posenc/options.hpp"
#include "posenc/relative_attention.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/tener_spec.hpp"

namespace posenc {

class TenerPlan {
 public:
  TenerPlan(const TenerSpec& spec, const TenerWeights& weights);
  const TenerSpec& spec() const noexcept;
  const TenerWeights& weights() const noexcept;
  // The sinusoidal plan of R without a padding row (position t = distance t).
  const SinusoidalPlan& sinusoid() const noexcept;

  // R of a call of length L (1 .. 2^30 - 1, Error naming "length"); out.size() >= 2 L d_head (Error "out.size()").
  void table(std::size_t length, std::span<float> out, const TableOptions& = {}) const;
  void table(std::size_t length, std::span<double> out, const TableOptions& = {}) const;

  // Rows read by the query term (key = false) or the key term (key = true), [L][L].
  void indices(const BiasGeometry&, std::span<std::int32_t> out, bool key = false, const TableOptions& = {}) const;

  // scores[h][i][j] for the spec's heads; out.size() == heads * L * L.
  void scores(std::span<const float> q, std::span<const float> k, const BiasGeometry&, std::optional<double> scale,
              std::span<float> out, const TableOptions& = {}, RelativeScoresForm = RelativeScoresForm::blas) const;
  void scores(std::span<const double> q, std::span<const double> k, const BiasGeometry&, std::optional<double> scale,
              std::span<double> out, const TableOptions& = {}, RelativeScoresForm = RelativeScoresForm::blas) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline TenerPlan make_plan(const TenerSpec& spec, const TenerWeights& weights) { return TenerPlan(spec, weights); }

// heads * L * L (validates the spec and the geometry: query_length == key_length).
std::size_t tener_scores_size(const TenerSpec&, const BiasGeometry&);

// One-shot table: the same numbers as a plan's table(), without the biases.
void tener_table(const TenerSpec&, std::size_t length, std::span<float> out, const TableOptions& = {});
void tener_table(const TenerSpec&, std::size_t length, std::span<double> out, const TableOptions& = {});

// The module's whole weights buffer, RelativeSinusoidalPositionalEmbedding.get_embedding(num_embeddings, d_head,
// padding_idx=0) (fastnlp/TENER@d2614d50 modules/relative_transformer.py): num_embeddings rows [num_embeddings][d_head]
// for the positions -N//2 .. N//2 - 1 (Python's floor division: -601 .. 599 for N = init_size + 1 = 1201), row 0 (the
// most negative position) zeroed by padding_idx, the sinusoid rows those of table() (same regime, same bytes for a
// position). A fresh module holds N = init_size + 1; one rebuilt by a call of length L holds N = 2 L. Error naming
// "num_embeddings" unless 1 <= N <= 2^31 - 1, "out.size()" unless out.size() >= N d_head.
void tener_weights(const TenerSpec&, std::size_t num_embeddings, std::span<float> out, const TableOptions& = {});
void tener_weights(const TenerSpec&, std::size_t num_embeddings, std::span<double> out, const TableOptions& = {});

// relative_transformer.py's _shift of x [L][2L] and _transpose_shift of y [L][2L] into out [L][L], bit for bit.
// Errors name "length", "x" or "out".
void tener_shift(std::span<const float> x, std::size_t length, std::span<float> out);
void tener_shift(std::span<const double> x, std::size_t length, std::span<double> out);
void tener_transpose_shift(std::span<const float> y, std::size_t length, std::span<float> out);
void tener_transpose_shift(std::span<const double> y, std::size_t length, std::span<double> out);

}  // namespace posenc
