// Vector loops of the float transcendental ufuncs on glibc's libmvec.
//
// Note [vector math]
// NumPy computes exp, log, sin, ... of float32/float64 arrays with SIMD routines; calling
// the C library's scalar function per element is 2-4x slower. glibc ships vector variants
// of those functions (libmvec: `_ZGVdN4v_exp` takes four doubles in an AVX2 register,
// `_ZGVeN8v_exp` eight in an AVX-512 one), accurate to a few ULP like NumPy's own. npc is
// built for baseline x86-64, so the loops that call them are compiled for AVX2+FMA or
// AVX-512F with function attributes and registered only when the CPU has the instruction
// set (as in reduce_simd.cpp).
//
// Special values and floating-point flags: the vector routines may raise flags NumPy does
// not (e.g. "invalid" from lanes they recompute internally) and their results for special
// inputs need not be the scalar function's. So a tile of elements is computed with the
// vector routine, its flags are discarded (MXCSR restored), and every lane whose input or
// result is not an ordinary number (NaN, inf, zero, subnormal or tiny input, or a result
// that is zero, subnormal, infinite or NaN) is computed again with the scalar function,
// which raises exactly the flags the scalar loop raised before (overflow in exp, divide by
// zero in log(0), invalid in sin(inf), underflow). A lane with an ordinary input and an
// ordinary result raises nothing but "inexact" in the scalar function either (inputs below
// 2^-500, 2^-60 for float32, are recomputed too, where an intermediate might underflow).
// Strided blocks are gathered into a tile buffer first, so any stride takes the vector path.
//
// Note [vector math policy]
// NumPy is the oracle, and on an AVX-512 CPU NumPy itself computes most float32 functions
// and float64 tanh with Intel's SVML, whose code libmvec's AVX-512 variants share: there
// libmvec gives NumPy's bits (measured on 1M values each: 0 differing elements for float32
// tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh, arccosh, exp2, expm1, log2,
// log10, log1p, cbrt), while the scalar glibc functions differ in 6-44% of elements. But
// float64 exp and log (NumPy's own AVX-512 code, nearly correctly rounded), sin and cos
// (NumPy calls the scalar libm) agree with glibc's scalar functions bit for bit or nearly,
// and libmvec's versions differ by 1-3 ULP in 20-65% of elements; programs and tests that
// compare such results with NumPy's exactly would see the difference. So by default the
// vector loop runs where its results are at least as close to NumPy's as the scalar loop's
// (the vmath column of ops.def: 'f' and 'd' without a '*'), float32 exp excepted: compiled kernels call the scalar
// expf, and compiled results equal eager ones. float32 arctanh runs the float64 routine
// instead (Note [float32 through float64]). NPC_VECTOR_MATH=all takes every function
// (within the 8 ULP of ulp_tolerances.csv; 2-10x faster), NPC_VECTOR_MATH=0 none.
#include "ops/math_simd.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "ops/loops.hpp"
#include "ops/op_rows.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && defined(NPC_HAVE_LIBMVEC)
#include <immintrin.h>
#define NPC_VMATH 1
#else
#define NPC_VMATH 0
#endif

