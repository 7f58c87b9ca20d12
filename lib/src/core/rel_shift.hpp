// lib/src/core/rel_shift.hpp — the zero-pad-and-reshape "relative shifts" of the models' code, reproduced as the data
// movements they are (every output element is one input element or a pad zero, so the copies are bit for bit, junk
// included). Each is written from the flat index arithmetic of its view/reshape sequence:
//   front_pad   Transformer-XL _rel_shift of x [m][n]: zero column in front ([m][n + 1]), view [n + 1][m], drop
//               the first row (m elements), view [m][n]: out_flat[t] = padded_flat[m + t].
//   bnij        XLNet rel_shift_bnij of x [m][r] keeping klen columns: view [r][m], drop the first row, view
//               [m][r - 1], first klen columns: out[i][j] = x_flat[m + i (r - 1) + j].
//   tener_shift TENER _shift of x [L][2L]: zero column appended ([L][2L + 1]), view [2L + 1][L], drop the last row,
//               view [L][2L], last L columns: out[i][j] = padded_flat[2L i + L + j].
//   tener_transpose_shift  TENER _transpose_shift of y [L][2L]: zero column appended, view [2L + 1][L], rows 1, 3,
//               .., 2L - 1, transposed: out[i][j] = padded_flat[(2j + 1) L + i].
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "posenc/error.hpp"

namespace posenc::core {

namespace rel_shift_detail {

inline void check_sizes(const char* where, std::size_t x_size, std::size_t x_want, std::size_t out_size,
                        std::size_t out_want, const std::string& x_shape, const std::string& out_shape) {
  if (x_size != x_want)
    throw Error(where, "x", std::to_string(x_size) + " elements", "exactly " + x_shape + " = " + std::to_string(x_want));
  if (out_size != out_want)
    throw Error(where, "out", std::to_string(out_size) + " elements",
                "exactly " + out_shape + " = " + std::to_string(out_want));
}

inline void check_length(const char* where, const char* name, std::size_t n, std::size_t max) {
  if (n == 0 || n > max) throw Error(where, name, std::to_string(n), "1 .. " + std::to_string(max));
}

constexpr std::size_t kMaxSide = std::size_t{1} << 30;

}  // namespace rel_shift_detail

// Element t of the [m][n + 1] matrix with a zero column in front of x [m][n].
template <class T>
T front_padded(std::span<const T> x, std::size_t n, std::size_t t) {
  const std::size_t row = t / (n + 1), col = t % (n + 1);
  return col == 0 ? T(0) : x[row * n + col - 1];
}

// Element t of the [m][n + 1] matrix with a zero column after x [m][n].
template <class T>
T back_padded(std::span<const T> x, std::size_t n, std::size_t t) {
  const std::size_t row = t / (n + 1), col = t % (n + 1);
  return col == n ? T(0) : x[row * n + col];
}

template <class T>
void rel_shift_front_pad(const char* where, std::span<const T> x, std::size_t m, std::size_t n, std::span<T> out) {
  using namespace rel_shift_detail;
  check_length(where, "key_length", n, kMaxSide);
  check_length(where, "query_length", m, n);
  check_sizes(where, x.size(), m * n, out.size(), m * n, "query_length * key_length", "query_length * key_length");
  for (std::size_t t = 0; t < m * n; ++t) out[t] = front_padded(x, n, m + t);
}

template <class T>
void rel_shift_bnij(const char* where, std::span<const T> x, std::size_t m, std::size_t r, std::size_t klen,
                    std::span<T> out) {
  using namespace rel_shift_detail;
  check_length(where, "rows", r, kMaxSide);
  if (r < 2) throw Error(where, "rows", std::to_string(r), ">= 2 (the shift drops one row of the [rows][m] view)");
  check_length(where, "query_length", m, kMaxSide);
  check_length(where, "key_length", klen, r - 1);
  check_sizes(where, x.size(), m * r, out.size(), m * klen, "query_length * rows", "query_length * key_length");
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < klen; ++j) out[i * klen + j] = x[m + i * (r - 1) + j];
}

template <class T>
void tener_shift(const char* where, std::span<const T> x, std::size_t L, std::span<T> out) {
  using namespace rel_shift_detail;
  check_length(where, "length", L, kMaxSide);
  check_sizes(where, x.size(), 2 * L * L, out.size(), L * L, "length * 2 length", "length * length");
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) out[i * L + j] = back_padded(x, 2 * L, 2 * L * i + L + j);
}

template <class T>
void tener_transpose_shift(const char* where, std::span<const T> y, std::size_t L, std::span<T> out) {
  using namespace rel_shift_detail;
  check_length(where, "length", L, kMaxSide);
  check_sizes(where, y.size(), 2 * L * L, out.size(), L * L, "length * 2 length", "length * length");
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) out[i * L + j] = back_padded(y, 2 * L, (2 * j + 1) * L + i);
}

}  // namespace posenc::core
