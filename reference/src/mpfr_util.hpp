// reference/src/mpfr_util.hpp — what the oracles' Ziv loops share: raw access to a Real's mpfr_t and an mpfr_t of any
// precision cleared on scope exit (working values may exceed kMaxBits, which make_real refuses). Internal to
// reference/src.
#pragma once

#include <mpfr.h>

#include <algorithm>

#include "posenc/reference/mp.hpp"

namespace posenc::reference::detail {

inline mpfr_ptr raw(Real& x) { return x.backend().data(); }
inline mpfr_srcptr raw(const Real& x) { return x.backend().data(); }

// An mpfr_t of the given precision (at least MPFR_PREC_MIN), cleared on scope exit; movable, so the oracles keep
// vectors of them (a moved-from Mp holds the other's old value and stays valid).
class Mp {
 public:
  explicit Mp(mpfr_prec_t prec) { mpfr_init2(v_, std::max<mpfr_prec_t>(prec, MPFR_PREC_MIN)); }
  Mp(Mp&& o) noexcept {
    mpfr_init2(v_, MPFR_PREC_MIN);
    mpfr_swap(v_, o.v_);
  }
  Mp& operator=(Mp&& o) noexcept {
    mpfr_swap(v_, o.v_);
    return *this;
  }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  ~Mp() { mpfr_clear(v_); }
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  mpfr_prec_t prec() const { return mpfr_get_prec(v_); }

 private:
  mpfr_t v_;
};

}  // namespace posenc::reference::detail
