// schemes/rope/bench.cpp — rotary position embedding: in-place rotation of Q/K-shaped tensors and cos/sin cache
// generation, each with its in-run baselines (DESIGN.md §5). Names follow suites.hpp.
//
// Families and variants
//   apply/<variant>/T:<tokens>/heads:<h>/head_dim:<d>/threads:<n>   RopePlan::apply, in place, on a dense
//                          [T][heads][d] tensor, positions 0..T-1, full rotary (r = d = 128, 32 heads). The
//                          tensor is rotated again every iteration (rotations keep norms, so values stay bounded).
//     exact_halves_f32       exact regime, half-split pairs (k, k + 64)
//     exact_interleaved_f32  exact regime, interleaved pairs (2k, 2k + 1)
//     hf_halves_f32          rope_preset("hf-llama", 128): HF float32 steps
//     ggml_interleaved_f32   rope_preset("ggml-normal", 128): ggml float32 steps
//     exact_halves_yarn_f32, hf_halves_yarn_f32   the exact and hf kernels under YaRN (factor 4, L0 8192,
//                            theta'_k; attention factor given as 1, see yarn_spec), against the same baselines
//     exact_halves_mrope_f32, hf_halves_mrope_f32   Qwen2-VL's M-RoPE (sections [16, 24, 24]) with image-grid
//                            positions (t, h, w rows of cache_positions: three angles per token and pair)
//     exact_halves_f64       exact regime, half-split, f64 (T:1024 only)
//     rmw_f32 / rmw_f64      read_modify_write (baselines.hpp) over the same bytes: the memory limit of an
//                            in-place kernel (x = -x, one fused multiply-add per element)
//     plainloop_f32 / _f64   plainloop_rope_halves (baselines.hpp): HF's loop as a user writes it, angle in the
//                            element type, std::cos / std::sin once per token and pair, reused for all heads
//   cache/<variant>/T:<positions>/w:<values per position>/threads:<n>   RopePlan::cache, exact regime, f32,
//                          positions 0..T-1, rotary_dim 128; w = cache_values_per_position (pairs 128, hf 256)
//     exact_pairs_f32        RopeCacheForm::pairs: [cos_0..cos_63 | sin_0..sin_63] per position
//     exact_hf_f32           RopeCacheForm::hf: cos block [c | c] of all positions, then sin block [s | s]
//     exact_{pairs,hf}_{yarn,longrope,xpos,mrope}_f32   the same forms under YaRN (attention factor computed,
//                            multiplying cos and sin), LongRoPE (long factors), xPos (query scale, centre T/2; hf
//                            form only at DRAM size) and M-RoPE (Qwen2-VL sections, image-grid t/h/w rows): see
//                            cache_variant_spec; they show what each costs over the plain cache
//     stream_store_f32       non-temporal stores of the same T * w * 4 bytes: the DRAM write limit
//     store_f32              ordinary stores of the same bytes (cache-sized cases): the limit of a cache-resident output
// Every baseline has exactly the arguments of the kernels it is the baseline of (the report pairs them by name).
// The key is head_dim, not d: the report takes "L"/"d" as the x axis when named, and here the size is T*heads*head_dim.
// All kernels and baselines run with `threads` OpenMP threads (TableOptions::threads for posenc).
//
// Counters: apply: bytes_per_second = 2 x tensor bytes per iteration (every channel is read and written back),
// items_per_second = T * heads * d; cache: bytes_per_second = output bytes, items_per_second = output values.
// label: regime_label of the tensor / output bytes (suites.hpp).
//
// Size policy (suites.hpp). apply: T from the case table (schemes/rope/cases.hpp): T:1024 (16 MiB f32, 32 MiB
// f64) is the size the issue names, in the shared-L3 range (label l3: less stable run to run), T:32768 (512 MiB,
// label dram) is f32 only. cache: T:1024 (512 KiB pairs, 1 MiB hf: label cache) and 512 MiB outputs (pairs
// T:1048576, hf T:524288: label dram). Cache-sized cases run before DRAM-sized ones, so a variant's 512 MiB
// buffer is allocated (and pre-faulted) once, and each case refills it with `threads` threads before timing.
//
// Sanity, after every timed loop (a mismatch aborts the run before any result is reported):
//   apply (kernels and baselines): the tokens 0, T/2 and T-1 are copied before timing; afterwards the copy is
//     put through the same kernel with the same positions as many times as the timed loop ran, on one thread,
//     and must equal the timed tensor bit for bit (posenc: claim ROPE-REPRO-1, values independent of the thread
//     count and the token set; baselines: the same code per token), and every head vector must keep its norm
//     within 1e-3 (+ 2^-21 per rotation) relative. Before timing, one rotation of the copy is compared with a
//     double-precision rotation by the plan's own pairs cache (kernels) or by hf-llama / exact cos and sin
//     (plain loops): a gross-error guard against wrong pairing, positions or direction, not an accuracy claim.
//   cache: the rows of positions 0, T/2 and T-1 equal RopePlan::cache of that single position bit for bit.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "schemes/rope/cases.hpp"
#include "baselines.hpp"
#include "posenc/rope.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::rope;
using posenc::Layout;
using posenc::RopeCacheForm;
using posenc::RopePlan;
using posenc::RopeRegime;
using posenc::RopeSpec;

