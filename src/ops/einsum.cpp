// numpy.einsum of two operands as a direct sum of products (einsum_pair, npc/linalg.hpp).
//
// Note [einsum sum of products]
// numpy.einsum (optimize=False, NumPy's default) never calls BLAS: it runs one loop over all
// labels that multiplies the operands' elements and adds each product into its output
// element, which starts at zero. npc's einsum builds most contractions as batched matrix
// products (python/npc/_linalg.py), which pays off when the contracted extent is large; when
// it is small (a 3x3 convolution written with einsum contracts over 3 channels) the operand
// copies into matrix layout, a BLAS call with an inner dimension of 3 (and OpenBLAS's thread
// start-up on a large product) and a transposed result cost several times NumPy's loop.
// einsum_pair is that loop: for each row of the output (all output labels but the last),
// the row is zeroed, then for each combination of the contracted labels (in ascending order,
// the last label fastest) the products along the row are added to it. Each output element
// thus receives its products in the order NumPy's loop adds them when its contracted labels
// are outer to the row (the case of one contracted label whatever NumPy's loop order), with
// NumPy's own complex product formula and no fused multiply-add (-ffp-contract=off).
// Floating-point errors are not reported, as numpy.einsum does not report them.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/dispatch.hpp"
#include "ops/blas.hpp"
#include "npc/creation.hpp"
#include "npc/errors.hpp"
#include "npc/linalg.hpp"
#include "ops/exec.hpp"
#include "core/parallel.hpp"

