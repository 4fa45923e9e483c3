// numpy.matmul: batch broadcasting, 1-D operands, BLAS for float/complex, exact loops
// for bool/integers/float16.
// Note [no packed complex products]: NumPy computes a complex product's real and imaginary
// parts one at a time; packed into one vector, the lane that is thrown away (re + im, or
// -inf - -inf) can raise a floating-point flag NumPy never raises ((-inf+3j) * (-inf+3j)
// said "invalid value"). GCC's straight-line vectorizer packs them, so it is off here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-slp-vectorize")
#endif
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/dispatch.hpp"
#include "npc/creation.hpp"
#include "npc/linalg.hpp"
#include "npc/ops.hpp"
#include "ops/exec.hpp"

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
          // Read as bytes: a bool array may hold any nonzero byte for True (a view of
          // uint8 data), which a load as C++ bool does not allow.
          acc = *reinterpret_cast<const uint8_t*>(A.p + i * A.rs + p * A.cs) != 0 &&
                *reinterpret_cast<const uint8_t*>(B.p + p * B.rs + j * B.cs) != 0;
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
    // float/complex without BLAS: sequential sums from 0, as NumPy's noblas loop (complex
    // products with NumPy's formula, not C99's NaN-recovering one).
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        T acc = T(0);
        for (int64_t p = 0; p < k; ++p) {
          const T& x = *reinterpret_cast<const T*>(A.p + i * A.rs + p * A.cs);
          const T& y = *reinterpret_cast<const T*>(B.p + p * B.rs + j * B.cs);
          if constexpr (detail::is_complex_v<T>)
            acc = T(acc.real() + (x.real() * y.real() - x.imag() * y.imag()),
                    acc.imag() + (x.real() * y.imag() + x.imag() * y.real()));
          else
            acc += x * y;
        }
        out[i * m + j] = acc;
      }
  }
}


#if NPC_HAVE_CBLAS
using blas::gemm;
using blas::gemv;
using blas::dot;

// Note [NumPy's product paths]
// NumPy computes a product along a path chosen by shape and layout, and the path decides the
// bits of the result and the floating-point flags it raises. npc takes the same paths with
// the same BLAS (Note [one BLAS per process] in blas.cpp), so both agree bit for bit and
// raise the same flags (Note [product FP errors] in python/npc/_linalg.py):
// - matmul (NumPy's matmul.c.src), per batch with core sizes m x n @ n x p: a zero size ->
//   the plain loop; m == p == 1 -> the vector dot; n == 1 -> the plain loop; m == 1 or
//   p == 1 -> gemv when the vector has a positive stride of whole elements and the matrix
//   is BLAS-usable, else the plain loop; otherwise gemm (syrk for A @ A.T of one buffer) on
//   BLAS-usable operands, copied first when they are not.
// - dot, inner and tensordot of 1-D and 2-D operands (NumPy's cblas_matrixproduct): operands
//   with negative, zero or partial strides are copied; a one-element operand scales the
//   other (one multiply, or axpy into zeros); vector . vector -> the vector dot; matrix .
//   vector -> gemv; matrix . matrix -> gemm (syrk for A . A.T of one buffer).
// - the vector dot (NumPy's <TYPE>_dot): BLAS dot summed in double from 0.0 when both strides
//   are positive multiples of the item size, else a loop from 0 in the element type.
// - the plain loop (NumPy's matmul_inner_noblas): sums from 0 in the element type, complex
//   products with NumPy's formula (no C99 NaN recovery).

template <class T>
struct RealOf { using type = T; };
template <class T>
struct RealOf<std::complex<T>> { using type = T; };

// NumPy's is_blasable2d: unit stride along the second axis, a first stride of whole
// elements at least d2 elements long.
bool blasable2d(int64_t s1, int64_t s2, int64_t d2, int64_t isz) {
  return s2 == isz && s1 % isz == 0 && s1 / isz >= d2;
}

// NumPy's blas_stride: a positive multiple of the item size as a BLAS increment, else 0.
int64_t blas_stride(int64_t s, int64_t isz) { return s > 0 && s % isz == 0 ? s / isz : 0; }

template <class T>
const T& at(const std::byte* p, int64_t off) { return *reinterpret_cast<const T*>(p + off); }

