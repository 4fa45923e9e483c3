#pragma once
// Internal: mapping between DType and C++ element types, and a typed visitor over dtypes.
// Typed loops are templates over these element types, instantiated in .cpp files (STYLE 10).
#include <complex>
#include <type_traits>
#include <utility>

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

// Note [casts]
// convert<To>(from) is NumPy's elementwise cast: C conversions for numbers (float -> int
// truncates; out-of-range values give what the hardware conversion gives, as in NumPy),
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
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace npc::detail
