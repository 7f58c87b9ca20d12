#include "registry.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "args.hpp"
#include "posenc/json_text.hpp"

namespace posenc::cli {
namespace {

std::vector<std::pair<std::string, SchemeRegistration>>& registrations() {
  static std::vector<std::pair<std::string, SchemeRegistration>> r;
  return r;
}

// The files a command names, checked once its flags are parsed and before it reads or computes anything (one
// place for every command): --out '' is refused (an unset shell variable must not mean stdout), and so is an
// --out that is one of the command's input files (any other option whose type is FILE: --in, --spec, --config,
// --weights, --q, ...), compared by device and inode, so another path or a hard link to the input is caught too —
// the report would otherwise replace the user's data.
void check_files(const CLI::App& command) {
  const CLI::Option* out = nullptr;
  for (const CLI::Option* o : command.get_options())
    if (o->get_name() == "--out" && o->count() > 0) out = o;
  if (!out) return;
  const std::string path = out->results().empty() ? std::string() : out->results().back();
  if (path.empty())
    throw UsageError("--out: '' (an empty path) is not accepted; accepted: a file name, or - for stdout");
  struct stat target {};
  if (path == "-" || ::stat(path.c_str(), &target) != 0) return;  // stdout, or a file that does not exist yet
  for (const CLI::Option* o : command.get_options()) {
    if (o == out || o->count() == 0 || o->get_type_name() != "FILE") continue;
    for (const std::string& input : o->results()) {
      struct stat st {};
      if (::stat(input.c_str(), &st) == 0 && st.st_dev == target.st_dev && st.st_ino == target.st_ino)
        throw UsageError("--out: '" + text_excerpt(path) + "' is the file " + o->get_name() + " reads ('" +
                         text_excerpt(input) + "'); writing it would replace the input; accepted: a file that is not one of the inputs");
    }
  }
}

}  // namespace

bool add_scheme_registration(const char* name, SchemeRegistration fn) {
  registrations().emplace_back(name, fn);
  return true;
}

void register_schemes(Registry& reg, int argc, const char* const* argv) {
  auto& r = registrations();
  std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::string verb = argc >= 3 ? argv[1] : "", scheme = argc >= 3 ? argv[2] : "";
  const auto named = std::find_if(r.begin(), r.end(), [&](const auto& e) { return e.first == scheme; });
  if (named != r.end()) {
    named->second(reg);
    if (reg.has(verb, scheme)) return;
  }
  for (auto it = r.begin(); it != r.end(); ++it)
    if (it != named) it->second(reg);
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
  c->parse_complete_callback([c] { check_files(*c); });  // runs before the command's own callback
  return c;
}

bool Registry::has(const std::string& verb_name, const std::string& scheme) const {
  const auto it = verbs_of_.find(scheme);
  return it != verbs_of_.end() && std::find(it->second.begin(), it->second.end(), verb_name) != it->second.end();
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
