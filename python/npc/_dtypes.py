"""Native dtypes and NEP 50 promotion (numpy.result_type, promote_types, can_cast).

npc's dtypes *are* NumPy's: ``npc.float32 is numpy.float32`` and ``npc.dtype is numpy.dtype``.
The promotion rules themselves are computed by the C++ core (src/core/dtype.cpp); this module
maps NumPy dtype objects to the core's integer codes and back.
"""
import numpy as _np

from . import _core

NAMES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "float32", "float64", "complex64", "complex128")
DTYPES = tuple(_np.dtype(n) for n in NAMES)
TYPES = tuple(d.type for d in DTYPES)
_CODE_OF_DTYPE = {d: i for i, d in enumerate(DTYPES)}
_core._set_dtype_objects(list(DTYPES), list(TYPES))

BOOL, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64 = range(9)
FLOAT16, FLOAT32, FLOAT64, COMPLEX64, COMPLEX128 = range(9, 14)
WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = 0, 1, 2

_code_cache = {}


def code_of(dtype):
    """Core code of a dtype-like (``"f4"``, ``numpy.float32``, ``float``, a dtype), or None
    when it is not a native dtype (then npc runs the operation on NumPy).

    Raises TypeError for things NumPy does not understand as a dtype.
    """
    try:
        return _code_cache[dtype]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, _core.ndarray):
        # numpy.dtype() would read the array's .dtype attribute; NumPy refuses arrays.
        raise TypeError("Cannot construct a dtype from an array")
    d = _np.dtype(dtype)
    code = _CODE_OF_DTYPE.get(d) if d.isnative else None
    try:
        _code_cache[dtype] = code
    except TypeError:
        pass
    return code


def _scalar_code(obj):
    """Code of a NumPy scalar's or array's dtype, or None."""
    dt = getattr(obj, "dtype", None)
    return None if dt is None else code_of(dt)


def _operand(x, strong, weak):
    """Classify one argument of result_type: Python scalars are weak (NEP 50)."""
    t = type(x)
    if t is int:
        weak.append(WEAK_INT)
    elif t is float:
        weak.append(WEAK_FLOAT)
    elif t is complex:
        weak.append(WEAK_COMPLEX)
    elif t is bool:
        strong.append(BOOL)
    else:
        dt = getattr(x, "dtype", None)
        if dt is None or isinstance(x, type) and issubclass(x, _np.generic):
            dt = x
        if isinstance(x, (list, tuple)) or x is None:
            # NumPy's result_type takes arrays, dtypes and scalars, not sequences or None.
            raise TypeError(f"Cannot interpret '{x!r}' as a data type")
        code = code_of(dt)
        if code is None:
            return False
        strong.append(code)
    return True


def result_type(*arrays_and_dtypes):
    """numpy.result_type under NEP 50.

    Parameters
    ----------
    *arrays_and_dtypes : arrays, NumPy scalars, dtypes, or Python int/float/complex
        Python scalars are *weak*: they adopt the arrays' dtype when their kind allows.

    Returns
    -------
    numpy.dtype
        The promoted dtype, identical to ``numpy.result_type``.

    Raises
    ------
    ValueError
        With no arguments ("at least one array or dtype is required").
    TypeError
        For objects that are not dtypes or arrays.
    """
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    strong, weak = [], []
    for x in arrays_and_dtypes:
        if not _operand(x, strong, weak):
            return _np.result_type(*[_np.asarray(a) if hasattr(a, "__array_interface__") else a
                                     for a in arrays_and_dtypes])
    return DTYPES[_core.result_type(strong, weak)]


def promote_types(type1, type2):
    """numpy.promote_types: the smallest dtype to which both cast safely.

    Raises TypeError for unknown dtypes; non-native dtypes are promoted by NumPy.
    """
    a, b = code_of(type1), code_of(type2)
    if a is None or b is None:
        return _np.promote_types(type1, type2)
    return DTYPES[_core.promote_types(a, b)]


def can_cast(from_, to, casting="safe"):
    """numpy.can_cast for dtypes and arrays ('no', 'equiv', 'safe', 'same_kind', 'unsafe').

    Python scalars are rejected with TypeError, as in NumPy 2.
    """
    if type(from_) in (int, float, complex, bool):
        raise TypeError("can_cast() does not support Python ints, floats, and complex because "
                        "the result used to depend on the value.\nThis change was part of adopting "
                        "NEP 50, we may explicitly allow them again in the future.")
    if from_ is None or to is None:
        raise TypeError("did not understand one of the input arguments")
    src = from_ if isinstance(from_, (type, str, _np.dtype)) else getattr(from_, "dtype", from_)
    a, b = code_of(src), code_of(to)
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe'")
    if a is None or b is None:
        return _np.can_cast(_np.dtype(src), to, casting)
    return _core.can_cast(a, b, casting)


def issubdtype(arg1, arg2):
    """numpy.issubdtype: whether `arg1`'s type is lower than or equal to `arg2`'s in the type
    hierarchy. Arrays are not dtypes: TypeError "Cannot construct a dtype from an array" for
    an npc array as for a NumPy one (numpy.dtype() reads the .dtype of other objects)."""
    from ._core import ndarray
    if isinstance(arg1, ndarray) or isinstance(arg2, ndarray):
        raise TypeError("Cannot construct a dtype from an array")
    return _np.issubdtype(arg1, arg2)
