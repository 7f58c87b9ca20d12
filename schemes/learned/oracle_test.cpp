// Self-tests of the learned-position oracle. The oracle is the ground truth of the learned property suite, so each
// test here is built to fail if the oracle is wrong: the ids against literal vectors derived by hand from
// learned_spec.hpp and the HF / fairseq code it cites (RoBERTa create_position_ids_from_input_ids, OPT
// OPTLearnedPositionalEmbedding.forward, BERT/GPT-2 arange), against a second transcription written here as the
// plain Python-like loop over prefixes (each id from a direct count of the mask up to it, O(L^2), no cumulative
// sum), and against the maps' properties (real tokens counted up by 1 from padding_idx + 1 + past, padding ->
// padding_idx / offset - 1, arange ignores its inputs, a KV-cache step reads the tail of the full call); the table
// lookup against literal row-major tables; every bad argument against the posenc::Error naming it.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/learned_spec.hpp"
#include "posenc/reference/learned.hpp"
#include "posenc/reference/mp.hpp"
#include "test_util.hpp"

namespace oracle_learned {  // its own namespace: the self-tests are compiled together (posenc_unity)

using posenc::IdMap;
using posenc::LearnedSpec;
using posenc::LearnedTable;
using namespace posenc::reference;
using namespace posenc::reference::test_util;

using Ids = std::vector<std::int64_t>;
using Tokens = std::vector<std::int64_t>;
using Mask = std::vector<std::uint8_t>;

constexpr std::int64_t kMax = std::int64_t{1} << 40;

LearnedSpec spec_of(IdMap map, std::int64_t padding_idx = 1, std::int64_t offset = 0) {
  LearnedSpec s;
  s.id_map = map;
  s.padding_idx = padding_idx;
  s.offset = offset;
  return s;
}
const LearnedSpec kRoberta = spec_of(IdMap::make_positions, 1, 0);
const LearnedSpec kOpt = spec_of(IdMap::cumsum_mask, 1, 2);
const LearnedSpec kBert = spec_of(IdMap::arange, 1, 0);

Ids roberta(const Tokens& tokens, std::int64_t past = 0) {
  return learned_position_ids(kRoberta, tokens.size(), past, tokens, {});
}
Ids opt(const Mask& mask, std::size_t length, std::int64_t past = 0) {
  return learned_position_ids(kOpt, length, past, {}, mask);
}

// The parameter named by the posenc::Error f() throws, or "" if it throws none.
std::string param_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const posenc::Error& e) {
    return e.parameter();
  }
  return "";
}

// ---- the second transcription: Python-like loops over prefixes, no cumulative sum ------------------------------
//   arange:          ids = [offset + past + t for t in range(L)]
//   make_positions:  ids = [pad if tok[t] == pad else pad + past + sum(tok[s] != pad for s in range(t + 1))]
//   cumsum_mask:     ids = [offset - 1 if a[past + t] == 0 else offset - 1 + sum(a[0 : past + t + 1])]
// Returns nullopt when some id lies outside [0, 2^40) (the oracle must then throw naming "id").
std::optional<Ids> prefix_loop(const LearnedSpec& s, std::size_t length, std::int64_t past, const Tokens& tokens,
                               const Mask& mask) {
  Ids out;
  for (std::size_t t = 0; t < length; ++t) {
    std::int64_t id = 0;
    if (s.id_map == IdMap::arange) {
      id = s.offset + past + static_cast<std::int64_t>(t);
    } else if (s.id_map == IdMap::make_positions) {
      if (tokens[t] == s.padding_idx) {
        id = s.padding_idx;
      } else {
        std::int64_t real = 0;
        for (std::size_t u = 0; u <= t; ++u)
          if (tokens[u] != s.padding_idx) ++real;
        id = s.padding_idx + past + real;
      }
    } else {
      const std::size_t k = static_cast<std::size_t>(past) + t;
      if (mask[k] == 0) {
        id = s.offset - 1;
      } else {
        std::int64_t real = 0;
        for (std::size_t u = 0; u <= k; ++u) real += mask[u];
        id = s.offset - 1 + real;
      }
    }
    if (id < 0 || id >= kMax) return std::nullopt;
    out.push_back(id);
  }
  return out;
}

// ---- generators ----------------------------------------------------------------------------------------------

rc::Gen<std::int64_t> genIndexValue() {  // a padding_idx / offset in [0, 2^40): small, at the top, anything
  return rc::gen::oneOf(rc::gen::inRange<std::int64_t>(0, 6),
                        rc::gen::element<std::int64_t>(0, 1, 2, kMax - 1, kMax - 2, kMax - 50),
                        rc::gen::inRange<std::int64_t>(0, kMax));
}

