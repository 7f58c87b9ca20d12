// schemes/rope/config_test.cpp — the HF config.json reader (posenc/rope_config.hpp): every fixture in
// cli/tests/data/configs end to end to the spec HF's RoPE code builds (each field against the published value),
// every error path with the config key it must name, and the YaRN / LongRoPE HF-version option.
// Not a property file: examples with known answers, so plain GoogleTest (its own program, posenc_rope_config_tests).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "posenc/error.hpp"
#include "posenc/rope_config.hpp"
#include "posenc/rope_spec.hpp"

namespace posenc {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(POSENC_CONFIG_DIR) + "/" + name);
  EXPECT_TRUE(in.good()) << "cannot read fixture " << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RopeSpec read(const std::string& json, HfVersion v = HfVersion::v5) {
  HfConfigOptions o;
  o.hf_version = v;
  return rope_spec_from_hf_config(json, o);
}

// The Error the reader throws for `json`, or a failed expectation.
Error error_of(const std::string& json, HfConfigOptions o = {}) {
  try {
    (void)rope_spec_from_hf_config(json, o);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no posenc::Error for " << json;
  return Error("", "", "", "");
}

#define EXPECT_NAMES(json, param)                                                   \
  do {                                                                              \
    const Error e_ = error_of(json);                                                \
    EXPECT_EQ(e_.parameter(), param) << e_.what();                                  \
    EXPECT_NE(std::string(e_.what()).find(param), std::string::npos) << e_.what(); \
  } while (0)

// A small Llama-like config with `extra` spliced into the top-level object.
std::string llama(const std::string& extra) {
  return R"({"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 4096)" +
         (extra.empty() ? std::string() : ", " + extra) + "}";
}

// ---- fixtures, field by field --------------------------------------------------------------------------

TEST(RopeConfig, Llama31IsLlama3ScalingOfBase500000) {
  const RopeSpec s = read(fixture("llama-3.1-8b.json"));
  EXPECT_EQ(s.layout, Layout::halves);
  EXPECT_EQ(s.regime, RopeRegime::exact);
  EXPECT_EQ(s.head_dim, 128u);  // 4096 / 32
  EXPECT_EQ(s.rotary_dim, 128u);
  EXPECT_EQ(s.base, 500000.0);
  EXPECT_EQ(s.scaling, RopeScaling::llama3);
  EXPECT_EQ(s.factor, 8.0);
  EXPECT_EQ(s.low_freq_factor, 1.0);
  EXPECT_EQ(s.high_freq_factor, 4.0);
  EXPECT_EQ(s.original_context, 8192);
  EXPECT_EQ(s.max_context, 0);
  EXPECT_EQ(s.seq_len, 0);
}

TEST(RopeConfig, Llama31InTheV5RopeParametersSpellingIsTheSameSpec) {
  EXPECT_EQ(read(fixture("llama-3.1-8b-v5.json")), read(fixture("llama-3.1-8b.json")));
  for (HfVersion v : {HfVersion::v4_56, HfVersion::v4_51, HfVersion::v4_43})
    EXPECT_EQ(read(fixture("llama-3.1-8b-v5.json"), v), read(fixture("llama-3.1-8b.json")));
}

TEST(RopeConfig, Qwen25WithTheModelCardsYarnBlock) {
  const RopeSpec s = read(fixture("qwen2.5-7b-instruct-yarn.json"));
  EXPECT_EQ(s.layout, Layout::halves);
  EXPECT_EQ(s.head_dim, 128u);  // 3584 / 28
  EXPECT_EQ(s.rotary_dim, 128u);
  EXPECT_EQ(s.base, 1000000.0);
  EXPECT_EQ(s.scaling, RopeScaling::yarn);
  EXPECT_EQ(s.factor, 4.0);
  EXPECT_EQ(s.original_context, 32768);
  EXPECT_EQ(s.beta_fast, 32.0);
  EXPECT_EQ(s.beta_slow, 1.0);
  EXPECT_EQ(s.mscale, 0.0);
  EXPECT_EQ(s.mscale_all_dim, 0.0);
  EXPECT_EQ(s.attention_factor, 0.0);  // computed: 0.1 ln 4 + 1
  EXPECT_TRUE(s.truncate);
}

