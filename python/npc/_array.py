"""npc.ndarray's Python-level surface: conversion to and from NumPy, repr, flags, methods.

The type itself is the C++ ``npc._core.ndarray``; this module adds the methods whose
natural home is Python (formatting goes through NumPy's printer on a zero-copy view, so
``repr``/``str`` and print options are NumPy's own).
"""
import operator as _operator
import pickle as _pickle
import sys as _sys
import threading as _threading
import warnings

import numpy as _np

from . import _core
from ._dtypes import DTYPES, code_of

ndarray = _core.ndarray


def _numpy_view(a):
    """Zero-copy numpy.ndarray over an npc array's memory (read-only stays read-only)."""
    try:
        return _np.asarray(memoryview(a))
    except BufferError as e:
        # A traced array is made concrete here (a graph break runs the pending segment): a
        # floating-point error that segment raised under numpy.errstate reaches the caller as
        # itself, not wrapped by the buffer protocol.
        if isinstance(e.__cause__, (ArithmeticError, Warning)):
            raise e.__cause__ from None
        raise


# Note [NumPy subclasses]
# npc implements numpy.ndarray itself, not its subclasses: a masked array, np.matrix,
# np.memmap or a user's subclass of numpy.ndarray carries semantics (a mask, matrix
# products, __array_wrap__, __array_ufunc__ overrides) that a plain view would drop. Every
# conversion of an operand into an npc array (_as_npc here; ndarray_of_numpy and the ufunc
# operands in csrc; the public functions' guard, Note [subclass guard]) treats such an
# object as it treats a non-native dtype: the call runs on NumPy, so the result and its type
# are NumPy's. Results NumPy returns as plain numpy.ndarray (arithmetic on a memmap) become
# npc arrays as every fallback result does.


def _from_numpy(arr):
    """npc view of a numpy.ndarray (zero-copy when native byte order and aligned), or the
    NumPy array itself when its dtype is not native to npc. Operands of npc functions reach
    it through _as_npc, which keeps subclasses NumPy (Note [NumPy subclasses])."""
    code = code_of(arr.dtype) if arr.dtype.isnative else code_of(arr.dtype.newbyteorder("="))
    if code is None:
        return arr
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.aligned:
        arr = arr.copy()
    return _core._from_buffer(arr, code, arr.__array_interface__["data"][0], arr.shape, arr.strides,
                              not arr.flags.writeable)


def _as_npc(obj):
    """npc array for obj (ndarray stays, NumPy arrays are wrapped zero-copy)."""
    if isinstance(obj, ndarray):
        return obj
    if isinstance(obj, _np.ndarray) and type(obj) is not _np.ndarray:
        return obj  # a subclass stays NumPy (Note [NumPy subclasses])
    return _from_numpy(_np.asarray(obj))


# ---------------------------------------------------------------- writes into scalar results
# Note [writes into scalar results] in python/npc/csrc/bind_ndarray.cpp: while tracing, a
# scalar result (a 0-d array marked to act as a NumPy scalar) is never written. Each helper
# costs eager code one call into _core, on paths that write (out=, destinations, setters).
_scalar_result = _core._scalar_result  # any object: False but for a scalar result


def _check_scalar_out(out, message="return arrays must be of ArrayType"):
    """Raises NumPy's TypeError for a scalar result given as `out` (an array, a tuple of
    outputs, or None): "return arrays must be of ArrayType" (ufuncs and the reductions built
    on them), or the `message` of a function NumPy implements in C."""
    if out is None:
        return
    if type(out) is tuple:
        for o in out:
            if _scalar_result(o):
                raise TypeError(message)
    elif _scalar_result(out):
        raise TypeError(message)


def _scalar_type_name(a):
    """NumPy's scalar type name of `a`'s dtype, as NumPy's errors name it ("numpy.float64")."""
    return "numpy." + a.dtype.type.__name__


