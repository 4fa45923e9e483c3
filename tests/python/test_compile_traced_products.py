"""Products of traced arrays through the fast product path (Note [fast products] in
python/npc/csrc/bind_linalg.cpp): `a @ b`, `np.dot`, `np.matmul` of traced 1-D/2-D operands
record the same node as the general path, and their results (NumPy scalars for two vectors)
and warnings are NumPy's, compiled and replayed."""
import warnings

import numpy as np
import pytest

import npc

DTYPES = [np.float64, np.float32, np.complex128, np.complex64]


def _vec(n, dt, seed=0):
    r = np.random.default_rng(seed)
    v = r.random(n) + (1j * r.random(n) if np.dtype(dt).kind == "c" else 0)
    return v.astype(dt)


def at(x, y):
    return x @ y


def dot(x, y):
    return np.dot(x, y)


def matmul(x, y):
    return np.matmul(x, y)


def row_updates(A):
    # Element updates with products of row and column slices (LU by rows).
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= np.dot(A[i, :i], A[:i, j])
    return A


def scalar_use(x, y):
    s = x @ y
    t = np.dot(x, y) * 2
    return s, t, s + t


@pytest.mark.parametrize("fn", [at, dot, matmul])
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shapes", [((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 4)), ((3, 5), (5, 2)), ((0,), (0,))])
@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_products_equal_numpy(fn, dt, shapes, backend):
    x = _vec(int(np.prod(shapes[0])), dt, 1).reshape(shapes[0])
    y = _vec(int(np.prod(shapes[1])), dt, 2).reshape(shapes[1])
    want = fn(x, y)
    f = npc.compile(fn, backend=backend)
    for _ in range(2):  # the tracing call and a replay
        got = f(x, y)
        assert type(got) is type(want)
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6 if dt in (np.float32, np.complex64) else 1e-14)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_vector_products_are_numpy_scalars_inside(dt):
    x, y = _vec(7, dt, 3), _vec(7, dt, 4)
    want = scalar_use(x, y)
    f = npc.compile(scalar_use)
    got = f(x, y)
    for g, w in zip(got, want):
        assert type(g) is type(w)
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_row_loops_with_products(dt):
    B = np.random.default_rng(0).random((12, 12))
    A = (B @ B.T + 12 * np.eye(12)).astype(dt)
    f = npc.compile(row_updates)
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(f(A)), row_updates(A), rtol=1e-4 if dt == np.float32 else 1e-12)


@pytest.mark.parametrize("fn", [at, dot])
def test_product_warnings_equal_numpy(fn):
    x = np.array([1e308, 1e308, 1.0])
    y = np.array([10.0, 10.0, 1.0])
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        w = fn(x, y)
    f = npc.compile(fn)
    for _ in range(2):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            g = f(x, y)
        assert [str(m.message) for m in got] == [str(m.message) for m in want]
        assert type(g) is type(w) and g == w


def test_mismatched_operands_raise_numpy_errors():
    x, y = np.ones(3), np.ones(4)
    for fn in (at, dot, matmul):
        with pytest.raises(ValueError) as want:
            fn(x, y)
        with pytest.raises(ValueError) as got:
            npc.compile(fn)(x, y)
        assert str(got.value) == str(want.value)


def imatmul(x, y):
    x = x.copy()
    x @= y
    return x


def imatmul_row(a):
    a = a.copy()
    a[0] @= a[1]
    return a


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 3)), ((2, 2), (2, 2)),
                                    ((3, 2, 2), (2, 2)), ((0,), (0,)), ((2, 2), (3,))])
@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_inplace_matmul_equals_numpy(shapes, mode):
    x = np.arange(np.prod(shapes[0]), dtype=np.float64).reshape(shapes[0])
    y = np.ones(shapes[1])
    run = (lambda f, *a: f(*(npc.asarray(v) for v in a))) if mode == "eager" else (lambda f, *a: npc.compile(f)(*a))
    try:
        want = imatmul(x, y)
    except ValueError as e:
        with pytest.raises(ValueError) as got:
            run(imatmul, x, y)
        assert str(got.value) == str(e)
        return
    np.testing.assert_array_equal(np.asarray(run(imatmul, x, y)), want)


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_inplace_matmul_of_a_row_raises_as_numpy(mode):
    a = np.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError) as want:
        imatmul_row(a)
    with pytest.raises(ValueError) as got:
        (imatmul_row(npc.asarray(a)) if mode == "eager" else npc.compile(imatmul_row)(a))
    assert str(got.value) == str(want.value)
