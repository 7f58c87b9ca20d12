// posenc/reference/nezha.hpp — the MPFR oracle of NEZHA's functional relative positions.
//
// An independent transcription of the definition in posenc/nezha_spec.hpp (CONVENTIONS.md §2.4; it never includes or
// links lib/, nor the sinusoidal oracle: the table is evaluated here from NEZHA's own formula):
//   r(i, j)  = clip(j - q_i, -K, K) + K, q_i = Lk - Lq + i (the queries are the last keys; HF: Lq = Lk)
//   T[r][c]  c = 2t: sin(r w_t), c = 2t + 1: cos(r w_t), w_t = 10000^(-2t/depth), r = 0..2K
//   exact    the real value: x = 2t/depth and w = 10000^(-x) at W = bits + 96 bits (MPFR, each rounded once:
//            relative error of w <= 2^(4 - W), of a = r w <= 2^(5 - W) with r <= 2^21, so |a - r w_t| <= 2^(26 - W)),
//            then sin/cos rounded once to `bits`: |returned - T| <= ulp_bits/2 + 2^(26 - W) = ulp_bits/2 +
//            2^(-bits - 70).
//   hf       HF's float32 steps, each correctly rounded:
//            ln64 = RN64(ln 10000); c64 = RN64(-ln64 / depth); c32 = RN32(c64);
//            w32 = RN32(exp(RN32(RN32(2t) c32))); a32 = RN32(r w32); T = RN32(sin a32) / RN32(cos a32) — exactly.
// Scores and outputs: NEZHA is Shaw's mechanism with T as both tables (sign key_minus_query, clip K, no key-query
// term, values): nezha_attention_oracle gives the Shaw oracle (posenc/reference/shaw.hpp, its own transcription of
// the Shaw definition) over the regime's table as doubles (exact: T rounded once to double; hf: the float32 numbers).
//
// Errors: posenc::Error naming the parameter: the spec (posenc::validate), "r" (not in 0..2K), "c" (not < depth),
// "bits", and the lengths / "i" / "j" of nezha_index (as posenc::reference::shaw_index).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "posenc/nezha_spec.hpp"
#include "posenc/reference/mp.hpp"
#include "posenc/reference/shaw.hpp"

namespace posenc::reference {

// r(i, j) of the definition.
std::int64_t nezha_index(const NezhaSpec&, std::size_t i, std::size_t j, std::size_t query_length,
                         std::size_t key_length);

// T[r][c] of the spec's regime (header: exact within ulp_bits/2 + 2^(-bits-70); hf exactly).
Real nezha_table_value(const NezhaSpec&, std::int64_t r, std::size_t c, unsigned bits = kDefaultBits);

// The whole table of the regime as doubles, [2K + 1][depth] row-major (exact: each entry's value rounded to double).
std::vector<double> nezha_table_f64(const NezhaSpec&);

// The Shaw oracle of NEZHA's attention (scores, outputs, score magnitudes) over nezha_table_f64.
ShawOracle nezha_attention_oracle(const NezhaSpec&, unsigned bits = kDefaultBits);

}  // namespace posenc::reference
