// Segments of a trace: graph breaks, cuts at the node budget (loops), the buffers live across
// them, realization, the outputs of a trace and its plan. See trace.hpp.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "npc/fperror.hpp"
#include "tracer/trace_internal.hpp"

namespace npc::tracer {

void Context::start_segment() {
  graph_ = std::make_unique<ir::Graph>();
  // A trace cut once is a long one: its next segment will reach the budget (Note [node storage]).
  if (node_budget_ && cuts_ > 0) graph_->reserve(2 * node_budget_);
  bound_by_key_.clear();
  segment_scalars_.clear();
  for (size_t k = 0; k < scalar_values.size(); ++k) graph_->scalar(static_cast<int>(k), scalar_values[k].dtype);
  segment_start_size_ = graph_->nodes().size();
  benign_checked_ = 0;
  benign_ = true;
}

std::vector<ndarray> Context::run_segment(std::vector<ir::NodeRef> outputs, std::vector<int> unread, bool background) {
  settle();  // Note [segments in the background]: the step before, whose results this one reads
  ir::Graph& g = *graph_;
  g.outputs = std::move(outputs);
  g.unread_outputs = std::move(unread);
  g.writebacks.clear();
  // Note [owned inputs] in src/fusion/lower_group.cpp: in a cut trace without breaks, the values
  // carried from an earlier segment are arrays only the trace (or the plan) holds.
  g.owned_inputs.clear();
  if (plan_ && breaks_.empty())
    for (size_t i = 0; i < bound_src_.size(); ++i)
      if (bound_src_[i].kind == 1) g.owned_inputs.push_back(static_cast<int>(i));
  for (auto& b : input_buffers_)
    if (b->input >= 0 && b->current != b->initial) g.writebacks.emplace_back(b->input, b->current);
  if (keep_undo) save_before_writes(g);
  ops_per_graph.push_back(0);
  for (ir::NodeRef n : g.nodes())
    if (n->kind != ir::NodeKind::Input && n->kind != ir::NodeKind::Scalar && n->kind != ir::NodeKind::Const &&
        n->kind != ir::NodeKind::View)
      ++ops_per_graph.back();
  if (ir::verify_enabled()) ir::verify(g, "trace");
  if (keep_raw_graphs) segment_graphs_raw.push_back(g.str());
  std::vector<Scalar> scalars = scalar_values;
  // Note [values after a break] in trace_nodes.cpp.
  scalars.insert(scalars.end(), segment_scalars_.begin(), segment_scalars_.end());
  const bool reusable = !breaks_.empty() || cuts_ > 0;
  // Note [loops]: the segments of a cut trace without breaks are the steps of its plan.
  const bool step = plan_ && breaks_.empty() && cuts_ > 0;
  if (step && background && runner && background_segments() &&
      std::none_of(g.nodes().begin(), g.nodes().end(), [](ir::NodeRef n) { return n->kind == ir::NodeKind::Call; }))
    return run_in_background(std::make_shared<ir::Graph>(std::move(g)), std::move(scalars));
  auto pruned = std::make_shared<ir::Graph>(ir::run_pass(std::move(g), ir::dce, "dce"));
  segment_graphs.push_back(pruned);
  std::vector<ndarray> out;
  SegmentRun keep;
  {
    Suspend s;
    if (runner) {
      out = runner(pruned, bound_, scalars, reusable, step ? &keep : nullptr);
    } else if (step) {
      keep = {pruned, [g = pruned](const ir::RunArgs& a) { return ir::interpret(*g, a); }};
      out = keep.exe(ir::RunArgs{bound_, scalars});
    } else {
      out = ir::interpret(*pruned, ir::RunArgs{bound_, scalars});
    }
  }
  if (step) plan_->steps.push_back({std::move(keep), bound_src_, segment_scalars_, {}});
  last_graph_ = std::move(pruned);
  return out;
}

// Note [segments in the background]
// Lowering a segment of a traced loop costs about as much as tracing it (Note [loops]), and
// the two need not wait for each other: a step of a plan (a segment cut at the node budget,
// with no graph break) starts on a thread of its own, and tracing goes on with the next
// segment at once. Its results are bound to the next segment as stand-ins (arrays of their
// shape and dtype with no memory, never read: traced code reads no values); settle() waits
// for the step, binds its real results in their place (as end_segment binds a step's
// results: C-contiguous, apart from the step's inputs) and reports the floating-point
// errors of its kernels, or rethrows what it raised. The tracing thread settles before it
// runs or starts another segment (so one step at most runs at a time, and steps run in
// program order), before it needs a value (realize), at a graph break, when the trace
// finishes, and when it ends abnormally (npc.compile's cleanup; the step's error is dropped
// then). An error or warning of a step is thus reported at the next cut rather than at its
// own, after a little more of the function's Python ran (a cut is no place in the program
// either: it falls where the budget ran out). What stays on the tracing thread: segments
// with host calls (numpy.random: their Python runs where the program is), segments of
// functions with graph breaks, and the last segment. While it waits, the thread gives the
// GIL up (the step may need it: warnings of the compiler; the backend's settings are read on
// the tracing thread before the step starts). The step's thread also prunes the segment's
// graph (dce) and frees the traced one. The overlap needs a CPU nobody else uses: on a
// machine whose CPUs are busy the two threads share what the process gets, and the handing
// over costs (seidel_2d's first call took 10-20% longer at a load average of 5 on 2 CPUs,
// where its tracing thread's CPU time halved; on a quiet machine it took 8.0 s instead of
// 12.3 s, while lu, cholesky and gramschmidt took 10-30% longer). Because it moves where
// errors and warnings surface, and gains only for some loops on idle CPUs, it is off unless
// NPC_BACKGROUND_SEGMENTS=1 (or npc._core._background_segments(1)) asks for it: a program's
// behaviour does not depend on how busy the machine is.
std::atomic<int> g_background_segments{[] {
  const char* e = std::getenv("NPC_BACKGROUND_SEGMENTS");
  return e && *e && std::string(e) != "0" ? 1 : 0;
}()};

bool Context::background_segments() { return g_background_segments.load(std::memory_order_relaxed) == 1; }

std::vector<ndarray> Context::run_in_background(std::shared_ptr<ir::Graph> g, std::vector<Scalar> scalars) {
  if (before_background) before_background();
  // Stand-ins of the results (never read; settle() binds the real ones).
  std::vector<int64_t> hints;
  for (const ir::Symbol& s : g->symbols()) hints.push_back(s.hint);
  std::vector<ndarray> out;
  for (ir::NodeRef o : g->outputs) {
    Shape shape = ir::concrete_shape(o->shape, hints);
    Strides strides = contiguous_strides(shape, itemsize(o->dtype));
    out.emplace_back(placeholder(), 0, o->dtype, std::move(shape), std::move(strides));
  }
  auto t = std::make_unique<BackgroundStep>();
  t->step = static_cast<int>(plan_->steps.size());
  plan_->steps.push_back({SegmentRun{}, bound_src_, segment_scalars_, {}});
  t->inputs = bound_;
  t->scalars = std::move(scalars);
  BackgroundStep* raw = t.get();
  // The error state is this thread's (Note [writes before a raising operation] in src/fusion/backend.cpp).
  const int raises = fp_raise_kinds();
  // The thread also prunes the graph and frees the nodes the pruning dropped.
  raw->thread = std::thread([raw, run = runner, traced = std::move(g), raises]() mutable {
    set_background_segment();
    FpRaiseKindsScope state(raises);
    try {
      raw->graph = std::make_shared<ir::Graph>(ir::run_pass(std::move(*traced), ir::dce, "dce"));
      traced.reset();
      raw->outputs = run(raw->graph, raw->inputs, raw->scalars, true, &raw->keep);
    } catch (...) {
      raw->error = std::current_exception();
    }
    traced.reset();
    raw->fp_errors = take_named_fp_flags();
  });
  background_ = std::move(t);
  return out;
}

void Context::settle(bool rethrow) {
  if (!background_) return;
  std::unique_ptr<BackgroundStep> t = std::move(background_);
  t->join();
  if (plan_ && t->step < static_cast<int>(plan_->steps.size())) plan_->steps[static_cast<size_t>(t->step)].run = t->keep;
  if (t->graph) {
    segment_graphs.push_back(t->graph);
    last_graph_ = t->graph;
  }
  if (t->error) {
    if (!rethrow) return;
    try {
      std::rethrow_exception(t->error);
    } catch (const FpStop&) {
      // It stopped at an error the error state raises: reporting its errors raises.
      for (auto& [bit, where] : t->fp_errors) add_fp_report(bit, where);
      if (report_fp) report_fp();
      throw;
    }
  }
  // As end_segment binds the results of a step that ran on this thread.
  std::vector<std::optional<ndarray>> bound(t->outputs.size());
  for (size_t i = 0; i < bound_.size() && i < bound_src_.size(); ++i) {
    const Plan::Source& src = bound_src_[i];
    if (src.kind != 1 || src.step != t->step) continue;
    auto& v = bound.at(static_cast<size_t>(src.index));
    if (!v) {
      v = t->outputs.at(static_cast<size_t>(src.index));
      if (!v->is_c_contiguous() || Plan::shares_storage(*v, t->inputs)) v = v->copy();
    }
    bound_[i] = *v;
  }
  if (!rethrow) return;
  for (auto& [bit, where] : t->fp_errors) add_fp_report(bit, where);
  if (report_fp) report_fp();
}

void Context::bind_top(const ndarray& a) {
  bound_.push_back(a);
  top_.push_back(a);
  bound_src_.push_back({0, static_cast<int>(top_.size()) - 1, -1});
}

void Context::break_graph(const std::string& why) {
  // After a break, concrete arrays meet Python values in eager ops, where a runtime scalar's
  // marker value would be computed with: functions with breaks take their floats static
  // (they run their Python on every call anyway). Note [runtime scalars] in trace_nodes.cpp.
  if (!sentinels_.empty()) throw StaticScalar("a graph break with runtime scalars");
  std::string reason = g_break_annotator ? g_break_annotator(why) : why;
  if (g_fullgraph) throw GraphBreak(reason);
  end_segment(true, reason);
}

void Context::note_break(const std::string& why) {
  if (!sentinels_.empty()) throw StaticScalar("a graph break with runtime scalars");
  std::string reason = g_break_annotator ? g_break_annotator(why) : why;
  if (g_fullgraph) throw GraphBreak(reason);
  breaks_.push_back(reason);
  plan_.reset();  // the Python runs on every call: no plan
}

// Note [reads of unchanged inputs]
// A scalar loop over an array (`for byte in data: crc ^= int(byte) << 8`) realizes one element
// per iteration. Each realization is a graph break (the Python must run again on every call to
// produce the value), but ending the segment there costs a lowering and a launch per element,
// and the segments differ (each reads another offset), so the segment cache never hits. When
// the value is a chain of views and copies of a segment input, and the segment has recorded
// nothing but views, copies and leaves (no write is pending, no operation that could raise or
// warn is delayed), the input's array holds the value already: it is computed from that array
// eagerly, and the buffer is bound as a new input of the same segment (so a realized view
// still aliases what the trace reads, as after a break), which goes on. The break is recorded
// all the same (reasons, counts, no plan); the segment simply continues.
bool Context::bind_from_inputs(const std::shared_ptr<Buffer>& sb) {
  Buffer& b = *sb;
  if (!graph_->symbols().empty()) return false;  // shapes of this segment may be symbolic
  const auto& nodes = graph_->nodes();
  auto benign = [](ir::NodeRef n) {
    return n->kind == ir::NodeKind::Input || n->kind == ir::NodeKind::Scalar || n->kind == ir::NodeKind::Const ||
           n->kind == ir::NodeKind::View || (n->kind == ir::NodeKind::Prim && n->op == OpId::copy);
  };
  for (; benign_ && benign_checked_ < nodes.size(); ++benign_checked_) benign_ = benign(nodes[benign_checked_]);
  if (!benign_) return false;
  std::vector<ir::NodeRef> chain;
  ir::NodeRef n = b.current;
  for (; n->kind == ir::NodeKind::View || (n->kind == ir::NodeKind::Prim && n->op == OpId::copy); n = n->args[0])
    chain.push_back(n);
  if (n->kind != ir::NodeKind::Input || n->params.empty() || n->params[0] < 0 ||
      static_cast<size_t>(n->params[0]) >= bound_.size())
    return false;
  ndarray v;
  {
    Suspend s;
    v = bound_[static_cast<size_t>(n->params[0])];
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      ir::NodeRef x = *it;
      if (x->kind == ir::NodeKind::View) v = ir::apply_view(x, v, ir::concrete_shape(x->shape, {}));
    }
    if (v.dtype() != b.dtype || ir::static_shape(v.shape()) != b.shape) return false;
    v = v.copy();  // C-contiguous, apart from the input (the buffer is a value of its own)
  }
  b.input = static_cast<int>(bound_.size());
  b.current = b.initial = graph_->input(b.input, v.dtype(), b.shape);
  ++b.version;
  bound_.push_back(v);
  bound_src_.push_back({0, -1, -1});  // (no plan after a break)
  input_buffers_.push_back(sb);
  return true;
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
//   break, Note [values after a break] in trace_nodes.cpp), with the values they had while
//   tracing: before any break they come from guarded values, so they are the same on every
//   call;
// - the symbolic sizes of the trace are specialised to the sizes seen (Note [symbols after a
//   break] in trace_nodes.cpp): a cut trace is reused for those sizes only (other sizes trace
//   again);
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
// once) and lowering (each segment's graph, never more than the budget at a time; a step is
// lowered and run on another thread while the next segment is traced, Note [segments in the
// background]). A scalar
// loop that realizes an element of an input per iteration keeps one segment (Note [reads of
// unchanged inputs]); the graphs' texts (explain, last_graphs) are rendered only when read.
// Note [aligned cuts]
// A cut at whatever operation crosses the budget would fall at a different place of a loop's
// body in each segment: the values live across it differ, so each segment's first and last
// kernels would be fused differently, and the kernels a loop compiles would depend on where
// its cuts happened to fall (on its trip count). So the first cut of a trace remembers where
// the program was (g_position: the user's frames and instruction offsets), and later cuts
// wait, once over the budget, until the program is there again (the same operation of a
// later iteration; at which iteration: Note [content-defined cuts]); a segment that reaches
// three times the budget without getting there is cut where it is. Segments of a loop then all start at the same operation of its body. The
// place itself is chosen where a loop starts an iteration: once over the budget, the first
// cut (and a cut that found no anchor) waits until the line of the innermost user frame goes
// back above the line where waiting began (the loop jumped back to the top of its body, in
// the same code), or the segment reached four times the budget. Temporaries of the statements
// (`A[k + 1:, k + 1:] -= np.outer(...)`'s product) are gone there: the values carried across
// a cut are the program's own arrays, not temporaries whose shapes change with the iteration.
void Context::cut_aligned() {
  const uint64_t here = g_position ? g_position(false).first : 0;
  const size_t size = graph_->nodes().size() - segment_start_size_;
  if (cuts_ > 0 && here != 0 && here == cut_position_) {
    if (!content_boundary(size)) return;  // Note [content-defined cuts]
    cut();
    return;
  }
  if (cuts_ > 0 && cut_position_ != 0 && size <= 3 * node_budget_) return;  // not there yet
  // The line is asked only here: finding it scans the code object's line table.
  const uint64_t line = here != 0 && size <= 4 * node_budget_ ? g_position(true).second : 0;
  if (line != 0) {
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

// Note [undoing an abandoned trace's writes]
// A trace with runtime scalars (float arguments, loop-varying ints: Note [runtime scalars] in
// trace_nodes.cpp, Note [runtime ints] in python/npc/compiler/_guards.py) is abandoned and
// traced again when the Python turns out to need one of them as a value (`if w > 0.5:`,
// `range(k)`), possibly after segments of it ran: a cut runs its segment, which writes into
// the arguments and captured arrays it updates in place. The trace that follows would start
// from those writes instead of the caller's data (a loop writing into its argument gave other
// values than NumPy's, also on the first call). So while such a trace may still be
// abandoned (npc.compile sets keep_undo when it passed runtime scalars), each segment first
// saves the arrays it writes that the trace does not own (the arguments, captured arrays and
// values realized at a break: a copy of each, once per trace), and undo_writes() copies them
// back, the last saved first, before the trace is abandoned. Arrays the trace owns (carried
// from one segment to the next) are dropped with it.
void Context::save_before_writes(const ir::Graph& g) {
  for (const auto& [i, n] : g.writebacks) {
    if (i < 0 || static_cast<size_t>(i) >= bound_.size()) continue;
    if (static_cast<size_t>(i) < bound_src_.size() && bound_src_[static_cast<size_t>(i)].kind == 1) continue;
    const ndarray& a = bound_[static_cast<size_t>(i)];
    const bool saved = std::any_of(undo_.begin(), undo_.end(), [&](const auto& u) {
      return u.first.storage() == a.storage() && u.first.offset() == a.offset() && u.first.shape() == a.shape() &&
             u.first.strides() == a.strides();
    });
    if (saved) continue;
    Suspend s;
    undo_.emplace_back(a, a.copy());
  }
}

void Context::undo_writes() {
  settle(false);  // a step still running in the background writes first
  Suspend s;
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) copy_into(it->first, it->second);
  undo_.clear();
}

// Note [content-defined cuts]
// Aligned cuts (above) put every segment of a loop at the same operation of its body, but
// not at the same iterations: a cut falls at the first such place past the budget, so where
// the cuts of a loop fall depends on where its first segment began. A loop that repeats
// work, such as a time loop around a sweep over rows (`for t: for i: A[i] = f(A[i - 1])`),
// then cuts each sweep at other rows, and no segment of a later sweep is one seen before:
// each is lowered again, although the sweep does what the one before did. So a cut at the
// anchor also asks the recent content of the trace: it happens where a hash of the last
// node built (its kind, dtype, shape, integers and constant, and those of its operands and
// theirs, none of which depend on where the segment began) is 0 modulo 4; past twice the
// budget, 0 modulo 2 (a weaker mark, still the content's); past three times the budget, at
// the next anchor whatever the hash. Equal runs of operations then get equal cut points
// (content-defined chunking, as deduplicating stores cut files): a repeated sweep falls in
// step with the sweep before after a segment or a few (seidel_2d at size M: three), and its
// later segments are found in the segment cache (Note [segment cache] in bind_tracer.cpp),
// not lowered again. A loop whose iterations build equal nodes (one hash at every anchor)
// is cut at the first anchor past one, two or three budgets: at an anchor in every case.
// Segments grow by a few iterations on average (seidel_2d M: 7.5 rows instead of 5).
namespace {
inline void mix(uint64_t& h, uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

uint64_t own_content(ir::NodeRef n) {
  uint64_t h = static_cast<uint64_t>(n->kind) * 1315423911u;
  mix(h, static_cast<uint64_t>(n->op));
  mix(h, static_cast<uint64_t>(n->dtype));
  for (ir::Dim d : n->shape) mix(h, static_cast<uint64_t>(d.raw()));
  for (int64_t p : n->params) mix(h, static_cast<uint64_t>(p));
  if (n->value) {
    alignas(16) std::byte b[16] = {};
    n->value->store(n->value->dtype, b);
    uint64_t w[2];
    std::memcpy(w, b, 16);
    mix(h, w[0]);
    mix(h, w[1]);
  }
  return h;
}
}  // namespace

bool Context::content_boundary(size_t size) const {
  const auto& nodes = graph_->nodes();
  if (nodes.empty() || size > 3 * node_budget_) return true;
  ir::NodeRef last = nodes.back();
  uint64_t h = own_content(last);
  for (ir::NodeRef a : last->args) {
    mix(h, own_content(a));
    for (ir::NodeRef b : a->args) mix(h, own_content(b));
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (h & (size > 2 * node_budget_ ? 1 : 3)) == 0;
}

void Context::end_segment(bool real, const std::string& reason) {
  check_failed();
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
  // cut only the other buffers are outputs of the segment; a break lists them all, as explain
  // shows them, the inputs as unread outputs (Note [unread outputs]).
  std::vector<ir::NodeRef> outs;
  std::vector<int> out_of(live.size(), -1), unread;
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i]->input < 0 || real) {
      out_of[i] = static_cast<int>(outs.size());
      if (live[i]->input >= 0) unread.push_back(out_of[i]);
      outs.push_back(live[i]->current);
    }
  // Note [symbols after a break] in trace_nodes.cpp.
  if (breaks_.size() + static_cast<size_t>(cuts_) == 1) {
    const auto& syms = graph_->symbols();
    for (size_t k = 0; k < syms.size(); ++k) {
      sym_sizes_.push_back(syms[k].hint);
      // A plan (Note [loops]) is replayed for the sizes it was traced with.
      if (!real && (k >= specialised_.size() || !specialised_[k]))
        constraints_.push_back({syms[k].input, syms[k].axis, -1, -1, syms[k].hint});
    }
  }
  // Note [failed segments]
  // A segment that raises when it runs (a floating-point error under numpy.errstate at a graph
  // break: `np.asarray((x / 0).max())`) leaves its graph moved into the run and the buffers
  // bound to nothing. The program may catch the error and realize the same value again, or go
  // on tracing: each later realization, break or finish raises that error again instead of
  // running what is left of the trace.
  std::vector<ndarray> vals;
  try {
    vals = run_segment(outs, std::move(unread), !real);
  } catch (const FloatingPointError&) {
    failed_ = std::current_exception();
    throw;
  } catch (const std::exception& e) {
    // Another error (one of Python's may not be raised twice): later uses raise its message.
    const std::string what = e.what();
    failed_ = std::make_exception_ptr(std::runtime_error(what.substr(0, what.find('\n'))));
    throw;
  }
  const bool stand_ins = background_ != nullptr;  // Note [segments in the background]
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
    if (b.input < 0 && !stand_ins && (!v.is_c_contiguous() || Plan::shares_storage(v, old_bound))) v = v.copy();
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

// Note [unread outputs]
// A graph break lists every live buffer as an output of the segment before it (explain shows
// them), the program's inputs among them. An input's buffer keeps its caller's array across
// the break (its final value is written back into it), so the value the segment returns for
// it is never read: end_segment binds the array itself again, the object the Python holds, as
// eager code would have it. Such outputs are marked (Graph::unread_outputs), so that a backend
// does not make each of them a fresh array (a graph's outputs are values of their own, Note
// [distinct buffers]): a loop with a break per iteration would otherwise copy every input
// array it keeps, at every iteration.

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
  settle();  // Note [segments in the background]
  check_failed();
  TracedValue* tv = traced(a);
  if (!tv || tv->ctx_id != id_)
    throw ValueError("a traced array escaped the npc.compile call that created it (it has no value here)");
  Buffer& b = *tv->buf;
  // Every realization is a graph break (the function's Python must run again on each call
  // to produce the value), except right after another break with nothing recorded since.
  if (breaks_.empty() || graph_->nodes().size() != segment_start_size_ || b.input < 0 || b.current != b.initial) {
    // Note [reads of unchanged inputs]: nothing pending needs to run for this value.
    if (!(b.input >= 0 && b.current == b.initial) && !g_fullgraph && sentinels_.empty() && bind_from_inputs(tv->buf))
      note_break("a concrete value was needed");
    else
      break_graph("a concrete value was needed");
  }
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
// out, or an input node it is not, or a view of one (a copy of an argument in its own dtype:
// the copy keeps the layout the trace gave it, `np.copy` of an F-ordered argument is
// F-ordered, where the view would come out in the order of its own axes), becomes an explicit
// copy: Prim copy, numbered so that interning keeps two copies of one value apart.
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
    ir::NodeRef root = n;
    while (root->kind == ir::NodeKind::View) root = root->args[0];
    if (root->kind != ir::NodeKind::Input && claimed.insert(n).second) continue;
    const int64_t serial = static_cast<int64_t>(graph_->nodes().size());
    b->current = graph_->prim(OpId::copy, std::span<const ir::NodeRef>(&n, 1), n->dtype, n->shape,
                              std::span<const int64_t>(&serial, 1));
    claimed.insert(b->current);
    ++b->version;
  }
}

std::vector<ndarray> Context::finish(const std::vector<ndarray>& outputs) {
  check_failed();  // Note [failed segments]
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
  if (breaks_.empty() && cuts_ == 0) final_graph_ = std::move(last_graph_);
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
  // Sources name inputs below num_inputs (checked when a plan is loaded: Note [plan serialization]).
  if (inputs.size() < static_cast<size_t>(num_inputs))
    throw ValueError("plan: " + std::to_string(inputs.size()) + " inputs, the plan takes " + std::to_string(num_inputs));
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
      if (Plan::shares_storage(o, in)) o = o.copy(Order::K);  // the value's layout (a result may be one)
    // (A moved-from array holds nothing: ndarray() would allocate a storage per release.)
    for (auto [step, k] : st.release) {
      ndarray dead = std::move(outs[static_cast<size_t>(step)][static_cast<size_t>(k)]);
    }
  }
  return outs.empty() ? std::vector<ndarray>{} : std::move(outs.back());
}

}  // namespace npc::tracer

