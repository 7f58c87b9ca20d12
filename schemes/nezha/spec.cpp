#include "posenc/nezha_spec.hpp"

#include <array>

namespace posenc {
namespace {

// CONVENTIONS.md §2.4. HF NEZHA read at huggingface/transformers@553b10dee9165d805cff0f859e0cdc3adeebf73d:
// src/transformers/models/deprecated/nezha/modeling_nezha.py (NezhaRelativePositionsEncoding: final_mat =
// clamp(range_mat - range_mat^T, -K, K) + K, embeddings_table[:, 0::2] = sin(position * div_term), [:, 1::2] = cos,
// div_term = exp(arange(0, depth, 2).float() * (-math.log(10000.0) / depth)); NezhaSelfAttention: q.T added to the
// scores before / sqrt(attention_head_size), probs.T added to the context) and configuration_nezha.py
// (max_relative_position = 64, hidden_size 768, num_attention_heads 12: depth 64; the checkpoint of its docs,
// sijunhe/nezha-cn-base).
constexpr NezhaSpec kCnBase{.max_relative_position = 64, .depth = 64, .regime = NezhaRegime::hf};

constexpr std::array<Preset<NezhaSpec>, 1> kNezhaPresets{{
    {"nezha-cn-base",
     "HF NEZHA (NezhaConfig defaults, sijunhe/nezha-cn-base): K = 64, depth 768 / 12 = 64, HF's float32 table",
     "transformers models/deprecated/nezha/modeling_nezha.py NezhaRelativePositionsEncoding, NezhaSelfAttention",
     "huggingface/transformers@553b10dee9165d805cff0f859e0cdc3adeebf73d", kCnBase},
}};

}  // namespace

std::span<const Preset<NezhaSpec>> SpecTraits<NezhaSpec>::presets() { return kNezhaPresets; }

ShawSpec nezha_shaw_spec(const NezhaSpec& s) {
  validate(s);
  return ShawSpec{.sign = RelativeSign::key_minus_query, .max_relative_position = s.max_relative_position,
                  .clip = true, .key_query = false, .values = true, .head_dim = s.depth};
}

SinusoidalSpec nezha_sinusoidal_spec(const NezhaSpec& s) {
  validate(s);
  SinusoidalSpec t = vaswani_spec(s.depth);
  t.regime = s.regime == NezhaRegime::hf ? Regime::emulated : Regime::exact;
  return t;
}

}  // namespace posenc
