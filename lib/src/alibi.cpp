// ALiBi fast path: slopes per regime (binary128, each emulated step rounded as the named code rounds it), bias rows
// as slices of one per-head vector, scores as bias rows plus a beta = 1 gemm. Definition: posenc/alibi_spec.hpp.
#include "posenc/alibi.hpp"

#include <quadmath.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/angle_table.hpp"  // AlignedBuffer
#include "core/blas.hpp"
#include "core/parallel.hpp"
#include "core/streaming.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "alibi";

// ---- slopes ---------------------------------------------------------------------------------------------

// Exponent e of head h: m_h = 2^(-b e), e = (h+1)/c (h < c) or (2j+1)/(2c) (h = c + j).
struct Exponent {
  std::uint64_t num, den;
};
Exponent slope_exponent(std::size_t n, std::size_t h) {
  const std::size_t c = alibi_power_of_two_floor(n);
  if (h < c) return {h + 1, c};
  return {2 * (h - c) + 1, 2 * c};
}

// RN64(2^(-8/c)) as Python's 2**(-(2**-(log2(c)-3))) computes it (the exponent is exact for a power of two c).
double python_start(std::size_t c) {
  return static_cast<double>(exp2q(static_cast<__float128>(-8.0) / static_cast<__float128>(c)));
}

struct Slope {
  double hi = 0, lo = 0;  // exact regime: m = hi + lo; emulated: hi = the float32 slope, lo = 0
  float f32 = 0;          // emulated regimes: the float32 slope
};

Slope exact_slope(const AlibiSpec& s, std::size_t h) {
  const Exponent e = slope_exponent(s.heads, h);
  const __float128 m = exp2q(-(static_cast<__float128>(s.bias_max) * static_cast<__float128>(e.num)) /
                             static_cast<__float128>(e.den));
  Slope out;
  out.hi = static_cast<double>(m);
  out.lo = static_cast<double>(m - static_cast<__float128>(out.hi));
  return out;
}

float emulated_slope(const AlibiSpec& s, std::size_t h) {
  const std::size_t n = s.heads, c = alibi_power_of_two_floor(n);
  switch (s.regime) {
    case AlibiRegime::ofirpress: {
      // get_slopes: start * start**i over the list of c' = c (h < c) or 2c (every other entry: i = 2j), in
      // Python floats, then torch.Tensor -> float32.
      const bool extra = h >= c;
      const double start = python_start(extra ? 2 * c : c);
      const auto i = static_cast<__float128>(extra ? 2 * (h - c) : h);
      const double power = static_cast<double>(powq(static_cast<__float128>(start), i));
      return static_cast<float>(start * power);
    }
    case AlibiRegime::bloom: {
      // base = float32(2**(-8/c)), slopes torch.pow(base, 1..c); extra_base = float32(2**(-4/c)), powers 1, 3, ...
      const bool extra = h >= c;
      const auto base = static_cast<float>(python_start(extra ? 2 * c : c));
      const auto k = static_cast<__float128>(extra ? 2 * (h - c) + 1 : h + 1);
      return static_cast<float>(powq(static_cast<__float128>(base), k));
    }
    case AlibiRegime::mpt: {
      // P = 2^ceil(log2 n); base_t = float32(t) * float32(b / P); slopes 1 / 2^base_t; reordered (2, 4, ..., 1, 3, ...)
      // when n is not a power of two (then P = 2c).
      const std::size_t P = c == n ? n : 2 * c;
      const std::size_t t = c == n ? h + 1 : (h < c ? 2 * (h + 1) : 2 * (h - c) + 1);
      const auto step = static_cast<float>(s.bias_max / static_cast<double>(P));
      const float e = static_cast<float>(t) * step;
      const auto p = static_cast<float>(exp2q(static_cast<__float128>(e)));
      return 1.0f / p;
    }
    case AlibiRegime::exact: break;
  }
  return 0.0f;
}

// ---- values ---------------------------------------------------------------------------------------------

// The bias at multiplier x (exact: m x rounded once; emulated: RN32(RN32(x) * slope32)).
template <class T>
inline T value(const Slope& m, bool exact, std::int64_t x) {
  if (exact) {
    const double xd = static_cast<double>(x);  // exact: |x| < 2^31
    const double p = m.hi * xd;
    const double e = std::fma(m.hi, xd, -p) + m.lo * xd;
    return static_cast<T>(p + e);
  }
  return static_cast<T>(static_cast<float>(x) * m.f32);
}

