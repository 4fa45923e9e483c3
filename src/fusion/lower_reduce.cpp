// Reductions, argmin/argmax and scans in the kernel emitter: accumulators, blocked and
// row-order float sums, the lane reductions and split reductions of the schedule.
//
// Note [summation]
// A float sum over the last axis alone, where that axis is the memory-innermost one of
// NumPy's iteration (a contiguous or strided run of each output: x.sum(), np.mean(x),
// x.sum(axis=-1), softmax's e.sum(axis=-1)), adds in NumPy's order, so the result is NumPy's
// bit for bit: NumPy's reduce loop computes `out = out + pairwise_sum(run)` from the
// identity (or initial=), over the whole run (contiguous and strided runs alike, measured
// with NumPy 2.5: no blocks of the 8192-element buffer there), and pairwise_sum is below 8
// elements a running sum from -0.0, up to 128 eight accumulators over elements 8 apart
// added as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) then the tail, and above that the two
// halves split at n/2 rounded down to a multiple of 8 (loops_utils.h.src). float16 runs
// sum in float, as NumPy's HALF pairwise_sum does, and round once. The loop is marked
// LaneReduce::Pairwise; the renderer (render_pairwise in emit_cpp.cpp) cuts NumPy's tree
// into chunks of at most npk::kPairwiseChunk elements, computes each chunk's values into a
// local array, sums it with the prelude's copy of pairwise_sum and adds the chunk sums as
// the tree does (prelude_cpu.hpp). The 8 accumulators are 8 lanes, which GCC vectorizes; the
// values of a chunk are computed by a plain vectorizable loop. Such a sum to a single value
// runs on one thread (red_ordered): thread partials would add in another order. Rows of a
// row sum are independent outputs, so the parallel loop over rows does not change any bit.
// Static runs below 8 are unrolled in order (Note [small reductions]); runtime lengths take
// the pairwise loop at any length, so a retrace at a new size keeps NumPy's association.
//
// A sum over several axes that NumPy adds as one run (its iterator merges them: x.sum() of a
// contiguous 2-D array) is the same pairwise loop over a merged index (Note [one pairwise
// run]). Other float sums (over several axes, outer axes, or a transposed view) are deterministic
// for a given build and accurate: the innermost reduced loop runs in blocks (256 elements
// for float32, 2048 for float64), each summed in SIMD lanes (an omp simd reduction), and
// the block sums are added in order, so the error grows with the number of blocks, not the
// number of elements. Long float32 sums accumulate in double, blocks included: a block of
// equal float32 values summed in float lanes is off by a few ULPs in the same direction in
// every block (how many depends on the lane count, so on the CPU), which adds up. float16
// sums and products round where NumPy's do (Note [float16 reductions]).
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

// A sum's own cast of its input (Note [buffered reduction casts] in src/tracer/trace_hooks.cpp),
// under the views that lay it out for the reduction: NumPy adds it in pieces of 8192.
bool buffered_cast(NodeRef src) {
  while (src->kind == NodeKind::View) src = src->args[0];
  return src->kind == NodeKind::Cast && !src->params.empty() &&
         op_info(static_cast<OpId>(src->params[0])).kind == OpKind::Reduce;
}

// Whether generated code reduces with ufunc `op` in dtype `t`: the fused column of the op's
// reduction row in ops.def.
bool reduce_supported(OpId op, DType t) {
  const char k = t == DType::Bool ? 'b' : is_complex(t) ? 'c' : kind(t) == Kind::Float ? 'f' : 'i';
  const OpInfo* r = reduction_row(op);
  return r && r->fused.find(k) != std::string_view::npos;
}

