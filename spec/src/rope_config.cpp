// rope_config.cpp — an HF config.json to a RopeSpec (posenc/rope_config.hpp says what is read and why).
//
// Sources (huggingface/transformers, src/transformers/modeling_rope_utils.py unless named):
//   [A]  @ef46806472a64b0013ed413781e3afed82bfa047 (also @0044e3b3facff1a1ad60b235c69d5b45beae75a4, the first version
//        read: the 4.43/4.44 era, "will be removed in v4.45" in its docstrings): _compute_yarn_parameters with
//        L0 = config.max_position_embeddings and the factor as written; _compute_longrope_parameters with
//        `if hasattr(config, "original_max_position_embeddings"): factor = max_position_embeddings / original`;
//        _compute_dynamic_ntk_parameters with max_position_embeddings; _compute_llama3_parameters reading
//        factor, low_freq_factor, high_freq_factor, original_max_position_embeddings from rope_scaling;
//        head_dim = getattr(config, "head_dim", hidden_size // num_attention_heads); int(head_dim *
//        partial_rotary_factor); beta_fast/beta_slow `or 32` / `or 1`; _check_received_keys: "type" is the BC
//        spelling of "rope_type". Issue #33783 (2024-09-28) quotes the same yarn code at @2e24ee4d.
//   [B]  the ratio override `if "original_max_position_embeddings" in config.rope_scaling: original = ...;
//        factor = config.max_position_embeddings / original` with mscale/mscale_all_dim (the DeepSeek-V3 note):
//        issue #38224 (2025-05-20) cites @f022bf93220d2c19df68647b4ddcfc5b0e91d011 lines 251-267, removed by PR #40320;
//        read in a copy at kcirred/transformers@8fd7be98b3d9ae05994435a91803a7ce26cb0243 (find_correction_range
//        on original_max_position_embeddings).
//   [C]  PR #40320 "[RoPE] explicit factor > implicit factor in YaRN" (merged 2025-08-21): original =
//        rope_scaling.get("original_max_position_embeddings") or max_position_embeddings, factor as written, a
//        warning when they disagree; truncate (gpt-oss) read as rope_scaling.get("truncate", True).
//   [D]  v5, read at fwerkor/transformers@ff9206d01bde3d1077f34fedae9015d5f8aff2a6 (a fork tracking HF main):
//        standardize_rope_params (for llama3/yarn/longrope: a top-level original_max_position_embeddings takes
//        priority, else rope_parameters.setdefault("original_max_position_embeddings", max_position_embeddings));
//        _compute_yarn_parameters / _compute_longrope_parameters (`if factor is None: factor = max_pos / original`);
//        _validate_*_rope_parameters (yarn: factor and original required; longrope: short/long factor, original).
//   [E]  models/deepseek_v3/configuration_deepseek_v3.py @001f85b38fb432858ace93f18622f07cec46d874:
//        head_dim = qk_rope_head_dim (default 64), rope_interleave default True, `rope_scaling or rope_parameters`.
//        models/deepseek_v2/modular_deepseek_v2.py (DeepseekV2RotaryEmbedding: torch.polar freqs_cis, applied to
//        complex (2k, 2k+1) pairs). models/gptj/configuration_gptj.py GPTJConfig: rotary_dim=64, attribute_map
//        n_embd / n_head / n_positions.
#include "posenc/rope_config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/json_text.hpp"

namespace posenc {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 19> kHalvesModels = {
    "llama", "mistral", "mixtral", "qwen2",    "qwen2_moe", "qwen3",      "qwen3_moe", "phi",     "phi3",     "gemma",
    "gemma2", "gpt_neox", "stablelm", "starcoder2", "olmo",   "olmo2", "granite", "persimmon", "qwen2_vl"};

// Keys HF reads inside rope_scaling / rope_parameters, per rope_type ([A] _validate_*, [D] _validate_*_rope_parameters).
// rope_type, rope_theta and partial_rotary_factor may appear with any type (v5 moves the latter two in).
const std::map<std::string, std::vector<std::string>, std::less<>>& keys_of_type() {
  static const std::map<std::string, std::vector<std::string>, std::less<>> m{
      {"default", {}},
      {"linear", {"factor"}},
      {"dynamic", {"factor", "original_max_position_embeddings"}},
      {"yarn",
       {"factor", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
        "original_max_position_embeddings", "truncate"}},
      {"llama3", {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}},
      {"longrope", {"short_factor", "long_factor", "factor", "attention_factor", "original_max_position_embeddings"}},
  };
  return m;
}
// Keys read whatever the rope_type (the multimodal ones: Qwen2-VL mrope_section, Qwen3-VL mrope_interleaved).
constexpr std::array<std::string_view, 5> kAnyTypeKeys = {"rope_type", "rope_theta", "partial_rotary_factor",
                                                          "mrope_section", "mrope_interleaved"};

// A value of the config as an error message shows it: a short, escaped excerpt (posenc/json_text.hpp).
std::string short_dump(const Json& v) { return json_excerpt(v); }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "(none)" : out;
}

