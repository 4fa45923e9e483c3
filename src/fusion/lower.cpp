// Fusion grouping and lowering: ir::Graph -> kernels (kernel IR) -> one C++ translation unit.
//
// Note [fusion]
// Every node is *inlined* into its consumers as index arithmetic unless it is materialised.
// Materialised: graph outputs and write-back values, Write nodes (stores in program order),
// sources of Reshapes that are not index maps, reductions whose result would otherwise be
// recomputed (a loop outside them that does not index them), and any non-leaf node read at
// two different indices in one kernel (stencils: each time step becomes one kernel). The
// decisions are found by trial lowering: emitting a kernel throws NeedMaterialize(node) and
// the grouping retries. Materialised nodes of one shape with no dependency between them
// share one loop nest (several outputs from one iteration space).
//
// Note [summation]
// Float sums are deterministic for a given build and accurate: the innermost reduced loop
// runs in blocks (256 elements for float32, 2048 for float64), each summed in SIMD lanes (an omp simd reduction), and
// the block sums are added in order, so the error grows with the number of blocks, not the
// number of elements. Long float32 sums accumulate in double, blocks included: a block of
// equal float32 values summed in float lanes is off by a few ULPs in the same direction in
// every block (how many depends on the lane count, so on the CPU), which adds up. float16 sums accumulate in float and
// round once, as NumPy's half reductions do.
//
// Note [placement]
// Emission places every statement at the outermost loop level where its operands are
// defined (loop-invariant code motion): a reduction whose kept indices are bound by the
// outer loops is computed once per outer iteration (softmax: max and sum once per row),
// a load of X[i, j] inside a k loop is hoisted out of it. Branches of a Write are barriers:
// nothing computed inside them moves out (their loads may be out of bounds otherwise).
//
// Note [library calls]
// Matmul stays a library call (npc::matmul: CBLAS for floats, exact loops otherwise) inside
// a fused graph. The call node is materialised by a launch of its own (fn -1) that the
// backend runs between the kernels; its operands are read as strided views: an operand that
// is a chain of View nodes (a transpose, a slice, a broadcast) over a graph input or a
// materialised value is passed as that view, anything else (an elementwise chain, a cast)
// is materialised by the fused kernel that produces it. Consumers of the result (an
// epilogue such as `np.maximum(X @ W + b, 0)`) load it from its buffer, and the backend lets
// an elementwise epilogue that is the result's last reader write into that buffer (Note
// [in-place epilogues] in backend.cpp), so the epilogue adds no full-size temporary.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "fusion/lower.hpp"

namespace npc::fusion {

OpId generated_as(NodeRef n);
bool is_scan(NodeRef n);

namespace {

struct NeedMaterialize { NodeRef node; };


int64_t static_extent(const Dim& d) { return d.is_static() ? d.value() : -1; }

Lin dim_lin(const Dim& d) {
  if (d.is_static()) return Lin::constant(d.value());
  return Lin::atom("sym[" + std::to_string(d.symbol()) + "]");
}

// Whether generated code reduces with ufunc `op` in dtype `t`: the fused column of the op's
// reduction row in ops.def.
bool reduce_supported(OpId op, DType t) {
  const char k = t == DType::Bool ? 'b' : is_complex(t) ? 'c' : kind(t) == Kind::Float ? 'f' : 'i';
  const OpInfo* r = reduction_row(op);
  return r && r->fused.find(k) != std::string_view::npos;
}

// Note [small reductions]: reduction loops of at most kUnrollExtent iterations and
// kUnrollStmts statements once unrolled are unrolled.
constexpr int64_t kUnrollExtent = 8;
constexpr int64_t kUnrollStmts = 256;

void coalesce(Block& top);
void schedule(Block& top, bool has_reduction_inside);
void parallel_scalar_sums(Block& top);
bool contains_loops(const Block& b);
void unroll_small(Block& b);
void hoist_invariants(Block& b, const std::vector<KBuffer>& bufs);
void reuse_reduced_values(Block& top, const std::vector<KBuffer>& bufs);
bool has_control(const Block& b);

// The kernel emitter for one group of roots (Note [placement]).
class Emitter {
 public:
  Emitter(const LowerState& st, const SymShape& space, std::set<NodeRef> roots)
      : st_(st), space_(space), roots_(std::move(roots)) {}

  Kernel run(const std::vector<NodeRef>& roots) {
    Kernel k;
    std::vector<Block> nests;
    if (roots.size() == 1 && roots[0]->kind == NodeKind::Write && split_write(roots[0], nests)) {
      // Note [writes as nests]
    } else if (roots.size() == 1 && is_scan(roots[0])) {
      nests.push_back(scan(roots[0]));  // Note [scans in kernels]
    } else if (roots.size() == 1 && row_order_sum(roots[0], nests)) {
      // Note [row-order outer sums]
    } else {
      nests.push_back(nest(space_, [&](const std::vector<Lin>& idx) {
        for (NodeRef r : roots) store(r, idx, value(r, idx, /*as_root=*/true));
      }));
    }
    // Note [kernel-IR passes] (kir_verify.cpp): each nest is verified as lowered and after
    // every pass under NPC_VERIFY=1.
    for (auto& b : nests) {
      if (default_verify()) verify_nest(b, bufs_, 0, "lower");
      run_pass("unroll_small", b, bufs_, unroll_small);  // Note [small reductions]
      run_pass("hoist_invariants", b, bufs_, [&](Block& x) { hoist_invariants(x, bufs_); });
      // Note [reuse of reduced values]
      run_pass("reuse_reduced_values", b, bufs_, [&](Block& x) { reuse_reduced_values(x, bufs_); });
      bool inner_loops = contains_loops(b);
      run_pass("coalesce", b, bufs_, coalesce);
      run_pass("schedule", b, bufs_, [&](Block& x) { schedule(x, inner_loops); });
      run_pass("parallel_scalar_sums", b, bufs_, parallel_scalar_sums);
      for (auto& st : b) k.body.push_back(std::move(st));
    }
    k.bufs = bufs_;
    return k;
  }

  // One loop nest over `space`: scope 0 (its entry), scope d+1 inside loop d; `body(idx)`
  // emits the stores into the innermost scope.
  Block nest(const SymShape& space, const std::function<void(const std::vector<Lin>&)>& body) {
    stack_.clear();
    std::vector<Scope*> own;
    for (size_t d = 0; d <= space.size(); ++d) {
      scopes_.emplace_back();
      stack_.push_back(&scopes_.back());
      own.push_back(&scopes_.back());
      if (d > 0) {
        scopes_.back().var = "i" + std::to_string(d - 1);
        level_[scopes_.back().var] = static_cast<int>(d);
      }
    }
    std::vector<Lin> idx;
    for (size_t d = 0; d < space.size(); ++d) idx.push_back(Lin::atom("i" + std::to_string(d)));
    body(idx);
    Block inner = std::move(own.back()->stmts);
    for (int d = static_cast<int>(space.size()) - 1; d >= 0; --d) {
      Stmt f{Stmt::K::For};
      f.var = "i" + std::to_string(d);
      f.lo = Lin::constant(0);
      f.hi = dim_lin(space[d]);
      f.body = std::move(inner);
      inner = std::move(own[d]->stmts);
      inner.push_back(std::move(f));
    }
    stack_.clear();
    return inner;
  }

  void store(NodeRef r, const std::vector<Lin>& idx, const Val& v) {
    Stmt s{Stmt::K::Store};
    s.buf = local_buf(st_.buffer_of.at(r), r->dtype, true);
    s.index = offset(st_.buffer_of.at(r), r, idx);
    s.val = v;
    stack_.back()->stmts.push_back(std::move(s));
  }

  // Note [scans in kernels]
  // cumsum/cumprod (Prim cumsum/cumprod over the input cast to the loop dtype, Note [traced
  // scans and sorts] in src/tracer/trace.cpp) are generated, not called: a loop nest over
  // the other axes (the outermost of them parallel) around a sequential loop along the scan
  // axis that carries the running value in a local and stores every step. NumPy's
  // accumulate is the same sequential recurrence, out[0] = x[0], out[k] = out[k-1] op x[k],
  // with the binary op's rounding at every step (float16 included; complex products as its
  // scalar loop computes them), so the results are bit-identical; integers wrap. The producer of x is inlined into the scan
  // loop; the scan is always materialised (consumers load it), in a kernel of its own.
  Block scan(NodeRef n) {
    NodeRef src = n->args[0];
    const int64_t axis = n->params.at(0);
    const DType t = n->dtype;
    const OpId op = n->op == OpId::cumsum ? OpId::add : OpId::multiply;
    SymShape outer;
    for (int d = 0; d < n->ndim(); ++d)
      if (d != axis) outer.push_back(n->shape[d]);
    return nest(outer, [&](const std::vector<Lin>& oidx) {
      std::string acc = fresh("acc"), r = fresh("r");
      Stmt decl{Stmt::K::Decl};
      decl.var = acc;
      decl.dtype = t;
      decl.expr = value_expr(Val::literal(npc::Scalar::from_int(op == OpId::add ? 0 : 1), t));
      stack_.back()->stmts.push_back(std::move(decl));
      level_[acc] = static_cast<int>(stack_.size()) - 1;
      scopes_.emplace_back();
      scopes_.back().var = r;
      stack_.push_back(&scopes_.back());
      level_[r] = static_cast<int>(stack_.size()) - 1;
      std::vector<Lin> sidx;
      for (int d = 0, k = 0; d < n->ndim(); ++d) sidx.push_back(d == axis ? Lin::atom(r) : oidx.at(k++));
      Val v = value(src, sidx);
      // acc op x[k]; at k == 0 the step is x[0] itself (identity op x[0] would turn -0.0 into 0.0).
      Stmt step{Stmt::K::Let};
      step.var = fresh();
      step.dtype = t;
      step.expr = Expr{Expr::K::Apply, t};
      step.expr.op = op;
      step.expr.in = t;
      step.expr.args = {Val{acc, t}, v};
      if (op == OpId::multiply && is_complex(t))  // NumPy's accumulate: its scalar complex product
        step.expr = helper_call(Helper::ComplexMulPlain, t, t, {Val{acc, t}, v});
      Stmt first{Stmt::K::Let};  // r == 0
      first.var = fresh();
      first.dtype = DType::Bool;
      first.expr = Expr{Expr::K::InRange, DType::Bool};
      first.expr.index = Lin::atom(r);
      first.expr.params = {0, 1, 1};
      Stmt upd{Stmt::K::Assign};
      upd.var = acc;
      upd.expr = select_expr(Val{first.var, DType::Bool}, v, Val{step.var, t});
      stack_.back()->stmts.push_back(std::move(step));
      stack_.back()->stmts.push_back(std::move(first));
      stack_.back()->stmts.push_back(std::move(upd));
      store(n, sidx, Val{acc, t});
      Stmt f{Stmt::K::For};
      f.var = r;
      f.lo = Lin::constant(0);
      f.hi = dim_lin(n->shape[axis]);
      f.body = std::move(stack_.back()->stmts);
      stack_.pop_back();
      level_.erase(r);
      stack_.back()->stmts.push_back(std::move(f));
    });
  }

