// cli/spec_options.hpp — command-line options of a spec, derived from its description (posenc/describe.hpp).
//
// SpecOptions<Spec> adds to a subcommand, in the group "Spec":
//   --preset NAME     start from a preset (SpecTraits<Spec>::presets());
//   --spec FILE       start from a JSON spec: a spec object, or any result file posenc wrote (its "spec" member),
//                     so every result can be replayed exactly;
//   the scheme's own starting points (add_start: e.g. rope's --config FILE, a Hugging Face config.json), each
//   exclusive with --preset, --spec and one another;
//   one flag per field (the description's flag, meaning and accepted values as help; bool fields are flags that
//   also take =true/=false; optional fields take "none");
//   the scheme's own aliases (add_alias: e.g. fairseq's --padding-idx sets two fields).
// build() applies the preset, file or scheme start, then every given field flag in table order, then the scheme's
// adjustments (add_adjustment: e.g. rope's rotary_dim following --head-dim), then the aliases, and validates.
// A posenc::Error about a field is re-thrown naming the flag the user types ("--dim = 3 is out of range; ...").
// describe_scheme<Spec>() is the scheme's entry of `posenc list`.
#pragma once

#include <CLI/CLI.hpp>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "posenc/describe.hpp"
#include "args.hpp"
#include "posenc/error.hpp"
#include "posenc/json_text.hpp"
#include "posenc/spec_json.hpp"
#include "registry.hpp"

namespace posenc::cli {

namespace spec_options_detail {
template <class V>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<V, bool>) return "boolean";
  else if constexpr (std::is_enum_v<V>) return "name";
  else if constexpr (std::is_floating_point_v<V>) return "real";
  else if constexpr (std::is_same_v<V, std::vector<double>>) return "list of reals";
  else if constexpr (describe_detail::is_list_v<V>) return "list of integers";
  else return "integer";
}
// Whether an accepted set says "not used here": a range fixed at one value, or a list fixed empty, with a reason
// ("only with --scaling yarn").
template <class A>
bool unused_here(const A& a) {
  if constexpr (requires(const A& x) { x.lo; x.hi; x.why; }) return a.lo == a.hi && !a.why.empty();
  else if constexpr (requires(const A& x) { x.max_size; x.why; }) return a.max_size == 0 && !a.why.empty();
  else return (void)a, false;
}
}  // namespace spec_options_detail

// The accepted values a field's help and `posenc list` state. Ranges depend on earlier fields, and for the default
// spec a field that the default does not use has a range fixed at its default ("a real in [1, 1] (only with
// --scaling)"), which reads as if that were the option's range. Such a field states the range of the first spec
// that uses it, found by setting one enumeration field of the default to each of its values in turn (e.g.
// --scaling yarn), followed by when it applies: "a real in [0.001, 1e+06] (only with --scaling yarn)".
// A field used by the default whose range depends on a switch (a bool field) also states the range with the switch
// flipped: "an integer in [4, 65536] (bidirectional: ...); with --bidirectional false: an integer in [2, 65536] (...)".
template <DescribedSpec Spec, class F>
std::string help_accepted_text(const F& f, const Spec& d) {
  const auto here = accepted_of(f, d);
  if (!spec_options_detail::unused_here(here)) {
    std::string text = accepted_text(f, d);
    for_each_field<Spec>([&](const auto& g) {
      using G = std::remove_cvref_t<decltype(g)>;
      if constexpr (std::is_same_v<typename G::value_type, bool>) {
        Spec s = d;
        s.*(g.member) = !(d.*(g.member));
        const std::string other = accepted_text(f, s);
        if (other != accepted_text(f, d) && !spec_options_detail::unused_here(accepted_of(f, s)))
          text += "; with " + std::string(g.flag) + (s.*(g.member) ? " true: " : " false: ") + other;
      }
    });
    return text;
  }
  std::string in_use;
  for_each_field<Spec>([&](const auto& g) {
    using G = std::remove_cvref_t<decltype(g)>;
    using E = typename G::value_type;
    if constexpr (std::is_enum_v<E> && !G::is_optional) {
      for (const auto& e : EnumTraits<E>::values) {
        if (!in_use.empty()) return;
        Spec s = d;
        s.*(g.member) = e.value;
        if (!spec_options_detail::unused_here(accepted_of(f, s))) in_use = accepted_text(f, s);
      }
    }
  });
  if (in_use.empty()) return accepted_text(f, d);
  return in_use + " (" + std::string(here.why) + ")";
}

template <DescribedSpec Spec>
class SpecOptions {
 public:
  using Apply = std::function<void(Spec&, const std::string&)>;

