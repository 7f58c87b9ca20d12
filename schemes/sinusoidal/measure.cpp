#include "schemes/sinusoidal/measure.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "schemes/sinusoidal/budget.hpp"
#include "posenc/linalg.hpp"
#include "posenc/reference/sinusoidal.hpp"

namespace posenc::test {
namespace {

namespace rf = posenc::reference;
using R = SinusoidalRow;
constexpr unsigned kBits = rf::kDefaultBits;


bool is_zero_column(const SinusoidalSpec& s, std::size_t c) { return c >= 2 * pair_count(s); }

template <class T>
std::vector<T> fast_row(const SinusoidalSpec& s, std::int64_t p, std::size_t offset, Path path) {
  const std::size_t d = s.dim;
  if (path == Path::rows) {
    std::vector<T> out(d);
    const std::int64_t pos[1] = {p};
    sinusoidal_rows(s, std::span<const std::int64_t>(pos, 1), std::span<T>(out));
    return out;
  }
  offset = std::min<std::size_t>(offset, 63);
  const std::int64_t lo = min_position(s);
  if (p - static_cast<std::int64_t>(offset) < lo) offset = static_cast<std::size_t>(p - lo);
  std::vector<T> out((offset + 1) * d);
  sinusoidal_table(s, p - static_cast<std::int64_t>(offset), offset + 1, std::span<T>(out));
  return std::vector<T>(out.end() - static_cast<std::ptrdiff_t>(d), out.end());
}

template <class T>
std::vector<T> fast_block(const SinusoidalSpec& s, std::int64_t p, std::size_t rows) {
  std::vector<T> out(rows * s.dim);
  sinusoidal_table(s, p, rows, std::span<T>(out));
  return out;
}

Real zero() { return rf::make_real(kBits); }

std::string fmt_pos(std::int64_t p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld (%a)", static_cast<long long>(p), static_cast<double>(p));
  return buf;
}

// Exact sum of products of two fast rows (binary numbers), at 320 bits (exact for d <= 2^100).
Real exact_dot(const double* a, const double* b, std::size_t n) {
  mpfr_t acc, t;
  mpfr_init2(acc, 320);
  mpfr_init2(t, 320);
  mpfr_set_zero(acc, 1);
  for (std::size_t i = 0; i < n; ++i) {
    mpfr_set_d(t, a[i], MPFR_RNDN);
    mpfr_mul_d(t, t, b[i], MPFR_RNDN);
    mpfr_add(acc, acc, t, MPFR_RNDN);
  }
  Real r = rf::make_real(320);
  mpfr_set(r.backend().data(), acc, MPFR_RNDN);
  mpfr_clear(acc);
  mpfr_clear(t);
  return r;
}

template <class T>
std::vector<double> widen(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

}  // namespace

std::string spec_label(const SinusoidalSpec& s) {
  for (const auto& preset : SpecTraits<SinusoidalSpec>::presets()) {
    SinusoidalSpec p = preset.spec;
    p.dim = s.dim;
    p.regime = s.regime;
    if (p == s)
      return "preset=" + std::string(preset.name) + " dim=" + std::to_string(s.dim) + " regime=" +
             std::string(to_string(s.regime));
  }
  return "custom {" + describe(s) + "}";
}

std::string position_label(std::int64_t p) { return fmt_pos(p); }

std::vector<std::size_t> sample_columns(std::size_t dim, std::size_t n) {
  std::vector<std::size_t> c;
  if (dim <= n) {
    for (std::size_t i = 0; i < dim; ++i) c.push_back(i);
    return c;
  }
  const std::size_t h = dim / 2;
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, h - 1, h, h + 1, dim - 2, dim - 1}) c.push_back(i);
  const std::size_t step = std::max<std::size_t>(1, dim / n);
  for (std::size_t i = step / 2; i < dim && c.size() < n; i += step) c.push_back(i);
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

Real entry_reference(const SinusoidalSpec& s, std::int64_t p, std::size_t column) {
  if (s.regime == Regime::exact) return rf::value(s, p, column, kBits);
  if ((s.padding_row && p == *s.padding_row) || is_zero_column(s, column)) return zero();
  const std::size_t h = pair_count(s);
  std::size_t pair = 0;
  bool is_sin = true;
  for (std::size_t k = 0; k < h; ++k) {
    if (rf::sin_column(s, k) == column) { pair = k; is_sin = true; break; }
    if (rf::cos_column(s, k) == column) { pair = k; is_sin = false; break; }
  }
  const Real w = rf::emulated_frequency(s, pair, kBits);
  const Real pf = rf::rn(rf::Binary::f32, rf::make_real(p, kBits), kBits);
  const Real angle = rf::rn_mul(rf::Binary::f32, pf, w, kBits);
  Real out = rf::make_real(kBits);
  if (is_sin) mpfr_sin(out.backend().data(), angle.backend().data(), MPFR_RNDN);
  else mpfr_cos(out.backend().data(), angle.backend().data(), MPFR_RNDN);
  return out;
}

void measure_entries(const SinusoidalSpec& s, DType t, std::int64_t p, std::size_t offset,
                     const std::vector<std::size_t>& columns, const Sink& sink, Path path) {
  const DType one[1] = {t};
  measure_entries(s, std::span<const DType>(one), p, offset, columns, sink, path);
}

void measure_entries(const SinusoidalSpec& s, std::span<const DType> dtypes, std::int64_t p, std::size_t offset,
                     const std::vector<std::size_t>& columns_in, const Sink& sink, Path path) {
  const rf::PrecisionGuard guard(320);  // Boost temporaries (-x, abs) at >= 320 bits
  std::vector<std::vector<double>> ys;
  for (DType t : dtypes)
    ys.push_back(t == DType::f32 ? widen(fast_row<float>(s, p, offset, path)) : fast_row<double>(s, p, offset, path));
  std::vector<std::size_t> columns = columns_in;
  if (columns.empty())
    for (std::size_t c = 0; c < s.dim; ++c) columns.push_back(c);
  const bool padding = s.padding_row && p == *s.padding_row;
  const bool emulated = s.regime == Regime::emulated;
  const double kernel_floor = emulated ? std::ldexp(1.0, -20) : std::ldexp(1.0, -16);
  for (std::size_t c : columns) {
    const bool zero_entry = padding || is_zero_column(s, c);
    const Real r = zero_entry ? zero() : entry_reference(s, p, c);
    const bool kernel_ok = abs(r) >= kernel_floor;
    for (std::size_t ti = 0; ti < dtypes.size(); ++ti) {
      const DType t = dtypes[ti];
      const std::string ts(to_string(t));
      const double yc = ys[ti][c];
      auto inputs = [&, c, yc] {
        std::ostringstream o;
        o << spec_label(s) << " dtype=" << ts << " path=" << (path == Path::table ? "table" : "rows") << " p=" << fmt_pos(p)
          << " block_offset=" << offset << " col=" << c << " y=" << dec_hex(yc);
        return o.str();
      };
      // Range: every entry in [-1, 1] (|y - clamp(y)| = max(|y| - 1, 0)).
      emit(sink, R::table_range, yc, rf::make_real(std::clamp(yc, -1.0, 1.0), kBits), inputs);
      if (zero_entry) {
        emit(sink, R::table_exact_values, yc, r, inputs);
        continue;
      }
      if (emulated && t == DType::f64) {
        const Real rf32 = rf::make_real(static_cast<double>(static_cast<float>(yc)), kBits);
        emit(sink, R::table_exact_values, yc, rf32, [&] { return inputs() + " (float32-ness)"; });
      }
      if (p == 0) emit(sink, R::table_exact_values, yc, r, inputs);
      emit(sink, sinusoidal::scaled_row(emulated, t), yc, r, inputs);
      if ((emulated || t == DType::f32) && kernel_ok) emit(sink, sinusoidal::kernel_row(emulated, t), yc, r, inputs);
    }
  }
}

void measure_frequencies(const SinusoidalSpec& s, const Sink& sink) {
  const rf::PrecisionGuard guard(320);  // Boost temporaries (-x, abs) at >= 320 bits
  const std::vector<double> w = sinusoidal_frequencies(s);
  for (std::size_t k = 0; k < w.size(); ++k) {
    auto inputs = [&, k] { return spec_label(s) + " k=" + std::to_string(k) + " w=" + dec_hex(w[k]); };
    if (s.regime == Regime::emulated)
      emit(sink, R::frequency_emulated_f32, w[k], rf::emulated_frequency(s, k, kBits), inputs);
    else
      emit(sink, R::frequency_exact_f64, w[k], rf::frequency(s, k, kBits), inputs);
  }
}

void measure_shift(const SinusoidalSpec& s, DType t, std::int64_t p, std::int64_t k, std::size_t rows, ShiftMethod method,
                   const std::vector<std::size_t>& columns_in, const Sink& sink) {
  const rf::PrecisionGuard guard(320);  // Boost temporaries (-x, abs) at >= 320 bits
  const std::size_t d = s.dim, h = pair_count(s);
  const std::string ts(to_string(t));
  const ShiftOperator op = shift_operator(s, k);
  std::vector<std::size_t> columns = columns_in;
  if (columns.empty())
    for (std::size_t c = 0; c < d; ++c) columns.push_back(c);
  // T(k) entries: the pairs of the sampled columns.
  std::vector<std::size_t> pairs;
  for (std::size_t c : columns) {
    if (c >= 2 * h) continue;
    for (std::size_t i = 0; i < h; ++i)
      if (sin_slot(s, i) == c || cos_slot(s, i) == c) pairs.push_back(i);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<float> dense32;
  if (t == DType::f32) {
    dense32.resize(d * d);
    dense_shift_matrix(op, std::span<float>(dense32));
  }
  for (std::size_t i : pairs) {
    const Real rc = rf::shift_cos(s, k, i, kBits), rs = rf::shift_sin(s, k, i, kBits);
    auto inputs = [&, i] { return spec_label(s) + " k=" + fmt_pos(k) + " pair=" + std::to_string(i); };
    if (t == DType::f64) {
      emit(sink, R::shift_operator_f64, op.cos_k()[i], rc, [&] { return inputs() + " cos"; });
      emit(sink, R::shift_operator_f64, op.sin_k()[i], rs, [&] { return inputs() + " sin"; });
    } else {
      const std::size_t a = sin_slot(s, i), b = cos_slot(s, i);
      const double c00 = dense32[a * d + a], c01 = dense32[a * d + b], c10 = dense32[b * d + a], c11 = dense32[b * d + b];
      const Real nrs = -rs;
      emit(sink, R::shift_dense_f32, c00, rc, [&] { return inputs() + " T[s][s]"; });
      emit(sink, R::shift_dense_f32, c01, rs, [&] { return inputs() + " T[s][c]"; });
      emit(sink, R::shift_dense_f32, c10, nrs, [&] { return inputs() + " T[c][s]"; });
      emit(sink, R::shift_dense_f32, c11, rc, [&] { return inputs() + " T[c][c]"; });
    }
  }
  std::vector<double> shifted, direct;
  if (t == DType::f32) {
    auto block = fast_block<float>(s, p, rows);
    apply_shift(op, std::span<float>(block), rows, method);
    shifted = widen(block);
    direct = widen(fast_block<float>(s, p + k, rows));
  } else {
    shifted = fast_block<double>(s, p, rows);
    apply_shift(op, std::span<double>(shifted), rows, method);
    direct = fast_block<double>(s, p + k, rows);
  }
  const char* mname = method == ShiftMethod::rot ? "rot" : "gemm";
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t q = p + k + static_cast<std::int64_t>(r);
    for (std::size_t c : columns) {
      const double y = shifted[r * d + c], yd = direct[r * d + c];
      auto inputs = [&, r, c, y] {
        std::ostringstream o;
        o << spec_label(s) << " dtype=" << ts << " method=" << mname << " p=" << fmt_pos(p + static_cast<std::int64_t>(r))
          << " k=" << fmt_pos(k) << " col=" << c << " y=" << dec_hex(y);
        return o.str();
      };
      emit(sink, t == DType::f32 ? R::shift_apply_f32 : R::shift_apply_f64, y, rf::value(s, q, c, kBits), inputs);
      emit(sink, t == DType::f32 ? R::shift_differential_f32 : R::shift_differential_f64, y, rf::make_real(yd, kBits),
           [&] { return inputs() + " direct=" + dec_hex(yd); });
    }
  }
}

void measure_dot(const SinusoidalSpec& s, DType t, std::int64_t p, std::int64_t k, const Sink& sink) {
  const rf::PrecisionGuard guard(320);  // Boost temporaries (-x, abs) at >= 320 bits
  const std::size_t d = s.dim, h = pair_count(s);
  const std::string ts(to_string(t));
  std::vector<double> a, b;
  if (t == DType::f32) {
    a = widen(fast_block<float>(s, p, 1));
    b = widen(fast_block<float>(s, p + k, 1));
  } else {
    a = fast_block<double>(s, p, 1);
    b = fast_block<double>(s, p + k, 1);
  }
  const Real dot = exact_dot(a.data(), b.data(), d);
  const double y = rf::round_to_double(dot);
  auto inputs = [&] {
    return spec_label(s) + " dtype=" + ts + " p=" + fmt_pos(p) + " k=" + fmt_pos(k) + " exact dot=" + ref40(dot);
  };
  const double S = static_cast<double>(h);
  const DType unit = s.regime == Regime::emulated ? DType::f32 : t;
  if (k == 0) {
    // The error of the exact dot of binary numbers: measured on the Real itself, rounded only at the end.
    emit_real(sink, unit == DType::f32 ? R::norm_f32 : R::norm_f64, dot, rf::make_real(static_cast<std::int64_t>(h), kBits), y,
              inputs, S);
    return;
  }
  emit_real(sink, t == DType::f32 ? R::dot_f32 : R::dot_f64, dot, rf::dot_closed_form(s, k, kBits), y, inputs, S);
}

void measure_gram(const SinusoidalSpec& s, DType t, std::int64_t p, std::size_t rows, const Sink& sink) {
  const rf::PrecisionGuard guard(320);  // Boost temporaries (-x, abs) at >= 320 bits
  const std::size_t d = s.dim;
  const std::string ts(to_string(t));
  std::vector<double> g(rows * rows);
  if (t == DType::f32) {
    const auto block = fast_block<float>(s, p, rows);
    std::vector<float> out(rows * rows);
    gram_matrix(std::span<const float>(block), rows, d, std::span<float>(out));
    g.assign(out.begin(), out.end());
  } else {
    const auto block = fast_block<double>(s, p, rows);
    gram_matrix(std::span<const double>(block), rows, d, std::span<double>(g));
  }
  const double scale = sinusoidal::gram_error_scale(t, d);
  std::map<std::int64_t, Real> closed;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < rows; ++j) {
      const std::int64_t off = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
      auto it = closed.find(off);
      if (it == closed.end()) it = closed.emplace(off, rf::dot_closed_form(s, off, kBits)).first;
      const double y = g[i * rows + j];
      auto inputs = [&, i, j, y] {
        std::ostringstream o;
        o << spec_label(s) << " dtype=" << ts << " block p=" << fmt_pos(p) << " rows=" << rows << " G[" << i << "][" << j
          << "]=" << dec_hex(y);
        return o.str();
      };
      emit(sink, t == DType::f32 ? R::gram_f32 : R::gram_f64, y, it->second, inputs, scale);
      if (j < i) {
        const Real mirror = rf::make_real(g[j * rows + i], kBits);
        emit(sink, R::gram_symmetry, y, mirror, inputs);
      }
    }
}

}  // namespace posenc::test
