// posenc/sinusoidal_spec.hpp — the one description of a sinusoidal absolute encoding.
//
// A SinusoidalSpec fully determines a table: the fast path (lib/), the MPFR oracle (reference/), the
// command-line tool and the reports all consume this struct and nothing else. It holds data only; each
// consumer transcribes the defining formula itself (so a shared mistake in a formula cannot hide). Its fields,
// their flags, accepted values and sources are listed once, in SpecTraits<SinusoidalSpec> below.
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
// the frequency rule (tensor2tensor's get_timing_signal_1d, fairseq's get_embedding; for the paper rule one of
// two PyTorch forms, chosen by paper_form: exp, `exp(arange(0, d, 2).float() * (-math.log(base) / d))` of HF's
// NEZHA table and the PyTorch tutorial's PositionalEncoding; pow, `1 / (base ** (arange(0.0, d, 2.0) / d))` of
// Transformer-XL's PositionalEmbedding and HF XLNet's relative_positional_encoding), see CONVENTIONS.md §2.1,
// §2.4, §2.5 and posenc/sinusoidal.hpp; the result is that implementation's float32 number. The exact regime
// does not depend on paper_form (both forms compute the same real omega_k).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>

#include "posenc/describe.hpp"
#include "posenc/vocabulary.hpp"

namespace posenc {

enum class FrequencyRule { paper, tensor2tensor, fairseq };
enum class OddDim { reject, zero_pad };
// Which float32 formula the emulated regime follows for the paper rule (the same real omega_k either way).
enum class PaperForm { exp, pow };

template <>
struct EnumTraits<FrequencyRule> {
  static constexpr std::array<EnumValue<FrequencyRule>, 3> values{{
      {FrequencyRule::paper, "paper", "omega_k = base^(-2k/d) (Vaswani et al., XLM, Marian, Transformer-XL)"},
      {FrequencyRule::tensor2tensor, "tensor2tensor", "omega_k = base^(-k/max(h-1, 1)) (get_timing_signal_1d)"},
      {FrequencyRule::fairseq, "fairseq", "omega_k = base^(-k/(h-1)), d >= 4 (get_embedding)"},
  }};
};

template <>
struct EnumTraits<PaperForm> {
  static constexpr std::array<EnumValue<PaperForm>, 2> values{{
      {PaperForm::exp, "exp",
       "omega_k = exp(2k * (-ln base / d)) in float32 (HF NEZHA, the PyTorch tutorial; other rules: their own form)"},
      {PaperForm::pow, "pow",
       "omega_k = 1 / base ** (2k / d) in float32 (Transformer-XL mem_transformer.py, HF XLNet; paper rule only)"},
  }};
};

template <>
struct EnumTraits<OddDim> {
  static constexpr std::array<EnumValue<OddDim>, 2> values{{
      {OddDim::reject, "reject", "an odd d is refused"},
      {OddDim::zero_pad, "zero_pad", "an odd d gets one zero column after the pairs (t2t, fairseq)"},
  }};
};

inline constexpr std::size_t kMaxDim = std::size_t{1} << 20;
inline constexpr std::int64_t kMaxPosition = std::int64_t{1} << 40;   // |p| <= 2^40 ...
inline constexpr double kMaxAngle = 17592186044416.0;                 // ... and |p| * min_timescale <= 2^44

struct SinusoidalSpec {
  Layout layout = Layout::interleaved;
  FrequencyRule rule = FrequencyRule::paper;
  OddDim odd_dim = OddDim::reject;
  Regime regime = Regime::exact;
  PaperForm paper_form = PaperForm::exp;   // the emulated regime's float32 formula for the paper rule
  std::size_t dim = 512;                   // d: columns of a row, including a zero-pad column
  double base = 10000.0;                   // t2t: max_timescale / min_timescale (a double, as t2t's Python computes it)
  double min_timescale = 1.0;              // omega_0; t2t multiplies by min_timescale (CONVENTIONS §2.1.3)
  bool signed_positions = false;           // whether negative positions exist in this convention
  std::int64_t first_position = 0;         // position of the first real token (fairseq: padding_idx + 1)
  std::optional<std::int64_t> padding_row{}; // position whose row is all zeros (fairseq: padding_idx)