// Note [complex products in reductions]
// NumPy multiplies complex numbers with two formulas (Note [complex product] in
// src/ops/kernels_arith.cpp): its SIMD loop's (npk::mul: re = fma(ar, br, -(ai*bi)), im =
// fma(ar, bi, ai*br)) and its scalar loop's (npk::mul_plain: ar*br - ai*bi, ar*bi + ai*br,
// each product rounded). They differ only where a product overflows ((-inf + nan j) against
// (-inf + inf j)). A reduction over the innermost axis of NumPy's iteration calls the loop as a
// reduce (output stride 0), which runs the scalar formula: np.prod(x), prod(x, axis=-1).
// A reduction over outer axes multiplies whole rows into the output with the SIMD loop. An
// accumulate (cumprod) calls the loop on overlapping operands, which runs the scalar formula,
// except along an axis of two elements (one product: the SIMD loop, or for complex64 the
// scalar one when the input runs backwards, as eager npc's accumulate picks; steps_backwards).
// The innermost axis of the iteration is the source's axis that is innermost in memory,
// followed through transposes, slices and strided views of the argument
// (memory_inner_axis); a computed source is C-ordered. The reduce loop's (output stride 0)
// scalar formula is NumPy's for every length: its SIMD loop refuses a zero output stride
// (loops_arithm_fp.dispatch.c.src), and the outer-axis reduce of the buffered iterator
// (npyiter_find_buffering_setup) calls the loop on whole rows (strides of the row), so the
// SIMD formula there is NumPy's at any number of rows: np.prod(x, axis=0) equals
// np.multiply(out, x[k], out=out) for k in order from ones, NaN bits included (Note [NaNs
// of the complex product] in include/npc/scalar_rules.hpp). Products of inexact values are
// never split over threads (Note [parallel scalar reductions] in kir_passes.cpp).

// The axis of `n` that is innermost in memory, as far as its views tell (the last axis of a
// computed value or an argument).
static int memory_inner_axis(NodeRef n) {
  if (n->kind != NodeKind::View) return n->ndim() - 1;
  if (n->view_kind() == ViewKind::Strided && n->args[0]->kind != NodeKind::View) {
    // Element strides over a C-ordered source: the smallest nonzero one (the last of equals).
    int inner = -1;
    int64_t best = 0;
    for (int d = 0; d < n->ndim(); ++d) {
      const int64_t s = std::abs(n->params.at(2 + d));
      if (s == 0 || (n->shape[d].is_static() && n->shape[d].value() <= 1)) continue;
      if (inner < 0 || s <= best) inner = d, best = s;
    }
    return inner < 0 ? n->ndim() - 1 : inner;
  }
  if (n->ndim() != n->args[0]->ndim()) return n->ndim() - 1;
  if (n->view_kind() == ViewKind::Slice) return memory_inner_axis(n->args[0]);
  if (n->view_kind() == ViewKind::Permute) {
    const int inner = memory_inner_axis(n->args[0]);
    for (int k = 0; k < n->ndim(); ++k)
      if (n->params[1 + k] == inner) return k;
  }
  return n->ndim() - 1;
}

// Whether `n` steps backwards in memory along `axis`, as far as its views tell (a reversed
// slice, or a Strided view with a negative stride over a computed value or an argument).
static bool steps_backwards(NodeRef n, int axis) {
  if (n->kind != NodeKind::View) return false;
  NodeRef src = n->args[0];
  switch (n->view_kind()) {
    case ViewKind::Slice:
      if (src->ndim() != n->ndim()) return false;
      return (n->params[2 + 2 * axis] < 0) != steps_backwards(src, axis);
    case ViewKind::Permute: return steps_backwards(src, static_cast<int>(n->params[1 + axis]));
    case ViewKind::Strided: return src->kind != NodeKind::View && n->params.at(2 + axis) < 0;
    default: return false;
  }
}

// Note [one pairwise run]
// NumPy's reduction iterator orders the operand's axes by their strides (largest outside,
// compared by magnitude, size-1 axes dropped) and merges neighbours whose strides chain
// (outer stride == inner stride * inner extent, signs included: a reversed axis is walked
// in its own order, never flipped). When the reduced axes are the innermost ones of that
// order and merge into one, each output is `out + pairwise_sum(run)` over the merged run,
// at any length: x.sum() of a C- or F-contiguous array, x.sum(axis=(1, 2)) of a C-ordered
// one, np.mean(x) are NumPy's 1-D pairwise sum of the data in memory order (measured with
// NumPy 2.5 up to 10^6 elements, float16/32/64). A full reduction whose axes do not merge
// (a slice, a reversed or stepped view) is copied into NumPy's buffer first: up to its 8192
// elements it is one run over the buffer, in the iterator's axis order. Such a reduction
// is lowered as one LaneReduce::Pairwise loop over a merged index (Note [summation]), the
// axis indices recovered by division (they cancel in the offset of a contiguous operand).
// Other multi-axis float sums keep their runs (Note [runs of a multi-axis sum]).
// The layout is what the graph says: arguments and their views (slices, transposes,
// strided views, broadcasts), computed values C-ordered (NumPy may lay out the result of an
// elementwise op on a transposed argument in that argument's memory order, docs/fusion.md,
// known gaps). Symbolic extents are taken for computed values, arguments and their
// transposes only (their strides chain whatever the sizes); a buffered run needs static ones.

