#include "table_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "parallel.hpp"
#include "streaming.hpp"

// The vector kernels are compiled for every target and chosen at run time (table_kernels.cpp, posenc/simd.hpp);
// fused_scalar performs the same IEEE operations, so which one runs never changes a value.
#include "table_kernels.hpp"

namespace posenc::core {
namespace {

// Pairs per column chunk: the J slice of a block (64 rows x 128 pairs x 16 bytes = 128 KiB, contiguous) stays in
// L2 and a chunk's staged values (<= 6 x 128 values) in L1.
constexpr std::size_t kChunkPairs = AngleTable::kChunk;
// Positions per work item when the rows come from a list.
constexpr std::size_t kListChunk = 64;

constexpr std::size_t part_index(Part p) { return static_cast<std::size_t>(p); }
constexpr std::size_t values_per_pair(Part p) { return p == Part::sin || p == Part::cos ? 1 : 2; }

// The fused pass over n pairs: s = s_a c_j + c_a s_j, c = c_a c_j - s_a s_j (one fma, one product each, as
// AngleTable::rotate), rounded once to T, stored to every destination. For T = double the values are clamped
// to [-1, 1] like AngleTable::rotate; for T = float the clamp is skipped because it cannot change the result:
// the product overshoots 1 by at most ~3.5 * 2^-53 < 2^-25, which rounds to 1 in float anyway. With a scale
// (RowForm::scale) every value is clamped, then multiplied by it (one more rounding in double), then rounded.
template <class T>
void fused_scalar(const Tile<T>& t) noexcept {
  for (std::size_t row = 0; row < t.rows; ++row)
  for (std::size_t g = 0; g < t.groups; ++g) {
    const double* sj = t.j + row * 2 * AngleTable::kChunk;
    const double* cj = sj + AngleTable::kChunk;
    const double *sa = t.sa + g * t.anchor_stride, *ca = t.ca + g * t.anchor_stride;
    const std::ptrdiff_t out_row = static_cast<std::ptrdiff_t>(row) + static_cast<std::ptrdiff_t>(g) * t.group_rows;
    for (std::size_t k = 0; k < t.n; ++k) {
      double s = std::fma(sa[k], cj[k], ca[k] * sj[k]);
      double c = std::fma(ca[k], cj[k], -(sa[k] * sj[k]));
      if (sizeof(T) == 8 || t.scale != 1.0) {  // scaled: the clamp can change m times the value in float too
        s = std::clamp(s, -1.0, 1.0) * t.scale;
        c = std::clamp(c, -1.0, 1.0) * t.scale;
      }
      if (t.negate_sin) s = -s;
      const T st = static_cast<T>(s), ct = static_cast<T>(c);
      for (std::size_t i = 0; i < t.nd; ++i) {
        T* p = t.dest[i].p + out_row * t.dest[i].stride;
        switch (t.dest[i].part) {
          case Part::sin: p[k] = st; break;
          case Part::cos: p[k] = ct; break;
          case Part::sin_cos: p[2 * k] = st, p[2 * k + 1] = ct; break;
          case Part::cos_sin: p[2 * k] = ct, p[2 * k + 1] = st; break;
        }
      }
    }
  }
}

// The fused pass: the vector kernel of posenc's target (table_kernels.cpp), or fused_scalar on a scalar target.
template <class T>
void fused(const Tile<T>& t) noexcept {
  if (!kernels::fused(t, false)) fused_scalar(t);
}

// Anchor blocks per work item of a range (at most). A block's row j is anchor (x) J_j: the anchor's values are used
// by every row of the block, J_j by the same row of every block. Writing the blocks of a group together, row j of
// each before row j + 1 (Tile), reads J_j's slice of a chunk (2 KiB) into L1 once per group instead of once per
// block, and a chunk's whole J slice (128 KiB) into L2 once per group: before, a streamed output line cost two lines
// of J filled into L1 from L2 (and, where J is larger than L2, from L3), which competed with the streaming stores for
// the core's line-fill buffers. Grouping changes which rows are written together, never a value.
constexpr std::size_t kMaxGroup = 8;
// Blocks per group for a table of h pairs: kMaxGroup while the group's anchors take at most 8 MiB.
inline std::size_t group_blocks(const AngleTable& t) noexcept {
  return std::clamp<std::size_t>((std::size_t{8} << 20) / (t.pairs() * 2 * sizeof(double) + 1), 1, kMaxGroup);
}

// One thread's working memory: the anchors' values of the current group (one slot per block) and the staged chunk
// (stream path). The anchors are stored chunk by chunk, the slots of a chunk contiguous (sin then cos, kChunkPairs
// each): a tile's anchor values are one contiguous 2 KiB per slot. (Slots h pairs apart put every slot's slice of a
// chunk into the same L1 sets whenever h * 8 bytes is a multiple of 4 KiB, and 16 such slices overflowed a set.)
template <class T>
struct Worker {
  AlignedBuffer<double> anchors;
  std::size_t slots;
  std::array<std::int64_t, kMaxGroup> anchor;
  AlignedBuffer<T> staging;  // per part: kChunkPairs * values_per_pair
  Worker(std::size_t h, std::size_t slots_)
      : anchors((h + kChunkPairs - 1) / kChunkPairs * slots_ * 2 * kChunkPairs), slots(slots_), staging(6 * kChunkPairs) {
    anchor.fill(std::numeric_limits<std::int64_t>::min());
  }
  // Slot g's sines of pairs k0 .. k0 + kChunkPairs - 1 (k0 a multiple of kChunkPairs); the cosines follow them.
  double* sa(std::size_t g, std::size_t k0) const noexcept { return anchors.get() + (k0 * slots + g * kChunkPairs) * 2; }
  T* staged(Part p) const noexcept {
    static constexpr std::array<std::size_t, 4> at{0, kChunkPairs, 2 * kChunkPairs, 4 * kChunkPairs};
    return staging.get() + at[part_index(p)];
  }
};

// Rows of positions pa + j, j in [j_lo, j_hi], into output rows row0, row0 + 1, ...: a piece of one anchor block.
struct Piece {
  std::int64_t pa;
  std::size_t j_lo, j_hi, row0;
};

template <class T>
class Writer {
 public:
  Writer(const AngleTable& t, const RowForm<T>& f, bool stream) : t_(t), f_(f), stream_(stream) {
    for (std::size_t i = 0; i < f_.count; ++i) {
      const std::size_t pi = part_index(f_.segments[i].part);
      if (primary_[pi] < 0) primary_[pi] = static_cast<int>(i);
    }
  }

