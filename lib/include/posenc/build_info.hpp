// posenc/build_info.hpp — what built this copy of posenc, for the methods block of every report.
#pragma once

#include <string>

namespace posenc {

struct BuildInfo {
  std::string version;     // project version
  std::string commit;      // git commit at configure time ("unknown" outside a checkout); POSENC_COMMIT overrides
  std::string compiler;    // e.g. "GNU 12.2.0"
  std::string flags;       // CMAKE_CXX_FLAGS + build-type flags + arch flags of lib/
  std::string build_type;  // e.g. "Release"
  std::string run_id;      // POSENC_RUN_ID of the main job that ran this program ("" outside one): lets a report
                           // tell which result files come from the same run
};
BuildInfo build_info();

}  // namespace posenc
