// The fused backend: lowers a graph per stride variant, compiles it once, and runs the
// kernels with buffers planned by liveness.
//
// Note [memory planning]
// Graph outputs and write-back values get their own arrays (they escape). Other
// materialised values are temporaries: each is allocated just before the launch that
// writes it, from a free list of storages released after their last reader ran (exact size
// first, else the smallest that fits). A stencil time loop thus ping-pongs between two
// buffers whatever the number of steps.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <iostream>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <pthread.h>
#include <sys/stat.h>

#if NPC_HAVE_OPENMP
#include <omp.h>
#endif

#include "core/parallel.hpp"
#include "fusion/lower.hpp"
#include "fusion/merged_products.hpp"
#include "ops/blas.hpp"
#include "ops/exec.hpp"
#include "npc/creation.hpp"
#include "npc/fperror.hpp"
#include "npc/linalg.hpp"
#include "npc/sorting.hpp"

// The tracer's backend registry, resolved at link time when present.
namespace npc::ir {
__attribute__((weak)) void register_backend(std::string name, Backend backend);
}  // namespace npc::ir

namespace npc::fusion {
namespace {

// A generated kernel returns the floating-point error flags (FpFlag bits) its threads raised.
using KernelFn = int (*)(char* const*, const int64_t*, const int64_t*, const int64_t*);

struct Variant {
  bool eager = false;  // codegen failed: run the interpreter
  std::string error;
  Lowered low;
  std::vector<std::shared_ptr<Module>> mods;  // the modules holding fns
  std::vector<KernelFn> fns;
  std::vector<int> last_use;  // per buffer: index of the last launch reading it
  std::vector<bool> escapes;  // per buffer: output or write-back value
  std::vector<int> in_place;  // per launch: the buffer its root may take over, or -1
  bool writes_inputs = false; // a root is stored into an input's array (Note [owned inputs] in src/fusion/lower_group.cpp)
  // Per launch, computed once: the buffers of its roots, and for a library call the View
  // chain of each operand, outermost last (walking nodes per launch costs cache misses).
  std::vector<std::vector<int>> root_bufs;
  std::vector<std::vector<std::vector<NodeRef>>> chains;
  std::vector<std::vector<int>> released;  // per launch: Temps whose last reader it is
  std::vector<bool> product_fp;            // per launch: reports_product_fp of its library node
  // Per launch of a library call, per operand: its View chain applied once to a C-contiguous
  // buffer of the static shape (offset in bytes from the buffer's, geometry), or !ok.
  struct OperandView {
    bool ok = false;
    int64_t offset = 0;
    DType dtype = DType::Float64;
    Shape shape;
    Strides strides, base_strides;
  };
  // Note [timed product threads]
  // A compiled product that computes several multiply-adds per element it moves runs 1.6-1.8x
  // faster on OpenBLAS's threads than on one on an idle machine, and 10-100x slower on cores
  // that other processes keep busy: OpenBLAS's caller and workers spin for each other
  // (Note [compiled products on one BLAS thread] in src/ops/blas.cpp), and a 0.3 ms product
  // took 8-40 ms. Neither way suits every machine, so a variant's replays time both for
  // such a product (ops::blas::compiled_product_timed): the first run is NumPy's call with its
  // threads (its values on a first call, as an eager product's), then one thread and threads
  // alternate until each way has kRuns runs, and the way whose typical run (the lower median,
  // as Note [slow graph breaks] in _timing.py takes it) is faster runs from then on; one thread
  // must be 10% faster, so that products of about equal speed stay NumPy's own calls. The two
  // ways can differ in the last bits of a product (OpenBLAS's blocking depends on its thread
  // count), as compiled and eager calls of a function may.
  struct ProductTiming {
    static constexpr size_t kRuns = 3;
    std::mutex mu;
    std::atomic<int> chosen{-1};  // -1 while timing, else 1 for one thread, 0 for threads
    std::vector<double> one, threads;
    bool next_one() {
      const int c = chosen.load(std::memory_order_relaxed);
      if (c >= 0) return c == 1;
      std::lock_guard lk(mu);
      return threads.size() > one.size();
    }
    void record(bool on_one, double seconds) {
      std::lock_guard lk(mu);
      if (chosen.load(std::memory_order_relaxed) >= 0) return;
      (on_one ? one : threads).push_back(seconds);
      if (one.size() < kRuns || threads.size() < kRuns) return;
      auto typical = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[(v.size() - 1) / 2];
      };
      chosen.store(typical(one) < 0.9 * typical(threads) ? 1 : 0, std::memory_order_relaxed);
    }
  };
  // Note [products in replays]: per launch, the geometry of a matmul the run calls directly.
  struct Product {
    bool ok = false;
    DType t = DType::Float64;
    int64_t ars = 0, acs = 0, brs = 0, bcs = 0, n = 0, k = 0, m = 0;
    std::shared_ptr<ProductTiming> timing;  // Note [timed product threads]; null: blas's rule
  };
  // Note [timed product threads]: the timings of products on the general path (symbolic
  // shapes, operands the direct path does not take), per launch and product size.
  struct GeneralTimings {
    static constexpr size_t kMaxEntries = 64;
    std::mutex mu;
    std::map<std::array<int64_t, 4>, std::shared_ptr<ProductTiming>> by_size;
    // The timing of launch `li`'s (n x k) @ (k x m) product, or null: not timed, or the
    // table is full (sizes that vary on every call keep blas's rule).
    ProductTiming* find(size_t li, int64_t n, int64_t m, int64_t k) {
      if (!ops::blas::compiled_product_timed(n, m, k)) return nullptr;
      std::lock_guard lk(mu);
      const std::array<int64_t, 4> key{static_cast<int64_t>(li), n, m, k};
      auto it = by_size.find(key);
      if (it != by_size.end()) return it->second.get();
      if (by_size.size() >= kMaxEntries) return nullptr;
      return by_size.emplace(key, std::make_shared<ProductTiming>()).first->second.get();
    }
  };
  std::shared_ptr<GeneralTimings> general_timings = std::make_shared<GeneralTimings>();
  // Note [replay costs]: what a run would compute per launch, for one binding of the graph's
  // symbols (all of a graph without symbols).
  struct Plan {
    bool static_shapes = false;  // false: the plan of no binding (every run works it out)
    std::vector<Shape> buf_shape;                               // per Temp buffer: its concrete shape
    std::vector<std::vector<std::vector<Shape>>> chain_shapes;  // per launch, operand, View
    std::vector<int64_t> arena_off;                             // per buffer: offset in the arena, or -1
    size_t arena_bytes = 0;
    std::vector<std::vector<OperandView>> operand_views;
    std::vector<Product> products;
    // Note [merged products] in merged_products.cpp: per launch, its product as a matrix-vector
    // product and its group (an index into product_groups, or -1; empty when there is none).
    std::vector<MatVec> matvecs;
    std::vector<int> product_group;
    std::vector<ProductGroup> product_groups;
    std::vector<std::shared_ptr<ProductTiming>> group_timings;  // per group (Note [timed product threads])
  };
  std::shared_ptr<const Plan> plan;  // the graph's without symbols; else the plan of no binding
  // Note [plans per binding]: a symbolic graph's plans by the symbols' values.
  struct Plans {
    static constexpr size_t kMax = 8;
    std::mutex mu;
    std::map<std::vector<int64_t>, std::shared_ptr<const Plan>> by_binding;
    std::deque<std::vector<int64_t>> made;  // the bindings in the order their plans were made
  };
  std::shared_ptr<Plans> plans = std::make_shared<Plans>();
};

// Note [in-place epilogues]
// The result of a library call (Note [library calls] in lower_group.cpp) is a temporary that an
// epilogue kernel reads (`np.maximum(X @ W + b, 0)`). When that kernel has one root of the
// same dtype and shape, is the result's last reader, and reads it only at the very element
// it stores (every load of the buffer has the index of the root's store), the root is
// written into the result's buffer: each element is loaded before it is overwritten and no
// other element reads it, so the epilogue needs no full-size temporary of its own.
int in_place_buffer(const Lowered& l, size_t li, const std::vector<int>& last_use) {
  const Launch& la = l.launches[li];
  if (la.fn < 0 || la.roots.size() != 1) return -1;
  NodeRef r = la.roots[0];
  const Kernel& k = l.kernels[la.fn];
  int out_local = -1;
  for (size_t i = 0; i < la.bufs.size(); ++i)
    if (la.bufs[i] == l.buffer_of.at(r)) out_local = static_cast<int>(i);
  if (out_local < 0) return -1;
  std::vector<std::string> stores;
  std::map<int, std::vector<std::string>> loads;
  std::function<void(const Block&)> walk = [&](const Block& b) {
    for (const Stmt& s : b) {
      if (s.k == Stmt::K::Store && s.buf == out_local) stores.push_back(s.index.str());
      if ((s.k == Stmt::K::Let || s.k == Stmt::K::Decl || s.k == Stmt::K::Assign) && s.expr.k == Expr::K::Load)
        loads[s.expr.buf].push_back(s.expr.index.str());
      walk(s.body);
      walk(s.orelse);
    }
  };
  walk(k.body);
  if (stores.size() != 1) return -1;
  for (size_t i = 0; i < la.bufs.size(); ++i) {
    int b = la.bufs[i];
    const BufInfo& bi = l.bufs[b];
    // Only results the backend owns: a host call (Call node) may return an array it keeps.
    if (bi.kind != BufInfo::Temp || !bi.node || !is_library_call(bi.node) || bi.node->kind == NodeKind::Call ||
        last_use[b] != static_cast<int>(li))
      continue;
    if (bi.dtype != r->dtype || bi.shape != r->shape || static_cast<int>(i) == out_local) continue;
    auto it = loads.find(static_cast<int>(i));
    if (it == loads.end()) continue;
    bool same = true;
    for (auto& idx : it->second) same = same && idx == stores[0];
    if (same) return b;
  }
  return -1;
}

// Note [library call fp errors]
// A product reports the floating-point flags its loops and BLAS calls raised on the calling
// thread, as NumPy reads them (npc::take_product_fp_flags; Note [product FP errors] in
// python/npc/_linalg.py), under the product's name; np.vdot's reports none.
bool reports_product_fp(NodeRef n) {
  return n->kind == NodeKind::Prim && n->op == OpId::matmul && !(n->params.size() == 1 && n->params[0] == 2);
}

// Runs library or host call `n` on its operand arrays with npc's eager ops (Note [library
// calls]): the same calls the eager interpreter makes for the node.
ndarray run_library_call(const ir::Graph& g, NodeRef n, const std::vector<ndarray>& ops, const Shape& shape) {
  if (auto r = ir::run_node_eagerly(g, n, ops, shape)) return std::move(*r);
  throw CodegenError("no host call for " + std::string(ir::op_name(n->op)));
}

std::atomic<uint64_t> g_tag{0};

// Note [naming fp errors]
// NumPy's warning names the ufunc that raised ("divide by zero encountered in divide"); a
// fused kernel holds several ops and its threads only report which kinds were raised. Each
// raised kind is reported once per call, naming the first node in program order that can
// raise that kind from finite operands (sqrt, log, divide... for "invalid value"); only
// when there is none, the first that can raise it at all (inf - inf in subtract, 0 * inf
// in multiply). A ufunc is named by its name, a sum/prod reduction "reduce", a scan
// (cumsum/cumprod) "accumulate" and a narrowing cast "cast" (NumPy's names for those). When no node qualifies (it should not
// happen), the first computing node is named.

// The rank of kind `bit` in an fpe column of ops.def ("DOUI": from finite operands, "doui":
// only from an inf or NaN operand).
int fp_kind_rank(std::string_view kinds, int bit) {
  const char letter = bit == kFpDivide ? 'D' : bit == kFpOverflow ? 'O' : bit == kFpUnderflow ? 'U' : 'I';
  if (kinds.find(letter) != std::string_view::npos) return 1;
  if (kinds.find(static_cast<char>(letter - 'A' + 'a')) != std::string_view::npos) return 2;
  return 0;
}

// fp_rank: 0 cannot raise the kind `bit`, 1 can from finite operands, 2 only from inf/NaN.
int fp_rank(ir::NodeRef n, int bit) {
  using ir::NodeKind;
  if (n->kind == NodeKind::Cast) {
    // From finite values, a float cast raises "overflow" into a narrower float (1e300 to
    // float32) and "invalid" into an integer (1e20 to int32, NumPy's loops); never "invalid"
    // into another float or complex type, nor anything into bool.
    DType from = n->args.at(0)->dtype, to = n->dtype;
    if (!(kind(from) == Kind::Float || is_complex(from)) || to == DType::Bool) return 0;
    auto part = [](DType t) { return is_complex(t) ? itemsize(t) / 2 : itemsize(t); };
    if (kind(to) == Kind::Float || is_complex(to)) return bit == kFpOverflow && part(to) < part(from) ? 1 : 0;
    return bit == kFpInvalid ? 1 : 0;
  }
  // A complex product (multiply, square, prod, cumprod) raises "invalid" from finite
  // operands too: its partial products overflow to infinities that it then subtracts or adds
  // (NumPy: (1e308+1e308j) * (1e308-1e308j) warns "invalid value encountered in multiply").
  // The fpe column lists what the real loops raise.
  if (bit == kFpInvalid && is_complex(n->dtype) &&
      (n->op == OpId::multiply || n->op == OpId::square || n->op == OpId::cumprod) &&
      (n->kind == NodeKind::Ufunc || n->kind == NodeKind::Reduce || n->kind == NodeKind::Prim))
    return 1;
  // NumPy's complex ordered comparisons compare the parts with C's ordered operators, which
  // raise "invalid" for a NaN part (the op table's rows hold no kinds for comparisons: their
  // float loops raise nothing).
  if (bit == kFpInvalid && n->kind == NodeKind::Ufunc && !n->args.empty() && is_complex(n->args[0]->dtype) &&
      (n->op == OpId::less || n->op == OpId::less_equal || n->op == OpId::greater || n->op == OpId::greater_equal))
    return 2;
  // NumPy's scalar integer arithmetic raises "overflow" (Note [integer scalar overflow] in
  // include/npc/scalar_rules.hpp).
  if (n->kind == NodeKind::Ufunc && n->params.size() > 1 && (n->params[1] & ir::Graph::kScalarMath) &&
      is_integer(n->dtype) &&
      (n->op == OpId::add || n->op == OpId::subtract || n->op == OpId::multiply || n->op == OpId::negative ||
       n->op == OpId::absolute))
    return bit == kFpOverflow ? 1 : 0;
  if (n->kind == NodeKind::Reduce) {
    // The reduction row of the node's ufunc (sum for add, ...) lists what it can raise.
    const OpInfo* r = reduction_row(n->op);
    return r ? fp_kind_rank(r->fpe, bit) : 0;
  }
  if (n->kind != NodeKind::Ufunc && n->kind != NodeKind::Prim) return 0;
  return fp_kind_rank(op_info(n->op).fpe, bit);
}

std::string node_label(ir::NodeRef n) {
  // The cast of a ufunc's result into its out= array: NumPy names its errors by the ufunc.
  if (n->kind == ir::NodeKind::Cast) {
    if (n->params.empty()) return "cast";
    // A sum's cast of its input (Note [buffered reduction casts] in src/tracer/trace_hooks.cpp).
    if (op_info(static_cast<OpId>(n->params[0])).kind == OpKind::Reduce) return "reduce";
    return std::string(ir::op_name(static_cast<OpId>(n->params[0])));
  }
  if (n->kind == ir::NodeKind::Reduce) return "reduce";
  // np.dot / np.inner products (Note [matmul in traces], bind_linalg.cpp).
  if (n->kind == ir::NodeKind::Prim && n->op == OpId::matmul && !n->params.empty() && n->params[0] == 1) return "dot";
  std::string name(ir::op_name(n->op));
  // np.cumsum / np.cumprod run add.accumulate / multiply.accumulate: NumPy names those.
  if (name == "cumsum" || name == "cumprod") return "accumulate";
  // NumPy's scalar arithmetic names its errors "scalar <op>" (Note [scalar math] in trace.hpp).
  if (n->kind == ir::NodeKind::Ufunc && n->params.size() > 1 && (n->params[1] & ir::Graph::kScalarMath))
    return "scalar " + name;
  return name;
}

void fp_names(const ir::Graph& g, std::string (&where)[4]) {
  std::string first, fallback[4];
  for (ir::NodeRef n : g.nodes()) {
    if (first.empty() && (n->kind == ir::NodeKind::Ufunc || n->kind == ir::NodeKind::Reduce ||
                          n->kind == ir::NodeKind::Cast || n->kind == ir::NodeKind::Prim))
      first = node_label(n);
    for (int k = 0; k < 4; ++k) {
      int r = fp_rank(n, 1 << k);
      if (r == 1 && where[k].empty()) where[k] = node_label(n);
      if (r == 2 && fallback[k].empty()) fallback[k] = node_label(n);
    }
  }
  for (int k = 0; k < 4; ++k)
    if (where[k].empty()) where[k] = !fallback[k].empty() ? fallback[k] : !first.empty() ? first : "compiled function";
}

void warn(const std::string& msg) { std::cerr << "npc: warning: " << msg << std::endl; }

std::string dot_diagram(const ir::Graph& g, const Lowered& l) {
  std::ostringstream os;
  os << "digraph fused {\n  rankdir=TB;\n  node [shape=box, fontname=monospace];\n";
  std::map<NodeRef, int> kernel_of;
  for (size_t i = 0; i < l.launches.size(); ++i)
    for (NodeRef r : l.launches[i].roots) kernel_of[r] = static_cast<int>(i);
  for (NodeRef n : g.nodes()) {
    std::string label = std::string(ir::kind_name(n->kind));
    if (n->kind == NodeKind::Ufunc || n->kind == NodeKind::Reduce || n->kind == NodeKind::Prim) label = std::string(ir::op_name(n->op));
    label += " %" + std::to_string(n->id) + "\\n" + std::string(name(n->dtype)) + ir::sym_shape_str(n->shape);
    auto it = kernel_of.find(n);
    os << "  n" << n->id << " [label=\"" << label << "\"" << (it != kernel_of.end() ? ", style=bold, color=blue" : "")
       << "];\n";
    for (NodeRef a : n->args) os << "  n" << a->id << " -> n" << n->id << ";\n";
  }
  for (size_t i = 0; i < l.launches.size(); ++i) {
    os << "  subgraph cluster_k" << i << " { label=\"kernel " << i << " (fn " << l.launches[i].fn << ")\";";
    for (NodeRef r : l.launches[i].roots) os << " n" << r->id << ";";
    os << " }\n";
  }
  os << "}\n";
  return os.str();
}

void write_debug(const ir::Graph& g, const Lowered& l, const std::string& src, const std::string& tag) {
  const Config& c = config();
  std::string dir = c.debug_dir + "/graph-" + tag;
  ::mkdir(c.debug_dir.c_str(), 0755);
  ::mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/graph.txt") << g.str();
  std::ofstream(dir + "/source.cpp") << src;
  std::ofstream(dir + "/graph.dot") << dot_diagram(g, l);
  std::ofstream ir(dir + "/kernels.txt");
  for (size_t i = 0; i < l.kernels.size(); ++i) ir << "kernel " << i << ":\n" << dump_kernel(l.kernels[i]) << "\n";
  for (size_t i = 0; i < l.launches.size(); ++i) {
    ir << "launch " << i << ": fn " << l.launches[i].fn << " bufs";
    for (int b : l.launches[i].bufs) ir << " " << b;
    ir << "\n";
  }
}

// Note [kernels across graphs]
// Kernels are generic (Note [generic kernels] in kernel_params.cpp): the segments of a long
// traced loop (Note [loops] in src/tracer/trace_segments.cpp) and the graphs of other functions hold
// many kernels of equal text, in different combinations. Each kernel text is compiled once
// per process: a graph's translation unit holds only the kernels no earlier graph compiled
// (named by a hash of their text), and the functions are shared from then on. So compile
// time grows with the number of distinct kernels, not with the number of graphs or segments;
// a process that runs the same graphs in the same order asks the disk cache for the same units.
struct CompiledKernel {
  std::shared_ptr<Module> mod;
  KernelFn fn = nullptr;
};
std::mutex g_kernels_mu;
std::map<std::string, CompiledKernel> g_kernels;  // compiler and flags + kernel text -> function
std::set<std::string> g_counted;  // kernel texts counted in Stats::distinct_kernels

std::string kernel_name(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) { h ^= c; h *= 1099511628211ull; }
  char b[32];
  std::snprintf(b, sizeof b, "npc_k%016llx", static_cast<unsigned long long>(h));
  return b;
}