  // Note [writes as nests]
  // A Write whose region is a box of unit-step slices and integer indices (a stencil's
  // interior) is emitted as loop nests without per-element branches: the slabs of the
  // base outside the box are copied (two per axis; corners are copied twice, harmlessly),
  // then the box is computed from the old value. Other writes are selects (write()).
  bool split_write(NodeRef n, std::vector<Block>& nests) {
    NodeRef base = n->args[0], region = n->args[1], val = n->args[2];
    if (std::any_of(region->shape.begin(), region->shape.end(), [](Dim d) { return d == Dim::fixed(0); })) {
      // An empty region: the base unchanged (its view may sit anywhere, e.g. at offset 0).
      nests.push_back(nest(base->shape, [&](const std::vector<Lin>& idx) { store(n, idx, value(base, idx)); }));
      return true;
    }
    std::vector<Lin> fwd;
    if (!region_map(n, fwd)) return false;
    // Note [writes in place]: the result shares the base's buffer, whose elements outside
    // the box already hold the base's values.
    auto bb = st_.buffer_of.find(base);
    const bool in_place = bb != st_.buffer_of.end() && bb->second == st_.buffer_of.at(n);
    box_in_place_ = in_place;
    std::vector<int64_t> lo, hi, shape;
    for (int d = 0; d < base->ndim(); ++d) {
      if (!base->shape[d].is_static()) return false;
      shape.push_back(base->shape[d].value());
      const Lin& f = fwd[d];
      if (f.t.empty()) { lo.push_back(f.c); hi.push_back(f.c + 1); continue; }
      if (f.t.size() != 1 || f.t.begin()->second != 1) return false;
      int j = std::stoi(f.t.begin()->first.substr(1));
      if (!region->shape[j].is_static()) return false;
      lo.push_back(f.c);
      hi.push_back(f.c + region->shape[j].value());
    }
    for (int d = 0; d < base->ndim() && !in_place; ++d) {
      for (int side = 0; side < 2; ++side) {
        int64_t ext = side == 0 ? lo[d] : shape[d] - hi[d];
        if (ext <= 0) continue;
        SymShape sp = base->shape;
        sp[d] = Dim::fixed(ext);
        int64_t shift = side == 0 ? 0 : hi[d];
        nests.push_back(nest(sp, [&](const std::vector<Lin>& idx) {
          std::vector<Lin> b = idx;
          b[d] = b[d] + Lin::constant(shift);
          store(n, b, value(base, b));
        }));
      }
    }
    nests.push_back(nest(region->shape, [&](const std::vector<Lin>& idx) {
      std::vector<Lin> b;
      for (auto& f : fwd) {
        Lin l = Lin::constant(f.c);
        for (auto& [a, k] : f.t) l += Lin::atom("i" + a.substr(1), k);
        b.push_back(l);
      }
      store(n, b, value(val, idx));
    }));
    return true;
  }

  // Note [row-order outer sums]
  // A float sum over the rows of a 2-D array (`x.sum(axis=0)`, the last axis kept) adds each
  // column in row order (Note [outer-axis sums]); as one loop nest per output element that
  // walks a column, every load is a new cache line. When the sum is a kernel of its own
  // (up to 8192 rows, where it is one running sum per column), it is emitted in NumPy's own
  // order instead: row 0 initialises the output row (0 + x[0, c]), then each following row
  // is added into it, in blocks of 256 columns (the parallel loop; each block's output stays
  // in L1) with the rows in order inside a block. Every output element sees the same
  // additions in the same order as before, so the bits do not change.
  bool row_order_sum(NodeRef n, std::vector<Block>& nests) {
    if (n->kind != NodeKind::Reduce || n->op != OpId::add || n->value.has_value()) return false;
    const DType t = n->dtype;
    NodeRef src = n->args[0];
    if ((t != DType::Float32 && t != DType::Float64) || src->dtype != t || src->ndim() != 2) return false;
    if (n->params.size() != 2 || n->params[1] != 0) return false;
    if (!src->shape[0].is_static() || !src->shape[1].is_static()) return false;
    const int64_t rows = src->shape[0].value(), cols = src->shape[1].value();
    if (rows < 2 || rows > 8192 || cols < 1) return false;
    const bool keep = n->params[0] != 0;
    auto out_idx = [&](const Lin& c) { return keep ? std::vector<Lin>{Lin::constant(0), c} : std::vector<Lin>{c}; };
    auto add = [&](const Val& a, const Val& b, int level) {
      return let(t, helper_call(Helper::PlainAdd, t, t, {a, b}), level);
    };
    nests.push_back(nest(SymShape{Dim::fixed(cols)}, [&](const std::vector<Lin>& idx) {
      Val v = value(src, {Lin::constant(0), idx[0]});
      store(n, out_idx(idx[0]), add(Val::literal(npc::Scalar::from_int(0), t), v, lin_level(idx[0])));
    }));
    constexpr int64_t kBlock = 256;
    const int64_t nblocks = (cols + kBlock - 1) / kBlock;
    nests.push_back(nest(SymShape{Dim::fixed(nblocks)}, [&](const std::vector<Lin>& bidx) {
      const std::string r = fresh("r"), c = fresh("c");
      for (const std::string& var : {r, c}) {
        scopes_.emplace_back();
        scopes_.back().var = var;
        stack_.push_back(&scopes_.back());
        level_[var] = static_cast<int>(stack_.size()) - 1;
      }
      const int clevel = static_cast<int>(stack_.size()) - 1;
      Val v = value(src, {Lin::atom(r), Lin::atom(c)});
      Val o = load(n, out_idx(Lin::atom(c)));
      store(n, out_idx(Lin::atom(c)), add(o, v, clevel));
      Stmt fc{Stmt::K::For};
      fc.var = c;
      fc.lo = bidx[0].scaled(kBlock);
      fc.hi = bidx[0].scaled(kBlock) + Lin::constant(kBlock);
      fc.capped = true;
      fc.cap = Lin::constant(cols);
      fc.body = std::move(stack_.back()->stmts);
      fc.simd = !has_control(fc.body);
      stack_.pop_back();
      level_.erase(c);
      stack_.back()->stmts.push_back(std::move(fc));
      Stmt fr{Stmt::K::For};
      fr.var = r;
      fr.lo = Lin::constant(1);
      fr.hi = Lin::constant(rows);
      fr.body = std::move(stack_.back()->stmts);
      stack_.pop_back();
      level_.erase(r);
      stack_.back()->stmts.push_back(std::move(fr));
    }));
    return true;
  }

  // Forward index map of a Write's region: one Lin per base axis over atoms R<j> (region
  // axes); false when the region is not a chain of index-map views of the base.
  bool region_map(NodeRef n, std::vector<Lin>& fwd) {
    NodeRef base = n->args[0], region = n->args[1];
    std::vector<Lin> cur;
    for (int j = 0; j < region->ndim(); ++j) cur.push_back(Lin::atom("R" + std::to_string(j)));
    NodeRef v = region;
    while (v != base) {
      if (v->kind != NodeKind::View || v->view_kind() == ViewKind::Broadcast || v->view_kind() == ViewKind::Component)
        return false;
      std::vector<Lin> s = view_source_index(v, cur);
      if (s.empty() && v->args[0]->ndim() > 0) return false;
      cur = s;
      v = v->args[0];
    }
    for (auto& l : cur) if (l.t.size() > 1) return false;
    fwd = cur;
    return true;
  }

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

  // Element offset of `idx` in the buffer holding `n` (global buffer id `g`).
  Lin offset(int g, NodeRef n, const std::vector<Lin>& idx) const {
    const BufInfo& b = st_.bufs.at(g);
    Lin off;
    if (b.scalar_slot >= 0) return Lin::constant(b.scalar_slot * 16 / static_cast<int64_t>(itemsize(n->dtype)));
    if (b.contiguous) {
      // C-order strides from the shape (static or symbolic).
      Lin stride = Lin::constant(1);
      for (int d = n->ndim() - 1; d >= 0; --d) {
        if (stride.is_const()) {
          off += idx[d].scaled(stride.c);
        } else {
          // symbolic stride: a product of sizes; multiply term by term
          Lin term;
          for (auto& [sa, sk] : stride.t) { Lin x = idx[d].times_atom(sa).scaled(sk); term += x; }
          off += term;
        }
        const Dim& dim = n->shape[d];
        if (dim.is_static()) stride = stride.scaled(dim.value());
        else stride = stride.is_const() ? Lin::atom("sym[" + std::to_string(dim.symbol()) + "]", stride.c)
                                        : stride.times_atom("sym[" + std::to_string(dim.symbol()) + "]");
      }
      return off;
    }
    for (int d = 0; d < n->ndim(); ++d)
      off += idx[d].times_atom("st[" + std::to_string(b.stride_base + d) + "]");
    return off;
  }

  std::string key_of(NodeRef n, const std::vector<Lin>& idx) const {
    std::string k = "n" + std::to_string(n->id) + "@";
    for (auto& l : idx) k += l.str() + ",";
    return k;
  }

  Val load(NodeRef n, const std::vector<Lin>& idx) {
    int g = st_.buffer_of.at(n);
    Lin off = offset(g, n, idx);
    Expr e{Expr::K::Load, n->dtype};
    e.buf = local_buf(g, n->dtype, false);
    e.index = off;
    DType t = n->dtype;
    return let(t, e, lin_level(off));
  }

  // Index of the source of view `v` for result index `idx`.
  std::vector<Lin> view_source_index(NodeRef v, const std::vector<Lin>& idx) {
    NodeRef src = v->args[0];
    std::vector<Lin> out;
    switch (v->view_kind()) {
      case ViewKind::Slice:
        for (int d = 0; d < src->ndim(); ++d)
          out.push_back(idx[d].scaled(v->params[2 + 2 * d]) + Lin::constant(v->params[1 + 2 * d]));
        return out;
      case ViewKind::Permute:
        out.resize(src->ndim());
        for (int k = 0; k < v->ndim(); ++k) out[v->params[1 + k]] = idx[k];
        return out;
      case ViewKind::Broadcast: {
        int lead = v->ndim() - src->ndim();
        for (int j = 0; j < src->ndim(); ++j) {
          const Dim& sd = src->shape[j];
          if (sd.is_static() && sd.value() == 1) out.push_back(Lin::constant(0));
          else out.push_back(idx[lead + j]);
        }
        return out;
      }
      case ViewKind::Reshape: {
        // Index map when only size-1 axes are inserted or removed.
        std::vector<int> a, b;
        bool all_static = true;
        for (int d = 0; d < src->ndim(); ++d) if (!(src->shape[d].is_static() && src->shape[d].value() == 1)) a.push_back(d);
        for (int d = 0; d < v->ndim(); ++d) if (!(v->shape[d].is_static() && v->shape[d].value() == 1)) b.push_back(d);
        bool same = a.size() == b.size();
        // Note [symbolic reshapes] in src/tracer/graph.cpp: a symbol pairs with a dim of equal
        // run-time size (a rename under a guard constraint).
        for (size_t i = 0; same && i < a.size(); ++i)
          same = src->shape[a[i]] == v->shape[b[i]] || !src->shape[a[i]].is_static() || !v->shape[b[i]].is_static();
        if (same) {
          out.assign(src->ndim(), Lin::constant(0));
          for (size_t i = 0; i < a.size(); ++i) out[a[i]] = idx[b[i]];
          return out;
        }
        (void)all_static;
        return {};  // not an index map: caller loads linearly from the materialised source
      }
      case ViewKind::Component: return idx;
      case ViewKind::Strided: return strided_as_dims(v, idx);
    }
    return out;
  }