LearnedSpec genSpec(IdMap map) {
  LearnedSpec s = spec_of(map, *genIndexValue(), 0);
  if (map != IdMap::make_positions) s.offset = *genIndexValue();
  return s;
}

// A length, and a past that cumsum_mask must materialise (small) or that the others need not (up to 2^40 - 1).
std::size_t genLength() { return *rc::gen::oneOf(rc::gen::inRange<std::size_t>(1, 6), rc::gen::inRange<std::size_t>(1, 41)); }
std::int64_t genPast(IdMap map) {
  if (map == IdMap::cumsum_mask) return *rc::gen::inRange<std::int64_t>(0, 30);
  return *rc::gen::oneOf(rc::gen::just<std::int64_t>(0), rc::gen::inRange<std::int64_t>(0, 30),
                         rc::gen::element<std::int64_t>(kMax - 1, kMax - 41, kMax / 2),
                         rc::gen::inRange<std::int64_t>(0, kMax));
}

// Tokens: padding_idx with probability ~ 1/3, else an id near it, small or anything.
Tokens genTokens(std::size_t n, std::int64_t padding_idx) {
  const auto one = rc::gen::oneOf(rc::gen::just(padding_idx), rc::gen::just(padding_idx),
                                  rc::gen::element<std::int64_t>(padding_idx + 1, padding_idx - 1, 0, 1, 2, 50265),
                                  rc::gen::arbitrary<std::int64_t>());
  return *rc::gen::container<Tokens>(n, one);
}
Mask genMask(std::size_t n) {
  const int density = *rc::gen::inRange(0, 5);  // all padding .. all real
  Mask m(n);
  for (std::size_t k = 0; k < n; ++k) m[k] = *rc::gen::inRange(0, 4) < density ? 1 : 0;
  return m;
}

struct Case {
  LearnedSpec spec;
  std::size_t length;
  std::int64_t past;
  Tokens tokens;
  Mask mask;
};

// A valid call of any map (the unread inputs: empty or of an accepted size, random contents).
Case genCase() {
  const IdMap map = *rc::gen::element(IdMap::arange, IdMap::make_positions, IdMap::cumsum_mask);
  Case c{genSpec(map), genLength(), genPast(map), {}, {}};
  const std::size_t total = static_cast<std::size_t>(c.past) + c.length;
  if (map == IdMap::make_positions || *rc::gen::arbitrary<bool>()) c.tokens = genTokens(c.length, c.spec.padding_idx);
  if (map == IdMap::cumsum_mask)
    c.mask = genMask(total);
  else if (*rc::gen::arbitrary<bool>())
    c.mask = genMask(total <= 64 && *rc::gen::arbitrary<bool>() ? total : c.length);
  return c;
}

Ids call(const Case& c) { return learned_position_ids(c.spec, c.length, c.past, c.tokens, c.mask); }

// ======================================================================================================
// LearnedOracleIds: literal vectors derived by hand
// ======================================================================================================

TEST(LearnedOracleIds, PresetsAreTheSpecsUsedHere) {
  EXPECT_EQ(posenc::learned_preset("roberta"), kRoberta);
  EXPECT_EQ(posenc::learned_preset("fairseq"), kRoberta);
  EXPECT_EQ(posenc::learned_preset("opt"), kOpt);
  EXPECT_EQ(posenc::learned_preset("bert").id_map, IdMap::arange);
  EXPECT_EQ(posenc::learned_preset("bert").offset, 0);
  EXPECT_EQ(posenc::learned_preset("gpt2").id_map, IdMap::arange);
  EXPECT_EQ(posenc::learned_preset("gpt2").offset, 0);
}

