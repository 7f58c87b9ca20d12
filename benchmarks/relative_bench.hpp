// benchmarks/relative_bench.hpp — what the benchmarks of the sinusoid-relative attentions (Transformer-XL, XLNet,
// TENER) share: the table of a call against the streaming store and the plain loop, and the scores of one head
// against a plain Q K^T sgemm of the same shape (DESIGN.md §5; names per suites.hpp).
//
//   table/<variant>/L:<rows>/d:<d>/threads:<n>          the call's sinusoid table (rows x d floats)
//     exact_f32 | emulated_f32   the scheme's table(...) in either regime (make_table(regime, rows, out, options))
//     plainloop_f32              the loop a user writes (float32 inv_freq and angles, std::sin / std::cos per entry)
//     stream_store               non-temporal stores of the same bytes: the memory limit
//   scores/<variant>/heads:1/L:<L>/head_dim:<d>/threads:<n>   one head, Lq = Lk = L (no memory)
//     blas_f32 | direct_f32      the scheme's scores in either form (the direct form at its own smaller L)
//     sgemm_f32                  q k^T alone
// Sanity after every timed loop: the table's rows 0, rows / 2, rows - 1 against sin/cos in double; 8 score entries
// against the caller's double evaluation of the definition (a mismatch aborts the run).
#pragma once

#include <benchmark/benchmark.h>

#include <cmath>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "baselines.hpp"
#include "bias_bench.hpp"
#include "posenc/bias.hpp"
#include "posenc/options.hpp"
#include "posenc/relative_attention.hpp"
#include "suites.hpp"

