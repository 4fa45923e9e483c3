#pragma once
// Internal: mapping between DType and C++ element types, and a typed visitor over dtypes.
// Typed loops are templates over these element types, instantiated in .cpp files (STYLE 10).
#include <cfenv>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <utility>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "npc/dtype.hpp"

namespace npc::detail {

template <class T>
struct TypeTag { using type = T; };

template <DType D> struct ctype;
#define NPC_CTYPE_(E, T, N) template <> struct ctype<DType::E> { using type = T; };
NPC_FOR_EACH_DTYPE(NPC_CTYPE_)
#undef NPC_CTYPE_
template <DType D> using ctype_t = typename ctype<D>::type;

template <class T> struct dtype_of;
#define NPC_DTYPEOF_(E, T, N) template <> struct dtype_of<T> { static constexpr DType value = DType::E; };
NPC_FOR_EACH_DTYPE(NPC_DTYPEOF_)
#undef NPC_DTYPEOF_

template <class T> inline constexpr bool is_complex_v = false;
template <class T> inline constexpr bool is_complex_v<std::complex<T>> = true;

/// Calls f(TypeTag<T>{}) with T the element type of `t`.
template <class F>
decltype(auto) visit(DType t, F&& f) {
  switch (t) {
#define NPC_VISIT_(E, T, N) case DType::E: return std::forward<F>(f)(TypeTag<T>{});
    NPC_FOR_EACH_DTYPE(NPC_VISIT_)
#undef NPC_VISIT_
  }
  __builtin_unreachable();
}

// Note [float to int casts]
// A C++ cast of a NaN, an infinity or an out-of-range float to an integer type is undefined
// behaviour; NumPy's C casts compile to x86-64's truncating conversions, whose results are
// defined by the hardware. npc defines them the same way, for every target type:
// - int64: cvttsd2si at 64 bits: the "integer indefinite" INT64_MIN for NaN and values
//   outside [-2^63, 2^63);
// - int32, and the narrower types through it (int8/16, uint8/16 take the low bits):
//   cvttsd2si at 32 bits, INT32_MIN outside (-2^31 - 1, 2^31);
// - uint32: through int64, then the low 32 bits (NumPy's scalar loop; its SIMD body gives
//   other values for negative out-of-range inputs and NaN, which NumPy leaves unspecified);
// - uint64: values below 2^63 (and NaN) through int64, larger ones as int64 of v - 2^63 with
//   the top bit set (GCC's sequence, which NumPy's loops run).
// The invalid flag is raised exactly when the conversion is out of range, as by the
// hardware (NumPy's "invalid value encountered in cast"). On x86-64 these are the hardware
// instructions through intrinsics (the same speed as the undefined cast they replace). The
// fused backend's prelude (npk::f2i in include/npc/scalar_rules.hpp) gives the same values; its
// float32/float64 -> uint32 casts call this eager cast (Note [casts to uint32] in src/fusion/lower_group.cpp).
inline int64_t float_to_int64(double v) {
#if defined(__x86_64__)
  return _mm_cvttsd_si64(_mm_set_sd(v));
#else
  if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) [[likely]]
    return static_cast<int64_t>(v);
  std::feraiseexcept(FE_INVALID);
  return INT64_MIN;
#endif
}

inline int32_t float_to_int32(double v) {
#if defined(__x86_64__)
  return _mm_cvttsd_si32(_mm_set_sd(v));
#else
  if (v > -2147483649.0 && v < 2147483648.0) [[likely]]
    return static_cast<int32_t>(v);
  std::feraiseexcept(FE_INVALID);
  return INT32_MIN;
#endif
}

/// A float (float or double) converted to the integer type To as NumPy's casts on x86-64
/// convert it (Note [float to int casts]).
template <class To>
inline To float_to_int(double v) {
  if constexpr (std::is_same_v<To, int64_t>) {
    return float_to_int64(v);
  } else if constexpr (std::is_same_v<To, uint64_t>) {
    if (!(v >= 9223372036854775808.0)) return static_cast<uint64_t>(float_to_int64(v));
    return static_cast<uint64_t>(float_to_int64(v - 9223372036854775808.0)) ^ 0x8000000000000000ull;
  } else if constexpr (std::is_same_v<To, uint32_t>) {
    return static_cast<uint32_t>(static_cast<uint64_t>(float_to_int64(v)));
  } else {
    return static_cast<To>(float_to_int32(v));  // the low bits for int8/16, uint8/16
  }
}

// Note [casts]
// convert<To>(from) is NumPy's elementwise cast: C conversions for numbers (float -> int
// truncates; NaN, infinities and out-of-range values as Note [float to int casts] defines),
// x != 0 for bool, the real part for complex -> real, float16 through float/double.
template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, float16>) {
    if constexpr (std::is_same_v<To, double> || std::is_integral_v<To> || is_complex_v<To>)
      return convert<To>(half_to_double(v));
    else
      return convert<To>(half_to_float(v));
  } else if constexpr (std::is_same_v<To, float16>) {
    if constexpr (is_complex_v<From>) return double_to_half(static_cast<double>(v.real()));
    else if constexpr (std::is_same_v<From, float>) return float_to_half(v);
    else if constexpr (std::is_same_v<From, bool>) return float_to_half(v ? 1.0f : 0.0f);
    else return double_to_half(static_cast<double>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_complex_v<From>) return v.real() != 0 || v.imag() != 0;
    else return v != 0;
  } else if constexpr (is_complex_v<From> && is_complex_v<To>) {
    using R = typename To::value_type;
    return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
  } else if constexpr (is_complex_v<From>) {
    return convert<To>(v.real());
  } else if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    return To(static_cast<R>(v), R(0));
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return float_to_int<To>(static_cast<double>(v));  // float -> double is exact
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace npc::detail