// Element strides of `n` as NumPy holds it (Note [one pairwise run]); symbolic extents
// count as 3 (only where the order of the strides does not depend on them). False when
// unknown.
static bool numpy_strides(NodeRef n, std::vector<int64_t>& st, bool& symbolic) {
  const int nd = n->ndim();
  auto ext = [&](const Dim& d) {
    if (d.is_static()) return d.value();
    symbolic = true;
    return int64_t{3};
  };
  st.assign(nd, 0);
  if (n->kind != NodeKind::View) {
    int64_t c = 1;
    for (int d = nd - 1; d >= 0; --d) {
      st[d] = c;
      c *= std::max<int64_t>(ext(n->shape[d]), 1);
    }
    return true;
  }
  NodeRef src = n->args[0];
  std::vector<int64_t> s;
  if (n->view_kind() == ViewKind::Strided) {
    if (src->kind == NodeKind::View) return false;
    for (int d = 0; d < nd; ++d) st[d] = n->params.at(2 + d);
    for (auto& d : n->shape) ext(d);
    for (auto& d : src->shape) ext(d);
    return !symbolic;
  }
  if (!numpy_strides(src, s, symbolic)) return false;
  switch (n->view_kind()) {
    case ViewKind::Permute:
      for (int k = 0; k < nd; ++k) st[k] = s.at(n->params[1 + k]);
      return true;
    case ViewKind::Slice:
      if (symbolic || src->ndim() != nd) return false;
      for (int d = 0; d < nd; ++d) st[d] = s[d] * n->params[2 + 2 * d];
      return true;
    case ViewKind::Component:
      for (int d = 0; d < nd; ++d) st[d] = 2 * s[d];
      return !symbolic;
    case ViewKind::Broadcast: {
      if (symbolic) return false;
      const int lead = nd - src->ndim();
      for (int j = 0; j < src->ndim(); ++j)
        st[lead + j] = src->shape[j].is_static() && src->shape[j].value() == 1 ? 0 : s[j];
      return true;
    }
    case ViewKind::Reshape: {  // a view of a C-contiguous source (NumPy copies others)
      // Size-1 axes inserted or removed: the other axes keep their strides.
      auto one = [](const Dim& d) { return d.is_static() && d.value() == 1; };
      std::vector<int> a, b;
      for (int d = 0; d < src->ndim(); ++d) if (!one(src->shape[d])) a.push_back(d);
      for (int d = 0; d < nd; ++d) if (!one(n->shape[d])) b.push_back(d);
      bool same = a.size() == b.size();
      for (size_t i = 0; same && i < a.size(); ++i) same = src->shape[a[i]] == n->shape[b[i]];
      if (same) {
        for (size_t i = 0; i < a.size(); ++i) st[b[i]] = s[a[i]];
        return true;
      }
      if (symbolic) return false;
      for (auto& d : n->shape)
        if (!d.is_static()) return false;
      int64_t c = 1;
      for (int d = src->ndim() - 1; d >= 0; --d) {
        const int64_t e = src->shape[d].value();
        if (e != 1 && s[d] != c) return false;
        c *= e;
      }
      c = 1;
      for (int d = nd - 1; d >= 0; --d) {
        st[d] = c;
        c *= std::max<int64_t>(n->shape[d].value(), 1);
      }
      return true;
    }
    default: return false;
  }
}

