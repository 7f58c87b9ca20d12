#include "registry.hpp"

#include "args.hpp"

namespace posenc::cli {

CLI::App* Registry::verb(const std::string& name, const std::string& description) {
  if (auto it = verbs_.find(name); it != verbs_.end()) return it->second;
  CLI::App* v = app_.add_subcommand(name, description);
  v->require_subcommand(0, 1);
  v->fallthrough(false);
  // Checked here rather than by CLI11 so that the message names the verb and its schemes.
  v->callback([v, name] {
    std::string schemes;
    for (const CLI::App* s : v->get_subcommands([](CLI::App*) { return true; }))
      schemes += (schemes.empty() ? "" : " | ") + s->get_name();
    if (v->get_subcommands().empty())
      throw UsageError("posenc " + name + ": a scheme is required; accepted: " + schemes +
                       " (posenc " + name + " <scheme> --help)");
  });
  verbs_.emplace(name, v);
  return v;
}

}  // namespace posenc::cli
