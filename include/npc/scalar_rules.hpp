// NumPy's per-element rules, written once (see Note [scalar rules] below).
//
// This header is plain C++17 with no npc dependency. The eager ufunc kernels (src/ops/kernels_*.cpp)
// include it; the fused C++ kernels get it as part of their prelude (src/fusion/prelude_cpu.hpp,
// embedded into npc at build time by cmake/embed_prelude.cmake), so generated code and eager
// code compute every element with the same functions.
#ifndef NPC_SCALAR_RULES_HPP
#define NPC_SCALAR_RULES_HPP

// Note [scalar rules]
// Every rule here is a function of element values (templated on the element type: bool,
// the integers, float, double, npk::cplx<float>, npk::cplx<double>; float16 is computed in
// float) that gives NumPy's result for one element, named after the NumPy loop it mirrors.
// Where NumPy has two loops with different results for one ufunc (its SIMD loop and its
// scalar loop: complex absolute, the complex product, float maximum/minimum ties), both are
// rules and the caller picks the loop NumPy would run.
//
// The rules must stay compilable as CUDA `__host__ __device__` code and by NVRTC, so they
// use no <cfenv>, no I/O, no host-only library calls (the C library's complex functions are
// the one host-only section, marked), and reach the target through hooks that the includer
// defines before including this header:
// - NPK_HD: qualifiers of every rule (default: none; `__host__ __device__` on CUDA).
// - NPK_RAISE_FP(bits): raises floating-point error kinds, npc's FpFlag bits (1 divide,
//   2 overflow, 4 underflow, 8 invalid), where NumPy's loops set them without an IEEE
//   operation doing it (integer division by zero, float16 rounding, complex 0 ** -1).
//   Required: eager kernels set the hardware flags, fused kernels too, a GPU target would
//   OR them into a status word.
// - NPK_SANITIZED_ORDER: 1 makes the quiet ordered comparisons (lt, le) compare NaN-free
//   operands with C's `<` (default 0: C's std::isless and std::islessequal). The fused
//   kernels' prelude sets it: compiled with -march=native, GCC vectorizes isless into
//   signaling compares that raise "invalid" on NaN (Note [sanitized comparisons]). The eager
//   kernels, compiled for baseline x86-64, keep C's compares (same results).
// - NPK_KEEP_ROUNDED(x): keeps the floating-point lvalue x rounded on its own
//   (default: nothing). GCC's vectorizer fuses `x + y * r` pairs of complex formulas into
//   vfmaddsub whatever -ffp-contract says; the fused kernels' prelude defines this hook as an
//   empty asm statement so that every product is rounded as NumPy rounds it.
// - NPK_KEEP_NARROWED(x): keeps a part of a narrowed complex value rounded on its own
//   (default: nothing; the fused kernels' prelude: the empty asm; Note [narrowed complex parts]).
// - NPK_KEEP_EVALUATED(x): as NPK_KEEP_ROUNDED, and x is computed on every path even where
//   the rule's result does not use it, so that it raises its floating-point flags (default:
//   NPK_KEEP_ROUNDED; the eager and fused kernels define it as a volatile empty asm).
// Adding a ufunc's element rule: write it here with a `///` line naming the NumPy loop, as
// the row's entry point npk::ufunc::<name> (Note [ufunc entry points], at the end): the eager
// kernels and the fused emitter take it from there.

#ifndef __CUDACC_RTC__
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#endif
// Note [one-element complex products]
#if defined(__x86_64__) && defined(__FMA__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    !defined(__CUDACC_RTC__)
#define NPK_CPROD_FMADDSUB 1
#endif

#ifndef NPK_HD
#define NPK_HD
#endif
// Rules have internal linkage: each translation unit (an eager kernel file, a generated
// kernel, a program that includes this header with its own NPK_RAISE_FP) has its own copy,
// so includers with different hooks never break the one-definition rule, and a loaded
// kernel never binds to another binary's copy. (Undefined again at the end.)
#define NPK_FN static inline NPK_HD
#ifndef NPK_KEEP_ROUNDED
#define NPK_KEEP_ROUNDED(x) ((void)0)
#endif
#ifndef NPK_KEEP_NARROWED
#define NPK_KEEP_NARROWED(x) ((void)0)
#endif
#ifndef NPK_KEEP_EVALUATED
#define NPK_KEEP_EVALUATED(x) NPK_KEEP_ROUNDED(x)
#endif
#ifndef NPK_SANITIZED_ORDER
#define NPK_SANITIZED_ORDER 0
#endif
#ifndef NPK_RAISE_FP
#error "define NPK_RAISE_FP(bits) before including npc/scalar_rules.hpp (Note [scalar rules])"
#endif

namespace npk {

// ---------------------------------------------------------------- types

/// A complex value as NumPy stores it (real part, then imaginary part).
template <class T> struct cplx { T re, im; };
using c64 = cplx<float>;
using c128 = cplx<double>;

/// The two results of a ufunc with two outputs (divmod, frexp, modf).
template <class A, class B> struct two { A first; B second; };
template <class T> inline constexpr bool is_two = false;
template <class A, class B> inline constexpr bool is_two<two<A, B>> = true;
/// Integer element types (bool excluded).
template <class T> inline constexpr bool is_int = std::is_integral_v<T> && !std::is_same_v<T, bool>;
/// Complex element types.
template <class T> inline constexpr bool is_cplx = false;
template <class T> inline constexpr bool is_cplx<cplx<T>> = true;
/// Unsigned type wide enough that arithmetic on it never promotes to signed int: integer
/// arithmetic wraps in it as NumPy's does, without C++ undefined behaviour.
template <class T> using uw = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

/// The bits of `v` as a `To` of the same size.
template <class To, class From> NPK_FN To bits_as(From v) {
  static_assert(sizeof(To) == sizeof(From), "bits_as: sizes differ");
  To r;
  std::memcpy(&r, &v, sizeof(To));
  return r;
}

/// NumPy's integer-loop flags: "divide by zero" and "overflow".
NPK_FN void raise_div0() { NPK_RAISE_FP(1); }
NPK_FN void raise_ovf() { NPK_RAISE_FP(2); }
NPK_FN void raise_invalid() { NPK_RAISE_FP(8); }

// ---------------------------------------------------------------- quiet comparisons
// NumPy's comparisons are quiet: a NaN operand raises no "invalid". Not `<`, which is a
// signaling compare; with NPK_SANITIZED_ORDER it only ever sees NaN-free operands.
//
// Note [sanitized comparisons]
// GCC (12, -O3 -march=native) vectorizes std::isless and std::islessequal into signaling
// vcmppd predicates (NLT_US, ...), which raise "invalid" for a quiet NaN operand, where
// NumPy's loops raise nothing; equality tests (a == a) stay quiet. So in the fused kernels
// lt/le first test each operand for NaN with a quiet a == a, clear the bits of a NaN operand
// (it compares as +0.0, raising nothing), compare with C's `<` / `<=`, and give false when
// either operand was NaN. For NaN-free operands that is C's compare itself: -0.0 == 0.0,
// infinities ordered, subnormals compared exactly, so results are NumPy's bit for bit. A
// loop-invariant operand (a scalar bound) is sanitized once, outside the loop; an array
// operand costs one quiet compare and one AND. The order-preserving integer keys used before
// (three quiet compares, two keys, an integer compare) cost more: a fused
// `(lo <= r) & (r < hi)` over 400000 float64 took 350 us with them, 210 us now. Masking by
// integer bits (not `a == a ? a : 0`) keeps the loops vectorized: GCC left the select form
// scalar for a compare against a broadcast bound.
/// `a` when it is not NaN, else +0.0, without a floating-point operation.
template <class T> NPK_FN T nan_to_zero_bits(T a, bool not_nan) {
  using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
  return bits_as<T>((I)(bits_as<I>(a) & -(I)not_nan));
}
/// numpy.less, quiet (false when either is NaN).
template <class T> NPK_FN bool lt(T a, T b) {
#if NPK_SANITIZED_ORDER
  if constexpr (std::is_floating_point_v<T>) {
    bool oa = a == a, ob = b == b;
    return oa & ob & (nan_to_zero_bits(a, oa) < nan_to_zero_bits(b, ob));
  }
#else
  if constexpr (std::is_floating_point_v<T>) return std::isless(a, b);
#endif
  else return a < b;
}
/// numpy.less_equal, quiet.
template <class T> NPK_FN bool le(T a, T b) {
#if NPK_SANITIZED_ORDER
  if constexpr (std::is_floating_point_v<T>) {
    bool oa = a == a, ob = b == b;
    return oa & ob & (nan_to_zero_bits(a, oa) <= nan_to_zero_bits(b, ob));
  }
#else
  if constexpr (std::is_floating_point_v<T>) return std::islessequal(a, b);
#endif
  else return a <= b;
}
/// numpy.equal (complex: both parts equal).
template <class T> NPK_FN bool eq(T a, T b) {
  if constexpr (is_cplx<T>) return a.re == b.re && a.im == b.im;
  else return a == b;
}
/// NumPy's complex order (its CLT/CLE/CGT/CGE macros): lexicographic, but a decision on the
/// real parts needs both imaginary parts to be numbers (1+nanj < 2+0j is False).
template <class R> NPK_FN bool clt(cplx<R> a, cplx<R> b) {
  return (a.re < b.re && !std::isnan(a.im) && !std::isnan(b.im)) || (a.re == b.re && a.im < b.im);
}
template <class R> NPK_FN bool cle(cplx<R> a, cplx<R> b) {
  return (a.re < b.re && !std::isnan(a.im) && !std::isnan(b.im)) || (a.re == b.re && a.im <= b.im);
}
/// The truth value of an element (logical_and/or/xor/not, nonzero): complex is true when
/// either part is nonzero.
template <class T> NPK_FN bool truth(T a) {
  if constexpr (is_cplx<T>) return a.re != 0 || a.im != 0;
  else return a != 0;
}

// Steps of float max/min reductions (NaN is tracked apart): a NaN element is replaced by
// the accumulator before the ordered compare, so the compare never sees a NaN.
// The replacement is done on the bits: as a float select GCC folds it away and compares
// the NaN (vmaxpd, which raises "invalid").

/// `v`, or `acc` when `v` is NaN (selected on the bits).
template <class T> NPK_FN T notnan_or(T v, T acc) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  U bv = bits_as<U>(v), ba = bits_as<U>(acc);
  U m = (U)0 - (U)(v == v);
  return bits_as<T>((U)((bv & m) | (ba & ~m)));
}
/// A step of numpy.max's reduction over non-NaN elements.
template <class T> NPK_FN T qmax(T acc, T v) { T q = notnan_or(v, acc); return q > acc ? q : acc; }
/// A step of numpy.min's reduction over non-NaN elements.
template <class T> NPK_FN T qmin(T acc, T v) { T q = notnan_or(v, acc); return q < acc ? q : acc; }

