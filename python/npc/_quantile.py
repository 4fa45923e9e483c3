"""Order statistics: median, quantile and percentile, and their NaN-ignoring forms
(numpy.median, numpy.quantile, numpy.percentile, numpy.nanmedian, numpy.nanquantile,
numpy.nanpercentile).

Every function sorts the reduced lanes with npc's sort and then evaluates NumPy's own
formulas (numpy/lib/_function_base_impl.py, _nanfunctions_impl.py) with npc's ufuncs, so
values, result dtypes (NEP 50 with a weak Python-number `q`) and floating-point warnings
are NumPy's. The arithmetic on `q` alone (a handful of numbers, not data) uses NumPy.

Note [quantile lanes]
The input is rearranged to (L, n): L lanes of n values (the reduced axes merged last, in
NumPy's _ureduce order). q is flattened to nq values. Indices, gammas and results are
(nq, L) arrays (nq, 1 when they do not depend on the lane), reshaped to q.shape + kept
shape at the end. The NaN-ignoring forms run NumPy's per-lane algorithm for all lanes at
once: a lane's NaNs sort last and its count of valid values replaces n.

Note [scalar arithmetic in quantile]
NumPy's quantile works on NumPy scalars when q is 0-d and the lane is 1-d (axis=None, 1-d
input, and every lane of the NaN-ignoring forms, which run lane by lane). Its warnings then
read "... in scalar subtract" / "scalar multiply", and an integer `b - a` that wraps warns
"overflow encountered in scalar subtract". npc computes the same values with array ufuncs
and reports their flags under NumPy's names (_Flags below).
"""
import builtins
import warnings

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple as _normalize_axis_tuple

from . import _fallback
from . import _composites as _c
from . import _reductions as _r
from . import _ufunc as _u
from ._array import _from_numpy, ndarray
from ._errstate import report as _report

_CONTINUOUS = {  # Hyndman & Fan (alpha, beta) of the continuous methods NumPy computes that way
    "interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
    "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
            "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint",
            "nearest")
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")  # integer indices


def _npc():
    import npc
    return npc


def _to_numpy(x):
    return _fallback.to_numpy(x)


def _arr(x):
    """npc array (0-d arrays and NumPy scalars stay arrays)."""
    if isinstance(x, ndarray):
        return x
    return _from_numpy(_np.asarray(x))


def _scalar_or_array(r):
    if isinstance(r, ndarray) and r.ndim == 0:
        return r._scalar()
    return r


class _Flags:
    """Collects the floating-point flags of npc calls instead of reporting them, so that
    they can be reported under another name (Note [scalar arithmetic in quantile])."""

    def __init__(self):
        self.bits = 0

    def _cb(self, kind, bit):
        self.bits |= bit

    def run(self, fn, *args, **kwargs):
        with _np.errstate(all="call", call=self._cb):
            return fn(*args, **kwargs)


def _named(name, fn, *args, **kwargs):
    """fn(*args) with its floating-point flags reported as raised in `name`."""
    f = _Flags()
    r = f.run(fn, *args, **kwargs)
    if f.bits:
        _report(f.bits, name)
    return r


# ---------------------------------------------------------------- argument handling
def _check_q(q, percent):
    """q as a NumPy array (divided by 100 for percentiles) and whether it is a weak Python
    number; ValueError outside [0, 1] (or [0, 100])."""
    weak_q = type(q) in (int, float)
    if percent:
        qa = _np.true_divide(_to_numpy(q), 100, out=...)
    else:
        qa = _np.asanyarray(_to_numpy(q))
    ok = True
    if qa.ndim == 1 and qa.size < 10:
        for i in range(qa.size):
            if not (0.0 <= qa[i] <= 1.0):
                ok = False
    elif not (qa.min() >= 0 and qa.max() <= 1):
        ok = False
    if not ok:
        raise ValueError("Percentiles must be in the range [0, 100]" if percent else
                         "Quantiles must be in the range [0, 1]")
    return qa, weak_q


def _check_weights(weights, x, axis, method):
    """numpy's weight validation: the weights broadcast to x's shape (NumPy array)."""
    if method != "inverted_cdf":
        raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
    if axis is not None:
        axis = _normalize_axis_tuple(axis, x.ndim, argname="axis")
    w = _np.asanyarray(_to_numpy(weights))
    if x.shape != w.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.shape != tuple(x.shape[ax] for ax in axis):
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        w = w.transpose(_np.argsort(axis))
        w = w.reshape(tuple((s if ax in axis else 1) for ax, s in enumerate(x.shape)))
    if _np.any(w < 0):
        raise ValueError("Weights must be non-negative.")
    return _np.broadcast_to(w, x.shape)


