// The exact binary form of a graph: serialize() and deserialize(), Note [graph serialization].
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>

#include "npc/errors.hpp"
#include "npc/graph.hpp"
#include "tracer/byte_io.hpp"

namespace npc::ir {

// Note [graph serialization]
// A compiled loop's plan is a list of segment graphs; storing them lets a new process skip
// tracing. The bytes are only ever read back by the same build of npc, so the format is a
// plain dump of what the builders recorded, bound to the build, and every byte of it is
// checked on the way back in (the file may be truncated, corrupted or hostile).
//
// Layout (integers little-endian, fixed width; "count" is a u32):
//   header   "NPCGRAPH", u32 format version (kFormatVersion), u64 build fingerprint: a hash of
//            the op table's rows (each row of ops.def as text, in order), the dtype names, the
//            sizes of the NodeKind/ViewKind/DType/OpId enums, the Ufunc flag bits and the
//            sizes of Node, Scalar and Dim. A file of another npc build is rejected, never
//            misread (an op renumbered by a new row would silently change meaning).
//   counts   u32 num_inputs, u32 num_scalars
//   symbols  count, then per symbol i32 input, i32 axis, i64 hint
//   nodes    count, then per node in id (topological) order: u8 kind, u16 op, u8 dtype,
//            count + i64 raw Dim per axis, count + u32 id per arg (an earlier node), count +
//            i64 per param, u8 has-value + scalar. A scalar is u8 dtype, u8 bool, i64 i,
//            u64 u, and the bit patterns of f, c.real, c.imag as u64: every field of
//            npc::Scalar exactly (NaN payloads, -0.0, int64 min, uint64 max).
//   merged evaluations (Note [merged evaluations]): u32 evaluations() per node, then count +
//            u32 id per entry of evaluation_order(); neither follows from the nodes.
//   interface  outputs (count + u32 id), writebacks (count + i32 input, u32 id), input_writes
//            (count + u32 at, i32 input, u32 id), index_checks (count + i32 input, i64 extent,
//            i64 axis), owned_inputs (count + i32), unread_outputs (count + i32)
//   trailer  u64 hash64 of every byte before it (Note [hashing bytes] in src/core/hash.hpp): a
//            flipped bit in a constant would leave a valid graph that computes something
//            else, so corruption is caught as a whole.
//
// Nodes are not stored as memory: deserialize() rebuilds each one, with the hash interning
// gives it, and a node equal to an earlier one (which interning would have merged) is an error
// (how it is found without an intern table: Note [reading a plan's graphs]). Host calls (Call nodes) close over the
// tracing process's Python objects and cannot be stored: serialize() raises ValueError.
//
// What deserialize() checks, beyond the layout (each failure is a ValueError naming the node):
// every count against the bytes left (no allocation larger than the input), enum values in
// range, arg ids of earlier nodes, shapes (rank <= 64, symbols declared, static element counts
// that fit int64), and per node kind the invariants later code indexes with: input, scalar and
// symbol numbers within the interface; ops of the right row kind and arity; ufunc output
// numbers and loop flags; reduce axes sorted, unique and in range with the reduced shape; each
// view kind's parameter count and its bounds (slices and strided views inside their source,
// overflow-checked; permutations; broadcast and reshape rules); gathers' axes, index operands
// and, for safety of the unchecked loads, that every index operand is a bounded constant or an
// input with an index check (Note [gathers]); write regions as view chains over their base;
// each primitive's operands, parameters and result shape (where, argmin/argmax, cumsum/cumprod,
// sort/argsort, matmul/dot, iota, fill, copy), since library calls return arrays of the shape
// they compute, not the node's. Interface entries name existing inputs, nodes and outputs;
// write-backs have their input's dtype and shape; evaluation data is in range. Last, the graph
// must pass verify(). Bump kFormatVersion when a node kind's params change meaning.

namespace {
constexpr char kMagic[8] = {'N', 'P', 'C', 'G', 'R', 'A', 'P', 'H'};
constexpr uint32_t kFormatVersion = 2;  // 2: the trailer is hash64, no longer FNV-1a
constexpr size_t kHeaderSize = io::kHeaderSize;
constexpr size_t kTrailerSize = io::kTrailerSize;
constexpr size_t kMaxRank = 64;  // NumPy's NPY_MAXDIMS
// More inputs or scalars than any run could pass (check_run_args wants one array each); a
// bound keeps a corrupt count from sizing the vectors backends index by input number.
constexpr uint32_t kMaxInterface = 1u << 20;
constexpr int kNumNodeKinds = static_cast<int>(NodeKind::Call) + 1;
constexpr int kNumViewKinds = static_cast<int>(ViewKind::Strided) + 1;

constexpr std::string_view kOpRows[] = {
#define NPC_UFUNC(...) "ufunc(" #__VA_ARGS__ ")",
#define NPC_REDUCE(...) "reduce(" #__VA_ARGS__ ")",
#define NPC_PRIM(...) "prim(" #__VA_ARGS__ ")",
#include "npc/ops.def"
};
constexpr std::string_view kDTypeNames[] = {
#define NPC_DTYPE_NAME_(E, T, N) #E,
    NPC_FOR_EACH_DTYPE(NPC_DTYPE_NAME_)
#undef NPC_DTYPE_NAME_
};

[[noreturn]] void corrupt(const std::string& why) { throw ValueError("npc graph bytes: " + why); }

// Element count of the static dims of `s` (symbols count as 1); false when it overflows what
// any array of complex128 could hold.
bool static_count_fits(const SymShape& s) {
  int64_t n = 1;
  for (Dim d : s)
    if (d.is_static() && __builtin_mul_overflow(n, d.value(), &n)) return false;
  return n <= std::numeric_limits<int64_t>::max() / 16;
}

bool all_static(const SymShape& s) {
  for (Dim d : s)
    if (!d.is_static()) return false;
  return true;
}

bool is_op(int64_t v) { return v >= 0 && v < kNumOps; }

// Whether source index first + k*step, 0 <= k < n, stays in [0, extent) (overflow-checked).
bool range_inside(int64_t first, int64_t step, int64_t n, int64_t extent) {
  if (n == 0) return true;
  int64_t span, last;
  if (__builtin_mul_overflow(n - 1, step, &span) || __builtin_add_overflow(first, span, &last)) return false;
  return first >= 0 && first < extent && last >= 0 && last < extent;
}

// The checks of one node whose args are already nodes of the graph being built (Note [graph
// serialization]); `nsym`, `ninputs`, `nscalars` come from the interface read before it.
class NodeChecker {
 public:
  NodeChecker(size_t index, const Node& n, int nsym, int ninputs, int nscalars)
      : i_(index), n_(n), nsym_(nsym), ninputs_(ninputs), nscalars_(nscalars) {}

