"""Sorting, searching, sets and counting vs NumPy over every native dtype and shape kind."""
import numpy as np
import pytest

import npc

from _diff import DTYPES, LAYOUTS, check, pair, values

SHAPES = [(0,), (7,), (3, 5), (2, 0, 3), (2, 3, 4)]
NAN_OK = {"sort", "sort0", "sort_descending", "argsort_descending", "sort_none", "argsort_stable", "unique", "unique_all", "searchsorted", "isin",
          "lexsort", "unique_counts"}

CASES = {
    "sort": lambda m, a: m.sort(a),
    "sort0": lambda m, a: m.sort(a, axis=0),
    "sort_none": lambda m, a: m.sort(a, axis=None),
    "argsort_stable": lambda m, a: m.argsort(a, kind="stable"),
    "argsort0_stable": lambda m, a: m.argsort(a, axis=0, stable=True),
    "sort_descending": lambda m, a: m.sort(a, axis=0, descending=True),
    "argsort_descending": lambda m, a: m.argsort(a, stable=True, descending=True),
    "method_sort": lambda m, a: (a.sort(axis=0), a)[1],
    "lexsort": lambda m, a: m.lexsort([a, m.flip(a, -1)]) if a.ndim else m.lexsort([a]),
    "searchsorted": lambda m, a: m.searchsorted(m.sort(a, axis=None), a),
    "searchsorted_right": lambda m, a: m.searchsorted(m.sort(a, axis=None), a, side="right"),
    "searchsorted_sorter": lambda m, a: m.searchsorted(m.ravel(a), a, sorter=m.argsort(m.ravel(a), kind="stable")),
    "unique": lambda m, a: m.unique(a),
    "unique_all": lambda m, a: m.unique(a, return_index=True, return_inverse=True, return_counts=True),
    "unique_axis0": lambda m, a: m.unique(a, axis=0, return_index=True, return_inverse=True, return_counts=True),
    "unique_counts": lambda m, a: tuple(m.unique_counts(a)),
    "unique_inverse": lambda m, a: tuple(m.unique_inverse(a)),
    "isin": lambda m, a: m.isin(a, m.ravel(a)[::2]),
    "isin_invert": lambda m, a: m.isin(a, m.ravel(a)[:3], invert=True),
    "intersect1d": lambda m, a: m.intersect1d(a, m.ravel(a)[::3], return_indices=True),
    "union1d": lambda m, a: m.union1d(a, m.ravel(a)[::2]),
    "setdiff1d": lambda m, a: m.setdiff1d(a, m.ravel(a)[::2]),
    "setxor1d": lambda m, a: m.setxor1d(a, m.ravel(a)[1::2]),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(CASES))
def test_sort_family(name, dtype):
    for shape in SHAPES:
        for layout in ("c", "reversed", "strided"):
            check(CASES[name], values(shape, dtype, seed=len(shape)), layout=layout, views=False)
            if name in NAN_OK and np.dtype(dtype).kind in "fc":
                check(CASES[name], values(shape, dtype, seed=3, nan=True), layout=layout, views=False)


# dtypes with at least 40 distinct values (bool and 8-bit types get ties, covered above with kind="stable")
@pytest.mark.parametrize("dtype", [d for d in DTYPES if np.dtype(d).itemsize > 1], ids=lambda d: np.dtype(d).name)
def test_argsort_default_kind_distinct_values(dtype):
    # With distinct values every sort kind gives the same indices.
    for layout in LAYOUTS:
        check(lambda m, a: m.argsort(a), values((5, 8), dtype, distinct=True), layout=layout, views=False)
        check(lambda m, a: m.argsort(a, axis=None), values((5, 8), dtype, distinct=True), layout=layout,
              views=False)


def _check_partition(n_res, p_res, kth, axis):
    p = np.asarray(p_res)
    assert p.dtype == n_res.dtype and p.shape == n_res.shape
    # Same multiset per lane, same kth values, and the partition property.
    np.testing.assert_array_equal(np.sort(p, axis=axis), np.sort(n_res, axis=axis))
    for k in np.atleast_1d(kth) % p.shape[axis]:
        np.testing.assert_array_equal(np.take(p, k, axis=axis), np.take(n_res, k, axis=axis))
        kv = np.expand_dims(np.take(p, k, axis=axis), axis)
        left = np.take(p, np.arange(0, k), axis=axis)
        right = np.take(p, np.arange(k + 1, p.shape[axis]), axis=axis)
        assert ((left <= kv) | np.isnan(kv)).all() and ((right >= kv) | np.isnan(right)).all()


