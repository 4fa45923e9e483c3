#pragma once
// Internal: ufunc inputs cast block by block into small buffers inside the elementwise loop
// (Note [buffered input casts] in buffered_cast.cpp).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "npc/dtype.hpp"
#include "ops/loops.hpp"

namespace npc::ops {

/// Whether an input of dtype `from` may be cast to the loop's `to` block by block: a safe
/// cast to another dtype (from a float or complex dtype it can still raise "invalid" for a
/// signalling NaN: run_elementwise_casting keeps those flags apart).
bool cast_buffers(DType from, DType to);

/// run_elementwise over `nin` inputs and `nout` outputs (kernel order), where input k with
/// `from[k] != to[k]` is read in dtype `from[k]` (its pointer and byte strides) and cast to
/// `to[k]` for `fn`, kBlock elements at a time (an input of stride 0 in a run: its one
/// element, with stride 0, as NumPy's buffers keep it). Returns the floating-point flags the
/// loop raised (FpeFlags bits) when `check_fpe`, and sets `cast_flags` to those the casts
/// raised (overflow, underflow, invalid).
int run_elementwise_casting(LoopFn fn, int nin, int nout, std::byte* const* ptrs,
                            const std::vector<std::vector<int64_t>>& strides, std::span<const int64_t> shape,
                            const DType* from, const DType* to, bool check_fpe, int64_t cost, int& cast_flags);

}  // namespace npc::ops
