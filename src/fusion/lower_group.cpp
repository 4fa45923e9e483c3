// Fusion grouping and materialisation: ir::Graph -> groups of roots, each lowered into a
// kernel (lower_expr.cpp, lower_reduce.cpp) -> one C++ translation unit.
//
// Note [fusion]
// Every node is *inlined* into its consumers as index arithmetic unless it is materialised.
// Materialised: graph outputs and write-back values, Write nodes (stores in program order),
// sources of Reshapes that are not index maps, reductions whose result would otherwise be
// recomputed (a loop outside them that does not index them), and any non-leaf node read at
// two different indices in one kernel (stencils: each time step becomes one kernel). The
// decisions are found by trial lowering: emitting a kernel throws NeedMaterialize(nodes) and
// the grouping retries (Note [materialisations found in one pass] in lower_expr.cpp). Materialised nodes of one shape with no dependency between them
// share one loop nest (several outputs from one iteration space).
//
// Note [library calls]
// Matmul stays a library call (npc::matmul: CBLAS for floats, exact loops otherwise) inside
// a fused graph. The call node is materialised by a launch of its own (fn -1) that the
// backend runs between the kernels; its operands are read as strided views: an operand that
// is a chain of View nodes (a transpose, a slice, a broadcast) over a graph input or a
// materialised value is passed as that view, anything else (an elementwise chain, a cast)
// is materialised by the fused kernel that produces it. Consumers of the result (an
// epilogue such as `np.maximum(X @ W + b, 0)`) load it from its buffer, and the backend lets
// an elementwise epilogue that is the result's last reader write into that buffer (Note
// [in-place epilogues] in backend.cpp), so the epilogue adds no full-size temporary.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "fusion/lower_internal.hpp"
#include "ops/exec.hpp"

