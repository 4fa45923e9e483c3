// The graph IR: interning builders, printer, verifier, passes, backend registry.
#include "npc/graph.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace npc::ir {

namespace {
constexpr std::string_view kOpNames[] = {
#define NPC_UFUNC(name, nin, nout, identity, ...) #name,
#define NPC_REDUCE(name, ...) #name,
#define NPC_PRIM(name, nin, ...) #name,
#include "npc/ops.def"
};
constexpr int kOpNin[] = {
#define NPC_UFUNC(name, nin, nout, identity, ...) nin,
#define NPC_REDUCE(name, ...) 1,
#define NPC_PRIM(name, nin, ...) nin,
#include "npc/ops.def"
};
constexpr int kOpNout[] = {
#define NPC_UFUNC(name, nin, nout, identity, ...) nout,
#define NPC_REDUCE(name, ...) 1,
#define NPC_PRIM(name, nin, ...) 1,
#include "npc/ops.def"
};

inline void hash_mix(size_t& h, uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

[[noreturn]] void bad(const std::string& msg) { throw ValueError("graph: " + msg); }

int64_t static_size(const SymShape& s) {
  int64_t n = 1;
  for (Dim d : s) {
    if (!d.is_static()) return -1;
    n *= d.value();
  }
  return n;
}
}  // namespace

std::string_view op_name(OpId op) {
  if (static_cast<unsigned>(op) >= static_cast<unsigned>(kNumOps))
    throw ValueError("invalid npc::OpId value " + std::to_string(static_cast<int>(op)));
  return kOpNames[static_cast<int>(op)];
}

std::string sym_shape_str(const SymShape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += s[i].is_static() ? std::to_string(s[i].value()) : "s" + std::to_string(s[i].symbol());
  }
  return r + ")";
}

SymShape static_shape(std::span<const int64_t> s) {
  SymShape r;
  r.reserve(s.size());
  for (int64_t d : s) r.push_back(Dim::fixed(d));
  return r;
}

Shape concrete_shape(const SymShape& s, std::span<const int64_t> syms) {
  Shape r(s.size());
  for (size_t i = 0; i < s.size(); ++i) r[i] = s[i].is_static() ? s[i].value() : syms[s[i].symbol()];
  return r;
}

std::string_view kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::Input: return "input";
    case NodeKind::Scalar: return "scalar";
    case NodeKind::SymVal: return "symval";
    case NodeKind::Const: return "const";
    case NodeKind::Ufunc: return "ufunc";
    case NodeKind::Cast: return "cast";
    case NodeKind::Reduce: return "reduce";
    case NodeKind::View: return "view";
    case NodeKind::Gather: return "gather";
    case NodeKind::Write: return "write";
    case NodeKind::Prim: return "prim";
    case NodeKind::Call: return "call";
  }
  return "?";
}

std::string_view view_kind_name(ViewKind k) {
  switch (k) {
    case ViewKind::Slice: return "slice";
    case ViewKind::Permute: return "permute";
    case ViewKind::Broadcast: return "broadcast";
    case ViewKind::Reshape: return "reshape";
    case ViewKind::Component: return "component";
    case ViewKind::Strided: return "strided";
  }
  return "?";
}

// ---------------------------------------------------------------- Graph
Graph::Graph() = default;
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

bool Graph::Eq::operator()(const Node* a, const Node* b) const {
  if (a->hash != b->hash || a->kind != b->kind || a->op != b->op || a->dtype != b->dtype || a->shape != b->shape ||
      a->args != b->args || a->params != b->params || a->value.has_value() != b->value.has_value())
    return false;
  if (a->kind == NodeKind::Call) return false;  // host calls are never merged (each call runs)
  if (a->value) {
    const auto &x = *a->value, &y = *b->value;
    if (x.dtype != y.dtype) return false;
    // Compare the stored bits so that NaN == NaN and -0.0 != 0.0 for interning.
    alignas(16) std::byte bx[16] = {}, by[16] = {};
    x.store(x.dtype, bx);
    y.store(y.dtype, by);
    return std::equal(bx, bx + 16, by);
  }
  return true;
}

// The structural hash of `n` (its operands by id) as node number `position` of its graph.
size_t Graph::node_hash(const Node& n, size_t position) {
  size_t h = static_cast<size_t>(n.kind) * 1315423911u;
  hash_mix(h, static_cast<uint64_t>(n.op));
  hash_mix(h, static_cast<uint64_t>(n.dtype));
  for (Dim d : n.shape) hash_mix(h, static_cast<uint64_t>(d.raw()));
  for (NodeRef a : n.args) hash_mix(h, a->id);
  for (int64_t p : n.params) hash_mix(h, static_cast<uint64_t>(p));
  if (n.value) {
    alignas(16) std::byte b[16] = {};
    n.value->store(n.value->dtype, b);
    uint64_t w[2];
    std::memcpy(w, b, 16);
    hash_mix(h, w[0]);
    hash_mix(h, w[1]);
  }
  if (n.kind == NodeKind::Call) hash_mix(h, position);
  return h;
}

NodeRef Graph::intern(Node n) {
  forget_digest();  // a merge changes evaluations, a new node the nodes
  n.hash = node_hash(n, order_.size());
  if (table_used_ != order_.size()) table_rebuild();  // Note [intern table of a finished graph]
  if (const Node* found = find_equal(n)) {
    // Note [merged evaluations]
    // A computing node built again (the program computes `v * v` twice) is the same node,
    // evaluated once; NumPy evaluates it each time and warns each time it raises. The count
    // lets the error report repeat its warnings (fusion::interpret_with_fp_errors) at the
    // place of each evaluation in the program (evaluation_order(): `b - b.mean(0)` computed
    // again inside `b.std(0)` warns after the mean of the std, as in NumPy); passes that
    // rebuild a graph carry both over.
    const NodeKind k = found->kind;
    if (k == NodeKind::Ufunc || k == NodeKind::Reduce || k == NodeKind::Cast || k == NodeKind::Prim) {
      ++evals_[found->id];
      eval_order_.push_back(found->id);
    }
    return found;
  }
  n.id = static_cast<uint32_t>(order_.size());
  evals_.push_back(1);
  eval_order_.push_back(n.id);
  const Node* p = store(std::move(n));
  table_insert(p);
  order_.push_back(p);
  return p;
}

