#pragma once
/// \file graph.hpp
/// The graph IR that npc's tracer records and its backends (eager interpreter, fused
/// kernels) run: SSA values as immutable, hash-consed nodes, each with its dtype and
/// (possibly symbolic) shape. docs/ir.md describes every node kind and its invariants.
///
/// Invariants the verifier (verify()) checks after every pass when NPC_VERIFY=1:
/// - kernels see equal dtypes: every argument of a Ufunc node has the loop's input dtype
///   (promotion already happened; the tracer inserted Cast nodes);
/// - elementwise nodes see equal shapes: arguments of Ufunc/Where are already broadcast to
///   the result shape (the tracer inserted View(Broadcast) nodes);
/// - a node's args were created before it (ids are a topological order).
#include <complex>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "npc/ndarray.hpp"
#include "npc/ops.hpp"

namespace npc::ir {

/// One dimension of a shape: a static size (>= 0) or a symbol (a size that is a runtime
/// parameter of the compiled graph, bound from the inputs' shapes on each call).
class Dim {
 public:
  constexpr Dim() = default;
  /// A static size; `n` >= 0.
  static constexpr Dim fixed(int64_t n) { Dim d; d.v_ = n; return d; }
  /// Symbol number `id` (>= 0) of the graph.
  static constexpr Dim sym(int32_t id) { Dim d; d.v_ = -1 - static_cast<int64_t>(id); return d; }
  constexpr bool is_static() const { return v_ >= 0; }
  /// The size of a static dim (precondition: is_static()).
  constexpr int64_t value() const { return v_; }
  /// The symbol number of a symbolic dim (precondition: !is_static()).
  constexpr int32_t symbol() const { return static_cast<int32_t>(-1 - v_); }
  /// Raw encoding (>= 0 static size, < 0 symbol), for hashing and serialisation.
  constexpr int64_t raw() const { return v_; }
  constexpr bool operator==(const Dim&) const = default;

