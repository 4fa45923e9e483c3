"""Matrix-vector products of one compiled graph that share their matrix, run as one matrix
product (Note [merged products] in src/fusion/merged_products.cpp): values against NumPy
(within rounding: NumPy leaves the summation order of its BLAS calls unspecified, and a gemm
sums in another order than a gemv), dtypes, shapes, which products merge, warnings, and
results that leave the graph as arrays of their own."""
import warnings

import numpy as np
import pytest

import npc
from npc import _fusion, compiler

FLOATS = [np.float64, np.float32, np.complex128, np.complex64]
RTOL = {np.float64: 1e-12, np.float32: 2e-5, np.complex128: 1e-12, np.complex64: 2e-5}


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _covariance(X):
    # Columns of X against X.T: the vectors are equally spaced views of X (no copy).
    c = np.empty((X.shape[1], X.shape[1]), X.dtype)
    for j in range(X.shape[1]):
        c[j] = X.T @ X[:, j] / (X.shape[0] - 1)
    return c


def _rows_times_matrix(R, A):
    # v @ A for rows of R, side 1.
    out = np.empty((R.shape[0], A.shape[1]), A.dtype)
    for i in range(R.shape[0]):
        out[i] = R[i] @ A
    return out


def _gathered(A, V, order):
    # Vectors in no regular order, rows of a kernel's result: copied into V's rows.
    W = V * 2
    out = []
    for k in order:
        out.append(A @ W[k])
    return np.stack(out)


def _power_iteration(A, v):
    # Each vector is the previous product: nothing merges.
    for _ in range(6):
        v = A @ v
        v = v / np.linalg.norm(v)
    return v


def _matrix_written_between(A, V):
    # A changes between products: products of different matrices.
    A = A.copy()
    out = np.empty((V.shape[0], A.shape[0]), A.dtype)
    for k in range(V.shape[0]):
        out[k] = A @ V[k]
        A[k % A.shape[0]] += 1
    return out


def _vectors_written_between(A, V):
    # The matrix of vectors is written between the products: a vector made after the first
    # product joins no group with it.
    V = V.copy()
    out = np.zeros((V.shape[0], A.shape[0]), A.dtype)
    for k in range(V.shape[0] - 1):
        out[k] = A @ V[k]
        V[k + 1] = V[k + 1] + out[k][: V.shape[1]]
    return out


def _returned(A, V):
    # Every product is a result of the function.
    return tuple(A @ V[k] for k in range(V.shape[0]))


def _strided_matrix(A, V):
    S = A[::-2, 1::3]
    return [S @ V[k, : S.shape[1]] for k in range(V.shape[0])] + [V[k, : S.shape[0]] @ S for k in range(3)]


def _run(f, args, calls=3):
    compiler.reset()
    cf = npc.compile(f, backend="fused")
    before = _fusion.stats()["merged_products"]
    for _ in range(calls):
        got = cf(*args)  # (the functions write into no argument; np.copy would make them contiguous)
    return got, _fusion.stats()["merged_products"] - before


def _assert_same(got, want, dtype):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w, dtype)
        return
    assert type(got) is np.ndarray
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype] * np.abs(want).max())


@pytest.mark.parametrize("dtype", FLOATS)
def test_covariance_loop_is_one_product(dtype):
    X = _data((90, 60), dtype)
    got, merged = _run(_covariance, (X,))
    _assert_same(got, _covariance(X), dtype)
    assert merged == 3 * 60  # every product of every call


@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_times_matrix(dtype):
    R, A = _data((40, 70), dtype, 1), _data((70, 80), dtype, 2)
    got, merged = _run(_rows_times_matrix, (R, A))
    _assert_same(got, _rows_times_matrix(R, A), dtype)
    assert merged == 3 * 40


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_gathered_vectors(dtype):
    A, V = _data((100, 64), dtype, 3), _data((12, 64), dtype, 4)
    order = [5, 0, 11, 3, 3, 7, 1]
    got, merged = _run(_gathered, (A, V, order))
    _assert_same(got, _gathered(A, V, order), dtype)
    assert merged == 3 * (len(order) - 1)  # A @ W[3] twice is one node: one product less each call


def test_dependent_products_do_not_merge():
    A, v = _data((80, 80), np.float64, 5), _data(80, np.float64, 6)
    got, merged = _run(_power_iteration, (A, v))
    _assert_same(got, _power_iteration(A, v), np.float64)
    assert merged == 0


def test_matrix_written_between_products():
    A, V = _data((70, 70), np.float64, 7), _data((9, 70), np.float64, 8)
    got, merged = _run(_matrix_written_between, (A, V))
    _assert_same(got, _matrix_written_between(A, V), np.float64)
    assert merged == 0  # each product reads another version of A


