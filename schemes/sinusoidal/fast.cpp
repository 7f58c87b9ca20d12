// Sinusoidal tables and the shift operator T(k), on the shared angle core (core/angle_table.hpp).
//
// Exact regime: the plan holds an AngleTable of the spec's frequencies; tables and row lists are written by the
// shared table writer (core/table_writer.hpp) in the spec's layout (one row form), streamed for large outputs.
//
// Emulated regime. The float32 steps of tensor2tensor / fairseq are replayed with IEEE float arithmetic
// (which is exactly what those steps are), exp evaluated in binary128 and rounded once (correct rounding),
// and sin/cos of the float32 angle evaluated in double and rounded once.
#include "posenc/sinusoidal.hpp"

#include "core/binary128.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/angle_table.hpp"
#include "core/blas.hpp"
#include "core/parallel.hpp"
#include "core/rn32.hpp"
#include "core/sincos32.hpp"
#include "core/streaming.hpp"
#include "core/table_writer.hpp"
#include "core/trig.hpp"
#include "posenc/blas.hpp"

namespace posenc {

struct SinusoidalPlan::Impl {
  SinusoidalSpec spec;
  std::optional<core::AngleTable> exact;  // exact regime
  std::optional<core::ProductSinCos32> emulated;  // emulated regime: RN32(sin/cos(RN32(p) omega32_k)) rows
  std::vector<double> frequencies;        // what frequencies() returns
};

namespace {

constexpr const char* kWhere = "sinusoidal";

// ---- frequencies ----------------------------------------------------------------------------------

core::DDFrequencies exact_frequencies(const SinusoidalSpec& s) {
  const std::size_t h = pair_count(s);
  switch (s.rule) {
    case FrequencyRule::paper:
      return core::geometric_frequencies(h, s.min_timescale, s.base, 2.0, static_cast<double>(s.dim));
    case FrequencyRule::tensor2tensor:
      return core::geometric_frequencies(h, s.min_timescale, s.base, 1.0,
                                         static_cast<double>(std::max<std::size_t>(h - 1, 1)));
    case FrequencyRule::fairseq:
      return core::geometric_frequencies(h, s.min_timescale, s.base, 1.0, static_cast<double>(h - 1));
  }
  return {};
}

// The float32 frequency computation of tensor2tensor's get_timing_signal_1d / fairseq's get_embedding / PyTorch's
// exp and pow forms of the paper rule (CONVENTIONS.md §2.1, §2.5), step by step. Python floats are doubles; tensors
// are float32.
std::vector<float> emulated_frequencies(const SinusoidalSpec& s) {
  const std::size_t h = pair_count(s);
  const double ln_base = static_cast<double>(logq(static_cast<quad>(s.base)));  // math.log, correctly rounded
  std::vector<float> w(h);
  if (s.rule == FrequencyRule::paper && s.paper_form == PaperForm::pow) {
    // Transformer-XL (kimiyoung/transformer-xl@01102106 pytorch/mem_transformer.py PositionalEmbedding) and HF XLNet
    // (transformers@98ad48f2 models/xlnet/modeling_xlnet.py relative_positional_encoding):
    // inv_freq = 1 / (base ** (arange(0.0, d, 2.0) / d)), every step a float32 tensor operation: the quotient
    // RN32(2k / d), the pow with the scalar base as float32, the reciprocal.
    const float base32 = static_cast<float>(s.base);
    for (std::size_t k = 0; k < h; ++k) {
      const float t = static_cast<float>(2 * k) / static_cast<float>(s.dim);
      // base32 ** t (x ** 0 = 1 even where base32 overflows float32 to infinity, as torch.pow gives)
      const float pw = t == 0.0f ? 1.0f : core::rn32_pow(base32, t);
      float inv = 1.0f / pw;
      if (s.min_timescale != 1.0) inv = static_cast<float>(s.min_timescale) * inv;
      w[k] = inv;
    }
  } else if (s.rule == FrequencyRule::tensor2tensor) {
    // log_timescale_increment = math.log(max/min) / tf.maximum(tf.to_float(num_timescales) - 1, 1)
    const float inc = static_cast<float>(ln_base) / static_cast<float>(std::max<std::size_t>(h - 1, 1));
    for (std::size_t k = 0; k < h; ++k) {
      const float arg = static_cast<float>(k) * -inc;                          // tf.to_float(range) * -inc
      const float e = core::rn32_exp(arg);  // tf.exp, correctly rounded
      w[k] = static_cast<float>(s.min_timescale) * e;                          // min_timescale * exp(...)
    }
  } else {
    // fairseq: emb = math.log(10000) / (half_dim - 1); exp(arange(half_dim, float) * -emb).
    // paper (PyTorch's exp form; HF NezhaRelativePositionsEncoding, transformers@553b10de
    // models/deprecated/nezha/modeling_nezha.py): exp(arange(0, d, 2).float() * (-math.log(10000.0) / d)), the
    // Python double rounded to float32 when it meets the float32 tensor.
    const bool paper = s.rule == FrequencyRule::paper;
    const double emb = paper ? ln_base / static_cast<double>(s.dim) : ln_base / static_cast<double>(h - 1);
    const float neg_emb = static_cast<float>(-emb);
    for (std::size_t k = 0; k < h; ++k) {
      const float arg = static_cast<float>(paper ? 2 * k : k) * neg_emb;
      float e = core::rn32_exp(arg);
      if (s.min_timescale != 1.0) e = static_cast<float>(s.min_timescale) * e;
      w[k] = e;
    }
  }
  return w;
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

// Per-thread scratch of the emulated regime, allocated before any parallel region (allocation failure throws on
// the caller's thread).
template <class T>
struct Scratch {
  core::AlignedBuffer<double> s, c;
  core::ProductSinCos32::State state;
  core::AlignedBuffer<T> row;
  Scratch(std::size_t h, std::size_t d) : s(h), c(h), state(h), row(d) {}
};

// The emulated row at position p (zeros for the padding row) into dst.
template <class T>
void emulated_row_at(const SinusoidalPlan::Impl& plan, std::int64_t p, Scratch<T>& w, T* dst) {
  if (plan.spec.padding_row && p == *plan.spec.padding_row) {
    std::fill(dst, dst + plan.spec.dim, T(0));
    return;
  }
  // The row of the emulated implementation: angle32 = RN32(RN32(p) * w32_k), value = RN32(sin/cos(angle32)), each
  // correctly rounded (core/sincos32.hpp).
  plan.emulated->row(p, w.state, w.s.get(), w.c.get());
  scatter_row(plan.spec, w.s.get(), w.c.get(), dst);
}

// The spec's row layout as a row form of the table writer (exact regime).
template <class T>
core::RowForm<T> row_form(const SinusoidalSpec& spec, T* out) {
  const std::size_t h = pair_count(spec), d = spec.dim;
  core::RowForm<T> f;
  if (spec.layout == Layout::interleaved) f.add(core::Part::sin_cos, out, d, 0);
  else f.add(core::Part::sin, out, d, 0).add(core::Part::cos, out, d, h);
  if (d > 2 * h) f.zero_column = 2 * h;
  return f;
}

std::optional<std::int64_t> padding_of(const SinusoidalSpec& s) {
  return s.padding_row ? std::optional<std::int64_t>(*s.padding_row) : std::nullopt;
}

// Emulated regime: every row computed on its own (no anchors), finished in scratch and stored.
template <class T>
void emulated_rows(const SinusoidalPlan::Impl& plan, const core::PositionSource& src, T* dst, const TableOptions& opt,
                   std::size_t elements) {
  const std::size_t h = pair_count(plan.spec), d = plan.spec.dim;
  const bool stream = opt.streaming_stores && core::worth_streaming(elements * sizeof(T));
  const int threads = core::thread_count(opt, elements);
  std::vector<Scratch<T>> scratch;
  scratch.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) scratch.emplace_back(h, d);
  core::parallel_for(src.count, threads, [&](int t, std::size_t r) {
    Scratch<T>& w = scratch[static_cast<std::size_t>(t)];
    emulated_row_at(plan, src.at(r), w, w.row.get());
    core::store_row(dst + r * d, w.row.get(), d, stream);
  });
  if (stream) core::store_fence();
}

template <class T>
void write_rows(const SinusoidalPlan::Impl& plan, const core::PositionSource& src, std::span<T> out,
                const TableOptions& opt, std::size_t elements) {
  if (plan.exact)
    core::write_table(*plan.exact, src, row_form(plan.spec, out.data()), padding_of(plan.spec), opt, elements);
  else
    emulated_rows(plan, src, out.data(), opt, elements);
}

template <class T>
void table_impl(const SinusoidalPlan::Impl& plan, std::int64_t first, std::size_t count, std::span<T> out,
                const TableOptions& opt) {
  const std::size_t needed = checked_table_elements(plan.spec, first, count, sizeof(T));
  if (out.size() < needed)
    throw Error(kWhere, "out.size()", std::to_string(out.size()), ">= count * dim = " + std::to_string(needed));
  write_rows(plan, core::PositionSource{.first = first, .count = count}, out, opt, needed);
}

template <class T>
void rows_impl(const SinusoidalPlan::Impl& plan, std::span<const std::int64_t> positions, std::span<T> out,
               const TableOptions& opt) {
  const SinusoidalSpec& spec = plan.spec;
  if (positions.empty()) throw Error(kWhere, "positions.size()", "0", "an integer >= 1");
  const std::size_t needed = checked_list_elements(spec, positions.size(), sizeof(T));
  if (out.size() < needed)
    throw Error(kWhere, "out.size()", std::to_string(out.size()), ">= positions.size() * dim = " + std::to_string(needed));
  for (std::int64_t p : positions) check_position(spec, p);
  write_rows(plan, core::PositionSource{.count = positions.size(), .list = positions}, out, opt, needed);
}

// ---- shift operator -------------------------------------------------------------------------------

// Columns of pair k < h of a spec already validated (a plan's, a ShiftOperator's): no checks in the loops over
// pairs. The public sin_slot / cos_slot check the spec and k, then use these.
std::size_t sin_column(const SinusoidalSpec& s, std::size_t k) noexcept {
  return s.layout == Layout::interleaved ? 2 * k : k;
}
std::size_t cos_column(const SinusoidalSpec& s, std::size_t k) noexcept {
  return s.layout == Layout::interleaved ? 2 * k + 1 : pair_count(s) + k;
}

template <class T>
void dense_impl(const ShiftOperator& t, std::span<T> out) {
  const SinusoidalSpec& s = t.spec();
  const std::size_t d = s.dim, h = pair_count(s);
  if (out.size() / d < d)
    throw Error("dense_shift_matrix", "out.size()", std::to_string(out.size()), ">= dim * dim = " + std::to_string(d * d));
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(d * d), T(0));
  for (std::size_t i = 0; i < h; ++i) {
    const std::size_t a = sin_column(s, i), b = cos_column(s, i);
    out[a * d + a] = static_cast<T>(t.cos_k()[i]);
    out[a * d + b] = static_cast<T>(t.sin_k()[i]);
    out[b * d + a] = static_cast<T>(-t.sin_k()[i]);
    out[b * d + b] = static_cast<T>(t.cos_k()[i]);
  }
  if (d > 2 * h) out[(d - 1) * d + (d - 1)] = T(1);  // zero-pad column: identity
}

template <class T>
void apply_shift_impl(const ShiftOperator& t, std::span<T> block, std::size_t rows, ShiftMethod m) {
  const std::size_t d = t.spec().dim;
  if (rows == 0) throw Error("apply_shift", "rows", "0", "an integer >= 1");
  if (rows > block.size() / d)
    throw Error("apply_shift", "block.size()", std::to_string(block.size()),
                ">= rows * dim = " + std::to_string(rows) + " * " + std::to_string(d));
  const blasint bd = core::to_blasint(d, "apply_shift", "dim");
  const blasint brows = core::to_blasint(rows, "apply_shift", "rows");
  prepare_blas();
  if (m == ShiftMethod::rot) {  // x' = c x + s y (sin slot), y' = c y - s x (cos slot), per pair
    for (std::size_t i = 0; i < pair_count(t.spec()); ++i)
      core::rot(brows, block.data() + sin_column(t.spec(), i), bd, block.data() + cos_column(t.spec(), i), bd, t.cos_k()[i],
                t.sin_k()[i]);
    return;
  }
  std::vector<T> dense(d * d), in(block.begin(), block.begin() + static_cast<std::ptrdiff_t>(rows * d));
  dense_impl(t, std::span<T>(dense));
  core::gemm_nt(brows, bd, bd, in.data(), dense.data(), block.data());  // block = in * T(k)^T
}

std::int64_t max_shift(const SinusoidalSpec& s) { return 2 * max_abs_position(s); }

}  // namespace

