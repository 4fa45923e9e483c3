#include "core/parallel.hpp"

#include "npc/errors.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include <pthread.h>
#if NPC_HAVE_OPENMP
#include <omp.h>
#endif
#include <sched.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

// Note [thread pool]
// npc's parallel loops (eager elementwise kernels, reductions, gathers, fused kernels through
// npk::parallel_for) run on a pool of its own threads rather than OpenMP parallel regions.
// An OpenMP region ends at a barrier where the calling thread waits for every thread of the
// team: when a worker sleeps between regions (a passive wait) the caller waits for its
// wake-up, about 100-180 us on a virtual machine whose idle cores halt, and sleeps at the
// barrier itself, waking with a slower, cold core (Mandelbrot's one complex abs per
// iteration made every op of the loop 1.3-1.5x slower: 0.70x NumPy against 0.92x on one
// thread); when workers spin for long instead (an active wait) they hold cores that other
// processes and OpenBLAS's threads need (a loop of matrix-vector products ran 1.8x slower).
// So a loop here is a list of chunks handed out one at a time:
// - the caller publishes the loop, wakes sleeping workers and takes chunks itself; chunks no
//   worker has started are the caller's, so a worker that wakes late costs nothing but its
//   share of the gain, and the caller waits only for chunks already running (spinning, then
//   yielding: they end soon);
// - a worker that finds no chunk left spins for 50 us (NPC_POOL_SPIN_US; a loop of several
//   parallel ops finds it awake) and then sleeps on the job counter (std::atomic::wait, a
//   futex on Linux).
// The job is published seqlock-style: `epoch` is odd while the caller writes it, and a
// worker counts itself in `active` before it reads the job and checks the epoch again after,
// so the caller rewrites a job only when no worker can be reading it.
// One loop runs at a time; a loop started while another holds the pool (another Python
// thread with the GIL released) or inside a chunk runs on its calling thread alone. Threads
// are started on the first loop that needs them and never stopped; a forked child runs every
// loop on its calling thread (Note [fork]).

// Note [fork]
// A thread pool does not survive fork(): the child has only the forking thread, and a loop
// that waited for the parent's workers would hang. A pthread_atfork child handler turns
// threading off in the child (as PyTorch does), so multiprocessing workers run every loop on
// their calling thread (run() and threads_for() both check it).

// Note [thread count]
// Loops use at most num_threads() threads: npc.set_num_threads's value, by default what
// OpenMP reports (OMP_NUM_THREADS, else the cores this process may run on), read on first use.

// Note [parallel threshold]
// Below 128K units of work (elements times the op's cost) loops stay on the calling thread:
// waking the workers costs more than memory-bound loops of that size gain on two cores, and
// far more when the cores are shared with other processes (a 300x300 stencil step ran 1.3x
// slower on two threads than on one). Eager loops count cheap elements as less (Note
// [memory-bound threads] in src/ops/registry.cpp).

namespace npc::parallel {
namespace {

// A worker's spin before it sleeps (NPC_POOL_SPIN_US overrides it, read once).
std::chrono::microseconds spin_time() {
  static const std::chrono::microseconds t = [] {
    const char* e = std::getenv("NPC_POOL_SPIN_US");
    return std::chrono::microseconds(e ? std::max(0L, std::atol(e)) : 50L);
  }();
  return t;
}
constexpr auto kCallerSpin = std::chrono::microseconds(20);  // the caller's spin before it yields

struct Pool {
  std::mutex submit;                // held by the caller of the running loop
  std::atomic<uint32_t> epoch{0};   // odd while a job is being written
  std::atomic<int> active{0};       // workers between reading the job and leaving it
  std::atomic<int> sleeping{0};
  int workers = 0;                  // started (under `submit`)
  // The job (written while `epoch` is odd and `active` is zero).
  ChunkFn fn = nullptr;
  void* ctx = nullptr;
  int64_t chunks = 0;
  int want = 0;                     // workers wanted: nt - 1
  std::atomic<int> joined{0};
  std::atomic<int64_t> next{0}, done{0};
  std::mutex err_mu;
  std::exception_ptr err;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: detached workers use it until the process ends
  return *p;
}

thread_local bool t_inside = false;
std::atomic<bool> g_forked{false};  // Note [fork]
std::atomic<int> g_threads{0};      // Note [thread count]; 0 until first read
std::atomic<int64_t> g_threshold{int64_t{1} << 17};  // Note [parallel threshold]

void on_fork_child() { g_forked.store(true); }

// Registers the fork handler and reads the default thread count, once.
void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork(nullptr, nullptr, &on_fork_child);
#if NPC_HAVE_OPENMP
    g_threads.store(std::max(1, omp_get_max_threads()));
#else
    g_threads.store(1);
#endif
  });
}

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

