#include "schemes/transformer_xl/check.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/spec_json.hpp"

namespace posenc::verify::transformer_xl {

CheckReport check_table(const TransformerXlSpec& spec, std::size_t key_length, const relative::TableInput& in,
                        const reference::EnvelopeAllowance& allowance, int threads) {
  const SinusoidalSpec sin = transformer_xl_sinusoidal_spec(spec);  // validates the spec
  check_transformer_xl_lengths(1, key_length);
  std::vector<std::int64_t> positions(key_length);
  for (std::size_t c = 0; c < key_length; ++c)
    positions[c] = transformer_xl_position(spec, static_cast<std::int64_t>(key_length - 1 - c));
  return relative::check_table(
      "transformer_xl", to_json(spec), sin, std::move(positions), "key_length", std::to_string(key_length), "d_model",
      in, allowance, threads,
      "Transformer-XL's row c is the [sin | cos] sinusoid of the distance pos(key_length - 1 - c) (pos_seq = klen - 1 "
      "down to 0, clamp_len; CONVENTIONS.md §2.5).");
}

}  // namespace posenc::verify::transformer_xl
