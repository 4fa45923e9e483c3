#include "ops/buffered_cast.hpp"

#include <atomic>

#include "core/cast.hpp"
#include "npc/ops.hpp"
#include "ops/exec.hpp"

// Note [buffered input casts]
// An input of another dtype than its loop's (`z * x` of a complex scalar and a float64
// array, `i + f` of int64 and float64 arrays) used to be cast whole into a temporary before
// the loop ran: a second full-size array written and read back, and its fresh pages touched
// (`z * x` over 160,000 float64 elements: NumPy 0.16 ms, npc 0.33 ms). NumPy's iterator casts
// such an operand in buffers of a few thousand elements inside the loop instead, and so does
// npc now: the loop's inner runs are cut into blocks of kBlock elements (a multiple of 64, as
// the threads' chunks are: Note [thread pool] in src/core/parallel.cpp), each cast input's
// block is cast into a buffer of the thread's, and the loop runs on the block with the buffer
// as a contiguous operand; an input of stride 0 in a run is cast once and keeps stride 0, as
// NumPy's buffers keep a broadcast operand (its power loop takes the square root for an
// exponent of 0.5 seen with stride 0). Only safe casts are buffered; those from float and
// complex dtypes can still raise (a float32 signalling NaN is "invalid" in float64), so each
// block's casts run with the hardware flags cleared and theirs are kept apart from the
// loop's; the caller reports them as the whole cast's would be ("... in cast", or the loop's
// name where NumPy's own iterator buffers: Note [per-operand input casts] in bind_ops.cpp).
// ufunc.cpp keeps the whole cast where the loop's choice depends on its operands' strides
// (Note [buffered operands] in kernels_arith.cpp), with where= masks, and where an input
// shares memory with an output.

namespace npc::ops {
namespace {

constexpr int64_t kBlock = 1024;

struct CastCtx {
  LoopFn fn;
  int nin, nout;
  detail::CastFn cast[kMaxOperands];  // null: no cast
  int64_t size[kMaxOperands];          // the loop dtype's itemsize
  bool checked;                        // a cast from a float or complex dtype (it can raise)
  std::atomic<int> cast_flags{0};
};

constexpr int kCastFlags = FpeOverflow | FpeUnderflow | FpeInvalid;

void casting_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  CastCtx& c = *reinterpret_cast<CastCtx*>(p[0]);
  alignas(64) static thread_local std::byte buf[kMaxOperands][kBlock * 16];
  const int nops = c.nin + c.nout;
  std::byte* q[kMaxOperands];
  int64_t qs[kMaxOperands];
  bool once[kMaxOperands] = {};
  for (int k = 0; k < nops; ++k) {
    once[k] = c.cast[k] && s[1 + k] == 0;
    qs[k] = c.cast[k] && !once[k] ? c.size[k] : s[1 + k];
  }
  int cast_flags = 0;
  for (int64_t lo = 0; lo < n; lo += kBlock) {
    const int64_t m = std::min(kBlock, n - lo);
    // The casts' flags are kept apart from the loop's (Note [buffered input casts]).
    const int loop_flags = c.checked ? read_fpe() : 0;
    if (c.checked) clear_fpe();
    for (int k = 0; k < nops; ++k) {
      std::byte* at = p[1 + k] + lo * s[1 + k];
      q[k] = at;
      if (!c.cast[k]) continue;
      if (!once[k] || lo == 0) c.cast[k](at, s[1 + k], buf[k], c.size[k], once[k] ? 1 : m);
      q[k] = buf[k];
    }
    if (c.checked) {
      cast_flags |= read_fpe() & kCastFlags;
      clear_fpe();
      if (loop_flags) raise_fpe(loop_flags);
    }
    c.fn(q, qs, m);
  }
  if (cast_flags) c.cast_flags.fetch_or(cast_flags, std::memory_order_relaxed);
}

}  // namespace

bool cast_buffers(DType from, DType to) { return from != to && can_cast(from, to, Casting::Safe); }

int run_elementwise_casting(LoopFn fn, int nin, int nout, std::byte* const* ptrs,
                            const std::vector<std::vector<int64_t>>& strides, std::span<const int64_t> shape,
                            const DType* from, const DType* to, bool check_fpe, int64_t cost, int& cast_flags) {
  CastCtx ctx{fn, nin, nout, {}, {}, false};
  const int nops = nin + nout;
  std::byte* cptrs[kMaxOperands + 1];
  std::vector<std::vector<int64_t>> cst;
  cptrs[0] = reinterpret_cast<std::byte*>(&ctx);
  cst.emplace_back(shape.size(), 0);
  for (int k = 0; k < nops; ++k) {
    if (k < nin && from[k] != to[k]) {
      ctx.cast[k] = detail::get_cast(from[k], to[k]);
      ctx.size[k] = static_cast<int64_t>(itemsize(to[k]));
      ctx.checked |= is_inexact(from[k]);
    }
    cptrs[1 + k] = ptrs[k];
    cst.push_back(strides[k]);
  }
  const int flags = run_elementwise(&casting_loop, nops + 1, cptrs, cst, shape, nin + 1, check_fpe, cost);
  cast_flags = ctx.cast_flags.load();
  return flags;
}

}  // namespace npc::ops