  // A Strided view (offset and element strides over the source's C-order flattening) as
  // one affine index per source axis, when each result axis walks one source axis without
  // wrapping; {} otherwise (then it is read linearly from the contiguous source).
  std::vector<Lin> strided_as_dims(NodeRef v, const std::vector<Lin>& idx) {
    NodeRef src = v->args[0];
    int sn = src->ndim();
    std::vector<int64_t> S(sn), cs(sn);
    int64_t c = 1;
    for (int k = sn - 1; k >= 0; --k) {
      if (!src->shape[k].is_static()) return {};
      S[k] = src->shape[k].value();
      cs[k] = c;
      c *= std::max<int64_t>(S[k], 1);
    }
    int64_t off = v->params.at(1);
    std::vector<int64_t> start(sn);
    for (int k = 0; k < sn; ++k) start[k] = (off / cs[k]) % std::max<int64_t>(S[k], 1);
    std::vector<Lin> out;
    for (int k = 0; k < sn; ++k) out.push_back(Lin::constant(start[k]));
    std::vector<bool> used(sn, false);
    for (int d = 0; d < v->ndim(); ++d) {
      if (!v->shape[d].is_static()) return {};
      int64_t n = v->shape[d].value(), st = v->params.at(2 + d);
      if (n <= 1 || st == 0) {
        if (st == 0 && n > 1) continue;  // broadcast axis: contributes nothing
        continue;
      }
      bool found = false;
      for (int k = 0; k < sn && !found; ++k) {
        if (used[k] || st % cs[k] != 0) continue;
        int64_t step = st / cs[k];
        int64_t last = start[k] + step * (n - 1);
        if (last < 0 || last >= S[k]) continue;
        used[k] = true;
        out[k] += idx[d].scaled(step);
        found = true;
      }
      if (!found) return {};
    }
    return out;
  }

  Val zero_of(DType t) { return Val::literal(npc::Scalar::from_int(0), t); }

  Val value(NodeRef n, const std::vector<Lin>& idx, bool as_root = false) {
    bool materialised = st_.buffer_of.count(n) && !(as_root && roots_.count(n));
    if (materialised && !st_.is_input(n)) {
      if (!as_root && roots_.count(n)) throw CodegenError("internal: root read inside its own kernel");
      return load(n, idx);
    }
    std::string key = key_of(n, idx);
    if (const Val* m = memo(key)) return *m;
    // Note [fusion]: a non-leaf node read at two indices is materialised.
    if (n->kind != NodeKind::Input && n->kind != NodeKind::Scalar && n->kind != NodeKind::Const &&
        n->kind != NodeKind::SymVal && n->kind != NodeKind::View && !as_root) {
      auto& seen = seen_index_[n];
      // Reads that differ only in which loop variable walks an axis are one access pattern
      // (softmax reads exp(x - max) in the sum and in the division); distinct offsets are not.
      std::string ik;
      for (auto& l : idx) {
        Lin norm;
        norm.c = l.c;
        for (auto& [a, k] : l.t) {
          bool loopvar = (a[0] == 'i' || a[0] == 'r') && a.size() > 1 && std::isdigit(static_cast<unsigned char>(a[1])) &&
                         a.find('*') == std::string::npos;
          norm.t[loopvar ? "#" + std::to_string(k) : a] += k;
        }
        ik += norm.str() + ",";
      }
      seen.insert(ik);
      if (seen.size() > 1 && st_.can_materialise(n)) throw NeedMaterialize{n};
    }
    Val v = compute(n, idx, key);
    return v;
  }

  Val compute(NodeRef n, const std::vector<Lin>& idx, const std::string& key) {
    switch (n->kind) {
      case NodeKind::Input:
      case NodeKind::Scalar: {
        if (st_.buffer_of.count(n) == 0) throw CodegenError("internal: input without buffer");
        int g = st_.input_buffer_of.count(n) ? st_.input_buffer_of.at(n) : st_.buffer_of.at(n);
        Lin off = offset(g, n, idx);
        Expr e{Expr::K::Load, n->dtype};
        e.buf = local_buf(g, n->dtype, false);
        e.index = off;
        return let(n->dtype, e, lin_level(off), key);
      }
      case NodeKind::SymVal: {
        Expr e{Expr::K::Index, DType::Int64};
        e.index = Lin::atom("sym[" + std::to_string(n->params[0]) + "]");
        return let(DType::Int64, e, 0, key);
      }
      case NodeKind::Const: return Val::literal(*n->value, n->dtype);
      case NodeKind::Ufunc: {
        OpId op = generated_as(n);
        if (op == OpId::kCount) throw CodegenError("multi-output ufunc");
        std::vector<Val> args;
        int lv = 0;
        for (NodeRef a : n->args) { args.push_back(value(a, idx)); lv = std::max(lv, val_level(args.back())); }
        Expr e{Expr::K::Apply, n->dtype};
        e.op = op;
        e.in = n->args[0]->dtype;
        e.args = args;
        return let(n->dtype, e, lv, key);
      }
      case NodeKind::Cast: {
        Val a = value(n->args[0], idx);
        Expr e{Expr::K::Cast, n->dtype};
        e.in = n->args[0]->dtype;
        e.args = {a};
        return let(n->dtype, e, val_level(a), key);
      }
      case NodeKind::View: {
        NodeRef src = n->args[0];
        if (n->view_kind() == ViewKind::Component) {
          Val a = value(src, idx);
          Expr e = helper_call(n->params[1] ? Helper::Imag : Helper::Real, n->dtype, src->dtype, {a});
          return let(n->dtype, e, val_level(a), key);
        }
        std::vector<Lin> sidx = view_source_index(n, idx);
        if (sidx.empty() && src->ndim() > 0) {
          // Reshape that is not an index map: linear index into the C-contiguous source.
          bool linear = st_.buffer_of.count(src) && st_.bufs.at(st_.buffer_of.at(src)).contiguous &&
                        st_.bufs.at(st_.buffer_of.at(src)).scalar_slot < 0;
          if (!linear) {
            if (st_.can_materialise(src)) throw NeedMaterialize{src};
            throw CodegenError("reshape of a non-contiguous value");
          }
          Lin lin;
          if (n->view_kind() == ViewKind::Strided) {
            lin = Lin::constant(n->params.at(1));
            for (int d = 0; d < n->ndim(); ++d) lin += idx[d].scaled(n->params.at(2 + d));
            int g = st_.buffer_of.at(src);
            Expr e{Expr::K::Load, src->dtype};
            e.buf = local_buf(g, src->dtype, false);
            e.index = lin;
            return let(src->dtype, e, lin_level(lin), key);
          }
          Lin stride = Lin::constant(1);
          for (int d = n->ndim() - 1; d >= 0; --d) {
            if (!stride.is_const()) throw CodegenError("symbolic reshape");
            lin += idx[d].scaled(stride.c);
            if (!n->shape[d].is_static()) throw CodegenError("symbolic reshape");
            stride = stride.scaled(n->shape[d].value());
          }
          // Unravel into the source's C-order index only through its buffer offset.
          int g = st_.buffer_of.at(src);
          Expr e{Expr::K::Load, src->dtype};
          e.buf = local_buf(g, src->dtype, false);
          e.index = lin;
          return let(src->dtype, e, lin_level(lin), key);
        }
        return value(src, sidx);
      }
      case NodeKind::Reduce: return reduce(n, idx, key);
      case NodeKind::Prim: return prim(n, idx, key);
      case NodeKind::Gather: {
        // k index operands of one shape on source axes axis..axis+k-1 (Note [gathers] in
        // include/npc/graph.hpp): each one a normalised load index of its axis.
        NodeRef a = n->args[0];
        const int64_t axis = n->params[0], k = static_cast<int64_t>(n->args.size()) - 1;
        const size_t ind_nd = static_cast<size_t>(n->args[1]->ndim());
        std::vector<Lin> iidx(idx.begin() + axis, idx.begin() + axis + ind_nd);
        std::vector<Lin> sidx(idx.begin(), idx.begin() + axis);
        for (int64_t j = 0; j < k; ++j) {
          Val iv = value(n->args[1 + j], iidx);
          Lin extent = dim_lin(a->shape[axis + j]);
          Expr e = helper_call(Helper::WrapIndex, DType::Int64, DType::Int64, {iv});
          e.index = extent;
          Val norm = let(DType::Int64, e, std::max(val_level(iv), lin_level(extent)));
          sidx.push_back(Lin::atom(norm.text));
        }
        for (size_t d = axis + ind_nd; d < idx.size(); ++d) sidx.push_back(idx[d]);
        return value(a, sidx);
      }
      case NodeKind::Write: return write(n, idx);
      case NodeKind::Call: throw CodegenError("host call in a fused kernel");
    }
    throw CodegenError("unsupported node");
  }

  // Source index of a reduction and the placement level (Note [placement]).
  std::vector<Lin> reduced_index(NodeRef src, const std::vector<Lin>& idx, const std::set<int64_t>& axes, bool keepdims,
                                 std::vector<std::string>& rvars) {
    std::vector<Lin> sidx;
    size_t k = 0;
    for (int d = 0; d < src->ndim(); ++d) {
      if (axes.count(d)) {
        std::string r = fresh("r");
        rvars.push_back(r);
        sidx.push_back(Lin::atom(r));
        if (keepdims) ++k;
      } else {
        sidx.push_back(idx.at(k++));
      }
    }
    return sidx;
  }

  int placement(const std::vector<Lin>& idx, NodeRef n, bool as_root) {
    int lv = 0;
    std::set<std::string> used;
    for (auto& l : idx) {
      lv = std::max(lv, lin_level(l));
      for (auto& [a, c] : l.t) used.insert(a);
    }
    if (roots_.count(n)) return lv;
    // Recompute check: every loop variable bound at levels 1..lv must index this value.
    for (int level = 1; level <= lv && level < static_cast<int>(stack_.size()); ++level) {
      const std::string& var = stack_[level]->var;
      if (var.empty()) continue;
      bool found = false;
      for (auto& u : used)
        if (u == var || u.find(var + "*") == 0 || u.find("*" + var) != std::string::npos) found = true;
      if (!found && st_.can_materialise(n)) throw NeedMaterialize{n};
    }
    (void)as_root;
    return lv;
  }

  // Opens loops over `rvars` (extents of src's reduced axes) at level `lv` and returns the
  // scopes' outer statement list and the saved stack.
  struct LoopNest {
    std::vector<Scope*> saved;
    std::vector<Stmt> fors;
  };

