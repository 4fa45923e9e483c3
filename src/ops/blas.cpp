// BLAS entry points, resolved once per process.
//
// Note [one BLAS per process]
// npc links a CBLAS at build time (Debian's OpenBLAS), so that its C++ API works without
// Python. NumPy's wheels bring their own OpenBLAS (scipy-openblas, symbols prefixed "scipy_"),
// and a process that uses both libraries then holds two OpenBLAS thread pools besides npc's
// OpenMP pool. OpenBLAS's idle workers spin (yielding) for a while after every call, so on a
// machine with few cores the pools take the cores from each other: a small MLP's matmuls ran
// anywhere between 5 and 45 ms from one call to the next, NumPy's own calls included, when
// NumPy and npc alternated. When NumPy is loaded, the Python module therefore routes npc's
// BLAS calls to NumPy's OpenBLAS (use_loaded_numpy_blas, at import): one BLAS pool in the
// process, the same OpenBLAS version and kernels as NumPy's products (so the same results and
// speed), and the linked library stays for C++ programs. NPC_BLAS=system keeps the linked one.
// The LAPACKE drivers (linalg.cpp) and OpenBLAS's thread-count controls follow the same
// choice through library_symbol.
//
// The table holds the functions as untyped pointers plus the width of their integers (the
// ILP64 build takes int64_t where the linked one takes int); every call goes through the
// typed wrappers below. The table is set at most a few times (import), before any product
// runs on another thread, and read with an atomic load.
#include "ops/blas.hpp"

#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#if defined(__linux__)
#include <link.h>
#endif
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#if NPC_HAVE_CBLAS
#include <cblas.h>
#endif

// OpenBLAS's thread-count controls, when the linked BLAS is OpenBLAS (weak: null otherwise).
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
extern "C" int openblas_get_num_threads() __attribute__((weak));

