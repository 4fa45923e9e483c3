"""Array creation with NumPy's names, signatures and rules (numpy.array, zeros, arange, ...).

Native dtypes are created by the C++ core; Python-object coercion (nested lists, scalars,
other array-likes) uses NumPy's own array coercion, whose result npc adopts without copying.
Non-native dtypes stay NumPy arrays.
"""
import operator
import sys as _sys

import numpy as _np

from . import _core
from ._array import _as_npc, _check_python_int, _from_numpy, ndarray
from ._dtypes import BOOL, COMPLEX128, DTYPES, FLOAT64, INT64, code_of
from . import _ndarray_ext

_ndarray_ext.install()

_ORDERS = ("C", "F", "A", "K")


def _shape_arg(shape):
    """Shape from an int or a sequence of ints; TypeError otherwise (as NumPy)."""
    if isinstance(shape, ndarray):
        shape = shape.tolist()
    try:
        return (operator.index(shape),)
    except TypeError:
        pass
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"'{type(shape).__name__}' object cannot be interpreted as an integer") from None


def _check_device(device):
    """NumPy's check of ``device=``: only "cpu" (or None) until npc has a device backend."""
    if device is not None and not (type(device) is str and device == "cpu"):
        raise ValueError(f'Device not understood. Only "cpu" is allowed, but received: {device}')


def _check_order(order, allowed=("C", "F")):
    if order is None:
        return "C"
    if not isinstance(order, str) or order.upper() not in allowed:
        raise ValueError(f"order must be one of {', '.join(repr(o) for o in allowed)} (got {order!r})")
    return order.upper()


def _wrap_numpy_result(r):
    if type(r) is _np.ndarray and r.dtype.isnative and r.flags.aligned:
        # Referrers: the caller's temporary (now this frame's argument) and getrefcount's.
        if _sys.getrefcount(r) == 2:
            return _adopt(r)
        return _from_numpy(r)
    return r


def _adopt(arr):
    """npc array taking over a NumPy array that nothing else refers to (the caller checks):
    zero-copy, with OWNDATA set and no base, as the array NumPy made would have. Other
    NumPy arrays are wrapped as views of their owner (_from_numpy)."""
    code = code_of(arr.dtype)
    f = arr.flags
    if code is None or arr.base is not None or not (f.owndata and f.aligned and (f.c_contiguous or f.f_contiguous)):
        return _from_numpy(arr)
    return _core._adopt_numpy(arr, code, arr.__array_interface__["data"][0], arr.shape, arr.strides,
                              not f.writeable)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """numpy.array: an npc array from array-likes, nested sequences or scalars.

    Parameters mirror numpy.array. NumPy arrays are adopted without copying when
    ``copy=False``/``None`` allows; nested sequences are coerced by NumPy's rules (ragged
    input raises ValueError, unknown dtypes TypeError). Non-native dtypes (strings,
    datetime64, object, ...) return numpy.ndarray.
    """
    if isinstance(object, ndarray):
        code = object._code if dtype is None else code_of(dtype)
        if code is None:
            return _np.array(_np.asarray(object), dtype=dtype, copy=copy, order=order, ndmin=ndmin)
        if code == object._code and copy is not True and (order in ("K", "A", None) or
                                                         object.flags[order.upper()]):
            r = object
        else:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.\n"
                                 "If using `np.array(obj, copy=False)` replace it with `np.asarray(obj)` "
                                 "to allow a copy when needed (no behavior change in NumPy 1.x).\n"
                                 "For more details, see https://numpy.org/devdocs/numpy_2_0_migration_guide.html#adapt-to-changes-in-the-copy-keyword.")
            r = object._astype(code, order or "K", "unsafe", True)
        if ndmin > r.ndim:
            r = r._reshape((1,) * (ndmin - r.ndim) + r.shape, "C")
        return r
    if dtype is not None and type(object) is int:
        _check_python_int(object, _np.dtype(dtype))
    arr = _np.array(object, dtype=dtype, copy=copy, order=order, subok=subok, ndmin=ndmin)
    if isinstance(arr, _np.ma.MaskedArray) or type(arr) is not _np.ndarray:
        return arr
    if not arr.dtype.isnative or not arr.flags.aligned:
        # Byte-swapped and unaligned memory stays a NumPy array (its dtype and layout are not
        # npc's); npc operations convert such operands on entry.
        return arr
    if _sys.getrefcount(arr) == 2:  # NumPy made it for us (from a list, a scalar, ...)
        return _adopt(arr)
    return _from_numpy(arr)


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """numpy.asarray: `a` itself when it already is an npc array of `dtype`, else a
    conversion (zero-copy for NumPy arrays)."""
    _check_device(device)
    if isinstance(a, ndarray) and (dtype is None or code_of(dtype) == a._code) and copy is not True \
            and (order in (None, "K", "A") or a.flags[order.upper()]):
        return a
    return array(a, dtype=dtype, copy=copy, order=order if order is not None else "K")


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """numpy.asanyarray (npc has no ndarray subclasses; same as asarray)."""
    _check_device(device)
    return asarray(a, dtype=dtype, order=order, copy=copy)


