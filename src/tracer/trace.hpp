#pragma once
// Recording: the trace context that the op hooks write into, buffers (aliasing and
// functionalized writes), graph breaks (segments) and runtime scalars.
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "npc/graph.hpp"

namespace npc::tracer {

// Note [buffers]
// Each traced array is a view of a Buffer: one region of memory of the traced program
// (an input array, the result of an op, a copy). A traced ndarray's fabricated geometry
// (offset, strides) is its position in a C-contiguous layout of its buffer, exactly like
// NumPy's memory model, so any strided view of it is expressible (ViewKind::Strided), and
// realizing it at a graph break gives a true view of the buffer's concrete array. The
// buffer's `current` node advances with each write; a traced array's node is its view
// chain applied to the current value, rebuilt when the buffer's version changed.
struct Buffer {
  ir::NodeRef current = nullptr;
  ir::NodeRef initial = nullptr;   // the Input node it started the segment as (or null)
  int input = -1;                  // segment input index, when it is an input
  int64_t version = 0;
  DType dtype;
  ir::SymShape shape;
  Shape hint;                      // concrete sizes seen while tracing
};

// One step of a view chain (a View node's parameters).
struct ViewStep {
  ir::ViewKind kind;
  std::vector<int64_t> params;     // without the leading kind
  ir::SymShape shape;
};

// What ndarray::trace() points at.
struct TracedValue {
  std::shared_ptr<Buffer> buf;
  std::vector<ViewStep> chain;
  ir::SymShape shape;
  DType dtype;
  uint64_t ctx_id = 0;
  // cache of node() for buf->version
  int64_t version = -1;
  ir::NodeRef node = nullptr;
  // A 0-d result that eager code returns as a NumPy scalar (Note [scalar results]).
  bool scalar = false;
};

// Note [scalar results]
// Eager NumPy returns some 0-d results as NumPy scalars (ufuncs, reductions, `x[0]` of a
// vector) and others as 0-d arrays (`where`, `astype`, `zeros(())`, views, `tensordot`).
// While tracing both are traced 0-d arrays: the bindings mark those that eager code would
// have unwrapped, and npc.compile returns exactly those as NumPy scalars. A marked value
// that a graph break realizes is an ordinary 0-d array afterwards: the context remembers
// that array object, so it still counts as a scalar result until tracing ends.
void mark_scalar(const ndarray& a);
bool is_scalar_result(const ndarray& a);

// Context::adopt_view on the current context (Note [NumPy views of inputs] in trace_nodes.cpp):
// the traced view that stands for NumPy result `a`, or nothing.
std::optional<ndarray> adopt_view(const ndarray& a);

// True when `a` is bound as a strided view of its covering run (Note [strided inputs] in
// trace_inputs.cpp): neither C- nor F-contiguous, not empty, strides multiples of the itemsize.
bool strided_input(const ndarray& a);
// The C-contiguous array over the memory of strided `a` (Note [strided inputs] in
// trace_inputs.cpp): the box of rows it slices when that fits in the valid memory around it
// (`valid_before` bytes before its lowest element, `valid_after` past its highest; -1: what
// a's storage holds), else the 1-D run from its lowest to its highest element.
ndarray covering_view(const ndarray& a, int64_t valid_before = -1, int64_t valid_after = -1);

// Context::specialise on the current context, if any (the Python shape/size/strides getters).
void specialise_shape(const ndarray& a);

// Why a segment ended.
struct BreakInfo {
  std::string reason;
};

// A segment's graph with the executable that ran it (kept by a plan, Note [loops] in
// trace_segments.cpp).
struct SegmentRun {
  std::shared_ptr<const ir::Graph> graph;
  ir::Executable exe;
};

// Note [results that view inputs]
// NumPy's results that are views of an argument (`a[1:]`, `a.T`, `a.reshape(...)`, `a[None]`)
// share its memory, and an argument returned as it is (`return a`, `np.add(a, 1, out=o)`) is
// the caller's very object. A traced array whose buffer is an input of the trace is such a
// view: its memory is the input's, whatever the graph wrote into it (writes are written
// back). So npc.compile does not take such a result from the graph: it asks for its
// OutputView, the view chain from the input's bound array (a C-contiguous layout, Note
// [buffers]) to the result, and applies that chain to the array bound on each call, with
// that call's sizes (symbolic dims are read from the bound inputs' shapes). The Python layer
// then makes it a view of the caller's own argument (python/npc/compiler/_results.py).
struct OutputView {
  int input = -1;                          // index among the trace's top inputs
  std::vector<ViewStep> chain;             // applied to that input's bound array
  std::vector<std::pair<int, int>> symbols;  // symbol k's (top input, axis)
  std::optional<ndarray> fixed;            // a concrete view realized at a break (this call only)
  Strides traced_strides;                  // the result's strides as traced (those of its size-1 axes stay)
  // The view on `inputs` (the arrays bound to the top inputs on this call).
  ndarray apply(std::span<const ndarray> inputs) const;
  // The chain applied to `base` (a C-contiguous array standing for the buffer the chain
  // starts from), symbolic sizes read from `inputs` (Note [results that view each other]).
  ndarray apply_to(ndarray base, std::span<const ndarray> inputs) const;
};

// Runs a finished segment graph; returns its outputs (the hook the compile layer installs:
// backend selection, caching of executables by structural hash, statistics).
// `reusable`: the graph is a segment of a function with graph breaks or of a cut trace; the
// runner may keep it (and its executable) to reuse for structurally equal segments of later
// calls. `keep`, when not null, receives the graph and executable it ran (a plan's step).
using SegmentRunner = std::function<std::vector<ndarray>(const std::shared_ptr<ir::Graph>& g, const std::vector<ndarray>& inputs,
                                                         const std::vector<Scalar>& scalars, bool reusable,
                                                         SegmentRun* keep)>;

// Note [loops] (src/tracer/trace_segments.cpp): a trace cut into segments at a node budget,
// replayed without Python as this list of steps when it has no graph break.
struct Plan {
  // Where a step's input comes from: kind 0, the call's input `index` (an argument or a
  // captured/constant array, numbered like a whole graph's inputs); kind 1, output `index`
  // of step `step`.
  struct Source {
    int kind;
    int index;
    int step;
  };
  struct Step {
    SegmentRun run;
    std::vector<Source> inputs;
    std::vector<Scalar> scalars;   // the segment's own runtime scalars, after the floats
    std::vector<std::pair<int, int>> release;  // (step, output) nothing reads after this step
  };
  std::vector<Step> steps;
  int num_inputs = 0;
  // Whether `a` shares its storage with one of `others` (a step's output that is a view of
  // one of its inputs is copied before a later step may own it).
  static bool shares_storage(const ndarray& a, std::span<const ndarray> others) {
    for (const ndarray& o : others)
      if (o.storage() && o.storage() == a.storage()) return true;
    return false;
  }
  // Runs the steps: `inputs` as in a whole graph's replay, `floats` the float arguments;
  // `after_step` (may be null) runs after each step (error reports). Returns the last
  // step's outputs.
  std::vector<ndarray> run(std::span<const ndarray> inputs, const std::vector<Scalar>& floats,
                           const std::function<std::vector<ndarray>(const ir::Executable&, const ir::RunArgs&)>&
                               run_step) const;
};

// Note [plan serialization] in plan_io.cpp: the exact binary form of plan `p`, each distinct
// step graph stored once; bound to this build of npc. ValueError for a plan with a graph that
// cannot be serialized (host calls: ir::serialize's error) or whose steps are inconsistent.
std::string serialize(const Plan& p);
// Compiles a loaded plan's graph `g`: returns `g`, or a graph of the same structure and
// interface compiled earlier, with its executable. `structural_hash` is g->structural_hash(),
// computed as the graph was read (Note [graphs read on two threads] in plan_io.cpp).
using PlanCompiler = std::function<SegmentRun(std::shared_ptr<ir::Graph> g, size_t structural_hash)>;
// The plan serialize() wrote, each distinct graph compiled once through `compile`. ValueError
// for bytes that are not such a plan of this build (truncated, corrupted or hostile: every
// count, index, source, scalar and release is checked before anything compiles or runs).
Plan deserialize_plan(std::string_view bytes, const PlanCompiler& compile);

// The recording state of one trace on this thread.
class Context {
 public:
  Context();
  ~Context();
  uint64_t id() const { return id_; }

