// Note [row passes]
// A BLAS gemv reads its whole matrix. Programs often compute two products with one matrix:
// BiCG's `q = A @ p` and `s = r @ A`, A^T (A x) as `A.T @ (A @ x)`. As two calls the matrix is
// read twice, and a matrix-vector product runs at the speed the matrix comes from memory
// (or from a large last-level cache): reading it once is the whole gain. A row pass walks
// P's rows once and, for each block of kRows rows, computes every dot product of those rows
// (`P @ v`: out[i] = P[i, :] . v) and adds the rows, scaled, into every column sum (`c @ P`:
// out += c[i] P[i, :]). The work of a block is a few steps, each one loop over the columns:
// a step takes a dot and a column sum together, so each element is loaded once for both
// (BiCG in one loop). A column sum's coefficients may be the results of a dot product of the
// same pass (A^T (A x): row i's dot with x is row i's coefficient), so a chain of two products
// also reads P once: such a sum runs one block behind, in the loop of the next block's first
// step, on rows that the loop before brought into the cache. The last step prefetches the
// next block's rows. Which steps share a loop changes no result: every product keeps its own
// order of operations.
//
// The rows are cut into fixed chunks (by the shape alone: a power of two, at most kMaxChunks,
// at least kChunkRows rows each, so that 2, 4, 8 or 16 threads get as many each), run on the
// thread pool; each chunk sums its rows' contributions to a column sum into an accumulator of
// its own, and the accumulators are added in chunk order. So the summation order, and the
// bits of every result, depend on the shape only: not on the thread count, nor on the
// instruction set (Note [vector loops] in reduce_simd.cpp: each loop is a template over the
// vector width, instantiated for AVX-512, AVX2 and the baseline; a dot puts element j in lane
// j % (64 / itemsize) whatever the width and combines the lanes pairwise; column sums are
// element by element; no multiply-add contraction). NumPy leaves the order of its BLAS's sums
// unspecified; the results differ from a gemv's in the last bits only.
//
// Note [row pass bounds]
// A sum that overflows in one order may not in another: +M, -M, +M, -M with M three quarters
// of the largest double is 0 summed one way and inf (with NumPy's overflow warning) another.
// The pass also reports the largest magnitude of the matrix's elements, `a`. No partial sum of
// a product over n terms, in any order, exceeds n * a * (largest |v|): where that bound stays
// below half the dtype's largest value, every order is finite as NumPy's is; otherwise (and
// where a result is not finite) the caller computes the products one by one, as NumPy does.
#include "ops/matvec_pass.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.hpp"
#include "ops/exec.hpp"
#include "ops/vector_isa.hpp"

