// The learned scheme's claims (LEARNED-*): the id maps against the oracle (reference/include/posenc/reference/
// learned.hpp, written from the definition independently of lib/) and against literal vectors of the reference
// implementations' behaviour; rows as exact copies; lookups beyond the table refused; and the absence of relative
// structure in a learned table (the reason it is not a relative encoding).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "schemes/learned/budget.hpp"
#include "schemes/learned/check.hpp"
#include "schemes/learned/measure.hpp"
#include "posenc/error.hpp"
#include "posenc/learned.hpp"
#include "posenc/reference/learned.hpp"
#include "posenc/sinusoidal.hpp"
#include "support/claims.hpp"
#include "support/harness.hpp"
#include "support/spec_contract.hpp"

namespace claims_learned {  // its own namespace: the claims are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
using namespace posenc::test::learned;
using namespace verify::learned;
using R = LearnedRow;

const std::string kConv = "CONVENTIONS.md §2.2, §3 item 4";

// A generated input the case owns (RapidCheck keeps generated values while it shrinks).
struct InputCase {
  std::size_t length = 1;
  std::int64_t past = 0;
  std::vector<std::int64_t> tokens;
  std::vector<std::uint8_t> mask;
  LearnedInput view() const { return {length, past, tokens, mask}; }
};

// Tokens with padding (left, right, holes, none) and the matching attention mask over past + length.
InputCase input_gen(const LearnedSpec& s) {
  InputCase c;
  // a quarter of the cases longer than the id maps' blocks of 256 entries (their words of 8 and the tail)
  c.length = *rc::gen::inRange<std::size_t>(0, 4) == 0 ? *rc::gen::inRange<std::size_t>(250, 1100)
                                                         : *rc::gen::inRange<std::size_t>(1, 70);
  c.past = *rc::gen::element<std::int64_t>(0, 0, 1, 3, 17, 511, (std::int64_t{1} << 39));
  if (s.id_map == IdMap::cumsum_mask && c.past > 5000) c.past = 5000;  // the mask spans past + length entries
  const int kind = *rc::gen::inRange(0, 4);
  const std::size_t n = static_cast<std::size_t>(c.past) * (s.id_map == IdMap::cumsum_mask) + c.length;
  std::vector<std::uint8_t> m(n, 1);
  const std::size_t pad = *rc::gen::inRange<std::size_t>(0, n);
  if (kind == 1) std::fill(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(pad), 0);  // left padding
  if (kind == 2) std::fill(m.end() - static_cast<std::ptrdiff_t>(pad), m.end(), 0);      // right padding
  if (kind == 3)
    for (auto& v : m) v = *rc::gen::inRange<std::uint8_t>(0, 2);
  if (s.id_map == IdMap::cumsum_mask) c.mask = m;
  for (std::size_t t = 0; t < c.length; ++t) {
    const bool real = m[n - c.length + t] != 0;
    std::int64_t tok = *rc::gen::inRange<std::int64_t>(0, 50000);
    if (tok == s.padding_idx) ++tok;
    c.tokens.push_back(real ? tok : s.padding_idx);
  }
  return c;
}

LearnedTable random_table(std::size_t rows, std::size_t dim, std::uint64_t seed) {
  LearnedTable t{rows, dim, std::vector<double>(rows * dim)};
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (double& v : t.values) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = static_cast<float>(static_cast<double>(static_cast<std::int64_t>(x >> 11)) * 0x1p-52 - 1.0);
  }
  return t;
}

