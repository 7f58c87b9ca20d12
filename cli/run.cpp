// cli/run.cpp — parse and run one command line (run.hpp).
#include "run.hpp"

#include <exception>
#include <new>
#include <sstream>

#include <CLI/CLI.hpp>

#include "args.hpp"
#include "posenc/build_info.hpp"
#include "posenc/error.hpp"
#include "posenc/simd.hpp"
#include "registry.hpp"
#include "verbs.hpp"

namespace posenc::cli {
namespace {

// One line: newlines become spaces and every other control byte (ESC from a user's file, ...) is shown as \xNN, so
// nothing of a user's value can drive the terminal (values themselves are cut to short excerpts where quoted).
std::string one_line(const std::string& message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line;
  for (const char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n' || c == '\r') line += ' ';
    else if (c < 0x20 || c == 0x7f) line.append("\\x").append(1, kHex[c >> 4]).append(1, kHex[c & 15]);
    else line += ch;
  }
  return line;
}

RunResult failed(int status, RunResult::Failure failure, const std::string& message) {
  RunResult r;
  r.status = status;
  r.failure = failure;
  r.error = one_line(message);
  return r;
}

// CLI11 reads a flag given an empty value (--signed-positions=) as the flag alone; every option refuses an empty
// value here instead, with one message.
void refuse_empty_values(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' && arg.find('=') == arg.size() - 1)
      throw UsageError(arg.substr(0, arg.size() - 1) +
                       ": '' (an empty value) is not accepted; give a value after '=', or leave the option out "
                       "(posenc <command> <scheme> --help lists the accepted values)");
  }
}

void setup(CLI::App& app) {
  app.require_subcommand(0, 1);
  app.callback([&app] {
    if (!app.get_subcommands().empty()) return;
    std::string commands;
    for (const CLI::App* c : app.get_subcommands([](CLI::App*) { return true; }))
      commands += (commands.empty() ? "" : " | ") + c->get_name();
    throw UsageError("a command is required: " + commands + " (posenc --help)");
  });
  app.set_version_flag("--version", build_info().version);
  app.footer("Run `posenc <command> --help` for a command's options, `posenc list` for schemes and parameters.");
}

// The program's commands: the general ones, budget, and the schemes a command line `argv` needs (all for none).
void register_commands(Registry& registry, int argc, const char* const* argv) {
  register_general_commands(registry);
  register_budget_command(registry);
  register_schemes(registry, argc, argv);  // schemes/<scheme>/cli.cpp (POSENC_CLI_SCHEME)
}

constexpr const char* kAbout =
    "posenc: positional encodings for transformers, proved against MPFR oracles; check your own numbers";

}  // namespace

std::vector<OptionInfo> command_options(const std::string& verb, const std::string& scheme) {
  const char* argv[] = {"posenc", verb.c_str(), scheme.c_str()};
  CLI::App app{kAbout, "posenc"};
  setup(app);
  Registry registry(app);
  register_commands(registry, 3, argv);
  if (!registry.has(verb, scheme)) {
    std::string names;
    for (const Json& s : registry.list()["schemes"])
      for (const Json& v : s["verbs"])
        if (v.get<std::string>() == verb) names += (names.empty() ? "" : " | ") + s["name"].get<std::string>();
    throw UsageError("'" + verb + " " + scheme + "' is not a command; accepted schemes for " + verb + ": " +
                     (names.empty() ? std::string("none (posenc list)") : names));
  }
  std::vector<OptionInfo> options;
  for (const CLI::Option* o : app.get_subcommand(verb)->get_subcommand(scheme)->get_options()) {
    if (o->get_lnames().empty() || o->get_lnames().front() == "help") continue;
    options.push_back({"--" + o->get_lnames().front(), o->get_type_name(), o->get_default_str(), o->get_expected_max() != 0});
  }
  return options;
}

RunResult run_command(const std::vector<std::string>& args) {
  exit_status() = 0;
  std::vector<const char*> argv{"posenc"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  const int argc = static_cast<int>(argv.size());
  try {
    CLI::App app{kAbout, "posenc"};
    setup(app);
    Registry registry(app);
    register_commands(registry, argc, argv.data());
    std::ostringstream out, err;
    try {
      // POSENC_SIMD (posenc/simd.hpp): the library would ignore a name it does not know; the tool refuses it.
      set_simd_target_from_environment();
      refuse_empty_values(args);
      app.parse(argc, argv.data());
    } catch (const CLI::Success& e) {  // --help, --help-all, --version: app.exit prints what each asks for
      RunResult r;
      r.status = app.exit(e, out, err);
      r.out = out.str(), r.err = err.str();
      return r;
    }
  } catch (const CLI::ParseError& e) {
    return failed(2, RunResult::Failure::usage, e.what());
  } catch (const Error& e) {
    return failed(2, RunResult::Failure::usage, e.what());
  } catch (const UsageError& e) {
    return failed(2, RunResult::Failure::usage, e.what());
  } catch (const IoError& e) {
    return failed(1, RunResult::Failure::io, e.what());
  } catch (const std::bad_alloc&) {
    return failed(1, RunResult::Failure::memory, "out of memory");
  } catch (const std::exception& e) {
    return failed(1, RunResult::Failure::other, e.what());
  }
  RunResult r;
  r.status = exit_status();  // 0, or 1 when `check`/`identify` found the numbers wrong
  return r;
}

}  // namespace posenc::cli
