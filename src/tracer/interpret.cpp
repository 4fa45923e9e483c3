// backend="eager": runs a graph node by node with the eager kernels.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "npc/creation.hpp"
#include "npc/graph.hpp"
#include "npc/indexing.hpp"
#include "npc/linalg.hpp"
#include "npc/ops.hpp"
#include "npc/sorting.hpp"
#include "ops/blas.hpp"

namespace npc::ir {

namespace {
ndarray broadcast_view(const ndarray& a, const Shape& shape) {
  size_t lead = shape.size() - static_cast<size_t>(a.ndim());
  Strides st(shape.size(), 0);
  for (int d = 0; d < a.ndim(); ++d) st[lead + d] = a.shape()[d] == 1 && shape[lead + d] != 1 ? 0 : a.strides()[d];
  return a.with_geometry(a.offset(), a.dtype(), shape, st);
}

}  // namespace

// The value of View node `n` applied to `src`.
ndarray apply_view(NodeRef n, const ndarray& src, const Shape& shape) {
  switch (n->view_kind()) {
    case ViewKind::Slice: {
      int64_t off = src.offset();
      Strides st(shape.size());
      for (size_t d = 0; d < shape.size(); ++d) {
        off += n->params[1 + 2 * d] * src.strides()[d];
        st[d] = n->params[2 + 2 * d] * src.strides()[d];
      }
      return src.with_geometry(off, src.dtype(), shape, st);
    }
    case ViewKind::Permute:
      return src.transpose(std::span<const int64_t>(n->params).subspan(1));
    case ViewKind::Broadcast:
      return broadcast_view(src, shape);
    case ViewKind::Reshape:
      return src.reshape(shape);
    case ViewKind::Component:
      return n->params[1] ? src.imag() : src.real();
    case ViewKind::Strided: {
      ndarray c = src.is_c_contiguous() ? src : src.copy();
      const int64_t is = static_cast<int64_t>(c.itemsize());
      Strides st(shape.size());
      for (size_t d = 0; d < shape.size(); ++d) st[d] = n->params[2 + d] * is;
      return c.with_geometry(c.offset() + n->params[1] * is, c.dtype(), shape, st);
    }
  }
  throw ValueError("unknown view kind");
}

namespace {
// Gather node (Note [gathers]) with k index arrays of one shape on axes axis..axis+k-1: the
// indexed axes merge into one (C order) and the k indices into its linear index, then take.
ndarray gather_nd(const ndarray& a, std::span<const ndarray> idx, int64_t axis) {
  if (idx.size() == 1) return take(a, idx[0], axis);
  const int64_t k = static_cast<int64_t>(idx.size());
  Shape merged(a.shape().begin(), a.shape().begin() + axis);
  int64_t n = 1;
  for (int64_t j = 0; j < k; ++j) n *= a.shape()[axis + j];
  merged.push_back(n);
  merged.insert(merged.end(), a.shape().begin() + axis + k, a.shape().end());
  std::vector<ndarray> c;
  for (const ndarray& i : idx) c.push_back(i.is_c_contiguous() ? i : i.copy());
  ndarray lin = empty(idx[0].shape(), DType::Int64);
  int64_t* out = reinterpret_cast<int64_t*>(lin.data());
  for (int64_t e = 0; e < lin.size(); ++e) {
    int64_t l = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t ext = a.shape()[axis + j];
      int64_t v = reinterpret_cast<const int64_t*>(c[j].data())[e];
      if (v < 0) v += ext;
      l = l * ext + v;
    }
    out[e] = l;
  }
  return take(a.reshape(merged), lin, axis);
}
}  // namespace