constexpr std::int64_t kHeads = static_cast<std::int64_t>(cases::kBenchHeads);
constexpr std::int64_t kHeadDim = static_cast<std::int64_t>(cases::kBenchHeadDim);
constexpr std::int64_t kRotaryDim = kHeadDim;  // full rotary

constexpr std::size_t usize(std::int64_t v) { return static_cast<std::size_t>(v); }

std::vector<std::int64_t> iota_positions(std::size_t n) {
  std::vector<std::int64_t> p(n);
  std::iota(p.begin(), p.end(), std::int64_t{0});
  return p;
}

// The positions of a cache of n tokens: 0..n-1, or for M-RoPE three rows (t, h, w) of an image-like grid of
// 32 x 32 patches per frame (t = i / 1024, h = i / 32 mod 32, w = i mod 32): no axis equals t for most tokens,
// so every pair's angle is computed from its own row (a text token, t = h = w, would skip two of them).
std::vector<std::int64_t> cache_positions(const RopeSpec& spec, std::size_t n) {
  std::vector<std::int64_t> p = iota_positions(n);
  if (posenc::position_axes(spec) == 1) return p;
  p.resize(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = static_cast<std::int64_t>(i / 1024);
    p[n + i] = static_cast<std::int64_t>(i / 32 % 32);
    p[2 * n + i] = static_cast<std::int64_t>(i % 32);
  }
  return p;
}

void set_counters(benchmark::State& st, std::size_t items, std::size_t bytes_per_iteration, std::size_t data_bytes) {
  const auto it = static_cast<std::int64_t>(st.iterations());
  st.SetItemsProcessed(it * static_cast<std::int64_t>(items));
  st.SetBytesProcessed(it * static_cast<std::int64_t>(bytes_per_iteration));
  st.SetLabel(regime_label(data_bytes));
}

[[noreturn]] void sanity_failure(const std::string& message) {
  std::fprintf(stderr, "posenc_bench: sanity check failed for %s\n", message.c_str());
  std::abort();
}

std::string fmt(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// ---- apply ------------------------------------------------------------------------------------------------
struct ApplyShape {
  std::size_t tokens, heads, d;
  std::size_t values() const { return tokens * heads * d; }
};

ApplyShape apply_shape(const benchmark::State& st) {
  return {usize(st.range(0)), usize(st.range(1)), usize(st.range(2))};
}

// Values in [-1, 1) from a hash of the index, written with `threads` threads (the split the kernels' static
// schedules use, so pages are touched by the thread that later works on them, where that matters).
template <class T>
void fill_tensor(std::span<T> x, int threads) {
  const auto n = static_cast<std::ptrdiff_t>(x.size());
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u + 0x9E3779B9u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    x[static_cast<std::size_t>(i)] = static_cast<T>(static_cast<double>(static_cast<std::int32_t>(h)) * 0x1p-31);
  }
}

// Tokens 0, T/2 and T-1 of the tensor, copied before timing, with their positions.
template <class T>
struct Sample {
  std::array<std::size_t, 3> tokens{};
  std::vector<std::int64_t> positions;  // [axes][3]: the tokens' positions (M-RoPE: rows t, h, w)
  std::vector<T> values;  // [3][heads][d]
};

template <class T>
Sample<T> take_sample(std::span<const T> x, const ApplyShape& s, std::span<const std::int64_t> positions) {
  Sample<T> out;
  out.tokens = {0, s.tokens / 2, s.tokens - 1};
  const std::size_t row = s.heads * s.d, axes = positions.size() / s.tokens;
  out.values.resize(3 * row);
  out.positions.resize(3 * axes);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t a = 0; a < axes; ++a) out.positions[a * 3 + i] = positions[a * s.tokens + out.tokens[i]];
    std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(out.tokens[i] * row), row,
                out.values.begin() + static_cast<std::ptrdiff_t>(i * row));
  }
  return out;
}

