#pragma once
// Execution helpers of ufunc.reduce shared by its files: the iteration plan that follows
// NumPy's reduction order (reduce_plan.cpp), the typed inner reductions and pairwise sums
// (reduce_inner.cpp), and the index walking and thread scheduling of reduce.cpp. Internal to
// src/ops (namespace npc::reduction).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "npc/ndarray.hpp"
#include "npc/ops.hpp"
#include "core/parallel.hpp"
#include "ops/exec.hpp"
#include "ops/loops.hpp"

namespace npc::reduction {

// ---------------------------------------------------------------- plan (reduce_plan.cpp)
// How NumPy's buffered iterator walks a reduction (Note [NumPy reduction order] in
// reduce_plan.cpp).
struct ReducePlan {
  struct Dim {
    int64_t n;
    bool red;
    int inner_axis;  // innermost source axis of the coalesced group: its stride is the dim's stride
  };
  std::vector<int> order;  // axes of size > 1, innermost first
  std::vector<Dim> dims;   // coalesced, innermost first
  size_t block_dims = 0;   // dims[0 .. block_dims) form a block (when dims[0] is reduced)
  int64_t piece = 0;       // elements per inner-loop call within a block
  bool in_buffered = false;  // NumPy copies the input through its buffer (stride +itemsize)
  int64_t in_stride0 = 0;    // the input's stride along dims[0]
};

// The plan of a reduction of an array of `shape` and byte strides `st` (`mst`: the where=
// mask's, or null) over the axes marked in `red`; `cast`/`out_cast`: NumPy buffers the input
// / output through a cast.
ReducePlan numpy_reduce_plan(const Shape& shape, const Strides& st, const Strides* mst, const std::vector<bool>& red,
                             bool cast, bool out_cast = false);

// A copy of `a` in dtype `t`, laid out densely in the plan's iteration order (its innermost
// axis fastest, every stride positive): each coalesced dim of the plan is one stride in it.
// Used where NumPy casts through its buffers (the values are the same) or for where=.
ndarray copy_in_order(const ndarray& a, DType t, const std::vector<int>& order);

// ---------------------------------------------------------------- index walking
// Note [index walking]
// The loops below walk index ranges over several dims listed innermost first: the
// reduced dims outside a block, the dims of a block, the kept dims of an outer reduction.
// Linear index r stands for the position with the innermost dim fastest (NumPy's iteration
// order); offset_of turns it into a byte offset, next_index steps an index vector, and
// gather_block copies a range of a block's elements in that order.
using Dims = std::vector<int64_t>;

inline int64_t offset_of(int64_t r, const Dims& n, const Dims& s) {
  int64_t off = 0;
  for (size_t d = 0; d < n.size(); ++d) {
    off += (r % n[d]) * s[d];
    r /= n[d];
  }
  return off;
}

inline void next_index(int64_t* idx, const Dims& n) {
  for (size_t d = 0; d < n.size(); ++d) {
    if (++idx[d] < n[d]) return;
    idx[d] = 0;
  }
}

// Elements [c, c + m) of a block (dims n, byte strides s) of esz-byte elements at p, copied
// densely into dst in iteration order (as NumPy's buffer holds them).
void gather_block(std::byte* dst, const std::byte* p, int64_t c, int64_t m, const Dims& n, const Dims& s,
                  int64_t esz);

// Runs body(k) for k in [0, n) on nt threads (serially when nt <= 1: Note [no idle parallel
// regions] in registry.cpp) and returns the floating-point flags raised meanwhile when `fpe`
// (each thread collects its own: Note [reduction FP errors]). `balance`: k handed out one at a
// time (few long tasks; a thread that starts late on a busy machine takes fewer); else in
// guided chunks (many short tasks). Results never depend on the schedule.
template <class F>
int run_parallel(int nt, int64_t n, bool balance, bool fpe, const F& body) {
  std::atomic<int> fl{0};
  if (nt <= 1 || n <= 1) {
    if (fpe) ops::clear_fpe();
    for (int64_t k = 0; k < n; ++k) body(k);
    return fpe ? ops::read_fpe() : 0;
  }
  // Note [thread pool] in src/core/parallel.cpp: chunks handed out in order, so a thread that
  // starts late takes fewer. `balance`: one task a chunk; else about eight chunks a thread.
  parallel::for_ranges(nt, n, balance ? n : 8 * int64_t{nt}, [&](int64_t lo, int64_t hi) {
    if (fpe) ops::clear_fpe();
    for (int64_t k = lo; k < hi; ++k) body(k);
    if (fpe) fl.fetch_or(ops::read_fpe());
  });
  return fl.load();
}

// Note [row-wise outer reductions]
// When the innermost iteration dim is kept (sum(axis=0) of a C array, of a reversed or
// strided view, ...), output element j is op(...op(op(init or x_0, x_1), x_2)...) over its
// reduced elements in iteration order (Note [NumPy reduction order]), and output elements do
// not depend on each other. So the slices are applied row by row to blocks of accumulators
// small enough to stay in cache (16 KiB, split among threads): for each block, for each
// reduced index in order, the block's elements of that slice are op-ed into it. A block is
// a list of segments, runs along the innermost kept dim (one stride in the input, the
// output and the mask), so a segment is one call of the loop. Each output element sees the
// same operations in the same order as in NumPy: the bits do not depend on the blocks or
// the thread count.
struct OuterDims {
  Dims rn, rs, rms;        // reduced dims, innermost first: sizes, input and mask strides
  Dims kn, ks, kos, kms;   // kept dims, innermost first: sizes, input, output and mask strides
};

// seg(o, ostride, q, qstride, mask or null, mstride, n, first) applies one segment of one
// slice (first: the slice of reduced index 0). Returns the floating-point flags raised when
// `fpe`.
template <class Seg>
int outer_rows(const OuterDims& g, std::byte* out0, const std::byte* in0, const std::byte* m0, int64_t isz, int nt,
               bool fpe, const Seg& seg) {
  int64_t nout = 1, nred = 1;
  for (int64_t n : g.kn) nout *= n;
  for (int64_t n : g.rn) nred *= n;
  const int64_t align = std::max<int64_t>(1, 64 / isz);
  const int64_t block = std::max<int64_t>(align, (16384 / isz) / align * align);
  const int64_t nblocks = (nout + block - 1) / block;
  struct Segment {
    int64_t o, i, m, n;  // output, input and mask offsets of its first element; length
  };
  return run_parallel(static_cast<int>(std::min<int64_t>(nt, nblocks)), nblocks, true, fpe, [&](int64_t b) {
    thread_local std::vector<Segment> segs;
    segs.clear();
    const int64_t j1 = std::min(nout, (b + 1) * block);
    for (int64_t j = b * block; j < j1;) {
      const int64_t len = std::min(g.kn[0] - j % g.kn[0], j1 - j);
      segs.push_back({offset_of(j, g.kn, g.kos), offset_of(j, g.kn, g.ks), m0 ? offset_of(j, g.kn, g.kms) : 0, len});
      j += len;
    }
    for (int64_t r = 0; r < nred; ++r) {
      const std::byte* p = in0 + offset_of(r, g.rn, g.rs);
      const std::byte* mp = m0 ? m0 + offset_of(r, g.rn, g.rms) : nullptr;
      for (const Segment& s : segs)
        seg(out0 + s.o, g.kos[0], p + s.i, g.ks[0], mp ? mp + s.m : nullptr, g.kms[0], s.n, r == 0);
    }
  });
}

// ---------------------------------------------------------------- inner reductions (reduce_inner.cpp)
// Typed inner reduction of one strided run into *acc (acc already holds a value).
using InnerReduceFn = void (*)(ops::LoopFn fn, const std::byte* p, int64_t s, int64_t n, std::byte* acc);

// The typed inner reduction of `op` over runs of dtype t: the add/multiply/maximum/minimum
// loops NumPy specialises (pairwise sums, Note [vector max/min]), else the ufunc's own loop.
InnerReduceFn inner_for(OpId op, DType t);

// The pairwise sum of m elements of float dtype t (float16 accumulates in float32, NumPy's
// half loop), returned as double (exact: a float32 value is a double value).
double pairwise_sum_of(DType t, const std::byte* q, int64_t m, int64_t qs);

// *out = *out + v in float dtype t, as the add loop's reduce step does with a partial sum
// (float16: in float32, rounded once).
void add_partial(DType t, std::byte* out, double v);

}  // namespace npc::reduction
