// Bindings of the fusion layer: the fused backend's settings, counters and JIT cache.
// Importing npc registers the "fused" backend with the tracer.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "npc/fusion.hpp"

namespace npc::py_bind {

void bind_fusion(py::module_& m) {
  fusion::register_backend();
  py::register_exception<fusion::CodegenError>(m, "CodegenError", PyExc_RuntimeError);
  m.def("_fusion_get_config", [] {
    const auto& c = fusion::config();
    py::dict d;
    d["cxx"] = c.cxx;
    d["cxxflags"] = c.flags;
    d["cache_dir"] = c.cache_dir;
    d["codegen_errors"] = c.raise_errors ? "raise" : "warn";
    d["output_code"] = c.output_code;
    d["compile_debug"] = c.debug;
    d["debug_dir"] = c.debug_dir;
    return d;
  }, "Settings of the fused backend (dict).");
  m.def("_fusion_set_config", [](py::dict d) {
    auto& c = fusion::config();
    for (auto [k, v] : d) {
      std::string key = py::str(k);
      if (key == "cxx") c.cxx = py::str(v);
      else if (key == "cxxflags") c.flags = py::str(v);
      else if (key == "cache_dir") c.cache_dir = py::str(v);
      else if (key == "codegen_errors") {
        std::string s = py::str(v);
        if (s != "raise" && s != "warn") throw py::value_error("codegen_errors must be 'raise' or 'warn', got '" + s + "'");
        c.raise_errors = s == "raise";
      } else if (key == "output_code") c.output_code = v.cast<bool>();
      else if (key == "compile_debug") c.debug = v.cast<bool>();
      else if (key == "debug_dir") c.debug_dir = py::str(v);
      else throw py::key_error("unknown fused-backend setting '" + key + "'");
    }
  }, "Updates settings of the fused backend from a dict (keys as _fusion_get_config).");
  m.def("_fusion_stats", [] {
    auto s = fusion::stats();
    py::dict d;
    d["graphs"] = s.graphs;
    d["kernels"] = s.kernels;
    d["compiles"] = s.compiles;
    d["disk_hits"] = s.disk_hits;
    d["memory_hits"] = s.memory_hits;
    d["corrupt_entries"] = s.corrupt_entries;
    d["kernel_runs"] = s.kernel_runs;
    d["fallbacks"] = s.fallbacks;
    d["compile_seconds"] = s.compile_seconds;
    d["last_load_seconds"] = s.last_load_seconds;
    return d;
  }, "Counters of the fused backend (dict).");
  m.def("_fusion_reset_stats", &fusion::reset_stats);
  m.def("_fusion_jit", [](const std::string& src) {
    py::gil_scoped_release r;
    return fusion::jit(src)->path();
  }, "Compiles (or loads from the cache) one translation unit; returns the shared object's path.");
  m.def("_fusion_cache_key", &fusion::cache_key);
}

}  // namespace npc::py_bind