namespace npc::ops::blas {
namespace {

// X(name, return type, parameter list; I stands for the BLAS integer type)
#define NPC_BLAS_ENTRIES(X)                                                                                         \
  X(cblas_sgemm, void, (int, int, int, I, I, I, float, const void*, I, const void*, I, float, void*, I))           \
  X(cblas_dgemm, void, (int, int, int, I, I, I, double, const void*, I, const void*, I, double, void*, I))         \
  X(cblas_cgemm, void, (int, int, int, I, I, I, const void*, const void*, I, const void*, I, const void*, void*, I)) \
  X(cblas_zgemm, void, (int, int, int, I, I, I, const void*, const void*, I, const void*, I, const void*, void*, I)) \
  X(cblas_sgemv, void, (int, int, I, I, float, const void*, I, const void*, I, float, void*, I))                   \
  X(cblas_dgemv, void, (int, int, I, I, double, const void*, I, const void*, I, double, void*, I))                 \
  X(cblas_cgemv, void, (int, int, I, I, const void*, const void*, I, const void*, I, const void*, void*, I))       \
  X(cblas_zgemv, void, (int, int, I, I, const void*, const void*, I, const void*, I, const void*, void*, I))       \
  X(cblas_sdot, float, (I, const void*, I, const void*, I))                                                        \
  X(cblas_ddot, double, (I, const void*, I, const void*, I))                                                       \
  X(cblas_cdotu_sub, void, (I, const void*, I, const void*, I, void*))                                             \
  X(cblas_zdotu_sub, void, (I, const void*, I, const void*, I, void*))                                             \
  X(cblas_ssyrk, void, (int, int, int, I, I, float, const void*, I, float, void*, I))                                \
  X(cblas_dsyrk, void, (int, int, int, I, I, double, const void*, I, double, void*, I))                              \
  X(cblas_csyrk, void, (int, int, int, I, I, const void*, const void*, I, const void*, void*, I))                    \
  X(cblas_zsyrk, void, (int, int, int, I, I, const void*, const void*, I, const void*, void*, I))                    \
  X(cblas_saxpy, void, (I, float, const void*, I, void*, I))                                                       \
  X(cblas_daxpy, void, (I, double, const void*, I, void*, I))                                                      \
  X(cblas_caxpy, void, (I, const void*, const void*, I, void*, I))                                                 \
  X(cblas_zaxpy, void, (I, const void*, const void*, I, void*, I))

struct Table {
  std::string name;  // "system" or a path
  bool ilp64 = false;
  void* handle = nullptr;  // a library chosen with use_library (never closed)
  std::string prefix, suffix;
  std::mutex mu;
  std::unordered_map<std::string, void*> symbols;  // library_symbol's lookups
#define NPC_X(fn, ret, params) void* fn = nullptr;
  NPC_BLAS_ENTRIES(NPC_X)
#undef NPC_X
};

// Typed views of an entry: Sig<int>::fn / Sig<int64_t>::fn.
#define NPC_X(fn, ret, params)              \
  template <class I>                        \
  struct fn##_sig {                         \
    using type = ret(*) params;             \
  };
NPC_BLAS_ENTRIES(NPC_X)
#undef NPC_X

std::unique_ptr<Table> system_table() {
  auto t = std::make_unique<Table>();
#if NPC_HAVE_CBLAS
  t->name = "system";
  t->ilp64 = sizeof(blasint) == 8;
#define NPC_X(fn, ret, params) t->fn = reinterpret_cast<void*>(&::fn);
  NPC_BLAS_ENTRIES(NPC_X)
#undef NPC_X
#else
  t->name = "none";
#endif
  return t;
}

std::atomic<const Table*> g_table{nullptr};
std::mutex g_mu;
std::vector<std::unique_ptr<Table>> g_tables;  // every table ever installed (never freed: calls may be in flight)

const Table& table() {
  const Table* t = g_table.load(std::memory_order_acquire);
  if (t) return *t;
  std::lock_guard lk(g_mu);
  if (!g_table.load(std::memory_order_relaxed)) {
    g_tables.push_back(system_table());
    g_table.store(g_tables.back().get(), std::memory_order_release);
  }
  return *g_table.load(std::memory_order_relaxed);
}

// The integer arguments, narrowed for a 32-bit BLAS (callers use BLAS only below 2^31).
template <class I>
I n(int64_t v) { return static_cast<I>(v); }

}  // namespace

bool available() { return table().cblas_dgemm != nullptr; }

std::string current() { return table().name; }

void* library_symbol(const std::string& name) {
  Table& t = const_cast<Table&>(table());
  if (!t.handle) return nullptr;
  std::lock_guard lk(t.mu);
  auto [it, fresh] = t.symbols.try_emplace(name, nullptr);
  if (fresh) it->second = dlsym(t.handle, (t.prefix + name + t.suffix).c_str());
  return it->second;
}

bool library_ilp64() { return table().ilp64; }

namespace {
// The thread-count controls of the BLAS in use (Note [one BLAS per process]), or nulls.
struct Controls {
  void (*set)(int) = nullptr;
  int (*get)() = nullptr;
};
Controls controls() {
  if (table().handle)
    return {reinterpret_cast<void (*)(int)>(library_symbol("openblas_set_num_threads")),
            reinterpret_cast<int (*)()>(library_symbol("openblas_get_num_threads"))};
  return {openblas_set_num_threads, openblas_get_num_threads};
}
std::mutex g_threads_mu;
int g_one_thread_users = 0;
int g_saved_threads = 0;
Controls g_saved_controls;
}  // namespace

// 0: eager products (NumPy's calls); else 1 + the ProductThreads of the CompiledProducts.
thread_local int t_compiled_products = 0;

CompiledProducts::CompiledProducts(ProductThreads how) : previous_(t_compiled_products) {
  if (how == ProductThreads::Inherit && previous_ != 0) return;
  t_compiled_products = 1 + static_cast<int>(how == ProductThreads::Inherit ? ProductThreads::Rule : how);
}
CompiledProducts::~CompiledProducts() { t_compiled_products = previous_; }

