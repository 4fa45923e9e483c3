"""Eager elementwise loops on strided operands: complex products of strided views (vector loop
on gathered elements), views whose rows coalesce ((N, 1) columns, rows of contiguous blocks),
compared bit for bit with NumPy, special values and floating-point warnings included."""
import warnings

import numpy as np
import pytest

import npc

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, 5e-324]


def _complex(rng, n, dtype=np.complex128, special=False):
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    if special:
        k = min(n, 3 * len(SPECIAL))
        idx = rng.choice(n, size=k, replace=False)
        re = rng.choice(SPECIAL, size=k)
        im = rng.choice(SPECIAL + [1.0], size=k)
        with np.errstate(over="ignore"):
            z.real[idx] = re
            z.imag[idx] = im
    return z


def _same(got, exp):
    got = np.asarray(got)
    assert got.dtype == exp.dtype and got.shape == exp.shape
    # Bit for bit, NaN payloads aside (NumPy's own NaN choice is checked where it is defined).
    assert np.array_equal(got.view(np.float64 if exp.dtype == np.complex128 else np.float32).reshape(-1),
                          exp.view(np.float64 if exp.dtype == np.complex128 else np.float32).reshape(-1),
                          equal_nan=True)


def _run(fn, *arrays):
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        exp = fn(*arrays)
    with warnings.catch_warnings(record=True) as wg:
        warnings.simplefilter("always")
        got = fn(*[npc.asarray(a) for a in arrays])
    assert [str(w.message) for w in wg] == [str(w.message) for w in we]
    return got, exp


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 257, 1000])
@pytest.mark.parametrize("steps", [(2, 1), (1, 3), (3, 2), (-1, 1), (2, -2)])
def test_strided_complex_product(dtype, special, n, steps):
    rng = np.random.default_rng(n)
    a = _complex(rng, n * abs(steps[0]), dtype, special)[::steps[0]]
    b = _complex(rng, n * abs(steps[1]), dtype, special)[::steps[1]]
    got, exp = _run(lambda x, y: x * y, a, b)
    _same(got, exp)


@pytest.mark.parametrize("n", [4, 9, 100])
def test_strided_complex_product_with_scalar(n):
    rng = np.random.default_rng(0)
    a = _complex(rng, 2 * n, special=True)[::2]
    got, exp = _run(lambda x: x * (0.5 - 2j), a)
    _same(got, exp)
    got, exp = _run(lambda x: np.complex128(1 + 1j) * x, a)
    _same(got, exp)


@pytest.mark.parametrize("n", [6, 64, 301])
def test_strided_complex_product_in_place(n):
    """out= the strided input itself (element for element), and out= a strided view of
    another buffer."""
    rng = np.random.default_rng(1)
    base, other = _complex(rng, 3 * n, special=True), _complex(rng, 3 * n)
    e, eo = base.copy(), other.copy()
    np.multiply(e[::2][:n], eo[::3][:n], out=e[::2][:n])
    np.multiply(e[1::2][:n], e[::3][:n], out=eo[::2][:n])
    g, go = npc.asarray(base.copy()), npc.asarray(other.copy())
    npc.multiply(g[::2][:n], go[::3][:n], out=g[::2][:n])
    npc.multiply(g[1::2][:n], g[::3][:n], out=go[::2][:n])
    _same(g, e)
    _same(go, eo)


