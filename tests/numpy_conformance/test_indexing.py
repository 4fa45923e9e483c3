"""Differential tests of ndarray.__getitem__/__setitem__ against NumPy.

Every case runs the same index expression on a NumPy array and on an npc array holding the
same values, and compares value, dtype, shape, scalar-vs-array results, the exception type
when NumPy raises, and view-ness (a write through the result shows in the source exactly
when it does in NumPy).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import npc

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]



def _values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, size=shape)
    if np.dtype(dtype).kind == "c":
        return (x + 1j * rng.integers(-5, 5, size=shape)).astype(dtype)
    if np.dtype(dtype).kind == "u":
        x = np.abs(x)
    return x.astype(dtype)


def _layout(base, kind):
    """The same values as `base`, laid out as `kind` (NumPy array to be copied into npc)."""
    return base


def _make_pair(a_np, kind="c"):
    """A NumPy array and an npc array with the same values and the requested memory layout:
    c (contiguous), f (Fortran), strided (every other element), reversed (negative strides)."""
    if kind == "f":
        n = np.asfortranarray(a_np)
        p = npc.asarray(n.copy(order="F"))
        return n, p
    if kind == "strided" and a_np.ndim:
        big_np = np.repeat(a_np, 2, axis=-1)
        big = npc.asarray(big_np.copy())
        return big_np[..., ::2], big[..., ::2]
    if kind == "reversed" and a_np.ndim:
        n = a_np[::-1].copy()
        p = npc.asarray(n.copy())
        return n[::-1], p[::-1]
    return a_np.copy(), npc.asarray(a_np.copy())


def _to_npc_key(key, use_npc):
    if not use_npc:
        return key
    def conv(k):
        return npc.asarray(k) if isinstance(k, np.ndarray) else k
    return tuple(conv(k) for k in key) if isinstance(key, tuple) else conv(key)


def _assert_same(got, exp):
    if isinstance(exp, np.ndarray):
        assert isinstance(got, npc.ndarray), f"expected an array, got {type(got)}"
        assert got.dtype == exp.dtype
        assert got.shape == exp.shape
        np.testing.assert_array_equal(np.asarray(got), exp)
    else:
        assert type(got) is type(exp), f"expected {type(exp)}, got {type(got)}"
        if exp != exp:
            assert got != got
        else:
            assert got == exp


def check_getitem(n, p, key, use_npc_key=False):
    try:
        exp = n[key]
    except Exception as e:  # noqa: BLE001 - NumPy's exception type is the oracle
        with pytest.raises(type(e)):
            p[_to_npc_key(key, use_npc_key)]
        return
    got = p[_to_npc_key(key, use_npc_key)]
    _assert_same(got, exp)
    # View-ness: write through the result and see whether the source changes.
    if isinstance(exp, np.ndarray) and exp.size and exp.flags.writeable:
        before_n, before_p = n.copy(), np.asarray(p).copy()
        one = np.ones((), exp.dtype) if exp.dtype != np.bool_ else np.array(not exp.flat[0])
        new = exp.flat[0] + one if exp.dtype != np.bool_ else one
        exp.flat[0] = new
        got_np = np.asarray(got)
        got_np.flat[0] = new
        np.testing.assert_array_equal(np.asarray(p), n)
        n[...] = before_n
        np.asarray(p)[...] = before_p


# ---------------------------------------------------------------- hypothesis strategies
SHAPES = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@st.composite
def basic_key(draw, shape):
    items = []
    nd = len(shape)
    used = 0
    ellipsis = False
    for _ in range(draw(st.integers(0, nd + 2))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        if kind == "int":
            n = shape[used] if used < nd else 3
            items.append(draw(st.integers(-n - 1, n)))
            used += 1
        elif kind == "slice":
            items.append(slice(draw(st.none() | st.integers(-6, 6)), draw(st.none() | st.integers(-6, 6)),
                               draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))))
            used += 1
        elif kind == "none":
            items.append(None)
        elif not ellipsis:
            items.append(Ellipsis)
            ellipsis = True
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@st.composite
def advanced_key(draw, shape):
    """A mix of integer arrays (broadcastable), boolean masks, slices, ints, None, Ellipsis."""
    nd = len(shape)
    items = []
    dim = 0
    bshape = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=2)))
    while dim < nd and len(items) < nd + 1:
        kind = draw(st.sampled_from(["arr", "arr", "mask", "slice", "int", "none"]))
        n = shape[dim]
        if kind == "arr":
            sub = bshape[len(bshape) - draw(st.integers(0, len(bshape))):] if bshape else ()
            sub = tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in sub)
            lo, hi = (-n, n - 1) if n else (0, 0)
            vals = draw(st.lists(st.integers(lo - 1 if draw(st.integers(0, 20)) == 0 else lo, hi),
                                 min_size=int(np.prod(sub)), max_size=int(np.prod(sub))))
            arr = np.array(vals, dtype=draw(st.sampled_from([np.intp, np.int32, np.uint8, np.int16]))
                           if all(v >= 0 for v in vals) else np.intp).reshape(sub)
            items.append(arr if draw(st.booleans()) else arr.tolist() if arr.ndim else arr)
            dim += 1
        elif kind == "mask":
            k = draw(st.integers(1, nd - dim))
            mshape = shape[dim:dim + k]
            bits = draw(st.lists(st.booleans(), min_size=int(np.prod(mshape)), max_size=int(np.prod(mshape))))
            items.append(np.array(bits, dtype=bool).reshape(mshape))
            dim += k
        elif kind == "slice":
            items.append(slice(draw(st.none() | st.integers(-4, 4)), None, draw(st.sampled_from([None, -1, 2]))))
            dim += 1
        elif kind == "int":
            items.append(draw(st.integers(-n, n - 1)) if n else 0)
            dim += 1
        else:
            items.append(None)
    if draw(st.integers(0, 4)) == 0:
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    if draw(st.integers(0, 5)) == 0:
        items.insert(draw(st.integers(0, len(items))), draw(st.booleans()))
    return tuple(items) if len(items) != 1 or draw(st.booleans()) else items[0]


LAYOUTS = st.sampled_from(["c", "f", "strided", "reversed"])
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(data=st.data(), shape=SHAPES, layout=LAYOUTS)
def test_basic_indexing_hypothesis(data, shape, layout):
    n, p = _make_pair(_values(shape, np.float64), layout)
    check_getitem(n, p, data.draw(basic_key(shape)))


@_SETTINGS
@given(data=st.data(), shape=st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple), layout=LAYOUTS,
       use_npc=st.booleans())
def test_advanced_indexing_hypothesis(data, shape, layout, use_npc):
    n, p = _make_pair(_values(shape, np.int32), layout)
    check_getitem(n, p, data.draw(advanced_key(shape)), use_npc)


@_SETTINGS
@given(data=st.data(), shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple),
       layout=LAYOUTS, advanced=st.booleans())
def test_setitem_hypothesis(data, shape, layout, advanced):
    key = data.draw(advanced_key(shape) if advanced else basic_key(shape))
    n, p = _make_pair(_values(shape, np.float64), layout)
    try:
        target_shape = n[key].shape if isinstance(n[key], np.ndarray) else ()
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            p[key] = 1.0
        return
    # A value that broadcasts: drop some leading dims and set some to 1.
    drop = data.draw(st.integers(0, len(target_shape)))
    vshape = tuple(1 if data.draw(st.booleans()) else s for s in target_shape[drop:])
    value = _values(vshape, data.draw(st.sampled_from([np.float64, np.int16, np.float32])), seed=3)
    n[key] = value
    p[key] = value if data.draw(st.booleans()) else npc.asarray(value)
    np.testing.assert_array_equal(np.asarray(p), n)


# ---------------------------------------------------------------- fixed cases
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("key", [0, -1, (1, 2), (slice(None, None, -1), 1), (Ellipsis, None, 0),
                                 ([0, 2, -1],), (slice(None), [1, 0]), ([[0], [1]], [0, 2]),
                                 (np.array([True, False, True]),), ()])
def test_getitem_every_dtype(dtype, key):
    n, p = _make_pair(_values((3, 4), dtype))
    check_getitem(n, p, key)


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_every_dtype(dtype):
    n, p = _make_pair(_values((3, 4), dtype))
    v = _values((4,), dtype, seed=5)
    for key in [1, (slice(None), 2), ([0, 2],), (np.array([True, False, True]),), (Ellipsis, slice(None, None, -2))]:
        n[key] = v[: n[key].shape[-1]] if n[key].ndim else v[0]
        p[key] = v[: n[key].shape[-1]] if n[key].ndim else v[0]
        np.testing.assert_array_equal(np.asarray(p), n)


def test_scalar_results_are_numpy_scalars():
    p = npc.arange(6.0).reshape(2, 3)
    assert type(p[0, 1]) is np.float64
    assert type(npc.arange(3)[np.int64(1)]) is np.int64
    assert type(npc.arange(3)[np.array(1)]) is np.int64
    assert type(npc.zeros(())[()]) is np.float64
    assert isinstance(npc.zeros(())[...], npc.ndarray)
    assert isinstance(p[0, ...], npc.ndarray)


@pytest.mark.parametrize("key", [1.0, "a", (0, 0, 0), (Ellipsis, Ellipsis), [1.0], np.array([1.0]),
                                 np.array([True, False]), ([0, 1], [0, 1, 2]), 7, -8, [7], slice(None, None, 0),
                                 (slice(1.5, None),), None])
def test_errors_match_numpy(key):
    n, p = _make_pair(_values((3, 4), np.float64))
    try:
        n[key]
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            p[key]
        assert str(info.value) == str(e)
        return
    _assert_same(p[key], n[key])


def test_overlapping_assignment():
    for sl_dst, sl_src in [(slice(1, None), slice(None, -1)), (slice(None, -1), slice(1, None)),
                           (slice(None, None, -1), slice(None)), (slice(None, None, 2), slice(None, 3))]:
        n = np.arange(6)
        p = npc.arange(6)
        n[sl_dst] = n[sl_src]
        p[sl_dst] = p[sl_src]
        np.testing.assert_array_equal(np.asarray(p), n)
    n = np.arange(6)
    p = npc.arange(6)
    n[[1, 2, 3]] = n[:3]
    p[[1, 2, 3]] = p[:3]
    np.testing.assert_array_equal(np.asarray(p), n)


def test_repeated_indices_last_write_wins():
    n = np.zeros(4)
    p = npc.zeros(4)
    n[[0, 0, 2, 0]] = [1, 2, 3, 4]
    p[[0, 0, 2, 0]] = [1, 2, 3, 4]
    np.testing.assert_array_equal(np.asarray(p), n)


@pytest.mark.parametrize("value", [300, -1, float("nan"), float("inf"), 1.7, 1 + 2j, "5", None, np.int64(300),
                                   np.complex128(1j), [1, 2, 3], np.ones((1, 3)), [1, 2]])
@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.float32, np.complex128, np.bool_])
def test_setitem_values_cast_like_numpy(value, dtype):
    import warnings
    results = []
    for lib in (np, npc):
        a = lib.zeros(3, dtype)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                a[:] = value
                results.append(("ok", repr(np.asarray(a).tolist()), [x.category for x in w]))
            except Exception as e:  # noqa: BLE001
                results.append((type(e), None, []))
    assert results[0] == results[1]


def test_readonly_assignment_raises():
    p = npc.arange(3)
    p.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        p[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        p[[0]] = 1


def test_nested_list_into_basic_view():
    with pytest.raises(ValueError):
        npc.zeros(3)[:] = [[1, 2, 3]]


@pytest.mark.parametrize("key,value", [("gt", [1, 2]), ("all", [1, 2]), ("all", np.ones((2, 3))),
                                       ("rows", np.ones((2, 3))), ("rows", [1, 2]), ("all", [[1, 2, 3]]),
                                       ("all", 5.0), ("rows", [[1], [2]])])
def test_mask_assignment_rules(key, value):
    masks = {"gt": lambda a: a > 0, "all": lambda a: np.ones((2, 3), bool), "rows": lambda a: np.ones(2, bool)}
    n = np.zeros((2, 3))
    p = npc.zeros((2, 3))
    m = masks[key](n)
    try:
        n[m] = value
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            p[m] = value
        assert str(info.value) == str(e)
        return
    p[m] = value
    np.testing.assert_array_equal(np.asarray(p), n)


# ---------------------------------------------------------------- a[start:stop:step] (the fast slot)
class _Index:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v

    def __repr__(self):  # a stable test id (pytest-xdist workers must agree on them)
        return f"_Index({self.v})"


_BIG = 2 ** 70
BARE_SLICES = [slice(1, 5), slice(None), slice(None, None, -1), slice(-3, None), slice(None, -2), slice(8, 2, -2),
               slice(2, 2), slice(5, 1), slice(-100, 100), slice(100, -100, -1), slice(1, None, 3),
               slice(_BIG, None), slice(-_BIG, _BIG), slice(None, None, _BIG), slice(None, None, -_BIG),
               slice(2 ** 63 - 1, -2 ** 63), slice(None, None, -2 ** 63), slice(None, None, 0),
               slice(np.int64(2), np.uint8(7)), slice(True, 4), slice(_Index(1), _Index(-1)), slice(1.0, 3),
               slice("a", None), slice(None, None, np.int32(-3))]


@pytest.mark.parametrize("layout", ["c", "f", "strided", "reversed"])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (4, 3)])
@pytest.mark.parametrize("key", BARE_SLICES, ids=repr)
def test_bare_slice_matches_numpy(key, shape, layout):
    n, p = _make_pair(_values(shape, np.float64), layout)
    check_getitem(n, p, key)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bare_slice_every_dtype_and_base(dtype):
    n, p = _make_pair(_values((6,), dtype))
    check_getitem(n, p, slice(1, 5))
    v = p[1:5]
    owner = p if p.base is None else p.base  # NumPy collapses bases to the owner
    assert v.base is owner and v[::2].base is owner
    o = npc.array(p)
    assert o.base is None and o[1:5].base is o and o[1:5][::-1].base is o
    assert (v.flags.owndata, v[::-1].flags.c_contiguous) == (False, n[1:5][::-1].flags.c_contiguous)
    ro = npc.asarray(n.copy())
    ro.flags.writeable = False
    assert not ro[1:3].flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        ro[1:3][0] = 1


def test_slice_views_lifetime():
    import gc
    import weakref

    a = npc.arange(6.0)
    v = a[1:5]
    del a
    gc.collect()
    assert np.asarray(v).tolist() == [1.0, 2.0, 3.0, 4.0]  # the view keeps the memory alive
    dead = []
    r = weakref.ref(v, lambda _: dead.append(True))
    del v
    assert r() is None and dead == [True]

    def fails(x):
        y = x[1:3]  # freed while the exception below propagates
        raise KeyError(y.shape)

    with pytest.raises(KeyError) as e:
        fails(npc.arange(4.0))
    assert e.value.args == ((2,),)
