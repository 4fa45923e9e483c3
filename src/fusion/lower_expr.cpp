// Expression lowering: the kernel emitter turns the values of a group of roots (elementwise
// ops, casts, views, gathers, writes) into the statements of a loop nest.
//
// Note [placement]
// Emission places every statement at the outermost loop level where its operands are
// defined (loop-invariant code motion): a reduction whose kept indices are bound by the
// outer loops is computed once per outer iteration (softmax: max and sum once per row),
// a load of X[i, j] inside a k loop is hoisted out of it. Branches of a Write are barriers:
// nothing computed inside them moves out (their loads may be out of bounds otherwise).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "fusion/lower_internal.hpp"

namespace npc::fusion {

// Note [materialisations found in one pass]
// A node read at two different indices in one kernel is materialised (Note [fusion]), and
// the grouping then lowers the whole graph again. Thrown at the first such read, a graph
// whose every step reads the step before at several indices (a Floyd-Warshall or stencil
// time loop unrolled by tracing: d_k = minimum(d_{k-1}, d_{k-1}[:, k, None] + d_{k-1}[None,
// k, :])) would be lowered once per step, each time up to the step found last: quadratic
// in the steps (Floyd-Warshall at n = 260: 260 lowerings of up to 260 kernels, 1.8 s). So
// the emitter goes on past such a read as if the node were materialised (the read is a
// placeholder literal and the node's own inputs are not visited through it, as they would
// not be once it is materialised), collects every node found so, in order, and the kernel
// then throws them all at once; the kernel itself is discarded. Any other failure of a
// kernel with collected nodes retries with them too (a placeholder may mislead the rest).
// The nodes are those the one-at-a-time search would find, except where a node collected
// first would, once materialised, have spared a later one its second index: that one is
// then materialised too, which costs a temporary, never a different value.
void Emitter::throw_deferred() {
  NeedMaterialize m{deferred_.front(), {}};
  m.more.assign(deferred_.begin() + 1, deferred_.end());
  throw m;
}

Kernel Emitter::run(const std::vector<NodeRef>& roots) {
  Kernel k;
  std::vector<Block> nests;
  try {
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
  } catch (NeedMaterialize& m) {
    m.more.insert(m.more.end(), deferred_.begin(), deferred_.end());
    throw;
  } catch (const std::exception&) {
    if (!deferred_.empty()) throw_deferred();
    throw;
  }
  if (!deferred_.empty()) throw_deferred();
  // Note [kernel-IR passes] (kir_verify.cpp): each nest is verified as lowered and after
  // every pass under NPC_VERIFY=1.
  for (auto& b : nests) {
    if (default_verify()) verify_nest(b, bufs_, 0, "lower");
    run_pass("bool_bytes", b, bufs_, [&](Block& x) { bool_bytes(x, bufs_); });  // Note [bool bytes in kernels]
    run_pass("unroll_small", b, bufs_, unroll_small);  // Note [small reductions]
    run_pass("hoist_invariants", b, bufs_, [&](Block& x) { hoist_invariants(x, bufs_); });
    // Note [reuse of reduced values]
    run_pass("reuse_reduced_values", b, bufs_, [&](Block& x) { reuse_reduced_values(x, bufs_); });
    bool inner_loops = contains_loops(b);
    run_pass("coalesce", b, bufs_, coalesce);
    run_pass("schedule", b, bufs_, [&](Block& x) { schedule(x, inner_loops); });
    run_pass("parallel_scalar_sums", b, bufs_, parallel_scalar_sums);
    run_pass("parallel_pairwise_sums", b, bufs_, parallel_pairwise_sums);  // Note [parallel pairwise sums]
    run_pass("lane_blocks", b, bufs_, lane_blocks);  // Note [lane blocks]
    run_pass("vector_math_blocks", b, bufs_, vector_math_blocks);  // Note [vector math in kernels]
    for (auto& st : b) k.body.push_back(std::move(st));
  }
  k.bufs = bufs_;
  return k;
}

// One loop nest over `space`: scope 0 (its entry), scope d+1 inside loop d; `body(idx)`
// emits the stores into the innermost scope.
Block Emitter::nest(const SymShape& space, const std::function<void(const std::vector<Lin>&)>& body) {
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

void Emitter::store(NodeRef r, const std::vector<Lin>& idx, const Val& v) {
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
bool Emitter::split_write(NodeRef n, std::vector<Block>& nests) {
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

// Forward index map of a Write's region: one Lin per base axis over atoms R<j> (region
// axes); false when the region is not a chain of index-map views of the base.
bool Emitter::region_map(NodeRef n, std::vector<Lin>& fwd) {
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

// Element offset of `idx` in the buffer holding `n` (global buffer id `g`).
Lin Emitter::offset(int g, NodeRef n, const std::vector<Lin>& idx) const {
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

Val Emitter::load(NodeRef n, const std::vector<Lin>& idx) {
  int g = st_.buffer_of.at(n);
  Lin off = offset(g, n, idx);
  Expr e{Expr::K::Load, n->dtype};
  e.buf = local_buf(g, n->dtype, false);
  e.index = off;
  DType t = n->dtype;
  return let(t, e, lin_level(off));
}

// Index of the source of view `v` for result index `idx`.
std::vector<Lin> Emitter::view_source_index(NodeRef v, const std::vector<Lin>& idx) {
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
std::vector<Lin> Emitter::strided_as_dims(NodeRef v, const std::vector<Lin>& idx) {
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

Val Emitter::value(NodeRef n, const std::vector<Lin>& idx, bool as_root) {
  bool materialised = st_.buffer_of.count(n) && !(as_root && roots_.count(n));
  if (materialised && !st_.is_input(n)) {
    if (!as_root && roots_.count(n)) throw CodegenError("internal: root read inside its own kernel");
    return load(n, idx);
  }
  // Note [materialisations found in one pass]: as if materialised, for the rest of this try.
  if (deferred_set_.count(n)) return Val::literal(npc::Scalar::from_int(0), n->dtype);
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
    if (seen.size() > 1 && st_.can_materialise(n)) {
      deferred_.push_back(n);  // Note [materialisations found in one pass]
      deferred_set_.insert(n);
      return Val::literal(npc::Scalar::from_int(0), n->dtype);
    }
  }
  Val v = compute(n, idx, key);
  return v;
}

Val Emitter::compute(NodeRef n, const std::vector<Lin>& idx, const std::string& key) {
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
      // Note [complex absolute], Note [complex product]: where NumPy runs its scalar loop
      // (scalar arithmetic, negative strides), hypot and the schoolbook product.
      const bool scalar_loop = n->params.size() > 1 && (n->params[1] & ir::Graph::kScalarLoop);
      if (scalar_loop && is_complex(n->args[0]->dtype) &&
          (op == OpId::absolute || op == OpId::multiply || op == OpId::square)) {
        if (op == OpId::square) args.push_back(args[0]);
        Expr e = helper_call(op == OpId::absolute ? Helper::ComplexAbsPlain : Helper::ComplexMulPlain, n->dtype,
                             n->args[0]->dtype, args);
        return let(n->dtype, e, lv, key);
      }
      // Note [integer scalar overflow] (include/npc/scalar_rules.hpp): NumPy's scalar integer
      // arithmetic raises "overflow" where its loops wrap silently.
      if ((n->params.size() > 1 && (n->params[1] & ir::Graph::kScalarMath)) && n->args[0]->dtype == n->dtype &&
          is_integer(n->dtype)) {
        const Helper h = op == OpId::add        ? Helper::ScalarAdd
                         : op == OpId::subtract ? Helper::ScalarSub
                         : op == OpId::multiply ? Helper::ScalarMul
                         : op == OpId::negative ? Helper::ScalarNeg
                         : op == OpId::absolute ? Helper::ScalarAbs
                                                : Helper::kCount;
        if (h != Helper::kCount) return let(n->dtype, helper_call(h, n->dtype, n->dtype, args), lv, key);
      }
      // Note [maximum ties in kernels]
      // NumPy 2.5 (x86-64, its AVX2 and AVX512 loops alike) runs float32/float64
      // maximum/minimum with its SIMD loop for every elementwise call: contiguous, strided,
      // reversed, broadcast and 0-d operands (overlapping ones are copied first), measured.
      // A tie of 0.0 and -0.0 gives the second operand there (npk::maxv_vec), the first in
      // its scalar loop (npk::maxv, the op's entry point, which float16 also runs). Eager
      // npc registers the SIMD rule for these loops (MaximumVec in src/ops/kernels_arith.cpp);
      // reductions are the reduction emitter's (a NaN flag and quiet lanes).
      if ((op == OpId::maximum || op == OpId::minimum) && !scalar_loop &&
          (n->dtype == DType::Float32 || n->dtype == DType::Float64) && n->args[0]->dtype == n->dtype) {
        Expr e = helper_call(op == OpId::maximum ? Helper::MaxSimd : Helper::MinSimd, n->dtype, n->dtype, args);
        return let(n->dtype, e, lv, key);
      }
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

Val Emitter::prim(NodeRef n, const std::vector<Lin>& idx, const std::string& key) {
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

// Functionalized write (graph.hpp Note [writes]) as a select on the region's index set.
Val Emitter::write(NodeRef n, const std::vector<Lin>& idx) {
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
}  // namespace npc::fusion