namespace npc::ops::simd {

#if NPC_VMATH
// The C name of the libmvec function of each row with a vmath column (ufunc, C name): a table
// keyed by the op table's rows, checked against the column below. Which loops take it by
// default is the column's (Note [vector math policy]).
#define NPC_VMATH_FUNCS(X)                                                                         \
  X(exp, exp) X(exp2, exp2) X(expm1, expm1) X(log, log) X(log2, log2) X(log10, log10)              \
  X(log1p, log1p) X(sin, sin) X(cos, cos) X(tan, tan) X(arcsin, asin) X(arccos, acos)              \
  X(arctan, atan) X(sinh, sinh) X(cosh, cosh) X(tanh, tanh) X(arcsinh, asinh) X(arccosh, acosh)    \
  X(arctanh, atanh) X(cbrt, cbrt)

// Whether row `op`'s vmath column lists loop `t` ('f', 'd'), and whether without a '*' (taken
// by default).
constexpr bool vmath_lists(OpId op, char t) { return op_row(op).vmath.find(t) != std::string_view::npos; }
constexpr bool vmath_default(OpId op, char t) {
  const std::string_view v = op_row(op).vmath;
  const size_t k = v.find(t);
  return k != std::string_view::npos && (k + 1 == v.size() || v[k + 1] != '*');
}

// Completeness: every row with a vmath column has a libmvec function here, for both loops,
// and nothing else does.
#define NPC_COUNT(op, c) +1
constexpr int kVmathFuncs = 0 NPC_VMATH_FUNCS(NPC_COUNT);
#undef NPC_COUNT
#define NPC_CHECK(op, c) \
  static_assert(vmath_lists(OpId::op, 'f') && vmath_lists(OpId::op, 'd'), "ops.def: " #op " needs a vmath column");
NPC_VMATH_FUNCS(NPC_CHECK)
#undef NPC_CHECK
constexpr int vmath_rows() {
  int n = 0;
  for (const OpInfo& r : kOpRows) n += !r.vmath.empty();
  return n;
}
static_assert(vmath_rows() == kVmathFuncs, "a row of ops.def with a vmath column has no libmvec function here");

// The vector ABI's names (x86_64 vector function ABI: 'd' AVX2, 'e' AVX-512, N lanes, 'v' a
// vector argument), declared with the instruction set their register types need.
extern "C" {
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define NPC_DECL(op, c) __m256d _ZGVdN4v_##c(__m256d); __m256 _ZGVdN8v_##c##f(__m256);
NPC_VMATH_FUNCS(NPC_DECL)
#undef NPC_DECL
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f")
#define NPC_DECL(op, c) __m512d _ZGVeN8v_##c(__m512d); __m512 _ZGVeN16v_##c##f(__m512);
NPC_VMATH_FUNCS(NPC_DECL)
#undef NPC_DECL
#pragma GCC pop_options
}

namespace {

constexpr int64_t kTile = 1024;

// A tile's lanes that need the scalar function: position and input value (the input is
// kept because the output may alias it).
template <class T>
struct Redo {
  int32_t idx[kTile];
  T x[kTile];
  int n = 0;
};

// Smallest |input| taken as ordinary (Note [vector math]).
template <class T> constexpr T kInLo = sizeof(T) == 8 ? T(0x1p-500) : T(0x1p-60);

// One tile, n <= kTile elements, contiguous in/out (out may equal in): out = VF(in) for
// ordinary lanes; the others are listed in `redo`. One definition per instruction set:
// the target attribute cannot be a template argument.
#define NPC_VMATH_TILE(NAME, TARGET, T, V, W, LOAD, STORE, SET1, OKMASK)                      \
  template <V (*VF)(V)>                                                                       \
  __attribute__((target(TARGET))) void NAME(const T* in, T* out, int64_t n, Redo<T>& redo) {  \
    const V lo_in = SET1(kInLo<T>), lo_out = SET1(std::numeric_limits<T>::min()),             \
            hi = SET1(std::numeric_limits<T>::max());                                         \
    constexpr unsigned all = (1u << W) - 1;                                                   \
    alignas(64) T pad[W];                                                                     \
    for (int64_t i = 0; i < n; i += W) {                                                      \
      const bool tail = i + W > n;                                                            \
      const T* src = in + i;                                                                  \
      if (tail) {                                                                             \
        for (int k = 0; k < W; ++k) pad[k] = i + k < n ? in[i + k] : T(1);                    \
        src = pad;                                                                            \
      }                                                                                       \
      const V x = LOAD(src);                                                                  \
      const V y = VF(x);                                                                      \
      unsigned bad = ~(OKMASK(x, lo_in, hi) & OKMASK(y, lo_out, hi)) & all;                   \
      while (bad) {                                                                           \
        const int k = __builtin_ctz(bad);                                                     \
        redo.idx[redo.n] = static_cast<int32_t>(i + k);                                       \
        redo.x[redo.n++] = src[k];                                                            \
        bad &= bad - 1;                                                                       \
      }                                                                                       \
      if (!tail) {                                                                            \
        STORE(out + i, y);                                                                    \
      } else {                                                                                \
        STORE(pad, y);                                                                        \
        for (int64_t k = 0; i + k < n; ++k) out[i + k] = pad[k];                              \
        /* tail lanes past n were padded with 1: drop them from the redo list */              \
        while (redo.n > 0 && redo.idx[redo.n - 1] >= n) --redo.n;                             \
      }                                                                                       \
    }                                                                                         \
  }

// Lanes (bit k = lane k) with lo <= |v| <= hi; false for NaN (ordered compares).
__attribute__((target("avx512f"))) inline unsigned ok_pd512(__m512d v, __m512d lo, __m512d hi) {
  const __m512d a = _mm512_abs_pd(v);
  return _mm512_cmp_pd_mask(a, lo, _CMP_GE_OQ) & _mm512_cmp_pd_mask(a, hi, _CMP_LE_OQ);
}
__attribute__((target("avx512f"))) inline unsigned ok_ps512(__m512 v, __m512 lo, __m512 hi) {
  const __m512 a = _mm512_abs_ps(v);
  return _mm512_cmp_ps_mask(a, lo, _CMP_GE_OQ) & _mm512_cmp_ps_mask(a, hi, _CMP_LE_OQ);
}
__attribute__((target("avx2,fma"))) inline unsigned ok_pd256(__m256d v, __m256d lo, __m256d hi) {
  const __m256d a = _mm256_andnot_pd(_mm256_set1_pd(-0.0), v);
  return _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(a, lo, _CMP_GE_OQ), _mm256_cmp_pd(a, hi, _CMP_LE_OQ)));
}
__attribute__((target("avx2,fma"))) inline unsigned ok_ps256(__m256 v, __m256 lo, __m256 hi) {
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
  return _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(a, lo, _CMP_GE_OQ), _mm256_cmp_ps(a, hi, _CMP_LE_OQ)));
}

