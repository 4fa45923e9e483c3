// Recording traced programs: the op hooks, buffers, graph breaks. See trace.hpp.
#include "tracer/trace.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <utility>
#include <unordered_set>

#include "npc/creation.hpp"
#include "npc/fperror.hpp"
#include "npc/indexing.hpp"
#include "npc/ops.hpp"
#include "ops/loops.hpp"  // UfuncCastingError (the eager path's casting errors)

namespace npc::tracer {

thread_local bool g_fullgraph = false;
thread_local bool g_scalar_math = false;
std::function<std::string(const std::string&)> g_break_annotator;
std::function<std::pair<uint64_t, uint64_t>()> g_position;

namespace {
thread_local Context* t_current = nullptr;
std::atomic<uint64_t> g_next_id{1};

constexpr Identity kIdentity[] = {
#define NPC_UFUNC(name, nin, nout, identity, ...) Identity::identity,
#define NPC_REDUCE(name, ...) Identity::None_,
#define NPC_PRIM(name, nin, ...) Identity::None_,
#include "npc/ops.def"
};

const std::shared_ptr<Storage>& placeholder() {
  // Traced arrays have geometry but no data; every one points at this tiny storage, which
  // is never read (ndarray::data() realizes first) and exempt from the bounds check of views.
  return Storage::placeholder();
}

TracedValue* traced(const ndarray& a) { return static_cast<TracedValue*>(a.trace().get()); }

ndarray make_traced(std::shared_ptr<TracedValue> tv, const Shape& hint, int64_t offset_elems, Strides strides) {
  ndarray r(placeholder(), offset_elems * static_cast<int64_t>(itemsize(tv->dtype)), tv->dtype, hint, std::move(strides));
  r.set_trace(std::move(tv));
  return r;
}

// Concrete arrays with the same first-element address, dtype, shape and strides are one graph
// input: the same memory reached through different wrappers (a NumPy array converted twice, a
// captured global's stand-in and the global read by a helper) must be one buffer, so a write
// through one is seen through the other.
std::string geometry_key(const ndarray& a) {
  std::string k = std::to_string(reinterpret_cast<uintptr_t>(a.storage()->data()) + static_cast<uintptr_t>(a.offset())) +
                  ":" + std::to_string(static_cast<int>(a.dtype()));
  for (auto d : a.shape()) k += "," + std::to_string(d);
  k += "/";
  for (auto d : a.strides()) k += "," + std::to_string(d);
  return k;
}

bool all_static(const ir::SymShape& s) {
  return std::all_of(s.begin(), s.end(), [](ir::Dim d) { return d.is_static(); });
}
}  // namespace

Context* current() { return t_current; }
void set_current(Context* c) { t_current = c; }
Scope::Scope(Context* c) : prev_(t_current) { t_current = c; }
Scope::~Scope() { t_current = prev_; }
Suspend::Suspend() : prev_(t_current) { t_current = nullptr; }
Suspend::~Suspend() { t_current = prev_; }

Context::Context() : id_(g_next_id++), graph_(std::make_unique<ir::Graph>()) { install_hooks(); }
Context::~Context() = default;

// ---------------------------------------------------------------- inputs
std::shared_ptr<Buffer> Context::buffer_for_input(const ndarray& a, ir::SymShape shape) {
  auto key = geometry_key(a);
  if (auto it = bound_by_key_.find(key); it != bound_by_key_.end()) return it->second;
  auto b = std::make_shared<Buffer>();
  b->input = static_cast<int>(bound_.size());
  b->dtype = a.dtype();
  b->shape = shape;
  b->hint = a.shape();
  b->current = b->initial = graph_->input(b->input, a.dtype(), std::move(shape));
  bind_top(a);
  input_buffers_.push_back(b);
  all_buffers_.push_back(b);
  bound_by_key_[key] = b;
  return b;
}

// Note [strided inputs]
// An argument that is neither C- nor F-contiguous (`x[:, :3]`, `x[::2]`, `x[::-1]`, a
// broadcast view) is bound as a C-contiguous array over the memory that holds it
// (covering_view: the box of rows it is a slice of when its strides nest and that memory is
// valid, else the 1-D run from its lowest to its highest element) and traced as a Strided
// view of it with exactly eager's strides, so `x.strides`, flags, and the view-or-copy
// decisions of reshape and ravel are eager's, and writes through it are written back into
// the caller's memory. Its shape is static and the guard key holds its strides and the
// cover's rank (the Python layer binds covering_view(x) on replays). Strides that are not
// multiples of the itemsize keep the C-strided binding.
bool strided_input(const ndarray& a) {
  if (a.ndim() == 0 || a.size() == 0 || a.is_c_contiguous() || a.is_f_contiguous()) return false;
  const int64_t isz = static_cast<int64_t>(itemsize(a.dtype()));
  for (auto st : a.strides())
    if (st % isz != 0) return false;
  return true;
}

ndarray covering_view(const ndarray& a, int64_t before, int64_t after) {
  const int64_t isz = static_cast<int64_t>(itemsize(a.dtype()));
  int64_t lo = 0, hi = 0;  // bytes from a's first element to its lowest and highest ones
  for (int d = 0; d < a.ndim(); ++d) {
    int64_t ext = (a.shape()[d] - 1) * a.strides()[d];
    (ext < 0 ? lo : hi) += ext;
  }
  const int64_t start = a.offset() + lo;  // the lowest element, from the storage's start
  if (before < 0) before = start;
  if (after < 0) after = static_cast<int64_t>(a.storage()->nbytes()) - (a.offset() + hi + isz);
  // A box: the axes that move (extent > 1, stride != 0) sorted by decreasing |stride| are
  // rows of rows when each stride is a multiple of the next and the rows do not overlap; the
  // C-contiguous box (n_0, e_0/e_1, ..., e_{k-2}) of element strides (e_0, ..., e_{k-2}, 1)
  // starting at the lowest element holds `a` as a per-axis slice, so writes of any rank
  // through it are index maps (Note [strided inputs]). It may extend past `a`'s highest
  // element: only when that memory is valid (`after`).
  std::vector<std::pair<int64_t, int64_t>> ax;  // (|stride| in elements, extent)
  for (int d = 0; d < a.ndim(); ++d)
    if (a.shape()[d] > 1 && a.strides()[d] != 0) ax.emplace_back(std::abs(a.strides()[d]) / isz, a.shape()[d]);
  std::sort(ax.begin(), ax.end(), [](auto& x, auto& y) { return x.first > y.first; });
  bool box = ax.size() >= 2;
  for (size_t i = 0; box && i + 1 < ax.size(); ++i)
    box = ax[i].first > ax[i + 1].first && ax[i].first % ax[i + 1].first == 0 &&
          (ax[i + 1].second - 1) * ax[i + 1].first < ax[i].first;
  if (box) {
    Shape shape{ax[0].second};
    for (size_t i = 0; i + 2 < ax.size(); ++i) shape.push_back(ax[i].first / ax[i + 1].first);
    shape.push_back(ax[ax.size() - 2].first);
    const int64_t extra = (ax[0].second * ax[0].first - 1) * isz - (hi - lo);  // box bytes beyond a's run
    // The box starts `shift` bytes before a's lowest element (within its first row), as
    // little as the valid memory past a's highest element allows.
    const int64_t shift = std::max<int64_t>(extra - std::max<int64_t>(after, 0), 0);
    if (shift <= before && shift % isz == 0)
      return a.with_geometry(start - shift, a.dtype(), shape, contiguous_strides(shape, isz));
  }
  return a.with_geometry(start, a.dtype(), Shape{(hi - lo) / isz + 1}, Strides{isz});
}

// Note [F-ordered inputs]
// A traced array's geometry is its position in a C-contiguous layout of its buffer, so an
// F-ordered argument bound as it is would report C strides and flags, and a reshape of it
// would trace as a view where eager NumPy copies (a later write through it would reach the
// caller's array). Bound as its C-contiguous transpose and traced as the transpose of that,
// it reports exactly eager's strides and flags, and reshapes copy as they do eagerly.
ndarray Context::add_input(const ndarray& a, const std::vector<int>& dynamic, bool f_order, int64_t valid_before,
                           int64_t valid_after) {
  if (a.is_traced()) throw ValueError("npc.compile: an argument is already a traced array");
  if (f_order && a.ndim() >= 2 && !a.is_c_contiguous() && a.is_f_contiguous()) {
    const int nd = a.ndim();
    std::vector<int64_t> rev(nd);
    for (int d = 0; d < nd; ++d) rev[d] = nd - 1 - d;
    std::vector<int> dyn;
    for (int ax : dynamic) dyn.push_back(nd - 1 - ax);
    ndarray t = add_input(a.transpose(rev), dyn, false);
    Scope active(this);  // the view hook records into this context
    return t.transpose(rev);
  }
  if (f_order && strided_input(a)) {
    // Note [strided inputs]: bound as the contiguous run of memory that holds it, traced as
    // a strided view of that run with eager's strides (static shape; the guard keys the strides).
    ndarray cover = covering_view(a, valid_before, valid_after);
    ndarray t = add_input(cover, {}, false);
    const int64_t isz = static_cast<int64_t>(itemsize(a.dtype()));
    Scope active(this);  // the view hook records into this context
    return t.with_geometry(t.offset() + (a.offset() - cover.offset()) / isz * isz, a.dtype(), a.shape(), a.strides());
  }
  ir::SymShape shape = ir::static_shape(a.shape());
  int index = static_cast<int>(bound_.size());
  auto key = geometry_key(a);
  bool fresh = !bound_by_key_.count(key);
  if (fresh)
    for (int ax : dynamic) {
      int32_t s = graph_->add_symbol(index, ax, a.shape()[ax]);
      shape[ax] = ir::Dim::sym(s);
    }
  auto b = buffer_for_input(a, shape);
  if (fresh) ++num_user_inputs;
  return traced_input(a, std::move(b));
}

ndarray Context::traced_input(const ndarray& a, std::shared_ptr<Buffer> b) {
  auto tv = std::make_shared<TracedValue>();
  tv->shape = b->shape;
  tv->buf = std::move(b);
  tv->dtype = a.dtype();
  tv->ctx_id = id_;
  return make_traced(tv, a.shape(), 0, contiguous_strides(a.shape(), itemsize(a.dtype())));
}

void Context::add_scalar(double sentinel, double value) {
  sentinels_.emplace_back(sentinel, static_cast<int>(scalar_values.size()));
  scalar_values.push_back(value);
  graph_->scalar(static_cast<int>(scalar_values.size()) - 1, DType::Float64);
}

// Note [shapes read in Python]
// A traced array's shape, size, strides and nbytes read from Python are concrete ints: what
// the program computes from them (a mean's count, `np.zeros(x.shape)`, `x.shape[1] // 2`) is
// frozen into the graph. So reading them specialises the array's symbolic dims to the sizes
// seen (constraints): the graph is reused only for those sizes, and other sizes trace again.
// Operations that take shapes from their operands in C++ (ufuncs, reductions, views) keep
// the dims symbolic.
void Context::specialise(const ndarray& a) {
  TracedValue* tv = traced(a);
  if (!tv || tv->ctx_id != id_ || !breaks_.empty()) return;  // after a break: no cached graph
  const auto& syms = graph_->symbols();
  for (size_t d = 0; d < tv->shape.size() && d < a.shape().size(); ++d) {
    ir::Dim dim = tv->shape[d];
    if (dim.is_static() || static_cast<size_t>(dim.symbol()) >= syms.size()) continue;
    const size_t k = static_cast<size_t>(dim.symbol());
    if (specialised_.size() <= k) specialised_.resize(k + 1, false);
    if (specialised_[k]) continue;
    specialised_[k] = true;
    constraints_.push_back({syms[k].input, syms[k].axis, -1, -1, syms[k].hint});
  }
}

void mark_scalar(const ndarray& a) {
  if (a.ndim() != 0) return;
  if (auto* tv = traced(a)) tv->scalar = true;
  else if (Context* c = current()) c->add_realized_scalar(a);  // computed eagerly after a break
}

void Context::add_realized_scalar(const ndarray& a) {
  if (!realized_scalar(a)) realized_scalars_.emplace_back(&a, a);
}

bool is_scalar_result(const ndarray& a) {
  if (a.ndim() != 0) return false;
  if (auto* tv = traced(a)) return tv->scalar;
  Context* c = current();
  return c && c->realized_scalar(a);
}

bool Context::realized_scalar(const ndarray& a) const {
  for (const auto& [obj, value] : realized_scalars_)
    if (obj == &a && a.storage() == value.storage() && a.offset() == value.offset() && a.dtype() == value.dtype())
      return true;
  return false;
}

void specialise_shape(const ndarray& a) {
  if (Context* c = current()) c->specialise(a);
}

// ---------------------------------------------------------------- nodes of arrays
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
    for (size_t i = 0; i < bound_.size() && i < input_buffers_.size(); ++i) {
      const ndarray& base = bound_[i];
      Buffer& b = *input_buffers_[i];
      if (b.current == b.initial || base.storage() != a.storage() || base.dtype() != a.dtype() ||
          !base.is_c_contiguous() || b.input != static_cast<int>(i))
        continue;
      const int64_t isz = static_cast<int64_t>(a.itemsize());
      const int64_t off = a.offset() - base.offset();
      bool ok = off >= 0 && off % isz == 0;
      std::vector<int64_t> st;
      for (auto x : a.strides()) {
        ok = ok && x % isz == 0;
        st.push_back(x / isz);
      }
      int64_t lo = off / isz, hi = off / isz;
      for (int d = 0; d < a.ndim(); ++d) (st[d] < 0 ? lo : hi) += (a.shape()[d] - 1) * st[d];
      if (!ok || lo < 0 || hi >= base.size()) continue;
      return graph_->strided(b.current, off / isz, st, ir::static_shape(a.shape()));
    }
  }
  if (!breaks_.empty() && a.writeable()) {
    // After a break, a concrete array is a value the function's Python computed (it runs on
    // every call): the graph reads it as it is now, so eager code that changes it later in
    // the segment (`v[v < 0] = w` after `stack([.., v])`) is not seen. A copy, bound anew.
    ndarray snap;
    {
      Suspend s;
      snap = a.copy();
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
// (one per argument): the Python object is a `_RuntimeFloat` (python/npc/compiler/_api.py).
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
//   input: see _marked in _api.py) restarts tracing with the argument static (guarded by
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

ir::NodeRef Context::node_of_operand(const ndarray& a, bool weak) {
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
  // After a cut (Note [loops]) too: the value is a guarded one, the same on every replay of
  // the plan, but as a Scalar node it leaves the segment's structure alone.
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

void Context::write(const ndarray& dst, ir::NodeRef value) {
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
  b.current = region == b.current && value->shape == b.current->shape ? value : graph_->write(b.current, region, value);
  ++b.version;
}

std::shared_ptr<void> Context::view(const ndarray& src, const ndarray& r) {
  TracedValue* tv = traced(src);
  if (!tv || tv->ctx_id != id_) return nullptr;
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
  if (r.dtype() == src.dtype() && r.offset() == src.offset()) {
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
      if (h != 1 && dh != h)
        throw ValueError("operands could not be broadcast together (traced shapes)");
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

// ---------------------------------------------------------------- segments
void Context::start_segment() {
  graph_ = std::make_unique<ir::Graph>();
  bound_by_key_.clear();
  segment_scalars_.clear();
  for (size_t k = 0; k < scalar_values.size(); ++k) graph_->scalar(static_cast<int>(k), DType::Float64);
  segment_start_size_ = graph_->nodes().size();
}

std::vector<ndarray> Context::run_segment(std::vector<ir::NodeRef> outputs) {
  ir::Graph& g = *graph_;
  g.outputs = std::move(outputs);
  g.writebacks.clear();
  // Note [owned inputs] in src/fusion/lower_group.cpp: in a cut trace without breaks, the values
  // carried from an earlier segment are arrays only the trace (or the plan) holds.
  g.owned_inputs.clear();
  if (plan_ && breaks_.empty())
    for (size_t i = 0; i < bound_src_.size(); ++i)
      if (bound_src_[i].kind == 1) g.owned_inputs.push_back(static_cast<int>(i));
  for (auto& b : input_buffers_)
    if (b->input >= 0 && b->current != b->initial) g.writebacks.emplace_back(b->input, b->current);
  ops_per_graph.push_back(0);
  for (ir::NodeRef n : g.nodes())
    if (n->kind != ir::NodeKind::Input && n->kind != ir::NodeKind::Scalar && n->kind != ir::NodeKind::Const &&
        n->kind != ir::NodeKind::View)
      ++ops_per_graph.back();
  if (ir::verify_enabled()) ir::verify(g, "trace");
  segment_graphs_raw.push_back(g.str());
  ir::Graph pruned = ir::run_pass(std::move(g), ir::dce, "dce");
  segment_graphs.push_back(pruned.str());
  std::vector<Scalar> scalars;
  for (double v : scalar_values) scalars.push_back(Scalar::from_double(v));
  scalars.insert(scalars.end(), segment_scalars_.begin(), segment_scalars_.end());  // Note [values after a break]
  std::vector<ndarray> out;
  const bool reusable = !breaks_.empty() || cuts_ > 0;
  // Note [loops]: the segments of a cut trace without breaks are the steps of its plan.
  const bool step = plan_ && breaks_.empty() && cuts_ > 0;
  SegmentRun keep;
  {
    Suspend s;
    if (runner) {
      out = runner(pruned, bound_, scalars, reusable, step ? &keep : nullptr);
    } else if (step) {
      auto g = std::make_shared<ir::Graph>(std::move(pruned));
      keep = {g, [g](const ir::RunArgs& a) { return ir::interpret(*g, a); }};
      out = keep.exe(ir::RunArgs{bound_, scalars});
    } else {
      out = ir::interpret(pruned, ir::RunArgs{bound_, scalars});
    }
  }
  if (step) plan_->steps.push_back({std::move(keep), bound_src_, segment_scalars_, {}});
  *graph_ = std::move(pruned);
  return out;
}

void Context::bind_top(const ndarray& a) {
  bound_.push_back(a);
  top_.push_back(a);
  bound_src_.push_back({0, static_cast<int>(top_.size()) - 1, -1});
}

void Context::break_graph(const std::string& why) {
  // After a break, concrete arrays meet Python values in eager ops, where a runtime scalar's
  // marker value would be computed with: functions with breaks take their floats static
  // (they run their Python on every call anyway). Note [runtime scalars].
  if (!sentinels_.empty()) throw StaticScalar("a graph break with runtime scalars");
  std::string reason = g_break_annotator ? g_break_annotator(why) : why;
  if (g_fullgraph) throw GraphBreak(reason);
  end_segment(true, reason);
}

// Note [loops]
// Tracing unrolls Python loops: `for i in range(n): A[i, :i] -= ...` records every iteration,
// so a row loop is a graph of many thousands of nodes, and lowering and compiling one graph
// grows faster than its size. So a trace is cut into segments: when a segment holds more than
// a node budget (npc.config.segment_nodes, NPC_SEGMENT_NODES, 10000 by default), the next
// operation that starts (a hook calls maybe_cut() before it records anything) ends it as a
// graph break would, except that nothing is realized for the Python: the pending segment
// runs, the buffers live at the cut become inputs of the next segment, and tracing goes on.
// A cut is no graph break: the trace keeps its runtime float arguments, fullgraph does not
// raise, bool Consts and the rest of the semantics of one graph stay. What differs:
// - numbers that reach a later segment as values are its runtime Scalar nodes (as after a
//   break, Note [values after a break]), with the values they had while tracing: before any
//   break they come from guarded values, so they are the same on every call;
// - the symbolic sizes of the trace are specialised to the sizes seen (Note [symbols after a
//   break]): a cut trace is reused for those sizes only (other sizes trace again);
// - segments are looked up by structure like those of functions with breaks (Note [segment
//   cache] in bind_tracer.cpp), and the fused backend compiles each distinct kernel once per
//   process whatever graph it comes from (Note [kernels across graphs] in
//   src/fusion/backend.cpp; kernels are generic over slice offsets and extents, Note [generic
//   kernels] in src/fusion/kernel_params.cpp), so the C++ a loop compiles grows with the
//   number of distinct kernels, not with the number of iterations or segments.
// A trace that was cut but had no graph break is recorded as a Plan: the segments in order,
// where each of their inputs comes from (an input of the call, or an output of an earlier
// step) and their runtime scalars. npc.compile caches the plan like a whole graph and replays
// it without running the Python: a call runs each step's executable in turn, releasing step
// outputs after their last reader. A trace with a graph break keeps no plan (its Python runs
// on every call anyway; its cut segments are found by structure).
// What stays proportional to the trip count on the first call: tracing (the Python loop runs
// once) and lowering (each segment's graph, never more than the budget at a time).
// Note [aligned cuts]
// A cut at whatever operation crosses the budget would fall at a different place of a loop's
// body in each segment: the values live across it differ, so each segment's first and last
// kernels would be fused differently, and the kernels a loop compiles would depend on where
// its cuts happened to fall (on its trip count). So the first cut of a trace remembers where
// the program was (g_position: the user's frames and instruction offsets), and later cuts
// wait, once over the budget, until the program is there again (the same operation of a
// later iteration); a segment that reaches twice the budget without getting there is cut
// where it is. Segments of a loop then all start at the same operation of its body. The
// place itself is chosen where a loop starts an iteration: once over the budget, the first
// cut (and a cut that found no anchor) waits until the line of the innermost user frame goes
// back above the line where waiting began (the loop jumped back to the top of its body, in
// the same code), or the segment reached four times the budget. Temporaries of the statements
// (`A[k + 1:, k + 1:] -= np.outer(...)`'s product) are gone there: the values carried across
// a cut are the program's own arrays, not temporaries whose shapes change with the iteration.
void Context::cut_aligned() {
  const auto [here, line] = g_position ? g_position() : std::pair<uint64_t, uint64_t>{0, 0};
  const size_t size = graph_->nodes().size() - segment_start_size_;
  if (cuts_ > 0 && here != 0 && here == cut_position_) {
    cut();
    return;
  }
  if (cuts_ > 0 && cut_position_ != 0 && size <= 2 * node_budget_) return;  // not there yet
  if (line != 0 && size <= 4 * node_budget_) {
    constexpr uint64_t kLine = (uint64_t(1) << 24) - 1;
    if (cut_line_ == 0 || (cut_line_ >> 24) != (line >> 24)) {
      cut_line_ = line;  // start waiting (again, in another function)
      return;
    }
    if ((line & kLine) >= (cut_line_ & kLine)) return;  // no jump back yet
  }
  cut_position_ = here;
  cut_line_ = 0;
  cut();
}

void Context::end_segment(bool real, const std::string& reason) {
  if (real) {
    breaks_.push_back(reason);
    plan_.reset();  // the Python runs on every call: no plan
  } else {
    ++cuts_;
  }
  // Live buffers carry their values into the next segment. A buffer only the context itself
  // holds (as an input of this segment) is dead: nothing the program holds can read it again
  // (Note [dead buffers at a break]).
  std::unordered_map<const Buffer*, long> own_refs;
  for (auto& b : input_buffers_) ++own_refs[b.get()];
  for (auto& [key, b] : bound_by_key_) ++own_refs[b.get()];
  std::vector<std::shared_ptr<Buffer>> live;
  std::unordered_set<Buffer*> seen;
  for (auto& w : all_buffers_) {
    auto b = w.lock();
    if (!b || !seen.insert(b.get()).second) continue;
    if (b.use_count() - 1 - own_refs[b.get()] <= 0) continue;
    live.push_back(b);
  }
  std::vector<Buffer*> raw;
  for (auto& b : live) raw.push_back(b.get());
  separate_buffers(raw);
  // Inputs reach the next segment through their write-back (their array is bound again): at a
  // cut only the other buffers are outputs of the segment (a break lists them all, as
  // explain shows them).
  std::vector<ir::NodeRef> outs;
  std::vector<int> out_of(live.size(), -1);
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i]->input < 0 || real) {
      out_of[i] = static_cast<int>(outs.size());
      outs.push_back(live[i]->current);
    }
  if (breaks_.size() + static_cast<size_t>(cuts_) == 1) {  // Note [symbols after a break]
    const auto& syms = graph_->symbols();
    for (size_t k = 0; k < syms.size(); ++k) {
      sym_sizes_.push_back(syms[k].hint);
      // A plan (Note [loops]) is replayed for the sizes it was traced with.
      if (!real && (k >= specialised_.size() || !specialised_[k]))
        constraints_.push_back({syms[k].input, syms[k].axis, -1, -1, syms[k].hint});
    }
  }
  std::vector<ndarray> vals = run_segment(outs);
  std::vector<ndarray> old_bound = std::move(bound_);
  std::vector<Plan::Source> old_src = std::move(bound_src_);
  const int step = plan_ ? static_cast<int>(plan_->steps.size()) - 1 : -1;
  bound_.clear();
  bound_src_.clear();
  input_buffers_.clear();
  all_buffers_.clear();
  start_segment();
  for (size_t i = 0; i < live.size(); ++i) {
    Buffer& b = *live[i];
    // Inputs keep their caller's array (written back already), so aliasing with it stays.
    // Other values are bound C-contiguous (the eager backend's results keep their operands'
    // layout): realize() hands out views of that very array, so that eager writes into a
    // realized value (an assignment the graph cannot express) reach its buffer.
    ndarray v = b.input >= 0 ? old_bound[b.input] : vals[out_of[i]];
    if (b.input < 0 && (!v.is_c_contiguous() || Plan::shares_storage(v, old_bound))) v = v.copy();
    bound_src_.push_back(b.input >= 0 ? old_src[b.input] : Plan::Source{1, out_of[i], step});
    b.input = static_cast<int>(bound_.size());
    b.shape = ir::static_shape(v.shape());
    b.current = b.initial = graph_->input(b.input, v.dtype(), b.shape);
    ++b.version;
    bound_.push_back(v);
    input_buffers_.push_back(live[i]);
    all_buffers_.push_back(live[i]);
  }
  segment_start_size_ = graph_->nodes().size();
}

// Note [dead buffers at a break]
// Every buffer live at a break becomes an input of the next segment, and the context holds
// its segment's input buffers (their final values are written back when the segment runs,
// also when the program dropped every array of them since). Were those references enough to
// keep a buffer live at the next break, every value that once crossed a break (a loop's
// mask, its bounds `r1, r2`) would be an input and an output of every later segment: each
// iteration's segment would have more of them than the last, so no two would be equal and
// the segment cache (Note [segment cache] in bind_tracer.cpp) would never hit. So a buffer
// that nothing but the context refers to (no traced array, view or operand in flight) is
// dead at a break: it has been written back already, and nothing can read it again.
ndarray Context::realize(const ndarray& a) {
  TracedValue* tv = traced(a);
  if (!tv || tv->ctx_id != id_)
    throw ValueError("a traced array escaped the npc.compile call that created it (it has no value here)");
  Buffer& b = *tv->buf;
  // Every realization is a graph break (the function's Python must run again on each call
  // to produce the value), except right after another break with nothing recorded since.
  if (breaks_.empty() || graph_->nodes().size() != segment_start_size_ || b.input < 0 || b.current != b.initial)
    break_graph("a concrete value was needed");
  ndarray base = bound_.at(b.input);
  if (!base.is_c_contiguous()) base = base.copy();
  // The fabricated geometry is the position in a C-contiguous buffer: a true view.
  ndarray v = base.with_geometry(base.offset() + a.offset(), a.dtype(), a.shape(), a.strides());
  if (tv->scalar && a.ndim() == 0) realized_scalars_.emplace_back(&a, v);  // Note [scalar results]
  return v;
}

// Note [distinct buffers]
// Interning merges structurally equal nodes (np.zeros(3) twice, x + 1 twice), and a copy of
// an array nobody wrote since is its source's node (x.copy() has x's value). That is right
// for values but not for memory: two arrays the program holds apart must come out of a
// graph as two arrays, or a write into one shows in the other, and a copy of an argument
// would be the caller's own array. Where a graph hands buffers out (its outputs, and the
// live buffers at a graph break), a buffer whose value node another buffer already hands
// out, or an input node it is not, becomes an explicit copy: Prim copy, numbered so that
// interning keeps two copies of one value apart.
void Context::separate_buffers(const std::vector<Buffer*>& bufs) {
  std::unordered_set<const ir::Node*> claimed;
  // Inputs own their own input node, wherever they are in the list.
  for (Buffer* b : bufs)
    if (b->input >= 0 && b->current == b->initial) claimed.insert(b->current);
  std::unordered_set<const Buffer*> seen;
  for (Buffer* b : bufs) {
    if (!seen.insert(b).second) continue;
    ir::NodeRef n = b->current;
    if (b->input >= 0 && n == b->initial) continue;
    if (n->kind != ir::NodeKind::Input && claimed.insert(n).second) continue;
    const int64_t serial = static_cast<int64_t>(graph_->nodes().size());
    b->current = graph_->prim(OpId::copy, std::span<const ir::NodeRef>(&n, 1), n->dtype, n->shape,
                              std::span<const int64_t>(&serial, 1));
    claimed.insert(b->current);
    ++b->version;
  }
}

std::vector<ndarray> Context::finish(const std::vector<ndarray>& outputs) {
  {
    std::vector<Buffer*> bufs;
    for (const auto& o : outputs)
      if (TracedValue* tv = traced(o); tv && tv->ctx_id == id_) bufs.push_back(tv->buf.get());
    separate_buffers(bufs);
  }
  // Concrete outputs are bound as inputs too, so a replay returns them without Python.
  std::vector<ir::NodeRef> outs;
  for (const auto& o : outputs) outs.push_back(node_of(o));
  std::vector<ndarray> vals = run_segment(outs);
  if (breaks_.empty() && cuts_ == 0) final_graph_ = std::make_unique<ir::Graph>(std::move(*graph_));
  return vals;
}

std::shared_ptr<Plan> Context::take_plan() {
  if (!plan_ || cuts_ == 0 || !breaks_.empty() || plan_->steps.empty()) return nullptr;
  Plan& p = *plan_;
  p.num_inputs = static_cast<int>(top_.size());
  // Each step output is released after the last step that reads it (the last step's are the results).
  std::map<std::pair<int, int>, int> last;
  for (size_t s = 0; s < p.steps.size(); ++s)
    for (const Plan::Source& src : p.steps[s].inputs)
      if (src.kind == 1) last[{src.step, src.index}] = static_cast<int>(s);
  for (size_t s = 0; s < p.steps.size(); ++s) p.steps[s].release.clear();
  for (auto& [out, s] : last)
    if (out.first != static_cast<int>(p.steps.size()) - 1) p.steps[s].release.push_back(out);
  return std::exchange(plan_, nullptr);
}

std::vector<ndarray> Plan::run(
    std::span<const ndarray> inputs, const std::vector<Scalar>& floats,
    const std::function<std::vector<ndarray>(const ir::Executable&, const ir::RunArgs&)>& run_step) const {
  std::vector<std::vector<ndarray>> outs(steps.size());
  std::vector<ndarray> in;
  std::vector<Scalar> sc;
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& st = steps[s];
    in.clear();
    for (const Source& src : st.inputs) {
      if (src.kind == 0) {
        in.push_back(inputs[static_cast<size_t>(src.index)]);
        continue;
      }
      // As when traced (end_segment): a value is bound C-contiguous and apart from the
      // inputs of the step that made it (Note [owned inputs] in src/fusion/lower_group.cpp), once.
      ndarray& v = outs[static_cast<size_t>(src.step)][static_cast<size_t>(src.index)];
      if (!v.is_c_contiguous()) v = v.copy();
      in.push_back(v);
    }
    sc = floats;
    sc.insert(sc.end(), st.scalars.begin(), st.scalars.end());
    outs[s] = run_step(st.run.exe, ir::RunArgs{in, sc});
    for (ndarray& o : outs[s])
      if (Plan::shares_storage(o, in)) o = o.copy();
    for (auto [step, k] : st.release) outs[static_cast<size_t>(step)][static_cast<size_t>(k)] = ndarray();
  }
  return outs.empty() ? std::vector<ndarray>{} : std::move(outs.back());
}

int Context::input_index(const ndarray& traced_arg) const {
  TracedValue* tv = traced(traced_arg);
  return tv ? tv->buf->input : -1;
}

// ---------------------------------------------------------------- hooks
namespace {
Context& ctx_or_throw() {
  Context* c = current();
  if (!c) throw ValueError("a traced array was used outside the npc.compile call that created it");
  return *c;
}

// Runs a call that the graph does not capture: a graph break, then eager execution.
std::vector<Operand> realized(std::span<const Operand> in) {
  std::vector<Operand> r(in.begin(), in.end());
  for (auto& o : r) o.array.realize();
  return r;
}

// A node whose symbolic dims tracing assumed equal to the result's (a recorded constraint)
// is renamed to them, so the broadcast that follows is exact.
ir::NodeRef unify(ir::Graph& g, ir::NodeRef n, const ir::SymShape& shape) {
  ir::SymShape aligned = n->shape;
  size_t lead = shape.size() - aligned.size();
  for (size_t d = 0; d < aligned.size(); ++d)
    if (!(aligned[d].is_static() && aligned[d].value() == 1)) aligned[d] = shape[lead + d];
  return aligned == n->shape ? n : g.reshape(n, aligned);
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
  c.maybe_cut();  // Note [loops]
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
  Shape hint;
  ir::SymShape shape = c.broadcast(shapes, hints, hint);
  ir::Graph& g = c.graph();
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
  // casts it, with its warning, before any loop: the node stays for that).
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
  const std::optional<bool> scalar_loop =
      lt.in.empty() ? std::nullopt : ops::runs_scalar_loop(op, lt.in[0], strided, hint, !given_out);
  for (size_t k = 0; k < lt.out.size(); ++k) {
    std::vector<ir::NodeRef> zero{g.constant(Scalar::from_int(0).cast(lt.out[k]))};
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
      c.write(*opts.out[k], n);
      result.push_back(*opts.out[k]);
    } else {
      result.push_back(c.new_value(n, hint));
    }
  }
  return result;
}

ndarray reduce_hook(OpId op, const ndarray& a, const ReduceOptions& opts) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops]
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
  if (axes.empty() && !init && id != Identity::None_ && id != Identity::ReorderableNone) {
    ir::SymShape s1 = n->shape;
    s1.push_back(ir::Dim::fixed(1));
    const int64_t last = a.ndim();
    r = g.reduce(op, g.reshape(g.cast(n, t), std::move(s1)), std::span<const int64_t>(&last, 1), false, t, init);
  } else {
    r = axes.empty() && !init ? g.cast(n, t) : g.reduce(op, g.cast(n, t), axes, opts.keepdims, t, init);
  }
  Shape hint;
  std::sort(axes.begin(), axes.end());
  for (int d = 0; d < a.ndim(); ++d) {
    bool red = std::binary_search(axes.begin(), axes.end(), d);
    if (!red) hint.push_back(a.shape()[d]);
    else if (opts.keepdims) hint.push_back(1);
  }
  if (opts.out) {
    c.write(*opts.out, r);
    return *opts.out;
  }
  return c.new_value(r, hint);
}


