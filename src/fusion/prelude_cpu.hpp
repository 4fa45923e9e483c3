// The runtime prelude of every generated C++ translation unit (src/fusion/emit_cpp.cpp).
// It is plain C++17: generated code must compile on its own, with no include path to npc.
// At build time cmake/embed_prelude.cmake replaces the #include of npc/scalar_rules.hpp
// below with that header's text and wraps the whole file as a string (the generated
// fusion/prelude_str.inc), so the kernels compute every element with the eager kernels'
// rules (Note [scalar rules] in include/npc/scalar_rules.hpp). The text is part of each
// translation unit and so of its disk-cache key: editing either file recompiles kernels.
//
// Note [numpy semantics in kernels]
// - integer +, -, *, negation wrap around: computed in unsigned types (no C++ UB);
// - // and % by zero give 0 for integers, MIN // -1 gives MIN and MIN % -1 gives 0 (NumPy 2);
//   float // and % follow NumPy's npy_divmod;
// - shifts by >= the bit width (or a negative count) give 0 (or -1 for negative >> n);
// - float -> int casts give what x86-64 cvttsd2si gives, as NumPy's C casts do here;
// - float16 values live in float and are rounded to half after every operation, and
//   float64 -> float16 rounds once (NumPy's npy_double_to_half);
// - complex arithmetic uses NumPy's formulas (Smith's division, hypot for abs);
// - maximum/minimum propagate NaN, fmax/fmin ignore it;
// - comparisons are quiet: NaN operands raise no "invalid" flag (Note [fp errors in kernels]),
//   except where NumPy's complex order raises it (Note [complex order flags]).
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace npk {
// ---- floating-point status (Note [fp errors in kernels], src/fusion/emit_cpp.cpp)
// Reads this thread's FE flags as npc's FpFlag bits (1 divide, 2 overflow, 4 underflow,
// 8 invalid) and clears them.
// On x86-64 the flags are read from MXCSR and the x87 status word directly and written only
// when one is set (Note [cheap floating-point status] in src/ops/registry.cpp): glibc's
// feclearexcept reloads the whole x87 environment, which costs more than a small kernel.
#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kX86Flags = 0x1d;  // IE ZE OE UE, the same bits in MXCSR and the x87 status word
inline unsigned fpe_x86_clear() {
  const unsigned csr = __builtin_ia32_stmxcsr();
  unsigned short sw;
  __asm__ volatile("fnstsw %0" : "=am"(sw));
  if (csr & kX86Flags) __builtin_ia32_ldmxcsr(csr & ~kX86Flags);
  if (sw & kX86Flags) __asm__ volatile("fnclex");
  return (csr | sw) & kX86Flags;
}
inline int fpe_take() {
  const unsigned e = fpe_x86_clear();
  return ((e & 0x04) ? 1 : 0) | ((e & 0x08) ? 2 : 0) | ((e & 0x10) ? 4 : 0) | ((e & 0x01) ? 8 : 0);
}
inline void fpe_clear() { fpe_x86_clear(); }
#else
inline int fpe_take() {
  int e = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
  if (!e) return 0;
  std::feclearexcept(FE_ALL_EXCEPT);
  return ((e & FE_DIVBYZERO) ? 1 : 0) | ((e & FE_OVERFLOW) ? 2 : 0) | ((e & FE_UNDERFLOW) ? 4 : 0) |
         ((e & FE_INVALID) ? 8 : 0);
}
inline void fpe_clear() { std::feclearexcept(FE_ALL_EXCEPT); }
#endif
// Raises FpFlag bits as FE flags: the scalar rules' NPK_RAISE_FP hook (integer // and % by
// zero, MIN // -1, float16 rounding).
inline void fpe_raise(int bits) {
  std::feraiseexcept(((bits & 1) ? FE_DIVBYZERO : 0) | ((bits & 2) ? FE_OVERFLOW : 0) |
                     ((bits & 4) ? FE_UNDERFLOW : 0) | ((bits & 8) ? FE_INVALID : 0));
}
// ---- threads of a parallel loop (Note [threads of kernels], src/fusion/emit_cpp.cpp)
// npc's own rule (parallel::threads_for in src/core/parallel.cpp: npc.set_num_threads, the
// parallel threshold, one thread in a forked child), handed to the module when it is loaded.
using ThreadsFor = int (*)(int64_t work, int64_t cost);
static ThreadsFor g_threads_for = nullptr;
inline int threads_for(int64_t work, int64_t cost) { return g_threads_for ? g_threads_for(work, cost) : 1; }
// npc's thread pool (npc::parallel::run, Note [thread pool] in src/core/parallel.cpp), handed
// to the module when it is loaded: runs fn(ctx, c) for every chunk c on at most nt threads.
using ParallelRun = void (*)(int nt, int64_t chunks, void (*fn)(void*, int64_t), void* ctx);
static ParallelRun g_parallel_run = nullptr;
// A chunk's body (the lambda handed to parallel_for) is inlined into the chunk's copy of it:
// called out of line, the copy is reached through `this` and its values are reloaded again.
#define NPK_CHUNK __attribute__((always_inline))
// f(c) for every chunk c in [0, chunks) on at most nt threads; returns the FpFlag bits the
// chunks raised (each chunk clears its thread's flags first: the caller takes its own before).
// `f` captures the kernel's values by copy and each chunk runs a copy of it, a local object
// whose address never escapes: the compiler keeps its sizes, offsets and pointers in registers
// and knows that the kernel's stores do not change them (a loop of a lambda capturing by
// reference reloaded an offset after every store and gathered a contiguous row; the kernel's
// own locals, their addresses taken, lost the same in its one-thread loop).
template <class F>
inline int parallel_for(int nt, int64_t chunks, const F& f) {
  struct Ctx {
    const F* f;
    int fpe;
  } ctx{&f, 0};
  void (*call)(void*, int64_t) = [](void* p, int64_t c) {
    Ctx* x = static_cast<Ctx*>(p);
    fpe_clear();
    F g = *x->f;
    g(c);
    if (const int e = fpe_take()) __atomic_fetch_or(&x->fpe, e, __ATOMIC_RELAXED);
  };
  // Never inlined here: a second copy of the loop in the kernel's own function made the
  // compiler stop inlining the helpers of its one-thread loop (complex division, 2.7x slower).
  void (*volatile chunk)(void*, int64_t) = call;
  if (g_parallel_run) g_parallel_run(nt, chunks, chunk, &ctx);
  else
    for (int64_t c = 0; c < chunks; ++c) chunk(&ctx, c);
  return __atomic_load_n(&ctx.fpe, __ATOMIC_RELAXED);
}
}  // namespace npk
extern "C" void npk_set_threads_for(npk::ThreadsFor f) { npk::g_threads_for = f; }
extern "C" void npk_set_parallel_run(npk::ParallelRun f) { npk::g_parallel_run = f; }