// a * b with NumPy's complex formula (ar*br - ai*bi, ar*bi + ai*br).
template <class T>
T mul(const T& a, const T& b) {
  if constexpr (detail::is_complex_v<T>) return T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  else return a * b;
}

// The vector dot (Note [NumPy's product paths]).
template <class T>
void vector_dot(const std::byte* x, int64_t sx, const std::byte* y, int64_t sy, int64_t n, std::byte* out) {
  using R = typename RealOf<T>::type;
  const int64_t isz = static_cast<int64_t>(sizeof(T));
  const int64_t ix = blas_stride(sx, isz), iy = blas_stride(sy, isz);
  T* o = reinterpret_cast<T*>(out);
  if (ix && iy) {
    double sr = 0.0, si = 0.0;
    if (n > 0) {
      T tmp;
      dot<T>(n, x, ix, y, iy, &tmp);
      if constexpr (detail::is_complex_v<T>) {
        sr += static_cast<double>(tmp.real());
        si += static_cast<double>(tmp.imag());
      } else {
        sr += static_cast<double>(tmp);
      }
    }
    if constexpr (detail::is_complex_v<T>) *o = T(static_cast<R>(sr), static_cast<R>(si));
    else *o = static_cast<T>(sr);
    return;
  }
  R sr = 0, si = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T& a = at<T>(x, i * sx);
    const T& b = at<T>(y, i * sy);
    if constexpr (detail::is_complex_v<T>) {
      sr += a.real() * b.real() - a.imag() * b.imag();
      si += a.real() * b.imag() + a.imag() * b.real();
    } else {
      sr += a * b;
    }
  }
  if constexpr (detail::is_complex_v<T>) *o = T(sr, si);
  else *o = sr;
}

// The plain loop (Note [NumPy's product paths]) into C-contiguous `c` (m x p).
template <class T>
void plain_product(const std::byte* a, int64_t s1m, int64_t s1n, const std::byte* b, int64_t s2n, int64_t s2p,
                   std::byte* c, int64_t m, int64_t n, int64_t p) {
  T* o = reinterpret_cast<T*>(c);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < p; ++j) {
      T acc = T(0);
      for (int64_t k = 0; k < n; ++k) {
        const T t = mul(at<T>(a, i * s1m + k * s1n), at<T>(b, k * s2n + j * s2p));
        if constexpr (detail::is_complex_v<T>) acc = T(acc.real() + t.real(), acc.imag() + t.imag());
        else acc += t;
      }
      o[i * p + j] = acc;
    }
}

// NumPy's matmul gemv: y (contiguous, m) = A x, A m x n with strides (s1m, s1n).
template <class T>
void matmul_gemv(const std::byte* a, int64_t s1m, int64_t s1n, const std::byte* x, int64_t sx, std::byte* y, int64_t m,
                 int64_t n) {
  const int64_t isz = static_cast<int64_t>(sizeof(T));
  // NumPy: column-major A^T (lda s1m) when the rows are unit-stride, else row-major A^T.
  if (blasable2d(s1m, s1n, n, isz)) gemv<T>(blas::kNoTrans, m, n, a, s1m / isz, x, sx / isz, y);
  else gemv<T>(blas::kTrans, n, m, a, s1n / isz, x, sx / isz, y);
}

// Upper triangle of a syrk result copied to the lower one (p x p, leading dimension ldc).
template <class T>
void mirror_upper(std::byte* c, int64_t p, int64_t ldc) {
  T* o = reinterpret_cast<T*>(c);
  for (int64_t i = 0; i < p; ++i)
    for (int64_t j = i + 1; j < p; ++j) o[j * ldc + i] = o[i * ldc + j];
}

