// schemes/nezha/bench.cpp — NEZHA: its fixed table, pre-softmax scores and the attention output, each with its
// in-run baselines (DESIGN.md §5). Names follow suites.hpp; the scores and attend families are the bias schemes'
// (schemes/shaw/bench.cpp), so the report pairs kernels and baselines the same way.
//
// Families and variants
//   table/<variant>/K:<K>/depth:<d>/threads:<n>   the (2K + 1) x depth table, one-shot (nezha_table: the plan is
//   built in every call, as a model load builds it once)
//     exact_f32             the exact regime (correctly rounded sin/cos of r w_t)
//     hf_f32                HF's float32 steps (float32 frequencies and angles, sin/cos rounded once)
//     plainloop_f32         the baseline: the loop a user writes (float32 inverse frequencies and angles, one
//                           std::sin / std::cos per entry: PyTorch-style, the numbers of neither regime)
//   scores/<variant>/heads:1/L:<L>/head_dim:<d>/threads:<n>   one causal head (bm_bias_scores: scale 1/sqrt(d))
//     fused_hf_causal_f32   NezhaPlan::scores of the nezha-cn-base preset (Q T^T, gathered rows, Q K^T beta = 1)
//     sgemm_f32             q k^T alone
//   attend/hf_causal_f32/heads:1/L:<L>/head_dim:<d>/threads:<n>   NezhaPlan::attend, causal (the table on the
//     keys and the values)
//
// Sanity, after every timed loop (a mismatch aborts the run): table entries (0, 1), (K, 0), (2K, depth - 2) against
// sin/cos in double within 1e-6; scores against a double evaluation of the definition (bm_bias_scores); outputs: rows
// 0, L/2, L-1 within 1e-3 of a double evaluation here.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "schemes/nezha/cases.hpp"
#include "baselines.hpp"
#include "bias_bench.hpp"
#include "posenc/nezha.hpp"
#include "suites.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::nezha;
using posenc::BiasGeometry;
using posenc::BiasMask;
using posenc::NezhaPlan;
using posenc::NezhaRegime;
using posenc::NezhaSpec;
using namespace bias_bench;


NezhaSpec preset() { return posenc::find_preset<NezhaSpec>("nezha-cn-base").spec; }

// r = clip(j - i, -K, K) + K written here from the definition (CONVENTIONS.md §2.4), independently of the library.
std::size_t independent_index(const NezhaSpec& s, std::int64_t i, std::int64_t j) {
  const auto K = static_cast<std::int64_t>(s.max_relative_position);
  const std::int64_t d = j - i;
  return static_cast<std::size_t>((d < -K ? -K : d > K ? K : d) + K);
}
double independent_entry(const NezhaSpec& s, std::size_t r, std::size_t c) {
  const double w = std::pow(10000.0, -2.0 * static_cast<double>(c / 2) / static_cast<double>(s.depth));
  const double a = static_cast<double>(r) * w;
  return c % 2 == 0 ? std::sin(a) : std::cos(a);
}