// v[t] = value(x0 + t), t < n (the branch on the regime is hoisted out of the loop by the compiler).
template <class T>
void fill_values(T* v, std::size_t n, const Slope& m, bool exact, std::int64_t x0) {
  for (std::size_t t = 0; t < n; ++t) v[t] = value<T>(m, exact, x0 + static_cast<std::int64_t>(t));
}

}  // namespace

// ---- plan -----------------------------------------------------------------------------------------------

struct AlibiPlan::Impl {
  AlibiSpec spec;
  bool exact = true;
  std::vector<Slope> slope;
  std::vector<double> slopes;  // what slopes() returns

  explicit Impl(const AlibiSpec& s) : spec(s), exact(s.regime == AlibiRegime::exact) {
    slope.resize(s.heads);
    slopes.resize(s.heads);
    for (std::size_t h = 0; h < s.heads; ++h) {
      if (exact) {
        slope[h] = exact_slope(s, h);
      } else {
        slope[h].f32 = emulated_slope(s, h);
        slope[h].hi = slope[h].f32;
      }
      slopes[h] = slope[h].hi;
    }
  }
};

namespace {

std::size_t checked_size(const AlibiSpec& s, const AlibiGeometry& g) {
  check_alibi_lengths(g.query_length, g.key_length);
  if (!g.key_mask.empty()) {
    if (g.key_mask.size() != g.key_length)
      throw Error(kWhere, "key_mask", std::to_string(g.key_mask.size()) + " entries",
                  "empty or exactly key_length = " + std::to_string(g.key_length) + " entries");
    for (std::size_t j = 0; j < g.key_mask.size(); ++j)
      if (g.key_mask[j] > 1)
        throw Error(kWhere, "key_mask", "entry " + std::to_string(j) + " = " + std::to_string(g.key_mask[j]),
                    "0 (padding) or 1 (token)");
  }
  if (!enum_index(g.mask)) throw Error(kWhere, "mask", std::to_string(static_cast<int>(g.mask)), enum_names<AlibiMask>());
  std::size_t n = 0;
  if (__builtin_mul_overflow(s.heads, g.query_length, &n) || __builtin_mul_overflow(n, g.key_length, &n))
    throw Error(kWhere, "query_length", std::to_string(g.query_length),
                "a geometry whose heads * query_length * key_length fits in size_t");
  return n;
}

// Rows are written in blocks of this many query rows (one work item: one head, one block).
constexpr std::size_t kRowBlock = 64;
// Causal scores: query rows per gemm call (each call stops at the last key its rows see).
constexpr std::size_t kScoresRowBlock = 256;

template <class T>
void bias_impl(const AlibiPlan::Impl& P, const AlibiGeometry& g, std::span<T> out, const TableOptions& o) {
  const std::size_t total = checked_size(P.spec, g);
  if (out.size() != total)
    throw Error(kWhere, "out", std::to_string(out.size()) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  const std::size_t H = P.spec.heads, Lq = g.query_length, Lk = g.key_length;
  const auto past = static_cast<std::int64_t>(Lk - Lq);
  const AlibiVariant var = P.spec.variant;
  const bool causal = g.mask == AlibiMask::causal;
  const bool per_key = var == AlibiVariant::key || var == AlibiVariant::key_shifted || var == AlibiVariant::key_counted;
  const bool patch_padding = causal && !g.key_mask.empty();
  const T ninf = -std::numeric_limits<T>::infinity();

  // key_counted's positions c_j (cumsum(mask) - 1) * mask.
  std::vector<std::int64_t> counted;
  if (var == AlibiVariant::key_counted) {
    counted.resize(Lk);
    std::int64_t run = 0;
    for (std::size_t j = 0; j < Lk; ++j) {
      const std::int64_t m = g.key_mask.empty() ? 1 : g.key_mask[j];
      run += m;
      counted[j] = (run - 1) * m;
    }
  }

  // Per-thread scratch: the head's vector E (rows are slices of it: Lk values for the per-key variants, Lk + Lq - 1
  // for relative and symmetric, whose row i starts at E[Lq - 1 - i]) and, when padding keys must be masked, a row
  // to patch.
  const std::size_t blocks_per_head = (Lq + kRowBlock - 1) / kRowBlock;
  const std::size_t items = H * blocks_per_head;
  const int threads = std::min<int>(core::thread_count(o, total), static_cast<int>(std::min<std::size_t>(items, 1 << 20)));
  const std::size_t ext = per_key ? Lk : Lk + Lq - 1;
  const std::size_t stride = (ext + (patch_padding ? Lk : 0) + 15) / 16 * 16;
  core::AlignedBuffer<T> scratch(stride * static_cast<std::size_t>(std::max(threads, 1)));
  const bool tails = per_key && causal && !patch_padding;
  core::AlignedBuffer<T> fill_row(tails ? Lk : 0);  // -inf, for the masked tails of per-key rows
  if (tails) std::fill(fill_row.get(), fill_row.get() + Lk, ninf);
  const bool stream = o.streaming_stores && core::worth_streaming(total * sizeof(T));
  std::vector<std::size_t> built(static_cast<std::size_t>(std::max(threads, 1)), H);  // head whose E a thread holds

  core::parallel_for(items, threads, [&](int t, std::size_t item) {
    const std::size_t h = item / blocks_per_head, b = item % blocks_per_head;
    T* E = scratch.get() + static_cast<std::size_t>(t) * stride;
    T* row = E + ext;
    const Slope& m = P.slope[h];
    // E for this head: a thread's items run in order, so it is built once per run of one head's blocks (the
    // values depend only on the head and the distance, so which thread builds it never matters).
    if (built[static_cast<std::size_t>(t)] != h) {
    built[static_cast<std::size_t>(t)] = h;
    if (per_key) {
      if (var == AlibiVariant::key) fill_values(E, Lk, m, P.exact, 0);
      else if (var == AlibiVariant::key_shifted) fill_values(E, Lk, m, P.exact, -static_cast<std::int64_t>(Lk - 1));
      else
        for (std::size_t j = 0; j < Lk; ++j) E[j] = value<T>(m, P.exact, counted[j]);
    } else {
      // E[t] = bias at x = t - (Lk - 1) for t < Lk (key at or before the query), then the keys after it:
      // relative 0 (or -inf), symmetric the value at x = -(u - (Lk - 1)) = E[2 (Lk - 1) - u] (an index >= Lk - Lq).
      fill_values(E, Lk, m, P.exact, -static_cast<std::int64_t>(Lk - 1));
      if (causal) std::fill(E + Lk, E + ext, ninf);
      else if (var == AlibiVariant::relative) std::fill(E + Lk, E + ext, T(0));
      else
        for (std::size_t u = Lk; u < ext; ++u) E[u] = E[2 * (Lk - 1) - u];
    }
    }
    const std::size_t i0 = b * kRowBlock, i1 = std::min(Lq, i0 + kRowBlock);
    for (std::size_t i = i0; i < i1; ++i) {
      T* dst = out.data() + (h * Lq + i) * Lk;
      const auto qi = static_cast<std::size_t>(past) + i;  // the query's key position
      const T* src;
      if (per_key) {
        if (!causal) {
          src = E;
        } else if (!patch_padding) {
          core::store_row(dst, E, qi + 1, stream);
          if (qi + 1 < Lk) core::store_row(dst + qi + 1, fill_row.get(), Lk - qi - 1, stream);
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
      core::store_row(dst, src, Lk, stream);
    }
  });
  if (stream) core::store_fence();
}

template <class T>
void scores_impl(const AlibiPlan& plan, const AlibiPlan::Impl& P, std::span<const T> q, std::span<const T> k,
                 std::size_t d, const AlibiGeometry& g, double scale, std::span<T> out, const TableOptions& o) {
  const std::size_t total = checked_size(P.spec, g);
  const std::size_t H = P.spec.heads, Lq = g.query_length, Lk = g.key_length;
  if (d < 1 || d > (std::size_t{1} << 16))
    throw Error(kWhere, "head_dim", std::to_string(d), "an integer in [1, 65536]");
  if (!std::isfinite(scale)) throw Error(kWhere, "scale", format_real(scale), "a finite real");
  auto need = [&](const char* what, std::size_t have, std::size_t rows, const char* shape) {
    std::size_t n = 0;
    if (__builtin_mul_overflow(H, rows, &n) || __builtin_mul_overflow(n, d, &n) || have != n)
      throw Error(kWhere, what, std::to_string(have) + " elements",
                  std::string("exactly ") + shape + " = " + std::to_string(n) + " elements");
  };
  need("q", q.size(), Lq, "heads * query_length * head_dim");
  need("k", k.size(), Lk, "heads * key_length * head_dim");
  if (out.size() != total)
    throw Error(kWhere, "scores", std::to_string(out.size()) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  const blasint m = core::to_blasint(Lq, "alibi scores", "query_length");
  const blasint n = core::to_blasint(Lk, "alibi scores", "key_length");
  const blasint kk = core::to_blasint(d, "alibi scores", "head_dim");
  warn_if_blas_fallback();
  plan.bias(g, out, o);  // the bias rows (streamed when the output is larger than the caches)
  // With the causal mask, a block of query rows [i0, i1) sees keys 0 .. q_{i1-1} only: the gemm of that block stops
  // there (the entries beyond are -inf already, and -inf + a finite product is -inf), which halves the work of a
  // square matrix. Without it, one gemm per head.
  const bool causal = g.mask == AlibiMask::causal;
  const std::size_t block = causal ? kScoresRowBlock : Lq, past = Lk - Lq;
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i0 = 0; i0 < Lq; i0 += block) {
      const std::size_t rows = std::min(block, Lq - i0), keys = causal ? past + i0 + rows : Lk;
      core::gemm_nt_accumulate(causal ? static_cast<blasint>(rows) : m, causal ? static_cast<blasint>(keys) : n, kk,
                               scale, q.data() + (h * Lq + i0) * d, k.data() + h * Lk * d,
                               out.data() + (h * Lq + i0) * Lk, n);
    }
}

}  // namespace

AlibiPlan::AlibiPlan(const AlibiSpec& spec) {
  validate(spec);
  impl_ = std::make_shared<const Impl>(spec);
}
const AlibiSpec& AlibiPlan::spec() const noexcept { return impl_->spec; }
std::span<const double> AlibiPlan::slopes() const noexcept { return impl_->slopes; }

void AlibiPlan::bias(const AlibiGeometry& g, std::span<float> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }
void AlibiPlan::bias(const AlibiGeometry& g, std::span<double> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }

void AlibiPlan::scores(std::span<const float> q, std::span<const float> k, std::size_t head_dim, const AlibiGeometry& g,
                       double scale, std::span<float> out, const TableOptions& o) const {
  scores_impl(*this, *impl_, q, k, head_dim, g, scale, out, o);
}
void AlibiPlan::scores(std::span<const double> q, std::span<const double> k, std::size_t head_dim,
                       const AlibiGeometry& g, double scale, std::span<double> out, const TableOptions& o) const {
  scores_impl(*this, *impl_, q, k, head_dim, g, scale, out, o);
}

namespace {
void check_value_args(const AlibiSpec& s, std::size_t head, std::int64_t x) {
  if (head >= s.heads)
    throw Error(kWhere, "head", std::to_string(head), "an integer in [0, heads - 1 = " + std::to_string(s.heads - 1) + "]");
  if (x <= -kAlibiMaxLength || x >= kAlibiMaxLength)
    throw Error(kWhere, "x", std::to_string(x), "an integer with |x| < 2^31 (key positions and distances)");
}
}  // namespace

float AlibiPlan::bias_value_f32(std::size_t head, std::int64_t x) const {
  check_value_args(impl_->spec, head, x);
  return value<float>(impl_->slope[head], impl_->exact, x);
}
double AlibiPlan::bias_value_f64(std::size_t head, std::int64_t x) const {
  check_value_args(impl_->spec, head, x);
  return value<double>(impl_->slope[head], impl_->exact, x);
}

std::size_t alibi_bias_size(const AlibiSpec& s, const AlibiGeometry& g) {
  validate(s);
  return checked_size(s, g);
}

std::vector<double> alibi_slopes(const AlibiSpec& s) {
  const AlibiPlan p(s);
  return {p.slopes().begin(), p.slopes().end()};
}
void alibi_bias(const AlibiSpec& s, const AlibiGeometry& g, std::span<float> out, const TableOptions& o) {
  AlibiPlan(s).bias(g, out, o);
}
void alibi_bias(const AlibiSpec& s, const AlibiGeometry& g, std::span<double> out, const TableOptions& o) {
  AlibiPlan(s).bias(g, out, o);
}

}  // namespace posenc