  // Rows of positions pa + j, j in [j_lo, j_hi], into output rows row0, row0 + 1, ...
  void run(Worker<T>& w, std::int64_t pa, std::size_t j_lo, std::size_t j_hi, std::size_t row0) const noexcept {
    const Piece one{pa, j_lo, j_hi, row0};
    run(w, std::span<const Piece>(&one, 1));
  }
  // Pieces of at most kMaxGroup distinct anchor blocks, in order of anchor: column chunk by column chunk, every
  // piece, so that a chunk's slice of J is read into L2 once for the group; consecutive pieces of the same rows of
  // consecutive blocks (every whole block of a range) form one tile, row j of each before row j + 1 (Tile).
  void run(Worker<T>& w, std::span<const Piece> pieces) const noexcept {
    const std::size_t h = t_.pairs();
    std::array<std::size_t, 2 * kMaxGroup> slot{};
    std::size_t used = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (i == 0 || pieces[i].pa != pieces[i - 1].pa) {
        if (w.anchor[used] != pieces[i].pa) {
          for (std::size_t k0 = 0; k0 < h; k0 += kChunkPairs)
            t_.direct(pieces[i].pa, k0, std::min(kChunkPairs, h - k0), w.sa(used, k0), w.sa(used, k0) + kChunkPairs);
          w.anchor[used] = pieces[i].pa;
        }
        ++used;
      }
      slot[i] = used - 1;
    }
    const auto B = static_cast<std::int64_t>(t_.block());
    auto follows = [&](const Piece& a, const Piece& b) {  // b: the same rows of the block after a's
      return b.pa == a.pa + B && b.j_lo == a.j_lo && b.j_hi == a.j_hi && b.row0 == a.row0 + t_.block();
    };
    for (std::size_t k0 = 0; k0 < h; k0 += kChunkPairs)
      for (std::size_t i = 0; i < pieces.size();) {
        std::size_t e = i + 1;
        while (e < pieces.size() && follows(pieces[e - 1], pieces[e])) ++e;
        const Piece& q = pieces[i];
        tile(w, slot[i], q.j_lo, q.j_hi - q.j_lo + 1, q.row0, k0, std::min(kChunkPairs, h - k0), e - i);
        i = e;
      }
    if (f_.zero_column)
      for (const Piece& q : pieces)
        for (std::size_t j = q.j_lo; j <= q.j_hi; ++j) f_.segments[0].row_start(q.row0 + (j - q.j_lo))[*f_.zero_column] = T(0);
  }

