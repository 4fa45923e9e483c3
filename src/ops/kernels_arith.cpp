// Arithmetic ufuncs: one functor per op, NumPy's semantics (npy_math formulas), registered
// for the loops of the op's ops.def row.
//
// Note [integer semantics]
// Signed integer arithmetic wraps like NumPy's (two's complement) without C++ undefined
// behaviour: it is done in an unsigned type (npk::uw). Division and remainder by zero give 0
// and raise the "divide" flag; INT_MIN // -1 gives INT_MIN and raises "overflow".
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "ops/loops.hpp"
#include "ops/rules.hpp"

namespace npc::ops {
namespace {

// The element rules are npk::* (include/npc/scalar_rules.hpp, Note [scalar rules]), shared
// with the fused kernels; the functors pick the rule of the NumPy loop that runs.
// Note [complex product]
// NumPy's SIMD complex multiply (x86-64 with FMA) computes re = fma(ar, br, -(ai*bi)) and
// im = fma(ar, bi, ai*br) (npk::mul); its scalar loops, which it runs when an operand has a
// negative stride, use the plain product (npk::mul_plain) and npy_hypot for absolute
// (npk::absv). Division is Smith's algorithm, as npy_math (npk::div).
#define NPC_RULE2(rule) from_rule(npk::rule(to_rule(a), to_rule(b)))
#define NPC_RULE1(rule) from_rule(npk::rule(to_rule(a)))

// ---------------------------------------------------------------- + - * /
struct Add {
  template <class T> requires is_num<T> T operator()(T a, T b) const { return NPC_RULE2(add); }
};
struct Subtract {
  template <class T> requires (is_num<T> && !std::is_same_v<T, bool>) T operator()(T a, T b) const { return NPC_RULE2(sub); }
};
struct Multiply {
  template <class T> requires is_num<T> T operator()(T a, T b) const { return NPC_RULE2(mul); }
};
struct Divide {
  template <class T> requires (is_real_float<T> || is_cplx<T>) T operator()(T a, T b) const { return NPC_RULE2(div); }
};

// ---------------------------------------------------------------- // % fmod divmod
struct FloorDivide {
  template <class T> requires (is_int<T> || is_real_float<T>) T operator()(T a, T b) const { return npk::floordiv(a, b); }
};
struct Remainder {
  template <class T> requires (is_int<T> || is_real_float<T>) T operator()(T a, T b) const { return npk::rem(a, b); }
};
struct Fmod {
  template <class T> requires (is_int<T> || is_real_float<T>) T operator()(T a, T b) const { return npk::fmodv(a, b); }
};
struct Divmod {
  template <class T> requires (is_int<T> || is_real_float<T>) std::pair<T, T> operator()(T a, T b) const {
    T mod;
    T q = npk::divmodv(a, b, &mod);
    return {q, mod};
  }
};

// ---------------------------------------------------------------- powers
struct Power {
  template <class T> requires (is_num<T> && !std::is_same_v<T, bool>) T operator()(T a, T b) const {
    if constexpr (is_int<T>) return npk::ipow(a, b);
    else if constexpr (is_cplx<T>) return NPC_RULE2(cpowv);
    else return std::pow(a, b);
  }
};

// ---------------------------------------------------------------- unary arithmetic
struct Negative {
  template <class T> requires (is_num<T> && !std::is_same_v<T, bool>) T operator()(T a) const { return NPC_RULE1(neg); }
};
struct Positive {
  template <class T> requires (is_num<T> && !std::is_same_v<T, bool>) T operator()(T a) const { return a; }
};
struct Absolute {
  template <class T> requires is_num<T> auto operator()(T a) const {
    if constexpr (is_cplx<T>) return npk::cabs_vec(to_rule(a));  // NumPy's SIMD loop
    else return npk::absv(a);
  }
};
struct Fabs {
  template <class T> requires is_real_float<T> T operator()(T a) const { return std::fabs(a); }
};
struct Sign {
  template <class T> requires (is_num<T> && !std::is_same_v<T, bool>) T operator()(T a) const { return NPC_RULE1(signv); }
};
struct Heaviside {
  template <class T> requires is_real_float<T> T operator()(T x, T h0) const { return npk::heaviside(x, h0); }
};
struct Reciprocal {
  template <class T> requires (is_num<T> && !std::is_same_v<T, bool>) T operator()(T a) const { return NPC_RULE1(reciprocal); }
};
struct Square {
  template <class T> requires (is_num<T> && !std::is_same_v<T, bool>) T operator()(T a) const { return NPC_RULE1(square); }
};
struct Conjugate {
  template <class T> requires (is_num<T> && !std::is_same_v<T, bool>) T operator()(T a) const { return NPC_RULE1(conj); }
};

// ---------------------------------------------------------------- maximum / minimum
// float32/float64 run NumPy's SIMD loop (ties give the second operand), the other dtypes
// its scalar loops (npk::maxv: ties give the first).
struct Maximum {
  template <class T> requires is_num<T> T operator()(T a, T b) const {
    if constexpr (is_real_float<T>) return npk::maxv_vec(a, b);
    else return NPC_RULE2(maxv);
  }
};
struct Minimum {
  template <class T> requires is_num<T> T operator()(T a, T b) const {
    if constexpr (is_real_float<T>) return npk::minv_vec(a, b);
    else return NPC_RULE2(minv);
  }
};
struct Fmax {
  template <class T> requires is_num<T> T operator()(T a, T b) const { return NPC_RULE2(fmaxv); }
};
struct Fmin {
  template <class T> requires is_num<T> T operator()(T a, T b) const { return NPC_RULE2(fminv); }
};

// ---------------------------------------------------------------- gcd / lcm
struct Gcd {
  template <class T> requires is_int<T> T operator()(T a, T b) const { return npk::gcdv(a, b); }
};
struct Lcm {
  template <class T> requires is_int<T> T operator()(T a, T b) const { return npk::lcmv(a, b); }
};

// NumPy's scalar (non-SIMD) complex loops, which it runs when an operand has a negative
// stride: the plain product and npy_hypot. See Note [complex product].
struct MultiplyPlain {
  template <class T> requires is_cplx<T> T operator()(T a, T b) const { return NPC_RULE2(mul_plain); }
};
struct SquarePlain {
  template <class T> requires is_cplx<T> T operator()(T a) const { return MultiplyPlain{}(a, a); }
};
struct AbsolutePlain {
  template <class T> requires is_cplx<T> auto operator()(T a) const { return npk::absv(to_rule(a)); }
};
#undef NPC_RULE1
#undef NPC_RULE2

// An input that overlaps the output without being it (accumulate, shifted views).
inline bool partial_overlap(const std::byte* in, int64_t si, const std::byte* out, int64_t so, int64_t n) {
  if (in == out || n <= 1) return false;
  const std::byte* ilo = si < 0 ? in + (n - 1) * si : in;
  const std::byte* ihi = si < 0 ? in : in + (n - 1) * si;
  const std::byte* olo = so < 0 ? out + (n - 1) * so : out;
  const std::byte* ohi = so < 0 ? out : out + (n - 1) * so;
  return ilo <= ohi && olo <= ihi;
}

template <class Simd, class Plain, class T, int N>
void by_stride_sign(std::byte* const* p, const int64_t* s, int64_t n) {
  bool neg = false;
  for (int k = 0; k < N; ++k) neg |= s[k] < 0;
  for (int k = 0; k + 1 < N; ++k) neg |= partial_overlap(p[k], s[k], p[N - 1], s[N - 1], n);
  if constexpr (N == 3) {
    if (neg) binary_loop<Plain, T, T>(p, s, n);
    else binary_loop<Simd, T, T>(p, s, n);
  } else {
    if (neg) unary_loop<Plain, T>(p, s, n);
    else unary_loop<Simd, T>(p, s, n);
  }
}

// Measured against NumPy 2.x on x86-64 (AVX512F): complex64 products and both absolute
// values take the scalar loop for negative strides; complex128 products stay vectorised.
template <class Simd, class Plain, class T>
void by_overlap(std::byte* const* p, const int64_t* s, int64_t n) {
  if (partial_overlap(p[0], s[0], p[2], s[2], n) || partial_overlap(p[1], s[1], p[2], s[2], n))
    binary_loop<Plain, T, T>(p, s, n);
  else
    binary_loop<Simd, T, T>(p, s, n);
}

template <class T>
void register_complex_variants(Registrar& r, DType t) {
  if constexpr (std::is_same_v<T, std::complex<float>>) {
    r.set(OpId::multiply, t, &by_stride_sign<Multiply, MultiplyPlain, T, 3>);
    r.set(OpId::square, t, &by_stride_sign<Square, SquarePlain, T, 2>);
  } else {
    r.set(OpId::multiply, t, &by_overlap<Multiply, MultiplyPlain, T>);
  }
  r.set(OpId::absolute, t, &by_stride_sign<Absolute, AbsolutePlain, T, 2>);
}

// float16 maximum/minimum are NumPy's scalar loops: ties return the first operand.
struct MaximumHalf {
  template <class T> requires is_real_float<T> T operator()(T a, T b) const { return npk::maxv(a, b); }
};
struct MinimumHalf {
  template <class T> requires is_real_float<T> T operator()(T a, T b) const { return npk::minv(a, b); }
};

// NumPy's float32/float64 power loop takes sqrt for a stride-0 exponent of 0.5 (a scalar
// or broadcast exponent): power(-0.0, 0.5) is -0.0 and power(-inf, 0.5) NaN with "invalid",
// where pow() gives +0.0 and +inf. Its other fast cases (-1, 0, 1, 2) equal pow()'s results.
template <class T>
void power_float_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  if (s[1] == 0 && n > 0 && load<T>(p[1]) == T(0.5)) {
    for (int64_t i = 0; i < n; ++i) store<T>(p[2] + i * s[2], std::sqrt(load<T>(p[0] + i * s[0])));
    return;
  }
  binary_loop<Power, T, T>(p, s, n);
}

}  // namespace