// Note [node storage]
// A loop's trace interns millions of nodes, a segment's graph (and its copy without dead
// nodes) tens of thousands, and each segment's graph is freed after it ran: an allocation
// per node and another per entry of a node-based hash set made the allocator a fifth of a
// first call (seidel_2d). Nodes are stored in chunks (16 nodes, doubling up to 256: a chunk
// stays under the size the allocator hands to mmap, whose fresh pages fault in one by one),
// the intern table is an open-addressing array of pointers, and a graph whose final size is
// known (a copy, a segment with a node budget) reserves the table once instead of growing
// it. Nodes never move: NodeRefs stay valid for the graph's life.
// Most page faults of a loop's first call and of a plan load are not memory given back and
// mapped again (the heap only grows, and npc's large temporaries are reused) but memory
// that stays: every segment's pruned graph (kept for its plan and last_graphs) and every
// graph of a plan are touched once, fresh. Per node that is the node, its shape, operand and
// parameter vectors, and the intern table; hence nodes of 104 bytes (Note [node values] in
// graph.hpp) and no table for a finished graph (Note [intern table of a finished graph]):
// seidel_2d's first call (M) faulted 110k pages instead of 136k, its plan load 92k
// instead of 108k.
Node* Graph::store(Node&& n) {
  if (chunks_.empty() || chunk_used_ == chunk_size_) {
    chunk_size_ = chunk_size_ == 0 ? 16 : std::min<size_t>(chunk_size_ * 2, 256);
    chunks_.push_back(std::make_unique<Node[]>(chunk_size_));
    chunk_used_ = 0;
  }
  Node* p = &chunks_.back()[chunk_used_++];
  *p = std::move(n);
  return p;
}

// The probe start of a node hash: its bits mixed into the low ones the mask keeps.
inline size_t probe_start(size_t hash, size_t mask) { return ((hash * 0x9E3779B97F4A7C15ull) >> 29) & mask; }

const Node* Graph::find_equal(const Node& n) const {
  if (table_.empty()) return nullptr;
  const size_t mask = table_.size() - 1;
  for (size_t i = probe_start(n.hash, mask);; i = (i + 1) & mask) {
    const Node* p = table_[i];
    if (!p) return nullptr;
    if (Eq{}(p, &n)) return p;
  }
}

void Graph::table_grow(size_t min_capacity) {
  size_t cap = table_.empty() ? 16 : table_.size();
  while (cap < min_capacity) cap *= 2;
  if (cap == table_.size()) return;
  std::vector<const Node*> old = std::move(table_);
  table_.assign(cap, nullptr);
  const size_t mask = cap - 1;
  for (const Node* p : old) {
    if (!p) continue;
    size_t i = probe_start(p->hash, mask);
    while (table_[i]) i = (i + 1) & mask;
    table_[i] = p;
  }
}

void Graph::table_insert(const Node* p) {
  if (2 * (table_used_ + 1) > table_.size()) table_grow(2 * (table_used_ + 1));
  const size_t mask = table_.size() - 1;
  size_t i = probe_start(p->hash, mask);
  while (table_[i]) i = (i + 1) & mask;
  table_[i] = p;
  ++table_used_;
}

void Graph::reserve(size_t n) {
  table_grow(2 * n);
  order_.reserve(n);
  evals_.reserve(n);
  eval_order_.reserve(n);
}

// Note [intern table of a finished graph]
// The intern table only serves builders: it holds two to four pointers per node (16 to 32
// bytes, beside the node's 104 bytes and its vectors'), and the graphs a loop's first call or a
// plan load keeps (each segment's pruned graph, every graph of a plan: 10^6 nodes) are
// never built on again. A graph that is done gives its table back (drop_table: the
// allocator hands the memory to the next graph's table instead of mapping fresh pages for
// it), and a copy of nodes already interned (copy_kept: dce's result) never builds one:
// its nodes are distinct because the originals were and their operands map one to one.
// Such a graph's table holds fewer nodes than the graph (table_used_ != order_.size()):
// intern() builds it again, from the stored hashes, before its first lookup.
void Graph::drop_table() {
  std::vector<const Node*>().swap(table_);
  table_used_ = 0;
}

void Graph::table_rebuild() {
  table_.clear();
  table_used_ = 0;
  table_grow(2 * (order_.size() + 1));
  for (const Node* p : order_) table_insert(p);
}

NodeRef Graph::append_distinct(Node&& n) {
  forget_digest();
  n.hash = node_hash(n, order_.size());
  n.id = static_cast<uint32_t>(order_.size());
  evals_.push_back(1);
  eval_order_.push_back(n.id);
  const Node* p = store(std::move(n));
  order_.push_back(p);
  return p;
}

NodeRef Graph::input(int index, DType dtype, SymShape shape) {
  if (index < 0) bad("negative input index");
  (void)itemsize(dtype);  // TypeError for a DType outside the enum
  num_inputs_ = std::max(num_inputs_, index + 1);
  return intern(Node{NodeKind::Input, OpId::kCount, dtype, std::move(shape), {}, {index}});
}

NodeRef Graph::scalar(int index, DType dtype) {
  if (index < 0) bad("negative scalar index");
  num_scalars_ = std::max(num_scalars_, index + 1);
  return intern(Node{NodeKind::Scalar, OpId::kCount, dtype, {}, {}, {index}});
}

