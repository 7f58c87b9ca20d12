// properties/support/misuse.hpp — what the misuse tests share (schemes/<name>/misuse_test.cpp and
// properties/support/misuse_test.cpp, program posenc_api_tests): every public function of the library called the
// wrong way must throw posenc::Error naming what was wrong, and write nothing outside what it was given. The invalid
// specs come from the spec descriptions (refused_specs, spec_probes.hpp). The library and GoogleTest only: the
// sanitizer suite (scripts/sanitize.sh) builds this program, so an out-of-span access or undefined behaviour on the
// way to the error is a failure too.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>

#include "posenc/error.hpp"
#include "spec_probes.hpp"

namespace posenc::test::misuse {

using posenc::Error;
using posenc::test::contract::refused_specs;  // every spec the description refuses (spec_probes.hpp)
inline constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
inline constexpr std::size_t kHuge = std::numeric_limits<std::size_t>::max();

}  // namespace posenc::test::misuse

// The call throws posenc::Error whose message names `needle`.
#define EXPECT_ERROR_NAMING(call, needle)                                                              \
  do {                                                                                                 \
    try {                                                                                              \
      call;                                                                                            \
      ADD_FAILURE() << #call << " did not throw";                                                      \
    } catch (const ::posenc::Error& e) {                                                               \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << #call << ": " << e.what();   \
    } catch (const std::exception& e) {                                                                \
      ADD_FAILURE() << #call << " threw something other than posenc::Error: " << e.what();             \
    }                                                                                                  \
  } while (0)
