#pragma once
/// \file ops.hpp
/// The op table as C++ (OpId, OpInfo) and the eager ufunc/reduction entry points.
/// Mirrors numpy.ufunc: __call__ (broadcasting, NEP 50 promotion, out=, where=, dtype=,
/// casting=, order=), reduce, accumulate, outer, at.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "npc/ndarray.hpp"

namespace npc {

/// One id per row of include/npc/ops.def.
enum class OpId : uint16_t {
#define NPC_UFUNC(name, ...) name,
#define NPC_REDUCE(name, ...) name,
#define NPC_PRIM(name, ...) name,
#include "npc/ops.def"
  kCount
};
inline constexpr int kNumOps = static_cast<int>(OpId::kCount);

/// What a row of the op table is.
enum class OpKind : uint8_t { Ufunc, Reduce, Prim };
/// NumPy's ufunc.identity values; ReorderableNone is None for Python, but reductions over
/// several axes at once are allowed (NumPy's PyUFunc_ReorderableNone: maximum, minimum, ...).
enum class Identity : uint8_t { None_, Zero, One, AllOnes, True_, False_, MinusInf, ReorderableNone };
/// How NumPy resolves a ufunc's loop (the `resolver` column of ops.def).
enum class Resolver : uint8_t { Default, Uniform, TrueDivide, Absolute, Comparison, Logical };

/// One row of the op table (src/ops/op_rows.hpp expands ops.def into these). Columns a row
/// kind does not have keep their defaults.
struct OpInfo {
  std::string_view name;
  OpKind kind = OpKind::Ufunc;
  int nin = 0, nout = 0;
  Identity identity = Identity::None_;
  bool differentiable = false;
  std::string_view loops;  ///< ufuncs: "ff->f dd->d ..."; reductions: the ufunc's name
  Resolver resolver = Resolver::Default;  ///< ufuncs: NumPy's type resolver (Default for other rows)
  bool fpe_check = true;   ///< ufuncs: the eager loop reads the floating-point status
  std::string_view fpe;    ///< FP error kinds the op can raise: "DOUI" from finite operands, "doui" from inf/NaN only
  std::string_view at;     ///< ufuncs: NumPy kinds ("iufc") with an indexed ufunc.at loop
  std::string_view dunders;  ///< ufuncs: "forward [reflected [in-place]]" Python operator names
  std::string_view vmath;  ///< ufuncs: "f d*": loops on SIMD vector math ('*': only with NPC_VECTOR_MATH=all)
  std::string_view fused;  ///< reductions: dtype kinds ("bifc") generated code reduces
};

/// The row for `op`. Every entry point taking an OpId throws ValueError for a value outside
/// the table (an OpId cast from an arbitrary integer, or kCount).
const OpInfo& op_info(OpId op);
/// The op with NumPy name `name`, if any.
std::optional<OpId> op_from_name(std::string_view name);
/// The reduction row (sum, max, any, ...) whose ufunc is `ufunc`, or null when it has none.
const OpInfo* reduction_row(OpId ufunc);

/// An input of a ufunc call: an array, or a weak Python scalar (NEP 50) held as a 0-d
/// array of its default dtype (int64, float64, complex128) with `weak` set.
struct Operand {
  ndarray array;
  bool weak = false;
};

/// The dtypes a ufunc call runs in: one loop of the op's table row.
struct LoopTypes {
  std::vector<DType> in, out;
};

/// NumPy's type resolution for a ufunc call: promote the inputs under NEP 50, then take the
/// first loop the promoted inputs cast to safely (`dtype=` forces the loop). Throws
/// TypeError (NumPy's UFuncTypeError text) when no loop fits. Pure: the tracer uses it for
/// abstract evaluation, the eager path for dispatch.
LoopTypes resolve_loop(OpId op, std::span<const DType> in, std::span<const bool> weak,
                       std::optional<DType> dtype = std::nullopt);

/// Keyword arguments of a ufunc call.
struct UfuncOptions {
  std::vector<std::optional<ndarray>> out;  ///< empty, or one entry per output
  std::optional<ndarray> where;             ///< bool mask, broadcast to the result (TypeError for another dtype)
  std::optional<DType> dtype;               ///< forces the loop's output dtype
  Casting casting = Casting::SameKind;      ///< rule for inputs -> loop and loop -> out
  Order order = Order::K;                   ///< layout of new outputs
  /// The loop, when the caller resolved it for the operands as given and then cast inputs
  /// to it (a cast input could otherwise resolve another loop).
  std::optional<LoopTypes> loop;
  /// The floating-point flags of the inputs' casts count as the loop's own (NumPy's buffered
  /// iterator: "overflow encountered in add"), not as a separate "cast".
  bool input_cast_flags_to_loop = false;
  /// Where NumPy has two loops with different results (complex absolute and products): true
  /// runs its scalar (non-SIMD) loop, what its scalar arithmetic computes, false its SIMD loop
  /// (Note [scalar loops] in src/tracer/trace.hpp); unset, the loop is picked by stride.
  std::optional<bool> scalar_loop;
  /// NumPy's scalar arithmetic computes the call (a Python operator on NumPy scalars, Note
  /// [scalar math] in src/tracer/trace.hpp): integer add, subtract, multiply, negative and
  /// absolute raise "overflow" where the exact result does not fit (Note [integer scalar
  /// overflow] in include/npc/scalar_rules.hpp); other calls are unchanged.
  bool scalar_math = false;
};

/// Calls ufunc `op` (numpy.ufunc.__call__): broadcasting, promotion, casting, out=, where=.
/// Returns one array per output (the `out` arrays when given). Throws ValueError for shapes
/// that do not broadcast, TypeError/CastingError for casts that `casting` forbids,
/// OverflowError for weak Python ints out of range of the loop dtype.
std::vector<ndarray> call_ufunc(OpId op, std::span<const Operand> inputs, const UfuncOptions& opts = {});

/// Keyword arguments of ufunc.reduce / the reductions (sum, max, any, ...).
struct ReduceOptions {
  std::optional<std::vector<int64_t>> axes;  ///< nullopt: all axes
  bool keepdims = false;
  std::optional<DType> dtype;
  std::optional<ndarray> out;
  std::optional<Scalar> initial;
  std::optional<ndarray> where;  ///< bool mask broadcast to `a` (TypeError for another dtype)
};

/// numpy.ufunc.reduce for a binary ufunc row (add -> sum, maximum -> max, ...). ValueError
/// "zero-size array to reduction operation ... which has no identity" when empty without
/// identity/initial; AxisError for bad axes; ValueError for duplicate axes. Float sums use
/// pairwise summation like NumPy.
ndarray reduce(OpId ufunc, const ndarray& a, const ReduceOptions& opts = {});

// Note [trace hooks]
// src/ops never depends on src/tracer. When any input of an ops entry point is traced
// (ndarray::is_traced), the entry point resolves dtypes and shapes as usual and then calls
// the hook the tracer installed, which records a graph node and returns traced outputs.
/// Hook for call_ufunc on traced inputs.
using UfuncTraceHook = std::vector<ndarray> (*)(OpId op, std::span<const Operand> inputs, const UfuncOptions& opts,
                                                const LoopTypes& loop);
/// Hook for reduce on traced inputs.
using ReduceTraceHook = ndarray (*)(OpId ufunc, const ndarray& a, const ReduceOptions& opts);
void set_trace_hooks(UfuncTraceHook ufunc_hook, ReduceTraceHook reduce_hook);
/// Hook for arg_reduce on a traced input (after the eager argument checks).
using ArgReduceTraceHook = ndarray (*)(OpId op, const ndarray& a, std::optional<int64_t> axis, bool keepdims);
/// Hook for where on traced operands: `t` is the result dtype, `shape` the broadcast shape.
using WhereTraceHook = ndarray (*)(const ndarray& cond, const Operand& x, const Operand& y, DType t, const Shape& shape);
void set_prim_trace_hooks(ArgReduceTraceHook arg_hook, WhereTraceHook where_hook);
/// Hook for accumulate on a traced input (after the eager checks): `t` is the loop dtype,
/// `axis` normalised.
using AccumulateTraceHook = ndarray (*)(OpId ufunc, const ndarray& a, int64_t axis, DType t,
                                        const std::optional<ndarray>& out);
/// Hook for sort/argsort on a traced input: `a` already flattened when the axis was None,
/// `axis` normalised; `arg` selects argsort.
using SortTraceHook = ndarray (*)(const ndarray& a, int64_t axis, bool descending, bool arg);
void set_scan_sort_trace_hooks(AccumulateTraceHook accumulate_hook, SortTraceHook sort_hook);

/// Floating-point error bits, as NumPy's error state categories.
enum FpeFlags : int { FpeDivide = 1, FpeOverflow = 2, FpeUnderflow = 4, FpeInvalid = 8 };
/// The floating-point errors (FpeFlags bits) raised by the calling thread's ops since the
/// last call, and clears them. The Python layer turns them into NumPy's RuntimeWarnings or
/// FloatingPointError according to numpy.geterr().
int take_fp_errors();

/// Threads used by eager kernels (numpy has none; like torch.set_num_threads). Default: all cores.
void set_num_threads(int n);
int get_num_threads();
/// Element count below which kernels run on the calling thread only.
void set_parallel_threshold(int64_t n);
int64_t get_parallel_threshold();

/// numpy.ufunc.accumulate along `axis` (cumsum = add.accumulate); `dtype` forces the loop
/// dtype, `out` receives the result (same shape as `a`).
ndarray accumulate(OpId ufunc, const ndarray& a, int64_t axis, std::optional<DType> dtype = std::nullopt,
                   std::optional<ndarray> out = std::nullopt);
/// The loop dtype of ufunc.reduce/accumulate of an `in` array with `dtype=` / an `out=` of
/// dtype `out`, as NumPy resolves it; TypeError (NumPy's text) when that signature has no loop.
DType reduce_loop_dtype(OpId ufunc, DType in, std::optional<DType> dtype, std::optional<DType> out);
/// The loop of ufunc.reduce/accumulate: the accumulator's (first input's and output's)
/// dtype and the second input's (they differ for ldexp's "ei->e").
struct ReduceLoop {
  DType acc, in;
};
/// The loop NumPy resolves for ufunc.reduce (accumulate: true for ufunc.accumulate, whose
/// loop must be uniform) of an `in` array with `dtype=` / an `out=` of dtype `out`.
/// TypeError with NumPy's text (or UfuncNoLoopError) when there is none.
ReduceLoop reduce_loop(OpId ufunc, DType in, std::optional<DType> dtype, std::optional<DType> out, bool accumulate);
/// numpy.argmax/argmin along `axis` (nullopt: the flattened array); the first occurrence
/// wins and NaN counts as the extreme. ValueError "attempt to get argmax of an empty sequence".
ndarray arg_reduce(OpId op, const ndarray& a, std::optional<int64_t> axis, bool keepdims = false);
/// numpy.ufunc.outer: result[i..., j...] = op(a[i...], b[j...]).
std::vector<ndarray> outer(OpId op, const Operand& a, const Operand& b, const UfuncOptions& opts = {});
/// numpy.ufunc.at: unbuffered in-place op(a[indices], b) for flat int64 indices (C-order
/// positions) into `a`, which may be any writeable view (the Python layer turns any NumPy
/// index into flat positions). Each result is cast back into `a` unsafely.
void ufunc_at(OpId op, const ndarray& a, const ndarray& flat_indices, const std::optional<Operand>& b);

/// numpy.where(cond, x, y): `x` where `cond` is true else `y`, broadcast; dtype is
/// result_type(x, y) (weak Python scalars per NEP 50).
ndarray where(const ndarray& cond, const Operand& x, const Operand& y);

/// Broadcast shape of several shapes (numpy.broadcast_shapes); ValueError when they do not broadcast.
Shape broadcast_shapes(std::span<const Shape> shapes);
/// A read-only view of `a` broadcast to `shape` (numpy.broadcast_to).
ndarray broadcast_to(const ndarray& a, std::span<const int64_t> shape);

}  // namespace npc
