// numpy.linalg on LAPACKE: batched drivers over stacks of matrices (Note [linalg stacks]).
#include <algorithm>
#include <atomic>
#include <mutex>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

#include "core/dispatch.hpp"
#include "npc/creation.hpp"
#include "npc/linalg.hpp"
#include "ops/blas.hpp"

#if NPC_HAVE_LAPACKE
// LAPACKE's complex types are std::complex (same layout as NumPy's complex64/128).
#define LAPACK_COMPLEX_CUSTOM
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>
#endif

namespace npc::lapack {

bool available() { return NPC_HAVE_LAPACKE != 0; }

namespace {
// Note [linalg argument checks]
// The drivers index each matrix of a stack as a contiguous column-major block of the sizes
// they read off the shape, so a wrong shape is an out-of-bounds access, not a wrong answer.
// Every entry point checks its operands first, with numpy.linalg's errors: LinAlgError for
// too few dimensions and non-square matrices (its _assert_stacked_2d/_assert_stacked_square),
// TypeError for dtypes LAPACK has no routine for (the Python layer casts to one first), and
// ValueError for dimensions beyond LAPACK's 32-bit integers.
void check_lapack_dtype(DType t) {
  if (t != DType::Float32 && t != DType::Float64 && t != DType::Complex64 && t != DType::Complex128)
    throw TypeError("array type " + std::string(name(t)) + " is unsupported in linalg");
}
void check_stacked_2d(const ndarray& a) {
  if (a.ndim() < 2)
    throw LinAlgError(std::to_string(a.ndim()) + "-dimensional array given. Array must be at least two-dimensional");
  check_lapack_dtype(a.dtype());
  for (int d = a.ndim() - 2; d < a.ndim(); ++d)
    if (a.shape()[d] > std::numeric_limits<int32_t>::max())
      throw ValueError("linalg: a matrix dimension of " + std::to_string(a.shape()[d]) + " is too large for LAPACK");
}
void check_stacked_square(const ndarray& a) {
  check_stacked_2d(a);
  if (a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2])
    throw LinAlgError("Last 2 dimensions of the array must be square");
}
void check_same_dtype(const ndarray& a, const ndarray& b) {
  if (a.dtype() != b.dtype())
    throw TypeError("linalg: operands of one dtype expected, got " + std::string(name(a.dtype())) + " and " +
                    std::string(name(b.dtype())));
}

// Each driver's checks, shared with the build without LAPACKE (which then reports that it
// has none only for valid arguments).
void check_solve_args(const ndarray& a, const ndarray& b) {
  check_stacked_square(a);
  const char* sig = "(m,m),(m,n)->(m,n)";
  if (b.ndim() < 2)
    throw ValueError("solve: Input operand 1 does not have enough dimensions (has " + std::to_string(b.ndim()) +
                     ", gufunc core with signature " + sig + " requires 2)");
  check_stacked_2d(b);
  check_same_dtype(a, b);
  const int64_t n = a.shape()[a.ndim() - 1], bn = b.shape()[b.ndim() - 2];
  if (bn != n)
    throw ValueError("solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature " +
                     std::string(sig) + " (size " + std::to_string(bn) + " is different from " + std::to_string(n) +
                     ")");
  if (!std::equal(a.shape().begin(), a.shape().end() - 2, b.shape().begin(), b.shape().end() - 2))
    throw ValueError("solve: a and b must have the same batch shape, got " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()));
}
void check_lstsq_args(const ndarray& a, const ndarray& b) {
  for (const ndarray* x : {&a, &b})
    if (x->ndim() != 2)
      throw LinAlgError(std::to_string(x->ndim()) + "-dimensional array given. Array must be two-dimensional");
  check_stacked_2d(a);
  check_stacked_2d(b);
  check_same_dtype(a, b);
  if (a.shape()[0] != b.shape()[0]) throw LinAlgError("Incompatible dimensions");
}
void check_qr_mode(const std::string& mode) {
  if (mode != "reduced" && mode != "complete" && mode != "r") throw ValueError("Unrecognized mode '" + mode + "'");
}
}  // namespace

#if NPC_HAVE_LAPACKE
namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;
constexpr int kCol = LAPACK_COL_MAJOR;

// Note [one BLAS per process] in src/ops/blas.cpp: the drivers run in the library that the
// products use (NumPy's OpenBLAS when NumPy is loaded, whose LAPACKE takes 64-bit integers),
// else in the linked LAPACKE. `lapacke` passes the arguments in either form: the layout and
// chars and pointers as they are, lapack_int widened, integer arrays the driver writes
// (pivots, the rank) through a 64-bit copy.
struct Layout { int v; };
struct IntOut { lapack_int* p; int64_t n; };

