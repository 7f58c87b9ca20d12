// posenc/rope_config.hpp — a Hugging Face model `config.json` read into a RopeSpec (posenc/rope_spec.hpp).
//
// rope_spec_from_hf_config(json_text, options) reads what HF's RoPE code reads and nothing else:
//   model_type                        -> layout (below)
//   rope_theta                        -> base (also rope_parameters.rope_theta (v5 format) and gpt_neox's
//                                        rotary_emb_base; HF's config classes default it to 10000)
//   head_dim | hidden_size / num_attention_heads (must divide) | qk_rope_head_dim (deepseek_v2, deepseek_v3:
//                                        HF's DeepseekV3Config sets head_dim = qk_rope_head_dim, the rotated part)
//                                     -> head_dim   (gptj spells them n_embd / n_head: HF's attribute_map)
//   partial_rotary_factor (also in rope_parameters), gpt_neox rotary_pct (HF default 0.25), gptj rotary_dim
//                                        (HF default 64; null: the whole head) -> rotary_dim = int(head_dim * f)
//   max_position_embeddings (gptj: n_positions), a top-level original_max_position_embeddings (Phi-3)
//   rope_scaling | rope_parameters    -> scaling and its fields (either spelling, `type` or `rope_type`)
// Keys of the top-level object that are not about RoPE are ignored. Inside rope_scaling / rope_parameters every key
// must be one HF reads for that rope_type: an unknown key (a typo) or one the type does not read is an Error
// naming it ("rope_scaling.facter"). Two spellings of one value that disagree (type vs rope_type, rope_scaling vs
// rope_parameters, rope_theta vs rope_parameters.rope_theta, ...) are an Error naming both. The spec is then
// validated (posenc/describe.hpp validate) and an out-of-range value is reported under the config key it came
// from. Every error is a posenc::Error whose where() is HfConfigOptions::file (or "HF config").
//
// Layout (which channels pair up), by model_type — HF's apply_rotary_pos_emb of each model:
//   halves (rotate_half, pair (k, k + r/2)): llama mistral mixtral qwen2 qwen2_moe qwen3 qwen3_moe phi phi3 gemma
//     gemma2 gpt_neox stablelm starcoder2 olmo olmo2 granite persimmon qwen2_vl
//   interleaved (pair (2k, 2k+1)): gptj (rotate_every_two); deepseek_v2 (torch.polar freqs_cis applied to complex
//     pairs, modular_deepseek_v2.py); deepseek_v3 with rope_interleave true (HF's default): its
//     apply_rotary_pos_emb_interleave de-interleaves q and k (view(.., d/2, 2).transpose) and then applies
//     rotate_half, so scores equal interleaved RoPE on the stored channels (the rotated tensor comes out in the
//     de-interleaved channel order); rope_interleave false: halves.
//   Any other model_type is an Error unless HfConfigOptions::layout says which (a wrong layout is silently wrong).
//
// rope_type -> RopeSpec (HF modeling_rope_utils.py, ROPE_INIT_FUNCTIONS; commits in rope_config.cpp):
//   absent, null, "default", "mrope"  none
//   with any type: mrope_section [s_t, s_h, s_w] -> mrope sections (Qwen2-VL, Qwen2.5-VL; "mrope" is HF's
//             "default" with sections), or interleaved with "mrope_interleaved": true (Qwen3-VL); "mrope" or
//             mrope_interleaved without mrope_section is an Error naming rope_scaling.mrope_section
//   linear    factor
//   dynamic   factor; max_context = max_position_embeddings (what every HF version uses; a rope_scaling
//             original_max_position_embeddings is accepted and, like HF, not used); seq_len 0 (set it yourself)
//   yarn      factor, attention_factor, beta_fast / beta_slow (null or 0: 32 / 1, HF's `or`), mscale,
//             mscale_all_dim, truncate; original_context and factor per HfVersion (below)
//   llama3    factor, low_freq_factor, high_freq_factor, original_max_position_embeddings (all required)
//   longrope  short_factor, long_factor (rotary_dim / 2 each), factor, attention_factor; original_context and
//             factor per HfVersion (below); seq_len is not in a config (0: the short factors)
//
// HfVersion: the original context L0 and the factor s of yarn and longrope changed between HF versions
// (CONVENTIONS.md §2.11 "Version differences for L0", §3 item 8). Let M = max_position_embeddings, O = rope_scaling's
// original_max_position_embeddings, T = a top-level original_max_position_embeddings, f = the factor as written.
//   v5          (default; the rope_parameters refactor)  yarn and longrope: L0 = T if present, else O, else M;
//               s = f, or M / L0 when f is null.
//   4.56-4.57   yarn: L0 = O, else M; s = f (PR #40320 "explicit factor > implicit factor", merged 2025-08-21).
//   4.51-4.55   yarn: L0 = O, else M; s = M / O whenever O is present (f ignored: issue #38224, the Qwen2.5
//               YaRN recipe M = O = 32768 then scales by 1); mscale / mscale_all_dim read.
//   4.43-4.50   yarn: L0 = M, s = f; O, mscale, mscale_all_dim and truncate are not read (HF warned "Unrecognized
//               keys"), attention factor 0.1 ln s + 1 unless attention_factor is given.
//   longrope in every 4.x: L0 = T, else M (O is not read); s = M / T when T is present, else f.
// The release numbers at the boundaries 4.50/4.51 and 4.55/4.56 are inferred from dates (DeepSeek-V3 support in
// spring 2025; PR #40320 in August 2025); the behaviours themselves are read from the commits cited in
// rope_config.cpp. With M = O (or M = T) and f = M / O every version agrees.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "posenc/describe.hpp"
#include "posenc/rope_spec.hpp"
#include "posenc/vocabulary.hpp"

namespace posenc {

enum class HfVersion { v5, v4_56, v4_51, v4_43 };

template <>
struct EnumTraits<HfVersion> {
  static constexpr std::array<EnumValue<HfVersion>, 4> values{{
      {HfVersion::v5, "v5",
       "transformers v5 (rope_parameters): factor as written, M / original only when null; original from the "
       "config (top-level first), else max_position_embeddings"},
      {HfVersion::v4_56, "4.56-4.57",
       "yarn: original_max_position_embeddings or max_position_embeddings, factor as written (PR #40320)"},
      {HfVersion::v4_51, "4.51-4.55",
       "yarn: factor replaced by max_position_embeddings / original_max_position_embeddings when the latter is "
       "given (issue #38224)"},
      {HfVersion::v4_43, "4.43-4.50",
       "yarn: max_position_embeddings as the original context; original_max_position_embeddings and mscale not read"},
  }};
};

struct HfConfigOptions {
  RopeRegime regime = RopeRegime::exact;
  HfVersion hf_version = HfVersion::v5;
  // When set, the layout to use whatever the model_type says (and for a model_type posenc does not know).
  std::optional<Layout> layout = std::nullopt;
  // Names the config in errors (Error::where()), e.g. the file name; empty: "HF config".
  std::string file = {};
};

// The RopeSpec that HF's RoPE code builds from this config.json text (above). Throws posenc::Error naming the
// config key as written ("rope_scaling.factor", "max_position_embeddings", "model_type", ...).
RopeSpec rope_spec_from_hf_config(std::string_view json_text, const HfConfigOptions& options = {});

}  // namespace posenc
