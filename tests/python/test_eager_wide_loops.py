"""The multiversioned (AVX2/AVX-512) eager loops of float arithmetic, x ** 2 as a product,
scalar fills of views and the truth-value loops give NumPy's values, dtypes and warnings:
contiguous and strided views, negative strides, scalar operands, 0-d and empty arrays, and
outputs that overlap an input."""
import warnings

import numpy as np
import pytest

import npc
from _ulps import assert_close


def same(got, exp):
    if isinstance(exp, np.ndarray):
        assert isinstance(got, npc.ndarray), type(got)
        got = np.asarray(got)
        assert got.shape == exp.shape
    else:
        assert type(got) is type(exp), (type(got), type(exp))
    assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    np.testing.assert_array_equal(got, exp)


def values(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 10).astype(dtype)
    if n >= 8:
        x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e30, 3.0]
    return x


def caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    return r, sorted(str(x.message) for x in w)


BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.minimum]
UNARY = [np.square, np.negative, np.absolute, np.sqrt]
# Lengths around the vector widths (1, 2, 4, 8, 16 lanes) and one long enough for threads.
LENGTHS = [0, 1, 3, 7, 8, 9, 15, 16, 17, 33, 1000, 300_001]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_binary_contiguous_and_scalar(op, n, dtype):
    x, y = values(n, dtype, 1), values(n, dtype, 2)[::-1].copy()
    a, b = npc.asarray(x), npc.asarray(y)
    for got, exp in [(lambda: op(a, b), lambda: op(x, y)),
                     (lambda: op(a, 0.5), lambda: op(x, 0.5)),
                     (lambda: op(-2.5, b), lambda: op(-2.5, y)),
                     (lambda: op(a, np.float32(0.0)), lambda: op(x, np.float32(0.0))),
                     (lambda: op(a[1:], a[:-1]), lambda: op(x[1:], x[:-1]))]:
        g, gw = caught(got)
        e, ew = caught(exp)
        same(g, e)
        assert gw == ew


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_binary_views_strides_and_0d(op, dtype):
    x = values(4099, dtype, 3)
    a = npc.asarray(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(op(a[::-1], a), op(x[::-1], x))
        same(op(a[:4098:3], a[1::3]), op(x[:4098:3], x[1::3]))
        same(op(a[:-2], a[2:]), op(x[:-2], x[2:]))
        m, xm = a[:4000].reshape(40, 100), x[:4000].reshape(40, 100)
        same(op(m[1:-1, 1:-1], m[2:, :-2]), op(xm[1:-1, 1:-1], xm[2:, :-2]))
        same(op(m[:, 5, None], m[None, 7, :]), op(xm[:, 5, None], xm[None, 7, :]))
        same(op(a[7:8].reshape(()), a[9:10].reshape(())), op(x[7:8].reshape(()), x[9:10].reshape(())))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_binary_overlapping_outputs(op, dtype):
    # An output that is an input shifted by one element: NumPy's element-by-element order.
    for shift in (1, -1):
        x = values(1001, dtype, 4)
        a = npc.array(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if shift == 1:
                op(x[:-1], x[1:], out=x[1:])
                op(a[:-1], a[1:], out=a[1:])
            else:
                op(x[1:], x[:-1], out=x[:-1])
                op(a[1:], a[:-1], out=a[:-1])
        same(a, x)
        # In place on itself.
        op(x, 2.0, out=x)
        op(a, 2.0, out=a)
        same(a, x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("op", UNARY, ids=lambda f: f.__name__)
def test_unary(op, n, dtype):
    x = values(n, dtype, 5)
    a = npc.asarray(x)
    for got, exp in [(lambda: op(a), lambda: op(x)), (lambda: op(a[::-1]), lambda: op(x[::-1])),
                     (lambda: op(a[::2]), lambda: op(x[::2]))]:
        g, gw = caught(got)
        e, ew = caught(exp)
        same(g, e)
        assert gw == ew
    if n > 1:  # overlapping output
        y = x.copy()
        b = npc.array(y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op(y[:-1], out=y[1:])
            op(b[:-1], out=b[1:])
        same(b, y)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "complex128", "bool"])
def test_power_two(dtype):
    x = values(1003, "float64", 6)
    if dtype == "bool":
        x = x > 0
    elif dtype != "complex128":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = x.astype(dtype)
    else:
        x = x + 1j * np.nan_to_num(x[::-1])
    if dtype.startswith("float"):
        x[10] = np.finfo(dtype).max  # overflows
    a = npc.asarray(x)
    for got, exp in [(lambda: a ** 2, lambda: x ** 2), (lambda: np.power(a, 2), lambda: np.power(x, 2)),
                     (lambda: np.power(a, 2.0), lambda: np.power(x, 2.0)),
                     (lambda: np.power(a[::-2], np.array(2.0)), lambda: np.power(x[::-2], np.array(2.0))),
                     (lambda: a[:0] ** 2.0, lambda: x[:0] ** 2.0),
                     (lambda: np.power(a[3:4].reshape(()), 2.0), lambda: np.power(x[3:4].reshape(()), 2.0))]:
        g, gw = caught(got)
        e, ew = caught(exp)
        same(g, e)
        assert gw == ew


def test_power_of_arrays_float64():
    # An array exponent is pow's business (not the x * x of a scalar 2): NumPy's float64 pow
    # is its AVX-512 routine on CPUs that have it and the C library's elsewhere, so npc's (the
    # C library's) is within power's declared ULP bound, not always bit for bit.
    x = values(1003, "float64", 6)
    e = np.full(x.shape, 2.0)
    got = np.power(npc.asarray(x), npc.asarray(e))
    assert isinstance(got, npc.ndarray)
    assert_close("power", np.power(x, e), got)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("value", [0, 1, -3, 2.75, 1e300, np.nan, True, 1 + 2j, np.float32(1.5), np.int8(-2)],
                         ids=repr)
def test_scalar_fills(dtype, value):
    x = (np.arange(60) % 3 == 0 if dtype == "bool" else np.arange(60)).astype(dtype).reshape(6, 10)
    a = npc.array(x)
    for key in [(slice(1, -1),), (slice(None), slice(2, -2)), (slice(None, None, -1), slice(None, None, 3)),
                (0,), (slice(None), -1), (slice(2, 2),), (Ellipsis,)]:
        def put(arr):
            arr[key] = value

        e_err = g_err = None
        try:
            _, ew = caught(lambda: put(x))
        except Exception as exc:  # noqa: BLE001
            e_err = type(exc)
        try:
            _, gw = caught(lambda: put(a))
        except Exception as exc:  # noqa: BLE001
            g_err = type(exc)
        assert g_err == e_err
        if e_err is None:
            assert gw == ew
        same(a, x)
    for arr in (x, a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                arr.fill(value)
            except Exception:  # noqa: BLE001
                pass
    same(a, x)


def test_fill_from_bool_bytes():
    # A bool value viewing another byte is True; a broadcast copy keeps NumPy's values.
    raw = np.array([0, 2, 1], np.uint8).view(np.bool_)
    for dtype in ("bool", "float64", "int32"):
        x = np.zeros((3, 5), dtype)
        a = npc.array(x)
        x[...] = raw[1]
        a[...] = npc.asarray(raw)[1]
        same(a, x)
        np.copyto(x, raw[1:2])
        npc.copyto(a, npc.asarray(raw)[1:2])
        same(a, x)


@pytest.mark.parametrize("op", [np.logical_and, np.logical_or, np.logical_xor, np.bitwise_and, np.bitwise_or,
                                np.bitwise_xor], ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [0, 1, 31, 32, 33, 64, 65, 1000, 200_003])
def test_truth_value_loops(op, n):
    rng = np.random.default_rng(n)
    x, y = rng.random(n) < 0.5, rng.random(n) < 0.3
    a, b = npc.asarray(x), npc.asarray(y)
    same(op(a, b), op(x, y))
    same(op(a[::-1], b), op(x[::-1], y))
    same(op(a[1:], a[:-1]), op(x[1:], x[:-1]))
    # Bytes other than 0 and 1 are True.
    raw = rng.integers(0, 4, n).astype(np.uint8)
    xr = raw.view(np.bool_)
    same(op(npc.asarray(raw).view(np.bool_), b), op(xr, y))
    # Overlapping outputs run in order.
    xx, aa = x.copy(), npc.array(x)
    op(xx[:-1], y[1:], out=xx[1:])
    op(aa[:-1], b[1:], out=aa[1:])
    same(aa, xx)
    same(a & b, x & y)
    same((0.3 <= npc.asarray(rng.random(n) * 0 + 0.4)) & (b | a), (0.3 <= rng.random(n) * 0 + 0.4) & (y | x))


@pytest.mark.parametrize("dtype", ["int8", "float32", "float64", "complex128"])
@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 129, 4099, 70_001])
def test_sparse_mask_selection(dtype, n):
    # Rings and bands: long runs of zero bytes skipped 64 at a time, bytes other than 0 and 1.
    rng = np.random.default_rng(n)
    x = (rng.random(n) * 100).astype(dtype)
    for density in (0.0, 0.001, 0.05, 1.0):
        m = rng.random(n) < density
        if n > 300:
            m[100:300] = False
            m[130] = m[191] = m[192] = True
        same(npc.asarray(x)[npc.asarray(m)], x[m])
        raw = (rng.integers(1, 4, n) * m).astype(np.uint8).view(np.bool_)
        same(npc.asarray(x)[npc.asarray(raw)], x[raw])
    img = x[: (n // 64) * 64].reshape(-1, 64) if n >= 64 else x.reshape(1, -1)
    yy, xx = np.indices(img.shape)
    r = np.hypot(yy - img.shape[0] / 2, xx - 32.0)
    ring = (5 <= r) & (r < 7)
    same(npc.asarray(img)[npc.asarray(ring)], img[ring])


VIEW_KEYS = [(slice(1, -1), slice(2, None)), (slice(None, None, 2), slice(1, None, 3)), (slice(0, 1), slice(None)),
             (slice(None), slice(0, 1)), (slice(2, 2), slice(None)), (slice(None), slice(3, 3))]


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint32", "float16", "float32", "float64"])
@pytest.mark.parametrize("key", VIEW_KEYS, ids=str)
def test_strided_views(dtype, key):
    # C-ordered views of one shape run the fast path row by row: NumPy's values, dtype,
    # warnings and result layout.
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((9, 12)) * 50).astype(dtype)
    y = (rng.standard_normal((9, 12)) * 50).astype(dtype)
    if dtype.startswith("float"):
        x[1, 3] = np.inf
        y[2, 5] = 0
    a, b = npc.asarray(x), npc.asarray(y)
    k2 = tuple(slice(s.start, s.stop, s.step) for s in key)
    shifted = (slice(None, x[key].shape[0]), slice(None, x[key].shape[1]))
    pairs = [(lambda m, p, q: p[key] + q[k2]), (lambda m, p, q: m.multiply(p[key], 3)),
             (lambda m, p, q: p[key] < q[k2]), (lambda m, p, q: m.maximum(p[key], q[shifted])),
             (lambda m, p, q: p[key] & q[k2] if dtype in ("bool", "int8", "int64", "uint32") else p[key] - q[k2]),
             (lambda m, p, q: m.true_divide(p[key], q[k2])),
             (lambda m, p, q: m.logical_not(p[key]) if dtype == "bool" else m.negative(p[key]))]
    for f in pairs:
        g, gw = caught(lambda: f(npc, a, b))
        e, ew = caught(lambda: f(np, x, y))
        same(g, e)
        assert gw == ew
        assert np.asarray(g).strides == e.strides


def test_strided_views_3d_and_layouts():
    rng = np.random.default_rng(8)
    x = rng.random((7, 6, 5))
    a = npc.asarray(x)
    for f in [lambda m, p: p[2:, 1:-1, 1:-1] - 2.0 * p[1:-1, 1:-1, 1:-1] + p[:-2, 1:-1, 1:-1],
              lambda m, p: 0.125 * (p[1:-1, 2:, 1:-1] + p[1:-1, :-2, 1:-1]),
              lambda m, p: p[:, None, 1:3, ::2] * p[:, None, 2:4, ::2],
              lambda m, p: p.transpose(1, 0, 2)[1:] + p.transpose(1, 0, 2)[:-1],  # not C-ordered
              lambda m, p: p[::-1, 1:] + p[::-1, :-1],  # negative strides
              lambda m, p: m.sqrt(p[1:, ::2, 1:]),
              lambda m, p: p[1:4, 2, 1:] + p[1:4, 3, 1:]]:
        g, e = f(npc, a), f(np, x)
        same(g, e)
        assert np.asarray(g).strides == e.strides
    # A bool view holding other bytes reads them as True.
    raw = rng.integers(0, 3, (6, 8)).astype(np.uint8)
    xb = raw.view(np.bool_)[1:, 2:]
    ab = npc.asarray(raw).view(np.bool_)[1:, 2:]
    same(np.logical_xor(ab, ab[::-1]), np.logical_xor(xb, xb[::-1]))
    same(np.logical_and(ab, ab), np.logical_and(xb, xb))
    same(ab == npc.asarray(xb.copy()), xb == xb.copy())
