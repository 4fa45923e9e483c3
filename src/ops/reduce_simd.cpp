// Vector loops for reductions: float max/min, row accumulation (acc[i] = op(acc[i], x[i])),
// and NumPy's pairwise summation.
//
// Note [vector loops]
// Each loop is written once, as a template over the instruction set `Isa` (its vector width
// in bytes), with GCC vector types, and instantiated for AVX-512, AVX2 and the baseline
// (SSE2 on x86-64; the library itself is compiled for the baseline). An explicit
// instantiation placed between `#pragma GCC push_options / target(...)` is compiled for
// that target, and the CPU check at the bottom picks one. Two rules keep the code vectorized:
// (1) vector operations appear only in the loop templates themselves, never in helper
// functions or lambdas (those are compiled on their own, for the baseline, before being
// inlined, which would split their vectors into scalars); (2) a vector is at most the
// target's width (wider comparisons are split into scalars too). The lane arithmetic does not
// depend on the width: which element goes to which of the eight lanes of the exact loops is
// fixed, the row loops are element by element, so every target gives the same bits. Without
// GCC vector types (another compiler) the functions return false and reduce.cpp runs its
// scalar loops.
//
// Note [vector max/min]
// The exact max/min loop does per element one lane update (lane > v ? lane : v, NaN in v
// leaving the lane as is) and one NaN test OR-ed into a mask; only when the mask is set does
// a scalar scan look for the first NaN (NumPy: a NaN anywhere wins). Eight lanes, element i
// in lane i % 8, combined in lane order: the association of reduce.cpp's portable loop, so
// results (signed zeros too) do not depend on the CPU. The fast loop (Note [unordered max/min
// lanes]) runs first on long runs.
#include "ops/reduce_simd.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ops/vector_isa.hpp"

#if defined(__GNUC__)
// Vectors are only passed within this file (and inlined): no ABI to keep.
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace npc::ops::simd {
#if NPC_SIMD_VECTORS
namespace {

template <bool kMax, class T>
inline T pick(T lane, T v) {  // scalars only (Note [vector loops])
  return kMax ? (lane > v ? lane : v) : (lane < v ? lane : v);
}

// Note [unordered max/min lanes]
// The exact eight-lane loop carries one dependency chain per lane, which limits it to a
// fraction of memory bandwidth. The fast loop keeps 256 bytes of lanes (another assignment
// of elements to lanes) and a NaN mask. Without NaN the maximum (minimum) does not depend on
// the lane assignment; only which zero comes out of a mix of 0.0 and -0.0
// does. So the fast loop runs first, and when its result is a zero (or a NaN was seen) the
// exact loop decides: the result stays the exact loop's bit for bit.
template <class Isa, bool kMax, class T>
bool minmax_fast(const T* q, int64_t n, T* acc) {
  using V = typename Vec<T, Isa::kBytes>::type;
  constexpr int L = Isa::kBytes / static_cast<int>(sizeof(T));  // lanes per vector
  constexpr int NV = 256 / Isa::kBytes;                         // vectors of lanes
  constexpr int64_t W = static_cast<int64_t>(L) * NV;
  if (n < 4 * W) return false;
  T r = *acc;
  // Scalar head up to a 64-byte boundary: every group of loads then reads whole cache lines.
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(q + i) & 63) != 0; ++i) {
    if (std::isunordered(q[i], q[i])) return false;
    r = pick<kMax>(r, q[i]);
  }
  V l[NV];
  for (int j = 0; j < NV; ++j)
    for (int k = 0; k < L; ++k) l[j][k] = r;
  // One NaN test per pair of vectors, OR-ed. x86 has an unordered compare of two vectors (one
  // instruction for both); GCC vector types can only test each vector on its own.
  auto nan = l[0] != l[0];
  [[maybe_unused]] uint64_t nan_bits = 0;
  for (; i + W <= n; i += W) {
    V v[NV];
    for (int j = 0; j < NV; ++j) std::memcpy(&v[j], q + i + j * L, sizeof(V));
    for (int j = 0; j < NV; j += 2) {
#if defined(__x86_64__)
      if constexpr (Isa::kBytes == 64 && sizeof(T) == 8) {
        nan_bits |= _mm512_cmp_pd_mask(v[j], v[j + 1], _CMP_UNORD_Q);
        continue;
      } else if constexpr (Isa::kBytes == 64) {
        nan_bits |= _mm512_cmp_ps_mask(v[j], v[j + 1], _CMP_UNORD_Q);
        continue;
      } else if constexpr (Isa::kBytes == 32 && sizeof(T) == 8) {
        nan |= reinterpret_cast<decltype(nan)>(_mm256_cmp_pd(v[j], v[j + 1], _CMP_UNORD_Q));
        continue;
      } else if constexpr (Isa::kBytes == 32) {
        nan |= reinterpret_cast<decltype(nan)>(_mm256_cmp_ps(v[j], v[j + 1], _CMP_UNORD_Q));
        continue;
      }
#endif
      nan |= (v[j] != v[j]) | (v[j + 1] != v[j + 1]);
    }
    for (int j = 0; j < NV; ++j) l[j] = kMax ? (l[j] > v[j] ? l[j] : v[j]) : (l[j] < v[j] ? l[j] : v[j]);
  }
  if (nan_bits) return false;
  for (int k = 0; k < L; ++k)
    if (nan[k]) return false;
  for (int j = 0; j < NV; ++j)
    for (int k = 0; k < L; ++k) r = pick<kMax>(r, l[j][k]);
  for (; i < n; ++i) {
    if (std::isunordered(q[i], q[i])) return false;
    r = pick<kMax>(r, q[i]);
  }
  if (r == 0) return false;  // which zero: the exact loop decides
  *acc = r;
  return true;
}

