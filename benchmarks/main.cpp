// benchmarks/main.cpp — posenc_bench: selects the BLAS kernels, records the methods context, runs the suite.
//
// Context written into every output (console header, JSON "context"): posenc_commit, posenc_run_id, posenc_version,
// build_type, compiler, flags (posenc::build_info()); blas_core, blas_core_best, blas_fallback, blas_forced,
// blas_config, blas_threads (posenc::blas_info()); omp_threads (omp_get_max_threads()); simd_target and
// simd_targets (posenc/simd.hpp: the target the vector kernels ran, POSENC_SIMD's cap applied, and those this build
// and CPU have); size_policy; store_isa (the baseline store kernel); timing.
//
// Names: every benchmark uses wall-clock time (UseRealTime), for which Google Benchmark appends
// "/real_time" to the name. The reporters below drop that suffix so names are exactly the contract of
// suites.hpp ("table/exact_f32/L:4096/d:512/threads:2"); the context key "timing" says so.
#include <benchmark/benchmark.h>
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "baselines.hpp"
#include "posenc/blas.hpp"
#include "posenc/build_info.hpp"
#include "posenc/error.hpp"
#include "posenc/simd.hpp"
#include "suites.hpp"

namespace {

// Forwards to another reporter with run_name.time_type cleared.
class ContractNames final : public benchmark::BenchmarkReporter {
 public:
  explicit ContractNames(std::unique_ptr<benchmark::BenchmarkReporter> inner) : inner_(std::move(inner)) {}
  bool ReportContext(const Context& context) override {
    // The streams are assigned to this object (by RunSpecifiedBenchmarks for the file reporter) before
    // the context is reported; hand them on.
    inner_->SetOutputStream(&GetOutputStream());
    inner_->SetErrorStream(&GetErrorStream());
    return inner_->ReportContext(context);
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> renamed = runs;
    for (Run& r : renamed) r.run_name.time_type.clear();
    inner_->ReportRuns(renamed);
  }
  void Finalize() override { inner_->Finalize(); }

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
};

// The output flags, read before benchmark::Initialize consumes them (same names and environment
// variables as Google Benchmark; Initialize still validates them).
struct OutputFlags {
  std::string format = "console";
  std::string out;
  std::string out_format = "json";
  std::string color = "auto";
  bool tabular = false;
};

bool truthy(std::string_view v) {
  return !(v == "0" || v == "false" || v == "False" || v == "FALSE" || v == "no" || v == "No" || v == "NO" ||
           v == "n" || v == "N" || v == "f" || v == "F" || v == "off" || v == "Off" || v == "OFF");
}

OutputFlags read_output_flags(int argc, char** argv) {
  OutputFlags f;
  struct Flag {
    const char* name;
    const char* env;
    std::string* value;
  };
  std::string tabular;
  const Flag flags[] = {{"benchmark_format", "BENCHMARK_FORMAT", &f.format},
                        {"benchmark_out", "BENCHMARK_OUT", &f.out},
                        {"benchmark_out_format", "BENCHMARK_OUT_FORMAT", &f.out_format},
                        {"benchmark_color", "BENCHMARK_COLOR", &f.color},
                        {"benchmark_counters_tabular", "BENCHMARK_COUNTERS_TABULAR", &tabular}};
  for (const Flag& fl : flags)
    if (const char* e = std::getenv(fl.env)) *fl.value = e;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    for (const Flag& fl : flags) {
      const std::string prefix = std::string("--") + fl.name;
      if (a == prefix) *fl.value = "true";
      else if (a.size() > prefix.size() && a.substr(0, prefix.size()) == prefix && a[prefix.size()] == '=')
        *fl.value = std::string(a.substr(prefix.size() + 1));
    }
  }
  f.tabular = !tabular.empty() && truthy(tabular);
  return f;
}

