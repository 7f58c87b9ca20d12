// posenc/vocabulary.hpp — the words several schemes share. Scheme-only choices (the sinusoidal frequency
// rule, T5's bucket direction, ...) live in their scheme's spec header; a word moves here when a second
// scheme needs it, so that "halves" means the same thing in the sinusoidal table and in RoPE.
#pragma once

#include <array>

#include "posenc/describe.hpp"

namespace posenc {

// Where the two members of pair k sit in a row of d = 2h values (CONVENTIONS.md §3 item 2).
//   interleaved: columns 2k and 2k+1   (paper/XLM tables, GPT-J/RoFormer/Meta-Llama rotation, ggml NORMAL)
//   halves:      columns k and h+k     (Marian, t2t, fairseq, Transformer-XL tables; NeoX/HF-Llama rotation)
enum class Layout { interleaved, halves };

// How a number is computed (DESIGN.md §2).
//   exact:    the mathematical definition evaluated exactly, rounded once to the output type;
//   emulated: the rounding steps of the implementation the spec names, each step correctly rounded.
enum class Regime { exact, emulated };

// Element types of tensors posenc reads and writes.
enum class DType { f16, bf16, f32, f64 };

template <>
struct EnumTraits<Layout> {
  static constexpr std::array<EnumValue<Layout>, 2> values{{
      {Layout::interleaved, "interleaved", "pair k in columns 2k, 2k+1"},
      {Layout::halves, "halves", "pair k in columns k, h+k ([first | second] halves)"},
  }};
};

template <>
struct EnumTraits<Regime> {
  static constexpr std::array<EnumValue<Regime>, 2> values{{
      {Regime::exact, "exact", "the mathematical value, rounded once to the output type"},
      {Regime::emulated, "emulated", "the named implementation's float32 steps, each correctly rounded"},
  }};
};

template <>
struct EnumTraits<DType> {
  static constexpr std::array<EnumValue<DType>, 4> values{{
      {DType::f16, "f16", "IEEE binary16"},
      {DType::bf16, "bf16", "bfloat16 (8-bit significand)"},
      {DType::f32, "f32", "IEEE binary32"},
      {DType::f64, "f64", "IEEE binary64"},
  }};
};

// Significand bits p (including the implicit bit) and smallest normal exponent of each type.
constexpr int precision_bits(DType t) noexcept {
  switch (t) {
    case DType::f16: return 11;
    case DType::bf16: return 8;
    case DType::f32: return 24;
    case DType::f64: return 53;
  }
  return 53;
}
constexpr int min_exponent(DType t) noexcept {
  switch (t) {
    case DType::f16: return -14;
    case DType::bf16: return -126;
    case DType::f32: return -126;
    case DType::f64: return -1022;
  }
  return -1022;
}

}  // namespace posenc
