// lib/src/core/angle_table.hpp — the exact angle core shared by every scheme whose numbers are sin and cos of
// p * omega_k: sinusoidal tables, RoPE cos/sin caches and rotations, relative sinusoid tables.
//
// What it computes. For a vector of frequencies omega_k (k < h) held in double-double, (sin, cos)(p omega_k)
// for any integer position |p| <= 2^41 with |p omega_k| <= 2^45, each value within
//     E = 2 sqrt2 eps_sc + 2^-54 + 2^-53  (~ 4.51 * 2^-53 absolute),   eps_sc = 2^-53 + 2^-57,
// whatever p is (budget row sinusoidal.table.exact.f64.scaled gives the derivation).
//
// How. Positions are grouped in blocks of B consecutive positions whose first position, the anchor p_a, is a
// multiple of B (B = 64 for every width up to 2^15 pairs; table_writer.hpp cuts rows into column chunks so the
// block never needs to shrink for wide rows). The anchor's (sin, cos)(p_a omega_k) comes from the double-double angle reduced by a
// triple-double pi/2 (trig.hpp: within eps_sc). A table J of (sin, cos)(j omega_k), j < B, is built once per
// frequency vector the same way. Position p_a + j is then one complex multiply
//     sin((p_a + j) w) = s_a c_j + c_a s_j,     cos((p_a + j) w) = c_a c_j - s_a s_j,
// from values each within eps_sc of exact: no recurrence, so the error never grows along a row or with p.
// Because anchors sit at multiples of B whatever range is asked for, a position's values are bit-for-bit the
// same in every table, list or call that contains it (the reproducibility claim), and position 0 is always an
// anchor (sin exactly 0, cos exactly 1).
//
// An AngleTable is immutable after construction and safe to share between threads; its methods are const and
// write only into the caller's buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace posenc::core {

// omega_k = hi[k] + lo[k], |lo[k]| <= ulp(hi[k]) / 2: each frequency to ~2^-104.9 relative.
struct DDFrequencies {
  std::vector<double> hi, lo;
  std::size_t size() const noexcept { return hi.size(); }
};

// omega_k = scale * base^(-(k * num_per_k) / den), k = 0..count-1, computed in binary128 as the product of two
// expq values of multiples of logq(base) (each within 2^-107 relative, the product within 2^-105.9) and split into
// double-double (lo within 2^-106): relative error <= 2^-104.9 for |e ln base| <= 16.1.
DDFrequencies geometric_frequencies(std::size_t count, double scale, double base, double num_per_k, double den);

// 64-byte aligned scratch of n elements; allocation failure throws std::bad_alloc (call it outside parallel
// regions).
template <class T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t n)
      : data_(static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t{64}))), size_(n) {}
  T* get() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }

 private:
  struct Free {
    void operator()(T* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<T[], Free> data_;
  std::size_t size_ = 0;
};

class AngleTable {
 public:
  explicit AngleTable(DDFrequencies f);

  std::size_t pairs() const noexcept { return f_.size(); }
  std::size_t block() const noexcept { return B_; }
  const DDFrequencies& frequencies() const noexcept { return f_; }

  // The anchor of position p: the multiple of B at or below p.
  std::int64_t anchor_of(std::int64_t p) const noexcept;
  // (sin, cos)(p omega_k) for every k, directly from the double-double angle (within eps_sc). Used for anchors
  // and for single angles such as a shift operator's k omega_k.
  void direct(std::int64_t p, double* s, double* c) const noexcept { direct(p, 0, pairs(), s, c); }
  // The same for pairs k0 .. k0 + n - 1 only, into s[0 .. n-1], c[0 .. n-1].
  void direct(std::int64_t p, std::size_t k0, std::size_t n, double* s, double* c) const noexcept;
  // Position anchor + j, 0 <= j < block(), from the anchor's values (sa, ca): one complex multiply with J[j],
  // clamped to [-1, 1] (the exact values lie there; the product can overshoot 1 by ~3.5 * 2^-53).
  void rotate(const double* sa, const double* ca, std::size_t j, double* s, double* c) const noexcept;
  // J is stored in column chunks of kChunk pairs, each chunk's B rows contiguous (sin then cos per row), so
  // that a writer going through a block chunk by chunk reads one contiguous slice (rows at a power-of-two
  // stride fell into the same cache sets and missed L2). j_sin(j, k0) / j_cos(j, k0): (sin, cos)(j omega_k)
  // for k = k0 .. min(k0 + kChunk, pairs()) - 1; k0 a multiple of kChunk.
  static constexpr std::size_t kChunk = 128;
  const double* j_sin(std::size_t j, std::size_t k0) const noexcept { return j_.get() + j_index(j, k0); }
  const double* j_cos(std::size_t j, std::size_t k0) const noexcept { return j_.get() + j_index(j, k0) + kChunk; }

 private:
  DDFrequencies f_;
  std::size_t B_ = 0;
  std::size_t j_index(std::size_t j, std::size_t k0) const noexcept { return (k0 * B_ + j * kChunk) * 2; }
  AlignedBuffer<double> j_;  // J, chunked as j_sin / j_cos describe
};

}  // namespace posenc::core