  // ---- inputs of the traced function
  // A traced stand-in for argument `a`; `dynamic` lists the axes that are symbolic.
  // With `f_order`, an F-contiguous (not C-contiguous) `a` of rank >= 2 is bound as its
  // C-contiguous transpose and traced as a transpose of that (Note [F-ordered inputs] in
  // trace_inputs.cpp): the caller binds `a` reversed (a.T) on replays. With `f_order`, a strided
  // `a` is bound as covering_view(a) (Note [strided inputs] in trace_inputs.cpp): the caller binds
  // that on replays.
  ndarray add_input(const ndarray& a, const std::vector<int>& dynamic, bool f_order = false,
                    int64_t valid_before = -1, int64_t valid_after = -1);
  // Registers runtime scalar k: weak float operands equal to `sentinel` become Scalar nodes.
  void add_scalar(double sentinel, double value);
  // Registers runtime scalar k for a Python int argument (Note [runtime ints] in
  // trace_nodes.cpp): `value` is its Int64 or UInt64 value; returns k.
  int add_runtime_int(const Scalar& value);
  // Records `a` (a weak 0-d operand holding runtime int k's value, made by the ufunc operand
  // conversion) so that node_of_operand makes it Scalar node k.
  void note_runtime_operand(const ndarray& a, int k);
  // The runtime ints with an operand conversion that did not become a Scalar node (an eager
  // computation with the value): they must be static.
  std::vector<int> unconsumed_runtime_ints() const;
  // Records that weak operand `a`, if a runtime int's, meets loop dtype `t` (its range class
  // only needs the bounds of the dtypes it meets: Note [runtime ints]); `node`, its Scalar
  // node, becomes a float64 first where `t` is another float or complex dtype (NumPy converts a
  // Python int to a C double, then to `t`: big ints round twice).
  void runtime_operand_meets(const ndarray& a, DType t, ir::NodeRef& node);
  // For each runtime int that became a Scalar node: (k, the loop dtypes it met, or none
  // where one of its nodes met no recorded loop).
  std::vector<std::pair<int, std::vector<int>>> runtime_int_dtypes() const;
  // Equality constraints between symbolic dims that tracing assumed (broadcasting):
  // (input, axis) pairs, or (input, axis) == size (other.first = -1).
  struct Constraint { int in_a, ax_a, in_b, ax_b; int64_t size; };
  const std::vector<Constraint>& constraints() const { return constraints_; }
  // Specialises traced `a`'s symbolic dims to the sizes seen (Note [shapes read in Python] in
  // trace_inputs.cpp).
  void specialise(const ndarray& a);
  // `value` with its trailing dims renamed to `target`'s where tracing saw equal sizes
  // (recorded as constraints; Note [specialised symbols] in trace_nodes.cpp); dims that differ
  // in size stay as they are.
  ir::NodeRef align_dims(ir::NodeRef value, const ir::SymShape& target);

