"""npc.ndarray attributes and native methods against numpy.ndarray."""
import copy
import itertools
import pickle
import warnings

import numpy as np
import pytest

import npc
from dtypes import NATIVE, assert_same, cast_specified

SPECIAL = [0.0, -0.0, 1.0, -1.0, 1.7, -2.5, 0.5, 127.0, 128.0, 255.0, 256.0, -129.0, 65504.0, 65520.0,
           2.0 ** 31, -2.0 ** 31, 2.0 ** 63, 1e20, -1e20, 3.4e38, 1e300, np.inf, -np.inf, np.nan, 1e-310]


def numpy_views():
    base = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    return {"c": base, "f": np.asfortranarray(base), "t": base.T, "slice": base[:, 1:3, ::2],
            "neg": base[::-1, :, ::-2], "zero_d": np.array(4.5), "empty": np.zeros((0, 3)),
            "one": np.ones((1, 1, 1))}


@pytest.mark.parametrize("name", list(numpy_views()))
def test_attributes(name):
    e = numpy_views()[name]
    a = npc.asarray(e)
    for attr in ("shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"):
        assert getattr(a, attr) == getattr(e, attr), attr
    for flag in ("c_contiguous", "f_contiguous", "aligned", "writeable"):
        assert getattr(a.flags, flag) == getattr(e.flags, flag), flag
    assert_same(a.T, e.T)
    assert a.T.strides == e.T.strides
    assert len(a) == len(e) if e.ndim else True
    assert a.tolist() == e.tolist()
    assert a.tobytes() == e.tobytes()
    assert a.tobytes("F") == e.tobytes("F")
    assert_same(a.copy(), e.copy())
    for order in "CFAK":
        c, d = a.copy(order), e.copy(order)
        assert c.strides == d.strides and c.flags.owndata


@pytest.mark.parametrize("src", NATIVE, ids=str)
def test_astype_every_pair_with_special_values(src):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_src = np.array(SPECIAL).astype(src)
        if src.kind == "c":
            e_src = e_src + np.array(SPECIAL[::-1]).astype(src) * 1j
    a_src = npc.asarray(e_src)
    for dst in NATIVE:
        with warnings.catch_warnings(record=True) as w_np:
            warnings.simplefilter("always")
            expected = e_src.astype(dst)
        with warnings.catch_warnings(record=True) as w_npc:
            warnings.simplefilter("always")
            actual = a_src.astype(dst)
        # Only the values NumPy defines (the same on its scalar and SIMD paths) are compared.
        ok = cast_specified(e_src, dst)
        assert_same(actual[ok], expected[ok])
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        assert sorted({(type(x.message).__name__, str(x.message)) for x in w_npc}) == \
            sorted({(type(x.message).__name__, str(x.message)) for x in w_np}), (src, dst)


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_astype_casting_rule(casting):
    for a, b in itertools.product(NATIVE, NATIVE):
        e = np.ones(2, a)
        ok = np.can_cast(a, b, casting)
        if ok:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert_same(npc.asarray(e).astype(b, casting=casting), e.astype(b, casting=casting))
        else:
            with pytest.raises(TypeError):
                npc.asarray(e).astype(b, casting=casting)


def test_astype_copy_false_and_order():
    a = npc.arange(6.0).reshape(2, 3)
    assert a.astype(np.float64, copy=False) is a
    assert a.astype(np.float64) is not a
    f = a.astype(np.float32, order="F")
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    k = npc.asarray(np.arange(6.0).reshape(2, 3).T).astype(np.int32)
    assert k.strides == np.arange(6.0).reshape(2, 3).T.astype(np.int32).strides


def test_fill_view_item():
    for dt in NATIVE:
        e = np.zeros((2, 3), dt)
        a = npc.zeros((2, 3), dt)
        e.fill(1)
        a.fill(1)
        assert_same(a, e)
        assert a.item(4) == e.item(4) and type(a.item(4)) is type(e.item(4))
        assert a.item((1, 2)) == e.item((1, 2))
        assert a.item(1, 0) == e.item(1, 0)
    with pytest.raises(OverflowError):
        npc.zeros(3, np.uint8).fill(-1)
    for value, dt in [(1e300, np.int8), (float("nan"), np.int16), (float("inf"), np.uint8), (1j, np.int32),
                      (1 + 2j, np.float64), (2.7, np.int8), (-1.0, np.uint8), (1e300, np.float32)]:
        outcomes = []
        for lib in (np, npc):
            a = lib.zeros(2, dt)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    a.fill(value)
                outcomes.append(np.asarray(a).tolist())
            except Exception as exc:  # noqa: BLE001 - comparing with NumPy's exception
                outcomes.append((type(exc), str(exc)))
        assert outcomes[0] == outcomes[1], (value, dt, outcomes)
    with pytest.raises(ValueError):
        npc.zeros(3).item()
    with pytest.raises(IndexError):
        npc.zeros(3).item(5)
    x = npc.arange(8, dtype=np.int32)
    e = np.arange(8, dtype=np.int32)
    for dt in (np.int32, np.uint32, np.float32, np.int16, np.uint8, np.int64, np.complex64):
        assert_same(x.view(dt), e.view(dt))
    with pytest.raises(ValueError):
        npc.arange(3, dtype=np.int8).view(np.int16)


