#include "posenc/deberta_spec.hpp"

#include <array>
#include <cmath>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kDebertaWhere = "deberta";

// CONVENTIONS.md §2.8. HF read at huggingface/transformers@967ed0db036766dc1e9a964eca66a8c07df1b902
// src/transformers/models/deberta_v2/modeling_deberta_v2.py (make_log_bucket_position, build_relative_position:
// q_ids = arange(query_size), k_ids = arange(key_size), rel = q_ids[:, None] - k_ids[None, :];
// DisentangledSelfAttention: pos_ebd_size = position_buckets if > 0 else max_relative_positions, scale_factor = 1 +
// ("c2p" in pos_att_type) + ("p2c" in pos_att_type), c2p_pos = clamp(relative_pos + att_span, 0, 2 att_span - 1),
// p2c_pos = clamp(-r_pos + att_span, 0, 2 att_span - 1) gathered key-major and transposed). Model configs
// (published config.json): microsoft/deberta-v3-base position_buckets 256, max_relative_positions -1 ->
// max_position_embeddings 512, pos_att_type [p2c, c2p], 12 heads of 768 / 12 = 64; microsoft/deberta-v2-xlarge the
// same buckets, 24 heads of 1536 / 24 = 64. The 2021 original, microsoft/DeBERTa@6d0b7c371b622e2d9793042102394bd104689f3f
// DeBERTa/deberta/da_utils.py, is the same formula in numpy float64 (the exact regime agrees with it wherever it was
// compared); its 2023 revision clamps rel to [-(max_position - 1), max_position - 1] first (CONVENTIONS.md §2.8):
// the spec's clamp field, without a preset (that revision's commit is pinned neither there nor in the indexed
// repository, so no preset can cite it).
constexpr DebertaSpec kV3Base{.position_buckets = 256, .max_relative_positions = 512, .clamp = false,
                              .regime = DebertaRegime::hf, .c2p = true, .p2c = true, .heads = 12, .head_dim = 64};
constexpr DebertaSpec kV2XLarge{.position_buckets = 256, .max_relative_positions = 512, .clamp = false,
                                .regime = DebertaRegime::hf, .c2p = true, .p2c = true, .heads = 24, .head_dim = 64};

constexpr std::array<Preset<DebertaSpec>, 2> kDebertaPresets{{
    {"deberta-v3-base",
     "HF DeBERTa-v3-base: rel = i - j, 256 log buckets up to 512, c2p + p2c, 12 heads x 64, HF float32 log",
     "transformers models/deberta_v2/modeling_deberta_v2.py make_log_bucket_position, DisentangledSelfAttention",
     "huggingface/transformers@967ed0db036766dc1e9a964eca66a8c07df1b902", kV3Base},
    {"deberta-v2-xlarge",
     "HF DeBERTa-v2-xlarge: as deberta-v3-base with 24 heads x 64",
     "transformers models/deberta_v2/modeling_deberta_v2.py make_log_bucket_position, DisentangledSelfAttention",
     "huggingface/transformers@967ed0db036766dc1e9a964eca66a8c07df1b902", kV2XLarge},
}};

void check_table(const DebertaSpec& s, const std::vector<double>& t, const char* name, bool used) {
  if (!used) {
    if (!t.empty())
      throw Error(std::string(kDebertaWhere), name, std::to_string(t.size()) + " values",
                  std::string("none: this spec has ") + (name[4] == 'k' ? "c2p" : "p2c") + " = false (the table is unused)");
    return;
  }
  const std::size_t rows = deberta_table_rows(s), want = s.heads * rows * s.head_dim;
  if (t.size() != want)
    throw Error(std::string(kDebertaWhere), name, std::to_string(t.size()) + " values",
                "exactly heads * 2 span * head_dim = " + std::to_string(s.heads) + " * " + std::to_string(rows) + " * " +
                    std::to_string(s.head_dim) + " = " + std::to_string(want) +
                    " values ([heads][2 span][head_dim], row-major; span = position_buckets or max_relative_positions)");
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i]) || std::fabs(t[i]) > kDebertaMaxWeight)
      throw Error(std::string(kDebertaWhere), name,
                  "head " + std::to_string(i / (rows * s.head_dim)) + ", row " + std::to_string(i / s.head_dim % rows) +
                      ", column " + std::to_string(i % s.head_dim) + ": " + format_real(t[i]),
                  "a finite real with |v| <= 1e15");
}

}  // namespace

std::span<const Preset<DebertaSpec>> SpecTraits<DebertaSpec>::presets() { return kDebertaPresets; }

void check_deberta_weights(const DebertaSpec& s, const DebertaWeights& w) {
  check_table(s, w.pos_key, "pos_key", s.c2p);
  check_table(s, w.pos_query, "pos_query", s.p2c);
}

void check_deberta_lengths(std::size_t query_length, std::size_t key_length) {
  if (query_length == 0 || query_length > kDebertaMaxLength)
    throw Error(std::string(kDebertaWhere), "query_length", std::to_string(query_length), "1 .. 2^30");
  if (key_length == 0 || key_length > kDebertaMaxLength)
    throw Error(std::string(kDebertaWhere), "key_length", std::to_string(key_length), "1 .. 2^30");
}

}  // namespace posenc