void run_chunks(Pool& p) {
  for (;;) {
    const int64_t c = p.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= p.chunks) return;
    try {
      p.fn(p.ctx, c);
    } catch (...) {
      std::lock_guard lk(p.err_mu);
      if (!p.err) p.err = std::current_exception();
    }
    p.done.fetch_add(1, std::memory_order_release);
  }
}

uint32_t wait_for_job(Pool& p, uint32_t seen) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const auto spin = spin_time();
  for (int i = 1;; ++i) {
    const uint32_t e = p.epoch.load(std::memory_order_acquire);
    if (e != seen && !(e & 1)) return e;
    if ((i & 63) == 0 && clock::now() - t0 > spin) break;
    relax();
  }
  for (;;) {
    const uint32_t e = p.epoch.load(std::memory_order_acquire);
    if (e != seen && !(e & 1)) return e;
    p.sleeping.fetch_add(1);
    p.epoch.wait(e);
    p.sleeping.fetch_sub(1);
  }
}

// `seen`: the epoch when the thread was started, before the job it was started for.
void worker_main(uint32_t seen) {
  t_inside = true;
  Pool& p = pool();
  for (;;) {
    const uint32_t e = wait_for_job(p, seen);
    seen = e;
    p.active.fetch_add(1);
    if (p.epoch.load() == e && p.joined.fetch_add(1) < p.want) run_chunks(p);
    p.active.fetch_sub(1);
  }
}

void serial(int64_t chunks, ChunkFn fn, void* ctx) {
  for (int64_t c = 0; c < chunks; ++c) fn(ctx, c);
}

}  // namespace

bool in_parallel() { return t_inside; }

int num_threads() {
  init();
  return g_threads.load(std::memory_order_relaxed);
}

void set_num_threads(int n) {
  init();
  if (n < 1) throw ValueError("number of threads must be >= 1");
  g_threads.store(n);
}

int64_t parallel_threshold() { return g_threshold.load(std::memory_order_relaxed); }
void set_parallel_threshold(int64_t n) { g_threshold.store(std::max<int64_t>(n, 1)); }

bool threads_allowed() { return !g_forked.load(std::memory_order_relaxed); }

int threads_for(int64_t n, int64_t cost) {
  const int t = num_threads();
  if (t <= 1 || !threads_allowed()) return 1;
  const int64_t thr = parallel_threshold();
  if (n * cost < thr) return 1;
  // At least `thr` units of work per thread.
  const int64_t by_work = std::max<int64_t>(1, n * cost / thr);
  return static_cast<int>(std::min<int64_t>(t, by_work));
}

void run(int nt, int64_t chunks, ChunkFn fn, void* ctx) {
  if (nt <= 1 || chunks <= 1 || t_inside || g_forked.load(std::memory_order_relaxed)) return serial(chunks, fn, ctx);
  Pool& p = pool();
  std::unique_lock lk(p.submit, std::try_to_lock);
  if (!lk.owns_lock()) return serial(chunks, fn, ctx);
  const int want = static_cast<int>(std::min<int64_t>(nt - 1, chunks - 1));
  if (p.workers < want) {
    init();
    try {
      while (p.workers < want) {
        std::thread(worker_main, p.epoch.load()).detach();
        ++p.workers;
      }
    } catch (const std::system_error&) {  // no more threads: the ones there are do the work
      if (p.workers == 0) return serial(chunks, fn, ctx);
    }
  }
  // Publish the job (Note [thread pool]).
  const uint32_t e = p.epoch.load();
  p.epoch.store(e + 1);
  while (p.active.load() != 0) relax();
  p.fn = fn;
  p.ctx = ctx;
  p.chunks = chunks;
  p.want = std::min(want, p.workers);
  p.joined.store(0);
  p.next.store(0);
  p.done.store(0);
  p.err = nullptr;
  p.epoch.store(e + 2);
  if (p.sleeping.load() > 0) p.epoch.notify_all();
  t_inside = true;
  run_chunks(p);
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  for (int i = 1; p.done.load(std::memory_order_acquire) < chunks; ++i) {
    if (i > 64 && clock::now() - t0 > kCallerSpin) std::this_thread::yield();
    else relax();
  }
  t_inside = false;
  if (p.err) {
    std::exception_ptr err = p.err;
    p.err = nullptr;
    std::rethrow_exception(err);
  }
}

}  // namespace npc::parallel
