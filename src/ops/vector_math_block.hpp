// Internal: one block of a float transcendental ufunc on glibc's vector math library
// (libmvec), shared by the eager loops (src/ops/math_simd.cpp) and the fused kernels (the
// prelude of every generated translation unit embeds this text, cmake/embed_prelude.cmake),
// so both compute every element with the same routine and the same special-value rule
// (Note [vector math], Note [vector math in kernels] in src/fusion/kir_vector_math.cpp).
//
// Plain C++17 for GCC on x86-64, with no namespace of its own: the includer opens one
// (npc::ops::simd, npk::vm) and includes <cmath>, <cstdint>, <limits> and the scalar rules
// (npc/scalar_rules.hpp) before it. It uses
// GCC's generic vector types, not <immintrin.h>: that header alone adds seconds to the
// compile of every kernel translation unit. Every function that computes on vector
// registers carries its instruction set as a target attribute, so it compiles into npc
// (built for baseline x86-64) and into kernels (built with -march=native) alike, and is
// called only when the CPU has that set.
#ifndef NPC_VECTOR_MATH_BLOCK_INCLUDED
#define NPC_VECTOR_MATH_BLOCK_INCLUDED

// The libmvec functions used: (ufunc, C name), a table keyed by the op table's rows; which
// loops take them by default is ops.def's vmath column (Note [vector math policy] in
// src/ops/math_simd.cpp, which checks the two agree).
#define NPC_VMATH_FUNCS(X)                                                                         \
  X(exp, exp) X(exp2, exp2) X(expm1, expm1) X(log, log) X(log2, log2) X(log10, log10)              \
  X(log1p, log1p) X(sin, sin) X(cos, cos) X(tan, tan) X(arcsin, asin) X(arccos, acos)              \
  X(arctan, atan) X(sinh, sinh) X(cosh, cosh) X(tanh, tanh) X(arcsinh, asinh) X(arccosh, acosh)    \
  X(arctanh, atanh) X(cbrt, cbrt)

// Register types: 8 doubles / 16 floats (AVX-512), 4 doubles / 8 floats (AVX2).
typedef double vm_pd8 __attribute__((vector_size(64)));
typedef float vm_ps16 __attribute__((vector_size(64)));
typedef double vm_pd4 __attribute__((vector_size(32)));
typedef float vm_ps8 __attribute__((vector_size(32)));

// The vector ABI's functions (x86_64 vector function ABI: 'd' AVX2, 'e' AVX-512, N lanes, 'v'
// a vector argument), declared by symbol name (asm labels: the prelude holds no C-linkage
// block, kernels' text is found by theirs) with the instruction set their register types need.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define NPC_VMATH_DECL(op, c) \
  vm_pd4 vm_d4_##c(vm_pd4) __asm__("_ZGVdN4v_" #c); vm_ps8 vm_d8_##c##f(vm_ps8) __asm__("_ZGVdN8v_" #c "f");
NPC_VMATH_FUNCS(NPC_VMATH_DECL)
#undef NPC_VMATH_DECL
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f")
#define NPC_VMATH_DECL(op, c) \
  vm_pd8 vm_e8_##c(vm_pd8) __asm__("_ZGVeN8v_" #c); vm_ps16 vm_e16_##c##f(vm_ps16) __asm__("_ZGVeN16v_" #c "f");
NPC_VMATH_FUNCS(NPC_VMATH_DECL)
#undef NPC_VMATH_DECL
#pragma GCC pop_options

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

// Lanes (bit k = lane k) with lo <= |v| <= hi; false for NaN (ordered quiet compares, the
// compiler's builtins: GCC's generic vector code has no mask extraction worth the name).
typedef long long vm_pq8 __attribute__((vector_size(64)));
typedef int vm_pi16 __attribute__((vector_size(64)));
typedef long long vm_pq4 __attribute__((vector_size(32)));
typedef int vm_pi8 __attribute__((vector_size(32)));
constexpr int kVmGeOQ = 0x1d, kVmLeOQ = 0x12, kVmCurDirection = 4;  // _CMP_GE_OQ, _CMP_LE_OQ
__attribute__((target("avx512f"))) inline unsigned vm_ok_pd512(vm_pd8 v, vm_pd8 lo, vm_pd8 hi) {
  const vm_pd8 a = (vm_pd8)((vm_pq8)v & 0x7fffffffffffffffLL);
  return __builtin_ia32_cmppd512_mask(a, lo, kVmGeOQ, 0xff, kVmCurDirection) &
         __builtin_ia32_cmppd512_mask(a, hi, kVmLeOQ, 0xff, kVmCurDirection);
}
__attribute__((target("avx512f"))) inline unsigned vm_ok_ps512(vm_ps16 v, vm_ps16 lo, vm_ps16 hi) {
  const vm_ps16 a = (vm_ps16)((vm_pi16)v & 0x7fffffff);
  return __builtin_ia32_cmpps512_mask(a, lo, kVmGeOQ, 0xffff, kVmCurDirection) &
         __builtin_ia32_cmpps512_mask(a, hi, kVmLeOQ, 0xffff, kVmCurDirection);
}
__attribute__((target("avx2,fma"))) inline unsigned vm_ok_pd256(vm_pd4 v, vm_pd4 lo, vm_pd4 hi) {
  const vm_pd4 a = (vm_pd4)((vm_pq4)v & 0x7fffffffffffffffLL);
  return __builtin_ia32_movmskpd256(__builtin_ia32_cmppd256(a, lo, kVmGeOQ)) &
         __builtin_ia32_movmskpd256(__builtin_ia32_cmppd256(a, hi, kVmLeOQ));
}
__attribute__((target("avx2,fma"))) inline unsigned vm_ok_ps256(vm_ps8 v, vm_ps8 lo, vm_ps8 hi) {
  const vm_ps8 a = (vm_ps8)((vm_pi8)v & 0x7fffffff);
  return __builtin_ia32_movmskps256(__builtin_ia32_cmpps256(a, lo, kVmGeOQ)) &
         __builtin_ia32_movmskps256(__builtin_ia32_cmpps256(a, hi, kVmLeOQ));
}

