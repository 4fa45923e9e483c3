"""Reductions and accumulations of the ufuncs (numpy.sum, prod, max, min, any, all, argmax,
argmin, cumsum, cumprod, ptp, count_nonzero) and the argument checks of ufunc.reduce and
ufunc.accumulate (python/npc/_ufunc.py), with the ndarray methods of the same names.

Calls reach C++ through _core.ufunc_reduce / ufunc_accumulate / arg_reduce (src/ops/reduce.cpp,
accumulate.cpp); anything with a non-native dtype runs on NumPy (npc._fallback).
"""
import builtins
import operator as _operator
import warnings

import numpy as _np

from . import _core
from . import _fallback
from ._array import _as_npc, _check_scalar_out, _from_numpy, ndarray
from ._dtypes import code_of
from ._ufunc import (_OP_ID, _TABLE, _to_numpy, add, logical_and, logical_or, maximum, minimum, multiply, not_equal,
                     subtract)

_reduce_all = _core.reduce_all
# The ufunc of each reduction row of the op table (sum: add, max: maximum, ...).
_UFUNC_OF = {row.name: _OP_ID[row.loops] for row in _TABLE if row.kind == 1}


def _axis_arg(axis, ndim=None):
    if axis is None:
        return None
    if isinstance(axis, tuple):
        return [_operator.index(a) for a in axis]
    return [_operator.index(axis)]


def _native(a):
    """npc array for `a`, or None when it is not native (then NumPy runs the call)."""
    if isinstance(a, ndarray):
        return a
    r = _as_npc(a)
    return r if isinstance(r, ndarray) else None


def _where_arg(where):
    if where is True:
        return None
    w = _native(where)
    if w is None:
        raise TypeError("where must be a boolean array")
    # NumPy converts a mask that is not an array (a list, a Python bool) to bool; an array
    # mask of another dtype is the reduction's TypeError (cast to bool under 'safe').
    if w.dtype != _np.bool_ and not isinstance(where, (ndarray, _np.ndarray)):
        w = w.astype(_np.bool_)
    return w


