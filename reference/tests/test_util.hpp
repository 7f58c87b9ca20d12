// Helpers shared by the oracle self-tests (reference/tests): exact comparisons of MPFR numbers.
#pragma once

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <string>

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

}  // namespace posenc::reference::test_util
