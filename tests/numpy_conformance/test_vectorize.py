"""npc.vectorize against numpy.vectorize: results are npc arrays with NumPy's values, dtypes
and shapes; attributes, otypes, excluded, cache, signature and errors are NumPy's."""
import math

import numpy as np
import pytest

import npc
from dtypes import NATIVE


def run(lib, make, *args, **kwargs):
    try:
        return make(lib)(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 -- compared with NumPy's
        return None, e


def same(got, exp):
    if isinstance(exp, tuple):
        assert isinstance(got, tuple) and len(got) == len(exp)
        for g, e in zip(got, exp):
            same(g, e)
        return
    assert isinstance(exp, np.ndarray)
    native = exp.dtype in NATIVE
    assert type(got) is (npc.ndarray if native else np.ndarray), type(got)
    assert got.dtype == exp.dtype and got.shape == exp.shape
    np.testing.assert_array_equal(np.asarray(got), exp)
    if native:
        assert got.flags.owndata == exp.flags.owndata and got.base is None


def check(make, *args, **kwargs):
    def conv(lib):
        return [lib.asarray(a) if isinstance(a, np.ndarray) and lib is npc else a for a in args]

    exp, e_np = run(np, make, *args, **kwargs)
    got, e_npc = run(npc, make, *conv(npc), **kwargs)
    if e_np is not None:
        assert type(e_npc) is type(e_np) and str(e_npc) == str(e_np)
    else:
        assert e_npc is None, repr(e_npc)
        same(got, exp)


def add(x, y):
    return x + y


@pytest.mark.parametrize("dtype", NATIVE, ids=str)
def test_elementwise_dtypes(dtype):
    x = np.arange(6).reshape(2, 3).astype(dtype)
    check(lambda m: m.vectorize(add), x, x)
    check(lambda m: m.vectorize(add), x, 1)
    check(lambda m: m.vectorize(lambda a: a), x[:, ::-1])
    check(lambda m: m.vectorize(lambda a: a), x[:0])


@pytest.mark.parametrize("case", [
    (lambda m: m.vectorize(add), (1, 2)),  # scalars in: a 0-d array out
    (lambda m: m.vectorize(add), (1.5, np.float32(2))),
    (lambda m: m.vectorize(add), ([1, 2, 3], [[10], [20]])),
    (lambda m: m.vectorize(add, otypes=[np.float32]), ([1, 2], 3)),
    (lambda m: m.vectorize(add, otypes="i"), ([1.7, 2.2], 3)),
    (lambda m: m.vectorize(lambda a: (a, a * 2.5)), ([1, 2],)),
    (lambda m: m.vectorize(lambda a: (a, a * 2.5), otypes=[np.int8, float]), ([1, 2],)),
    (lambda m: m.vectorize(lambda a: str(a)), ([1, 2],)),
    (lambda m: m.vectorize(lambda a: a, otypes=[object]), ([1, 2],)),
    (lambda m: m.vectorize(math.isnan), ([1.0, np.nan],)),
    (lambda m: m.vectorize(lambda a: a.sum(), signature="(n)->()"), (np.ones((2, 3)),)),
    (lambda m: m.vectorize(lambda a: a[::-1], signature="(n)->(n)"), (np.arange(6.0).reshape(2, 3),)),
    (lambda m: m.vectorize(lambda a, b: a @ b, signature="(m,n),(n)->(m)"), (np.ones((2, 3)), np.ones(3))),
    (lambda m: m.vectorize(lambda a: (a.min(), a.max()), signature="(n)->(),()"), (np.arange(6).reshape(2, 3),)),
    (lambda m: m.vectorize(lambda a: a, signature="(n)->(n)"), (np.ones(3), np.ones(3))),
    (lambda m: m.vectorize(lambda a: a, signature="(n)->(n"), (np.ones(3),)),
    (lambda m: m.vectorize(add), ([1, 2], [1, 2, 3])),
    (lambda m: m.vectorize(add), ([],  [])),
    (lambda m: m.vectorize(add, otypes=[float]), ([], [])),
    (lambda m: m.vectorize(lambda a: 1 / a), ([1.0, 0.0],)),
])
def test_cases(case):
    make, args = case
    check(make, *[np.asarray(a) if isinstance(a, np.ndarray) else a for a in args])


def test_excluded_and_keywords():
    def poly(x, coeffs):
        return sum(c * x ** i for i, c in enumerate(coeffs))

    for excluded in ([1], {"coeffs"}):
        e = np.vectorize(poly, excluded=excluded)
        g = npc.vectorize(poly, excluded=excluded)
        if isinstance(excluded, list):
            same(g(npc.arange(4.0), [1, 2, 3]), e(np.arange(4.0), [1, 2, 3]))
            assert g.excluded == e.excluded
        else:
            same(g(npc.arange(4.0), coeffs=[1, 2]), e(np.arange(4.0), coeffs=[1, 2]))


def test_attributes_and_decorator():
    def f(x):
        """Doubles x."""
        return 2 * x

    for lib in (np, npc):
        v = lib.vectorize(f, otypes=[float], cache=True, doc="doc text")
        assert v.pyfunc is f and v.cache is True and v.__doc__ == "doc text" and v.signature is None
    assert npc.vectorize(f).otypes == np.vectorize(f).otypes
    assert npc.vectorize(f).__doc__ == np.vectorize(f).__doc__
    assert isinstance(npc.vectorize(f), np.vectorize)

    @npc.vectorize
    def g(x):
        return x + 1

    same(g([1, 2]), np.vectorize(lambda x: x + 1)([1, 2]))

    @npc.vectorize(otypes=[np.float32])
    def h(x):
        return x / 2

    same(h([1, 2]), np.vectorize(lambda x: x / 2, otypes=[np.float32])([1, 2]))


def test_cache_call_count_matches_numpy():
    calls = []

    def f(x):
        calls.append(x)
        return x

    npc.vectorize(f, cache=True)(npc.arange(3))
    n_cached = len(calls)
    calls.clear()
    np.vectorize(f, cache=True)(np.arange(3))
    assert n_cached == len(calls) == 3


def test_no_fallback_recorded():
    npc.reset_fallback_stats()
    npc.vectorize(add)(npc.arange(3), 1)
    assert npc.fallback_stats() == {}