template <class Isa, bool kMax, class T>
void minmax_exact(const T* q, int64_t n, T* acc) {
  // Eight lanes in NV vectors of L lanes (L * NV == 8).
  constexpr int bytes = Isa::kBytes < 8 * static_cast<int>(sizeof(T)) ? Isa::kBytes : 8 * static_cast<int>(sizeof(T));
  using V = typename Vec<T, bytes>::type;
  constexpr int L = bytes / static_cast<int>(sizeof(T)), NV = 8 / L;
  T a = *acc;
  V l[NV];
  V nan[NV];  // lanes that saw a NaN hold a NaN
  for (int j = 0; j < NV; ++j)
    for (int k = 0; k < L; ++k) l[j][k] = a, nan[j][k] = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < NV; ++j) {
      V v;
      std::memcpy(&v, q + i + j * L, sizeof v);
      nan[j] = v != v ? v : nan[j];
      l[j] = kMax ? (l[j] > v ? l[j] : v) : (l[j] < v ? l[j] : v);
    }
  T lane[8];
  bool maybe_nan = false;
  for (int j = 0; j < NV; ++j)
    for (int k = 0; k < L; ++k) {
      lane[j * L + k] = l[j][k];
      maybe_nan |= std::isunordered(nan[j][k], nan[j][k]);
    }
  for (; i < n; ++i) {
    maybe_nan |= std::isunordered(q[i], q[i]);
    lane[0] = pick<kMax>(lane[0], q[i]);
  }
  for (int k = 0; k < 8; ++k) a = pick<kMax>(a, lane[k]);
  if (maybe_nan) {
    for (int64_t j = 0; j < n; ++j)
      if (std::isunordered(q[j], q[j])) {
        a = q[j];
        break;
      }
  }
  *acc = a;
}

template <class Isa, class T>
bool minmax(const T* q, int64_t n, T* acc, bool is_max) {
  if (std::isnan(*acc)) return true;
  if (is_max ? minmax_fast<Isa, true>(q, n, acc) : minmax_fast<Isa, false>(q, n, acc)) return true;
  is_max ? minmax_exact<Isa, true>(q, n, acc) : minmax_exact<Isa, false>(q, n, acc);
  return true;
}

// Note [row accumulation]: acc[i] = op(acc[i], x[i]), the ufunc's own expression element by
// element (add and multiply: one IEEE operation; maximum/minimum: a NaN in acc stays, else
// the larger (smaller) one, or x on ties and when x is NaN), so any vector width gives the
// same bits and the scalar loop's floating-point flags.
template <class Isa, RowOp kOp, class T>
void rows(T* acc, const T* x, int64_t xs, int64_t n) {
  using V = typename Vec<T, Isa::kBytes>::type;
  constexpr int L = Isa::kBytes / static_cast<int>(sizeof(T));
  int64_t i = 0;
  if (xs == 1 || xs == 2) {
    for (; i + L <= n; i += L) {
      V a, v;
      std::memcpy(&a, acc + i, sizeof a);
      if (xs == 1) {
        std::memcpy(&v, x + i, sizeof v);
      } else {  // every other element (a[..., ::2]): two loads, their even lanes
        V lo, hi;
        std::memcpy(&lo, x + 2 * i, sizeof lo);
        std::memcpy(&hi, x + 2 * i + L, sizeof hi);
        for (int k = 0; k < L / 2; ++k) v[k] = lo[2 * k], v[k + L / 2] = hi[2 * k];
      }
      V r;
      if constexpr (kOp == RowOp::Add) r = a + v;
      else if constexpr (kOp == RowOp::Multiply) r = a * v;
      else if constexpr (kOp == RowOp::Max) r = ((a > v) | (a != a)) ? a : v;
      else r = ((a < v) | (a != a)) ? a : v;
      std::memcpy(acc + i, &r, sizeof r);
    }
  }
  for (; i < n; ++i) {
    const T a = acc[i], v = x[i * xs];
    if constexpr (kOp == RowOp::Add) acc[i] = a + v;
    else if constexpr (kOp == RowOp::Multiply) acc[i] = a * v;
    else if constexpr (kOp == RowOp::Max) acc[i] = (a > v || a != a) ? a : v;
    else acc[i] = (a < v || a != a) ? a : v;
  }
}

