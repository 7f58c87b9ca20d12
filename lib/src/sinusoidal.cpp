// Sinusoidal tables, the shift operator T(k) and Gram matrices.
//
// How a table is made (exact regime). Rows come in blocks of B consecutive positions p_a + j,
// j < B, with the anchor p_a a multiple of B. For each block the anchor (sin, cos)(p_a w_k) is computed
// from the double-double angle (detail/trig.hpp), and a per-call table J holds (sin, cos)(j w_k), j < B,
// computed the same way. Because anchors sit at multiples of B whatever range is asked for, a position's
// row is bit-for-bit the same in every table and list that contains it, and position 0 is always an
// anchor (its sin slots are exactly 0 and cos slots exactly 1; no other position has a zero entry).
// Each entry is then one complex multiply in double,
//     sin((p_a + j) w) = s_a c_j + c_a s_j,     cos((p_a + j) w) = c_a c_j - s_a s_j,
// from values that are each within 2^-53 of exact, so every entry carries the same small error
// whatever the position (no recurrence: the error never accumulates along a row or a column).
// B is chosen so that J stays in the private L2 cache; anchors cost ~1/B of the per-entry work.
//
// Emulated regime. The float32 steps of tensor2tensor / fairseq are replayed with IEEE float
// arithmetic (which is exactly what those steps are), exp evaluated in __float128 and rounded once
// (correct rounding), and sin/cos of the float32 angle evaluated in double and rounded once.
#include "posenc/sinusoidal.hpp"

#include <cblas.h>
#include <omp.h>
#include <quadmath.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "detail/streaming.hpp"
#include "detail/trig.hpp"
#include "posenc/blas.hpp"

namespace posenc {
namespace {

using detail::DoubleDouble;

// ---- frequencies ----------------------------------------------------------------------------------

struct Frequencies {
  std::vector<double> hi, lo;  // exact regime: omega_k = hi + lo to ~2^-104 relative
  std::vector<float> f32;      // emulated regime: the float32 omega_k of the emulated code
};

// Exponent e_k of omega_k = min_timescale * base^(-e_k), as a rational num/den.
std::pair<double, double> exponent(const SinusoidalSpec& s, std::size_t k) {
  const std::size_t h = pair_count(s);
  switch (s.rule) {
    case FrequencyRule::paper: return {2.0 * static_cast<double>(k), static_cast<double>(s.dim)};
    case FrequencyRule::tensor2tensor: return {static_cast<double>(k), static_cast<double>(std::max<std::size_t>(h - 1, 1))};
    case FrequencyRule::fairseq: return {static_cast<double>(k), static_cast<double>(h - 1)};
  }
  return {0.0, 1.0};
}

// The float32 frequency computation of tensor2tensor's get_timing_signal_1d / fairseq's get_embedding
// (CONVENTIONS.md §2.1), step by step. Python floats are doubles; tensors are float32.
std::vector<float> emulated_frequencies(const SinusoidalSpec& s) {
  const std::size_t h = pair_count(s);
  const double ln_base = static_cast<double>(logq(static_cast<__float128>(s.base)));  // math.log, correctly rounded
  std::vector<float> w(h);
  if (s.rule == FrequencyRule::tensor2tensor) {
    // log_timescale_increment = math.log(max/min) / tf.maximum(tf.to_float(num_timescales) - 1, 1)
    const float inc = static_cast<float>(ln_base) / static_cast<float>(std::max<std::size_t>(h - 1, 1));
    for (std::size_t k = 0; k < h; ++k) {
      const float arg = static_cast<float>(k) * -inc;                        // tf.to_float(range) * -inc
      const float e = static_cast<float>(expq(static_cast<__float128>(arg)));  // tf.exp
      w[k] = static_cast<float>(s.min_timescale) * e;                        // min_timescale * exp(...)
    }
  } else {  // fairseq: emb = math.log(10000) / (half_dim - 1); exp(arange(half_dim, float) * -emb)
    const double emb = ln_base / static_cast<double>(h - 1);
    const float neg_emb = static_cast<float>(-emb);
    for (std::size_t k = 0; k < h; ++k) {
      const float arg = static_cast<float>(k) * neg_emb;
      float e = static_cast<float>(expq(static_cast<__float128>(arg)));
      if (s.min_timescale != 1.0) e = static_cast<float>(s.min_timescale) * e;
      w[k] = e;
    }
  }
  return w;
}

Frequencies frequencies_of(const SinusoidalSpec& s) {
  Frequencies f;
  const std::size_t h = pair_count(s);
  if (s.regime == Regime::emulated) {
    f.f32 = emulated_frequencies(s);
    return f;
  }
  f.hi.resize(h);
  f.lo.resize(h);
  const __float128 base = s.base, scale = s.min_timescale;
  for (std::size_t k = 0; k < h; ++k) {
    const auto [num, den] = exponent(s, k);
    const __float128 w = scale * powq(base, -static_cast<__float128>(num) / static_cast<__float128>(den));
    f.hi[k] = static_cast<double>(w);
    f.lo[k] = static_cast<double>(w - static_cast<__float128>(f.hi[k]));
  }
  return f;
}

// ---- layout ---------------------------------------------------------------------------------------

// Writes pair values (sin s[k], cos c[k]) of one row into dst in the spec's layout.
template <class T>
void scatter_row(const SinusoidalSpec& spec, const double* s, const double* c, T* dst) {
  const std::size_t h = pair_count(spec);
  if (spec.layout == Layout::interleaved) {
#pragma omp simd
    for (std::size_t k = 0; k < h; ++k) {
      dst[2 * k] = static_cast<T>(s[k]);
      dst[2 * k + 1] = static_cast<T>(c[k]);
    }
  } else {
#pragma omp simd
    for (std::size_t k = 0; k < h; ++k) {
      dst[k] = static_cast<T>(s[k]);
      dst[h + k] = static_cast<T>(c[k]);
    }
  }
  if (spec.dim > 2 * h) dst[2 * h] = T(0);  // zero-pad column
}

// ---- per-thread scratch ---------------------------------------------------------------------------

template <class T>
struct AlignedBuffer {
  std::unique_ptr<T[], void (*)(T*)> data{nullptr, [](T*) {}};
  explicit AlignedBuffer(std::size_t n)
      : data(static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t{64})),
             [](T* p) { ::operator delete[](p, std::align_val_t{64}); }) {}
  T* get() const { return data.get(); }
};