#if defined(__GNUC__)
// Vectors are only passed within this file (and inlined): no ABI to keep.
#pragma GCC diagnostic ignored "-Wpsabi"
// GCC 12 reports the coefficient vectors of step() as maybe uninitialised (they are set).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace npc::ops {
#if NPC_SIMD_VECTORS
namespace {

using simd::Avx2;
using simd::Avx512;
using simd::Sse2;
using simd::Vec;

constexpr int kLaneBytes = 64;          // a dot's lanes: 8 doubles or 16 floats
constexpr int kRows = 4;                // rows per block
constexpr int64_t kChunkRows = 64;      // fewest rows per chunk (a column sum's accumulator each)
constexpr int64_t kMaxChunks = 16;      // a power of two

// A loop over the columns of one block: at most one dot product and one column sum, each
// element of the rows loaded once for both (Note [row passes]).
struct Step {
  int dot = -1;  // the product index of the dot, or -1
  int sum = -1;  // the product index of the column sum, or -1
};

// The larger magnitude of a and b, NaN when either is (Note [row pass bounds]).
template <class T>
T larger(T a, T b) {
  return a > b || std::isnan(a) ? a : b;
}

template <class Isa, class T>
struct Lanes {
  using V = typename Vec<T, Isa::kBytes>::type;
  using IT = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
  using I = typename Vec<IT, Isa::kBytes>::type;
  static constexpr int L = Isa::kBytes / static_cast<int>(sizeof(T));  // elements per vector
  static constexpr int LN = kLaneBytes / static_cast<int>(sizeof(T));  // lanes of a dot
  static constexpr int NV = LN / L;                                     // vectors of lanes
};

// Rows r[0..NR) of a block: the dot `x` into dot_out[0..NR) (when D) and the rows scaled by
// coef[0..NR) added into acc (when S); when C, also rows rc[0..NR) of another block scaled by
// coefc[0..NR) added into accc (the column sum of a dot of the pass, a block behind: Note [row
// passes]); with TRACK, r's largest magnitude into top and *top_s (Note [row pass bounds]).
// With `prefetch`, the rows `next` are prefetched. Vector operations appear only here (Note
// [vector loops]).
template <class Isa, class T, int NR, bool D, bool S, bool C, bool TRACK>
[[gnu::always_inline]] inline void step(const T* const* rows, const T* const* next_rows, bool prefetch, int64_t cols, const T* x, T* dot_out,
          const T* coef, T* acc, const T* const* rows_c, const T* coefc, T* accc,
          typename Lanes<Isa, T>::I* top_out, T* top_s_out) {
  using LS = Lanes<Isa, T>;
  using V = typename LS::V;
  using I = typename LS::I;
  using IT = typename LS::IT;
  constexpr int L = LS::L, LN = LS::LN, NV = LS::NV;
  // Local copies: the stores into acc could alias the arrays passed, which would otherwise be
  // read again after each store.
  const T* r[NR];
  const T* next[NR];
  const T* rc[NR];
  I top[NR];
  T top_s = *top_s_out;
  for (int q = 0; q < NR; ++q) {
    r[q] = rows[q];
    next[q] = next_rows[q];
    rc[q] = C ? rows_c[q] : nullptr;
    top[q] = top_out[q];
  }
  const I magnitude = I{} + std::numeric_limits<IT>::max();  // every bit but the sign
  V s[NR][NV] = {};
  V cv[NR] = {}, cc[NR] = {};
  for (int q = 0; q < NR; ++q) {  // c in every lane (x - 0 is x, -0 included)
    if constexpr (S) cv[q] = coef[q] - V{};
    if constexpr (C) cc[q] = coefc[q] - V{};
  }
  // Row q's elements [j, j + L) scaled by c[q], added over q and then into a[j..].
  auto add_rows = [](const V* c, const V* rv, T* a) __attribute__((always_inline)) {
    V t = c[0] * rv[0];
    for (int q = 1; q < NR; ++q) t = t + c[q] * rv[q];
    V av;
    std::memcpy(&av, a, sizeof(V));
    av = av + t;
    std::memcpy(a, &av, sizeof(V));
  };
  auto column = [&](int64_t j, const V* rv) __attribute__((always_inline)) {  // everything but the dot of vector j
    if constexpr (TRACK)
      for (int q = 0; q < NR; ++q) {
        const I a = reinterpret_cast<I>(rv[q]) & magnitude;
        top[q] = top[q] > a ? top[q] : a;
      }
    if constexpr (S) add_rows(cv, rv, acc + j);
    if constexpr (C) {
      V w[NR];
      for (int q = 0; q < NR; ++q) std::memcpy(&w[q], rc[q] + j, sizeof(V));
      add_rows(cc, w, accc + j);
    }
  };
  int64_t j = 0;
  for (; j + LN <= cols; j += LN) {
    if (prefetch)
      for (int q = 0; q < NR; ++q) __builtin_prefetch(next[q] + j, 0, 3);
    for (int u = 0; u < NV; ++u) {
      V rv[NR];
      for (int q = 0; q < NR; ++q) std::memcpy(&rv[q], r[q] + j + u * L, sizeof(V));
      if constexpr (D) {
        V xv;
        std::memcpy(&xv, x + j + u * L, sizeof(V));
        for (int q = 0; q < NR; ++q) s[q][u] = s[q][u] + rv[q] * xv;
      }
      column(j + u * L, rv);
    }
  }
  if constexpr (D) {
    for (int q = 0; q < NR; ++q) {
      T lane[LN];
      std::memcpy(lane, s[q], sizeof(lane));
      for (int64_t jj = j; jj < cols; ++jj) lane[jj - j] = lane[jj - j] + r[q][jj] * x[jj];
      for (int w = LN / 2; w >= 1; w /= 2)
        for (int t = 0; t < w; ++t) lane[t] = lane[2 * t] + lane[2 * t + 1];
      dot_out[q] = lane[0];
    }
  }
  for (; j + L <= cols; j += L) {
    V rv[NR];
    for (int q = 0; q < NR; ++q) std::memcpy(&rv[q], r[q] + j, sizeof(V));
    column(j, rv);
  }
  for (; j < cols; ++j) {
    if constexpr (S) {
      T t = coef[0] * r[0][j];
      for (int q = 1; q < NR; ++q) t = t + coef[q] * r[q][j];
      acc[j] = acc[j] + t;
    }
    if constexpr (C) {
      T t = coefc[0] * rc[0][j];
      for (int q = 1; q < NR; ++q) t = t + coefc[q] * rc[q][j];
      accc[j] = accc[j] + t;
    }
    if constexpr (TRACK)
      for (int q = 0; q < NR; ++q) top_s = larger(top_s, std::abs(r[q][j]));
  }
  if constexpr (TRACK) {
    for (int q = 0; q < NR; ++q) top_out[q] = top[q];
    *top_s_out = top_s;
  }
}

// One block's steps (Note [row passes]): steps [0, nplain) on rows r[0..NR) at row i, and the
// column sums of the pass's dots, steps [nplain, ns), on rows rp[0..NR) at row ip. Without
// rp, every step runs on r; without r, only the column sums of dots, on rp. With both, rp is
// the block before r, and the first of those sums runs in the loop of r's first step. The
// first step on r tracks its largest magnitude into *largest (it loads every element); the
// last step prefetches the rows `next`.
template <class Isa, class T, int NR>
void block(const T* const* r, int64_t i, const T* const* rp, int64_t ip, const T* const* next, int64_t cols,
           const PassProduct* prods, const Step* steps, int nplain, int ns, T* const* accs, T* largest) {
  using LS = Lanes<Isa, T>;
  typename LS::I top[NR];
  T top_s = *largest;
  for (int q = 0; q < NR; ++q) top[q] = typename LS::I{};
  const bool fuse = r && rp;
  for (int k = 0; k < ns; ++k) {
    const bool on_prev = k >= nplain && rp;
    if (on_prev ? fuse && k == nplain : !r) continue;  // (done in step 0, or no rows)
    const T* const* rows = on_prev ? rp : r;
    const int64_t at = on_prev ? ip : i;
    const PassProduct* d = steps[k].dot >= 0 ? &prods[steps[k].dot] : nullptr;
    const PassProduct* s = steps[k].sum >= 0 ? &prods[steps[k].sum] : nullptr;
    const T* x = d ? reinterpret_cast<const T*>(d->v) : nullptr;
    T* dout = d ? reinterpret_cast<T*>(d->out) + at : nullptr;
    const T* coef = s ? reinterpret_cast<const T*>(s->from >= 0 ? prods[s->from].out : s->v) + at : nullptr;
    T* acc = s ? accs[steps[k].sum] : nullptr;
    const PassProduct* c = fuse && k == 0 ? &prods[steps[nplain].sum] : nullptr;
    const T* coefc = c ? reinterpret_cast<const T*>(prods[c->from].out) + ip : nullptr;
    T* accc = c ? accs[steps[nplain].sum] : nullptr;
    const bool pf = k == ns - 1 || (fuse && nplain + 1 == ns && k == nplain - 1);
#define NPC_STEP(D, S, C, TRACK) \
  step<Isa, T, NR, D, S, C, TRACK>(rows, next, pf, cols, x, dout, coef, acc, rp, coefc, accc, top, &top_s)
    if (k == 0 && r) {
      if (c) {
        if (s) NPC_STEP(true, true, true, true);
        else NPC_STEP(true, false, true, true);
      } else if (d && s) NPC_STEP(true, true, false, true);
      else if (d) NPC_STEP(true, false, false, true);
      else NPC_STEP(false, true, false, true);
    } else {
      if (d && s) NPC_STEP(true, true, false, false);
      else if (d) NPC_STEP(true, false, false, false);
      else NPC_STEP(false, true, false, false);
    }
#undef NPC_STEP
  }
  typename LS::IT bits = 0;
  for (int q = 0; q < NR; ++q)
    for (int l = 0; l < LS::L; ++l) bits = bits > top[q][l] ? bits : top[q][l];
  T m;
  std::memcpy(&m, &bits, sizeof(m));  // a NaN's bits exceed infinity's: NaN
  *largest = larger(top_s, m);
}

// Rows [lo, hi) of P in blocks of kRows: steps [0, nplain) of every block, and its steps
// [nplain, ns) (column sums of the pass's dots) in the loop of the next block's first step.
template <class Isa, class T>
void chunk_rows(const std::byte* p, int64_t rs, int64_t cols, int64_t lo, int64_t hi, const PassProduct* prods,
                const Step* steps, int nplain, int ns, T* const* accs, T* largest) {
  auto row = [&](int64_t k) { return reinterpret_cast<const T*>(p + k * rs); };
  const T* r[kRows];
  const T* prev[kRows];
  const T* next[kRows];
  const bool piped = nplain < ns;
  int64_t i = lo;
  for (; i + kRows <= hi; i += kRows) {
    for (int q = 0; q < kRows; ++q) {
      r[q] = row(i + q);
      next[q] = row(std::min(i + kRows + q, hi - 1));
    }
    const bool behind = piped && i > lo;
    // (The first block runs its steps [0, nplain) only: the next one runs the rest.)
    block<Isa, T, kRows>(r, i, behind ? prev : nullptr, i - kRows, next, cols, prods, steps, piped ? nplain : ns,
                         piped && !behind ? nplain : ns, accs, largest);
    std::copy(r, r + kRows, prev);
  }
  if (piped && i > lo)  // the last block's column sums of dots
    block<Isa, T, kRows>(nullptr, 0, prev, i - kRows, next, cols, prods, steps, nplain, ns, accs, largest);
  for (; i < hi; ++i) {
    r[0] = row(i);
    next[0] = row(std::min(i + 1, hi - 1));
    block<Isa, T, 1>(r, i, nullptr, 0, next, cols, prods, steps, ns, ns, accs, largest);
  }
}

// (block is instantiated here too: a template instantiated implicitly takes the instruction
// set of its definition, and step() is inlined into block.)
#define NPC_PASS_INSTANTIATE(I)                                                                              \
  template void block<I, double, kRows>(const double* const*, int64_t, const double* const*, int64_t,       \
                                        const double* const*, int64_t, const PassProduct*, const Step*, int, \
                                        int, double* const*, double*);                                       \
  template void block<I, double, 1>(const double* const*, int64_t, const double* const*, int64_t,           \
                                    const double* const*, int64_t, const PassProduct*, const Step*, int, int, \
                                    double* const*, double*);                                                \
  template void block<I, float, kRows>(const float* const*, int64_t, const float* const*, int64_t,          \
                                       const float* const*, int64_t, const PassProduct*, const Step*, int,   \
                                       int, float* const*, float*);                                          \
  template void block<I, float, 1>(const float* const*, int64_t, const float* const*, int64_t,              \
                                   const float* const*, int64_t, const PassProduct*, const Step*, int, int,   \
                                   float* const*, float*);                                                   \
  template void chunk_rows<I, double>(const std::byte*, int64_t, int64_t, int64_t, int64_t, const PassProduct*, \
                                      const Step*, int, int, double* const*, double*);                          \
  template void chunk_rows<I, float>(const std::byte*, int64_t, int64_t, int64_t, int64_t, const PassProduct*,  \
                                     const Step*, int, int, float* const*, float*);

NPC_PASS_INSTANTIATE(Sse2)
#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2")
NPC_PASS_INSTANTIATE(Avx2)
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f")
NPC_PASS_INSTANTIATE(Avx512)
#pragma GCC pop_options
#endif
#undef NPC_PASS_INSTANTIATE

template <class T>
using ChunkFn = void (*)(const std::byte*, int64_t, int64_t, int64_t, int64_t, const PassProduct*, const Step*, int,
                         int, T* const*, T*);

// The loop for vectors of `bytes` bytes (0: the widest the CPU has), or null: the CPU lacks it.
template <class T>
ChunkFn<T> chunk_fn(int bytes) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f"), avx2 = __builtin_cpu_supports("avx2");
  if (bytes == 0) bytes = avx512 ? 64 : avx2 ? 32 : 16;
  if (bytes == 64) return avx512 ? &chunk_rows<Avx512, T> : nullptr;
  if (bytes == 32) return avx2 ? &chunk_rows<Avx2, T> : nullptr;
#endif
  return bytes == 0 || bytes == 16 ? &chunk_rows<Sse2, T> : nullptr;
}