// ---------------------------------------------------------------------------------------------------------------
POSENC_PROPERTY(Learned, PositionIdsMatchOracle,
                {"LEARNED-IDS-1", "learned",
                 "position_ids of every map (arange, make_positions, cumsum_mask) for any padding pattern (left, "
                 "right, holes), past length and padding_idx / offset equal the oracle's, transcribed from the HF / "
                 "fairseq code (create_position_ids_from_input_ids, make_positions, OPTLearnedPositionalEmbedding)",
                 kConv, Oracle::reference, {R::ids}}) {
  const LearnedSpec s = *rc::gen::arbitrary<LearnedSpec>();
  const InputCase c = input_gen(s);
  tag(claim, std::string(to_string(s.id_map)));
  count_case(claim);
  // An id below 0 (cumsum_mask with offset 0 at a padding token) is refused by both, naming "id".
  std::string oracle_refused;
  try {
    (void)posenc::reference::learned_position_ids(s, c.length, c.past, c.tokens, c.mask);
  } catch (const Error& e) {
    oracle_refused = e.parameter();
  }
  if (!oracle_refused.empty()) {
    RC_ASSERT(oracle_refused == std::string("id"));
    try {
      (void)position_ids(s, c.view());
      RC_FAIL("the oracle refused an id below 0 or at 2^40; the fast path returned ids");
    } catch (const Error& e) {
      RC_ASSERT(e.parameter() == std::string("id"));
    }
    return;
  }
  measure_ids(s, c.view(), claim_sink(claim));
}

// The buffer form against the vector form: the same ids, or the same refusal with the buffer untouched, and an
// out of the wrong size refused naming "out", untouched. The first difference, or nothing.
std::optional<std::string> buffer_ids_differ(const LearnedSpec& s, const LearnedInput& in) {
  constexpr std::int64_t kUntouched = -7;
  auto untouched = [](const std::vector<std::int64_t>& v) {
    return std::ranges::all_of(v, [](std::int64_t x) { return x == kUntouched; });
  };
  std::vector<std::int64_t> want;
  std::string refused, buffer_refused;
  try {
    want = position_ids(s, in);
  } catch (const Error& e) {
    refused = e.parameter();
  }
  std::vector<std::int64_t> out(in.length, kUntouched);
  try {
    position_ids(s, in, out);
  } catch (const Error& e) {
    buffer_refused = e.parameter();
  }
  if (buffer_refused != refused)
    return "the vector form " + (refused.empty() ? "gave ids" : "refused " + refused) + ", the buffer form " +
           (buffer_refused.empty() ? "gave ids" : "refused " + buffer_refused);
  if (refused.empty() && out != want) return std::string("the buffer's ids differ from the vector's");
  if (!refused.empty() && !untouched(out)) return std::string("a refused call wrote into out");
  std::vector<std::int64_t> wrong(in.length + 1, kUntouched);
  try {
    position_ids(s, in, wrong);
    return std::string("an out of length + 1 ids was accepted");
  } catch (const Error& e) {
    if (e.parameter() != std::string("out")) return "an out of length + 1 ids refused naming " + e.parameter();
  }
  if (!untouched(wrong)) return std::string("a refused out was written");
  return std::nullopt;
}

POSENC_PROPERTY(Learned, IdsIntoABufferAreTheIdsOfTheVector,
                {"LEARNED-IDS-3", "learned",
                 "position_ids(spec, input, out) writes into out exactly the ids position_ids(spec, input) returns, "
                 "for every map and input LEARNED-IDS-1 draws; where the vector form refuses (an id below 0 or at "
                 "2^40), the buffer form refuses naming the same parameter and leaves out as it was; an out of "
                 "another size than length is refused naming \"out\", untouched",
                 kConv, Oracle::identity, {R::ids}}) {
  const LearnedSpec s = *rc::gen::arbitrary<LearnedSpec>();
  const InputCase c = input_gen(s);
  tag(claim, std::string(to_string(s.id_map)));
  count_case(claim);
  const std::optional<std::string> differ = buffer_ids_differ(s, c.view());
  if (differ) RC_FAIL(input_label(s, c.view()) + ": " + *differ);
}

