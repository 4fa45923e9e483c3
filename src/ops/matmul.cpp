// numpy.matmul: batch broadcasting, 1-D operands, BLAS for float/complex, exact loops
// for bool/integers/float16.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "core/dispatch.hpp"
#include "npc/creation.hpp"
#include "npc/linalg.hpp"
#include "npc/ops.hpp"

#if NPC_HAVE_CBLAS
#include "ops/blas.hpp"
#endif

namespace npc {
namespace blas = ops::blas;
namespace {

using detail::TypeTag;

constexpr const char* kSig = "(n?,k),(k,m?)->(n?,m?)";

// One matrix operand of a batch: base pointer and byte strides of its rows and columns.
struct Mat {
  const std::byte* p;
  int64_t rs, cs;
};

// Note [matmul loops]
// NumPy's non-BLAS matmul loop (used for bool, integers and float16) sums over k in order
// into an accumulator of the element type (float for float16, converted once at the end);
// integer sums wrap, so accumulating in the unsigned type of the same width gives the
// very same bits without signed-overflow undefined behaviour.
template <class T>
void matmul_loop(Mat A, Mat B, std::byte* C, int64_t n, int64_t k, int64_t m) {
  T* out = reinterpret_cast<T*>(C);
  if constexpr (std::is_same_v<T, bool>) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        bool acc = false;
        for (int64_t p = 0; p < k && !acc; ++p)
          acc = *reinterpret_cast<const bool*>(A.p + i * A.rs + p * A.cs) &&
                *reinterpret_cast<const bool*>(B.p + p * B.rs + j * B.cs);
        out[i * m + j] = acc;
      }
  } else if constexpr (std::is_same_v<T, float16>) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        float acc = 0.0f;
        for (int64_t p = 0; p < k; ++p)
          acc += half_to_float(*reinterpret_cast<const float16*>(A.p + i * A.rs + p * A.cs)) *
                 half_to_float(*reinterpret_cast<const float16*>(B.p + p * B.rs + j * B.cs));
        out[i * m + j] = float_to_half(acc);
      }
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // i-p-j order: the inner loop runs along a row of B and of C (contiguous C).
    std::vector<U> row(static_cast<size_t>(m));
    for (int64_t i = 0; i < n; ++i) {
      std::fill(row.begin(), row.end(), U(0));
      for (int64_t p = 0; p < k; ++p) {
        U a = static_cast<U>(*reinterpret_cast<const T*>(A.p + i * A.rs + p * A.cs));
        const std::byte* brow = B.p + p * B.rs;
        for (int64_t j = 0; j < m; ++j)
          row[j] = static_cast<U>(row[j] + static_cast<U>(a * static_cast<U>(*reinterpret_cast<const T*>(brow + j * B.cs))));
      }
      for (int64_t j = 0; j < m; ++j) out[i * m + j] = static_cast<T>(row[j]);
    }
  } else {
    // float/complex without BLAS: sequential sums, as NumPy's noblas loop.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        T acc{};
        for (int64_t p = 0; p < k; ++p)
          acc += *reinterpret_cast<const T*>(A.p + i * A.rs + p * A.cs) *
                 *reinterpret_cast<const T*>(B.p + p * B.rs + j * B.cs);
        out[i * m + j] = acc;
      }
  }
}

#if NPC_HAVE_CBLAS
// A BLAS-usable layout of an operand with `rows` x `cols`: unit stride along one axis and a
// leading dimension >= the other extent. Returns false when a copy is needed.
bool blas_layout(int64_t rs, int64_t cs, int64_t rows, int64_t cols, int64_t isz, int& tr, int64_t& ld) {
  if (cs == isz && rs % isz == 0 && rs / isz >= std::max<int64_t>(cols, 1)) {
    tr = blas::kNoTrans;
    ld = rs / isz;
    return true;
  }
  if (rs == isz && cs % isz == 0 && cs / isz >= std::max<int64_t>(rows, 1)) {
    tr = blas::kTrans;
    ld = cs / isz;
    return true;
  }
  // Single row or column: any leading dimension works.
  if (rows == 1 && cs == isz) { tr = blas::kNoTrans; ld = std::max<int64_t>(cols, 1); return true; }
  if (cols == 1 && rs == isz) { tr = blas::kTrans; ld = std::max<int64_t>(rows, 1); return true; }
  return false;
}

using blas::gemm;
using blas::gemv;
using blas::dot;

