#include "posenc/sinusoidal_spec.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "posenc/error.hpp"

namespace posenc {
namespace {

constexpr std::string_view kSinusoidalWhere = "sinusoidal";

// CONVENTIONS.md §2.1 items 1-4; the commits are those the conventions were read at (CONVENTIONS.md §4).
constexpr SinusoidalSpec kVaswani{};
constexpr SinusoidalSpec kMarian{.layout = Layout::halves};
constexpr SinusoidalSpec kTensor2Tensor{.layout = Layout::halves, .rule = FrequencyRule::tensor2tensor,
                                        .odd_dim = OddDim::zero_pad};
constexpr SinusoidalSpec kFairseq{.layout = Layout::halves, .rule = FrequencyRule::fairseq, .odd_dim = OddDim::zero_pad,
                                  .first_position = 2, .padding_row = 1};
// Transformer-XL's R and XLNet's pos_emb: [sin | cos] of the paper frequencies in PyTorch's pow form (the emulated
// regime's float32 steps); XLNet's positions run klen .. -qlen + 1 (and the mirrored backward half with bi_data).
constexpr SinusoidalSpec kTransformerXl{.layout = Layout::halves, .paper_form = PaperForm::pow};
constexpr SinusoidalSpec kXlnet{.layout = Layout::halves, .paper_form = PaperForm::pow, .signed_positions = true};

constexpr std::array<Preset<SinusoidalSpec>, 6> kSinusoidalPresets{{
    {"vaswani", "interleaved sin(2k)/cos(2k+1), omega_k = 10000^(-2k/d), positions from 0, odd d rejected",
     "HF xlm/modeling_xlm.py create_sinusoidal_embeddings (float64 numpy, cast to float32); Vaswani et al. 2017",
     "huggingface/transformers@3e80c232adccced9188b55ed6c78278d5bdfc391", kVaswani},
    {"marian", "[sin | cos] halves, omega_k = 10000^(-2k/d), positions from past length (0), odd d rejected",
     "HF marian/modeling_marian.py MarianSinusoidalPositionalEmbedding._init_weight (also RoFormer; the exact "
     "Transformer-XL and XLNet tables have the same values, their float32 steps are the transformer-xl preset's)",
     "huggingface/transformers@d02747e153da5844c1abaa36eec184b0177247c0", kMarian},
    {"tensor2tensor",
     "[sin | cos] halves, omega_k = min_ts*(max_ts/min_ts)^(-k/max(h-1,1)), odd d zero-padded, positions from start_index 0",
     "tensor2tensor layers/common_attention.py get_timing_signal_1d",
     "tensorflow/tensor2tensor@bafdc1b67730430d38d6ab802cbd51f9d053ba2e", kTensor2Tensor},
    {"fairseq",
     "[sin | cos] halves, omega_k = 10000^(-k/(h-1)) (d >= 4), odd d zero-padded, row padding_idx (1) zero, first token at row 2",
     "fairseq modules/sinusoidal_positional_embedding.py get_embedding + utils.make_positions",
     "facebookresearch/fairseq@3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99", kFairseq},
    {"transformer-xl",
     "[sin | cos] halves, omega_k = 10000^(-2k/d); emulated: inv_freq = 1 / 10000 ** (arange(0, d, 2) / d) and "
     "torch.ger(pos_seq, inv_freq) in float32; pos_seq = klen - 1 .. 0",
     "Transformer-XL pytorch/mem_transformer.py PositionalEmbedding (R of the relative attention; also HF transfo_xl)",
     "kimiyoung/transformer-xl@01102106eeb627c592a023cd7f9f799b7d11b27f", kTransformerXl},
    {"xlnet",
     "[sin | cos] halves, omega_k = 10000^(-2k/d); emulated: inv_freq = 1 / torch.pow(10000, arange(0, d, 2) / d) "
     "in float32; signed positions klen .. -qlen + 1 (bi_data: also -klen .. qlen - 1)",
     "HF models/xlnet/modeling_xlnet.py XLNetModel.relative_positional_encoding + positional_embedding",
     "huggingface/transformers@98ad48f2eee8e1ff50e153df239fe1d591dde386", kXlnet},
}};

std::string str(double x) { return format_real(x); }

}  // namespace

std::span<const Preset<SinusoidalSpec>> SpecTraits<SinusoidalSpec>::presets() { return kSinusoidalPresets; }

SinusoidalSpec sinusoidal_preset(std::string_view name, std::size_t dim) {
  SinusoidalSpec s = find_preset<SinusoidalSpec>(name).spec;
  s.dim = dim;
  validate(s);
  return s;
}

SinusoidalSpec vaswani_spec(std::size_t dim, double base) {
  SinusoidalSpec s = kVaswani;
  s.dim = dim;
  s.base = base;
  return s;
}

SinusoidalSpec marian_spec(std::size_t dim, double base) {
  SinusoidalSpec s = kMarian;
  s.dim = dim;
  s.base = base;
  return s;
}

SinusoidalSpec tensor2tensor_spec(std::size_t dim, double min_timescale, double max_timescale) {
  const std::string where = std::string(kSinusoidalWhere) + " tensor2tensor";
  if (!(std::isfinite(min_timescale) && min_timescale > 0 && min_timescale <= 1.0e6))
    throw Error(where, "min_timescale", str(min_timescale), "a real in (0, 1e+06]");
  const double base = max_timescale / min_timescale;  // float(max_timescale) / float(min_timescale), as t2t does
  if (!(std::isfinite(max_timescale) && std::isfinite(base) && base > 1.0))
    throw Error(where, "max_timescale", str(max_timescale),
                "a finite real > min_timescale = " + str(min_timescale) + " with a finite ratio max/min");
  SinusoidalSpec s = kTensor2Tensor;
  s.dim = dim;
  s.base = base;
  s.min_timescale = min_timescale;
  return s;
}

SinusoidalSpec fairseq_spec(std::size_t dim, std::int64_t padding_idx) {
  if (padding_idx < 0 || padding_idx > kMaxPosition - 1)
    throw Error(std::string(kSinusoidalWhere) + " fairseq", "padding_idx", std::to_string(padding_idx),
                "an integer in [0, " + std::to_string(kMaxPosition - 1) + "]");
  SinusoidalSpec s = kFairseq;
  s.dim = dim;
  s.first_position = padding_idx + 1;
  s.padding_row = padding_idx;
  return s;
}

void check_position(const SinusoidalSpec& s, std::int64_t p) {
  const Range<std::int64_t> r = SpecTraits<SinusoidalSpec>::position_range(s);
  if (!in_range(p, r)) throw Error(std::string(kSinusoidalWhere), "position", std::to_string(p), accepted_text(r, false));
}

namespace {
// count >= 1 rows of dim elements of element_size bytes fit in size_t; `name` is the parameter the caller gave.
std::size_t checked_rows(const SinusoidalSpec& s, std::size_t count, std::size_t element_size, const char* name) {
  if (count == 0) throw Error(std::string(kSinusoidalWhere), name, "0", "an integer >= 1");
  const std::size_t max_elems = std::numeric_limits<std::size_t>::max() / element_size;
  if (count > max_elems / s.dim)
    throw Error(std::string(kSinusoidalWhere), name, std::to_string(count),
                std::string(name) + " * dim * " + std::to_string(element_size) + " bytes must fit in size_t (dim = " +
                    std::to_string(s.dim) + ")");
  return count * s.dim;
}
}  // namespace

std::size_t checked_list_elements(const SinusoidalSpec& s, std::size_t count, std::size_t element_size) {
  validate(s);
  return checked_rows(s, count, element_size, "positions.size()");
}

std::size_t checked_table_elements(const SinusoidalSpec& s, std::int64_t first, std::size_t count,
                                   std::size_t element_size) {
  validate(s);
  if (count == 0) throw Error(std::string(kSinusoidalWhere), "count", "0", "an integer >= 1");
  check_position(s, first);
  const std::int64_t lim = max_abs_position(s);
  // first >= -lim, so lim - first cannot overflow (lim <= 2^40).
  if (count - 1 > static_cast<std::uint64_t>(lim - first))
    throw Error(std::string(kSinusoidalWhere), "count", std::to_string(count),
                "first + count - 1 <= " + std::to_string(lim) + " (first = " + std::to_string(first) + ")");
  return checked_rows(s, count, element_size, "count");
}

std::int64_t position_of_token(const SinusoidalSpec& s, std::int64_t t) {
  const std::int64_t lim = max_abs_position(s);
  // first_position is validated (|first_position| <= lim <= 2^40), so lim - first_position cannot overflow.
  validate(s);
  if (t < 0 || t > lim - s.first_position)
    throw Error(std::string(kSinusoidalWhere), "token_index", std::to_string(t),
                "an integer in [0, " + std::to_string(lim - s.first_position) + "]");
  return s.first_position + t;
}

}  // namespace posenc
