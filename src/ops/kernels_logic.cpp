// Comparisons, logical and bitwise ufuncs, predicates, rounding and the floating-point
// bit-level functions (copysign, nextafter, spacing, ldexp, frexp, modf).
#include <cfenv>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "ops/loops.hpp"
#include "ops/rules.hpp"

namespace npc::ops {
namespace {

// The element rules are npk::* (include/npc/scalar_rules.hpp, Note [scalar rules]).
template <class T>
inline bool truth(T a) { return npk::truth(to_rule(a)); }

// Comparisons: equal dtypes, or NumPy 2's exact int64 <-> uint64 loops.
template <class A, class B>
inline constexpr bool comparable =
    is_num<A> && (std::is_same_v<A, B> || (std::is_same_v<A, int64_t> && std::is_same_v<B, uint64_t>) ||
                  (std::is_same_v<A, uint64_t> && std::is_same_v<B, int64_t>));

// a < b for int64 vs uint64 without conversion.
template <class A, class B>
inline int cmp3(A a, B b) {
  if constexpr (std::is_same_v<A, int64_t> && std::is_same_v<B, uint64_t>) {
    if (a < 0) return -1;
    uint64_t ua = static_cast<uint64_t>(a);
    return ua < b ? -1 : ua > b ? 1 : 0;
  } else {
    return -cmp3(b, a);
  }
}

#define NPC_CMP(Name, op, cplx)                                                        \
  struct Name {                                                                        \
    static constexpr bool kMixed = true;                                               \
    template <class A, class B> requires comparable<A, B> bool operator()(A a, B b) const { \
      if constexpr (!std::is_same_v<A, B>) return cmp3(a, b) op 0;                     \
      else if constexpr (is_cplx<A>) return cplx;                                      \
      else return a op b;                                                              \
    }                                                                                  \
  };
// Real operands compare with C's operators (comparisons do not check the floating-point
// status, and these vectorize); complex equality is npk::eq.
NPC_CMP(Equal, ==, npk::eq(to_rule(a), to_rule(b)))
NPC_CMP(NotEqual, !=, !npk::eq(to_rule(a), to_rule(b)))
// Note [complex order flags]
// NumPy's complex order (CLT/CLE/CGT/CGE in its loops): lexicographic, but a real-part
// decision needs both imaginary parts to be numbers (1+nanj < 2+0j is False). Its C
// comparisons are signaling: "invalid" when a real part is NaN (the first comparison
// always runs), or when the real parts are equal and an imaginary part is NaN (the second
// runs). The compiler may vectorize or reorder plain comparisons (quiet or not), so the
// parts are compared quietly and the flag is raised from those conditions.
template <class C, class Strict, class Part>
inline bool complex_order(C a, C b, Strict strict, Part part) {
  const auto xr = a.real(), yr = b.real(), xi = a.imag(), yi = b.imag();
  const bool real_nan = std::isnan(xr) || std::isnan(yr);
  const bool same_real = !real_nan && xr == yr;
  const bool imag_nan = std::isnan(xi) || std::isnan(yi);
  if (real_nan || (same_real && imag_nan)) [[unlikely]] std::feraiseexcept(FE_INVALID);
  return (strict(xr, yr) && !imag_nan) || (same_real && part(xi, yi));
}
#define NPC_ORDER(strict, part) \
  complex_order(a, b, [](auto x, auto y) { return strict(x, y); }, [](auto x, auto y) { return part(x, y); })
NPC_CMP(Less, <, NPC_ORDER(std::isless, std::isless))
NPC_CMP(LessEqual, <=, NPC_ORDER(std::isless, std::islessequal))
NPC_CMP(Greater, >, NPC_ORDER(std::isgreater, std::isgreater))
NPC_CMP(GreaterEqual, >=, NPC_ORDER(std::isgreater, std::isgreaterequal))
#undef NPC_ORDER
#undef NPC_CMP

struct LogicalAnd {
  template <class T> requires is_num<T> bool operator()(T a, T b) const { return truth(a) && truth(b); }
};
struct LogicalOr {
  template <class T> requires is_num<T> bool operator()(T a, T b) const { return truth(a) || truth(b); }
};
struct LogicalXor {
  template <class T> requires is_num<T> bool operator()(T a, T b) const { return truth(a) != truth(b); }
};
struct LogicalNot {
  template <class T> requires is_num<T> bool operator()(T a) const { return !truth(a); }
};

template <class T> concept IntOrBool = std::is_integral_v<T>;
struct BitAnd {
  template <IntOrBool T> T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct BitOr {
  template <IntOrBool T> T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct BitXor {
  template <IntOrBool T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};
struct Invert {
  template <IntOrBool T> T operator()(T a) const { return npk::invert(a); }
};
// npy_lshift / npy_rshift: shifts by >= the bit width (or negative) give 0 (or -1 for
// negative values shifted right), never C++ undefined behaviour.
struct LeftShift {
  template <class T> requires is_int<T> T operator()(T a, T b) const { return npk::lshift(a, b); }
};
struct RightShift {
  template <class T> requires is_int<T> T operator()(T a, T b) const { return npk::rshift(a, b); }
};

struct IsNan {
  template <class T> requires is_num<T> bool operator()(T a) const { return npk::isnanv(to_rule(a)); }
};
struct IsInf {
  template <class T> requires is_num<T> bool operator()(T a) const { return npk::isinfv(to_rule(a)); }
};
struct IsFinite {
  template <class T> requires is_num<T> bool operator()(T a) const { return npk::isfinitev(to_rule(a)); }
};
struct Signbit {
  template <class T> requires is_real_float<T> bool operator()(T a) const { return std::signbit(a); }
};

#define NPC_ROUND(Name, fn)                                                                     \
  struct Name {                                                                                 \
    template <class T> requires (std::is_arithmetic_v<T>) T operator()(T a) const { return fn(a); } \
  };
NPC_ROUND(Floor, npk::floorv)
NPC_ROUND(Ceil, npk::ceilv)
NPC_ROUND(Trunc, npk::truncv)
#undef NPC_ROUND
struct Rint {
  template <class T> requires (is_real_float<T> || is_cplx<T>) T operator()(T a) const {
    if constexpr (is_cplx<T>) return {std::nearbyint(a.real()), std::nearbyint(a.imag())};
    else return std::nearbyint(a);
  }
};

struct Copysign {
  template <class T> requires is_real_float<T> T operator()(T a, T b) const { return std::copysign(a, b); }
};
struct Nextafter {
  template <class T> requires is_real_float<T> T operator()(T a, T b) const { return std::nextafter(a, b); }
};
struct Spacing {
  template <class T> requires is_real_float<T> T operator()(T a) const { return npk::spacingv(a); }
};
struct Ldexp {
  static constexpr bool kMixed = true;
  template <class A, class B> requires (is_real_float<A> && is_int<B>) A operator()(A x, B e) const { return npk::ldexpv(x, e); }
};
struct Frexp {
  template <class T> requires is_real_float<T> std::pair<T, int> operator()(T a) const {
    int e;
    T m = npk::frexpv(a, &e);
    return {m, e};
  }
};
struct Modf {
  template <class T> requires is_real_float<T> std::pair<T, T> operator()(T a) const {
    T ip;
    T f = std::modf(a, &ip);
    return {f, ip};
  }
};

// ---------------------------------------------------------------- float16 bit-level loops
// npy_half_nextafter / npy_half_spacing work on the binary16 bit patterns.
void half_nextafter_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    store<uint16_t>(p[2] + i * s[2], npk::half_nextafter(load<uint16_t>(p[0] + i * s[0]), load<uint16_t>(p[1] + i * s[1])));
}
void half_spacing_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) store<uint16_t>(p[1] + i * s[1], npk::half_spacing(load<uint16_t>(p[0] + i * s[0])));
}

}  // namespace

