// npc's thread pool: the parallel loops of eager kernels, reductions, gathers and fused
// kernels (Note [thread pool] in parallel.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace npc::parallel {

/// A chunk of a parallel loop: `fn(ctx, c)` runs chunk `c`.
using ChunkFn = void (*)(void* ctx, int64_t chunk);

/// Runs `fn(ctx, c)` once for every `c` in [0, chunks) on at most `nt` threads, the calling
/// thread among them, and returns when all chunks have run. Chunks are handed out one at a
/// time in order, so the caller runs every chunk no worker has started (a worker that wakes
/// late does not hold it back), and which thread runs a chunk never changes what the chunk
/// computes. Serial (the calling thread alone) when `nt <= 1`, `chunks <= 1`, inside a chunk
/// of a loop that holds the pool, while another thread's loop holds the pool (so a big op of a
/// second Python thread runs on one thread meanwhile), or in a forked child. An exception
/// thrown by a chunk is rethrown once every chunk has run (from a serial loop, at once).
void run(int nt, int64_t chunks, ChunkFn fn, void* ctx);

/// `f(c)` for every chunk `c` in [0, chunks) on at most `nt` threads (see run()).
template <class F>
void for_chunks(int nt, int64_t chunks, F&& f) {
  using G = std::remove_reference_t<F>;
  run(nt, chunks, [](void* c, int64_t k) { (*static_cast<G*>(c))(k); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

/// `f(lo, hi)` over [0, n) cut into at most `chunks` contiguous ranges of about equal length,
/// on at most `nt` threads (see run()).
template <class F>
void for_ranges(int nt, int64_t n, int64_t chunks, F&& f) {
  if (n <= 0) return;
  chunks = std::max<int64_t>(1, std::min(chunks, n));
  for_chunks(nt, chunks, [&](int64_t c) { f(n / chunks * c + std::min(c, n % chunks),
                                            n / chunks * (c + 1) + std::min(c + 1, n % chunks)); });
}

/// Whether the calling thread runs inside a parallel loop (a worker, or a caller of run()).
bool in_parallel();

/// Threads parallel loops use at most: npc.set_num_threads's value, by default
/// OMP_NUM_THREADS or the cores available (Note [thread count] in parallel.cpp).
int num_threads();
/// Sets num_threads(); ValueError when `n < 1`.
void set_num_threads(int n);
/// Units of work below which a loop stays on its calling thread (Note [parallel threshold]).
int64_t parallel_threshold();
/// Sets parallel_threshold() (values below 1 count as 1).
void set_parallel_threshold(int64_t n);
/// Whether parallel loops may use threads (false in a forked child: Note [fork]).
bool threads_allowed();
/// Threads for `n` elements of work of relative cost `cost` (1 = one add): one below the
/// parallel threshold or in a forked child, else at most num_threads(), with at least a
/// threshold's worth of work each.
int threads_for(int64_t n, int64_t cost = 1);

}  // namespace npc::parallel