int thread_count(const TableOptions& o, std::size_t elements) {
  if (elements < (std::size_t{1} << 15)) return 1;  // too small to repay a parallel region
  return o.threads > 0 ? o.threads : omp_get_max_threads();
}

// Pairs of the J table that fit in ~256 KiB of L2: B = clamp(pow2 <= 256Ki / (16 h), 4, 64).
std::size_t block_rows(std::size_t h) {
  std::size_t b = 64;
  while (b > 4 && b * h * 2 * sizeof(double) > (std::size_t{256} << 10)) b /= 2;
  return b;
}

// ---- exact regime ---------------------------------------------------------------------------------

void anchor(const Frequencies& f, std::int64_t p, std::size_t h, double* s, double* c) {
  const double pd = static_cast<double>(p);
  const double* hi = f.hi.data();
  const double* lo = f.lo.data();
#pragma omp simd
  for (std::size_t k = 0; k < h; ++k) {
    const DoubleDouble t = detail::scaled_angle(pd, hi[k], lo[k]);
    detail::sincos_dd(t.hi, t.lo, s[k], c[k]);
  }
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The J table: (sin, cos)(j w_k) for j < B.
struct Offsets {
  std::size_t B;
  AlignedBuffer<double> s, c;
  Offsets(const Frequencies& f, std::size_t h) : B(block_rows(h)), s(B * h), c(B * h) {
    for (std::size_t j = 0; j < B; ++j) anchor(f, static_cast<std::int64_t>(j), h, s.get() + j * h, c.get() + j * h);
  }
};

// Row at anchor + j: one complex multiply of exact values.
template <class T>
void rotated_row(const SinusoidalSpec& spec, const double* sa, const double* ca, const Offsets& J, std::size_t j,
                 double* s, double* c, T* row) {
  const std::size_t h = pair_count(spec);
  const double *sj = J.s.get() + j * h, *cj = J.c.get() + j * h;
  // The complex multiply can overshoot |value| = 1 by up to ~3.5 * 2^-53 before its last rounding
  // (a cos within 1e-25 of 1 was seen to come out as 1 + 2^-52); the exact value lies in [-1, 1], so
  // clamping never moves an entry away from it.
#pragma omp simd
  for (std::size_t k = 0; k < h; ++k) {
    s[k] = std::clamp(std::fma(sa[k], cj[k], ca[k] * sj[k]), -1.0, 1.0);
    c[k] = std::clamp(std::fma(ca[k], cj[k], -(sa[k] * sj[k])), -1.0, 1.0);
  }
  scatter_row(spec, s, c, row);
}

template <class T>
void exact_table(const SinusoidalSpec& spec, std::int64_t first, std::size_t count, T* out, const TableOptions& opt) {
  const std::size_t h = pair_count(spec), d = spec.dim;
  const Frequencies f = frequencies_of(spec);
  const Offsets J(f, h);
  const auto B = static_cast<std::int64_t>(J.B);
  const std::int64_t last = first + static_cast<std::int64_t>(count) - 1;
  const std::int64_t a0 = floor_div(first, B) * B;  // anchor of the first (possibly partial) block
  const auto blocks = static_cast<std::size_t>(floor_div(last, B) * B - a0) / J.B + 1;
  const bool stream = opt.streaming_stores && detail::worth_streaming(count * d * sizeof(T));

  const int threads = thread_count(opt, count * d);
#pragma omp parallel num_threads(threads)
  {
    AlignedBuffer<double> as(h), ac(h), rs(h), rc(h);
    AlignedBuffer<T> rows_buf(J.B * d);  // the block's rows are contiguous in out: finish them here, store once
#pragma omp for schedule(static)
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::int64_t pa = a0 + static_cast<std::int64_t>(b) * B;
      const std::int64_t lo = std::max(pa, first), hi = std::min(pa + B - 1, last);
      anchor(f, pa, h, as.get(), ac.get());
      for (std::int64_t p = lo; p <= hi; ++p) {
        T* row = rows_buf.get() + static_cast<std::size_t>(p - lo) * d;
        if (spec.padding_row && p == *spec.padding_row)
          std::fill(row, row + d, T(0));
        else
          rotated_row(spec, as.get(), ac.get(), J, static_cast<std::size_t>(p - pa), rs.get(), rc.get(), row);
      }
      detail::store_row(out + static_cast<std::size_t>(lo - first) * d, rows_buf.get(),
                        static_cast<std::size_t>(hi - lo + 1) * d, stream);
    }
  }
  if (stream) detail::store_fence();
}