void register_logic(Registrar& r) {
  r.binary<Equal>(OpId::equal);
  r.binary<NotEqual>(OpId::not_equal);
  r.binary<Less>(OpId::less);
  r.binary<LessEqual>(OpId::less_equal);
  r.binary<Greater>(OpId::greater);
  r.binary<GreaterEqual>(OpId::greater_equal);
  r.binary<LogicalAnd>(OpId::logical_and);
  r.binary<LogicalOr>(OpId::logical_or);
  r.binary<LogicalXor>(OpId::logical_xor);
  r.unary<LogicalNot>(OpId::logical_not);
  r.binary<BitAnd>(OpId::bitwise_and);
  r.binary<BitOr>(OpId::bitwise_or);
  r.binary<BitXor>(OpId::bitwise_xor);
  r.unary<Invert>(OpId::invert);
  r.binary<LeftShift>(OpId::left_shift);
  r.binary<RightShift>(OpId::right_shift);
  r.unary<IsNan>(OpId::isnan);
  r.unary<IsInf>(OpId::isinf);
  r.unary<IsFinite>(OpId::isfinite);
  r.unary<Signbit>(OpId::signbit);
  r.unary<Floor>(OpId::floor);
  r.unary<Ceil>(OpId::ceil);
  r.unary<Trunc>(OpId::trunc);
  r.unary<Rint>(OpId::rint);
  r.binary<Copysign>(OpId::copysign);
  r.binary<Nextafter>(OpId::nextafter);
  r.set(OpId::nextafter, DType::Float16, &half_nextafter_loop);
  r.unary<Spacing>(OpId::spacing);
  r.set(OpId::spacing, DType::Float16, &half_spacing_loop);
  r.binary<Ldexp>(OpId::ldexp);
  r.unary<Frexp>(OpId::frexp);
  r.unary<Modf>(OpId::modf);
}

}  // namespace npc::ops
