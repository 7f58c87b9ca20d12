// posenc/rope.hpp — fast rotary position embedding: frequencies, cos/sin caches, in-place rotation.
//
// Plans
//   RopePlan plan = make_plan(spec) validates the spec once and precomputes what depends only on it (the exact
//   frequencies in double-double and the angle core's in-block table; the float32 frequencies of the hf and ggml
//   regimes). A plan is immutable and safe to use from several threads; copies share the precomputed data.
//
// Values (definition and regimes: posenc/rope_spec.hpp). For position p and pair k the plan computes
//   exact: cos and sin of p * theta_k through the shared angle core (lib/src/core/angle_table.hpp), each within
//          ~4.5 * 2^-53 absolute in double, then rounded once to the output type;
//   hf, ggml: the float32 angle of the named implementation, then cos and sin of that float32 angle correctly
//          rounded to float32 (a double result that is not provably on one side of a float32 rounding boundary
//          is recomputed in binary128);
//   roformer: HF RoFormer's float64 numpy table: the double angle RN64(p / w_k), w_k = RN64(base^RN64(2k/r)), its
//          cos and sin correctly rounded to double and then to float32 (two roundings, as np.cos then
//          torch.FloatTensor; the angle core's double sin/cos settles them, binary128 near a float32 boundary).
//   Emulated values are bit for bit the oracle's correctly rounded steps (budget rows rope.cache.emulated.bitwise,
//   rope.cache.roformer.bitwise); real implementations' libm calls are not correctly rounded, so a real cache lies
//   within the envelope of rows rope.check.envelope / rope.check.roformer.envelope instead (posenc check rope).
// Under a scaling (RopeSpec::scaling; definitions in posenc/rope_spec.hpp) theta'_k replaces theta_k: exact regime,
// the real theta'_k (from binary128, within ~2^-100 relative) through the same angle core, and cos, sin times the
// real attention factor m (YaRN; the product formed in double, then rounded once: budget rows rope.*.attention);
// hf regime, HF's float32 inv_freq' and RN32(cos * RN32(m)); ggml regime, freq_scale times theta (linear only).
// Every value a position gets is the same in every call, cache form, token order and thread count (claim
// ROPE-REPRO-1): positions are independent, and the angle core's anchors sit at fixed multiples.
//
// Caches (RopeCacheForm), for a list of positions, row per position, in the forms engines use:
//   pairs: [cos_0 .. cos_{h-1} | sin_0 .. sin_{h-1}]        (h = rotary_dim/2; 2h values per row)
//   hf:    two blocks, cos then sin, each rows x rotary_dim: [c | c] and [s | s]  (HF LlamaRotaryEmbedding)
//   gptj:  [sin_0 .. sin_{h-1} | cos_0 .. cos_{h-1}]         (HF GPT-J embed_positions, split then repeat_interleave)
//   ggml:  [cos_0, sin_0, cos_1, sin_1, ...]                  (ggml_rope_cache_init)
//
// M-RoPE (spec.mrope sections | interleaved): every position list holds three rows, t then h then w, of one
// position per token each (HF's position_ids (3, L)); a cache has one row per token; pair k takes the position of
// its axis (rope_spec.hpp), so its values are the 1-D ones at that position, bit for bit (claim ROPE-MROPE-1).
//
// xPos (spec.xpos query | key): cos and sin of pair k at position p carry the decay scale x_{p,k} (rope_spec.hpp):
// exact, the real m x_{p,k} rounded once to double times cos (budget rows rope.*.attention with S the least power
// of two >= the scale); hf, torchscale's float32 steps. Rotate queries with a query spec and keys with a key spec.
//
// Application, in place. A RopeTensor is a view of [tokens][heads][head_dim] values inside a caller's buffer,
// with element strides between tokens and between heads (so Q and K of a fused QKV buffer are rotated where
// they lie; a K view with fewer heads than Q gives grouped-query attention). positions[t] is token t's position
// (offsets, packed sequences that restart, left padding: any integers with |p| <= 2^40). Direction::inverse
// applies R(-p) = R(p)^T. shift(x, delta) rotates every token by delta: llama.cpp's K-shift of cached keys, as
// one rotation by delta (not an un-rotation and re-rotation). Channels >= rotary_dim are never written.
//   Arithmetic: exact regime, y = x_i c - x_j s in double with c, s of the exact regime (one fma, one product),
//   rounded once to T; hf/ggml/roformer regimes, T arithmetic with the regime's float32 c and s, two products and
//   one sum each rounded (as eager PyTorch and ggml's C evaluate them; the library is built with -ffp-contract=off
//   so the compiler does not fuse them).
//   Accuracy contract: budget rows rope.* (schemes/rope/budget.hpp).
//
// Every function validates what it is given (spec, positions, view shapes and strides against the buffer's
// size, output sizes) and throws posenc::Error naming the parameter; nothing is read or written outside the
// spans passed in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/half.hpp"
#include "posenc/options.hpp"
#include "posenc/rope_spec.hpp"

