// The contiguous complex product as NumPy's SIMD loop computes it, for CPUs with AVX2+FMA
// (Note [multiversioned loops] in loops.hpp).
//
// Note [complex product loops]
// NumPy multiplies complex arrays with one vfmaddsub per vector: (ar, ar) * (br, bi) -/+
// (ai*bi, ai*br) (Note [NaNs of the complex product] in include/npc/scalar_rules.hpp). The
// element rule npk::mul spells this out per part with NaN tests, rounding barriers and
// forced evaluations, which GCC cannot vectorise: 4-10x slower than NumPy. These loops run
// NumPy's instructions themselves, so values and floating-point flags are those of its loop
// by construction; the NaN that a part returns is then chosen by the rule's order (ar, b's
// multiplicand part, b's other part, ai, ai times b's other part) with quiet compares and
// blends, since which NaN operand an instruction returns depends on the operand order the
// compiler picks for a commutative product. Tails run with masked loads (missing lanes are
// zeros: 0 * 0 raises nothing) and masked stores.
#pragma once

#include <complex>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace npc::ops::complex_simd {

// Note [NaN-free products]
// The pick below only ever replaces a lane of the result by a NaN operand, and a NaN in any
// of x, y, u, v (hence c = v*u) makes the lane's fmaddsub result NaN: a vector whose results
// are all ordinary needs no pick. One quiet compare and a well-predicted branch per vector
// instead of five compares and five blends (a 62,500-element product ran at half NumPy's speed).
//
// x, y, u, v, c as in npk::mul_part, lane by lane; r the instruction's result.
__attribute__((target("avx2,fma"))) inline __m256d cprod_pick_pd(__m256d r, __m256d x, __m256d y, __m256d u,
                                                                 __m256d v, __m256d c) {
  r = _mm256_blendv_pd(r, c, _mm256_cmp_pd(c, c, _CMP_UNORD_Q));
  r = _mm256_blendv_pd(r, v, _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
  r = _mm256_blendv_pd(r, u, _mm256_cmp_pd(u, u, _CMP_UNORD_Q));
  r = _mm256_blendv_pd(r, y, _mm256_cmp_pd(y, y, _CMP_UNORD_Q));
  return _mm256_blendv_pd(r, x, _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
}
__attribute__((target("avx2,fma"))) inline __m256 cprod_pick_ps(__m256 r, __m256 x, __m256 y, __m256 u, __m256 v,
                                                               __m256 c) {
  r = _mm256_blendv_ps(r, c, _mm256_cmp_ps(c, c, _CMP_UNORD_Q));
  r = _mm256_blendv_ps(r, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  r = _mm256_blendv_ps(r, u, _mm256_cmp_ps(u, u, _CMP_UNORD_Q));
  r = _mm256_blendv_ps(r, y, _mm256_cmp_ps(y, y, _CMP_UNORD_Q));
  return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

__attribute__((target("avx2,fma"))) inline __m256d cprod_pd(__m256d a, __m256d b) {
  const __m256d x = _mm256_movedup_pd(a);        // (ar, ar)
  const __m256d v = _mm256_permute_pd(a, 0xF);   // (ai, ai)
  const __m256d u = _mm256_permute_pd(b, 0x5);   // (bi, br)
  const __m256d c = _mm256_mul_pd(v, u);         // (ai*bi, ai*br)
  const __m256d r = _mm256_fmaddsub_pd(x, b, c);  // (ar*br - ai*bi, ar*bi + ai*br)
  // Note [NaN-free products]
  return _mm256_movemask_pd(_mm256_cmp_pd(r, r, _CMP_UNORD_Q)) ? cprod_pick_pd(r, x, b, u, v, c) : r;
}
__attribute__((target("avx2,fma"))) inline __m256 cprod_ps(__m256 a, __m256 b) {
  const __m256 x = _mm256_moveldup_ps(a);
  const __m256 v = _mm256_movehdup_ps(a);
  const __m256 u = _mm256_permute_ps(b, 0xB1);
  const __m256 c = _mm256_mul_ps(v, u);
  const __m256 r = _mm256_fmaddsub_ps(x, b, c);
  return _mm256_movemask_ps(_mm256_cmp_ps(r, r, _CMP_UNORD_Q)) ? cprod_pick_ps(r, x, b, u, v, c) : r;  // Note [NaN-free products]
}

/// o = a * b over n complex128 elements; mode 0: two arrays, 1: `b` is one value, 2: `a` is one value.
__attribute__((target("avx2,fma"))) inline void complex_product_avx2(const std::complex<double>* a,
                                                                     const std::complex<double>* b,
                                                                     std::complex<double>* o, int64_t n, int mode) {
  const double* pa = reinterpret_cast<const double*>(a);
  const double* pb = reinterpret_cast<const double*>(b);
  double* po = reinterpret_cast<double*>(o);
  const __m256d one_a = mode == 2 ? _mm256_broadcast_pd(reinterpret_cast<const __m128d*>(pa)) : _mm256_setzero_pd();
  const __m256d one_b = mode == 1 ? _mm256_broadcast_pd(reinterpret_cast<const __m128d*>(pb)) : _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const __m256d va = mode == 2 ? one_a : _mm256_loadu_pd(pa + 2 * i);
    const __m256d vb = mode == 1 ? one_b : _mm256_loadu_pd(pb + 2 * i);
    _mm256_storeu_pd(po + 2 * i, cprod_pd(va, vb));
  }
  if (i < n) {
    const __m256i m = _mm256_setr_epi64x(-1, -1, 0, 0);
    const __m256d va = mode == 2 ? one_a : _mm256_maskload_pd(pa + 2 * i, m);
    const __m256d vb = mode == 1 ? one_b : _mm256_maskload_pd(pb + 2 * i, m);
    const __m256d r = cprod_pd(_mm256_blend_pd(_mm256_setzero_pd(), va, 0x3), _mm256_blend_pd(_mm256_setzero_pd(), vb, 0x3));
    _mm256_maskstore_pd(po + 2 * i, m, r);
  }
}

/// Two complex128 values `s` bytes apart.
__attribute__((target("avx2,fma"))) inline __m256d cload2_pd(const std::byte* p, int64_t s) {
  const __m128d lo = _mm_loadu_pd(reinterpret_cast<const double*>(p));
  const __m128d hi = _mm_loadu_pd(reinterpret_cast<const double*>(p + s));
  return _mm256_insertf128_pd(_mm256_castpd128_pd256(lo), hi, 1);
}

/// o = a * b over n complex128 elements at byte strides sa, sb, so (0: one value); the
/// caller has checked that the output never overlaps a later input element
/// (Note [strided complex products] in loops.hpp). Two elements per vector, loaded and
/// stored as 128-bit halves.
__attribute__((target("avx2,fma"))) inline void complex_product_strided_avx2(const std::byte* pa, int64_t sa,
                                                                             const std::byte* pb, int64_t sb,
                                                                             std::byte* po, int64_t so, int64_t n) {
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const __m256d r = cprod_pd(cload2_pd(pa + i * sa, sa), cload2_pd(pb + i * sb, sb));
    _mm_storeu_pd(reinterpret_cast<double*>(po + i * so), _mm256_castpd256_pd128(r));
    _mm_storeu_pd(reinterpret_cast<double*>(po + (i + 1) * so), _mm256_extractf128_pd(r, 1));
  }
  if (i < n) {  // the last element in the low half, zeros in the high one (0 * 0 raises nothing)
    const __m256d va = _mm256_castpd128_pd256(_mm_loadu_pd(reinterpret_cast<const double*>(pa + i * sa)));
    const __m256d vb = _mm256_castpd128_pd256(_mm_loadu_pd(reinterpret_cast<const double*>(pb + i * sb)));
    const __m256d r = cprod_pd(_mm256_blend_pd(_mm256_setzero_pd(), va, 0x3), _mm256_blend_pd(_mm256_setzero_pd(), vb, 0x3));
    _mm_storeu_pd(reinterpret_cast<double*>(po + i * so), _mm256_castpd256_pd128(r));
  }
}

/// o = a * b over n complex128 elements with AVX-512 (modes as above): four elements per
/// vector, the same per-lane instructions as cprod_pd; a vector with a NaN lane is redone
/// by halves with cprod_pd's pick, and the last n % 4 elements by the AVX2 loop, so values
/// and flags are those of complex_product_avx2.
__attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma"))) inline void complex_product_avx512(
    const std::complex<double>* a, const std::complex<double>* b, std::complex<double>* o, int64_t n, int mode) {
  const double* pa = reinterpret_cast<const double*>(a);
  const double* pb = reinterpret_cast<const double*>(b);
  double* po = reinterpret_cast<double*>(o);
  const __m512d one_a = mode == 2 ? _mm512_broadcast_f64x2(_mm_loadu_pd(pa)) : _mm512_setzero_pd();
  const __m512d one_b = mode == 1 ? _mm512_broadcast_f64x2(_mm_loadu_pd(pb)) : _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m512d va = mode == 2 ? one_a : _mm512_loadu_pd(pa + 2 * i);
    const __m512d vb = mode == 1 ? one_b : _mm512_loadu_pd(pb + 2 * i);
    const __m512d x = _mm512_movedup_pd(va);         // (ar, ar)
    const __m512d v = _mm512_permute_pd(va, 0xFF);   // (ai, ai)
    const __m512d u = _mm512_permute_pd(vb, 0x55);   // (bi, br)
    const __m512d c = _mm512_mul_pd(v, u);           // (ai*bi, ai*br)
    const __m512d r = _mm512_fmaddsub_pd(x, vb, c);  // (ar*br - ai*bi, ar*bi + ai*br)
    if (_mm512_cmp_pd_mask(r, r, _CMP_UNORD_Q) == 0) {  // Note [NaN-free products]
      _mm512_storeu_pd(po + 2 * i, r);
      continue;
    }
    _mm256_storeu_pd(po + 2 * i, cprod_pd(_mm512_castpd512_pd256(va), _mm512_castpd512_pd256(vb)));
    _mm256_storeu_pd(po + 2 * i + 4, cprod_pd(_mm512_extractf64x4_pd(va, 1), _mm512_extractf64x4_pd(vb, 1)));
  }
  if (i < n)
    complex_product_avx2(mode == 2 ? a : a + i, mode == 1 ? b : b + i, o + i, n - i, mode);
}

