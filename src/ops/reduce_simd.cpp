// Run-time dispatched vector loops for reductions: float max/min, float add of a row into
// an accumulator row, and NumPy's pairwise float64 summation.
//
// Note [vector max/min]
// The library is compiled for baseline x86-64 (SSE2), so these loops are compiled for AVX2
// or AVX-512 with function attributes and picked when the CPU reports the instruction set
// (any other CPU, or another architecture, runs the portable loops in reduce.cpp). The
// exact max/min loop does per element one max (vmaxpd: lane > v ? lane : v, the portable
// loop's expression, NaN in v leaving the lane as is) and one unordered compare OR-ed into
// a NaN mask; only when the mask is set does a scalar scan look for the first NaN. Eight
// lanes, element i in lane i % 8, combined in lane order: the same association as the
// portable loop, so results (signed zeros too) do not depend on the CPU. The fast loops
// (Note [unordered max/min lanes]) run first on long runs.
#include "ops/reduce_simd.hpp"

#include <cmath>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 max/min intrinsics pass an undefined vector as the masked-off source,
// which -Wmaybe-uninitialized reports once inlined (a false positive: the mask is all ones).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define NPC_SIMD_X86 1
#else
#define NPC_SIMD_X86 0
#endif

namespace npc::ops::simd {
namespace {

template <class T>
T combine(T a, T l, bool is_max) {
  return is_max ? (a > l ? a : l) : (a < l ? a : l);
}

#if NPC_SIMD_X86
bool have_avx2() {
  static const bool ok = __builtin_cpu_supports("avx2");
  return ok;
}

// Note [unordered max/min lanes]
// The eight-lane loops below carry one dependency chain per vector register, which limits
// them to a fraction of memory bandwidth. The fast loops use many more registers (another
// assignment of elements to lanes). Without NaN the maximum (minimum) value does not depend
// on that assignment; only which zero comes out of a mix of 0.0 and -0.0 does. So the fast
// loop runs first, and when its result is a zero (or a NaN was seen) the eight-lane loop
// decides, so the result stays the portable loop's bit for bit.
template <bool kMax>
__attribute__((target("avx2"))) bool f64_avx2_fast(const double* q, int64_t n, double* acc) {
  constexpr int64_t W = 32;
  if (n < 4 * W) return false;
  const double a = *acc;
  __m256d l[8];
  for (int k = 0; k < 8; ++k) l[k] = _mm256_set1_pd(a);
  __m256d nan0 = _mm256_setzero_pd(), nan1 = nan0;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    __m256d v[8];
    for (int k = 0; k < 8; ++k) v[k] = _mm256_loadu_pd(q + i + 4 * k);
    nan0 = _mm256_or_pd(nan0, _mm256_or_pd(_mm256_cmp_pd(v[0], v[1], _CMP_UNORD_Q), _mm256_cmp_pd(v[2], v[3], _CMP_UNORD_Q)));
    nan1 = _mm256_or_pd(nan1, _mm256_or_pd(_mm256_cmp_pd(v[4], v[5], _CMP_UNORD_Q), _mm256_cmp_pd(v[6], v[7], _CMP_UNORD_Q)));
    for (int k = 0; k < 8; ++k) l[k] = kMax ? _mm256_max_pd(l[k], v[k]) : _mm256_min_pd(l[k], v[k]);
  }
  if (_mm256_movemask_pd(_mm256_or_pd(nan0, nan1)) != 0) return false;
  for (int k = 1; k < 8; ++k) l[0] = kMax ? _mm256_max_pd(l[0], l[k]) : _mm256_min_pd(l[0], l[k]);
  alignas(32) double lane[4];
  _mm256_store_pd(lane, l[0]);
  double r = a;
  for (int k = 0; k < 4; ++k) r = combine(r, lane[k], kMax);
  for (; i < n; ++i) {
    double v = q[i];
    if (std::isunordered(v, v)) return false;
    r = combine(r, v, kMax);
  }
  if (r == 0) return false;  // which zero: the eight-lane loop decides
  *acc = r;
  return true;
}

bool have_avx512() {
  static const bool ok = __builtin_cpu_supports("avx512f");
  return ok;
}

// AVX-512 versions of the fast loop (Note [unordered max/min lanes]): full cache-line loads
// reach more of the memory bandwidth than 256-bit ones on CPUs that have them.
template <bool kMax>
__attribute__((target("avx512f"))) bool f64_avx512_fast(const double* q, int64_t n, double* acc) {
  constexpr int64_t W = 32;
  if (n < 4 * W) return false;
  double r = *acc;
  // Scalar head up to a 64-byte boundary: every vector load then reads one cache line.
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(q + i) & 63) != 0; ++i) {
    if (std::isunordered(q[i], q[i])) return false;
    r = combine(r, q[i], kMax);
  }
  __m512d l[4];
  for (int k = 0; k < 4; ++k) l[k] = _mm512_set1_pd(r);
  __mmask8 nan = 0;
  for (; i + W <= n; i += W) {
    __m512d v[4];
    for (int k = 0; k < 4; ++k) v[k] = _mm512_loadu_pd(q + i + 8 * k);
    nan |= static_cast<__mmask8>(_mm512_cmp_pd_mask(v[0], v[1], _CMP_UNORD_Q) | _mm512_cmp_pd_mask(v[2], v[3], _CMP_UNORD_Q));
    for (int k = 0; k < 4; ++k) l[k] = kMax ? _mm512_max_pd(l[k], v[k]) : _mm512_min_pd(l[k], v[k]);
  }
  if (nan) return false;
  for (int k = 1; k < 4; ++k) l[0] = kMax ? _mm512_max_pd(l[0], l[k]) : _mm512_min_pd(l[0], l[k]);
  alignas(64) double lane[8];
  _mm512_store_pd(lane, l[0]);
  for (int k = 0; k < 8; ++k) r = combine(r, lane[k], kMax);
  for (; i < n; ++i) {
    double v = q[i];
    if (std::isunordered(v, v)) return false;
    r = combine(r, v, kMax);
  }
  if (r == 0) return false;  // which zero: the eight-lane loop decides
  *acc = r;
  return true;
}

