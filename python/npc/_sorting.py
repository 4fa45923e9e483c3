"""Sorting and searching (numpy.sort, argsort, lexsort, partition, argpartition,
searchsorted) and the ndarray methods of the same names.

The kernels are in src/ops/sort.cpp (include/npc/sorting.hpp), reached through
_core._shape_op; structured `order=` and non-native dtypes run on NumPy.
"""
import operator as _operator

import numpy as _np

from . import _core
from . import _fallback
from ._array import _from_numpy, ndarray
from ._dtypes import result_type as _result_type
from ._indexing import _axis, _int_array
from ._shape import _arr, _numpy, _wrap_all, ravel

_op = _core._shape_op

__all__ = ["sort", "argsort", "lexsort", "partition", "argpartition", "searchsorted"]


_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_kind(kind, stable):
    if kind not in _KINDS:
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got '{kind}')")
    if stable is not None and kind is not None:
        raise ValueError("`kind` and `stable` parameters can't be provided at the same time. Use only one of them.")


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """numpy.sort: a sorted copy along `axis` (flattened when None); NaN last (also when
    `descending`), complex lexicographic. Structured `order=` runs on NumPy."""
    _check_kind(kind, stable)
    x = _arr(a)
    if order is not None:
        return _numpy("sort", a, axis=axis, kind=kind, order=order)
    return _op("sort", x, _axis(axis), bool(descending))


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """numpy.argsort: int64 indices that sort `a` along `axis`. npc's sort is always stable,
    so ties keep their input order (NumPy's kind='stable' result exactly); `descending`
    puts the largest first, ties still in input order, NaNs last."""
    _check_kind(kind, stable)
    x = _arr(a)
    if order is not None:
        return _numpy("argsort", a, axis=axis, kind=kind, order=order)
    return _op("argsort", x, _axis(axis), bool(descending))


def lexsort(keys, axis=-1):
    """numpy.lexsort: indices sorting by the last key, then the previous ones (stable)."""
    if isinstance(keys, ndarray) or isinstance(keys, _np.ndarray):
        ks = [_arr(k) for k in _arr(keys)] if _arr(keys).ndim > 0 else [_arr(keys)]
    else:
        ks = [_arr(k) for k in keys]
    return _op("lexsort", ks, _operator.index(axis))


def _kth(kth):
    k = _arr(kth)
    if k.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    return [int(v) for v in _np.asarray(k).ravel()]


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.partition: a copy with each kth element in sorted position, smaller or equal
    elements before it and greater or equal after (the order within each side differs from
    NumPy's, which NumPy leaves unspecified)."""
    x = _arr(a)
    if order is not None:
        return _numpy("partition", a, kth, axis=axis, kind=kind, order=order)
    if kind != "introselect":
        raise ValueError(f"Unknown selection kind: {kind!r}")
    if x.size == 0:  # NumPy returns empty input unchanged, whatever kth
        return ravel(x).copy() if axis is None else x.copy()
    return _op("partition", x, _kth(kth), _axis(axis))


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.argpartition: int64 indices that partition `a` (see partition)."""
    x = _arr(a)
    if order is not None:
        return _numpy("argpartition", a, kth, axis=axis, kind=kind, order=order)
    return _op("argpartition", x, _kth(kth), _axis(axis))


def searchsorted(a, v, side="left", sorter=None):
    """numpy.searchsorted: int64 insertion points of `v` into the sorted 1-d `a` ('left':
    first suitable position, 'right': last). A scalar `v` gives a NumPy integer."""
    if side not in ("left", "right") and not (isinstance(side, str) and side[:1].lower() in ("l", "r")):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    right = side[:1].lower() == "r"
    x = _arr(a)
    scalar = not isinstance(v, (ndarray, _np.ndarray, list, tuple))
    try:
        vv = _arr(v) if not scalar or not type(v) in (int, float, complex, bool) else \
            _from_numpy(_np.asarray(v, dtype=_result_type(x, v)))
    except OverflowError:
        # A Python int outside a's integer range still has a place: before or after all.
        vv = _arr(v)
    r = _op("searchsorted", x, vv, right, None if sorter is None else _int_array(sorter))
    if r.ndim == 0:
        return r[()]
    return r


# ---------------------------------------------------------------- ndarray methods
def _m_sort(self, axis=-1, kind=None, order=None, *, stable=None):
    """numpy.ndarray.sort: sorts in place."""
    if order is not None:
        return _fallback.wrap_function("ndarray.sort", _np.ndarray.sort)(self, axis, kind, order)
    _check_kind(kind, stable)
    if not self._flags[3]:
        raise ValueError("assignment destination is read-only")
    _op("assign", self, _op("sort", self, _operator.index(axis))) if self.ndim == 1 else \
        self.__setitem__(Ellipsis, _op("sort", self, _operator.index(axis)))


def _m_partition(self, kth, axis=-1, kind="introselect", order=None):
    """numpy.ndarray.partition: partitions in place."""
    if not self._flags[3]:
        raise ValueError("assignment destination is read-only")
    self[...] = partition(self, kth, axis, kind, order)


def _m_argsort(self, axis=-1, kind=None, order=None, *, stable=None):
    return argsort(self, axis, kind, order, stable=stable)


def _m_argpartition(self, kth, axis=-1, kind="introselect", order=None):
    return argpartition(self, kth, axis, kind, order)


def _m_searchsorted(self, v, side="left", sorter=None):
    return searchsorted(self, v, side, sorter)


for _name, _fn in {"sort": _m_sort, "partition": _m_partition, "argsort": _m_argsort,
                   "argpartition": _m_argpartition, "searchsorted": _m_searchsorted}.items():
    setattr(ndarray, _name, _fn)

_wrap_all(globals())
