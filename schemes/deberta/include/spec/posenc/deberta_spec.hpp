// posenc/deberta_spec.hpp — the one description of DeBERTa's disentangled attention (He et al. 2021) as HF
// transformers' DeBERTa-v2/v3 and microsoft/DeBERTa implement it: log-bucketed relative positions i - j (query minus
// key), the c2p / p2c gather indices into the relative embeddings, and the disentangled scores c2c + c2p + p2c.
//
// A DebertaSpec is the structure (buckets, maximum position, which position terms, arithmetic, sizes); the relative
// embeddings projected for each head are trained weights and come with it as DebertaWeights (a plan, the oracle and
// the command line take both). The fast path (lib/), the MPFR oracle (reference/), the command-line tool and the
// reports consume these two structs and nothing else; each consumer transcribes the definition below itself.
//
// Definition (CONVENTIONS.md §2.8, §3 items 3 and 6):
//   Geometry (HF build_relative_position(query_layer, key_layer): q_ids = arange(query_size), k_ids =
//   arange(key_size)): query row i at position i (0 <= i < Lq), key j at position j (0 <= j < Lk); Lq and Lk are
//   independent (1 .. 2^30). NOTE: unlike the bias schemes (posenc/bias.hpp), the queries are the FIRST positions.
//   Relative position   rel(i, j) = i - j   (query minus key: the opposite sign of T5 / Shaw; §3 item 3).
//   Bucket b(rel) (make_log_bucket_position(rel, bucket_size = position_buckets, max_position =
//   max_relative_positions)); with position_buckets = none (HF position_buckets <= 0) b(rel) = rel. Otherwise, with
//   mid = position_buckets // 2, M = max_relative_positions - 1, N = mid - 1:
//     r = clamp ? clamp(rel, -M, M) : rel          (microsoft/DeBERTa 2023 clamps first; HF and the 2021 code do not)
//     b = r                                        if |r| <= mid   (HF: abs_pos = mid - 1 for |r| < mid, then
//                                                                   abs_pos <= mid selects r itself)
//     b = sign(r) (mid + ceil(v(|r|)))             otherwise, v(a) = ln(a / mid) / ln(M / mid) * N
//   so b is odd (b(-r) = -b(r)), the identity for |r| <= mid, non-decreasing, |b| <= position_buckets - 1 for |r| <=
//   M (v(M) = N) and, without the clamp, still growing past it (HF: |r| = 3000 gives 418 for (256, 512)).
//   Position index (c2p / p2c gathers; att_span = span = position_buckets, or max_relative_positions without
//   buckets: HF pos_ebd_size):
//     c(i, j) = clamp(b(rel(i, j)) + span, 0, 2 span - 1)       (HF: torch.clamp(relative_pos + att_span, 0,
//                                                               att_span * 2 - 1); p2c's -r_pos on the key-major
//                                                               matrix, transposed, is the same c since b is odd)
//   Relative embeddings of head h (projected: HF pos_key_layer = key_proj(rel_embeddings) or pos_key_proj without
//   share_att_key, pos_query_layer likewise; the caller projects them, share_att_key only decides which projection):
//     pos_key K_r[h] (c2p) and pos_query Q_r[h] (p2c): 2 span rows of head_dim values each.
//   Scores of head h (q_i, k_j vectors of head_dim):
//     e(i, j) = scale ( <q_i, k_j> + [c2p] <q_i, K_r[h][c(i, j)]> + [p2c] <k_j, Q_r[h][c(i, j)]> )
//     scale = 1 / sqrt(head_dim (1 + [c2p] + [p2c]))  (HF scale_factor = 1 + len(pos_att_type) terms present);
//     a key_mask (padding) adds -inf afterwards (HF XSoftmax's mask).
// Regimes (DebertaRegime): only v(a) differs.
//   exact  the real value; where v(a) is an integer t (a^N mid^t = M^t mid^N, e.g. a = M gives N), ceil(v) = t.
//   hf     HF's float32 torch steps, each correctly rounded (DESIGN.md §2):
//            x   = RN32(RN32(a) / RN32(mid))               abs_pos / mid (int64 tensor true-divided: float32)
//            l   = RN32(ln x)                              torch.log
//            den = RN32(ln(RN32(RN64(M / mid))))           torch.log(torch.tensor((max_position - 1) / mid)): a
//                                                          Python double made a float32 tensor, then its log
//            y   = RN32(l / den),  z = RN32(y * RN32(N))   then RN32(ceil(z) + mid) (a float32 add: torch.ceil(...) +
//                                                          mid), times sign, .to(torch.long)
//          A real torch log is not correctly rounded: where z lies within a few ulps of an integer a real run may
//          take the neighbouring bucket; `posenc check deberta` and the budget table state that envelope. (The
//          2021 numpy float64 code is not emulated; every value of CONVENTIONS.md's tests agrees with the exact one.)
// Indices are integer arithmetic after the bucket: every implementation and regime agrees on them where the bucket
// agrees. Scores are sums of products: their budget is relative to the sum of the magnitudes of the terms (DESIGN.md
// §3), there is no emulated regime for them (a gemm's summation order is the implementation's own).
// Not modelled: DeBERTa v1 (HF `deberta`: no buckets, att_span = min(max(Lq, Lk), max_relative_positions) depends on
// the lengths and the embeddings are sliced around the centre), the LayerNorm of the relative embeddings
// (norm_rel_ebd: part of computing the weights), and the projections themselves.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "posenc/describe.hpp"