/// One complex64 value in every pair of lanes.
__attribute__((target("avx2,fma"))) inline __m256 cprod_broadcast_ps(const float* p) {
  double d;
  __builtin_memcpy(&d, p, sizeof d);
  return _mm256_castpd_ps(_mm256_set1_pd(d));
}

/// o = a * b over n complex64 elements (modes as above).
__attribute__((target("avx2,fma"))) inline void complex_product_avx2(const std::complex<float>* a,
                                                                     const std::complex<float>* b,
                                                                     std::complex<float>* o, int64_t n, int mode) {
  const float* pa = reinterpret_cast<const float*>(a);
  const float* pb = reinterpret_cast<const float*>(b);
  float* po = reinterpret_cast<float*>(o);
  const __m256 one_a = mode == 2 ? cprod_broadcast_ps(pa) : _mm256_setzero_ps();
  const __m256 one_b = mode == 1 ? cprod_broadcast_ps(pb) : _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256 va = mode == 2 ? one_a : _mm256_loadu_ps(pa + 2 * i);
    const __m256 vb = mode == 1 ? one_b : _mm256_loadu_ps(pb + 2 * i);
    _mm256_storeu_ps(po + 2 * i, cprod_ps(va, vb));
  }
  if (i < n) {
    const int64_t k = n - i;  // 1..3 elements: 2k float lanes
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(2 * k)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 z = _mm256_setzero_ps();
    const __m256 mf = _mm256_castsi256_ps(m);
    const __m256 va = _mm256_blendv_ps(z, mode == 2 ? one_a : _mm256_maskload_ps(pa + 2 * i, m), mf);
    const __m256 vb = _mm256_blendv_ps(z, mode == 1 ? one_b : _mm256_maskload_ps(pb + 2 * i, m), mf);
    _mm256_maskstore_ps(po + 2 * i, m, cprod_ps(va, vb));
  }
}

}  // namespace npc::ops::complex_simd
#endif