template <class A> struct Hold {
  A v;
  Hold(A x) : v(x) {}
  A get() const { return v; }
};
template <> struct Hold<lapack_int> {
  int64_t v;
  Hold(lapack_int x) : v(x) {}
  int64_t get() const { return v; }
};
template <> struct Hold<Layout> {
  int v;
  Hold(Layout x) : v(x.v) {}
  int get() const { return v; }
};
template <> struct Hold<IntOut> {
  IntOut o;
  std::vector<int64_t> buf;
  Hold(IntOut x) : o(x), buf(static_cast<size_t>(std::max<int64_t>(x.n, 1))) {
    for (int64_t i = 0; i < o.n; ++i) buf[static_cast<size_t>(i)] = o.p[i];
  }
  ~Hold() {
    for (int64_t i = 0; i < o.n; ++i) o.p[i] = static_cast<lapack_int>(buf[static_cast<size_t>(i)]);
  }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  int64_t* get() { return buf.data(); }
};
template <class A> A narrow(A a) { return a; }
inline int narrow(Layout l) { return l.v; }
inline lapack_int* narrow(IntOut o) { return o.p; }

template <class Sys, class... A>
lapack_int lapacke(const char* name, Sys sys, A... a) {
  if (void* f = ops::blas::library_symbol(name)) {
    if (!ops::blas::library_ilp64()) return reinterpret_cast<lapack_int (*)(decltype(narrow(a))...)>(f)(narrow(a)...);
    std::tuple<Hold<A>...> h(a...);
    using F = int64_t (*)(decltype(std::declval<Hold<A>&>().get())...);
    return static_cast<lapack_int>(std::apply([&](auto&... x) { return reinterpret_cast<F>(f)(x.get()...); }, h));
  }
  return sys(narrow(a)...);
}
#define NPC_LAPACKE(fn, ...) lapacke(#fn, fn, __VA_ARGS__)

// ---- typed LAPACKE entry points, one overload per dtype
lapack_int getrf(lapack_int n, float* a, lapack_int* ip) { return NPC_LAPACKE(LAPACKE_sgetrf, Layout{kCol}, n, n, a, n, IntOut{ip, n}); }
lapack_int getrf(lapack_int n, double* a, lapack_int* ip) { return NPC_LAPACKE(LAPACKE_dgetrf, Layout{kCol}, n, n, a, n, IntOut{ip, n}); }
lapack_int getrf(lapack_int n, cf* a, lapack_int* ip) { return NPC_LAPACKE(LAPACKE_cgetrf, Layout{kCol}, n, n, a, n, IntOut{ip, n}); }
lapack_int getrf(lapack_int n, cd* a, lapack_int* ip) { return NPC_LAPACKE(LAPACKE_zgetrf, Layout{kCol}, n, n, a, n, IntOut{ip, n}); }

lapack_int gesv(lapack_int n, lapack_int k, float* a, lapack_int* ip, float* b) { return NPC_LAPACKE(LAPACKE_sgesv, Layout{kCol}, n, k, a, n, IntOut{ip, n}, b, n); }
lapack_int gesv(lapack_int n, lapack_int k, double* a, lapack_int* ip, double* b) { return NPC_LAPACKE(LAPACKE_dgesv, Layout{kCol}, n, k, a, n, IntOut{ip, n}, b, n); }
lapack_int gesv(lapack_int n, lapack_int k, cf* a, lapack_int* ip, cf* b) { return NPC_LAPACKE(LAPACKE_cgesv, Layout{kCol}, n, k, a, n, IntOut{ip, n}, b, n); }
lapack_int gesv(lapack_int n, lapack_int k, cd* a, lapack_int* ip, cd* b) { return NPC_LAPACKE(LAPACKE_zgesv, Layout{kCol}, n, k, a, n, IntOut{ip, n}, b, n); }

lapack_int potrf(char u, lapack_int n, float* a) { return NPC_LAPACKE(LAPACKE_spotrf, Layout{kCol}, u, n, a, n); }
lapack_int potrf(char u, lapack_int n, double* a) { return NPC_LAPACKE(LAPACKE_dpotrf, Layout{kCol}, u, n, a, n); }
lapack_int potrf(char u, lapack_int n, cf* a) { return NPC_LAPACKE(LAPACKE_cpotrf, Layout{kCol}, u, n, a, n); }
lapack_int potrf(char u, lapack_int n, cd* a) { return NPC_LAPACKE(LAPACKE_zpotrf, Layout{kCol}, u, n, a, n); }

