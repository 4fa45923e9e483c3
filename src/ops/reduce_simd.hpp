#pragma once
// Internal: vector loops for reductions (reduce.cpp), compiled for several instruction sets
// and picked at load time (Note [vector loops] in reduce_simd.cpp). Each returns false where
// no vector loop exists (a compiler without GCC vector types); the caller then runs its own.
#include <cstddef>
#include <cstdint>

namespace npc::ops::simd {

/// Contiguous float max/min over q[0..n): *acc = op(*acc, q...), with NumPy's NaN rule (a NaN
/// anywhere wins: the first NaN of q; an *acc that is NaN stays). The result is bit-identical
/// to the portable eight-lane loop in reduce.cpp (same lane assignment, same combine order).
bool minmax_f64(const double* q, int64_t n, double* acc, bool is_max);
bool minmax_f32(const float* q, int64_t n, float* acc, bool is_max);

/// The binary ufuncs a row accumulation runs (Note [row accumulation]).
enum class RowOp { Add, Multiply, Max, Min };

/// acc[i] = op(acc[i], x[i * xs]) for i < n (xs in elements): the ufunc's loop, vectorized.
bool rows_f64(RowOp op, double* acc, const double* x, int64_t xs, int64_t n);
bool rows_f32(RowOp op, float* acc, const float* x, int64_t xs, int64_t n);

/// *out = NumPy's pairwise sum of x[0..n) (same association, same bits as the scalar
/// pairwise_sum in reduce.cpp).
bool pairwise_sum_f64(const double* x, int64_t n, double* out);
bool pairwise_sum_f32(const float* x, int64_t n, float* out);

/// dst[i] = float16 value at src + i * ss (bytes) converted to float (double), i < n, with the
/// F16C conversion instructions (exact; a signalling NaN comes out quiet); false when the CPU
/// lacks them.
bool half_to_f32(const std::byte* src, int64_t ss, float* dst, int64_t n);
bool half_to_f64(const std::byte* src, int64_t ss, double* dst, int64_t n);

}  // namespace npc::ops::simd
