// npc::compile for C++ callables: guards, cache, dynamic dims, replay.
#include "npc/compile.hpp"

#include "tracer/trace.hpp"

namespace npc {

namespace {
struct Entry {
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;              // -1 where the dim is symbolic
  std::vector<int> arg_input;             // graph input of each argument
  std::vector<ndarray> captured;          // inputs bound during tracing (not arguments)
  int num_user = 0;                       // graph inputs bound to arguments
  std::vector<tracer::Context::Constraint> constraints;
  std::shared_ptr<ir::Graph> graph;
  ir::Executable exe;
};

ir::Executable make_executable(const std::shared_ptr<ir::Graph>& g, const std::string& backend) {
  if (backend != "eager") {
    if (const ir::Backend* b = ir::find_backend(backend)) {
      // The backend handles its own code generation failures (a warning and an eager run,
      // or an exception with codegen_errors="raise"): what it throws reaches the caller.
      // Graphs with host calls are fusion barriers: they run eagerly.
      bool calls = false;
      for (ir::NodeRef n : g->nodes()) calls = calls || n->kind == ir::NodeKind::Call;
      if (!calls) {
        ir::Executable e = (*b)(*g);
        return [g, e](const ir::RunArgs& a) {  // keeps the graph alive
          ir::check_index_inputs(*g, a.inputs);  // Note [gathers] in include/npc/graph.hpp
          return e(a);
        };
      }
    }
  }
  return [g](const ir::RunArgs& a) { return ir::interpret(*g, a); };
}
}  // namespace

struct CompiledFunction::Impl {
  Fn fn;
  CompileOptions opts;
  std::vector<std::unique_ptr<Entry>> entries;
  std::vector<std::vector<bool>> dynamic;  // per arg, per axis: symbolic (automatic dynamic)
  std::vector<Shape> last_shapes;
  CompileStats stats;
  bool broke = false;  // the function has graph breaks: always run it under tracing

