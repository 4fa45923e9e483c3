// Transcendental ufuncs: the float32/float64 loops that run on libmvec where the CPU allows
// (Note [vector math]), and a third of the rows' rule kernels. The rules are the C library's
// functions (as NumPy's npy_math uses them) and NumPy's own formulas where it has them
// (logaddexp, complex exp2/log2/log10/expm1/log1p): npk::ufunc::* in
// include/npc/scalar_rules.hpp (Note [rule kernels] in rules.hpp).
#include "ops/loops.hpp"
#include "ops/rules.hpp"
#include "ops/math_simd.hpp"

namespace npc::ops {

template <>
void register_rules<1>(Registrar& r) {
  register_rule_kernels<1>(r);
}

void register_math(Registrar& r) {
  simd::register_vector_math(r);  // float32/float64 loops on libmvec where the CPU allows
}

}  // namespace npc::ops