lapack_int heevd(char j, char u, lapack_int n, float* a, float* w) { return NPC_LAPACKE(LAPACKE_ssyevd, Layout{kCol}, j, u, n, a, n, w); }
lapack_int heevd(char j, char u, lapack_int n, double* a, double* w) { return NPC_LAPACKE(LAPACKE_dsyevd, Layout{kCol}, j, u, n, a, n, w); }
lapack_int heevd(char j, char u, lapack_int n, cf* a, float* w) { return NPC_LAPACKE(LAPACKE_cheevd, Layout{kCol}, j, u, n, a, n, w); }
lapack_int heevd(char j, char u, lapack_int n, cd* a, double* w) { return NPC_LAPACKE(LAPACKE_zheevd, Layout{kCol}, j, u, n, a, n, w); }

lapack_int gesdd(char j, lapack_int m, lapack_int n, float* a, float* s, float* u, lapack_int ldu, float* vt, lapack_int ldvt) {
  return NPC_LAPACKE(LAPACKE_sgesdd, Layout{kCol}, j, m, n, a, m, s, u, ldu, vt, ldvt);
}
lapack_int gesdd(char j, lapack_int m, lapack_int n, double* a, double* s, double* u, lapack_int ldu, double* vt, lapack_int ldvt) {
  return NPC_LAPACKE(LAPACKE_dgesdd, Layout{kCol}, j, m, n, a, m, s, u, ldu, vt, ldvt);
}
lapack_int gesdd(char j, lapack_int m, lapack_int n, cf* a, float* s, cf* u, lapack_int ldu, cf* vt, lapack_int ldvt) {
  return NPC_LAPACKE(LAPACKE_cgesdd, Layout{kCol}, j, m, n, a, m, s, u, ldu, vt, ldvt);
}
lapack_int gesdd(char j, lapack_int m, lapack_int n, cd* a, double* s, cd* u, lapack_int ldu, cd* vt, lapack_int ldvt) {
  return NPC_LAPACKE(LAPACKE_zgesdd, Layout{kCol}, j, m, n, a, m, s, u, ldu, vt, ldvt);
}

lapack_int geqrf(lapack_int m, lapack_int n, float* a, lapack_int lda, float* t) { return NPC_LAPACKE(LAPACKE_sgeqrf, Layout{kCol}, m, n, a, lda, t); }
lapack_int geqrf(lapack_int m, lapack_int n, double* a, lapack_int lda, double* t) { return NPC_LAPACKE(LAPACKE_dgeqrf, Layout{kCol}, m, n, a, lda, t); }
lapack_int geqrf(lapack_int m, lapack_int n, cf* a, lapack_int lda, cf* t) { return NPC_LAPACKE(LAPACKE_cgeqrf, Layout{kCol}, m, n, a, lda, t); }
lapack_int geqrf(lapack_int m, lapack_int n, cd* a, lapack_int lda, cd* t) { return NPC_LAPACKE(LAPACKE_zgeqrf, Layout{kCol}, m, n, a, lda, t); }
lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, float* a, lapack_int lda, const float* t) { return NPC_LAPACKE(LAPACKE_sorgqr, Layout{kCol}, m, n, k, a, lda, t); }
lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, double* a, lapack_int lda, const double* t) { return NPC_LAPACKE(LAPACKE_dorgqr, Layout{kCol}, m, n, k, a, lda, t); }
lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, cf* a, lapack_int lda, const cf* t) { return NPC_LAPACKE(LAPACKE_cungqr, Layout{kCol}, m, n, k, a, lda, t); }
lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, cd* a, lapack_int lda, const cd* t) { return NPC_LAPACKE(LAPACKE_zungqr, Layout{kCol}, m, n, k, a, lda, t); }

lapack_int gelsd(lapack_int m, lapack_int n, lapack_int k, float* a, float* b, lapack_int ldb, float* s, float rc, lapack_int* r) {
  return NPC_LAPACKE(LAPACKE_sgelsd, Layout{kCol}, m, n, k, a, std::max<lapack_int>(m, 1), b, ldb, s, rc, IntOut{r, 1});
}
lapack_int gelsd(lapack_int m, lapack_int n, lapack_int k, double* a, double* b, lapack_int ldb, double* s, double rc, lapack_int* r) {
  return NPC_LAPACKE(LAPACKE_dgelsd, Layout{kCol}, m, n, k, a, std::max<lapack_int>(m, 1), b, ldb, s, rc, IntOut{r, 1});
}
lapack_int gelsd(lapack_int m, lapack_int n, lapack_int k, cf* a, cf* b, lapack_int ldb, float* s, float rc, lapack_int* r) {
  return NPC_LAPACKE(LAPACKE_cgelsd, Layout{kCol}, m, n, k, a, std::max<lapack_int>(m, 1), b, ldb, s, rc, IntOut{r, 1});
}
lapack_int gelsd(lapack_int m, lapack_int n, lapack_int k, cd* a, cd* b, lapack_int ldb, double* s, double rc, lapack_int* r) {
  return NPC_LAPACKE(LAPACKE_zgelsd, Layout{kCol}, m, n, k, a, std::max<lapack_int>(m, 1), b, ldb, s, rc, IntOut{r, 1});
}