// One tile, n <= kVmTile elements, contiguous in/out (out may equal in): out = VF(in) for
// ordinary lanes (OKMASK of input and result); the others are listed in `redo`. One
// definition per instruction set: the target attribute cannot be a template argument.
#define NPC_VMATH_TILE(NAME, TARGET, T, V, W, OKMASK)                                         \
  template <V (*VF)(V)>                                                                       \
  __attribute__((target(TARGET))) void NAME(const T* in, T* out, int64_t n, VmRedo<T>& redo) { \
    V lo_in, lo_out, hi;                                                                      \
    for (int k = 0; k < W; ++k) {                                                             \
      lo_in[k] = kVmInLo<T>;                                                                  \
      lo_out[k] = std::numeric_limits<T>::min();                                              \
      hi[k] = std::numeric_limits<T>::max();                                                  \
    }                                                                                         \
    constexpr unsigned all = (1u << W) - 1;                                                   \
    alignas(64) T pad[W];                                                                     \
    for (int64_t i = 0; i < n; i += W) {                                                      \
      const bool tail = i + W > n;                                                            \
      const T* src = in + i;                                                                  \
      if (tail) {                                                                             \
        for (int k = 0; k < W; ++k) pad[k] = i + k < n ? in[i + k] : T(1);                    \
        src = pad;                                                                            \
      }                                                                                       \
      V x;                                                                                    \
      __builtin_memcpy(&x, src, sizeof(V));                                                   \
      const V y = VF(x);                                                                      \
      unsigned bad = ~(OKMASK(x, lo_in, hi) & OKMASK(y, lo_out, hi)) & all;                   \
      while (bad) {                                                                           \
        const int k = __builtin_ctz(bad);                                                     \
        redo.idx[redo.n] = static_cast<int32_t>(i + k);                                       \
        redo.x[redo.n++] = src[k];                                                            \
        bad &= bad - 1;                                                                       \
      }                                                                                       \
      if (!tail) {                                                                            \
        __builtin_memcpy(out + i, &y, sizeof(V));                                             \
      } else {                                                                                \
        __builtin_memcpy(pad, &y, sizeof(V));                                                 \
        for (int64_t k = 0; i + k < n; ++k) out[i + k] = pad[k];                              \
        /* tail lanes past n were padded with 1: drop them from the redo list */              \
        while (redo.n > 0 && redo.idx[redo.n - 1] >= n) --redo.n;                             \
      }                                                                                       \
    }                                                                                         \
  }

NPC_VMATH_TILE(vm_tile_pd512, "avx512f", double, vm_pd8, 8, vm_ok_pd512)
NPC_VMATH_TILE(vm_tile_ps512, "avx512f", float, vm_ps16, 16, vm_ok_ps512)
NPC_VMATH_TILE(vm_tile_pd256, "avx2,fma", double, vm_pd4, 4, vm_ok_pd256)
NPC_VMATH_TILE(vm_tile_ps256, "avx2,fma", float, vm_ps8, 8, vm_ok_ps256)
#undef NPC_VMATH_TILE

