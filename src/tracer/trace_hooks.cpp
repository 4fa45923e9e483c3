// The op hooks that record into the trace context: ufuncs (comparisons included),
// reductions, argmin/argmax, scans and sorts, where, copies and writes. Indexing is in
// trace_index.cpp. See trace.hpp.
#include <algorithm>
#include <numeric>
#include <string>

#include "npc/creation.hpp"
#include "npc/fperror.hpp"
#include "npc/ops.hpp"
#include "ops/loops.hpp"  // UfuncCastingError (the eager path's casting errors)
#include "ops/one_element_loops.hpp"
#include "tracer/trace_internal.hpp"

namespace npc::tracer {

Context& ctx_or_throw() {
  Context* c = current();
  if (!c) throw ValueError("a traced array was used outside the npc.compile call that created it");
  return *c;
}

ir::NodeRef unify(ir::Graph& g, ir::NodeRef n, const ir::SymShape& shape) {
  ir::SymShape aligned = n->shape;
  size_t lead = shape.size() - aligned.size();
  for (size_t d = 0; d < aligned.size(); ++d)
    if (!(aligned[d].is_static() && aligned[d].value() == 1)) aligned[d] = shape[lead + d];
  return aligned == n->shape ? n : g.reshape(n, aligned);
}

namespace {
constexpr Identity kIdentity[] = {
#define NPC_UFUNC(name, nin, nout, identity, ...) Identity::identity,
#define NPC_REDUCE(name, ...) Identity::None_,
#define NPC_PRIM(name, nin, ...) Identity::None_,
#include "npc/ops.def"
};

// Runs a call that the graph does not capture: a graph break, then eager execution.
std::vector<Operand> realized(std::span<const Operand> in) {
  std::vector<Operand> r(in.begin(), in.end());
  for (auto& o : r) o.array.realize();
  return r;
}

// Note [mixed int64/uint64 comparisons]
// NumPy 2 compares int64 with uint64 exactly (its loops "qQ->?" and "Qq->?"), where a cast to
// either side would wrap. Graph nodes take operands of one dtype (kernels do no promotion), so
// the tracer records the exact comparison as uniform ones: with `s` the int64 operand and `u`
// the uint64 one, s < u is (s < 0) | (uint64(s) < u), s > u is !(s < 0) & (uint64(s) > u),
// and likewise for the other four (the wrapped uint64(s) is only consulted when s >= 0).
ir::NodeRef mixed_compare(ir::Graph& g, OpId op, ir::NodeRef a, ir::NodeRef b, const ir::SymShape& shape) {
  if (a->dtype == DType::UInt64) {  // u op s == s op' u
    std::swap(a, b);
    op = op == OpId::less ? OpId::greater : op == OpId::greater ? OpId::less
         : op == OpId::less_equal ? OpId::greater_equal : op == OpId::greater_equal ? OpId::less_equal : op;
  }
  ir::NodeRef zero = g.broadcast(g.constant(Scalar::from_int(0)), shape);
  std::vector<ir::NodeRef> args{a, zero};
  ir::NodeRef neg = g.ufunc(OpId::less, args, DType::Bool);
  args = {g.cast(a, DType::UInt64), b};
  ir::NodeRef cmp = g.ufunc(op, args, DType::Bool);
  // Negative s: less, less_equal and not_equal are true, the others false.
  const bool neg_true = op == OpId::less || op == OpId::less_equal || op == OpId::not_equal;
  if (!neg_true) {
    args = {neg};
    neg = g.ufunc(OpId::logical_not, args, DType::Bool);
  }
  args = {neg, cmp};
  return g.ufunc(neg_true ? OpId::logical_or : OpId::logical_and, args, DType::Bool);
}

// Note [quiet scalar complex comparisons]
// NumPy's complex ordering loops (less, greater, ...) raise "invalid" on NaN parts, but its
// scalar arithmetic compares complex scalars quietly, and lexicographically without the
// loops' NaN test of the imaginary parts. A comparison recorded as scalar math (Note
// [scalar math]) is spelled with the scalars' formula over the parts, whose float
// comparisons are quiet: xr > yr || (xr == yr && xi >= yi).
bool is_ordering(OpId op) {
  return op == OpId::less || op == OpId::less_equal || op == OpId::greater || op == OpId::greater_equal;
}

ir::NodeRef quiet_complex_compare(ir::Graph& g, OpId op, ir::NodeRef a, ir::NodeRef b) {
  ir::NodeRef ar = g.component(a, false), ai = g.component(a, true);
  ir::NodeRef br = g.component(b, false), bi = g.component(b, true);
  const OpId strict = op == OpId::less || op == OpId::less_equal ? OpId::less : OpId::greater;
  auto u = [&](OpId o, std::vector<ir::NodeRef> args) { return g.ufunc(o, args, DType::Bool); };
  ir::NodeRef first = u(strict, {ar, br});
  ir::NodeRef second = u(OpId::logical_and, {u(OpId::equal, {ar, br}), u(op, {ai, bi})});
  return u(OpId::logical_or, {first, second});
}

std::vector<ndarray> ufunc_hook(OpId op, std::span<const Operand> in, const UfuncOptions& opts, const LoopTypes& loop) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  bool all_out = !opts.out.empty();
  for (auto& o : opts.out) all_out = all_out && o.has_value();
  if (opts.where && !all_out) {
    // Elements outside where= keep the output's prior content: uninitialized without out=.
    c.break_graph(std::string(ir::op_name(op)) + " with where= and no out=");
    auto ops = realized(in);
    UfuncOptions o2 = opts;
    if (o2.where) o2.where->realize();
    Suspend s;
    return call_ufunc(op, ops, o2);
  }
  // out= arrays that are not traced (not graph inputs): a graph break, as in write_hook.
  for (auto& o : opts.out)
    if (o && !o->is_traced()) {
      c.break_graph(std::string(ir::op_name(op)) + " with an out= array that is not a graph input");
      auto ops = realized(in);
      UfuncOptions o2 = opts;
      if (o2.where) o2.where->realize();
      Suspend s;
      return call_ufunc(op, ops, o2);
    }
  std::vector<std::optional<ndarray>> concrete_outs(opts.out.size());
  UfuncOptions aliased;
  const UfuncOptions* use = &opts;
  for (size_t k = 0; k < opts.out.size(); ++k)
    if (opts.out[k] && !opts.out[k]->is_traced()) {
      if (use == &opts) { aliased = opts; use = &aliased; }
      concrete_outs[k] = *opts.out[k];
      aliased.out[k] = c.traced_alias(*opts.out[k]);
    }
  if (use != &opts) {
    auto r = ufunc_hook(op, in, *use, loop);
    for (size_t k = 0; k < r.size() && k < concrete_outs.size(); ++k)
      if (concrete_outs[k]) r[k] = *concrete_outs[k];
    return r;
  }
  std::span<const Operand> fixed = in;
  const LoopTypes& lt = loop;
  // The eager path's casting checks (they come after the trace hook there): `x += 1.5` on
  // an integer array raises as eagerly.
  for (size_t i = 0; i < fixed.size() && i < lt.in.size(); ++i)
    if (!fixed[i].weak && fixed[i].array.dtype() != lt.in[i] && !is_logical_binary(op) &&
        !can_cast(fixed[i].array.dtype(), lt.in[i], opts.casting))
      throw UfuncCastingError(op, false, static_cast<int>(i), fixed[i].array.dtype(), lt.in[i], opts.casting);
  for (size_t k = 0; k < opts.out.size() && k < lt.out.size(); ++k)
    if (opts.out[k] && !can_cast(lt.out[k], opts.out[k]->dtype(), opts.casting))
      throw UfuncCastingError(op, true, static_cast<int>(k), lt.out[k], opts.out[k]->dtype(), opts.casting);
  // Note [integer powers]: NumPy raises ValueError for a negative integer exponent when the
  // loop runs, whether or not the result is used. A traced power node is dead code when its
  // result is unused, so an integer power with an exponent only known at run time (an array,
  // not a Python int) runs eagerly, at a graph break; out= arrays get the result by a write.
  if (op == OpId::power && lt.in.size() == 2 && kind(lt.in[1]) == Kind::Signed && fixed.size() == 2 &&
      !fixed[1].weak && fixed[1].array.is_traced() && !opts.where) {
    c.break_graph("integer power with an array exponent");
    auto ops = realized(fixed);
    UfuncOptions o2 = opts;
    for (auto& o : o2.out) o.reset();
    std::vector<ndarray> r;
    {
      Suspend s;
      r = call_ufunc(op, ops, o2);
    }
    for (size_t k = 0; k < r.size() && k < opts.out.size(); ++k)
      if (opts.out[k]) {
        copy_into(*opts.out[k], broadcast_to(r[k], opts.out[k]->shape()));
        r[k] = *opts.out[k];
      }
    return r;
  }
  std::vector<ir::SymShape> shapes;
  std::vector<Shape> hints;
  std::vector<ir::NodeRef> nodes;
  for (auto& o : fixed) {
    ir::NodeRef n = c.node_of_operand(o.array, o.weak);
    nodes.push_back(n);
    shapes.push_back(n->shape);
    hints.push_back(o.array.shape());
  }
  for (auto& o : opts.out)
    if (o) { shapes.push_back(c.node_of(*o)->shape); hints.push_back(o->shape()); }
  {
    // The eager path's shape checks on the traced sizes (the same exceptions and messages as
    // NumPy's iterator: the operands, out= arrays and where= mask broadcast together, then
    // each out= array has the whole shape). A replay with other sizes is traced again when
    // the graph's size constraints fail, so these checks run for them too.
    std::vector<Shape> concrete = hints;
    if (opts.where) concrete.push_back(opts.where->shape());
    const Shape whole = broadcast_operand_shapes(concrete);
    for (const auto& o : opts.out)
      if (o && o->shape() != whole)
        throw ValueError("non-broadcastable output operand with shape " + iter_shape_str(o->shape()) +
                         " doesn't match the broadcast shape " + iter_shape_str(whole));
  }
  Shape hint;
  ir::SymShape shape = c.broadcast(shapes, hints, hint);
  ir::Graph& g = c.graph();
  for (size_t i = 0; i < fixed.size() && i < lt.in.size(); ++i)
    if (fixed[i].weak) c.runtime_operand_meets(fixed[i].array, lt.in[i], nodes[i]);  // Note [runtime ints] in trace_nodes.cpp
  // Note [weak integers] in src/ops/ufunc.cpp: a Python int outside the loop dtype raises
  // OverflowError, or answers a comparison exactly, as eagerly (never a wrapped constant).
  for (size_t i = 0; i < fixed.size() && i < lt.in.size(); ++i)
    if (std::optional<bool> v = ops::weak_int_outcome(op, fixed, static_cast<int>(i), lt.in[i])) {
      std::vector<ir::NodeRef> args{g.constant(Scalar::from_bool(*v))};
      ir::NodeRef n = g.prim(OpId::fill, args, DType::Bool, shape);
      if (!opts.out.empty() && opts.out[0]) {
        c.write(*opts.out[0], n);
        return {*opts.out[0]};
      }
      return {c.new_value(n, hint)};
    }
  const std::vector<ir::NodeRef> operands(nodes.begin(), nodes.end());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = g.broadcast(g.cast(unify(g, nodes[i], shape), lt.in.at(i)), shape);
  std::vector<ndarray> result;
  ir::NodeRef mask = nullptr;
  if (opts.where) {
    // where=: a select between the result and the output's current value.
    mask = c.node_of_operand(*opts.where, false);
    ir::SymShape ms = mask->shape;
    std::vector<ir::SymShape> both{ms, shape};
    std::vector<Shape> bh{opts.where->shape(), hint};
    Shape h2;
    if (c.broadcast(both, bh, h2) != shape)
      throw ValueError("operands could not be broadcast together (where= mask)");
    mask = g.broadcast(g.cast(unify(g, mask, shape), DType::Bool), shape);
  }
  // Note [empty ufunc results]: NumPy's loop does not run for an empty result, so it raises
  // no floating-point error. A kernel may still evaluate an operand that does not depend on
  // the loop index (a constant fill) once, before its zero-trip loop: the empty result is
  // recorded as a fill instead, unless a weak scalar's cast to the loop dtype warns (NumPy
  // casts it, with its warning, before any loop: the node stays for that). The operands the
  // program computed before the call (an (n, 4) array minus its mean, n == 0: the mean is a
  // non-empty division that warns) stay in the graph as further arguments of the fill, so
  // they are still evaluated, with their warnings (Note [operands of empty results] in
  // src/fusion/lower_group.cpp).
  bool empty_result = std::any_of(shape.begin(), shape.end(), [](ir::Dim d) { return d == ir::Dim::fixed(0); });
  for (size_t i = 0; i < fixed.size() && i < lt.in.size() && empty_result; ++i)
    if (fixed[i].weak && !fixed[i].array.is_traced()) {
      // Does the weak scalar's cast to the loop dtype warn ("overflow encountered in cast")?
      Suspend s;
      const int before = take_fp_flags();
      (void)fixed[i].array.astype(lt.in[i]);
      empty_result = take_fp_flags() == 0;
      add_fp_flags(before);
    } else if (fixed[i].weak) {
      empty_result = false;
    }
  const bool mixed = nodes.size() == 2 && nodes[0]->dtype != nodes[1]->dtype && lt.out.size() == 1 &&
                     lt.out[0] == DType::Bool &&
                     (op == OpId::equal || op == OpId::not_equal || op == OpId::less || op == OpId::less_equal ||
                      op == OpId::greater || op == OpId::greater_equal);
  // Note [scalar loops]: the operands whose strides NumPy's loop sees (a cast one is buffered).
  std::vector<ndarray> strided;
  for (size_t i = 0; i < fixed.size() && i < lt.in.size(); ++i)
    if (!fixed[i].weak && fixed[i].array.dtype() == lt.in[i]) strided.push_back(fixed[i].array);
  const bool given_out = !opts.out.empty() && opts.out[0];
  if (given_out) strided.push_back(*opts.out[0]);
  std::optional<bool> scalar_loop =
      lt.in.empty() ? std::nullopt : ops::runs_scalar_loop(op, lt.in[0], strided, hint, !given_out);
  // Note [output layout] in src/ops/ufunc.cpp: new results are laid out as eagerly (an
  // F-ordered operand gives an F-ordered result). The node is recorded over the axes in that
  // order, C-contiguous as its buffer is, and the result traced as the transpose back.
  std::vector<int64_t> back;
  bool any_out = false;
  for (const auto& o : opts.out) any_out = any_out || o.has_value();
  if (!any_out) {
    std::vector<ndarray> arrays;
    for (const auto& o : fixed) arrays.push_back(o.array);
    const std::vector<int> axes = ops::output_axes(hint, opts.order, arrays);
    bool identity = true;
    for (size_t i = 0; i < axes.size(); ++i) identity = identity && axes[i] == static_cast<int>(i);
    if (!identity) {
      std::vector<int64_t> perm(axes.begin(), axes.end());
      back.resize(axes.size());
      for (size_t i = 0; i < axes.size(); ++i) back[axes[i]] = static_cast<int64_t>(i);
      for (auto& n : nodes) n = g.permute(n, perm);
      ir::SymShape ps;
      Shape ph;
      for (int ax : axes) ps.push_back(shape[ax]), ph.push_back(hint[ax]);
      shape = ps;
      hint = ph;
    }
  }
  if (!lt.in.empty() && lt.out.size() == 1 &&
      std::all_of(shape.begin(), shape.end(), [](ir::Dim d) { return d == ir::Dim::fixed(1); })) {
    // Note [one-element loops] in src/ops/kernels_arith.cpp: an output that is one of the
    // inputs (the same node), or inputs of other ranks, make NumPy iterate one element.
    std::vector<int> ndims;
    bool shares = false;
    for (size_t i = 0; i < fixed.size() && i < lt.in.size(); ++i) {
      ndims.push_back(fixed[i].array.ndim());
      shares |= given_out && !fixed[i].weak && fixed[i].array.is_traced() && opts.out[0]->is_traced() &&
                c.node_of(fixed[i].array) == c.node_of(*opts.out[0]);
    }
    if (ops::scalar_loop_of_one_element(op, lt.in[0], ndims, given_out ? opts.out[0]->ndim() : -1, shares))
      scalar_loop = true;
  }
  const int64_t op_at = c.evaluations();  // the op's out= is written with it
  for (size_t k = 0; k < lt.out.size(); ++k) {
    std::vector<ir::NodeRef> zero{g.constant(Scalar::from_int(0).cast(lt.out[k]))};
    if (empty_result)
      for (ir::NodeRef a : operands) {
        ir::NodeRef base = a;
        while (base->kind == ir::NodeKind::View) base = base->args[0];
        const bool computed = base->kind == ir::NodeKind::Ufunc || base->kind == ir::NodeKind::Reduce ||
                              base->kind == ir::NodeKind::Cast || base->kind == ir::NodeKind::Prim ||
                              base->kind == ir::NodeKind::Call;
        const bool empty = std::any_of(base->shape.begin(), base->shape.end(), [](ir::Dim d) { return d == ir::Dim::fixed(0); });
        if (base->kind == ir::NodeKind::Prim && base->op == OpId::fill)  // an empty result itself: its operands
          zero.insert(zero.end(), base->args.begin() + 1, base->args.end());
        else if (computed && !empty)
          zero.push_back(a);
      }
    ir::NodeRef n = empty_result ? g.prim(OpId::fill, zero, lt.out[k], shape)  // Note [empty ufunc results]
                    : mixed      ? mixed_compare(g, op, nodes[0], nodes[1], shape)  // Note [mixed int64/uint64 comparisons]
                    : g_scalar_math && is_ordering(op) && nodes.size() == 2 && is_complex(nodes[0]->dtype)
                        ? quiet_complex_compare(g, op, nodes[0], nodes[1])  // Note [quiet scalar complex comparisons]
                                 : g.ufunc(op, nodes, lt.out[k], static_cast<int>(k), g_scalar_math, scalar_loop);  // Note [scalar math]
    if (mask) {
      ir::NodeRef cur = g.broadcast(g.cast(c.node_of(*opts.out[k]), lt.out[k]), shape);
      std::vector<ir::NodeRef> sel{mask, n, cur};
      n = g.prim(OpId::where, sel, lt.out[k], shape);
    }
    if (k < opts.out.size() && opts.out[k]) {
      n = g.cast(n, opts.out[k]->dtype(), op);  // the ufunc's own cast into out=
      c.write(*opts.out[k], n, op_at);
      result.push_back(*opts.out[k]);
    } else {
      ndarray r = c.new_value(n, hint);
      result.push_back(back.empty() ? r : r.transpose(back));
    }
  }
  return result;
}

// Value `r` (shape `hint`) laid out with its axes in order `axes` (outermost first; empty:
// C order): a copy of the permuted node is the buffer's value (C-contiguous, as its buffer
// is), traced as the transpose back. (A view would not do: the transpose back of a permuted
// view is `r` again, in r's C order.) The reduction itself stays over the operand as traced,
// which keeps NumPy's summation order (Note [NumPy reduction order] in src/ops/reduce_plan.cpp).
ndarray laid_out_value(Context& c, ir::NodeRef r, const Shape& hint, const std::vector<int>& axes) {
  bool identity = true;
  for (size_t i = 0; i < axes.size(); ++i) identity = identity && axes[i] == static_cast<int>(i);
  if (identity) return c.new_value(r, hint);
  ir::Graph& g = c.graph();
  const std::vector<int64_t> perm(axes.begin(), axes.end());
  std::vector<int64_t> back(axes.size());
  Shape ph;
  for (size_t i = 0; i < axes.size(); ++i) back[axes[i]] = static_cast<int64_t>(i), ph.push_back(hint[axes[i]]);
  ir::NodeRef p = g.permute(r, perm);
  const int64_t serial = static_cast<int64_t>(g.nodes().size());  // as Note [distinct buffers]'s copies
  p = g.prim(OpId::copy, std::span<const ir::NodeRef>(&p, 1), p->dtype, p->shape, std::span<const int64_t>(&serial, 1));
  return c.new_value(p, ph).transpose(back);
}

ndarray reduce_hook(OpId op, const ndarray& a, const ReduceOptions& opts) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  // Reduction rows (sum, max, ...) name their binary ufunc; graphs record the ufunc.
  if (op_info(op).kind == OpKind::Reduce) op = *op_from_name(op_info(op).loops);
  const bool concrete_out = opts.out && !opts.out->is_traced();
  // NumPy's loop for this reduction, as eager resolves it (NumPy's TypeErrors where there is
  // none). A mixed loop (ldexp's "ei->e": the accumulator and the reduced elements differ)
  // is not a graph reduce node: it runs eagerly.
  const ReduceLoop loop = reduce_loop(op, a.dtype(), opts.dtype,
                                      opts.out ? std::optional<DType>(opts.out->dtype()) : std::nullopt, false);
  if (opts.where || concrete_out || loop.acc != loop.in) {
    c.break_graph("reduce " + std::string(ir::op_name(op)) +
                  (opts.where ? " with where=" : concrete_out ? " with an out= array that is not a graph input"
                                                              : " with a mixed-dtype loop"));
    ndarray x = a;
    x.realize();
    ReduceOptions o2 = opts;
    if (o2.where) o2.where->realize();
    Suspend s;
    return reduce(op, x, o2);
  }
  ir::NodeRef n = c.node_of(a);
  std::vector<int64_t> axes;
  if (opts.axes) {
    for (auto ax : *opts.axes)
      if (!(a.ndim() == 0 && (ax == 0 || ax == -1)))  // NumPy accepts axis 0/-1 on 0-d arrays, as eager does
        axes.push_back(normalize_axis(ax, a.ndim()));
  } else {
    for (int d = 0; d < a.ndim(); ++d) axes.push_back(d);
  }
  if (opts.out) {  // NumPy's check of out='s shape, as eager's (src/ops/reduce.cpp)
    Shape want;
    for (int d = 0; d < a.ndim(); ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) want.push_back(a.shape()[d]);
      else if (opts.keepdims) want.push_back(1);
    if (opts.out->shape() != want)
      throw ValueError("output parameter for reduction operation " + std::string(ir::op_name(op)) +
                       " has the wrong number of dimensions: Found " + std::to_string(opts.out->ndim()) +
                       " but expected " + std::to_string(want.size()));
  }
  const DType t = loop.acc;
  bool empty = false;
  for (auto ax : axes) empty = empty || a.shape()[ax] == 0;
  const Identity id = kIdentity[static_cast<int>(op)];
  if (empty && !opts.initial && (id == Identity::None_ || id == Identity::ReorderableNone))
    throw ValueError("zero-size array to reduction operation " + std::string(ir::op_name(op)) + " which has no identity");
  ir::Graph& g = c.graph();
  std::optional<Scalar> init;
  if (opts.initial) init = opts.initial->cast(t);
  // No axis to reduce (a 0-d operand, axis=()): NumPy still starts from the identity (0 +
  // -0.0 is 0.0, 1 * (nan-infj) is nan+nanj with "invalid value encountered in reduce"), so
  // the operand gets a length-1 axis reduced like any other; without an identity each element
  // is its own result, in the loop dtype.
  ir::NodeRef r;
  const int64_t op_at = c.evaluations();  // the reduction's out= is written with it
  // Note [buffered reduction casts]
  // NumPy casts a sum's input into its loop dtype (sum(dtype=...), the mean of ints or
  // float16) through its 8192-element buffer, and each piece's pairwise sum is added to the
  // output in turn; a sum of an array the program cast itself (a.astype(f8).sum()) is one
  // pairwise run. The two differ in the last bits past 8192 elements, so the sum's own cast is
  // marked (the Cast node's op is the sum row, which names its errors "reduce", as NumPy
  // does), and the fused backend adds such a sum per piece of 8192 (lower_reduce.cpp).
  const bool buffered = op == OpId::add && a.dtype() != t && (is_inexact(t));
  auto in_loop_dtype = [&](ir::NodeRef x) { return buffered ? g.cast(x, t, OpId::sum) : g.cast(x, t); };
  if (axes.empty() && !init && id != Identity::None_ && id != Identity::ReorderableNone) {
    ir::SymShape s1 = n->shape;
    s1.push_back(ir::Dim::fixed(1));
    const int64_t last = a.ndim();
    r = g.reduce(op, g.reshape(in_loop_dtype(n), std::move(s1)), std::span<const int64_t>(&last, 1), false, t, init);
  } else {
    r = axes.empty() && !init ? g.cast(n, t) : g.reduce(op, in_loop_dtype(n), axes, opts.keepdims, t, init);
  }
  Shape hint;
  std::sort(axes.begin(), axes.end());
  for (int d = 0; d < a.ndim(); ++d) {
    bool red = std::binary_search(axes.begin(), axes.end(), d);
    if (!red) hint.push_back(a.shape()[d]);
    else if (opts.keepdims) hint.push_back(1);
  }
  if (opts.out) {
    c.write(*opts.out, r, op_at);
    return *opts.out;
  }
  // Note [reduction layout] in src/ops/reduce_plan.cpp: the result laid out as eagerly.
  std::vector<bool> red(a.ndim(), false);
  for (auto ax : axes) red[ax] = true;
  return laid_out_value(c, r, hint, a.ndim() < 2 ? std::vector<int>{} : ops::reduce_output_axes(a, red, opts.keepdims));
}