def ascontiguousarray(a, dtype=None, *, like=None):
    """numpy.ascontiguousarray: a C-contiguous array of ndim >= 1 (`a` itself when it
    already is one)."""
    return array(a, dtype=dtype, copy=None, order="C", ndmin=1)


def asfortranarray(a, dtype=None, *, like=None):
    """numpy.asfortranarray: a Fortran-contiguous array of ndim >= 1."""
    return array(a, dtype=dtype, copy=None, order="F", ndmin=1)


def _code_or_none(dtype, default):
    return default if dtype is None else code_of(dtype)


def empty(shape, dtype=float, order="C", *, device=None, like=None):
    """numpy.empty: an uninitialised array. ValueError for negative dimensions, MemoryError
    when it cannot be allocated."""
    _check_device(device)
    code = _code_or_none(dtype, FLOAT64)
    if code is None:
        return _np.empty(shape, dtype, order)
    return _core.empty(_shape_arg(shape), code, _check_order(order))


def zeros(shape, dtype=float, order="C", *, device=None, like=None):
    """numpy.zeros: an array of zeros of `shape` (int or tuple) and `dtype` (default float64)."""
    _check_device(device)
    code = _code_or_none(dtype, FLOAT64)
    if code is None:
        return _np.zeros(shape, dtype, order)
    return _core.zeros(_shape_arg(shape), code, _check_order(order))


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    """numpy.ones: an array of ones (default float64)."""
    _check_device(device)
    code = _code_or_none(dtype, FLOAT64)
    if code is None:
        return _np.ones(shape, dtype, order)
    return _core.full(_shape_arg(shape), 1, code, _check_order(order))


def _scalar_fill(value):
    return isinstance(value, (bool, int, float, complex, _np.generic)) or (
        isinstance(value, ndarray) and value.ndim == 0)


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """numpy.full: an array of `shape` filled with `fill_value` (dtype defaults to the fill
    value's own: int64 for Python ints, float64 for floats). OverflowError for a Python int
    out of range of an integer `dtype`."""
    _check_device(device)
    if dtype is None:
        dtype = _np.array(fill_value).dtype if not isinstance(fill_value, ndarray) else fill_value.dtype
    code = code_of(dtype)
    if code is None or not _scalar_fill(fill_value):
        return _wrap_numpy_result(_np.full(shape, _np.asarray(fill_value), dtype, order))
    fill_value = _check_python_int(fill_value, _np.dtype(dtype), setter=False)  # copyto's conversion
    if isinstance(fill_value, ndarray):
        fill_value = fill_value._scalar()
    r = _core.full(_shape_arg(shape), fill_value, code, _check_order(order))
    fill_complex_warning(fill_value, code, 2)
    return r


def fill_complex_warning(fill_value, code, stacklevel):
    """NumPy's ComplexWarning of full/full_like (their copyto with casting='unsafe') when a
    complex fill value goes into an array of a real dtype (`code`: npc's dtype code); the
    cast to bool (a test for nonzero) never warns."""
    if DTYPES[code].kind not in "cb" and (isinstance(fill_value, (complex, _np.complexfloating)) or
                                         getattr(fill_value, "dtype", None) is not None and
                                         _np.dtype(fill_value.dtype).kind == "c"):
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part",
                      _np.exceptions.ComplexWarning, stacklevel=stacklevel + 1)


