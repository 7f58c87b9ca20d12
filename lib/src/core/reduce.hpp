// Reductions whose result does not depend on the vector width the compiler chose for the build (a native and a
// packaged build, or two CPUs, give the same bits): the order is fixed in the source.
#pragma once

#include <cstddef>

namespace posenc::core {

// x[0] + ... + x[n-1], each converted to double and summed in double in a fixed order: entry j into running sum
// j mod 8 (in order), the eight sums combined as ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7)), then the
// remaining n mod 8 entries in order. The eight chains are independent, so the loop vectorises (one 512-bit add,
// two 256-bit or four 128-bit per step); one running sum was a serial chain of adds (~4 cycles per entry). Any
// order's error is within gamma_{n-1} of the sum of |x_j|, the bound the callers' analyses use.
template <class T>
double sum_in_double(const T* x, std::size_t n) noexcept {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (std::size_t l = 0; l < 8; ++l) s[l] += static_cast<double>(x[j + l]);
  double total = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
  for (; j < n; ++j) total += static_cast<double>(x[j]);
  return total;
}

// The largest of x[0..n) and `init` (max is exact: any order gives the same value; the reduction vectorises,
// where a running std::max was a serial chain). Not for NaN inputs.
template <class T>
T max_of(const T* x, std::size_t n, T init) noexcept {
  T m = init;
#pragma omp simd reduction(max : m)
  for (std::size_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

}  // namespace posenc::core