def _lanes(x, axis):
    """(y, kept, kdims): `x` as (L, n) lanes (Note [quantile lanes]), the kept shape and
    the keepdims shape."""
    nd = x.ndim
    if axis is None:
        return x.reshape(1, -1), (), (1,) * nd
    axes = _normalize_axis_tuple(axis, nd)
    keep = [d for d in range(nd) if d not in axes]
    red = sorted(axes)
    kept = tuple(x.shape[d] for d in keep)
    n = 1
    for d in red:
        n *= x.shape[d]
    y = x.transpose(keep + red) if keep + red != list(range(nd)) else x
    kdims = tuple(1 if d in axes else x.shape[d] for d in range(nd))
    L = 1
    for s in kept:
        L *= s
    return y.reshape(L, n), kept, kdims


def _median_layout(r, like):
    """Note [median layout]: the median's result `r` (C-ordered, x's shape without `axis`)
    laid out as NumPy's, given like=(x, axis)."""
    x, axis = like
    if axis is None:
        return r
    axes = _normalize_axis_tuple(axis, x.ndim)
    if len(axes) != 1 or r.ndim < 2:
        return r
    f = x.flags
    if f.c_contiguous:
        order = list(range(x.ndim))
    elif f.f_contiguous:
        order = list(range(x.ndim))[::-1]
    else:  # like_axes: ranked by |stride|, ties in axis order
        order = sorted(range(x.ndim), key=lambda d: -abs(x.strides[d]))
    (ax,) = axes
    perm = [d - (d > ax) for d in order if d != ax]
    if perm == sorted(perm):
        return r
    back = [perm.index(d) for d in range(len(perm))]
    # A ufunc with order='C' (a new value, also in compiled code, where a copy of a view
    # could be the view's source again): C-ordered over the permuted axes.
    return _u.positive(r.transpose(perm), order="C").transpose(back)


# Note [median layout]
# NumPy's median (and nanmedian of lanes shorter than 600, through a masked median) takes
# the mean of the middle of a partitioned copy of x in x's memory order (partition copies
# with order='K'), so for one axis its result is laid out as that reduction's (Note
# [reduction layout] in src/ops/reduce_plan.cpp): an F-ordered x gives an F-ordered median.
# npc computes C-ordered lanes (Note [quantile lanes]) and lays the small result out at the
# end. Several axes are merged by a reshape first (C order); with keepdims NumPy indexes
# the result with newaxis (stride 0 on the kept length-1 axes).
def _finish(r, qshape, kept, kdims, keepdims, out, scalar_ok=True, median=False, setitem=False, red=None,
            weighted=False, like=None):
    """Reshape (nq, L) results to q.shape + kept (or + kdims), write `out`. NumPy's median
    writes `out` through numpy.mean (unsafe casting, no broadcasting); its quantiles through
    ufuncs (same_kind casting, broadcast into `out`); the nan functions with out[...] = r
    (`setitem`); the weighted quantile into an `out` of exactly its shape. With keepdims, the
    latter three write into `out` indexed with 0 at the reduced axes `red` (NumPy's _ureduce)."""
    npc = _npc()
    if not isinstance(r, ndarray):
        r = npc.asarray(r)
    if out is not None and keepdims and red is not None and (setitem or not median):
        if not isinstance(out, ndarray):
            raise TypeError("out must be an npc array")
        dst = out[(Ellipsis,) + tuple(0 if d in red else slice(None) for d in range(len(kdims)))]
        _write_out(dst, r.reshape(qshape + kept), median, setitem, weighted)
        return out
    if out is None and like is not None:  # Note [median layout]
        r = _median_layout(r.reshape(kept), like)
        if keepdims:
            red = range(len(kdims)) if like[1] is None else _normalize_axis_tuple(like[1], len(kdims))
            return r[(Ellipsis,) + tuple(None if d in red else slice(None) for d in range(len(kdims)))]
    r = r.reshape(qshape + (kdims if keepdims else kept))
    if out is not None:
        return _write_out(out, r, median, setitem, weighted)
    if qshape and not setitem and not weighted and not r.flags.c_contiguous:
        # NumPy's quantiles of a q array are ufuncs of C-ordered takes: C-ordered (the lanes
        # here give a transposed result).
        r = npc.ascontiguousarray(r)
    # keepdims indexes NumPy's result with (..., newaxis, ...): an array even when 0-d.
    return _scalar_or_array(r) if scalar_ok and not keepdims else r