// argmin/argmax: a Prim node with params [axis, keepdims] (the fused backend's argreduce).
// axis=None reduces the C-order flattening: a reshape to one axis first.
ndarray arg_hook(OpId op, const ndarray& a, std::optional<int64_t> axis, bool keepdims) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  ir::Graph& g = c.graph();
  ir::NodeRef n = c.node_of(a);
  if (!axis || a.ndim() == 0) {
    if (!all_static(n->shape)) {
      c.break_graph(std::string(ir::op_name(op)) + " of a flattened array with symbolic sizes");
      ndarray x = a;
      x.realize();
      Suspend s;
      return arg_reduce(op, x, axis, keepdims);
    }
    ir::NodeRef flat = g.reshape(n, ir::SymShape{ir::Dim::fixed(a.size())});
    std::vector<int64_t> p{0, 0};
    ir::NodeRef r = g.prim(op, std::span<const ir::NodeRef>(&flat, 1), DType::Int64, ir::SymShape{}, p);
    Shape hint;
    if (keepdims) {
      hint.assign(a.ndim(), 1);
      r = g.reshape(r, ir::static_shape(hint));
    }
    return c.new_value(r, hint);
  }
  int64_t ax = normalize_axis(*axis, a.ndim());
  ir::SymShape shape;
  Shape hint;
  for (int d = 0; d < a.ndim(); ++d) {
    if (d != ax) { shape.push_back(n->shape[d]); hint.push_back(a.shape()[d]); }
    else if (keepdims) { shape.push_back(ir::Dim::fixed(1)); hint.push_back(1); }
  }
  std::vector<int64_t> p{ax, keepdims ? 1 : 0};
  ir::NodeRef r = g.prim(op, std::span<const ir::NodeRef>(&n, 1), DType::Int64, shape, p);
  return c.new_value(r, hint);
}

