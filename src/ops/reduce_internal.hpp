#pragma once
// Helpers shared by the reduce-like ufunc methods: reduce (reduce.cpp), their loop resolution
// (reduce_resolve.cpp), accumulate (accumulate.cpp) and ufunc.at (ufunc_at.cpp).
#include <cstdint>

#include "npc/ops.hpp"
#include "ops/loops.hpp"

namespace npc {
/// The binary ufunc of a ufunc or reduction row (sum -> add); TypeError for other rows.
OpId ufunc_of(OpId op);
/// NumPy's ValueError when `op` is not binary with one output ("reduce only supported for
/// binary functions"); `method` names the method.
void check_reducelike(OpId op, const char* method);
/// The (t, t) -> t loop of `op`, or null.
ops::LoopFn loop_for(OpId op, DType t);
/// Integer power loops reject negative exponents: ValueError when a reduce or accumulate of
/// `a` along `ax` in loop dtype `t` meets one (every element after the first; all of them
/// when `all`).
void check_int_power_exponents(OpId op, DType t, const ndarray& a, int64_t ax, bool all);
}  // namespace npc
