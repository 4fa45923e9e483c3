"""Statistics: mean, var, std, average and the NaN-aware reductions (numpy.mean,
numpy.nansum, ...).

Written with npc's ufuncs (python/npc/_ufunc.py) and reductions (_reductions.py), following NumPy's own
formulas so results and dtypes match. Anything with a non-native dtype runs on NumPy
(npc._fallback).
"""
import builtins
import warnings

import numpy as _np

from . import _core
from . import _fallback
from ._array import _from_numpy, ndarray
from ._dtypes import code_of
from ._composites import where
from ._shape import copyto
from ._reductions import _arg, _native, _reduce, all, broadcast_to, cumprod, cumsum, prod, sum  # noqa: F401
from ._ufunc import (_to_numpy, add, divide, fmax, fmin, isnan, less_equal, logical_not, maximum,  # noqa: F401
                     minimum, multiply, sqrt, square, subtract)


def _count(a, axis, keepdims=False):
    """Number of elements reduced along `axis` (NumPy's _count_reduce_items)."""
    if axis is None:
        return a.size
    axes = axis if isinstance(axis, tuple) else (axis,)
    n = 1
    for ax in axes:
        # NumPy's own check: its TypeError for a float axis ("integer argument expected, got
        # float") and AxisError.
        n *= a.shape[_np.lib.array_utils.normalize_axis_index(ax, a.ndim)]
    return n


