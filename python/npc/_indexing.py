"""Indexing and selection (numpy.take, nonzero, choose, diagonal, tril, indices, r_, ...).

``ndarray.__getitem__``/``__setitem__`` are implemented in C++ (src/core/indexing.cpp,
bound in csrc/bind_indexing.cpp); this module holds the Python-side helpers of key and
value conversion and the selection functions of this layer. Sorting and searching are in
_sorting.py, set operations in _sets.py, counting and histograms in _histograms.py,
differences, interpolation and correlation in _differences.py.
"""
import warnings

import numpy as _np

from . import _core
from ._array import _check_scalar_out, _from_numpy, _scalar_result, _scalar_type_name, _temporary_of_scalar, ndarray
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
        if isinstance(value, _np.generic) and dtype.kind in "fc" and arr.dtype.kind in "biuf":
            # NumPy's scalar setter converts the value first ("overflow encountered in cast"
            # even when the index selects nothing).
            arr = arr.astype(dtype)
        r = _from_numpy(arr)
        if not isinstance(r, ndarray):
            r = _from_numpy(arr.astype(dtype))
        return r
    return _from_numpy(_np.asarray(value, dtype=dtype))


def _setitem_partial(view, value):
    """Store what NumPy stores of a sequence `value` assigned to `view` (the destination of a
    basic index) before the conversion of one of its elements fails.

    Note [partial sequence assignment]: NumPy converts a nested sequence whose shape is the
    destination's element by element straight into the destination (PyArray_CopyObject), so
    ``a[:] = [1, 2, 300]`` into uint8 keeps 1 and 2 when 300 raises OverflowError; a sequence
    that must broadcast is converted into a temporary first and stores nothing. NumPy's own
    assignment runs here on a copy of the destination (its warnings were already given by the
    failed conversion) and the copy, partly written or not, goes back into the destination.
    Called after the conversion failed; the caller raises that error.
    """
    tmp = _np.array(view)
    with warnings.catch_warnings(), _np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            tmp[...] = value
        except Exception:
            view[...] = tmp


# ---------------------------------------------------------------- selection
import operator as _operator  # noqa: E402

from . import _fallback  # noqa: E402
from ._dtypes import code_of, result_type as _result_type  # noqa: E402
from ._shape import _arr, _wrap_all, broadcast_arrays, broadcast_to, concatenate, ravel, stack  # noqa: E402

_op = _core._shape_op

__all__ += ["take", "take_along_axis", "put", "put_along_axis", "choose", "compress", "extract", "place",
            "select", "piecewise", "nonzero", "argwhere", "flatnonzero", "diag", "diagonal", "trace", "tril",
            "triu", "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from", "indices", "ix_",
            "meshgrid", "mgrid", "ogrid", "r_", "c_", "fill_diagonal", "diag_indices", "diag_indices_from"]


def _int_array(x):
    a = _arr(x)
    if a is None:
        raise TypeError("index arrays must be of a native integer dtype")
    return a


def _axis(axis):
    return None if axis is None else _operator.index(axis)


def take(a, indices, axis=None, out=None, mode="raise"):
    """numpy.take: elements of `a` at `indices` along `axis` (flattened `a` when None).

    Shape a.shape[:axis] + indices.shape + a.shape[axis+1:]. IndexError for out-of-range
    indices with mode='raise'; 'wrap' and 'clip' map them into range.
    """
    _check_scalar_out(out, "output must be an array")  # Note [writes into scalar results]
    x = _arr(a)
    r = _core._take(x, _int_array(indices), _axis(axis), mode)
    if out is not None:
        out[...] = r
        return out
    if r.ndim == 0:  # NumPy returns a 0-d take as a NumPy scalar
        if _core._is_traced(r):
            _core._mark_scalar(r)  # Note [scalar results] in src/tracer/trace.hpp
            return r
        return r._scalar()
    return r


def _along_axis_key(arr, indices, axis):
    if not -arr.ndim <= axis < max(arr.ndim, 0) or arr.ndim == 0:
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {arr.ndim}")
    axis %= arr.ndim
    if indices.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    key = []
    for d in range(arr.ndim):
        if d == axis:
            key.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = arr.shape[d]
            key.append(_core.arange(0, arr.shape[d], 1, 7).reshape(shape))
    return tuple(key)


def take_along_axis(arr, indices, axis=-1):
    """numpy.take_along_axis: arr[..., indices, ...] matched along `axis` (1-d when axis=None)."""
    x = _arr(arr)
    ind = _int_array(indices)
    if axis is None:
        if ind.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        x, axis = ravel(x), 0
    axis = _operator.index(axis)
    return x[_along_axis_key(x, ind, axis)]


