#include "schemes/learned/check.hpp"

#include <cmath>
#include <string>

#include "schemes/learned/budget.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/learned.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::verify::learned {
namespace {

namespace rf = posenc::reference;
const std::string kWhere = "learned check";

}  // namespace

CheckReport check_ids(const LearnedSpec& spec, const IdsInput& in) {
  validate(spec);
  const std::size_t B = in.batch, L = in.length;
  if (B < 1 || L < 1 || in.ids.size() != B * L)
    throw Error(kWhere, "ids", std::to_string(in.ids.size()) + " ids",
                "batch * length = " + std::to_string(B) + " * " + std::to_string(L) + " ids (batch, length >= 1)");
  const std::size_t per_mask = static_cast<std::size_t>(std::max<std::int64_t>(in.past, 0)) + L;
  if (!in.tokens.empty() && in.tokens.size() != B * L)
    throw Error(kWhere, "tokens", std::to_string(in.tokens.size()) + " token ids",
                "empty or batch * length = " + std::to_string(B * L) + " token ids");
  if (!in.attention_mask.empty() && in.attention_mask.size() != B * per_mask)
    throw Error(kWhere, "attention_mask", std::to_string(in.attention_mask.size()) + " entries",
                "empty or batch * (past + length) = " + std::to_string(B * per_mask) + " entries");

  CheckReport rep;
  rep.scheme = "learned";
  rep.spec = to_json(spec);
  rep.input = in.describe;
  rep.input["batch"] = B;
  rep.input["length"] = L;
  rep.input["past"] = in.past;
  rep.references.emplace_back("the spec's id map", budget(LearnedRow::check_ids), DType::f64, B);
  for (std::size_t b = 0; b < B; ++b) {
    const std::span<const std::int64_t> tok =
        in.tokens.empty() ? std::span<const std::int64_t>() : std::span<const std::int64_t>(in.tokens).subspan(b * L, L);
    const std::span<const std::uint8_t> mask =
        in.attention_mask.empty() ? std::span<const std::uint8_t>()
                                  : std::span<const std::uint8_t>(in.attention_mask).subspan(b * per_mask, per_mask);
    const std::vector<std::int64_t> want = rf::learned_position_ids(spec, L, in.past, tok, mask);
    for (std::size_t t = 0; t < L; ++t)
      rep.references[0].add(static_cast<std::int64_t>(t), b, in.ids[b * L + t],
                            rf::make_real(static_cast<double>(want[t]), 64));
  }
  rep.held_to = 0;
  rep.note = "Position ids are integers: every id must equal the one the spec's map gives for the same tokens / "
             "attention mask and past length. A RoBERTa port that counts from 0, an OPT port without the offset 2 "
             "or one that ignores left padding differs at every token.";
  return rep;
}

}  // namespace posenc::verify::learned
