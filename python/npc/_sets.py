"""Set operations (numpy.unique and its array-API forms, isin, intersect1d, union1d,
setdiff1d, setxor1d), built on the sort kernels (src/ops/sort.cpp)."""
import operator as _operator
from collections import namedtuple as _namedtuple

import numpy as _np

from . import _core
from ._array import _from_numpy
from ._dtypes import result_type as _result_type
from ._indexing import take
from ._shape import _arr, _wrap_all, concatenate, moveaxis, ravel
from ._sorting import argsort, lexsort, sort

_op = _core._shape_op

__all__ = ["unique", "unique_values", "unique_counts", "unique_inverse", "unique_all", "isin", "intersect1d",
           "union1d", "setdiff1d", "setxor1d"]


UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _unique_rows(x, axis, return_index, return_inverse, return_counts, equal_nan):
    axis = _operator.index(axis)
    moved = moveaxis(x, axis, 0)
    orig = moved.shape
    rows = moved.reshape((orig[0], -1)) if orig[0] else moved.reshape((0, int(_np.prod(orig[1:]))))
    if rows.shape[1] == 0:
        keys = [_core.zeros((rows.shape[0],), 7, "C")]
    else:
        keys = [rows[:, j] for j in range(rows.shape[1] - 1, -1, -1)]
    perm = _np.asarray(lexsort(keys)) if rows.shape[0] else _np.zeros(0, _np.int64)
    rl = _np.asarray(rows).tolist()
    first, inv, counts = [], _np.empty(len(rl), _np.int64), []
    prev = None
    for p in perm.tolist():
        r = rl[p]
        # Rows compare field by field as NumPy's structured view does: NaN never equals NaN
        # (equal_nan does not apply along an axis), -0.0 equals 0.0.
        same = prev is not None and all(a == b for a, b in zip(r, prev))
        if not same:
            first.append(p)
            counts.append(0)
        counts[-1] += 1
        inv[p] = len(first) - 1
        prev = r
    idx = _from_numpy(_np.asarray(first, dtype=_np.int64))
    vals = moveaxis(take(moved, idx, axis=0), 0, axis)
    out = [vals]
    if return_index:
        out.append(idx)
    if return_inverse:
        out.append(_from_numpy(inv))
    if return_counts:
        out.append(_from_numpy(_np.asarray(counts, dtype=_np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """numpy.unique: sorted unique values, optionally with first indices, inverse (input's
    shape when axis is None) and counts; with `axis`, unique sub-arrays along it."""
    x = _arr(ar)
    if axis is not None:
        return _unique_rows(x, axis, return_index, return_inverse, return_counts, equal_nan)
    vals, idx, inv, cnt = _op("unique", x, bool(equal_nan))
    out = [vals]
    if return_index:
        out.append(idx)
    if return_inverse:
        out.append(inv)
    if return_counts:
        out.append(cnt)
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x):
    """numpy.unique_values: the unique values, NaNs distinct (sorted; NumPy may return them
    in hash order)."""
    return _op("unique", _arr(x), False)[0]


def unique_counts(x):
    """numpy.unique_counts: (values, counts)."""
    v, _, _, c = _op("unique", _arr(x), False)
    return UniqueCountsResult(v, c)


def unique_inverse(x):
    """numpy.unique_inverse: (values, inverse_indices) with inverse in x's shape."""
    v, _, i, _ = _op("unique", _arr(x), False)
    return UniqueInverseResult(v, i)


def unique_all(x):
    """numpy.unique_all: (values, indices, inverse_indices, counts)."""
    v, idx, i, c = _op("unique", _arr(x), False)
    return UniqueAllResult(v, idx, i, c)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """numpy.isin: bool array of element's shape, True where the element is in test_elements."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    if kind == "table":
        e, t = _arr(element), _arr(test_elements)
        if e.dtype.kind not in "iub" or t.dtype.kind not in "iub":
            raise ValueError("The 'table' method is only supported for boolean or integer arrays. "
                             "Please select 'sort' or None for kind.")
    return _op("isin", _arr(element), ravel(_arr(test_elements)), bool(invert))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """numpy.intersect1d: sorted values present in both (and their first indices)."""
    a1, a2 = ravel(_arr(ar1)), ravel(_arr(ar2))
    if return_indices:
        u1, i1 = unique(a1, return_index=True) if not assume_unique else (a1, _core.arange(0, a1.size, 1, 7))
        u2, i2 = unique(a2, return_index=True) if not assume_unique else (a2, _core.arange(0, a2.size, 1, 7))
    else:
        u1 = unique(a1) if not assume_unique else a1
        u2 = unique(a2) if not assume_unique else a2
    dt = _result_type(u1, u2)
    u1, u2 = u1.astype(dt), u2.astype(dt)
    m = _op("isin", u1, u2, False)
    common = u1[m]
    if assume_unique:
        order = argsort(common)
        common = common[order]
    if not return_indices:
        return common
    idx1 = i1[m] if not assume_unique else i1[m][order]
    pos2 = _op("searchsorted", sort(u2), common, False, None) if not assume_unique else None
    if not assume_unique:
        idx2 = i2[pos2]
    else:
        perm2 = argsort(u2)
        idx2 = perm2[_op("searchsorted", u2[perm2], common, False, None)]
    return common, idx1, idx2


def union1d(ar1, ar2):
    """numpy.union1d: sorted unique values of both inputs."""
    return unique(concatenate((ravel(_arr(ar1)), ravel(_arr(ar2)))))


def setdiff1d(ar1, ar2, assume_unique=False):
    """numpy.setdiff1d: sorted unique values of ar1 not in ar2 (ar1's order if assume_unique)."""
    a1 = ravel(_arr(ar1)) if assume_unique else unique(ar1)
    return a1[_op("isin", a1, ravel(_arr(ar2)), True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """numpy.setxor1d: sorted values in exactly one of the inputs."""
    a1 = ravel(_arr(ar1)) if assume_unique else unique(ar1)
    a2 = ravel(_arr(ar2)) if assume_unique else unique(ar2)
    aux = concatenate((a1, a2))
    if aux.size == 0:
        return aux
    vals, _, _, counts = _op("unique", aux, True)
    keep = _from_numpy(_np.asarray(counts) == 1)  # counts is a small int64 array
    return vals[keep]


_wrap_all(globals())