def _temporary_of_scalar(a):
    """`a`, or when it is a scalar result a copy of it: the temporary array a NumPy scalar's
    method (fill, put, resize, setflags) writes into and drops."""
    return a._copy("A") if _scalar_result(a) else a


def _check_scalar_attribute(self, name):
    """AttributeError of NumPy's scalars for setting or deleting attribute `name` of a scalar
    result (`x.shape = (1,)`)."""
    if _scalar_result(self):
        raise AttributeError(f"attribute '{name}' of 'numpy.generic' objects is not writable")


# ---------------------------------------------------------------- flags
class flagsobj:
    """numpy.ndarray.flags for an npc array (attribute and item access, WRITEABLE settable)."""

    _KEYS = {"C": "c_contiguous", "C_CONTIGUOUS": "c_contiguous", "CONTIGUOUS": "c_contiguous",
             "F": "f_contiguous", "F_CONTIGUOUS": "f_contiguous", "FORTRAN": "f_contiguous",
             "W": "writeable", "WRITEABLE": "writeable", "A": "aligned", "ALIGNED": "aligned",
             "O": "owndata", "OWNDATA": "owndata", "X": "writebackifcopy",
             "WRITEBACKIFCOPY": "writebackifcopy", "FNC": "fnc", "FORC": "forc", "B": "behaved",
             "BEHAVED": "behaved", "CA": "carray", "CARRAY": "carray", "FA": "farray", "FARRAY": "farray"}

    def __init__(self, arr):
        object.__setattr__(self, "_arr", arr)

    c_contiguous = property(lambda self: self._arr._flags[0])
    f_contiguous = property(lambda self: self._arr._flags[1])
    contiguous = c_contiguous
    fortran = f_contiguous
    aligned = property(lambda self: self._arr._flags[2])
    owndata = property(lambda self: self._arr._flags[4])
    writebackifcopy = property(lambda self: False)
    behaved = property(lambda self: self.aligned and self.writeable)
    carray = property(lambda self: self.behaved and self.c_contiguous)
    farray = property(lambda self: self.behaved and self.f_contiguous and not self.c_contiguous)
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    forc = property(lambda self: self.f_contiguous or self.c_contiguous)
    num = property(lambda self: (self.c_contiguous * 1 | self.f_contiguous * 2 | self.owndata * 4
                                 | self.aligned * 256 | self.writeable * 1024))

    @property
    def writeable(self):
        a = self._arr
        w = a._flags[3]
        if w and _core._warn_on_write(a):
            _warn_future("future versions will not create a writeable array from broadcast_array. Set the "
                         "writable flag explicitly to avoid this warning.")
        return w

    @writeable.setter
    def writeable(self, value):
        if _scalar_result(self._arr):  # Note [writes into scalar results]
            raise ValueError("Cannot set flags on array scalars.")
        self._arr._set_writeable(bool(value))

    def __setattr__(self, name, value):
        if _scalar_result(self._arr):  # Note [writes into scalar results]
            raise ValueError("Cannot set flags on array scalars.")
        if name == "writeable":
            flagsobj.writeable.fset(self, value)
        elif name in ("aligned", "writebackifcopy"):
            if value != getattr(self, name):
                raise ValueError(f"cannot set {name.upper()} flag to {value} of this array")
        else:
            raise AttributeError(f"'numpy.flagsobj' object attribute '{name}' is read-only")

    def __getitem__(self, key):
        try:
            return getattr(self, self._KEYS[key])
        except KeyError:
            raise KeyError("Unknown flag") from None

    def __setitem__(self, key, value):
        try:
            name = self._KEYS[key]
        except KeyError:
            raise KeyError("Unknown flag") from None
        setattr(self, name, value)

    def __eq__(self, other):
        return isinstance(other, flagsobj) and self.num == other.num

    def __repr__(self):
        warn = "  (with WARN_ON_WRITE=True)" if _core._warn_on_write(self._arr) else ""
        return "\n".join(f"  {k} : {self._arr._flags[3] if v == 'writeable' else getattr(self, v)}"
                         + (warn if v == "writeable" else "") for k, v in (
            ("C_CONTIGUOUS", "c_contiguous"), ("F_CONTIGUOUS", "f_contiguous"), ("OWNDATA", "owndata"),
            ("WRITEABLE", "writeable"), ("ALIGNED", "aligned"), ("WRITEBACKIFCOPY", "writebackifcopy"))) + "\n"