// Note [traced scans and sorts]
// cumsum/cumprod (add/multiply.accumulate) are Prim nodes with params [axis] over the input
// cast to the loop dtype (accumulate resolved it: int64 for small ints and bool, `dtype=`);
// axis=None was flattened by the caller. Other accumulations (maximum.accumulate, ...) are
// host calls (Call nodes) of the eager accumulate: such graphs run on the eager interpreter.
// sort/argsort are Prim nodes with params [axis, descending] over the input
// (argsort: int64, NumPy's intp). Backends run them with npc's eager accumulate and sort:
// the fused backend as library calls between its kernels (Note [library calls]).
ndarray accumulate_hook(OpId op, const ndarray& a, int64_t axis, DType t, const std::optional<ndarray>& out) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  if (out && out->shape() != a.shape()) throw ValueError("output array has the wrong shape");
  if (out && !out->is_traced()) {  // not a graph input: a graph break (see write_hook)
    c.break_graph(std::string(ir::op_name(op)) + ".accumulate with an out= array that is not a graph input");
    ndarray x = a;
    if (x.is_traced()) x.realize();
    Suspend s;
    return accumulate(op, x, axis, t, out);
  }
  ir::Graph& g = c.graph();
  ir::NodeRef r;
  const int64_t op_at = c.evaluations();  // the accumulation's out= is written with it
  if (op == OpId::add || op == OpId::multiply) {
    ir::NodeRef n = g.cast(c.node_of(a), t);
    std::vector<int64_t> p{axis};
    r = g.prim(op == OpId::add ? OpId::cumsum : OpId::cumprod, std::span<const ir::NodeRef>(&n, 1), t, n->shape, p);
  } else {
    // Other accumulations (maximum, subtract, logical_and, ...) are host calls of npc's eager
    // accumulate on the input as it is (it casts to the loop dtype itself); it reports its
    // floating-point errors as the eager method does ("... encountered in accumulate").
    ir::NodeRef n = c.node_of(a);
    ir::HostCall fn = [op, axis, t](std::span<const ndarray> args) {
      ndarray res = accumulate(op, args[0], axis, t);
      if (int f = take_fp_errors() | take_fp_flags()) add_fp_report(f, "accumulate");
      return res;
    };
    r = g.call(std::move(fn), std::string(ir::op_name(op)) + ".accumulate", std::span<const ir::NodeRef>(&n, 1), t,
               n->shape);
  }
  if (out) {
    c.write(*out, r, op_at);
    return *out;
  }
  // Note [reduction layout] in src/ops/reduce_plan.cpp: the result laid out as eagerly.
  return laid_out_value(c, r, a.shape(),
                        a.ndim() < 2 ? std::vector<int>{}
                                     : ops::reduce_output_axes(a, std::vector<bool>(a.ndim(), false), true));
}