TEST(RopeConfig, Phi35MiniIsLongRopeWithItsPublishedFactorLists) {
  const RopeSpec s = read(fixture("phi-3.5-mini-instruct.json"));
  EXPECT_EQ(s.layout, Layout::halves);
  EXPECT_EQ(s.head_dim, 96u);  // 3072 / 32
  EXPECT_EQ(s.rotary_dim, 96u);
  EXPECT_EQ(s.base, 10000.0);
  EXPECT_EQ(s.scaling, RopeScaling::longrope);
  EXPECT_EQ(s.original_context, 4096);  // the top-level original_max_position_embeddings
  EXPECT_EQ(s.factor, 32.0);            // 131072 / 4096: HF derives it (the config has no factor)
  EXPECT_EQ(s.attention_factor, 0.0);
  EXPECT_EQ(s.seq_len, 0);
  ASSERT_EQ(s.short_factor.size(), 48u);
  ASSERT_EQ(s.long_factor.size(), 48u);
  EXPECT_EQ(s.short_factor.front(), 1.0);
  EXPECT_EQ(s.short_factor[1], 1.0199999809265137);
  EXPECT_EQ(s.short_factor.back(), 2.8399994373321533);
  EXPECT_EQ(s.long_factor.front(), 1.0800000429153442);
  EXPECT_EQ(s.long_factor[22], 42.320003509521484);
  EXPECT_EQ(s.long_factor.back(), 64.83999633789062);
  for (HfVersion v : {HfVersion::v4_56, HfVersion::v4_51, HfVersion::v4_43})
    EXPECT_EQ(read(fixture("phi-3.5-mini-instruct.json"), v), s);  // M / T in every version
}

TEST(RopeConfig, CodeLlamaHasBaseOneMillion) {
  const RopeSpec s = read(fixture("codellama-7b.json"));
  EXPECT_EQ(s.layout, Layout::halves);
  EXPECT_EQ(s.head_dim, 128u);
  EXPECT_EQ(s.rotary_dim, 128u);
  EXPECT_EQ(s.base, 1.0e6);
  EXPECT_EQ(s.scaling, RopeScaling::none);
  EXPECT_EQ(s, without_scaling(s));
}

TEST(RopeConfig, TinyLlamaIsHalvesWithHeadDim64) {
  const RopeSpec s = read(fixture("tinyllama-1.1b-chat-v1.0.json"));
  EXPECT_EQ(s.layout, Layout::halves);
  EXPECT_EQ(s.head_dim, 64u);  // 2048 / 32
  EXPECT_EQ(s.rotary_dim, 64u);
  EXPECT_EQ(s.base, 10000.0);
  EXPECT_EQ(s.scaling, RopeScaling::none);
}

TEST(RopeConfig, Qwen2VlIsMropeSectionsOnHalves) {
  const RopeSpec s = read(fixture("qwen2-vl-7b-instruct.json"));
  EXPECT_EQ(s.layout, Layout::halves);
  EXPECT_EQ(s.head_dim, 128u);  // 3584 / 28
  EXPECT_EQ(s.rotary_dim, 128u);
  EXPECT_EQ(s.base, 1000000.0);
  EXPECT_EQ(s.scaling, RopeScaling::none);  // "mrope" is HF's "default" with sections
  EXPECT_EQ(s.mrope, RopeMrope::sections);
  EXPECT_EQ(s.mrope_section, (std::vector<std::int64_t>{16, 24, 24}));
  // HF's own spelling after loading: "default" with the sections; Qwen3-VL's interleaved sections.
  const RopeSpec d = read(llama(R"("rope_scaling": {"rope_type": "default", "mrope_section": [8, 12, 12]})"));
  EXPECT_EQ(d.mrope, RopeMrope::sections);
  const RopeSpec q3 = read(llama(R"("rope_scaling": {"rope_type": "default", "mrope_section": [12, 10, 10], "mrope_interleaved": true})"));
  EXPECT_EQ(q3.mrope, RopeMrope::interleaved);
  EXPECT_EQ(q3.mrope_section, (std::vector<std::int64_t>{12, 10, 10}));
  // "mrope" without sections, sections that do not sum to r/2, and a non-integer section name the key.
  EXPECT_NAMES(llama(R"("rope_scaling": {"type": "mrope"})"), "rope_scaling.mrope_section");
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": "default", "mrope_interleaved": true})"), "rope_scaling.mrope_section");
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": "default", "mrope_section": [16, 24, 24]})"), "rope_scaling.mrope_section");
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": "default", "mrope_section": [8, 12.5, 12]})"), "rope_scaling.mrope_section[1]");
}