bool OneThread::controllable() {
  const Controls c = controls();
  return c.set && c.get;
}

OneThread::OneThread(bool active) : active_(active) {
  if (!active_) return;
  std::lock_guard lk(g_threads_mu);
  if (g_one_thread_users++ == 0) {
    g_saved_controls = controls();
    g_saved_threads = g_saved_controls.get ? g_saved_controls.get() : 0;
    if (g_saved_threads > 1 && g_saved_controls.set) g_saved_controls.set(1);
  }
}

OneThread::~OneThread() {
  if (!active_) return;
  std::lock_guard lk(g_threads_mu);
  if (--g_one_thread_users == 0 && g_saved_threads > 1 && g_saved_controls.set) g_saved_controls.set(g_saved_threads);
}

// Note [compiled products on one BLAS thread]
// OpenBLAS (NumPy's wheels' and Debian's default build) runs its products on a pool of its
// own threads, besides npc's thread pool. Its idle workers spin (yielding) for a while after
// every call and its caller spins while it waits for them, so where the cores are shared (a
// loaded machine, npc's kernels running between the products) a product waits for a worker
// the scheduler has not run yet: conv_net's nine (576000 x 3) @ (3 x 8) products in one
// compiled graph took 550-1500 ms a call instead of about 95 ms on one BLAS thread, most of it
// in OpenBLAS's spin loops (blas_thread_server, exec_blas_async_wait). So the products of
// compiled graphs (matmul nodes, run by both backends through run_node_eagerly, which holds a
// CompiledProducts) run on the calling thread alone (OneThread) up to kCompiledProductsWork
// multiply-adds, about 10 ms of one core, where a hand-off can cost as much as the product;
// larger ones keep OpenBLAS's threads. The values are those of NumPy's product on one BLAS
// thread, which for some shapes differ in the last bits from NumPy's threaded product in the
// same process (OpenBLAS's blocking depends on its thread count: NumPy's own (5000 x 300) @
// (300 x 40) float32 product changes between OPENBLAS_NUM_THREADS=1 and 2). npc does not split
// a product among its own threads instead: blocks of rows, each one call, change the last bits
// as well. Eager products (npc.matmul, np.dot on npc arrays) stay NumPy's call as it is, threads
// and bits (Note [NumPy's product paths] in matmul.cpp).
// Only products that move much memory for their work stay on one thread: conv_net's (k = 3,
// 2.2 multiply-adds per element read or written) gained at most 1.2x from a second thread on
// an idle machine (complex128 ones lost) and hand off many times per call, where products
// computing 8 or more per element ran 1.6-1.8x faster on two threads: mlp's (200 x 256) @
// (256 x 512) float32 product (90 per element) took 0.36 ms on one thread and 0.22 ms on
// two, and the compiled MLP ran at 0.77x NumPy while eager npc, whose products are NumPy's
// threaded calls, ran at 1.05x. From kThreadedIntensity multiply-adds per element moved on,
// compiled products are NumPy's call as it is, with its threads and bits, as eager ones are.
constexpr int64_t kCompiledProductsWork = int64_t{1} << 27;
constexpr double kThreadedIntensity = 4.0;

// Matrix-vector products from this many multiply-adds on (a 64 MiB float64 matrix, several ms
// of one core's reads) are NumPy's call with OpenBLAS's threads, neither on one thread nor timed:
// beside that much memory traffic a hand-off costs little even on loaded cores (a 6000 x 7500
// float64 gemv with one core kept busy by another process: 26 ms on one thread, 29 ms on two;
// idle: 26 ms and 16 ms), and a choice timed once under passing load kept atax's two products
// (bench/programs/products.py, 45M multiply-adds each) on one thread in some runs, 0.70x-0.78x
// NumPy's time.
constexpr double kThreadedVectorWork = 8388608.0;