POSENC_CLAIM_TEST(Learned, IdsIntoABufferAtTheEdgesOfTheIdRange,
                  {"LEARNED-IDS-4", "learned",
                   "at the edges of [0, 2^40) the buffer form of position_ids gives the vector form's ids or its "
                   "refusal (out untouched): every map with its largest id at 2^40 - 1 (given) and at 2^40 "
                   "(refused), make_positions whose bound past + length + padding_idx reaches 2^40 while a padding "
                   "token keeps every id below it, cumsum_mask with offset 0 (a padding token's id -1, refused) "
                   "and offset 1",
                   kConv, Oracle::identity, {R::ids}}) {
  constexpr std::int64_t kTop = kLearnedMaxIndex;  // 2^40
  const std::vector<std::int64_t> tokens{5, 6, 1, 7};      // padding_idx 1 at t = 2: three real tokens
  const std::vector<std::int64_t> no_pad{5, 6, 8, 7};
  const std::vector<std::uint8_t> mask_pad{1, 1, 0, 1}, mask_full{1, 1, 1, 1};
  const LearnedSpec arange{.id_map = IdMap::arange}, roberta{.id_map = IdMap::make_positions, .padding_idx = 1};
  for (const std::int64_t top : {kTop - 1, kTop}) {  // the largest id
    // make_positions: ids (run + past) m + 1, the largest 3 + past + 1 with the padding token, 4 + past + 1 without.
    for (const auto& [spec, in, what] : {std::tuple{arange, LearnedInput{4, top - 3, {}, {}}, "arange"},
                                         {roberta, LearnedInput{4, top - 4, tokens, {}}, "make_positions with padding"},
                                         {roberta, LearnedInput{4, top - 5, no_pad, {}}, "make_positions"}}) {
      EXPECT_EQ(buffer_ids_differ(spec, in), std::nullopt) << what << ", largest id " << top;
      count_case(claim);
    }
  }
  for (const std::int64_t offset : {0, 1}) {
    const LearnedSpec opt{.id_map = IdMap::cumsum_mask, .offset = offset};
    for (const auto& mask : {mask_pad, mask_full}) {
      EXPECT_EQ(buffer_ids_differ(opt, {4, 0, {}, mask}), std::nullopt) << "cumsum_mask, offset " << offset;
      count_case(claim);
    }
  }
  // The edges are reached: the largest ids given and refused as stated.
  EXPECT_EQ(position_ids(arange, {4, kTop - 4, {}, {}}).back(), kTop - 1);
  EXPECT_EQ(position_ids(roberta, {4, kTop - 5, tokens, {}}).back(), kTop - 1);
  EXPECT_THROW((void)position_ids(arange, {4, kTop - 3, {}, {}}), Error);
  EXPECT_THROW((void)position_ids(roberta, {4, kTop - 5, no_pad, {}}), Error);
}

