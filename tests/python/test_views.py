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


NEWAXIS_KEYS = [(slice(None), None), (None, slice(None)), (0, None), (0, 1, None), (0, 1, 2, None),
                (None, 0, None, slice(1, 3)), (slice(None), None, slice(None), None), (None,) * 3 + (slice(None),),
                (1, slice(None, None, -1), None, 2), (None,) * 61 + (0,)]


@pytest.mark.parametrize("key", NEWAXIS_KEYS, ids=repr)
def test_newaxis_keys_view_like_numpy(key):
    # Tuples of ints, slices and None take the fast view path: NumPy's shape, strides
    # (0 on the new axes), values, and a view that writes through.
    base = np.arange(24.0).reshape(2, 3, 4)
    a = npc.asarray(base.copy())
    v, e = a[key], base[key]
    assert isinstance(v, npc.ndarray) and _shares(v, a)
    got = np.asarray(v)
    assert got.shape == e.shape and got.strides == e.strides
    np.testing.assert_array_equal(got, e)
    a[key] = -1.0
    base[key] = -1.0
    np.testing.assert_array_equal(np.asarray(a), base)


def test_newaxis_keys_errors_like_numpy():
    a, A = np.zeros((2, 3, 4)), npc.zeros((2, 3, 4))
    for key in [(0, 1, 2, 3, None), (None, 0, 0, 0, 0), (None,) * 63 + (0,)]:
        with pytest.raises(IndexError) as ref:
            a[key]
        with pytest.raises(IndexError) as got:
            A[key]
        assert str(got.value) == str(ref.value)
