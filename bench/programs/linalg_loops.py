"""Dense linear algebra written as Python loops over rows: dispatch-bound code with element
updates and short dot products (Cholesky, LU, Gram-Schmidt, triangular solve) and the
Floyd-Warshall shortest paths loop."""
import numpy as np

from . import program


def _spd(n, rng):
    B = rng.random((n, n))
    return (B @ B.T + n * np.eye(n),)


@program(_spd, tiny=6, S=50, M=160)
def cholesky(A):
    """In-place Cholesky factor (lower triangle) by rows, as textbook code writes it."""
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return np.tril(A)


@program(_spd, tiny=6, S=70, M=220)
def lu(A):
    """Doolittle LU without pivoting, in place, row by row."""
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def _tall(n, rng):
    return (rng.random((n + n // 2, n)),)


@program(_tall, tiny=5, S=45, M=140)
def gramschmidt(A):
    """Modified Gram-Schmidt QR: column loop with vector updates."""
    A = A.copy()
    m, n = A.shape
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    for k in range(n):
        R[k, k] = np.linalg.norm(A[:, k])
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = Q[:, k] @ A[:, j]
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def _lower(n, rng):
    L = np.tril(rng.random((n, n))) + n * np.eye(n)
    return L, rng.random(n)


@program(_lower, tiny=6, S=2000, M=5000)
def trisolv(L, b):
    """Forward substitution for L x = b, one row at a time."""
    n = b.shape[0]
    x = np.empty_like(b)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def _graph(n, rng):
    d = rng.integers(1, 100, (n, n)).astype(np.int64)
    d[rng.random((n, n)) < 0.3] = 10**6
    np.fill_diagonal(d, 0)
    return (d,)


@program(_graph, tiny=5, S=120, M=260)
def floyd_warshall(d):
    """All-pairs shortest paths: a relaxation through each intermediate vertex k."""
    d = d.copy()
    for k in range(d.shape[0]):
        d = np.minimum(d, d[:, k, None] + d[None, k, :])
    return d