  void run() {
    const Node& n = n_;
    for (Dim d : n.shape)
      if (!d.is_static() && d.symbol() >= nsym_) fail("names undeclared symbol s" + std::to_string(d.symbol()));
    if (!static_count_fits(n.shape)) fail("shape too large");
    const bool has_value = n.kind == NodeKind::Const || n.kind == NodeKind::Reduce;
    if (n.value && !has_value) fail("a value on a node kind without one");
    const bool table_op = n.kind == NodeKind::Ufunc || n.kind == NodeKind::Reduce || n.kind == NodeKind::Prim ||
                          n.kind == NodeKind::Gather || n.kind == NodeKind::Cast;
    if (!table_op && n.op != OpId::kCount) fail("an op on a node kind without one");
    if (table_op && !is_op(static_cast<int64_t>(n.op))) fail("op out of range");
    switch (n.kind) {
      case NodeKind::Input: leaf(ninputs_, "input"); break;
      case NodeKind::Scalar: leaf(nscalars_, "scalar"); rank(0); break;
      case NodeKind::SymVal: leaf(nsym_, "symbol"); rank(0); dtype(DType::Int64); break;
      case NodeKind::Const:
        arity(0);
        nparams(0);
        rank(0);
        if (!n.value || n.value->dtype != n.dtype) fail("constant without a value of its dtype");
        break;
      case NodeKind::Ufunc: ufunc(); break;
      case NodeKind::Cast:
        if (n.op != OpId::cast) fail("cast with another op");
        arity(1);
        if (n.params.size() > 1 || (n.params.size() == 1 && !is_op(n.params[0]))) fail("cast parameters");
        same_shape(n.args[0]);
        if (n.args[0]->dtype == n.dtype) fail("cast to the operand's own dtype");
        break;
      case NodeKind::Reduce: reduce(); break;
      case NodeKind::View: view(); break;
      case NodeKind::Gather: gather(); break;
      case NodeKind::Write: write(); break;
      case NodeKind::Prim: prim(); break;
      case NodeKind::Call: fail("a host call (graphs with host calls are never serialized)");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    corrupt("node " + std::to_string(i_) + " (" + std::string(kind_name(n_.kind)) + "): " + why);
  }
  void arity(size_t k) const {
    if (n_.args.size() != k) fail("takes " + std::to_string(k) + " operands");
  }
  void nparams(size_t k) const {
    if (n_.params.size() != k) fail("takes " + std::to_string(k) + " parameters");
  }
  void rank(size_t r) const {
    if (n_.shape.size() != r) fail("rank " + std::to_string(n_.shape.size()) + ", expected " + std::to_string(r));
  }
  void dtype(DType t) const {
    if (n_.dtype != t) fail("dtype must be " + std::string(name(t)));
  }
  void same_shape(NodeRef a) const {
    if (a->shape != n_.shape) fail("operand shape differs from the result's");
  }
  void same_dtype(NodeRef a) const {
    if (a->dtype != n_.dtype) fail("operand dtype differs from the result's");
  }
  // Input/Scalar/SymVal: params [k], 0 <= k < limit.
  void leaf(int limit, const char* what) const {
    arity(0);
    nparams(1);
    if (n_.params[0] < 0 || n_.params[0] >= limit) fail(std::string(what) + " number out of range");
  }
  // An axis parameter of an operand of rank `r`.
  int64_t axis_param(size_t k, size_t r) const {
    const int64_t ax = n_.params.at(k);
    if (ax < 0 || ax >= static_cast<int64_t>(r)) fail("axis out of range");
    return ax;
  }
  void flag_param(size_t k) const {
    if (n_.params.at(k) != 0 && n_.params.at(k) != 1) fail("flag parameter not 0 or 1");
  }

  void ufunc() const {
    const OpInfo& info = op_info(n_.op);
    if (info.kind != OpKind::Ufunc) fail("op is not a ufunc");
    arity(static_cast<size_t>(info.nin));
    if (n_.params.empty() || n_.params.size() > 2) fail("ufunc parameters");
    if (n_.params[0] < 0 || n_.params[0] >= info.nout) fail("output number out of range");
    if (n_.params.size() == 2) {
      const int64_t loop = n_.params[1];
      if (loop != (Graph::kScalarMath | Graph::kScalarLoop) && loop != Graph::kScalarLoop && loop != Graph::kSimdLoop)
        fail("loop flags");
    }
    for (NodeRef a : n_.args) {
      same_shape(a);
      if (a->dtype != n_.args[0]->dtype && n_.op != OpId::ldexp) fail("operands of different dtypes");
    }
  }

  void reduce() const {
    const OpInfo& info = op_info(n_.op);
    if (info.kind != OpKind::Ufunc || info.nin != 2 || info.nout != 1) fail("op is not a binary ufunc");
    arity(1);
    if (n_.params.empty()) fail("reduce parameters");
    flag_param(0);
    const NodeRef a = n_.args[0];
    same_dtype(a);
    SymShape want;
    size_t k = 1;
    for (size_t d = 0; d < a->shape.size(); ++d) {
      if (k < n_.params.size() && n_.params[k] == static_cast<int64_t>(d)) {
        ++k;
        if (n_.params[0]) want.push_back(Dim::fixed(1));
      } else {
        want.push_back(a->shape[d]);
      }
    }
    if (k != n_.params.size()) fail("reduce axes not sorted, unique and in range");
    if (want != n_.shape) fail("reduced shape");
  }

  void view() const {
    arity(1);
    if (n_.params.empty() || n_.params[0] < 0 || n_.params[0] >= kNumViewKinds) fail("view kind");
    const NodeRef a = n_.args[0];
    const size_t r = n_.shape.size(), ra = a->shape.size();
    const ViewKind k = n_.view_kind();
    if (k == ViewKind::Component) {
      nparams(2);
      flag_param(1);
      if (!is_complex(a->dtype) || n_.dtype != real_dtype(a->dtype)) fail("component of a non-complex operand");
      same_shape(a);
      return;
    }
    same_dtype(a);
    switch (k) {
      case ViewKind::Slice:
        nparams(1 + 2 * ra);
        if (r != ra) fail("slice changes the rank");
        for (size_t d = 0; d < r; ++d) {
          const Dim sz = n_.shape[d], src = a->shape[d];
          if (sz.is_static() && src.is_static() &&
              !range_inside(n_.params[1 + 2 * d], n_.params[2 + 2 * d], sz.value(), src.value()))
            fail("slice out of bounds");
        }
        break;
      case ViewKind::Permute: {
        nparams(1 + ra);
        if (r != ra) fail("permute changes the rank");
        std::vector<bool> seen(r, false);
        for (size_t i = 0; i < r; ++i) {
          const int64_t ax = axis_param(1 + i, r);
          if (seen[static_cast<size_t>(ax)]) fail("permute axes repeat");
          seen[static_cast<size_t>(ax)] = true;
          if (n_.shape[i] != a->shape[static_cast<size_t>(ax)]) fail("permuted shape");
        }
        break;
      }
      case ViewKind::Broadcast: {
        nparams(1);
        if (r < ra) fail("broadcast to a lower rank");
        for (size_t d = 0; d < ra; ++d) {
          const Dim s = a->shape[d], t = n_.shape[r - ra + d];
          if (!(s == t || (s.is_static() && s.value() == 1))) fail("broadcast shapes");
        }
        break;
      }
      case ViewKind::Reshape: {
        nparams(1);
        if (all_static(a->shape) && all_static(n_.shape)) {
          int64_t x = 1, y = 1;
          for (Dim d : a->shape) x *= d.value();  // static_count_fits held for both
          for (Dim d : n_.shape) y *= d.value();
          if (x != y) fail("reshape changes the element count");
        }
        break;  // symbolic reshapes: verify()'s index-map rule
      }
      case ViewKind::Strided: {
        nparams(2 + r);
        if (!all_static(a->shape) || !all_static(n_.shape)) fail("strided view of symbolic shapes");
        int64_t total = 1;
        for (Dim d : a->shape) total *= d.value();
        // Lowest and highest flat source index reached, overflow-checked.
        int64_t lo = n_.params[1], hi = n_.params[1];
        bool empty = false, overflow = false;
        for (size_t d = 0; d < r; ++d) {
          const int64_t sz = n_.shape[d].value(), st = n_.params[2 + d];
          int64_t span = 0;
          if (sz == 0) empty = true;
          else overflow |= __builtin_mul_overflow(sz - 1, st, &span);
          overflow |= __builtin_add_overflow(span > 0 ? hi : lo, span, span > 0 ? &hi : &lo);
        }
        if (!empty && (overflow || lo < 0 || hi >= total)) fail("strided view out of bounds");
        break;
      }
      default: fail("view kind");
    }
  }

  void gather() const {
    if (n_.op != OpId::take) fail("gather with another op");
    if (n_.args.size() < 2) fail("gather without an index");
    nparams(1);
    const NodeRef a = n_.args[0], i0 = n_.args[1];
    const int64_t k = static_cast<int64_t>(n_.args.size()) - 1, axis = n_.params[0];
    if (axis < 0 || k > a->ndim() || axis > a->ndim() - k) fail("gather axis");
    same_dtype(a);
    for (size_t j = 1; j < n_.args.size(); ++j)
      if (n_.args[j]->dtype != DType::Int64 || n_.args[j]->shape != i0->shape) fail("gather indices");
    for (int64_t d = axis; d < axis + k; ++d)
      if (!a->shape[static_cast<size_t>(d)].is_static()) fail("gather over a symbolic axis");
    SymShape s(a->shape.begin(), a->shape.begin() + axis);
    s.insert(s.end(), i0->shape.begin(), i0->shape.end());
    s.insert(s.end(), a->shape.begin() + axis + k, a->shape.end());
    if (s != n_.shape) fail("gather shape");
  }

  void write() const {
    arity(3);
    nparams(0);
    const NodeRef base = n_.args[0], region = n_.args[1], value = n_.args[2];
    if (value->dtype != region->dtype || value->shape != region->shape) fail("value does not match the region");
    same_dtype(base);
    same_shape(base);
    NodeRef v = region;
    while (v != base && v->kind == NodeKind::View) v = v->args[0];  // ids decrease: it ends
    if (v != base) fail("write region is not a view chain over the base");
  }

  void prim() const {
    const OpId op = n_.op;
    if (op_info(op).kind != OpKind::Prim) fail("op is not a primitive");
    switch (op) {
      case OpId::where:
        arity(3);
        nparams(0);
        if (n_.args[0]->dtype != DType::Bool) fail("where condition must be bool");
        same_dtype(n_.args[1]);
        same_dtype(n_.args[2]);
        for (NodeRef a : n_.args) same_shape(a);
        break;
      case OpId::argmin:
      case OpId::argmax: {
        arity(1);
        if (n_.params.empty() || n_.params.size() > 2) fail("argmin/argmax parameters");
        dtype(DType::Int64);
        const SymShape& s = n_.args[0]->shape;
        const int64_t ax = axis_param(0, s.size());
        const bool keep = n_.params.size() == 2 && n_.params[1] != 0;
        if (n_.params.size() == 2) flag_param(1);
        SymShape want;
        for (size_t d = 0; d < s.size(); ++d)
          if (d != static_cast<size_t>(ax)) want.push_back(s[d]);
          else if (keep) want.push_back(Dim::fixed(1));
        if (want != n_.shape) fail("argmin/argmax shape");
        break;
      }
      case OpId::cumsum:
      case OpId::cumprod:
        arity(1);
        nparams(1);
        axis_param(0, n_.args[0]->shape.size());
        same_dtype(n_.args[0]);
        same_shape(n_.args[0]);
        break;
      case OpId::sort:
      case OpId::argsort:
        arity(1);
        nparams(2);
        axis_param(0, n_.args[0]->shape.size());
        flag_param(1);
        if (op == OpId::sort) same_dtype(n_.args[0]);
        else dtype(DType::Int64);
        same_shape(n_.args[0]);
        break;
      case OpId::matmul: matmul(); break;
      case OpId::iota:
        arity(2);
        nparams(0);
        rank(1);
        for (NodeRef a : n_.args)
          if (!a->shape.empty() || a->dtype != n_.dtype) fail("iota start and step must be 0-d of the result dtype");
        break;
      case OpId::fill:
        arity(1);
        nparams(0);
        if (!n_.args[0]->shape.empty()) fail("fill value must be 0-d");
        same_dtype(n_.args[0]);
        break;
      case OpId::copy:
        arity(1);
        nparams(1);
        same_dtype(n_.args[0]);
        same_shape(n_.args[0]);
        break;
      default: fail("primitive " + std::string(op_name(op)) + " is not a graph node");
    }
  }

  // params: [] matmul, [1] numpy.dot, [2] numpy.vdot (Note [matmul in traces] in
  // python/npc/csrc/bind_linalg.cpp); the result shape of that product of the operands.
  void matmul() const {
    arity(2);
    if (n_.params.size() > 1 || (n_.params.size() == 1 && (n_.params[0] < 0 || n_.params[0] > 2)))
      fail("matmul parameters");
    const SymShape &a = n_.args[0]->shape, &b = n_.args[1]->shape;
    same_dtype(n_.args[0]);
    same_dtype(n_.args[1]);
    if (a.empty() || b.empty()) fail("matmul of a 0-d operand");
    const bool va = a.size() == 1, vb = b.size() == 1;
    if (a.back() != (vb ? b[0] : b[b.size() - 2])) fail("matmul core dimensions");
    SymShape want;
    if (n_.params.size() == 1 && n_.params[0] == 1 && (a.size() > 2 || b.size() > 2)) {
      // Note [N-D dot in traces]: a.shape[:-1] + b.shape[:-2] + b.shape[-1:].
      want.assign(a.begin(), a.end() - 1);
      if (!vb) {
        want.insert(want.end(), b.begin(), b.end() - 2);
        want.push_back(b.back());
      }
    } else {
      SymShape ba(a.begin(), a.end() - (va ? 1 : 2)), bb(b.begin(), b.end() - (vb ? 1 : 2));
      if (!ba.empty() && !bb.empty() && ba != bb) fail("matmul batch dimensions");
      want = ba.size() >= bb.size() ? ba : bb;
      if (!va) want.push_back(a[a.size() - 2]);
      if (!vb) want.push_back(b.back());
    }
    if (want != n_.shape) fail("matmul shape");
  }

  size_t i_;
  const Node& n_;
  int nsym_, ninputs_, nscalars_;
};

// Whether index operand `x` of a gather along an axis of static size `n` holds values in
// [-n, n) whenever the graph runs (Note [gathers]): through views that keep every element and
// casts to int64 of integers, a constant in range or an input that an index check bounds.
// Fused kernels load without a check, so anything else would read out of bounds.
bool bounded_index(const Graph& g, NodeRef x, int64_t n) {
  for (;;) {
    if (x->kind == NodeKind::View) {
      const ViewKind k = x->view_kind();
      if (k != ViewKind::Reshape && k != ViewKind::Permute && k != ViewKind::Broadcast) return false;
    } else if (x->kind == NodeKind::Cast) {
      if (x->dtype != DType::Int64 || !is_integer(x->args[0]->dtype)) return false;
    } else {
      break;
    }
    x = x->args[0];
  }
  if (x->kind == NodeKind::Const) {
    if (!is_integer(x->dtype)) return false;
    const int64_t v = x->value->cast(x->dtype).cast(DType::Int64).i;  // what the graph computes
    return v >= -n && v < n;
  }
  if (x->kind == NodeKind::Input)
    for (const Graph::IndexCheck& c : g.index_checks)
      if (c.input == x->params[0] && c.extent <= n) return true;
  return false;
}
}  // namespace

uint64_t io::build_fingerprint() {
  static const uint64_t fp = [] {
    uint64_t h = kFnvBasis;
    auto mix = [&](uint64_t v) {
      unsigned char b[8];
      for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
      h = fnv1a(h, b, 8);
    };
    auto mix_text = [&](std::string_view s) {
      mix(s.size());
      h = fnv1a(h, s.data(), s.size());
    };
    mix(kFormatVersion);
    for (std::string_view row : kOpRows) mix_text(row);
    for (std::string_view name : kDTypeNames) mix_text(name);
    for (uint64_t v : {uint64_t(kNumOps), uint64_t(kNumDTypes), uint64_t(kNumNodeKinds), uint64_t(kNumViewKinds),
                       uint64_t(Graph::kScalarMath), uint64_t(Graph::kScalarLoop), uint64_t(Graph::kSimdLoop),
                       uint64_t(sizeof(Node)), uint64_t(sizeof(npc::Scalar)), uint64_t(sizeof(Dim))})
      mix(v);
    return h;
  }();
  return fp;
}

std::string serialize(const Graph& g) {
  if (!g.calls.empty())
    throw ValueError("graph: a graph with host calls (" + g.calls.front().second + ") cannot be serialized");
  io::Writer w("graph");
  w.out.append(kMagic, sizeof(kMagic));
  w.u32(kFormatVersion);
  w.u64(io::build_fingerprint());
  w.u32(static_cast<uint32_t>(g.num_inputs()));
  w.u32(static_cast<uint32_t>(g.num_scalars()));
  w.count(g.symbols().size());
  for (const Symbol& s : g.symbols()) {
    w.i32(s.input);
    w.i32(s.axis);
    w.i64(s.hint);
  }
  w.count(g.nodes().size());
  for (NodeRef n : g.nodes()) {
    if (n->kind == NodeKind::Call) throw ValueError("graph: a graph with host calls cannot be serialized");
    w.u8(static_cast<uint8_t>(n->kind));
    w.u16(static_cast<uint16_t>(n->op));
    w.u8(static_cast<uint8_t>(n->dtype));
    w.count(n->shape.size());
    for (Dim d : n->shape) w.i64(d.raw());
    w.count(n->args.size());
    for (NodeRef a : n->args) w.u32(a->id);
    w.count(n->params.size());
    for (int64_t p : n->params) w.i64(p);
    w.u8(n->value ? 1 : 0);
    if (n->value) w.scalar(*n->value);
  }
  for (NodeRef n : g.nodes()) w.u32(g.evaluations(n));
  w.count(g.evaluation_order().size());
  for (uint32_t id : g.evaluation_order()) w.u32(id);
  w.count(g.outputs.size());
  for (NodeRef o : g.outputs) w.u32(o->id);
  w.count(g.writebacks.size());
  for (const auto& [i, n] : g.writebacks) {
    w.i32(i);
    w.u32(n->id);
  }
  w.count(g.input_writes.size());
  for (const Graph::InputWrite& iw : g.input_writes) {
    w.u32(iw.at);
    w.i32(iw.input);
    w.u32(iw.value->id);
  }
  w.count(g.index_checks.size());
  for (const Graph::IndexCheck& c : g.index_checks) {
    w.i32(c.input);
    w.i64(c.extent);
    w.i64(c.axis);
  }
  w.count(g.owned_inputs.size());
  for (int i : g.owned_inputs) w.i32(i);
  w.count(g.unread_outputs.size());
  for (int k : g.unread_outputs) w.i32(k);
  w.u64(0);
  io::seal(w.out);  // the trailer
  return std::move(w.out);
}

// Note [reading a plan's graphs]
// Loading a kept trace of a cut loop (seidel_2d at size M: 56 graphs of about 10^4 nodes each,
// 40 MB of graph bytes) was mostly rebuilding nodes, and a fifth of that was the intern
// table: every node looked up in a table of pointers, each probe a dereference of a node
// elsewhere in memory, only to find that the node is new. Interning is not needed to rebuild
// a graph that serialize() wrote (its nodes were interned when it was built), only to refuse
// bytes with a node equal to an earlier one, which no built graph has. So deserialize()
// appends the nodes (append_distinct: the hash intern() would compute, no table; the graph
// is finished, Note [intern table of a finished graph] in graph.cpp) and checks afterwards
// that no two are equal: the (hash, id) pairs sorted, equal hashes compared with the intern
// table's own equality (Graph::Eq), which touches memory in order. The bytes accepted are the
// same; of several faults in one graph the error may name another. Each count is bounded by
// the bytes left before a vector is reserved for it.
//
// The rest of a plan load saved on the way (tracer::deserialize_plan, build_variant): a graph
// compiled as itself is not compared with itself again, and build_variant no longer computes
// the structural hash (a walk of every node) for a debug tag when debug output is off.

Graph deserialize(std::string_view bytes) {
  io::Reader r = io::open_body(bytes, kMagic, kFormatVersion, "npc graph bytes", "graph");

  Graph g;
  const uint32_t ninputs = r.u32(), nscalars = r.u32();
  if (ninputs > kMaxInterface || nscalars > kMaxInterface) corrupt("input or scalar count out of range");
  g.num_inputs_ = static_cast<int>(ninputs);
  g.num_scalars_ = static_cast<int>(nscalars);
  const uint32_t nsym = r.count(16, "symbols");
  for (uint32_t k = 0; k < nsym; ++k) {
    const int32_t input = r.i32(), axis = r.i32();
    const int64_t hint = r.i64();
    if (input < 0 || input >= g.num_inputs_ || axis < 0 || axis >= static_cast<int32_t>(kMaxRank) || hint < 0)
      corrupt("symbol " + std::to_string(k) + " out of range");
    if (g.add_symbol(input, axis, hint) != static_cast<int32_t>(k)) corrupt("symbol " + std::to_string(k) + " repeats");
  }

  // Node records are at least 1 + 2 + 1 + 3 * 4 + 1 = 17 bytes.
  const uint32_t nnodes = r.count(17, "nodes");
  // No intern table: the nodes are appended as they come and checked distinct once all are
  // read (Note [reading a plan's graphs]).
  g.order_.reserve(nnodes);
  g.evals_.reserve(nnodes);
  g.eval_order_.reserve(nnodes);
  for (uint32_t i = 0; i < nnodes; ++i) {
    const uint8_t kind = r.u8();
    const uint16_t op = r.u16();
    const uint8_t dtype = r.u8();
    if (kind >= kNumNodeKinds) corrupt("node " + std::to_string(i) + ": kind " + std::to_string(kind) + " out of range");
    if (op > static_cast<uint16_t>(OpId::kCount)) corrupt("node " + std::to_string(i) + ": op out of range");
    if (dtype >= kNumDTypes) corrupt("node " + std::to_string(i) + ": dtype out of range");
    Node n{static_cast<NodeKind>(kind), static_cast<OpId>(op), static_cast<DType>(dtype), {}, {}, {}, std::nullopt};
    const uint32_t rank = r.count(8, "dims");
    if (rank > kMaxRank) corrupt("node " + std::to_string(i) + ": rank " + std::to_string(rank) + " above 64");
    n.shape.reserve(rank);  // each count is bounded by the bytes left: Note [reading a plan's graphs]
    for (uint32_t d = 0; d < rank; ++d) {
      const int64_t raw = r.i64();
      if (raw >= 0) n.shape.push_back(Dim::fixed(raw));
      else if (-(raw + 1) < static_cast<int64_t>(nsym)) n.shape.push_back(Dim::sym(static_cast<int32_t>(-(raw + 1))));
      else corrupt("node " + std::to_string(i) + ": undeclared symbol in its shape");
    }
    const uint32_t nargs = r.count(4, "args");
    n.args.reserve(nargs);
    for (uint32_t k = 0; k < nargs; ++k) {
      const uint32_t id = r.u32();
      if (id >= i) corrupt("node " + std::to_string(i) + ": operand %" + std::to_string(id) + " is not an earlier node");
      n.args.push_back(g.order_[id]);
    }
    const uint32_t nparams = r.count(8, "params");
    n.params.reserve(nparams);
    for (uint32_t k = 0; k < nparams; ++k) n.params.push_back(r.i64());
    const uint8_t has_value = r.u8();
    if (has_value > 1) corrupt("node " + std::to_string(i) + ": value flag");
    if (has_value) n.value = r.scalar();
    NodeChecker(i, n, static_cast<int>(nsym), g.num_inputs_, g.num_scalars_).run();
    g.append_distinct(std::move(n));
  }
  {
    // No node equal to an earlier one (Note [reading a plan's graphs]).
    std::vector<std::pair<size_t, uint32_t>> by_hash(nnodes);
    for (uint32_t i = 0; i < nnodes; ++i) by_hash[i] = {g.order_[i]->hash, i};
    std::sort(by_hash.begin(), by_hash.end());
    uint32_t first = nnodes;
    for (size_t a = 0; a < by_hash.size();) {
      size_t b = a + 1;
      while (b < by_hash.size() && by_hash[b].first == by_hash[a].first) ++b;
      // Ids ascend within a run of equal hashes: each is compared with those before it, the
      // run's first first (a run of equal nodes costs one comparison each).
      for (size_t x = a + 1; x < b; ++x)
        for (size_t y = a; y < x; ++y)
          if (Graph::Eq{}(g.order_[by_hash[y].second], g.order_[by_hash[x].second])) {
            first = std::min(first, by_hash[x].second);
            break;
          }
      a = b;
    }
    if (first < nnodes) corrupt("node " + std::to_string(first) + " repeats an earlier node");
  }

  // Merged evaluations (Note [merged evaluations]): replace what interning counted.
  for (uint32_t i = 0; i < nnodes; ++i) {
    g.evals_[i] = r.u32();
    if (g.evals_[i] == 0) corrupt("node " + std::to_string(i) + " evaluated 0 times");
  }
  const uint32_t norder = r.count(4, "evaluations");
  g.eval_order_.clear();
  g.eval_order_.reserve(norder);
  for (uint32_t k = 0; k < norder; ++k) {
    const uint32_t id = r.u32();
    if (id >= nnodes) corrupt("evaluation of a missing node");
    g.eval_order_.push_back(id);
  }

  auto node = [&](const char* what) {
    const uint32_t id = r.u32();
    if (id >= nnodes) corrupt(std::string(what) + " names a missing node");
    return g.order_[id];
  };
  auto input_number = [&](const char* what) {
    const int32_t k = r.i32();
    if (k < 0 || k >= g.num_inputs_) corrupt(std::string(what) + " names a missing input");
    return k;
  };
  for (uint32_t k = 0, n = r.count(4, "outputs"); k < n; ++k) g.outputs.push_back(node("an output"));
  // The Input nodes by input number (sized by the nodes, not by the input count read).
  std::vector<std::pair<int64_t, NodeRef>> input_nodes;
  for (NodeRef x : g.order_)
    if (x->kind == NodeKind::Input) input_nodes.emplace_back(x->params[0], x);
  std::sort(input_nodes.begin(), input_nodes.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (uint32_t k = 0, n = r.count(8, "write-backs"); k < n; ++k) {
    const int input = input_number("a write-back");
    NodeRef v = node("a write-back");
    // The runtime copies the value into the caller's array, which has the Input's type.
    auto it = std::lower_bound(input_nodes.begin(), input_nodes.end(), input,
                               [](auto& e, int64_t i) { return e.first < i; });
    for (; it != input_nodes.end() && it->first == input; ++it)
      if (it->second->dtype != v->dtype || it->second->shape != v->shape)
        corrupt("write-back of another dtype or shape than its input");
    g.writebacks.emplace_back(input, v);
  }
  for (uint32_t k = 0, n = r.count(12, "input writes"); k < n; ++k) {
    const uint32_t at = r.u32();
    const int input = input_number("an input write");
    NodeRef v = node("an input write");
    if (at > norder || (!g.input_writes.empty() && at < g.input_writes.back().at))
      corrupt("input write out of place");
    g.input_writes.push_back({at, input, v});
  }
  for (uint32_t k = 0, n = r.count(20, "index checks"); k < n; ++k) {
    const int input = input_number("an index check");
    const int64_t extent = r.i64(), axis = r.i64();
    if (extent < 0) corrupt("negative index check extent");
    g.index_checks.push_back({input, extent, axis});
  }
  for (uint32_t k = 0, n = r.count(4, "owned inputs"); k < n; ++k) g.owned_inputs.push_back(input_number("an owned input"));
  for (uint32_t k = 0, n = r.count(4, "unread outputs"); k < n; ++k) {
    const int32_t o = r.i32();
    if (o < 0 || static_cast<size_t>(o) >= g.outputs.size() || (!g.unread_outputs.empty() && o <= g.unread_outputs.back()))
      corrupt("unread output out of range or order");
    g.unread_outputs.push_back(o);
  }
  if (r.pos() != bytes.size() - kTrailerSize) corrupt("trailing bytes");

  for (NodeRef n : g.order_)
    if (n->kind == NodeKind::Gather)
      for (size_t j = 1; j < n->args.size(); ++j)
        if (!bounded_index(g, n->args[j], n->args[0]->shape[static_cast<size_t>(n->params[0]) + j - 1].value()))
          corrupt("node " + std::to_string(n->id) + " (gather): index operand without a bounds check");
  try {
    verify(g, "deserialize");
  } catch (const VerifyError& e) {
    corrupt(e.what());
  }
  g.drop_table();  // a graph read back is done: Note [intern table of a finished graph] in graph.cpp
  const Hash128 d = hash128(bytes.data(), bytes.size());
  g.remember_serialized_digest({d.lo, d.hi});  // Note [digest of a graph's bytes]
  return g;
}

// Note [digest of a graph's bytes]
// The lowered-program cache names a graph by the hash of its serialized bytes (Note
// [lowered-program cache] in src/fusion/lower_cache.cpp). A plan loaded from the disk cache
// holds a loop's segment graphs as bytes, so serializing each graph again only to hash it cost
// a tenth of the load: deserialize() records the hash of the bytes it read, and the cache's
// key uses a recorded hash while it is still the graph's. It is forgotten when the graph
// changes: the builders (intern: a new node or a merged evaluation; add_symbol) forget it, and
// the public interface vectors (outputs, write-backs, input writes, index checks, owned
// inputs, unread outputs, host calls) are fingerprinted when it is recorded and compared when
// it is asked for. The recorded hash is of the bytes read, which serialize() of the graph
// rebuilt from them reproduces (deserialize() accepts only what serialize() writes); were they
// to differ, the graph would only be looked up under another name.
uint64_t Graph::interface_fingerprint() const {
  uint64_t h = 0x2545F4914F6CDD1Dull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  mix(outputs.size());
  for (NodeRef n : outputs) mix(n->id);
  mix(writebacks.size());
  for (const auto& [i, n] : writebacks) mix((static_cast<uint64_t>(static_cast<uint32_t>(i)) << 32) | n->id);
  mix(input_writes.size());
  for (const InputWrite& w : input_writes) {
    mix(w.at);
    mix((static_cast<uint64_t>(static_cast<uint32_t>(w.input)) << 32) | w.value->id);
  }
  mix(index_checks.size());
  for (const IndexCheck& c : index_checks) {
    mix(static_cast<uint64_t>(c.input));
    mix(static_cast<uint64_t>(c.extent));
    mix(static_cast<uint64_t>(c.axis));
  }
  mix(owned_inputs.size());
  for (int k : owned_inputs) mix(static_cast<uint64_t>(k));
  mix(unread_outputs.size());
  for (int k : unread_outputs) mix(static_cast<uint64_t>(k));
  mix(calls.size());
  mix(order_.size());
  mix(eval_order_.size());
  return h;
}

bool Graph::serialized_digest(uint64_t (&out)[2]) const {
  if (!digest_.set || digest_.interface != interface_fingerprint()) return false;
  out[0] = digest_.h[0];
  out[1] = digest_.h[1];
  return true;
}

void Graph::remember_serialized_digest(const uint64_t (&d)[2]) const {
  digest_.h[0] = d[0];
  digest_.h[1] = d[1];
  digest_.interface = interface_fingerprint();
  digest_.set = true;
}

}  // namespace npc::ir
