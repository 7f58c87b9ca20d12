// benchmarks/memory_kernels.hpp — the memory baselines' single-thread loops, Highway code on the best target the CPU
// has (memory_kernels.cpp); baselines.cpp splits them over threads.
#pragma once

#include <cstddef>

namespace posenc_bench {

// n bytes of `pattern` at p (any alignment): non-temporal vector stores, fenced (stream), or ordinary ones.
void fill_bytes(unsigned char* p, std::size_t n, unsigned char pattern, bool stream);
// p[i] = p[i] * a + b for i < n, in place (vector multiply-adds over the aligned body).
void rmw(float* p, std::size_t n, float a, float b);
void rmw(double* p, std::size_t n, double a, double b);
// Highway's name of the target these loops run on ("AVX3", "AVX2", "NEON", ...).
const char* memory_target();

}  // namespace posenc_bench