static bool matrix_vector(int64_t n, int64_t m) { return n == 1 || m == 1; }

// Whether a compiled product of n x k times k x m elements runs on one BLAS thread (Note
// [compiled products on one BLAS thread]).
bool compiled_product_on_one_thread(int64_t n, int64_t m, int64_t k) {
  const double dn = static_cast<double>(n), dm = static_cast<double>(m), dk = static_cast<double>(k);
  const double work = dn * dm * dk;
  const double moved = dn * dk + dk * dm + dn * dm;
  if (matrix_vector(n, m) && work >= kThreadedVectorWork) return false;
  return work < static_cast<double>(kCompiledProductsWork) && work < kThreadedIntensity * moved;
}

// Products under this many multiply-adds are not timed: OpenBLAS runs them on one thread
// itself (its GEMM_MULTITHREAD_THRESHOLD), so both ways are the same call.
constexpr double kTimedProductMinWork = 65536.0 * 4;
// Matrix-vector products (one multiply-add per matrix element) from this many multiply-adds
// on, up to kThreadedVectorWork, are timed too, although the rule puts them on one thread:
// they read memory as fast as the cores' caches deliver it, and where the matrix sits in a large shared cache two
// threads read it 2-3x faster than one (a 3000 x 3000 float64 gemv: 4.3 ms on one thread,
// 1.4 ms on two, on a machine with 480 MiB of L3), which a fixed rule cannot know.
constexpr double kTimedVectorMinWork = 1048576.0;

bool compiled_product_timed(int64_t n, int64_t m, int64_t k) {
  const double work = static_cast<double>(n) * static_cast<double>(m) * static_cast<double>(k);
  if (work >= static_cast<double>(kCompiledProductsWork)) return false;
  if (matrix_vector(n, m)) return work >= kTimedVectorMinWork && work < kThreadedVectorWork;
  return work >= kTimedProductMinWork && !compiled_product_on_one_thread(n, m, k);
}

// Whether a BLAS call of (n x k) @ (k x m) elements made now runs on this thread alone: a
// compiled graph's product (a CompiledProducts on this thread) by its way, One, or by Rule
// (Note [compiled products on one BLAS thread], Note [timed product threads] in
// src/fusion/backend.cpp); eager products never (NumPy's call as it is).
static bool compiled_call_on_one_thread(int64_t n, int64_t m, int64_t k) {
  const int how = t_compiled_products;
  return how == 1 + static_cast<int>(ProductThreads::One) ||
         (how == 1 + static_cast<int>(ProductThreads::Rule) && compiled_product_on_one_thread(n, m, k));
}

template <class T>
void gemm_call(int ta, int tb, int64_t n_, int64_t m, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb,
               void* c) {
  const Table& t = table();
  auto go = [&](auto I0) {
    using I = decltype(I0);
    const I N = n<I>(n_), M = n<I>(m), K = n<I>(k), LA = n<I>(lda), LB = n<I>(ldb);
    if constexpr (std::is_same_v<T, float>) {
      reinterpret_cast<typename cblas_sgemm_sig<I>::type>(t.cblas_sgemm)(kRowMajor, ta, tb, N, M, K, 1.0f, a, LA, b, LB,
                                                                          0.0f, c, M);
    } else if constexpr (std::is_same_v<T, double>) {
      reinterpret_cast<typename cblas_dgemm_sig<I>::type>(t.cblas_dgemm)(kRowMajor, ta, tb, N, M, K, 1.0, a, LA, b, LB,
                                                                          0.0, c, M);
    } else {
      const T one(1), zero(0);
      void* f = std::is_same_v<T, std::complex<float>> ? t.cblas_cgemm : t.cblas_zgemm;
      reinterpret_cast<typename cblas_cgemm_sig<I>::type>(f)(kRowMajor, ta, tb, N, M, K, &one, a, LA, b, LB, &zero, c,
                                                             M);
    }
  };
  if (t.ilp64) go(int64_t{});
  else go(int{});
}