std::unique_ptr<benchmark::BenchmarkReporter> make_reporter(const std::string& format, bool color, bool tabular) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (format == "csv") {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
  }
  int opts = benchmark::ConsoleReporter::OO_None;
  if (color) opts |= benchmark::ConsoleReporter::OO_Color;
  if (tabular) opts |= benchmark::ConsoleReporter::OO_Tabular;
  return std::make_unique<benchmark::ConsoleReporter>(static_cast<benchmark::ConsoleReporter::OutputOptions>(opts));
}

}  // namespace

namespace posenc_bench {
namespace {
std::vector<std::pair<std::string, SchemeBenchmarks>>& scheme_benchmarks() {
  static std::vector<std::pair<std::string, SchemeBenchmarks>> r;
  return r;
}
}  // namespace
bool add_scheme_benchmarks(const char* scheme, SchemeBenchmarks fn) {
  scheme_benchmarks().emplace_back(scheme, fn);
  return true;
}
std::string register_all_benchmarks() {
  std::string out;
  for (const auto& [scheme, fn] : scheme_benchmarks()) out += (out.empty() ? "" : "; ") + fn();
  return out;
}
}  // namespace posenc_bench

int main(int argc, char** argv) {
  // First: may re-execute the program with OPENBLAS_CORETYPE set (never overrides a user-set one).
  posenc::select_blas_kernels(argc, argv);

  const OutputFlags flags = read_output_flags(argc, argv);
  // POSENC_SIMD: a name the library does not know would leave its choice automatic; here it is an error.
  try {
    posenc::set_simd_target_from_environment();
  } catch (const posenc::Error& e) {
    std::fprintf(stderr, "posenc_bench: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  const std::string sizes = posenc_bench::register_all_benchmarks();

  const posenc::BuildInfo build = posenc::build_info();
  const posenc::BlasInfo blas = posenc::blas_info();
  benchmark::AddCustomContext("posenc_commit", build.commit);
  benchmark::AddCustomContext("posenc_run_id", build.run_id);
  benchmark::AddCustomContext("posenc_version", build.version);
  benchmark::AddCustomContext("build_type", build.build_type);
  benchmark::AddCustomContext("compiler", build.compiler);
  benchmark::AddCustomContext("flags", build.flags);
  benchmark::AddCustomContext("blas_core", blas.core);
  benchmark::AddCustomContext("blas_core_best", blas.best_core);
  benchmark::AddCustomContext("blas_fallback", blas.fallback ? "true" : "false");
  benchmark::AddCustomContext("blas_forced", blas.forced ? "true" : "false");
  benchmark::AddCustomContext("blas_config", blas.config);
  benchmark::AddCustomContext("blas_threads", std::to_string(blas.threads));
  benchmark::AddCustomContext("omp_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("simd_target", posenc::simd_target());
  std::string targets;
  for (const std::string& t : posenc::simd_targets()) targets += (targets.empty() ? "" : ",") + t;
  benchmark::AddCustomContext("simd_targets", targets);
  benchmark::AddCustomContext(
      "size_policy",
      "memory-bound outputs only at <= 1 MiB (cache) or >= 512 MiB (DRAM): 2..256 MiB lands in the shared L3 "
      "and is unstable (DESIGN.md 5); " + sizes);
  benchmark::AddCustomContext("store_isa", posenc_bench::store_isa());
  benchmark::AddCustomContext("timing", "wall clock (UseRealTime); names omit Google Benchmark's /real_time suffix");

  const bool color = flags.color == "auto" ? ::isatty(STDOUT_FILENO) != 0 : truthy(flags.color);
  auto display = std::make_unique<ContractNames>(make_reporter(flags.format, color, flags.tabular));
  std::unique_ptr<ContractNames> file;
  if (!flags.out.empty())
    file = std::make_unique<ContractNames>(make_reporter(flags.out_format, false, flags.tabular));
  benchmark::RunSpecifiedBenchmarks(display.get(), file.get());
  benchmark::Shutdown();
  posenc_bench::release_scratch();
  return 0;
}