// geev: real inputs give (wr, wi) and packed real vectors; unpacked into complex here.
lapack_int geev(char jv, lapack_int n, float* a, cf* w, cf* v) {
  std::vector<float> wr(n), wi(n), vr(static_cast<size_t>(jv == 'V' ? n * n : 1));
  lapack_int info = NPC_LAPACKE(LAPACKE_sgeev, Layout{kCol}, 'N', jv, n, a, n, wr.data(), wi.data(), static_cast<decltype(wr.data())>(nullptr), 1, vr.data(), jv == 'V' ? n : 1);
  if (info) return info;
  for (lapack_int i = 0; i < n; ++i) w[i] = cf(wr[i], wi[i]);
  if (jv == 'V')
    for (lapack_int j = 0; j < n; ++j) {
      if (wi[j] != 0 && j + 1 < n) {
        for (lapack_int i = 0; i < n; ++i) {
          v[i + j * n] = cf(vr[i + j * n], vr[i + (j + 1) * n]);
          v[i + (j + 1) * n] = cf(vr[i + j * n], -vr[i + (j + 1) * n]);
        }
        ++j;
      } else {
        for (lapack_int i = 0; i < n; ++i) v[i + j * n] = cf(vr[i + j * n], 0);
      }
    }
  return 0;
}
lapack_int geev(char jv, lapack_int n, double* a, cd* w, cd* v) {
  std::vector<double> wr(n), wi(n), vr(static_cast<size_t>(jv == 'V' ? n * n : 1));
  lapack_int info = NPC_LAPACKE(LAPACKE_dgeev, Layout{kCol}, 'N', jv, n, a, n, wr.data(), wi.data(), static_cast<decltype(wr.data())>(nullptr), 1, vr.data(), jv == 'V' ? n : 1);
  if (info) return info;
  for (lapack_int i = 0; i < n; ++i) w[i] = cd(wr[i], wi[i]);
  if (jv == 'V')
    for (lapack_int j = 0; j < n; ++j) {
      if (wi[j] != 0 && j + 1 < n) {
        for (lapack_int i = 0; i < n; ++i) {
          v[i + j * n] = cd(vr[i + j * n], vr[i + (j + 1) * n]);
          v[i + (j + 1) * n] = cd(vr[i + j * n], -vr[i + (j + 1) * n]);
        }
        ++j;
      } else {
        for (lapack_int i = 0; i < n; ++i) v[i + j * n] = cd(vr[i + j * n], 0);
      }
    }
  return 0;
}
lapack_int geev(char jv, lapack_int n, cf* a, cf* w, cf* v) {
  return NPC_LAPACKE(LAPACKE_cgeev, Layout{kCol}, 'N', jv, n, a, n, w, static_cast<decltype(w)>(nullptr), 1, v, jv == 'V' ? n : 1);
}
lapack_int geev(char jv, lapack_int n, cd* a, cd* w, cd* v) {
  return NPC_LAPACKE(LAPACKE_zgeev, Layout{kCol}, 'N', jv, n, a, n, w, static_cast<decltype(w)>(nullptr), 1, v, jv == 'V' ? n : 1);
}

template <class T> struct real_of { using type = T; };
template <class T> struct real_of<std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_of<T>::type;
template <class T> struct complex_of { using type = std::complex<T>; };
template <class T> struct complex_of<std::complex<T>> { using type = std::complex<T>; };
template <class T> using complex_t = typename complex_of<T>::type;

