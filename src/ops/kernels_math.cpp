// Transcendental ufuncs: the C library's functions (as NumPy's npy_math uses them) and
// NumPy's own formulas where it has them (logaddexp, complex exp2/log2/log10/expm1/log1p).
#include <cmath>
#include <complex>

#include "ops/loops.hpp"
#include "ops/rules.hpp"
#include "ops/math_simd.hpp"

namespace npc::ops {
namespace {

template <class T> concept Flt = is_real_float<T>;
template <class T> concept FltOrCplx = is_real_float<T> || is_cplx<T>;

#define NPC_MATH_UNARY(Name, expr)                                   \
  struct Name {                                                      \
    template <class T> requires FltOrCplx<T> T operator()(T x) const { return expr; } \
  };

NPC_MATH_UNARY(Sqrt, std::sqrt(x))
NPC_MATH_UNARY(Exp, std::exp(x))
NPC_MATH_UNARY(Log, std::log(x))
NPC_MATH_UNARY(Sin, std::sin(x))
NPC_MATH_UNARY(Cos, std::cos(x))
NPC_MATH_UNARY(Tan, std::tan(x))
NPC_MATH_UNARY(Arcsin, std::asin(x))
NPC_MATH_UNARY(Arccos, std::acos(x))
NPC_MATH_UNARY(Arctan, std::atan(x))
NPC_MATH_UNARY(Sinh, std::sinh(x))
NPC_MATH_UNARY(Cosh, std::cosh(x))
NPC_MATH_UNARY(Tanh, std::tanh(x))
NPC_MATH_UNARY(Arcsinh, std::asinh(x))
NPC_MATH_UNARY(Arccosh, std::acosh(x))
NPC_MATH_UNARY(Arctanh, std::atanh(x))
#undef NPC_MATH_UNARY

struct Cbrt {
  template <Flt T> T operator()(T x) const { return std::cbrt(x); }
};
// NumPy's own formulas are npk::* (include/npc/scalar_rules.hpp, Note [scalar rules]).
struct Exp2 {
  template <FltOrCplx T> T operator()(T x) const {
    if constexpr (is_cplx<T>) return from_rule(npk::cexp2v(to_rule(x)));
    else return std::exp2(x);
  }
};
struct Expm1 {
  template <FltOrCplx T> T operator()(T x) const {
    if constexpr (is_cplx<T>) return from_rule(npk::cexpm1v(to_rule(x)));
    else return std::expm1(x);
  }
};
struct Log2 {
  template <FltOrCplx T> T operator()(T x) const {
    if constexpr (is_cplx<T>) return from_rule(npk::clog2v(to_rule(x)));
    else return std::log2(x);
  }
};
struct Log10 {
  template <FltOrCplx T> T operator()(T x) const {
    if constexpr (is_cplx<T>) return from_rule(npk::clog10v(to_rule(x)));
    else return std::log10(x);
  }
};
struct Log1p {
  template <FltOrCplx T> T operator()(T x) const {
    if constexpr (is_cplx<T>) return from_rule(npk::clog1pv(to_rule(x)));
    else return std::log1p(x);
  }
};
struct Logaddexp {
  template <Flt T> T operator()(T x, T y) const { return npk::logaddexp(x, y); }
};
struct Logaddexp2 {
  template <Flt T> T operator()(T x, T y) const { return npk::logaddexp2(x, y); }
};
struct Arctan2 {
  template <Flt T> T operator()(T y, T x) const { return std::atan2(y, x); }
};
struct Hypot {
  template <Flt T> T operator()(T x, T y) const { return std::hypot(x, y); }
};
struct Deg2rad {
  template <Flt T> T operator()(T x) const { return npk::deg2radv(x); }
};
struct Rad2deg {
  template <Flt T> T operator()(T x) const { return npk::rad2degv(x); }
};

}  // namespace

void register_math(Registrar& r) {
  r.unary<Sqrt>(OpId::sqrt);
  r.unary<Cbrt>(OpId::cbrt);
  r.unary<Exp>(OpId::exp);
  r.unary<Exp2>(OpId::exp2);
  r.unary<Expm1>(OpId::expm1);
  r.unary<Log>(OpId::log);
  r.unary<Log2>(OpId::log2);
  r.unary<Log10>(OpId::log10);
  r.unary<Log1p>(OpId::log1p);
  r.binary<Logaddexp>(OpId::logaddexp);
  r.binary<Logaddexp2>(OpId::logaddexp2);
  r.unary<Sin>(OpId::sin);
  r.unary<Cos>(OpId::cos);
  r.unary<Tan>(OpId::tan);
  r.unary<Arcsin>(OpId::arcsin);
  r.unary<Arccos>(OpId::arccos);
  r.unary<Arctan>(OpId::arctan);
  r.binary<Arctan2>(OpId::arctan2);
  r.binary<Hypot>(OpId::hypot);
  r.unary<Sinh>(OpId::sinh);
  r.unary<Cosh>(OpId::cosh);
  r.unary<Tanh>(OpId::tanh);
  r.unary<Arcsinh>(OpId::arcsinh);
  r.unary<Arccosh>(OpId::arccosh);
  r.unary<Arctanh>(OpId::arctanh);
  r.unary<Deg2rad>(OpId::deg2rad);
  r.unary<Rad2deg>(OpId::rad2deg);
  simd::register_vector_math(r);  // float32/float64 loops on libmvec where the CPU allows
}

}  // namespace npc::ops
