#include "posenc/rope_spec.hpp"

#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kRopeWhere = "rope";

// CONVENTIONS.md §2.10; commits as in CONVENTIONS.md §4 (Meta Llama: the version of llama/model.py read for
// this preset, precompute_freqs_cis + apply_rotary_emb).
constexpr RopeSpec kHfLlama{.layout = Layout::halves, .regime = RopeRegime::hf, .head_dim = 128, .rotary_dim = 128};
constexpr RopeSpec kRopeGptNeox{.layout = Layout::halves, .regime = RopeRegime::hf, .head_dim = 96, .rotary_dim = 24};
constexpr RopeSpec kGptJ{.layout = Layout::interleaved, .regime = RopeRegime::hf, .head_dim = 256, .rotary_dim = 64};
constexpr RopeSpec kRoformer{.layout = Layout::interleaved, .regime = RopeRegime::roformer, .head_dim = 64, .rotary_dim = 64};
constexpr RopeSpec kMetaLlama{.layout = Layout::interleaved, .regime = RopeRegime::hf, .head_dim = 128, .rotary_dim = 128};
constexpr RopeSpec kGgmlNormal{.layout = Layout::interleaved, .regime = RopeRegime::ggml, .head_dim = 128, .rotary_dim = 128};
constexpr RopeSpec kGgmlNeox{.layout = Layout::halves, .regime = RopeRegime::ggml, .head_dim = 128, .rotary_dim = 128};

constexpr std::array<Preset<RopeSpec>, 7> kRopePresets{{
    {"hf-llama", "half-split pairs (k, k+r/2), full rotary, base 10000 (Llama 2; Llama 3 sets --base 500000), HF float32 steps",
     "HF llama/modeling_llama.py LlamaRotaryEmbedding + rotate_half/apply_rotary_pos_emb",
     "huggingface/transformers@5dd4a63548857797727ae73eeb6a6e886ea02a3e", kHfLlama},
    {"gpt-neox", "half-split pairs, rotary_pct 0.25 (NeoX-20B: 24 of 96 channels), base 10000, float32 steps",
     "EleutherAI gpt-neox megatron/model/positional_embeddings.py RotaryEmbedding (einsum of float32 t and inv_freq)",
     "EleutherAI/gpt-neox@ea7aefd8f8e183256992d9fede4d7c71a46d67a5", kRopeGptNeox},
    {"gpt-j", "interleaved pairs (2k, 2k+1), rotary_dim 64 of 256, base 10000, float32 [sin | cos] table",
     "HF gptj/modeling_gptj.py create_sinusoidal_positions + rotate_every_two/apply_rotary_pos_emb",
     "huggingface/transformers@cb6cd7e984c1482cfcf62aeb3b2921bfeca71e95", kGptJ},
    {"roformer",
     "interleaved pairs, full rotary, base 10000; sin/cos from the float64 numpy table p / 10000^(2k/d) cast to "
     "float32, rotated with float32 products and sum (regime roformer)",
     "HF roformer/modeling_roformer.py RoFormerSinusoidalPositionalEmbedding.create_weight + "
     "RoFormerSelfAttention.apply_rotary_position_embeddings",
     "huggingface/transformers@0166003b4b47ff1c08ed0cd1f88494b4af345c25", kRoformer},
    {"meta-llama", "interleaved pairs via view_as_complex, full rotary, base 10000, float32 freqs and torch.polar",
     "meta-llama/llama llama/model.py precompute_freqs_cis + apply_rotary_emb",
     "meta-llama/llama@0504cf440a50aab815cadccd10a46e7ba70ff344", kMetaLlama},
    {"ggml-normal", "interleaved pairs (GGML_ROPE_TYPE_NORMAL), theta by repeated float32 multiplication",
     "ggml src/ggml-cpu/ops.cpp rope_f32 / ggml_rope_cache_init / rope_yarn (ext_factor 0, freq_scale 1)",
     "ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465", kGgmlNormal},
    {"ggml-neox", "half-split pairs (GGML_ROPE_TYPE_NEOX), theta by repeated float32 multiplication",
     "ggml src/ggml-cpu/ops.cpp rope_f32 / ggml_rope_cache_init / rope_yarn (ext_factor 0, freq_scale 1)",
     "ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465", kGgmlNeox},
}};

}  // namespace

std::span<const Preset<RopeSpec>> SpecTraits<RopeSpec>::presets() { return kRopePresets; }

std::size_t rotary_dim_from_factor(std::size_t head_dim, double f) {
  if (head_dim < 2 || head_dim > kRopeMaxHeadDim)
    throw Error(std::string(kRopeWhere), "head_dim", std::to_string(head_dim),
                "an integer in [2, " + std::to_string(kRopeMaxHeadDim) + "]");
  if (!(f > 0.0 && f <= 1.0))
    throw Error(std::string(kRopeWhere), "partial_rotary_factor", format_real(f), "a real in (0, 1]");
  // int(head_dim * f) in Python: the double product, truncated toward zero.
  const double product = static_cast<double>(head_dim) * f;
  const auto r = static_cast<std::size_t>(product);
  if (r < 2 || r % 2 != 0)
    throw Error(std::string(kRopeWhere), "partial_rotary_factor", format_real(f),
                "a factor with int(head_dim * factor) even and >= 2 (head_dim = " + std::to_string(head_dim) +
                    " gives int(" + format_real(product) + ") = " + std::to_string(r) +
                    "; HF would build arange(0, r, 2) frequencies for an odd r, which is not a rotation of pairs)");
  return r;
}

RopeSpec rope_preset(std::string_view name, std::size_t head_dim) {
  const RopeSpec p = find_preset<RopeSpec>(name).spec;
  RopeSpec s = p;
  s.head_dim = head_dim;
  // The preset's rotary fraction (1, or 0.25 for GPT-J and GPT-NeoX), truncated as HF's int() does.
  s.rotary_dim = p.rotary_dim == p.head_dim
                     ? head_dim
                     : rotary_dim_from_factor(head_dim, static_cast<double>(p.rotary_dim) / static_cast<double>(p.head_dim));
  validate(s);
  return s;
}

void check_position(const RopeSpec& s, std::int64_t p, std::string_view parameter) {
  const Range<std::int64_t> r = SpecTraits<RopeSpec>::position_range(s);
  if (!in_range(p, r)) throw Error(std::string(kRopeWhere), std::string(parameter), std::to_string(p), accepted_text(r, false));
}

}  // namespace posenc
