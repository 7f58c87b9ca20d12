// cli/registry.hpp — how schemes plug into the `posenc` command line.
//
// The command line reads `posenc <verb> <scheme> [spec flags] [verb flags]`. The generic verbs exist for every
// scheme that registers them:
//   table     rows per position (encoding tables, caches)          freqs     the frequency vector
//   index     integer relative index / bucket matrices             bias      per-head additive biases
//   apply     transform a tensor read from a .npy                  scores    pre-softmax scores from Q, K .npy files
//   check     verify a user's own numbers against the oracle       identify  which convention a user's table is
// and a scheme may add verbs of its own (sinusoidal: shift). A scheme registers, in its one file
// schemes/<scheme>/cli.cpp (POSENC_CLI_SCHEME, one function), its description for `posenc list` (generated from its
// spec description, cli/spec_options.hpp) and one subcommand per verb it has; option parsing from the spec
// description, output formats and error lines come from the generic code. `posenc <verb> <unknown>` names the
// schemes that have that verb. Plus the scheme-independent `posenc list` and `posenc info`.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace posenc::cli {

using Json = nlohmann::ordered_json;

// The generic verbs, in the order `posenc --help` lists them.
struct VerbInfo {
  const char* name;
  const char* description;
};
inline constexpr VerbInfo kGenericVerbs[] = {
    {"table", "Rows per position: encoding tables and caches"},
    {"freqs", "Frequency vectors, with the columns each frequency fills"},
    {"index", "Integer relative index or bucket matrices"},
    {"bias", "Per-head additive attention biases"},
    {"apply", "Transform a tensor read from a .npy file"},
    {"scores", "Pre-softmax attention scores from Q and K .npy files"},
    {"check", "Verify your own numbers (.npy) against the MPFR oracle, per budget row and emulation envelope"},
    {"identify", "Say which convention a table (.npy) follows, or the nearest one and where it differs"},
};

// What `posenc list` shows for one scheme: {"name", "summary", "verbs", "presets": [...], "parameters": [...]}
// (describe_scheme<Spec>() in spec_options.hpp builds it from the spec description).
struct SchemeEntry {
  std::string name;
  Json description;  // name, summary, presets, parameters; "verbs" is filled in by the registry
};

class Registry {
 public:
  explicit Registry(CLI::App& app);

  void add_scheme(SchemeEntry entry);
  // `posenc <verb> <scheme>`; creates the verb (a scheme's own verb needs its description on first use).
  CLI::App* command(const std::string& verb, const std::string& scheme, const std::string& description,
                    const std::string& verb_description = {});
  // Whether `posenc <verb> <scheme>` is registered.
  bool has(const std::string& verb, const std::string& scheme) const;
  // The schemes with their verbs, as `posenc list --format json` prints them.
  Json list() const;
  CLI::App& app() { return app_; }

 private:
  CLI::App* verb(const std::string& name, const std::string& description);
  CLI::App& app_;
  std::map<std::string, CLI::App*> verbs_;
  std::vector<SchemeEntry> schemes_;
  std::map<std::string, std::vector<std::string>> verbs_of_;  // scheme -> verbs
};

// Every scheme file defines one registration function with POSENC_CLI_SCHEME(<name>); main() calls
// register_schemes, which calls them all, or only the one a command line needs: registering every scheme builds
// ~900 options, a quarter of the CLI's start-up, and `posenc <verb> <scheme> ...` reaches that scheme's commands
// only. Every other command line (list, info, --help, a verb without a scheme, an unknown scheme, a scheme without
// that verb, whose errors name the schemes that have it) gets them all.
using SchemeRegistration = void (*)(Registry&);
bool add_scheme_registration(const char* name, SchemeRegistration);
void register_schemes(Registry&, int argc, const char* const* argv);
void register_general_commands(Registry&);  // list, info (general_commands.cpp)
void register_budget_command(Registry&);    // budget (budget_command.cpp: the program links the budget table)
// Shared by the general commands: JSON on stdout (2-space indent); `text` after `indent` spaces, wrapped at 100
// columns on spaces.
void print_json(const Json&);
void print_wrapped(std::FILE*, std::size_t indent, const std::string& text);

}  // namespace posenc::cli

#define POSENC_CLI_SCHEME(name)                                                                      \
  static void posenc_cli_register_##name(::posenc::cli::Registry&);                                  \
  [[maybe_unused]] static const bool posenc_cli_registered_##name =                                  \
      ::posenc::cli::add_scheme_registration(#name, &posenc_cli_register_##name);                    \
  static void posenc_cli_register_##name(::posenc::cli::Registry& registry)
