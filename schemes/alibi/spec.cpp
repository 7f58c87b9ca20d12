#include "posenc/alibi_spec.hpp"

#include <array>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kAlibiWhere = "alibi";

// CONVENTIONS.md §2.13; each preset names the code it reproduces and the commit it was read at.
constexpr AlibiSpec kOfirpress{.heads = 8, .variant = AlibiVariant::key, .regime = AlibiRegime::ofirpress};
constexpr AlibiSpec kAlibiGptNeox{.heads = 8, .variant = AlibiVariant::relative, .regime = AlibiRegime::ofirpress};
constexpr AlibiSpec kBloom{.heads = 16, .variant = AlibiVariant::key_counted, .regime = AlibiRegime::bloom};
constexpr AlibiSpec kMpt{.heads = 32, .variant = AlibiVariant::key_shifted, .regime = AlibiRegime::mpt};
constexpr AlibiSpec kMosaicBert{.heads = 12, .variant = AlibiVariant::symmetric, .regime = AlibiRegime::ofirpress};

constexpr std::array<Preset<AlibiSpec>, 5> kAlibiPresets{{
    {"ofirpress", "bias m_h j per key (rows identical; the causal mask is added separately), float64 get_slopes -> float32",
     "ofirpress fairseq/models/transformer.py TransformerDecoder.__init__ get_slopes + buffered_future_mask",
     "ofirpress/attention_with_linear_biases@3b7c2eca8397d27be08c6dffad9b60855507f9b7", kOfirpress},
    {"gpt-neox", "bias -m_h (i - j) for j <= i, 0 above (-tril), float64 get_slopes -> float32",
     "EleutherAI gpt-neox megatron/model/positional_embeddings.py AliBi._get_slopes + bias",
     "EleutherAI/gpt-neox@b0b561f91becfe3137a34599025242647d8e7f3b", kAlibiGptNeox},
    {"bloom", "bias m_h c_j, c_j = (cumsum(mask) - 1) * mask over the keys, float32 torch.pow(base, k) slopes",
     "HF bloom/modeling_bloom.py build_alibi_tensor",
     "huggingface/transformers@9d97831a1cbb420edac062c2e8454ce9ac1c4b79", kBloom},
    {"mpt", "bias m_h (j - (L - 1)) per key, slopes 1 / 2^(t * alibi_bias_max / P) in float32 (alibi_bias_max 8)",
     "HF mpt/modeling_mpt.py build_mpt_alibi_tensor",
     "huggingface/transformers@4352620161a5f53911ddc19dbfa1bd76d92c93be", kMpt},
    {"mosaic-bert", "symmetric bias -m_h |i - j| (bidirectional encoder, no causal mask), float64 get_slopes -> float32",
     "mosaicml/examples examples/benchmarks/bert/src/bert_layers.py BertEncoder.rebuild_alibi_tensor",
     "mosaicml/examples@10b8a9a6c0c8278afc270d05274cf553b407f897", kMosaicBert},
}};

}  // namespace

std::span<const Preset<AlibiSpec>> SpecTraits<AlibiSpec>::presets() { return kAlibiPresets; }

AlibiSpec alibi_preset(std::string_view name, std::size_t heads) {
  AlibiSpec s = find_preset<AlibiSpec>(name).spec;
  s.heads = heads;
  validate(s);
  return s;
}

void check_alibi_lengths(std::size_t query_length, std::size_t key_length) {
  if (key_length < 1 || key_length >= static_cast<std::size_t>(kAlibiMaxLength))
    throw Error(std::string(kAlibiWhere), "key_length", std::to_string(key_length),
                "an integer in [1, " + std::to_string(kAlibiMaxLength - 1) + "] (key positions 0..key_length-1 < 2^31)");
  if (query_length < 1 || query_length > key_length)
    throw Error(std::string(kAlibiWhere), "query_length", std::to_string(query_length),
                "an integer in [1, key_length = " + std::to_string(key_length) +
                    "] (the queries are the last query_length keys)");
}

}  // namespace posenc
