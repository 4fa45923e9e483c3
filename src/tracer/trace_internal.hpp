#pragma once
// Internal to recording (trace.cpp, trace_inputs.cpp, trace_nodes.cpp, trace_segments.cpp,
// trace_hooks.cpp, trace_index.cpp): what the files of the trace context share.
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "npc/indexing.hpp"
#include "tracer/trace.hpp"

namespace npc::tracer {

// The storage every traced array points at: never read (ndarray::data() realizes first).
const std::shared_ptr<Storage>& placeholder();

// The traced value of `a` (null when `a` is concrete).
inline TracedValue* traced(const ndarray& a) { return static_cast<TracedValue*>(a.trace().get()); }

// A traced array of value `tv` with eager's geometry (a position in a C-contiguous layout of
// its buffer, Note [buffers] in trace.hpp).
ndarray make_traced(std::shared_ptr<TracedValue> tv, const Shape& hint, int64_t offset_elems, Strides strides);

inline bool all_static(const ir::SymShape& s) {
  for (ir::Dim d : s)
    if (!d.is_static()) return false;
  return true;
}

// Note [segments in the background] in trace_segments.cpp: a step of a plan that runs (is
// lowered, compiled and run) on a thread of its own while the trace goes on.
struct Context::BackgroundStep {
  std::thread thread;
  int step = -1;                      // its index in the plan
  std::shared_ptr<ir::Graph> graph;
  std::vector<ndarray> inputs;        // the arrays bound to its inputs
  std::vector<Scalar> scalars;
  SegmentRun keep;                    // set by the thread: its graph and executable
  std::vector<ndarray> outputs;       // set by the thread
  std::vector<std::pair<int, std::string>> fp_errors;  // the errors its kernels raised
  std::exception_ptr error;           // what it raised
  void join();
};

// Marks the calling thread as one that runs a segment in the background.
void set_background_segment();

// The current context; throws when there is none (a traced array outside its npc.compile call).
Context& ctx_or_throw();

// A node whose symbolic dims tracing assumed equal to the result's (a recorded constraint)
// is renamed to them, so the broadcast that follows is exact.
ir::NodeRef unify(ir::Graph& g, ir::NodeRef n, const ir::SymShape& shape);

// The indexing hooks (trace_index.cpp), installed with the others by install_hooks
// (trace_hooks.cpp).
ndarray index_get_hook(const ndarray& a, std::span<const IndexItem> idx);
void index_set_hook(const ndarray& a, std::span<const IndexItem> idx, const ndarray& value);

}  // namespace npc::tracer