Shape batch_of(const ndarray& a) { return Shape(a.shape().begin(), a.shape().end() - 2); }
int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
Shape cat(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

// A copy of a stack whose matrices are each column-major and contiguous: the C-order
// copy of the array with its last two axes swapped. Element (i, j) of matrix b sits at
// data[b * rows * cols + i + j * rows].
ndarray colmajor(const ndarray& a) {
  std::vector<int64_t> perm(a.ndim());
  for (int i = 0; i < a.ndim(); ++i) perm[i] = i;
  std::swap(perm[a.ndim() - 1], perm[a.ndim() - 2]);
  return a.transpose(perm).copy(Order::C);
}
// A C-order buffer (batch..., cols, rows) seen as (batch..., rows, cols): the matrices of a
// result written column-major by LAPACK.
ndarray colmajor_result(const Shape& batch, int64_t rows, int64_t cols, DType t, bool zero = false) {
  Shape s = cat(batch, {cols, rows});
  ndarray buf = zero ? zeros(s, t) : empty(s, t);
  std::vector<int64_t> perm(buf.ndim());
  for (int i = 0; i < buf.ndim(); ++i) perm[i] = i;
  std::swap(perm[buf.ndim() - 1], perm[buf.ndim() - 2]);
  return buf.transpose(perm);
}
template <class T>
T* ptr(const ndarray& a) {
  return reinterpret_cast<T*>(a.data());
}

template <class F>
void visit_lapack(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(detail::TypeTag<float>{});
    case DType::Float64: return f(detail::TypeTag<double>{});
    case DType::Complex64: return f(detail::TypeTag<cf>{});
    case DType::Complex128: return f(detail::TypeTag<cd>{});
    default: throw TypeError("array type " + std::string(name(t)) + " is unsupported in linalg");
  }
}

lapack_int li(int64_t v) { return static_cast<lapack_int>(v); }

// Note [LAPACKE NaN checks]: LAPACKE by default scans its inputs for NaN and, finding one,
// returns a negative info without running the routine, which left npc's outputs
// uninitialised. NumPy calls the Fortran drivers directly: NaN and inf flow through them
// and only the drivers' own info codes decide between a result and a LinAlgError (inv of a
// NaN matrix gives NaNs, cholesky and qr give NaN factors, gesdd reports failure). Turning
// the scan off once gives npc the same behaviour; every call below then treats any nonzero
// info as a failure, as NumPy's gufuncs do.
void raw_lapack() {
  static const bool done = (LAPACKE_set_nancheck(0), true);
  (void)done;
  if (void* f = ops::blas::library_symbol("LAPACKE_set_nancheck")) reinterpret_cast<void (*)(int)>(f)(0);
}

}  // namespace
}  // namespace npc::lapack

namespace npc::lapack {
namespace {
// Note [small LAPACK calls on one thread]
// OpenBLAS parallelises the LU factorisation of small matrices too; a 150x150 complex solve
// ran 4x slower on two threads than on one (thread hand-offs at every panel, and far worse
// when the cores are shared), and loops call such solves many times. Matrices up to
// kSmallLapack rows are factorised on the calling thread alone (ops::blas::OneThread).
constexpr int64_t kSmallLapack = 200;

class SingleThreadedBlas {
 public:
  explicit SingleThreadedBlas(int64_t n) : one_(n <= kSmallLapack) {}

 private:
  ops::blas::OneThread one_;
};

}  // namespace

ndarray solve(const ndarray& a, const ndarray& b) {
  check_solve_args(a, b);
  raw_lapack();
  const Shape batch = batch_of(a);
  const int64_t n = a.shape()[a.ndim() - 1], k = b.shape()[b.ndim() - 1];
  ndarray A = colmajor(a);
  ndarray X = colmajor(b);  // overwritten with the solution
  SingleThreadedBlas one_thread(n);
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<lapack_int> ip(std::max<int64_t>(n, 1));
    const int64_t nb = count(batch);
    if (n == 0) return;
    for (int64_t i = 0; i < nb; ++i)
      if (gesv(li(n), li(k), ptr<T>(A) + i * n * n, ip.data(), ptr<T>(X) + i * n * k) != 0) throw LinAlgError("Singular matrix");
  });
  std::vector<int64_t> perm(X.ndim());
  for (int i = 0; i < X.ndim(); ++i) perm[i] = i;
  std::swap(perm[X.ndim() - 1], perm[X.ndim() - 2]);
  return X.transpose(perm);
}

ndarray inv(const ndarray& a) {
  check_stacked_square(a);
  raw_lapack();
  const Shape batch = batch_of(a);
  const int64_t n = a.shape()[a.ndim() - 1];
  ndarray A = colmajor(a);
  ndarray X = colmajor_result(batch, n, n, a.dtype(), true);
  SingleThreadedBlas one_thread(n);
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t nb = count(batch);
    std::vector<lapack_int> ip(std::max<int64_t>(n, 1));
    T* x = ptr<T>(X);  // X's buffer: (batch, n, n) contiguous, each matrix column-major
    for (int64_t i = 0; i < nb; ++i) {
      T* xi = x + i * n * n;
      for (int64_t d = 0; d < n; ++d) xi[d + d * n] = T(1);
      if (n && gesv(li(n), li(n), ptr<T>(A) + i * n * n, ip.data(), xi) != 0) throw LinAlgError("Singular matrix");
    }
  });
  return X;
}