// The functions of `l`'s kernels, compiling those not compiled yet in one translation unit.
void compile_kernels(const Lowered& l, Variant& v) {
  const Config cfg = config();
  const std::string prefix = cfg.cxx + "\n" + cfg.flags + "\n";
  std::vector<size_t> missing;
  int64_t fresh = 0;
  {
    std::lock_guard<std::mutex> lk(g_kernels_mu);
    std::set<std::string> seen;
    for (size_t i = 0; i < l.kernel_text.size(); ++i) {
      if (!g_kernels.count(prefix + l.kernel_text[i]) && seen.insert(l.kernel_text[i]).second) missing.push_back(i);
      fresh += g_counted.insert(l.kernel_text[i]).second;
    }
  }
  bump_stat(&Stats::distinct_kernels, fresh);
  if (cfg.output_code) {
    // Every kernel of the graph, compiled now or shared with an earlier graph (NPC_LOGS=output_code
    // shows what each graph runs, whatever ran before it in the process).
    std::string all;
    for (const std::string& t : l.kernel_text) {
      std::string text = t;
      text.replace(text.find("@NAME@"), 6, kernel_name(t));
      all += text + "\n";
    }
    std::cerr << "[npc output_code] " << l.kernel_text.size() << " kernels (" << missing.size() << " new):\n"
              << cpp_prelude_for(l.kernel_text) << all << std::endl;
  }
  if (!missing.empty()) {
    std::string src = cpp_prelude_for(l.kernel_text);
    src += "#include <algorithm>\n#include <limits>\n\n";
    std::vector<std::string> names;
    for (size_t i : missing) {
      std::string text = l.kernel_text[i];
      names.push_back(kernel_name(text));
      text.replace(text.find("@NAME@"), 6, names.back());
      src += text + "\n";
    }
    std::shared_ptr<Module> mod = jit(src);
    // Note [threads of kernels] in emit_cpp.cpp: the module's parallel loops ask npc's rule.
    using SetThreadsFor = void (*)(int (*)(int64_t, int64_t));
    reinterpret_cast<SetThreadsFor>(mod->symbol("npk_set_threads_for"))(&parallel::threads_for);
    using SetParallelRun = void (*)(void (*)(int, int64_t, parallel::ChunkFn, void*));
    reinterpret_cast<SetParallelRun>(mod->symbol("npk_set_parallel_run"))(&parallel::run);
    std::vector<KernelFn> fns;
    for (auto& n : names) fns.push_back(reinterpret_cast<KernelFn>(mod->symbol(n)));
    std::lock_guard<std::mutex> lk(g_kernels_mu);
    for (size_t k = 0; k < missing.size(); ++k) g_kernels.emplace(prefix + l.kernel_text[missing[k]], CompiledKernel{mod, fns[k]});
  }
  std::lock_guard<std::mutex> lk(g_kernels_mu);
  std::set<const Module*> held;
  for (const std::string& text : l.kernel_text) {
    const CompiledKernel& c = g_kernels.at(prefix + text);
    v.fns.push_back(c.fn);
    if (held.insert(c.mod.get()).second) v.mods.push_back(c.mod);
  }
}