// One kernel step on a dense [3][heads][d] tensor (the sample) with the sample's positions, on one thread.
template <class T>
using Step = std::function<void(std::span<T> data, std::span<const std::int64_t> positions)>;

// Before timing: one step of the sample against a double-precision rotation by the reference cos and sin
// (`ref`'s pairs cache, in double: for the float32 regimes these are the regime's float32 values), pairs of
// `ref`'s layout. |got - want| <= (abs_tol + per_position * |p|) * (|x_i| + |x_j|) for every pair.
template <class T>
void check_one_step(const std::string& what, const ApplyShape& s, const Sample<T>& sample, const Step<T>& step,
                    const RopeSpec& ref, double abs_tol, double per_position) {
  std::vector<T> got = sample.values;
  step(got, sample.positions);
  const RopePlan plan(ref);
  const std::size_t h = posenc::pair_count(ref);
  std::vector<double> cs(2 * h);
  const std::size_t axes = posenc::position_axes(ref);
  for (std::size_t i = 0; i < 3; ++i) {
    const std::int64_t p = sample.positions[i];
    std::int64_t ps[3];
    for (std::size_t a = 0; a < axes; ++a) ps[a] = sample.positions[a * 3 + i];
    plan.cache(RopeCacheForm::pairs, std::span<const std::int64_t>(ps, axes), std::span<double>(cs));
    const double tol = abs_tol + per_position * std::fabs(static_cast<double>(p));
    for (std::size_t hd = 0; hd < s.heads; ++hd) {
      const std::size_t base = (i * s.heads + hd) * s.d;
      for (std::size_t k = 0; k < h; ++k) {
        const std::size_t ci = base + posenc::first_channel(ref, k), cj = base + posenc::second_channel(ref, k);
        const double xi = sample.values[ci], xj = sample.values[cj], c = cs[k], sn = cs[h + k];
        const double want_i = xi * c - xj * sn, want_j = xj * c + xi * sn;
        const double bound = tol * (std::fabs(xi) + std::fabs(xj));
        const double di = std::fabs(static_cast<double>(got[ci]) - want_i);
        const double dj = std::fabs(static_cast<double>(got[cj]) - want_j);
        if (!(di <= bound) || !(dj <= bound))  // also catches NaN
          sanity_failure(fmt("%s (T %zu, heads %zu, d %zu): one rotation of token %zu (position %" PRId64
                             "), head %zu, pair %zu (channels %zu, %zu): got (%.9g, %.9g), a rotation by %s cos/sin "
                             "gives (%.9g, %.9g), bound %.3g",
                             what.c_str(), s.tokens, s.heads, s.d, sample.tokens[i], p, hd, k, ci - base, cj - base,
                             static_cast<double>(got[ci]), static_cast<double>(got[cj]),
                             posenc::describe(ref).c_str(), want_i, want_j, bound));
      }
    }
  }
}

// After timing: the sample, put through `step` as many times as the timed loop ran, equals the timed tensor's
// tokens bit for bit, and every head vector kept its norm.
template <class T>
void check_replay(const std::string& what, const ApplyShape& s, const Sample<T>& sample, const Step<T>& step,
                  std::span<const T> x, std::int64_t iterations) {
  std::vector<T> want = sample.values;
  for (std::int64_t i = 0; i < iterations; ++i) step(want, sample.positions);
  const std::size_t row = s.heads * s.d;
  const double norm_tol = 1e-3 + static_cast<double>(iterations) * 0x1p-21;
  for (std::size_t i = 0; i < 3; ++i) {
    const T* got = x.data() + sample.tokens[i] * row;
    for (std::size_t c = 0; c < row; ++c)
      if (std::memcmp(&got[c], &want[i * row + c], sizeof(T)) != 0)
        sanity_failure(fmt("%s (T %zu, heads %zu, d %zu): after %" PRId64 " timed iterations, token %zu (position %" PRId64
                           "), head %zu, channel %zu is %.17g (%a); the same kernel replayed on a copy of the token "
                           "gives %.17g (%a)",
                           what.c_str(), s.tokens, s.heads, s.d, iterations, sample.tokens[i], sample.positions[i],
                           c / s.d, c % s.d, static_cast<double>(got[c]), static_cast<double>(got[c]),
                           static_cast<double>(want[i * row + c]), static_cast<double>(want[i * row + c])));
    for (std::size_t hd = 0; hd < s.heads; ++hd) {
      double n0 = 0, n1 = 0;
      for (std::size_t c = 0; c < s.d; ++c) {
        const double a = sample.values[i * row + hd * s.d + c], b = got[hd * s.d + c];
        n0 += a * a;
        n1 += b * b;
      }
      n0 = std::sqrt(n0);
      n1 = std::sqrt(n1);
      if (!(std::fabs(n1 - n0) <= norm_tol * n0))
        sanity_failure(fmt("%s (T %zu, heads %zu, d %zu): after %" PRId64 " timed iterations, token %zu (position %" PRId64
                           "), head %zu has norm %.9g, it started at %.9g (relative change %.3g > %.3g)",
                           what.c_str(), s.tokens, s.heads, s.d, iterations, sample.tokens[i], sample.positions[i], hd,
                           n1, n0, std::fabs(n1 - n0) / n0, norm_tol));
    }
  }
}

