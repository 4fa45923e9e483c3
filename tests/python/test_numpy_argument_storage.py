"""NumPy arrays that are views (strided, negative strides, at an offset into their owner,
views of views, byte-swapped) work as arguments of npc functions, eagerly and under
npc.compile: npc's storage over such an array spans its owner's memory (Note [storages of
NumPy arrays] in python/npc/csrc/bind_interop.cpp), every view npc makes of it is checked
against that storage (Note [view bounds] in src/core/ndarray.cpp), and the compiled
function's covering views of strided arguments fit it."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS


def _owner():
    return np.arange(60.0).reshape(6, 10)


VIEWS = {
    "columns": lambda o: o[:, 2:5],
    "last columns": lambda o: o[:, 7:],
    "step 2 rows": lambda o: o[::2],
    "negative strides": lambda o: o[::-1, ::-2],
    "negative rows, offset columns": lambda o: o[4:0:-1, 3:9],
    "offset 1-d": lambda o: o.reshape(-1)[7:43:3],
    "reversed 1-d": lambda o: o.reshape(-1)[::-1],
    "view of a view": lambda o: o[1:, 1:][::2, ::-3],
    "transposed slice": lambda o: o.T[2:8, 1::2],
    "frombuffer at an offset": lambda o: np.frombuffer(o.tobytes(), np.float64, count=20, offset=80)[::-2],
    "byte-swapped": lambda o: o.astype(">f8")[1::2, ::3],
    "float32 strided": lambda o: o.astype(np.float32)[::-1, 1::4],
}


def f(x):
    return x * 2 + 1, x.sum(axis=0), x.T.copy(), x.reshape(-1)


def same(got, want):
    g = np.asarray(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_eager(name):
    x = VIEWS[name](_owner())
    a = npc.asarray(x)
    assert a.strides == x.strides or not x.dtype.isnative
    for g, w in zip(f(a), f(x)):
        same(g, w)
    same(npc.add(x, 1), x + 1)
    same(npc.sum(x, axis=-1), x.sum(axis=-1))


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_eager_writes_reach_the_caller(name):
    o1, o2 = _owner(), _owner()
    x1, x2 = VIEWS[name](o1), VIEWS[name](o2)
    if not x1.flags.writeable:
        pytest.skip("a read-only view")
    a = npc.asarray(x1)
    if np.asarray(a).ctypes.data != x1.ctypes.data:
        pytest.skip("npc works on a copy of this view (byte order)")
    a[...] = a * 3
    x2[...] = x2 * 3
    same(x1, x2)
    same(o1, o2)  # the memory around the view is untouched


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_compiled(name, backend):
    compiler.reset()
    cf = npc.compile(f, backend=backend)
    for _ in range(2):
        x = VIEWS[name](_owner())
        for g, w in zip(cf(x), f(x)):
            same(g, w)


def _write(x):
    x[0] += 1
    x[-1] *= 2
    return x.sum()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["columns", "last columns", "negative strides", "negative rows, offset columns",
                                  "offset 1-d", "view of a view", "transposed slice"])
def test_compiled_writes_reach_the_caller(name, backend):
    compiler.reset()
    cf = npc.compile(_write, backend=backend)
    for _ in range(2):
        o1, o2 = _owner(), _owner()
        got, want = cf(VIEWS[name](o1)), _write(VIEWS[name](o2))
        assert got == want
        same(o1, o2)


def test_views_of_npc_arrays_over_numpy_memory_are_checked():
    # An npc array over a view of a NumPy array: npc's own views of it are in bounds, and
    # setting strides that reach past the owner's memory is refused.
    o = _owner()
    a = npc.asarray(o[1:3, 2:4])
    same(a[::-1, ::-1], o[1:3, 2:4][::-1, ::-1])
    with pytest.raises(ValueError):
        a.strides = (8000, 8)
