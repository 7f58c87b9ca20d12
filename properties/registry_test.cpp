// The registry test: every registered scheme (posenc/schemes.hpp) has its one place in every part —
// spec, lib, reference, properties (claims in the ledger, rows in the budget table) and benchmarks —
// and every claim and budget row belongs to a registered scheme. Like ggml's backend test that
// enumerates every op, it fails the moment a scheme is added without one of its parts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "budget.hpp"
#include "claims.hpp"
#include "posenc/schemes.hpp"

namespace {

namespace fs = std::filesystem;
const fs::path kSource = POSENC_SOURCE_DIR;

bool is_registered(std::string_view scheme) {
  const auto all = posenc::registered_schemes();
  return std::any_of(all.begin(), all.end(), [&](const auto& s) { return s.name == scheme; });
}

TEST(Registry, EverySchemeHasItsFileInEveryPart) {
  for (const auto& s : posenc::registered_schemes()) {
    const std::string n(s.name);
    for (const fs::path& f : {fs::path("spec/include/posenc") / (n + "_spec.hpp"), fs::path("lib/include/posenc") / (n + ".hpp"),
                              fs::path("lib/src") / (n + ".cpp"), fs::path("reference/include/posenc/reference") / (n + ".hpp"),
                              fs::path("reference/src") / (n + ".cpp"), fs::path("properties") / (n + "_properties.cpp"),
                              fs::path("benchmarks") / (n + "_bench.cpp")})
      EXPECT_TRUE(fs::exists(kSource / f)) << "scheme '" << n << "' has no " << f;
  }
}

TEST(Registry, EverySchemeHasClaimsAndBudgetRows) {
  for (const auto& s : posenc::registered_schemes()) {
    const auto claims = posenc::test::claims();
    const auto rows = posenc::test::budget_rows();
    EXPECT_TRUE(std::any_of(claims.begin(), claims.end(), [&](const auto& c) { return c.scheme == s.name; }))
        << "scheme '" << s.name << "' has no claim in the ledger";
    EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.scheme == s.name; }))
        << "scheme '" << s.name << "' has no row in the budget table";
  }
}

TEST(Registry, EveryClaimAndBudgetRowBelongsToARegisteredScheme) {
  for (const auto& c : posenc::test::claims()) {
    EXPECT_TRUE(is_registered(c.scheme)) << "claim " << c.id << " names unregistered scheme '" << c.scheme << "'";
    for (const auto& row : c.budget_rows) EXPECT_NO_THROW(posenc::test::budget(row)) << "claim " << c.id << " cites missing budget row " << row;
  }
  for (const auto& r : posenc::test::budget_rows())
    EXPECT_TRUE(is_registered(r.scheme)) << "budget row " << r.id << " names unregistered scheme '" << r.scheme << "'";
}

}  // namespace