// Note [node values are C-ordered]
// The value of a node that computes a new array is C-contiguous over the node's axes, as
// the fused backend's buffers are: the tracer lays a result out as NumPy does by permuting
// the operands into the result's axis order and transposing the node back (Note [output
// layout] in src/ops/ufunc.cpp). The eager kernels lay out their results after their
// operands (order='K'); an operand here may be a permuted view of a C-ordered value (a cast
// of an F-ordered input), so a ufunc runs with order='C', and other new values (where, sort,
// reductions) that come out in another layout are copied to C order. Views keep their
// operand's layout, as they do in the fused backend.
std::optional<ndarray> run_node_eagerly(const Graph& g, NodeRef n, std::span<const ndarray> ops, const Shape& shape) {
  switch (n->kind) {
    case NodeKind::Cast: return ops[0].astype(n->dtype, Order::C, Casting::Unsafe, true);  // a node's value is C-ordered
    case NodeKind::Ufunc: {
      std::vector<Operand> in;
      in.reserve(ops.size());
      for (const ndarray& a : ops) in.push_back(Operand{a, false});
      UfuncOptions o;
      o.order = Order::C;  // Note [node values are C-ordered]
      const int64_t loop = n->params.size() > 1 ? n->params[1] : 0;  // Note [scalar loops]
      if (loop & (Graph::kScalarLoop | Graph::kSimdLoop)) o.scalar_loop = (loop & Graph::kScalarLoop) != 0;
      o.scalar_math = (loop & Graph::kScalarMath) != 0;  // Note [scalar math] in src/tracer/trace.hpp
      return call_ufunc(n->op, in, o).at(n->params.at(0));
    }
    case NodeKind::Reduce: {
      ReduceOptions o;
      o.axes = std::vector<int64_t>(n->params.begin() + 1, n->params.end());
      o.keepdims = n->params[0] != 0;
      o.dtype = n->dtype;
      o.initial = n->value;
      return reduce(n->op, ops[0], o);
    }
    case NodeKind::Call: {
      ndarray r = g.calls.at(n->params[0]).first(std::vector<ndarray>(ops.begin(), ops.end()));
      if (r.dtype() != n->dtype || r.shape() != shape)
        throw ValueError("graph: host call '" + g.calls.at(n->params[0]).second + "' returned " +
                         std::string(name(r.dtype())) + shape_str(r.shape()) + ", traced " +
                         std::string(name(n->dtype)) + shape_str(shape));
      return r;
    }
    case NodeKind::Prim:
      switch (n->op) {
        case OpId::fill: return full(shape, ops[0].item(), n->dtype);
        case OpId::iota: {
          // iota(start, step): start + i * step, numpy.arange's fill rule.
          npc::Scalar start = ops[0].item(), step = ops[1].item();
          const int64_t len = shape.at(0);
          npc::Scalar stop = npc::Scalar::from_double(start.as_double() + step.as_double() * static_cast<double>(len));
          if (!is_inexact(n->dtype)) stop = npc::Scalar::from_int(start.as_int() + step.as_int() * len);
          ndarray r = arange(start, stop, step, n->dtype);
          return r.size() == len ? r : r.reshape(Shape{len});
        }
        case OpId::where: return where(ops[0], Operand{ops[1], false}, Operand{ops[2], false});
        // params {1}: numpy.dot's paths (Note [matmul in traces] in bind_linalg.cpp).
        case OpId::matmul: {
          npc::ops::blas::CompiledProducts own;  // Note [compiled products on one BLAS thread] in src/ops/blas.cpp
          return n->params.size() == 1 && n->params[0] == 1 ? dot(ops[0], ops[1]) : matmul(ops[0], ops[1]);
        }
        case OpId::argmin:
        case OpId::argmax: return arg_reduce(n->op, ops[0], n->params.at(0), n->params.size() > 1 && n->params[1] != 0);
        // Note [traced scans and sorts] (src/tracer/trace_hooks.cpp): the operand already has the
        // loop dtype; npc's eager scan and sort.
        case OpId::cumsum:
        case OpId::cumprod:
          return accumulate(n->op == OpId::cumsum ? OpId::add : OpId::multiply, ops[0], n->params.at(0), n->dtype);
        case OpId::sort: return sort(ops[0], n->params.at(0), n->params.at(1) != 0);
        case OpId::argsort: return argsort(ops[0], n->params.at(0), n->params.at(1) != 0);
        case OpId::copy: return ops[0].copy();
        default: return std::nullopt;
      }
    default: return std::nullopt;
  }
}

namespace {
// Copies the values `back` ((input, node) pairs, nodes computed in `val`) into the caller's
// arrays. Note [write-backs read before they write]: the values written back are the graph's
// values, all of them read before any caller's array changes. A value that is (a view of)
// another written input's array (`a1[...] = a0; a0[...] = a2` writes a0's initial value into
// a1 and a2's into a0) is copied first, whatever the order of the write-backs.
void write_back(const std::vector<std::pair<int, NodeRef>>& back, const RunArgs& args,
                const std::vector<std::optional<ndarray>>& val) {
  auto unchanged = [](int i, NodeRef n) { return n->kind == NodeKind::Input && n->params[0] == i; };
  std::vector<std::optional<ndarray>> v(back.size());
  for (size_t k = 0; k < back.size(); ++k) {
    auto& [i, n] = back[k];
    if (unchanged(i, n)) continue;
    v[k] = *val[n->id];
    for (auto& [j, m] : back)
      if (!unchanged(j, m) && args.inputs[j].storage() == v[k]->storage()) {
        v[k] = v[k]->copy();
        break;
      }
  }
  for (size_t k = 0; k < back.size(); ++k)
    if (v[k]) copy_into(args.inputs[back[k].first], *v[k]);
}

// The inputs' values when the first evaluation of `n` raises (Graph::input_writes; Note
// [writes before a raising operation] in src/fusion/backend.cpp): the last write of each
// input made before it, or by the op it belongs to (its out=) when `own` (a floating-point
// error: NumPy stores out= before it checks the flags; not an exception the op throws).
std::vector<std::pair<int, NodeRef>> writes_before(const Graph& g, NodeRef n, bool own = true) {
  const auto& order = g.evaluation_order();
  const size_t at = static_cast<size_t>(std::find(order.begin(), order.end(), n->id) - order.begin());
  std::vector<std::pair<int, NodeRef>> r;
  for (const Graph::InputWrite& w : g.input_writes) {
    if (w.at > at || (!own && w.at == at)) break;
    auto it = std::find_if(r.begin(), r.end(), [&](auto& e) { return e.first == w.input; });
    if (it == r.end()) r.emplace_back(w.input, w.value);
    else it->second = w.value;
  }
  return r;
}
}  // namespace