template <class T>
void gemm(int ta, int tb, int64_t n_, int64_t m, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb,
          void* c) {
  OneThread guard(compiled_call_on_one_thread(n_, m, k));
  gemm_call<T>(ta, tb, n_, m, k, a, lda, b, ldb, c);
}

template <class T>
void gemv(int tr, int64_t rows, int64_t cols, const void* a, int64_t lda, const void* x, int64_t incx, void* y) {
  // As gemm: OpenBLAS splits a gemv among its threads as it splits a gemm.
  OneThread guard(compiled_call_on_one_thread(rows, 1, cols));
  const Table& t = table();
  auto go = [&](auto I0) {
    using I = decltype(I0);
    const I M = n<I>(rows), N = n<I>(cols), LA = n<I>(lda), IX = n<I>(incx);
    if constexpr (std::is_same_v<T, float>) {
      reinterpret_cast<typename cblas_sgemv_sig<I>::type>(t.cblas_sgemv)(kRowMajor, tr, M, N, 1.0f, a, LA, x, IX, 0.0f,
                                                                          y, I(1));
    } else if constexpr (std::is_same_v<T, double>) {
      reinterpret_cast<typename cblas_dgemv_sig<I>::type>(t.cblas_dgemv)(kRowMajor, tr, M, N, 1.0, a, LA, x, IX, 0.0, y,
                                                                          I(1));
    } else {
      const T one(1), zero(0);
      void* f = std::is_same_v<T, std::complex<float>> ? t.cblas_cgemv : t.cblas_zgemv;
      reinterpret_cast<typename cblas_cgemv_sig<I>::type>(f)(kRowMajor, tr, M, N, &one, a, LA, x, IX, &zero, y, I(1));
    }
  };
  if (t.ilp64) go(int64_t{});
  else go(int{});
}

template <class T>
void dot(int64_t k, const void* x, int64_t incx, const void* y, int64_t incy, void* out) {
  const Table& t = table();
  auto go = [&](auto I0) {
    using I = decltype(I0);
    const I K = n<I>(k), IX = n<I>(incx), IY = n<I>(incy);
    if constexpr (std::is_same_v<T, float>) {
      *static_cast<float*>(out) = reinterpret_cast<typename cblas_sdot_sig<I>::type>(t.cblas_sdot)(K, x, IX, y, IY);
    } else if constexpr (std::is_same_v<T, double>) {
      *static_cast<double*>(out) = reinterpret_cast<typename cblas_ddot_sig<I>::type>(t.cblas_ddot)(K, x, IX, y, IY);
    } else {
      void* f = std::is_same_v<T, std::complex<float>> ? t.cblas_cdotu_sub : t.cblas_zdotu_sub;
      reinterpret_cast<typename cblas_cdotu_sub_sig<I>::type>(f)(K, x, IX, y, IY, out);
    }
  };
  if (t.ilp64) go(int64_t{});
  else go(int{});
}

template <class T>
void syrk(int tr, int64_t n_, int64_t k, const void* a, int64_t lda, void* c, int64_t ldc) {
  const Table& t = table();
  auto go = [&](auto I0) {
    using I = decltype(I0);
    const I N = n<I>(n_), K = n<I>(k), LA = n<I>(lda), LC = n<I>(ldc);
    if constexpr (std::is_same_v<T, float>) {
      reinterpret_cast<typename cblas_ssyrk_sig<I>::type>(t.cblas_ssyrk)(kRowMajor, kUpper, tr, N, K, 1.0f, a, LA, 0.0f,
                                                                          c, LC);
    } else if constexpr (std::is_same_v<T, double>) {
      reinterpret_cast<typename cblas_dsyrk_sig<I>::type>(t.cblas_dsyrk)(kRowMajor, kUpper, tr, N, K, 1.0, a, LA, 0.0, c,
                                                                          LC);
    } else {
      const T one(1), zero(0);
      void* f = std::is_same_v<T, std::complex<float>> ? t.cblas_csyrk : t.cblas_zsyrk;
      reinterpret_cast<typename cblas_csyrk_sig<I>::type>(f)(kRowMajor, kUpper, tr, N, K, &one, a, LA, &zero, c, LC);
    }
  };
  if (t.ilp64) go(int64_t{});
  else go(int{});
}