// Note [replay costs]
// A traced loop (Note [loops] in src/tracer/trace_segments.cpp) replays graphs of thousands of
// launches of a few elements each (cholesky's `A[i, j] -= np.dot(A[i, :j], A[j, :j])`), where
// the work per launch is tens of nanoseconds: what a run does per launch beside calling the
// kernel decides its speed. So what does not change between runs is computed once per
// variant and sizes (the segments of a plan are specialised to the sizes traced; a graph with
// symbols has a plan per binding, Note [plans per binding]): each buffer's and each operand
// view's concrete shape; each launch's list of
// temporaries to release; and the place of every temporary that only kernels write, in one
// arena: offsets assigned first-fit over the buffers' live ranges (launch of the first write
// to last reader), as the free list of Note [memory planning] would reuse storages. A run then
// hands kernels pointers into the arena, without an allocation, a Storage or an ndarray per
// temporary; a library call reading one gets a view of the arena. A small arena stays with
// the executable between runs (kArenaKeptBytes; a run finding it taken, by another thread or
// a nested call, allocates its own); a larger one is allocated per run, once.
constexpr size_t kArenaKeptBytes = size_t(1) << 20;
// Products whose results take arena blocks: at most this many bytes (Note [product results in the arena]).
constexpr int64_t kArenaProductBytes = int64_t{1} << 16;

// What a run needs per launch for any binding of the symbols.
void plan_launches(Variant& v) {
  const Lowered& l = v.low;
  const size_t nl = l.launches.size(), nb = l.bufs.size();
  v.released.assign(nl, {});
  v.product_fp.assign(nl, false);
  for (size_t li = 0; li < nl; ++li)
    if (l.launches[li].fn < 0) v.product_fp[li] = reports_product_fp(l.launches[li].roots[0]);
  std::vector<bool> listed(nb, false);
  for (size_t li = 0; li < nl; ++li)
    for (int b : l.launches[li].bufs)
      if (v.last_use[b] == static_cast<int>(li) && l.bufs[b].kind == BufInfo::Temp && !v.escapes[b] && !listed[b]) {
        listed[b] = true;
        v.released[li].push_back(b);
      }
}

