#pragma once
// Internal to lowering (lower_group.cpp, lower_expr.cpp, lower_reduce.cpp, kir_passes.cpp): the
// kernel emitter of one group of roots, and the kernel-IR passes it runs (Note [kernel-IR
// passes] in kir_verify.cpp).
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fusion/lower.hpp"

namespace npc::fusion {

OpId generated_as(NodeRef n);
bool is_scan(NodeRef n);

/// Thrown by the emitter: `node` (and `more`, Note [materialisations found in one pass] in
/// lower_expr.cpp) must be materialised; the grouping retries.
struct NeedMaterialize {
  NodeRef node;
  std::vector<NodeRef> more;
};

inline int64_t static_extent(const Dim& d) { return d.is_static() ? d.value() : -1; }

inline Lin dim_lin(const Dim& d) {
  if (d.is_static()) return Lin::constant(d.value());
  return Lin::atom("sym[" + std::to_string(d.symbol()) + "]");
}

// Whether generated code reduces with ufunc `op` in dtype `t` (lower_reduce.cpp).
bool reduce_supported(OpId op, DType t);
/// Where NumPy rounds a float16 sum or product to float16 (Note [float16 reductions]).
enum class HalfRounding { Once, EveryStep, PerInnerRun };
HalfRounding half_rounding(NodeRef n);
/// The reduced axes of a float sum that NumPy adds as one pairwise run, outermost first
/// (Note [one pairwise run] in lower_reduce.cpp); empty when it does not.
std::vector<int> single_run_axes(NodeRef n);

// Note [small reductions]: reduction loops of at most kUnrollExtent iterations and
// kUnrollStmts statements once unrolled are unrolled.
constexpr int64_t kUnrollExtent = 8;
constexpr int64_t kUnrollStmts = 256;

// Kernel-IR passes (kir_passes.cpp).
void coalesce(Block& top);
void schedule(Block& top, bool has_reduction_inside);
void parallel_scalar_sums(Block& top);
void parallel_pairwise_sums(Block& top);
bool contains_loops(const Block& b);
void unroll_small(Block& b);
void hoist_invariants(Block& b, const std::vector<KBuffer>& bufs);
void reuse_reduced_values(Block& top, const std::vector<KBuffer>& bufs);
bool has_control(const Block& b);
void lane_blocks(Block& top);
// Note [vector math in kernels] (kir_vector_math.cpp).
void vector_math_blocks(Block& top);
// Note [bool bytes in kernels] (kir_bool_bytes.cpp).
void bool_bytes(Block& top, const std::vector<KBuffer>& bufs);

// The kernel emitter for one group of roots (Note [placement] in lower_expr.cpp); its
// methods are in lower_expr.cpp (expressions, views, writes) and lower_reduce.cpp
// (reductions, scans).
class Emitter {
 public:
  Emitter(const LowerState& st, const SymShape& space, std::set<NodeRef> roots)
      : st_(st), space_(space), roots_(std::move(roots)) {}

  Kernel run(const std::vector<NodeRef>& roots);

  Block nest(const SymShape& space, const std::function<void(const std::vector<Lin>&)>& body);

  void store(NodeRef r, const std::vector<Lin>& idx, const Val& v);

  Block scan(NodeRef n);

  bool split_write(NodeRef n, std::vector<Block>& nests);

  bool row_order_sum(NodeRef n, std::vector<Block>& nests);

  bool region_map(NodeRef n, std::vector<Lin>& fwd);

  const std::vector<int>& global_bufs() const { return global_; }
  /// Whether run() emitted a Write into its base's own buffer as the box nest alone.
  bool box_in_place() const { return box_in_place_; }

 private:
  struct Scope {
    Block stmts;
    std::map<std::string, Val> memo;
    bool barrier = false;
    std::string var;  ///< the loop variable this scope is the body of ("" for others)
  };

