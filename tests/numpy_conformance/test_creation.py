"""Creation functions against NumPy: every native dtype and order, values, dtypes, layouts."""
import numpy as np
import pytest

import npc
from dtypes import NATIVE, assert_same, assert_ulp

SHAPES = [(), (0,), (1,), (7,), (3, 5), (2, 0, 3), (2, 3, 4)]
ORDERS = ["C", "F"]


def assert_layout(a, e):
    assert a.shape == e.shape and a.strides == e.strides, (a.shape, a.strides, e.shape, e.strides)
    assert a.flags.c_contiguous == e.flags.c_contiguous
    assert a.flags.f_contiguous == e.flags.f_contiguous


@pytest.mark.parametrize("dt", NATIVE, ids=str)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_zeros_ones_full_empty(dt, order, shape):
    for name in ("zeros", "ones"):
        a, e = getattr(npc, name)(shape, dt, order), getattr(np, name)(shape, dt, order)
        assert isinstance(a, npc.ndarray)
        assert_same(a, e)
        assert_layout(a, e)
    a, e = npc.empty(shape, dt, order), np.empty(shape, dt, order)
    assert a.dtype == e.dtype
    assert_layout(a, e)
    for fill in (True, 3, 2.5, -1, 1 + 2j):
        if isinstance(fill, complex) and dt.kind not in "c":
            continue
        if fill == -1 and dt.kind == "u":
            with pytest.raises(OverflowError):
                np.full(shape, fill, dt, order)
            with pytest.raises(OverflowError):
                npc.full(shape, fill, dt, order)
            continue
        assert_same(npc.full(shape, fill, dt, order), np.full(shape, fill, dt, order))


@pytest.mark.parametrize("fill", [True, 7, 2.5, 1j, np.float32(1.5), np.int8(-3)], ids=repr)
def test_full_default_dtype(fill):
    assert_same(npc.full((2, 2), fill), np.full((2, 2), fill))


@pytest.mark.parametrize("dt", [None] + NATIVE, ids=str)
@pytest.mark.parametrize("order", ["K", "C", "F", "A"])
def test_like_functions_keep_layout(dt, order):
    base = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    protos = [base, base.T, base.transpose(1, 0, 2), base[:, ::2], base[::-1], np.asfortranarray(base)]
    for p in protos:
        q = npc.asarray(p)
        for name in ("zeros_like", "ones_like", "empty_like"):
            a, e = getattr(npc, name)(q, dt, order), getattr(np, name)(p, dt, order)
            assert a.dtype == e.dtype
            assert_layout(a, e)
            if name != "empty_like":
                assert_same(a, e)
        a, e = npc.full_like(q, 3, dt, order), np.full_like(p, 3, dt, order)
        assert_same(a, e)
        assert_layout(a, e)


def test_like_with_shape():
    p = np.zeros((2, 3), order="F")
    assert_layout(npc.zeros_like(npc.asarray(p), shape=(4, 5)), np.zeros_like(p, shape=(4, 5)))
    assert_layout(npc.zeros_like(npc.asarray(p), shape=(4,)), np.zeros_like(p, shape=(4,)))


ARANGE_CASES = [
    (5,), (0,), (-3,), (2, 10), (10, 2), (0, 10, 3), (10, 0, -3), (0, 1, 0.1), (1.5, 7.2, 0.7),
    (-2.5, 2.5, 0.5), (0, 5, 2.5), (np.float32(0), np.float32(1), np.float32(0.1)), (np.int8(3),),
    (np.uint8(2), 9), (3, 10, 2), (1e-3, 1.0, 0.1), (0, 10, 3 + 0j), (2 ** 62, 2 ** 62 + 5),
    # Python ints only (the int64 fast path), at the ends of int64's range too.
    (9, 2, -2), (3, 3), (5, 0), (2 ** 63 - 3, 2 ** 63 - 1), (-(2 ** 63), -(2 ** 63) + 2), (True, 4),
]


@pytest.mark.parametrize("args", ARANGE_CASES, ids=repr)
def test_arange(args):
    assert_same(npc.arange(*args), np.arange(*args))