def _warn_future(msg):
    """FutureWarning attributed to the user's line (the first frame outside npc)."""
    import os
    try:
        warnings.warn(msg, FutureWarning, skip_file_prefixes=(os.path.dirname(__file__) + os.sep,))
    except TypeError:  # Python < 3.12
        warnings.warn(msg, FutureWarning, stacklevel=3)


# ---------------------------------------------------------------- methods
def _repr(self):
    return repr(_numpy_view(self))


def _str(self):
    return str(_numpy_view(self))


def _format(self, spec):
    return format(_numpy_view(self) if self.ndim else _numpy_view(self)[()], spec)


def _array(self, dtype=None, copy=None):
    v = _numpy_view(self)
    if dtype is not None and _np.dtype(dtype) != v.dtype:
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return v.astype(dtype)
    return v.copy() if copy else v


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """numpy.ndarray.astype: values cast to `dtype` (ComplexWarning when dropping imaginary parts)."""
    code = code_of(dtype)
    if code is None:
        return _numpy_view(self).astype(dtype, order=order, casting=casting, copy=copy)
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe'")
    r = self._astype(code, order if order is not None else "K", casting, bool(copy))
    if self._code >= 12 and 0 < code < 12:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      _np.exceptions.ComplexWarning, stacklevel=2)
    if type(self) is not ndarray and r is not self:
        return _finalize_like(r, self) if subok else r
    return r


def _copy(self, order="C"):
    r = self._copy(order)
    return r if type(self) is ndarray else _finalize_like(r, self)


def _fill(self, value):
    self = _temporary_of_scalar(self)  # Note [writes into scalar results]
    if not self._flags[3]:
        raise ValueError("assignment destination is read-only")
    t = type(value)
    if t is float or t is int or t is bool or t is complex:
        self._fill(_coerce_scalar(value, self.dtype))
        return
    # NumPy converts any other value (its scalars, 0-d arrays, sequences) as it converts the
    # value of an element assignment `a[i] = value` (PyArray_Pack: ComplexWarning of a complex
    # scalar, int() of a float scalar into a signed integer dtype, "setting an array element
    # with a sequence"), then copies that element: so does npc, even for an empty array.
    one = _core.empty((1,), code_of(self.dtype), "C")
    one[0] = value
    self[...] = one.reshape(())


def _coerce_scalar(value, dtype):
    """A Python scalar as NumPy's ndarray.fill/setitem converts it for `dtype`: integers go
    through Python's int() (ValueError for NaN, OverflowError for infinities), then NumPy's
    conversion of Python ints (Note [Python ints into arrays]); complex values are a
    TypeError for real dtypes."""
    kind, t = dtype.kind, type(value)
    if kind in "iu" and t is float:
        if value != value:
            raise ValueError("cannot convert float NaN to integer")
        if value in (float("inf"), float("-inf")):
            raise OverflowError("cannot convert float infinity to integer")
        value = int(value)
        t = int
    if t is complex and kind in "iu":
        raise TypeError("int() argument must be a string, a bytes-like object or a real number, not 'complex'")
    if t is complex and kind == "f":
        raise TypeError("float() argument must be a string or a real number, not 'complex'")
    if t is int:
        value = _check_python_int(value, dtype)
    return value