TEST(RopeConfig, DeepSeekV2LiteIsInterleavedYarnOnTheRopeHead) {
  const RopeSpec s = read(fixture("deepseek-v2-lite.json"));
  EXPECT_EQ(s.layout, Layout::interleaved);
  EXPECT_EQ(s.head_dim, 64u);  // qk_rope_head_dim, not 2048 / 16
  EXPECT_EQ(s.rotary_dim, 64u);
  EXPECT_EQ(s.base, 10000.0);
  EXPECT_EQ(s.scaling, RopeScaling::yarn);
  EXPECT_EQ(s.factor, 40.0);
  EXPECT_EQ(s.original_context, 4096);
  EXPECT_EQ(s.beta_fast, 32.0);
  EXPECT_EQ(s.beta_slow, 1.0);
  EXPECT_EQ(s.mscale, 0.707);
  EXPECT_EQ(s.mscale_all_dim, 0.707);
  EXPECT_TRUE(s.truncate);
}

TEST(RopeConfig, OtherModelTypesTheirLayoutAndRotaryRule) {
  // GPT-J: n_embd / n_head (HF attribute_map), interleaved, rotary_dim 64 (also its default), base 10000.
  RopeSpec s = read(R"({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_positions": 2048, "rotary_dim": 64})");
  EXPECT_EQ(s.layout, Layout::interleaved);
  EXPECT_EQ(s.head_dim, 256u);
  EXPECT_EQ(s.rotary_dim, 64u);
  EXPECT_EQ(s.base, 10000.0);
  EXPECT_EQ(read(R"({"model_type": "gptj", "n_embd": 4096, "n_head": 16})").rotary_dim, 64u);
  EXPECT_EQ(read(R"({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": null})").rotary_dim, 256u);
  // GPT-NeoX-20B: rotary_pct 0.25 of 96, rotary_emb_base.
  s = read(R"({"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25,
               "rotary_emb_base": 10000})");
  EXPECT_EQ(s.layout, Layout::halves);
  EXPECT_EQ(s.head_dim, 96u);
  EXPECT_EQ(s.rotary_dim, 24u);
  // partial_rotary_factor (Phi-2 0.4 of 80 = 32), an explicit head_dim, DeepSeek-V3's rope_interleave.
  EXPECT_EQ(read(R"({"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4})")
                .rotary_dim,
            32u);
  EXPECT_EQ(read(llama(R"("head_dim": 128)")).head_dim, 128u);
  EXPECT_EQ(read(R"({"model_type": "deepseek_v3", "qk_rope_head_dim": 64})").layout, Layout::interleaved);
  EXPECT_EQ(read(R"({"model_type": "deepseek_v3", "qk_rope_head_dim": 64, "rope_interleave": false})").layout,
            Layout::halves);
  // rope_theta absent: HF's config classes default it to 10000.
  EXPECT_EQ(read(llama("")).base, 10000.0);
  // linear and dynamic (max_context is max_position_embeddings).
  s = read(llama(R"("rope_scaling": {"type": "linear", "factor": 2.0})"));
  EXPECT_EQ(s.scaling, RopeScaling::linear);
  EXPECT_EQ(s.factor, 2.0);
  s = read(llama(R"("rope_scaling": {"rope_type": "dynamic", "factor": 2.0})"));
  EXPECT_EQ(s.scaling, RopeScaling::dynamic);
  EXPECT_EQ(s.max_context, 4096);
  EXPECT_EQ(s.seq_len, 0);
}

