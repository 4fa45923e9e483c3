#pragma once
/// \file compile.hpp
/// npc::compile: trace a C++ callable over npc::ndarray arguments into the graph IR
/// (npc/graph.hpp), cache it keyed by guards, and replay it without calling the callable
/// again while the guards pass. The C++ counterpart of npc.compile in Python.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npc/graph.hpp"
#include "npc/ndarray.hpp"

namespace npc {

/// Options of npc::compile (the same meaning as npc.compile's keywords).
struct CompileOptions {
  std::string backend = "fused";  ///< "fused" (falls back to "eager" when unavailable) or "eager"
  bool fullgraph = false;         ///< throw GraphBreakError at the first graph break
  std::optional<bool> dynamic;    ///< nullopt: dims that change become symbolic; true: all; false: none
  int recompile_limit = 8;        ///< traces per function before it runs eagerly
};

/// Thrown with fullgraph=true when tracing needs a concrete value (a graph break).
struct GraphBreakError : std::runtime_error { using std::runtime_error::runtime_error; };

/// Counters of one compiled function.
struct CompileStats {
  int64_t traces = 0, cache_hits = 0, recompiles = 0, graph_breaks = 0, eager_runs = 0;
};

/// A compiled C++ function over arrays.
class CompiledFunction {
 public:
  using Fn = std::function<std::vector<ndarray>(const std::vector<ndarray>&)>;
  /// ValueError for an empty `fn`.
  CompiledFunction(Fn fn, CompileOptions opts);
  /// Runs the function: replays a cached graph when its guards pass, otherwise traces.
  /// Results equal calling the function directly (values, dtypes, shapes, writes to inputs).
  std::vector<ndarray> operator()(const std::vector<ndarray>& args);
  const CompileStats& stats() const;
  /// The graphs cached so far (one per guard set), for inspection.
  std::vector<const ir::Graph*> graphs() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// numpy-free analogue of npc.compile: `auto f = npc::compile(fn); f({a, b});`.
CompiledFunction compile(CompiledFunction::Fn fn, CompileOptions opts = {});

}  // namespace npc
