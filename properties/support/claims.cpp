#include "claims.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "budget.hpp"
#include "posenc/blas.hpp"
#include "posenc/build_info.hpp"

namespace posenc::test {
namespace {

const std::string kS000 = "seed 000 (shared/seeds/000_97706ee09792f023.txt)";
const std::string kS001 = "seed 001 (shared/seeds/001_3d593460a3f44dd1.txt)";
const std::string kS002 = "seed 002 (shared/seeds/002_de10b0c57a03603b.txt)";
const std::string kConv = "CONVENTIONS.md §2.1";

std::vector<Claim> make_claims() {
  const std::string sin = "sinusoidal";
  return {
      {"SIN-ROT-1", sin, "Sinusoidal.ShiftByKIsAFixedRotation",
       "PE(p+k) = T(k) PE(p), T(k) = diag of 2x2 rotations [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]] on "
       "(sin slot, cos slot), independent of p",
       kS000 + "; " + kS001, "identity",
       {"sinusoidal.identity.oracle", "sinusoidal.shift.operator.f64", "sinusoidal.shift.dense.f32",
        "sinusoidal.shift.apply.f64", "sinusoidal.shift.apply.f32"}},
      {"SIN-ROT-2", sin, "Sinusoidal.ShiftsCompose", "T(a) T(b) = T(a+b)", kS000 + " (T(k) is a rotation by k w_i)",
       "identity", {"sinusoidal.identity.oracle", "sinusoidal.shift.compose.f64"}},
      {"SIN-ROT-3", sin, "Sinusoidal.ShiftIsOrthogonalAndReversedByTranspose", "T(k) T(k)^T = I and T(-k) = T(k)^T",
       kS000 + "; " + kS002 + " (rotation matrix)", "identity",
       {"sinusoidal.identity.oracle", "sinusoidal.shift.orthogonality.f64", "sinusoidal.shift.orthogonality.f32",
        "sinusoidal.shift.operator.f64"}},
      {"SIN-ROT-4", sin, "Sinusoidal.BlasBlockShiftEqualsDirectRows",
       "apply_shift(T(k), PE(p..p+n-1)) (cblas rot and gemm) = sinusoidal_table(p+k, n)", kS000, "differential",
       {"sinusoidal.shift.differential.f64", "sinusoidal.shift.differential.f32"}},
      {"SIN-NORM-1", sin, "Sinusoidal.EveryRowHasNormSquaredHalfTheDimension",
       "||PE(p)||^2 = d/2 for even d; floor(d/2) with a zero-pad column (it adds 0); the fairseq padding row has "
       "norm 0",
       kS000 + " (PE(p).PE(p) = d_m/2)", "identity",
       {"sinusoidal.identity.oracle", "sinusoidal.norm.f32", "sinusoidal.norm.f64", "sinusoidal.table.exact_values"}},
      {"SIN-DOT-1", sin, "Sinusoidal.DotProductDependsOnlyOnTheOffset",
       "PE(p).PE(p+k) = sum_i cos(k w_i), independent of p", kS000 + " (eq. 2.3)", "identity",
       {"sinusoidal.identity.oracle", "sinusoidal.dot.f32", "sinusoidal.dot.f64"}},
      {"SIN-DOT-2", sin, "Sinusoidal.DotProductIsSymmetricInTheOffset",
       "PE(p).PE(p+k) = PE(p).PE(p-k): the dot product cannot tell direction", kS000 + "; " + kConv, "identity",
       {"sinusoidal.identity.oracle", "sinusoidal.dot.f32", "sinusoidal.dot.f64"}},
      {"SIN-DOT-3", sin, "Sinusoidal.GramMatrixOfConsecutivePositionsIsSymmetricToeplitz",
       "G = PE PE^T over positions p..p+n-1 has G[i][j] = sum_k cos((j-i) w_k): symmetric Toeplitz", kS000 + "; " + kConv,
       "reference", {"sinusoidal.gram.f32", "sinusoidal.gram.f64", "sinusoidal.gram.symmetry"}},
      {"SIN-BND-1", sin, "Sinusoidal.EveryEntryLiesInMinusOneToOne", "-1 <= PE(p)_c <= 1 for every p, c", kS001,
       "identity", {"sinusoidal.table.range"}},
      {"SIN-BND-2", sin, "Sinusoidal.PositionZeroIsZeroOnSinSlotsAndOneOnCosSlots",
       "PE(0) = 0 on sin slots, 1 on cos slots (exactly); zero-pad column and padding row exactly 0", kConv, "identity",
       {"sinusoidal.table.exact_values"}},
      {"SIN-BND-3", sin, "Sinusoidal.FrequenciesStrictlyDecrease", "w_0 > w_1 > ... > w_{h-1} > 0", kConv + "; " + kS001,
       "identity", {"sinusoidal.identity.oracle", "sinusoidal.frequency.exact.f64", "sinusoidal.frequency.emulated.f32"}},
      {"SIN-DIST-1", sin, "Sinusoidal.DistinctPositionsHaveDistinctEncodings",
       "p != q => PE(p) != PE(q) (pair 0 alone: (p-q) w_0 is never a multiple of 2 pi since pi is irrational and w_0 "
       "rational); fast rows distinct for all p != q < 2^16",
       kS001 + "; " + kS002 + " (lcm of periods)", "identity", {"sinusoidal.distinct.margin"}},
      {"SIN-EXT-1", sin, "Sinusoidal.EncodingExtendsToPositionsNeverSeen",
       "PE(p) is defined for every |p| <= 2^40 (no maximum length, no table to outgrow) and matches the oracle there, "
       "through both sinusoidal_rows(p) and sinusoidal_table(p - j, j + 1)",
       kS001 + " (item 3); " + kS002, "reference",
       {"sinusoidal.table.exact.f32.scaled", "sinusoidal.table.exact.f32.kernel", "sinusoidal.table.exact.f64.scaled",
        "sinusoidal.table.emulated.f32.scaled", "sinusoidal.table.emulated.f32.kernel",
        "sinusoidal.table.emulated.f64.scaled", "sinusoidal.table.emulated.f64.kernel", "sinusoidal.table.range",
        "sinusoidal.table.exact_values"}},
      {"SIN-ACC-1", sin, "Sinusoidal.FastTableMatchesOracleAtHardPositions",
       "|PE_fast(p)_c - PE(p)_c| within every table budget row at the hard positions, every preset, regime, dtype",
       "DESIGN.md §3", "reference",
       {"sinusoidal.table.exact.f32.scaled", "sinusoidal.table.exact.f32.kernel", "sinusoidal.table.exact.f64.scaled",
        "sinusoidal.table.emulated.f32.scaled", "sinusoidal.table.emulated.f32.kernel",
        "sinusoidal.table.emulated.f64.scaled", "sinusoidal.table.emulated.f64.kernel", "sinusoidal.table.range",
        "sinusoidal.table.exact_values"}},
      {"SIN-ACC-3", sin, "Sinusoidal.FastTableMatchesOracleForAnySpec",
       "the table budget rows hold for generated specs (rules, layouts, bases 2..1e7, min_timescale, signed positions, "
       "padding rows, dims 2..8192) at generated positions and block offsets",
       "DESIGN.md §3", "reference",
       {"sinusoidal.table.exact.f32.scaled", "sinusoidal.table.exact.f32.kernel", "sinusoidal.table.exact.f64.scaled",
        "sinusoidal.table.emulated.f32.scaled", "sinusoidal.table.emulated.f32.kernel",
        "sinusoidal.table.emulated.f64.scaled", "sinusoidal.table.emulated.f64.kernel", "sinusoidal.table.range",
        "sinusoidal.table.exact_values"}},
      {"SIN-ACC-2", sin, "Sinusoidal.FrequenciesMatchOracle",
       "sinusoidal_frequencies = RN64(w_k) (exact regime) / the emulated float32 w_k", "DESIGN.md §3", "reference",
       {"sinusoidal.frequency.exact.f64", "sinusoidal.frequency.emulated.f32"}},
      {"SIN-PRE-1", sin, "SinusoidalPreset.VaswaniIsInterleavedPaperFormula",
       "vaswani: PE[p, 2k] = sin(p / 10000^(2k/d)), PE[p, 2k+1] = cos(p / 10000^(2k/d))", kConv + " item 1", "reference",
       {"sinusoidal.table.exact.f32.scaled", "sinusoidal.table.exact.f64.scaled"}},
      {"SIN-PRE-2", sin, "SinusoidalPreset.MarianIsHalvesWithPaperFrequencies",
       "marian: PE[p, k] = sin(p 10000^(-2k/d)), PE[p, d/2 + k] = cos(p 10000^(-2k/d))", kConv + " item 2", "reference",
       {"sinusoidal.table.exact.f32.scaled", "sinusoidal.table.exact.f64.scaled"}},
      {"SIN-PRE-3", sin, "SinusoidalPreset.Tensor2TensorMatchesGetTimingSignal1d",
       "t2t: inv_ts[k] = min_ts exp(-k ln(max_ts/min_ts)/max(h-1, 1)), [sin | cos] halves, odd d zero-padded, last "
       "frequency exactly 1/max_ts; emulated = the float32 steps",
       kConv + " item 3", "reference",
       {"sinusoidal.table.exact.f32.scaled", "sinusoidal.table.exact.f64.scaled", "sinusoidal.table.emulated.f32.scaled",
        "sinusoidal.frequency.exact.f64"}},
      {"SIN-PRE-4", sin, "SinusoidalPreset.FairseqMatchesGetEmbeddingAndMakePositions",
       "fairseq: row p col k < h = sin(p exp(-k ln(10000)/(h-1))), col h+k = cos(...), odd d -> zero last column, row "
       "padding_idx = 0, first token at row padding_idx + 1; emulated = the float32 steps",
       kConv + " item 4", "reference",
       {"sinusoidal.table.exact.f32.scaled", "sinusoidal.table.exact.f64.scaled", "sinusoidal.table.emulated.f32.scaled",
        "sinusoidal.table.exact_values"}},
      {"SIN-ERR-1", sin, "SinusoidalErrors.InvalidArgumentsThrowErrorNamingTheParameter",
       "invalid spec or argument -> posenc::Error whose message names the parameter, value and accepted range",
       "DESIGN.md §7", "identity", {}},
  };
}

const std::vector<Claim>& ledger() {
  static const std::vector<Claim> c = make_claims();
  return c;
}

struct RowStats {
  std::uint64_t cases = 0;
  double max_error = -1.0;
  std::string worst_input;
  std::map<std::string, std::uint64_t> failures;  // class or "over budget" -> count
};

struct ClaimStats {
  std::uint64_t cases = 0;
  std::map<std::string, std::uint64_t> regions;
  std::map<std::string, RowStats> rows;
};

std::mutex g_mutex;
std::map<std::string, ClaimStats, std::less<>>& stats() {
  static std::map<std::string, ClaimStats, std::less<>> s;
  return s;
}

ClaimStats& stats_of(std::string_view id) {
  auto& s = stats();
  auto it = s.find(id);
  if (it == s.end()) {
    (void)claim(id);  // unknown claim ids are programming errors
    it = s.emplace(std::string(id), ClaimStats{}).first;
  }
  return it->second;
}

std::string iso_date() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string fmt(double x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

std::span<const Claim> claims() { return ledger(); }

const Claim& claim(std::string_view id) {
  for (const auto& c : ledger())
    if (c.id == id) return c;
  throw std::out_of_range("claims: no claim with id '" + std::string(id) + "'");
}

void count_case(std::string_view claim_id) {
  std::lock_guard lock(g_mutex);
  ++stats_of(claim_id).cases;
}

void tag(std::string_view claim_id, std::string_view region) {
  std::lock_guard lock(g_mutex);
  ++stats_of(claim_id).regions[std::string(region)];
}

bool record(std::string_view claim_id, std::string_view row_id, const Measure& m, const Describe& describe) {
  const BudgetRow& row = budget(row_id);
  const bool within = m.ok() && m.err <= row.bound;
  std::lock_guard lock(g_mutex);
  RowStats& r = stats_of(claim_id).rows[std::string(row_id)];
  ++r.cases;
  const double e = m.ok() ? m.err : std::numeric_limits<double>::infinity();
  if (!m.ok()) ++r.failures[std::string(to_string(m.cls))];
  else if (!within) ++r.failures["over budget"];
  if (e > r.max_error) {
    r.max_error = e;
    r.worst_input = describe ? describe() : std::string();
    if (!m.ok()) r.worst_input = "[" + std::string(to_string(m.cls)) + "] " + r.worst_input;
  }
  return within;
}

std::optional<std::string> check(std::string_view claim_id, std::string_view row_id, const Measure& m, double computed,
                                 const Real* reference, const Describe& inputs) {
  if (record(claim_id, row_id, m, inputs)) return std::nullopt;
  const BudgetRow& row = budget(row_id);
  std::ostringstream o;
  o << "claim " << claim_id << " (" << claim(claim_id).test << ") violates budget row " << row_id << "\n"
    << "  inputs:    " << (inputs ? inputs() : std::string("?")) << "\n"
    << "  computed:  " << dec_hex(computed) << "\n";
  if (reference) o << "  reference: " << ref40(*reference) << "\n";
  o << "  class:     " << to_string(m.cls) << "\n"
    << "  error:     " << (m.ok() ? fmt(m.err) : std::string("n/a")) << " (" << row.metric << ")\n"
    << "  bound:     " << fmt(row.bound) << "  [" << row.domain << "]\n"
    << "  RC_PARAMS: " << (std::getenv("RC_PARAMS") ? std::getenv("RC_PARAMS") : "(unset)")
    << " (RapidCheck prints the reproduce string at exit)";
  return o.str();
}

std::string run_meta_json(std::string_view program) {
  const BuildInfo b = build_info();
  const BlasInfo blas = blas_info();
  nlohmann::json j;
  j["program"] = std::string(program);
  j["commit"] = b.commit;
  j["compiler"] = b.compiler;
  j["flags"] = b.flags;
  j["build_type"] = b.build_type;
  j["blas_core"] = blas.core;
  j["blas_threads"] = blas.threads;
  j["omp_threads"] = omp_get_max_threads();
  const char* rc = std::getenv("RC_PARAMS");
  j["rc_params"] = rc ? rc : "";
  j["date"] = iso_date();
  return j.dump();
}

bool write_proofs(std::string_view program) {
  const char* dir = std::getenv("POSENC_RESULTS_DIR");
  if (!dir || !*dir) return true;
  // Test name -> status, from GoogleTest's results of this process.
  std::map<std::string, std::string> status;
  const auto* ut = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < ut->total_test_suite_count(); ++i) {
    const auto* suite = ut->GetTestSuite(i);
    for (int k = 0; k < suite->total_test_count(); ++k) {
      const auto* info = suite->GetTestInfo(k);
      const std::string name = std::string(suite->name()) + "." + info->name();
      std::string st = "not run";
      if (info->should_run() && info->result() != nullptr && !info->result()->Skipped()) {
        // A test that ran has a start timestamp; Passed() is also true for tests that never ran.
        if (info->result()->start_timestamp() != 0 || info->result()->total_part_count() > 0)
          st = info->result()->Failed() ? "failed" : "passed";
      }
      status[name] = st;
    }
  }
  nlohmann::json out;
  out["meta"] = nlohmann::json::parse(run_meta_json(program));
  out["claims"] = nlohmann::json::array();
  std::lock_guard lock(g_mutex);
  for (const Claim& c : ledger()) {
    auto st = status.find(c.test);
    if (st == status.end()) continue;  // the claim's test lives in another program
    nlohmann::json e;
    e["id"] = c.id;
    e["scheme"] = c.scheme;
    e["test"] = c.test;
    e["statement"] = c.statement;
    e["source"] = c.source;
    e["oracle"] = c.oracle;
    const auto it = stats().find(c.id);
    const ClaimStats empty;
    const ClaimStats& s = it == stats().end() ? empty : it->second;
    // A claim also fails when another test of this program (a named regression case) recorded a case of
    // it outside its budget.
    bool any_failure = false;
    for (const auto& [rid, rs] : s.rows) any_failure = any_failure || !rs.failures.empty();
    e["status"] = (st->second == "passed" && any_failure) ? std::string("failed") : st->second;
    e["cases"] = s.cases;
    // Headline row: the one closest to its bound (largest max_error / bound; bound 0 rows count as
    // tight when their max error is positive).
    const RowStats* head = nullptr;
    std::string head_id;
    double head_ratio = -1;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [rid, rs] : s.rows) {
      const BudgetRow& br = budget(rid);
      const double ratio = br.bound > 0 ? rs.max_error / br.bound : (rs.max_error > 0 ? INFINITY : 0.0);
      if (ratio > head_ratio) head_ratio = ratio, head = &rs, head_id = rid;
      nlohmann::json r;
      r["budget_row"] = rid;
      r["metric"] = br.metric;
      r["bound"] = br.bound;
      r["cases"] = rs.cases;
      r["max_error"] = std::isfinite(rs.max_error) ? nlohmann::json(rs.max_error) : nlohmann::json(nullptr);
      r["worst_input"] = rs.worst_input;
      r["failures"] = rs.failures;
      rows.push_back(r);
    }
    if (head) {
      const BudgetRow& br = budget(head_id);
      e["budget_row"] = head_id;
      e["metric"] = br.metric;
      e["bound"] = br.bound;
      e["max_error"] = std::isfinite(head->max_error) ? nlohmann::json(head->max_error) : nlohmann::json(nullptr);
      e["worst_input"] = head->worst_input;
    } else {
      e["budget_row"] = c.budget_rows.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.budget_rows.front());
      e["metric"] = c.budget_rows.empty() ? nlohmann::json(nullptr) : nlohmann::json(budget(c.budget_rows.front()).metric);
      e["bound"] = c.budget_rows.empty() ? nlohmann::json(nullptr) : nlohmann::json(budget(c.budget_rows.front()).bound);
      e["max_error"] = nullptr;
      e["worst_input"] = nullptr;
    }
    e["regions"] = s.regions;
    e["rows"] = rows;
    e["budget_rows"] = c.budget_rows;
    out["claims"].push_back(e);
  }
  const std::string path = std::string(dir) + "/proofs-" + std::string(program) + ".json";
  std::ofstream f(path);
  if (!f) {
    std::fprintf(stderr, "posenc: cannot write %s\n", path.c_str());
    return false;
  }
  f << out.dump(2) << "\n";
  return static_cast<bool>(f);
}

}  // namespace posenc::test