// A new value laid out with its axes in order `axes` (outermost first; Note [output layout]
// in src/ops/ufunc.cpp): the node `make` builds over the operand nodes permuted to that order
// (C-contiguous, as its buffer is), traced as the transpose back.
template <class Make>
ndarray laid_out(Context& c, const std::vector<int>& axes, std::vector<ir::NodeRef>& nodes, ir::SymShape shape,
                 Shape hint, Make make) {
  bool identity = true;
  for (size_t i = 0; i < axes.size(); ++i) identity = identity && axes[i] == static_cast<int>(i);
  if (identity) return c.new_value(make(nodes, shape), hint);
  const std::vector<int64_t> perm(axes.begin(), axes.end());
  std::vector<int64_t> back(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) back[axes[i]] = static_cast<int64_t>(i);
  for (auto& n : nodes) n = c.graph().permute(n, perm);
  ir::SymShape ps;
  Shape ph;
  for (int ax : axes) ps.push_back(shape[ax]), ph.push_back(hint[ax]);
  return c.new_value(make(nodes, ps), ph).transpose(back);
}

// Note [sorted copies keep the layout] in src/ops/sort.cpp: sort sorts a copy of its input
// in the input's K order (the node over the input permuted to that order, along the sort
// axis' place in it, traced as the transpose back); argsort's indices are C-ordered.
ndarray sort_hook(const ndarray& a, int64_t axis, bool descending, bool arg) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  ir::Graph& g = c.graph();
  std::vector<ir::NodeRef> nodes{c.node_of(a)};
  std::vector<int> axes(a.ndim());
  std::iota(axes.begin(), axes.end(), 0);
  if (!arg) axes = like_axes(a, Order::K);
  const int64_t pos = std::find(axes.begin(), axes.end(), static_cast<int>(axis)) - axes.begin();
  return laid_out(c, axes, nodes, nodes[0]->shape, a.shape(), [&](std::span<const ir::NodeRef> ns, const ir::SymShape& s) {
    std::vector<int64_t> p{pos, descending ? 1 : 0};
    return g.prim(arg ? OpId::argsort : OpId::sort, std::span<const ir::NodeRef>(ns.data(), 1),
                  arg ? DType::Int64 : a.dtype(), s, p);
  });
}