// The reduced axes of Reduce `n`, outermost first, when NumPy adds them as one pairwise run
// per output (Note [one pairwise run]); empty otherwise. Float sums over two or more axes.
std::vector<int> single_run_axes(NodeRef n) {
  if (n->kind != NodeKind::Reduce || n->op != OpId::add || kind(n->dtype) != Kind::Float) return {};
  if (n->params.size() < 3) return {};
  NodeRef src = n->args[0];
  const std::set<int64_t> axes(n->params.begin() + 1, n->params.end());
  std::vector<int64_t> st;
  bool symbolic = false;
  if (!numpy_strides(src, st, symbolic)) return {};
  std::vector<int> order;  // non-size-1 axes, largest stride first
  int64_t total = 1;
  for (int d = 0; d < src->ndim(); ++d) {
    const Dim& dim = src->shape[d];
    if (dim.is_static() && dim.value() == 0 && axes.count(d)) return {};
    if (dim.is_static() && dim.value() == 1) continue;
    if (st[d] == 0) return {};
    order.push_back(d);
    total *= dim.is_static() ? dim.value() : 1;
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return std::abs(st[a]) > std::abs(st[b]); });
  for (size_t k = 1; k < order.size(); ++k)
    if (std::abs(st[order[k - 1]]) == std::abs(st[order[k]])) return {};
  size_t first = order.size();
  while (first > 0 && axes.count(order[first - 1])) --first;
  for (size_t k = 0; k < first; ++k)
    if (axes.count(order[k])) return {};  // a kept axis inside the reduced ones
  std::vector<int> run(order.begin() + static_cast<std::ptrdiff_t>(first), order.end());
  bool chained = true;
  for (size_t k = 1; k < run.size(); ++k) {
    const Dim& inner = src->shape[run[k]];
    chained = chained && st[run[k - 1]] == st[run[k]] * (inner.is_static() ? inner.value() : 3);
  }
  if (chained) return run;
  // Not merged: one buffer of NumPy's iterator holds the whole operand.
  if (first == 0 && !symbolic && total <= 8192) return run;
  return {};
}

// Note [products in memory order]
// A float or complex product depends on the order of its factors. NumPy's iterator visits the
// reduced axes in the order of the operand's strides (largest outside; zero strides, and the
// output's zero strides along reduced axes, take no part in the comparison: an insertion
// sort that keeps C order between axes it cannot compare), so np.prod(x) of an F-ordered x
// multiplies in memory order. The reduction loops nest in that order: `reduced` (axes of
// `src`) and their loop variables `rvars` are permuted together, by magnitude of stride,
// stable; nothing changes where the strides are unknown or an axis is broadcast.
static void memory_order(NodeRef src, std::vector<int>& reduced, std::vector<std::string>& rvars) {
  if (reduced.size() < 2 || reduced.size() != rvars.size()) return;
  std::vector<int64_t> st;
  bool symbolic = false;
  if (!numpy_strides(src, st, symbolic)) return;
  std::vector<size_t> perm(reduced.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    if (st.at(reduced[i]) == 0) return;
    perm[i] = i;
  }
  std::stable_sort(perm.begin(), perm.end(),
                   [&](size_t a, size_t b) { return std::abs(st[reduced[a]]) > std::abs(st[reduced[b]]); });
  std::vector<int> r2;
  std::vector<std::string> v2;
  for (size_t i : perm) {
    r2.push_back(reduced[i]);
    v2.push_back(rvars[i]);
  }
  reduced = std::move(r2);
  rvars = std::move(v2);
}