// The plan of one binding `sym` of the graph's symbols (Note [replay costs]).
void plan_replay(const ir::Graph& g, const Variant& v, std::span<const int64_t> sym, Variant::Plan& plan) {
  const Lowered& l = v.low;
  const size_t nl = l.launches.size(), nb = l.bufs.size();
  plan.arena_off.assign(nb, -1);
  plan.static_shapes = true;
  plan.buf_shape.assign(nb, Shape{});
  plan.chain_shapes.assign(nl, {});
  std::vector<int> first(nb, -1);  // the launch that first writes a buffer (as a root)
  for (size_t li = 0; li < nl; ++li) {
    const Launch& la = l.launches[li];
    for (size_t ri = 0; ri < la.roots.size(); ++ri) {
      const int b = la.fn < 0 ? la.bufs[0] : v.root_bufs[li][ri];
      if (first[b] >= 0) continue;
      first[b] = static_cast<int>(li);
      plan.buf_shape[b] = ir::concrete_shape(la.roots[ri]->shape, sym);
    }
    for (const auto& chain : v.chains[li]) {
      plan.chain_shapes[li].emplace_back();
      for (NodeRef x : chain) plan.chain_shapes[li].back().push_back(ir::concrete_shape(x->shape, sym));
    }
  }
  // Operand views of library calls, from a placeholder buffer (never read): a chain that
  // would copy (a reshape or strided view of a non-contiguous value) stays per run.
  plan.operand_views.assign(nl, {});
  for (size_t li = 0; li < nl; ++li) {
    const Launch& la = l.launches[li];
    if (la.fn >= 0) continue;
    for (size_t k = 0; k < v.chains[li].size(); ++k) {
      Variant::OperandView ov;
      const int b = la.bufs[1 + k];
      const BufInfo& bi = l.bufs[b];
      const Shape shape = bi.kind == BufInfo::Input ? ir::concrete_shape(bi.shape, sym) : plan.buf_shape[b];
      bool ok = (bi.kind == BufInfo::Temp || (bi.kind == BufInfo::Input && bi.contiguous)) &&
                (bi.kind != BufInfo::Temp || first[b] >= 0);
      if (ok) {
        ov.base_strides = contiguous_strides(shape, itemsize(bi.dtype));
        ndarray a(Storage::placeholder(), 0, bi.dtype, shape, ov.base_strides);
        for (size_t c = 0; ok && c < v.chains[li][k].size(); ++c) {
          NodeRef x = v.chains[li][k][c];
          const auto kind = x->view_kind();
          if ((kind == ir::ViewKind::Reshape || kind == ir::ViewKind::Strided) && !a.is_c_contiguous()) ok = false;
          else a = ir::apply_view(x, a, plan.chain_shapes[li][k][c]);
        }
        ok = ok && a.storage() == Storage::placeholder();
        if (ok) {
          ov.offset = a.offset();
          ov.dtype = a.dtype();
          ov.shape = a.shape();
          ov.strides = a.strides();
        }
      }
      ov.ok = ok;
      plan.operand_views[li].push_back(std::move(ov));
    }
  }
  // Note [products in replays]
  // A traced row loop (`x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]`) runs a product of a few
  // elements per iteration; on the general path of library calls (operand arrays built from
  // their views, the eager op's dispatch and checks, the fp bookkeeping of host calls) the
  // call costs several times the product. A plain matmul whose operands have one BLAS dtype,
  // one or two dimensions and static views of their buffers is what matmul's small-product
  // path computes (npc::matmul_into, the same loops and BLAS calls): its geometry is worked out
  // here once, and the run calls it on the operands' pointers.
  plan.products.assign(nl, {});
  for (size_t li = 0; li < nl; ++li) {
    const Launch& la = l.launches[li];
    NodeRef n = la.roots[0];
    if (la.fn >= 0 || n->kind != NodeKind::Prim || n->op != OpId::matmul || n->args.size() != 2 ||
        !(n->params.empty() || n->params[0] == 0 || n->params[0] == 1))
      continue;
    const bool dot = !n->params.empty() && n->params[0] == 1;
    const Variant::OperandView& a = plan.operand_views[li][0];
    const Variant::OperandView& b = plan.operand_views[li][1];
    const DType t = n->dtype;
    if (!a.ok || !b.ok || a.dtype != t || b.dtype != t ||
        !ops::blas::blas_dtype(t))
      continue;
    const size_t da = a.shape.size(), db = b.shape.size();
    if (da < 1 || da > 2 || db < 1 || db > 2) continue;
    if (dot) {
      // numpy.dot of two vectors: npc::dot's vector path (matrix_product's vector_dot call,
      // which matmul's m = p = 1 case makes too) for vectors of two or more elements whose
      // strides it takes as they are (positive multiples of the element size; the run checks
      // the pointers' alignment). Other dot shapes keep the general path.
      const int64_t isz = static_cast<int64_t>(itemsize(t));
      if (da != 1 || db != 1 || a.shape[0] < 2 || a.strides[0] <= 0 || a.strides[0] % isz != 0 ||
          b.strides[0] <= 0 || b.strides[0] % isz != 0)
        continue;
    }
    Variant::Product p;
    p.t = t;
    p.n = da == 1 ? 1 : a.shape[0];
    p.k = a.shape.back();
    p.m = db == 1 ? 1 : b.shape[1];
    if (b.shape[0] != p.k) continue;
    p.ars = da == 1 ? 0 : a.strides[0];
    p.acs = a.strides.back();
    p.brs = b.strides[0];
    p.bcs = db == 1 ? 0 : b.strides[1];
    Shape want;
    if (da == 2) want.push_back(p.n);
    if (db == 2) want.push_back(p.m);
    if (plan.buf_shape[la.bufs[0]] != want) continue;
    p.ok = true;
    if (ops::blas::compiled_product_timed(p.n, p.m, p.k)) p.timing = std::make_shared<Variant::ProductTiming>();
    plan.products[li] = p;
  }
  // Note [merged products]
  plan.matvecs.assign(nl, {});
  for (size_t li = 0; li < nl; ++li) {
    const Variant::Product& p = plan.products[li];
    const Launch& la = l.launches[li];
    if (!p.ok || (!la.roots[0]->params.empty() && la.roots[0]->params[0] != 0)) continue;
    const Variant::OperandView& a = plan.operand_views[li][0];
    const Variant::OperandView& b = plan.operand_views[li][1];
    MatVec mv;
    mv.t = p.t;
    const bool left = a.shape.size() == 2 && b.shape.size() == 1;
    if (!left && !(a.shape.size() == 1 && b.shape.size() == 2)) continue;
    const Variant::OperandView& s = left ? a : b;
    mv.ok = true;
    mv.side = left ? 0 : 1;
    mv.matrix_buf = la.bufs[left ? 1 : 2];
    mv.matrix_off = s.offset;
    mv.rows = s.shape[0];
    mv.cols = s.shape[1];
    mv.mrs = s.strides[0];
    mv.mcs = s.strides[1];
    mv.vector_buf = la.bufs[left ? 2 : 1];
    mv.vector_off = (left ? b : a).offset;
    mv.vstride = (left ? b : a).strides[0];
    mv.result_buf = la.bufs[0];
    // One form per matrix: S @ v is v @ S.T; the form whose matrix has contiguous rows.
    if (mv.mcs != static_cast<int64_t>(itemsize(mv.t)) && mv.mrs == static_cast<int64_t>(itemsize(mv.t))) {
      mv.side = 1 - mv.side;
      std::swap(mv.rows, mv.cols);
      std::swap(mv.mrs, mv.mcs);
    }
    plan.matvecs[li] = mv;
  }
  std::vector<std::vector<int>> writes(nb);  // per buffer: the launches storing into it
  for (size_t li = 0; li < nl; ++li) {
    const Launch& la = l.launches[li];
    if (la.fn < 0) writes[static_cast<size_t>(la.bufs[0])].push_back(static_cast<int>(li));
    else
      for (int b : v.root_bufs[li]) writes[static_cast<size_t>(b)].push_back(static_cast<int>(li));
    if (v.in_place[li] >= 0) writes[static_cast<size_t>(v.in_place[li])].push_back(static_cast<int>(li));
  }
  for (auto& w : writes) w.erase(std::unique(w.begin(), w.end()), w.end());
  plan.product_groups = group_products(plan.matvecs, writes);
  plan.product_group.assign(plan.product_groups.empty() ? 0 : nl, -1);
  for (size_t g = 0; g < plan.product_groups.size(); ++g)
    for (int li : plan.product_groups[g].members) plan.product_group[static_cast<size_t>(li)] = static_cast<int>(g);
  plan.group_timings.assign(plan.product_groups.size(), nullptr);
  for (size_t g = 0; g < plan.product_groups.size(); ++g) {
    // The group's gemm: (members x len) @ (len x out_len) elements.
    if (plan.product_groups[g].pass) continue;  // Note [row passes]: npc's own threads
    const MatVec& mv = plan.matvecs[static_cast<size_t>(plan.product_groups[g].members[0])];
    const auto members = static_cast<int64_t>(plan.product_groups[g].members.size());
    if (ops::blas::compiled_product_timed(members, mv.out_len(), mv.len()))
      plan.group_timings[g] = std::make_shared<Variant::ProductTiming>();
  }
  struct Block {
    size_t off, size;
    int end;
  };
  std::vector<Block> live;  // by offset
  // Note [product results in the arena]
  // A product called directly (Note [products in replays]) stores its result where it is
  // told: a small temporary one (the dot of a row loop's iteration) takes an arena block as
  // kernels' temporaries do, instead of an array allocated and freed per launch (about a
  // tenth of a traced Cholesky's replay). Not a result that escapes, one an epilogue takes
  // over (Note [in-place epilogues]: that needs an array of its own), nor one of merged
  // products; the general path of such a launch (a misaligned operand) copies its result in.
  std::vector<char> taken_over(nb, 0);
  for (size_t li = 0; li < nl; ++li)
    if (v.in_place[li] >= 0) taken_over[static_cast<size_t>(v.in_place[li])] = 1;
  for (size_t li = 0; li < nl; ++li) {
    const Launch& la = l.launches[li];
    const bool product = la.fn < 0 && plan.products[li].ok && (plan.product_group.empty() || plan.product_group[li] < 0) &&
                         !taken_over[static_cast<size_t>(la.bufs[0])] &&
                         shape_size(plan.buf_shape[la.bufs[0]]) * static_cast<int64_t>(itemsize(plan.products[li].t)) <= kArenaProductBytes;
    if ((la.fn < 0 && !product) || v.in_place[li] >= 0) continue;  // library results and in-place roots: their own storage
    std::erase_if(live, [&](const Block& k) { return k.end < static_cast<int>(li); });
    for (size_t ri = 0; ri < la.roots.size(); ++ri) {
      const int b = la.fn < 0 ? la.bufs[0] : v.root_bufs[li][ri];
      if (first[b] != static_cast<int>(li) || plan.arena_off[b] >= 0 || l.bufs[b].kind != BufInfo::Temp || v.escapes[b])
        continue;
      const size_t bytes = static_cast<size_t>(shape_size(plan.buf_shape[b])) * itemsize(l.bufs[b].dtype);
      const size_t need = (std::max<size_t>(1, bytes) + 63) / 64 * 64;
      size_t off = 0;
      auto it = live.begin();
      for (; it != live.end() && it->off < off + need; ++it) off = std::max(off, it->off + it->size);
      live.insert(it, Block{off, need, v.last_use[b]});
      plan.arena_off[b] = static_cast<int64_t>(off);
      plan.arena_bytes = std::max(plan.arena_bytes, off + need);
    }
  }
}