namespace npc::fusion {

// A multi-output ufunc output the emitter generates as another row: divmod's quotient and
// remainder are floor_divide and remainder (NumPy computes all three with npy_divmod).
OpId generated_as(NodeRef n) {
  if (n->op == OpId::divmod) return n->params.at(0) == 0 ? OpId::floor_divide : OpId::remainder;
  return n->params.empty() || n->params[0] == 0 ? n->op : OpId::kCount;
}

bool static_empty_axis(NodeRef src, const std::vector<int64_t>& axes) {
  for (int64_t a : axes)
    if (src->shape.at(a).is_static() && src->shape[a].value() == 0) return true;
  return false;
}

bool is_scan(NodeRef n) {
  return n->kind == NodeKind::Prim && (n->op == OpId::cumsum || n->op == OpId::cumprod) &&
         cpp_supports(n->op == OpId::cumsum ? OpId::add : OpId::multiply, n->dtype);
}

bool is_library_call(NodeRef n) {
  switch (n->kind) {
    case NodeKind::Call: return true;
    case NodeKind::Cast:
      // Note [casts to uint32]: float32/float64 -> uint32 of out-of-range values depends on
      // which path of NumPy's loop converts the element (its SIMD body converts through int32,
      // its scalar tail through int64): npc's eager cast is built the same way and gives
      // NumPy's values for a contiguous array, so the fused backend calls it.
      return n->dtype == DType::UInt32 && (n->args[0]->dtype == DType::Float64 || n->args[0]->dtype == DType::Float32);
    case NodeKind::Ufunc: {
      OpId op = generated_as(n);
      return op == OpId::kCount || !cpp_supports(op, n->args[0]->dtype);
    }
    case NodeKind::Reduce: {
      if (!reduce_supported(n->op, n->dtype)) return true;
      // A float16 sum that NumPy rounds once per inner run (Note [float16 reductions]).
      if (half_rounding(n) == HalfRounding::PerInnerRun) return true;
      // max/min of an empty axis has no identity: the eager reduction raises NumPy's error.
      return (n->op == OpId::maximum || n->op == OpId::minimum) && !n->value &&
             static_empty_axis(n->args[0], std::vector<int64_t>(n->params.begin() + 1, n->params.end()));
    }
    case NodeKind::Prim:
      if (n->op == OpId::argmin || n->op == OpId::argmax)
        return is_complex(n->args[0]->dtype) || static_empty_axis(n->args[0], {n->params.at(0)});
      if (is_scan(n)) return false;  // Note [scans in kernels]
      return n->op != OpId::where && n->op != OpId::iota && n->op != OpId::fill && n->op != OpId::copy;
    default: return false;
  }
}

NodeRef library_operand_base(NodeRef a) {
  while (a->kind == NodeKind::View) a = a->args[0];
  return a;
}

// Note [writes in place]
// A Write (`A[i, j] -= x`, a stencil's interior) produces a new value of its base. When the
// base is a temporary of the graph that nothing reads after the Write (no later kernel, no
// output or write-back, not a library result that may alias an operand), the Write takes
// its buffer over: only the region is stored, the elements outside it are already there.
// Otherwise an element update of a loop over rows would copy the whole array each time.
// Reading the old value while storing the new one is safe when every load of the buffer is
// at the element being stored (each element is read before it is overwritten, and no other
// element reads it), or when the region is one element stored by the box nest alone (the
// value is computed before the single store). Anything else gets a buffer of its own.
// Note [disjoint in-place loads]: the elements index `l` can reach, from the static bounds
// of the loops around it ([lo, hi) of each loop variable); nullopt when an atom is not such a
// loop variable (a size, a stride, a loaded index) or a loop may be empty.
std::optional<std::pair<int64_t, int64_t>> index_range(const Lin& l,
                                                       const std::map<std::string, std::pair<int64_t, int64_t>>& bounds) {
  int64_t lo = l.c, hi = l.c;
  for (auto& [a, coef] : l.t) {
    auto it = bounds.find(a);
    if (it == bounds.end() || it->second.second <= it->second.first) return std::nullopt;
    const int64_t x = coef * it->second.first, y = coef * (it->second.second - 1);
    lo += std::min(x, y);
    hi += std::max(x, y);
  }
  return std::make_pair(lo, hi);
}

// The stores into written buffers and the loads of a kernel, each with the range of elements
// its index reaches (Note [disjoint in-place loads]); buffers are the kernel's own numbers.
struct Access {
  int buf;
  std::string index;
  std::optional<std::pair<int64_t, int64_t>> range;
};
struct Accesses {
  std::vector<Access> stores, loads;
};

Accesses accesses(const Kernel& k) {
  Accesses r;
  std::map<std::string, std::pair<int64_t, int64_t>> bounds;
  std::function<void(const Block&)> walk = [&](const Block& b) {
    for (const Stmt& s : b) {
      if (s.k == Stmt::K::Store && k.bufs.at(s.buf).written)
        r.stores.push_back({s.buf, s.index.str(), index_range(s.index, bounds)});
      if ((s.k == Stmt::K::Let || s.k == Stmt::K::Decl || s.k == Stmt::K::Assign) && s.expr.k == Expr::K::Load)
        r.loads.push_back({s.expr.buf, s.expr.index.str(), index_range(s.expr.index, bounds)});
      const bool loop = s.k == Stmt::K::For && s.lo.is_const() && s.hi.is_const() && s.step == 1;
      if (loop) bounds[s.var] = {s.lo.c, s.hi.c};
      walk(s.body);
      walk(s.orelse);
      if (loop) bounds.erase(s.var);
    }
  };
  walk(k.body);
  return r;
}

bool disjoint(const std::optional<std::pair<int64_t, int64_t>>& a, const std::optional<std::pair<int64_t, int64_t>>& b) {
  return a && b && (a->second < b->first || b->second < a->first);
}

bool in_place_safe(const Kernel& k, const Emitter& em, NodeRef w) {
  // Note [disjoint in-place loads]: a load of the stored buffer whose elements cannot meet
  // the stored region (row i - 1 of a buffer whose row i is written: `cp[i] = c[i] / (b[i] -
  // a[i] * cp[i - 1])`) reads values the kernel never overwrites, so it does not prevent
  // the write from taking the buffer over.
  const Accesses a = accesses(k);
  int64_t region = 1;
  for (const Dim& d : w->args[1]->shape) {
    if (!d.is_static()) { region = -1; break; }
    region *= d.value();
  }
  if (em.box_in_place() && region == 1) return true;
  if (a.stores.size() != 1) return false;
  const Access& st = a.stores[0];
  for (const Access& l : a.loads)
    if (l.buf == st.buf && l.index != st.index && !disjoint(l.range, st.range)) return false;
  return true;
}

// Note [later readers of an in-place base]
// A Write takes its base's buffer over only if no later kernel reads the base (Note [writes
// in place]), yet the old value is often read afterwards away from the region: in a Thomas
// sweep `den = b[i] - a[i] * cp[i - 1]; cp[i] = c[i] / den; dp[i] = (d[i] - a[i] * dp[i - 1])
// / den`, the kernel of dp[i] recomputes den from row i - 1 of the old cp, after cp[i] has
// been stored, and every row of the loop copied all of cp (64 rows of 20,000: 5x NumPy's
// time). Such a Write now takes the buffer over when the later readers of the base come
// before any Write into its own value (which would store into the same buffer again), are
// generated kernels, and load the buffer only where the Write does not store: each reader's
// kernel is checked against the Write's stored range when it is lowered, and if one fails
// (or a range is unknown) the grouping retries with no Write taking a buffer this way (one
// retry at most).
struct RevokeLateInPlace {};

bool store_range_of(const Kernel& k, const Emitter& em, int global_buf, std::optional<std::pair<int64_t, int64_t>>& out) {
  const Accesses a = accesses(k);
  const auto& gb = em.global_bufs();
  int n = 0;
  for (const Access& s : a.stores)
    if (s.buf < static_cast<int>(gb.size()) && gb[s.buf] == global_buf) {
      out = s.range;
      ++n;
    }
  return n == 1;
}

bool loads_avoid(const Kernel& k, const Emitter& em, int global_buf, const std::optional<std::pair<int64_t, int64_t>>& region) {
  const auto& gb = em.global_bufs();
  for (const Access& l : accesses(k).loads)
    if (l.buf < static_cast<int>(gb.size()) && gb[l.buf] == global_buf && !disjoint(l.range, region)) return false;
  return true;
}

// Note [values of unsafe in-place writes]
// A Write that may take its base's buffer over (Note [writes in place]) but whose value
// reads the base where the kernel stores (`A[i, 1:-1] = A[i, :-2] + A[i, 2:]`, Seidel's row
// update: the value at j reads j + 1, which the same loop stores) would get a buffer of its
// own, a copy of the whole base with the region replaced: in a loop over rows, a copy of the
// array per row. NumPy computes the value into a temporary of the region's size and copies
// it into the view; so does lowering then: the value is materialised by a kernel of its own
// launched just before the Write, and the Write, whose value is now a load of that buffer,
// stores into the base in place. Only when the region is smaller than the base (with static
// shapes; for a region as large as the base the two ways cost the same), the value is a
// computed node without a buffer yet, and the region is a line (at most one axis longer than
// one): the temporary's strides are then 1, while those of a 2-D region's temporary are its
// extents, literals of the kernel text (Note [generic kernels]), so a loop whose regions
// shrink (`A[k + 1:, k + 1:] -= ...`) would compile a kernel per iteration.
bool value_first_pays(NodeRef w, const LowerState& st) {
  NodeRef base = w->args[0], region = w->args[1], val = w->args[2];
  if (st.buffer_of.count(val) || st.is_input(val) || val->kind == NodeKind::Const || val->kind == NodeKind::SymVal ||
      val->kind == NodeKind::Write || is_library_call(val) || is_scan(val))
    return false;
  int64_t nb = 1, nr = 1;
  int long_axes = 0;
  for (const Dim& d : base->shape) {
    if (!d.is_static()) return false;
    nb *= d.value();
  }
  for (const Dim& d : region->shape) {
    if (!d.is_static()) return false;
    nr *= d.value();
    long_axes += d.value() > 1;
  }
  return nr < nb && long_axes <= 1;
}

NodeRef output_root(NodeRef o) {
  NodeRef b = o;
  while (b->kind == NodeKind::View && b->view_kind() == ViewKind::Permute) b = b->args[0];
  if (b == o) return o;
  // Any node with a buffer of its own: library calls (sort, a K-ordered copy sorted) and
  // writes (concatenate's result filled piece by piece) are laid out by permutes too.
  const bool computed = b->kind == NodeKind::Ufunc || b->kind == NodeKind::Reduce || b->kind == NodeKind::Cast ||
                        b->kind == NodeKind::Prim || b->kind == NodeKind::Call || b->kind == NodeKind::Write ||
                        b->kind == NodeKind::Gather;
  return computed ? b : o;
}

bool LowerState::is_input(NodeRef n) const { return n->kind == NodeKind::Input || n->kind == NodeKind::Scalar; }

bool LowerState::can_materialise(NodeRef n) const { return !materialised.count(n); }

namespace {
// A temporary buffer of the graph's own for `n`'s value (a materialised node).
void add_temp_buffer(LowerState& st, NodeRef n) {
  BufInfo b;
  b.kind = BufInfo::Temp;
  b.dtype = n->dtype;
  b.shape = n->shape;
  b.node = n;
  st.bufs.push_back(b);
  st.buffer_of[n] = static_cast<int>(st.bufs.size()) - 1;
}
}  // namespace

// The lowering driver: decides materialisation by trial emission, groups roots into kernels.
// Note [lowering bookkeeping by id]
// A segment of a cut loop holds thousands of small groups (an element update per
// iteration), each lowered on its own. What lower() works out for the whole graph before
// it emits them (the live nodes, which nodes are materialised, each root's dependencies,
// who reads an owned input last) is kept in vectors indexed by node id (ids are a
// topological order), walked with an explicit stack: sets of node pointers and a recursive
// walk per root made it a noticeable part of a scalar loop's first call.
// Note [shared chains]
// Inlining recomputes a value in every kernel that reads it. Where a costly value is read by
// several kernels, the recomputation costs more than a store: `c = np.where(b > 1.5,
// np.sqrt(b), np.log1p(b))` read by c.mean(), c.std(axis=0) and (c > 1).sum() computed log1p
// four times over (5.8x NumPy's time). Where the value is a loop's recurrence (durbin's
// `beta *= 1 - alpha * alpha; alpha = -(r[k] + dot) / beta`, a Python float carried across
// iterations), every kernel of iteration k inlines all k iterations before it: the kernels
// grow with k, each iteration's differ from the last's, and the C++ of one trace grows with
// the square of its trip count (300 iterations made a translation unit g++ did not finish in
// 60 s). Two rules materialise such values (elementwise nodes: ufunc, cast, where, gather),
// costing a node's expression as eager kernels cost an element (ops::elementwise_cost),
// counted down to the materialised values and leaves it reads:
// - before grouping (materialise_shared_chains), in topological order, a 0-d node read by two
//   or more nodes whose expression costs 8 or more (a store of one element is cheap; a
//   recurrence is then cut every iteration or two, at the same place of its body, and its
//   kernels repeat);
// - after grouping (shared_inlined_values), a node inlined into k >= 2 groups whose expression
//   costs c with c * (k - 1) >= 8 (the recomputation saved, against a store and the loads
//   that replace the recomputation's own loads). The latest such node is taken first and the
//   nodes it inlines wait for the next grouping (which may take them if other groups still
//   inline them), for a few rounds.
namespace {
bool computes(NodeRef n) {
  return n->kind == NodeKind::Ufunc || n->kind == NodeKind::Cast || n->kind == NodeKind::Gather ||
         (n->kind == NodeKind::Prim && n->op == OpId::where);
}
bool leaf(NodeRef n) {
  return n->kind == NodeKind::Input || n->kind == NodeKind::Scalar || n->kind == NodeKind::Const ||
         n->kind == NodeKind::SymVal || n->kind == NodeKind::Call;
}
int node_cost(NodeRef n) {
  if (n->kind == NodeKind::View || leaf(n)) return 0;
  if (n->kind == NodeKind::Ufunc) return ops::elementwise_cost(n->op, n->args.empty() ? n->dtype : n->args[0]->dtype);
  return n->kind == NodeKind::Reduce ? 8 : 1;
}
// The cost of the expression node `n` inlines, up to `cap` (a bounded walk; stamp is reused).
int64_t inlined_cost(NodeRef n, const std::vector<char>& is_mat, std::vector<uint32_t>& stamp,
                     std::vector<NodeRef>& stack, int64_t cap) {
  int64_t cost = 0;
  size_t visited = 0;
  stack.assign(1, n);
  while (!stack.empty() && cost < cap && visited < static_cast<size_t>(8 * cap)) {
    NodeRef m = stack.back();
    stack.pop_back();
    if (stamp[m->id] == n->id) continue;
    stamp[m->id] = n->id;
    ++visited;
    if ((m != n && is_mat[m->id]) || leaf(m)) continue;
    cost += node_cost(m);
    stack.insert(stack.end(), m->args.begin(), m->args.end());
  }
  return cost;
}
constexpr int64_t kSharedBudget = 8;

void materialise_shared_chains(const ir::Graph& g, const std::vector<char>& live, std::set<NodeRef>& materialised) {
  const size_t num_nodes = g.nodes().size();
  std::vector<uint32_t> readers(num_nodes, 0);
  for (NodeRef n : g.nodes()) {
    if (!live[n->id]) continue;
    for (size_t i = 0; i < n->args.size(); ++i) {
      bool repeat = false;  // x * x reads x once
      for (size_t j = 0; j < i; ++j) repeat = repeat || n->args[j] == n->args[i];
      if (!repeat && n->args[i]->ndim() == 0) ++readers[n->args[i]->id];
    }
  }
  std::vector<char> is_mat(num_nodes, 0);
  for (NodeRef n : materialised) is_mat[n->id] = 1;
  std::vector<uint32_t> stamp(num_nodes, UINT32_MAX);
  std::vector<NodeRef> stack;
  for (NodeRef n : g.nodes()) {
    if (!live[n->id] || is_mat[n->id] || n->ndim() != 0 || readers[n->id] < 2 || !computes(n)) continue;
    if (inlined_cost(n, is_mat, stamp, stack, kSharedBudget) >= kSharedBudget) {
      materialised.insert(n);
      is_mat[n->id] = 1;
    }
  }
}

std::vector<NodeRef> shared_inlined_values(const std::vector<std::vector<NodeRef>>& groups,
                                           const std::vector<char>& is_mat, size_t num_nodes) {
  std::vector<uint32_t> groups_in(num_nodes, 0), stamp(num_nodes, UINT32_MAX);
  std::vector<NodeRef> stack, order;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto key = static_cast<uint32_t>(gi);
    stack.clear();
    for (NodeRef r : groups[gi]) stack.insert(stack.end(), r->args.begin(), r->args.end());
    while (!stack.empty()) {
      NodeRef n = stack.back();
      stack.pop_back();
      if (stamp[n->id] == key) continue;
      stamp[n->id] = key;
      if (is_mat[n->id] || leaf(n)) continue;
      if (++groups_in[n->id] == 2 && computes(n)) order.push_back(n);
      stack.insert(stack.end(), n->args.begin(), n->args.end());
    }
  }
  std::sort(order.begin(), order.end(), [](NodeRef a, NodeRef b) { return a->id > b->id; });
  std::fill(stamp.begin(), stamp.end(), UINT32_MAX);
  std::vector<char> covered(num_nodes, 0);
  std::vector<NodeRef> out;
  for (NodeRef n : order) {
    if (covered[n->id]) continue;
    const int64_t extra = groups_in[n->id] - 1;
    if (inlined_cost(n, is_mat, stamp, stack, (kSharedBudget + extra - 1) / extra) * extra < kSharedBudget) continue;
    out.push_back(n);
    // The nodes n inlines are computed once, in n's kernel, from now on.
    stack.assign(n->args.begin(), n->args.end());
    while (!stack.empty()) {
      NodeRef m = stack.back();
      stack.pop_back();
      if (covered[m->id] || is_mat[m->id] || leaf(m)) continue;
      covered[m->id] = 1;
      stack.insert(stack.end(), m->args.begin(), m->args.end());
    }
  }
  return out;
}
}  // namespace