@pytest.mark.parametrize("shape", [(8192, 1), (7, 1), (1, 9), (5, 1, 3), (4, 3, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128])
def test_column_views_coalesce(shape, dtype):
    rng = np.random.default_rng(2)
    big = (rng.standard_normal(shape[:-1] + (2 * shape[-1] + 1,)) * 100).astype(dtype)
    odd = big[..., 1::2][..., :shape[-1]] if shape[-1] > 1 else big[..., 1:2]
    tw = (rng.standard_normal(shape) * 10).astype(dtype)
    for fn in (lambda x, y: x * y, lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x < y):
        got, exp = _run(fn, tw, odd)
        got = np.asarray(got)
        assert got.dtype == exp.dtype and got.shape == exp.shape
        np.testing.assert_array_equal(got, exp)


def test_rows_of_blocks_coalesce():
    """A view of contiguous rows beside a C-contiguous array, and a 3-D grid view."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((64, 8))
    got, exp = _run(lambda x: x[:, :4] * 2.0 + x[:, 4:], X)
    np.testing.assert_array_equal(np.asarray(got), exp)
    C = rng.standard_normal((6, 7, 8))
    got, exp = _run(lambda c: c[1:-1, 1:-1, 1:-1] - 2.0 * c[2:, 1:-1, 1:-1], C)
    np.testing.assert_array_equal(np.asarray(got), exp)
    got, exp = _run(lambda c: c[:, :, :1] / c[:, :1, :1], C)
    np.testing.assert_array_equal(np.asarray(got), exp)


def test_overflow_warning_from_column_view():
    a = np.full((50, 2), 1e308)
    got, exp = _run(lambda x: x[:, 1:] * x[:, :1], a)
    np.testing.assert_array_equal(np.asarray(got), exp)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("n", [1, 3, 4, 5, 7, 8, 9, 63, 1001])
@pytest.mark.parametrize("mode", ["arrays", "scalar right", "scalar left"])
def test_contiguous_complex_product(dtype, n, mode):
    """The vector loops (AVX-512 four elements per vector, AVX2 tails), special values too."""
    rng = np.random.default_rng(n)
    a, b = _complex(rng, n, dtype, special=True), _complex(rng, n, dtype, special=True)
    if mode == "scalar right":
        got, exp = _run(lambda x: x * dtype(0.25 - 3j), a)
    elif mode == "scalar left":
        got, exp = _run(lambda x: dtype(np.inf + 1j) * x, a)
    else:
        got, exp = _run(lambda x, y: x * y, a, b)
    _same(got, exp)


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.complex128, np.float32, np.int8])
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 64, 65, 1000, 62500])
@pytest.mark.parametrize("density", [0.0, 0.05, 0.5, 0.97, 1.0])
def test_mask_select(dtype, n, density):
    rng = np.random.default_rng(n)
    a = (rng.standard_normal(n) * 100).astype(dtype) if dtype != np.complex128 else _complex(rng, n)
    m = rng.random(n) < density
    got = npc.asarray(a)[npc.asarray(m)]
    exp = a[m]
    assert np.asarray(got).dtype == exp.dtype
    np.testing.assert_array_equal(np.asarray(got), exp)
    # A mask over the leading axis of rows of 8 and 16 bytes.
    a2 = np.stack([a, a[::-1]], axis=1)
    np.testing.assert_array_equal(np.asarray(npc.asarray(a2)[npc.asarray(m)]), a2[m])
    # Mask bytes other than 0 and 1 (a bool view of uint8 data) are true.
    raw = (rng.integers(0, 3, n) * 100).astype(np.uint8)
    mv = raw.view(np.bool_)
    np.testing.assert_array_equal(np.asarray(npc.asarray(a)[npc.asarray(mv)]), a[mv])


_VIEW_KEYS = [(slice(1, -1), 3), (3, slice(1, -1)), (slice(None, None, -2), slice(1, 4)), (slice(2, 5),),
              (slice(1, -1), slice(None, None, -1)), (Ellipsis, 0)]


def _assign(a, key, value):
    """`a[key] = value`: the exception type raised (or None) and the warnings shown."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            a[key] = value
            err = None
        except Exception as exc:  # noqa: BLE001
            err = type(exc)
    return err, w


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128, np.float32, np.bool_, np.int8])
@pytest.mark.parametrize("key", _VIEW_KEYS)
@pytest.mark.parametrize("value", [1.0, 7, -3, 2.5 + 1j, np.float64(np.nan), np.int64(5), np.float32(1e30), True])
def test_view_assign_scalar(dtype, key, value):
    """a[view] = number: the direct fill where no cast is involved, NumPy's cast otherwise."""
    base = (np.arange(48) * 3 - 20).reshape(6, 8).astype(dtype)
    e = base.copy()
    g = npc.asarray(base.copy())
    err_e, we = _assign(e, key, value)
    err_g, wg = _assign(g, key, value)
    assert err_g == err_e
    assert [str(w.message) for w in wg] == [str(w.message) for w in we]
    np.testing.assert_array_equal(np.asarray(g), e)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128, np.float32, np.bool_])
