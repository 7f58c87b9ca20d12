#include "posenc/xlnet_spec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kXlnetWhere = "xlnet";

// CONVENTIONS.md §2.9. HF transformers read at 98ad48f2eee8e1ff50e153df239fe1d591dde386:
// src/transformers/models/xlnet/modeling_xlnet.py (relative_positional_encoding, create_mask, rel_attn_core,
// rel_shift_bnij) and configuration_xlnet.py (XLNetConfig: attn_type "bi", bi_data False, clamp_len -1, same_length
// False; xlnet-base-cased d_model 768, n_head 12, d_head 64; xlnet-large-cased d_model 1024, n_head 16, d_head 64).
// The models run in float32: the emulated regime.
constexpr XlnetSpec kXlnetBase{.d_model = 768, .heads = 12, .d_head = 64, .regime = Regime::emulated};
constexpr XlnetSpec kXlnetLarge{.d_model = 1024, .heads = 16, .d_head = 64, .regime = Regime::emulated};

constexpr std::array<Preset<XlnetSpec>, 2> kXlnetPresets{{
    {"xlnet-base-cased",
     "HF XLNet base: d_model 768, 12 heads of 64, attn_type bi, forward pos_seq, no clamp, float32 table",
     "transformers models/xlnet/modeling_xlnet.py XLNetModel.relative_positional_encoding, rel_attn_core",
     "huggingface/transformers@98ad48f2eee8e1ff50e153df239fe1d591dde386", kXlnetBase},
    {"xlnet-large-cased",
     "HF XLNet large: d_model 1024, 16 heads of 64, attn_type bi, forward pos_seq, no clamp, float32 table",
     "transformers models/xlnet/modeling_xlnet.py XLNetModel.relative_positional_encoding, rel_attn_core",
     "huggingface/transformers@98ad48f2eee8e1ff50e153df239fe1d591dde386", kXlnetLarge},
}};

void check_xlnet_values(const std::vector<double>& t, std::size_t rows, std::size_t cols, const char* name,
                  const char* shape) {
  const std::size_t want = rows * cols;
  if (t.size() != want)
    throw Error(std::string(kXlnetWhere), name, std::to_string(t.size()) + " values",
                "exactly " + std::string(shape) + " = " + std::to_string(want) + " values (row-major)");
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i]) || std::fabs(t[i]) > kXlnetMaxWeight)
      throw Error(std::string(kXlnetWhere), name, "entry " + std::to_string(i) + " = " + format_real(t[i]),
                  "a finite real with |v| <= 1e15");
}

void check_entry(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_xlnet_lengths(query_length, key_length);
  if (i >= query_length)
    throw Error(std::string(kXlnetWhere), "i", std::to_string(i), "0 .. query_length - 1 = " + std::to_string(query_length - 1));
  if (j >= key_length)
    throw Error(std::string(kXlnetWhere), "j", std::to_string(j), "0 .. key_length - 1 = " + std::to_string(key_length - 1));
}

}  // namespace

std::span<const Preset<XlnetSpec>> SpecTraits<XlnetSpec>::presets() { return kXlnetPresets; }

SinusoidalSpec xlnet_sinusoidal_spec(const XlnetSpec& s) {
  validate(s);
  SinusoidalSpec t = sinusoidal_preset("xlnet", s.d_model);
  t.regime = s.regime;
  return t;
}

void check_xlnet_lengths(std::size_t query_length, std::size_t key_length) {
  if (key_length == 0 || key_length > static_cast<std::size_t>(kXlnetMaxLength))
    throw Error(std::string(kXlnetWhere), "key_length", std::to_string(key_length),
                "1 .. 2^30 - 1 (klen = memory + query_length)");
  if (query_length == 0 || query_length > key_length)
    throw Error(std::string(kXlnetWhere), "query_length", std::to_string(query_length),
                "1 .. key_length = " + std::to_string(key_length) + " (the queries are the last keys)");
}

std::size_t xlnet_table_rows(const XlnetSpec& s, std::size_t query_length, std::size_t key_length) {
  check_xlnet_lengths(query_length, key_length);
  return s.attn_type == XlnetAttnType::bi ? key_length + query_length : key_length + 1;
}

std::int64_t xlnet_position(const XlnetSpec& s, std::size_t c, std::size_t query_length, std::size_t key_length) {
  const std::size_t rows = xlnet_table_rows(s, query_length, key_length);
  if (c >= rows) throw Error(std::string(kXlnetWhere), "c", std::to_string(c), "0 .. " + std::to_string(rows - 1));
  std::int64_t p = static_cast<std::int64_t>(key_length) - static_cast<std::int64_t>(c);
  if (s.direction == XlnetDirection::backward) p = -p;
  if (s.clamp_len > 0) p = std::clamp(p, -s.clamp_len, s.clamp_len);
  return p;
}

bool xlnet_defined(const XlnetSpec& s, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_entry(i, j, query_length, key_length);
  return s.attn_type == XlnetAttnType::bi || j <= key_length - query_length + i;
}

bool xlnet_masked(const XlnetSpec& s, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_entry(i, j, query_length, key_length);
  if (s.attn_type == XlnetAttnType::bi) return false;
  if (j > key_length - query_length + i) return true;
  return s.same_length && j < query_length && j < i;
}

void check_xlnet_weights(const XlnetSpec& s, const XlnetWeights& w) {
  const std::size_t hd = s.heads * s.d_head;
  check_xlnet_values(w.r_w_bias, s.heads, s.d_head, "r_w_bias", "heads * d_head");
  check_xlnet_values(w.r_r_bias, s.heads, s.d_head, "r_r_bias", "heads * d_head");
  check_xlnet_values(w.r_s_bias, s.heads, s.d_head, "r_s_bias", "heads * d_head");
  check_xlnet_values(w.seg_embed, 2, hd, "seg_embed", "2 * heads * d_head");
  check_xlnet_values(w.r, s.d_model, hd, "r", "d_model * heads * d_head");
}

void check_xlnet_token_types(std::span<const std::int64_t> token_types, std::size_t query_length) {
  if (!token_types.empty() && token_types.size() != query_length)
    throw Error(std::string(kXlnetWhere), "token_types", std::to_string(token_types.size()) + " entries",
                "none (no segment term) or exactly query_length = " + std::to_string(query_length) +
                    " (the memory keys have type 0)");
}

}  // namespace posenc
