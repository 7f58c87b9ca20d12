// The registry test: every scheme registered in CMake (posenc_add_scheme, passed here as POSENC_SCHEMES) provides
// every part of a scheme, and nothing names a scheme that is not registered. Like ggml's backend test that
// enumerates every op, it fails the moment a scheme is added without one of its parts:
//   description + plan  its spec contract was instantiated (POSENC_SPEC_CONTRACT: SpecTraits, make_plan)
//   presets             `posenc list --format json` shows at least one, each with implementation and commit
//   claims              at least one, every claim's tests exist in this program (and ran under its suite prefix)
//   budget rows         at least one; every row is cited by a claim; every cited row exists
//   CLI verbs           `posenc list` shows the scheme with its verbs, `check` among them
//   benchmarks          `posenc_bench --benchmark_list_tests` lists benchmarks named "<scheme>/..."
//   files               its file in every part (cmake/posenc_schemes.cmake) and its report module
//                       (schemes/<name>/report.py: headline kernels and figures)
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "verify/budget.hpp"
#include "claims.hpp"

namespace claims_registry {  // its own namespace: the claims are compiled together (posenc_unity)

namespace fs = std::filesystem;
const fs::path kSource = POSENC_SOURCE_DIR;

std::vector<std::string> split(const std::string& csv) {
  std::vector<std::string> out;
  std::stringstream in(csv);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

const std::vector<std::string> kSchemes = split(POSENC_SCHEMES);
const std::vector<std::string> kPrefixes = split(POSENC_SCHEME_TEST_PREFIXES);

bool registered(const std::string& scheme) { return std::find(kSchemes.begin(), kSchemes.end(), scheme) != kSchemes.end(); }

// stdout of a command (stderr discarded), and its exit status.
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>/dev/null").c_str(), "r");
  if (!p) return {out, -1};
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  return {out, pclose(p)};
}

std::set<std::string> gtest_names() {
  std::set<std::string> names;
  const auto* ut = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < ut->total_test_suite_count(); ++i) {
    const auto* suite = ut->GetTestSuite(i);
    for (int k = 0; k < suite->total_test_count(); ++k)
      names.insert(std::string(suite->name()) + "." + suite->GetTestInfo(k)->name());
  }
  return names;
}

TEST(Registry, SchemeListIsConsistent) {
  ASSERT_FALSE(kSchemes.empty());
  ASSERT_EQ(kSchemes.size(), kPrefixes.size()) << "each scheme needs exactly one test prefix";
}

TEST(Registry, EverySchemeHasItsFileInEveryPart) {
  for (const std::string& n : kSchemes)
    for (const fs::path& f :
         {fs::path("schemes") / n / "include/spec/posenc" / (n + "_spec.hpp"), fs::path("schemes") / n / "spec.cpp",
          fs::path("schemes") / n / "include/lib/posenc" / (n + ".hpp"), fs::path("schemes") / n / "fast.cpp",
          fs::path("schemes") / n / "include/oracle/posenc/reference" / (n + ".hpp"),
          fs::path("schemes") / n / "oracle.cpp",
          fs::path("schemes") / n / "oracle_test.cpp", fs::path("schemes") / n / "budget.cpp",
          fs::path("schemes") / n / "cases.hpp", fs::path("schemes") / n / "check.cpp",
          fs::path("schemes") / n / "figures.cpp", fs::path("schemes") / n / "misuse_test.cpp",
          fs::path("schemes") / n / "claims.cpp", fs::path("schemes") / n / "sweep.cpp",
          fs::path("schemes") / n / "bench.cpp", fs::path("schemes") / n / "cli.cpp",
          fs::path("schemes") / n / "report.py", fs::path("schemes") / n / "headline.json"})
      EXPECT_TRUE(fs::exists(kSource / f)) << "scheme '" << n << "' has no " << f;
}

TEST(Registry, EverySchemeHasItsDescriptionAndPlanContract) {
  const auto names = gtest_names();
  for (std::size_t i = 0; i < kSchemes.size(); ++i)
    for (const char* test : {"EveryFieldRefusesEachSideOfEveryBoundary", "JsonAndTextRoundTripEverySpec",
                             "PresetsAreValidDistinctAndSourced", "GeneratedSpecsAreValid"})
      EXPECT_TRUE(names.contains(kPrefixes[i] + "Spec." + test))
          << "scheme '" << kSchemes[i] << "': POSENC_SPEC_CONTRACT(<Spec>, " << kPrefixes[i]
          << ", ...) is missing (it also checks that the scheme has make_plan)";
}

TEST(Registry, EverySchemeHasClaimsWithTestsAndBudgetRowsCitedByThem) {
  const auto names = gtest_names();
  EXPECT_TRUE(posenc::test::claims_without_tests().empty());
  std::set<std::string> cited;
  for (const auto* c : posenc::test::claims()) {
    EXPECT_TRUE(registered(c->scheme)) << "claim " << c->id << " names unregistered scheme '" << c->scheme << "'";
    for (const auto& t : c->tests) EXPECT_TRUE(names.contains(t)) << "claim " << c->id << ": no test " << t;
    for (const auto& r : c->budget_rows) {
      EXPECT_NO_THROW((void)posenc::test::budget(r)) << "claim " << c->id << " cites missing budget row " << r;
      cited.insert(r);
    }
    // The claim's tests carry its scheme's prefix, so ctest labels them with the scheme.
    const auto it = std::find(kSchemes.begin(), kSchemes.end(), c->scheme);
    if (it != kSchemes.end()) {
      const std::string& prefix = kPrefixes[static_cast<std::size_t>(it - kSchemes.begin())];
      for (const auto& t : c->tests) EXPECT_EQ(t.rfind(prefix, 0), 0u) << "claim " << c->id << ": test " << t;
    }
  }
  for (const std::string& n : kSchemes) {
    const auto all = posenc::test::claims();
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const auto* c) { return c->scheme == n; }))
        << "scheme '" << n << "' has no claim";
    const auto rows = posenc::test::budget_rows();
    EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.scheme == n; }))
        << "scheme '" << n << "' has no budget row";
  }
  for (const auto& r : posenc::test::budget_rows()) {
    EXPECT_TRUE(registered(r.scheme)) << "budget row " << r.id << " names unregistered scheme '" << r.scheme << "'";
    EXPECT_TRUE(cited.contains(r.id)) << "budget row " << r.id << " is cited by no claim: nothing measures it";
    EXPECT_FALSE(r.why.empty()) << "budget row " << r.id << " has no error analysis";
  }
}