  void add_to(CLI::App* app) {
    app_ = app;
    const Spec d{};
    preset_option_ =
        app->add_option("--preset", preset_, "Convention to start from: " + preset_names<Spec>() + " (posenc list)")
            ->type_name("NAME")
            ->group("Spec");
    spec_option_ = app->add_option("--spec", spec_file_,
                                   "Start from a JSON spec: a spec object or a result file posenc wrote (its \"spec\")")
                       ->type_name("FILE")
                       ->group("Spec");
    for_each_field<Spec>([&](const auto& f) {
      using F = std::remove_cvref_t<decltype(f)>;
      using V = typename F::value_type;
      std::string& text = texts_[std::string(f.name)];
      const std::string help =
          std::string(f.meaning) + " [default " + field_text(f, d) + "; " + help_accepted_text(f, d) + "]";
      if constexpr (std::is_same_v<V, bool>) {
        app->add_flag(std::string(f.flag) + "{true}", text, help)->group("Spec");
      } else if constexpr (std::is_enum_v<V>) {
        app->add_option(std::string(f.flag), text, help)->type_name(enum_names<V>())->group("Spec");
      } else {
        app->add_option(std::string(f.flag), text, help)->type_name(F::is_list ? "[A,B,..]" : F::is_optional ? "N|none" : "X")->group("Spec");
      }
    });
  }

  // A scheme-own flag applied after the fields (e.g. --padding-idx N sets padding_row and first_position).
  void add_alias(const std::string& flag, const std::string& type, const std::string& help, Apply apply) {
    aliases_.push_back({flag, std::make_shared<std::string>(), std::move(apply)});
    app_->add_option(flag, *aliases_.back().text, help)->type_name(type)->group("Spec");
  }

  // A scheme's own starting spec, used like --preset and --spec (and exclusive with them and with every other start):
  // `read` turns the flag's text into the spec the field flags then modify (e.g. rope's --config FILE).
  using Read = std::function<Spec(const std::string& text)>;
  void add_start(const std::string& flag, const std::string& type, const std::string& help, Read read) {
    starts_.push_back({flag, std::make_shared<std::string>(), std::move(read)});
    CLI::Option* o = app_->add_option(flag, *starts_.back().text, help)->type_name(type)->group("Spec");
    o->excludes(preset_option_)->excludes(spec_option_);
    for (CLI::Option* other : start_options_) o->excludes(other);
    start_options_.push_back(o);
  }

  // What the spec started from, for messages: "--preset", "--spec", a scheme start such as "--config", or "the
  // default spec".
  std::string start_flag() const {
    for (const auto& st : starts_)
      if (given(st.flag)) return st.flag;
    return given("--spec") ? "--spec" : given("--preset") ? "--preset" : "the default spec";
  }
  // Whether the spec started from a file (--spec or a scheme start): its dimensions are the file's.
  bool started_from_file() const {
    bool file = given("--spec");
    for (const auto& st : starts_) file = file || given(st.flag);
    return file;
  }

  // A scheme's rule applied after the field flags and before the aliases and validation, given the spec the flags
  // started from (the preset, the --spec file or the default): e.g. a field that follows another unless given.
  using Adjust = std::function<void(Spec&, const Spec& start)>;
  void add_adjustment(Adjust adjust) { adjustments_.push_back(std::move(adjust)); }

  bool given(const std::string& flag) const { return app_->count(flag) > 0; }

  Spec build() const {
    try {
      Spec s{};
      if (given("--preset") && given("--spec"))
        throw Error(std::string(SpecTraits<Spec>::scheme), "--spec", spec_file_, "either --preset or --spec",
                    "is given together with --preset");
      if (given("--preset")) s = find_preset<Spec>(preset_).spec;
      if (given("--spec")) s = read_spec_file(spec_file_);
      for (const auto& st : starts_)  // exclusive with the others (CLI11 refuses two at parse time)
        if (given(st.flag)) s = st.read(*st.text);
      const Spec start = s;
      for_each_field<Spec>([&](const auto& f) {
        if (given(std::string(f.flag))) set_field_text(f, s, texts_.at(std::string(f.name)));
      });
      for (const auto& a : adjustments_) a(s, start);
      for (const auto& a : aliases_)
        if (given(a.flag)) a.apply(s, *a.text);
      validate(s);
      return s;
    } catch (const Error& e) {
      throw with_typed_text(from_spec_file(e, renamed(e)));
    }
  }

  // An error about a field whose value came from the --spec file (its flag not typed) names the file's field:
  // "--spec 's.json': \"heads\" = 0 is out of range" rather than a flag the user never typed.
  Error from_spec_file(const Error& field_error, const Error& flag_error) const {
    const std::string flag = flag_of(field_error.parameter());
    if (flag.empty() || given(flag) || !given("--spec")) return flag_error;
    return field_error.renamed("--spec '" + text_excerpt(spec_file_) + "': \"" + field_error.parameter() + "\"");
  }