NPC_VMATH_TILE(tile_pd512, "avx512f", double, __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd, ok_pd512)
NPC_VMATH_TILE(tile_ps512, "avx512f", float, __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, ok_ps512)
NPC_VMATH_TILE(tile_pd256, "avx2,fma", double, __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd, ok_pd256)
NPC_VMATH_TILE(tile_ps256, "avx2,fma", float, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, ok_ps256)
#undef NPC_VMATH_TILE

// Note [float32 through float64]: glibc's float32 atanh, scalar (atanhf) and vector alike,
// is slow (about 25 ns an element) and its vector variant is further from NumPy's results
// than the scalar one. The float64 vector routine on the widened lanes, rounded back to
// float32, is within 1 ULP of NumPy's float32 arctanh and equal to it in about 96% of
// elements (the scalar atanhf: 82%), at the float64 loop's speed. Special lanes still take
// the scalar atanhf (vector_loop's redo), so values and flags there are unchanged.
__attribute__((target("avx512f"))) __m512 atanhf_via_pd512(__m512 x) {
  const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
  const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
  const __m256 rlo = _mm512_cvtpd_ps(_ZGVeN8v_atanh(lo)), rhi = _mm512_cvtpd_ps(_ZGVeN8v_atanh(hi));
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(rlo)), _mm256_castps_pd(rhi), 1));
}
__attribute__((target("avx2,fma"))) __m256 atanhf_via_pd256(__m256 x) {
  const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
  const __m128 rlo = _mm256_cvtpd_ps(_ZGVdN4v_atanh(lo)), rhi = _mm256_cvtpd_ps(_ZGVdN4v_atanh(hi));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(rlo), rhi, 1);
}

