// reports/figures/cpython_random.hpp — CPython's random.Random(seed) in C++, so that a figure whose synthetic inputs
// the report once drew in Python (random.Random(seed).random() / .gauss()) keeps the same numbers, bit for bit:
//   seeding   an int seed 0 <= seed < 2^32 is one 32-bit key word: MT19937's init_genrand(19650218), then
//             init_by_array({seed}), then mt[0] = 2^31 (CPython's random_seed / init_by_array); std::mt19937 takes
//             that state word for word through a seed sequence (and, as CPython, twists before its first output)
//   random()  ((a >> 5) 2^26 + (b >> 6)) / 2^53 of two consecutive 32-bit outputs a, b (genrand_res53)
//   gauss()   random.gauss: x = 2 pi random(), g = sqrt(-2 ln(1 - random())); returns mu + cos(x) g sigma and keeps
//             sin(x) g for the next call (the same libm calls in the same order as Python's math module)
// The arithmetic must stay as written (no fused multiply-add: posenc_figures is compiled without -march=native).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <optional>
#include <random>

namespace posenc::figures {

class CPythonRandom {
 public:
  explicit CPythonRandom(std::uint32_t seed) {
    InitByArray init{seed};
    mt_.seed(init);
  }

  double random() {
    const std::uint32_t a = static_cast<std::uint32_t>(mt_()) >> 5;
    const std::uint32_t b = static_cast<std::uint32_t>(mt_()) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  }

  double gauss(double mu, double sigma) {
    double z;
    if (spare_) {
      z = *spare_;
      spare_.reset();
    } else {
      const double x2pi = random() * (2.0 * std::numbers::pi);
      const double g2rad = std::sqrt(-2.0 * std::log(1.0 - random()));
      z = std::cos(x2pi) * g2rad;
      spare_ = std::sin(x2pi) * g2rad;
    }
    return mu + z * sigma;
  }

 private:
  // The seed sequence whose 624 words are the state init_by_array({key}) leaves.
  struct InitByArray {
    using result_type = std::uint32_t;
    std::uint32_t key;

    template <class It>
    void generate(It first, It last) const {
      constexpr std::uint32_t n = 624;
      std::uint32_t mt[n];
      mt[0] = 19650218u;
      for (std::uint32_t i = 1; i < n; ++i) mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i;
      std::uint32_t i = 1;
      for (std::uint32_t k = n; k > 0; --k) {  // one key word: j is always 0
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key;
        if (++i >= n) mt[0] = mt[n - 1], i = 1;
      }
      for (std::uint32_t k = n - 1; k > 0; --k) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - i;
        if (++i >= n) mt[0] = mt[n - 1], i = 1;
      }
      mt[0] = 0x80000000u;
      for (std::uint32_t w = 0; first != last && w < n; ++first, ++w) *first = mt[w];
    }
  };

  std::mt19937 mt_;
  std::optional<double> spare_;
};

}  // namespace posenc::figures