def put_along_axis(arr, indices, values, axis):
    """numpy.put_along_axis: arr[..., indices, ...] = values (in place)."""
    # A NumPy scalar's put_along_axis writes a temporary (Note [writes into scalar results]).
    x = _temporary_of_scalar(arr) if isinstance(arr, ndarray) else _arr(arr)
    ind = _int_array(indices)
    if axis is None:
        if ind.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        x, axis = ravel(x), 0
    x[_along_axis_key(x, ind, _operator.index(axis))] = values


def put(a, ind, v, mode="raise"):
    """numpy.put: a.flat[ind] = v (values repeat cyclically), in place."""
    if not isinstance(a, ndarray):
        raise TypeError(f"put() argument 1 must be numpy.ndarray, not {type(a).__name__}")
    a = _temporary_of_scalar(a)  # a NumPy scalar's put writes a temporary (Note [writes into scalar results])
    _core._put(a, _int_array(ind), _arr(_setitem_value(v, a._code) if not isinstance(v, ndarray) else v), mode)


def choose(a, choices, out=None, mode="raise"):
    """numpy.choose: result[i] = choices[a[i]][i] with all inputs broadcast together.

    ValueError "invalid entry in choice array" for out-of-range entries with mode='raise'.
    """
    _check_scalar_out(out, "output must be an array")  # Note [writes into scalar results]
    idx = _int_array(a)
    if not _np.can_cast(idx.dtype, _np.intp, "safe"):
        raise TypeError(f"Cannot cast array data from {idx.dtype!r} to dtype('int64') according to the rule 'safe'")
    chs = [_arr(c) for c in choices]
    n = len(chs)
    if n == 0:
        raise ValueError("0-length sequence.")
    dt = _result_type(*chs)
    parts = broadcast_arrays(idx, *chs)
    idx, chs = parts[0], parts[1:]
    idx_np = _np.asarray(idx).astype(_np.int64)
    if mode == "raise":
        if idx_np.size and (idx_np.min() < 0 or idx_np.max() >= n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx_np = idx_np % n
    elif mode == "clip":
        idx_np = _np.clip(idx_np, 0, n - 1)
    else:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    st = stack([c.astype(dt) for c in chs], 0)
    r = take_along_axis(st, _from_numpy(idx_np[None]), 0)[0]
    if out is not None:
        out[...] = r
        return out
    return r


def compress(condition, a, axis=None, out=None):
    """numpy.compress: slices of `a` along `axis` where `condition` (1-d) is true."""
    _check_scalar_out(out, "output must be an array")  # Note [writes into scalar results]
    r = _core._compress(_arr(condition), _arr(a), _axis(axis))
    if out is not None:
        out[...] = r
        return out
    return r


def extract(condition, arr):
    """numpy.extract: the elements of ravel(arr) where ravel(condition) is nonzero."""
    c = ravel(_arr(condition))
    return take(ravel(_arr(arr)), _core._nonzero(c)[0])


def place(arr, mask, vals):
    """numpy.place: arr[mask] = vals, repeating vals cyclically (in place)."""
    if not isinstance(arr, ndarray):
        raise TypeError(f"argument 1 must be numpy.ndarray, not {type(arr).__name__}")
    if _scalar_result(arr):  # Note [writes into scalar results]
        raise TypeError(f"place() argument 1 must be numpy.ndarray, not {_scalar_type_name(arr)}")
    m = _arr(mask)
    if m.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    m = ravel(m.astype(_np.bool_))
    cnt = _core._count_nonzero(m)
    v = ravel(_arr(_np.asarray(vals) if not isinstance(vals, ndarray) else vals))
    if v.size == 0:
        if cnt:
            raise ValueError("Cannot insert from an empty array!")
        return
    flat = ravel(arr)
    reps = -(-cnt // v.size)
    vv = concatenate([v] * reps)[:cnt] if reps > 1 else v[:cnt]
    flat[m] = vv
    if flat._storage_id != arr._storage_id:
        arr[...] = flat.reshape(arr.shape)


def select(condlist, choicelist, default=0):
    """numpy.select: the choice of the first true condition per element, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    chs = [_arr(c) for c in choicelist]
    conds = [_arr(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != _np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    dt = _result_type(*chs, default)
    parts = broadcast_arrays(*conds, *chs, _arr(default))
    shape = parts[0].shape
    res = _core.empty(shape, code_of(dt), "C")
    res[...] = parts[-1]
    n = len(conds)
    for c, v in zip(reversed(parts[:n]), reversed(parts[n:2 * n])):
        res[c] = v[c]
    return res


def piecewise(x, condlist, funclist, *args, **kw):
    """numpy.piecewise: funclist[i] (callable or constant) applied where condlist[i] holds."""
    x = _arr(x)
    n2 = len(funclist)
    # NumPy's rule: a scalar, or a condlist whose first entry is not itself a list or an
    # array (a list of bools, a 1-d bool array), is a single condition.
    if isinstance(condlist, (bool, _np.bool_)) or not isinstance(condlist, (list, tuple)) and \
            _arr(condlist).ndim == 0:
        condlist = [condlist]
    elif x.ndim != 0 and not isinstance(condlist[0], (list, ndarray, _np.ndarray)):
        condlist = [condlist]
    conds = [_arr(c) for c in condlist]
    n = len(conds)
    if n == n2 - 1:
        # The extra function applies where no condition holds.
        anyc = _np.zeros(x.shape, bool)
        for c in conds:
            anyc |= _np.asarray(broadcast_to(c, x.shape))
        conds.append(_from_numpy(~anyc))
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = _core.zeros(x.shape, x._code, "C")
    for c, f in zip(conds, funclist):
        c = broadcast_to(c, x.shape)
        if not callable(f):
            y[c] = f
        else:
            vals = x[c]
            if vals.size > 0:
                y[c] = f(vals, *args, **kw)
    return y


def nonzero(a):
    """numpy.nonzero: a tuple of int64 index arrays, one per dimension.

    ValueError for 0-d input (as NumPy 2).
    """
    x = _arr(a)
    return _core._nonzero(x)


def argwhere(a):
    """numpy.argwhere: the indices of nonzero elements as an (N, a.ndim) array."""
    x = _arr(a)
    if x.ndim == 0:
        n = 1 if bool(x._item()) else 0
        return _core.zeros((n, 0), 7, "C")
    return stack(_core._nonzero(x), 1)


def flatnonzero(a):
    """numpy.flatnonzero: indices of the nonzero elements of ravel(a)."""
    return _core._nonzero(ravel(_arr(a)))[0]


def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal: a read-only view of the diagonals (as the last axis)."""
    return _op("diagonal", _arr(a), _operator.index(offset), _operator.index(axis1), _operator.index(axis2))


def diag(v, k=0):
    """numpy.diag: the k-th diagonal of a 2-d array (a view), or a 2-d array with `v` (1-d) on
    its k-th diagonal. ValueError for other ndims ("Input must be 1- or 2-d.")."""
    x = _arr(v)
    k = _operator.index(k)
    if x.ndim == 1:
        n = x.shape[0] + abs(k)
        res = _core.zeros((n, n), x._code, "C")
        i = _core.arange(0, x.shape[0], 1, 7)
        if k >= 0:
            res[i, _core.arange(k, k + x.shape[0], 1, 7)] = x
        else:
            res[_core.arange(-k, -k + x.shape[0], 1, 7), i] = x
        return res
    if x.ndim == 2:
        return diagonal(x, k)
    raise ValueError("Input must be 1- or 2-d.")


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy.trace: sum along the diagonals (uses npc's sum)."""
    _check_scalar_out(out, "output must be an array")  # Note [writes into scalar results]
    d = diagonal(a, offset, axis1, axis2)
    if type(d) is not ndarray and isinstance(d, ndarray):
        # NumPy's trace of a subclass instance is a scalar for 2-d input (its sum is not the
        # subclass's reduction); arrays take the class through the public function's rule.
        d = d.view(ndarray)
    return d.sum(-1, dtype=dtype, out=out)


def tril(m, k=0):
    """numpy.tril: a copy with the elements above the k-th diagonal zeroed (last two axes;
    1-d input is broadcast to a square)."""
    x = _arr(m)
    if x.ndim == 0:
        raise TypeError("tri() missing 1 required positional argument: 'N'")
    if x.ndim == 1:
        x = broadcast_to(x, (x.shape[0], x.shape[0]))
    if _core._is_tracing():
        return _tri_select(x, _operator.index(k), True)
    return _op("tril", x, _operator.index(k))


def triu(m, k=0):
    """numpy.triu: a copy with the elements below the k-th diagonal zeroed."""
    x = _arr(m)
    if x.ndim == 0:
        raise TypeError("tri() missing 1 required positional argument: 'N'")
    if x.ndim == 1:
        x = broadcast_to(x, (x.shape[0], x.shape[0]))
    if _core._is_tracing():
        return _tri_select(x, _operator.index(k), False)
    return _op("triu", x, _operator.index(k))


def _tri_select(x, k, lower):
    """tril/triu inside a compiled function: a select on an index mask (as NumPy computes
    them), which traces into the graph instead of needing concrete values."""
    from . import arange, where, zeros
    d = arange(x.shape[-1])[None, :] - arange(x.shape[-2])[:, None]
    return where(d <= k if lower else d >= k, x, zeros((), x.dtype))


def tril_indices(n, k=0, m=None):
    """numpy.tril_indices: (rows, cols) int64 arrays of the lower triangle."""
    ones = _core.full((n, n if m is None else m), True, 0, "C")
    return _core._nonzero(_op("tril", ones, _operator.index(k)))


def triu_indices(n, k=0, m=None):
    """numpy.triu_indices: (rows, cols) int64 arrays of the upper triangle."""
    ones = _core.full((n, n if m is None else m), True, 0, "C")
    return _core._nonzero(_op("triu", ones, _operator.index(k)))


def tril_indices_from(arr, k=0):
    """numpy.tril_indices_from (arr must be 2-d)."""
    x = _arr(arr)
    if x.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(x.shape[-2], k, x.shape[-1])


def triu_indices_from(arr, k=0):
    """numpy.triu_indices_from (arr must be 2-d)."""
    x = _arr(arr)
    if x.ndim != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(x.shape[-2], k, x.shape[-1])


def diag_indices(n, ndim=2):
    """numpy.diag_indices: ndim copies of arange(n)."""
    idx = _core.arange(0, n, 1, 7)
    return (idx,) * ndim


def diag_indices_from(arr):
    """numpy.diag_indices_from (all dimensions equal, ndim >= 2)."""
    x = _arr(arr)
    if x.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(x.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(x.shape[0], x.ndim)


def fill_diagonal(a, val, wrap=False):
    """numpy.fill_diagonal: writes `val` (cycled) on the main diagonal, in place."""
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = None if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + sum(int(_np.prod(a.shape[:i])) for i in range(1, a.ndim))
        end = None
    flat = ravel(a)
    idx = _core.arange(0, a.size if end is None else min(end, a.size), step, 7)
    v = ravel(_arr(val))
    if v.size and idx.size:
        reps = -(-idx.size // v.size)
        flat[idx] = concatenate([v] * reps)[:idx.size] if reps > 1 else v[:idx.size]
    if flat._storage_id != a._storage_id:
        a[...] = flat.reshape(a.shape)


def indices(dimensions, dtype=int, sparse=False):
    """numpy.indices: the index grid of `dimensions` (stacked, or a tuple when sparse)."""
    dims = tuple(_operator.index(d) for d in dimensions)
    code = code_of(dtype)
    n = len(dims)
    out = []
    for i, d in enumerate(dims):
        shape = [1] * n
        shape[i] = d
        idx = _core.arange(0, d, 1, code).reshape(shape)
        out.append(idx if sparse else broadcast_to(idx, dims))
    if sparse:
        return tuple(out)
    if n == 0:
        return _core.empty((0,), code, "C")
    return stack(out, 0)


def ix_(*args):
    """numpy.ix_: open-mesh index arrays (booleans become their nonzero indices)."""
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        x = _arr(new)
        if x.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if x.size == 0 and not isinstance(new, ndarray):
            x = x.astype(_np.intp)
        if x.dtype == _np.bool_:
            x = _core._nonzero(x)[0]
        out.append(x.reshape((1,) * k + (x.size,) + (1,) * (nd - k - 1)))
    return tuple(out)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """numpy.meshgrid: coordinate matrices ('xy' or 'ij' indexing), copies unless copy=False."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    out = []
    for i, x in enumerate(xi):
        shape = [1] * ndim
        shape[i] = -1
        out.append(ravel(_arr(x)).reshape(shape))
    if indexing == "xy" and ndim > 1:
        out[0] = out[0].reshape((1, -1) + (1,) * (ndim - 2))
        out[1] = out[1].reshape((-1, 1) + (1,) * (ndim - 2))
    if not sparse:
        out = list(broadcast_arrays(*out))
    if copy:
        out = [o.copy() for o in out]
    return tuple(out)


class _GridClass:
    """numpy.mgrid / numpy.ogrid: dense or open grids from slices (complex step = count)."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        from ._creation import arange, linspace
        single = not isinstance(key, tuple)
        keys = (key,) if single else key
        axes = []
        for k in keys:
            if not isinstance(k, slice):
                raise TypeError("mgrid/ogrid indices must be slices")
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            if isinstance(step, complex):
                num = int(abs(step))
                ax = linspace(start, k.stop, num)
            else:
                ax = arange(start, k.stop, step)
            axes.append(ax)
        if single:
            return axes[0]
        dt = _result_type(*axes)
        axes = [a.astype(dt) for a in axes]
        n = len(axes)
        shaped = [a.reshape((1,) * i + (a.size,) + (1,) * (n - i - 1)) for i, a in enumerate(axes)]
        if self.sparse:
            return tuple(shaped)
        shape = tuple(a.size for a in axes)
        return stack([broadcast_to(s, shape) for s in shaped], 0)

    def __len__(self):
        return 0


mgrid = _GridClass(False)
ogrid = _GridClass(True)


class _Concatenator:
    """numpy.r_ / numpy.c_: concatenation by index syntax (slices make ranges)."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        from ._creation import arange, array, linspace
        keys = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        objs = []
        scalars = []
        for i, k in enumerate(keys):
            if isinstance(k, slice):
                step = 1 if k.step is None else k.step
                start = 0 if k.start is None else k.start
                if isinstance(step, complex):
                    newobj = linspace(start, k.stop, int(abs(step)))
                else:
                    newobj = arange(start, k.stop, step)
                if ndmin > 1:
                    newobj = _np_ndmin(newobj, ndmin, trans1d)
            elif isinstance(k, str):
                if i != 0:
                    raise ValueError("special directives must be the first entry.")
                if k in ("r", "c"):
                    return _numpy_concat(self, key)
                vals = [int(v) for v in k.split(",")]
                axis = vals[0]
                if len(vals) > 1:
                    ndmin = vals[1]
                if len(vals) > 2:
                    trans1d = vals[2]
                continue
            elif type(k) in (int, float, complex, bool) or isinstance(k, _np.generic):
                newobj = array(k, ndmin=ndmin)
                scalars.append(len(objs))
            else:
                newobj = array(k, copy=None, ndmin=ndmin)
                if ndmin > 1 and _arr(k).ndim < ndmin:
                    newobj = _np_ndmin(_arr(k), ndmin, trans1d)
            objs.append(newobj)
        if not objs:
            return array([])
        if scalars:
            dt = _result_type(*[o for i, o in enumerate(objs) if i not in scalars]) \
                if len(scalars) < len(objs) else _result_type(*objs)
            objs = [o.astype(dt) for o in objs]
        res = concatenate(objs, axis=axis)
        return res

    def __len__(self):
        return 0


def _np_ndmin(x, ndmin, trans1d):
    x = _arr(x)
    k2 = ndmin - x.ndim
    if k2 <= 0:
        return x
    r = x.reshape((1,) * k2 + x.shape)
    if trans1d != -1:
        k1 = x.ndim
        if trans1d < 0:
            trans1d += k2 + 1
        defaxes = list(range(ndmin))
        axes = defaxes[:trans1d] + defaxes[trans1d + k1:] + defaxes[trans1d:trans1d + k1]
        r = r.transpose(tuple(_np.argsort(axes)))
    return r


def _numpy_concat(obj, key):
    name = "r_" if obj.trans1d == -1 and obj.ndmin == 1 else "c_"
    _fallback.record("numpy." + name)
    return _fallback.from_numpy(getattr(_np, name)[_fallback.to_numpy(key)])


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)


# ---------------------------------------------------------------- ndarray methods
def _m_nonzero(self):
    return nonzero(self)


def _m_take(self, indices, axis=None, out=None, mode="raise"):
    return take(self, indices, axis, out, mode)


def _m_put(self, indices, values, mode="raise"):
    return put(self, indices, values, mode)


def _m_compress(self, condition, axis=None, out=None):
    return compress(condition, self, axis, out)


def _m_diagonal(self, offset=0, axis1=0, axis2=1):
    return diagonal(self, offset, axis1, axis2)


def _m_choose(self, choices, out=None, mode="raise"):
    return choose(self, choices, out, mode)


def _m_trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return trace(self, offset, axis1, axis2, dtype, out)


for _name, _fn in {"nonzero": _m_nonzero, "take": _m_take, "put": _m_put, "compress": _m_compress,
                   "diagonal": _m_diagonal, "choose": _m_choose, "trace": _m_trace}.items():
    setattr(ndarray, _name, _fn)

_wrap_all(globals())
