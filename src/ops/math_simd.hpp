#pragma once
// Internal: float32/float64 loops of the transcendental ufuncs on glibc's vector math
// library (libmvec), picked at run time by instruction set (Note [vector math]).
#include "npc/dtype.hpp"
#include "npc/ops.hpp"

namespace npc::ops {
struct Registrar;
}

namespace npc::ops::simd {

/// How npc's eager loop computes ufunc `op` on float32 or float64 `t` (Note [vector math
/// policy]): with the scalar loop (bits == 0), or with the libmvec routine of `bits`-wide
/// registers (512: AVX-512F, 256: AVX2+FMA) for the C function `c_name`, float32 through
/// the float64 routine when `via_float64` (Note [float32 through float64]). Fused kernels
/// call the same routine through the same block function (src/ops/vector_math_block.hpp,
/// Note [vector math in kernels] in src/fusion/kir_vector_math.cpp).
struct VectorMath {
  int bits = 0;
  bool via_float64 = false;
  const char* c_name = "";
};
/// The choice for (op, t), the same for the whole process (NPC_VECTOR_MATH is read once).
VectorMath vector_math(OpId op, DType t);
/// The C name of ufunc `op`'s libmvec routine ("asin" for arcsin), "" for an op without one
/// or a build without libmvec.
const char* vector_math_name(OpId op);

/// Replaces float32/float64 loops of exp, exp2, expm1, log, log2, log10, log1p, sin, cos,
/// tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh, arccosh, arctanh and cbrt with
/// vector loops (which ones: vector_math(); env NPC_VECTOR_MATH=all|0) when the CPU has
/// AVX-512F or AVX2+FMA and npc was built with libmvec; otherwise leaves the scalar loops
/// of kernels_math.cpp in place.
void register_vector_math(Registrar& r);

}  // namespace npc::ops::simd
