// posenc/nezha.hpp — fast NEZHA functional relative positions: the fixed sinusoid table of the shifted index, the
// index matrix of a call, pre-softmax scores and the attention output through cblas, never an L x L x d tensor.
// Definition: posenc/nezha_spec.hpp; geometry and mask: posenc/bias.hpp.
//
// NEZHA is Shaw et al.'s mechanism with a computed table, so a plan is two plans of other schemes:
//   the table   the sinusoidal plan of nezha_sinusoidal_spec(spec) (interleaved paper rule, exact or the emulated
//               PyTorch exp form) at positions 0..2K: its accuracy contract is the sinusoidal one (budget rows
//               sinusoidal.table.{exact,emulated}.*), its reproducibility claim SIN-REPRO-1;
//   attention   ShawPlan(nezha_shaw_spec(spec), {T, T}) with the f64 table as both the key and the value table:
//               index, indices, scores and attend are ShawPlan's (budget rows shaw.scores.*, shaw.output.*; the
//               f32 entry points round the f64 table to float32, which for the hf regime is exactly its float32
//               table).
// A plan is immutable and safe to use from several threads; copies share the data.
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
#include "posenc/nezha_spec.hpp"
#include "posenc/options.hpp"
#include "posenc/shaw.hpp"

namespace posenc {

class NezhaPlan {
 public:
  explicit NezhaPlan(const NezhaSpec& spec);
  const NezhaSpec& spec() const noexcept;
  // The Shaw plan the attention verbs go through (its weights: the f64 table as keys and values).
  const ShawPlan& shaw() const noexcept;

  // The table T [2K + 1][depth], row-major (out.size() >= (2K + 1) depth, else Error naming "out.size()").
  void table(std::span<float> out, const TableOptions& = {}) const;
  void table(std::span<double> out, const TableOptions& = {}) const;

  // r for the offset u = j - q_i: clip(u, -K, K) + K (|u| <= 2^31 - 1, else Error naming "u").
  std::int32_t index(std::int64_t u) const;
  // The index matrix [query_length][key_length].
  void indices(const BiasGeometry&, std::span<std::int32_t> out, const TableOptions& = {}) const;

  // scores[h][i][j] = (<q_i, k_j> + <q_i, T[r]>) scale (+ the mask); scale std::nullopt = 1/sqrt(depth).
  void scores(std::span<const float> q, std::span<const float> k, std::size_t heads, const BiasGeometry&,
              std::optional<double> scale, std::span<float> out, const TableOptions& = {}) const;
  void scores(std::span<const double> q, std::span<const double> k, std::size_t heads, const BiasGeometry&,
              std::optional<double> scale, std::span<double> out, const TableOptions& = {}) const;

  // out[h][i][c] = z_i = sum_j alpha(i, j) (v_j + T[r(i, j)]) of head h.
  void attend(std::span<const float> q, std::span<const float> k, std::span<const float> v, std::size_t heads,
              const BiasGeometry&, std::optional<double> scale, std::span<float> out, const TableOptions& = {}) const;
  void attend(std::span<const double> q, std::span<const double> k, std::span<const double> v, std::size_t heads,
              const BiasGeometry&, std::optional<double> scale, std::span<double> out, const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline NezhaPlan make_plan(const NezhaSpec& spec) { return NezhaPlan(spec); }

// One-shot table: the same numbers as make_plan(spec).table(out), from the sinusoidal plan alone (no attention plan).
void nezha_table(const NezhaSpec&, std::span<float> out, const TableOptions& = {});
void nezha_table(const NezhaSpec&, std::span<double> out, const TableOptions& = {});

}  // namespace posenc