Lowered lower(const ir::Graph& g, const std::vector<bool>& contiguous) {
  // Reachable nodes, by id (Note [lowering bookkeeping by id]).
  const size_t num_nodes = g.nodes().size();
  std::vector<char> live(num_nodes, 0);
  for (NodeRef o : g.outputs) live[o->id] = 1;
  for (auto& [i, v] : g.writebacks) live[v->id] = 1;
  // Note [checks of dead code] in src/tracer/graph.cpp: evaluated, their values dropped.
  std::vector<NodeRef> checks;
  for (NodeRef n : g.nodes())
    if (ir::raises_when_run(n)) {
      if (!live[n->id]) checks.push_back(n);
      live[n->id] = 1;
    }
  for (size_t i = num_nodes; i-- > 0;)  // ids are a topological order
    if (live[i])
      for (NodeRef a : g.nodes()[i]->args) live[a->id] = 1;
  // Nodes the emitter cannot generate run as host calls (Note [library calls]).
  std::set<NodeRef> materialised;
  // Note [unread outputs] in src/tracer/trace_segments.cpp: an unread output that is an input
  // is the input's own buffer (the backend returns the input array, not a copy of it).
  for (size_t k = 0; k < g.outputs.size(); ++k)
    if (!(g.output_unread(k) && g.outputs[k]->kind == NodeKind::Input)) materialised.insert(output_root(g.outputs[k]));
  for (auto& [i, v] : g.writebacks) materialised.insert(v);
  materialised.insert(checks.begin(), checks.end());
  for (NodeRef n : g.nodes()) if (live[n->id] && (n->kind == NodeKind::Write || is_scan(n))) materialised.insert(n);
  // Note [library calls]: the call and the values its operands view are materialised.
  for (NodeRef n : g.nodes()) {
    if (!live[n->id] || !is_library_call(n)) continue;
    materialised.insert(n);
    for (NodeRef a : n->args) {
      NodeRef base = library_operand_base(a);
      if (base->kind != NodeKind::Input || base->ndim() == 0) materialised.insert(base);
    }
  }
  // Note [operands of empty results]: a ufunc whose result is empty is traced as a fill
  // (Note [empty ufunc results] in src/tracer/trace_hooks.cpp) whose further arguments are
  // the operands the program computed for it. NumPy computed them, with their warnings (the
  // mean of an (0, 4) array divides 0 by 0 before `x - mean` subtracts nothing); inlined into
  // the empty loop they would never run, so they are materialised.
  for (NodeRef n : g.nodes()) {
    if (!live[n->id] || n->kind != NodeKind::Prim || n->op != OpId::fill) continue;
    for (size_t i = 1; i < n->args.size(); ++i) {
      NodeRef base = library_operand_base(n->args[i]);
      if (base->kind != NodeKind::Input && base->kind != NodeKind::Const && base->kind != NodeKind::Scalar &&
          base->kind != NodeKind::SymVal)
        materialised.insert(base);
    }
  }

  materialise_shared_chains(g, live, materialised);

  bool late_in_place = true;  // Note [later readers of an in-place base]
  int shared_rounds = 0;
  for (int attempt = 0; attempt < 10000; ++attempt) {
    Lowered out;
    LowerState st;
    st.materialised = materialised;
    // Inputs, the scalar block, scalars and materialised values: one allocation, not a
    // doubling series of them (each a fresh block the size of all before it).
    st.bufs.reserve(static_cast<size_t>(g.num_inputs()) + 1 + static_cast<size_t>(g.num_scalars()) + materialised.size());
    // Buffers: inputs (by graph input index), one scalar block, then materialised values.
    std::map<int, NodeRef> inputs;
    for (NodeRef n : g.nodes()) if (live[n->id] && n->kind == NodeKind::Input) inputs[n->params[0]] = n;
    int stride_base = 0;
    for (int i = 0; i < g.num_inputs(); ++i) {
      BufInfo b;
      b.kind = BufInfo::Input;
      b.index = i;
      auto it = inputs.find(i);
      b.contiguous = i < static_cast<int>(contiguous.size()) ? contiguous[i] : true;
      if (it != inputs.end()) {
        b.dtype = it->second->dtype;
        b.shape = it->second->shape;
        b.stride_base = stride_base;
        stride_base += it->second->ndim();
      }
      st.bufs.push_back(b);
      if (it != inputs.end()) {
        (materialised.count(it->second) ? st.input_buffer_of : st.buffer_of)[it->second] = i;
      }
    }
    out.num_strides = stride_base;
    {
      BufInfo b;
      b.kind = BufInfo::Scalars;
      b.dtype = DType::Float64;
      st.bufs.push_back(b);
      st.scalar_buffer = static_cast<int>(st.bufs.size()) - 1;
    }
    for (NodeRef n : g.nodes()) {
      if (live[n->id] && n->kind == NodeKind::Scalar) {
        BufInfo b = st.bufs[st.scalar_buffer];
        (void)b;
        // Scalars share the scalar block; each has a 16-byte slot at its index.
        BufInfo sb;
        sb.kind = BufInfo::Scalars;
        sb.scalar_slot = static_cast<int>(n->params[0]);
        sb.dtype = n->dtype;
        st.bufs.push_back(sb);
        // A materialised scalar (a host call's operand) is copied from its slot by a kernel.
        (materialised.count(n) ? st.input_buffer_of : st.buffer_of)[n] = static_cast<int>(st.bufs.size()) - 1;
      }
    }
    // Materialised values in topological order.
    std::vector<char> is_mat(num_nodes, 0);
    for (NodeRef n : materialised) is_mat[n->id] = 1;
    std::vector<NodeRef> roots;
    for (NodeRef n : g.nodes()) {
      if (!live[n->id] || !is_mat[n->id]) continue;
      add_temp_buffer(st, n);
      roots.push_back(n);
    }
    // Dependencies between roots (through inlined nodes): deps[k], the materialised values
    // root k reads.
    std::vector<std::vector<NodeRef>> deps(roots.size());
    std::vector<uint32_t> stamp(num_nodes, UINT32_MAX);  // the root whose walk saw a node last
    std::vector<NodeRef> stack;
    for (size_t k = 0; k < roots.size(); ++k) {
      const auto key = static_cast<uint32_t>(k);
      stamp[roots[k]->id] = key;
      stack.assign(roots[k]->args.begin(), roots[k]->args.end());
      while (!stack.empty()) {
        NodeRef n = stack.back();
        stack.pop_back();
        if (stamp[n->id] == key) continue;
        stamp[n->id] = key;
        if (is_mat[n->id]) { deps[k].push_back(n); continue; }
        stack.insert(stack.end(), n->args.begin(), n->args.end());
      }
    }
    // Group: join the latest group when the shape matches and no dependency on it.
    std::vector<std::vector<NodeRef>> groups;
    std::vector<uint32_t> dep_of(num_nodes, UINT32_MAX);  // root k marks its deps with k
    for (size_t k = 0; k < roots.size(); ++k) {
      NodeRef r = roots[k];
      for (NodeRef d : deps[k]) dep_of[d->id] = static_cast<uint32_t>(k);
      if (!groups.empty()) {
        auto& last = groups.back();
        bool ok = last.front()->shape == r->shape && r->kind != NodeKind::Write && last.front()->kind != NodeKind::Write &&
                  !is_scan(r) && !is_scan(last.front()) &&
                  !is_library_call(r) && !is_library_call(last.front());
        for (NodeRef m : last) if (dep_of[m->id] == k) ok = false;
        if (ok) { last.push_back(r); continue; }
      }
      groups.push_back({r});
    }
    if (shared_rounds < 4) {  // Note [shared chains]
      ++shared_rounds;
      std::vector<NodeRef> more = shared_inlined_values(groups, is_mat, num_nodes);
      if (!more.empty()) {
        materialised.insert(more.begin(), more.end());
        continue;
      }
      shared_rounds = 4;
    }
    // Note [writes in place]: Writes that may take their base's buffer over.
    std::map<NodeRef, NodeRef> in_place_base;
    // Note [later readers of an in-place base]: root -> the Writes whose base it reads after
    // them, and each such Write's stored range (when it took the buffer over).
    std::map<NodeRef, std::vector<NodeRef>> late_readers;
    std::map<NodeRef, std::optional<std::pair<int64_t, int64_t>>> late_region;
    std::set<NodeRef> late_written;  // the Writes that have such readers
    {
      std::set<NodeRef> escaping;
      for (NodeRef o : g.outputs) escaping.insert(output_root(o));
      for (auto& [i, v] : g.writebacks) escaping.insert(v);
      std::vector<size_t> last_reader(num_nodes, 0);
      for (size_t i = 0; i < roots.size(); ++i)
        for (NodeRef d : deps[i]) last_reader[d->id] = i;
      // Note [owned inputs]: a Write whose base is an input the graph owns (Graph::owned_inputs:
      // an array no one else refers to), written back at the end, contiguous, and read by no
      // later kernel, takes the input's array over, as a temporary's (no copy of the whole
      // array at the start of each segment of a cut loop).
      std::set<int> owned;
      for (int k : g.owned_inputs) {
        const bool back = std::any_of(g.writebacks.begin(), g.writebacks.end(), [&](auto& wb) { return wb.first == k; });
        if (back && (k >= static_cast<int>(contiguous.size()) || contiguous[k])) owned.insert(k);
      }
      std::vector<size_t> input_last(num_nodes, 0);  // owned Input node -> last root reading it
      if (!owned.empty()) {
        std::fill(stamp.begin(), stamp.end(), UINT32_MAX);
        for (size_t i = 0; i < roots.size(); ++i) {
          const auto key = static_cast<uint32_t>(i);
          stack.assign(1, roots[i]);
          bool top = true;
          while (!stack.empty()) {
            NodeRef n = stack.back();
            stack.pop_back();
            if (stamp[n->id] == key) continue;
            stamp[n->id] = key;
            if (n->kind == NodeKind::Input) { input_last[n->id] = i; continue; }
            if (!top && is_mat[n->id]) continue;
            top = false;
            stack.insert(stack.end(), n->args.begin(), n->args.end());
          }
        }
      }
      for (size_t i = 0; i < roots.size(); ++i) {
        NodeRef w = roots[i];
        if (w->kind != NodeKind::Write) continue;
        NodeRef b = w->args[0];
        if (b->kind == NodeKind::Input && owned.count(static_cast<int>(b->params[0])) && !escaping.count(b) &&
            !materialised.count(b) && st.buffer_of.count(b) && input_last[b->id] == i) {
          in_place_base[w] = b;
          continue;
        }
        auto bb = st.buffer_of.find(b);
        if (bb == st.buffer_of.end() || !materialised.count(b) || st.bufs[bb->second].kind != BufInfo::Temp) continue;
        if (escaping.count(b) || is_library_call(b)) continue;
        if (last_reader[b->id] != i) {
          // Note [later readers of an in-place base]
          if (!late_in_place || last_reader[b->id] < i) continue;
          bool ok = true;
          std::vector<size_t> readers;
          for (size_t j = i + 1; ok && j <= last_reader[b->id]; ++j) {
            NodeRef r = roots[j];
            if (r->kind == NodeKind::Write && (r->args[0] == w || r->args[0] == b)) ok = false;
            if (std::find(deps[j].begin(), deps[j].end(), b) == deps[j].end()) continue;
            if (is_library_call(r) || is_scan(r)) ok = false;
            readers.push_back(j);
          }
          if (!ok) continue;
          for (size_t j : readers) late_readers[roots[j]].push_back(w);
          if (!readers.empty()) late_written.insert(w);
        }
        in_place_base[w] = b;
      }
    }
    try {
      std::map<std::string, int> fn_by_text;
      for (auto& grp : groups) {
        if (is_library_call(grp.front())) {
          // Note [library calls]: result buffer first, then the buffers its operands view.
          std::vector<int> bufs{st.buffer_of.at(grp.front())};
          for (NodeRef a : grp.front()->args) {
            NodeRef base = library_operand_base(a);
            // A runtime scalar's slot is no array: the call reads its materialised copy.
            const bool slot = base->kind == NodeKind::Scalar;
            bufs.push_back(st.input_buffer_of.count(base) && !slot ? st.input_buffer_of.at(base) : st.buffer_of.at(base));
          }
          out.launches.push_back(Launch{-1, bufs, grp, {}});
          continue;
        }
        // A kernel's launch: its constants become parameters (Note [generic kernels]) and
        // kernels of equal text are one function.
        auto add_launch = [&](Kernel k, const Emitter& em, const std::vector<NodeRef>& roots) {
          std::vector<int64_t> params;
          run_pass("parametrise_constants", k, [&](Kernel& x) { params = parametrise_constants(x); });
          std::string body = emit_cpp_kernel(k, "@NAME@");
          auto it = fn_by_text.find(body);
          int fn;
          if (it == fn_by_text.end()) {
            fn = static_cast<int>(out.kernels.size());
            fn_by_text[body] = fn;
            out.kernels.push_back(std::move(k));
            out.kernel_text.push_back(body);
          } else {
            fn = it->second;
          }
          out.launches.push_back(Launch{fn, em.global_bufs(), roots, std::move(params)});
        };
        // Note [later readers of an in-place base]: the kernels of `grp` load the buffer of a
        // Write that took it over earlier only outside the Write's stored range.
        auto check_late_reads = [&](const Kernel& kk, const Emitter& e, const std::vector<NodeRef>& grp) {
          for (NodeRef root : grp) {
            auto lr = late_readers.find(root);
            if (lr == late_readers.end()) continue;
            for (NodeRef w : lr->second) {
              auto reg = late_region.find(w);
              if (reg == late_region.end()) continue;  // the Write kept a buffer of its own
              if (!loads_avoid(kk, e, st.buffer_of.at(w), reg->second)) throw RevokeLateInPlace{};
            }
          }
        };
        std::set<NodeRef> rs(grp.begin(), grp.end());
        auto ip = grp.size() == 1 ? in_place_base.find(grp.front()) : in_place_base.end();
        const int own_buffer = st.buffer_of.at(grp.front());
        if (ip != in_place_base.end()) st.buffer_of[grp.front()] = st.buffer_of.at(ip->second);
        auto em = std::make_unique<Emitter>(st, grp.front()->shape, rs);
        Kernel k = em->run(grp);
        if (ip != in_place_base.end() && !in_place_safe(k, *em, grp.front())) {
          // Note [values of unsafe in-place writes]
          NodeRef val = grp.front()->args[2];
          bool done = false;
          if (value_first_pays(grp.front(), st)) {
            add_temp_buffer(st, val);
            st.materialised.insert(val);
            Emitter vem(st, val->shape, {val});
            Kernel vk = vem.run({val});
            check_late_reads(vk, vem, grp);
            add_launch(std::move(vk), vem, {val});
            em = std::make_unique<Emitter>(st, grp.front()->shape, rs);
            k = em->run(grp);
            done = in_place_safe(k, *em, grp.front());
          }
          if (!done) {
            st.buffer_of[grp.front()] = own_buffer;  // the value reads the base elsewhere: a new buffer
            em = std::make_unique<Emitter>(st, grp.front()->shape, rs);
            k = em->run(grp);
          }
        }
        // Note [later readers of an in-place base]
        if (ip != in_place_base.end() && late_written.count(grp.front()) &&
            st.buffer_of.at(grp.front()) == st.buffer_of.at(ip->second)) {
          std::optional<std::pair<int64_t, int64_t>> r;
          if (!store_range_of(k, *em, st.buffer_of.at(grp.front()), r)) r.reset();
          late_region[grp.front()] = r;
        }
        check_late_reads(k, *em, grp);
        add_launch(std::move(k), *em, grp);
      }
    } catch (const RevokeLateInPlace&) {
      late_in_place = false;
      continue;
    } catch (const NeedMaterialize& m) {
      materialised.insert(m.node);
      materialised.insert(m.more.begin(), m.more.end());  // Note [materialisations found in one pass]
      continue;
    }
    // Moved, not copied: a segment's buffers and maps hold thousands of entries each.
    out.bufs = std::move(st.bufs);
    out.buffer_of = std::move(st.buffer_of);
    out.input_buffer_of = std::move(st.input_buffer_of);
    out.scalar_buffer = st.scalar_buffer;
    out.passes = attempt + 1;
    return out;
  }
  throw CodegenError("fusion did not converge");
}

std::string translation_unit(const Lowered& l, std::vector<std::string>& names, const std::string& tag) {
  std::string src = cpp_prelude_for(l.kernel_text);
  src += "#include <algorithm>\n#include <limits>\n\n";
  names.clear();
  for (size_t i = 0; i < l.kernel_text.size(); ++i) {
    std::string name = "npc_" + tag + "_k" + std::to_string(i);
    std::string text = l.kernel_text[i];
    text.replace(text.find("@NAME@"), 6, name);
    src += text + "\n";
    names.push_back(name);
  }
  return src;
}

}  // namespace npc::fusion