 private:
  int64_t v_ = 0;
};
using SymShape = std::vector<Dim>;

/// NumPy's name of an op-table row ("add", "sum", "cast").
std::string_view op_name(OpId op);
/// "(3, s0)": shape with symbols spelled s<k>.
std::string sym_shape_str(const SymShape& s);
/// A static SymShape.
SymShape static_shape(std::span<const int64_t> s);
/// The concrete shape of `s` with symbol values `syms`.
Shape concrete_shape(const SymShape& s, std::span<const int64_t> syms);

/// What a node computes. Parameters live in Node::params (integers) and Node::value.
enum class NodeKind : uint8_t {
  Input,   ///< graph input params[0]: an array argument or a captured array (closure/global)
  Scalar,  ///< runtime scalar params[0]: a Python float/complex argument, 0-d, weak (NEP 50)
  SymVal,  ///< the value of symbol params[0] as a 0-d int64 (symbolic sizes used as values)
  Const,   ///< a constant 0-d value (`value`); static Python numbers read by the function
  Ufunc,   ///< op(args...), output params[0] of the op (multi-output ufuncs: one node each)
  Cast,    ///< args[0] cast to `dtype` with NumPy's unsafe rules (explicit promotion casts)
  Reduce,  ///< op.reduce(args[0]); params = [keepdims, axis...]; `value` = initial, if any
  View,    ///< an index map over args[0]: params[0] is a ViewKind, the rest its parameters
  Gather,  ///< a[..., i_0, ..., i_{k-1}, ...]: args = (a, i_0..i_{k-1}) index axes params[0]..params[0]+k-1;
           ///< the i_j are int64 of one (broadcast) shape, already bounds-checked (Note [gathers])
  Write,   ///< functionalized write: args = (base, region, value), see Note [writes]
  Prim,    ///< another primitive of ops.def (where, argmax, cumsum, matmul, iota, fill)
  Call,    ///< opaque host call params[0] of Graph::calls (e.g. numpy.random), a fusion barrier
};
std::string_view kind_name(NodeKind k);

/// The index maps of View nodes. Each is a function from the result's multi-index to the
/// source's multi-index, so views compose and never copy (fusion inlines them).
enum class ViewKind : uint8_t {
  /// params: [start_0, step_0, start_1, step_1, ...] per source axis; src[d] = start_d + i_d * step_d
  /// (step may be negative); the result's shape is the node's shape.
  Slice,
  /// params: [axis_0, axis_1, ...]: result axis i is source axis axes[i] (numpy.transpose).
  Permute,
  /// Broadcast to the node's shape (numpy.broadcast_to): leading new axes, size-1 axes repeated.
  Broadcast,
  /// C-order reshape to the node's shape (element count equal): result linear index = source's.
  Reshape,
  /// Real (params[1] = 0) or imaginary (params[1] = 1) part of a complex source.
  Component,
  /// params: [offset, stride_0, stride_1, ...] in elements over the C-order flattening of a
  /// source of static shape: src_linear = offset + sum_d i_d * stride_d (numpy's as_strided;
  /// what a view of a traced array becomes when it is not one of the kinds above).
  Strided,
};
std::string_view view_kind_name(ViewKind k);

// Note [gathers]
// Advanced indexing of a traced array by integer arrays (`a[i, j]`, `a[:, idx]`, `a[[0, 2]]`,
// mixed with slices and integers) is one Gather node over the consecutive axes it indexes:
// the tracer applies the basic part (slices) as views first and, when the index arrays are
// not adjacent, permutes the indexed axes to the front, exactly NumPy's placement rule. Its
// index operands are int64 and in [-n, n) (negative values count from the end): a constant
// index is checked while tracing; an index that is a graph input (an argument, or a global
// or closure array bound by reference so later changes are seen) is checked before every
// run (Graph::index_checks, so the graph stays fusable); any other traced index goes
// through a host call that checks it (a Call node, so such graphs run eagerly).

// Note [writes]
// Mutation is functionalized: `x[1:3] = v`, `np.add(a, b, out=x)` and `x += y` produce a
// new SSA value, Write(base, region, value), equal to `base` except on `region`, where it
// holds `value`. `region` is a chain of View nodes whose root is `base` (the index map of
// the written elements); `value` has the region's shape and dtype (the tracer casts
// and broadcasts it first). Reads of any alias of the buffer after the write are rebuilt
// from the newest buffer value, so aliasing through views behaves as in eager NumPy. Graph
// inputs that were written have an entry in Graph::writebacks: the runtime copies the final
// value into the caller's array when the graph finishes.

struct Node;
/// Nodes are owned by their Graph and never change after construction.
using NodeRef = const Node*;

// Note [node values]
// Only Const nodes and reductions with an initial value hold a Scalar, 48 bytes that a
// std::optional kept inline in every node (56 of a node's 152). The graphs a loop's first
// call or a plan load keeps hold about 10^6 nodes, all in freshly faulted memory, so the
// value lives behind a pointer: a node is 104 bytes, and the few nodes with a value pay a
// small allocation. NodeValue reads like std::optional<npc::Scalar> (has_value, bool, *, ->)
// and converts to and from it.
class NodeValue {
 public:
  NodeValue() = default;
  NodeValue(std::nullopt_t) {}
  NodeValue(const npc::Scalar& v) : p_(std::make_unique<npc::Scalar>(v)) {}
  NodeValue(const std::optional<npc::Scalar>& v) : p_(v ? std::make_unique<npc::Scalar>(*v) : nullptr) {}
  NodeValue(const NodeValue& o) : p_(o.p_ ? std::make_unique<npc::Scalar>(*o.p_) : nullptr) {}
  NodeValue(NodeValue&&) noexcept = default;
  NodeValue& operator=(const NodeValue& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<npc::Scalar>(*o.p_) : nullptr;
    return *this;
  }
  NodeValue& operator=(NodeValue&&) noexcept = default;
  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return p_ != nullptr; }
  const npc::Scalar& operator*() const { return *p_; }
  const npc::Scalar* operator->() const { return p_.get(); }
  operator std::optional<npc::Scalar>() const { return p_ ? std::optional<npc::Scalar>(*p_) : std::nullopt; }

 private:
  std::unique_ptr<npc::Scalar> p_;
};

/// One SSA value. Construct through Graph's builders, which intern structurally equal nodes
/// (so CSE is free and structural hashing identifies equal graphs).
struct Node {
  NodeKind kind;
  OpId op = OpId::kCount;          ///< Ufunc/Reduce/Prim/Gather: the op-table row
  DType dtype;                     ///< element type of the result
  SymShape shape;                  ///< shape of the result
  std::vector<NodeRef> args;       ///< operands (created earlier)
  std::vector<int64_t> params;     ///< kind-specific integer parameters
  NodeValue value{};               ///< Const value; Reduce initial (Note [node values])
  uint32_t id = 0;                 ///< creation order in the graph: a topological order
  size_t hash = 0;                 ///< structural hash (kind, op, dtype, shape, args' ids, params, value)

