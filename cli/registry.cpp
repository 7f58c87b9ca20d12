#include "registry.hpp"

#include <algorithm>
#include <utility>

#include "args.hpp"

namespace posenc::cli {
namespace {

std::vector<std::pair<std::string, SchemeRegistration>>& registrations() {
  static std::vector<std::pair<std::string, SchemeRegistration>> r;
  return r;
}

}  // namespace

bool add_scheme_registration(const char* name, SchemeRegistration fn) {
  registrations().emplace_back(name, fn);
  return true;
}

void register_all_schemes(Registry& reg) {
  auto& r = registrations();
  std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [name, fn] : r) fn(reg);
}

Registry::Registry(CLI::App& app) : app_(app) {
  for (const VerbInfo& v : kGenericVerbs) verb(v.name, v.description);
}

CLI::App* Registry::verb(const std::string& name, const std::string& description) {
  if (auto it = verbs_.find(name); it != verbs_.end()) return it->second;
  CLI::App* v = app_.add_subcommand(name, description);
  v->require_subcommand(0, 1);
  v->allow_extras();  // an unknown scheme is reported below, naming the schemes that have this verb
  v->callback([this, v, name] {
    std::string schemes;
    for (const CLI::App* s : v->get_subcommands([](CLI::App*) { return true; }))
      schemes += (schemes.empty() ? "" : " | ") + s->get_name();
    if (schemes.empty()) schemes = "(no scheme has this verb yet)";
    if (!v->get_subcommands().empty()) return;
    const auto extras = v->remaining();
    if (!extras.empty())
      throw UsageError("posenc " + name + ": '" + extras.front() + "' is not a scheme with the verb " + name +
                       "; accepted: " + schemes + " (posenc list shows every scheme and its verbs)");
    throw UsageError("posenc " + name + ": a scheme is required; accepted: " + schemes + " (posenc " + name +
                     " <scheme> --help)");
  });
  verbs_.emplace(name, v);
  return v;
}

void Registry::add_scheme(SchemeEntry entry) { schemes_.push_back(std::move(entry)); }

CLI::App* Registry::command(const std::string& verb_name, const std::string& scheme, const std::string& description,
                            const std::string& verb_description) {
  CLI::App* v = verb(verb_name, verb_description.empty() ? verb_name : verb_description);
  verbs_of_[scheme].push_back(verb_name);
  CLI::App* c = v->add_subcommand(scheme, description);
  c->allow_extras(false);  // (inherited from the verb otherwise) an unknown flag of a scheme command is an error
  return c;
}

Json Registry::list() const {
  Json doc;
  doc["schemes"] = Json::array();
  for (const auto& s : schemes_) {
    Json e = s.description;
    Json verbs = Json::array();
    if (auto it = verbs_of_.find(s.name); it != verbs_of_.end())
      for (const auto& v : it->second) verbs.push_back(v);
    // "verbs" right after "summary", as the other keys keep their order.
    Json out;
    for (auto it = e.begin(); it != e.end(); ++it) {
      out[it.key()] = it.value();
      if (it.key() == "summary") out["verbs"] = verbs;
    }
    if (!out.contains("verbs")) out["verbs"] = verbs;
    doc["schemes"].push_back(std::move(out));
  }
  return doc;
}

}  // namespace posenc::cli
