// properties/support/simd_targets.hpp — running a claim's computation on every SIMD target (posenc/simd.hpp), for
// the claims that hold the targets to the same bytes.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/simd.hpp"

namespace posenc::test {

// Runs fn(target) once per SIMD target this build and CPU have (posenc::simd_targets(): best first, "scalar" last)
// with the kernels capped at it; afterwards (also when fn throws) the cap in force before is restored.
template <class Fn>
void for_each_simd_target(Fn&& fn) {
  struct Restore {
    std::string before = simd_target();
    ~Restore() { set_simd_target(before); }
  } restore;
  for (const std::string& t : simd_targets()) {
    set_simd_target(t);
    fn(t);
  }
}

// The first index at which a and b differ in their bits (a.size() when they are bitwise identical; equal sizes).
template <class T>
std::size_t first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return i;
  return a.size();
}

}  // namespace posenc::test