// HF RoBERTa (padding_idx 1): mask = ne(1); (cumsum(mask) + past) * mask + 1.
TEST(LearnedOracleIds, RobertaLiterals) {
  // "<s> Hello world </s>": mask 1111, cumsum 1234, + 1
  EXPECT_EQ(roberta({0, 31414, 232, 2}), (Ids{2, 3, 4, 5}));
  // right padding: mask 11100, cumsum 12333, * mask 12300, + 1
  EXPECT_EQ(roberta({0, 5, 2, 1, 1}), (Ids{2, 3, 4, 1, 1}));
  // left padding: mask 00111, cumsum 00123, + 1
  EXPECT_EQ(roberta({1, 1, 0, 5, 2}), (Ids{1, 1, 2, 3, 4}));
  // past 3: cumsum 12, + 3 = 45, + 1
  EXPECT_EQ(roberta({0, 5}, 3), (Ids{5, 6}));
  // holes: mask 10101, cumsum 11223, * mask 10203, + 1
  EXPECT_EQ(roberta({0, 1, 5, 1, 2}), (Ids{2, 1, 3, 1, 4}));
  // holes and past 2: mask 0101, cumsum 0112, + 2 = 2334, * mask 0304, + 1
  EXPECT_EQ(roberta({1, 7, 1, 8}, 2), (Ids{1, 4, 1, 5}));
  // all padding, with and without past: padding_idx everywhere
  EXPECT_EQ(roberta({1, 1, 1}), (Ids{1, 1, 1}));
  EXPECT_EQ(roberta({1, 1, 1}, 7), (Ids{1, 1, 1}));
  // one token; token 0 (<s>) is not padding
  EXPECT_EQ(roberta({0}), (Ids{2}));
  EXPECT_EQ(roberta({0}, 511), (Ids{513}));  // the last of RoBERTa's 514 rows
  // a negative token id is just another non-padding id
  EXPECT_EQ(roberta({-1, 1}), (Ids{2, 1}));
}

// fairseq make_positions with another padding_idx: 0 (mask = ne(0), ids = cumsum(mask) * mask + 0), and 3.
TEST(LearnedOracleIds, MakePositionsOtherPaddingIdx) {
  const LearnedSpec pad0 = spec_of(IdMap::make_positions, 0, 0);
  const Tokens t0 = {5, 0, 7, 9, 0};  // mask 10110, cumsum 11233, * mask 10230
  EXPECT_EQ(learned_position_ids(pad0, 5, 0, t0, {}), (Ids{1, 0, 2, 3, 0}));
  EXPECT_EQ(learned_position_ids(pad0, 5, 10, t0, {}), (Ids{11, 0, 12, 13, 0}));
  const LearnedSpec pad3 = spec_of(IdMap::make_positions, 3, 0);
  const Tokens t3 = {3, 1, 3, 0, 2};  // mask 01011, cumsum 01123, * mask 01023, + 3
  EXPECT_EQ(learned_position_ids(pad3, 5, 0, t3, {}), (Ids{3, 4, 3, 5, 6}));
  // token 1 is not padding when padding_idx is 0
  EXPECT_EQ(learned_position_ids(pad0, 3, 0, Tokens{1, 1, 0}, {}), (Ids{1, 2, 0}));
}

// HF OPT (offset 2): p = cumsum(a) * a - 1 over past + L entries, p[past:] + 2.
TEST(LearnedOracleIds, OptLiterals) {
  // cumsum 123, * a - 1 = 012, + 2
  EXPECT_EQ(opt({1, 1, 1}, 3), (Ids{2, 3, 4}));
  // left padding: cumsum 00123, * a 00123, - 1 = -1 -1 0 1 2, + 2
  EXPECT_EQ(opt({0, 0, 1, 1, 1}, 5), (Ids{1, 1, 2, 3, 4}));
  // past 3, length 2, mask 01111: cumsum 01234, * a - 1 = -1 0 1 2 3, + 2 = 1 2 3 4 5, [3:] = 4 5
  EXPECT_EQ(opt({0, 1, 1, 1, 1}, 2, 3), (Ids{4, 5}));
  // the same with past 0 over all five: the tail above is the tail of this
  EXPECT_EQ(opt({0, 1, 1, 1, 1}, 5), (Ids{1, 2, 3, 4, 5}));
  // holes: cumsum 112334, * a 102304, - 1 = 0 -1 1 2 -1 3, + 2
  EXPECT_EQ(opt({1, 0, 1, 1, 0, 1}, 6), (Ids{2, 1, 3, 4, 1, 5}));
  // padding in the past and in the new tokens, past 2: cumsum 0122, * a 0120, - 1 = -1 0 1 -1, [2:] = 1 -1, + 2
  EXPECT_EQ(opt({0, 1, 1, 0}, 2, 2), (Ids{3, 1}));
  // a decoding step: past 4, one new token after 4 real ones: cumsum 12345, [4:] = 5 - 1 + 2
  EXPECT_EQ(opt({1, 1, 1, 1, 1}, 1, 4), (Ids{6}));
  // all padding
  EXPECT_EQ(opt({0, 0}, 2), (Ids{1, 1}));
  EXPECT_EQ(opt({1, 1, 0}, 1, 2), (Ids{1}));
}