template <bool kMax>
__attribute__((target("avx512f"))) bool f32_avx512_fast(const float* q, int64_t n, float* acc) {
  constexpr int64_t W = 64;
  if (n < 4 * W) return false;
  float r = *acc;
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(q + i) & 63) != 0; ++i) {
    if (std::isunordered(q[i], q[i])) return false;
    r = combine(r, q[i], kMax);
  }
  __m512 l[4];
  for (int k = 0; k < 4; ++k) l[k] = _mm512_set1_ps(r);
  __mmask16 nan = 0;
  for (; i + W <= n; i += W) {
    __m512 v[4];
    for (int k = 0; k < 4; ++k) v[k] = _mm512_loadu_ps(q + i + 16 * k);
    nan |= static_cast<__mmask16>(_mm512_cmp_ps_mask(v[0], v[1], _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v[2], v[3], _CMP_UNORD_Q));
    for (int k = 0; k < 4; ++k) l[k] = kMax ? _mm512_max_ps(l[k], v[k]) : _mm512_min_ps(l[k], v[k]);
  }
  if (nan) return false;
  for (int k = 1; k < 4; ++k) l[0] = kMax ? _mm512_max_ps(l[0], l[k]) : _mm512_min_ps(l[0], l[k]);
  alignas(64) float lane[16];
  _mm512_store_ps(lane, l[0]);
  for (int k = 0; k < 16; ++k) r = combine(r, lane[k], kMax);
  for (; i < n; ++i) {
    float v = q[i];
    if (std::isunordered(v, v)) return false;
    r = combine(r, v, kMax);
  }
  if (r == 0) return false;
  *acc = r;
  return true;
}