  int ndim() const { return static_cast<int>(shape.size()); }
  /// The view kind of a View node.
  ViewKind view_kind() const { return static_cast<ViewKind>(params.at(0)); }
};

/// A host call recorded in a graph (Call nodes): runs on replay and returns one array.
/// The runtime passes the Call node's argument values.
using HostCall = std::function<ndarray(std::span<const ndarray> args)>;

/// One symbol of a graph: a dimension of an input that is a runtime parameter.
struct Symbol {
  int input;        ///< the graph input whose shape binds it
  int axis;         ///< its axis
  int64_t hint;     ///< the size seen while tracing
};

/// A traced program: interned nodes plus its interface (inputs, runtime scalars, symbols,
/// outputs, write-backs). Not copyable (nodes point at each other); move it.
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  // ---- builders: each validates its arguments (TypeError/ValueError as NumPy) and interns.
  /// Graph input number `index` of `dtype` and `shape` (symbols bound with bind_symbol).
  NodeRef input(int index, DType dtype, SymShape shape);
  /// Runtime weak scalar number `index` (dtype: the kind's default, int64/float64/complex128).
  NodeRef scalar(int index, DType dtype);
  /// The value of a symbol as a 0-d int64.
  NodeRef sym_value(int32_t symbol);
  /// A 0-d constant.
  NodeRef constant(const npc::Scalar& v);
  /// Output `out` of ufunc `op`; args must already have the loop's dtypes and the result shape.
  /// `scalar_math`: NumPy computes it with its scalar arithmetic (a Python operator on NumPy
  /// scalars), whose floating-point warnings say "scalar <op>" (bit 1 of params[1]).
  /// `scalar_loop`: where NumPy has two loops for the op, whether it runs its scalar (non-SIMD)
  /// loop (bit 2 of params[1], implied by `scalar_math`) or its SIMD loop (bit 4); unset: the
  /// eager kernels pick by stride (Note [scalar loops] in src/tracer/trace.hpp).
  NodeRef ufunc(OpId op, std::span<const NodeRef> args, DType out_dtype, int out = 0, bool scalar_math = false,
                std::optional<bool> scalar_loop = std::nullopt);
  /// Bits of a Ufunc node's params[1].
  static constexpr int64_t kScalarMath = 1, kScalarLoop = 2, kSimdLoop = 4;
  /// `a` cast to `t` (returns `a` itself when it already has dtype `t`). `of`: the cast of
  /// ufunc `of`'s result into its out= array (params[0]), whose floating-point errors NumPy
  /// reports under the ufunc's name ("overflow encountered in power"), not as "in cast".
  NodeRef cast(NodeRef a, DType t, OpId of = OpId::kCount);
  /// Reduction of `a` with binary ufunc `op` over sorted, normalised `axes`, result `dtype`
  /// (the input is cast to `dtype` first by the caller).
  NodeRef reduce(OpId op, NodeRef a, std::span<const int64_t> axes, bool keepdims, DType dtype,
                 std::optional<npc::Scalar> initial = std::nullopt);
  /// Views (index maps). Each returns `a` itself when the map is the identity.
  NodeRef slice(NodeRef a, std::span<const int64_t> start_step, SymShape shape);
  NodeRef permute(NodeRef a, std::span<const int64_t> axes);
  NodeRef broadcast(NodeRef a, SymShape shape);
  NodeRef reshape(NodeRef a, SymShape shape);
  NodeRef component(NodeRef a, bool imag);
  NodeRef strided(NodeRef a, int64_t offset, std::span<const int64_t> strides, SymShape shape);
  /// take(a, idx, axis) along one axis; idx int64 of any shape.
  NodeRef gather(NodeRef a, NodeRef idx, int64_t axis);
  /// NumPy's advanced indexing by k >= 1 int64 arrays of one shape on the consecutive axes
  /// axis..axis+k-1 of `a`: result shape a.shape[:axis] + idx.shape + a.shape[axis+k:]
  /// (Note [gathers]). The indexed axes must be static.
  NodeRef gather(NodeRef a, std::span<const NodeRef> idx, int64_t axis);
  /// Functionalized write (Note [writes]).
  NodeRef write(NodeRef base, NodeRef region, NodeRef value);
  /// Another primitive (where, argmax, argmin, cumsum, cumprod, matmul, iota, fill, copy).
  NodeRef prim(OpId op, std::span<const NodeRef> args, DType dtype, SymShape shape,
               std::span<const int64_t> params = {});
  /// A host call (Call node) of `fn` on `args`, producing `dtype` and `shape`.
  NodeRef call(HostCall fn, std::string name, std::span<const NodeRef> args, DType dtype, SymShape shape);

  // ---- interface
  /// Declares symbol k = dimension `axis` of input `input` (hint: the size seen while tracing).
  int32_t add_symbol(int input, int axis, int64_t hint);
  const std::vector<Symbol>& symbols() const { return symbols_; }
  std::vector<NodeRef> outputs;                       ///< results, in order
  std::vector<std::pair<int, NodeRef>> writebacks;    ///< (input index, final value)
  /// One write into an input's buffer, in the program's order (Note [writes before a raising
  /// operation] in src/fusion/backend.cpp): after the first `at` evaluations of
  /// evaluation_order(), input `input` holds `value`.
  struct InputWrite {
    uint32_t at;
    int input;
    NodeRef value;
  };
  /// The writes into inputs, in program order (dce keeps their values, also those a later
  /// write replaced unread).
  std::vector<InputWrite> input_writes;
  std::vector<std::pair<HostCall, std::string>> calls;///< host calls of Call nodes
  /// Run-time bounds checks of integer index arrays that are graph inputs (Note [gathers]):
  /// before a run, every value of `inputs[input]` must lie in [-extent, extent).
  struct IndexCheck {
    int input;
    int64_t extent;
    int64_t axis;   ///< the indexed axis, for the IndexError message
    bool operator==(const IndexCheck&) const = default;
  };
  std::vector<IndexCheck> index_checks;
  /// Inputs the graph owns (Note [owned inputs] in src/fusion/lower_group.cpp): arrays nothing
  /// outside the run refers to (the values a cut trace carries from one segment to the next,
  /// Note [loops] in src/tracer/trace_segments.cpp). A backend may overwrite such an input that is
  /// written back while the graph runs, instead of copying it first.
  std::vector<int> owned_inputs;
  /// Outputs (indices into `outputs`, ascending) whose values the caller never reads (Note
  /// [unread outputs] in src/tracer/trace_segments.cpp): the inputs a graph break lists as the
  /// segment's results. A backend returns such an output that is an input as the input array
  /// itself (no copy); any other is computed as an ordinary output.
  std::vector<int> unread_outputs;
  /// Whether output `k` is one of unread_outputs.
  bool output_unread(size_t k) const;
  int num_inputs() const { return num_inputs_; }
  int num_scalars() const { return num_scalars_; }

  /// All live nodes in creation (topological) order.
  const std::vector<NodeRef>& nodes() const { return order_; }
  /// Room for `n` nodes without growing the intern table (a traced segment's node budget, a
  /// copy's node count): Note [node storage].
  void reserve(size_t n);
  /// How many evaluations of the traced program node `n` stands for: interning merges a
  /// repeated computation (two `v * v`) into one node, which NumPy computes (and warns for)
  /// each time (Note [merged evaluations]).
  uint32_t evaluations(NodeRef n) const { return n->id < evals_.size() ? evals_[n->id] : 1; }
  /// The program's evaluations in the order it made them: a node id per evaluation, a node
  /// standing for several (Note [merged evaluations]) at each of their places. Error reports
  /// follow this order, as NumPy's warnings follow the program's.
  const std::vector<uint32_t>& evaluation_order() const { return eval_order_; }
  /// Structural hash of the program (nodes reachable from outputs and write-backs).
  size_t structural_hash() const;
  /// Text form, one SSA value per line: "%3 = add(%1, %2) : float64(s0, 4)".
  std::string str() const;
  /// Whether `o` has the same nodes (in the same order), interface and symbols: the graphs
  /// str() renders equal (decided without rendering them) whose writes into inputs
  /// (input_writes) fall at the same places.
  bool same_structure(const Graph& o) const;

  /// The 128-bit hash64 of the bytes ir::serialize writes for this graph, when one was
  /// recorded and the graph has not changed since (Note [digest of a graph's bytes] in
  /// src/tracer/graph_io.cpp): true and `out` set, else false.
  bool serialized_digest(uint64_t (&out)[2]) const;
  /// Records `d` as that hash of the graph as it is now (ir::deserialize records the hash of
  /// the bytes it read; the lowered-program cache the hash of the bytes it serialized).
  void remember_serialized_digest(const uint64_t (&d)[2]) const;

 private:
  NodeRef intern(Node n);
  static size_t node_hash(const Node& n, size_t position);
  // Appends `n`, known to differ from every node of the graph, without the intern table
  // (Note [intern table of a finished graph] in graph.cpp).
  NodeRef append_distinct(Node&& n);
  // Frees the intern table; intern() rebuilds it when the graph is built on again.
  void drop_table();
  void table_rebuild();
  // A graph with this one's symbols, inputs, calls and index checks holding the nodes whose
  // ids `keep` marks, in order; map[old id] is the copy (null for a node not kept). With
  // `steal`, the kept nodes' contents move into the copy (the caller drops this graph).
  template <class Keep> Graph copy_kept(const Keep& keep, std::vector<NodeRef>& map, bool steal = false) const;
  struct Eq { bool operator()(const Node* a, const Node* b) const; };
  // Note [node storage] (graph.cpp): nodes live in chunks of growing size, not one allocation each.
  Node* store(Node&& n);
  std::vector<std::unique_ptr<Node[]>> chunks_;
  size_t chunk_used_ = 0, chunk_size_ = 0;
  std::vector<NodeRef> order_;
  // The intern table: open addressing with linear probing over a power-of-two array (null:
  // empty), at most half full; nodes are never removed (Note [node storage]).
  std::vector<const Node*> table_;
  size_t table_used_ = 0;
  const Node* find_equal(const Node& n) const;
  void table_insert(const Node* p);
  void table_grow(size_t min_capacity);
  std::vector<uint32_t> evals_;  ///< per node id: evaluations() (Note [merged evaluations])
  std::vector<uint32_t> eval_order_;  ///< evaluation_order()
  std::vector<Symbol> symbols_;
  int num_inputs_ = 0, num_scalars_ = 0;
  // serialized_digest(): the hash, and what the graph's public interface vectors held then
  // (a builder forgets the hash: forget_digest()).
  struct SerializedDigest {
    uint64_t h[2] = {0, 0};
    uint64_t interface = 0;
    bool set = false;
  };
  mutable SerializedDigest digest_;
  void forget_digest() { digest_.set = false; }
  uint64_t interface_fingerprint() const;
  friend Graph dce(Graph&&);
  friend Graph subgraph(const Graph&, std::span<const NodeRef>);
  // Rebuilds nodes (append_distinct, then a check that no two are equal: Note [reading a
  // plan's graphs] in src/tracer/graph_io.cpp) and restores the merged-evaluation data and symbols as
  // they were (Note [graph serialization] in src/tracer/graph_io.cpp).
  friend Graph deserialize(std::string_view bytes);
};

