#pragma once
// Internal: NumPy's element rules (include/npc/scalar_rules.hpp, Note [scalar rules]) as the
// eager kernel files use them: FP errors go to the hardware flags, and std::complex values
// pass to and from the rules' npk::cplx. Only the kernel files include it, so editing a rule
// rebuilds them and the fused prelude, nothing else.
#include <cfenv>
#include <complex>

#include "ops/loops.hpp"

namespace npc::ops {
/// Raises npc's FpFlag bits (1 divide, 2 overflow, 4 underflow, 8 invalid) as hardware flags:
/// the scalar rules' NPK_RAISE_FP hook in eager kernels.
inline void raise_fp(int bits) {
  if (bits & 1) raise_divbyzero();
  if (bits & 2) raise_overflow();
  if (bits & 4) std::feraiseexcept(FE_UNDERFLOW);
  if (bits & 8) raise_invalid();
}
}  // namespace npc::ops

#define NPK_RAISE_FP(bits) ::npc::ops::raise_fp(bits)
#include "npc/scalar_rules.hpp"

namespace npc::ops {
/// An element as the scalar rules take it (std::complex becomes npk::cplx, same layout).
template <class T>
inline auto to_rule(T v) {
  if constexpr (is_cplx<T>) return npk::cplx<typename T::value_type>{v.real(), v.imag()};
  else return v;
}
/// A scalar rule's result as the loops store it (npk::cplx becomes std::complex).
template <class T>
inline auto from_rule(T v) {
  if constexpr (npk::is_cplx<T>) return std::complex<decltype(v.re)>(v.re, v.im);
  else return v;
}
}  // namespace npc::ops