NodeRef Graph::sym_value(int32_t symbol) {
  if (symbol < 0 || symbol >= static_cast<int32_t>(symbols_.size())) bad("unknown symbol");
  return intern(Node{NodeKind::SymVal, OpId::kCount, DType::Int64, {}, {}, {symbol}});
}

NodeRef Graph::constant(const npc::Scalar& v) {
  Node n{NodeKind::Const, OpId::kCount, v.dtype, {}, {}, {}};
  n.value = v;
  return intern(std::move(n));
}

NodeRef Graph::ufunc(OpId op, std::span<const NodeRef> args, DType out_dtype, int out, bool scalar_math,
                     std::optional<bool> scalar_loop) {
  int i = static_cast<int>(op);
  (void)op_name(op);  // ValueError for an OpId outside the table (before kOpNin[i] is read)
  if (kOpNin[i] != static_cast<int>(args.size()))
    bad("ufunc " + std::string(op_name(op)) + " takes " + std::to_string(kOpNin[i]) + " args");
  if (out < 0 || out >= kOpNout[i]) bad("bad output index");
  if (args.empty()) bad("ufunc without args");
  std::vector<int64_t> params{out};
  const int64_t loop = scalar_math ? kScalarMath | kScalarLoop : !scalar_loop ? 0 : *scalar_loop ? kScalarLoop : kSimdLoop;
  if (loop) params.push_back(loop);
  return intern(Node{NodeKind::Ufunc, op, out_dtype, args[0]->shape, {args.begin(), args.end()}, std::move(params)});
}

NodeRef Graph::cast(NodeRef a, DType t, OpId of) {
  if (a->dtype == t) return a;
  std::vector<int64_t> params;
  if (of != OpId::kCount) params.push_back(static_cast<int64_t>(of));
  return intern(Node{NodeKind::Cast, OpId::cast, t, a->shape, {a}, std::move(params)});
}

NodeRef Graph::reduce(OpId op, NodeRef a, std::span<const int64_t> axes, bool keepdims, DType dtype,
                      std::optional<npc::Scalar> initial) {
  (void)op_name(op);  // ValueError for an OpId outside the table
  std::vector<int64_t> ax(axes.begin(), axes.end());
  for (auto& x : ax) x = normalize_axis(x, a->ndim());
  std::sort(ax.begin(), ax.end());
  if (std::adjacent_find(ax.begin(), ax.end()) != ax.end()) throw ValueError("duplicate value in 'axis'");
  if (ax.empty() && a->dtype == dtype) {
    // A reduction over no axes (a 0-d array, axis=()) reduces each element alone: the element
    // itself, or `initial op element` (NumPy's reduce starts from `initial`). No Reduce node,
    // so backends never see a reduction without a reduced axis.
    if (!initial) return a;
    NodeRef init = broadcast(cast(constant(initial->cast(dtype)), dtype), a->shape);
    NodeRef args[2] = {init, a};
    return ufunc(op, args, dtype, 0);
  }
  SymShape shape;
  for (int d = 0; d < a->ndim(); ++d) {
    bool red = std::binary_search(ax.begin(), ax.end(), d);
    if (!red) shape.push_back(a->shape[d]);
    else if (keepdims) shape.push_back(Dim::fixed(1));
  }
  if (keepdims) {
    // A reduction with keepdims is the reduction without it, reshaped: one node for both, so
    // `x - x.mean(axis=0, keepdims=True)` and `x.std(axis=0)` (which takes the mean with
    // keepdims) reduce x once.
    return reshape(reduce(op, a, ax, false, dtype, initial), std::move(shape));
  }
  std::vector<int64_t> params{keepdims ? 1 : 0};
  params.insert(params.end(), ax.begin(), ax.end());
  Node n{NodeKind::Reduce, op, dtype, std::move(shape), {a}, std::move(params)};
  n.value = initial;
  return intern(std::move(n));
}

namespace {
std::vector<int64_t> view_params(ViewKind k, std::span<const int64_t> rest = {}) {
  std::vector<int64_t> p{static_cast<int64_t>(k)};
  p.insert(p.end(), rest.begin(), rest.end());
  return p;
}
}  // namespace

NodeRef Graph::slice(NodeRef a, std::span<const int64_t> start_step, SymShape shape) {
  if (start_step.size() != 2 * a->shape.size() || shape.size() != a->shape.size()) bad("slice: rank mismatch");
  bool ident = shape == a->shape;
  for (size_t d = 0; d < shape.size() && ident; ++d) ident = start_step[2 * d] == 0 && start_step[2 * d + 1] == 1;
  if (ident) return a;
  return intern(Node{NodeKind::View, OpId::kCount, a->dtype, std::move(shape), {a}, view_params(ViewKind::Slice, start_step)});
}

NodeRef Graph::permute(NodeRef a, std::span<const int64_t> axes) {
  if (axes.size() != a->shape.size()) bad("permute: axes don't match array");
  SymShape shape;
  std::vector<bool> seen(axes.size());
  bool ident = true;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = axes[i];
    if (ax < 0 || ax >= a->ndim() || seen[ax]) bad("permute: bad axes");
    seen[ax] = true;
    ident = ident && ax == static_cast<int64_t>(i);
    shape.push_back(a->shape[ax]);
  }
  if (ident) return a;
  return intern(Node{NodeKind::View, OpId::kCount, a->dtype, std::move(shape), {a}, view_params(ViewKind::Permute, axes)});
}

NodeRef Graph::broadcast(NodeRef a, SymShape shape) {
  if (shape == a->shape) return a;
  if (shape.size() < a->shape.size()) bad("broadcast to a lower rank");
  size_t lead = shape.size() - a->shape.size();
  for (size_t d = 0; d < a->shape.size(); ++d) {
    Dim s = a->shape[d], t = shape[lead + d];
    if (!(s == t || (s.is_static() && s.value() == 1)))
      bad("broadcast " + sym_shape_str(a->shape) + " -> " + sym_shape_str(shape));
  }
  return intern(Node{NodeKind::View, OpId::kCount, a->dtype, std::move(shape), {a}, view_params(ViewKind::Broadcast)});
}

