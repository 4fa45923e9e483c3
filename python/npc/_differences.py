"""Differences, interpolation and correlation (numpy.diff, ediff1d, gradient, interp,
correlate, convolve)."""
import operator as _operator
from builtins import range as builtins_range

import numpy as _np

from . import _core
from ._array import ndarray
from ._dtypes import code_of, result_type as _result_type
from ._shape import _arr, _axes, _wrap_all, broadcast_to, concatenate, ravel
from ._sorting import argsort

_op = _core._shape_op

# These need arithmetic: they are compositions of npc's ufuncs over views, following
# NumPy's formulas and evaluation order so results match bit for bit where NumPy's do.
__all__ = ["diff", "ediff1d", "interp", "convolve", "correlate", "gradient"]

_NoValue = _np._NoValue


def _ufuncs():
    import npc
    return npc


def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    """numpy.diff: n-th discrete difference along `axis` (not_equal for booleans).

    ValueError for 0-d input or negative n; AxisError for bad axes.
    """
    u = _ufuncs()
    if n == 0:
        return _arr(a)
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    x = _arr(a)
    nd = x.ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _operator.index(axis)
    if not -nd <= axis < nd:
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {nd}")
    axis %= nd
    combined = []
    for extra, where in ((prepend, "pre"), (append, "post")):
        if extra is _NoValue:
            combined.append(None)
            continue
        e = _arr(extra)
        if e.ndim == 0:
            shape = list(x.shape)
            shape[axis] = 1
            e = broadcast_to(e, tuple(shape))
        combined.append(e)
    parts = [p for p in (combined[0], x, combined[1]) if p is not None]
    if len(parts) > 1:
        x = concatenate(parts, axis)
    sl1 = (slice(None),) * axis + (slice(1, None),)
    sl2 = (slice(None),) * axis + (slice(None, -1),)
    op = u.not_equal if x.dtype == _np.bool_ else u.subtract
    for _ in builtins_range(n):
        x = op(x[sl1], x[sl2])
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """numpy.ediff1d: differences of the flattened array, with optional ends."""
    u = _ufuncs()
    x = ravel(_arr(ary))
    dtype_req = x.dtype
    parts = []
    for extra, name in ((to_begin, "to_begin"), (None, None), (to_end, "to_end")):
        if name is None:
            parts.append(u.subtract(x[1:], x[:-1]))
            continue
        if extra is None:
            continue
        e = _arr(extra)
        if not _np.can_cast(e.dtype, dtype_req, casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule.")
        parts.append(ravel(e).astype(dtype_req))
    return concatenate(parts) if len(parts) > 1 else parts[0]


def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy.interp: 1-d piecewise-linear interpolation (float64, or complex128 for complex fp),
    NumPy's formula slope * (x - xp[j]) + fp[j] with its NaN and exact-hit rules."""
    u = _ufuncs()
    fpa = _arr(fp)
    dt = _np.complex128 if fpa.dtype.kind == "c" else _np.float64
    xa = _arr(x).astype(_np.float64)
    xpa = _arr(xp).astype(_np.float64)
    fpa = fpa.astype(dt)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        if xpa.ndim != 1 or fpa.ndim != 1:
            raise ValueError("Data points must be 1-D sequences")
        if xpa.shape[0] != fpa.shape[0]:
            raise ValueError("fp and xp are not of the same length")
        xa = u.remainder(xa, period)
        xpa = u.remainder(xpa, period)
        order = argsort(xpa)
        xpa, fpa = xpa[order], fpa[order]
        xpa = concatenate((u.subtract(xpa[-1:], period), xpa, u.add(xpa[0:1], period)))
        fpa = concatenate((fpa[-1:], fpa, fpa[0:1]))
    if xpa.ndim != 1 or fpa.ndim != 1:
        raise ValueError("object too deep for desired array")
    if fpa.shape[0] != xpa.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xpa.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    n = xpa.shape[0]
    lval = fpa[0] if left is None else _np.asarray(left, dtype=dt)[()]
    rval = fpa[-1] if right is None else _np.asarray(right, dtype=dt)[()]
    j = u.subtract(_op("searchsorted", xpa, xa, True, None), 1)  # last j with xp[j] <= x
    jc = u.clip(j, 0, max(n - 2, 0))
    x0, x1 = xpa[jc], xpa[u.minimum(jc + 1, n - 1)]
    f0, f1 = fpa[jc], fpa[u.minimum(jc + 1, n - 1)]
    with _np.errstate(all="ignore"):
        slope = u.divide(u.subtract(f1, f0), u.subtract(x1, x0))
        res = u.add(u.multiply(slope, u.subtract(xa, x0)), f0)
        nan = u.isnan(res)
        res = u.where(nan, u.add(u.multiply(slope, u.subtract(xa, x1)), f1), res)
        res = u.where(u.isnan(res) & u.equal(f0, f1), f0, res)
    jfull = j
    res = u.where(u.equal(xa, xpa[u.clip(jfull, 0, n - 1)]) & (jfull >= 0), fpa[u.clip(jfull, 0, n - 1)], res)
    res = u.where(jfull == n - 1, fpa[n - 1], res)
    res = u.where(jfull < 0, lval, res)
    res = u.where(u.greater(xa, xpa[n - 1]), rval, res)
    res = u.where(u.isnan(xa), xa.astype(dt), res)
    res = res.astype(dt)
    return res[()] if res.ndim == 0 else res


def _correlate(a, v, mode, conj):
    u = _ufuncs()
    x = _arr(a)
    y = _arr(v)
    if x.ndim != 1 or y.ndim != 1:
        x, y = ravel(x) if x.ndim == 0 else x, ravel(y) if y.ndim == 0 else y
        if x.ndim != 1 or y.ndim != 1:
            raise ValueError("object too deep for desired array")
    modes = {"valid": 0, "same": 1, "full": 2, 0: 0, 1: 1, 2: 2, "v": 0, "s": 1, "f": 2}
    if mode not in modes:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    m = modes[mode]
    dt = _result_type(x, y)
    x, y = x.astype(dt), y.astype(dt)
    if conj and dt.kind == "c":
        y = u.conjugate(y)
    n1, n2 = x.shape[0], y.shape[0]
    if n1 == 0:
        raise ValueError("first array argument cannot be empty")
    if n2 == 0:
        raise ValueError("second array argument cannot be empty")
    inverted = n1 < n2
    if inverted:
        x, y, n1, n2 = y, x, n2, n1
    if m == 0:
        length, n_left = n1 - n2 + 1, 0
    elif m == 1:
        length, n_left = n1, n2 // 2
    else:
        length, n_left = n1 + n2 - 1, n2 - 1
    # out[i] = sum_j x[i - n_left + j] * y[j] over the j in range, in ascending j (NumPy's
    # dot order); float16 accumulates in float32 as NumPy's half dot does.
    acc_dt = _np.float32 if dt == _np.float16 else dt
    out = _core.zeros((length,), code_of(acc_dt), "C")
    xs = x.astype(acc_dt)
    ys = y.astype(acc_dt)
    for j in builtins_range(n2):
        lo = max(0, n_left - j)
        hi = min(length, n1 + n_left - j)
        if hi <= lo:
            continue
        seg = xs[lo - n_left + j:hi - n_left + j]
        if dt == _np.bool_:
            out[lo:hi] = u.logical_or(out[lo:hi], u.logical_and(seg, ys[j]))
        else:
            out[lo:hi] = u.add(out[lo:hi], u.multiply(seg, ys[j]))
    out = out.astype(dt)
    return out[::-1].copy() if inverted else out


def correlate(a, v, mode="valid"):
    """numpy.correlate: c[k] = sum_n a[n + k] * conj(v[n]) ('valid', 'same' or 'full')."""
    return _correlate(a, v, mode, True)


def convolve(a, v, mode="full"):
    """numpy.convolve: discrete linear convolution ('full', 'same' or 'valid')."""
    x, y = _arr(a), _arr(v)
    if x.ndim == 0:
        x = ravel(x)
    if y.ndim == 0:
        y = ravel(y)
    if x.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if y.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if y.shape[0] > x.shape[0]:
        x, y = y, x
    return _correlate(x, y[::-1], mode, False)


def gradient(f, *varargs, axis=None, edge_order=1):
    """numpy.gradient: second-order central differences inside, first or second order
    one-sided differences at the edges; scalar or coordinate-array spacings per axis."""
    u = _ufuncs()
    f = _arr(f)
    N = f.ndim
    if axis is None:
        axes = tuple(builtins_range(N))
    else:
        axes = tuple(_operator.index(a) % N if -N <= _operator.index(a) < N else
                     (_ for _ in ()).throw(_np.exceptions.AxisError(
                         f"axis {a} is out of bounds for array of dimension {N}")) for a in _axes(axis))
    len_axes = len(axes)
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len_axes
    elif n == 1 and _np.ndim(varargs[0]) == 0:
        dx = list(varargs) * len_axes
    elif n == len_axes:
        dx = list(varargs)
        for i, distances in enumerate(dx):
            d = _arr(distances) if not type(distances) in (int, float) else distances
            if isinstance(d, ndarray) and d.ndim == 0:
                continue
            if isinstance(d, ndarray):
                if d.ndim != 1:
                    raise ValueError("distances must be either scalars or 1d")
                if len(d) != f.shape[axes[i]]:
                    raise ValueError("when 1d, distances must match the length of the corresponding dimension")
                if d.dtype.kind in "iu":
                    d = d.astype(_np.float64)
                diffx = u.subtract(d[1:], d[:-1])
                if bool(u.all(u.equal(diffx, diffx[0]))):
                    diffx = diffx[0]
                dx[i] = diffx
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    outvals = []
    otype = f.dtype
    if otype.kind in "iu" or otype == _np.bool_:
        otype = _np.dtype(_np.float64)
    if f.dtype.kind in "iub":
        f = f.astype(_np.float64)
    for ax, ax_dx in zip(axes, dx):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        out = _core.empty(f.shape, code_of(otype), "C")

        def s(sl):
            return (slice(None),) * ax + (sl,)
        uniform = not isinstance(ax_dx, ndarray) or ax_dx.ndim == 0
        if uniform:
            out[s(slice(1, -1))] = u.divide(u.subtract(f[s(slice(2, None))], f[s(slice(None, -2))]),
                                            u.multiply(2.0, ax_dx))
        else:
            dx1 = ax_dx[0:-1]
            dx2 = ax_dx[1:]
            a = u.divide(u.negative(dx2), u.multiply(dx1, u.add(dx1, dx2)))
            b = u.divide(u.subtract(dx2, dx1), u.multiply(dx1, dx2))
            c = u.divide(dx1, u.multiply(dx2, u.add(dx1, dx2)))
            shape = [1] * N
            shape[ax] = -1
            a, b, c = a.reshape(shape), b.reshape(shape), c.reshape(shape)
            out[s(slice(1, -1))] = u.add(u.add(u.multiply(a, f[s(slice(None, -2))]),
                                               u.multiply(b, f[s(slice(1, -1))])),
                                         u.multiply(c, f[s(slice(2, None))]))
        if edge_order == 1:
            d0 = ax_dx if uniform else ax_dx[0]
            out[s(slice(0, 1))] = u.divide(u.subtract(f[s(slice(1, 2))], f[s(slice(0, 1))]), d0)
            dn = ax_dx if uniform else ax_dx[-1]
            out[s(slice(-1, None))] = u.divide(u.subtract(f[s(slice(-1, None))], f[s(slice(-2, -1))]), dn)
        else:
            if uniform:
                a, b, c = -1.5 / ax_dx, 2.0 / ax_dx, -0.5 / ax_dx
            else:
                dx1, dx2 = float(ax_dx[0]), float(ax_dx[1])
                a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
                b = (dx1 + dx2) / (dx1 * dx2)
                c = - dx1 / (dx2 * (dx1 + dx2))
            out[s(slice(0, 1))] = u.add(u.add(u.multiply(a, f[s(slice(0, 1))]), u.multiply(b, f[s(slice(1, 2))])),
                                        u.multiply(c, f[s(slice(2, 3))]))
            if uniform:
                a, b, c = 0.5 / ax_dx, -2.0 / ax_dx, 1.5 / ax_dx
            else:
                dx1, dx2 = float(ax_dx[-2]), float(ax_dx[-1])
                a = (dx2) / (dx1 * (dx1 + dx2))
                b = - (dx2 + dx1) / (dx1 * dx2)
                c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
            out[s(slice(-1, None))] = u.add(u.add(u.multiply(a, f[s(slice(-3, -2))]),
                                                  u.multiply(b, f[s(slice(-2, -1))])),
                                            u.multiply(c, f[s(slice(-1, None))]))
        outvals.append(out)
    return outvals[0] if len_axes == 1 else tuple(outvals)


_wrap_all(globals())