# Note [Python ints into arrays]
# NumPy converts a Python int for an array of `dtype` in two steps (measured, NumPy 2.5). For
# an integer dtype, first to a C integer: a C long, or for uint32 and uint64 (whose setters
# try an unsigned long long first) anything in [-2**63, 2**64); outside that it raises
# OverflowError "Python int too large to convert to C long". Then NEP 50's check that the
# value fits the dtype: "Python integer 300 out of bounds for int8". Float and complex
# dtypes take float(value): "int too large to convert to float" past float64's range. A
# bool array's setter (setitem, fill, numpy.array) takes the value's truth, of any size;
# copyto (numpy.full, numpy.full_like: `setter` False) converts it as a C long first.
def _check_python_int(value, dtype, setter=True):
    """OverflowError, with NumPy's message, for a Python int that cannot go into an array of
    `dtype` (Note [Python ints into arrays]). Returns the value to store: past 64 bits, a
    bool array's setter takes its truth and a float or complex array float(value)."""
    if type(value) is not int:
        return value
    kind = dtype.kind
    if kind in "iub":
        if kind == "b" and setter:
            return bool(value)
        hi = 2 ** 64 if kind == "u" and dtype.itemsize >= 4 else 2 ** 63
        if not -2 ** 63 <= value < hi:
            raise OverflowError("Python int too large to convert to C long")
        if kind == "b":
            return bool(value)
        info = _np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    elif kind in "fc" and not -2 ** 63 <= value < 2 ** 64:
        return float(value)  # OverflowError: int too large to convert to float
    return value


_TYPE = type

# Note [ndarray subclasses]
# Python subclasses of npc.ndarray follow NumPy's subclassing protocol: ``a.view(cls)`` and
# ``cls(shape, ...)`` (through ``__new__``) make instances, ``__array_finalize__(obj)`` runs for
# every new instance (obj None from the constructor, the source array for views, slices and
# ufunc results), views and slices keep the class (bindings: finalize_like), and ufunc and
# operator results take the class of the operand of highest ``__array_priority__`` through its
# ``__array_wrap__`` (bindings: wrap_ufunc_result), 0-d results included, as NumPy does. So
# do ufunc.reduce/accumulate/outer/reduceat, ``@`` and matmul-like functions (NumPy ufuncs);
# the results of public functions follow NumPy's rule for each function (Note [subclass
# results of functions] in _interop.py). Instance attributes (``info``) live in the
# instance's ``__dict__``.


def _as_subclass(arr, cls, obj):
    """`arr` (an npc array) as an instance of `cls`, finalized from `obj`."""
    r = arr if type(arr) is cls else _core._view_as(arr, cls)
    fin = getattr(r, "__array_finalize__", None)
    if fin is not None:
        fin(obj)
    return r


def _finalize_like(result, self):
    """A view or copy `result` of `self` as self's subclass (called by the bindings)."""
    return _as_subclass(result, type(self), self)


def _subclass_wrapper(inputs):
    """The instance of a Python subclass of npc.ndarray of highest __array_priority__ among
    `inputs` (the first on ties), or None."""
    best = None
    for x in inputs:
        if isinstance(x, ndarray) and type(x) is not ndarray:
            if best is None or getattr(x, "__array_priority__", 0.0) > getattr(best, "__array_priority__", 0.0):
                best = x
    return best


def _wrap_result(result, best, keep_0d=True):
    """`result` (an npc array, a NumPy scalar when `keep_0d` makes it a 0-d array, or a
    tuple, list or named tuple of them) wrapped by `best`'s __array_wrap__."""
    if isinstance(result, (tuple, list)):
        items = [_wrap_result(r, best, keep_0d) for r in result]
        if type(result) in (tuple, list):
            return type(result)(items)
        return type(result)(*items)  # a named tuple (QRResult, UniqueCountsResult, ...)
    if not isinstance(result, ndarray):
        if not keep_0d or not isinstance(result, _np.generic):
            return result
        result = _core._from_numpy(_np.asarray(result))
    if type(result) is type(best):
        return result  # a view made (and finalized) from `best` already
    return best.__array_wrap__(result, None, False)


