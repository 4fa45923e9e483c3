// The op table as data (op_info), the per-loop kernel registry, NumPy's ufunc type
// resolution (resolve_loop), broadcasting, eager loops' thread counts and the elementwise
// executor.
#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cstring>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif
#include <unistd.h>

#include "core/cast.hpp"
#include "core/parallel.hpp"
#include "ops/exec.hpp"
#include "ops/loops.hpp"
#include "ops/op_rows.hpp"

namespace npc {

// ---------------------------------------------------------------- op table
namespace {
// The rows as constants (src/ops/op_rows.hpp).
constexpr const OpInfo* kOps = ops::kOpRows;
}  // namespace

const OpInfo& op_info(OpId op) {
  // Every ops entry point reads its row first, so an OpId made from an out-of-range integer
  // (or kCount) is an error here rather than a read past the table.
  if (static_cast<unsigned>(op) >= static_cast<unsigned>(kNumOps)) [[unlikely]]
    throw ValueError("invalid npc::OpId value " + std::to_string(static_cast<int>(op)));
  return kOps[static_cast<int>(op)];
}

std::optional<OpId> op_from_name(std::string_view name) {
  for (int i = 0; i < kNumOps; ++i)
    if (kOps[i].name == name) return static_cast<OpId>(i);
  return std::nullopt;
}

const OpInfo* reduction_row(OpId ufunc) {
  const std::string_view name = op_info(ufunc).name;
  for (const OpInfo& r : ops::kOpRows)
    if (r.kind == OpKind::Reduce && r.loops == name) return &r;
  return nullptr;
}

namespace ops {

DType dtype_from_char(char c) {
  switch (c) {
    case '?': return DType::Bool;
    case 'b': return DType::Int8;
    case 'B': return DType::UInt8;
    case 'h': return DType::Int16;
    case 'H': return DType::UInt16;
    case 'i': return DType::Int32;
    case 'I': return DType::UInt32;
    case 'l': case 'q': return DType::Int64;
    case 'L': case 'Q': return DType::UInt64;
    case 'e': return DType::Float16;
    case 'f': return DType::Float32;
    case 'd': return DType::Float64;
    case 'F': return DType::Complex64;
    case 'D': return DType::Complex128;
  }
  throw std::logic_error(std::string("npc: bad loop character '") + c + "' in ops.def");
}

char char_from_dtype(DType t) { return "?bBhHiIlLefdFD"[static_cast<int>(t)]; }

namespace {

struct Registry {
  std::vector<std::vector<Loop>> loops;
  std::vector<bool> uniform;  // every loop has equal input dtypes
  Registry() : loops(kNumOps), uniform(kNumOps, true) {
    for (int i = 0; i < kNumOps; ++i) {
      const OpInfo& info = kOps[i];
      if (info.kind != OpKind::Ufunc) continue;
      std::string_view s = info.loops;
      size_t pos = 0;
      while (pos < s.size()) {
        size_t end = s.find(' ', pos);
        if (end == std::string_view::npos) end = s.size();
        std::string_view sig = s.substr(pos, end - pos);
        pos = end + 1;
        if (sig.empty()) continue;
        size_t arrow = sig.find("->");
        Loop l;
        for (char c : sig.substr(0, arrow)) l.in.push_back(dtype_from_char(c));
        for (char c : sig.substr(arrow + 2)) l.out.push_back(dtype_from_char(c));
        for (DType t : l.in) if (t != l.in[0]) uniform[i] = false;
        loops[i].push_back(std::move(l));
      }
      // Comparisons get NumPy 2's exact mixed int64/uint64 loops ("qQ->?", "Qq->?"), which the
      // ops.def rows (restricted to one loop per dtype) do not spell.
      if (info.resolver == Resolver::Comparison) {
        loops[i].push_back(Loop{{DType::Int64, DType::UInt64}, {DType::Bool}, nullptr});
        loops[i].push_back(Loop{{DType::UInt64, DType::Int64}, {DType::Bool}, nullptr});
      }
    }
    // Every row's scalar rule first, then the loops that differ (Note [rule kernels]).
    Registrar r{&loops};
    register_rules<0>(r);
    register_rules<1>(r);
    register_rules<2>(r);
    register_arith(r);
    register_math(r);
    register_logic(r);
  }
};

const Registry& registry() {
  static const Registry reg;
  return reg;
}
}  // namespace

const std::vector<Loop>& loops_of(OpId op) { return registry().loops[static_cast<int>(op)]; }

bool checks_fpe(OpId op) { return op_info(op).fpe_check; }

#if NPC_MULTIVERSION
int cpu_level() {  // Note [multiversioned loops] in loops.hpp
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return avx512 ? 2 : avx2 ? 1 : 0;
}
#endif

// Note [memory-bound threads]
// An eager loop of cost 1 (Note [elementwise cost]: copies, add, compares, integer ops, the
// sum or maximum of an array) streams memory with one cheap instruction per element, and two
// cores share one memory bus: a second thread gains little, while waking it costs tens of
// microseconds, and much more when the other core runs another process (a 300,000-element
// float64 add took 80 us on two threads and 47 us on one; NumPy, 43 us; a 3M-element add
// was no faster on two). Such loops count an eighth of a unit per element, so they split
// only from 2M elements at the default threshold. Fused kernels keep their own work
// estimate (parallel::threads_for through npk::threads_for).
int eager_threads(int64_t n, int64_t cost) { return parallel::threads_for(cost <= 1 ? n / 8 : n, cost); }

// Note [elementwise cost]
// An element of a float loop counts as eight units of work (Note [parallel threshold] in
// src/core/parallel.cpp) when it calls a function, two for a division or square root (one
// vector instruction of a few cycles: `(u[1:-1, 2:] - u[1:-1, :-2]) / h` on a 160x160 grid went to two threads), and one
// when it is a single cheap vector instruction like an integer op: add, subtract, multiply, comparisons, maximum/minimum and sign
// operations of real floats are as memory-bound as a copy. Counting eight for those put a
// 20,000-element comparison or maximum on two threads, whose wake-up costs more than the
// loop (and much more when the cores are shared).
int elementwise_cost(OpId op, DType t) {
  if (!is_inexact(t)) return 1;
  switch (op) {
    case OpId::add: case OpId::subtract: case OpId::multiply: return 1;
    default: break;
  }
  if (is_complex(t)) return 8;
  switch (op) {
    case OpId::equal: case OpId::not_equal: case OpId::less: case OpId::less_equal:
    case OpId::greater: case OpId::greater_equal: case OpId::maximum: case OpId::minimum:
    case OpId::fmax: case OpId::fmin: case OpId::negative: case OpId::positive:
    case OpId::absolute: case OpId::copysign: case OpId::square:
      return 1;
    case OpId::divide: case OpId::sqrt:  // one vector instruction of a few cycles
      return 2;
    default: return 8;
  }
}

// ---------------------------------------------------------------- floating-point status
namespace {
thread_local int t_fpe = 0;
}

// Note [cheap floating-point status]
// glibc's feclearexcept saves and reloads the whole x87 environment (fnstenv/fldenv) on
// every call, which costs more than a 10-element kernel. On x86-64 the status lives in
// MXCSR (SSE, where double and float math runs) and the x87 status word: both are read
// directly, and written only when a flag is actually set, so a call without errors never
// writes the floating-point control state.
#if defined(__x86_64__) || defined(__i386__)
namespace {
// IE ZE OE UE (invalid, divide, overflow, underflow): the same bits in MXCSR and the x87
// status word. Inexact and denormal are never reported, so they may stay set.
constexpr unsigned kX86Flags = 0x1d;
inline unsigned x86_status() {
  unsigned short sw;
  __asm__ volatile("fnstsw %0" : "=am"(sw));
  return (_mm_getcsr() | sw) & kX86Flags;
}
}  // namespace

void clear_fpe() {
  const unsigned csr = _mm_getcsr();
  if (csr & kX86Flags) _mm_setcsr(csr & ~kX86Flags);
  unsigned short sw;
  __asm__ volatile("fnstsw %0" : "=am"(sw));
  if (sw & kX86Flags) __asm__ volatile("fnclex");
}

void raise_fpe(int flags) {
  const unsigned bits = ((flags & FpeDivide) ? 0x04u : 0u) | ((flags & FpeOverflow) ? 0x08u : 0u) |
                        ((flags & FpeUnderflow) ? 0x10u : 0u) | ((flags & FpeInvalid) ? 0x01u : 0u);
  if (bits) _mm_setcsr(_mm_getcsr() | bits);
}

int read_fpe() {
  const unsigned e = x86_status();
  int f = 0;
  if (e & 0x04) f |= FpeDivide;
  if (e & 0x08) f |= FpeOverflow;
  if (e & 0x10) f |= FpeUnderflow;
  if (e & 0x01) f |= FpeInvalid;
  return f;
}
#else
void clear_fpe() { std::feclearexcept(FE_ALL_EXCEPT); }

void raise_fpe(int flags) {
  std::feraiseexcept(((flags & FpeDivide) ? FE_DIVBYZERO : 0) | ((flags & FpeOverflow) ? FE_OVERFLOW : 0) |
                     ((flags & FpeUnderflow) ? FE_UNDERFLOW : 0) | ((flags & FpeInvalid) ? FE_INVALID : 0));
}

int read_fpe() {
  int e = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
  int f = 0;
  if (e & FE_DIVBYZERO) f |= FpeDivide;
  if (e & FE_OVERFLOW) f |= FpeOverflow;
  if (e & FE_UNDERFLOW) f |= FpeUnderflow;
  if (e & FE_INVALID) f |= FpeInvalid;
  return f;
}
#endif

void note_fpe(int flags) { t_fpe |= flags; }

void raise_overflow() { std::feraiseexcept(FE_OVERFLOW); }
void raise_divbyzero() { std::feraiseexcept(FE_DIVBYZERO); }
void raise_invalid() { std::feraiseexcept(FE_INVALID); }

// ---------------------------------------------------------------- executor
namespace {
struct Geometry {
  std::vector<int64_t> shape;                     // outermost first
  std::vector<std::vector<int64_t>> strides;      // [operand][axis]
  bool empty = false;
};

Geometry make_geometry(int nops, const std::vector<std::vector<int64_t>>& strides, std::span<const int64_t> shape,
                       int order_by) {
  Geometry g;
  g.strides.resize(nops);
  std::vector<int> axes;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) { g.empty = true; return g; }
    if (shape[d] != 1) axes.push_back(static_cast<int>(d));
  }
  const auto& key = strides[order_by];
  std::stable_sort(axes.begin(), axes.end(), [&](int a, int b) { return std::abs(key[a]) > std::abs(key[b]); });
  for (int a : axes) {
    if (!g.shape.empty()) {
      bool merge = true;
      for (int k = 0; k < nops; ++k)
        if (g.strides[k].back() != strides[k][a] * shape[a]) { merge = false; break; }
      if (merge) {
        g.shape.back() *= shape[a];
        for (int k = 0; k < nops; ++k) g.strides[k].back() = strides[k][a];
        continue;
      }
    }
    g.shape.push_back(shape[a]);
    for (int k = 0; k < nops; ++k) g.strides[k].push_back(strides[k][a]);
  }
  return g;
}

// Runs the loop nest of `g` restricted to outer-axis range [lo, hi) of axis 0 (or the inner
// range when g is 1-D).
void run_range(LoopFn fn, int nops, std::byte* const* base, const Geometry& g, int64_t lo, int64_t hi) {
  std::byte* p[kMaxExecOperands];
  int64_t is[kMaxExecOperands];
  const size_t nd = g.shape.size();
  if (nd == 0) {
    for (int k = 0; k < nops; ++k) { p[k] = base[k]; is[k] = 0; }
    fn(p, is, 1);
    return;
  }
  for (int k = 0; k < nops; ++k) is[k] = g.strides[k][nd - 1];
  if (nd == 1) {
    for (int k = 0; k < nops; ++k) p[k] = base[k] + lo * is[k];
    fn(p, is, hi - lo);
    return;
  }
  const int64_t n = g.shape[nd - 1];
  std::vector<int64_t> idx(nd - 1, 0);
  idx[0] = lo;
  for (int k = 0; k < nops; ++k) p[k] = base[k] + lo * g.strides[k][0];
  for (;;) {
    fn(p, is, n);
    int d = static_cast<int>(nd) - 2;
    for (; d >= 0; --d) {
      for (int k = 0; k < nops; ++k) p[k] += g.strides[k][d];
      if (++idx[d] < (d == 0 ? hi : g.shape[d])) break;
      if (d == 0) return;
      for (int k = 0; k < nops; ++k) p[k] -= g.strides[k][d] * g.shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}
}  // namespace

// Note [no idle parallel regions]
// Handing a loop to the thread pool (Note [thread pool] in src/core/parallel.cpp) costs
// atomics and a wake-up even when it ends up on one thread, which is more than a small kernel
// itself. Code that may run single-threaded tests the thread count first and runs the plain
// loop.
int run_elementwise(LoopFn fn, int nops, std::byte* const* ptrs, const std::vector<std::vector<int64_t>>& strides,
                    std::span<const int64_t> shape, int order_by, bool check_fpe, int64_t cost) {
  Geometry g = make_geometry(nops, strides, shape, order_by);
  if (g.empty) return 0;
  int64_t total = 1;
  for (int64_t d : g.shape) total *= d;
  const int64_t outer = g.shape.empty() ? 1 : g.shape[0];
  int nt = g.shape.empty() ? 1 : eager_threads(total, cost);
  if (nt > outer) nt = static_cast<int>(outer);
  if (nt <= 1) {
    if (check_fpe) clear_fpe();
    run_range(fn, nops, ptrs, g, 0, outer);
    return check_fpe ? read_fpe() : 0;
  }
  // Four chunks a thread (Note [thread pool] in src/core/parallel.cpp: a worker that starts
  // late leaves its chunks to the others), aligned to 64 elements so that threads do not
  // share cache lines.
  std::atomic<int> flags{0};
  int64_t chunk = (outer + 4 * nt - 1) / (4 * nt);
  if (g.shape.size() == 1) chunk = (chunk + 63) / 64 * 64;
  parallel::for_chunks(nt, (outer + chunk - 1) / chunk, [&](int64_t c) {
    const int64_t lo = c * chunk, hi = std::min<int64_t>(outer, lo + chunk);
    if (check_fpe) clear_fpe();
    run_range(fn, nops, ptrs, g, lo, hi);
    if (check_fpe) flags.fetch_or(read_fpe());
  });
  return flags.load();
}

}  // namespace ops

int take_fp_errors() {
  int f = ops::t_fpe;
  ops::t_fpe = 0;
  return f;
}

void set_num_threads(int n) { parallel::set_num_threads(n); }
int get_num_threads() { return parallel::num_threads(); }
void set_parallel_threshold(int64_t n) { parallel::set_parallel_threshold(n); }
int64_t get_parallel_threshold() { return parallel::parallel_threshold(); }

// ---------------------------------------------------------------- type resolution
namespace {
using detail::casting_name;

WeakKind weak_kind_of(DType t) {
  return is_complex(t) ? WeakKind::Complex : kind(t) == Kind::Float ? WeakKind::Float : WeakKind::Int;
}

// Whether a weak Python scalar of kind `k` can take dtype `t` (NEP 50: its kind must not be higher).
bool weak_fits(WeakKind k, DType t) {
  switch (k) {
    case WeakKind::Int: return kind(t) != Kind::Bool;
    case WeakKind::Float: return kind(t) == Kind::Float || kind(t) == Kind::Complex;
    default: return kind(t) == Kind::Complex;
  }
}

std::string dtype_class(DType t) {
  static const char* names[] = {"Bool", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int64",
                                "UInt64", "Float16", "Float32", "Float64", "Complex64", "Complex128"};
  return std::string("<class 'numpy.dtypes.") + names[static_cast<int>(t)] + "DType'>";
}

[[noreturn]] void no_loop(OpId op, std::span<const DType> in, std::span<const bool> weak) {
  std::vector<bool> w(in.size(), false);
  for (size_t i = 0; i < in.size() && i < weak.size(); ++i) w[i] = weak[i];
  throw UfuncNoLoopError(op, std::vector<DType>(in.begin(), in.end()), std::move(w));
}

// NumPy's legacy type resolver's error when no loop takes the (promoted) inputs safely: a
// plain TypeError (its doubled quotes around the rule are NumPy's own).
[[noreturn]] void no_safe_loop(OpId op, std::span<const DType> in, std::span<const bool> weak) {
  // gcd, lcm, positive and sign are NumPy ufuncs with promoters: their _UFuncNoLoopError.
  if (op == OpId::positive || op == OpId::sign || op == OpId::gcd || op == OpId::lcm) no_loop(op, in, weak);
  throw TypeError("ufunc '" + std::string(op_info(op).name) +
                  "' not supported for the input types, and the inputs could not be safely coerced to any "
                  "supported types according to the casting rule ''safe''");
}
}  // namespace

UfuncNoLoopError::UfuncNoLoopError(OpId op_, std::vector<DType> in_, std::vector<bool> weak_)
    : TypeError([&] {
        auto cls = [&](size_t i) {
          if (i >= weak_.size() || !weak_[i]) return dtype_class(in_[i]);
          return std::string("<class 'numpy.dtypes.") +
                 (is_complex(in_[i]) ? "_PyComplexDType'>" : kind(in_[i]) == Kind::Float ? "_PyFloatDType'>" : "_PyLongDType'>");
        };
        std::string types;
        if (in_.size() == 1) types = cls(0);
        else {
          types = "(";
          for (size_t i = 0; i < in_.size(); ++i) types += (i ? ", " : "") + cls(i);
          types += ")";
        }
        return "ufunc '" + std::string(op_info(op_).name) + "' did not contain a loop with signature matching types " +
               types + " -> None";
      }()),
      op(op_), in(std::move(in_)), weak(std::move(weak_)) {}

UfuncNoLoopError::UfuncNoLoopError(std::vector<std::optional<DType>> all_, OpId op_)
    : TypeError([&] {
        const OpInfo& info = op_info(op_);
        auto cls = [&](size_t i) { return all_[i] ? dtype_class(*all_[i]) : std::string("None"); };
        auto group = [&](size_t lo, size_t n) {
          if (n == 1) return cls(lo);
          std::string s = "(";
          for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + cls(lo + i);
          return s + ")";
        };
        const auto nin = static_cast<size_t>(info.nin), nout = static_cast<size_t>(info.nout);
        return "ufunc '" + std::string(info.name) + "' did not contain a loop with signature matching types " +
               group(0, nin) + " -> " + group(nin, nout);
      }()),
      op(op_), all(std::move(all_)) {
  for (size_t i = 0; i < all.size() && i < static_cast<size_t>(op_info(op).nin); ++i)
    in.push_back(all[i].value_or(DType::Bool));
}

LoopTypes resolve_loop(OpId op, std::span<const DType> in, std::span<const bool> weak, std::optional<DType> dtype) {
  const OpInfo& info = op_info(op);
  if (info.kind != OpKind::Ufunc) throw TypeError("'" + std::string(info.name) + "' is not a ufunc");
  if (static_cast<int>(in.size()) != info.nin)
    throw TypeError(std::string(info.name) + "() takes " + std::to_string(info.nin) + " input arguments");
  const auto& loops = ops::loops_of(op);
  auto is_weak = [&](size_t i) { return i < weak.size() && weak[i]; };

  // Note [logical promotion]
  // NumPy's logical_and/or/xor run an input dtype's own loop only when both inputs are
  // arrays of that one dtype; any other mix (two dtypes, a Python scalar) casts every input
  // to bool ("??->?") whatever `casting` says, so no truth value is lost to a promotion
  // (float16 array and 1e-10) and no Python int overflows a narrow dtype.
  if (is_logical_binary(op)) {
    if (dtype && *dtype != DType::Bool)
      throw TypeError("No loop matching the specified signature and casting was found for ufunc " +
                      std::string(info.name));
    if (!is_weak(0) && !is_weak(1) && in[0] == in[1])
      for (const auto& l : loops)
        if (l.in[0] == in[0]) return {l.in, l.out};
    return {{DType::Bool, DType::Bool}, {DType::Bool}};
  }
  // A comparison's output is bool: dtype=bool resolves as if it were absent (NumPy 2's
  // comparison promoters), exact int64/uint64 loops included.
  if (dtype && *dtype == DType::Bool && is_comparison_op(op)) dtype.reset();

  if (dtype) {
    // dtype= fixes the outputs (NumPy: signature=(None,)*nin + (dtype,)*nout) and NumPy's
    // type_tuple_type_resolver runs: first the loops with those outputs whose inputs take
    // the operands safely (weak Python scalars by kind), then the homogeneous signature
    // (dtype, ..., dtype), whose input casts the call then checks under `casting=`.
    // A mixed-loop ufunc (ldexp) treats a Python int as its default int64 when no array's
    // kind reaches it (a bool array): ldexp(bool array, 2**40, dtype=float32) runs "fl->f"
    // (Note [weak literals] below).
    bool mixed = false, int_literal_weak = false;
    for (const auto& l : loops)
      for (DType t : l.in) mixed |= t != l.in[0];
    for (size_t i = 0; i < in.size(); ++i) int_literal_weak |= !is_weak(i) && kind(in[i]) != Kind::Bool;
    for (const auto& l : loops) {
      bool ok = true;
      for (DType t : l.out) ok &= t == *dtype;
      for (size_t i = 0; i < in.size() && ok; ++i) {
        if (is_weak(i) && mixed && weak_kind_of(in[i]) == WeakKind::Int && !int_literal_weak)
          ok = can_cast(DType::Int64, l.in[i], Casting::Safe);
        else
          ok = is_weak(i) ? weak_fits(weak_kind_of(in[i]), l.in[i]) : can_cast(in[i], l.in[i], Casting::Safe);
      }
      if (ok) return {l.in, l.out};
    }
    for (const auto& l : loops) {
      bool ok = true;
      for (DType t : l.in) ok &= t == *dtype;
      for (DType t : l.out) ok &= t == *dtype;
      if (ok) return {l.in, l.out};
    }
    if (*dtype == DType::Bool && op == OpId::subtract)
      throw TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` "
                      "operator, or the logical_xor function instead.");
    if (*dtype == DType::Bool && op == OpId::negative)
      throw TypeError("The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or "
                      "the logical_not function instead.");
    // NumPy's uniform-operation and absolute type resolvers do not take the signature to
    // the legacy search: they ask for the loop (dtype, ..., dtype) alone, and their no-loop
    // error names it ("... matching types <class 'numpy.dtypes.BoolDType'> -> <... BoolDType'>").
    if (has_uniform_type_resolver(op) || (info.resolver == Resolver::Absolute && !is_complex(in[0]))) {
      std::vector<std::optional<DType>> all(in.begin(), in.end());
      for (int k = 0; k < info.nout; ++k) all.push_back(*dtype);
      UfuncNoLoopError e(std::move(all), op);
      for (size_t i = 0; i < in.size(); ++i) e.weak.push_back(is_weak(i));
      throw e;
    }
    throw TypeError("No loop matching the specified signature and casting was found for ufunc " +
                    std::string(info.name));
  }

  // Comparisons' extra exact int64/uint64 loops (taken above) do not make them mixed-loop
  // ufuncs: a Python float meets a float32 array in float32, as NumPy's (f4 array == 0.1).
  bool uniform = true;
  for (const auto& l : loops)
    for (DType t : l.in) if (t != l.in[0] && !is_comparison_op(op)) uniform = false;

  std::vector<DType> strong;
  std::vector<WeakKind> weak_kinds;
  for (size_t i = 0; i < in.size(); ++i) {
    if (is_weak(i)) weak_kinds.push_back(weak_kind_of(in[i]));
    else strong.push_back(in[i]);
  }

  if (in.size() == 2 && !is_weak(0) && !is_weak(1) && is_comparison_op(op)) {
    // NumPy 2: exact int64 <-> uint64 comparisons (promotion would give float64).
    bool s0 = kind(in[0]) == Kind::Signed, s1 = kind(in[1]) == Kind::Signed;
    bool u0 = kind(in[0]) == Kind::Unsigned, u1 = kind(in[1]) == Kind::Unsigned;
    if ((s0 && in[1] == DType::UInt64) || (in[0] == DType::UInt64 && s1))
      return {{s0 ? DType::Int64 : DType::UInt64, s1 ? DType::Int64 : DType::UInt64}, {DType::Bool}};
    (void)u0; (void)u1;
  }

  // Note [default type resolver]: ufuncs without a type resolver of their own (and the
  // division, remainder and divmod ones, which defer to it for numbers) search their loops in
  // order for the first that takes every array operand safely, without promoting them first:
  // np.hypot(int8, uint8) runs "ee->e", where their promotion (int16) would take "ff->f".
  // Arrays of one dtype, and Python scalars, resolve as promotion does; the linear search
  // below handles the rest.
  const Resolver resolver = op_info(op).resolver;
  const bool default_resolver =
      resolver != Resolver::Uniform && resolver != Resolver::Comparison && resolver != Resolver::TrueDivide;
  if (uniform && default_resolver && weak_kinds.empty() && in.size() == 2 && in[0] != in[1]) uniform = false;

  if (uniform) {
    DType common = result_type(strong, weak_kinds);
    if (common == DType::Bool) {
      // NumPy has no boolean loops for these and refuses to promote bool to int8.
      if (op == OpId::subtract)
        throw TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` "
                        "operator, or the logical_xor function instead.");
      if (op == OpId::negative)
        throw TypeError("The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or "
                        "the logical_not function instead.");
      if (op == OpId::positive || op == OpId::sign || op == OpId::gcd || op == OpId::lcm) no_loop(op, in, weak);
    }
    if (op == OpId::divide && !is_inexact(common)) common = DType::Float64;  // true division of ints
    for (const auto& l : loops) {
      bool ok = true;
      for (DType t : l.in) if (!can_cast(common, t, Casting::Safe)) { ok = false; break; }
      if (ok) return {l.in, l.out};
    }
    no_safe_loop(op, in, weak);
  }
  // Note [weak literals]
  // Loops with mixed input dtypes (ldexp): each input must cast safely to its slot. NumPy's
  // legacy search (should_use_min_scalar_weak_literals) treats the Python scalars as weak
  // only when some array's kind is at least theirs (bool < Python int < int < Python float):
  // then a Python int fits any numeric slot and a Python float any inexact one
  // (ldexp(0, int8 array) is float16); otherwise they take their default dtype
  // (ldexp(0, bool array) and ldexp(1.5, int8 array) are float64).
  auto kind_rank = [](DType t) {
    switch (kind(t)) {
      case Kind::Bool: return 0;
      case Kind::Unsigned: return 1;
      case Kind::Signed: return 2;
      case Kind::Float: return 3;
      default: return 4;
    }
  };
  int max_array = -1, max_scalar = -1;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!is_weak(i)) max_array = std::max(max_array, kind_rank(in[i]));
    else max_scalar = std::max(max_scalar, weak_kind_of(in[i]) == WeakKind::Int ? 1 : 3);
  }
  const bool weak_literals = max_array >= 0 && max_array >= max_scalar;
  for (const auto& l : loops) {
    bool ok = true;
    for (size_t i = 0; i < in.size() && ok; ++i) {
      if (is_weak(i) && weak_literals) {
        ok = weak_kind_of(in[i]) == WeakKind::Int ? kind(l.in[i]) != Kind::Bool : weak_fits(weak_kind_of(in[i]), l.in[i]);
        continue;
      }
      DType t = is_weak(i) ? default_dtype(weak_kind_of(in[i])) : in[i];
      ok = can_cast(t, l.in[i], Casting::Safe);
    }
    if (ok) return {l.in, l.out};
  }
  no_safe_loop(op, in, weak);
}