template <class T>
void axpy(int64_t k, const void* alpha, const void* x, int64_t incx, void* y, int64_t incy) {
  const Table& t = table();
  auto go = [&](auto I0) {
    using I = decltype(I0);
    const I K = n<I>(k), IX = n<I>(incx), IY = n<I>(incy);
    if constexpr (std::is_same_v<T, float>) {
      reinterpret_cast<typename cblas_saxpy_sig<I>::type>(t.cblas_saxpy)(K, *static_cast<const float*>(alpha), x, IX, y,
                                                                          IY);
    } else if constexpr (std::is_same_v<T, double>) {
      reinterpret_cast<typename cblas_daxpy_sig<I>::type>(t.cblas_daxpy)(K, *static_cast<const double*>(alpha), x, IX, y,
                                                                          IY);
    } else {
      void* f = std::is_same_v<T, std::complex<float>> ? t.cblas_caxpy : t.cblas_zaxpy;
      reinterpret_cast<typename cblas_caxpy_sig<I>::type>(f)(K, alpha, x, IX, y, IY);
    }
  };
  if (t.ilp64) go(int64_t{});
  else go(int{});
}

#define NPC_INST(T)                                                                                              \
  template void syrk<T>(int, int64_t, int64_t, const void*, int64_t, void*, int64_t);                           \
  template void axpy<T>(int64_t, const void*, const void*, int64_t, void*, int64_t);                            \
  template void gemm<T>(int, int, int64_t, int64_t, int64_t, const void*, int64_t, const void*, int64_t, void*); \
  template void gemv<T>(int, int64_t, int64_t, const void*, int64_t, const void*, int64_t, void*);              \
  template void dot<T>(int64_t, const void*, int64_t, const void*, int64_t, void*);
NPC_INST(float)
NPC_INST(double)
NPC_INST(std::complex<float>)
NPC_INST(std::complex<double>)
#undef NPC_INST

bool use_library(const std::string& path, const std::string& prefix, const std::string& suffix, bool ilp64) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return false;
  auto t = std::make_unique<Table>();
  t->name = path;
  t->ilp64 = ilp64;
  t->handle = h;
  t->prefix = prefix;
  t->suffix = suffix;
  bool ok = true;
#define NPC_X(fn, ret, params)                                              \
  t->fn = dlsym(h, (prefix + #fn + suffix).c_str());                       \
  ok = ok && t->fn != nullptr;
  NPC_BLAS_ENTRIES(NPC_X)
#undef NPC_X
  if (!ok) {
    dlclose(h);  // the handle only: a library NumPy loaded stays loaded
    return false;
  }
  (void)table();  // the system table exists first, so a later reset can find it
  std::lock_guard lk(g_mu);
  g_tables.push_back(std::move(t));
  g_table.store(g_tables.back().get(), std::memory_order_release);
  return true;
}

std::string use_loaded_numpy_blas() {
  if (const char* e = std::getenv("NPC_BLAS"); e && std::strcmp(e, "system") == 0) return "";
  std::vector<std::string> found;
#if defined(__linux__)
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const char* name = info->dlpi_name;
        if (name && std::strstr(name, "scipy_openblas")) static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &found);
#endif  // elsewhere the linked library stays
  for (const std::string& p : found) {
    // scipy-openblas64 (what NumPy's 64-bit wheels ship), then scipy-openblas32.
    if (use_library(p, "scipy_", "64_", true)) return p;
    if (use_library(p, "scipy_", "", false)) return p;
  }
  return "";
}

}  // namespace npc::ops::blas