Variant build_variant(const ir::Graph& g, const std::vector<bool>& contiguous) {
  const Config cfg = current_config();
  Variant v;
  // Note [lowered-program cache] in lower_cache.cpp (debug output needs the kernel IR).
  const std::string key = cfg.lowering_cache && !cfg.debug ? lowering_key(g, contiguous) : "";
  const bool cached = !key.empty() && load_lowering(g, key, cfg, v.low, v.in_place);
  if (!cached) v.low = lower(g, contiguous);
  if (config().debug) {
    // Only the debug output is named by the structural hash: a loaded plan's graphs are not
    // walked again for it (Note [reading a plan's graphs] in src/tracer/plan_io.cpp).
    std::string tag = std::to_string(g.structural_hash() % 1000000007ull) + "_" + std::to_string(g_tag++);
    std::vector<std::string> names;
    write_debug(g, v.low, translation_unit(v.low, names, "g"), tag);
  }
  bump_stat(&Stats::graphs, 1);
  bump_stat(&Stats::lowering_passes, v.low.passes);
  bump_stat(&Stats::kernels, static_cast<int64_t>(v.low.kernel_text.size()));
  compile_kernels(v.low, v);  // Note [kernels across graphs]; a graph of library calls only compiles nothing
  v.last_use.assign(v.low.bufs.size(), -1);
  v.escapes.assign(v.low.bufs.size(), false);
  for (size_t i = 0; i < v.low.launches.size(); ++i)
    for (int b : v.low.launches[i].bufs) v.last_use[b] = static_cast<int>(i);
  for (NodeRef o : g.outputs) v.escapes[v.low.buffer_of.at(output_root(o))] = true;
  for (auto& [i, n] : g.writebacks) v.escapes[v.low.buffer_of.at(n)] = true;
  if (!cached) {
    for (size_t i = 0; i < v.low.launches.size(); ++i) {
      int b = in_place_buffer(v.low, i, v.last_use);
      v.in_place.push_back(b >= 0 && !v.escapes[b] ? b : -1);
    }
  }
  for (const Launch& la : v.low.launches) {
    v.root_bufs.emplace_back();
    for (NodeRef r : la.roots) v.root_bufs.back().push_back(v.low.buffer_of.at(r));
    for (int b : v.root_bufs.back()) v.writes_inputs = v.writes_inputs || v.low.bufs[b].kind == BufInfo::Input;
    v.chains.emplace_back();
    if (la.fn >= 0) continue;
    for (NodeRef a : la.roots[0]->args) {
      std::vector<NodeRef> chain;
      for (NodeRef x = a; x->kind == NodeKind::View; x = x->args[0]) chain.push_back(x);
      std::reverse(chain.begin(), chain.end());
      v.chains.back().push_back(std::move(chain));
    }
  }
  plan_launches(v);
  auto plan = std::make_shared<Variant::Plan>();
  if (g.symbols().empty()) plan_replay(g, v, {}, *plan);
  else plan->arena_off.assign(v.low.bufs.size(), -1);  // runs work out their shapes (Note [plans per binding])
  v.plan = std::move(plan);
  if (!cached && !key.empty()) store_lowering(g, key, cfg, v.low, v.in_place);
  return v;
}

// The values of a run's Call nodes and the kinds of fp errors their calls raised, by node id
// (Note [fp error attribution]): the eager run that names the errors takes them instead of
// calling the host again.
struct CallRecord {
  std::vector<std::optional<ndarray>> values;
  std::vector<int> flags;
  void record(const ir::Graph& g, NodeRef n, const ndarray& value, int f) {
    if (values.empty()) {
      values.resize(g.nodes().size());
      flags.resize(g.nodes().size(), 0);
    }
    values.at(n->id) = value;
    flags.at(n->id) = f;
  }
};

std::vector<ndarray> interpret_reporting(const ir::Graph& g, const ir::RunArgs& args, bool report,
                                         const CallRecord* calls);

class FusedExecutable {
 public:
  explicit FusedExecutable(const ir::Graph& g) : g_(g) {
    fp_names(g, fp_where_);  // Note [naming fp errors]
    for (NodeRef n : g.nodes()) {
      has_calls_ = has_calls_ || n->kind == NodeKind::Call;
      if (n->kind == NodeKind::Input) inputs_.push_back(n);
    }
    // Lower and compile the all-contiguous variant now, so errors surface at compile time.
    std::vector<bool> contig(g.num_inputs(), true);
    get(contig);
  }

  std::vector<ndarray> operator()(const ir::RunArgs& args) {
    ir::check_run_args(g_, args, inputs_);  // kernels index the inputs by the graph's shapes
    std::vector<bool> contig(g_.num_inputs(), true);
    bool odd = false;
    for (size_t i = 0; i < std::min<size_t>(args.inputs.size(), contig.size()); ++i) {
      const ndarray& a = args.inputs[i];
      contig[i] = a.is_c_contiguous();
      for (int64_t s : a.strides())
        if (s % static_cast<int64_t>(a.itemsize()) != 0) odd = true;
    }
    const Variant& v = odd ? eager_variant() : get(contig);
    if (v.eager) {
      bump_stat(&Stats::fallbacks, 1);
      return interpret_with_fp_errors(g_, args);
    }
    // Note [writes before a raising operation]: a graph the error report cannot run again
    // (host calls; kernels that store into the inputs the graph owns) reads the error state
    // first (these graphs already pay for a call into Python, or are steps of a long loop).
    if ((has_calls_ || v.writes_inputs) && fp_raise_kinds()) {
      if (has_calls_) return interpret_with_fp_errors(g_, args);
      std::vector<ndarray> before(args.inputs.begin(), args.inputs.end());
      for (auto& [i, n] : g_.writebacks) before[i] = args.inputs[i].copy();
      return run(v, args, &before);
    }
    try {
      return run(v, args, nullptr);
    } catch (const FpStop&) {
      throw;
    } catch (const std::exception&) {
      // Note [writes before an exception] in src/tracer/interpret.cpp: the eager run writes
      // into the caller's arrays what the program wrote before the op that threw, and throws
      // again. Not after a run that stored into the inputs, nor with host calls (drawn again).
      if (g_.input_writes.empty() || v.writes_inputs || has_calls_) throw;
      return interpret_with_fp_errors(g_, args);
    }
  }

 private:
  const ir::Graph& g_;
  std::string fp_where_[4];
  bool has_calls_ = false;  // Call nodes (Note [fp error attribution])
  std::mutex mu_;
  std::map<std::vector<bool>, std::shared_ptr<Variant>> variants_;
  std::vector<NodeRef> inputs_;  // the graph's Input nodes (checked on every run)
  std::atomic<bool> arena_busy_{false};  // Note [replay costs]
  std::shared_ptr<Storage> arena_;

  // Note [fp error attribution]
  // NumPy warns once per op that raised (np.log(x) + 1/y with zeros: "divide by zero
  // encountered in log", then "... in divide"); a fused kernel only knows which kinds its
  // threads raised. Errors are rare, so a call that raised any runs the graph again on the
  // eager interpreter with the same inputs (those the graph writes are copied first: the
  // caller's arrays and the results already computed do not change) and reads the flags
  // after each op, so the report is eager NumPy's. When the eager run raises nothing, the
  // kernels' flags came from their own order of evaluation (a blocked sum that met inf +
  // -inf before the NaN that NumPy's order meets first): NumPy raises nothing either, and
  // nothing is reported. Host calls do not run again (numpy.random would advance its stream):
  // the run keeps each Call node's value and the kinds its call raised, and the eager run takes
  // those. A graph that wrote into its owned inputs (Note [owned inputs] in lower_group.cpp)
  // cannot run again on them unless they were copied first (`before`); else it keeps the
  // naming rule (Note [naming fp errors]).
  // `before`: copies of the inputs as they were before the run (those the graph writes), or
  // null. When the eager run stops at an error the error state raises (Note [writes before a
  // raising operation]), the arrays the graph writes take what it left in their copies, and
  // FpStop is thrown.
  void record_fp_errors(int kernel_flags, const std::vector<std::pair<int, std::string>>& host_errors,
                        const ir::RunArgs& args, bool inputs_changed, std::vector<ndarray>* before,
                        const CallRecord& calls) {
    if (!inputs_changed || before) {
      auto pending = take_named_fp_flags();
      std::vector<ndarray> in(args.inputs.begin(), args.inputs.end());
      for (auto& [i, n] : g_.writebacks) in[i] = before ? (*before)[i] : in[i].copy();
      bool stopped = false;
      try {
        interpret_reporting(g_, ir::RunArgs{in, args.scalars}, true, &calls);
      } catch (const FpStop&) {
        stopped = true;
      }
      auto found = take_named_fp_flags();
      for (auto& [bit, where] : pending) add_fp_report(bit, where);
      for (auto& [bit, where] : found) add_fp_report(bit, where);
      if (stopped) {
        for (auto& [i, n] : g_.writebacks) copy_into(args.inputs[i], in[i]);
        throw FpStop();
      }
      return;
    }
    for (auto& [f, where] : host_errors) add_fp_report(f, where);
    if (kernel_flags) add_named_fp_flags(kernel_flags, fp_where_);
  }

  const Variant& eager_variant() {
    static Variant e = [] { Variant v; v.eager = true; v.error = "unaligned strides"; return v; }();
    return e;
  }