// Note [matrix-vector products]
// NumPy's matmul loop calls BLAS by shape: dot for (1,k)@(k,1), gemv when one side is a
// vector, gemm otherwise. gemm with one output column is much slower than gemv in OpenBLAS
// (it packs the matrix), and dot/gemv also sum in the order NumPy's calls do.
// (blas::gemv and blas::dot, src/ops/blas.cpp.)

// The element stride of a vector operand (k elements, byte stride s) as a positive BLAS
// increment, or 0 when BLAS cannot take it.
int64_t blas_inc(int64_t s, int64_t k, int64_t isz) {
  if (k == 1) return 1;
  return (s > 0 && s % isz == 0) ? s / isz : 0;
}

// Matrix-vector and vector-vector cases of one batch (Note [matrix-vector products]).
// Returns false when the layouts need gemm or the plain loop.
template <class T>
bool blas_vector_product(const std::byte* pa, int64_t ars, int64_t acs, const std::byte* pb, int64_t brs,
                         int64_t bcs, std::byte* c, int64_t n, int64_t k, int64_t m, int64_t isz) {
  if (n != 1 && m != 1) return false;
  if (std::max({n, m, k}) >= (int64_t(1) << 31)) return false;
  if (n == 1 && m == 1) {
    const int64_t ia = blas_inc(acs, k, isz), ib = blas_inc(brs, k, isz);
    if (!ia || !ib) return false;
    dot<T>(k, pa, ia, pb, ib, c);
    return true;
  }
  int tr;
  int64_t ld;
  if (m == 1) {  // (n,k) @ (k,1): y = A x
    const int64_t ix = blas_inc(brs, k, isz);
    if (!ix || !blas_layout(ars, acs, n, k, isz, tr, ld)) return false;
    if (tr == blas::kNoTrans) gemv<T>(blas::kNoTrans, n, k, pa, ld, pb, ix, c);
    else gemv<T>(blas::kTrans, k, n, pa, ld, pb, ix, c);
    return true;
  }
  // (1,k) @ (k,m): y = B^T x
  const int64_t ix = blas_inc(acs, k, isz);
  if (!ix || !blas_layout(brs, bcs, k, m, isz, tr, ld)) return false;
  if (tr == blas::kNoTrans) gemv<T>(blas::kTrans, k, m, pb, ld, pa, ix, c);
  else gemv<T>(blas::kNoTrans, m, k, pb, ld, pa, ix, c);
  return true;
}
#endif

template <class T>
constexpr bool kBlasType = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                           std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// Runs every batch: `a` is (batch..., n, k), `b` is (batch..., k, m), both already broadcast
// to the batch shape of `out` (stride 0 on broadcast axes); `out` is C-contiguous.
template <class T>
void run_batches(const ndarray& a, const ndarray& b, const ndarray& out, int64_t n, int64_t k, int64_t m) {
  const int nb = out.ndim() - 2;
  const Shape& bshape = out.shape();
  int64_t nbatch = 1;
  for (int i = 0; i < nb; ++i) nbatch *= bshape[i];
  const int64_t isz = static_cast<int64_t>(sizeof(T));
  const int64_t ars = a.strides()[nb], acs = a.strides()[nb + 1];
  const int64_t brs = b.strides()[nb], bcs = b.strides()[nb + 1];
  std::vector<int64_t> idx(nb, 0);
  const std::byte* pa = a.data();
  const std::byte* pb = b.data();
  std::byte* pc = out.data();
  for (int64_t t = 0; t < nbatch; ++t) {
    int64_t oa = 0, ob = 0;
    for (int i = 0; i < nb; ++i) {
      oa += idx[i] * a.strides()[i];
      ob += idx[i] * b.strides()[i];
    }
    std::byte* c = pc + t * n * m * isz;
    bool done = false;
#if NPC_HAVE_CBLAS
    if constexpr (kBlasType<T>) {
      int ta, tb;
      int64_t lda, ldb;
      if (blas_vector_product<T>(pa + oa, ars, acs, pb + ob, brs, bcs, c, n, k, m, isz)) {
        done = true;
      } else if (blas_layout(ars, acs, n, k, isz, ta, lda) && blas_layout(brs, bcs, k, m, isz, tb, ldb) &&
          std::max({n, m, k, lda, ldb}) < (int64_t(1) << 31)) {
        gemm<T>(ta, tb, n, m, k, pa + oa, lda, pb + ob, ldb, c);
        done = true;
      }
    }
#endif
    if (!done) matmul_loop<T>({pa + oa, ars, acs}, {pb + ob, brs, bcs}, c, n, k, m);
    for (int i = nb - 1; i >= 0; --i) {
      if (++idx[i] < bshape[i]) break;
      idx[i] = 0;
    }
  }
}