def _write_out(out, r, median=False, setitem=False, weighted=False):
    if not isinstance(out, ndarray):
        raise TypeError("out must be an npc array")
    r = _arr(r)
    if setitem:
        # NumPy's nan functions: out[...] = result (unsafe casts, broadcasting, its messages).
        out[...] = r
        return out
    if weighted and out.shape != r.shape:
        raise ValueError(f"Wrong shape of argument 'out', shape={r.shape} is required; got shape={out.shape}.")
    if not median and not _np.can_cast(r.dtype, out.dtype, "same_kind"):
        # numpy.add(..., out=out) resolves its loop (and refuses the cast) before broadcasting.
        raise _np._core._exceptions._UFuncOutputCastingError(_np.add, "same_kind", r.dtype, out.dtype, 0)
    if out.shape != r.shape:
        try:
            fits = not median and _np.broadcast_shapes(r.shape, out.shape) == out.shape
        except ValueError:
            fits = False
        if not fits:
            if not median:
                # NumPy's _lerp writes with numpy.add(a, diff * t, out=out): its message, from
                # NumPy's own check on zero-stride stand-ins of the operands.
                stand = _zero_strided(r.shape)
                _np.add(stand, stand, out=_zero_strided(out.shape))
            raise ValueError(f"non-broadcastable output operand with shape {out.shape} doesn't match the "
                             f"broadcast shape {r.shape}")
        r = _npc().broadcast_to(r, out.shape)
    _r.copyto_(out, r)
    return out


# Note [quantile out through take]
# For the methods that pick elements at integer positions (lower, higher, nearest,
# inverted_cdf, closest_observation, and linear with an integer q), NumPy's _quantile writes
# `out` with numpy.take(arr, indices, axis=0, out=out) (after _ureduce indexed `out` with 0 at
# the reduced axes when keepdims). take wants exactly its result's shape (ValueError "output
# array does not match result of ndarray.take") and buffers `out` in the input's dtype: it
# copies `out` in (a complex `out` of real data warns ComplexWarning), writes, and casts back
# unsafely, with a DeprecationWarning when that cast changes the kind. NaN lanes are then
# copied with numpy.copyto (same_kind: TypeError for an integer `out`).
_OUT_KIND_DEPRECATION = ("Implicit casting of output to a different kind is deprecated. In a future version, "
                         "this will result in an error. (Deprecated NumPy 2.5)")


def _take_out(r, qshape, kept, kdims, keepdims, axis, ndim, out, quiet=False):
    dst = out
    if keepdims:
        red = range(ndim) if axis is None else _normalize_axis_tuple(axis, ndim)
        dst = out[(Ellipsis,) + tuple(0 if d in red else slice(None) for d in range(ndim))]
    r = r.reshape(qshape + kept)
    if quiet:
        with _np.errstate(all="ignore"):
            _r.copyto_(dst, r.astype(dst.dtype))
        return
    if dst.shape != r.shape:
        raise ValueError("output array does not match result of ndarray.take")
    if dst.dtype != r.dtype:
        dst.astype(r.dtype)  # the copy into take's buffer, with its warnings
        if not _np.can_cast(r.dtype, dst.dtype, "same_kind"):
            warnings.warn(_OUT_KIND_DEPRECATION, DeprecationWarning, stacklevel=4)
    _r.copyto_(dst, r.astype(dst.dtype))


# ---------------------------------------------------------------- the quantile kernel
def _gather(s, idx):
    """s[l, idx[k, l]] for the (L, n) sorted lanes and (nq, L) or (nq, 1) indices: (nq, L)."""
    npc = _npc()
    L = s.shape[0]
    if idx.shape[1] == 1 and L != 1:
        return npc.take(s, idx.reshape(-1), axis=1).T
    return npc.take_along_axis(s, idx.T, axis=1).T


def _sub_checked(b, a, scalar):
    """b - a, with NumPy scalar arithmetic's overflow warning for wrapping integers."""
    if not scalar:
        return _u.subtract(b, a)
    d = _named("scalar subtract", _u.subtract, b, a)
    if b.dtype.kind in "iu" and b.size:
        if b.dtype.kind == "u":
            wrapped = _u.less(b, a)
        else:
            wrapped = _u.logical_or(_u.logical_and(_u.greater(b, a), _u.less(d, 0)),
                                    _u.logical_and(_u.less(b, a), _u.greater_equal(d, 0)))
        if _r.any(wrapped):
            _report(2, "scalar subtract")
    return d


def _lerp(a, b, t, omt, mask, scalar, weak, out_dtype=None):
    """NumPy's _lerp(a, b, t): a + (b - a) * t, or b - (b - a) * (1 - t) where t >= 0.5.
    `omt` is 1 - t as NumPy computes it; `mask` is t >= 0.5. With out= (`out_dtype`), NumPy
    adds into out (its same_kind cast, errors named "add") and subtracts in out's dtype."""
    diff = _sub_checked(b, a, scalar)
    mul_name = "scalar multiply" if scalar else "multiply"
    at = _named(mul_name, _u.multiply, diff, t)
    if out_dtype is not None:
        shape = _np.broadcast_shapes(_np.shape(a), _np.shape(at))
        r = _u.add(a, at, out=_npc().empty(shape, dtype=out_dtype))
    else:
        r = _u.add(a, at)
    if not isinstance(r, ndarray):
        r = _arr(r)
    _u.subtract(b, _named(mul_name, _u.multiply, diff, omt), out=r, where=mask, casting="unsafe", dtype=r.dtype)
    return r