@pytest.mark.parametrize("dt", NATIVE[1:], ids=str)
def test_arange_dtype(dt):
    for args in [(10,), (2, 20, 3), (5, 0, -1)]:
        assert_same(npc.arange(*args, dtype=dt), np.arange(*args, dtype=dt))
    if dt.kind in "fc":
        assert_same(npc.arange(0.5, 3.3, 0.25, dtype=dt), np.arange(0.5, 3.3, 0.25, dtype=dt))


def test_arange_bool_and_errors():
    assert_same(npc.arange(2, dtype=bool), np.arange(2, dtype=bool))
    for lib in (np, npc):
        with pytest.raises(ZeroDivisionError):
            lib.arange(0, 10, 0)
        with pytest.raises(TypeError):
            lib.arange("a")


LINSPACE_CASES = [(0, 1, 5), (0, 1, 5, False), (-3.3, 7.1, 50), (2, 2, 4), (1, 0, 7), (0, 10, 1),
                  (0, 10, 0), (0, 1, 2, False), (1e-300, 1e300, 11), (0, 1, 1, False)]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning",
                            "ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("args", LINSPACE_CASES, ids=repr)
@pytest.mark.parametrize("dt", [None, np.float32, np.float16, np.int32, np.int64, np.complex128], ids=str)
def test_linspace_logspace(args, dt):
    assert_same(npc.linspace(*args, dtype=dt), np.linspace(*args, dtype=dt))
    if abs(args[1]) < 100:
        # logspace is power(base, linspace): a transcendental, held to the 8-ULP bound of
        # tests/numpy_conformance/ulp_tolerances (NumPy's SIMD pow and libm's differ in the last bit).
        for base in (10.0, 2.0):
            a, e = npc.logspace(*args, base=base, dtype=dt), np.logspace(*args, base=base, dtype=dt)
            if e.dtype.kind in "fc":
                assert_ulp(a, e, 8)
            else:
                assert_same(a, e)


def test_linspace_array_endpoints_and_retstep():
    a, sa = npc.linspace([0, 1], [2, 5], 4, retstep=True)
    e, se = np.linspace([0, 1], [2, 5], 4, retstep=True)
    assert_same(a, e)
    assert_same(sa, se)
    assert_same(npc.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4))
    with pytest.raises(ValueError):
        npc.linspace(0, 1, -1)


@pytest.mark.parametrize("dt", NATIVE, ids=str)
def test_eye_identity(dt):
    for args in [(3,), (3, 5), (5, 3), (4, 4, 1), (4, 4, -2), (3, 3, 5), (0,)]:
        assert_same(npc.eye(*args, dtype=dt), np.eye(*args, dtype=dt))
    assert_same(npc.identity(4, dtype=dt), np.identity(4, dtype=dt))
    assert_layout(npc.eye(3, 4, order="F"), np.eye(3, 4, order="F"))


NESTED = [[1, 2, 3], [[1, 2], [3, 4]], [1.5, 2], [True, False], [1, 2.0, 3j], 5, 2.5, [],
          [[]], [[1], [2]], [np.float32(1), 2.0], [np.int8(1), np.int8(2)], [2 ** 63], (1, 2),
          [[1, 2], (3, 4)], np.float16(3), [True, 2]]


@pytest.mark.parametrize("obj", NESTED, ids=repr)
def test_array_from_python(obj):
    assert_same(npc.array(obj), np.array(obj))
    assert isinstance(npc.array(obj), npc.ndarray)


@pytest.mark.parametrize("dt", NATIVE, ids=str)
def test_array_dtype_copy_ndmin_order(dt):
    src = np.arange(12).reshape(3, 4)
    assert_same(npc.array(src, dtype=dt), np.array(src, dtype=dt))
    assert_same(npc.array(src.tolist(), dtype=dt, ndmin=4), np.array(src.tolist(), dtype=dt, ndmin=4))
    a = npc.array(src, dtype=dt, order="F")
    assert a.flags.f_contiguous and not a.flags.c_contiguous