TEST(RopeConfig, OptionsRegimeLayoutAndFileName) {
  HfConfigOptions o;
  o.regime = RopeRegime::hf;
  EXPECT_EQ(rope_spec_from_hf_config(fixture("tinyllama-1.1b-chat-v1.0.json"), o).regime, RopeRegime::hf);
  // An unknown model_type says nothing about the layout: an Error, unless the layout is given.
  const std::string unknown = R"({"model_type": "newmodel", "hidden_size": 256, "num_attention_heads": 4})";
  EXPECT_NAMES(unknown, "model_type");
  o.layout = Layout::interleaved;
  EXPECT_EQ(rope_spec_from_hf_config(unknown, o).layout, Layout::interleaved);
  EXPECT_EQ(rope_spec_from_hf_config(fixture("llama-3.1-8b.json"), o).layout, Layout::interleaved);
  HfConfigOptions named;
  named.file = "my/config.json";
  try {
    (void)rope_spec_from_hf_config(unknown, named);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "my/config.json");
    EXPECT_EQ(std::string(e.what()).rfind("my/config.json: model_type = \"newmodel\"", 0), 0u) << e.what();
  }
}

// ---- errors name the key as written ---------------------------------------------------------------------

TEST(RopeConfig, UnknownOrUnreadKeysInsideRopeScalingAreErrors) {
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": "linear", "facter": 2.0})"), "rope_scaling.facter");
  EXPECT_NAMES(llama(R"("rope_parameters": {"rope_type": "linear", "factor": 2.0, "beta": 1})"), "rope_parameters.beta");
  // A key HF reads for another rope_type (HF warns "Unrecognized keys" and ignores it).
  EXPECT_NAMES(llama(R"("rope_scaling": {"type": "yarn", "factor": 2.0, "low_freq_factor": 1.0})"),
               "rope_scaling.low_freq_factor");
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": "ntk-by-parts", "factor": 2.0})"), "rope_scaling.rope_type");
  // ...but a top-level key that is not about RoPE is ignored.
  EXPECT_EQ(read(llama(R"("facter": 3, "vision_config": {"x": 1})")).scaling, RopeScaling::none);
}

TEST(RopeConfig, TwoSpellingsThatDisagreeAreAnErrorNamingBoth) {
  Error e = error_of(llama(R"("rope_scaling": {"type": "linear", "rope_type": "dynamic", "factor": 2.0})"));
  EXPECT_EQ(e.parameter(), "rope_scaling.type") << e.what();
  EXPECT_NE(std::string(e.what()).find("rope_scaling.rope_type"), std::string::npos) << e.what();
  e = error_of(llama(R"("rope_scaling": {"type": "linear", "factor": 2.0},
                        "rope_parameters": {"rope_type": "linear", "factor": 4.0})"));
  EXPECT_EQ(e.parameter(), "rope_parameters.factor") << e.what();
  EXPECT_NE(std::string(e.what()).find("rope_scaling.factor"), std::string::npos) << e.what();
  e = error_of(llama(R"("rope_theta": 10000, "rope_parameters": {"rope_type": "default", "rope_theta": 500000})"));
  EXPECT_EQ(e.parameter(), "rope_theta") << e.what();
  EXPECT_NE(std::string(e.what()).find("rope_parameters.rope_theta"), std::string::npos) << e.what();
  // Agreeing spellings are fine (v5 writes rope_theta inside, old code outside).
  EXPECT_EQ(read(llama(R"("rope_theta": 5e5, "rope_scaling": {"type": "linear", "rope_type": "linear", "factor": 2},
                          "rope_parameters": {"rope_type": "linear", "rope_theta": 500000.0, "factor": 2.0})"))
                .base,
            500000.0);
}

TEST(RopeConfig, InconsistentValuesNameTheirKey) {
  // LongRoPE lists must have rotary_dim / 2 entries (96 / 2 = 48 for Phi-3.5).
  std::string phi = fixture("phi-3.5-mini-instruct.json");
  const auto at = phi.find("\"short_factor\": [") + std::string("\"short_factor\": [").size();
  phi.erase(at, phi.find(',', at) + 1 - at);  // drop the first entry: 47 left
  EXPECT_NAMES(phi, "rope_scaling.short_factor");
  // hidden_size must split into the heads (HF's // would truncate).
  EXPECT_NAMES(R"({"model_type": "llama", "hidden_size": 100, "num_attention_heads": 3})", "hidden_size");
  // DeepSeek: head_dim and qk_rope_head_dim disagreeing.
  EXPECT_NAMES(R"({"model_type": "deepseek_v2", "qk_rope_head_dim": 64, "head_dim": 128})", "head_dim");
  // An odd rotary dimension from partial_rotary_factor: int(80 * 0.3125) = 25.
  EXPECT_NAMES(llama(R"("head_dim": 80, "partial_rotary_factor": 0.3125)"), "partial_rotary_factor");
  // Out-of-range values are reported under the config key (validate() names the spec field).
  EXPECT_NAMES(llama(R"("rope_theta": 0.5)"), "rope_theta");
  EXPECT_NAMES(llama(R"("rope_scaling": {"type": "linear", "factor": 0.5})"), "rope_scaling.factor");
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4,
                        "high_freq_factor": 1, "original_max_position_embeddings": 8192})"),
               "rope_scaling.high_freq_factor");
  EXPECT_NAMES(llama(R"("rope_scaling": {"type": "yarn", "factor": 4, "attention_factor": 0})"),
               "rope_scaling.attention_factor");
  EXPECT_NAMES(R"({"model_type": "llama", "head_dim": 7})", "head_dim");
}

