#include "schemes/tener/check.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/spec_json.hpp"

namespace posenc::verify::tener {

CheckReport check_table(const TenerSpec& spec, std::size_t length, const relative::TableInput& in,
                        const reference::EnvelopeAllowance& allowance, int threads) {
  const SinusoidalSpec sin = tener_sinusoidal_spec(spec, length);  // validates the spec and the length
  std::vector<std::int64_t> positions(2 * length);
  for (std::size_t c = 0; c < 2 * length; ++c) positions[c] = static_cast<std::int64_t>(c) - static_cast<std::int64_t>(length);
  return relative::check_table(
      "tener", to_json(spec), sin, std::move(positions), "length", std::to_string(length), "d_head", in, allowance,
      threads,
      "TENER's row c is the [sin | cos] sinusoid of t = c - L (w_k = 10000^(-k/(h - 1))), the row of -L zero when L > "
      "init_size / 2 (a fresh module's rebuilt table; CONVENTIONS.md §2.6).");
}

}  // namespace posenc::verify::tener