def _wrap_ufunc_result(result, inputs):
    """A ufunc/operator result, wrapped by the subclass operand of highest priority."""
    best = _subclass_wrapper(inputs)
    if best is None:
        return result
    return _wrap_result(result, best)


def _array_wrap(self, arr, context=None, return_scalar=False):
    """numpy.ndarray.__array_wrap__: `arr` as an instance of this array's class (a scalar
    when `return_scalar` and `arr` is 0-d)."""
    if return_scalar and getattr(arr, "ndim", 1) == 0:
        return arr[()]
    if not isinstance(arr, ndarray):
        return arr
    return _as_subclass(arr, type(self), self)


def _array_finalize(self, obj):
    """numpy.ndarray.__array_finalize__: a hook for subclasses (does nothing here)."""


def _view(self, dtype=None, type=None):
    if type is not None and isinstance(type, _TYPE) and issubclass(type, ndarray):
        base = self._view(self._code) if dtype is None else _view(self, dtype)
        return _as_subclass(_core._view_as(base, type), type, self)
    if dtype is not None and type is None and isinstance(dtype, _TYPE) and issubclass(dtype, ndarray):
        return _as_subclass(_core._view_as(self._view(self._code), dtype), dtype, self)
    if type is not None:
        return _numpy_view(self).view(dtype, type) if dtype is not None else _numpy_view(self).view(type)
    if dtype is None:
        return self._view(self._code)
    if isinstance(dtype, _TYPE) and issubclass(dtype, _np.ndarray):
        return _numpy_view(self).view(dtype)
    code = code_of(dtype)
    if code is None:
        return _numpy_view(self).view(dtype)
    return self._view(code)


def _reshape(self, *shape, order="C", copy=None):
    if not shape:
        raise TypeError("reshape() takes exactly 1 argument (0 given)")
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    if copy:
        return self._copy("C" if order in ("C", "A", "K") else order)._reshape(shape, order)
    r = self._reshape(shape, order)
    if copy is False and r._storage_id != self._storage_id:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return r


def _transpose(self, *axes):
    if not axes or (len(axes) == 1 and axes[0] is None):
        return self.T
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = tuple(axes[0])
    return self._transpose([_operator.index(a) for a in axes])


def _tobytes(self, order="C"):
    return self._tobytes(order)


def _item(self, *args):
    if not args:
        return self._item()
    if len(args) == 1:
        if isinstance(args[0], tuple):
            return self._item_at(list(args[0]))
        idx = int(args[0])
        n = self.size
        if idx < -n or idx >= n:
            raise IndexError("index %d is out of bounds for size %d" % (idx, n))
        return _numpy_view(self).item(idx)
    return self._item_at(list(args))


def _tolist(self):
    return _numpy_view(self).tolist()


def _len(self):
    if self.ndim == 0:
        raise TypeError("len() of unsized object")
    return self.shape[0]


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return (self[i] for i in range(self.shape[0]))


def _bool(self):
    if self.size != 1:
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "Use a.any() or a.all()" if self.size > 1 else
                         "The truth value of an empty array is ambiguous. Use `array.size > 0` to "
                         "check that an array is not empty.")
    return bool(self._item())


def _scalar_conv(kind):
    def conv(self):
        # NumPy 2.5 (after the 1.25 deprecation): only 0-d arrays convert to Python scalars.
        if self.ndim > 0:
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        # A traced 0-d value that stands for a NumPy scalar (Note [scalar results]) converts
        # as that scalar.
        scalar = _core._scalar_result(self)
        v = _numpy_view(self)[()]
        if kind is not complex and self.dtype.kind == "c" and not scalar:
            # A complex array converts as a Python complex does (TypeError), not as the NumPy
            # complex scalar (ComplexWarning and the real part).
            return kind(v.item())
        return kind(v)
    return conv


def _index(self):
    if self.ndim != 0 or self.dtype.kind not in "iub":
        raise TypeError("only integer scalar arrays can be converted to a scalar index")
    if self.dtype.kind == "b":
        raise TypeError("only integer scalar arrays can be converted to a scalar index")
    return self._item()


