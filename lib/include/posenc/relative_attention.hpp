// posenc/relative_attention.hpp — what the sinusoid-relative attentions (Transformer-XL, XLNet, TENER) share: how
// their scores are assembled.
//
// Each of them scores a query row i against a key j with a content term <q_i + a, k_j>, a position term
// <q_i + b, P[c(i, j)]> whose row c(i, j) of the positional keys P (the sinusoid table of the call, projected per
// head or not) depends only on the offset j - q_i, and scheme-specific extras (TENER's key-position term, XLNet's
// segment term). The code of the models computes the position term for every (query, table row) pair with one
// gemm and moves each row into place with a zero-pad-and-reshape "rel_shift", which leaves junk wherever the table
// has no row for (i, j). posenc offers two forms of the same scores, and the shift itself as a separate function:
//   blas     per block of query rows, one gemm (q + b) P^T over just the table rows the block uses, then the shift
//            as a strided copy of the valid part of each row (the rest -inf), then the content term as a beta = 1
//            gemm over the visible keys: two gemms and a copy, never the junk.
//   direct   each defined entry evaluated at its own row c(i, j) with explicit dot products (O(Lq Lk d), no BLAS):
//            the definition, for checking the blas form and for tiny calls.
// Both write -inf at every entry that is undefined or hidden by the scheme's mask or the key mask. The rel_shift
// functions of each scheme reproduce the code's reshape bit for bit, junk included (for a user's own matrix).
#pragma once

#include <array>

#include "posenc/describe.hpp"

namespace posenc {

enum class RelativeScoresForm { blas, direct };

template <>
struct EnumTraits<RelativeScoresForm> {
  static constexpr std::array<EnumValue<RelativeScoresForm>, 2> values{{
      {RelativeScoresForm::blas, "blas", "one gemm per block of query rows against the table rows it uses, the shift as a strided copy"},
      {RelativeScoresForm::direct, "direct", "every defined entry at its own table row, explicit dot products (no BLAS)"},
  }};
};

}  // namespace posenc