POSENC_CLAIM_TEST(Learned, PresetsGiveTheIdsOfTheReferenceImplementations,
                  {"LEARNED-IDS-2", "learned",
                   "the presets give the ids the reference code gives for padded batches: RoBERTa/fairseq tokens "
                   "[0, 31414, 232, 2] -> [2, 3, 4, 5], right padding [0, 5, 2, 1, 1] -> [2, 3, 4, 1, 1], left padding "
                   "[1, 1, 0, 5, 2] -> [1, 1, 2, 3, 4], past 3: [0, 5] -> [5, 6]; OPT attention mask [0, 0, 1, 1, 1] -> "
                   "[1, 1, 2, 3, 4], past 3 with mask [0, 1, 1, 1, 1] -> [4, 5]; BERT / GPT-2 past 3, length 2 -> "
                   "[3, 4] whatever the padding",
                   kConv, Oracle::reference, {R::ids}}) {
  struct Case {
    const char* preset;
    std::int64_t past;
    std::vector<std::int64_t> tokens;
    std::vector<std::uint8_t> mask;
    std::vector<std::int64_t> want;
  };
  const std::vector<Case> cases{
      {"roberta", 0, {0, 31414, 232, 2}, {}, {2, 3, 4, 5}},
      {"roberta", 0, {0, 5, 2, 1, 1}, {}, {2, 3, 4, 1, 1}},
      {"roberta", 0, {1, 1, 0, 5, 2}, {}, {1, 1, 2, 3, 4}},
      {"roberta", 3, {0, 5}, {}, {5, 6}},
      {"fairseq", 0, {1, 1, 0, 5, 2}, {}, {1, 1, 2, 3, 4}},
      {"opt", 0, {}, {0, 0, 1, 1, 1}, {1, 1, 2, 3, 4}},
      {"opt", 0, {}, {1, 1, 1}, {2, 3, 4}},
      {"opt", 3, {}, {0, 1, 1, 1, 1}, {4, 5}},
      {"bert", 3, {1, 1}, {}, {3, 4}},
      {"gpt2", 3, {}, {}, {3, 4}},
  };
  for (const Case& c : cases) {
    const LearnedSpec s = learned_preset(c.preset);
    const LearnedInput in{c.want.size(), c.past, c.tokens, c.mask};
    EXPECT_EQ(position_ids(s, in), c.want) << c.preset << " " << input_label(s, in);
    measure_ids(s, in, claim_sink(claim, FailWith::gtest));
    count_case(claim);
  }
}

POSENC_PROPERTY(Learned, RowsAreTheTableRowsAndNeverWrap,
                {"LEARNED-ROWS-1", "learned",
                 "lookup() writes table[id_t] for every token (f64 bit for bit, f32 the value rounded once), the same "
                 "in every call; an id outside [0, rows) raises posenc::Error naming \"position id\" before anything "
                 "is written (no wrap, no clamp)",
                 kConv, Oracle::reference, {R::rows_f64, R::rows_f32}}) {
  const LearnedSpec s = *rc::gen::arbitrary<LearnedSpec>();
  LearnedSpec s_ok = s;
  if (s_ok.id_map == IdMap::cumsum_mask) s_ok.offset = std::max<std::int64_t>(s_ok.offset, 1);  // ids >= 0
  const InputCase c = input_gen(s_ok);
  const std::vector<std::int64_t> ids = position_ids(s_ok, c.view());
  std::int64_t hi = 0;
  for (auto id : ids) hi = std::max(hi, id);
  if (hi > 100000) return;  // a table that large adds nothing
  const std::size_t dim = *rc::gen::inRange<std::size_t>(1, 9);
  const bool fits = *rc::gen::arbitrary<bool>();
  const std::size_t rows = fits ? static_cast<std::size_t>(hi) + 1 + *rc::gen::inRange<std::size_t>(0, 3)
                                : static_cast<std::size_t>(std::max<std::int64_t>(hi, 1));
  const LearnedTable table = random_table(rows, dim, *rc::gen::arbitrary<std::uint32_t>());
  const LearnedPlan plan(s_ok, table);
  count_case(claim);
  std::vector<double> out(c.length * dim, 7.0);
  if (static_cast<std::size_t>(hi) < rows) {
    plan.lookup(c.view(), std::span<double>(out));
    std::vector<double> again(out.size());
    plan.lookup(c.view(), std::span<double>(again));
    RC_ASSERT(again == out);
    measure_rows(s_ok, table, ids, claim_sink(claim));
  } else {
    try {
      plan.lookup(c.view(), std::span<double>(out));
      RC_FAIL("an id beyond the table was looked up");
    } catch (const Error& e) {
      RC_ASSERT(e.parameter() == std::string("position id"));
    }
    for (double v : out) RC_ASSERT(v == 7.0);
  }
}