def _scalar_part(self, part):
    # The .real/.imag of a traced value standing for a NumPy scalar (Note [scalar results] in
    # src/tracer/trace.hpp) is a NumPy scalar too: a value, not a view.
    if self.ndim == 0 and _core._is_traced(self) and _core._scalar_result(self):
        r = part.copy()
        _core._mark_scalar(r)
        return r
    return part


def _real_get(self):
    return _scalar_part(self, self._real())


def _real_set(self, value):
    _check_scalar_attribute(self, "real")  # Note [writes into scalar results]
    _core._copy_into(self._real(), _broadcast_value(value, self))


def _imag_get(self):
    return _scalar_part(self, self._imag())


def _imag_set(self, value):
    _check_scalar_attribute(self, "imag")  # Note [writes into scalar results]
    if self.dtype.kind != "c":
        raise TypeError("Cannot set imaginary part of non-complex array.")
    _core._copy_into(self._imag(), _broadcast_value(value, self))


def _broadcast_value(value, like):
    v = _np.broadcast_to(_np.asarray(value, dtype=like.real.dtype if like.dtype.kind == "c" else like.dtype),
                         like.shape)
    # numpy.ascontiguousarray would make a 0-d value 1-d (and a 0-d .real unassignable).
    return _from_numpy(_np.array(v, order="C"))


def _reduce(self):
    # order="K" keeps a Fortran-ordered array Fortran-ordered through pickling, as NumPy does.
    if type(self) is not ndarray:
        # A subclass pickles as NumPy's do: an empty instance of the class, then NumPy's state
        # through __setstate__ (which subclasses extend to carry their attributes).
        return (_reconstruct_subclass, (type(self),), _numpy_view(self).__reduce__()[2])
    return (_reconstruct, (_numpy_view(self).copy(order="K"),))


# Note [pickle protocol 5]
# With protocol 5 a C- or Fortran-contiguous npc array pickles its memory as a PickleBuffer
# (PEP 574), as NumPy's arrays do: given a ``buffer_callback`` (Dask's and multiprocessing's
# transports pass one) the bytes travel out of band without any copy, and unpickling wraps the
# received buffer without copying again. Other layouts, subclasses and older protocols use
# __reduce__ (a copy in memory order, as NumPy's).
def _reduce_ex(self, protocol):
    if protocol < 5 or type(self) is not ndarray:
        return self.__reduce__()
    v = _numpy_view(self)
    if v.flags.c_contiguous:
        order = "C"
    elif v.flags.f_contiguous:
        order = "F"
        v = v.T  # the same memory as a C-contiguous buffer (consumers read buffers in C order)
    else:
        return self.__reduce__()
    return (_reconstruct_buffer, (_pickle.PickleBuffer(v), v.dtype, v.shape, order))


def _reconstruct_buffer(buf, dtype, shape, order):
    """The array that _reduce_ex pickled, over the unpickled buffer (no copy); `shape` is
    the buffer's C-order shape (reversed for a Fortran-ordered array)."""
    a = _np.frombuffer(buf, dtype=dtype).reshape(shape)
    if not a.flags.aligned:  # a transport may hand over memory at any offset
        a = a.copy()
    return _from_numpy(a.T if order == "F" else a)


def _reconstruct_subclass(cls):
    """An empty instance of an npc.ndarray subclass (unpickling; __setstate__ fills it)."""
    return cls.__new__(cls, (0,), _np.uint8)


def _setstate(self, state):
    """numpy.ndarray.__setstate__: replaces the array in place by the one `state` describes
    (``(version, shape, dtype, is_fortran, rawdata)`` or the 4-tuple without the version, as
    ``numpy.ndarray.__reduce__`` gives it). NumPy validates the state and raises its errors;
    dtypes npc does not hold natively raise TypeError."""
    t = _np.empty(0)
    t.__setstate__(state)
    if code_of(t.dtype) is None:
        raise TypeError(f"npc arrays cannot hold dtype {t.dtype} (not native to npc)")
    if not t.dtype.isnative:
        t = t.astype(t.dtype.newbyteorder("="))
    from ._creation import _adopt
    _core._take_over(self, _adopt(t.copy(order="K")))