  Val reduce(NodeRef n, const std::vector<Lin>& idx, const std::string& key) {
    NodeRef src = n->args[0];
    bool keepdims = n->params[0] != 0;
    std::set<int64_t> axes(n->params.begin() + 1, n->params.end());
    if (!reduce_supported(n->op, n->dtype)) throw CodegenError("unsupported reduction");
    std::vector<std::string> rvars;
    std::vector<Lin> sidx = reduced_index(src, idx, axes, keepdims, rvars);
    int lv = placement(idx, n, false);
    DType t = n->dtype;
    // float16 accumulates in float and rounds once at the end (as NumPy's half reductions).
    std::string acc = fresh("acc");
    bool use_initial = n->value.has_value();
    OpId op = n->op;
    Val init{"", t}, identity{"", t};
    {
      switch (op) {
        case OpId::add: init = Val::literal(npc::Scalar::from_int(0), t); break;
        case OpId::multiply: init = Val::literal(npc::Scalar::from_int(1), t); break;
        case OpId::logical_or: init = Val::literal(npc::Scalar::from_bool(false), t); break;
        case OpId::logical_and: init = Val::literal(npc::Scalar::from_bool(true), t); break;
        case OpId::maximum:
          if (is_inexact(t)) init = Val::of(Special::NegInf, t);
          else if (t == DType::Bool) init = Val::literal(npc::Scalar::from_bool(false), t);
          else init = Val::of(Special::Lowest, t);
          break;
        case OpId::minimum:
          if (is_inexact(t)) init = Val::of(Special::Inf, t);
          else if (t == DType::Bool) init = Val::literal(npc::Scalar::from_bool(true), t);
          else init = Val::of(Special::Highest, t);
          break;
        default: throw CodegenError("unsupported reduction");
      }
      identity = init;
      if (use_initial) init = Val::literal(*n->value, t);
      // max/min of an empty axis has no identity: NumPy raises, so let eager run it.
      if (!use_initial && (op == OpId::maximum || op == OpId::minimum)) {
        for (int64_t a : axes) {
          if (src->shape[a].is_static() && src->shape[a].value() == 0) throw CodegenError("empty max/min reduction");
        }
      }
    }
    bool float_add = op == OpId::add && kind(t) == Kind::Float;
    // max/min of float32/float64 vectorize as an omp max/min reduction plus a NaN flag
    // (NumPy propagates NaN; the flag restores that after the loop).
    bool float_minmax = (op == OpId::maximum || op == OpId::minimum) && !use_initial &&
                        (t == DType::Float32 || t == DType::Float64);
    std::string nanflag = float_minmax ? fresh("nan") : "";
    if (float_minmax) {
      Stmt s{Stmt::K::Decl};
      s.var = nanflag;
      s.dtype = DType::Int32;
      s.expr = value_expr(Val::literal(npc::Scalar::from_int(0), DType::Int32));
      stack_[std::max(lv, barrier_level())]->stmts.push_back(std::move(s));
    }
    // Long float32 sums add their blocks in double (Note [summation]).
    int64_t last_ext = axes.empty() ? 1 : static_extent(src->shape[*axes.rbegin()]);
    // Outer-axis sums (Note [outer-axis sums]) add in the result dtype, as NumPy's rows do.
    const bool outer_only = float_add && !axes.empty() && !axes.count(src->ndim() - 1);
    bool wide_acc = float_add && t == DType::Float32 && (last_ext < 0 || last_ext > 256) && !outer_only;
    {
      Stmt s{Stmt::K::Decl};
      s.var = acc;
      s.dtype = wide_acc ? DType::Float64 : t;
      s.expr = value_expr(init);
      stack_[std::max(lv, barrier_level())]->stmts.push_back(std::move(s));
    }
    // Note [small reductions]: a float sum over a short last axis (unrolled) adds in NumPy's
    // order for a contiguous axis: the identity (or initial=) plus the pairwise_sum of all the
    // elements, which below 8 elements is a running sum from -0.0 (8 elements are summed as a
    // tree by NumPy: those keep the in-order loop).
    const int64_t ext_last = axes.empty() ? -1 : static_extent(src->shape[*axes.rbegin()]);
    const bool numpy_order = float_add && axes.size() == 1 && *axes.begin() == src->ndim() - 1 && ext_last >= 1 &&
                             ext_last < 8 && ext_last <= kUnrollExtent;
    std::string rest;
    if (numpy_order) {
      Stmt s{Stmt::K::Decl};
      s.var = rest = fresh("rest");
      s.dtype = t;
      s.expr = value_expr(Val::of(Special::NegZero, t));
      stack_[std::max(lv, barrier_level())]->stmts.push_back(std::move(s));
    }
    lv = std::max(lv, barrier_level());
    // Truncate the stack to the placement level and open the reduction loops.
    std::vector<Scope*> saved = stack_;
    stack_.resize(lv + 1);
    std::vector<int> reduced;
    for (int d = 0; d < src->ndim(); ++d) if (axes.count(d)) reduced.push_back(d);
    std::vector<Scope*> rscopes;
    std::string part;
    bool blocked = false;
    for (size_t i = 0; i < rvars.size(); ++i) {
      scopes_.emplace_back();
      scopes_.back().var = rvars[i];
      stack_.push_back(&scopes_.back());
      rscopes.push_back(stack_.back());
      level_[rvars[i]] = static_cast<int>(stack_.size()) - 1;
    }
    // Body.
    Val v = value(src, sidx);
    std::string target = acc;
    int64_t inner_ext = static_extent(src->shape[reduced.back()]);
    // Note [outer-axis sums]: a float sum over outer axes only (the last axis kept) is a
    // running sum per output element in NumPy (it adds whole rows into the output in order).
    // Within blocks of NumPy's buffer size (8192) npc adds in that order too (no SIMD lanes),
    // so rows up to 8192 give NumPy's bits; longer runs add the blocks' partial sums, so a
    // sum over millions of rows is never one running sum.
    const bool outer_seq = outer_only && !numpy_order;
    const int64_t block = outer_seq ? 8192 : t == DType::Float64 ? 2048 : 256;
    if (float_add && (inner_ext < 0 || inner_ext > block)) blocked = true;
    if (blocked) target = part = fresh("part");
    // Note [parallel scalar reductions]: acc op partial, for the partials of a split loop
    // (its two operands are filled in by the renderer).
    const DType acc_t = wide_acc ? DType::Float64 : t;
    const std::vector<Val> operands{Val{"", acc_t}, Val{"", acc_t}};
    Expr combine{Expr::K::Value, t};
    {
      Stmt s{Stmt::K::Assign};
      s.var = target;
      if (numpy_order) {
        s.var = rest;
        // NumPy starts the output from the identity (or initial=) and adds the pairwise sum
        // of all the elements: 0.0 + (((-0.0 + v0) + v1) + ...), so np.sum of -0.0 is 0.0.
        s.expr = helper_call(Helper::PlainAdd, t, t, {Val{rest, t}, v});
        combine = helper_call(Helper::PlainAdd, t, acc_t, operands);
      } else if (float_add) {
        s.expr = helper_call(Helper::PlainAdd, t, acc_t, {Val{target, acc_t}, v});
        combine = helper_call(Helper::PlainAdd, t, acc_t, operands);
      }
      else if (float_minmax) {
        // Quiet comparison: a NaN element raises no "invalid" flag (it sets the NaN flag).
        const Helper q = op == OpId::maximum ? Helper::QuietMax : Helper::QuietMin;
        s.expr = helper_call(q, t, t, {Val{target, t}, v});
        combine = helper_call(q, t, t, operands);
        Stmt nf{Stmt::K::Assign};
        nf.var = nanflag;
        nf.expr = helper_call(Helper::OrNaN, DType::Int32, t, {Val{nanflag, DType::Int32}, v});
        stack_.back()->stmts.push_back(std::move(nf));
      } else {
        Expr a{Expr::K::Apply, t};
        a.op = op;
        a.in = t;
        a.args = {Val{target, t}, v};
        s.expr = a;
        combine = a;
        combine.args = operands;
        if (t == DType::Float16) {  // accumulate float16 in float: no per-step rounding
          s.expr = helper_call(float16_step(op), t, t, {Val{target, t}, v});
          combine = helper_call(float16_step(op), t, t, operands);
        }
      }
      stack_.back()->stmts.push_back(std::move(s));
    }
    // Close loops from the inside out: the body of loop i is scope i's statements + loop i+1.
    Block inner = std::move(stack_.back()->stmts);
    for (int i = static_cast<int>(rvars.size()) - 1; i >= 0; --i) {
      Lin hi = dim_lin(src->shape[reduced[i]]);
      bool innermost = i == static_cast<int>(rvars.size()) - 1;
      Stmt loop{Stmt::K::For};
      loop.var = rvars[i];
      loop.lo = Lin::constant(0);
      loop.hi = hi;
      if (innermost && blocked) {
        // Blocked summation: for (rb = 0; rb < n; rb += block) { part = 0; for (r in block) part += v; acc += part; }
        std::string rb = fresh("rb");
        loop.lo = Lin::atom(rb);
        loop.hi = Lin::atom(rb) + Lin::constant(block);
        loop.capped = true;
        loop.cap = hi;
        loop.simd = !outer_seq;
        if (!outer_seq) {
          loop.lane_op = LaneReduce::Add;
          loop.lane_acc = part;
        }
        loop.body = std::move(inner);
        Block blk;
        Stmt pd{Stmt::K::Decl};
        pd.var = part;
        pd.dtype = acc_t;  // float32 blocks sum in double lanes (Note [summation])
        pd.expr = value_expr(Val::literal(npc::Scalar::from_int(0), t));
        blk.push_back(std::move(pd));
        blk.push_back(std::move(loop));
        Stmt addp{Stmt::K::Assign};
        addp.var = acc;
        addp.expr = helper_call(Helper::PlainAdd, t, acc_t, {Val{acc, acc_t}, Val{part, acc_t}});
        blk.push_back(std::move(addp));
        Stmt ob{Stmt::K::For};
        ob.var = rb;
        ob.lo = Lin::constant(0);
        ob.hi = hi;
        ob.step = block;
        ob.body = std::move(blk);
        loop = std::move(ob);
      } else {
        if (innermost && float_add && !numpy_order && !outer_seq) {
          loop.simd = true;
          loop.lane_op = LaneReduce::Add;
          loop.lane_acc = acc;
        }
        if (innermost && float_minmax) {
          loop.simd = true;
          loop.lane_op = op == OpId::maximum ? LaneReduce::Max : LaneReduce::Min;
          loop.lane_acc = acc;
          loop.lane_flag = nanflag;
        }
        loop.body = std::move(inner);
      }
      if (i == 0) {
        loop.red_acc = acc;
        loop.red_identity = float_add ? Val::literal(npc::Scalar::from_int(0), acc_t) : identity;
        loop.red_combine = combine;
        loop.red_flag = nanflag;
      }
      inner = i > 0 ? std::move(rscopes[i - 1]->stmts) : Block{};
      inner.push_back(std::move(loop));
    }
    stack_ = saved;
    for (auto& blk_stmt : inner) stack_[lv]->stmts.push_back(std::move(blk_stmt));
    if (numpy_order) {
      Stmt sum{Stmt::K::Assign};
      sum.var = acc;
      sum.expr = helper_call(Helper::PlainAdd, t, t, {Val{acc, t}, Val{rest, t}});
      stack_[lv]->stmts.push_back(std::move(sum));
    }
    if (float_minmax) {
      Stmt fix{Stmt::K::Assign};
      fix.var = acc;
      fix.expr = select_expr(Val{nanflag, DType::Int32}, Val::of(Special::NaN, t), Val{acc, t});
      stack_[lv]->stmts.push_back(std::move(fix));
    }
    for (auto& r : rvars) level_.erase(r);
    level_[acc] = lv;
    Val result{acc, t};
    if (wide_acc) {
      Expr e{Expr::K::Cast, t};
      e.in = DType::Float64;
      e.args = {Val{acc, DType::Float64}};
      result = let(t, e, lv);
    }
    if (t == DType::Float16) result = let(t, helper_call(Helper::RoundHalf, t, t, {Val{acc, t}}), lv);
    stack_[lv]->memo[key] = result;
    return result;
  }

  // The step of a float16 accumulator, computed in float without rounding.
  static Helper float16_step(OpId op) {
    switch (op) {
      case OpId::add: return Helper::PlainAdd;
      case OpId::maximum: return Helper::Max;
      case OpId::minimum: return Helper::Min;
      default: return Helper::PlainMul;
    }
  }

  Val prim(NodeRef n, const std::vector<Lin>& idx, const std::string& key) {
    switch (n->op) {
      case OpId::where: {
        Val c = value(n->args[0], idx), x = value(n->args[1], idx), y = value(n->args[2], idx);
        Expr e{Expr::K::Select, n->dtype};
        e.args = {c, x, y};
        return let(n->dtype, e, std::max({val_level(c), val_level(x), val_level(y)}), key);
      }
      case OpId::argmin:
      case OpId::argmax: return argreduce(n, idx, key);
      case OpId::iota: {
        Val start = value(n->args[0], {}), step = value(n->args[1], {});
        Expr ix{Expr::K::Index, DType::Int64};
        ix.index = idx.at(0);
        Val i = let(DType::Int64, ix, lin_level(idx[0]));
        Expr c{Expr::K::Cast, n->dtype};
        c.in = DType::Int64;
        c.args = {i};
        Val ic = let(n->dtype, c, val_level(i));
        Expr m{Expr::K::Apply, n->dtype};
        m.op = OpId::multiply;
        m.in = n->dtype;
        m.args = {ic, step};
        Val mv = let(n->dtype, m, val_level(ic));
        Expr a{Expr::K::Apply, n->dtype};
        a.op = OpId::add;
        a.in = n->dtype;
        a.args = {start, mv};
        return let(n->dtype, a, val_level(mv), key);
      }
      case OpId::fill: return value(n->args[0], {});
      case OpId::copy: return value(n->args[0], idx);  // Note [distinct buffers]
      default: throw CodegenError(std::string("primitive ") + std::string(ir::op_name(n->op)) + " is not fused");
    }
  }

