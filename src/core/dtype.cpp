// dtype facts, NEP 50 promotion and casting rules (numpy.promote_types / result_type / can_cast).
#include "npc/dtype.hpp"

#include <bit>
#include <stdexcept>
#include <string>

#include "npc/errors.hpp"

namespace npc {

namespace {
struct Info {
  size_t size;
  Kind kind;
  std::string_view name;
};
constexpr Info kInfo[kNumDTypes] = {
    {1, Kind::Bool, "bool"},       {1, Kind::Signed, "int8"},     {1, Kind::Unsigned, "uint8"},
    {2, Kind::Signed, "int16"},    {2, Kind::Unsigned, "uint16"}, {4, Kind::Signed, "int32"},
    {4, Kind::Unsigned, "uint32"}, {8, Kind::Signed, "int64"},    {8, Kind::Unsigned, "uint64"},
    {2, Kind::Float, "float16"},   {4, Kind::Float, "float32"},   {8, Kind::Float, "float64"},
    {8, Kind::Complex, "complex64"}, {16, Kind::Complex, "complex128"}};

[[noreturn]] void bad_dtype(DType t) {
  throw TypeError("invalid npc::DType value " + std::to_string(static_cast<int>(t)));
}
// Every dtype fact goes through here, so a DType made from an out-of-range integer is a
// TypeError rather than a read past the table.
const Info& info(DType t) {
  if (static_cast<unsigned>(t) >= static_cast<unsigned>(kNumDTypes)) [[unlikely]] bad_dtype(t);
  return kInfo[static_cast<int>(t)];
}
void check(DType t) { (void)info(t); }

// Note [float precision ladder]
// NumPy promotes an integer with an inexact type to the smallest float that holds every
// value of the integer "safely": (u)int8 -> float16, (u)int16 -> float32, wider -> float64.
// Complex types count by the precision of one component. Promotion of mixed kinds then takes
// the larger precision, and becomes complex if either side is complex.
int float_bits(DType t) {
  switch (t) {
    case DType::Bool: return 0;
    case DType::Int8: case DType::UInt8: return 16;
    case DType::Int16: case DType::UInt16: return 32;
    case DType::Float16: return 16;
    case DType::Float32: case DType::Complex64: return 32;
    default: return 64;
  }
}
DType float_of_bits(int bits) { return bits <= 16 ? DType::Float16 : bits == 32 ? DType::Float32 : DType::Float64; }
DType complex_of_bits(int bits) { return bits <= 32 ? DType::Complex64 : DType::Complex128; }
DType signed_of_size(size_t n) {
  return n == 1 ? DType::Int8 : n == 2 ? DType::Int16 : n == 4 ? DType::Int32 : DType::Int64;
}
}  // namespace

size_t itemsize(DType t) { return info(t).size; }
Kind kind(DType t) { return info(t).kind; }
std::string_view name(DType t) { return info(t).name; }
char kind_char(DType t) {
  switch (kind(t)) {
    case Kind::Bool: return 'b';
    case Kind::Signed: return 'i';
    case Kind::Unsigned: return 'u';
    case Kind::Float: return 'f';
    default: return 'c';
  }
}

DType dtype_from_name(std::string_view s) {
  std::string n(s);
  if (!n.empty() && (n[0] == '<' || n[0] == '=' || n[0] == '|')) n.erase(0, 1);
  for (int i = 0; i < kNumDTypes; ++i)
    if (kInfo[i].name == n) return static_cast<DType>(i);
  struct Alias { const char* a; DType t; };
  static const Alias aliases[] = {
      {"?", DType::Bool}, {"b1", DType::Bool}, {"i1", DType::Int8}, {"u1", DType::UInt8},
      {"i2", DType::Int16}, {"u2", DType::UInt16}, {"i4", DType::Int32}, {"u4", DType::UInt32},
      {"i8", DType::Int64}, {"u8", DType::UInt64}, {"f2", DType::Float16}, {"f4", DType::Float32},
      {"f8", DType::Float64}, {"c8", DType::Complex64}, {"c16", DType::Complex128},
      {"int", DType::Int64}, {"float", DType::Float64}, {"complex", DType::Complex128},
      {"half", DType::Float16}, {"single", DType::Float32}, {"double", DType::Float64},
      {"intp", DType::Int64}, {"uintp", DType::UInt64}, {"b", DType::Int8}, {"B", DType::UInt8},
      {"h", DType::Int16}, {"H", DType::UInt16}, {"i", DType::Int32}, {"I", DType::UInt32},
      {"l", DType::Int64}, {"L", DType::UInt64}, {"q", DType::Int64}, {"Q", DType::UInt64},
      {"e", DType::Float16}, {"f", DType::Float32}, {"d", DType::Float64}, {"F", DType::Complex64},
      {"D", DType::Complex128}};
  for (const auto& a : aliases)
    if (n == a.a) return a.t;
  throw std::invalid_argument("data type '" + std::string(s) + "' not understood");
}

Casting casting_from_name(std::string_view s) {
  if (s == "no") return Casting::No;
  if (s == "equiv") return Casting::Equiv;
  if (s == "safe") return Casting::Safe;
  if (s == "same_kind") return Casting::SameKind;
  if (s == "unsafe") return Casting::Unsafe;
  throw std::invalid_argument("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe'");
}

DType promote_types(DType a, DType b) {
  check(a);
  check(b);
  if (a == b) return a;
  Kind ka = kind(a), kb = kind(b);
  if (ka == Kind::Bool) return b;
  if (kb == Kind::Bool) return a;
  bool inexact = is_inexact(a) || is_inexact(b);
  if (!inexact) {
    if (ka == kb) return itemsize(a) >= itemsize(b) ? a : b;
    DType s = ka == Kind::Signed ? a : b, u = ka == Kind::Signed ? b : a;
    if (itemsize(u) < itemsize(s)) return s;
    if (u == DType::UInt64) return DType::Float64;  // no integer holds both
    return signed_of_size(2 * itemsize(u));
  }
  int bits = std::max(float_bits(a), float_bits(b));
  if (is_complex(a) || is_complex(b)) return complex_of_bits(bits);
  return float_of_bits(bits);
}

bool can_cast(DType from, DType to, Casting casting) {
  check(from);
  check(to);
  if (static_cast<unsigned>(casting) > static_cast<unsigned>(Casting::Unsafe))
    throw ValueError("invalid npc::Casting value " + std::to_string(static_cast<int>(casting)));
  if (from == to || casting == Casting::Unsafe) return true;
  if (casting == Casting::No || casting == Casting::Equiv) return false;
  bool safe = promote_types(from, to) == to;
  if (safe || casting == Casting::Safe) return safe;
  // same_kind: safe casts, or casts that do not go down the kind order b < u < i < f < c.
  return static_cast<int>(kind(from)) <= static_cast<int>(kind(to));
}

DType default_dtype(WeakKind k) {
  if (static_cast<unsigned>(k) > static_cast<unsigned>(WeakKind::Complex))
    throw ValueError("invalid npc::WeakKind value " + std::to_string(static_cast<int>(k)));
  return k == WeakKind::Int ? DType::Int64 : k == WeakKind::Float ? DType::Float64 : DType::Complex128;
}

DType real_dtype(DType t) {
  check(t);
  return t == DType::Complex64 ? DType::Float32 : t == DType::Complex128 ? DType::Float64 : t;
}
DType complex_dtype(DType t) { return is_complex(t) ? t : complex_of_bits(std::max(float_bits(t), 32)); }

// Note [NEP 50 weak scalars]
// Python int/float/complex take part in promotion only through their kind: if the strong
// result already has that kind or a higher one, the result is unchanged (uint8 + 300 stays
// uint8, and the value check raises OverflowError elsewhere). Otherwise the weak scalar
// lifts the result to its kind: to the default dtype when the strong side is bool/integer
// (int8 + 1.0 -> float64), or keeping precision within inexact kinds (float32 + 1j -> complex64).
DType result_type(std::span<const DType> strong, std::span<const WeakKind> weak) {
  if (strong.empty() && weak.empty()) throw std::invalid_argument("at least one array or dtype is required");
  bool has_weak[3] = {false, false, false};
  WeakKind top = WeakKind::Int;
  for (auto w : weak) {
    (void)default_dtype(w);  // validates the kind
    has_weak[static_cast<int>(w)] = true;
    if (static_cast<int>(w) > static_cast<int>(top)) top = w;
  }
  if (strong.empty()) return default_dtype(top);
  for (DType t : strong) check(t);
  // Note [promoting many dtypes]
  // Pairwise promotion is not associative across kinds (int8, uint8 -> int16, then with
  // float16 -> float32), while NumPy promotes int8, uint8, float16 to float16: it first picks
  // the "main" inexact dtype and promotes every operand with it, then combines the results.
  const DType* inexact = nullptr;
  for (const DType& t : strong)
    if (is_inexact(t)) { inexact = &t; break; }
  DType r = inexact ? promote_types(strong[0], *inexact) : strong[0];
  for (size_t i = 1; i < strong.size(); ++i)
    r = promote_types(r, inexact ? promote_types(strong[i], *inexact) : strong[i]);
  if (weak.empty()) return r;
  Kind k = kind(r);
  if (has_weak[2] && k != Kind::Complex)
    return k == Kind::Float ? complex_dtype(r) : DType::Complex128;
  if (has_weak[1] && (k == Kind::Bool || k == Kind::Signed || k == Kind::Unsigned)) return DType::Float64;
  if (has_weak[0] && k == Kind::Bool) return DType::Int64;
  return r;
}

// --- float16 conversions (round to nearest even), via the compiler's _Float16 support.
float half_to_float(float16 h) { return static_cast<float>(std::bit_cast<_Float16>(h.bits)); }
double half_to_double(float16 h) { return static_cast<double>(std::bit_cast<_Float16>(h.bits)); }
float16 float_to_half(float f) { return float16{std::bit_cast<uint16_t>(static_cast<_Float16>(f))}; }
float16 double_to_half(double d) { return float16{std::bit_cast<uint16_t>(static_cast<_Float16>(d))}; }

}  // namespace npc
