// posenc/schemes.hpp — the registry of schemes.
//
// Adding a scheme means adding its files in each part and a row here; the registry test
// (properties/registry_test.cpp) fails if a registered scheme lacks any of them:
//   spec/include/posenc/<name>_spec.hpp, lib/include/posenc/<name>.hpp, lib/src/<name>.cpp,
//   reference/include/posenc/reference/<name>.hpp, reference/src/<name>.cpp,
//   properties/<name>_properties.cpp (+ ledger claims and budget rows for the scheme),
//   benchmarks/<name>_bench.cpp.
#pragma once

#include <span>
#include <string_view>

namespace posenc {

struct SchemeInfo {
  std::string_view name;     // file stem in every part, CLI subcommand argument, report section
  std::string_view summary;  // one line
};

inline constexpr SchemeInfo kSchemes[] = {
    {"sinusoidal", "sinusoidal absolute encoding (Vaswani et al. 2017) in its paper, Marian, tensor2tensor and fairseq conventions"},
};

inline std::span<const SchemeInfo> registered_schemes() { return kSchemes; }

}  // namespace posenc