#ifdef POSENC_CLI_PROGRAM
TEST(Registry, EverySchemeHasPresetsAndVerbsInTheCli) {
  const auto [out, status] =
      run(std::string(POSENC_PROGRAM_RUNNER) + "'" + POSENC_CLI_PROGRAM + "' list --format json");
  ASSERT_EQ(status, 0) << "posenc list failed";
  const auto doc = nlohmann::json::parse(out);
  std::set<std::string> listed;
  for (const auto& s : doc.at("schemes")) {
    const std::string name = s.at("name");
    listed.insert(name);
    EXPECT_TRUE(registered(name)) << "the CLI lists unregistered scheme '" << name << "'";
    EXPECT_FALSE(s.at("presets").empty()) << name << ": no presets";
    for (const auto& p : s.at("presets")) {
      EXPECT_FALSE(p.at("implementation").get<std::string>().empty()) << name;
      EXPECT_FALSE(p.at("commit").get<std::string>().empty()) << name;
    }
    const auto verbs = s.at("verbs").get<std::vector<std::string>>();
    EXPECT_NE(std::find(verbs.begin(), verbs.end(), "check"), verbs.end()) << name << ": no check verb";
    EXPECT_FALSE(s.at("parameters").empty()) << name << ": no parameters";
  }
  for (const std::string& n : kSchemes) EXPECT_TRUE(listed.contains(n)) << "the CLI does not register scheme '" << n << "'";
}
#endif

#ifdef POSENC_BENCH_PROGRAM
// A test of the main job's benchmark program: its own ctest entry, properties.MainJobPrograms (label "mainjob"),
// which the test command leaves to CI and the main job (it needs the whole build).
TEST(MainJobPrograms, EverySchemeHasBenchmarksNamedWithItsPrefix) {
  const auto [out, status] =
      run(std::string(POSENC_PROGRAM_RUNNER) + "'" + POSENC_BENCH_PROGRAM + "' --benchmark_list_tests=true");
  ASSERT_EQ(status, 0) << "posenc_bench --benchmark_list_tests failed";
  std::istringstream lines(out);
  std::set<std::string> prefixes;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const std::string scheme = line.substr(0, line.find('/'));
    prefixes.insert(scheme);
    EXPECT_TRUE(registered(scheme)) << "benchmark '" << line << "' does not start with a registered scheme";
  }
  for (const std::string& n : kSchemes) EXPECT_TRUE(prefixes.contains(n)) << "no benchmark named '" << n << "/...'";
}
#endif


// Misuse tests (schemes/<scheme>/misuse_test.cpp, program posenc_api_tests): every function a scheme's public
// header declares at namespace scope (schemes/<scheme>/include/lib/posenc/<scheme>.hpp) is named in a
// TEST(Misuse, <Prefix>...) of that scheme's file, so a scheme cannot land with a public function nobody has fed bad
// arguments (issue "Reliability": default-constructed structs, zero and huge sizes, short and overlapping spans).
TEST(Registry, EverySchemesPublicFunctionsHaveMisuseTests) {
  const auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  for (std::size_t i = 0; i < kSchemes.size(); ++i) {
    const std::string& scheme = kSchemes[i];
    const std::string misuse = slurp(kSource / "schemes" / scheme / "misuse_test.cpp");
    // The scheme's misuse tests: from each "TEST(Misuse, <Prefix>" to the next "TEST(".
    std::string bodies;
    const std::string open = "TEST(Misuse, " + kPrefixes[i];
    for (std::size_t at = misuse.find(open); at != std::string::npos; at = misuse.find(open, at + 1))
      bodies += misuse.substr(at, misuse.find("TEST(", at + 1) - at);
    EXPECT_FALSE(bodies.empty()) << scheme << ": no TEST(Misuse, " << kPrefixes[i] << "...) in schemes/" << scheme << "/misuse_test.cpp";
    // Functions declared at namespace scope (column 0) in its public header.
    const std::regex decl(R"(^(?:inline |template ?<[^>]*> ?)?[A-Za-z_][\w:<>, ]*[\s*&]([a-z_]\w*)\()");
    std::istringstream header(slurp(kSource / "schemes" / scheme / "include/lib/posenc" / (scheme + ".hpp")));
    std::set<std::string> functions;
    for (std::string line; std::getline(header, line);) {
      std::smatch m;
      if (std::regex_search(line, m, decl)) functions.insert(m[1]);
    }
    EXPECT_FALSE(functions.empty()) << scheme << ": no public functions found in its header";
    for (const std::string& f : functions)
      EXPECT_TRUE(std::regex_search(bodies, std::regex("\\b" + f + "\\s*(<[^>]*>)?\\(")))
          << scheme << ": the public function " << f << " is not called in any TEST(Misuse, " << kPrefixes[i] << "...)";
  }
}

}  // namespace claims_registry