  friend bool operator==(const SinusoidalSpec&, const SinusoidalSpec&) = default;
};

// Largest |position| accepted for this spec: min(2^40, floor(2^44 / min_timescale)) (2^40 if min_timescale
// is not a positive finite number: validate() refuses such a spec by name).
constexpr std::int64_t max_abs_position(const SinusoidalSpec& s) noexcept {
  if (!(s.min_timescale > 0.0) || !(s.min_timescale <= 1.0e6)) return kMaxPosition;
  const double by_angle = kMaxAngle / s.min_timescale;  // >= 2^44 / 1e6 > 2^24: fits
  return by_angle < static_cast<double>(kMaxPosition) ? static_cast<std::int64_t>(by_angle) : kMaxPosition;
}

// Smallest position accepted: -max_abs_position(s) with signed_positions, else 0.
constexpr std::int64_t min_position(const SinusoidalSpec& s) noexcept {
  return s.signed_positions ? -max_abs_position(s) : 0;
}

template <>
struct SpecTraits<SinusoidalSpec> {
  using S = SinusoidalSpec;
  static constexpr std::string_view scheme = "sinusoidal";
  static constexpr std::string_view summary =
      "sinusoidal absolute encoding PE[p] = sin/cos(p * omega_k) (Vaswani et al. 2017) in its paper, Marian, "
      "tensor2tensor and fairseq conventions";

  static constexpr Range<std::int64_t> position_range(const S& s) {
    const std::int64_t lim = max_abs_position(s);
    return {s.signed_positions ? -lim : 0, lim, false, false, 1,
            "|p| <= 2^40 and |p| * min_timescale <= 2^44; negative only with signed_positions"};
  }

  static constexpr auto fields = std::make_tuple(
      field("layout", "--layout", &S::layout, "where pair k's sin and cos go: interleaved (2k, 2k+1) or halves (k, h+k)",
            "CONVENTIONS.md §2.1, §3 item 2"),
      field("rule", "--rule", &S::rule, "frequency exponent: paper 2k/d; tensor2tensor k/max(h-1,1); fairseq k/(h-1)",
            "CONVENTIONS.md §2.1 items 1-4, §3 item 1"),
      field("odd_dim", "--odd-dim", &S::odd_dim, "what an odd d means: refused, or one zero column appended",
            "CONVENTIONS.md §2.1 items 3-4 (t2t, fairseq pad odd d)"),
      field("regime", "--regime", &S::regime,
            "exact (the real value, rounded once) or emulated (the float32 steps of t2t, fairseq, or for the paper "
            "rule PyTorch's exp form: NEZHA, the PyTorch tutorial)",
            "DESIGN.md §2; CONVENTIONS.md §2.1, §2.4"),
      field("paper_form", "--paper-form", &S::paper_form,
            "the emulated regime's float32 formula for the paper rule: exp (NEZHA, PyTorch tutorial) or pow "
            "(Transformer-XL, XLNet); the exact regime is the same for both",
            "kimiyoung/transformer-xl@01102106 pytorch/mem_transformer.py PositionalEmbedding; "
            "huggingface/transformers@98ad48f2 models/xlnet/modeling_xlnet.py relative_positional_encoding",
            +[](const S& s) {
              return s.rule == FrequencyRule::paper
                         ? Choice{}
                         : Choice{enum_bit(PaperForm::exp), "pow is the paper rule's Transformer-XL form; the "
                                                            "tensor2tensor and fairseq rules have their own (exp)"};
            }),
      field("dim", "--dim", &S::dim, "columns per row d, including a zero-pad column", "CONVENTIONS.md §2.1",
            +[](const S& s) {
              const bool fairseq = s.rule == FrequencyRule::fairseq, even = s.odd_dim == OddDim::reject;
              const std::size_t lo = fairseq ? 4 : 2, step = even ? 2 : 1;
              const std::string_view why =
                  fairseq ? (even ? "the fairseq rule divides by d/2 - 1; odd_dim = reject: sin and cos come in pairs"
                                  : "the fairseq rule divides by d/2 - 1 (fairseq itself gives NaN for d = 2)")
                          : (even ? "odd_dim = reject: sin and cos come in pairs" : "");
              return Range<std::size_t>{lo, kMaxDim, false, false, step, why};
            },
            +[](const S& s) {
              return Range<std::size_t>{s.rule == FrequencyRule::fairseq ? std::size_t{4} : std::size_t{2}, 8192,
                                        false, false, s.odd_dim == OddDim::reject ? std::size_t{2} : std::size_t{1}};
            }),
      field("base", "--base", &S::base, "base of the frequencies (t2t: max_timescale / min_timescale)",
            "Vaswani et al. 2017 (10000); CONVENTIONS.md §2.1",
            +[](const S&) {
              return Range<double>{1.0, std::numeric_limits<double>::max(), true, false, 1.0,
                                   "frequencies must decrease"};
            },
            +[](const S&) { return Range<double>{2.0, 1.0e7}; }),
      field("min_timescale", "--min-timescale", &S::min_timescale,
            "omega_0: every frequency is multiplied by it, as t2t multiplies by min_timescale",
            "tensor2tensor get_timing_signal_1d (CONVENTIONS.md §2.1 item 3)",
            +[](const S&) { return Range<double>{0.0, 1.0e6, true, false}; },
            +[](const S&) { return Range<double>{1.0e-3, 1.0e3}; }),
      field("signed_positions", "--signed-positions", &S::signed_positions,
            "whether negative positions exist in this convention", "Transformer-XL/TENER relative tables"),
      field("first_position", "--first-position", &S::first_position,
            "position of token 0 (fairseq: padding_idx + 1)", "fairseq utils.make_positions (CONVENTIONS.md §2.1 item 4)",
            +[](const S& s) { return position_range(s); }),
      field("padding_row", "--padding-row", &S::padding_row, "position whose row is all zeros (fairseq: padding_idx)",
            "fairseq get_embedding (CONVENTIONS.md §2.1 item 4)", +[](const S& s) { return position_range(s); }));