  // ---- recording (called by the hooks)
  ir::NodeRef node_of(const ndarray& a);           // traced, or a concrete array bound as an input/constant
  // Note [NumPy views of inputs] in trace_nodes.cpp: concrete `a` (a NumPy result) as a traced
  // strided view of the segment input whose bound memory holds it, after a break; else nothing.
  std::optional<ndarray> adopt_view(const ndarray& a);
  // Note [distinct buffers] in trace_segments.cpp.
  void separate_buffers(const std::vector<Buffer*>& bufs);
  ir::NodeRef node_of_operand(const ndarray& a, bool weak);
  // A Const node of `v`; a value computed from a runtime scalar's marker throws StaticScalar.
  ir::NodeRef constant(const Scalar& v);
  // Concrete value `v` as an operand: after a graph break a runtime Scalar node of the
  // segment (Note [values after a break] in trace_nodes.cpp), before it (and for bools) a
  // Const node.
  ir::NodeRef concrete_value(const Scalar& v);
  ndarray new_value(ir::NodeRef n, Shape hint);    // a fresh buffer holding n
  // A traced alias of concrete array `a` (Note [writes into captured arrays] in trace_nodes.cpp):
  // `a` becomes a graph input bound by reference, so writes through the alias are
  // functionalized and written back into `a` when the graph ran.
  ndarray traced_alias(const ndarray& a);
  // A run-time bounds check of graph input `input` as an index of an axis of size `extent`.
  void add_index_check(int input, int64_t extent, int64_t axis);
  // Writes `value` into traced `dst`. `op_at`: for the out= of an op, the number of
  // evaluations recorded before the op (>= 0): NumPy's op stores out= before it checks its
  // floating-point errors, so the write comes with the op's evaluation (Note [writes before a
  // raising operation] in src/fusion/backend.cpp).
  void write(const ndarray& dst, ir::NodeRef value, int64_t op_at = -1);
  // The number of evaluations recorded in the segment so far (write's `op_at`).
  int64_t evaluations() const { return static_cast<int64_t>(graph_->evaluation_order().size()); }
  std::shared_ptr<void> view(const ndarray& src, const ndarray& view);
  ir::SymShape broadcast(const std::vector<ir::SymShape>& shapes, const std::vector<Shape>& hints, Shape& hint_out);
  ir::Graph& graph() { return *graph_; }