bool is_logical_binary(OpId op) {
  const OpInfo& info = op_info(op);
  return info.resolver == Resolver::Logical && info.nin == 2;
}

bool is_comparison_op(OpId op) { return op_info(op).resolver == Resolver::Comparison; }

bool has_uniform_type_resolver(OpId op) { return op_info(op).resolver == Resolver::Uniform; }

std::string casting_rule_name(Casting c) { return casting_name(c); }

// ---------------------------------------------------------------- broadcasting
std::string iter_shape_str(std::span<const int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += std::to_string(shape[i]) + (i + 1 < shape.size() ? "," : "");
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// The operands' broadcast shape with the ufunc error text ("operands could not be broadcast
// together with shapes ..."); numpy.broadcast_shapes itself is in src/core/broadcast.cpp.
Shape broadcast_operand_shapes(std::span<const Shape> shapes) {
  size_t nd = 0;
  for (const auto& s : shapes) nd = std::max(nd, s.size());
  Shape r(nd, 1);
  for (const auto& s : shapes) {
    size_t off = nd - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t a = r[off + d], b = s[d];
      if (a == b || b == 1) continue;
      if (a == 1) { r[off + d] = b; continue; }
      std::string msg = "operands could not be broadcast together with shapes";
      for (const auto& t : shapes) msg += " " + iter_shape_str(t);
      msg += " ";
      throw ValueError(msg);
    }
  }
  return r;
}

