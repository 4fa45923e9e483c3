"""Regression tests of the indexing layer against NumPy: setitem value checks (floats into
integer arrays, sequences into single elements), index kinds (range, huge ints), the
64-dimension limit, and the counting/set/search functions' edge cases."""
import numpy as np
import pytest

import npc

from _diff import check, same_error



def _set(dtype, key, value, shape=(3,)):
    def f(lib):
        a = lib.zeros(shape, dtype=dtype)
        a[key] = value
        return a
    return f


FLOAT_VALUES = [1e20, -1e20, float("nan"), float("inf"), -float("inf"), 3e9, -1.0, 2.7, 2.0**63, 2.0**64,
                np.float64(1e20), np.float64(np.nan), np.float32(1e20), np.float16(np.inf), np.float64(3e9),
                np.float64(-1.0), np.float16(1e4), np.int64(300), np.uint8(200), np.uint64(2**64 - 1),
                np.int64(-1), np.bool_(True), np.int16(-129)]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", INT_DTYPES + [np.bool_])
@pytest.mark.parametrize("value", FLOAT_VALUES, ids=repr)
@pytest.mark.parametrize("key", [0, slice(None), np.array([True, False, True]), np.array([0, 2])],
                         ids=["element", "slice", "mask", "index_array"])
def test_scalar_into_integer_setitem(dtype, value, key):
    # With a mask or an index array, NumPy scalars are cast like arrays (no int() of the
    # value: NaN and out-of-range values do not raise); Python floats still raise.
    with np.errstate(invalid="ignore", over="ignore"):
        try:
            exp = _set(dtype, key, value)(np)
        except Exception as e:  # noqa: BLE001 - NumPy is the oracle
            same_error(_set(dtype, key, value))
            return
        got = _set(dtype, key, value)(npc)
    assert got.dtype == exp.dtype
    np.testing.assert_array_equal(np.asarray(got), exp)


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.float32, np.float64, np.complex128, np.bool_])
@pytest.mark.parametrize("case", [
    ((2, 3), (0, 0), [1]), ((2, 3), (0, 0), [[1]]), ((2, 3), (0, 0), (1,)), ((2, 3), (0, 0), "arr1"),
    ((2, 3), (0, 0), "arr11"), ((2, 3), 0, [[1, 2, 3]]), ((2, 3), 0, "arr123"), ((), Ellipsis, [7]),
    ((), Ellipsis, "arr1"), ((), (), [7]), ((2, 3), slice(0, 1), [[[1, 2, 3]]]), ((2, 3), [0], [[[1, 2, 3]]]),
    ((2, 3), 0, [1, 2, 3]), ((2, 3), (0, 0), 5), ((2,), 0, []),
], ids=str)
def test_setitem_sequence_shapes(dtype, case):
    shape, key, value = case
    arrs = {"arr1": [1], "arr11": [[1]], "arr123": [[1, 2, 3]]}

    def f(lib):
        a = lib.zeros(shape, dtype=dtype)
        a[key] = lib.array(arrs[value]) if isinstance(value, str) else value
        return a
    check(f)


def test_range_index():
    check(lambda lib: lib.arange(5)[range(1, 3)])
    check(lambda lib: lib.arange(12).reshape(3, 4)[range(2), range(1, 3)])

    def f(lib):
        a = lib.arange(5)
        a[range(1, 4, 2)] = 7
        return a
    check(f)


def test_huge_integer_index():
    same_error(lambda lib: lib.arange(5)[2**63])
    same_error(lambda lib: lib.arange(5)[-2**63 - 1])


def test_max_dimensions():
    same_error(lambda lib: lib.zeros((1,) * 65))
    same_error(lambda lib: lib.arange(5)[(None,) * 70])
    same_error(lambda lib: lib.arange(5)[(None,) * 64])
    check(lambda lib: lib.arange(5)[(None,) * 63])
    check(lambda lib: lib.zeros((1,) * 64))


def test_choose_float_index():
    check(lambda lib: lib.choose(lib.array([0.5, 1]), [lib.array([1, 2]), lib.array([3, 4])]))
    check(lambda lib: lib.choose(lib.array([0, 1], dtype=np.uint8), [lib.array([1, 2]), lib.array([3, 4])]))


