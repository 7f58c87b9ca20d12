// reference/src/mpfr_util.hpp — what the oracles' Ziv loops share: raw access to a Real's mpfr_t and an mpfr_t of any
// precision cleared on scope exit (working values may exceed kMaxBits, which make_real refuses). Internal to
// reference/src.
#pragma once

#include <mpfr.h>

#include "posenc/reference/mp.hpp"

namespace posenc::reference::detail {

inline mpfr_ptr raw(Real& x) { return x.backend().data(); }
inline mpfr_srcptr raw(const Real& x) { return x.backend().data(); }

class Mp {
 public:
  explicit Mp(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  ~Mp() { mpfr_clear(v_); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }

 private:
  mpfr_t v_;
};

}  // namespace posenc::reference::detail