POSENC_CLAIM_TEST(Learned, ALearnedTableHasNoRelativeStructure,
                  {"LEARNED-NOT-RELATIVE-1", "learned",
                   "the Toeplitz identity of relative encodings does not hold for a learned table: for a random "
                   "table (uniform in [-1, 1), 514 x 64) and every k in 1..8, <row(p), row(p + k)> varies with p by "
                   "more than 0.5 (its rounding error is below 1e-12), while for the sinusoidal table of the same size "
                   "it is constant to 1e-12 (SIN-DOT); nothing in posenc treats a learned table as relative",
                   "seed 003; CONVENTIONS.md §2.2", Oracle::identity, {}}) {
  const std::size_t rows = 514, dim = 64;
  const LearnedTable t = random_table(rows, dim, 2026);
  SinusoidalSpec ss;
  ss.dim = dim;
  std::vector<double> sin_table(rows * dim);
  sinusoidal_table(ss, 0, rows, std::span<double>(sin_table));
  auto dot = [&](const std::vector<double>& v, std::size_t a, std::size_t b) {
    double s = 0;
    for (std::size_t c = 0; c < dim; ++c) s += v[a * dim + c] * v[b * dim + c];
    return s;
  };
  for (std::size_t k = 1; k <= 8; ++k) {
    double lo = 1e300, hi = -1e300, slo = 1e300, shi = -1e300;
    for (std::size_t p = 0; p + k < rows; ++p) {
      const double d = dot(t.values, p, p + k), e = dot(sin_table, p, p + k);
      lo = std::min(lo, d);
      hi = std::max(hi, d);
      slo = std::min(slo, e);
      shi = std::max(shi, e);
    }
    EXPECT_GT(hi - lo, 0.5) << "learned k=" << k;
    EXPECT_LT(shi - slo, 1e-12) << "sinusoidal k=" << k;
    count_case(claim);
  }
}

POSENC_CLAIM_TEST(LearnedCheck, CheckPassesPosencIdsAndRefusesCommonPortingBugs,
                  {"LEARNED-CHECK-1", "learned",
                   "posenc check learned passes the ids of every preset for a padded batch and fails: a RoBERTa port "
                   "that counts from 0 (arange), one that ignores left padding, an OPT port without the offset 2, and "
                   "a BERT port off by the past length",
                   "DESIGN.md (posenc check)", Oracle::reference, {R::check_ids}}) {
  const std::size_t L = 6;
  const std::vector<std::int64_t> tokens{1, 1, 0, 7, 8, 2, 0, 9, 10, 11, 2, 1};  // batch 2: left / right padding
  const std::vector<std::uint8_t> mask{0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
  for (const auto& preset : SpecTraits<LearnedSpec>::presets()) {
    const LearnedSpec s = learned_preset(preset.name);
    std::vector<double> ids;
    for (std::size_t b = 0; b < 2; ++b) {
      const LearnedInput in{L, 0, std::span<const std::int64_t>(tokens).subspan(b * L, L),
                            s.id_map == IdMap::cumsum_mask ? std::span<const std::uint8_t>(mask).subspan(b * L, L)
                                                           : std::span<const std::uint8_t>()};
      for (auto id : position_ids(s, in)) ids.push_back(static_cast<double>(id));
    }
    IdsInput in{ids, 2, L, 0, tokens, s.id_map == IdMap::cumsum_mask ? mask : std::vector<std::uint8_t>{}, {}};
    const CheckReport ok = check_ids(s, in);
    count_case(claim);
    check_verdict(claim, ok, 0, std::string(preset.name));
    // The port bugs: each a different map or offset for the same input.
    std::vector<double> bad(ids);
    if (s.id_map == IdMap::make_positions) {
      for (std::size_t t = 0; t < bad.size(); ++t) bad[t] = static_cast<double>(t % L);  // arange from 0
      EXPECT_FALSE(check_ids(s, IdsInput{bad, 2, L, 0, tokens, {}, {}}).passed()) << preset.name << " arange";
      for (std::size_t t = 0; t < bad.size(); ++t) bad[t] = static_cast<double>(t % L) + 2;  // padding ignored
      EXPECT_FALSE(check_ids(s, IdsInput{bad, 2, L, 0, tokens, {}, {}}).passed()) << preset.name << " no padding";
    } else if (s.id_map == IdMap::cumsum_mask) {
      for (double& v : bad) v -= 2;
      EXPECT_FALSE(check_ids(s, IdsInput{bad, 2, L, 0, tokens, mask, {}}).passed()) << preset.name << " no offset";
    } else {
      std::vector<double> past_ids;
      for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t t = 0; t < L; ++t) past_ids.push_back(static_cast<double>(t));  // past 4 ignored
      EXPECT_FALSE(check_ids(s, IdsInput{past_ids, 2, L, 4, tokens, {}, {}}).passed()) << preset.name << " past";
    }
    count_case(claim);
  }
}

