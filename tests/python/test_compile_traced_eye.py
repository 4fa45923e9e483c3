"""numpy.eye and numpy.identity inside compiled functions (Note [traced eye] in
npc/compiler/_capture.py): traced as index comparisons fused into their readers, with
NumPy's values, dtypes and shapes; other arguments run NumPy's own call (errors included)."""
import numpy as np
import pytest

import npc
from npc import compiler

DTYPES = [np.float64, np.float32, np.complex128, np.int32, np.uint8, np.bool_, None]


def _check(f, *args, calls=3):
    compiler.reset()
    cf = npc.compile(f, backend="fused")
    want = f(*args)
    for _ in range(calls):
        got = cf(*args)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert type(g) is np.ndarray and g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    return cf


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, m, k", [(4, None, 0), (3, 5, 1), (5, 3, -2), (4, 4, 7), (4, 4, -9), (0, 3, 0), (3, 0, 0),
                                     (1, None, 0)])
def test_eye_values(dtype, n, m, k):
    _check(lambda x: (np.eye(n, m, k, dtype=dtype), x + 1), np.zeros(2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_identity_values(dtype):
    _check(lambda x: (np.identity(5, dtype), np.identity(3), x), np.zeros(2))


def test_shifted_matrix_is_one_kernel():
    def shifted(A, z):
        return z * np.eye(A.shape[0]) - A
    A = np.random.default_rng(0).standard_normal((60, 60))
    cf = _check(shifted, A, 0.5 + 0.25j)
    before = compiler.stats()["kernels_run"]
    cf(A, 0.5 + 0.25j)
    assert compiler.stats()["kernels_run"] - before == 1


def test_empty_eye_with_a_huge_axis_is_numpys():
    got = _check(lambda x: (np.eye(10**9, 0), np.eye(0, 10**9, dtype=bool), x), np.zeros(1))
    assert got is not None


def test_eye_of_symbolic_and_numpy_sizes():
    def f(A, k):
        return np.eye(A.shape[0], np.int64(A.shape[1]), k) * A
    rng = np.random.default_rng(1)
    for shape in [(3, 4), (5, 2), (6, 6)]:
        for k in (-1, 0, 2):
            A = rng.standard_normal(shape)
            cf = npc.compile(f, backend="fused")
            np.testing.assert_array_equal(cf(A, k), f(A, k))


@pytest.mark.parametrize("call", [
    lambda: np.eye(3, order="F"),
    lambda: np.eye(3, 4, 1, np.int16, "F"),
    lambda: np.eye(3, 4, like=np.empty(0)),
    lambda: np.eye(3, device="cpu"),
    lambda: np.eye(3, dtype="S1"),  # Note [results of dtypes npc lacks]
    lambda: np.eye(3, dtype=">f8"),
])
def test_other_arguments(call):
    cf = _check(lambda x: (call(), x), np.zeros(1))
    assert cf is not None
    got = cf(np.zeros(1))[0]
    assert got.flags.f_contiguous == call().flags.f_contiguous
    assert got.flags.c_contiguous == call().flags.c_contiguous


@pytest.mark.parametrize("call, exc", [
    (lambda: np.eye(-1), ValueError),
    (lambda: np.eye(2.5), TypeError),
    (lambda: np.eye(True), TypeError),
    (lambda: np.identity(-3), ValueError),
    (lambda: np.eye(3, device="gpu"), ValueError),
    (lambda: np.eye(2**63), ValueError),
    (lambda: np.identity(2**63), ValueError),
    (lambda: np.eye(0, 2**63), ValueError),
    (lambda: np.eye(2**40), ValueError),
])
def test_errors_are_numpys(call, exc):
    with pytest.raises(exc) as want:
        call()
    cf = npc.compile(lambda x: (call(), x), backend="fused")
    with pytest.raises(exc) as got:
        cf(np.zeros(1))
    assert str(got.value) == str(want.value)