// Note [vector pairwise sum]
// NumPy's pairwise summation (pairwise_sum in reduce.cpp) keeps eight partial sums r[0..7]
// for blocks of up to 128 elements, r[k] accumulating elements 8j + k: eight lanes, one step
// per eight elements, the association unchanged, so the same bits as the scalar code.
template <class Isa, class T>
T pairwise(const T* x, int64_t n) {
  if (n < 8) {
    T r = -T(0);
    for (int64_t i = 0; i < n; ++i) r += x[i];
    return r;
  }
  if (n <= 128) {
    constexpr int bytes = Isa::kBytes < 8 * static_cast<int>(sizeof(T)) ? Isa::kBytes : 8 * static_cast<int>(sizeof(T));
    using V = typename Vec<T, bytes>::type;
    constexpr int L = bytes / static_cast<int>(sizeof(T)), NV = 8 / L;
    V r[NV];
    for (int j = 0; j < NV; ++j) std::memcpy(&r[j], x + j * L, sizeof(V));
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < NV; ++j) {
        V v;
        std::memcpy(&v, x + i + j * L, sizeof v);
        r[j] += v;
      }
    T s[8];
    for (int j = 0; j < NV; ++j) std::memcpy(s + j * L, &r[j], sizeof(V));
    T res = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; ++i) res += x[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise<Isa>(x, n2) + pairwise<Isa>(x + n2, n - n2);
}

// Explicit instantiations for one instruction set, compiled for the enclosing target: every
// template with vector code is listed (an implicit instantiation would be compiled for the
// baseline).
#define NPC_SIMD_INSTANTIATE(I)                                                              \
  template bool minmax_fast<I, true, double>(const double*, int64_t, double*);              \
  template bool minmax_fast<I, false, double>(const double*, int64_t, double*);             \
  template bool minmax_fast<I, true, float>(const float*, int64_t, float*);                 \
  template bool minmax_fast<I, false, float>(const float*, int64_t, float*);                \
  template void minmax_exact<I, true, double>(const double*, int64_t, double*);             \
  template void minmax_exact<I, false, double>(const double*, int64_t, double*);            \
  template void minmax_exact<I, true, float>(const float*, int64_t, float*);                \
  template void minmax_exact<I, false, float>(const float*, int64_t, float*);               \
  template bool minmax<I, double>(const double*, int64_t, double*, bool);                   \
  template bool minmax<I, float>(const float*, int64_t, float*, bool);                      \
  template void rows<I, RowOp::Add, double>(double*, const double*, int64_t, int64_t);      \
  template void rows<I, RowOp::Multiply, double>(double*, const double*, int64_t, int64_t); \
  template void rows<I, RowOp::Max, double>(double*, const double*, int64_t, int64_t);      \
  template void rows<I, RowOp::Min, double>(double*, const double*, int64_t, int64_t);      \
  template void rows<I, RowOp::Add, float>(float*, const float*, int64_t, int64_t);         \
  template void rows<I, RowOp::Multiply, float>(float*, const float*, int64_t, int64_t);    \
  template void rows<I, RowOp::Max, float>(float*, const float*, int64_t, int64_t);         \
  template void rows<I, RowOp::Min, float>(float*, const float*, int64_t, int64_t);         \
  template double pairwise<I, double>(const double*, int64_t);                              \
  template float pairwise<I, float>(const float*, int64_t);

NPC_SIMD_INSTANTIATE(Sse2)
#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2")
NPC_SIMD_INSTANTIATE(Avx2)
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f")
NPC_SIMD_INSTANTIATE(Avx512)
#pragma GCC pop_options
#endif
#undef NPC_SIMD_INSTANTIATE

