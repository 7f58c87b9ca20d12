// lib/src/core/simd.hpp — dispatching a Highway kernel to the target posenc chose (posenc/simd.hpp).
//
// A kernel file compiles its code for every target (hwy/foreach_target.h) and exports it (HWY_EXPORT); its callers
// go through POSENC_DISPATCH(Kernel)(args...), which picks the entry of the target posenc chose instead of
// Highway's global choice (HWY_DYNAMIC_DISPATCH), so that POSENC_SIMD and set_simd_target cap posenc's kernels
// without touching the choice of any other Highway user in the process.
#pragma once

#include <cstddef>
#include <cstdint>

namespace posenc::core {

// The Highway target bits posenc's kernels may use: the CPU's supported targets capped by the process's choice.
std::int64_t simd_allowed() noexcept;

// The index into a HWY_EXPORT table for the allowed targets, given the chosen-target mask of the kernel's
// translation unit (HWY_CHOSEN_TARGET_MASK_TARGETS: the targets it compiled, in Highway's table order).
std::size_t simd_index(std::int64_t compiled_mask) noexcept;

}  // namespace posenc::core

#define POSENC_DISPATCH(FUNC) (*HWY_DISPATCH_TABLE(FUNC)[::posenc::core::simd_index(HWY_CHOSEN_TARGET_MASK_TARGETS)])
