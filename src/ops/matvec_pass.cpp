// Note [row passes]
// A BLAS gemv reads its whole matrix. Programs often compute two products with one matrix:
// BiCG's `q = A @ p` and `s = r @ A`, A^T (A x) as `A.T @ (A @ x)`. As two calls the matrix is
// read twice, and a matrix-vector product runs at the speed the matrix comes from memory
// (or from a large last-level cache): reading it once is the whole gain. A row pass walks
// P's rows once and, for each block of kRows rows, computes every dot product of those rows
// (`P @ v`: out[i] = P[i, :] . v) and adds the rows, scaled, into every column sum (`c @ P`:
// out += c[i] P[i, :]). A column sum's coefficients may be the results of a dot product of
// the same pass, computed for the block just before (A^T (A x): row i's dot with x is
// row i's coefficient), so a chain of two products also reads P once. The last product's loop
// prefetches the next block's rows, which then come from the cache instead of memory.
//
// The rows are cut into fixed chunks (by the shape alone, kChunkRows rows each, at most
// kMaxChunks), run on the thread pool; each chunk sums its rows' contributions to a column sum
// into an accumulator of its own, and the accumulators are added in chunk order. So the
// summation order, and the bits of every result, depend on the shape only: not on the thread
// count, nor on the instruction set (Note [vector loops] in reduce_simd.cpp: each loop is a
// template over the vector width, instantiated for AVX-512, AVX2 and the baseline; a dot puts
// element j in lane j % (64 / itemsize) whatever the width and combines the lanes pairwise;
// column sums are element by element; no multiply-add contraction). NumPy leaves the order of
// its BLAS's sums unspecified; the results differ from a gemv's in the last bits only.
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
constexpr int64_t kChunkRows = 256;     // rows per chunk (a column sum's accumulator each)
constexpr int64_t kMaxChunks = 16;

// Rows [i, i + NR) (row q at r[q]): every product's part, and the rows' largest magnitude
// into *largest (Note [row pass bounds]), tracked in the first product's loop, which loads
// every element anyway. Vector operations appear only here (Note [vector loops]).
template <class Isa, class T, int NR>
void block(const T* const* r, const T* const* next, int64_t i, int64_t cols, const PassProduct* prods, int np,
           T* const* accs, T* largest) {
  using V = typename Vec<T, Isa::kBytes>::type;
  using IT = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
  using I = typename Vec<IT, Isa::kBytes>::type;
  constexpr int L = Isa::kBytes / static_cast<int>(sizeof(T));  // elements per vector
  constexpr int LN = kLaneBytes / static_cast<int>(sizeof(T));  // lanes of a dot
  constexpr int NV = LN / L;                                     // vectors of lanes
  const I magnitude = I{} + std::numeric_limits<IT>::max();  // every bit but the sign
  // The magnitudes' bits as integers (ordered as the magnitudes are): one integer max per
  // element, per row one chain, so that the latencies overlap.
  I top[NR];
  T top_s = *largest;
  for (int q = 0; q < NR; ++q) top[q] = I{};
  for (int k = 0; k < np; ++k) {
    const PassProduct& pr = prods[k];
    const bool track = k == 0;
    if (pr.dot) {
      const T* v = reinterpret_cast<const T*>(pr.v);
      V s[NR][NV];
      for (int q = 0; q < NR; ++q)
        for (int u = 0; u < NV; ++u) s[q][u] = V{};
      int64_t j = 0;
      for (; j + LN <= cols; j += LN)
        for (int u = 0; u < NV; ++u) {
          if (k == np - 1)
            for (int q = 0; q < NR; ++q) __builtin_prefetch(next[q] + j + u * L, 0, 3);
          V xv;
          std::memcpy(&xv, v + j + u * L, sizeof(V));
          for (int q = 0; q < NR; ++q) {
            V rv;
            std::memcpy(&rv, r[q] + j + u * L, sizeof(V));
            s[q][u] = s[q][u] + rv * xv;
            if (track) {
              const I a = reinterpret_cast<I>(rv) & magnitude;
              top[q] = top[q] > a ? top[q] : a;
            }
          }
        }
      T* out = reinterpret_cast<T*>(pr.out);
      for (int q = 0; q < NR; ++q) {
        T lane[LN];
        std::memcpy(lane, s[q], sizeof(lane));
        for (int64_t jj = j; jj < cols; ++jj) {
          lane[jj - j] = lane[jj - j] + r[q][jj] * v[jj];
          if (track) top_s = top_s > std::abs(r[q][jj]) ? top_s : std::abs(r[q][jj]);
        }
        for (int w = LN / 2; w >= 1; w /= 2)
          for (int t = 0; t < w; ++t) lane[t] = lane[2 * t] + lane[2 * t + 1];
        out[i + q] = lane[0];
      }
    } else {
      const T* cs = reinterpret_cast<const T*>(pr.from >= 0 ? prods[pr.from].out : pr.v);
      T c[NR];
      V cv[NR];
      for (int q = 0; q < NR; ++q) {
        c[q] = cs[i + q];
        cv[q] = c[q] - V{};  // c in every lane (x - 0 is x, -0 included)
      }
      T* a = accs[k];
      int64_t j = 0;
      for (; j + L <= cols; j += L) {
        if (k == np - 1)
          for (int q = 0; q < NR; ++q) __builtin_prefetch(next[q] + j, 0, 3);
        V rv, av;
        std::memcpy(&rv, r[0] + j, sizeof(V));
        V t = cv[0] * rv;
        if (track) {
          const I m = reinterpret_cast<I>(rv) & magnitude;
          top[0] = top[0] > m ? top[0] : m;
        }
        for (int q = 1; q < NR; ++q) {
          std::memcpy(&rv, r[q] + j, sizeof(V));
          t = t + cv[q] * rv;
          if (track) {
            const I m = reinterpret_cast<I>(rv) & magnitude;
            top[q] = top[q] > m ? top[q] : m;
          }
        }
        std::memcpy(&av, a + j, sizeof(V));
        av = av + t;
        std::memcpy(a + j, &av, sizeof(V));
      }
      for (; j < cols; ++j) {
        T t = c[0] * r[0][j];
        for (int q = 1; q < NR; ++q) t = t + c[q] * r[q][j];
        a[j] = a[j] + t;
        if (track)
          for (int q = 0; q < NR; ++q) top_s = top_s > std::abs(r[q][j]) ? top_s : std::abs(r[q][j]);
      }
    }
  }
  IT bits = 0;
  for (int q = 0; q < NR; ++q)
    for (int l = 0; l < L; ++l) bits = bits > top[q][l] ? bits : top[q][l];
  T m;
  std::memcpy(&m, &bits, sizeof(m));  // a NaN's bits exceed infinity's: NaN
  *largest = top_s > m || std::isnan(top_s) ? top_s : m;
}