// ---------------------------------------------------------------- float16
/// float16 bits (IEEE binary16) to float, exactly (npy_half_to_float).
NPK_FN float h2f(uint16_t h) {
  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, b;
  if (e == 0) {
    if (m == 0) b = s;
    else { int sh = 0; while (!(m & 0x400u)) { m <<= 1; ++sh; } b = s | ((uint32_t)(113 - sh) << 23) | ((m & 0x3ffu) << 13); }
  } else if (e == 31) b = s | 0x7f800000u | (m << 13);
  else b = s | ((e + 112) << 23) | (m << 13);
  return bits_as<float>(b);
}
/// Rounds to the nearest float16 (ties to even) and, like NumPy's npy_double_to_half (its
/// float16 loops and casts), raises "overflow" when a finite value becomes inf and
/// "underflow" when a nonzero value loses bits as a subnormal or zero.
NPK_FN uint16_t d2h(double d) {
  uint64_t b = bits_as<uint64_t>(d);
  uint16_t sign = (uint16_t)((b >> 48) & 0x8000u);
  uint64_t ab = b & 0x7fffffffffffffffull;
  if (ab >= 0x7ff0000000000000ull) {
    if (ab == 0x7ff0000000000000ull) return sign | 0x7c00u;
    uint16_t m = (uint16_t)((ab >> 42) & 0x3ffu);
    return sign | 0x7c00u | (m ? m : 0x200u);
  }
  int e = (int)(ab >> 52) - 1023;
  if (e > 15) { NPK_RAISE_FP(2); return sign | 0x7c00u; }
  if (e < -25) { if (ab) NPK_RAISE_FP(4); return sign; }
  uint64_t mant = (ab & 0xfffffffffffffull) | 0x10000000000000ull;
  int shift = e >= -14 ? 42 : 42 + (-14 - e);
  uint64_t q = mant >> shift, rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  if (e >= -14) {
    uint16_t h = (uint16_t)((((uint64_t)(e + 15)) << 10) + q - 0x400);
    if (h == 0x7c00u) NPK_RAISE_FP(2);  // rounded up to inf
    return (uint16_t)(sign | h);
  }
  if (rem) NPK_RAISE_FP(4);
  return (uint16_t)(sign | (uint16_t)q);
}
/// Rounds a float result of a float16 loop to float16 (and back to float).
NPK_FN float r16(float x) { return h2f(d2h(x)); }
/// numpy.nextafter for float16, on the bit patterns (npy_half_nextafter).
NPK_FN uint16_t half_nextafter(uint16_t x, uint16_t y) {
  auto isnan = [](uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0; };
  uint16_t r;
  if (isnan(x) || isnan(y)) r = 0x7e00u;
  else if (x == y || ((x | y) & 0x7fffu) == 0) r = y;
  else if ((x & 0x7fffu) == 0) r = (uint16_t)((y & 0x8000u) + 1);
  else if (!(x & 0x8000u)) r = ((int16_t)x > (int16_t)y) ? x - 1 : x + 1;
  else r = (!(y & 0x8000u) || (x & 0x7fffu) > (y & 0x7fffu)) ? x - 1 : x + 1;
  if ((r & 0x7fffu) == 0x7c00u && (x & 0x7c00u) != 0x7c00u) raise_ovf();
  return r;
}
/// numpy.spacing for float16, on the bit patterns (npy_half_spacing).
NPK_FN uint16_t half_spacing(uint16_t h) {
  const uint16_t e = h & 0x7c00u, sig = h & 0x03ffu;
  if (e == 0x7c00u) { raise_invalid(); return 0x7e00u; }
  if (h == 0x7bffu) { raise_ovf(); return 0x7c00u; }
  if ((h & 0x8000u) && sig == 0) {
    if (e > 0x2c00u) return (uint16_t)(e - 0x2c00u);
    if (e > 0x0400u) return (uint16_t)(1u << ((e >> 10) - 2));
    return 1;
  }
  if (e > 0x2800u) return (uint16_t)(e - 0x2800u);
  if (e > 0x0400u) return (uint16_t)(1u << ((e >> 10) - 1));
  return 1;
}

// ---------------------------------------------------------------- casts
// Note [cast flags]
// x86-64's conversions (cvttsd2si, vcvttpd2qq) give the "integer indefinite" value (the
// type's minimum) for NaN and values out of range, and raise "invalid": NumPy's casts warn
// "invalid value encountered in cast". C++ leaves such a conversion undefined, so the rules
// select the minimum themselves; `inf - inf`, computed for the lanes out of range only,
// raises the flag (the comparison that picks the result keeps it alive). It stays a vector
// select: no branch, no call. Each conversion below converts once, so that a value in range
// raises nothing in a vector loop that computes both sides of a select.
/// float64 (or float32) -> int64 as x86-64's cvttsd2si gives it: INT64_MIN and "invalid"
/// when out of range or NaN.
template <class F> NPK_FN int64_t cvt64(F v) {
  const bool ok = v >= F(-9223372036854775808.0) && v < F(9223372036854775808.0);
  const F big = ok ? F(0) : F(__builtin_inf());
  const F q = big - big;  // "invalid" when out of range (Note [cast flags])
  return q == F(0) ? (int64_t)(ok ? v : F(0)) : INT64_MIN;
}
/// float64 (or float32) -> int32 as cvttsd2si gives it: INT32_MIN and "invalid" when out of
/// range or NaN. (-2**31 - 1 rounds to -2**31 in float32, which converts: >= there.)
template <class F> NPK_FN int32_t cvt32(F v) {
  const bool ok = (sizeof(F) == 4 ? v >= F(-2147483648.0) : v > F(-2147483649.0)) && v < F(2147483648.0);
  const F big = ok ? F(0) : F(__builtin_inf());
  const F q = big - big;  // "invalid" when out of range (Note [cast flags])
  return q == F(0) ? (int32_t)(ok ? v : F(0)) : INT32_MIN;
}
/// Float -> integer conversion of NumPy's casts and loops on x86-64 (a float32 converts as
/// its exact double would).
template <class To, class F> NPK_FN To f2i(F v) {
  if constexpr (std::is_same_v<To, int64_t>) return cvt64(v);
  else if constexpr (std::is_same_v<To, uint64_t>) {
    // x86 code: values from 2**63 convert less 2**63, with the top bit set again (NaN: not).
    const bool hi = v >= F(9223372036854775808.0);
    return (uint64_t)cvt64(hi ? v - F(9223372036854775808.0) : v) ^ (hi ? 0x8000000000000000ull : 0ull);
  } else if constexpr (std::is_same_v<To, uint32_t>) {
    // float32/float64 -> uint32 (NumPy's loops): the uint64 scheme at 32 bits.
    const bool hi = v >= F(2147483648.0);
    return (uint32_t)cvt32(hi ? v - F(2147483648.0) : v) ^ (hi ? 0x80000000u : 0u);
  }
  else return (To)cvt32(v);
}
/// NumPy's casts between bool, the integers, float, double, c64, c128 (float16 is float):
/// complex -> real takes the real part, anything -> bool is `!= 0`.
template <class To, class From> NPK_FN To cast(From v) {
  if constexpr (std::is_same_v<To, From>) return v;
  else if constexpr (is_cplx<From>) {
    if constexpr (is_cplx<To>) {
      using R = decltype(To{}.re);
      R re = (R)v.re, im = (R)v.im;
      // Note [narrowed complex parts]
      // GCC 12's basic-block (SLP) vectorizer turns a complex128 -> complex64 -> complex128
      // round trip into the identity when it pairs the parts (`S += Y; S += Z` with S
      // complex64 and Y, Z complex128 gave S + Y + Z unrounded, not NumPy's
      // c64(c64(S + Y) + Z)); kept apart (NPK_KEEP_NARROWED), each part is rounded on its
      // own. The eager loops, built without -fopenmp for baseline x86-64, were not affected.
      if constexpr (sizeof(R) < sizeof(v.re)) {
        NPK_KEEP_NARROWED(re);
        NPK_KEEP_NARROWED(im);
      }
      return To{re, im};
    }
    else if constexpr (std::is_same_v<To, bool>) return v.re != 0 || v.im != 0;
    else return cast<To>(v.re);
  } else if constexpr (is_cplx<To>) {
    return To{cast<decltype(To{}.re)>(v), 0};
  } else if constexpr (std::is_same_v<To, bool>) return v != 0;
  else if constexpr (is_int<To> && std::is_floating_point_v<From>) return f2i<To>(v);
  else return (To)v;
}

