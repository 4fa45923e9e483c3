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
// (the vmath column of ops.def: 'f' and 'd' without a '*').
// Fused kernels call the vector routines exactly where these loops do, through the same
// block function (Note [vector math in kernels] in src/fusion/kir_vector_math.cpp), so
// compiled results equal eager ones. float32 arctanh runs the float64 routine
// instead (Note [float32 through float64]). NPC_VECTOR_MATH=all takes every function the
// column lists, starred or not (within the 8 ULP of ulp_tolerances.csv; 2-10x faster), NPC_VECTOR_MATH=0 none.
#include "ops/math_simd.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "ops/loops.hpp"
#include "ops/op_rows.hpp"
#include "ops/rules.hpp"  // the scalar rules, which the block's scalar redo calls

#if defined(__x86_64__) && defined(__GNUC__) && defined(NPC_HAVE_LIBMVEC)
#define NPC_VMATH 1
#else
#define NPC_VMATH 0
#endif

namespace npc::ops::simd {

#if NPC_VMATH
// The tile routines, the scalar functions and the block function (vector_block) that fused
// kernels call too: one text for both (src/ops/vector_math_block.hpp).
#include "ops/vector_math_block.hpp"

// Whether row `op`'s vmath column lists loop `t` ('f', 'd'), and whether without a '*' (taken
// by default).
constexpr bool vmath_lists(OpId op, char t) { return op_row(op).vmath.find(t) != std::string_view::npos; }
constexpr bool vmath_default(OpId op, char t) {
  const std::string_view v = op_row(op).vmath;
  const size_t k = v.find(t);
  return k != std::string_view::npos && (k + 1 == v.size() || v[k + 1] != '*');
}

// Completeness: every row with a vmath column has a libmvec function in NPC_VMATH_FUNCS, for
// both loops, and nothing else does.
#define NPC_COUNT(op, c) +1
constexpr int kVmathFuncs = 0 NPC_VMATH_FUNCS(NPC_COUNT);
#undef NPC_COUNT
// (float32 exp lists 'd' only: its rule vectorizes by itself, Note [float32 exp] in scalar_rules.hpp.)
#define NPC_CHECK(op, c) \
  static_assert((vmath_lists(OpId::op, 'f') || OpId::op == OpId::exp) && vmath_lists(OpId::op, 'd'), \
                "ops.def: " #op " needs a vmath column");
NPC_VMATH_FUNCS(NPC_CHECK)
#undef NPC_CHECK
constexpr int vmath_rows() {
  int n = 0;
  for (const OpInfo& r : kOpRows) n += !r.vmath.empty();
  return n;
}
static_assert(vmath_rows() == kVmathFuncs, "a row of ops.def with a vmath column has no libmvec function here");

namespace {

// The unary loop (LoopFn): blocks of the input, gathered into a buffer unless both operands
// are contiguous, each computed by Block (vector_block: the vector routine's flags are
// discarded, the scalar redo raises its own).
template <class T, void (*Block)(const T*, T*, int64_t)>
void vector_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  alignas(64) T buf[kVmTile];
  const bool contig = s[0] == int64_t(sizeof(T)) && s[1] == int64_t(sizeof(T));
  for (int64_t b = 0; b < n; b += kVmTile) {
    const int64_t m = std::min(kVmTile, n - b);
    if (contig) {
      Block(reinterpret_cast<const T*>(p[0]) + b, reinterpret_cast<T*>(p[1]) + b, m);
      continue;
    }
    for (int64_t k = 0; k < m; ++k) buf[k] = load<T>(p[0] + (b + k) * s[0]);
    Block(buf, buf, m);
    for (int64_t k = 0; k < m; ++k) store<T>(p[1] + (b + k) * s[1], buf[k]);
  }
}

struct Policy {
  VectorMath f64[kNumOps], f32[kNumOps];
};

// Note [vector math policy]: NPC_VECTOR_MATH=0 (or off) = scalar loops only, all = every
// function of NPC_VMATH_FUNCS, anything else or unset = the default set (ops.def's vmath column).
Policy make_policy() {
  Policy p;
  const char* e = std::getenv("NPC_VECTOR_MATH");
  const std::string mode = e ? e : "";
  if (mode == "0" || mode == "off") return p;
  const bool all = mode == "all";
  int bits = 0;
  if (__builtin_cpu_supports("avx512f")) bits = 512;
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) bits = 256;
  if (!bits) return p;
#define NPC_POLICY(op, c)                                                                          \
  if (all || vmath_default(OpId::op, 'd')) p.f64[static_cast<int>(OpId::op)] = VectorMath{bits, false, #c}; \
  if (all ? vmath_lists(OpId::op, 'f') : vmath_default(OpId::op, 'f')) p.f32[static_cast<int>(OpId::op)] = VectorMath{bits, false, #c};
  NPC_VMATH_FUNCS(NPC_POLICY)
#undef NPC_POLICY
  if (!all) p.f32[static_cast<int>(OpId::arctanh)] = VectorMath{bits, true, "atanh"};
  return p;
}

const Policy& policy() {
  static const Policy p = make_policy();
  return p;
}

}  // namespace

VectorMath vector_math(OpId op, DType t) {
  const int i = static_cast<int>(op);
  if (i < 0 || i >= kNumOps) return {};
  if (t == DType::Float64) return policy().f64[i];
  if (t == DType::Float32) return policy().f32[i];
  return {};
}

const char* vector_math_name(OpId op) {
#define NPC_NAME(o, c) \
  if (op == OpId::o) return #c;
  NPC_VMATH_FUNCS(NPC_NAME)
#undef NPC_NAME
  return "";
}

void register_vector_math(Registrar& r) {
#define NPC_REG(op, c)                                                                  \
  {                                                                                               \
    const VectorMath d = vector_math(OpId::op, DType::Float64), f = vector_math(OpId::op, DType::Float32); \
    if (d.bits == 512) r.set(OpId::op, DType::Float64, &vector_loop<double, &c##_e<double>>);             \
    if (d.bits == 256) r.set(OpId::op, DType::Float64, &vector_loop<double, &c##_d<double>>);             \
    if (f.bits == 512 && !f.via_float64) r.set(OpId::op, DType::Float32, &vector_loop<float, &c##_e<float>>); \
    if (f.bits == 256 && !f.via_float64) r.set(OpId::op, DType::Float32, &vector_loop<float, &c##_d<float>>); \
  }
  NPC_VMATH_FUNCS(NPC_REG)
#undef NPC_REG
  const VectorMath a = vector_math(OpId::arctanh, DType::Float32);
  if (a.via_float64 && a.bits == 512) r.set(OpId::arctanh, DType::Float32, &vector_loop<float, &atanh_via64_e<float>>);
  if (a.via_float64 && a.bits == 256) r.set(OpId::arctanh, DType::Float32, &vector_loop<float, &atanh_via64_d<float>>);
}

#else
VectorMath vector_math(OpId, DType) { return {}; }
const char* vector_math_name(OpId) { return ""; }
void register_vector_math(Registrar&) {}
#endif

}  // namespace npc::ops::simd
