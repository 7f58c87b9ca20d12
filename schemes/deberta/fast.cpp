// DeBERTa disentangled attention fast path: log buckets per distance (exact: double, binary128, then GMP near
// integers; hf: the float32 steps), Toeplitz index rows, and scores as tiled gathers of two small gemms followed by a
// beta = 1 Q K^T gemm. Definition: posenc/deberta_spec.hpp; algorithms and their error: posenc/deberta.hpp,
// schemes/deberta/budget.cpp.
#include "posenc/deberta.hpp"

#include <gmp.h>
#include "core/binary128.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/angle_table.hpp"  // AlignedBuffer
#include "core/blas.hpp"
#include "core/parallel.hpp"
#include "core/rn32.hpp"
#include "core/streaming.hpp"
#include "posenc/blas.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "deberta";
constexpr std::int64_t kMaxRel = (std::int64_t{1} << 31) - 1;
// Rows per work item of the index and gather loops, and keys per tile of the gather.
constexpr std::size_t kRowBlock = 64;
constexpr std::size_t kKeyTile = 256;
// Runs of keys sharing one index at least this long read a contiguous copy of G's column.
constexpr std::size_t kLongRun = 64;

// a^N mid^t <= M^t mid^N in exact integers (v(a) <= t).
bool at_most_exact(std::int64_t a, std::int64_t mid, std::int64_t M, unsigned long N, unsigned long t) {
  mpz_t l, r, x;
  mpz_inits(l, r, x, nullptr);
  mpz_ui_pow_ui(l, static_cast<unsigned long>(a), N);
  mpz_ui_pow_ui(x, static_cast<unsigned long>(mid), t);
  mpz_mul(l, l, x);
  mpz_ui_pow_ui(r, static_cast<unsigned long>(M), t);
  mpz_ui_pow_ui(x, static_cast<unsigned long>(mid), N);
  mpz_mul(r, r, x);
  const bool le = mpz_cmp(l, r) <= 0;
  mpz_clears(l, r, x, nullptr);
  return le;
}

// ceil(v(a)), v(a) = ln(a / mid) / ln(M / mid) N, for a > mid (deberta_spec.hpp, exact regime).
std::int64_t ceil_exact(std::int64_t a, std::int64_t mid, std::int64_t M, std::int64_t N, double ln_ratio) {
  if (N == 0) return 0;
  // double: each log within 1 ulp, the quotient and product rounded: |vd - v| < 2^-49 v
  const double vd = std::log(static_cast<double>(a) / static_cast<double>(mid)) / ln_ratio * static_cast<double>(N);
  if (std::fabs(vd - std::round(vd)) > 0x1p-30 * std::max(1.0, vd)) return static_cast<std::int64_t>(std::ceil(vd));
  const quad v = logq(static_cast<quad>(a) / mid) / logq(static_cast<quad>(M) / mid) * N;
  const quad t = roundq(v);
  const quad tol = static_cast<quad>(0x1p-80) * (v > 1 ? v : static_cast<quad>(1));
  if (fabsq(v - t) > tol) return static_cast<std::int64_t>(ceilq(v));
  const auto ti = static_cast<std::int64_t>(t);
  // the integers a^N mid^t and M^t mid^N have about N log2(a) + t log2(M) bits: beyond 2^24 binary128 decides
  if (static_cast<double>(N) * 31 + static_cast<double>(ti) * 31 > 0x1p24) return static_cast<std::int64_t>(ceilq(v));
  return at_most_exact(a, mid, M, static_cast<unsigned long>(N), static_cast<unsigned long>(ti)) ? ti : ti + 1;
}

}  // namespace

struct DebertaPlan::Impl {
  DebertaSpec spec;
  DebertaWeights weights;
  std::vector<float> key32, query32;  // the tables rounded once to float32 (the f32 entry points' tables)
  bool buckets = false;
  std::int64_t mid = 0, M = 0, N = 0, span = 0;
  double ln_ratio = 0;               // ln(M / mid) in double (exact regime's first estimate)
  float mid32 = 0, N32 = 0, den32 = 0;  // hf regime: RN32(mid), RN32(N), RN32(ln(RN32(RN64(M / mid))))