std::pair<ndarray, ndarray> slogdet(const ndarray& a) {
  check_stacked_square(a);
  raw_lapack();
  const Shape batch = batch_of(a);
  const int64_t n = a.shape()[a.ndim() - 1];
  ndarray A = colmajor(a);
  ndarray sign = empty(batch, a.dtype());
  ndarray logdet = empty(batch, real_dtype(a.dtype()));
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    const int64_t nb = count(batch);
    std::vector<lapack_int> ip(std::max<int64_t>(n, 1));
    for (int64_t i = 0; i < nb; ++i) {
      T* m = ptr<T>(A) + i * n * n;
      lapack_int info = n ? getrf(li(n), m, ip.data()) : 0;
      T s(1);
      R l(0);
      if (info != 0) {
        s = T(0);
        l = -std::numeric_limits<R>::infinity();
      } else {
        // NumPy: sign from the pivots and the diagonal's phases; log|det| as a sum.
        bool odd = false;
        for (int64_t d = 0; d < n; ++d) odd ^= (ip[d] != d + 1);
        if (odd) s = -s;
        for (int64_t d = 0; d < n; ++d) {
          T e = m[d + d * n];
          R ae = std::abs(e);
          // Real: only the sign bit counts (e / |e| would make inf / inf = NaN).
          if constexpr (detail::is_complex_v<T>) s *= e / ae;
          else if (e < 0) s = -s;
          l += std::log(ae);
        }
      }
      ptr<T>(sign)[i] = s;
      ptr<R>(logdet)[i] = l;
    }
  });
  return {sign, logdet};
}

ndarray det(const ndarray& a) {
  // NumPy computes det as sign * exp(log|det|) from the LU factors (not as a product).
  auto [sign, logdet] = slogdet(a);
  ndarray out = empty(sign.shape(), a.dtype());
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    for (int64_t i = 0, nb = out.size(); i < nb; ++i)
      ptr<T>(out)[i] = ptr<T>(sign)[i] * static_cast<R>(std::exp(ptr<R>(logdet)[i]));
  });
  return out;
}

ndarray cholesky(const ndarray& a, bool upper) {
  check_stacked_square(a);
  raw_lapack();
  const Shape batch = batch_of(a);
  const int64_t n = a.shape()[a.ndim() - 1];
  ndarray A = colmajor(a);
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t nb = count(batch);
    for (int64_t i = 0; i < nb; ++i) {
      T* m = ptr<T>(A) + i * n * n;
      if (n && potrf(upper ? 'U' : 'L', li(n), m) != 0) throw LinAlgError("Matrix is not positive definite");
      // Zero the other triangle (LAPACK leaves the input there).
      for (int64_t c = 0; c < n; ++c)
        for (int64_t r = 0; r < n; ++r)
          if (upper ? r > c : r < c) m[r + c * n] = T(0);
    }
  });
  std::vector<int64_t> perm(A.ndim());
  for (int i = 0; i < A.ndim(); ++i) perm[i] = i;
  std::swap(perm[A.ndim() - 1], perm[A.ndim() - 2]);
  return A.transpose(perm);
}

std::pair<ndarray, ndarray> eigh(const ndarray& a, bool lower, bool vectors) {
  check_stacked_square(a);
  raw_lapack();
  const Shape batch = batch_of(a);
  const int64_t n = a.shape()[a.ndim() - 1];
  ndarray A = colmajor(a);
  ndarray w = empty(cat(batch, {n}), real_dtype(a.dtype()));
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    const int64_t nb = count(batch);
    for (int64_t i = 0; i < nb; ++i)
      if (n && heevd(vectors ? 'V' : 'N', lower ? 'L' : 'U', li(n), ptr<T>(A) + i * n * n, ptr<R>(w) + i * n) != 0)
        throw LinAlgError("Eigenvalues did not converge");
  });
  if (!vectors) return {w, ndarray()};
  std::vector<int64_t> perm(A.ndim());
  for (int i = 0; i < A.ndim(); ++i) perm[i] = i;
  std::swap(perm[A.ndim() - 1], perm[A.ndim() - 2]);
  return {w, A.transpose(perm)};
}