// ---------------------------------------------------------------- trace hooks
namespace {
UfuncTraceHook g_ufunc_hook = nullptr;
ReduceTraceHook g_reduce_hook = nullptr;
}  // namespace
void set_trace_hooks(UfuncTraceHook ufunc_hook, ReduceTraceHook reduce_hook) {
  g_ufunc_hook = ufunc_hook;
  g_reduce_hook = reduce_hook;
}
namespace {
ArgReduceTraceHook g_arg_hook = nullptr;
WhereTraceHook g_where_hook = nullptr;
}  // namespace
void set_prim_trace_hooks(ArgReduceTraceHook arg_hook, WhereTraceHook where_hook) {
  g_arg_hook = arg_hook;
  g_where_hook = where_hook;
}
ArgReduceTraceHook arg_reduce_trace_hook() { return g_arg_hook; }
WhereTraceHook where_trace_hook() { return g_where_hook; }
UfuncTraceHook ufunc_trace_hook() { return g_ufunc_hook; }
ReduceTraceHook reduce_trace_hook() { return g_reduce_hook; }
namespace {
AccumulateTraceHook g_accumulate_hook = nullptr;
SortTraceHook g_sort_hook = nullptr;
}  // namespace
void set_scan_sort_trace_hooks(AccumulateTraceHook accumulate_hook, SortTraceHook sort_hook) {
  g_accumulate_hook = accumulate_hook;
  g_sort_hook = sort_hook;
}
AccumulateTraceHook accumulate_trace_hook() { return g_accumulate_hook; }
SortTraceHook sort_trace_hook() { return g_sort_hook; }

}  // namespace npc