// Note [float16 reductions]
// NumPy's float16 add and multiply loops compute in float and round every result to float16;
// a reduce loop (the inner loop walks a reduced axis, the output stays put) accumulates its
// whole run in float and rounds once when it returns. Which loop runs depends on the inner
// axis of NumPy's iteration, the last axis of a C-ordered operand once size-1 axes are
// dropped (and the trailing reduced axes coalesced):
// - that axis reduced, and every other reduced axis with it in the trailing run (x.sum(),
//   x.sum(axis=-1), axis=(1, 2) of a 3-D array): one run per output, rounded once (Once);
// - that axis kept (x.sum(axis=0) of a 2-D array, an outer-axis sum): every step is an
//   elementwise add into the output, rounded to float16 (EveryStep); 2048 + 1 + 1 stays 2048
//   and 4e4 + 4e4 overflows to inf ("overflow encountered in reduce"), as in NumPy;
// - both (axis=(0, 2) of a 3-D array): one rounding per inner run (PerInnerRun); the kernel
//   does not generate this one, the node runs as npc's eager reduction (a host call).
// Computed values are modelled as C-ordered; a view NumPy walks in another memory order (a
// transposed input) may round at other steps (docs/fusion.md, known gaps).
HalfRounding half_rounding(NodeRef n) {
  if (n->kind != NodeKind::Reduce || n->dtype != DType::Float16 || (n->op != OpId::add && n->op != OpId::multiply))
    return HalfRounding::Once;
  if (!single_run_axes(n).empty()) return HalfRounding::Once;  // Note [one pairwise run]
  NodeRef src = n->args[0];
  const std::set<int64_t> axes(n->params.begin() + 1, n->params.end());
  std::vector<bool> reduced;  // per axis of a size other than 1, in order
  for (int d = 0; d < src->ndim(); ++d)
    if (!(src->shape[d].is_static() && src->shape[d].value() == 1)) reduced.push_back(axes.count(d) > 0);
  if (reduced.empty() || !reduced.back()) return reduced.empty() ? HalfRounding::Once : HalfRounding::EveryStep;
  size_t k = reduced.size();
  while (k > 0 && reduced[k - 1]) --k;
  for (size_t d = 0; d < k; ++d)
    if (reduced[d]) return HalfRounding::PerInnerRun;
  return HalfRounding::Once;
}

