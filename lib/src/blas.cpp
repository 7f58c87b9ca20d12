// Which OpenBLAS kernel set runs, and re-executing once to get the best one (see posenc/blas.hpp).
#include "posenc/blas.hpp"

#include <cblas.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "posenc/error.hpp"

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

// The best OpenBLAS x86-64 core this CPU can run; elsewhere the core OpenBLAS chose (no fallback is detected).
std::string best_core_of_cpu() {
#if !defined(__x86_64__) && !defined(__i386__)
  return openblas_get_corename() ? openblas_get_corename() : "unknown";
#else
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  if (__builtin_cpu_supports("avx")) return "Sandybridge";
  return "Prescott";
#endif
}

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}

// The address-space limit (ulimit -v) in bytes; 0 when there is none.
std::uint64_t address_space_limit() {
  struct rlimit r {};
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<std::uint64_t>(r.rlim_cur);
}

// Whether `bytes` of address space can still be mapped (reserved without touching, then released).
bool can_map(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  munmap(p, bytes);
  return true;
}

// Set when the address space left cannot hold OpenBLAS's work buffer (blas_buffer_ready): BLAS calls refuse.
std::atomic<bool> blas_buffer_missing{false};

// Makes OpenBLAS allocate this thread's work buffer now, while nothing else competes for the address space:
// a 128 x 128 x 128 dgemm (large enough to bypass any small-matrix path that skips the buffer). False when the
// buffer cannot be mapped (the call is then not made: OpenBLAS would retry forever).
bool blas_buffer_ready() {
  if (!can_map(kBlasBufferBytes)) return false;
  std::vector<double> a(128 * 128, 0.0), c(128 * 128, 0.0);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 128, 128, 128, 1.0, a.data(), 128, a.data(), 128, 0.0,
              c.data(), 128);
  return true;
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
  const std::uint64_t limit = address_space_limit();
  if (!std::getenv("POSENC_BLAS_REEXECUTED")) {
    const BlasInfo b = blas_info();
    const bool core = !env_is("POSENC_BLAS_AUTO", "0") && !b.forced && b.fallback;
    // Each OpenBLAS worker thread maps a work buffer at start and retries forever when it cannot, and exit waits
    // for it: under a small ulimit -v every command hung at exit. Below this limit BLAS runs on the calling thread.
    const bool single = b.threads > 1 && limit != 0 &&
                        limit < kBlasThreadsMinAddressSpace + static_cast<std::uint64_t>(b.threads) * 2 * kBlasBufferBytes;
    if (core || single) {
      if (core) setenv("OPENBLAS_CORETYPE", b.best_core.c_str(), 1);
      if (single) setenv("OPENBLAS_NUM_THREADS", "1", 1);
      setenv("POSENC_BLAS_REEXECUTED", "1", 1);
      std::fflush(nullptr);
      execv("/proc/self/exe", argv);
      // exec failed: carry on, but say so.
      std::fprintf(stderr, "posenc: warning: could not re-execute with %s%s; BLAS runs %s kernels%s\n",
                   core ? "OPENBLAS_CORETYPE=" : "", core ? b.best_core.c_str() : "OPENBLAS_NUM_THREADS=1",
                   b.core.c_str(), single ? " and may hang at exit under this address-space limit" : "");
    }
  }
  // Under an address-space limit the calling thread's work buffer is taken now, before the program's own
  // allocations can leave too little for it; if it cannot be had, BLAS calls refuse (prepare_blas).
  if (limit != 0 && !blas_buffer_ready()) blas_buffer_missing = true;
}

void prepare_blas() {
  thread_local bool checked = false;
  if (!checked) {
    checked = true;
    // A thread whose buffer was not taken at start (a library host's thread): map-test it once.
    if (blas_buffer_missing || (address_space_limit() != 0 && !can_map(kBlasBufferBytes))) {
      checked = false;
      throw IoError("not enough address space for BLAS: OpenBLAS needs a " + std::to_string(kBlasBufferBytes >> 20) +
                    " MiB work buffer per calling thread, which the address-space limit (ulimit -v " +
                    std::to_string(address_space_limit() >> 10) + " KiB) leaves no room for");
    }
  }
  warn_if_blas_fallback();
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