// ---------------------------------------------------------------- arithmetic
/// numpy.add: integers wrap, bool is `or`.
template <class T> NPK_FN T add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a || b;
  else if constexpr (is_int<T>) return (T)((uw<T>)a + (uw<T>)b);
  else if constexpr (is_cplx<T>) return T{a.re + b.re, a.im + b.im};
  else return a + b;
}
/// numpy.subtract: integers wrap.
template <class T> NPK_FN T sub(T a, T b) {
  if constexpr (is_int<T>) return (T)((uw<T>)a - (uw<T>)b);
  else if constexpr (is_cplx<T>) return T{a.re - b.re, a.im - b.im};
  else return a - b;
}
// Note [NaNs of the complex product]
// NumPy's SIMD complex product (x86-64 with FMA) is re = ar*br - ai*bi and im = ar*bi + ai*br
// as one vfmaddsub of (ar, ar) * (br, bi) -/+ (ai*bi, ai*br): no part is negated, so a NaN
// that reaches a part keeps its sign and payload, and where several do, the first of
// ar, then b's multiplicand part, then the other part of b, then ai wins (measured with
// NaNs of distinct payloads, complex64 and complex128 alike). Written as fma(ar, br, -c),
// the negation flips the sign of a NaN c (a product's default NaN, -nan on x86, became
// +nan: np.prod over rows that overflow to inf * 0). So NaN operands are picked in that
// order and only non-NaN values reach the fma; an invalid product or sum there gives the
// hardware's default NaN, as in NumPy. Its scalar loop (mul_plain) gives the same NaNs
// (measured on reversed complex64 operands: in ai*bi and ai*br b's NaN wins, in the sum
// and difference the first operand's).
template <class R> NPK_FN R mul_part(R x, R y, R u, R v, bool minus) {
  // x*y -/+ u*v with NumPy's NaN (x: ar, y: b's multiplicand part, u: the other part of b, v: ai).
  // Both operations always run, as in NumPy's instruction, so that they raise its
  // floating-point flags (inf * 0 in u*v while x is NaN raises "invalid" there too); the
  // NaN operand is picked afterwards (comparisons with != are quiet).
  // NPK_KEEP_EVALUATED: without it the compiler computes c and r only on the path that
  // returns r, and 0j * (inf+nanj) lost the "invalid" of 0 * inf in c (its part picks the NaN).
  R c = v * u;
  NPK_KEEP_EVALUATED(c);
  R r = std::fma(x, y, minus ? -c : c);
  NPK_KEEP_EVALUATED(r);
  if (x != x) return x;
  if (y != y) return y;
  if (u != u) return u;
  if (v != v) return v;
  if (c != c) return c;
  return r;
}
// Note [one-element complex products]
// mul_part's barriers and per-part NaN tests keep every association fixed, but they cost
// the generated kernels (compiled with -march=native) 2.5x the eager complex128 product
// (src/ops/complex_simd.hpp): a traced FFT butterfly, `even + tw * odd`, ran slower compiled
// than eagerly. Where the translation unit is built for FMA on x86-64, a complex128 product
// is NumPy's instruction itself on one element: (ar, ar) * (br, bi) -/+ (ai*bi, ai*br) as one
// vfmaddsub of an SSE register, which rounds and raises as mul_part's two parts do (the same
// products and fused multiply-adds; fma(x, y, -c) is x*y - c rounded once). A NaN result
// lane takes mul_part's NaN (ar, then b's multiplicand part, b's other part, ai, ai times b's
// other part, by quiet compares and blends: Note [NaN-free products] in complex_simd.hpp).
// Eager builds without those flags, and CUDA, keep mul_part.
// b's parts are held in registers (empty asm) before they are paired: otherwise GCC builds
// (br, bi) of a real cast to complex, (x, 0), with two 8-byte stores to the stack and one
// 16-byte load, which cannot be forwarded from them and stalls the loop about 12 cycles an
// element (`z * x - y` with x, y float64, 160,000 elements: 1.47 ms a call, 0.16 ms with
// the parts in registers; products of loaded complex operands change within noise).
#ifdef NPK_CPROD_FMADDSUB
// GCC's vector types and builtins, not <immintrin.h>: every generated kernel includes this
// header, and the intrinsics' headers added about 0.3 s to each kernel's compile.
typedef double npk_v2d __attribute__((vector_size(16)));
NPK_FN c128 mul_fmaddsub(c128 a, c128 b) {
  double br = b.re, bi = b.im;
  __asm__("" : "+x"(br), "+x"(bi));
  const npk_v2d y = {br, bi};
  const npk_v2d x = {a.re, a.re};
  const npk_v2d v = {a.im, a.im};
  const npk_v2d u = {bi, br};
  const npk_v2d c = v * u;                               // (ai*bi, ai*br)
  npk_v2d r = __builtin_ia32_vfmaddsubpd(x, y, c);        // (ar*br - ai*bi, ar*bi + ai*br)
  if (__builtin_ia32_movmskpd((npk_v2d)(r != r))) {      // quiet compares
    r = c != c ? c : r;
    r = v != v ? v : r;
    r = u != u ? u : r;
    r = y != y ? y : r;
    r = x != x ? x : r;
  }
  return c128{r[0], r[1]};
}
#endif

/// numpy.multiply: integers wrap, bool is `and`; complex is NumPy's SIMD product (x86-64
/// with FMA: re = fma(ar, br, -(ai*bi)), im = fma(ar, bi, ai*br)), spelled out so that no
/// vectorizer can pick another association, with its NaNs (Note [NaNs of the complex
/// product]; complex128 as the instruction itself where the build has FMA, Note [one-element
/// complex products]). Its scalar loop's product is mul_plain.
template <class T> NPK_FN T mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a && b;
  else if constexpr (is_int<T>) return (T)((uw<T>)a * (uw<T>)b);
#ifdef NPK_CPROD_FMADDSUB
  else if constexpr (std::is_same_v<T, c128>) return mul_fmaddsub(a, b);