  // ---- segments
  // Runs the pending segment (graph break: `reason`) and rebinds live buffers to its results.
  void break_graph(const std::string& reason);
  // Note [loops] in trace_segments.cpp: a segment longer than `n` nodes is cut (0: never). Hooks
  // call maybe_cut() where an operation starts, when no node of it is held.
  void set_node_budget(size_t n) { node_budget_ = n; }
  void maybe_cut() {
    if (node_budget_ && graph_->nodes().size() - segment_start_size_ > node_budget_) cut_aligned();
  }
  int num_cuts() const { return cuts_; }
  // The plan of a trace that was cut and had no graph break (valid after finish()), else null.
  std::shared_ptr<Plan> take_plan();
  // The arrays bound as inputs of the whole trace (a plan's inputs; bound_inputs() when the
  // trace is one graph).
  const std::vector<ndarray>& top_inputs() const { return top_; }
  // Segments found in the segment cache (their executable reused, nothing lowered).
  int segments_reused = 0;
  // The concrete value of traced `a` (runs the pending segment).
  ndarray realize(const ndarray& a);
  // Whether concrete `a` is a scalar result realized at a break (Note [scalar results]).
  bool realized_scalar(const ndarray& a) const;
  // Marks concrete 0-d `a` (an eager result while tracing) as a scalar result.
  void add_realized_scalar(const ndarray& a);
  // Note [results that view inputs]: how result `a` views a top input of the trace (a traced
  // array on an input buffer, or after a break a concrete view of an input's bound array),
  // or nothing.
  std::optional<OutputView> output_view(const ndarray& a) const;
  // Note [results that view each other] in trace_segments.cpp: traced `a`'s buffer as a whole
  // (a traced C-contiguous array) and `a` as a view of it (OutputView::apply_to), when `a` is
  // traced here and views no top input; else nothing. buffer_id: the buffer's identity (0: none).
  std::optional<std::pair<ndarray, OutputView>> buffer_view(const ndarray& a) const;
  uintptr_t buffer_id(const ndarray& a) const;
  // Ends tracing: the outputs' nodes become the last segment's outputs. With no break, the
  // whole program is one graph, returned for caching (with the inputs it binds).
  std::vector<ndarray> finish(const std::vector<ndarray>& outputs);
  // The graph of a trace without breaks (valid after finish()).
  std::shared_ptr<ir::Graph> take_graph() { return std::move(final_graph_); }
  const std::vector<ndarray>& bound_inputs() const { return bound_; }
  int num_breaks() const { return static_cast<int>(breaks_.size()); }
  const std::vector<std::string>& breaks() const { return breaks_; }
  // Each segment's graph after the passes (rendered by str() only when asked: a loop's
  // segments are many, and rendering them costs more than tracing them).
  std::vector<std::shared_ptr<const ir::Graph>> segment_graphs;
  // str() of each segment as traced, before the passes, when keep_raw_graphs is set (debug dumps).
  std::vector<std::string> segment_graphs_raw;
  bool keep_raw_graphs = false;
  std::vector<int> ops_per_graph;
  SegmentRunner runner;
  // Reports the floating-point errors pending on the calling thread (the binding layer's
  // report; Note [segments in the background] in trace_segments.cpp).
  std::function<void()> report_fp;
  // Runs on the tracing thread before a segment starts in the background (the binding layer
  // reads the backend's settings there).
  std::function<void()> before_background;
  // Waits for the segment running in the background, if any, and binds its results; its
  // exception, if it raised, is rethrown (`rethrow`) or dropped.
  void settle(bool rethrow = true);
  // Note [undoing an abandoned trace's writes] in trace_segments.cpp: with `keep_undo` set,
  // each segment saves what it is about to overwrite in arrays the trace does not own;
  // undo_writes() puts it back (the trace is abandoned and traced again).
  bool keep_undo = false;
  void undo_writes();
  // Note [views of symbolic sizes] in trace_nodes.cpp: with `static_views` set, a view that
  // needs the sizes of symbolic dims throws StaticShape instead of breaking the graph, and
  // static_dims() lists the (input, axis) of those dims (Note [dims made static] in
  // python/npc/compiler/_api.py).
  bool static_views = false;
  const std::vector<std::pair<int, int>>& static_dims() const { return static_dims_; }
  // Set while a subscript with a slice bound (`v[:3]`, `v[-2:]`) makes its view (Note [slices
  // that cover the axis] in trace_nodes.cpp).
  bool bounded_view = false;
  std::vector<Scalar> scalar_values;        // actual values of the runtime scalars
  int num_user_inputs = 0;
  // The segment input a traced argument (from add_input) is bound to.
  int input_index(const ndarray& traced_arg) const;                  // inputs bound by add_input (the rest: captured arrays)

