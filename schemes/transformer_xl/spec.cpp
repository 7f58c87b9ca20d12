#include "posenc/transformer_xl_spec.hpp"

#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kTransformerXlWhere = "transformer_xl";

// CONVENTIONS.md §2.5. kimiyoung/transformer-xl read at 01102106eeb627c592a023cd7f9f799b7d11b27f
// (pytorch/mem_transformer.py: PositionalEmbedding, RelPartialLearnableMultiHeadAttn, MemTransformerLM._forward) and
// the evaluation scripts pytorch/run_wt103_base.sh @ 8ccccad60af74a2231dad1ab63d9c306369f8007 (d_model 410, n_head
// 10, d_head 41; eval: tgt_len 64, mem_len 640, clamp_len 400, same_length) and pytorch/run_wt103_large.sh
// @ 85cc80ab6d03739a257daaead6a8b2c4ebd552e8 (d_model 1024, n_head 16, d_head 64; eval: tgt_len 128, mem_len 1600,
// clamp_len 1000, same_length — also HF's transfo-xl-wt103 configuration). The models run in float32: the
// emulated regime.
constexpr TransformerXlSpec kTransformerXlBase{.d_model = 410, .heads = 10, .d_head = 41, .clamp_len = 400, .same_length = true,
                                  .mem_len = 640, .regime = Regime::emulated};
constexpr TransformerXlSpec kTransformerXlLarge{.d_model = 1024, .heads = 16, .d_head = 64, .clamp_len = 1000,
                                   .same_length = true, .mem_len = 1600, .regime = Regime::emulated};

constexpr std::array<Preset<TransformerXlSpec>, 2> kTransformerXlPresets{{
    {"txl-wt103-base",
     "Transformer-XL WikiText-103 base as evaluated: d_model 410, 10 heads of 41, clamp_len 400, same_length with "
     "mem_len 640, float32 table",
     "transformer-xl pytorch/mem_transformer.py (attn_type 0) with run_wt103_base.sh eval settings",
     "kimiyoung/transformer-xl@8ccccad60af74a2231dad1ab63d9c306369f8007", kTransformerXlBase},
    {"txl-wt103-large",
     "Transformer-XL WikiText-103 large as evaluated (HF transfo-xl-wt103): d_model 1024, 16 heads of 64, clamp_len "
     "1000, same_length with mem_len 1600, float32 table",
     "transformer-xl pytorch/mem_transformer.py (attn_type 0) with run_wt103_large.sh eval settings",
     "kimiyoung/transformer-xl@85cc80ab6d03739a257daaead6a8b2c4ebd552e8", kTransformerXlLarge},
}};

void check_transformer_xl_values(const std::vector<double>& t, std::size_t rows, std::size_t cols, const char* name,
                  const char* shape) {
  const std::size_t want = rows * cols;
  if (t.size() != want)
    throw Error(std::string(kTransformerXlWhere), name, std::to_string(t.size()) + " values",
                "exactly " + std::string(shape) + " = " + std::to_string(rows) + " * " + std::to_string(cols) + " = " +
                    std::to_string(want) + " values (row-major)");
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i]) || std::fabs(t[i]) > kTxlMaxWeight)
      throw Error(std::string(kTransformerXlWhere), name,
                  "entry [" + std::to_string(i / cols) + "][" + std::to_string(i % cols) + "] = " + format_real(t[i]),
                  "a finite real with |v| <= 1e15");
}

}  // namespace

std::span<const Preset<TransformerXlSpec>> SpecTraits<TransformerXlSpec>::presets() { return kTransformerXlPresets; }

SinusoidalSpec transformer_xl_sinusoidal_spec(const TransformerXlSpec& s) {
  validate(s);
  SinusoidalSpec t = sinusoidal_preset("transformer-xl", s.d_model);
  t.regime = s.regime;
  return t;
}

std::int64_t transformer_xl_position(const TransformerXlSpec& s, std::int64_t delta) {
  if (delta < 0 || delta > kTxlMaxLength)
    throw Error(std::string(kTransformerXlWhere), "delta", std::to_string(delta),
                "0 .. 2^31 - 1 (Transformer-XL embeds only keys at or before the query)");
  return s.clamp_len > 0 && delta > s.clamp_len ? s.clamp_len : delta;
}

void check_transformer_xl_lengths(std::size_t query_length, std::size_t key_length) {
  if (key_length == 0 || key_length > static_cast<std::size_t>(kTxlMaxLength))
    throw Error(std::string(kTransformerXlWhere), "key_length", std::to_string(key_length),
                "1 .. 2^31 - 1 (klen = memory + query_length)");
  if (query_length == 0 || query_length > key_length)
    throw Error(std::string(kTransformerXlWhere), "query_length", std::to_string(query_length),
                "1 .. key_length = " + std::to_string(key_length) + " (the queries are the last keys)");
}

bool transformer_xl_masked(const TransformerXlSpec& s, std::size_t i, std::size_t j, std::size_t query_length,
                           std::size_t key_length) {
  check_transformer_xl_lengths(query_length, key_length);
  if (i >= query_length)
    throw Error(std::string(kTransformerXlWhere), "i", std::to_string(i), "0 .. query_length - 1 = " + std::to_string(query_length - 1));
  if (j >= key_length)
    throw Error(std::string(kTransformerXlWhere), "j", std::to_string(j), "0 .. key_length - 1 = " + std::to_string(key_length - 1));
  const std::size_t qi = key_length - query_length + i;
  if (j > qi) return true;
  if (!s.same_length) return false;
  // mask_len = klen - mem_len; mask_shift_len = qlen - mask_len if mask_len > 0 else qlen; tril(ones, -shift).
  const std::size_t shift = key_length > s.mem_len ? query_length - std::min(query_length, key_length - s.mem_len)
                                                   : query_length;
  // key_length - mem_len > query_length would make the code's shift negative: tril(ones, +n) hides j <= i + n.
  if (key_length > s.mem_len && key_length - s.mem_len > query_length) {
    const std::size_t n = key_length - s.mem_len - query_length;
    return j <= i + n;
  }
  return i >= shift && j <= i - shift;
}

void check_transformer_xl_weights(const TransformerXlSpec& s, const TransformerXlWeights& w) {
  check_transformer_xl_values(w.r_w_bias, s.heads, s.d_head, "r_w_bias", "heads * d_head");
  check_transformer_xl_values(w.r_r_bias, s.heads, s.d_head, "r_r_bias", "heads * d_head");
  check_transformer_xl_values(w.r_net, s.heads * s.d_head, s.d_model, "r_net", "(heads * d_head) * d_model");
}

}  // namespace posenc
