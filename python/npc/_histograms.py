"""Counting and histograms (numpy.bincount, histogram, histogram2d, histogramdd,
histogram_bin_edges, digitize)."""
import operator as _operator
from builtins import range as builtins_range  # (histogram's `range` parameter hides the builtin)

import numpy as _np

from . import _core
from ._array import _from_numpy
from ._shape import _arr, _numpy, _wrap_all, ravel

_op = _core._shape_op

__all__ = ["bincount", "histogram", "histogram2d", "histogramdd", "histogram_bin_edges", "digitize"]


def bincount(x, /, weights=None, minlength=0):
    """numpy.bincount: occurrences of each non-negative integer (sums of weights, float64)."""
    if isinstance(x, (list, tuple)) and _np.size(x) == 0:
        x = _np.zeros(0, _np.int64)  # an empty sequence is an empty intp array for NumPy
    xs = _arr(x)
    w = None if weights is None else _arr(weights)
    if minlength is None:
        raise TypeError("use 0 instead of None for minlength")
    m = _operator.index(minlength)
    if xs.size == 0 and xs.dtype.kind in "iub" and m >= 0:
        return _from_numpy(_np.zeros(m, _np.int64))  # NumPy ignores the weights of empty input
    if w is not None and xs.size and not _np.can_cast(w.dtype, _np.float64, "safe"):
        raise TypeError(f"Cannot cast array data from {w.dtype!r} to dtype('float64') according to the rule 'safe'")
    return _op("bincount", xs, w, _operator.index(minlength))


def _edges(a, bins, range_, weights):
    from ._creation import linspace
    if isinstance(bins, str):
        return None
    if _np.ndim(bins) == 0:
        n = _operator.index(bins)
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range_ is not None:
            first, last = range_
            if first > last:
                raise ValueError("max must be larger than min in range parameter.")
            if not (_np.isfinite(first) and _np.isfinite(last)):
                raise ValueError(f"supplied range of [{first}, {last}] is not finite")
        elif a.size == 0:
            first, last = 0, 1
        else:
            first, last = _op("value_range", a)
            if not (_np.isfinite(first) and _np.isfinite(last)):
                raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
            # NumPy takes a.min()/a.max() as scalars of a's dtype (strong under NEP 50).
            first, last = a.dtype.type(first), a.dtype.type(last)
        if first == last:
            first, last = first - 0.5, last + 0.5
        dt = _np.result_type(first, last, a.dtype)
        if dt.kind in "iub":
            dt = _np.result_type(dt, float)
        # The n + 1 edges follow numpy.linspace's arithmetic in the edge dtype (float32 data
        # gives float32 arithmetic); NumPy computes these few values, npc counts the data.
        edges = _np.linspace(first, last, n + 1, endpoint=True, dtype=dt)
        if _np.any(edges[:-1] >= edges[1:]):
            raise ValueError(f"Too many bins for data range. Cannot create {n} finite-sized bins.")
        return _from_numpy(edges)
    e = _arr(bins)
    if e.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if e.size > 1 and _op("monotonic", e) != 1:
        raise ValueError("`bins` must increase monotonically, when an array")
    return e


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """numpy.histogram_bin_edges for integer or array `bins`."""
    x = ravel(_arr(a))
    e = _edges(x, bins, range, weights)
    if e is None:
        return _numpy("histogram_bin_edges", a, bins, range, weights)
    return e


def histogram(a, bins=10, range=None, density=None, weights=None):
    """numpy.histogram: (counts, bin_edges). Bins are half-open except the last; counts are
    int64, or the sums of `weights` in the weights' dtype; density divides by the widths and
    the total, as float64. Weights with given edges (not a number of bins) and complex weights
    run NumPy's own function."""
    x = ravel(_arr(a))
    e = _edges(x, bins, range, weights)
    equal_widths = _np.ndim(bins) == 0
    if e is None or (weights is not None and (_arr(weights).dtype.kind == "c" or not equal_widths)):
        # Weights with given edges: NumPy sums them as differences of cumulative sums of the
        # sorted points, whose rounding only its own code gives.
        return _numpy("histogram", a, bins, range, density, weights)
    w = None if weights is None else _arr(weights)
    if w is not None and w.shape != _arr(a).shape:
        raise ValueError("weights should have the same shape as a.")
    # NumPy's equal-width path sums the weights of each block of 65536 points in float64 (its
    # bincount) and adds the block's sums, cast to the weights' dtype, to counts of that dtype
    # (Note [histogram bins] in src/ops/sort.cpp for the bins).
    block = 65536
    if w is None or w.dtype == _np.float64 or x.size <= block:
        counts = _op("histogram", [x], [e], w, False, block)
        if w is not None and w.dtype != _np.float64:
            counts = counts.astype(w.dtype)
    else:
        wf = ravel(w)
        counts = None
        for i in builtins_range(0, x.size, block):
            part = _op("histogram", [x[i:i + block]], [e], wf[i:i + block], False, 0).astype(w.dtype)
            counts = part if counts is None else counts + part
    if density:
        # NumPy's `n / db / n.sum()`, db the widths in the edges' dtype, as float64.
        from ._differences import diff
        counts = counts / diff(e).astype(_np.float64) / counts.sum()
    return counts, e


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """numpy.histogramdd for (N, D) samples (or a sequence of D coordinate arrays)."""
    if isinstance(sample, (list, tuple)):
        coords = [ravel(_arr(s)) for s in sample]
    else:
        s = _arr(sample)
        if s.ndim == 1:
            s = s.reshape((-1, 1))
        coords = [s[:, d] for d in builtins_range(s.shape[1])]
    D = len(coords)
    try:
        nb = len(bins)
        if nb != D:
            raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
        bins_list = list(bins)
    except TypeError:
        bins_list = [bins] * D
    ranges = [None] * D if range is None else list(range)
    edges = []
    for d in builtins_range(D):
        edges.append(_edges(coords[d], bins_list[d], ranges[d], None))
    w = None if weights is None else _arr(weights)
    counts = _op("histogram", coords, edges, w, bool(density))
    if not density and w is None:
        counts = counts.astype(_np.float64)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """numpy.histogram2d: (H, xedges, yedges) with H float64 as NumPy returns it."""
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        xedges = yedges = _arr(bins)
        bins = [xedges, yedges]
    H, edges = histogramdd([x, y], bins, range, density, weights)
    return H, edges[0], edges[1]


def digitize(x, bins, right=False):
    """numpy.digitize: indices of the bins each value falls in (bins increasing or
    decreasing; ValueError otherwise)."""
    xs = _arr(x)
    b = _arr(bins)
    if xs.dtype.kind == "c":
        raise TypeError("x may not be complex")
    if b.ndim != 1:
        raise ValueError("object too deep for desired array" if b.ndim > 1 else "object of too small depth for desired array")
    mono = _op("monotonic", b) if b.size > 1 else 1
    if mono == 0:
        raise ValueError("bins must be monotonically increasing or decreasing")
    side_right = not right
    if mono == -1:
        rb = b[::-1]
        pos = _op("searchsorted", rb, xs, side_right, None)
        return _from_numpy(b.size - _np.asarray(pos))
    r = _op("searchsorted", b, xs, side_right, None)
    return r


_wrap_all(globals())
