"""Views must share memory with their source: these tests fail if a view silently copies."""
import numpy as np
import pytest

import npc


def _shares(a, b):
    return a._storage_id == b._storage_id


@pytest.mark.parametrize("key", [0, (slice(None), 1), (slice(None, None, -1),), (Ellipsis, None),
                                 (1, slice(1, None, 2)), (None, Ellipsis, slice(None, None, -2))])
def test_basic_index_is_a_view(key):
    a = npc.arange(12.0).reshape(3, 4)
    v = a[key]
    assert isinstance(v, npc.ndarray)
    assert _shares(v, a)
    assert v.base is (a if a.base is None else a.base)  # NumPy collapses bases
    np.asarray(v).flat[0] = -1.0
    n = np.arange(12.0).reshape(3, 4)
    n[key].flat[0] = -1.0
    np.testing.assert_array_equal(np.asarray(a), n)


def test_negative_stride_view_writes_through():
    a = npc.arange(6)
    r = a[::-1]
    assert r.strides == (-8,)
    r[0] = 100
    assert a[5] == 100
    a[0] = 7
    assert r[5] == 7


def test_view_of_view_keeps_base():
    a = npc.arange(24).reshape(2, 3, 4)
    v = a[1][::2][:, 1:]
    assert v.base is (a if a.base is None else a.base)  # NumPy collapses bases
    v[...] = 0
    assert np.asarray(a)[1, ::2, 1:].sum() == 0


def test_advanced_index_is_a_copy():
    a = npc.arange(6)
    c = a[[0, 1]]
    assert not _shares(c, a)
    c[0] = 99
    assert a[0] == 0
    m = a[np.array([True] * 6)]
    m[0] = 99
    assert a[0] == 0


def test_setitem_through_view_reaches_source():
    a = npc.zeros((3, 3))
    a[1:, ::-1][0] = [1, 2, 3]
    np.testing.assert_array_equal(np.asarray(a)[1], [3, 2, 1])
