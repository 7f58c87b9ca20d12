// properties/support/simd_api_test.cpp — posenc/simd.hpp's contract: the targets listed, the cap, and the error for
// a target this build or CPU does not have. (That every target computes the same bytes: SIN-SIMD-1, ROPE-SIMD-1.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/simd.hpp"

namespace {

struct RestoreTarget {
  std::string before = posenc::simd_target();
  ~RestoreTarget() { posenc::set_simd_target(before); }
};

TEST(SimdTarget, TargetsEndInScalarAndTheChoiceIsTheBestUnlessCapped) {
  const RestoreTarget restore;
  const std::vector<std::string> all = posenc::simd_targets();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back(), "scalar");
  posenc::set_simd_target("auto");
  EXPECT_EQ(posenc::simd_target(), all.front());
  for (const std::string& t : all) {  // a cap at t runs t (every listed target is supported)
    posenc::set_simd_target(t);
    EXPECT_EQ(posenc::simd_target(), t);
  }
#if defined(__x86_64__)
  EXPECT_NE(std::find(all.begin(), all.end(), "avx2"), all.end()) << "x86-64 machines of this project have AVX2";
#endif
}

TEST(SimdTarget, AnUnknownTargetRaisesAnErrorNamingTheParameterAndTheTargets) {
  const RestoreTarget restore;
  for (const char* bad : {"avx9", "", "AVX2", "sse4", "neon-ish"}) {
    try {
      posenc::set_simd_target(bad);
      ADD_FAILURE() << "set_simd_target('" << bad << "') did not throw";
    } catch (const posenc::Error& e) {
      EXPECT_EQ(e.parameter(), "simd_target");
      EXPECT_NE(e.accepted().find("auto"), std::string::npos) << e.what();
      EXPECT_NE(e.accepted().find("scalar"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(posenc::simd_target(), restore.before) << "a refused name changed the target";
}

TEST(SimdTarget, TheEnvironmentsTargetIsSetOrRefusedNamingPosencSimd) {
  const RestoreTarget restore;
  const char* before = std::getenv("POSENC_SIMD");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("POSENC_SIMD", "scalar", 1);
  posenc::set_simd_target_from_environment();
  EXPECT_EQ(posenc::simd_target(), "scalar");
  ::setenv("POSENC_SIMD", "avx9", 1);
  try {
    posenc::set_simd_target_from_environment();
    ADD_FAILURE() << "POSENC_SIMD=avx9 was accepted";
  } catch (const posenc::Error& e) {
    EXPECT_EQ(e.parameter(), "POSENC_SIMD");
    EXPECT_NE(std::string(e.what()).find("'avx9' is not a target here"), std::string::npos) << e.what();
  }
  EXPECT_EQ(posenc::simd_target(), "scalar") << "a refused name changed the target";
  if (before != nullptr) ::setenv("POSENC_SIMD", saved.c_str(), 1);
  else ::unsetenv("POSENC_SIMD");
}

}  // namespace
