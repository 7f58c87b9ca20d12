// lib/src/core/blas.hpp — cblas by element type, the one place where float and double calls differ, and the
// one place where sizes meet OpenBLAS's 32-bit blasint (checked, never silently truncated).
#pragma once

#include <cblas.h>

#include <cstddef>
#include <limits>
#include <string>

#include "posenc/blas.hpp"
#include "posenc/error.hpp"

namespace posenc::core {

// n as a blasint; throws Error(where, what) if it does not fit.
inline blasint to_blasint(std::size_t n, const char* where, const char* what) {
  if (n > static_cast<std::size_t>(std::numeric_limits<blasint>::max()))
    throw Error(where, what, std::to_string(n),
                "an integer <= " + std::to_string(std::numeric_limits<blasint>::max()) + " (the BLAS integer type)");
  return static_cast<blasint>(n);
}

// x' = c x + s y, y' = c y - s x over n pairs (x[i*incx], y[i*incy]).
inline void rot(blasint n, float* x, blasint incx, float* y, blasint incy, double c, double s) {
  cblas_srot(n, x, incx, y, incy, static_cast<float>(c), static_cast<float>(s));
}
inline void rot(blasint n, double* x, blasint incx, double* y, blasint incy, double c, double s) {
  cblas_drot(n, x, incx, y, incy, c, s);
}

// C (m x n) = A (m x k) B^T (B is n x k), row-major, leading dimensions k, k, n.
inline void gemm_nt(blasint m, blasint n, blasint k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
}
inline void gemm_nt(blasint m, blasint n, blasint k, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, a, k, b, k, 0.0, c, n);
}

// C (m x n) = alpha A (m x k) B^T + C, row-major, leading dimensions k, k, ldc (beta = 1: C is read, not cleared).
inline void gemm_nt_accumulate(blasint m, blasint n, blasint k, double alpha, const float* a, const float* b, float* c,
                               blasint ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, static_cast<float>(alpha), a, k, b, k, 1.0f, c, ldc);
}
inline void gemm_nt_accumulate(blasint m, blasint n, blasint k, double alpha, const double* a, const double* b,
                               double* c, blasint ldc) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, alpha, a, k, b, k, 1.0, c, ldc);
}

// C (m x n) = alpha A (m x k) B (k x n) + beta C, row-major, leading dimensions lda, ldb, ldc.
inline void gemm_nn(blasint m, blasint n, blasint k, double alpha, const float* a, blasint lda, const float* b,
                    blasint ldb, double beta, float* c, blasint ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, static_cast<float>(alpha), a, lda, b, ldb,
              static_cast<float>(beta), c, ldc);
}
inline void gemm_nn(blasint m, blasint n, blasint k, double alpha, const double* a, blasint lda, const double* b,
                    blasint ldb, double beta, double* c, blasint ldc) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// C (m x n) = alpha A (m x k) B^T (B is n x k) + beta C, row-major, leading dimensions lda, ldb, ldc.
inline void gemm_nt_ld(blasint m, blasint n, blasint k, double alpha, const float* a, blasint lda, const float* b,
                       blasint ldb, double beta, float* c, blasint ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, static_cast<float>(alpha), a, lda, b, ldb,
              static_cast<float>(beta), c, ldc);
}
inline void gemm_nt_ld(blasint m, blasint n, blasint k, double alpha, const double* a, blasint lda, const double* b,
                       blasint ldb, double beta, double* c, blasint ldc) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Upper triangle of C (n x n) = A A^T (A is n x k), row-major.
inline void syrk_upper(blasint n, blasint k, const float* a, float* c) {
  cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, n, k, 1.0f, a, k, 0.0f, c, n);
}
inline void syrk_upper(blasint n, blasint k, const double* a, double* c) {
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, n, k, 1.0, a, k, 0.0, c, n);
}

}  // namespace posenc::core