// One value of the config with the name it was written under ("rope_scaling.factor", "max_position_embeddings").
struct Item {
  const Json* value = nullptr;  // nullptr: absent; JSON null counts as absent (HF's .get() / `or` give None)
  std::string name;
  explicit operator bool() const { return value != nullptr; }
};

class Reader {
 public:
  Reader(const Json& root, const HfConfigOptions& opt)
      : root_(root), opt_(opt), where_(opt.file.empty() ? std::string("HF config") : opt.file) {}

  RopeSpec read() {
    model_type_ = text_of(top("model_type"));
    collect_rope_dict();
    const RopeMrope mrope = mrope_kind();
    rope_type_ = rope_type();
    check_keys();

    RopeSpec s;
    s.regime = opt_.regime;
    s.base = base();
    s.head_dim = head_dim();
    s.rotary_dim = rotary_dim(s.head_dim);
    s.layout = layout();
    scaling(s);
    if (mrope != RopeMrope::none) {
      s.mrope = mrope;
      s.mrope_section = integers(rope("mrope_section"));
      from_["mrope_section"] = rope("mrope_section").name;
    }
    validate_renamed(s);
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& parameter, const std::string& value, const std::string& accepted,
                         const std::string& problem) const {
    throw Error(where_, text_excerpt(parameter), value, accepted, problem);  // keys are the config's own text
  }

  Item top(const std::string& key) const {
    const auto it = root_.find(key);
    if (it == root_.end() || it->is_null()) return {nullptr, key};
    return {&*it, key};
  }
  Item rope(const std::string& key) const {
    const auto it = rope_.find(key);
    if (it == rope_.end() || it->second.value->is_null()) return {nullptr, prefix_ + "." + key};
    return it->second;
  }