def _like_args(prototype, dtype, order, shape):
    p = _as_npc(prototype) if not isinstance(prototype, ndarray) else prototype
    if not isinstance(p, ndarray):
        return None, None, None, None
    code = -1 if dtype is None else code_of(dtype)
    if code is None:
        return None, None, None, None
    order = _check_order(order, _ORDERS)
    return p, code, order, None if shape is None else _shape_arg(shape)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy.empty_like: uninitialised array with the prototype's shape, dtype and layout."""
    _check_device(device)
    p, code, order, shape = _like_args(prototype, dtype, order, shape)
    if p is None:
        return _wrap_numpy_result(_np.empty_like(_np.asarray(prototype), dtype, order, subok, shape))
    return _core.empty_like(p, code, order, shape)


def zeros_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy.zeros_like."""
    _check_device(device)
    p, code, order, shape = _like_args(prototype, dtype, order, shape)
    if p is None:
        return _wrap_numpy_result(_np.zeros_like(_np.asarray(prototype), dtype, order, subok, shape))
    return _core.zeros_like(p, code, order, shape)


def ones_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy.ones_like."""
    _check_device(device)
    p, code, order, shape = _like_args(prototype, dtype, order, shape)
    if p is None:
        return _wrap_numpy_result(_np.ones_like(_np.asarray(prototype), dtype, order, subok, shape))
    return _core.full_like(p, 1, code, order, shape)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy.full_like."""
    _check_device(device)
    p, code, order, shp = _like_args(a, dtype, order, shape)
    if p is None or not _scalar_fill(fill_value):
        return _wrap_numpy_result(_np.full_like(_np.asarray(a), _np.asarray(fill_value), dtype, order,
                                                subok, shape))
    fill_value = _check_python_int(fill_value, DTYPES[p._code if code == -1 else code], setter=False)  # copyto's conversion
    if isinstance(fill_value, ndarray):
        fill_value = fill_value._scalar()
    r = _core.full_like(p, fill_value, code, order, shp)
    fill_complex_warning(fill_value, p._code if code == -1 else code, 2)
    return r


_REAL_SCALARS = (bool, int, float, _np.bool_, _np.integer, _np.floating)
_INT64_BOUND = 2 ** 63
_INT64_CODE = code_of(_np.int64)


def arange(start_or_stop=None, /, stop=None, step=None, dtype=None, *, device=None, like=None):
    """numpy.arange: evenly spaced values in [start, stop) (length ceil((stop - start)/step)).

    The dtype is NumPy's: int64 for Python ints, float64 when any argument is a float, the
    NumPy scalar's own dtype otherwise. ValueError for a zero step ("Maximum allowed size
    exceeded"), TypeError for non-numbers.
    """
    if (type(start_or_stop) is int and dtype is None and device is None and like is None
            and (stop is None or type(stop) is int) and (step is None or type(step) is int)):
        # Python ints only (np.arange(n) in a loop): int64 values, no promotion to work out.
        a, b = (0, start_or_stop) if stop is None else (start_or_stop, stop)
        c = 1 if step is None else step
        if c != 0 and all(-_INT64_BOUND <= v < _INT64_BOUND for v in (a, b, c)):
            return _core.arange(a, b, c, _INT64_CODE)
    _check_device(device)
    if start_or_stop is None and stop is None:
        raise TypeError("arange() requires stop to be specified.")
    if stop is None:
        start, stop = 0, start_or_stop
    elif start_or_stop is None:
        start = 0
    else:
        start = start_or_stop
    args = [a for a in (start, stop, step) if a is not None]
    # Complex bounds (rare; NumPy's length rule takes the imaginary ratio into account) run on NumPy.
    if not all(isinstance(a, _REAL_SCALARS) for a in args) \
            or (dtype is not None and code_of(dtype) is None):
        kw = {} if dtype is None else {"dtype": dtype}
        if step is None:
            return _wrap_numpy_result(_np.arange(start, stop, **kw))
        return _wrap_numpy_result(_np.arange(start, stop, step, **kw))
    if step is None:
        step = 1
    if dtype is None:
        # NumPy computes arange's bounds as Python numbers: every argument promotes with int64.
        dts = [_np.asarray(a).dtype for a in (start, stop, step)]
        if all(d.kind == "b" for d in dts) and all(isinstance(a, _np.bool_) for a in (start, stop)):
            raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the "
                            "bitwise_xor, the `^` operator, or the logical_xor function instead.")
        dtype = _np.result_type(_np.int64, *dts)
    code = code_of(dtype)
    if code is None:
        return _wrap_numpy_result(_np.arange(start, stop, step, dtype=dtype))
    if step == 0:
        raise ZeroDivisionError("division by zero")
    if type(start) is int:
        _check_python_int(start, _np.dtype(dtype))  # NEP 50: arange(-3, 1, dtype=uint8) raises
    return _core.arange(start, stop, step, code)


def _numpy_arg(x):
    """An argument for NumPy: npc arrays as zero-copy views; scalars unchanged (so NEP 50
    weak-scalar rules still apply to Python numbers)."""
    return _np.asarray(memoryview(x)) if isinstance(x, ndarray) else x


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """numpy.linspace: `num` evenly spaced samples over [start, stop] (NumPy's formula,
    ``i * step + start`` with the last sample set to `stop`). Array endpoints and complex
    endpoints are computed by NumPy."""
    _check_device(device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    code = None if dtype is None else code_of(dtype)
    native = (type(start) in (int, float) and type(stop) in (int, float) and axis == 0 and
              (dtype is None or code is not None) and not retstep)
    if not native:
        return _wrap_tuple(_np.linspace(_numpy_arg(start), _numpy_arg(stop), num, endpoint, retstep, dtype, axis))
    return _core.linspace(float(start), float(stop), num, endpoint, FLOAT64 if code is None else code)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """numpy.logspace: ``base ** linspace(start, stop, num)``."""
    num = operator.index(num)
    code = None if dtype is None else code_of(dtype)
    native = (type(start) in (int, float) and type(stop) in (int, float) and type(base) in (int, float)
              and axis == 0 and (dtype is None or code is not None))
    if not native:
        return _wrap_tuple(_np.logspace(_numpy_arg(start), _numpy_arg(stop), num, endpoint,
                                        _numpy_arg(base), dtype, axis))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return _core.logspace(float(start), float(stop), num, endpoint, float(base), FLOAT64 if code is None else code)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """numpy.geomspace (computed by NumPy, returned as an npc array)."""
    return _wrap_tuple(_np.geomspace(_numpy_arg(start), _numpy_arg(stop), num, endpoint, dtype, axis))


def _wrap_tuple(r):
    if isinstance(r, tuple):
        return tuple(_wrap_numpy_result(x) for x in r)
    return _wrap_numpy_result(r)


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    """numpy.eye: a 2-D array with ones on the k-th diagonal."""
    _check_device(device)
    code = code_of(dtype)
    if code is None:
        return _np.eye(N, M, k, dtype, order)
    N = operator.index(N)
    M = None if M is None else operator.index(M)
    if N < 0 or (M is not None and M < 0):
        raise ValueError("negative dimensions are not allowed")
    return _core.eye(N, M, operator.index(k), code, _check_order(order))


def identity(n, dtype=None, *, like=None):
    """numpy.identity: the n x n identity matrix."""
    return eye(n, dtype=float if dtype is None else dtype)


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    """numpy.frombuffer: a 1-D view of a buffer (read-only when the buffer is)."""
    return _wrap_numpy_result(_np.frombuffer(buffer, dtype, count, offset))


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """numpy.fromfunction: ``function(*indices(shape))``."""
    idx = _np.indices(shape, dtype=dtype)
    return function(*(_from_numpy(i) for i in idx), **kwargs)


def copy(a, order="K", subok=False):
    """numpy.copy."""
    return array(a, order=order, copy=True)
