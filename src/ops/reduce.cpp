// numpy.ufunc.reduce: execution (the iteration plan is in reduce_plan.cpp, the typed inner
// loops in reduce_inner.cpp, the loop resolution in reduce_resolve.cpp, accumulate in
// accumulate.cpp, ufunc.at in ufunc_at.cpp, argmin/argmax in arg_reduce.cpp).
//
// Note [reduction order]
// Reductions visit the elements in NumPy's order, so float sums and products have NumPy's
// bits (Note [NumPy reduction order] in reduce_plan.cpp has the rules): when the innermost
// iteration dim is reduced, each output element is reduced over its own blocks piece by
// piece, each piece with NumPy's pairwise summation for float add, added to the output.
// Otherwise the output is accumulated slice by slice with the binary ufunc's own loop
// (out = op(out, a[..., i, ...])), which is what NumPy does for outer-axis reductions.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "npc/creation.hpp"
#include "npc/fperror.hpp"
#include "ops/exec.hpp"
#include "ops/loops.hpp"
#include "ops/reduce_internal.hpp"
#include "ops/reduce_exec.hpp"
#include "ops/reduce_simd.hpp"
#include "core/cast.hpp"

#if NPC_HAVE_OPENMP
#include <omp.h>
#endif

namespace npc {
namespace ops {
// False for a bool array holding bytes other than 0/1 (Note [bool bytes] in ufunc.cpp).
bool bool_bytes_normal(const ndarray& a);
}  // namespace ops

using namespace reduction;  // the plan, inner loops and index walking (ops/reduce_exec.hpp)

namespace {

std::vector<bool> axes_mask(const ndarray& a, const std::optional<std::vector<int64_t>>& axes) {
  std::vector<bool> m(a.ndim(), !axes.has_value());
  if (axes) {
    for (int64_t ax : *axes) {
      if (a.ndim() == 0 && (ax == 0 || ax == -1)) continue;  // NumPy accepts axis 0/-1 on 0-d arrays
      int64_t d = normalize_axis(ax, a.ndim());
      if (m[d]) throw ValueError("duplicate value in 'axis'");
      m[d] = true;
    }
  }
  return m;
}

std::optional<Scalar> identity_of(OpId op, DType t) {
  switch (op_info(op).identity) {
    case Identity::Zero: return Scalar::from_int(0);
    case Identity::One: return Scalar::from_int(1);
    case Identity::AllOnes: return Scalar::from_int(-1);
    case Identity::True_: return Scalar::from_bool(true);
    case Identity::False_: return Scalar::from_bool(false);
    case Identity::MinusInf: return Scalar::from_double(-std::numeric_limits<double>::infinity());
    default: break;
  }
  (void)t;
  return std::nullopt;
}

// Note [reorderable reductions]: NumPy reduces over several axes at once only with ufuncs
// whose result does not depend on the order (those with an identity, and those whose
// identity column is ReorderableNone: maximum/minimum/fmax/fmin); subtract, divide, power,
// comparisons and the like take at most one axis.
void check_reorderable(OpId op, const ndarray& a, const ReduceOptions& opts) {
  const size_t naxes = opts.axes ? opts.axes->size() : static_cast<size_t>(a.ndim());
  if (naxes <= 1 || op_info(op).identity != Identity::None_) return;
  throw ValueError("reduction operation '" + std::string(op_info(op).name) +
                   "' is not reorderable, so at most one axis may be specified");
}

}  // namespace

// Integer power loops reject negative exponents (as the ufunc call does). In a reduce or
// accumulate along `ax` the exponents are every element after the first (all of them when
// an initial value leads).
void check_int_power_exponents(OpId op, DType t, const ndarray& a, int64_t ax, bool all) {
  if (op != OpId::power || kind(t) != Kind::Signed || a.size() == 0) return;
  ndarray e = a;
  if (!all && a.ndim() > 0) {
    Shape sh = a.shape();
    if (sh[ax] <= 1) return;
    sh[ax] -= 1;
    e = a.with_geometry(a.offset() + a.strides()[ax], a.dtype(), sh, a.strides());
  }
  ndarray v = e.astype(DType::Int64, Order::C);
  const int64_t* p = reinterpret_cast<const int64_t*>(v.data());
  for (int64_t k = 0; k < v.size(); ++k)
    if (p[k] < 0) throw ValueError("Integers to negative integer powers are not allowed.");
}

OpId ufunc_of(OpId op) {
  const OpInfo& info = op_info(op);
  if (info.kind == OpKind::Reduce) return *op_from_name(info.loops);
  if (info.kind != OpKind::Ufunc) throw TypeError("'" + std::string(info.name) + "' is not a ufunc");
  return op;
}

ops::LoopFn loop_for(OpId op, DType t) {
  for (const auto& l : ops::loops_of(op))
    if (l.in.size() == 2 && l.in[0] == t && l.in[1] == t && l.out[0] == t) return l.fn;
  return nullptr;
}

namespace {

// Note [cast pieces]
// Where NumPy casts the input through its 8192-element buffer (sum(dtype=...), mean of
// ints or float16), npc casts each piece on its way into the loop, in a small per-thread
// buffer, instead of casting the whole array into a temporary first (that costs a pass over
// a larger array and its page faults). Only for casts that are exact or round without
// raising a floating-point flag (widening floats; ints and bool into floats or other ints;
// complex64 into complex128): a cast that can overflow reports "... in cast" separately
// from the reduction, so it keeps the whole-array cast.
bool cast_in_pieces(DType from, DType to) {
  if (from == to) return false;
  if (kind(from) == Kind::Bool || is_integer(from))
    return to == DType::Float64 || to == DType::Float32 || is_integer(to);
  if (from == DType::Float16) return to == DType::Float32 || to == DType::Float64;
  if (from == DType::Float32) return to == DType::Float64;
  return from == DType::Complex64 && to == DType::Complex128;
}

// Note [chunked reductions]
// Reductions whose result does not depend on how the elements are grouped may split one
// output's elements among threads in chunks and combine the chunk results in order. Those
// are the integer and bool loops of the reorderable ufuncs (the identity column of ops.def is
// not None_: an identity, or NumPy's ReorderableNone): NumPy reduces them over several axes
// at once because they are associative and commutative, and integer and bool arithmetic is
// exact (add, multiply, maximum, minimum, fmax, fmin, gcd, the bitwise and logical ops;
// tests/python/test_op_table.py checks that each such loop is associative). Float max/min
// qualify for one long run (their chunks are combined in order, so the first NaN still wins).
bool exact_any_grouping(OpId op, DType t) {
  const OpInfo& row = op_info(op);
  return (is_integer(t) || kind(t) == Kind::Bool) && row.kind == OpKind::Ufunc && row.nin == 2 && row.nout == 1 &&
         row.identity != Identity::None_;
}

// Note [small reductions]
// a.sum(), a.max(), ... of a small C-contiguous array with no options: the same arithmetic
// as the general path below (identity or first element, then the typed inner reduction over
// one run; below the parallel threshold there is no split), without its bookkeeping.
std::optional<ndarray> reduce_small_contiguous(OpId op, const ndarray& a, const ReduceOptions& opts) {
  if (opts.keepdims || opts.dtype || opts.out || opts.initial || opts.where) return std::nullopt;
  // axis=0 (or -1) of a 1-d array (ufunc.reduce's default) is the full reduction.
  if (opts.axes && !(a.ndim() == 1 && opts.axes->size() == 1 && ((*opts.axes)[0] == 0 || (*opts.axes)[0] == -1)))
    return std::nullopt;
  if (op != OpId::add && op != OpId::multiply && op != OpId::maximum && op != OpId::minimum) return std::nullopt;
  const DType t = a.dtype();
  if (t != DType::Float64 && t != DType::Float32 && t != DType::Int64 && t != DType::UInt64) return std::nullopt;
  const int64_t n = a.size();
  if (n == 0 || !a.is_c_contiguous() || ops::eager_threads(n) > 1) return std::nullopt;
  ops::LoopFn fn = loop_for(op, t);
  if (!fn) return std::nullopt;
  const InnerReduceFn inner = inner_for(op, t);
  const auto isz = static_cast<int64_t>(itemsize(t));
  ndarray res = empty(Shape{}, t);
  std::byte* acc = res.data();
  const std::byte* p = a.data();
  std::optional<Scalar> init = identity_of(op, t);
  if (init) init->store(t, acc);
  const bool fpe = ops::checks_fpe(op);
  if (fpe) ops::clear_fpe();
  if (init) {
    inner(fn, p, isz, n, acc);
  } else {
    std::memcpy(acc, p, static_cast<size_t>(isz));
    if (n > 1) inner(fn, p + isz, isz, n - 1, acc);
  }
  if (fpe)
    if (int f = ops::read_fpe()) ops::note_fpe(f);
  return res;
}

[[noreturn]] void no_identity(OpId op) {
  throw ValueError("zero-size array to reduction operation " + std::string(op_info(op).name) +
                   " which has no identity");
}

}  // namespace

namespace {
// The loop (acc, in) -> acc of a ufunc with mixed inputs (ldexp's "ei->e").
ops::LoopFn mixed_loop_for(OpId op, DType acc, DType in) {
  for (const auto& l : ops::loops_of(op))
    if (l.in.size() == 2 && l.in[0] == acc && l.in[1] == in && l.out[0] == acc) return l.fn;
  return nullptr;
}

// The where= mask of a reduction as bool, broadcast to a's shape (NumPy's ValueError when it
// does not broadcast); nullopt without where=.
std::optional<ndarray> where_mask(const ndarray& a, const ReduceOptions& opts) {
  if (!opts.where) return std::nullopt;
  ops::check_where_mask(*opts.where);
  ndarray m = *opts.where;
  std::vector<Shape> sh{a.shape(), m.shape()};
  if (broadcast_shapes(sh) != a.shape())
    throw ValueError("operands could not be broadcast together with shapes " + shape_str(a.shape()) + " " +
                     shape_str(m.shape()));
  return broadcast_to(m, a.shape());
}


// Note [mixed reduce loops]
// A reduction whose loop takes its second operand in another dtype than the accumulator
// (ldexp.reduce: "ei->e", "di->d"): NumPy's iterator feeds the input cast to that dtype and
// the accumulator in its own. Such ufuncs have no identity, so they are not reorderable and
// reduce at most one axis: the accumulator starts from `initial` (or the first elements,
// through out= as in Note [reduce through a narrower out]) and takes the slices along that
// axis in order; where= skips the masked elements.
ndarray reduce_mixed(OpId op, ops::LoopFn fn, const ndarray& a, const ReduceOptions& opts,
                     const std::vector<bool>& red, DType t, DType tin, const std::optional<Scalar>& init,
                     bool through_out) {
  int rax = -1;
  Shape ks;
  for (int d = 0; d < a.ndim(); ++d) {
    if (red[d]) rax = d;
    else ks.push_back(a.shape()[d]);
  }
  const std::optional<ndarray> mb = where_mask(a, opts);
  const int64_t n = rax >= 0 ? a.shape()[rax] : 1;
  // Element i along the reduced axis (the array itself when no axis is reduced).
  auto slice = [&](const ndarray& x, int64_t i) {
    Strides st;
    for (int d = 0; d < x.ndim(); ++d)
      if (d != rax) st.push_back(x.strides()[d]);
    return x.with_geometry(x.offset() + (rax >= 0 ? i * x.strides()[rax] : 0), x.dtype(), ks, st);
  };
  ndarray res = empty(ks, t);
  const int64_t nout = res.size();
  if (nout == 0) return res;
  int64_t start = 0;
  if (init) {
    res.fill(*init);
  } else {
    const ndarray first = slice(a, 0);
    copy_into(res, through_out ? first.astype(opts.out->dtype()) : first);
    start = 1;
  }
  const auto isz = static_cast<int64_t>(itemsize(t)), jsz = static_cast<int64_t>(itemsize(tin));
  int flags = 0;
  for (int64_t i = start; i < n; ++i) {
    const ndarray x = slice(a, i).astype(tin, Order::C);
    std::byte* xp = const_cast<std::byte*>(x.data());
    ops::clear_fpe();
    if (mb) {
      const ndarray m = slice(*mb, i).astype(DType::Bool, Order::C);
      const std::byte* mp = m.data();
      for (int64_t k = 0; k < nout; ++k) {
        if (mp[k] == std::byte{0}) continue;
        std::byte* ptrs[3] = {res.data() + k * isz, xp + k * jsz, res.data() + k * isz};
        int64_t st[3] = {isz, jsz, isz};
        fn(ptrs, st, 1);
      }
    } else {
      std::byte* ptrs[3] = {res.data(), xp, res.data()};
      int64_t st[3] = {isz, jsz, isz};
      fn(ptrs, st, nout);
    }
    if (ops::checks_fpe(op)) flags |= ops::read_fpe();
  }
  if (flags) ops::note_fpe(flags);
  return res;
}
}  // namespace

namespace {
ndarray reduce_c_order(OpId op_in, const ndarray& a, const ReduceOptions& opts);
}

ndarray reduce(OpId op_in, const ndarray& a, const ReduceOptions& opts) {
  if (a.is_traced()) {
    auto hook = reduce_trace_hook();
    if (!hook) throw TypeError("npc: traced array given to a reduction but no tracer is installed");
    return hook(op_in, a, opts);
  }
  ndarray r = reduce_c_order(op_in, a, opts);
  if (opts.out || r.ndim() == 0 || a.ndim() < 2) return r;
  // Note [reduction layout] in reduce_plan.cpp: NumPy's layout of the new result.
  return ops::in_axis_order(r, ops::reduce_output_axes(a, axes_mask(a, opts.axes), opts.keepdims,
                                                       opts.where ? &*opts.where : nullptr));
}

namespace {
// The reduction with its new result C-ordered (reduce lays it out as NumPy does).
ndarray reduce_c_order(OpId op_in, const ndarray& a, const ReduceOptions& opts) {
  if (!ops::bool_bytes_normal(a))  // Note [bool bytes]: nonzero bytes reduce as True
    return reduce(op_in, a.astype(DType::UInt8).view(DType::Bool), opts);
  const OpId op = ufunc_of(op_in);
  const OpInfo& info = op_info(op);
  check_reducelike(op, "reduce");
  if (auto r = reduce_small_contiguous(op, a, opts)) return std::move(*r);  // Note [small reductions]
  // NumPy's order of checks: the axes (duplicates), then the loop, then reorderability.
  std::vector<bool> red = axes_mask(a, opts.axes);
  const ReduceLoop rl = reduce_loop(op, a.dtype(), opts.dtype,
                                    opts.out ? std::optional<DType>(opts.out->dtype()) : std::nullopt, false);
  const DType t = rl.acc;
  check_reorderable(op, a, opts);
  ops::LoopFn fn = rl.in == t ? loop_for(op, t) : mixed_loop_for(op, t, rl.in);
  if (!fn) {
    throw TypeError("ufunc '" + std::string(info.name) + "' not supported for the input types, and the inputs "
                    "could not be safely coerced to any supported types according to the casting rule ''safe''");
  }
  if (opts.dtype && !can_cast(a.dtype(), t, Casting::Unsafe)) throw TypeError("bad dtype");
  if (op == OpId::power && a.ndim() > 0) {
    int64_t ax = 0;
    for (int d = 0; d < a.ndim(); ++d)
      if (red[d]) ax = d;
    check_int_power_exponents(op, t, a, ax, opts.initial.has_value());
  }

  Shape out_shape, kept_shape;
  int64_t nred = 1;
  for (int d = 0; d < a.ndim(); ++d) {
    if (red[d]) {
      nred *= a.shape()[d];
      if (opts.keepdims) out_shape.push_back(1);
    } else {
      out_shape.push_back(a.shape()[d]);
      kept_shape.push_back(a.shape()[d]);
    }
  }
  int64_t nout = shape_size(kept_shape);

  // Note [reduction identity]: NumPy starts reductions of ops with an identity (add,
  // multiply, logical and bitwise ops) from the identity, so np.sum([-0.0]) is 0.0; ops
  // without one (maximum, minimum) start from the first element.
  std::optional<Scalar> init = opts.initial;
  if (!init) init = identity_of(op, t);
  // Note [reduce through a narrower out]
  // NumPy reduces into out= itself (reduction.c): it writes the start values into out
  // first (initial= or the identity, packed in the loop dtype; without one, the first
  // elements along the reduced axes, cast from the input) and its iterator reads them back
  // into the loop dtype. When the loop dtype does not cast to out's safely, that round trip
  // changes them: np.sum([[0.4, 0.4]], axis=1, initial=2.5, out=int64) starts from 2.0 and
  // gives 2. npc applies the same round trip to its start values.
  const bool through_out = opts.out && opts.out->dtype() != t && !can_cast(t, opts.out->dtype(), Casting::Safe);
  // The casts into out warn as NumPy's do, "... encountered in cast", before the
  // reduction's own errors (reported as "reduce"; the flags already pending stay so).
  const int pending_before = through_out ? take_fp_flags() : 0;
  if (init && through_out) {
    ndarray v = empty(Shape{}, t);
    v.fill(*init);
    init = Scalar::load(t, v.astype(opts.out->dtype()).astype(t).data());
  }
  if (!init && (nred == 0 || opts.where)) {
    if (!init && opts.where)
      throw ValueError("reduction operation '" + std::string(info.name) +
                       "' does not have an identity, so to use a where mask one has to specify 'initial'");
    // NumPy raises for any reduced axis of length 0, even when the result is empty too
    // (np.min(np.zeros((0, 0)), axis=0)).
    if (!init) no_identity(op);
  }
  if (init && op == OpId::logical_and) init = Scalar::from_bool(init->as_bool());

  // The result in the loop dtype (kept dims in order); then keepdims and out=.
  auto finish = [&](ndarray res) -> ndarray {
    if (opts.keepdims) res = res.reshape(out_shape);
    if (opts.out) {
      const ndarray& o = *opts.out;
      if (o.shape() != res.shape()) {
        throw ValueError("output parameter for reduction operation " + std::string(info.name) +
                         " has the wrong number of dimensions: Found " + std::to_string(o.ndim()) +
                         " but expected " + std::to_string(res.ndim()));
      }
      copy_into(o, res);
      return o;
    }
    return res;
  };
  if (rl.in != t) {  // Note [mixed reduce loops]
    add_fp_flags(pending_before);
    return finish(reduce_mixed(op, fn, a, opts, red, t, rl.in, init, through_out));
  }

  // Note [NumPy reduction order]: the plan follows NumPy's iterator over the input as given
  // (and the where= mask). Where NumPy casts through its buffers, npc casts up front into a
  // copy laid out in the plan's order, so the plan's dims are single strides in it as well.
  const std::optional<ndarray> mb = where_mask(a, opts);
  const ReducePlan plan = numpy_reduce_plan(a.shape(), a.strides(), mb ? &mb->strides() : nullptr, red, a.dtype() != t,
                                            opts.out && opts.out->dtype() != t);
  // Without a start value, the first elements go through out (Note [reduce through a
  // narrower out]): they are replaced in a copy of the input in `t`.
  const bool first_through = through_out && !init && nred > 0 && nout > 0;
  // Note [cast pieces]: each piece (or row segment of an outer reduction) is cast on its way
  // into the loop, as NumPy's buffer does, instead of casting the whole array first.
  // Short pieces (many small outputs) cast the whole array first: a cast call per few
  // elements would cost more than the copy.
  int64_t piece_len = 1;
  for (size_t i = 0; i < plan.block_dims && i < plan.dims.size(); ++i) piece_len *= plan.dims[i].n;
  if (plan.piece > 0) piece_len = std::min(piece_len, plan.piece);
  const bool inner_reduced = plan.dims.empty() || plan.dims[0].red;
  const bool cast_pieces = !first_through && cast_in_pieces(a.dtype(), t) &&
                           (inner_reduced ? piece_len : plan.dims[0].n) >= 256;
  ndarray src = (a.dtype() == t || cast_pieces) && !first_through ? a : copy_in_order(a, t, plan.order);
  if (first_through) {
    // Index 0 along every reduced axis (the first element NumPy copies), as views of the
    // input and of the copy (whose strides are all positive: index 0 is at its start).
    Shape fs;
    Strides fa, fc;
    for (int d = 0; d < a.ndim(); ++d)
      if (!red[d]) { fs.push_back(a.shape()[d]); fa.push_back(a.strides()[d]); fc.push_back(src.strides()[d]); }
    const ndarray first = a.with_geometry(a.offset(), a.dtype(), fs, fa);
    copy_into(src.with_geometry(src.offset(), t, fs, fc), first.astype(opts.out->dtype()).astype(t));
  }
  if (through_out) {
    // NumPy leaves these flags raised: its check after the loop reports them again as
    // "reduce", unless a float max/min/fmax/fmin loop ran in between (those loops clear the
    // flags their NaN comparisons raise).
    int pending = pending_before;
    if (int f = take_fp_flags()) {
      add_fp_report(f, "cast");
      const bool cleared = (op == OpId::maximum || op == OpId::minimum || op == OpId::fmax || op == OpId::fmin) &&
                           is_inexact(t) && nout > 0 && nred > (init ? 0 : 1);
      if (!cleared) pending |= f;
    }
    add_fp_flags(pending);
  }
  std::optional<ndarray> mcopy;
  if (opts.where) {
    // NumPy's masked loop (generic_masked_strided_loop) runs the reduce loop on each run of
    // true mask values of an inner call and never reads masked elements: both paths below
    // skip them, reading the mask in the plan's layout.
    mcopy = copy_in_order(*mb, DType::Bool, plan.order);
  }

  // Result array (kept dims in order) with the reduction's dtype.
  ndarray res = empty(kept_shape, t);
  if (nout == 0) {
    // nothing to compute
  } else if (nred == 0) {
    res.fill(*init);
  } else {
    const int64_t isz = static_cast<int64_t>(itemsize(t));
    const bool masked = mcopy.has_value();
    // Note [cast pieces]: src is the input itself; pieces are cast on their way in.
    const detail::CastFn castfn = cast_pieces ? detail::get_cast(a.dtype(), t) : nullptr;
    // Casts m elements (stride fs) into dst as `t` (dense). float16 into a sum: F16C where
    // the CPU has it (Note [half conversion] in reduce_simd.cpp; a sum quiets NaNs anyway).
    const bool half_sum = castfn && a.dtype() == DType::Float16 && op == OpId::add;
    auto cast_run = [&](const std::byte* from, int64_t fs, std::byte* dst, int64_t m) {
      if (half_sum && t == DType::Float32 && ops::simd::half_to_f32(from, fs, reinterpret_cast<float*>(dst), m)) return;
      if (half_sum && t == DType::Float64 && ops::simd::half_to_f64(from, fs, reinterpret_cast<double*>(dst), m)) return;
      castfn(from, fs, dst, isz, m);
    };
    // Note [reduction FP errors]: NumPy reports the flags its reduce loops raise as
    // "... in reduce"; each thread collects its own.
    const bool fpe = ops::checks_fpe(op);
    int flags = 0;
    if (init) res.fill(*init);
    std::byte* out0 = res.data();
    int nt = ops::eager_threads(nout * nred);

    if (inner_reduced) {
      // Per output element: initialise with the initial value or the first element, then
      // add the pieces of its blocks in NumPy's order (Note [NumPy reduction order]).
      InnerReduceFn inner = inner_for(op, t);
      // Block dims and the other reduced dims, innermost first (Note [index walking]), with
      // the mask's strides for the same dims (where=); the kept dims, innermost first.
      Dims bn, bs, mbs, on, os, mos, kn, ks, mks;
      for (size_t i = 0; i < plan.dims.size(); ++i) {
        const auto& d = plan.dims[i];
        if (!d.red) continue;
        const int64_t s = src.strides()[d.inner_axis];
        const int64_t ms = masked ? mcopy->strides()[d.inner_axis] : 0;
        if (i < plan.block_dims) { bn.push_back(d.n); bs.push_back(s); mbs.push_back(ms); }
        else { on.push_back(d.n); os.push_back(s); mos.push_back(ms); }
      }
      if (bn.empty()) { bn.push_back(1); bs.push_back(0); mbs.push_back(0); }
      for (int d = a.ndim() - 1; d >= 0; --d) {
        if (red[d]) continue;
        kn.push_back(src.shape()[d]);
        ks.push_back(src.strides()[d]);
        mks.push_back(masked ? mcopy->strides()[d] : 0);
      }
      int64_t run = 1;
      for (int64_t n : bn) run *= n;
      const int64_t piece = plan.piece > 0 && plan.piece < run ? plan.piece : run;
      const int64_t nruns = nred / run;
      const int64_t run_s = bs[0];
      // Each piece is one strided run of `t` in src (read in place, no buffers).
      const bool direct = bn.size() == 1 && !castfn;
      const bool one_run = direct && piece == run && !masked;
      const int64_t ssz = static_cast<int64_t>(src.itemsize());
      // A piece's elements as `t`: in place when they are one strided run of `t`, else
      // gathered in iteration order (as NumPy's buffer holds them) and cast when needed.
      auto piece_at = [&](const std::byte* p, int64_t c, int64_t m) -> std::pair<const std::byte*, int64_t> {
        if (direct) return {p + c * run_s, run_s};
        thread_local std::vector<std::byte> raw, cast;
        const std::byte* from = p + c * run_s;
        int64_t fs = run_s;
        if (bn.size() > 1) {
          raw.resize(static_cast<size_t>(m * ssz));
          gather_block(raw.data(), p, c, m, bn, bs, ssz);
          from = raw.data();
          fs = ssz;
        }
        if (!castfn) return {from, fs};
        cast.resize(static_cast<size_t>(m * isz));
        cast_run(from, fs, cast.data(), m);
        return {cast.data(), isz};
      };
      // acc = op(acc, q[0..m)), or the first element then the rest when `first`.
      auto feed = [&](std::byte* acc, bool& first, const std::byte* q, int64_t qs, int64_t m) {
        if (first) {
          std::memcpy(acc, q, static_cast<size_t>(isz));
          if (m > 1) inner(fn, q + qs, qs, m - 1, acc);
          first = false;
        } else {
          inner(fn, q, qs, m, acc);
        }
      };
      auto reduce_one = [&](int64_t j) {
        std::byte* acc = out0 + j * isz;
        const std::byte* base = src.data() + offset_of(j, kn, ks);
        const std::byte* mbase = masked ? mcopy->data() + offset_of(j, kn, mks) : nullptr;
        bool first = !init.has_value();
        int64_t oidx[64] = {};
        for (int64_t r = 0; r < nruns; ++r, next_index(oidx, on)) {
          const std::byte* p = base;
          const std::byte* mp = mbase;
          for (size_t d = 0; d < on.size(); ++d) {
            p += oidx[d] * os[d];
            if (masked) mp += oidx[d] * mos[d];
          }
          for (int64_t c = 0; c < run; c += piece) {
            const int64_t m = std::min(piece, run - c);
            const auto [q, qs] = piece_at(p, c, m);
            if (!masked) {
              feed(acc, first, q, qs, m);
              continue;
            }
            // The mask's piece, gathered the same way; each run of true mask values is its
            // own inner call (NumPy's masked loop), masked elements are never read.
            thread_local std::vector<std::byte> mgather;
            const std::byte* mq = mp + c * mbs[0];
            int64_t mqs = mbs[0];
            if (bn.size() > 1) {
              mgather.resize(static_cast<size_t>(m));
              gather_block(mgather.data(), mp, c, m, bn, mbs, 1);
              mq = mgather.data();
              mqs = 1;
            }
            for (int64_t e = 0; e < m;) {
              while (e < m && mq[e * mqs] == std::byte{0}) ++e;
              const int64_t e0 = e;
              while (e < m && mq[e * mqs] != std::byte{0}) ++e;
              if (e > e0) feed(acc, first, q + e0 * qs, qs, e - e0);
            }
          }
        }
      };
      // float16 sums accumulate in float32 (NumPy's half pairwise sum), one rounding at the end.
      const bool float_add = op == OpId::add && (t == DType::Float64 || t == DType::Float32 || t == DType::Float16);
      const int64_t ppb = (run + piece - 1) / piece;  // pieces per block
      if (nout == 1 && nt > 1 && nruns == 1 && one_run && float_add && init && run > 128) {
        // Note [threaded pairwise sum]
        // One long float run: the leaves of NumPy's own pairwise recursion (split n at
        // n/2 rounded down to a multiple of 8) are summed by the threads, then combined up
        // the same tree, so the sum has the serial (and NumPy's) bits for any thread count.
        // Eight leaves per thread, handed out one at a time, so a thread that starts late (a
        // busy machine) takes fewer.
        std::vector<std::pair<int64_t, int64_t>> leaves;  // (first element, count) in order
        const int depth = std::min(10, std::max(1, static_cast<int>(std::ceil(std::log2(8.0 * nt)))));
        auto split = [&](auto&& self, int64_t lo, int64_t n, int d) -> void {
          if (d == 0 || n <= 128) { leaves.emplace_back(lo, n); return; }
          int64_t n2 = n / 2;
          n2 -= n2 % 8;
          self(self, lo, n2, d - 1);
          self(self, lo + n2, n - n2, d - 1);
        };
        split(split, 0, run, depth);
        std::vector<double> leaf_sum(leaves.size());
        const std::byte* p0 = src.data();
        flags |= run_parallel(nt, static_cast<int64_t>(leaves.size()), true, fpe, [&](int64_t k) {
          const auto [lo, n] = leaves[static_cast<size_t>(k)];
          leaf_sum[static_cast<size_t>(k)] = pairwise_sum_of(t, p0 + lo * run_s, n, run_s);
        });
        // Combine up the tree in the recursion's order, in the run's dtype.
        size_t next = 0;
        auto combine = [&](auto&& self, int64_t n, int d) -> double {
          if (d == 0 || n <= 128) return leaf_sum[next++];
          int64_t n2 = n / 2;
          n2 -= n2 % 8;
          if (t != DType::Float64) {  // float32, and float16's float32 accumulator
            float l = static_cast<float>(self(self, n2, d - 1));
            float r = static_cast<float>(self(self, n - n2, d - 1));
            return static_cast<double>(l + r);
          }
          double l = self(self, n2, d - 1);
          return l + self(self, n - n2, d - 1);
        };
        const double total = combine(combine, run, depth);
        if (fpe) ops::clear_fpe();
        add_partial(t, out0, total);
        if (fpe) flags |= ops::read_fpe();
      } else if (nout == 1 && nt > 1 && float_add && init && !masked && nruns * ppb >= 2) {
        // Note [threaded piece sums]
        // One output over many pieces (strided or reversed blocks, casts through NumPy's
        // 8192-element buffer): the output adds each piece's pairwise sum in turn, and those
        // sums do not depend on each other. The threads compute them; the output then adds
        // them in order, so the bits are the serial loop's.
        std::vector<double> ps(static_cast<size_t>(nruns * ppb));
        flags |= run_parallel(nt, nruns * ppb, false, fpe, [&](int64_t u) {
          const int64_t r = u / ppb, c = (u % ppb) * piece, m = std::min(piece, run - c);
          const auto [q, qs] = piece_at(src.data() + offset_of(r, on, os), c, m);
          ps[static_cast<size_t>(u)] = pairwise_sum_of(t, q, m, qs);
        });
        if (fpe) ops::clear_fpe();
        for (double v : ps) add_partial(t, out0, v);
        if (fpe) flags |= ops::read_fpe();
      } else if (nout == 1 && nt > 1 && !masked &&
                 (exact_any_grouping(op, t) || ((op == OpId::maximum || op == OpId::minimum) && nruns == 1 && one_run))) {
        // Note [chunked reductions]: the output's elements in iteration order are cut into
        // eight chunks per thread (handed out one at a time: a thread that starts late on a
        // busy machine takes fewer); the chunk results are combined in order.
        const int64_t total = nruns * run;
        const int nchunks = 8 * nt;
        const int64_t chunk = ((total + nchunks - 1) / nchunks + 127) / 128 * 128;
        const int64_t cap = direct ? chunk : 8192;  // gathered or cast pieces go through small buffers
        std::vector<std::byte> parts(static_cast<size_t>(nchunks) * 16);
        std::vector<char> has(static_cast<size_t>(nchunks), 0);
        flags |= run_parallel(nt, nchunks, true, fpe, [&](int64_t k) {
          const int64_t lo = k * chunk, hi = std::min(total, lo + chunk);
          std::byte* acc = parts.data() + k * 16;
          bool first = true;
          for (int64_t e = lo; e < hi;) {
            const int64_t r = e / run, c = e % run, m = std::min({run - c, hi - e, cap});
            const auto [q, qs] = piece_at(src.data() + offset_of(r, on, os), c, m);
            feed(acc, first, q, qs, m);
            e += m;
          }
          has[static_cast<size_t>(k)] = lo < hi;
        });
        if (fpe) ops::clear_fpe();
        bool first = !init.has_value();
        for (int k = 0; k < nchunks; ++k)
          if (has[static_cast<size_t>(k)]) feed(out0, first, parts.data() + k * 16, 0, 1);
        if (fpe) flags |= ops::read_fpe();
      } else if (one_run && nruns == 1) {
        // Note [short inner reductions]
        // One strided run per output element (sum(axis=-1) of a (150, 150, 3) array): the
        // outputs go in blocks whose source offsets advance as an odometer over the kept
        // dims, instead of dividing each output's index out (which cost as much as adding
        // three numbers). Each element is fed exactly as reduce_one feeds it.
        constexpr int64_t kBlock = 1024;
        const int64_t nblocks = (nout + kBlock - 1) / kBlock;
        const std::byte* s0 = src.data();
        flags |= run_parallel(static_cast<int>(std::min<int64_t>(nt, nblocks)), nblocks, false, fpe, [&](int64_t b) {
          const int64_t j0 = b * kBlock, j1 = std::min(nout, j0 + kBlock);
          int64_t idx[64];
          int64_t off = 0, rem = j0;
          for (size_t d = 0; d < kn.size(); ++d) {
            idx[d] = rem % kn[d];
            rem /= kn[d];
            off += idx[d] * ks[d];
          }
          for (int64_t j = j0; j < j1; ++j) {
            bool first = !init.has_value();
            feed(out0 + j * isz, first, s0 + off, run_s, run);
            for (size_t d = 0; d < kn.size(); ++d) {
              off += ks[d];
              if (++idx[d] < kn[d]) break;
              off -= ks[d] * kn[d];
              idx[d] = 0;
            }
          }
        });
      } else {
        flags |= run_parallel(static_cast<int>(std::min<int64_t>(nt, nout)), nout, false, fpe, reduce_one);
      }
    } else {
      // Outer reduction (the innermost iteration dim is kept): Note [row-wise outer
      // reductions]. The reduced dims in iteration order and the kept dims, coalesced where
      // the input's, the output's and the mask's strides all chain; both innermost first.
      OuterDims g;
      std::vector<int64_t> ostride(static_cast<size_t>(a.ndim()), 0);
      {
        size_t k = 0;
        for (int d = 0; d < a.ndim(); ++d)
          if (!red[d]) ostride[static_cast<size_t>(d)] = res.strides()[k++];
      }
      for (int ax : plan.order) {
        const int64_t n = src.shape()[ax], s = src.strides()[ax], ms = masked ? mcopy->strides()[ax] : 0;
        if (red[ax]) {
          g.rn.push_back(n);
          g.rs.push_back(s);
          g.rms.push_back(ms);
          continue;
        }
        const int64_t o = ostride[static_cast<size_t>(ax)];
        if (!g.kn.empty()) {
          const int64_t last = g.kn.back();
          if (g.ks.back() * last == s && g.kos.back() * last == o && g.kms.back() * last == ms) {
            g.kn.back() *= n;
            continue;
          }
        }
        g.kn.push_back(n);
        g.ks.push_back(s);
        g.kos.push_back(o);
        g.kms.push_back(ms);
      }
      if (g.kn.empty()) g.kn = {1}, g.ks = {0}, g.kos = {0}, g.kms = {0};
      const bool copy_first = !init.has_value();
      // Note [complex64 reduce products]: NumPy's complex64 multiply loop is the FMA vector
      // loop unless an operand has a negative stride (then the plain product). Its input
      // stride here is the buffer's (+itemsize) when the iterator buffers the input, else the
      // input's own stride along the innermost dim (Note [NumPy reduction order]).
      const bool c64_mul = op == OpId::multiply && t == DType::Complex64;
      const bool plain = !plan.in_buffered && plan.in_stride0 < 0;
      std::optional<ops::simd::RowOp> row_op;
      if (op == OpId::add) row_op = ops::simd::RowOp::Add;
      else if (op == OpId::multiply) row_op = ops::simd::RowOp::Multiply;
      else if (op == OpId::maximum) row_op = ops::simd::RowOp::Max;
      else if (op == OpId::minimum) row_op = ops::simd::RowOp::Min;
      // o[i] = op(o[i], q[i]) for i < n (byte strides).
      auto apply = [&](std::byte* o, int64_t ost, const std::byte* q, int64_t qs, int64_t n) {
        if (c64_mul) {  // npk::mul_plain or npk::mul (its NaNs: Note [NaNs of the complex product])
          std::byte* ptrs[3] = {o, const_cast<std::byte*>(q), o};
          int64_t st[3] = {ost, qs, ost};
          ops::loop_variant(OpId::multiply, DType::Complex64, plain)(ptrs, st, n);
          return;
        }
        if (row_op && ost == isz && qs % isz == 0) {  // the vector loops (Note [row accumulation])
          if (t == DType::Float64 && ops::simd::rows_f64(*row_op, reinterpret_cast<double*>(o),
                                                         reinterpret_cast<const double*>(q), qs / isz, n))
            return;
          if (t == DType::Float32 && ops::simd::rows_f32(*row_op, reinterpret_cast<float*>(o),
                                                         reinterpret_cast<const float*>(q), qs / isz, n))
            return;
        }
        std::byte* ptrs[3] = {o, const_cast<std::byte*>(q), o};
        int64_t st[3] = {ost, qs, ost};
        fn(ptrs, st, n);
      };
      auto segment = [&](std::byte* o, int64_t ost, const std::byte* q, int64_t qs, const std::byte* mq, int64_t mqs,
                         int64_t n, bool first) {
        if (castfn) {  // Note [cast pieces]
          thread_local std::vector<std::byte> cbuf;
          cbuf.resize(static_cast<size_t>(n * isz));
          cast_run(q, qs, cbuf.data(), n);
          q = cbuf.data();
          qs = isz;
        }
        if (mq) {
          // where=: NumPy's masked loop never touches masked elements (adding an identity in
          // their place would not keep every signed zero of complex products): each run of
          // true mask values is applied on its own. (where= requires an initial value.)
          for (int64_t e = 0; e < n;) {
            while (e < n && mq[e * mqs] == std::byte{0}) ++e;
            const int64_t e0 = e;
            while (e < n && mq[e * mqs] != std::byte{0}) ++e;
            if (e > e0) apply(o + e0 * ost, ost, q + e0 * qs, qs, e - e0);
          }
        } else if (first && copy_first) {
          for (int64_t i = 0; i < n; ++i) std::memcpy(o + i * ost, q + i * qs, static_cast<size_t>(isz));
        } else {
          apply(o, ost, q, qs, n);
        }
      };
      flags |= outer_rows(g, out0, src.data(), masked ? mcopy->data() : nullptr, isz, nt, fpe, segment);
    }
    if (flags) ops::note_fpe(flags);
  }
  return finish(std::move(res));
}

}  // namespace

}  // namespace npc