#endif
  else if constexpr (is_cplx<T>) return T{mul_part(a.re, b.re, b.im, a.im, true), mul_part(a.re, b.im, b.re, a.im, false)};
  else return a * b;
}
/// `x` if it is NaN, else `y` if it is NaN, else `v` (the NaN an operation of x and y gives).
template <class R> NPK_FN R nan_first(R x, R y, R v) { return x != x ? x : y != y ? y : v; }
/// The complex product of NumPy's scalar loops (npy_cpow's products, cumprod, multiply with
/// a negative stride): each product rounded on its own, no fused multiply-add. Its NaNs are
/// the SIMD product's (Note [NaNs of the complex product]): in ai*bi and ai*br, b's NaN wins.
template <class T> NPK_FN T mul_plain(T a, T b) {
  auto r1 = a.re * b.re, r2 = a.im * b.im, i1 = a.re * b.im, i2 = a.im * b.re;
  NPK_KEEP_ROUNDED(r1);
  NPK_KEEP_ROUNDED(r2);
  NPK_KEEP_ROUNDED(i1);
  NPK_KEEP_ROUNDED(i2);
  r1 = nan_first(a.re, b.re, r1);
  r2 = nan_first(b.im, a.im, r2);
  i1 = nan_first(a.re, b.im, i1);
  i2 = nan_first(b.re, a.im, i2);
  return T{nan_first(r1, r2, r1 - r2), nan_first(i1, i2, i1 + i2)};
}
// Note [partial vectors of complex64]
// GCC 12 packs the two float parts of a complex64 result into the low half of an SSE
// register and computes them with a full-width instruction whose upper lanes hold stale
// values of earlier shuffles: (nan+infj) / (-3.5-2j) multiplied such a lane's inf by 0 and
// raised "invalid", which NumPy's loop (one part at a time) does not. Parts that come out of
// several operations are kept apart with NPK_KEEP_ROUNDED before they are paired, so no
// instruction computes both (complex128 parts fill a register: no stale lanes).
template <class R> NPK_FN cplx<R> parts(R re, R im) {
  if constexpr (sizeof(R) == 4) {
    NPK_KEEP_ROUNDED(re);
    NPK_KEEP_ROUNDED(im);
  }
  return cplx<R>{re, im};
}
/// numpy.divide; complex is Smith's division as NumPy's loop computes it.
template <class T> NPK_FN T div(T a, T b) {
  if constexpr (is_cplx<T>) {
    using R = decltype(a.re);
    R br = std::fabs(b.re), bi = std::fabs(b.im);
    if (br >= bi) {
      if (br == 0 && bi == 0) return parts(a.re / br, a.im / br);
      R rat = b.im / b.re;
      R d = b.im * rat, p = a.im * rat, q = a.re * rat;
      NPK_KEEP_ROUNDED(d);
      NPK_KEEP_ROUNDED(p);
      NPK_KEEP_ROUNDED(q);
      R scl = R(1) / (b.re + d);
      return parts((a.re + p) * scl, (a.im - q) * scl);
    }
    R rat = b.re / b.im;
    R d = b.re * rat, p = a.re * rat, q = a.im * rat;
    NPK_KEEP_ROUNDED(d);
    NPK_KEEP_ROUNDED(p);
    NPK_KEEP_ROUNDED(q);
    R scl = R(1) / (b.im + d);
    return parts((p + a.im) * scl, (q - a.re) * scl);
  } else return a / b;
}
/// A complex part with its sign flipped. The rounding barrier keeps GCC from folding the
/// negation into a product's fused multiply-add (-(x*y + z) as vfnmsub), which gives +0
/// where NumPy negates a +0 part into -0 (conj of (0+0j) * (2-1j)).
template <class R> NPK_FN R neg_part(R x) {
  NPK_KEEP_ROUNDED(x);
  return -x;
}
/// numpy.negative: integers wrap (-MIN == MIN).
template <class T> NPK_FN T neg(T a) {
  if constexpr (is_int<T>) return (T)((uw<T>)0 - (uw<T>)a);
  else if constexpr (is_cplx<T>) return T{neg_part(a.re), neg_part(a.im)};
  else if constexpr (std::is_floating_point_v<T>) {  // the sign bit flipped (Note [sign bit of a NaN])
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    return bits_as<T>((U)(bits_as<U>(a) ^ ((U)1 << (sizeof(T) * 8 - 1))));
  } else return -a;
}
/// numpy.conjugate (the identity for real types).
template <class T> NPK_FN T conj(T a) { if constexpr (is_cplx<T>) return T{a.re, neg_part(a.im)}; else return a; }
/// numpy.absolute: integers wrap (abs(MIN) == MIN); complex is npy_cabs (hypot), NumPy's
/// scalar loop. Its SIMD loop is cabs_vec.
//
// Note [complex absolute]
// NumPy has two results for the absolute value of a complex number, one ULP apart for about
// a third of the values: its SIMD loop (cabs_vec: larger * sqrt(fma(r, r, 1))) and npy_cabs,
// the C library's hypot (absv). It runs the SIMD loop on every array, 0-d arrays and
// np.abs(scalar) included, unless an operand has a negative stride (its scalar loop then);
// Python's abs() of a NumPy complex scalar is its scalar arithmetic, npy_cabs. The eager
// kernels pick by stride (src/ops/kernels_arith.cpp); traced code marks the ufunc nodes that
// NumPy runs with its scalar loop (Note [scalar loops] in src/tracer/trace.hpp), and fused
// code calls absv there and the entry point ufunc::absolute (cabs_vec) everywhere else.
template <class T> NPK_FN auto absv(T a) {
  if constexpr (is_cplx<T>) return std::hypot(a.re, a.im);
  else if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) return a;
  else if constexpr (is_int<T>) return a < 0 ? neg(a) : a;
  else {  // the sign bit cleared (Note [sign bit of a NaN])
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    return bits_as<T>((U)(bits_as<U>(a) & ~((U)1 << (sizeof(T) * 8 - 1))));
  }
}
// Note [integer scalar overflow]
// NumPy's scalar arithmetic (scalarmath.c.src: a Python operator whose operands are NumPy
// integer scalars, or one and a Python int) checks what its ufunc loops let wrap silently:
// it warns "overflow encountered in scalar add" (subtract, multiply) when the exact result
// does not fit the type, "... in scalar negative" for -MIN and for -x of an unsigned x != 0,
// "... in scalar absolute" for abs(MIN); the value is the wrapped one in every case
// (measured, NumPy 2.5). These rules are those checks: eager ufunc calls made as scalar
// arithmetic run them (UfuncOptions::scalar_math, src/ops/ufunc.cpp), and fused kernels
// for the traced nodes marked so (Note [scalar math] in src/tracer/trace.hpp).
/// NumPy's scalar integer +: wraps, "overflow" when the sum does not fit.
template <class T> NPK_FN T scalar_add(T a, T b) {
  const T r = add(a, b);
  if constexpr (std::is_signed_v<T>) {
    if ((a < 0) == (b < 0) && (r < 0) != (a < 0)) raise_ovf();
  } else if (r < a) {
    raise_ovf();
  }
  return r;
}
/// NumPy's scalar integer -: wraps, "overflow" when the difference does not fit.
template <class T> NPK_FN T scalar_sub(T a, T b) {
  const T r = sub(a, b);
  if constexpr (std::is_signed_v<T>) {
    if ((a < 0) != (b < 0) && (r < 0) != (a < 0)) raise_ovf();
  } else if (a < b) {
    raise_ovf();
  }
  return r;
}
/// NumPy's scalar integer *: wraps, "overflow" when the product does not fit.
template <class T> NPK_FN T scalar_mul(T a, T b) {
  const T r = mul(a, b);
  bool ovf;
  if constexpr (sizeof(T) < 8) {
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    ovf = (W)a * (W)b != (W)r;  // exact in 64 bits
  } else if constexpr (std::is_signed_v<T>) {
    // r / a is exact unless the product wrapped (a = -1 divides MIN only by overflowing).
    ovf = a == -1 ? b == std::numeric_limits<T>::min() : a != 0 && r / a != b;
  } else {
    ovf = a != 0 && r / a != b;
  }
  if (ovf) raise_ovf();
  return r;
}
/// NumPy's scalar integer unary -: wraps, "overflow" for -MIN and -x of unsigned x != 0.
template <class T> NPK_FN T scalar_neg(T a) {
  if (std::is_signed_v<T> ? a == std::numeric_limits<T>::min() : a != 0) raise_ovf();
  return neg(a);
}
/// NumPy's scalar integer abs(): wraps, "overflow" for abs(MIN).
template <class T> NPK_FN T scalar_abs(T a) {
  if (std::is_signed_v<T> && a == std::numeric_limits<T>::min()) raise_ovf();
  return absv(a);
}
/// numpy.absolute of complex in NumPy's SIMD loop: larger * sqrt(fma(r, r, 1)), r = smaller / larger.
template <class R> NPK_FN R cabs_vec(cplx<R> z) {
  R re = std::fabs(z.re), im = std::fabs(z.im);
  if (std::isinf(re) || std::isinf(im)) return std::numeric_limits<R>::infinity();
  if (std::isnan(re) || std::isnan(im)) return std::numeric_limits<R>::quiet_NaN();
  R larger = re > im ? re : im, smaller = re > im ? im : re;
  if (larger == 0) return 0;
  R r = smaller / larger;
  return larger * std::sqrt(std::fma(r, r, R(1)));
}
/// numpy.square (the SIMD product for complex).
template <class T> NPK_FN T square(T a) { return mul(a, a); }
/// numpy.reciprocal: integers compute 1.0 / x in double and convert (0 raises "divide" and
/// "invalid"); complex uses NumPy's formula.
template <class T> NPK_FN T reciprocal(T a) {
  if constexpr (is_cplx<T>) {
    using R = decltype(a.re);
    const R ar = a.re, ai = a.im;
    if (std::fabs(ai) <= std::fabs(ar)) {
      const R r = ai / ar, d = ar + ai * r;
      return T{1 / d, -r / d};
    }
    const R r = ar / ai, d = ar * r + ai;
    return T{r / d, -1 / d};
  } else if constexpr (is_int<T>) {
    if (a == 0) {
      raise_div0();
      raise_invalid();
      return std::is_signed_v<T> && sizeof(T) >= 4 ? std::numeric_limits<T>::min() : T(0);
    }
    return (T)(1.0 / (double)a);
  } else return T(1) / a;
}

// ---------------------------------------------------------------- // % fmod divmod
/// NumPy's npy_divmod for floats: returns the floor quotient, sets *mod. Its comparisons are
/// quiet (isless, isgreater): a NaN operand raises no "invalid" flag. Needs b != 0.
template <class T> NPK_FN T fdivmod(T a, T b, T* mod) {
  T m = std::fmod(a, b);
  if (!b) { *mod = m; return a / b; }
  T d = (a - m) / b;
  if (m) { if (std::isless(b, T(0)) != std::isless(m, T(0))) { m += b; d -= 1; } }
  else m = std::copysign(T(0), b);
  T fl;
  if (d) { fl = std::floor(d); if (std::isgreater(d - fl, T(0.5))) fl += 1; }
  else fl = std::copysign(T(0), a / b);
  *mod = m;
  return fl;
}
/// numpy.floor_divide: integers by zero give 0 ("divide"), MIN // -1 gives MIN ("overflow");
/// floats by zero are a / b, else npy_divmod's quotient.
template <class T> NPK_FN T floordiv(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a && b;
  else if constexpr (is_int<T>) {
    if (b == 0) { raise_div0(); return 0; }
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) { if (a == std::numeric_limits<T>::min()) raise_ovf(); return neg(a); }
      T q = (T)(a / b);
      if ((a % b != 0) && ((a < 0) != (b < 0))) q = (T)(q - 1);
      return q;
    } else return (T)(a / b);
  } else { if (!b) return a / b; T m; return fdivmod(a, b, &m); }
}
/// numpy.remainder (Python's %, the sign of the divisor): integers by zero give 0
/// ("divide"); floats by zero are fmod(a, 0), else npy_divmod's modulus.
template <class T> NPK_FN T rem(T a, T b) {
  if constexpr (is_int<T>) {
    if (b == 0) { raise_div0(); return 0; }
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
      T r = (T)(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
      return r;
    } else return (T)(a % b);
  } else { if (!b) return std::fmod(a, b); T m; fdivmod(a, b, &m); return m; }
}
/// numpy.fmod (C's %, the sign of the dividend): integers by zero give 0 ("divide").
template <class T> NPK_FN T fmodv(T a, T b) {
  if constexpr (is_int<T>) {
    if (b == 0) { raise_div0(); return 0; }
    if constexpr (std::is_signed_v<T>) { if (b == -1) return 0; }
    return (T)(a % b);
  } else return std::fmod(a, b);
}
/// numpy.divmod: floor_divide and remainder together; sets *mod, returns the quotient.
template <class T> NPK_FN T divmodv(T a, T b, T* mod) {
  if constexpr (is_int<T>) {
    if (b == 0) { raise_div0(); *mod = 0; return 0; }
    *mod = rem(a, b);
    return floordiv(a, b);
  } else {
    if (!b) { *mod = std::fmod(a, b); return a / b; }
    return fdivmod(a, b, mod);
  }
}