namespace posenc {

enum class DebertaRegime { exact, hf };

template <>
struct EnumTraits<DebertaRegime> {
  static constexpr std::array<EnumValue<DebertaRegime>, 2> values{{
      {DebertaRegime::exact, "exact", "the bucket of the real log: mid + ceil(ln(a/mid) / ln((max-1)/mid) (mid - 1))"},
      {DebertaRegime::hf, "hf", "HF's float32 division, log and product, then ceil (what DeBERTa-v2/v3 run)"},
  }};
};

inline constexpr std::size_t kDebertaMaxBuckets = std::size_t{1} << 16;
inline constexpr std::size_t kDebertaMaxPosition = std::size_t{1} << 30;
// Largest span (rows of a relative table: 2 span) accepted without buckets.
inline constexpr std::size_t kDebertaMaxSpan = std::size_t{1} << 20;
inline constexpr std::size_t kDebertaMaxHeads = std::size_t{1} << 12;
inline constexpr std::size_t kDebertaMaxHeadDim = std::size_t{1} << 14;
// Largest |table entry| accepted (projected embeddings are O(1)); keeps every score finite in float32.
inline constexpr double kDebertaMaxWeight = 1e15;
// Largest query or key length of one call (|rel| < 2^30).
inline constexpr std::size_t kDebertaMaxLength = std::size_t{1} << 30;

// The projected relative embeddings of every head, [heads][2 span][head_dim] row-major each: pos_key (K_r, used by
// c2p; empty unless spec.c2p) and pos_query (Q_r, used by p2c; empty unless spec.p2c).
struct DebertaWeights {
  std::vector<double> pos_key;
  std::vector<double> pos_query;

  friend bool operator==(const DebertaWeights&, const DebertaWeights&) = default;
};

struct DebertaSpec {
  std::optional<std::size_t> position_buckets = 256;  // none: no log buckets (HF position_buckets <= 0)
  std::size_t max_relative_positions = 512;           // HF: max_relative_positions, or max_position_embeddings if < 1
  bool clamp = false;                                 // clamp |rel| to max_relative_positions - 1 first (2023)
  DebertaRegime regime = DebertaRegime::hf;
  bool c2p = true;                                    // pos_att_type contains "c2p"
  bool p2c = true;                                    // pos_att_type contains "p2c"
  std::size_t heads = 12;
  std::size_t head_dim = 64;
  using Weights = DebertaWeights;

  friend bool operator==(const DebertaSpec&, const DebertaSpec&) = default;
};

// att_span: position_buckets, or max_relative_positions without buckets (HF pos_ebd_size).
constexpr std::size_t deberta_span(const DebertaSpec& s) noexcept {
  return s.position_buckets ? *s.position_buckets : s.max_relative_positions;
}
// Rows of each relative table: 2 span.
constexpr std::size_t deberta_table_rows(const DebertaSpec& s) noexcept { return 2 * deberta_span(s); }
// 1 + [c2p] + [p2c]: the default scale is 1 / sqrt(head_dim * this).
constexpr std::size_t deberta_scale_factor(const DebertaSpec& s) noexcept {
  return 1 + (s.c2p ? 1 : 0) + (s.p2c ? 1 : 0);
}

template <>
struct SpecTraits<DebertaSpec> {
  using S = DebertaSpec;
  static constexpr std::string_view scheme = "deberta";
  static constexpr std::string_view summary =
      "DeBERTa-v2/v3 disentangled attention (He et al. 2021): log-bucketed relative positions i - j (query minus "
      "key), c2p / p2c gathers into per-head relative embeddings, scores c2c + c2p + p2c";

