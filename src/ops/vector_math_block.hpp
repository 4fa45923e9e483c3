// Internal: one block of a float transcendental ufunc on glibc's vector math library
// (libmvec), shared by the eager loops (src/ops/math_simd.cpp) and the fused kernels (the
// prelude of every generated translation unit embeds this text, cmake/embed_prelude.cmake),
// so both compute every element with the same routine and the same special-value rule
// (Note [vector math], Note [vector math in kernels] in src/fusion/kir_passes.cpp).
//
// Plain C++17 for GCC or Clang on x86-64, with no namespace of its own: the includer opens
// one (npc::ops::simd, npk::vm) and includes <immintrin.h>, <cmath>, <cstdint> and
// <limits> before it. Every function that uses vector registers carries its instruction set
// as a target attribute, so it compiles into npc (built for baseline x86-64) and into kernels
// (built with -march=native) alike, and is called only when the CPU has that set.
#ifndef NPC_VECTOR_MATH_BLOCK_INCLUDED
#define NPC_VECTOR_MATH_BLOCK_INCLUDED

// The libmvec functions used: (ufunc, C name, float64 by default, float32 by default); see
// Note [vector math policy] in src/ops/math_simd.cpp.
#define NPC_VMATH_FUNCS(X)                                                                    \
  X(exp, exp, 0, 0) X(exp2, exp2, 0, 1) X(expm1, expm1, 0, 1) X(log, log, 0, 1)               \
  X(log2, log2, 0, 1) X(log10, log10, 0, 1) X(log1p, log1p, 0, 1) X(sin, sin, 0, 1)           \
  X(cos, cos, 0, 1) X(tan, tan, 0, 1) X(arcsin, asin, 0, 1) X(arccos, acos, 0, 1)             \
  X(arctan, atan, 0, 1) X(sinh, sinh, 0, 1) X(cosh, cosh, 0, 1) X(tanh, tanh, 1, 1)           \
  X(arcsinh, asinh, 1, 1) X(arccosh, acosh, 1, 1) X(arctanh, atanh, 1, 0) X(cbrt, cbrt, 1, 1)

// The vector ABI's names (x86_64 vector function ABI: 'd' AVX2, 'e' AVX-512, N lanes, 'v' a
// vector argument), declared with the instruction set their register types need.
extern "C" {
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define NPC_VMATH_DECL(op, c, D64, F32) __m256d _ZGVdN4v_##c(__m256d); __m256 _ZGVdN8v_##c##f(__m256);
NPC_VMATH_FUNCS(NPC_VMATH_DECL)
#undef NPC_VMATH_DECL
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f")
#define NPC_VMATH_DECL(op, c, D64, F32) __m512d _ZGVeN8v_##c(__m512d); __m512 _ZGVeN16v_##c##f(__m512);
NPC_VMATH_FUNCS(NPC_VMATH_DECL)
#undef NPC_VMATH_DECL
#pragma GCC pop_options
}

/// The most elements one call of vector_block takes.
constexpr int64_t kVmTile = 1024;

// A tile's lanes that need the scalar function: position and input value (the input is
// kept because the output may alias it).
template <class T>
struct VmRedo {
  int32_t idx[kVmTile];
  T x[kVmTile];
  int n = 0;
};

// Smallest |input| taken as ordinary (Note [vector math]).
template <class T> constexpr T kVmInLo = sizeof(T) == 8 ? T(0x1p-500) : T(0x1p-60);

// One tile, n <= kVmTile elements, contiguous in/out (out may equal in): out = VF(in) for
// ordinary lanes; the others are listed in `redo`. One definition per instruction set:
// the target attribute cannot be a template argument.
#define NPC_VMATH_TILE(NAME, TARGET, T, V, W, LOAD, STORE, SET1, OKMASK)                      \
  template <V (*VF)(V)>                                                                       \
  __attribute__((target(TARGET))) void NAME(const T* in, T* out, int64_t n, VmRedo<T>& redo) { \
    const V lo_in = SET1(kVmInLo<T>), lo_out = SET1(std::numeric_limits<T>::min()),           \
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
__attribute__((target("avx512f"))) inline unsigned vm_ok_pd512(__m512d v, __m512d lo, __m512d hi) {
  const __m512d a = _mm512_abs_pd(v);
  return _mm512_cmp_pd_mask(a, lo, _CMP_GE_OQ) & _mm512_cmp_pd_mask(a, hi, _CMP_LE_OQ);
}
__attribute__((target("avx512f"))) inline unsigned vm_ok_ps512(__m512 v, __m512 lo, __m512 hi) {
  const __m512 a = _mm512_abs_ps(v);
  return _mm512_cmp_ps_mask(a, lo, _CMP_GE_OQ) & _mm512_cmp_ps_mask(a, hi, _CMP_LE_OQ);
}
__attribute__((target("avx2,fma"))) inline unsigned vm_ok_pd256(__m256d v, __m256d lo, __m256d hi) {
  const __m256d a = _mm256_andnot_pd(_mm256_set1_pd(-0.0), v);
  return _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(a, lo, _CMP_GE_OQ), _mm256_cmp_pd(a, hi, _CMP_LE_OQ)));
}
__attribute__((target("avx2,fma"))) inline unsigned vm_ok_ps256(__m256 v, __m256 lo, __m256 hi) {
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
  return _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(a, lo, _CMP_GE_OQ), _mm256_cmp_ps(a, hi, _CMP_LE_OQ)));
}