  Val argreduce(NodeRef n, const std::vector<Lin>& idx, const std::string& key) {
    NodeRef src = n->args[0];
    int64_t axis = n->params.at(0);
    bool keepdims = n->params.size() > 1 && n->params[1] != 0;
    if (is_complex(src->dtype)) throw CodegenError("complex argmin/argmax");
    if (src->shape[axis].is_static() && src->shape[axis].value() == 0) throw CodegenError("empty argmin/argmax");
    std::vector<std::string> rvars;
    std::vector<Lin> sidx = reduced_index(src, idx, {axis}, keepdims, rvars);
    int lv = std::max(placement(idx, n, false), barrier_level());
    DType t = src->dtype;
    bool mn = n->op == OpId::argmin;
    std::string best = fresh("best"), bi = fresh("bi");
    Val init{"", t};
    if (is_inexact(t)) init = Val::of(mn ? Special::Inf : Special::NegInf, t);
    else if (t == DType::Bool) init = Val::literal(npc::Scalar::from_bool(mn), t);
    else init = Val::of(mn ? Special::Highest : Special::Lowest, t);
    Stmt d1{Stmt::K::Decl};
    d1.var = best;
    d1.dtype = t;
    d1.expr = value_expr(init);
    Stmt d2{Stmt::K::Decl};
    d2.var = bi;
    d2.dtype = DType::Int64;
    d2.expr = value_expr(Val::literal(npc::Scalar::from_int(0), DType::Int64));
    stack_[lv]->stmts.push_back(std::move(d1));
    stack_[lv]->stmts.push_back(std::move(d2));
    std::vector<Scope*> saved = stack_;
    stack_.resize(lv + 1);
    scopes_.emplace_back();
    scopes_.back().var = rvars[0];
    stack_.push_back(&scopes_.back());
    level_[rvars[0]] = static_cast<int>(stack_.size()) - 1;
    Val v = value(src, sidx);
    // A Let in the scan loop's body (marked scalar code when `scalar`).
    auto body_let = [&](Expr e, bool scalar) {
      Stmt c{Stmt::K::Let};
      c.var = fresh(scalar ? "take" : "v");
      c.dtype = e.dtype;
      c.expr = std::move(e);
      c.scalar_only = scalar;
      Val r{c.var, c.dtype};
      stack_.back()->stmts.push_back(std::move(c));
      return r;
    };
    auto logical = [&](OpId op, std::vector<Val> args) {
      Expr e{Expr::K::Apply, DType::Bool};
      e.op = op;
      e.in = DType::Bool;
      e.args = std::move(args);
      return e;
    };
    const Val best_v{best, t}, bi_v{bi, DType::Int64};
    // Closes the scan loop over rvars[0] (0..hi) at level lv; `bi` holds the index found.
    auto close_scan = [&](Lin hi) {
      Stmt f{Stmt::K::For};
      f.var = rvars[0];
      f.lo = Lin::constant(0);
      f.hi = hi;
      f.body = std::move(stack_.back()->stmts);
      stack_ = saved;
      stack_[lv]->stmts.push_back(std::move(f));
      level_.erase(rvars[0]);
      level_[bi] = lv;
      Val r{bi, DType::Int64};
      stack_[lv]->memo[key] = r;
      return r;
    };
    const int64_t ext = static_extent(src->shape[axis]);
    if (ext > 0 && ext <= kUnrollExtent) {
      // Note [small reductions]: a short static axis is scanned without a break, as selects,
      // so the loop unrolls into straight-line code. Once `best` is NaN nothing changes
      // (NumPy returns the first NaN). The compare is the scalar quiet one (ucomisd): the
      // Let is marked scalar_only, so the enclosing loop is not made `omp simd` (vectorized,
      // GCC's quiet compares become signaling ones, and npk::lt's bit tricks cost twice
      // the whole loop in scalar code).
      bool fl = kind(t) == Kind::Float;
      Val take = body_let(helper_call(Helper::QuietLess, DType::Bool, t, mn ? std::vector<Val>{v, best_v}
                                                                             : std::vector<Val>{best_v, v}), true);
      if (fl) {  // !isnan(best) && (isnan(v) || cmp)
        Val best_nan = body_let(helper_call(Helper::IsNaN, DType::Bool, t, {best_v}), true);
        Val v_nan = body_let(helper_call(Helper::IsNaN, DType::Bool, t, {v}), true);
        Val either = body_let(logical(OpId::logical_or, {v_nan, take}), true);
        Val best_ok = body_let(logical(OpId::logical_not, {best_nan}), true);
        take = body_let(logical(OpId::logical_and, {best_ok, either}), true);
      }
      Stmt a1{Stmt::K::Assign};
      a1.var = best;
      a1.expr = select_expr(take, v, best_v);
      Stmt a2{Stmt::K::Assign};
      a2.var = bi;
      a2.expr = select_expr(take, Val{rvars[0], DType::Int64}, bi_v);
      stack_.back()->stmts.push_back(std::move(a1));
      stack_.back()->stmts.push_back(std::move(a2));
      return close_scan(Lin::constant(ext));
    }
    // npk::lt_scalar: a quiet comparison, a NaN element raises no "invalid" flag (NumPy's
    // argmin). This loop breaks at the first NaN, so it is never vectorized, and the scalar
    // quiet compare (ucomisd) is several times cheaper than npk::lt's bit tricks.
    Val cond = body_let(helper_call(Helper::QuietLess, DType::Bool, t, mn ? std::vector<Val>{v, best_v}
                                                                           : std::vector<Val>{best_v, v}), false);
    bool fl = kind(t) == Kind::Float;
    Val v_nan{"", DType::Bool};
    if (fl) {  // cmp || isnan(v)
      v_nan = body_let(helper_call(Helper::IsNaN, DType::Bool, t, {v}), false);
      cond = body_let(logical(OpId::logical_or, {cond, v_nan}), false);
    }
    Stmt upd{Stmt::K::If};
    upd.val = cond;
    Stmt a1{Stmt::K::Assign};
    a1.var = best;
    a1.expr = value_expr(v);
    Stmt a2{Stmt::K::Assign};
    a2.var = bi;
    a2.expr = value_expr(Val{rvars[0], DType::Int64});
    upd.body.push_back(std::move(a1));
    upd.body.push_back(std::move(a2));
    if (fl) {
      Stmt brk{Stmt::K::If};
      brk.val = v_nan;
      brk.body.push_back(Stmt{Stmt::K::Break});
      upd.body.push_back(std::move(brk));
    }
    stack_.back()->stmts.push_back(std::move(upd));
    return close_scan(dim_lin(src->shape[axis]));
  }

