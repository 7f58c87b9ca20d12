#include "posenc/reference/nezha.hpp"

#include <mpfr.h>

#include <algorithm>
#include <string>

#include "mpfr_util.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::raw;

constexpr const char* kNezhaWhere = "nezha oracle";


void check_entry(const NezhaSpec& s, std::int64_t r, std::size_t c) {
  const auto k2 = static_cast<std::int64_t>(2 * s.max_relative_position);
  if (r < 0 || r > k2) throw Error(kNezhaWhere, "r", std::to_string(r), "0 .. 2 max_relative_position = " + std::to_string(k2));
  if (c >= s.depth) throw Error(kNezhaWhere, "c", std::to_string(c), "0 .. depth - 1 = " + std::to_string(s.depth - 1));
}

Real exact_value(const NezhaSpec& s, std::int64_t r, std::size_t c, unsigned bits) {
  const unsigned w = bits + 96;
  const std::size_t t = c / 2;
  Real x = make_real(w), freq = make_real(w), angle = make_real(w);
  mpfr_set_ui(raw(x), static_cast<unsigned long>(2 * t), MPFR_RNDN);
  mpfr_div_ui(raw(x), raw(x), static_cast<unsigned long>(s.depth), MPFR_RNDN);  // 2t/depth
  mpfr_neg(raw(x), raw(x), MPFR_RNDN);
  mpfr_ui_pow(raw(freq), 10000UL, raw(x), MPFR_RNDN);                          // 10000^(-2t/depth)
  mpfr_mul_si(raw(angle), raw(freq), static_cast<long>(r), MPFR_RNDN);         // r w_t
  Real out = make_real(bits);
  if (c % 2 == 0)
    mpfr_sin(raw(out), raw(angle), MPFR_RNDN);
  else
    mpfr_cos(raw(out), raw(angle), MPFR_RNDN);
  return out;
}

Real hf_value(const NezhaSpec& s, std::int64_t r, std::size_t c, unsigned bits) {
  constexpr Binary F = Binary::f32, D = Binary::f64;
  constexpr unsigned b = 64;
  const std::size_t t = c / 2;
  const Real ln64 = rn_log(D, make_real(10000.0, b), b);  // math.log(10000.0)
  Real neg_ln = make_real(b);
  mpfr_neg(raw(neg_ln), raw(ln64), MPFR_RNDN);
  const Real c64 = rn_div(D, neg_ln, make_real(static_cast<std::int64_t>(s.depth), b), b);  // / depth (Python)
  const Real c32 = rn(F, c64, b);                          // the Python float meets a float32 tensor
  const Real two_t = rn(F, make_real(static_cast<std::int64_t>(2 * t), b), b);  // arange(0, depth, 2).float()
  const Real w32 = rn_exp(F, rn_mul(F, two_t, c32, b), b);                      // torch.exp
  const Real r32 = rn(F, make_real(r, b), b);                                   // arange(vocab).float()
  const Real a32 = rn_mul(F, r32, w32, b);                                      // position * div_term
  return with_bits(c % 2 == 0 ? rn_sin(F, a32, b) : rn_cos(F, a32, b), bits);
}

}  // namespace

std::int64_t nezha_index(const NezhaSpec& s, std::size_t i, std::size_t j, std::size_t query_length,
                         std::size_t key_length) {
  validate(s);
  check_shaw_lengths(nezha_shaw_spec(s), query_length, key_length);
  if (i >= query_length) throw Error(kNezhaWhere, "i", std::to_string(i), "< query_length = " + std::to_string(query_length));
  if (j >= key_length) throw Error(kNezhaWhere, "j", std::to_string(j), "< key_length = " + std::to_string(key_length));
  const auto K = static_cast<std::int64_t>(s.max_relative_position);
  const std::int64_t q = static_cast<std::int64_t>(key_length - query_length + i);
  const std::int64_t d = static_cast<std::int64_t>(j) - q;  // key minus query
  return std::clamp(d, -K, K) + K;
}

Real nezha_table_value(const NezhaSpec& s, std::int64_t r, std::size_t c, unsigned bits) {
  validate(s);
  check_bits(bits);
  check_entry(s, r, c);
  return s.regime == NezhaRegime::exact ? exact_value(s, r, c, bits) : hf_value(s, r, c, bits);
}

std::vector<double> nezha_table_f64(const NezhaSpec& s) {
  validate(s);
  const std::size_t rows = nezha_table_rows(s);
  std::vector<double> t(rows * s.depth);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < s.depth; ++c)
      t[r * s.depth + c] = round_to_double(nezha_table_value(s, static_cast<std::int64_t>(r), c, 53));
  return t;
}

ShawOracle nezha_attention_oracle(const NezhaSpec& s, unsigned bits) {
  std::vector<double> t = nezha_table_f64(s);
  ShawWeights w{t, std::move(t)};
  return ShawOracle(nezha_shaw_spec(s), w, bits);
}

}  // namespace posenc::reference