@pytest.mark.parametrize("key", _VIEW_KEYS)
def test_view_assign_array(dtype, key):
    rng = np.random.default_rng(4)
    base = (rng.standard_normal((6, 8)) * 10).astype(dtype)
    shape = base[key].shape
    for vdt in (dtype, np.float64, np.int32):
        val = (rng.standard_normal(shape) * 10).astype(vdt)
        e = base.copy()
        g = npc.asarray(base.copy())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e[key] = val
            g[key] = npc.asarray(val)
        np.testing.assert_array_equal(np.asarray(g), e)
        # A strided value (every other column of a wider array).
        wide = np.repeat(val[..., None], 2, axis=-1).reshape(shape[:-1] + (2 * shape[-1],)) if shape else val
        sv = wide[..., ::2] if shape else wide
        e2, g2 = base.copy(), npc.asarray(base.copy())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e2[key] = sv
            g2[key] = npc.asarray(wide)[..., ::2] if shape else npc.asarray(sv)
        np.testing.assert_array_equal(np.asarray(g2), e2)


def test_view_assign_overlapping_value():
    """A value that shares the array's memory keeps the general path's overlap order."""
    for key_dst, key_src in [((slice(1, None),), (slice(None, -1),)), ((slice(None, -1),), (slice(1, None),)),
                             ((slice(1, -1), 2), (slice(2, None), 2)), ((slice(None, None, -1),), (slice(None),))]:
        base = np.arange(20.0).reshape(5, 4) if len(key_dst) == 2 else np.arange(20.0)
        e = base.copy()
        e[key_dst] = e[key_src]
        g = npc.asarray(base.copy())
        g[key_dst] = g[key_src]
        np.testing.assert_array_equal(np.asarray(g), e)
    # Two npc arrays over one NumPy buffer: different storages, the same memory.
    buf = np.arange(12.0)
    a, b = npc.asarray(buf), npc.asarray(buf)
    e = np.arange(12.0)
    e[1:] = e[:-1]
    a[1:] = b[:-1]
    np.testing.assert_array_equal(buf, e)


def test_view_assign_bool_bytes():
    """Bool values whose bytes are not 0/1 are stored as True, as NumPy stores them."""
    raw = np.array([0, 2, 0, 255, 1, 7], dtype=np.uint8).view(np.bool_)
    e = np.zeros((2, 6), dtype=np.bool_)
    e[1, :] = raw
    g = npc.zeros((2, 6), dtype=npc.bool_)
    g[1, :] = npc.asarray(raw)
    np.testing.assert_array_equal(np.asarray(g).view(np.uint8), e.view(np.uint8))


@pytest.mark.parametrize("n", [0, 5, 8, 13, 64, 1000, 200_003])
@pytest.mark.parametrize("density", [0.0, 0.001, 0.3, 1.0])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int8, np.complex128])
def test_mask_assign_scalar(n, density, dtype):
    rng = np.random.default_rng(n)
    a = (rng.standard_normal(n) * 10).astype(dtype)
    m = rng.random(n) < density
    raw = (m * rng.integers(1, 255, n)).astype(np.uint8).view(np.bool_)  # true bytes other than 1
    for mask in (m, raw):
        e = a.copy()
        e[mask] = 3
        g = npc.asarray(a.copy())
        g[npc.asarray(mask)] = 3
        np.testing.assert_array_equal(np.asarray(g), e)


@pytest.mark.parametrize("m", [10, 300_000])
def test_large_gather_serial(m):
    rng = np.random.default_rng(m)
    x = rng.standard_normal(5000)
    idx = rng.integers(-5000, 5000, m)
    np.testing.assert_array_equal(np.asarray(npc.asarray(x)[npc.asarray(idx)]), x[idx])
    bad = idx.copy()
    bad[m // 2] = 5000
    with pytest.raises(IndexError) as ei:
        npc.asarray(x)[npc.asarray(bad)]
    with pytest.raises(IndexError) as en:
        x[bad]
    assert str(ei.value) == str(en.value)