  static std::span<const Preset<S>> presets();
};

// ---- presets ----------------------------------------------------------------------------------------------
// SpecTraits<SinusoidalSpec>::presets(): vaswani, marian, tensor2tensor, fairseq, transformer-xl, xlnet (data in
// sinusoidal_spec.cpp).

// The preset called `name` with dim set (throws Error naming "preset" or "dim").
SinusoidalSpec sinusoidal_preset(std::string_view name, std::size_t dim);
// Shorthands for library users.
SinusoidalSpec vaswani_spec(std::size_t dim, double base = 10000.0);   // paper/XLM: interleaved, paper rule
SinusoidalSpec marian_spec(std::size_t dim, double base = 10000.0);    // Marian/RoFormer: halves, paper rule
// tensor2tensor get_timing_signal_1d: base = max_timescale / min_timescale (a double, as t2t's Python does);
// throws Error naming min_timescale or max_timescale.
SinusoidalSpec tensor2tensor_spec(std::size_t dim, double min_timescale = 1.0, double max_timescale = 1.0e4);
// fairseq SinusoidalPositionalEmbedding: row padding_idx zero, first token at padding_idx + 1.
SinusoidalSpec fairseq_spec(std::size_t dim, std::int64_t padding_idx = 1);

// ---- positions and sizes ----------------------------------------------------------------------------------

// Number of sin/cos pairs h = floor(dim / 2).
constexpr std::size_t pair_count(const SinusoidalSpec& s) noexcept { return s.dim / 2; }
// Throws unless position is accepted (sign convention and magnitude), naming "position".
void check_position(const SinusoidalSpec&, std::int64_t position);
// Throws unless [first, first + count) is accepted; returns count * dim, checked for size_t overflow
// including the byte size for elements of element_size bytes.
std::size_t checked_table_elements(const SinusoidalSpec&, std::int64_t first, std::size_t count,
                                   std::size_t element_size);
// The same for a list of `count` positions (each checked by check_position where it is used): count >= 1
// and count * dim elements of element_size bytes fit in size_t. A list is not a range: 0:17592187,0 is
// accepted wherever every position in it is.
std::size_t checked_list_elements(const SinusoidalSpec&, std::size_t count, std::size_t element_size);
// Position of token index t (0-based) under the spec's offset convention: first_position + t.
std::int64_t position_of_token(const SinusoidalSpec&, std::int64_t token_index);

}  // namespace posenc
