"""Regression tests of sorting against NumPy: values equal under comparison but different in
bits (signed zeros, NaN payloads) keep their input order, and empty partitions."""
import numpy as np
import pytest

import npc

from _diff import check

FLOATS = [np.float16, np.float32, np.float64]


def _bits(x):
    x = np.asarray(x)
    return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.itemsize])


STABLE = ("stable", "mergesort")


def _assert_sorted_like(got, exp, x, kind):
    """A stable sort keeps equal keys (0.0 and -0.0) in input order: NumPy specifies the bits.
    Other kinds leave the order of equal keys unspecified (NumPy's SIMD sorts, picked by CPU,
    order them differently): the values compare equal position by position and the multiset
    of bit patterns is the input's."""
    if kind in STABLE:
        np.testing.assert_array_equal(_bits(got), _bits(exp))
        return
    np.testing.assert_array_equal(np.asarray(got), exp)
    np.testing.assert_array_equal(np.sort(_bits(got)), np.sort(_bits(x)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", [None, "stable", "quicksort", "mergesort", "heapsort"])
@pytest.mark.parametrize("data", [[0.0, -0.0, 1.0], [-0.0, 0.0, -1.0, 0.0, -0.0], [0.0, np.nan, -0.0, -np.inf, 2.0],
                                  [-0.0] * 3 + [0.0] * 2 + [np.inf, -np.inf]], ids=str)
def test_sort_keeps_signed_zeros(dtype, kind, data):
    x = np.array(data, dtype=dtype)
    exp = np.sort(x, kind=kind)
    got = npc.sort(npc.asarray(x), kind=kind)
    _assert_sorted_like(got, exp, x, kind)
    a = npc.asarray(x)
    a.sort(kind=kind)
    _assert_sorted_like(a, exp, x, kind)


@pytest.mark.parametrize("dtype", FLOATS)
def test_stable_sort_signed_zeros_large(dtype):
    rng = np.random.default_rng(0)
    x = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.nan, 2.5], dtype=dtype), size=5000)
    exp = np.sort(x, kind="stable")
    got = npc.sort(npc.asarray(x), kind="stable")
    np.testing.assert_array_equal(_bits(got), _bits(exp))
    # Any kind keeps the multiset of bit patterns.
    np.testing.assert_array_equal(np.sort(_bits(npc.sort(npc.asarray(x)))), np.sort(_bits(x)))


@pytest.mark.parametrize("kth", [0, 1, [0, 2]], ids=str)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0)], ids=str)
@pytest.mark.parametrize("axis", [-1, None])
def test_partition_empty(kth, shape, axis):
    check(lambda lib: lib.partition(lib.zeros(shape), kth, axis=axis), views=False)