  bool matches(const Entry& e, const std::vector<ndarray>& args) const {
    if (args.size() != e.dtypes.size()) return false;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].dtype() != e.dtypes[i] || args[i].ndim() != static_cast<int>(e.shapes[i].size())) return false;
      for (int d = 0; d < args[i].ndim(); ++d) {
        int64_t s = e.shapes[i][d], v = args[i].shape()[d];
        if (s >= 0 ? v != s : v < 2) return false;  // symbolic dims stay >= 2 (0 and 1 specialise)
      }
    }
    // Aliasing between arguments must be as traced (the same array twice is one input).
    for (size_t i = 0; i < args.size(); ++i)
      for (size_t j = i + 1; j < args.size(); ++j) {
        bool same = args[i].storage() == args[j].storage() && args[i].offset() == args[j].offset() &&
                    args[i].strides() == args[j].strides() && args[i].shape() == args[j].shape();
        if (same != (e.arg_input[i] == e.arg_input[j])) return false;
      }
    for (auto& c : e.constraints) {
      int64_t a = args.at(c.in_a).shape()[c.ax_a];
      if (c.in_b < 0 ? a != c.size : a != args.at(c.in_b).shape()[c.ax_b]) return false;
    }
    return true;
  }

  std::vector<ndarray> trace(const std::vector<ndarray>& args) {
    ++stats.traces;
    if (!entries.empty()) ++stats.recompiles;
    // Automatic dynamic shapes: a dim that changed since the last call becomes symbolic.
    if (dynamic.size() != args.size()) dynamic.assign(args.size(), {});
    for (size_t i = 0; i < args.size(); ++i) {
      auto& dy = dynamic[i];
      dy.resize(args[i].ndim(), opts.dynamic.value_or(false));
      if (!opts.dynamic.has_value() && i < last_shapes.size() && last_shapes[i].size() == args[i].shape().size())
        for (int d = 0; d < args[i].ndim(); ++d)
          if (last_shapes[i][d] != args[i].shape()[d]) dy[d] = true;
    }
    tracer::Context ctx;
    // The first run of a graph without breaks goes through the backend: its executable
    // becomes the cache entry's, so each graph is lowered once. Segments of functions with
    // breaks run on the interpreter.
    std::shared_ptr<ir::Graph> first_graph;
    ir::Executable first_exe;
    ctx.runner = [&](const std::shared_ptr<ir::Graph>& g, const std::vector<ndarray>& in, const std::vector<Scalar>& sc,
                     bool reusable, tracer::SegmentRun* keep) {
      if (keep) {  // a plan's step (no node budget is set here: not reached today)
        *keep = {g, [sg = g](const ir::RunArgs& a) { return ir::interpret(*sg, a); }};
        return keep->exe(ir::RunArgs{in, sc});
      }
      if (reusable) return ir::interpret(*g, ir::RunArgs{in, sc});
      first_graph = g;
      first_exe = make_executable(first_graph, opts.backend);
      return first_exe(ir::RunArgs{in, sc});
    };
    tracer::Scope scope(&ctx);
    tracer::g_fullgraph = opts.fullgraph;
    std::vector<ndarray> targs;
    auto e = std::make_unique<Entry>();
    for (size_t i = 0; i < args.size(); ++i) {
      std::vector<int> dyn;
      for (int d = 0; d < args[i].ndim(); ++d)
        if (dynamic[i][d] && args[i].shape()[d] >= 2) dyn.push_back(d);
      targs.push_back(ctx.add_input(args[i], dyn));
      e->dtypes.push_back(args[i].dtype());
      Shape s = args[i].shape();
      for (int d : dyn) s[d] = -1;
      e->shapes.push_back(s);
      e->arg_input.push_back(ctx.input_index(targs.back()));
    }
    std::vector<ndarray> outs;
    try {
      outs = ctx.finish(fn(targs));
    } catch (const tracer::GraphBreak& b) {
      tracer::g_fullgraph = false;
      throw GraphBreakError(b.what());
    }
    tracer::g_fullgraph = false;
    stats.graph_breaks += ctx.num_breaks();
    if (ctx.num_breaks() > 0) {
      broke = true;
      return outs;
    }
    e->graph = first_graph;
    e->num_user = ctx.num_user_inputs;
    for (size_t k = ctx.num_user_inputs; k < ctx.bound_inputs().size(); ++k) e->captured.push_back(ctx.bound_inputs()[k]);
    e->constraints = ctx.constraints();
    e->exe = first_exe;
    entries.push_back(std::move(e));
    return outs;
  }
};

CompiledFunction::CompiledFunction(Fn fn, CompileOptions opts) : impl_(std::make_shared<Impl>()) {
  if (!fn) throw ValueError("npc::compile: the function is empty");
  impl_->fn = std::move(fn);
  impl_->opts = std::move(opts);
}

std::vector<ndarray> CompiledFunction::operator()(const std::vector<ndarray>& args) {
  Impl& m = *impl_;
  if (!m.broke) {
    for (auto& e : m.entries) {
      if (!m.matches(*e, args)) continue;
      ++m.stats.cache_hits;
      std::vector<ndarray> in(e->graph->num_inputs());
      for (size_t i = 0; i < args.size(); ++i) in[e->arg_input[i]] = args[i];
      for (size_t k = 0; k < e->captured.size(); ++k) in[e->num_user + k] = e->captured[k];
      return e->exe(ir::RunArgs{in, {}});
    }
  }
  if (!m.broke && static_cast<int>(m.entries.size()) >= m.opts.recompile_limit) {
    ++m.stats.eager_runs;
    return m.fn(args);
  }
  auto r = m.trace(args);
  m.last_shapes.clear();
  for (auto& a : args) m.last_shapes.push_back(a.shape());
  return r;
}

const CompileStats& CompiledFunction::stats() const { return impl_->stats; }

std::vector<const ir::Graph*> CompiledFunction::graphs() const {
  std::vector<const ir::Graph*> r;
  for (auto& e : impl_->entries) r.push_back(e->graph.get());
  return r;
}

CompiledFunction compile(CompiledFunction::Fn fn, CompileOptions opts) { return CompiledFunction(std::move(fn), std::move(opts)); }

}  // namespace npc