namespace posenc_bench::relative_bench {

using namespace bias_bench;

// variant: 0 exact, 1 emulated, 2 plain loop, 3 stream store. make_table(emulated, rows, out, options) writes the
// scheme's table; entry(rows, c, m, d) is the table's entry in double from the definition (sanity, exact regime; the emulated
// and plain-loop ones are float32 angles: the check allows their drift).
template <class MakeTable, class Entry>
void bm_table(benchmark::State& st, int variant, const std::string& what, MakeTable&& make_table, Entry&& entry) {
  const std::size_t rows = usize(st.range(0)), d = usize(st.range(1));
  const int threads = static_cast<int>(st.range(2));
  const std::size_t n = rows * d;
  const std::span<float> out = scratch_span<float>(0, n);
  const std::vector<float> inv = plainloop_inv_freq_f32(d);
  const posenc::TableOptions opt{.threads = threads};
  try {
    for (auto _ : st) {
      if (variant == 2) plainloop_table(inv, rows, d, out.data(), threads);
      else if (variant == 3) stream_store(out.data(), n * sizeof(float), threads);
      else make_table(variant == 1, rows, out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  if (variant <= 1)
    for (std::size_t c : {std::size_t{0}, rows / 2, rows - 1})
      for (std::size_t m : {std::size_t{0}, d / 2, d - 1}) {
        const double want = entry(rows, c, m, d), got = out[c * d + m];
        // float32 frequencies and angles (emulated) move the angle by up to |p| 2^-22: 1e-6 relative to |p|
        const double tol = 1e-6 + (variant == 0 ? 0.0 : 4e-7 * static_cast<double>(rows));
        if (!(std::fabs(got - want) <= tol))
          sanity_failure(fmt("%s (rows %zu, d %zu, threads %d): table[%zu][%zu] is %.9g; sin/cos in double give %.9g",
                             what.c_str(), rows, d, threads, c, m, got, want));
      }
  set_counters(st, n, n * sizeof(float));
}

// The scores of one head, Lq = Lk = L (ranges: heads (1), L, head_dim, threads); variant 0 blas, 1 direct, 2 sgemm
// alone. scores(q, k, L, out, options, form) runs the scheme's scores; reference(q, k, i, j) returns the entry and
// the magnitude its error scales with, in double from the definition (nullopt: -inf expected).
template <class Scores, class Reference>
void bm_scores(benchmark::State& st, int variant, const std::string& what, Scores&& scores, Reference&& reference) {
  const std::size_t H = usize(st.range(0)), L = usize(st.range(1)), d = usize(st.range(2));
  const int threads = static_cast<int>(st.range(3));
  if (H != 1) {
    st.SkipWithError("scores benchmarks are one head (the sgemm baseline is one gemm)");
    return;
  }
  std::vector<float> q(L * d), k(L * d);
  fill_uniform(q, 0x9E3779B9u);
  fill_uniform(k, 0x7F4A7C15u);
  const std::span<float> out = scratch_span<float>(0, L * L);
  fill_nan(out, 1);
  const posenc::TableOptions opt{.threads = threads};
  const auto form = variant == 1 ? posenc::RelativeScoresForm::direct : posenc::RelativeScoresForm::blas;
  {
    const BlasThreads blas(threads);
    const auto once = [&] {
      if (variant == 2) sgemm_abt(L, L, d, q.data(), k.data(), out.data());
      else scores(std::span<const float>(q), std::span<const float>(k), L, out, opt, form);
    };
    try {
      once();
      for (auto _ : st) {
        once();
        benchmark::ClobberMemory();
      }
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
      return;
    }
  }
  if (variant != 2) {
    const std::pair<std::size_t, std::size_t> at[] = {{0, 0}, {L / 3, L / 3}, {L / 2, L / 2 - 1}, {L / 2, L / 7},
                                                      {L - 1, 0}, {L - 1, L - 1}, {0, L - 1}, {L / 3, L / 2}};
    for (const auto& [i, j] : at) {
      const std::optional<std::pair<double, double>> ref = reference(std::span<const float>(q), std::span<const float>(k), i, j);
      const double got = out[i * L + j];
      if (!ref) {
        if (!(std::isinf(got) && got < 0))
          sanity_failure(fmt("%s (L %zu, head_dim %zu, threads %d): scores[%zu][%zu] is %.9g, expected -inf",
                             what.c_str(), L, d, threads, i, j, got));
        continue;
      }
      const double bound = 1e-3 * ref->second + 1e-6;
      if (!(std::fabs(got - ref->first) <= bound))
        sanity_failure(fmt("%s (L %zu, head_dim %zu, threads %d): scores[%zu][%zu] is %.9g; the definition in double "
                           "gives %.9g (bound %.3g)",
                           what.c_str(), L, d, threads, i, j, got, ref->first, bound));
    }
  }
  st.counters["flops"] =
      benchmark::Counter(2.0 * static_cast<double>(L * L * d), benchmark::Counter::kIsIterationInvariantRate);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(L * L));
  st.SetLabel(regime_label(L * L * sizeof(float)));
}

// Registers "<scheme>/table/{exact_f32,emulated_f32,plainloop_f32,stream_store}" at each of `rows` x d, 1 and 2
// threads, and "<scheme>/scores/{blas_f32,sgemm_f32}" at L x head_dim plus "scores/direct_f32" at direct_L.
template <class MakeTable, class Entry, class Scores, class Reference>
std::string register_relative(const std::string& scheme, std::span<const std::size_t> rows, std::size_t d,
                              std::size_t L, std::size_t direct_L, std::size_t head_dim, MakeTable make_table,
                              Entry entry, Scores scores, Reference reference) {
  const Registrar reg{scheme};
  const char* table_variants[] = {"exact_f32", "emulated_f32", "plainloop_f32", "stream_store"};
  for (int v = 0; v < 4; ++v) {
    const std::string what = scheme + "/table/" + table_variants[v];
    auto* b = reg.add(std::string("table/") + table_variants[v],
                  [v, what, make_table, entry](benchmark::State& st) { bm_table(st, v, what, make_table, entry); });
    b->ArgNames({"L", "d", "threads"});
    for (std::size_t r : rows)
      for (int t : kThreadCounts) b->Args({static_cast<std::int64_t>(r), static_cast<std::int64_t>(d), t});
  }
  const char* score_variants[] = {"blas_f32", "direct_f32", "sgemm_f32"};
  for (int v = 0; v < 3; ++v) {
    const std::string what = scheme + "/scores/" + score_variants[v];
    auto* b = reg.add(std::string("scores/") + score_variants[v],
                  [v, what, scores, reference](benchmark::State& st) { bm_scores(st, v, what, scores, reference); });
    b->ArgNames({"heads", "L", "head_dim", "threads"});
    for (int t : kThreadCounts) {
      if (v != 1) b->Args({1, static_cast<std::int64_t>(L), static_cast<std::int64_t>(head_dim), t});
      if (v != 0) b->Args({1, static_cast<std::int64_t>(direct_L), static_cast<std::int64_t>(head_dim), t});
    }
  }
  return scheme + ": table L:" + std::to_string(rows.front()) + "/" + std::to_string(rows.back()) + " d:" +
         std::to_string(d) + ", scores heads:1 L:" + std::to_string(L) + " (direct L:" + std::to_string(direct_L) +
         ") head_dim:" + std::to_string(head_dim);
}

}  // namespace posenc_bench::relative_bench