def _virtual_index(method, n, Q):
    """NumPy's virtual index of `method` for lane sizes `n` (Python int or (1, L) int64
    array) and q values `Q` ((nq, 1) npc array)."""
    u = _u
    qd = Q.dtype

    def N(v):  # n in q's dtype, as a Python int operand would be (weak)
        return v if isinstance(v, int) else v.astype(qd)

    if method == "linear":
        return u.multiply(N(n - 1), Q)
    if method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        return u.subtract(u.add(u.multiply(N(n), Q), u.add(alpha, u.multiply(Q, 1 - alpha - beta))), 1)
    if method == "averaged_inverted_cdf":
        return u.subtract(u.multiply(N(n), Q), 1)
    if method in ("inverted_cdf", "closest_observation"):
        if method == "inverted_cdf":
            index = u.subtract(u.multiply(N(n), Q), 1)
        else:
            index = u.subtract(u.subtract(u.multiply(N(n), Q), 1), 0.5)
        previous = u.floor(index)
        nxt = u.add(previous, 1)
        gamma = u.subtract(index, previous)
        cond = u.equal(gamma, 0)
        if method == "closest_observation":
            cond = u.logical_and(cond, u.equal(u.remainder(u.floor(index), 2), 1))
        res = _c.where(cond, previous.astype(_np.float64), nxt.astype(_np.float64)).astype(_np.intp)
        return u.maximum(res, 0)
    k = u.multiply(N(n - 1), Q)
    if method == "lower":
        return u.floor(k).astype(_np.intp)
    if method == "higher":
        return u.ceil(k).astype(_np.intp)
    if method == "nearest":
        return u.rint(k).astype(_np.intp)
    if method == "midpoint":
        return u.multiply(0.5, u.add(u.floor(k), u.ceil(k)))
    raise ValueError(f"{method!r} is not a valid method. Use one of: {_np.lib._function_base_impl._QuantileMethods.keys()}")


def _quantile_lanes(s, n, qa, weak_q, method, scalar, nan_aware, out_dtype=None):
    """Quantiles of the sorted (L, n_all) lanes `s` whose first `n` values are valid (n: a
    Python int or a (1, L) int64 array): an (nq, L) npc array in NumPy's result dtype."""
    u = _u
    qf = qa.reshape(-1, 1)
    if qf.dtype == _np.bool_:
        qf = qf.astype(_np.int64)
    Q = _arr(qf)
    A = s.dtype
    vi = _virtual_index(method, n, Q)
    last = n - 1
    if method in _DISCRETE or (method == "linear" and vi.dtype.kind in "iu"):
        # Integer indices: no interpolation (NumPy's "supports_integers" path).
        if not isinstance(last, int):
            vi = u.minimum(vi, last)
        return _gather(s, vi)
    # _get_indexes: neighbours of the virtual index, clamped to the lane.
    prev = u.floor(vi)
    nxt = u.add(prev, 1)
    above = u.greater_equal(vi, last if isinstance(last, int) else last.astype(vi.dtype))
    below = u.less(vi, 0)
    prev = _c.where(below, 0, _c.where(above, -1, prev)).astype(_np.intp)
    nxt = _c.where(below, 0, _c.where(above, -1, nxt)).astype(_np.intp)
    gamma = u.subtract(vi, prev)  # NumPy's dtype: float64 for float32 vi, cast back below
    if method == "averaged_inverted_cdf":
        gamma = _c.where(u.equal(gamma, 0), 0.5, 1.0)
    elif method == "midpoint":
        gamma = _c.where(u.equal(u.remainder(vi, 1), 0), 0.0, 0.5)
    gamma = gamma.astype(vi.dtype)
    # Index -1 is the lane's last valid value.
    pi = _c.where(u.less(prev, 0), last, prev)
    ni = _c.where(u.less(nxt, 0), last, nxt)
    if not isinstance(pi, ndarray):
        pi, ni = _arr(pi), _arr(ni)
    lo, hi = _gather(s, pi), _gather(s, ni)
    if weak_q:
        # gamma is a Python float in NumPy: weak, so it takes the data's float dtype.
        E = _np.dtype(_np.float64) if A.kind in "biu" else A
        t = gamma.astype(E)
        omt = u.subtract(1, gamma).astype(E)
    else:
        t = gamma
        omt = u.subtract(1, gamma)
    mask = u.greater_equal(gamma, 0.5)
    return _lerp(lo, hi, t, omt, mask, scalar, weak_q, out_dtype)


