#pragma once
/// \file linalg.hpp
/// Matrix products on OpenBLAS (float32/64, complex64/128) and exact native loops
/// (bool, integers, float16). Mirrors numpy.matmul; the other products of numpy
/// (dot, inner, tensordot, einsum, ...) are built on it in python/npc/_linalg.py.
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "npc/ndarray.hpp"

namespace npc {

/// numpy.matmul(a, b): (..., n, k) @ (..., k, m) -> (..., n, m) with the batch dimensions
/// broadcast; a 1-D `a` is a row (its dimension is removed from the result), a 1-D `b` a
/// column. The result dtype is promote_types(a, b); bool products are logical or-of-ands,
/// integer products wrap like NumPy's, float16 accumulates in float32.
/// Throws ValueError for 0-d operands, mismatched core dimensions and batch shapes that do
/// not broadcast (NumPy's messages).
ndarray matmul(const ndarray& a, const ndarray& b);

/// numpy.dot(a, b) of operands with at least one dimension: NumPy's paths for 1-D and 2-D
/// operands (cblas_matrixproduct: scaling by a one-element operand, dot, gemv, gemm, syrk)
/// and the dot of each row and column for more dimensions, so the bits and floating-point
/// flags are NumPy's. Throws ValueError "shapes ... not aligned" (NumPy's message).
ndarray dot(const ndarray& a, const ndarray& b);

/// numpy.matmul of two operands of one BLAS dtype (float32, float64, complex64, complex128)
/// with one or two dimensions each, given as data pointers and byte strides: `a` is n x k
/// (strides ars, acs; a 1-D `a` is the row n = 1, ars = 0), `b` is k x m (brs, bcs; a 1-D
/// `b` is the column m = 1, bcs = 0); the n x m result is stored C-contiguous at `out`. The
/// same loops and BLAS calls as matmul() for such operands (so the same bits); no checks,
/// no floating-point flag bookkeeping. Returns false (storing nothing) for other dtypes.
bool matmul_into(DType t, const std::byte* a, int64_t ars, int64_t acs, const std::byte* b, int64_t brs, int64_t bcs,
                 std::byte* out, int64_t n, int64_t k, int64_t m);

/// The floating-point flags (FpFlag bits, npc/fperror.hpp) that this thread's last
/// matmul or dot raised, read as NumPy reads them after its loops and BLAS calls; returns
/// and clears them.
int take_product_fp_flags();

/// numpy.outer: the products a[i] * b[j] of the flattened inputs, shape (a.size, b.size),
/// dtype promote_types(a, b); each element is exactly NumPy's multiply (bool: and).
ndarray outer(const ndarray& a, const ndarray& b);

/// Whether npc was built with a BLAS library (matmul of floats uses it when true).
bool have_blas();

/// numpy.einsum of two operands of one float or complex dtype as NumPy's sum-of-products
/// loop (Note [einsum sum of products] in src/ops/einsum.cpp): `la`, `lb` and `lo` name the
/// axes of a, b and the result, one label each, each label once per string; every label of
/// `lo` names an axis of a or b; labels of a and b not in `lo` are summed over. The result is
/// C-contiguous. nullopt for another dtype, traced operands, a 0-d result, or elements that
/// are not aligned; ValueError for a label of two sizes.
std::optional<ndarray> einsum_pair(const ndarray& a, std::string_view la, const ndarray& b, std::string_view lb,
                                   std::string_view lo);

}  // namespace npc

namespace npc::lapack {

// Note [linalg stacks]
// The LAPACK-backed functions below take stacks of matrices (..., m, n) that are already
// of a LAPACK dtype (float32, float64, complex64, complex128: python/npc/linalg chooses it as
// numpy.linalg does) and loop over the stack. Each matrix is copied into a column-major
// buffer (LAPACK overwrites its input); matrix results are returned as views whose last
// two axes are column-major. A failure anywhere in the stack throws LinAlgError with
// NumPy's message, as numpy.linalg does for the whole call.

// Each function checks its arguments first, as numpy.linalg does: LinAlgError "%d-dimensional
// array given. Array must be at least two-dimensional" and "Last 2 dimensions of the array
// must be square" (NumPy's messages); TypeError for a dtype other than the four LAPACK ones
// or operands of different dtypes; ValueError for a matrix dimension beyond LAPACK's 32-bit
// integers.

/// Whether npc was built with LAPACKE; when false these functions throw RuntimeError.
bool available();
/// numpy.linalg.solve on a (..., n, n) and b (..., n, k) of one batch shape; "Singular matrix".
/// ValueError (numpy's gufunc messages) when b has fewer than two dimensions, another row
/// count than n, or another batch shape (the Python layer broadcasts and handles 1-D b).
ndarray solve(const ndarray& a, const ndarray& b);
/// numpy.linalg.inv of a (..., n, n); "Singular matrix".
ndarray inv(const ndarray& a);
/// numpy.linalg.slogdet: (sign, logabsdet) of a (..., n, n); logabsdet is real.
std::pair<ndarray, ndarray> slogdet(const ndarray& a);
/// numpy.linalg.det of a (..., n, n) (product of the LU diagonal with the pivot sign).
ndarray det(const ndarray& a);
/// numpy.linalg.cholesky: lower (or upper) factor; "Matrix is not positive definite".
ndarray cholesky(const ndarray& a, bool upper);
/// numpy.linalg.eigh / eigvalsh: ascending real eigenvalues (..., n) and, when `vectors`,
/// eigenvectors (..., n, n) in columns; reads the `lower` or upper triangle.
std::pair<ndarray, ndarray> eigh(const ndarray& a, bool lower, bool vectors);
/// numpy.linalg.svd / svdvals via gesdd: (U, S, Vh) or only S (U, Vh empty) when !vectors.
std::tuple<ndarray, ndarray, ndarray> svd(const ndarray& a, bool full_matrices, bool vectors);
/// numpy.linalg.qr, modes "reduced", "complete" and "r": (Q, R) (Q empty for "r");
/// ValueError "Unrecognized mode 'x'" for another mode.
std::pair<ndarray, ndarray> qr(const ndarray& a, const std::string& mode);
/// numpy.linalg.eig / eigvals via geev: complex eigenvalues (..., n) (and right
/// eigenvectors (..., n, n), normalised as LAPACK does), always of the complex dtype.
std::pair<ndarray, ndarray> eig(const ndarray& a, bool vectors);
/// numpy.linalg.lstsq via gelsd on 2-D a (m, n) and b (m, k): solution (n, k), residual
/// sums of squares (k, or empty unless rank == n < m), singular values (min(m, n)), rank.
/// LinAlgError "%d-dimensional array given. Array must be two-dimensional" and "Incompatible
/// dimensions" (rows of a and b differ), as numpy.linalg.lstsq.
std::tuple<ndarray, ndarray, ndarray, int64_t> lstsq(const ndarray& a, const ndarray& b, double rcond);

}  // namespace npc::lapack
