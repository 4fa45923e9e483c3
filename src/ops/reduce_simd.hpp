#pragma once
// Internal: run-time dispatched vector loops for reductions (reduce.cpp).
#include <cstdint>

namespace npc::ops::simd {

/// Contiguous float max/min over q[0..n): *acc = op(*acc, q...), with NumPy's NaN rule (a NaN
/// anywhere wins: the first NaN of q; an *acc that is NaN stays). The result is bit-identical
/// to the portable eight-lane loop in reduce.cpp (same lane assignment, same combine order).
/// Returns false when the CPU lacks the instruction set (the caller then runs its own loop).
bool minmax_f64(const double* q, int64_t n, double* acc, bool is_max);
bool minmax_f32(const float* q, int64_t n, float* acc, bool is_max);

/// acc[i] = acc[i] + x[i] for i < n (the add ufunc's loop, vectorized); false when the CPU
/// lacks AVX2 (the caller then runs the ufunc's loop).
bool add_into_f64(double* acc, const double* x, int64_t n);
bool add_into_f32(float* acc, const float* x, int64_t n);

/// *out = NumPy's pairwise sum of x[0..n) (same association, same bits as the scalar
/// pairwise_sum_contig); false when the CPU lacks AVX2.
bool pairwise_sum_f64(const double* x, int64_t n, double* out);

}  // namespace npc::ops::simd