// NumPy's matmul_matrixmatrix on BLAS-usable operands into C-contiguous `c` (m x p).
template <class T>
void matrix_matrix(const std::byte* a, int64_t s1m, int64_t s1n, const std::byte* b, int64_t s2n, int64_t s2p,
                   std::byte* c, int64_t m, int64_t n, int64_t p) {
  const int64_t isz = static_cast<int64_t>(sizeof(T));
  int t1, t2;
  int64_t lda, ldb;
  if (blasable2d(s1m, s1n, n, isz)) { t1 = blas::kNoTrans; lda = s1m / isz; }
  else { t1 = blas::kTrans; lda = s1n / isz; }
  if (blasable2d(s2n, s2p, p, isz)) { t2 = blas::kNoTrans; ldb = s2n / isz; }
  else { t2 = blas::kTrans; ldb = s2p / isz; }
  if (a == b && m == p && s1m == s2p && s1n == s2n && t1 != t2) {
    blas::syrk<T>(t1, p, n, a, t1 == blas::kNoTrans ? lda : ldb, c, p);
    mirror_upper<T>(c, p, p);
  } else {
    gemm<T>(t1, t2, m, p, n, a, lda, b, ldb, c);
  }
}

// One batch of numpy.matmul (Note [NumPy's product paths]) into C-contiguous `c` (m x p).
template <class T>
void core_product(const std::byte* a, int64_t s1m, int64_t s1n, const std::byte* b, int64_t s2n, int64_t s2p,
                  std::byte* c, int64_t m, int64_t n, int64_t p) {
  const int64_t isz = static_cast<int64_t>(sizeof(T));
  if (m == 0 || n == 0 || p == 0) return plain_product<T>(a, s1m, s1n, b, s2n, s2p, c, m, n, p);
  const bool i1 = blasable2d(s1m, s1n, n, isz) || blasable2d(s1n, s1m, m, isz);
  const bool i2 = blasable2d(s2n, s2p, p, isz) || blasable2d(s2p, s2n, n, isz);
  if (m == 1 || n == 1 || p == 1) {
    if (m == 1 && p == 1) return vector_dot<T>(a, s1n, b, s2n, n, c);
    if (n == 1) return plain_product<T>(a, s1m, s1n, b, s2n, s2p, c, m, n, p);
    if (m == 1 && i2 && blasable2d(s1n, isz, 1, isz)) return matmul_gemv<T>(b, s2p, s2n, a, s1n, c, p, n);
    if (p == 1 && i1 && blasable2d(s2n, isz, 1, isz)) return matmul_gemv<T>(a, s1m, s1n, b, s2n, c, m, n);
    return plain_product<T>(a, s1m, s1n, b, s2n, s2p, c, m, n, p);
  }
  // NumPy copies an operand BLAS cannot take into a buffer, transposed when its first
  // stride is the smaller one.
  std::vector<T> ta, tb;
  auto to_buffer = [&](std::vector<T>& buf, const std::byte*& x, int64_t& sr, int64_t& sc, int64_t rows, int64_t cols) {
    const bool tr = std::abs(sr) < std::abs(sc);
    buf.resize(static_cast<size_t>(rows * cols));
    const int64_t nr = tr ? isz : isz * cols, nc = tr ? isz * rows : isz;
    std::byte* dst = reinterpret_cast<std::byte*>(buf.data());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) *reinterpret_cast<T*>(dst + i * nr + j * nc) = at<T>(x, i * sr + j * sc);
    x = dst;
    sr = nr;
    sc = nc;
  };
  if (!i1) to_buffer(ta, a, s1m, s1n, m, n);
  if (!i2) to_buffer(tb, b, s2n, s2p, n, p);
  matrix_matrix<T>(a, s1m, s1n, b, s2n, s2p, c, m, n, p);
}

// NumPy's cblas_matrixproduct for 1-D and 2-D operands of one BLAS dtype (Note [NumPy's
// product paths]); `out` is zero-filled, C-contiguous, of the result's shape.
enum class MShape { Scalar, Column, Row, Matrix };

MShape matrix_shape(const ndarray& x) {
  if (x.ndim() == 0) return MShape::Scalar;
  if (x.ndim() == 1) return x.shape()[0] > 1 ? MShape::Column : MShape::Scalar;
  if (x.shape()[0] > 1) return x.shape()[1] == 1 ? MShape::Column : MShape::Matrix;
  return x.shape()[1] == 1 ? MShape::Scalar : MShape::Row;
}

bool bad_strides(const ndarray& x) {
  const int64_t isz = static_cast<int64_t>(x.itemsize());
  if (reinterpret_cast<uintptr_t>(x.data()) % static_cast<uintptr_t>(isz) != 0) return true;
  for (int d = 0; d < x.ndim(); ++d) {
    const int64_t s = x.strides()[d];
    if (s < 0 || s % isz != 0 || (s == 0 && x.shape()[d] > 1)) return true;
  }
  return false;
}

