// Comparisons, logical and bitwise ufuncs, predicates, rounding and the floating-point
// bit-level functions (copysign, nextafter, spacing, ldexp, frexp, modf).
#include <cfenv>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "ops/loops.hpp"

namespace npc::ops {
namespace {

template <class T>
inline bool truth(T a) {
  if constexpr (is_cplx<T>) return a.real() != 0 || a.imag() != 0;
  else return a != 0;
}

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
NPC_CMP(Equal, ==, a.real() == b.real() && a.imag() == b.imag())
NPC_CMP(NotEqual, !=, a.real() != b.real() || a.imag() != b.imag())
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
  template <IntOrBool T> T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return static_cast<T>(~a);
  }
};
// npy_lshift / npy_rshift: shifts by >= the bit width (or negative) give 0 (or -1 for
// negative values shifted right), never C++ undefined behaviour.
struct LeftShift {
  template <class T> requires is_int<T> T operator()(T a, T b) const {
    if (static_cast<std::make_unsigned_t<T>>(b) < sizeof(T) * 8 && !(std::is_signed_v<T> && b < 0))
      return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << b);
    return 0;
  }
};
struct RightShift {
  template <class T> requires is_int<T> T operator()(T a, T b) const {
    if (static_cast<std::make_unsigned_t<T>>(b) < sizeof(T) * 8 && !(std::is_signed_v<T> && b < 0))
      return static_cast<T>(a >> b);
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    else return 0;
  }
};

struct IsNan {
  template <class T> requires is_num<T> bool operator()(T a) const {
    if constexpr (is_cplx<T>) return std::isnan(a.real()) || std::isnan(a.imag());
    else if constexpr (is_real_float<T>) return std::isnan(a);
    else return false;
  }
};
struct IsInf {
  template <class T> requires is_num<T> bool operator()(T a) const {
    if constexpr (is_cplx<T>) return std::isinf(a.real()) || std::isinf(a.imag());
    else if constexpr (is_real_float<T>) return std::isinf(a);
    else return false;
  }
};
struct IsFinite {
  template <class T> requires is_num<T> bool operator()(T a) const {
    if constexpr (is_cplx<T>) return std::isfinite(a.real()) && std::isfinite(a.imag());
    else if constexpr (is_real_float<T>) return std::isfinite(a);
    else return true;
  }
};
struct Signbit {
  template <class T> requires is_real_float<T> bool operator()(T a) const { return std::signbit(a); }
};

#define NPC_ROUND(Name, fn)                                         \
  struct Name {                                                     \
    template <class T> requires (std::is_arithmetic_v<T>) T operator()(T a) const { \
      if constexpr (std::is_floating_point_v<T>) return fn(a);     \
      else return a;                                                \
    }                                                               \
  };
NPC_ROUND(Floor, std::floor)
NPC_ROUND(Ceil, std::ceil)
NPC_ROUND(Trunc, std::trunc)
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
// npy_spacing: signed distance to the next value away from zero (-0.0 counts as positive);
// NaN for infinities.
struct Spacing {
  template <class T> requires is_real_float<T> T operator()(T a) const {
    if (std::isinf(a)) return std::numeric_limits<T>::quiet_NaN();
    // Zero's spacing is the smallest subnormal, which NumPy returns without the underflow
    // flag that nextafter(0, inf) raises.
    if (a == T(0)) return std::numeric_limits<T>::denorm_min();
    const T inf = std::numeric_limits<T>::infinity();
    return std::nextafter(a, std::isless(a, T(0)) ? -inf : inf) - a;
  }
};
struct Ldexp {
  static constexpr bool kMixed = true;
  template <class A, class B> requires (is_real_float<A> && is_int<B>) A operator()(A x, B e) const {
    // Exponents beyond int range saturate: the result is 0 or inf either way.
    int ei = 0;
    if constexpr (std::is_signed_v<B>) ei = e > 100000 ? 100000 : e < -100000 ? -100000 : static_cast<int>(e);
    else ei = e > 100000u ? 100000 : static_cast<int>(e);
    return std::ldexp(x, ei);
  }
};
struct Frexp {
  template <class T> requires is_real_float<T> std::pair<T, int> operator()(T a) const {
    int e = 0;
    T m = std::frexp(a, &e);
    if (!std::isfinite(a)) e = 0;
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
inline uint16_t half_nextafter(uint16_t x, uint16_t y) {
  auto isnan = [](uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0; };
  uint16_t r;
  if (isnan(x) || isnan(y)) r = 0x7e00u;
  else if (x == y || ((x | y) & 0x7fffu) == 0) r = y;
  else if ((x & 0x7fffu) == 0) r = static_cast<uint16_t>((y & 0x8000u) + 1);
  else if (!(x & 0x8000u)) r = (static_cast<int16_t>(x) > static_cast<int16_t>(y)) ? x - 1 : x + 1;
  else r = (!(y & 0x8000u) || (x & 0x7fffu) > (y & 0x7fffu)) ? x - 1 : x + 1;
  if ((r & 0x7fffu) == 0x7c00u && (x & 0x7c00u) != 0x7c00u) raise_overflow();
  return r;
}
inline uint16_t half_spacing(uint16_t h) {
  const uint16_t e = h & 0x7c00u, sig = h & 0x03ffu;
  if (e == 0x7c00u) { raise_invalid(); return 0x7e00u; }
  if (h == 0x7bffu) { raise_overflow(); return 0x7c00u; }
  if ((h & 0x8000u) && sig == 0) {
    if (e > 0x2c00u) return static_cast<uint16_t>(e - 0x2c00u);
    if (e > 0x0400u) return static_cast<uint16_t>(1u << ((e >> 10) - 2));
    return 1;
  }
  if (e > 0x2800u) return static_cast<uint16_t>(e - 0x2800u);
  if (e > 0x0400u) return static_cast<uint16_t>(1u << ((e >> 10) - 1));
  return 1;
}
void half_nextafter_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    store<uint16_t>(p[2] + i * s[2], half_nextafter(load<uint16_t>(p[0] + i * s[0]), load<uint16_t>(p[1] + i * s[1])));
}
void half_spacing_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) store<uint16_t>(p[1] + i * s[1], half_spacing(load<uint16_t>(p[0] + i * s[0])));
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
