"""Array objects are reused after they die (Note [array object cache] in
python/npc/csrc/bind_ndarray.cpp): a reused object carries nothing of its former life (flags,
base, WARN_ON_WRITE, buffer geometry, memory) into the new array, and the memory a dead array
viewed is released at once."""
import gc
import weakref

import numpy as np
import pytest

import npc


def churn(n=100):
    """Fills the cache with dead arrays of assorted kinds."""
    a = npc.arange(24.0).reshape(4, 6)
    for _ in range(n):
        a[1:3, ::2]
        a[:, 3] * 2.0
        npc.broadcast_arrays(a, a[0])[1][0]


def test_views_after_reuse_have_their_own_geometry_and_base():
    e = np.arange(24.0).reshape(4, 6)
    a = npc.array(e)
    for _ in range(3):
        churn()
        for key in [(slice(None), 3), (1, slice(None, 4)), (slice(1, -1), slice(1, -1)), slice(None, None, -1)]:
            v, ev = a[key], e[key]
            assert v.shape == ev.shape and v.strides == ev.strides
            np.testing.assert_array_equal(np.asarray(v), ev)
            assert v.base is a
            assert not v.flags.owndata and v.flags.writeable


def test_read_only_and_warn_on_write_do_not_carry_over():
    ro = npc.arange(6.0)
    ro.flags.writeable = False
    for _ in range(50):
        ro[1:4]  # read-only views die into the cache
        npc.broadcast_arrays(ro, ro)[0][1:]
    w = npc.zeros(6)
    v = w[1:4]
    assert v.flags.writeable
    v[0] = 1.0  # no DeprecationWarning, no error
    assert w[1] == 1.0
    r = w * 2.0
    assert r.flags.writeable and r.flags.owndata and r.base is None


def test_buffer_geometry_after_reuse():
    a = npc.arange(24.0).reshape(2, 3, 4)
    for _ in range(20):
        np.asarray(a[:, 1])  # exports a 2-D geometry, then dies
    b = npc.arange(5.0)[::2]
    m = np.asarray(b)
    assert m.shape == (3,) and m.strides == (16,)
    np.testing.assert_array_equal(m, [0.0, 2.0, 4.0])


def test_dead_arrays_release_their_memory():
    base = np.arange(1000.0)
    ref = weakref.ref(base)
    a = npc.asarray(base)
    del base
    for _ in range(10):
        a[::3] + 1.0
    del a
    gc.collect()
    assert ref() is None  # the NumPy buffer the views read is not kept alive by parked objects


def test_weakly_referenced_arrays_are_freed():
    a = npc.arange(4.0)
    v = a[1:]
    ref = weakref.ref(v)
    del v
    assert ref() is None
    w = a[:2]
    np.testing.assert_array_equal(np.asarray(w), [0.0, 1.0])


@pytest.mark.parametrize("dtype", ["float64", "int32", "complex128", "bool"])
def test_values_of_reused_results(dtype):
    e = np.arange(12).reshape(3, 4).astype(dtype)
    a = npc.array(e)
    for _ in range(3):
        churn(20)
        np.testing.assert_array_equal(np.asarray(a[:, 1] == a[:, 1]), e[:, 1] == e[:, 1])
        np.testing.assert_array_equal(np.asarray(a[1]), e[1])
        assert a[2, 3] == e[2, 3]
