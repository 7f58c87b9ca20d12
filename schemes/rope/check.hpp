// schemes/rope/check.hpp — `posenc check rope`: a user's cos/sin cache, or a user's rotated tensor, held to the
// budget table (exact mathematics) and to the emulation envelope of the HF / ggml float32 steps
// (verify/check_report.hpp).
// No test framework: the CLI links it (through posenc_verify) and the properties test it (ROPE-CHECK-*).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "posenc/rope.hpp"
#include "verify/check_report.hpp"
#include "verify/identify.hpp"

namespace posenc::verify::rope {

// How far a real implementation's steps may be from correctly rounded ones (ulps of float32; roformer: ulps of
// float64, numpy's np.power / np.cos / np.sin before the float32 cast).
//   pow_ulps:  torch's float32 pow / C powf (HF inv_freq, ggml theta_scale); roformer: numpy's float64 pow;
//   trig_ulps: float32 cos / sin of the float32 angle (glibc cosf/sinf ~1, vectorised torch/Eigen ~2); roformer:
//              float64 cos / sin of the float64 angle.
struct EnvelopeAllowance {
  double pow_ulps = 2.0;
  double trig_ulps = 2.0;
};

// The envelope E(p, k) of the regime's float32 cos/sin at position p, pair k (hf, ggml and roformer regimes): an upper
// bound of |real implementation - posenc's emulation| given the allowance; derivation in budget.cpp
// (rope.check.envelope; roformer: rope.check.roformer.envelope, frequencies32 then the float64 angles of p = 1).
// m32: the float32 attention factor the hf regime multiplies cos and sin by (RN32(RopePlan::attention_factor());
// 1 for every other scaling and regime); emulated_value is the product.
// xPos (hf): X is torchscale's float32 scale of the entry (RopeOracle::xpos_scale) and emulated_value the entry
// before it; the envelope is that of RN32(emulated_value X) (1: no xPos).
double envelope(const RopeSpec&, std::span<const double> frequencies32, std::int64_t p, std::size_t k,
                double emulated_value, const EnvelopeAllowance& = {}, double m32 = 1.0, double X = 1.0);
// The m32 of a spec (above).
double attention32(const RopeSpec&);

// A user's cache: rows x cols numbers (exact in double), stored type, form and the position of each row. The hf
// form is read as the cos block followed by the sin block (2 * positions rows of rotary_dim numbers), the other
// forms as one row of 2h numbers per position.
struct CacheInput {
  std::span<const double> values;
  std::size_t rows = 0, cols = 0;
  DType stored = DType::f32;
  RopeCacheForm form = RopeCacheForm::pairs;
  std::vector<std::int64_t> positions;  // one per position row (M-RoPE: rows t, h, w of one per position row each)
  nlohmann::ordered_json describe;      // file, shape, ... (copied into the report)
};

// Every entry against the exact value (row rope.check.exact.<stored>) and, for the hf, ggml and roformer regimes,
// against posenc's emulation within the envelope (row rope.check.envelope, rope.check.roformer.envelope); the verdict
// is held to the spec's regime.
// Throws posenc::Error naming the shape or positions when they disagree with the spec and form.
CheckReport check_cache(const RopeSpec&, const CacheInput&, const EnvelopeAllowance& = {}, int threads = 0);

// The envelope E_y of a rotated channel of the hf, ggml and roformer regimes (row rope.check.rotated.envelope): a real
// implementation of the regime's float32 steps lies within E_y of posenc's emulation, given the emulated cos/sin
// (ce, se) of pair k at p, the pair's inputs x_a, x_b and the type the data is stored in (16-bit data: HF casts
// cos/sin to it and rounds each product and the sum in it). Both channels of the pair share it.
double rotated_envelope(const RopeSpec&, std::span<const double> frequencies32, std::int64_t p, std::size_t k,
                        double ce, double se, double xa, double xb, DType stored, const EnvelopeAllowance& = {},
                        double m32 = 1.0, double X = 1.0);

// A user's rotated tensor y and the tensor x it was rotated from: [tokens][heads][head_dim] each (dense, values
// exact in double), the type y was stored in, one position per token and the direction.
struct RotatedInput {
  std::span<const double> x, y;
  std::size_t tokens = 0, heads = 1;
  DType stored = DType::f32;
  bool inverse = false;                 // y = R(-p) x
  std::vector<std::int64_t> positions;  // one per token (M-RoPE: rows t, h, w of one per token each)
  nlohmann::ordered_json describe;      // files, shapes (copied into the report)
};

// Every channel of y against the exact rotation (row rope.check.rotated.exact.<stored>, err_S with S = |x_a| +
// |x_b| of its pair) and, for the hf, ggml and roformer regimes, against posenc's emulation within the channel's envelope
// (row rope.check.rotated.envelope; x must then hold float32 numbers, as those implementations rotate). Channels
// >= rotary_dim must be x's. Throws posenc::Error naming "x", "y" or "positions" when they disagree with the spec.
CheckReport check_rotated(const RopeSpec&, const RotatedInput&, const EnvelopeAllowance& = {}, int threads = 0);

// ---- identify: which convention a cache follows ----------------------------------------------------------------

// A user's cache, as read: its values, shape and stored type, and one position per position row (0 .. n-1 unless
// the user gave them). The shape says which forms it may be in: (2, n, r) the hf form; (n, 2h) pairs, gptj or ggml.
struct IdentifyInput {
  std::span<const double> values;
  std::vector<std::size_t> shape;
  DType stored = DType::f32;
  std::vector<std::int64_t> positions;
  nlohmann::ordered_json describe;
};
// The position rows of a cache of this shape (n); throws posenc::Error naming "cache" for a shape no form has.
std::size_t identify_position_rows(const std::vector<std::size_t>& shape);

// Candidates: every preset and regime, in every form the shape allows, with rotary_dim from the shape, the base
// and a linear factor fitted to the cache's high-frequency pairs (as well as the preset's base), and, where the
// low-frequency pairs turn slower than that base predicts, llama3 and yarn with the factor they show and the common
// original contexts; ranked by posenc's own cache on up to `sample_rows` rows, the best checked (verify/identify.hpp).
// head_dim is not in a cache: the report's specs give the preset's head_dim when its rotary_dim is the cache's,
// else rotary_dim; neither counts as a difference.
using Identification = verify::Identification<RopeSpec, RopeCacheForm>;
Identification identify_cache(const IdentifyInput&, std::size_t sample_rows = 64);

}  // namespace posenc::verify::rope
