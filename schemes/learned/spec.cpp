#include "posenc/learned_spec.hpp"

#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kLearnedWhere = "learned";

constexpr LearnedSpec kArange{.id_map = IdMap::arange, .padding_idx = 1, .offset = 0};
constexpr LearnedSpec kRoberta{.id_map = IdMap::make_positions, .padding_idx = 1, .offset = 0};
constexpr LearnedSpec kOpt{.id_map = IdMap::cumsum_mask, .padding_idx = 1, .offset = 2};

// CONVENTIONS.md §2.2; each preset names the code it reproduces and the commit it was read at.
constexpr std::array<Preset<LearnedSpec>, 5> kLearnedPresets{{
    {"bert", "ids past .. past + L - 1 (padding tokens included), table of max_position_embeddings = 512 rows",
     "HF bert/modeling_bert.py BertEmbeddings (position_ids buffer sliced [past : past + L])",
     "huggingface/transformers@8ec58104181bfb34d824d89bccc009b4f6be6e0e", kArange},
    {"gpt2", "ids past .. past + L - 1, table of n_positions = 1024 rows",
     "HF gpt2/modeling_gpt2.py GPT2Model.forward (arange(past, past + L); cache_position in newer versions)",
     "huggingface/transformers@c44b2d9976e8eafbdcb89cb2710141b2bc9b138f", kArange},
    {"roberta", "real tokens count from padding_idx + 1 = 2 (plus past), padding tokens get row 1; 514 rows",
     "HF roberta/modeling_roberta.py create_position_ids_from_input_ids",
     "huggingface/transformers@000824f17f924a8b520edf04c597c461fc83356a", kRoberta},
    {"fairseq", "utils.make_positions: real tokens count from padding_idx + 1, padding tokens get padding_idx",
     "fairseq fairseq/utils.py make_positions, modules/learned_positional_embedding.py",
     "facebookresearch/fairseq@032a404d389307a0e8f7dd2a0d501c78afa78f39", kRoberta},
    {"opt", "ids cumsum(attention_mask) * mask - 1 + 2 over past + L tokens, last L kept; padding gets row 1",
     "HF opt/modeling_opt.py OPTLearnedPositionalEmbedding.forward",
     "huggingface/transformers@0184d2087e15afbd83ffa3cef25044a4f6c05047", kOpt},
}};

}  // namespace

std::span<const Preset<LearnedSpec>> SpecTraits<LearnedSpec>::presets() { return kLearnedPresets; }

LearnedSpec learned_preset(std::string_view name) {
  LearnedSpec s = find_preset<LearnedSpec>(name).spec;
  validate(s);
  return s;
}

void check_learned_table(const LearnedTable& t) {
  if (t.rows < 1 || t.dim < 1 || t.rows > static_cast<std::size_t>(kLearnedMaxIndex))
    throw Error(std::string(kLearnedWhere), "table", std::to_string(t.rows) + " x " + std::to_string(t.dim),
                "a table of rows in [1, 2^40) and dim >= 1");
  std::size_t n = 0;
  if (__builtin_mul_overflow(t.rows, t.dim, &n) || n != t.values.size())
    throw Error(std::string(kLearnedWhere), "table", std::to_string(t.values.size()) + " values",
                "exactly rows * dim = " + std::to_string(t.rows) + " * " + std::to_string(t.dim) + " values");
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(t.values[i]))
      throw Error(std::string(kLearnedWhere), "table",
                  format_real(t.values[i]) + " at row " + std::to_string(i / t.dim) + ", column " +
                      std::to_string(i % t.dim),
                  "finite values");
}

}  // namespace posenc
