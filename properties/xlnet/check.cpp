#include "xlnet/check.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/spec_json.hpp"

namespace posenc::test::xlnet {

CheckReport check_table(const XlnetSpec& spec, std::size_t query_length, std::size_t key_length,
                        const relative::TableInput& in, const reference::EnvelopeAllowance& allowance, int threads) {
  const SinusoidalSpec sin = xlnet_sinusoidal_spec(spec);  // validates the spec
  const std::size_t rows = xlnet_table_rows(spec, query_length, key_length);
  std::vector<std::int64_t> positions(rows);
  for (std::size_t c = 0; c < rows; ++c) positions[c] = xlnet_position(spec, c, query_length, key_length);
  return relative::check_table(
      "xlnet", to_json(spec), sin, std::move(positions), "key_length",
      std::to_string(key_length) + " (query_length " + std::to_string(query_length) + ")", "d_model", in, allowance,
      threads,
      "XLNet's row c is the [sin | cos] sinusoid of pos_seq[c] (klen .. -qlen + 1 for bi, klen .. 0 for uni, negated "
      "for bi_data's backward half, clamp_len; CONVENTIONS.md §2.9).");
}

}  // namespace posenc::test::xlnet