NPC_VMATH_TILE(vm_tile_pd512, "avx512f", double, __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd, vm_ok_pd512)
NPC_VMATH_TILE(vm_tile_ps512, "avx512f", float, __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, vm_ok_ps512)
NPC_VMATH_TILE(vm_tile_pd256, "avx2,fma", double, __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd, vm_ok_pd256)
NPC_VMATH_TILE(vm_tile_ps256, "avx2,fma", float, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, vm_ok_ps256)
#undef NPC_VMATH_TILE

// Note [float32 through float64]: glibc's float32 atanh, scalar (atanhf) and vector alike,
// is slow (about 25 ns an element) and its vector variant is further from NumPy's results
// than the scalar one. The float64 vector routine on the widened lanes, rounded back to
// float32, is within 1 ULP of NumPy's float32 arctanh and equal to it in about 96% of
// elements (the scalar atanhf: 82%), at the float64 loop's speed. Special lanes still take
// the scalar atanhf (vector_block's redo), so values and flags there are unchanged.
__attribute__((target("avx512f"))) inline __m512 vm_atanhf_via_pd512(__m512 x) {
  const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
  const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
  const __m256 rlo = _mm512_cvtpd_ps(_ZGVeN8v_atanh(lo)), rhi = _mm512_cvtpd_ps(_ZGVeN8v_atanh(hi));
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(rlo)), _mm256_castps_pd(rhi), 1));
}
__attribute__((target("avx2,fma"))) inline __m256 vm_atanhf_via_pd256(__m256 x) {
  const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
  const __m128 rlo = _mm256_cvtpd_ps(_ZGVdN4v_atanh(lo)), rhi = _mm256_cvtpd_ps(_ZGVdN4v_atanh(hi));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(rlo), rhi, 1);
}

// Scalar functions: the C library's, as the scalar loops and the scalar rules call them.
#define NPC_VMATH_SCALAR(op, c, D64, F32) \
  inline double vm_s_##c(double x) { return std::c(x); } \
  inline float vm_s_##c##f(float x) { return std::c(x); }
NPC_VMATH_FUNCS(NPC_VMATH_SCALAR)
#undef NPC_VMATH_SCALAR

/// out[0:n] = f(in[0:n]) for n <= kVmTile contiguous elements (out may equal in): Tile's
/// vector routine for ordinary lanes, with its floating-point flags discarded (MXCSR
/// restored), and the scalar function S for the lanes Tile lists, which raises exactly the
/// flags the scalar loop raises (Note [vector math]).
template <class T, void (*Tile)(const T*, T*, int64_t, VmRedo<T>&), T (*S)(T)>
inline void vector_block(const T* in, T* out, int64_t n) {
  VmRedo<T> redo;
  const unsigned csr = _mm_getcsr();
  Tile(in, out, n, redo);
  _mm_setcsr(csr);
  for (int j = 0; j < redo.n; ++j) out[redo.idx[j]] = S(redo.x[j]);
}

// The entry points by C name, lane width and dtype (what the fused kernels call):
// <c>_e (AVX-512) and <c>_d (AVX2+FMA), overloaded on float and double; atanh_via64_e/_d
// take float32 through the float64 routine (Note [float32 through float64]).
#define NPC_VMATH_ENTRY(op, c, D64, F32)                                                                     \
  inline void c##_e(const double* in, double* out, int64_t n) {                                              \
    vector_block<double, &vm_tile_pd512<&_ZGVeN8v_##c>, &vm_s_##c>(in, out, n);                              \
  }                                                                                                          \
  inline void c##_e(const float* in, float* out, int64_t n) {                                                \
    vector_block<float, &vm_tile_ps512<&_ZGVeN16v_##c##f>, &vm_s_##c##f>(in, out, n);                        \
  }                                                                                                          \
  inline void c##_d(const double* in, double* out, int64_t n) {                                              \
    vector_block<double, &vm_tile_pd256<&_ZGVdN4v_##c>, &vm_s_##c>(in, out, n);                              \
  }                                                                                                          \
  inline void c##_d(const float* in, float* out, int64_t n) {                                                \
    vector_block<float, &vm_tile_ps256<&_ZGVdN8v_##c##f>, &vm_s_##c##f>(in, out, n);                         \
  }
NPC_VMATH_FUNCS(NPC_VMATH_ENTRY)
#undef NPC_VMATH_ENTRY
inline void atanh_via64_e(const float* in, float* out, int64_t n) {
  vector_block<float, &vm_tile_ps512<&vm_atanhf_via_pd512>, &vm_s_atanhf>(in, out, n);
}
inline void atanh_via64_d(const float* in, float* out, int64_t n) {
  vector_block<float, &vm_tile_ps256<&vm_atanhf_via_pd256>, &vm_s_atanhf>(in, out, n);
}

#endif  // NPC_VECTOR_MATH_BLOCK_INCLUDED
