// posenc/sinusoidal.hpp — fast sinusoidal absolute encodings and the shift operator T(k).
//
// Plans
//   SinusoidalPlan plan = make_plan(spec) validates the spec once and precomputes everything that depends only
//   on it: the frequencies (double-double, from binary128), the in-block table of the angle core, the emulated
//   float32 frequencies. A plan is immutable and safe to use from several threads at once; copies share the
//   precomputed data. The one-shot functions (sinusoidal_table(spec, ...), ...) make a plan per call.
//
// Tables
//   plan.table(first, count, out): rows for positions first .. first+count-1, row-major, count x spec.dim,
//   into caller memory (out.size() >= count * dim, else Error). Positions are the spec's position numbers
//   (fairseq: row numbers; the first token is spec.first_position). plan.rows(positions, out): the same for an
//   explicit list of positions.
//
// Accuracy contract (measured by properties/; the bounds and their derivations are budget rows, by id):
//   exact regime, float  output: sinusoidal.table.exact.f32.scaled (one rounding of a double result: err_S
//                                 just above 0.25) and sinusoidal.table.exact.f32.kernel (entries >= 2^-16
//                                 are correctly rounded but within ~5.5e-4 ulp of a midpoint);
//   exact regime, double output: sinusoidal.table.exact.f64.scaled;
//   emulated regime: the float32 number of tensor2tensor / fairseq (CONVENTIONS.md §2.1) or, for the paper rule,
//                    of PyTorch's exp form (HF NEZHA, CONVENTIONS.md §2.4) or pow form (paper_form = pow:
//                    Transformer-XL, HF XLNet, CONVENTIONS.md §2.5), replayed step by step
//                    with correctly rounded float32 operations: sinusoidal.table.emulated.{f32,f64}.{scaled,kernel};
//                    a double output holds that float32 number exactly.
//   every entry lies in [-1, 1] (sinusoidal.table.range); PE(0), zero-pad columns and the padding row are exact
//   (sinusoidal.table.exact_values).
// Reproducibility: a position's row is bit-for-bit the same in every table, row list, call, plan, thread count
//   and split of a range into calls (claim SIN-REPRO-1). With signed positions, the row of -p is the row of p with
//   its sines negated, bit for bit, in every regime and type (claim SIN-REPRO-2; RoPE caches likewise).
//
// Performance: elementwise, threads (TableOptions) over blocks of rows, streaming stores for outputs larger than the private
// caches. Each exact entry is one complex multiply of exactly computed values (lib/src/core/angle_table.hpp).
//
// Shift operator (seed 000, CONVENTIONS §2.1): PE(p+k) = T(k) PE(p), T(k) block diagonal with 2x2 rotations
// [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]] acting on (sin slot, cos slot) of pair i, independent of p;
// identity on a zero-pad column. The padding row (fairseq) is not PE of its position and is not shifted by T
// (T maps it to zero). Accuracy: sinusoidal.shift.* rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/options.hpp"
#include "posenc/sinusoidal_spec.hpp"

namespace posenc {

class ShiftOperator;
class SinusoidalPlan;
ShiftOperator shift_operator(const SinusoidalPlan&, std::int64_t k);

class SinusoidalPlan {
 public:
  // Validates the spec (Error naming the field) and precomputes.
  explicit SinusoidalPlan(const SinusoidalSpec& spec);

  const SinusoidalSpec& spec() const noexcept;
  // omega_k for k = 0..h-1 as the fast path uses them: exact regime, the real omega_k rounded to double (the
  // fast path also keeps the next 53 bits); emulated regime, the float32 value the emulated code computes.
  std::span<const double> frequencies() const noexcept;

  void table(std::int64_t first, std::size_t count, std::span<float> out, const TableOptions& = {}) const;
  void table(std::int64_t first, std::size_t count, std::span<double> out, const TableOptions& = {}) const;
  void rows(std::span<const std::int64_t> positions, std::span<float> out, const TableOptions& = {}) const;
  void rows(std::span<const std::int64_t> positions, std::span<double> out, const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
  friend ShiftOperator shift_operator(const SinusoidalPlan&, std::int64_t);
};

inline SinusoidalPlan make_plan(const SinusoidalSpec& spec) { return SinusoidalPlan(spec); }

// One-shot forms: make_plan(spec).table(...) etc.
void sinusoidal_table(const SinusoidalSpec&, std::int64_t first, std::size_t count, std::span<float> out,
                      const TableOptions& = {});
void sinusoidal_table(const SinusoidalSpec&, std::int64_t first, std::size_t count, std::span<double> out,
                      const TableOptions& = {});
void sinusoidal_rows(const SinusoidalSpec&, std::span<const std::int64_t> positions, std::span<float> out,
                     const TableOptions& = {});
void sinusoidal_rows(const SinusoidalSpec&, std::span<const std::int64_t> positions, std::span<double> out,
                     const TableOptions& = {});
std::vector<double> sinusoidal_frequencies(const SinusoidalSpec&);

// Column of the sin (cos) slot of pair k under the spec's layout; Error naming "pair" unless k < h.
std::size_t sin_slot(const SinusoidalSpec&, std::size_t k);
std::size_t cos_slot(const SinusoidalSpec&, std::size_t k);

// ---- the shift operator T(k) ----------------------------------------------------------------------------
// Block form: pair i rotates by angle k*omega_i; cos_k()[i] = cos(k omega_i), sin_k()[i] = sin(k omega_i), each
// computed like an anchor (double-double angle, one rounding), so T(k) is as exact as PE. Only the exact regime
// has a shift operator (emulated tables are not exact rotations of each other); |k| <= 2 max_abs_position.
// An operator is made only by shift_operator(), so it always matches its spec.
class ShiftOperator {
 public:
  const SinusoidalSpec& spec() const noexcept { return spec_; }
  std::int64_t k() const noexcept { return k_; }
  std::span<const double> cos_k() const noexcept { return cos_; }
  std::span<const double> sin_k() const noexcept { return sin_; }

 private:
  friend ShiftOperator shift_operator(const SinusoidalPlan&, std::int64_t);
  ShiftOperator(SinusoidalSpec spec, std::int64_t k, std::vector<double> c, std::vector<double> s)
      : spec_(std::move(spec)), k_(k), cos_(std::move(c)), sin_(std::move(s)) {}
  SinusoidalSpec spec_;
  std::int64_t k_ = 0;
  std::vector<double> cos_, sin_;  // size h
};
ShiftOperator shift_operator(const SinusoidalPlan&, std::int64_t k);
ShiftOperator shift_operator(const SinusoidalSpec&, std::int64_t k);

// Dense d x d row-major matrix of T(k): (T x)_r = sum_c T[r*d + c] x_c.
void dense_shift_matrix(const ShiftOperator&, std::span<double> out);
void dense_shift_matrix(const ShiftOperator&, std::span<float> out);

// Apply T(k) to each of `rows` encodings stored row-major (rows x d) in `block`, in place:
// block[r] <- T(k) block[r]. rot: cblas_?rot per frequency pair (O(rows*d)); gemm: block <- block T(k)^T
// with the dense matrix through cblas_?gemm (O(rows*d^2), the generic linear-map form).
enum class ShiftMethod { rot, gemm };
void apply_shift(const ShiftOperator&, std::span<float> block, std::size_t rows, ShiftMethod = ShiftMethod::rot);
void apply_shift(const ShiftOperator&, std::span<double> block, std::size_t rows, ShiftMethod = ShiftMethod::rot);

}  // namespace posenc
