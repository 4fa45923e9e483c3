// Bindings of the fusion layer: the fused backend's settings, counters and JIT cache.
// Importing npc registers the "fused" backend with the tracer.
#include <pybind11/stl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bindings.hpp"
#include "fusion/disk_cache.hpp"
#include "npc/fusion.hpp"
#include "tracer/trace.hpp"

namespace npc::py_bind {

namespace {
OpId op_by_name(const std::string& n) {
  for (int i = 0; i < kNumOps; ++i)
    if (ir::op_name(static_cast<OpId>(i)) == n) return static_cast<OpId>(i);
  throw py::value_error("unknown op '" + n + "'");
}

// A graph built directly from Python (tests and benchmarks of the fused backend without the
// tracer): nodes are referred to by their position in `nodes`.
struct PyGraph {
  std::shared_ptr<ir::Graph> g = std::make_shared<ir::Graph>();
  std::vector<ir::NodeRef> nodes;
  int add(ir::NodeRef n) { nodes.push_back(n); return static_cast<int>(nodes.size()) - 1; }
  ir::NodeRef at(int i) const { return nodes.at(i); }
  std::vector<ir::NodeRef> many(const std::vector<int>& ids) const {
    std::vector<ir::NodeRef> v;
    for (int i : ids) v.push_back(at(i));
    return v;
  }
};
// Reads the fused backend's settings from npc.config (python/npc/_fusion.py registers them).
void refresh_from_npc_config(fusion::Config& c) {
  if (!Py_IsInitialized()) return;
  // A segment lowered in the background uses the settings the tracing thread read when it
  // started it (Note [segments in the background] in src/tracer/trace_segments.cpp): it does
  // not wait for the GIL.
  if (tracer::in_background_segment()) return;
  AcquireGil gil;
  try {
    py::object cfg = py::module_::import("npc._config").attr("config");
    if (!py::hasattr(cfg, "codegen_errors")) return;
    c.cxx = py::str(cfg.attr("cxx"));
    c.flags = py::str(cfg.attr("cxxflags"));
    c.cache_dir = py::str(cfg.attr("cache_dir"));
    c.raise_errors = std::string(py::str(cfg.attr("codegen_errors"))) == "raise";
    if (py::hasattr(cfg, "compile_timeout")) {
      py::object t = cfg.attr("compile_timeout");
      c.compile_timeout = t.is_none() ? 0.0 : t.cast<double>();
    }
    if (py::hasattr(cfg, "lowering_cache")) c.lowering_cache = static_cast<bool>(py::bool_(cfg.attr("lowering_cache")));
    if (py::hasattr(cfg, "cache_size_limit")) {
      py::object n = cfg.attr("cache_size_limit");
      c.cache_size_limit = n.is_none() ? 0 : n.cast<int64_t>();
    }
  } catch (py::error_already_set& e) {
    e.restore();
    PyErr_Clear();
  }
}

// Note [GIL while compiling]
// jit() waits for the C++ compiler with the GIL released, wherever the compile was started
// from (npc.compile's first call, a new stride variant at run time, _fusion_jit), so other
// Python threads keep running; every 50 ms it polls the signal handlers, so Ctrl-C raises
// KeyboardInterrupt in the main thread promptly (the compiler is killed first).
void* release_gil_for_compile() { return PyGILState_Check() ? new ReleaseGil() : nullptr; }
void restore_gil_after_compile(void* token) { delete static_cast<ReleaseGil*>(token); }
void poll_signals_while_compiling() {
  AcquireGil gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}
}  // namespace

void bind_fusion(py::module_& m) {
  fusion::register_backend();
  fusion::set_config_refresh(&refresh_from_npc_config);
  fusion::WaitHooks hooks;
  hooks.release = &release_gil_for_compile;
  hooks.restore = &restore_gil_after_compile;
  hooks.poll = &poll_signals_while_compiling;
  fusion::set_wait_hooks(hooks);
  py::register_exception<fusion::CodegenError>(m, "CodegenError", PyExc_RuntimeError);
  m.def("_fusion_get_config", [] {
    const auto& c = fusion::config();
    py::dict d;
    d["cxx"] = c.cxx;
    d["cxxflags"] = c.flags;
    d["cache_dir"] = c.cache_dir;
    d["codegen_errors"] = c.raise_errors ? "raise" : "warn";
    d["compile_timeout"] = c.compile_timeout;
    d["cache_size_limit"] = c.cache_size_limit;
    d["lowering_cache"] = c.lowering_cache;
    d["output_code"] = c.output_code;
    d["compile_debug"] = c.debug;
    d["debug_dir"] = c.debug_dir;
    return d;
  }, "Settings of the fused backend (dict).");
  m.def("_fusion_set_config", [](py::dict d) {
    auto& c = fusion::config();
    for (auto [k, v] : d) {
      std::string key = py::str(k);
      if (key == "cxx" || key == "cxxflags" || key == "cache_dir" || key == "codegen_errors" ||
          key == "compile_timeout" || key == "cache_size_limit" || key == "lowering_cache")
        throw py::key_error("'" + key + "' is set through npc.config." + key);
      if (key == "output_code") c.output_code = v.cast<bool>();
      else if (key == "compile_debug") c.debug = v.cast<bool>();
      else if (key == "debug_dir") c.debug_dir = py::str(v);
      else throw py::key_error("unknown fused-backend setting '" + key + "'");
    }
  }, "Updates the fused backend's debug settings (output_code, compile_debug, debug_dir); the others live in npc.config.");
  m.def("_fusion_stats", [] {
    auto s = fusion::stats();
    py::dict d;
    d["graphs"] = s.graphs;
    d["lowering_passes"] = s.lowering_passes;
    d["kernels"] = s.kernels;
    d["distinct_kernels"] = s.distinct_kernels;
    d["compiles"] = s.compiles;
    d["disk_hits"] = s.disk_hits;
    d["memory_hits"] = s.memory_hits;
    d["lowering_cache_hits"] = s.lowering_cache_hits;
    d["lowering_cache_stores"] = s.lowering_cache_stores;
    d["corrupt_entries"] = s.corrupt_entries;
    d["compile_timeouts"] = s.compile_timeouts;
    d["evictions"] = s.evictions;
    d["kernel_runs"] = s.kernel_runs;
    d["library_calls"] = s.library_calls;
    d["merged_products"] = s.merged_products;
    d["fallbacks"] = s.fallbacks;
    d["compile_seconds"] = s.compile_seconds;
    d["last_load_seconds"] = s.last_load_seconds;
    return d;
  }, "Counters of the fused backend (dict).");
  m.def("_fusion_reset_stats", &fusion::reset_stats);
  m.def("_fusion_jit", [](const std::string& src) {
    ReleaseGil r;
    return fusion::jit(src)->path();
  }, "Compiles (or loads from the cache) one translation unit; returns the shared object's path.");
  m.def("_fusion_cache_key", &fusion::cache_key);
  // Entries of other kinds in the disk cache (Note [persisted traces] and Note [modes kept
  // across processes] in python/npc/compiler/_persist.py): "<32 hex>.trace" and "<32
  // hex>.mode", trusted, sealed, trimmed and cleared as kernels are (Note [disk cache], Note
  // [cache trust], Note [cache size] in jit.cpp).
  auto entry_stem = [](const std::string& name) {
    const size_t dot = name.find('.');
    if (dot != 32 || (name.substr(dot) != ".trace" && name.substr(dot) != ".mode") ||
        name.find_first_not_of("0123456789abcdef") < 32)
      throw ValueError("npc: not a cache entry name: " + name);
    return name.substr(0, 32);
  };
  m.def("_cache_entry_read", [entry_stem](const std::string& name) -> py::object {
    const std::string stem = entry_stem(name);
    const fusion::Config cfg = fusion::current_config();
    if (cfg.cache_dir.empty()) return py::none();
    // Read into the bytes object returned, not copied into it (Note [entries read in place]
    // in src/fusion/jit.cpp); the trailer is cut off after.
    PyObject* obj = nullptr;
    size_t size = 0;
    bool bad = false;
    int fd = -1;
    {
      ReleaseGil r;
      const fusion::disk::Dirs dirs = fusion::disk::resolve_dirs(cfg.cache_dir);
      if (!dirs.lookup.empty()) {
        fd = fusion::disk::open_entry_into(dirs.lookup + "/" + name, stem, [&](size_t n) -> char* {
          py::gil_scoped_acquire gil;
          obj = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
          if (!obj) PyErr_Clear();  // no memory for it: read as no entry
          return obj ? PyBytes_AS_STRING(obj) : nullptr;
        }, size, bad);
        if (fd >= 0) {
          ::futimens(fd, nullptr);  // recently used (Note [cache size]); fails harmlessly read-only
          ::close(fd);
        }
      }
    }
    if (fd < 0) {
      Py_XDECREF(obj);
      return py::none();
    }
    if (_PyBytes_Resize(&obj, static_cast<Py_ssize_t>(size)) != 0) throw py::error_already_set();
    return py::reinterpret_steal<py::bytes>(obj);
  }, "the payload of disk cache entry `name` after Note [cache trust]'s checks, or None");
  m.def("_cache_entry_write", [entry_stem](const std::string& name, py::bytes payload) {
    const std::string stem = entry_stem(name);
    const fusion::Config cfg = fusion::current_config();
    if (cfg.cache_dir.empty()) return false;
    std::string data(payload);
    ReleaseGil r;
    const fusion::disk::Dirs dirs = fusion::disk::resolve_dirs(cfg.cache_dir);
    if (dirs.lookup.empty() || !dirs.writable) return false;
    return fusion::disk::install_entry(dirs.lookup, name, data, stem, cfg.cache_size_limit);
  }, "installs `payload` as disk cache entry `name` (trimmed with the kernels); False when it cannot");
  m.def("_fusion_clear_cache", [] {
    ReleaseGil r;
    return fusion::clear_cache();
  }, "Removes compiled kernels from the disk cache and forgets loaded ones; returns the number of files removed.");
  m.def("_fusion_supports", [](const std::string& op, int code) { return fusion::supports(op_by_name(op), static_cast<DType>(code)); },
        "Whether the C++ emitter has a rule for ufunc `op` on loop dtype `code` (else the graph runs eagerly).");

  py::class_<PyGraph>(m, "_FusionGraph")
      .def(py::init<>())
      .def("input", [](PyGraph& p, int i, int code, Shape s) { return p.add(p.g->input(i, static_cast<DType>(code), ir::static_shape(s))); })
      .def("scalar", [](PyGraph& p, int i, int code) { return p.add(p.g->scalar(i, static_cast<DType>(code))); })
      .def("const", [](PyGraph& p, py::handle v, int code) { return p.add(p.g->constant(from_python(v).cast(static_cast<DType>(code)))); })
      .def("ufunc", [](PyGraph& p, const std::string& op, std::vector<int> args, int code) {
        return p.add(p.g->ufunc(op_by_name(op), p.many(args), static_cast<DType>(code)));
      })
      .def("cast", [](PyGraph& p, int a, int code) { return p.add(p.g->cast(p.at(a), static_cast<DType>(code))); })
      .def("reduce", [](PyGraph& p, const std::string& op, int a, std::vector<int64_t> axes, bool keepdims, int code) {
        return p.add(p.g->reduce(op_by_name(op), p.at(a), axes, keepdims, static_cast<DType>(code)));
      })
      .def("slice", [](PyGraph& p, int a, std::vector<int64_t> ss, Shape s) { return p.add(p.g->slice(p.at(a), ss, ir::static_shape(s))); })
      .def("permute", [](PyGraph& p, int a, std::vector<int64_t> axes) { return p.add(p.g->permute(p.at(a), axes)); })
      .def("broadcast", [](PyGraph& p, int a, Shape s) { return p.add(p.g->broadcast(p.at(a), ir::static_shape(s))); })
      .def("reshape", [](PyGraph& p, int a, Shape s) { return p.add(p.g->reshape(p.at(a), ir::static_shape(s))); })
      .def("prim", [](PyGraph& p, const std::string& op, std::vector<int> args, int code, Shape s, std::vector<int64_t> params) {
        return p.add(p.g->prim(op_by_name(op), p.many(args), static_cast<DType>(code), ir::static_shape(s), params));
      })
      .def("gather", [](PyGraph& p, int a, int idx, int64_t axis) { return p.add(p.g->gather(p.at(a), p.at(idx), axis)); })
      .def("write", [](PyGraph& p, int base, int region, int value) { return p.add(p.g->write(p.at(base), p.at(region), p.at(value))); })
      .def("output", [](PyGraph& p, int a) { p.g->outputs.push_back(p.at(a)); })
      .def("shape", [](PyGraph& p, int a) { return ir::concrete_shape(p.at(a)->shape, {}); })
      .def("dtype", [](PyGraph& p, int a) { return static_cast<int>(p.at(a)->dtype); })
      .def("__str__", [](PyGraph& p) { return p.g->str(); })
      .def("compile", [](PyGraph& p) {
        auto g = p.g;
        ir::Executable exe;
        {
          ReleaseGil r;
          exe = fusion::compile_graph(*g);
        }
        return py::cpp_function([g, exe](std::vector<PyArray> inputs, std::vector<py::handle> scalars) {
          std::vector<ndarray> in(inputs.begin(), inputs.end());
          std::vector<Scalar> sc;
          for (auto h : scalars) sc.push_back(from_python(h));
          std::vector<ndarray> out;
          {
            ReleaseGil r;
            out = exe(ir::RunArgs{in, sc});
          }
          py::list l;
          for (auto& o : out) l.append(wrap(std::move(o)));
          return l;
        });
      }, "Lowers and compiles the graph with the fused backend; returns run(inputs, scalars) -> outputs.");
}

}  // namespace npc::py_bind
