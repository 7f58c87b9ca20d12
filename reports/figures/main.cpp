// posenc_figures — the report's figure data (figures.hpp): figures-<scheme>.json for every registered scheme.
//   posenc_figures --out DIR [--scheme NAME]...
// Exit status: 0 when every file was written, 1 when a scheme's producer failed (its file says why), 2 for a bad
// argument or an unwritable file.
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "figures.hpp"
#include "posenc/blas.hpp"
#include "posenc/build_info.hpp"

namespace posenc::figures {

namespace {
std::vector<std::pair<std::string, Producer>>& mutable_registry() {
  static std::vector<std::pair<std::string, Producer>> r;
  return r;
}

Json meta(double seconds) {
  const BuildInfo b = build_info();
  return {{"program", "posenc_figures"}, {"commit", b.commit},       {"run_id", b.run_id},
          {"compiler", b.compiler},      {"flags", b.flags},          {"build_type", b.build_type},
          {"blas_core", blas_info().core}, {"seconds", seconds}};
}

int usage(const std::string& why) {
  std::fprintf(stderr, "posenc_figures: %s\nusage: posenc_figures --out DIR [--scheme NAME]...\n", why.c_str());
  return 2;
}

bool known(const std::string& name) {
  for (const auto& [scheme, produce] : registry())
    if (scheme == name) return true;
  return false;
}

std::string registered_names() {
  std::string out;
  for (const auto& [scheme, produce] : registry()) out += (out.empty() ? "" : ", ") + scheme;
  return out;
}

// One scheme's file; false when its producer failed (the file then holds "error").
bool write_scheme(const std::filesystem::path& dir, const std::string& scheme, Producer produce, int& status) {
  const auto t0 = std::chrono::steady_clock::now();
  Json doc{{"scheme", scheme}};
  bool ok = true;
  try {
    Json figs = Json::object();
    produce(figs);
    doc["figures"] = std::move(figs);
  } catch (const std::exception& e) {
    doc["error"] = e.what();
    ok = false;
  }
  doc["meta"] = meta(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const auto path = dir / ("figures-" + scheme + ".json");
  std::ofstream f(path);
  f << doc.dump() << "\n";  // compact: the report reads it, people read the figures
  f.close();
  if (!f) {
    std::fprintf(stderr, "posenc_figures: cannot write %s\n", path.c_str());
    status = 2;
    return false;
  }
  std::fprintf(stderr, "posenc_figures: %s%s\n", path.c_str(),
               ok ? "" : (" (FAILED: " + doc["error"].get<std::string>() + ")").c_str());
  if (!ok && status == 0) status = 1;
  return ok;
}
}  // namespace

Registration::Registration(const char* scheme, Producer produce) { mutable_registry().emplace_back(scheme, produce); }
const std::vector<std::pair<std::string, Producer>>& registry() { return mutable_registry(); }

}  // namespace posenc::figures

int main(int argc, char** argv) {
  using namespace posenc::figures;
  std::string out;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--out" || a == "--scheme") && i + 1 >= argc) return usage(a + " needs a value");
    if (a == "--out") out = argv[++i];
    else if (a == "--scheme") only.push_back(argv[++i]);
    else return usage("unknown argument '" + a + "'");
  }
  if (out.empty()) return usage("--out DIR is required");
  for (const std::string& s : only)
    if (!known(s)) return usage("--scheme '" + s + "' has no figures; registered: " + registered_names());
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) return usage("--out '" + out + "': cannot create the directory: " + ec.message());
  int status = 0;
  for (const auto& [scheme, produce] : registry()) {
    bool wanted = only.empty();
    for (const std::string& s : only) wanted = wanted || s == scheme;
    if (wanted) write_scheme(out, scheme, produce, status);
  }
  return status;
}