// ---- public API -----------------------------------------------------------------------------------

SinusoidalPlan::SinusoidalPlan(const SinusoidalSpec& spec) {
  validate(spec);
  auto impl = std::make_shared<Impl>();
  impl->spec = spec;
  if (spec.regime == Regime::exact) {
    impl->exact.emplace(exact_frequencies(spec));
    impl->frequencies = impl->exact->frequencies().hi;
  } else {
    std::vector<float> w32 = emulated_frequencies(spec);  // the float32 omega_k of the emulated code
    impl->frequencies.assign(w32.begin(), w32.end());
    impl->emulated.emplace(std::move(w32));
  }
  impl_ = std::move(impl);
}

const SinusoidalSpec& SinusoidalPlan::spec() const noexcept { return impl_->spec; }
std::span<const double> SinusoidalPlan::frequencies() const noexcept { return impl_->frequencies; }

void SinusoidalPlan::table(std::int64_t first, std::size_t count, std::span<float> out, const TableOptions& o) const {
  table_impl(*impl_, first, count, out, o);
}
void SinusoidalPlan::table(std::int64_t first, std::size_t count, std::span<double> out, const TableOptions& o) const {
  table_impl(*impl_, first, count, out, o);
}
void SinusoidalPlan::rows(std::span<const std::int64_t> p, std::span<float> out, const TableOptions& o) const {
  rows_impl(*impl_, p, out, o);
}
void SinusoidalPlan::rows(std::span<const std::int64_t> p, std::span<double> out, const TableOptions& o) const {
  rows_impl(*impl_, p, out, o);
}

