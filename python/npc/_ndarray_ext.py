"""npc.ndarray's constructor, its in-place setters (shape, strides, dtype) and resize.

Note [ndarray constructor]
``npc.ndarray(shape, dtype=float, buffer=None, offset=0, strides=None, order=None)`` is
numpy.ndarray's low-level constructor. The type is the C++ ``npc._core.ndarray``, whose
instances the core creates without calling ``__new__``; so a Python ``__new__`` installed
here serves only the public constructor. With a buffer (any object with the buffer
protocol: bytes and other read-only buffers give read-only arrays) the array views the
buffer's memory, keeps the buffer exported while it lives, and has the exporter as its
``base``. Arrays of dtypes npc does not run natively, and unaligned views of a buffer,
are numpy.ndarray objects, as everywhere else in npc.
"""
import operator
import warnings
import weakref

import numpy as _np

from . import _core
from ._dtypes import code_of

ndarray = _core.ndarray


def _int_tuple(value, what):
    """A tuple of ints from an int or a sequence of ints, with NumPy's TypeErrors."""
    if value is None:
        raise TypeError(f"Use () not None as {what} arguments")
    if isinstance(value, ndarray):
        value = value.tolist()
    elif isinstance(value, _np.ndarray):
        value = value.tolist()
    try:
        return (operator.index(value),)
    except TypeError:
        pass
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        if isinstance(value, (str, bytes)):
            raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")
        raise TypeError(f"expected a sequence of integers or a single integer, got '{value!r}'")
    return tuple(operator.index(v) for v in value)


