"""Floating-point warnings of compiled graphs that hold host calls (numpy.arange of a traced
size, numpy.random) name the op that raised, as NumPy does, also when several ops of a graph
can raise the same kind; the host calls run once per call (numpy.random's stream advances as
in NumPy) and their results are those the kernels read.
"""
import os
import warnings

import numpy as np
import pytest

import npc


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-fpnames")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def _floordiv_then_remainder(a1, a2):
    a2 //= a1
    v1 = np.arange(np.size(a2))
    return a1 % v1


def _both_int_divisions(x):
    a = x // x
    v = np.arange(np.size(x))
    return a + x % v


def _only_remainder_raises(x, y):
    q = x // y  # y holds no zero: raises nothing
    return q + x % np.arange(np.size(x))


def _random_then_divide(x, y):
    a = x / y
    r = np.random.rand(x.size)
    return a + r / (x * 0), np.log(x)


def _random_no_error_first(x, y):
    a = x / y  # y holds no zero
    return a + np.random.rand(x.size) / x


X = np.array([1.0, 0.0, 2.0, -1.0, 3.0])
Y = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
I = np.array([3, 0, 2], dtype=np.int64)
J = np.array([7, -3, 5], dtype=np.int64)

CASES = [
    ("floordiv-then-remainder-0d", _floordiv_then_remainder, (np.array(1, np.int8), np.array(1, np.int8))),
    ("floordiv-then-remainder-1d", _floordiv_then_remainder, (np.array([1, 2, 3], np.int16), np.array([4, 5, 6], np.int16))),
    ("both-int-divisions", _both_int_divisions, (I,)),
    ("only-remainder-raises", _only_remainder_raises, (J, np.array([2, 1, 4]))),
    ("random-then-divide", _random_then_divide, (X, X)),
    ("random-no-error-first", _random_no_error_first, (X, Y)),
]


def record(fn, args):
    np.random.seed(7)
    with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
        warnings.simplefilter("always")
        out = fn(*args)
    after = np.random.rand()  # the stream advanced as far as NumPy's
    return [(type(m.message).__name__, str(m.message)) for m in w], out, args, after


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in CASES])
def test_warning_names_equal_numpys(fn, args, backend):
    want_w, want, want_args, want_after = record(fn, [a.copy() for a in args])
    assert want_w, "NumPy warns for this case"
    f = npc.compile(fn, backend=backend)
    for _ in range(2):  # the tracing call and a replay
        got_w, got, got_args, got_after = record(f, [a.copy() for a in args])
        assert got_w == want_w
        assert isinstance(got, tuple) == isinstance(want, tuple)
        got_t, want_t = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        assert len(got_t) == len(want_t)
        for g, w in zip(got_t, want_t):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
        for g, w in zip(got_args, want_args):
            np.testing.assert_array_equal(g, w)
        assert got_after == want_after
