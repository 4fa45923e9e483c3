// Indexing of traced arrays (src/core/indexing.cpp's hooks): views, gathers, boolean-mask
// assignment, and the graph breaks of the rest. See trace.hpp.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "npc/ops.hpp"
#include "ops/loops.hpp"  // iter_shape_str (NumPy's spelling of shapes in messages)
#include "tracer/trace_internal.hpp"

namespace npc::tracer {

namespace {
// Indexing (src/core/indexing.cpp's hooks). Basic indexing of a traced array is a view: the
// index runs on an untraced twin with the same geometry and the view hook names the map.
// Advanced indexing (integer/boolean arrays, data-dependent shapes) is a graph break.
ndarray untraced_twin(const ndarray& a) { return ndarray(a.storage(), a.offset(), a.dtype(), a.shape(), a.strides()); }

bool basic_on_traced(const ndarray& a, std::span<const IndexItem> idx) {
  if (!a.is_traced()) return false;
  for (const IndexItem& it : idx)
    if (it.kind == IndexItem::Kind::Array) return false;
  return true;
}

std::vector<IndexItem> realized_items(std::span<const IndexItem> idx) {
  std::vector<IndexItem> r(idx.begin(), idx.end());
  for (auto& it : r)
    if (it.kind == IndexItem::Kind::Array) it.array.realize();
  return r;
}

// Note [traced gathers]
// Advanced indexing by integer arrays (Note [gathers] in include/npc/graph.hpp): `a[i, j]`,
// `a[:, idx]`, `a[[0, 2]]`, mixed with slices, integers and `...`. The basic part (slices)
// is a view; integers next to index arrays are 0-d index arrays, as in NumPy; the index
// arrays broadcast together and index the consecutive axes they name, or, when slices
// separate them, the axes are moved to the front first (NumPy's placement rule). Boolean
// arrays and newaxis with index arrays are left to the caller (a graph break).
ir::NodeRef index_operand(Context& c, const ndarray& ind, int64_t extent, int64_t axis) {
  ir::Graph& g = c.graph();
  if (!ind.is_traced()) ir::check_index_values(ind, extent, axis);  // eager raises here too
  // A concrete 0-d index stays a Const (Note [values after a break] in trace_nodes.cpp).
  ir::NodeRef raw = !ind.is_traced() && ind.ndim() == 0 ? c.constant(ind.item()) : c.node_of(ind);
  // Views that keep every element (reshape, transpose, broadcast to a non-empty shape) of an
  // input: checking the whole input is checking them.
  ir::NodeRef root = raw;
  auto keeps_all = [](ir::NodeRef v) {
    if (v->kind != ir::NodeKind::View) return false;
    auto k = v->view_kind();
    if (k == ir::ViewKind::Reshape || k == ir::ViewKind::Permute) return true;
    return k == ir::ViewKind::Broadcast &&
           std::none_of(v->shape.begin(), v->shape.end(), [](ir::Dim d) { return d == ir::Dim::fixed(0); });
  };
  while (keeps_all(root)) root = root->args[0];
  if (root->kind == ir::NodeKind::Input) {
    // A graph input (an argument, or a captured array bound by reference): checked before
    // every run, so later changes to a captured index array are seen and checked.
    c.add_index_check(static_cast<int>(root->params[0]), extent, axis);
    return g.cast(raw, DType::Int64);
  }
  if (raw->kind == ir::NodeKind::Const) {
    return g.cast(raw, DType::Int64);
  }
  ir::NodeRef cast = g.cast(raw, DType::Int64);
  ir::HostCall fn = [extent, axis](std::span<const ndarray> args) {
    ndarray i64 = args[0].is_c_contiguous() ? args[0] : args[0].copy();
    ir::check_index_values(i64, extent, axis);
    return i64;
  };
  return g.call(std::move(fn), "index bounds check", std::span<const ir::NodeRef>(&cast, 1), DType::Int64,
                cast->shape);
}

std::optional<ndarray> gather_on_traced(Context& c, const ndarray& a, std::span<const IndexItem> idx) {
  bool traced_index = false;
  int consumed = 0, ellipses = 0;
  bool has_array = false;
  for (const IndexItem& it : idx) {
    switch (it.kind) {
      case IndexItem::Kind::Integer:
      case IndexItem::Kind::Slice: ++consumed; break;
      case IndexItem::Kind::Ellipsis: ++ellipses; break;
      case IndexItem::Kind::NewAxis: return std::nullopt;
      case IndexItem::Kind::Array:
        if (!is_integer(it.array.dtype())) return std::nullopt;  // boolean masks; floats raise eagerly
        traced_index = traced_index || it.array.is_traced();
        has_array = has_array || it.array.ndim() > 0;
        ++consumed;
        break;
    }
  }
  if ((!a.is_traced() && !traced_index) || !has_array || ellipses > 1 || consumed > a.ndim()) return std::nullopt;
  // The basic part: index arrays and integers become full slices; the view keeps every axis.
  std::vector<IndexItem> basic;
  std::vector<int64_t> adv_axes;
  std::vector<const IndexItem*> adv;
  int64_t axis = 0;
  for (const IndexItem& it : idx) {
    if (it.kind == IndexItem::Kind::Ellipsis) {
      for (int e = 0; e < a.ndim() - consumed; ++e, ++axis) basic.emplace_back(Slice{});
    } else if (it.kind == IndexItem::Kind::Slice) {
      basic.push_back(it);
      ++axis;
    } else {
      basic.emplace_back(Slice{});
      adv_axes.push_back(axis++);
      adv.push_back(&it);
    }
  }
  ndarray b;
  if (a.is_traced()) {
    b = index(untraced_twin(a), basic);
    auto t = c.view(a, b);
    if (!t) return std::nullopt;
    b.set_trace(std::move(t));
  } else {
    Suspend s;
    b = index(a, basic);
  }
  ir::Graph& g = c.graph();
  ir::NodeRef src = c.node_of(b);
  for (auto ax : adv_axes)
    if (!src->shape[ax].is_static()) return std::nullopt;
  std::vector<ir::NodeRef> nodes;
  std::vector<ir::SymShape> shapes;
  std::vector<Shape> hints;
  for (size_t k = 0; k < adv.size(); ++k) {
    const IndexItem& it = *adv[k];
    const int64_t n = b.shape()[adv_axes[k]];
    ir::NodeRef node;
    if (it.kind == IndexItem::Kind::Integer || (it.array.ndim() == 0 && !it.array.is_traced())) {
      int64_t v = it.kind == IndexItem::Kind::Integer ? it.integer : it.array.item().as_int();
      if (v < -n || v >= n)
        throw IndexError("index " + std::to_string(v) + " is out of bounds for axis " + std::to_string(adv_axes[k]) +
                         " with size " + std::to_string(n));
      node = g.constant(Scalar::from_int(v));
      hints.emplace_back();
    } else {
      node = index_operand(c, it.array, n, adv_axes[k]);
      hints.push_back(it.array.shape());
    }
    nodes.push_back(node);
    shapes.push_back(node->shape);
  }
  Shape bhint;
  ir::SymShape bshape;
  try {
    bshape = c.broadcast(shapes, hints, bhint);
  } catch (const ValueError&) {
    std::string msg = "shape mismatch: indexing arrays could not be broadcast together with shapes";
    for (auto& h : hints) msg += " " + shape_str(h);
    throw IndexError(msg);
  }
  for (auto& n : nodes) n = g.broadcast(unify(g, n, bshape), bshape);
  bool adjacent = true;
  for (size_t k = 1; k < adv_axes.size(); ++k) adjacent = adjacent && adv_axes[k] == adv_axes[k - 1] + 1;
  Shape hint;
  if (adjacent) {
    const int64_t p0 = adv_axes[0], k = static_cast<int64_t>(adv_axes.size());
    for (int64_t d = 0; d < p0; ++d) hint.push_back(b.shape()[d]);
    hint.insert(hint.end(), bhint.begin(), bhint.end());
    for (int64_t d = p0 + k; d < b.ndim(); ++d) hint.push_back(b.shape()[d]);
    return c.new_value(g.gather(src, nodes, p0), hint);
  }
  std::vector<int64_t> perm(adv_axes.begin(), adv_axes.end());
  hint = bhint;
  for (int64_t d = 0; d < b.ndim(); ++d)
    if (std::find(adv_axes.begin(), adv_axes.end(), d) == adv_axes.end()) {
      perm.push_back(d);
      hint.push_back(b.shape()[d]);
    }
  return c.new_value(g.gather(g.permute(src, perm), nodes, 0), hint);
}

// `a[mask] = v` with a boolean mask over the leading axes and a value whose broadcast does
// not depend on how many elements the mask selects: where(mask, v, a) written over all of
// `a` (no data-dependent shape). Returns false when the assignment is not of that form.
bool mask_assign(Context& c, const ndarray& a, std::span<const IndexItem> idx, const ndarray& value) {
  if (idx.size() != 1 || idx[0].kind != IndexItem::Kind::Array || idx[0].array.dtype() != DType::Bool) return false;
  const ndarray& m = idx[0].array;
  const int mk = m.ndim();
  if (mk == 0 || mk > a.ndim()) return false;
  for (int d = 0; d < mk; ++d)
    if (m.shape()[d] != a.shape()[d]) return false;  // eager raises IndexError
  if (mk == a.ndim() && value.ndim() > 1) return false;  // eager raises TypeError
  Shape vs = value.shape();
  while (!vs.empty() && vs.front() == 1) vs.erase(vs.begin());
  const Shape rest(a.shape().begin() + mk, a.shape().end());
  if (vs.size() > rest.size()) return false;
  for (size_t d = 0; d < vs.size(); ++d)
    if (vs[vs.size() - 1 - d] != 1 && vs[vs.size() - 1 - d] != rest[rest.size() - 1 - d]) return false;
  if (!a.is_traced()) return false;  // a concrete destination: index_set_hook breaks
  if (!a.writeable()) throw ValueError("assignment destination is read-only");
  const ndarray& t = a;
  ir::Graph& g = c.graph();
  ir::NodeRef base = c.node_of(t);
  ir::NodeRef mn = c.node_of_operand(m, false);
  ir::SymShape ms = mn->shape;
  for (size_t d = 0; d < rest.size(); ++d) ms.push_back(ir::Dim::fixed(1));
  mn = g.broadcast(g.reshape(unify(g, mn, ir::SymShape(base->shape.begin(), base->shape.begin() + mk)), ms),
                   base->shape);
  ir::NodeRef v = c.node_of_operand(value, false);
  v = g.cast(v, a.dtype());
  ir::SymShape vshape;
  for (auto d : vs) vshape.push_back(ir::Dim::fixed(d));
  if (v->shape != vshape) v = g.reshape(v, vshape);
  v = g.broadcast(v, base->shape);
  std::vector<ir::NodeRef> sel{mn, v, base};
  c.write(t, g.prim(OpId::where, sel, a.dtype(), base->shape));
  return true;
}
}  // namespace

// Marks the views a subscript with a slice bound makes (Note [slices that cover the axis] in
// trace_nodes.cpp).
class BoundedView {
 public:
  BoundedView(Context& c, std::span<const IndexItem> idx) : c_(c), prev_(c.bounded_view) {
    c.bounded_view = std::any_of(idx.begin(), idx.end(), [](const IndexItem& it) {
      if (it.kind != IndexItem::Kind::Slice) return false;
      // The bindings unpack None as Python does (PySlice_Unpack): 0 and PY_SSIZE_T_MAX for a
      // positive step, PY_SSIZE_T_MAX and PY_SSIZE_T_MIN for a negative one.
      const Slice& s = it.slice;
      const int64_t step = s.step.value_or(1);
      const int64_t lo = step > 0 ? 0 : std::numeric_limits<int64_t>::max();
      const int64_t hi = step > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
      return (s.start && *s.start != lo) || (s.stop && *s.stop != hi);
    });
  }
  ~BoundedView() { c_.bounded_view = prev_; }
  BoundedView(const BoundedView&) = delete;
  BoundedView& operator=(const BoundedView&) = delete;

