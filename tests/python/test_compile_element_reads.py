"""Element reads of traced arrays (Note [traced element reads in C++] in
python/npc/csrc/bind_indexing.cpp, Note [traced scalar elements] in compiler/_capture.py):
`a[i, j]` with int keys is a NumPy scalar's value (a copy), and inside `a[i, j] op= v` a
read-modify-write with NumPy's scalar semantics; compiled and replayed, values equal NumPy's."""
import numpy as np
import pytest

import npc

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_, np.complex128, np.float16]


def _arr(dt, shape=(4, 5), seed=0):
    r = np.random.default_rng(seed)
    if np.dtype(dt).kind == "b":
        return r.random(shape) < 0.5
    if np.dtype(dt).kind in "iu":
        return r.integers(0, 50, shape).astype(dt)
    v = r.random(shape) * 10
    return (v + 1j * r.random(shape) if np.dtype(dt).kind == "c" else v).astype(dt)


def reads(a):
    x = a[1, 2]
    y = a[-1, -2]
    a = a.copy()
    a[1, 2] = a[0, 0]  # x keeps its value: a read is a copy
    return x, y, a[1, 2], a


def helper(a, i):
    return a[i, 0] + a[i, 1]


def nested(a):
    return [helper(a, i) for i in range(a.shape[0])]


def rmw(a):
    a = a.copy()
    for i in range(a.shape[0]):
        a[i, 0] += a[i, 1]
        a[i, 1] *= 2
        a[i, 2] -= a[i, 0]
    return a


def rmw_div_int(a):
    a = a.copy()
    a[1] /= 2  # an int element divided as NumPy scalars, stored back with setitem's cast
    a[2] //= 3
    a[3] **= 2
    return a


def keys(a):
    return a[np.int64(1), 2], a[1][2], a[(1, 2)], a[True].shape


def _assert_same(got, want):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w)
        return
    if isinstance(want, np.ndarray):
        g = np.asarray(got)
        assert g.dtype == want.dtype and g.shape == want.shape
        np.testing.assert_array_equal(g, want)
        return
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (float, np.floating, complex, np.complexfloating)) and np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == want


@pytest.mark.parametrize("fn", [reads, nested, keys])
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_element_reads_equal_numpy(fn, dt, backend):
    a = _arr(dt)
    want = fn(a)
    f = npc.compile(fn, backend=backend)
    _assert_same(f(a), want)
    _assert_same(f(a), want)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.int16, np.complex64])
@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_augmented_element_assignment_equals_numpy(dt, backend):
    a = _arr(dt, (6, 4), 1)
    f = npc.compile(rmw, backend=backend)
    for _ in range(2):
        _assert_same(f(a), rmw(a))


@pytest.mark.parametrize("dt", [np.int64, np.int32, np.uint8])
def test_augmented_int_element_uses_scalar_rules(dt):
    a = np.arange(1, 6, dtype=dt)
    _assert_same(npc.compile(rmw_div_int)(a), rmw_div_int(a))


def test_out_of_bounds_element_read_raises_numpy_error():
    def f(a):
        return a[1, 7]
    a = np.zeros((3, 4))
    with pytest.raises(IndexError) as want:
        f(a)
    with pytest.raises(IndexError) as got:
        npc.compile(f)(a)
    assert str(got.value) == str(want.value)


def test_element_reads_of_a_strided_view():
    def f(a):
        v = a[::-2, 1::2]
        return v[0, 0], v[1, 1], v[-1, -1]
    a = _arr(np.float64, (7, 6))
    _assert_same(npc.compile(f)(a), f(a))


def _scalar_kinds(x, y):
    return [(isinstance(s, np.generic), isinstance(s, float), np.isscalar(s)) for s in (x[0], x @ y, x.sum())]


def _scalar_types(x, y):
    return [type(s).__name__ for s in (x[0], x @ y, x.sum())]


def test_classes_of_scalar_results_while_tracing():
    # Note [classes of traced values] in python/npc/_array.py.
    x, y = np.arange(3.0), np.ones(3)
    assert npc.compile(_scalar_kinds)(x, y) == _scalar_kinds(x, y)


@pytest.mark.xfail(strict=True, reason="while tracing, a scalar result is a 0-d npc array marked to act as a "
                                       "NumPy scalar: isinstance sees NumPy's class, type() the array's "
                                       "(docs/compile.md, Semantics that differ)")
def test_type_of_scalar_results_while_tracing():
    x, y = np.arange(3.0), np.ones(3)
    assert npc.compile(_scalar_types)(x, y) == _scalar_types(x, y)


def scalar_inplace(a):
    x = a[1]
    x /= 2  # a NumPy scalar: x / 2, an int element becomes a float64 0.5
    s = a.sum()
    t = s
    s += 1  # t keeps its value: scalars are immutable
    y = a[2]
    y **= 2
    y -= 1
    z = a[0]
    z //= 3
    m = a.max()
    m *= 1.5
    return x, s, t, y, z, m


@pytest.mark.parametrize("dt", [np.int64, np.uint8, np.int32, np.float64, np.float32, np.float16, np.bool_])
@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_inplace_operators_of_scalar_results_equal_numpy(dt, backend):
    # Note [in-place operators of scalar results] in python/npc/csrc/bind_ops.cpp; every
    # operator and more operands in test_compile_scalar_inplace.py.
    a = _arr(dt, (5,), 2)
    with np.errstate(all="ignore"):
        want = scalar_inplace(a)
        f = npc.compile(scalar_inplace, backend=backend)
        _assert_same(f(a), want)
        _assert_same(f(a), want)


def inplace_on_arrays(a):
    b = a.copy()
    b /= 2  # arrays keep the array rules: a float copy divided in place
    c = a[1:3].copy()
    c += 1
    d = a.sum(keepdims=True)  # a 1-element array, not a scalar
    d *= 2
    return b, c, d


def test_inplace_operators_of_arrays_are_unchanged():
    a = np.arange(5.0)
    _assert_same(npc.compile(inplace_on_arrays)(a), inplace_on_arrays(a))
    ai = np.arange(5)
    with pytest.raises(TypeError) as want:  # NumPy's casting error of `b /= 2` on an int array
        inplace_on_arrays(ai)
    with pytest.raises(TypeError) as got:
        npc.compile(inplace_on_arrays)(ai)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)