/// Thrown by verify(): names the pass and the offending node.
struct VerifyError : std::runtime_error { using std::runtime_error::runtime_error; };

/// Checks every invariant above (dtypes, shapes, operand order, view parameters); throws
/// VerifyError naming `after_pass` and the node.
void verify(const Graph& g, std::string_view after_pass);
/// True when NPC_VERIFY=1 is set in the environment (read once).
bool verify_enabled();

/// A named pass: a function from graph to graph (run_pass verifies after it when enabled).
using Pass = Graph (*)(Graph&&);
/// Whether evaluating `n` may raise an exception NumPy raises whether or not the result is
/// used (an integer power whose exponent may be negative), or acts when run (a host call:
/// a numpy.random draw moves its generator): such a node is live as a check (Note [checks
/// of dead code] in src/tracer/graph.cpp).
bool raises_when_run(NodeRef n);
/// Dead-code elimination: keeps the nodes reachable from outputs, write-backs and checks
/// (raises_when_run), renumbered in the same order (CSE is free: builders intern).
Graph dce(Graph&& g);
/// A new graph with the same inputs, scalars and symbols whose outputs are `outputs` (nodes
/// of `g`), holding only the nodes they depend on and no write-backs (what npc's accuracy
/// check compiles when it bisects a mismatch to the smallest failing subgraph).
Graph subgraph(const Graph& g, std::span<const NodeRef> outputs);
/// Runs `pass` and, when verification is enabled, verifies its result.
Graph run_pass(Graph&& g, Pass pass, std::string_view name);

