#include "posenc/t5_spec.hpp"

#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kT5Where = "t5";

// CONVENTIONS.md §2.7; the code reproduced, read at huggingface/transformers@6b8b757dfcb582379a64f013cdce46c43629f2b0
// src/transformers/models/t5/modeling_t5.py (T5Attention._relative_position_bucket, compute_bias; T5Config
// defaults relative_attention_num_buckets 32, relative_attention_max_distance 128; t5-small has 8 heads).
constexpr T5Spec kEncoder{.bidirectional = true, .num_buckets = 32, .max_distance = 128, .heads = 8, .regime = T5Regime::hf};
constexpr T5Spec kDecoder{.bidirectional = false, .num_buckets = 32, .max_distance = 128, .heads = 8, .regime = T5Regime::hf};

constexpr std::array<Preset<T5Spec>, 2> kT5Presets{{
    {"t5-encoder", "encoder self-attention: bidirectional, 32 buckets (16 per side), max_distance 128, HF float32 log",
     "transformers models/t5/modeling_t5.py T5Attention._relative_position_bucket (bidirectional = not is_decoder)",
     "huggingface/transformers@6b8b757dfcb582379a64f013cdce46c43629f2b0", kEncoder},
    {"t5-decoder", "decoder self-attention: unidirectional, 32 buckets, max_distance 128, HF float32 log",
     "transformers models/t5/modeling_t5.py T5Attention._relative_position_bucket (is_decoder)",
     "huggingface/transformers@6b8b757dfcb582379a64f013cdce46c43629f2b0", kDecoder},
}};

}  // namespace

std::span<const Preset<T5Spec>> SpecTraits<T5Spec>::presets() { return kT5Presets; }

T5Spec t5_preset(std::string_view name, std::size_t heads) {
  T5Spec s = find_preset<T5Spec>(name).spec;
  s.heads = heads;
  validate(s);
  return s;
}

void check_t5_weights(const T5Spec& s, const T5Weights& w) {
  const std::size_t want = s.num_buckets * s.heads;
  if (w.table.size() != want)
    throw Error(std::string(kT5Where), "table", std::to_string(w.table.size()) + " values",
                "exactly num_buckets * heads = " + std::to_string(s.num_buckets) + " * " + std::to_string(s.heads) +
                    " = " + std::to_string(want) + " values ([num_buckets][heads], row-major)");
  for (std::size_t i = 0; i < w.table.size(); ++i)
    if (!std::isfinite(w.table[i]) || std::fabs(w.table[i]) > kT5MaxBias)
      throw Error(std::string(kT5Where), "table",
                  "bucket " + std::to_string(i / s.heads) + ", head " + std::to_string(i % s.heads) + ": " +
                      format_real(w.table[i]),
                  "a finite real with |v| <= 1e30");
}

}  // namespace posenc