 private:
  Context& c_;
  bool prev_;
};

ndarray index_get_hook(const ndarray& a, std::span<const IndexItem> idx) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  BoundedView bounded(c, idx);
  if (basic_on_traced(a, idx)) {
    ndarray v = index(untraced_twin(a), idx);
    if (auto t = c.view(a, v)) {
      v.set_trace(std::move(t));
      return v;
    }
  }
  if (auto r = gather_on_traced(c, a, idx)) return *r;
  if (basic_on_traced(a, idx)) {
    // A view the tracer cannot name with symbolic sizes (a slice along a symbolic axis):
    // after the break the sizes are static (Note [symbols after a break] in trace_nodes.cpp) and it
    // can. It must stay a traced view: a concrete one would be read as a copy of what the array
    // held at the break, without the writes into the array recorded after it.
    c.break_graph("a view of a traced array with symbolic sizes");
    ndarray v = index(untraced_twin(a), idx);
    if (auto t = c.view(a, v)) {
      v.set_trace(std::move(t));
      return v;
    }
  }
  bool mask = false;
  for (const IndexItem& it : idx) mask = mask || (it.kind == IndexItem::Kind::Array && it.array.dtype() == DType::Bool);
  if (!basic_on_traced(a, idx))
    c.break_graph(mask ? "advanced indexing by a boolean mask (its result has a data-dependent shape)"
                       : "advanced indexing of a traced array that is not captured (newaxis or symbolic sizes with index arrays)");
  ndarray x = a;
  x.realize();
  auto items = realized_items(idx);
  Suspend s;
  return index(x, items);
}