def _reconstruct(arr):
    return _from_numpy(arr)


def _copy_method(self):
    r = self._copy("A")
    return r if type(self) is ndarray else _finalize_like(r, self)


def _deepcopy(self, memo=None):
    return _copy_method(self)


def _array_namespace(self, *, api_version=None):
    import npc
    return npc


_METHODS = {
    "__repr__": _repr, "__str__": _str, "__format__": _format, "__array__": _array,
    "astype": _astype, "copy": _copy, "fill": _fill, "view": _view, "reshape": _reshape,
    "transpose": _transpose, "tobytes": _tobytes, "item": _item, "tolist": _tolist,
    "__len__": _len, "__iter__": _iter, "__bool__": _bool, "__int__": _scalar_conv(int),
    "__float__": _scalar_conv(float), "__complex__": _scalar_conv(complex), "__index__": _index,
    "__reduce__": _reduce, "__reduce_ex__": _reduce_ex, "__setstate__": _setstate,
    "__copy__": _copy_method, "__deepcopy__": _deepcopy,
    "__array_namespace__": _array_namespace, "__array_wrap__": _array_wrap,
    "__array_finalize__": _array_finalize,
}
for _name, _fn in _METHODS.items():
    setattr(ndarray, _name, _fn)
ndarray.flags = property(flagsobj, doc="numpy.ndarray.flags: memory layout flags.")
ndarray.real = property(_real_get, _real_set, doc="Real part (a view for complex arrays).")
ndarray.imag = property(_imag_get, _imag_set, doc="Imaginary part (a view for complex arrays).")
ndarray.__array_priority__ = 100.0
ndarray.__hash__ = None
ndarray.__module__ = "npc"


# Note [classes of traced values]
# The program a compiled function traces is NumPy code: it gets npc arrays where NumPy gives
# numpy.ndarray objects and NumPy scalars (Note [scalar results] in src/tracer/trace.hpp), so
# code that branched on `isinstance(x, np.ndarray)` or `isinstance(x.sum(), float)` took the
# other branch, a silently different result. isinstance(v, C), when type(v) is not C or a
# subclass of it, asks v.__class__ (as ABCs do); for a traced value, and for any npc array
# while a compiled function's Python runs (its trace, the eager code after a graph break,
# and the eager calls on npc views of its arguments: Note [eager npc calls] in
# compiler/_convert.py), the answer is NumPy's value's class: numpy.ndarray, or for a scalar
# result the scalar type of its dtype (numpy.float64, a float). npc's own code
# (a caller whose module is npc or under it) gets the real class, so that its checks for
# NumPy arrays never take a traced value for one; C++ checks npc arrays first. `type(v)` is
# still npc's, a documented difference as for runtime ints.
_as_numpy = _threading.local()


def _class_of(self):
    if _core._is_traced(self) or getattr(_as_numpy, "depth", 0):
        caller = _sys._getframe(1).f_globals.get("__name__", "")
        if not (caller == "npc" or caller.startswith("npc.")):
            if self.ndim == 0 and _core._is_traced(self) and _core._scalar_result(self):
                return self.dtype.type
            return _np.ndarray
    return type(self)


class _ActingAsNumpy:
    """While entered (a compiled function's Python running on this thread), npc arrays
    answer __class__ as numpy.ndarray to code outside npc."""

    def __enter__(self):
        _as_numpy.depth = getattr(_as_numpy, "depth", 0) + 1

    def __exit__(self, *exc):
        _as_numpy.depth -= 1


_core._set_class_property(ndarray, property(_class_of, doc="NumPy's class while tracing (Note [classes of "
                                                          "traced values]), else the array's type."))