namespace npc {
namespace {

// row[l] = base[l] + x[l * sx] * y[l * sy] for l < n, base the row itself or zeros (`first`:
// the first product of each element, added to the zero it starts from). Strides in elements;
// 0 repeats one value.
template <class T>
[[gnu::always_inline]] inline void add_products(T* __restrict row, const T* x, int64_t sx, const T* y, int64_t sy,
                                                int64_t n, bool first) {
  if constexpr (detail::is_complex_v<T>) {
    using R = typename T::value_type;
    R* o = reinterpret_cast<R*>(row);
    const R* xr = reinterpret_cast<const R*>(x);
    const R* yr = reinterpret_cast<const R*>(y);
    for (int64_t l = 0; l < n; ++l) {
      const R a = xr[2 * l * sx], b = xr[2 * l * sx + 1], c = yr[2 * l * sy], d = yr[2 * l * sy + 1];
      const R re0 = first ? R(0) : o[2 * l], im0 = first ? R(0) : o[2 * l + 1];
      o[2 * l] = re0 + (a * c - b * d);
      o[2 * l + 1] = im0 + (a * d + b * c);
    }
  } else if (first) {
    if (sx == 1 && sy == 0) {
      const T v = *y;
      for (int64_t l = 0; l < n; ++l) row[l] = T(0) + x[l] * v;
    } else if (sx == 0 && sy == 1) {
      const T v = *x;
      for (int64_t l = 0; l < n; ++l) row[l] = T(0) + v * y[l];
    } else {
      for (int64_t l = 0; l < n; ++l) row[l] = T(0) + x[l * sx] * y[l * sy];
    }
  } else {
    if (sx == 1 && sy == 0) {
      const T v = *y;
      for (int64_t l = 0; l < n; ++l) row[l] = row[l] + x[l] * v;
    } else if (sx == 0 && sy == 1) {
      const T v = *x;
      for (int64_t l = 0; l < n; ++l) row[l] = row[l] + v * y[l];
    } else if (sx == 1 && sy == 1) {
      for (int64_t l = 0; l < n; ++l) row[l] = row[l] + x[l] * y[l];
    } else {
      for (int64_t l = 0; l < n; ++l) row[l] = row[l] + x[l * sx] * y[l * sy];
    }
  }
}

struct Plan {
  std::vector<int64_t> outer_ext, outer_a, outer_b, outer_o;  // output labels but the last
  int64_t outer_count = 1;
  int64_t n = 1, sa = 0, sb = 0;                             // the row: last output label
  std::vector<int64_t> ca, cb;                                // byte offsets per contracted combination
};

// Output rows [lo, hi): the row offsets follow the outer labels as an odometer.
template <class T>
[[gnu::always_inline]] inline void rows_body(const Plan& p, const std::byte* a, const std::byte* b, std::byte* out,
                                             int64_t lo, int64_t hi) {
  const int64_t isz = static_cast<int64_t>(sizeof(T));
  const int64_t K = static_cast<int64_t>(p.ca.size());
  const int64_t sa = p.sa / isz, sb = p.sb / isz;
  const int nd = static_cast<int>(p.outer_ext.size());
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t oa = 0, ob = 0, oo = 0, rem = lo;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rem % p.outer_ext[d];
    rem /= p.outer_ext[d];
    oa += idx[d] * p.outer_a[d];
    ob += idx[d] * p.outer_b[d];
    oo += idx[d] * p.outer_o[d];
  }
  for (int64_t r = lo; r < hi; ++r) {
    T* row = reinterpret_cast<T*>(out + oo);
    if (K == 0) std::fill(row, row + p.n, T(0));
    for (int64_t k = 0; k < K; ++k)
      add_products(row, reinterpret_cast<const T*>(a + oa + p.ca[k]), sa, reinterpret_cast<const T*>(b + ob + p.cb[k]),
                   sb, p.n, k == 0);
    for (int d = nd - 1; d >= 0; --d) {
      oa += p.outer_a[d];
      ob += p.outer_b[d];
      oo += p.outer_o[d];
      if (++idx[d] < p.outer_ext[d]) break;
      oa -= p.outer_a[d] * p.outer_ext[d];
      ob -= p.outer_b[d] * p.outer_ext[d];
      oo -= p.outer_o[d] * p.outer_ext[d];
      idx[d] = 0;
    }
  }
}

// The row loop compiled for the CPU's vector width (Note [multiversioned loops] in loops.hpp):
// the same operations in the same order, so every version gives the same bits.
template <class T>
void rows_base(const Plan& p, const std::byte* a, const std::byte* b, std::byte* out, int64_t lo, int64_t hi) {
  rows_body<T>(p, a, b, out, lo, hi);
}
#if NPC_MULTIVERSION
template <class T>
NPC_TARGET_AVX2 void rows_avx2(const Plan& p, const std::byte* a, const std::byte* b, std::byte* out, int64_t lo,
                               int64_t hi) {
  rows_body<T>(p, a, b, out, lo, hi);
}
template <class T>
NPC_TARGET_AVX512 void rows_avx512(const Plan& p, const std::byte* a, const std::byte* b, std::byte* out, int64_t lo,
                                   int64_t hi) {
  rows_body<T>(p, a, b, out, lo, hi);
}
#endif

template <class T>
void rows(const Plan& p, const std::byte* a, const std::byte* b, std::byte* out, int64_t lo, int64_t hi) {
#if NPC_MULTIVERSION
  // Complex rows stay on the baseline instructions: with FMA available, GCC's vectorizer
  // turns the product's re/im pair into fused multiply-add-subtracts whatever
  // -ffp-contract says, which rounds differently from NumPy's loop.
  if constexpr (!detail::is_complex_v<T>) {
    static const int level = ops::cpu_level();
    if (level == 2) return rows_avx512<T>(p, a, b, out, lo, hi);
    if (level == 1) return rows_avx2<T>(p, a, b, out, lo, hi);
  }
#endif
  rows_base<T>(p, a, b, out, lo, hi);
}

template <class T>
void run(const Plan& p, const std::byte* a, const std::byte* b, std::byte* out) {
  const int64_t K = static_cast<int64_t>(p.ca.size());
  const int nt = p.outer_count > 1 ? parallel::threads_for(p.outer_count * p.n * std::max<int64_t>(K, 1), 2) : 1;
  if (nt <= 1) {  // Note [no idle parallel regions] in registry.cpp
    rows<T>(p, a, b, out, 0, p.outer_count);
    return;
  }
  // Note [thread pool] in src/core/parallel.cpp: four chunks of rows a thread.
  parallel::for_ranges(nt, p.outer_count, 4 * int64_t{nt}, [&](int64_t lo, int64_t hi) { rows<T>(p, a, b, out, lo, hi); });
}
}  // namespace

