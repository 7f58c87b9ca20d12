// posenc/reference/learned.hpp — the oracle of learned absolute position embeddings (BERT, GPT-2, RoBERTa, fairseq,
// OPT): the position ids a sequence looks up, and the table values at them.
//
// An independent transcription of the definition in posenc/learned_spec.hpp (it never includes or links lib/). The
// ids are computed the way the reference code computes them, in exact integers (no wrap, no int32): first the mask
// vector, then its cumulative sum, then the map's formula, element by element. One sequence of L = `length` tokens,
// after `past` tokens already seen (a KV cache):
//   IdMap::arange          id_t = offset + past + t                      (t = 0..L-1; tokens and mask unread)
//       HF BERT BertEmbeddings (position_ids buffer sliced [past : past + L]),
//       huggingface/transformers@8ec58104181bfb34d824d89bccc009b4f6be6e0e models/bert/modeling_bert.py;
//       HF GPT-2 GPT2Model.forward (arange(past, past + L)),
//       huggingface/transformers@c44b2d9976e8eafbdcb89cb2710141b2bc9b138f models/gpt2/modeling_gpt2.py.
//   IdMap::make_positions  m_t = [tokens[t] != padding_idx],  c_t = m_0 + ... + m_t,
//                          id_t = (c_t + past) m_t + padding_idx
//       (real tokens: padding_idx + past + their rank among the real tokens, from 1; padding tokens: padding_idx)
//       HF RoBERTa create_position_ids_from_input_ids (mask = ne(padding_idx); (cumsum(mask) + past) * mask
//       + padding_idx), huggingface/transformers@000824f17f924a8b520edf04c597c461fc83356a
//       models/roberta/modeling_roberta.py; fairseq utils.make_positions (the same with past = 0),
//       facebookresearch/fairseq@032a404d389307a0e8f7dd2a0d501c78afa78f39 fairseq/utils.py.
//   IdMap::cumsum_mask     a = attention_mask over all past + L tokens (1 = token, 0 = padding),
//                          C_k = a_0 + ... + a_k,  v_k = C_k a_k - 1  (k = 0..past+L-1),
//                          id_t = v_{past + t} + offset
//       (real tokens: offset - 1 + their rank among the real tokens of the whole past + L mask; padding: offset - 1)
//       HF OPT OPTLearnedPositionalEmbedding.forward (cumsum(attention_mask) * attention_mask - 1, sliced
//       [past:], + offset 2), huggingface/transformers@0184d2087e15afbd83ffa3cef25044a4f6c05047
//       models/opt/modeling_opt.py.
// Every id must lie in [0, 2^40) (kLearnedMaxIndex; the spec's bound on ids): an id outside it (cumsum_mask with
// offset 0 and a padding token gives -1; offset + past + t >= 2^40; padding_idx + past + c_t >= 2^40) is an error,
// never a wrap or a clamp. Whether an id is < rows of a particular table is the caller's check (learned_row_value).
//
// The table value table[id][c] = values[id * dim + c] (row-major) is a double held exactly, so the oracle returns
// it as a Real of max(bits, 53) bits (as kerple's p(h), a(h)): exact whatever `bits` is (a Real of fewer than 53
// bits could not hold every double).
//
// Errors: posenc::Error naming the parameter, the value and the accepted values:
//   learned_position_ids: the spec (posenc::validate: "id_map", "padding_idx", "offset"), then "length" (outside
//     [1, 2^40)), "past" (outside [0, 2^40)), "tokens" (make_positions: not exactly `length` entries; other maps:
//     neither empty nor `length` entries), "attention_mask" (cumsum_mask: not exactly past + length entries; other
//     maps: not empty, `length` or past + length entries; any map: an entry other than 0 or 1), then "id" (a
//     resulting id outside [0, 2^40)), in that order.
//   learned_row_value: posenc::check_learned_table ("table"), then "id" (outside [0, rows)), "c" (>= dim), "bits"
//     (posenc::reference::check_bits), in that order.
// Thread-safe: no function reads Boost's default precision or shares anything mutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/learned_spec.hpp"
#include "posenc/reference/mp.hpp"

namespace posenc::reference {

// The position ids id_0..id_{L-1} of one sequence of L = length tokens after `past` tokens (above).
std::vector<std::int64_t> learned_position_ids(const LearnedSpec& spec, std::size_t length, std::int64_t past,
                                               std::span<const std::int64_t> tokens,
                                               std::span<const std::uint8_t> attention_mask);

// table[id][c] exactly, as a Real of max(bits, 53) bits (above).
Real learned_row_value(const LearnedTable& table, std::int64_t id, std::size_t c, unsigned bits = kDefaultBits);

}  // namespace posenc::reference