template <class T>
void matrix_product(ndarray a, ndarray b, const ndarray& out) {
  const int64_t isz = static_cast<int64_t>(sizeof(T));
  if (bad_strides(a)) a = a.copy();
  if (bad_strides(b)) b = b.copy();
  MShape sa = matrix_shape(a), sb = matrix_shape(b);
  std::byte* o = out.data();
  if (sa == MShape::Scalar || sb == MShape::Scalar) {
    if (sa == MShape::Scalar) {  // the scalar goes second
      std::swap(a, b);
      std::swap(sa, sb);
    }
    const T s = *reinterpret_cast<const T*>(b.data());
    if (out.size() == 1) {
      *reinterpret_cast<T*>(o) = mul(s, *reinterpret_cast<const T*>(a.data()));
    } else if (sa != MShape::Matrix) {
      const int64_t stride = sa == MShape::Row ? a.strides()[1] : a.strides()[0];
      blas::axpy<T>(out.size(), &s, a.data(), stride / isz, o, 1);
    } else {
      const int maxi = a.shape()[0] >= a.shape()[1] ? 0 : 1, oi = 1 - maxi;
      const std::byte* pa = a.data();
      std::byte* po = o;
      for (int64_t i = 0; i < a.shape()[oi]; ++i) {
        blas::axpy<T>(a.shape()[maxi], &s, pa, a.strides()[maxi] / isz, po, out.strides()[maxi] / isz);
        pa += a.strides()[oi];
        po += out.strides()[oi];
      }
    }
    return;
  }
  if (sb == MShape::Column && sa != MShape::Matrix) {
    vector_dot<T>(a.data(), a.strides()[sa == MShape::Row ? 1 : 0], b.data(), b.strides()[0], a.shape().back(), o);
    return;
  }
  auto one_segment = [](const ndarray& x) { return x.is_c_contiguous() || x.is_f_contiguous(); };
  if (sa == MShape::Matrix && sb != MShape::Matrix) {
    if (!one_segment(a)) a = a.copy();
    const int64_t r = a.shape()[0], k = a.shape()[1], incx = b.strides()[0] / isz;
    if (a.is_c_contiguous()) gemv<T>(blas::kNoTrans, r, k, a.data(), std::max<int64_t>(k, 1), b.data(), incx, o);
    else gemv<T>(blas::kTrans, k, r, a.data(), std::max<int64_t>(r, 1), b.data(), incx, o);
    return;
  }
  if (sa != MShape::Matrix && sb == MShape::Matrix) {
    if (!one_segment(b)) b = b.copy();
    const int64_t r = b.shape()[0], k = b.shape()[1];
    const int64_t incx = (sa == MShape::Row ? a.strides()[1] : a.strides()[0]) / isz;
    if (b.is_c_contiguous()) gemv<T>(blas::kTrans, r, k, b.data(), std::max<int64_t>(k, 1), a.data(), incx, o);
    else gemv<T>(blas::kNoTrans, k, r, b.data(), std::max<int64_t>(r, 1), a.data(), incx, o);
    return;
  }
  if (!b.is_c_contiguous() && !b.is_f_contiguous()) b = b.copy();
  if (!a.is_c_contiguous() && !a.is_f_contiguous()) a = a.copy();
  const int64_t L = a.shape()[0], N = b.shape()[1], M = b.shape()[0];
  int t1 = blas::kNoTrans, t2 = blas::kNoTrans;
  int64_t lda = std::max<int64_t>(a.shape()[1], 1), ldb = std::max<int64_t>(b.shape()[1], 1);
  if (a.is_f_contiguous()) { t1 = blas::kTrans; lda = std::max<int64_t>(a.shape()[0], 1); }
  if (b.is_f_contiguous()) { t2 = blas::kTrans; ldb = std::max<int64_t>(b.shape()[0], 1); }
  if (a.data() == b.data() && a.shape()[0] == b.shape()[1] && a.shape()[1] == b.shape()[0] &&
      a.strides()[0] == b.strides()[1] && a.strides()[1] == b.strides()[0] && t1 != t2) {
    const int64_t ldc = std::max<int64_t>(N, 1);
    if (t1 == blas::kNoTrans) blas::syrk<T>(t1, N, M, a.data(), lda, o, ldc);
    else blas::syrk<T>(t1, N, M, b.data(), ldb, o, ldc);
    mirror_upper<T>(o, N, ldc);
    return;
  }
  gemm<T>(t1, t2, L, N, M, a.data(), lda, b.data(), ldb, o);
}