std::optional<ndarray> einsum_pair(const ndarray& a, std::string_view la, const ndarray& b, std::string_view lb,
                                   std::string_view lo) {
  const DType t = a.dtype();
  if (b.dtype() != t || !ops::blas::blas_dtype(t))
    return std::nullopt;
  if (a.is_traced() || b.is_traced() || lo.empty()) return std::nullopt;
  if (la.size() != static_cast<size_t>(a.ndim()) || lb.size() != static_cast<size_t>(b.ndim()))
    throw ValueError("einsum_pair: one label per axis");
  auto unique = [](std::string_view s) {
    for (size_t i = 0; i < s.size(); ++i)
      if (s.find(s[i], i + 1) != std::string_view::npos) return false;
    return true;
  };
  if (!unique(la) || !unique(lb) || !unique(lo)) return std::nullopt;
  // Whole, aligned elements only (a view of packed records may have neither).
  const int64_t isz = static_cast<int64_t>(itemsize(t)), align = std::min<int64_t>(isz, 8);
  for (const ndarray* x : {&a, &b}) {
    if (reinterpret_cast<uintptr_t>(x->data()) % static_cast<uintptr_t>(align) != 0) return std::nullopt;
    for (int64_t s : x->strides())
      if (s % isz != 0) return std::nullopt;
  }
  // Labels: the output's, then the contracted ones in order of appearance.
  std::string labels(lo);
  for (char c : la) if (labels.find(c) == std::string::npos) labels += c;
  for (char c : lb) if (labels.find(c) == std::string::npos) labels += c;
  const size_t L = labels.size();
  std::vector<int64_t> ext(L, -1);
  auto take = [&](const ndarray& x, std::string_view lx) {
    for (size_t k = 0; k < lx.size(); ++k) {
      const size_t j = labels.find(lx[k]);
      const int64_t d = x.shape()[k];
      if (ext[j] >= 0 && ext[j] != d) throw ValueError("einsum_pair: a label with two sizes");
      ext[j] = d;
    }
  };
  take(a, la);
  take(b, lb);
  for (size_t j = 0; j < lo.size(); ++j)
    if (ext[j] < 0) throw ValueError("einsum_pair: an output label of no operand");
  Shape oshape(ext.begin(), ext.begin() + static_cast<std::ptrdiff_t>(lo.size()));
  ndarray out = empty(oshape, t);
  if (out.size() == 0) return out;
  const size_t no = lo.size();
  std::vector<int64_t> so(no);
  int64_t ostride = isz;
  for (size_t j = no; j-- > 0;) {
    so[j] = ostride;
    ostride *= ext[j];
  }
  // The plan for operands x, y: output labels whose axes lie one after the other in all three
  // arrays are merged into one (the row grows), then the contracted combinations.
  auto build = [&](const ndarray& x, const ndarray& y) {
    std::vector<int64_t> sx(L, 0), sy(L, 0);
    for (size_t k = 0; k < la.size(); ++k) sx[labels.find(la[k])] = x.strides()[k];
    for (size_t k = 0; k < lb.size(); ++k) sy[labels.find(lb[k])] = y.strides()[k];
    Plan p;
    std::vector<int64_t> e, xa, xb, xo;  // merged output axes, innermost first
    for (size_t j = no; j-- > 0;) {
      if (ext[j] == 1) continue;  // no axis to iterate
      if (!e.empty() && sx[j] == xa.back() * e.back() && sy[j] == xb.back() * e.back() && so[j] == xo.back() * e.back()) {
        e.back() *= ext[j];
        continue;
      }
      e.push_back(ext[j]);
      xa.push_back(sx[j]);
      xb.push_back(sy[j]);
      xo.push_back(so[j]);
    }
    if (e.empty()) {
      e.push_back(1);
      xa.push_back(0);
      xb.push_back(0);
      xo.push_back(0);
    }
    p.n = e[0];
    p.sa = xa[0];
    p.sb = xb[0];
    for (size_t d = e.size(); d-- > 1;) {
      p.outer_ext.push_back(e[d]);
      p.outer_a.push_back(xa[d]);
      p.outer_b.push_back(xb[d]);
      p.outer_o.push_back(xo[d]);
      p.outer_count *= e[d];
    }
    // Contracted combinations, the last label fastest; an empty contraction sums nothing.
    int64_t K = 1;
    for (size_t j = no; j < L; ++j) K *= ext[j];
    p.ca.reserve(static_cast<size_t>(K));
    p.cb.reserve(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) {
      int64_t rem = k, oa = 0, ob = 0;
      for (size_t j = L; j-- > no;) {
        const int64_t i = rem % ext[j];
        rem /= ext[j];
        oa += i * sx[j];
        ob += i * sy[j];
      }
      p.ca.push_back(oa);
      p.cb.push_back(ob);
    }
    return p;
  };
  Plan p = build(a, b);
  // Short rows cost a loop start-up each: C-ordered copies of strided operands (numpy.einsum
  // buffers its operands likewise) may let more output axes merge into the row.
  ndarray ac = a, bc = b;
  if (p.n < 256 && p.outer_count > 1 && (!a.is_c_contiguous() || !b.is_c_contiguous())) {
    ndarray a2 = a.is_c_contiguous() ? a : a.copy(Order::C), b2 = b.is_c_contiguous() ? b : b.copy(Order::C);
    Plan q = build(a2, b2);
    if (q.n > p.n) {
      p = std::move(q);
      ac = std::move(a2);
      bc = std::move(b2);
    }
  }
  const std::byte* pa = ac.data();
  const std::byte* pb = bc.data();
  switch (t) {
    case DType::Float32: run<float>(p, pa, pb, out.data()); break;
    case DType::Float64: run<double>(p, pa, pb, out.data()); break;
    case DType::Complex64: run<std::complex<float>>(p, pa, pb, out.data()); break;
    default: run<std::complex<double>>(p, pa, pb, out.data()); break;
  }
  return out;
}

}  // namespace npc