// ---------------------------------------------------------------- powers
/// numpy.power for integers, by squaring, wrapping (negative exponents are rejected before
/// the loop with NumPy's ValueError).
template <class T> NPK_FN T ipow(T base, T exp) {
  if (exp == 0 || base == 1) return 1;
  T out = (exp & 1) ? base : T(1);
  exp = (T)(exp >> 1);
  while (exp > 0) {
    base = mul(base, base);
    if (exp & 1) out = mul(out, base);
    exp = (T)(exp >> 1);
  }
  return out;
}

// ---------------------------------------------------------------- shifts, bits
/// numpy.left_shift: shifts by >= the bit width (or negative) give 0 (npy_lshift).
template <class T> NPK_FN T lshift(T a, T b) {
  if ((uint64_t)(int64_t)b < sizeof(T) * 8) return (T)((uw<T>)a << b);
  return 0;
}
/// numpy.right_shift: shifts by >= the bit width (or negative) give 0, or -1 for negative
/// values (npy_rshift).
template <class T> NPK_FN T rshift(T a, T b) {
  if ((uint64_t)(int64_t)b < sizeof(T) * 8) return (T)(a >> b);
  if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
  else return 0;
}
/// numpy.invert (logical not for bool).
template <class T> NPK_FN T invert(T a) { if constexpr (std::is_same_v<T, bool>) return !a; else return (T)~a; }
/// numpy.gcd (npy_gcd): of the absolute values, computed unsigned (gcd(MIN, 0) == MIN).
template <class T> NPK_FN T gcdv(T a, T b) {
  using U = std::make_unsigned_t<T>;
  U x = (U)absv(a), y = (U)absv(b);
  while (y != 0) {
    U t = (U)(x % y);
    x = y;
    y = t;
  }
  return (T)x;
}
/// numpy.lcm (npy_lcm): |a| / gcd * |b| in C's promoted type (int for narrow types),
/// wrapping, then converted back: an overflowing product keeps its sign (lcm(int32 max, 300) == -300).
template <class T> NPK_FN T lcmv(T a, T b) {
  T g = gcdv(a, b);
  if (g == 0) return 0;
  using W = std::conditional_t<(sizeof(T) < sizeof(int)), int, T>;
  W x = (W)a, y = (W)b;
  if constexpr (std::is_signed_v<T>) {
    x = absv(x);
    y = absv(y);
  }
  return (T)mul((W)(x / (W)g), y);
}

// ---------------------------------------------------------------- predicates, rounding
// NaN and inf tests on the bits (|x| as an unsigned integer against the exponent mask):
// GCC vectorizes std::isfinite/isinf into an ordered, signaling compare of |x|, which
// raises "invalid" on NaN where NumPy's isnan/isinf/isfinite raise nothing.
/// |x|'s bits (float32/float64) as an unsigned integer.
template <class R> NPK_FN auto abs_bits(R x) {
  using U = std::conditional_t<sizeof(R) == 8, uint64_t, uint32_t>;
  return (U)(bits_as<U>(x) & (std::numeric_limits<U>::max() >> 1));
}
/// True when the real `x` is a NaN.
template <class R> NPK_FN bool nan_part(R x) { return abs_bits(x) > abs_bits(std::numeric_limits<R>::infinity()); }
/// True when the real `x` is +-inf.
template <class R> NPK_FN bool inf_part(R x) { return abs_bits(x) == abs_bits(std::numeric_limits<R>::infinity()); }
/// True when the real `x` is neither NaN nor inf.
template <class R> NPK_FN bool finite_part(R x) { return abs_bits(x) < abs_bits(std::numeric_limits<R>::infinity()); }
/// numpy.isnan (complex: either part).
template <class T> NPK_FN bool isnanv(T a) {
  if constexpr (is_cplx<T>) return nan_part(a.re) || nan_part(a.im);
  else if constexpr (std::is_floating_point_v<T>) return nan_part(a);
  else return false;
}
/// numpy.isinf (complex: either part).
template <class T> NPK_FN bool isinfv(T a) {
  if constexpr (is_cplx<T>) return inf_part(a.re) || inf_part(a.im);
  else if constexpr (std::is_floating_point_v<T>) return inf_part(a);
  else return false;
}
/// numpy.isfinite (complex: both parts).
template <class T> NPK_FN bool isfinitev(T a) {
  if constexpr (is_cplx<T>) return finite_part(a.re) && finite_part(a.im);
  else if constexpr (std::is_floating_point_v<T>) return finite_part(a);
  else return true;
}
/// numpy.floor (the identity for bool and integers).
template <class T> NPK_FN T floorv(T a) { if constexpr (std::is_floating_point_v<T>) return std::floor(a); else return a; }
/// numpy.ceil (the identity for bool and integers).
template <class T> NPK_FN T ceilv(T a) { if constexpr (std::is_floating_point_v<T>) return std::ceil(a); else return a; }
/// numpy.trunc (the identity for bool and integers).
template <class T> NPK_FN T truncv(T a) { if constexpr (std::is_floating_point_v<T>) return std::trunc(a); else return a; }
/// numpy.spacing (npy_spacing): the signed distance to the next value away from zero
/// (-0.0 counts as positive), NaN for infinities; zero's spacing is the smallest subnormal,
/// without the "underflow" that nextafter(0, inf) raises.
template <class T> NPK_FN T spacingv(T a) {
  if (std::isinf(a)) return std::numeric_limits<T>::quiet_NaN();
  if (a == T(0)) return std::numeric_limits<T>::denorm_min();
  const T inf = std::numeric_limits<T>::infinity();
  return std::nextafter(a, std::isless(a, T(0)) ? -inf : inf) - a;
}
/// numpy.ldexp: exponents beyond int range saturate (the result is 0 or inf either way).
template <class T, class E> NPK_FN T ldexpv(T x, E e) {
  int ei = 0;
  if constexpr (std::is_signed_v<E>) ei = e > 100000 ? 100000 : e < -100000 ? -100000 : (int)e;
  else ei = e > 100000u ? 100000 : (int)e;
  return std::ldexp(x, ei);
}
/// numpy.frexp: mantissa, exponent in *e (0 for inf and NaN).
template <class T> NPK_FN T frexpv(T a, int* e) {
  *e = 0;
  T m = std::frexp(a, e);
  if (!std::isfinite(a)) *e = 0;
  return m;
}

// ---------------------------------------------------------------- complex order
// Note [complex order flags]
// NumPy's complex order (CLT/CLE/CGT/CGE in its loops): lexicographic, but a real-part
// decision needs both imaginary parts to be numbers (1+nanj < 2+0j is False). Its C
// comparisons are signaling: "invalid" when a real part is NaN (the first comparison always
// runs), or when the real parts are equal and an imaginary part is NaN (the second runs).
// A compiler may vectorize or reorder plain comparisons (quiet or not), so the parts are
// compared quietly (lt, le, bit tests) and the flag is raised from those conditions.

/// numpy.less (`or_equal`: numpy.less_equal) of complex values, with NumPy's "invalid" flag;
/// greater and greater_equal are these with the operands swapped.
template <class R> NPK_FN bool corder(cplx<R> a, cplx<R> b, bool or_equal) {
  const bool real_nan = nan_part(a.re) || nan_part(b.re);
  const bool imag_nan = nan_part(a.im) || nan_part(b.im);
  const bool same_real = !real_nan && a.re == b.re;
  if (real_nan || (same_real && imag_nan)) raise_invalid();
  return (lt(a.re, b.re) && !imag_nan) || (same_real && (or_equal ? le(a.im, b.im) : lt(a.im, b.im)));
}

// ---------------------------------------------------------------- maximum, minimum, sign
// Note [extremum rules]
// numpy.maximum, minimum, fmax and fmin, in NumPy's scalar loops and in its SIMD loop of
// float32/float64 maximum/minimum, are one rule with three switches: which side wins (Max),
// whether a NaN propagates (the first NaN operand) or is ignored (the other operand wins),
// and which operand a tie (0.0 and -0.0, or equal values) gives. Complex values compare in
// NumPy's order (cle) and a NaN in either part counts as NaN; integers and bool never tie
// differently, so only the float rule reads TieFirst.

