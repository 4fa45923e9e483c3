// The BLAS entry points npc calls (matmul, dot, vdot, inner), resolved once per process
// (Note [one BLAS per process] in blas.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "npc/dtype.hpp"

namespace npc::ops::blas {

// Whether BLAS computes products of dtype `t` (float32, float64, complex64, complex128).
inline bool blas_dtype(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Complex64 || t == DType::Complex128;
}

// CBLAS's enumeration values (the same in every CBLAS).
enum : int { kRowMajor = 101, kNoTrans = 111, kTrans = 112, kUpper = 121 };

// True when some BLAS is available (the linked CBLAS, or a library chosen with use_library).
bool available();

// C = A @ B (row-major; alpha 1, beta 0), A n x k (ta: stored transposed), B k x m, C n x m
// contiguous. T is float, double, std::complex<float> or std::complex<double>.
template <class T>
void gemm(int ta, int tb, int64_t n, int64_t m, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb,
          void* c);
// y = op(A) x (row-major A rows x cols, alpha 1, beta 0), y contiguous.
template <class T>
void gemv(int tr, int64_t rows, int64_t cols, const void* a, int64_t lda, const void* x, int64_t incx, void* y);
// *out = sum x[i] * y[i] (unconjugated for complex).
template <class T>
void dot(int64_t k, const void* x, int64_t incx, const void* y, int64_t incy, void* out);

// The upper triangle of C = op(A) op(A)^T (row-major; alpha 1, beta 0): A n x k (tr kNoTrans)
// or k x n (kTrans); C n x n with leading dimension ldc, its lower triangle left unwritten.
template <class T>
void syrk(int tr, int64_t n, int64_t k, const void* a, int64_t lda, void* c, int64_t ldc);
// y += alpha * x (`alpha` points to a T).
template <class T>
void axpy(int64_t k, const void* alpha, const void* x, int64_t incx, void* y, int64_t incy);

// Uses the OpenBLAS build at `path` (already loaded or loadable) whose symbols are named
// `prefix` + cblas name + `suffix` (NumPy's wheels: prefix "scipy_", suffix "64_" with 64-bit
// integers, or "" with 32-bit ones). Returns false, changing nothing, when a symbol is missing.
bool use_library(const std::string& path, const std::string& prefix, const std::string& suffix, bool ilp64);
// Finds a loaded OpenBLAS of NumPy's wheels (scipy-openblas64 or scipy-openblas32) in this
// process and uses it; returns its path, or "" when there is none (the linked BLAS stays).
std::string use_loaded_numpy_blas();
// "system" (the linked CBLAS), "none", or the path of the library in use.
std::string current();

// Function `name` ("LAPACKE_dgesv", "openblas_set_num_threads") of the library chosen with
// use_library, with its prefix and suffix; null while the linked library is in use (its
// LAPACKE is called directly) or when the library lacks it. Its integers are 64-bit when
// library_ilp64().
void* library_symbol(const std::string& name);
bool library_ilp64();

// Whether a compiled graph's product of (n x k) @ (k x m) elements runs on one BLAS thread:
// below a size, and with few multiply-adds per element moved (Note [compiled products on one
// BLAS thread] in blas.cpp); never a matrix-vector product of 2^23 multiply-adds or more.
bool compiled_product_on_one_thread(int64_t n, int64_t m, int64_t k);

// Whether the replays of a compiled graph measure which of one BLAS thread and OpenBLAS's
// threads runs a product of (n x k) @ (k x m) elements faster (Note [timed product threads] in
// src/fusion/backend.cpp): those compiled_product_on_one_thread leaves threaded, below its size,
// and matrix-vector products from 2^20 up to 2^23 multiply-adds.
bool compiled_product_timed(int64_t n, int64_t m, int64_t k);

// How gemm and gemv run a compiled graph's products while a CompiledProducts exists on this thread:
// by compiled_product_on_one_thread (Rule), on this thread alone (One), or as NumPy's call
// with the library's threads (Library). Inherit keeps the way of an enclosing CompiledProducts
// on this thread (a replay's timed choice, Note [timed product threads] in
// src/fusion/backend.cpp), or is Rule where there is none.
enum class ProductThreads { Rule, One, Library, Inherit };

class CompiledProducts {
 public:
  explicit CompiledProducts(ProductThreads how = ProductThreads::Inherit);
  ~CompiledProducts();
  CompiledProducts(const CompiledProducts&) = delete;
  CompiledProducts& operator=(const CompiledProducts&) = delete;

 private:
  int previous_;
};

// While one exists (on any thread), the BLAS in use runs its routines on the calling thread
// alone: the first of overlapping holders sets OpenBLAS to one thread, the last restores the
// count it found. Does nothing when the BLAS is not OpenBLAS. (Note [small LAPACK calls on one
// thread] in linalg.cpp, Note [compiled products on one BLAS thread] in blas.cpp.)
class OneThread {
 public:
  explicit OneThread(bool active = true);
  ~OneThread();
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;
  // Whether the BLAS's thread count can be set (it is OpenBLAS).
  static bool controllable();

 private:
  bool active_;
};

}  // namespace npc::ops::blas
