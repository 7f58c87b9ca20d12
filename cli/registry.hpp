// cli/registry.hpp — how schemes plug into the `posenc` command line.
//
// The command line reads `posenc <verb> <scheme> [flags]` (table, freqs, shift, ...), plus the
// scheme-independent `posenc list` and `posenc info`. A scheme contributes, in its own file
// (cli/<scheme>_commands.cpp), one subcommand under each verb it supports, and one entry for
// `posenc list`. Adding a scheme = adding that file and one register_* call in main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace posenc::cli {

using Json = nlohmann::ordered_json;

// What `posenc list` shows for one scheme. describe() returns
//   {"presets": [{"name", "summary", "source", ...}], "parameters": [{"name", "flag", "default", "accepted"}]}
// (the text form of `posenc list` is printed from the same object, so the two cannot disagree).
struct SchemeEntry {
  std::string name;
  std::string summary;
  std::vector<std::string> verbs;  // the verbs this scheme has subcommands under
  std::function<Json()> describe;
};

class Registry {
 public:
  explicit Registry(CLI::App& app) : app_(app) {}

  // The verb command (`posenc table`, ...), created on first use with this description; each scheme
  // adds `posenc <verb> <scheme>` under it.
  CLI::App* verb(const std::string& name, const std::string& description);
  void add_scheme(SchemeEntry entry) { schemes_.push_back(std::move(entry)); }
  const std::vector<SchemeEntry>& schemes() const { return schemes_; }
  CLI::App& app() { return app_; }

 private:
  CLI::App& app_;
  std::map<std::string, CLI::App*> verbs_;
  std::vector<SchemeEntry> schemes_;
};

void register_general_commands(Registry&);     // list, info        (general_commands.cpp)
void register_sinusoidal_commands(Registry&);  // table/freqs/shift (sinusoidal_commands.cpp)

}  // namespace posenc::cli