@pytest.mark.parametrize("cond", ["array", "list"])
def test_piecewise_single_condition(cond):
    def f(lib):
        c = [True, False, True]
        return lib.piecewise(lib.array([1, 2, 3]), lib.array(c) if cond == "array" else c, [9])
    check(f)
    check(lambda lib: lib.piecewise(lib.array([1, 2, 3]), [lib.array([True, False, True])], [9, 4]))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint32])
@pytest.mark.parametrize("v", [300, -300, -1, 2**40, 70000])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_out_of_range_python_int(dtype, v, side):
    check(lambda lib: lib.searchsorted(lib.array([1, 2, 3], dtype=dtype), v, side=side))


def test_bincount_edge_cases():
    check(lambda lib: lib.bincount([1, 2], weights=lib.array([1j, 2])))
    check(lambda lib: lib.bincount([]))
    check(lambda lib: lib.bincount([], minlength=3))
    check(lambda lib: lib.bincount([], weights=lib.array([], dtype=complex)))
    check(lambda lib: lib.bincount(lib.array([1.0])))


@pytest.mark.parametrize("data", [[1e308, -1e308], [2**62 + 1, 2**62 + 5], [0.0, 1e-320]], ids=str)
def test_histogram_too_many_bins(data):
    with np.errstate(all="ignore"):
        try:
            np.histogram(np.array(data), bins=3)
        except ValueError:
            same_error(lambda lib: lib.histogram(lib.array(data), bins=3))
            return
        check(lambda lib: lib.histogram(lib.array(data), bins=3))


def test_histogram_bool_weights():
    check(lambda lib: lib.histogram(lib.array([1, 2]), bins=2, weights=lib.array([True, False])))


@pytest.mark.parametrize("rows", [
    [[1, np.nan], [1, np.nan]], [[np.nan, 1], [0, 1], [np.nan, 0], [np.nan, 1]], [[0.0], [-0.0]],
    [[1 + 0j, np.nan], [1, np.nan]]], ids=str)
@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_axis_nan_rows(rows, equal_nan):
    check(lambda lib: lib.unique(lib.array(rows), axis=0, return_index=True, return_inverse=True,
                                 return_counts=True, equal_nan=equal_nan))


def test_isin_table_rejects_floats():
    same_error(lambda lib: lib.isin(lib.array([1.5, 2]), lib.array([2]), kind="table"))
    same_error(lambda lib: lib.isin(lib.array([1, 2]), lib.array([2.5]), kind="table"))
    check(lambda lib: lib.isin(lib.array([1, 2]), lib.array([2]), kind="table"))


@pytest.mark.parametrize("sorter", [[0, 1, 5], [0, 1, -1], [5, 1, 2], [0, 1], [2, 1, 0], [0, 1, 2]], ids=str)
@pytest.mark.parametrize("v", [2, 0, 4, [3, 1, 2, 2], [1, 5, 0]], ids=str)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_sorter_range(sorter, v, side):
    # NumPy checks only the sorter entries its bisection reads.
    check(lambda lib: lib.searchsorted(lib.array([1, 2, 3]), v, side=side, sorter=sorter))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_sorter_values(side):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 20, 50).astype(np.float64)
    a[::7] = np.nan
    v = rng.integers(-2, 22, 40).astype(np.float64)
    v[::5] = np.nan
    check(lambda lib: lib.searchsorted(lib.array(a), lib.array(v), side=side, sorter=lib.argsort(lib.array(a))))


@pytest.mark.parametrize("key", [slice(1, None), slice(2, 0, -1), (), Ellipsis, [0], []])
@pytest.mark.parametrize("value, dtype", [
    (70000, np.float16), (-9223372036854775808, np.float16), (2 ** 64 - 1, np.float32),
    (np.int64(70000), np.float16), (np.float64(1e300), np.float32), (np.float64(1e300), np.complex64),
    (10 ** 39, np.complex64),
])
def test_setitem_scalar_is_cast_first(key, value, dtype):
    # NumPy converts a scalar to the array's dtype before assigning it: "overflow encountered
    # in cast" even when the index selects nothing.
    import warnings

    def outcome(xp):
        a = xp.ones((1, 1) if key == () else (1,), dtype)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a[key] = value
        return np.asarray(a).tolist(), [(m.category, str(m.message)) for m in w]

    assert outcome(npc) == outcome(np)