// The timed loop and both checks, for any in-place kernel. `timed` runs one iteration on the whole tensor.
template <class T>
void run_apply(benchmark::State& st, const std::string& what, const Step<T>& step, const RopeSpec& ref,
               double abs_tol, double per_position, const std::function<void(std::span<T>)>& timed) {
  const ApplyShape s = apply_shape(st);
  const int threads = static_cast<int>(st.range(3));
  const std::span<T> x = scratch_span<T>(0, s.values());
  const std::vector<std::int64_t> positions = cache_positions(ref, s.tokens);
  fill_tensor(x, threads);
  const Sample<T> sample = take_sample<T>(x, s, positions);
  try {
    check_one_step(what, s, sample, step, ref, abs_tol, per_position);
    for (auto _ : st) {
      timed(x);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  check_replay<T>(what, s, sample, step, x, static_cast<std::int64_t>(st.iterations()));
  set_counters(st, s.values(), 2 * s.values() * sizeof(T), s.values() * sizeof(T));
}

RopeSpec exact_spec(Layout layout) {
  return RopeSpec{.layout = layout, .regime = RopeRegime::exact, .head_dim = usize(kHeadDim),
                  .rotary_dim = usize(kRotaryDim)};
}
// A YaRN-extended spec (factor 4 from an 8192-token context), to show that a scaling costs the apply kernel
// nothing per element (cos/sin are formed once per token). Its attention factor is given as 1: the benchmark
// rotates the same tensor again every iteration, and m^iterations would overflow (a computed m = 1.139 costs
// two multiplies per pair per token, not per element).
RopeSpec yarn_spec(RopeSpec s) {
  s.scaling = posenc::RopeScaling::yarn;
  s.factor = 4.0;
  s.original_context = 8192;
  s.attention_factor = 1.0;
  return s;
}

// Qwen2-VL's M-RoPE (sections [16, 24, 24] for head_dim 128) on the image-grid positions of cache_positions: three
// angles per token and pair instead of one, reused for all heads.
RopeSpec mrope_spec(RopeSpec s) {
  s.mrope = posenc::RopeMrope::sections;
  s.mrope_section = {16, 24, 24};
  return s;
}

// Cache variants under the context extensions and relatives (exact regime, full rotary 128, half-split):
//   yarn: factor 4 from 8192, the computed attention factor m = 0.1 ln 4 + 1 multiplying cos and sin;
//   longrope: Phi-3.5-like factors (short 1 + k/64, long 1 + k/2), the long ones (seq_len > L0), m computed;
//   xpos: query scale zeta_k^((p - c)/512) with c = n/2 (the middle of the table, torchscale's centring);
//   mrope: Qwen2-VL sections [16, 24, 24] over the grid positions of cache_positions.
RopeSpec cache_variant_spec(const std::string& v, std::size_t n) {
  RopeSpec s = exact_spec(Layout::halves);
  if (v == "yarn") {
    s = yarn_spec(s);
    s.attention_factor = 0.0;
  } else if (v == "longrope") {
    s.scaling = posenc::RopeScaling::longrope;
    s.factor = 32.0;
    s.original_context = 4096;
    s.seq_len = 131072;
    for (std::size_t k = 0; k < usize(kRotaryDim) / 2; ++k) {
      s.short_factor.push_back(1.0 + static_cast<double>(k) / 64.0);
      s.long_factor.push_back(1.0 + static_cast<double>(k) / 2.0);
    }
  } else if (v == "xpos") {
    s.xpos = posenc::RopeXpos::query;
    s.xpos_scale_base = 512.0;
    s.xpos_center = static_cast<std::int64_t>(n / 2);
  } else if (v == "mrope") {
    s = mrope_spec(s);
  }
  return s;
}

// posenc's rotation (RopePlan::apply). One rotation against the plan's own cos/sin in double: the exact regime
// rounds once (<= 2^-24 of |x_i| + |x_j| in f32), the float32 regimes round three times in float32.
template <class T>
void bm_apply(benchmark::State& st, const RopeSpec& spec, const std::string& what) {
  const ApplyShape s = apply_shape(st);
  const int threads = static_cast<int>(st.range(3));
  std::optional<RopePlan> plan;
  try {
    if (spec.head_dim != s.d || spec.rotary_dim != s.d) throw std::invalid_argument("spec head_dim != d");
    plan.emplace(spec);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const std::vector<std::int64_t> positions = cache_positions(spec, s.tokens);  // M-RoPE: an image grid
  const posenc::TableOptions opt{.threads = threads};
  const std::size_t axes = posenc::position_axes(spec);
  const Step<T> step = [&](std::span<T> data, std::span<const std::int64_t> pos) {
    plan->apply(posenc::dense_rope_tensor(data, pos.size() / axes, s.heads, s.d), pos, posenc::RopeDirection::forward,
                posenc::TableOptions{.threads = 1});
  };
  const double tol = sizeof(T) == 4 ? 0x1p-22 : 0x1p-50;
  run_apply<T>(st, what, step, spec, tol, 0.0, [&](std::span<T> x) {
    plan->apply(posenc::dense_rope_tensor(x, s.tokens, s.heads, s.d), positions, posenc::RopeDirection::forward, opt);
  });
}

// The user's HF-style loop. Its inv_freq (powf) and angle (float32 product) differ from the hf-llama plan's by a
// few ulps, i.e. an angle error growing like p * eps: the guard grows with the position (gross errors only).
template <class T>
void bm_plainloop(benchmark::State& st, const std::string& what) {
  const ApplyShape s = apply_shape(st);
  const int threads = static_cast<int>(st.range(3));
  std::vector<T> inv;
  if constexpr (sizeof(T) == 4) inv = plainloop_inv_freq_f32(s.d);
  else inv = plainloop_inv_freq_f64(s.d);
  const std::vector<std::int64_t> positions = iota_positions(s.tokens);
  const Step<T> step = [&](std::span<T> data, std::span<const std::int64_t> pos) {
    plainloop_rope_halves(std::span<const T>(inv), pos, s.heads, data.data(), 1);
  };
  const double eps = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  RopeSpec ref;
  try {
    ref = sizeof(T) == 4 ? posenc::rope_preset("hf-llama", s.d) : exact_spec(Layout::halves);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  run_apply<T>(st, what, step, ref, 16 * eps, 8 * eps, [&](std::span<T> x) {
    plainloop_rope_halves(std::span<const T>(inv), positions, s.heads, x.data(), threads);
  });
}

// Read-modify-write of the same bytes: x = x * (-1) + 0, exactly -x, so the replay is exact too. It is no rotation:
// only the replay and norm checks apply.
template <class T>
void bm_rmw(benchmark::State& st) {
  const ApplyShape s = apply_shape(st);
  const int threads = static_cast<int>(st.range(3));
  const std::span<T> x = scratch_span<T>(0, s.values());
  const std::vector<std::int64_t> positions = iota_positions(s.tokens);
  fill_tensor(x, threads);
  const Sample<T> sample = take_sample<T>(x, s, positions);
  const T a = T(-1), b = T(0);
  for (auto _ : st) {
    read_modify_write(x.data(), x.size(), a, b, threads);
    benchmark::ClobberMemory();
  }
  const Step<T> step = [&](std::span<T> data, std::span<const std::int64_t>) {
    read_modify_write(data.data(), data.size(), a, b, 1);
  };
  check_replay<T>(sizeof(T) == 4 ? "apply/rmw_f32" : "apply/rmw_f64", s, sample, step, x,
                  static_cast<std::int64_t>(st.iterations()));
  set_counters(st, s.values(), 2 * s.values() * sizeof(T), s.values() * sizeof(T));
}

// ---- cache ------------------------------------------------------------------------------------------------
void bm_cache(benchmark::State& st, const RopeSpec& spec, RopeCacheForm form, const std::string& what) {
  const std::size_t n = usize(st.range(0)), w = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  std::optional<RopePlan> plan;
  try {
    plan.emplace(spec);
    if (posenc::cache_values_per_position(spec, form) != w) throw std::invalid_argument("w != values per position");
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const std::vector<std::int64_t> positions = cache_positions(spec, n);
  const std::span<float> out = scratch_span<float>(0, n * w);
  const posenc::TableOptions opt{.threads = threads};
  try {
    for (auto _ : st) {
      plan->cache(form, positions, out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  // Rows 0, n/2, n-1 against the single-position cache, bit for bit (the pairs form is a row; the hf form's
  // row i is cos block row i followed by sin block row i).
  const std::size_t r = w / 2;
  std::vector<float> one(w);
  const std::size_t axes = posenc::position_axes(spec);
  for (std::size_t i : {std::size_t{0}, n / 2, n - 1}) {
    std::int64_t ps[3];
    for (std::size_t a = 0; a < axes; ++a) ps[a] = positions[a * n + i];
    const std::int64_t p = ps[0];
    plan->cache(form, std::span<const std::int64_t>(ps, axes), std::span<float>(one));
    for (std::size_t j = 0; j < w; ++j) {
      const std::size_t at = form == RopeCacheForm::hf ? (j < r ? i * r + j : n * r + i * r + (j - r)) : i * w + j;
      if (std::memcmp(&out[at], &one[j], sizeof(float)) != 0)
        sanity_failure(fmt("%s (T %zu, w %zu): position %" PRId64 ", value %zu of its row (element %zu of the "
                           "output) is %.9g (%a); RopePlan::cache of that position alone gives %.9g (%a)",
                           what.c_str(), n, w, p, j, at, static_cast<double>(out[at]), static_cast<double>(out[at]),
                           static_cast<double>(one[j]), static_cast<double>(one[j])));
    }
  }
  set_counters(st, n * w, n * w * sizeof(float), n * w * sizeof(float));
}

void bm_cache_store(benchmark::State& st, bool non_temporal) {
  const std::size_t n = usize(st.range(0)), w = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const std::size_t bytes = n * w * sizeof(float);
  void* out = scratch(0, bytes);
  for (auto _ : st) {
    if (non_temporal) stream_store(out, bytes, threads);
    else plain_store(out, bytes, threads);
    benchmark::ClobberMemory();
  }
  set_counters(st, n * w, bytes, bytes);
}

// ---- scores: rotate + gemm vs the plain gemm of the same shape ------------------------------------------------
// scores/exact_halves_f32/L:<L>/d:<d>: RopePlan::scores (copies, rotations, cblas_sgemm L x L x d); sgemm: the
// Q K^T of the same shape without rotation (the target: <= 1.1x its time). Sanity: one score against the
// dot product of the separately rotated vectors (a gross-error guard, not an accuracy claim).
void bm_scores(benchmark::State& st, bool rotate) {
  const auto L = usize(st.range(0)), d = usize(st.range(1));
  std::vector<float> q(L * d), k(L * d), out(L * L);
  for (std::size_t i = 0; i < q.size(); ++i) {
    q[i] = std::sin(0.37f * static_cast<float>(i % 9973));
    k[i] = std::cos(0.29f * static_cast<float>(i % 9967));
  }
  std::vector<std::int64_t> pos(L);
  for (std::size_t i = 0; i < L; ++i) pos[i] = static_cast<std::int64_t>(i);
  const posenc::RopePlan plan(exact_spec(Layout::halves));  // head_dim kHeadDim = d
  for (auto _ : st) {
    if (rotate) plan.scores(std::span<const float>(q), pos, std::span<const float>(k), pos, std::span<float>(out));
    else sgemm_abt(L, L, d, q.data(), k.data(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  if (rotate) {
    const std::size_t i = L / 3, j = L / 2;
    std::vector<double> qi(q.begin() + static_cast<std::ptrdiff_t>(i * d), q.begin() + static_cast<std::ptrdiff_t>(i * d + d));
    std::vector<double> kj(k.begin() + static_cast<std::ptrdiff_t>(j * d), k.begin() + static_cast<std::ptrdiff_t>(j * d + d));
    const std::int64_t pi[] = {pos[i]}, pj[] = {pos[j]};
    plan.apply(posenc::dense_rope_tensor(std::span<double>(qi), 1, 1, d), pi);
    plan.apply(posenc::dense_rope_tensor(std::span<double>(kj), 1, 1, d), pj);
    double dot = 0, mag = 0;
    for (std::size_t c = 0; c < d; ++c) dot += qi[c] * kj[c], mag += std::fabs(qi[c] * kj[c]);
    if (!(std::fabs(out[i * L + j] - dot) <= 1e-4 * (mag + 1))) {
      std::fprintf(stderr, "rope/scores sanity: scores[%zu][%zu] = %.9g, rotated dot product %.9g\n", i, j,
                   static_cast<double>(out[i * L + j]), dot);
      std::abort();
    }
  }
  st.counters["flops"] = benchmark::Counter(2.0 * static_cast<double>(L * L * d), benchmark::Counter::kIsIterationInvariantRate);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(L * L));
}

// ---- registration -----------------------------------------------------------------------------------------
const Registrar kReg{"rope", benchmark::kMicrosecond};  // "rope/<family>/<variant>/<key>:<value>..."

template <class Fn>
void add_apply(const std::string& variant, std::int64_t tokens, Fn&& fn) {
  kReg.per_thread("apply/" + variant, {"T", "heads", "head_dim"}, {tokens, kHeads, kHeadDim}, std::forward<Fn>(fn));
}

template <class Fn>
void add_cache(const std::string& variant, std::int64_t tokens, std::int64_t w, Fn&& fn) {
  kReg.per_thread("cache/" + variant, {"T", "w"}, {tokens, w}, std::forward<Fn>(fn));
}

// The apply family at one token count (f64 only at the first, smaller one).
void register_apply(std::int64_t tokens, bool with_f64) {
  struct Kernel {
    const char* variant;
    RopeSpec (*spec)();
  };
  static constexpr Kernel kKernels[] = {
      {"exact_halves_f32", [] { return exact_spec(Layout::halves); }},
      {"exact_interleaved_f32", [] { return exact_spec(Layout::interleaved); }},
      {"hf_halves_f32", [] { return posenc::rope_preset("hf-llama", usize(kHeadDim)); }},
      {"ggml_interleaved_f32", [] { return posenc::rope_preset("ggml-normal", usize(kHeadDim)); }},
      {"exact_halves_yarn_f32", [] { return yarn_spec(exact_spec(Layout::halves)); }},
      {"hf_halves_yarn_f32", [] { return yarn_spec(posenc::rope_preset("hf-llama", usize(kHeadDim))); }},
      {"exact_halves_mrope_f32", [] { return mrope_spec(exact_spec(Layout::halves)); }},
      {"hf_halves_mrope_f32", [] { return mrope_spec(posenc::rope_preset("hf-llama", usize(kHeadDim))); }},
  };
  for (const Kernel& k : kKernels) {
    const RopeSpec spec = k.spec();
    const std::string what = std::string("apply/") + k.variant;
    add_apply(k.variant, tokens, [spec, what](benchmark::State& st) { bm_apply<float>(st, spec, what); });
  }
  add_apply("rmw_f32", tokens, [](benchmark::State& st) { bm_rmw<float>(st); });
  add_apply("plainloop_f32", tokens, [](benchmark::State& st) { bm_plainloop<float>(st, "apply/plainloop_f32"); });
  if (with_f64) {
    const RopeSpec spec = exact_spec(Layout::halves);
    add_apply("exact_halves_f64", tokens,
              [spec](benchmark::State& st) { bm_apply<double>(st, spec, "apply/exact_halves_f64"); });
    add_apply("rmw_f64", tokens, [](benchmark::State& st) { bm_rmw<double>(st); });
    add_apply("plainloop_f64", tokens,
              [](benchmark::State& st) { bm_plainloop<double>(st, "apply/plainloop_f64"); });
  }
}

// exact_{pairs,hf}_<variant>_f32 for every variant of cache_variant_spec: pairs at pairs_t positions, hf at hf_t
// (xPos: the hf form only at DRAM size, where 2^20 positions around the centre would pass 553 scale_base).
void register_cache_variants(std::int64_t pairs_t, std::int64_t hf_t) {
  for (const char* v : {"yarn", "longrope", "xpos", "mrope"})
    for (const RopeCacheForm form : {RopeCacheForm::pairs, RopeCacheForm::hf}) {
      const bool pairs = form == RopeCacheForm::pairs;
      const std::int64_t t = pairs ? pairs_t : hf_t;
      if (std::string(v) == "xpos" && t > (std::int64_t{1} << 19)) continue;
      const std::string name = std::string("exact_") + (pairs ? "pairs_" : "hf_") + v + "_f32";
      const RopeSpec spec = cache_variant_spec(v, usize(t));
      add_cache(name, t, pairs ? kRotaryDim : 2 * kRotaryDim,
                [spec, form, name](benchmark::State& st) { bm_cache(st, spec, form, "cache/" + name); });
    }
}

POSENC_BENCH_SCHEME(rope) {
  // Output / tensor sizes: pairs form 128 values per position, hf form 256 (two blocks of rotary_dim).
  constexpr std::int64_t kPairsW = kRotaryDim, kHfW = 2 * kRotaryDim;
  constexpr std::int64_t kCacheT = 1024;                 // 512 KiB pairs, 1 MiB hf: private-L2 sized
  constexpr std::int64_t kDramPairsT = std::int64_t{1} << 20;  // 512 MiB
  constexpr std::int64_t kDramHfT = std::int64_t{1} << 19;     // 512 MiB
  static_assert(usize(kCacheT * kHfW) * sizeof(float) <= kCacheMaxBytes);
  static_assert(usize(kDramPairsT * kPairsW) * sizeof(float) >= kDramMinBytes);
  static_assert(usize(kDramHfT * kHfW) * sizeof(float) >= kDramMinBytes);

  const std::int64_t small_t = cases::kBenchTokens[0], large_t = cases::kBenchTokens[1];
  const std::size_t tensor_bytes = usize(kHeads * kHeadDim) * sizeof(float);

  // Smaller working sets first, DRAM last: the 512 MiB buffer (scratch slot 0) is allocated once.
  register_apply(small_t, true);
  add_cache("exact_pairs_f32", kCacheT, kPairsW,
            [](benchmark::State& st) { bm_cache(st, exact_spec(Layout::halves), RopeCacheForm::pairs, "cache/exact_pairs_f32"); });
  add_cache("exact_hf_f32", kCacheT, kHfW,
            [](benchmark::State& st) { bm_cache(st, exact_spec(Layout::halves), RopeCacheForm::hf, "cache/exact_hf_f32"); });
  register_cache_variants(kCacheT, kCacheT);
  for (std::int64_t w : {kPairsW, kHfW}) {
    add_cache("stream_store_f32", kCacheT, w, [](benchmark::State& st) { bm_cache_store(st, true); });
    add_cache("store_f32", kCacheT, w, [](benchmark::State& st) { bm_cache_store(st, false); });
  }

  for (const char* v : {"exact_halves_f32", "sgemm"}) {
    auto* b = kReg.add(std::string("scores/") + v, [rotate = std::string(v) != "sgemm"](benchmark::State& st) { bm_scores(st, rotate); });
    b->ArgNames({"L", "d"})->Args({4096, kHeadDim});
  }

  register_apply(large_t, false);
  add_cache("exact_pairs_f32", kDramPairsT, kPairsW,
            [](benchmark::State& st) { bm_cache(st, exact_spec(Layout::halves), RopeCacheForm::pairs, "cache/exact_pairs_f32"); });
  add_cache("stream_store_f32", kDramPairsT, kPairsW, [](benchmark::State& st) { bm_cache_store(st, true); });
  add_cache("exact_hf_f32", kDramHfT, kHfW,
            [](benchmark::State& st) { bm_cache(st, exact_spec(Layout::halves), RopeCacheForm::hf, "cache/exact_hf_f32"); });
  add_cache("stream_store_f32", kDramHfT, kHfW, [](benchmark::State& st) { bm_cache_store(st, true); });
  register_cache_variants(kDramPairsT, kDramHfT);

  return "rope: apply T:" + std::to_string(small_t) + " (" + format_bytes(usize(small_t) * tensor_bytes) + " f32, " +
         format_bytes(usize(small_t) * tensor_bytes * 2) +
         " f64) is kept although it lies in the L3 range (label l3: the size the issue names), T:" +
         std::to_string(large_t) + " (" + format_bytes(usize(large_t) * tensor_bytes) +
         ") f32 only, heads:" + std::to_string(kHeads) + "/head_dim:" + std::to_string(kHeadDim) +
         "; cache keeps T:" + std::to_string(kCacheT) + " (pairs " + format_bytes(usize(kCacheT * kPairsW) * 4) +
         ", hf " + format_bytes(usize(kCacheT * kHfW) * 4) + ") and 512 MiB (pairs T:" + std::to_string(kDramPairsT) +
         ", hf T:" + std::to_string(kDramHfT) + "); store_f32 only at cache size";
}

}  // namespace
}  // namespace posenc_bench