def test_real_imag():
    e = np.array([1 + 2j, -3.5 - 0j, np.nan * 1j])
    a = npc.asarray(e.copy())
    assert_same(a.real, e.real)
    assert_same(a.imag, e.imag)
    a.real = 7
    ee = e.copy()
    ee.real = 7
    assert_same(a, ee)
    a.imag = npc.arange(3.0)
    ee.imag = np.arange(3.0)
    assert_same(a, ee)
    r = npc.arange(3.0)
    assert_same(r.imag, np.arange(3.0).imag)
    assert not r.imag.flags.writeable
    assert r.real.base is r or np.shares_memory(np.asarray(r.real), np.asarray(r))
    with pytest.raises(TypeError):
        r.imag = 1


def test_python_conversions():
    assert bool(npc.array([3])) is True
    assert bool(npc.array(0.0)) is False
    with pytest.raises(ValueError, match="ambiguous"):
        bool(npc.zeros(2))
    with pytest.raises(ValueError, match="empty"):
        bool(npc.zeros(0))
    assert int(npc.array(3.9)) == 3
    assert float(npc.array(2)) == 2.0
    assert complex(npc.array(1 + 1j)) == 1 + 1j
    assert [1, 2, 3][npc.array(1)] == 2
    with pytest.raises(TypeError):
        [1, 2][npc.array(1.0)]
    with pytest.raises(TypeError):
        int(npc.zeros(3))
    with pytest.raises(TypeError):  # NumPy 2.5: only 0-d arrays convert to Python scalars
        float(npc.array([2.5]))
    with pytest.raises(TypeError):
        len(npc.array(1.0))
    assert operator_index(npc.array(5, np.uint8)) == 5


def operator_index(x):
    import operator
    return operator.index(x)


def test_flags_object():
    a = npc.zeros((2, 3))
    e = np.zeros((2, 3))
    assert repr(a.flags) == repr(e.flags)
    assert a.flags["C_CONTIGUOUS"] and a.flags["W"]
    a.flags.writeable = False
    assert not a.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        a.fill(1)
    a.flags.writeable = True
    v = a.T
    assert not v.flags.owndata and a.flags.owndata


def test_base_collapses_like_numpy():
    a = npc.zeros((4, 5))
    assert a.base is None
    t = a.T
    assert t.base is a
    assert t.T.base is a
    r = a.reshape(20)
    assert r.base is a
    src = np.zeros(5)
    w = npc.asarray(src)
    assert w.base is src
    assert w.T.base is src


def test_pickle_copy_deepcopy():
    a = npc.asarray(np.arange(12.0).reshape(3, 4)[:, ::2])
    for b in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert isinstance(b, npc.ndarray)
        assert_same(b, a)
        assert not np.shares_memory(np.asarray(b), np.asarray(a))


def test_reshape_views_and_copies():
    e = np.arange(24.0).reshape(2, 3, 4)
    a = npc.asarray(e)
    for shape in [(24,), (4, 6), (-1, 2), (2, 3, 2, 2), (1, 24, 1)]:
        for order in "CF":
            r, s = a.reshape(shape, order=order), e.reshape(shape, order=order)
            assert_same(r, s)
            assert np.shares_memory(np.asarray(r), e) == np.shares_memory(s, e)
    t, te = a.T, e.T
    for shape in [(24,), (4, 3, 2), (12, 2)]:
        r, s = t.reshape(shape), te.reshape(shape)
        assert_same(r, s)
        assert np.shares_memory(np.asarray(r), e) == np.shares_memory(s, e)
    assert_same(a.reshape(4, 6), e.reshape(4, 6))
    for bad in [(5, 5), (-1, -1), (-3, -8)]:
        with pytest.raises(ValueError) as x_np:
            e.reshape(bad)
        with pytest.raises(ValueError) as x_npc:
            a.reshape(bad)
        assert str(x_np.value) == str(x_npc.value)
    assert_same(a.reshape(-2, 12), e.reshape(-2, 12))
    assert_same(a.transpose(1, 0, 2), e.transpose(1, 0, 2))
    assert_same(a.transpose((2, 0, 1)), e.transpose((2, 0, 1)))
    with pytest.raises(ValueError):
        a.transpose(0, 0, 1)
