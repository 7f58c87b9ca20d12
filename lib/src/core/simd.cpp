#include "simd.hpp"

#include <hwy/targets.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "posenc/error.hpp"
#include "posenc/simd.hpp"

namespace posenc {
namespace {

// The names posenc gives Highway's targets (the kernels compile only targets with a fused multiply-add; SSSE3 and
// SSE4 are excluded in lib/CMakeLists.txt, so an x86-64 CPU without AVX2 runs "scalar").
struct Named {
  std::int64_t bit;
  const char* name;
};
constexpr std::array kNames{
#if HWY_ARCH_X86
    Named{HWY_AVX3_DL, "avx512-dl"}, Named{HWY_AVX3, "avx512"}, Named{HWY_AVX2, "avx2"},
#elif HWY_ARCH_ARM
    Named{HWY_SVE2_128, "sve2-128"}, Named{HWY_SVE_256, "sve256"}, Named{HWY_SVE2, "sve2"}, Named{HWY_SVE, "sve"},
    Named{HWY_NEON, "neon"},
#elif HWY_ARCH_RVV
    Named{HWY_RVV, "rvv"},
#endif
    Named{HWY_EMU128, "scalar"}, Named{HWY_SCALAR, "scalar"}};

// The kernels' targets: this file is compiled with the kernel files' flags (lib/CMakeLists.txt, posenc_kernels),
// so HWY_TARGETS here is the set they were compiled for.
constexpr std::int64_t kScalarBits = HWY_EMU128 | HWY_SCALAR;
constexpr std::int64_t kCompiled = HWY_TARGETS | kScalarBits;

// The cap: every target at or below the named one in Highway's order (lower bits are better targets).
std::int64_t cap_of(std::int64_t bit) { return (bit & kScalarBits) != 0 ? kScalarBits : ~(bit - 1); }

const Named* find(std::string_view name) {
  for (const Named& n : kNames)
    if (name == n.name && (n.bit & kCompiled)) return &n;
  return nullptr;
}

std::int64_t supported() { return (hwy::SupportedTargets() & kCompiled) | kScalarBits; }

// The cap the environment gives (POSENC_SIMD, or POSENC_DISABLE_AVX512=1): all targets when it names none.
std::int64_t env_cap() {
  if (const char* v = std::getenv("POSENC_SIMD"); v != nullptr && *v != '\0' && std::strcmp(v, "auto") != 0)
    if (const Named* n = find(v)) return cap_of(n->bit);
#if HWY_ARCH_X86
  if (const char* off = std::getenv("POSENC_DISABLE_AVX512"); off != nullptr && *off != '\0' && std::strcmp(off, "0") != 0)
    return cap_of(HWY_AVX2);
#endif
  return ~std::int64_t{0};
}

std::atomic<std::int64_t> g_allowed{0};  // 0: not decided yet

}  // namespace

namespace core {

std::int64_t simd_allowed() noexcept {
  std::int64_t a = g_allowed.load(std::memory_order_relaxed);
  if (a == 0) {
    static std::once_flag once;
    std::call_once(once, [] {
      std::int64_t expected = 0;
      g_allowed.compare_exchange_strong(expected, supported() & env_cap());  // unless set_simd_target came first
    });
    a = g_allowed.load(std::memory_order_relaxed);
  }
  return a;
}

std::size_t simd_index(std::int64_t compiled_mask) noexcept {
  const std::int64_t chosen = HWY_CHOSEN_TARGET_SHIFT(simd_allowed()) | HWY_CHOSEN_TARGET_MASK_SCALAR;
  return hwy::Num0BitsBelowLS1Bit_Nonzero64(static_cast<std::uint64_t>(chosen & compiled_mask));
}

}  // namespace core

std::vector<std::string> simd_targets() {
  std::vector<std::string> out;
  const std::int64_t s = supported();
  for (const Named& n : kNames)
    if ((n.bit & s) && (out.empty() || out.back() != n.name)) out.emplace_back(n.name);
  return out;
}

std::string simd_target() {
  const std::int64_t a = core::simd_allowed();
  for (const Named& n : kNames)
    if (n.bit & a) return n.name;
  return "scalar";
}

void set_simd_target(std::string_view name) {
  const std::int64_t cap = [&] {
    if (name == "auto") return ~std::int64_t{0};
    const Named* n = find(name);
    if (n == nullptr || !(n->bit & supported())) {
      std::string accepted = "auto", value = "'";
      for (const std::string& t : simd_targets()) accepted.append(", ").append(t);
      value.append(name).append("'");  // appended, not '+': GCC 12 reports a false -Wrestrict on "'" + string
      throw Error("posenc", "simd_target", value, accepted.append(" (the targets this build and CPU have)"),
                  "is not a target here");
    }
    return cap_of(n->bit);
  }();
  core::simd_allowed();  // decide the environment's choice first, so that it cannot overwrite this one
  g_allowed.store(supported() & cap, std::memory_order_relaxed);
}

void set_simd_target_from_environment() {
  const char* v = std::getenv("POSENC_SIMD");
  if (v == nullptr || *v == '\0') return;
  try {
    set_simd_target(v);
  } catch (const Error& e) {
    throw e.renamed("POSENC_SIMD");
  }
}

}  // namespace posenc
