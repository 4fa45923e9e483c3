// Several matrix-vector products with one matrix in one pass over its rows (Note [row passes]
// in matvec_pass.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "npc/dtype.hpp"

namespace npc::ops {

/// One product of a row pass over a matrix P (rows x cols, row-major: row i starts at
/// `p + i * row_stride` bytes and its elements are contiguous).
struct PassProduct {
  /// true: out[i] = P[i, :] . v for i < rows (`P @ v`, v of cols elements);
  /// false: out[j] = sum_i c[i] * P[i, j] for j < cols (`c @ P`, c of rows elements).
  bool dot = true;
  /// The vector (v, or c when `from` < 0), contiguous.
  const std::byte* v = nullptr;
  /// For a product that is not a dot: the index in the span of an earlier dot product whose
  /// result is c (`A.T @ (A @ x)` in one pass), or -1.
  int from = -1;
  /// The result, contiguous: rows elements for a dot, cols otherwise.
  std::byte* out = nullptr;
};

/// Computes every product of `products` reading each row of P once, on at most
/// parallel::num_threads() threads. dtype `t`: float32 or float64 (sums in that dtype, as
/// BLAS's sgemv/dgemv); other dtypes return false and write nothing. The summation order is
/// fixed by the shape alone (not by the CPU's vector width or the thread count): element j of
/// a row's dot goes to lane j % (64 / itemsize), lanes combined pairwise; a non-dot product
/// sums fixed blocks of rows and then the blocks in order. Operands must not overlap outputs.
/// `largest`, when given, receives the largest magnitude of P's elements, NaN aside (Note
/// [row pass bounds]).
bool matvec_pass(DType t, const std::byte* p, int64_t rows, int64_t cols, int64_t row_stride,
                 std::span<const PassProduct> products, double* largest = nullptr);

/// matvec_pass() with the loops for vectors of `vector_bytes` bytes (16, 32 or 64; 0: the
/// widest the CPU has); false when the CPU lacks them. For tests: every width gives the same
/// bits.
bool matvec_pass_isa(int vector_bytes, DType t, const std::byte* p, int64_t rows, int64_t cols, int64_t row_stride,
                     std::span<const PassProduct> products, double* largest = nullptr);

}  // namespace npc::ops
