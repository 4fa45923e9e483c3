#pragma once
/// \file fusion.hpp
/// The fused backend: groups a traced graph (npc/graph.hpp) into loop-nest kernels, emits
/// C++/OpenMP, compiles it with the system compiler, caches the shared object on disk and
/// runs it. docs/fusion.md describes the design.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "npc/graph.hpp"

namespace npc::fusion {

/// Raised when code generation or the C++ compiler fails (with codegen_errors="raise"), or
/// when a graph holds something the fused backend does not generate code for.
struct CodegenError : std::runtime_error { using std::runtime_error::runtime_error; };
/// Raised by jit() when the C++ compiler ran past Config::compile_timeout and was stopped; the
/// fused backend then runs the graph eagerly (whatever Config::raise_errors says).
struct CompileTimeout : CodegenError { using CodegenError::CodegenError; };

/// Settings of the fused backend (npc.config in Python). Defaults come from the environment:
/// CXX, NPC_CACHE_DIR, NPC_LOGS, NPC_COMPILE_DEBUG, NPC_COMPILE_TIMEOUT, NPC_LOWERING_CACHE.
struct Config {
  std::string cxx;             ///< compiler command ($CXX, default "c++")
  std::string flags;           ///< "-O3 -march=native -fopenmp -ffp-contract=off"
  std::string cache_dir;       ///< $NPC_CACHE_DIR, default ~/.cache/npc ("" = no disk cache); must be private (docs/fusion.md)
  double compile_timeout = 60; ///< seconds a compiler run may take before it is stopped (<= 0: no limit)
  int64_t cache_size_limit = int64_t(1) << 30; ///< bytes of cache entries kept (least recently used go first; <= 0: no limit)
  bool lowering_cache = true;  ///< keep lowered programs in cache_dir too ($NPC_LOWERING_CACHE=0: off; Note [lowered-program cache])
  bool raise_errors = false;   ///< codegen_errors == "raise": failures throw instead of running eagerly
  bool output_code = false;    ///< NPC_LOGS contains output_code: print generated source to stderr
  bool debug = false;          ///< NPC_COMPILE_DEBUG=1: write IR, source and diagram to debug_dir
  std::string debug_dir;       ///< $NPC_DEBUG_DIR, default ./npc_debug
};
/// The process-wide settings (mutable; read at each compile).
Config& config();
/// Installs a function that refreshes config() from another source (npc.config in Python)
/// before each compile; null to stop.
void set_config_refresh(void (*refresh)(Config&));
/// config() after running the refresh function, if any (what a compile uses).
Config current_config();

/// Counters of the fused backend since the last reset (npc.compiler.stats() reports them).
struct Stats {
  int64_t graphs = 0;          ///< graphs lowered
  int64_t lowering_passes = 0; ///< groupings lowered: one per graph, plus one per retry that materialised more values
  int64_t kernels = 0;         ///< loop nests generated (after merging identical ones)
  int64_t distinct_kernels = 0;///< kernel texts lowered that no graph had since reset_distinct_kernels()
  int64_t compiles = 0;        ///< C++ compiler invocations
  int64_t disk_hits = 0;       ///< shared objects loaded from the disk cache
  int64_t memory_hits = 0;     ///< shared objects reused in this process
  int64_t lowering_cache_hits = 0;   ///< graphs whose lowering was read from the disk cache (not lowered)
  int64_t lowering_cache_stores = 0; ///< lowerings written to the disk cache
  int64_t corrupt_entries = 0; ///< cache entries refused (failed verification, wrong owner or key, not a regular file) and rebuilt
  int64_t compile_timeouts = 0;///< compiler runs stopped at Config::compile_timeout
  int64_t evictions = 0;       ///< cache entries removed to stay under Config::cache_size_limit
  int64_t kernel_runs = 0;     ///< generated kernels executed
  int64_t library_calls = 0;   ///< library calls (matmul) run between generated kernels
  int64_t merged_products = 0; ///< matrix-vector products computed by their group's one matrix product or row pass (Note [merged products])
  int64_t fallbacks = 0;       ///< graphs that ran on the eager backend after a codegen failure
  double compile_seconds = 0;  ///< time in the C++ compiler
  double last_load_seconds = 0;///< time of the last source -> loaded module step
};
Stats stats();
void reset_stats();
/// Starts a new count of Stats::distinct_kernels (npc.compiler.reset()): kernel texts lowered
/// before count again when a graph lowers them.
void reset_distinct_kernels();

/// A loaded shared object of generated code.
class Module {
 public:
  ~Module();
  /// Address of `name`; throws CodegenError when missing.
  void* symbol(const std::string& name) const;
  const std::string& path() const { return path_; }

