// Binding arguments and captured arrays as graph inputs: strided and F-ordered arguments,
// runtime float arguments, shapes read in Python, scalar results. See trace.hpp.
#include <algorithm>
#include <cstdint>
#include <string>

#include "tracer/trace_internal.hpp"

namespace npc::tracer {

namespace {
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
}  // namespace

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
  scalar_values.push_back(Scalar::from_double(value));
  graph_->scalar(static_cast<int>(scalar_values.size()) - 1, DType::Float64);
}

int Context::add_runtime_int(const Scalar& value) {
  const int k = static_cast<int>(scalar_values.size());
  // A sentinel no operand value equals (0.0 is no marked NaN): the entry only says that the
  // trace has runtime scalars, which graph breaks and realizations check (Note [runtime ints]).
  sentinels_.emplace_back(0.0, k);
  scalar_values.push_back(value);
  graph_->scalar(k, value.dtype);
  return k;
}

void Context::note_runtime_operand(const ndarray& a, int k) {
  runtime_operands_.insert_or_assign(static_cast<const void*>(a.data()), RuntimeOperand{a, k, false});
}

void Context::runtime_operand_meets(const ndarray& a, DType t, ir::NodeRef& node) {
  if (runtime_operands_.empty()) return;
  auto it = runtime_operands_.find(static_cast<const void*>(a.data()));
  if (it == runtime_operands_.end() || it->second.array.storage() != a.storage()) return;
  it->second.met.push_back(t);
  if ((kind(t) == Kind::Float || kind(t) == Kind::Complex) && t != DType::Float64)
    node = graph_->cast(node, DType::Float64);
}

std::vector<std::pair<int, std::vector<int>>> Context::runtime_int_dtypes() const {
  std::vector<std::pair<int, std::vector<int>>> r;
  std::vector<bool> unknown;
  for (const auto& [_, o] : runtime_operands_) {
    if (!o.consumed) continue;
    auto it = std::find_if(r.begin(), r.end(), [&](const auto& e) { return e.first == o.k; });
    if (it == r.end()) {
      r.emplace_back(o.k, std::vector<int>{});
      unknown.push_back(false);
      it = r.end() - 1;
    }
    const size_t i = static_cast<size_t>(it - r.begin());
    if (o.met.empty()) unknown[i] = true;
    for (DType t : o.met) it->second.push_back(static_cast<int>(t));
  }
  for (size_t i = 0; i < r.size(); ++i)
    if (unknown[i]) r[i].second.clear();
  return r;
}

std::vector<int> Context::unconsumed_runtime_ints() const {
  std::vector<int> r;
  for (const auto& [_, o] : runtime_operands_)
    if (!o.consumed && std::find(r.begin(), r.end(), o.k) == r.end()) r.push_back(o.k);
  return r;
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

int Context::input_index(const ndarray& traced_arg) const {
  TracedValue* tv = traced(traced_arg);
  return tv ? tv->buf->input : -1;
}

}  // namespace npc::tracer