  // Built without holding mu_: the compiler runs with the GIL released (Note [compiler
  // child] in jit.cpp), and another thread holding the GIL may call this executable
  // meanwhile. Two threads may build the same variant; the first one stored is kept.
  const Variant& get(const std::vector<bool>& contig) {
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = variants_.find(contig);
      if (it != variants_.end()) return *it->second;
    }
    auto v = std::make_shared<Variant>();
    try {
      *v = build_variant(g_, contig);
    } catch (const CompileTimeout& e) {
      // Not a code generation bug: run eagerly whatever codegen_errors says, warn once.
      static std::once_flag once;
      std::call_once(once, [&] { warn(std::string(e.what()) + "; running such graphs eagerly"); });
      v->eager = true;
      v->error = e.what();
    } catch (const CodegenError& e) {
      if (config().raise_errors) throw;
      warn(std::string("fused code generation failed, running the graph eagerly: ") + e.what());
      v->eager = true;
      v->error = e.what();
    }
    std::lock_guard<std::mutex> l(mu_);
    return *variants_.emplace(contig, v).first->second;
  }

  static constexpr size_t kPooledBytes = 64 * 1024;

  // An empty array to reset slots with (ndarray() allocates a storage of its own).
  static const ndarray& none() {
    static const ndarray e;
    return e;
  }

  // Temporaries whose last reader was launch `li` go back to the free list (Note [memory
  // planning]); those in the arena (Note [replay costs]) need nothing.
  static void release_after(const Variant& v, const Variant::Plan& P, size_t li, std::vector<std::optional<ndarray>>& arrays,
                            std::vector<char*>& ptr, const std::vector<bool>& stolen,
                            std::multimap<size_t, std::shared_ptr<Storage>>& free_list) {
    for (int b : v.released[li]) {
      if (P.arena_off[b] >= 0 || !arrays[b]) {
        ptr[b] = nullptr;
        continue;
      }
      auto& s = arrays[b]->storage();
      // Small storages go back to malloc, which serves them as fast as a lookup here; a loop
      // of thousands of scalar temporaries would otherwise grow the list without bound.
      // (A storage held elsewhere, a Call node's value kept for Note [fp error attribution], is not reused.)
      if (s && ptr[b] && !stolen[b] && s.use_count() == 1 && s->nbytes() >= kPooledBytes) free_list.emplace(s->nbytes(), s);
      arrays[b].reset();
      ptr[b] = nullptr;
    }
  }

  // Runs `call` (a product) with blas's rule for its threads (`timing` null), or as
  // Note [timed product threads] times it; returns what `call` returns.
  template <class F>
  static auto timed_product(Variant::ProductTiming* timing, F&& call) {
    using ops::blas::ProductThreads;
    const bool one = timing && timing->next_one();
    const bool measuring = timing && timing->chosen.load(std::memory_order_relaxed) < 0;
    const auto t0 = measuring ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    auto result = [&] {
      ops::blas::CompiledProducts own(!timing ? ProductThreads::Rule : one ? ProductThreads::One : ProductThreads::Library);
      return call();
    }();
    if (measuring) timing->record(one, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return result;
  }

  // The timing of library call `n` at launch li on the general path: a matmul of one BLAS
  // dtype whose operands have one or two dims, or null (blas's rule).
  static Variant::ProductTiming* general_timing(const Variant& v, size_t li, NodeRef n, const std::vector<ndarray>& ops) {
    if (n->kind != NodeKind::Prim || n->op != OpId::matmul || ops.size() != 2) return nullptr;
    const DType t = n->dtype;
    if (!ops::blas::blas_dtype(t)) return nullptr;
    const ndarray &a = ops[0], &b = ops[1];
    if (a.ndim() < 1 || a.ndim() > 2 || b.ndim() < 1 || b.ndim() > 2) return nullptr;
    const int64_t rows = a.ndim() == 1 ? 1 : a.shape()[0], k = a.shape().back();
    const int64_t cols = b.ndim() == 1 ? 1 : b.shape()[1];
    return v.general_timings->find(li, rows, cols, k);
  }

  // Note [merged products] in merged_products.cpp: at the first launch li of a group, computes
  // every member's product into its result buffer and marks the members `merged`; false
  // (nothing done) when li is not a group's first launch or the operands' addresses do not
  // allow it (then each member runs on its own).
  template <class OperandAt>
  bool run_merged(const Variant& v, const Variant::Plan& P, size_t li, const OperandAt& operand_at, std::vector<std::optional<ndarray>>& arrays,
                  std::vector<char*>& ptr, std::vector<char>& merged, int& fpe,
                  std::vector<std::pair<int, std::string>>& host_errors) {
    const Lowered& l = v.low;
    const size_t id = static_cast<size_t>(P.product_group[li]);
    const ProductGroup& group = P.product_groups[id];
    const std::vector<int>& members = group.members;
    if (members[0] != static_cast<int>(li)) return false;
    const MatVec& mv = P.matvecs[li];
    std::vector<const std::byte*> matrices, vectors;
    std::vector<int64_t> strides;
    bool views = true, fp = false;
    for (size_t j = 0; j < members.size(); ++j) {
      const auto mi = static_cast<size_t>(members[j]);
      const size_t m2 = P.operand_views[mi][0].shape.size() == 2 ? 0 : 1;  // matmul's matrix operand
      matrices.push_back(operand_at(mi, m2));
      // A row pass's member whose vector is another member's product reads it from the pass.
      vectors.push_back(group.pass && group.from[j] >= 0 ? nullptr : operand_at(mi, 1 - m2));
      strides.push_back(P.matvecs[mi].vstride);
      views = views && !v.escapes[static_cast<size_t>(l.launches[mi].bufs[0])];
      fp = fp || v.product_fp[mi];
    }
    fpe |= ops::read_fpe();  // the kernels' so far
    ops::clear_fpe();
    std::vector<ndarray> results;
    bool done;
    if (group.pass) {
      done = std::all_of(matrices.begin(), matrices.end(), [&](const std::byte* m) { return m == matrices[0]; }) &&
             run_row_pass(group, P.matvecs, matrices[0], vectors, results);
    } else {
      done = timed_product(P.group_timings[id].get(), [&] {
        return run_product_group(mv, matrices, vectors, strides, views, results);
      });
    }
    // (Flags of a group that is not done belong to no product: its members run again.)
    if (const int f = fp && done ? ops::read_fpe() : 0) host_errors.emplace_back(f, node_label(l.launches[li].roots[0]));
    ops::clear_fpe();
    if (!done) return false;
    for (size_t j = 0; j < members.size(); ++j) {
      const auto mi = static_cast<size_t>(members[j]);
      const int rb = l.launches[mi].bufs[0];
      arrays[rb] = std::move(results[j]);
      ptr[rb] = reinterpret_cast<char*>(arrays[rb]->data());
      merged[mi] = 1;
    }
    bump_stat(&Stats::merged_products, static_cast<int64_t>(members.size()));
    return true;
  }

  // Note [plans per binding]
  // A graph with symbols (dynamic sizes) worked out its shapes, views and products on every
  // run, and took none of the shortcuts of Note [replay costs] (merged products, direct
  // products, the arena): a function called at a second size ran 1.3-2x slower than compiled
  // for that size alone. The plan of each binding of the symbols is made at its first run and
  // kept, the Plans::kMax latest ones (the oldest goes first). Every binding runs with a plan,
  // so a size's results do not depend on the sizes called before it (a merged product and
  // products one by one differ in the last bits). A run holds its plan while it runs.
  std::shared_ptr<const Variant::Plan> plan_for(const Variant& v, const std::vector<int64_t>& sym) {
    if (sym.empty()) return v.plan;
    Variant::Plans& ps = *v.plans;
    std::lock_guard lk(ps.mu);
    auto it = ps.by_binding.find(sym);
    if (it != ps.by_binding.end()) return it->second;
    if (ps.by_binding.size() >= Variant::Plans::kMax) {
      ps.by_binding.erase(ps.made.front());
      ps.made.pop_front();
    }
    auto p = std::make_shared<Variant::Plan>();
    plan_replay(g_, v, sym, *p);
    ps.made.push_back(sym);
    return ps.by_binding.emplace(sym, std::move(p)).first->second;
  }

  // The arena of a run (Note [replay costs]): the executable's own while no other run holds it.
  struct Arena {
    FusedExecutable* owner = nullptr;
    std::shared_ptr<Storage> storage;
    ~Arena() {
      if (owner) owner->arena_busy_.store(false, std::memory_order_release);
    }
  };
  void take_arena(const Variant::Plan& v, Arena& a) {
    if (!v.arena_bytes) return;
    if (v.arena_bytes <= kArenaKeptBytes && !arena_busy_.exchange(true, std::memory_order_acquire)) {
      a.owner = this;
      if (!arena_ || arena_->nbytes() < v.arena_bytes) {
        arena_.reset();
        arena_ = Storage::allocate(v.arena_bytes);
      }
      a.storage = arena_;
      return;
    }
    a.storage = Storage::allocate(v.arena_bytes);
  }

  // `before`: what record_fp_errors runs the graph again from, when not the inputs themselves.
  std::vector<ndarray> run(const Variant& v, const ir::RunArgs& args, std::vector<ndarray>* before) {
    const Lowered& l = v.low;
    std::vector<int64_t> sym;
    for (auto& s : g_.symbols()) sym.push_back(args.inputs[s.input].shape(s.axis));
    const std::shared_ptr<const Variant::Plan> plan = plan_for(v, sym);
    const Variant::Plan& P = *plan;
    std::vector<int64_t> st(std::max(1, l.num_strides));
    for (auto& b : l.bufs) {
      if (b.kind != BufInfo::Input || b.contiguous || b.shape.empty()) continue;
      const ndarray& a = args.inputs[b.index];
      for (int d = 0; d < a.ndim(); ++d) st[b.stride_base + d] = a.strides()[d] / static_cast<int64_t>(a.itemsize());
    }
    alignas(16) std::vector<unsigned char> scal(16 * std::max<size_t>(1, args.scalars.size()) + 16);
    std::vector<char*> ptr(l.bufs.size(), nullptr);
    // The arrays of buffers not in the arena, set when a launch writes them (Note [replay
    // costs]: empty slots cost nothing to make and drop, on graphs of thousands of buffers).
    std::vector<std::optional<ndarray>> arrays(l.bufs.size());
    auto held_array = [&](int b) -> const ndarray& { return arrays[b] ? *arrays[b] : none(); };
    for (size_t i = 0; i < l.bufs.size(); ++i) {
      const BufInfo& b = l.bufs[i];
      if (b.kind == BufInfo::Input) {
        if (b.index < static_cast<int>(args.inputs.size())) ptr[i] = reinterpret_cast<char*>(args.inputs[b.index].data());
      } else if (b.kind == BufInfo::Scalars) {
        ptr[i] = reinterpret_cast<char*>(scal.data());
        if (b.scalar_slot >= 0) args.scalars[b.scalar_slot].store(b.dtype, scal.data() + 16 * b.scalar_slot);
      }
    }
    Arena arena;
    take_arena(P, arena);
    // Note [fp errors in kernels] in emit_cpp.cpp: kernels leave the calling thread's flags
    // to this loop (the scalars' stores above may have raised: they are not the graph's).
    ops::clear_fpe();
    std::byte* const base = arena.storage ? arena.storage->data() : nullptr;
    // Note [memory planning]
    std::multimap<size_t, std::shared_ptr<Storage>> free_list;
    std::vector<bool> stolen(l.bufs.size(), false);  // Note [in-place epilogues]
    int fpe = 0;  // FpFlag bits raised by the kernels, reported by the caller (bind_tracer)
    std::vector<std::pair<int, std::string>> host_errors;  // (FpFlag bits, op) of host calls
    CallRecord calls;  // the Call nodes' values and errors (Note [fp error attribution])
    std::vector<char*> kb;
    std::vector<ndarray> ops;
    // The value in buffer `b`: an input, an array, or a view of the arena.
    auto value_of = [&](int b) -> ndarray {
      const BufInfo& bi = l.bufs[b];
      if (bi.kind == BufInfo::Input) return args.inputs[bi.index];
      if (P.arena_off[b] < 0) return held_array(b);
      const Shape& shape = P.buf_shape[b];
      return ndarray(arena.storage, P.arena_off[b], bi.dtype, shape, contiguous_strides(shape, itemsize(bi.dtype)));
    };
    // Note [products in replays]: operand k of launch li's product, where its buffer holds it.
    auto operand_at = [&](size_t li, size_t k) -> const std::byte* {
      const int b = l.launches[li].bufs[1 + k];
      const Variant::OperandView& ov = P.operand_views[li][k];
      if (P.arena_off[b] >= 0) return base + P.arena_off[b] + ov.offset;
      const ndarray& held = l.bufs[b].kind == BufInfo::Input ? args.inputs[l.bufs[b].index] : held_array(b);
      return held.storage() && held.strides() == ov.base_strides ? held.data() + ov.offset : nullptr;
    };
    // Note [merged products]: the launches whose product their group's first launch computed.
    std::vector<char> merged(P.product_group.size(), 0);
    for (size_t li = 0; li < l.launches.size(); ++li) {
      const Launch& la = l.launches[li];
      if (la.fn < 0) {
        // Note [library calls]: operands are views over their buffers; the result is the
        // (C-contiguous) array the library returns.
        NodeRef n = la.roots[0];
        if (!merged.empty() && merged[li]) {
          release_after(v, P, li, arrays, ptr, stolen, free_list);
          continue;
        }
        if (!merged.empty() && P.product_group[li] >= 0 && run_merged(v, P, li, operand_at, arrays, ptr, merged, fpe, host_errors)) {
          release_after(v, P, li, arrays, ptr, stolen, free_list);
          continue;
        }
        if (P.static_shapes && P.products[li].ok) {
          auto operand = [&](size_t k) { return operand_at(li, k); };
          // numpy.dot copies a misaligned operand first: such calls take the general path.
          auto aligned = [&](const std::byte* q) {
            return q && reinterpret_cast<uintptr_t>(q) % static_cast<uintptr_t>(itemsize(P.products[li].t)) == 0;
          };
          const std::byte* pa = operand(0);
          const std::byte* pb = operand(1);
          if (aligned(pa) && aligned(pb)) {
            const Variant::Product& p = P.products[li];
            const int rb = la.bufs[0];
            // Note [product results in the arena]
            std::optional<ndarray> r;
            if (P.arena_off[rb] < 0) r = npc::empty(P.buf_shape[rb], p.t);
            std::byte* const into = r ? r->data() : base + P.arena_off[rb];
            fpe |= ops::read_fpe();  // the kernels' so far
            ops::clear_fpe();
            // As run_node_eagerly's products, or timed (Note [timed product threads]).
            timed_product(p.timing.get(), [&] { return matmul_into(p.t, pa, p.ars, p.acs, pb, p.brs, p.bcs, into, p.n, p.k, p.m); });
            // The flags the product raised, as matmul's ProductFlags reads them.
            if (const int f = v.product_fp[li] ? ops::read_fpe() : 0) host_errors.emplace_back(f, node_label(n));
            ops::clear_fpe();
            if (r) arrays[rb] = std::move(*r);
            ptr[rb] = reinterpret_cast<char*>(into);
            release_after(v, P, li, arrays, ptr, stolen, free_list);
            continue;
          }
        }
        ops.clear();
        for (size_t k = 0; k < n->args.size(); ++k) {
          const int b = la.bufs[1 + k];
          const auto& chain = v.chains[li][k];
          Shape dyn;
          auto shape_of = [&](size_t c) -> const Shape& {
            return P.static_shapes ? P.chain_shapes[li][k][c] : (dyn = ir::concrete_shape(chain[c]->shape, sym));
          };
          size_t c = 0;
          if (P.static_shapes && P.operand_views[li][k].ok) {
            // Note [replay costs]: the view's geometry computed once, over this run's buffer.
            const Variant::OperandView& ov = P.operand_views[li][k];
            if (P.arena_off[b] >= 0) {
              ops.push_back(ndarray(arena.storage, P.arena_off[b] + ov.offset, ov.dtype, ov.shape, ov.strides));
              continue;
            }
            const ndarray& held = l.bufs[b].kind == BufInfo::Input ? args.inputs[l.bufs[b].index] : held_array(b);
            if (held.strides() == ov.base_strides) {
              ops.push_back(held.with_geometry(held.offset() + ov.offset, ov.dtype, ov.shape, ov.strides));
              continue;
            }
          }
          if (P.arena_off[b] >= 0) {
            ops.push_back(value_of(b));
          } else {
            // The first view is taken straight from the buffer's array (no copy of it first).
            const ndarray& held = l.bufs[b].kind == BufInfo::Input ? args.inputs[l.bufs[b].index] : held_array(b);
            if (chain.empty()) {
              ops.push_back(held);
            } else {
              ops.push_back(ir::apply_view(chain[0], held, shape_of(0)));
              c = 1;
            }
          }
          for (; c < chain.size(); ++c) {
            ndarray next = ir::apply_view(chain[c], ops.back(), shape_of(c));
            ops.back() = std::move(next);
          }
        }
        fpe |= ops::read_fpe();  // the kernels' so far (eager ops clear the flags)
        ops::clear_fpe();
        take_fp_errors();  // stale flags of earlier eager calls are not this node's
        take_product_fp_flags();
        const Shape out_shape = P.static_shapes ? P.buf_shape[la.bufs[0]] : ir::concrete_shape(n->shape, sym);
        ndarray r = timed_product(general_timing(v, li, n, ops), [&] { return run_library_call(g_, n, ops, out_shape); });
        ops.clear();
        // Errors of the eager ops a host call ran, and of a BLAS product (Note [library call fp errors]).
        int f = take_fp_errors() | take_fp_flags();
        const int pf = take_product_fp_flags();
        if (v.product_fp[li]) f |= pf;
        if (f) host_errors.emplace_back(f, node_label(n));
        if (n->kind == NodeKind::Call) calls.record(g_, n, r, f);  // Note [fp error attribution]
        ops::clear_fpe();  // what the call left in the hardware flags is not a kernel's
        // (A host call may hand back an operand: never a view of the arena, which later launches reuse.)
        if (!r.is_c_contiguous() || r.offset() != 0 || (arena.storage && r.storage() == arena.storage)) r = r.copy();
        int b = la.bufs[0];
        if (P.arena_off[b] >= 0) {
          // Note [product results in the arena]: the value readers find there.
          copy_into(value_of(b), r);
          ptr[b] = reinterpret_cast<char*>(base + P.arena_off[b]);
        } else {
          arrays[b] = std::move(r);
          ptr[b] = reinterpret_cast<char*>(arrays[b]->data());
        }
        release_after(v, P, li, arrays, ptr, stolen, free_list);
        continue;
      }
      for (size_t ri = 0; ri < la.roots.size(); ++ri) {
        NodeRef r = la.roots[ri];
        int b = v.root_bufs[li][ri];
        if (ptr[b]) continue;
        if (P.arena_off[b] >= 0) {
          ptr[b] = reinterpret_cast<char*>(base + P.arena_off[b]);
          continue;
        }
        Shape shape = P.static_shapes ? P.buf_shape[b] : ir::concrete_shape(r->shape, sym);
        if (int src = v.in_place[li]; src >= 0 && arrays[src] && arrays[src]->is_c_contiguous() &&
                                      arrays[src]->offset() == 0 && arrays[src]->size() == shape_size(shape)) {
          // Note [in-place epilogues]
          const ndarray& from = *arrays[src];
          arrays[b] = from.storage() ? ndarray(from.storage(), 0, r->dtype, shape, contiguous_strides(shape, itemsize(r->dtype)))
                                     : from;
          stolen[src] = true;  // its storage now belongs to the root: not freed after the launch
          ptr[b] = reinterpret_cast<char*>(arrays[b]->data());
          continue;
        }
        if (v.escapes[b]) {
          arrays[b] = npc::empty(shape, r->dtype);
        } else {
          size_t nbytes = std::max<size_t>(1, static_cast<size_t>(shape_size(shape)) * itemsize(r->dtype));
          std::shared_ptr<Storage> s;
          auto it = free_list.lower_bound(nbytes);
          if (it != free_list.end()) { s = it->second; free_list.erase(it); }
          else s = Storage::allocate(nbytes);
          Strides strides = contiguous_strides(shape, itemsize(r->dtype));
          arrays[b] = ndarray(std::move(s), 0, r->dtype, std::move(shape), std::move(strides));
        }
        ptr[b] = reinterpret_cast<char*>(arrays[b]->data());
      }
      kb.clear();
      for (int b : la.bufs) kb.push_back(ptr[b]);
      fpe |= v.fns[la.fn](kb.data(), sym.data(), st.data(), la.params.data());
      release_after(v, P, li, arrays, ptr, stolen, free_list);
    }
    fpe |= ops::read_fpe();
    ops::clear_fpe();
    int64_t lib = 0;
    for (auto& la : l.launches) lib += la.fn < 0;
    bump_stat(&Stats::kernel_runs, static_cast<int64_t>(l.launches.size()) - lib);
    if (lib) bump_stat(&Stats::library_calls, lib);
    if (fpe || !host_errors.empty()) record_fp_errors(fpe, host_errors, args, v.writes_inputs, before, calls);
    // A value stored into an input's array (Note [owned inputs] in src/fusion/lower_group.cpp)
    // is that array. (Write-backs and outputs escape: never in the arena.)
    for (auto& [i, n] : g_.writebacks) {
      const int b = l.buffer_of.at(n);
      if (l.bufs[b].kind == BufInfo::Input && l.bufs[b].index == i) continue;  // written in place
      copy_into(args.inputs[i], value_of(b));
    }
    std::vector<ndarray> outs;
    for (NodeRef o : g_.outputs) {
      const NodeRef r = output_root(o);  // a transposed view of its root's buffer (NumPy's layout)
      ndarray a = value_of(l.buffer_of.at(r));
      std::vector<NodeRef> chain;
      for (NodeRef x = o; x != r; x = x->args[0]) chain.push_back(x);
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) a = ir::apply_view(*it, a, ir::concrete_shape((*it)->shape, sym));
      outs.push_back(std::move(a));
    }
    return outs;
  }
};

}  // namespace