def test_vectors_written_between_products():
    A, V = _data((70, 64), np.float64, 9), _data((8, 64), np.float64, 10)
    got, _ = _run(_vectors_written_between, (A, V))
    _assert_same(got, _vectors_written_between(A, V), np.float64)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_returned_products_own_their_memory(dtype):
    A, V = _data((64, 96), dtype, 11), _data((5, 96), dtype, 12)
    got, merged = _run(_returned, (A, V))
    _assert_same(got, _returned(A, V), dtype)
    assert merged == 3 * 5
    for i in range(len(got)):
        assert got[i].flags.owndata or got[i].base is None or got[i].base.size == got[i].size
        for j in range(i):
            assert not np.shares_memory(got[i], got[j])


def test_strided_and_reversed_matrix():
    A, V = _data((200, 210), np.float64, 13), _data((6, 100), np.float64, 14)
    got, merged = _run(_strided_matrix, (A, V))
    _assert_same(got, _strided_matrix(A, V), np.float64)
    assert merged == 3 * (6 + 3)


def test_overflow_warns_as_numpy():
    A = np.full((80, 80), 1e300)
    V = np.full((4, 80), 1e300)
    compiler.reset()
    cf = npc.compile(_returned, backend="fused")
    for _ in range(2):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            r = cf(A, V)
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            w = _returned(A, V)
        assert all(np.isinf(x).all() for x in r) and all(np.isinf(x).all() for x in w)
        assert {(m.category, str(m.message)) for m in got} == {(m.category, str(m.message)) for m in want}
        assert got



def _mixed_strides(A, W, w):
    # A row, columns, a broadcast vector and a contiguous one with one matrix: each read with
    # its own stride (the columns and the broadcast are copied).
    return A @ W[0], A @ W[:, 1], A @ W[:, 2], A @ np.broadcast_to(w[:1], w.shape), A @ A[:, 0], A @ w


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_vectors_of_different_strides(dtype):
    A, W, w = _data((64, 64), dtype, 26), _data((64, 64), dtype, 27), _data(64, dtype, 28)
    got, merged = _run(_mixed_strides, (A, W, w))
    _assert_same(got, _mixed_strides(A, W, w), dtype)
    assert merged == 3 * 6


def _two(A, V):
    return A @ V[0], A @ V[1]


@pytest.mark.parametrize("idx", [[9, 11, 25, 53], [4, 21, 56, 58]])
def test_products_that_are_not_finite_run_as_numpy_runs_them(idx):
    # 1e308 + 1e308 - 1e308 - 1e308 overflows in some summation orders and not in others:
    # a group with a product that is not finite runs product by product, with NumPy's values
    # and errors; never a NaN or infinity without NumPy's error.
    A = np.ones((70, 70))
    V = np.zeros((2, 70))
    V[1, idx] = [1e308, 1e308, -1e308, -1e308]
    compiler.reset()
    cf = npc.compile(_two, backend="fused")

    def outcome(fn):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                with np.errstate(all="raise"):
                    r = fn(A, V)
            except FloatingPointError as e:
                return str(e), []
        return [np.asarray(x) for x in r], [str(m.message) for m in w]

    want = outcome(_two)
    for _ in range(3):
        got = outcome(cf)
        if isinstance(got[0], str):
            assert got == want
        elif all(np.isfinite(g).all() for g in got[0]):
            # The sum in the gemm's order never overflowed: the exact sums, with no error
            # (NumPy's own order may overflow: BLAS's summation order is unspecified).
            assert got[1] == [] and all((g == 0).all() for g in got[0])
        else:
            for g, x in zip(got[0], want[0]):
                np.testing.assert_array_equal(g, x)
            assert got[1] == want[1]


def _two_dots(A, u, r):
    return u @ A, r @ A


def _both_sides(A, p, r):
    return A @ p, r @ A


@pytest.mark.parametrize("fn", [_two_dots, _both_sides])
def test_products_of_one_column_stay_dot_products(fn):
    # A product of one element is a dot product: a group's gemm (or a row pass's column sum)
    # would add its 10**5 float32 terms in order, about 200x further from the exact value
    # than NumPy's dot when the terms have one sign.
    rng = np.random.default_rng(23)
    m = 100_000
    A = rng.standard_normal((m, 1)).astype(np.float32)
    u = A[:, 0] * np.float32(-0.6)
    other = u[::-1].copy() if fn is _two_dots else np.ones(1, np.float32)
    compiler.reset()
    before = _fusion.stats()["merged_products"]
    got = npc.compile(fn)(A, other, u)
    assert _fusion.stats()["merged_products"] == before
    want = fn(A, other, u)
    exact = u.astype(np.float64) @ A[:, 0].astype(np.float64)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
    assert abs(float(got[1][0]) - exact) <= 4 * abs(float(want[1][0]) - exact) + 1e-7 * abs(exact)