TEST(RopeConfig, MissingRequiredFieldsNameThem) {
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": "llama3", "factor": 8, "high_freq_factor": 4,
                        "original_max_position_embeddings": 8192})"),
               "rope_scaling.low_freq_factor");
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": "linear"})"), "rope_scaling.factor");
  EXPECT_NAMES(R"({"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
                   "rope_scaling": {"rope_type": "dynamic", "factor": 2}})",
               "max_position_embeddings");
  EXPECT_NAMES(R"({"model_type": "llama", "num_attention_heads": 4})", "hidden_size");
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": "longrope", "short_factor": [1, 1]})"), "rope_scaling.long_factor");
  HfConfigOptions old;
  old.hf_version = HfVersion::v4_56;
  EXPECT_EQ(error_of(llama(R"("rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1,
                              "high_freq_factor": 4})"),
                     old)
                .parameter(),
            "rope_scaling.original_max_position_embeddings");
}

TEST(RopeConfig, WrongJsonTypesNameTheKey) {
  EXPECT_NAMES(llama(R"("rope_theta": "10000")"), "rope_theta");
  EXPECT_NAMES(llama(R"("head_dim": 128.5)"), "head_dim");
  EXPECT_NAMES(llama(R"("rope_scaling": "linear")"), "rope_scaling");
  EXPECT_NAMES(llama(R"("rope_scaling": {"rope_type": 3, "factor": 2})"), "rope_scaling.rope_type");
  EXPECT_NAMES(llama(R"("rope_scaling": {"type": "yarn", "factor": 2, "truncate": "no"})"), "rope_scaling.truncate");
  EXPECT_NAMES(llama(R"("rope_scaling": {"type": "yarn", "factor": true})"), "rope_scaling.factor");
  std::string phi = fixture("phi-3.5-mini-instruct.json");
  phi.replace(phi.find("2.8399994373321533"), 18, "\"2.84\"");
  EXPECT_NAMES(phi, "rope_scaling.short_factor[47]");
  EXPECT_NAMES(R"({"model_type": "llama", "hidden_size": 256,)", "config");  // not JSON
  // a number beyond double: nlohmann throws out_of_range while parsing (found by fuzz/hf_config_fuzz)
  EXPECT_NAMES(R"({"model_type": "llama", "hidden_size": 1E1111111111})", "config");
  EXPECT_NAMES(R"([{"model_type": "llama"}])", "config");                    // not an object
  EXPECT_NAMES(R"({"model_type": 7, "hidden_size": 256, "num_attention_heads": 4})", "model_type");
}

// ---- the HF-version option (CONVENTIONS.md §2.11 "Version differences for L0") -----------------------------