 private:
  ir::NodeRef value_node(TracedValue& tv);
  // `tv`'s view chain (with this segment's sizes) as an OutputView of result `a` (no input set).
  OutputView chain_of(const TracedValue& tv, const ndarray& a) const;
  // `s` in the current segment: after a break, the first segment's symbols are its sizes
  // (Note [symbols after a break] in trace_nodes.cpp).
  ir::SymShape segment_shape(const ir::SymShape& s) const;
  std::shared_ptr<Buffer> buffer_for_input(const ndarray& a, ir::SymShape shape);
  // The segment input whose bound array's memory holds concrete `a` as a strided view, and
  // that view's {offset, strides...} in elements (Note [NumPy views of inputs] in trace_nodes.cpp).
  std::optional<std::pair<size_t, std::vector<int64_t>>> inside_input(const ndarray& a) const;
  // A traced C-contiguous array standing for input array `a` bound to buffer `b`.
  ndarray traced_input(const ndarray& a, std::shared_ptr<Buffer> b);
  // `unread`: the outputs whose values nobody reads (Note [unread outputs] in trace_segments.cpp);
  // `background`: the step may run on another thread (Note [segments in the background]).
  std::vector<ndarray> run_segment(std::vector<ir::NodeRef> outputs, std::vector<int> unread = {},
                                   bool background = false);
  // Note [segments in the background] in trace_segments.cpp: the step running on another
  // thread, and the results of the step that ran last there (bound by settle()).
  struct BackgroundStep;
  std::unique_ptr<BackgroundStep> background_;
  static bool background_segments();
  std::vector<ndarray> run_in_background(std::shared_ptr<ir::Graph> traced, std::vector<Scalar> scalars);
  void start_segment();
  // Ends the segment and continues on a new graph: a graph break (`real`, recorded with
  // `reason`) or a cut at the node budget (Note [loops] in trace_segments.cpp).
  void end_segment(bool real, const std::string& reason);
  void cut() { end_segment(false, {}); }
  // Note [failed segments] in trace_segments.cpp: the error a segment's run raised, raised
  // again by every later realization or run of this trace.
  std::exception_ptr failed_;
  void check_failed() const {
    if (failed_) std::rethrow_exception(failed_);
  }
  // Records a graph break without ending the segment (the checks and reason of break_graph).
  void note_break(const std::string& why);
  // Note [reads of unchanged inputs] in trace_segments.cpp: `b` computed from the segment's
  // inputs without running anything pending, bound as an input of the segment; false when
  // that does not apply.
  bool bind_from_inputs(const std::shared_ptr<Buffer>& b);
  size_t benign_checked_ = 0;  // nodes of the segment known to be views, copies and leaves
  bool benign_ = true;
  // Note [aligned cuts] in trace_segments.cpp: cuts where the first one was in the program, when it
  // gets there.
  void cut_aligned();
  bool content_boundary(size_t size) const;  // Note [content-defined cuts] in trace_segments.cpp
  uint64_t cut_position_ = 0, cut_line_ = 0;
  // Binds concrete `a` as input `b->input` of the segment, from outside the trace.
  void bind_top(const ndarray& a);