void forget_kernels() {
  std::lock_guard<std::mutex> lk(g_kernels_mu);
  g_kernels.clear();
}

void reset_distinct_kernels() {
  std::lock_guard<std::mutex> lk(g_kernels_mu);
  g_counted.clear();
}

// Note [writes before a raising operation]
// Under np.errstate(...="raise") NumPy stops at the operation that raises: the statements
// after it never run, and the arrays the program writes hold what was written before it,
// together with the operation's own out= (a ufunc, a reduction or an accumulation stores its
// result before it checks its errors: `A[i] /= 0` leaves inf in A[i]). A graph runs whole,
// writes its inputs back at its end, and its errors are reported after it (Note [reporting
// compiled fp errors] in python/npc/csrc/bind_tracer.cpp): every write of the graph would
// reach the caller's arrays, also those after the operation. The error state is the caller's
// at each run (a graph is not specialised to it), and errors are rare, so nothing is done or
// read up front. Where a run raised an error, the eager interpreter runs the graph (the eager
// backend's runs are that; the fused backend runs the graph again on copies of the inputs it
// writes, Note [fp error attribution]) and reads the error state at its first error
// (fp_raise_kinds: numpy.geterr through the hook the bindings install). It stops at the first
// node whose errors the state raises, at that node's first evaluation (node ids follow first
// evaluations: no node after it was evaluated earlier), and writes into the inputs what they
// held at that point of the program. For that the tracer logs every write into an input's
// buffer with the number of evaluations recorded before it (Graph::input_writes; an op's out=
// counts from before the op), dce keeps a logged value that a later write replaced unread,
// and the interpreter holds each logged value until the nodes before the input's next write
// have run, and runs the nodes of the stopping op's out= before it writes back. The errors
// left pending are those of the evaluations up to that node, in program order (the warnings
// of earlier ops first, as in NumPy), and the executable throws FpStop; its callers report
// the errors, which raises FloatingPointError (a plan's later steps, a function's later
// Python, never run). The fused backend then copies what the eager run left in its copies
// into the caller's arrays instead of its own write-backs. Graphs it cannot run again after
// the fact read the state before they run, and under "raise": a graph with host calls
// (numpy.random would draw again) runs on the eager interpreter, and a step whose kernels
// store into the inputs the graph owns (Note [owned inputs] in src/fusion/lower_group.cpp) copies those
// inputs first. A step in the background answers for the state of the thread that started it
// (FpRaiseKindsScope). Where no error is raised the cost is the log (an entry per write into
// an input). Not covered: a RuntimeWarning that a warnings filter turns into an exception, or
// an errcall that raises, stop NumPy at the op too; a graph's writes all happen before them.
std::vector<ndarray> interpret_with_fp_errors(const ir::Graph& g, const ir::RunArgs& args, bool report) {
  return interpret_reporting(g, args, report, nullptr);
}

