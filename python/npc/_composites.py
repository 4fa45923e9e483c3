"""Selection and composite elementwise functions written with the ufuncs (numpy.where, clip,
round, fix, real, imag, angle, nan_to_num, isclose, allclose, array_equal, array_equiv), with
the ndarray methods round and clip.

They follow NumPy's own formulas so results and dtypes match; anything with a non-native
dtype runs on NumPy (npc._fallback).
"""
import builtins
import operator as _operator
import warnings

import numpy as _np

from . import _core
from . import _fallback
from ._array import _check_scalar_out, ndarray
from ._reductions import _native, all, copyto_
from ._ufunc import (_NOT_NATIVE, _to_numpy, absolute, add, arctan2, divide, equal, isfinite, isnan, less_equal,
                     logical_and, logical_or, maximum, minimum, multiply, positive, rint, subtract, trunc)


# ---------------------------------------------------------------- selection
def where(condition, x=_np._NoValue, y=_np._NoValue, /):
    """numpy.where: `x` where `condition` else `y` (broadcast; dtype as result_type(x, y)
    with weak Python scalars). With only `condition`: numpy.nonzero(condition)."""
    if x is _np._NoValue and y is _np._NoValue:
        import npc
        return npc.nonzero(condition)
    if x is _np._NoValue or y is _np._NoValue:
        raise ValueError("either both or neither of x and y should be given")
    r = _core.where3(condition, x, y)
    if r is _NOT_NATIVE:
        _fallback.record("where")
        return _fallback.from_numpy(_np.where(_to_numpy(condition), _to_numpy(x), _to_numpy(y)))
    return r


_select = where