/// `a` or `b`: the larger (Max) or smaller; with PropagateNan the first NaN operand wins,
/// otherwise a NaN operand loses to the other; ties give `a` (TieFirst) or `b`.
template <bool Max, bool PropagateNan, bool TieFirst, class T> NPK_FN T extremum(T a, T b) {
  // Keep `a` when lo <= hi: b <= a for the maximum, a <= b for the minimum.
  const T& lo = Max ? b : a;
  const T& hi = Max ? a : b;
  // The operand whose NaN decides: a NaN `a` is kept (propagated), a NaN `b` is skipped.
  const T& n = PropagateNan ? a : b;
  if constexpr (is_cplx<T>) return (isnanv(n) || cle(lo, hi)) ? a : b;
  else if constexpr (std::is_floating_point_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
    // A blend of the bits, not `?:`: GCC 12 left `clip`'s min(f2, max(f1, x)), with the
    // bound first, as scalar code with a branch per element (7 ns an element on random data,
    // 20 times NumPy's time); the mask form vectorizes whichever operand is loop-invariant.
    using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
    const I keep = -static_cast<I>((TieFirst ? le(lo, hi) : lt(lo, hi)) | (n != n));
    return bits_as<T>(static_cast<I>((bits_as<I>(a) & keep) | (bits_as<I>(b) & ~keep)));
  } else if constexpr (std::is_floating_point_v<T>) {
    return ((TieFirst ? le(lo, hi) : lt(lo, hi)) || std::isnan(n)) ? a : b;
  } else {
    return le(lo, hi) ? a : b;
  }
}
/// numpy.maximum in NumPy's scalar loops (float16, and all integer, bool and complex loops):
/// NaN propagates (the first NaN operand), ties give the first operand.
template <class T> NPK_FN T maxv(T a, T b) { return extremum<true, true, true>(a, b); }
/// numpy.minimum in NumPy's scalar loops (see maxv).
template <class T> NPK_FN T minv(T a, T b) { return extremum<false, true, true>(a, b); }
/// numpy.maximum of float32/float64 in NumPy's SIMD loop: NaN propagates, ties (0.0 and
/// -0.0) give the second operand.
template <class T> NPK_FN T maxv_vec(T a, T b) { return extremum<true, true, false>(a, b); }
/// numpy.minimum of float32/float64 in NumPy's SIMD loop (see maxv_vec).
template <class T> NPK_FN T minv_vec(T a, T b) { return extremum<false, true, false>(a, b); }
/// numpy.fmax: NaN is ignored (the other operand wins), ties give the first operand.
template <class T> NPK_FN T fmaxv(T a, T b) { return extremum<true, false, true>(a, b); }
/// numpy.fmin: NaN is ignored, ties give the first operand.
template <class T> NPK_FN T fminv(T a, T b) { return extremum<false, false, true>(a, b); }
/// numpy.sign: -1, 0 or 1 (NaN stays NaN, -0.0 stays -0.0); complex is z / |z| (NumPy 2),
/// NaN when a part is NaN or both are infinite.
template <class T> NPK_FN T signv(T a) {
  if constexpr (is_cplx<T>) {
    using R = decltype(a.re);
    const R nan = std::numeric_limits<R>::quiet_NaN();
    R m = std::hypot(a.re, a.im);
    if (std::isnan(m)) return T{nan, nan};
    if (std::isinf(m)) {
      if (std::isinf(a.re)) {
        if (std::isinf(a.im)) return T{nan, nan};
        return T{a.re > 0 ? R(1) : R(-1), R(0)};
      }
      return T{R(0), a.im > 0 ? R(1) : R(-1)};
    }
    if (m == 0) return T{0, 0};
    return T{a.re / m, a.im / m};
  } else if constexpr (std::is_floating_point_v<T>) {
    // On the bits: GCC vectorises ordered compares into signaling ones (vcmpgt_os), which
    // raise "invalid" on a NaN lane where NumPy's sign raises nothing.
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    const U b = bits_as<U>(a), top = U(1) << (sizeof(T) * 8 - 1), mag = b & ~top;
    if (mag > bits_as<U>(std::numeric_limits<T>::infinity())) return a;  // NaN stays NaN
    if (mag == 0) return T(0);
    return (b & top) ? T(-1) : T(1);
  } else if constexpr (std::is_signed_v<T>) return (T)((a > 0) - (a < 0));
  else return (T)(a > 0);
}
/// numpy.heaviside (npy_heaviside): NPY_NAN, a positive NaN, for NaN (whatever x's sign bit),
/// h0 for zero, else 0 or 1 (quiet: no compare of a NaN).
template <class T> NPK_FN T heaviside(T x, T h0) {
  if (std::isnan(x)) return std::numeric_limits<T>::quiet_NaN();
  return x == 0 ? h0 : std::signbit(x) ? T(0) : T(1);
}

// ---------------------------------------------------------------- exponentials, logarithms
// Note [NaN sign of log]
// NumPy's float64 log and log2 loops, where they are not its SIMD routine (CPUs without
// AVX-512 SKX, and operands it does not load with one stride, such as reversed views), call
// the C library's function through the symbol NumPy's wheels link: glibc's compatibility
// wrapper, which answers a negative input with the NaN constant (sign bit clear). The current
// log and log2 that npc links compute the default NaN instead (sign bit set on x86-64). So
// the float64 rules clear the sign of a NaN made from a number: NumPy's result on every CPU
// for reversed views (its SIMD routine gives -NaN for contiguous arrays on AVX-512 CPUs
// only: a result that depends on the CPU). NumPy's float32 log runs its own SIMD code for
// every stride (-NaN), as does npc's float32 rule; log10, arcsin, arccos already give +NaN.
/// `r`, the result of a float64 function of `x`, with its sign cleared when `x` is a number
/// and `r` is NaN (quiet compares: no flag beyond the function's own "invalid").
template <class T> NPK_FN T nan_from_number_positive(T x, T r) {
  if constexpr (std::is_same_v<T, double>) return (r != r && x == x) ? std::fabs(r) : r;
  else return r;
}
/// numpy.log / numpy.log2 of a real: the C library's function (Note [NaN sign of log]).
template <class T> NPK_FN T logv(T x) { return nan_from_number_positive(x, std::log(x)); }
template <class T> NPK_FN T log2v(T x) { return nan_from_number_positive(x, std::log2(x)); }
/// numpy.logaddexp (npy_logaddexp): equal inputs (also equal infinities) give x + log(2)
/// without warnings; NaN propagates.
template <class T> NPK_FN T logaddexp(T x, T y) {
  if (x == y) return x + T(0.693147180559945309417232121458176568);
  T t = x - y;
  if (t > 0) return x + std::log1p(std::exp(-t));
  if (t <= 0) return y + std::log1p(std::exp(t));
  return t;
}
/// numpy.logaddexp2 (npy_logaddexp2).
template <class T> NPK_FN T logaddexp2(T x, T y) {
  const T log2e = T(1.442695040888963407359924681001892137);
  if (x == y) return x + 1;
  T t = x - y;
  if (t > 0) return x + log2e * std::log1p(std::exp2(-t));
  if (t <= 0) return y + log2e * std::log1p(std::exp2(t));
  return t;
}
/// numpy.deg2rad: the factor in the loop's precision (NPY_PIf / 180.0f for float32).
template <class T> NPK_FN T deg2radv(T x) { return x * (T(3.141592653589793238462643383279502884) / T(180)); }
/// numpy.rad2deg: the factor in the loop's precision.
template <class T> NPK_FN T rad2degv(T x) { return x * (T(180) / T(3.141592653589793238462643383279502884)); }
/// numpy.expm1 of complex (nc_expm1): expm1(re)cos(im) - 2 sin^2(im/2), exp(re) sin(im).
template <class R> NPK_FN cplx<R> cexpm1v(cplx<R> x) {
  const R a = std::sin(x.im / 2);
  return {std::expm1(x.re) * std::cos(x.im) - 2 * a * a, std::exp(x.re) * std::sin(x.im)};
}
/// numpy.log1p of complex (nc_log1p): log(hypot(re + 1, im)), atan2(im, re + 1).
template <class R> NPK_FN cplx<R> clog1pv(cplx<R> x) {
  const R l = std::hypot(x.re + 1, x.im);
  return {std::log(l), std::atan2(x.im, x.re + R(1))};
}

// ---------------------------------------------------------------- C library complex functions
// NumPy's complex loops call the C library's (npy_cexp -> cexp, ...): host code calls the
// same functions through GCC's builtins (which std::exp(std::complex) also calls). A device
// target supplies its own versions of this section.
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#define NPK_CFUN(name, fn)                                                                    \
  static inline c128 name(c128 a) {                                                           \
    __complex__ double z;                                                                     \
    __real__ z = a.re;                                                                        \
    __imag__ z = a.im;                                                                        \
    z = __builtin_##fn(z);                                                                    \
    return {__real__ z, __imag__ z};                                                          \
  }                                                                                           \
  static inline c64 name(c64 a) {                                                              \
    __complex__ float z;                                                                      \
    __real__ z = a.re;                                                                        \
    __imag__ z = a.im;                                                                        \
    z = __builtin_##fn##f(z);                                                                 \
    return {__real__ z, __imag__ z};                                                          \
  }