// ---- table ------------------------------------------------------------------------------------------------
void bm_table(benchmark::State& st, int variant, const std::string& what) {  // 0 exact, 1 hf, 2 plain loop
  NezhaSpec s = preset();
  s.max_relative_position = usize(st.range(0));
  s.depth = usize(st.range(1));
  s.regime = variant == 0 ? NezhaRegime::exact : NezhaRegime::hf;
  const int threads = static_cast<int>(st.range(2));
  const std::size_t rows = posenc::nezha_table_rows(s), n = rows * s.depth;
  const std::span<float> out = scratch_span<float>(0, n);
  const std::vector<float> inv = plainloop_inv_freq_f32(s.depth);
  const posenc::TableOptions opt{.threads = threads};
  try {
    for (auto _ : st) {
      if (variant == 2) plainloop_table(inv, rows, s.depth, out.data(), threads);
      else posenc::nezha_table(s, out, opt);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
    return;
  }
  const std::size_t K = s.max_relative_position;
  for (const auto& [r, c] : {std::pair<std::size_t, std::size_t>{0, 1}, {K, 0}, {2 * K, s.depth - 2}}) {
    const double want = independent_entry(s, r, c), got = out[r * s.depth + c];
    // float32 frequencies (hf, plain loop) move the angle by up to r 2^-22 w: 1e-6 relative to r for K <= 2^14
    const double tol = 1e-6 + (variant == 0 ? 0.0 : 4e-7 * static_cast<double>(r));
    if (!(std::fabs(got - want) <= tol))
      sanity_failure(fmt("%s (K %zu, depth %zu, threads %d): table[%zu][%zu] is %.9g; sin/cos in double give %.9g",
                         what.c_str(), K, s.depth, threads, r, c, got, want));
  }
  set_counters(st, n, n * sizeof(float));
}

// ---- scores -----------------------------------------------------------------------------------------------

// bm_bias_scores calls plan.scores(q, k, head_dim, geometry, scale, out, options): one head.
struct OneHead {
  NezhaPlan plan;
  void scores(std::span<const float> q, std::span<const float> k, std::size_t, const BiasGeometry& g, double scale,
              std::span<float> out, const posenc::TableOptions& o) const {
    plan.scores(q, k, 1, g, scale, out, o);
  }
};

void bm_scores(benchmark::State& st, bool fused, const std::string& what) {
  NezhaSpec spec = preset();
  spec.depth = usize(st.range(2));
  const std::size_t d = spec.depth;
  std::vector<float> q(usize(st.range(1)) * d);
  fill_uniform(q, 0x9E3779B9u);  // bm_bias_scores's q (the same hash and seed): the relative term's reference
  bm_bias_scores(
      st, fused, what, [&] { return OneHead{NezhaPlan(spec)}; },
      [&](std::size_t i, std::size_t j) {
        const std::size_t r = independent_index(spec, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
        double v = 0, mag = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const double p = static_cast<double>(q[i * d + c]) * independent_entry(spec, r, c);
          v += p;
          mag += std::fabs(p);
        }
        const double scale = 1 / std::sqrt(static_cast<double>(d));
        return BiasReference{scale * v, scale * mag};
      },
      "scale (q.k + q.T[clip(j - i) + K])");
}

// ---- attention output -------------------------------------------------------------------------------------
void bm_attend(benchmark::State& st, const std::string& what) {
  NezhaSpec spec = preset();
  spec.depth = usize(st.range(2));
  const NezhaPlan plan(spec);
  // The same sinusoid T[r(i, j)] on keys and values.
  auto entry = [&spec](std::size_t i, std::size_t j, std::size_t c) {
    return independent_entry(spec, independent_index(spec, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)), c);
  };
  bm_attend_causal(st, what, plan, entry, entry);
}

// ---- registration -----------------------------------------------------------------------------------------
const Registrar kReg{"nezha"};  // "nezha/<family>/<variant>/<key>:<value>..."

POSENC_BENCH_SCHEME(nezha) {
  const auto depth = static_cast<std::int64_t>(cases::kBenchDepth);
  for (const auto& [v, variant] : {std::pair<const char*, int>{"exact_f32", 0}, {"hf_f32", 1}, {"plainloop_f32", 2}}) {
    const std::string what = std::string("nezha/table/") + v;
    auto* b = kReg.add(std::string("table/") + v, [variant, what](benchmark::State& st) { bm_table(st, variant, what); });
    b->ArgNames({"K", "depth", "threads"});
    for (std::size_t K : cases::kBenchTableK)
      for (int t : kThreadCounts) b->Args({static_cast<std::int64_t>(K), depth, t});
  }
  const auto L = static_cast<std::int64_t>(cases::kBenchScoresLength);
  for (const char* v : {"fused_hf_causal_f32", "sgemm_f32"}) {
    const bool fused = std::string(v) != "sgemm_f32";
    const std::string what = std::string("nezha/scores/") + v;
    kReg.per_thread(std::string("scores/") + v, {"heads", "L", "head_dim"}, {1, L, depth}, [fused, what](benchmark::State& st) { bm_scores(st, fused, what); });
  }
  {
    kReg.per_thread("attend/hf_causal_f32", {"heads", "L", "head_dim"}, {1, L, depth}, [](benchmark::State& st) { bm_attend(st, "nezha/attend/hf_causal_f32"); });
  }
  return "nezha: table K:64/16384 depth:64 (33 KiB, 8 MiB), scores and attend heads:1 L:4096 head_dim:64 (causal)";
}

}  // namespace
}  // namespace posenc_bench