@pytest.mark.parametrize("dtype", [d for d in DTYPES if np.dtype(d).kind != "c"], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kth", [0, 3, -1, [1, 4]])
def test_partition(dtype, kth):
    for layout in LAYOUTS:
        n, p = pair(values((4, 6), dtype, seed=2, nan=True), layout)
        _check_partition(np.partition(n, kth), npc.partition(p, kth), kth, -1)
        k0 = [k for k in np.atleast_1d(kth) if k < 4]
        _check_partition(np.partition(n, k0, axis=0), npc.partition(p, k0, axis=0), k0, 0)
        idx = npc.argpartition(p, kth)
        _check_partition(np.partition(n, kth), np.take_along_axis(n, np.asarray(idx), -1), kth, -1)


def test_partition_errors():
    for fn in [lambda m: m.partition(m.zeros(3), 5), lambda m: m.partition(m.zeros(3), -4),
               lambda m: m.partition(m.zeros(3), 1.5)]:
        try:
            fn(np)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                fn(npc)


def test_sort_nan_and_complex_order():
    x = np.array([3.0, np.nan, -1.0, np.inf, -np.inf, 0.0, np.nan, 2.0])
    np.testing.assert_array_equal(np.asarray(npc.sort(npc.asarray(x))), np.sort(x))
    c = np.array([1 + 2j, np.nan + 0j, 1 + 1j, 0 + np.nan * 1j, 1 + np.nan * 1j, -1 + 5j, np.nan + np.nan * 1j])
    np.testing.assert_array_equal(np.asarray(npc.sort(npc.asarray(c))), np.sort(c))
    np.testing.assert_array_equal(np.asarray(npc.argsort(npc.asarray(c))), np.argsort(c, kind="stable"))


def test_sort_large_uses_simd_path():
    # Large enough for the vectorized sort; NaNs must still go last.
    rng = np.random.default_rng(0)
    for dt in (np.float64, np.float32, np.int64, np.int32, np.uint16, np.int8):
        x = (rng.standard_normal(100_003) * 1000).astype(dt)
        if x.dtype.kind == "f":
            x[::1000] = np.nan
        np.testing.assert_array_equal(np.asarray(npc.sort(npc.asarray(x))), np.sort(x))


def test_searchsorted_scalars_and_errors():
    a = npc.asarray([1, 2, 2, 5])
    assert type(npc.searchsorted(a, 2)) is np.int64 and npc.searchsorted(a, 2) == 1
    assert npc.searchsorted(a, 2, side="right") == 3
    assert npc.searchsorted(a, 2.5) == np.searchsorted(np.asarray(a), 2.5)
    for fn in [lambda m: m.searchsorted(m.zeros((2, 2)), 1), lambda m: m.searchsorted([1, 2], 1, sorter=[0]),
               lambda m: m.searchsorted([1, 2], 1, sorter=[0, 5]), lambda m: m.searchsorted([1, 2], 1, side="x")]:
        try:
            fn(np)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)) as info:
                fn(npc)
            assert str(info.value) == str(e)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if np.dtype(d).kind in "biu"], ids=lambda d: np.dtype(d).name)
def test_bincount(dtype):
    x = np.abs(values((20,), dtype, seed=1)).astype(dtype)
    check(lambda m, a: m.bincount(a), x, views=False)
    check(lambda m, a: m.bincount(a, minlength=30), x, views=False)
    check(lambda m, a, w: m.bincount(a, weights=w), x, values((20,), np.float32, seed=4), views=False)


def test_bincount_errors():
    for fn in [lambda m: m.bincount(m.asarray([1.0])), lambda m: m.bincount(m.asarray([-1])),
               lambda m: m.bincount(m.asarray([1]), minlength=-1), lambda m: m.bincount(m.zeros((2, 2), int)),
               lambda m: m.bincount(m.asarray([0, 1]), weights=m.asarray([1.0]))]:
        try:
            fn(np)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)) as info:
                fn(npc)
            assert str(info.value) == str(e)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("kw", [{}, {"bins": 3}, {"bins": [-5, 0, 1, 8]}, {"range": (-2, 4)}, {"density": True},
                                {"bins": 4, "weights": "w"}])
def test_histogram(dtype, kw):
    def f(m, a, w):
        k = dict(kw)
        if k.get("weights") == "w":
            k["weights"] = w
        return m.histogram(a, **k)
    check(f, values((50,), dtype, seed=5), values((50,), np.float64, seed=6), views=False)


def test_histogram2d_and_digitize():
    x, y = values((40,), np.float64, seed=1), values((40,), np.float64, seed=2)
    check(lambda m, a, b: m.histogram2d(a, b, bins=(3, 4)), x, y, views=False)
    check(lambda m, a, b: m.histogram2d(a, b, bins=2, density=True), x, y, views=False)
    for bins in ([-5, 0, 3, 8], [8, 3, 0, -5]):
        for right in (False, True):
            check(lambda m, a: m.digitize(a, m.asarray(bins) if m is npc else np.asarray(bins), right=right), x,
                  views=False)
    with pytest.raises(ValueError):
        npc.digitize(npc.asarray(x), npc.asarray([1, 3, 2]))


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.complex64])
def test_unique_inverse_with_nans(dtype):
    # NaNs are distinct here; NumPy's (unstable) sort leaves their relative order open, so
    # the check is semantic: same values, and values[inverse] rebuilds the input.
    x = values((4, 5), dtype, seed=3, nan=True)
    v, inv = npc.unique_inverse(npc.asarray(x))
    ev, _ = np.unique_inverse(x)
    np.testing.assert_array_equal(np.asarray(v), ev)
    assert inv.shape == x.shape and inv.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(v)[np.asarray(inv)], x)
