// Which OpenBLAS kernel set runs, and re-executing once to get the best one (see posenc/blas.hpp).
#include "posenc/blas.hpp"

#include <cblas.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern "C" {
char* openblas_get_corename(void);
char* openblas_get_config(void);
int openblas_get_num_threads(void);
}

namespace posenc {
namespace {

// ISA level of an OpenBLAS core name: 3 AVX-512, 2 AVX2+FMA, 1 AVX, 0 older.
int level_of(std::string_view core) {
  for (std::string_view c : {"skylakex", "cooperlake", "sapphirerapids"})
    if (core == c) return 3;
  for (std::string_view c : {"haswell", "zen", "skylake"})
    if (core == c) return 2;
  for (std::string_view c : {"sandybridge", "bulldozer", "piledriver", "steamroller", "excavator"})
    if (core == c) return 1;
  return 0;
}

std::string lower(const char* s) {
  std::string r = s ? s : "";
  for (char& ch : r) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}

std::string best_core_of_cpu() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  if (__builtin_cpu_supports("avx")) return "Sandybridge";
  return "Prescott";
}

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}

}  // namespace

BlasInfo blas_info() {
  BlasInfo b;
  b.core = openblas_get_corename() ? openblas_get_corename() : "unknown";
  b.config = openblas_get_config() ? openblas_get_config() : "";
  b.threads = openblas_get_num_threads();
  b.best_core = best_core_of_cpu();
  b.fallback = level_of(lower(b.core.c_str())) < level_of(lower(b.best_core.c_str()));
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  b.forced = forced && *forced;
  return b;
}

void select_blas_kernels(int, char** argv) {
  if (env_is("POSENC_BLAS_AUTO", "0") || std::getenv("POSENC_BLAS_REEXECUTED")) return;
  const BlasInfo b = blas_info();
  if (b.forced || !b.fallback) return;
  setenv("OPENBLAS_CORETYPE", b.best_core.c_str(), 1);
  setenv("POSENC_BLAS_REEXECUTED", "1", 1);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  // exec failed: carry on with the slow kernels, but say so.
  std::fprintf(stderr, "posenc: warning: could not re-execute with OPENBLAS_CORETYPE=%s; BLAS runs %s kernels\n",
               b.best_core.c_str(), b.core.c_str());
}

void warn_if_blas_fallback() {
  static std::atomic<bool> done{false};
  if (done.exchange(true) || env_is("POSENC_BLAS_QUIET", "1")) return;
  const BlasInfo b = blas_info();
  if (!b.fallback) return;
  if (b.forced)
    std::fprintf(stderr,
                 "posenc: note: OPENBLAS_CORETYPE=%s is set, older kernels than this CPU supports (%s); BLAS "
                 "may run up to 4x slower. Unset it (or set it to %s) for the fast kernels. POSENC_BLAS_QUIET=1 "
                 "silences this.\n",
                 b.core.c_str(), b.best_core.c_str(), b.best_core.c_str());
  else
    std::fprintf(stderr,
                 "posenc: warning: OpenBLAS runs its %s kernels but this CPU supports %s; set "
                 "OPENBLAS_CORETYPE=%s before starting the program (or call posenc::select_blas_kernels "
                 "first in main) for up to 4x faster BLAS. POSENC_BLAS_QUIET=1 silences this.\n",
                 b.core.c_str(), b.best_core.c_str(), b.best_core.c_str());
}

}  // namespace posenc