  static constexpr Range<std::int64_t> position_range(const S&) {
    return {0, (std::int64_t{1} << 30) - 1, false, false, 1, "query and key positions 0 <= p < 2^30"};
  }

  static constexpr auto fields = std::make_tuple(
      field("position_buckets", "--position-buckets", &S::position_buckets,
            "bucket_size of make_log_bucket_position and the span of the relative tables; none: no log buckets "
            "(HF position_buckets <= 0)",
            "CONVENTIONS.md §2.8 (deberta-v3-base: 256)",
            +[](const S&) {
              return Range<std::size_t>{2, kDebertaMaxBuckets, false, false, 1,
                                        ">= 2 (mid = position_buckets // 2 >= 1 divides)"};
            },
            +[](const S&) { return Range<std::size_t>{2, 512}; }),
      field("max_relative_positions", "--max-relative-positions", &S::max_relative_positions,
            "max_position of the log buckets (relative positions up to max - 1 reach bucket position_buckets - 1); "
            "without buckets the span of the relative tables",
            "CONVENTIONS.md §2.8 (max_relative_positions -1 -> max_position_embeddings 512)",
            +[](const S& s) {
              return s.position_buckets
                         ? Range<std::size_t>{*s.position_buckets / 2 + 2, kDebertaMaxPosition, false, false, 1,
                                              ">= position_buckets // 2 + 2 (ln((max - 1) / mid) > 0 divides)"}
                         : Range<std::size_t>{1, kDebertaMaxSpan, false, false, 1,
                                              "without buckets the span: tables of 2 max_relative_positions rows"};
            },
            +[](const S& s) {
              return s.position_buckets ? Range<std::size_t>{*s.position_buckets / 2 + 2, *s.position_buckets * 4 + 2}
                                        : Range<std::size_t>{1, 600};
            }),
      field("clamp", "--clamp", &S::clamp,
            "clamp rel to [-(max - 1), max - 1] before bucketing (microsoft/DeBERTa 2023); HF and the 2021 code do not",
            "CONVENTIONS.md §2.8, §3 item 6",
            +[](const S& s) {
              return s.position_buckets ? BoolChoice{}
                                        : BoolChoice{true, false, "the clamp is the log-bucket function's: needs "
                                                                  "position_buckets"};
            }),
      field("regime", "--regime", &S::regime, "exact (the real log) or HF's float32 steps",
            "CONVENTIONS.md §2.8, §3 item 6; DESIGN.md §2 (emulation: each float32 step correctly rounded)"),
      field("c2p", "--c2p", &S::c2p, "content-to-position term <q_i, K_r[c(i, j)]> (pos_att_type c2p)",
            "CONVENTIONS.md §2.8 (pos_att_type [p2c, c2p])"),
      field("p2c", "--p2c", &S::p2c, "position-to-content term <k_j, Q_r[c(i, j)]> (pos_att_type p2c)",
            "CONVENTIONS.md §2.8 (pos_att_type [p2c, c2p])"),
      field("heads", "--heads", &S::heads, "attention heads (each has its own projected relative tables)",
            "CONVENTIONS.md §2.8 (deberta-v3-base: 12)",
            +[](const S&) { return Range<std::size_t>{1, kDebertaMaxHeads}; },
            +[](const S&) { return Range<std::size_t>{1, 4}; }),
      field("head_dim", "--head-dim", &S::head_dim, "columns of the relative tables and length of q, k",
            "CONVENTIONS.md §2.8 (deberta-v3-base: 768 / 12 = 64)",
            +[](const S&) { return Range<std::size_t>{1, kDebertaMaxHeadDim}; },
            +[](const S&) { return Range<std::size_t>{1, 96}; }));

  static std::span<const Preset<S>> presets();
};

// SpecTraits<DebertaSpec>::presets(): deberta-v3-base, deberta-v2-xlarge (data in deberta_spec.cpp, with the commit
// read); the 2023 original is deberta-v3-base with clamp = true.

// Throws Error naming "pos_key" or "pos_query" unless each used table has heads * 2 span * head_dim finite entries
// with |v| <= kDebertaMaxWeight, and an unused one is empty (validate(spec) first).
void check_deberta_weights(const DebertaSpec&, const DebertaWeights&);

// Throws Error naming "query_length" or "key_length" unless each is in [1, 2^30].
void check_deberta_lengths(std::size_t query_length, std::size_t key_length);

}  // namespace posenc