def _is_kind(a, kinds):
    return a.dtype.kind in kinds


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """numpy.mean: sum / count along `axis`. Integers and bool average in float64, float16
    accumulates in float32 (NumPy's rules). RuntimeWarning "Mean of empty slice" when
    nothing is averaged; the result is then NaN."""
    if (type(a) is ndarray and axis is None and dtype is None and out is None and not keepdims and where is True
            and a.dtype.kind in "fc" and a.itemsize >= 4 and a.size and not _core._is_traced(a)):
        # The common case (the whole array, float32/64 or complex): the general path below
        # without its argument handling.
        ret = a.sum()
        return ret.dtype.type(ret / _np.intp(a.size))
    x = _native(a)
    if x is None or (dtype is not None and code_of(dtype) is None) or (out is not None and not isinstance(out, ndarray)):
        _fallback.record("mean")
        return _fallback.from_numpy(_np.mean(_to_numpy(a), axis=axis, dtype=dtype, out=_to_numpy(out),
                                             keepdims=keepdims, where=_to_numpy(where)))
    f16 = False
    if dtype is None:
        if x.dtype.kind in "iub":
            dtype = _np.float64
        elif x.dtype == _np.float16:
            dtype = _np.float32
            f16 = True
    if where is True:
        rcount = _count(x, axis)
    else:
        w = _native(where)
        rcount = sum(broadcast_to(w, x.shape), axis=axis, dtype=_np.intp, keepdims=keepdims)
    if (rcount == 0 if where is True else builtins.any(_np.asarray(_to_numpy(rcount)).ravel() == 0)):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    ret = sum(x, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    if isinstance(ret, ndarray) and not _traced_scalar(ret):
        # An intp count, not a weak int: complex64 / intp runs the complex128 loop, as in NumPy.
        ret = divide(ret, _np.intp(rcount) if isinstance(rcount, int) else rcount, out=ret,  # noqa: F821
                     casting="unsafe")
        if f16 and out is None:
            ret = ret.astype(x.dtype)
    else:
        # NumPy scalar arithmetic with an intp count, as numpy.mean does (float32 / intp is
        # a float64 division, "... in divide"; float64 / intp "... in scalar divide").
        rc = _np.intp(rcount) if isinstance(rcount, int) else rcount
        ret = _scalar_quotient(ret, rc, x.dtype if f16 else ret.dtype)
    return ret


def _traced_scalar(x):
    """A traced 0-d value that stands for a NumPy scalar (Note [scalar results])."""
    return x.ndim == 0 and _core._scalar_result(x)


def _scalar_quotient(ret, rc, dtype):
    """`dtype.type(ret / rc)` of NumPy's mean and var for a NumPy scalar `ret`, or a traced
    value standing for one (the division is then traced as NumPy's scalar arithmetic, Note
    [scalar math] in src/tracer/trace.hpp)."""
    if not isinstance(ret, ndarray):
        return dtype.type(ret / rc)
    q = ret / rc
    if q.dtype != dtype:
        q = q.astype(dtype)
        _core._mark_scalar(q)
    return q


def _var(x, axis, dtype, out, ddof, keepdims, where, fname):
    if dtype is None and x.dtype.kind in "iub":
        dtype = _np.float64
    if where is True:
        rcount = _count(x, axis)
        bad = rcount - ddof <= 0
    else:
        # The counts take the result's shape (keepdims as given), as numpy._core._methods._var;
        # the mean below divides by them reshaped to its keepdims shape.
        rcount = sum(broadcast_to(_native(where), x.shape), axis=axis, dtype=_np.intp, keepdims=keepdims)
        bad = builtins.any(_np.asarray(_to_numpy(rcount)).ravel() - ddof <= 0)
    if bad:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    arrmean = sum(x, axis=axis, dtype=dtype, keepdims=True, where=where)
    if not isinstance(arrmean, ndarray) or _traced_scalar(arrmean):
        # A NumPy scalar (the sum of a 0-d array): NumPy's scalar division, "... in scalar
        # divide".
        arrmean = _scalar_quotient(arrmean, _np.intp(rcount) if isinstance(rcount, int) else rcount, arrmean.dtype)
    else:
        div = rcount.reshape(arrmean.shape) if isinstance(rcount, ndarray) else rcount
        arrmean = divide(arrmean, _np.intp(div) if isinstance(div, int) else div, out=arrmean,  # noqa: F821
                         casting="unsafe")
    d = subtract(x, arrmean)  # noqa: F821
    if not isinstance(d, ndarray):
        d = _from_numpy(_np.asarray(d))
    if d.dtype.kind == "c":
        re, im = d.real, d.imag
        sq = add(square(re), square(im))  # noqa: F821
    else:
        # NumPy squares: "overflow encountered in square"; in place but into a scalar result
        # (Note [writes into scalar results] in csrc/bind_ndarray.cpp).
        sq = square(d) if _traced_scalar(d) else square(d, out=d)  # noqa: F821
    ret = sum(sq, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    rc = maximum(subtract(rcount, ddof), 0)  # noqa: F821
    if isinstance(ret, ndarray) and not _traced_scalar(ret):
        ret = divide(ret, rc, out=ret, casting="unsafe")  # noqa: F821
    else:
        ret = _scalar_quotient(ret, rc, ret.dtype)
    return ret


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_np._NoValue,
        correction=_np._NoValue):
    """numpy.var: mean of squared deviations, divided by N - ddof. float64 for integer
    input; a real result for complex input. RuntimeWarning "Degrees of freedom <= 0 for
    slice" when N - ddof <= 0."""
    x = _native(a)
    if correction is not _np._NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if x is None or mean is not _np._NoValue or (dtype is not None and code_of(dtype) is None) or \
            (out is not None and not isinstance(out, ndarray)):
        _fallback.record("var")
        kw = {} if mean is _np._NoValue else {"mean": _to_numpy(mean)}
        return _fallback.from_numpy(_np.var(_to_numpy(a), axis=axis, dtype=dtype, out=_to_numpy(out), ddof=ddof,
                                            keepdims=keepdims, where=_to_numpy(where), **kw))
    return _var(x, axis, dtype, out, ddof, keepdims, where, "var")


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_np._NoValue,
        correction=_np._NoValue):
    """numpy.std: square root of numpy.var (same arguments, dtypes and warnings)."""
    x = _native(a)
    if correction is not _np._NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if x is None or mean is not _np._NoValue or (dtype is not None and code_of(dtype) is None) or \
            (out is not None and not isinstance(out, ndarray)):
        _fallback.record("std")
        kw = {} if mean is _np._NoValue else {"mean": _to_numpy(mean)}
        return _fallback.from_numpy(_np.std(_to_numpy(a), axis=axis, dtype=dtype, out=_to_numpy(out), ddof=ddof,
                                            keepdims=keepdims, where=_to_numpy(where), **kw))
    ret = _var(x, axis, dtype, out, ddof, keepdims, where, "std")
    if isinstance(ret, ndarray):
        if _traced_scalar(ret):  # never written (Note [writes into scalar results])
            return sqrt(ret)  # noqa: F821
        return sqrt(ret, out=ret)  # noqa: F821
    return ret.dtype.type(_np.sqrt(ret))