// The loops of one instruction set, picked once for the CPU.
struct Table {
  bool (*minmax_f64)(const double*, int64_t, double*, bool);
  bool (*minmax_f32)(const float*, int64_t, float*, bool);
  void (*rows_f64[4])(double*, const double*, int64_t, int64_t);
  void (*rows_f32[4])(float*, const float*, int64_t, int64_t);
  double (*pairwise_f64)(const double*, int64_t);
  float (*pairwise_f32)(const float*, int64_t);
};

template <class I>
constexpr Table table_for() {
  return {&minmax<I, double>,
          &minmax<I, float>,
          {&rows<I, RowOp::Add, double>, &rows<I, RowOp::Multiply, double>, &rows<I, RowOp::Max, double>,
           &rows<I, RowOp::Min, double>},
          {&rows<I, RowOp::Add, float>, &rows<I, RowOp::Multiply, float>, &rows<I, RowOp::Max, float>,
           &rows<I, RowOp::Min, float>},
          &pairwise<I, double>,
          &pairwise<I, float>};
}

const Table& table() {
#if defined(__x86_64__)
  static const Table t = __builtin_cpu_supports("avx512f") ? table_for<Avx512>()
                         : __builtin_cpu_supports("avx2") ? table_for<Avx2>()
                                                           : table_for<Sse2>();
#else
  static const Table t = table_for<Sse2>();
#endif
  return t;
}

}  // namespace

bool minmax_f64(const double* q, int64_t n, double* acc, bool is_max) { return table().minmax_f64(q, n, acc, is_max); }
bool minmax_f32(const float* q, int64_t n, float* acc, bool is_max) { return table().minmax_f32(q, n, acc, is_max); }
bool rows_f64(RowOp op, double* acc, const double* x, int64_t xs, int64_t n) {
  table().rows_f64[static_cast<int>(op)](acc, x, xs, n);
  return true;
}
bool rows_f32(RowOp op, float* acc, const float* x, int64_t xs, int64_t n) {
  table().rows_f32[static_cast<int>(op)](acc, x, xs, n);
  return true;
}
bool pairwise_sum_f64(const double* x, int64_t n, double* out) {
  *out = table().pairwise_f64(x, n);
  return true;
}
bool pairwise_sum_f32(const float* x, int64_t n, float* out) {
  *out = table().pairwise_f32(x, n);
  return true;
}

// Note [half conversion]: float16 has no arithmetic on the baseline; each value is converted
// by a library call. F16C converts eight per instruction, exactly (the same value; only a
// signalling NaN comes out quiet, as any addition would make it).
#if defined(__x86_64__)
namespace {
bool have_f16c() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return ok;
}

template <class D>
__attribute__((target("avx2,f16c"))) void half_to(const std::byte* src, int64_t ss, D* dst, int64_t n) {
  int64_t i = 0;
  if (ss == 2) {
    for (; i + 8 <= n; i += 8) {
      const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i)));
      if constexpr (std::is_same_v<D, float>) {
        _mm256_storeu_ps(dst + i, f);
      } else {
        _mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
        _mm256_storeu_pd(dst + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
      }
    }
  }
  for (; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + i * ss, 2);
    dst[i] = static_cast<D>(_cvtsh_ss(h));
  }
}
}  // namespace

bool half_to_f32(const std::byte* src, int64_t ss, float* dst, int64_t n) {
  if (!have_f16c()) return false;
  half_to<float>(src, ss, dst, n);
  return true;
}
bool half_to_f64(const std::byte* src, int64_t ss, double* dst, int64_t n) {
  if (!have_f16c()) return false;
  half_to<double>(src, ss, dst, n);
  return true;
}
#else
bool half_to_f32(const std::byte*, int64_t, float*, int64_t) { return false; }
bool half_to_f64(const std::byte*, int64_t, double*, int64_t) { return false; }
#endif
#else
bool half_to_f32(const std::byte*, int64_t, float*, int64_t) { return false; }
bool half_to_f64(const std::byte*, int64_t, double*, int64_t) { return false; }
bool minmax_f64(const double*, int64_t, double*, bool) { return false; }
bool minmax_f32(const float*, int64_t, float*, bool) { return false; }
bool rows_f64(RowOp, double*, const double*, int64_t, int64_t) { return false; }
bool rows_f32(RowOp, float*, const float*, int64_t, int64_t) { return false; }
bool pairwise_sum_f64(const double*, int64_t, double*) { return false; }
bool pairwise_sum_f32(const float*, int64_t, float*) { return false; }
#endif

}  // namespace npc::ops::simd
