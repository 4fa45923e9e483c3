#pragma once
// Internal: the elementwise executor (N-d strided iteration, OpenMP partitioning, floating-
// point status collection) shared by ufunc calls, reductions and scans.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ops/loops.hpp"

namespace npc::ops {

/// Up to 4 operands (nin + nout <= 4 for every row of ops.def).
inline constexpr int kMaxOperands = 4;
/// Operands run_elementwise takes: a ufunc's plus two (the where= mask and its context).
inline constexpr int kMaxExecOperands = kMaxOperands + 2;

/// Runs `fn` over `shape` for `nops` operands (kernel order: inputs then outputs) with byte
/// strides `strides[k]` (ndim entries each, 0 on broadcast axes). Iterates in the memory
/// order of operand `order_by` (Note [loop order] in core/strided.hpp), coalesces axes, and
/// splits the work among OpenMP threads when the size reaches the parallel threshold.
/// Returns the floating-point flags raised (FpeFlags bits) when `check_fpe`.
int run_elementwise(LoopFn fn, int nops, std::byte* const* ptrs, const std::vector<std::vector<int64_t>>& strides,
                    std::span<const int64_t> shape, int order_by, bool check_fpe, int64_t cost = 1);

/// Clears the hardware floating-point flags; returns nothing.
void clear_fpe();
/// The raised hardware floating-point flags as FpeFlags bits.
int read_fpe();
/// Sets the hardware floating-point flags of FpeFlags bits `flags` (others stay as they are).
void raise_fpe(int flags);

/// Threads for an eager loop of `n` elements of cost `cost` (Note [memory-bound threads]).
int eager_threads(int64_t n, int64_t cost = 1);
/// The relative cost of one element of ufunc `op` on inputs of type `t` (Note [elementwise cost]).
int elementwise_cost(OpId op, DType t);

/// Records floating-point flags of the current call (read by take_fp_errors()).
void note_fpe(int flags);

/// A where= mask must be bool: NumPy casts an array mask to bool under 'safe' casting, so
/// any other dtype is its TypeError (the Python layer converts lists and scalars first).
void check_where_mask(const ndarray& where);

}  // namespace npc::ops