  Impl(const DebertaSpec& s, const DebertaWeights& w) : spec(s), weights(w) {
    key32.assign(w.pos_key.begin(), w.pos_key.end());
    query32.assign(w.pos_query.begin(), w.pos_query.end());
    span = static_cast<std::int64_t>(deberta_span(s));
    buckets = s.position_buckets.has_value();
    if (buckets) {
      mid = static_cast<std::int64_t>(*s.position_buckets / 2);
      M = static_cast<std::int64_t>(s.max_relative_positions) - 1;
      N = mid - 1;
      ln_ratio = std::log(static_cast<double>(M) / static_cast<double>(mid));
      mid32 = static_cast<float>(mid);
      N32 = static_cast<float>(N);
      den32 = core::rn32_log(static_cast<float>(static_cast<double>(M) / static_cast<double>(mid)));
    }
  }
  template <class T>
  const T* pos_key() const {
    if constexpr (std::is_same_v<T, float>) return key32.data(); else return weights.pos_key.data();
  }
  template <class T>
  const T* pos_query() const {
    if constexpr (std::is_same_v<T, float>) return query32.data(); else return weights.pos_query.data();
  }

  // mid + ceil(v(a)) of the regime, for a > mid.
  std::int64_t level(std::int64_t a) const {
    if (spec.regime == DebertaRegime::exact) return mid + ceil_exact(a, mid, M, N, ln_ratio);
    const float x = static_cast<float>(a) / mid32;  // abs_pos / mid: float32 true division
    const float l = core::rn32_log(x);
    const float y = l / den32;
    const float z = y * N32;
    const float lp = std::ceil(z) + mid32;  // torch.ceil(...) + mid, a float32 add
    return static_cast<std::int64_t>(lp);
  }
  // b(rel), |rel| <= 2^31 - 1.
  std::int64_t bucket(std::int64_t rel) const {
    if (!buckets) return rel;
    const std::int64_t r = spec.clamp ? std::clamp(rel, -M, M) : rel;
    const std::int64_t a = r < 0 ? -r : r;
    if (a <= mid) return r;
    const std::int64_t lev = level(a);
    return r < 0 ? -lev : lev;
  }
  std::int64_t position_index(std::int64_t b) const { return std::clamp(b + span, std::int64_t{0}, 2 * span - 1); }

  // b(rel) for rel = Lq - 1 - t, t in [0, Lq + Lk - 1): each distance |rel| evaluated once.
  std::vector<std::int64_t> toeplitz_buckets(std::size_t Lq, std::size_t Lk) const {
    const std::size_t ext = Lq + Lk - 1, amax = std::max(Lq, Lk) - 1;
    std::vector<std::int64_t> pos(amax + 1), neg(amax + 1);  // b(a), b(-a)
    for (std::size_t a = 0; a <= amax; ++a) {
      pos[a] = bucket(static_cast<std::int64_t>(a));
      neg[a] = -pos[a];  // b is odd (the clamp is symmetric; hf multiplies a level by the sign)
    }
    std::vector<std::int64_t> F(ext);
    for (std::size_t t = 0; t < ext; ++t) {
      const std::int64_t rel = static_cast<std::int64_t>(Lq) - 1 - static_cast<std::int64_t>(t);
      F[t] = rel >= 0 ? pos[static_cast<std::size_t>(rel)] : neg[static_cast<std::size_t>(-rel)];
    }
    return F;
  }
};