  // Negates the sines of an output row in place (the cosines are even): with run() for |p| into the same row,
  // the row of p < 0 is the exact reflection of the row of |p|.
  void negate_sines(std::size_t row) const noexcept {
    const std::size_t h = t_.pairs();
    for (std::size_t i = 0; i < f_.count; ++i) {
      const Segment<T>& s = f_.segments[i];
      T* r = s.row_start(row) + s.offset;
      switch (s.part) {
        case Part::sin: for (std::size_t k = 0; k < h; ++k) r[k] = -r[k]; break;
        case Part::sin_cos: for (std::size_t k = 0; k < h; ++k) r[2 * k] = -r[2 * k]; break;
        case Part::cos_sin: for (std::size_t k = 0; k < h; ++k) r[2 * k + 1] = -r[2 * k + 1]; break;
        case Part::cos: break;
      }
    }
  }

  // An all-zero row (a padding position).
  void zero_row(std::size_t row) const noexcept {
    const std::size_t h = t_.pairs();
    for (std::size_t i = 0; i < f_.count; ++i) {
      const Segment<T>& s = f_.segments[i];
      std::fill_n(s.row_start(row) + s.offset, h * values_per_pair(s.part), T(0));
    }
    if (f_.zero_column) f_.segments[0].row_start(row)[*f_.zero_column] = T(0);
  }

 private:
  static T* dest(const Segment<T>& s, std::size_t row, std::size_t k0) noexcept {
    return s.row_start(row) + s.offset + k0 * values_per_pair(s.part);
  }

  // Rows row0 .. row0 + rows - 1 (positions anchor + j0 ..), pairs k0 .. k0 + n - 1, of `groups` blocks: the
  // anchors in slots slot, slot + 1, ..., their output rows B apart.
  void tile(Worker<T>& w, std::size_t slot, std::size_t j0, std::size_t rows, std::size_t row0, std::size_t k0,
            std::size_t n, std::size_t groups) const noexcept {
    const std::size_t B = t_.block();
    const double* sa = w.sa(slot, k0);
    Tile<T> t{sa, sa + kChunkPairs, t_.j_sin(j0, k0), rows, n, {}, f_.count, f_.scale,
              f_.negate_sin, groups, 2 * kChunkPairs, static_cast<std::ptrdiff_t>(B)};
    bool lines = true;  // every destination row whole aligned cache lines
    for (std::size_t i = 0; i < f_.count; ++i) {
      const Segment<T>& s = f_.segments[i];
      t.dest[i] = {s.part, dest(s, row0, k0), s.row_stride};
      lines = lines && aligned64(t.dest[i].p) && (s.row_stride * static_cast<std::ptrdiff_t>(sizeof(T))) % 64 == 0 &&
              (n * values_per_pair(s.part) * sizeof(T)) % 64 == 0;
    }
    if (!stream_) return fused(t);
    if (lines && n % 16 == 0 && kernels::fused(t, true)) return;  // whole lines streamed from registers
    // Streaming to destinations that are not whole lines: row by row, compute each part once into L1, then
    // copy it to every segment of that part with streamed whole lines and ordinary stores for partial ones.
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t r = 0; r < rows; ++r) {
        Tile<T> one{t.sa + g * t.anchor_stride, t.ca + g * t.anchor_stride, t_.j_sin(j0 + r, k0), 1, n, {}, 0, f_.scale, f_.negate_sin};
        for (std::size_t pi = 0; pi < 4; ++pi)
          if (primary_[pi] >= 0) one.dest[one.nd++] = {static_cast<Part>(pi), w.staged(static_cast<Part>(pi)), 0};
        fused(one);
        const auto out_row = static_cast<std::ptrdiff_t>(r + g * B);
        for (std::size_t i = 0; i < f_.count; ++i)
          store_row(t.dest[i].p + out_row * t.dest[i].stride, w.staged(t.dest[i].part),
                    n * values_per_pair(t.dest[i].part), true);
      }
  }

