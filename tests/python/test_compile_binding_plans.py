"""A compiled function called at several sizes runs a symbolic graph; each binding of its
symbols gets the plan a graph of static sizes has (Note [plans per binding] in
src/fusion/backend.cpp): merged products, products called directly and temporaries in one
arena. Values, dtypes, warnings and writes are compared with NumPy on every call; float values
are small integers, so products are exact in any order."""
import numpy as np
import pytest

import npc
from npc import _fusion, compiler
from _compile_diff import assert_same_as_numpy


@pytest.fixture(autouse=True)
def _compiled_kernels():
    old = npc.config.eager_if_faster
    npc.config.eager_if_faster = False
    yield
    npc.config.eager_if_faster = old


def _ints(rng, shape, dtype=np.float64):
    return rng.integers(-4, 5, shape).astype(dtype)


def bicg(A, p, r):
    return r @ A, A @ p


def atax(A, p, r):
    return A.T @ (A @ p)


def _merged():
    return _fusion.stats()["merged_products"]


@pytest.mark.parametrize("fn", [bicg, atax])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_merge_at_every_size(fn, dtype):
    compiler.reset()
    cf = npc.compile(fn)
    merged = []
    for n in (100, 120, 140, 120, 100, 160):
        rng = np.random.default_rng(n)
        before = _merged()
        assert_same_as_numpy(cf, fn, _ints(rng, (n, n + 3), dtype), _ints(rng, n + 3, dtype), _ints(rng, n, dtype))
        merged.append(_merged() - before)
    assert merged == [2] * 6, merged  # the static graph, then the symbolic one at each size
    st = compiler.stats()
    assert st["traces"] == 2 and st["graph_breaks"] == 0, st


def test_more_sizes_than_plans_stay_exact():
    # Past the kept plans the oldest goes: the same values.
    cf = npc.compile(bicg)
    for n in range(70, 90):
        rng = np.random.default_rng(n)
        assert_same_as_numpy(cf, bicg, _ints(rng, (n, n + 1)), _ints(rng, n + 1), _ints(rng, n))
    for n in (70, 89):  # sizes seen before and after the first plans went
        rng = np.random.default_rng(n + 1000)
        assert_same_as_numpy(cf, bicg, _ints(rng, (n, n + 1)), _ints(rng, n + 1), _ints(rng, n))


@pytest.mark.parametrize("fn", [bicg, atax])
def test_bits_do_not_depend_on_sizes_called_before(fn):
    # Every binding runs with a plan (merged products), however many sizes came before.
    def args(n):
        rng = np.random.default_rng(n)
        return rng.random((n, n + 3)), rng.random(n + 3), rng.random(n)

    fresh = [npc.compile(fn) for _ in range(2)]
    fresh[0](*args(90))
    alone = fresh[0](*args(103))
    seasoned = fresh[1]
    for n in range(60, 75):
        seasoned(*args(n))
    after = seasoned(*args(103))
    as_tuple = lambda r: r if isinstance(r, tuple) else (r,)  # noqa: E731
    for a, b in zip(as_tuple(alone), as_tuple(after), strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def smooth(a, b):
    for _ in range(4):
        b[1:-1] = (a[:-2] + a[1:-1] * 2 + a[2:]) * 0.25
        a[1:-1] = (b[:-2] + b[1:-1] * 2 + b[2:]) * 0.25
    return a.sum(), (a * b).max()


def triangular_solve(L, b):
    x = np.zeros_like(b)
    for i in range(L.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


@pytest.mark.parametrize("sizes", [(40, 64, 100, 64, 40), (2000, 3000, 2000)])
def test_temporaries_of_every_size(sizes):
    cf = npc.compile(smooth)
    for n in sizes:
        rng = np.random.default_rng(n)
        assert_same_as_numpy(cf, smooth, _ints(rng, n), _ints(rng, n))


def test_direct_products_of_every_size():
    cf = npc.compile(triangular_solve)
    for n in (6, 9, 12, 9):
        rng = np.random.default_rng(n)
        L = np.tril(_ints(rng, (n, n)), -1) + np.eye(n)  # unit diagonal: integer solutions
        assert_same_as_numpy(cf, triangular_solve, L, _ints(rng, n))