  // Functionalized write (graph.hpp Note [writes]) as a select on the region's index set.
  Val write(NodeRef n, const std::vector<Lin>& idx) {
    NodeRef base = n->args[0], region = n->args[1], val = n->args[2];
    // Forward map region index -> base index, as one (const + coef * r_j) per base axis.
    std::vector<Lin> ridx;
    for (int j = 0; j < region->ndim(); ++j) ridx.push_back(Lin::atom("R" + std::to_string(j)));
    std::vector<Lin> cur = ridx;
    NodeRef v = region;
    while (v != base) {
      if (v->kind != NodeKind::View || v->view_kind() == ViewKind::Broadcast || v->view_kind() == ViewKind::Component)
        throw CodegenError("write region is not a slice/permute view of its base");
      std::vector<Lin> s = view_source_index(v, cur);
      if (s.empty() && v->args[0]->ndim() > 0) throw CodegenError("write through a reshape");
      cur = s;
      v = v->args[0];
    }
    // Conditions and the inverse map.
    std::vector<Val> conds;
    std::vector<Lin> vidx(region->ndim(), Lin::constant(0));
    int lv = 0;
    for (size_t d = 0; d < cur.size(); ++d) {
      const Lin& f = cur[d];
      lv = std::max(lv, lin_level(idx[d]));
      if (f.t.size() > 1) throw CodegenError("write region maps two axes to one");
      Expr e{Expr::K::InRange, DType::Bool};
      e.index = idx[d];
      if (f.t.empty()) {
        e.params = {f.c, 1, 1};
      } else {
        auto [atom, coef] = *f.t.begin();
        int j = std::stoi(atom.substr(1));
        int64_t count = region->shape[j].is_static() ? region->shape[j].value() : -1;
        if (count < 0) throw CodegenError("symbolic write region");
        e.params = {f.c, coef, count};
        if (coef == 1 || coef == -1) {
          vidx[j] = (idx[d] + Lin::constant(-f.c)).scaled(coef);
        } else {
          Expr q{Expr::K::Index, DType::Int64};  // (idx - c) / coef, exact inside the region
          q.index = idx[d] + Lin::constant(-f.c);
          q.params = {coef};
          Val qv = let(DType::Int64, q, lin_level(idx[d]));
          vidx[j] = Lin::atom(qv.text);
        }
      }
      conds.push_back(let(DType::Bool, e, lin_level(idx[d])));
    }
    Val cond = conds.empty() ? Val::literal(npc::Scalar::from_bool(true), DType::Bool) : conds[0];
    for (size_t i = 1; i < conds.size(); ++i) {
      Expr a{Expr::K::Apply, DType::Bool};
      a.op = OpId::logical_and;
      a.in = DType::Bool;
      a.args = {cond, conds[i]};
      cond = let(DType::Bool, a, std::max(val_level(cond), val_level(conds[i])));
    }
    int here = static_cast<int>(stack_.size()) - 1;
    std::string w = fresh("w");
    Stmt decl{Stmt::K::Decl};
    decl.var = w;
    decl.dtype = n->dtype;
    decl.expr = value_expr(zero_of(n->dtype));
    stack_[here]->stmts.push_back(std::move(decl));
    Stmt s{Stmt::K::If};
    s.val = cond;
    for (int branch = 0; branch < 2; ++branch) {
      scopes_.emplace_back();
      scopes_.back().barrier = true;
      stack_.push_back(&scopes_.back());
      Val x = branch == 0 ? value(val, vidx) : value(base, idx);
      Stmt as{Stmt::K::Assign};
      as.var = w;
      as.expr = value_expr(x);
      stack_.back()->stmts.push_back(std::move(as));
      (branch == 0 ? s.body : s.orelse) = std::move(stack_.back()->stmts);
      stack_.pop_back();
    }
    stack_[here]->stmts.push_back(std::move(s));
    level_[w] = here;
    (void)lv;
    return Val{w, n->dtype};
  }
};

// ---- post-lowering passes on the kernel IR

void visit_lins(Block& b, const std::function<void(Lin&)>& f) {
  for (auto& s : b) {
    f(s.index);
    f(s.expr.index);
    f(s.lo);
    f(s.hi);
    f(s.cap);
    visit_lins(s.body, f);
    visit_lins(s.orelse, f);
  }
}

bool uses_var_outside_offsets(const Block& b, const std::string& v) {
  for (auto& s : b) {
    if ((s.expr.k == Expr::K::Index || s.expr.k == Expr::K::InRange || s.expr.k == Expr::K::Call) &&
        s.expr.index.t.count(v))
      return true;
    for (auto& a : s.expr.args) if (a.is_local() && a.text == v) return true;
    if ((s.k == Stmt::K::If || s.k == Stmt::K::Store) && s.val.is_local() && s.val.text == v) return true;
    if (uses_var_outside_offsets(s.body, v) || uses_var_outside_offsets(s.orelse, v)) return true;
  }
  return false;
}

// Note [coalescing]: merges main-nest loops d and d+1 when every index uses them as one
// linear variable (coef(i_d) == coef(i_{d+1}) * n_{d+1}) and nothing sits between them.
void coalesce(Block& top) {
  for (;;) {
    // Find the chain of perfectly nested main loops.
    std::vector<Stmt*> chain;
    Block* b = &top;
    while (!b->empty() && b->back().k == Stmt::K::For && b->back().var[0] == 'i') {
      chain.push_back(&b->back());
      b = &b->back().body;
    }
    bool merged = false;
    for (size_t d = 0; d + 1 < chain.size(); ++d) {
      Stmt* o = chain[d];
      Stmt* in = chain[d + 1];
      if (o->body.size() != 1) continue;
      if (!o->hi.is_const() || !in->hi.is_const()) continue;
      int64_t n1 = in->hi.c;
      const std::string &vo = o->var, &vi = in->var;
      bool ok = !uses_var_outside_offsets(in->body, vo) && !uses_var_outside_offsets(in->body, vi);
      visit_lins(in->body, [&](Lin& l) {
        int64_t co = 0, ci = 0;
        for (auto& [a, k] : l.t) {
          if (a == vo) co = k;
          else if (a == vi) ci = k;
          else if (a.find(vo) != std::string::npos || a.find(vi) != std::string::npos) {
            // a product atom or a local containing the name: only safe if it is another var
            auto is_tok = [&](const std::string& v) {
              size_t p = a.find(v);
              while (p != std::string::npos) {
                size_t e = p + v.size();
                bool left = p == 0 || a[p - 1] == '*';
                bool right = e == a.size() || a[e] == '*';
                if (left && right) return true;
                p = a.find(v, p + 1);
              }
              return false;
            };
            if (is_tok(vo) || is_tok(vi)) ok = false;
          }
        }
        if (co != ci * n1) ok = false;
      });
      if (!ok) continue;
      visit_lins(in->body, [&](Lin& l) {
        auto it = l.t.find(vi);
        int64_t ci = it == l.t.end() ? 0 : it->second;
        if (it != l.t.end()) l.t.erase(it);
        l.t.erase(vo);
        if (ci) l.t[vo] = ci;
      });
      o->hi = Lin::constant(o->hi.c * n1);
      Block body = std::move(in->body);
      o->body = std::move(body);
      merged = true;
      break;
    }
    if (!merged) return;
  }
}

bool has_control(const Block& b) {
  for (auto& s : b)
    if (s.k == Stmt::K::For || s.k == Stmt::K::If || s.k == Stmt::K::Break || s.scalar_only) return true;
  return false;
}

int64_t static_work(const Block& top) {
  int64_t w = 1;
  const Block* b = &top;
  while (!b->empty() && b->back().k == Stmt::K::For) {
    if (!b->back().hi.is_const()) return INT64_MAX;
    w *= std::max<int64_t>(1, b->back().hi.c);
    b = &b->back().body;
  }
  return w;
}

// Marks the outermost main loop parallel and unit-stride innermost main loops simd.
void schedule(Block& top, bool has_reduction_inside) {
  Stmt* outer = nullptr;
  for (auto& s : top) if (s.k == Stmt::K::For && s.var[0] == 'i') outer = &s;
  if (!outer) return;
  if (static_work(top) >= 8192 || has_reduction_inside) outer->parallel = true;
  Stmt* innermost = outer;
  while (!innermost->body.empty() && innermost->body.back().k == Stmt::K::For && innermost->body.back().var[0] == 'i')
    innermost = &innermost->body.back();
  if (!has_control(innermost->body) && !innermost->parallel) innermost->simd = true;
  else if (!has_control(innermost->body) && innermost->parallel) innermost->simd = true;  // "parallel for simd"
}

// Note [parallel scalar reductions]
// A reduction placed outside every parallel loop (a reduction to one value: np.sum(a * b),
// np.max(x), np.prod(i)) would run on one thread. When its loop is long, its outermost
// loop's iterations (blocks of the blocked float sum, Note [summation], rows, or elements)
// are split into one contiguous range per thread; each thread reduces its range from the
// op's identity into a partial, and the partials are combined into the accumulator (which
// holds NumPy's `initial`, if any) in thread order after the parallel region: the result is
// deterministic for a given thread count. Integer sums and products wrap (any order gives
// NumPy's result), max/min are exact in any order and float max/min OR their NaN flags, so
// NaN propagates as in NumPy; float sums and products round per thread range.
void parallel_scalar_sums(Block& top) {
  for (size_t j = 0; j + 1 < top.size(); ++j) {
    Stmt& d = top[j];
    size_t k = j + 1;
    while (k < top.size() && top[k].k == Stmt::K::Let) ++k;  // hoisted invariants between them
    if (k == top.size()) continue;
    Stmt& f = top[k];
    if (d.k != Stmt::K::Decl || f.k != Stmt::K::For || f.parallel || f.var[0] != 'r') continue;
    if (f.red_acc != d.var || f.red_combine.args.empty()) continue;
    // Long enough to pay for a parallel region: 64k elements, or a runtime size.
    if (f.hi.is_const() && f.lo.is_const()) {
      int64_t iters = (f.hi.c - f.lo.c + f.step - 1) / f.step;
      if (iters < 2) continue;
      int64_t work = f.hi.c - f.lo.c;
      const Block* b = &f.body;
      while (!b->empty() && b->back().k == Stmt::K::For) {
        const Stmt& in = b->back();
        if (!in.hi.is_const() || !in.lo.is_const()) { work = INT64_MAX; break; }
        work *= std::max<int64_t>(1, in.hi.c - in.lo.c);
        b = &in.body;
      }
      if (work < 65536) continue;
    }
    f.par_acc = d.var;
    f.par_dtype = d.dtype;
  }
}

bool contains_loops(const Block& b) {
  for (auto& s : b) {
    if (s.k == Stmt::K::For && s.var[0] != 'i') return true;
    if (contains_loops(s.body) || contains_loops(s.orelse)) return true;
  }
  return false;
}

// Note [small reductions]
// A reduction loop with a small static extent (the norm over the 2 coordinates of a point,
// argmin over 2 means) is unrolled: its body is copied once per value of the loop
// variable, locals renamed per copy. No loop is left, so loads whose indices were constant
// in the copies and the values computed from them (the means, cast to float64) are
// loop-invariant and hoisted out of the main loop (hoist_invariants), and the main loop has
// straight-line code that `schedule` vectorizes (`omp simd`). Float sums add in order.

// `l` with loop variable `var` replaced by `value` and locals renamed by `m`.
Lin subst_lin(const Lin& l, const std::string& var, int64_t value, const std::map<std::string, std::string>& m) {
  Lin r = Lin::constant(l.c);
  for (auto& [atom, k] : l.t) {
    int64_t coef = k;
    std::string rest;
    size_t s = 0;
    while (s <= atom.size()) {
      size_t e = atom.find('*', s);
      if (e == std::string::npos) e = atom.size();
      std::string f = atom.substr(s, e - s);
      if (f == var) coef *= value;
      else {
        auto it = m.find(f);
        if (!rest.empty()) rest += "*";
        rest += it == m.end() ? f : it->second;
      }
      s = e + 1;
    }
    if (rest.empty()) r += Lin::constant(coef);
    else r += Lin::atom(rest, coef);
  }
  return r;
}

void declared_names(const Block& b, std::set<std::string>& out) {
  for (auto& s : b) {
    if (s.k == Stmt::K::Let || s.k == Stmt::K::Decl || s.k == Stmt::K::For) out.insert(s.var);
    declared_names(s.body, out);
    declared_names(s.orelse, out);
  }
}

// A local renamed by `m`; the loop variable `var` becomes the int64 literal `value`.
void subst_val(Val& v, const std::string& var, int64_t value, const std::map<std::string, std::string>& m) {
  if (!v.is_local()) return;
  if (v.text == var) {
    v = Val::literal(npc::Scalar::from_int(value), DType::Int64);
    return;
  }
  auto it = m.find(v.text);
  if (it != m.end()) v.text = it->second;
}

void rename(std::string& name, const std::map<std::string, std::string>& m) {
  auto it = m.find(name);
  if (it != m.end()) name = it->second;
}

void subst_block(Block& b, const std::string& var, int64_t value, const std::map<std::string, std::string>& m) {
  for (auto& s : b) {
    rename(s.var, m);
    s.index = subst_lin(s.index, var, value, m);
    s.expr.index = subst_lin(s.expr.index, var, value, m);
    for (auto& a : s.expr.args) subst_val(a, var, value, m);
    subst_val(s.val, var, value, m);
    s.lo = subst_lin(s.lo, var, value, m);
    s.hi = subst_lin(s.hi, var, value, m);
    s.cap = subst_lin(s.cap, var, value, m);
    rename(s.lane_acc, m);
    rename(s.lane_flag, m);
    rename(s.red_acc, m);
    rename(s.red_flag, m);
    subst_block(s.body, var, value, m);
    subst_block(s.orelse, var, value, m);
  }
}

int64_t count_stmts(const Block& b) {
  int64_t n = 0;
  for (auto& s : b) n += 1 + count_stmts(s.body) + count_stmts(s.orelse);
  return n;
}

bool contains_break(const Block& b) {
  for (auto& s : b) {
    if (s.k == Stmt::K::Break) return true;
    if (s.k != Stmt::K::For && (contains_break(s.body) || contains_break(s.orelse))) return true;
  }
  return false;
}

// Note [small reductions]: unrolls reduction loops (variables r*) of small static extent,
// innermost first.
void unroll_small(Block& b) {
  Block out;
  for (auto& s : b) {
    unroll_small(s.body);
    unroll_small(s.orelse);
    bool ok = s.k == Stmt::K::For && s.var[0] == 'r' && s.step == 1 && s.lo.is_const() && s.hi.is_const() &&
              s.par_acc.empty() && !s.parallel && !contains_break(s.body);
    int64_t n = ok ? s.hi.c - s.lo.c : 0;
    if (!ok || n < 1 || n > kUnrollExtent || n * count_stmts(s.body) > kUnrollStmts) {
      out.push_back(std::move(s));
      continue;
    }
    std::set<std::string> names;
    declared_names(s.body, names);
    for (int64_t v = s.lo.c; v < s.hi.c; ++v) {
      std::map<std::string, std::string> m;
      for (auto& nm : names) m[nm] = nm + "_u" + std::to_string(v);
      Block copy = s.body;
      subst_block(copy, s.var, v, m);
      for (auto& c : copy) out.push_back(std::move(c));
    }
  }
  b = std::move(out);
}

void defined_names(const Block& b, std::set<std::string>& out) {
  for (auto& s : b) {
    if (s.k == Stmt::K::Let || s.k == Stmt::K::Decl || s.k == Stmt::K::Assign || s.k == Stmt::K::For) out.insert(s.var);
    defined_names(s.body, out);
    defined_names(s.orelse, out);
  }
}

// Calls f on each factor of index atom `a` (a name, or a product of names joined by '*').
void for_each_factor(const std::string& a, const std::function<void(const std::string&)>& f) {
  size_t s = 0;
  while (s <= a.size()) {
    size_t e = a.find('*', s);
    if (e == std::string::npos) e = a.size();
    f(a.substr(s, e - s));
    s = e + 1;
  }
}

bool mentions(const Val& v, const std::set<std::string>& names) { return v.is_local() && names.count(v.text); }

bool lin_mentions(const Lin& l, const std::set<std::string>& names) {
  bool hit = false;
  for (auto& [a, k] : l.t)
    for_each_factor(a, [&](const std::string& f) { hit = hit || names.count(f); });
  return hit;
}

// Whether evaluating `e` can raise no floating-point flag (so computing it once before a
// loop that might run zero times reports nothing NumPy would not): loads, indices, and casts
// that cannot overflow or be invalid (integers to wider-range types, float widening).
bool no_fp_effects(const Expr& e) {
  switch (e.k) {
    case Expr::K::Load:
    case Expr::K::Index: return true;
    case Expr::K::Cast: {
      Kind ki = kind(e.in), ko = kind(e.dtype);
      if (ki == Kind::Bool) return true;
      if (ki == Kind::Signed || ki == Kind::Unsigned) return e.dtype != DType::Float16;
      if (ki == Kind::Float && ko == Kind::Float) return itemsize(e.dtype) >= itemsize(e.in);
      return false;
    }
    default: return false;
  }
}

// Note [small reductions]: moves the Lets of a loop body that use nothing the loop
// defines (its variable, locals declared or assigned in it) in front of the loop, when the
// loop has a static nonzero trip count; loads only from buffers the kernel does not write.
// Nothing leaves an If branch (barriers, Note [placement]).
void hoist_invariants(Block& b, const std::vector<KBuffer>& bufs) {
  Block out;
  for (auto& s : b) {
    hoist_invariants(s.body, bufs);
    hoist_invariants(s.orelse, bufs);
    // Only out of loops that run at least once: a hoisted load must be one the loop makes
    // (an empty array's buffer is not read), and nothing is computed that NumPy would not.
    if (s.k != Stmt::K::For || !s.lo.is_const() || !s.hi.is_const() || s.hi.c <= s.lo.c) {
      out.push_back(std::move(s));
      continue;
    }
    std::set<std::string> defs{s.var};
    defined_names(s.body, defs);
    Block keep;
    for (auto& c : s.body) {
      bool inv = c.k == Stmt::K::Let && no_fp_effects(c.expr) && !lin_mentions(c.expr.index, defs);
      if (inv && c.expr.k == Expr::K::Load && bufs.at(c.expr.buf).written) inv = false;
      if (inv)
        for (auto& a : c.expr.args) if (mentions(a, defs)) inv = false;
      if (inv) {
        defs.erase(c.var);  // what depends on it only may move too
        out.push_back(std::move(c));
      } else {
        keep.push_back(std::move(c));
      }
    }
    s.body = std::move(keep);
    out.push_back(std::move(s));
  }
  b = std::move(out);
}

// Note [reuse of reduced values]
// softmax's `e = exp(x - max); e / sum(e)` reads e twice per row: in the sum loop and in the
// loop that stores the result. Rather than computing e again (the exp per element is most
// of the kernel's work), the sum loop also stores e into the result's buffer and the store
// loop reads it back and divides in place: one kernel, no temporary beyond the output.
// Found on the kernel IR: a reduction loop L1 (var r*) followed in the same block by a loop
// L2 (var i*) of the same range whose Store to buffer B (B's only store in the kernel, B
// never loaded) computes a value structurally equal to one L1 computes (same ops on the
// same loads with the loop variable in the same place). L1 stores that value into
// B[store index with r for i] and L2 loads it instead of recomputing it. Only when the
// value involves an operation (not a mere load), has B's dtype (no conversion on the
// store; not float16 or bool), and is a Let directly in both loop bodies.
// A key equal for equal literals and special values (of one dtype).
std::string val_key(const Val& v) {
  char b[96];
  if (v.k == Val::K::Special) std::snprintf(b, sizeof b, "S%d:%d", static_cast<int>(v.special), static_cast<int>(v.dtype));
  else
    std::snprintf(b, sizeof b, "L%d:%d:%lld:%llu:%a:%a:%a", static_cast<int>(v.dtype), v.lit.b ? 1 : 0,
                  static_cast<long long>(v.lit.i), static_cast<unsigned long long>(v.lit.u), v.lit.f, v.lit.c.real(),
                  v.lit.c.imag());
  return b;
}

std::map<std::string, std::string> loop_signatures(const Stmt& loop, std::map<std::string, bool>& has_op) {
  std::map<std::string, std::string> sig;  // local -> signature
  std::map<std::string, std::string> ren{{loop.var, "#"}};
  std::set<std::string> locals{loop.var};
  int unique = 0;
  for (const Stmt& s : loop.body) {
    if (s.k != Stmt::K::Let) continue;
    const Expr& e = s.expr;
    std::string g;
    bool op = false;
    if (e.k == Expr::K::Load || e.k == Expr::K::Apply || e.k == Expr::K::Cast || e.k == Expr::K::Select) {
      g = std::to_string(static_cast<int>(e.k)) + "|" + std::to_string(static_cast<int>(e.dtype)) + "|" +
          std::to_string(static_cast<int>(e.in)) + "|" + std::to_string(static_cast<int>(e.op)) + "|" +
          std::to_string(e.buf) + "|" + subst_lin(e.index, "", 0, ren).str() + "(";
      op = e.k != Expr::K::Load;
      for (auto& a : e.args) {
        auto it = a.is_local() ? sig.find(a.text) : sig.end();
        if (it != sig.end()) {
          g += "{" + it->second + "}";
          op = op || has_op[a.text];
        } else if (mentions(a, locals)) {
          g += "?" + std::to_string(unique++);  // a value of the loop: never equal
        } else {
          g += val_key(a);
        }
        g += ",";
      }
      g += ")";
    } else {
      g = "?" + std::to_string(unique++);
    }
    sig[s.var] = g;
    has_op[s.var] = op;
    locals.insert(s.var);
  }
  return sig;
}

void used_names(const Block& b, std::set<std::string>& out) {
  auto val = [&](const Val& v) { if (v.is_local()) out.insert(v.text); };
  auto lin = [&](const Lin& l) {
    for (auto& [a, k] : l.t) for_each_factor(a, [&](const std::string& f) { out.insert(f); });
  };
  for (const Stmt& s : b) {
    for (auto& a : s.expr.args) val(a);
    lin(s.expr.index);
    lin(s.index);
    lin(s.lo);
    lin(s.hi);
    lin(s.cap);
    val(s.val);
    if (!s.lane_acc.empty()) out.insert(s.lane_acc);
    if (!s.lane_flag.empty()) out.insert(s.lane_flag);
    if (s.k == Stmt::K::Assign) out.insert(s.var);
    used_names(s.body, out);
    used_names(s.orelse, out);
  }
}

// Removes the Lets of `b` that nothing in `b` uses (their scope ends with the block).
void drop_dead_lets(Block& b) {
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string> used;
    used_names(b, used);
    for (size_t i = 0; i < b.size(); ++i) {
      if (b[i].k == Stmt::K::Let && !used.count(b[i].var)) {
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(i));
        changed = true;
        break;
      }
    }
  }
}

