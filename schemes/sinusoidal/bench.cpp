// schemes/sinusoidal/bench.cpp — sinusoidal absolute encodings: tables, the shift operator T(k), Gram
// matrices, each with its in-run baselines (DESIGN.md §5). Names follow suites.hpp.
//
// Families and variants
//   table/<variant>/L:<rows>/d:<dim>/threads:<n>      output L x d, written once per iteration
//     exact_f32, exact_f64   posenc::sinusoidal_table, vaswani preset, exact regime, positions 0..L-1 (one-shot:
//                            every iteration pays the plan's setup)
//     plan_exact_f32/_f64    the same table from a plan made before the timed loop (SinusoidalPlan::table)
//     exact_f32_halves       marian preset ([sin | cos] halves), one size only
//     emulated_f32           fairseq preset in the emulated regime (fairseq's float32 steps), rows from
//                            padding_idx + 1
//     plainloop_f32/_f64     the loop a user writes (baselines.hpp), same positions and layout as vaswani
//     stream_store(_f64)     non-temporal stores of the same bytes as the f32 (f64) table: DRAM write limit
//     store(_f64)            ordinary stores of the same bytes: the write limit of a cache-resident table
//   shift/<variant>/rows:<r>/d:<dim>        T(k) applied to r encodings (f32, in place), k = 1000
//     blas_rot (ShiftMethod::rot), blas_gemm (ShiftMethod::gemm), regenerate (sinusoidal_table at p + k)
//   sgemm/shift/rows:<r>/d:<dim>            cblas_sgemm r x d x d: the shape of blas_gemm
//   gram/<variant>/rows:<r>/d:<dim>         PE * PE^T of r consecutive rows (f32)
//     syrk (posenc::gram_matrix), sgemm (cblas_sgemm r x d x r, same output)
//
// Counters: bytes_per_second (output bytes), items_per_second (output entries); BLAS-shaped benchmarks
// add "flops" (nominal 2*M*N*K of the full product, as a rate; the same count for syrk, which does half the
// multiplications, so flops compare like for like with the sgemm baseline). label: cache | dram.
//
// Size policy (suites.hpp): table grid L {512, 2048, 8192, 32768} x d {64, 256, 1024, 4096}, keeping cells
// whose output is <= 1 MiB or >= 512 MiB; that leaves L:512/d:64, L:512/d:256, L:2048/d:64 (cache, for
// both f32 and f64: 1 MiB at most) and L:32768/d:4096 (DRAM: 512 MiB f32, 1 GiB f64). The skipped cells are
// listed in the "size_policy" context. shift blas_rot / regenerate (memory-bound) skip rows:4096/d:512
// (8 MiB); the BLAS-shaped benchmarks (blas_gemm, sgemm, gram) keep their whole grid: at O(r d^2) or
// O(r^2 d) flops they are compute-bound and the L3 instability does not dominate their time.
//
// Sanity: right after the timed loop of every table benchmark, three rows of the timed output (first,
// middle, last) are compared with posenc::sinusoidal_rows; a mismatch aborts the run before any result is
// reported. The tolerance is a gross-error guard (wrong layout, offset, frequency rule, unwritten rows),
// not an accuracy claim: accuracy is asserted by properties/ from the budget table.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "baselines.hpp"
#include "posenc/linalg.hpp"
#include "posenc/sinusoidal.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

using posenc::SinusoidalSpec;

constexpr std::array<std::int64_t, 4> kTableL{512, 2048, 8192, 32768};
constexpr std::array<std::int64_t, 4> kTableD{64, 256, 1024, 4096};
constexpr std::int64_t kShift = 1000;  // the k of T(k)

struct Shape {
  std::int64_t rows, d;
};

std::size_t usize(std::int64_t v) { return static_cast<std::size_t>(v); }