#define NPK_RAISE_FP(bits) ::npk::fpe_raise(bits)
// Quiet ordered comparisons of NaN-free operands: GCC's -O3 -march=native vectorizer turns
// std::isless into signaling compares (Note [sanitized comparisons] in npc/scalar_rules.hpp).
#define NPK_SANITIZED_ORDER 1
// Every product of the complex formulas rounded on its own: the empty asm keeps GCC's
// vectorizer from fusing `x + y * rat` pairs into vfmaddsub/vfmsubadd, which ignores
// -ffp-contract=off (it changed the last bit of ~17% of complex quotients).
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define NPK_KEEP_ROUNDED(x) asm("" : "+x"(x))
#define NPK_KEEP_NARROWED(x) asm("" : "+x"(x))
#define NPK_KEEP_EVALUATED(x) asm volatile("" : "+x"(x))
#endif
#include "npc/scalar_rules.hpp"

namespace npk {
// `v` as a value the compiler does not know as a constant.
template <class R> inline R opaque(R v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  asm("" : "+x"(v));
#else
  volatile R keep = v;
  v = keep;
#endif
  return v;
}
// A quiet NaN the compiler does not know as a constant (Note [NaN parts of complex literals]
// in src/fusion/emit_cpp.cpp): comparisons of it run, and raise "invalid" as NumPy's do.
template <class R> inline R runtime_nan() { return opaque(std::numeric_limits<R>::quiet_NaN()); }
// A NaN of the given bits (sign and payload), likewise unknown to the compiler: GCC folded
// `x + nan_literal` in a loop's scalar tail to its default NaN, dropping the sign NumPy keeps.
template <class R, class U> inline R runtime_nan_bits(U bits) { return opaque(bits_as<R>(bits)); }
}  // namespace npk