// The unary loop (LoopFn): tiles of the input, gathered into a buffer unless both operands
// are contiguous; the vector routine's flags are discarded, the scalar redo raises its own.
template <class T, void (*Tile)(const T*, T*, int64_t, Redo<T>&), T (*S)(T)>
void vector_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  Redo<T> redo;
  alignas(64) T buf[kTile];
  const bool contig = s[0] == int64_t(sizeof(T)) && s[1] == int64_t(sizeof(T));
  for (int64_t b = 0; b < n; b += kTile) {
    const int64_t m = std::min(kTile, n - b);
    const T* in = buf;
    T* out = buf;
    if (contig) {
      in = reinterpret_cast<const T*>(p[0]) + b;
      out = reinterpret_cast<T*>(p[1]) + b;
    } else {
      for (int64_t k = 0; k < m; ++k) buf[k] = load<T>(p[0] + (b + k) * s[0]);
    }
    redo.n = 0;
    const unsigned csr = _mm_getcsr();
    Tile(in, out, m, redo);
    _mm_setcsr(csr);
    for (int j = 0; j < redo.n; ++j) out[redo.idx[j]] = S(redo.x[j]);
    if (!contig)
      for (int64_t k = 0; k < m; ++k) store<T>(p[1] + (b + k) * s[1], buf[k]);
  }
}

// Scalar functions: what kernels_math.cpp's functors call for real floats.
#define NPC_SCALAR(op, c) \
  double s_##c(double x) { return std::c(x); } \
  float s_##c##f(float x) { return std::c(x); }
NPC_VMATH_FUNCS(NPC_SCALAR)
#undef NPC_SCALAR

}  // namespace

void register_vector_math(Registrar& r) {
  // NPC_VECTOR_MATH: 0 = scalar loops only, all = every function below, anything else or
  // unset = the default set (Note [vector math policy]).
  const char* e = std::getenv("NPC_VECTOR_MATH");
  const std::string mode = e ? e : "";
  if (mode == "0" || mode == "off") return;
  const bool all = mode == "all";
  if (__builtin_cpu_supports("avx512f")) {
#define NPC_REG(op, c)                                                                                         \
  if (all || vmath_default(OpId::op, 'd'))                                                                    \
    r.set(OpId::op, DType::Float64, &vector_loop<double, &tile_pd512<&_ZGVeN8v_##c>, &s_##c>);               \
  if (all || vmath_default(OpId::op, 'f'))                                                                    \
    r.set(OpId::op, DType::Float32, &vector_loop<float, &tile_ps512<&_ZGVeN16v_##c##f>, &s_##c##f>);
    NPC_VMATH_FUNCS(NPC_REG)
#undef NPC_REG
    // float32 arctanh's default vector loop is the float64 routine (Note [float32 through float64]).
    if (!all) r.set(OpId::arctanh, DType::Float32, &vector_loop<float, &tile_ps512<&atanhf_via_pd512>, &s_atanhf>);
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
#define NPC_REG(op, c)                                                                                         \
  if (all || vmath_default(OpId::op, 'd'))                                                                    \
    r.set(OpId::op, DType::Float64, &vector_loop<double, &tile_pd256<&_ZGVdN4v_##c>, &s_##c>);               \
  if (all || vmath_default(OpId::op, 'f'))                                                                    \
    r.set(OpId::op, DType::Float32, &vector_loop<float, &tile_ps256<&_ZGVdN8v_##c##f>, &s_##c##f>);
    NPC_VMATH_FUNCS(NPC_REG)
#undef NPC_REG
    // float32 arctanh's default vector loop is the float64 routine (Note [float32 through float64]).
    if (!all) r.set(OpId::arctanh, DType::Float32, &vector_loop<float, &tile_ps256<&atanhf_via_pd256>, &s_atanhf>);
  }
}

#else
void register_vector_math(Registrar&) {}
#endif

}  // namespace npc::ops::simd
