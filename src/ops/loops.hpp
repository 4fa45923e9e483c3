#pragma once
// Internal: typed inner loops of the ufuncs and the registry that maps (op, loop) to them.
//
// Every ufunc is one functor (a struct with a templated call operator, constrained to the
// element types it supports). The templates below turn a functor into 1-D strided inner
// loops; the kernel .cpp files (one per op group) instantiate them for exactly the loops of
// the op's row in ops.def (STYLE 10: no per-dtype copies of the code, no homemade templating).
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <optional>

#include "ops/complex_simd.hpp"
#include <vector>

#include "core/dispatch.hpp"
#include "npc/ops.hpp"

namespace npc {
/// The Comparison rows of ops.def (equal, not_equal, less, ...).
bool is_comparison_op(OpId op);
/// The binary Logical rows of ops.def (logical_and, ...): mixed inputs run the bool loop, cast
/// without a casting check (Note [logical promotion]).
bool is_logical_binary(OpId op);
/// NumPy's spelling of a casting rule ("same_kind").
std::string casting_rule_name(Casting c);
/// Broadcast shape of ufunc operands; ValueError with NumPy's ufunc text when they do not broadcast.
Shape broadcast_operand_shapes(std::span<const Shape> shapes);
/// A shape as NumPy's iterator prints it in its errors: "(2,3)", "(5,)", "()".
std::string iter_shape_str(std::span<const int64_t> shape);
/// The hooks the tracer installed (null when none).
UfuncTraceHook ufunc_trace_hook();
ReduceTraceHook reduce_trace_hook();
ArgReduceTraceHook arg_reduce_trace_hook();
AccumulateTraceHook accumulate_trace_hook();
SortTraceHook sort_trace_hook();
WhereTraceHook where_trace_hook();

/// Whether NumPy resolves the ufunc's loops with its uniform type resolver (one dtype for
/// every operand: the Uniform rows of ops.def, add, subtract, ...): with
/// dtype= the loop of that dtype alone, else NumPy's no-loop error (gcd with dtype=float64).
bool has_uniform_type_resolver(OpId op);

/// Raised for a ufunc cast that `casting=` forbids; the Python layer raises NumPy's
/// _UFuncInputCastingError / _UFuncOutputCastingError from it.
struct UfuncCastingError : CastingError {
  UfuncCastingError(OpId op, bool output, int index, DType from, DType to, Casting casting);
  OpId op;
  bool output;
  int index;
  DType from, to;
  Casting casting;
};

/// Raised when no loop of a ufunc fits the input dtypes; the Python layer raises NumPy's
/// _UFuncNoLoopError ("ufunc 'x' did not contain a loop with signature matching types ...").
struct UfuncNoLoopError : TypeError {
  UfuncNoLoopError(OpId op, std::vector<DType> in, std::vector<bool> weak = {});
  /// The error with every operand's DType given, inputs then outputs; nullopt is NumPy's
  /// None (a reduction's unset first operand or output: "(None, BoolDType) -> None").
  UfuncNoLoopError(std::vector<std::optional<DType>> all, OpId op);
  OpId op;
  std::vector<DType> in;
  std::vector<bool> weak;  ///< per input: a Python scalar (NumPy names its _PyLongDType, ...)
  std::vector<std::optional<DType>> all;  ///< when set: every operand (inputs, outputs), None as nullopt
};

namespace ops {
/// One input of the fast path: an array, or a weak Python scalar's value.
struct FastInput {
  const ndarray* array = nullptr;  ///< null for a scalar
  Scalar scalar;                   ///< value when a scalar (weak: int64/uint64/float64/complex128 carrier)
  bool strong = false;             ///< a scalar that is a 0-d array of scalar.dtype (a NumPy scalar), not weak
};
/// The common case of ufunc.__call__ without copies: one output, no out=/where=/dtype=,
/// inputs C-contiguous arrays of one shape (or 1-D arrays of any stride) already in the
/// loop's dtype, weak scalars that fit it, or strong scalars (0-d operands, cast safely to the
/// loop's dtype); with no array operand the result is 0-d. Returns nullopt when the general path (call_ufunc) must run. The raised
/// floating-point flags go to `*fpe_flags` when given, else to the pending set (note_fpe).
/// With `scalar_out` (16 bytes, aligned), a call whose inputs are all scalars writes its one
/// element there and its dtype to `*scalar_dtype` instead of allocating a 0-d array, and
/// returns nullopt with `*scalar_dtype` set (left untouched when the general path must run).
/// `reuse`, when given, is one of the array inputs that nothing else will read again (Note
/// [temporary elision] in python/npc/csrc/bind_ops.cpp): the result is written into its
/// memory when its dtype, shape and layout are the result's, instead of a new array.
std::optional<ndarray> call_ufunc_fast(OpId op, const FastInput* inputs, int nin, int* fpe_flags = nullptr,
                                       std::byte* scalar_out = nullptr, DType* scalar_dtype = nullptr,
                                       const ndarray* reuse = nullptr);
/// Note [weak integers]: nullopt when weak integer operand `i` of `op` fits the loop dtype
/// `t` (or is not an integer); the answer of a comparison with an out-of-range Python int
/// (NumPy 2 answers exactly); otherwise throws NumPy's OverflowError.
std::optional<bool> weak_int_outcome(OpId op, std::span<const Operand> inputs, int i, DType t);
/// The axis order, outermost first, of a new ufunc output of `shape` with `order` over these
/// operands (inputs, given outputs): NumPy's iterator order (Note [output layout] in
/// src/ops/ufunc.cpp); the output is C-contiguous over the axes in this order.
std::vector<int> output_axes(std::span<const int64_t> shape, Order order, std::span<const ndarray> operands);
/// The axis order, outermost first, of the new result of a reduction of `a` over the axes
/// `red` marks (with its where= mask, if any), among the result's axes (all of a's with
/// `keepdims`, else the kept ones): NumPy's iterator order over the input (Note [reduction
/// layout] in src/ops/reduce_plan.cpp). Scans take it with no axis reduced and keepdims.
std::vector<int> reduce_output_axes(const ndarray& a, const std::vector<bool>& red, bool keepdims,
                                    const ndarray* where = nullptr);
/// `res` (C-contiguous) in the layout of `axes` (outermost first): itself, with the strides
/// of its length-1 axes changed where only those differ, else a copy.
ndarray in_axis_order(const ndarray& res, const std::vector<int>& axes);
/// A new array of `shape` and `t`, C-contiguous over its axes in the order `axes`.
ndarray empty_in_axis_order(const Shape& shape, DType t, const std::vector<int>& axes);
/// Asks the kernel for transparent huge pages on a large new output (NumPy does the same),
/// which halves the page-fault cost of first touch.
void advise_huge(const ndarray& a);
}  // namespace ops
}  // namespace npc

