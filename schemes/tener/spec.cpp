#include "posenc/tener_spec.hpp"

#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kTenerWhere = "tener";

// CONVENTIONS.md §2.6. fastnlp/TENER read at d2614d509dffb9b30636e3523a2f8f0dc4876708 (modules/relative_transformer.py:
// RelativeSinusoidalPositionalEmbedding(d_model // n_head, 0, 1200), RelativeMultiHeadAttn) and its training script
// train_tener_en.py @ c84d7a9cb112e9df67cb552308e1952b1ebcf057 (conll2003: n_heads 14, head_dims 128; en-ontonotes:
// n_heads 8, head_dims 96; attn_type 'adatrans', so scale = (attn_type == 'transformer') = False). The models run in
// float32: the emulated regime.
constexpr TenerSpec kConll{.heads = 14, .d_head = 128, .scale = false, .init_size = 1200, .regime = Regime::emulated};
constexpr TenerSpec kOntonotes{.heads = 8, .d_head = 96, .scale = false, .init_size = 1200,
                               .regime = Regime::emulated};

constexpr std::array<Preset<TenerSpec>, 2> kTenerPresets{{
    {"tener-conll2003",
     "TENER on CoNLL-2003: 14 heads of 128, unscaled scores, init_size 1200, float32 table",
     "TENER modules/relative_transformer.py RelativeMultiHeadAttn with train_tener_en.py (conll2003)",
     "fastnlp/TENER@c84d7a9cb112e9df67cb552308e1952b1ebcf057", kConll},
    {"tener-ontonotes",
     "TENER on OntoNotes 5 (English): 8 heads of 96, unscaled scores, init_size 1200, float32 table",
     "TENER modules/relative_transformer.py RelativeMultiHeadAttn with train_tener_en.py (en-ontonotes)",
     "fastnlp/TENER@c84d7a9cb112e9df67cb552308e1952b1ebcf057", kOntonotes},
}};

void check_bias(const TenerSpec& s, const std::vector<double>& t, const char* name) {
  const std::size_t want = s.heads * s.d_head;
  if (t.size() != want)
    throw Error(std::string(kTenerWhere), name, std::to_string(t.size()) + " values",
                "exactly heads * d_head = " + std::to_string(want) + " values ([heads][d_head], row-major)");
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i]) || std::fabs(t[i]) > kTenerMaxWeight)
      throw Error(std::string(kTenerWhere), name,
                  "entry [" + std::to_string(i / s.d_head) + "][" + std::to_string(i % s.d_head) + "] = " + format_real(t[i]),
                  "a finite real with |v| <= 1e15");
}

void check_length(std::size_t length) {
  if (length == 0 || length > static_cast<std::size_t>(kTenerMaxLength))
    throw Error(std::string(kTenerWhere), "length", std::to_string(length), "1 .. 2^30 - 1");
}

}  // namespace

std::span<const Preset<TenerSpec>> SpecTraits<TenerSpec>::presets() { return kTenerPresets; }

std::optional<std::int64_t> tener_zero_position(const TenerSpec& s, std::size_t length) {
  validate(s);
  check_length(length);
  if (length > s.init_size / 2) return -static_cast<std::int64_t>(length);
  return std::nullopt;
}

SinusoidalSpec tener_sinusoidal_spec(const TenerSpec& s, std::size_t length) {
  const std::optional<std::int64_t> zero = tener_zero_position(s, length);
  SinusoidalSpec t;
  t.layout = Layout::halves;
  t.rule = FrequencyRule::fairseq;
  t.odd_dim = OddDim::zero_pad;
  t.regime = s.regime;
  t.dim = s.d_head;
  t.base = 10000.0;
  t.signed_positions = true;
  t.first_position = 0;
  t.padding_row = zero;
  validate(t);
  return t;
}

void check_tener_weights(const TenerSpec& s, const TenerWeights& w) {
  check_bias(s, w.r_r_bias, "r_r_bias");
  check_bias(s, w.r_w_bias, "r_w_bias");
}

void check_tener_lengths(std::size_t query_length, std::size_t key_length) {
  check_length(key_length);
  if (query_length != key_length)
    throw Error(std::string(kTenerWhere), "query_length", std::to_string(query_length),
                "key_length = " + std::to_string(key_length) + " (TENER is self-attention: Lq = Lk = L)");
}

}  // namespace posenc