// numpy.dot of operands with more than 2 dimensions (PyArray_MatrixProduct2): the vector dot
// of each row of `a` (last axis) with each column of `b` (its axis -2), in C order.
template <class T>
void nd_dot(const ndarray& a, const ndarray& b, const ndarray& out) {
  const int64_t l = a.shape().back();
  const int mb = b.ndim() > 1 ? b.ndim() - 2 : 0;
  Shape ra(a.shape().begin(), a.shape().end() - 1), rb;
  std::vector<int64_t> sa(a.strides().begin(), a.strides().end() - 1), sb;
  for (int d = 0; d < b.ndim(); ++d)
    if (d != mb) { rb.push_back(b.shape()[d]); sb.push_back(b.strides()[d]); }
  std::vector<int64_t> ia(ra.size(), 0), ib(rb.size(), 0);
  const int64_t na = shape_size(ra), nb = shape_size(rb), isz = static_cast<int64_t>(sizeof(T));
  std::byte* o = out.data();
  for (int64_t i = 0; i < na; ++i) {
    int64_t oa = 0;
    for (size_t d = 0; d < ra.size(); ++d) oa += ia[d] * sa[d];
    std::fill(ib.begin(), ib.end(), 0);
    for (int64_t j = 0; j < nb; ++j) {
      int64_t ob = 0;
      for (size_t d = 0; d < rb.size(); ++d) ob += ib[d] * sb[d];
      vector_dot<T>(a.data() + oa, a.strides().back(), b.data() + ob, b.strides()[mb], l, o);
      o += isz;
      for (int d = static_cast<int>(rb.size()) - 1; d >= 0; --d) {
        if (++ib[d] < rb[d]) break;
        ib[d] = 0;
      }
    }
    for (int d = static_cast<int>(ra.size()) - 1; d >= 0; --d) {
      if (++ia[d] < ra[d]) break;
      ia[d] = 0;
    }
  }
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
#if NPC_HAVE_CBLAS
    if constexpr (kBlasType<T>) core_product<T>(pa + oa, ars, acs, pb + ob, brs, bcs, c, n, k, m);
    else matmul_loop<T>({pa + oa, ars, acs}, {pb + ob, brs, bcs}, c, n, k, m);
#else
    matmul_loop<T>({pa + oa, ars, acs}, {pb + ob, brs, bcs}, c, n, k, m);
#endif
    for (int i = nb - 1; i >= 0; --i) {
      if (++idx[i] < bshape[i]) break;
      idx[i] = 0;
    }
  }
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
// matrices of loops over rows) skip the batch machinery: no broadcasting, no intermediate
// views, NumPy's path for one batch (Note [NumPy's product paths]). Returns nullopt when the
// general path must run (other dtypes, batches, mismatched core dimensions: its errors).
std::optional<ndarray> small_product(const ndarray& a, const ndarray& b) {
#if NPC_HAVE_CBLAS
  const DType t = a.dtype();
  if (t != b.dtype() || a.ndim() > 2 || b.ndim() > 2 || a.ndim() == 0 || b.ndim() == 0) return std::nullopt;
  if (!blas::blas_dtype(t))
    return std::nullopt;
  const bool a1 = a.ndim() == 1, b1 = b.ndim() == 1;
  const int64_t n = a1 ? 1 : a.shape()[0], k = a.shape().back();
  const int64_t k2 = b.shape()[0], m = b1 ? 1 : b.shape()[1];
  if (k != k2) return std::nullopt;
  // Row and column strides, as matmul's 1-D promotion gives them.
  const int64_t ars = a1 ? 0 : a.strides()[0], acs = a.strides().back();
  const int64_t brs = b.strides()[0], bcs = b1 ? 0 : b.strides()[1];
  Shape shape;
  if (!a1) shape.push_back(n);
  if (!b1) shape.push_back(m);
  ndarray out = empty(shape, t);
  detail::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kBlasType<T>) core_product<T>(a.data(), ars, acs, b.data(), brs, bcs, out.data(), n, k, m);
  });
  return out;