namespace npc::ops {

/// Inner loop: `p[k]` points at operand k's first element (inputs first, then outputs),
/// `s[k]` is its byte stride, `n` the element count.
using LoopFn = void (*)(std::byte* const* p, const int64_t* s, int64_t n);

/// One loop of a ufunc: its dtypes (as in ops.def) and its inner loop (null when npc has no
/// native kernel for it).
struct Loop {
  std::vector<DType> in, out;
  LoopFn fn = nullptr;
};

/// The loops of `op` in ops.def's order, with their registered kernels.
const std::vector<Loop>& loops_of(OpId op);
/// NumPy's scalar (non-SIMD) loop (`scalar`) or SIMD loop of `op` for the one-dtype loop of
/// `t` where NumPy has two loops with different results (complex absolute, multiply and
/// square: Note [complex product] in kernels_arith.cpp), else null. UfuncOptions::scalar_loop
/// runs it.
LoopFn loop_variant(OpId op, DType t, bool scalar);
/// NumPy's scalar integer arithmetic for `op` in the integer dtype `t` (add, subtract,
/// multiply, negative, absolute: the wrapped values with "overflow" raised where the exact
/// result does not fit, Note [integer scalar overflow] in include/npc/scalar_rules.hpp),
/// else null. UfuncOptions::scalar_math runs it.
LoopFn scalar_math_loop(OpId op, DType t);
/// Whether NumPy picks between two loops of ufunc `op` in dtype `t` (its SIMD and its scalar
/// loop, whose results can differ) by its operands' strides: runs_scalar_loop answers then.
bool picks_loop_by_strides(OpId op, DType t);
/// Whether NumPy runs its scalar loop for ufunc `op` in dtype `t` over `shape` with these
/// operands (inputs of dtype `t`, then the given output, with their strides; `fresh_output`:
/// a new C-ordered output comes last) from the strides of the innermost axis, as the eager
/// kernels pick by stride sign (Note [scalar loops] in src/tracer/trace.hpp).
/// Unset where NumPy has one loop.
/// `buffered`, when given, is set when the operands do not walk as one run, where NumPy
/// buffers those no single stride walks (Note [buffered operands] in kernels_arith.cpp).
std::optional<bool> runs_scalar_loop(OpId op, DType t, std::span<const ndarray> operands,
                                     std::span<const int64_t> shape, bool fresh_output, bool* buffered = nullptr);
/// Whether the op checks the floating-point status after its loop: the fpe_check column of
/// ops.def (NoFpe for comparisons, selections and predicates, whose C comparisons may raise
/// spurious "invalid" on NaN).
bool checks_fpe(OpId op);

/// Parses one ops.def dtype character ('?', 'b', 'B', ... 'D').
DType dtype_from_char(char c);
char char_from_dtype(DType t);

// ---------------------------------------------------------------- arithmetic helpers
template <class T> inline constexpr bool is_cplx = detail::is_complex_v<T>;
template <class T> inline constexpr bool is_real_float = std::is_floating_point_v<T>;
template <class T> inline constexpr bool is_int = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> inline constexpr bool is_num = std::is_arithmetic_v<T> || is_cplx<T>;

/// The type a loop computes in: float16 is computed in float (as NumPy's half loops).
template <class T> struct compute { using type = T; };
template <> struct compute<float16> { using type = float; };
template <class T> using compute_t = typename compute<T>::type;

// Note [complex loads and stores]
// A complex value is loaded and stored as its two parts: the parts of a computed result sit
// in two registers, and one 16-byte copy of the whole object makes the compiler write both
// to the stack and read them back as one vector, a store-forwarding stall on every element
// (a strided complex128 add ran at a tenth of NumPy's speed).
template <class T>
inline T load(const std::byte* p) {
  if constexpr (detail::is_complex_v<T>) {
    typename T::value_type re, im;
    std::memcpy(&re, p, sizeof re);
    std::memcpy(&im, p + sizeof re, sizeof im);
    return T(re, im);
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
}
template <class T>
inline void store(std::byte* p, T v) {
  if constexpr (detail::is_complex_v<T>) {
    const typename T::value_type re = v.real(), im = v.imag();
    std::memcpy(p, &re, sizeof re);
    std::memcpy(p + sizeof re, &im, sizeof im);
  } else {
    std::memcpy(p, &v, sizeof(T));
  }
}

/// Sets the hardware floating-point flags (integer loops report like NumPy's float status).
void raise_overflow();
void raise_divbyzero();
void raise_invalid();

/// Converts a computed value to the storage type (float -> float16, identity otherwise).
template <class S, class R>
inline S to_storage(R r) {
  if constexpr (std::is_same_v<S, R>) {
    return r;
  } else if constexpr (std::is_same_v<S, float16> && std::is_same_v<R, float>) {
    // NumPy's float -> half conversion raises "overflow" for finite values that round to inf.
    float16 h = float_to_half(r);
    if ((h.bits & 0x7fffu) == 0x7c00u && std::isfinite(r)) raise_overflow();
    return h;
  } else {
    return detail::convert<S>(r);
  }
}
/// Storage type of a computed result when the loop's element type is T: float results of a
/// float16 loop are stored as float16.
template <class T, class R>
using storage_t = std::conditional_t<std::is_same_v<T, float16> && std::is_same_v<R, float>, float16, R>;

// ---------------------------------------------------------------- loop templates
// Note [inner loops]
// Each template has a contiguous fast path (and, for binary ops, one with a scalar
// operand: stride 0) written as plain indexed loops so the compiler vectorises them, and
// a generic strided path. Values are read through memcpy-free pointers only on the fast
// path, where alignment is guaranteed (npc's allocator aligns to 64 bytes and NumPy's
// aligned arrays are adopted only when aligned).

// Note [multiversioned loops]
// Three kinds of inner loops compile badly for baseline x86-64 (SSE2, no FMA): comparisons
// of float32/float64 operands, which narrow 4- or 8-byte lanes into 1-byte booleans (GCC
// does not vectorise them: 5x slower than NumPy's AVX2/AVX-512 loops), and complex loops,
// whose NumPy formulas use fused multiply-adds (Note [complex product]: without the FMA
// instruction each std::fma is a library call), and float32 rules written as vector code
// (float32 exp: 4 lanes in SSE2 where NumPy runs 16). Their contiguous and scalar-operand cases
// are also compiled for AVX2+FMA and for AVX-512, and the best version the CPU has runs
// (cpu_level, read once). Comparisons are exact, a fused multiply-add is correctly rounded
// in hardware and software alike, and floating-point contraction stays off, so every
// version gives the same bits.
#if defined(__x86_64__) && defined(__GNUC__)
#define NPC_MULTIVERSION 1
#define NPC_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define NPC_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")))
/// 2: AVX-512 (F, BW, VL, DQ) and FMA; 1: AVX2 and FMA; 0: neither.
int cpu_level();
#else
#define NPC_MULTIVERSION 0
#endif

/// The contiguous cases of binary_loop. mode 0: two arrays; 1: `b` is one value; 2: `a` is one value.
#define NPC_CONTIG_BINARY_BODY                                                                                    \
  using CA = compute_t<A>;                                                                                        \
  using CB = compute_t<B>;                                                                                        \
  if (mode == 0) {                                                                                                \
    for (int64_t i = 0; i < n; ++i) o[i] = to_storage<S>(F{}(detail::convert<CA>(a[i]), detail::convert<CB>(b[i]))); \
  } else if (mode == 1) {                                                                                         \
    const CB y = detail::convert<CB>(*b);                                                                         \
    for (int64_t i = 0; i < n; ++i) o[i] = to_storage<S>(F{}(detail::convert<CA>(a[i]), y));                      \
  } else {                                                                                                        \
    const CA x = detail::convert<CA>(*a);                                                                         \
    for (int64_t i = 0; i < n; ++i) o[i] = to_storage<S>(F{}(x, detail::convert<CB>(b[i])));                      \
  }
#define NPC_CONTIG_UNARY_BODY \
  using C = compute_t<T>;     \
  for (int64_t i = 0; i < n; ++i) o[i] = to_storage<S>(F{}(detail::convert<C>(a[i])));

/// Whether [x, x + nx) and [y, y + ny) (bytes) share memory without starting at the same
/// address: a loop that reads one and writes the other must then run element by element,
/// in order (an accumulation), never vectorised.
inline bool partially_overlaps(const std::byte* x, int64_t nx, const std::byte* y, int64_t ny) {
  return x != y && x < y + ny && y < x + nx;
}

template <class F, class A, class B, class S>
void contig_binary_base(const A* a, const B* b, S* o, int64_t n, int mode) { NPC_CONTIG_BINARY_BODY }
template <class F, class T, class S>
void contig_unary_base(const T* a, S* o, int64_t n) { NPC_CONTIG_UNARY_BODY }
#if NPC_MULTIVERSION
template <class F, class A, class B, class S>
NPC_TARGET_AVX2 void contig_binary_avx2(const A* a, const B* b, S* o, int64_t n, int mode) { NPC_CONTIG_BINARY_BODY }
template <class F, class A, class B, class S>
NPC_TARGET_AVX512 void contig_binary_avx512(const A* a, const B* b, S* o, int64_t n, int mode) { NPC_CONTIG_BINARY_BODY }
template <class F, class T, class S>
NPC_TARGET_AVX2 void contig_unary_avx2(const T* a, S* o, int64_t n) { NPC_CONTIG_UNARY_BODY }
template <class F, class T, class S>
NPC_TARGET_AVX512 void contig_unary_avx512(const T* a, S* o, int64_t n) { NPC_CONTIG_UNARY_BODY }
#endif

template <class F>
constexpr bool complex_product_rule() {
  if constexpr (requires { F::kComplexProduct; }) return F::kComplexProduct;
  else return false;
}

template <class F, class A, class B, class S>
void contig_binary(const A* a, const B* b, S* o, int64_t n, int mode) {
#if NPC_MULTIVERSION
  static const int level = cpu_level();
  if constexpr (complex_product_rule<F>() && std::is_same_v<A, B> && std::is_same_v<S, A> &&
                (std::is_same_v<A, std::complex<double>> || std::is_same_v<A, std::complex<float>>)) {
    if constexpr (std::is_same_v<A, std::complex<double>>)
      if (level == 2) return complex_simd::complex_product_avx512(a, b, o, n, mode);
    if (level >= 1) return complex_simd::complex_product_avx2(a, b, o, n, mode);  // Note [complex product loops]
  }
  if (level == 2) return contig_binary_avx512<F, A, B, S>(a, b, o, n, mode);
  if (level == 1) return contig_binary_avx2<F, A, B, S>(a, b, o, n, mode);
#endif
  contig_binary_base<F, A, B, S>(a, b, o, n, mode);
}
template <class F, class T, class S>
void contig_unary(const T* a, S* o, int64_t n) {
#if NPC_MULTIVERSION
  static const int level = cpu_level();
  if (level == 2) return contig_unary_avx512<F, T, S>(a, o, n);
  if (level == 1) return contig_unary_avx2<F, T, S>(a, o, n);
#endif
  contig_unary_base<F, T, S>(a, o, n);
}
#undef NPC_CONTIG_BINARY_BODY
#undef NPC_CONTIG_UNARY_BODY

// Note [wide arithmetic]
// float32/float64 add, subtract, multiply, divide, maximum and minimum of two operands (or an
// operand and a scalar), and square, negative, absolute and sqrt, and the same rows and the
// comparisons of integers (wrapping, exact: int64 minimum is one AVX-512 instruction and a
// compare-and-move per element in SSE2), are memory-bound on arrays that live in the L2 cache (a 1-D stencil of 30,000
// elements, a 150x150 grid), where NumPy's AVX2/AVX-512 loops move 2-4 times as many bytes
// per instruction as the SSE2 loop of a baseline x86-64 build: `a[:-2] + a[2:]` on 30,000
// float64 took 1.5x NumPy's time. Their contiguous cases are multiversioned as well. Each
// element is one correctly rounded IEEE operation or an exact one (sign, comparison), with
// no contraction and no library call, so every version gives the same bits, the same
// floating-point flags included.
template <class F>
constexpr bool wide_arith_rule() {
  if constexpr (requires { F::kWideArith; }) return F::kWideArith;
  else return false;
}

/// Whether binary_loop<F, A, B> takes the multiversioned contiguous loops (Note [multiversioned loops]).
template <class T>
inline constexpr bool kWideElement = std::is_same_v<T, double> || std::is_same_v<T, float> ||
                                     (std::is_integral_v<T> && !std::is_same_v<T, bool>);
template <class F, class A, class B, class S>
inline constexpr bool kMultiversionBinary =
    std::is_same_v<A, B> &&
    ((kWideElement<A> && (std::is_same_v<S, bool> || (std::is_same_v<S, A> && wide_arith_rule<F>()))) ||
     std::is_same_v<A, std::complex<double>> || std::is_same_v<A, std::complex<float>>);

/// Whether unary_loop<F, T> takes the multiversioned contiguous loops: complex loops, the
/// float32/float64 loops of wide arithmetic (Note [wide arithmetic]), and the
/// float32 loops of a rule written as vector code (F::kVectorRule: float32 exp, Note [float32
/// exp] in include/npc/scalar_rules.hpp), which the AVX2 and AVX-512 versions run 2-4x wider
/// with the same bits (no contraction, no library call).
template <class F, class T>
constexpr bool multiversion_unary() {
  if constexpr (is_cplx<T>) return true;
  else if constexpr (requires { F::kVectorRule; })
    return (F::kVectorRule && std::is_same_v<T, float>) || (wide_arith_rule<F>() && kWideElement<T>);
  else return false;
}

template <class F, class T>
void unary_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  using C = compute_t<T>;
  using R = decltype(F{}(C{}));
  using S = storage_t<T, R>;
  if (s[0] == sizeof(T) && s[1] == sizeof(S)) {
    const T* a = reinterpret_cast<const T*>(p[0]);
    S* o = reinterpret_cast<S*>(p[1]);
    if constexpr (multiversion_unary<F, T>()) {
      if (!partially_overlaps(p[0], n * static_cast<int64_t>(sizeof(T)), p[1], n * static_cast<int64_t>(sizeof(S))))
        contig_unary<F, T, S>(a, o, n);  // multiversioned (see above)
      else
        for (int64_t i = 0; i < n; ++i) o[i] = to_storage<S>(F{}(detail::convert<C>(a[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = to_storage<S>(F{}(detail::convert<C>(a[i])));
    }
    return;
  }
  // Strides and pointers in locals: the stores could alias the arrays they are read from,
  // which would make the compiler reload them on every element.
  const int64_t sa = s[0], so = s[1];
  const std::byte* pa = p[0];
  std::byte* po = p[1];
  for (int64_t i = 0; i < n; ++i, pa += sa, po += so) store<S>(po, to_storage<S>(F{}(detail::convert<C>(load<T>(pa)))));
}

// Note [strided complex products]
// The element rule of the complex product is 4-10x slower than its vector loop (Note
// [complex product loops]), and strided complex operands are common: a column or every
// other element of a complex matrix (`tw * X[:, half:]` in a radix-2 FFT stage multiplied
// 8,192 (1,)-rows at a fifth of NumPy's speed). Blocks of such operands are gathered into
// contiguous tiles, multiplied by the vector loop and scattered to the output: the same
// instructions per element, so the same values and flags. Only when the output cannot be
// read by a later element of the loop (its memory is disjoint from each input's, or it is
// that input itself, element for element); otherwise the element loop runs in order.
// complex128 operands are loaded and stored two elements per vector directly, as NumPy's
// strided loop does (a tile copy cost three times the product).
template <class T>
bool strided_disjoint_or_same(const std::byte* in, int64_t si, const std::byte* out, int64_t so, int64_t n) {
  if (si == 0) return true;  // a scalar operand is read once, before anything is written
  if (in == out && si == so) return true;
  auto extent = [n](const std::byte* q, int64_t st, const std::byte*& lo, const std::byte*& hi) {
    lo = st < 0 ? q + (n - 1) * st : q;
    hi = (st < 0 ? q : q + (n - 1) * st) + sizeof(T);
  };
  const std::byte *ilo, *ihi, *olo, *ohi;
  extent(in, si, ilo, ihi);
  extent(out, so, olo, ohi);
  return ihi <= olo || ohi <= ilo;
}

template <class F, class T>
bool strided_complex_product(std::byte* const* p, const int64_t* s, int64_t n) {
  constexpr int64_t sz = sizeof(T), kTile = 256;
  if (n < 4 || ((s[0] == sz || s[0] == 0) && (s[1] == sz || s[1] == 0) && s[2] == sz)) return false;
  if (s[0] == 0 && s[1] == 0) return false;
  if (!strided_disjoint_or_same<T>(p[0], s[0], p[2], s[2], n) || !strided_disjoint_or_same<T>(p[1], s[1], p[2], s[2], n))
    return false;
#if NPC_MULTIVERSION
  if constexpr (std::is_same_v<T, std::complex<double>>) {
    static const int level = cpu_level();
    if (level >= 1) {
      complex_simd::complex_product_strided_avx2(p[0], s[0], p[1], s[1], p[2], s[2], n);
      return true;
    }
  }
#endif
  alignas(64) T ta[kTile], tb[kTile], to[kTile];
  const int mode = s[0] == 0 ? 2 : s[1] == 0 ? 1 : 0;
  if (s[0] == 0) std::memcpy(&ta[0], p[0], sz);
  if (s[1] == 0) std::memcpy(&tb[0], p[1], sz);
  for (int64_t b = 0; b < n; b += kTile) {
    const int64_t m = std::min(kTile, n - b);
    if (s[0] != 0)
      for (int64_t k = 0; k < m; ++k) std::memcpy(&ta[k], p[0] + (b + k) * s[0], sz);
    if (s[1] != 0)
      for (int64_t k = 0; k < m; ++k) std::memcpy(&tb[k], p[1] + (b + k) * s[1], sz);
    contig_binary<F, T, T, T>(ta, tb, to, m, mode);
    for (int64_t k = 0; k < m; ++k) std::memcpy(p[2] + (b + k) * s[2], &to[k], sz);
  }
  return true;
}

template <class F, class A, class B>
void binary_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  using CA = compute_t<A>;
  using CB = compute_t<B>;
  using R = decltype(F{}(CA{}, CB{}));
  using S = storage_t<A, R>;
  constexpr int64_t sa = sizeof(A), sb = sizeof(B), so = sizeof(S);
  if constexpr (kMultiversionBinary<F, A, B, S>) {
    if (s[2] == so && (s[0] == sa || s[0] == 0) && (s[1] == sb || s[1] == 0) && (s[0] != 0 || s[1] != 0) &&
        !partially_overlaps(p[0], s[0] ? n * sa : sa, p[2], n * so) &&
        !partially_overlaps(p[1], s[1] ? n * sb : sb, p[2], n * so)) {
      contig_binary<F, A, B, S>(reinterpret_cast<const A*>(p[0]), reinterpret_cast<const B*>(p[1]),
                                reinterpret_cast<S*>(p[2]), n, s[0] == 0 ? 2 : s[1] == 0 ? 1 : 0);
      return;
    }
  }
  if constexpr (complex_product_rule<F>() && kMultiversionBinary<F, A, B, S> && is_cplx<A> && std::is_same_v<S, A>) {
    if (strided_complex_product<F, A>(p, s, n)) return;
  }
  if (s[2] == so) {
    S* o = reinterpret_cast<S*>(p[2]);
    if (s[0] == sa && s[1] == sb) {
      const A* a = reinterpret_cast<const A*>(p[0]);
      const B* b = reinterpret_cast<const B*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = to_storage<S>(F{}(detail::convert<CA>(a[i]), detail::convert<CB>(b[i])));
      return;
    }
    if (s[0] == sa && s[1] == 0) {
      const A* a = reinterpret_cast<const A*>(p[0]);
      const CB b = detail::convert<CB>(load<B>(p[1]));
      for (int64_t i = 0; i < n; ++i) o[i] = to_storage<S>(F{}(detail::convert<CA>(a[i]), b));
      return;
    }
    if (s[0] == 0 && s[1] == sb) {
      const CA a = detail::convert<CA>(load<A>(p[0]));
      const B* b = reinterpret_cast<const B*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = to_storage<S>(F{}(a, detail::convert<CB>(b[i])));
      return;
    }
  }
  const int64_t s0 = s[0], s1 = s[1], s2 = s[2];  // locals, as in unary_loop
  const std::byte* pa = p[0];
  const std::byte* pb = p[1];
  std::byte* po = p[2];
  for (int64_t i = 0; i < n; ++i, pa += s0, pb += s1, po += s2)
    store<S>(po, to_storage<S>(F{}(detail::convert<CA>(load<A>(pa)), detail::convert<CB>(load<B>(pb)))));
}

/// Unary op with two outputs (frexp, modf): F returns a std::pair.
template <class F, class T>
void unary2_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  using C = compute_t<T>;
  using R = decltype(F{}(C{}));
  using S1 = storage_t<T, typename R::first_type>;
  using S2 = storage_t<T, typename R::second_type>;
  for (int64_t i = 0; i < n; ++i) {
    R r = F{}(detail::convert<C>(load<T>(p[0] + i * s[0])));
    store<S1>(p[1] + i * s[1], to_storage<S1>(r.first));
    store<S2>(p[2] + i * s[2], to_storage<S2>(r.second));
  }
}

/// Binary op with two outputs (divmod).
template <class F, class T>
void binary2_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  using C = compute_t<T>;
  using R = decltype(F{}(C{}, C{}));
  using S1 = storage_t<T, typename R::first_type>;
  using S2 = storage_t<T, typename R::second_type>;
  for (int64_t i = 0; i < n; ++i) {
    R r = F{}(detail::convert<C>(load<T>(p[0] + i * s[0])), detail::convert<C>(load<T>(p[1] + i * s[1])));
    store<S1>(p[2] + i * s[2], to_storage<S1>(r.first));
    store<S2>(p[3] + i * s[3], to_storage<S2>(r.second));
  }
}

// ---------------------------------------------------------------- registration
/// Collects kernels while the registry is built (see registry.cpp).
struct Registrar {
  std::vector<std::vector<Loop>>* table;

  /// Sets the kernel of the loop of `op` whose first input is `in0` directly.
  void set(OpId op, DType in0, LoopFn fn) {
    for (Loop& l : (*table)[static_cast<int>(op)])
      if (l.in[0] == in0) l.fn = fn;
  }

  /// Registers functor F for the loops of `op` (a ufunc of `nin` inputs) whose element types
  /// it accepts (Note [rule kernels] in rules.hpp).
  template <class F, int nin>
  void rule(OpId op) {
    if constexpr (nin == 1) unary<F>(op);
    else binary<F>(op);
  }

  /// Registers unary functor F for every loop of `op` whose element type F accepts,
  /// replacing the kernels registered before for those loops; the other loops keep theirs.
  template <class F>
  void unary(OpId op) {
    for (Loop& l : (*table)[static_cast<int>(op)]) {
      keep_or_set(l, detail::visit(l.in[0], [&](auto tag) -> LoopFn {
        using T = typename decltype(tag)::type;
        if constexpr (requires { F{}(compute_t<T>{}); }) {
          using R = decltype(F{}(compute_t<T>{}));
          if constexpr (is_pair<R>::value) {
            check_out<T, typename R::first_type>(op, l, 0);
            check_out<T, typename R::second_type>(op, l, 1);
            return &unary2_loop<F, T>;
          } else {
            check_out<T, R>(op, l, 0);
            return &unary_loop<F, T>;
          }
        } else {
          return nullptr;
        }
      }));
    }
  }

  /// Registers binary functor F (replacing earlier kernels of the loops it accepts, as
  /// unary); loops with two different input types (ldexp's "fi->f", comparisons' "qQ->?")
  /// only when F declares `static constexpr bool kMixed = true`.
  template <class F>
  void binary(OpId op) {
    for (Loop& l : (*table)[static_cast<int>(op)]) {
      if constexpr (mixed<F>::value) {
        keep_or_set(l, detail::visit(l.in[0], [&](auto ta) -> LoopFn {
          using A = typename decltype(ta)::type;
          return detail::visit(l.in[1], [&](auto tb) -> LoopFn {
            using B = typename decltype(tb)::type;
            return binary_for<F, A, B>(op, l);
          });
        }));
      } else {
        if (l.in[0] != l.in[1]) continue;
        keep_or_set(l, detail::visit(l.in[0], [&](auto ta) -> LoopFn {
          using A = typename decltype(ta)::type;
          return binary_for<F, A, A>(op, l);
        }));
      }
    }
  }

 private:
  static void keep_or_set(Loop& l, LoopFn fn) {
    if (fn) l.fn = fn;
  }

  template <class F, class A, class B>
  LoopFn binary_for(OpId op, const Loop& l) {
    if constexpr (requires { F{}(compute_t<A>{}, compute_t<B>{}); }) {
      using R = decltype(F{}(compute_t<A>{}, compute_t<B>{}));
      if constexpr (is_pair<R>::value) {
        check_out<A, typename R::first_type>(op, l, 0);
        check_out<A, typename R::second_type>(op, l, 1);
        if constexpr (std::is_same_v<A, B>) return &binary2_loop<F, A>;
        else return nullptr;
      } else {
        check_out<A, R>(op, l, 0);
        return &binary_loop<F, A, B>;
      }
    } else {
      return nullptr;
    }
  }

  /// The functor's result type must be the loop's output dtype in ops.def.
  template <class T, class R>
  static void check_out(OpId op, const Loop& l, size_t k) {
    if (k >= l.out.size() || detail::dtype_of<storage_t<T, R>>::value != l.out[k])
      throw std::logic_error("npc: kernel of '" + std::string(op_info(op).name) + "' returns the wrong dtype");
  }

  template <class T> struct is_pair : std::false_type {};
  template <class X, class Y> struct is_pair<std::pair<X, Y>> : std::true_type {};
  template <class F, class = void> struct mixed : std::false_type {};
  template <class F> struct mixed<F, std::void_t<decltype(F::kMixed)>> : std::bool_constant<F::kMixed> {};
};

// The kernel files: each instantiates a part of the rows' rule kernels (Note [rule kernels] in
// rules.hpp: register_rules<0..2> run first), then registers the loops of its op group that
// differ from the rules.
template <int Part> void register_rules(Registrar& r);
template <> void register_rules<0>(Registrar& r);  // kernels_arith.cpp
template <> void register_rules<1>(Registrar& r);  // kernels_math.cpp
template <> void register_rules<2>(Registrar& r);  // kernels_logic.cpp
void register_arith(Registrar& r);
void register_math(Registrar& r);
void register_logic(Registrar& r);

}  // namespace npc::ops