  static bool aligned64(const void* p) noexcept { return (reinterpret_cast<std::uintptr_t>(p) & 63) == 0; }

  const AngleTable& t_;
  const RowForm<T>& f_;
  bool stream_;
  std::array<int, 4> primary_{-1, -1, -1, -1};  // per part: the segment the fused pass writes
};

}  // namespace

namespace {

// One call of write_table: its workers, the writer of its rows, and the ways in: a range of positions (run_rows)
// or a list (write_list).
template <class T>
class TableJob {
 public:
  TableJob(const AngleTable& table, const RowForm<T>& form, std::optional<std::int64_t> zero_position,
           const TableOptions& opt, std::size_t elements, std::size_t rows)
      : table_(table), form_(form), stream_(opt.streaming_stores && worth_streaming(elements * sizeof(T))),
        threads_(thread_count(opt, elements)), writer_(table, form, stream_), B_(static_cast<std::int64_t>(table.block())),
        has_zero_(zero_position.has_value()), zp_(zero_position.value_or(0)), cached_(table, form, false) {
    // Groups for cache-resident outputs too: there a chunk's J slice of a block (128 KiB) is read from L2 for every
    // row, and sharing each row's slice among the blocks of a group measured 22% faster (512 x 256 f32 plan, 1
    // thread: 0.195 -> 0.153 ns per pair with groups of 8, 0.155 with 4). At most as many as the call's rows can
    // fill (range below): a small table allocates one anchor slot per worker, not eight.
    G_ = std::clamp<std::size_t>((rows / table.block() + 2) / (2 * static_cast<std::size_t>(threads_)), 1,
                                 group_blocks(table));
    workers_.reserve(static_cast<std::size_t>(threads_));
    for (int t = 0; t < threads_; ++t) workers_.emplace_back(table.pairs(), G_);
  }

  // A run of `count` rows starting at output row `row`, positions p0, p0 + step, ... (step = +1 or -1).
  void run_rows(std::size_t row, std::int64_t p0, std::size_t count, int step) {
    const std::int64_t p1 = p0 + step * (static_cast<std::int64_t>(count) - 1);
    const std::int64_t lo = std::min(p0, p1), hi = std::max(p0, p1);
    const auto r = static_cast<std::int64_t>(row);
    // output row of position p: r + step (p - p0); of q >= 0: r + step (q - p0); of p = -q < 0: r - step (q + p0)
    range(std::max<std::int64_t>(lo, 0), hi, r - step * p0, step, false);
    range(std::max<std::int64_t>(-hi, 1), -lo, r - step * p0, -step, true);
  }

