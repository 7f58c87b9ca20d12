// posenc/linalg.hpp — matrix algebra on encodings, through cblas (OpenBLAS).
#pragma once

#include <cstddef>
#include <span>

namespace posenc {

// out (rows x rows, row-major, both triangles filled) = block * block^T via cblas ?syrk; block is rows x dim,
// row-major. For a block of consecutive sinusoidal rows this is the symmetric Toeplitz matrix
// G[i][j] = sum_k cos((j-i) w_k) (claim SIN-DOT-3; accuracy: budget rows sinusoidal.gram.f32/f64).
// Throws Error naming rows, dim, block.size() or out.size() when the sizes do not fit.
void gram_matrix(std::span<const float> block, std::size_t rows, std::size_t dim, std::span<float> out);
void gram_matrix(std::span<const double> block, std::size_t rows, std::size_t dim, std::span<double> out);

}  // namespace posenc
