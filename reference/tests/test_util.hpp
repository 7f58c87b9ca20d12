// Helpers shared by the oracle self-tests (reference/tests): exact comparisons of MPFR numbers, the operands of the
// score tests, the float32 rounding of a libm result that is surely correct, and the generic checks of every oracle.
#pragma once

#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
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

// y (a double within 0.52 ulp of a real z, glibc's log or pow) rounded to float32, and whether that is surely RN32(z):
// every double within 4 ulps of y rounds to the same float32.
inline bool to_float_safely(double y, float* out) {
  const float f = static_cast<float>(y);
  double lo = y, hi = y;
  for (int s = 0; s < 4; ++s) {
    lo = std::nextafter(lo, -std::numeric_limits<double>::infinity());
    hi = std::nextafter(hi, std::numeric_limits<double>::infinity());
  }
  *out = f;
  return static_cast<float>(lo) == f && static_cast<float>(hi) == f;
}

// The operands of a bias scheme's score self-test, score = scale <q, k> + bias: q, k of 1 to 8 entries (v / 1024 for
// |v| <= 10^6, or one of 0.1, -1/3, 1e-300, -7.5e200, 0, 3) and a scale from `scales`; or, half the time (`cancel`),
// q the negated `bias` as a sum of 1 to 3 doubles, k = 1 and scale 1, so that the score cancels to about 2^-53,
// 2^-106 or 2^-159 of |bias| and the oracle's Ziv loop must go on.
struct ScoreOperands {
  std::vector<double> q{}, k{};
  double scale = 1.0;
  bool cancel = false;
};
inline ScoreOperands score_operands_gen(const std::vector<double>& scales, const Real& bias) {
  const std::size_t n = *rc::gen::inRange<std::size_t>(1, 9);
  auto value = rc::gen::oneOf(rc::gen::map(rc::gen::inRange(-1000000, 1000001), [](int v) { return v / 1024.0; }),
                              rc::gen::element(0.1, -1.0 / 3.0, 1e-300, -7.5e200, 0.0, 3.0));
  ScoreOperands c{.q = *rc::gen::container<std::vector<double>>(n, value),
                  .k = *rc::gen::container<std::vector<double>>(n, value),
                  .scale = *rc::gen::elementOf(scales),
                  .cancel = *rc::gen::arbitrary<bool>()};
  if (c.cancel) {
    const int depth = *rc::gen::inRange(1, 4);
    c.q.clear();
    Real r = bias;
    for (int t = 0; t < depth && !mpfr_zero_p(raw(r)); ++t) {
      const double part = round_to_double(r);
      c.q.push_back(-part);
      r = sub(r, make_real(part, 64));
    }
    if (c.q.empty()) c.q.push_back(0.0);
    c.k.assign(c.q.size(), 1.0);
    c.scale = 1.0;
  }
  return c;
}

// scale <q, k> exactly, at `bits` (the operands' terms lie in 2^-2000 .. 2^1340: bits >= 4000 holds their sum
// exactly); the bias is then added by the test at its own precision.
inline Real exact_scaled_dot(const ScoreOperands& c, unsigned bits) {
  Real sum = make_real(bits);
  for (std::size_t i = 0; i < c.q.size(); ++i) {
    Real t = make_real(200);
    mpfr_mul_d(raw(t), raw(make_real(c.q[i], 64)), c.k[i], MPFR_RNDN);
    mpfr_mul_d(raw(t), raw(t), c.scale, MPFR_RNDN);
    mpfr_add(raw(sum), raw(sum), raw(t), MPFR_RNDN);  // exact: the precision covers every exponent here
  }
  return sum;
}

}  // namespace posenc::reference::test_util
