// `posenc list` and `posenc info`: the scheme-independent commands.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "output.hpp"
#include "posenc/blas.hpp"
#include "posenc/build_info.hpp"
#include "posenc/simd.hpp"
#include "registry.hpp"

namespace posenc::cli {

void print_json(const Json& j) {
  Output out("-", false);
  const std::string s = j.dump(2);
  std::fwrite(s.data(), 1, s.size(), out.file());
  std::fputc('\n', out.file());
  out.commit();
}

namespace {
std::string text_of(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "none";
  return v.dump();
}
}  // namespace

void print_wrapped(std::FILE* f, std::size_t indent, const std::string& text) {
  const std::size_t width = indent < 60 ? 100 - indent : 40;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t len = text.size() - pos;
    if (len > width) {
      const std::size_t cut = text.rfind(' ', pos + width);
      len = (cut == std::string::npos || cut <= pos) ? width : cut - pos;
    }
    std::fprintf(f, "%*s%s\n", static_cast<int>(indent), "", text.substr(pos, len).c_str());
    pos += len;
    while (pos < text.size() && text[pos] == ' ') ++pos;
  }
}

namespace {

void print_list_text(const Json& doc) {
  Output out("-", false);
  std::FILE* f = out.file();
  for (const auto& s : doc["schemes"]) {
    std::fprintf(f, "%s: %s\n", text_of(s["name"]).c_str(), text_of(s["summary"]).c_str());
    std::string cmds;
    for (const auto& v : s["verbs"]) cmds += (cmds.empty() ? "" : ", ") + ("posenc " + text_of(v) + " " + text_of(s["name"]));
    std::fprintf(f, "  commands: %s\n", cmds.c_str());
    std::fprintf(f, "  presets (--preset NAME; explicit flags override the preset's fields):\n");
    for (const auto& p : s["presets"]) {
      std::fprintf(f, "    %s\n", text_of(p["name"]).c_str());
      print_wrapped(f, 6, text_of(p["summary"]));
      print_wrapped(f, 6, "reproduces: " + text_of(p["implementation"]) + " (" + text_of(p["commit"]) + ")");
      print_wrapped(f, 6, "spec: " + p["spec"].dump());
    }
    std::fprintf(f, "  parameters (also --spec FILE: a JSON spec or any result file posenc wrote):\n");
    for (const auto& p : s["parameters"]) {
      std::fprintf(f, "    %-18s %-20s default: %s\n", text_of(p["name"]).c_str(), text_of(p["flag"]).c_str(),
                   text_of(p["default"]).c_str());
      print_wrapped(f, 6, text_of(p["meaning"]));
      print_wrapped(f, 6, "accepted: " + text_of(p["accepted"]));
      print_wrapped(f, 6, "source: " + text_of(p["source"]));
    }
    std::fputc('\n', f);
  }
  out.commit();
}

}  // namespace

void register_general_commands(Registry& reg) {
  {
    auto format = std::make_shared<std::string>("text");
    CLI::App* list = reg.app().add_subcommand(
        "list", "The schemes, their presets and every parameter with its default and accepted range");
    list->add_option("--format", *format, "text (default) or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->type_name("text|json");
    list->callback([&reg, format] {
      const Json doc = reg.list();
      if (*format == "json")
        print_json(doc);
      else
        print_list_text(doc);
    });
  }
  {
    auto format = std::make_shared<std::string>("text");
    CLI::App* info = reg.app().add_subcommand("info", "Build information, the SIMD target and the BLAS kernels in use");
    info->add_option("--format", *format, "text (default) or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->type_name("text|json");
    info->callback([format] {
      const BuildInfo b = build_info();
      const BlasInfo l = blas_info();
      Json doc;
      doc["build"] = {{"version", b.version},   {"commit", b.commit},         {"compiler", b.compiler},
                      {"flags", b.flags},       {"build_type", b.build_type}};
      std::vector<std::string> targets = simd_targets();
      doc["simd"] = {{"target", simd_target()}, {"targets", targets}};
      doc["blas"] = {{"core", l.core},         {"best_core", l.best_core}, {"fallback", l.fallback},
                     {"forced", l.forced},     {"threads", l.threads},     {"config", l.config}};
      if (*format == "json") {
        print_json(doc);
        return;
      }
      Output out("-", false);
      std::FILE* f = out.file();
      std::fprintf(f, "posenc %s\n", b.version.c_str());
      std::fprintf(f, "  commit      %s\n  compiler    %s\n  build type  %s\n  flags       %s\n", b.commit.c_str(),
                   b.compiler.c_str(), b.build_type.c_str(), b.flags.c_str());
      std::string all;
      for (const std::string& t : targets) all += (all.empty() ? "" : ", ") + t;
      std::fprintf(f, "SIMD\n  target      %s  (POSENC_SIMD=<name> caps it)\n  targets     %s\n", simd_target().c_str(),
                   all.c_str());
      std::fprintf(f, "BLAS\n");
      std::fprintf(f, "  core        %s%s\n", l.core.c_str(),
                   l.fallback ? "  (fallback: older than the best core this CPU supports)" : "");
      std::fprintf(f, "  best core   %s\n", l.best_core.c_str());
      std::fprintf(f, "  forced      %s\n", l.forced ? "yes (OPENBLAS_CORETYPE is set)" : "no");
      std::fprintf(f, "  threads     %d\n", l.threads);
      std::fprintf(f, "  config      %s\n", l.config.c_str());
      out.commit();
    });
  }
}

}  // namespace posenc::cli
