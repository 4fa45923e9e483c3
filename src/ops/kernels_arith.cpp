// Arithmetic ufuncs: the loops where NumPy's kernel is not the row's scalar rule (complex
// products and absolute values by stride, float power with a 0.5 exponent, float32/float64
// maximum/minimum), and a third of the rows' rule kernels.
//
// Note [integer semantics]
// Signed integer arithmetic wraps like NumPy's (two's complement) without C++ undefined
// behaviour: it is done in an unsigned type (npk::uw). Division and remainder by zero give 0
// and raise the "divide" flag; INT_MIN // -1 gives INT_MIN and raises "overflow".
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/loops.hpp"
#include "ops/rules.hpp"

namespace npc::ops {
namespace {

// The element rules are npk::* (include/npc/scalar_rules.hpp, Note [scalar rules]), shared
// with the fused kernels; every row's rule is registered for all its loops (Note [rule
// kernels] in rules.hpp). This file registers the loops where NumPy runs another loop.
// Note [complex product]
// NumPy's SIMD complex multiply (x86-64 with FMA) computes re = fma(ar, br, -(ai*bi)) and
// im = fma(ar, bi, ai*br) (npk::mul); its scalar loops, which it runs when an operand has a
// negative stride, use the plain product (npk::mul_plain) and npy_hypot for absolute
// (npk::absv). Division is Smith's algorithm, as npy_math (npk::div).
#define NPC_RULE2(rule) from_rule(npk::rule(to_rule(a), to_rule(b)))

using Multiply = Rule<OpId::multiply>;
using Square = Rule<OpId::square>;
// NumPy's SIMD loop of complex absolute.
struct Absolute {
  template <class T> requires is_cplx<T> auto operator()(T a) const { return npk::cabs_vec(to_rule(a)); }
};

// ---------------------------------------------------------------- maximum / minimum
// float32/float64 run NumPy's SIMD loop (ties give the second operand), the other dtypes
// its scalar loops (the rows' rules, npk::maxv: ties give the first).
struct MaximumVec {
  static constexpr bool kWideArith = true;  // Note [wide arithmetic] in loops.hpp
  template <class T> requires is_real_float<T> T operator()(T a, T b) const { return npk::maxv_vec(a, b); }
};
struct MinimumVec {
  static constexpr bool kWideArith = true;
  template <class T> requires is_real_float<T> T operator()(T a, T b) const { return npk::minv_vec(a, b); }
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
#undef NPC_RULE2

// NumPy's scalar integer arithmetic, which raises "overflow" where its loops wrap silently
// (Note [integer scalar overflow] in include/npc/scalar_rules.hpp).
struct ScalarAdd {
  template <class T> requires npk::is_int<T> T operator()(T a, T b) const { return npk::scalar_add(a, b); }
};
struct ScalarSubtract {
  template <class T> requires npk::is_int<T> T operator()(T a, T b) const { return npk::scalar_sub(a, b); }
};
struct ScalarMultiply {
  template <class T> requires npk::is_int<T> T operator()(T a, T b) const { return npk::scalar_mul(a, b); }
};
struct ScalarNegative {
  template <class T> requires npk::is_int<T> T operator()(T a) const { return npk::scalar_neg(a); }
};
struct ScalarAbsolute {
  template <class T> requires npk::is_int<T> T operator()(T a) const { return npk::scalar_abs(a); }
};

template <class T>
LoopFn scalar_math_loop_of(OpId op) {
  switch (op) {
    case OpId::add: return &binary_loop<ScalarAdd, T, T>;
    case OpId::subtract: return &binary_loop<ScalarSubtract, T, T>;
    case OpId::multiply: return &binary_loop<ScalarMultiply, T, T>;
    case OpId::negative: return &unary_loop<ScalarNegative, T>;
    case OpId::absolute: return &unary_loop<ScalarAbsolute, T>;
    default: return nullptr;
  }
}

// An input that overlaps the output without being it (accumulate, shifted views).
inline bool partial_overlap(const std::byte* in, int64_t si, const std::byte* out, int64_t so, int64_t n) {
  if (in == out || n <= 1) return false;
  const std::byte* ilo = si < 0 ? in + (n - 1) * si : in;
  const std::byte* ihi = si < 0 ? in : in + (n - 1) * si;
  const std::byte* olo = so < 0 ? out + (n - 1) * so : out;
  const std::byte* ohi = so < 0 ? out : out + (n - 1) * so;
  return ilo <= ohi && olo <= ihi;
}

// Note [loops by stride sign]
// Measured on 1-D runs (NumPy 2.5, x86-64 AVX512F): NumPy walks a loop whose operands all
// step backwards (or not at all) forwards, with its SIMD loop; otherwise complex absolute
// takes its scalar loop when the input or the output steps backwards, complex64 products
// and squares when an input does (a reversed out= alone keeps the SIMD product).
inline bool scalar_by_sign(const int64_t* s, int nops, bool output_counts) {
  bool neg = false, pos = false, in_neg = false;
  for (int k = 0; k < nops; ++k) {
    neg |= s[k] < 0;
    pos |= s[k] > 0;
    if (k + 1 < nops) in_neg |= s[k] < 0;
  }
  if (neg && !pos) return false;
  return output_counts ? neg : in_neg;
}

template <class Simd, class Plain, class T, int N>
void by_stride_sign(std::byte* const* p, const int64_t* s, int64_t n) {
  bool neg = scalar_by_sign(s, N, std::is_same_v<Simd, Absolute>);
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

// NumPy's float32/float64 power loop takes sqrt for a stride-0 exponent of 0.5 (a scalar
// or broadcast exponent): power(-0.0, 0.5) is -0.0 and power(-inf, 0.5) NaN with "invalid",
// where pow() gives +0.0 and +inf. Its other fast cases (-1, 0, 1, 2) equal pow()'s results;
// the exponent 2 is its product x * x, run here as the (vectorised, multiversioned) multiply
// loop with the base as both operands instead of one pow() call per element.
template <class T>
void power_float_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  if (s[1] == 0 && n > 0 && load<T>(p[1]) == T(0.5)) {
    for (int64_t i = 0; i < n; ++i) store<T>(p[2] + i * s[2], std::sqrt(load<T>(p[0] + i * s[0])));
    return;
  }
  if (s[1] == 0 && n > 0 && load<T>(p[1]) == T(2)) {
    std::byte* const q[3] = {p[0], p[0], p[2]};
    const int64_t qs[3] = {s[0], s[0], s[2]};
    binary_loop<Multiply, T, T>(q, qs, n);
    return;
  }
  binary_loop<Rule<OpId::power>, T, T>(p, s, n);
}

}  // namespace

template <class C>
LoopFn loop_variant_of(OpId op, bool scalar) {
  if (op == OpId::absolute) return scalar ? &unary_loop<AbsolutePlain, C> : &unary_loop<Absolute, C>;
  if (op == OpId::multiply) return scalar ? &binary_loop<MultiplyPlain, C, C> : &binary_loop<Multiply, C, C>;
  if (op == OpId::square) return scalar ? &unary_loop<SquarePlain, C> : &unary_loop<Square, C>;
  return nullptr;
}

LoopFn scalar_math_loop(OpId op, DType t) {
  switch (t) {
    case DType::Int8: return scalar_math_loop_of<int8_t>(op);
    case DType::Int16: return scalar_math_loop_of<int16_t>(op);
    case DType::Int32: return scalar_math_loop_of<int32_t>(op);
    case DType::Int64: return scalar_math_loop_of<int64_t>(op);
    case DType::UInt8: return scalar_math_loop_of<uint8_t>(op);
    case DType::UInt16: return scalar_math_loop_of<uint16_t>(op);
    case DType::UInt32: return scalar_math_loop_of<uint32_t>(op);
    case DType::UInt64: return scalar_math_loop_of<uint64_t>(op);
    default: return nullptr;
  }
}

LoopFn loop_variant(OpId op, DType t, bool scalar) {
  if (t == DType::Complex64) return loop_variant_of<std::complex<float>>(op, scalar);
  if (t == DType::Complex128) return loop_variant_of<std::complex<double>>(op, scalar);
  return nullptr;
}

// The loop by_stride_sign picks, predicted from the operands' strides: NumPy's innermost axis
// is the one of smallest nonzero |stride| (the last of equals), and the eager executor runs it
// innermost (Note [loop order] in core/strided.hpp). Partial overlap is not predicted.
//
// Note [buffered operands]
// Measured (NumPy 2.5, x86-64 AVX512F): when the operands of a ufunc cannot be walked as one
// run (the iteration does not coalesce to one axis: `z[:, ::-1]`, `z.T[::-1]`), NumPy's
// buffered iterator copies each operand that no single stride walks over the whole iteration
// into a forward buffer, so its loop sees a positive stride for it: np.abs(z[:, ::-1]) takes
// the SIMD loop. An operand one stride walks keeps it, negative too (`z[::-1, ::-1][:4]` times
// a strided operand takes the scalar product); a fully reversed view alone coalesces and keeps
// its negative stride (the scalar loop, as 1-D).
bool picks_loop_by_strides(OpId op, DType t) {
  return (op == OpId::absolute && is_complex(t)) ||
         (t == DType::Complex64 && (op == OpId::multiply || op == OpId::square));
}

std::optional<bool> runs_scalar_loop(OpId op, DType t, std::span<const ndarray> operands,
                                     std::span<const int64_t> shape, bool fresh_output, bool* buffered) {
  if (buffered) *buffered = false;
  if (!picks_loop_by_strides(op, t)) return std::nullopt;
  const int nd = static_cast<int>(shape.size());
  auto stride = [&](const ndarray& a, int d) -> int64_t {
    const int k = d - (nd - a.ndim());
    return k < 0 || a.shape()[k] == 1 ? 0 : a.strides()[k];
  };
  int inner = -1;
  int64_t best = 0;
  for (int d = 0; d < nd; ++d) {
    if (shape[d] <= 1) continue;
    for (const ndarray& a : operands) {
      const int64_t s = std::abs(stride(a, d));
      if (s != 0 && (inner < 0 || s <= best)) inner = d, best = s;
    }
  }
  if (inner < 0) return false;
  // Note [buffered operands]: the axes in NumPy's iteration order (Note [output layout] in
  // ufunc.cpp), length-1 axes left out; whether each operand, and all of them at once, chain.
  std::vector<int> axes;
  for (int d : output_axes(shape, Order::K, operands))
    if (shape[d] > 1) axes.push_back(d);
  auto chains = [&](const ndarray& a) {
    for (size_t i = 0; i + 1 < axes.size(); ++i)
      if (stride(a, axes[i]) != stride(a, axes[i + 1]) * shape[axes[i + 1]]) return false;
    return true;
  };
  bool one_run = true;
  for (size_t i = 0; i + 1 < axes.size(); ++i)
    for (const ndarray& a : operands)
      one_run = one_run && stride(a, axes[i]) == stride(a, axes[i + 1]) * shape[axes[i + 1]];
  // Note [loops by stride sign]: the strides of the inner loop, the output last.
  std::vector<int64_t> s;
  for (const ndarray& a : operands) s.push_back(one_run || chains(a) ? stride(a, inner) : 1);
  if (fresh_output) s.push_back(1);
  if (buffered) *buffered = !one_run;
  return scalar_by_sign(s.data(), static_cast<int>(s.size()), op == OpId::absolute);
}

template <>
void register_rules<0>(Registrar& r) {
  register_rule_kernels<0>(r);
}

void register_arith(Registrar& r) {
  register_complex_variants<std::complex<float>>(r, DType::Complex64);
  register_complex_variants<std::complex<double>>(r, DType::Complex128);
  r.set(OpId::power, DType::Float32, &power_float_loop<float>);
  r.set(OpId::power, DType::Float64, &power_float_loop<double>);
  r.set(OpId::maximum, DType::Float32, &binary_loop<MaximumVec, float, float>);
  r.set(OpId::maximum, DType::Float64, &binary_loop<MaximumVec, double, double>);
  r.set(OpId::minimum, DType::Float32, &binary_loop<MinimumVec, float, float>);
  r.set(OpId::minimum, DType::Float64, &binary_loop<MinimumVec, double, double>);
}

}  // namespace npc::ops