namespace posenc {

enum class RopeCacheForm { pairs, hf, gptj, ggml };

template <>
struct EnumTraits<RopeCacheForm> {
  static constexpr std::array<EnumValue<RopeCacheForm>, 4> values{{
      {RopeCacheForm::pairs, "pairs", "[cos_0..cos_{h-1} | sin_0..sin_{h-1}] per position"},
      {RopeCacheForm::hf, "hf", "cos block [c | c] then sin block [s | s] (HF LlamaRotaryEmbedding)"},
      {RopeCacheForm::gptj, "gptj", "[sin | cos] per position (HF GPT-J embed_positions)"},
      {RopeCacheForm::ggml, "ggml", "[cos_0, sin_0, cos_1, sin_1, ...] per position (ggml_rope_cache_init)"},
  }};
};

// Values per position of a cache form: 2h for pairs, gptj and ggml; 2 * rotary_dim for hf (two blocks).
std::size_t cache_values_per_position(const RopeSpec&, RopeCacheForm);

enum class RopeDirection { forward, inverse };

// [tokens][heads][head_dim] inside `data`: element (t, h, c) at data[t * token_stride + h * head_stride + c].
template <class T>
struct RopeTensor {
  std::span<T> data;
  std::size_t tokens = 0, heads = 1;
  std::size_t token_stride = 0, head_stride = 0;  // in elements
};

// A dense [tokens][heads][head_dim] view of `data` (strides heads * head_dim and head_dim).
template <class T>
RopeTensor<T> dense_rope_tensor(std::span<T> data, std::size_t tokens, std::size_t heads, std::size_t head_dim) {
  return RopeTensor<T>{data, tokens, heads, heads * head_dim, head_dim};
}

class RopePlan {
 public:
  explicit RopePlan(const RopeSpec& spec);
  const RopeSpec& spec() const noexcept;

  // theta_k (k < h) as the fast path uses them: exact regime, the real theta_k rounded to double; hf, the
  // float32 inv_freq; ggml, the float32 theta_k of position 1 (scale^k accumulated by repeated multiplication);
  // roformer, the float64 angle of position 1, RN64(1 / w_k).
  std::span<const double> frequencies() const noexcept;
  // The attention factor m that multiplies cos and sin (1 unless scaling is yarn or longrope; scores then scale
  // by m^2):
  // exact regime, the real m rounded to double; hf, HF's Python double (the caches multiply by RN32(m)).
  double attention_factor() const noexcept;
  // How the scaling treated pair k (exact mathematics, whatever the regime): the weight w_k of the interpolated
  // frequency in theta'_k = (1 - w_k) theta_k + w_k theta_k / factor. linear: 1; yarn: the ramp; llama3: 0 kept,
  // 1 divided, in between smoothed; none, ntk, dynamic: 0 (they change the base instead); longrope: 0 (it
  // divides theta_k by its own factor per pair, which frequencies() against the unscaled ones shows).
  std::span<const double> interpolation() const noexcept;
  // M-RoPE (spec.mrope not none): the position row pair k takes, 0 t, 1 h, 2 w (rope_spec.hpp); else empty.
  std::span<const std::uint8_t> pair_axes() const noexcept;