// ---- emulated regime ------------------------------------------------------------------------------

// Row of the emulated implementation at position p: angle32 = RN32(RN32(p) * w32_k), value =
// RN32(sin/cos(angle32)). sin/cos are evaluated in double (|error| <= 2^-53 relative to |value|
// away from zeros, see trig.hpp) and rounded once to float.
void emulated_row(const std::vector<float>& w, std::int64_t p, std::size_t h, double* s, double* c) {
  const float pf = static_cast<float>(p);
  const float* wk = w.data();
#pragma omp simd
  for (std::size_t k = 0; k < h; ++k) {
    const float angle = pf * wk[k];
    double sd, cd;
    detail::sincos_dd(static_cast<double>(angle), 0.0, sd, cd);
    s[k] = static_cast<double>(static_cast<float>(sd));
    c[k] = static_cast<double>(static_cast<float>(cd));
  }
}

// ---- shared driver --------------------------------------------------------------------------------

// Rows one at a time (explicit positions, or the emulated regime). Exact rows use the same anchors and
// J table as exact_table, so a row is bit-for-bit the row a contiguous table holds for that position.
template <class T, class PositionOf>
void direct_rows(const SinusoidalSpec& spec, std::size_t count, PositionOf position_of, T* out,
                 const TableOptions& opt) {
  const std::size_t h = pair_count(spec), d = spec.dim;
  const Frequencies f = frequencies_of(spec);
  const bool exact = spec.regime == Regime::exact;
  const std::unique_ptr<Offsets> J = exact ? std::make_unique<Offsets>(f, h) : nullptr;
  const bool stream = opt.streaming_stores && detail::worth_streaming(count * d * sizeof(T));
  const int threads = thread_count(opt, count * d);
#pragma omp parallel num_threads(threads)
  {
    AlignedBuffer<double> as(h), ac(h), rs(h), rc(h);
    AlignedBuffer<T> row(d);
#pragma omp for schedule(static)
    for (std::size_t r = 0; r < count; ++r) {
      const std::int64_t p = position_of(r);
      T* dst = out + r * d;
      if (spec.padding_row && p == *spec.padding_row) {
        detail::fill_zero(dst, d, stream);
        continue;
      }
      if (exact) {
        const auto B = static_cast<std::int64_t>(J->B);
        const std::int64_t pa = floor_div(p, B) * B;
        anchor(f, pa, h, as.get(), ac.get());
        rotated_row(spec, as.get(), ac.get(), *J, static_cast<std::size_t>(p - pa), rs.get(), rc.get(), row.get());
      } else {
        emulated_row(f.f32, p, h, rs.get(), rc.get());
        scatter_row(spec, rs.get(), rc.get(), row.get());
      }
      detail::store_row(dst, row.get(), d, stream);
    }
  }
  if (stream) detail::store_fence();
}

