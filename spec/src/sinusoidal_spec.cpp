#include "posenc/sinusoidal_spec.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <sstream>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kWhere = "sinusoidal";

std::string str(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

template <class E, std::size_t N>
E parse_enum(std::string_view what, std::string_view text, const std::array<E, N>& values) {
  std::string accepted;
  for (E v : values) {
    if (to_string(v) == text) return v;
    accepted += (accepted.empty() ? "" : " | ") + std::string(to_string(v));
  }
  throw Error(std::string(kWhere), std::string(what), "'" + std::string(text) + "'", accepted);
}

constexpr std::array<SinusoidalPresetInfo, 4> kPresets{{
    {SinusoidalPreset::vaswani, "vaswani",
     "interleaved sin(2k)/cos(2k+1), omega_k = 10000^(-2k/d), positions from 0, odd d rejected",
     "Vaswani et al. 2017; HF xlm create_sinusoidal_embeddings"},
    {SinusoidalPreset::marian, "marian",
     "[sin | cos] halves, omega_k = 10000^(-2k/d), positions from past length (0), odd d rejected",
     "HF marian/roformer _init_weight; Transformer-XL, XLNet, GPT-NeoX tables (same values)"},
    {SinusoidalPreset::tensor2tensor, "tensor2tensor",
     "[sin | cos] halves, omega_k = min_ts*(max_ts/min_ts)^(-k/max(h-1,1)), odd d zero-padded, positions from start_index 0",
     "tensor2tensor common_attention.get_timing_signal_1d"},
    {SinusoidalPreset::fairseq, "fairseq",
     "[sin | cos] halves, omega_k = 10000^(-k/(h-1)) (d >= 4), odd d zero-padded, row padding_idx (1) zero, first token at row 2",
     "fairseq modules/sinusoidal_positional_embedding.py get_embedding + utils.make_positions"},
}};

}  // namespace

std::span<const SinusoidalPresetInfo> sinusoidal_presets() { return kPresets; }

const SinusoidalPresetInfo& preset_info(SinusoidalPreset p) {
  for (const auto& info : kPresets)
    if (info.preset == p) return info;
  throw Error(std::string(kWhere), "preset", std::to_string(static_cast<int>(p)), "a SinusoidalPreset value");
}

SinusoidalPreset parse_sinusoidal_preset(std::string_view name) {
  std::string accepted;
  for (const auto& info : kPresets) {
    if (info.name == name) return info.preset;
    accepted += (accepted.empty() ? "" : " | ") + std::string(info.name);
  }
  throw Error(std::string(kWhere), "preset", "'" + std::string(name) + "'", accepted);
}

SinusoidalSpec vaswani_spec(std::size_t dim, double base) {
  SinusoidalSpec s;
  s.dim = dim;
  s.base = base;
  return s;
}

SinusoidalSpec marian_spec(std::size_t dim, double base) {
  SinusoidalSpec s = vaswani_spec(dim, base);
  s.layout = Layout::halves;
  return s;
}

SinusoidalSpec tensor2tensor_spec(std::size_t dim, double min_timescale, double max_timescale) {
  const std::string where = std::string(kWhere) + " tensor2tensor";
  if (!(std::isfinite(min_timescale) && min_timescale > 0))
    throw Error(where, "min_timescale", str(min_timescale), "finite, > 0");
  if (!(std::isfinite(max_timescale) && max_timescale > min_timescale))
    throw Error(where, "max_timescale", str(max_timescale),
                "finite, > min_timescale = " + str(min_timescale));
  SinusoidalSpec s;
  s.dim = dim;
  s.base = max_timescale / min_timescale;  // float(max_timescale) / float(min_timescale), as t2t does
  s.min_timescale = min_timescale;
  s.layout = Layout::halves;
  s.rule = FrequencyRule::tensor2tensor;
  s.odd_dim = OddDim::zero_pad;
  return s;
}

SinusoidalSpec fairseq_spec(std::size_t dim, std::int64_t padding_idx) {
  if (padding_idx < 0 || padding_idx > kMaxPosition - 1)
    throw Error(std::string(kWhere) + " fairseq", "padding_idx", std::to_string(padding_idx),
                "0 <= padding_idx < 2^40");
  SinusoidalSpec s;
  s.dim = dim;
  s.layout = Layout::halves;
  s.rule = FrequencyRule::fairseq;
  s.odd_dim = OddDim::zero_pad;
  s.first_position = padding_idx + 1;
  s.padding_row = padding_idx;
  return s;
}

SinusoidalSpec preset_spec(SinusoidalPreset p, std::size_t dim) {
  switch (p) {
    case SinusoidalPreset::vaswani: return vaswani_spec(dim);
    case SinusoidalPreset::marian: return marian_spec(dim);
    case SinusoidalPreset::tensor2tensor: return tensor2tensor_spec(dim);
    case SinusoidalPreset::fairseq: return fairseq_spec(dim);
  }
  return vaswani_spec(dim);
}

std::size_t pair_count(const SinusoidalSpec& s) noexcept { return s.dim / 2; }

std::int64_t max_abs_position(const SinusoidalSpec& s) noexcept {
  const double by_angle = std::floor(kMaxAngle / s.min_timescale);
  return by_angle < static_cast<double>(kMaxPosition) ? static_cast<std::int64_t>(by_angle) : kMaxPosition;
}

