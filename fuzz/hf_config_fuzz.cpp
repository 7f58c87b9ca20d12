// fuzz/hf_config_fuzz.cpp — libFuzzer target: the Hugging Face config.json reader (`--config FILE`,
// rope_spec_from_hf_config), under an HF version rule and a regime chosen by a hash of the input (one reading per
// input keeps the target fast; the corpus reaches every combination).
// Accepted outcomes: a posenc::Error (not JSON, or a key named with its value and the accepted ones), or a spec.
// Anything else is a finding: another exception escaping the reader, a crash or sanitizer report, or a spec that
// breaks the invariants below (it validates; it survives to_json -> spec_from_json unchanged).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <string_view>

#include "posenc/error.hpp"
#include "posenc/rope_config.hpp"
#include "posenc/rope_spec.hpp"
#include "posenc/spec_json.hpp"

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "hf_config_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t pick = std::hash<std::string_view>{}(text);
  const auto& versions = posenc::EnumTraits<posenc::HfVersion>::values;
  const posenc::RopeRegime regimes[] = {posenc::RopeRegime::exact, posenc::RopeRegime::hf, posenc::RopeRegime::ggml};
  posenc::HfConfigOptions opt;
  opt.hf_version = versions[pick % versions.size()].value;
  opt.regime = regimes[(pick / versions.size()) % 3];
  posenc::RopeSpec s;
  try {
    s = posenc::rope_spec_from_hf_config(text, opt);
  } catch (const posenc::Error&) {
    return 0;  // the one-line message path
  } catch (const std::exception& e) {
    finding("an exception other than posenc::Error escaped rope_spec_from_hf_config:", e.what());
  }
  try {
    posenc::validate(s);
  } catch (const posenc::Error& e) {
    finding("the reader returned a spec that does not validate:", e.what());
  }
  const auto back = posenc::to_json(s);
  try {
    if (posenc::to_json(posenc::spec_from_json<posenc::RopeSpec>(back)) != back)
      finding("to_json -> spec_from_json changed the spec:", back.dump());
  } catch (const std::exception& e) {
    finding("a spec's own JSON is refused:", std::string(e.what()) + " " + back.dump());
  }
  return 0;
}