def _new(cls, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
    """numpy.ndarray(shape, dtype=float, buffer=None, offset=0, strides=None, order=None).

    Parameters mirror numpy.ndarray: without `buffer` a new uninitialised array (C order, or
    Fortran for ``order='F'``; `strides` must fit its size * itemsize bytes); with `buffer`
    a view of the buffer's memory from byte `offset` on, sharing memory with it and keeping
    it alive. Errors as NumPy: ValueError for negative dimensions, strides of the wrong
    length ("strides, if given, must be the same length as shape") or reaching outside the
    buffer ("strides is incompatible with shape of requested array and size of buffer");
    TypeError "buffer is too small for requested array", and for objects without the
    buffer protocol. A negative `offset` is a ValueError (NumPy reads before the buffer).
    """
    if cls is not ndarray:
        # A subclass (Note [ndarray subclasses] in _array.py): the array, then its class,
        # finalized with None as NumPy's constructor does.
        r = _new(ndarray, shape, dtype, buffer, offset, strides, order)
        if not isinstance(r, ndarray):
            raise TypeError(f"npc.ndarray subclasses hold native dtypes only (got {r.dtype})")
        from ._array import _as_subclass
        return _as_subclass(r, cls, None)
    code = code_of(FLOAT if dtype is None else dtype)
    shape_t = _int_tuple(shape, "shape")
    strides_t = None if strides is None else _int_tuple(strides, "strides")
    offset = operator.index(offset)
    if order is None:
        order = "C"
    if isinstance(buffer, ndarray) and not (buffer.flags.c_contiguous or buffer.flags.f_contiguous):
        raise ValueError("ndarray is not contiguous")  # NumPy's exporter's error, not pybind11's
    if code is not None:
        r = _core._ndarray_new(shape_t, code, buffer, offset, strides_t, order)
        if r is not None:
            return r
    return _np.ndarray(shape_t, dtype, buffer, offset if buffer is not None else 0, strides_t, order)


FLOAT = _np.float64


def _init(self, *args, **kwargs):
    """Instances are complete after __new__ (numpy.ndarray's __init__ does nothing either)."""


# ---------------------------------------------------------------- in-place setters
_SHAPE_DEPRECATION = ("Setting the shape on a NumPy array has been deprecated in NumPy 2.5.\n"
                      "As an alternative, you can create a new view using np.reshape (with copy=False if needed).")
_STRIDES_DEPRECATION = ("Setting the strides on a NumPy array has been deprecated in NumPy 2.4.\n"
                        "As an alternative, you can create a new view using np.lib.stride_tricks.as_strided.")
_DTYPE_DEPRECATION = ("Setting the dtype on a NumPy array has been deprecated in NumPy 2.5.\n"
                      "Instead of changing the dtype on an array x, create a new array with x.view(new_dtype)")


def _check_scalar_attribute(self, name):
    # Note [writes into scalar results] in python/npc/csrc/bind_ndarray.cpp (NumPy's scalars
    # raise before any deprecation warning).
    if _core._scalar_result(self):
        raise AttributeError(f"attribute '{name}' of 'numpy.generic' objects is not writable")


def _set_shape(self, value):
    """numpy's ``a.shape = ...`` (deprecated in NumPy 2.5): in place, never a copy."""
    _check_scalar_attribute(self, "shape")
    warnings.warn(_SHAPE_DEPRECATION, DeprecationWarning, stacklevel=2)
    if value is None:
        raise TypeError("Use () not None as shape arguments")
    shape = _int_tuple(value, "shape")
    view = self._reshape(shape, "C")
    # A reshape keeps the offset, so sharing the storage means viewing the same memory
    # (and reading no data pointer keeps a traced array traced).
    if not _core._shares_storage(self, view):
        raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` to make a copy "
                             "with the desired shape.")
    _core._assign_geometry(self, view)


def _set_strides(self, value):
    """numpy's ``a.strides = ...`` (deprecated in NumPy 2.4): every element must stay
    inside the array's memory."""
    _check_scalar_attribute(self, "strides")
    warnings.warn(_STRIDES_DEPRECATION, DeprecationWarning, stacklevel=2)
    try:
        strides = _int_tuple(value, "strides")
    except TypeError:
        raise TypeError("invalid strides") from None
    _core._set_strides(self, strides)


def _set_dtype(self, value):
    """numpy's ``a.dtype = ...`` (deprecated in NumPy 2.5): ``a.view(dtype)`` in place."""
    _check_scalar_attribute(self, "dtype")
    warnings.warn(_DTYPE_DEPRECATION, DeprecationWarning, stacklevel=2)
    try:
        dt = _np.dtype(value)
    except TypeError:
        raise TypeError("invalid data-type for array") from None
    code = code_of(dt)
    if code is None or not dt.isnative:
        if dt.kind == "O":
            raise TypeError("Cannot change data-type for array of references.")
        raise TypeError(f"npc arrays cannot change their dtype in place to {dt} (not native to npc); "
                        f"use a.view({str(dt)!r}) for a NumPy view")
    _core._assign_geometry(self, self._view(code))


_PKG_DIR = __import__("os").path.dirname(__file__) + __import__("os").sep


def _warn_write():
    """The DeprecationWarning of a first write to a broadcast_arrays view (NumPy's
    WARN_ON_WRITE flag), attributed to the user's line."""
    msg = ("Numpy has detected that you (may be) writing to an array with\n"
           "overlapping memory from np.broadcast_arrays. If this is intentional\n"
           "set the WRITEABLE flag True or make a copy immediately before writing.")
    try:
        warnings.warn(msg, DeprecationWarning, skip_file_prefixes=(_PKG_DIR,))
    except TypeError:  # Python < 3.12
        warnings.warn(msg, DeprecationWarning, stacklevel=3)


def _no_delete(name):
    def deleter(self):
        _check_scalar_attribute(self, name)
        raise AttributeError(f"Cannot delete array {name}")
    return deleter


def _resize_impl(self, refs, *new_shape, **kwargs):
    """numpy.ndarray.resize(new_shape, refcheck=True): changes shape and size in place.

    The data keeps its memory order (C, or Fortran for Fortran-ordered arrays); new elements
    are zero. Non-contiguous arrays raise ValueError "resize only works on single-segment
    arrays". Changing the size needs an array that owns its data (ValueError "cannot
    resize this array: it does not own its data") and, with `refcheck`, that nothing else
    refers to it (no other name, view or weak reference: ValueError "cannot resize an
    array that references or is referenced by another object in this way."). Views made
    before a resize with refcheck=False keep the old memory (NumPy leaves them dangling).
    Returns None.
    """
    if _core._scalar_result(self):
        # A NumPy scalar resizes a temporary array (NumPy's, with its errors) and drops it:
        # Note [writes into scalar results] in python/npc/csrc/bind_ndarray.cpp.
        return _np.zeros((), self.dtype).resize(*new_shape, **kwargs)
    refcheck = True
    for key, value in kwargs.items():
        if key != "refcheck":
            raise TypeError(f"'{key}' is an invalid keyword argument for this function")
        refcheck = bool(value)
    if not new_shape or (len(new_shape) == 1 and new_shape[0] is None):
        return None
    shape = _int_tuple(new_shape[0] if len(new_shape) == 1 else new_shape, "shape")
    if _changes_size(self, shape) and self.flags.owndata:
        # `refs`: references to self when the method was entered (Note [resize refcheck]);
        # two are the caller's and the call's, views hold the array as their base.
        if (refcheck and refs > 2) or weakref.getweakrefcount(self):
            raise ValueError("cannot resize an array that references or is referenced\n"
                             "by another object in this way.\n"
                             "Use the np.resize function to get a new resized copy or\n"
                             " set refcheck=False to disable this check")
    _core._resize(self, shape)
    return None


def _changes_size(self, shape):
    n = 1
    for d in shape:
        n *= d
    return n != self.size


def install():
    """Installs the constructor, the setters and resize on npc.ndarray."""
    ndarray.__new__ = staticmethod(_new)
    ndarray.__init__ = _init
    ndarray.shape = property(ndarray.shape.fget, _set_shape, _no_delete("shape"),
                             doc="numpy.ndarray.shape: the dimensions (settable in place, deprecated).")
    ndarray.strides = property(ndarray.strides.fget, _set_strides, _no_delete("strides"),
                               doc="numpy.ndarray.strides: byte steps per axis (settable, deprecated).")
    ndarray.dtype = property(ndarray.dtype.fget, _set_dtype, _no_delete("dtype"),
                             doc="numpy.ndarray.dtype: element type (settable in place, deprecated).")
    _core._install_resize(ndarray, _resize_impl, _resize_impl.__doc__)