TEST(LearnedOracleIds, CumsumMaskOtherOffsets) {
  // offset 5: cumsum 122, * a 120, - 1 = 0 1 -1, + 5
  EXPECT_EQ(learned_position_ids(spec_of(IdMap::cumsum_mask, 1, 5), 3, 0, {}, Mask{1, 1, 0}), (Ids{5, 6, 4}));
  // offset 0 without padding: 0-based positions
  EXPECT_EQ(learned_position_ids(spec_of(IdMap::cumsum_mask, 1, 0), 2, 0, {}, Mask{1, 1}), (Ids{0, 1}));
  // offset 1: padding gets row 0
  EXPECT_EQ(learned_position_ids(spec_of(IdMap::cumsum_mask, 1, 1), 3, 0, {}, Mask{0, 1, 0}), (Ids{0, 1, 0}));
  // offset 0 with padding: id -1, an error (torch's nn.Embedding raises index out of range)
  EXPECT_EQ(param_of([] { learned_position_ids(spec_of(IdMap::cumsum_mask, 1, 0), 2, 0, {}, Mask{1, 0}); }), "id");
  // ... even when the padding is only in the past, if it is the slot read: past 1, mask 10 -> p = 0 -1, [1:] = -1
  EXPECT_EQ(param_of([] { learned_position_ids(spec_of(IdMap::cumsum_mask, 1, 0), 1, 1, {}, Mask{1, 0}); }), "id");
  // ... but padding in the past alone is fine: past 1, mask 01 -> p = -1 0, [1:] = 0
  EXPECT_EQ(learned_position_ids(spec_of(IdMap::cumsum_mask, 1, 0), 1, 1, {}, Mask{0, 1}), (Ids{0}));
}

// HF BERT / GPT-2: arange(past, past + L) (+ offset); tokens and masks are not read.
TEST(LearnedOracleIds, ArangeLiterals) {
  EXPECT_EQ(learned_position_ids(kBert, 2, 3, {}, {}), (Ids{3, 4}));
  EXPECT_EQ(learned_position_ids(kBert, 4, 0, {}, {}), (Ids{0, 1, 2, 3}));
  EXPECT_EQ(learned_position_ids(kBert, 1, 511, {}, {}), (Ids{511}));  // BERT's last row
  // padding tokens get ids too (BERT pad token 0, here padding_idx 1: neither matters)
  EXPECT_EQ(learned_position_ids(kBert, 4, 0, Tokens{101, 7592, 102, 0}, Mask{1, 1, 1, 0}), (Ids{0, 1, 2, 3}));
  EXPECT_EQ(learned_position_ids(kBert, 3, 0, Tokens{1, 1, 1}, Mask{0, 0, 0}), (Ids{0, 1, 2}));
  // offset 2, past 1: 2 + 1 + t
  EXPECT_EQ(learned_position_ids(spec_of(IdMap::arange, 1, 2), 3, 1, {}, {}), (Ids{3, 4, 5}));
  // a past + length mask is accepted (and unread) too
  EXPECT_EQ(learned_position_ids(kBert, 2, 3, {}, Mask{0, 0, 0, 1, 0}), (Ids{3, 4}));
}

// The top of the id range, 2^40 - 1, is an id; 2^40 is not.
TEST(LearnedOracleIds, IdRangeEdges) {
  const LearnedSpec top = spec_of(IdMap::arange, 1, kMax - 1);
  EXPECT_EQ(learned_position_ids(top, 1, 0, {}, {}), (Ids{kMax - 1}));
  EXPECT_EQ(param_of([&] { learned_position_ids(top, 2, 0, {}, {}); }), "id");
  EXPECT_EQ(learned_position_ids(kBert, 1, kMax - 1, {}, {}), (Ids{kMax - 1}));
  EXPECT_EQ(param_of([&] { learned_position_ids(kBert, 2, kMax - 1, {}, {}); }), "id");
  // offset + past: each below 2^40, their sum not
  EXPECT_EQ(param_of([] { learned_position_ids(spec_of(IdMap::arange, 1, kMax - 1), 1, kMax - 1, {}, {}); }), "id");

  const LearnedSpec pad_top = spec_of(IdMap::make_positions, kMax - 1, 0);
  EXPECT_EQ(learned_position_ids(pad_top, 2, 0, Tokens{kMax - 1, kMax - 1}, {}), (Ids{kMax - 1, kMax - 1}));
  EXPECT_EQ(param_of([&] { learned_position_ids(pad_top, 2, 0, Tokens{kMax - 1, 0}, {}); }), "id");
  const LearnedSpec pad_below = spec_of(IdMap::make_positions, kMax - 2, 0);
  EXPECT_EQ(learned_position_ids(pad_below, 2, 0, Tokens{0, kMax - 2}, {}), (Ids{kMax - 1, kMax - 2}));
  EXPECT_EQ(param_of([&] { learned_position_ids(pad_below, 2, 0, Tokens{0, 0}, {}); }), "id");
  EXPECT_EQ(param_of([] { learned_position_ids(kRoberta, 1, kMax - 2, Tokens{0}, {}); }), "id");  // 1 + 2^40 - 2 + 1
  EXPECT_EQ(learned_position_ids(kRoberta, 1, kMax - 3, Tokens{0}, {}), (Ids{kMax - 1}));
  EXPECT_EQ(learned_position_ids(kRoberta, 1, kMax - 1, Tokens{1}, {}), (Ids{1}));  // padding: no past added

  const LearnedSpec opt_top = spec_of(IdMap::cumsum_mask, 1, kMax - 1);
  EXPECT_EQ(learned_position_ids(opt_top, 2, 0, {}, Mask{1, 0}), (Ids{kMax - 1, kMax - 2}));
  EXPECT_EQ(param_of([&] { learned_position_ids(opt_top, 2, 0, {}, Mask{1, 1}); }), "id");
}