// Rows [lo, hi) of P in blocks of kRows.
template <class Isa, class T>
void chunk_rows(const std::byte* p, int64_t rs, int64_t cols, int64_t lo, int64_t hi, const PassProduct* prods, int np,
                T* const* accs, T* largest) {
  const T* r[kRows];
  const T* next[kRows];
  int64_t i = lo;
  for (; i + kRows <= hi; i += kRows) {
    for (int q = 0; q < kRows; ++q) {
      r[q] = reinterpret_cast<const T*>(p + (i + q) * rs);
      next[q] = reinterpret_cast<const T*>(p + std::min(i + kRows + q, hi - 1) * rs);
    }
    block<Isa, T, kRows>(r, next, i, cols, prods, np, accs, largest);
  }
  for (; i < hi; ++i) {
    r[0] = reinterpret_cast<const T*>(p + i * rs);
    next[0] = reinterpret_cast<const T*>(p + std::min(i + 1, hi - 1) * rs);
    block<Isa, T, 1>(r, next, i, cols, prods, np, accs, largest);
  }
}

#define NPC_PASS_INSTANTIATE(I)                                                                                   \
  template void block<I, double, kRows>(const double* const*, const double* const*, int64_t, int64_t, const PassProduct*, int,      \
                                        double* const*, double*);                                             \
  template void block<I, double, 1>(const double* const*, const double* const*, int64_t, int64_t, const PassProduct*, int,          \
                                    double* const*, double*);                                                 \
  template void block<I, float, kRows>(const float* const*, const float* const*, int64_t, int64_t, const PassProduct*, int,        \
                                       float* const*, float*);                                                \
  template void block<I, float, 1>(const float* const*, const float* const*, int64_t, int64_t, const PassProduct*, int,            \
                                   float* const*, float*);                                                    \
  template void chunk_rows<I, double>(const std::byte*, int64_t, int64_t, int64_t, int64_t, const PassProduct*, \
                                      int, double* const*, double*);                                          \
  template void chunk_rows<I, float>(const std::byte*, int64_t, int64_t, int64_t, int64_t, const PassProduct*,  \
                                     int, float* const*, float*);

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
using ChunkFn = void (*)(const std::byte*, int64_t, int64_t, int64_t, int64_t, const PassProduct*, int, T* const*, T*);

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
  const int64_t chunks = std::clamp<int64_t>(rows / kChunkRows, 1, kMaxChunks);
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
    fn(p, rs, cols, lo, hi, products.data(), np, accs.data() + c * np, tops.data() + c);
    flags.fetch_or(read_fpe(), std::memory_order_relaxed);
    clear_fpe();
    raise_fpe(before);
  });
  raise_fpe(flags.load());
  double largest = 0;
  for (int64_t c = 0; c < chunks; ++c) largest = largest > tops[c] ? largest : static_cast<double>(tops[c]);
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
