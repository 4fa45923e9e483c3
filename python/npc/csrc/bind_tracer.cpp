// Bindings of the tracer layer: trace contexts, graphs, executables (python/npc/compiler).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "bindings.hpp"
#include "npc/fusion.hpp"
#include "npc/graph.hpp"
#include "tracer/trace.hpp"

namespace npc::py_bind {

namespace {
// NumPy type number -> npc dtype code (-1: not native to npc). On LP64 long and longlong
// are both int64.
int code_of_numpy(int num) {
  switch (num) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 2;
    case 3: return 3;
    case 4: return 4;
    case 5: return 5;
    case 6: return 6;
    case 7: case 9: return 7;
    case 8: case 10: return 8;
    case 23: return 9;
    case 11: return 10;
    case 12: return 11;
    case 14: return 12;
    case 15: return 13;
    default: return -1;
  }
}

// The NumPy dtype of an npc dtype.
py::dtype numpy_dtype(DType t) {
  static const int nums[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 23, 11, 12, 14, 15};
  return py::dtype(nums[static_cast<int>(t)]);
}

// A zero-copy npc view of an exact numpy.ndarray with a native, aligned dtype of npc (the
// fast path of npc._array._from_numpy); null otherwise.
py::object numpy_view_as_npc(PyObject* p, int& code, int& contig) {
  auto& api = py::detail::npy_api::get();
  if (Py_TYPE(p) != reinterpret_cast<PyTypeObject*>(api.PyArray_Type_)) return py::object();
  auto* arr = py::detail::array_proxy(p);
  auto* descr = py::detail::array_descriptor_proxy(arr->descr);
  code = code_of_numpy(descr->type_num);
  const bool native = descr->byteorder == '=' || descr->byteorder == '|' ||
                      (descr->byteorder == '<' && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
  if (code < 0 || !native || !(arr->flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_)) return py::object();
  Shape sh(arr->dimensions, arr->dimensions + arr->nd);
  Strides st(arr->strides, arr->strides + arr->nd);
  contig = (arr->flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) ? 2
           : (arr->flags & py::detail::npy_api::NPY_ARRAY_F_CONTIGUOUS_) ? 1 : 0;
  Py_INCREF(p);
  ndarray a = from_memory(arr->data, static_cast<DType>(code), std::move(sh), std::move(st),
                          [p] {
                            AcquireGil g;
                            Py_DECREF(p);
                          },
                          (arr->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_) != 0);
  PyArray r(std::move(a));
  r.base = py::reinterpret_borrow<py::object>(p);
  return py::cast(std::move(r));
}

std::vector<ndarray> to_arrays(py::handle seq) {
  std::vector<ndarray> r;
  for (py::handle h : seq) r.push_back(h.cast<PyArray&>());
  return r;
}
// Note [reporting compiled fp errors]
// Compiled kernels leave the floating-point error kinds they raised pending on the calling
// thread (npc/fperror.hpp, Note [naming fp errors] in src/fusion/backend.cpp). They are
// reported through numpy.errstate, as eager ufuncs do, right after the executable that
// raised them returned: on a replay (_Graph.__call__) and after each segment of a trace
// (the segment runners below, called by Context::run_segment), so an error under
// errstate(all="raise") stops the traced function where NumPy's would, at its first graph
// break after the op. The flags are taken before anything is reported, an executable that
// throws leaves none pending, and reporting runs with the thread's trace suspended: a
// FloatingPointError, a warning filter that raises or an errcall leaves neither pending
// flags nor an active trace behind (the exception unwinds through the traced function and
// npc.compile's cleanup).
void report_compiled_fp() {
  auto errs = take_named_fp_flags();
  if (errs.empty()) return;
  // A segment can run at a break inside an op that released the GIL (argmax of a flattened
  // array with symbolic sizes, ...): the report calls Python, so it takes the GIL.
  py::gil_scoped_acquire gil;
  tracer::Suspend untraced;
  py::object report = py::module_::import("npc._errstate").attr("report_compiled");
  try {
    for (auto& [bit, where] : errs) report(bit, where);
  } catch (py::error_already_set& e) {
    // As a C++ error, so that a trace whose segment raised can raise it again (Note [failed
    // segments] in src/tracer/trace_segments.cpp); raised in Python as the same error.
    if (!e.matches(PyExc_FloatingPointError)) throw;
    throw FloatingPointError(py::str(e.value()).cast<std::string>());
  }
}

// The kinds numpy.errstate raises on this thread now (npc::fp_raise_kinds).
int read_fp_raise_kinds() {
  AcquireGil gil;  // a graph may run inside an op that released the GIL
  try {
    static const char* const keys[] = {"divide", "over", "under", "invalid"};
    py::dict state = py::module_::import("numpy").attr("geterr")();
    int kinds = 0;
    for (int k = 0; k < 4; ++k)
      if (py::str(state[keys[k]]).cast<std::string>() == "raise") kinds |= 1 << k;
    return kinds;
  } catch (const py::error_already_set&) {
    return 0;  // (interpreter shutdown) the report raises nothing either
  }
}

// Runs `exe`, leaving the errors its kernels raised pending; none when it throws, except
// FpStop (Note [writes before a raising operation] in src/fusion/backend.cpp), whose errors
// the caller reports.
std::vector<ndarray> run_collecting_fp(const ir::Executable& exe, const ir::RunArgs& args) {
  try {
    return exe(args);
  } catch (const FpStop&) {
    throw;
  } catch (...) {
    take_named_fp_flags();
    throw;
  }
}

// After FpStop: the report raises (the error state raises the last error pending).
[[noreturn]] void report_stop() {
  report_compiled_fp();
  throw FpStop();  // (a report that raised nothing: the graph's results are gone)
}

// Runs `exe` and reports the errors its kernels raised (Note [reporting compiled fp errors]).
std::vector<ndarray> run_reporting_fp(const ir::Executable& exe, const ir::RunArgs& args) {
  std::vector<ndarray> out;
  try {
    out = run_collecting_fp(exe, args);
  } catch (const FpStop&) {
    report_stop();
  }
  report_compiled_fp();
  return out;
}

py::list wrap_all(std::vector<ndarray> v) {
  py::list l;
  for (auto& a : v) l.append(wrap(std::move(a)));
  return l;
}
std::vector<Scalar> to_scalars(py::handle seq) {
  std::vector<Scalar> r;
  for (py::handle h : seq) {
    if (PyLong_CheckExact(h.ptr())) {  // a runtime int (Note [runtime ints] in src/tracer/trace_nodes.cpp)
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
      if (!overflow) {
        r.push_back(Scalar::from_int(v));
        continue;
      }
      unsigned long long u = PyLong_AsUnsignedLongLong(h.ptr());
      if (PyErr_Occurred()) throw py::error_already_set();
      r.push_back(Scalar::from_uint(u));
      continue;
    }
    r.push_back(Scalar::from_double(h.cast<double>()));
  }
  return r;
}

// A graph (cached entry or segment) with the executable its backend made.
struct PyGraph {
  std::shared_ptr<ir::Graph> g;
  ir::Executable exe;
  std::string backend_used = "eager";
};

// npc.config.codegen_errors == "raise": backend failures reach the caller of npc.compile.
// Segments may be built at a break inside an op that released the GIL: it is taken here.
bool codegen_errors_raise() {
  AcquireGil gil;
  try {
    py::object cfg = py::module_::import("npc").attr("config");
    return py::hasattr(cfg, "codegen_errors") && std::string(py::str(cfg.attr("codegen_errors"))) == "raise";
  } catch (const py::error_already_set&) {
    return false;
  }
}

// Note [backend failures]
// A backend that cannot build an executable for a graph: with codegen_errors="raise" the
// exception reaches the npc.compile caller; with "warn" a RuntimeWarning names the cause and
// the graph runs on the eager interpreter. Host calls (Call nodes: numpy.random, index bounds
// checks) run between the fused kernels (Note [library calls] in src/fusion/lower_group.cpp).
ir::Executable make_exe(const std::shared_ptr<ir::Graph>& g, const std::string& backend, std::string& used,
                        std::string& error) {
  used = "eager";
  if (backend != "eager") {
    if (const ir::Backend* b = ir::find_backend(backend)) {
      try {
        ir::Executable e = (*b)(*g);
        used = backend;
        if (!g->index_checks.empty())  // Note [gathers] in include/npc/graph.hpp
          e = [g, e](const ir::RunArgs& a) { ir::check_index_inputs(*g, a.inputs); return e(a); };
        return e;
      } catch (const py::error_already_set&) {
        throw;  // a Python exception (KeyboardInterrupt while the compiler ran) is the caller's
      } catch (const std::exception& ex) {
        if (codegen_errors_raise()) throw;
        error = ex.what();
      }
    } else {
      error = "backend '" + backend + "' is not available";
      if (codegen_errors_raise()) throw ValueError("npc.compile: " + error);
    }
    AcquireGil gil;  // as in codegen_errors_raise
    if (PyErr_WarnEx(PyExc_RuntimeWarning,
                     ("npc.compile: backend '" + backend + "' failed, running the graph eagerly: " + error).c_str(),
                     1) != 0)
      throw py::error_already_set();
  }
  // The eager interpreter reports the errors of its ops as eager NumPy does.
  return [g](const ir::RunArgs& a) { return fusion::interpret_with_fp_errors(*g, a); };
}

// The executable the first run of a graph without breaks made, handed to take_graph so
// that the graph is lowered and compiled once.
struct LastGraph {
  std::shared_ptr<PyGraph> graph;
};

// Note [segment cache]
// Functions with graph breaks run their Python on every call; each segment's graph is looked
// up here by structural hash (and text, against collisions) so that its executable (for the
// fused backend: its compiled kernels) is built once. Graphs with host calls are not reused:
// their calls close over the Python arguments of the trace that made them.
struct CachedSegment {
  std::string backend;
  std::shared_ptr<ir::Graph> graph;
  ir::Executable exe;
};
std::mutex g_seg_mu;
std::unordered_map<size_t, std::vector<CachedSegment>> g_segments;
size_t g_segment_count = 0;
constexpr size_t kMaxSegments = 512;

// The shape of strided `a`'s cover and a's offset in it: a replay must bind a cover of the
// same layout as the trace's (part of the guard key; Note [strided inputs]).
py::tuple cover_layout(const ndarray& a, int64_t before, int64_t after) {
  ndarray c = tracer::covering_view(a, before, after);
  py::tuple shape(c.ndim());
  for (int d = 0; d < c.ndim(); ++d) shape[d] = py::int_(c.shape()[d]);
  return py::make_tuple(shape, a.offset() - c.offset());
}

// The contiguity part of an array's guard key: 2 C, 1 F, 0 strided; a strided array that
// is traced with its own strides (Note [strided inputs] in src/tracer/trace_inputs.cpp) is keyed by
// its strides instead.
py::object contig_key(const ndarray& a, int contig) {
  if (contig != 0 || !tracer::strided_input(a)) return py::int_(contig);
  py::tuple st(a.ndim() + 1);
  for (int d = 0; d < a.ndim(); ++d) st[d] = py::int_(a.strides()[d]);
  st[a.ndim()] = cover_layout(a, -1, -1);
  return st;
}

// The cached segment of `backend` equal to `g` (structural hash `h`), if any.
std::optional<tracer::SegmentRun> find_segment(const ir::Graph& g, size_t h, const std::string& backend) {
  std::lock_guard lk(g_seg_mu);
  if (auto it = g_segments.find(h); it != g_segments.end())
    for (auto& c : it->second)
      // The structure omits inputs that nothing reads: equal graphs may bind different counts.
      if (c.backend == backend && c.graph->num_inputs() == g.num_inputs() &&
          c.graph->num_scalars() == g.num_scalars() && c.graph->same_structure(g))
        return tracer::SegmentRun{c.graph, c.exe};
  return std::nullopt;
}

void cache_segment(size_t h, const std::string& backend, std::shared_ptr<ir::Graph> g, ir::Executable exe) {
  std::lock_guard lk(g_seg_mu);
  if (g_segment_count >= kMaxSegments) {
    g_segments.clear();
    g_segment_count = 0;
  }
  g_segments[h].push_back({backend, std::move(g), std::move(exe)});
  ++g_segment_count;
}

// The bytes of a bytes object or a contiguous byte buffer (a memoryview slice of a cache
// entry: no copy of a plan's megabytes), valid while `held` is.
std::string_view byte_view(const py::buffer& b, py::buffer_info& held) {
  held = b.request();
  if (held.ndim != 1 || held.itemsize != 1 || (held.size > 1 && held.strides[0] != 1))
    throw py::type_error("expected bytes or a contiguous buffer of bytes");
  return {static_cast<const char*>(held.ptr), static_cast<size_t>(held.size)};
}

// A graph of a loaded plan (Note [plan serialization] in src/tracer/plan_io.cpp) as a segment
// would get it: the cached equal graph's executable, else `g` compiled once and cached.
// `h` is g->structural_hash().
tracer::SegmentRun compiled_segment(const std::shared_ptr<ir::Graph>& g, size_t h, const std::string& backend) {
  if (std::optional<tracer::SegmentRun> found = find_segment(*g, h, backend)) return *found;
  std::string used, err;
  ir::Executable exe = make_exe(g, backend, used, err);
  cache_segment(h, backend, g, exe);
  return {g, exe};
}

std::vector<ndarray> run_segment_cached(const std::shared_ptr<ir::Graph>& shared, const std::vector<ndarray>& in,
                                        const std::vector<Scalar>& sc, const std::string& backend, bool reusable,
                                        tracer::SegmentRun* keep, int* reused) {
  const ir::Graph& g = *shared;
  bool cacheable = reusable;
  for (ir::NodeRef n : g.nodes()) cacheable = cacheable && n->kind != ir::NodeKind::Call;
  size_t h = 0;
  if (cacheable) {
    h = g.structural_hash();
    if (std::optional<tracer::SegmentRun> found = find_segment(g, h, backend)) {
      if (keep) *keep = *found;
      if (reused) ++*reused;
      if (tracer::in_background_segment()) return run_collecting_fp(found->exe, ir::RunArgs{in, sc});
      return run_reporting_fp(found->exe, ir::RunArgs{in, sc});
    }
  }
  std::string used, err;
  auto exe = make_exe(shared, backend, used, err);
  std::vector<ndarray> out;
  bool stopped = false;
  try {
    out = run_collecting_fp(exe, ir::RunArgs{in, sc});
  } catch (const FpStop&) {
    stopped = true;
  }
  if (keep) *keep = {shared, exe};
  if (cacheable) cache_segment(h, backend, shared, exe);
  // Once the segment is cached: an error raised here keeps it. (A segment running in the
  // background leaves its errors to the tracing thread: Note [segments in the background].)
  if (tracer::in_background_segment()) {
    if (stopped) throw FpStop();
    return out;
  }
  if (stopped) report_stop();
  report_compiled_fp();
  return out;
}

// The segment runner of Python trace contexts (a named type, so take_graph can reach the
// executable of the last run).
struct SegmentRunner {
  std::string backend;
  std::shared_ptr<LastGraph> last;
  int* reused = nullptr;  // the context's segments_reused
  std::vector<ndarray> operator()(const std::shared_ptr<ir::Graph>& g, const std::vector<ndarray>& in,
                                  const std::vector<Scalar>& sc, bool reusable, tracer::SegmentRun* keep) const {
    if (reusable) return run_segment_cached(g, in, sc, backend, reusable, keep, reused);
    // The whole program as one graph: its executable is kept for take_graph.
    auto pg = std::make_shared<PyGraph>();
    pg->g = g;
    std::string err;
    pg->exe = make_exe(pg->g, backend, pg->backend_used, err);
    last->graph = pg;
    return run_reporting_fp(pg->exe, ir::RunArgs{in, sc});
  }
};

// Note [loops] in src/tracer/trace_segments.cpp: a cut trace without breaks, replayed step by step
// (each step's errors reported after it, as when the segments ran while tracing).
struct PyPlan {
  std::shared_ptr<tracer::Plan> plan;
};

// The texts of a trace's segment graphs as a read-only sequence of str, each rendered when
// read (CompiledFunction.last_graphs): a loop's segments are many, and few are ever shown.
struct SegmentTexts {
  std::vector<std::shared_ptr<const ir::Graph>> graphs;
};

py::list node_table(const ir::Graph& g) {
  py::list l;
  for (ir::NodeRef n : g.nodes()) {
    std::string what = std::string(ir::kind_name(n->kind));
    if (n->kind == ir::NodeKind::Ufunc || n->kind == ir::NodeKind::Reduce || n->kind == ir::NodeKind::Prim)
      what += ":" + std::string(ir::op_name(n->op));
    if (n->kind == ir::NodeKind::View) what += ":" + std::string(ir::view_kind_name(n->view_kind()));
    py::list shape;
    for (ir::Dim d : n->shape) {
      if (d.is_static()) shape.append(d.value());
      else shape.append(py::str("s" + std::to_string(d.symbol())));
    }
    py::list args;
    for (ir::NodeRef a : n->args) args.append(a->id);
    l.append(py::make_tuple(n->id, what, static_cast<int>(n->dtype), py::tuple(shape), args));
  }
  return l;
}

// The interface of `g` as Python values (tests of graph serialization compare two graphs'):
// every field of ir::Graph's interface, the merged-evaluation data, and the Input and Scalar
// nodes' numbers, dtype codes and shapes (a symbol as its traced size), to make arguments from.
py::dict graph_interface(const ir::Graph& g) {
  py::dict d;
  auto ids = [](const std::vector<ir::NodeRef>& v) {
    std::vector<uint32_t> r;
    for (ir::NodeRef n : v) r.push_back(n->id);
    return r;
  };
  d["num_inputs"] = g.num_inputs();
  d["num_scalars"] = g.num_scalars();
  py::list symbols, writebacks, input_writes, index_checks, inputs, scalars;
  for (const ir::Symbol& s : g.symbols()) symbols.append(py::make_tuple(s.input, s.axis, s.hint));
  for (auto& [i, n] : g.writebacks) writebacks.append(py::make_tuple(i, n->id));
  for (auto& w : g.input_writes) input_writes.append(py::make_tuple(w.at, w.input, w.value->id));
  for (auto& c : g.index_checks) index_checks.append(py::make_tuple(c.input, c.extent, c.axis));
  std::vector<uint32_t> evaluations;
  for (ir::NodeRef n : g.nodes()) {
    evaluations.push_back(g.evaluations(n));
    if (n->kind == ir::NodeKind::Input) {
      py::list shape;
      for (ir::Dim dim : n->shape) shape.append(dim.is_static() ? dim.value() : g.symbols().at(dim.symbol()).hint);
      inputs.append(py::make_tuple(n->params[0], static_cast<int>(n->dtype), py::tuple(shape)));
    } else if (n->kind == ir::NodeKind::Scalar) {
      scalars.append(py::make_tuple(n->params[0], static_cast<int>(n->dtype)));
    }
  }
  d["symbols"] = symbols;
  d["outputs"] = ids(g.outputs);
  d["writebacks"] = writebacks;
  d["input_writes"] = input_writes;
  d["index_checks"] = index_checks;
  d["owned_inputs"] = g.owned_inputs;
  d["unread_outputs"] = g.unread_outputs;
  d["calls"] = g.calls.size();
  d["evaluations"] = evaluations;
  d["evaluation_order"] = g.evaluation_order();
  d["input_nodes"] = inputs;
  d["scalar_nodes"] = scalars;
  return d;
}
}  // namespace

void bind_tracer(py::module_& m) {
  // Leaked on purpose (released after interpreter shutdown otherwise).
  static auto& graph_break_exc = *new py::exception<tracer::GraphBreak>(m, "_GraphBreak", PyExc_RuntimeError);
  static auto& static_scalar_exc = *new py::exception<tracer::StaticScalar>(m, "_StaticScalar", PyExc_RuntimeError);
  // A BaseException, as GeneratorExit: the traced program's `except Exception` must not turn
  // the stop of Note [dims made static] (compiler/_api.py) into its own control flow.
  static auto& static_shape_exc = *new py::exception<tracer::StaticShape>(m, "_StaticShape", PyExc_BaseException);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tracer::GraphBreak& e) {
      PyErr_SetString(graph_break_exc.ptr(), e.what());
    } catch (const tracer::StaticScalar& e) {
      PyErr_SetString(static_scalar_exc.ptr(), e.what());
    } catch (const tracer::StaticShape& e) {
      PyErr_SetString(static_shape_exc.ptr(), e.what());
    } catch (const ir::VerifyError& e) {
      PyErr_SetString(PyExc_AssertionError, e.what());
    }
  });

  set_fp_raise_kinds_reader(&read_fp_raise_kinds);  // Note [writes before a raising operation]
  // A trace that ends in a retrace (runtime scalars made static) is dropped with its warnings:
  // the floating-point errors its eager work left pending (a value cast before the break
  // that raised _StaticScalar) go with it, so the retrace reports them once.
  m.def("_discard_fp_flags", [] {
    take_fp_flags();
    take_named_fp_flags();
  });

  py::class_<PyGraph, std::shared_ptr<PyGraph>>(m, "_Graph")
      .def("__str__", [](const PyGraph& g) { return g.g->str(); })
      .def_property_readonly("backend", [](const PyGraph& g) { return g.backend_used; })
      .def_property_readonly("num_inputs", [](const PyGraph& g) { return g.g->num_inputs(); })
      .def_property_readonly("structural_hash", [](const PyGraph& g) { return g.g->structural_hash(); })
      .def("nodes", [](const PyGraph& g) { return node_table(*g.g); },
           "(id, kind[:op], dtype code, shape, arg ids) for each node, in topological order")
      .def("verify", [](const PyGraph& g, const std::string& pass) { ir::verify(*g.g, pass); })
      .def("__call__", [](const PyGraph& g, py::handle inputs, py::handle scalars) {
        std::vector<ndarray> in = to_arrays(inputs);
        std::vector<Scalar> sc = to_scalars(scalars);
        return wrap_all(run_reporting_fp(g.exe, ir::RunArgs{in, sc}));
      })
      // Accuracy checking (NPC_REPRO=accuracy, python/npc/compiler/_repro.py).
      .def_property_readonly("output_ids", [](const PyGraph& g) {
        std::vector<uint32_t> r;
        for (ir::NodeRef o : g.g->outputs) r.push_back(o->id);
        return r;
      })
      .def_property_readonly("writes_inputs", [](const PyGraph& g) { return !g.g->writebacks.empty(); })
      // Graph serialization (Note [graph serialization] in src/tracer/graph_io.cpp), for tests.
      .def("serialize", [](const PyGraph& g) { return py::bytes(ir::serialize(*g.g)); },
           "the graph's bytes (ValueError for a graph with host calls)")
      .def("same_structure", [](const PyGraph& g, const PyGraph& o) { return g.g->same_structure(*o.g); })
      .def("interface", [](const PyGraph& g) { return graph_interface(*g.g); },
           "the interface fields, evaluation data and Input/Scalar nodes as a dict")
      .def("run_eager", [](const PyGraph& g, py::handle inputs, py::handle scalars) {
        std::vector<ndarray> in = to_arrays(inputs);
        std::vector<Scalar> sc = to_scalars(scalars);
        // A reference run: its floating-point errors are not reported (the compiled run's are).
        return wrap_all(fusion::interpret_with_fp_errors(*g.g, ir::RunArgs{in, sc}, false));
      }, "runs the graph on the eager interpreter (write-backs go into `inputs`)")
      .def("subgraph", [](const PyGraph& g, std::vector<uint32_t> ids, const std::string& backend) {
        std::vector<ir::NodeRef> outs;
        const auto& nodes = g.g->nodes();
        for (uint32_t i : ids) {
          if (i >= nodes.size()) throw IndexError("npc: node id out of range");
          outs.push_back(nodes[i]);
        }
        auto pg = std::make_shared<PyGraph>();
        pg->g = std::make_shared<ir::Graph>(ir::subgraph(*g.g, outs));
        std::string err;
        pg->exe = make_exe(pg->g, backend, pg->backend_used, err);
        return pg;
      }, "the graph computing only the nodes `ids`, compiled with `backend`");

  py::class_<SegmentTexts>(m, "_SegmentTexts")
      .def("__len__", [](const SegmentTexts& t) { return t.graphs.size(); })
      .def("__getitem__", [](const SegmentTexts& t, py::ssize_t i) {
        const auto n = static_cast<py::ssize_t>(t.graphs.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw py::index_error("segment index out of range");
        return t.graphs[static_cast<size_t>(i)]->str();
      })
      .def("__iter__", [](const SegmentTexts& t) {
        py::list l;
        for (auto& g : t.graphs) l.append(py::str(g->str()));
        return py::iter(l);
      });

  m.def("_segment_graph", [](const SegmentTexts& t, py::ssize_t i, const std::string& backend) {
    const auto n = static_cast<py::ssize_t>(t.graphs.size());
    if (i < 0 || i >= n) throw py::index_error("segment index out of range");
    auto pg = std::make_shared<PyGraph>();
    // Backends only read the graph: the segment's own graph, compiled again with `backend`.
    pg->g = std::const_pointer_cast<ir::Graph>(t.graphs[static_cast<size_t>(i)]);
    std::string err;
    pg->exe = make_exe(pg->g, backend, pg->backend_used, err);
    return pg;
  }, "segment graph `i` of a trace (CompiledFunction.last_graphs) compiled with `backend` (tests)");
  m.def("_graph_deserialize", [](const py::buffer& bytes, const std::string& backend) {
    py::buffer_info held;
    const std::string_view view = byte_view(bytes, held);
    auto pg = std::make_shared<PyGraph>();
    pg->g = std::make_shared<ir::Graph>(ir::deserialize(view));
    std::string err;
    pg->exe = make_exe(pg->g, backend, pg->backend_used, err);
    return pg;
  }, "the graph _Graph.serialize() wrote, compiled with `backend` (ValueError for bad bytes; tests)");

  py::class_<PyPlan>(m, "_Plan")
      .def("__call__", [](const PyPlan& p, py::handle inputs, py::handle scalars) {
        std::vector<ndarray> in = to_arrays(inputs);
        std::vector<Scalar> sc = to_scalars(scalars);
        return wrap_all(p.plan->run(in, sc, run_reporting_fp));
      })
      // Plan serialization (Note [plan serialization] in src/tracer/plan_io.cpp), for tests.
      .def("serialize", [](const PyPlan& p) { return py::bytes(tracer::serialize(*p.plan)); },
           "the plan's bytes (ValueError for a plan with host calls)")
      .def_property_readonly("num_steps", [](const PyPlan& p) { return p.plan->steps.size(); })
      .def_property_readonly("num_graphs", [](const PyPlan& p) {
        // Distinct graphs (executables) among the steps: the rest are reuses.
        std::set<const ir::Graph*> seen;
        for (auto& s : p.plan->steps) seen.insert(s.run.graph.get());
        return seen.size();
      })
      .def("__str__", [](const PyPlan& p) {
        std::string r;
        for (size_t i = 0; i < p.plan->steps.size(); ++i)
          r += "# step " + std::to_string(i) + "\n" + p.plan->steps[i].run.graph->str();
        return r;
      });

  m.def("_plan_load", [](const py::buffer& bytes, const std::string& backend) {
    py::buffer_info held;
    tracer::Plan p = tracer::deserialize_plan(byte_view(bytes, held), [&](std::shared_ptr<ir::Graph> g, size_t h) {
      return compiled_segment(g, h, backend);
    });
    return PyPlan{std::make_shared<tracer::Plan>(std::move(p))};
  }, "the plan _Plan.serialize() wrote, its graphs compiled with `backend` (ValueError for bad bytes; tests)");

  py::class_<tracer::Context>(m, "_TraceContext")
      .def(py::init([](std::string backend) {
             auto c = std::make_unique<tracer::Context>();
             // Segments of functions with graph breaks run through the same backend choice.
             c->runner = SegmentRunner{backend, std::make_shared<LastGraph>(), &c->segments_reused};
             c->report_fp = [] { report_compiled_fp(); };
             c->before_background = [] { fusion::current_config(); };
             return c;
           }),
           py::arg("backend") = "eager")
      .def("add_input", [](tracer::Context& c, PyArray& a, std::vector<int> dyn, bool f_order,
                           std::pair<int64_t, int64_t> valid) {
        return wrap(c.add_input(a, dyn, f_order, valid.first, valid.second));
      }, py::arg("a"), py::arg("dynamic"), py::arg("f_order") = false,
         py::arg("valid") = std::pair<int64_t, int64_t>(-1, -1))
      .def("add_scalar", &tracer::Context::add_scalar)
      .def("add_runtime_int", [](tracer::Context& c, py::int_ v) {
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
        if (!overflow) return c.add_runtime_int(Scalar::from_int(i));
        unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
        if (PyErr_Occurred()) throw py::error_already_set();
        return c.add_runtime_int(Scalar::from_uint(u));
      })
      .def("unconsumed_runtime_ints", &tracer::Context::unconsumed_runtime_ints)
      .def("runtime_int_dtypes", &tracer::Context::runtime_int_dtypes)
      .def("input_index", [](const tracer::Context& c, PyArray& a) { return c.input_index(a); })
      .def("activate", [](tracer::Context& c) {
        if (tracer::current()) throw ValueError("npc.compile: nested tracing is not supported");
        tracer::set_current(&c);
      })
      .def("graph_break", [](tracer::Context& c, const std::string& reason) {
        c.break_graph(reason);  // segments report their errors (Note [reporting compiled fp errors])
      })
      .def("output_view", [](const tracer::Context& c, PyArray& a) -> py::object {
        auto v = c.output_view(a);
        return v ? py::cast(std::move(*v)) : py::none();
      })
      // Note [results that view each other] in src/tracer/trace_segments.cpp.
      .def("buffer_id", [](const tracer::Context& c, PyArray& a) { return c.buffer_id(a); })
      .def("buffer_view", [](const tracer::Context& c, PyArray& a) -> py::object {
        auto v = c.buffer_view(a);
        if (!v) return py::none();
        return py::make_tuple(wrap(std::move(v->first)), py::cast(std::move(v->second)));
      })
      .def_readwrite("keep_undo", &tracer::Context::keep_undo)
      .def_readwrite("static_views", &tracer::Context::static_views)
      .def_property_readonly("static_dims", &tracer::Context::static_dims)
      .def("undo_writes", [](tracer::Context& c) { c.undo_writes(); },
           "puts back what segments wrote into arrays the trace does not own (Note [undoing an abandoned trace's writes])")
      .def("settle", [](tracer::Context& c) { c.settle(); },
           "waits for the segment running in the background (Note [segments in the background])")
      .def("finish", [](tracer::Context& c, py::handle outs) {
        return wrap_all(c.finish(to_arrays(outs)));
      })
      .def("take_graph", [](tracer::Context& c, const std::string& backend) -> py::object {
        auto g = c.take_graph();
        if (!g) return py::none();
        if (auto* r = c.runner.target<SegmentRunner>(); r && r->last->graph && r->backend == backend) {
          auto pg = std::move(r->last->graph);
          return py::cast(pg);
        }
        auto pg = std::make_shared<PyGraph>();
        pg->g = std::move(g);
        std::string err;
        pg->exe = make_exe(pg->g, backend, pg->backend_used, err);
        return py::cast(pg);
      })
      .def_property_readonly("bound_inputs", [](const tracer::Context& c) { return wrap_all(c.bound_inputs()); })
      // Note [loops] in src/tracer/trace_segments.cpp.
      .def("set_node_budget", &tracer::Context::set_node_budget)
      .def_property_readonly("num_cuts", &tracer::Context::num_cuts)
      .def_readonly("segments_reused", &tracer::Context::segments_reused)
      .def_property_readonly("top_inputs", [](const tracer::Context& c) { return wrap_all(c.top_inputs()); })
      .def("take_plan", [](tracer::Context& c) -> py::object {
        auto p = c.take_plan();
        if (!p) return py::none();
        return py::cast(PyPlan{std::move(p)});
      })
      .def_readonly("num_user_inputs", &tracer::Context::num_user_inputs)
      .def_property_readonly("breaks", [](const tracer::Context& c) { return c.breaks(); })
      .def_property_readonly("segment_graphs", [](const tracer::Context& c) { return SegmentTexts{c.segment_graphs}; },
                             "the text of each segment's graph, rendered when read")
      .def_readonly("segment_graphs_raw", &tracer::Context::segment_graphs_raw)
      .def_readwrite("keep_raw_graphs", &tracer::Context::keep_raw_graphs)
      .def_readonly("ops_per_graph", &tracer::Context::ops_per_graph)
      .def_property_readonly("constraints", [](const tracer::Context& c) {
        py::list l;
        for (auto& k : c.constraints()) l.append(py::make_tuple(k.in_a, k.ax_a, k.in_b, k.ax_b, k.size));
        return l;
      })
      .def("fill", [](tracer::Context& c, py::handle shape, py::handle value, int code, int scalar_index) {
        // numpy.full/zeros/ones inside a compiled function: a Fill node (never a constant array).
        DType t = static_cast<DType>(code);
        Shape s = to_shape(shape);
        ir::NodeRef v = scalar_index >= 0 ? c.graph().scalar(scalar_index, DType::Float64)
                                          : c.concrete_value(from_python(value));
        std::vector<ir::NodeRef> args{c.graph().cast(v, t)};
        ir::NodeRef n = c.graph().prim(OpId::fill, args, t, ir::static_shape(s));
        return wrap(c.new_value(n, s));
      })
      .def("iota", [](tracer::Context& c, int64_t n, int code) {
        // 0, 1, ..., n - 1 of an integer dtype as an Iota node (numpy.eye's indices: Note
        // [traced eye] in _capture.py), fused into the kernels that read it.
        DType t = static_cast<DType>(code);
        if (n < 0 || !is_integer(t)) throw ValueError("iota: a non-negative length of an integer dtype");
        std::vector<ir::NodeRef> args{c.concrete_value(npc::Scalar::from_int(0)), c.concrete_value(npc::Scalar::from_int(1))};
        for (ir::NodeRef& a : args) a = c.graph().cast(a, t);
        const Shape s{n};
        ir::NodeRef r = c.graph().prim(OpId::iota, args, t, ir::static_shape(s));
        return wrap(c.new_value(r, s));
      })
      .def("fill_like", [](tracer::Context& c, PyArray& proto, py::handle value, int code, int scalar_index,
                           const std::string& order) {
        // numpy.ones_like/zeros_like/empty_like/full_like of a traced array: a Fill node of
        // the prototype's shape, symbolic dims included (its sizes are never frozen), laid
        // out as eagerly (like_axes of the prototype: an F-ordered one gives an F-ordered
        // result): the node over the axes in that order, traced as the transpose back.
        DType t = static_cast<DType>(code);
        ir::NodeRef p = c.node_of(proto);
        ir::NodeRef v = scalar_index >= 0 ? c.graph().scalar(scalar_index, DType::Float64)
                                          : c.concrete_value(from_python(value));
        std::vector<ir::NodeRef> args{c.graph().cast(v, t)};
        const std::vector<int> axes = like_axes(proto, order_from_name(order));
        ir::SymShape ps;
        Shape ph;
        std::vector<int64_t> back(axes.size());
        for (size_t i = 0; i < axes.size(); ++i) {
          ps.push_back(p->shape[axes[i]]);
          ph.push_back(proto.shape()[axes[i]]);
          back[axes[i]] = static_cast<int64_t>(i);
        }
        ir::NodeRef n = c.graph().prim(OpId::fill, args, t, ps);
        ndarray r = c.new_value(n, ph);
        return wrap(std::is_sorted(axes.begin(), axes.end()) ? r : r.transpose(back));
      })
      .def("host_call", [](tracer::Context& c, py::function fn, std::string name, py::handle example) {
        // A NumPy call with no array argument (numpy.random.*): runs again on every replay.
        ndarray ex = example.cast<PyArray&>();
        // Graphs (and their copies) may be destroyed with the GIL released (a graph break
        // inside an op that runs without it): the Python function is released under the GIL.
        std::shared_ptr<py::function> held(new py::function(fn), [](py::function* p) {
          AcquireGil gil;
          delete p;
        });
        ir::HostCall call = [held](std::span<const ndarray>) {
          AcquireGil gil;
          py::object r = (*held)();
          return static_cast<ndarray>(r.cast<PyArray&>());
        };
        std::vector<ir::NodeRef> none;
        ir::NodeRef n = c.graph().call(call, name, none, ex.dtype(), ir::static_shape(ex.shape()));
        // `example` was drawn with the generator's state restored afterwards, so the stream
        // advances once per call, when the graph runs the call, as in eager code.
        return wrap(c.new_value(n, ex.shape()));
      });
  // Note [results that view inputs] in src/tracer/trace.hpp.
  py::class_<tracer::OutputView>(m, "_OutputView")
      .def_readonly("input", &tracer::OutputView::input)
      .def("__call__", [](const tracer::OutputView& v, py::handle inputs) {
        std::vector<ndarray> in = to_arrays(inputs);
        return wrap(v.apply(in));
      })
      .def("apply_to", [](const tracer::OutputView& v, const PyArray& base, py::handle inputs) {
        std::vector<ndarray> in = to_arrays(inputs);
        return wrap(v.apply_to(base, in));
      });
  m.def("_alias_of", [](py::handle origin, const PyArray& v, bool writeable) -> py::object {
    // The view `v` (an npc array over the memory of argument `origin`) as a view of `origin`
    // itself, of its type, with NumPy's base: `origin`, or the array owning its memory.
    if (PyArray* o = array_ptr(origin)) {
      ndarray r = v;
      if (!writeable || !o->writeable()) r.set_writeable(false);
      py::object base = o->base.is_none() ? py::reinterpret_borrow<py::object>(origin) : o->base;
      py::object out = new_array_object(std::move(r), std::move(base));
      if (o->warn_on_write) array_ptr(out)->warn_on_write = true;
      return finalize_like(std::move(out), origin);
    }
    std::vector<py::ssize_t> sh(v.shape().begin(), v.shape().end()), st(v.strides().begin(), v.strides().end());
    py::array r(numpy_dtype(v.dtype()), sh, st, v.data(), origin);  // NumPy collapses the base as for its views
    if (!writeable) py::detail::array_proxy(r.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return r;
  });
  m.def("_deactivate_trace", [] {
    // A step still running in the background (the trace ended by an exception) finishes
    // before anything else runs; its error goes with the trace (Note [segments in the
    // background] in src/tracer/trace_segments.cpp).
    if (tracer::Context* c = tracer::current()) c->settle(false);
    tracer::set_current(nullptr);
  });
  m.def("_realize", [](PyArray& a) { a.realize(); });
  m.def("_is_traced", [](const PyArray& a) { return a.is_traced(); });
  // Note [scalar results] in src/tracer/trace.hpp.
  // Any object (False for all but npc arrays): the checks of Note [writes into scalar
  // results] in bind_ndarray.cpp pass out= and destination arguments as they come.
  m.def("_scalar_result", [](py::handle o) {
    const PyArray* a = array_ptr(o);
    return a && a->ndim() == 0 && tracer::is_scalar_result(*a);
  });
  m.def("_mark_scalar", [](const PyArray& a) { tracer::mark_scalar(a); });
  m.def("_numpy_views", [](py::list outs, py::list unwrap) {
    // NumPy views of npc results (NumPy arrays in -> NumPy arrays out); 0-d results whose
    // unwrap flag is set become NumPy scalars.
    py::list r;
    for (size_t i = 0; i < outs.size(); ++i) {
      py::handle h = outs[i];
      const PyArray& a = h.cast<const PyArray&>();
      std::vector<py::ssize_t> sh(a.shape().begin(), a.shape().end()), st(a.strides().begin(), a.strides().end());
      py::array v(numpy_dtype(a.dtype()), sh, st, a.data(), h);
      if (!a.writeable()) py::detail::array_proxy(v.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
      if (unwrap[i].cast<bool>()) r.append(v[py::tuple()]);
      else r.append(v);
    }
    return r;
  });
  m.def("_is_tracing", [] { return tracer::current() != nullptr; });
  // The guard key of a flat argument tuple on the hot path of a compiled call: for npc
  // arrays (dtype code, shape, contiguity class, index of an identical earlier argument),
  // "F" for Python floats (runtime scalars), (type, value) for ints, bools, str and None.
  // Returns (key, arrays, floats), or None when an argument needs the general Python path.
  m.def("_covering", [](const PyArray& a, std::pair<int64_t, int64_t> valid) {
          return wrap(tracer::covering_view(a, valid.first, valid.second));
        }, py::arg("a"), py::arg("valid") = std::pair<int64_t, int64_t>(-1, -1),
        "the C-contiguous array over the memory of a strided argument (Note [strided inputs]); `valid`: "
        "bytes of valid memory before its lowest and past its highest element (-1: its storage's)");
  m.def("_cover_layout", [](const PyArray& a, std::pair<int64_t, int64_t> valid) {
    return cover_layout(a, valid.first, valid.second);
  });
  m.def("_strided_input", [](const PyArray& a) { return tracer::strided_input(a); });
  m.def("_build_id", [] { return fusion::npc_build_id(); },
        "the GNU build id of the object holding npc (part of the persisted traces' key: Note [persisted traces])");
  m.def("_guard_key", [](py::tuple args) -> py::object {
    const size_t n = args.size();
    py::tuple key(n);
    py::list arrays, floats;
    std::vector<PyObject*> seen;
    // Leaked on purpose: a static py::object would be released after interpreter shutdown.
    static py::str& F = *new py::str("F");
    static py::str& N = *new py::str("N");
    static py::str& CPU = *new py::str("cpu");
    for (size_t i = 0; i < n; ++i) {
      PyObject* p = PyTuple_GET_ITEM(args.ptr(), i);
      py::handle h(p);
      int code = -1, contig = 0;
      if (py::object v = numpy_view_as_npc(p, code, contig)) {
        // NumPy arrays: converted here, zero-copy; "N" marks NumPy-in (NumPy arrays out).
        int alias = -1;
        for (size_t k = 0; k < seen.size(); ++k)
          if (seen[k] == p) { alias = static_cast<int>(k); break; }
        seen.push_back(p);
        const PyArray& a = v.cast<const PyArray&>();
        py::tuple shape(a.ndim());
        for (int d = 0; d < a.ndim(); ++d) shape[d] = py::int_(a.shape()[d]);
        // A strided NumPy array: its cover depends on the memory past it (the Python key).
        if (contig == 0 && tracer::strided_input(a)) return py::none();
        key[i] = py::make_tuple(code, shape, contig, alias, CPU, false, N);  // NumPy arrays are on the CPU
        arrays.append(v);
        continue;
      }
      if (py::isinstance<PyArray>(h)) {
        const PyArray& a = h.cast<const PyArray&>();
        if (a.is_traced()) return py::none();
        int alias = -1;
        for (size_t k = 0; k < seen.size(); ++k)
          if (seen[k] == p) { alias = static_cast<int>(k); break; }
        seen.push_back(p);
        py::tuple shape(a.ndim());
        for (int d = 0; d < a.ndim(); ++d) shape[d] = py::int_(a.shape()[d]);
        int contig = a.is_c_contiguous() ? 2 : a.is_f_contiguous() ? 1 : 0;
        // Device and requires_grad, read as the Python key builder reads them; subclasses
        // (which may override them) take the general path. npc arrays have no
        // requires_grad attribute yet: looked up once per type, not per call.
        if (Py_TYPE(p) != reinterpret_cast<PyTypeObject*>(py::type::of<PyArray>().ptr())) return py::none();
        static const bool has_rg = py::hasattr(py::type::of<PyArray>(), "requires_grad");
        py::object dev = py::str(h.attr("device"));
        py::object rg = has_rg ? py::object(py::bool_(py::getattr(h, "requires_grad", py::bool_(false))))
                               : py::object(py::bool_(false));
        key[i] = py::make_tuple(static_cast<int>(a.dtype()), shape, contig_key(a, contig), alias, dev, rg);
        arrays.append(h);
      } else if (PyFloat_CheckExact(p)) {
        key[i] = F;
        floats.append(h);
      } else if (PyLong_CheckExact(p) || PyBool_Check(p) || p == Py_None || PyUnicode_CheckExact(p)) {
        key[i] = py::make_tuple(py::handle(reinterpret_cast<PyObject*>(Py_TYPE(p))), h);
      } else {
        return py::none();
      }
    }
    return py::make_tuple(key, arrays, floats);
  });
  // Note [aliasing inputs]: which of the arrays (npc or NumPy) of a compiled call share
  // memory: a tuple of (i, j, same) for each overlapping pair i < j, `same` when they are
  // one object. Part of the guard key; a pair of different overlapping arrays runs eagerly.
  m.def("_overlaps", [](py::sequence arrays) -> py::tuple {
    struct Span { PyObject* obj; uintptr_t lo, hi; };
    std::vector<Span> spans;
    for (py::handle h : arrays) {
      int code = -1, contig = 0;
      py::object v = numpy_view_as_npc(h.ptr(), code, contig);
      py::handle src = v ? py::handle(v) : h;
      if (!py::isinstance<PyArray>(src)) {
        spans.push_back({nullptr, 0, 0});  // not an array: never paired
        continue;
      }
      const PyArray& a = src.cast<const PyArray&>();
      if (a.is_traced() || a.size() == 0) {
        spans.push_back({h.ptr(), 0, 0});
        continue;
      }
      uintptr_t base = reinterpret_cast<uintptr_t>(a.data());
      int64_t lo = 0, hi = static_cast<int64_t>(a.itemsize());
      for (int d = 0; d < a.ndim(); ++d) {
        int64_t ext = (a.shape()[d] - 1) * a.strides()[d];
        (ext < 0 ? lo : hi) += ext;
      }
      spans.push_back({h.ptr(), base + lo, base + hi});
    }
    py::list out;
    for (size_t i = 0; i < spans.size(); ++i)
      for (size_t j = i + 1; j < spans.size(); ++j) {
        if (!spans[i].obj || !spans[j].obj) continue;
        bool same = spans[i].obj == spans[j].obj;
        if (same || (spans[i].lo < spans[j].hi && spans[j].lo < spans[i].hi))
          out.append(py::make_tuple(i, j, same));
      }
    return py::tuple(out);
  });
  m.def("_set_break_annotator", [](py::object fn) {
    if (fn.is_none()) {
      tracer::g_break_annotator = nullptr;
      return;
    }
    tracer::g_break_annotator = [fn](const std::string& r) {
      AcquireGil gil;
      return fn(r).cast<std::string>();
    };
  });
  m.def("_set_fullgraph", [](bool on) { tracer::g_fullgraph = on; });
  m.def("_background_segments", [](int mode) { return tracer::g_background_segments.exchange(mode); },
        "0: steps of cut traces run on the tracing thread (the default), 1: on a thread of their own; "
        "returns the previous mode (Note [segments in the background])");
  // Note [segments in the background] in src/tracer/trace_segments.cpp: waits give the GIL up.
  tracer::g_blocking = [](const std::function<void()>& wait) {
    if (Py_IsInitialized() && PyGILState_Check()) {
      py::gil_scoped_release nogil;
      wait();
    } else {
      wait();
    }
  };
  // Note [aligned cuts] in src/tracer/trace_segments.cpp: the user's frames (outside npc and NumPy,
  // whose directories are given) and their instruction offsets, hashed.
  m.def("_set_position_dirs", [](std::vector<std::string> dirs) {
    tracer::g_position = [dirs](bool with_line) -> std::pair<uint64_t, uint64_t> {
      AcquireGil gil;
      static std::unordered_map<PyCodeObject*, bool> internal;  // code objects live as long as their functions
      uint64_t h = 1469598103934665603ull, line = 0;
      bool any = false;
      PyFrameObject* f = PyEval_GetFrame();
      Py_XINCREF(f);
      while (f) {
        PyCodeObject* code = PyFrame_GetCode(f);
        auto it = internal.find(code);
        if (it == internal.end()) {
          std::string file = py::str(reinterpret_cast<PyObject*>(code->co_filename));
          bool in = false;
          for (auto& d : dirs) in = in || file.compare(0, d.size(), d) == 0;
          Py_INCREF(code);  // kept: its address is the cache key
          it = internal.emplace(code, in).first;
        }
        if (!it->second) {
          if (!any && with_line)
            // (code, line): the code object's address above bit 24, the line below.
            line = ((static_cast<uint64_t>(reinterpret_cast<uintptr_t>(code)) >> 4) << 24) |
                   (static_cast<uint64_t>(PyFrame_GetLineNumber(f)) & 0xFFFFFF) | (uint64_t(1) << 63);
          any = true;
          for (uint64_t x : {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(code)),
                             static_cast<uint64_t>(PyFrame_GetLasti(f))}) {
            h ^= x;
            h *= 1099511628211ull;
          }
        }
        Py_DECREF(code);
        PyFrameObject* back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
      }
      return any ? std::pair<uint64_t, uint64_t>{h | 1, line} : std::pair<uint64_t, uint64_t>{0, 0};
    };
  });
  m.def("_current_graph_break", [](const std::string& reason) {
    if (tracer::Context* c = tracer::current()) c->break_graph(reason);
  });
  m.def("_verify_enabled", &ir::verify_enabled);
  m.def("_clear_segment_cache", [] {
    {
      std::lock_guard lk(g_seg_mu);
      g_segments.clear();
      g_segment_count = 0;
    }
    fusion::reset_distinct_kernels();  // kernels_compiled counts from here (npc.compiler.reset)
  });
  m.def("_backends", [] {
    std::vector<std::string> r{"eager"};
    if (ir::find_backend("fused")) r.push_back("fused");
    return r;
  });
}

}  // namespace npc::py_bind