def _reduce(uf, array, axis, dtype, out, keepdims, initial, where, fname=None):
    _check_scalar_out(out)  # Note [writes into scalar results] in csrc/bind_ndarray.cpp
    a = _native(array)
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError("The 'out' tuple must have exactly one entry")
        out = out[0]
    code = -1 if dtype is None else code_of(dtype)
    if a is None or code is None or (out is not None and not isinstance(out, ndarray)):
        kw = dict(axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
        if initial is not _np._NoValue:
            kw["initial"] = initial
        if fname is not None:
            _fallback.record(fname)
            # Defaults stay unsaid, so subclasses whose methods lack a keyword (a masked
            # array's sum has no where=) get NumPy's own call.
            kw = {k: v for k, v in kw.items() if not ((k == "dtype" and v is None) or (k == "where" and v is True)
                                                       or (k == "keepdims" and v is False))}
            return _fallback.from_numpy(getattr(_np, fname)(_to_numpy(array), **_to_numpy(kw)))
        return uf._fallback("reduce", (array,), kw)
    if (a.dtype.kind == "c" or (out is not None and out.dtype.kind == "c") or
            (dtype is not None and _np.dtype(dtype).kind == "c")) and \
            _TABLE[uf._id].resolver != "Logical":  # (bool loops)
        _check_duplicate_axes(axis, a.ndim)  # NumPy rejects them before it resolves the loop
        # Without identity or initial=, an empty reduced axis raises before NumPy copies
        # the first elements into out (one cast, one warning fewer).
        starts = True
        if out is not None and uf.identity is None and (initial is _np._NoValue or initial is None) and a.size == 0:
            ax = range(a.ndim) if axis is None else (axis,) if not isinstance(axis, tuple) else axis
            try:
                starts = builtins.all(a.shape[_operator.index(d) % a.ndim] for d in ax) if a.ndim else True
            except (TypeError, ZeroDivisionError):
                pass
        _check_reduce_loop(uf, a, dtype, out)
        _warn_complex_casts(a, dtype, out, reduce=True if starts else False)
    init = None if initial is _np._NoValue or initial is None else initial
    int_loop = a.dtype.kind in "iub" if dtype is None else _np.dtype(dtype).kind in "iub"
    if dtype is None and out is not None:  # NumPy resolves the loop from (out, input)
        int_loop = int_loop and out.dtype.kind in "iub"
    if (type(init) is int and (init < -2**31 or init > 2**31 - 1 or a.dtype.kind in "iu" or
                               (dtype is not None and _np.dtype(dtype).kind in "iu") or
                               (dtype is None and out is not None and out.dtype.kind in "iub"))) or \
            (type(init) is float and int_loop):  # np.sum(uint8, out=uint8, initial=-1.5) raises
        _check_initial(uf, a, dtype, out, init)
        if not -2**63 <= init < 2**64:
            init = float(init)  # NumPy accepted it, so the loop is inexact (np.sum(f4, initial=2**70))
    try:
        return _core.ufunc_reduce(uf._id, a, _axis_arg(axis), bool(keepdims), code, out, init, _where_arg(where))
    except ValueError as e:
        if out is None or not str(e).startswith("output parameter for reduction operation"):
            raise
        _raise_reduce_out_error(uf, a, axis, dtype, out, keepdims)
        raise


def _check_duplicate_axes(axis, ndim):
    """NumPy's ValueError for an axis tuple that names an axis twice (axes out of range are
    left to the reduction's AxisError)."""
    if not isinstance(axis, tuple) or len(axis) < 2:
        return
    try:
        axes = [_operator.index(d) for d in axis]
    except TypeError:
        return
    if builtins.all(-ndim <= d < ndim for d in axes) and len({d % ndim for d in axes}) < len(axes):
        raise ValueError("duplicate value in 'axis'")


def _check_reduce_loop(uf, a, dtype, out, accumulate=False):
    """Raises NumPy's TypeError when reduce/accumulate has no loop for the signature that
    dtype= / out= make (Note [reduce loop signature] in reduce_resolve.cpp): NumPy resolves the loop
    before any cast, so no cast warning comes first."""
    _core.reduce_loop_dtype(uf._id, code_of(a.dtype), -1 if dtype is None else code_of(dtype),
                            -1 if out is None else code_of(out.dtype), accumulate)


def _warn_complex_casts(a, dtype, out, reduce):
    """NumPy's ComplexWarning for the casts of a reduction (reduce=True) or accumulation
    that drop an imaginary part (Note [complex input casts] in bind_ops.cpp): the input into
    a real loop dtype `dtype=`; a complex out= read into a real loop (reductions read out
    first); a complex loop written to a real out= (reductions warn twice there: the first
    values or the identity go into out, then the result). Casts to bool never warn."""
    if dtype is not None:
        loop = _np.dtype(dtype)
    elif a.dtype.kind == "c":
        loop = a.dtype
    else:
        return  # a real loop, or out's complex dtype itself: nothing is dropped
    def drops(src, dst):
        return src.kind == "c" and dst.kind not in "cb"
    n = int(drops(a.dtype, loop))
    if out is not None and out.dtype != loop:
        n += int(drops(out.dtype, loop)) + (2 if reduce else 1) * int(drops(loop, out.dtype))
    for _ in range(n):
        warnings.warn("Casting complex values to real discards the imaginary part", _np.exceptions.ComplexWarning,
                      stacklevel=4)


def _check_initial(uf, a, dtype, out, initial):
    """NumPy converts a Python int `initial` to the loop dtype as NEP 50 does: out of its
    range it raises OverflowError ("Python integer -1 out of bounds for uint8", "Python int
    too large to convert to C long"). NumPy's own conversion runs on an empty stand-in."""
    np_uf = getattr(_np, uf.__name__, None)
    if not isinstance(np_uf, _np.ufunc):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            np_uf.reduce(_np.empty(0, a.dtype), dtype=dtype, initial=initial,
                         out=None if out is None else _np.empty((), out.dtype))
        except OverflowError as e:
            raise OverflowError(str(e)) from None
        except Exception:
            pass


def _raise_reduce_out_error(uf, a, axis, dtype, out, keepdims):
    """Raises NumPy's error for a reduction `out` of the wrong shape: "... has the wrong number
    of dimensions: Found 2 but expected 1", "operands could not be broadcast together with
    remapped shapes [original->remapped]: ...", "output operand requires a reduction along
    dimension ...", "operand was set up as a reduction along axis ...": NumPy's own checks,
    run on one-element zero-stride stand-ins of the operands' shapes."""
    def stand_in(shape, dt):
        return _np.lib.stride_tricks.as_strided(_np.zeros(1, dt), shape=shape, strides=(0,) * len(shape))
    np_uf = getattr(_np, uf.__name__, None)
    if not isinstance(np_uf, _np.ufunc):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            np_uf.reduce(stand_in(a.shape, a.dtype), axis=axis, dtype=dtype, out=_np.empty(out.shape, out.dtype),
                         keepdims=keepdims)
        except ValueError as e:
            raise ValueError(str(e)) from None


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.sum: sum over `axis` (None, int or tuple). Small integers and bool sum in
    int64/uint64; floats use NumPy's pairwise summation. Returns a NumPy scalar for full
    reductions, an npc array otherwise."""
    if type(a) is ndarray and axis is None and dtype is None and out is None and not keepdims and \
            initial is _np._NoValue and where is True:
        return _reduce_all(_UFUNC_OF["sum"], a)
    return _reduce(add, a, axis, dtype, out, keepdims, initial, where, "sum")


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.prod: product over `axis` (dtype rules as numpy.sum)."""
    return _reduce(multiply, a, axis, dtype, out, keepdims, initial, where, "prod")


def max(a, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.max (amax): maximum over `axis`; NaN propagates. ValueError for an empty
    reduction without `initial`."""
    return _reduce(maximum, a, axis, None, out, keepdims, initial, where, "max")


def min(a, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.min (amin): minimum over `axis`; NaN propagates."""
    return _reduce(minimum, a, axis, None, out, keepdims, initial, where, "min")


amax, amin = max, min


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    """numpy.any: whether any element along `axis` is true (bool result)."""
    return _reduce(logical_or, a, axis, None, out, keepdims, _np._NoValue, where, "any")


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    """numpy.all: whether all elements along `axis` are true (bool result)."""
    return _reduce(logical_and, a, axis, None, out, keepdims, _np._NoValue, where, "all")


def _arg(opname, a, axis, out, keepdims):
    _check_scalar_out(out, "output must be an array")  # Note [writes into scalar results]
    x = _native(a)
    if x is None or (out is not None and not isinstance(out, ndarray)):  # NumPy's error for a non-array out
        _fallback.record(opname)
        return _fallback.from_numpy(getattr(_np, opname)(_to_numpy(a), axis=axis, out=_to_numpy(out),
                                                         keepdims=keepdims))
    r = _core.arg_reduce(_OP_ID[opname], x, None if axis is None else _operator.index(axis), bool(keepdims))
    if out is not None:
        copyto_(out, r)
        return out
    return r


def argmax(a, axis=None, out=None, *, keepdims=False):
    """numpy.argmax: index of the first maximum (NaN counts as maximum); int64 result.
    ValueError "attempt to get argmax of an empty sequence" for empty input."""
    return _arg("argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """numpy.argmin: index of the first minimum (NaN counts as minimum); int64 result."""
    return _arg("argmin", a, axis, out, keepdims)


def copyto_(dst, src):
    """Copies `src` (broadcast) into npc array `dst` with an unsafe cast."""
    s = _native(src)
    s = _np.broadcast_to(_to_numpy(s), dst.shape)
    _core._copy_into(dst, _from_numpy(_np.asarray(s, order="C")) if not isinstance(src, ndarray) or
                     src.shape != dst.shape else src)


def _flat(a):
    return a.reshape(-1) if a.ndim != 1 else a


def _cum(uf, name, a, axis, dtype, out):
    _check_scalar_out(out, "output must be an array")  # Note [writes into scalar results]
    x = _native(a)
    if x is None or (dtype is not None and code_of(dtype) is None) or (out is not None and not isinstance(out, ndarray)):
        _fallback.record(name)
        return _fallback.from_numpy(getattr(_np, name)(_to_numpy(a), axis=axis, dtype=dtype, out=_to_numpy(out)))
    if axis is None:
        x = _flat(x)
        axis = 0
    if x.ndim == 0:
        x = x.reshape(1)
    if x.dtype.kind == "c" or (dtype is not None and _np.dtype(dtype).kind == "c") or \
            (isinstance(out, ndarray) and out.dtype.kind == "c"):
        _check_reduce_loop(uf, x, dtype, out, accumulate=True)
        _warn_complex_casts(x, dtype, out, reduce=False)
    return _core.ufunc_accumulate(uf._id, x, _operator.index(axis), -1 if dtype is None else code_of(dtype), out)


def cumsum(a, axis=None, dtype=None, out=None):
    """numpy.cumsum: running sum along `axis` (flattened when None); int64 for small ints."""
    return _cum(add, "cumsum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """numpy.cumprod: running product along `axis` (flattened when None)."""
    return _cum(multiply, "cumprod", a, axis, dtype, out)


def ptp(a, axis=None, out=None, keepdims=False):
    """numpy.ptp: max - min along `axis` (same dtype, wraps for integers like NumPy)."""
    x = _native(a)
    if x is None:
        _fallback.record("ptp")
        return _fallback.from_numpy(_np.ptp(_to_numpy(a), axis=axis, out=_to_numpy(out), keepdims=keepdims))
    return subtract(max(x, axis=axis, keepdims=keepdims), min(x, axis=axis, keepdims=keepdims), out=out)


def count_nonzero(a, axis=None, *, keepdims=False):
    """numpy.count_nonzero: number of non-zero elements (int for axis=None, else an intp array)."""
    x = _native(a)
    if x is None:
        _fallback.record("count_nonzero")
        return _np.count_nonzero(_to_numpy(a), axis=axis, keepdims=keepdims)
    if axis is None and not keepdims and not _core._is_traced(x):
        # The whole array, counted eight bytes at a time (Note [sparse masks] in
        # src/core/indexing.cpp) instead of a sum of a bool array cast to intp.
        return _np.intp(_core._count_nonzero(x))
    nz = x if x.dtype == _np.bool_ else not_equal(x, 0)
    return sum(nz, axis=axis, dtype=_np.intp, keepdims=keepdims)


def broadcast_to(array, shape, subok=False):
    """numpy.broadcast_to: a read-only view of `array` with `shape` (ValueError when it does
    not broadcast)."""
    x = _native(array)
    if x is None:
        return _np.broadcast_to(array, shape)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if x.shape == shape:
        return x
    return _from_numpy(_np.broadcast_to(_to_numpy(x), shape))


# ---------------------------------------------------------------- ndarray methods
def _m_sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    if axis is None and dtype is None and out is None and not keepdims and initial is _np._NoValue and where is True:
        return _reduce_all(_UFUNC_OF["sum"], self)
    return sum(self, axis, dtype, out, keepdims, initial, where)


def _m_prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    return prod(self, axis, dtype, out, keepdims, initial, where)


def _m_max(self, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    if axis is None and out is None and not keepdims and initial is _np._NoValue and where is True:
        return _reduce_all(_UFUNC_OF["max"], self)
    return max(self, axis, out, keepdims, initial, where)


def _m_min(self, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    if axis is None and out is None and not keepdims and initial is _np._NoValue and where is True:
        return _reduce_all(_UFUNC_OF["min"], self)
    return min(self, axis, out, keepdims, initial, where)


def _m_any(self, axis=None, out=None, keepdims=False, *, where=True):
    return any(self, axis, out, keepdims, where=where)


def _m_all(self, axis=None, out=None, keepdims=False, *, where=True):
    return all(self, axis, out, keepdims, where=where)


def _m_argmax(self, axis=None, out=None, *, keepdims=False):
    return argmax(self, axis, out, keepdims=keepdims)


def _m_argmin(self, axis=None, out=None, *, keepdims=False):
    return argmin(self, axis, out, keepdims=keepdims)


def _m_cumsum(self, axis=None, dtype=None, out=None):
    return cumsum(self, axis, dtype, out)


def _m_cumprod(self, axis=None, dtype=None, out=None):
    return cumprod(self, axis, dtype, out)


for _name, _fn in (("sum", _m_sum), ("prod", _m_prod), ("max", _m_max), ("min", _m_min), ("any", _m_any),
                   ("all", _m_all), ("argmax", _m_argmax), ("argmin", _m_argmin), ("cumsum", _m_cumsum),
                   ("cumprod", _m_cumprod)):
    setattr(ndarray, _name, _fn)

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "any", "all", "argmax", "argmin", "cumsum", "cumprod",
           "ptp", "count_nonzero"]
