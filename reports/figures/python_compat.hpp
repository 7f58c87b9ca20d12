// reports/figures/python_compat.hpp — what the report's Python modules used to compute, in C++ with the same
// results, so that a figure moved to its figures.cpp keeps its numbers:
//   fsum(xs)                  Python's math.fsum: the exactly rounded sum of doubles
//   CpythonRandom rng(seed);  CPython's random.Random(seed): rng.random(), rng.uniform(a, b), rng.gauss(mu, sigma)
// CPython seeds MT19937 with init_genrand(19650218) followed by init_by_array(key), key = the 32-bit words of |seed|
// (least significant first; [0] for 0); random() = (a * 2^26 + b) / 2^53 from two outputs a >> 5, b >> 6;
// uniform(a, b) = a + (b - a) random(); gauss is Box-Muller with the second value kept for the next call
// (random.py of CPython 3.11: x2pi = random() 2 pi, g2rad = sqrt(-2 ln(1 - random())), z = cos(x2pi) g2rad, next
// sin(x2pi) g2rad). The libm calls are the platform's, as Python's are. Only non-negative integer seeds.
// The generator itself (twist and tempering) is std::mt19937, whose state is loaded through its textual form (the
// 624 words, [rand.eng.mers]) after init_by_array has set them.
// A product and a sum here (uniform's a + (b - a) r) round twice, as Python's do, because posenc_figures is built
// without -march (no FMA instructions to contract them into); a build adding them would need -ffp-contract=off.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

namespace posenc::figures {

// The sum of xs rounded once (to nearest, ties to even), as math.fsum returns it: Shewchuk's non-overlapping
// partials (two-sum, exact), then the partials added from the largest down until the first inexact step, corrected
// when that step's error is exactly half an ulp and the next partial has its sign.
inline double fsum(const std::vector<double>& xs) {
  std::vector<double> parts;
  for (double x : xs) {
    std::size_t n = 0;
    for (double y : parts) {
      if (std::abs(x) < std::abs(y)) std::swap(x, y);
      const double hi = x + y, lo = y - (hi - x);
      if (lo != 0.0) parts[n++] = lo;
      x = hi;
    }
    parts.resize(n);
    parts.push_back(x);
  }
  if (parts.empty()) return 0.0;
  std::size_t n = parts.size() - 1;
  double hi = parts[n], lo = 0.0;
  while (n > 0) {
    const double x = hi, y = parts[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) break;
  }
  if (n > 0 && ((lo < 0.0 && parts[n - 1] < 0.0) || (lo > 0.0 && parts[n - 1] > 0.0))) {
    const double y = lo * 2.0, x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

class CpythonRandom {
 public:
  explicit CpythonRandom(std::uint64_t seed) {
    std::vector<std::uint32_t> key;
    for (std::uint64_t s = seed; s != 0; s >>= 32) key.push_back(static_cast<std::uint32_t>(s));
    if (key.empty()) key.push_back(0);
    std::stringstream text;
    for (std::uint32_t w : init_by_array(key)) text << w << ' ';
    text >> mt_;
  }

  double random() {
    const double a = static_cast<double>(mt_() >> 5), b = static_cast<double>(mt_() >> 6);
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  }

  double uniform(double a, double b) { return a + (b - a) * random(); }

  double gauss(double mu, double sigma) {
    double z;
    if (next_) {
      z = *next_;
      next_.reset();
    } else {
      const double x2pi = random() * (2.0 * std::numbers::pi);
      const double g2rad = std::sqrt(-2.0 * std::log(1.0 - random()));
      z = std::cos(x2pi) * g2rad;
      next_ = std::sin(x2pi) * g2rad;
    }
    return mu + z * sigma;
  }

 private:
  static constexpr std::size_t kN = 624;

  // MT19937's reference seeding: init_genrand(19650218), then the key mixed in (Matsumoto & Nishimura, 2002).
  static std::array<std::uint32_t, kN> init_by_array(const std::vector<std::uint32_t>& key) {
    std::array<std::uint32_t, kN> mt{};
    mt[0] = 19650218u;
    for (std::size_t i = 1; i < kN; ++i)
      mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
    std::size_t i = 1, j = 0;
    for (std::size_t k = std::max(kN, key.size()); k > 0; --k) {
      mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<std::uint32_t>(j);
      if (++i >= kN) {
        mt[0] = mt[kN - 1];
        i = 1;
      }
      if (++j >= key.size()) j = 0;
    }
    for (std::size_t k = kN - 1; k > 0; --k) {
      mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - static_cast<std::uint32_t>(i);
      if (++i >= kN) {
        mt[0] = mt[kN - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000u;
    return mt;
  }

  std::mt19937 mt_;
  std::optional<double> next_;
};

}  // namespace posenc::figures