namespace npc::tracer {

// Note [results that view inputs] in trace.hpp.
std::optional<OutputView> Context::output_view(const ndarray& a) const {
  TracedValue* tv = traced(a);
  if (!tv) {
    // After a break, a view realized from an input's bound array (realize()) shares its storage.
    if (breaks_.empty() || !a.storage() || a.storage()->is_placeholder()) return std::nullopt;
    for (size_t i = 0; i < top_.size(); ++i)
      if (top_[i].storage() == a.storage()) {
        OutputView v;
        v.input = static_cast<int>(i);
        v.fixed = a;
        return v;
      }
    return std::nullopt;
  }
  if (tv->ctx_id != id_) return std::nullopt;
  const Buffer& b = *tv->buf;
  if (b.input < 0 || static_cast<size_t>(b.input) >= bound_src_.size()) return std::nullopt;
  const Plan::Source& src = bound_src_[static_cast<size_t>(b.input)];
  // An input from outside the trace, bound as the C-contiguous layout its traced geometry is a
  // position in (Note [buffers]); a value carried from an earlier segment is the trace's own.
  if (src.kind != 0 || !top_.at(static_cast<size_t>(src.index)).is_c_contiguous()) return std::nullopt;
  OutputView v = chain_of(*tv, a);
  v.input = src.index;
  return v;
}

OutputView Context::chain_of(const TracedValue& tv, const ndarray& a) const {
  OutputView v;
  for (const ViewStep& s : tv.chain) {
    ViewStep t = s;
    t.shape = segment_shape(t.shape);  // after a break or a cut: this call's sizes
    v.chain.push_back(std::move(t));
  }
  for (const ir::Symbol& s : graph_->symbols()) v.symbols.emplace_back(s.input, s.axis);
  v.traced_strides = a.strides();
  return v;
}

// Note [results that view each other]
// NumPy results that view one memory (`c = a + b; return c, c[1:], c.reshape(-1)`) share it:
// a write through one shows in the others, and an object returned twice is one object. A
// graph hands each output out as its own array (Note [distinct buffers]), so npc.compile
// asks, for each result, for its buffer (buffer_id): where two results are on one buffer of
// the trace's own (not an input's: those are Note [results that view inputs]), the graph
// outputs that buffer whole, once (buffer_view: a traced C-contiguous array over it), and
// each such result is its view chain applied to that output (OutputView::apply_to, with the
// call's sizes), as the tracer recorded it. python/npc/compiler/_api.py (_Aliases) does the
// grouping; a result met twice is one tree node, so it comes back as one object.
uintptr_t Context::buffer_id(const ndarray& a) const {
  TracedValue* tv = traced(a);
  return tv && tv->ctx_id == id_ ? reinterpret_cast<uintptr_t>(tv->buf.get()) : 0;
}

std::optional<std::pair<ndarray, OutputView>> Context::buffer_view(const ndarray& a) const {
  TracedValue* tv = traced(a);
  if (!tv || tv->ctx_id != id_ || output_view(a)) return std::nullopt;
  const Buffer& b = *tv->buf;
  auto whole = std::make_shared<TracedValue>();
  whole->buf = tv->buf;
  whole->shape = segment_shape(b.shape);
  whole->dtype = b.dtype;
  whole->ctx_id = id_;
  ndarray w = make_traced(std::move(whole), b.hint, 0, contiguous_strides(b.hint, itemsize(b.dtype)));
  return std::make_pair(std::move(w), chain_of(*tv, a));
}

ndarray OutputView::apply(std::span<const ndarray> inputs) const {
  if (fixed) return *fixed;
  return apply_to(inputs[static_cast<size_t>(input)], inputs);
}

ndarray OutputView::apply_to(ndarray v, std::span<const ndarray> inputs) const {
  std::vector<int64_t> syms;
  for (auto [in, ax] : symbols) {
    const ndarray& s = inputs[static_cast<size_t>(in)];
    syms.push_back(ax < s.ndim() ? s.shape()[static_cast<size_t>(ax)] : 0);
  }
  for (const ViewStep& s : chain) {
    const Shape shape = ir::concrete_shape(s.shape, syms);
    switch (s.kind) {
      case ir::ViewKind::Permute: v = v.transpose(s.params); break;
      case ir::ViewKind::Reshape: v = v.reshape(shape); break;
      case ir::ViewKind::Component: v = s.params.at(0) ? v.imag() : v.real(); break;
      case ir::ViewKind::Strided: {
        const int64_t isz = static_cast<int64_t>(v.itemsize());
        Strides st;
        for (size_t d = 1; d < s.params.size(); ++d) st.push_back(s.params[d] * isz);
        v = v.with_geometry(v.offset() + s.params.at(0) * isz, v.dtype(), shape, st);
        break;
      }
      case ir::ViewKind::Slice: {
        int64_t off = v.offset();
        Strides st(shape.size());
        for (size_t d = 0; d < shape.size(); ++d) {
          off += s.params.at(2 * d) * v.strides()[d];
          st[d] = s.params.at(2 * d + 1) * v.strides()[d];
        }
        v = v.with_geometry(off, v.dtype(), shape, st);
        break;
      }
      case ir::ViewKind::Broadcast: {
        const size_t lead = shape.size() - static_cast<size_t>(v.ndim());
        Strides st(shape.size(), 0);
        for (int d = 0; d < v.ndim(); ++d)
          st[lead + d] = v.shape()[d] == 1 && shape[lead + d] != 1 ? 0 : v.strides()[d];
        v = v.with_geometry(v.offset(), v.dtype(), shape, st);
        break;
      }
    }
  }
  // A size-1 axis has the stride eager code gave it (0 for `a[None]`, where a reshape gives
  // the C stride); sizes 0 and 1 are never symbolic, so they are the traced ones.
  if (traced_strides.size() == static_cast<size_t>(v.ndim())) {
    Strides st = v.strides();
    bool differ = false;
    for (int d = 0; d < v.ndim(); ++d)
      if (v.shape()[d] == 1 && st[d] != traced_strides[d]) {
        st[d] = traced_strides[d];
        differ = true;
      }
    if (differ) v = v.with_geometry(v.offset(), v.dtype(), v.shape(), st);
  }
  return v;
}

}  // namespace npc::tracer