template <class T>
double pass(ChunkFn<T> fn, const std::byte* p, int64_t rows, int64_t cols, int64_t rs,
            std::span<const PassProduct> products) {
  const int np = static_cast<int>(products.size());
  // A power of two: as many chunks on each thread of 2, 4, 8 or 16.
  int64_t chunks = 1;
  while (chunks < kMaxChunks && rows / (2 * chunks) >= kChunkRows) chunks *= 2;
  // Column sums: chunk 0 adds into the result itself, chunk c > 0 into scratch[c - 1].
  int sums = 0;
  for (const PassProduct& pr : products) sums += pr.dot ? 0 : 1;
  std::vector<T> scratch(static_cast<size_t>((chunks - 1) * sums * cols), T(0));
  for (const PassProduct& pr : products)
    if (!pr.dot) std::memset(pr.out, 0, static_cast<size_t>(cols) * sizeof(T));
  std::vector<T*> accs(static_cast<size_t>(chunks * np), nullptr);
  for (int64_t c = 0, s = 0; c < chunks; ++c)
    for (int k = 0; k < np; ++k) {
      if (products[static_cast<size_t>(k)].dot) continue;
      accs[static_cast<size_t>(c * np + k)] =
          c == 0 ? reinterpret_cast<T*>(products[static_cast<size_t>(k)].out) : scratch.data() + (s++) * cols;
    }
  // The steps (Note [row passes]): each dot with a column sum whose coefficients are given,
  // then the products left, the column sums of this pass's dots last.
  std::vector<int> dots, given, chained;
  for (int k = 0; k < np; ++k)
    (products[static_cast<size_t>(k)].dot ? dots : products[static_cast<size_t>(k)].from < 0 ? given : chained).push_back(k);
  std::vector<Step> steps;
  for (size_t k = 0; k < std::max(dots.size(), given.size()); ++k)
    steps.push_back({k < dots.size() ? dots[k] : -1, k < given.size() ? given[k] : -1});
  const int nplain = static_cast<int>(steps.size());
  for (int k : chained) steps.push_back({-1, k});
  const int ns = static_cast<int>(steps.size());
  std::vector<T> tops(static_cast<size_t>(chunks), T(0));
  const int nt = parallel::threads_for(rows * cols, np);
  // The floating-point flags each chunk raises, whichever thread runs it, reach the calling
  // thread (where NumPy's single-threaded gemv would raise them: underflow under errstate).
  std::atomic<int> flags{0};
  parallel::for_chunks(nt, chunks, [&](int64_t c) {
    const int64_t lo = rows / chunks * c + std::min(c, rows % chunks);
    const int64_t hi = rows / chunks * (c + 1) + std::min(c + 1, rows % chunks);
    const int before = read_fpe();
    clear_fpe();
    fn(p, rs, cols, lo, hi, products.data(), steps.data(), nplain, ns, accs.data() + c * np, tops.data() + c);
    flags.fetch_or(read_fpe(), std::memory_order_relaxed);
    clear_fpe();
    raise_fpe(before);
  });
  raise_fpe(flags.load());
  double largest = 0;
  for (int64_t c = 0; c < chunks; ++c) largest = larger(largest, static_cast<double>(tops[c]));
  if (chunks == 1) return largest;
  for (int k = 0; k < np; ++k) {
    if (products[static_cast<size_t>(k)].dot) continue;
    T* __restrict out = reinterpret_cast<T*>(products[static_cast<size_t>(k)].out);
    for (int64_t c = 1; c < chunks; ++c) {
      const T* __restrict a = accs[static_cast<size_t>(c * np + k)];
      for (int64_t j = 0; j < cols; ++j) out[j] = out[j] + a[j];
    }
  }
  return largest;
}

}  // namespace

