// The learned part of the accuracy sweep (support/sweep.hpp): every preset's ids for padded sequences (no padding,
// left, right, holes) at lengths up to 4096 (--smoke: 64) and past lengths 0, 1, 511, against the oracle, and
// the rows of a 514 x 64 table at those ids, through the same rows as the properties (nothing here is
// approximate: the rows are bitwise; the sweep records that every case was exact).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "schemes/learned/measure.hpp"
#include "posenc/learned.hpp"
#include "support/sweep.hpp"

namespace sweep_learned {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace learned = posenc::test::learned;  // the measuring harness (the checker is verify::learned)


POSENC_SWEEP(learned) {
  const bool smoke = ctx.mode == SweepMode::smoke;
  const std::vector<std::size_t> lengths = smoke ? std::vector<std::size_t>{1, 7, 64} : std::vector<std::size_t>{1, 7, 512, 4096};
  LearnedTable table{514, 64, std::vector<double>(514 * 64)};
  for (std::size_t i = 0; i < table.values.size(); ++i) table.values[i] = static_cast<float>((i * 7919 % 2003) / 1001.5 - 1.0);
  for (const auto& info : SpecTraits<LearnedSpec>::presets()) {
    const LearnedSpec s = learned_preset(info.name);
    for (std::size_t L : lengths)
      for (std::int64_t past : {0, 1, 511})
        for (int kind = 0; kind < 4; ++kind) {
          const std::size_t n = (s.id_map == IdMap::cumsum_mask ? static_cast<std::size_t>(past) : 0) + L;
          std::vector<std::uint8_t> m(n, 1);
          for (std::size_t u = 0; u < n; ++u) {
            if (kind == 1) m[u] = u < n / 3 ? 0 : 1;          // left padding
            if (kind == 2) m[u] = u + n / 3 >= n ? 0 : 1;     // right padding
            if (kind == 3) m[u] = (u * 2654435761u >> 7) % 3 ? 1 : 0;  // holes
          }
          std::vector<std::int64_t> tokens(L);
          for (std::size_t t = 0; t < L; ++t) tokens[t] = m[n - L + t] ? 1000 + static_cast<std::int64_t>(t) : s.padding_idx;
          const LearnedInput in{L, past, tokens, s.id_map == IdMap::cumsum_mask ? std::span<const std::uint8_t>(m)
                                                                                 : std::span<const std::uint8_t>()};
          learned::measure_ids(s, in, ctx.aggregate);
          std::vector<std::int64_t> ids = position_ids(s, in);
          ids.erase(std::remove_if(ids.begin(), ids.end(), [&](std::int64_t id) { return id >= 514; }), ids.end());
          if (!ids.empty() && L <= 512) learned::measure_rows(s, table, ids, ctx.aggregate);
        }
    std::fprintf(stderr, "%-8s ids and rows  (%.0f s)\n", std::string(info.name).c_str(), ctx.elapsed_seconds());
  }
}

}  // namespace sweep_learned
