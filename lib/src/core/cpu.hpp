// lib/src/core/cpu.hpp — which of the kernels compiled for several instruction sets this CPU may run.
//
// posenc's hot kernels (the angle core's sin/cos, the table writer's fused pass) are compiled twice on x86-64:
// for the build's own flags and, between POSENC_AVX512_BEGIN and POSENC_AVX512_END, for AVX-512. A -march=native
// build on an AVX-512 machine knows the answer at compile time; a build for the x86-64 baseline (a distribution
// package) asks the CPU once. The variants perform the same IEEE operations, so the choice never changes a value.
// POSENC_DISABLE_AVX512=1 in the environment (read once) forces the portable kernels: the test suite runs the
// table and cache claims that way too (ctest entry properties.PortableKernels).
#pragma once

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#define POSENC_HAVE_AVX512_VARIANT 1
#define POSENC_AVX512_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512vl,avx512dq,fma\")")
#define POSENC_AVX512_END _Pragma("GCC pop_options")
#endif

namespace posenc::core {

inline bool use_avx512() noexcept {
#if defined(POSENC_HAVE_AVX512_VARIANT)
  static const bool ok = [] {
    const char* off = std::getenv("POSENC_DISABLE_AVX512");
    if (off != nullptr && std::strcmp(off, "") != 0 && std::strcmp(off, "0") != 0) return false;
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512DQ__) && defined(__FMA__)
    return true;
#else
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma");
#endif
  }();
  return ok;
#else
  return false;
#endif
}

}  // namespace posenc::core