// where(cond, x, y): a Prim node over operands cast to the result dtype and broadcast.
ndarray where_hook(const ndarray& cond, const Operand& x, const Operand& y, DType t, const Shape&) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  ir::Graph& g = c.graph();
  std::vector<ir::NodeRef> nodes{c.node_of_operand(cond, false), c.node_of_operand(x.array, x.weak),
                                 c.node_of_operand(y.array, y.weak)};
  if (x.weak) c.runtime_operand_meets(x.array, t, nodes[1]);  // Note [runtime ints] in trace_nodes.cpp
  if (y.weak) c.runtime_operand_meets(y.array, t, nodes[2]);
  std::vector<ir::SymShape> shapes;
  std::vector<Shape> hints{cond.shape(), x.array.shape(), y.array.shape()};
  for (auto n : nodes) shapes.push_back(n->shape);
  Shape hint;
  ir::SymShape shape = c.broadcast(shapes, hints, hint);
  DType types[3] = {DType::Bool, t, t};
  for (size_t i = 0; i < 3; ++i) nodes[i] = g.broadcast(g.cast(unify(g, nodes[i], shape), types[i]), shape);
  const ndarray arrays[3] = {cond, x.array, y.array};
  const std::vector<int> axes = ops::output_axes(hint, Order::K, arrays);  // as eager where allocates
  return laid_out(c, axes, nodes, shape, hint, [&](std::span<const ir::NodeRef> ns, const ir::SymShape& s) {
    return g.prim(OpId::where, std::vector<ir::NodeRef>(ns.begin(), ns.end()), t, s);
  });
}