  // An error about a flag the user gave shows the text typed ("--base = '1e999' ..."), and what it was read as
  // when that reads differently ("--base = '1.0' (read as 1) ...").
  Error with_typed_text(const Error& e) const {
    for (const auto& [name, text] : texts_) {
      const std::string flag = flag_of(name);
      if (flag != e.parameter() || !given(flag)) continue;
      const std::string quoted = "'" + text + "'";
      if (e.value() == quoted || e.value() == text) return e;
      return Error(e.where(), e.parameter(), quoted + " (read as " + e.value() + ")", e.accepted(), e.problem());
    }
    return e;
  }

  // The error with the field name replaced by its flag (unchanged if it names no field).
  static Error renamed(const Error& e) {
    Error out = e;
    visit_field<Spec>(e.parameter(), [&](const auto& f) { out = e.renamed(std::string(f.flag)); });
    if (e.parameter() == "preset") out = e.renamed("--preset");
    return out;
  }

  static std::string flag_of(const std::string& field) {
    std::string flag;
    visit_field<Spec>(field, [&](const auto& f) { flag = std::string(f.flag); });
    return flag;
  }

  static Spec read_spec_file(const std::string& path) {
    // Bounded (an endless /dev/zero stops at the cap) and nesting checked before parsing (posenc/json_text.hpp).
    const std::string text = read_text_file("--spec", path, kMaxJsonFileBytes,
                                            "a JSON spec or result file posenc wrote, at most 64 MiB");
    const std::string name = "--spec: '" + text_excerpt(path) + "'";
    nlohmann::ordered_json j;
    try {
      j = parse_json_text<nlohmann::ordered_json>(text, name);
    } catch (const nlohmann::json::exception& e) {
      throw IoError(name + " is not JSON (" + text_excerpt(e.what(), 200) + ")");
    }
    if (j.is_object() && j.contains("spec") && j["spec"].is_object()) {
      if (j.contains("scheme") && j["scheme"] != std::string(SpecTraits<Spec>::scheme))
        throw Error(std::string(SpecTraits<Spec>::scheme), "--spec", text_excerpt(path),
                    "a spec of the scheme " + std::string(SpecTraits<Spec>::scheme),
                    "holds a spec of the scheme " + json_excerpt(j["scheme"]));
      j = j["spec"];
    }
    return spec_from_json<Spec>(j);
  }

 private:
  struct Alias {
    std::string flag;
    std::shared_ptr<std::string> text;
    Apply apply;
  };
  struct Start {
    std::string flag;
    std::shared_ptr<std::string> text;
    Read read;
  };
  CLI::App* app_ = nullptr;
  CLI::Option *preset_option_ = nullptr, *spec_option_ = nullptr;
  std::vector<CLI::Option*> start_options_;
  std::vector<Start> starts_;
  std::string preset_, spec_file_;
  std::map<std::string, std::string> texts_;
  std::vector<Alias> aliases_;
  std::vector<Adjust> adjustments_;
};

// The scheme's entry of `posenc list`: its name, summary, presets (with the implementation and commit they
// reproduce and every field's value) and parameters (flag, type, default, accepted values, meaning, source).
template <DescribedSpec Spec>
Json describe_scheme() {
  Json j;
  j["name"] = std::string(SpecTraits<Spec>::scheme);
  j["summary"] = std::string(SpecTraits<Spec>::summary);
  j["presets"] = Json::array();
  for (const auto& p : SpecTraits<Spec>::presets())
    j["presets"].push_back({{"name", std::string(p.name)},
                            {"summary", std::string(p.summary)},
                            {"implementation", std::string(p.implementation)},
                            {"commit", std::string(p.commit)},
                            {"spec", to_json(p.spec)}});
  j["parameters"] = Json::array();
  const Spec d{};
  const Json defaults = to_json(d);
  for_each_field<Spec>([&](const auto& f) {
    using F = std::remove_cvref_t<decltype(f)>;
    using V = typename F::value_type;
    std::string type = spec_options_detail::type_name<V>();
    if constexpr (std::is_enum_v<V>) type = enum_names<V>();
    if (F::is_optional) type += " or none";
    j["parameters"].push_back({{"name", std::string(f.name)},
                               {"flag", std::string(f.flag)},
                               {"type", type},
                               {"default", defaults[std::string(f.name)]},
                               {"accepted", help_accepted_text(f, d)},
                               {"meaning", std::string(f.meaning)},
                               {"source", std::string(f.source)}});
  });
  return j;
}

}  // namespace posenc::cli