// An operand whose core layout BLAS cannot take (or a small-stride view) becomes contiguous.
ndarray blas_ready(const ndarray& x) {
  const int nd = x.ndim();
  const int64_t isz = static_cast<int64_t>(x.itemsize());
  int64_t rs = x.strides()[nd - 2], cs = x.strides()[nd - 1];
  int64_t rows = x.shape()[nd - 2], cols = x.shape()[nd - 1];
  bool ok = (cs == isz && rs >= std::max<int64_t>(cols, 1) * isz && rs % isz == 0) ||
            (rs == isz && cs >= std::max<int64_t>(rows, 1) * isz && cs % isz == 0) || (rows == 1 && cs == isz) ||
            (cols == 1 && rs == isz);
  return ok ? x : x.copy();
}

template <class T>
void outer_loop(const ndarray& a, const ndarray& b, const ndarray& out) {
  const int64_t n = a.shape()[0], m = b.shape()[0];
  const int64_t sa = a.strides()[0], sb = b.strides()[0];
  const std::byte* pa = a.data();
  const std::byte* pb = b.data();
  T* o = reinterpret_cast<T*>(out.data());
  for (int64_t i = 0; i < n; ++i) {
    const T x = *reinterpret_cast<const T*>(pa + i * sa);
    for (int64_t j = 0; j < m; ++j) {
      const T y = *reinterpret_cast<const T*>(pb + j * sb);
      if constexpr (std::is_same_v<T, bool>) {
        o[i * m + j] = x && y;
      } else if constexpr (std::is_same_v<T, float16>) {
        o[i * m + j] = float_to_half(half_to_float(x) * half_to_float(y));
      } else if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        o[i * m + j] = static_cast<T>(static_cast<U>(static_cast<U>(x) * static_cast<U>(y)));
      } else {
        o[i * m + j] = x * y;
      }
    }
  }
}

}  // namespace

ndarray outer(const ndarray& a0, const ndarray& b0) {
  const DType t = promote_types(a0.dtype(), b0.dtype());
  ndarray a = a0.reshape(std::vector<int64_t>{-1});
  ndarray b = b0.reshape(std::vector<int64_t>{-1});
  if (a.dtype() != t) a = a.astype(t);
  if (b.dtype() != t) b = b.astype(t);
  ndarray out = empty(std::vector<int64_t>{a.size(), b.size()}, t);
  detail::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    outer_loop<T>(a, b, out);
  });
  return out;
}

bool have_blas() { return NPC_HAVE_CBLAS != 0; }

namespace {
// Note [small products]
// Products of 1-D and 2-D operands of one BLAS dtype (the short dot products and small
// matrices of loops over rows) go straight to BLAS: no batch broadcasting, no intermediate
// views, and vectors of any positive stride (a column of a matrix) are passed to dot/gemv
// with their increment instead of being copied. Returns nullopt when the general path must
// run (other dtypes, batches, mismatched core dimensions: its errors, layouts BLAS cannot take).
std::optional<ndarray> small_product(const ndarray& a, const ndarray& b) {
#if NPC_HAVE_CBLAS
  const DType t = a.dtype();
  if (t != b.dtype() || a.ndim() > 2 || b.ndim() > 2 || a.ndim() == 0 || b.ndim() == 0) return std::nullopt;
  if (!(t == DType::Float32 || t == DType::Float64 || t == DType::Complex64 || t == DType::Complex128))
    return std::nullopt;
  const bool a1 = a.ndim() == 1, b1 = b.ndim() == 1;
  const int64_t n = a1 ? 1 : a.shape()[0], k = a.shape().back();
  const int64_t k2 = b.shape()[0], m = b1 ? 1 : b.shape()[1];
  if (k != k2 || k == 0 || n == 0 || m == 0 || std::max({n, m, k}) >= (int64_t(1) << 31)) return std::nullopt;
  // Row and column strides, as matmul's 1-D promotion gives them.
  const int64_t ars = a1 ? 0 : a.strides()[0], acs = a.strides().back();
  const int64_t brs = b.strides()[0], bcs = b1 ? 0 : b.strides()[1];
  Shape shape;
  if (!a1) shape.push_back(n);
  if (!b1) shape.push_back(m);
  const int64_t isz = static_cast<int64_t>(itemsize(t));
  std::optional<ndarray> r;
  detail::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kBlasType<T>) {
      if (n != 1 && m != 1) {
        int ta, tb;
        int64_t lda, ldb;
        if (!blas_layout(ars, acs, n, k, isz, ta, lda) || !blas_layout(brs, bcs, k, m, isz, tb, ldb) ||
            std::max(lda, ldb) >= (int64_t(1) << 31))
          return;
        ndarray out = empty(shape, t);
        gemm<T>(ta, tb, n, m, k, a.data(), lda, b.data(), ldb, out.data());
        r = std::move(out);
        return;
      }
      ndarray out = empty(shape, t);
      if (blas_vector_product<T>(a.data(), ars, acs, b.data(), brs, bcs, out.data(), n, k, m, isz)) r = std::move(out);
    }
  });
  return r;
