"""Matrix-vector kernels: A^T (A x), BiCG's two products, and covariance/correlation built
with a loop of matrix-vector products."""
import numpy as np

from . import program


def _matvec(n, rng):
    return rng.random((n, n + n // 4)), rng.random(n + n // 4), rng.random(n)


@program(_matvec, tiny=6, S=3000, M=6000)
def atax(A, x, _):
    return A.T @ (A @ x)


@program(_matvec, tiny=6, S=3000, M=6000)
def bicg(A, p, r):
    s = r @ A
    q = A @ p
    return s, q


def _data(n, rng):
    return (rng.random((n + n // 2, n)),)


@program(_data, tiny=5, S=320, M=700)
def covariance_correlation(data):
    """Covariance by a loop of matrix-vector products over columns, then correlation."""
    m = data.shape[0]
    centred = data - data.mean(axis=0)
    cov = np.empty((data.shape[1], data.shape[1]))
    for j in range(data.shape[1]):
        cov[j] = centred.T @ centred[:, j] / (m - 1)
    std = np.sqrt(np.diag(cov))
    corr = cov / np.outer(std, std)
    return cov, corr


def _csr(n, rng):
    nnz_per_row = 8
    indptr = np.arange(0, (n + 1) * nnz_per_row, nnz_per_row, dtype=np.int64)
    indices = rng.integers(0, n, n * nnz_per_row).astype(np.int64)
    data = rng.random(n * nnz_per_row)
    return data, indices, indptr, rng.random(n)


@program(_csr, tiny=6, S=20_000, M=200_000)
def spmv_csr(data, indices, indptr, x):
    """y = A x for A in CSR form, vectorised: products gathered by column index, summed per
    row with np.add.reduceat."""
    prod = data * x[indices]
    y = np.add.reduceat(prod, indptr[:-1])
    y[indptr[:-1] == indptr[1:]] = 0.0
    return y
