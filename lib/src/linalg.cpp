// Matrix algebra on encodings (posenc/linalg.hpp).
#include "posenc/linalg.hpp"

#include <string>

#include "core/blas.hpp"
#include "posenc/blas.hpp"
#include "posenc/error.hpp"

namespace posenc {
namespace {

template <class T>
void gram_impl(std::span<const T> block, std::size_t rows, std::size_t dim, std::span<T> out) {
  if (rows == 0) throw Error("gram_matrix", "rows", "0", "an integer >= 1");
  if (dim == 0) throw Error("gram_matrix", "dim", "0", "an integer >= 1");
  if (rows > block.size() / dim)
    throw Error("gram_matrix", "block.size()", std::to_string(block.size()), ">= rows * dim");
  if (rows > out.size() / rows)
    throw Error("gram_matrix", "out.size()", std::to_string(out.size()), ">= rows * rows = " + std::to_string(rows) + "^2");
  const blasint n = core::to_blasint(rows, "gram_matrix", "rows");
  const blasint k = core::to_blasint(dim, "gram_matrix", "dim");
  prepare_blas();
  core::syrk_upper(n, k, block.data(), out.data());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < i; ++j) out[i * rows + j] = out[j * rows + i];
}

}  // namespace

void gram_matrix(std::span<const float> b, std::size_t rows, std::size_t dim, std::span<float> out) {
  gram_impl(b, rows, dim, out);
}
void gram_matrix(std::span<const double> b, std::size_t rows, std::size_t dim, std::span<double> out) {
  gram_impl(b, rows, dim, out);
}

}  // namespace posenc
