// fuzz/spec_json_fuzz.cpp — libFuzzer target: the JSON spec reader (`--spec FILE`: a spec object, or a result
// file posenc wrote, whose "spec" member is read), for every scheme's spec (spec_from_json<Spec>).
// Accepted outcomes: not JSON (nlohmann's parse error: the CLI reports it as such), or a posenc::Error naming the
// field, or a spec. Anything else is a finding: another exception escaping spec_from_json (a wrong JSON type
// must be a posenc::Error, per posenc/spec_json.hpp), a crash or sanitizer report, or a spec that breaks the
// invariants below (it validates; it survives to_json -> spec_from_json unchanged).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "posenc/error.hpp"
#include "posenc/rope_spec.hpp"
#include "posenc/sinusoidal_spec.hpp"
#include "posenc/spec_json.hpp"

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "spec_json_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

template <class Spec>
void read_as(const nlohmann::ordered_json& j) {
  Spec s;
  try {
    s = posenc::spec_from_json<Spec>(j);
  } catch (const posenc::Error&) {
    return;  // the one-line message path
  } catch (const std::exception& e) {
    finding("an exception other than posenc::Error escaped spec_from_json:", e.what());
  }
  try {
    posenc::validate(s);
  } catch (const posenc::Error& e) {
    finding("spec_from_json returned a spec that does not validate:", e.what());
  }
  const nlohmann::ordered_json back = posenc::to_json(s);
  Spec again;
  try {
    again = posenc::spec_from_json<Spec>(back);
  } catch (const std::exception& e) {
    finding("a spec's own JSON is refused:", std::string(e.what()) + " " + back.dump());
  }
  if (posenc::to_json(again) != back) finding("to_json -> spec_from_json changed the spec:", back.dump());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(data, data + size);
  } catch (const nlohmann::json::exception&) {
    return 0;  // not JSON: `--spec` says so
  }
  // As `--spec` reads it: the object itself, or a result file's "spec" member.
  const nlohmann::ordered_json& spec = j.is_object() && j.contains("spec") && j["spec"].is_object() ? j["spec"] : j;
  read_as<posenc::SinusoidalSpec>(spec);
  read_as<posenc::RopeSpec>(spec);
  return 0;
}
