"""broadcast_arrays' views against NumPy 2.5: writeable with the WARN_ON_WRITE flag (a
DeprecationWarning on the first write, a FutureWarning when WRITEABLE is read), values of
writes through self-overlapping views, read-only inputs staying read-only."""
import warnings

import numpy as np
import pytest

import npc


def record(fn):
    """(result, [(category, message, filename)]) of fn()."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    return r, [(x.category, str(x.message), x.filename) for x in w]


def pair(a_shape=(3,), b_shape=(2, 1), dtype=np.int64):
    out = []
    for lib in (np, npc):
        a = lib.array((np.arange(int(np.prod(a_shape))) % 3).astype(dtype).reshape(a_shape))
        b = lib.array((np.arange(int(np.prod(b_shape))) % 3).astype(dtype).reshape(b_shape))
        out.append(lib.broadcast_arrays(a, b))
    return out


def same(fn_np, fn_npc):
    r_np, w_np = record(fn_np)
    r_npc, w_npc = record(fn_npc)
    assert w_npc == w_np  # the same warnings, attributed to this file
    if isinstance(r_np, np.ndarray):
        np.testing.assert_array_equal(np.asarray(r_npc), r_np)
    elif not isinstance(r_np, str) or "FLAGS" not in r_np:
        assert r_npc == r_np


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32, np.complex128], ids=str)
def test_flags_and_first_write(dtype):
    (na, nb), (ca, cb) = pair(dtype=dtype)
    assert ca.shape == na.shape and cb.strides == nb.strides
    same(lambda: na.flags.writeable, lambda: ca.flags.writeable)  # FutureWarning
    same(lambda: na.flags["W"], lambda: ca.flags["W"])
    same(lambda: na.flags.behaved, lambda: ca.flags.behaved)
    same(lambda: repr(na.flags), lambda: repr(ca.flags))  # no warning, "(with WARN_ON_WRITE=True)"
    assert repr(ca.flags) == repr(na.flags)
    same(lambda: memoryview(na).readonly, lambda: memoryview(ca).readonly)

    def write(x):
        x[0, 0] = 1
        return x

    same(lambda: write(na), lambda: write(ca))  # DeprecationWarning once
    same(lambda: write(na), lambda: write(ca))  # then silent
    same(lambda: na.flags.writeable, lambda: ca.flags.writeable)


@pytest.mark.parametrize("how", ["setitem", "ufunc_out", "iadd", "fill", "copyto", "view_setitem"])
def test_write_paths(how):
    (na, nb), (ca, cb) = pair()

    def act(lib, a, b):
        if how == "setitem":
            b[1] = 7
        elif how == "ufunc_out":
            lib.add(b, 1, out=b)  # the output overlaps itself: NumPy buffers the input
        elif how == "iadd":
            b += 1
        elif how == "fill":
            b.fill(3)
        elif how == "copyto":
            lib.copyto(b, 5)
        else:
            v = a[1]
            v[0] = 9
        return a, b

    same(lambda: act(np, na, nb)[1], lambda: act(npc, ca, cb)[1])
    np.testing.assert_array_equal(np.asarray(ca), na)


def test_set_writeable_clears_the_flag():
    (na, _), (ca, _) = pair()
    for a in (na, ca):
        a.flags.writeable = True
    same(lambda: na.flags.writeable, lambda: ca.flags.writeable)  # no warning now
    (na, _), (ca, _) = pair()
    for a in (na, ca):
        a.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ca[0, 0] = 1


def test_inputs_of_the_result_shape_are_returned_unchanged():
    for lib in (np, npc):
        x = lib.arange(3)
        y = lib.zeros(3)
        r = lib.broadcast_arrays(x, y)
        assert r[0] is x and r[1] is y
        ro = lib.broadcast_to(lib.arange(3), (3,))
        got = lib.broadcast_arrays(ro, lib.zeros((2, 1)))
        assert not got[0].flags.writeable


def test_meshgrid_views_warn_on_write_like_numpy():
    gx, _ = np.meshgrid(np.arange(3), np.arange(2), copy=False)
    cx, _ = npc.meshgrid(npc.arange(3), npc.arange(2), copy=False)

    def write(g):
        g[0, 0] = 5
        return g

    same(lambda: write(gx), lambda: write(cx))
