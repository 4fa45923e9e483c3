"""numpy.histogram's counts bit for bit (Note [histogram bins] in src/ops/sort.cpp): the bins of
the computed guess and its correction are the search's, weights add per block of 65536 points
in the weights' dtype, and density divides by the widths in the edges' dtype and the pairwise
total, as NumPy's equal-width path does."""
import warnings

import numpy as np
import pytest

import npc


def assert_same(got, want):
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes(), np.max(np.abs(g - w))


EDGES = [np.array([0.0, 1, 1, 2, 50]), np.sort(np.random.default_rng(9).random(11)) * 50,
         np.array([-1.0, 0.0, 49.0, 1e3])]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("n", [0, 7, 1000, 140001])
@pytest.mark.parametrize("bins", [1, 10, 100, "edges0", "edges1", "edges2"])
@pytest.mark.parametrize("wdtype", [None, np.float64, np.float32, np.int64])
@pytest.mark.parametrize("density", [False, True])
def test_histogram_is_numpys_bits(dtype, n, bins, wdtype, density):
    r = np.random.default_rng(n)
    a = (r.random(n) * 50).astype(dtype)
    if n > 20:
        a[:5] = [0, 50, 25, 12.5, 49.999999]  # the outer edges and exact inner edges
    w = None if wdtype is None else (r.random(n) * 1e3).astype(wdtype)
    b = EDGES[int(bins[-1])] if isinstance(bins, str) else bins
    for rng in ([None, (5, 30)] if np.ndim(b) == 0 else [None]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # density of no points: 0 / 0
            want = np.histogram(a, b, range=rng, weights=w, density=density)
            got = npc.histogram(npc.asarray(a), b, range=rng, weights=None if w is None else npc.asarray(w),
                                density=density)
        assert_same(got, want)


@pytest.mark.parametrize("density", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_histogram2d_is_numpys_bits(density, weighted):
    r = np.random.default_rng(3)
    x, y, w = r.random(5000), r.random(5000), r.random(5000)
    want = np.histogram2d(x, y, 7, weights=w if weighted else None, density=density)
    got = npc.histogram2d(npc.asarray(x), npc.asarray(y), 7, weights=npc.asarray(w) if weighted else None,
                          density=density)
    assert_same(got, want)


def test_nan_and_outside_points_are_dropped():
    a = np.array([np.nan, -1.0, 0.0, 0.5, 1.0, 2.0, np.inf, -np.inf])
    assert_same(npc.histogram(npc.asarray(a), 4, range=(0, 1)), np.histogram(a, 4, range=(0, 1)))