def _nan_lanes(s, n_all, nan_aware):
    """(n, allnan, anynan) for sorted float lanes: the count of valid values per lane
    ((1, L) int64, at least 1), whether a lane is all NaN, and the lanes ending in NaN."""
    u = _u
    lastv = s[:, n_all - 1]
    nanl = u.isnan(lastv)
    if not nan_aware:
        return n_all, None, nanl
    cnt = _r.sum(u.isnan(s), axis=1, dtype=_np.int64)
    cnt = u.subtract(n_all, cnt)
    allnan = u.equal(cnt, 0)
    return u.maximum(cnt, 1).reshape(1, -1), allnan, nanl


def _weighted_lanes(y, w, qa, nan_aware):
    """method='inverted_cdf' with weights: (nq, L) results and the sorted lanes."""
    npc = _npc()
    u = _u
    order = npc.argsort(y, axis=1)
    s = npc.take_along_axis(y, order, axis=1)
    ws = npc.take_along_axis(w, order, axis=1)
    L, n = s.shape
    if nan_aware and s.dtype.kind == "f":
        isn = u.isnan(s)
        ws = _c.where(isn, ws.dtype.type(0), ws)
        allnan = _r.all(isn, axis=1)
        if _r.any(allnan):
            first = npc.zeros((L, n), dtype=bool)
            first[:, 0] = allnan
            ws = _c.where(first, ws.dtype.type(1), ws)
        cnt = u.maximum(u.subtract(n, _r.sum(isn, axis=1, dtype=_np.int64)), 1)
    else:
        cnt = None
    cdf = npc.cumsum(ws, axis=1, dtype=_np.float64)
    cdf = u.divide(cdf, cdf[:, n - 1:n])
    if _r.any(u.isnan(cdf[:, n - 1])):
        raise ValueError("Weights included NaN, inf or were all zero.")
    qf = qa.reshape(-1)
    if qa.dtype.kind == "f":
        cdf = cdf.astype(qa.dtype)
    if _r.any(u.equal(cdf[:, 0], 0)):
        cdf = _c.where(u.equal(cdf, 0), cdf.dtype.type(-1), cdf)
    Q = _arr(qf.reshape(-1, 1, 1))
    idx = _r.sum(u.less(cdf.reshape(1, L, n), Q), axis=2, dtype=_np.int64)  # searchsorted 'left'
    idx = u.minimum(idx, n - 1 if cnt is None else u.subtract(cnt, 1).reshape(1, -1))
    return _gather(s, idx), s


def _empty_lane_error(dtype, method, qa, weighted):
    """NumPy's IndexError for quantiles of empty lanes: its NaN check reads arr[-1] of
    inexact data first; integer data fails in numpy.take for the methods that pick integer
    positions, else in the partition at the smallest neighbour index (-1 when a virtual
    index is at or above the last position, else 0). The weighted path reads the last value
    of the weights' cumulative sum first."""
    if dtype.kind == "f" or weighted:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    if method in _DISCRETE or (method == "linear" and qa.dtype.kind in "iub"):
        raise IndexError("cannot do a non-empty take from an empty axes.")
    qf = qa.reshape(-1, 1)
    vi = _virtual_index(method, 0, _arr(qf.astype(_np.int64) if qf.dtype == _np.bool_ else qf))
    idx = -1 if bool(_r.any(_u.greater_equal(vi, 0))) else 0
    raise IndexError(f"index {idx} is out of bounds for axis 0 with size 0")