template <bool kMax>
__attribute__((target("avx2"))) void f64_avx2(const double* q, int64_t n, double* acc) {
  double a = *acc;
  if (std::isnan(a)) return;
  __m256d l0 = _mm256_set1_pd(a), l1 = l0;
  __m256d nan = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d v0 = _mm256_loadu_pd(q + i), v1 = _mm256_loadu_pd(q + i + 4);
    nan = _mm256_or_pd(nan, _mm256_cmp_pd(v0, v1, _CMP_UNORD_Q));
    l0 = kMax ? _mm256_max_pd(l0, v0) : _mm256_min_pd(l0, v0);
    l1 = kMax ? _mm256_max_pd(l1, v1) : _mm256_min_pd(l1, v1);
  }
  bool maybe_nan = _mm256_movemask_pd(nan) != 0;
  alignas(32) double lane[8];
  _mm256_store_pd(lane, l0);
  _mm256_store_pd(lane + 4, l1);
  for (; i < n; ++i) {
    double v = q[i];
    maybe_nan |= std::isunordered(v, v);
    lane[0] = combine(lane[0], v, kMax);
  }
  for (int k = 0; k < 8; ++k) a = combine(a, lane[k], kMax);
  if (maybe_nan) {
    for (int64_t j = 0; j < n; ++j)
      if (std::isunordered(q[j], q[j])) { a = q[j]; break; }
  }
  *acc = a;
}

template <bool kMax>
__attribute__((target("avx2"))) void f32_avx2(const float* q, int64_t n, float* acc) {
  float a = *acc;
  if (std::isnan(a)) return;
  __m256 l0 = _mm256_set1_ps(a);
  __m256 nan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // Two loads per step for throughput; both feed the same eight lanes in order.
    __m256 v0 = _mm256_loadu_ps(q + i), v1 = _mm256_loadu_ps(q + i + 8);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q));
    l0 = kMax ? _mm256_max_ps(l0, v0) : _mm256_min_ps(l0, v0);
    l0 = kMax ? _mm256_max_ps(l0, v1) : _mm256_min_ps(l0, v1);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 v0 = _mm256_loadu_ps(q + i);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v0, v0, _CMP_UNORD_Q));
    l0 = kMax ? _mm256_max_ps(l0, v0) : _mm256_min_ps(l0, v0);
  }
  bool maybe_nan = _mm256_movemask_ps(nan) != 0;
  alignas(32) float lane[8];
  _mm256_store_ps(lane, l0);
  for (; i < n; ++i) {
    float v = q[i];
    maybe_nan |= std::isunordered(v, v);
    lane[0] = combine(lane[0], v, kMax);
  }
  for (int k = 0; k < 8; ++k) a = combine(a, lane[k], kMax);
  if (maybe_nan) {
    for (int64_t j = 0; j < n; ++j)
      if (std::isunordered(q[j], q[j])) { a = q[j]; break; }
  }
  *acc = a;
}

// Note [row accumulation]: acc[i] = acc[i] + x[i], the add ufunc's own expression element by
// element (IEEE addition is exact per element, so any vector width gives the same bits).
__attribute__((target("avx512f"))) void add_f64_avx512(double* acc, const double* x, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k)
      _mm512_storeu_pd(acc + i + 8 * k, _mm512_add_pd(_mm512_loadu_pd(acc + i + 8 * k), _mm512_loadu_pd(x + i + 8 * k)));
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(acc + i, _mm512_add_pd(_mm512_loadu_pd(acc + i), _mm512_loadu_pd(x + i)));
  for (; i < n; ++i) acc[i] = acc[i] + x[i];
}

__attribute__((target("avx2"))) void add_f64_avx2(double* acc, const double* x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 4; ++k)
      _mm256_storeu_pd(acc + i + 4 * k, _mm256_add_pd(_mm256_loadu_pd(acc + i + 4 * k), _mm256_loadu_pd(x + i + 4 * k)));
  for (; i < n; ++i) acc[i] = acc[i] + x[i];
}

__attribute__((target("avx512f"))) void add_f32_avx512(float* acc, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    for (int k = 0; k < 4; ++k)
      _mm512_storeu_ps(acc + i + 16 * k, _mm512_add_ps(_mm512_loadu_ps(acc + i + 16 * k), _mm512_loadu_ps(x + i + 16 * k)));
  for (; i < n; ++i) acc[i] = acc[i] + x[i];
}

__attribute__((target("avx2"))) void add_f32_avx2(float* acc, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k)
      _mm256_storeu_ps(acc + i + 8 * k, _mm256_add_ps(_mm256_loadu_ps(acc + i + 8 * k), _mm256_loadu_ps(x + i + 8 * k)));
  for (; i < n; ++i) acc[i] = acc[i] + x[i];
}