// Note [float32 through float64]: glibc's float32 atanh, scalar (atanhf) and vector alike,
// is slow (about 25 ns an element) and its vector variant is further from NumPy's results
// than the scalar one. The float64 vector routine on the widened lanes, rounded back to
// float32, is within 1 ULP of NumPy's float32 arctanh and equal to it in about 96% of
// elements (the scalar atanhf: 82%), at the float64 loop's speed. Special lanes still take
// the scalar atanhf (vector_block's redo), so values and flags there are unchanged.
__attribute__((target("avx512f"))) inline vm_ps16 vm_atanhf_via_pd512(vm_ps16 x) {
  typedef float ps8 __attribute__((vector_size(32)));
  ps8 lo, hi;
  __builtin_memcpy(&lo, &x, 32);
  __builtin_memcpy(&hi, reinterpret_cast<const char*>(&x) + 32, 32);
  const ps8 rlo = __builtin_convertvector(vm_e8_atanh(__builtin_convertvector(lo, vm_pd8)), ps8);
  const ps8 rhi = __builtin_convertvector(vm_e8_atanh(__builtin_convertvector(hi, vm_pd8)), ps8);
  vm_ps16 r;
  __builtin_memcpy(&r, &rlo, 32);
  __builtin_memcpy(reinterpret_cast<char*>(&r) + 32, &rhi, 32);
  return r;
}
__attribute__((target("avx2,fma"))) inline vm_ps8 vm_atanhf_via_pd256(vm_ps8 x) {
  typedef float ps4 __attribute__((vector_size(16)));
  ps4 lo, hi;
  __builtin_memcpy(&lo, &x, 16);
  __builtin_memcpy(&hi, reinterpret_cast<const char*>(&x) + 16, 16);
  const ps4 rlo = __builtin_convertvector(vm_d4_atanh(__builtin_convertvector(lo, vm_pd4)), ps4);
  const ps4 rhi = __builtin_convertvector(vm_d4_atanh(__builtin_convertvector(hi, vm_pd4)), ps4);
  vm_ps8 r;
  __builtin_memcpy(&r, &rlo, 16);
  __builtin_memcpy(reinterpret_cast<char*>(&r) + 16, &rhi, 16);
  return r;
}

// Scalar functions: the scalar rules (npk::ufunc::<op>, include/npc/scalar_rules.hpp, which
// the includer includes first), as the scalar loops compute them: the C library's functions,
// with NumPy's NaN sign for float64 log and log2 (Note [NaN sign of log]).
#define NPC_VMATH_SCALAR(op, c) \
  inline double vm_s_##c(double x) { return ::npk::ufunc::op(x); } \
  inline float vm_s_##c##f(float x) { return ::npk::ufunc::op(x); }
NPC_VMATH_FUNCS(NPC_VMATH_SCALAR)
#undef NPC_VMATH_SCALAR

/// out[0:n] = f(in[0:n]) for n <= kVmTile contiguous elements (out may equal in): Tile's
/// vector routine for ordinary lanes, with its floating-point flags discarded (MXCSR
/// restored), and the scalar function S for the lanes Tile lists, which raises exactly the
/// flags the scalar loop raises (Note [vector math]).
template <class T, void (*Tile)(const T*, T*, int64_t, VmRedo<T>&), T (*S)(T)>
inline void vector_block(const T* in, T* out, int64_t n) {
  VmRedo<T> redo;
  const unsigned csr = __builtin_ia32_stmxcsr();
  Tile(in, out, n, redo);
  __builtin_ia32_ldmxcsr(csr);
  for (int j = 0; j < redo.n; ++j) out[redo.idx[j]] = S(redo.x[j]);
}

// The entry points by C name, lane width and dtype (what the fused kernels call): <c>_e
// (AVX-512) and <c>_d (AVX2+FMA) of T = float or double; atanh_via64_e/_d take float32
// through the float64 routine (Note [float32 through float64]). Templates, so that a kernel
// translation unit instantiates only the routines it calls.
#define NPC_VMATH_ENTRY(op, c)                                                \
  template <class T> inline void c##_e(const T* in, T* out, int64_t n) {                \
    if constexpr (sizeof(T) == 8)                                                       \
      vector_block<T, &vm_tile_pd512<&vm_e8_##c>, &vm_s_##c>(in, out, n);            \
    else                                                                                \
      vector_block<T, &vm_tile_ps512<&vm_e16_##c##f>, &vm_s_##c##f>(in, out, n);     \
  }                                                                                     \
  template <class T> inline void c##_d(const T* in, T* out, int64_t n) {                \
    if constexpr (sizeof(T) == 8)                                                       \
      vector_block<T, &vm_tile_pd256<&vm_d4_##c>, &vm_s_##c>(in, out, n);            \
    else                                                                                \
      vector_block<T, &vm_tile_ps256<&vm_d8_##c##f>, &vm_s_##c##f>(in, out, n);      \
  }
NPC_VMATH_FUNCS(NPC_VMATH_ENTRY)
#undef NPC_VMATH_ENTRY
template <class T> inline void atanh_via64_e(const T* in, T* out, int64_t n) {
  vector_block<T, &vm_tile_ps512<&vm_atanhf_via_pd512>, &vm_s_atanhf>(in, out, n);
}
template <class T> inline void atanh_via64_d(const T* in, T* out, int64_t n) {
  vector_block<T, &vm_tile_ps256<&vm_atanhf_via_pd256>, &vm_s_atanhf>(in, out, n);
}

#endif  // NPC_VECTOR_MATH_BLOCK_INCLUDED
