// ufunc.reduce: the iteration plan that follows NumPy's reduction order (the buffered
// iterator's axis order, coalescing and buffer pieces), the copies laid out in that order,
// and the gathering of a block's elements (ops/reduce_exec.hpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "npc/creation.hpp"
#include "ops/reduce_exec.hpp"

namespace npc::reduction {

// Note [NumPy reduction order]
// NumPy (2.3 and later, whose iterator buffer setup the rules below follow; the project
// pins 2.5) reduces with a buffered iterator (numpy/_core/src/umath/reduction.c): operands out
// (allocated, stride 0 along reduced axes), input and the where= mask; flags BUFFERED,
// EXTERNAL_LOOP, GROWINNER, DONT_NEGATE_STRIDES; buffersize 8192. Each call of the inner
// loop with an output stride of 0 is float add's "binary reduce": out += pairwise(count
// elements) (loops_utils.h.src, 8 accumulators, blocks of 128); any other call adds element
// by element. So the bits depend only on which elements each call gets, which follows from
//  1. axis order: a stable insertion sort of the axes by |stride| of input and mask, the
//     last C axis innermost (npyiter_find_best_axis_ordering); a comparison with a zero
//     stride (broadcast, size 1) is ambiguous and skipped. Axes are never flipped: a
//     reversed axis is walked backwards in memory (logical order).
//  2. coalescing: neighbouring axes merge when every operand's strides chain (for the
//     output: both reduced or both kept); size-1 axes vanish (npyiter_coalesce_axes).
//  3. the buffer setup (npyiter_find_buffering_setup): growing a "core" of inner dims while
//     the operands keep one stride, weighing (1 + buffered operands) / buffered size; an
//     operand is buffered when it is cast (sum(dtype=...), mean of float16 or ints) or not
//     one stride over the core. The outer dim of the core ends where the output turns from
//     reduced to kept ("reduce outer dim").
// From these, for an output element whose innermost dims are reduced: its elements form
// blocks (the core dims, all reduced, one block per index of the other reduced dims, in
// iteration order), each block is summed in pieces of `piece` elements (the buffer size, a
// multiple of the inner core dims when the iterator buffers, else the whole block), and
// the output adds each piece's pairwise sum in turn; with where=, each run of true mask
// values within a piece is its own call (NumPy's masked loop). When the innermost dim is
// kept, every output element adds its elements one at a time in iteration order (masked
// elements hold the identity there). The rules were checked bit for bit against NumPy on
// thousands of random shapes, views, axes, dtypes and masks
// (tests/numpy_conformance/test_reduction_order.py).
ReducePlan numpy_reduce_plan(const Shape& shape, const Strides& st, const Strides* mst, const std::vector<bool>& red,
                             bool cast, bool out_cast) {
  constexpr int64_t kBuf = 8192;  // NPY_BUFSIZE
  const int nd = static_cast<int>(shape.size());
  const int nin = mst ? 2 : 1;
  auto sin = [&](int ax, int k) -> int64_t {
    if (shape[ax] == 1) return 0;
    return k == 0 ? st[ax] : (*mst)[ax];
  };
  // 1. NumPy's insertion sort; the axis data start in reversed C order (innermost first).
  std::vector<int> perm(nd);
  for (int i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  for (int i0 = 1; i0 < nd; ++i0) {
    int ipos = i0;
    const int a0 = perm[i0];
    for (int i1 = i0 - 1; i1 >= 0; --i1) {
      const int a1 = perm[i1];
      bool ambig = true, swap = false;
      for (int k = 0; k < nin; ++k) {
        const int64_t s0 = sin(a0, k), s1 = sin(a1, k);
        if (s0 != 0 && s1 != 0) {
          if (std::abs(s1) <= std::abs(s0)) swap = false;
          else if (ambig) swap = true;
          ambig = false;
        }
      }
      if (!ambig) {
        if (swap) ipos = i1;
        else break;
      }
    }
    if (ipos != i0) {
      for (int i1 = i0; i1 > ipos; --i1) perm[i1] = perm[i1 - 1];
      perm[ipos] = a0;
    }
  }
  ReducePlan plan;
  for (int ax : perm)
    if (shape[ax] > 1) plan.order.push_back(ax);
  // 2. Coalesce. Operand strides per dim: [out, input, mask]; the output is dense over kept
  // axes in iteration order (in elements; only the chaining matters).
  struct D {
    int64_t n;
    int64_t s[3];
    bool red;
    int inner;
  };
  std::vector<D> v;
  int64_t ostride = 1;
  for (int ax : plan.order) {
    D d{shape[ax], {red[ax] ? 0 : ostride, sin(ax, 0), mst ? sin(ax, 1) : 0}, static_cast<bool>(red[ax]), ax};
    if (!red[ax]) ostride *= shape[ax];
    if (!v.empty()) {
      D& c = v.back();
      bool ok = true;
      for (int k = 0; k < 3; ++k) ok = ok && c.s[k] * c.n == d.s[k];
      if (ok) {
        c.n *= d.n;
        continue;
      }
    }
    v.push_back(d);
  }
  for (const D& d : v) plan.dims.push_back({d.n, d.red, d.inner});
  if (v.empty()) return plan;
  plan.in_stride0 = v[0].s[1];
  // 3. Buffer setup. Operands: 0 the output (a reduce operand), 1 the input, 2 the mask.
  const int nop = mst ? 3 : 2;
  // out_cast: out= has another dtype than the loop, so NumPy buffers the output too
  // (Note [reduce through a narrower out]).
  const bool opcast[3] = {out_cast, cast, false};
  int cost = 1 + (cast ? 1 : 0) + (out_cast ? 1 : 0);
  int single[3] = {1, 1, 1};
  int red_outer[3] = {0, 0, 0};
  int outer_reduce_dim = 0;
  int64_t size = v[0].n;
  int best_dim = 0, best_cost = cost;
  int64_t best_size = size, best_core = 1;
  for (int idim = 1; idim < static_cast<int>(v.size()); ++idim) {
    if (outer_reduce_dim) break;
    if (size >= kBuf && cost > 1) break;
    const D& p = v[idim - 1];
    const D& d = v[idim];
    for (int k = 0; k < nop; ++k) {
      if (single[k] == idim) {
        if (p.s[k] * p.n == d.s[k]) {
          ++single[k];
          continue;
        }
        if (!opcast[k]) ++cost;
      }
      if (k == 0 && (d.s[0] == 0 || p.s[0] == 0)) {
        red_outer[0] = idim;
        outer_reduce_dim = idim;
      }
    }
    const int64_t core = size;
    size *= d.n;
    const double bufsize = (size > kBuf && cost > 1) ? static_cast<double>(kBuf) : static_cast<double>(size);
    if (cost * static_cast<double>(best_size) <= best_cost * bufsize) {
      best_cost = cost;
      best_core = core;
      best_size = size;
      best_dim = idim;
    }
  }
  const bool using_reduce = outer_reduce_dim && best_dim == outer_reduce_dim;
  bool must_buffer = false;
  for (int k = 0; k < nop; ++k) {
    bool buffered = opcast[k];
    bool is_reduce;
    if (!using_reduce) is_reduce = false;
    else if (red_outer[k] == best_dim) is_reduce = true;
    else if (single[k] == best_dim && !buffered) is_reduce = true;
    else is_reduce = v[outer_reduce_dim].s[k] == 0 && single[k] <= best_dim;
    if (single[k] + (is_reduce ? 1 : 0) <= best_dim) buffered = true;
    must_buffer = must_buffer || buffered;
    if (k == 1) plan.in_buffered = buffered;
  }
  if (must_buffer && kBuf < best_size) best_size = best_core * (kBuf / best_core);
  // Calls: in reduce mode one per core (dims below best_dim); otherwise buffers of
  // best_size over dims up to best_dim.
  if (using_reduce) {
    plan.block_dims = static_cast<size_t>(best_dim);
    plan.piece = best_core;
  } else {
    plan.block_dims = static_cast<size_t>(best_dim) + 1;
    plan.piece = best_size;
  }
  return plan;
}

// A copy of `a` in dtype `t`, laid out densely in the plan's iteration order (its innermost
// axis fastest, every stride positive): each coalesced dim of the plan is one stride in it.
// Used where NumPy casts through its buffers (the values are the same) or for where=.
ndarray copy_in_order(const ndarray& a, DType t, const std::vector<int>& order) {
  const int nd = a.ndim();
  std::vector<bool> seen(static_cast<size_t>(nd), false);
  for (int ax : order) seen[static_cast<size_t>(ax)] = true;
  std::vector<int64_t> outer_first;
  for (int d = 0; d < nd; ++d)
    if (!seen[static_cast<size_t>(d)]) outer_first.push_back(d);
  for (auto it = order.rbegin(); it != order.rend(); ++it) outer_first.push_back(*it);
  Shape ps;
  for (int64_t ax : outer_first) ps.push_back(a.shape()[ax]);
  ndarray buf = empty(ps, t);
  std::vector<int64_t> inv(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) inv[static_cast<size_t>(outer_first[static_cast<size_t>(i)])] = i;
  ndarray view = buf.transpose(inv);
  copy_into(view, a);
  return view;
}

// Elements [c, c + m) of a block (dims n, byte strides s) of esz-byte elements at p, copied
// densely into dst in iteration order (as NumPy's buffer holds them).
void gather_block(std::byte* dst, const std::byte* p, int64_t c, int64_t m, const Dims& n, const Dims& s,
                  int64_t esz) {
  int64_t idx[64];  // at most 64 dims (NumPy's NPY_MAXDIMS)
  const std::byte* x = p;
  int64_t rest = c;
  for (size_t d = 0; d < n.size(); ++d) {
    idx[d] = rest % n[d];
    rest /= n[d];
    x += idx[d] * s[d];
  }
  for (int64_t e = 0; e < m; ++e) {
    std::memcpy(dst + e * esz, x, static_cast<size_t>(esz));
    for (size_t d = 0; d < n.size(); ++d) {
      if (++idx[d] < n[d]) {
        x += s[d];
        break;
      }
      x -= (n[d] - 1) * s[d];
      idx[d] = 0;
    }
  }
}

}  // namespace npc::reduction

namespace npc::ops {

// Note [reduction layout]
// NumPy allocates a reduction's result (reduce, and ufunc.accumulate: cumsum, cumprod) with
// its iterator over the input and the where= mask, the output being an operand of the
// input's shape with the reduced axes of length 1: so in the order='K' axis order of Note
// [output layout] (src/ops/ufunc.cpp) over those operands, C-contiguous in that order, and
// without keepdims the reduced axes are then dropped (their length 1 left the other strides
// as they are). A sum over axis 1 of an F-ordered (2, 3, 4) array has strides (8, 16), with
// keepdims (8, 16, 16); cumsum along any axis of it is F-ordered (8, 16, 48). argmin/argmax
// allocate C-ordered results (NumPy's PyArray_ArgMax), and do not come here. Eager
// reductions compute in C order and lay the result out at the end (in_axis_order: a copy
// only when an axis longer than 1 moves); the tracer records the same layout (its reduce and
// scan hooks, src/tracer/trace_hooks.cpp).
std::vector<int> reduce_output_axes(const ndarray& a, const std::vector<bool>& red, bool keepdims, const ndarray* where) {
  std::vector<ndarray> operands{a};
  if (where) operands.push_back(*where);
  const std::vector<int> full = output_axes(a.shape(), Order::K, operands);
  if (keepdims) return full;
  std::vector<int> index(a.ndim(), -1);  // a's axis -> the result's
  int k = 0;
  for (int d = 0; d < a.ndim(); ++d)
    if (!red[d]) index[d] = k++;
  std::vector<int> r;
  for (int d : full)
    if (!red[d]) r.push_back(index[d]);
  return r;
}

namespace {
bool is_identity(const std::vector<int>& axes) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != static_cast<int>(i)) return false;
  return true;
}

// The strides of a C-contiguous layout of `shape` over its axes in the order `axes`, and
// that permuted shape.
Strides strides_in_order(const Shape& shape, size_t isz, const std::vector<int>& axes, Shape& permuted) {
  const size_t nd = shape.size();
  permuted.resize(nd);
  for (size_t i = 0; i < nd; ++i) permuted[i] = shape[axes[i]];
  const Strides ps = contiguous_strides(permuted, isz);
  Strides want(nd);
  for (size_t i = 0; i < nd; ++i) want[axes[i]] = ps[i];
  return want;
}
}  // namespace

ndarray empty_in_axis_order(const Shape& shape, DType t, const std::vector<int>& axes) {
  if (is_identity(axes)) return empty(shape, t);
  Shape permuted;
  Strides want = strides_in_order(shape, itemsize(t), axes, permuted);
  return ndarray(empty(permuted, t).storage(), 0, t, shape, std::move(want));
}

ndarray in_axis_order(const ndarray& res, const std::vector<int>& axes) {
  const int nd = res.ndim();
  if (is_identity(axes)) return res;
  Shape permuted;
  const Strides want = strides_in_order(res.shape(), res.itemsize(), axes, permuted);
  if (want == res.strides()) return res;
  bool same = res.is_c_contiguous();
  for (int d = 0; d < nd; ++d) same = same && (res.shape()[d] <= 1 || res.strides()[d] == want[d]);
  if (same || res.size() == 0) return ndarray(res.storage(), res.offset(), res.dtype(), res.shape(), want);
  ndarray out(empty(permuted, res.dtype()).storage(), 0, res.dtype(), res.shape(), want);
  copy_into(out, res);
  return out;
}

}  // namespace npc::ops