void validate(const SinusoidalSpec& s) {
  const std::string where(kWhere);
  if (s.dim < 2 || s.dim > kMaxDim)
    throw Error(where, "dim", std::to_string(s.dim), "2 <= dim <= 1048576");
  if (s.dim % 2 != 0 && s.odd_dim == OddDim::reject)
    throw Error(where, "dim", std::to_string(s.dim),
                "an even number (sin/cos come in pairs; odd_dim = zero_pad appends a zero column as t2t/fairseq do)");
  if (s.rule == FrequencyRule::fairseq && s.dim < 4)
    throw Error(where, "dim", std::to_string(s.dim),
                "dim >= 4 for the fairseq rule (it divides by d/2 - 1; fairseq itself returns NaN for d = 2)");
  if (!(std::isfinite(s.base) && s.base > 1.0))
    throw Error(where, "base", str(s.base), "finite, > 1 (frequencies must decrease)");
  if (!(std::isfinite(s.min_timescale) && s.min_timescale > 0.0 && s.min_timescale <= 1.0e6))
    throw Error(where, "min_timescale", str(s.min_timescale), "finite, 0 < min_timescale <= 1e6");
  if (s.regime == Regime::emulated && s.rule == FrequencyRule::paper)
    throw Error(where, "regime", "emulated",
                "exact for the paper rule (emulation is defined for the tensor2tensor and fairseq rules)");
  const std::int64_t lim = max_abs_position(s);
  const std::int64_t lo = s.signed_positions ? -lim : 0;
  if (s.first_position < lo || s.first_position > lim)
    throw Error(where, "first_position", std::to_string(s.first_position),
                std::to_string(lo) + " <= first_position <= " + std::to_string(lim));
  if (s.padding_row && (*s.padding_row < lo || *s.padding_row > lim))
    throw Error(where, "padding_row", std::to_string(*s.padding_row),
                std::to_string(lo) + " <= padding_row <= " + std::to_string(lim));
}

void check_position(const SinusoidalSpec& s, std::int64_t p) {
  const std::int64_t lim = max_abs_position(s);
  if (!s.signed_positions && p < 0)
    throw Error(std::string(kWhere), "position", std::to_string(p),
                "0 <= position <= " + std::to_string(lim) + " (this convention has no negative positions)");
  if (p < -lim || p > lim)
    throw Error(std::string(kWhere), "position", std::to_string(p),
                "|position| <= " + std::to_string(lim) + " (|position| <= 2^40 and |position| * min_timescale <= 2^44)");
}

std::size_t checked_table_elements(const SinusoidalSpec& s, std::int64_t first, std::size_t count,
                                   std::size_t element_size) {
  validate(s);
  if (count == 0) throw Error(std::string(kWhere), "count", "0", "count >= 1");
  check_position(s, first);
  const std::int64_t lim = max_abs_position(s);
  if (count - 1 > static_cast<std::uint64_t>(lim) * 2 + 1 ||
      static_cast<std::int64_t>(count - 1) > lim - first)
    throw Error(std::string(kWhere), "count", std::to_string(count),
                "first + count - 1 <= " + std::to_string(lim) + " (first = " + std::to_string(first) + ")");
  const std::size_t max_elems = std::numeric_limits<std::size_t>::max() / element_size;
  if (count > max_elems / s.dim)
    throw Error(std::string(kWhere), "count", std::to_string(count),
                "count * dim * " + std::to_string(element_size) + " bytes must fit in size_t (dim = " +
                    std::to_string(s.dim) + ")");
  return count * s.dim;
}

std::int64_t position_of_token(const SinusoidalSpec& s, std::int64_t t) {
  if (t < 0 || t > max_abs_position(s) - s.first_position)
    throw Error(std::string(kWhere), "token_index", std::to_string(t),
                "0 <= token_index <= " + std::to_string(max_abs_position(s) - s.first_position));
  return s.first_position + t;
}

std::string_view to_string(Layout v) { return v == Layout::interleaved ? "interleaved" : "halves"; }
std::string_view to_string(FrequencyRule v) {
  switch (v) {
    case FrequencyRule::paper: return "paper";
    case FrequencyRule::tensor2tensor: return "tensor2tensor";
    case FrequencyRule::fairseq: return "fairseq";
  }
  return "?";
}
std::string_view to_string(OddDim v) { return v == OddDim::reject ? "reject" : "zero_pad"; }
std::string_view to_string(Regime v) { return v == Regime::exact ? "exact" : "emulated"; }

Layout parse_layout(std::string_view t) {
  return parse_enum("layout", t, std::array{Layout::interleaved, Layout::halves});
}
FrequencyRule parse_frequency_rule(std::string_view t) {
  return parse_enum("frequency_rule", t,
                    std::array{FrequencyRule::paper, FrequencyRule::tensor2tensor, FrequencyRule::fairseq});
}
OddDim parse_odd_dim(std::string_view t) { return parse_enum("odd_dim", t, std::array{OddDim::reject, OddDim::zero_pad}); }
Regime parse_regime(std::string_view t) { return parse_enum("regime", t, std::array{Regime::exact, Regime::emulated}); }

std::string describe(const SinusoidalSpec& s) {
  std::ostringstream o;
  o.precision(17);
  o << "dim=" << s.dim << " base=" << s.base << " min_timescale=" << s.min_timescale
    << " layout=" << to_string(s.layout) << " rule=" << to_string(s.rule) << " odd_dim=" << to_string(s.odd_dim)
    << " first_position=" << s.first_position << " padding_row=";
  if (s.padding_row) o << *s.padding_row; else o << "none";
  o << " signed_positions=" << (s.signed_positions ? "yes" : "no") << " regime=" << to_string(s.regime);
  return o.str();
}

}  // namespace posenc