ndarray realize_hook(const ndarray& a) { return ctx_or_throw().realize(a); }

std::shared_ptr<void> view_hook(const ndarray& src, const ndarray& v) {
  Context* c = current();
  return c ? c->view(src, v) : nullptr;
}

// Note [copies keep their order]
// A copy (copy, astype, ascontiguousarray, asfortranarray) is a new value laid out in the
// order asked for. Where the dtype changes, the Cast node is that value. Where it does not,
// the node would be the source's own, or a View of it, and a graph output that is a View
// comes out in the view's memory order (a transpose of a computed value as that value's
// transposed memory): `(x * 2).T.copy()` would be F-ordered where NumPy's is C-ordered. So a
// View, or a permuted source, is copied by a numbered Prim copy (as Note [distinct buffers]),
// which the fused backend reads through and an output materializes in its own C order.
ndarray copy_hook(const ndarray& src, DType t, Order order) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  ir::Graph& g = c.graph();
  std::vector<ir::NodeRef> nodes{c.node_of(src)};
  const std::vector<int> axes = like_axes(src, order);
  bool identity = true;
  for (size_t i = 0; i < axes.size(); ++i) identity = identity && axes[i] == static_cast<int>(i);
  const bool fresh = t == src.dtype() && (!identity || nodes[0]->kind == ir::NodeKind::View);
  return laid_out(c, axes, nodes, nodes[0]->shape, src.shape(), [&](std::span<const ir::NodeRef> ns, const ir::SymShape&) {
    if (!fresh) return g.cast(ns[0], t);
    const int64_t serial = static_cast<int64_t>(g.nodes().size());
    return g.prim(OpId::copy, std::span<const ir::NodeRef>(ns.data(), 1), ns[0]->dtype, ns[0]->shape,
                  std::span<const int64_t>(&serial, 1));
  });
}