  // A list: long runs of step +1 or -1 as ranges; the other entries in fixed chunks, where runs of consecutive
  // positions inside one block share the anchor.
  void write_list(std::span<const std::int64_t> list) {
    std::vector<std::pair<std::size_t, std::size_t>> chunks;  // [begin, end) of entries not in a long run
    for (const auto& [b, e] : short_pieces(list))
      for (std::size_t c = b; c < e; c += kListChunk) chunks.emplace_back(c, std::min(e, c + kListChunk));
    parallel_for(chunks.size(), std::min<int>(threads_, static_cast<int>(std::max<std::size_t>(chunks.size(), 1))),
                 [&](int t, std::size_t c) {
                   list_chunk(workers_[static_cast<std::size_t>(t)], list, chunks[c].first, chunks[c].second);
                 });
  }

  void finish() const {
    if (stream_) store_fence();
  }

 private:
  // Runs of at least this many consecutive positions in a list are written as ranges (block by block, one anchor
  // per block of rows) instead of entry by entry.
  static constexpr std::size_t kMinRun = 128;

  // Writes the list's long runs (run_rows); returns the [begin, end) pieces of the other entries.
  std::vector<std::pair<std::size_t, std::size_t>> short_pieces(std::span<const std::int64_t> list) {
    std::vector<std::pair<std::size_t, std::size_t>> pieces;
    const std::size_t n = list.size();
    for (std::size_t i = 0; i < n;) {
      std::size_t e = i + 1;
      int step = 0;
      if (e < n && (list[e] - list[i] == 1 || list[e] - list[i] == -1)) {
        step = static_cast<int>(list[e] - list[i]);
        while (e < n && list[e] - list[e - 1] == step) ++e;
      }
      if (step != 0 && e - i >= kMinRun) run_rows(i, list[i], e - i, step);
      else if (!pieces.empty() && pieces.back().second == i) pieces.back().second = e;
      else pieces.emplace_back(i, e);
      i = e;
    }
    return pieces;
  }

  // Positions q = q_lo .. q_hi >= 0 into output rows r0 + dir q (dir = +1 or -1), block by block (one anchor per
  // block), with the sines negated when `negate`: then row r0 + dir q holds the row of -q, the exact reflection of
  // the row of q bit for bit (p and -p have different anchors and J rows, so computing -p directly gave f64 cosines
  // that differed from those of p in the last bit in ~45% of entries). The form is re-based so that its row index
  // is q itself. A zero position inside the run (sign given by `negate`) gets an all-zero row.
  void range(std::int64_t q_lo, std::int64_t q_hi, std::int64_t r0, int dir, bool negate) {
    if (q_lo > q_hi) return;
    RowForm<T> f = form_;
    for (std::size_t i = 0; i < f.count; ++i) {
      f.segments[i].origin += r0 * f.segments[i].row_stride;
      f.segments[i].row_stride *= dir;
    }
    f.negate_sin = negate;
    const Writer<T> w_run(table_, f, stream_);
    const std::int64_t zq = negate ? -zp_ : zp_;  // the zero position's q, if it has this run's sign
    const bool zero_here = has_zero_ && (negate ? zp_ < 0 : zp_ >= 0) && zq >= q_lo && zq <= q_hi;
    const std::optional<std::int64_t> zero = zero_here ? std::optional<std::int64_t>(zq) : std::nullopt;
    // Work items: groups of g blocks (a "block" of g B rows for for_each_block), each split into its anchor blocks;
    // fewer per group where the groups would not give every thread at least two of them (balance between threads).
    const std::size_t blocks = static_cast<std::size_t>(q_hi - q_lo) / table_.block() + 1;
    const std::size_t g = std::clamp<std::size_t>(blocks / (2 * static_cast<std::size_t>(threads_)), 1, G_);
    for_each_block(q_lo, static_cast<std::size_t>(q_hi - q_lo + 1), g * table_.block(), threads_,
                   [&](int t, std::int64_t ga, std::int64_t g_lo, std::int64_t g_hi) {
                     group(w_run, workers_[static_cast<std::size_t>(t)], ga, g_lo, g_hi, zero);
                   });
  }