void index_set_hook(const ndarray& a, std::span<const IndexItem> idx, const ndarray& value) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops] in trace_segments.cpp
  BoundedView bounded(c, idx);
  if (mask_assign(c, a, idx, value)) return;
  if (!a.is_traced() && std::none_of(idx.begin(), idx.end(), [](const IndexItem& it) {
        return it.kind == IndexItem::Kind::Array && it.array.is_traced();
      })) {
    // A traced value into a concrete array that is not a graph input: a graph break (see
    // write_hook).
    c.break_graph("a traced value written into an array that is not a graph input");
    ndarray v = value;
    v.realize();
    auto items = realized_items(idx);
    Suspend s;
    index_assign(a, items, v);
    return;
  }
  if (basic_on_traced(a, idx)) {
    if (!a.writeable()) throw ValueError("assignment destination is read-only");
    ndarray region = index(untraced_twin(a), idx);
    if (auto t = c.view(a, region)) {
      region.set_trace(std::move(t));
      ir::NodeRef v = c.node_of(value);
      // NumPy's setitem: the value broadcasts to the region (ValueError otherwise).
      // The region is never broadcast itself: each of the value's dims (past leading ones
      // beyond the region's rank) is 1 or the region's; NumPy's message and spelling.
      Shape vs = value.shape();
      const Shape& rs = region.shape();
      while (vs.size() > rs.size() && vs.front() == 1) vs.erase(vs.begin());
      bool fits = vs.size() <= rs.size();
      for (size_t i = 0; fits && i < vs.size(); ++i)
        fits = vs[i] == 1 || vs[i] == rs[rs.size() - vs.size() + i];
      if (!fits)
        throw ValueError("could not broadcast input array from shape " + iter_shape_str(value.shape()) +
                         " into shape " + iter_shape_str(rs));
      c.write(region, v);
      return;
    }
  }
  bool mask = false;
  for (const IndexItem& it : idx) mask = mask || (it.kind == IndexItem::Kind::Array && it.array.dtype() == DType::Bool);
  c.break_graph(mask ? "boolean mask assignment whose value depends on the number of selected elements"
                     : "advanced index assignment (integer index arrays) into a traced array");
  ndarray x = a, v = value;
  x.realize();
  v.realize();
  auto items = realized_items(idx);
  Suspend s;
  index_assign(x, items, v);
}

}  // namespace npc::tracer
