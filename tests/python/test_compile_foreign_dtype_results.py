"""Results of dtypes npc lacks (Note [results of dtypes npc lacks] in python/npc/compiler/_api.py):
a compiled function that returns a str, bytes, object, datetime, longdouble, structured or
byte-swapped array made by NumPy's own code returns NumPy's array, of NumPy's dtype, a new one
on every call, as the function does run by NumPy."""
import numpy as np
import pytest

import npc

MAKERS = {
    "eye S1": lambda x: np.eye(3, dtype="S1"),
    "zeros U3": lambda x: np.zeros(3, dtype="U3"),
    "zeros object": lambda x: np.zeros(3, dtype=object),
    "zeros datetime64": lambda x: np.zeros(3, dtype="M8[s]"),
    "zeros timedelta64": lambda x: np.ones(2, dtype="m8[ms]"),
    "zeros longdouble": lambda x: np.zeros(3, dtype=np.longdouble),
    "zeros structured": lambda x: np.zeros(3, dtype=[("a", "f8"), ("b", "i4")]),
    "zeros big-endian": lambda x: np.zeros(3, dtype=">f8"),
    "full big-endian": lambda x: np.full((2, 2), 2.5, dtype=">f4"),
    "ones big-endian int": lambda x: np.ones(4, dtype=">i4"),
    "eye big-endian": lambda x: np.eye(3, dtype=">f8"),
    "astype big-endian of a traced value": lambda x: (x * 2).astype(">f8"),
    "astype str of a traced value": lambda x: (x + 1).astype("U8"),
    "astype object of a traced value": lambda x: (x - 1).astype(object),
    "array of strings": lambda x: np.array(["a", "bc"]),
}


def assert_same(got, want):
    assert type(got) is type(want)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            assert_same(g, w)
        return
    assert isinstance(got, np.ndarray)
    assert got.dtype == want.dtype
    assert got.shape == want.shape and got.strides == want.strides
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("name", list(MAKERS))
def test_returned_alone_and_beside_traced_results(name, backend):
    make = MAKERS[name]

    def f(x):
        return make(x), x * 3 + 1

    npc.compiler.reset()
    cf = npc.compile(f, backend=backend)
    firsts = []
    for i in range(3):
        x = np.arange(4.0) + i
        got = cf(x)
        assert_same(got, f(x))
        firsts.append(got[0])
    # A new array on every call: a write into one result does not reach the next call's.
    assert firsts[0] is not firsts[1] and not np.shares_memory(firsts[1], firsts[2])


def test_a_written_result_does_not_reach_the_next_call():
    def f(x):
        s = np.zeros(2, dtype="U4")
        return s, x + 1

    cf = npc.compile(f, backend="fused")
    a, _ = cf(np.ones(2))
    a[0] = "abcd"
    b, _ = cf(np.ones(2))
    assert b[0] == ""


def test_npc_arguments_get_numpys_array_too():
    # npc's eager functions return NumPy arrays for these dtypes (npc.zeros(3, dtype=">f8")).
    f = lambda x: (np.zeros(2, dtype=">f8"), x * 2)  # noqa: E731
    got = npc.compile(f, backend="fused")(npc.arange(3.0))
    assert type(got[0]) is np.ndarray and got[0].dtype == np.dtype(">f8")
    assert type(got[1]) is npc.ndarray
    np.testing.assert_array_equal(np.asarray(got[1]), [0.0, 2.0, 4.0])


def test_side_effect_is_explained():
    f = lambda x: (np.zeros(2, dtype="U2"), x + 1)  # noqa: E731
    cf = npc.compile(f, backend="fused")
    cf(np.ones(3))
    assert any("dtype <U2, which npc lacks" in s for s in cf.last_side_effects)


HOST_MADE = {
    "arange timedelta64": lambda x: np.arange(3, dtype="m8[s]"),
    "arange datetime64 months": lambda x: np.arange("2020-01", "2020-04", dtype="M8[M]"),
    "linspace big-endian": lambda x: np.linspace(0, 1, 5, dtype=">f8"),
    "logspace longdouble": lambda x: np.logspace(0, 1, 5, dtype=np.longdouble),
    "tri object": lambda x: np.tri(3, dtype=object),
    "tri big-endian used": lambda x: np.tri(3, dtype=">i4") * 2,
    "arange big-endian used": lambda x: np.arange(4, dtype=">f8") + x,
}


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("name", list(HOST_MADE))
def test_numpy_calls_making_dtypes_npc_lacks(name, backend):
    # A host call (arange, linspace, logspace, tri) whose result has a dtype npc lacks breaks
    # the graph and runs NumPy's call on every call; it raised a TypeError, and byte-swapped
    # results came back native.
    make = HOST_MADE[name]

    def f(x):
        return make(x), x + 1

    cf = npc.compile(f, backend=backend)
    for i in range(3):
        x = np.arange(4.0) + i
        assert_same(cf(x), f(x))


def _filled(x):
    b = np.empty_like(x)
    b[...] = 0
    return b


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_a_whole_array_fill_returns_memory_of_its_own(backend):
    # The eager backend returned the fill as a constant broadcast: strides (0,), and a write
    # into one element showed in all of them.
    cf = npc.compile(_filled, backend=backend)
    for _ in range(2):
        got = cf(np.arange(4.0))
        assert got.strides == (8,) and got.flags.writeable
        got[0] = 9
        np.testing.assert_array_equal(got, [9, 0, 0, 0])