void sinusoidal_table(const SinusoidalSpec& s, std::int64_t first, std::size_t count, std::span<float> out,
                      const TableOptions& o) {
  make_plan(s).table(first, count, out, o);
}
void sinusoidal_table(const SinusoidalSpec& s, std::int64_t first, std::size_t count, std::span<double> out,
                      const TableOptions& o) {
  make_plan(s).table(first, count, out, o);
}
void sinusoidal_rows(const SinusoidalSpec& s, std::span<const std::int64_t> p, std::span<float> out,
                     const TableOptions& o) {
  make_plan(s).rows(p, out, o);
}
void sinusoidal_rows(const SinusoidalSpec& s, std::span<const std::int64_t> p, std::span<double> out,
                     const TableOptions& o) {
  make_plan(s).rows(p, out, o);
}

std::vector<double> sinusoidal_frequencies(const SinusoidalSpec& spec) {
  const SinusoidalPlan plan(spec);
  return {plan.frequencies().begin(), plan.frequencies().end()};
}

namespace {
void check_pair(const SinusoidalSpec& s, std::size_t k) {
  validate(s);  // a spec refused everywhere else gets no slots either
  if (k >= pair_count(s))
    throw Error(kWhere, "pair", std::to_string(k), "an integer in [0, " + std::to_string(pair_count(s)) + ") (h = dim/2)");
}
}  // namespace