// ======================================================================================================
// LearnedOracleIds: the second transcription and the properties
// ======================================================================================================

RC_GTEST_PROP(LearnedOracleIds, MatchesThePrefixLoop, ()) {
  const Case c = *rc::gen::exec(genCase);
  const std::optional<Ids> want = prefix_loop(c.spec, c.length, c.past, c.tokens, c.mask);
  RC_LOG() << posenc::to_string(c.spec.id_map) << " pad=" << c.spec.padding_idx << " off=" << c.spec.offset
           << " L=" << c.length << " past=" << c.past << "\n";
  if (!want) {
    RC_ASSERT(param_of([&] { call(c); }) == "id");
    return;
  }
  RC_ASSERT(call(c) == *want);
}

// make_positions: padding tokens get padding_idx; the real tokens, in order, get padding_idx + past + 1, + 2, ...
RC_GTEST_PROP(LearnedOracleIds, MakePositionsCountsRealTokens, ()) {
  const std::int64_t pad = *rc::gen::inRange<std::int64_t>(0, 5);
  const LearnedSpec s = spec_of(IdMap::make_positions, pad, 0);
  const std::size_t n = genLength();
  const std::int64_t past = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(0, 30),
                                            rc::gen::inRange<std::int64_t>(0, kMax - 100));
  const Tokens tokens = genTokens(n, pad);
  const Ids ids = learned_position_ids(s, n, past, tokens, {});
  RC_ASSERT(ids.size() == n);
  std::int64_t next = pad + 1 + past;
  for (std::size_t t = 0; t < n; ++t) {
    if (tokens[t] == pad) {
      RC_ASSERT(ids[t] == pad);
    } else {
      RC_ASSERT(ids[t] == next);
      ++next;
    }
  }
  // With no padding it is arange with offset padding_idx + 1.
  Tokens real = tokens;
  for (std::int64_t& tok : real)
    if (tok == pad) tok = pad + 1;
  RC_ASSERT(learned_position_ids(s, n, past, real, {}) ==
            learned_position_ids(spec_of(IdMap::arange, 1, pad + 1), n, past, {}, {}));
}

// cumsum_mask: padding gets offset - 1; the real tokens of the window count on from the real tokens of the past.
RC_GTEST_PROP(LearnedOracleIds, CumsumMaskCountsRealTokens, ()) {
  const std::int64_t offset = *rc::gen::inRange<std::int64_t>(1, 6);
  const LearnedSpec s = spec_of(IdMap::cumsum_mask, 1, offset);
  const std::size_t n = genLength();
  const std::int64_t past = *rc::gen::inRange<std::int64_t>(0, 30);
  const Mask mask = genMask(static_cast<std::size_t>(past) + n);
  const Ids ids = learned_position_ids(s, n, past, {}, mask);
  RC_ASSERT(ids.size() == n);
  std::int64_t seen = 0;
  for (std::int64_t k = 0; k < past; ++k) seen += mask[static_cast<std::size_t>(k)];
  std::int64_t next = offset + seen;
  for (std::size_t t = 0; t < n; ++t) {
    if (mask[static_cast<std::size_t>(past) + t] == 0) {
      RC_ASSERT(ids[t] == offset - 1);
    } else {
      RC_ASSERT(ids[t] == next);
      ++next;
    }
  }
  // A KV-cache call reads the tail of the full call over the same mask.
  const Ids full = learned_position_ids(s, static_cast<std::size_t>(past) + n, 0, {}, mask);
  RC_ASSERT(Ids(full.end() - static_cast<std::ptrdiff_t>(n), full.end()) == ids);
  // With an all-ones mask it is arange with the same offset and past.
  RC_ASSERT(learned_position_ids(s, n, past, {}, Mask(static_cast<std::size_t>(past) + n, 1)) ==
            learned_position_ids(spec_of(IdMap::arange, 1, offset), n, past, {}, {}));
}