void check_output(std::size_t needed, std::size_t have) {
  if (have < needed)
    throw Error("sinusoidal", "out.size()", std::to_string(have),
                ">= count * dim = " + std::to_string(needed));
}

template <class T>
void table_impl(const SinusoidalSpec& spec, std::int64_t first, std::size_t count, std::span<T> out,
                const TableOptions& opt) {
  check_output(checked_table_elements(spec, first, count, sizeof(T)), out.size());
  if (spec.regime == Regime::exact)
    exact_table(spec, first, count, out.data(), opt);
  else
    direct_rows(spec, count, [first](std::size_t r) { return first + static_cast<std::int64_t>(r); }, out.data(), opt);
}

template <class T>
void rows_impl(const SinusoidalSpec& spec, std::span<const std::int64_t> positions, std::span<T> out,
               const TableOptions& opt) {
  if (positions.empty()) throw Error("sinusoidal", "positions.size()", "0", ">= 1");
  check_output(checked_table_elements(spec, 0, positions.size(), sizeof(T)), out.size());
  for (std::int64_t p : positions) check_position(spec, p);
  direct_rows(spec, positions.size(), [positions](std::size_t r) { return positions[r]; }, out.data(), opt);
}

// ---- shift operator -------------------------------------------------------------------------------

std::int64_t max_shift(const SinusoidalSpec& s) { return 2 * max_abs_position(s); }

template <class T>
void dense_impl(const ShiftOperator& t, std::span<T> out) {
  const std::size_t d = t.spec.dim, h = pair_count(t.spec);
  if (out.size() / d < d) check_output(d * d, out.size());
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(d * d), T(0));
  for (std::size_t i = 0; i < h; ++i) {
    const std::size_t a = sin_slot(t.spec, i), b = cos_slot(t.spec, i);
    out[a * d + a] = static_cast<T>(t.cos_k[i]);
    out[a * d + b] = static_cast<T>(t.sin_k[i]);
    out[b * d + a] = static_cast<T>(-t.sin_k[i]);
    out[b * d + b] = static_cast<T>(t.cos_k[i]);
  }
  if (d > 2 * h) out[(d - 1) * d + (d - 1)] = T(1);  // zero-pad column: identity
}

void check_block(const ShiftOperator& t, std::size_t have, std::size_t rows) {
  if (rows == 0) throw Error("apply_shift", "rows", "0", ">= 1");
  if (rows > have / t.spec.dim)
    throw Error("apply_shift", "block.size()", std::to_string(have),
                ">= rows * dim = " + std::to_string(rows) + " * " + std::to_string(t.spec.dim));
}

}  // namespace

// ---- public API -----------------------------------------------------------------------------------

std::size_t sin_slot(const SinusoidalSpec& s, std::size_t k) noexcept {
  return s.layout == Layout::interleaved ? 2 * k : k;
}
std::size_t cos_slot(const SinusoidalSpec& s, std::size_t k) noexcept {
  return s.layout == Layout::interleaved ? 2 * k + 1 : pair_count(s) + k;
}

std::vector<double> sinusoidal_frequencies(const SinusoidalSpec& spec) {
  validate(spec);
  Frequencies f = frequencies_of(spec);
  if (spec.regime == Regime::emulated) return {f.f32.begin(), f.f32.end()};
  return f.hi;
}

void sinusoidal_table(const SinusoidalSpec& s, std::int64_t first, std::size_t count, std::span<float> out,
                      const TableOptions& o) {
  table_impl(s, first, count, out, o);
}
void sinusoidal_table(const SinusoidalSpec& s, std::int64_t first, std::size_t count, std::span<double> out,
                      const TableOptions& o) {
  table_impl(s, first, count, out, o);
}
void sinusoidal_rows(const SinusoidalSpec& s, std::span<const std::int64_t> p, std::span<float> out,
                     const TableOptions& o) {
  rows_impl(s, p, out, o);
}
void sinusoidal_rows(const SinusoidalSpec& s, std::span<const std::int64_t> p, std::span<double> out,
                     const TableOptions& o) {
  rows_impl(s, p, out, o);
}