// Grid cells whose output (rows * d * elem bytes) is in a stable regime; the others go to `skipped`.
std::vector<Shape> stable_table_shapes(std::size_t elem, std::string* skipped) {
  std::vector<Shape> keep;
  for (std::int64_t L : kTableL)
    for (std::int64_t d : kTableD) {
      const std::size_t bytes = usize(L) * usize(d) * elem;
      if (in_stable_regime(bytes)) {
        keep.push_back({L, d});
      } else if (skipped != nullptr) {
        if (!skipped->empty()) skipped->append(", ");
        skipped->append("L:" + std::to_string(L) + "/d:" + std::to_string(d) + " (" + format_bytes(bytes) + ")");
      }
    }
  // Cache-resident cells first, DRAM last, so the benchmarks of one variant reuse one large buffer.
  std::stable_partition(keep.begin(), keep.end(),
                        [elem](Shape s) { return usize(s.rows) * usize(s.d) * elem <= kCacheMaxBytes; });
  return keep;
}

void set_output_counters(benchmark::State& st, std::size_t entries, std::size_t elem) {
  const auto it = static_cast<std::int64_t>(st.iterations());
  st.SetItemsProcessed(it * static_cast<std::int64_t>(entries));
  st.SetBytesProcessed(it * static_cast<std::int64_t>(entries * elem));
  st.SetLabel(regime_label(entries * elem));
}

