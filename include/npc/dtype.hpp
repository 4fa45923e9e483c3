#pragma once
/// \file dtype.hpp
/// The 14 native dtypes, NEP 50 type promotion and NumPy's casting rules.
/// Mirrors numpy.dtype, numpy.promote_types, numpy.result_type, numpy.can_cast.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace npc {

/// IEEE binary16 storage type; arithmetic is done in float, like NumPy's npy_half.
struct float16 {
  uint16_t bits = 0;
};
float half_to_float(float16 h);
double half_to_double(float16 h);
float16 float_to_half(float f);
float16 double_to_half(double d);

/// Native dtypes, in NumPy's type-number order (bool < ints < floats < complex).
enum class DType : uint8_t {
  Bool, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64,
  Float16, Float32, Float64, Complex64, Complex128
};
inline constexpr int kNumDTypes = 14;

/// X(EnumName, c_type, numpy_name) for each native dtype.
#define NPC_FOR_EACH_DTYPE(X)                                                  \
  X(Bool, bool, "bool") X(Int8, int8_t, "int8") X(UInt8, uint8_t, "uint8")     \
  X(Int16, int16_t, "int16") X(UInt16, uint16_t, "uint16")                     \
  X(Int32, int32_t, "int32") X(UInt32, uint32_t, "uint32")                     \
  X(Int64, int64_t, "int64") X(UInt64, uint64_t, "uint64")                     \
  X(Float16, ::npc::float16, "float16") X(Float32, float, "float32")           \
  X(Float64, double, "float64") X(Complex64, std::complex<float>, "complex64") \
  X(Complex128, std::complex<double>, "complex128")

/// The DType whose element type is T (compile-time; e.g. dtype_for<float>() == Float32).
template <class T>
constexpr DType dtype_for();
#define NPC_DTYPE_FOR_(E, T, N) \
  template <>                   \
  constexpr DType dtype_for<T>() { return DType::E; }
NPC_FOR_EACH_DTYPE(NPC_DTYPE_FOR_)
#undef NPC_DTYPE_FOR_

// Every function taking a DType throws TypeError for a value outside the enum (a DType cast
// from an arbitrary integer), and every function taking a Casting or WeakKind throws
// ValueError for one outside its enum.

/// The kind of a dtype, ordered as NumPy orders kinds for same_kind casting.
enum class Kind : uint8_t { Bool, Unsigned, Signed, Float, Complex };

/// Bytes per element.
size_t itemsize(DType t);
/// Kind of the dtype.
Kind kind(DType t);
/// NumPy's name ("float64").
std::string_view name(DType t);
/// NumPy's kind character: 'b', 'i', 'u', 'f', 'c'.
char kind_char(DType t);
/// Parses a NumPy dtype name or type string ("float32", "f4", "<f4", "int", "complex").
/// Throws std::invalid_argument (TypeError in Python) for unknown names.
DType dtype_from_name(std::string_view s);

inline bool is_integer(DType t) { auto k = kind(t); return k == Kind::Signed || k == Kind::Unsigned; }
inline bool is_inexact(DType t) { auto k = kind(t); return k == Kind::Float || k == Kind::Complex; }
inline bool is_complex(DType t) { return kind(t) == Kind::Complex; }

/// Casting levels of numpy.can_cast.
enum class Casting : uint8_t { No, Equiv, Safe, SameKind, Unsafe };
/// Parses "no", "equiv", "safe", "same_kind", "unsafe"; throws std::invalid_argument.
Casting casting_from_name(std::string_view s);

/// numpy.promote_types: the smallest dtype both can be cast to safely.
DType promote_types(DType a, DType b);
/// numpy.can_cast(from, to, casting) for dtypes.
bool can_cast(DType from, DType to, Casting casting);

/// Kinds of weak (Python) scalars in NEP 50 promotion.
enum class WeakKind : uint8_t { Int, Float, Complex };

/// numpy.result_type under NEP 50: `strong` are array/NumPy-scalar dtypes; `weak` are the
/// kinds of Python scalars, which adopt the strong dtype when their kind is not higher.
/// With no operands at all, throws std::invalid_argument.
DType result_type(std::span<const DType> strong, std::span<const WeakKind> weak = {});

/// The dtype NumPy gives a weak scalar kind on its own (int64, float64, complex128).
DType default_dtype(WeakKind k);

/// The real dtype of a complex dtype (complex64 -> float32); identity otherwise.
DType real_dtype(DType t);
/// The complex dtype with this dtype's precision (float32 -> complex64; float16 -> complex64).
DType complex_dtype(DType t);

}  // namespace npc