// Note [vector pairwise sum]
// NumPy's pairwise summation (pairwise_sum_contig in reduce.cpp) keeps eight partial sums
// r[0..7] for blocks of up to 128 elements, r[k] accumulating elements 8j + k. Those eight
// sums are exactly the lanes of one 512-bit (or two 256-bit) registers, so each step is one
// vector add and the association is unchanged: the same bits as the scalar code.
inline double pairwise_combine(const double* r) {
  return ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
}

__attribute__((target("avx512f"))) double pairwise_avx512(const double* x, int64_t n) {
  if (n < 8) {
    double r = -0.0;
    for (int64_t i = 0; i < n; ++i) r += x[i];
    return r;
  }
  if (n <= 128) {
    __m512d r = _mm512_loadu_pd(x);
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8) r = _mm512_add_pd(r, _mm512_loadu_pd(x + i));
    alignas(64) double l[8];
    _mm512_store_pd(l, r);
    double res = pairwise_combine(l);
    for (; i < n; ++i) res += x[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_avx512(x, n2) + pairwise_avx512(x + n2, n - n2);
}

__attribute__((target("avx2"))) double pairwise_avx2(const double* x, int64_t n) {
  if (n < 8) {
    double r = -0.0;
    for (int64_t i = 0; i < n; ++i) r += x[i];
    return r;
  }
  if (n <= 128) {
    __m256d r0 = _mm256_loadu_pd(x), r1 = _mm256_loadu_pd(x + 4);
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      r0 = _mm256_add_pd(r0, _mm256_loadu_pd(x + i));
      r1 = _mm256_add_pd(r1, _mm256_loadu_pd(x + i + 4));
    }
    alignas(32) double l[8];
    _mm256_store_pd(l, r0);
    _mm256_store_pd(l + 4, r1);
    double res = pairwise_combine(l);
    for (; i < n; ++i) res += x[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_avx2(x, n2) + pairwise_avx2(x + n2, n - n2);
}
#endif

}  // namespace

bool minmax_f64(const double* q, int64_t n, double* acc, bool is_max) {
#if NPC_SIMD_X86
  if (!have_avx2()) return false;
  if (std::isnan(*acc)) return true;
  if (have_avx512()) {
    if (is_max ? f64_avx512_fast<true>(q, n, acc) : f64_avx512_fast<false>(q, n, acc)) return true;
  } else if (is_max ? f64_avx2_fast<true>(q, n, acc) : f64_avx2_fast<false>(q, n, acc)) {
    return true;
  }
  is_max ? f64_avx2<true>(q, n, acc) : f64_avx2<false>(q, n, acc);
  return true;
#else
  (void)q, (void)n, (void)acc, (void)is_max;
  return false;
#endif
}

bool minmax_f32(const float* q, int64_t n, float* acc, bool is_max) {
#if NPC_SIMD_X86
  if (!have_avx2()) return false;
  if (std::isnan(*acc)) return true;
  if (have_avx512() && (is_max ? f32_avx512_fast<true>(q, n, acc) : f32_avx512_fast<false>(q, n, acc))) return true;
  is_max ? f32_avx2<true>(q, n, acc) : f32_avx2<false>(q, n, acc);
  return true;
#else
  (void)q, (void)n, (void)acc, (void)is_max;
  return false;
#endif
}

bool add_into_f64(double* acc, const double* x, int64_t n) {
#if NPC_SIMD_X86
  if (have_avx512()) add_f64_avx512(acc, x, n);
  else if (have_avx2()) add_f64_avx2(acc, x, n);
  else return false;
  return true;
#else
  (void)acc, (void)x, (void)n;
  return false;
#endif
}

bool add_into_f32(float* acc, const float* x, int64_t n) {
#if NPC_SIMD_X86
  if (have_avx512()) add_f32_avx512(acc, x, n);
  else if (have_avx2()) add_f32_avx2(acc, x, n);
  else return false;
  return true;
#else
  (void)acc, (void)x, (void)n;
  return false;
#endif
}

bool pairwise_sum_f64(const double* x, int64_t n, double* out) {
#if NPC_SIMD_X86
  if (have_avx512()) *out = pairwise_avx512(x, n);
  else if (have_avx2()) *out = pairwise_avx2(x, n);
  else return false;
  return true;
#else
  (void)x, (void)n, (void)out;
  return false;
#endif
}

}  // namespace npc::ops::simd
