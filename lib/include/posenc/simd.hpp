// posenc/simd.hpp — which instruction-set target posenc's vector kernels run on.
//
// The hot kernels (the angle core's anchors, the table writer's fused pass, the correctly rounded float32 sin/cos,
// the pair rotation of RoPE's apply) are written once with Highway and compiled for every target of the
// architecture that has a fused multiply-add (x86-64: AVX-512 "avx512", AVX2 + FMA "avx2"; AArch64: "neon", "sve",
// "sve2", ...), plus "scalar", the portable loops. The best target this CPU supports is chosen at run time, so a
// build for the baseline instruction set (a distribution package) runs as fast as a -march=native one.
//
// Values contract: every target performs the same IEEE operations in the same order (the same fused multiply-adds,
// the same roundings), so the results are bitwise identical whichever target runs (claims CORE-SIMD-1 and the
// ctest entries properties.Simd.<target>, which run the table, cache and rotation claims on each target).
//
// POSENC_SIMD=<name> in the environment (read once, at the first kernel call) caps the target for the process:
// "auto" (the default) or a name simd_targets() lists; POSENC_DISABLE_AVX512=1 (older releases) means
// POSENC_SIMD=avx2. An unknown name there leaves the choice automatic: programs that want a clear error call
// set_simd_target(getenv value) themselves, as the posenc command-line tool and the benchmarks do.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace posenc {

// The target the kernels use now, e.g. "avx512", "avx2", "neon", "scalar".
std::string simd_target();

// The targets this build compiled and this CPU supports, best first; the last is always "scalar".
std::vector<std::string> simd_targets();

// Caps the kernels at `name` for the whole process (thread-safe; calls already running finish on their target):
// "auto" for the best supported target, or one of simd_targets(). Anything else raises posenc::Error naming
// simd_target, the value and the accepted names.
void set_simd_target(std::string_view name);

// set_simd_target(POSENC_SIMD) when the environment sets it (not empty): for programs that want a wrong name there
// to be an error (posenc::Error naming POSENC_SIMD) rather than the library's automatic choice.
void set_simd_target_from_environment();

}  // namespace posenc