// A traced value written into a concrete array that is not a graph input (an array an op
// allocated while tracing, e.g. the fresh result roll/pad/cross fill through views, or an
// array held in an attribute) is a graph break: the value is realized and copied for real.
// Making such a destination an input would write back into memory the returned array does
// not observe. Captured globals and closures are traced stand-ins and never reach here.
void write_hook(const ndarray& dst, const ndarray& src) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  if (dst.is_traced()) {
    c.write(dst, c.node_of(src));
    return;
  }
  c.break_graph("a traced value written into an array that is not a graph input");
  src.realize();
  Suspend s;
  copy_into(dst, src);
}

// The fresh output of a function that fills it from traced inputs (concatenate): a traced
// buffer whose pieces are recorded writes. Its initial value is never read.
ndarray empty_hook(const Shape& shape, DType t, const std::vector<int>& axes) {
  Context& c = ctx_or_throw();
  ir::Graph& g = c.graph();
  std::vector<ir::NodeRef> args{g.constant(Scalar::from_int(0).cast(t))};
  std::vector<ir::NodeRef> none;
  return laid_out(c, axes, none, ir::static_shape(shape), shape, [&](std::span<const ir::NodeRef>, const ir::SymShape& s) {
    return g.prim(OpId::fill, args, t, s);
  });
}
}  // namespace

void install_hooks() {
  static const bool once = [] {
    ndarray::set_realize_hook(&realize_hook);
    ndarray::TraceHooks h;
    h.view = &view_hook;
    h.copy = &copy_hook;
    h.write = &write_hook;
    h.empty = &empty_hook;
    ndarray::set_trace_hooks(h);
    set_trace_hooks(&ufunc_hook, &reduce_hook);
    set_index_trace_hooks(&index_get_hook, &index_set_hook);
    set_prim_trace_hooks(&arg_hook, &where_hook);
    set_scan_sort_trace_hooks(&accumulate_hook, &sort_hook);
    return true;
  }();
  (void)once;
}

}  // namespace npc::tracer