POSENC_CLAIM_TEST(LearnedErrors, InvalidArgumentsThrowErrorNamingTheParameter,
                  {"LEARNED-ERR-1", "learned",
                   "invalid arguments (length 0, negative past, tokens or attention masks of the wrong size or with "
                   "values other than 0/1, a table with NaN / inf or the wrong number of values, outputs of the wrong "
                   "size, ids outside the table, unknown presets) raise posenc::Error naming the parameter, value and "
                   "accepted range (invalid spec fields: LEARNED-SPEC-1)",
                   "DESIGN.md §7", Oracle::identity, {}}) {
  const LearnedSpec roberta = learned_preset("roberta"), opt = learned_preset("opt");
  const std::vector<std::int64_t> tok{0, 5, 6};
  const std::vector<std::uint8_t> m3{1, 1, 1}, bad{1, 2, 1};
  expect_error(claim, "length", [&] { (void)position_ids(roberta, {0, 0, {}, {}}); }, "length 0");
  expect_error(claim, "past", [&] { (void)position_ids(roberta, {3, -1, tok, {}}); }, "past -1");
  expect_error(claim, "tokens", [&] { (void)position_ids(roberta, {4, 0, tok, {}}); }, "3 tokens for length 4");
  expect_error(claim, "attention_mask", [&] { (void)position_ids(opt, {3, 1, {}, m3}); }, "mask without the past");
  expect_error(claim, "attention_mask", [&] { (void)position_ids(opt, {3, 0, {}, bad}); }, "mask value 2");
  expect_error(claim, "table", [] { (void)LearnedPlan(LearnedSpec{}, LearnedTable{2, 2, {1, 2, 3}}); }, "3 values for 2x2");
  expect_error(claim, "table", [] { (void)LearnedPlan(LearnedSpec{}, LearnedTable{1, 2, {1, std::nan("")}}); }, "NaN");
  expect_error(claim, "table", [] { (void)LearnedPlan(LearnedSpec{}, LearnedTable{0, 2, {}}); }, "0 rows");
  const LearnedPlan plan(roberta, random_table(4, 2, 1));
  std::vector<double> out(3 * 2);
  expect_error(claim, "position id", [&] { plan.lookup({3, 0, tok, {}}, std::span<double>(out)); }, "id 4 of 4 rows");
  const std::vector<std::int64_t> neg{-1};
  expect_error(claim, "position id", [&] { plan.rows(neg, std::span<double>(out).first(2)); }, "id -1");
  expect_error(claim, "out", [&] { plan.rows(std::vector<std::int64_t>{0, 1}, std::span<double>(out)); }, "out 6 for 2 ids");
  expect_error(claim, "preset", [] { (void)learned_preset("xlm"); }, "unknown preset");
  expect_error(claim, "offset", [] { (void)position_ids(LearnedSpec{.id_map = IdMap::make_positions, .offset = 2}, {1, 0, std::vector<std::int64_t>{3}, {}}); }, "make_positions offset");
}

}  // namespace claims_learned

POSENC_SPEC_CONTRACT(posenc::LearnedSpec, Learned, "LEARNED")