std::size_t sin_slot(const SinusoidalSpec& s, std::size_t k) {
  check_pair(s, k);
  return sin_column(s, k);
}
std::size_t cos_slot(const SinusoidalSpec& s, std::size_t k) {
  check_pair(s, k);
  return cos_column(s, k);
}

ShiftOperator shift_operator(const SinusoidalPlan& plan, std::int64_t k) {
  const SinusoidalSpec& spec = plan.spec();
  if (spec.regime != Regime::exact)
    throw Error("shift_operator", "regime", std::string(to_string(spec.regime)),
                "exact (emulated tables are not exact rotations of each other)");
  if (k < -max_shift(spec) || k > max_shift(spec))
    throw Error("shift_operator", "k", std::to_string(k), "|k| <= " + std::to_string(max_shift(spec)));
  const std::size_t h = pair_count(spec);
  std::vector<double> c(h), s(h);
  plan.impl_->exact->direct(k, s.data(), c.data());
  return ShiftOperator(spec, k, std::move(c), std::move(s));
}
ShiftOperator shift_operator(const SinusoidalSpec& spec, std::int64_t k) { return shift_operator(make_plan(spec), k); }

void dense_shift_matrix(const ShiftOperator& t, std::span<double> out) { dense_impl(t, out); }
void dense_shift_matrix(const ShiftOperator& t, std::span<float> out) { dense_impl(t, out); }

void apply_shift(const ShiftOperator& t, std::span<float> block, std::size_t rows, ShiftMethod m) {
  apply_shift_impl(t, block, rows, m);
}
void apply_shift(const ShiftOperator& t, std::span<double> block, std::size_t rows, ShiftMethod m) {
  apply_shift_impl(t, block, rows, m);
}

}  // namespace posenc
