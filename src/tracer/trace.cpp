// Recording traced programs: the trace context, its scopes and shared helpers. The context's
// work is in files by topic: trace_inputs.cpp (arguments and captured arrays bound as
// inputs), trace_nodes.cpp (the graph nodes of traced arrays, views, writes, runtime
// scalars), trace_segments.cpp (graph breaks, cuts at the node budget, plans),
// trace_hooks.cpp (the op hooks) and trace_index.cpp (indexing). See trace.hpp.
#include <atomic>
#include <utility>

#include "tracer/trace_internal.hpp"

namespace npc::tracer {

thread_local bool g_fullgraph = false;
thread_local bool g_scalar_math = false;
std::function<std::string(const std::string&)> g_break_annotator;
std::function<std::pair<uint64_t, uint64_t>(bool)> g_position;
std::function<void(const std::function<void()>&)> g_blocking;

namespace {
thread_local Context* t_current = nullptr;
thread_local bool t_background = false;
std::atomic<uint64_t> g_next_id{1};
}  // namespace

const std::shared_ptr<Storage>& placeholder() {
  // Traced arrays have geometry but no data; every one points at this tiny storage, which
  // is never read (ndarray::data() realizes first) and exempt from the bounds check of views.
  return Storage::placeholder();
}

ndarray make_traced(std::shared_ptr<TracedValue> tv, const Shape& hint, int64_t offset_elems, Strides strides) {
  ndarray r(placeholder(), offset_elems * static_cast<int64_t>(itemsize(tv->dtype)), tv->dtype, hint, std::move(strides));
  r.set_trace(std::move(tv));
  return r;
}

Context* current() { return t_current; }
void set_current(Context* c) { t_current = c; }
Scope::Scope(Context* c) : prev_(t_current) { t_current = c; }
Scope::~Scope() { t_current = prev_; }
Suspend::Suspend() : prev_(t_current) { t_current = nullptr; }
Suspend::~Suspend() { t_current = prev_; }

Context::Context() : id_(g_next_id++), graph_(std::make_unique<ir::Graph>()) { install_hooks(); }
Context::~Context() {
  if (background_) background_->join();  // its error, if any, is dropped with the trace
}

bool in_background_segment() { return t_background; }
void set_background_segment() { t_background = true; }

void Context::BackgroundStep::join() {
  if (!thread.joinable()) return;
  if (g_blocking) g_blocking([this] { thread.join(); });
  else thread.join();
}

}  // namespace npc::tracer