#else
  (void)a;
  (void)b;
  return std::nullopt;
#endif
}
}  // namespace

ndarray matmul(const ndarray& a0, const ndarray& b0) {
  if (!a0.is_traced() && !b0.is_traced())
    if (std::optional<ndarray> r = small_product(a0, b0)) return std::move(*r);
  if (a0.ndim() == 0 || b0.ndim() == 0) {
    int which = a0.ndim() == 0 ? 0 : 1;
    throw ValueError("matmul: Input operand " + std::to_string(which) +
                     " does not have enough dimensions (has 0, gufunc core with signature " + kSig + " requires 1)");
  }
  const DType t = promote_types(a0.dtype(), b0.dtype());
  ndarray a = a0.dtype() == t ? a0 : a0.astype(t);
  ndarray b = b0.dtype() == t ? b0 : b0.astype(t);
  const bool a1 = a.ndim() == 1, b1 = b.ndim() == 1;
  // 1-D operands: a row (1, k) on the left, a column (k, 1) on the right.
  if (a1) a = a.with_geometry(a.offset(), t, {1, a.shape()[0]}, {0, a.strides()[0]});
  if (b1) b = b.with_geometry(b.offset(), t, {b.shape()[0], 1}, {b.strides()[0], 0});
  const int na = a.ndim(), nbd = b.ndim();
  const int64_t n = a.shape()[na - 2], k = a.shape()[na - 1];
  const int64_t k2 = b.shape()[nbd - 2], m = b.shape()[nbd - 1];
  if (k != k2)
    throw ValueError(std::string("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature ") +
                     kSig + " (size " + std::to_string(k2) + " is different from " + std::to_string(k) + ")");
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch;
  {
    Shape shapes[2] = {ba, bb};
    try {
      batch = broadcast_shapes(shapes);
    } catch (const ValueError&) {
      // NumPy's iterator message: each operand's shape, its batch dims, newaxis for the core.
      auto compact = [](const Shape& sh, const Shape* batch_only) {
        std::string r = "(";
        const size_t n = batch_only ? batch_only->size() : sh.size();
        for (size_t i = 0; i < n; ++i) r += (i ? "," : "") + std::to_string(sh[i]);
        if (batch_only) r += std::string(n ? "," : "") + "newaxis,newaxis";
        return r + ")";
      };
      throw ValueError("operands could not be broadcast together with remapped shapes [original->remapped]: " +
                       compact(a.shape(), nullptr) + "->" + compact(a.shape(), &ba) + " " + compact(b.shape(), nullptr) +
                       "->" + compact(b.shape(), &bb) + "  and requested shape (" + std::to_string(n) + "," +
                       std::to_string(m) + ")");
    }
  }
  Shape full = batch;
  full.push_back(n);
  full.push_back(m);
  ndarray out = (k == 0) ? zeros(full, t) : empty(full, t);
  if (k > 0 && shape_size(full) > 0) {
    if (is_inexact(t) && t != DType::Float16) {
      a = blas_ready(a);
      b = blas_ready(b);
    }
    Shape sa = batch, sb = batch;
    sa.push_back(n), sa.push_back(k);
    sb.push_back(k), sb.push_back(m);
    ndarray ab = broadcast_to(a, sa), bbv = broadcast_to(b, sb);
    detail::visit(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_batches<T>(ab, bbv, out, n, k, m);
    });
  }
  // Drop the dimensions that 1-D operands added.
  if (a1 || b1) {
    Shape rs = batch;
    if (!a1) rs.push_back(n);
    if (!b1) rs.push_back(m);
    out = out.reshape(rs);
  }
  return out;
}

}  // namespace npc
