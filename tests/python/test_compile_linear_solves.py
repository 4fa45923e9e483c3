"""numpy.linalg.solve and inv inside npc.compile: recorded as graph nodes run by LAPACK, not
graph breaks (Note [linear solves in traces] in python/npc/csrc/bind_linalg.cpp). Compiled
results equal eager npc's bit for bit (the same LAPACK call) and NumPy's within LAPACK's
rounding; errors (a singular matrix) are NumPy's, also under the program's own handlers."""
import warnings

import numpy as np
import pytest

import npc
from npc import compiler
from _compile_diff import BACKENDS, assert_same_as_numpy

LAPACK_RTOL = 1e-12  # as the eager solve's own tests (test_eager_fast_paths.py)


def _system(n, k=None, dtype=np.complex128, seed=0, batch=()):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n)) + n * np.eye(n)
    b = rng.standard_normal(batch + ((n,) if k is None else (n, k)))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(batch + (n, n))
        b = b + 1j * rng.standard_normal(b.shape)
    return a.astype(dtype), b.astype(dtype)


def contour_sum(A, V, npts):
    n = A.shape[0]
    S = np.zeros(V.shape, np.result_type(A, V, 1j))
    for k in range(npts):
        z = 0.8 * np.exp(2j * np.pi * (k + 0.5) / npts)
        Y = np.linalg.solve(z * np.eye(n) - A, V)
        S += z * Y / npts
    return S


def inverse_loop(A, steps):
    X = A.copy()
    for _ in range(steps):
        X = 0.5 * (X + np.linalg.inv(X + 3 * np.eye(A.shape[0])))
    return X


def _eager(fn, *args):
    return fn(*[npc.asarray(a) if isinstance(a, np.ndarray) else a for a in args])


def _compare(fn, backend, *args):
    compiler.reset()
    cf = npc.compile(fn, backend=backend)
    for _ in range(2):  # the tracing call, then a replay
        got = cf(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        want = fn(*args)
        assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, np.asarray(_eager(fn, *args)))
        np.testing.assert_allclose(got, want, rtol=LAPACK_RTOL, atol=LAPACK_RTOL)
    return compiler.stats()


@pytest.mark.parametrize("dtype", [np.complex128, np.float64, np.float32, np.complex64])
@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("backend", BACKENDS)
def test_solves_in_a_loop_are_one_graph(dtype, k, backend):
    A, V = _system(12, k, dtype)
    if np.dtype(dtype).itemsize <= 8 and np.dtype(dtype).kind != "c" or dtype == np.complex64:
        rtol = 1e-5  # single precision results (NumPy computes in double, returns single)
    else:
        rtol = LAPACK_RTOL
    compiler.reset()
    cf = npc.compile(contour_sum, backend=backend)
    for _ in range(2):
        got, want = cf(A.copy(), V.copy(), 6), contour_sum(A, V, 6)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, np.asarray(_eager(contour_sum, A, V, 6)))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    st = compiler.stats()
    assert st["graph_breaks"] == 0 and st["traces"] == 1, st


@pytest.mark.parametrize("backend", BACKENDS)
def test_inverses_in_a_loop_are_one_graph(backend):
    A, _ = _system(9, dtype=np.float64)
    st = _compare(inverse_loop, backend, A, 4)
    assert st["graph_breaks"] == 0 and st["traces"] == 1, st


def batched_solve(a, b):
    return np.linalg.solve(a, b) * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_batched_and_broadcast_solves(backend):
    a, b = _system(5, 2, np.float64, batch=(3,))
    st = _compare(batched_solve, backend, a, b)
    assert st["graph_breaks"] == 0, st
    a2, b2 = _system(5, 2, np.float64, seed=1, batch=(4, 1))
    _compare(batched_solve, backend, a2, b2[0])  # b broadcast against a's batch


@pytest.mark.parametrize("backend", BACKENDS)
def test_solves_at_varying_sizes_stay_in_the_graph(backend):
    compiler.reset()
    cf = npc.compile(batched_solve, backend=backend)
    for n in (4, 6, 9, 9, 13):
        a, b = _system(n, dtype=np.float64, seed=n)
        np.testing.assert_allclose(cf(a, b), batched_solve(a, b), rtol=LAPACK_RTOL, atol=LAPACK_RTOL)
    st = compiler.stats()
    # npc.linalg's Python reads the shapes (Note [shapes read in Python]): one trace per
    # size, each without a break.
    assert st["graph_breaks"] == 0 and st["traces"] == 4, st


def write_then_solve(a, b, out):
    out[0] = 7.0
    return np.linalg.solve(a, b)


def unused_solve(a, b):
    np.linalg.solve(a, b)
    return b + 1


def singular_inverse(a):
    return np.linalg.inv(a) + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_matrices_raise_numpys_error(backend):
    a = np.ones((3, 3))
    b = np.arange(3.0)
    for fn, args in [(write_then_solve, (a, b, np.zeros(2))), (unused_solve, (a, b)), (singular_inverse, (a,))]:
        compiler.reset()
        cf = npc.compile(fn, backend=backend)
        good = (np.eye(3) * 2,) + args[1:]
        for call in (args, good, args, good):  # raising on the trace and on replays
            assert_same_as_numpy(cf, fn, *call)


def solve_or_least_squares(a, b):
    try:
        x = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        x = np.linalg.lstsq(a, b, rcond=None)[0]
    return x + 0


def solve_in_helper(a, b):
    return _guarded(a, b) * 2


def _guarded(a, b):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        return np.zeros_like(b)


def condition(a):
    return np.linalg.cond(a, 1)


@pytest.mark.parametrize("fn", [solve_or_least_squares, solve_in_helper])
@pytest.mark.parametrize("backend", BACKENDS)
def test_handlers_of_the_program_catch_the_error(fn, backend):
    """A solve that a handler of the traced code guards runs where NumPy's does."""
    compiler.reset()
    cf = npc.compile(fn, backend=backend)
    b = np.arange(3.0)
    for a in (np.ones((3, 3)), np.eye(3) * 2, np.ones((3, 3))):
        got, want = cf(a, b), fn(a, b)
        np.testing.assert_allclose(got, want, rtol=LAPACK_RTOL, atol=LAPACK_RTOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_npc_handlers_catch_the_error(backend):
    """numpy.linalg.cond catches inv's error itself (inf for a singular matrix)."""
    compiler.reset()
    cf = npc.compile(condition, backend=backend)
    for a in (np.ones((3, 3)), np.eye(3) * 2, np.ones((3, 3))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = condition(a)
            got = cf(a)
        np.testing.assert_allclose(got, want, rtol=LAPACK_RTOL)