def _replace_nan(a, val):
    """(a with NaNs replaced by `val`, NaN mask or None), as numpy.lib._nanfunctions_impl."""
    if a.dtype.kind in "fc":
        # NumPy copies `a` (order K: its layout, which its sums then walk) and writes `val`
        # where the mask is set; a `where` result would take the ufunc iterator's layout,
        # which differs for broadcast (stride-0) axes, and sum in another order.
        # Traced code keeps the `where` (one fused elementwise op; a masked copyto into a
        # copy is a write the tracer would break on).
        mask = isnan(a)  # noqa: F821
        if _core._is_traced(a):
            return where(mask, a.dtype.type(val), a), mask
        out = a.copy(order="K")
        copyto(out, val, where=mask)
        return out, mask
    return a, None


def _nan_fallback(name, a, **kw):
    _fallback.record(name)
    return _fallback.from_numpy(getattr(_np, name)(_to_numpy(a), **{k: _to_numpy(v) for k, v in kw.items()}))


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.nansum: sum treating NaN as zero."""
    x = _native(a)
    if x is None:
        return _nan_fallback("nansum", a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    x, _ = _replace_nan(x, 0)
    return sum(x, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.nanprod: product treating NaN as one."""
    x = _native(a)
    if x is None:
        return _nan_fallback("nanprod", a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    x, _ = _replace_nan(x, 1)
    return prod(x, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)


def _nanminmax(name, fred, a, axis, out, keepdims, initial, where):
    x = _native(a)
    if x is None:
        return _nan_fallback(name, a, axis=axis, out=out, keepdims=keepdims)
    if x.dtype.kind not in "fc":
        return _reduce(fred, x, axis, None, out, keepdims, initial, where, name)
    if not isinstance(a, (ndarray, _np.ndarray)) or _traced_scalar(a):
        return _nanminmax_masked(name, x, axis, out, keepdims, initial, where)  # noqa: F821
    res = _reduce(fred, x, axis, None, out, keepdims, initial, where, name)
    if builtins.any(_np.atleast_1d(_np.isnan(_to_numpy(res))).ravel()):
        warnings.warn("All-NaN slice encountered" if name in ("nanmax", "nanmin") else "All-NaN axis encountered",
                      RuntimeWarning, stacklevel=3)
    return res


def _nanminmax_masked(name, x, axis, out, keepdims, initial, wh):
    """NumPy's nanmax/nanmin of anything but an ndarray (a NumPy scalar, a list): NaNs
    replaced by -inf (+inf), amax (amin), then NaN where a slice held only NaNs, with the
    warning "All-NaN axis encountered" (a complex NaN comes back as ``nan+0j``)."""
    big = _np.inf if name == "nanmin" else -_np.inf
    y, mask = _replace_nan(x, big)
    res = _reduce(minimum if name == "nanmin" else maximum, y, axis, None, out, keepdims,
                  initial, wh, name[3:])
    m = all(mask, axis=axis, keepdims=keepdims)
    if builtins.any(_np.atleast_1d(_to_numpy(m)).ravel()):
        nan = res.dtype.type(_np.nan)
        if not isinstance(res, ndarray):
            res = nan
        elif out is not None:
            _core._copy_into(res, where(m, nan, res))
        else:
            scalar = _traced_scalar(res)
            res = where(m, nan, res)
            if scalar:  # a traced NumPy scalar stays one (Note [scalar results])
                _core._mark_scalar(res)
        warnings.warn("All-NaN axis encountered", RuntimeWarning, stacklevel=4)
    return res


def nanmax(a, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.nanmax: maximum ignoring NaN (fmax.reduce); RuntimeWarning for all-NaN slices."""
    return _nanminmax("nanmax", fmax, a, axis, out, keepdims, initial, where)  # noqa: F821


def nanmin(a, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.nanmin: minimum ignoring NaN (fmin.reduce); RuntimeWarning for all-NaN slices."""
    return _nanminmax("nanmin", fmin, a, axis, out, keepdims, initial, where)  # noqa: F821


def _nanarg(name, fill, a, axis, out, keepdims):
    x = _native(a)
    if x is None:
        return _nan_fallback(name, a, axis=axis, out=out, keepdims=keepdims)
    if x.dtype.kind not in "fc":
        return _arg(name[3:], x, axis, out, keepdims)
    y, mask = _replace_nan(x, fill)
    if builtins.any(_np.atleast_1d(_to_numpy(all(mask, axis=axis))).ravel()):
        raise ValueError("All-NaN slice encountered")
    return _arg(name[3:], y, axis, out, keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """numpy.nanargmax: argmax ignoring NaN; ValueError "All-NaN slice encountered"."""
    return _nanarg("nanargmax", -_np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """numpy.nanargmin: argmin ignoring NaN; ValueError "All-NaN slice encountered"."""
    return _nanarg("nanargmin", _np.inf, a, axis, out, keepdims)


def nancumsum(a, axis=None, dtype=None, out=None):
    """numpy.nancumsum: cumsum treating NaN as zero."""
    x = _native(a)
    if x is None:
        return _nan_fallback("nancumsum", a, axis=axis, dtype=dtype, out=out)
    return cumsum(_replace_nan(x, 0)[0], axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """numpy.nancumprod: cumprod treating NaN as one."""
    x = _native(a)
    if x is None:
        return _nan_fallback("nancumprod", a, axis=axis, dtype=dtype, out=out)
    return cumprod(_replace_nan(x, 1)[0], axis=axis, dtype=dtype, out=out)


def _nan_inexact_check(x, dtype, out):
    """numpy.nanmean/nanvar/nanstd of inexact input: a dtype= or out= that is not inexact
    raises TypeError (whether or not the input holds NaNs)."""
    if x.dtype.kind not in "fc":
        return
    if dtype is not None and _np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and getattr(out, "dtype", _np.dtype(float)).kind not in "fc":
        raise TypeError("If a is inexact, then out must be inexact")


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """numpy.nanmean: mean of the non-NaN elements; RuntimeWarning "Mean of empty slice"
    where there are none (result NaN)."""
    x = _native(a)
    if x is None:
        return _nan_fallback("nanmean", a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    _nan_inexact_check(x, dtype, out)
    arr, mask = _replace_nan(x, 0)
    if mask is None:
        return mean(arr, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    cnt = sum(logical_not(mask), axis=axis, dtype=_np.intp, keepdims=keepdims, where=where)  # noqa: F821
    tot = sum(arr, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    with _np.errstate(invalid="ignore", divide="ignore"):
        if isinstance(tot, ndarray):
            avg = divide(tot, cnt, out=tot, casting="unsafe")  # noqa: F821
        else:
            avg = tot.dtype.type(tot / cnt)
    if builtins.any(_np.atleast_1d(_to_numpy(cnt) == 0).ravel()):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    return avg


def _divide_by_count(a, b):
    """numpy.lib._nanfunctions_impl._divide_by_count: a / b in place for arrays (unsafe
    cast back), in a's own type for scalars; no warnings for 0/0 or x/0."""
    with _np.errstate(invalid="ignore", divide="ignore"):
        if isinstance(a, ndarray):
            return divide(a, b, out=a, casting="unsafe")  # noqa: F821
        return a.dtype.type(a / b)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_np._NoValue,
           correction=_np._NoValue):
    """numpy.nanvar: variance of the non-NaN elements.

    NumPy's algorithm step by step: the deviations from the mean are written into a copy of
    `a` (its dtype, unsafe cast: a float16 input keeps float16 deviations even with
    dtype=float64, and a complex mean into real data warns ComplexWarning), squared there
    (complex: the real part of x * conj(x)), then summed in `dtype`. RuntimeWarning
    "Degrees of freedom <= 0 for slice." and NaN where count - ddof <= 0; TypeError for a
    dtype= or out= that is not inexact."""
    x = _native(a)
    if x is None or mean is not _np._NoValue or (out is not None and not isinstance(out, ndarray)) or \
            (dtype is not None and code_of(dtype) is None):
        kw = {} if correction is _np._NoValue else {"correction": correction}
        if mean is not _np._NoValue:
            kw["mean"] = mean
        return _nan_fallback("nanvar", a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                             where=where, **kw)
    if x.dtype.kind not in "fc":
        return var(x, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where,
                   correction=correction)
    _nan_inexact_check(x, dtype, out)
    if correction is not _np._NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    from ._shape import copyto
    mask = isnan(x)  # noqa: F821
    arr = x.copy(order="K")  # numpy.array(a, copy=True): the layout (and so the sums' order) kept
    copyto(arr, 0, where=mask)
    cnt = sum(logical_not(mask), axis=axis, dtype=_np.intp, keepdims=True, where=where)  # noqa: F821
    avg = _divide_by_count(sum(arr, axis=axis, dtype=dtype, keepdims=True, where=where), cnt)
    subtract(arr, avg, out=arr, casting="unsafe", where=where)  # noqa: F821
    copyto(arr, 0, where=mask, casting="unsafe")
    if arr.dtype.kind == "c":
        sqr = multiply(arr, arr.conj(), out=arr, where=where).real  # noqa: F821
    else:
        sqr = multiply(arr, arr, out=arr, where=where)  # noqa: F821
    v = sum(sqr, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    if (v.ndim if isinstance(v, ndarray) else 0) < cnt.ndim:
        cnt = cnt.squeeze(axis)
    dof = subtract(cnt, ddof)  # noqa: F821
    v = _divide_by_count(v, dof)
    isbad = less_equal(dof, 0)  # noqa: F821
    if builtins.any(_np.atleast_1d(_to_numpy(isbad)).ravel()):
        warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=2)
        if isinstance(v, ndarray):
            copyto(v, _np.nan, where=isbad, casting="unsafe")
        else:
            v = v.dtype.type(_np.nan)
    return v


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_np._NoValue,
           correction=_np._NoValue):
    """numpy.nanstd: sqrt(nanvar)."""
    v = nanvar(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where, mean=mean,
               correction=correction)
    if isinstance(v, ndarray):
        return sqrt(v, out=v)  # noqa: F821
    return v.dtype.type(sqrt(v))  # noqa: F821


def average(a, axis=None, weights=None, returned=False, *, keepdims=_np._NoValue):
    """numpy.average: mean, or sum(a * w) / sum(w) with `weights` (NumPy's result dtype).

    `axis` is None, an int or a tuple (AxisError when out of range); `weights` has a's
    shape, or the shape of a along the (sorted) axes of `axis`. With `returned`, also the
    sum of the weights (or the element count), broadcast to the average's shape.
    Raises TypeError when the shapes differ and `axis` is None, ValueError when they do
    not match along `axis`, ZeroDivisionError when the weights sum to zero (or, as
    NumPy's, when the average is an empty array)."""
    x = _native(a)
    if x is None or (weights is not None and _native(weights) is None):
        _fallback.record("average")
        kw = {} if keepdims is _np._NoValue else {"keepdims": keepdims}
        return _fallback.from_numpy(_np.average(_to_numpy(a), axis, _to_numpy(weights), returned, **kw))
    if axis is not None:
        axis = _np.lib.array_utils.normalize_axis_tuple(axis, x.ndim, argname="axis")
    kd = {} if keepdims is _np._NoValue else {"keepdims": keepdims}
    if weights is None:
        avg = mean(x, axis=axis, **kd)
        avg_size = avg.size if isinstance(avg, ndarray) else 1
        # NumPy's count: a.size / avg.size in the average's dtype (ZeroDivisionError for
        # an empty average).
        scl = _np.result_type(avg).type(x.size / avg_size)
    else:
        w = _native(weights)
        if x.shape != w.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if w.shape != tuple(x.shape[ax] for ax in axis):
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            w = w.transpose([int(i) for i in _np.argsort(axis)])
            w = w.reshape(tuple((s if ax in axis else 1) for ax, s in enumerate(x.shape)))
        rt = _np.result_type(x.dtype, w.dtype, "f8") if x.dtype.kind in "iub" else _np.result_type(x.dtype, w.dtype)
        scl = sum(w, axis=axis, dtype=rt, **kd)
        if builtins.any(_np.atleast_1d(_to_numpy(scl) == 0.0).ravel()):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = divide(sum(multiply(x, w, dtype=rt), axis=axis, **kd), scl)  # noqa: F821
    if returned:
        avg_shape = avg.shape if isinstance(avg, ndarray) else ()
        if _np.shape(_to_numpy(scl)) != avg_shape:
            scl = broadcast_to(_from_numpy(_np.asarray(_to_numpy(scl))), avg_shape).copy()
            if not avg_shape:
                scl = scl._scalar()
        return avg, scl
    return avg


def _m_mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    return mean(self, axis, dtype, out, keepdims, where=where)


def _m_var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_np._NoValue,
           correction=_np._NoValue):
    return var(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)


def _m_std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_np._NoValue,
           correction=_np._NoValue):
    return std(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)


for _name, _fn in (("mean", _m_mean), ("var", _m_var), ("std", _m_std)):
    setattr(ndarray, _name, _fn)

__all__ = ["mean", "var", "std", "average", "nansum", "nanprod", "nanmax", "nanmin", "nanargmax", "nanargmin",
           "nancumsum", "nancumprod", "nanmean", "nanvar", "nanstd"]
