"""Products that a fused replay calls directly (Note [products in replays] in
src/fusion/backend.cpp): matmul of one BLAS dtype with one or two dimensions per operand, its
operands read from inputs, from kernels' temporaries and from other products' results, in
loops of short products as in triangular solves, compared with NumPy bit for bit (values,
dtypes, warnings, writes into the arguments) on the tracing call and on replays."""
import numpy as np
import pytest

from _compile_diff import BACKENDS, check

FLOATS = [np.float64, np.float32, np.complex128, np.complex64]


def _forward_substitution(L, b):
    n = b.shape[0]
    x = np.empty_like(b)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def _row_updates(A):
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
    return A


def _shapes(A, v):
    # Matrix-vector, vector-matrix, matrix-matrix and strided or transposed operands.
    w = A @ v
    u = v @ A
    M = A @ A.T
    s = A[::2, 1:] @ A[1::2, :-1].T
    t = (A * 2)[:, ::-1] @ v[::-1]  # an operand computed by a kernel
    return w, u, M, s, t, (A @ v) @ (A @ v)  # products of products


def _special(A, v):
    return A @ v, v @ v


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_forward_substitution(dtype, backend):
    rng = np.random.default_rng(0)
    n = 9
    L = (np.tril(rng.random((n, n))) + n * np.eye(n)).astype(dtype)
    b = rng.random(n).astype(dtype)
    check(_forward_substitution, (L, b), (L, b), (L * 2, b[::-1].copy()), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_row_updates(dtype, backend):
    rng = np.random.default_rng(1)
    A = (rng.random((7, 7)) + 7 * np.eye(7)).astype(dtype)
    check(_row_updates, (A,), (A,), (A.T.copy(),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_product_shapes_and_layouts(dtype, backend):
    rng = np.random.default_rng(2)
    A = rng.random((6, 6)).astype(dtype)
    v = rng.random(6).astype(dtype)
    check(_shapes, (A, v), (A, v), (A[::-1].copy(), v * 3), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_of_special_values(dtype, backend):
    # inf * 0 and overflows: the flags the products raise are reported as NumPy reports them.
    big = np.finfo(dtype).max
    A = np.array([[np.inf, 0.0, 1.0], [big, big, 1.0], [np.nan, 1.0, 2.0]], dtype)
    v = np.array([0.0, big, 1.0], dtype)
    check(_special, (A, v), (A, v), (A * 0, v), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_and_zero_element_products(backend):
    def f(a, b):
        return a[:1] @ b[:1], a[:0] @ b[:0], a[None, :1] @ b[:1, None], a[:2] @ np.ones((2, 0))

    rng = np.random.default_rng(3)
    check(f, (rng.random(4), rng.random(4)), (rng.random(4), rng.random(4)), backend=backend)


def _cholesky_dot(A):
    # numpy.dot of two row pieces per element, as a Cholesky written with np.dot.
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return np.tril(A)


def _dot_layouts(A, v):
    # Vector dots of strided, reversed and computed operands; 1- and 0-element vectors;
    # dots of other shapes (general path) beside them.
    return (np.dot(A[:, 1], A[2, :]), np.dot(A[::2, 0], v[1::2]), np.dot(v[::-1], A[1]),
            np.dot(A[0] * 2, v), np.dot(v[:1], v[:1]), np.dot(v[:0], v[:0]), np.dot(A, v), np.dot(v, A),
            np.dot(A[:2], A[:, :2]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_dots_in_a_row_loop(dtype, backend):
    rng = np.random.default_rng(4)
    n = 8
    M = rng.random((n, n)).astype(dtype)
    A = (M @ M.T.conj() + n * np.eye(n)).astype(dtype)
    check(_cholesky_dot, (A,), (A,), (A * 2,), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_dot_layouts(dtype, backend):
    rng = np.random.default_rng(5)
    A = rng.random((6, 6)).astype(dtype)
    v = rng.random(6).astype(dtype)
    check(_dot_layouts, (A, v), (A, v), (A.T.copy(), v[::-1].copy()), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_dot_of_a_misaligned_argument(backend):
    # Float64 elements at an odd byte offset: numpy.dot copies them first; so does the replay.
    raw = np.zeros(8 * 7 + 1, np.uint8)
    mis = np.ndarray((7,), np.float64, raw.data, 1)
    assert not mis.flags.aligned
    mis[:] = np.arange(7.0) + 0.5
    y = np.linspace(1.0, 2.0, 7)

    def f(a, b):
        return np.dot(a, b), np.dot(a[1:], b[:-1])

    check(f, (mis, y), (mis, y * 3), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_temporary_products_of_a_misaligned_argument(backend):
    # Products whose results only kernels read take arena blocks (Note [product results in
    # the arena]); a misaligned operand sends the call down the general path, whose result
    # is copied into the block.
    raw = np.zeros(8 * 40 + 1, np.uint8)
    mis = np.ndarray((40,), np.float64, raw.data, 1)
    mis[:] = np.arange(40.0) * 0.25 - 3
    y = np.linspace(-1.0, 2.0, 40)
    M = np.arange(40.0 * 6).reshape(40, 6) / 7

    def f(a, b, M):
        s = 0.0
        for i in range(1, 6):
            s = s + np.dot(a[:i * 6], b[:i * 6]) * 2 - (a @ M)[i] + (M.T @ b)[i - 1]
        return s

    check(f, (mis, y, M), (mis, y * 3, M[::-1].copy()), backend=backend)