// make_positions: after a prefix without padding, a KV-cache call with past = prefix length reads the tail.
RC_GTEST_PROP(LearnedOracleIds, MakePositionsCacheStepReadsTheTail, ()) {
  const std::int64_t pad = *rc::gen::inRange<std::int64_t>(0, 3);
  const LearnedSpec s = spec_of(IdMap::make_positions, pad, 0);
  const std::size_t p = *rc::gen::inRange<std::size_t>(0, 10), n = genLength();
  Tokens all = *rc::gen::container<Tokens>(p, rc::gen::just(pad + 7));
  const Tokens tail = genTokens(n, pad);
  all.insert(all.end(), tail.begin(), tail.end());
  const Ids full = learned_position_ids(s, all.size(), 0, all, {});
  RC_ASSERT(Ids(full.begin() + static_cast<std::ptrdiff_t>(p), full.end()) ==
            learned_position_ids(s, n, static_cast<std::int64_t>(p), tail, {}));
}

// arange: offset + past + t whatever the tokens and the mask say.
RC_GTEST_PROP(LearnedOracleIds, ArangeIgnoresTokensAndMask, ()) {
  const LearnedSpec s = genSpec(IdMap::arange);
  const std::size_t n = genLength();
  const std::int64_t past = *rc::gen::inRange<std::int64_t>(0, 1000);
  if (s.offset + past + static_cast<std::int64_t>(n) > kMax) return;
  const Ids plain = learned_position_ids(s, n, past, {}, {});
  for (std::size_t t = 0; t < n; ++t) RC_ASSERT(plain[t] == s.offset + past + static_cast<std::int64_t>(t));
  RC_ASSERT(learned_position_ids(s, n, past, genTokens(n, s.padding_idx), genMask(n)) == plain);
  RC_ASSERT(learned_position_ids(s, n, past, genTokens(n, s.padding_idx),
                                 genMask(static_cast<std::size_t>(past) + n)) == plain);
}

// ======================================================================================================
// LearnedOracleTable: the lookup
// ======================================================================================================

TEST(LearnedOracleTable, RowMajorLiterals) {
  const LearnedTable t{3, 2, {10.0, 11.0, 20.0, 21.0, 30.0, -0.0}};
  EXPECT_TRUE(holds(learned_row_value(t, 0, 0), 10.0));
  EXPECT_TRUE(holds(learned_row_value(t, 0, 1), 11.0));
  EXPECT_TRUE(holds(learned_row_value(t, 1, 0), 20.0));
  EXPECT_TRUE(holds(learned_row_value(t, 2, 0), 30.0));
  const Real z = learned_row_value(t, 2, 1);
  EXPECT_TRUE(mpfr_zero_p(raw(z)) && mpfr_signbit(raw(z)));  // -0 stays -0
  // one column, one row
  EXPECT_TRUE(holds(learned_row_value(LearnedTable{1, 1, {0.25}}, 0, 0), 0.25));
}

// Every double is returned exactly, at any bits (the Real has max(bits, 53) bits).
TEST(LearnedOracleTable, ValuesAreExact) {
  const double v[] = {0.1, 1.0 / 3.0, -0x1.fffffffffffffp+1023, 0x1p-1074, 0x1.0000000000001p0, -7.25};
  const LearnedTable t{2, 3, std::vector<double>(std::begin(v), std::end(v))};
  for (unsigned bits : {24u, 52u, 53u, 64u, 256u, 1000u})
    for (std::size_t i = 0; i < 6; ++i) {
      const Real r = learned_row_value(t, static_cast<std::int64_t>(i / 3), i % 3, bits);
      EXPECT_TRUE(holds(r, v[i])) << bits << " " << i << " " << show(r);
      EXPECT_EQ(bits_of(r), std::max(bits, 53u));
    }
  EXPECT_EQ(bits_of(learned_row_value(t, 0, 0)), kDefaultBits);
}