  const LowerState& st_;
  SymShape space_;
  std::set<NodeRef> roots_;
  std::deque<Scope> scopes_;
  std::vector<Scope*> stack_;
  std::map<std::string, int> level_;  // loop vars and locals -> depth in stack_
  std::vector<KBuffer> bufs_;
  bool box_in_place_ = false;
  std::vector<int> global_;
  std::map<NodeRef, std::set<std::string>> seen_index_;  // Note [fusion]: multi-index reads
  // Note [materialisations found in one pass]: nodes found read at two indices, in order.
  std::vector<NodeRef> deferred_;
  std::set<NodeRef> deferred_set_;
  void throw_deferred();
  int counter_ = 0;

  int local_buf(int global, DType t, bool written) {
    for (size_t i = 0; i < global_.size(); ++i)
      if (global_[i] == global) { bufs_[i].written |= written; return static_cast<int>(i); }
    global_.push_back(global);
    bufs_.push_back(KBuffer{t, written});
    return static_cast<int>(global_.size() - 1);
  }

  int atom_level(const std::string& atom) const {
    int lv = 0;
    size_t s = 0;
    while (s <= atom.size()) {
      size_t e = atom.find('*', s);
      if (e == std::string::npos) e = atom.size();
      auto it = level_.find(atom.substr(s, e - s));
      if (it != level_.end()) lv = std::max(lv, it->second);
      s = e + 1;
    }
    return lv;
  }
  int lin_level(const Lin& l) const {
    int lv = 0;
    for (auto& [a, k] : l.t) lv = std::max(lv, atom_level(a));
    return lv;
  }
  int val_level(const Val& v) const {
    auto it = level_.find(v.text);
    return it == level_.end() ? 0 : it->second;
  }
  int barrier_level() const {
    for (int i = static_cast<int>(stack_.size()) - 1; i >= 0; --i)
      if (stack_[i]->barrier) return i;
    return 0;
  }
  std::string fresh(const char* p = "v") { return p + std::to_string(counter_++); }

  Val let(DType t, Expr e, int level, const std::string& key = "") {
    level = std::max(level, barrier_level());
    std::string name = fresh();
    Stmt s{Stmt::K::Let};
    s.var = name;
    s.dtype = t;
    s.expr = std::move(e);
    stack_[level]->stmts.push_back(std::move(s));
    level_[name] = level;
    Val v{name, t};
    if (!key.empty()) stack_[level]->memo[key] = v;
    return v;
  }
  const Val* memo(const std::string& key) const {
    for (int i = static_cast<int>(stack_.size()) - 1; i >= 0; --i) {
      auto it = stack_[i]->memo.find(key);
      if (it != stack_[i]->memo.end()) return &it->second;
    }
    return nullptr;
  }

  Lin offset(int g, NodeRef n, const std::vector<Lin>& idx) const;

  std::string key_of(NodeRef n, const std::vector<Lin>& idx) const {
    std::string k = "n" + std::to_string(n->id) + "@";
    for (auto& l : idx) k += l.str() + ",";
    return k;
  }

  Val load(NodeRef n, const std::vector<Lin>& idx);

  std::vector<Lin> view_source_index(NodeRef v, const std::vector<Lin>& idx);

  std::vector<Lin> strided_as_dims(NodeRef v, const std::vector<Lin>& idx);

  Val zero_of(DType t) { return Val::literal(npc::Scalar::from_int(0), t); }

  Val value(NodeRef n, const std::vector<Lin>& idx, bool as_root = false);

  Val compute(NodeRef n, const std::vector<Lin>& idx, const std::string& key);

  std::vector<Lin> reduced_index(NodeRef src, const std::vector<Lin>& idx, const std::set<int64_t>& axes, bool keepdims,
                                 std::vector<std::string>& rvars);

  int placement(const std::vector<Lin>& idx, NodeRef n, bool as_root);

  // Opens loops over `rvars` (extents of src's reduced axes) at level `lv` and returns the
  // scopes' outer statement list and the saved stack.
  struct LoopNest {
    std::vector<Scope*> saved;
    std::vector<Stmt> fors;
  };

  Val reduce(NodeRef n, const std::vector<Lin>& idx, const std::string& key);

  static Helper float16_step(OpId op);

  Val prim(NodeRef n, const std::vector<Lin>& idx, const std::string& key);

  Val argreduce(NodeRef n, const std::vector<Lin>& idx, const std::string& key);

  Val write(NodeRef n, const std::vector<Lin>& idx);
};

}  // namespace npc::fusion
