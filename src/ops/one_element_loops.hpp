#pragma once
// Internal: which loop NumPy runs for an operation of one element (the eager ufunc call and
// the tracer's record of a ufunc node both ask).
#include <span>

#include "npc/dtype.hpp"
#include "npc/ops.hpp"

namespace npc::ops {

// Note [one-element loops]
// NumPy calls a ufunc's loop with its operands' own strides only on its trivial path: the
// non-0-d inputs and the output of one rank (contiguous alike), and no input sharing memory
// with a given output unless it is that output with a nonzero stride (a one-element array's
// stride counts as 0). Otherwise its iterator runs the loop, and an iteration of one element
// gives every operand stride 0. Its SIMD complex product refuses an output of stride 0
// (loops_arithm_fp.dispatch.c.src), so a one-element `x *= y`, `np.square(x, out=x)`, a 0-d
// `x *= s` or a `x[None] * y` of size 1 take the scalar loop: the schoolbook product (other
// last bits, Note [complex product] in kernels_arith.cpp), whose 0 * inf raises "invalid"
// where the SIMD loop's fused multiply-add of (inf+nanj) * (1+0j) does not. Measured with
// NumPy 2.5 on x86-64 (AVX-512F); complex absolute stores to any stride (no such case).

/// Whether NumPy runs its scalar loop of `op` in dtype `t` for an operation of one element
/// because its iterator runs it: inputs of ranks `input_ndims`, an output of rank `out_ndim`
/// (-1: a fresh one), `out_shares_input`: a given output shares memory with an input.
inline bool scalar_loop_of_one_element(OpId op, DType t, std::span<const int> input_ndims, int out_ndim,
                                       bool out_shares_input) {
  if (!is_complex(t) || (op != OpId::multiply && op != OpId::square)) return false;
  if (out_shares_input) return true;
  int rank = -1;
  for (int nd : input_ndims) {
    if (nd == 0) continue;
    if (rank >= 0 && nd != rank) return true;
    rank = nd;
  }
  return out_ndim >= 0 && rank >= 0 && out_ndim != rank;
}

}  // namespace npc::ops