  // Caches for `positions` (row per position, cache_values_per_position values each; the hf form writes the
  // cos block of all rows, then the sin block). Through the shared table writer (lib/src/core/table_writer.hpp):
  // runs of consecutive positions as ranges, streaming stores for outputs above 4 MiB unless
  // TableOptions::streaming_stores is false (the values are the same either way).
  void cache(RopeCacheForm, std::span<const std::int64_t> positions, std::span<float> out, const TableOptions& = {}) const;
  void cache(RopeCacheForm, std::span<const std::int64_t> positions, std::span<double> out, const TableOptions& = {}) const;

  // Rotate in place. Every view must have positions.size() tokens; cos/sin are computed once per token and
  // used for every head of every view.
  void apply(std::span<const RopeTensor<float>> views, std::span<const std::int64_t> positions,
             RopeDirection = RopeDirection::forward, const TableOptions& = {}) const;
  void apply(std::span<const RopeTensor<double>> views, std::span<const std::int64_t> positions,
             RopeDirection = RopeDirection::forward, const TableOptions& = {}) const;
  void apply(const RopeTensor<float>& x, std::span<const std::int64_t> positions,
             RopeDirection d = RopeDirection::forward, const TableOptions& o = {}) const {
    apply(std::span<const RopeTensor<float>>(&x, 1), positions, d, o);
  }
  void apply(const RopeTensor<double>& x, std::span<const std::int64_t> positions,
             RopeDirection d = RopeDirection::forward, const TableOptions& o = {}) const {
    apply(std::span<const RopeTensor<double>>(&x, 1), positions, d, o);
  }
  // bf16 / f16 data (posenc/half.hpp), rotated in place with the arithmetic in f32 or better and one rounding back:
  // exact regime, the double rotation above rounded once to the 16-bit type; hf/ggml regimes, the float32 steps on
  // the widened values, rounded once to the 16-bit type (the "bf16/f16 in and out, arithmetic in f32"; HF
  // itself computes x * cos + rotate_half(x) * sin in bf16 when the activations are bf16: not emulated here).
  void apply(std::span<const RopeTensor<bf16>> views, std::span<const std::int64_t> positions,
             RopeDirection = RopeDirection::forward, const TableOptions& = {}) const;
  void apply(std::span<const RopeTensor<f16>> views, std::span<const std::int64_t> positions,
             RopeDirection = RopeDirection::forward, const TableOptions& = {}) const;
  void apply(const RopeTensor<bf16>& x, std::span<const std::int64_t> positions,
             RopeDirection d = RopeDirection::forward, const TableOptions& o = {}) const {
    apply(std::span<const RopeTensor<bf16>>(&x, 1), positions, d, o);
  }
  void apply(const RopeTensor<f16>& x, std::span<const std::int64_t> positions,
             RopeDirection d = RopeDirection::forward, const TableOptions& o = {}) const {
    apply(std::span<const RopeTensor<f16>>(&x, 1), positions, d, o);
  }
  // Rotate every token of x by delta (|delta| <= 2^40).
  void shift(const RopeTensor<float>& x, std::int64_t delta, const TableOptions& = {}) const;
  void shift(const RopeTensor<double>& x, std::int64_t delta, const TableOptions& = {}) const;