// Note [writes before an exception]
// An op that throws (NumPy's ValueError for a negative integer exponent, ...) stops NumPy
// there: the writes into the arguments made before it stay. A run with an observer (every
// run of backend "eager" from Python, and the fused backend's run again after a throw) holds
// the logged values (Note [writes before a raising operation] in src/fusion/backend.cpp), so
// when a node throws, the inputs get what they held before its op (not its own out=), and the
// exception goes on to the caller. Not covered: an IndexError of an index array, checked for
// the whole graph before it runs (Note [gathers] in include/npc/graph.hpp).
std::vector<ndarray> interpret(const Graph& g, const RunArgs& args) { return interpret(g, args, NodeObserver{}); }

std::vector<ndarray> interpret(const Graph& g, const RunArgs& args, const NodeObserver& after_node,
                               std::span<const std::optional<ndarray>> call_values) {
  check_run_args(g, args);
  if (!g.index_checks.empty()) check_index_inputs(g, args.inputs);
  std::vector<int64_t> syms;
  for (auto& s : g.symbols()) syms.push_back(args.inputs[s.input].shape()[s.axis]);

  const auto& nodes = g.nodes();
  // Free each intermediate after its last use.
  std::vector<uint32_t> last_use(nodes.size(), 0);
  for (NodeRef n : nodes)
    for (NodeRef a : n->args) last_use[a->id] = std::max(last_use[a->id], n->id);
  std::vector<bool> keep(nodes.size(), false);
  for (NodeRef o : g.outputs) keep[o->id] = true;
  for (auto& [i, n] : g.writebacks) keep[n->id] = true;
  if (after_node && !g.input_writes.empty()) {
    // A run that may stop (NodeObserver) holds each value an input takes until the nodes
    // evaluated before the input's next write have run (until the end for its last): the
    // value written back when one of them stops the run (writes_before).
    const auto& order = g.evaluation_order();
    std::vector<uint32_t> seen(order.size() + 1, 0);  // seen[k]: 1 + the highest id among order[0, k)
    for (size_t k = 0; k < order.size(); ++k) seen[k + 1] = std::max(seen[k], order[k] + 1);
    const auto& w = g.input_writes;
    std::vector<size_t> next_at(static_cast<size_t>(g.num_inputs()), SIZE_MAX);  // the input's next write
    for (size_t k = w.size(); k-- > 0;) {
      size_t& next = next_at.at(static_cast<size_t>(w[k].input));
      const uint32_t id = w[k].value->id;
      if (next == SIZE_MAX) keep[id] = true;
      else if (seen.at(next) > 0) last_use[id] = std::max(last_use[id], seen[next] - 1);
      next = w[k].at;
    }
  }

  // optional: a default-constructed ndarray allocates, and replays of tiny graphs are hot.
  std::vector<std::optional<ndarray>> val(nodes.size());
  NodeRef stop = nullptr;  // the node the observer stopped the run at
  std::vector<std::pair<int, NodeRef>> back;  // the write-backs when it stops (writes_before)
  uint32_t until = 0;  // the last of their nodes
  for (NodeRef n : nodes) {
    const Shape shape = concrete_shape(n->shape, syms);
    auto arg = [&](size_t i) -> const ndarray& { return *val[n->args[i]->id]; };
    std::optional<ndarray> r;
    try {
      switch (n->kind) {
        case NodeKind::Input: r = args.inputs[n->params[0]]; break;
        case NodeKind::Scalar: r = scalar_array(args.scalars[n->params[0]].cast(n->dtype)); break;
        case NodeKind::SymVal: r = scalar_array(npc::Scalar::from_int(syms[n->params[0]])); break;
        case NodeKind::Const: r = scalar_array(*n->value); break;
        case NodeKind::Cast: r = arg(0).astype(n->dtype, Order::C, Casting::Unsafe, true); break;
        case NodeKind::View: r = apply_view(n, arg(0), shape); break;
        case NodeKind::Write: {
          // Write(base, region, value): a fresh buffer (SSA values are immutable), then the
          // region's view chain replayed over it and the value copied in.
          ndarray buf = arg(0).copy();
          std::vector<NodeRef> chain;
          for (NodeRef v = n->args[1]; v != n->args[0]; v = v->args[0]) chain.push_back(v);
          ndarray region = buf;
          for (auto it = chain.rbegin(); it != chain.rend(); ++it)
            region = apply_view(*it, region, concrete_shape((*it)->shape, syms));
          if (region.storage() != buf.storage()) throw ValueError("graph: write region is not a view");
          copy_into(region, arg(2));
          r = buf;
          break;
        }
        case NodeKind::Ufunc:
        case NodeKind::Reduce:
        case NodeKind::Prim:
        case NodeKind::Call: {
          std::vector<ndarray> in;
          in.reserve(n->args.size());
          for (size_t i = 0; i < n->args.size(); ++i) in.push_back(arg(i));
          if (n->kind == NodeKind::Call && n->id < call_values.size() && call_values[n->id]) {
            r = *call_values[n->id];
            break;
          }
          r = run_node_eagerly(g, n, in, shape);
          if (!r) throw ValueError("backend 'eager': primitive " + std::string(op_name(n->op)) + " is not supported yet");
          if (n->kind != NodeKind::Call && !r->is_c_contiguous()) r = r->copy();  // Note [node values are C-ordered]
          break;
        }
        case NodeKind::Gather: {
          std::vector<ndarray> idx;
          for (size_t i = 1; i < n->args.size(); ++i) idx.push_back(arg(i));
          r = gather_nd(arg(0), idx, n->params[0]);
          break;
        }
      }
    } catch (const Stopped&) {
      throw;
    } catch (...) {
      // Note [writes before an exception]: the inputs get what they held before this op.
      if (after_node && !g.input_writes.empty() && !stop) {
        std::vector<std::pair<int, NodeRef>> before = writes_before(g, n, false);
        if (std::all_of(before.begin(), before.end(), [&](auto& e) { return val[e.second->id].has_value(); }))
          write_back(before, args, val);
      }
      throw;
    }
    val[n->id] = std::move(r);
    if (after_node) {
      std::vector<ndarray> in;
      for (size_t i = 0; i < n->args.size(); ++i) in.push_back(arg(i));
      // Once stopped, the observer still sees the nodes that run (their errors are taken).
      if (after_node(n, *val[n->id], in) && !stop) {
        stop = n;
        back = writes_before(g, n);
        for (auto& [i, v] : back) until = std::max(until, v->id);
      }
      // The values of the op's own writes (its out=) come after its node: they run first.
      if (stop && n->id >= until) {
        for (auto& [i, v] : back)
          if (!val[v->id]) throw ValueError("graph: the value of a write before a stop is gone");
        write_back(back, args, val);
        throw Stopped(stop);
      }
    }
    for (NodeRef a : n->args)
      if (last_use[a->id] == n->id && !keep[a->id] && !stop) val[a->id].reset();
  }
  // Write-backs: the caller's arrays get their final values; an output that is a written
  // input's final value is the caller's array itself, as in eager code (`x += 1; return x`).
  // Every other output is a value of its own, as the fused backend's are: one that views an
  // input's memory (an unchanged input, `x.copy()` of it, a slice of that) is copied, so
  // writes into it (after a graph break, or by the caller) never reach the input.
  std::vector<ndarray> outs;
  for (NodeRef o : g.outputs) {
    const ndarray& v = *val[o->id];
    if (g.output_unread(outs.size())) {  // Note [unread outputs] in trace_segments.cpp: no copy
      outs.push_back(v);
      continue;
    }
    bool aliased = false;
    for (const ndarray& in : args.inputs) aliased = aliased || (v.size() > 0 && in.storage() == v.storage());
    // A value that is a broadcast (a whole-array fill `b[...] = 0` is a constant broadcast to
    // b's shape) is one element seen many times: returned as it is, a write into one element
    // would show in all of them. It is copied into memory of its own, as the fused backend's.
    for (int d = 0; d < v.ndim() && !aliased; ++d) aliased = v.strides()[d] == 0 && v.shape()[d] > 1;
    outs.push_back(aliased ? v.copy(Order::K) : v);  // in the value's own layout, as NumPy returns it
  }
  write_back(g.writebacks, args, val);  // Note [write-backs read before they write]
  for (auto& [i, n] : g.writebacks)
    for (size_t o = 0; o < outs.size(); ++o)
      if (g.outputs[o] == n && !(n->kind == NodeKind::Input && n->params[0] == i)) outs[o] = args.inputs[i];
  return outs;
}

}  // namespace npc::ir
