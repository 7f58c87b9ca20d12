// reports/figures/python_random.hpp — the numbers of CPython's random.Random(seed) (random() and gauss()), for
// figures whose random data used to be drawn in Python: the same seed gives the same numbers, bit for bit.
//   CPython seeds MT19937 (Matsumoto & Nishimura 1998) with init_by_array of the 32-bit words of |seed|, least
//   significant first; random() = ((a >> 5) * 2^26 + (b >> 6)) / 2^53 of two 32-bit outputs a, b; gauss(mu, sigma)
//   is the Box-Muller pair of Lib/random.py: x = 2 pi random(), g = sqrt(-2 ln(1 - random())), z = cos(x) g, and the
//   next call returns the cached sin(x) g; the value is mu + z sigma. cos, sin, log and sqrt are the C library's,
//   as CPython's math module calls them (so the numbers match on the same libm).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

namespace posenc::figures {

class PythonRandom {
 public:
  explicit PythonRandom(std::uint64_t seed) {
    std::vector<std::uint32_t> key;
    do {
      key.push_back(static_cast<std::uint32_t>(seed & 0xffffffffu));
      seed >>= 32;
    } while (seed != 0);
    seed_by_array(key);
  }

  // random(): a double in [0, 1) with 53 random bits.
  double random() {
    const std::uint32_t a = mt_() >> 5, b = mt_() >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  }

  double gauss(double mu = 0.0, double sigma = 1.0) {
    double z;
    if (next_) {
      z = *next_;
      next_.reset();
    } else {
      const double x2pi = random() * (2.0 * 3.141592653589793);
      const double g2rad = std::sqrt(-2.0 * std::log(1.0 - random()));
      z = std::cos(x2pi) * g2rad;
      next_ = std::sin(x2pi) * g2rad;
    }
    return mu + z * sigma;
  }

 private:
  static constexpr std::size_t kN = 624;

  // init_genrand(19650218), then the key mixed in (init_by_array); the state is handed to std::mt19937 through
  // its textual representation (the n words X_{i-n} .. X_{i-1}: [rand.eng.mers]), whose next output twists it.
  void seed_by_array(const std::vector<std::uint32_t>& key) {
    std::vector<std::uint32_t> mt(kN);
    mt[0] = 19650218u;
    for (std::size_t i = 1; i < kN; ++i)
      mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
    std::size_t i = 1, j = 0;
    for (std::size_t k = std::max(kN, key.size()); k > 0; --k) {
      mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<std::uint32_t>(j);
      if (++i >= kN) mt[0] = mt[kN - 1], i = 1;
      if (++j >= key.size()) j = 0;
    }
    for (std::size_t k = kN - 1; k > 0; --k) {
      mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - static_cast<std::uint32_t>(i);
      if (++i >= kN) mt[0] = mt[kN - 1], i = 1;
    }
    mt[0] = 0x80000000u;
    std::stringstream state;
    for (std::uint32_t w : mt) state << w << ' ';
    state >> mt_;
  }

  std::mt19937 mt_;
  std::optional<double> next_;
};

}  // namespace posenc::figures