void set_flops(benchmark::State& st, double m, double n, double k) {
  st.counters["flops"] = benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- sanity check ---------------------------------------------------------------------------------
// |table - rows| <= abs_tol + per_position * |p| on three rows of the timed output, else abort.
template <class T>
void check_rows(const char* what, const SinusoidalSpec& spec, std::int64_t first, std::size_t rows,
                std::span<const T> table, double abs_tol, double per_position) {
  const std::size_t d = spec.dim;
  const std::array<std::size_t, 3> idx{0, rows / 2, rows - 1};
  std::vector<T> ref(d);
  for (std::size_t i : idx) {
    const std::int64_t p = first + static_cast<std::int64_t>(i);
    const std::array<std::int64_t, 1> pos{p};
    posenc::sinusoidal_rows(spec, pos, std::span<T>(ref), posenc::TableOptions{.threads = 1});
    const double tol = abs_tol + per_position * std::fabs(static_cast<double>(p));
    for (std::size_t c = 0; c < d; ++c) {
      const double got = static_cast<double>(table[i * d + c]);
      const double want = static_cast<double>(ref[c]);
      if (!(std::fabs(got - want) <= tol)) {  // also catches NaN
        std::fprintf(stderr,
                     "posenc_bench: sanity check failed for %s (rows %zu, d %zu): position %" PRId64
                     ", column %zu: benchmarked table has %.17g (%a), sinusoidal_rows gives %.17g (%a), "
                     "|diff| = %.3g > %.3g\n  spec: %s\n",
                     what, rows, d, p, c, got, got, want, want, std::fabs(got - want), tol,
                     posenc::describe(spec).c_str());
        std::abort();
      }
    }
  }
}

// ---- table ----------------------------------------------------------------------------------------
enum class TableSpec { vaswani, marian, fairseq_emulated };

SinusoidalSpec make_spec(TableSpec which, std::size_t d) {
  switch (which) {
    case TableSpec::vaswani: return posenc::vaswani_spec(d);
    case TableSpec::marian: return posenc::marian_spec(d);
    case TableSpec::fairseq_emulated: {
      SinusoidalSpec s = posenc::fairseq_spec(d);
      s.regime = posenc::Regime::emulated;
      return s;
    }
  }
  std::abort();
}

// One-shot calls (sinusoidal_table: the plan's setup in every iteration) or a plan made before the timed loop.
enum class Call { one_shot, plan };

template <class T>
void bm_posenc_table(benchmark::State& st, TableSpec which, const char* what, Call call = Call::one_shot) {
  const std::size_t L = usize(st.range(0)), d = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const SinusoidalSpec spec = make_spec(which, d);
  const std::int64_t first = spec.first_position;  // vaswani / marian: 0; fairseq: padding_idx + 1
  const std::span<T> out = scratch_span<T>(0, L * d);
  const posenc::TableOptions opt{.threads = threads};
  try {
    if (call == Call::plan) {
      const posenc::SinusoidalPlan plan = posenc::make_plan(spec);
      for (auto _ : st) {
        plan.table(first, L, out, opt);
        benchmark::ClobberMemory();
      }
    } else {
      for (auto _ : st) {
        posenc::sinusoidal_table(spec, first, L, out, opt);
        benchmark::ClobberMemory();
      }
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  // Two implementations of the same contract (each within 0.25 ulp_f32(1) + 2^-45, or 4 ulp_f64(1), of the
  // real value): they differ by well under these guards unless something is grossly wrong.
  const double tol = sizeof(T) == 4 ? 0x1p-22 : 0x1p-46;
  check_rows<T>(what, spec, first, L, out, tol, 0.0);
  set_output_counters(st, L * d, sizeof(T));
}

template <class T>
void bm_plainloop(benchmark::State& st) {
  const std::size_t L = usize(st.range(0)), d = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  std::vector<T> inv;
  if constexpr (sizeof(T) == 4) inv = plainloop_inv_freq_f32(d);
  else inv = plainloop_inv_freq_f64(d);
  const std::span<T> out = scratch_span<T>(0, L * d);
  for (auto _ : st) {
    plainloop_table(std::span<const T>(inv), L, d, out.data(), threads);
    benchmark::ClobberMemory();
  }
  // The user's loop forms the angle in T from a rounded inv_freq: its angle error grows like p * eps(T)
  // (a few units; powf/pow and the product each round), so the guard grows with the position too.
  const double eps = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  check_rows<T>(sizeof(T) == 4 ? "table/plainloop_f32" : "table/plainloop_f64", posenc::vaswani_spec(d), 0, L,
                out, 16 * eps, 8 * eps);
  set_output_counters(st, L * d, sizeof(T));
}

void bm_store(benchmark::State& st, bool non_temporal, std::size_t elem) {
  const std::size_t L = usize(st.range(0)), d = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const std::size_t bytes = L * d * elem;
  void* out = scratch(0, bytes);
  for (auto _ : st) {
    if (non_temporal) stream_store(out, bytes, threads);
    else plain_store(out, bytes, threads);
    benchmark::ClobberMemory();
  }
  set_output_counters(st, L * d, elem);
}

// ---- shift operator -------------------------------------------------------------------------------
enum class ShiftVariant { rot, gemm, regenerate };

void bm_shift(benchmark::State& st, ShiftVariant v) {
  const std::size_t rows = usize(st.range(0)), d = usize(st.range(1));
  const SinusoidalSpec spec = posenc::vaswani_spec(d);
  const std::span<float> block = scratch_span<float>(0, rows * d);
  try {
    posenc::sinusoidal_table(spec, 0, rows, block);
    if (v == ShiftVariant::regenerate) {
      for (auto _ : st) {
        posenc::sinusoidal_table(spec, kShift, rows, block);
        benchmark::ClobberMemory();
      }
    } else {
      const posenc::ShiftOperator op = posenc::shift_operator(spec, kShift);
      const auto method = v == ShiftVariant::rot ? posenc::ShiftMethod::rot : posenc::ShiftMethod::gemm;
      // Sanity (untimed, these blocks are small): T(k) PE(0..rows-1) = PE(k..k+rows-1). A rotated f32 pair
      // carries a few ulp_f32 of |x0| + |x1| <= 2; the guard only catches gross errors.
      posenc::apply_shift(op, block, rows, method);
      const std::span<float> want = scratch_span<float>(1, rows * d);
      posenc::sinusoidal_table(spec, kShift, rows, want);
      for (std::size_t i = 0; i < rows * d; ++i)
        if (!(std::fabs(static_cast<double>(block[i]) - want[i]) <= 0x1p-18)) {
          std::fprintf(stderr,
                       "posenc_bench: sanity check failed for shift/%s (rows %zu, d %zu): entry (%zu, %zu) of "
                       "T(%" PRId64 ") PE(p) is %.9g, PE(p + k) is %.9g\n",
                       v == ShiftVariant::rot ? "blas_rot" : "blas_gemm", rows, d, i / d, i % d,
                       static_cast<std::int64_t>(kShift), static_cast<double>(block[i]),
                       static_cast<double>(want[i]));
          std::abort();
        }
      for (auto _ : st) {
        posenc::apply_shift(op, block, rows, method);
        benchmark::ClobberMemory();
      }
      if (v == ShiftVariant::gemm) set_flops(st, double(rows), double(d), double(d));
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  set_output_counters(st, rows * d, sizeof(float));
}

void bm_sgemm_shift(benchmark::State& st) {
  const std::size_t rows = usize(st.range(0)), d = usize(st.range(1));
  const SinusoidalSpec spec = posenc::vaswani_spec(d);
  const std::span<float> a = scratch_span<float>(0, rows * d);
  const std::span<float> t = scratch_span<float>(1, d * d);
  const std::span<float> c = scratch_span<float>(2, rows * d);
  try {
    posenc::sinusoidal_table(spec, 0, rows, a);
    posenc::dense_shift_matrix(posenc::shift_operator(spec, kShift), t);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  for (auto _ : st) {
    sgemm_abt(rows, d, d, a.data(), t.data(), c.data());  // C = A T^T, as blas_gemm computes
    benchmark::ClobberMemory();
  }
  set_flops(st, double(rows), double(d), double(d));
  set_output_counters(st, rows * d, sizeof(float));
}

// ---- Gram matrix ----------------------------------------------------------------------------------
void bm_gram(benchmark::State& st, bool use_posenc) {
  const std::size_t rows = usize(st.range(0)), d = usize(st.range(1));
  const SinusoidalSpec spec = posenc::vaswani_spec(d);
  const std::span<float> a = scratch_span<float>(0, rows * d);
  const std::span<float> g = scratch_span<float>(1, rows * rows);
  try {
    posenc::sinusoidal_table(spec, 0, rows, a);
    for (auto _ : st) {
      if (use_posenc) posenc::gram_matrix(a, rows, d, g);
      else sgemm_abt(rows, rows, d, a.data(), a.data(), g.data());
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  // Sanity: ||PE(p)||^2 = d/2 on the diagonal, and both triangles filled (symmetric up to the summation
  // order, which sgemm does not keep the same for G[i][j] and G[j][i]).
  for (std::size_t i = 0; i < rows; i += rows / 8) {
    const std::size_t j = rows - 1 - i;
    if (!(std::fabs(g[i * rows + i] - 0.5 * double(d)) <= double(d) * 0x1p-18) ||
        !(std::fabs(double(g[i * rows + j]) - g[j * rows + i]) <= double(d) * 0x1p-18)) {
      std::fprintf(stderr,
                   "posenc_bench: sanity check failed for gram/%s (rows %zu, d %zu): G[%zu][%zu] = %.9g (want "
                   "d/2 = %zu), G[%zu][%zu] = %.9g vs G[%zu][%zu] = %.9g\n",
                   use_posenc ? "syrk" : "sgemm", rows, d, i, i, double(g[i * rows + i]), d / 2, i, j,
                   double(g[i * rows + j]), j, i, double(g[j * rows + i]));
      std::abort();
    }
  }
  set_flops(st, double(rows), double(rows), double(d));
  set_output_counters(st, rows * rows, sizeof(float));
}

// ---- registration ---------------------------------------------------------------------------------
const Registrar kReg{"sinusoidal", benchmark::kMicrosecond};  // "sinusoidal/<family>/<variant>/<key>:<value>..."

template <class Fn>
void add_table(const std::string& variant, const std::vector<Shape>& shapes, Fn&& fn) {
  auto* b = kReg.add("table/" + variant, std::forward<Fn>(fn));
  b->ArgNames({"L", "d", "threads"});
  for (Shape s : shapes)
    for (int t : kThreadCounts) b->Args({s.rows, s.d, t});
}

template <class Fn>
void add_blocks(const std::string& name, const std::vector<Shape>& shapes, Fn&& fn) {
  auto* b = kReg.add(name, std::forward<Fn>(fn));
  b->ArgNames({"rows", "d"});
  for (Shape s : shapes) b->Args({s.rows, s.d});
}

POSENC_BENCH_SCHEME(sinusoidal) {
  std::string skipped32, skipped64;
  const std::vector<Shape> f32 = stable_table_shapes(4, &skipped32);
  const std::vector<Shape> f64 = stable_table_shapes(8, &skipped64);
  const std::vector<Shape> halves{{512, 256}};

  add_table("exact_f32", f32, [](benchmark::State& st) { bm_posenc_table<float>(st, TableSpec::vaswani, "table/exact_f32"); });
  add_table("exact_f64", f64, [](benchmark::State& st) { bm_posenc_table<double>(st, TableSpec::vaswani, "table/exact_f64"); });
  add_table("plan_exact_f32", f32, [](benchmark::State& st) {
    bm_posenc_table<float>(st, TableSpec::vaswani, "table/plan_exact_f32", Call::plan);
  });
  add_table("plan_exact_f64", f64, [](benchmark::State& st) {
    bm_posenc_table<double>(st, TableSpec::vaswani, "table/plan_exact_f64", Call::plan);
  });
  add_table("emulated_f32", f32, [](benchmark::State& st) {
    bm_posenc_table<float>(st, TableSpec::fairseq_emulated, "table/emulated_f32");
  });
  add_table("exact_f32_halves", halves, [](benchmark::State& st) {
    bm_posenc_table<float>(st, TableSpec::marian, "table/exact_f32_halves");
  });
  add_table("plainloop_f32", f32, [](benchmark::State& st) { bm_plainloop<float>(st); });
  add_table("plainloop_f64", f64, [](benchmark::State& st) { bm_plainloop<double>(st); });
  add_table("stream_store", f32, [](benchmark::State& st) { bm_store(st, true, 4); });
  add_table("stream_store_f64", f64, [](benchmark::State& st) { bm_store(st, true, 8); });
  add_table("store", f32, [](benchmark::State& st) { bm_store(st, false, 4); });
  add_table("store_f64", f64, [](benchmark::State& st) { bm_store(st, false, 8); });

  // shift: rows {256, 4096} x d {64, 512}; the memory-bound variants skip the 8 MiB cell.
  std::vector<Shape> shift_all, shift_stable;
  for (std::int64_t r : {256, 4096})
    for (std::int64_t d : {64, 512}) {
      shift_all.push_back({r, d});
      if (in_stable_regime(usize(r * d) * sizeof(float))) shift_stable.push_back({r, d});
    }
  add_blocks("shift/blas_rot", shift_stable, [](benchmark::State& st) { bm_shift(st, ShiftVariant::rot); });
  add_blocks("shift/blas_gemm", shift_all, [](benchmark::State& st) { bm_shift(st, ShiftVariant::gemm); });
  add_blocks("shift/regenerate", shift_stable, [](benchmark::State& st) { bm_shift(st, ShiftVariant::regenerate); });
  add_blocks("sgemm/shift", shift_all, [](benchmark::State& st) { bm_sgemm_shift(st); });

  std::vector<Shape> gram;
  for (std::int64_t r : {256, 1024})
    for (std::int64_t d : {64, 512}) gram.push_back({r, d});
  add_blocks("gram/syrk", gram, [](benchmark::State& st) { bm_gram(st, true); });
  add_blocks("gram/sgemm", gram, [](benchmark::State& st) { bm_gram(st, false); });

  return "sinusoidal: table f32 skips " + skipped32 + "; table f64 skips " + skipped64 +
         "; shift/blas_rot and shift/regenerate skip rows:4096/d:512 (8 MiB); blas_gemm, sgemm, gram keep "
         "their whole grid (compute-bound)";
}

}  // namespace
}  // namespace posenc_bench
