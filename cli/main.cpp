// posenc — command-line front end of the posenc library.
//
// Every failure is one line on stderr, "posenc: error: <message>", and a non-zero status:
//   2  usage and argument errors (CLI11 parse errors, posenc::Error, malformed flag values)
//   1  everything else (posenc::IoError, out of memory, ...), and `check` / `identify` whose verdict is "fail"
// Output files are written to a temporary file and renamed on success (cli/output.hpp), so a failed
// command leaves no partial file.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "args.hpp"
#include "posenc/blas.hpp"
#include "posenc/build_info.hpp"
#include "posenc/error.hpp"
#include "posenc/simd.hpp"
#include "registry.hpp"
#include "verbs.hpp"

namespace {

// One line: newlines become spaces and every other control byte (ESC from a user's file, ...) is shown as \xNN, so
// nothing of a user's value can drive the terminal (values themselves are cut to short excerpts where quoted).
int fail(int status, const std::string& message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line;
  for (const char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n' || c == '\r') line += ' ';
    else if (c < 0x20 || c == 0x7f) line.append("\\x").append(1, kHex[c >> 4]).append(1, kHex[c & 15]);
    else line += ch;
  }
  std::fflush(stdout);
  std::fprintf(stderr, "posenc: error: %s\n", line.c_str());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  posenc::select_blas_kernels(argc, argv);  // may re-execute with OPENBLAS_CORETYPE set (posenc/blas.hpp)

  CLI::App app{"posenc: positional encodings for transformers, proved against MPFR oracles; check your own numbers", "posenc"};
  app.require_subcommand(0, 1);
  app.callback([&app] {
    if (!app.get_subcommands().empty()) return;
    std::string commands;
    for (const CLI::App* c : app.get_subcommands([](CLI::App*) { return true; }))
      commands += (commands.empty() ? "" : " | ") + c->get_name();
    throw posenc::cli::UsageError("a command is required: " + commands + " (posenc --help)");
  });
  app.set_version_flag("--version", posenc::build_info().version);
  app.footer("Run `posenc <command> --help` for a command's options, `posenc list` for schemes and parameters.");

  posenc::cli::Registry registry(app);
  posenc::cli::register_general_commands(registry);
  posenc::cli::register_budget_command(registry);
  posenc::cli::register_schemes(registry, argc, argv);  // schemes/<scheme>/cli.cpp (POSENC_CLI_SCHEME)

  try {
    // POSENC_SIMD (posenc/simd.hpp): the library would ignore a name it does not know; the tool refuses it.
    posenc::set_simd_target_from_environment();
    // CLI11 reads a flag given an empty value (--signed-positions=) as the flag alone; every option refuses
    // an empty value here instead, with one message.
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--") break;
      if (arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' && arg.find('=') == arg.size() - 1)
        throw posenc::cli::UsageError(arg.substr(0, arg.size() - 1) +
                                      ": '' (an empty value) is not accepted; give a value after '=', or leave the "
                                      "option out (posenc <command> <scheme> --help lists the accepted values)");
    }
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(2, e.what());
  } catch (const posenc::Error& e) {
    return fail(2, e.what());
  } catch (const posenc::cli::UsageError& e) {
    return fail(2, e.what());
  } catch (const posenc::IoError& e) {
    return fail(1, e.what());
  } catch (const std::bad_alloc&) {
    return fail(1, "out of memory");
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
  return posenc::cli::exit_status();  // 0, or 1 when `check`/`identify` found the numbers wrong
}