#else
  (void)a;
  (void)b;
  return std::nullopt;
#endif
}

// The floating-point flags the last product of this thread raised (Note [product FP errors]
// in python/npc/_linalg.py): the calling thread's flags after its loops and BLAS calls, as
// NumPy reads them.
thread_local int t_product_fpe = 0;

struct ProductFlags {
  ProductFlags() { ops::clear_fpe(); }
  ~ProductFlags() { t_product_fpe = ops::read_fpe(); }
};

ndarray matmul_impl(const ndarray& a0, const ndarray& b0) {
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


// numpy.dot of operands with at least one dimension (Note [NumPy's product paths]).
ndarray dot_impl(const ndarray& a0, const ndarray& b0) {
  const int64_t ka = a0.shape().back();
  const int64_t kb = b0.ndim() == 1 ? b0.shape()[0] : b0.shape()[b0.ndim() - 2];
  if (ka != kb)
    throw ValueError("shapes " + shape_str(a0.shape()) + " and " + shape_str(b0.shape()) + " not aligned: " +
                     std::to_string(ka) + " (dim " + std::to_string(a0.ndim() - 1) + ") != " + std::to_string(kb) +
                     " (dim " + std::to_string(b0.ndim() == 1 ? 0 : b0.ndim() - 2) + ")");
  const DType t = promote_types(a0.dtype(), b0.dtype());
  const bool blas_type = blas::blas_dtype(t);
  if (a0.is_traced() || b0.is_traced() || !NPC_HAVE_CBLAS || !blas_type) {
    if (a0.ndim() <= 2 && b0.ndim() <= 2) return matmul_impl(a0, b0);
    if (b0.ndim() <= 2) {
      Shape lead(a0.shape().begin(), a0.shape().end() - 1);
      ndarray r = matmul_impl(a0.reshape(std::vector<int64_t>{-1, ka}), b0);
      if (b0.ndim() == 2) lead.push_back(b0.shape()[1]);
      return r.reshape(lead);
    }
    throw ValueError("dot: operands of more than 2 dimensions need a BLAS dtype here");
  }
  ndarray a = a0.dtype() == t ? a0 : a0.astype(t);
  ndarray b = b0.dtype() == t ? b0 : b0.astype(t);
  Shape shape(a.shape().begin(), a.shape().end() - 1);
  for (int d = 0; d < b.ndim(); ++d)
    if (d != (b.ndim() > 1 ? b.ndim() - 2 : 0)) shape.push_back(b.shape()[d]);
  ndarray out = zeros(shape, t);
  if (out.size() == 0 || ka == 0) return out;
#if NPC_HAVE_CBLAS
  detail::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kBlasType<T>) {
      if (a.ndim() <= 2 && b.ndim() <= 2) matrix_product<T>(a, b, out);
      else nd_dot<T>(a, b, out);
    }
  });
#endif
  return out;
}
}  // namespace

bool matmul_into(DType t, const std::byte* a, int64_t ars, int64_t acs, const std::byte* b, int64_t brs, int64_t bcs,
                 std::byte* out, int64_t n, int64_t k, int64_t m) {
#if NPC_HAVE_CBLAS
  if (!blas::blas_dtype(t)) return false;
  // small_product's call (matmul's path for such operands).
  detail::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kBlasType<T>) core_product<T>(a, ars, acs, b, brs, bcs, out, n, k, m);
  });
  return true;
#else
  (void)t, (void)a, (void)ars, (void)acs, (void)b, (void)brs, (void)bcs, (void)out, (void)n, (void)k, (void)m;
  return false;
#endif
}

ndarray matmul(const ndarray& a, const ndarray& b) {
  ProductFlags flags;
  return matmul_impl(a, b);
}

ndarray dot(const ndarray& a, const ndarray& b) {
  if (a.ndim() == 0 || b.ndim() == 0) throw ValueError("dot: 0-d operands are multiplied, not passed here");
  ProductFlags flags;
  return dot_impl(a, b);
}

int take_product_fp_flags() {
  const int f = t_product_fpe;
  t_product_fpe = 0;
  return f;
}

}  // namespace npc