def clip(a, a_min=_np._NoValue, a_max=_np._NoValue, out=None, *, min=_np._NoValue, max=_np._NoValue, **kwargs):
    """numpy.clip: minimum(maximum(a, a_min), a_max) with NumPy 2's promotion (NaN propagates).

    Bounds are both positional (``a_min``, ``a_max``; None for no bound) or both keywords
    (``min``, ``max``), as NumPy's: TypeError when one positional bound is missing,
    ValueError for both kinds at once."""
    if a_min is _np._NoValue and a_max is _np._NoValue:
        a_min = None if min is _np._NoValue else min
        a_max = None if max is _np._NoValue else max
    elif a_min is _np._NoValue:
        raise TypeError("clip() missing 1 required positional argument: 'a_min'")
    elif a_max is _np._NoValue:
        raise TypeError("clip() missing 1 required positional argument: 'a_max'")
    elif min is not _np._NoValue or max is not _np._NoValue:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` are provided is forbidden.")
    return _clip(a, a_min, a_max, out, **kwargs)


def _clip(a, a_min, a_max, out=None, **kwargs):
    _check_scalar_out(out)  # Note [writes into scalar results]
    """numpy.ndarray.clip (NumPy's _methods._clip): None is no bound."""
    x = _native(a)
    if isinstance(x, ndarray) and x.dtype.kind in "iu":
        # NumPy's _clip: a Python int bound beyond the integer dtype's range is no bound
        # (NEP 50 would otherwise raise OverflowError for it).
        info = _np.iinfo(x.dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    if a_min is None and a_max is None:
        # NumPy's identity: positive(a) (a scalar for 0-d input; no loop for bool, objects, str).
        return positive(a, out=out, **kwargs)
    if a_min is not None and a_max is not None and isinstance(x, ndarray) and x.dtype.kind == "f" and \
            x.dtype.itemsize > 2 and _np.ndim(a_min) == 0 and _np.ndim(a_max) == 0:
        # numpy.clip with two scalar bounds keeps x where it equals a bound (clip(-0.0, 0, 1)
        # is -0.0); npc's float32/64 maximum and minimum return their second operand on ties.
        return minimum(a_max, maximum(a_min, a, **kwargs), out=out, **kwargs)
    r = a
    if a_min is not None:
        r = maximum(r, a_min, **kwargs) if a_max is not None else maximum(r, a_min, out=out, **kwargs)
    if a_max is not None:
        r = minimum(r, a_max, out=out, **kwargs)
    return r


def _power_of_ten(n):
    """NumPy's power_of_ten (multiarray/calculation.c): exact powers up to 1e8, then repeated
    multiplication by 10 (which rounds differently from 10.0 ** n beyond 1e22, and gives inf
    instead of Python's OverflowError)."""
    if n < 9:
        return 10.0 ** n
    r = 1e9
    while n > 9 and r != float("inf"):
        r *= 10.0
        n -= 1
    return r


def _decimals(d):
    """round's `decimals` as NumPy converts it (a C int): OverflowError beyond C long, then
    beyond int."""
    d = _operator.index(d)
    if not -2 ** 63 <= d < 2 ** 63:
        raise OverflowError("Python int too large to convert to C long")
    if d >= 2 ** 31:
        raise OverflowError("signed integer is greater than maximum")
    if d < -2 ** 31:
        raise OverflowError("signed integer is less than minimum")
    return d


def round(a, decimals=0, out=None):
    """numpy.round/around: round half to even to `decimals` places (NumPy's
    multiply-rint-divide for floats, with NumPy's power of ten as a weak Python float;
    integers unchanged for decimals >= 0; complex numbers part by part in their real dtype,
    as NumPy's PyArray_Round)."""
    _check_scalar_out(out, "output must be an array")  # Note [writes into scalar results]
    x = _native(a)
    if x is None:
        _fallback.record("round")
        return _np.round(a, decimals, out)
    decimals = _decimals(decimals)
    k = x.dtype.kind
    if k in "iu":
        if decimals >= 0:
            if out is not None:
                return positive(x, out=out)
            return x.copy(order="K") if x.ndim else x._scalar()  # NumPy: a copy in a's layout
        if out is not None:
            _fallback.record("round")
            return _fallback.from_numpy(_np.round(_to_numpy(x), decimals, _to_numpy(out)))
        # NumPy's PyArray_Round for integers: divide by the power of ten into float64, rint,
        # multiply back, and cast to the input dtype (with the cast's warnings).
        f = _power_of_ten(-decimals)
        y = multiply(rint(divide(x, f)), f)
        return y.astype(x.dtype)
    if k == "c":
        if out is not None and (not isinstance(out, ndarray) or out.dtype.kind != "c"):
            _fallback.record("round")
            return _fallback.from_numpy(_np.round(_to_numpy(x), decimals, _to_numpy(out)))
        # NumPy copies the array (or assigns it to out=), then sets .real and .imag to the
        # rounded parts, each rounded in the parts' float dtype.
        r = x.copy() if out is None else out
        if out is not None:
            copyto_(r, x)
        r_re, r_im = round(x.real, decimals), round(x.imag, decimals)
        copyto_(r.real, r_re)
        copyto_(r.imag, r_im)
        return r if out is not None or x.ndim else r._scalar()
    if decimals == 0:
        return rint(x, out=out)
    if k == "b" and out is None:
        # PyArray_Round writes a bool input's scaled values into an array like the input:
        # the float64 product does not cast into bool under same_kind.
        raise _np._core._exceptions._UFuncOutputCastingError(
            _np.multiply if decimals > 0 else _np.divide, "same_kind", _np.dtype(_np.float64), _np.dtype(_np.bool_), 0)
    op1, op2 = (multiply, divide) if decimals > 0 else (divide, multiply)
    f = _power_of_ten(builtins.abs(decimals))
    y = rint(op1(x, f))
    return op2(y, f, out=out) if out is not None else op2(y, f)


around = round


def fix(x, out=None):
    """numpy.fix: round towards zero (ceil for negatives, floor otherwise). Deprecated in
    NumPy 2.5 like numpy.fix (DeprecationWarning): use trunc."""
    warnings.warn("numpy.fix is deprecated. Use numpy.trunc instead, which is faster and follows the Array "
                  "API standard.", DeprecationWarning, stacklevel=2)
    return trunc(x, out=out) if out is not None else trunc(x)


def real(val):
    """numpy.real: real part (a view for complex arrays); a scalar's own ``.real`` for
    scalars (Python or NumPy), as numpy.real."""
    if not isinstance(val, (ndarray, _np.ndarray, list, tuple)) and hasattr(val, "real"):
        return val.real
    x = _native(val)
    return x.real if x is not None else _np.real(val)


def imag(val):
    """numpy.imag: imaginary part (zeros for real input); a scalar's own ``.imag`` for
    scalars (Python or NumPy), as numpy.imag."""
    if not isinstance(val, (ndarray, _np.ndarray, list, tuple)) and hasattr(val, "imag"):
        return val.imag
    x = _native(val)
    return x.imag if x is not None else _np.imag(val)


def angle(z, deg=False):
    """numpy.angle: arctan2(imag, real) in radians (degrees when `deg`)."""
    x = _native(z)
    if x is None:
        _fallback.record("angle")
        return _np.angle(z, deg)
    if x.dtype.kind == "c":
        a = arctan2(x.imag, x.real)
    else:
        a = arctan2(0, x)
    if deg:
        a = multiply(a, 180 / _np.pi)
    return a


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """numpy.nan_to_num: NaN -> `nan`, +inf -> `posinf` (default: the dtype's max), -inf ->
    `neginf` (default: the dtype's min); complex parts separately. A 0-d input gives a
    NumPy scalar, as NumPy's."""
    if isinstance(copy, str):
        raise ValueError("strings are not allowed for 'copy' keyword. Use True/False/None instead.")
    a = _native(x)
    if a is None:
        _fallback.record("nan_to_num")
        return _np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    r = _nan_to_num(a, copy, nan, posinf, neginf)
    return r._scalar() if isinstance(r, ndarray) and r.ndim == 0 else r


def _nan_to_num(a, copy, nan, posinf, neginf):
    if a.dtype.kind not in "fc":
        return a.copy(order="K") if copy else a  # NumPy: array(x, copy=True), order='K'
    if a.dtype.kind == "c":
        re = _nan_to_num(a.real, True, nan, posinf, neginf)
        im = _nan_to_num(a.imag, True, nan, posinf, neginf)
        r = a.copy(order="K") if copy else a
        r.real = re
        r.imag = im
        return r
    t = a.dtype.type
    info = _np.finfo(a.dtype)
    pi_ = t(info.max if posinf is None else posinf)
    ni_ = t(info.min if neginf is None else neginf)
    # The masks come from the input, as NumPy's: a `nan` replacement that overflows to inf
    # is not then replaced by `posinf`.
    pos, neg = equal(a, t(_np.inf)), equal(a, t(-_np.inf))
    r = where(isnan(a), t(nan), a)
    r = where(pos, pi_, r)
    r = where(neg, ni_, r)
    if not copy:
        _core._copy_into(a, r)
        return a
    return r


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.isclose: |a - b| <= atol + rtol * |b| elementwise (NaNs equal when
    `equal_nan`); a bool array, or a NumPy bool for scalar input."""
    x = a if isinstance(a, (int, float, complex)) else _native(a)
    y = b if isinstance(b, (int, float, complex)) else _native(b)
    if x is None or y is None:
        _fallback.record("isclose")
        return _np.isclose(_to_numpy(a), _to_numpy(b), rtol, atol, equal_nan)
    _check_tolerances(rtol, atol)
    if isinstance(y, ndarray):
        dt = _np.result_type(y.dtype, 1.0)
        if y.dtype != dt:
            y = y.astype(dt)
    elif isinstance(y, int):
        y = float(y)
    with _np.errstate(invalid="ignore"):
        r = logical_or(logical_and(less_equal(absolute(subtract(x, y)),
                                              add(atol, multiply(rtol, absolute(y)))), isfinite(y)),
                       equal(x, y))
        if equal_nan:
            r = logical_or(r, logical_and(isnan(x), isnan(y)))
    return r


def _check_tolerances(rtol, atol):
    """NumPy's check of isclose's tolerances: TypeError for values isfinite has no loop for
    (Python ints beyond 64 bits), and the 'invalid' error state's reaction (warning,
    FloatingPointError, ...) to infinite or NaN tolerances."""
    if type(rtol) is float and type(atol) is float and rtol - rtol == 0 and atol - atol == 0:
        return  # finite floats (the common case)
    if not (_np.all(_np.isfinite(_to_numpy(atol))) and _np.all(_np.isfinite(_to_numpy(rtol)))):
        err_s = _np.geterr()["invalid"]
        err_msg = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}"
        if err_s == "warn":
            warnings.warn(err_msg, RuntimeWarning, stacklevel=3)
        elif err_s == "raise":
            raise FloatingPointError(err_msg)
        elif err_s == "print":
            print(err_msg)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.allclose: all(isclose(...)) as a Python bool."""
    return bool(all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """numpy.array_equal: same shape and all elements equal (NaNs equal when `equal_nan`)."""
    x, y = _native(a1), _native(a2)
    if x is None or y is None:
        _fallback.record("array_equal")
        return _np.array_equal(_to_numpy(a1), _to_numpy(a2), equal_nan)
    if x.shape != y.shape:
        return False
    if not equal_nan:
        return builtins.bool(all(equal(x, y)))
    if x.dtype.kind not in "fc" and y.dtype.kind not in "fc":
        return builtins.bool(all(equal(x, y)))
    nx, ny = isnan(x), isnan(y)
    if not builtins.bool(all(equal(nx, ny))):
        return False
    return builtins.bool(all(logical_or(equal(x, y), nx)))


def array_equiv(a1, a2):
    """numpy.array_equiv: broadcastable and all elements equal."""
    x, y = _native(a1), _native(a2)
    if x is None or y is None:
        _fallback.record("array_equiv")
        return _np.array_equiv(_to_numpy(a1), _to_numpy(a2))
    try:
        _np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return builtins.bool(all(equal(x, y)))


# median, quantile, percentile and their nan- forms: python/npc/_quantile.py


# ---------------------------------------------------------------- ndarray methods
def _m_round(self, decimals=0, out=None):
    return round(self, decimals, out)


def _m_clip(self, min=None, max=None, out=None, **kwargs):
    return _clip(self, min, max, out, **kwargs)


for _name, _fn in (("round", _m_round), ("clip", _m_clip)):
    setattr(ndarray, _name, _fn)

__all__ = ["where", "clip", "round", "around", "fix", "real", "imag", "angle", "nan_to_num", "isclose",
           "allclose", "array_equal", "array_equiv"]