void register_arith(Registrar& r) {
  r.binary<Add>(OpId::add);
  r.binary<Subtract>(OpId::subtract);
  r.binary<Multiply>(OpId::multiply);
  r.binary<Divide>(OpId::divide);
  r.binary<FloorDivide>(OpId::floor_divide);
  r.binary<Remainder>(OpId::remainder);
  r.binary<Fmod>(OpId::fmod);
  r.binary<Divmod>(OpId::divmod);
  r.binary<Power>(OpId::power);
  r.binary<Power>(OpId::float_power);
  r.unary<Negative>(OpId::negative);
  r.unary<Positive>(OpId::positive);
  r.unary<Absolute>(OpId::absolute);
  r.unary<Fabs>(OpId::fabs);
  r.unary<Sign>(OpId::sign);
  r.binary<Heaviside>(OpId::heaviside);
  r.unary<Reciprocal>(OpId::reciprocal);
  r.unary<Square>(OpId::square);
  r.unary<Conjugate>(OpId::conjugate);
  r.binary<Maximum>(OpId::maximum);
  r.binary<Minimum>(OpId::minimum);
  r.binary<Fmax>(OpId::fmax);
  r.binary<Fmin>(OpId::fmin);
  r.binary<Gcd>(OpId::gcd);
  r.binary<Lcm>(OpId::lcm);
  register_complex_variants<std::complex<float>>(r, DType::Complex64);
  register_complex_variants<std::complex<double>>(r, DType::Complex128);
  r.set(OpId::power, DType::Float32, &power_float_loop<float>);
  r.set(OpId::power, DType::Float64, &power_float_loop<double>);
  r.set(OpId::maximum, DType::Float16, &binary_loop<MaximumHalf, float16, float16>);
  r.set(OpId::minimum, DType::Float16, &binary_loop<MinimumHalf, float16, float16>);
}

}  // namespace npc::ops