def _quantile_impl(name, a, q, axis, out, overwrite_input, method, keepdims, weights, percent, nan_aware):
    x = _r._native(a)
    if x is None or (weights is not None and _r._native(weights) is None) or \
            (out is not None and not isinstance(out, ndarray)):
        _fallback.record(name)
        return _fallback.from_numpy(getattr(_np, name)(
            _to_numpy(a), _to_numpy(q), axis=axis, out=_to_numpy(out), overwrite_input=overwrite_input,
            method=method, keepdims=keepdims, weights=_to_numpy(weights)))
    if x.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    qa, weak_q = _check_q(q, percent)
    w = None if weights is None else _check_weights(weights, x, axis, method)
    if nan_aware and w is not None and axis is not None and x.ndim > 1 and _np.shape(_to_numpy(weights)) != x.shape:
        kept_sizes = [x.shape[d] for d in range(x.ndim) if d not in _normalize_axis_tuple(axis, x.ndim)]
        if builtins.any(k > 1 for k in kept_sizes):
            # NumPy's nan-aware weighted loop indexes the unbroadcast weights per lane.
            raise IndexError("index 1 is out of bounds for axis 0 with size 1")
    if nan_aware and x.size == 0:
        return _npc().nanmean(x, axis, out=out, keepdims=keepdims)
    if qa.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{_np.lib._function_base_impl._QuantileMethods.keys()}")
    y, kept, kdims = _lanes(x, axis)
    red = range(x.ndim) if axis is None else _normalize_axis_tuple(axis, x.ndim)
    if out is not None and keepdims:
        out[(Ellipsis,) + tuple(0 if d in red else slice(None) for d in range(x.ndim))]  # NumPy's _ureduce first
    L, n = y.shape
    if n == 0 and L > 0:
        _empty_lane_error(y.dtype, method, qa, w is not None)
    npc = _npc()
    if L == 0:
        # No lanes: the dtype is the one a lane's result would have.
        with _np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = _quantile_lanes(npc.zeros((1, n), dtype=x.dtype), n, qa, weak_q, method, False, False) \
                if w is None else npc.zeros((1, 1), dtype=x.dtype)
        return _finish(npc.empty((qa.size, 0), dtype=_arr(r).dtype), qa.shape, kept, kdims, keepdims, out,
                       setitem=nan_aware, red=red, weighted=w is not None and not nan_aware)
    if overwrite_input and axis is None and x.flags.c_contiguous and x.flags.writeable:
        x.reshape(-1).sort()  # NumPy partitions the input in place; a sort is a partition
    inexact = y.dtype.kind == "f"
    # Lanes are NumPy scalars' arithmetic when q is 0-d and each lane is one 1-d quantile.
    scalar = qa.ndim == 0 and (nan_aware or x.ndim == 1 or axis is None or len(kept) == 0 and L == 1)
    if w is not None:
        wy, _, _ = _lanes(_from_numpy(_np.ascontiguousarray(w)), axis)
        r, s = _weighted_lanes(y, wy, qa, nan_aware)
        cnt = n
    else:
        s = npc.sort(y, axis=1)
        cnt = n
    allnan = nanl = None
    if inexact:
        cnt, allnan, nanl = _nan_lanes(s, n, nan_aware)
    if w is None:
        r = _quantile_lanes(s, cnt, qa, weak_q, method, scalar, nan_aware,
                            out.dtype if out is not None and not nan_aware else None)
    if not isinstance(r, ndarray):
        r = _arr(r)
    if out is not None and w is None and not nan_aware and (
            method in _DISCRETE or method == "linear" and qa.dtype.kind in "iub"):
        # Note [quantile out through take]: NumPy picks integer positions with
        # numpy.take(..., out=out), then copies the NaNs of NaN lanes with numpy.copyto.
        _take_out(r, qa.shape, kept, kdims, keepdims, axis, x.ndim, out)
        if inexact and _r.any(nanl):
            if not _np.can_cast(r.dtype, out.dtype, "same_kind"):
                raise TypeError(f"Cannot cast {'array data' if kept else 'scalar'} from {r.dtype!r} to {out.dtype!r} "
                                "according to the rule 'same_kind'")
            r = _c.where(nanl.reshape(1, -1), s[:, n - 1].reshape(1, -1).astype(r.dtype), r)
            _take_out(r, qa.shape, kept, kdims, keepdims, axis, x.ndim, out, quiet=True)
        return out
    if inexact:
        if nan_aware:
            nbad = int(_r.sum(allnan))
            if nbad:
                for _ in range(nbad):
                    warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
                # A lane's 0-d result of an all-NaN lane is that lane's NaN, in a's dtype; the
                # first lane's result sets the dtype of NumPy's apply_along_axis buffer.
                if qa.ndim == 0 and bool(allnan[0]):
                    r = r.astype(x.dtype)
                    if w is not None and (axis is None or x.ndim == 1) and out is None and not keepdims:
                        # NumPy's 1-d weighted path returns np.full(q.shape, nan)[()]: a scalar.
                        return r[0, 0]
        elif _r.any(nanl):
            lastv = s[:, n - 1]
            if qa.ndim == 0 and L == 1 and len(kept) == 0 and out is None:
                # NumPy returns the lane's NaN itself (a's dtype), which keepdims then indexes
                # into an array.
                return lastv.reshape(kdims) if keepdims else lastv[0]
            r = _c.where(nanl.reshape(1, -1), lastv.reshape(1, -1).astype(r.dtype), r)
    # The weighted path fills an np.empty result: a 0-d array stays an array.
    return _finish(r, qa.shape, kept, kdims, keepdims, out, scalar_ok=w is None, setitem=nan_aware, red=red,
                   weighted=w is not None and not nan_aware)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None):
    """numpy.quantile: the q-th quantiles of `a` along `axis` (None, int or tuple).

    Result shape q.shape + the kept shape (keepdims: with size-1 reduced axes). Every NumPy
    method (Hyndman & Fan's nine and lower/higher/midpoint/nearest); `weights` with
    method='inverted_cdf'. dtype: float64 for integer input, the input's float dtype for a
    Python-number `q`, else promoted with q's dtype; discrete methods keep a's dtype. NaN
    where a slice holds NaN. ValueError for q outside [0, 1], TypeError for complex input,
    IndexError for an empty slice.
    """
    return _quantile_impl("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights, False, False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None):
    """numpy.percentile: quantile(a, q / 100) (ValueError for q outside [0, 100])."""
    return _quantile_impl("percentile", a, q, axis, out, overwrite_input, method, keepdims, weights, True, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None):
    """numpy.nanquantile: quantile ignoring NaNs. All-NaN slices give NaN with a
    RuntimeWarning "All-NaN slice encountered"; an empty array gives nanmean's result."""
    return _quantile_impl("nanquantile", a, q, axis, out, overwrite_input, method, keepdims, weights, False, True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None):
    """numpy.nanpercentile: nanquantile(a, q / 100)."""
    return _quantile_impl("nanpercentile", a, q, axis, out, overwrite_input, method, keepdims, weights, True,
                          True)


# ---------------------------------------------------------------- median
def _zero_strided(shape):
    """A read-only-sized stand-in of `shape` for NumPy's shape checks: one element, zero strides."""
    return _np.lib.stride_tricks.as_strided(_np.zeros(1), shape=shape, strides=(0,) * len(shape))


def _check_median_out(x, axis, out, keepdims):
    """Raises NumPy's error for a median `out` of the wrong shape. NumPy's median (through
    _ureduce) indexes `out` with 0 at the reduced axes when keepdims, merges several reduced
    axes into a last one, and writes the result with numpy.mean(part, axis, out=out), `part`
    being the one or two middle values of each lane: the error is that reduction's (IndexError
    for the keepdims indexing; ValueError "output parameter for reduction operation add has the
    wrong number of dimensions: ...", "operands could not be broadcast together with remapped
    shapes ..." and the like). NumPy's own checks run on zero-stride stand-ins of those shapes."""
    nd = x.ndim
    o = _zero_strided(out.shape)
    if axis is None:
        if keepdims:
            o = o[(Ellipsis,) + (0,) * nd]
        shape, ax = [x.size], 0
    else:
        axes = _normalize_axis_tuple(axis, nd)
        if keepdims:
            o = o[(Ellipsis,) + tuple(0 if d in axes else slice(None) for d in range(nd))]
        if len(axes) == 1:
            shape, ax = list(x.shape), axes[0]
        else:
            n = 1
            for d in axes:
                n *= x.shape[d]
            shape = [x.shape[d] for d in range(nd) if d not in axes] + [n]
            ax = len(shape) - 1
    sz = shape[ax]
    shape[ax] = 1 if sz % 2 else (2 if sz else 0)  # NumPy's indexer of the middle values
    if o.shape == tuple(shape[:ax] + shape[ax + 1:]):
        return
    if sz == 0:
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)  # numpy.mean warns first
    _np.add.reduce(_zero_strided(tuple(shape)), axis=ax, out=_np.empty(o.shape))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.median: the middle value, or the mean of the two middle values, along `axis`
    (None, int or tuple). float64 for integer input (numpy.mean's dtypes); NaN where a slice
    holds NaN; an empty slice gives NaN with numpy.mean's warnings."""
    x = _r._native(a)
    if x is None or (out is not None and not isinstance(out, ndarray)):
        _fallback.record("median")
        return _fallback.from_numpy(_np.median(_to_numpy(a), axis=axis, out=_to_numpy(out),
                                               overwrite_input=overwrite_input, keepdims=keepdims))
    y, kept, kdims = _lanes(x, axis)
    if out is not None:
        _check_median_out(x, axis, out, keepdims)
        if keepdims:
            # As NumPy's _ureduce: the result goes to `out` indexed with 0 at the reduced axes.
            red = range(x.ndim) if axis is None else _normalize_axis_tuple(axis, x.ndim)
            median(x, axis, out[(Ellipsis,) + tuple(0 if d in red else slice(None) for d in range(x.ndim))],
                   overwrite_input)
            return out
    L, n = y.shape
    npc = _npc()
    if n == 0:
        # A full reduction divides NumPy scalars ("... in scalar divide"), as NumPy's mean.
        r = npc.mean(y.reshape(-1)) if len(kept) == 0 else npc.mean(y, axis=1)
        return _finish(r, (), kept, kdims, keepdims, out, median=True, like=(x, axis))
    if overwrite_input and x.flags.writeable:
        if axis is None and x.flags.c_contiguous:
            x.reshape(-1).sort()
        elif isinstance(axis, int) and x.ndim:
            x.sort(axis=axis)
    s = npc.sort(y, axis=1)
    mid = n // 2
    part = s[:, mid - 1:mid + 1] if n % 2 == 0 else s[:, mid:mid + 1]
    # NumPy's median is numpy.mean(part, axis, out=out): the sum runs in out's loop dtype.
    if out is None and len(kept) == 0:
        # NumPy's median takes the mean of a 1-D part when every axis is reduced (keepdims
        # or not: _ureduce adds the axes back afterwards): a NumPy scalar mean, "... in
        # scalar divide".
        r = npc.mean(part.reshape(-1))
        if keepdims and isinstance(r, ndarray):
            r = r[...]  # a traced NumPy scalar: keepdims makes it an array (Note [scalar results])
    else:
        r = npc.mean(part, axis=1) if out is None else npc.mean(part, axis=1, out=npc.empty(L, dtype=out.dtype))
    if s.dtype.kind in "fc":
        lastv = s[:, n - 1]
        nanl = _u.isnan(lastv)
        if _r.any(nanl):
            if len(kept) == 0 and out is None and not keepdims:
                return lastv[0]
            if out is not None and not _np.can_cast(s.dtype, out.dtype, "same_kind"):
                # NumPy copies the NaNs into out= with numpy.copyto (same_kind).
                raise TypeError(f"Cannot cast {'array data' if kept else 'scalar'} from {s.dtype!r} to {out.dtype!r} "
                                "according to the rule 'same_kind'")
            r = _c.where(nanl, lastv.astype(r.dtype), r)
    return _finish(r, (), kept, kdims, keepdims, out, median=True, like=(x, axis))


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.nanmedian: median ignoring NaNs. All-NaN slices give NaN with a RuntimeWarning
    "All-NaN slice encountered"; an empty array gives nanmean's result."""
    x = _r._native(a)
    if x is None or (out is not None and not isinstance(out, ndarray)):
        _fallback.record("nanmedian")
        return _fallback.from_numpy(_np.nanmedian(_to_numpy(a), axis=axis, out=_to_numpy(out),
                                                  overwrite_input=overwrite_input, keepdims=keepdims))
    npc = _npc()
    if x.size == 0:
        return npc.nanmean(x, axis, out=out, keepdims=keepdims)
    if x.dtype.kind != "f":
        if x.dtype.kind == "c":
            # NumPy's masked median of complex values: not worth a native path.
            _fallback.record("nanmedian")
            return _fallback.from_numpy(_np.nanmedian(_to_numpy(a), axis=axis, out=_to_numpy(out),
                                                      overwrite_input=overwrite_input, keepdims=keepdims))
        if out is None:
            return median(x, axis=axis, keepdims=keepdims)
        # NumPy's nanmedian writes the median with out[...] = result (unsafe casts).
        red = range(x.ndim) if axis is None else _normalize_axis_tuple(axis, x.ndim)
        dst = out[(Ellipsis,) + tuple(0 if d in red else slice(None) for d in range(x.ndim))] if keepdims else out
        dst[...] = median(x, axis=axis)
        return out
    y, kept, kdims = _lanes(x, axis)
    red = range(x.ndim) if axis is None else _normalize_axis_tuple(axis, x.ndim)
    L, n = y.shape
    s = npc.sort(y, axis=1)
    cnt = _u.subtract(n, _r.sum(_u.isnan(s), axis=1, dtype=_np.int64))
    allnan = _u.equal(cnt, 0)
    nbad = int(_r.sum(allnan))
    for _ in range(nbad):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
    one_d = axis is None or x.ndim == 1 or len(kept) == 0
    h = _u.floor_divide(cnt, 2)
    odd = _u.equal(_u.remainder(cnt, 2), 1)
    lo = _u.maximum(_c.where(odd, h, _u.subtract(h, 1)), 0)
    hi = _u.minimum(h, n - 1)
    lh = npc.stack([lo, hi], axis=1)
    pair = npc.take_along_axis(s, lh, axis=1)  # (L, 2)
    if one_d or n >= 600:
        # numpy.median of each lane's valid values: the mean of its middle value(s).
        if one_d:
            if nbad:
                return _finish(s[:, n - 1], (), kept, kdims, keepdims, out, median=True, setitem=True, red=red)
            c = int(cnt[0])
            part = pair if c % 2 == 0 else pair[:, 1:]
            return _finish(npc.mean(part, axis=1), (), kept, kdims, keepdims, out, median=True, setitem=True,
                           red=red)
        f16 = x.dtype == _np.float16
        acc = pair.astype(_np.float32) if f16 else pair
        both = _u.add(acc[:, 0], acc[:, 1])
        sm = _c.where(odd, acc[:, 1], _u.divide(both, 2))
        r = sm.astype(x.dtype) if f16 else sm
    else:
        # NumPy's masked median (np.ma.median): low + high summed (a reduction) in a's
        # dtype, then halved.
        r = _u.divide(npc.sum(pair, axis=1), 2.0)
    if nbad:
        r = _c.where(allnan, r.dtype.type(_np.nan), r)
    # Note [median layout]: lanes of 600 or more run through numpy.apply_along_axis (C order).
    like = (x, axis) if n < 600 else None
    return _finish(r, (), kept, kdims, keepdims, out, median=True, setitem=True, red=red, like=like)


__all__ = ["median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile"]