NodeRef Graph::reshape(NodeRef a, SymShape shape) {
  if (shape == a->shape) return a;
  int64_t n = static_size(shape), m = static_size(a->shape);
  if (n >= 0 && m >= 0 && n != m) bad("reshape " + sym_shape_str(a->shape) + " -> " + sym_shape_str(shape));
  return intern(Node{NodeKind::View, OpId::kCount, a->dtype, std::move(shape), {a}, view_params(ViewKind::Reshape)});
}

NodeRef Graph::component(NodeRef a, bool imag) {
  if (!is_complex(a->dtype)) bad("component of a real array");
  int64_t p = imag ? 1 : 0;
  return intern(Node{NodeKind::View, OpId::kCount, real_dtype(a->dtype), a->shape, {a},
                     view_params(ViewKind::Component, std::span<const int64_t>(&p, 1))});
}

NodeRef Graph::strided(NodeRef a, int64_t offset, std::span<const int64_t> strides, SymShape shape) {
  if (static_size(a->shape) < 0 || static_size(shape) < 0) bad("strided view needs static shapes");
  if (strides.size() != shape.size()) bad("strided: rank mismatch");
  std::vector<int64_t> p{offset};
  p.insert(p.end(), strides.begin(), strides.end());
  // The identity map over a C-contiguous source is the source itself (or a reshape).
  if (offset == 0 && static_size(shape) == static_size(a->shape)) {
    Shape cs = concrete_shape(shape, {});
    Strides c = contiguous_strides(cs, 1);
    bool contig = true;
    for (size_t d = 0; d < cs.size(); ++d) contig = contig && (cs[d] == 1 || c[d] == strides[d]);
    if (contig) return reshape(a, std::move(shape));
  }
  return intern(Node{NodeKind::View, OpId::kCount, a->dtype, std::move(shape), {a}, view_params(ViewKind::Strided, p)});
}

NodeRef Graph::gather(NodeRef a, NodeRef idx, int64_t axis) {
  return gather(a, std::span<const NodeRef>(&idx, 1), axis);
}

NodeRef Graph::gather(NodeRef a, std::span<const NodeRef> idx, int64_t axis) {
  const int64_t k = static_cast<int64_t>(idx.size());
  if (k < 1) bad("gather needs at least one index");
  axis = normalize_axis(axis, a->ndim());
  if (axis + k > a->ndim()) bad("gather: more index arrays than axes");
  for (NodeRef i : idx) {
    if (i->dtype != DType::Int64) bad("gather index must be int64");
    if (i->shape != idx[0]->shape) bad("gather indices must have one shape");
  }
  SymShape shape;
  for (int64_t d = 0; d < axis; ++d) shape.push_back(a->shape[d]);
  shape.insert(shape.end(), idx[0]->shape.begin(), idx[0]->shape.end());
  for (int64_t d = axis + k; d < a->ndim(); ++d) shape.push_back(a->shape[d]);
  std::vector<NodeRef> args{a};
  args.insert(args.end(), idx.begin(), idx.end());
  return intern(Node{NodeKind::Gather, OpId::take, a->dtype, std::move(shape), std::move(args), {axis}});
}

void check_index_values(const ndarray& x, int64_t extent, int64_t axis) {
  if (x.size() == 0) return;
  if (!is_integer(x.dtype())) throw IndexError("arrays used as indices must be of integer (or boolean) type");
  auto fail = [&](const std::string& v) {
    throw IndexError("index " + v + " is out of bounds for axis " + std::to_string(axis) + " with size " +
                     std::to_string(extent));
  };
  if (x.dtype() == DType::UInt64) {
    // uint64 values past int64's range would wrap negative in a cast: compare unsigned.
    ndarray u = x.is_c_contiguous() ? x : x.copy();
    const uint64_t* p = reinterpret_cast<const uint64_t*>(u.data());
    for (int64_t e = 0; e < u.size(); ++e)
      if (p[e] >= static_cast<uint64_t>(extent)) fail(std::to_string(p[e]));
    return;
  }
  ndarray i64 = x.dtype() == DType::Int64 && x.is_c_contiguous() ? x : x.astype(DType::Int64);
  const int64_t* p = reinterpret_cast<const int64_t*>(i64.data());
  for (int64_t e = 0; e < i64.size(); ++e)
    if (p[e] < -extent || p[e] >= extent) fail(std::to_string(p[e]));
}

void check_run_args(const Graph& g, const RunArgs& args) {
  std::vector<NodeRef> inputs;
  for (NodeRef n : g.nodes())
    if (n->kind == NodeKind::Input) inputs.push_back(n);
  check_run_args(g, args, inputs);
}

void check_run_args(const Graph& g, const RunArgs& args, std::span<const NodeRef> input_nodes) {
  const int ni = g.num_inputs();
  if (static_cast<int>(args.inputs.size()) != ni || static_cast<int>(args.scalars.size()) < g.num_scalars())
    throw ValueError("graph: wrong number of inputs");
  std::vector<int64_t> syms;
  for (const Symbol& s : g.symbols()) {
    if (s.input < 0 || s.input >= ni || s.axis < 0 || s.axis >= args.inputs[s.input].ndim())
      bad("input " + std::to_string(s.input) + " has no axis " + std::to_string(s.axis) + " for a symbol");
    syms.push_back(args.inputs[s.input].shape()[s.axis]);
  }
  for (NodeRef n : input_nodes) {
    const ndarray& a = args.inputs[n->params[0]];
    bool ok = a.dtype() == n->dtype && a.ndim() == n->ndim() && !a.is_traced();
    for (int d = 0; ok && d < a.ndim(); ++d) {
      const Dim dim = n->shape[d];
      if (!dim.is_static() && static_cast<size_t>(dim.symbol()) >= syms.size()) bad("an input names an undeclared symbol");
      ok = a.shape()[d] == (dim.is_static() ? dim.value() : syms[dim.symbol()]);
    }
    if (!ok)
      bad("input " + std::to_string(n->params[0]) + " is " + std::string(name(a.dtype())) + shape_str(a.shape()) +
          ", the graph takes " + std::string(name(n->dtype)) + sym_shape_str(n->shape));
  }
}