/// The exact binary form of `g` (Note [graph serialization] in src/tracer/graph_io.cpp): nodes in
/// id order, every interface field, Scalars bit for bit; bound to this build of npc (its op table
/// and node layout). ValueError for a graph with host calls (Call nodes), which cannot be stored.
std::string serialize(const Graph& g);
/// The graph serialize() wrote, its nodes rebuilt as the builders' interning made them (a node
/// equal to an earlier one is refused): deserialize(serialize(g))
/// has g's str(), structural_hash(), same_structure() and interface, and serializes to the same
/// bytes. ValueError for bytes that are not such a graph of this build (another version or build,
/// truncated, corrupted, or hostile: every count, id, enum and parameter later code reads is
/// checked, and the result passes verify()); never reads out of bounds.
Graph deserialize(std::string_view bytes);

/// Arguments of one run of a compiled graph.
struct RunArgs {
  std::span<const ndarray> inputs;     ///< one per Graph input (their shapes bind the symbols)
  std::span<const npc::Scalar> scalars;///< one per runtime scalar
};

/// ValueError unless `args` fit `g`'s interface: one array per input, of the dtype, rank and
/// sizes of its Input node (static sizes, and one size per symbol), concrete, and at least
/// num_scalars() scalars. Both backends' executables run it first (kernels index their
/// inputs by the graph's shapes).
void check_run_args(const Graph& g, const RunArgs& args);
/// The same, given the graph's Input nodes (an executable that runs often lists them once).
void check_run_args(const Graph& g, const RunArgs& args, std::span<const NodeRef> input_nodes);
/// Raises IndexError (NumPy's "index 5 is out of bounds for axis 0 with size 3") when an
/// input named by `g.index_checks` holds an out-of-range index. Every executable runs it first.
void check_index_inputs(const Graph& g, std::span<const ndarray> inputs);
/// Raises that IndexError when integer array `x` holds a value outside [-extent, extent).
void check_index_values(const ndarray& x, int64_t extent, int64_t axis);