  // Pre-softmax scores of one head (no 1/sqrt(d) scaling, no mask): scores[i * Lk + j] = <R(pq_i) q_i, R(pk_j) k_j>
  // for dense q [Lq][head_dim] and k [Lk][head_dim] (Lq = q_positions.size(), Lk = k_positions.size()). Rotates
  // copies of q and k (apply above, so the regime's values; xPos: q with the query scale, k with the key scale,
  // whichever side the spec names), then one cblas ?gemm Lq x Lk x head_dim. The rotations run on the calling
  // thread whatever TableOptions::threads says (they are 1/Lk of the gemm's work; BLAS threads: OpenBLAS's own
  // settings). Accuracy: budget row rope.scores.f32.ratio / rope.scores.f64.ratio (rotation error of each vector
  // plus gemm summation).
  void scores(std::span<const float> q, std::span<const std::int64_t> q_positions, std::span<const float> k,
              std::span<const std::int64_t> k_positions, std::span<float> scores, const TableOptions& = {}) const;
  void scores(std::span<const double> q, std::span<const std::int64_t> q_positions, std::span<const double> k,
              std::span<const std::int64_t> k_positions, std::span<double> scores, const TableOptions& = {}) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

inline RopePlan make_plan(const RopeSpec& spec) { return RopePlan(spec); }

// HF's dynamic-NTK module is stateful (CONVENTIONS.md §2.11 dynamic, §3 item 9; transformers v5
// modeling_rope_utils.dynamic_rope_update, huggingface/transformers@26892c16b782513fdf938920653228ef63a19d7d): each
// forward call takes L = max(position_ids) + 1 and
//   grows   when L > the cached length: inv_freq recomputed for L, and L cached;
//   resets  when L < max_position_embeddings after a growth: the original inv_freq, cached length back to it;
//   else    keeps the inv_freq of the last growth (not the one for this call's L).
// So a call's frequencies depend on the calls before it. RopeDynamicState replays that history: step(L) returns
// the spec the call with length L uses: the dynamic spec with seq_len = the length HF's current inv_freq was
// computed for (0 while it holds the original frequencies). Give the specs to RopePlan (any regime: the exact
// mathematics of that length, or HF's float32 steps). Equivalently: a call with L < max_context uses the original
// frequencies; otherwise those of the longest call since the last call shorter than max_context (the original
// ones when that is <= max_context) — claim ROPE-DYN-1 holds the replay to this reading.
class RopeDynamicState {
 public:
  // spec.scaling must be dynamic (Error naming "scaling"); spec.seq_len is ignored: the state starts as HF's
  // module does after __init__ (cached length max_context, the original frequencies).
  explicit RopeDynamicState(const RopeSpec& spec);
  // One forward call whose positions' maximum is seq_len - 1 (seq_len in [1, 2^40]; Error naming "seq_len").
  const RopeSpec& step(std::int64_t seq_len);
  // The spec of the last call (at construction: the original frequencies, seq_len 0).
  const RopeSpec& current() const noexcept { return current_; }
  // HF's max_seq_len_cached.
  std::int64_t cached_length() const noexcept { return cached_; }

 private:
  RopeSpec current_;
  std::int64_t cached_ = 0;
};

// ggml_rope_yarn_corr_dims (ggml-org/ggml@d99724f2 src/ggml.c) before its floor / ceil and clamps: {corr_dim(beta_fast),
// corr_dim(beta_slow)} with corr_dim(beta) = n_dims * logf(n_ctx_orig / (beta * 2 * (float)M_PI)) / (2 * logf(base)),
// every step a float32 operation correctly rounded (logf too), left to right as the C evaluates it; n_dims =
// rotary_dim, n_ctx_orig = original_context, base and beta rounded to float. The ggml regime's YaRN ramp runs from
// max(0, floor(first)) to min(n_dims - 1, ceil(second)). Validates the spec (Error naming the field).
std::array<float, 2> rope_ggml_yarn_corr_dims(const RopeSpec&);

// One-shot forms.
std::vector<double> rope_frequencies(const RopeSpec&);
void rope_apply(const RopeSpec&, const RopeTensor<float>& x, std::span<const std::int64_t> positions,
                RopeDirection = RopeDirection::forward, const TableOptions& = {});
void rope_apply(const RopeSpec&, const RopeTensor<double>& x, std::span<const std::int64_t> positions,
                RopeDirection = RopeDirection::forward, const TableOptions& = {});

}  // namespace posenc