void check_index_inputs(const Graph& g, std::span<const ndarray> inputs) {
  for (const auto& c : g.index_checks) check_index_values(inputs[c.input], c.extent, c.axis);
}

NodeRef Graph::write(NodeRef base, NodeRef region, NodeRef value) {
  if (value->dtype != region->dtype) bad("write: value dtype differs from the region's");
  if (value->shape != region->shape) bad("write: value shape differs from region");
  return intern(Node{NodeKind::Write, OpId::kCount, base->dtype, base->shape, {base, region, value}, {}});
}

NodeRef Graph::prim(OpId op, std::span<const NodeRef> args, DType dtype, SymShape shape,
                    std::span<const int64_t> params) {
  (void)op_name(op);  // ValueError for an OpId outside the table
  return intern(Node{NodeKind::Prim, op, dtype, std::move(shape), {args.begin(), args.end()},
                     {params.begin(), params.end()}});
}

NodeRef Graph::call(HostCall fn, std::string name, std::span<const NodeRef> args, DType dtype, SymShape shape) {
  int64_t k = static_cast<int64_t>(calls.size());
  calls.emplace_back(std::move(fn), std::move(name));
  return intern(Node{NodeKind::Call, OpId::kCount, dtype, std::move(shape), {args.begin(), args.end()}, {k}});
}

int32_t Graph::add_symbol(int input, int axis, int64_t hint) {
  forget_digest();
  for (size_t k = 0; k < symbols_.size(); ++k)
    if (symbols_[k].input == input && symbols_[k].axis == axis) return static_cast<int32_t>(k);
  symbols_.push_back({input, axis, hint});
  return static_cast<int32_t>(symbols_.size() - 1);
}

// Note [checks of dead code]
// Dead code goes, and with it its floating-point warnings (a known difference, docs/compile.md),
// but not an exception NumPy raises: an integer power whose exponent may be negative raises
// ValueError whether or not its result is used, so such a node is live as a check (the
// backends evaluate every live node; its value is dropped). Array exponents never get here
// (Note [integer powers] in trace_hooks.cpp): the exponent is a Python int, a literal (Const)
// or a runtime Scalar whose sign the guards fix. Host calls (Call nodes) are live the same
// way: a draw of numpy.random whose value nothing reads (`rng.permutation(5)` dropped, an
// array shuffled and never read) still moves the generator, as in NumPy.
bool raises_when_run(NodeRef n) {
  // A host call acts when it runs (a numpy.random draw moves its generator; an index check
  // raises), whether or not its value is read.
  if (n->kind == NodeKind::Call) return true;
  if (n->kind != NodeKind::Ufunc || n->op != OpId::power || n->args.size() != 2) return false;
  if (kind(n->dtype) != Kind::Signed) return false;
  NodeRef e = n->args[1];
  if (kind(e->dtype) != Kind::Signed) return false;
  while (e->kind == NodeKind::View) e = e->args[0];  // a broadcast literal
  return !(e->kind == NodeKind::Const && e->value && e->value->as_int() >= 0);
}

namespace {
// Nodes reachable from the outputs, write-backs and checks, flagged by id.
std::vector<bool> live_nodes(const Graph& g) {
  std::vector<bool> live(g.nodes().size(), false);
  std::vector<NodeRef> stack(g.outputs.begin(), g.outputs.end());
  for (auto& [i, n] : g.writebacks) stack.push_back(n);
  // What an input held after each write (Note [writes before a raising operation] in
  // src/fusion/backend.cpp): a write the program overwrote is the input's value when an
  // operation after it raises.
  for (const Graph::InputWrite& w : g.input_writes) stack.push_back(w.value);
  for (NodeRef n : g.nodes())
    if (raises_when_run(n)) stack.push_back(n);
  while (!stack.empty()) {
    NodeRef n = stack.back();
    stack.pop_back();
    if (live[n->id]) continue;
    live[n->id] = true;
    for (NodeRef a : n->args) stack.push_back(a);
  }
  return live;
}
}  // namespace

bool Graph::output_unread(size_t k) const {
  return std::binary_search(unread_outputs.begin(), unread_outputs.end(), static_cast<int>(k));
}

size_t Graph::structural_hash() const {
  // Node ids are creation order, so two programs built by the same sequence of builder calls
  // hash equal; only live nodes count.
  auto live = live_nodes(*this);
  size_t h = 0;
  for (NodeRef n : order_)
    if (live[n->id]) hash_mix(h, n->hash);
  for (NodeRef o : outputs) hash_mix(h, o->id);
  for (auto& [i, n] : writebacks) { hash_mix(h, static_cast<uint64_t>(i)); hash_mix(h, n->id); }
  for (auto& s : symbols_) { hash_mix(h, static_cast<uint64_t>(s.input)); hash_mix(h, static_cast<uint64_t>(s.axis)); }
  for (auto& c : index_checks) { hash_mix(h, static_cast<uint64_t>(c.input)); hash_mix(h, static_cast<uint64_t>(c.extent)); }
  for (int i : owned_inputs) hash_mix(h, static_cast<uint64_t>(i) + 0x9e37u);
  for (int k : unread_outputs) hash_mix(h, static_cast<uint64_t>(k) + 0x7f4au);
  return h;
}