  uint64_t id_;
  std::unique_ptr<ir::Graph> graph_;
  std::shared_ptr<ir::Graph> final_graph_;
  std::shared_ptr<ir::Graph> last_graph_;                 // the segment run last (after the passes)
  std::vector<ndarray> bound_;                            // arrays bound to the segment's inputs
  std::vector<std::shared_ptr<Buffer>> input_buffers_;    // kept alive: written inputs write back
  std::vector<std::weak_ptr<Buffer>> all_buffers_;
  std::unordered_map<std::string, std::shared_ptr<Buffer>> bound_by_key_;
  std::vector<std::pair<double, int>> sentinels_;
  // Note [runtime ints] in trace_nodes.cpp: each operand conversion of a runtime int (keyed by
  // its 0-d array's data, which the entry keeps alive), its k and whether it became a node.
  struct RuntimeOperand { ndarray array; int k; bool consumed; std::vector<DType> met; };
  std::unordered_map<const void*, RuntimeOperand> runtime_operands_;
  std::vector<Constraint> constraints_;
  std::vector<bool> specialised_;                         // symbols constrained to their hint
  std::vector<std::pair<int, int>> static_dims_;           // Note [views of symbolic sizes]
  std::vector<std::pair<int, int>> sym_origin_;           // symbol -> (user input, axis) of segment 0
  std::vector<int64_t> sym_sizes_;                        // the first segment's symbols' sizes, after a break
  std::vector<std::string> breaks_;
  size_t segment_start_size_ = 0;  // nodes of a segment right after it started
  size_t node_budget_ = 0;         // Note [loops] in trace_segments.cpp
  int cuts_ = 0;
  // Note [loops] in trace_segments.cpp: the trace as a plan: the inputs from outside, where each
  // input of the current segment comes from, the segments run so far.
  std::vector<ndarray> top_;
  std::vector<Plan::Source> bound_src_;
  std::vector<std::pair<ndarray, ndarray>> undo_;  // (array a segment writes, its data before)
  void save_before_writes(const ir::Graph& g);
  std::shared_ptr<Plan> plan_ = std::make_shared<Plan>();
  // Values of the segment's own runtime scalars (Note [values after a break] in trace_nodes.cpp),
  // numbered after the function's float arguments.
  std::vector<Scalar> segment_scalars_;
  // Scalar results realized in place: the array object and its value (which keeps the
  // storage alive, so that another object at the same address cannot pass for it).
  std::vector<std::pair<const ndarray*, ndarray>> realized_scalars_;
};

// The active context on this thread (null outside tracing).
Context* current();
// Sets the active context (Python pairs it in try/finally); null deactivates.
void set_current(Context* c);
// RAII: makes `c` current.
class Scope {
 public:
  explicit Scope(Context* c);
  ~Scope();