// argmin/argmax: a Prim node with params [axis, keepdims] (the fused backend's argreduce).
// axis=None reduces the C-order flattening: a reshape to one axis first.
ndarray arg_hook(OpId op, const ndarray& a, std::optional<int64_t> axis, bool keepdims) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops]
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
  c.maybe_cut();  // Note [loops]
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
    c.write(*out, r);
    return *out;
  }
  return c.new_value(r, a.shape());
}

ndarray sort_hook(const ndarray& a, int64_t axis, bool descending, bool arg) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops]
  ir::Graph& g = c.graph();
  ir::NodeRef n = c.node_of(a);
  std::vector<int64_t> p{axis, descending ? 1 : 0};
  ir::NodeRef r = g.prim(arg ? OpId::argsort : OpId::sort, std::span<const ir::NodeRef>(&n, 1),
                         arg ? DType::Int64 : a.dtype(), n->shape, p);
  return c.new_value(r, a.shape());
}

// where(cond, x, y): a Prim node over operands cast to the result dtype and broadcast.
ndarray where_hook(const ndarray& cond, const Operand& x, const Operand& y, DType t, const Shape&) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops]
  ir::Graph& g = c.graph();
  std::vector<ir::NodeRef> nodes{c.node_of_operand(cond, false), c.node_of_operand(x.array, x.weak),
                                 c.node_of_operand(y.array, y.weak)};
  std::vector<ir::SymShape> shapes;
  std::vector<Shape> hints{cond.shape(), x.array.shape(), y.array.shape()};
  for (auto n : nodes) shapes.push_back(n->shape);
  Shape hint;
  ir::SymShape shape = c.broadcast(shapes, hints, hint);
  DType types[3] = {DType::Bool, t, t};
  for (size_t i = 0; i < 3; ++i) nodes[i] = g.broadcast(g.cast(unify(g, nodes[i], shape), types[i]), shape);
  return c.new_value(g.prim(OpId::where, nodes, t, shape), hint);
}