  // ---- typed values ----
  std::string text_of(const Item& i) const {
    if (!i) return {};
    if (!i.value->is_string()) fail(i.name, short_dump(*i.value), "a JSON string", "has the wrong JSON type");
    return i.value->get<std::string>();
  }
  double real(const Item& i) const {
    if (!i.value->is_number() || i.value->is_boolean())
      fail(i.name, short_dump(*i.value), "a JSON number", "has the wrong JSON type");
    return i.value->get<double>();
  }
  std::int64_t integer(const Item& i) const {
    if (!i.value->is_number_integer())
      fail(i.name, short_dump(*i.value), "a JSON integer (no fraction, no exponent)", "has the wrong JSON type");
    if (i.value->is_number_unsigned() && i.value->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      fail(i.name, short_dump(*i.value), "an integer below 2^63", "is out of range");
    return i.value->get<std::int64_t>();
  }
  std::int64_t positive(const Item& i) const {
    const std::int64_t v = integer(i);
    if (v <= 0) fail(i.name, std::to_string(v), "an integer >= 1", "is out of range");
    return v;
  }
  bool boolean(const Item& i) const {
    if (!i.value->is_boolean()) fail(i.name, short_dump(*i.value), "true | false", "has the wrong JSON type");
    return i.value->get<bool>();
  }
  std::vector<double> reals(const Item& i) const {
    if (!i.value->is_array()) fail(i.name, short_dump(*i.value), "a JSON array of numbers", "has the wrong JSON type");
    std::vector<double> out;
    for (std::size_t k = 0; k < i.value->size(); ++k) {
      const Json& e = (*i.value)[k];
      if (!e.is_number() || e.is_boolean())
        fail(i.name + "[" + std::to_string(k) + "]", short_dump(e), "a JSON number", "has the wrong JSON type");
      out.push_back(e.get<double>());
    }
    return out;
  }
  Item required(const Item& i, const std::string& why) const {
    if (!i) fail(i.name, "(missing)", "a value: " + why, "is missing");
    return i;
  }
  // Two spellings of one value: both present must agree; the first present is returned.
  Item agreeing(const Item& a, const Item& b) const {
    if (a && b && *a.value != *b.value)
      fail(a.name, short_dump(*a.value), "the same value as " + b.name + " (or only one of them)",
           "disagrees with " + b.name + " = " + short_dump(*b.value));
    return a ? a : b;
  }

  // ---- the rope dictionary: rope_scaling and/or rope_parameters, "type" read as "rope_type" ----
  void collect_rope_dict() {
    const Item rs = top("rope_scaling"), rp = top("rope_parameters");
    prefix_ = rs ? "rope_scaling" : rp ? "rope_parameters" : "rope_scaling";
    for (const Item& d : {rs, rp}) {
      if (!d) continue;
      if (!d.value->is_object())
        fail(d.name, short_dump(*d.value), "a JSON object {\"rope_type\": ..., ...} or null", "has the wrong JSON type");
      for (auto it = d.value->begin(); it != d.value->end(); ++it) {
        if (it.value().is_object())  // v5 per-layer-type parameters (e.g. Gemma 3 sliding/full attention)
          fail(d.name + "." + it.key(), short_dump(it.value()),
               "one set of RoPE parameters (a per-layer-type rope_parameters is not read yet)",
               "is a nested object");
        const std::string key = it.key() == "type" ? "rope_type" : it.key();
        const Item here{&it.value(), d.name + "." + it.key()};
        const auto found = rope_.find(key);
        if (found == rope_.end()) {
          rope_.emplace(key, here);
        } else {
          // [A] _check_received_keys / [E] `rope_scaling or rope_parameters`: HF picks one silently; posenc
          // refuses two spellings that disagree.
          (void)agreeing(here, found->second);
        }
      }
    }
  }

  // M-RoPE (CONVENTIONS.md §2.16): Qwen2-VL writes {"type": "mrope", "mrope_section": [16, 24, 24]} (its config
  // class turns "mrope" into "default" and keeps the sections: HF configuration_qwen2_vl.py), Qwen2.5-VL
  // {"type": "mrope", ...} likewise, Qwen3-VL {"rope_type": "default", "mrope_section": [24, 20, 20],
  // "mrope_interleaved": true} (apply_interleaved_mrope). The sections say the kind; rope_type "mrope" is "default".
  RopeMrope mrope_kind() {
    const Item sec = rope("mrope_section"), inter = rope("mrope_interleaved"), t = rope("rope_type");
    const bool named = t && t.value->is_string() && t.value->get<std::string>() == "mrope";
    if (named) rope_.erase("rope_type");  // read as "default"
    if (!sec) {
      if (named || inter)
        fail(prefix_ + ".mrope_section", "(missing)", "3 integers (t, h, w pairs) summing to rotary_dim / 2",
             "is missing: " + (named ? t.name + " = \"mrope\"" : inter.name) + " asks for M-RoPE");
      return RopeMrope::none;
    }
    return inter && boolean(inter) ? RopeMrope::interleaved : RopeMrope::sections;
  }
  std::vector<std::int64_t> integers(const Item& i) const {
    if (!i.value->is_array()) fail(i.name, short_dump(*i.value), "a JSON array of integers", "has the wrong JSON type");
    std::vector<std::int64_t> out;
    for (std::size_t k = 0; k < i.value->size(); ++k) out.push_back(integer(Item{&(*i.value)[k], i.name + "[" + std::to_string(k) + "]"}));
    return out;
  }

  std::string rope_type() const {
    const Item t = rope("rope_type");
    if (!t) return "default";
    const std::string name = text_of(t);
    if (!keys_of_type().count(name))
      fail(t.name, "\"" + name + "\"",
           "default | linear | dynamic | yarn | llama3 | longrope (HF ROPE_INIT_FUNCTIONS that posenc reads)",
           "is not a rope_type posenc reads");
    return name;
  }

  // Every key must be one HF reads for this rope_type ([A] _check_received_keys warns "Unrecognized keys" and
  // ignores the rest; posenc refuses it, since a typo would otherwise change nothing silently).
  void check_keys() const {
    const auto& own = keys_of_type().at(rope_type_);
    for (const auto& [key, item] : rope_) {
      if (std::find(kAnyTypeKeys.begin(), kAnyTypeKeys.end(), key) != kAnyTypeKeys.end()) continue;
      if (std::find(own.begin(), own.end(), key) != own.end()) continue;
      bool known = false;
      for (const auto& [type, keys] : keys_of_type()) known |= std::find(keys.begin(), keys.end(), key) != keys.end();
      const std::string accepted = "the keys of rope_type " + rope_type_ + ": rope_type (or type), rope_theta, " +
                                   "partial_rotary_factor" + (own.empty() ? "" : ", " + join(own));
      if (!known) fail(item.name, short_dump(*item.value), accepted, "is not a key HF reads for RoPE (a typo?)");
      fail(item.name, short_dump(*item.value), accepted,
           "is not read by rope_type " + rope_type_ + " (HF warns \"Unrecognized keys\" and ignores it)");
    }
  }

  // ---- base, head_dim, rotary_dim, layout ----
  double base() {
    Item b = agreeing(top("rope_theta"), rope("rope_theta"));
    if (model_type_ == "gpt_neox") b = agreeing(b.value ? b : top("rotary_emb_base"), top("rotary_emb_base"));
    from_["base"] = b ? b.name : "rope_theta (absent: HF's config classes default it to 10000)";
    return b ? real(b) : 10000.0;
  }

  std::size_t head_dim() {
    const bool gptj = model_type_ == "gptj";
    if (model_type_ == "deepseek_v2" || model_type_ == "deepseek_v3") {
      // [E]: the rotary part of a query is qk_rope_head_dim wide; HF sets config.head_dim to it.
      const Item q = top("qk_rope_head_dim"), h = top("head_dim");
      const std::int64_t r = q ? positive(q) : 64;
      if (h && positive(h) != r)
        fail(h.name, short_dump(*h.value), "qk_rope_head_dim (" + std::to_string(r) + ", the rotated part of a head)",
             "disagrees with qk_rope_head_dim (HF's DeepseekV3Config sets head_dim = qk_rope_head_dim)");
      from_["head_dim"] = q ? q.name : "qk_rope_head_dim (absent: HF default 64)";
      return static_cast<std::size_t>(r);
    }
    if (const Item h = top("head_dim")) {
      from_["head_dim"] = h.name;
      return static_cast<std::size_t>(positive(h));
    }
    const Item hs = required(gptj ? agreeing(top("n_embd"), top("hidden_size")) : top("hidden_size"),
                             "head_dim = hidden_size / num_attention_heads when head_dim is not given");
    const Item nh = required(gptj ? agreeing(top("n_head"), top("num_attention_heads")) : top("num_attention_heads"),
                             "head_dim = hidden_size / num_attention_heads when head_dim is not given");
    const std::int64_t h = positive(hs), n = positive(nh);
    if (h % n != 0)
      fail(hs.name, std::to_string(h), "a multiple of " + nh.name + " = " + std::to_string(n) + ", or a head_dim",
           "does not split into " + std::to_string(n) + " heads (HF's // would truncate " + std::to_string(h) + " / " +
               std::to_string(n) + ")");
    from_["head_dim"] = hs.name + " / " + nh.name;
    return static_cast<std::size_t>(h / n);
  }

  std::size_t rotary_dim(std::size_t head_dim) {
    if (model_type_ == "gptj") {
      // GPTJConfig(rotary_dim=64); null: the whole head (modeling_gptj.py: `self.rotary_dim or self.embed_dim`).
      const auto it = root_.find("rotary_dim");
      from_["rotary_dim"] = "rotary_dim";
      if (it == root_.end()) {
        from_["rotary_dim"] = "rotary_dim (absent: HF default 64)";
        return 64;
      }
      if (it->is_null()) return head_dim;
      return static_cast<std::size_t>(positive({&*it, "rotary_dim"}));
    }
    Item f = agreeing(top("partial_rotary_factor"), rope("partial_rotary_factor"));
    double fraction = 1.0;
    if (model_type_ == "gpt_neox") {  // GPTNeoXConfig(rotary_pct=0.25)
      f = agreeing(f.value ? f : top("rotary_pct"), top("rotary_pct"));
      fraction = 0.25;
    }
    if (f) fraction = real(f);
    from_["rotary_dim"] = f ? f.name : fraction == 1.0 ? from_["head_dim"] : "rotary_pct (absent: HF default 0.25)";
    if (fraction == 1.0 && head_dim % 2 != 0)  // HF: arange(0, r, 2) / r with r odd is not a rotation of pairs
      fail(from_["head_dim"], std::to_string(head_dim),
           "an even head_dim (all of it rotates, in pairs), or a partial_rotary_factor giving an even rotary_dim",
           "is odd");
    if (!f && fraction == 1.0) return head_dim;
    try {
      return rotary_dim_from_factor(head_dim, fraction);
    } catch (const Error& e) {
      if (e.parameter() == "partial_rotary_factor")
        fail(f ? f.name : "rotary_pct (absent: HF default 0.25)", e.value(), e.accepted(), e.problem());
      fail(from_["head_dim"], e.value(), e.accepted(), e.problem());
    }
  }

  Layout layout() const {
    if (opt_.layout) return *opt_.layout;
    if (model_type_ == "gptj" || model_type_ == "deepseek_v2") return Layout::interleaved;
    if (model_type_ == "deepseek_v3") {
      const Item i = top("rope_interleave");
      return !i || boolean(i) ? Layout::interleaved : Layout::halves;
    }
    if (std::find(kHalvesModels.begin(), kHalvesModels.end(), model_type_) != kHalvesModels.end()) return Layout::halves;
    std::string known;
    for (std::string_view m : kHalvesModels) known += std::string(known.empty() ? "" : " ") + std::string(m);
    fail("model_type", model_type_.empty() ? "(missing)" : "\"" + model_type_ + "\"",
         "a model_type whose layout posenc knows (halves: " + known +
             "; interleaved: gptj deepseek_v2 deepseek_v3), or the layout given explicitly (--layout)",
         "does not say which channels pair up");
  }

  // ---- scaling ----
  double number(const std::string& key) { return real(rope(key)); }
  std::int64_t context(const Item& i) const { return positive(i); }

  // The factor as written (required unless `may_derive`), recorded for renaming.
  std::optional<double> written_factor(bool may_derive) {
    const auto it = rope_.find("factor");
    if (it != rope_.end() && !it->second.value->is_null()) {
      from_["factor"] = it->second.name;
      return real(it->second);
    }
    if (!(may_derive && it != rope_.end()))  // [D]: a null factor is derived; a missing one is a KeyError
      fail(prefix_ + ".factor", it == rope_.end() ? "(missing)" : "null",
           may_derive ? "a number, or null to derive it as max_position_embeddings / original_max_position_embeddings"
                      : "a number >= 1 (HF reads rope_scaling[\"factor\"])",
           "is missing");
    return std::nullopt;
  }
  double derived_factor(const Item& m, std::int64_t l0, const std::string& l0_name) {
    const Item mm = required(m, "the factor is derived as max_position_embeddings / " + l0_name);
    const std::int64_t mv = context(mm);
    from_["factor"] = "factor (derived: " + mm.name + " / " + l0_name + " = " + std::to_string(mv) + " / " +
                      std::to_string(l0) + ")";
    return static_cast<double>(mv) / static_cast<double>(l0);  // Python's true division of two ints
  }

  void scaling(RopeSpec& s) {
    from_["scaling"] = rope("rope_type").name;
    const HfVersion v = opt_.hf_version;
    const bool v5 = v == HfVersion::v5;
    const bool gptj_names = model_type_ == "gptj" && !top("max_position_embeddings");  // GPTJConfig attribute_map
    const Item M = top(gptj_names ? "n_positions" : "max_position_embeddings");
    const Item T = top("original_max_position_embeddings"), O = rope("original_max_position_embeddings");
    if (rope_type_ == "default") return;

    if (rope_type_ == "linear") {
      s.scaling = RopeScaling::linear;
      s.factor = *written_factor(false);
      return;
    }
    if (rope_type_ == "dynamic") {  // [A], [D]: max_position_embeddings; rope_scaling's original is not used
      s.scaling = RopeScaling::dynamic;
      s.factor = *written_factor(false);
      const Item m = required(M, "dynamic NTK grows the base beyond max_position_embeddings");
      s.max_context = context(m);
      from_["max_context"] = m.name;
      return;
    }
    if (rope_type_ == "llama3") {
      s.scaling = RopeScaling::llama3;
      s.factor = *written_factor(false);
      for (const char* k : {"low_freq_factor", "high_freq_factor"})
        (void)required(rope(k), "llama3 reads " + std::string(k) + " from " + prefix_ + " (HF KeyError otherwise)");
      s.low_freq_factor = number("low_freq_factor");
      s.high_freq_factor = number("high_freq_factor");
      from_["low_freq_factor"] = rope("low_freq_factor").name;
      from_["high_freq_factor"] = rope("high_freq_factor").name;
      // [D] standardize_rope_params: top-level first, then rope_parameters, then max_position_embeddings;
      // [A]: rope_scaling["original_max_position_embeddings"] (KeyError otherwise).
      const Item l0 = v5 ? (T ? T : O ? O : M) : required(O, "llama3 reads it from " + prefix_);
      s.original_context = context(required(l0, "the original context of llama3"));
      from_["original_context"] = l0.name;
      return;
    }
    if (rope_type_ == "yarn") {
      s.scaling = RopeScaling::yarn;
      yarn(s, v, M, T, O);
      return;
    }
    if (rope_type_ == "longrope") {
      s.scaling = RopeScaling::longrope;
      longrope(s, v, M, T, O);
      return;
    }
  }

  void attention_factor(RopeSpec& s) {
    const Item a = rope("attention_factor");
    if (!a) return;
    const double x = real(a);
    if (!(x > 0.0))  // HF multiplies cos and sin by it as given; posenc's 0 means "compute it"
      fail(a.name, format_real(x), "a real > 0 (or null / absent: computed from the factor)",
           "would zero or flip cos and sin");
    s.attention_factor = x;
    from_["attention_factor"] = a.name;
  }

  void yarn(RopeSpec& s, HfVersion v, const Item& M, const Item& T, const Item& O) {
    Item l0;
    switch (v) {
      case HfVersion::v5: {  // [D]
        l0 = T ? T : O ? O : required(M, "the original context of yarn (no original_max_position_embeddings)");
        s.original_context = context(l0);
        const auto f = written_factor(true);
        s.factor = f ? *f : derived_factor(M, s.original_context, l0.name);
        break;
      }
      case HfVersion::v4_56:  // [C]
        l0 = O ? O : required(M, "the original context of yarn (no " + O.name + ")");
        s.original_context = context(l0);
        s.factor = *written_factor(false);
        break;
      case HfVersion::v4_51:  // [B]: the factor as written is read first (KeyError), then replaced when O is given
        s.factor = *written_factor(false);
        l0 = O ? O : required(M, "the original context of yarn (no " + O.name + ")");
        s.original_context = context(l0);
        if (O) s.factor = derived_factor(M, s.original_context, O.name);
        break;
      case HfVersion::v4_43:  // [A]
        l0 = required(M, "HF 4.43-4.50 take the original context of yarn from max_position_embeddings");
        s.original_context = context(l0);
        s.factor = *written_factor(false);
        break;
    }
    from_["original_context"] = l0.name;
    attention_factor(s);
    // beta_fast / beta_slow: `rope_scaling.get("beta_fast") or 32` — null and 0 both mean the default.
    if (const Item b = rope("beta_fast"); b && real(b) != 0.0) s.beta_fast = real(b), from_["beta_fast"] = b.name;
    if (const Item b = rope("beta_slow"); b && real(b) != 0.0) s.beta_slow = real(b), from_["beta_slow"] = b.name;
    if (v == HfVersion::v4_43) return;  // [A] reads neither mscale, mscale_all_dim nor truncate
    if (const Item m = rope("mscale")) s.mscale = real(m), from_["mscale"] = m.name;
    if (const Item m = rope("mscale_all_dim")) s.mscale_all_dim = real(m), from_["mscale_all_dim"] = m.name;
    if (const Item t = rope("truncate")) s.truncate = boolean(t);
  }

  void longrope(RopeSpec& s, HfVersion v, const Item& M, const Item& T, const Item& O) {
    for (const char* k : {"short_factor", "long_factor"})
      (void)required(rope(k), "longrope divides theta_k by " + std::string(k) + "[k] (HF KeyError otherwise)");
    for (const char* k : {"short_factor", "long_factor"}) {
      const Item i = rope(k);
      std::vector<double> list = reals(i);
      if (list.size() != s.rotary_dim / 2)
        fail(i.name, "a list of " + std::to_string(list.size()) + " numbers",
             "a list of rotary_dim / 2 = " + std::to_string(s.rotary_dim / 2) + " numbers, one per rotated pair",
             "has the wrong length");
      (std::string(k) == "short_factor" ? s.short_factor : s.long_factor) = std::move(list);
      from_[k] = i.name;
    }
    attention_factor(s);
    Item l0;
    if (v == HfVersion::v5) {  // [D]
      l0 = T ? T : O ? O : required(M, "the original context of longrope");
      s.original_context = context(l0);
      const auto it = rope_.find("factor");
      const auto f = it != rope_.end() && !it->second.value->is_null() ? written_factor(false) : std::nullopt;
      s.factor = f ? *f : derived_factor(M, s.original_context, l0.name);
    } else if (T) {  // [A]: the top-level original replaces the factor; rope_scaling's original is not read
      l0 = T;
      s.original_context = context(l0);
      s.factor = derived_factor(M, s.original_context, T.name);
    } else {
      l0 = required(M, "the original context of longrope (no top-level original_max_position_embeddings)");
      s.original_context = context(l0);
      const auto it = rope_.find("factor");
      if (it != rope_.end() && !it->second.value->is_null()) s.factor = *written_factor(false);
      else if (s.attention_factor == 0.0)  // [A] compares None <= 1.0 and fails
        fail(prefix_ + ".factor", "(missing)",
             "a number, a top-level original_max_position_embeddings, or an attention_factor",
             "is missing (HF 4.x needs it to compute the attention factor)");
    }
    from_["original_context"] = l0.name;
    // The factor only sets the attention factor, which is 1 for any factor <= 1 (HF): a derived factor below 1
    // (max_position_embeddings < original) is the same spec as factor 1.
    if (s.factor < 1.0 && from_["factor"].rfind("factor (derived", 0) == 0) s.factor = 1.0;
  }

  // validate() names a spec field; report it under the config key it came from.
  void validate_renamed(const RopeSpec& s) const {
    try {
      validate(s);
    } catch (const Error& e) {
      const auto it = from_.find(e.parameter());
      throw Error(where_, it != from_.end() ? it->second : e.parameter(), e.value(), e.accepted(), e.problem());
    }
  }

  const Json& root_;
  const HfConfigOptions& opt_;
  std::string where_;
  std::string model_type_, rope_type_, prefix_;
  std::map<std::string, Item, std::less<>> rope_;  // key (type read as rope_type) -> value and its written name
  std::map<std::string, std::string> from_;        // spec field -> the config key it was read from
};

}  // namespace

RopeSpec rope_spec_from_hf_config(std::string_view json_text, const HfConfigOptions& opt) {
  const std::string where = opt.file.empty() ? std::string("HF config") : opt.file;
  // Nesting is bounded before anything parses or walks the text (posenc/json_text.hpp).
  if (const std::size_t at = json_nesting_exceeded(json_text); at != std::string_view::npos)
    throw Error(where, "config", "(at byte " + std::to_string(at) + ")",
                "a JSON object: a Hugging Face config.json, nested at most " + std::to_string(kMaxJsonNesting) +
                    " levels",
                "nests arrays and objects more than " + std::to_string(kMaxJsonNesting) + " deep");
  Json root;
  try {
    root = Json::parse(json_text.begin(), json_text.end());
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number beyond double (1E1111...)
    std::string what = e.what();
    if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    throw Error(where, "config", "(" + what + ")", "a JSON object: a Hugging Face config.json", "is not valid JSON");
  }
  if (!root.is_object())
    throw Error(where, "config", short_dump(root), "a JSON object: a Hugging Face config.json", "is not a JSON object");
  return Reader(root, opt).read();
}

}  // namespace posenc
