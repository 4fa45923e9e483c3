#pragma once
// Internal: float32/float64 loops of the transcendental ufuncs on glibc's vector math
// library (libmvec), picked at run time by instruction set (Note [vector math]).

namespace npc::ops {
struct Registrar;
}

namespace npc::ops::simd {

/// Replaces float32/float64 loops of exp, exp2, expm1, log, log2, log10, log1p, sin, cos,
/// tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh, arccosh, arctanh and cbrt with
/// vector loops (which ones: Note [vector math policy]; env NPC_VECTOR_MATH=all|0) when the
/// CPU has AVX-512F or AVX2+FMA and npc was built with libmvec; otherwise leaves the scalar
/// loops of kernels_math.cpp in place.
void register_vector_math(Registrar& r);

}  // namespace npc::ops::simd