// The table looked up at the oracle's ids: RoBERTa-like 6 x 2 table, row r = (r, -r).
TEST(LearnedOracleTable, LookupAtTheIds) {
  LearnedTable t{6, 2, {}};
  for (int r = 0; r < 6; ++r) {
    t.values.push_back(r);
    t.values.push_back(-r);
  }
  const Ids ids = roberta({0, 5, 2, 1});  // 2 3 4 1
  const double want[] = {2, 3, 4, 1};
  for (std::size_t k = 0; k < ids.size(); ++k) {
    EXPECT_TRUE(holds(learned_row_value(t, ids[k], 0), want[k]));
    EXPECT_TRUE(holds(learned_row_value(t, ids[k], 1), -want[k]));
  }
  // a valid id past the table's rows is the lookup's error
  EXPECT_EQ(param_of([&] { learned_row_value(t, roberta({0, 5, 2, 7, 8})[4], 0); }), "id");  // id 6
}

// ======================================================================================================
// LearnedOracleErrors: every bad argument names its parameter
// ======================================================================================================

TEST(LearnedOracleErrors, PositionIdsNameTheirParameter) {
  const Tokens two = {0, 5};
  const Mask m2 = {1, 1};
  // the spec
  LearnedSpec bad = kBert;
  bad.id_map = static_cast<IdMap>(7);
  EXPECT_EQ(param_of([&] { learned_position_ids(bad, 2, 0, {}, {}); }), "id_map");
  bad = kRoberta;
  bad.padding_idx = -1;
  EXPECT_EQ(param_of([&] { learned_position_ids(bad, 2, 0, two, {}); }), "padding_idx");
  bad.padding_idx = kMax;
  EXPECT_EQ(param_of([&] { learned_position_ids(bad, 2, 0, two, {}); }), "padding_idx");
  bad = kRoberta;
  bad.offset = 2;  // make_positions has no offset
  EXPECT_EQ(param_of([&] { learned_position_ids(bad, 2, 0, two, {}); }), "offset");
  bad = kOpt;
  bad.offset = -1;
  EXPECT_EQ(param_of([&] { learned_position_ids(bad, 2, 0, {}, m2); }), "offset");
  bad.offset = kMax;
  EXPECT_EQ(param_of([&] { learned_position_ids(bad, 2, 0, {}, m2); }), "offset");
  // the spec comes first
  bad = kOpt;
  bad.offset = -1;
  EXPECT_EQ(param_of([&] { learned_position_ids(bad, 0, -1, {}, {}); }), "offset");

  // length
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 0, 0, {}, {}); }), "length");
  EXPECT_EQ(param_of([] { learned_position_ids(kRoberta, 0, 0, {}, {}); }), "length");
  EXPECT_EQ(param_of([] { learned_position_ids(kOpt, 0, 0, {}, {}); }), "length");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, std::size_t(kMax), 0, {}, {}); }), "length");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, std::numeric_limits<std::size_t>::max(), 0, {}, {}); }),
            "length");
  // past
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 1, -1, {}, {}); }), "past");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 1, kMax, {}, {}); }), "past");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 1, std::numeric_limits<std::int64_t>::min(), {}, {}); }),
            "past");
  EXPECT_EQ(param_of([&] { learned_position_ids(kRoberta, 2, -1, two, {}); }), "past");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 0, -1, {}, {}); }), "length");  // length before past

  // tokens: make_positions needs exactly length of them; the others take none or length
  EXPECT_EQ(param_of([] { learned_position_ids(kRoberta, 2, 0, {}, {}); }), "tokens");
  EXPECT_EQ(param_of([] { learned_position_ids(kRoberta, 2, 0, Tokens{0}, {}); }), "tokens");
  EXPECT_EQ(param_of([] { learned_position_ids(kRoberta, 2, 0, Tokens{0, 5, 2}, {}); }), "tokens");
  EXPECT_EQ(param_of([] { learned_position_ids(kRoberta, 2, 1, Tokens{0, 5, 2}, {}); }), "tokens");  // not past+L
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 2, 0, Tokens{0}, {}); }), "tokens");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 2, 1, Tokens{0, 5, 2}, {}); }), "tokens");
  EXPECT_EQ(param_of([] { learned_position_ids(kOpt, 2, 0, Tokens{0, 5, 2}, Mask{1, 1}); }), "tokens");
  EXPECT_EQ(param_of([] { learned_position_ids(kOpt, 2, 0, Tokens{0, 5}, Mask{1, 1}); }), "");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 2, 0, Tokens{0, 5}, {}); }), "");

  // attention_mask: cumsum_mask needs exactly past + length entries; others take none, length or past + length
  EXPECT_EQ(param_of([] { learned_position_ids(kOpt, 2, 0, {}, {}); }), "attention_mask");
  EXPECT_EQ(param_of([] { learned_position_ids(kOpt, 2, 0, {}, Mask{1}); }), "attention_mask");
  EXPECT_EQ(param_of([] { learned_position_ids(kOpt, 2, 1, {}, Mask{1, 1}); }), "attention_mask");  // length only
  EXPECT_EQ(param_of([] { learned_position_ids(kOpt, 2, 1, {}, Mask{1, 1, 1, 1}); }), "attention_mask");
  EXPECT_EQ(param_of([] { learned_position_ids(kOpt, 2, 0, {}, Mask{1, 2}); }), "attention_mask");
  EXPECT_EQ(param_of([] { learned_position_ids(kOpt, 2, 1, {}, Mask{255, 1, 1}); }), "attention_mask");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 2, 1, {}, Mask{1}); }), "attention_mask");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 2, 1, {}, Mask{1, 1, 1, 1}); }), "attention_mask");
  EXPECT_EQ(param_of([] { learned_position_ids(kBert, 2, 0, {}, Mask{1, 2}); }), "attention_mask");  // unread, still 0/1
  EXPECT_EQ(param_of([&] { learned_position_ids(kRoberta, 2, 0, two, Mask{3, 1}); }), "attention_mask");
  EXPECT_EQ(param_of([&] { learned_position_ids(kRoberta, 2, 1, two, Mask{1, 1, 1}); }), "");
  EXPECT_EQ(param_of([&] { learned_position_ids(kRoberta, 2, 1, two, Mask{0, 0}); }), "");
  // tokens before attention_mask
  EXPECT_EQ(param_of([] { learned_position_ids(kRoberta, 2, 0, Tokens{0}, Mask{5}); }), "tokens");
  // id: after all the inputs
  EXPECT_EQ(param_of([] { learned_position_ids(spec_of(IdMap::cumsum_mask, 1, 0), 1, 0, {}, Mask{0}); }), "id");
}