namespace {

std::size_t checked_cells(std::size_t Lq, std::size_t Lk, std::size_t heads) {
  check_deberta_lengths(Lq, Lk);
  std::size_t n = 0;
  if (__builtin_mul_overflow(Lq, Lk, &n) || __builtin_mul_overflow(n, heads, &n))
    throw Error(kWhere, "query_length", std::to_string(Lq), "a geometry whose heads * query_length * key_length fits in size_t");
  return n;
}

// Writes the Toeplitz matrix [Lq][Lk] whose row i is F[Lq - 1 - i .. + Lk) (F over t, rel = Lq - 1 - t).
void write_toeplitz(std::size_t Lq, std::size_t Lk, const std::vector<std::int32_t>& F, std::span<std::int32_t> out,
                    const TableOptions& o) {
  const std::size_t total = Lq * Lk;
  const std::size_t blocks = (Lq + kRowBlock - 1) / kRowBlock;
  const int threads = std::min<int>(core::thread_count(o, total), static_cast<int>(std::min<std::size_t>(blocks, 1 << 20)));
  const bool stream = o.streaming_stores && core::worth_streaming(total * sizeof(std::int32_t));
  core::parallel_for(blocks, threads, [&](int, std::size_t b) {
    const std::size_t i0 = b * kRowBlock, i1 = std::min(Lq, i0 + kRowBlock);
    for (std::size_t i = i0; i < i1; ++i) core::store_row(out.data() + i * Lk, F.data() + (Lq - 1 - i), Lk, stream);
  });
  if (stream) core::store_fence();
}

void check_out(std::span<std::int32_t> out, std::size_t total) {
  if (out.size() != total)
    throw Error(kWhere, "out", std::to_string(out.size()) + " elements",
                "exactly query_length * key_length = " + std::to_string(total) + " elements");
}

double resolve_scale(const DebertaSpec& s, std::optional<double> scale) {
  const double v = scale ? *scale
                         : 1.0 / std::sqrt(static_cast<double>(s.head_dim) * static_cast<double>(deberta_scale_factor(s)));
  if (!std::isfinite(v))
    throw Error(kWhere, "scale", format_real(v), "a finite real (default 1/sqrt(head_dim (1 + c2p + p2c)))");
  return v;
}

void check_scores_args(const DebertaSpec& s, std::size_t q_size, std::size_t k_size, std::size_t out_size,
                       std::size_t Lq, std::size_t Lk, std::span<const std::uint8_t> key_mask, std::size_t total) {
  const std::size_t H = s.heads, d = s.head_dim;
  auto need = [&](const char* what, std::size_t have, std::size_t rows, const char* shape) {
    std::size_t n = 0;
    if (__builtin_mul_overflow(H, rows, &n) || __builtin_mul_overflow(n, d, &n) || have != n)
      throw Error(kWhere, what, std::to_string(have) + " elements",
                  std::string("exactly ") + shape + " = " + std::to_string(n) + " elements");
  };
  need("q", q_size, Lq, "heads * query_length * head_dim");
  need("k", k_size, Lk, "heads * key_length * head_dim");
  if (out_size != total)
    throw Error(kWhere, "scores", std::to_string(out_size) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  if (key_mask.empty()) return;
  if (key_mask.size() != Lk)
    throw Error(kWhere, "key_mask", std::to_string(key_mask.size()) + " entries",
                "empty or exactly key_length = " + std::to_string(Lk) + " entries");
  for (std::size_t j = 0; j < Lk; ++j)
    if (key_mask[j] > 1)
      throw Error(kWhere, "key_mask", "entry " + std::to_string(j) + " = " + std::to_string(key_mask[j]),
                  "0 (padding) or 1 (token)");
}

// The gather index c over t (rel = Lq - 1 - t), non-increasing in t, so the used table rows are [cmin, cmin + R).
// Long runs of one index c over t (keys far from the query: the c2p clamp to 0 or 2 span - 1 past the largest
// bucket, and wide log buckets): there G's column c is read for consecutive keys, so it is copied out once per head
// into a contiguous vector and the run becomes a vector add. long_of[t]: the run holding t, or -1; next_long[t]: the
// first t' >= t inside a long run (or C.size()).
struct IndexRuns {
  struct LongRun {
    std::size_t end;  // one past its last t
    std::size_t col;  // c - cmin
  };
  std::vector<std::int32_t> C;
  std::int32_t cmin = 0;
  std::size_t R = 0;
  std::vector<LongRun> long_runs;
  std::vector<std::int32_t> long_of;
  std::vector<std::size_t> next_long;

  IndexRuns(const DebertaPlan::Impl& P, std::size_t Lq, std::size_t Lk) {
    const std::vector<std::int64_t> B = P.toeplitz_buckets(Lq, Lk);
    C.resize(B.size());
    for (std::size_t t = 0; t < B.size(); ++t) C[t] = static_cast<std::int32_t>(P.position_index(B[t]));
    cmin = C.back();
    R = static_cast<std::size_t>(C.front() - cmin) + 1;
    long_of.assign(C.size(), -1);
    for (std::size_t t = 0; t < C.size();) {
      std::size_t e = t + 1;
      while (e < C.size() && C[e] == C[t]) ++e;
      if (e - t >= kLongRun) {
        for (std::size_t x = t; x < e; ++x) long_of[x] = static_cast<std::int32_t>(long_runs.size());
        long_runs.push_back({e, static_cast<std::size_t>(C[t] - cmin)});
      }
      t = e;
    }
    next_long.assign(C.size() + 1, C.size());
    for (std::size_t t = C.size(); t-- > 0;) next_long[t] = long_of[t] >= 0 ? t : next_long[t + 1];
  }
};

// Keys [j0, j1) of query row i: c2p + p2c terms (before the content term is added by the sgemm). Pm: the row's c2p
// terms over the used table rows; G [Lk][R]: the p2c terms; cols: the long runs' column copies.
template <class T>
void relative_row(const IndexRuns& ix, std::size_t Lq, std::size_t Lk, std::size_t i, std::size_t j0, std::size_t j1,
                  bool c2p, bool p2c, const T* Pm, const T* G, const T* cols, T* O) {
  const std::size_t base = Lq - 1 - i;  // key j is at t = base + j
  const std::int32_t* c = ix.C.data() + base;
  const T* p = Pm + i * ix.R;
  T* o_row = O + i * Lk;
  for (std::size_t j = j0; j < j1;) {
    if (const std::int32_t lr = ix.long_of[base + j]; lr >= 0) {
      const IndexRuns::LongRun& run = ix.long_runs[static_cast<std::size_t>(lr)];
      const std::size_t e = std::min(j1, run.end - base);
      const T* g = cols + static_cast<std::size_t>(lr) * Lk;
      const T pc = c2p ? p[run.col] : T(0);
      if (c2p && p2c) for (std::size_t x = j; x < e; ++x) o_row[x] = pc + g[x];
      else if (c2p) std::fill(o_row + j, o_row + e, pc);
      else if (p2c) std::copy(g + j, g + e, o_row + j);
      else std::fill(o_row + j, o_row + e, T(0));
      j = e;
      continue;
    }
    const std::size_t e = std::min(j1, ix.next_long[base + j] - base);
    if (c2p && p2c) {
      for (std::size_t x = j; x < e; ++x) {
        const auto cc = static_cast<std::size_t>(c[x] - ix.cmin);
        o_row[x] = p[cc] + G[x * ix.R + cc];
      }
    } else if (c2p) {
      for (std::size_t x = j; x < e; ++x) o_row[x] = p[static_cast<std::size_t>(c[x] - ix.cmin)];
    } else if (p2c) {
      for (std::size_t x = j; x < e; ++x) o_row[x] = G[x * ix.R + static_cast<std::size_t>(c[x] - ix.cmin)];
    } else {
      std::fill(o_row + j, o_row + e, T(0));
    }
    j = e;
  }
}

template <class T>
void mask_keys(T* O, std::size_t Lq, std::size_t Lk, std::span<const std::uint8_t> key_mask, std::size_t blocks,
               int threads) {
  const T ninf = -std::numeric_limits<T>::infinity();
  core::parallel_for(blocks, threads, [&](int, std::size_t blk) {
    const std::size_t i0 = blk * kRowBlock, i1 = std::min(Lq, i0 + kRowBlock);
    for (std::size_t i = i0; i < i1; ++i)
      for (std::size_t j = 0; j < Lk; ++j)
        if (key_mask[j] == 0) O[i * Lk + j] = ninf;
  });
}

template <class T>
void scores_impl(const DebertaPlan::Impl& P, std::span<const T> q, std::span<const T> k, std::size_t Lq,
                 std::size_t Lk, std::span<const std::uint8_t> key_mask, std::optional<double> scale_opt,
                 std::span<T> out, const TableOptions& o) {
  const DebertaSpec& s = P.spec;
  const std::size_t H = s.heads, d = s.head_dim;
  const std::size_t total = checked_cells(Lq, Lk, H);
  const double scale = resolve_scale(s, scale_opt);
  check_scores_args(s, q.size(), k.size(), out.size(), Lq, Lk, key_mask, total);
  const std::string where = std::string(kWhere) + " scores";
  const blasint m = core::to_blasint(Lq, where.c_str(), "query_length");
  const blasint n = core::to_blasint(Lk, where.c_str(), "key_length");
  const blasint dd = core::to_blasint(d, where.c_str(), "head_dim");
  prepare_blas();

  const IndexRuns ix(P, Lq, Lk);
  const std::size_t R = ix.R;
  const auto rows = static_cast<std::size_t>(2 * P.span);
  const bool c2p = s.c2p, p2c = s.p2c;
  core::AlignedBuffer<T> pbuf(c2p ? Lq * R : 0), gbuf(p2c ? Lk * R : 0), cols(p2c ? ix.long_runs.size() * Lk : 0);
  const std::size_t blocks = (Lq + kRowBlock - 1) / kRowBlock;
  const int threads = std::min<int>(core::thread_count(o, total), static_cast<int>(std::min<std::size_t>(blocks, 1 << 20)));

  for (std::size_t h = 0; h < H; ++h) {
    const T* Q = q.data() + h * Lq * d;
    const T* K = k.data() + h * Lk * d;
    T* O = out.data() + h * Lq * Lk;
    const std::size_t first = (h * rows + static_cast<std::size_t>(ix.cmin)) * d;
    if (c2p)
      core::gemm_nt_ld(m, static_cast<blasint>(R), dd, scale, Q, dd, P.pos_key<T>() + first, dd, 0.0, pbuf.get(),
                       static_cast<blasint>(R));
    if (p2c)
      core::gemm_nt_ld(n, static_cast<blasint>(R), dd, scale, K, dd, P.pos_query<T>() + first, dd, 0.0, gbuf.get(),
                       static_cast<blasint>(R));
    if (p2c)
      for (std::size_t r = 0; r < ix.long_runs.size(); ++r)
        for (std::size_t j = 0; j < Lk; ++j) cols.get()[r * Lk + j] = gbuf.get()[j * R + ix.long_runs[r].col];
    // Relative rows in tiles of kRowBlock queries x kKeyTile keys: the rows of G one tile reads near the query
    // (kKeyTile rows, at most kRowBlock + kKeyTile columns each) stay in cache; long runs read their column copy.
    core::parallel_for(blocks, threads, [&](int, std::size_t blk) {
      const std::size_t i0 = blk * kRowBlock, i1 = std::min(Lq, i0 + kRowBlock);
      for (std::size_t j0 = 0; j0 < Lk; j0 += kKeyTile)
        for (std::size_t i = i0; i < i1; ++i)
          relative_row(ix, Lq, Lk, i, j0, std::min(Lk, j0 + kKeyTile), c2p, p2c, pbuf.get(), gbuf.get(), cols.get(), O);
    });
    core::gemm_nt_accumulate(m, n, dd, scale, Q, K, O, n);
    if (!key_mask.empty()) mask_keys(O, Lq, Lk, key_mask, blocks, threads);
  }
}

}  // namespace

DebertaPlan::DebertaPlan(const DebertaSpec& spec, const DebertaWeights& weights) {
  validate(spec);
  check_deberta_weights(spec, weights);
  impl_ = std::make_shared<const Impl>(spec, weights);
}
const DebertaSpec& DebertaPlan::spec() const noexcept { return impl_->spec; }
const DebertaWeights& DebertaPlan::weights() const noexcept { return impl_->weights; }

std::int64_t DebertaPlan::bucket(std::int64_t rel) const {
  if (rel < -kMaxRel || rel > kMaxRel)
    throw Error(kWhere, "rel", std::to_string(rel), "a relative position i - j with |rel| <= 2^31 - 1");
  return impl_->bucket(rel);
}

std::int32_t DebertaPlan::position_index(std::int64_t rel) const {
  return static_cast<std::int32_t>(impl_->position_index(bucket(rel)));
}

void DebertaPlan::relative_positions(std::size_t Lq, std::size_t Lk, std::span<std::int32_t> out,
                                     const TableOptions& o) const {
  const std::size_t total = checked_cells(Lq, Lk, 1);
  check_out(out, total);
  const std::vector<std::int64_t> B = impl_->toeplitz_buckets(Lq, Lk);
  // b is monotone in rel: its extremes are at the ends
  constexpr std::int64_t kMax32 = std::numeric_limits<std::int32_t>::max();
  if (B.front() > kMax32)
    throw Error(kWhere, "query_length", std::to_string(Lq),
                "a length whose largest bucket fits in int32 (b(query_length - 1) = " + std::to_string(B.front()) + ")");
  if (B.back() < -kMax32)
    throw Error(kWhere, "key_length", std::to_string(Lk),
                "a length whose smallest bucket fits in int32 (b(1 - key_length) = " + std::to_string(B.back()) + ")");
  std::vector<std::int32_t> F(B.begin(), B.end());
  write_toeplitz(Lq, Lk, F, out, o);
}

void DebertaPlan::position_indices(std::size_t Lq, std::size_t Lk, std::span<std::int32_t> out,
                                   const TableOptions& o) const {
  const std::size_t total = checked_cells(Lq, Lk, 1);
  check_out(out, total);
  const std::vector<std::int64_t> B = impl_->toeplitz_buckets(Lq, Lk);
  std::vector<std::int32_t> F(B.size());
  for (std::size_t t = 0; t < B.size(); ++t) F[t] = static_cast<std::int32_t>(impl_->position_index(B[t]));
  write_toeplitz(Lq, Lk, F, out, o);
}

void DebertaPlan::p2c_indices(std::size_t Lk, std::span<std::int32_t> out, const TableOptions& o) const {
  const std::size_t total = checked_cells(Lk, Lk, 1);
  check_out(out, total);
  // r_pos[a][b] = b(a - b) (Toeplitz over rel = Lk - 1 - t); HF negates it before adding span and clamping.
  const std::vector<std::int64_t> B = impl_->toeplitz_buckets(Lk, Lk);
  std::vector<std::int32_t> F(B.size());
  for (std::size_t t = 0; t < B.size(); ++t) F[t] = static_cast<std::int32_t>(impl_->position_index(-B[t]));
  write_toeplitz(Lk, Lk, F, out, o);
}

void DebertaPlan::scores(std::span<const float> q, std::span<const float> k, std::size_t query_length,
                         std::size_t key_length, std::span<const std::uint8_t> key_mask, std::optional<double> scale,
                         std::span<float> out, const TableOptions& o) const {
  scores_impl(*impl_, q, k, query_length, key_length, key_mask, scale, out, o);
}
void DebertaPlan::scores(std::span<const double> q, std::span<const double> k, std::size_t query_length,
                         std::size_t key_length, std::span<const std::uint8_t> key_mask, std::optional<double> scale,
                         std::span<double> out, const TableOptions& o) const {
  scores_impl(*impl_, q, k, query_length, key_length, key_mask, scale, out, o);
}

std::size_t deberta_scores_size(const DebertaSpec& s, std::size_t query_length, std::size_t key_length) {
  validate(s);
  return checked_cells(query_length, key_length, s.heads);
}

std::int64_t deberta_bucket(const DebertaSpec& s, std::int64_t rel) {
  validate(s);
  if (rel < -kMaxRel || rel > kMaxRel)
    throw Error(kWhere, "rel", std::to_string(rel), "a relative position i - j with |rel| <= 2^31 - 1");
  return DebertaPlan::Impl(s, DebertaWeights{}).bucket(rel);  // the bucket needs no tables
}

}  // namespace posenc
