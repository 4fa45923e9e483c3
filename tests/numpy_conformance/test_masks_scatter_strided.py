"""Eager paths of masked loops (Mandelbrot-style shrinking arrays, FFT butterflies): boolean
mask selection of every element size, `a[idx] = value` with one index array, `~mask`, strided
complex arithmetic on column views, and the block cache's size classes, against NumPy."""
import numpy as np
import pytest

import npc
from dtypes import NATIVE, assert_same


def values(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(dt)
    if dt.kind in "iu":
        return rng.integers(0, 100, n).astype(dt)
    x = rng.standard_normal(n) * 10
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(n)
    return x.astype(dt)


MASKS = {
    "random": lambda n: np.random.default_rng(3).random(n) < 0.7,
    "none": lambda n: np.zeros(n, bool),
    "all": lambda n: np.ones(n, bool),
    "sparse": lambda n: np.arange(n) % 13 == 5,
}


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("n", [1, 7, 8, 9, 67, 1000])
@pytest.mark.parametrize("dtype", NATIVE, ids=lambda d: np.dtype(d).name)
def test_mask_select_every_element_size(dtype, n, mask):
    a, m = values(n, dtype), MASKS[mask](n)
    assert_same(npc.asarray(a)[npc.asarray(m)], a[m])


@pytest.mark.parametrize("dtype", ["complex128", "complex64", "float64", "int16"])
def test_mask_select_rows_and_2d_masks(dtype):
    a = values(60, dtype).reshape(6, 10)
    rows = np.array([True, False, True, True, False, True])
    assert_same(npc.asarray(a)[npc.asarray(rows)], a[rows])
    m2 = MASKS["random"](60).reshape(6, 10)
    assert_same(npc.asarray(a)[npc.asarray(m2)], a[m2])
    # A mask viewing bytes other than 0 and 1 selects where they are nonzero.
    raw = np.array([0, 2, 1, 255, 0, 7] * 10, np.uint8).reshape(6, 10)
    assert_same(npc.asarray(a)[npc.asarray(raw).view(bool)], a[raw.view(bool)])


def test_shrinking_masked_loop_matches_numpy():
    # Mandelbrot's escape loop: the arrays shrink by a mask every step.
    def escape(np_, c, maxiter=30):
        counts = np_.zeros(c.shape, np_.int64)
        z = np_.zeros_like(c)
        idx = np_.arange(c.shape[0])
        cc = c.copy()
        for it in range(maxiter):
            z = z * z + cc
            alive = np_.abs(z) <= 2.0
            counts[idx[~alive]] = it
            z, cc, idx = z[alive], cc[alive], idx[alive]
        counts[idx] = maxiter
        return counts, z
    xs, ys = np.linspace(-2.0, 0.6, 120), np.linspace(-1.2, 1.2, 110)
    c = (xs[None, :] + 1j * ys[:, None]).ravel()
    ref = escape(np, c)
    got = escape(npc, npc.asarray(c))
    assert_same(got[0], ref[0])
    assert_same(got[1], ref[1])


@pytest.mark.parametrize("dtype", NATIVE, ids=lambda d: np.dtype(d).name)
def test_scatter_one_index_array(dtype):
    base = values(50, dtype, 1)
    idx = np.array([3, -1, 7, 3, 0, -50, 49])  # negative and repeated: the last value wins
    vals = values(idx.size, dtype, 2)
    for key in (idx, idx.reshape(7, 1), idx[::2], np.array([], np.int64)):
        for v in (vals[0], vals[:key.size].reshape(key.shape)):
            a, A = base.copy(), npc.asarray(base.copy())
            a[key] = v
            A[npc.asarray(key)] = npc.asarray(v) if isinstance(v, np.ndarray) else v
            assert_same(A, a)


def test_scatter_python_values_and_strided_targets():
    a = np.zeros(30, np.int64)
    A = npc.asarray(a.copy())
    idx = np.array([1, 5, 5, 9])
    a[idx] = 7
    A[npc.asarray(idx)] = 7
    assert_same(A, a)
    f, F = np.zeros(40), npc.zeros(40)
    f[::3][idx] = 2.5
    F[::3][npc.asarray(idx)] = 2.5
    assert_same(F, f)
    f[::-2][idx] = 3  # a Python int into a float array
    F[::-2][npc.asarray(idx)] = 3
    assert_same(F, f)
    i32 = idx.astype(np.int32)  # another index dtype takes the general path
    f[i32] = -1.0
    F[npc.asarray(i32)] = -1.0
    assert_same(F, f)


def test_scatter_aliasing_index_and_value():
    x = np.array([3, 0, 2, 1, 4])
    X = npc.asarray(x.copy())
    x[x] = 9
    X[X] = 9
    assert_same(X, x)
    a = np.arange(10.0)
    A = npc.asarray(a.copy())
    idx = np.array([0, 1, 2, 3])
    a[idx] = a[::-1][:4]
    A[npc.asarray(idx)] = A[::-1][:4]
    assert_same(A, a)


def test_scatter_out_of_bounds_writes_nothing():
    a = npc.zeros(10)
    for bad in ([1, 2, 10], [0, -11]):
        with pytest.raises(IndexError) as e:
            a[npc.asarray(np.array(bad))] = 5.0
        with pytest.raises(IndexError) as ref:
            np.zeros(10)[np.array(bad)] = 5.0
        assert str(e.value) == str(ref.value)
        assert_same(a, np.zeros(10))


def test_scatter_value_shape_errors():
    a = npc.zeros(10)
    with pytest.raises(ValueError):
        a[npc.asarray(np.array([1, 2, 3]))] = npc.asarray(np.ones(2))
    with pytest.raises(ValueError):
        np.zeros(10)[np.array([1, 2, 3])] = np.ones(2)


@pytest.mark.parametrize("n", [0, 5, 64, 1001])
def test_not_of_bool_masks(n):
    m = MASKS["random"](n)
    for key in (slice(None), slice(None, None, -3)):
        assert_same(~npc.asarray(m)[key], ~m[key])
        assert_same(npc.logical_not(npc.asarray(m)[key]), np.logical_not(m[key]))
        assert_same(npc.invert(npc.asarray(m)[key]), np.invert(m[key]))
    assert_same(~npc.asarray(m).reshape(-1, 1), ~m.reshape(-1, 1))


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "float64"])
@pytest.mark.parametrize("rows", [8, 4096])
def test_strided_column_arithmetic(dtype, rows):
    # The last stages of an autosort FFT: (rows, 1) halves of a (rows, 2) array.
    X = values(2 * rows, dtype, 4).reshape(rows, 2)
    tw = values(rows, dtype, 5).reshape(rows, 1)
    N, T = npc.asarray(X), npc.asarray(tw)
    even, odd, E, O = X[:, :1], X[:, 1:], N[:, :1], N[:, 1:]
    assert_same(E + T * O, even + tw * odd)
    assert_same(E - T * O, even - tw * odd)
    assert_same(E / T, even / tw)
    assert_same(-N[::-3], -X[::-3])
    assert_same(npc.concatenate([E + O, E - O]), np.concatenate([even + odd, even - odd]))
    out = np.empty((rows, 3), dtype)[:, ::2]
    OUT = npc.empty((rows, 3), dtype)[:, ::2]
    np.multiply(X, X, out=out)
    npc.multiply(N, N, out=OUT)
    assert_same(OUT, out)


def _address(x):
    return np.asarray(x).__array_interface__["data"][0]


def test_block_cache_serves_slightly_smaller_arrays():
    # Note [block size classes]: a freed 800 KB block serves the next request of 760 KB.
    a = npc.empty(100_003)
    addr = _address(a)
    del a
    b = npc.empty(95_001)
    assert _address(b) == addr
    b[...] = 1.5
    assert_same(b, np.full(95_001, 1.5))
    # Zeroed arrays never take a cached block's old contents.
    b[...] = 3.0
    del b
    z = npc.zeros(95_001)
    assert_same(z, np.zeros(95_001))


def test_memory_stats_count_requested_bytes():
    # A block taken from a larger class still counts the bytes the array asked for.
    a = npc.empty(100_003)
    del a
    before = npc.memory_stats()["current_bytes"]
    b = npc.empty(95_001)
    assert npc.memory_stats()["current_bytes"] == before + 95_001 * 8
    del b
    assert npc.memory_stats()["current_bytes"] == before