TEST(RopeConfig, YarnOriginalContextAndFactorPerHfVersion) {
  // max_position_embeddings 16384 != original 4096, and factor 8 != 16384 / 4096 = 4: every rule differs.
  const std::string c =
      R"({"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 16384,
          "rope_scaling": {"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096,
                           "mscale": 1.0, "mscale_all_dim": 0.5}})";
  struct Want {
    HfVersion v;
    std::int64_t l0;
    double factor, mscale;
  };
  for (const Want w : {Want{HfVersion::v5, 4096, 8.0, 1.0}, Want{HfVersion::v4_56, 4096, 8.0, 1.0},
                       Want{HfVersion::v4_51, 4096, 4.0, 1.0}, Want{HfVersion::v4_43, 16384, 8.0, 0.0}}) {
    const RopeSpec s = read(c, w.v);
    EXPECT_EQ(s.original_context, w.l0) << to_string(w.v);
    EXPECT_EQ(s.factor, w.factor) << to_string(w.v);
    EXPECT_EQ(s.mscale, w.mscale) << to_string(w.v);  // 4.43-4.50 do not read mscale
  }
  // The fixtures: Qwen2.5's block scales by 32768 / 32768 = 1 under 4.51-4.55 (HF issue #38224).
  EXPECT_EQ(read(fixture("qwen2.5-7b-instruct-yarn.json"), HfVersion::v4_51).factor, 1.0);
  EXPECT_EQ(read(fixture("qwen2.5-7b-instruct-yarn.json"), HfVersion::v4_43).factor, 4.0);
  const RopeSpec ds = read(fixture("deepseek-v2-lite.json"), HfVersion::v4_43);
  EXPECT_EQ(ds.original_context, 163840);
  EXPECT_EQ(ds.mscale, 0.0);
  EXPECT_EQ(ds.mscale_all_dim, 0.0);
  // v5: a null factor is derived from the lengths; 4.x needs it. v5 also gives a top-level original priority.
  const std::string null_factor =
      R"({"model_type": "qwen2", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 16384,
          "rope_scaling": {"type": "yarn", "factor": null, "original_max_position_embeddings": 4096}})";
  EXPECT_EQ(read(null_factor).factor, 4.0);
  HfConfigOptions old;
  old.hf_version = HfVersion::v4_56;
  EXPECT_EQ(error_of(null_factor, old).parameter(), "rope_scaling.factor");
  const std::string top_level = llama(R"("original_max_position_embeddings": 2048,
                                         "rope_scaling": {"type": "yarn", "factor": 2.0})");
  EXPECT_EQ(read(top_level).original_context, 2048);
  EXPECT_EQ(read(top_level, HfVersion::v4_56).original_context, 4096);
}

TEST(RopeConfig, LongRopeFactorPerHfVersion) {
  // An explicit factor and a top-level original: 4.x replace the factor by M / T, v5 keeps it.
  const std::string cfg =
      llama(R"("head_dim": 4, "original_max_position_embeddings": 1024,
               "rope_scaling": {"type": "longrope", "factor": 2.0, "short_factor": [1, 1], "long_factor": [3, 4]})");
  EXPECT_EQ(read(cfg).factor, 2.0);
  EXPECT_EQ(read(cfg).original_context, 1024);
  EXPECT_EQ(read(cfg, HfVersion::v4_56).factor, 4.0);  // 4096 / 1024
  // Without a top-level original: v5 reads rope_scaling's, 4.x use max_position_embeddings and the factor.
  const std::string inner = llama(R"("head_dim": 4, "rope_scaling": {"type": "longrope", "factor": 2.0,
                                     "original_max_position_embeddings": 1024,
                                     "short_factor": [1, 1], "long_factor": [3, 4]})");
  EXPECT_EQ(read(inner).original_context, 1024);
  EXPECT_EQ(read(inner, HfVersion::v4_51).original_context, 4096);
  EXPECT_EQ(read(inner, HfVersion::v4_51).factor, 2.0);
}

TEST(RopeConfig, HfVersionNamesReadBack) {
  for (const auto& e : EnumTraits<HfVersion>::values) EXPECT_EQ(enum_from_string<HfVersion>(e.name), e.value);
  EXPECT_EQ(enum_from_string<HfVersion>("4.51-4.55"), HfVersion::v4_51);
  EXPECT_FALSE(enum_from_string<HfVersion>("4.46"));
}

}  // namespace
}  // namespace posenc