// The eager loops' vector-math blocks (libmvec), which the vector_math_blocks pass calls over
// lane blocks (Note [vector math in kernels], src/fusion/kir_vector_math.cpp); only in units
// that call them (cpp_prelude_for defines NPK_VECTOR_MATH), the others compile faster.
#if defined(NPK_VECTOR_MATH) && defined(__x86_64__) && defined(__GNUC__)
namespace npk::vm {
#include "ops/vector_math_block.hpp"
}  // namespace npk::vm
#endif

namespace npk {
// A quiet scalar a < b (argmin/argmax over a reduced axis, which leave the loop at the first
// NaN, or unrolled over a short axis, Note [small reductions]): ucomis* raises no "invalid"
// on NaN and costs far less than npk::lt's bit tricks. On x86-64 it is inline asm: GCC's
// -O3 vectorizer would turn a loop of __builtin_isless compares (argmin over an unrolled
// short axis) into signaling vcmppd, and it never vectorizes a loop with an asm statement.
// b > a ("above": CF = ZF = 0) is false when either is NaN (unordered sets CF and ZF).
template <class T> inline bool lt_scalar(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
    bool r;
    if constexpr (sizeof(T) == 8) {
#ifdef __AVX__
      asm("vucomisd %1, %2" : "=@cca"(r) : "x"(a), "x"(b));
#else
      asm("ucomisd %1, %2" : "=@cca"(r) : "x"(a), "x"(b));
#endif
    } else {
#ifdef __AVX__
      asm("vucomiss %1, %2" : "=@cca"(r) : "x"(a), "x"(b));
#else
      asm("ucomiss %1, %2" : "=@cca"(r) : "x"(a), "x"(b));
#endif
    }
    return r;
#else
    return __builtin_isless(a, b);
#endif
  } else {
    return a < b;
  }
}
}  // namespace npk

namespace npk {
// ---- NumPy's pairwise summation (Note [summation] in src/fusion/lower_reduce.cpp)
// pairwise_sum is NumPy's pairwise_sum of a contiguous block (numpy/_core/src/umath/
// loops_utils.h.src): below 8 elements a running sum from -0.0; up to 128 (PW_BLOCKSIZE) 8
// accumulators over elements 8 apart, added as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then
// the tail in order; above, halves split at n/2 rounded down to a multiple of 8. T is the
// local type (float for float16, which NumPy sums in float too).
constexpr int64_t kPairwiseChunk = 1024;
// Chunk sums computed on threads at a time (Note [parallel pairwise sums] in kir_passes.cpp).
constexpr int64_t kPairwiseBatch = 1024;
template <class T> inline T pairwise_sum(const T* a, int64_t n) {
  if (n < 8) {
    T res = T(-0.0);
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}
// The tree of NumPy's recursion over n elements cut at a depth where no node has more than
// kPairwiseChunk elements: chunk k (of 2^depth) is the node reached by the bits of k from the
// root, the highest bit first (1 = the right half). A node of at most 128 elements is not
// split: it is the chunk of its leftmost descendant, and the others are empty (length 0,
// sum -0.0, which adds nothing: x + -0.0 is x for every x).
struct Pairwise {
  int64_t depth = 0, chunks = 1;
  int64_t n;
  explicit Pairwise(int64_t n_) : n(n_) {
    // An upper bound of the largest node at each depth: a child of s has at most s/2 + 8.
    for (int64_t m = n; m > kPairwiseChunk; m = m / 2 + 8) ++depth;
    chunks = int64_t(1) << depth;
  }
  // The first element and the length of chunk k.
  void chunk(int64_t k, int64_t& off, int64_t& len) const {
    off = 0;
    len = n;
    for (int64_t b = depth - 1; b >= 0; --b) {
      const bool right = (k >> b) & 1;
      if (len <= 128) {
        if (right) len = 0;
        if (right) return;
        continue;
      }
      int64_t n2 = len / 2;
      n2 -= n2 % 8;
      if (right) off += n2, len -= n2;
      else len = n2;
    }
  }
};
// The sums of the chunks added as the tree adds them (left + right), chunk by chunk: after
// chunk k every node whose last chunk it is adds its halves (a binary counter).
template <class T> struct PairwiseStack {
  T s[64];
  void push(int64_t k, T v) {
    int l = 0;
    while ((k >> l) & 1) v = s[l] + v, ++l;
    s[l] = v;
  }
};
}  // namespace npk