std::tuple<ndarray, ndarray, ndarray> svd(const ndarray& a, bool full_matrices, bool vectors) {
  check_stacked_2d(a);
  raw_lapack();
  const Shape batch = batch_of(a);
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1], k = std::min(m, n);
  ndarray A = colmajor(a);
  ndarray s = empty(cat(batch, {k}), real_dtype(a.dtype()));
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  ndarray U, Vh;
  if (vectors) {
    // Empty inputs: NumPy returns identities for the full factors.
    const bool zero = (m == 0 || n == 0);
    U = colmajor_result(batch, m, ucols, a.dtype(), zero);
    Vh = colmajor_result(batch, vrows, n, a.dtype(), zero);
  }
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    const int64_t nb = count(batch);
    const char job = vectors ? (full_matrices ? 'A' : 'S') : 'N';
    T dummy[1];
    for (int64_t i = 0; i < nb; ++i) {
      if (k == 0) {
        if (vectors) {
          for (int64_t d = 0; d < ucols; ++d) ptr<T>(U)[i * m * ucols + d + d * m] = T(1);
          for (int64_t d = 0; d < vrows; ++d) ptr<T>(Vh)[i * vrows * n + d + d * vrows] = T(1);
        }
        continue;
      }
      // Note [SVD of non-finite input]: NumPy's LAPACK fails gesdd on any NaN or inf entry
      // (NaN through its norm check, inf through the scaling that follows), so NumPy raises
      // "SVD did not converge"; older LAPACK builds instead return NaN singular values with
      // info 0. Checking the entries first gives NumPy's error whichever build npc links.
      const T* ai = ptr<T>(A) + i * m * n;
      for (int64_t e = 0; e < m * n; ++e)
        if (!std::isfinite(std::abs(ai[e]))) throw LinAlgError("SVD did not converge");
      T* u = vectors ? ptr<T>(U) + i * m * ucols : dummy;
      T* vt = vectors ? ptr<T>(Vh) + i * vrows * n : dummy;
      if (gesdd(job, li(m), li(n), ptr<T>(A) + i * m * n, ptr<R>(s) + i * k, u, li(std::max<int64_t>(m, 1)), vt,
                li(std::max<int64_t>(vrows, 1))) != 0)
        throw LinAlgError("SVD did not converge");
    }
  });
  return {U, s, Vh};
}

std::pair<ndarray, ndarray> qr(const ndarray& a, const std::string& mode) {
  check_qr_mode(mode);
  check_stacked_2d(a);
  raw_lapack();
  const Shape batch = batch_of(a);
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1], k = std::min(m, n);
  const bool complete = mode == "complete";
  const int64_t qcols = complete ? m : k, rrows = complete ? m : k;
  ndarray A = colmajor(a);
  ndarray R = colmajor_result(batch, rrows, n, a.dtype(), true);
  ndarray Q;
  if (mode != "r") Q = colmajor_result(batch, m, qcols, a.dtype(), true);
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t nb = count(batch);
    std::vector<T> tau(std::max<int64_t>(k, 1));
    for (int64_t i = 0; i < nb; ++i) {
      T* ai = ptr<T>(A) + i * m * n;
      if (k && geqrf(li(m), li(n), ai, li(std::max<int64_t>(m, 1)), tau.data()) != 0) throw LinAlgError("QR failed");
      T* ri = ptr<T>(R) + i * rrows * n;
      for (int64_t c = 0; c < n; ++c)
        for (int64_t r = 0; r <= std::min(c, rrows - 1); ++r)
          if (r < m) ri[r + c * rrows] = ai[r + c * m];
      if (mode == "r") continue;
      T* qi = ptr<T>(Q) + i * m * qcols;
      if (k == 0) {
        for (int64_t d = 0; d < std::min(m, qcols); ++d) qi[d + d * m] = T(1);
        continue;
      }
      // Q's first k columns hold the reflectors; orgqr expands them to qcols columns.
      for (int64_t c = 0; c < k; ++c)
        for (int64_t r = 0; r < m; ++r) qi[r + c * m] = ai[r + c * m];
      if (orgqr(li(m), li(qcols), li(k), qi, li(m), tau.data()) != 0) throw LinAlgError("QR failed");
    }
  });
  return {Q, R};
}

std::pair<ndarray, ndarray> eig(const ndarray& a, bool vectors) {
  check_stacked_square(a);
  raw_lapack();
  const Shape batch = batch_of(a);
  const int64_t n = a.shape()[a.ndim() - 1];
  const DType ct = complex_dtype(a.dtype());
  ndarray A = colmajor(a);
  ndarray w = empty(cat(batch, {n}), ct);
  ndarray V;
  if (vectors) V = colmajor_result(batch, n, n, ct);
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = complex_t<T>;
    const int64_t nb = count(batch);
    C dummy[1];
    for (int64_t i = 0; i < nb; ++i)
      if (n && geev(vectors ? 'V' : 'N', li(n), ptr<T>(A) + i * n * n, ptr<C>(w) + i * n,
                    vectors ? ptr<C>(V) + i * n * n : dummy) != 0)
        throw LinAlgError("Eigenvalues did not converge");
  });
  return {w, V};
}