void count_buffer_uses(const Block& b, std::map<int, int>& stores, std::map<int, int>& loads) {
  for (const Stmt& s : b) {
    if (s.k == Stmt::K::Store) ++stores[s.buf];
    if (s.expr.k == Expr::K::Load) ++loads[s.expr.buf];
    count_buffer_uses(s.body, stores, loads);
    count_buffer_uses(s.orelse, stores, loads);
  }
}

void reuse_in_block(Block& b, const std::vector<KBuffer>& bufs, const std::map<int, int>& stores,
                    const std::map<int, int>& loads) {
  for (auto& s : b) {
    reuse_in_block(s.body, bufs, stores, loads);
    reuse_in_block(s.orelse, bufs, stores, loads);
  }
  for (size_t j = 0; j < b.size(); ++j) {
    Stmt& l1 = b[j];
    if (l1.k != Stmt::K::For || l1.var[0] != 'r' || l1.step != 1 || l1.red_acc.empty()) continue;
    for (size_t k = j + 1; k < b.size(); ++k) {
      Stmt& l2 = b[k];
      if (l2.k != Stmt::K::For || l2.var[0] != 'i' || l2.step != 1 || l2.lo.str() != l1.lo.str() ||
          l2.hi.str() != l1.hi.str() || l1.capped || l2.capped)
        continue;
      const Stmt* st = nullptr;
      for (const Stmt& x : l2.body) if (x.k == Stmt::K::Store) st = &x;
      if (!st) continue;
      const int B = st->buf;
      if (stores.at(B) != 1 || loads.count(B) || bufs.at(B).dtype == DType::Float16 || bufs.at(B).dtype == DType::Bool)
        continue;
      auto it = st->index.t.find(l2.var);
      if (it == st->index.t.end() || it->second == 0) continue;  // one element per iteration
      std::set<std::string> l2_locals;
      declared_names(l2.body, l2_locals);
      if (lin_mentions(st->index, l2_locals)) continue;
      std::map<std::string, bool> op1, op2;
      auto s1 = loop_signatures(l1, op1);
      auto s2 = loop_signatures(l2, op2);
      std::map<std::string, std::string> by_sig;  // L1 signature -> L1 local
      for (auto& [v, g] : s1) if (g[0] != '?') by_sig.emplace(g, v);
      // The last L2 Let equal to an L1 value that involves an operation (the largest one:
      // Lets come after their operands).
      std::string v2, v1;
      for (const Stmt& x : l2.body) {
        if (x.k != Stmt::K::Let || !op2[x.var] || x.dtype != bufs.at(B).dtype) continue;
        auto f = by_sig.find(s2[x.var]);
        if (f != by_sig.end()) { v2 = x.var; v1 = f->second; }
      }
      if (v2.empty()) continue;
      // L1: store v1 right after its definition.
      Lin idx1 = subst_lin(st->index, "", 0, {{l2.var, l1.var}});
      for (size_t p = 0; p < l1.body.size(); ++p) {
        if (l1.body[p].k != Stmt::K::Let || l1.body[p].var != v1) continue;
        Stmt put{Stmt::K::Store};
        put.buf = B;
        put.index = idx1;
        put.val = Val{v1, l1.body[p].dtype};
        l1.body.insert(l1.body.begin() + static_cast<std::ptrdiff_t>(p) + 1, std::move(put));
        break;
      }
      // L2: load it back, and drop the Lets only it needed.
      for (Stmt& x : l2.body) {
        if (x.k != Stmt::K::Let || x.var != v2) continue;
        Expr e{Expr::K::Load, x.dtype};
        e.buf = B;
        e.index = st->index;
        x.expr = e;
      }
      drop_dead_lets(l2.body);
      return;  // B has a second store now: one reuse per kernel
    }
  }
}

void reuse_reduced_values(Block& top, const std::vector<KBuffer>& bufs) {
  std::map<int, int> stores, loads;
  count_buffer_uses(top, stores, loads);
  reuse_in_block(top, bufs, stores, loads);
}

}  // namespace

// A multi-output ufunc output the emitter generates as another row: divmod's quotient and
// remainder are floor_divide and remainder (NumPy computes all three with npy_divmod).
OpId generated_as(NodeRef n) {
  if (n->op == OpId::divmod) return n->params.at(0) == 0 ? OpId::floor_divide : OpId::remainder;
  return n->params.empty() || n->params[0] == 0 ? n->op : OpId::kCount;
}

bool static_empty_axis(NodeRef src, const std::vector<int64_t>& axes) {
  for (int64_t a : axes)
    if (src->shape.at(a).is_static() && src->shape[a].value() == 0) return true;
  return false;
}

bool is_scan(NodeRef n) {
  return n->kind == NodeKind::Prim && (n->op == OpId::cumsum || n->op == OpId::cumprod) &&
         cpp_supports(n->op == OpId::cumsum ? OpId::add : OpId::multiply, n->dtype);
}