 private:
  Context* prev_;
};
// RAII: suspends tracing (eager code while realizing).
class Suspend {
 public:
  Suspend();
  ~Suspend();

 private:
  Context* prev_;
};

// Installs the hooks into src/core and src/ops (idempotent).
void install_hooks();

// Thrown (with fullgraph) at a graph break; also what Python's GraphBreakError maps from.
struct GraphBreak : std::runtime_error { using std::runtime_error::runtime_error; };
// A runtime-scalar argument was used as a Python value: retrace with it static (Note [runtime
// scalars] in trace_nodes.cpp).
struct StaticScalar : std::runtime_error { using std::runtime_error::runtime_error; };
// A view needed the sizes of symbolic dims while Context::static_views was set: retrace with
// the dims Context::static_dims() lists static.
struct StaticShape : std::runtime_error { using std::runtime_error::runtime_error; };
// The operand value of a runtime float argument (its `_RuntimeFloat` object's marker NaN, as
// bound by the ufunc operand conversion): the only value that becomes a Scalar node.
double runtime_operand(double marker);
// When set, a graph break throws GraphBreak instead of running the segment.
extern thread_local bool g_fullgraph;
// Note [scalar math]
// A Python operator whose operands are all NumPy scalars (or Python numbers) runs NumPy's
// scalar arithmetic, not a ufunc: its floating-point warnings say "... in scalar divide".
// While tracing, those scalars are 0-d values marked as scalar results (Note [scalar
// results]); the bindings' operators set this flag around such an operation, and the ufunc
// nodes it records carry the mark (Graph::ufunc's scalar_math), which names their errors.
// NumPy's scalar integer arithmetic also warns on overflow, where its loops wrap silently; so
// do the marked nodes (Note [integer scalar overflow] in include/npc/scalar_rules.hpp).
extern thread_local bool g_scalar_math;
// Note [scalar loops]
// For a few ufuncs NumPy has two loops whose results differ in the last bit: complex absolute
// (Note [complex absolute] in include/npc/scalar_rules.hpp) and complex products (Note
// [complex product] in src/ops/kernels_arith.cpp). Its scalar arithmetic (Note [scalar math])
// and its loops over a negative innermost stride compute with the scalar loop (hypot, the
// schoolbook product), its other loops with SIMD formulas. The eager kernels pick by the
// strides they run on; a traced ufunc node carries the pick as Graph::kScalarLoop (set for
// scalar math, and where ops::runs_scalar_loop predicts it from the traced operands' eager
// strides), which the eager backend passes on (UfuncOptions::scalar_loops) and fused code
// renders as npk::absv and npk::mul_plain.
// RAII: sets g_scalar_math.
class ScalarMath {
 public:
  explicit ScalarMath(bool on) : prev_(g_scalar_math) { g_scalar_math = on; }
  ~ScalarMath() { g_scalar_math = prev_; }

 private:
  bool prev_;
};
// Called at each break with its reason (the Python layer adds the user's file:line).
extern std::function<std::string(const std::string&)> g_break_annotator;
// Where the traced program is: a hash of the user's frames and their instruction offsets,
// and, when asked (`with_line`), one of the innermost user frame and its line (0, 0 when
// unknown): Note [aligned cuts] in trace_segments.cpp.
extern std::function<std::pair<uint64_t, uint64_t>(bool with_line)> g_position;
// Runs `wait` (a blocking wait for a segment running in the background) with the Python GIL
// released when the calling thread holds it (the binding layer installs it; Note [segments in
// the background] in trace_segments.cpp). Unset: `wait` runs as it is.
extern std::function<void(const std::function<void()>& wait)> g_blocking;
// Whether this thread runs a segment in the background: the segment runner leaves the
// floating-point errors of its kernels pending (the tracing thread reports them).
bool in_background_segment();
// 0: steps run on the tracing thread (the default), 1: in the background
// (NPC_BACKGROUND_SEGMENTS=1; Note [segments in the background] in trace_segments.cpp).
extern std::atomic<int> g_background_segments;

}  // namespace npc::tracer