NPK_CFUN(cexpv, cexp)
NPK_CFUN(clogv, clog)
NPK_CFUN(csqrtv, csqrt)
NPK_CFUN(csinv, csin)
NPK_CFUN(ccosv, ccos)
NPK_CFUN(ctanv, ctan)
NPK_CFUN(csinhv, csinh)
NPK_CFUN(ccoshv, ccosh)
NPK_CFUN(ctanhv, ctanh)
NPK_CFUN(casinv, casin)
NPK_CFUN(cacosv, cacos)
NPK_CFUN(catanv, catan)
NPK_CFUN(casinhv, casinh)
NPK_CFUN(cacoshv, cacosh)
NPK_CFUN(catanhv, catanh)
#undef NPK_CFUN
/// The C library's cpow (npy_cpow's general case).
static inline c128 cpow_libm(c128 a, c128 b) {
  __complex__ double x, y;
  __real__ x = a.re;
  __imag__ x = a.im;
  __real__ y = b.re;
  __imag__ y = b.im;
  x = __builtin_cpow(x, y);
  return {__real__ x, __imag__ x};
}
static inline c64 cpow_libm(c64 a, c64 b) {
  __complex__ float x, y;
  __real__ x = a.re;
  __imag__ x = a.im;
  __real__ y = b.re;
  __imag__ y = b.im;
  x = __builtin_cpowf(x, y);
  return {__real__ x, __imag__ x};
}
/// numpy.exp2 of complex (nc_exp2): exp(z * ln 2).
template <class R> static inline cplx<R> cexp2v(cplx<R> x) {
  const R ln2 = R(0.693147180559945309417232121458176568);
  return cexpv(cplx<R>{x.re * ln2, x.im * ln2});
}
/// numpy.log2 of complex (nc_log2): log(z) * log2(e).
template <class R> static inline cplx<R> clog2v(cplx<R> x) {
  const R log2e = R(1.442695040888963407359924681001892137);
  cplx<R> l = clogv(x);
  return {l.re * log2e, l.im * log2e};
}
/// numpy.log10 of complex (nc_log10): log(z) * log10(e).
template <class R> static inline cplx<R> clog10v(cplx<R> x) {
  const R log10e = R(0.434294481903251827651128918916605082);
  cplx<R> l = clogv(x);
  return {l.re * log10e, l.im * log10e};
}
/// numpy.power of complex (npy_cpow): 1 for a zero exponent; 0 ** b is 0 for b.real > 0,
/// else NaN with "invalid"; small integer exponents by repeated scalar-loop products
/// (mul_plain), a negative one divided into 1; otherwise the C library's cpow.
template <class R> static inline cplx<R> cpowv(cplx<R> a, cplx<R> b) {
  using C = cplx<R>;
  const R br = b.re, bi = b.im;
  if (br == 0 && bi == 0) return C{1, 0};
  if (a.re == 0 && a.im == 0) {
    if (br > 0) return C{0, 0};
    raise_invalid();
    return C{std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN()};
  }
  // The range test comes first: converting a huge (or NaN) exponent to an integer would
  // raise a spurious "invalid" flag (x86's cvttsd2si).
  if (bi == 0 && br > -100 && br < 100 && br == (R)(int64_t)br) {
    int64_t n = (int64_t)br;
    if (n == 1) return a;
    if (n == 2) return mul_plain(a, a);
    if (n == 3) return mul_plain(a, mul_plain(a, a));
    int64_t m = n < 0 ? -n : n;
    C acc{1, 0}, p = a;
    int64_t mask = 1;
    for (;;) {
      if (m & mask) acc = mul_plain(acc, p);
      mask <<= 1;
      if (m < mask || mask <= 0) break;
      p = mul_plain(p, p);
    }
    if (n < 0) return div(C{1, 0}, acc);
    return acc;
  }
  return cpow_libm(a, b);
}
#endif

// ---------------------------------------------------------------- float32 exp
// Note [float32 exp]
// numpy.exp of float32 (and of float16, computed in float and rounded to half) is this
// function, not the C library's expf: it has no call and no branch, so the eager loop and
// fused kernels both vectorize it (NumPy's own float32 exp is a SIMD routine; a scalar expf
// loop runs at a fraction of its speed). Both compute it from this one definition, so they
// give the same bits. Against NumPy's AVX-512 and AVX2 routines (whose results agree), over
// every 97th float32 in [-110, 90]: 90.6% equal, 9.3% 1 ULP apart, 0.13% 2 ULP, a few 3 ULP
// (the bound is ulp_tolerances.csv's: exp,f,8).
// Algorithm: x = n ln2 + r with n = round(x / ln2) and |r| <= ln2 / 2, the product n ln2
// subtracted in two parts (Cody and Waite: the high part has 9 significant bits, so n times it
// is exact; there is no fused multiply-add, contraction is off); exp(r) = 1 + r + r^2 p(r) with
// p the degree-5 minimax polynomial of Cephes' expf; then 2^n as two powers of two, 2^(n/2)
// twice, so that neither factor leaves the normal range and results near the subnormal range
// round once.
// Floating-point flags are NumPy's: they come from the arithmetic itself. x is clamped to
// [-104, 88.8] first: above 88.72 the result overflows to inf ("overflow"), below -103.97 it
// underflows to 0 ("underflow"), as in NumPy. Both also raise "underflow" for subnormal results
// that are inexact, which depends on the last bits, so not always for the same elements (-88:
// NumPy's is exact, this one not); NumPy ignores underflow by default. Non-finite inputs are replaced by 0 on the bits
// before any arithmetic and their results selected on the bits at the end (NaN and inf give
// themselves, -inf gives 0), so they raise nothing, as in NumPy: a float select or compare on
// them could become an operation that raises "invalid" or "overflow" once vectorized.
/// numpy.exp of float32 (Note [float32 exp]).
NPK_FN float exp_f32(float x) {
  const uint32_t bx = bits_as<uint32_t>(x);
  const uint32_t finite = (uint32_t)0 - (uint32_t)((bx & 0x7f800000u) != 0x7f800000u);
  // x clamped to [-104, 88.8]. The bounds are computed from x (z is +-0, exactly and without
  // flags, x being finite here) and selected on the bits: a select to a constant lets the
  // compiler fold exp(88.8) or exp(-104) on that path (dropping its flag), and a float select
  // becomes a branch that keeps the loop from vectorizing without masked vector instructions.
  const float xf = bits_as<float>(bx & finite), z = xf * 0.0f;
  const float hi = z + 88.8f, lo = z - 104.0f;
  const uint32_t above = (uint32_t)0 - (uint32_t)(xf > 88.8f), below = (uint32_t)0 - (uint32_t)(xf < -104.0f);
  const float xc = bits_as<float>((bits_as<uint32_t>(hi) & above) | (bits_as<uint32_t>(lo) & below) |
                                  (bits_as<uint32_t>(xf) & ~(above | below)));
  // n = round-to-nearest(x log2(e)) by adding and subtracting 1.5 * 2^23.
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f;     // ln2 high part (9 bits)
  r = r - n * -2.12194440e-4f;         // ln2 - high part
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * (r * r) + r + 1.0f;
  const int32_t ni = (int32_t)n;        // in [-150, 128]
  const int32_t nlo = ni >> 1, nhi = ni - nlo;
  const float slo = bits_as<float>((uint32_t)(nlo + 127) << 23);
  const float shi = bits_as<float>((uint32_t)(nhi + 127) << 23);
  const float res = er * slo * shi;
  const uint32_t special = bx == 0xff800000u ? 0u : bx;  // -inf -> +0; inf, NaN -> x
  return bits_as<float>((bits_as<uint32_t>(res) & finite) | (special & ~finite));
}