namespace {
std::string scalar_str(const npc::Scalar& v) {
  std::ostringstream os;
  switch (kind(v.dtype)) {
    case Kind::Bool: os << (v.b ? "True" : "False"); break;
    case Kind::Signed: os << v.i; break;
    case Kind::Unsigned: os << v.u; break;
    case Kind::Float: os.precision(17); os << v.f; break;
    case Kind::Complex: os.precision(17); os << "(" << v.c.real() << (v.c.imag() < 0 ? "" : "+") << v.c.imag() << "j)"; break;
  }
  return os.str();
}

std::string node_str(const Graph& g, NodeRef n) {
  std::ostringstream os;
  os << "%" << n->id << " = ";
  switch (n->kind) {
    case NodeKind::Input: os << "input[" << n->params[0] << "]"; break;
    case NodeKind::Scalar: os << "scalar[" << n->params[0] << "]"; break;
    case NodeKind::SymVal: os << "symval[s" << n->params[0] << "]"; break;
    case NodeKind::Const: os << "const " << scalar_str(*n->value); break;
    case NodeKind::Ufunc:
      if (n->params.size() > 1 && (n->params[1] & Graph::kScalarMath)) os << "scalar ";
      os << op_name(n->op);
      if (n->params.size() > 1 && n->params[1] == Graph::kScalarLoop) os << "[scalar loop]";
      if (n->params[0]) os << "#" << n->params[0];
      break;
    case NodeKind::Cast:
      os << "cast";
      if (!n->params.empty()) os << "." << op_name(static_cast<OpId>(n->params[0]));
      break;
    case NodeKind::Reduce: os << "reduce." << op_name(n->op); break;
    case NodeKind::View: os << "view." << view_kind_name(n->view_kind()); break;
    case NodeKind::Gather: os << "gather"; break;
    case NodeKind::Write: os << "write"; break;
    case NodeKind::Prim: os << op_name(n->op); break;
    case NodeKind::Call: os << "call " << g.calls.at(n->params[0]).second; break;
  }
  if (!n->args.empty()) {
    os << "(";
    for (size_t i = 0; i < n->args.size(); ++i) os << (i ? ", %" : "%") << n->args[i]->id;
    os << ")";
  }
  size_t first = (n->kind == NodeKind::View) ? 1 : 0;
  bool show = n->kind == NodeKind::Reduce || n->kind == NodeKind::View || n->kind == NodeKind::Gather ||
              n->kind == NodeKind::Prim;
  if (show && n->params.size() > first) {
    os << " [";
    for (size_t i = first; i < n->params.size(); ++i) os << (i > first ? ", " : "") << n->params[i];
    os << "]";
  }
  if (n->kind == NodeKind::Reduce && n->value) os << " initial=" << scalar_str(*n->value);
  os << " : " << name(n->dtype) << sym_shape_str(n->shape);
  return os.str();
}
}  // namespace

std::string Graph::str() const {
  std::ostringstream os;
  for (auto& s : symbols_)
    os << "# s" << (&s - symbols_.data()) << " = input[" << s.input << "].shape[" << s.axis << "] (traced " << s.hint
       << ")\n";
  for (auto& c : index_checks)
    os << "# check input[" << c.input << "] in [-" << c.extent << ", " << c.extent << ") (axis " << c.axis << ")\n";
  for (int i : owned_inputs) os << "# owned input[" << i << "]\n";
  for (int k : unread_outputs) os << "# unread output " << k << " (%" << outputs.at(static_cast<size_t>(k))->id << ")\n";
  for (NodeRef n : order_) os << node_str(*this, n) << "\n";
  for (auto& [i, n] : writebacks) os << "writeback input[" << i << "] <- %" << n->id << "\n";
  os << "return";
  for (size_t i = 0; i < outputs.size(); ++i) os << (i ? ", %" : " %") << outputs[i]->id;
  os << "\n";
  return os.str();
}

