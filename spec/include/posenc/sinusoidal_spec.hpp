// posenc/sinusoidal_spec.hpp — the one description of a sinusoidal absolute encoding.
//
// A SinusoidalSpec fully determines a table: the fast path (lib/), the MPFR oracle (reference/), the
// command-line tool and the reports all consume this struct and nothing else. It holds data only;
// each consumer transcribes the defining formula itself (so a shared mistake in a formula cannot hide).
//
// Definition (exact regime). With h = floor(dim/2) pairs and pair index k = 0..h-1,
//   omega_k = min_timescale * base^(-e_k),  e_k = 2k/dim            (FrequencyRule::paper)
//                                           e_k = k/max(h-1, 1)      (FrequencyRule::tensor2tensor)
//                                           e_k = k/(h-1), h >= 2    (FrequencyRule::fairseq)
//   sin slot of pair k = sin(p * omega_k),  cos slot of pair k = cos(p * omega_k)
//   Layout::interleaved: sin slot 2k, cos slot 2k+1          (paper, XLM)
//   Layout::halves:      sin slot k,  cos slot h+k           (Marian, Transformer-XL, t2t, fairseq)
//   odd dim with OddDim::zero_pad: one zero column appended (slot dim-1), as t2t and fairseq do.
//   position == padding_row: the whole row is zero (fairseq's padding_idx row).
// Emulated regime (Regime::emulated): the float32 rounding steps of the implementation that defines
// the frequency rule (tensor2tensor's get_timing_signal_1d, fairseq's get_embedding), see CONVENTIONS.md
// §2.1 and posenc/sinusoidal.hpp; the result is that implementation's float32 number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace posenc {

enum class Layout { interleaved, halves };
enum class FrequencyRule { paper, tensor2tensor, fairseq };
enum class OddDim { reject, zero_pad };
enum class Regime { exact, emulated };

struct SinusoidalSpec {
  std::size_t dim = 512;                   // d: columns of a row, including a zero-pad column
  double base = 10000.0;                   // paper's 10000; t2t: max_timescale / min_timescale (a double, as t2t's Python computes it)
  double min_timescale = 1.0;              // omega_0; t2t multiplies by min_timescale (sic, CONVENTIONS §2.1.3)
  Layout layout = Layout::interleaved;
  FrequencyRule rule = FrequencyRule::paper;
  OddDim odd_dim = OddDim::reject;
  std::int64_t first_position = 0;         // position of the first real token (fairseq: padding_idx + 1)
  std::optional<std::int64_t> padding_row; // position whose row is all zeros (fairseq: padding_idx)
  bool signed_positions = false;           // whether negative positions exist in this convention
  Regime regime = Regime::exact;

  friend bool operator==(const SinusoidalSpec&, const SinusoidalSpec&) = default;
};

// ---- presets: the conventions of well-known implementations (CONVENTIONS.md §2.1) ------------------
enum class SinusoidalPreset { vaswani, marian, tensor2tensor, fairseq };

struct SinusoidalPresetInfo {
  SinusoidalPreset preset;
  std::string_view name;         // CLI / report name
  std::string_view summary;      // one line: layout, frequencies, offsets
  std::string_view source;       // the implementation it reproduces
};
std::span<const SinusoidalPresetInfo> sinusoidal_presets();
const SinusoidalPresetInfo& preset_info(SinusoidalPreset);
SinusoidalPreset parse_sinusoidal_preset(std::string_view name);  // throws Error naming the accepted names

// Paper / XLM: interleaved, omega_k = base^(-2k/d), positions from 0, odd d rejected.
SinusoidalSpec vaswani_spec(std::size_t dim, double base = 10000.0);
// Marian / RoFormer / Transformer-XL / XLNet tables: paper frequencies, [sin | cos] halves.
SinusoidalSpec marian_spec(std::size_t dim, double base = 10000.0);
// tensor2tensor get_timing_signal_1d: halves, omega_k = min_ts * (max_ts/min_ts)^(-k/max(h-1,1)),
// odd d zero-padded, positions arange(length) + start_index. Throws if min_ts >= max_ts.
SinusoidalSpec tensor2tensor_spec(std::size_t dim, double min_timescale = 1.0, double max_timescale = 1.0e4);
// fairseq SinusoidalPositionalEmbedding: halves, omega_k = 10000^(-k/(h-1)) (d >= 4), odd d zero-padded,
// row padding_idx is zero and the first token sits at padding_idx + 1.
SinusoidalSpec fairseq_spec(std::size_t dim, std::int64_t padding_idx = 1);
SinusoidalSpec preset_spec(SinusoidalPreset, std::size_t dim);

// ---- validation and sizes -------------------------------------------------------------------------
inline constexpr std::size_t kMaxDim = std::size_t{1} << 20;
inline constexpr std::int64_t kMaxPosition = std::int64_t{1} << 40;   // |p| <= 2^40 ...
inline constexpr double kMaxAngle = 17592186044416.0;                 // ... and |p| * omega_0 <= 2^44

// Throws Error (naming parameter, value and accepted range) unless the spec is usable.
void validate(const SinusoidalSpec&);
// Number of sin/cos pairs h = floor(dim / 2).
std::size_t pair_count(const SinusoidalSpec&) noexcept;
// Largest |position| accepted for this spec: min(2^40, floor(2^44 / min_timescale)).
std::int64_t max_abs_position(const SinusoidalSpec&) noexcept;
// Throws unless position is accepted (sign convention and magnitude).
void check_position(const SinusoidalSpec&, std::int64_t position);
// Throws unless [first, first + count) is accepted; returns count * dim, checked for size_t overflow
// including the byte size for elements of element_size bytes.
std::size_t checked_table_elements(const SinusoidalSpec&, std::int64_t first, std::size_t count,
                                   std::size_t element_size);
// Position of token index t (0-based) under the spec's offset convention: first_position + t.
std::int64_t position_of_token(const SinusoidalSpec&, std::int64_t token_index);

// ---- names, for the CLI, JSON and reports ---------------------------------------------------------
std::string_view to_string(Layout);
std::string_view to_string(FrequencyRule);
std::string_view to_string(OddDim);
std::string_view to_string(Regime);
Layout parse_layout(std::string_view);
FrequencyRule parse_frequency_rule(std::string_view);
OddDim parse_odd_dim(std::string_view);
Regime parse_regime(std::string_view);
// One line that names every field, e.g. "dim=64 base=10000 min_timescale=1 layout=halves ...".
std::string describe(const SinusoidalSpec&);

}  // namespace posenc
