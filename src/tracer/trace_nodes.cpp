// The graph nodes of traced arrays: view chains, concrete operands and numbers (runtime
// scalars, values after a break), writes, views and broadcasting. See trace.hpp.
#include <algorithm>
#include <cstring>
#include <optional>

#include "npc/creation.hpp"
#include "ops/loops.hpp"  // iter_shape_str (NumPy's spelling of shapes in messages)
#include "tracer/trace_internal.hpp"

namespace npc::tracer {

// Note [symbols after a break]
// Symbols exist in the first segment only (the arguments' symbolic dims); a break rebinds
// every live buffer as an input of static shape, and later segments are looked up by
// structure with concrete sizes. Traced arrays made before the break still carry the first
// segment's symbols in their view chains and shapes, so a view of an argument read after
// the break (`float(x[0]); return x.reshape(-1, 1)`) would name a symbol the new graph does
// not have: after a break, every such dim is the size it had in this call.
ir::SymShape Context::segment_shape(const ir::SymShape& s) const {
  if (sym_sizes_.empty()) return s;
  ir::SymShape r = s;
  for (auto& d : r)
    if (!d.is_static() && static_cast<size_t>(d.symbol()) < sym_sizes_.size())
      d = ir::Dim::fixed(sym_sizes_[static_cast<size_t>(d.symbol())]);
  return r;
}

ir::NodeRef Context::value_node(TracedValue& tv) {
  if (tv.node && tv.version == tv.buf->version) return tv.node;
  ir::NodeRef n = tv.buf->current;
  if (!sym_sizes_.empty()) tv.shape = segment_shape(tv.shape);
  for (const auto& step : tv.chain) {
    ViewStep s = step;
    if (!sym_sizes_.empty()) s.shape = segment_shape(s.shape);
    switch (s.kind) {
      case ir::ViewKind::Slice: n = graph_->slice(n, s.params, s.shape); break;
      case ir::ViewKind::Permute: n = graph_->permute(n, s.params); break;
      case ir::ViewKind::Broadcast: n = graph_->broadcast(n, s.shape); break;
      case ir::ViewKind::Reshape: n = graph_->reshape(n, s.shape); break;
      case ir::ViewKind::Component: n = graph_->component(n, s.params.at(0) != 0); break;
      case ir::ViewKind::Strided:
        n = graph_->strided(n, s.params.at(0), std::span<const int64_t>(s.params).subspan(1), s.shape);
        break;
    }
  }
  tv.node = n;
  tv.version = tv.buf->version;
  return n;
}

// Note [NumPy views of inputs]
// After a break, every array the program holds is bound to an input of the segment (Note
// [symbols after a break]), and realize() hands out views of those bound arrays. NumPy code
// that gets them (a fallback call) may return a view of them (`np.expand_dims` of a moved
// axis, `np.broadcast_to`), in a Storage of its own over the same memory. As a concrete
// array, such a view holds the values of the segment's start: writes into the input that
// the segment records later (`a1[:, ::-2] = 0`) are in the graph, not yet in that memory,
// so eager code reading the view (`v + 0`, `np.ascontiguousarray(v)`) would miss them, and
// binding it at a later use (a snapshot) sees only what the memory held. So the view is
// traced as what it is in NumPy: a strided view of the input's buffer (adopt_view, on the
// results of NumPy calls), which reads the buffer's value where it is used and is written
// back through like the input. inside_input finds the input: the same memory, whatever
// Storage object holds it, as a strided view of its C-contiguous bound array with the
// buffer's dtype: {input, {offset, strides...}} in elements.
std::optional<std::pair<size_t, std::vector<int64_t>>> Context::inside_input(const ndarray& a) const {
  if (a.is_traced() || a.ndim() == 0 || a.size() == 0 || !a.storage()) return std::nullopt;
  for (size_t i = 0; i < bound_.size() && i < input_buffers_.size(); ++i) {
    const ndarray& base = bound_[i];
    const Buffer& b = *input_buffers_[i];
    if (!base.storage() || base.storage()->is_placeholder() || base.dtype() != a.dtype() || b.dtype != a.dtype() || !base.is_c_contiguous() ||
        b.input != static_cast<int>(i) || !all_static(b.shape) || base.size() == 0)
      continue;
    const int64_t isz = static_cast<int64_t>(a.itemsize());
    const int64_t off = reinterpret_cast<intptr_t>(a.data()) - reinterpret_cast<intptr_t>(base.data());
    bool ok = off >= 0 && off % isz == 0;
    std::vector<int64_t> p{off / isz};
    for (auto x : a.strides()) {
      ok = ok && x % isz == 0;
      p.push_back(x / isz);
    }
    int64_t lo = off / isz, hi = off / isz;
    for (int d = 0; d < a.ndim(); ++d) (p[d + 1] < 0 ? lo : hi) += (a.shape()[d] - 1) * p[d + 1];
    if (!ok || lo < 0 || hi >= base.size()) continue;
    return std::make_pair(i, std::move(p));
  }
  return std::nullopt;
}

std::optional<ndarray> Context::adopt_view(const ndarray& a) {
  if (breaks_.empty()) return std::nullopt;
  auto in = inside_input(a);
  if (!in) return std::nullopt;
  auto [i, p] = std::move(*in);
  auto t = std::make_shared<TracedValue>();
  t->buf = input_buffers_[i];
  t->shape = ir::static_shape(a.shape());
  t->dtype = a.dtype();
  t->ctx_id = id_;
  const int64_t off = p[0];
  t->chain.push_back({ir::ViewKind::Strided, std::move(p), t->shape});
  ndarray r = make_traced(t, a.shape(), off, a.strides());
  if (!a.writeable()) r.set_writeable(false);
  return r;
}

std::optional<ndarray> adopt_view(const ndarray& a) {
  Context* c = current();
  return c ? c->adopt_view(a) : std::nullopt;
}

ir::NodeRef Context::node_of(const ndarray& a) {
  if (TracedValue* tv = traced(a)) {
    if (tv->ctx_id != id_)
      throw ValueError("a traced array escaped the npc.compile call that created it (it has no value here)");
    return value_node(*tv);
  }
  if (a.ndim() == 0) return concrete_value(a.item());
  if (!breaks_.empty() && a.writeable() && a.size() > 0) {
    // A concrete view of a buffer this segment has written (a view realized at the break
    // while another handle of the same array stays traced): read through the buffer's
    // current value, so that the writes recorded since the break show in it, as in NumPy.
    if (auto in = inside_input(a); in && input_buffers_[in->first]->current != input_buffers_[in->first]->initial) {
      const std::vector<int64_t>& p = in->second;
      return graph_->strided(input_buffers_[in->first]->current, p[0], std::span<const int64_t>(p).subspan(1),
                             ir::static_shape(a.shape()));
    }
  }
  if (!breaks_.empty() && a.writeable()) {
    // After a break, a concrete array is a value the function's Python computed (it runs on
    // every call): the graph reads it as it is now, so eager code that changes it later in
    // the segment (`v[v < 0] = w` after `stack([.., v])`) is not seen. A copy, bound anew.
    // The copy keeps the array's memory order (a function's F-ordered result returned after
    // a break is F-ordered, as eagerly): bound C-contiguous over its axes in that order, and
    // read as a copy node transposed back (an output that is a transpose of a computed node
    // is returned as a view of its buffer: fusion::output_root).
    ndarray snap;
    std::vector<int> axes;
    {
      Suspend s;
      snap = a.copy(Order::K);
      axes = like_axes(snap, Order::K);
    }
    if (!std::is_sorted(axes.begin(), axes.end())) {
      std::vector<int64_t> perm(axes.begin(), axes.end()), back(axes.size());
      for (size_t i = 0; i < axes.size(); ++i) back[axes[i]] = static_cast<int64_t>(i);
      ndarray bound = snap.transpose(perm);
      auto b = std::make_shared<Buffer>();
      b->input = static_cast<int>(bound_.size());
      b->dtype = bound.dtype();
      b->shape = ir::static_shape(bound.shape());
      b->hint = bound.shape();
      b->current = b->initial = graph_->input(b->input, bound.dtype(), b->shape);
      bind_top(bound);
      input_buffers_.push_back(b);
      all_buffers_.push_back(b);
      const int64_t serial = static_cast<int64_t>(graph_->nodes().size());  // as Note [distinct buffers]'s copies
      ir::NodeRef cp = graph_->prim(OpId::copy, std::span<const ir::NodeRef>(&b->current, 1), b->dtype, b->shape,
                                    std::span<const int64_t>(&serial, 1));
      return graph_->permute(cp, back);
    }
    auto b = std::make_shared<Buffer>();
    b->input = static_cast<int>(bound_.size());
    b->dtype = snap.dtype();
    b->shape = ir::static_shape(snap.shape());
    b->hint = snap.shape();
    b->current = b->initial = graph_->input(b->input, snap.dtype(), b->shape);
    bind_top(snap);
    input_buffers_.push_back(b);
    all_buffers_.push_back(b);
    return b->current;
  }
  return buffer_for_input(a, ir::static_shape(a.shape()))->current;
}

namespace {
// Note [runtime scalars]
// A Python float argument is traced as a float whose value is a NaN with a marker payload
// (one per argument): the Python object is a `_RuntimeFloat` (python/npc/compiler/_capture.py).
// Only npc's ufunc operand conversion (bind_ops.cpp) recognises that object and hands the
// tracer its value with the payload's tag changed from 0x5A5A to 0xA5A5 (runtime_operand):
// weak operands with exactly that value become Scalar nodes. Every other way the float can
// take reaches NumPy or a non-traced consumer and must not compute with the NaN:
// - NumPy converts a float subclass through `__float__` (ufuncs, numpy.float64(s),
//   asarray, setitem, fill, clip...), which raises: the argument becomes static;
// - Python arithmetic and comparisons on it raise likewise (`_arith`);
// - anything else that computed a value from the marked NaN (math.exp(lr), a value read
//   through float.__float__ by a C API) carries the 0x5A5A tag (NaN payloads propagate), and
//   a marked value that enters a graph in any other way than a weak operand with the
//   blessed value (a constant, a strong 0-d operand, a fill value, an array bound as an
//   input: see _marked in python/npc/compiler/_capture.py) restarts tracing with the argument static (guarded by
//   value). A value computed from the marker that lost it (math.isnan(lr)) is not seen:
//   such Python-level computation with a runtime float is documented as a difference.
constexpr uint64_t kMarkerTag = 0x5A5A, kOperandTag = 0xA5A5;

bool marked_nan(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  const uint64_t tag = (bits >> 32) & 0xFFFF;
  return (bits & 0x7FF8000000000000ULL) == 0x7FF8000000000000ULL && (tag == kMarkerTag || tag == kOperandTag);
}

bool marked(const Scalar& v) {
  return kind(v.dtype) == Kind::Float ? marked_nan(v.f)
         : kind(v.dtype) == Kind::Complex ? marked_nan(v.c.real()) || marked_nan(v.c.imag()) : false;
}
}  // namespace

double runtime_operand(double marker) {
  uint64_t bits;
  std::memcpy(&bits, &marker, sizeof bits);
  bits = (bits & ~(0xFFFFULL << 32)) | (kOperandTag << 32);
  double r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

ir::NodeRef Context::constant(const Scalar& v) {
  if (!sentinels_.empty() && marked(v)) throw StaticScalar("a value computed from a float argument reached the graph");
  return graph_->constant(v);
}

// Note [runtime ints]
// A Python int argument whose value changed between calls (automatic dynamic, as in
// torch.compile: python/npc/compiler/_api.py) is traced as a `_RuntimeInt`
// (python/npc/compiler/_capture.py): not an int subclass but a proxy holding the real value,
// so that every use of it as a Python value goes through one of its methods (CPython reads
// an int subclass's digits directly in range(), slicing, sequence repetition, NumPy's shape
// conversions; a proxy is asked through __index__), and each method records the use: the
// argument is then traced again static, guarded by value. The one use that stays runtime is
// an operand of a traced ufunc (arithmetic and comparisons with arrays): the operand
// conversion (bind_ops.cpp) makes the weak 0-d Int64 (or UInt64) array of the real value,
// as for a Python int, and notes it here (note_runtime_operand); node_of_operand makes it
// Scalar node k instead of a Const. Everything before that (the loop's dtype by NEP 50, the
// OverflowError of a value out of the loop dtype's range, the exact answer of a comparison
// with an out-of-range value, the cast warning of an empty result) saw the real value: the
// guard key holds the value's range class (which of these outcomes any dtype gets), so a
// replay takes the same NEP 50 path. A conversion that did not become a node (the ufunc ran
// eagerly, on concrete operands) computed with the value: unconsumed_runtime_ints() names
// it, and the argument becomes static. A graph break with runtime ints retraces them static
// (the sentinel entry of add_runtime_int), as with runtime floats.
ir::NodeRef Context::node_of_operand(const ndarray& a, bool weak) {
  if (weak && !a.is_traced() && a.ndim() == 0 && !runtime_operands_.empty()) {
    auto it = runtime_operands_.find(static_cast<const void*>(a.data()));
    if (it != runtime_operands_.end() && it->second.array.storage() == a.storage() && a.dtype() == it->second.array.dtype()) {
      it->second.consumed = true;
      return graph_->scalar(it->second.k, scalar_values[static_cast<size_t>(it->second.k)].dtype);
    }
  }
  if (!a.is_traced() && a.ndim() == 0 && !sentinels_.empty()) {
    Scalar v = a.item();
    if (weak && kind(v.dtype) == Kind::Float && marked_nan(v.f))
      for (auto& [s, k] : sentinels_) {
        const double b = runtime_operand(s);
        if (std::memcmp(&b, &v.f, sizeof(double)) == 0) return graph_->scalar(k, DType::Float64);
      }
  }
  if (weak && !a.is_traced()) return concrete_value(a.item());
  return node_of(a);
}

// Note [values after a break]
// A function with graph breaks runs its Python on every call, and each segment's graph is
// looked up by structure (Note [segment cache] in bind_tracer.cpp). Concrete numbers that
// reach a segment as values (NumPy scalars computed eagerly between breaks or realized by
// one: `res[i] = data[mask].mean()`, `float(x.sum())`, `int(a.argmax())` and whatever the
// Python computes from them, then used as operands, written, filled or returned) differ
// from one loop iteration, and one call, to the next. As Const nodes they would make every
// iteration's segment a new graph with new kernel text: a loop with a break per iteration
// compiled a translation unit per iteration, and compiled them all again for new data.
// So after the first break such a number is a runtime Scalar node of the segment, numbered
// after the function's float arguments (which are static in functions with breaks, Note
// [runtime scalars]), its value passed when the segment runs: iterations and calls that do
// the same thing share one graph and one set of kernels. The number's dtype stays the
// node's, and promotion already happened in the tracer, so results are the constant's.
// Where the value must be static it never becomes such a node: shapes, indices, slice
// bounds and Python control flow are decided while the Python runs (on every call), and
// they reach the graph as structure, so the segment lookup compares them; a 0-d index
// array stays a Const (index_operand). Bools stay Consts (two values at most). Before the
// first break, numbers come from guarded values and stay Consts.
ir::NodeRef Context::concrete_value(const Scalar& v) {
  // After a cut (Note [loops] in trace_segments.cpp) too: the value is a guarded one, the same on
  // every replay of the plan, but as a Scalar node it leaves the segment's structure alone.
  if ((breaks_.empty() && cuts_ == 0) || kind(v.dtype) == Kind::Bool || kind(v.dtype) == Kind::Complex)
    return constant(v);
  if (!sentinels_.empty() && marked(v)) throw StaticScalar("a value computed from a float argument reached the graph");
  const int k = static_cast<int>(scalar_values.size() + segment_scalars_.size());
  segment_scalars_.push_back(v);
  return graph_->scalar(k, v.dtype);
}

ndarray Context::new_value(ir::NodeRef n, Shape hint) {
  auto b = std::make_shared<Buffer>();
  b->current = n;
  b->dtype = n->dtype;
  b->shape = n->shape;
  b->hint = hint;
  all_buffers_.push_back(b);
  auto tv = std::make_shared<TracedValue>();
  tv->buf = b;
  tv->shape = n->shape;
  tv->dtype = n->dtype;
  tv->ctx_id = id_;
  return make_traced(tv, hint, 0, contiguous_strides(hint, itemsize(n->dtype)));
}

// Note [writes into captured arrays]
// A traced value written into an array that is not traced (a global or closure array, the
// `out=` of a non-input, `buf[:] = x`) makes that array a graph input bound by reference,
// like an array the function reads: the write is functionalized on its buffer and the final
// value is written back into it after the graph ran (Graph::writebacks), on every replay.
ndarray Context::traced_alias(const ndarray& a) {
  if (!a.writeable()) throw ValueError("assignment destination is read-only");
  return traced_input(a, buffer_for_input(a, ir::static_shape(a.shape())));
}

void Context::add_index_check(int input, int64_t extent, int64_t axis) {
  ir::Graph::IndexCheck chk{input, extent, axis};
  auto& v = graph_->index_checks;
  if (std::find(v.begin(), v.end(), chk) == v.end()) v.push_back(chk);
}

// Note [specialised symbols]
// A value whose dims are symbolic where the destination's are static or other symbols (a
// piece of concatenate(..., axis) along a symbolic axis written into the static-shaped
// result, a join whose output size would be s0 + s1) cannot be broadcast exactly. Tracing
// saw equal sizes (eager code checked them), so the dims are unified and the assumption is
// recorded as a constraint: the compiled graph is reused only while it holds, and a call
// with other sizes traces again. Never an error on a valid program.
ir::NodeRef Context::align_dims(ir::NodeRef value, const ir::SymShape& target) {
  if (value->shape.size() > target.size()) return value;  // the builder reports it
  const size_t lead = target.size() - value->shape.size();
  ir::SymShape aligned = value->shape;
  auto hint_of = [&](ir::Dim d) { return graph_->symbols().at(d.symbol()).hint; };
  for (size_t d = 0; d < aligned.size(); ++d) {
    ir::Dim s = aligned[d], t = target[lead + d];
    if (s == t || (s.is_static() && s.value() == 1)) continue;
    if (!s.is_static() && t.is_static()) {
      if (hint_of(s) != t.value()) continue;
      auto o = graph_->symbols().at(s.symbol());
      constraints_.push_back({o.input, o.axis, -1, -1, t.value()});
    } else if (s.is_static() && !t.is_static()) {
      if (hint_of(t) != s.value()) continue;
      auto o = graph_->symbols().at(t.symbol());
      constraints_.push_back({o.input, o.axis, -1, -1, s.value()});
    } else if (!s.is_static() && !t.is_static()) {
      if (hint_of(s) != hint_of(t)) continue;
      auto a = graph_->symbols().at(s.symbol()), b = graph_->symbols().at(t.symbol());
      constraints_.push_back({a.input, a.axis, b.input, b.axis, 0});
    } else {
      continue;
    }
    aligned[d] = t;
  }
  return aligned == value->shape ? value : graph_->reshape(value, aligned);
}

void Context::write(const ndarray& dst, ir::NodeRef value, int64_t op_at) {
  TracedValue* tv = traced(dst);
  if (!tv || tv->ctx_id != id_) throw ValueError("npc.compile: write into an array of another trace");
  ir::NodeRef region = value_node(*tv);
  value = graph_->cast(value, region->dtype);
  // NumPy's setitem drops leading size-1 dims of the value.
  while (value->ndim() > region->ndim() && value->shape[0] == ir::Dim::fixed(1)) {
    ir::SymShape s(value->shape.begin() + 1, value->shape.end());
    value = graph_->reshape(value, s);
  }
  value = align_dims(value, region->shape);
  // A write into an empty region changes nothing (`a[1:] -= 2` with one row): no node. The
  // dims are aligned all the same, so that the constraints hold (an empty piece of a join
  // fixes the size of the result's other dims too).
  if (std::any_of(region->shape.begin(), region->shape.end(), [](ir::Dim d) { return d == ir::Dim::fixed(0); })) return;
  value = graph_->broadcast(value, region->shape);
  Buffer& b = *tv->buf;
  // A write over the whole buffer (`out=` of a fresh result, `x[...] = v`) is the value itself.
  if (region == b.current && value->shape == b.current->shape) {
    b.current = value;
  } else if (region->kind == ir::NodeKind::View && region->view_kind() == ir::ViewKind::Permute &&
             region->args[0] == b.current) {
    // Through a transpose of the whole buffer (`np.true_divide(r, n, out=r)` of a result laid
    // out as NumPy's, Note [reduction layout] in src/ops/reduce_plan.cpp): the value
    // transposed back, materialised in the buffer's layout (a copy, so that the result keeps
    // that layout rather than the value's).
    std::vector<int64_t> inv(region->params.size() - 1);
    for (size_t i = 1; i < region->params.size(); ++i) inv[static_cast<size_t>(region->params[i])] = static_cast<int64_t>(i - 1);
    ir::NodeRef v = graph_->permute(value, inv);
    const int64_t serial = static_cast<int64_t>(graph_->nodes().size());  // as Note [distinct buffers]'s copies
    b.current = graph_->prim(OpId::copy, std::span<const ir::NodeRef>(&v, 1), v->dtype, b.current->shape,
                             std::span<const int64_t>(&serial, 1));
  } else {
    b.current = graph_->write(b.current, region, value);
  }
  ++b.version;
  // Note [writes before a raising operation] in src/fusion/backend.cpp.
  if (b.input >= 0)
    graph_->input_writes.push_back({static_cast<uint32_t>(op_at >= 0 ? op_at : evaluations()), b.input, b.current});
}

// Note [views of scalar results]
// A scalar result (Note [scalar results]) stands for a NumPy scalar, which owns no memory
// that anything else sees: `x[...]`, `x[None]`, `x.reshape(1)`, `np.asarray(x)` and
// `np.atleast_1d(x)` of a NumPy scalar are fresh arrays, so writes through them leave `x`
// (and every other name bound to it) alone (Note [writes into scalar results] in
// python/npc/csrc/bind_ndarray.cpp). A view of a traced scalar result is therefore a view of
// a copy of its value, on a buffer of its own. (`x.T`, `x.squeeze()` and `x.view()` of a
// NumPy scalar are scalars, whose item assignment raises; here they are such copies too,
// written without error: the write still reaches no other name.)
std::shared_ptr<void> Context::view(const ndarray& src, const ndarray& r) {
  TracedValue* tv = traced(src);
  if (!tv || tv->ctx_id != id_) return nullptr;
  TracedValue copy;
  if (tv->scalar && src.ndim() == 0 && src.offset() == 0 && tv->chain.empty()) {
    ir::NodeRef v = value_node(*tv);
    const int64_t serial = static_cast<int64_t>(graph_->nodes().size());  // as Note [distinct buffers]'s copies
    auto b = std::make_shared<Buffer>();
    b->current = graph_->prim(OpId::copy, std::span<const ir::NodeRef>(&v, 1), v->dtype, v->shape,
                              std::span<const int64_t>(&serial, 1));
    b->dtype = v->dtype;
    b->shape = v->shape;
    all_buffers_.push_back(b);
    copy.buf = std::move(b);
    copy.shape = v->shape;
    copy.dtype = v->dtype;
    copy.ctx_id = id_;
    tv = &copy;
  }
  if (!sym_sizes_.empty()) tv->shape = segment_shape(tv->shape);  // Note [symbols after a break]
  const int64_t isz = static_cast<int64_t>(itemsize(tv->dtype));
  auto derived = [&](ViewStep step, ir::SymShape shape) {
    auto t = std::make_shared<TracedValue>();
    t->buf = tv->buf;
    t->chain = tv->chain;
    t->chain.push_back(std::move(step));
    t->shape = std::move(shape);
    t->dtype = r.dtype();
    t->ctx_id = id_;
    return t;
  };
  // Note [slices that cover the axis]
  // The geometry of the view is all this sees: `v[-2:]` traced at size 2 is v itself, and the
  // identity, axis-permutation and reshape forms below would name it with v's symbolic size,
  // so a later call at size 4 returned all of v (and `x[:3] = 0` zeroed all of x). A view made
  // by a subscript with a slice bound depends on the sizes unless they are static: with
  // symbolic dims it takes the strided path, which needs the sizes (Note [views of symbolic
  // sizes] below). `v[:]`, transposes and reshapes keep their symbols.
  const bool bounded = bounded_view && !all_static(tv->shape);
  if (!bounded && r.dtype() == src.dtype() && r.offset() == src.offset()) {
    if (r.shape() == src.shape() && r.strides() == src.strides()) {
      auto t = std::make_shared<TracedValue>(*tv);
      t->scalar = false;  // a view is an array (Note [scalar results])
      return t;
    }
    // A permutation of the axes (transpose): exact with symbolic sizes too.
    if (r.ndim() == src.ndim()) {
      std::vector<int64_t> perm;
      std::vector<bool> used(src.ndim(), false);
      for (int i = 0; i < r.ndim(); ++i)
        for (int j = 0; j < src.ndim(); ++j)
          if (!used[j] && src.shape()[j] == r.shape()[i] && src.strides()[j] == r.strides()[i]) {
            used[j] = true;
            perm.push_back(j);
            break;
          }
      if (static_cast<int>(perm.size()) == r.ndim()) {
        ir::SymShape s;
        for (auto j : perm) s.push_back(tv->shape[j]);
        return derived({ir::ViewKind::Permute, perm, s}, s);
      }
    }
    // A reshape of a contiguous array: symbolic sizes carry over when only size-1 axes change.
    if (src.is_c_contiguous() && r.is_c_contiguous() && r.size() == src.size()) {
      ir::SymShape s;
      if (all_static(tv->shape)) {
        s = ir::static_shape(r.shape());
      } else {
        std::vector<ir::Dim> nonone;
        for (size_t d = 0; d < tv->shape.size(); ++d)
          if (src.shape()[d] != 1) nonone.push_back(tv->shape[d]);
        std::vector<int64_t> nonone_hint;
        for (size_t d = 0; d < tv->shape.size(); ++d)
          if (src.shape()[d] != 1) nonone_hint.push_back(src.shape()[d]);
        size_t k = 0;
        bool ok = true;
        for (int d = 0; d < r.ndim(); ++d) {
          if (r.shape()[d] == 1) { s.push_back(ir::Dim::fixed(1)); continue; }
          // The same sequence of non-1 sizes: a dim carries over only onto a dim of its size.
          if (k >= nonone.size() || nonone_hint[k] != r.shape()[d] || nonone_hint[k] == 0) { ok = false; break; }
          s.push_back(nonone[k++]);
        }
        if (!ok || k != nonone.size()) s.clear();
      }
      if (!s.empty() || r.ndim() == 0) return derived({ir::ViewKind::Reshape, {}, s}, s);
    }
  }
  // Real/imaginary part.
  if (is_complex(src.dtype()) && r.dtype() == real_dtype(src.dtype()) && r.shape() == src.shape() &&
      r.strides() == src.strides() && (r.offset() == src.offset() || r.offset() == src.offset() + isz / 2)) {
    int64_t imag = r.offset() != src.offset();
    return derived({ir::ViewKind::Component, {imag}, tv->shape}, tv->shape);
  }
  // Anything else strided over the buffer (static shapes, same dtype as the buffer).
  const Buffer& b = *tv->buf;
  const int64_t bsz = static_cast<int64_t>(itemsize(b.dtype));
  if (all_static(b.shape) && r.dtype() == b.dtype && r.offset() % bsz == 0) {
    std::vector<int64_t> p{r.offset() / bsz};
    for (auto st : r.strides()) {
      if (st % bsz != 0) return nullptr;
      p.push_back(st / bsz);
    }
    auto t = std::make_shared<TracedValue>();
    t->buf = tv->buf;
    t->shape = ir::static_shape(r.shape());
    t->chain.push_back({ir::ViewKind::Strided, p, t->shape});
    t->dtype = r.dtype();
    t->ctx_id = id_;
    return t;
  }
  // Note [views of symbolic sizes]
  // A strided view of a buffer of symbolic shape (`np.expand_dims(np.moveaxis(a, 0, -1), 0)`
  // traced with dynamic sizes) has no exact node: the view needs the sizes. Eager code would
  // realize the source (a graph break) and make a concrete view of the realized memory; but
  // a concrete view of an input holds the values of the segment's start, and misses the
  // writes into the input that the next segment records (`a[:, ::-2] = 0`), where NumPy's
  // view sees them. So the break happens here instead, and after it every buffer is bound
  // with the sizes seen (Note [symbols after a break]): the view is then a traced strided
  // view of the buffer, which reads its value where it is used, as the view does in NumPy.
  // Where the dims are symbolic only because the function met several sizes (automatic
  // dynamic shapes: npc.compile sets static_views), a graph that breaks at every such view
  // runs its Python on every call; instead the trace stops (StaticShape) and the function is
  // traced again with the buffer's dims static (Note [dims made static] in _api.py). This
  // happens in the first segment only: at the first break or cut the symbols become sizes.
  if (!all_static(b.shape) && r.dtype() == b.dtype && r.offset() % bsz == 0 &&
      std::all_of(r.strides().begin(), r.strides().end(), [&](int64_t st) { return st % bsz == 0; })) {
    if (static_views && breaks_.empty() && cuts_ == 0) {
      const auto& syms = graph_->symbols();
      for (ir::Dim d : b.shape)
        if (!d.is_static() && static_cast<size_t>(d.symbol()) < syms.size())
          static_dims_.emplace_back(syms[static_cast<size_t>(d.symbol())].input, syms[static_cast<size_t>(d.symbol())].axis);
      throw StaticShape("a view of symbolic sizes");
    }
    break_graph("a concrete value was needed");
    if (all_static(tv->buf->shape)) return view(src, r);
  }
  return nullptr;
}

ir::SymShape Context::broadcast(const std::vector<ir::SymShape>& shapes, const std::vector<Shape>& hints, Shape& hint) {
  size_t nd = 0;
  for (auto& s : shapes) nd = std::max(nd, s.size());
  ir::SymShape out(nd, ir::Dim::fixed(1));
  hint.assign(nd, 1);
  for (size_t d = 0; d < nd; ++d) {
    std::optional<ir::Dim> pick;
    int64_t h = 1;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const auto& s = shapes[i];
      if (d + s.size() < nd) continue;
      size_t k = d + s.size() - nd;
      ir::Dim dim = s[k];
      int64_t dh = hints[i][k];
      if (dim.is_static() && dim.value() == 1) continue;
      if (h != 1 && dh != h) {
        // NumPy's message, naming the operands' (traced) shapes.
        std::string msg = "operands could not be broadcast together with shapes";
        for (const Shape& t : hints) msg += " " + iter_shape_str(t);
        throw ValueError(msg + " ");
      }
      h = dh;
      if (!pick) { pick = dim; continue; }
      if (*pick == dim) continue;
      // Two different dims of equal traced size: tracing assumed they are equal; record it
      // so the compiled graph is only reused when they still are.
      auto origin = [&](ir::Dim x) { return graph_->symbols().at(x.symbol()); };
      if (pick->is_static() && !dim.is_static()) {
        auto o = origin(dim);
        constraints_.push_back({o.input, o.axis, -1, -1, pick->value()});
      } else if (!pick->is_static() && dim.is_static()) {
        auto o = origin(*pick);
        constraints_.push_back({o.input, o.axis, -1, -1, dim.value()});
        pick = dim;
      } else if (!pick->is_static() && !dim.is_static()) {
        auto a = origin(*pick), b = origin(dim);
        constraints_.push_back({a.input, a.axis, b.input, b.axis, 0});
      }
    }
    if (pick) out[d] = *pick;
    hint[d] = h;
  }
  return out;
}

}  // namespace npc::tracer