std::tuple<ndarray, ndarray, ndarray, int64_t> lstsq(const ndarray& a, const ndarray& b, double rcond) {
  check_lstsq_args(a, b);
  raw_lapack();
  const int64_t m = a.shape()[0], n = a.shape()[1], k = b.shape()[1];
  const int64_t ldb = std::max<int64_t>({m, n, 1});
  ndarray A = colmajor(a);
  // b padded to max(m, n) rows: gelsd returns the n-row solution in place.
  ndarray B = colmajor_result({}, ldb, k, a.dtype(), true);
  ndarray s = empty(std::vector<int64_t>{std::min(m, n)}, real_dtype(a.dtype()));
  int64_t rank = 0;
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    ndarray bc = colmajor(b);
    for (int64_t c = 0; c < k; ++c)
      for (int64_t r = 0; r < m; ++r) ptr<T>(B)[r + c * ldb] = ptr<T>(bc)[r + c * m];
    lapack_int rk = 0;
    // As Note [SVD of non-finite input]: gelsd fails on a non-finite `a` in NumPy's LAPACK;
    // older builds also print xerbla complaints to stderr on the way. (A non-finite `b`
    // runs and gives NaN, in both.)
    for (int64_t e = 0; e < m * n; ++e)
      if (!std::isfinite(std::abs(ptr<T>(A)[e]))) throw LinAlgError("SVD did not converge in Linear Least Squares");
    if (m && n && k) {
      if (gelsd(li(m), li(n), li(k), ptr<T>(A), ptr<T>(B), li(ldb), ptr<R>(s), static_cast<R>(rcond), &rk) != 0)
        throw LinAlgError("SVD did not converge in Linear Least Squares");
    } else if (m && n) {
      std::vector<T> one(static_cast<size_t>(ldb), T(0));
      if (gelsd(li(m), li(n), 1, ptr<T>(A), one.data(), li(ldb), ptr<R>(s), static_cast<R>(rcond), &rk) != 0)
        throw LinAlgError("SVD did not converge in Linear Least Squares");
    }
    rank = rk;
  });
  // The first n rows of B are the solution; rows n..m-1 hold the residual components
  // (squared and summed per column, in order, as NumPy does) when the rank is full.
  ndarray x = B.with_geometry(B.offset(), B.dtype(), {n, k}, {B.strides()[0], B.strides()[1]});
  const bool have_resid = rank == n && m > n;
  ndarray resid = empty(std::vector<int64_t>{have_resid ? k : 0}, real_dtype(a.dtype()));
  if (have_resid)
    visit_lapack(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using R = real_t<T>;
      for (int64_t c = 0; c < k; ++c) {
        R acc = 0;
        for (int64_t r = n; r < m; ++r) {
          const T v = ptr<T>(B)[r + c * ldb];
          if constexpr (detail::is_complex_v<T>) acc += v.real() * v.real() + v.imag() * v.imag();
          else acc += v * v;
        }
        ptr<R>(resid)[c] = acc;
      }
    });
  return {x.copy(), resid, s, rank};
}

#else
#define NPC_NO_LAPACK_ throw std::runtime_error("npc was built without LAPACKE")
ndarray solve(const ndarray& a, const ndarray& b) { check_solve_args(a, b); NPC_NO_LAPACK_; }
ndarray inv(const ndarray& a) { check_stacked_square(a); NPC_NO_LAPACK_; }
std::pair<ndarray, ndarray> slogdet(const ndarray& a) { check_stacked_square(a); NPC_NO_LAPACK_; }
ndarray det(const ndarray& a) { check_stacked_square(a); NPC_NO_LAPACK_; }
ndarray cholesky(const ndarray& a, bool) { check_stacked_square(a); NPC_NO_LAPACK_; }
std::pair<ndarray, ndarray> eigh(const ndarray& a, bool, bool) { check_stacked_square(a); NPC_NO_LAPACK_; }
std::tuple<ndarray, ndarray, ndarray> svd(const ndarray& a, bool, bool) { check_stacked_2d(a); NPC_NO_LAPACK_; }
std::pair<ndarray, ndarray> qr(const ndarray& a, const std::string& mode) {
  check_qr_mode(mode);
  check_stacked_2d(a);
  NPC_NO_LAPACK_;
}
std::pair<ndarray, ndarray> eig(const ndarray& a, bool) { check_stacked_square(a); NPC_NO_LAPACK_; }
std::tuple<ndarray, ndarray, ndarray, int64_t> lstsq(const ndarray& a, const ndarray& b, double) {
  check_lstsq_args(a, b);
  NPC_NO_LAPACK_;
}
#endif

}  // namespace npc::lapack
