// Helpers shared by the oracle self-tests (reference/tests): exact comparisons of MPFR numbers.
#pragma once

#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/reference/mp.hpp"

namespace posenc::reference::test_util {

using namespace posenc::reference;
inline mpfr_srcptr raw(const Real& x) { return x.backend().data(); }
inline mpfr_ptr raw(Real& x) { return x.backend().data(); }

// a - b, exactly enough for any comparison made here.
inline Real sub(const Real& a, const Real& b) {
  Real r = make_real(std::max(bits_of(a), bits_of(b)) + 2200);
  mpfr_sub(raw(r), raw(a), raw(b), MPFR_RNDN);
  return r;
}
// |x| < 2^e  (MPFR: |x| in [2^(E-1), 2^E) with E = mpfr_get_exp).
inline bool abs_below_pow2(const Real& x, long e) { return mpfr_zero_p(raw(x)) || mpfr_get_exp(raw(x)) <= e; }
inline double to_d(const Real& x) { return round_to_double(x); }
inline bool same(const Real& a, const Real& b) { return mpfr_equal_p(raw(a), raw(b)) != 0; }
inline Real pow2(long e, unsigned bits = 64) {
  Real r = make_real(bits);
  mpfr_set_ui_2exp(raw(r), 1, e, MPFR_RNDN);
  return r;
}
// Does the Real hold exactly the binary number f (an infinity included)?
inline bool holds(const Real& x, double f) {
  if (std::isinf(f)) return mpfr_inf_p(raw(x)) != 0 && (mpfr_sgn(raw(x)) > 0) == (f > 0);
  return mpfr_number_p(raw(x)) && mpfr_cmp_d(raw(x), f) == 0;
}
inline std::string show(const Real& x) { return to_decimal(x, 40) + " (" + to_hexfloat(x) + ")"; }


// The message of the posenc::Error that f() throws, or "" if it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const posenc::Error& e) {
    return e.what();
  }
  return "";
}

// Whether two lists of values are the same, bit for bit (Reals by mpfr_equal_p; integers and doubles by ==).
inline bool same_values(const std::vector<Real>& a, const std::vector<Real>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Real& x, const Real& y) { return same(x, y); });
}
template <class T>
bool same_values(const std::vector<T>& a, const std::vector<T>& b) {
  return a == b;
}

// The values run() returns (a std::vector of Reals, integers or doubles) do not change when Boost's default
// precision is lowered to 5 decimal digits (18 bits) while it runs: an oracle that used the default anywhere would
// change them. run() builds what it calls, oracles included.
template <class F>
void expect_independent_of_default_precision(F&& run) {
  const auto before = run();
  const unsigned saved = Real::default_precision();
  Real::default_precision(5);
  decltype(run()) low;
  try {
    low = run();
  } catch (...) {
    Real::default_precision(saved);
    throw;
  }
  Real::default_precision(saved);
  EXPECT_TRUE(same_values(before, low)) << "the values changed with Boost's default precision at 18 bits";
}

// run() on 4 threads at once, 3 rounds on each, returns its serial values. Each thread frees MPFR's per-thread
// caches when done (else LeakSanitizer reports them).
template <class F>
void expect_concurrent_calls_match_serial(F&& run) {
  const auto serial = run();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int round = 0; round < 3; ++round)
        if (!same_values(run(), serial)) ++mismatches;
      release_thread_caches();
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0) << "runs on other threads that differ from the serial run";
}

}  // namespace posenc::reference::test_util
