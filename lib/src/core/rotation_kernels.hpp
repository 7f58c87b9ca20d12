// lib/src/core/rotation_kernels.hpp — the pair rotation's vector kernels (rotation_kernels.cpp: Highway, every target,
// dispatched to posenc's target, posenc/simd.hpp). Each rotates `heads` head vectors as rotate_heads does
// (pair_rotation.hpp), bit for bit, and returns true; false, having written nothing, for a formula it does not serve
// ((float, double) products, (float, float) fused) or on a scalar target.
#pragma once

#include <cstddef>

#include "pair_rotation.hpp"

namespace posenc::core::kernels {

bool rotate(float* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<double>& r,
            std::ptrdiff_t prefetch) noexcept;
bool rotate(double* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<double>& r,
            std::ptrdiff_t prefetch) noexcept;
bool rotate(float* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<float>& r,
            std::ptrdiff_t prefetch) noexcept;

}  // namespace posenc::core::kernels