def test_asarray_is_zero_copy_for_numpy():
    src = np.arange(10.0)
    a = npc.asarray(src)
    src[3] = 42
    assert a[3] == 42 if hasattr(a, "__getitem__") else np.asarray(a)[3] == 42
    assert np.shares_memory(np.asarray(a), src)
    assert npc.asarray(a) is a
    assert npc.array(a, copy=False) is a
    assert npc.array(a) is not a
    b = npc.array(src, copy=False)
    assert np.shares_memory(np.asarray(b), src)
    with pytest.raises(ValueError):
        npc.array(a, dtype=np.int32, copy=False)


def test_noncontiguous_and_byteswapped_numpy_inputs():
    src = np.arange(20.0).reshape(4, 5)[::-1, ::2]
    assert_same(npc.asarray(src), src)
    # Byte-swapped and unaligned memory stays NumPy's (dtype, layout and writes preserved);
    # npc operations convert such operands on entry.
    be = np.arange(6, dtype=">i4").reshape(2, 3)
    a = npc.asarray(be)
    assert a is be and a.dtype == np.dtype(">i4")
    assert_same(npc.add(be, 1), np.add(be, 1))
    raw = np.zeros(8 * 5 + 1, np.uint8)[1:].view(np.float64)  # unaligned
    raw[:] = np.arange(5)
    u = npc.asarray(raw)
    u[0] = 7
    assert raw[0] == 7 and not u.flags.aligned
    assert_same(npc.multiply(raw, 2), np.multiply(raw, 2))
    assert npc.frombuffer(b"\x00\x01", dtype=">i2").dtype == np.dtype(">i2")


def test_ascontiguous_fortran():
    src = np.arange(12.0).reshape(3, 4).T
    a = npc.ascontiguousarray(src)
    assert a.flags.c_contiguous
    assert_same(a, np.ascontiguousarray(src))
    f = npc.asfortranarray(np.arange(12.0).reshape(3, 4))
    assert f.flags.f_contiguous
    assert_same(npc.ascontiguousarray(5.0), np.ascontiguousarray(5.0))


def test_frombuffer():
    buf = bytes(range(16))
    for dt in (np.uint8, np.int16, np.float32, np.float64, np.complex64):
        assert_same(npc.frombuffer(buf, dtype=dt), np.frombuffer(buf, dtype=dt))
    assert not npc.frombuffer(buf, dtype=np.uint8).flags.writeable
    assert_same(npc.frombuffer(buf, dtype=np.int32, count=2, offset=4),
                np.frombuffer(buf, dtype=np.int32, count=2, offset=4))


def test_non_native_dtypes_stay_numpy():
    s = npc.array(["a", "bc"])
    assert type(s) is np.ndarray and s.dtype == np.dtype("<U2")
    d = npc.array(["2020-01-01"], dtype="datetime64[D]")
    assert type(d) is np.ndarray
    assert type(npc.zeros(3, dtype="U3")) is np.ndarray
    assert type(npc.array([1, "a"], dtype=object)) is np.ndarray


# (Out-of-range float -> int casts are platform-defined: no such fill for int8.)
@pytest.mark.parametrize("fill, dt", [(f, d) for f in [1j, 2 - 1j, np.complex64(1j), np.array(1j)]
                                      for d in (np.float16, np.int8, np.complex64)] +
                         [(complex(1e300, 1), np.float16), (complex(1e300, 1), np.complex64)])
def test_full_and_full_like_complex_fill_warnings(fill, dt):
    # copyto(casting='unsafe') in NumPy: ComplexWarning for a real dtype, after any cast warning.
    import warnings

    def run(xp, fn):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = fn(xp)
        return np.asarray(r), [(m.category, str(m.message)) for m in w]

    for fn in (lambda xp: xp.full_like(xp.ones(2, dt), fill), lambda xp: xp.full(2, fill, dtype=dt)):
        (g, gw), (w, ww) = run(npc, fn), run(np, fn)
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype and gw == ww