ShiftOperator shift_operator(const SinusoidalSpec& spec, std::int64_t k) {
  validate(spec);
  if (spec.regime != Regime::exact)
    throw Error("shift_operator", "regime", std::string(to_string(spec.regime)),
                "exact (emulated tables are not exact rotations of each other)");
  if (k < -max_shift(spec) || k > max_shift(spec))
    throw Error("shift_operator", "k", std::to_string(k), "|k| <= " + std::to_string(max_shift(spec)));
  ShiftOperator t{spec, k, {}, {}};
  const std::size_t h = pair_count(spec);
  t.cos_k.resize(h);
  t.sin_k.resize(h);
  anchor(frequencies_of(spec), k, h, t.sin_k.data(), t.cos_k.data());
  return t;
}

void dense_shift_matrix(const ShiftOperator& t, std::span<double> out) { dense_impl(t, out); }
void dense_shift_matrix(const ShiftOperator& t, std::span<float> out) { dense_impl(t, out); }

namespace {

// cblas by element type: the only place where float and double differ.
void blas_rot(blasint n, float* x, blasint incx, float* y, blasint incy, double c, double s) {
  cblas_srot(n, x, incx, y, incy, static_cast<float>(c), static_cast<float>(s));
}
void blas_rot(blasint n, double* x, blasint incx, double* y, blasint incy, double c, double s) {
  cblas_drot(n, x, incx, y, incy, c, s);
}
void blas_gemm_nt(blasint m, blasint n, blasint k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
}
void blas_gemm_nt(blasint m, blasint n, blasint k, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, a, k, b, k, 0.0, c, n);
}

template <class T>
void apply_shift_impl(const ShiftOperator& t, std::span<T> block, std::size_t rows, ShiftMethod m) {
  check_block(t, block.size(), rows);
  warn_if_blas_fallback();
  const std::size_t d = t.spec.dim;
  const auto bd = static_cast<blasint>(d), brows = static_cast<blasint>(rows);
  if (m == ShiftMethod::rot) {  // x' = c x + s y (sin slot), y' = c y - s x (cos slot), per pair
    for (std::size_t i = 0; i < pair_count(t.spec); ++i)
      blas_rot(brows, block.data() + sin_slot(t.spec, i), bd, block.data() + cos_slot(t.spec, i), bd, t.cos_k[i], t.sin_k[i]);
    return;
  }
  std::vector<T> dense(d * d), in(block.begin(), block.begin() + static_cast<std::ptrdiff_t>(rows * d));
  dense_impl(t, std::span<T>(dense));
  blas_gemm_nt(brows, bd, bd, in.data(), dense.data(), block.data());  // block = in * T(k)^T
}

}  // namespace

void apply_shift(const ShiftOperator& t, std::span<float> block, std::size_t rows, ShiftMethod m) {
  apply_shift_impl(t, block, rows, m);
}
void apply_shift(const ShiftOperator& t, std::span<double> block, std::size_t rows, ShiftMethod m) {
  apply_shift_impl(t, block, rows, m);
}

namespace {
template <class T>
void gram_impl(std::span<const T> block, std::size_t rows, std::size_t dim, std::span<T> out) {
  if (rows == 0) throw Error("gram_matrix", "rows", "0", ">= 1");
  if (dim == 0) throw Error("gram_matrix", "dim", "0", ">= 1");
  if (rows > block.size() / dim)
    throw Error("gram_matrix", "block.size()", std::to_string(block.size()), ">= rows * dim");
  if (rows > out.size() / rows)
    throw Error("gram_matrix", "out.size()", std::to_string(out.size()), ">= rows * rows = " + std::to_string(rows) + "^2");
  warn_if_blas_fallback();
  const auto n = static_cast<blasint>(rows), k = static_cast<blasint>(dim);
  if constexpr (std::is_same_v<T, float>)
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, n, k, 1.0f, block.data(), k, 0.0f, out.data(), n);
  else
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, n, k, 1.0, block.data(), k, 0.0, out.data(), n);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < i; ++j) out[i * rows + j] = out[j * rows + i];
}
}  // namespace

void gram_matrix(std::span<const float> b, std::size_t rows, std::size_t dim, std::span<float> out) {
  gram_impl(b, rows, dim, out);
}
void gram_matrix(std::span<const double> b, std::size_t rows, std::size_t dim, std::span<double> out) {
  gram_impl(b, rows, dim, out);
}

}  // namespace posenc