 private:
  friend std::shared_ptr<Module> jit(const std::string& source);
  void* handle_ = nullptr;
  std::string path_;
};

/// Compiles `source` (one translation unit) or loads it from the memory/disk cache.
/// Throws CodegenError when no compiler is found or compilation fails.
std::shared_ptr<Module> jit(const std::string& source);
/// Removes this user's compiled kernels from the disk cache (when it is writable) and from
/// this process's private directory, and forgets the loaded ones (loaded code stays mapped).
/// Returns the number of files removed.
int64_t clear_cache();

/// How jit() waits for the compiler, for a host language's binding: `release()` gives up
/// the interpreter lock if this thread holds it (returns a token for `restore`, or null),
/// `restore(token)` takes it back, and `poll()` runs pending signal handlers, throwing to
/// abort the compile (the compiler is then killed). Any of them may be null.
struct WaitHooks {
  void* (*release)() = nullptr;
  void (*restore)(void* token) = nullptr;
  void (*poll)() = nullptr;
};
void set_wait_hooks(const WaitHooks& hooks);

/// The cache key of `source` under the current configuration (hex): a hash of the source,
/// compiler identity, flags, CPU features, npc version and npc_build_id().
std::string cache_key(const std::string& source);
/// The GNU build-id (hex) of the binary that contains npc (the Python extension or a C++
/// program linking npc_core); "" when the linker wrote none. Part of every cache key, so
/// kernels cached by another build of npc are never loaded.
std::string npc_build_id();

/// Lowers `g` to kernels and returns an executable for it. Shapes may be symbolic; strides
/// are specialised on each call (contiguous or general), compiling each variant once.
/// Throws CodegenError when the graph has a node the backend does not support.
ir::Executable compile_graph(const ir::Graph& g);

/// Whether generated code supports ufunc `op` on loop dtype `t` (the emitter table's row).
bool supports(OpId op, DType t);

/// One row of a target's emitter table (Note [emitter table] in src/fusion/emit_cpp.cpp).
struct EmitRule {
  enum class Status : uint8_t {
    Missing,      ///< no row: only rows that are not ufuncs (lowered structurally) have none
    Pattern,      ///< rendered from `text` for the dtype kinds in `kinds`
    Unsupported,  ///< explicitly not rendered (`text` says why): graphs with it run eagerly
  };
  Status status = Status::Missing;
  std::string_view text;   ///< the pattern, or the reason it is unsupported
  std::string_view kinds;  ///< Pattern: the dtype kinds it renders (b bool, i integer, f float, c complex)
  std::string_view complex_text;  ///< Pattern: the pattern of complex loops, when not `text` (a prelude helper)
};
/// The C++ emitter table's row for `op`.
EmitRule cpp_emit_rule(OpId op);

/// Runs `g` on the eager interpreter (ir::interpret) and leaves the floating-point errors its
/// ops raised pending on this thread as NumPy reports them: one entry per op and kind, in
/// program order (npc/fperror.hpp); with `report` false they are discarded instead. With
/// `report`, a run stops at the first op whose error the error state raises and throws FpStop
/// (Note [writes before a raising operation] in src/fusion/backend.cpp).
std::vector<ndarray> interpret_with_fp_errors(const ir::Graph& g, const ir::RunArgs& args, bool report = true);

/// Registers compile_graph as the tracer's "fused" backend (idempotent).
void register_backend();

}  // namespace npc::fusion