TEST(LearnedOracleErrors, RowValueNamesItsParameter) {
  const LearnedTable t{2, 3, {1, 2, 3, 4, 5, 6}};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(param_of([] { learned_row_value(LearnedTable{}, 0, 0); }), "table");
  EXPECT_EQ(param_of([] { learned_row_value(LearnedTable{0, 3, {}}, 0, 0); }), "table");
  EXPECT_EQ(param_of([] { learned_row_value(LearnedTable{2, 0, {}}, 0, 0); }), "table");
  EXPECT_EQ(param_of([] { learned_row_value(LearnedTable{2, 3, {1, 2, 3, 4, 5}}, 0, 0); }), "table");
  EXPECT_EQ(param_of([&] { learned_row_value(LearnedTable{2, 3, {1, 2, 3, 4, nan, 6}}, 0, 0); }), "table");
  EXPECT_EQ(param_of([&] { learned_row_value(LearnedTable{2, 3, {1, 2, 3, 4, 5, -inf}}, 0, 0); }), "table");
  EXPECT_EQ(param_of([] { learned_row_value(LearnedTable{2, 3, {}}, 5, 9, 0); }), "table");  // the table first

  EXPECT_EQ(param_of([&] { learned_row_value(t, -1, 0); }), "id");
  EXPECT_EQ(param_of([&] { learned_row_value(t, 2, 0); }), "id");
  EXPECT_EQ(param_of([&] { learned_row_value(t, std::numeric_limits<std::int64_t>::max(), 0); }), "id");
  EXPECT_EQ(param_of([&] { learned_row_value(t, std::numeric_limits<std::int64_t>::min(), 0); }), "id");
  EXPECT_EQ(param_of([&] { learned_row_value(t, 0, 3); }), "c");
  EXPECT_EQ(param_of([&] { learned_row_value(t, 1, std::numeric_limits<std::size_t>::max()); }), "c");
  EXPECT_EQ(param_of([&] { learned_row_value(t, 0, 0, 23); }), "bits");
  EXPECT_EQ(param_of([&] { learned_row_value(t, 0, 0, 0); }), "bits");
  EXPECT_EQ(param_of([&] { learned_row_value(t, 0, 0, kMaxBits + 1); }), "bits");
  EXPECT_EQ(param_of([&] { learned_row_value(t, 1, 2, kMinBits); }), "");
  EXPECT_EQ(param_of([&] { learned_row_value(t, 1, 2, kMaxBits); }), "");
  EXPECT_EQ(param_of([&] { learned_row_value(t, 2, 3, 0); }), "id");  // id before c before bits
  EXPECT_EQ(param_of([&] { learned_row_value(t, 1, 3, 0); }), "c");
}

}  // namespace oracle_learned