/// Runs `g` op by op with the eager kernels of src/ops (backend="eager"), performs the
/// write-backs into `args.inputs`, and returns the outputs.
std::vector<ndarray> interpret(const Graph& g, const RunArgs& args);
/// Called by interpret() after each node ran, with its value and its arguments' values
/// (floating-point error attribution, docs/fusion.md). Returning true stops the run there:
/// interpret() writes into `args.inputs` what they held at the node's first evaluation (the
/// writes of Graph::input_writes made before it, and the out= of the op it belongs to, whose
/// nodes run first) and throws Stopped.
using NodeObserver = std::function<bool(NodeRef n, const ndarray& value, std::span<const ndarray> args)>;
/// What interpret() throws when its observer stopped it at `node`.
struct Stopped : std::exception {
  NodeRef node;
  explicit Stopped(NodeRef n) : node(n) {}
  const char* what() const noexcept override { return "npc: graph run stopped"; }
};
/// interpret() calling `after_node` after each node. A Call node whose entry in `call_values`
/// (indexed by node id) holds a value takes it instead of calling the host again: the values an
/// earlier run with the same inputs got (Note [fp error attribution] in src/fusion/backend.cpp).
std::vector<ndarray> interpret(const Graph& g, const RunArgs& args, const NodeObserver& after_node,
                               std::span<const std::optional<ndarray>> call_values = {});
/// The value of computing node `n` (Ufunc, Reduce, Call, or a Prim: fill, iota, where,
/// matmul, argmin/argmax, cumsum/cumprod, sort/argsort) from its operands' values `ops`,
/// with npc's eager ops; `shape` is its concrete shape. Both backends run nodes through it
/// (the fused backend for its library calls). nullopt for another kind or primitive.
std::optional<ndarray> run_node_eagerly(const Graph& g, NodeRef n, std::span<const ndarray> ops, const Shape& shape);
/// The value of View node `n` (concrete result shape `shape`) over the concrete array `src`:
/// a view sharing its memory (a Reshape or Strided view of a non-contiguous `src` copies).
ndarray apply_view(NodeRef n, const ndarray& src, const Shape& shape);

/// A compiled graph: runs it on arguments.
using Executable = std::function<std::vector<ndarray>(const RunArgs& args)>;
/// A backend turns a verified graph into an executable (or throws; the caller logs and
/// falls back to the eager interpreter, so a user's program never fails because codegen did).
using Backend = std::function<Executable(const Graph& g)>;
/// Registers backend `name` ("fused" is registered by src/fusion; "eager" is built in).
void register_backend(std::string name, Backend backend);
/// The backend called `name`, or null when none is registered.
const Backend* find_backend(std::string_view name);

}  // namespace npc::ir
