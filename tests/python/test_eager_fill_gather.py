"""Eager fills (ndarray.fill, ones, full) and single-index gathers (a[idx], take) against
NumPy: every element size, strided and reversed destinations, 0-d and empty arrays, and the
first out-of-bounds index named as NumPy names it (also on the parallel path from 2M
indices)."""
import numpy as np
import pytest

import npc

DTYPES = ["bool", "int8", "uint8", "int16", "float16", "int32", "float32", "int64", "uint64", "float64",
          "complex64", "complex128"]
VALUES = {"b": True, "i": -7, "u": 9, "f": 2.5, "c": 1.5 - 2j}


def _value(dt):
    return VALUES[np.dtype(dt).kind]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "transposed", "0-d", "empty"])
def test_fill_matches_numpy(dt, layout):
    shapes = {"0-d": (), "empty": (0, 3)}
    ref = np.zeros(shapes.get(layout, (6, 10)), dt)
    got = npc.zeros(ref.shape, dt)
    views = {
        "contiguous": lambda a: a,
        "strided": lambda a: a[::2, 1::3],
        "reversed": lambda a: a[::-1, ::-2],
        "transposed": lambda a: a.T,
    }
    view = views.get(layout, lambda a: a)
    view(ref).fill(_value(dt))
    view(got).fill(_value(dt))
    np.testing.assert_array_equal(np.asarray(got), ref)
    assert np.asarray(got).dtype == ref.dtype


@pytest.mark.parametrize("dt", DTYPES)
def test_ones_and_full_match_numpy(dt):
    for shape in [(), (0,), (5,), (3, 4), (1000,), (40, 300)]:
        np.testing.assert_array_equal(np.asarray(npc.ones(shape, dt)), np.ones(shape, dt))
        f = npc.full(shape, _value(dt), dt)
        np.testing.assert_array_equal(np.asarray(f), np.full(shape, _value(dt), dt))
        assert np.asarray(f).dtype == np.dtype(dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("source", ["contiguous", "strided", "reversed"])
def test_single_index_gather_matches_numpy(dt, source):
    rng = np.random.default_rng(1)
    base = (rng.random(90) * 50).astype(dt) if np.dtype(dt).kind != "c" else (rng.random(90) + 1j * rng.random(90)).astype(dt)
    x = {"contiguous": base[:30], "strided": base[::3], "reversed": base[::-3]}[source]
    idx = rng.integers(-30, 30, 500)
    nx = {"contiguous": npc.asarray(base)[:30], "strided": npc.asarray(base)[::3],
          "reversed": npc.asarray(base)[::-3]}[source]
    for got, ref in [(nx[npc.asarray(idx)], x[idx]), (npc.take(nx, npc.asarray(idx)), np.take(x, idx)),
                     (nx[npc.asarray(idx[:0])], x[idx[:0]])]:
        np.testing.assert_array_equal(np.asarray(got), ref)
        assert np.asarray(got).dtype == ref.dtype


def _index_error(f):
    with pytest.raises(IndexError) as e:
        f()
    return str(e.value)


@pytest.mark.parametrize("m", [40, 3_000_000])
def test_gather_names_the_first_index_out_of_bounds(m):
    x = np.arange(20.0)
    idx = np.zeros(m, np.int64)
    idx[m // 2] = 25
    idx[m - 3] = -21
    idx[m - 1] = 99
    nx, ni = npc.asarray(x), npc.asarray(idx)
    assert _index_error(lambda: nx[ni]) == _index_error(lambda: x[idx])
    idx[m // 2] = 0
    assert _index_error(lambda: nx[npc.asarray(idx)]) == _index_error(lambda: x[idx])
    idx[:] = np.arange(m) % 20 - 10
    np.testing.assert_array_equal(np.asarray(nx[npc.asarray(idx)]), x[idx])


@pytest.mark.parametrize("make", [
    lambda: np.array([[0, 59], [52, 0]]).T,
    lambda: np.array([[0, 59], [52, 0]])[::-1],
    lambda: np.array([[0, 59], [52, 0]])[:, ::-1],
    lambda: np.array([[0, 59, 1], [52, 0, -99]]).T[::-1],
    lambda: np.broadcast_to(np.array([[1], [70]]), (2, 3)),
    lambda: np.asfortranarray(np.array([[3, 80, 1], [60, 2, 0]])),
])
def test_general_gather_names_the_bad_index_numpy_finds_first(make):
    # NumPy checks an index array in its memory order, not in C order.
    x = np.arange(50.0)
    i = make()
    for f, g in [(lambda: x[i], lambda: npc.asarray(x)[npc.asarray(i)]),
                 (lambda: x[None][:, i], lambda: npc.asarray(x)[None][:, npc.asarray(i)]),
                 (lambda: x[..., i], lambda: npc.asarray(x)[..., npc.asarray(i)])]:
        assert _index_error(g) == _index_error(f)