bool Graph::same_structure(const Graph& o) const {
  if (order_.size() != o.order_.size() || symbols_.size() != o.symbols_.size() || outputs.size() != o.outputs.size() ||
      writebacks.size() != o.writebacks.size() || index_checks != o.index_checks || owned_inputs != o.owned_inputs ||
      unread_outputs != o.unread_outputs)
    return false;
  for (size_t k = 0; k < symbols_.size(); ++k)
    if (symbols_[k].input != o.symbols_[k].input || symbols_[k].axis != o.symbols_[k].axis ||
        symbols_[k].hint != o.symbols_[k].hint)
      return false;
  for (size_t k = 0; k < outputs.size(); ++k)
    if (outputs[k]->id != o.outputs[k]->id) return false;
  for (size_t k = 0; k < writebacks.size(); ++k)
    if (writebacks[k].first != o.writebacks[k].first || writebacks[k].second->id != o.writebacks[k].second->id)
      return false;
  if (input_writes.size() != o.input_writes.size()) return false;
  for (size_t k = 0; k < input_writes.size(); ++k)
    if (input_writes[k].at != o.input_writes[k].at || input_writes[k].input != o.input_writes[k].input ||
        input_writes[k].value->id != o.input_writes[k].value->id)
      return false;
  for (size_t k = 0; k < order_.size(); ++k) {
    const Node &a = *order_[k], &b = *o.order_[k];
    if (a.id != b.id || a.hash != b.hash || a.kind != b.kind || a.op != b.op || a.dtype != b.dtype ||
        a.shape != b.shape || a.params != b.params || a.args.size() != b.args.size() ||
        a.value.has_value() != b.value.has_value())
      return false;
    if (a.kind == NodeKind::Call) return false;  // a host call closes over its own trace's arguments
    for (size_t i = 0; i < a.args.size(); ++i)
      if (a.args[i]->id != b.args[i]->id) return false;
    if (a.value) {
      // The stored bits, as interning compares them (NaN == NaN, -0.0 != 0.0).
      alignas(16) std::byte bx[16] = {}, by[16] = {};
      a.value->store(a.value->dtype, bx);
      b.value->store(b.value->dtype, by);
      if (a.value->dtype != b.value->dtype || !std::equal(bx, bx + 16, by)) return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------- verifier
bool verify_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("NPC_VERIFY");
    return v && std::string_view(v) != "0" && *v;
  }();
  return on;
}

void verify(const Graph& g, std::string_view after_pass) {
  auto fail = [&](NodeRef n, const std::string& why) {
    throw VerifyError("IR verification failed after pass '" + std::string(after_pass) + "' at " + node_str(g, n) +
                      ": " + why);
  };
  auto same_shape = [&](NodeRef n, NodeRef a) {
    if (a->shape != n->shape) fail(n, "operand %" + std::to_string(a->id) + " has shape " + sym_shape_str(a->shape));
  };
  const int nsym = static_cast<int>(g.symbols().size());
  for (NodeRef n : g.nodes()) {
    for (NodeRef a : n->args)
      if (a->id >= n->id || g.nodes().at(a->id) != a) fail(n, "operand is not an earlier node of this graph");
    for (Dim d : n->shape)
      if (!d.is_static() && d.symbol() >= nsym) fail(n, "unknown symbol");
    switch (n->kind) {
      case NodeKind::Input:
      case NodeKind::SymVal:
      case NodeKind::Const:
      case NodeKind::Call:
        break;
      case NodeKind::Scalar:
        if (!n->shape.empty()) fail(n, "runtime scalar must be 0-d");
        break;
      case NodeKind::Ufunc: {
        int i = static_cast<int>(n->op);
        if (i >= kNumOps || kOpNin[i] != static_cast<int>(n->args.size())) fail(n, "arity");
        DType d0 = n->args[0]->dtype;
        for (NodeRef a : n->args) {
          same_shape(n, a);
          // Kernels do no promotion: inputs share the loop dtype, except ldexp's integer exponent.
          if (a->dtype != d0 && n->op != OpId::ldexp) fail(n, "operands have different dtypes (missing cast)");
        }
        break;
      }
      case NodeKind::Cast:
        if (n->args.size() != 1) fail(n, "arity");
        same_shape(n, n->args[0]);
        break;
      case NodeKind::Reduce: {
        NodeRef a = n->args.at(0);
        if (a->dtype != n->dtype) fail(n, "reduction input must have the result dtype (missing cast)");
        size_t nax = n->params.size() - 1;
        size_t expect = n->params[0] ? a->shape.size() : a->shape.size() - nax;
        if (n->shape.size() != expect) fail(n, "reduced rank");
        break;
      }
      case NodeKind::View: {
        NodeRef a = n->args.at(0);
        ViewKind k = n->view_kind();
        if (k == ViewKind::Component ? n->dtype != real_dtype(a->dtype) : n->dtype != a->dtype)
          fail(n, "view changes dtype");
        if (k == ViewKind::Slice && (n->params.size() != 1 + 2 * a->shape.size() || n->shape.size() != a->shape.size()))
          fail(n, "slice parameters");
        if (k == ViewKind::Slice) {
          for (size_t d = 0; d < n->shape.size(); ++d) {
            Dim sz = n->shape[d], src = a->shape[d];
            if (!sz.is_static() || !src.is_static()) continue;
            if (sz.value() == 0) continue;
            int64_t first = n->params[1 + 2 * d], last = first + (sz.value() - 1) * n->params[2 + 2 * d];
            if (first < 0 || first >= src.value() || last < 0 || last >= src.value()) fail(n, "slice out of bounds");
          }
        }
        if (k == ViewKind::Permute && n->params.size() != 1 + a->shape.size()) fail(n, "permute parameters");
        if (k == ViewKind::Reshape && (static_size(a->shape) < 0 || static_size(n->shape) < 0)) {
          // Note [symbolic reshapes]: with symbols, a Reshape is an index map (the non-1 dims
          // pair up one to one; a symbol pairs with an equal dim or, renamed under a guard
          // constraint, with a dim of equal run-time size).
          std::vector<Dim> x, y;
          for (Dim d : a->shape) if (!(d.is_static() && d.value() == 1)) x.push_back(d);
          for (Dim d : n->shape) if (!(d.is_static() && d.value() == 1)) y.push_back(d);
          bool ok = x.size() == y.size();
          for (size_t i = 0; ok && i < x.size(); ++i) ok = x[i] == y[i] || !x[i].is_static() || !y[i].is_static();
          if (!ok) fail(n, "symbolic reshape that is not an index map");
        }
        if (k == ViewKind::Strided) {
          int64_t total = static_size(a->shape);
          if (total < 0 || n->params.size() != 2 + n->shape.size()) fail(n, "strided parameters");
          int64_t lo = n->params[1], hi = n->params[1];
          bool empty = false;
          for (size_t d = 0; d < n->shape.size(); ++d) {
            int64_t sz = n->shape[d].value(), st = n->params[2 + d];
            if (sz == 0) empty = true;
            else if (st > 0) hi += (sz - 1) * st;
            else lo += (sz - 1) * st;
          }
          if (!empty && (lo < 0 || hi >= total)) fail(n, "strided view out of bounds");
        }
        break;
      }
      case NodeKind::Gather: {
        if (n->args.size() < 2 || n->dtype != n->args[0]->dtype) fail(n, "gather operands");
        const int64_t k = static_cast<int64_t>(n->args.size()) - 1, axis = n->params.at(0);
        NodeRef a = n->args[0], i0 = n->args[1];
        if (axis < 0 || axis + k > a->ndim()) fail(n, "gather axis");
        for (size_t j = 1; j < n->args.size(); ++j)
          if (n->args[j]->dtype != DType::Int64 || n->args[j]->shape != i0->shape) fail(n, "gather indices");
        SymShape s(a->shape.begin(), a->shape.begin() + axis);
        s.insert(s.end(), i0->shape.begin(), i0->shape.end());
        s.insert(s.end(), a->shape.begin() + axis + k, a->shape.end());
        if (s != n->shape) fail(n, "gather shape");
        break;
      }
      case NodeKind::Write: {
        NodeRef base = n->args.at(0), region = n->args.at(1), value = n->args.at(2);
        if (value->dtype != region->dtype || n->dtype != base->dtype) fail(n, "write dtypes");
        if (value->shape != region->shape || n->shape != base->shape) fail(n, "write shapes");
        NodeRef r = region;
        while (r->kind == NodeKind::View && r != base) r = r->args[0];
        if (r != base) fail(n, "write region is not a view chain over the base");
        break;
      }
      case NodeKind::Prim:
        if (n->op == OpId::where) {
          if (n->args.size() != 3 || n->args[0]->dtype != DType::Bool || n->args[1]->dtype != n->dtype ||
              n->args[2]->dtype != n->dtype)
            fail(n, "where operands");
          for (NodeRef a : n->args) same_shape(n, a);
        }
        break;
    }
  }
  for (auto& [i, v] : g.writebacks)
    if (i < 0 || i >= g.num_inputs()) throw VerifyError("write-back to a missing input after pass " + std::string(after_pass));
  for (auto& c : g.index_checks)
    if (c.input < 0 || c.input >= g.num_inputs() || c.extent < 0)
      throw VerifyError("index check of a missing input after pass " + std::string(after_pass));
  for (size_t k = 0; k < g.unread_outputs.size(); ++k)
    if (g.unread_outputs[k] < 0 || static_cast<size_t>(g.unread_outputs[k]) >= g.outputs.size() ||
        (k > 0 && g.unread_outputs[k] <= g.unread_outputs[k - 1]))
      throw VerifyError("unread output out of range or order after pass " + std::string(after_pass));
}

// ---------------------------------------------------------------- passes
template <class Keep> Graph Graph::copy_kept(const Keep& keep, std::vector<NodeRef>& map, bool steal) const {
  Graph r;
  size_t kept = 0;
  for (NodeRef n : order_) kept += keep[n->id] ? 1 : 0;
  // Note [node storage]; no intern table: Note [intern table of a finished graph].
  r.order_.reserve(kept);
  r.evals_.reserve(kept);
  r.eval_order_.reserve(kept);
  r.symbols_ = symbols_;
  r.num_inputs_ = num_inputs_;
  r.num_scalars_ = num_scalars_;
  r.calls = calls;
  r.index_checks = index_checks;
  r.owned_inputs = owned_inputs;
  map.assign(order_.size(), nullptr);
  for (NodeRef n : order_) {
    if (!keep[n->id]) continue;
    // A graph about to be dropped (dce's) gives its nodes' vectors away; its ids stay readable.
    Node c = steal ? std::move(const_cast<Node&>(*n)) : *n;
    for (auto& a : c.args) a = map[a->id];
    map[n->id] = r.append_distinct(std::move(c));
    r.evals_[map[n->id]->id] += evaluations(n) - 1;  // Note [merged evaluations]
  }
  r.eval_order_.clear();
  for (uint32_t id : eval_order_)
    if (keep[id]) r.eval_order_.push_back(map[id]->id);
  return r;
}

Graph dce(Graph&& g) {
  std::vector<bool> live = live_nodes(g);
  // Nothing dead: the graph itself (a copy would intern every node again, and a loop's
  // segments of 10,000 nodes each pay it once per segment).
  if (std::find(live.begin(), live.end(), false) == live.end()) {
    g.drop_table();  // Note [intern table of a finished graph]
    return std::move(g);
  }
  std::vector<NodeRef> map;
  Graph r = g.copy_kept(live, map, /*steal=*/true);
  for (NodeRef o : g.outputs) r.outputs.push_back(map[o->id]);
  r.unread_outputs = g.unread_outputs;
  for (auto& [i, n] : g.writebacks) r.writebacks.emplace_back(i, map[n->id]);
  // A write's place counts the evaluations kept before it.
  std::vector<uint32_t> kept_before(g.eval_order_.size() + 1, 0);
  for (size_t k = 0; k < g.eval_order_.size(); ++k) kept_before[k + 1] = kept_before[k] + (live[g.eval_order_[k]] ? 1 : 0);
  for (const Graph::InputWrite& w : g.input_writes)
    r.input_writes.push_back({kept_before.at(w.at), w.input, map[w.value->id]});
  return r;
}

Graph subgraph(const Graph& g, std::span<const NodeRef> outputs) {
  std::vector<char> live(g.order_.size(), 0);
  for (NodeRef o : outputs) live[o->id] = 1;
  // Ids are a topological order: one backward sweep marks everything the outputs read.
  for (size_t i = g.order_.size(); i-- > 0;) {
    if (!live[i]) continue;
    for (NodeRef a : g.order_[i]->args) live[a->id] = 1;
  }
  std::vector<NodeRef> map;
  Graph r = g.copy_kept(live, map);
  for (NodeRef o : outputs) r.outputs.push_back(map[o->id]);
  return r;
}

Graph run_pass(Graph&& g, Pass pass, std::string_view name) {
  Graph r = pass(std::move(g));
  if (verify_enabled()) verify(r, name);
  return r;
}

// ---------------------------------------------------------------- backends
namespace {
std::mutex g_backend_mu;
std::map<std::string, Backend, std::less<>>& backends() {
  static std::map<std::string, Backend, std::less<>> m;
  return m;
}
}  // namespace

void register_backend(std::string name, Backend backend) {
  std::lock_guard lk(g_backend_mu);
  backends()[std::move(name)] = std::move(backend);
}

const Backend* find_backend(std::string_view name) {
  std::lock_guard lk(g_backend_mu);
  auto it = backends().find(name);
  return it == backends().end() ? nullptr : &it->second;
}

}  // namespace npc::ir