bool is_library_call(NodeRef n) {
  switch (n->kind) {
    case NodeKind::Call: return true;
    case NodeKind::Cast:
      // Note [casts to uint32]: float32/float64 -> uint32 of out-of-range values depends on
      // which path of NumPy's loop converts the element (its SIMD body converts through int32,
      // its scalar tail through int64): npc's eager cast is built the same way and gives
      // NumPy's values for a contiguous array, so the fused backend calls it.
      return n->dtype == DType::UInt32 && (n->args[0]->dtype == DType::Float64 || n->args[0]->dtype == DType::Float32);
    case NodeKind::Ufunc: {
      OpId op = generated_as(n);
      return op == OpId::kCount || !cpp_supports(op, n->args[0]->dtype);
    }
    case NodeKind::Reduce: {
      if (!reduce_supported(n->op, n->dtype)) return true;
      // max/min of an empty axis has no identity: the eager reduction raises NumPy's error.
      return (n->op == OpId::maximum || n->op == OpId::minimum) && !n->value &&
             static_empty_axis(n->args[0], std::vector<int64_t>(n->params.begin() + 1, n->params.end()));
    }
    case NodeKind::Prim:
      if (n->op == OpId::argmin || n->op == OpId::argmax)
        return is_complex(n->args[0]->dtype) || static_empty_axis(n->args[0], {n->params.at(0)});
      if (is_scan(n)) return false;  // Note [scans in kernels]
      return n->op != OpId::where && n->op != OpId::iota && n->op != OpId::fill && n->op != OpId::copy;
    default: return false;
  }
}

NodeRef library_operand_base(NodeRef a) {
  while (a->kind == NodeKind::View) a = a->args[0];
  return a;
}

// Note [writes in place]
// A Write (`A[i, j] -= x`, a stencil's interior) produces a new value of its base. When the
// base is a temporary of the graph that nothing reads after the Write (no later kernel, no
// output or write-back, not a library result that may alias an operand), the Write takes
// its buffer over: only the region is stored, the elements outside it are already there.
// Otherwise an element update of a loop over rows would copy the whole array each time.
// Reading the old value while storing the new one is safe when every load of the buffer is
// at the element being stored (each element is read before it is overwritten, and no other
// element reads it), or when the region is one element stored by the box nest alone (the
// value is computed before the single store). Anything else gets a buffer of its own.
bool in_place_safe(const Kernel& k, const Emitter& em, NodeRef w) {
  std::vector<std::string> stores, loads;
  std::function<void(const Block&)> walk = [&](const Block& b) {
    for (const Stmt& s : b) {
      if (s.k == Stmt::K::Store && k.bufs.at(s.buf).written) stores.push_back(std::to_string(s.buf) + ":" + s.index.str());
      if ((s.k == Stmt::K::Let || s.k == Stmt::K::Decl || s.k == Stmt::K::Assign) && s.expr.k == Expr::K::Load)
        loads.push_back(std::to_string(s.expr.buf) + ":" + s.expr.index.str());
      walk(s.body);
      walk(s.orelse);
    }
  };
  walk(k.body);
  int64_t region = 1;
  for (const Dim& d : w->args[1]->shape) {
    if (!d.is_static()) { region = -1; break; }
    region *= d.value();
  }
  if (em.box_in_place() && region == 1) return true;
  if (stores.size() != 1) return false;
  const std::string buf = stores[0].substr(0, stores[0].find(':') + 1);
  for (auto& l : loads)
    if (l.compare(0, buf.size(), buf) == 0 && l != stores[0]) return false;
  return true;
}

bool LowerState::is_input(NodeRef n) const { return n->kind == NodeKind::Input || n->kind == NodeKind::Scalar; }

bool LowerState::can_materialise(NodeRef n) const { return !materialised.count(n); }

// The lowering driver: decides materialisation by trial emission, groups roots into kernels.
Lowered lower(const ir::Graph& g, const std::vector<bool>& contiguous) {
  // Reachable nodes.
  std::set<NodeRef> live;
  std::function<void(NodeRef)> mark = [&](NodeRef n) {
    if (!live.insert(n).second) return;
    for (NodeRef a : n->args) mark(a);
  };
  for (NodeRef o : g.outputs) mark(o);
  for (auto& [i, v] : g.writebacks) mark(v);
  // Nodes the emitter cannot generate run as host calls (Note [library calls]).
  std::set<NodeRef> materialised;
  for (NodeRef o : g.outputs) materialised.insert(o);
  for (auto& [i, v] : g.writebacks) materialised.insert(v);
  for (NodeRef n : live) if (n->kind == NodeKind::Write || is_scan(n)) materialised.insert(n);
  // Note [library calls]: the call and the values its operands view are materialised.
  for (NodeRef n : live) {
    if (!is_library_call(n)) continue;
    materialised.insert(n);
    for (NodeRef a : n->args) {
      NodeRef base = library_operand_base(a);
      if (base->kind != NodeKind::Input || base->ndim() == 0) materialised.insert(base);
    }
  }

  for (int attempt = 0; attempt < 10000; ++attempt) {
    Lowered out;
    LowerState st;
    st.materialised = materialised;
    // Buffers: inputs (by graph input index), one scalar block, then materialised values.
    std::map<int, NodeRef> inputs;
    for (NodeRef n : g.nodes()) if (live.count(n) && n->kind == NodeKind::Input) inputs[n->params[0]] = n;
    int stride_base = 0;
    for (int i = 0; i < g.num_inputs(); ++i) {
      BufInfo b;
      b.kind = BufInfo::Input;
      b.index = i;
      auto it = inputs.find(i);
      b.contiguous = i < static_cast<int>(contiguous.size()) ? contiguous[i] : true;
      if (it != inputs.end()) {
        b.dtype = it->second->dtype;
        b.shape = it->second->shape;
        b.stride_base = stride_base;
        stride_base += it->second->ndim();
      }
      st.bufs.push_back(b);
      if (it != inputs.end()) {
        (materialised.count(it->second) ? st.input_buffer_of : st.buffer_of)[it->second] = i;
      }
    }
    out.num_strides = stride_base;
    {
      BufInfo b;
      b.kind = BufInfo::Scalars;
      b.dtype = DType::Float64;
      st.bufs.push_back(b);
      st.scalar_buffer = static_cast<int>(st.bufs.size()) - 1;
    }
    for (NodeRef n : g.nodes()) {
      if (live.count(n) && n->kind == NodeKind::Scalar) {
        BufInfo b = st.bufs[st.scalar_buffer];
        (void)b;
        // Scalars share the scalar block; each has a 16-byte slot at its index.
        BufInfo sb;
        sb.kind = BufInfo::Scalars;
        sb.scalar_slot = static_cast<int>(n->params[0]);
        sb.dtype = n->dtype;
        st.bufs.push_back(sb);
        // A materialised scalar (a host call's operand) is copied from its slot by a kernel.
        (materialised.count(n) ? st.input_buffer_of : st.buffer_of)[n] = static_cast<int>(st.bufs.size()) - 1;
      }
    }
    // Materialised values in topological order.
    std::vector<NodeRef> roots;
    for (NodeRef n : g.nodes()) {
      if (!live.count(n) || !materialised.count(n)) continue;
      BufInfo b;
      b.kind = BufInfo::Temp;
      b.dtype = n->dtype;
      b.shape = n->shape;
      b.node = n;
      st.bufs.push_back(b);
      st.buffer_of[n] = static_cast<int>(st.bufs.size()) - 1;
      roots.push_back(n);
    }
    // Dependencies between roots (through inlined nodes).
    std::map<NodeRef, std::set<NodeRef>> deps;
    for (NodeRef r : roots) {
      std::set<NodeRef> seen;
      std::function<void(NodeRef, bool)> walk = [&](NodeRef n, bool top) {
        if (!seen.insert(n).second) return;
        if (!top && materialised.count(n)) { deps[r].insert(n); return; }
        for (NodeRef a : n->args) walk(a, false);
      };
      walk(r, true);
    }
    // Group: join the latest group when the shape matches and no dependency on it.
    std::vector<std::vector<NodeRef>> groups;
    for (NodeRef r : roots) {
      if (!groups.empty()) {
        auto& last = groups.back();
        bool ok = last.front()->shape == r->shape && r->kind != NodeKind::Write && last.front()->kind != NodeKind::Write &&
                  !is_scan(r) && !is_scan(last.front()) &&
                  !is_library_call(r) && !is_library_call(last.front());
        for (NodeRef m : last) if (deps[r].count(m)) ok = false;
        if (ok) { last.push_back(r); continue; }
      }
      groups.push_back({r});
    }
    // Note [writes in place]: Writes that may take their base's buffer over.
    std::map<NodeRef, NodeRef> in_place_base;
    {
      std::set<NodeRef> escaping(g.outputs.begin(), g.outputs.end());
      for (auto& [i, v] : g.writebacks) escaping.insert(v);
      std::map<NodeRef, size_t> last_reader;
      for (size_t i = 0; i < roots.size(); ++i)
        for (NodeRef d : deps[roots[i]]) last_reader[d] = i;
      for (size_t i = 0; i < roots.size(); ++i) {
        NodeRef w = roots[i];
        if (w->kind != NodeKind::Write) continue;
        NodeRef b = w->args[0];
        auto bb = st.buffer_of.find(b);
        if (bb == st.buffer_of.end() || !materialised.count(b) || st.bufs[bb->second].kind != BufInfo::Temp) continue;
        if (escaping.count(b) || is_library_call(b) || last_reader[b] != i) continue;
        in_place_base[w] = b;
      }
    }
    try {
      std::map<std::string, int> fn_by_text;
      for (auto& grp : groups) {
        if (is_library_call(grp.front())) {
          // Note [library calls]: result buffer first, then the buffers its operands view.
          std::vector<int> bufs{st.buffer_of.at(grp.front())};
          for (NodeRef a : grp.front()->args) {
            NodeRef base = library_operand_base(a);
            bufs.push_back(st.input_buffer_of.count(base) ? st.input_buffer_of.at(base) : st.buffer_of.at(base));
          }
          out.launches.push_back(Launch{-1, bufs, grp, {}});
          continue;
        }
        std::set<NodeRef> rs(grp.begin(), grp.end());
        auto ip = grp.size() == 1 ? in_place_base.find(grp.front()) : in_place_base.end();
        const int own_buffer = st.buffer_of.at(grp.front());
        if (ip != in_place_base.end()) st.buffer_of[grp.front()] = st.buffer_of.at(ip->second);
        auto em = std::make_unique<Emitter>(st, grp.front()->shape, rs);
        Kernel k = em->run(grp);
        if (ip != in_place_base.end() && !in_place_safe(k, *em, grp.front())) {
          st.buffer_of[grp.front()] = own_buffer;  // the value reads the base elsewhere: a new buffer
          em = std::make_unique<Emitter>(st, grp.front()->shape, rs);
          k = em->run(grp);
        }
        std::vector<int64_t> params;  // Note [generic kernels]
        run_pass("parametrise_constants", k, [&](Kernel& x) { params = parametrise_constants(x); });
        std::string body = emit_cpp_kernel(k, "@NAME@");
        auto it = fn_by_text.find(body);
        int fn;
        if (it == fn_by_text.end()) {
          fn = static_cast<int>(out.kernels.size());
          fn_by_text[body] = fn;
          out.kernels.push_back(std::move(k));
          out.kernel_text.push_back(body);
        } else {
          fn = it->second;
        }
        out.launches.push_back(Launch{fn, em->global_bufs(), grp, std::move(params)});
      }
    } catch (const NeedMaterialize& m) {
      materialised.insert(m.node);
      continue;
    }
    out.bufs = st.bufs;
    out.buffer_of = st.buffer_of;
    out.input_buffer_of = st.input_buffer_of;
    out.scalar_buffer = st.scalar_buffer;
    return out;
  }
  throw CodegenError("fusion did not converge");
}

std::string translation_unit(const Lowered& l, std::vector<std::string>& names, const std::string& tag) {
  std::string src = cpp_prelude();
  src += "#include <algorithm>\n#include <limits>\n\n";
  names.clear();
  for (size_t i = 0; i < l.kernel_text.size(); ++i) {
    std::string name = "npc_" + tag + "_k" + std::to_string(i);
    std::string text = l.kernel_text[i];
    text.replace(text.find("@NAME@"), 6, name);
    src += text + "\n";
    names.push_back(name);
  }
  return src;
}

}  // namespace npc::fusion