  // Positions g_lo .. g_hi of the group of blocks from anchor ga, as pieces of its blocks, less the zero position.
  void group(const Writer<T>& w_run, Worker<T>& w, std::int64_t ga, std::int64_t g_lo, std::int64_t g_hi,
             std::optional<std::int64_t> zero) const {
    std::array<Piece, 2 * kMaxGroup> pieces;
    std::size_t np = 0;
    auto rows = [&](std::int64_t pa, std::int64_t a, std::int64_t b) {  // positions a..b of block pa
      if (a <= b)
        pieces[np++] = {pa, static_cast<std::size_t>(a - pa), static_cast<std::size_t>(b - pa),
                        static_cast<std::size_t>(a)};
    };
    for (std::int64_t pa = ga; pa <= g_hi; pa += B_) {
      const std::int64_t lo = std::max(pa, g_lo), hi = std::min(pa + B_ - 1, g_hi);
      if (zero && *zero >= lo && *zero <= hi) {
        rows(pa, lo, *zero - 1);
        rows(pa, *zero + 1, hi);
      } else {
        rows(pa, lo, hi);
      }
    }
    w_run.run(w, std::span<const Piece>(pieces.data(), np));
    if (zero && *zero >= g_lo && *zero <= g_hi) w_run.zero_row(static_cast<std::size_t>(*zero));
  }

  // Entries [begin, end) of a list: zero rows, negative positions one by one (mirrored_row), and runs of
  // consecutive positions within one block from one anchor.
  void list_chunk(Worker<T>& w, std::span<const std::int64_t> list, std::size_t begin, std::size_t end) const {
    for (std::size_t i = begin; i < end;) {
      const std::int64_t p = list[i];
      if (has_zero_ && p == zp_) {
        writer_.zero_row(i++);
        continue;
      }
      if (p < 0) {
        mirrored_row(w, p, i++);
        continue;
      }
      const std::int64_t pa = table_.anchor_of(p);
      std::size_t e = i + 1;  // [i, e): the run
      while (e < end && list[e] == list[e - 1] + 1 && list[e] - pa < B_ && !(has_zero_ && list[e] == zp_)) ++e;
      writer_.run(w, pa, static_cast<std::size_t>(p - pa), static_cast<std::size_t>(list[e - 1] - pa), i);
      i = e;
    }
  }

  // The row of a negative position: the row of |p| written with ordinary stores (still in cache for the sign
  // flip), then its sines negated.
  void mirrored_row(Worker<T>& w, std::int64_t p, std::size_t row) const {
    const std::int64_t q = -p, qa = table_.anchor_of(q);
    cached_.run(w, qa, static_cast<std::size_t>(q - qa), static_cast<std::size_t>(q - qa), row);
    cached_.negate_sines(row);
  }

  const AngleTable& table_;
  const RowForm<T>& form_;
  bool stream_;
  int threads_;
  std::size_t G_ = 1;
  std::vector<Worker<T>> workers_;
  Writer<T> writer_;
  std::int64_t B_;
  bool has_zero_;
  std::int64_t zp_;
  Writer<T> cached_;  // ordinary stores: mirrored rows
};

}  // namespace

template <class T>
void write_table(const AngleTable& table, const PositionSource& src, const RowForm<T>& form,
                 std::optional<std::int64_t> zero_position, const TableOptions& opt, std::size_t elements) {
  if (src.count == 0) return;
  TableJob<T> job(table, form, zero_position, opt, elements, src.count);
  if (src.list.empty()) job.run_rows(0, src.first, src.count, src.descending ? -1 : 1);
  else job.write_list(src.list);
  job.finish();
}

template void write_table<float>(const AngleTable&, const PositionSource&, const RowForm<float>&,
                                 std::optional<std::int64_t>, const TableOptions&, std::size_t);
template void write_table<double>(const AngleTable&, const PositionSource&, const RowForm<double>&,
                                  std::optional<std::int64_t>, const TableOptions&, std::size_t);

}  // namespace posenc::core
