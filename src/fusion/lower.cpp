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
// the block sums are added in order (in double for float32), so the error grows with the
// number of blocks, not the number of elements. float16 sums accumulate in float and
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
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "fusion/lower.hpp"

namespace npc::fusion {

OpId generated_as(NodeRef n);

namespace {

struct NeedMaterialize { NodeRef node; };


int64_t static_extent(const Dim& d) { return d.is_static() ? d.value() : -1; }

Lin dim_lin(const Dim& d) {
  if (d.is_static()) return Lin::constant(d.value());
  return Lin::atom("sym[" + std::to_string(d.symbol()) + "]");
}

std::string literal(const npc::Scalar& v, DType t) {
  npc::Scalar s = v.cast(t);
  char b[64];
  auto fp = [&](double x, bool single) -> std::string {
    if (std::isnan(x)) return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
    if (std::isinf(x)) return std::string(x < 0 ? "-" : "") + (single ? "__builtin_inff()" : "__builtin_inf()");
    std::snprintf(b, sizeof b, "%a", x);
    return single ? "(float)" + std::string(b) : std::string(b);
  };
  switch (kind(t)) {
    case Kind::Bool: return s.b ? "true" : "false";
    case Kind::Signed:
      if (s.i == INT64_MIN) return "(int64_t)INT64_MIN";
      return "(" + cpp_local_type(t) + ")" + std::to_string(s.i) + "LL";
    case Kind::Unsigned: return "(" + cpp_local_type(t) + ")" + std::to_string(s.u) + "ULL";
    case Kind::Float:
      if (t == DType::Float64) return fp(s.f, false);
      return fp(t == DType::Float16 ? half_to_double(double_to_half(s.f)) : static_cast<double>(static_cast<float>(s.f)),
                true);
    case Kind::Complex:
      if (t == DType::Complex64)
        return "npk::c64{" + fp(static_cast<float>(s.c.real()), true) + ", " + fp(static_cast<float>(s.c.imag()), true) + "}";
      return "npk::c128{" + fp(s.c.real(), false) + ", " + fp(s.c.imag(), false) + "}";
  }
  return "0";
}

bool reduce_supported(OpId op, DType t) {
  switch (op) {
    case OpId::add:
    case OpId::multiply: return true;
    case OpId::maximum:
    case OpId::minimum: return !is_complex(t);
    case OpId::logical_or:
    case OpId::logical_and: return true;
    default: return false;
  }
}

void coalesce(Block& top);
void schedule(Block& top, bool has_reduction_inside);
void parallel_scalar_sums(Block& top);
bool contains_loops(const Block& b);

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
    } else {
      nests.push_back(nest(space_, [&](const std::vector<Lin>& idx) {
        for (NodeRef r : roots) store(r, idx, value(r, idx, /*as_root=*/true));
      }));
    }
    for (auto& b : nests) {
      bool inner_loops = contains_loops(b);
      coalesce(b);
      schedule(b, inner_loops);
      parallel_scalar_sums(b);
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

  // Note [writes as nests]
  // A Write whose region is a box of unit-step slices and integer indices (a stencil's
  // interior) is emitted as loop nests without per-element branches: the slabs of the
  // base outside the box are copied (two per axis; corners are copied twice, harmlessly),
  // then the box is computed from the old value. Other writes are selects (write()).
  bool split_write(NodeRef n, std::vector<Block>& nests) {
    NodeRef base = n->args[0], region = n->args[1], val = n->args[2];
    std::vector<Lin> fwd;
    if (!region_map(n, fwd)) return false;
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
    for (int d = 0; d < base->ndim(); ++d) {
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

  Val zero_of(DType t) { return Val{literal(npc::Scalar::from_int(0), t), t}; }

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
      case NodeKind::Const: return Val{literal(*n->value, n->dtype), n->dtype};
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
          Expr e{Expr::K::Lit, n->dtype};
          e.args = {Val{a.text + (n->params[1] ? ".im" : ".re"), n->dtype}};
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
          Expr e{Expr::K::Lit, DType::Int64};
          e.args = {Val{"(" + iv.text + " < 0 ? " + iv.text + " + " + extent.str() + " : " + iv.text + ")", DType::Int64}};
          Val norm = let(DType::Int64, e, val_level(iv));
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
    npc::Scalar init;
    bool use_initial = n->value.has_value();
    OpId op = n->op;
    std::string init_text;
    if (use_initial) init_text = literal(*n->value, t);
    else {
      switch (op) {
        case OpId::add: init_text = literal(npc::Scalar::from_int(0), t); break;
        case OpId::multiply: init_text = literal(npc::Scalar::from_int(1), t); break;
        case OpId::logical_or: init_text = "false"; break;
        case OpId::logical_and: init_text = "true"; break;
        case OpId::maximum:
          if (is_inexact(t)) init_text = "-__builtin_inf()";
          else if (t == DType::Bool) init_text = "false";
          else init_text = "std::numeric_limits<" + cpp_local_type(t) + ">::lowest()";
          break;
        case OpId::minimum:
          if (is_inexact(t)) init_text = "__builtin_inf()";
          else if (t == DType::Bool) init_text = "true";
          else init_text = "std::numeric_limits<" + cpp_local_type(t) + ">::max()";
          break;
        default: throw CodegenError("unsupported reduction");
      }
      // max/min of an empty axis has no identity: NumPy raises, so let eager run it.
      if (op == OpId::maximum || op == OpId::minimum) {
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
      s.expr = Expr{Expr::K::Lit, DType::Int32};
      s.expr.args = {Val{"0", DType::Int32}};
      stack_[std::max(lv, barrier_level())]->stmts.push_back(std::move(s));
    }
    // Long float32 sums add their blocks in double (Note [summation]).
    int64_t last_ext = axes.empty() ? 1 : static_extent(src->shape[*axes.rbegin()]);
    bool wide_acc = float_add && t == DType::Float32 && (last_ext < 0 || last_ext > 256);
    {
      Stmt s{Stmt::K::Decl};
      s.var = acc;
      s.dtype = wide_acc ? DType::Float64 : t;
      s.expr = Expr{Expr::K::Lit, t};
      s.expr.args = {Val{init_text, t}};
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
    const int64_t block = t == DType::Float64 ? 2048 : 256;
    if (float_add && (inner_ext < 0 || inner_ext > block)) blocked = true;
    if (blocked) target = part = fresh("part");
    {
      Stmt s{Stmt::K::Assign};
      s.var = target;
      s.expr = Expr{Expr::K::Lit, t};
      if (float_add) s.expr.args = {Val{"(" + target + " + " + v.text + ")", t}};
      else if (float_minmax) {
        // Quiet comparison: a NaN element raises no "invalid" flag (it sets the NaN flag).
        s.expr.args = {Val{std::string(op == OpId::maximum ? "npk::qmax(" : "npk::qmin(") + target + ", " + v.text + ")", t}};
        Stmt nf{Stmt::K::Assign};
        nf.var = nanflag;
        nf.expr = Expr{Expr::K::Lit, DType::Int32};
        nf.expr.args = {Val{"(" + nanflag + " | (int)(" + v.text + " != " + v.text + "))", DType::Int32}};
        stack_.back()->stmts.push_back(std::move(nf));
      } else {
        Expr a{Expr::K::Apply, t};
        a.op = op;
        a.in = t;
        a.args = {Val{target, t}, v};
        s.expr = a;
        if (t == DType::Float16) {  // accumulate float16 in float: no per-step rounding
          s.expr = Expr{Expr::K::Lit, t};
          s.expr.args = {Val{std::string(op == OpId::multiply ? "(" + target + " * " + v.text + ")" : render_apply(op, target, v.text)), t}};
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
        loop.hi = Lin::atom("std::min<int64_t>(" + hi.str() + ", " + rb + " + " + std::to_string(block) + ")");
        loop.simd = true;
        loop.reduction = "+:" + part;
        loop.body = std::move(inner);
        Block blk;
        Stmt pd{Stmt::K::Decl};
        pd.var = part;
        pd.dtype = t;
        pd.expr = Expr{Expr::K::Lit, t};
        pd.expr.args = {Val{literal(npc::Scalar::from_int(0), t), t}};
        blk.push_back(std::move(pd));
        blk.push_back(std::move(loop));
        Stmt addp{Stmt::K::Assign};
        addp.var = acc;
        addp.expr = Expr{Expr::K::Lit, t};
        addp.expr.args = {Val{"(" + acc + " + " + part + ")", t}};
        blk.push_back(std::move(addp));
        Stmt ob{Stmt::K::For};
        ob.var = rb;
        ob.lo = Lin::constant(0);
        ob.hi = hi;
        ob.step = block;
        ob.body = std::move(blk);
        loop = std::move(ob);
      } else {
        if (innermost && float_add) { loop.simd = true; loop.reduction = "+:" + acc; }
        if (innermost && float_minmax) {
          loop.simd = true;
          loop.reduction = std::string(op == OpId::maximum ? "max:" : "min:") + acc + ") reduction(|:" + nanflag;
        }
        loop.body = std::move(inner);
      }
      inner = i > 0 ? std::move(rscopes[i - 1]->stmts) : Block{};
      inner.push_back(std::move(loop));
    }
    stack_ = saved;
    for (auto& blk_stmt : inner) stack_[lv]->stmts.push_back(std::move(blk_stmt));
    if (float_minmax) {
      Stmt fix{Stmt::K::Assign};
      fix.var = acc;
      fix.expr = Expr{Expr::K::Lit, t};
      fix.expr.args = {Val{"(" + nanflag + " ? (" + cpp_local_type(t) + ")__builtin_nan(\"\") : " + acc + ")", t}};
      stack_[lv]->stmts.push_back(std::move(fix));
    }
    for (auto& r : rvars) level_.erase(r);
    level_[acc] = lv;
    Val result{acc, t};
    if (wide_acc) {
      Expr e{Expr::K::Lit, t};
      e.args = {Val{"(float)" + acc, t}};
      result = let(t, e, lv);
    }
    if (t == DType::Float16) {
      Expr e{Expr::K::Lit, t};
      e.args = {Val{"npk::r16(" + acc + ")", t}};
      result = let(t, e, lv);
    }
    stack_[lv]->memo[key] = result;
    return result;
  }

  static std::string render_apply(OpId op, const std::string& a, const std::string& b) {
    switch (op) {
      case OpId::add: return "(" + a + " + " + b + ")";
      case OpId::maximum: return "npk::maxv<float>(" + a + ", " + b + ")";
      case OpId::minimum: return "npk::minv<float>(" + a + ", " + b + ")";
      default: return "(" + a + " * " + b + ")";
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
    std::string init;
    if (is_inexact(t)) init = mn ? "__builtin_inf()" : "-__builtin_inf()";
    else if (t == DType::Bool) init = mn ? "true" : "false";
    else init = "std::numeric_limits<" + cpp_local_type(t) + ">::" + (mn ? "max()" : "lowest()");
    Stmt d1{Stmt::K::Decl};
    d1.var = best;
    d1.dtype = t;
    d1.expr = Expr{Expr::K::Lit, t};
    d1.expr.args = {Val{init, t}};
    Stmt d2{Stmt::K::Decl};
    d2.var = bi;
    d2.dtype = DType::Int64;
    d2.expr = Expr{Expr::K::Lit, DType::Int64};
    d2.expr.args = {Val{"0", DType::Int64}};
    stack_[lv]->stmts.push_back(std::move(d1));
    stack_[lv]->stmts.push_back(std::move(d2));
    std::vector<Scope*> saved = stack_;
    stack_.resize(lv + 1);
    scopes_.emplace_back();
    scopes_.back().var = rvars[0];
    stack_.push_back(&scopes_.back());
    level_[rvars[0]] = static_cast<int>(stack_.size()) - 1;
    Val v = value(src, sidx);
    // npk::lt_scalar: a quiet comparison, a NaN element raises no "invalid" flag (NumPy's
    // argmin). This loop breaks at the first NaN, so it is never vectorized, and the scalar
    // quiet compare (ucomisd) is several times cheaper than npk::lt's bit tricks.
    std::string cmp = mn ? "npk::lt_scalar(" + v.text + ", " + best + ")"
                         : "npk::lt_scalar(" + best + ", " + v.text + ")";
    bool fl = kind(t) == Kind::Float;
    std::string cond = "(" + cmp + (fl ? " || std::isnan(" + v.text + "))" : ")");
    Stmt upd{Stmt::K::If};
    upd.val = Val{cond, DType::Bool};
    Stmt a1{Stmt::K::Assign};
    a1.var = best;
    a1.expr = Expr{Expr::K::Lit, t};
    a1.expr.args = {v};
    Stmt a2{Stmt::K::Assign};
    a2.var = bi;
    a2.expr = Expr{Expr::K::Lit, DType::Int64};
    a2.expr.args = {Val{rvars[0], DType::Int64}};
    upd.body.push_back(std::move(a1));
    upd.body.push_back(std::move(a2));
    if (fl) {
      Stmt brk{Stmt::K::If};
      brk.val = Val{"std::isnan(" + v.text + ")", DType::Bool};
      brk.body.push_back(Stmt{Stmt::K::Break});
      upd.body.push_back(std::move(brk));
    }
    stack_.back()->stmts.push_back(std::move(upd));
    Stmt f{Stmt::K::For};
    f.var = rvars[0];
    f.lo = Lin::constant(0);
    f.hi = dim_lin(src->shape[axis]);
    f.body = std::move(stack_.back()->stmts);
    stack_ = saved;
    stack_[lv]->stmts.push_back(std::move(f));
    level_.erase(rvars[0]);
    level_[bi] = lv;
    Val r{bi, DType::Int64};
    stack_[lv]->memo[key] = r;
    return r;
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
          Expr q{Expr::K::Lit, DType::Int64};
          q.args = {Val{"((" + idx[d].str() + " - (" + std::to_string(f.c) + ")) / " + std::to_string(coef) + ")", DType::Int64}};
          Val qv = let(DType::Int64, q, lin_level(idx[d]));
          vidx[j] = Lin::atom(qv.text);
        }
      }
      conds.push_back(let(DType::Bool, e, lin_level(idx[d])));
    }
    Val cond = conds.empty() ? Val{"true", DType::Bool} : conds[0];
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
    decl.expr = Expr{Expr::K::Lit, n->dtype};
    decl.expr.args = {zero_of(n->dtype)};
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
      as.expr = Expr{Expr::K::Lit, n->dtype};
      as.expr.args = {x};
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
    visit_lins(s.body, f);
    visit_lins(s.orelse, f);
  }
}

bool uses_var_outside_offsets(const Block& b, const std::string& v) {
  for (auto& s : b) {
    if (s.expr.k == Expr::K::Index || s.expr.k == Expr::K::InRange || s.expr.k == Expr::K::Lit) {
      if (s.expr.k != Expr::K::Lit && s.expr.index.t.count(v)) return true;
      for (auto& a : s.expr.args) if (a.text.find(v) != std::string::npos) return true;
    }
    if (s.k == Stmt::K::If && s.val.text.find(v) != std::string::npos) return true;
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
    if (s.k == Stmt::K::For || s.k == Stmt::K::If || s.k == Stmt::K::Break) return true;
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
// A sum placed outside every parallel loop (a reduction to one value: np.sum(a * b)) would
// run on one thread. When such a loop is long, its iterations (blocks of the blocked float
// sum, Note [summation], or elements) are split into one contiguous range per thread; each
// thread sums its range from zero into a partial, and the partials are added to the
// accumulator in thread order after the parallel region: the result is deterministic for a
// given thread count. Only float sums (blocked, or simd "+:" reductions) are split.
void parallel_scalar_sums(Block& top) {
  for (size_t j = 0; j + 1 < top.size(); ++j) {
    Stmt& d = top[j];
    size_t k = j + 1;
    while (k < top.size() && top[k].k == Stmt::K::Let) ++k;  // hoisted invariants between them
    if (k == top.size()) continue;
    Stmt& f = top[k];
    if (d.k != Stmt::K::Decl || f.k != Stmt::K::For || f.parallel || f.var[0] != 'r') continue;
    if (kind(d.dtype) != Kind::Float) continue;
    bool blocked = f.step > 1 && !f.body.empty() && f.body.back().k == Stmt::K::Assign && f.body.back().var == d.var &&
                   f.body.back().expr.k == Expr::K::Lit && f.body.back().expr.args.size() == 1 &&
                   f.body.back().expr.args[0].text.rfind("(" + d.var + " + ", 0) == 0;
    bool simd_sum = f.step == 1 && f.simd && f.reduction == "+:" + d.var;
    if (!blocked && !simd_sum) continue;
    // Long enough to pay for a parallel region: 64k elements, or a runtime size.
    if (f.hi.is_const() && f.lo.is_const() && f.hi.c - f.lo.c < 65536) continue;
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

bool is_library_call(NodeRef n) {
  switch (n->kind) {
    case NodeKind::Call: return true;
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
      return n->op != OpId::where && n->op != OpId::iota && n->op != OpId::fill;
    default: return false;
  }
}

NodeRef library_operand_base(NodeRef a) {
  while (a->kind == NodeKind::View) a = a->args[0];
  return a;
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
  for (NodeRef n : live) if (n->kind == NodeKind::Write) materialised.insert(n);
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
                  !is_library_call(r) && !is_library_call(last.front());
        for (NodeRef m : last) if (deps[r].count(m)) ok = false;
        if (ok) { last.push_back(r); continue; }
      }
      groups.push_back({r});
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
          out.launches.push_back(Launch{-1, bufs, grp});
          continue;
        }
        std::set<NodeRef> rs(grp.begin(), grp.end());
        Emitter em(st, grp.front()->shape, rs);
        Kernel k = em.run(grp);
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
        out.launches.push_back(Launch{fn, em.global_bufs(), grp});
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
