"""Views share memory with their source; copies do not (fails if views stop sharing)."""
import numpy as np
import pytest

import npc


def test_views_share_memory_and_writes_show():
    a = npc.zeros((4, 5))
    for v in (a.T, a.reshape(20), a.reshape(2, 10), a.transpose(1, 0), a.view(np.int64), a.real):
        assert np.shares_memory(np.asarray(v), np.asarray(a))
    a.reshape(20).fill(2.0)
    assert np.asarray(a).sum() == 40.0
    a.T.fill(1.0)
    assert np.asarray(a).sum() == 20.0


def test_copies_do_not_share():
    a = npc.arange(10.0)
    for c in (a.copy(), a.astype(np.float32), npc.array(a), a.copy("F")):
        assert not np.shares_memory(np.asarray(c), np.asarray(a))


def test_numpy_buffers_are_shared_both_ways():
    src = np.arange(12.0).reshape(3, 4)
    a = npc.asarray(src)
    src[1, 1] = -5
    assert np.asarray(a)[1, 1] == -5
    back = np.asarray(a)
    back[2, 3] = 99
    assert src[2, 3] == 99
    m = memoryview(a)
    assert m.shape == (3, 4) and m.format == "d"


def test_readonly_numpy_buffer_stays_readonly():
    src = np.arange(4.0)
    src.flags.writeable = False
    a = npc.asarray(src)
    assert not a.flags.writeable
    try:
        a.flags.writeable = True
    except ValueError:
        pass
    else:
        raise AssertionError("re-enabled writes on a read-only NumPy buffer")


# numpy.asarray(npc_array) takes the buffer protocol (Note [buffer exports] in
# python/npc/csrc/bind_ndarray.cpp): zero-copy, NumPy's dtype, shape and strides, the npc
# array kept alive by the NumPy view, read-only arrays exported read-only.
NATIVE_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                 np.float16, np.float32, np.float64, np.complex64, np.complex128]
LAYOUTS = {
    "0-d": lambda x: x.reshape(24)[5:6].reshape(()),
    "empty": lambda x: x.reshape(24)[3:3],
    "contiguous": lambda x: x,
    "strided": lambda x: x[:, ::2, 1],
    "transposed": lambda x: x.T,
    "negative": lambda x: x[::-1, :, ::-2],
    "fortran": lambda x: x.reshape(4, 6).T.reshape(6, 4, order="F"),
}


def _values(dtype):
    v = np.arange(24).reshape(2, 3, 4) - 7
    return (v % 2 == 0) if dtype is np.bool_ else (v * (1 + 1j) if np.dtype(dtype).kind == "c" else v).astype(dtype)


@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_numpy_asarray_of_npc_matches_numpy(dtype, layout):
    ref = _values(dtype)
    view = LAYOUTS[layout]
    r, a = view(ref), view(npc.asarray(ref.copy()))
    b = np.asarray(a)
    assert type(b) is np.ndarray
    assert (b.dtype, b.shape, b.strides) == (r.dtype, r.shape, r.strides)
    assert np.array_equal(b, r)
    assert b.flags.writeable and not b.flags.owndata
    if b.size:
        assert np.shares_memory(b, np.asarray(a))
        b.reshape(-1)[:1] = r.reshape(-1)[-1] if b.ndim else r[()]  # a write through NumPy shows in npc
        assert np.array_equal(np.asarray(npc.ravel(a))[:1], np.asarray(b).reshape(-1)[:1])


@pytest.mark.parametrize("dtype", [np.bool_, np.float16, np.complex64, np.int32], ids=lambda d: np.dtype(d).name)
def test_numpy_asarray_of_read_only_npc_is_read_only(dtype):
    src = _values(dtype)
    ro_ref = src.copy()
    ro_ref.flags.writeable = False
    ro = npc.asarray(src.copy())
    ro.flags.writeable = False
    cases = [(ro, ro_ref), (ro[::-1], ro_ref[::-1]),
             (npc.broadcast_to(npc.asarray(src[0, 0]), (3, 4)), np.broadcast_to(src[0, 0], (3, 4)))]
    for a, r in cases:
        b = np.asarray(a)
        assert not b.flags.writeable and not r.flags.writeable
        assert np.array_equal(b, r) and b.strides == r.strides
        with pytest.raises(ValueError, match="read-only"):
            b[...] = src.reshape(-1)[0]
        m = memoryview(a)
        assert m.readonly and m.shape == memoryview(r).shape and m.format == memoryview(r).format
        errors = []
        for mv in (m, memoryview(r)):  # the same error as for NumPy's own read-only buffer
            with pytest.raises((TypeError, NotImplementedError)) as e:
                mv[(0,) * mv.ndim] = mv[(0,) * mv.ndim]
            errors.append((e.type, str(e.value)))
        assert errors[0] == errors[1]


def test_numpy_asarray_keeps_npc_buffer_alive():
    import gc

    b = np.asarray(npc.arange(6.0) * 2)  # the npc array has no other reference
    gc.collect()
    junk = [npc.full(6, -1.0) for _ in range(50)]  # would reuse the freed block
    assert b.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert isinstance(b.base, memoryview)
    del junk


@pytest.mark.filterwarnings("ignore:Setting the (shape|strides):DeprecationWarning")
def test_buffer_exports_survive_geometry_changes():
    a = npc.arange(12.0)
    b1 = np.asarray(a)
    m1 = memoryview(a)
    a.shape = (3, 4)  # in place, while two exports hold the old geometry
    b2 = np.asarray(a)
    m2 = memoryview(a)
    assert (b1.shape, b1.strides, m1.shape) == ((12,), (8,), (12,))
    assert (b2.shape, b2.strides, m2.shape, m2.strides) == ((3, 4), (32, 8), (3, 4), (32, 8))
    del b1
    m1.release()
    a.shape = (2, 6)  # the (3, 4) exports are still alive
    b3 = np.asarray(a)
    assert b3.shape == (2, 6) and b2.shape == (3, 4) and m2.shape == (3, 4)
    m2.release()
    del b2, b3
    a.strides = (8, 16)
    b4 = np.asarray(a)
    assert (b4.shape, b4.strides) == ((2, 6), (8, 16))
    ref = np.arange(12.0)
    ref.shape = (2, 6)
    ref.strides = (8, 16)
    assert np.array_equal(b4, ref)
    m = [memoryview(a) for _ in range(5)]  # many exports of one geometry share a block
    assert all(x.shape == (2, 6) and x.strides == (8, 16) for x in m)