// Note [scans in kernels]
// cumsum/cumprod (Prim cumsum/cumprod over the input cast to the loop dtype, Note [traced
// scans and sorts] in src/tracer/trace_hooks.cpp) are generated, not called: a loop nest over
// the other axes (the outermost of them parallel) around a sequential loop along the scan
// axis that carries the running value in a local and stores every step. NumPy's
// accumulate is the same sequential recurrence, out[0] = x[0], out[k] = out[k-1] op x[k],
// with the binary op's rounding at every step (float16 included; complex products as its
// scalar loop computes them), so the results are bit-identical; integers wrap. The producer of x is inlined into the scan
// loop; the scan is always materialised (consumers load it), in a kernel of its own.
Block Emitter::scan(NodeRef n) {
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
    // Note [complex products in reductions]: the scalar product, or NumPy's SIMD one for an
    // axis of two elements (unless the input runs backwards along it).
    if (op == OpId::multiply && is_complex(t)) {
      const Dim& ext = n->shape[axis];
      // complex64 only: NumPy's complex128 product stays vectorised for negative strides
      // (by_overlap in src/ops/kernels_arith.cpp).
      const bool backwards = t == DType::Complex64 && steps_backwards(src, static_cast<int>(axis));
      const Expr plain = helper_call(Helper::ComplexMulPlain, t, t, {Val{acc, t}, v});
      if (backwards || (ext.is_static() && ext.value() != 2)) {
        step.expr = plain;
      } else if (!ext.is_static()) {
        // A runtime extent: both products, the SIMD one where the extent is 2.
        Val simd_v = let(t, step.expr, static_cast<int>(stack_.size()) - 1);
        Val plain_v = let(t, plain, static_cast<int>(stack_.size()) - 1);
        Expr two{Expr::K::InRange, DType::Bool};
        two.index = dim_lin(ext);
        two.params = {2, 1, 1};
        Val is_two = let(DType::Bool, two, 0);
        step.expr = select_expr(is_two, simd_v, plain_v);
      }
    }
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

// Note [row-order outer sums]
// A float sum over the rows of a 2-D array (`x.sum(axis=0)`, the last axis kept) adds each
// column in row order (Note [outer-axis sums]); as one loop nest per output element that
// walks a column, every load is a new cache line. When the sum is a kernel of its own
// (up to 8192 rows, where it is one running sum per column), it is emitted in NumPy's own
// order instead: row 0 initialises the output row (0 + x[0, c]), then each following row
// is added into it, in blocks of 256 columns (the parallel loop; each block's output stays
// in L1) with the rows in order inside a block. Every output element sees the same
// additions in the same order as before, so the bits do not change.
bool Emitter::row_order_sum(NodeRef n, std::vector<Block>& nests) {
  if (n->kind != NodeKind::Reduce || n->op != OpId::add || n->value.has_value()) return false;
  const DType t = n->dtype;
  NodeRef src = n->args[0];
  if ((t != DType::Float32 && t != DType::Float64) || src->dtype != t || src->ndim() != 2) return false;
  if (n->params.size() != 2 || n->params[1] != 0) return false;
  if (!src->shape[0].is_static() || !src->shape[1].is_static()) return false;
  const int64_t rows = src->shape[0].value(), cols = src->shape[1].value();
  if (rows < 2 || rows > 8192 || cols < 1) return false;
  // It reads the source at row 0 and at row r: a computed source would be materialised
  // (Note [fusion]); the general loop nest computes it in place, in lane blocks when the
  // rows are wide (Note [lane blocks]).
  if (src->kind != NodeKind::Input && !st_.buffer_of.count(src)) return false;
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

// Source index of a reduction and the placement level (Note [placement]).
std::vector<Lin> Emitter::reduced_index(NodeRef src, const std::vector<Lin>& idx, const std::set<int64_t>& axes, bool keepdims,
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

int Emitter::placement(const std::vector<Lin>& idx, NodeRef n, bool as_root) {
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

Val Emitter::reduce(NodeRef n, const std::vector<Lin>& idx, const std::string& key) {
  NodeRef src = n->args[0];
  bool keepdims = n->params[0] != 0;
  std::set<int64_t> axes(n->params.begin() + 1, n->params.end());
  if (!reduce_supported(n->op, n->dtype)) throw CodegenError("unsupported reduction");
  std::vector<std::string> rvars;
  std::vector<Lin> sidx = reduced_index(src, idx, axes, keepdims, rvars);
  // Note [one pairwise run]: one loop over the merged index of the run's axes.
  const std::vector<int> run_axes = single_run_axes(n);
  const bool merged = !run_axes.empty();
  if (merged) rvars.resize(1);
  int lv = placement(idx, n, false);
  DType t = n->dtype;
  // float16 accumulates in float and rounds where NumPy rounds (Note [float16 reductions]).
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
  const bool outer_only = float_add && !axes.empty() && !axes.count(src->ndim() - 1) && !merged;
  // Note [summation]: NumPy's pairwise order for a sum over the last axis alone, when that axis
  // is the memory-innermost one of NumPy's iteration (a reduce loop over it) and has 8 or
  // more elements (or a runtime count; fewer static ones are unrolled in order below).
  const bool pairwise = merged || (float_add && axes.size() == 1 && *axes.begin() == src->ndim() - 1 &&
                                   memory_inner_axis(src) == src->ndim() - 1 &&
                                   half_rounding(n) == HalfRounding::Once && (last_ext < 0 || last_ext >= 8));
  bool wide_acc = float_add && t == DType::Float32 && (last_ext < 0 || last_ext > 256) && !outer_only && !pairwise;
  // Note [complex64 sums]
  // Complex sums add one element at a time (no pairwise tree or blocks of SIMD lanes for
  // complex values): a running complex64 sum of a million elements was off by 1e-2 of the
  // result (np.full(1_100_000, 0.1 + 0.1j, np.complex64).sum()), where NumPy's pairwise sum
  // is within a few ULPs. A complex64 sum that reduces the last axis over more than 256
  // elements per output (or a runtime count) accumulates in complex128 and rounds once at the
  // end, more accurate than NumPy's tree. The others keep the running sum: a sum over outer
  // axes only (`z.sum(axis=0)`) is NumPy's own running sum, row by row in complex64, bit for
  // bit; short static ones are NumPy's order below four elements (its pairwise sum counts the
  // real and imaginary parts, a running sum below 8 of them). Where NumPy's order overflows
  // a partial sum that the exact sum does not (3e38 + 3e38 - 3e38 - 3e38), the complex128
  // accumulator gives the finite sum without NumPy's warning, and a short sum of a runtime
  // count may differ from NumPy's running sum in the last bit (strict xfails in
  // tests/python/test_fusion_complex_sums.py). complex128 running sums lose at most n ULPs
  // (3e-11 of the result at 1.1M elements) and stay as they are.
  int64_t reduced_count = 1;  // elements per output, -1 for a runtime count
  for (int64_t a : axes) {
    const int64_t e = static_extent(src->shape[a]);
    reduced_count = e < 0 || reduced_count < 0 ? -1 : reduced_count * e;
  }
  const bool wide_complex = op == OpId::add && t == DType::Complex64 && axes.count(src->ndim() - 1) &&
                            (reduced_count < 0 || reduced_count > 256);
  const DType wide_t = wide_acc ? DType::Float64 : wide_complex ? DType::Complex128 : t;
  if (wide_complex) init = Val::literal(init.lit, wide_t);  // 0 or initial=, already rounded to complex64
  {
    Stmt s{Stmt::K::Decl};
    s.var = acc;
    s.dtype = wide_t;
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
  if (!merged && op == OpId::multiply && is_inexact(t)) memory_order(src, reduced, rvars);
  std::vector<Lin> rext;  // the extent of each reduction loop
  if (merged) {
    Lin total = Lin::constant(1);
    for (int d : run_axes)
      total = src->shape[d].is_static() ? total.scaled(src->shape[d].value())
                                        : total.times_atom("sym[" + std::to_string(src->shape[d].symbol()) + "]");
    rext.push_back(total);
  } else {
    for (int d : reduced) rext.push_back(dim_lin(src->shape[d]));
  }
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
  if (merged) {
    // The run's axis indices from the merged one, innermost first: i = q % e, q = q / e.
    const int rl = static_cast<int>(stack_.size()) - 1;
    for (int d : reduced) sidx[d] = Lin::constant(0);  // size-1 axes
    Lin q = Lin::atom(rvars[0]);
    for (size_t k = run_axes.size(); k-- > 1;) {
      const Dim& e = src->shape[run_axes[k]];
      Val qn;
      if (e.is_static()) {
        Expr div{Expr::K::Index, DType::Int64};
        div.index = q;
        div.params = {e.value()};
        qn = let(DType::Int64, div, rl);
        sidx[run_axes[k]] = q + Lin::atom(qn.text, -e.value());
      } else {
        const std::string sym = "sym[" + std::to_string(e.symbol()) + "]";
        Expr qe{Expr::K::Index, DType::Int64}, se{Expr::K::Index, DType::Int64};
        qe.index = q;
        se.index = Lin::atom(sym);
        Expr div{Expr::K::Apply, DType::Int64};
        div.op = OpId::floor_divide;
        div.in = DType::Int64;
        div.args = {let(DType::Int64, qe, rl), let(DType::Int64, se, 0)};
        qn = let(DType::Int64, div, rl);
        sidx[run_axes[k]] = q + Lin::atom(qn.text).times_atom(sym).scaled(-1);
      }
      q = Lin::atom(qn.text);
    }
    sidx[run_axes[0]] = q;
  }
  // Body.
  Val v = value(src, sidx);
  std::string target = acc;
  int64_t inner_ext = merged ? (rext[0].is_const() ? rext[0].c : -1) : static_extent(src->shape[reduced.back()]);
  // Note [outer-axis sums]: a float sum over outer axes only (the last axis kept) is a
  // running sum per output element in NumPy (it adds whole rows into the output in order).
  // Within blocks of NumPy's buffer size (8192) npc adds in that order too (no SIMD lanes),
  // so rows up to 8192 give NumPy's bits; longer runs add the blocks' partial sums, so a
  // sum over millions of rows is never one running sum.
  const bool outer_seq = outer_only && !numpy_order;
  const int64_t block = outer_seq ? 8192 : t == DType::Float64 ? 2048 : 256;
  // float16 sums that NumPy rounds at every step (Note [float16 reductions]) run in order.
  const bool round_steps = half_rounding(n) == HalfRounding::EveryStep;
  if (half_rounding(n) == HalfRounding::PerInnerRun) throw CodegenError("float16 reduction rounded per inner run");
  if (float_add && !round_steps && !pairwise && (inner_ext < 0 || inner_ext > block)) blocked = true;
  // Note [runs of a multi-axis sum]: a float sum over several axes sums each run of the
  // innermost reduced axis on its own and adds the runs' sums in order, as NumPy's reduce
  // loop adds the pairwise sum of each inner run into the output. One running sum over every
  // element (the short axes unrolled) lost a rounding per element: var(axis=(0, 2)) of a
  // (7, 4, 6) array was 9 ULPs off the exact value where NumPy is within one. float16 keeps
  // one accumulator, in float, rounded once (Note [float16 reductions]).
  const bool runs = float_add && t != DType::Float16 && !blocked && !numpy_order && !outer_seq && !round_steps &&
                    rvars.size() > 1;
  if (blocked || runs) target = part = fresh("part");
  // Note [parallel scalar reductions]: acc op partial, for the partials of a split loop
  // (its two operands are filled in by the renderer).
  const DType acc_t = wide_t;
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
      if (round_steps) s.expr = helper_call(Helper::RoundHalf, t, t, {let(t, s.expr, static_cast<int>(stack_.size()) - 1)});
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
      // Note [complex products in reductions]: NumPy's reduce loop (the memory-innermost
      // axis reduced) multiplies with its scalar formula.
      if (op == OpId::multiply && is_complex(t) && axes.count(memory_inner_axis(src)))
        a = helper_call(Helper::ComplexMulPlain, t, t, {Val{target, t}, v});
      if (wide_complex) {  // Note [complex64 sums]
        Expr widen{Expr::K::Cast, acc_t};
        widen.in = t;
        widen.args = {v};
        a.dtype = a.in = acc_t;
        a.args = {Val{target, acc_t}, let(acc_t, widen, static_cast<int>(stack_.size()) - 1)};
      }
      s.expr = a;
      combine = a;
      combine.args = operands;
      if (t == DType::Float16) {  // accumulate float16 in float (Note [float16 reductions])
        s.expr = helper_call(float16_step(op), t, t, {Val{target, t}, v});
        combine = helper_call(float16_step(op), t, t, operands);
        if (round_steps) s.expr = helper_call(Helper::RoundHalf, t, t, {let(t, s.expr, static_cast<int>(stack_.size()) - 1)});
      }
    }
    stack_.back()->stmts.push_back(std::move(s));
  }
  // Close loops from the inside out: the body of loop i is scope i's statements + loop i+1.
  Block inner = std::move(stack_.back()->stmts);
  for (int i = static_cast<int>(rvars.size()) - 1; i >= 0; --i) {
    Lin hi = rext[i];
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
      if (innermost && float_add && !numpy_order && !outer_seq && !round_steps) {
        loop.simd = true;
        loop.lane_op = pairwise ? LaneReduce::Pairwise : LaneReduce::Add;
        loop.lane_acc = target;
        loop.dtype = t;
        if (pairwise && buffered_cast(src)) loop.pairwise_block = 8192;  // Note [buffered reduction casts]
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
      loop.red_identity = float_add || wide_complex ? Val::literal(npc::Scalar::from_int(0), acc_t) : identity;
      loop.red_combine = combine;
      loop.red_flag = nanflag;
      // A pairwise sum runs on one thread: thread partials would add in another order.
      loop.red_ordered = (op == OpId::multiply && is_inexact(t)) || pairwise;
    }
    inner = i > 0 ? std::move(rscopes[i - 1]->stmts) : Block{};
    if (innermost && runs) {  // part = 0; for (r in run) part += v; acc += part
      Stmt pd{Stmt::K::Decl};
      pd.var = part;
      pd.dtype = acc_t;
      pd.expr = value_expr(Val::literal(npc::Scalar::from_int(0), t));
      inner.push_back(std::move(pd));
      inner.push_back(std::move(loop));
      Stmt addp{Stmt::K::Assign};
      addp.var = acc;
      addp.expr = helper_call(Helper::PlainAdd, t, acc_t, {Val{acc, acc_t}, Val{part, acc_t}});
      inner.push_back(std::move(addp));
      continue;
    }
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
  if (wide_acc || wide_complex) {
    Expr e{Expr::K::Cast, t};
    e.in = acc_t;
    e.args = {Val{acc, acc_t}};
    result = let(t, e, lv);
  }
  if (t == DType::Float16) result = let(t, helper_call(Helper::RoundHalf, t, t, {Val{acc, t}}), lv);
  stack_[lv]->memo[key] = result;
  return result;
}

// The step of a float16 accumulator, computed in float without rounding.
Helper Emitter::float16_step(OpId op) {
  switch (op) {
    case OpId::add: return Helper::PlainAdd;
    case OpId::maximum: return Helper::Max;
    case OpId::minimum: return Helper::Min;
    default: return Helper::PlainMul;
  }
}

Val Emitter::argreduce(NodeRef n, const std::vector<Lin>& idx, const std::string& key) {
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
}  // namespace npc::fusion