bool matvec_pass_isa(int vector_bytes, DType t, const std::byte* p, int64_t rows, int64_t cols, int64_t row_stride,
                     std::span<const PassProduct> products, double* largest) {
  for (size_t k = 0; k < products.size(); ++k) {
    const PassProduct& pr = products[k];
    if (!pr.dot && pr.from >= 0 && (static_cast<size_t>(pr.from) >= k || !products[static_cast<size_t>(pr.from)].dot))
      return false;
  }
  if (rows <= 0 || cols <= 0) return false;
  double m = 0;
  if (t == DType::Float64) {
    ChunkFn<double> fn = chunk_fn<double>(vector_bytes);
    if (!fn) return false;
    m = pass<double>(fn, p, rows, cols, row_stride, products);
  } else if (t == DType::Float32) {
    ChunkFn<float> fn = chunk_fn<float>(vector_bytes);
    if (!fn) return false;
    m = pass<float>(fn, p, rows, cols, row_stride, products);
  } else {
    return false;
  }
  if (largest) *largest = m;
  return true;
}

bool matvec_pass(DType t, const std::byte* p, int64_t rows, int64_t cols, int64_t row_stride,
                 std::span<const PassProduct> products, double* largest) {
  return matvec_pass_isa(0, t, p, rows, cols, row_stride, products, largest);
}
#else
bool matvec_pass_isa(int, DType, const std::byte*, int64_t, int64_t, int64_t, std::span<const PassProduct>, double*) {
  return false;
}
bool matvec_pass(DType, const std::byte*, int64_t, int64_t, int64_t, std::span<const PassProduct>, double*) {
  return false;
}
#endif

}  // namespace npc::ops