// ---------------------------------------------------------------- one entry point per ufunc
// Note [ufunc entry points]
// Each ufunc row of include/npc/ops.def has its element rule here, as npk::ufunc::<row name>:
// a function template of the loop's element type (float16 is computed in float) taking the
// row's inputs and returning its output (npk::two for two outputs). The eager kernels
// register it for every loop of the row (src/ops/rules.hpp), and the fused emitter renders
// it as `npk::ufunc::<name><T>(args)` for the dtype kinds of the row's loops
// (src/fusion/emit_cpp.cpp); both tables only list where NumPy runs another loop (SIMD
// variants, by stride) or generated code does not follow (Note [emitter table]).
// Adding a ufunc: its row in ops.def and its entry point here (docs/architecture.md).
namespace ufunc {
/// One-argument functions: NumPy's complex loop (its own formula or the C library's, above)
/// or the C library's real function.
#define NPK_MATH1(name, cfn, rfn)                                \
  template <class T> NPK_FN T name(T a) {                        \
    if constexpr (is_cplx<T>) return ::npk::cfn(a);              \
    else return rfn(a);                                          \
  }

template <class T> NPK_FN T add(T a, T b) { return npk::add(a, b); }
template <class T> NPK_FN T subtract(T a, T b) { return npk::sub(a, b); }
template <class T> NPK_FN T multiply(T a, T b) { return npk::mul(a, b); }
template <class T> NPK_FN T divide(T a, T b) { return npk::div(a, b); }
template <class T> NPK_FN T floor_divide(T a, T b) { return npk::floordiv(a, b); }
template <class T> NPK_FN T remainder(T a, T b) { return npk::rem(a, b); }
template <class T> NPK_FN T fmod(T a, T b) { return npk::fmodv(a, b); }
template <class T> NPK_FN two<T, T> divmod(T a, T b) {
  T mod;
  T q = npk::divmodv(a, b, &mod);
  return {q, mod};
}
/// numpy.power: integers by squaring (ipow), complex npy_cpow, floats the C library's pow.
template <class T> NPK_FN T power(T a, T b) {
  if constexpr (is_int<T>) return npk::ipow(a, b);
  else if constexpr (is_cplx<T>) return npk::cpowv(a, b);
  else return std::pow(a, b);
}
template <class T> NPK_FN T float_power(T a, T b) { return ufunc::power(a, b); }
template <class T> NPK_FN T negative(T a) { return npk::neg(a); }
template <class T> NPK_FN T positive(T a) { return a; }
/// numpy.absolute: for complex NumPy's SIMD loop (cabs_vec), which it runs on arrays and 0-d
/// arrays alike; npk::absv (npy_cabs, hypot) is its scalar loop (Note [complex absolute]).
template <class T> NPK_FN auto absolute(T a) {
  if constexpr (is_cplx<T>) return npk::cabs_vec(a);
  else return npk::absv(a);
}
template <class T> NPK_FN T fabs(T a) { return std::fabs(a); }
template <class T> NPK_FN T sign(T a) { return npk::signv(a); }
template <class T> NPK_FN T heaviside(T x, T h0) { return npk::heaviside(x, h0); }
template <class T> NPK_FN T reciprocal(T a) { return npk::reciprocal(a); }
NPK_MATH1(sqrt, csqrtv, std::sqrt)
template <class T> NPK_FN T cbrt(T a) { return std::cbrt(a); }
template <class T> NPK_FN T square(T a) { return npk::square(a); }
/// numpy.exp: complex nc_exp, float32 (and float16) npk::exp_f32 (Note [float32 exp]), float64
/// the C library's exp.
template <class T> NPK_FN T exp(T a) {
  if constexpr (is_cplx<T>) return ::npk::cexpv(a);
  else if constexpr (std::is_same_v<T, float>) return ::npk::exp_f32(a);
  else return std::exp(a);
}
NPK_MATH1(exp2, cexp2v, std::exp2)
NPK_MATH1(expm1, cexpm1v, std::expm1)
NPK_MATH1(log, clogv, npk::logv)
NPK_MATH1(log2, clog2v, npk::log2v)
NPK_MATH1(log10, clog10v, std::log10)
NPK_MATH1(log1p, clog1pv, std::log1p)
template <class T> NPK_FN T logaddexp(T a, T b) { return npk::logaddexp(a, b); }
template <class T> NPK_FN T logaddexp2(T a, T b) { return npk::logaddexp2(a, b); }
NPK_MATH1(sin, csinv, std::sin)
NPK_MATH1(cos, ccosv, std::cos)
NPK_MATH1(tan, ctanv, std::tan)
NPK_MATH1(arcsin, casinv, std::asin)
NPK_MATH1(arccos, cacosv, std::acos)
NPK_MATH1(arctan, catanv, std::atan)
template <class T> NPK_FN T arctan2(T y, T x) { return std::atan2(y, x); }
template <class T> NPK_FN T hypot(T a, T b) { return std::hypot(a, b); }
NPK_MATH1(sinh, csinhv, std::sinh)
NPK_MATH1(cosh, ccoshv, std::cosh)
NPK_MATH1(tanh, ctanhv, std::tanh)
NPK_MATH1(arcsinh, casinhv, std::asinh)
NPK_MATH1(arccosh, cacoshv, std::acosh)
NPK_MATH1(arctanh, catanhv, std::atanh)
#undef NPK_MATH1
template <class T> NPK_FN T deg2rad(T a) { return npk::deg2radv(a); }
template <class T> NPK_FN T rad2deg(T a) { return npk::rad2degv(a); }
template <class T> NPK_FN T floor(T a) { return npk::floorv(a); }
template <class T> NPK_FN T ceil(T a) { return npk::ceilv(a); }
template <class T> NPK_FN T trunc(T a) { return npk::truncv(a); }
/// numpy.rint: round half to even in the current rounding mode, each part of a complex.
template <class T> NPK_FN T rint(T a) {
  if constexpr (is_cplx<T>) return T{std::nearbyint(a.re), std::nearbyint(a.im)};
  else return std::nearbyint(a);
}
template <class T> NPK_FN T conjugate(T a) { return npk::conj(a); }
template <class T> NPK_FN T maximum(T a, T b) { return npk::maxv(a, b); }
template <class T> NPK_FN T minimum(T a, T b) { return npk::minv(a, b); }
template <class T> NPK_FN T fmax(T a, T b) { return npk::fmaxv(a, b); }
template <class T> NPK_FN T fmin(T a, T b) { return npk::fminv(a, b); }
template <class T> NPK_FN bool equal(T a, T b) { return npk::eq(a, b); }
template <class T> NPK_FN bool not_equal(T a, T b) { return !npk::eq(a, b); }
/// numpy.less: quiet for real values; complex in NumPy's order, with its flags.
template <class T> NPK_FN bool less(T a, T b) {
  if constexpr (is_cplx<T>) return npk::corder(a, b, false);
  else return npk::lt(a, b);
}
template <class T> NPK_FN bool less_equal(T a, T b) {
  if constexpr (is_cplx<T>) return npk::corder(a, b, true);
  else return npk::le(a, b);
}
template <class T> NPK_FN bool greater(T a, T b) { return ufunc::less(b, a); }
template <class T> NPK_FN bool greater_equal(T a, T b) { return ufunc::less_equal(b, a); }
template <class T> NPK_FN bool logical_and(T a, T b) { return npk::truth(a) && npk::truth(b); }
template <class T> NPK_FN bool logical_or(T a, T b) { return npk::truth(a) || npk::truth(b); }
template <class T> NPK_FN bool logical_xor(T a, T b) { return npk::truth(a) != npk::truth(b); }
template <class T> NPK_FN bool logical_not(T a) { return !npk::truth(a); }
template <class T> NPK_FN T bitwise_and(T a, T b) { return (T)(a & b); }
template <class T> NPK_FN T bitwise_or(T a, T b) { return (T)(a | b); }
template <class T> NPK_FN T bitwise_xor(T a, T b) { return (T)(a ^ b); }
template <class T> NPK_FN T invert(T a) { return npk::invert(a); }
template <class T> NPK_FN T left_shift(T a, T b) { return npk::lshift(a, b); }
template <class T> NPK_FN T right_shift(T a, T b) { return npk::rshift(a, b); }
// Note [sign bit of a NaN]
// NumPy's signbit and copysign see the sign bit of a NaN as the hardware made it: x86's
// 0.0 / 0.0 is the "default NaN", whose sign bit is set, so np.signbit(u / u) is True where
// u == 0, and an operation on NaN operands passes the first NaN's sign on (-nan * -nan is -nan).
// GCC takes the sign of a NaN as unspecified: in a fused kernel, std::signbit(v / v) or
// std::copysign(a, v * v) of a v it knows to be non-negative (a cast from an unsigned type, a
// square) is folded to false / |a|, std::fabs(v / v) to v / v, and negations move across
// products and quotients (-(-a / b) becomes a / b, a / -b becomes -(a / b)). Read and written
// on the bits (bits_as: signbit, copysign, absolute and negative of real floats), the sign bit
// is what the division or product left in the register, as in NumPy's separate loops (whose
// absolute and negative clear and flip that bit). Not covered: GCC's x * -1.0 -> -x for a
// literal -1 of the program.
template <class T> NPK_FN bool isnan(T a) { return npk::isnanv(a); }
template <class T> NPK_FN bool isinf(T a) { return npk::isinfv(a); }
template <class T> NPK_FN bool isfinite(T a) { return npk::isfinitev(a); }
/// numpy.signbit, read from the bits (Note [sign bit of a NaN]).
template <class T> NPK_FN bool signbit(T a) {
  if constexpr (std::is_floating_point_v<T>) {
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    return (bits_as<U>(a) >> (sizeof(T) * 8 - 1)) != 0;
  } else {
    return std::signbit(a);
  }
}
/// numpy.copysign (npy_copysign: a's magnitude bits, b's sign bit), on the bits (Note [sign
/// bit of a NaN]).
template <class T> NPK_FN T copysign(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    constexpr U s = (U)1 << (sizeof(T) * 8 - 1);
    return bits_as<T>((U)((bits_as<U>(a) & ~s) | (bits_as<U>(b) & s)));
  } else {
    return std::copysign(a, b);
  }
}
template <class T> NPK_FN T nextafter(T a, T b) { return std::nextafter(a, b); }
template <class T> NPK_FN T spacing(T a) { return npk::spacingv(a); }
template <class T, class E> NPK_FN T ldexp(T x, E e) { return npk::ldexpv(x, e); }
template <class T> NPK_FN two<T, int> frexp(T a) {
  int e;
  T m = npk::frexpv(a, &e);
  return {m, e};
}
template <class T> NPK_FN two<T, T> modf(T a) {
  T ip;
  T f = std::modf(a, &ip);
  return {f, ip};
}
template <class T> NPK_FN T gcd(T a, T b) { return npk::gcdv(a, b); }
template <class T> NPK_FN T lcm(T a, T b) { return npk::lcmv(a, b); }
/// numpy.bitwise_count: the number of 1 bits of |a| (npy_popcount of the absolute value, so
/// the most negative value counts one bit), as uint8.
template <class T> NPK_FN uint8_t bitwise_count(T a) {
  using U = std::make_unsigned_t<T>;
  uint64_t x = (U)a;
  if constexpr (std::is_signed_v<T>) x = a < 0 ? (U)((U)0 - (U)a) : (U)a;
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (uint8_t)((x * 0x0101010101010101ull) >> 56);
}
}  // namespace ufunc

}  // namespace npk

#undef NPK_FN

#endif  // NPC_SCALAR_RULES_HPP