namespace {
std::vector<ndarray> interpret_reporting(const ir::Graph& g, const ir::RunArgs& args, bool report,
                                         const CallRecord* calls) {
  take_fp_errors();  // stale flags of earlier eager calls are not this graph's
  take_product_fp_flags();
  // Flags pending for a report still to come are kept aside and given back: a graph break
  // inside `a[mask] = v` runs the segment after the value's cast to a's dtype and before the
  // assignment reports that cast ("overflow encountered in cast"), as the fused backend does.
  struct KeepPending {
    int flags = take_fp_flags();
    ~KeepPending() { add_fp_flags(flags); }
  } keep_pending;
  // A ufunc with several outputs (divmod) is one call in NumPy: its errors are reported once,
  // by its first output's node when the graph has it.
  std::set<std::pair<OpId, std::vector<NodeRef>>> first_outputs;
  for (NodeRef n : g.nodes())
    if (n->kind == NodeKind::Ufunc && n->params.at(0) == 0) first_outputs.insert({n->op, n->args});
  // The kinds each node raised; reported in the program's order of evaluation, once per
  // evaluation a node stands for (Note [merged evaluations]), also when a later op throws.
  std::vector<int> raised(g.nodes().size(), 0);
  // `stopped`: the node the run stopped at, whose first evaluation is the last reported.
  auto flush = [&](NodeRef stopped) {
    if (!report) return;
    std::vector<uint32_t> seen(raised.size(), 0);
    for (uint32_t id : g.evaluation_order()) {
      if (id >= raised.size() || !raised[id]) continue;
      ++seen[id];
      add_fp_report(raised[id], node_label(g.nodes()[id]));
      if (stopped && id == stopped->id) return;
    }
    // A node the order does not list (it should not happen) still reports each evaluation.
    for (NodeRef n : g.nodes())
      for (uint32_t k = seen[n->id]; raised[n->id] && k < g.evaluations(n); ++k) add_fp_report(raised[n->id], node_label(n));
  };
  // Note [writes before a raising operation]: the kinds the error state raises, read at the
  // first error (-1: not yet); the run stops at the first node that raised one of them.
  int raises = -1;
  std::vector<ndarray> out;
  const std::span<const std::optional<ndarray>> call_values =
      calls ? std::span<const std::optional<ndarray>>(calls->values) : std::span<const std::optional<ndarray>>();
  try {
    out = ir::interpret(g, args, [&](NodeRef n, const ndarray& value, std::span<const ndarray> in) {
      int f = take_fp_errors() | take_fp_flags();
      const int pf = take_product_fp_flags();
      if (reports_product_fp(n)) f |= pf;
      // A call that did not run again: the kinds it raised in the run that recorded it.
      if (n->kind == NodeKind::Call && calls && n->id < calls->values.size() && calls->values[n->id])
        f = calls->flags[n->id];
      if (n->kind == NodeKind::Ufunc && n->params.at(0) != 0 && first_outputs.count({n->op, n->args})) f = 0;
      if (n->id < raised.size()) raised[n->id] |= f;
      if (!f || !report) return false;
      if (raises < 0) raises = fp_raise_kinds();
      return (f & raises) != 0;
    }, call_values);
  } catch (const ir::Stopped& s) {
    flush(s.node);
    throw FpStop();
  } catch (...) {
    flush(nullptr);
    throw;
  }
  flush(nullptr);
  return out;
}
}  // namespace

ir::Executable compile_graph(const ir::Graph& g) {
  auto ex = std::make_shared<FusedExecutable>(g);
  return [ex](const ir::RunArgs& args) { return (*ex)(args); };
}

void register_backend() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (ir::register_backend) ir::register_backend("fused", [](const ir::Graph& g) { return compile_graph(g); });
  });
}

}  // namespace npc::fusion