ndarray realize_hook(const ndarray& a) { return ctx_or_throw().realize(a); }

std::shared_ptr<void> view_hook(const ndarray& src, const ndarray& v) {
  Context* c = current();
  return c ? c->view(src, v) : nullptr;
}

ndarray copy_hook(const ndarray& src, DType t) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops]
  ir::NodeRef n = c.graph().cast(c.node_of(src), t);
  return c.new_value(n, src.shape());
}

// A traced value written into a concrete array that is not a graph input (an array an op
// allocated while tracing, e.g. the fresh result roll/pad/cross fill through views, or an
// array held in an attribute) is a graph break: the value is realized and copied for real.
// Making such a destination an input would write back into memory the returned array does
// not observe. Captured globals and closures are traced stand-ins and never reach here.
void write_hook(const ndarray& dst, const ndarray& src) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops]
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
ndarray empty_hook(const Shape& shape, DType t) {
  Context& c = ctx_or_throw();
  ir::Graph& g = c.graph();
  std::vector<ir::NodeRef> args{g.constant(Scalar::from_int(0).cast(t))};
  return c.new_value(g.prim(OpId::fill, args, t, ir::static_shape(shape)), shape);
}
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
  // A concrete 0-d index stays a Const (Note [values after a break]).
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

ndarray index_get_hook(const ndarray& a, std::span<const IndexItem> idx) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops]
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
    // after the break the sizes are static (Note [symbols after a break]) and it can. It
    // must stay a traced view: a concrete one would be read as a copy of what the array
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

void index_set_hook(const ndarray& a, std::span<const IndexItem> idx, const ndarray& value) {
  Context& c = ctx_or_throw();
  c.maybe_cut();  // Note [loops]
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
      std::vector<Shape> sh{value.shape(), region.shape()};
      Shape vs = value.shape();
      while (vs.size() > region.shape().size() && vs.front() == 1) vs.erase(vs.begin());
      std::vector<Shape> both{vs, region.shape()};
      if (broadcast_shapes(both) != region.shape())
        throw ValueError("could not broadcast input array from shape " + shape_str(value.shape()) +
                         " into shape " + shape_str(region.shape()));
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
