"""Indexing, selection, sorting and set operations (numpy.take, nonzero, sort, unique, ...).

``ndarray.__getitem__``/``__setitem__`` are implemented in C++ (src/core/indexing.cpp,
bound in csrc/bind_indexing.cpp); this module holds the Python-side helpers of key and
value conversion and the NumPy functions of this layer.
"""
import warnings

import numpy as _np

from . import _core
from ._array import _as_npc, _from_numpy, ndarray
from ._dtypes import DTYPES

__all__ = []

_VALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
          "boolean arrays are valid indices")


def _index_array(obj, from_sequence):
    """An npc integer/bool array for a NumPy array, NumPy bool scalar or nested sequence
    used as an index; IndexError (NumPy's text) for anything else."""
    if from_sequence:
        try:
            arr = _np.asarray(obj)
        except ValueError:
            raise IndexError(_VALID) from None
        if arr.size == 0 and arr.dtype.kind not in "iub":
            arr = arr.astype(_np.intp)
        if arr.dtype.kind not in "iub":
            raise IndexError(_VALID)
    else:
        arr = _np.asarray(obj)
        if arr.dtype.kind not in "iub":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return _from_numpy(arr)


def _setitem_value(value, code):
    """The right-hand side of ``a[key] = value`` as an npc array, converted as NumPy does:
    arrays and NumPy scalars keep their dtype (cast later, ComplexWarning when dropping an
    imaginary part); Python objects and sequences are coerced to the target dtype."""
    dtype = DTYPES[code]
    if isinstance(value, (_np.ndarray, _np.generic)):
        arr = _np.asarray(value)
        if arr.dtype.kind == "c" and dtype.kind not in "cb":
            warnings.warn("Casting complex values to real discards the imaginary part",
                          _np.exceptions.ComplexWarning, stacklevel=3)
        r = _from_numpy(arr)
        if not isinstance(r, ndarray):
            r = _from_numpy(arr.astype(dtype))
        return r
    return _from_numpy(_np.asarray(value, dtype=dtype))
